"""Plain-PyTorch references of torchvision's RoI ops (the op database's oracle: the suite never
imports torchvision), written as obvious loops like torchvision's ``test/test_ops.py``
``expected_fn``.

Each RoI's geometry (scaled corners, bin sizes, the adaptive grid, sample coordinates, rounded
corners) is computed in the input's dtype with 0-d tensors, one operation at a time, as
torchvision's kernels do in their ``T`` (so float16 grids and bins are torchvision's); the
bilinear weights and the averaging are float64. Gradients come from autograd, except
``ps_roi_pool``'s, whose backward torchvision computes with other bins (clipped to ``[0, H]``
instead of the forward's ``[0, H - 1]``): a hand-written backward reproduces it.
"""

from __future__ import annotations

import math
from typing import Any, List, Sequence, Tuple, Union

import torch
from torch import Tensor

__all__ = [
    "MultiScaleRoIAlign",
    "PSRoIAlign",
    "PSRoIPool",
    "RoIAlign",
    "RoIPool",
    "ps_roi_align",
    "ps_roi_pool",
    "roi_align",
    "roi_pool",
]

_FLT_MAX = 3.4028234663852886e38


def _pair(size: Any) -> Tuple[int, int]:
    if isinstance(size, int):
        return size, size
    size = tuple(size)
    return (size[0], size[0]) if len(size) == 1 else (size[0], size[1])


def _rois(boxes: Union[Tensor, Sequence[Tensor]]) -> Tensor:
    if isinstance(boxes, Tensor):
        return boxes
    rows = [torch.cat([torch.full_like(b[:, :1], i), b], 1) for i, b in enumerate(boxes)]
    return torch.cat(rows, 0)


def _bilinear(plane: Tensor, y: float, x: float) -> Tensor:
    """torchvision's bilinear sample of plane (C, H, W) at (y, x): 0 outside [-1, H] x [-1, W],
    coordinates below 0 clamped to 0, the last row/column repeated."""
    _, h, w = plane.shape
    if y < -1.0 or y > h or x < -1.0 or x > w:
        return plane.new_zeros(plane.shape[0])
    y, x = max(y, 0.0), max(x, 0.0)
    y_low, x_low = int(y), int(x)
    if y_low >= h - 1:
        y_low = y_high = h - 1
        y = float(y_low)
    else:
        y_high = y_low + 1
    if x_low >= w - 1:
        x_low = x_high = w - 1
        x = float(x_low)
    else:
        x_high = x_low + 1
    ly, lx = y - y_low, x - x_low
    hy, hx = 1.0 - ly, 1.0 - lx
    return (
        hy * hx * plane[:, y_low, x_low]
        + hy * lx * plane[:, y_low, x_high]
        + ly * hx * plane[:, y_high, x_low]
        + ly * lx * plane[:, y_high, x_high]
    )


def _align(
    input: Tensor,
    boxes: Any,
    output_size: Any,
    spatial_scale: float,
    sampling_ratio: int,
    aligned: bool,
    position_sensitive: bool,
) -> Tensor:
    dt = input.dtype
    rois = _rois(boxes)
    ph, pw = _pair(output_size)
    x = input.double()
    c_out = x.shape[1] // (ph * pw) if position_sensitive else x.shape[1]

    def t(v: float) -> Tensor:
        return torch.tensor(v, dtype=dt)

    out: List[Tensor] = []
    for r in rois:
        b = int(r[0])
        offset = t(0.5 if aligned else 0.0)
        start_w, start_h = r[1] * t(spatial_scale) - offset, r[2] * t(spatial_scale) - offset
        width = (r[3] * t(spatial_scale) - offset) - start_w
        height = (r[4] * t(spatial_scale) - offset) - start_h
        if not aligned:  # forced to at least 1 x 1
            width, height = torch.maximum(width, t(1.0)), torch.maximum(height, t(1.0))
        bin_h, bin_w = height / t(ph), width / t(pw)
        gh = sampling_ratio if sampling_ratio > 0 else math.ceil(float(height / t(ph)))
        gw = sampling_ratio if sampling_ratio > 0 else math.ceil(float(width / t(pw)))
        count = gh * gw if position_sensitive else max(gh * gw, 1)
        bins: List[Tensor] = []
        for c in range(c_out):
            for i in range(ph):
                for j in range(pw):
                    channel = (c * ph + i) * pw + j if position_sensitive else None
                    plane = x[b] if channel is None else x[b, channel : channel + 1]
                    acc = plane.new_zeros(plane.shape[0])
                    for iy in range(gh):
                        sy = (start_h + t(i) * bin_h) + (t(iy + 0.5) * bin_h) / t(gh)
                        for ix in range(gw):
                            sx = (start_w + t(j) * bin_w) + (t(ix + 0.5) * bin_w) / t(gw)
                            acc = acc + _bilinear(plane, float(sy), float(sx))
                    bins.append(acc / count if count else acc * math.nan)
            if not position_sensitive:
                break
        if position_sensitive:
            out.append(torch.stack(bins).reshape(c_out, ph, pw))
        else:
            out.append(torch.stack(bins, 1).reshape(c_out, ph, pw))
    if not out:
        return input.new_zeros((0, c_out, ph, pw))
    return torch.stack(out).to(dt)


