"""Regression and binary losses as ``torch.nn.functional``: ``l1_loss``, ``mse_loss``,
``smooth_l1_loss``, ``binary_cross_entropy``, ``binary_cross_entropy_with_logits`` and their
Cells, with PyTorch's reduction vocabulary (and the deprecated ``size_average``/``reduce``).

On MindSpore 2.10 CPU ``mint.nn.functional.l1_loss``/``mse_loss`` have no kernel and
``ops.smooth_l1_loss`` differs. float16 is computed in float32 and rounded once
(:mod:`mscompat.layers._loss_common`).
"""

from __future__ import annotations

from typing import Any, Optional

from mindspore import Tensor, mint, nn, ops

from mscompat._checks import check_float_tensor, check_number
from mscompat.custom_ops import pointwise_loss
from mscompat.custom_ops.registry import call, register
from mscompat.layers._loss_common import (
    _broadcast_shape,
    apply_reduction,
    as_tensor,
    broadcast_pair,
    check_dtype_match,
    legacy_reduction,
    scalar,
    upcast,
)

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "L1Loss",
    "MSELoss",
    "SmoothL1Loss",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "l1_loss",
    "mse_loss",
    "smooth_l1_loss",
]


_DISTANCES = ("layers.l1_loss", "layers.mse_loss", "layers.smooth_l1_loss")
_KERNEL_NOTE = "fused C++ forward and backward; 'mean'/'sum' in the same kernel"


def distance_pointwise(x: Tensor, t: Tensor, kind: str, p: float) -> Tensor:
    """The elementwise loss ``kind`` (``'l1'``, ``'mse'``, ``'smooth_l1'`` with beta ``p``,
    ``'huber'`` with delta ``p``) in MindSpore ops, PyTorch's formulas."""
    d = x - t
    if kind == "mse":
        return d * d
    z = ops.abs(d)
    if kind == "l1" or (kind == "smooth_l1" and p == 0):
        return z
    b = scalar(p, z)
    # PyTorch: the quadratic branch strictly below beta / delta (the gradient at |d| == beta
    # is the linear part's)
    if kind == "huber":
        return ops.where(z < b, 0.5 * z * z, b * (z - 0.5 * b))
    return ops.where(z < b, 0.5 * z * z / b, z - 0.5 * b)


@register(_DISTANCES, "composite", note="PyTorch's pointwise formula in MindSpore ops")
def distance_composite(x: Tensor, t: Tensor, kind: str, p: float, red: str, dtype: Any) -> Tensor:
    """The composite backend of the distance losses: the loss, reduced, in ``dtype``."""
    return apply_reduction(distance_pointwise(x, t, kind, p), red, dtype)


@pointwise_loss.LIBRARY.backend(_DISTANCES, _KERNEL_NOTE, pointwise_loss.kernel_dtypes)
def distance_aot(x: Tensor, t: Tensor, kind: str, p: float, red: str, dtype: Any) -> Tensor:
    """The ``aot`` backend of the distance losses (:func:`distance_composite`'s contract)."""
    if kind == "smooth_l1" and p == 0:
        kind = "l1"  # PyTorch: smooth_l1_loss with beta 0 is l1_loss (its gradient 0 at a tie)
    loss = pointwise_loss.pointwise_loss(kind, x, t, red, p)
    return loss if loss.dtype == dtype else loss.astype(dtype)


def _distance(
    kind: str,
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool],
    reduce: Optional[bool],
    reduction: str,
    weight: Optional[Tensor] = None,
    beta: float = 1.0,
) -> Tensor:
    x = check_float_tensor(input, "input")
    t = check_dtype_match(x, target, "input", "target")
    red = legacy_reduction(size_average, reduce, reduction)
    if weight is not None:
        weight = check_dtype_match(x, weight, "input", "weight")
        if weight.shape != x.shape:
            raise ValueError(
                f"weight must have input's shape {x.shape}, but got weight.shape={weight.shape}"
            )
    xb, tb = broadcast_pair(upcast(x), upcast(t), "input", "target")
    if xb.size == 0:
        return apply_reduction(xb, red, x.dtype)
    op = f"layers.{kind}_loss"
    if weight is None:
        return call(op, xb, tb, kind, beta, red, x.dtype)
    loss = call(op, xb, tb, kind, beta, "none", xb.dtype) * upcast(weight)
    if red == "mean":  # PyTorch: the weighted sum over the sum of the weights
        return (loss.sum() / upcast(weight).sum()).astype(x.dtype)
    return apply_reduction(loss, red, x.dtype)


