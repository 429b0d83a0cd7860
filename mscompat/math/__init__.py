"""Reductions and arithmetic with PyTorch semantics: ``einsum``, ``var``/``std`` with
``correction``, ``quantile``, ``round(decimals)``, ``isin``.
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.math.einsum import einsum as einsum

# fmt: off
__all__: List[str] = [
    "einsum",
]
# fmt: on
# END GENERATED
