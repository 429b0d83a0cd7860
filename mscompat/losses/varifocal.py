"""Varifocal loss (`Zhang et al., 2021 <https://arxiv.org/abs/2008.13367>`_), as MMDetection's
``varifocal_loss.py``."""

from __future__ import annotations

from typing import Optional

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import (
    check_bool,
    check_float_tensor,
    check_number,
    check_reduction,
    check_same_shape,
    check_tensor,
)
from mscompat.custom_ops import class_loss as _kernels
from mscompat.custom_ops.registry import TensorSpec, call, device_target, register
from mscompat.losses import _ops
from mscompat.losses.utils import AvgFactor, _check_avg_factor, scalar_like, weight_reduce_loss

__all__ = ["VarifocalLoss", "varifocal_loss"]


def _vfl_elementwise(
    pred: Tensor, target: Tensor, alpha: float, gamma: float, iou_weighted: bool
) -> Tensor:
    """MMDetection's op sequence; the masks are ``.float()`` (float32), so a float16 ``pred``
    gives a float32 loss."""
    x, half = _ops.widen(pred)
    t = target.astype(x.dtype)
    out = _ops._promote(pred.dtype, ms.float32)
    p = _ops.rnd(ops.sigmoid(x), half)
    pos = (t > 0).astype(x.dtype)
    neg = (t <= 0).astype(x.dtype)
    diff = _ops.rnd(ops.abs(_ops.rnd(p - t, half)), half)
    modulated = _ops.rnd(scalar_like(alpha, x) * _ops.rnd(_ops.power(diff, gamma), half), half)
    # rnd(t): the float16 target's gradient from this float32 product is rounded on its own
    focal_weight = (_ops.rnd(t, half) * pos if iou_weighted else pos) + modulated * neg
    bce = _ops.rnd(_ops.bce_logits(x, t, half), half)
    return (bce * focal_weight).astype(out)


register("losses.varifocal_loss", "composite", note="MindSpore ops, MMDetection's sequence")(
    _vfl_elementwise
)


def _vfl_kernel_supports(pred: TensorSpec, *_: object) -> Optional[str]:
    return _ops.kernel_dtype(pred)


@_kernels.LIBRARY.backend(
    "losses.varifocal_loss", "fused C++ forward and backward kernels", _vfl_kernel_supports
)
def _vfl_aot(
    pred: Tensor, target: Tensor, alpha: float, gamma: float, iou_weighted: bool
) -> Tensor:
    coef = Tensor([alpha, gamma, 1.0 if iou_weighted else 0.0], pred.dtype)
    return _kernels.VFL[device_target()](pred, target.astype(pred.dtype), coef)


def varifocal_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    alpha: float = 0.75,
    gamma: float = 2.0,
    iou_weighted: bool = True,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
) -> Tensor:
    """Varifocal loss, as MMDetection's ``mmdet.models.losses.varifocal_loss``.

    With :math:`p = \\sigma(x)` and IoU-aware target :math:`q`:

    .. math::
        \\ell = \\operatorname{BCEWithLogits}(x, q) \\cdot \\begin{cases}
        q \\ (\\text{or } 1 \\text{ without iou\\_weighted}) & q > 0\\\\
        \\alpha\\,|p - q|^{\\gamma} & q \\le 0
        \\end{cases}

    then :func:`~mscompat.losses.weight_reduce_loss`.

    Args:
        pred (Tensor[N, C]): logits, float16/32/64.
        target (Tensor[N, C]): IoU-aware classification targets (cast to ``pred``'s dtype).
        weight (Tensor, optional): elementwise weight broadcastable to the loss.
        alpha (float): weight of the negatives. Default: 0.75.
        gamma (float): exponent of the modulating factor. Default: 2.0.
        iou_weighted (bool): weight the positives by their target. Default: True.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): divide the sum by ``avg_factor + eps``.

    Returns:
        Tensor: ``pred``'s shape for ``'none'``, else 0-d; float32 for float16 ``pred``
        (MMDetection's masks are ``.float()``).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import varifocal_loss
        >>> pred = ms.Tensor([[1.0, -2.0], [0.5, 0.0]])
        >>> target = ms.Tensor([[0.8, 0.0], [0.0, 0.0]])
        >>> varifocal_loss(pred, target, reduction="none").shape
        (2, 2)
    """
    pred = check_float_tensor(pred, "pred")
    target = check_same_shape(pred, check_tensor(target, "target"), "pred", "target")
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    check_number(alpha, "alpha")
    check_number(gamma, "gamma")
    check_bool(iou_weighted, "iou_weighted")
    loss = call("losses.varifocal_loss", pred, target, float(alpha), float(gamma), iou_weighted)
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


class VarifocalLoss(nn.Cell):
    """MMDetection's ``VarifocalLoss``. See :func:`varifocal_loss` (times ``loss_weight``).

    Args:
        use_sigmoid (bool): must be True. Default: True.
        alpha (float): weight of the negatives, >= 0. Default: 0.75.
        gamma (float): exponent of the modulating factor. Default: 2.0.
        iou_weighted (bool): weight the positives by their target. Default: True.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.

    Shape:
        - pred, target: :math:`(N, C)`; output: scalar or :math:`(N, C)`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import VarifocalLoss
        >>> pred = ms.Tensor([[1.0, -2.0], [0.5, 0.0]])
        >>> target = ms.Tensor([[0.8, 0.0], [0.0, 0.0]])
        >>> VarifocalLoss()(pred, target).shape
        ()
    """

    def __init__(
        self,
        use_sigmoid: bool = True,
        alpha: float = 0.75,
        gamma: float = 2.0,
        iou_weighted: bool = True,
        reduction: str = "mean",
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__()
        if use_sigmoid is not True:
            raise ValueError(
                f"Only sigmoid varifocal loss supported now (use_sigmoid={use_sigmoid!r})"
            )
        if check_number(alpha, "alpha") < 0:
            raise ValueError(f"alpha must be >= 0, but got {alpha}")
        self.use_sigmoid = use_sigmoid
        self.alpha = float(alpha)
        self.gamma = check_number(gamma, "gamma")
        self.iou_weighted = check_bool(iou_weighted, "iou_weighted")
        self.reduction = reduction
        self.loss_weight = check_number(loss_weight, "loss_weight")

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        if reduction_override is not None:
            check_reduction(reduction_override, "reduction_override")
        reduction = self.reduction if reduction_override is None else reduction_override
        loss = varifocal_loss(
            pred, target, weight, self.alpha, self.gamma, self.iou_weighted, reduction, avg_factor
        )
        return _ops.scale(loss, self.loss_weight)
