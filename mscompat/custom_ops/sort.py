"""Binding of the sort/selection index kernels (``cpu/sort_kernel.cc``) as MindSpore Custom ops.

Each kernel returns int64 positions along the last dim, the ones PyTorch's CPU kernels return,
ties included (see the kernel file). ``mscompat/shape/sort.py`` registers them as the ``aot``
backend of ``shape.sort``, ``shape.topk``, ``shape.kthvalue``, ``shape.median`` and
``shape.mode``; values are gathered from the input with the positions in MindSpore, so the
gradient needs nothing from the kernels (their bprop gives zeros: positions are integers).
"""

from __future__ import annotations

from typing import Any, Dict

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from mscompat.custom_ops.aot import (
    KernelUnavailableError,
    LockedCustom,
    index_reg_info,
    kernel_path,
    warn_once,
)

__all__ = ["KERNELS", "kernel_ops", "probe"]

#: kernel entry point -> True if it returns one position per row, False for a full row.
_ENTRIES = {
    "SortIndices": False,
    "TopkIndices": False,
    "KthIndices": True,
    "MedianIndices": True,
    "ModeIndices": True,
}

#: device -> {entry point: Custom op}, filled by :func:`kernel_ops` (the registry probe runs it
#: before the aot backend is ever chosen); indexed inside graphs, where nothing may be built.
KERNELS: Dict[str, Dict[str, Any]] = {}


def _int64(*_: Any) -> Any:
    return ms.int64


def _full_shape(x: Any, p: Any) -> Any:
    return list(x)


def _one_shape(x: Any, p: Any) -> Any:
    return list(x)[:-1] + [1]


def _bprop(x: Tensor, p: Tensor, out: Tensor, dout: Tensor) -> Any:
    return ops.zeros_like(x), ops.zeros_like(p)


def kernel_ops(device: str) -> Dict[str, Any]:
    """``{entry point: Custom op}`` for ``device``, built once per process."""
    if device not in KERNELS:
        path = kernel_path("sort", device)
        KERNELS[device] = {
            entry: LockedCustom(
                f"{path}:{entry}",
                out_shape=_one_shape if one else _full_shape,
                out_dtype=_int64,
                func_type="aot",
                reg_info=index_reg_info(f"mscompat_{entry.lower()}", 1, device),
                bprop=_bprop,
            )
            for entry, one in _ENTRIES.items()
        }
    return KERNELS[device]


def probe() -> None:
    """Registry probe: the library loads and reproduces one known PyTorch result per kernel."""
    from mscompat.custom_ops.registry import current_device

    try:
        kernels = kernel_ops(current_device())
    except KernelUnavailableError as exc:
        warn_once("sort", f"mscompat: {exc}")
        raise
    # torch 2.13 CPU sort(x): std::sort of 17 elements, not the stable order.
    x = Tensor(np.array([2, 1, 2, 0, 1, 2, 1, 0, 2, 1, 0, 2, 1, 2, 0, 1, 2], np.int32))
    got = kernels["SortIndices"](x, Tensor(np.array([0, 0], np.int64))).asnumpy().tolist()
    expected = [3, 7, 14, 10, 1, 4, 15, 6, 9, 12, 16, 0, 13, 11, 8, 5, 2]
    if got != expected:
        raise RuntimeError(f"sort kernel self-check failed: {got} != {expected}")
