"""Which mscompat mirror holds a PyTorch-side name.

The mirrors (:mod:`mscompat.nn`, :mod:`mscompat.nn.functional`, :mod:`mscompat.tensor`,
:mod:`mscompat.vision`) re-export the domain packages' ops under PyTorch's names. Which name
goes where is decided by the op database: each entry's ``torch_apis`` (``"torch.sort"``,
``"torch.nn.functional.interpolate"``, ``"torch.nn.Upsample"``...) names the PyTorch namespace
it is a drop-in for, and :data:`MIRRORS` names the mirror of that namespace.
``tools/generate.py`` writes the mirrors' imports and ``__all__`` from the op database with
these rules (:func:`mirror_exports`), and ``mscompat scan`` (through the drop-in table the same
tool writes) names the mirror import with :func:`mirror_import_line`.
"""

from __future__ import annotations

import importlib
from typing import Any, Dict, Iterable, Optional, Tuple

__all__ = [
    "DOMAIN_PACKAGES",
    "MIRRORS",
    "NOT_MIRRORED",
    "REQUIRED",
    "mirror_exports",
    "mirror_import_line",
    "mirror_of",
]

#: The packages that implement ops, one module per op family (``mscompat.shape.fold``...). Each
#: one's ``__init__`` re-exports its public family modules' ``__all__``, and the mirrors
#: re-export from the family modules. :mod:`mscompat.vision` is both a domain package and the
#: mirror of ``torchvision.ops``: its family modules use torchvision's names, so its ``__init__``
#: is written as a domain package's and checked to hold every ``torchvision.ops`` name.
DOMAIN_PACKAGES = (
    "mscompat.indexing",
    "mscompat.layers",
    "mscompat.losses",
    "mscompat.math",
    "mscompat.shape",
    "mscompat.vision",
)

#: PyTorch-side namespace -> the mscompat module that mirrors it. ``torch.Tensor`` methods are
#: looked up in :mod:`mscompat.tensor` (``x.sort()`` becomes ``sort(x)``), but an entry is not
#: required there for every method: only the ``torch.X`` functions must be mirrored.
MIRRORS: Dict[str, str] = {
    "torch": "mscompat.tensor",
    "torch.Tensor": "mscompat.tensor",
    "torch.nn": "mscompat.nn",
    "torch.nn.functional": "mscompat.nn.functional",
    "torchvision.ops": "mscompat.vision",
}

#: Namespaces whose every op database name must be in its mirror.
REQUIRED = ("torch", "torch.nn", "torch.nn.functional", "torchvision.ops")

#: Names an op database entry is a drop-in for that the mirror does not re-export, with why.
#: A mirror holds a name only where the same call gives the same result.
NOT_MIRRORED: Dict[str, str] = {
    f"torch.nn.functional.max_pool{d}d_with_indices": (
        f"PyTorch's always returns (values, indices); the drop-in is "
        f"max_pool{d}d(..., return_indices=True)"
    )
    for d in (1, 2, 3)
}


def mirror_of(api: str) -> Optional[Tuple[str, str]]:
    """``(mirror module, name)`` for a fully qualified PyTorch name, or None.

    Example:
        >>> mirror_of("torch.nn.functional.interpolate")
        ('mscompat.nn.functional', 'interpolate')
        >>> mirror_of("torch.Tensor.sort")
        ('mscompat.tensor', 'sort')
        >>> mirror_of("mmdet.models.losses.FocalLoss") is None
        True
    """
    namespace, _, name = api.rpartition(".")
    module = MIRRORS.get(namespace)
    if module is None or api in NOT_MIRRORED:
        return None
    return module, name


def mirror_exports(op_db: Iterable[Any]) -> Dict[str, Dict[str, Tuple[Any, str]]]:
    """``{mirror module: {name: (op, op database entry name)}}``: what each mirror must export.

    Every name of a :data:`REQUIRED` namespace in an entry's ``torch_apis`` is exported by that
    namespace's mirror (:data:`MIRRORS`), unless it is in :data:`NOT_MIRRORED`.

    Raises:
        ValueError: two entries are drop-ins for the same name with different objects.
    """
    out: Dict[str, Dict[str, Tuple[Any, str]]] = {m: {} for m in sorted(set(MIRRORS.values()))}
    for info in op_db:
        for api in info.torch_apis:
            found = mirror_of(api)
            if api.rpartition(".")[0] not in REQUIRED or found is None:
                continue
            module, name = found
            previous = out[module].setdefault(name, (info.op, info.name))
            if previous[0] is not info.op:
                raise ValueError(
                    f"{api}: op database entries {previous[1]} and {info.name} are different "
                    f"objects for the same name {module}.{name}"
                )
    return out


def mirror_import_line(api: str, op: Any) -> Optional[str]:
    """``from <mirror> import <name>`` for ``op`` as a drop-in for ``api``, or None.

    The mirror of ``api``'s namespace must export ``op`` itself: under ``api``'s own name, or,
    for a name in :data:`NOT_MIRRORED`, under the name it has there (``max_pool2d`` for
    ``max_pool2d_with_indices``).
    """
    namespace, _, name = api.rpartition(".")
    module_name = MIRRORS.get(namespace)
    if module_name is None:
        return None
    module = importlib.import_module(module_name)
    exported = getattr(module, "__all__", ())
    if api not in NOT_MIRRORED and name in exported and getattr(module, name) is op:
        return f"from {module_name} import {name}"
    for other in exported:
        if getattr(module, other) is op:
            return f"from {module_name} import {other}"
    return None
