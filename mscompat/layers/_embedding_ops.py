"""The composite pieces of ``embedding`` and ``embedding_bag`` (MindSpore ops): PyTorch's lookup
(renorm, gradient scaling, padding row), the index and offsets checks, and the bags' sums,
means and maxima. The front doors and the backends are in :mod:`mscompat.layers.embedding`."""

from __future__ import annotations

from typing import Any, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat.custom_ops.embedding_bag import STATUS_CHECK, STATUS_OFFSETS_END, STATUS_OFFSETS_START
from mscompat.custom_ops.python_op import python_op

__all__ = [
    "bag_ids",
    "check_offsets",
    "check_status",
    "const",
    "dense_bags",
    "in_range",
    "lookup",
    "offsets_message",
    "range_message",
    "row_norms",
    "segment_bags",
]


@constexpr
def range_message(fn: str, name: str, n: int) -> str:
    return (
        f"{fn}(): {name} holds an index outside [0, {n}) (num_embeddings={n}, the rows of "
        "weight); PyTorch raises 'index out of range in self'"
    )


@constexpr
def const(value: float, dtype: Any) -> Tensor:
    """``value`` as a 0-d constant (under ``ms.jit`` a Python float is rounded to float32)."""
    return Tensor(np.array(value, np.float64), dtype)


def in_range(idx: Tensor, n: int, message: str) -> Tensor:
    """Return ``idx``; raise ``ValueError(message)`` if an index is outside ``[0, n)``."""
    if ops.logical_or(idx < 0, idx >= n).any():
        raise ValueError(message)
    return idx


def row_norms(rows: Tensor, p: float) -> Tensor:
    a = ops.abs(rows)
    if p == float("inf"):
        return a.max(-1, keepdims=True)
    if p == 2.0:
        return ops.sqrt((a * a).sum(-1, keepdims=True))
    if p == 1.0:
        return a.sum(-1, keepdims=True)
    return ops.pow(ops.pow(a, p).sum(-1, keepdims=True), 1.0 / p)


def lookup(
    weight: Tensor, idx: Tensor, pad: int, max_norm: float, p: float, by_freq: bool
) -> Tensor:
    """``weight[idx]`` with PyTorch's renorm, gradient scaling and padding row."""
    rows = ops.gather(weight, idx, 0)
    if max_norm >= 0:
        # PyTorch renormalises the weight in place, without gradient: the value is the
        # renormalised row, the gradient reaches the row as it is. Its arithmetic: the norm in
        # the row's dtype, the factor in float64, the product in float32 (float64 rows: float64).
        work = ms.float64 if rows.dtype == ms.float64 else ms.float32
        wide = ops.stop_gradient(rows).astype(work)
        norms = row_norms(wide, p).astype(rows.dtype).astype(ms.float64)
        limit = const(max_norm, ms.float64)
        factor = ops.where(norms > limit, limit / (norms + const(1e-7, ms.float64)), 1.0)
        renormed = (wide * factor.astype(work)).astype(rows.dtype)
        rows = renormed + (rows - ops.stop_gradient(rows))
    if by_freq:
        flat = idx.reshape(-1).astype(ms.int32)
        counts = ops.unsorted_segment_sum(ops.ones(flat.shape, rows.dtype), flat, weight.shape[0])
        per = ops.gather(counts, idx.astype(ms.int32), 0).expand_dims(-1)
        rows = ops.stop_gradient(rows) + (rows - ops.stop_gradient(rows)) / per
    if pad >= 0:
        rows = ops.where((idx == pad).expand_dims(-1), ops.stop_gradient(rows), rows)
    return rows


def offsets_message(fn: str, status: int) -> str:
    if status == STATUS_OFFSETS_START:
        return (
            f"{fn}(): offsets[0] has to be 0, i.e., the first sequence in the mini-batch has "
            "to start from position 0"
        )
    return f"{fn}(): offsets[-1] can not be greater than input's length"


def check_offsets(offsets: Tensor, length: int, fn: str) -> Tensor:
    if offsets.size > 0 and offsets[0] != 0:
        raise ValueError(offsets_message(fn, STATUS_OFFSETS_START))
    if offsets.size > 0 and offsets[-1] > length:
        raise ValueError(offsets_message(fn, STATUS_OFFSETS_END))
    return offsets


def bag_ids(offsets: Tensor, length: int) -> Tensor:
    """The bag of each position of a 1-D input (``bags`` for positions past the last bag when
    ``include_last_offset``)."""
    positions = ops.arange(length, dtype=offsets.dtype)
    return (ops.searchsorted(offsets, positions, right=True) - 1).astype(ms.int32)


def dense_bags(rows: Tensor, keep: Tensor, mode: str, work: Any) -> Tensor:
    """Bags of a 2-D input: ``rows (B, N, D)``, ``keep (B, N)``."""
    mask = keep.expand_dims(-1)
    if mode == "max":
        low = ops.full((), float("-inf"), dtype=work)
        out = ops.amax(ops.where(mask, rows, low), 1)
        return ops.where(keep.any(1, keep_dims=True), out, ops.zeros((), work))
    total = ops.where(mask, rows, ops.zeros((), work)).sum(1)
    if mode == "sum":
        return total
    count = keep.astype(work).sum(1, keepdims=True)
    return total / ops.maximum(count, ops.ones((), work))


def segment_bags(
    rows: Tensor, keep: Tensor, segment: Tensor, bags: int, mode: str, work: Any
) -> Tensor:
    """Bags of a 1-D input: ``rows (n, D)`` in bag ``segment`` (``bags``: past the end)."""
    mask = keep.expand_dims(-1)
    count = ops.unsorted_segment_sum(keep.astype(work), segment, bags + 1)[:bags].expand_dims(-1)
    if mode == "max":
        low = ops.full((), float("-inf"), dtype=work)
        out = ops.unsorted_segment_max(ops.where(mask, rows, low), segment, bags + 1)[:bags]
        return ops.where(count > 0, out, ops.zeros((), work))
    total = ops.unsorted_segment_sum(ops.where(mask, rows, ops.zeros((), work)), segment, bags + 1)
    total = total[:bags]
    if mode == "sum":
        return total
    return total / ops.maximum(count, ops.ones((), work))


def check_status(status: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Raise PyTorch's error for a kernel's non-zero status (``rows``: num_embeddings)."""
    fn, code = "embedding_bag", int(status[0])
    if code == 1:
        raise ValueError(range_message(fn, "input", int(rows[0])))
    if code in (STATUS_OFFSETS_START, STATUS_OFFSETS_END):
        raise ValueError(offsets_message(fn, code))
    return status


def _no_status_grad(status: Tensor, rows: Tensor, out: Tensor, dout: Tensor) -> Tuple[Tensor, ...]:
    return ops.zeros_like(status), ops.zeros_like(rows)


#: :func:`check_status` as an op (a Python function called by the graph, in order after the
#: kernel through ``ops.depend``).
_CHECK = python_op(
    check_status,
    out_shape=lambda status, rows: status,
    out_dtype=lambda status, rows: status,
    bprop=_no_status_grad,
)
STATUS_CHECK["op"] = _CHECK
