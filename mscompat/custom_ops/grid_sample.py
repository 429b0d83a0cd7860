"""Binding of the grid_sample kernels (``cpu/grid_sample_kernel.cc``) as MindSpore Custom ops.

``GridSample2d(x, grid, opts)`` is PyTorch's vectorized CPU kernel for 4-D input (bilinear,
nearest, bicubic; zeros, border, reflection; align_corners) in float32/float64, arithmetic
included; its bprop is ``GridSample2dBackward`` (gradients w.r.t. ``x`` and ``grid``). The
``aot`` backend of ``shape.grid_sample`` for 4-D float32/float64 input.

``GridSample3dHalfBackward(dy, x, grid, opts)`` is PyTorch's float16 backward for 5-D input
(bilinear, nearest): its scalar kernel with every operation rounded to float16, on float32
tensors that hold float16 values (the caller casts); the bprop of the ``aot`` backend's float16
5-D ``grid_sample``.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import CustomRegOp, DataType

from mscompat.custom_ops.aot import KernelUnavailableError, aot_op, kernel_path, warn_once
from mscompat.custom_ops.registry import current_device, device_target

__all__ = ["KERNELS", "MODES", "PADDINGS", "kernel_ops", "options", "probe"]

#: device -> entry point -> the Custom op, filled by :func:`kernel_ops`.
KERNELS: Dict[str, Dict[str, Any]] = {}

#: The kernels' codes for ``mode`` and ``padding_mode``.
MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}

_I64 = DataType.I64_Default
_FLOATS = (DataType.F32_Default, DataType.F64_Default)


def options(mode: str, padding_mode: str, align_corners: bool) -> np.ndarray:
    """The ``opts`` input: [mode, padding, align_corners] as int64."""
    return np.array([MODES[mode], PADDINGS[padding_mode], int(align_corners)], np.int64)


def _forward_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_grid_sample_2d").input(0, "x").input(1, "grid")
    reg = reg.input(2, "opts").output(0, "y")
    for f in _FLOATS:
        reg = reg.dtype_format(f, f, _I64, f)
    return reg.target(target).get_op_info()


def _backward_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_grid_sample_2d_grad").input(0, "dy").input(1, "x")
    reg = reg.input(2, "grid").input(3, "opts").output(0, "dx").output(1, "dgrid")
    for f in _FLOATS:
        reg = reg.dtype_format(f, f, f, _I64, f, f)
    return reg.target(target).get_op_info()


def _half3d_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_grid_sample_3d_half_grad").input(0, "dy").input(1, "x")
    reg = reg.input(2, "grid").input(3, "opts").output(0, "dx").output(1, "dgrid")
    f = DataType.F32_Default
    reg = reg.dtype_format(f, f, f, _I64, f, f)
    return reg.target(target).get_op_info()


def _forward_shape(x: Any, grid: Any, opts: Any) -> Any:
    return [x[0], x[1], grid[1], grid[2]]


def _forward_dtype(x: Any, *_: Any) -> Any:
    return x


def _backward_shape(dy: Any, x: Any, grid: Any, opts: Any) -> Any:
    return list(x), list(grid)


def _backward_dtype(dy: Any, x: Any, grid: Any, opts: Any) -> Any:
    return x, grid


def _forward_bprop(x: Tensor, grid: Tensor, opts: Tensor, out: Tensor, dout: Tensor) -> Any:
    dx, dgrid = KERNELS[device_target()]["GridSample2dBackward"](dout, x, grid, opts)
    return dx, dgrid, ops.zeros_like(opts)


def _backward_bprop(
    dy: Tensor, x: Tensor, grid: Tensor, opts: Tensor, out: Any, dout: Any
) -> Any:  # second derivatives are not provided (PyTorch has none for grid_sample on CPU)
    z = ops.zeros_like
    return z(dy), z(x), z(grid), z(opts)


def kernel_ops(device: str) -> Tuple[Any, Any]:
    """The ``GridSample2d`` and ``GridSample2dBackward`` Custom ops for ``device``, built once
    (``KERNELS[device]`` also holds ``GridSample3dHalfBackward``)."""
    if device not in KERNELS:
        path = kernel_path("grid_sample", device)
        backward = aot_op(
            path,
            "GridSample2dBackward",
            _backward_shape,
            _backward_dtype,
            _backward_reg(device),
            _backward_bprop,
        )
        forward = aot_op(
            path,
            "GridSample2d",
            _forward_shape,
            _forward_dtype,
            _forward_reg(device),
            _forward_bprop,
        )
        half3d = aot_op(
            path,
            "GridSample3dHalfBackward",
            _backward_shape,
            _backward_dtype,
            _half3d_reg(device),
            _backward_bprop,
        )
        KERNELS[device] = {
            "GridSample2d": forward,
            "GridSample2dBackward": backward,
            "GridSample3dHalfBackward": half3d,
        }
    return KERNELS[device]["GridSample2d"], KERNELS[device]["GridSample2dBackward"]


def probe() -> None:
    """Registry probe: the library loads and samples a small case as PyTorch does."""
    try:
        forward, backward = kernel_ops(current_device())
    except KernelUnavailableError as exc:
        warn_once("grid_sample", f"mscompat: {exc}")
        raise
    x = Tensor(np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2))
    g = Tensor(np.array([[[[0.25, -0.5]]]], np.float32))
    opts = Tensor(options("bilinear", "zeros", False))
    y = forward(x, g, opts).asnumpy().reshape(-1)
    # torch.nn.functional.grid_sample(x, g, "bilinear", "zeros", False)
    if not np.allclose(y, [0.75, 4.75], rtol=0, atol=1e-6):
        raise RuntimeError(f"grid_sample kernel self-check failed: {y}")
    dx, dg = backward(Tensor(np.ones((1, 2, 1, 1), np.float32)), x, g, opts)
    # the same call's x.grad and grid.grad for a gradient of ones
    want = np.array([0.25, 0.75, 0.0, 0.0] * 2, np.float32)
    if not np.allclose(dx.asnumpy().reshape(-1), want, atol=1e-6) or not np.allclose(
        dg.asnumpy().reshape(-1), [2.0, 4.0], atol=1e-6
    ):
        raise RuntimeError(f"grid_sample backward self-check failed: {dx}, {dg}")
