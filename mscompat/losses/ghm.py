"""Gradient harmonizing losses GHM-C and GHM-R (`Li et al., 2019
<https://arxiv.org/abs/1811.05181>`_), as MMDetection's ``GHMC`` and ``GHMR``.

Mirrors ``mmdet/models/losses/ghm_loss.py`` (MMDetection 3.3). MMDetection bins the gradient
norms with a Python loop and ``.item()``; here the bins are counted at once (the same
comparisons with the same float32 edges), so the loss runs in graph mode too. The moving
averages ``acc_sum`` of ``momentum > 0`` are a non-trainable ``Parameter`` of the Cell, updated
with ``assign`` on every call, as MMDetection updates its buffer.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

from mscompat._checks import (
    check_float_tensor,
    check_int,
    check_number,
    check_reduction,
    check_tensor,
)
from mscompat.losses import _ops
from mscompat.losses import _torch_math as tm
from mscompat.losses.utils import _AVG_EPS, _sum

__all__ = ["GHMC", "GHMR", "ghmc_loss", "ghmr_loss"]

F16, F32, F64 = ms.float16, ms.float32, ms.float64


def _edges(bins: int, last: Optional[float]) -> np.ndarray:
    """MMDetection's float32 ``arange(bins + 1) / bins``; its last edge ``+= 1e-6`` (GHM-C,
    ``last=None``) or ``= last`` (GHM-R: 1e3)."""
    edges = np.arange(bins + 1, dtype=np.float32) / np.float32(bins)
    if last is None:
        edges[-1] = np.float32(edges[-1] + np.float32(1e-6))
    else:
        edges[-1] = np.float32(last)
    return edges


def _sigmoid(x: Tensor) -> Tensor:
    return _ops.in_float64(ops.sigmoid, x)


def _log_sigmoid(x: Tensor) -> Tensor:
    return ops.minimum(x, ops.zeros_like(x)) - ops.log1p(ops.exp(-ops.abs(x)))


def bce_with_logits_f32_target(pred: Tensor, target: Tensor) -> Tensor:
    """PyTorch's ``F.binary_cross_entropy_with_logits(pred, target)`` for a float32 ``target``:
    ``(1 - target).mul_(pred).sub_(log_sigmoid(pred))``, in place in float32, so the loss is
    float32 whatever ``pred``'s dtype (float64 rounded to float32 after each step)."""
    one_minus = 1 - target
    if pred.dtype == F64:
        step = (one_minus.astype(F64) * pred).astype(F32)
        return (step.astype(F64) - _log_sigmoid(pred)).astype(F32)
    if pred.dtype == F16:
        x = pred.astype(F32)
        log_sig = _log_sigmoid(x).astype(F16).astype(F32)
        return one_minus * x - log_sig
    return one_minus * pred - _log_sigmoid(pred)


def _harmonize(
    g: Tensor,
    valid: Tensor,
    tot: Tensor,
    edges: np.ndarray,
    momentum: float,
    acc_sum: Optional[Tensor],
    weight_dtype: Any,
) -> Tuple[Tensor, Optional[Tensor]]:
    """Per-element weights ``tot / count`` (or ``tot / acc_sum``) of each gradient-norm bin,
    divided by the number of non-empty bins; and the updated ``acc_sum``."""
    edge_t = Tensor(edges)
    if g.dtype == F16:  # PyTorch compares float16 with a 0-d float32 edge in float16
        edge_t = edge_t.astype(F16).astype(F32)
        g = g.astype(F32)
    else:
        edge_t = edge_t.astype(g.dtype)
    gx = g.expand_dims(-1)
    in_bin = ops.logical_and(
        ops.logical_and(gx >= edge_t[:-1], gx < edge_t[1:]), valid.expand_dims(-1)
    )
    counts = in_bin.reshape(-1, len(edges) - 1).astype(F64).sum(0)
    nonempty = counts > 0
    n = nonempty.astype(F64).sum()
    tot64 = tot.astype(F64)
    new_acc = acc_sum
    if momentum > 0 and acc_sum is not None:
        # acc = mmt * acc + (1 - mmt) * count: float32 buffer, the count term a Python double
        decayed = acc_sum * tm.f64(momentum).astype(F32)
        fresh = ((tm.f64(1.0) - tm.f64(momentum)) * counts).astype(F32)
        new_acc = ops.where(nonempty, decayed + fresh, acc_sum)
        # `tot / acc_sum[i]`, a Python float over a float32 tensor: PyTorch's __rtruediv__
        # is `acc_sum[i].reciprocal() * tot`
        per_bin = 1 / ops.where(nonempty, new_acc, ops.ones_like(new_acc)) * tot64.astype(F32)
        per_bin = per_bin.astype(weight_dtype)
    else:
        per_bin = (tot64 / ops.where(nonempty, counts, ops.ones_like(counts))).astype(weight_dtype)
    per_bin = ops.where(nonempty, per_bin, ops.zeros_like(per_bin))
    weights = (in_bin.astype(weight_dtype) * per_bin).sum(-1)
    if weight_dtype == F16:  # one non-zero term per element: exact; rounding as PyTorch
        weights = weights.astype(F16)
    divided = tm.ew(lambda w, k: w / k, weights, ops.maximum(n, tm.f64(1.0)))
    weights = ops.where(n > 0, divided, weights)
    return weights, new_acc


