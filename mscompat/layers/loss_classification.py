"""Classification losses of ``torch.nn.functional``: ``cross_entropy`` and ``nll_loss`` with every
PyTorch option, and their ``torch.nn`` Cells ``CrossEntropyLoss`` and ``NLLLoss``.

MindSpore's own versions were measured on CPU (MindSpore 2.10) before choosing: the
``mint.nn.functional`` ones have no CPU kernel (``LogSoftmaxExt``), and ``ops.cross_entropy``
computes float64 in float32 (its ``log_softmax``: errors of 4e-8 with ``label_smoothing``) and
sums float16 in float16 (0.008 off on a sum of 6). So these are composed: a float64-exact
log-softmax, a gather of the target's column, PyTorch's weighted-mean denominator.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_float_tensor, check_int, check_number, is_float_dtype
from mscompat.custom_ops import cross_entropy as _kernels
from mscompat.custom_ops.aot import constant
from mscompat.custom_ops.registry import TensorSpec, call, device_target, register
from mscompat.layers._loss_common import (
    Loss,
    _range_message,
    as_tensor,
    check_dtype_match,
    check_index_range,
    check_index_tensor,
    legacy_reduction,
    scalar,
    upcast,
)

__all__ = ["CrossEntropyLoss", "NLLLoss", "cross_entropy", "nll_loss"]


def _logsumexp(x: Tensor, dim: int) -> Tuple[Tensor, Tensor]:
    """``(m, log(sum(exp(x - m))))`` over ``dim`` (kept), ``m`` the max (a constant of the
    gradient): ``log_softmax = (x - m) - second``, in this order, as PyTorch's (exact for
    logits of 1e4, where ``x - logsumexp`` would lose the low bits)."""
    top = ops.stop_gradient(x.max(dim, keepdims=True))
    return top, ops.log(ops.exp(x - top).sum(dim, keepdims=True))


def _log_softmax(x: Tensor, dim: int) -> Tensor:
    """``log_softmax`` in ``x``'s own precision (MindSpore's CPU kernel computes float64 in
    float32); the max is a constant of the gradient, as in every stable softmax."""
    shifted = x - ops.stop_gradient(x.max(dim, keepdims=True))
    return shifted - ops.log(ops.exp(shifted).sum(dim, keepdims=True))


def _class_shape(x: Tensor, weight: Optional[Tensor], target: Tensor) -> Tuple[int, int]:
    """(class dim, number of classes) of an input, PyTorch's layout: ``(C)`` or ``(N, C, ...)``."""
    return (0, x.shape[0]) if x.ndim == 1 else (1, x.shape[1])


def _weight_row(weight: Tensor, ndim: int, class_dim: int) -> Tensor:
    """``weight`` shaped to broadcast along the class dim of an ``ndim``-D input."""
    shape = [1] * ndim
    shape[class_dim] = weight.shape[0]
    return weight.reshape(tuple(shape))


def _picked(
    logp: Tensor,
    target: Tensor,
    weight: Optional[Tensor],
    ignore_index: int,
    shift: Optional[Tuple[Tensor, Tensor]] = None,
) -> Tuple[Tensor, Tensor]:
    """(``-w[t] * logp[t]`` per position, ``w[t]`` per position), 0 where ignored; with
    ``shift`` (:func:`_logsumexp`'s pair), ``logp`` holds the logits."""
    safe, w = _target_weight(target, weight, ignore_index, logp.dtype)
    value = ops.gather_elements(logp, 1, safe.expand_dims(1))
    if shift is not None:
        value = (value - shift[0]) - shift[1]
    value = value.squeeze(1)
    return -value * w, w


def _target_weight(
    target: Tensor, weight: Optional[Tensor], ignore_index: int, dtype: Any
) -> Tuple[Tensor, Tensor]:
    """(``target`` with ignored positions at 0, ``w[t]`` per position, 0 where ignored)."""
    keep = target != ignore_index
    safe = ops.where(keep, target, ops.zeros_like(target))
    w = keep.astype(dtype)
    if weight is not None:
        w = w * ops.gather(weight, safe, 0)
    return safe, w


