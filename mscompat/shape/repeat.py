"""``repeat_interleave`` and ``unfold_dim`` (``Tensor.unfold``) with PyTorch's semantics.

On MindSpore 2.10 CPU ``mint.repeat_interleave`` has no kernel, ``ops.repeat_interleave`` with
Tensor repeats does not compile in graph mode ("Unsupported op [TensorToList]"), and
``Tensor.unfold(dim, size, step)`` is an im2col that takes 4-D inputs only. Both are a
``gather`` of computed positions here, so the gradient adds the incoming gradient back at them
(PyTorch's). Tensor repeats give a data-dependent length: ``output_size`` states it, which makes
the call static (graph mode needs it).
"""

from __future__ import annotations

from typing import Optional, Union

import mindspore as ms
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat._checks import check_int, check_tensor, wrap_dim
from mscompat.custom_ops.registry import call, register

__all__ = ["repeat_interleave", "unfold_dim"]

_INTS = (ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8)


@register(("shape.repeat_interleave", "shape.unfold_dim"), "composite", note="ops.gather")
def _gather(x: Tensor, positions: Tensor, axis: int) -> Tensor:
    return ops.gather(x, positions, axis)


@constexpr
def _size_message(output_size: int) -> str:
    return f"repeat_interleave(): output_size={output_size} is not the sum of repeats"


def _repeat_positions(rep: Tensor, n: int, output_size: Optional[int]) -> Tensor:
    """For each output place, the input place it copies (int64), from Tensor ``repeats``."""
    if rep.ndim > 1:
        raise ValueError(f"repeat_interleave(): repeats must be 0-d or 1-D, but got {rep.ndim}-D")
    rep = rep.reshape(-1).astype(ms.int64)
    if rep.shape[0] not in (1, n):
        raise ValueError(
            f"repeat_interleave(): repeats must have 1 or {n} elements (input's size along "
            f"dim), but got {rep.shape[0]}"
        )
    if rep.shape[0] == 1 and n != 1:
        rep = ops.broadcast_to(rep, (n,))
    if n > 0 and (rep < 0).any():
        raise ValueError("repeat_interleave(): repeats must be non-negative")
    if output_size is None:  # read from the data: PyNative only (graph mode needs it given)
        total = int(rep.sum().asnumpy()) if n else 0
    else:
        total = check_int(output_size, "output_size")
        if n and rep.sum() != total:
            raise ValueError(_size_message(total))
    if total == 0:
        return ops.zeros((0,), ms.int64)
    ends = ops.cumsum(rep, 0)
    return ops.searchsorted(ends, ops.arange(0, total, dtype=ms.int64), right=True)


