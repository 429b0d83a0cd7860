"""Multi-scale RoI Align over a feature pyramid, as ``torchvision.ops.MultiScaleRoIAlign``.

Each RoI is pooled from one level, chosen by the FPN paper's eq. 1 (torchvision's
``LevelMapper``): ``floor(canonical_level + log2(sqrt(area) / canonical_scale) + 1e-6)``,
clamped to the pyramid's levels. The scale of each level is inferred from its feature size and
the largest image size (a power of two).

Under a static graph the RoIs cannot be split by level (torchvision's ``torch.where``), so every
level's :func:`~mscompat.vision.roi_align` runs over all RoIs with the RoIs of the other
levels marked (batch index -1: the kernel skips them, zeros and no gradient), and each RoI's
row is taken from its own level: the work of one pass over the RoIs per level.
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

from mscompat._checks import check_int
from mscompat.custom_ops.registry import call
from mscompat.vision._roi_common import check_roi_input, pooled_size, rois_of
from mscompat.vision.roi_align import roi_align

__all__ = ["MultiScaleRoIAlign"]


def _infer_scale(size: Sequence[int], original: Tuple[int, int]) -> float:
    """torchvision's ``_infer_scale``: 2 ** round(log2(feature height / image height)) (float32
    log2, ties to even)."""
    approx = float(size[0]) / float(original[0])
    return float(2 ** float(np.round(np.log2(np.float32(approx)))))


def _setup_scales(
    features: Sequence[Tensor], image_shapes: Sequence[Sequence[int]]
) -> Tuple[List[float], int, int]:
    """The scale of each level and the pyramid's (k_min, k_max), as torchvision's."""
    if not image_shapes:
        raise ValueError("MultiScaleRoIAlign: image_shapes should not be empty")
    max_h = max(int(s[0]) for s in image_shapes)
    max_w = max(int(s[1]) for s in image_shapes)
    scales = [_infer_scale(f.shape[-2:], (max_h, max_w)) for f in features]
    k_min = int(-np.log2(np.float32(scales[0])))
    k_max = int(-np.log2(np.float32(scales[-1])))
    return scales, k_min, k_max


def _levels(
    boxes: Sequence[Tensor], k_min: int, k_max: int, canonical_scale: int, canonical_level: int
) -> Tensor:
    """torchvision's ``LevelMapper``: the level of each box (int32, 0 = k_min)."""
    parts = [b for b in boxes if b.shape[0] > 0]
    cat = parts[0] if len(parts) == 1 else ops.concat(tuple(parts), 0)
    if cat.dtype == ms.float16:  # box_area upcasts float16 to float32
        cat = cat.astype(ms.float32)
    area = (cat[:, 2] - cat[:, 0]) * (cat[:, 3] - cat[:, 1])
    s = ops.sqrt(area)
    eps = ops.cast(Tensor(1e-6, ms.float64), s.dtype)
    target = ops.floor(canonical_level + ops.log2(s / canonical_scale) + eps)
    target = ops.clip(target, float(k_min), float(k_max))
    return target.astype(ms.int32) - k_min


def _multiscale_roi_align(
    features: Sequence[Tensor],
    boxes: Sequence[Tensor],
    image_shapes: Sequence[Sequence[int]],
    output_size: Tuple[int, int],
    sampling_ratio: int,
    canonical_scale: int,
    canonical_level: int,
) -> Tensor:
    if not features:
        raise ValueError("MultiScaleRoIAlign: none of featmap_names is a key of x")
    first = features[0]
    for f in features:
        check_roi_input("MultiScaleRoIAlign", f)
        if f.dtype != first.dtype or f.shape[:2] != first.shape[:2]:
            raise ValueError(
                "MultiScaleRoIAlign: the feature maps must share dtype, batch and channels, "
                f"but got {first.dtype} {tuple(first.shape)} and {f.dtype} {tuple(f.shape)}"
            )
    if isinstance(boxes, Tensor) or not isinstance(boxes, (list, tuple)):
        raise TypeError("MultiScaleRoIAlign: boxes must be a list of Tensor[L, 4], one per image")
    if len(boxes) > first.shape[0]:
        raise ValueError(
            f"MultiScaleRoIAlign: boxes has {len(boxes)} images, the features {first.shape[0]}"
        )
    rois = rois_of("MultiScaleRoIAlign", boxes, first, output_size)
    scales, k_min, k_max = _setup_scales(features, image_shapes)
    k = rois.shape[0]
    shape = (k, first.shape[1], *output_size)
    if k == 0 or first.shape[1] == 0:
        return ops.zeros(shape, first.dtype)
    rois = ops.stop_gradient(rois)
    if len(features) == 1:
        return roi_align(first, rois, output_size, scales[0], sampling_ratio)
    levels = ops.stop_gradient(_levels(boxes, k_min, k_max, canonical_scale, canonical_level))
    result = ops.zeros(shape, first.dtype)
    unused = ops.full_like(rois[:, :1], -1)
    for level, (feature, scale) in enumerate(zip(features, scales)):
        here = (levels == level).reshape(k, 1)
        marked = ops.concat((ops.where(here, rois[:, :1], unused), rois[:, 1:]), 1)
        out = call("vision.roi_align", feature, marked, output_size, scale, sampling_ratio, False)
        result = ops.where(here.reshape(k, 1, 1, 1), out, result)
    return result


