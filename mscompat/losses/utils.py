"""MMDetection's loss utilities: ``reduce_loss``, ``weight_reduce_loss``, ``weighted_loss``.

Mirrors ``mmdet/models/losses/utils.py`` (MMDetection 3.x). float16 is computed the way PyTorch
does it on CPU: each elementwise op in float32 rounded once to float16, and reductions
accumulated in float32, so float16 results match PyTorch's bit for bit where the ops agree.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional, Tuple, Union

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_reduction, check_tensor, is_float_dtype
from mscompat.custom_ops.sum import reduce_sum

__all__ = ["reduce_loss", "weight_reduce_loss", "weighted_loss"]

AvgFactor = Union[float, int, Tensor, None]

# torch.finfo(torch.float32).eps, added by MMDetection 3.x to avg_factor to avoid a division by 0.
_AVG_EPS = 1.1920928955078125e-07


_FLOATS = (ms.float16, ms.float32, ms.float64)
_SIGNED = (ms.int8, ms.int16, ms.int32, ms.int64)


def _kind(dtype: Any) -> int:
    """0 bool, 1 integer, 2 floating: PyTorch's promotion categories."""
    if dtype == ms.bool_:
        return 0
    return 2 if dtype in _FLOATS else 1


def _promote(a: Any, b: Any) -> Any:
    """PyTorch's result dtype for ``a_tensor * b_tensor`` (``torch.result_type``): the higher
    category (bool < integer < floating) wins; within one, the wider dtype (uint8 with a signed
    8-bit integer: int16)."""
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        return a if ka > kb else b
    if ka == 2:
        if b == ms.float64 or (b == ms.float32 and a == ms.float16):
            return b
        return a
    if ka == 1:
        if ms.uint8 in (a, b) and a != b:
            other = b if a == ms.uint8 else a
            return ms.int16 if other == ms.int8 else other
        return a if _SIGNED.index(a) >= _SIGNED.index(b) else b
    return a


def scalar_like(value: float, x: Tensor) -> Any:
    """``value`` as an operand for ``x``.

    MindSpore rounds Python floats to float32, in graph mode also when it does arithmetic on them,
    so for float64 ``x`` the value becomes a float64 tensor (do any arithmetic on that tensor).
    """
    if x.dtype == ms.float64:
        return Tensor(value, ms.float64)
    return value


def _sum(x: Tensor) -> Tensor:
    """Sum of all elements; 0 for an empty tensor; float16 accumulated in float32; integers and
    bools summed in int64 (as PyTorch)."""
    if not is_float_dtype(x.dtype):
        x = x.astype(ms.int64)
    if x.size == 0:
        return ops.zeros((), x.dtype)
    if x.dtype == ms.float16:
        return reduce_sum(x.astype(ms.float32)).astype(ms.float16)
    if is_float_dtype(x.dtype):
        return reduce_sum(x)
    return x.sum()


def _mean(x: Tensor) -> Tensor:
    """Mean of all elements; NaN for an empty tensor (as PyTorch); float16 in float32."""
    if x.size == 0:
        return ops.fill(x.dtype, (), float("nan"))
    if x.dtype == ms.float16:
        return reduce_sum(x.astype(ms.float32), x.size).astype(ms.float16)
    return reduce_sum(x, x.size)


def _mul(loss: Tensor, weight: Tensor) -> Tensor:
    """``loss * weight`` with PyTorch's dtype promotion, rounded once in float16."""
    out_dtype = _promote(loss.dtype, weight.dtype)
    if out_dtype == ms.bool_:
        return ops.logical_and(loss, weight)
    if out_dtype == ms.float16:
        return (loss.astype(ms.float32) * weight.astype(ms.float32)).astype(ms.float16)
    return loss.astype(out_dtype) * weight.astype(out_dtype)


