"""``torch.nn`` layers and ``torch.nn.functional`` functions that MindSpore lacks or computes
differently on CPU: attention, embeddings, normalisations, activations, dropout variants,
transposed convolution and pooling.
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.layers.attention import scaled_dot_product_attention as scaled_dot_product_attention
from mscompat.layers.embedding import Embedding as Embedding
from mscompat.layers.embedding import EmbeddingBag as EmbeddingBag
from mscompat.layers.embedding import embedding as embedding
from mscompat.layers.embedding import embedding_bag as embedding_bag
from mscompat.layers.normalization import InstanceNorm1d as InstanceNorm1d
from mscompat.layers.normalization import InstanceNorm2d as InstanceNorm2d
from mscompat.layers.normalization import InstanceNorm3d as InstanceNorm3d
from mscompat.layers.normalization import LocalResponseNorm as LocalResponseNorm
from mscompat.layers.normalization import RMSNorm as RMSNorm
from mscompat.layers.normalization import instance_norm as instance_norm
from mscompat.layers.normalization import local_response_norm as local_response_norm
from mscompat.layers.normalization import rms_norm as rms_norm

# fmt: off
__all__: List[str] = [
    "Embedding", "EmbeddingBag", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "LocalResponseNorm", "RMSNorm", "embedding", "embedding_bag", "instance_norm",
    "local_response_norm", "rms_norm", "scaled_dot_product_attention",
]
# fmt: on
# END GENERATED
