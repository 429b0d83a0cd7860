"""Focal loss, as MMDetection's ``py_sigmoid_focal_loss``, ``py_focal_loss_with_prob`` and
``FocalLoss``, and the guide's ``SigmoidFocalLoss`` Cell."""

from __future__ import annotations

from typing import Optional, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

from mscompat._checks import (
    check_bool,
    check_float_tensor,
    check_number,
    check_reduction,
    check_same_shape,
    check_tensor,
    is_float_dtype,
)
from mscompat._graph import compiling
from mscompat.custom_ops import focal_loss as _kernels
from mscompat.custom_ops.registry import TensorSpec, call, device_target, register
from mscompat.losses import _ops
from mscompat.losses.utils import AvgFactor, _check_avg_factor, scalar_like, weight_reduce_loss

__all__ = ["FocalLoss", "SigmoidFocalLoss", "py_focal_loss_with_prob", "sigmoid_focal_loss"]


def _round(x: Tensor, half: bool) -> Tensor:
    """Round a float32 intermediate to float16 and back, as one PyTorch float16 op would."""
    if half:
        return x.astype(ms.float16).astype(ms.float32)
    return x


def _pow(x: Tensor, gamma: float) -> Tensor:
    """``x ** gamma`` as PyTorch evaluates and differentiates it (special-cased exponents)."""
    if gamma == 0.0:
        return ops.ones_like(x)  # PyTorch's pow backward is 0 for exponent 0 (never 0 * inf).
    if gamma == 1.0:
        return x
    if gamma == 2.0:
        return x * x
    if gamma == 3.0:
        return x * x * x
    if gamma == 0.5:
        return ops.sqrt(x)
    return ops.pow(x, scalar_like(gamma, x))


def _log_sigmoid(x: Tensor) -> Tensor:
    """Stable ``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))`` (PyTorch's CPU formula)."""
    return ops.minimum(x, ops.zeros_like(x)) - ops.log1p(ops.exp(-ops.abs(x)))


def _focal_elementwise(pred: Tensor, target: Tensor, gamma: float, alpha: float) -> Tensor:
    """Unreduced focal loss, op for op as MMDetection's PyTorch code (float16 rounded per op)."""
    half = pred.dtype == ms.float16
    x = pred.astype(ms.float32) if half else pred
    t = target.astype(x.dtype)
    p = _round(ops.sigmoid(x), half)
    one_minus_t = _round(1 - t, half)
    # MMDetection's ``pt`` is 1 - p_t of the paper, hence pt ** gamma.
    pt = _round(_round((_round(1 - p, half)) * t, half) + _round(p * one_minus_t, half), half)
    a_pos = scalar_like(alpha, x)
    a_neg = 1 - a_pos
    alpha_t = _round(_round(a_pos * t, half) + _round(a_neg * one_minus_t, half), half)
    focal_weight = _round(alpha_t * _round(_pow(pt, gamma), half), half)
    # binary_cross_entropy_with_logits(x, t) = (1 - t) * x - log_sigmoid(x), stable at +-1e4.
    bce = _round(_round(one_minus_t * x, half) - _round(_log_sigmoid(x), half), half)
    loss = _round(bce * focal_weight, half)
    return loss.astype(ms.float16) if half else loss


register("losses.sigmoid_focal_loss", "composite", note="MindSpore ops, PyTorch's op sequence")(
    _focal_elementwise
)


def _kernel_dtypes(pred: TensorSpec, *_: object) -> Optional[str]:
    # PyTorch rounds every float16 op of the loss: only the op-by-op composite reproduces it.
    if pred.dtype in (ms.float32, ms.float64):
        return None
    return f"{pred.dtype_name} is not supported by the kernel (float32/float64)"


@_kernels.LIBRARY.backend(
    "losses.sigmoid_focal_loss",
    "fused C++/CUDA forward and backward kernels",
    _kernel_dtypes,
    devices=("CPU", "GPU"),
)
def _focal_elementwise_aot(pred: Tensor, target: Tensor, gamma: float, alpha: float) -> Tensor:
    coef = Tensor([gamma, alpha], pred.dtype)
    return _kernels.FORWARD[device_target()](pred, target.astype(pred.dtype), coef)


def _expand_weight(weight: Tensor, loss: Tensor) -> Tensor:
    """MMDetection's weight layouts: (N,) -> (N, 1); (N*C,) -> (N, C); (N, C) as is."""
    if weight.shape == loss.shape:
        return weight
    if weight.ndim >= 1 and loss.ndim >= 1 and weight.shape[0] == loss.shape[0]:
        expanded = weight.reshape(-1, 1)
    elif loss.ndim >= 1 and weight.size == loss.size:
        expanded = weight.reshape(loss.shape[0], -1)
    else:
        raise ValueError(
            f"weight must have shape (N,), (N*C,) or (N, C) for pred of shape {loss.shape}, "
            f"but got weight.shape={weight.shape}"
        )
    if expanded.shape[0] != loss.shape[0] or expanded.ndim != loss.ndim:
        raise ValueError(
            f"weight must have shape (N,), (N*C,) or (N, C) for pred of shape {loss.shape}, "
            f"but got weight.shape={weight.shape}"
        )
    return expanded