def roi_align(
    input: Tensor,
    boxes: Any,
    output_size: Any,
    spatial_scale: float = 1.0,
    sampling_ratio: int = -1,
    aligned: bool = False,
) -> Tensor:
    """``torchvision.ops.roi_align``, by loops."""
    return _align(input, boxes, output_size, spatial_scale, sampling_ratio, aligned, False)


def ps_roi_align(
    input: Tensor,
    boxes: Any,
    output_size: Any,
    spatial_scale: float = 1.0,
    sampling_ratio: int = -1,
) -> Tensor:
    """``torchvision.ops.ps_roi_align``, by loops (always the -0.5 shift, no 1 x 1 minimum)."""
    return _align(input, boxes, output_size, spatial_scale, sampling_ratio, True, True)


def _c_round(v: float) -> int:
    """C's round: half away from zero."""
    return int(math.copysign(math.floor(abs(v) + 0.5), v))


def _pool_bins(
    r: Tensor,
    dt: Any,
    scale: float,
    ph: int,
    pw: int,
    extra: int,
    lim: Tuple[int, int],
    float_round: bool = False,
) -> List[Tuple[int, int, int, int]]:
    def t(v: float) -> Tensor:
        return torch.tensor(v, dtype=dt)

    def corner(v: Tensor) -> int:  # float_round: C's roundf of the product (float32)
        return _c_round(float(v.float()) if float_round else float(v))

    sw, sh = corner(r[1] * t(scale)), corner(r[2] * t(scale))
    ew, eh = corner(r[3] * t(scale)), corner(r[4] * t(scale))
    rw, rh = max(ew - sw + extra, 1), max(eh - sh + extra, 1)
    bin_h, bin_w = t(rh) / t(ph), t(rw) / t(pw)
    bins = []
    for i in range(ph):
        for j in range(pw):
            hs = min(max(math.floor(float(t(i) * bin_h)) + sh, 0), lim[0])
            he = min(max(math.ceil(float(t(i + 1) * bin_h)) + sh, 0), lim[0])
            ws = min(max(math.floor(float(t(j) * bin_w)) + sw, 0), lim[1])
            we = min(max(math.ceil(float(t(j + 1) * bin_w)) + sw, 0), lim[1])
            bins.append((hs, he, ws, we))
    return bins


def roi_pool(input: Tensor, boxes: Any, output_size: Any, spatial_scale: float = 1.0) -> Tensor:
    """``torchvision.ops.roi_pool``, by loops: each bin's first value strictly above the running
    maximum, from ``-FLT_MAX`` (float16: ``-inf``); 0 for an empty bin."""
    dt = input.dtype
    rois = _rois(boxes)
    ph, pw = _pair(output_size)
    _, c, h, w = input.shape
    lowest = float(torch.tensor(-_FLT_MAX, dtype=torch.float32).to(dt))
    out: List[Tensor] = []
    for r in rois:
        plane = input[int(r[0])]
        cells: List[Tensor] = []
        for hs, he, ws, we in _pool_bins(r, dt, spatial_scale, ph, pw, 1, (h, w)):
            if he <= hs or we <= ws:
                cells.append(input.new_zeros(c))
                continue
            region = plane[:, hs:he, ws:we].reshape(c, -1)
            key = torch.where(torch.isnan(region), -math.inf, region.double())
            best = key.max(1).values
            first = (key == best[:, None]).double().argmax(1)  # the first maximum
            picked = region.gather(1, first[:, None])[:, 0]
            cells.append(torch.where(best > lowest, picked, torch.full_like(picked, lowest)))
        out.append(torch.stack(cells, 1).reshape(c, ph, pw))
    if not out:
        return input.new_zeros((0, c, ph, pw))
    return torch.stack(out)


