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

# fmt: off
__all__: List[str] = [
    "Embedding", "EmbeddingBag", "embedding", "embedding_bag", "scaled_dot_product_attention",
]
# fmt: on
# END GENERATED
