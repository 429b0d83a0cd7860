"""Reductions and arithmetic with PyTorch semantics: ``einsum``, ``var``/``std`` with
``correction``, ``quantile``, ``round(decimals)``, ``isin``.
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.math.einsum import einsum as einsum
from mscompat.math.membership import isin as isin
from mscompat.math.norms import norm as norm
from mscompat.math.norms import vector_norm as vector_norm
from mscompat.math.pointwise import addcmul as addcmul
from mscompat.math.pointwise import atan as atan
from mscompat.math.pointwise import atan2 as atan2
from mscompat.math.products import baddbmm as baddbmm
from mscompat.math.products import mm as mm
from mscompat.math.products import outer as outer
from mscompat.math.quantile import nanquantile as nanquantile
from mscompat.math.quantile import quantile as quantile
from mscompat.math.reductions import argmax as argmax
from mscompat.math.reductions import argmin as argmin
from mscompat.math.reductions import count_nonzero as count_nonzero
from mscompat.math.reductions import cumsum as cumsum
from mscompat.math.reductions import logsumexp as logsumexp
from mscompat.math.rounding import round as round
from mscompat.math.statistics import std as std
from mscompat.math.statistics import std_mean as std_mean
from mscompat.math.statistics import var as var
from mscompat.math.statistics import var_mean as var_mean

# fmt: off
__all__: List[str] = [
    "addcmul", "argmax", "argmin", "atan", "atan2", "baddbmm", "count_nonzero", "cumsum", "einsum",
    "isin", "logsumexp", "mm", "nanquantile", "norm", "outer", "quantile", "round", "std",
    "std_mean", "var", "var_mean", "vector_norm",
]
# fmt: on
# END GENERATED
