"""Argument checks shared by every op.

Each check raises a ``TypeError``/``ValueError`` that names the argument and the value it got.
They only read Python values, shapes and dtypes, so they run before any kernel, and they compile
inside ``ms.jit`` (MindSpore evaluates them as constants and raises at compile time).

Tensor checks return the tensor they checked, and callers must use that returned value: in graph
mode, a check inside an ``if`` block whose result is unused is not ordered before the shape
inference of later ops, so MindSpore's own error would be raised instead of ours.
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor

__all__ = [
    "REDUCTIONS",
    "check_bool",
    "check_int",
    "check_float_tensor",
    "check_reduction",
    "check_same_shape",
    "check_tensor",
    "is_float_dtype",
    "is_int",
    "wrap_dim",
]

REDUCTIONS = ("none", "mean", "sum")


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