def _reduce(weighted: Tensor, reduction: str, tot: Optional[Tensor] = None) -> Tensor:
    """MMDetection's ``weight_reduce_loss(..., avg_factor=tot)`` with ``tot`` a Python float
    there: the sum divided by ``tot + eps`` in the loss's dtype (no promotion by ``tot``)."""
    if reduction == "none":
        return weighted
    total = _sum(weighted)
    if tot is None:  # no element: 0 / (1 + eps)
        tot = Tensor(1.0, F32)
    if total.dtype == F64:
        return total / (tot.astype(F64) + tm.f64(_AVG_EPS))
    denom = tot + _AVG_EPS
    if total.dtype == F16:
        return (total.astype(F32) / denom).astype(F16)
    return total / denom


def _expand_onehot(labels: Tensor, label_weight: Tensor, channels: int) -> Tuple[Tensor, Tensor]:
    """MMDetection's ``_expand_onehot_labels``: one-hot rows for labels in ``[0, channels)``
    (others all zero), the label weight repeated over the channels."""
    onehot = labels.expand_dims(1) == ops.arange(channels, dtype=labels.dtype).expand_dims(0)
    return onehot.astype(F32), label_weight.reshape(-1, 1).broadcast_to((-1, channels))


def _check_ghm(pred: Any, label_weight: Any, reduction: str, bins: Any, momentum: Any) -> Any:
    pred = check_float_tensor(pred, "pred")
    label_weight = check_tensor(label_weight, "label_weight")
    check_reduction(reduction)
    if reduction == "sum":
        raise ValueError(
            'avg_factor can not be used with reduction="sum" (GHM losses always average by '
            "the number of valid samples, so MMDetection refuses reduction='sum')"
        )
    if check_int(bins, "bins") < 1:
        raise ValueError(f"bins must be >= 1, but got {bins}")
    if not 0 <= check_number(momentum, "momentum") < 1:
        raise ValueError(f"momentum must be in [0, 1), but got {momentum}")
    return pred, label_weight


def _check_acc(acc_sum: Optional[Tensor], bins: int, momentum: float) -> Optional[Tensor]:
    """The moving averages: zeros (MMDetection's initial buffer) when ``momentum > 0`` and none
    are given."""
    if acc_sum is None:
        return ops.zeros(bins, F32) if momentum > 0 else None
    acc_sum = check_tensor(acc_sum, "acc_sum")
    if acc_sum.shape != (bins,) or acc_sum.dtype != F32:
        raise ValueError(
            f"acc_sum must be a float32 Tensor of shape ({bins},), but got {acc_sum.dtype} of "
            f"shape {acc_sum.shape}"
        )
    return acc_sum


