"""Binding of the deformable-convolution sampling kernels (``cpu/deform_conv_kernel.cc``,
``cuda/deform_conv_kernel.cu``) as MindSpore Custom ops.

``DeformIm2Col(x, offset, mask, geom, kernel)`` is torchvision's deformable im2col: the
(N, C * kh * kw, OH * OW) columns ``mask * bilinear(x, y, x)`` that a matmul with the weight
turns into the convolution; ``DeformIm2ColGrad(dcols, x, offset, mask, geom, kernel)`` its
backward (torchvision's ``deformable_col2im`` and ``deformable_col2im_coord``), the bprop of
the first. ``geom`` is (10,) int64 ``[kh, kw, sh, sw, ph, pw, dh, dw, offset_groups,
use_mask]``; the int8 carrier ``kernel`` has shape (kh, kw). float32/float64. The ``aot``
backend of ``vision.deform_conv2d``.
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from mindspore import Tensor, ops

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "probe"]


def _cols_shape(x: Any, offset: Any, mask: Any, geom: Any, kernel: Any) -> Any:
    return [x[0], x[1] * kernel[0] * kernel[1], offset[2] * offset[3]]


def _grad_shapes(dcols: Any, x: Any, offset: Any, mask: Any, geom: Any, kernel: Any) -> Any:
    return (list(x), list(offset), list(mask))


def _im2col_bprop(
    x: Tensor,
    offset: Tensor,
    mask: Tensor,
    geom: Tensor,
    kernel: Tensor,
    out: Tensor,
    dout: Tensor,
) -> Any:
    grad = KERNELS[device_target()]["DeformIm2ColGrad"]
    dx, doffset, dmask = grad(dout, x, offset, mask, geom, kernel)
    return dx, doffset, dmask, ops.zeros_like(geom), ops.zeros_like(kernel)


def _self_check(k: Dict[str, Any]) -> None:
    """Samples a 2 x 2 image between its pixels with a 1 x 1 kernel and a mask of 2."""
    x = Tensor(np.array([[[[1.0, 2.0], [3.0, 4.0]]]], np.float32))
    offset = Tensor(np.full((1, 2, 2, 2), 0.5, np.float32))  # points (0.5 + i, 0.5 + j)
    mask = Tensor(np.full((1, 1, 2, 2), 2.0, np.float32))
    geom = Tensor(np.array([1, 1, 1, 1, 0, 0, 1, 1, 1, 1], np.int64))
    kernel = Tensor(np.zeros((1, 1), np.int8))
    cols = k["DeformIm2Col"](x, offset, mask, geom, kernel).asnumpy()
    # torchvision: 2 * bilinear at (0.5, 0.5), (0.5, 1.5), (1.5, 0.5), (1.5, 1.5); corners
    # outside the image count as 0
    want = [5.0, 3.0, 3.5, 2.0]
    expect(cols.shape == (1, 1, 4) and cols.reshape(-1).tolist() == want, "deform im2col", cols)
    dx, doff, dmask = k["DeformIm2ColGrad"](
        Tensor(np.ones((1, 1, 4), np.float32)), x, offset, mask, geom, kernel
    )
    # each point spreads 2 * 0.25 to its (up to four) corners: pixel (0, 0) is read once,
    # (1, 1) four times
    expect(dx.asnumpy().reshape(-1).tolist() == [0.5, 1.0, 1.0, 2.0], "deform col2im", dx)
    expect(dmask.asnumpy().reshape(-1).tolist() == [2.5, 1.5, 1.75, 1.0], "deform mask grad")
    expect(doff.shape == (1, 2, 2, 2), "deform offset grad", doff.shape)


_SIGNATURE = "x offset mask geom:i64 kernel:i8"
LIBRARY = KernelLibrary(
    "deform_conv",
    [
        Entry("DeformIm2Col", f"{_SIGNATURE} -> cols", FLOATS, _cols_shape, _im2col_bprop),
        Entry("DeformIm2ColGrad", f"dcols {_SIGNATURE} -> dx doffset dmask", FLOATS, _grad_shapes),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe
