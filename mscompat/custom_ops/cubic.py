"""Binding of the bicubic-interpolation kernels (``cpu/cubic_kernel.cc``) as MindSpore Custom ops.

``CubicResample(x, src_h, src_w, opts)`` interpolates the (N, C, H, W) tensor ``x`` with Keys'
cubic (A = -0.75) at the source coordinates PyTorch's ``area_pixel_compute_source_index``
gives every output row and column (tables from ``mscompat/shape/interpolate.py``), with
PyTorch's CPU arithmetic; its bprop is ``CubicResampleBackward``, PyTorch's backward loop. The
``aot`` backend of ``shape.interpolate`` in mode ``bicubic`` (without antialias).
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

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
_FLOATS = (DataType.F32_Default, DataType.F64_Default)


def _forward_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_cubic_resample").input(0, "x").input(1, "src_h")
    reg = reg.input(2, "src_w").input(3, "opts").output(0, "y")
    for f in _FLOATS:
        reg = reg.dtype_format(f, f, f, _I64, f)
    return reg.target(target).get_op_info()


def _backward_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_cubic_resample_grad").input(0, "dy").input(1, "x")
    reg = reg.input(2, "src_h").input(3, "src_w").input(4, "opts").output(0, "dx")
    for f in _FLOATS:
        reg = reg.dtype_format(f, f, f, f, _I64, f)
    return reg.target(target).get_op_info()


def _forward_shape(x: Any, src_h: Any, src_w: Any, opts: Any) -> Any:
    return [x[0], x[1], src_h[1], src_w[1]]


def _backward_shape(dy: Any, x: Any, *_: Any) -> Any:
    return list(x)


def _forward_bprop(
    x: Tensor, src_h: Tensor, src_w: Tensor, opts: Tensor, out: Tensor, dout: Tensor
) -> Any:
    dx = KERNELS[device_target()]["CubicResampleBackward"](dout, x, src_h, src_w, opts)
    z = ops.zeros_like
    return dx, z(src_h), z(src_w), z(opts)


def _backward_bprop(
    dy: Tensor, x: Tensor, src_h: Tensor, src_w: Tensor, opts: Tensor, out: Tensor, dout: Tensor
) -> Any:  # the backward is linear in dy; second derivatives are not provided
    z = ops.zeros_like
    return z(dy), z(x), z(src_h), z(src_w), z(opts)


def kernel_ops(device: str) -> Tuple[Any, Any]:
    """The ``CubicResample`` and ``CubicResampleBackward`` Custom ops for ``device`` (built
    once)."""
    if device not in KERNELS:
        path = kernel_path("cubic", device)
        backward = aot_op(
            path,
            "CubicResampleBackward",
            _backward_shape,
            same_dtype,
            _backward_reg(device),
            _backward_bprop,
        )
        forward = aot_op(
            path, "CubicResample", _forward_shape, same_dtype, _forward_reg(device), _forward_bprop
        )
        KERNELS[device] = {"CubicResample": forward, "CubicResampleBackward": backward}
    return KERNELS[device]["CubicResample"], KERNELS[device]["CubicResampleBackward"]


def probe() -> None:
    """Registry probe: the library loads and resamples a small case as PyTorch does."""
    try:
        forward, backward = kernel_ops(current_device())
    except KernelUnavailableError as exc:
        warn_once("cubic", f"mscompat: {exc}")
        raise
    x = Tensor(np.array([[[[0.0, 1.0, 2.0, 4.0]]]], np.float32))
    # (1, 4) -> (1, 3), align_corners=True: columns at 0, 1.5, 3; the single row at 0
    src_h = Tensor(np.zeros((2, 1), np.float32))
    src_w = Tensor(np.array([[0.0, 1.5, 3.0], [0.0, 1.5, 3.0]], np.float32))
    opts = Tensor(np.array([0], np.int64))
    y = forward(x, src_h, src_w, opts).asnumpy()
    # torch.nn.functional.interpolate(x, size=(1, 3), mode="bicubic", align_corners=True)
    if not np.allclose(y.reshape(-1), [0.0, 1.40625, 4.0], rtol=0, atol=1e-6):
        raise RuntimeError(f"cubic kernel self-check failed: {y}")
    dy = Tensor(np.ones((1, 1, 1, 3), np.float32))
    dx = backward(dy, x, src_h, src_w, opts).asnumpy()
    # the same call's x.grad for a gradient of ones
    if not np.allclose(dx.reshape(-1), [0.90625, 0.59375, 0.59375, 0.90625], atol=1e-6):
        raise RuntimeError(f"cubic backward self-check failed: {dx}")
