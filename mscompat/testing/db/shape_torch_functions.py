"""Op database entries for the creation functions, ``stack``, ``tril``/``triu``
(``mscompat.shape.creation``, ``.join``, ``.triangular``). One row per function (``_torchfn.row``);
few, small samples: the edge cases (empty, 0-d, dtype rules) are what matter."""

from __future__ import annotations

from typing import Iterator, List

import mindspore as ms
import numpy as np

from mscompat.shape import (
    arange,
    clone,
    full_like,
    linspace,
    ones_like,
    stack,
    tril,
    triu,
    zeros_like,
)
from mscompat.testing.db._common import bench, normal
from mscompat.testing.db._torchfn import f32_opinfo, row
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput

F32 = ("float32",)
_X = np.zeros((2, 3), np.float32)


# The suite's time budget: each generator's first sample is the entry's sample (PyNative and
# graph mode, gradients); the rest (edge cases, other dtypes) are reference inputs checked in
# PyNative (``_torchfn.split_samples``).


def _like(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 3), dtype)
    yield SampleInput((x,), name="2x3")
    yield SampleInput((x,), {"dtype": ms.int64}, name="dtype=int64")
    yield SampleInput((np.zeros((0, 3), dtype),), name="empty")
    yield SampleInput((np.asarray(True),), name="0-d bool")
    yield SampleInput((x.astype("float16"),), {"dtype": ms.float64}, name="float16 -> float64")


def _full_like(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 3), dtype)
    yield SampleInput((x, 2.5), name="2.5")
    yield SampleInput((x, -3), {"dtype": ms.int32}, name="dtype=int32")
    yield SampleInput((np.zeros((0, 3), dtype), 1.0), name="empty")
    yield SampleInput((np.arange(3), 2.7), name="int64: 2.7 cast to 2")
    yield SampleInput((np.asarray(1.5, dtype), float("nan")), name="0-d nan")


def _clone(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((normal(rng, (3, 2), dtype).T,), name="non-contiguous")
    yield SampleInput((np.array([np.nan, -0.0, np.inf], dtype),), name="nan -0 inf")
    yield SampleInput((np.zeros((0, 2), dtype),), name="empty")
    yield SampleInput((np.asarray(2.5, "float64"),), name="0-d float64")
    yield SampleInput((np.array([True, False]),), name="bool")


def _arange(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # Dyadic bounds: under ms.jit a Python float argument is a float32 constant.
    yield SampleInput((1, 2.5, 0.25), name="floats: float32")
    yield SampleInput((5,), name="arange(5): int64")
    yield SampleInput((10, 0, -3), {"dtype": ms.float64}, name="negative step float64")
    yield SampleInput((0, 2.5), {"dtype": ms.int64}, name="int64 dtype truncates")
    yield SampleInput((3, 3), name="empty")
    yield SampleInput((-1.5, 1.0, 0.375), {"dtype": ms.float16}, name="float16")


def _linspace(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((0, 1, 5), name="default float32")
    yield SampleInput((-3.25, 7.5, 11), {"dtype": ms.float64}, name="float64")
    yield SampleInput((0, 10, 4), {"dtype": ms.int64}, name="int64 truncates")
    yield SampleInput((2.5, 2.5, 1), name="steps=1")
    yield SampleInput((1, 0, 0), name="steps=0")
    yield SampleInput((-1.0, 1.0, 7), {"dtype": ms.float16}, name="float16")


def _stack(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a, b = normal(rng, (2, 3), dtype), normal(rng, (2, 3), dtype)
    yield SampleInput(([a, b, a], -1), name="dim=-1")
    yield SampleInput(([np.asarray(1.0, dtype), np.asarray(2.0, dtype)],), name="0-d")
    yield SampleInput(([np.zeros((0, 2), dtype)] * 2, 1), name="empty")
    yield SampleInput(([np.arange(3), np.arange(3)], 1), name="int64")


def _triangle(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 3, 4), dtype)
    yield SampleInput((x, 1), name="batched 3x4, diagonal=1")
    yield SampleInput((x[0].T, -1), name="non-contiguous diagonal=-1")
    yield SampleInput((np.array([[np.nan, 1], [np.inf, 2]], dtype), 9), name="nan inf, past end")
    yield SampleInput((np.ones((3, 3), bool),), name="bool")
    yield SampleInput((np.zeros((0, 3), dtype),), name="empty")


def _like_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(([1.0],)), TypeError, "input must be a mindspore.Tensor")
    yield ErrorInput(SampleInput((_X,), {"dtype": "float32"}), TypeError, "dtype must be")


def _full_like_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(([1.0], 1.0)), TypeError, "input must be a mindspore.Tensor")
    yield ErrorInput(SampleInput((_X, "1")), TypeError, "fill_value must be a number")
    yield ErrorInput(SampleInput((_X, 1.0), {"dtype": np.float32}), TypeError, "dtype must be")


def _clone_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(([1.0],)), TypeError, "input must be a mindspore.Tensor")