def l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    weight: Optional[Tensor] = None,
) -> Tensor:
    """Mean absolute error, as :func:`torch.nn.functional.l1_loss`.

    .. math:: \\ell = |x - y|,\\ \\text{weighted mean: } \\sum w\\ell / \\sum w

    Args:
        input (Tensor[*]): float16, float32 or float64.
        target (Tensor, broadcastable with ``input``).
        size_average, reduce (bool, optional): deprecated, as PyTorch's.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        weight (Tensor, ``input``'s shape, optional): elementwise weight.

    Returns:
        Tensor: 0-d, or the broadcast shape with ``'none'``; ``input``'s dtype.

    Raises:
        TypeError: non-float Tensors. ValueError: shapes that do not broadcast, ``weight`` of
        another shape, a bad ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import l1_loss
        >>> float(l1_loss(ms.Tensor([1.0, -2.0]), ms.Tensor([0.0, 0.0])))
        1.5
    """
    return _distance("l1", input, target, size_average, reduce, reduction, weight)


def mse_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    weight: Optional[Tensor] = None,
) -> Tensor:
    """Mean squared error, as :func:`torch.nn.functional.mse_loss`: :math:`\\ell = (x -
    y)^2`; arguments as :func:`l1_loss`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import mse_loss
        >>> float(mse_loss(ms.Tensor([1.0, -2.0]), ms.Tensor([0.0, 0.0])))
        2.5
    """
    return _distance("mse", input, target, size_average, reduce, reduction, weight)


def smooth_l1_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    beta: float = 1.0,
) -> Tensor:
    """Smooth L1 loss, as :func:`torch.nn.functional.smooth_l1_loss`.

    .. math::
        \\ell = \\begin{cases} 0.5\\,(x - y)^2 / \\beta & |x - y| < \\beta \\\\
        |x - y| - 0.5\\,\\beta & \\text{otherwise} \\end{cases}

    ``beta=0`` is the L1 loss. Arguments as :func:`l1_loss`.

    Raises:
        ValueError: ``beta < 0``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import smooth_l1_loss
        >>> smooth_l1_loss(ms.Tensor([0.5, 3.0]), ms.Tensor([0.0, 0.0]), reduction="none")
        Tensor(shape=[2], dtype=Float32, value= [ 1.25000000e-01,  2.50000000e+00])
    """
    b = check_number(beta, "beta")
    if b < 0:
        raise ValueError(f"smooth_l1_loss(): beta must be >= 0, but got beta={b}")
    return _distance("smooth_l1", input, target, size_average, reduce, reduction, None, b)


def _same_size(x: Tensor, t: Tensor) -> None:
    if t.shape != x.shape:
        raise ValueError(
            f"target must have input's shape {x.shape}, but got target.shape={t.shape}"
        )


def _weight_of(x: Tensor, weight: Any, name: str) -> Optional[Tensor]:
    if weight is None:
        return None
    w = check_dtype_match(x, weight, "input", name)
    return broadcast_pair(upcast(x), upcast(w), "input", name)[1]


def _check_probabilities(x: Tensor) -> Tensor:
    # PyTorch's CPU kernel reads the values ("all elements of input should be between 0 and 1")
    bad = ops.logical_or(x < 0, x > 1)
    if x.size > 0 and bad.any():
        raise ValueError("binary_cross_entropy(): input values must be between 0 and 1")
    return x


@register("layers.binary_cross_entropy", "composite", note="log clamped at -100, as PyTorch")
def _bce_pointwise(x: Tensor, t: Tensor) -> Tensor:
    floor = scalar(-100.0, x)
    log_x = ops.maximum(ops.log(x), floor)
    log_1mx = ops.maximum(ops.log(1 - x), floor)
    return -(t * log_x + (1 - t) * log_1mx)


