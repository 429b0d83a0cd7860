"""Selections whose output size depends on the values, and their static-shape variants.

``nonzero``, ``argwhere`` and ``masked_select`` return as many elements as the input has
nonzeros: a dynamic shape, which MindSpore's graph mode handles badly or not at all (the
migration guide's "dynamic shape" section). The static variants return a fixed size, as
PyTorch's :func:`torch.nonzero_static` and JAX's ``size=`` arguments do:

* :func:`nonzero_static` (``input, *, size, fill_value=-1``): the first ``size`` index rows,
  padded with ``fill_value``;
* :func:`masked_select` with ``size=`` (``fill_value=0``): the first ``size`` selected values,
  padded;
* :func:`topk_mask`: a boolean mask of the ``k`` largest (or smallest) along a dim, for a ``k``
  that is a tensor value (``topk`` with a tensor ``k`` has a dynamic shape).

They are compositions of a cumulative sum (each kept element's rank) and a scatter into a buffer
with one spare slot for the elements past ``size``, so they compile under ``ms.jit`` on every
backend. On MindSpore 2.10 CPU ``ops.nonzero`` has no kernel (``NonZeroExt``); the dynamic
forms here use the ``NonZero`` primitive, which has one.
"""

from __future__ import annotations

from typing import Any, Tuple, Union

import mindspore as ms
from mindspore import Tensor, ops
from mindspore.ops import constexpr
from mindspore.ops import operations as P

from mscompat._checks import check_tensor, wrap_dim
from mscompat.custom_ops.registry import call, register
from mscompat.shape.sort import argsort

__all__ = ["argwhere", "masked_select", "nonzero", "nonzero_static", "topk_mask"]

_NONZERO = P.NonZero()


def _check_size(size: Any, name: str = "size") -> int:
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"{name} must be an int, but got {type(size).__name__}")
    if size < 0:
        raise ValueError(f"{name} must be non-negative, but got {size}")
    return size


