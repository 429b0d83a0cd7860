"""Binding of the sort/selection index kernels (``cpu/sort_kernel.cc``) as MindSpore Custom ops.

Each kernel returns int64 positions along the last dim, the ones PyTorch's CPU kernels return,
ties included (see the kernel file). ``mscompat/shape/sort.py`` registers them as the ``aot``
backend of ``shape.sort``, ``shape.topk``, ``shape.kthvalue``, ``shape.median`` and
``shape.mode`` (their bprop gives zeros: positions are integers).

``TakeAlong(x, idx)`` gathers the values at those positions along the last dim (any dtype; a
copy) and ``PlaceAlong(dy, idx, x)``, its bprop, puts the incoming gradient back at them (the
positions of a row are distinct): the ``aot`` backend of ``shape.take_along``, which the sort
family's front doors use for their values (MindSpore's CPU ``GatherD`` took 3-4 ms for 1e5
elements).
"""

from __future__ import annotations

from typing import Any, Dict

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import CustomRegOp, DataType

from mscompat.custom_ops.aot import (
    COPY_TYPES,
    KernelUnavailableError,
    LockedCustom,
    aot_op,
    index_reg_info,
    kernel_path,
    same_dtype,
    warn_once,
)

__all__ = ["KERNELS", "kernel_ops", "probe", "take_probe"]

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


def _take_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_take_along").input(0, "x").input(1, "idx").output(0, "y")
    for dt in COPY_TYPES:
        reg = reg.dtype_format(dt, DataType.I64_Default, dt)
    return reg.target(target).get_op_info()


def _place_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_place_along").input(0, "dy").input(1, "idx").input(2, "x")
    reg = reg.output(0, "dx")
    for dt in COPY_TYPES:
        reg = reg.dtype_format(dt, DataType.I64_Default, dt, dt)
    return reg.target(target).get_op_info()


def _take_shape(x: Any, idx: Any) -> Any:
    return list(idx)


def _place_shape(dy: Any, idx: Any, x: Any) -> Any:
    return list(x)


def kernel_ops(device: str) -> Dict[str, Any]:
    """``{entry point: Custom op}`` for ``device``, built once per process."""
    if device not in KERNELS:
        path = kernel_path("sort", device)
        ops_: Dict[str, Any] = {
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
        place = aot_op(path, "PlaceAlong", _place_shape, same_dtype, _place_reg(device), _no_grad)

        def take_bprop(x: Tensor, idx: Tensor, out: Tensor, dout: Tensor) -> Any:
            return place(dout, idx, x), ops.zeros_like(idx)

        ops_["TakeAlong"] = aot_op(
            path, "TakeAlong", _take_shape, same_dtype, _take_reg(device), take_bprop
        )
        ops_["PlaceAlong"] = place
        KERNELS[device] = ops_
    return KERNELS[device]


def _no_grad(dy: Tensor, idx: Tensor, x: Tensor, out: Tensor, dout: Tensor) -> Any:
    # second derivatives of a gather are zero
    return ops.zeros_like(dy), ops.zeros_like(idx), ops.zeros_like(x)


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


def take_probe() -> None:
    """Registry probe of ``shape.take_along``'s aot backend: TakeAlong and PlaceAlong on a
    small case."""
    from mscompat.custom_ops.registry import current_device

    try:
        kernels = kernel_ops(current_device())
    except KernelUnavailableError as exc:
        warn_once("sort", f"mscompat: {exc}")
        raise
    x = Tensor(np.array([[1.5, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32))
    idx = Tensor(np.array([[2, 0], [1, 2]], np.int64))
    got = kernels["TakeAlong"](x, idx).asnumpy().tolist()
    back = kernels["PlaceAlong"](Tensor(np.ones((2, 2), np.float32)), idx, x).asnumpy().tolist()
    if got != [[3.0, 1.5], [5.0, -6.0]] or back != [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]:
        raise RuntimeError(f"take-along kernel self-check failed: {got}, {back}")
