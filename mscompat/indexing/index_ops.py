"""``index_add``, ``index_copy``, ``index_fill``, ``index_select`` and ``take`` as PyTorch's.

On MindSpore 2.10 CPU ``mint.index_add``/``ops.index_fill`` reject int64 indices (int32 only),
``mint.index_add`` does not compile in graph mode, and ``mint.index_select``/``mint.take`` have
no kernel. These take int64 (or int32) indices, check their range before any kernel, and run
on the flat positions of :mod:`._positions`: ``index_add`` and ``index_copy`` are the
``sum``/write scatters of :mod:`.scatter_ops` (with their gradients), the selections are a
``gather`` (whose gradient adds the incoming gradient back at the indices).
"""

from __future__ import annotations

from typing import Any, Tuple, Union

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_number, check_tensor, is_float_dtype, is_int, wrap_dim
from mscompat.custom_ops.registry import call, register
from mscompat.indexing import scatter_ops as _scatter_ops  # noqa: F401  (registers its ops)
from mscompat.indexing._positions import check_in_range, check_index, flat_positions

__all__ = ["index_add", "index_copy", "index_fill", "index_select", "take"]


@register(("indexing.index_select", "indexing.take"), "composite", note="ops.gather")
def _gather(x: Tensor, idx: Tensor, axis: int) -> Tensor:
    return ops.gather(x, idx, axis)


def _vector_index(fn: str, index: Any) -> Tensor:
    """``index`` as a 1-D integer Tensor (PyTorch takes 0-d or 1-D)."""
    idx = check_index(index, "index", fn)
    if idx.ndim > 1:
        raise ValueError(f"{fn}(): index must be 0-d or 1-D, but got {idx.ndim}-D")
    return idx.reshape(-1)


def _check_source(
    fn: str, input: Any, dim: Any, index: Any, source: Any
) -> Tuple[Tensor, int, Tensor, Tensor]:
    """``(input, axis, index, source)`` of an ``index_add``/``index_copy``, 0-d made 1-D, with
    PyTorch's shape rule: ``source`` is ``input`` with ``len(index)`` places along ``dim``."""
    x = check_tensor(input, "input")
    src = check_tensor(source, "source")
    axis = wrap_dim(dim, max(x.ndim, 1), x.ndim)
    idx = _vector_index(fn, index)
    if src.dtype != x.dtype:
        raise TypeError(f"{fn}(): source must have input's dtype {x.dtype}, but got {src.dtype}")
    shape = list(x.shape) or [1]
    shape[axis] = idx.shape[0]
    if tuple(src.shape or (1,)) != tuple(shape):
        raise ValueError(
            f"{fn}(): source must have shape {tuple(shape)} (input's, with len(index) places "
            f"along dim {axis}), but got {tuple(src.shape)}"
        )
    x = x.reshape(-1) if x.ndim == 0 else x
    idx = check_in_range(idx, 0, x.shape[axis], fn, "index", f"input.shape[{axis}]")
    return x, axis, idx, src.reshape(tuple(shape))


def _index_along(idx: Tensor, shape: Tuple[int, ...], axis: int) -> Tensor:
    """``idx`` broadcast to a source of ``shape`` with ``len(idx)`` places along ``axis``: the
    scatter index of its slices."""
    view = [1] * len(shape)
    view[axis] = idx.shape[0]
    full = list(shape)
    full[axis] = idx.shape[0]
    return ops.broadcast_to(idx.reshape(tuple(view)), tuple(full))


def _positions_along(idx: Tensor, shape: Tuple[int, ...], axis: int) -> Tensor:
    """The flat positions in ``shape`` of a source whose slices along ``axis`` go to ``idx``."""
    return flat_positions(_index_along(idx, shape, axis), shape, axis).reshape(-1)


