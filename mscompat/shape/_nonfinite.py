"""Weighted sums along one axis that treat inf and NaN as PyTorch's tap loops do.

The composites of ``interpolate`` (linear, bicubic, antialias, area) and ``adaptive_avg_pool``
contract an axis with an ``(out, in)`` weight matrix. A plain matrix product multiplies every
input by every weight, zeros included, so one inf anywhere in a row made the whole output row
NaN (``0 * inf``), where PyTorch only sums the filter taps of each output: an all-+inf input
gives +inf there, and NaN only where a tap of weight 0 meets an inf, a NaN is a tap, or +inf
meets -inf.

:func:`contract` reproduces that: the finite part is the matrix product of the input with its
non-finite elements zeroed; the non-finite part counts, with 0/1 matrices built from the taps
(:func:`tap_signs`), for each output the taps of positive, negative and zero weight that meet
+inf, -inf and NaN.
"""

from __future__ import annotations

from typing import List, Sequence, Tuple

import numpy as np
from mindspore import Tensor, ops

__all__: List[str] = []

Taps = Sequence[Tuple[np.ndarray, np.ndarray, np.ndarray]]


def dense(taps: Taps, n_out: int, n_in: int) -> np.ndarray:
    """The ``(out, in)`` float64 weight matrix of ``taps``: (rows, cols, weights) triples, the
    weights of taps on the same element added."""
    w = np.zeros((n_out, n_in))
    for rows, cols, vals in taps:
        np.add.at(w, (rows, cols), np.asarray(vals).astype(np.float64))
    return w


def tap_signs(taps: Taps, n_out: int, n_in: int) -> np.ndarray:
    """``(4 * out, in)`` 0/1 counts, stacked: ``P + N``, ``Z``, ``P - N``, ``P + N + Z``, where
    ``P``/``N``/``Z`` mark the elements with a tap of positive/negative/zero weight."""
    s = np.zeros((3, n_out, n_in))
    for rows, cols, vals in taps:
        vals = np.asarray(vals)
        for k, sel in enumerate((vals > 0, vals < 0, vals == 0)):
            s[k, np.asarray(rows)[sel], np.asarray(cols)[sel]] = 1
    p, n, z = s
    return np.concatenate([p + n, z, p - n, p + n + z])


def matmul_axis(x: Tensor, axis: int, w: Tensor) -> Tensor:
    """Contract ``axis`` of ``x`` with ``w`` of shape (out, in)."""
    shape = x.shape
    ndim = len(shape)
    if axis == ndim - 1:
        return ops.matmul(x, w.T)
    pre = 1
    for s in shape[:axis]:
        pre *= s
    post = 1
    for s in shape[axis + 1 :]:
        post *= s
    out = ops.matmul(w, x.reshape(pre, shape[axis], post))
    return out.reshape(shape[:axis] + (w.shape[0],) + shape[axis + 1 :])


def contract(x: Tensor, axis: int, w: Tensor, signs: Tensor) -> Tensor:
    """``w`` (out, in) applied along ``axis`` of ``x``, inf and NaN as PyTorch's taps.

    ``signs`` is :func:`tap_signs` of the same taps, in ``x``'s dtype.
    """
    n = w.shape[0]
    finite = ops.isfinite(x)
    y = matmul_axis(ops.where(finite, x, ops.zeros_like(x)), axis, w)
    pos_in = (x > 0).astype(x.dtype) * (1 - finite.astype(x.dtype))  # +inf (NaN compares False)
    neg_in = (x < 0).astype(x.dtype) * (1 - finite.astype(x.dtype))  # -inf
    nan_in = ops.isnan(x).astype(x.dtype)
    both = matmul_axis(pos_in + neg_in, axis, signs[: 2 * n])
    total = ops.narrow(both, axis, 0, n)  # (P + N) . inf
    zero_inf = ops.narrow(both, axis, n, n)  # Z . inf
    diff = matmul_axis(pos_in - neg_in, axis, signs[2 * n : 3 * n])  # (P - N) . signed inf
    nan = matmul_axis(nan_in, axis, signs[3 * n :]) + zero_inf
    pos = (total + diff) > 1  # twice the count of taps giving +inf
    neg = (total - diff) > 1
    inf = ops.full_like(y, float("inf"))
    out = ops.where(pos, inf, ops.where(neg, -inf, y))
    return ops.where(ops.logical_or(nan > 0.5, ops.logical_and(pos, neg)), inf - inf, out)
