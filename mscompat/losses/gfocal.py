"""Generalized Focal Loss (`Li et al., 2020 <https://arxiv.org/abs/2006.04388>`_), as
MMDetection's ``gfocal_loss.py``: quality focal loss (QFL) and distribution focal loss (DFL)."""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import (
    check_bool,
    check_float_tensor,
    check_number,
    check_reduction,
    check_tensor,
    is_float_dtype,
)
from mscompat.custom_ops import class_loss as _kernels
from mscompat.custom_ops import dfl as _dfl_kernels
from mscompat.custom_ops.registry import TensorSpec, call, device_target, register
from mscompat.losses import _ops
from mscompat.losses.cross_entropy import _ce_elementwise
from mscompat.losses.utils import (
    _AVG_EPS,
    AvgFactor,
    _avg_factor_div,
    _check_avg_factor,
    _check_weight_broadcast,
    weight_reduce_loss,
)

__all__ = [
    "DistributionFocalLoss",
    "QualityFocalLoss",
    "distribution_focal_loss",
    "quality_focal_loss",
    "quality_focal_loss_tensor_target",
    "quality_focal_loss_with_prob",
]

QflTarget = Union[Tuple[Tensor, Tensor], Tensor]


def _qfl_elementwise(
    pred: Tensor, pos: Tensor, score: Tensor, beta: float, activated: bool
) -> Tensor:
    """Per-element QFL before the class sum: ``pos`` marks the elements whose target is
    ``score`` (broadcast), elsewhere the target is 0."""
    x, half = _ops.widen(pred)
    s = score.astype(x.dtype)
    if activated:
        p = x
        neg = _ops.bce_prob(x, ops.zeros_like(x), half)
        pos_loss = _ops.bce_prob(x, ops.broadcast_to(s, x.shape), half)
    else:
        p = _ops.rnd(ops.sigmoid(x), half)
        neg = _ops.bce_logits(x, ops.zeros_like(x), half)
        pos_loss = _ops.bce_logits(x, ops.broadcast_to(s, x.shape), half)
    neg = _ops.rnd(neg * _ops.rnd(_ops.power(p, beta), half), half)
    diff = _ops.rnd(ops.abs(_ops.rnd(s - p, half)), half)
    pos_loss = _ops.rnd(pos_loss * _ops.rnd(_ops.power(diff, beta), half), half)
    loss = ops.where(pos, pos_loss, neg)
    return _ops.narrow(loss, half)


register("losses.quality_focal_loss", "composite", note="MindSpore ops, a select per element")(
    _qfl_elementwise
)


def _qfl_kernel_supports(
    pred: TensorSpec, pos: TensorSpec, score: TensorSpec, beta: float, activated: bool
) -> Optional[str]:
    if activated:
        return "probabilities (activated=True) are not supported by the kernel (logits)"
    return _ops.kernel_dtype(pred)


@_kernels.LIBRARY.backend(
    "losses.quality_focal_loss", "fused C++ forward and backward kernels", _qfl_kernel_supports
)
def _qfl_aot(pred: Tensor, pos: Tensor, score: Tensor, beta: float, activated: bool) -> Tensor:
    coef = Tensor([beta], pred.dtype)
    return _kernels.QFL[device_target()](pred, pos, score.astype(pred.dtype), coef)


def _row_sum(loss: Tensor) -> Tensor:
    """``loss.sum(dim=1)`` (float16 accumulated in float32)."""
    if loss.shape[1] == 0:
        return ops.zeros(loss.shape[:1], loss.dtype)
    if loss.dtype == _ops.HALF:
        return loss.astype(ms.float32).sum(1).astype(_ops.HALF)
    return loss.sum(1)


def _check_common(pred: Tensor, reduction: str, avg_factor: AvgFactor, beta: float) -> None:
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    check_number(beta, "beta")
    if pred.ndim != 2:
        raise ValueError(f"pred must have shape (N, C), but got pred.shape={pred.shape}")