def index_add(
    input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha: Union[int, float] = 1
) -> Tensor:
    """Add ``alpha * source`` into ``input`` at ``index`` along ``dim``, as
    :func:`torch.index_add`.

    .. math::
        \\text{out}[\\dots, \\text{index}_i, \\dots] \\mathrel{+}= \\alpha\\,
        \\text{source}[\\dots, i, \\dots]

    Repeated indices accumulate. The gradient of ``input`` is the incoming gradient; that of
    ``source`` is ``alpha`` times the incoming gradient selected at ``index``.

    Args:
        input (Tensor[*]): float16/32/64 or integer.
        dim (int): the dim ``index`` addresses.
        index (Tensor[K]): int64 (or int32) positions in ``[0, input.shape[dim])``.
        source (Tensor[*]): ``input``'s dtype and shape, with ``K`` places along ``dim``.
        alpha (number): the scale of ``source`` (an int for integer ``input``).

    Returns:
        Tensor: ``input``'s shape and dtype.

    Raises:
        TypeError: not Tensors, ``index`` not integer, ``source`` of another dtype, a float
            ``alpha`` for integer ``input``.
        ValueError: ``index`` not 0-d/1-D or out of range, ``source`` of the wrong shape.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import index_add
        >>> x = ms.Tensor([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
        >>> src = ms.Tensor([[1.0, 2.0], [3.0, 4.0]])
        >>> index_add(x, 0, ms.Tensor([2, 2], ms.int64), src, alpha=10).asnumpy().tolist()
        [[1.0, 1.0], [1.0, 1.0], [41.0, 61.0]]
    """
    x, axis, idx, src = _check_source("index_add", input, dim, index, source)
    a = check_number(alpha, "alpha")
    if not is_float_dtype(x.dtype) and not is_int(alpha):
        raise TypeError(f"index_add(): alpha must be an int for integer input, but got {alpha}")
    if idx.shape[0] == 0:
        return input
    if a != 1:
        src = src * ops.scalar_to_tensor(a, src.dtype)
    full = _index_along(idx, tuple(x.shape), axis)
    out = call("indexing.scatter_reduce", x, src, full, axis, "sum", True, "index_add")
    return out if tuple(out.shape) == tuple(input.shape) else out.reshape(input.shape)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """Copy ``source`` into ``input`` at ``index`` along ``dim``, as :func:`torch.index_copy`.

    ``out[..., index[i], ...] = source[..., i, ...]``; where ``index`` repeats a position the
    last copy wins (PyTorch's CPU order). The gradient of ``input`` is zero where copied over;
    that of ``source`` is the incoming gradient selected at ``index``.

    Args:
        input (Tensor[*]): any real dtype.
        dim (int): the dim ``index`` addresses.
        index (Tensor[K]): int64 (or int32) positions in ``[0, input.shape[dim])``.
        source (Tensor[*]): ``input``'s dtype and shape, with ``K`` places along ``dim``.

    Returns:
        Tensor: ``input``'s shape and dtype.

    Raises:
        TypeError: not Tensors, ``index`` not integer, ``source`` of another dtype.
        ValueError: ``index`` not 0-d/1-D or out of range, ``source`` of the wrong shape.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import index_copy
        >>> x = ms.Tensor([0, 0, 0, 0])
        >>> index_copy(x, 0, ms.Tensor([3, 1], ms.int64), ms.Tensor([7, 8])).asnumpy().tolist()
        [0, 8, 0, 7]
    """
    x, axis, idx, src = _check_source("index_copy", input, dim, index, source)
    if idx.shape[0] == 0:
        return input
    pos = _positions_along(idx, tuple(x.shape), axis)
    return call("indexing.scatter", x.reshape(-1), src.reshape(-1), pos).reshape(input.shape)


