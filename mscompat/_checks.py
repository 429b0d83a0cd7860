"""Argument checks shared by every op.

Each check raises a ``TypeError``/``ValueError`` that names the argument and the value it got.
They only read Python values, shapes and dtypes, so they run before any kernel, and they compile
inside ``ms.jit`` (MindSpore evaluates them as constants and raises at compile time).

Tensor checks return the tensor they checked, and callers must use that returned value: in graph
mode, a check inside an ``if`` block whose result is unused is not ordered before the shape
inference of later ops, so MindSpore's own error would be raised instead of ours.
"""

from __future__ import annotations

from typing import Any, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor
from mindspore.ops import constexpr

__all__ = [
    "MAX_ELEMENTS",
    "REDUCTIONS",
    "check_bool",
    "check_finite_number",
    "check_int",
    "check_int64",
    "check_float_tensor",
    "check_number",
    "check_numel",
    "check_reduction",
    "check_same_shape",
    "check_tensor",
    "is_float_dtype",
    "is_int",
    "numel",
    "wrap_dim",
]

REDUCTIONS = ("none", "mean", "sum")

#: The most elements an output (or a table built to compute it) may have. A call asking for more
#: is refused before anything is allocated (a typo such as ``size=10**9`` would otherwise run
#: for half a minute and end in an empty ``MemoryError``).
MAX_ELEMENTS = 2**31

# Named constants: in graph mode ``2**63`` computed in the code overflows int64.
_INT64_MAX = 9223372036854775807
_INT64_MIN = -9223372036854775808


def is_float_dtype(dtype: Any) -> bool:
    """Whether ``dtype`` is one of the floating dtypes mscompat computes in."""
    return dtype in (ms.float16, ms.float32, ms.float64)


def check_tensor(x: Any, name: str) -> Tensor:
    """Return ``x``; raise ``TypeError`` unless it is a MindSpore Tensor."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{name} must be a mindspore.Tensor, but got {type(x).__name__}")
    return x


def check_float_tensor(x: Any, name: str) -> Tensor:
    """Return ``x``; raise ``TypeError`` unless it is a float16/float32/float64 Tensor."""
    x = check_tensor(x, name)
    if not is_float_dtype(x.dtype):
        raise TypeError(
            f"{name} must be a floating-point Tensor (float16, float32 or float64), "
            f"but got dtype {x.dtype}"
        )
    return x


def check_same_shape(a: Tensor, b: Tensor, name_a: str, name_b: str) -> Tensor:
    """Return ``b``; raise ``ValueError`` unless ``a`` and ``b`` have the same shape."""
    if a.shape != b.shape:
        raise ValueError(
            f"{name_b} must have the same shape as {name_a}, "
            f"but got {name_a}.shape={a.shape} and {name_b}.shape={b.shape}"
        )
    return b


def check_reduction(reduction: Any, name: str = "reduction") -> None:
    """Raise ``ValueError`` unless ``reduction`` is ``'none'``, ``'mean'`` or ``'sum'``."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"{name} must be one of 'none', 'mean', 'sum', but got {reduction!r}")


def is_int(value: Any) -> bool:
    """Whether ``value`` is a Python or NumPy integer (``bool`` is not)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def check_int(value: Any, name: str) -> int:
    """Return ``value`` as an int; raise ``TypeError`` unless it is an integer (not a bool)."""
    if not is_int(value):
        raise TypeError(f"{name} must be an int, but got {type(value).__name__} ({value!r})")
    return int(value)


def check_bool(value: Any, name: str) -> bool:
    """Return ``value``; raise ``TypeError`` unless it is a bool."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, but got {type(value).__name__} ({value!r})")
    return value


def wrap_dim(dim: Any, n: int, ndim: int, name: str = "dim") -> int:
    """``dim`` wrapped into ``[0, n)`` (``n`` valid positions of a ``ndim``-D input)."""
    dim = check_int(dim, name)
    if not -n <= dim < n:
        raise ValueError(
            f"{name} must be in the range [{-n}, {n - 1}] for a {ndim}-D input, but got {dim}"
        )
    return dim % n


def numel(shape: Any) -> int:
    """The number of elements of ``shape`` (a Python int: no overflow)."""
    n = 1
    for s in shape:
        n *= int(s)
    return n


@constexpr
def _numel_guard(
    shape: Tuple[int, ...], fn: str, what: str, names: Tuple[str, ...], values: Tuple[Any, ...]
) -> bool:
    """Raise the error of :func:`check_numel`. A compile-time constant: under ``ms.jit`` it
    raises while the graph is compiled, before any later op is inferred (a graph-mode raise
    would come after, and products of Python ints there are int64 graph scalars that
    overflow)."""
    n = numel(shape)
    if n > MAX_ELEMENTS:
        given = ", ".join(f"{k}={v!r}" for k, v in zip(names, values))
        raise ValueError(
            f"{fn}(): {given} gives {what} of shape {tuple(int(s) for s in shape)} ({n} "
            f"elements), more than the limit of 2**{MAX_ELEMENTS.bit_length() - 1} elements"
        )
    return True


def check_numel(shape: Any, fn: str, what: str = "the output", **args: Any) -> None:
    """Raise ``ValueError`` if ``shape`` has more than :data:`MAX_ELEMENTS` elements; the
    message names ``args`` (the arguments that set the size) with their values. ``shape`` may
    hold factors of a dim rather than the dim (``(N, C, kh, kw, L)``): only the product counts.
    """
    _numel_guard(tuple(shape), fn, what, tuple(args.keys()), tuple(args.values()))


def check_int64(value: Any, name: str, shown: Any = None, fn: str = "") -> Any:
    """Return ``value``; raise ``ValueError`` if it is an int outside int64 (PyTorch converts
    such arguments to C ``int64_t`` and fails with an ``OverflowError``). ``shown``: the whole
    argument, when ``value`` is one of its elements; ``fn``: the op, as a message prefix."""
    if is_int(value) and not _INT64_MIN <= int(value) <= _INT64_MAX:
        shown = value if shown is None else shown
        prefix = f"{fn}(): " if fn else ""
        raise ValueError(f"{prefix}{name} must fit in int64, but got {name}={shown!r}")
    return value


def check_number(value: Any, name: str) -> float:
    """Return ``value`` as a float; raise ``TypeError`` unless it is a real number (not a
    bool), ``ValueError`` for an int outside int64."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"{name} must be a number, but got {type(value).__name__} ({name}={value!r})"
        )
    return float(check_int64(value, name))


def check_finite_number(value: Any, name: str, shown: Any = None) -> float:
    """Return ``value`` as a float; ``TypeError`` unless a real number (not a bool),
    ``ValueError`` if it is NaN or infinite. ``shown`` is what the message shows as the value
    (default ``value``: pass the whole argument when ``value`` is one of its elements)."""
    shown = value if shown is None else shown
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, but got {name}={shown!r}")
    number = check_number(value, name)
    if not np.isfinite(number):
        raise ValueError(f"{name} must be finite, but got {name}={shown!r}")
    return number
