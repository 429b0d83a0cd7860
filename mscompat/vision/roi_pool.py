"""RoI max pooling (Fast R-CNN), as ``torchvision.ops.roi_pool`` and ``torchvision.ops.RoIPool``.

Backends of ``vision.roi_pool``:

* ``aot`` (CPU): ``custom_ops/cpu/roi_kernel.cc``, torchvision's CPU kernel: the same bins, the
  same pick (the first strictly greater value in row-major order, starting from ``-FLT_MAX``;
  NaN is never picked), and its backward, which adds each bin's gradient at its pick.
* ``composite``: MindSpore ops over a mask of every bin on the whole map (K·C·PH·PW·H·W
  elements): the same picks, the gradient through a gather at them; for small calls only (its
  ``supports`` says so), as the reference and for devices without the kernel.
"""

from __future__ import annotations

from typing import Any, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from mscompat._checks import check_finite_number
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

__all__ = ["RoIPool", "roi_pool"]

OutputSize = Union[int, Tuple[int, int]]

#: The most mask elements the composite builds (K·C·PH·PW·H·W).
COMPOSITE_LIMIT = 2**24
_FLT_MAX = 3.4028234663852886e38


@_roi_kernels.LIBRARY.backend("vision.roi_pool", "C++ port of torchvision's CPU kernel")
def _roi_pool_aot(x: Tensor, rois: Tensor, pooled: Tuple[int, int], scale: float) -> Tensor:
    half = x.dtype == ms.float16
    p = kernel_params(0, False, half, scale)
    if half:
        x, rois = x.astype(ms.float32), rois.astype(ms.float32)
    y, _ = _roi_kernels.KERNELS[device_target()]["RoIPool"](x, rois, size_carrier(pooled), p)
    return y.astype(ms.float16) if half else y


def _small(x: Any, rois: Any, pooled: Any, scale: Any) -> Any:
    n = rois.shape[0] * x.shape[1] * pooled[0] * pooled[1] * x.shape[2] * x.shape[3]
    if n <= COMPOSITE_LIMIT:
        return None
    return f"its mask would have {n} elements (more than {COMPOSITE_LIMIT})"


def _bin_edges(start: Tensor, length: Tensor, pooled: int, limit: int) -> Tuple[Tensor, Tensor]:
    """torchvision's bin edges along one axis, [K, P] int32, clipped to [0, limit]."""
    dt = start.dtype
    bin_size = length.astype(dt) / ops.cast(Tensor(pooled), dt)
    p = ops.arange(0, pooled).astype(dt).reshape(1, pooled)
    lo = ops.floor(p * bin_size.reshape(-1, 1)).astype(ms.int32) + start.reshape(-1, 1)
    hi = ops.ceil((p + 1) * bin_size.reshape(-1, 1)).astype(ms.int32) + start.reshape(-1, 1)
    return ops.clip(lo, 0, limit), ops.clip(hi, 0, limit)


def _round(v: Tensor) -> Tensor:
    """C's round (half away from zero) to int32."""
    return (ops.sign(v) * ops.floor(ops.abs(v) + 0.5)).astype(ms.int32)


@register("vision.roi_pool", "composite", note="masked max over each bin", supports=_small)
def _roi_pool_composite(x: Tensor, rois: Tensor, pooled: Tuple[int, int], scale: float) -> Tensor:
    n, c, h, w = x.shape
    k = rois.shape[0]
    ph, pw = pooled
    dt = x.dtype
    sc = ops.cast(Tensor(scale, ms.float64), dt)
    b = rois[:, 0]
    valid = ops.logical_and(b > -1, b < n)
    batch = ops.where(valid, b, ops.zeros_like(b)).astype(ms.int32)
    sw, sh = _round(rois[:, 1] * sc), _round(rois[:, 2] * sc)
    ew, eh = _round(rois[:, 3] * sc), _round(rois[:, 4] * sc)
    one = ops.ones_like(sw)
    hs, he = _bin_edges(sh, ops.maximum(eh - sh + 1, one), ph, h)
    ws, we = _bin_edges(sw, ops.maximum(ew - sw + 1, one), pw, w)
    rows = ops.arange(0, h).astype(ms.int32).reshape(1, 1, h)
    cols = ops.arange(0, w).astype(ms.int32).reshape(1, 1, w)
    in_h = ops.logical_and(rows >= hs.reshape(k, ph, 1), rows < he.reshape(k, ph, 1))
    in_w = ops.logical_and(cols >= ws.reshape(k, pw, 1), cols < we.reshape(k, pw, 1))
    mask = ops.logical_and(in_h.reshape(k, 1, ph, 1, h, 1), in_w.reshape(k, 1, 1, pw, 1, w))
    planes = ops.gather(x, batch, 0)  # [K, C, H, W]
    # torchvision keeps the first value strictly above the running maximum, which starts at
    # -FLT_MAX: NaN and values <= -FLT_MAX are never picked.
    lowest = Tensor(-_FLT_MAX, ms.float64).astype(dt)
    key = ops.where(ops.isnan(planes), ops.fill(dt, planes.shape, -np.inf), planes)
    key = ops.where(mask, key.reshape(k, c, 1, 1, h, w), ops.fill(dt, (1, 1, 1, 1, 1, 1), -np.inf))
    flat = key.reshape(k, c, ph, pw, h * w)
    best = flat.max(axis=-1)
    pick = ops.stop_gradient(ops.argmax(flat, dim=-1).astype(ms.int32))
    found = best > lowest
    gathered = ops.gather_elements(
        planes.reshape(k, c, h * w), 2, pick.reshape(k, c, ph * pw)
    ).reshape(k, c, ph, pw)
    empty = ops.logical_or((he <= hs).reshape(k, 1, ph, 1), (we <= ws).reshape(k, 1, 1, pw))
    out = ops.where(found, gathered, ops.broadcast_to(lowest, gathered.shape))
    out = ops.where(empty, ops.zeros_like(out), out)
    return ops.where(valid.reshape(k, 1, 1, 1), out, ops.zeros_like(out))