def _pair_target(pred: Tensor, target: QflTarget) -> Tuple[Tensor, Tensor]:
    if not isinstance(target, (tuple, list)) or len(target) != 2:
        raise ValueError(
            "target for QFL must be a tuple of two elements, including category label and "
            "quality label, respectively"
        )
    label = check_tensor(target[0], "label")
    score = check_tensor(target[1], "score")
    if is_float_dtype(label.dtype) or label.dtype == ms.bool_:
        raise TypeError(f"label must hold class indices (an integer dtype), but got {label.dtype}")
    if label.shape != pred.shape[:1] or score.shape != pred.shape[:1]:
        raise ValueError(
            f"label and score must have shape (N,)=({pred.shape[0]},), but got "
            f"label.shape={label.shape} and score.shape={score.shape}"
        )
    return label, score


def _qfl_pair(
    pred: Tensor,
    target: QflTarget,
    weight: Optional[Tensor],
    reduction: str,
    avg_factor: AvgFactor,
    beta: float,
    activated: bool,
) -> Tensor:
    pred = check_float_tensor(pred, "pred")
    _check_common(pred, reduction, avg_factor, beta)
    label, score = _pair_target(pred, target)
    if activated:
        _ops.check_prob(pred)
    # labels outside [0, C) (background = C, or negative) have no positive class
    pos = _ops.onehot(label, pred.shape[1])
    loss = call(
        "losses.quality_focal_loss", pred, pos, score.reshape(-1, 1), float(beta), activated
    )
    return weight_reduce_loss(_row_sum(loss), weight, reduction, avg_factor)


def quality_focal_loss(
    pred: Tensor,
    target: QflTarget,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    beta: float = 2.0,
) -> Tensor:
    """Quality focal loss, as MMDetection's ``quality_focal_loss``.

    With :math:`p = \\sigma(x)`, per anchor :math:`i` with class label :math:`y_i` and quality
    score :math:`s_i`:

    .. math::
        \\ell_i = \\sum_c \\begin{cases}
        \\operatorname{BCEWithLogits}(x_{ic}, s_i)\\,|s_i - p_{ic}|^{\\beta} & c = y_i\\\\
        \\operatorname{BCEWithLogits}(x_{ic}, 0)\\,p_{ic}^{\\beta} & \\text{otherwise}
        \\end{cases}

    then :func:`~mscompat.losses.weight_reduce_loss`. A label outside ``[0, C)`` (the
    background ``C``) has no positive class.

    Args:
        pred (Tensor[N, C]): logits.
        target (tuple[Tensor[N], Tensor[N]]): ``(label, score)``: class indices and quality
            scores (IoU) in [0, 1].
        weight (Tensor[N], optional): per-anchor weight.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): divide the sum by ``avg_factor + eps``.
        beta (float): exponent of the modulating factor. Default: 2.0.

    Returns:
        Tensor: ``(N,)`` for ``'none'``, else 0-d; ``pred``'s dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import quality_focal_loss
        >>> pred = ms.Tensor([[1.0, -2.0], [0.5, 0.0]])
        >>> target = (ms.Tensor([0, 2], ms.int64), ms.Tensor([0.8, 0.0]))
        >>> quality_focal_loss(pred, target, reduction="none").shape
        (2,)
    """
    return _qfl_pair(pred, target, weight, reduction, avg_factor, beta, False)


def quality_focal_loss_with_prob(
    pred: Tensor,
    target: QflTarget,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    beta: float = 2.0,
) -> Tensor:
    """Quality focal loss on probabilities, as MMDetection's ``quality_focal_loss_with_prob``:
    :func:`quality_focal_loss` with :math:`p` = ``pred`` and PyTorch's
    ``binary_cross_entropy`` (logs clamped at -100) in place of the BCE with logits.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import quality_focal_loss_with_prob
        >>> prob = ms.Tensor([[0.7, 0.1], [0.4, 0.5]])
        >>> target = (ms.Tensor([0, 2], ms.int64), ms.Tensor([0.8, 0.0]))
        >>> quality_focal_loss_with_prob(prob, target).shape
        ()
    """
    return _qfl_pair(pred, target, weight, reduction, avg_factor, beta, True)


