"""The weighted reduction fused into the loss kernels (``cpu/loss_reduce.h``): planning a call
and launching a library's reducing entry point.

MMDetection's ``weight_reduce_loss`` (weight, ``'mean'``/``'sum'``, a number ``avg_factor``)
and a Cell's ``loss_weight`` and zero-weight shortcut run inside the loss kernel, so that a
reduced loss in a graph is one Custom op: each further MindSpore op costs 10-50 us on CPU,
about as much as PyTorch's whole loss on 10k boxes. :func:`plan` decides from a call's static
facts (at compile time under ``ms.jit``) whether the fused entry point covers it; the front
doors otherwise run the elementwise kernel and reduce with MindSpore ops.
"""

from __future__ import annotations

from typing import Any, Tuple

import numpy as np
from mindspore import Tensor
from mindspore.ops import constexpr

from mscompat.custom_ops.registry import TensorSpec, _facts, _spec

__all__ = ["coef", "plan", "run"]

# torch.finfo(torch.float32).eps: MMDetection's avg_factor + eps (as mscompat.losses.utils).
_AVG_EPS = 1.1920928955078125e-07
_ZERO_CHECK = 4


def _item_count(shape: Tuple[int, ...], width: int) -> int:
    n = 1
    for s in shape if width == 1 else shape[:-1]:
        n *= s
    return n


def _weight_mode(pred: TensorSpec, weight: Any, width: int, mean_weight: bool) -> int:
    """0 no weight, 1 one per item, 2 one per element averaged over the item, -1 not fused."""
    if weight is None:
        return 0
    if not isinstance(weight, TensorSpec) or weight.dtype != pred.dtype:
        return -1
    if width == 1:
        return 1 if weight.shape == pred.shape else -1
    if weight.shape == pred.shape[:-1]:
        return 1
    return 2 if mean_weight and weight.shape == pred.shape else -1


@constexpr
def _plan(
    backend: str,
    facts: Tuple[Any, ...],
    reduction: str,
    loss_weight: float,
    zero_check: bool,
    width: int,
    mean_weight: bool,
    ndims: Tuple[int, ...],
) -> Tuple[Any, ...]:
    if backend != "aot" or reduction not in ("mean", "sum"):
        return ()
    pred, target, weight, avg_factor = (_spec(f) for f in facts)
    if not isinstance(target, TensorSpec) or (target.dtype, target.shape) != (
        pred.dtype,
        pred.shape,
    ):
        return ()
    if (ndims and pred.ndim not in ndims) or (
        width > 1 and (not pred.shape or pred.shape[-1] != width)
    ):
        return ()
    n = _item_count(pred.shape, width)
    wmode = _weight_mode(pred, weight, width, mean_weight)
    if n == 0 or wmode < 0:
        return ()
    tensor_avg = isinstance(avg_factor, TensorSpec)
    number_avg = isinstance(avg_factor, (int, float)) and not isinstance(avg_factor, bool)
    if not (avg_factor is None or tensor_avg or number_avg) or (
        avg_factor is not None and reduction == "sum"
    ):
        return ()  # the front door's errors (or a Cell's shortcut before them): not fused
    zero_check = zero_check and wmode > 0
    if tensor_avg and zero_check:
        return ()  # the shortcut is not divided: the division after the kernel would be wrong
    if reduction == "sum" or tensor_avg:
        divisor = 1.0
    elif avg_factor is None:
        divisor = float(n)
    else:
        divisor = float(avg_factor) + _AVG_EPS
    multiplier = 1.0 if tensor_avg else float(loss_weight)
    return (float(wmode + (_ZERO_CHECK if zero_check else 0)), divisor, multiplier, tensor_avg)


def plan(
    backend: str,
    pred: Tensor,
    target: Any,
    weight: Any,
    reduction: str,
    avg_factor: Any,
    loss_weight: float = 1.0,
    zero_check: bool = False,
    width: int = 1,
    mean_weight: bool = False,
    ndims: Tuple[int, ...] = (),
) -> Tuple[Any, ...]:
    """Whether a reducing kernel runs this call, and how (a compile-time constant in graphs).

    Args:
        backend: the backend the registry chose for the elementwise op (only ``"aot"`` fuses).
        pred: the predictions, ``(..., width)`` items (``width`` 1: every element an item),
            of a rank in ``ndims`` (any if empty).
        target: a Tensor of pred's shape and dtype (anything else is not fused: the front door
            raises its error).
        weight: ``None``, or a weight of pred's dtype: one per item, or (``mean_weight``) one
            per element averaged over each item.
        reduction: ``'mean'`` or ``'sum'`` fuse; ``'none'`` does not.
        avg_factor: ``None``, a number (fused), or a Tensor (the kernel sums; the caller divides).
        loss_weight: the Cell's factor.
        zero_check: the Cell's ``(pred * weight).sum()`` for a weight with no positive entry.

    Returns:
        ``()`` where the fused kernel does not cover the call, else ``(flags, divisor,
        multiplier, divide_after)``: the tail of the kernel's coef vector and whether the caller
        divides by a Tensor ``avg_factor`` (then scales by ``loss_weight``) after the kernel.
    """
    facts = _facts(pred, target, weight, avg_factor)
    return _plan(backend, facts, reduction, loss_weight, zero_check, width, mean_weight, ndims)


@constexpr
def coef(head: Tuple[float, ...], tail: Tuple[Any, ...], dtype: Any) -> Tensor:
    """A kernel's coef vector ``head + tail[:3]`` as a constant Tensor of ``dtype`` (built in
    Python at compile time: no op in the graph, unlike ``Tensor(values, dtype)`` there)."""
    return Tensor(np.array(tuple(head) + tuple(tail[:3]), np.float64), dtype)


@constexpr
def _no_weight(dtype: Any) -> Tensor:
    return Tensor(np.zeros(1, np.float64), dtype)


def run(
    kernel: Any,
    head: Tuple[float, ...],
    tail: Tuple[Any, ...],
    pred: Tensor,
    target: Tensor,
    weight: Any,
) -> Tensor:
    """``kernel(pred, target, weight, rcoef)``: the reduced loss (a 0-d Tensor) of a call
    :func:`plan` accepted (``tail`` its answer); a constant stands in for no weight."""
    rcoef = coef(head, tail, pred.dtype)
    if weight is None:
        return kernel(pred, target, _no_weight(pred.dtype), rcoef)
    return kernel(pred, target, weight, rcoef)
