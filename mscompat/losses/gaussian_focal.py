"""Gaussian focal loss of heatmaps (CornerNet / CenterNet), as MMDetection's
``gaussian_focal_loss.py``."""

from __future__ import annotations

from typing import Optional

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import (
    check_float_tensor,
    check_number,
    check_reduction,
    check_same_shape,
    check_tensor,
    is_float_dtype,
)
from mscompat.custom_ops.registry import call, register
from mscompat.losses import _ops
from mscompat.losses.utils import AvgFactor, _check_avg_factor, scalar_like, weight_reduce_loss

__all__ = ["GaussianFocalLoss", "gaussian_focal_loss", "gaussian_focal_loss_with_pos_inds"]

_EPS = 1e-12


def _pos_term(x: Tensor, half: bool, alpha: float) -> Tensor:
    """``-(p + eps).log() * (1 - p) ** alpha`` in PyTorch's op order (widened ``x``)."""
    log = _ops.rnd(ops.log(_ops.rnd(x + scalar_like(_EPS, x), half)), half)
    return _ops.rnd(
        _ops.rnd(-log, half) * _ops.rnd(_ops.power(_ops.rnd(1 - x, half), alpha), half), half
    )


def _neg_term(x: Tensor, t: Tensor, half: bool, alpha: float, gamma: float) -> Tensor:
    """``-(1 - p + eps).log() * p ** alpha * (1 - t) ** gamma``."""
    neg_w = _ops.rnd(_ops.power(_ops.rnd(1 - t, half), gamma), half)
    one_minus = _ops.rnd(_ops.rnd(1 - x, half) + scalar_like(_EPS, x), half)
    log = _ops.rnd(-_ops.rnd(ops.log(one_minus), half), half)
    return _ops.rnd(_ops.rnd(log * _ops.rnd(_ops.power(x, alpha), half), half) * neg_w, half)


def _gfl_elementwise(
    pred: Tensor, target: Tensor, alpha: float, gamma: float, pos_weight: float, neg_weight: float
) -> Tensor:
    x, half = _ops.widen(pred)
    t = target.astype(x.dtype)
    pos = _ops.rnd(_pos_term(x, half, alpha) * (t == 1).astype(x.dtype), half)
    neg = _neg_term(x, t, half, alpha, gamma)
    loss = _ops.rnd(
        _ops.rnd(scalar_like(pos_weight, x) * pos, half)
        + _ops.rnd(scalar_like(neg_weight, x) * neg, half),
        half,
    )
    return _ops.narrow(loss, half)


register("losses.gaussian_focal_loss", "composite", note="MindSpore ops")(_gfl_elementwise)


def _check(
    pred: Tensor,
    target: Tensor,
    reduction: str,
    avg_factor: AvgFactor,
    alpha: float,
    gamma: float,
    pos_weight: float,
    neg_weight: float,
) -> Tensor:
    pred = check_float_tensor(pred, "pred")
    target = check_tensor(target, "gaussian_target")
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    for value, name in (
        (alpha, "alpha"),
        (gamma, "gamma"),
        (pos_weight, "pos_weight"),
        (neg_weight, "neg_weight"),
    ):
        check_number(value, name)
    if target.dtype != pred.dtype:
        raise TypeError(
            f"gaussian_target must have pred's dtype {pred.dtype}, but got {target.dtype}"
        )
    return target