def ghmc_loss(
    pred: Tensor,
    target: Tensor,
    label_weight: Tensor,
    bins: int = 10,
    momentum: float = 0.0,
    acc_sum: Optional[Tensor] = None,
    reduction: str = "mean",
    loss_weight: float = 1.0,
) -> Tuple[Tensor, Optional[Tensor]]:
    """GHM-C loss: binary cross-entropy weighted by the inverse density of its gradient norm.

    The function behind :class:`GHMC` (MMDetection's ``GHMC.forward``), with the moving
    average passed in and returned. With :math:`g = |\\sigma(x) - t|` binned by
    ``arange(bins + 1) / bins`` over the valid elements (``label_weight > 0``), :math:`N` the
    number of valid elements (at least 1) and :math:`m` the number of non-empty bins:

    .. math::
        w_i = \\frac{N}{m \\cdot \\text{count}(\\text{bin}(g_i))}, \\qquad
        \\ell = \\frac{\\sum_i w_i \\operatorname{BCE}(x_i, t_i)}{N + \\epsilon}

    (``count`` replaced by the moving average ``acc = momentum * acc + (1 - momentum) * count``
    of the non-empty bins when ``momentum > 0``).

    Args:
        pred (Tensor[N, C]): logits, float16/32/64.
        target (Tensor[N, C] or Tensor[N]): binary targets, or class indices (one-hot over
            ``C``; an index outside ``[0, C)`` is an all-zero row).
        label_weight (Tensor, like ``target``): > 0 for valid elements.
        bins (int): number of bins. Default: 10.
        momentum (float): moving-average momentum in [0, 1); 0: no average. Default: 0.
        acc_sum (Tensor[bins], optional): float32 moving averages (``momentum > 0``).
        reduction (str): ``'none'`` | ``'mean'``; ``'sum'`` raises, as in MMDetection (its
            ``avg_factor`` is always set). Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.

    Returns:
        (Tensor, Tensor | None): the loss (0-d, or ``pred``'s shape for ``'none'``; float32 for
        float16 ``pred``, as PyTorch's BCE with a float32 target) and the updated ``acc_sum``
        (``acc_sum`` as given when ``momentum == 0``).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import ghmc_loss
        >>> pred = ms.Tensor([[2.0, -1.0], [0.5, 3.0]])
        >>> target = ms.Tensor([[1.0, 0.0], [0.0, 1.0]])
        >>> loss, _ = ghmc_loss(pred, target, ms.ops.ones((2, 2)))
        >>> round(float(loss), 4)
        0.3657
    """
    pred, label_weight = _check_ghm(pred, label_weight, reduction, bins, momentum)
    acc_sum = _check_acc(acc_sum, bins, momentum)
    check_number(loss_weight, "loss_weight")
    target = check_tensor(target, "target")
    if pred.ndim != target.ndim:
        if pred.ndim != 2 or target.ndim != 1 or target.shape[0] != pred.shape[0]:
            raise ValueError(
                f"target must be (N, C) like pred or (N,) labels, but got {target.shape} for "
                f"pred of shape {pred.shape}"
            )
        target, label_weight = _expand_onehot(target, label_weight, pred.shape[-1])
    elif target.shape != pred.shape:
        raise ValueError(f"target must have pred's shape {pred.shape}, but got {target.shape}")
    target, label_weight = target.astype(F32), label_weight.astype(F32)
    if pred.size == 0:
        loss = ops.zeros(pred.shape, tm._promote(pred.dtype, F32))
        return tm.scale(_reduce(loss, reduction), loss_weight), acc_sum
    # the float32 sigmoid rounded once from float64, as PyTorch's (MindSpore's is tens of ulp
    # off): g picks the bins, and one g across an edge changes every weight (_ops.in_float64)
    prob = tm.ew(_sigmoid, ops.stop_gradient(pred))
    g = tm.ew(ops.abs, tm.sub(prob, target))
    valid = label_weight > 0
    tot = ops.maximum(valid.astype(F32).sum(), Tensor(1.0, F32))
    weights, new_acc = _harmonize(
        g, valid, tot, _edges(bins, None), float(momentum), acc_sum, pred.dtype
    )
    loss = tm.mul(bce_with_logits_f32_target(pred, target), weights)
    return tm.scale(_reduce(loss, reduction, tot), loss_weight), new_acc