def quality_focal_loss_tensor_target(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    beta: float = 2.0,
    activated: bool = False,
) -> Tensor:
    """Quality focal loss with a dense target, as MMDetection's
    ``quality_focal_loss_tensor_target``: the elements with ``target != 0`` are positives
    with score ``target``, the others negatives (the formula of :func:`quality_focal_loss`).

    Args:
        pred (Tensor[N, C]): logits, or probabilities with ``activated``.
        target (Tensor[N, C]): soft targets (cast to ``pred``'s dtype).
        weight, reduction, avg_factor, beta: as :func:`quality_focal_loss`.
        activated (bool): ``pred`` holds probabilities. Default: False.

    Returns:
        Tensor: ``(N,)`` for ``'none'``, else 0-d.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import quality_focal_loss_tensor_target
        >>> pred = ms.Tensor([[1.0, -2.0], [0.5, 0.0]])
        >>> target = ms.Tensor([[0.8, 0.0], [0.0, 0.0]])
        >>> quality_focal_loss_tensor_target(pred, target, reduction="none").shape
        (2,)
    """
    pred = check_float_tensor(pred, "pred")
    target = check_tensor(target, "target")
    _check_common(pred, reduction, avg_factor, beta)
    check_bool(activated, "activated")
    if target.shape != pred.shape:
        raise ValueError(
            f"target must have the same shape as pred, but got pred.shape={pred.shape} and "
            f"target.shape={target.shape}"
        )
    t = target.astype(pred.dtype)
    if activated:
        _ops.check_prob(pred)
    loss = call("losses.quality_focal_loss", pred, t != 0, t, float(beta), activated)
    return weight_reduce_loss(_row_sum(loss), weight, reduction, avg_factor)


def _dfl_elementwise(pred: Tensor, label: Tensor) -> Tensor:
    left = ops.stop_gradient(label.astype(ms.int64))  # PyTorch's .long(): no gradient
    right = left + 1
    wd = _ops.compute_dtype(label.dtype)
    w_dtype = _ops._promote(ms.float32, label.dtype)
    lab = label.astype(wd)
    w_left = _ops.rd(right.astype(wd) - lab, w_dtype).astype(w_dtype)
    w_right = _ops.rd(lab - left.astype(wd), w_dtype).astype(w_dtype)
    ce_left = _ce_elementwise(pred, left, None, -100)
    ce_right = _ce_elementwise(pred, right, None, -100)
    out = _ops._promote(pred.dtype, w_dtype)
    cd = _ops.compute_dtype(pred.dtype, w_dtype)
    a = _ops.rd(ce_left.astype(cd) * w_left.astype(cd), out)
    b = _ops.rd(ce_right.astype(cd) * w_right.astype(cd), out)
    return _ops.rd(a + b, out).astype(out)


@register("losses.distribution_focal_loss", "composite", note="MindSpore ops")
def _dfl_composite(
    pred: Tensor,
    label: Tensor,
    weight: Optional[Tensor],
    reduction: str,
    avg_factor: AvgFactor,
    loss_weight: float,
) -> Tensor:
    loss = weight_reduce_loss(_dfl_elementwise(pred, label), weight, reduction, avg_factor)
    return _ops.scale(loss, loss_weight)


def _dfl_kernel_supports(
    pred: TensorSpec,
    label: TensorSpec,
    weight: Optional[TensorSpec],
    reduction: str,
    avg_factor: Any,
    loss_weight: float,
) -> Optional[str]:
    if label.dtype != pred.dtype:
        return f"a {label.dtype_name} label with {pred.dtype_name} pred is not supported"
    if weight is not None and (weight.dtype != pred.dtype or weight.shape != label.shape):
        return "a weight of another dtype or a broadcast weight is not supported by the kernel"
    if 0 in pred.shape:
        return "empty input is not supported by the kernel"
    return _ops.kernel_dtype(pred)


