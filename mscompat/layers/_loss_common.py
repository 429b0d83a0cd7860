"""Helpers shared by the ``torch.nn.functional`` losses of :mod:`mscompat.layers`.

float16 is computed in float32 and rounded once at the end (PyTorch's CPU kernels round each
intermediate op to float16, so results agree to a float16 ulp or two); reductions accumulate in
float32 as PyTorch's do. Python floats meet float64 tensors as float64 tensors
(:func:`scalar`): MindSpore rounds a Python float to float32 otherwise.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_bool, check_float_tensor, check_number, check_tensor
from mscompat.custom_ops.sum import reduce_sum

__all__ = [
    "Loss",
    "MarginLoss",
    "as_tensor",
    "broadcast_pair",
    "check_index_range",
    "check_index_tensor",
    "check_dtype_match",
    "compute_dtype",
    "apply_reduction",
    "legacy_reduction",
    "scalar",
    "upcast",
]

_REDUCTIONS = ("none", "mean", "sum")


def legacy_reduction(
    size_average: Optional[bool],
    reduce_: Optional[bool],
    reduction: Any,
    extra: Tuple[str, ...] = (),
) -> str:
    """``reduction`` after PyTorch's deprecated ``size_average``/``reduce`` mapping
    (``torch.nn._reduction.legacy_get_string``): either given wins over ``reduction``; a
    missing one counts as True; ``reduce=False`` gives ``'none'``, else ``size_average``
    chooses ``'mean'`` or ``'sum'``."""
    if size_average is not None:
        check_bool(size_average, "size_average")
    if reduce_ is not None:
        check_bool(reduce_, "reduce")
    if size_average is not None or reduce_ is not None:
        average = True if size_average is None else size_average
        if reduce_ is False:
            return "none"
        return "mean" if average else "sum"
    allowed = _REDUCTIONS + extra
    if reduction not in allowed:
        names = ", ".join(repr(r) for r in allowed)
        raise ValueError(f"reduction must be one of {names}, but got {reduction!r}")
    return str(reduction)


class Loss(nn.Cell):
    """The base of the loss Cells, as PyTorch's ``torch.nn.modules.loss._Loss``: it holds
    ``reduction`` after the deprecated ``size_average``/``reduce`` mapping
    (:func:`legacy_reduction`)."""

    def __init__(
        self,
        size_average: Optional[bool] = None,
        reduce: Optional[bool] = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__()
        self.reduction = legacy_reduction(size_average, reduce, reduction)


class MarginLoss(Loss):
    """A :class:`Loss` with a ``margin`` (a number)."""

    def __init__(
        self,
        margin: float,
        size_average: Optional[bool] = None,
        reduce: Optional[bool] = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = check_number(margin, "margin")


def compute_dtype(dtype: Any) -> Any:
    """The dtype a loss is computed in: float32 for float16 (PyTorch's CPU opmath type)."""
    return ms.float32 if dtype == ms.float16 else dtype


def upcast(x: Tensor) -> Tensor:
    """``x`` in its compute dtype."""
    return x.astype(ms.float32) if x.dtype == ms.float16 else x


def scalar(value: float, x: Tensor) -> Any:
    """``value`` as an operand of ``x``: a float64 tensor for float64 ``x`` (a Python float
    would be rounded to float32), else the Python float."""
    if x.dtype == ms.float64:
        return Tensor(value, ms.float64)
    return float(value)


def apply_reduction(loss: Tensor, reduction: str, dtype: Any) -> Tensor:
    """``loss`` reduced (``'none'``/``'mean'``/``'sum'``) and cast to ``dtype``: the sum of an
    empty loss is 0 and its mean NaN, as PyTorch's."""
    if reduction == "none":
        return loss.astype(dtype)
    if loss.size == 0:
        value = 0.0 if reduction == "sum" else float("nan")
        return ops.fill(dtype, (), value)
    out = reduce_sum(loss, 1 if reduction == "sum" else loss.size)
    return out.astype(dtype)


@constexpr
def _broadcast_shape(
    a: Tuple[int, ...], b: Tuple[int, ...], name_a: str, name_b: str
) -> Tuple[int, ...]:
    try:
        return tuple(int(s) for s in np.broadcast_shapes(a, b))
    except ValueError:
        raise ValueError(
            f"{name_b} must broadcast with {name_a}, but got {name_a}.shape={a} and "
            f"{name_b}.shape={b}"
        ) from None


def broadcast_pair(a: Tensor, b: Tensor, name_a: str, name_b: str) -> Tuple[Tensor, Tensor]:
    """``a`` and ``b`` broadcast to one shape (``torch.broadcast_tensors``); ``ValueError``
    naming both when they do not broadcast."""
    shape = _broadcast_shape(a.shape, b.shape, name_a, name_b)
    if a.shape != shape:
        a = ops.broadcast_to(a, shape)
    if b.shape != shape:
        b = ops.broadcast_to(b, shape)
    return a, b


def check_dtype_match(x: Tensor, other: Any, name_x: str, name: str) -> Tensor:
    """``other`` checked as a floating Tensor and cast to ``x``'s dtype (PyTorch promotes the
    pair; mixed float dtypes are rare in losses and computed in ``x``'s)."""
    other = check_float_tensor(other, name)
    if other.dtype != x.dtype:
        other = other.astype(x.dtype)
    return other


def as_tensor(value: Any, name: str) -> Optional[Tensor]:
    """A Cell's tensor argument: None, a Tensor or a NumPy array (made a Tensor)."""
    if value is None:
        return None
    if isinstance(value, np.ndarray):
        return Tensor(value)
    return check_tensor(value, name)


@constexpr
def _range_message(fn: str, name: str, low: int, high: int, ignore: Any) -> str:
    skip = "" if ignore is None else f" (or ignore_index={ignore})"
    return f"{fn}(): {name} holds a value out of range: each must be in [{low}, {high}){skip}"


def check_index_tensor(x: Any, name: str) -> Tensor:
    """``x`` as an int64 Tensor; ``TypeError`` naming it unless an int32/int64 Tensor (PyTorch
    wants int64; int32 is accepted and widened)."""
    x = check_tensor(x, name)
    if x.dtype not in (ms.int32, ms.int64):
        raise TypeError(f"{name} must be an int64 (or int32) Tensor, but got dtype {x.dtype}")
    return x.astype(ms.int64) if x.dtype != ms.int64 else x


def check_index_range(
    target: Tensor, low: int, high: int, ignore: Any, fn: str, name: str = "target"
) -> Tensor:
    """Return ``target``; ``ValueError`` if a value lies outside ``[low, high)`` other than
    ``ignore``. The values are read, in graph mode too (a raise under a Tensor condition, whose
    message is a compile-time constant), as PyTorch raises "Target ... is out of bounds"."""
    message = _range_message(fn, name, low, high, ignore)
    bad = ops.logical_or(target < low, target >= high)
    if ignore is not None:
        bad = ops.logical_and(bad, target != ignore)
    if target.size > 0 and bad.any():
        raise ValueError(message)
    return target