@constexpr
def _broadcast(a: Tuple[int, ...], b: Tuple[int, ...]) -> Tuple[int, ...]:
    """The broadcast shape of input and mask (at compile time under ``ms.jit``)."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        da = a[-i] if i <= len(a) else 1
        db = b[-i] if i <= len(b) else 1
        if da != db and 1 not in (da, db):
            raise ValueError(f"the shapes of input {a} and mask {b} do not broadcast")
        out.append(db if da == 1 else da)
    return tuple(out[::-1])


def _as_bool(x: Tensor) -> Tensor:
    return x if x.dtype == ms.bool_ else x != ops.zeros((), x.dtype)


@register("indexing.first_positions", "composite", note="cumulative sum + scatter")
def _first_positions(mask: Tensor, size: int, fill: int) -> Tensor:
    """Positions (int64) of the first ``size`` True elements of the 1-D ``mask``, in order,
    then ``fill``."""
    n = mask.shape[0]
    rank = ops.cumsum(mask.astype(ms.int32), 0) - 1
    slot = ops.where(ops.logical_and(mask, rank < size), rank, ops.full_like(rank, size))
    buffer = ops.fill(ms.int64, (size + 1,), fill)
    positions = ops.arange(0, n, dtype=ms.int64)
    scattered = ops.tensor_scatter_elements(
        buffer, slot.astype(ms.int64), positions, axis=0, reduction="none"
    )
    return scattered[:size]


def _unravel(flat: Tensor, shape: Tuple[int, ...], fill: int) -> Tensor:
    """(size,) flat positions (-1: padding) -> (size, ndim) coordinates, padding rows ``fill``."""
    padding = ops.expand_dims(flat < 0, 1)
    rest = ops.maximum(flat, ops.zeros((), ms.int64))
    coords = []
    for extent in reversed(shape):
        coords.append(rest % extent)
        rest = rest // extent
    out = ops.stack(coords[::-1], 1)
    return ops.where(padding, ops.full_like(out, fill), out)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """The first ``size`` indices of the nonzero elements, padded: :func:`torch.nonzero_static`.

    A static-shape :func:`nonzero` for graph mode: row ``i`` is the coordinates of the
    ``i``-th nonzero element in row-major order; rows past the number of nonzeros hold
    ``fill_value``; nonzeros past ``size`` are dropped.

    Args:
        input (Tensor[*]): any dtype; 0-d allowed (its result has 0 columns).
        size (int): rows of the result, ``>= 0``.
        fill_value (int): the padding.

    Returns:
        Tensor[size, input.ndim] (int64).

    Raises:
        TypeError: ``input`` not a Tensor, ``size`` or ``fill_value`` not an int.
        ValueError: ``size`` negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import nonzero_static
        >>> x = ms.Tensor([[0.0, 1.5], [2.0, 0.0]])
        >>> nonzero_static(x, size=3).asnumpy().tolist()
        [[0, 1], [1, 0], [-1, -1]]
    """
    x = check_tensor(input, "input")
    size = _check_size(size)
    if isinstance(fill_value, bool) or not isinstance(fill_value, int):
        raise TypeError(f"fill_value must be an int, but got {type(fill_value).__name__}")
    if x.ndim == 0:  # no coordinates to give: PyTorch returns (size, 0) either way
        return ops.zeros((size, 0), ms.int64)
    if x.size == 0 or size == 0:
        return ops.fill(ms.int64, (size, x.ndim), fill_value)
    flat = call("indexing.first_positions", _as_bool(x.reshape(-1)), size, -1)
    return _unravel(flat, tuple(x.shape), fill_value)


def nonzero(input: Tensor, *, as_tuple: bool = False) -> Union[Tensor, Tuple[Tensor, ...]]:
    """Indices of the nonzero elements, as :func:`torch.nonzero` (a dynamic shape).

    Args:
        input (Tensor[*]): any dtype.
        as_tuple (bool): return one 1-D Tensor per dim instead of a (z, ndim) matrix (a 0-d
            input gives one Tensor, as PyTorch's).

    Returns:
        Tensor[z, input.ndim] (int64), or a tuple of ``input.ndim`` Tensor[z].

    Raises:
        TypeError: ``input`` not a Tensor, ``as_tuple`` not a bool.

    In graph mode the number of rows is not known at compile time: use :func:`nonzero_static`
    there.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import nonzero
        >>> nonzero(ms.Tensor([0, 3, 0, 4])).asnumpy().tolist()
        [[1], [3]]
    """
    x = check_tensor(input, "input")
    if not isinstance(as_tuple, bool):
        raise TypeError(f"as_tuple must be a bool, but got {type(as_tuple).__name__}")
    if x.ndim == 0:  # NonZero takes >= 1 dims; no host read, so graph mode sees the value too
        hits = _NONZERO(_as_bool(x.reshape((1,)))).astype(ms.int64)
        return (hits[:, 0],) if as_tuple else ops.zeros((hits.shape[0], 0), ms.int64)
    if x.size == 0:
        rows = ops.zeros((0, x.ndim), ms.int64)
    else:
        rows = _NONZERO(_as_bool(x)).astype(ms.int64)
    if as_tuple:
        return tuple(rows[:, d] for d in range(x.ndim))
    return rows


def argwhere(input: Tensor) -> Tensor:
    """:func:`torch.argwhere`: ``nonzero(input)`` (a dynamic shape; see :func:`nonzero_static`).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import argwhere
        >>> argwhere(ms.Tensor([[1, 0], [0, 1]])).asnumpy().tolist()
        [[0, 0], [1, 1]]
    """
    out = nonzero(input)
    assert isinstance(out, Tensor)  # as_tuple=False  # noqa: S101 - narrows the type
    return out


def masked_select(input: Tensor, mask: Tensor, *, size: Any = None, fill_value: Any = 0) -> Tensor:
    """The elements of ``input`` where ``mask`` is True, as :func:`torch.masked_select`, with a
    static-shape form for graph mode.

    ``input`` and ``mask`` broadcast together; the result is 1-D, in row-major order. With
    ``size`` (an mscompat extension, as JAX's): exactly ``size`` elements, the first ``size``
    selected ones then ``fill_value``; without it, as many as ``mask`` selects (a dynamic
    shape). The gradient of ``input`` is the incoming gradient at the selected places (0
    elsewhere, and for the padding).

    Args:
        input (Tensor[*]): any dtype.
        mask (Tensor[*]): bool, broadcastable with ``input``.
        size (int, optional): the static length.
        fill_value (number): the padding, with ``size``.

    Returns:
        Tensor[n] of ``input``'s dtype.

    Raises:
        TypeError: ``input``/``mask`` not Tensors, ``mask`` not bool, ``size`` not an int.
        ValueError: shapes that do not broadcast, ``size`` negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import masked_select
        >>> x = ms.Tensor([1.0, -2.0, 3.0, -4.0])
        >>> masked_select(x, x > 0).asnumpy().tolist()
        [1.0, 3.0]
        >>> masked_select(x, x > 0, size=3).asnumpy().tolist()
        [1.0, 3.0, 0.0]
    """
    x = check_tensor(input, "input")
    m = check_tensor(mask, "mask")
    if m.dtype != ms.bool_:
        raise TypeError(f"mask must be a bool Tensor, but got dtype {m.dtype}")
    shape = _broadcast(tuple(x.shape), tuple(m.shape))
    if size is None:
        if 0 in shape:
            return ops.zeros((0,), x.dtype)
        xb, mb = ops.broadcast_to(x, shape), ops.broadcast_to(m, shape)
        return ops.masked_select(xb, mb)
    size = _check_size(size)
    xb = ops.broadcast_to(x, shape).reshape(-1) if shape else x.reshape(-1)
    mb = ops.broadcast_to(m, shape).reshape(-1) if shape else m.reshape(-1)
    if size == 0 or xb.shape[0] == 0:
        return ops.fill(x.dtype, (size,), fill_value)
    n = xb.shape[0]
    positions = call("indexing.first_positions", mb, size, n)
    padded = ops.concat((xb, ops.fill(x.dtype, (1,), fill_value)))
    return ops.gather(padded, positions, 0)


def topk_mask(input: Tensor, k: Any, dim: int = -1, largest: bool = True) -> Tensor:
    """A boolean mask of the ``k`` largest (smallest) elements along ``dim``: the static-shape
    form of :func:`torch.topk` for a ``k`` that is a tensor value.

    ``torch.topk(x, k)`` with ``k`` read from a tensor has a dynamic output shape; the mask has
    ``input``'s shape whatever ``k`` is: use it with ``ops.where`` / ``masked_select(...,
    size=)`` / a weighted sum. Equal values are ranked by position (the earlier first), so
    exactly ``min(k, n)`` places per line are True.

    Args:
        input (Tensor[*]): a real dtype, at least 1-D.
        k (int or Tensor[]): how many per line along ``dim`` (an int Tensor may be a value
            computed in the graph); negative counts as 0.
        dim (int): the dim.
        largest (bool): the largest (default) or the smallest.

    Returns:
        Tensor[*] (bool), ``input``'s shape.

    Raises:
        TypeError: ``input`` not a Tensor, ``k`` neither an int nor an integer Tensor.
        ValueError: ``dim`` out of range, 0-d ``input``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.indexing import topk_mask
        >>> x = ms.Tensor([[0.1, 0.9, 0.5, 0.7]])
        >>> topk_mask(x, ms.Tensor(2)).asnumpy().tolist()
        [[False, True, False, True]]
    """
    x = check_tensor(input, "input")
    if x.ndim == 0:
        raise ValueError("topk_mask(): input must be at least 1-D")
    axis = wrap_dim(dim, x.ndim, x.ndim)
    if isinstance(k, Tensor):
        if k.dtype not in (ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8):
            raise TypeError(f"k must be an int or an integer Tensor, but got dtype {k.dtype}")
        kk = k.astype(ms.int64)
    elif isinstance(k, int) and not isinstance(k, bool):
        kk = Tensor(k, ms.int64)
    else:
        raise TypeError(f"k must be an int or an integer Tensor, but got {type(k).__name__}")
    if not isinstance(largest, bool):
        raise TypeError(f"largest must be a bool, but got {type(largest).__name__}")
    if x.size == 0:
        return ops.zeros(x.shape, ms.bool_)
    key = x.astype(ms.int32) if x.dtype == ms.bool_ else x
    order = argsort(key, axis, descending=largest, stable=True)  # ties: the earlier first
    rank = argsort(order, axis, stable=True)  # the inverse permutation: each place's rank
    return rank < kk
