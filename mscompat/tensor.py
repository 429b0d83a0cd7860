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

from mscompat.indexing.gather import take_along_dim as take_along_dim
from mscompat.indexing.selection import argwhere as argwhere
from mscompat.indexing.selection import masked_select as masked_select
from mscompat.indexing.selection import nonzero as nonzero
from mscompat.indexing.selection import nonzero_static as nonzero_static
from mscompat.indexing.unique import unique as unique
from mscompat.indexing.unique import unique_consecutive as unique_consecutive
from mscompat.math.einsum import einsum as einsum
from mscompat.math.membership import isin as isin
from mscompat.math.quantile import nanquantile as nanquantile
from mscompat.math.quantile import quantile as quantile
from mscompat.math.rounding import round as round
from mscompat.math.statistics import std as std
from mscompat.math.statistics import std_mean as std_mean
from mscompat.math.statistics import var as var
from mscompat.math.statistics import var_mean as var_mean
from mscompat.shape.adaptive_pool import adaptive_avg_pool1d as adaptive_avg_pool1d
from mscompat.shape.avg_pool import avg_pool1d as avg_pool1d
from mscompat.shape.cumulative import cummax as cummax
from mscompat.shape.cumulative import cummin as cummin
from mscompat.shape.max_pool import max_pool1d as max_pool1d
from mscompat.shape.max_pool import max_pool2d as max_pool2d
from mscompat.shape.max_pool import max_pool3d as max_pool3d
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

# fmt: off
__all__: List[str] = [
    "adaptive_avg_pool1d", "argsort", "argwhere", "avg_pool1d", "channel_shuffle", "cummax",
    "cummin", "einsum", "flatten", "isin", "kthvalue", "masked_select", "max_pool1d", "max_pool2d",
    "max_pool3d", "median", "mode", "msort", "nanquantile", "nonzero", "nonzero_static",
    "pixel_shuffle", "pixel_unshuffle", "quantile", "roll", "round", "sort", "squeeze", "std",
    "std_mean", "take_along_dim", "topk", "unflatten", "unique", "unique_consecutive", "unsqueeze",
    "var", "var_mean",
]
# fmt: on
# END GENERATED