def roi_pool(
    input: Tensor, boxes: BoxesArg, output_size: OutputSize, spatial_scale: float = 1.0
) -> Tensor:
    """RoI max pooling of Fast R-CNN, as :func:`torchvision.ops.roi_pool`.

    The RoI's corners are scaled by ``spatial_scale`` and rounded (half away from zero); the
    RoI spans ``end - start + 1`` cells (at least 1) per axis; bin ``i`` of ``P`` covers cells
    ``[floor(i * len / P), ceil((i + 1) * len / P))`` from the start, clipped to the map:

    .. math::
        y_{k,c,i,j} = \\max_{(u, v) \\in \\text{bin}(i, j)} x_{b_k,c,u,v}
        \\quad (0 \\text{ for an empty bin})

    torchvision's pick: the first value strictly above the running maximum in row-major order,
    starting from ``-FLT_MAX`` (float16: ``-inf``), so NaN is never picked and a bin of values
    at or below ``-FLT_MAX`` gives ``-FLT_MAX``. The gradient adds each bin's gradient at its
    pick (no gradient for ``boxes``).

    Args:
        input (Tensor[N, C, H, W]): float16, float32 or float64.
        boxes (Tensor[K, 5] or list of Tensor[L, 4]): RoIs as in :func:`roi_align`.
        output_size (int or (int, int)): the pooled (height, width).
        spatial_scale (float): box-to-input scale.

    Returns:
        Tensor[K, C, output_size[0], output_size[1]], ``input``'s dtype.

    Raises:
        TypeError, ValueError: as :func:`roi_align`.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import roi_pool
        >>> x = ms.Tensor(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
        >>> roi_pool(x, ms.Tensor([[0.0, 0.0, 0.0, 3.0, 3.0]]), 2).asnumpy().tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    x = check_roi_input("roi_pool", input)
    pooled = pooled_size("roi_pool", output_size)
    scale = check_finite_number(spatial_scale, "spatial_scale")
    rois = rois_of("roi_pool", boxes, x, pooled)
    if rois.shape[0] == 0 or x.shape[1] == 0:  # answered here: no kernel sees an empty tensor
        return ops.zeros((rois.shape[0], x.shape[1], *pooled), x.dtype)
    rois = ops.stop_gradient(check_batch_index("roi_pool", rois, x.shape[0]))
    return call("vision.roi_pool", x, rois, pooled, scale)


class RoIPool(RoICell):
    """RoI max pooling as a Cell, as :class:`torchvision.ops.RoIPool`. See :func:`roi_pool`.

    Args:
        output_size (int or (int, int)): the pooled (height, width).
        spatial_scale (float): box-to-input scale.

    Shape:
        - input: (N, C, H, W); rois: (K, 5) or a list of (L, 4).
        - output: (K, C, output_size[0], output_size[1]).

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import RoIPool
        >>> pool = RoIPool(3, spatial_scale=1.0)
        >>> pool(ms.Tensor(np.ones((2, 4, 6, 6), np.float32)), ms.Tensor([[1.0, 0, 0, 5, 5]])).shape
        (1, 4, 3, 3)
    """

    def __init__(self, output_size: OutputSize, spatial_scale: float) -> None:
        super().__init__(output_size=output_size, spatial_scale=spatial_scale)

    def construct(self, input: Tensor, rois: BoxesArg) -> Tensor:
        return roi_pool(input, rois, self.output_size, self.spatial_scale)
