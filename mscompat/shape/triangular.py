"""The triangles of matrices, as :func:`torch.tril` and :func:`torch.triu`.

``mint.tril`` fails on MindSpore 2.10 CPU ("kernel unregistered"); these run ``mint`` on Ascend
and a composite elsewhere: a constant mask of ``col - row <= diagonal`` (``>=`` for ``triu``)
broadcast over the batch dims, ``where`` in the input's dtype (bool included), gradient the same
mask.
"""

from __future__ import annotations

import numpy as np
from mindspore import Tensor, mint, ops
from mindspore.ops import constexpr

from mscompat._checks import check_int, check_tensor
from mscompat._mint import mint_or_composite
from mscompat.custom_ops.registry import call

__all__ = ["tril", "triu"]


@constexpr
def _keep(rows: int, cols: int, diagonal: int, upper: bool) -> Tensor:
    """The mask, a constant (``ops.arange`` would add a second to each graph's compile)."""
    offset = np.arange(cols)[None, :] - np.arange(rows)[:, None]
    return Tensor(offset >= diagonal if upper else offset <= diagonal)


def _triangle_mint(x: Tensor, diagonal: int, upper: bool) -> Tensor:
    return mint.triu(x, diagonal) if upper else mint.tril(x, diagonal)


@mint_or_composite(
    ("shape.tril", "shape.triu"), _triangle_mint, "where(col - row <= diagonal, x, 0)"
)
def _triangle_composite(x: Tensor, diagonal: int, upper: bool) -> Tensor:
    keep = _keep(x.shape[-2], x.shape[-1], diagonal, upper)
    return ops.where(keep, x, ops.zeros_like(x))


def _triangle(input: Tensor, diagonal: int, upper: bool) -> Tensor:
    fn = "triu" if upper else "tril"
    x = check_tensor(input, f"{fn}(): input")
    diagonal = check_int(diagonal, f"{fn}(): diagonal")
    if x.ndim < 2:
        raise ValueError(f"{fn}(): input must be at least 2-D, but got shape {x.shape}")
    if x.size == 0:  # answered here: no kernel sees an empty tensor
        return x
    return call(f"shape.{fn}", x, diagonal, upper)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dims (the rest zero), as :func:`torch.tril`.

    Element ``(i, j)`` is kept where ``j - i <= diagonal``.

    Args:
        input (Tensor[..., m, n]): any dtype.
        diagonal (int): 0 keeps the main diagonal; positive keeps more above it, negative
            removes some below.

    Returns:
        Tensor[..., m, n]: ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a Tensor, ``diagonal`` not an int.
        ValueError: ``input`` with fewer than 2 dims.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import tril
        >>> tril(ms.Tensor(np.ones((2, 3), np.int32))).asnumpy().tolist()
        [[1, 0, 0], [1, 1, 0]]
    """
    return _triangle(input, diagonal, False)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dims (the rest zero), as :func:`torch.triu`.

    Element ``(i, j)`` is kept where ``j - i >= diagonal``.

    Args:
        input (Tensor[..., m, n]): any dtype.
        diagonal (int): 0 keeps the main diagonal; positive removes some above it, negative
            keeps more below.

    Returns:
        Tensor[..., m, n]: ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a Tensor, ``diagonal`` not an int.
        ValueError: ``input`` with fewer than 2 dims.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import triu
        >>> triu(ms.Tensor(np.ones((2, 3), np.int32)), 1).asnumpy().tolist()
        [[0, 1, 1], [0, 0, 1]]
    """
    return _triangle(input, diagonal, True)