@_dfl_kernels.LIBRARY.backend(
    "losses.distribution_focal_loss",
    "fused C++ forward and backward kernels (one log-sum-exp per row, the reduction, weight, "
    "avg_factor and loss_weight in the kernel)",
    _dfl_kernel_supports,
)
def _dfl_aot(
    pred: Tensor,
    label: Tensor,
    weight: Optional[Tensor],
    reduction: str,
    avg_factor: AvgFactor,
    loss_weight: float,
) -> Tensor:
    w = Tensor([1.0], pred.dtype) if weight is None else weight  # one value: no weight
    target = device_target()
    if reduction == "none":
        coef = Tensor([1.0, 0.0, loss_weight], pred.dtype)
        return _dfl_kernels.DFL[target](pred, label, w, coef)
    if isinstance(avg_factor, Tensor):  # a traced divisor: divided outside the kernel
        total = _dfl_kernels.DFL_TOTAL[target](pred, label, w, Tensor([1.0, 0.0, 1.0], pred.dtype))
        return _ops.scale(_avg_factor_div(total, avg_factor), loss_weight)
    # the divisor's two terms apart: ms.jit would add Python floats in float32
    if avg_factor is not None:
        coef = Tensor([float(avg_factor), _AVG_EPS, loss_weight], pred.dtype)
    else:
        count = float(pred.shape[0]) if reduction == "mean" else 1.0
        coef = Tensor([count, 0.0, loss_weight], pred.dtype)
    return _dfl_kernels.DFL_TOTAL[target](pred, label, w, coef)


def distribution_focal_loss(
    pred: Tensor,
    label: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
) -> Tensor:
    """Distribution focal loss, as MMDetection's ``distribution_focal_loss``: the cross-entropy
    of the two bins around a continuous target, weighted by the distances.

    .. math::
        \\ell_i = (y_l + 1 - y_i)\\,\\operatorname{CE}(x_i, y_l)
        + (y_i - y_l)\\,\\operatorname{CE}(x_i, y_l + 1), \\qquad y_l = \\lfloor y_i \\rfloor

    Args:
        pred (Tensor[N, n+1]): logits of the ``n + 1`` bins (GFL: 17).
        label (Tensor[N]): continuous targets in ``[0, n)`` (floating).
        weight (Tensor[N], optional): per-sample weight.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): divide the sum by ``avg_factor + eps``.

    Returns:
        Tensor: ``(N,)`` for ``'none'``, else 0-d; float32 for a float16 ``pred`` and ``label``
        (MMDetection's bin weights come from ``dis_right.float() - label``).

    Raises:
        ValueError: a ``label`` whose bins fall outside ``[0, n]`` (PyTorch: "Target ... is
            out of bounds"), shapes that do not match.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import distribution_focal_loss
        >>> pred = ms.Tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0]])
        >>> float(distribution_focal_loss(pred, ms.Tensor([1.0, 0.0]), reduction="sum")) > 0
        True
    """
    return _dfl(pred, label, weight, reduction, avg_factor, 1.0)


def _dfl(
    pred: Tensor,
    label: Tensor,
    weight: Optional[Tensor],
    reduction: str,
    avg_factor: AvgFactor,
    loss_weight: float,
) -> Tensor:
    """:func:`distribution_focal_loss` times ``loss_weight`` (the Cell's), checked, then
    computed by the registry's choice in one call."""
    pred = check_float_tensor(pred, "pred")
    label = check_float_tensor(label, "label")
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    if pred.ndim != 2 or label.shape != pred.shape[:1]:
        raise ValueError(
            f"pred must have shape (N, n+1) and label (N,), but got pred.shape={pred.shape} "
            f"and label.shape={label.shape}"
        )
    if weight is not None:
        weight = _check_weight_broadcast(label, check_tensor(weight, "weight"))
    label = _check_bins(label, pred.shape[1])
    return call(
        "losses.distribution_focal_loss", pred, label, weight, reduction, avg_factor, loss_weight
    )


