"""Op database entries for ``repeat_interleave`` and ``unfold_dim`` (``mscompat.shape.repeat``)."""

from __future__ import annotations

from typing import Any, Iterator, List

import numpy as np

from mscompat.shape import repeat_interleave, unfold_dim
from mscompat.testing.db._common import bench, normal
from mscompat.testing.opinfo import (
    ErrorInput,
    OpInfo,
    ReferenceInput,
    SampleInput,
    TorchOpInfo,
)

_SLOW = "the float32 samples run the same code (suite time)"
_SKIP = {"float16": _SLOW, "float64": _SLOW, "int32": _SLOW, "int64": _SLOW}


def _values(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    if dtype.startswith("float"):
        return normal(rng, shape, dtype)
    return rng.integers(-9, 9, shape).astype(dtype)


def _torch_repeat_interleave(input: Any, repeats: Any = None, dim: Any = None, **kw: Any) -> Any:
    import torch

    if repeats is None:
        return torch.repeat_interleave(input, **kw)
    return torch.repeat_interleave(input, repeats, dim, **kw)


def _torch_unfold(input: Any, dim: int, size: int, step: int) -> Any:
    return input.unfold(dim, size, step)


def _repeat_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _values(rng, (3, 4), dtype)
    yield SampleInput((x, np.array([2, 0, 3]), 0), {"output_size": 5}, name="Tensor repeats")


def _repeat_references() -> Iterator[ReferenceInput]:
    """The other forms (int, one Tensor repeat for all, the repeats alone, no output_size),
    zero repeats, 0-d and empty, in PyNative (a Tensor ``repeats`` without ``output_size`` is
    read from the data there)."""
    x = _values(np.random.default_rng(8), (3, 4), "float32")
    yield ReferenceInput(SampleInput((x, 2), name="int, flattened"), grad=True)
    yield ReferenceInput(SampleInput((x, np.array([3]), 1), name="one repeat for all"), grad=True)
    yield ReferenceInput(SampleInput((x, np.array([1, 0, 2]), -2), name="read repeats"))
    yield ReferenceInput(SampleInput((np.array([2, 0, 1]),), name="repeats alone"))
    yield ReferenceInput(SampleInput((x, 0, -1), name="zero repeats"), grad=True)
    yield ReferenceInput(SampleInput((np.asarray(1.5), 3), name="0-d"), grad=True)
    empty = (np.zeros((0, 2)), np.zeros(0, np.int64), 0)
    yield ReferenceInput(SampleInput(empty, name="empty"), grad=True)


def _repeat_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, -1)), ValueError, "repeats must be non-negative")
    yield ErrorInput(SampleInput((x, np.array([1, -1]), 0)), ValueError, "non-negative")
    yield ErrorInput(SampleInput((x, np.array([1, 2, 3]), 0)), ValueError, "1 or 2 elements")
    yield ErrorInput(SampleInput((x, np.array([1.0]), 0)), TypeError, "integer Tensor")
    yield ErrorInput(
        SampleInput((x, np.array([1, 2]), 0), {"output_size": 4}), ValueError, "output_size=4"
    )
    yield ErrorInput(SampleInput((x, 1, 2)), ValueError, "dim must be in the range")


def _unfold_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((_values(rng, (3, 7), dtype), 1, 3, 2), name="overlapping windows")


def _unfold_references() -> Iterator[ReferenceInput]:
    x = _values(np.random.default_rng(9), (3, 7), "float32")
    yield ReferenceInput(SampleInput((x, 0, 2, 1), name="dim 0"), grad=True)
    yield ReferenceInput(SampleInput((x, -1, 2, 3), name="gaps between windows"), grad=True)
    yield ReferenceInput(SampleInput((x, 1, 0, 4), name="size 0"))
    yield ReferenceInput(SampleInput((np.asarray(2.5), 0, 1, 1), name="0-d"), grad=True)
    yield ReferenceInput(SampleInput((np.zeros((0, 4)), 1, 2, 1), name="empty"))


def _unfold_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, 1, 4, 1)), ValueError, r"size must be in \[0, 3\]")
    yield ErrorInput(SampleInput((x, 1, 2, 0)), ValueError, "step must be > 0")
    yield ErrorInput(SampleInput((x, 2, 2, 1)), ValueError, "dim must be in the range")
    yield ErrorInput(SampleInput((x, 1, 2.0, 1)), TypeError, "size must be an int")


OPS: List[OpInfo] = [
    OpInfo(
        name="shape.repeat_interleave",
        op=repeat_interleave,
        ref=_torch_repeat_interleave,
        mirrors="torch.repeat_interleave",
        torch_apis=("torch.repeat_interleave", "torch.Tensor.repeat_interleave"),
        sample_inputs=_repeat_samples,
        references=_repeat_references,
        error_inputs=_repeat_errors,
        dtypes=("float32", "int64"),
        dispatch_op="shape.repeat_interleave",
        bench_input=bench((1000, 1000), 2, 1),
        torch_opinfo=(TorchOpInfo("repeat_interleave", stride=3, skip_dtypes=_SKIP),),
    ),
    OpInfo(
        name="shape.unfold_dim",
        op=unfold_dim,
        ref=_torch_unfold,
        mirrors="torch.Tensor.unfold",
        torch_apis=("torch.Tensor.unfold",),
        sample_inputs=_unfold_samples,
        references=_unfold_references,
        error_inputs=_unfold_errors,
        dtypes=("float32", "int64"),
        dispatch_op="shape.unfold_dim",
        bench_input=bench((1000, 1000), 1, 8, 4),
        torch_opinfo=(TorchOpInfo("unfold", stride=3, skip_dtypes=_SKIP),),
    ),
]
