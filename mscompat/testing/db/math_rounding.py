"""Op database entry for ``round`` (``mscompat.math.rounding``)."""

from __future__ import annotations

from typing import Iterator, List

import numpy as np

from mscompat.math import round as ms_round
from mscompat.testing.db._common import bench, normal, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, TorchOpInfo

DTYPES = ("float16", "float32", "float64", "int32", "int64")


def _samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    if dtype.startswith("int"):
        yield SampleInput((np.asarray(rng.integers(-50, 50, (3, 4)), dtype),), name="ints")
        return
    halves = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.49], dtype)
    yield SampleInput((halves,), name="halves to even")
    yield SampleInput((normal(rng, (3, 5), dtype, scale=10.0),), {"decimals": 2}, name="decimals=2")
    if dtype != "float32":
        return
    yield SampleInput(
        (np.array([0.125, 0.375, 1.005], dtype),), {"decimals": 2}, name="0.125 -> 0.12"
    )
    yield SampleInput(
        (np.array([1250.0, 1350.0, -150.0], dtype),), {"decimals": -2}, name="decimals=-2"
    )
    yield SampleInput((normal(rng, (4, 3), dtype).T,), {"decimals": 1}, name="non-contiguous")
    yield SampleInput((np.array([np.nan, np.inf, -np.inf, -0.0], dtype),), name="nan inf -0")
    yield SampleInput((np.asarray(2.5, dtype),), name="0-d")
    yield SampleInput((np.zeros((0, 2), dtype),), {"decimals": 1}, name="empty")


def _errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x,), {"decimals": 1.5}), TypeError, "decimals must be an int")
    yield ErrorInput(
        SampleInput((x.astype(np.int32),), {"decimals": 1}), TypeError, "decimals must be 0"
    )
    yield ErrorInput(SampleInput(([1.0],)), TypeError, "input must be a mindspore.Tensor")


OPS: List[OpInfo] = [
    OpInfo(
        name="math.round",
        op=ms_round,
        ref=torch_ref("torch.round"),
        mirrors="torch.round",
        torch_apis=("torch.round", "torch.Tensor.round"),
        sample_inputs=_samples,
        error_inputs=_errors,
        dtypes=DTYPES,
        dispatch_op="math.round",
        bench_input=bench((1000, 1000), decimals=2),
        torch_opinfo=(
            TorchOpInfo("round"),
            TorchOpInfo("round.decimals_0"),
            TorchOpInfo("round.decimals_3"),
            TorchOpInfo("round.decimals_neg_3"),
        ),
    )
]
