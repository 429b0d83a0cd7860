"""``torch.nn.functional``'s functions under their ``torch.nn.functional`` names.

A port changes the import, not the call sites: ``import torch.nn.functional as F`` becomes
``import mscompat.nn.functional as F`` and ``F.interpolate(...)``, ``F.grid_sample(...)``,
``F.adaptive_max_pool2d(...)``, ``F.unfold(...)`` keep their arguments and PyTorch's results.
Everything here is a re-export of the implementation in its domain package
(:mod:`mscompat.shape`...), the same object. ``python tools/generate.py`` writes the list from
the op database (every entry that is a drop-in for a ``torch.nn.functional`` function is here),
and ``tests/test_namespaces.py`` checks that every name here is one of
``torch.nn.functional``'s. PyTorch's
``max_pool*d_with_indices`` are not here: they always return the indices, so the drop-in is
``max_pool*d(..., return_indices=True)``.

Example:
    >>> import mindspore as ms
    >>> import mscompat.nn.functional as F
    >>> x = ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
    >>> F.interpolate(x, scale_factor=2, mode="bilinear")[0, 0, 0].asnumpy().tolist()
    [1.0, 1.25, 1.75, 2.0]
    >>> F.unfold(x, kernel_size=2).shape
    (1, 4, 1)
"""

# BEGIN GENERATED (tools/generate.py)
# the op database's torch_apis, by the rules of mscompat/_namespaces.py
from typing import List

from mscompat.indexing.gather import one_hot as one_hot
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
from mscompat.layers.affine_norm import group_norm as group_norm
from mscompat.layers.affine_norm import layer_norm as layer_norm
from mscompat.layers.affine_norm import normalize as normalize
from mscompat.layers.attention import scaled_dot_product_attention as scaled_dot_product_attention
from mscompat.layers.batch_norms import batch_norm as batch_norm
from mscompat.layers.conv import conv1d as conv1d
from mscompat.layers.conv import conv2d as conv2d
from mscompat.layers.conv import conv3d as conv3d
from mscompat.layers.conv import conv_transpose1d as conv_transpose1d
from mscompat.layers.conv import conv_transpose2d as conv_transpose2d
from mscompat.layers.conv import conv_transpose3d as conv_transpose3d
from mscompat.layers.distance import pairwise_distance as pairwise_distance
from mscompat.layers.dropout import alpha_dropout as alpha_dropout
from mscompat.layers.dropout import dropout as dropout
from mscompat.layers.dropout import dropout1d as dropout1d
from mscompat.layers.dropout import dropout2d as dropout2d
from mscompat.layers.dropout import dropout3d as dropout3d
from mscompat.layers.dropout import feature_alpha_dropout as feature_alpha_dropout
from mscompat.layers.embedding import embedding as embedding
from mscompat.layers.embedding import embedding_bag as embedding_bag
from mscompat.layers.linear import bilinear as bilinear
from mscompat.layers.linear import linear as linear
from mscompat.layers.loss_classification import cross_entropy as cross_entropy
from mscompat.layers.loss_classification import nll_loss as nll_loss
from mscompat.layers.loss_divergence import gaussian_nll_loss as gaussian_nll_loss
from mscompat.layers.loss_divergence import huber_loss as huber_loss
from mscompat.layers.loss_divergence import kl_div as kl_div
from mscompat.layers.loss_divergence import poisson_nll_loss as poisson_nll_loss
from mscompat.layers.loss_margin import hinge_embedding_loss as hinge_embedding_loss
from mscompat.layers.loss_margin import margin_ranking_loss as margin_ranking_loss
from mscompat.layers.loss_margin import multi_margin_loss as multi_margin_loss
from mscompat.layers.loss_margin import multilabel_margin_loss as multilabel_margin_loss
from mscompat.layers.loss_margin import soft_margin_loss as soft_margin_loss
from mscompat.layers.loss_regression import binary_cross_entropy as binary_cross_entropy
from mscompat.layers.loss_regression import (
    binary_cross_entropy_with_logits as binary_cross_entropy_with_logits,
)
from mscompat.layers.loss_regression import l1_loss as l1_loss
from mscompat.layers.loss_regression import mse_loss as mse_loss
from mscompat.layers.loss_regression import smooth_l1_loss as smooth_l1_loss
from mscompat.layers.loss_triplet import cosine_embedding_loss as cosine_embedding_loss
from mscompat.layers.loss_triplet import triplet_margin_loss as triplet_margin_loss
from mscompat.layers.loss_triplet import (
    triplet_margin_with_distance_loss as triplet_margin_with_distance_loss,
)
from mscompat.layers.multihead import multi_head_attention_forward as multi_head_attention_forward
from mscompat.layers.normalization import instance_norm as instance_norm
from mscompat.layers.normalization import local_response_norm as local_response_norm
from mscompat.layers.normalization import rms_norm as rms_norm
from mscompat.layers.padding import pad as pad
from mscompat.layers.rrelu import rrelu as rrelu
from mscompat.layers.rrelu import rrelu_ as rrelu_
from mscompat.layers.softmax import glu as glu
from mscompat.layers.softmax import log_softmax as log_softmax
from mscompat.layers.softmax import softmax as softmax
from mscompat.layers.softmax import softmin as softmin
from mscompat.shape.adaptive_pool import adaptive_avg_pool1d as adaptive_avg_pool1d
from mscompat.shape.adaptive_pool import adaptive_avg_pool2d as adaptive_avg_pool2d
from mscompat.shape.adaptive_pool import adaptive_avg_pool3d as adaptive_avg_pool3d
from mscompat.shape.adaptive_pool import adaptive_max_pool1d as adaptive_max_pool1d
from mscompat.shape.adaptive_pool import adaptive_max_pool2d as adaptive_max_pool2d
from mscompat.shape.adaptive_pool import adaptive_max_pool3d as adaptive_max_pool3d
from mscompat.shape.avg_pool import avg_pool1d as avg_pool1d
from mscompat.shape.avg_pool import avg_pool2d as avg_pool2d
from mscompat.shape.avg_pool import avg_pool3d as avg_pool3d
from mscompat.shape.fold import fold as fold
from mscompat.shape.fold import unfold as unfold
from mscompat.shape.fractional_pool import fractional_max_pool2d as fractional_max_pool2d
from mscompat.shape.fractional_pool import fractional_max_pool3d as fractional_max_pool3d
from mscompat.shape.grid_sample import grid_sample as grid_sample
from mscompat.shape.interpolate import interpolate as interpolate
from mscompat.shape.interpolate import upsample as upsample
from mscompat.shape.interpolate import upsample_bilinear as upsample_bilinear
from mscompat.shape.interpolate import upsample_nearest as upsample_nearest
from mscompat.shape.lp_pool import lp_pool1d as lp_pool1d
from mscompat.shape.lp_pool import lp_pool2d as lp_pool2d
from mscompat.shape.lp_pool import lp_pool3d as lp_pool3d
from mscompat.shape.max_pool import max_pool1d as max_pool1d
from mscompat.shape.max_pool import max_pool2d as max_pool2d
from mscompat.shape.max_pool import max_pool3d as max_pool3d
from mscompat.shape.max_unpool import max_unpool1d as max_unpool1d
from mscompat.shape.max_unpool import max_unpool2d as max_unpool2d
from mscompat.shape.max_unpool import max_unpool3d as max_unpool3d
from mscompat.shape.shuffle import channel_shuffle as channel_shuffle
from mscompat.shape.shuffle import pixel_shuffle as pixel_shuffle
from mscompat.shape.shuffle import pixel_unshuffle as pixel_unshuffle

