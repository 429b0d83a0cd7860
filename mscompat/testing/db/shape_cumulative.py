"""Op database entries for ``cummax`` and ``cummin`` (``mscompat.shape.cumulative``)."""

from __future__ import annotations

from typing import Iterator, List

import numpy as np

from mscompat.shape import cummax, cummin
from mscompat.testing.db._common import bench, every_dtype_first, normal, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, ReferenceInput, SampleInput, TorchOpInfo

DTYPES = ("float16", "float32", "float64", "int32", "int64")


def _samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    scale = 0.5 if dtype.startswith("float") else 1
    ties = (rng.integers(0, 3, (4, 37)) * scale).astype(dtype)
    yield SampleInput((ties, 1), name="ties (4, 37) dim=1")
    yield SampleInput((ties, 0), name="ties (4, 37) dim=0")
    if dtype.startswith("float"):
        yield SampleInput((normal(rng, (2, 3, 5), dtype), -2), name="normal (2, 3, 5) dim=-2")
    yield SampleInput((np.asarray(rng.integers(0, 9), dtype), 0), name="0-d")
    yield SampleInput((np.zeros((0, 3), dtype), 1), name="empty (0, 3)")


def _special() -> np.ndarray:
    nan, inf = np.nan, np.inf
    return np.array([[1, 3, 3, nan, 5, nan, 2, -0.0, 0.0, inf, -inf, 2]], np.float32)


def _references() -> Iterator[ReferenceInput]:
    """NaN that sticks until the next NaN, ties to the later position, -0.0 == +0.0, bool and
    a long line (the composite's log-step scan over 2**11 + 3 places), on both backends; the
    kernel's float16 gradient."""
    both = ("aot", "composite")
    rng = np.random.default_rng(5)
    yield ReferenceInput(SampleInput((_special(), 1)), both, ("pynative", "graph"), grad=True)
    yield ReferenceInput(SampleInput((rng.random((3, 9)) > 0.5, 1), name="bool"), both)
    long = rng.integers(0, 50, (2, 2051)).astype(np.float64)
    yield ReferenceInput(SampleInput((long, 1), name="long ties"), both, grad=True)
    # float16 gradients summed in float and rounded once (PyTorch's scatter_add), bit-exact
    ties = (rng.integers(0, 3, (3, 200)) * 0.5).astype(np.float16)
    yield ReferenceInput(SampleInput((ties, 1), name="float16 ties"), ("aot",), grad=True)


def _errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, 2)), ValueError, r"dim must be in the range \[-2, 1\]")
    yield ErrorInput(SampleInput((x, 0.5)), TypeError, "dim must be an int")
    yield ErrorInput(SampleInput(([1.0, 2.0], 0)), TypeError, "input must be a mindspore.Tensor")
    yield ErrorInput(SampleInput((np.zeros(2, np.uint16), 0)), TypeError, "real or bool Tensor")


OPS: List[OpInfo] = [
    OpInfo(
        name=f"shape.{op.__name__}",
        op=op,
        ref=torch_ref(f"torch.{op.__name__}"),
        mirrors=f"torch.{op.__name__}",
        torch_apis=(f"torch.{op.__name__}", f"torch.Tensor.{op.__name__}"),
        sample_inputs=every_dtype_first(_samples, keep=2),
        error_inputs=_errors,
        dtypes=DTYPES,
        dispatch_op=f"shape.{op.__name__}",
        bench_input=bench((1000, 1000), 1),
        references=_references,
        torch_opinfo=(TorchOpInfo(op.__name__),),
    )
    for op in (cummax, cummin)
]
