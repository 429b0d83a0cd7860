"""Indexing, selection and scatter ops with PyTorch semantics, and their static-shape variants.

``unique``, ``nonzero``, ``masked_select``... return data-dependent shapes, which MindSpore's graph
mode handles badly or not at all (the migration guide's "dynamic shape" section); each has a
variant with a static output shape for use inside ``ms.jit``.
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.indexing.counting import bincount as bincount
from mscompat.indexing.counting import histc as histc
from mscompat.indexing.gather import one_hot as one_hot
from mscompat.indexing.gather import take_along_dim as take_along_dim
from mscompat.indexing.index_ops import index_add as index_add
from mscompat.indexing.index_ops import index_copy as index_copy
from mscompat.indexing.index_ops import index_fill as index_fill
from mscompat.indexing.index_ops import index_select as index_select
from mscompat.indexing.index_ops import take as take
from mscompat.indexing.scatter_ops import scatter as scatter
from mscompat.indexing.scatter_ops import scatter_add as scatter_add
from mscompat.indexing.scatter_ops import scatter_reduce as scatter_reduce
from mscompat.indexing.selection import argwhere as argwhere
from mscompat.indexing.selection import masked_select as masked_select
from mscompat.indexing.selection import nonzero as nonzero
from mscompat.indexing.selection import nonzero_static as nonzero_static
from mscompat.indexing.selection import topk_mask as topk_mask
from mscompat.indexing.unique import unique as unique
from mscompat.indexing.unique import unique_consecutive as unique_consecutive

# fmt: off
__all__: List[str] = [
    "argwhere", "bincount", "histc", "index_add", "index_copy", "index_fill", "index_select",
    "masked_select", "nonzero", "nonzero_static", "one_hot", "scatter", "scatter_add",
    "scatter_reduce", "take", "take_along_dim", "topk_mask", "unique", "unique_consecutive",
]
# fmt: on
# END GENERATED