def ghmr_loss(
    pred: Tensor,
    target: Tensor,
    label_weight: Tensor,
    mu: float = 0.02,
    bins: int = 10,
    momentum: float = 0.0,
    acc_sum: Optional[Tensor] = None,
    reduction: str = "mean",
    loss_weight: float = 1.0,
) -> Tuple[Tensor, Optional[Tensor]]:
    """GHM-R loss: the Authentic Smooth L1 loss weighted by the inverse density of its
    gradient norm.

    The function behind :class:`GHMR` (MMDetection's ``GHMR.forward``). With
    :math:`d = p - t`:

    .. math::
        \\ell_i = \\sqrt{d_i^2 + \\mu^2} - \\mu, \\qquad
        g_i = \\frac{|d_i|}{\\sqrt{\\mu^2 + d_i^2}}

    and the weights of :func:`ghmc_loss` from ``g`` (last bin edge 1e3), :math:`N` the sum of
    ``label_weight`` (at least 1).

    Args:
        pred (Tensor[N, 4k]): box deltas, float16/32/64.
        target (Tensor[N, 4k]): target deltas.
        label_weight (Tensor[N, 4k]): > 0 for valid elements; its sum is :math:`N`.
        mu (float): the ASL1 parameter. Default: 0.02.
        bins (int): number of bins. Default: 10.
        momentum (float): moving-average momentum in [0, 1). Default: 0.
        acc_sum (Tensor[bins], optional): float32 moving averages (``momentum > 0``).
        reduction (str): ``'none'`` | ``'mean'``; ``'sum'`` raises as in MMDetection.
            Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.

    Returns:
        (Tensor, Tensor | None): the loss in the promoted dtype of ``pred`` and ``target``,
        and the updated ``acc_sum`` (as given when ``momentum == 0``).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import ghmr_loss
        >>> pred, target = ms.Tensor([[0.5, 0.0], [0.1, 1.0]]), ms.ops.zeros((2, 2))
        >>> loss, _ = ghmr_loss(pred, target, ms.ops.ones((2, 2)))
        >>> round(float(loss), 4)
        0.2571
    """
    pred, label_weight = _check_ghm(pred, label_weight, reduction, bins, momentum)
    acc_sum = _check_acc(acc_sum, bins, momentum)
    check_number(loss_weight, "loss_weight")
    target = check_float_tensor(target, "target")
    check_number(mu, "mu")
    if target.shape != pred.shape or label_weight.shape != pred.shape:
        raise ValueError(
            f"target and label_weight must have pred's shape {pred.shape}, but got "
            f"{target.shape} and {label_weight.shape}"
        )
    # MMDetection's mu * mu, a Python double (graph mode computes Python floats in float32)
    mu2 = tm.constant(tm.f64(mu) * tm.f64(mu), tm._promote(pred.dtype, target.dtype))
    mu_c = tm.constant(tm.f64(mu), tm._promote(pred.dtype, target.dtype))
    dtype = tm._promote(pred.dtype, target.dtype)
    if pred.size == 0:
        return tm.scale(_reduce(ops.zeros(pred.shape, dtype), reduction), loss_weight), acc_sum
    diff = tm.sub(pred, target)
    sq = tm.mul(diff, diff)
    loss = tm.sub(tm.ew(ops.sqrt, tm.add(sq, mu2)), mu_c)
    g = ops.stop_gradient(tm.ew(ops.abs, tm.div(diff, tm.ew(ops.sqrt, tm.add(sq, mu2)))))
    valid = label_weight > 0
    tot = ops.maximum(label_weight.astype(F32).sum(), Tensor(1.0, F32))
    weights, new_acc = _harmonize(g, valid, tot, _edges(bins, 1e3), float(momentum), acc_sum, dtype)
    return tm.scale(_reduce(tm.mul(loss, weights), reduction, tot), loss_weight), new_acc


class _GHM(nn.Cell):
    def __init__(self, bins: int, momentum: float, loss_weight: float, reduction: str) -> None:
        super().__init__()
        if check_int(bins, "bins") < 1:
            raise ValueError(f"bins must be >= 1, but got {bins}")
        if not 0 <= check_number(momentum, "momentum") < 1:
            raise ValueError(f"momentum must be in [0, 1), but got {momentum}")
        check_reduction(reduction)
        self.bins = int(bins)
        self.momentum = float(momentum)
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self.reduction = reduction
        self.acc_sum: Optional[Parameter] = None
        if self.momentum > 0:
            self.acc_sum = Parameter(
                Tensor(np.zeros(self.bins, np.float32)), name="acc_sum", requires_grad=False
            )

    def _reduction(self, reduction_override: Optional[str]) -> str:
        if reduction_override is None:
            return self.reduction
        check_reduction(reduction_override, "reduction_override")
        return reduction_override


