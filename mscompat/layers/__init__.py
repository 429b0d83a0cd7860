"""``torch.nn`` layers and ``torch.nn.functional`` functions that MindSpore lacks or computes
differently on CPU: attention, embeddings, normalisations, activations, dropout variants,
transposed convolution and pooling.
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.layers.attention import scaled_dot_product_attention as scaled_dot_product_attention
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
from mscompat.layers.batch_norm import BatchNorm1d as BatchNorm1d
from mscompat.layers.batch_norm import BatchNorm2d as BatchNorm2d
from mscompat.layers.batch_norm import BatchNorm3d as BatchNorm3d
from mscompat.layers.batch_norm import batch_norm as batch_norm
from mscompat.layers.embedding import Embedding as Embedding
from mscompat.layers.embedding import EmbeddingBag as EmbeddingBag
from mscompat.layers.embedding import embedding as embedding
from mscompat.layers.embedding import embedding_bag as embedding_bag
from mscompat.layers.layer_norm import GroupNorm as GroupNorm
from mscompat.layers.layer_norm import LayerNorm as LayerNorm
from mscompat.layers.layer_norm import group_norm as group_norm
from mscompat.layers.layer_norm import layer_norm as layer_norm
from mscompat.layers.layer_norm import normalize as normalize
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

# fmt: off
__all__: List[str] = [
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "CosineEmbeddingLoss", "CrossEntropyLoss", "Embedding", "EmbeddingBag", "GaussianNLLLoss",
    "HingeEmbeddingLoss", "HuberLoss", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "KLDivLoss", "LocalResponseNorm", "MarginRankingLoss", "MultiLabelMarginLoss",
    "MultiMarginLoss", "MultiheadAttention", "NLLLoss", "PairwiseDistance", "PoissonNLLLoss",
    "RMSNorm", "SoftMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "conv1d",
    "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "cosine_embedding_loss", "cross_entropy", "embedding", "embedding_bag", "gaussian_nll_loss",
    "hinge_embedding_loss", "huber_loss", "instance_norm", "kl_div", "local_response_norm",
    "margin_ranking_loss", "multi_head_attention_forward", "multi_margin_loss",
    "multilabel_margin_loss", "nll_loss", "pairwise_distance", "poisson_nll_loss", "rms_norm",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "CosineEmbeddingLoss", "CrossEntropyLoss",
    "Embedding", "EmbeddingBag", "GaussianNLLLoss", "GroupNorm", "HingeEmbeddingLoss", "HuberLoss",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "KLDivLoss", "LayerNorm",
    "LocalResponseNorm", "MarginRankingLoss", "MultiLabelMarginLoss", "MultiMarginLoss", "NLLLoss",
    "PoissonNLLLoss", "RMSNorm", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "SoftMarginLoss",
    "TripletMarginLoss", "TripletMarginWithDistanceLoss", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "batch_norm", "cosine_embedding_loss", "cross_entropy", "embedding", "embedding_bag",
    "gaussian_nll_loss", "group_norm", "hinge_embedding_loss", "huber_loss", "instance_norm",
    "kl_div", "layer_norm", "local_response_norm", "margin_ranking_loss", "multi_margin_loss",
    "multilabel_margin_loss", "nll_loss", "normalize", "pad", "poisson_nll_loss", "rms_norm",
    "scaled_dot_product_attention", "soft_margin_loss", "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]
# fmt: on
# END GENERATED
