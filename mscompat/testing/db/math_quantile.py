"""Op database entries for ``quantile`` and ``nanquantile`` (``mscompat.math.quantile``)."""

from __future__ import annotations

from typing import Iterator, List

import numpy as np

from mscompat.math import nanquantile, quantile
from mscompat.testing.db._common import bench, normal, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, TorchOpInfo

DTYPES = ("float32", "float64")
_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (3, 9), dtype)
    qs = np.array([0.0, 0.125, 0.5, 0.8, 1.0], dtype)
    yield SampleInput((x, 0.3), name="all, q=0.3")
    yield SampleInput((x, qs, 1), name="q tensor, dim=1")
    if dtype != "float32":
        return
    ties = np.round(normal(rng, (4, 5), dtype), 0)  # rank halves (q * 4) and equal values
    for mode in _MODES:
        yield SampleInput((ties, qs, 1, True), {"interpolation": mode}, name=f"{mode} keepdim")
    with_nan = normal(rng, (3, 6), dtype)
    with_nan[1, 2] = np.nan
    with_nan[2] = np.nan
    yield SampleInput((with_nan, 0.4, 1), name="NaN in a slice, an all-NaN slice")
    yield SampleInput((x.T, 0.7, 0), name="non-contiguous")
    yield SampleInput((np.asarray(1.5, dtype), 0.5), name="0-d")
    yield SampleInput((x, 0.25, None, True), name="dim=None keepdim")


def _errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, 1.5)), ValueError, r"q must be in the range \[0, 1\]")
    yield ErrorInput(SampleInput((x, -0.1)), ValueError, r"q must be in the range \[0, 1\]")
    yield ErrorInput(
        SampleInput((x, 0.5), {"interpolation": "cubic"}), ValueError, "interpolation must be"
    )
    yield ErrorInput(SampleInput((x, 0.5, 2)), ValueError, r"dim must be in the range \[-2, 1\]")
    yield ErrorInput(SampleInput((x, np.zeros((2, 2), np.float32))), ValueError, "1-D")
    yield ErrorInput(SampleInput((x, "0.5")), TypeError, "q must be a float or a Tensor")
    yield ErrorInput(SampleInput((x.astype(np.int32), 0.5)), TypeError, "float32 or float64")
    yield ErrorInput(SampleInput((np.zeros((0,), np.float32), 0.5)), ValueError, "empty")


OPS: List[OpInfo] = [
    OpInfo(
        name=f"math.{op.__name__}",
        op=op,
        ref=torch_ref(f"torch.{op.__name__}"),
        mirrors=f"torch.{op.__name__}",
        torch_apis=(f"torch.{op.__name__}", f"torch.Tensor.{op.__name__}"),
        sample_inputs=_samples,
        error_inputs=_errors,
        dtypes=DTYPES,
        dispatch_op=f"math.{op.__name__}",
        bench_input=bench((1000, 1000), 0.3, 1),
        torch_opinfo=(TorchOpInfo(op.__name__, stride=3),),
    )
    for op in (quantile, nanquantile)
]
