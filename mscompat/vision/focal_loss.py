"""torchvision's sigmoid focal loss (``torchvision.ops.sigmoid_focal_loss``).

Not MMDetection's (:func:`mscompat.losses.sigmoid_focal_loss`): torchvision's third argument
is ``alpha`` (MMDetection's is ``weight``), its ``reduction`` defaults to ``'none'``
(MMDetection's to ``'mean'``), ``alpha=-1`` turns the class weighting off, and it has no
``avg_factor``.
"""

from __future__ import annotations

import mindspore as ms
from mindspore import Tensor

from mscompat._checks import (
    check_float_tensor,
    check_number,
    check_reduction,
    check_same_shape,
    check_tensor,
)
from mscompat.losses.focal import _log_sigmoid, _pow, _round
from mscompat.losses.utils import _mean, _sum

__all__ = ["sigmoid_focal_loss"]


def sigmoid_focal_loss(
    inputs: Tensor,
    targets: Tensor,
    alpha: float = 0.25,
    gamma: float = 2,
    reduction: str = "none",
) -> Tensor:
    """Sigmoid focal loss of RetinaNet (`Lin et al., 2017 <https://arxiv.org/abs/1708.02002>`_).

    Mirrors ``torchvision.ops.sigmoid_focal_loss``. With :math:`p = \\sigma(x)` and
    :math:`p_t = p\\,t + (1 - p)(1 - t)`:

    .. math::
        \\ell = \\alpha_t\\,(1 - p_t)^{\\gamma}\\,\\operatorname{BCEWithLogits}(x, t), \\qquad
        \\alpha_t = \\alpha t + (1 - \\alpha)(1 - t)

    and :math:`\\alpha_t = 1` when ``alpha == -1``.

    Args:
        inputs (Tensor[*]): logits, float16, float32 or float64.
        targets (Tensor, same shape): binary (or soft) labels; cast to ``inputs``' dtype.
        alpha (float): weight of the positives in :math:`[0, 1]`, or ``-1`` for no
            weighting. Default: 0.25.
        gamma (float): exponent of the modulating factor :math:`(1 - p_t)`. Default: 2.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'none'``.

    Returns:
        Tensor: ``inputs``' shape for ``'none'``, else 0-d (the mean of no element is NaN, as
        PyTorch's); ``inputs``' dtype.

    Raises:
        TypeError: ``inputs`` not a floating Tensor, ``targets`` not a Tensor, ``alpha`` or
            ``gamma`` not a number.
        ValueError: shapes differ, ``alpha`` neither in :math:`[0, 1]` nor ``-1`` (as
            torchvision 0.28), invalid ``reduction``.

    .. note::
        float16 is computed as PyTorch does on CPU: every op in float32, rounded once to
        float16; the mean and the sum accumulate in float32.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import sigmoid_focal_loss
        >>> x = ms.Tensor([[2.0, -1.0], [0.5, 3.0]])
        >>> t = ms.Tensor([[1.0, 0.0], [0.0, 1.0]])
        >>> round(float(sigmoid_focal_loss(x, t, reduction="sum")), 4)
        0.3005
        >>> round(float(sigmoid_focal_loss(x, t, alpha=-1, gamma=0, reduction="mean")), 4)
        0.3657
    """
    inputs = check_float_tensor(inputs, "inputs")
    targets = check_same_shape(inputs, check_tensor(targets, "targets"), "inputs", "targets")
    alpha = check_number(alpha, "alpha")
    gamma = check_number(gamma, "gamma")
    if not 0 <= alpha <= 1 and alpha != -1:
        raise ValueError(f"alpha must be in the range [0, 1] or -1 for no weighting, got {alpha}")
    check_reduction(reduction)
    # no kernel on an empty input
    loss = inputs * 1 if inputs.size == 0 else _focal(inputs, targets, alpha, gamma)
    if reduction == "mean":
        return _mean(loss)
    if reduction == "sum":
        return _sum(loss)
    return loss


def _focal(inputs: Tensor, targets: Tensor, alpha: float, gamma: float) -> Tensor:
    """torchvision's op sequence, float16 rounded after every op as PyTorch's CPU kernels."""
    half = inputs.dtype == ms.float16
    x = inputs.astype(ms.float32) if half else inputs
    t = targets.astype(x.dtype)
    if half:
        t = _round(t, True)
    p = _round(x.sigmoid(), half)
    one_minus_t = _round(1 - t, half)
    # binary_cross_entropy_with_logits: (1 - t) * x - log_sigmoid(x)
    ce = _round(_round(one_minus_t * x, half) - _round(_log_sigmoid(x), half), half)
    p_t = _round(
        _round(p * t, half) + _round(_round(1 - p, half) * one_minus_t, half),
        half,
    )
    loss = _round(ce * _round(_pow(_round(1 - p_t, half), gamma), half), half)
    if alpha >= 0:
        a = alpha if x.dtype != ms.float64 else Tensor(alpha, ms.float64)
        b = (1 - alpha) if x.dtype != ms.float64 else Tensor(1 - alpha, ms.float64)
        alpha_t = _round(_round(a * t, half) + _round(b * one_minus_t, half), half)
        loss = _round(alpha_t * loss, half)
    return loss.astype(ms.float16) if half else loss
