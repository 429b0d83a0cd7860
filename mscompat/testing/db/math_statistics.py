"""Op database entries for ``var``, ``std``, ``var_mean``, ``std_mean``
(``mscompat.math.statistics``)."""

from __future__ import annotations

import dataclasses
from typing import Iterator, List

import numpy as np

from mscompat.math import std, std_mean, var, var_mean
from mscompat.testing.db._common import bench, normal, torch_ref
from mscompat.testing.opinfo import (
    ErrorInput,
    OpInfo,
    SampleInput,
    ToleranceOverride,
    TorchOpInfo,
)
from mscompat.testing.tolerances import Tolerance


def _samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (3, 4, 5), dtype, scale=3.0) + 2
    yield SampleInput((x,), name="all dims")
    yield SampleInput((x, 1), name="dim=1")
    if dtype != "float32":
        return
    yield SampleInput((x, (0, 2)), {"keepdim": True}, name="dim=(0, 2) keepdim")
    yield SampleInput((x, -1), {"correction": 2.5}, name="correction=2.5")
    yield SampleInput((x, [0, 1]), {"correction": 0}, name="correction=0 (population)")
    yield SampleInput((x, 1, False, True), name="legacy (dim, unbiased=False, keepdim=True)")
    yield SampleInput((x, False), name="legacy (input, unbiased=False)")
    yield SampleInput((x, 0), {"correction": 3}, name="N - correction = 0: inf")
    yield SampleInput((x, 0), {"correction": 7}, name="N - correction < 0: inf")
    yield SampleInput((x[:, :1], 1), name="one element, correction=1: nan")
    yield SampleInput((x.transpose(2, 0, 1), (1, 2)), name="non-contiguous")
    yield SampleInput((np.asarray(x[0, 0, 0]),), {"correction": 0}, name="0-d")
    yield SampleInput((np.zeros((0, 3), dtype), 0), name="empty dim reduced: nan")
    yield SampleInput((np.zeros((0, 3), dtype), 1), name="empty output")
    yield SampleInput((x * 1e3 + 1e4, 2), name="large mean (cancellation)")


#: The gradient is 2 (x - mean) / (N - correction): with |x| ~ 1e4 the two means differ by
#: float32 rounding (~1e-3, summation order), which is the absolute error of the gradient.
_F32_GRAD = ToleranceOverride(
    "float32", "grad", Tolerance(atol=2e-3, rtol=1e-5), "float32 mean of values ~1e4 (ulp 1e-3)"
)


def _errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, 2)), ValueError, r"dim must be in the range \[-2, 1\]")
    yield ErrorInput(SampleInput((x, (0, -2))), ValueError, "more than once")
    yield ErrorInput(SampleInput((x, 0.5)), TypeError, "dim must be an int")
    yield ErrorInput(SampleInput((x, 0), {"correction": "1"}), TypeError, "correction")
    yield ErrorInput(
        SampleInput((x, 0, True), {"correction": 1}), TypeError, "either unbiased or correction"
    )
    yield ErrorInput(SampleInput((x, 0, 1)), TypeError, "unbiased must be a bool")
    yield ErrorInput(SampleInput((x.astype(np.int32),)), TypeError, "float16/float32/float64")
    yield ErrorInput(SampleInput(([1.0, 2.0],)), TypeError, "input must be a mindspore.Tensor")


OPS: List[OpInfo] = [
    OpInfo(
        name=f"math.{op.__name__}",
        op=op,
        ref=torch_ref(f"torch.{op.__name__}"),
        mirrors=f"torch.{op.__name__}",
        torch_apis=(f"torch.{op.__name__}",)
        + ((f"torch.Tensor.{op.__name__}",) if op in (var, std) else ()),
        sample_inputs=_samples,
        error_inputs=_errors,
        dispatch_op=f"math.{op.__name__}",
        bench_input=bench((1000, 1000), 1),
        tolerance_overrides=(_F32_GRAD,),
        torch_opinfo=(
            TorchOpInfo(op.__name__, stride=4),
            TorchOpInfo(f"{op.__name__}.unbiased", stride=4),
        ),
    )
    for op in (var, std, var_mean, std_mean)
]


def _short(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    """The mean-returning variants share var's code: a few samples (the suite's time budget)."""
    for i, sample in enumerate(_samples(dtype, rng)):
        if i in (0, 2, 8, 11):
            yield sample


OPS = [
    info if info.op in (var, std) else dataclasses.replace(info, sample_inputs=_short)
    for info in OPS
]
