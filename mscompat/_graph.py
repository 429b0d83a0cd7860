"""Whether code runs in a compiled graph or eagerly, for the few places that must differ."""

from __future__ import annotations

from typing import Any

from mindspore.ops import constexpr

__all__ = ["compiling"]


def _marker() -> int:
    return 0


@constexpr(check=False)
def _is_none(fn: Any) -> bool:
    return fn is None


def compiling() -> bool:
    """Whether this runs in a graph (``ms.jit``, a Cell in graph mode, a graph built for a
    gradient), not PyNative: a constant of the graph. A graph hands a Python function to a
    ``constexpr`` as None (MindSpore's own ``_run_in_jit`` tests the same, but cannot be called
    from a graph); PyNative hands it the function."""
    return _is_none(_marker)
