"""Indexing, selection and scatter ops with PyTorch semantics, and their static-shape variants.

``unique``, ``nonzero``, ``masked_select``... return data-dependent shapes, which MindSpore's graph
mode handles badly or not at all (the migration guide's "dynamic shape" section); each has a
variant with a static output shape for use inside ``ms.jit``.
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

__all__: List[str] = []
# END GENERATED
