"""The op database: every entry of every op family, in one list.

Each module in this package defines ``OPS: List[OpInfo]``; they are collected here in module
name order, so adding a family is adding a module.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import List

from mscompat.testing.opinfo import OpInfo

__all__ = ["OP_DB", "get_op"]


def _collect() -> List[OpInfo]:
    from mscompat.custom_ops.registry import implementations

    entries: List[OpInfo] = []
    for mod in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = importlib.import_module(f"{__name__}.{mod.name}")
        for info in getattr(module, "OPS", []):
            entries.append(info)
            # One variant per registered backend, so each (op, backend) pair is checked
            # against PyTorch with that backend forced, in the dtypes that backend runs.
            if info.dispatch_op and not info.backend:
                for backend in sorted(implementations(info.dispatch_op)):
                    label = f"{info.variant}-{backend}" if info.variant else backend
                    dtypes = info.backend_dtypes.get(backend, info.dtypes)
                    if dtypes:
                        entries.append(
                            dataclasses.replace(
                                info, variant=label, backend=backend, dtypes=tuple(dtypes)
                            )
                        )
    return entries


OP_DB: List[OpInfo] = _collect()


def get_op(name: str) -> OpInfo:
    """The entry called ``name`` (its ``full_name``)."""
    for info in OP_DB:
        if info.full_name == name:
            return info
    raise KeyError(f"no op {name!r} in the op database; known: {[i.full_name for i in OP_DB]}")