class GHMC(_GHM):
    """GHM-C loss Cell, MMDetection's ``GHMC``. See :func:`ghmc_loss`.

    ``forward(pred, target, label_weight, reduction_override=None)``. With ``momentum > 0``
    the moving averages are the Parameter ``acc_sum`` (float32, ``requires_grad=False``),
    updated by every call in PyNative and graph mode, as MMDetection's buffer.

    Args:
        bins (int): number of bins. Default: 10.
        momentum (float): moving-average momentum in [0, 1). Default: 0.
        use_sigmoid (bool): must be True (MMDetection raises ``NotImplementedError``).
        loss_weight (float): factor of the loss. Default: 1.0.
        reduction (str): ``'none'`` | ``'mean'``. Default: ``'mean'``.

    Shape:
        - pred: :math:`(N, C)`; target and label_weight: :math:`(N, C)` or :math:`(N,)`.
        - output: scalar, or :math:`(N, C)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import GHMC
        >>> loss_fn = GHMC(bins=10, momentum=0.75)
        >>> pred = ms.Tensor([[2.0, -1.0], [0.5, 3.0]])
        >>> target = ms.Tensor([[1.0, 0.0], [0.0, 1.0]])
        >>> _ = loss_fn(pred, target, ms.ops.ones((2, 2)))
        >>> loss_fn.acc_sum.asnumpy()[:3]
        array([0.25, 0.25, 0.25], dtype=float32)
    """

    def __init__(
        self,
        bins: int = 10,
        momentum: float = 0,
        use_sigmoid: bool = True,
        loss_weight: float = 1.0,
        reduction: str = "mean",
    ) -> None:
        super().__init__(bins, momentum, loss_weight, reduction)
        if not use_sigmoid:
            raise NotImplementedError("GHMC supports only use_sigmoid=True (as MMDetection)")
        self.use_sigmoid = True

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        label_weight: Tensor,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        reduction = self._reduction(reduction_override)
        loss, acc = ghmc_loss(
            pred,
            target,
            label_weight,
            self.bins,
            self.momentum,
            self.acc_sum,
            reduction,
            self.loss_weight,
        )
        if self.acc_sum is not None and acc is not None:
            loss = ops.depend(loss, ops.assign(self.acc_sum, acc))
        return loss


class GHMR(_GHM):
    """GHM-R loss Cell, MMDetection's ``GHMR``. See :func:`ghmr_loss`.

    ``forward(pred, target, label_weight, avg_factor=None, reduction_override=None)``;
    ``avg_factor`` is accepted and ignored, as in MMDetection. ``acc_sum`` as in :class:`GHMC`.

    Args:
        mu (float): the ASL1 parameter. Default: 0.02.
        bins (int): number of bins. Default: 10.
        momentum (float): moving-average momentum in [0, 1). Default: 0.
        loss_weight (float): factor of the loss. Default: 1.0.
        reduction (str): ``'none'`` | ``'mean'``. Default: ``'mean'``.

    Shape:
        - pred, target, label_weight: :math:`(N, 4k)`.
        - output: scalar, or :math:`(N, 4k)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import GHMR
        >>> pred, target = ms.Tensor([[0.5, 0.0], [0.1, 1.0]]), ms.ops.zeros((2, 2))
        >>> round(float(GHMR()(pred, target, ms.ops.ones((2, 2)))), 4)
        0.2571
    """

    def __init__(
        self,
        mu: float = 0.02,
        bins: int = 10,
        momentum: float = 0,
        loss_weight: float = 1.0,
        reduction: str = "mean",
    ) -> None:
        super().__init__(bins, momentum, loss_weight, reduction)
        self.mu = check_number(mu, "mu")

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        label_weight: Tensor,
        avg_factor: Any = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        reduction = self._reduction(reduction_override)
        loss, acc = ghmr_loss(
            pred,
            target,
            label_weight,
            self.mu,
            self.bins,
            self.momentum,
            self.acc_sum,
            reduction,
            self.loss_weight,
        )
        if self.acc_sum is not None and acc is not None:
            loss = ops.depend(loss, ops.assign(self.acc_sum, acc))
        return loss
