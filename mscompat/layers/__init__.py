"""``torch.nn`` layers and ``torch.nn.functional`` functions that MindSpore lacks or computes
differently on CPU: attention, embeddings, normalisations, activations, dropout variants,
transposed convolution and pooling.
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.layers.attention import scaled_dot_product_attention as scaled_dot_product_attention

# fmt: off
__all__: List[str] = [
    "scaled_dot_product_attention",
]
# fmt: on
# END GENERATED
