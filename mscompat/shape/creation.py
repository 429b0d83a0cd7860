"""Tensor creation with PyTorch's dtype rules: ``zeros_like``, ``ones_like``, ``full_like``,
``clone``, ``arange``, ``linspace``.

``mint.zeros_like``, ``mint.arange``... fail on MindSpore 2.10 CPU ("kernel unregistered");
these run ``mint`` on Ascend and ``mindspore.ops`` elsewhere. PyTorch's rules kept here:
``arange`` is int64 unless one of ``start``/``end``/``step`` is a float (then float32), its
length is ``ceil((end - start) / step)`` computed in float64, and its values ``start + i * step``
in float64 rounded once to the dtype; ``linspace`` is float32 by default and fills the first
half from ``start`` and the second half from ``end`` (so both ends are exact). A ``dtype``
argument takes a MindSpore dtype (``mindspore.int64`` where PyTorch has ``torch.int64``).
"""

from __future__ import annotations

import math
from typing import Any, Optional

import mindspore as ms
import numpy as np
from mindspore import Tensor, mint, ops
from mindspore.ops import constexpr

from mscompat._checks import check_int, check_numel, check_tensor
from mscompat._mint import check_dtype, mint_or_composite
from mscompat.custom_ops.registry import call

__all__ = ["arange", "clone", "full_like", "linspace", "ones_like", "zeros_like"]

_FLOATS = (ms.float16, ms.float32, ms.float64)
_NUMPY = {
    ms.float16: np.float16, ms.float32: np.float32, ms.float64: np.float64, ms.int8: np.int8,
    ms.int16: np.int16, ms.int32: np.int32, ms.int64: np.int64, ms.uint8: np.uint8,
    ms.bool_: np.bool_,
}  # fmt: skip
#: ``arange``'s ``end`` when not given (an explicit ``None`` is an error, as PyTorch's); a string,
#: which ``ms.jit`` compares as a constant.
_NO_END = "(end not given)"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _number(value: Any, fn: str, name: str) -> Any:
    if isinstance(value, Tensor):  # its repr is not a graph-mode constant: the type only
        raise TypeError(f"{fn}(): {name} must be a Python number, but got a Tensor")
    if not _is_number(value):
        raise TypeError(f"{fn}(): {name} must be a number, but got {name}={value!r}")
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{fn}(): {name} must be finite, but got {name}={value!r}")
    return value


# ----------------------------------------------------------------------------- *_like, clone


def _full_mint(shape: Any, value: Any, dtype: Any) -> Tensor:
    return mint.full(shape, value, dtype=dtype)


@mint_or_composite("shape.full_like", _full_mint, "ops.full (ops.zeros for an empty shape)")
def _full_composite(shape: Any, value: Any, dtype: Any) -> Tensor:
    if 0 in shape:  # answered here: no kernel sees an empty shape
        return ops.zeros(shape, dtype)
    return ops.full(shape, value, dtype=dtype)


def _like(input: Any, value: Any, dtype: Any, fn: str) -> Tensor:
    x = check_tensor(input, f"{fn}(): input")
    dtype = check_dtype(dtype, f"{fn}(): dtype")
    return call("shape.full_like", tuple(x.shape), value, x.dtype if dtype is None else dtype)


def zeros_like(input: Tensor, *, dtype: Optional[Any] = None) -> Tensor:
    """Zeros of ``input``'s shape, as :func:`torch.zeros_like`.

    Args:
        input (Tensor[*]): any dtype; only its shape (and dtype) are used.
        dtype (mindspore dtype, optional): the output dtype (default ``input``'s).

    Returns:
        Tensor: ``input``'s shape, ``dtype`` or ``input``'s dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import zeros_like
        >>> zeros_like(ms.Tensor([[1, 2, 3]]), dtype=ms.float32).asnumpy().tolist()
        [[0.0, 0.0, 0.0]]
    """
    return _like(input, 0, dtype, "zeros_like")


def ones_like(input: Tensor, *, dtype: Optional[Any] = None) -> Tensor:
    """Ones of ``input``'s shape, as :func:`torch.ones_like`.

    Args:
        input (Tensor[*]): any dtype; only its shape (and dtype) are used.
        dtype (mindspore dtype, optional): the output dtype (default ``input``'s).

    Returns:
        Tensor: ``input``'s shape, ``dtype`` or ``input``'s dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import ones_like
        >>> ones_like(ms.Tensor([1.5, 2.5])).asnumpy().tolist()
        [1.0, 1.0]
    """
    return _like(input, 1, dtype, "ones_like")


