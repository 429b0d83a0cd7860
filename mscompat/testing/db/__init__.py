"""The op database: every entry of every op family, in one list."""

from __future__ import annotations

from typing import List

from mscompat.testing.db import losses
from mscompat.testing.opinfo import OpInfo

__all__ = ["OP_DB", "get_op"]

OP_DB: List[OpInfo] = [*losses.OPS]


def get_op(name: str) -> OpInfo:
    """The entry called ``name`` (its ``full_name``)."""
    for info in OP_DB:
        if info.full_name == name:
            return info
    raise KeyError(f"no op {name!r} in the op database; known: {[i.full_name for i in OP_DB]}")