def index_fill(input: Tensor, dim: int, index: Tensor, value: Union[Tensor, float]) -> Tensor:
    """``input`` with the slices at ``index`` along ``dim`` set to ``value``, as
    :func:`torch.index_fill`.

    Negative indices count from the end (PyTorch's rule for ``index_fill``). The gradient of
    ``input`` is zero in the filled slices; a 0-d Tensor ``value`` gets the sum of the incoming
    gradient there.

    Args:
        input (Tensor[*]): any real or bool dtype.
        dim (int): the dim ``index`` addresses.
        index (Tensor[K]): int64 (or int32) positions in ``[-input.shape[dim],
            input.shape[dim])``.
        value (number or Tensor[]): the fill value (a 0-d Tensor: differentiable).

    Returns:
        Tensor: ``input``'s shape and dtype.

    Raises:
        TypeError: not Tensors, ``index`` not integer, ``value`` not a number or 0-d Tensor.
        ValueError: ``index`` not 0-d/1-D or out of range.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import index_fill
        >>> x = ms.Tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
        >>> index_fill(x, 1, ms.Tensor([0, -1], ms.int64), -1.0).asnumpy().tolist()
        [[-1.0, 2.0, -1.0], [-1.0, 5.0, -1.0]]
    """
    x = check_tensor(input, "input")
    axis = wrap_dim(dim, max(x.ndim, 1), x.ndim)
    idx = _vector_index("index_fill", index)
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise ValueError(f"index_fill(): value must be a 0-d Tensor, but got {value.ndim}-D")
        fill = value.astype(x.dtype)
    else:
        fill = ops.scalar_to_tensor(check_number(value, "value"), x.dtype)
    n = x.shape[axis] if x.ndim else 1
    if idx.shape[0] == 0 or x.size == 0:
        return x
    idx = check_in_range(idx, -n, n, "index_fill", "index", f"input.shape[{axis}]")
    wrapped = ops.where(idx < 0, idx + n, idx).astype(ms.int64)
    hit = ops.unsorted_segment_sum(ops.ones_like(wrapped), wrapped, n) > 0
    view = [1] * x.ndim
    if x.ndim:
        view[axis] = n
    return ops.where(hit.reshape(tuple(view)), fill, x)


def index_select(input: Tensor, dim: int, index: Tensor) -> Tensor:
    """The slices of ``input`` at ``index`` along ``dim``, as :func:`torch.index_select`.

    Args:
        input (Tensor[*]): any dtype.
        dim (int): the dim to select along.
        index (Tensor[K]): int64 (or int32) positions in ``[0, input.shape[dim])``, 0-d or 1-D
            (one position for a 0-d ``input``).

    Returns:
        Tensor: ``input``'s dtype and shape with ``K`` places along ``dim``.

    Raises:
        TypeError: not Tensors, ``index`` not integer.
        ValueError: ``index`` not 0-d/1-D or out of range.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import index_select
        >>> x = ms.Tensor([[1, 2, 3], [4, 5, 6]])
        >>> index_select(x, 1, ms.Tensor([2, 0, 2], ms.int64)).asnumpy().tolist()
        [[3, 1, 3], [6, 4, 6]]
    """
    x = check_tensor(input, "input")
    axis = wrap_dim(dim, max(x.ndim, 1), x.ndim)
    idx = _vector_index("index_select", index)
    if x.ndim == 0:
        if idx.shape[0] != 1:
            raise ValueError("index_select(): a 0-d input takes exactly one index")
        idx = check_in_range(idx, 0, 1, "index_select", "index", "a 0-d input")
        return x
    n = x.shape[axis]
    idx = check_in_range(idx, 0, n, "index_select", "index", f"input.shape[{axis}]")
    if x.size == 0 or idx.shape[0] == 0:
        shape = list(x.shape)
        shape[axis] = idx.shape[0]
        return ops.zeros(tuple(shape), x.dtype)
    return call("indexing.index_select", x, idx, axis)


def take(input: Tensor, index: Tensor) -> Tensor:
    """The elements of the flattened ``input`` at ``index``, as :func:`torch.take`.

    Negative indices count from the end. The gradient adds the incoming gradient back at the
    indices (repeated ones accumulate).

    Args:
        input (Tensor[*]): any dtype, read as 1-D.
        index (Tensor[*]): int64 (or int32) positions in ``[-input.size, input.size)``.

    Returns:
        Tensor: ``index``'s shape, ``input``'s dtype.

    Raises:
        TypeError: not Tensors, ``index`` not integer.
        ValueError: an index out of range.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import take
        >>> x = ms.Tensor([[4, 3, 5], [6, 7, 8]])
        >>> take(x, ms.Tensor([0, 2, -1], ms.int64)).asnumpy().tolist()
        [4, 5, 8]
    """
    x = check_tensor(input, "input")
    idx = check_index(index, "index", "take")
    if idx.size == 0:
        return ops.zeros(idx.shape, x.dtype)
    n = x.size
    idx = check_in_range(idx, -n, n, "take", "index", "input.numel()")
    flat = ops.where(idx < 0, idx + n, idx).reshape(-1)
    return call("indexing.take", x.reshape(-1), flat, 0).reshape(idx.shape)
