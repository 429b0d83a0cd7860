"""Op database entries for ``bincount`` and ``histc`` (``mscompat.indexing.counting``)."""

from __future__ import annotations

from typing import Iterator, List

import numpy as np

from mscompat.indexing import bincount, histc
from mscompat.testing.db._common import bench, normal, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, ReferenceInput, SampleInput, TorchOpInfo

_SLOW = "the float32 samples run the same code (suite time)"


def _bincount_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = rng.integers(0, 6, 20).astype(dtype)
    yield SampleInput((x,), {"minlength": 3}, name="counts, minlength below the data")
    yield SampleInput((x, normal(rng, (20,), "float32"), 9), name="float32 weights, minlength")


def _bincount_references() -> Iterator[ReferenceInput]:
    x = np.array([4, 0, 4, 1])
    yield ReferenceInput(SampleInput((x, np.array([0.5, 1.0, 0.25, 2.0], np.float16))))
    yield ReferenceInput(SampleInput((x, np.array([1, 2, 3, 4], np.int32)), name="int weights"))
    yield ReferenceInput(SampleInput((np.zeros(0, np.int64),), {"minlength": 2}, name="empty"))


def _bincount_errors() -> Iterator[ErrorInput]:
    x = np.array([0, 2])
    yield ErrorInput(SampleInput((x * 1.0,)), TypeError, "input must be an integer Tensor")
    yield ErrorInput(SampleInput((-x - 1,)), ValueError, "non-negative values")
    yield ErrorInput(SampleInput((x[None],)), ValueError, "input must be 1-D")
    yield ErrorInput(SampleInput((x, np.ones(3))), ValueError, "weights must have input's shape")
    yield ErrorInput(SampleInput((x, None, -1)), ValueError, "minlength must be non-negative")


def _histc_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((normal(rng, (4, 25), dtype, 3.0), 10, -2, 2), name="values outside")
    if dtype != "float32":  # the suite's time budget: one graph compilation per dtype
        return
    yield SampleInput((normal(rng, (50,), dtype), 7), name="min == max: the data's range")


def _histc_references() -> Iterator[ReferenceInput]:
    """Values on every edge (the last one inclusive), NaN skipped, equal values, empty."""
    edges = np.linspace(-2, 2, 41).astype(np.float32)
    yield ReferenceInput(SampleInput((edges, 40, -2, 2), name="on the edges"), modes=("graph",))
    yield ReferenceInput(SampleInput((np.array([1.0, np.nan, 3.0]), 4, 0, 4), name="NaN"))
    yield ReferenceInput(SampleInput((np.full(3, 2.0, np.float32), 4), name="all equal"))
    yield ReferenceInput(SampleInput((np.zeros(0, np.float32), 3), name="empty"))


def _histc_errors() -> Iterator[ErrorInput]:
    x = np.zeros(3, np.float32)
    yield ErrorInput(SampleInput((x.astype(np.int64), 4)), TypeError, "input must be a float")
    yield ErrorInput(SampleInput((x, 0)), ValueError, "bins must be > 0")
    yield ErrorInput(SampleInput((x, 4, 2, 1)), ValueError, "max must be larger than min")
    yield ErrorInput(SampleInput((x, 4, 0, np.inf)), ValueError, "is not finite")


def _bincount_bench() -> SampleInput:
    return SampleInput((np.random.default_rng(0).integers(0, 1000, 1_000_000),), name="1e6 int64")


OPS: List[OpInfo] = [
    OpInfo(
        name="indexing.bincount",
        op=bincount,
        ref=torch_ref("torch.bincount"),
        mirrors="torch.bincount",
        torch_apis=("torch.bincount", "torch.Tensor.bincount"),
        sample_inputs=_bincount_samples,
        error_inputs=_bincount_errors,
        dtypes=("int64",),
        grad_argnums=(),
        supports_graph=False,  # the length is the data's largest value plus one
        dispatch_op="indexing.bincount",
        references=_bincount_references,
        bench_input=_bincount_bench,
        torch_opinfo=(TorchOpInfo("bincount", stride=3),),
    ),
    OpInfo(
        name="indexing.histc",
        op=histc,
        ref=torch_ref("torch.histc"),
        mirrors="torch.histc",
        torch_apis=("torch.histc", "torch.Tensor.histc"),
        sample_inputs=_histc_samples,
        error_inputs=_histc_errors,
        dtypes=("float16", "float32", "float64"),
        grad_argnums=(),
        dispatch_op="indexing.histc",
        references=_histc_references,
        bench_input=bench((1000, 1000), 100, -3, 3),
        torch_opinfo=(
            TorchOpInfo("histc", stride=4, skip_dtypes={"float16": _SLOW, "float64": _SLOW}),
        ),
    ),
]