class _PSRoIPool(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, input: Tensor, rois: Tensor, ph: int, pw: int, scale: float) -> Tensor:
        ctx.save_for_backward(rois)
        ctx.geometry = (input.shape, input.dtype, ph, pw, scale)
        _, c, h, w = input.shape
        x = input.double()
        out = x.new_zeros(rois.shape[0], c // (ph * pw), ph, pw)
        for k, r in enumerate(rois):
            for n, (hs, he, ws, we) in enumerate(
                _pool_bins(r, input.dtype, scale, ph, pw, 0, (h - 1, w - 1))
            ):
                if he <= hs or we <= ws:
                    continue
                for co in range(out.shape[1]):
                    cell = x[int(r[0]), co * ph * pw + n, hs:he, ws:we]
                    out[k, co, n // pw, n % pw] = cell.sum() / ((he - hs) * (we - ws))
        return out.to(input.dtype)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> Any:
        (rois,) = ctx.saved_tensors
        shape, dt, ph, pw, scale = ctx.geometry
        h, w = shape[2], shape[3]
        dx = torch.zeros(shape, dtype=torch.float64)
        g = grad.double()
        for k, r in enumerate(rois):
            # torchvision's backward rounds the corners in float (roundf) and clips to [0, H]
            bins = _pool_bins(r, dt, scale, ph, pw, 0, (h, w), float_round=True)
            for n, (hs, he, ws, we) in enumerate(bins):
                if he <= hs or we <= ws:
                    continue
                for co in range(g.shape[1]):
                    area = (he - hs) * (we - ws)
                    dx[int(r[0]), co * ph * pw + n, hs:he, ws:we] += (
                        g[k, co, n // pw, n % pw] / area
                    )
        return dx.to(dt), None, None, None, None


def ps_roi_pool(input: Tensor, boxes: Any, output_size: Any, spatial_scale: float = 1.0) -> Tensor:
    """``torchvision.ops.ps_roi_pool``, by loops, with torchvision's backward."""
    ph, pw = _pair(output_size)
    rois = _rois(boxes)
    if rois.shape[0] == 0:
        return input.new_zeros((0, input.shape[1] // (ph * pw), ph, pw))
    return _PSRoIPool.apply(input, rois, ph, pw, spatial_scale)


class MultiScaleRoIAlign:
    """``torchvision.ops.MultiScaleRoIAlign``, spelled out: FPN's level per box, then
    :func:`roi_align` per level."""

    def __init__(
        self,
        featmap_names: List[str],
        output_size: Any,
        sampling_ratio: int,
        *,
        canonical_scale: int = 224,
        canonical_level: int = 4,
    ) -> None:
        self.names = list(featmap_names)
        self.output_size = _pair(output_size)
        self.sampling_ratio = sampling_ratio
        self.s0, self.k0 = canonical_scale, canonical_level

    def __call__(self, x: Any, boxes: List[Tensor], image_shapes: List[Tuple[int, int]]) -> Any:
        feats = [v for k, v in x.items() if k in self.names]
        max_h = max(s[0] for s in image_shapes)
        scales = [2 ** float(torch.tensor(f.shape[-2] / max_h).log2().round()) for f in feats]
        k_min = int(-math.log2(scales[0]))
        k_max = int(-math.log2(scales[-1]))
        rois = _rois(boxes)
        c = feats[0].shape[1]
        result = feats[0].new_zeros((rois.shape[0], c, *self.output_size))
        cat = (
            torch.cat(list(boxes)).float()
            if feats[0].dtype == torch.float16
            else torch.cat(list(boxes))
        )
        area = (cat[:, 2] - cat[:, 0]) * (cat[:, 3] - cat[:, 1])
        level = torch.floor(
            self.k0 + torch.log2(area.sqrt() / self.s0) + torch.tensor(1e-6, dtype=area.dtype)
        )
        level = level.clamp(k_min, k_max).long() - k_min
        if len(feats) == 1:
            level = torch.zeros_like(level)
        for i, (f, s) in enumerate(zip(feats, scales)):
            pick = torch.where(level == i)[0]
            if pick.numel():
                result[pick] = roi_align(f, rois[pick], self.output_size, s, self.sampling_ratio)
        return result


class _Cell:
    """A torchvision RoI module's call: the reference function with the constructor's
    arguments."""

    fn: Any = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs

    def __call__(self, input: Tensor, rois: Any) -> Tensor:
        return type(self).fn(input, rois, *self.args, **self.kwargs)


class RoIAlign(_Cell):
    """``torchvision.ops.RoIAlign(output_size, spatial_scale, sampling_ratio, aligned)``."""

    fn = staticmethod(roi_align)


class RoIPool(_Cell):
    """``torchvision.ops.RoIPool(output_size, spatial_scale)``."""

    fn = staticmethod(roi_pool)


class PSRoIAlign(_Cell):
    """``torchvision.ops.PSRoIAlign(output_size, spatial_scale, sampling_ratio)``."""

    fn = staticmethod(ps_roi_align)


class PSRoIPool(_Cell):
    """``torchvision.ops.PSRoIPool(output_size, spatial_scale)``."""

    fn = staticmethod(ps_roi_pool)
