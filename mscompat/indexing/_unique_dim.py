"""``unique`` and ``unique_consecutive`` along a dim: the distinct slices, as PyTorch's ``dim=``.

The slices along ``dim`` are compared as rows of a ``(n, m)`` matrix. ``unique_consecutive``
starts a new run where a row differs from the one before it. ``unique`` ranks the rows in
lexicographic order without a lexicographic sort: each element is replaced by its dense rank
among all the elements (``indexing.unique``'s inverse), then pairs of neighbouring columns are
merged into one (``rank_a * K + rank_b`` ranked again), halving the columns until one is left,
whose ranks order the rows as a lexicographic comparison would. The distinct row ranks are
then the distinct slices, in PyTorch's (sorted) order.

The number of distinct slices is a dynamic shape, read on the host in PyNative mode. In a graph
(``ms.jit``) MindSpore's dynamic-shape ``UniqueConsecutive`` (along an axis) collapses the runs
instead, of the rows sorted lexicographically for ``unique`` (one stable sort per column, last
column first). Called by :mod:`mscompat.indexing.unique`, which checks the arguments.
"""

from __future__ import annotations

from typing import Tuple, Union

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._graph import compiling
from mscompat.custom_ops.registry import call
from mscompat.shape.sort import sort

__all__ = ["unique_along", "unique_consecutive_along"]

Result = Union[Tensor, Tuple[Tensor, ...]]


def _rows(x: Tensor, dim: int) -> Tensor:
    """The slices of ``x`` along ``dim`` as the rows of an ``(n, m)`` matrix (bool as int32)."""
    perm = (dim,) + tuple(d for d in range(x.ndim) if d != dim)
    m = 1
    for d in perm[1:]:
        m *= x.shape[d]
    rows = (ops.transpose(x, perm) if dim else x).reshape((x.shape[dim], m))
    return rows.astype(ms.int32) if rows.dtype == ms.bool_ else rows


def _dense_ranks(flat: Tensor) -> Tuple[Tensor, int]:
    """Each element's rank among the distinct values of the 1-D ``flat`` (int64), and their
    number (equal values share a rank; each NaN has its own, after every number)."""
    _, inverse, _, count = call("indexing.unique", flat, flat.shape[0], True)
    return inverse.astype(ms.int64), int(count.asnumpy()[0])


def _row_ranks(rows: Tensor) -> Tensor:
    """The dense rank of each row of ``rows`` (n, m >= 1) in lexicographic order (int64, (n,))."""
    n = rows.shape[0]
    ranks, k = _dense_ranks(rows.reshape(-1))
    ranks = ranks.reshape(n, -1)
    while ranks.shape[1] > 1:  # k <= n * m, so k * k + k fits an int64 for any real input
        if ranks.shape[1] % 2:
            ranks = ops.concat((ranks, ops.zeros((n, 1), ms.int64)), 1)
        ranks, k = _dense_ranks((ranks[:, 0::2] * k + ranks[:, 1::2]).reshape(-1))
        ranks = ranks.reshape(n, -1)
    return ranks[:, 0]


def _result(out: Tensor, inverse: Tensor, counts: Tensor, flags: Tuple[bool, bool]) -> Result:
    results = [ops.stop_gradient(out)]
    if flags[0]:
        results.append(inverse)
    if flags[1]:
        results.append(counts)
    return results[0] if len(results) == 1 else tuple(results)


def _empty(x: Tensor, dim: int, fn: str, flags: Tuple[bool, bool]) -> Result:
    if x.shape[dim] != 0:
        raise ValueError(
            f"{fn}(): input has a 0-sized dimension other than dim={dim} (shape "
            f"{tuple(x.shape)}): its slices have no elements to compare, as PyTorch refuses"
        )
    none = ops.zeros((0,), ms.int64)
    return _result(x, none, none, flags)


def _graph_runs(x: Tensor, dim: int, flags: Tuple[bool, bool], sort_rows: bool) -> Result:
    """The graph-mode form: ``UniqueConsecutive`` of the rows (sorted first for ``unique``)."""
    rows = _rows(x, dim)
    order = None
    if sort_rows:  # a lexicographic sort: stable sorts by each column, the last one first
        order = ops.arange(0, rows.shape[0], dtype=ms.int64)
        for j in range(rows.shape[1] - 1, -1, -1):  # (reversed() would compile to a loop)
            _, step = sort(rows[:, j][order], 0, stable=True)
            order = order[step]
        rows = rows[order]
    out, inverse, counts = ops.unique_consecutive(rows, True, True, 0)
    if order is not None:
        inverse = ops.tensor_scatter_elements(ops.zeros_like(inverse), order, inverse, axis=0)
    rest = tuple(x.shape[d] for d in range(x.ndim) if d != dim)
    back = tuple(range(1, dim + 1)) + (0,) + tuple(range(dim + 1, x.ndim))
    out = ops.transpose(out.reshape((-1,) + rest).astype(x.dtype), back)
    return _result(out, inverse, counts, flags)


def unique_along(x: Tensor, dim: int, flags: Tuple[bool, bool]) -> Result:
    """:func:`torch.unique` with ``dim``: the distinct slices of ``x`` along ``dim``, sorted
    lexicographically; ``flags``: (return_inverse, return_counts)."""
    if x.size == 0:
        return _empty(x, dim, "unique", flags)
    if compiling():
        return _graph_runs(x, dim, flags, sort_rows=True)
    n = x.shape[dim]
    ranks = _row_ranks(_rows(x, dim))
    _, inverse, counts, count = call("indexing.unique", ranks, n, True)
    distinct = int(count.asnumpy()[0])
    counts = counts[:distinct]
    # the first slice of each group: the groups' starts in a stable sort by group
    _, order = sort(inverse, 0, stable=True)
    first = order[ops.cumsum(counts, 0) - counts]
    return _result(ops.gather(x, first, dim), inverse.astype(ms.int64), counts, flags)


def unique_consecutive_along(x: Tensor, dim: int, flags: Tuple[bool, bool]) -> Result:
    """:func:`torch.unique_consecutive` with ``dim``: runs of equal neighbouring slices of
    ``x`` along ``dim`` collapsed; ``flags``: (return_inverse, return_counts)."""
    if x.size == 0:
        return _empty(x, dim, "unique_consecutive", flags)
    if compiling():
        return _graph_runs(x, dim, flags, sort_rows=False)
    n = x.shape[dim]
    if n == 1:
        one = ops.ones((1,), ms.int64)
        return _result(x, one - 1, one, flags)
    rows = _rows(x, dim)
    starts = ops.concat((ops.ones((1,), ms.bool_), (rows[1:] != rows[:-1]).any(1)))
    inverse = ops.cumsum(starts.astype(ms.int32), 0).astype(ms.int64) - 1
    first = ops.masked_select(ops.arange(0, n, dtype=ms.int64), starts)
    counts = ops.concat((first[1:], ops.full((1,), n, dtype=ms.int64))) - first
    return _result(ops.gather(x, first, dim), inverse, counts, flags)
