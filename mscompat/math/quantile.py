"""Quantiles, as :func:`torch.quantile` and :func:`torch.nanquantile`.

MindSpore 2.10's ``ops.quantile`` has only linear interpolation. These sort the slice
(``mscompat.shape.sort``: NaN last), take the rank ``q * (k - 1)`` (``k``: the slice's length,
or its number of non-NaN values for ``nanquantile``) and gather the values below and above it,
combined as PyTorch's ``interpolation`` says; so the gradient is PyTorch's (the linear weights
on the two gathered values).
"""

from __future__ import annotations

from typing import Any, Tuple

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_bool, check_tensor, wrap_dim
from mscompat.custom_ops.registry import call, register
from mscompat.shape import sort

__all__ = ["nanquantile", "quantile"]

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


@register(("math.quantile", "math.nanquantile"), "composite", note="sort, gather, interpolate")
def _quantile_composite(x: Tensor, q: Tensor, interpolation: str, ignore_nan: bool) -> Tensor:
    """``x``: (..., n) reduced along the last dim; ``q``: (Q,). Returns (Q, ...)."""
    n = x.shape[-1]
    values = sort(x, -1)[0]
    nan = ops.isnan(x)
    count = (n - nan.astype(ms.int32).sum(-1, keepdim=True)).astype(x.dtype)  # (..., 1)
    k = count if ignore_nan else ops.full_like(count, float(n))
    qs = q.reshape((-1,) + (1,) * x.ndim)  # (Q, 1.., 1)
    rank = ops.maximum(qs * (k - 1), ops.zeros_like(k))  # (Q, ..., 1)
    if not ignore_nan:  # a NaN in the slice: the last sorted value, a NaN (its gradient too)
        rank = ops.where(nan.any(-1, keep_dims=True), ops.full_like(rank, float(n - 1)), rank)
    if interpolation == "nearest":
        rank = ops.round(rank)  # halves to even, as PyTorch
    below = ops.floor(rank)
    above = ops.ceil(rank) if interpolation != "lower" else below
    if interpolation == "higher":
        below = above
    shape = rank.shape
    vals = ops.broadcast_to(values.expand_dims(0), shape[:-1] + (n,))
    lo = ops.gather_elements(vals, x.ndim, below.astype(ms.int64))
    hi = ops.gather_elements(vals, x.ndim, above.astype(ms.int64))
    if interpolation == "midpoint":
        out = lo + (hi - lo) * 0.5
    elif interpolation == "linear":
        out = lo + (hi - lo) * (rank - below)  # differentiable in q too, as PyTorch
    else:
        out = lo
    return out.squeeze(-1)


def _quantile(fn: str, input: Any, q: Any, dim: Any, keepdim: Any, interpolation: Any) -> Tensor:
    x = check_tensor(input, f"{fn}(): input")
    if x.dtype not in (ms.float32, ms.float64):
        raise TypeError(f"{fn}(): input must be a float32 or float64 Tensor, but got {x.dtype}")
    if interpolation not in _MODES:
        raise ValueError(
            f"{fn}(): interpolation must be one of {_MODES}, but got {interpolation!r}"
        )
    keepdim = check_bool(keepdim, f"{fn}(): keepdim")
    scalar_q = isinstance(q, (int, float)) and not isinstance(q, bool)
    if scalar_q:
        if not 0 <= q <= 1:
            raise ValueError(f"{fn}(): q must be in the range [0, 1], but got {q}")
        qt = Tensor([float(q)], x.dtype)
    elif isinstance(q, Tensor):
        if q.ndim > 1:
            raise ValueError(f"{fn}(): q must be a scalar or 1-D Tensor, but got {q.ndim}-D")
        if q.dtype != x.dtype:
            raise TypeError(f"{fn}(): q must have input's dtype {x.dtype}, but got {q.dtype}")
        qt = q.reshape((-1,))
    else:
        raise TypeError(f"{fn}(): q must be a float or a Tensor, but got {type(q).__name__}")
    if dim is None:
        flat = x.reshape((-1,))
        kept: Tuple[int, ...] = (1,) * x.ndim if keepdim else ()
        moved = flat
    else:
        axis = wrap_dim(dim, max(x.ndim, 1), x.ndim, name=f"{fn}(): dim") % max(x.ndim, 1)
        xx = x if x.ndim else x.reshape((1,))
        moved = ops.moveaxis(xx, axis, -1)
        kept = tuple(1 if i == axis else s for i, s in enumerate(x.shape) if keepdim or i != axis)
    if x.size == 0:
        raise ValueError(f"{fn}(): input must not be empty")
    out = call(f"math.{fn}", moved, qt, interpolation, fn == "nanquantile")
    q_shape: Tuple[int, ...] = (
        ()
        if scalar_q or qt.ndim == 0 or (isinstance(q, Tensor) and q.ndim == 0)
        else (qt.shape[0],)
    )
    return out.reshape(q_shape + kept)


def quantile(
    input: Tensor,
    q: Any,
    dim: Any = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """The ``q``-th quantiles of ``input`` along ``dim``, as :func:`torch.quantile`.

    .. math::
        r = q (n - 1), \\qquad
        \\text{out} = v_{\\lfloor r \\rfloor} + (r - \\lfloor r \\rfloor)
        (v_{\\lceil r \\rceil} - v_{\\lfloor r \\rfloor})

    for ``interpolation='linear'`` over the sorted slice :math:`v`; ``'lower'``, ``'higher'``,
    ``'midpoint'`` and ``'nearest'`` (halves to even) as PyTorch. A slice with a NaN gives NaN.

    Args:
        input (Tensor[*]): float32 or float64, not empty.
        q (float or Tensor[Q]): in ``[0, 1]`` (a Tensor's values are not checked); a 1-D
            Tensor adds a leading dim of size ``Q`` to the result.
        dim (int, optional): the dim to reduce; None: the flattened input.
        keepdim (bool): keep the reduced dim(s) with size 1.
        interpolation (str): ``'linear'``, ``'lower'``, ``'higher'``, ``'midpoint'``,
            ``'nearest'``.

    Returns:
        Tensor: ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a float32/float64 Tensor, ``q`` of the wrong type or dtype.
        ValueError: ``q`` outside ``[0, 1]`` or more than 1-D, a bad ``interpolation`` or
            ``dim``, an empty ``input``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import quantile
        >>> x = ms.Tensor([1.0, 2.0, 4.0, 8.0])
        >>> quantile(x, 0.5).asnumpy().tolist()
        3.0
        >>> quantile(x, 0.5, interpolation="lower").asnumpy().tolist()
        2.0
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation)


def nanquantile(
    input: Tensor,
    q: Any,
    dim: Any = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """:func:`quantile` ignoring NaN, as :func:`torch.nanquantile`: the rank is
    ``q * (k - 1)`` with ``k`` the number of non-NaN values of the slice; an all-NaN slice
    gives NaN.

    .. math::
        r = q (k - 1)

    Args, Returns, Raises: as :func:`quantile`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import nanquantile
        >>> nanquantile(ms.Tensor([1.0, float("nan"), 3.0]), 0.5).asnumpy().tolist()
        2.0
    """
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation)
