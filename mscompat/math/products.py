"""Matrix products with PyTorch's signatures: ``mm``, ``outer``, ``baddbmm``.

``mint.mm``, ``mint.outer``, ``mint.baddbmm`` fail on MindSpore 2.10 CPU ("kernel
unregistered"); these run ``mint`` on Ascend and ``mindspore.ops`` elsewhere. Shapes are
checked first, with errors naming the argument (MindSpore's kernels would fail later, or crash on
empty operands). ``baddbmm`` with ``beta=0`` ignores ``input`` (NaN included), as PyTorch.
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
from mindspore import Tensor, mint, ops

from mscompat._checks import check_number, check_tensor, is_float_dtype
from mscompat._mint import mint_or_composite
from mscompat.custom_ops.registry import call

__all__ = ["baddbmm", "mm", "outer"]


def _operands(fn: str, names: Any, tensors: Any, ranks: Any) -> None:
    first = tensors[0]
    for name, t, rank in zip(names, tensors, ranks):
        check_tensor(t, f"{fn}(): {name}")
        if rank is not None and t.ndim != rank:
            raise ValueError(f"{fn}(): {name} must be {rank}-D, but got shape {t.shape}")
        if t.dtype != first.dtype:
            raise TypeError(
                f"{fn}(): {name} must have {names[0]}'s dtype {first.dtype}, but got {t.dtype}"
            )


def _mm_mint(a: Tensor, b: Tensor) -> Tensor:
    return mint.mm(a, b)


@mint_or_composite("math.mm", _mm_mint, "ops.matmul")
def _mm_composite(a: Tensor, b: Tensor) -> Tensor:
    return ops.matmul(a, b)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """The matrix product of two 2-D tensors, as :func:`torch.mm` (no broadcasting).

    Args:
        input (Tensor[n, m]): float16/32/64 or an integer dtype.
        mat2 (Tensor[m, p]): same dtype.

    Returns:
        Tensor[n, p]: ``input``'s dtype (zeros when ``m == 0``).

    Raises:
        TypeError: a non-Tensor, different dtypes.
        ValueError: not 2-D, inner sizes that differ.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import mm
        >>> mm(ms.Tensor([[1.0, 2.0]]), ms.Tensor([[3.0], [4.0]])).asnumpy().tolist()
        [[11.0]]
    """
    _operands("mm", ("input", "mat2"), (input, mat2), (2, 2))
    if input.shape[1] != mat2.shape[0]:
        raise ValueError(
            f"mm(): input and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]}"
            f" and {mat2.shape[0]}x{mat2.shape[1]})"
        )
    if input.size == 0 or mat2.size == 0:  # no kernel sees an empty operand
        return ops.zeros((input.shape[0], mat2.shape[1]), input.dtype)
    return call("math.mm", input, mat2)


def _outer_mint(a: Tensor, b: Tensor) -> Tensor:
    return mint.outer(a, b)


@mint_or_composite("math.outer", _outer_mint, "a[:, None] * b[None, :]")
def _outer_composite(a: Tensor, b: Tensor) -> Tensor:
    return a.reshape((-1, 1)) * b.reshape((1, -1))


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """The outer product of two vectors, as :func:`torch.outer`.

    .. math::
        \\text{out}_{ij} = \\text{input}_i \\, \\text{vec2}_j

    Args:
        input (Tensor[n]): any numeric dtype.
        vec2 (Tensor[m]): same dtype.

    Returns:
        Tensor[n, m]: ``input``'s dtype.

    Raises:
        TypeError: a non-Tensor, different dtypes.
        ValueError: not 1-D.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import outer
        >>> outer(ms.Tensor([1, 2]), ms.Tensor([3, 4, 5])).asnumpy().tolist()
        [[3, 4, 5], [6, 8, 10]]
    """
    _operands("outer", ("input", "vec2"), (input, vec2), (1, 1))
    if input.size == 0 or vec2.size == 0:
        return ops.zeros((input.shape[0], vec2.shape[0]), input.dtype)
    return call("math.outer", input, vec2)


def _baddbmm_mint(x: Tensor, a: Tensor, b: Tensor, beta: Any, alpha: Any) -> Tensor:
    return mint.baddbmm(x, a, b, beta=beta, alpha=alpha)


@mint_or_composite(
    "math.baddbmm", _baddbmm_mint, "beta * input + alpha * ops.bmm (input dropped for beta=0)"
)
def _baddbmm_composite(x: Tensor, a: Tensor, b: Tensor, beta: Any, alpha: Any) -> Tensor:
    if x.dtype == ms.float16:  # PyTorch's float16 CPU baddbmm works in float32, rounds once
        wide = [t.astype(ms.float32) for t in (x, a, b)]
        return _baddbmm_composite(*wide, beta, alpha).astype(ms.float16)
    prod = ops.bmm(a, b)
    if alpha != 1:
        prod = prod * Tensor(alpha, prod.dtype)
    if beta == 0:  # PyTorch ignores input then: NaN or inf in it do not propagate
        return ops.broadcast_to(prod, prod.shape)
    base = x if beta == 1 else x * Tensor(beta, x.dtype)
    return base + prod


def baddbmm(
    input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1, alpha: Any = 1
) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)``, batch by batch, as :func:`torch.baddbmm`.

    Args:
        input (Tensor[*]): broadcastable to ``(b, n, p)``; ignored when ``beta == 0``.
        batch1 (Tensor[b, n, m]): same dtype as ``input``.
        batch2 (Tensor[b, m, p]): same dtype.
        beta (number): the scale of ``input`` (truncated toward 0 for integer inputs, as
            PyTorch casts it).
        alpha (number): the scale of the product (truncated likewise).

    Returns:
        Tensor[b, n, p]: ``input``'s dtype.

    Raises:
        TypeError: a non-Tensor, different dtypes, a non-number ``beta``/``alpha``.
        ValueError: batches not 3-D, mismatched batch or inner sizes, ``input`` not
            broadcastable to the result.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.math import baddbmm
        >>> a = ms.Tensor(np.ones((1, 2, 3), np.float32))
        >>> b = ms.Tensor(np.ones((1, 3, 2), np.float32))
        >>> baddbmm(ms.Tensor([1.0, 2.0]), a, b, alpha=2.0).asnumpy().tolist()
        [[[7.0, 8.0], [7.0, 8.0]]]
    """
    _operands("baddbmm", ("input", "batch1", "batch2"), (input, batch1, batch2), (None, 3, 3))
    for name, v in (("beta", beta), ("alpha", alpha)):
        check_number(v, f"baddbmm(): {name}")
    if not is_float_dtype(input.dtype):  # PyTorch casts the scalars to the integer dtype
        beta, alpha = int(beta), int(alpha)
    (b, n, m), (b2, m2, p) = batch1.shape, batch2.shape
    if b != b2 or m != m2:
        raise ValueError(
            f"baddbmm(): batch1 {batch1.shape} and batch2 {batch2.shape} must be (b, n, m) and "
            "(b, m, p)"
        )
    out = (b, n, p)
    if input.ndim > 3 or any(s not in (1, o) for s, o in zip(input.shape[::-1], out[::-1])):
        raise ValueError(f"baddbmm(): input of shape {input.shape} must broadcast to {out}")
    if b * n * p == 0:
        return ops.zeros(out, input.dtype)
    x = ops.broadcast_to(input, out)
    if m == 0:  # an empty product is zero; no kernel sees an empty operand
        return x * beta if beta != 0 else ops.zeros(out, input.dtype)
    return call("math.baddbmm", x, batch1, batch2, beta, alpha)