def full_like(input: Tensor, fill_value: Any, *, dtype: Optional[Any] = None) -> Tensor:
    """``fill_value`` everywhere in ``input``'s shape, as :func:`torch.full_like`.

    Args:
        input (Tensor[*]): any dtype; only its shape (and dtype) are used.
        fill_value (number or bool): converted to the output dtype (``2.7`` -> ``2`` for an
            integer output, as PyTorch).
        dtype (mindspore dtype, optional): the output dtype (default ``input``'s).

    Returns:
        Tensor: ``input``'s shape, ``dtype`` or ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a Tensor, ``fill_value`` not a number, a bad ``dtype``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import full_like
        >>> full_like(ms.Tensor([1, 2]), 2.7).asnumpy().tolist()
        [2, 2]
    """
    if not (_is_number(fill_value) or isinstance(fill_value, bool)):
        raise TypeError(f"full_like(): fill_value must be a number, but got {fill_value!r}")
    if isinstance(fill_value, np.generic):
        fill_value = fill_value.item()
    return _like(input, fill_value, dtype, "full_like")


def _clone_mint(x: Tensor) -> Tensor:
    return mint.clone(x)


@mint_or_composite("shape.clone", _clone_mint, "ops.deepcopy (an Identity kernel)")
def _clone_composite(x: Tensor) -> Tensor:
    return ops.deepcopy(x)


def clone(input: Tensor) -> Tensor:
    """A copy of ``input`` (same shape, dtype and values; gradient the identity), as
    :func:`torch.clone`.

    Args:
        input (Tensor[*]): any dtype.

    Returns:
        Tensor: a new Tensor equal to ``input``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import clone
        >>> clone(ms.Tensor([[1.0, 2.0]])).asnumpy().tolist()
        [[1.0, 2.0]]
    """
    x = check_tensor(input, "clone(): input")
    if x.size == 0:  # answered here: no kernel sees an empty or 0-d tensor
        return x.reshape(x.shape)
    if x.ndim == 0:
        return call("shape.clone", x.reshape((1,))).reshape(())
    return call("shape.clone", x)


# ----------------------------------------------------------------------------- arange


def _arange_mint(start: Any, step: Any, n: int, dtype: Any) -> Tensor:
    # An end half a step past the last value: the length is n whatever the rounding of the sum.
    end = start + step * n if isinstance(step, int) else start + step * (n - 0.5)
    return mint.arange(start, end, step, dtype=dtype)


@constexpr
def _arange_values(start: Any, step: Any, n: int, dtype: Any) -> Tensor:
    """``start + i * step`` in float64 (int64 for an integer dtype), as a constant: the values
    depend on the arguments only (``ops.arange`` would add a second to each graph's compile)."""
    if dtype in _FLOATS:
        wide: np.ndarray = np.arange(n, dtype=np.float64) * np.float64(step) + np.float64(start)
    else:
        wide = np.arange(n, dtype=np.int64) * np.int64(step) + np.int64(start)
    return Tensor(wide.astype(_NUMPY[dtype]))


@mint_or_composite(
    "shape.arange", _arange_mint, "start + i * step in float64 or int64 (NumPy, a constant)"
)
def _arange_composite(start: Any, step: Any, n: int, dtype: Any) -> Tensor:
    if n == 0:
        return ops.zeros((0,), dtype)
    return _arange_values(start, step, n, dtype)