def sigmoid_focal_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    gamma: float = 2.0,
    alpha: float = 0.25,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
) -> Tensor:
    """Sigmoid focal loss (`Lin et al., 2017 <https://arxiv.org/abs/1708.02002>`_).

    Mirrors MMDetection's ``py_sigmoid_focal_loss`` (``mmdet/models/losses/focal_loss.py``):
    same argument names, order, defaults and numbers. With :math:`p = \\sigma(x)`:

    .. math::
        \\text{pt} = (1 - p)\\,t + p\\,(1 - t), \\qquad
        \\ell = \\big(\\alpha t + (1 - \\alpha)(1 - t)\\big)\\,\\text{pt}^{\\gamma}\\,
        \\operatorname{BCEWithLogits}(x, t)

    then :func:`~mscompat.losses.weight_reduce_loss` with ``weight``, ``reduction`` and
    ``avg_factor``.

    Args:
        pred (Tensor[N, C] or Tensor[*]): logits, float16, float32 or float64.
        target (Tensor, same shape as ``pred``): targets in [0, 1] (one-hot or soft), any
            numeric dtype; cast to ``pred``'s dtype.
        weight (Tensor, optional): sample-wise weight of shape ``(N,)`` (one per row), ``(N*C,)``
            (flattened per element, as FSAF uses) or ``(N, C)``; also ``(N, 1)``.
        gamma (float): focusing parameter :math:`\\gamma \\ge 0`. Default: 2.0.
        alpha (float): balance :math:`\\alpha` of positives. Default: 0.25.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): with ``'mean'``, divide the weighted sum by
            ``avg_factor + eps`` (eps = float32 epsilon); not allowed with ``'sum'``.

    Returns:
        Tensor: ``pred``'s shape for ``'none'``, else 0-d; ``pred``'s dtype (promoted as
        PyTorch does by a higher-precision ``weight``).

    Raises:
        TypeError: ``pred`` not a floating Tensor, ``target``/``weight`` not Tensors.
        ValueError: shape mismatch of ``pred``/``target``, a ``weight`` of none of the shapes
            above, invalid ``reduction``, ``avg_factor`` with ``'sum'``, ``gamma < 0``.

    .. note::
        float16 is computed as PyTorch does on CPU: every op in float32 rounded once to
        float16, reductions accumulated in float32. ``avg_factor`` has MMDetection 3.x's
        ``+ eps``. ``alpha < 0`` is used as given (MMDetection), not as "no weighting"
        (torchvision).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import sigmoid_focal_loss
        >>> pred = ms.Tensor([[2.0, -1.0], [0.5, 3.0]])
        >>> target = ms.Tensor([[1.0, 0.0], [0.0, 1.0]])
        >>> loss = sigmoid_focal_loss(pred, target, reduction="none")
        >>> loss.shape
        (2, 2)
        >>> round(float(sigmoid_focal_loss(pred, target)), 6)
        0.075133
    """
    pred = check_float_tensor(pred, "pred")
    target = check_same_shape(pred, check_tensor(target, "target"), "pred", "target")
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    check_number(gamma, "gamma")
    check_number(alpha, "alpha")
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, but got {gamma}")
    if weight is not None:
        if pred.ndim == 0:
            raise ValueError("weight needs pred with at least 1 dim, but pred is 0-d")
        weight = _expand_weight(check_tensor(weight, "weight"), pred)
    loss = call("losses.sigmoid_focal_loss", pred, target, float(gamma), float(alpha))
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


def _as_tensor(value: Union[Tensor, np.ndarray, None], name: str) -> Optional[Tensor]:
    if value is None or isinstance(value, Tensor):
        return value
    if isinstance(value, np.ndarray):
        return Tensor(value)
    raise TypeError(f"{name} must be a mindspore.Tensor, a numpy array or None, got {value!r}")


