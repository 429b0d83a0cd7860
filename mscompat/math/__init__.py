"""Reductions and arithmetic with PyTorch semantics: ``einsum``, ``var``/``std`` with
``correction``, ``quantile``, ``round(decimals)``, ``isin``.
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.math.einsum import einsum as einsum
from mscompat.math.membership import isin as isin
from mscompat.math.quantile import nanquantile as nanquantile
from mscompat.math.quantile import quantile as quantile
from mscompat.math.rounding import round as round
from mscompat.math.statistics import std as std
from mscompat.math.statistics import std_mean as std_mean
from mscompat.math.statistics import var as var
from mscompat.math.statistics import var_mean as var_mean

# fmt: off
__all__: List[str] = [
    "einsum", "isin", "nanquantile", "quantile", "round", "std", "std_mean", "var", "var_mean",
]
# fmt: on
# END GENERATED
