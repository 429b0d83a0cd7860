"""Joining tensors along a new dim, as :func:`torch.stack`.

``mint.stack`` fails on MindSpore 2.10 CPU ("kernel unregistered"); this runs ``mint`` on Ascend
and ``ops.stack`` elsewhere, after PyTorch's checks (a non-empty sequence of Tensors of one shape
and dtype), answering empty tensors before any kernel.
"""

from __future__ import annotations

from typing import Any, Sequence

from mindspore import Tensor, mint, ops

from mscompat._checks import check_tensor, wrap_dim
from mscompat._mint import mint_or_composite
from mscompat.custom_ops.registry import call

__all__ = ["stack"]


def _stack_mint(tensors: Any, axis: int) -> Tensor:
    return mint.stack(tensors, axis)


@mint_or_composite("shape.stack", _stack_mint, "ops.stack")
def _stack_composite(tensors: Any, axis: int) -> Tensor:
    return ops.stack(tensors, axis)


def stack(tensors: Sequence[Tensor], dim: int = 0) -> Tensor:
    """Join tensors of one shape along a new dim ``dim``, as :func:`torch.stack`.

    Args:
        tensors (sequence of Tensor[*]): at least one; same shape and dtype.
        dim (int): where the new dim goes, in ``[-(ndim + 1), ndim]``.

    Returns:
        Tensor: ``(*shape[:dim], len(tensors), *shape[dim:])``.

    Raises:
        TypeError: ``tensors`` not a list or tuple of Tensors, different dtypes, ``dim`` not an
            int.
        ValueError: no tensors, different shapes, ``dim`` out of range.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import stack
        >>> stack([ms.Tensor([1, 2]), ms.Tensor([3, 4])], dim=1).asnumpy().tolist()
        [[1, 3], [2, 4]]
    """
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(
            f"stack(): tensors must be a list or tuple of Tensors, but got {type(tensors).__name__}"
        )
    if len(tensors) == 0:
        raise ValueError("stack(): tensors must be non-empty (stack expects a non-empty list)")
    first = check_tensor(tensors[0], "stack(): tensors[0]")
    for i, t in enumerate(tensors):
        check_tensor(t, f"stack(): tensors[{i}]")
        if t.shape != first.shape:
            raise ValueError(
                f"stack(): every tensor must have the same shape, but tensors[0] has "
                f"{first.shape} and tensors[{i}] has {t.shape}"
            )
        if t.dtype != first.dtype:
            raise TypeError(
                f"stack(): every tensor must have the same dtype, but tensors[0] is "
                f"{first.dtype} and tensors[{i}] is {t.dtype}"
            )
    axis = wrap_dim(dim, first.ndim + 1, first.ndim, "stack(): dim")
    shape = first.shape[:axis] + (len(tensors),) + first.shape[axis:]
    if first.size == 0:  # answered here: no kernel sees an empty tensor
        return ops.zeros(shape, first.dtype)
    return call("shape.stack", tuple(tensors), axis)
