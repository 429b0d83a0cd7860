"""Parity machinery: the op database, its runner, and :func:`assert_parity` for your own ports."""

from mscompat.testing.db import OP_DB, get_op
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, ToleranceOverride
from mscompat.testing.parity import Comparison, ParityError, ParityReport, assert_parity
from mscompat.testing.tolerances import TOLERANCES, Tolerance, default_tolerance

__all__ = [
    "OP_DB",
    "TOLERANCES",
    "Comparison",
    "ErrorInput",
    "OpInfo",
    "ParityError",
    "ParityReport",
    "SampleInput",
    "Tolerance",
    "ToleranceOverride",
    "assert_parity",
    "default_tolerance",
    "get_op",
]