def reduce_loss(loss: Tensor, reduction: str) -> Tensor:
    """Reduce an elementwise loss.

    Mirrors ``mmdet.models.losses.utils.reduce_loss``.

    Args:
        loss (Tensor[*]): elementwise loss.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``.

    Returns:
        Tensor: ``loss`` for ``'none'``, else a 0-d tensor. The mean of an empty tensor is NaN
        and its sum is 0, as in PyTorch.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import reduce_loss
        >>> reduce_loss(ms.Tensor([1.0, 2.0, 6.0]), "mean")
        Tensor(shape=[], dtype=Float32, value= 3)
    """
    loss = check_tensor(loss, "loss")
    check_reduction(reduction)
    _check_mean_dtype(loss, reduction)
    if reduction == "mean":
        return _mean(loss)
    if reduction == "sum":
        return _sum(loss)
    return loss


def _check_mean_dtype(loss: Tensor, reduction: str) -> None:
    """PyTorch's ``mean()`` refuses integer and bool tensors ("could not infer output dtype")."""
    if reduction == "mean" and not is_float_dtype(loss.dtype):
        raise TypeError(
            "loss must be a floating-point Tensor for reduction='mean' (PyTorch's mean() cannot "
            f"infer an output dtype for it), but got loss of dtype {loss.dtype}"
        )


def _check_avg_factor(avg_factor: Any, reduction: str) -> None:
    if avg_factor is None:
        return
    if isinstance(avg_factor, bool) or not isinstance(avg_factor, (int, float, Tensor)):
        raise TypeError(
            f"avg_factor must be a number, a Tensor or None, but got {type(avg_factor).__name__}"
        )
    error = static_refusal(reduction, avg_factor)
    if error:
        raise ValueError(error)


def static_refusal(reduction: str, avg_factor: AvgFactor) -> str:
    """The refusal of ``avg_factor`` with ``'sum'``, known before the values (``''``: none)."""
    if avg_factor is not None and reduction == "sum":
        return 'avg_factor can not be used with reduction="sum"'
    return ""


def weight_shape_error(loss_shape: Tuple[int, ...], weight_shape: Tuple[int, ...]) -> str:
    """Why a weight of ``weight_shape`` cannot weight a loss of ``loss_shape`` (``''``: it can)."""
    if len(weight_shape) != len(loss_shape):
        return (
            f"weight must have as many dims as the loss, but got weight.shape={weight_shape} "
            f"for a loss of shape {loss_shape}"
        )
    for w, n in zip(weight_shape, loss_shape):
        if w not in (1, n):
            return (
                f"weight of shape {weight_shape} does not broadcast to the loss shape {loss_shape}"
            )
    return ""


def _check_weight_broadcast(loss: Tensor, weight: Tensor) -> Tensor:
    error = weight_shape_error(loss.shape, weight.shape)
    if error:
        raise ValueError(error)
    return weight


def _avg_factor_div(total: Tensor, avg_factor: Union[float, int, Tensor]) -> Tensor:
    """``total / (avg_factor + eps)`` with PyTorch's dtype rules (an integer ``total`` is
    divided in float32, PyTorch's default dtype, or in a float Tensor ``avg_factor``'s)."""
    if not is_float_dtype(total.dtype):
        total = total.astype(ms.float32)
    if isinstance(avg_factor, Tensor):
        denom = avg_factor if is_float_dtype(avg_factor.dtype) else avg_factor.astype(ms.float32)
        denom = denom + _AVG_EPS
        out_dtype = _promote(total.dtype, denom.dtype)
        if out_dtype == ms.float16:
            return (total.astype(ms.float32) / denom.astype(ms.float32)).astype(ms.float16)
        return total.astype(out_dtype) / denom.astype(out_dtype)
    if total.dtype == ms.float16:
        return (total.astype(ms.float32) / (float(avg_factor) + _AVG_EPS)).astype(ms.float16)
    if total.dtype == ms.float64:
        return total / (scalar_like(float(avg_factor), total) + scalar_like(_AVG_EPS, total))
    return total / (float(avg_factor) + _AVG_EPS)