@register("layers.binary_cross_entropy", "native", devices=("Ascend",), note="mint")
def _bce_native(x: Tensor, t: Tensor) -> Tensor:
    return mint.nn.functional.binary_cross_entropy(x, t, reduction="none")


def binary_cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """Binary cross entropy of probabilities, as :func:`torch.nn.functional.binary_cross_entropy`.

    .. math:: \\ell = -w\\,[y \\log x + (1 - y) \\log(1 - x)]

    with each log clamped at -100 (PyTorch's: ``x`` of 0 or 1 gives a finite loss).

    .. note:: at ``x`` exactly 0 or 1 PyTorch's gradient divides by ``1e-12``; here the
       clamped log has a zero gradient there.

    Args:
        input (Tensor[*]): probabilities in [0, 1]; float16, float32 or float64.
        target (Tensor, ``input``'s shape).
        weight (Tensor, broadcastable to ``input``, optional): rescales each element.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Raises:
        ValueError: ``target`` of another shape, input values outside [0, 1].

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import binary_cross_entropy
        >>> round(float(binary_cross_entropy(ms.Tensor([0.5]), ms.Tensor([1.0]))), 4)
        0.6931
    """
    x = check_float_tensor(input, "input")
    t = check_dtype_match(x, target, "input", "target")
    _same_size(x, t)
    red = legacy_reduction(size_average, reduce, reduction)
    w = _weight_of(x, weight, "weight")
    if x.size == 0:
        return apply_reduction(upcast(x), red, x.dtype)
    loss = call("layers.binary_cross_entropy", _check_probabilities(upcast(x)), upcast(t))
    if w is not None:
        loss = loss * w
    return apply_reduction(loss, red, x.dtype)


@register("layers.binary_cross_entropy_with_logits", "composite", note="PyTorch's formula")
def _bce_logits_composite(
    x: Tensor, t: Tensor, w: Optional[Tensor], pos_weight: Optional[Tensor], red: str, dtype: Any
) -> Tensor:
    # (1 - y) x - log_weight * logsigmoid(x), logsigmoid(x) = min(x, 0) - log1p(exp(-|x|))
    neg = x < 0
    log_sigmoid = ops.where(neg, x, ops.zeros_like(x)) - ops.log1p(ops.exp(ops.where(neg, x, -x)))
    if pos_weight is not None:
        log_sigmoid = log_sigmoid * ((pos_weight - 1) * t + 1)
    loss = (1 - t) * x - log_sigmoid
    if w is not None:
        loss = loss * w
    return apply_reduction(loss, red, dtype)


@pointwise_loss.LIBRARY.backend(
    "layers.binary_cross_entropy_with_logits", _KERNEL_NOTE, pointwise_loss.kernel_dtypes
)
def _bce_logits_aot(
    x: Tensor, t: Tensor, w: Optional[Tensor], pos_weight: Optional[Tensor], red: str, dtype: Any
) -> Tensor:
    kind = "bce_with_logits"
    if w is None:
        loss = pointwise_loss.pointwise_loss(kind, x, t, red, pos_weight=pos_weight)
        return loss if loss.dtype == dtype else loss.astype(dtype)
    loss = pointwise_loss.pointwise_loss(kind, x, t, "none", pos_weight=pos_weight)
    return apply_reduction(loss * w, red, dtype)


