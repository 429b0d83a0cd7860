"""Indexing, selection and scatter ops with PyTorch semantics, and their static-shape variants.

``unique``, ``nonzero``, ``masked_select``... return data-dependent shapes, which MindSpore's graph
mode handles badly or not at all (the migration guide's "dynamic shape" section); each has a
variant with a static output shape for use inside ``ms.jit``.
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.indexing.gather import one_hot as one_hot
from mscompat.indexing.gather import take_along_dim as take_along_dim
from mscompat.indexing.selection import argwhere as argwhere
from mscompat.indexing.selection import masked_select as masked_select
from mscompat.indexing.selection import nonzero as nonzero
from mscompat.indexing.selection import nonzero_static as nonzero_static
from mscompat.indexing.selection import topk_mask as topk_mask
from mscompat.indexing.unique import unique as unique
from mscompat.indexing.unique import unique_consecutive as unique_consecutive

# fmt: off
__all__: List[str] = [
    "argwhere", "masked_select", "nonzero", "nonzero_static", "one_hot", "take_along_dim",
    "topk_mask", "unique", "unique_consecutive",
]
# fmt: on
# END GENERATED
