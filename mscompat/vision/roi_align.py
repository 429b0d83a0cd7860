"""RoI Align (Mask R-CNN), as ``torchvision.ops.roi_align`` and ``torchvision.ops.RoIAlign``.

Each output bin averages a grid of bilinear samples of the feature map; the grid is
``sampling_ratio`` x ``sampling_ratio``, or ``ceil(roi_height / output_height)`` x
``ceil(roi_width / output_width)`` when ``sampling_ratio <= 0`` (adaptive, per RoI). MindSpore's
``ops.ROIAlign`` is not used: on CPU its gradient differs from torchvision's (0.85 in the gap
table) and it has no adaptive grid.

Backends of ``vision.roi_align``:

* ``aot`` (CPU): ``custom_ops/cpu/roi_kernel.cc``, torchvision's CPU kernel (its arithmetic and
  order of accumulation, forward and backward; float16 rounded per operation as ``c10::Half``),
  threads over RoIs (forward) and channels (backward).
* ``aot`` (GPU): ``custom_ops/cuda/roi_kernel.cu``, torchvision's CUDA scheme (a thread per
  output element; the backward adds with ``atomicAdd``, so the last bits of a gradient vary
  from run to run, as torchvision's do); float16 computed in float32 and rounded once.
  Checked on an H100 against torchvision's CUDA op (``tools/check_cuda.py``).
* ``composite``: MindSpore ops (gathers of the four corners and the bilinear weights, the
  samples added in torchvision's order), for ``sampling_ratio > 0`` only: the adaptive grid's
  size depends on the box values, which a static graph cannot have.
"""

from __future__ import annotations

from typing import Any, Tuple, Union

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_bool, check_finite_number, check_int
from mscompat.custom_ops import roi as _roi_kernels
from mscompat.custom_ops.registry import call, device_target, register
from mscompat.vision._roi_common import (
    BoxesArg,
    RoICell,
    check_batch_index,
    check_roi_input,
    kernel_params,
    pooled_size,
    rois_of,
    size_carrier,
)

__all__ = ["RoIAlign", "roi_align"]

OutputSize = Union[int, Tuple[int, int]]


# ----------------------------------------------------------------------------- backends


@_roi_kernels.LIBRARY.backend(
    "vision.roi_align",
    "torchvision's CPU kernel in C++; on GPU its CUDA scheme (atomicAdd backward)",
    devices=("CPU", "GPU"),
)
def _roi_align_aot(
    x: Tensor,
    rois: Tensor,
    pooled: Tuple[int, int],
    scale: float,
    sampling_ratio: int,
    aligned: bool,
) -> Tensor:
    half = x.dtype == ms.float16
    p = kernel_params(sampling_ratio, aligned, half, scale)
    if half:
        x, rois = x.astype(ms.float32), rois.astype(ms.float32)
    y = _roi_kernels.KERNELS[device_target()]["RoIAlign"](x, rois, size_carrier(pooled), p)
    return y.astype(ms.float16) if half else y


def _fixed_grid(
    x: Any, rois: Any, pooled: Any, scale: Any, sampling_ratio: int, aligned: Any
) -> Any:
    if sampling_ratio > 0:
        return None
    return f"sampling_ratio={sampling_ratio} (adaptive grid: its size depends on the box values)"


def _axis(
    start: Tensor, bin_size: Tensor, pooled: int, grid: int, size: int
) -> Tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """One axis of torchvision's sample points: (inside, low, high, l, h), each [K, P, G]."""
    dt = start.dtype
    p = ops.arange(0, pooled).astype(dt).reshape(1, pooled, 1)
    g = (ops.arange(0, grid).astype(ms.float32) + 0.5).astype(dt).reshape(1, 1, grid)
    # (start + p * bin) + (g * bin) / grid, torchvision's order of operations
    pos = (start.reshape(-1, 1, 1) + p * bin_size.reshape(-1, 1, 1)) + (
        g * bin_size.reshape(-1, 1, 1)
    ) / ops.cast(Tensor(grid), dt)
    inside = ops.logical_and(pos >= -1.0, pos <= float(size))
    pos = ops.where(pos <= 0, ops.zeros_like(pos), pos)
    low = ops.floor(pos).astype(ms.int32)
    last = low >= size - 1
    low = ops.where(last, ops.full_like(low, size - 1), low)
    high = ops.where(last, low, low + 1)
    pos = ops.where(last, low.astype(dt), pos)
    frac = pos - low.astype(dt)
    return inside, low, high, frac, 1.0 - frac