def gaussian_focal_loss(
    pred: Tensor,
    gaussian_target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    alpha: float = 2.0,
    gamma: float = 4.0,
    pos_weight: float = 1.0,
    neg_weight: float = 1.0,
) -> Tensor:
    """Focal loss of a Gaussian heatmap, as MMDetection's ``gaussian_focal_loss``.

    With probabilities :math:`p`, heatmap target :math:`t` and :math:`\\epsilon = 10^{-12}`:

    .. math::
        \\ell = -w_+ [t = 1] \\log(p + \\epsilon)(1 - p)^{\\alpha}
        - w_- \\log(1 - p + \\epsilon)\\,p^{\\alpha}(1 - t)^{\\gamma}

    then :func:`~mscompat.losses.weight_reduce_loss`.

    Args:
        pred (Tensor): probabilities (a sigmoid output), any shape, float16/32/64.
        gaussian_target (Tensor): heatmap targets in [0, 1], ``pred``'s shape and dtype.
        weight (Tensor, optional): elementwise weight broadcastable to the loss.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): divide the sum by ``avg_factor + eps``.
        alpha (float): exponent of the probability factor. Default: 2.0.
        gamma (float): exponent of the negatives' ``1 - t``. Default: 4.0.
        pos_weight (float): :math:`w_+`. Default: 1.0.
        neg_weight (float): :math:`w_-`. Default: 1.0.

    Returns:
        Tensor: ``pred``'s shape for ``'none'``, else 0-d.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import gaussian_focal_loss
        >>> pred = ms.Tensor([[0.9, 0.1], [0.3, 0.6]])
        >>> target = ms.Tensor([[1.0, 0.0], [0.5, 0.8]])
        >>> gaussian_focal_loss(pred, target, reduction="none").shape
        (2, 2)
    """
    target = _check(
        pred, gaussian_target, reduction, avg_factor, alpha, gamma, pos_weight, neg_weight
    )
    check_same_shape(pred, target, "pred", "gaussian_target")
    loss = call(
        "losses.gaussian_focal_loss",
        pred,
        target,
        float(alpha),
        float(gamma),
        float(pos_weight),
        float(neg_weight),
    )
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


def gaussian_focal_loss_with_pos_inds(
    pred: Tensor,
    gaussian_target: Tensor,
    pos_inds: Tensor,
    pos_labels: Tensor,
    alpha: float = 2.0,
    gamma: float = 4.0,
    pos_weight: float = 1.0,
    neg_weight: float = 1.0,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
) -> Tensor:
    """Gaussian focal loss with the positives given by index, as MMDetection 3.3's
    ``gaussian_focal_loss_with_pos_inds`` (CenterNet-update): the positive term is taken at
    ``pred[pos_inds, pos_labels]`` and reduced on its own, the negative term everywhere:

    .. math::
        \\ell = w_+ \\operatorname{reduce}\\big(-\\log(p_{k} + \\epsilon)(1 - p_{k})^{\\alpha}
        \\big) + w_- \\operatorname{reduce}\\big(-\\log(1 - p + \\epsilon)\\,p^{\\alpha}
        (1 - t)^{\\gamma}\\big)

    Args:
        pred (Tensor[N, C]): probabilities.
        gaussian_target (Tensor[N, C]): heatmap targets.
        pos_inds (Tensor[P]): rows of the positives (integer).
        pos_labels (Tensor[P]): their classes (integer).
        alpha, gamma, pos_weight, neg_weight: as :func:`gaussian_focal_loss`.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): divides each term's sum.

    Returns:
        Tensor: 0-d; with ``'none'``, the broadcast sum of the ``(P, 1)`` positive and
        ``(N, C)`` negative terms (as PyTorch broadcasts them). With no positives the positive
        term's mean is NaN, as PyTorch's mean of an empty tensor (give ``avg_factor``), in
        PyNative mode; under ``ms.jit`` MindSpore 2.10 gives 0 there.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import gaussian_focal_loss_with_pos_inds
        >>> pred = ms.Tensor([[0.9, 0.1], [0.3, 0.6]])
        >>> target = ms.Tensor([[1.0, 0.0], [0.5, 0.8]])
        >>> inds, labels = ms.Tensor([0], ms.int64), ms.Tensor([0], ms.int64)
        >>> gaussian_focal_loss_with_pos_inds(pred, target, inds, labels, avg_factor=1.0).shape
        ()
    """
    target = _check(
        pred, gaussian_target, reduction, avg_factor, alpha, gamma, pos_weight, neg_weight
    )
    pos_inds = check_tensor(pos_inds, "pos_inds")
    pos_labels = check_tensor(pos_labels, "pos_labels")
    for t, name in ((pos_inds, "pos_inds"), (pos_labels, "pos_labels")):
        if is_float_dtype(t.dtype) or t.dtype == ms.bool_ or t.ndim != 1:
            raise TypeError(f"{name} must be a 1-D integer Tensor, but got {t.dtype} {t.shape}")
    if pred.ndim != 2 or target.shape != pred.shape or pos_inds.shape != pos_labels.shape:
        raise ValueError(
            "pred and gaussian_target must have shape (N, C), pos_inds and pos_labels (P,), "
            f"but got {pred.shape}, {target.shape}, {pos_inds.shape} and {pos_labels.shape}"
        )
    n, c = pred.shape
    _ops.check_label_range(pos_inds, -n, n, "pos_inds", f"pos_inds: each must be in [-{n}, {n})")
    _ops.check_label_range(
        pos_labels, -c, c, "pos_labels", f"pos_labels: each must be in [-{c}, {c})"
    )
    x, half = _ops.widen(pred)
    if pos_inds.size == 0:
        pos = ops.zeros((0, 1), x.dtype)
    else:
        rows = ops.where(pos_inds < 0, pos_inds + n, pos_inds).astype(ms.int64)
        cols = ops.where(pos_labels < 0, pos_labels + c, pos_labels).astype(ms.int64)
        picked = ops.gather(x, rows, 0)
        picked = ops.gather_elements(picked, 1, cols.reshape(-1, 1))
        pos = _pos_term(picked, half, float(alpha))
    neg = _neg_term(x, target.astype(x.dtype), half, float(alpha), float(gamma))
    if pos_inds.size == 0 and reduction != "none":
        # PyTorch's reduction of the empty positive term, spelled out (graph mode would
        # otherwise fold the empty tensor's mean to 0): mean NaN, sum and avg_factor 0
        nan = float("nan") if reduction == "mean" and avg_factor is None else 0.0
        pos_loss = ops.fill(pred.dtype, (), nan)
    else:
        pos_loss = weight_reduce_loss(_ops.narrow(pos, half), None, reduction, avg_factor)
    neg_loss = weight_reduce_loss(_ops.narrow(neg, half), None, reduction, avg_factor)
    return _ops.scale(pos_loss, float(pos_weight)) + _ops.scale(neg_loss, float(neg_weight))


