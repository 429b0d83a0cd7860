"""The composite reductions of ``embedding_bag`` (MindSpore ops): rows looked up, then summed,
averaged or maximised per bag. The aot backend runs ``custom_ops/cpu/embedding_bag_kernel.cc``
instead (see :mod:`mscompat.layers.embedding`)."""

from __future__ import annotations

from typing import Any

import mindspore as ms
from mindspore import Tensor, ops

__all__ = ["bag_ids", "dense_bags", "segment_bags"]


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
