"""What the scan's parser reports for one file: its PyTorch API call sites and risk flags."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

__all__ = ["CallSite", "FileScan", "Risk"]


@dataclass
class CallSite:
    """One use of a PyTorch-side API.

    Attributes:
        api: canonical fully qualified name (``torch.nn.functional.interpolate``,
            ``torch.Tensor.sort``, ``torch.nn.Conv2d``).
        line, col: position in the file (1-based line).
        kwargs: the call's keyword arguments, literal values where they are literals and
            ``"*"`` otherwise; positional arguments as ``"#0"``, ``"#1"``... (a module call
            carries its constructor's arguments).
        how: ``"call"`` (a function), ``"construct"`` (a Module built), ``"module"`` (a Module
            instance called), ``"method"`` (a tensor method).
        confidence: ``""`` where the receiver of a method is known to be a tensor (or the call
            is of an imported name); ``"name"`` where only the method's name says so (a method
            no builtin type or ``nn.Module`` has, on a receiver of unknown type, in a file that
            imports torch).
    """

    api: str
    line: int
    col: int
    kwargs: Dict[str, Any] = field(default_factory=dict)
    how: str = "call"
    confidence: str = ""


@dataclass
class Risk:
    """A construct MindSpore's migration guide asks to analyse before porting."""

    kind: str  # "dynamic-shape" | "second-order-grad" | "in-graph-data"
    line: int
    what: str
    detail: str


@dataclass
class FileScan:
    """What one file contains."""

    calls: List[CallSite] = field(default_factory=list)
    risks: List[Risk] = field(default_factory=list)
    #: module-level functions and classes defined in the file: (name, line)
    definitions: List[Tuple[str, int]] = field(default_factory=list)