class GaussianFocalLoss(nn.Cell):
    """MMDetection's ``GaussianFocalLoss``. See :func:`gaussian_focal_loss`.

    Calls :func:`gaussian_focal_loss`, or
    :func:`gaussian_focal_loss_with_pos_inds` when ``pos_inds`` is given, times
    ``loss_weight``.

    Args:
        alpha (float): Default: 2.0.
        gamma (float): Default: 4.0.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.
        pos_weight (float): Default: 1.0.
        neg_weight (float): Default: 1.0.

    Shape:
        - pred, target: any shape (:math:`(N, C)` with ``pos_inds``).
        - pos_inds, pos_labels: :math:`(P)`.
        - output: scalar, or elementwise with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import GaussianFocalLoss
        >>> pred = ms.Tensor([[0.9, 0.1], [0.3, 0.6]])
        >>> target = ms.Tensor([[1.0, 0.0], [0.5, 0.8]])
        >>> GaussianFocalLoss()(pred, target).shape
        ()
    """

    def __init__(
        self,
        alpha: float = 2.0,
        gamma: float = 4.0,
        reduction: str = "mean",
        loss_weight: float = 1.0,
        pos_weight: float = 1.0,
        neg_weight: float = 1.0,
    ) -> None:
        super().__init__()
        self.alpha = check_number(alpha, "alpha")
        self.gamma = check_number(gamma, "gamma")
        self.reduction = reduction
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self.pos_weight = check_number(pos_weight, "pos_weight")
        self.neg_weight = check_number(neg_weight, "neg_weight")

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        pos_inds: Optional[Tensor] = None,
        pos_labels: Optional[Tensor] = None,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        if reduction_override is not None:
            check_reduction(reduction_override, "reduction_override")
        reduction = self.reduction if reduction_override is None else reduction_override
        if pos_inds is not None:
            if pos_labels is None:
                raise ValueError("pos_labels must be given with pos_inds")
            loss = gaussian_focal_loss_with_pos_inds(
                pred,
                target,
                pos_inds,
                pos_labels,
                self.alpha,
                self.gamma,
                self.pos_weight,
                self.neg_weight,
                reduction,
                avg_factor,
            )
        else:
            loss = gaussian_focal_loss(
                pred,
                target,
                weight,
                reduction,
                avg_factor,
                self.alpha,
                self.gamma,
                self.pos_weight,
                self.neg_weight,
            )
        return _ops.scale(loss, self.loss_weight)
