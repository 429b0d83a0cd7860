"""Shape and layout ops with PyTorch semantics (the migration guide's equivalent replacements)."""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.shape.adaptive_pool import AdaptiveAvgPool1d as AdaptiveAvgPool1d
from mscompat.shape.adaptive_pool import AdaptiveAvgPool2d as AdaptiveAvgPool2d
from mscompat.shape.adaptive_pool import AdaptiveAvgPool3d as AdaptiveAvgPool3d
from mscompat.shape.adaptive_pool import AdaptiveMaxPool1d as AdaptiveMaxPool1d
from mscompat.shape.adaptive_pool import AdaptiveMaxPool2d as AdaptiveMaxPool2d
from mscompat.shape.adaptive_pool import AdaptiveMaxPool3d as AdaptiveMaxPool3d
from mscompat.shape.adaptive_pool import adaptive_avg_pool1d as adaptive_avg_pool1d
from mscompat.shape.adaptive_pool import adaptive_avg_pool2d as adaptive_avg_pool2d
from mscompat.shape.adaptive_pool import adaptive_avg_pool3d as adaptive_avg_pool3d
from mscompat.shape.adaptive_pool import adaptive_max_pool1d as adaptive_max_pool1d
from mscompat.shape.adaptive_pool import adaptive_max_pool2d as adaptive_max_pool2d
from mscompat.shape.adaptive_pool import adaptive_max_pool3d as adaptive_max_pool3d
from mscompat.shape.avg_pool import AvgPool1d as AvgPool1d
from mscompat.shape.avg_pool import AvgPool2d as AvgPool2d
from mscompat.shape.avg_pool import AvgPool3d as AvgPool3d
from mscompat.shape.avg_pool import avg_pool1d as avg_pool1d
from mscompat.shape.avg_pool import avg_pool2d as avg_pool2d
from mscompat.shape.avg_pool import avg_pool3d as avg_pool3d
from mscompat.shape.creation import arange as arange
from mscompat.shape.creation import clone as clone
from mscompat.shape.creation import full_like as full_like
from mscompat.shape.creation import linspace as linspace
from mscompat.shape.creation import ones_like as ones_like
from mscompat.shape.creation import zeros_like as zeros_like
from mscompat.shape.cumulative import cummax as cummax
from mscompat.shape.cumulative import cummin as cummin
from mscompat.shape.fold import Fold as Fold
from mscompat.shape.fold import Unfold as Unfold
from mscompat.shape.fold import fold as fold
from mscompat.shape.fold import unfold as unfold
from mscompat.shape.fractional_pool import FractionalMaxPool2d as FractionalMaxPool2d
from mscompat.shape.fractional_pool import FractionalMaxPool3d as FractionalMaxPool3d
from mscompat.shape.fractional_pool import fractional_max_pool2d as fractional_max_pool2d
from mscompat.shape.fractional_pool import fractional_max_pool3d as fractional_max_pool3d
from mscompat.shape.grid_sample import grid_sample as grid_sample
from mscompat.shape.interpolate import Upsample as Upsample
from mscompat.shape.interpolate import UpsamplingBilinear2d as UpsamplingBilinear2d
from mscompat.shape.interpolate import UpsamplingNearest2d as UpsamplingNearest2d
from mscompat.shape.interpolate import interpolate as interpolate
from mscompat.shape.interpolate import upsample as upsample
from mscompat.shape.interpolate import upsample_bilinear as upsample_bilinear
from mscompat.shape.interpolate import upsample_nearest as upsample_nearest
from mscompat.shape.join import stack as stack
from mscompat.shape.lp_pool import LPPool1d as LPPool1d
from mscompat.shape.lp_pool import LPPool2d as LPPool2d
from mscompat.shape.lp_pool import LPPool3d as LPPool3d
from mscompat.shape.lp_pool import lp_pool1d as lp_pool1d
from mscompat.shape.lp_pool import lp_pool2d as lp_pool2d
from mscompat.shape.lp_pool import lp_pool3d as lp_pool3d
from mscompat.shape.max_pool import MaxPool1d as MaxPool1d
from mscompat.shape.max_pool import MaxPool2d as MaxPool2d
from mscompat.shape.max_pool import MaxPool3d as MaxPool3d
from mscompat.shape.max_pool import max_pool1d as max_pool1d
from mscompat.shape.max_pool import max_pool2d as max_pool2d
from mscompat.shape.max_pool import max_pool3d as max_pool3d
from mscompat.shape.max_unpool import MaxUnpool1d as MaxUnpool1d
from mscompat.shape.max_unpool import MaxUnpool2d as MaxUnpool2d
from mscompat.shape.max_unpool import MaxUnpool3d as MaxUnpool3d
from mscompat.shape.max_unpool import max_unpool1d as max_unpool1d
from mscompat.shape.max_unpool import max_unpool2d as max_unpool2d
from mscompat.shape.max_unpool import max_unpool3d as max_unpool3d
from mscompat.shape.repeat import repeat_interleave as repeat_interleave
from mscompat.shape.repeat import unfold_dim as unfold_dim
from mscompat.shape.reshape import Flatten as Flatten
from mscompat.shape.reshape import Unflatten as Unflatten
from mscompat.shape.reshape import flatten as flatten
from mscompat.shape.reshape import squeeze as squeeze
from mscompat.shape.reshape import unflatten as unflatten
from mscompat.shape.reshape import unsqueeze as unsqueeze
from mscompat.shape.roll import roll as roll
from mscompat.shape.shuffle import ChannelShuffle as ChannelShuffle
from mscompat.shape.shuffle import PixelShuffle as PixelShuffle
from mscompat.shape.shuffle import PixelUnshuffle as PixelUnshuffle
from mscompat.shape.shuffle import channel_shuffle as channel_shuffle
from mscompat.shape.shuffle import pixel_shuffle as pixel_shuffle
from mscompat.shape.shuffle import pixel_unshuffle as pixel_unshuffle
from mscompat.shape.sort import argsort as argsort
from mscompat.shape.sort import kthvalue as kthvalue
from mscompat.shape.sort import median as median
from mscompat.shape.sort import mode as mode
from mscompat.shape.sort import msort as msort
from mscompat.shape.sort import sort as sort
from mscompat.shape.sort import topk as topk
from mscompat.shape.triangular import tril as tril
from mscompat.shape.triangular import triu as triu

