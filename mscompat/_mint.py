"""Registering a ``torch.*`` function's two backends in one place: ``mint`` where its kernels
exist, a composite of ``mindspore.ops`` everywhere.

``mindspore.mint`` is Ascend-first: on MindSpore 2.10 CPU ``mint.arange``, ``mint.stack``,
``mint.argmax``... exist but fail with "kernel unregistered" (measured:
``shared/reference/mindspore-2.10-cpu-api-gap.md``). The families of ``torch.*`` functions
(``mscompat/math/reductions.py``, ``mscompat/shape/creation.py``...) register the ``mint``
call as the ``native`` backend on Ascend and their composite on every device, so
``which("math.argmax", x)`` names the one that runs. (A top-level module, so that
:mod:`mscompat.shape` and :mod:`mscompat.math` can both import it without importing each other.)
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from mindspore.common import dtype as mstype

from mscompat.custom_ops.registry import OpNames, register

__all__ = ["check_dtype", "mint_or_composite"]

#: Where ``mint``'s kernels are registered (the measured gap is CPU; GPU is not measured, so it
#: gets the composite, which runs everywhere).
MINT_DEVICES: Sequence[str] = ("Ascend",)


def mint_or_composite(
    op: OpNames, native: Callable[..., Any], note: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: ``fn`` becomes ``op``'s ``composite`` backend (every device, described by
    ``note``) and ``native`` (the same arguments, a ``mint`` call; a ``def``, which ``ms.jit``
    parses, not a lambda) its ``native`` backend on Ascend."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        register(op, "composite", note=note)(fn)
        register(op, "native", devices=MINT_DEVICES, note="mint (Ascend kernels)")(native)
        return fn

    return deco


def check_dtype(dtype: Any, name: str) -> Any:
    """Return ``dtype``; raise ``TypeError`` unless it is None or a MindSpore dtype
    (``mindspore.float32``: the port of ``torch.float32``)."""
    if dtype is not None and not isinstance(dtype, mstype.Type):
        raise TypeError(
            f"{name} must be a mindspore dtype such as mindspore.float32 (the port of "
            f"torch.float32) or None, but got {dtype!r}"
        )
    return dtype