def binary_cross_entropy_with_logits(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    pos_weight: Optional[Tensor] = None,
) -> Tensor:
    """Binary cross entropy of logits, as
    :func:`torch.nn.functional.binary_cross_entropy_with_logits` (stable for large logits).

    .. math:: \\ell = w\\,[(1 - y)\\,x - (1 + (p - 1)\\,y) \\log\\sigma(x)]

    Args:
        input (Tensor[*]): logits; float16, float32 or float64.
        target (Tensor, ``input``'s shape): in [0, 1].
        weight (Tensor, broadcastable to ``input``, optional): rescales each element.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        pos_weight (Tensor, broadcastable to ``input``, optional): :math:`p`, the weight of
            positive targets (per class: shape ``(C,)`` on the last dim).

    Raises:
        ValueError: ``target`` of another shape, weights that do not broadcast.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import binary_cross_entropy_with_logits
        >>> round(float(binary_cross_entropy_with_logits(ms.Tensor([0.0]), ms.Tensor([1.0]))), 4)
        0.6931
    """
    x = check_float_tensor(input, "input")
    t = check_dtype_match(x, target, "input", "target")
    _same_size(x, t)
    red = legacy_reduction(size_average, reduce, reduction)
    w = _weight_of(x, weight, "weight")
    p = None
    if pos_weight is not None:  # checked, kept in its own shape (the kernel reads it as a row)
        p = upcast(check_dtype_match(x, pos_weight, "input", "pos_weight"))
        _broadcast_shape(x.shape, p.shape, "input", "pos_weight")
    if x.size == 0:
        return apply_reduction(upcast(x), red, x.dtype)
    op = "layers.binary_cross_entropy_with_logits"
    return call(op, upcast(x), upcast(t), w, p, red, x.dtype)


# ----------------------------------------------------------------------------- Cells


class _Loss(nn.Cell):
    def __init__(self, size_average: Any = None, reduce: Any = None, reduction: str = "mean"):
        super().__init__()
        self.reduction = legacy_reduction(size_average, reduce, reduction)


class L1Loss(_Loss):
    """As :class:`torch.nn.L1Loss`. See :func:`l1_loss`.

    Shape:
        - input: :math:`(*)`; target: the same; output: scalar, or :math:`(*)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import L1Loss
        >>> float(L1Loss()(ms.Tensor([1.0, -2.0]), ms.Tensor([0.0, 0.0])))
        1.5
    """

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return l1_loss(input, target, reduction=self.reduction)


class MSELoss(_Loss):
    """As :class:`torch.nn.MSELoss`. See :func:`mse_loss`.

    Shape:
        - input: :math:`(*)`; target: the same; output: scalar, or :math:`(*)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import MSELoss
        >>> float(MSELoss(reduction="sum")(ms.Tensor([1.0, -2.0]), ms.Tensor([0.0, 0.0])))
        5.0
    """

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return mse_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """As :class:`torch.nn.SmoothL1Loss`. See :func:`smooth_l1_loss`.

    Shape:
        - input: :math:`(*)`; target: the same; output: scalar, or :math:`(*)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import SmoothL1Loss
        >>> float(SmoothL1Loss(beta=2.0)(ms.Tensor([1.0]), ms.Tensor([0.0])))
        0.25
    """

    def __init__(
        self,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        beta: float = 1.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.beta = check_number(beta, "beta")

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class BCELoss(_Loss):
    """As :class:`torch.nn.BCELoss` (``weight`` kept as given). See
    :func:`binary_cross_entropy`.

    Shape:
        - input: :math:`(*)`; target: the same; output: scalar, or :math:`(*)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import BCELoss
        >>> round(float(BCELoss()(ms.Tensor([0.5]), ms.Tensor([0.0]))), 4)
        0.6931
    """

    def __init__(
        self,
        weight: Optional[Tensor] = None,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight = as_tensor(weight, "weight")

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """As :class:`torch.nn.BCEWithLogitsLoss`. See :func:`binary_cross_entropy_with_logits`.

    Shape:
        - input: :math:`(*)`; target: the same; output: scalar, or :math:`(*)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import BCEWithLogitsLoss
        >>> loss = BCEWithLogitsLoss(pos_weight=ms.Tensor([2.0]))
        >>> round(float(loss(ms.Tensor([0.0]), ms.Tensor([1.0]))), 4)
        1.3863
    """

    def __init__(
        self,
        weight: Optional[Tensor] = None,
        size_average: Any = None,
        reduce: Any = None,
        reduction: str = "mean",
        pos_weight: Optional[Tensor] = None,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight = as_tensor(weight, "weight")
        self.pos_weight = as_tensor(pos_weight, "pos_weight")

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return binary_cross_entropy_with_logits(
            input, target, self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )
