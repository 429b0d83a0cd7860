"""Op database entries for ``atan``, ``atan2``, ``addcmul``, ``mm``, ``outer``, ``baddbmm``,
``argmax``, ``argmin``, ``count_nonzero``, ``logsumexp``, ``cumsum``, ``norm`` and
``linalg.vector_norm`` (``mscompat.math.pointwise``, ``.products``, ``.reductions``,
``.norms``). One row per function (``_torchfn.row``); few, small samples: the edge cases (NaN,
ties, empty, 0-d, dtype rules) are what matter."""

from __future__ import annotations

from typing import Iterator, List

import mindspore as ms
import numpy as np

from mscompat.math import (
    addcmul,
    argmax,
    argmin,
    atan,
    atan2,
    baddbmm,
    count_nonzero,
    cumsum,
    logsumexp,
    mm,
    norm,
    outer,
    vector_norm,
)
from mscompat.testing.db._common import bench, normal
from mscompat.testing.db._torchfn import f32_opinfo, row
from mscompat.testing.opinfo import ErrorInput, KnownDifference, OpInfo, SampleInput

_X = np.zeros((2, 3), np.float32)
_HALF = np.full((1000, 1000), 0.5, np.float32)


def _not_tensor(*rest: object) -> ErrorInput:
    """First in each list: the graph-mode error check (every sixth) fails at the first line."""
    return ErrorInput(SampleInput(([1.0], *rest)), TypeError, "input must be a mindspore.Tensor")


# The suite's time budget: each generator's first sample is the entry's sample (PyNative and
# graph mode, gradients); the rest (edge cases, other dtypes) are reference inputs checked in
# PyNative (``_torchfn.split_samples``).