class MultiScaleRoIAlign(nn.Cell):
    """Multi-scale RoI Align (FPN), as :class:`torchvision.ops.MultiScaleRoIAlign`.
    See :func:`roi_align`.

    Pools each box from the pyramid level of the FPN paper's eq. 1 with
    :func:`~mscompat.vision.roi_align` (``aligned=False``):

    .. math::
        k = \\left\\lfloor k_0 + \\log_2\\left(\\sqrt{wh} / s_0\\right) + 10^{-6}
        \\right\\rfloor, \\quad \\text{clamped to } [k_{min}, k_{max}]

    with ``s_0 = canonical_scale``, ``k_0 = canonical_level``; the scale of each level is
    ``2 ** round(log2(feature height / largest image height))``.

    .. note::
        torchvision infers the scales on its first call and keeps them; this Cell infers them
        on every call (from shapes only), which gives the same scales unless a later batch has
        image sizes that change the rounded ratio. A box exactly at a level boundary may be
        mapped differently if MindSpore's ``log2`` and PyTorch's differ in the last bit.

    Args:
        featmap_names (list of str): the keys of the feature maps to pool from, in pyramid
            order (finest first).
        output_size (int or (int, int)): the pooled (height, width).
        sampling_ratio (int): samples per bin per axis; ``<= 0``: adaptive.
        canonical_scale (int): ``s_0`` (224).
        canonical_level (int): ``k_0`` (4).

    Shape:
        - x: dict name -> (N, C, H_l, W_l); boxes: list of N (L_i, 4) in image coordinates;
          image_shapes: list of (height, width) of the images before the backbone.
        - output: (sum L_i, C, output_size[0], output_size[1]).

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import MultiScaleRoIAlign
        >>> m = MultiScaleRoIAlign(["feat1", "feat3"], 3, 2)
        >>> rng = np.random.default_rng(0)
        >>> feats = {k: ms.Tensor(rng.random((1, 5, s, s), dtype=np.float32))
        ...          for k, s in (("feat1", 64), ("feat2", 32), ("feat3", 16))}
        >>> xy = rng.random((6, 2), dtype=np.float32) * 256
        >>> boxes = ms.Tensor(np.concatenate([xy, xy + 64], 1))
        >>> m(feats, [boxes], [(512, 512)]).shape
        (6, 5, 3, 3)
    """

    def __init__(
        self,
        featmap_names: List[str],
        output_size: Union[int, Tuple[int, int], List[int]],
        sampling_ratio: int,
        *,
        canonical_scale: int = 224,
        canonical_level: int = 4,
    ) -> None:
        super().__init__()
        if isinstance(featmap_names, str) or not all(isinstance(n, str) for n in featmap_names):
            raise TypeError(
                f"MultiScaleRoIAlign: featmap_names must be a list of str, got {featmap_names!r}"
            )
        self.featmap_names = list(featmap_names)
        self.output_size = pooled_size("MultiScaleRoIAlign", output_size)
        self.sampling_ratio = check_int(sampling_ratio, "sampling_ratio")
        self.canonical_scale = check_int(canonical_scale, "canonical_scale")
        self.canonical_level = check_int(canonical_level, "canonical_level")
        if self.canonical_scale <= 0:
            raise ValueError(f"canonical_scale must be positive, but got {canonical_scale}")

    def construct(
        self, x: Dict[str, Tensor], boxes: List[Tensor], image_shapes: List[Tuple[int, int]]
    ) -> Tensor:
        features = [v for k, v in x.items() if k in self.featmap_names]
        return _multiscale_roi_align(
            features,
            boxes,
            image_shapes,
            self.output_size,
            self.sampling_ratio,
            self.canonical_scale,
            self.canonical_level,
        )

    def __repr__(self) -> str:
        return (
            f"{self.__class__.__name__}(featmap_names={self.featmap_names}, "
            f"output_size={self.output_size}, sampling_ratio={self.sampling_ratio})"
        )
