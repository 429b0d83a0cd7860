"""Vector norms with PyTorch's signatures: ``linalg.vector_norm`` and ``norm``.

``mint.norm`` and ``mint.linalg.vector_norm`` fail on MindSpore 2.10 CPU ("The kernel
LinalgVectorNorm unregistered"); these run ``mint`` on Ascend and a composite elsewhere. As
PyTorch: float16 is computed in float32; the gradient of the 2-norm at a zero vector is zero (not
NaN); ``ord=0`` counts the nonzero values; ``ord=inf``/``-inf`` are the largest/smallest
absolute value (an empty input refused, as PyTorch); integer inputs are refused.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
from mindspore import Tensor, mint, ops

from mscompat._checks import check_bool, check_tensor, is_float_dtype, wrap_dim
from mscompat._mint import check_dtype, mint_or_composite
from mscompat.custom_ops.registry import call

__all__ = ["norm", "vector_norm"]

_INF = float("inf")


def _vector_norm_mint(x: Tensor, ord: float, axes: Tuple[int, ...], keepdim: bool) -> Tensor:
    return mint.linalg.vector_norm(x, ord, axes, keepdim)


@mint_or_composite(
    "math.vector_norm", _vector_norm_mint, "sum(abs(x)^p)^(1/p); max/min abs(x); count for p=0"
)
def _vector_norm_composite(x: Tensor, ord: float, axes: Tuple[int, ...], keepdim: bool) -> Tensor:
    wide = x.astype(ms.float32) if x.dtype == ms.float16 else x
    return _BY_ORD[_ord_kind(ord)](wide, ord, axes, keepdim).astype(x.dtype)


def _ord_kind(ord: float) -> str:
    if abs(ord) == _INF:
        return "max" if ord > 0 else "min"
    return {0.0: "count", 1.0: "sum", 2.0: "two"}.get(ord, "p")


# One small function per kind of ord, chosen in Python (under ms.jit, only the one that runs is
# traced).
def _max_abs(x: Tensor, ord: float, axes: Tuple[int, ...], keepdim: bool) -> Tensor:
    return ops.amax(ops.abs(x), axes, keepdim)


def _min_abs(x: Tensor, ord: float, axes: Tuple[int, ...], keepdim: bool) -> Tensor:
    return ops.amin(ops.abs(x), axes, keepdim)


def _count(x: Tensor, ord: float, axes: Tuple[int, ...], keepdim: bool) -> Tensor:
    return ops.sum((x != 0).astype(x.dtype), axes, keepdim)


def _sum_abs(x: Tensor, ord: float, axes: Tuple[int, ...], keepdim: bool) -> Tensor:
    return ops.sum(ops.abs(x), axes, keepdim)


def _two(x: Tensor, ord: float, axes: Tuple[int, ...], keepdim: bool) -> Tensor:
    s = ops.sum(x * x, axes, keepdim)
    # sqrt at 0 has an infinite derivative: PyTorch's gradient there is 0.
    pos = s > 0
    return ops.where(pos, ops.sqrt(ops.where(pos, s, ops.ones_like(s))), ops.zeros_like(s))


def _p(x: Tensor, ord: float, axes: Tuple[int, ...], keepdim: bool) -> Tensor:
    p = Tensor(ord, x.dtype)
    s = ops.sum(ops.pow(ops.abs(x), p), axes, keepdim)
    pos = s > 0
    root = ops.pow(ops.where(pos, s, ops.ones_like(s)), 1 / p)
    # A zero sum: 0 for p > 0, inf (0 ** (1/p)) for p < 0.
    return ops.where(pos, root, s * 0 if ord > 0 else s * 0 + _INF)


_BY_ORD = {"max": _max_abs, "min": _min_abs, "count": _count, "sum": _sum_abs, "two": _two, "p": _p}


def _axes(dim: Any, x: Tensor, fn: str) -> Tuple[int, ...]:
    if dim is None:
        return tuple(range(x.ndim))
    seq = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    axes = tuple(wrap_dim(d, max(x.ndim, 1), x.ndim, f"{fn}(): dim") for d in seq)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fn}(): dim {dim} appears more than once")
    return axes


def vector_norm(
    x: Tensor,
    ord: Any = 2,
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: Optional[Any] = None,
) -> Tensor:
    """The vector ``ord``-norm over ``dim``, as :func:`torch.linalg.vector_norm`.

    .. math::
        \\|x\\|_p = \\Big(\\sum_i |x_i|^p\\Big)^{1/p},\\quad
        \\|x\\|_\\infty = \\max_i |x_i|,\\quad \\|x\\|_0 = \\#\\{i : x_i \\ne 0\\}

    Args:
        x (Tensor[*]): float16/32/64 (float16 computed in float32).
        ord (number): ``p``: any real, ``inf``, ``-inf`` or ``0``.
        dim (int or tuple of ints, optional): the dims to reduce; None: all.
        keepdim (bool): keep the reduced dims with size 1.
        dtype (mindspore dtype, optional): cast ``x`` to it first (a float dtype).

    Returns:
        Tensor: ``x``'s shape without ``dim``, ``x``'s dtype (or ``dtype``).

    Raises:
        TypeError: ``x`` not a float Tensor, ``ord`` not a number, ``keepdim`` not a bool, a
            bad ``dtype``.
        ValueError: ``dim`` out of range or repeated; ``ord`` ``inf``/``-inf`` on an empty
            reduction.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import vector_norm
        >>> vector_norm(ms.Tensor([[3.0, 4.0], [0.0, 0.0]]), dim=1).asnumpy().tolist()
        [5.0, 0.0]
        >>> vector_norm(ms.Tensor([3.0, -4.0]), float("inf")).asnumpy().tolist()
        4.0
    """
    return _vector_norm(x, ord, dim, keepdim, dtype, "vector_norm")


def _vector_norm(x: Any, ord: Any, dim: Any, keepdim: Any, dtype: Any, fn: str) -> Tensor:
    x = check_tensor(x, f"{fn}(): input")
    dtype = check_dtype(dtype, f"{fn}(): dtype")
    if dtype is not None:
        x = x.astype(dtype)
    if not is_float_dtype(x.dtype):
        raise TypeError(
            f"{fn}(): input must be a floating-point Tensor (float16, float32, float64), "
            f"but got {x.dtype}; pass dtype=mindspore.float32"
        )
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"{fn}(): ord must be a number, but got ord={ord!r}")
    keepdim = check_bool(keepdim, f"{fn}(): keepdim")
    axes = _axes(dim, x, fn)
    if x.ndim == 0:  # as a 1-element vector (no kernel sees a 0-d tensor)
        return call("math.vector_norm", x.reshape((1,)), float(ord), (0,), False).reshape(())
    reduced = [x.shape[a] for a in axes] if axes else list(x.shape)
    if 0 in reduced and abs(float(ord)) == _INF:
        raise ValueError(
            f"{fn}(): ord={ord} cannot reduce an empty dim (input shape {x.shape}, dim={dim})"
        )
    shape = tuple(1 if i in axes else s for i, s in enumerate(x.shape))
    if not keepdim:
        shape = tuple(s for i, s in enumerate(x.shape) if i not in axes)
    if 0 in shape:
        return ops.zeros(shape, x.dtype)
    if x.size == 0:  # an empty sum: 0 (inf for a negative ord, as 0 ** (1/p))
        return ops.full(shape, 0.0 if ord >= 0 else _INF, dtype=x.dtype)
    return call("math.vector_norm", x, float(ord), axes, keepdim)


def norm(
    input: Tensor,
    p: Any = "fro",
    dim: Any = None,
    keepdim: bool = False,
    dtype: Optional[Any] = None,
) -> Tensor:
    """The norm of :func:`torch.norm`: a vector norm (``p`` a number, or ``'fro'``, the 2-norm
    over ``dim``).

    ``p='fro'`` over one or two dims (or all, ``dim=None``) is the square root of the sum of
    squares: :func:`vector_norm` with ``ord=2``. ``p='nuc'`` (a matrix norm through an SVD) is
    not supported: use ``mindspore.ops.norm``.

    Args:
        input (Tensor[*]): float16/32/64.
        p (number or 'fro'): the norm.
        dim (int or tuple of ints, optional): the dims to reduce; None: all.
        keepdim (bool): keep the reduced dims with size 1.
        dtype (mindspore dtype, optional): cast ``input`` to it first.

    Returns:
        Tensor: ``input``'s shape without ``dim``.

    Raises:
        TypeError: ``input`` not a float Tensor, a bad ``dtype``.
        ValueError: ``p`` not a number or ``'fro'``, ``'fro'`` over more than two dims.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import norm
        >>> norm(ms.Tensor([[3.0, 4.0], [6.0, 8.0]]), dim=1).asnumpy().tolist()
        [5.0, 10.0]
        >>> norm(ms.Tensor([[3.0, -4.0]]), p=1).asnumpy().tolist()
        7.0
    """
    if p == "fro":
        if dim is not None and isinstance(dim, (tuple, list)) and len(dim) > 2:
            raise ValueError(f"norm(): p='fro' takes at most two dims, but got dim={dim}")
        p = 2
    elif isinstance(p, (str, bool)) or not isinstance(p, (int, float)):
        raise ValueError(
            f"norm(): p must be a number or 'fro' ('nuc' is not supported), but got p={p!r}"
        )
    return _vector_norm(input, p, dim, keepdim, dtype, "norm")
