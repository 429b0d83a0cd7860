"""What MMDetection's IoU-family losses share (:mod:`mscompat.losses.iou`,
:mod:`mscompat.losses.iou_variants`): the checks, the weighted reduction, the geometry terms
of several losses and the Cells' ``forward``."""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import check_float_tensor, check_number, check_reduction, check_tensor
from mscompat._graph import compiling
from mscompat.losses import _torch_math as tm
from mscompat.losses.utils import (
    AvgFactor,
    _check_avg_factor,
    _promote,
    _sum,
    static_refusal,
    weight_reduce_loss,
    weight_shape_error,
)

__all__ = [
    "CELL_SHAPE",
    "F16",
    "F32",
    "BoxLoss",
    "centre_terms",
    "check_boxes",
    "clamp_unit",
    "fill_docs",
    "finish",
    "promoted",
    "refuse_unless_zero",
    "zero_weight_sum",
    "simple",
    "wh",
]

F16, F32 = ms.float16, ms.float32


def check_boxes(
    pred: Any, target: Any, reduction: str, avg_factor: AvgFactor
) -> Tuple[Tensor, Tensor]:
    pred = check_float_tensor(pred, "pred")
    target = check_float_tensor(target, "target")
    if pred.ndim != 2 or pred.shape[1] != 4:
        raise ValueError(f"pred must have shape (n, 4), but got pred.shape={pred.shape}")
    if target.shape != pred.shape:
        raise ValueError(
            f"target must have the same shape as pred {pred.shape}, but got {target.shape}"
        )
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    return pred, target


def finish(
    loss_fn: Callable[..., Tensor],
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor],
    reduction: str,
    avg_factor: AvgFactor,
    out_dtype: Any,
    out_cols: int,
    *config: Any,
) -> Tensor:
    """The elementwise loss (zeros of its dtype and shape for no boxes: no kernel runs on an
    empty input), then :func:`weight_reduce_loss`."""
    if pred.shape[0] == 0:
        shape = (0,) if out_cols == 0 else (0, out_cols)
        loss = ops.zeros(shape, out_dtype)
    else:
        loss = loss_fn(pred, target, *config)
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


def promoted(pred: Tensor, target: Tensor) -> Any:
    return _promote(pred.dtype, target.dtype)


def centre_terms(pred: Tensor, target: Tensor, eps: float) -> Tuple[Tensor, Tensor, Tensor]:
    """IoU with ``+ eps`` on the union, and the enclosing box's corners (DIoU, CIoU, SIoU)."""
    lt = tm.tmax(pred[:, :2], target[:, :2])
    rb = tm.tmin(pred[:, 2:], target[:, 2:])
    wh = tm.clamp_min(tm.sub(rb, lt), 0.0)
    overlap = tm.mul(wh[:, 0], wh[:, 1])
    ap = tm.mul(tm.sub(pred[:, 2], pred[:, 0]), tm.sub(pred[:, 3], pred[:, 1]))
    ag = tm.mul(tm.sub(target[:, 2], target[:, 0]), tm.sub(target[:, 3], target[:, 1]))
    union = tm.add(tm.sub(tm.add(ap, ag), overlap), eps)
    ious = tm.div(overlap, union)
    return ious, tm.tmin(pred[:, :2], target[:, :2]), tm.tmax(pred[:, 2:], target[:, 2:])


def wh(boxes: Tensor, eps: float) -> Tuple[Tensor, Tensor]:
    return tm.sub(boxes[:, 2], boxes[:, 0]), tm.add(tm.sub(boxes[:, 3], boxes[:, 1]), eps)


def clamp_unit(x: Tensor) -> Tensor:
    """``x.clamp(-1, 1)``, NaN kept (MindSpore's clamp maps NaN to the bound; PyTorch's keeps
    it, and CIoU's alpha is NaN for identical boxes)."""
    return tm.ew(lambda v: ops.where(ops.isnan(v), v, ops.clamp(v, -1.0, 1.0)), x)


_LOSS_ARGS = """
    Args:
        pred (Tensor[n, 4]): predicted boxes ``(x1, y1, x2, y2)``, float16/32/64.
        target (Tensor[n, 4]): target boxes, a floating dtype.
        weight (Tensor[n], optional): per-box weight.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): with ``'mean'``, divide the weighted sum by
            ``avg_factor + eps`` (float32 epsilon); not allowed with ``'sum'``."""


def simple(
    elementwise: Callable[..., Tensor],
    pred: Any,
    target: Any,
    weight: Optional[Tensor],
    reduction: str,
    avg_factor: AvgFactor,
    out_dtype: Any,
    *config: Any,
) -> Tensor:
    return finish(elementwise, pred, target, weight, reduction, avg_factor, out_dtype, 0, *config)


def fill_docs(*fns: Callable[..., Any]) -> None:
    """Put the arguments every loss function shares in place of ``{args}`` in the docstrings."""
    for fn in fns:
        # a blank line first: the placeholder follows text or a math block
        fn.__doc__ = (fn.__doc__ or "").replace("    {args}", "\n" + _LOSS_ARGS.strip("\n"))


class BoxLoss(nn.Cell):
    """Configuration and ``forward`` shared by the IoU-loss Cells: a subclass gives its loss
    function's call in ``_loss``.

    Args:
        eps, reduction, loss_weight: the Cell's arguments.
        mean_weight: a ``(n, 4)`` weight is averaged to ``(n,)`` (all but Bounded IoU).
        zero_unless_none: the ``(pred * weight).sum()`` of a weight with no positive entry is
            skipped for ``reduction='none'`` (IoULoss).
    """

    def __init__(
        self,
        eps: float,
        reduction: str,
        loss_weight: float,
        mean_weight: bool = True,
        zero_unless_none: bool = False,
    ) -> None:
        super().__init__()
        check_reduction(reduction)
        self.eps = check_number(eps, "eps")
        self.reduction = reduction
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self.mean_weight = mean_weight
        self.zero_unless_none = zero_unless_none

    def _reduction(self, reduction_override: Optional[str]) -> str:
        if reduction_override is None:
            return self.reduction
        check_reduction(reduction_override, "reduction_override")
        return reduction_override

    def _loss(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor],
        reduction: str,
        avg_factor: AvgFactor,
    ) -> Tensor:
        raise NotImplementedError

    def _fused_plan(self, *call: Any) -> Tuple[Any, ...]:
        """``(pred, target, weight, reduction, avg_factor)`` -> the plan of one kernel for the
        whole loss (a subclass with a kernel), else ``()``."""
        return ()

    def _fused_loss(self, plan: Tuple[Any, ...], *call: Any) -> Tensor:
        """``(plan, pred, target, weight, avg_factor)`` -> the loss by that kernel."""
        raise NotImplementedError

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        """The ``forward`` of MMDetection's IoU-loss modules."""
        reduction = self._reduction(reduction_override)
        pred = check_float_tensor(pred, "pred")
        shortcut = not (self.zero_unless_none and reduction == "none")
        if weight is not None:
            weight = check_tensor(weight, "weight")
            if weight.size == 0 and shortcut:
                # no positive entry, statically (graph mode compiles only MMDetection's shortcut)
                return zero_weight_sum(pred, weight)
            refusal = self._refusal(pred, weight, reduction, avg_factor)
            if refusal and shortcut:
                return refuse_unless_zero(pred, weight, refusal)
            if refusal:
                raise ValueError(refusal)
        # one kernel for the whole loss (zero-weight shortcut, weight averaging, loss_weight)
        plan = self._fused_plan(pred, target, weight, reduction, avg_factor)
        if plan:
            return self._fused_loss(plan, pred, target, weight, avg_factor)
        if weight is None or not shortcut:
            return self._weighted(pred, target, weight, reduction, avg_factor)
        if compiling():
            # A graph compiles both branches, and their results must join: the zero sum takes
            # the loss's dtype (MMDetection's float16 boxes give a float32 loss, the sum float16)
            loss = self._weighted(pred, target, weight, reduction, avg_factor)
            if not ops.any(weight > 0):
                return zero_weight_sum(pred, weight).astype(loss.dtype)
            return loss
        if not ops.any(weight > 0):
            return zero_weight_sum(pred, weight)
        return self._weighted(pred, target, weight, reduction, avg_factor)

    def _refusal(self, pred: Tensor, weight: Tensor, reduction: str, avg_factor: AvgFactor) -> str:
        """The error MMDetection raises past its zero-weight shortcut for this call, known
        before the values (``''``: none): the weight's shape, then ``avg_factor`` with 'sum'."""
        loss_shape = tuple(pred.shape) if not self.mean_weight else tuple(pred.shape[:-1])
        weight_shape = tuple(weight.shape)
        if self.mean_weight and weight.ndim > 1:
            if weight.shape != pred.shape:
                return (
                    f"a weight of more than 1 dim must have pred's shape {pred.shape}, but got "
                    f"weight.shape={weight.shape}"
                )
            weight_shape = weight_shape[:-1]  # averaged over the last dim
        return weight_shape_error(loss_shape, weight_shape) or static_refusal(reduction, avg_factor)

    def _weighted(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor],
        reduction: str,
        avg_factor: AvgFactor,
    ) -> Tensor:
        """The loss past MMDetection's zero-weight shortcut, times ``loss_weight``."""
        if weight is not None and self.mean_weight and weight.ndim > 1:
            weight = tm.tmean_last(weight)  # MMDetection: (n, 4) -> (n,); shape checked in forward
        loss = self._loss(pred, target, weight, reduction, avg_factor)
        if self.loss_weight == 1.0:
            return loss  # x * 1.0 is x (NaN and -0.0 too), gradient included: one op less
        return tm.scale(loss, self.loss_weight)


def refuse_unless_zero(pred: Tensor, weight: Tensor, refusal: str) -> Tensor:
    """A call MMDetection refuses only past its zero-weight shortcut: the shortcut's
    ``(pred * weight).sum()`` for a weight with no positive entry, else ``ValueError(refusal)``,
    in a graph when it runs (the refused branch is never compiled: it would raise then)."""
    if ops.any(weight > 0):
        raise ValueError(refusal)
    return zero_weight_sum(pred, weight)


def zero_weight_sum(pred: Tensor, weight: Tensor) -> Tensor:
    """MMDetection's result for a weight with no positive entry
    (``if weight is not None and not torch.any(weight > 0)``): a sum that is 0 for zero weights
    and keeps the graph connected (no loss_weight, no reduction)."""
    if pred.ndim == weight.ndim + 1:
        weight = weight.expand_dims(1)
    return _sum(tm.mul(pred, weight))


CELL_SHAPE = """
    Shape:
        - pred, target: :math:`(n, 4)` boxes ``(x1, y1, x2, y2)``.
        - weight: :math:`(n,)` or :math:`(n, 4)` (averaged over the last dim).
        - output: scalar, or :math:`(n,)` with ``'none'``."""
