"""MMDetection's losses with the weighted reduction fused into their kernel
(:mod:`mscompat.custom_ops.loss_reduce`): the planning and the division by a Tensor
``avg_factor`` the kernel leaves to MindSpore ops. Shared by :mod:`mscompat.losses.iou` and
:mod:`mscompat.losses.regression`."""

from __future__ import annotations

from typing import Any, Tuple

from mindspore import Tensor

from mscompat.custom_ops import loss_reduce
from mscompat.custom_ops.registry import chosen_backend, dispatch
from mscompat.losses import _torch_math as tm
from mscompat.losses.utils import AvgFactor, _avg_factor_div

__all__ = ["run", "tail"]


def tail(
    op: str,
    config: Tuple[Any, ...],
    pred: Tensor,
    target: Any,
    weight: Any,
    reduction: str,
    avg_factor: AvgFactor,
    loss_weight: float = 1.0,
    zero_check: bool = False,
    box: bool = False,
    cell: bool = False,
) -> Tuple[Any, ...]:
    """:func:`~mscompat.custom_ops.loss_reduce.plan` for the elementwise op ``op`` (its
    implementation arguments ``pred, target, *config``): ``()`` unless the registry picks its
    ``aot`` kernel and the reducing entry point covers the call. ``box``: (n, 4) boxes (with
    ``cell``, MMDetection's IoU Cells, an (n, 4) weight is averaged to (n,))."""
    if pred.size == 0:
        return ()  # no boxes: the front door answers without a kernel
    backend = chosen_backend(op, pred, target, *config)
    if box:
        return loss_reduce.plan(
            backend,
            pred,
            target,
            weight,
            reduction,
            avg_factor,
            loss_weight,
            zero_check,
            4,
            cell,
            (2,),
        )
    return loss_reduce.plan(
        backend, pred, target, weight, reduction, avg_factor, loss_weight, zero_check
    )


def run(
    op: str,
    config: Tuple[Any, ...],
    plan: Tuple[Any, ...],
    pred: Tensor,
    target: Tensor,
    weight: Any,
    avg_factor: AvgFactor,
    loss_weight: float = 1.0,
) -> Tensor:
    """The reduced loss of a call :func:`tail` planned: the registry's ``aot`` implementation of
    ``op`` given the plan (one kernel), then, for a Tensor ``avg_factor``, MMDetection's
    ``/ (avg_factor + eps)`` and the ``loss_weight``."""
    out = dispatch(op, pred, target, *config)(pred, target, *config, plan, weight)
    if plan[3]:
        out = _avg_factor_div(out, avg_factor)
        if loss_weight != 1.0:
            out = tm.scale(out, loss_weight)
    return out