# fmt: off
__all__: List[str] = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "ChannelShuffle", "Flatten", "Fold", "FractionalMaxPool2d", "FractionalMaxPool3d", "LPPool1d",
    "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d", "PixelShuffle", "PixelUnshuffle", "Unflatten", "Unfold", "Upsample",
    "UpsamplingBilinear2d", "UpsamplingNearest2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "adaptive_avg_pool3d", "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
    "arange", "argsort", "avg_pool1d", "avg_pool2d", "avg_pool3d", "channel_shuffle", "clone",
    "cummax", "cummin", "flatten", "fold", "fractional_max_pool2d", "fractional_max_pool3d",
    "full_like", "grid_sample", "interpolate", "kthvalue", "linspace", "lp_pool1d", "lp_pool2d",
    "lp_pool3d", "max_pool1d", "max_pool2d", "max_pool3d", "max_unpool1d", "max_unpool2d",
    "max_unpool3d", "median", "mode", "msort", "ones_like", "pixel_shuffle", "pixel_unshuffle",
    "repeat_interleave", "roll", "sort", "squeeze", "stack", "topk", "tril", "triu", "unflatten",
    "unfold", "unfold_dim", "unsqueeze", "upsample", "upsample_bilinear", "upsample_nearest",
    "zeros_like",
]
# fmt: on
# END GENERATED