@register("vision.roi_align", "composite", note="gathers + bilinear weights", supports=_fixed_grid)
def _roi_align_composite(
    x: Tensor,
    rois: Tensor,
    pooled: Tuple[int, int],
    scale: float,
    sampling_ratio: int,
    aligned: bool,
) -> Tensor:
    n, c, h, w = x.shape
    k = rois.shape[0]
    ph, pw = pooled
    s = sampling_ratio
    dt = x.dtype
    offset = 0.5 if aligned else 0.0
    sc = ops.cast(Tensor(scale, ms.float64), dt)
    b = rois[:, 0]
    valid = ops.logical_and(b > -1, b < n)
    batch = ops.where(valid, b, ops.zeros_like(b)).astype(ms.int32)
    start_w = rois[:, 1] * sc - offset
    start_h = rois[:, 2] * sc - offset
    width = (rois[:, 3] * sc - offset) - start_w
    height = (rois[:, 4] * sc - offset) - start_h
    if not aligned:  # malformed RoIs forced to 1 x 1 (NaN stays NaN, as std::max)
        width = ops.where(width < 1.0, ops.ones_like(width), width)
        height = ops.where(height < 1.0, ops.ones_like(height), height)
    in_y, y_low, y_high, ly, hy = _axis(start_h, height / float(ph), ph, s, h)
    in_x, x_low, x_high, lx, hx = _axis(start_w, width / float(pw), pw, s, w)
    # [K, PH, PW, IY, IX]: a sample outside the map has weights 0 at position 0
    inside = ops.logical_and(in_y.reshape(k, ph, 1, s, 1), in_x.reshape(k, 1, pw, 1, s))
    shape = (k, ph, pw, s, s)
    planes = x.transpose(0, 2, 3, 1).reshape(n * h * w, c)
    base = (batch * (h * w)).reshape(k, 1, 1, 1, 1)

    def corner(yi: Tensor, xi: Tensor, wy: Tensor, wx: Tensor) -> Tuple[Tensor, Tensor]:
        pos = yi.reshape(k, ph, 1, s, 1) * w + xi.reshape(k, 1, pw, 1, s)
        pos = ops.where(inside, ops.broadcast_to(pos, shape), ops.zeros(shape, ms.int32))
        weight = wy.reshape(k, ph, 1, s, 1) * wx.reshape(k, 1, pw, 1, s)
        weight = ops.where(inside, weight, ops.zeros(shape, dt))
        v = ops.gather(planes, (pos + base).reshape(-1), 0).reshape(*shape, c)
        return weight.reshape(*shape, 1), v

    w1, v1 = corner(y_low, x_low, hy, hx)
    w2, v2 = corner(y_low, x_high, hy, lx)
    w3, v3 = corner(y_high, x_low, ly, hx)
    w4, v4 = corner(y_high, x_high, ly, lx)
    val = w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4
    acc = ops.zeros((k, ph, pw, c), dt)
    for iy in range(s):  # torchvision's order: iy, then ix
        for ix in range(s):
            acc = acc + val[:, :, :, iy, ix, :]
    out = (acc / ops.cast(Tensor(s * s), dt)).transpose(0, 3, 1, 2)
    return ops.where(valid.reshape(k, 1, 1, 1), out, ops.zeros_like(out))


# ----------------------------------------------------------------------------- front doors


