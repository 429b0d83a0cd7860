"""Op database entries for ``pairwise_distance`` and ``PairwiseDistance``
(``mscompat.layers.distance``)."""

from __future__ import annotations

from typing import Iterator, List

import numpy as np

from mscompat.layers import PairwiseDistance, pairwise_distance
from mscompat.testing.db._common import bench, every_dtype_first, normal, torch_entry
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, TorchOpInfo

DTYPES = ("float16", "float32", "float64")


def _samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (4, 5), dtype)
    yield SampleInput((x, normal(rng, (4, 5), dtype)), name="p=2")
    yield SampleInput((x, x.copy()), {"eps": 0.0}, name="equal rows: zero norm, zero gradient")
    yield SampleInput((x, normal(rng, (5,), dtype)), {"p": 1.0, "keepdim": True}, name="broadcast")
    yield SampleInput((x, normal(rng, (4, 5), dtype)), {"p": 3.0}, name="p=3")
    yield SampleInput((x, normal(rng, (1, 5), dtype)), {"p": 0.0}, name="p=0 counts")
    yield SampleInput((x, normal(rng, (4, 5), dtype)), {"p": float("inf")}, name="p=inf")
    yield SampleInput((x, normal(rng, (4, 5), dtype)), {"p": -float("inf")}, name="p=-inf")
    yield SampleInput((x, normal(rng, (4, 5), dtype)), {"p": 0.5, "eps": 1e-3}, name="p=0.5")
    yield SampleInput((normal(rng, (5,), dtype), normal(rng, (5,), dtype)), name="1-D: 0-d out")
    yield SampleInput((np.asarray(1.5, dtype), np.asarray(-0.5, dtype)), name="0-d")
    yield SampleInput((np.zeros((0, 3), dtype), np.zeros((0, 3), dtype)), name="no rows")
    yield SampleInput(
        (np.zeros((2, 0), dtype), np.zeros((2, 0), dtype)), {"keepdim": True}, name="empty rows"
    )
    yield SampleInput((normal(rng, (5, 3), dtype).T, normal(rng, (3, 5), dtype)), name="strided")


def _cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x1, x2 = normal(rng, (3, 4), dtype), normal(rng, (3, 4), dtype)
    yield SampleInput((x1, x2), init_kwargs={"p": 1.5, "eps": 1e-4, "keepdim": True}, name="p=1.5")


def _errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, np.zeros((2, 4), np.float32))), ValueError, "x1.*x2")
    yield ErrorInput(SampleInput((x, x.astype(np.float64))), TypeError, "same dtype")
    yield ErrorInput(SampleInput((x.astype(np.int32), x)), TypeError, "x1")
    yield ErrorInput(SampleInput((x, x), {"p": "2"}), TypeError, "p must be")
    yield ErrorInput(SampleInput((x, x), {"keepdim": 1}), TypeError, "keepdim")


def _cell_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, x), init_kwargs={"eps": None}), TypeError, "eps must be")


OPS: List[OpInfo] = [
    torch_entry(
        "layers.pairwise_distance",
        pairwise_distance,
        "torch.nn.functional.pairwise_distance",
        every_dtype_first(_samples, keep=2),
        _errors,
        torch_apis=("torch.nn.functional.pairwise_distance", "torch.pairwise_distance"),
        dtypes=DTYPES,
        grad_argnums=(0, 1),
        dispatch_op="layers.pairwise_distance",
        bench_input=bench((4096, 256), np.zeros((4096, 256), np.float32)),
        torch_opinfo=(
            TorchOpInfo(
                "nn.functional.pairwise_distance",
                skip_dtypes={d: "the norm takes float tensors" for d in ("int32", "int64")},
            ),
        ),
    ),
    torch_entry(
        "layers.PairwiseDistance",
        PairwiseDistance,
        "torch.nn.PairwiseDistance",
        _cell_samples,
        _cell_errors,
        is_cell=True,
        dtypes=("float32",),
        grad_argnums=(0, 1),
    ),
]
