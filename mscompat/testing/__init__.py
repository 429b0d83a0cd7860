"""Parity machinery: the op database, its runner, and :func:`assert_parity` for your own ports."""

from mscompat.testing.db import OP_DB, get_op
from mscompat.testing.opinfo import (
    ErrorInput,
    KnownDifference,
    OpInfo,
    ReferenceInput,
    SampleInput,
    ToleranceOverride,
    TorchOpInfo,
)
from mscompat.testing.parity import Comparison, ParityError, ParityReport, assert_parity
from mscompat.testing.tolerances import TOLERANCES, Tolerance, default_tolerance

__all__ = [
    "OP_DB",
    "TOLERANCES",
    "Comparison",
    "ErrorInput",
    "KnownDifference",
    "OpInfo",
    "ParityError",
    "ParityReport",
    "ReferenceInput",
    "SampleInput",
    "Tolerance",
    "ToleranceOverride",
    "TorchOpInfo",
    "assert_parity",
    "default_tolerance",
    "get_op",
]
