"""The one tolerance table: per dtype, for forward values and for gradients.

Forward tolerances start from PyTorch's ``torch.testing._internal.common_utils._DTYPE_PRECISIONS``
(the defaults of ``torch.testing.assert_close``). Gradients get a looser float16/float32 row:
MindSpore and PyTorch differentiate with different backward formulas, and in float16 each
backward op rounds to 2**-11 relative. An op that needs more states it in its ``OpInfo`` with a
reason (:class:`~mscompat.testing.ToleranceOverride`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Tuple

__all__ = ["TOLERANCES", "Tolerance", "default_tolerance"]


@dataclass(frozen=True)
class Tolerance:
    """``|actual - expected| <= atol + rtol * |expected|``, elementwise."""

    atol: float
    rtol: float


#: (dtype name, "forward" | "grad") -> Tolerance
TOLERANCES: Dict[Tuple[str, str], Tolerance] = {
    ("float16", "forward"): Tolerance(atol=1e-5, rtol=1e-3),
    ("float32", "forward"): Tolerance(atol=1e-5, rtol=1.3e-6),
    ("float64", "forward"): Tolerance(atol=1e-7, rtol=1e-7),
    ("float16", "grad"): Tolerance(atol=1e-3, rtol=1e-2),
    ("float32", "grad"): Tolerance(atol=1e-5, rtol=1e-5),
    ("float64", "grad"): Tolerance(atol=1e-7, rtol=1e-7),
}

_EXACT = Tolerance(atol=0.0, rtol=0.0)


def default_tolerance(dtype: str, kind: str = "forward") -> Tolerance:
    """The table's tolerance for ``dtype`` (a NumPy dtype name); integers and bools are exact."""
    if kind not in ("forward", "grad"):
        raise ValueError(f"kind must be 'forward' or 'grad', but got {kind!r}")
    return TOLERANCES.get((dtype, kind), _EXACT)