def _nll(loss: Tensor, w: Tensor, red: str) -> Tensor:
    if red == "none":
        return loss
    if red == "sum":
        return loss.sum() if loss.size > 0 else ops.zeros((), loss.dtype)
    if loss.size == 0:
        return ops.fill(loss.dtype, (), float("nan"))
    return _safe_mean(loss.sum(), w.sum())


def _safe_mean(total: Tensor, denominator: Tensor) -> Tensor:
    """``total / denominator``; NaN for a zero denominator (every target ignored), as
    PyTorch's, with a zero gradient there (PyTorch skips the ignored positions)."""
    empty = denominator == 0
    safe = ops.where(empty, ops.ones_like(denominator), denominator)
    return ops.where(empty, ops.full_like(total, float("nan")), total / safe)


@register("layers.nll_loss", "composite", note="gather of the target column, weighted mean")
def _nll_composite(
    x: Tensor, target: Tensor, weight: Optional[Tensor], ignore_index: int, red: str
) -> Tensor:
    loss, w = _picked(x, target, weight, ignore_index)
    return _nll(loss, w, red)


@register("layers.cross_entropy", "composite", note="float64-exact log_softmax, then nll")
def _cross_entropy_composite(
    x: Tensor,
    target: Tensor,
    weight: Optional[Tensor],
    ignore_index: int,
    red: str,
    smoothing: float,
) -> Tensor:
    c = x.shape[1]
    if target.dtype == ms.int64:
        check_index_range(target, 0, c, ignore_index, "cross_entropy")
    w_row = None if weight is None else _weight_row(weight, x.ndim, 1)
    if target.dtype != ms.int64:  # class probabilities
        logp = _log_softmax(x, 1)
        if smoothing > 0:
            target = target * scalar(1 - smoothing, x) + scalar(smoothing / c, x)
        prod = logp * target if w_row is None else logp * target * w_row
        loss = -prod.sum(1)
        if red == "none":
            return loss
        if red == "sum":
            return loss.sum() if loss.size > 0 else ops.zeros((), loss.dtype)
        if loss.size == 0:
            return ops.fill(loss.dtype, (), float("nan"))
        return loss.sum() / scalar(float(loss.size), loss)
    # class indices: log p_t = x_t - logsumexp(x), without the full log_softmax tensor
    lse = _logsumexp(x, 1)
    loss, w = _picked(x, target, weight, ignore_index, lse)
    nll = _nll(loss, w, red)
    if smoothing == 0:
        return nll
    keep = (target != ignore_index).astype(x.dtype)
    shifted = x - lse[0]
    logs = lse[1].squeeze(1)
    if w_row is None:  # sum_c log p_c = sum_c (x_c - m) - C log s
        smooth = -(shifted.sum(1) - logs * scalar(float(c), x)) * keep
    else:  # sum_c w_c log p_c = sum_c w_c (x_c - m) - log s sum_c w_c
        smooth = -((shifted * w_row).sum(1) - logs * w_row.sum()) * keep
    if red == "none":
        ret = smooth
    elif red == "sum":
        ret = smooth.sum() if smooth.size > 0 else ops.zeros((), smooth.dtype)
    elif smooth.size == 0:
        ret = ops.fill(smooth.dtype, (), float("nan"))
    else:
        ret = _safe_mean(smooth.sum(), w.sum() if weight is not None else keep.sum())
    return scalar(1 - smoothing, x) * nll + ret * scalar(smoothing / c, x)


def _ce_kernel_supports(
    x: TensorSpec,
    target: TensorSpec,
    weight: Optional[TensorSpec],
    ignore_index: int,
    red: str,
    smoothing: float,
) -> Optional[str]:
    if x.ndim != 2:
        return f"{x.ndim}-D input is not supported by the kernel ((N, C) only)"
    if target.dtype != ms.int64:
        return "class-probability targets are not supported by the kernel (class indices)"
    if smoothing != 0:
        return "label_smoothing is not supported by the kernel"
    if x.dtype not in (ms.float32, ms.float64) or 0 in x.shape:
        return f"{x.dtype_name} input of shape {x.shape} is not supported by the kernel"
    return None


