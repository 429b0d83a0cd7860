"""Functions under their ``torch.*`` names (``torch.sort``, ``torch.topk``, ``torch.flatten``...).

A port changes the import, not the arguments: ``torch.topk(x, k)`` becomes ``topk(x, k)`` after
``from mscompat.tensor import topk`` (or ``mscompat.tensor.topk(x, k)``), and a method call
``x.sort(dim=1)`` becomes ``sort(x, dim=1)``. Everything here is a re-export of the
implementation in its domain package (:mod:`mscompat.shape`...), the same object;
``python tools/generate.py`` writes the list from the op database (every entry that is a
drop-in for a ``torch.X`` function is here), and ``tests/test_namespaces.py`` checks that every
name here is one of ``torch``'s. The
pooling functions are here because PyTorch also has them as ``torch.max_pool2d``... (where they
return the values only; ours also take ``return_indices``).

Example:
    >>> import mindspore as ms, numpy as np
    >>> import mscompat.tensor as mt
    >>> values, indices = mt.topk(ms.Tensor(np.array([1.0, 5.0, 3.0, 5.0], np.float32)), 2)
    >>> values.asnumpy().tolist(), indices.asnumpy().tolist()
    ([5.0, 5.0], [1, 3])
    >>> mt.flatten(ms.Tensor(np.zeros((2, 3, 4), np.float32)), 1).shape
    (2, 12)
"""

# BEGIN GENERATED (tools/generate.py)
# the op database's torch_apis, by the rules of mscompat/_namespaces.py
from typing import List

from mscompat.indexing.counting import bincount as bincount
from mscompat.indexing.counting import histc as histc
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
from mscompat.indexing.unique import unique as unique
from mscompat.indexing.unique import unique_consecutive as unique_consecutive
from mscompat.layers.distance import pairwise_distance as pairwise_distance
from mscompat.math.einsum import einsum as einsum
from mscompat.math.membership import isin as isin
from mscompat.math.norms import norm as norm
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
from mscompat.shape.adaptive_pool import adaptive_avg_pool1d as adaptive_avg_pool1d
from mscompat.shape.avg_pool import avg_pool1d as avg_pool1d
from mscompat.shape.creation import arange as arange
from mscompat.shape.creation import clone as clone
from mscompat.shape.creation import full_like as full_like
from mscompat.shape.creation import linspace as linspace
from mscompat.shape.creation import ones_like as ones_like
from mscompat.shape.creation import zeros_like as zeros_like
from mscompat.shape.cumulative import cummax as cummax
from mscompat.shape.cumulative import cummin as cummin
from mscompat.shape.join import stack as stack
from mscompat.shape.max_pool import max_pool1d as max_pool1d
from mscompat.shape.max_pool import max_pool2d as max_pool2d
from mscompat.shape.max_pool import max_pool3d as max_pool3d
from mscompat.shape.repeat import repeat_interleave as repeat_interleave
from mscompat.shape.reshape import flatten as flatten
from mscompat.shape.reshape import squeeze as squeeze
from mscompat.shape.reshape import unflatten as unflatten
from mscompat.shape.reshape import unsqueeze as unsqueeze
from mscompat.shape.roll import roll as roll
from mscompat.shape.shuffle import channel_shuffle as channel_shuffle
from mscompat.shape.shuffle import pixel_shuffle as pixel_shuffle
from mscompat.shape.shuffle import pixel_unshuffle as pixel_unshuffle
from mscompat.shape.sort import argsort as argsort
from mscompat.shape.sort import kthvalue as kthvalue
from mscompat.shape.sort import median as median
from mscompat.shape.sort import mode as mode
from mscompat.shape.sort import msort as msort
from mscompat.shape.sort import sort as sort
from mscompat.shape.sort import topk as topk
from mscompat.shape.triangular import tril as tril
from mscompat.shape.triangular import triu as triu

# fmt: off
__all__: List[str] = [
    "adaptive_avg_pool1d", "addcmul", "arange", "argmax", "argmin", "argsort", "argwhere", "atan",
    "atan2", "avg_pool1d", "baddbmm", "bincount", "channel_shuffle", "clone", "count_nonzero",
    "cummax", "cummin", "cumsum", "einsum", "flatten", "full_like", "histc", "index_add",
    "index_copy", "index_fill", "index_select", "isin", "kthvalue", "linspace", "logsumexp",
    "masked_select", "max_pool1d", "max_pool2d", "max_pool3d", "median", "mm", "mode", "msort",
    "nanquantile", "nonzero", "nonzero_static", "norm", "ones_like", "outer", "pairwise_distance",
    "pixel_shuffle", "pixel_unshuffle", "quantile", "repeat_interleave", "roll", "round", "scatter",
    "scatter_add", "scatter_reduce", "sort", "squeeze", "stack", "std", "std_mean", "take",
    "take_along_dim", "topk", "tril", "triu", "unflatten", "unique", "unique_consecutive",
    "unsqueeze", "var", "var_mean", "zeros_like",
]
# fmt: on
# END GENERATED
