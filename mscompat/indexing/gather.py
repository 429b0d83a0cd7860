"""Gathers PyTorch has and MindSpore 2.10 lacks or computes differently on CPU:
``one_hot`` (``mint.nn.functional.one_hot`` has no CPU kernel; ``num_classes=-1``) and
``take_along_dim`` (no counterpart; ``mint.gather`` does not broadcast)."""

from __future__ import annotations

from typing import Optional, Tuple

import mindspore as ms
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat._checks import check_int, check_tensor, wrap_dim
from mscompat._graph import compiling
from mscompat.custom_ops.registry import call, register

__all__ = ["one_hot", "take_along_dim"]

_INTS = (ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8)


@register("indexing.one_hot", "composite", note="comparison with arange")
def _one_hot(x: Tensor, num_classes: int) -> Tensor:
    classes = ops.arange(0, num_classes, dtype=ms.int64)
    return (ops.expand_dims(x.astype(ms.int64), -1) == classes).astype(ms.int64)


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """One-hot encoding of integer class indices, as :func:`torch.nn.functional.one_hot`.

    Args:
        tensor (Tensor[*]): integer class indices, ``0 <= value < num_classes``.
        num_classes (int): the number of classes; ``-1`` (default) takes the largest value
            plus one (read from the data; in graph mode a dynamic shape).

    Returns:
        Tensor[..., num_classes] (int64): ``tensor``'s shape and one more dim.

    Raises:
        TypeError: ``tensor`` not an integer Tensor, ``num_classes`` not an int.
        ValueError: ``num_classes`` below -1, ``num_classes=-1`` for an empty input (as
            PyTorch), and in PyNative a negative index or one ``>= num_classes``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.nn.functional import one_hot
        >>> one_hot(ms.Tensor([0, 2, 1]), 3).asnumpy().tolist()
        [[1, 0, 0], [0, 0, 1], [0, 1, 0]]
    """
    x = check_tensor(tensor, "tensor")
    if x.dtype not in _INTS:
        raise TypeError(f"one_hot(): tensor must be an integer Tensor, but got dtype {x.dtype}")
    n = check_int(num_classes, "num_classes")
    if n < -1:
        raise ValueError(f"num_classes must be -1 or non-negative, but got {n}")
    if x.size == 0:
        if n == -1:
            raise ValueError("one_hot(): num_classes=-1 needs a non-empty tensor")
        return ops.zeros((*x.shape, n), ms.int64)
    if n == -1 and compiling():  # the number of classes: a dynamic shape of the graph
        if (x < 0).any():
            raise ValueError("one_hot(): tensor must hold non-negative class indices")
        classes = ops.arange(0, x.max().astype(ms.int64) + 1, dtype=ms.int64)
        return (x.astype(ms.int64).expand_dims(-1) == classes).astype(ms.int64)
    if n == -1:  # read from the data
        values = x.asnumpy()
        if values.min() < 0:
            raise ValueError("one_hot(): tensor must hold non-negative class indices")
        n = int(values.max()) + 1
    elif ops.logical_or(x < 0, x >= n).any():  # a raise under a Tensor condition: graph too
        raise ValueError(_range_message(n))
    return call("indexing.one_hot", x, n)


@constexpr
def _range_message(n: int) -> str:
    """The message of an out-of-range class (a constant under ``ms.jit``)."""
    return f"one_hot(): class values must be in [0, num_classes={n})"


def _broadcast_except(
    a: Tuple[int, ...], b: Tuple[int, ...], axis: int
) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    """The shapes ``input`` and ``indices`` broadcast to, every dim but ``axis``."""
    out_a, out_b = list(a), list(b)
    for i, (da, db) in enumerate(zip(a, b)):
        if i == axis:
            continue
        if da != db and 1 not in (da, db):
            raise ValueError(
                f"take_along_dim(): input {a} and indices {b} do not broadcast at dim {i}"
            )
        out_a[i] = out_b[i] = max(da, db) if 0 not in (da, db) else 0
    return tuple(out_a), tuple(out_b)


def take_along_dim(input: Tensor, indices: Tensor, dim: Optional[int] = None) -> Tensor:
    """Values of ``input`` at ``indices`` along ``dim``, as :func:`torch.take_along_dim`.

    ``input`` and ``indices`` broadcast in every dim but ``dim``; without ``dim`` both are
    flattened. The gradient of ``input`` adds the incoming gradient at the indices.

    Args:
        input (Tensor[*]): any dtype.
        indices (Tensor[*]): int64 (or int32) positions, ``0 <= index < input.shape[dim]``,
            the same number of dims as ``input`` when ``dim`` is given.
        dim (int, optional): the dim to take along.

    Returns:
        Tensor: ``input``'s dtype; the broadcast shape with ``indices``' size along ``dim``.

    Raises:
        TypeError: not Tensors, ``indices`` not integer.
        ValueError: different numbers of dims, shapes that do not broadcast, ``dim`` out of
            range.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import take_along_dim
        >>> x = ms.Tensor([[10, 30, 20], [60, 40, 50]])
        >>> take_along_dim(x, ms.Tensor([[1], [0]]), 1).asnumpy().tolist()
        [[30], [60]]
    """
    x = check_tensor(input, "input")
    idx = check_tensor(indices, "indices")
    if idx.dtype not in _INTS:
        raise TypeError(f"indices must be an integer Tensor, but got dtype {idx.dtype}")
    if dim is None:
        x, idx = x.reshape(-1), idx.reshape(-1)
        axis = 0
    else:
        if x.ndim != idx.ndim:
            raise ValueError(
                f"take_along_dim(): input and indices must have the same number of dims, but "
                f"got {x.ndim} and {idx.ndim}"
            )
        axis = wrap_dim(dim, max(x.ndim, 1), x.ndim)
    if x.ndim == 0:
        return x
    shape_x, shape_i = _broadcast_except(tuple(x.shape), tuple(idx.shape), axis)
    if 0 in shape_i or 0 in shape_x:
        return ops.zeros(shape_i, x.dtype)
    return call(
        "indexing.take_along_dim",
        ops.broadcast_to(x, shape_x),
        ops.broadcast_to(idx, shape_i),
        axis,
    )


@register("indexing.take_along_dim", "composite", note="ops.gather_elements")
def _take(x: Tensor, idx: Tensor, axis: int) -> Tensor:
    return ops.gather_elements(x, axis, idx.astype(ms.int64))