def roi_align(
    input: Tensor,
    boxes: BoxesArg,
    output_size: OutputSize,
    spatial_scale: float = 1.0,
    sampling_ratio: int = -1,
    aligned: bool = False,
) -> Tensor:
    """RoI Align of Mask R-CNN, as :func:`torchvision.ops.roi_align`.

    For RoI ``k`` on image ``b`` with corners scaled by ``spatial_scale`` (minus 0.5 when
    ``aligned``; without ``aligned`` a RoI is at least 1 x 1), bin ``(i, j)`` of size
    ``(bin_h, bin_w)`` averages ``G_h x G_w`` bilinear samples:

    .. math::
        y_{k,c,i,j} = \\frac{1}{G_h G_w} \\sum_{a<G_h} \\sum_{b<G_w}
        \\operatorname{bilinear}\\big(x_{b,c},\\;
        y_0 + i\\,\\mathrm{bin}_h + (a + \\tfrac12)\\,\\mathrm{bin}_h / G_h,\\;
        x_0 + j\\,\\mathrm{bin}_w + (b + \\tfrac12)\\,\\mathrm{bin}_w / G_w\\big)

    with ``G = sampling_ratio`` if positive, else ``ceil(roi_size / output_size)`` per RoI.
    torchvision's bilinear rule: a sample outside ``[-1, H] x [-1, W]`` is 0, coordinates below
    0 are 0, the last row/column repeats. The gradient flows to ``input`` only (not to
    ``boxes``), as torchvision's.

    Args:
        input (Tensor[N, C, H, W]): float16, float32 or float64.
        boxes (Tensor[K, 5] or list of Tensor[L, 4]): (batch index, x1, y1, x2, y2) rows, or
            (x1, y1, x2, y2) rows per image of the batch, in ``input``'s dtype.
        output_size (int or (int, int)): the pooled (height, width).
        spatial_scale (float): scale from box coordinates to ``input`` coordinates (1/16 for
            a stride-16 feature map).
        sampling_ratio (int): samples per bin along each axis; ``<= 0``: adaptive.
        aligned (bool): shift the box by -0.5 pixel (pixel centres; Detectron2's ROIAlignV2).

    Returns:
        Tensor[K, C, output_size[0], output_size[1]], ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a float Tensor, ``boxes`` not a Tensor or list of Tensors, or
            of another dtype; non-int ``output_size``/``sampling_ratio``, non-bool ``aligned``.
        ValueError: ``input`` not 4-D or with empty height/width, ``boxes`` not (K, 5) / (L, 4),
            a batch index outside [0, N), ``output_size`` not positive.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import roi_align
        >>> x = ms.Tensor(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
        >>> boxes = ms.Tensor([[0.0, 0.0, 0.0, 3.0, 3.0]])
        >>> roi_align(x, boxes, output_size=1, sampling_ratio=1).asnumpy().tolist()
        [[[[7.5]]]]
        >>> roi_align(x, [ms.Tensor([[0.0, 0.0, 2.0, 2.0]])], 2, aligned=True).shape
        (1, 1, 2, 2)
    """
    x = check_roi_input("roi_align", input)
    pooled = pooled_size("roi_align", output_size)
    scale = check_finite_number(spatial_scale, "spatial_scale")
    ratio = check_int(sampling_ratio, "sampling_ratio")
    aligned = check_bool(aligned, "aligned")
    rois = rois_of("roi_align", boxes, x, pooled)
    if rois.shape[0] == 0 or x.shape[1] == 0:  # answered here: no kernel sees an empty tensor
        return ops.zeros((rois.shape[0], x.shape[1], *pooled), x.dtype)
    rois = ops.stop_gradient(check_batch_index("roi_align", rois, x.shape[0]))
    return call("vision.roi_align", x, rois, pooled, scale, ratio, aligned)


class RoIAlign(RoICell):
    """RoI Align as a Cell, as :class:`torchvision.ops.RoIAlign`. See :func:`roi_align`.

    Args:
        output_size (int or (int, int)): the pooled (height, width).
        spatial_scale (float): box-to-input scale.
        sampling_ratio (int): samples per bin per axis; ``<= 0``: adaptive.
        aligned (bool): shift boxes by -0.5 pixel.

    Shape:
        - input: (N, C, H, W); rois: (K, 5) or a list of (L, 4).
        - output: (K, C, output_size[0], output_size[1]).

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import RoIAlign
        >>> pool = RoIAlign(output_size=(2, 2), spatial_scale=0.5, sampling_ratio=2)
        >>> x = ms.Tensor(np.ones((1, 3, 8, 8), np.float32))
        >>> pool(x, ms.Tensor([[0.0, 0.0, 0.0, 9.0, 9.0]])).shape
        (1, 3, 2, 2)
    """

    def __init__(
        self,
        output_size: OutputSize,
        spatial_scale: float,
        sampling_ratio: int,
        aligned: bool = False,
    ) -> None:
        super().__init__(
            output_size=output_size,
            spatial_scale=spatial_scale,
            sampling_ratio=sampling_ratio,
            aligned=aligned,
        )

    def construct(self, input: Tensor, rois: BoxesArg) -> Tensor:
        return roi_align(
            input, rois, self.output_size, self.spatial_scale, self.sampling_ratio, self.aligned
        )