def _trunc_div(a: int, b: int) -> int:
    """C's integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def arange(
    start: Any = 0, end: Any = _NO_END, step: Any = 1, *, dtype: Optional[Any] = None
) -> Tensor:
    """``start, start + step, ...`` up to ``end`` (excluded), as :func:`torch.arange`.

    ``arange(end)`` counts from 0. The dtype is int64 unless one of ``start``, ``end``,
    ``step`` is a float (then float32), or ``dtype``. With a float dtype the length is
    :math:`\\lceil (end - start) / step \\rceil` computed in float64 and the values
    ``start + i * step`` in float64, rounded once to the dtype; with an integer dtype the
    arguments are truncated to integers first (``arange(0, 2.5, dtype=int64)`` is ``[0, 1]``),
    as PyTorch.

    Args:
        start (number): first value (the end, when ``end`` is omitted).
        end (number, optional): the bound, excluded.
        step (number): nonzero; its sign must match ``end - start``.
        dtype (mindspore dtype, optional): the output dtype.

    Returns:
        Tensor[n]: int64 or float32 by the rule above, or ``dtype``.

    Raises:
        TypeError: a non-number bound or step, a bad ``dtype``.
        ValueError: ``step`` zero, a non-finite bound, a step whose sign leads away from
            ``end``, more than 2**31 elements.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import arange
        >>> arange(5).asnumpy().tolist(), arange(5).dtype == ms.int64
        ([0, 1, 2, 3, 4], True)
        >>> arange(1, 2.5, 0.5).asnumpy().tolist(), arange(1, 2.5, 0.5).dtype == ms.float32
        ([1.0, 1.5, 2.0], True)
    """
    if isinstance(end, str) and end == _NO_END:
        start, end = 0, start
    start = _number(start, "arange", "start")
    end = _number(end, "arange", "end")
    step = _number(step, "arange", "step")
    dtype = check_dtype(dtype, "arange(): dtype")
    if dtype is None:
        floats = any(isinstance(v, float) for v in (start, end, step))
        dtype = ms.float32 if floats else ms.int64
    if dtype in _FLOATS:
        if step == 0:
            raise ValueError("arange(): step must be nonzero, but got step=0")
        n = math.ceil((float(end) - float(start)) / float(step))
    else:
        start, end, step = int(start), int(end), int(step)
        if step == 0:
            raise ValueError(f"arange(): step must be nonzero, but got step={step} (truncated)")
        sign = 1 if step > 0 else -1
        n = _trunc_div(end - start + step - sign, step)
    if n < 0:
        raise ValueError(
            f"arange(): upper bound and larger bound inconsistent with step sign: "
            f"start={start}, end={end}, step={step}"
        )
    check_numel((n,), "arange", start=start, end=end, step=step)
    return call("shape.arange", start, step, n, dtype)


# ----------------------------------------------------------------------------- linspace


def _linspace_mint(start: Any, end: Any, steps: int, dtype: Any) -> Tensor:
    return mint.linspace(start, end, steps, dtype=dtype)


@constexpr
def _linspace_values(start: Any, end: Any, steps: int, dtype: Any) -> Tensor:
    """PyTorch's CPU formula in NumPy, as a constant (NumPy's float16 arithmetic rounds each
    operation to float16, as ``c10::Half``)."""
    if steps == 1:  # PyTorch fills start (the formula would give end - inf * 0)
        return Tensor(np.array([start], np.float64).astype(_NUMPY[dtype]))
    # In the dtype itself; for an integer dtype from the truncated bounds in float64, each
    # value truncated.
    work: Any = _NUMPY[dtype] if dtype in _FLOATS else np.float64
    if dtype not in _FLOATS:
        start, end = int(start), int(end)
    lo, hi = work(start), work(end)
    step = (hi - lo) / work(steps - 1)
    i = np.arange(steps)
    head = lo + step * i.astype(work)
    tail = hi - step * (steps - 1 - i).astype(work)
    out = np.where(i < steps // 2, head, tail)
    return Tensor(out.astype(_NUMPY[dtype]))


@mint_or_composite(
    "shape.linspace",
    _linspace_mint,
    "start + i * step (first half), end - (steps - 1 - i) * step (NumPy, a constant)",
)
def _linspace_composite(start: Any, end: Any, steps: int, dtype: Any) -> Tensor:
    if steps == 0:
        return ops.zeros((0,), dtype)
    return _linspace_values(start, end, steps, dtype)


def linspace(start: Any, end: Any, steps: int, *, dtype: Optional[Any] = None) -> Tensor:
    """``steps`` evenly spaced values from ``start`` to ``end`` (both included), as
    :func:`torch.linspace`.

    .. math::
        \\text{out}_i = \\begin{cases} start + i\\,\\delta & i < steps / 2 \\\\
        end - (steps - 1 - i)\\,\\delta & \\text{otherwise} \\end{cases},\\quad
        \\delta = \\frac{end - start}{steps - 1}

    computed in the output dtype (float64 for an integer dtype, then truncated), as PyTorch's
    CPU kernel.

    Args:
        start (number): first value.
        end (number): last value.
        steps (int): the number of values, ``>= 0``.
        dtype (mindspore dtype, optional): default float32 (PyTorch's default dtype).

    Returns:
        Tensor[steps]: ``dtype``.

    Raises:
        TypeError: a non-number bound, ``steps`` not an int, a bad ``dtype``.
        ValueError: ``steps`` negative, a non-finite bound.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import linspace
        >>> linspace(0, 1, 5).asnumpy().tolist()
        [0.0, 0.25, 0.5, 0.75, 1.0]
        >>> linspace(0, 10, 4, dtype=ms.int64).asnumpy().tolist()
        [0, 3, 6, 10]
    """
    start = _number(start, "linspace", "start")
    end = _number(end, "linspace", "end")
    steps = check_int(steps, "linspace(): steps")
    if steps < 0:
        raise ValueError(f"linspace(): number of steps must be non-negative, but got steps={steps}")
    dtype = check_dtype(dtype, "linspace(): dtype")
    dtype = ms.float32 if dtype is None else dtype
    check_numel((steps,), "linspace", steps=steps)
    return call("shape.linspace", start, end, steps, dtype)
