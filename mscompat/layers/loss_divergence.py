"""Divergence and likelihood losses of ``torch.nn.functional``: ``kl_div``, ``huber_loss``,
``poisson_nll_loss``, ``gaussian_nll_loss`` and their ``torch.nn`` Cells.

MindSpore's ``ops.kl_div`` returns a zero gradient for ``target`` and ``mint``'s
``log_target``/``'batchmean'`` have no CPU kernel (measured on MindSpore 2.10): these are
composed of MindSpore ops with PyTorch's formulas, so every input gets its gradient.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Union

from mindspore import Tensor, nn, ops

from mscompat._checks import check_bool, check_float_tensor, check_number
from mscompat._precision import in_float64
from mscompat.custom_ops import pointwise_loss
from mscompat.custom_ops.registry import call, register
from mscompat.layers._loss_common import (
    Loss,
    apply_reduction,
    broadcast_pair,
    check_dtype_match,
    compute_dtype,
    legacy_reduction,
    scalar,
    upcast,
)
from mscompat.layers.loss_regression import distance_aot, distance_composite

__all__ = [
    "GaussianNLLLoss",
    "HuberLoss",
    "KLDivLoss",
    "PoissonNLLLoss",
    "gaussian_nll_loss",
    "huber_loss",
    "kl_div",
    "poisson_nll_loss",
]


# ----------------------------------------------------------------------------- kl_div


@register("layers.kl_div", "composite", note="PyTorch's pointwise formula in MindSpore ops")
def _kl_div_pointwise(x: Tensor, t: Tensor, log_target: bool) -> Tensor:
    if log_target:
        return ops.exp(t) * (t - x)
    # xlogy(t, t) = 0 at t = 0; the gradient there is NaN, as PyTorch's (0 * log(0) in the
    # unselected branch), and MindSpore's ops.xlogy gives NaN already in the forward pass.
    xlogy = ops.where(t == 0, ops.zeros_like(t), t * ops.log(t))
    return xlogy - t * x


def kl_div(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    log_target: bool = False,
) -> Tensor:
    """Kullback-Leibler divergence loss, as ``torch.nn.functional.kl_div``.

    ``input`` holds log-probabilities; ``target`` probabilities (log-probabilities with
    ``log_target=True``):

    .. math::
        \\ell = t \\,(\\log t - x) \\quad\\text{or, with log\\_target,}\\quad
        \\ell = e^{t}\\,(t - x)

    with :math:`0 \\log 0 = 0`.

    Args:
        input (Tensor[*]): log-probabilities, float16, float32 or float64.
        target (Tensor, broadcastable with ``input``): probabilities (or their logs).
        size_average (bool, optional): deprecated (PyTorch's legacy mapping: with ``reduce``
            it overrides ``reduction``).
        reduce (bool, optional): deprecated, see ``size_average``.
        reduction (str): ``'none'`` | ``'batchmean'`` (sum / ``input.shape[0]``, the KL
            divergence of the batch) | ``'sum'`` | ``'mean'`` (sum / number of elements).
            Default: ``'mean'``.
        log_target (bool): ``target`` is in log space. Default: False.

    Returns:
        Tensor: 0-d, or the broadcast shape with ``'none'``; ``input``'s dtype.

    Raises:
        TypeError: a non-float Tensor, a non-bool ``log_target``/``size_average``/``reduce``.
        ValueError: shapes that do not broadcast, an invalid ``reduction``.

    .. note::
        The gradient of ``target`` is PyTorch's (MindSpore's ``ops.kl_div`` gives zero). PyTorch
        warns that ``'mean'`` is not the KL divergence; this does not warn.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import kl_div
        >>> logp = ms.Tensor([[-1.2, -0.4], [-0.7, -0.7]])
        >>> q = ms.Tensor([[0.25, 0.75], [0.5, 0.5]])
        >>> round(float(kl_div(logp, q, reduction="batchmean")), 6)
        0.022259
    """
    x = check_float_tensor(input, "input")
    t = check_dtype_match(x, target, "input", "target")
    check_bool(log_target, "log_target")
    red = legacy_reduction(size_average, reduce, reduction, ("batchmean",))
    xb, tb = broadcast_pair(upcast(x), upcast(t), "input", "target")
    loss = call("layers.kl_div", xb, tb, log_target)
    if red != "batchmean":
        return apply_reduction(loss, red, x.dtype)
    total = apply_reduction(loss, "sum", compute_dtype(x.dtype))
    if x.ndim == 0:
        return total.astype(x.dtype)
    return (total / scalar(float(x.shape[0]), total)).astype(x.dtype)


class KLDivLoss(nn.Cell):
    """Kullback-Leibler divergence loss Cell, as ``torch.nn.KLDivLoss``. See :func:`kl_div`.

    Args:
        size_average (bool, optional): deprecated, see :func:`kl_div`.
        reduce (bool, optional): deprecated, see :func:`kl_div`.
        reduction (str): ``'none'`` | ``'batchmean'`` | ``'sum'`` | ``'mean'``.
            Default: ``'mean'``.
        log_target (bool): ``target`` is in log space. Default: False.

    Shape:
        - input: :math:`(*)` log-probabilities.
        - target: broadcastable with ``input``.
        - output: scalar, or the broadcast shape with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import KLDivLoss
        >>> loss = KLDivLoss(reduction="sum", log_target=True)
        >>> float(loss(ms.Tensor([-0.5, -1.0]), ms.Tensor([-0.5, -1.0])))
        0.0
    """

    def __init__(
        self,
        size_average: Optional[bool] = None,
        reduce: Optional[bool] = None,
        reduction: str = "mean",
        log_target: bool = False,
    ) -> None:
        super().__init__()
        self.reduction = legacy_reduction(size_average, reduce, reduction, ("batchmean",))
        self.log_target = check_bool(log_target, "log_target")

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


# ----------------------------------------------------------------------------- huber_loss


register("layers.huber_loss", "composite", note="PyTorch's pointwise formula in MindSpore ops")(
    distance_composite
)
pointwise_loss.LIBRARY.backend(
    "layers.huber_loss",
    "fused C++ forward and backward (smooth L1's)",
    pointwise_loss.kernel_dtypes,
)(distance_aot)


def huber_loss(
    input: Tensor,
    target: Tensor,
    reduction: str = "mean",
    delta: float = 1.0,
    weight: Optional[Tensor] = None,
) -> Tensor:
    """Huber loss, as ``torch.nn.functional.huber_loss``.

    .. math::
        \\ell = \\begin{cases} \\tfrac12 (x - y)^2 & |x - y| < \\delta \\\\
        \\delta\\,(|x - y| - \\tfrac12\\delta) & \\text{otherwise} \\end{cases}

    Args:
        input (Tensor[*]): float16, float32 or float64.
        target (Tensor, broadcastable with ``input``).
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        delta (float): where the loss turns linear, > 0. Default: 1.0.
        weight (Tensor, shape of ``input``, optional): elementwise weight (PyTorch >= 2.6).

    Returns:
        Tensor: 0-d, or the broadcast shape with ``'none'``; ``input``'s dtype.

    Raises:
        TypeError: non-float Tensors, a non-number ``delta``.
        ValueError: shapes that do not broadcast, ``weight`` not of ``input``'s shape,
            ``delta <= 0``, an invalid ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import huber_loss
        >>> huber_loss(ms.Tensor([0.5, 3.0]), ms.Tensor([0.0, 0.0]), reduction="none")
        Tensor(shape=[2], dtype=Float32, value= [ 1.25000000e-01,  2.50000000e+00])
    """
    x = check_float_tensor(input, "input")
    t = check_dtype_match(x, target, "input", "target")
    red = legacy_reduction(None, None, reduction)
    delta = check_number(delta, "delta")
    if not delta > 0:
        raise ValueError(f"delta must be > 0, but got delta={delta}")
    if weight is not None:
        weight = check_dtype_match(x, weight, "input", "weight")
        if weight.shape != x.shape:
            raise ValueError(
                f"weight must have input's shape {x.shape}, but got weight.shape={weight.shape}"
            )
    xb, tb = broadcast_pair(upcast(x), upcast(t), "input", "target")
    if xb.size == 0:
        return apply_reduction(xb, red, x.dtype)
    if weight is None:
        return call("layers.huber_loss", xb, tb, "huber", delta, red, x.dtype)
    loss = call("layers.huber_loss", xb, tb, "huber", delta, "none", xb.dtype)
    return apply_reduction(loss * upcast(weight), red, x.dtype)


class HuberLoss(nn.Cell):
    """Huber loss Cell, as ``torch.nn.HuberLoss``. See :func:`huber_loss`.

    Args:
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        delta (float): where the loss turns linear. Default: 1.0.

    Shape:
        - input: :math:`(*)`.
        - target: same shape as ``input``.
        - output: scalar, or :math:`(*)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import HuberLoss
        >>> float(HuberLoss(delta=2.0)(ms.Tensor([3.0]), ms.Tensor([0.0])))
        4.0
    """

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__()
        self.reduction = legacy_reduction(None, None, reduction)
        self.delta = check_number(delta, "delta")

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return huber_loss(input, target, self.reduction, self.delta)


# ----------------------------------------------------------------------------- poisson_nll_loss

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


@register(
    "layers.poisson_nll_loss", "composite", note="PyTorch's pointwise formula in MindSpore ops"
)
def _poisson_pointwise(x: Tensor, t: Tensor, log_input: bool, full: bool, eps: float) -> Tensor:
    loss = in_float64(ops.exp, x) - t * x if log_input else x - t * ops.log(x + scalar(eps, x))
    if full:
        # Stirling's approximation of log(t!), only where t > 1 (PyTorch's masked_fill)
        stirling = t * ops.log(t) - t + 0.5 * ops.log(scalar(2 * math.pi, t) * t)
        loss = loss + ops.where(t <= 1, ops.zeros_like(stirling), stirling)
    return loss


def poisson_nll_loss(
    input: Tensor,
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: Optional[bool] = None,
    eps: float = 1e-8,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """Poisson negative log likelihood loss, as ``torch.nn.functional.poisson_nll_loss``.

    .. math::
        \\ell = e^{x} - t\\,x \\quad\\text{(log\\_input)}, \\qquad
        \\ell = x - t \\log(x + \\epsilon) \\quad\\text{(otherwise)}

    plus, with ``full``, Stirling's term :math:`t\\log t - t + \\tfrac12\\log(2\\pi t)` where
    :math:`t > 1`.

    Args:
        input (Tensor[*]): the rate's log (``log_input``) or the rate; float16/32/64.
        target (Tensor, broadcastable with ``input``): counts.
        log_input (bool): ``input`` is the log of the rate. Default: True.
        full (bool): add Stirling's term. Default: False.
        size_average (bool, optional): deprecated (PyTorch's legacy mapping).
        eps (float): added to the rate before its log when ``log_input=False``. Default: 1e-8.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Returns:
        Tensor: 0-d, or the broadcast shape with ``'none'``; ``input``'s dtype.

    Raises:
        TypeError: non-float Tensors, non-bool flags, a non-number ``eps``.
        ValueError: shapes that do not broadcast, an invalid ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import poisson_nll_loss
        >>> round(float(poisson_nll_loss(ms.Tensor([0.0, 1.0]), ms.Tensor([1.0, 2.0]))), 5)
        0.85914
    """
    x = check_float_tensor(input, "input")
    t = check_dtype_match(x, target, "input", "target")
    check_bool(log_input, "log_input")
    check_bool(full, "full")
    eps = check_number(eps, "eps")
    red = legacy_reduction(size_average, reduce, reduction)
    xb, tb = broadcast_pair(upcast(x), upcast(t), "input", "target")
    loss = call("layers.poisson_nll_loss", xb, tb, log_input, full, eps)
    return apply_reduction(loss, red, x.dtype)


class PoissonNLLLoss(Loss):
    """Poisson negative log likelihood loss Cell, as ``torch.nn.PoissonNLLLoss``. See
    :func:`poisson_nll_loss`.

    Args:
        log_input (bool): ``input`` is the log of the rate. Default: True.
        full (bool): add Stirling's term. Default: False.
        size_average (bool, optional): deprecated.
        eps (float): see :func:`poisson_nll_loss`. Default: 1e-8.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - input: :math:`(*)`.
        - target: same shape as ``input``.
        - output: scalar, or :math:`(*)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import PoissonNLLLoss
        >>> float(PoissonNLLLoss(reduction="sum")(ms.Tensor([0.0]), ms.Tensor([0.0])))
        1.0
    """

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average: Optional[bool] = None,
        eps: float = 1e-8,
        reduce: Optional[bool] = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.log_input = check_bool(log_input, "log_input")
        self.full = check_bool(full, "full")
        self.eps = check_number(eps, "eps")

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return poisson_nll_loss(
            input, target, self.log_input, self.full, eps=self.eps, reduction=self.reduction
        )


# ----------------------------------------------------------------------------- gaussian_nll_loss


def _var_shape_ok(input_shape: Any, var_shape: Any) -> bool:
    """PyTorch's rule: var of ``input``'s shape, or one dim short of it (homoscedastic), or
    of its ndim with exactly one mismatched dim, of size 1."""
    if tuple(var_shape) == tuple(input_shape) or tuple(input_shape[:-1]) == tuple(var_shape):
        return True
    if len(var_shape) != len(input_shape):
        return False
    return sum(v for i, v in zip(input_shape, var_shape) if i != v) == 1


@register(
    "layers.gaussian_nll_loss", "composite", note="PyTorch's pointwise formula in MindSpore ops"
)
def _gaussian_pointwise(x: Tensor, t: Tensor, var: Tensor, full: bool, eps: float) -> Tensor:
    # PyTorch clamps a copy of var under no_grad: the clamped value, var's gradient unclamped
    clamped = ops.maximum(var, scalar(eps, var))
    var = var + ops.stop_gradient(clamped - var)
    diff = x - t
    loss = 0.5 * (ops.log(var) + diff * diff / var)
    if full:
        loss = loss + scalar(_HALF_LOG_2PI, loss)
    return loss


def gaussian_nll_loss(
    input: Tensor,
    target: Tensor,
    var: Union[Tensor, float],
    full: bool = False,
    eps: float = 1e-6,
    reduction: str = "mean",
) -> Tensor:
    """Gaussian negative log likelihood loss, as ``torch.nn.functional.gaussian_nll_loss``.

    .. math::
        \\ell = \\tfrac12\\Big(\\log\\max(\\sigma^2, \\epsilon) +
        \\frac{(x - y)^2}{\\max(\\sigma^2, \\epsilon)}\\Big)
        \\;\\big(+\\tfrac12\\log 2\\pi \\text{ with full}\\big)

    Args:
        input (Tensor[*]): the expectations, float16, float32 or float64.
        target (Tensor, broadcastable with ``input``): samples.
        var (Tensor | float): positive variances: ``input``'s shape (heteroscedastic), one dim
            short of it, or of its ndim with exactly one dim of size 1 where ``input``'s
            differs (homoscedastic); or one positive float.
        full (bool): add the constant :math:`\\tfrac12\\log 2\\pi`. Default: False.
        eps (float): the variance's floor (a clamp with an identity gradient, as PyTorch's
            ``no_grad`` clamp). Default: 1e-6.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Returns:
        Tensor: 0-d, or the broadcast shape with ``'none'``; ``input``'s dtype.

    Raises:
        TypeError: non-float Tensors, a ``var`` neither Tensor nor float.
        ValueError: ``var`` of a shape none of the rules allows, a negative ``var`` (its
            values are read, in graph mode too), an invalid ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import gaussian_nll_loss
        >>> x, y = ms.Tensor([[1.0, 2.0]]), ms.Tensor([[1.5, 2.0]])
        >>> round(float(gaussian_nll_loss(x, y, ms.Tensor([[0.5]]))), 6)
        -0.221574
    """
    x = check_float_tensor(input, "input")
    t = check_dtype_match(x, target, "input", "target")
    check_bool(full, "full")
    eps = check_number(eps, "eps")
    if isinstance(var, (float, int)) and not isinstance(var, bool):
        if var < 0:
            raise ValueError(f"var has negative entry/entries: var={var}")
        v = ops.fill(x.dtype, x.shape, float(var))
    else:
        v = check_dtype_match(x, var, "input", "var")
        if not _var_shape_ok(x.shape, v.shape):
            raise ValueError(
                f"var is of incorrect size: var.shape={v.shape} for input.shape={x.shape} "
                "(input's shape, input's without its last dim, or input's with one dim of 1)"
            )
        if v.shape != x.shape and tuple(x.shape[:-1]) == tuple(v.shape):
            v = v.expand_dims(-1)
        if v.size > 0 and (v < 0).any():
            raise ValueError("var has negative entry/entries")
    red = legacy_reduction(None, None, reduction)
    xb, tb = broadcast_pair(upcast(x), upcast(t), "input", "target")
    loss = call("layers.gaussian_nll_loss", xb, tb, upcast(v), full, eps)
    return apply_reduction(loss, red, x.dtype)


class GaussianNLLLoss(nn.Cell):
    """Gaussian negative log likelihood loss Cell, as ``torch.nn.GaussianNLLLoss``. See
    :func:`gaussian_nll_loss`.

    Args:
        full (bool): add the constant term. Default: False.
        eps (float): the variance's floor. Default: 1e-6.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - input: :math:`(N, *)` or :math:`(*)`.
        - target: same shape as ``input`` (or broadcastable).
        - var: ``input``'s shape, or with one dim of size 1, or one dim short; or a float.
        - output: scalar, or the broadcast shape with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import GaussianNLLLoss
        >>> loss = GaussianNLLLoss(reduction="sum")
        >>> float(loss(ms.Tensor([1.0]), ms.Tensor([1.0]), ms.Tensor([1.0])))
        0.0
    """

    def __init__(self, *, full: bool = False, eps: float = 1e-6, reduction: str = "mean") -> None:
        super().__init__()
        self.full = check_bool(full, "full")
        self.eps = check_number(eps, "eps")
        self.reduction = legacy_reduction(None, None, reduction)

    def construct(self, input: Tensor, target: Tensor, var: Union[Tensor, float]) -> Tensor:
        return gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)