def weight_reduce_loss(
    loss: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
) -> Tensor:
    """Apply an elementwise weight, then reduce.

    Mirrors ``mmdet.models.losses.utils.weight_reduce_loss`` (MMDetection 3.x):

    .. math::
        \\ell = \\begin{cases}
        \\sum_i w_i \\ell_i / (\\text{avg\\_factor} + \\epsilon) & \\text{mean, avg\\_factor}\\\\
        \\operatorname{reduce}(w \\odot \\ell) & \\text{otherwise}
        \\end{cases}

    with :math:`\\epsilon` = float32 machine epsilon.

    Args:
        loss (Tensor[*]): elementwise loss.
        weight (Tensor, optional): elementwise weight, broadcastable to ``loss`` without
            changing its shape (same number of dims, each size 1 or equal).
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): with ``'mean'``, the weighted sum is divided by
            ``avg_factor + eps`` instead of the element count; ignored with ``'none'``.

    Returns:
        Tensor: the loss, of ``loss``'s shape for ``'none'``, else 0-d.

    Raises:
        ValueError: invalid ``reduction``, ``avg_factor`` with ``'sum'``, or a ``weight`` that does
            not broadcast to ``loss``.
        TypeError: ``loss``/``weight`` not Tensors, or ``avg_factor`` of another type.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import weight_reduce_loss
        >>> loss = ms.Tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> weight = ms.Tensor([[1.0], [0.0]])
        >>> weight_reduce_loss(loss, weight, reduction="sum")
        Tensor(shape=[], dtype=Float32, value= 3)
        >>> float(weight_reduce_loss(loss, weight, avg_factor=2.0))
        1.5
    """
    loss = check_tensor(loss, "loss")
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    if weight is not None:
        weight = _check_weight_broadcast(loss, check_tensor(weight, "weight"))
        loss = _mul(loss, weight)
    if avg_factor is None:
        return reduce_loss(loss, reduction)
    if reduction == "mean":
        return _avg_factor_div(_sum(loss), avg_factor)
    return loss


def weighted_loss(loss_func: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """Decorator turning an elementwise loss into one with ``weight``/``reduction``/``avg_factor``.

    Mirrors ``mmdet.models.losses.utils.weighted_loss``: the decorated function has the
    signature ``loss_func(pred, target, weight=None, reduction='mean', avg_factor=None,
    **kwargs)`` and applies :func:`weight_reduce_loss` to ``loss_func(pred, target, **kwargs)``.

    Example:
        >>> import mindspore as ms
        >>> from mindspore import ops
        >>> from mscompat.losses import weighted_loss
        >>> @weighted_loss
        ... def l1_loss(pred, target):
        ...     return ops.abs(pred - target)
        >>> pred, target = ms.Tensor([0.0, 2.0, 3.0, 4.0]), ms.Tensor([1.0, 1.0, 1.0, 1.0])
        >>> weight = ms.Tensor([1.0, 0.0, 1.0, 0.0])
        >>> l1_loss(pred, target)
        Tensor(shape=[], dtype=Float32, value= 1.75)
        >>> l1_loss(pred, target, weight, reduction="sum")
        Tensor(shape=[], dtype=Float32, value= 3)
    """

    def wrapper(
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        reduction: str = "mean",
        avg_factor: AvgFactor = None,
        **kwargs: Any,
    ) -> Tensor:
        check_reduction(reduction)
        _check_avg_factor(avg_factor, reduction)
        loss = loss_func(pred, target, **kwargs)
        return weight_reduce_loss(loss, weight, reduction, avg_factor)

    # Copy name and docs only. Not ``__wrapped__``: MindSpore's graph parser follows it and would
    # compile the undecorated function (no weighting, no reduction). Not ``__module__``: the
    # parser resolves the wrapper's global names in that module.
    functools.update_wrapper(
        wrapper, loss_func, assigned=("__name__", "__qualname__", "__doc__"), updated=()
    )
    del wrapper.__wrapped__  # type: ignore[attr-defined]
    return wrapper