# fmt: off
__all__: List[str] = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool2d", "adaptive_max_pool3d", "alpha_dropout", "avg_pool1d", "avg_pool2d",
    "avg_pool3d", "batch_norm", "bilinear", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "celu", "celu_", "channel_shuffle", "conv1d", "conv2d",
    "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "cosine_embedding_loss",
    "cross_entropy", "dropout", "dropout1d", "dropout2d", "dropout3d", "elu", "elu_", "embedding",
    "embedding_bag", "feature_alpha_dropout", "fold", "fractional_max_pool2d",
    "fractional_max_pool3d", "gaussian_nll_loss", "gelu", "glu", "grid_sample", "group_norm",
    "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_", "hinge_embedding_loss",
    "huber_loss", "instance_norm", "interpolate", "kl_div", "l1_loss", "layer_norm", "leaky_relu",
    "leaky_relu_", "linear", "local_response_norm", "log_softmax", "logsigmoid", "lp_pool1d",
    "lp_pool2d", "lp_pool3d", "margin_ranking_loss", "max_pool1d", "max_pool2d", "max_pool3d",
    "max_unpool1d", "max_unpool2d", "max_unpool3d", "mish", "mse_loss",
    "multi_head_attention_forward", "multi_margin_loss", "multilabel_margin_loss", "nll_loss",
    "normalize", "one_hot", "pad", "pairwise_distance", "pixel_shuffle", "pixel_unshuffle",
    "poisson_nll_loss", "prelu", "relu", "relu6", "relu_", "rms_norm", "rrelu", "rrelu_",
    "scaled_dot_product_attention", "selu", "selu_", "sigmoid", "silu", "smooth_l1_loss",
    "soft_margin_loss", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh",
    "tanhshrink", "threshold", "threshold_", "triplet_margin_loss",
    "triplet_margin_with_distance_loss", "unfold", "upsample", "upsample_bilinear",
    "upsample_nearest",
]
# fmt: on
# END GENERATED