@_kernels.LIBRARY.backend(
    "layers.cross_entropy",
    "fused C++ log-softmax + pick, forward and backward",
    _ce_kernel_supports,
)
def _cross_entropy_aot(
    x: Tensor,
    target: Tensor,
    weight: Optional[Tensor],
    ignore_index: int,
    red: str,
    smoothing: float,
) -> Tensor:
    w = constant((x.shape[1],), 1.0, x.dtype) if weight is None else weight
    ignore = Tensor([ignore_index], ms.int64)
    if red != "none":  # the reduction and the range count in the kernel
        mode = Tensor([1 if red == "mean" else 0], ms.int64)
        kernel = _kernels.CROSS_ENTROPY_REDUCE[device_target()]
        loss, bad = kernel(x, target, w, ignore, mode)
        if bad[0] > 0:  # read, in graph mode too, as check_index_range
            raise ValueError(_range_message("cross_entropy", "target", 0, x.shape[1], ignore_index))
        return loss
    check_index_range(target, 0, x.shape[1], ignore_index, "cross_entropy")
    return _kernels.CROSS_ENTROPY[device_target()](x, target, w, ignore)


def _check_class_target(x: Tensor, target: Any, fn: str) -> Tensor:
    t = check_index_tensor(target, "target")
    if x.ndim == 0:
        raise ValueError(f"{fn}(): input must have at least 1 dim (C) or (N, C, ...), but is 0-D")
    expected = () if x.ndim == 1 else (x.shape[0],) + tuple(x.shape[2:])
    if tuple(t.shape) != expected:
        raise ValueError(
            f"{fn}(): target must have shape {expected} for input.shape={x.shape} (input's "
            f"batch and spatial dims, without the class dim), but got target.shape={t.shape}"
        )
    return t


def _check_weight(x: Tensor, weight: Any, c: int) -> Optional[Tensor]:
    if weight is None:
        return None
    w = check_dtype_match(x, weight, "input", "weight")
    if w.ndim != 1 or w.shape[0] != c:
        raise ValueError(
            f"weight must be 1-D with one value per class ({c}), but got weight.shape={w.shape}"
        )
    return upcast(w)


def _empty(x: Tensor, per_position: Tensor, red: str) -> Tensor:
    """The loss of an empty input, answered before any kernel (MindSpore's max refuses empty
    input): zeros of the per-position shape, or a sum of 0, or a mean of NaN (PyTorch's)."""
    if red == "none":
        return ops.zeros(per_position.shape, x.dtype)
    return ops.fill(x.dtype, (), 0.0 if red == "sum" else float("nan"))


def _frames(x: Tensor, t: Tensor) -> Tuple[Tensor, Tensor]:
    """A 1-D input ``(C)`` with a 0-d target as one sample: ``(1, C)`` and ``(1,)``."""
    if x.ndim == 1:
        return x.reshape(1, -1), t.reshape(1)
    return x, t


