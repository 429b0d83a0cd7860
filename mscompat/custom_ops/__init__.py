"""Custom kernels and the dispatch layer that chooses between implementations.

See :mod:`mscompat.custom_ops.registry` for how a backend is chosen and forced.
"""

from mscompat.custom_ops.registry import (
    BACKENDS,
    ENV_VAR,
    BackendNotAvailableError,
    Choice,
    TensorSpec,
    available,
    call,
    dispatch,
    implementations,
    isolated,
    register,
    registered_ops,
    resolve,
    set_order,
    unsupported,
    use_backend,
    which,
)

# fmt: off
__all__ = [
    "BACKENDS", "ENV_VAR", "BackendNotAvailableError", "Choice", "TensorSpec", "available", "call",
    "dispatch", "implementations", "isolated", "register", "registered_ops", "resolve",
    "set_order", "unsupported", "use_backend", "which",
]
# fmt: on
