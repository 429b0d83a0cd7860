"""``torch.nn``'s Cells under their ``torch.nn`` names.

A port changes the import, not the call sites: where the PyTorch file had ``from torch import
nn`` for these layers, ``from mscompat import nn`` gives Cells with the same names, arguments and
results. Everything here is a re-export of the implementation in its domain package
(:mod:`mscompat.shape`...), the same object. ``python tools/generate.py`` writes the list from
the op database (every entry that is a drop-in for a ``torch.nn`` class is here), and
``tests/test_namespaces.py`` checks that every name here is one of ``torch.nn``'s.
:mod:`mscompat.nn.functional` holds the functions.

Example:
    >>> import mindspore as ms, numpy as np
    >>> from mscompat import nn
    >>> pool = nn.AdaptiveMaxPool2d(2, return_indices=True)
    >>> values, indices = pool(ms.Tensor(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)))
    >>> values.asnumpy().tolist()
    [[[[5.0, 7.0], [13.0, 15.0]]]]
    >>> indices.dtype
    mindspore.int64
"""

# BEGIN GENERATED (tools/generate.py)
# the op database's torch_apis, by the rules of mscompat/_namespaces.py
from typing import List

from mscompat.layers.activation import CELU as CELU
from mscompat.layers.activation import ELU as ELU
from mscompat.layers.activation import SELU as SELU
from mscompat.layers.activation import Hardtanh as Hardtanh
from mscompat.layers.activation import LeakyReLU as LeakyReLU
from mscompat.layers.activation import PReLU as PReLU
from mscompat.layers.activation import ReLU as ReLU
from mscompat.layers.activation import ReLU6 as ReLU6
from mscompat.layers.activation import SiLU as SiLU
from mscompat.layers.activation import Threshold as Threshold
from mscompat.layers.activation_smooth import GELU as GELU
from mscompat.layers.activation_smooth import Hardshrink as Hardshrink
from mscompat.layers.activation_smooth import Hardsigmoid as Hardsigmoid
from mscompat.layers.activation_smooth import Hardswish as Hardswish
from mscompat.layers.activation_smooth import LogSigmoid as LogSigmoid
from mscompat.layers.activation_smooth import Mish as Mish
from mscompat.layers.activation_smooth import Sigmoid as Sigmoid
from mscompat.layers.activation_smooth import Softplus as Softplus
from mscompat.layers.activation_smooth import Softshrink as Softshrink
from mscompat.layers.activation_smooth import Softsign as Softsign
from mscompat.layers.activation_smooth import Tanh as Tanh
from mscompat.layers.activation_smooth import Tanhshrink as Tanhshrink
from mscompat.layers.affine_norm import GroupNorm as GroupNorm
from mscompat.layers.affine_norm import LayerNorm as LayerNorm
from mscompat.layers.batch_norms import BatchNorm1d as BatchNorm1d
from mscompat.layers.batch_norms import BatchNorm2d as BatchNorm2d
from mscompat.layers.batch_norms import BatchNorm3d as BatchNorm3d
from mscompat.layers.conv_layers import Conv1d as Conv1d
from mscompat.layers.conv_layers import Conv2d as Conv2d
from mscompat.layers.conv_layers import Conv3d as Conv3d
from mscompat.layers.conv_layers import ConvTranspose1d as ConvTranspose1d
from mscompat.layers.conv_layers import ConvTranspose2d as ConvTranspose2d
from mscompat.layers.conv_layers import ConvTranspose3d as ConvTranspose3d
from mscompat.layers.distance import PairwiseDistance as PairwiseDistance
from mscompat.layers.dropout import AlphaDropout as AlphaDropout
from mscompat.layers.dropout import Dropout as Dropout
from mscompat.layers.dropout import Dropout1d as Dropout1d
from mscompat.layers.dropout import Dropout2d as Dropout2d
from mscompat.layers.dropout import Dropout3d as Dropout3d
from mscompat.layers.dropout import FeatureAlphaDropout as FeatureAlphaDropout
from mscompat.layers.embedding import Embedding as Embedding
from mscompat.layers.embedding import EmbeddingBag as EmbeddingBag
from mscompat.layers.linear import Bilinear as Bilinear
from mscompat.layers.linear import Identity as Identity
from mscompat.layers.linear import Linear as Linear
from mscompat.layers.loss_classification import CrossEntropyLoss as CrossEntropyLoss
from mscompat.layers.loss_classification import NLLLoss as NLLLoss
from mscompat.layers.loss_divergence import GaussianNLLLoss as GaussianNLLLoss
from mscompat.layers.loss_divergence import HuberLoss as HuberLoss
from mscompat.layers.loss_divergence import KLDivLoss as KLDivLoss
from mscompat.layers.loss_divergence import PoissonNLLLoss as PoissonNLLLoss
from mscompat.layers.loss_margin import HingeEmbeddingLoss as HingeEmbeddingLoss
from mscompat.layers.loss_margin import MarginRankingLoss as MarginRankingLoss
from mscompat.layers.loss_margin import MultiLabelMarginLoss as MultiLabelMarginLoss
from mscompat.layers.loss_margin import MultiMarginLoss as MultiMarginLoss
from mscompat.layers.loss_margin import SoftMarginLoss as SoftMarginLoss
from mscompat.layers.loss_regression import BCELoss as BCELoss
from mscompat.layers.loss_regression import BCEWithLogitsLoss as BCEWithLogitsLoss
from mscompat.layers.loss_regression import L1Loss as L1Loss
from mscompat.layers.loss_regression import MSELoss as MSELoss
from mscompat.layers.loss_regression import SmoothL1Loss as SmoothL1Loss
from mscompat.layers.loss_triplet import CosineEmbeddingLoss as CosineEmbeddingLoss
from mscompat.layers.loss_triplet import TripletMarginLoss as TripletMarginLoss
from mscompat.layers.loss_triplet import (
    TripletMarginWithDistanceLoss as TripletMarginWithDistanceLoss,
)
from mscompat.layers.multihead import MultiheadAttention as MultiheadAttention
from mscompat.layers.normalization import InstanceNorm1d as InstanceNorm1d
from mscompat.layers.normalization import InstanceNorm2d as InstanceNorm2d
from mscompat.layers.normalization import InstanceNorm3d as InstanceNorm3d
from mscompat.layers.normalization import LocalResponseNorm as LocalResponseNorm
from mscompat.layers.normalization import RMSNorm as RMSNorm
from mscompat.layers.padding import CircularPad1d as CircularPad1d
from mscompat.layers.padding import CircularPad2d as CircularPad2d
from mscompat.layers.padding import CircularPad3d as CircularPad3d
from mscompat.layers.padding import ConstantPad1d as ConstantPad1d
from mscompat.layers.padding import ConstantPad2d as ConstantPad2d
from mscompat.layers.padding import ConstantPad3d as ConstantPad3d
from mscompat.layers.padding import ReflectionPad1d as ReflectionPad1d
from mscompat.layers.padding import ReflectionPad2d as ReflectionPad2d
from mscompat.layers.padding import ReflectionPad3d as ReflectionPad3d
from mscompat.layers.padding import ReplicationPad1d as ReplicationPad1d
from mscompat.layers.padding import ReplicationPad2d as ReplicationPad2d
from mscompat.layers.padding import ReplicationPad3d as ReplicationPad3d
from mscompat.layers.padding import ZeroPad1d as ZeroPad1d
from mscompat.layers.padding import ZeroPad2d as ZeroPad2d
from mscompat.layers.padding import ZeroPad3d as ZeroPad3d
from mscompat.layers.rrelu import RReLU as RReLU
from mscompat.layers.softmax import GLU as GLU
from mscompat.layers.softmax import LogSoftmax as LogSoftmax
from mscompat.layers.softmax import Softmax as Softmax
from mscompat.layers.softmax import Softmin as Softmin
from mscompat.layers.sync_norm import SyncBatchNorm as SyncBatchNorm

# mscompat.nn.functional is reachable from mscompat.nn as torch.nn.functional is
from mscompat.nn import functional as functional
from mscompat.shape.adaptive_pool import AdaptiveAvgPool1d as AdaptiveAvgPool1d
from mscompat.shape.adaptive_pool import AdaptiveAvgPool2d as AdaptiveAvgPool2d
from mscompat.shape.adaptive_pool import AdaptiveAvgPool3d as AdaptiveAvgPool3d
from mscompat.shape.adaptive_pool import AdaptiveMaxPool1d as AdaptiveMaxPool1d
from mscompat.shape.adaptive_pool import AdaptiveMaxPool2d as AdaptiveMaxPool2d
from mscompat.shape.adaptive_pool import AdaptiveMaxPool3d as AdaptiveMaxPool3d
from mscompat.shape.avg_pool import AvgPool1d as AvgPool1d
from mscompat.shape.avg_pool import AvgPool2d as AvgPool2d
from mscompat.shape.avg_pool import AvgPool3d as AvgPool3d
from mscompat.shape.fold import Fold as Fold
from mscompat.shape.fold import Unfold as Unfold
from mscompat.shape.fractional_pool import FractionalMaxPool2d as FractionalMaxPool2d
from mscompat.shape.fractional_pool import FractionalMaxPool3d as FractionalMaxPool3d
from mscompat.shape.interpolate import Upsample as Upsample
from mscompat.shape.interpolate import UpsamplingBilinear2d as UpsamplingBilinear2d
from mscompat.shape.interpolate import UpsamplingNearest2d as UpsamplingNearest2d
from mscompat.shape.lp_pool import LPPool1d as LPPool1d
from mscompat.shape.lp_pool import LPPool2d as LPPool2d
from mscompat.shape.lp_pool import LPPool3d as LPPool3d
from mscompat.shape.max_pool import MaxPool1d as MaxPool1d
from mscompat.shape.max_pool import MaxPool2d as MaxPool2d
from mscompat.shape.max_pool import MaxPool3d as MaxPool3d
from mscompat.shape.max_unpool import MaxUnpool1d as MaxUnpool1d
from mscompat.shape.max_unpool import MaxUnpool2d as MaxUnpool2d
from mscompat.shape.max_unpool import MaxUnpool3d as MaxUnpool3d
from mscompat.shape.reshape import Flatten as Flatten
from mscompat.shape.reshape import Unflatten as Unflatten
from mscompat.shape.shuffle import ChannelShuffle as ChannelShuffle
from mscompat.shape.shuffle import PixelShuffle as PixelShuffle
from mscompat.shape.shuffle import PixelUnshuffle as PixelUnshuffle

# fmt: off
__all__: List[str] = [
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AlphaDropout", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "Bilinear", "CELU",
    "ChannelShuffle", "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
    "ConstantPad2d", "ConstantPad3d", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "CosineEmbeddingLoss", "CrossEntropyLoss", "Dropout",
    "Dropout1d", "Dropout2d", "Dropout3d", "ELU", "Embedding", "EmbeddingBag",
    "FeatureAlphaDropout", "Flatten", "Fold", "FractionalMaxPool2d", "FractionalMaxPool3d", "GELU",
    "GLU", "GaussianNLLLoss", "GroupNorm", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
    "HingeEmbeddingLoss", "HuberLoss", "Identity", "InstanceNorm1d", "InstanceNorm2d",
    "InstanceNorm3d", "KLDivLoss", "L1Loss", "LPPool1d", "LPPool2d", "LPPool3d", "LayerNorm",
    "LeakyReLU", "Linear", "LocalResponseNorm", "LogSigmoid", "LogSoftmax", "MSELoss",
    "MarginRankingLoss", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d",
    "MaxUnpool3d", "Mish", "MultiLabelMarginLoss", "MultiMarginLoss", "MultiheadAttention",
    "NLLLoss", "PReLU", "PairwiseDistance", "PixelShuffle", "PixelUnshuffle", "PoissonNLLLoss",
    "RMSNorm", "RReLU", "ReLU", "ReLU6", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "SELU", "SiLU", "Sigmoid",
    "SmoothL1Loss", "SoftMarginLoss", "Softmax", "Softmin", "Softplus", "Softshrink", "Softsign",
    "SyncBatchNorm", "Tanh", "Tanhshrink", "Threshold", "TripletMarginLoss",
    "TripletMarginWithDistanceLoss", "Unflatten", "Unfold", "Upsample", "UpsamplingBilinear2d",
    "UpsamplingNearest2d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
]
# fmt: on
# END GENERATED
