"""Binding of the max-pooling pick kernel (``cpu/pool_kernel.cc``) as a MindSpore Custom op.

``WindowMaxIndex`` returns, for every pooling window, the flat index of the element PyTorch's
CPU kernel picks (first maximum, last NaN). ``mscompat/shape/max_pool.py`` and
``adaptive_pool.py`` register it as the ``aot`` backend of the max pools; the values are
gathered in MindSpore, so the gradient needs nothing from the kernel (its bprop gives zeros).
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

__all__ = ["KERNELS", "kernel_op", "probe"]

#: device -> the Custom op, filled by :func:`kernel_op` (run by the registry probe before the
#: aot backend is chosen); indexed inside graphs, where nothing may be built.
KERNELS: Dict[str, Any] = {}


def _out_shape(x: Any, t0: Any, t1: Any, t2: Any) -> Any:
    return [x[0], t0[0] * t1[0] * t2[0]]


def _out_dtype(*_: Any) -> Any:
    return ms.int64


def _bprop(x: Tensor, t0: Tensor, t1: Tensor, t2: Tensor, out: Tensor, dout: Tensor) -> Any:
    return ops.zeros_like(x), ops.zeros_like(t0), ops.zeros_like(t1), ops.zeros_like(t2)


def kernel_op(device: str) -> Any:
    """The ``WindowMaxIndex`` Custom op for ``device``, built once per process."""
    if device not in KERNELS:
        path = kernel_path("pool", device)
        KERNELS[device] = LockedCustom(
            f"{path}:WindowMaxIndex",
            out_shape=_out_shape,
            out_dtype=_out_dtype,
            func_type="aot",
            reg_info=index_reg_info("mscompat_window_max_index", 3, device),
            bprop=_bprop,
        )
    return KERNELS[device]


def probe() -> None:
    """Registry probe: the library loads and picks as PyTorch (first maximum, last NaN)."""
    from mscompat.custom_ops.registry import current_device

    try:
        op = kernel_op(current_device())
    except KernelUnavailableError as exc:
        warn_once("pool", f"mscompat: {exc}")
        raise
    x = Tensor(np.array([[[[1.0, 3.0, 3.0, np.nan, 2.0, np.nan]]]], np.float32))
    one = Tensor(np.zeros((1, 1), np.int64))
    windows = Tensor(np.array([[0, 1, 2], [3, 4, 5]], np.int64))
    got = op(x, one, one, windows).asnumpy().tolist()
    if got != [[1, 5]]:
        raise RuntimeError(f"pool kernel self-check failed: {got} != [[1, 5]]")