def _check_bins(label: Tensor, bins: int) -> Tensor:
    """Return ``label``; raise ``ValueError`` unless each target's two bins
    ``trunc(y), trunc(y) + 1`` lie in ``[0, bins)`` (PyTorch: "Target ... is out of bounds"),
    i.e. ``-1 < y < bins - 1`` (NaN fails). Reads the values, in graph mode too; the kernel
    takes the returned label (see :func:`~mscompat.losses._ops.check_label_range`)."""
    if label.size == 0:
        return label
    inside = ops.logical_and(label > -1.0, label < float(bins - 1))
    if not inside.all():
        raise ValueError(
            f"label: each target must lie in [0, {bins - 1}) (its two bins in [0, {bins}))"
        )
    return label


class QualityFocalLoss(nn.Cell):
    """MMDetection's ``QualityFocalLoss``. See :func:`quality_focal_loss`.

    Calls :func:`quality_focal_loss` (tuple target),
    :func:`quality_focal_loss_with_prob` (tuple target, ``activated``) or
    :func:`quality_focal_loss_tensor_target` (Tensor target), times ``loss_weight``.

    Args:
        use_sigmoid (bool): must be True. Default: True.
        beta (float): exponent of the modulating factor. Default: 2.0.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.
        activated (bool): ``pred`` holds probabilities. Default: False.

    Shape:
        - pred: :math:`(N, C)`.
        - target: ``(label (N), score (N))`` or :math:`(N, C)`.
        - output: scalar, or :math:`(N)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import QualityFocalLoss
        >>> pred = ms.Tensor([[1.0, -2.0], [0.5, 0.0]])
        >>> target = (ms.Tensor([0, 2], ms.int64), ms.Tensor([0.8, 0.0]))
        >>> QualityFocalLoss()(pred, target).shape
        ()
    """

    def __init__(
        self,
        use_sigmoid: bool = True,
        beta: float = 2.0,
        reduction: str = "mean",
        loss_weight: float = 1.0,
        activated: bool = False,
    ) -> None:
        super().__init__()
        if use_sigmoid is not True:
            raise ValueError(f"Only sigmoid in QFL supported now (use_sigmoid={use_sigmoid!r})")
        self.use_sigmoid = use_sigmoid
        self.beta = check_number(beta, "beta")
        self.reduction = reduction
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self.activated = check_bool(activated, "activated")

    def construct(
        self,
        pred: Tensor,
        target: QflTarget,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        if reduction_override is not None:
            check_reduction(reduction_override, "reduction_override")
        reduction = self.reduction if reduction_override is None else reduction_override
        if isinstance(target, Tensor):
            loss = quality_focal_loss_tensor_target(
                pred, target, weight, reduction, avg_factor, self.beta, self.activated
            )
        elif self.activated:
            loss = quality_focal_loss_with_prob(
                pred, target, weight, reduction, avg_factor, self.beta
            )
        else:
            loss = quality_focal_loss(pred, target, weight, reduction, avg_factor, self.beta)
        return _ops.scale(loss, self.loss_weight)


class DistributionFocalLoss(nn.Cell):
    """MMDetection's ``DistributionFocalLoss``. See :func:`distribution_focal_loss` (times
    ``loss_weight``).

    Args:
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.

    Shape:
        - pred: :math:`(N, n+1)`; target: :math:`(N)`; output: scalar or :math:`(N)`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import DistributionFocalLoss
        >>> pred = ms.Tensor([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0]])
        >>> DistributionFocalLoss(loss_weight=0.25)(pred, ms.Tensor([1.0, 0.5])).shape
        ()
    """

    def __init__(self, reduction: str = "mean", loss_weight: float = 1.0) -> None:
        super().__init__()
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
        return _dfl(pred, target, weight, reduction, avg_factor, self.loss_weight)