def _atan(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((normal(rng, (2, 3), dtype, 3.0),), name="2x3")
    yield SampleInput((np.array([np.nan, np.inf, -np.inf, -0.0], dtype),), name="nan inf")
    yield SampleInput((np.arange(4).astype("int64"),), name="int64 -> float32")
    yield SampleInput((normal(rng, (3,), "float64"),), name="float64")
    yield SampleInput((np.zeros((0, 2), dtype),), name="empty")


def _atan2(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((normal(rng, (2, 3), dtype), normal(rng, (3,), dtype)), name="broadcast")
    # (inf, x): PyTorch's gradient is NaN there (a KnownDifference of its OpInfo samples).
    y = np.array([1.0, -1.0, 0.0, -0.0, 3e38, np.nan, 0.0], dtype)
    x = np.array([-1.0, -1.0, -1.0, -1.0, 2.0, 1.0, 0.0], dtype)
    yield SampleInput((y, x), name="quadrants, signed zeros, 3e38, nan, origin (gradient 0)")
    yield SampleInput((normal(rng, (3,), "float64"), normal(rng, (3,), "float64")), name="f64")
    yield SampleInput((np.asarray(1.0, dtype), np.asarray(2.0, dtype)), name="0-d")


def _addcmul(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a, b, c = (normal(rng, s, dtype) for s in ((2, 3), (3,), (2, 1)))
    yield SampleInput((a, b, c), {"value": 0.5}, name="broadcast value=0.5")
    yield SampleInput((a, a, a), name="value=1")
    yield SampleInput((np.zeros((0, 3), dtype), b, b), name="empty")
    i = np.arange(6).reshape(2, 3)
    yield SampleInput((i, i, i), {"value": 2}, name="int64 value=2")
    yield SampleInput((a.astype("float16"),) * 3, {"value": -1.5}, name="float16")


def _mm(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((normal(rng, (2, 3), dtype), normal(rng, (3, 4), dtype)), name="2x3 @ 3x4")
    yield SampleInput((normal(rng, (3, 2), dtype).T, normal(rng, (3, 1), dtype)), name="T")
    yield SampleInput((np.zeros((2, 0), dtype), np.zeros((0, 3), dtype)), name="k=0: zeros")
    yield SampleInput((normal(rng, (2, 2), "float64"), normal(rng, (2, 2), "float64")), name="f64")


def _outer(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((normal(rng, (3,), dtype), normal(rng, (4,), dtype)), name="3 x 4")
    yield SampleInput((np.zeros((0,), dtype), normal(rng, (2,), dtype)), name="empty")


def _baddbmm(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a, b = normal(rng, (2, 2, 3), dtype), normal(rng, (2, 3, 4), dtype)
    yield SampleInput((normal(rng, (4,), dtype), a, b), {"beta": 0.5, "alpha": 2.0}, name="bcast")
    nan = np.full((2, 2, 4), np.nan, dtype)
    yield SampleInput((nan, a, b), {"beta": 0}, name="beta=0 ignores nan input")
    yield SampleInput((normal(rng, (2, 2, 4), dtype), a[:, :, :0], b[:, :0]), name="m=0")
    ints = [
        rng.integers(-3, 4, shape).astype(np.int64) for shape in ((2, 2, 4), (2, 2, 3), (2, 3, 4))
    ]
    # PyTorch casts float scalars to an integer input's dtype (toward 0; its OpInfo's beta=0.2)
    yield SampleInput(tuple(ints), {"beta": -1.7, "alpha": 2.9}, name="int64, float scalars")


def _argext(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (3, 4), dtype).round()  # rounded: ties
    x[1, 2] = x[1, 3] = np.nan
    yield SampleInput((x, 1, True), name="dim=1 ties, nan first, keepdim")
    yield SampleInput((x[::-1],), name="flattened")
    yield SampleInput((np.zeros((0, 3), dtype), 1), name="empty batch")
    yield SampleInput((np.array([[3, 1, 3], [2, 5, 5]], "int64"), 0), name="int64")
    yield SampleInput((np.asarray(2.0, dtype), 0), name="0-d")


def _count(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = (normal(rng, (2, 3, 4), dtype) > 0).astype(dtype)
    x[0, 0, 0] = np.nan
    yield SampleInput((x, (0, 2)), name="dims (0, 2), nan counts")
    yield SampleInput((x,), name="all")
    yield SampleInput((np.zeros((0, 3), dtype), 0), name="empty")
    yield SampleInput((x > 0, -1), name="bool")
    yield SampleInput((np.arange(-2, 3), 0), name="int64")


def _logsumexp(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    big = np.array([[100.0, 100.0, -np.inf], [-1.0, 2.0, 0.5]], dtype)  # exp(100) overflows
    yield SampleInput((big if dtype == "float32" else normal(rng, (2, 3), dtype), 1), name="rows")
    if dtype != "float32":
        return
    yield SampleInput((normal(rng, (2, 3, 2), dtype), (0, 2), True), name="dims keepdim")
    yield SampleInput((np.full((1, 2), -np.inf, dtype), 1), name="all -inf")
    yield SampleInput((np.arange(6).reshape(2, 3), 0), name="int -> float")
    yield SampleInput((np.zeros((2, 0), dtype), 1), name="empty dim: -inf")
    yield SampleInput((normal(rng, (2, 3), "float16") * 4, 1), name="float16")


def _cumsum(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((normal(rng, (2, 5), dtype), 1), name="dim=1")
    if dtype != "float32":
        return
    yield SampleInput((np.array([1.0, np.nan, 2.0], dtype), 0), name="nan")
    yield SampleInput((normal(rng, (3, 2), dtype), 0), {"dtype": ms.float64}, name="dtype")
    yield SampleInput((np.array([True, False, True]), 0), name="bool -> int64")
    yield SampleInput((np.asarray(2.0, dtype), 0), name="0-d")
    yield SampleInput((np.zeros((0, 3), dtype), 1), name="empty")
    yield SampleInput((np.array([[1, 2], [3, 4]], "int32"), 1), name="int32 -> int64")
    yield SampleInput((normal(rng, (7,), "float64"), 0), name="float64")
    yield SampleInput((normal(rng, (9,), "float16") * 8, 0), name="float16 (float32 accumulation)")


def _norms(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (3, 4), dtype)
    z = x.copy()
    z[1] = 0
    yield SampleInput((z, 2, 1), name="p=2 dim=1, zero row: gradient 0")
    if dtype != "float32":
        return
    yield SampleInput((x, 3.5), name="p=3.5 (all)")
    yield SampleInput((x, float("inf"), 0), name="inf")
    yield SampleInput((x, 1, (0, 1), True), name="p=1 keepdim")
    yield SampleInput((z, 0, 1), name="p=0 count")
    yield SampleInput((x, -float("inf"), 1), name="-inf")
    yield SampleInput((np.zeros((0, 3), dtype), 2, 0), name="empty: 0")
    yield SampleInput((normal(rng, (4,), "float64"),), name="float64")
    yield SampleInput((normal(rng, (2, 3), "float16") * 50, 2, 1), name="float16 (float32 sums)")


def _norm(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (3, 4), dtype)
    yield SampleInput((x,), name="fro (all)")
    yield SampleInput((x, 1, 0), name="p=1 dim=0")
    yield SampleInput((x, "fro", (0, 1), True), name="fro two dims")
    yield SampleInput((np.asarray(-2.0, dtype),), name="0-d")


def _pointwise_errors() -> Iterator[ErrorInput]:
    yield _not_tensor()


def _atan2_errors() -> Iterator[ErrorInput]:
    yield _not_tensor(_X)
    yield ErrorInput(SampleInput((_X, _X[:, :2])), ValueError, "must be broadcastable")
    yield ErrorInput(SampleInput((_X, _X.astype(np.float64))), TypeError, "same dtype")


def _addcmul_errors() -> Iterator[ErrorInput]:
    yield _not_tensor(_X, _X)
    yield ErrorInput(SampleInput((_X, _X, _X[:, :2])), ValueError, "must be broadcastable")
    yield ErrorInput(SampleInput((_X, _X, _X), {"value": "2"}), TypeError, "value must be")
    i = _X.astype(np.int64)
    yield ErrorInput(SampleInput((i, i, i), {"value": 0.5}), TypeError, "value must be an int")


def _mm_errors() -> Iterator[ErrorInput]:
    yield _not_tensor(_X)
    yield ErrorInput(SampleInput((_X, _X)), ValueError, "cannot be multiplied")
    yield ErrorInput(SampleInput((_X[0], _X)), ValueError, "input must be 2-D")
    yield ErrorInput(SampleInput((_X, _X.T.astype(np.float64))), TypeError, "mat2 must have")


def _outer_errors() -> Iterator[ErrorInput]:
    yield _not_tensor(_X[0])
    yield ErrorInput(SampleInput((_X, _X[0])), ValueError, "input must be 1-D")


def _baddbmm_errors() -> Iterator[ErrorInput]:
    yield _not_tensor(_X, _X)
    a = np.zeros((2, 2, 3), np.float32)
    yield ErrorInput(SampleInput((_X, a, a)), ValueError, "must be")
    b = np.zeros((2, 3, 4), np.float32)
    yield ErrorInput(SampleInput((_X, a, b)), ValueError, "input of shape")
    yield ErrorInput(SampleInput((_X, a[0], a)), ValueError, "batch1 must be 3-D")


def _arg_errors() -> Iterator[ErrorInput]:
    yield _not_tensor(0)
    yield ErrorInput(SampleInput((_X, 2)), ValueError, r"dim must be in the range \[-2, 1\]")
    yield ErrorInput(SampleInput((np.zeros((0,), np.float32),)), ValueError, "empty")
    yield ErrorInput(SampleInput((np.zeros((2, 0), np.float32), 1)), ValueError, "is empty")
    yield ErrorInput(SampleInput((_X, 0, 1)), TypeError, "keepdim must be a bool")


def _dim_errors() -> Iterator[ErrorInput]:
    yield _not_tensor(0)
    yield ErrorInput(SampleInput((_X, 2)), ValueError, r"dim must be in the range \[-2, 1\]")
    yield ErrorInput(SampleInput((_X, 0.5)), TypeError, "dim must be an int")


def _cumsum_errors() -> Iterator[ErrorInput]:
    yield from _dim_errors()
    yield ErrorInput(SampleInput((_X, 0), {"dtype": "float64"}), TypeError, "dtype must be")


def _norm_errors() -> Iterator[ErrorInput]:
    yield _not_tensor()
    yield ErrorInput(SampleInput((_X.astype(np.int64),)), TypeError, "floating-point")
    yield ErrorInput(SampleInput((_X, 2, (0, 0))), ValueError, "more than once")
    yield ErrorInput(SampleInput((np.zeros((0, 2), np.float32), float("inf"))), ValueError,
                     "empty")  # fmt: skip


def _norm_p_errors() -> Iterator[ErrorInput]:
    yield from _norm_errors()
    yield ErrorInput(SampleInput((_X, "nuc")), ValueError, "'nuc' is not supported")


F32 = ("float32",)
_INF_GRAD = (
    "gradient 0 where PyTorch's is NaN (inf * 0): an infinite input, the other infinite or NaN "
    "(the value is PyTorch's; a NaN gradient there would make our value NaN)"
)
_ATAN2_INF = tuple(
    KnownDifference("atan2", dtype, (39, 80), _INF_GRAD) for dtype in ("float32", "float64")
) + (
    KnownDifference("atan2", "float16", (15, 39, 56, 80), _INF_GRAD + "; and float16 inputs "
        "near 1e-3, whose x^2 + y^2 has an infinite float16 reciprocal: PyTorch's gradient is "
        "inf (NaN times 0), ours 0 (float64: ~1e3)"),
)  # fmt: skip
OPS: List[OpInfo] = [
    row("math.atan", atan, _atan, _pointwise_errors, F32,
        opinfo=(f32_opinfo("atan", 4),), bench_input=bench((1000, 1000))),
    row("math.atan2", atan2, _atan2, _atan2_errors, F32, grad=(0, 1),
        opinfo=(f32_opinfo("atan2", 4),), known=_ATAN2_INF,
        bench_input=bench((1000, 1000), _HALF)),
    # No TorchOpInfo: PyTorch's addcmul reference inputs fail in torch itself (an int64 leaf
    # with requires_grad, which make_tensor refuses).
    row("math.addcmul", addcmul, _addcmul, _addcmul_errors, F32, grad=(0, 1, 2),
        bench_input=bench((1000, 1000), _HALF, _HALF)),
    row("math.mm", mm, _mm, _mm_errors, F32, grad=(0, 1), opinfo=(f32_opinfo("mm"),),
        bench_input=bench((512, 512), _HALF[:512, :512])),
    row("math.outer", outer, _outer, _outer_errors, F32, grad=(0, 1),
        opinfo=(f32_opinfo("outer"),), bench_input=bench((1000,), _HALF[0])),
    row("math.baddbmm", baddbmm, _baddbmm, _baddbmm_errors, F32, grad=(0, 1, 2),
        # float16: PyTorch's rounds once from float32 (ours rounded each step, 4e-2 off)
        opinfo=(f32_opinfo("baddbmm", 3, also=("float16",)),),
        bench_input=bench((8, 128, 128), np.full((8, 128, 64), 0.5, np.float32),
                          np.full((8, 64, 128), 0.5, np.float32))),
    row("math.argmax", argmax, _argext, _arg_errors, F32, grad=(),
        opinfo=(f32_opinfo("argmax"),), bench_input=bench((1000, 1000), 1)),
    row("math.argmin", argmin, _argext, _arg_errors, F32, grad=(),
        opinfo=(f32_opinfo("argmin"),), bench_input=bench((1000, 1000), 1)),
    row("math.count_nonzero", count_nonzero, _count, _dim_errors, F32,
        grad=(), opinfo=(f32_opinfo("count_nonzero"),), bench_input=bench((1000, 1000))),
    row("math.logsumexp", logsumexp, _logsumexp, _dim_errors, F32,
        opinfo=(f32_opinfo("logsumexp", 3),), bench_input=bench((1000, 1000), 1)),
    row("math.cumsum", cumsum, _cumsum, _cumsum_errors, F32,
        opinfo=(f32_opinfo("cumsum", 3),), bench_input=bench((1000, 1000), 1)),
    row("math.vector_norm", vector_norm, _norms, _norm_errors, F32, method=False,
        path="torch.linalg.vector_norm", opinfo=(f32_opinfo("linalg.vector_norm", 8),),
        bench_input=bench((1000, 1000), 2, 1)),
    row("math.norm", norm, _norm, _norm_p_errors, F32, dispatch_op="",
        opinfo=(f32_opinfo("norm", 4),), bench_input=bench((1000, 1000), 2, 1)),
]  # fmt: skip
