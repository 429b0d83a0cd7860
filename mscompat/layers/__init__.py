"""``torch.nn`` layers and ``torch.nn.functional`` functions that MindSpore lacks or computes
differently on CPU: attention, embeddings, normalisations, activations, dropout variants,
transposed convolution and pooling.
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
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
from mscompat.layers.activation import celu as celu
from mscompat.layers.activation import celu_ as celu_
from mscompat.layers.activation import elu as elu
from mscompat.layers.activation import elu_ as elu_
from mscompat.layers.activation import hardtanh as hardtanh
from mscompat.layers.activation import hardtanh_ as hardtanh_
from mscompat.layers.activation import leaky_relu as leaky_relu
from mscompat.layers.activation import leaky_relu_ as leaky_relu_
from mscompat.layers.activation import prelu as prelu
from mscompat.layers.activation import relu as relu
from mscompat.layers.activation import relu6 as relu6
from mscompat.layers.activation import relu_ as relu_
from mscompat.layers.activation import selu as selu
from mscompat.layers.activation import selu_ as selu_
from mscompat.layers.activation import silu as silu
from mscompat.layers.activation import threshold as threshold
from mscompat.layers.activation import threshold_ as threshold_
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
from mscompat.layers.activation_smooth import gelu as gelu
from mscompat.layers.activation_smooth import hardshrink as hardshrink
from mscompat.layers.activation_smooth import hardsigmoid as hardsigmoid
from mscompat.layers.activation_smooth import hardswish as hardswish
from mscompat.layers.activation_smooth import logsigmoid as logsigmoid
from mscompat.layers.activation_smooth import mish as mish
from mscompat.layers.activation_smooth import sigmoid as sigmoid
from mscompat.layers.activation_smooth import softplus as softplus
from mscompat.layers.activation_smooth import softshrink as softshrink
from mscompat.layers.activation_smooth import softsign as softsign
from mscompat.layers.activation_smooth import tanh as tanh
from mscompat.layers.activation_smooth import tanhshrink as tanhshrink
from mscompat.layers.affine_norm import GroupNorm as GroupNorm
from mscompat.layers.affine_norm import LayerNorm as LayerNorm
from mscompat.layers.affine_norm import group_norm as group_norm
from mscompat.layers.affine_norm import layer_norm as layer_norm
from mscompat.layers.affine_norm import normalize as normalize
from mscompat.layers.attention import scaled_dot_product_attention as scaled_dot_product_attention
from mscompat.layers.batch_norms import BatchNorm1d as BatchNorm1d
from mscompat.layers.batch_norms import BatchNorm2d as BatchNorm2d
from mscompat.layers.batch_norms import BatchNorm3d as BatchNorm3d
from mscompat.layers.batch_norms import batch_norm as batch_norm
from mscompat.layers.conv import conv1d as conv1d
from mscompat.layers.conv import conv2d as conv2d
from mscompat.layers.conv import conv3d as conv3d
from mscompat.layers.conv import conv_transpose1d as conv_transpose1d
from mscompat.layers.conv import conv_transpose2d as conv_transpose2d
from mscompat.layers.conv import conv_transpose3d as conv_transpose3d
from mscompat.layers.conv_layers import Conv1d as Conv1d
from mscompat.layers.conv_layers import Conv2d as Conv2d
from mscompat.layers.conv_layers import Conv3d as Conv3d
from mscompat.layers.conv_layers import ConvTranspose1d as ConvTranspose1d
from mscompat.layers.conv_layers import ConvTranspose2d as ConvTranspose2d
from mscompat.layers.conv_layers import ConvTranspose3d as ConvTranspose3d
from mscompat.layers.distance import PairwiseDistance as PairwiseDistance
from mscompat.layers.distance import pairwise_distance as pairwise_distance
from mscompat.layers.dropout import AlphaDropout as AlphaDropout
from mscompat.layers.dropout import Dropout as Dropout
from mscompat.layers.dropout import Dropout1d as Dropout1d
from mscompat.layers.dropout import Dropout2d as Dropout2d
from mscompat.layers.dropout import Dropout3d as Dropout3d
from mscompat.layers.dropout import FeatureAlphaDropout as FeatureAlphaDropout
from mscompat.layers.dropout import alpha_dropout as alpha_dropout
from mscompat.layers.dropout import dropout as dropout
from mscompat.layers.dropout import dropout1d as dropout1d
from mscompat.layers.dropout import dropout2d as dropout2d
from mscompat.layers.dropout import dropout3d as dropout3d
from mscompat.layers.dropout import feature_alpha_dropout as feature_alpha_dropout
from mscompat.layers.embedding import Embedding as Embedding
from mscompat.layers.embedding import EmbeddingBag as EmbeddingBag
from mscompat.layers.embedding import embedding as embedding
from mscompat.layers.embedding import embedding_bag as embedding_bag
from mscompat.layers.linear import Bilinear as Bilinear
from mscompat.layers.linear import Identity as Identity
from mscompat.layers.linear import Linear as Linear
from mscompat.layers.linear import bilinear as bilinear
from mscompat.layers.linear import linear as linear
from mscompat.layers.loss_classification import CrossEntropyLoss as CrossEntropyLoss
from mscompat.layers.loss_classification import NLLLoss as NLLLoss
from mscompat.layers.loss_classification import cross_entropy as cross_entropy
from mscompat.layers.loss_classification import nll_loss as nll_loss
from mscompat.layers.loss_divergence import GaussianNLLLoss as GaussianNLLLoss
from mscompat.layers.loss_divergence import HuberLoss as HuberLoss
from mscompat.layers.loss_divergence import KLDivLoss as KLDivLoss
from mscompat.layers.loss_divergence import PoissonNLLLoss as PoissonNLLLoss
from mscompat.layers.loss_divergence import gaussian_nll_loss as gaussian_nll_loss
from mscompat.layers.loss_divergence import huber_loss as huber_loss
from mscompat.layers.loss_divergence import kl_div as kl_div
from mscompat.layers.loss_divergence import poisson_nll_loss as poisson_nll_loss
from mscompat.layers.loss_margin import HingeEmbeddingLoss as HingeEmbeddingLoss
from mscompat.layers.loss_margin import MarginRankingLoss as MarginRankingLoss
from mscompat.layers.loss_margin import MultiLabelMarginLoss as MultiLabelMarginLoss
from mscompat.layers.loss_margin import MultiMarginLoss as MultiMarginLoss
from mscompat.layers.loss_margin import SoftMarginLoss as SoftMarginLoss
from mscompat.layers.loss_margin import hinge_embedding_loss as hinge_embedding_loss
from mscompat.layers.loss_margin import margin_ranking_loss as margin_ranking_loss
from mscompat.layers.loss_margin import multi_margin_loss as multi_margin_loss
from mscompat.layers.loss_margin import multilabel_margin_loss as multilabel_margin_loss
from mscompat.layers.loss_margin import soft_margin_loss as soft_margin_loss
from mscompat.layers.loss_regression import BCELoss as BCELoss
from mscompat.layers.loss_regression import BCEWithLogitsLoss as BCEWithLogitsLoss
from mscompat.layers.loss_regression import L1Loss as L1Loss
from mscompat.layers.loss_regression import MSELoss as MSELoss
from mscompat.layers.loss_regression import SmoothL1Loss as SmoothL1Loss
from mscompat.layers.loss_regression import binary_cross_entropy as binary_cross_entropy
from mscompat.layers.loss_regression import (
    binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
)
from mscompat.layers.loss_regression import l1_loss as l1_loss
from mscompat.layers.loss_regression import mse_loss as mse_loss
from mscompat.layers.loss_regression import smooth_l1_loss as smooth_l1_loss
from mscompat.layers.loss_triplet import CosineEmbeddingLoss as CosineEmbeddingLoss
from mscompat.layers.loss_triplet import TripletMarginLoss as TripletMarginLoss
from mscompat.layers.loss_triplet import (
    TripletMarginWithDistanceLoss as TripletMarginWithDistanceLoss,
)
from mscompat.layers.loss_triplet import cosine_embedding_loss as cosine_embedding_loss
from mscompat.layers.loss_triplet import triplet_margin_loss as triplet_margin_loss
from mscompat.layers.loss_triplet import (
    triplet_margin_with_distance_loss as triplet_margin_with_distance_loss,
)
from mscompat.layers.multihead import MultiheadAttention as MultiheadAttention
from mscompat.layers.multihead import multi_head_attention_forward as multi_head_attention_forward
from mscompat.layers.normalization import InstanceNorm1d as InstanceNorm1d
from mscompat.layers.normalization import InstanceNorm2d as InstanceNorm2d
from mscompat.layers.normalization import InstanceNorm3d as InstanceNorm3d
from mscompat.layers.normalization import LocalResponseNorm as LocalResponseNorm
from mscompat.layers.normalization import RMSNorm as RMSNorm
from mscompat.layers.normalization import instance_norm as instance_norm
from mscompat.layers.normalization import local_response_norm as local_response_norm
from mscompat.layers.normalization import rms_norm as rms_norm
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
from mscompat.layers.padding import pad as pad
from mscompat.layers.rrelu import RReLU as RReLU
from mscompat.layers.rrelu import rrelu as rrelu
from mscompat.layers.rrelu import rrelu_ as rrelu_
from mscompat.layers.softmax import GLU as GLU
from mscompat.layers.softmax import LogSoftmax as LogSoftmax
from mscompat.layers.softmax import Softmax as Softmax
from mscompat.layers.softmax import Softmin as Softmin
from mscompat.layers.softmax import glu as glu
from mscompat.layers.softmax import log_softmax as log_softmax
from mscompat.layers.softmax import softmax as softmax
from mscompat.layers.softmax import softmin as softmin
from mscompat.layers.sync_norm import SyncBatchNorm as SyncBatchNorm
from mscompat.layers.sync_norm import sync_batch_norm as sync_batch_norm

# fmt: off
__all__: List[str] = [
    "AlphaDropout", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
    "Bilinear", "CELU", "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d",
    "ConstantPad2d", "ConstantPad3d", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
    "ConvTranspose2d", "ConvTranspose3d", "CosineEmbeddingLoss", "CrossEntropyLoss", "Dropout",
    "Dropout1d", "Dropout2d", "Dropout3d", "ELU", "Embedding", "EmbeddingBag",
    "FeatureAlphaDropout", "GELU", "GLU", "GaussianNLLLoss", "GroupNorm", "Hardshrink",
    "Hardsigmoid", "Hardswish", "Hardtanh", "HingeEmbeddingLoss", "HuberLoss", "Identity",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "KLDivLoss", "L1Loss", "LayerNorm",
    "LeakyReLU", "Linear", "LocalResponseNorm", "LogSigmoid", "LogSoftmax", "MSELoss",
    "MarginRankingLoss", "Mish", "MultiLabelMarginLoss", "MultiMarginLoss", "MultiheadAttention",
    "NLLLoss", "PReLU", "PairwiseDistance", "PoissonNLLLoss", "RMSNorm", "RReLU", "ReLU", "ReLU6",
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
    "ReplicationPad3d", "SELU", "SiLU", "Sigmoid", "SmoothL1Loss", "SoftMarginLoss", "Softmax",
    "Softmin", "Softplus", "Softshrink", "Softsign", "SyncBatchNorm", "Tanh", "Tanhshrink",
    "Threshold", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d", "alpha_dropout", "batch_norm", "bilinear", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "celu", "celu_", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cosine_embedding_loss",
    "cross_entropy", "dropout", "dropout1d", "dropout2d", "dropout3d", "elu", "elu_", "embedding",
    "embedding_bag", "feature_alpha_dropout", "gaussian_nll_loss", "gelu", "glu", "group_norm",
    "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "hinge_embedding_loss",
    "huber_loss", "instance_norm", "kl_div", "l1_loss", "layer_norm", "leaky_relu", "leaky_relu_",
    "linear", "local_response_norm", "log_softmax", "logsigmoid", "margin_ranking_loss", "mish",
    "mse_loss", "multi_head_attention_forward", "multi_margin_loss", "multilabel_margin_loss",
    "nll_loss", "normalize", "pad", "pairwise_distance", "poisson_nll_loss", "prelu", "relu",
    "relu6", "relu_", "rms_norm", "rrelu", "rrelu_", "scaled_dot_product_attention", "selu",
    "selu_", "sigmoid", "silu", "smooth_l1_loss", "soft_margin_loss", "softmax", "softmin",
    "softplus", "softshrink", "softsign", "sync_batch_norm", "tanh", "tanhshrink", "threshold",
    "threshold_", "triplet_margin_loss", "triplet_margin_with_distance_loss",
]
# fmt: on
# END GENERATED
