"""Reductions and arithmetic with PyTorch semantics: ``einsum``, ``var``/``std`` with
``correction``, ``quantile``, ``round(decimals)``, ``isin``.
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

__all__: List[str] = []
# END GENERATED
