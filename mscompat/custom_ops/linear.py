"""Binding of the linear-interpolation kernels (``cpu/linear_kernel.cc``) as MindSpore Custom ops.

``LinearResample(x, idx0, lam0, idx1, lam1, idx2, lam2, opts)`` mixes, along each spatial
axis of ``x`` (N, C, *spatial), the two source elements PyTorch's
``compute_source_index_and_lambda`` picks (tables from ``mscompat/shape/interpolate.py``),
with PyTorch's CPU arithmetic (its generic kernel, or for 2-D outputs with
``out_h + out_w <= 128`` its channels-last kernel); its bprop is
``LinearResampleBackward``, PyTorch's backward loop. The ``aot`` backend of
``shape.interpolate`` in modes ``linear``, ``bilinear`` and ``trilinear`` for float32/float64,
and for float16 run in float32 (``opts`` ``half_weights``: the forward weights rounded to
float16, as PyTorch's float16 kernels store them).
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


def _tables(reg: Any, first: int) -> Any:
    for a in range(3):
        reg = reg.input(first + 2 * a, f"idx{a}").input(first + 2 * a + 1, f"lam{a}")
    return reg.input(first + 6, "opts")


def _forward_reg(target: str) -> Any:
    reg = _tables(CustomRegOp("mscompat_linear_resample").input(0, "x"), 1).output(0, "y")
    for f in _FLOATS:
        reg = reg.dtype_format(f, _I64, f, _I64, f, _I64, f, _I64, f)
    return reg.target(target).get_op_info()


def _backward_reg(target: str) -> Any:
    reg = CustomRegOp("mscompat_linear_resample_grad").input(0, "dy").input(1, "x")
    reg = _tables(reg, 2).output(0, "dx")
    for f in _FLOATS:
        reg = reg.dtype_format(f, f, _I64, f, _I64, f, _I64, f, _I64, f)
    return reg.target(target).get_op_info()


def _forward_shape(x: Any, i0: Any, l0: Any, i1: Any, l1: Any, i2: Any, *_: Any) -> Any:
    dims = len(x) - 2
    return list(x[:2]) + [i0[1], i1[1], i2[1]][3 - dims :]


def _backward_shape(dy: Any, x: Any, *_: Any) -> Any:
    return list(x)


def _forward_bprop(
    x: Tensor,
    i0: Tensor,
    l0: Tensor,
    i1: Tensor,
    l1: Tensor,
    i2: Tensor,
    l2: Tensor,
    opts: Tensor,
    out: Tensor,
    dout: Tensor,
) -> Any:
    dx = KERNELS[device_target()]["LinearResampleBackward"](dout, x, i0, l0, i1, l1, i2, l2, opts)
    z = ops.zeros_like
    return dx, z(i0), z(l0), z(i1), z(l1), z(i2), z(l2), z(opts)


def _backward_bprop(
    dy: Tensor,
    x: Tensor,
    i0: Tensor,
    l0: Tensor,
    i1: Tensor,
    l1: Tensor,
    i2: Tensor,
    l2: Tensor,
    opts: Tensor,
    out: Tensor,
    dout: Tensor,
) -> Any:  # the backward is linear in dy; second derivatives are not provided
    z = ops.zeros_like
    return z(dy), z(x), z(i0), z(l0), z(i1), z(l1), z(i2), z(l2), z(opts)


def kernel_ops(device: str) -> Tuple[Any, Any]:
    """The ``LinearResample`` and ``LinearResampleBackward`` Custom ops for ``device`` (built
    once)."""
    if device not in KERNELS:
        path = kernel_path("linear", device)
        backward = aot_op(
            path,
            "LinearResampleBackward",
            _backward_shape,
            same_dtype,
            _backward_reg(device),
            _backward_bprop,
        )
        forward = aot_op(
            path,
            "LinearResample",
            _forward_shape,
            same_dtype,
            _forward_reg(device),
            _forward_bprop,
        )
        KERNELS[device] = {"LinearResample": forward, "LinearResampleBackward": backward}
    return KERNELS[device]["LinearResample"], KERNELS[device]["LinearResampleBackward"]


def probe() -> None:
    """Registry probe: the library loads and resamples a small case as PyTorch does."""
    try:
        forward, backward = kernel_ops(current_device())
    except KernelUnavailableError as exc:
        warn_once("linear", f"mscompat: {exc}")
        raise
    x = Tensor(np.array([[[0.0, 1.0, 2.0]]], np.float32))
    unit_idx = Tensor(np.zeros((2, 1), np.int64))
    unit_lam = Tensor(np.array([[1.0], [0.0]], np.float32))
    # width 3 -> 5, align_corners=False: sources 0 (clamped), 0.4, 1.0, 1.6, 2.2 (last index)
    idx = Tensor(np.array([[0, 0, 1, 1, 2], [1, 1, 2, 2, 2]], np.int64))
    lam = Tensor(np.array([[1.0, 0.6, 1.0, 0.4, 0.8], [0.0, 0.4, 0.0, 0.6, 0.2]], np.float32))
    opts = Tensor(np.array([0, 0], np.int64))
    y = forward(x, unit_idx, unit_lam, unit_idx, unit_lam, idx, lam, opts).asnumpy()
    # torch.nn.functional.interpolate(x[0], size=5, mode="linear")
    if not np.allclose(y.reshape(-1), [0.0, 0.4, 1.0, 1.6, 2.0], rtol=0, atol=1e-6):
        raise RuntimeError(f"linear kernel self-check failed: {y}")
    dy = Tensor(np.ones((1, 1, 5), np.float32))
    dx = backward(dy, x, unit_idx, unit_lam, unit_idx, unit_lam, idx, lam, opts).asnumpy()
    # the same call's x.grad for a gradient of ones
    if not np.allclose(dx.reshape(-1), [1.6, 1.8, 1.6], rtol=0, atol=1e-6):
        raise RuntimeError(f"linear backward self-check failed: {dx}")
