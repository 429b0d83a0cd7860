"""``squeeze``, ``unsqueeze``, ``flatten``, ``unflatten`` and the ``Flatten``/``Unflatten``
Cells, with PyTorch's semantics, all through one ``Reshape`` (the migration guide's rule
"Squeeze/Flatten/ExpandDims -> Reshape").

Each function computes the output shape in Python (shapes are static, also under ``ms.jit``) and
calls ``ops.reshape`` once; invalid dims raise ``ValueError``/``TypeError`` naming the argument
before any kernel runs.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np
from mindspore import Tensor, nn, ops

from mscompat._checks import check_int, check_tensor, wrap_dim

__all__ = ["Flatten", "Unflatten", "flatten", "squeeze", "unflatten", "unsqueeze"]


def _reshape(x: Tensor, shape: Tuple[int, ...]) -> Tensor:
    return x if x.shape == shape else ops.reshape(x, shape)


def squeeze(input: Tensor, dim: Optional[Union[int, Sequence[int]]] = None) -> Tensor:
    """Remove dims of size 1, as :func:`torch.squeeze`.

    With ``dim=None`` every dim of size 1 is removed; with an int or a tuple of ints only those
    dims, and a listed dim whose size is not 1 is left alone (PyTorch does not raise).

    Args:
        input (Tensor[*]): any tensor.
        dim (int or tuple of int, optional): the dims to squeeze; negative counts from the end.

    Returns:
        Tensor: ``input`` reshaped without the squeezed dims (a view in PyTorch).

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import squeeze
        >>> x = ms.Tensor(np.zeros((2, 1, 3, 1), np.float32))
        >>> squeeze(x).shape, squeeze(x, 1).shape, squeeze(x, (0, -1)).shape
        ((2, 3), (2, 3, 1), (2, 1, 3))
    """
    x = check_tensor(input, "input")
    shape = x.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        listed = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
        n = max(x.ndim, 1)
        dims = tuple(wrap_dim(d, n, x.ndim, "dim") for d in listed)
        if len(set(dims)) != len(dims):
            raise ValueError(f"dim must not repeat a dim, but got {dim!r}")
    new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    return _reshape(x, new)


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    """Insert a dim of size 1 at position ``dim``, as :func:`torch.unsqueeze`.

    Args:
        input (Tensor[*]): any tensor with ``n`` dims.
        dim (int): position of the new dim in the output, in ``[-n - 1, n]``.

    Returns:
        Tensor: ``input`` reshaped with ``n + 1`` dims.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import unsqueeze
        >>> x = ms.Tensor(np.zeros((2, 3), np.float32))
        >>> unsqueeze(x, 0).shape, unsqueeze(x, -1).shape
        ((1, 2, 3), (2, 3, 1))
    """
    x = check_tensor(input, "input")
    d = wrap_dim(dim, x.ndim + 1, x.ndim, "dim")
    return _reshape(x, x.shape[:d] + (1,) + x.shape[d:])


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Flatten dims ``start_dim`` to ``end_dim`` (inclusive) into one, as :func:`torch.flatten`.

    A 0-d tensor becomes a 1-D tensor of one element.

    Args:
        input (Tensor[*]): any tensor.
        start_dim (int): the first dim to flatten.
        end_dim (int): the last dim to flatten (not before ``start_dim``).

    Returns:
        Tensor: ``input`` reshaped to ``shape[:start] + (prod(shape[start:end + 1]),) +
        shape[end + 1:]``.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import flatten
        >>> x = ms.Tensor(np.zeros((2, 3, 4, 5), np.float32))
        >>> flatten(x).shape, flatten(x, 1).shape, flatten(x, 1, 2).shape
        ((120,), (2, 60), (2, 12, 5))
    """
    x = check_tensor(input, "input")
    n = max(x.ndim, 1)
    start = wrap_dim(start_dim, n, x.ndim, "start_dim")
    end = wrap_dim(end_dim, n, x.ndim, "end_dim")
    if start > end:
        raise ValueError(
            f"start_dim cannot come after end_dim, but got start_dim={start_dim} and "
            f"end_dim={end_dim} for a {x.ndim}-D input"
        )
    if x.ndim == 0 and start == end:  # uses both: their checks must run in graph mode too
        return _reshape(x, (1,))
    shape = x.shape
    size = int(np.prod(shape[start : end + 1], dtype=np.int64))
    return _reshape(x, shape[:start] + (size,) + shape[end + 1 :])


def _check_sizes(sizes: Any, name: str) -> Tuple[int, ...]:
    if not isinstance(sizes, (tuple, list)):
        raise TypeError(
            f"{name} must be a tuple or list of ints, but got {type(sizes).__name__} ({sizes!r})"
        )
    if len(sizes) == 0:
        raise ValueError(f"{name} must be non-empty, but got {sizes!r}")
    out = tuple(check_int(s, name) for s in sizes)
    if sum(1 for s in out if s == -1) > 1:
        raise ValueError(f"{name} can contain at most one -1, but got {sizes!r}")
    bad = [s for s in out if s < -1]
    if bad:
        raise ValueError(f"{name} must contain sizes >= 0 (or one -1), but got {sizes!r}")
    return out


def _unflatten_shape(
    shape: Tuple[int, ...], dim: Any, sizes: Any, name: str = "sizes"
) -> Tuple[int, ...]:
    ndim = len(shape)
    if ndim == 0:
        raise ValueError("input must have at least one dim to unflatten, but got a 0-d tensor")
    d = wrap_dim(dim, ndim, ndim, "dim")
    wanted = _check_sizes(sizes, name)
    known = int(np.prod([s for s in wanted if s != -1], dtype=np.int64))
    if -1 in wanted:
        if known == 0 or shape[d] % known:
            raise ValueError(
                f"{name}={tuple(sizes)} cannot be inferred to unflatten input.shape[dim={dim}] = "
                f"{shape[d]}"
            )
        wanted = tuple(shape[d] // known if s == -1 else s for s in wanted)
    elif known != shape[d]:
        raise ValueError(
            f"{name}={tuple(sizes)} must multiply to input.shape[dim={dim}] = {shape[d]}, "
            f"but they multiply to {known}"
        )
    return shape[:d] + wanted + shape[d + 1 :]


def unflatten(input: Tensor, dim: int, sizes: Sequence[int]) -> Tensor:
    """Expand dim ``dim`` of ``input`` into the dims ``sizes``, as :func:`torch.unflatten`.

    Args:
        input (Tensor[*]): a tensor with at least one dim.
        dim (int): the dim to expand.
        sizes (tuple or list of int): the new dims; their product is ``input.shape[dim]``; one
            of them may be -1 (inferred).

    Returns:
        Tensor: ``input`` reshaped to ``shape[:dim] + sizes + shape[dim + 1:]``.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import unflatten
        >>> x = ms.Tensor(np.zeros((2, 12, 5), np.float32))
        >>> unflatten(x, 1, (3, 4)).shape, unflatten(x, -2, (2, -1, 3)).shape
        ((2, 3, 4, 5), (2, 2, 2, 3, 5))
    """
    x = check_tensor(input, "input")
    return _reshape(x, _unflatten_shape(x.shape, dim, sizes))


class Flatten(nn.Cell):
    """Flatten dims ``start_dim`` to ``end_dim`` into one, as :class:`torch.nn.Flatten`.

    See :func:`flatten` (note the Cell's default ``start_dim=1``: the batch dim is kept).

    Shape:
        - Input: ``(*, S_start, ..., S_end, *)``.
        - Output: ``(*, S_start * ... * S_end, *)``.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import Flatten
        >>> Flatten()(ms.Tensor(np.zeros((2, 3, 4), np.float32))).shape
        (2, 12)
    """

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = check_int(start_dim, "start_dim")
        self.end_dim = check_int(end_dim, "end_dim")

    def construct(self, input: Tensor) -> Tensor:
        return flatten(input, self.start_dim, self.end_dim)

    def extend_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(nn.Cell):
    """Expand dim ``dim`` into ``unflattened_size``, as :class:`torch.nn.Unflatten`.

    See :func:`unflatten`.

    Shape:
        - Input: ``(*, S_dim, *)``.
        - Output: ``(*, U_1, ..., U_n, *)`` with ``U_1 * ... * U_n = S_dim``.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import Unflatten
        >>> Unflatten(1, (2, 5))(ms.Tensor(np.zeros((3, 10), np.float32))).shape
        (3, 2, 5)
    """

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        self.dim = check_int(dim, "dim")
        self.unflattened_size = _check_sizes(unflattened_size, "unflattened_size")

    def construct(self, input: Tensor) -> Tensor:
        x = check_tensor(input, "input")
        return _reshape(
            x, _unflatten_shape(x.shape, self.dim, self.unflattened_size, "unflattened_size")
        )

    def extend_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
