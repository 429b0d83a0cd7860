"""Reductions and running sums with PyTorch's dtypes: ``argmax``, ``argmin``,
``count_nonzero``, ``logsumexp``, ``cumsum``.

``mint.argmax``, ``mint.logsumexp``, ``mint.count_nonzero``, ``mint.cumsum`` fail on MindSpore
2.10 CPU ("kernel unregistered"); these run ``mint`` on Ascend and ``mindspore.ops`` elsewhere,
with PyTorch's rules that ``ops`` does not follow: indices and counts are int64; NaN is the
largest and the smallest value for ``argmax``/``argmin`` (the first NaN wins; ``ops.argmax``
ignores NaN); ties give the first position; ``logsumexp`` of integers is float32 and of an
empty dim ``-inf``; ``cumsum`` of integers and bool is int64, float16 accumulates in float32
and float32 in float64 (PyTorch's CPU accumulation types).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
from mindspore import Tensor, mint, ops

from mscompat._checks import check_bool, check_tensor, is_float_dtype, wrap_dim
from mscompat._mint import check_dtype, mint_or_composite
from mscompat.custom_ops.registry import call

__all__ = ["argmax", "argmin", "count_nonzero", "cumsum", "logsumexp"]


def _dims(dim: Any, ndim: int, fn: str) -> Tuple[int, ...]:
    """``dim`` (an int or a sequence of ints) wrapped; a 0-d input takes ``0``/``-1``."""
    seq = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    out = tuple(wrap_dim(d, max(ndim, 1), ndim, f"{fn}(): dim") for d in seq)
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}(): dim {dim} appears more than once")
    return out


# ----------------------------------------------------------------------------- argmax/argmin


def _arg_mint(x: Tensor, axis: int, is_min: bool) -> Tensor:
    return mint.argmin(x, axis) if is_min else mint.argmax(x, axis)


@mint_or_composite(("math.argmax", "math.argmin"), _arg_mint, "ops.argmax/argmin, NaN first")
def _arg_composite(x: Tensor, axis: int, is_min: bool) -> Tensor:
    if x.dtype == ms.bool_:
        x = x.astype(ms.int32)
    idx = ops.argmin(x, axis) if is_min else ops.argmax(x, axis)
    if is_float_dtype(x.dtype):  # PyTorch: NaN is the extreme; the first one wins
        isnan = ops.isnan(x)
        first_nan = ops.argmax(isnan.astype(ms.int32), axis)
        idx = ops.where(isnan.any(axis), first_nan, idx)
    return idx.astype(ms.int64)


def _arg(input: Tensor, dim: Any, keepdim: bool, is_min: bool) -> Tensor:
    fn = "argmin" if is_min else "argmax"
    x = check_tensor(input, f"{fn}(): input")
    keepdim = check_bool(keepdim, f"{fn}(): keepdim")
    if dim is None:
        if x.size == 0:
            raise ValueError(f"{fn}(): cannot take the {fn} of an empty tensor (dim=None)")
        out = call(f"math.{fn}", x.reshape((-1,)), 0, is_min)
        return out.reshape((1,) * x.ndim) if keepdim else out
    axis = wrap_dim(dim, max(x.ndim, 1), x.ndim, f"{fn}(): dim")
    if x.ndim == 0:
        return ops.zeros((), ms.int64)
    if x.shape[axis] == 0:
        raise ValueError(f"{fn}(): dim {dim} of input shape {x.shape} is empty")
    shape = x.shape[:axis] + x.shape[axis + 1 :]
    out = ops.zeros(shape, ms.int64) if 0 in shape else call(f"math.{fn}", x, axis, is_min)
    return out.expand_dims(axis) if keepdim else out


def argmax(input: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """The position of the largest value, as :func:`torch.argmax`.

    NaN counts as the largest value; among equal values the first position is returned.

    Args:
        input (Tensor[*]): any real dtype or bool.
        dim (int, optional): the dim to reduce; None: the flattened input.
        keepdim (bool): keep the reduced dim with size 1 (every dim, for ``dim=None``).

    Returns:
        Tensor: int64 positions; ``input``'s shape without ``dim``.

    Raises:
        TypeError: ``input`` not a Tensor, ``dim`` not an int, ``keepdim`` not a bool.
        ValueError: ``dim`` out of range, an empty reduced dim.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import argmax
        >>> argmax(ms.Tensor([[1.0, 5.0, 5.0], [float("nan"), 2.0, 3.0]]), dim=1).asnumpy().tolist()
        [1, 0]
    """
    return _arg(input, dim, keepdim, False)


def argmin(input: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
    """The position of the smallest value, as :func:`torch.argmin`.

    NaN counts as the smallest value; among equal values the first position is returned.

    Args:
        input (Tensor[*]): any real dtype or bool.
        dim (int, optional): the dim to reduce; None: the flattened input.
        keepdim (bool): keep the reduced dim with size 1.

    Returns:
        Tensor: int64 positions; ``input``'s shape without ``dim``.

    Raises:
        TypeError: ``input`` not a Tensor, ``dim`` not an int, ``keepdim`` not a bool.
        ValueError: ``dim`` out of range, an empty reduced dim.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import argmin
        >>> argmin(ms.Tensor([3, 1, 1, 2])).asnumpy().tolist()
        1
    """
    return _arg(input, dim, keepdim, True)


# ----------------------------------------------------------------------------- count_nonzero


def _count_mint(x: Tensor, axes: Tuple[int, ...]) -> Tensor:
    return mint.count_nonzero(x, axes)


@mint_or_composite("math.count_nonzero", _count_mint, "sum of (x != 0) in int64")
def _count_composite(x: Tensor, axes: Tuple[int, ...]) -> Tensor:
    return ops.sum((x != 0).astype(ms.int64), axes)


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:
    """The number of nonzero values (NaN counts), as :func:`torch.count_nonzero`.

    Args:
        input (Tensor[*]): any dtype.
        dim (int or tuple of ints, optional): the dims to count along; None: all.

    Returns:
        Tensor: int64 counts; ``input``'s shape without ``dim``.

    Raises:
        TypeError: ``input`` not a Tensor, ``dim`` not an int or a tuple of ints.
        ValueError: ``dim`` out of range or repeated.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import count_nonzero
        >>> count_nonzero(ms.Tensor([[0.0, 1.0], [2.0, float("nan")]]), dim=1).asnumpy().tolist()
        [1, 2]
    """
    x = check_tensor(input, "count_nonzero(): input")
    axes = tuple(range(x.ndim)) if dim is None else _dims(dim, x.ndim, "count_nonzero")
    if x.ndim == 0:
        return (x != 0).astype(ms.int64)
    shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    if x.size == 0:
        return ops.zeros(shape, ms.int64)
    return call("math.count_nonzero", x, axes)


# ----------------------------------------------------------------------------- logsumexp


def _logsumexp_mint(x: Tensor, axes: Tuple[int, ...], keepdim: bool) -> Tensor:
    return mint.logsumexp(x, axes, keepdim)


@mint_or_composite("math.logsumexp", _logsumexp_mint, "max + log(sum(exp(x - max)))")
def _logsumexp_composite(x: Tensor, axes: Tuple[int, ...], keepdim: bool) -> Tensor:
    wide = x.astype(ms.float32) if x.dtype == ms.float16 else x
    top = ops.stop_gradient(ops.amax(wide, axes, True))
    # An infinite max is not subtracted (inf - inf would be NaN), as PyTorch.
    top = ops.where(ops.isinf(top), ops.zeros_like(top), top)
    out = ops.log(ops.sum(ops.exp(wide - top), axes, True)) + top
    if not keepdim:
        out = out.squeeze(axes)
    return out.astype(x.dtype)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:
    """``log(sum(exp(input)))`` along ``dim``, computed without overflow, as
    :func:`torch.logsumexp`.

    .. math::
        \\text{out} = m + \\log \\sum_i \\exp(x_i - m),\\quad m = \\max_i x_i

    Args:
        input (Tensor[*]): float16/32/64 (float16 computed in float32); integers become
            float32.
        dim (int or tuple of ints): the dims to reduce.
        keepdim (bool): keep the reduced dims with size 1.

    Returns:
        Tensor: ``input``'s shape without ``dim``; ``-inf`` for an empty reduced dim.

    Raises:
        TypeError: ``input`` not a Tensor, ``dim`` not an int or a tuple of ints, ``keepdim``
            not a bool.
        ValueError: ``dim`` out of range or repeated.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import logsumexp
        >>> out = logsumexp(ms.Tensor([[0.0, 0.0], [1000.0, 1000.0]]), 1)
        >>> [round(v, 3) for v in out.asnumpy().tolist()]  # float32: 1000.693 to its ulp
        [0.693, 1000.693]
    """
    x = check_tensor(input, "logsumexp(): input")
    if not is_float_dtype(x.dtype):
        x = x.astype(ms.float32)
    keepdim = check_bool(keepdim, "logsumexp(): keepdim")
    axes = _dims(dim, x.ndim, "logsumexp")
    if x.ndim == 0:  # as a 1-element vector (no kernel sees a 0-d tensor)
        return call("math.logsumexp", x.reshape((1,)), (0,), False).reshape(())
    if x.size == 0:
        shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
        if not keepdim:
            shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
        return (
            ops.full(shape, float("-inf"), dtype=x.dtype)
            if 0 not in shape
            else ops.zeros(shape, x.dtype)
        )
    return call("math.logsumexp", x, axes, keepdim)


# ----------------------------------------------------------------------------- cumsum


def _cumsum_mint(x: Tensor, axis: int, dtype: Any) -> Tensor:
    return mint.cumsum(x, axis, dtype=dtype)


@mint_or_composite("math.cumsum", _cumsum_mint, "ops.cumsum in PyTorch's accumulation type")
def _cumsum_composite(x: Tensor, axis: int, dtype: Any) -> Tensor:
    acc = {ms.float16: ms.float32, ms.float32: ms.float64}.get(dtype, dtype)
    return ops.cumsum(x.astype(acc), axis).astype(dtype)


def cumsum(input: Tensor, dim: int, *, dtype: Optional[Any] = None) -> Tensor:
    """The running sum along ``dim``, as :func:`torch.cumsum`.

    .. math::
        \\text{out}_i = \\sum_{j \\le i} x_j

    Integer and bool inputs give int64 (unless ``dtype``); float16 accumulates in float32 and
    float32 in float64, each value rounded once, as PyTorch's CPU kernel.

    Args:
        input (Tensor[*]): any real dtype or bool.
        dim (int): the dim to sum along.
        dtype (mindspore dtype, optional): cast ``input`` to it first.

    Returns:
        Tensor: ``input``'s shape.

    Raises:
        TypeError: ``input`` not a Tensor, ``dim`` not an int, a bad ``dtype``.
        ValueError: ``dim`` out of range.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import cumsum
        >>> out = cumsum(ms.Tensor([[1, 2, 3]], ms.int32), 1)
        >>> out.asnumpy().tolist(), out.dtype == ms.int64
        ([[1, 3, 6]], True)
    """
    x = check_tensor(input, "cumsum(): input")
    dtype = check_dtype(dtype, "cumsum(): dtype")
    axis = wrap_dim(dim, max(x.ndim, 1), x.ndim, "cumsum(): dim")
    if dtype is None:
        dtype = x.dtype if is_float_dtype(x.dtype) else ms.int64
    if x.size == 0 or x.ndim == 0:  # answered here: no kernel sees an empty or 0-d tensor
        return x.astype(dtype)
    return call("math.cumsum", x, axis, dtype)
