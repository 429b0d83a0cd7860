"""Shape and layout ops with PyTorch semantics (the migration guide's equivalent replacements)."""

from typing import List

from mscompat.shape.adaptive_pool import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveAvgPool3d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    AdaptiveMaxPool3d,
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
)
from mscompat.shape.fold import Fold, Unfold, fold, unfold
from mscompat.shape.grid_sample import grid_sample
from mscompat.shape.interpolate import (
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
    interpolate,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from mscompat.shape.max_pool import (
    MaxPool1d,
    MaxPool2d,
    MaxPool3d,
    max_pool1d,
    max_pool2d,
    max_pool3d,
)
from mscompat.shape.max_unpool import (
    MaxUnpool1d,
    MaxUnpool2d,
    MaxUnpool3d,
    max_unpool1d,
    max_unpool2d,
    max_unpool3d,
)
from mscompat.shape.reshape import Flatten, Unflatten, flatten, squeeze, unflatten, unsqueeze
from mscompat.shape.sort import argsort, kthvalue, median, mode, msort, sort, topk

__all__: List[str] = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "Flatten",
    "Fold",
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "Unflatten",
    "Unfold",
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "argsort",
    "flatten",
    "fold",
    "grid_sample",
    "interpolate",
    "kthvalue",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "median",
    "mode",
    "msort",
    "sort",
    "squeeze",
    "topk",
    "unflatten",
    "unfold",
    "unsqueeze",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]
