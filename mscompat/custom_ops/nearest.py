"""Binding of the nearest-neighbour kernels (``cpu/nearest_kernel.cc``) as MindSpore Custom ops.

``NearestGather`` copies ``x[n, c, t0[i], t1[j], t2[k]]`` (``x`` of shape (N, C, *spatial), 1 to 3
spatial axes, which use the last tables) for PyTorch's source-index tables
(computed in ``mscompat/shape/interpolate.py``); its bprop is ``NearestScatterAdd``, PyTorch's
backward loop (gradients added to the source elements in output order; float16 accumulated in
float32 and rounded once, as PyTorch's CPU kernel does). The ``aot`` backend of
``shape.interpolate`` in modes ``nearest`` and ``nearest-exact``.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import CustomRegOp, DataType

from mscompat.custom_ops.aot import (
    KernelUnavailableError,
    aot_op,
    kernel_path,
    same_dtype,
    warn_once,
)
from mscompat.custom_ops.registry import current_device, device_target

__all__ = ["KERNELS", "kernel_ops", "probe"]

#: device -> entry point -> the Custom op, filled by :func:`kernel_ops`.
KERNELS: Dict[str, Dict[str, Any]] = {}

_I64 = DataType.I64_Default
_F16, _F32, _F64 = DataType.F16_Default, DataType.F32_Default, DataType.F64_Default


def _gather_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_nearest_gather").input(0, "x")
    for i in range(3):
        reg = reg.input(i + 1, f"t{i}")
    reg = reg.output(0, "y")
    for fmt in (_F16, _F32, _F64, DataType.U8_Default):  # uint8: images, a copy as well
        reg = reg.dtype_format(fmt, _I64, _I64, _I64, fmt)
    return reg.target(target).get_op_info()


def _scatter_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_nearest_scatter_add").input(0, "dy").input(1, "x")
    for i in range(3):
        reg = reg.input(i + 2, f"t{i}")
    reg = reg.output(0, "dx")
    for dy, x in ((_F32, _F32), (_F64, _F64), (_F32, _F16)):
        reg = reg.dtype_format(dy, x, _I64, _I64, _I64, dy)
    return reg.target(target).get_op_info()


def _gather_shape(x: Any, t0: Any, t1: Any, t2: Any) -> Any:
    dims = len(x) - 2
    return list(x[:2]) + [t0[0], t1[0], t2[0]][3 - dims :]


def _scatter_shape(dy: Any, x: Any, *_: Any) -> Any:
    return list(x)


def _gather_bprop(x: Tensor, t0: Tensor, t1: Tensor, t2: Tensor, out: Tensor, dout: Tensor) -> Any:
    scatter = KERNELS[device_target()]["NearestScatterAdd"]
    if dout.dtype == ms.float16:
        dx = scatter(dout.astype(ms.float32), x, t0, t1, t2).astype(ms.float16)
    else:
        dx = scatter(dout, x, t0, t1, t2)
    return dx, ops.zeros_like(t0), ops.zeros_like(t1), ops.zeros_like(t2)


def _scatter_bprop(
    dy: Tensor, x: Tensor, t0: Tensor, t1: Tensor, t2: Tensor, out: Tensor, dout: Tensor
) -> Any:
    z = ops.zeros_like
    return z(dy), z(x), z(t0), z(t1), z(t2)


def kernel_ops(device: str) -> Tuple[Any, Any]:
    """The ``NearestGather`` and ``NearestScatterAdd`` Custom ops for ``device``, built once."""
    if device not in KERNELS:
        path = kernel_path("nearest", device)
        scatter = aot_op(
            path,
            "NearestScatterAdd",
            _scatter_shape,
            same_dtype,
            _scatter_reg(device),
            _scatter_bprop,
        )
        gather = aot_op(
            path, "NearestGather", _gather_shape, same_dtype, _gather_reg(device), _gather_bprop
        )
        KERNELS[device] = {"NearestGather": gather, "NearestScatterAdd": scatter}
    return KERNELS[device]["NearestGather"], KERNELS[device]["NearestScatterAdd"]


def probe() -> None:
    """Registry probe: the library loads, gathers and scatter-adds a small case correctly."""
    try:
        gather, scatter = kernel_ops(current_device())
    except KernelUnavailableError as exc:
        warn_once("nearest", f"mscompat: {exc}")
        raise
    x = Tensor(np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3))
    zero = Tensor(np.zeros((1,), np.int64))
    rows = Tensor(np.array([0, 0, 1], np.int64))
    cols = Tensor(np.array([0, 0, 1, 1, 2, 2], np.int64))
    y = gather(x, zero, rows, cols).asnumpy()
    if y[0, 0, 2].tolist() != [3.0, 3.0, 4.0, 4.0, 5.0, 5.0] or y[0, 0, 1, 5] != 2.0:
        raise RuntimeError(f"nearest kernel self-check failed: {y}")
    dx = scatter(Tensor(np.ones((1, 1, 3, 6), np.float32)), x, zero, rows, cols).asnumpy()
    if dx.reshape(-1).tolist() != [4.0, 4.0, 4.0, 2.0, 2.0, 2.0]:
        raise RuntimeError(f"nearest backward self-check failed: {dx}")
