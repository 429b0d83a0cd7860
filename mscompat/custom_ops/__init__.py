"""Custom kernels and the dispatch layer that chooses between implementations.

See :mod:`mscompat.custom_ops.registry` for how a backend is chosen and forced.
"""

from mscompat.custom_ops.registry import (
    BACKENDS,
    ENV_VAR,
    BackendNotAvailableError,
    Choice,
    available,
    dispatch,
    implementations,
    register,
    registered_ops,
    use_backend,
    which,
)

__all__ = [
    "BACKENDS",
    "ENV_VAR",
    "BackendNotAvailableError",
    "Choice",
    "available",
    "dispatch",
    "implementations",
    "register",
    "registered_ops",
    "use_backend",
    "which",
]