class SigmoidFocalLoss(nn.Cell):
    """Sigmoid focal loss Cell. See :func:`sigmoid_focal_loss`.

    The constructor takes the migration guide's arguments; the call also takes MMDetection's
    per-call ``weight``, ``avg_factor`` and ``reduction_override`` (``FocalLoss.forward``), which
    win over the constructor's. ``loss_weight`` scales the result as in MMDetection's
    ``FocalLoss``.

    Args:
        weight (Tensor | ndarray, optional): default sample-wise weight.
        gamma (float): focusing parameter. Default: 2.0.
        alpha (float): balance of positives. Default: 0.25.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float, optional): default average factor.
        loss_weight (float): factor applied to the loss. Default: 1.0.

    Shape:
        - pred: :math:`(N, C)` logits (any shape works).
        - target: same shape as ``pred``.
        - weight: :math:`(N,)`, :math:`(N*C,)` or :math:`(N, C)`.
        - output: scalar, or the shape of ``pred`` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import SigmoidFocalLoss
        >>> loss_fn = SigmoidFocalLoss(gamma=2.0, alpha=0.25)
        >>> pred = ms.Tensor([[2.0, -1.0], [0.5, 3.0]])
        >>> target = ms.Tensor([[1.0, 0.0], [0.0, 1.0]])
        >>> round(float(loss_fn(pred, target)), 6)
        0.075133
        >>> loss_fn(pred, target, reduction_override="none").shape
        (2, 2)
    """

    def __init__(
        self,
        weight: Union[Tensor, np.ndarray, None] = None,
        gamma: float = 2.0,
        alpha: float = 0.25,
        reduction: str = "mean",
        avg_factor: Optional[float] = None,
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__()
        # reduction/avg_factor are checked per call: a per-call reduction_override may make a
        # constructor combination valid (e.g. reduction="sum", avg_factor=2 with "mean").
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self.weight = _as_tensor(weight, "weight")
        self.gamma = check_number(gamma, "gamma")
        self.alpha = check_number(alpha, "alpha")
        self.reduction = reduction
        self.avg_factor = avg_factor

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
        loss = sigmoid_focal_loss(
            pred,
            target,
            self.weight if weight is None else weight,
            self.gamma,
            self.alpha,
            self.reduction if reduction_override is None else reduction_override,
            self.avg_factor if avg_factor is None else avg_factor,
        )
        return _scale(loss, self.loss_weight)


def _scale(loss: Tensor, factor: float) -> Tensor:
    if factor == 1.0:
        return loss
    if loss.dtype == ms.float16:
        return (loss.astype(ms.float32) * factor).astype(ms.float16)
    return loss * scalar_like(factor, loss)


def _label_onehot(pred: Tensor, target: Tensor, check: bool = True) -> Tensor:
    """MMDetection's ``F.one_hot(target, num_classes + 1)[:, :num_classes]``: class indices
    with background ``num_classes`` to an int64 one-hot of ``pred``'s shape."""
    if is_float_dtype(target.dtype) or target.dtype == ms.bool_:
        raise TypeError(
            f"target of one dim less than pred must hold class indices (an integer dtype), "
            f"but got {target.dtype}"
        )
    if pred.ndim != 2 or target.shape != pred.shape[:1]:
        raise ValueError(
            "class-index targets need pred of shape (N, C) and target (N,), but got "
            f"pred.shape={pred.shape} and target.shape={target.shape}"
        )
    if check:
        _check_labels(pred, target)
    return _ops.onehot(target, pred.shape[1]).astype(ms.int64)


def _check_labels(pred: Tensor, target: Tensor) -> None:
    num_classes = pred.shape[1]
    _ops.check_label_range(
        target,
        0,
        num_classes + 1,
        "target",
        f"target: class values must be in [0, {num_classes}] ({num_classes}: background)",
    )


def _focal_prob_elementwise(p: Tensor, t: Tensor, gamma: float, alpha: float) -> Tensor:
    x, half = _ops.widen(p)
    t = t.astype(x.dtype)
    one_minus_t = _ops.rnd(1 - t, half)
    pt = _ops.rnd(_ops.rnd(_ops.rnd(1 - x, half) * t, half) + _ops.rnd(x * one_minus_t, half), half)
    a_pos = scalar_like(alpha, x)
    alpha_t = _ops.rnd(_ops.rnd(a_pos * t, half) + _ops.rnd((1 - a_pos) * one_minus_t, half), half)
    focal_weight = _ops.rnd(alpha_t * _ops.rnd(_ops.power(pt, gamma), half), half)
    loss = _ops.rnd(_ops.bce_prob(x, t, half) * focal_weight, half)
    return _ops.narrow(loss, half)


def py_focal_loss_with_prob(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    gamma: float = 2.0,
    alpha: float = 0.25,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
) -> Tensor:
    """Focal loss on probabilities, as MMDetection's ``py_focal_loss_with_prob``
    (``FocalLoss(activated=True)``).

    .. math::
        \\text{pt} = (1 - p)\\,t + p\\,(1 - t), \\qquad
        \\ell = \\big(\\alpha t + (1 - \\alpha)(1 - t)\\big)\\,\\text{pt}^{\\gamma}\\,
        \\operatorname{BCE}(p, t)

    with PyTorch's ``binary_cross_entropy`` (each log clamped at -100), then the weight and
    reduction of :func:`sigmoid_focal_loss`.

    Args:
        pred (Tensor[N, C]): probabilities in [0, 1], float16/32/64.
        target (Tensor[N, C] or Tensor[N]): targets of ``pred``'s shape, or class indices in
            ``[0, C]`` (``C`` = background: an all-zero row).
        weight, gamma, alpha, reduction, avg_factor: as :func:`sigmoid_focal_loss`.

    Returns:
        Tensor: ``pred``'s shape for ``'none'``, else 0-d; ``pred``'s dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import py_focal_loss_with_prob
        >>> prob = ms.Tensor([[0.9, 0.2], [0.4, 0.7]])
        >>> loss = py_focal_loss_with_prob(prob, ms.Tensor([0, 2], ms.int64), reduction="sum")
        >>> round(float(loss), 6)
        0.510717
    """
    pred = check_float_tensor(pred, "pred")
    target = check_tensor(target, "target")
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    check_number(gamma, "gamma")
    check_number(alpha, "alpha")
    if gamma < 0:
        raise ValueError(f"gamma must be >= 0, but got {gamma}")
    if pred.ndim != target.ndim:
        target = _label_onehot(pred, target)
    check_same_shape(pred, target, "pred", "target")
    _ops.check_prob(pred)
    if weight is not None:
        weight = _expand_weight(check_tensor(weight, "weight"), pred)
    loss = _focal_prob_elementwise(pred, target, float(gamma), float(alpha))
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


class FocalLoss(nn.Cell):
    """MMDetection's ``FocalLoss`` (``mmdet.models.losses.FocalLoss``).
    See :func:`sigmoid_focal_loss`.

    ``activated=True``: ``pred`` are probabilities (:func:`py_focal_loss_with_prob`); else
    logits (:func:`sigmoid_focal_loss`). A ``target`` of one dim less than ``pred`` holds class
    indices, background = ``num_classes``, expanded to one-hot without the background column.

    Args:
        use_sigmoid (bool): must be True ("Only sigmoid focal loss supported now").
        gamma (float): focusing parameter. Default: 2.0.
        alpha (float): balance of positives. Default: 0.25.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.
        activated (bool): ``pred`` holds probabilities. Default: False.

    .. note::
        Index labels outside :math:`[0, C]` raise ``ValueError`` in PyNative mode (PyTorch's
        ``one_hot`` raises); under ``ms.jit`` they are not checked (MindSpore 2.10 does not
        compile a raise under a Tensor condition next to the fused aot kernel) and give an
        all-zero target row.

    Shape:
        - pred: :math:`(N, C)`.
        - target: :math:`(N, C)` (one-hot or soft) or :math:`(N)` class indices in
          :math:`[0, C]`.
        - weight: :math:`(N)`, :math:`(N*C)` or :math:`(N, C)`.
        - output: scalar, or :math:`(N, C)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import FocalLoss
        >>> loss_fn = FocalLoss()
        >>> pred = ms.Tensor([[2.0, -1.0], [0.5, 3.0]])
        >>> round(float(loss_fn(pred, ms.Tensor([0, 1], ms.int64))), 6)
        0.075133
    """

    def __init__(
        self,
        use_sigmoid: bool = True,
        gamma: float = 2.0,
        alpha: float = 0.25,
        reduction: str = "mean",
        loss_weight: float = 1.0,
        activated: bool = False,
    ) -> None:
        super().__init__()
        if use_sigmoid is not True:
            raise ValueError(f"Only sigmoid focal loss supported now (use_sigmoid={use_sigmoid!r})")
        self.use_sigmoid = use_sigmoid
        self.gamma = check_number(gamma, "gamma")
        self.alpha = check_number(alpha, "alpha")
        self.reduction = reduction
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self.activated = check_bool(activated, "activated")

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
        pred = check_float_tensor(pred, "pred")
        target = check_tensor(target, "target")
        if self.activated:
            loss = py_focal_loss_with_prob(
                pred, target, weight, self.gamma, self.alpha, reduction, avg_factor
            )
        elif pred.ndim != target.ndim:
            # MindSpore 2.10 does not compile a raise under a Tensor condition in the graph of
            # an aot Custom op (the fused kernel): the labels are checked eagerly only
            if not compiling():
                _check_labels(pred, target)
            onehot = _label_onehot(pred, target, check=False)
            loss = sigmoid_focal_loss(
                pred, onehot, weight, self.gamma, self.alpha, reduction, avg_factor
            )
        else:
            loss = sigmoid_focal_loss(
                pred, target, weight, self.gamma, self.alpha, reduction, avg_factor
            )
        return _scale(loss, self.loss_weight)
