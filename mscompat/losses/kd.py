"""Knowledge-distillation KL-divergence loss (`Hinton et al., 2015
<https://arxiv.org/abs/1503.02531>`_), as MMDetection's ``kd_loss.py`` (LD, GFL-KD)."""

from __future__ import annotations

from typing import Optional

from mindspore import Tensor, nn, ops

from mscompat._checks import (
    check_bool,
    check_float_tensor,
    check_number,
    check_reduction,
    check_same_shape,
    check_tensor,
)
from mscompat.losses import _ops
from mscompat.losses.utils import AvgFactor, _check_avg_factor, scalar_like, weight_reduce_loss

__all__ = ["KnowledgeDistillationKLDivLoss", "knowledge_distillation_kl_div_loss"]


# Beyond it the loss is T^2 times float rounding noise (1e12 x 1e-7), not a divergence: refused.
_MAX_T = 1e6


def _kd_rows(pred: Tensor, soft_label: Tensor, T: float, detach_target: bool) -> Tensor:
    x, half = _ops.widen(pred)
    s, _ = _ops.widen(soft_label.astype(pred.dtype))
    temp = scalar_like(T, x)
    # softmax, log_softmax and log rounded once from float64: the KL terms cancel, so
    # MindSpore's float32 kernels' ulp errors would show 100x amplified (see _ops.in_float64)
    target = _ops.rnd(_ops.in_float64(_ops.softmax, _ops.rnd(s / temp, half), 1), half)
    if detach_target:
        target = ops.stop_gradient(target)
    logp = _ops.rnd(_ops.in_float64(_ops.log_softmax, _ops.rnd(x / temp, half), 1), half)
    # F.kl_div(reduction="none") = xlogy(target, target) - target * input
    safe = ops.where(target > 0, target, ops.ones_like(target))
    log_t = _ops.in_float64(ops.log, safe)
    xlogy = ops.where(target > 0, _ops.rnd(target * log_t, half), ops.zeros_like(target))
    kl = _ops.rnd(_ops.rnd(xlogy, half) - _ops.rnd(target * logp, half), half)
    c = pred.shape[1]
    mean = kl.sum(1) / scalar_like(float(c), x)
    loss = _ops.rnd(_ops.rnd(mean, half) * scalar_like(T * T, x), half)
    return _ops.narrow(loss, half)


def knowledge_distillation_kl_div_loss(
    pred: Tensor,
    soft_label: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    *,
    T: float,
    detach_target: bool = True,
) -> Tensor:
    """KL divergence of softened distributions, as MMDetection's
    ``knowledge_distillation_kl_div_loss`` (``T`` is required, as there).

    .. math::
        \\ell_i = \\frac{T^2}{C} \\sum_c q_{ic}\\big(\\log q_{ic} - \\log \\operatorname{softmax}
        (x_i / T)_c\\big), \\qquad q_i = \\operatorname{softmax}(s_i / T)

    then :func:`~mscompat.losses.weight_reduce_loss`.

    Args:
        pred (Tensor[N, C]): student logits.
        soft_label (Tensor[N, C]): teacher logits.
        weight (Tensor[N], optional): per-sample weight.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): divide the sum by ``avg_factor + eps``.
        T (float): temperature (keyword), at most 1e6 (beyond, the result would be
            :math:`T^2` times rounding noise; MMDetection accepts it).
        detach_target (bool): no gradient to ``soft_label``. Default: True.

    Returns:
        Tensor: ``(N,)`` for ``'none'``, else 0-d.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import knowledge_distillation_kl_div_loss
        >>> pred = ms.Tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 2.0]])
        >>> teacher = ms.Tensor([[1.5, 2.5, 0.0], [0.0, -1.0, 3.0]])
        >>> knowledge_distillation_kl_div_loss(pred, teacher, reduction="none", T=2).shape
        (2,)
    """
    pred = check_float_tensor(pred, "pred")
    soft_label = check_same_shape(
        pred, check_tensor(soft_label, "soft_label"), "pred", "soft_label"
    )
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    if not 0 < check_number(T, "T") <= _MAX_T:
        raise ValueError(f"T must be in (0, {_MAX_T:g}], but got {T}")
    check_bool(detach_target, "detach_target")
    if pred.ndim != 2:
        raise ValueError(f"pred must have shape (N, C), but got pred.shape={pred.shape}")
    if pred.shape[1] == 0:
        loss = ops.fill(pred.dtype, pred.shape[:1], float("nan"))
    else:
        loss = _kd_rows(pred, soft_label, float(T), detach_target)
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


class KnowledgeDistillationKLDivLoss(nn.Cell):
    """MMDetection's ``KnowledgeDistillationKLDivLoss``.
    See :func:`knowledge_distillation_kl_div_loss` (times ``loss_weight``).

    Args:
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.
        T (float): temperature, >= 1. Default: 10.

    Shape:
        - pred, soft_label: :math:`(N, C)`; output: scalar or :math:`(N)`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import KnowledgeDistillationKLDivLoss
        >>> pred = ms.Tensor([[1.0, 2.0, 0.5], [0.1, -1.0, 2.0]])
        >>> teacher = ms.Tensor([[1.5, 2.5, 0.0], [0.0, -1.0, 3.0]])
        >>> KnowledgeDistillationKLDivLoss(T=2)(pred, teacher).shape
        ()
    """

    def __init__(self, reduction: str = "mean", loss_weight: float = 1.0, T: float = 10) -> None:
        super().__init__()
        if not 1 <= check_number(T, "T") <= _MAX_T:
            raise ValueError(f"T must be >= 1 (and <= {_MAX_T:g}), but got {T}")
        self.reduction = reduction
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self.T = T

    def construct(
        self,
        pred: Tensor,
        soft_label: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        if reduction_override is not None:
            check_reduction(reduction_override, "reduction_override")
        reduction = self.reduction if reduction_override is None else reduction_override
        loss = knowledge_distillation_kl_div_loss(
            pred, soft_label, weight, reduction, avg_factor, T=self.T
        )
        return _ops.scale(loss, self.loss_weight)