def nll_loss(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    ignore_index: int = -100,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """Negative log likelihood loss, as ``torch.nn.functional.nll_loss``.

    .. math::
        \\ell_n = -w_{y_n} x_{n, y_n}, \\qquad
        \\text{mean} = \\frac{\\sum_n \\ell_n}{\\sum_n w_{y_n}}

    over the positions whose target is not ``ignore_index`` (ignored ones give 0 and count 0
    in the denominator; all ignored: NaN, as PyTorch).

    Args:
        input (Tensor[N, C, d1, ...] or Tensor[C]): log-probabilities, float16/32/64.
        target (Tensor[N, d1, ...] or 0-d, int64): class indices in ``[0, C)`` or
            ``ignore_index`` (int32 is accepted too).
        weight (Tensor[C], optional): per-class weight.
        size_average (bool, optional): deprecated (PyTorch's legacy mapping).
        ignore_index (int): target value that is skipped. Default: -100.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Returns:
        Tensor: 0-d, or ``target``'s shape with ``'none'``; ``input``'s dtype.

    Raises:
        TypeError: a non-float ``input``/``weight``, a non-integer ``target``/``ignore_index``.
        ValueError: ``target`` of the wrong shape, ``weight`` not of ``C`` elements, a target
            outside ``[0, C)`` other than ``ignore_index`` (read, in graph mode too; PyTorch:
            "Target ... is out of bounds"), an invalid ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import nll_loss
        >>> logp = ms.Tensor([[-0.5, -1.0, -2.0], [-1.5, -0.2, -3.0]])
        >>> round(float(nll_loss(logp, ms.Tensor([0, 1], ms.int64))), 6)
        0.35
    """
    x = check_float_tensor(input, "input")
    t = _check_class_target(x, target, "nll_loss")
    ignore_index = check_int(ignore_index, "ignore_index")
    red = legacy_reduction(size_average, reduce, reduction)
    class_dim, c = _class_shape(x, weight, t)
    w = _check_weight(x, weight, c)
    t = check_index_range(t, 0, c, ignore_index, "nll_loss")
    if x.size == 0:
        return _empty(x, t, red)
    xf, tf = _frames(upcast(x), t)
    out = call("layers.nll_loss", xf, tf, w, ignore_index, red)
    if red == "none" and x.ndim == 1:
        out = out.reshape(())
    return out.astype(x.dtype)


def cross_entropy(
    input: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    ignore_index: int = -100,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross entropy of logits, as ``torch.nn.functional.cross_entropy``.

    With class indices :math:`y` and :math:`\\log p = \\operatorname{log\\_softmax}(x)` over
    the class dim, smoothing :math:`\\varepsilon`, :math:`C` classes:

    .. math::
        \\ell = (1 - \\varepsilon)\\,\\operatorname{nll}(\\log p, y) +
        \\frac{\\varepsilon}{C} \\sum_c -w_c \\log p_c

    both reduced as :func:`nll_loss` (the weighted mean divides by :math:`\\sum w_{y_n}` of
    the positions not ignored). With class probabilities :math:`t` (``target`` of ``input``'s
    shape, floating): :math:`\\ell = -\\sum_c w_c\\,t'_c \\log p_c`,
    :math:`t' = (1 - \\varepsilon)t + \\varepsilon / C`; ``'mean'`` divides by the number of
    positions :math:`N d_1 \\cdots`.

    Args:
        input (Tensor[N, C, d1, ...] or Tensor[C]): logits, float16, float32 or float64.
        target (Tensor): class indices, int64, shape ``(N, d1, ...)`` (0-d for ``(C)``
            input), or class probabilities of ``input``'s shape and a float dtype.
        weight (Tensor[C], optional): per-class weight.
        size_average (bool, optional): deprecated (PyTorch's legacy mapping).
        ignore_index (int): target index that is skipped (class indices only). Default: -100.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        label_smoothing (float): :math:`\\varepsilon` in ``[0, 1]``. Default: 0.0.

    Returns:
        Tensor: 0-d, or ``(N, d1, ...)`` with ``'none'``; ``input``'s dtype. An empty batch's
        mean, or a mean where every target is ignored, is NaN, as PyTorch's.

    Raises:
        TypeError: a non-float ``input``/``weight``, an integer ``target`` other than
            int32/int64, a non-number ``label_smoothing``.
        ValueError: ``target`` of the wrong shape, ``weight`` not of ``C`` elements,
            ``label_smoothing`` outside ``[0, 1]``, a class index outside ``[0, C)`` other than
            ``ignore_index`` (read, in graph mode too), an invalid ``reduction``.

    .. note::
        ``size_average``/``reduce`` are accepted with PyTorch's deprecated mapping
        (``reduce=False`` gives ``'none'``, else ``size_average=False`` gives ``'sum'``), without
        its warning. float16 is computed in float32 and rounded once (PyTorch's CPU kernels
        round each step: results agree to a float16 ulp or two).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import cross_entropy
        >>> logits = ms.Tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]])
        >>> target = ms.Tensor([0, 2], ms.int64)
        >>> round(float(cross_entropy(logits, target)), 6)
        0.175456
        >>> round(float(cross_entropy(logits, target, label_smoothing=0.1)), 6)
        0.345456
    """
    x = check_float_tensor(input, "input")
    ignore_index = check_int(ignore_index, "ignore_index")
    red = legacy_reduction(size_average, reduce, reduction)
    smoothing = check_number(label_smoothing, "label_smoothing")
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0, but got {smoothing}")
    if x.ndim == 0:
        raise ValueError("cross_entropy(): input must have at least 1 dim (C) or (N, C, ...)")
    if isinstance(target, Tensor) and is_float_dtype(target.dtype) and target.shape == x.shape:
        t = upcast(check_dtype_match(x, target, "input", "target"))
    else:
        if isinstance(target, Tensor) and is_float_dtype(target.dtype):
            raise TypeError(
                f"target must be int64 class indices, or class probabilities of input's shape "
                f"{x.shape}, but got a {target.dtype} target of shape {target.shape}"
            )
        t = _check_class_target(x, target, "cross_entropy")
    _, c = _class_shape(x, weight, t)
    w = _check_weight(x, weight, c)
    # the class indices' range is checked by the backend (the fused kernel counts them)
    if x.size == 0:
        return _empty(x, t if t.dtype == ms.int64 else t.sum(1), red)
    xf, tf = _frames(upcast(x), t)
    out = call("layers.cross_entropy", xf, tf, w, ignore_index, red, smoothing)
    if red == "none" and x.ndim == 1:
        out = out.reshape(())
    return out.astype(x.dtype)


class NLLLoss(Loss):
    """Negative log likelihood loss Cell, as ``torch.nn.NLLLoss``. See :func:`nll_loss`.

    Args:
        weight (Tensor[C], optional): per-class weight.
        size_average (bool, optional): deprecated.
        ignore_index (int): target value that is skipped. Default: -100.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - input: :math:`(N, C)`, :math:`(C)` or :math:`(N, C, d_1, ...)` log-probabilities.
        - target: :math:`(N)`, :math:`()` or :math:`(N, d_1, ...)`, int64.
        - output: scalar, or ``target``'s shape with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import NLLLoss
        >>> logp = ms.Tensor([[-0.5, -1.0], [-1.5, -0.2]])
        >>> float(NLLLoss(reduction="sum")(logp, ms.Tensor([1, 0], ms.int64)))
        2.5
    """

    def __init__(
        self,
        weight: Optional[Tensor] = None,
        size_average: Optional[bool] = None,
        ignore_index: int = -100,
        reduce: Optional[bool] = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight = as_tensor(weight, "weight")
        self.ignore_index = check_int(ignore_index, "ignore_index")

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return nll_loss(
            input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction
        )


class CrossEntropyLoss(Loss):
    """Cross entropy loss Cell, as ``torch.nn.CrossEntropyLoss``. See :func:`cross_entropy`.

    Args:
        weight (Tensor[C], optional): per-class weight.
        size_average (bool, optional): deprecated.
        ignore_index (int): target index that is skipped. Default: -100.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        label_smoothing (float): in ``[0, 1]``. Default: 0.0.

    Shape:
        - input: :math:`(N, C)`, :math:`(C)` or :math:`(N, C, d_1, ...)` logits.
        - target: class indices :math:`(N)`, :math:`()` or :math:`(N, d_1, ...)`, int64; or
          probabilities of ``input``'s shape.
        - output: scalar, or :math:`(N, d_1, ...)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import CrossEntropyLoss
        >>> loss = CrossEntropyLoss(ignore_index=1)
        >>> logits = ms.Tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]])
        >>> round(float(loss(logits, ms.Tensor([0, 1], ms.int64))), 6)
        0.241311
    """

    def __init__(
        self,
        weight: Optional[Tensor] = None,
        size_average: Optional[bool] = None,
        ignore_index: int = -100,
        reduce: Optional[bool] = None,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.weight = as_tensor(weight, "weight")
        self.ignore_index = check_int(ignore_index, "ignore_index")
        self.label_smoothing = check_number(label_smoothing, "label_smoothing")
        if not 0.0 <= self.label_smoothing <= 1.0:
            raise ValueError(
                f"label_smoothing must be between 0.0 and 1.0, but got {label_smoothing}"
            )

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return cross_entropy(
            input,
            target,
            self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )
