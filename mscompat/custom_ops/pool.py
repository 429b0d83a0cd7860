"""Bindings of the pooling kernels (``cpu/pool_kernel.cc``) as MindSpore Custom ops.

* ``WindowMax``: for every pooling window, the value and the flat index of the element
  PyTorch's CPU kernel picks (first maximum, last NaN); the aot backend of
  ``max_pool1d/2d/3d`` and ``adaptive_max_pool1d/2d/3d``. Its bprop is ``ScatterAddPlanes``,
  PyTorch's backward loop (each window's gradient added to its pick, in window order).
* ``ScatterPlanes``: max unpooling (zeros, then each value written at its index, a later
  duplicate overwriting); the aot backend of ``max_unpool1d/2d/3d``. Its bprop is
  ``GatherPlanes`` (the gradient at each index, 0 for an out-of-range one).

* ``WindowMean``: adaptive average pooling, PyTorch's loop (the window's sum in row-major order,
  divided by each axis's window length in turn); the aot backend of
  ``adaptive_avg_pool1d/2d/3d`` for float32/float64. Its bprop is ``WindowMeanGrad``.

All are indexed inside graphs through :data:`KERNELS`, filled by :func:`probe` (run by the
registry before the aot backend is chosen).
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import CustomRegOp, DataType

from mscompat.custom_ops.aot import KernelUnavailableError, aot_op, kernel_path, warn_once
from mscompat.custom_ops.registry import current_device, device_target

__all__ = ["KERNELS", "kernel_ops", "probe"]

#: device -> entry point -> the Custom op, filled by :func:`kernel_ops`.
KERNELS: Dict[str, Dict[str, Any]] = {}

_I64 = DataType.I64_Default


def _window_max_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_window_max").input(0, "x")
    for i in range(3):
        reg = reg.input(i + 1, f"t{i}")
    reg = reg.input(4, "dims").output(0, "values").output(1, "indices")
    for fmt in (
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.I32_Default,
        DataType.I64_Default,
    ):
        reg = reg.dtype_format(fmt, _I64, _I64, _I64, DataType.I8_Default, fmt, _I64)
    return reg.target(target).get_op_info()


def _scatter_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_scatter_planes").input(0, "x").input(1, "indices")
    reg = reg.input(2, "size").output(0, "y")
    for fmt in (DataType.F16_Default, DataType.F32_Default, DataType.F64_Default):
        reg = reg.dtype_format(fmt, _I64, DataType.I8_Default, fmt)
    return reg.target(target).get_op_info()


def _window_max_shape(x: Any, t0: Any, t1: Any, t2: Any, dims: Any) -> Any:
    n = dims[0]
    p = list(x[: len(x) - n]) + [t0[0], t1[0], t2[0]][3 - n :]
    return p, p


def _window_max_dtype(x: Any, *_: Any) -> Any:
    return x, ms.int64


def _window_max_bprop(
    x: Tensor, t0: Tensor, t1: Tensor, t2: Tensor, dims: Tensor, out: Any, dout: Any
) -> Tuple[Tensor, ...]:
    """PyTorch's max pooling backward: each window's gradient added to its picked element."""
    grad = dout[0]
    if grad.dtype == ms.float32 or grad.dtype == ms.float64:
        dx = KERNELS[device_target()]["ScatterAddPlanes"](grad, out[1], x, dims)
    else:  # integer input: no gradient
        dx = ops.zeros_like(x)
    z = ops.zeros_like
    return dx, z(t0), z(t1), z(t2), z(dims)


def _scatter_shape(x: Any, idx: Any, size: Any) -> Any:
    return list(x[: len(x) - len(size)]) + list(size)


def _scatter_dtype(x: Any, *_: Any) -> Any:
    return x


def _scatter_bprop(x: Tensor, idx: Tensor, size: Tensor, out: Tensor, dout: Tensor) -> Any:
    """Max unpooling's backward: the gradient at each index (zero for a skipped index)."""
    dx = KERNELS[device_target()]["GatherPlanes"](dout, idx, size)
    return dx, ops.zeros_like(idx), ops.zeros_like(size)


def _scatter_add_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_scatter_add_planes").input(0, "dy").input(1, "indices")
    reg = reg.input(2, "like").input(3, "dims").output(0, "dx")
    for fmt in (DataType.F32_Default, DataType.F64_Default):
        reg = reg.dtype_format(fmt, _I64, fmt, DataType.I8_Default, fmt)
    return reg.target(target).get_op_info()


def _gather_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_gather_planes").input(0, "dy").input(1, "indices")
    reg = reg.input(2, "size").output(0, "dx")
    for fmt in (DataType.F16_Default, DataType.F32_Default, DataType.F64_Default):
        reg = reg.dtype_format(fmt, _I64, DataType.I8_Default, fmt)
    return reg.target(target).get_op_info()


def _like_shape(dy: Any, idx: Any, like: Any, dims: Any) -> Any:
    return list(like)


def _index_shape(dy: Any, idx: Any, size: Any) -> Any:
    return list(idx)


def _no_grad3(a: Tensor, b: Tensor, c: Tensor, out: Tensor, dout: Tensor) -> Any:
    return ops.zeros_like(a), ops.zeros_like(b), ops.zeros_like(c)


def _no_grad4(a: Tensor, b: Tensor, c: Tensor, d: Tensor, out: Tensor, dout: Tensor) -> Any:
    z = ops.zeros_like
    return z(a), z(b), z(c), z(d)


_FLOATS = (DataType.F32_Default, DataType.F64_Default)
_I8 = DataType.I8_Default


def _mean_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_window_mean").input(0, "x")
    for i in range(3):
        reg = reg.input(i + 1, f"r{i}")
    reg = reg.input(4, "dims").output(0, "y")
    for fmt in _FLOATS:
        reg = reg.dtype_format(fmt, _I64, _I64, _I64, _I8, fmt)
    return reg.target(target).get_op_info()


def _mean_grad_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_window_mean_grad").input(0, "dy").input(1, "like")
    for i in range(3):
        reg = reg.input(i + 2, f"r{i}")
    reg = reg.input(5, "dims").output(0, "dx")
    for fmt in _FLOATS:
        reg = reg.dtype_format(fmt, fmt, _I64, _I64, _I64, _I8, fmt)
    return reg.target(target).get_op_info()


def _mean_shape(x: Any, r0: Any, r1: Any, r2: Any, dims: Any) -> Any:
    n = dims[0]
    return list(x[: len(x) - n]) + [r0[0], r1[0], r2[0]][3 - n :]


def _mean_grad_shape(dy: Any, like: Any, *_: Any) -> Any:
    return list(like)


def _mean_bprop(
    x: Tensor, r0: Tensor, r1: Tensor, r2: Tensor, dims: Tensor, out: Tensor, dout: Tensor
) -> Tuple[Tensor, ...]:
    """PyTorch's adaptive average pooling backward (``WindowMeanGrad``)."""
    dx = KERNELS[device_target()]["WindowMeanGrad"](dout, x, r0, r1, r2, dims)
    z = ops.zeros_like
    return dx, z(r0), z(r1), z(r2), z(dims)


def _mean_grad_bprop(
    dy: Tensor,
    like: Tensor,
    r0: Tensor,
    r1: Tensor,
    r2: Tensor,
    dims: Tensor,
    out: Tensor,
    dout: Tensor,
) -> Tuple[Tensor, ...]:  # second derivatives are not provided
    z = ops.zeros_like
    return z(dy), z(like), z(r0), z(r1), z(r2), z(dims)


def kernel_ops(device: str) -> Tuple[Any, Any]:
    """The ``WindowMax`` and ``ScatterPlanes`` Custom ops for ``device`` (and their backward
    ops, in :data:`KERNELS`), built once."""
    if device not in KERNELS:
        path = kernel_path("pool", device)
        scatter_add = aot_op(
            path,
            "ScatterAddPlanes",
            _like_shape,
            _scatter_dtype,
            _scatter_add_reg(device),
            _no_grad4,
        )
        gather = aot_op(
            path, "GatherPlanes", _index_shape, _scatter_dtype, _gather_reg(device), _no_grad3
        )
        scatter = aot_op(
            path,
            "ScatterPlanes",
            _scatter_shape,
            _scatter_dtype,
            _scatter_reg(device),
            _scatter_bprop,
        )
        window_max = aot_op(
            path,
            "WindowMax",
            _window_max_shape,
            _window_max_dtype,
            _window_max_reg(device),
            _window_max_bprop,
        )
        mean_grad = aot_op(
            path,
            "WindowMeanGrad",
            _mean_grad_shape,
            _scatter_dtype,
            _mean_grad_reg(device),
            _mean_grad_bprop,
        )
        mean = aot_op(
            path, "WindowMean", _mean_shape, _scatter_dtype, _mean_reg(device), _mean_bprop
        )
        KERNELS[device] = {
            "WindowMean": mean,
            "WindowMeanGrad": mean_grad,
            "WindowMax": window_max,
            "ScatterPlanes": scatter,
            "ScatterAddPlanes": scatter_add,
            "GatherPlanes": gather,
        }
    return KERNELS[device]["WindowMax"], KERNELS[device]["ScatterPlanes"]


def probe() -> None:
    """Registry probe: the library loads, picks as PyTorch (first maximum, last NaN) and
    unpools as PyTorch (a later duplicate overwrites)."""
    try:
        window_max, scatter = kernel_ops(current_device())
    except KernelUnavailableError as exc:
        warn_once("pool", f"mscompat: {exc}")
        raise
    x = Tensor(np.array([[1.0, 3.0, 3.0, np.nan, 2.0, np.nan]], np.float32))
    one = Tensor(np.zeros((1, 1), np.int64))
    windows = Tensor(np.array([[0, 1, 2], [3, 4, 5]], np.int64))
    dims = Tensor(np.zeros((1,), np.int8))
    values, idx = window_max(x, one, one, windows, dims)
    if idx.asnumpy().tolist() != [[1, 5]] or values.asnumpy()[0, 0] != 3.0:
        raise RuntimeError(f"pool kernel self-check failed: {idx} != [[1, 5]]")
    got = scatter(
        Tensor(np.array([[1.0, 2.0, 3.0]], np.float32)),
        Tensor(np.array([[2, 0, 2]], np.int64)),
        Tensor(np.zeros((4,), np.int8)),
    )
    if got.asnumpy().tolist() != [[2.0, 0.0, 3.0, 0.0]]:
        raise RuntimeError(f"unpool kernel self-check failed: {got}")
    backward = KERNELS[current_device()]
    dx = backward["ScatterAddPlanes"](
        Tensor(np.array([[1.0, 2.0]], np.float32)), idx, x, dims
    ).asnumpy()
    dy = backward["GatherPlanes"](
        got, Tensor(np.array([[2, 9]], np.int64)), Tensor(np.zeros((4,), np.int8))
    ).asnumpy()
    if dx.tolist() != [[0.0, 1.0, 0.0, 0.0, 0.0, 2.0]] or dy.tolist() != [[3.0, 0.0]]:
        raise RuntimeError(f"pool backward self-check failed: {dx}, {dy}")
    ranges = Tensor(np.array([[0, 3], [2, 6]], np.int64))  # two overlapping windows
    unit = Tensor(np.array([[0, 1]], np.int64))
    avg_in = Tensor(np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]], np.float32))
    mean = backward["WindowMean"](avg_in, unit, unit, ranges, dims).asnumpy()
    grad = backward["WindowMeanGrad"](
        Tensor(np.array([[3.0, 8.0]], np.float32)), avg_in, unit, unit, ranges, dims
    ).asnumpy()
    if mean.tolist() != [[2.0, 4.5]] or grad.tolist() != [[1.0, 1.0, 3.0, 2.0, 2.0, 2.0]]:
        raise RuntimeError(f"adaptive average kernel self-check failed: {mean}, {grad}")
