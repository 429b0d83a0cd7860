"""MMDetection's elementwise regression losses: Smooth L1, L1, Balanced L1 and MSE.

Mirrors ``mmdet/models/losses/{smooth_l1_loss,balanced_l1_loss,mse_loss}.py`` (MMDetection
3.3): the ``@weighted_loss`` functions ``(pred, target, weight=None, reduction='mean',
avg_factor=None, **config)`` and their Cells with ``forward(pred, target, weight=None,
avg_factor=None, reduction_override=None)``. These are MMDetection's, not
``torch.nn.functional.smooth_l1_loss``/``mse_loss`` (see :mod:`mscompat.layers`): the weight,
``avg_factor`` (with its ``+ eps``), the empty-target shortcut ``pred.sum() * 0`` and, for
``SmoothL1Loss``/``L1Loss``, the all-non-positive-weight shortcut ``(pred * weight).sum()``.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Tuple

from mindspore import Tensor, nn, ops

from mscompat._checks import check_float_tensor, check_number, check_reduction, check_tensor
from mscompat.custom_ops import regression_loss as _kernels
from mscompat.custom_ops.registry import TensorSpec, call, register
from mscompat.losses import _fused, _ops
from mscompat.losses import _torch_math as tm
from mscompat.losses._iou_common import refuse_unless_zero, zero_weight_sum
from mscompat.losses.utils import (
    AvgFactor,
    _check_avg_factor,
    _sum,
    static_refusal,
    weight_reduce_loss,
    weight_shape_error,
)

__all__ = [
    "BalancedL1Loss",
    "L1Loss",
    "MSELoss",
    "SmoothL1Loss",
    "balanced_l1_loss",
    "l1_loss",
    "mse_loss",
    "smooth_l1_loss",
]


def _check(pred: Any, target: Any, reduction: str, avg_factor: AvgFactor) -> Any:
    pred = check_float_tensor(pred, "pred")
    target = check_tensor(target, "target")
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    return pred, target


def _same_shape(pred: Tensor, target: Tensor) -> None:
    if pred.shape != target.shape:
        raise ValueError(
            f"target must have the same shape as pred {pred.shape}, but got {target.shape}"
        )


def _check_beta(beta: Any) -> float:
    if check_number(beta, "beta") <= 0:
        raise ValueError(f"beta must be > 0, but got {beta}")
    return float(beta)


def _check_alpha_gamma(alpha: Any, gamma: Any) -> Any:
    """MMDetection divides by alpha and by ``b = e ** (gamma / alpha) - 1``
    (ZeroDivisionError there)."""
    if check_number(alpha, "alpha") == 0:
        raise ValueError("alpha must be non-zero (balanced_l1_loss divides by it), but got 0")
    if check_number(gamma, "gamma") == 0:
        raise ValueError(
            "gamma must be non-zero (balanced_l1_loss divides by e ** (gamma / alpha) - 1), "
            "but got 0"
        )
    return float(alpha), float(gamma)


def _empty_target(
    pred: Tensor, weight: Optional[Tensor], reduction: str, avg_factor: AvgFactor
) -> Tensor:
    """MMDetection's ``pred.sum() * 0`` for an empty target (a 0-d loss), weighted by
    broadcasting and reduced."""
    zero = tm.mul(_sum(pred) if pred.size else ops.zeros((), pred.dtype), 0.0)
    if weight is not None:
        zero = tm.mul(zero, check_tensor(weight, "weight"))
    return weight_reduce_loss(zero, None, reduction, avg_factor)


# ----------------------------------------------------------------------------- backends
# The elementwise cores, one op each in the registry: the composite (PyTorch's op sequence,
# float16 rounded per op) and the fused kernel (float32/float64, pred and target of one dtype).


def _l1_elementwise(pred: Tensor, target: Tensor) -> Tensor:
    return tm.ew(ops.abs, tm.sub(pred, target))


def _smooth_l1_elementwise(pred: Tensor, target: Tensor, beta: float) -> Tensor:
    diff = _l1_elementwise(pred, target)
    small = tm.compare_scalar(lambda x, s: x < s, diff, beta)
    quad = tm.div(tm.mul(tm.mul(0.5, diff), diff), beta)
    lin = tm.ew(lambda d, b: d - 0.5 * b, diff, beta)
    return ops.where(small, quad, lin)


def _balanced_elementwise(
    pred: Tensor, target: Tensor, beta: float, alpha: float, gamma: float
) -> Tensor:
    diff = _l1_elementwise(pred, target)
    # MMDetection's scalars, in Python doubles: b = e ** (gamma / alpha) - 1, alpha / b, ...
    a64, g64, bt64 = tm.f64(alpha), tm.f64(gamma), tm.f64(beta)
    b64 = ops.pow(tm.f64(math.e), g64 / a64) - 1
    dt = diff.dtype
    b, a, g, bt = (tm.constant(v, dt) for v in (b64, a64, g64, bt64))
    a_over_b, g_over_b = tm.constant(a64 / b64, dt), tm.constant(g64 / b64, dt)
    a_beta = tm.constant(a64 * bt64, dt)
    bd = tm.mul(b, diff)
    log_term = tm.ew(ops.log, tm.add(tm.div(bd, bt), 1.0))
    inner = tm.sub(tm.mul(tm.mul(a_over_b, tm.add(bd, 1.0)), log_term), tm.mul(a, diff))
    outer = tm.sub(tm.add(tm.mul(g, diff), g_over_b), a_beta)
    return ops.where(tm.compare_scalar(lambda x, s: x < s, diff, beta), inner, outer)


_NOTE = "MindSpore ops, PyTorch's op sequence"
register("losses.l1_loss", "composite", note=_NOTE)(_l1_elementwise)
register("losses.smooth_l1_loss", "composite", note=_NOTE)(_smooth_l1_elementwise)
register("losses.balanced_l1_loss", "composite", note=_NOTE)(_balanced_elementwise)


def _kernel_dtypes(pred: TensorSpec, target: TensorSpec, *_: object) -> Optional[str]:
    if target.dtype != pred.dtype:
        return f"target's {target.dtype_name} differs from pred's {pred.dtype_name}"
    return _ops.kernel_dtype(pred)


_FUSED = (
    "fused C++ forward and backward kernels; 'mean'/'sum' with the weight (pred's shape), a "
    "number avg_factor and a Cell's loss_weight in the same kernel (a Tensor avg_factor: "
    "divided after)"
)
_L1, _SMOOTH_L1, _BALANCED_L1 = (f"losses.{n}_loss" for n in ("l1", "smooth_l1", "balanced_l1"))


# The aot implementations take a plan (mscompat.losses._fused.tail) and the weight for the
# reduced loss in the same kernel; the front doors pass them where the plan covers the call.
@_kernels.LIBRARY.backend(_L1, _FUSED, _kernel_dtypes)
def _l1_aot(pred: Tensor, target: Tensor, plan: Any = (), weight: Any = None) -> Tensor:
    return _kernels.regression_loss(pred, target, _kernels.head(_L1), plan, weight)


@_kernels.LIBRARY.backend(_SMOOTH_L1, _FUSED, _kernel_dtypes)
def _smooth_l1_aot(
    pred: Tensor, target: Tensor, beta: float, plan: Any = (), weight: Any = None
) -> Tensor:
    return _kernels.regression_loss(pred, target, _kernels.head(_SMOOTH_L1, beta), plan, weight)


@_kernels.LIBRARY.backend(_BALANCED_L1, _FUSED, _kernel_dtypes)
def _balanced_aot(
    pred: Tensor,
    target: Tensor,
    beta: float,
    alpha: float,
    gamma: float,
    plan: Any = (),
    weight: Any = None,
) -> Tensor:
    head = _kernels.head(_BALANCED_L1, beta, alpha, gamma)
    return _kernels.regression_loss(pred, target, head, plan, weight)


def _loss(
    op: str,
    config: Tuple[float, ...],
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor],
    reduction: str,
    avg_factor: AvgFactor,
) -> Tensor:
    """The loss ``op`` of checked inputs, weighted and reduced: one kernel where the registry
    picks the aot backend and its reducing entry point covers the call, else the elementwise
    backend, then :func:`weight_reduce_loss`."""
    plan = _fused.tail(op, config, pred, target, weight, reduction, avg_factor)
    if plan:
        return _fused.run(op, config, plan, pred, target, weight, avg_factor)
    if target.size == 0:
        return _empty_target(pred, weight, reduction, avg_factor)
    _same_shape(pred, target)
    return weight_reduce_loss(call(op, pred, target, *config), weight, reduction, avg_factor)


# ----------------------------------------------------------------------------- functions


def smooth_l1_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    beta: float = 1.0,
) -> Tensor:
    """Smooth L1 loss, MMDetection's ``smooth_l1_loss``. With :math:`d = |p - t|`:

    .. math::
        \\ell = \\begin{cases} 0.5\\, d^2 / \\beta & d < \\beta \\\\ d - 0.5\\,\\beta &
        \\text{otherwise} \\end{cases}

    then :func:`~mscompat.losses.weight_reduce_loss`.

    Args:
        pred (Tensor[*]): predictions, float16/32/64.
        target (Tensor[*]): targets of ``pred``'s shape.
        weight (Tensor, optional): elementwise weight (same number of dims, broadcastable).
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): with ``'mean'``, divide the weighted sum by
            ``avg_factor + eps``; not allowed with ``'sum'``.
        beta (float): threshold, > 0. Default: 1.0.

    Returns:
        Tensor: ``pred``'s shape for ``'none'``, else 0-d. An empty ``target`` gives
        MMDetection's ``pred.sum() * 0`` (0-d), then weighted and reduced.

    Raises:
        ValueError: ``beta <= 0``, different shapes, invalid ``reduction``, ``avg_factor`` with
            ``'sum'``.
        TypeError: ``pred`` not floating, ``target``/``weight`` not Tensors.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import smooth_l1_loss
        >>> pred, target = ms.Tensor([0.0, 0.5, 3.0]), ms.Tensor([0.0, 0.0, 0.0])
        >>> smooth_l1_loss(pred, target, reduction="none")
        Tensor(shape=[3], dtype=Float32, value= [ 0.00000000e+00,  1.25000000e-01,  2.50000000e+00])
    """
    pred, target = _check(pred, target, reduction, avg_factor)
    beta = _check_beta(beta)
    return _loss(_SMOOTH_L1, (beta,), pred, target, weight, reduction, avg_factor)


def l1_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
) -> Tensor:
    """L1 loss, MMDetection's ``l1_loss``: :math:`\\ell = |p - t|`, then
    :func:`~mscompat.losses.weight_reduce_loss`.

    Args:
        pred (Tensor[*]): predictions, float16/32/64.
        target (Tensor[*]): targets of ``pred``'s shape.
        weight (Tensor, optional): elementwise weight.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): see :func:`smooth_l1_loss`.

    Returns:
        Tensor: ``pred``'s shape for ``'none'``, else 0-d (``pred.sum() * 0`` for an empty
        ``target``).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import l1_loss
        >>> l1_loss(ms.Tensor([0.0, 2.0, 3.0]), ms.Tensor([1.0, 1.0, 1.0]), avg_factor=2.0)
        Tensor(shape=[], dtype=Float32, value= 2)
    """
    pred, target = _check(pred, target, reduction, avg_factor)
    return _loss(_L1, (), pred, target, weight, reduction, avg_factor)


def balanced_l1_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    beta: float = 1.0,
    alpha: float = 0.5,
    gamma: float = 1.5,
) -> Tensor:
    """Balanced L1 loss (`Libra R-CNN <https://arxiv.org/abs/1904.02701>`_), MMDetection's
    ``balanced_l1_loss``. With :math:`d = |p - t|` and :math:`b = e^{\\gamma / \\alpha} - 1`:

    .. math::
        \\ell = \\begin{cases}
        \\frac{\\alpha}{b}(b d + 1)\\log\\big(\\frac{b d}{\\beta} + 1\\big) - \\alpha d
        & d < \\beta \\\\
        \\gamma d + \\frac{\\gamma}{b} - \\alpha \\beta & \\text{otherwise} \\end{cases}

    Args:
        pred (Tensor[*]): predictions, float16/32/64, usually ``(N, 4)``.
        target (Tensor[*]): targets of ``pred``'s shape.
        weight (Tensor, optional): elementwise weight.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): see :func:`smooth_l1_loss`.
        beta (float): threshold, > 0. Default: 1.0.
        alpha (float): the denominator :math:`\\alpha`. Default: 0.5.
        gamma (float): :math:`\\gamma`. Default: 1.5.

    Returns:
        Tensor: ``pred``'s shape for ``'none'``, else 0-d.

    .. note::
        MMDetection's ``balanced_l1_loss`` also takes a ``reduction`` in its inner signature
        that the decorator shadows; here there is one ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import balanced_l1_loss
        >>> pred, target = ms.Tensor([[0.0, 0.5, 3.0]]), ms.Tensor([[0.0, 0.0, 0.0]])
        >>> round(float(balanced_l1_loss(pred, target, reduction="sum")), 4)
        4.4792
    """
    pred, target = _check(pred, target, reduction, avg_factor)
    beta = _check_beta(beta)
    _check_alpha_gamma(alpha, gamma)
    config = (beta, float(alpha), float(gamma))
    return _loss(_BALANCED_L1, config, pred, target, weight, reduction, avg_factor)


def mse_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
) -> Tensor:
    """MSE loss, MMDetection's ``mse_loss``: :math:`\\ell = (p - t)^2` (PyTorch's
    ``F.mse_loss(reduction='none')``), then :func:`~mscompat.losses.weight_reduce_loss`.

    Args:
        pred (Tensor[*]): predictions, float16/32/64.
        target (Tensor[*]): targets of ``pred``'s shape.
        weight (Tensor, optional): elementwise weight.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): see :func:`smooth_l1_loss`.

    Returns:
        Tensor: ``pred``'s shape for ``'none'``, else 0-d (NaN for an empty mean).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import mse_loss
        >>> mse_loss(ms.Tensor([1.0, 3.0]), ms.Tensor([0.0, 0.0]))
        Tensor(shape=[], dtype=Float32, value= 5)
    """
    pred, target = _check(pred, target, reduction, avg_factor)
    target = check_float_tensor(target, "target")
    _same_shape(pred, target)
    if pred.size == 0:
        loss = ops.zeros(pred.shape, tm._promote(pred.dtype, target.dtype))
    else:
        loss = tm.square(tm.sub(pred, target))
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


# ----------------------------------------------------------------------------- Cells


class _RegressionLoss(nn.Cell):
    """MMDetection's ``forward`` of these modules: ``reduction_override``, the loss function
    with the Cell's config, scaled by ``loss_weight``; with ``_zero_weight``
    (SmoothL1Loss, L1Loss) a ``weight`` with no positive entry returns ``(pred * weight).sum()``
    before any reduction. ``_fn`` is the loss function, ``_config`` its trailing arguments."""

    _zero_weight = False
    _fn = staticmethod(mse_loss)
    _op = ""  # the registry's op with the reducing kernel (none for MSE)

    def __init__(self, reduction: str, loss_weight: float) -> None:
        super().__init__()
        check_reduction(reduction)
        self.reduction = reduction
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self._config: Tuple[float, ...] = ()

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        reduction = self.reduction
        if reduction_override is not None:
            check_reduction(reduction_override, "reduction_override")
            reduction = reduction_override
        if self._zero_weight and weight is not None and check_tensor(weight, "weight").size == 0:
            # an empty weight has no positive entry, statically: graph mode must not compile
            # the other branch, whose checks (avg_factor with 'sum') MMDetection never reaches
            return _sum(tm.mul(check_float_tensor(pred, "pred"), weight))
        if self._zero_weight and weight is not None:
            pred = check_float_tensor(pred, "pred")
            weight = check_tensor(weight, "weight")
            refusal = weight_shape_error(tuple(pred.shape), tuple(weight.shape)) or static_refusal(
                reduction, avg_factor
            )
            if refusal:  # MMDetection returns its shortcut before it refuses the call
                return refuse_unless_zero(pred, weight, refusal)
        if self._op:
            # one kernel for the whole loss (zero-weight shortcut and loss_weight included)
            pred = check_float_tensor(pred, "pred")
            plan = _fused.tail(
                self._op,
                self._config,
                pred,
                target,
                weight,
                reduction,
                avg_factor,
                self.loss_weight,
                self._zero_weight,
            )
            if plan:
                return _fused.run(
                    self._op,
                    self._config,
                    plan,
                    pred,
                    target,
                    weight,
                    avg_factor,
                    self.loss_weight,
                )
        if self._zero_weight and weight is not None:
            pred = check_float_tensor(pred, "pred")
            weight = check_tensor(weight, "weight")
            if not ops.any(weight > 0):
                return zero_weight_sum(pred, weight)
        loss = self._fn(pred, target, weight, reduction, avg_factor, *self._config)
        return tm.scale(loss, self.loss_weight)


class SmoothL1Loss(_RegressionLoss):
    """Smooth L1 loss Cell, MMDetection's ``SmoothL1Loss``. See :func:`smooth_l1_loss`.

    ``forward(pred, target, weight=None, avg_factor=None, reduction_override=None)``; a
    ``weight`` with no positive entry returns ``(pred * weight).sum()``; the loss is scaled by
    ``loss_weight``.

    Args:
        beta (float): threshold, > 0. Default: 1.0.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.

    Shape:
        - pred, target: :math:`(*)`, usually :math:`(N, 4)`; weight: the same.
        - output: scalar, or :math:`(*)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import SmoothL1Loss
        >>> pred, target = ms.Tensor([[0.0, 0.5, 3.0, 1.0]]), ms.Tensor([[0.0, 0.0, 0.0, 1.0]])
        >>> SmoothL1Loss(beta=1.0, loss_weight=2.0)(pred, target, reduction_override="sum")
        Tensor(shape=[], dtype=Float32, value= 5.25)
    """

    _zero_weight = True
    _fn = staticmethod(smooth_l1_loss)
    _op = _SMOOTH_L1

    def __init__(
        self, beta: float = 1.0, reduction: str = "mean", loss_weight: float = 1.0
    ) -> None:
        super().__init__(reduction, loss_weight)
        self.beta = _check_beta(beta)
        self._config = (self.beta,)


class L1Loss(_RegressionLoss):
    """L1 loss Cell, MMDetection's ``L1Loss``. See :func:`l1_loss`; the ``forward`` is
    :class:`SmoothL1Loss`'s.

    Args:
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import L1Loss
        >>> L1Loss()(ms.Tensor([[0.0, 2.0]]), ms.Tensor([[1.0, 1.0]]))
        Tensor(shape=[], dtype=Float32, value= 1)
    """

    _zero_weight = True
    _fn = staticmethod(l1_loss)
    _op = _L1

    def __init__(self, reduction: str = "mean", loss_weight: float = 1.0) -> None:
        super().__init__(reduction, loss_weight)


class BalancedL1Loss(_RegressionLoss):
    """Balanced L1 loss Cell, MMDetection's ``BalancedL1Loss``. See :func:`balanced_l1_loss`.

    ``forward(pred, target, weight=None, avg_factor=None, reduction_override=None)``, scaled by
    ``loss_weight`` (no zero-weight shortcut, as MMDetection).

    Args:
        alpha (float): :math:`\\alpha`. Default: 0.5.
        gamma (float): :math:`\\gamma`. Default: 1.5.
        beta (float): threshold, > 0. Default: 1.0.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import BalancedL1Loss
        >>> pred, target = ms.Tensor([[0.0, 0.5, 3.0]]), ms.Tensor([[0.0, 0.0, 0.0]])
        >>> round(float(BalancedL1Loss(reduction="sum")(pred, target)), 4)
        4.4792
    """

    def __init__(
        self,
        alpha: float = 0.5,
        gamma: float = 1.5,
        beta: float = 1.0,
        reduction: str = "mean",
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(reduction, loss_weight)
        self.alpha, self.gamma = _check_alpha_gamma(alpha, gamma)
        self.beta = _check_beta(beta)
        self._config = (self.beta, self.alpha, self.gamma)

    _fn = staticmethod(balanced_l1_loss)
    _op = _BALANCED_L1


class MSELoss(_RegressionLoss):
    """MSE loss Cell, MMDetection's ``MSELoss``. See :func:`mse_loss`; the ``forward`` is
    :class:`BalancedL1Loss`'s.

    Args:
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import MSELoss
        >>> MSELoss(loss_weight=0.5)(ms.Tensor([1.0, 3.0]), ms.Tensor([0.0, 0.0]))
        Tensor(shape=[], dtype=Float32, value= 2.5)
    """

    def __init__(self, reduction: str = "mean", loss_weight: float = 1.0) -> None:
        super().__init__(reduction, loss_weight)
