"""Elementwise pieces shared by the MMDetection loss family, op for op as PyTorch on CPU.

float16 follows PyTorch's CPU arithmetic: each elementwise op computed in float32 and rounded
once to float16 (``_round``); reductions accumulate in float32. Private: the public losses
validate their inputs before calling these.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._precision import in_float64 as in_float64  # the losses' callers: _ops.in_float64
from mscompat.losses.utils import _AVG_EPS, _promote, scalar_like

__all__: list = []

HALF = ms.float16


def rnd(x: Tensor, half: bool) -> Tensor:
    """Round a float32 intermediate to float16 and back (one PyTorch float16 op)."""
    if half:
        return x.astype(HALF).astype(ms.float32)
    return x


def widen(x: Tensor) -> Any:
    """``(x in float32 if float16), whether it was float16``."""
    if x.dtype == HALF:
        return x.astype(ms.float32), True
    return x, False


def narrow(x: Tensor, half: bool) -> Tensor:
    return x.astype(HALF) if half else x


def power(x: Tensor, gamma: float) -> Tensor:
    """``x ** gamma`` as PyTorch evaluates and differentiates it (special-cased exponents)."""
    if gamma == 0.0:
        return ops.ones_like(x)  # PyTorch's pow backward is 0 for exponent 0 (never 0 * inf)
    if gamma == 1.0:
        return x
    if gamma == 2.0:
        return x * x
    if gamma == 3.0:
        return x * x * x
    if gamma == 0.5:
        return ops.sqrt(x)
    return ops.pow(x, scalar_like(gamma, x))


def log_sigmoid(x: Tensor) -> Tensor:
    """Stable ``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))`` (PyTorch's CPU formula)."""
    return ops.minimum(x, ops.zeros_like(x)) - ops.log1p(ops.exp(-ops.abs(x)))


def with_gradients(value: Tensor, *slopes: Tuple[Tensor, Tensor]) -> Tensor:
    """``value``, differentiated as ``d value / d v = slope`` for each ``(v, slope)``: a
    first-order straight-through form, for losses whose gradient is ATen's own backward formula
    rather than the derivative of the ops that compute the value."""
    out = ops.stop_gradient(value)
    for v, slope in slopes:
        out = out + (v - ops.stop_gradient(v)) * ops.stop_gradient(slope)
    return out


def bce_logits(x: Tensor, t: Tensor, half: bool) -> Tensor:
    """``F.binary_cross_entropy_with_logits(x, t, reduction='none')`` on widened ``x``/``t``:
    ``(1 - t) x - log sigmoid(x)``, finite at +-1e4. The gradients are ATen's backward formulas
    (see :func:`bce_logits_mixed`), each float16 step rounded as ATen's in-place ops round."""
    one_minus_t = rnd(1 - t, half)
    ls = rnd(log_sigmoid(x), half)
    d_x = rnd(rnd(ops.sigmoid(x), half) - t, half)
    value = rnd(rnd(one_minus_t * x, half) - ls, half)
    # rnd: each gradient rounded to float16 before autograd adds it to the input's others, as
    # PyTorch adds float16 gradients (an overflow to inf, then inf - inf = NaN, included)
    return with_gradients(value, (rnd(x, half), d_x), (rnd(t, half), -x))


def bce_prob(p: Tensor, t: Tensor, half: bool) -> Tensor:
    """``F.binary_cross_entropy(p, t, reduction='none')`` on widened inputs: PyTorch clamps
    each log at -100, so p = 0 or 1 gives a finite loss, and ATen's backward is
    ``(p - t) / max((1 - p) p, 1e-12)`` (finite there too): the value is the forward, the
    gradient ATen's, through :func:`with_gradients`."""
    floor = scalar_like(-100.0, p)
    log_p = rnd(ops.maximum(ops.log(p), ops.full_like(p, floor)), half)
    log_q = rnd(ops.maximum(ops.log1p(-p), ops.full_like(p, floor)), half)
    value = rnd(rnd(rnd(t - 1, half) * log_q, half) - rnd(t * log_p, half), half)
    eps = ops.full_like(p, scalar_like(1e-12, p))
    d_p = (p - t) / ops.maximum((1 - p) * p, eps)
    return with_gradients(value, (p, d_p), (t, log_q - log_p))


def kernel_dtype(pred: Any) -> Optional[str]:
    """The ``supports`` reason of the fused float32/float64 loss kernels for ``pred`` (a
    :class:`~mscompat.custom_ops.TensorSpec`): None when they run it. PyTorch rounds every
    float16 op of these losses: only the op-by-op composites reproduce that."""
    if pred.dtype not in (ms.float32, ms.float64):
        return f"{pred.dtype_name} is not supported by the kernel (float32/float64)"
    if pred.ndim == 0 or 0 in pred.shape:
        return "0-d and empty inputs are not supported by the kernel"
    return None


def onehot(label: Tensor, num: int) -> Tensor:
    """``label[..., None] == arange(num)`` (bool): a one-hot mask, all False out of range."""
    return label.astype(ms.int64).expand_dims(-1) == ops.arange(num, dtype=ms.int64)


def scale(loss: Tensor, factor: float) -> Tensor:
    """``factor * loss`` with a Python float, as PyTorch (float16 rounded once)."""
    if factor == 1.0:
        return loss
    if loss.dtype == HALF:
        return (loss.astype(ms.float32) * factor).astype(HALF)
    return loss * scalar_like(factor, loss)


def div_count(total: Tensor, count: Tensor) -> Tensor:
    """``total / (count + eps)`` where MMDetection passes a Python number (``.item()``) as
    ``avg_factor``: the result keeps ``total``'s dtype."""
    if total.dtype == ms.float64:
        return total / (count.astype(ms.float64) + Tensor(_AVG_EPS, ms.float64))
    denom = count.astype(ms.float32) + _AVG_EPS
    return (total.astype(ms.float32) / denom).astype(total.dtype)


def mul(a: Tensor, b: Tensor) -> Tensor:
    """``a * b`` with PyTorch's promotion, float16 rounded once."""
    out = _promote(a.dtype, b.dtype)
    if out == HALF:
        return (a.astype(ms.float32) * b.astype(ms.float32)).astype(HALF)
    return a.astype(out) * b.astype(out)


def check_label_range(
    label: Tensor, low: int, high: int, name: str, message: str, ignore: Optional[int] = None
) -> Tensor:
    """Return ``label``; raise ``ValueError(message)`` if a value lies outside ``[low, high)``
    (``ignore`` excepted). Reads the values, in graph mode too (a constant message). Use the
    returned label: under ``ms.jit`` a Custom op whose input does not pass through the check
    failed to compile after it (MindSpore 2.10: "The prim is not a PrimitivePy")."""
    if label.size == 0:
        return label
    bad = ops.logical_or(label < low, label >= high)
    if ignore is not None:
        bad = ops.logical_and(bad, label != ignore)
    if bad.any():
        raise ValueError(message)
    return label


def compute_dtype(*dtypes: Any) -> Any:
    """The dtype to compute a mix of dtypes in: float64 if any, else float32."""
    return ms.float64 if ms.float64 in dtypes else ms.float32


def rd(x: Tensor, dtype: Any) -> Tensor:
    """Round ``x`` (in its compute dtype) to ``dtype`` and back: the result of one PyTorch op
    whose output dtype is ``dtype``."""
    if dtype == x.dtype:
        return x
    return x.astype(dtype).astype(x.dtype)


def bce_logits_mixed(x: Tensor, t: Tensor, pos_weight: Optional[Tensor] = None) -> Tensor:
    """``F.binary_cross_entropy_with_logits(x, t, pos_weight=pos_weight, reduction='none')``
    for any float dtypes of ``x``/``t``/``pos_weight``, as ATen computes it: ``(1 - t)
    .mul_(x).sub_(log_sigmoid(x).mul_(log_weight))``, so the result has ``t``'s dtype (in-place
    ops keep their left operand's dtype: a float32 target makes a float32 loss, whatever the
    logits' dtype) and the weighted log-sigmoid is rounded to the logits' dtype.

    The gradients are ATen's own backward formulas, not the derivative of those ops (the value
    goes through :func:`with_gradients`):
    ``d/dx = sigmoid(x) - t``, with ``pos_weight`` ``((p_w t + 1) - t) sigmoid(x) - p_w t``,
    and ``d/dt = -x``, with ``pos_weight`` ``log_sigmoid(-x) - p_w log_sigmoid(x)``, each
    rounded where ATen's in-place ops round. Differentiating the ops above instead overflows
    float16 where ATen's does not (a float32 cotangent of 1/eps cast to float16 on its way
    through the float16 log-sigmoid)."""
    dtypes = [x.dtype, t.dtype] + ([] if pos_weight is None else [pos_weight.dtype])
    cd = compute_dtype(*dtypes)
    td, xd = t.dtype, x.dtype
    xc, tc = x.astype(cd), t.astype(cd)
    a = rd(rd(1 - tc, td) * xc, td)
    ls = rd(log_sigmoid(xc), xd)
    sig = rd(ops.sigmoid(xc), xd)
    if pos_weight is None:
        d_x = rd(sig - tc, xd)  # input.sigmoid().sub_(target)
        d_t = -xc
    else:
        pd = pos_weight.dtype
        lw_dtype = _promote(pd, td)
        pw = pos_weight.astype(cd)
        lw = rd(rd(rd(pw - 1, pd) * tc, lw_dtype) + 1, lw_dtype)
        ls = rd(lw * ls, xd)
        tw = rd(pw * tc, lw_dtype)  # t = pos_weight.mul(target)
        d_x = rd(rd(rd(rd(tw + 1, lw_dtype) - tc, lw_dtype) * sig, lw_dtype) - tw, lw_dtype)
        d_t = rd(rd(log_sigmoid(-xc), xd) - rd(rd(log_sigmoid(xc), xd) * pw, xd), xd)
    return with_gradients(rd(a - ls, td), (xc, d_x), (tc, d_t)).astype(td)


def log_softmax(x: Tensor, axis: int = 1) -> Tensor:
    """``log_softmax`` in ``x``'s own precision (MindSpore 2.10's CPU kernel computes float64 in
    float32): ``x - max - log(sum(exp(x - max)))``."""
    if x.size == 0:
        return x
    if x.dtype != ms.float64:
        return ops.log_softmax(x, axis)
    shifted = x - ops.stop_gradient(x.max(axis=axis, keepdims=True))
    return shifted - ops.log(ops.exp(shifted).sum(axis=axis, keepdims=True))


def softmax(x: Tensor, axis: int = 1) -> Tensor:
    """``softmax`` in ``x``'s own precision (see :func:`log_softmax`)."""
    if x.size == 0:
        return x
    if x.dtype != ms.float64:
        return ops.softmax(x, axis)
    e = ops.exp(x - ops.stop_gradient(x.max(axis=axis, keepdims=True)))
    return e / e.sum(axis=axis, keepdims=True)


def check_prob(p: Tensor, name: str = "pred") -> None:
    """PyTorch's ``binary_cross_entropy`` refuses values outside [0, 1] (NaN included): raise
    ``ValueError`` as it raises (reads the values, in graph mode too)."""
    if p.size == 0:
        return
    ok = ops.logical_and(p >= 0, p <= 1)
    if not ok.all():
        raise ValueError(f"{name}: all elements of input should be between 0 and 1")
