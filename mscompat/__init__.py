"""mscompat: PyTorch-compatible ops for MindSpore ports, proven against PyTorch."""

from __future__ import annotations

import warnings

import numpy as _np

__version__ = "0.1.0"

__all__ = ["__version__"]

if int(_np.__version__.split(".")[0]) >= 2:  # pragma: no cover - guarded by the numpy<2 pin
    warnings.warn(
        f"mscompat: numpy {_np.__version__} is installed, but MindSpore 2.10 is built against "
        "NumPy 1.x and its first Tensor arithmetic in a process raises SystemError. "
        "Install 'numpy<2'.",
        RuntimeWarning,
        stacklevel=2,
    )
