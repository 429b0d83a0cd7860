"""Op database entry for ``isin`` (``mscompat.math.membership``)."""

from __future__ import annotations

from typing import Iterator, List

import numpy as np

from mscompat.math import isin
from mscompat.testing.db._common import torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, TorchOpInfo

DTYPES = ("float16", "float32", "float64", "int32", "int64")


def _samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = np.asarray(rng.integers(0, 8, (3, 5)), dtype)
    t = np.asarray(rng.integers(0, 8, (4,)), dtype)
    yield SampleInput((x, t), name="(3, 5) in (4,)")
    yield SampleInput((x, t), {"invert": True}, name="invert")
    if dtype != "float32":
        return
    yield SampleInput(
        (x.T, t.reshape(2, 2)), {"assume_unique": True}, name="non-contiguous, 2-D test"
    )
    nan = np.array([1.0, np.nan, -0.0, np.inf], dtype)
    yield SampleInput((nan, np.array([np.nan, 0.0, np.inf], dtype)), name="nan, -0 == 0, inf")
    yield SampleInput((np.asarray(3.0, dtype), t), name="0-d")
    yield SampleInput((np.zeros((0, 2), dtype), t), name="empty elements")
    yield SampleInput((x, np.zeros((0,), dtype)), {"invert": True}, name="empty test_elements")
    yield SampleInput((x, 3.0), name="number test_elements")
    yield SampleInput((x.astype(np.int32), np.array([1.0, 2.5], dtype)), name="int in float")


def _errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((3, 4)), TypeError, "both are numbers")
    yield ErrorInput(SampleInput((x, "a")), TypeError, "test_elements must be a Tensor or a number")
    yield ErrorInput(SampleInput((x, x), {"invert": 1}), TypeError, "invert must be a bool")


def _bench() -> SampleInput:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 10000, (1000, 100)).astype(np.int64)
    return SampleInput((x, rng.integers(0, 10000, (100,)).astype(np.int64)), name="1e5 in 100")


OPS: List[OpInfo] = [
    OpInfo(
        name="math.isin",
        op=isin,
        ref=torch_ref("torch.isin"),
        mirrors="torch.isin",
        torch_apis=("torch.isin",),
        sample_inputs=_samples,
        error_inputs=_errors,
        dtypes=DTYPES,
        grad_argnums=(),
        dispatch_op="math.isin",
        bench_input=_bench,
        torch_opinfo=(TorchOpInfo("isin"),),
    )
]