def repeat_interleave(
    input: Tensor,
    repeats: Union[int, Tensor, None] = None,
    dim: Optional[int] = None,
    *,
    output_size: Optional[int] = None,
) -> Tensor:
    """Each element (slice along ``dim``) of ``input`` repeated, as
    :func:`torch.repeat_interleave`.

    ``repeat_interleave(x, 2)`` of ``[a, b]`` is ``[a, a, b, b]``; with Tensor ``repeats``
    place ``i`` is repeated ``repeats[i]`` times. ``repeat_interleave(repeats)`` alone is
    ``repeat_interleave(arange(len(repeats)), repeats)``. The gradient sums the incoming
    gradient over the copies.

    Args:
        input (Tensor[*]): any dtype (the repeats, when ``repeats`` is not given).
        repeats (int or Tensor[N] or Tensor[1]): non-negative counts, one per place along
            ``dim`` or one for all.
        dim (int, optional): the dim to repeat along; None: ``input`` flattened.
        output_size (int, optional): the output's size along ``dim`` (``repeats``' sum):
            saves reading ``repeats``, and is required with Tensor ``repeats`` in graph mode.

    Returns:
        Tensor: ``input``'s dtype; ``output_size`` places along ``dim`` (1-D if ``dim`` is
        None).

    Raises:
        TypeError: ``input`` not a Tensor, ``repeats`` neither an int nor an integer Tensor.
        ValueError: negative repeats, a ``repeats`` length other than 1 or ``N``, an
            ``output_size`` that is not the sum, ``dim`` out of range.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import repeat_interleave
        >>> x = ms.Tensor([[1, 2], [3, 4]])
        >>> repeat_interleave(x, 2).asnumpy().tolist()
        [1, 1, 2, 2, 3, 3, 4, 4]
        >>> repeat_interleave(x, ms.Tensor([1, 2]), 0, output_size=3).asnumpy().tolist()
        [[1, 2], [3, 4], [3, 4]]
    """
    x = check_tensor(input, "input")
    if repeats is None:
        if x.dtype not in _INTS or x.ndim > 1:
            raise TypeError("repeat_interleave(repeats): repeats must be a 0-d or 1-D int Tensor")
        places = ops.arange(0, max(x.size, 1), dtype=ms.int64)
        return repeat_interleave(places, x, 0, output_size=output_size)
    if dim is None:
        x, axis = x.reshape(-1), 0
    else:
        axis = wrap_dim(dim, max(x.ndim, 1), x.ndim)
        x = x.reshape(1) if x.ndim == 0 else x
    n = x.shape[axis]
    if isinstance(repeats, Tensor):
        if repeats.dtype not in _INTS:
            raise TypeError(f"repeats must be an integer Tensor, but got dtype {repeats.dtype}")
        positions = _repeat_positions(repeats, n, output_size)
    else:
        r = check_int(repeats, "repeats")
        if r < 0:
            raise ValueError(f"repeat_interleave(): repeats must be non-negative, but got {r}")
        if output_size is not None and check_int(output_size, "output_size") != n * r:
            raise ValueError(_size_message(output_size))
        positions = ops.arange(0, n * r, dtype=ms.int64) // max(r, 1)
    shape = list(x.shape)
    shape[axis] = positions.shape[0]
    if x.size == 0 or positions.shape[0] == 0:
        return ops.zeros(tuple(shape), x.dtype)
    return call("shape.repeat_interleave", x, positions, axis)


def unfold_dim(input: Tensor, dim: int, size: int, step: int) -> Tensor:
    """Every window of ``size`` places along ``dim``, ``step`` apart, as ``Tensor.unfold``.

    The windows start at ``0, step, 2 step, ...`` while they fit: there are
    :math:`L = \\lfloor (n - \\text{size}) / \\text{step} \\rfloor + 1`. ``dim`` becomes ``L``
    and a last dim of ``size`` is added (PyTorch's view, as a copy). The gradient adds the
    incoming gradient back where windows overlap.

    Args:
        input (Tensor[*]): any dtype; 0-d is read as one place.
        dim (int): the dim to slide along.
        size (int): the window length, ``0 <= size <= input.shape[dim]``.
        step (int): the stride between windows, ``> 0``.

    Returns:
        Tensor: ``input``'s dtype, shape ``input.shape`` with ``L`` at ``dim``, then ``size``.

    Raises:
        TypeError: ``input`` not a Tensor, ``dim``/``size``/``step`` not ints.
        ValueError: ``size`` larger than ``input.shape[dim]`` or negative, ``step <= 0``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import unfold_dim
        >>> x = ms.Tensor([1, 2, 3, 4, 5, 6, 7])
        >>> unfold_dim(x, 0, 3, 2).asnumpy().tolist()
        [[1, 2, 3], [3, 4, 5], [5, 6, 7]]
    """
    x = check_tensor(input, "input")
    axis = wrap_dim(dim, max(x.ndim, 1), x.ndim)
    size = check_int(size, "size")
    step = check_int(step, "step")
    n = x.shape[axis] if x.ndim else 1
    if not 0 <= size <= n:
        raise ValueError(
            f"unfold_dim(): size must be in [0, {n}] (input.shape[{axis}]), but got {size}"
        )
    if step <= 0:
        raise ValueError(f"unfold_dim(): step must be > 0, but got {step}")
    if x.ndim == 0:
        return x.reshape(1)[:size]
    count = (n - size) // step + 1
    shape = (*x.shape[:axis], count, *x.shape[axis + 1 :], size)
    if x.size == 0 or size == 0:
        return ops.zeros(shape, x.dtype)
    starts = ops.arange(0, count, dtype=ms.int64).reshape(count, 1) * step
    positions = (starts + ops.arange(0, size, dtype=ms.int64)).reshape(-1)
    out = call("shape.unfold_dim", x, positions, axis)
    out = out.reshape((*x.shape[:axis], count, size, *x.shape[axis + 1 :]))
    return ops.moveaxis(out, axis + 1, -1)
