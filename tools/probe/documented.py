"""Tables the probe reads from the installed packages without running any op.

* ``documented``: MindSpore's own statement of where each public callable of ``mint``,
  ``mint.nn``, ``mint.nn.functional``, ``mint.linalg``, ``mint.special``, ``mint.optim``,
  ``ops``, ``nn`` and each ``Tensor`` method runs, read from its docstring's ``Supported
  Platforms:`` line (``Ascend`` ``GPU`` ``CPU``).
  ``mscompat scan`` gives it as the "documented" verdict level on a backend with no measured
  column, and uses it to flag MindSpore calls that will fail there.
* ``tensor_only_methods``: ``torch.Tensor``'s public methods minus the names of the methods of
  Python's builtin types, :class:`torch.nn.Module` and ``object``: a call of one of these on a
  receiver of unknown type, in a file that imports torch, is taken for a tensor method.
"""

from __future__ import annotations

import re
from typing import Any, Dict, List

__all__ = ["documented_platforms", "tables", "tensor_only_methods"]

#: The MindSpore namespaces whose callables are documented, by the prefix the scan uses.
NAMESPACES = (
    "mint",
    "mint.nn",
    "mint.nn.functional",
    "mint.linalg",
    "mint.special",
    "mint.optim",
    "ops",
    "nn",
    "Tensor",
)
PLATFORMS = ("Ascend", "GPU", "CPU")
_SUPPORTED = re.compile(r"Supported Platforms:\s*((?:``\w+``[\s,]*)+)")


def platforms_of(doc: str) -> List[str]:
    """``["Ascend", "GPU"]`` from a docstring's ``Supported Platforms:`` line, [] without one.

    Example:
        >>> platforms_of("Supported Platforms:\\n    ``Ascend`` ``GPU``\\n")
        ['Ascend', 'GPU']
    """
    found = _SUPPORTED.search(doc or "")
    if not found:
        return []
    named = re.findall(r"``(\w+)``", found.group(1))
    return [p for p in PLATFORMS if p in named]


def documented_platforms() -> Dict[str, List[str]]:
    """``{"mint.roll": ["Ascend", "GPU"], ...}`` for every documented public callable."""
    import mindspore as ms

    out: Dict[str, List[str]] = {}
    for prefix in NAMESPACES:
        module: Any = ms
        for part in prefix.split("."):
            module = getattr(module, part, None)
        if module is None:
            continue
        for name in sorted(dir(module)):
            if name.startswith("_"):
                continue
            obj = getattr(module, name, None)
            if not callable(obj):
                continue
            found = platforms_of(getattr(obj, "__doc__", "") or "")
            if found:
                out[f"{prefix}.{name}"] = found
    return dict(sorted(out.items()))


def tensor_only_methods() -> List[str]:
    """The public methods of ``torch.Tensor`` that no builtin type, ``nn.Module`` or ``object``
    has (``rsqrt``, ``unbind``, ``cumsum``, ``masked_fill``...; not ``sort``, ``index``,
    ``copy``, ``to``, ``float``)."""
    import torch

    common = set(dir(object)) | set(dir(torch.nn.Module))
    for builtin in (str, bytes, bytearray, list, tuple, dict, set, frozenset, int, float, complex):
        common |= set(dir(builtin))
    names = {
        n
        for n in dir(torch.Tensor)
        if not n.startswith("_") and callable(getattr(torch.Tensor, n, None))
    }
    return sorted(names - common)


def tables() -> Dict[str, Any]:
    """The tables above, as the knowledge file stores them."""
    return {"tensor_only_methods": tensor_only_methods(), "documented": documented_platforms()}