def _arange_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(("5",)), TypeError, "end must be a number")
    yield ErrorInput(SampleInput((0, 5, 0)), ValueError, "step must be nonzero")
    yield ErrorInput(SampleInput((0, 5, -1)), ValueError, "inconsistent with step sign")
    yield ErrorInput(SampleInput((0, float("inf"))), ValueError, "end must be finite")
    yield ErrorInput(SampleInput((0, 2**40, 1)), ValueError, "more than the limit")


def _linspace_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(("0", 1, 3)), TypeError, "start must be a number")
    yield ErrorInput(SampleInput((0, 1, -1)), ValueError, "steps must be non-negative|number of")
    yield ErrorInput(SampleInput((0, 1, 2.0)), TypeError, "steps must be an int")
    yield ErrorInput(SampleInput((0, float("nan"), 3)), ValueError, "end must be finite")


def _stack_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(([],)), ValueError, "tensors must be non-empty")
    yield ErrorInput(SampleInput((_X,)), TypeError, "tensors must be a list or tuple")
    yield ErrorInput(SampleInput(([_X, _X[:1]],)), ValueError, "same shape")
    yield ErrorInput(SampleInput(([_X, _X.astype(np.float64)],)), TypeError, "same dtype")
    yield ErrorInput(SampleInput(([_X, _X], 3)), ValueError, r"dim must be in the range \[-3, 2\]")


def _triangle_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(([[1.0]],)), TypeError, "input must be a mindspore.Tensor")
    yield ErrorInput(SampleInput((_X[0],)), ValueError, "input must be at least 2-D")
    yield ErrorInput(SampleInput((_X, 0.5)), TypeError, "diagonal must be an int")


OPS: List[OpInfo] = [
    row("shape.zeros_like", zeros_like, _like, _like_errors, F32, grad=(), method=False,
        dispatch_op="",
        bench_input=bench((1000, 1000))),
    row("shape.ones_like", ones_like, _like, _like_errors, F32, grad=(), method=False,
        dispatch_op="",
        bench_input=bench((1000, 1000))),
    row("shape.full_like", full_like, _full_like, _full_like_errors, F32, grad=(), method=False,
        bench_input=bench((1000, 1000), 2.5)),
    row("shape.clone", clone, _clone, _clone_errors, F32,
        opinfo=(f32_opinfo("clone", 4),), bench_input=bench((1000, 1000))),
    row("shape.arange", arange, _arange, _arange_errors, ("float32",), grad=(), method=False),
    row("shape.linspace", linspace, _linspace, _linspace_errors, ("float32",), grad=(),
        method=False),
    row("shape.stack", stack, _stack, _stack_errors, F32, method=False,
        opinfo=(f32_opinfo("stack"),)),
    row("shape.tril", tril, _triangle, _triangle_errors, F32,
        opinfo=(f32_opinfo("tril", 3),), bench_input=bench((1000, 1000))),
    row("shape.triu", triu, _triangle, _triangle_errors, F32,
        opinfo=(f32_opinfo("triu", 3),), bench_input=bench((1000, 1000))),
]  # fmt: skip
