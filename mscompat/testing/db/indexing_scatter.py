"""Op database entries for the scatters (``mscompat.indexing.scatter``) and the index ops
(``mscompat.indexing.index_ops``)."""

from __future__ import annotations

from typing import Any, Iterator, List

import numpy as np

from mscompat.indexing import (
    index_add,
    index_copy,
    index_fill,
    index_select,
    scatter,
    scatter_add,
    scatter_reduce,
    take,
)
from mscompat.testing.db._common import torch_ref
from mscompat.testing.opinfo import (
    ErrorInput,
    OpInfo,
    ReferenceInput,
    SampleInput,
    TorchOpInfo,
)

REDUCES = ("sum", "prod", "mean", "amax", "amin")
_SLOW = "the float32 samples run the same code (suite time)"
_SKIP = {"float16": _SLOW, "float64": _SLOW, "int32": _SLOW, "int64": _SLOW}
#: integer mean rounds down, integer products: PyTorch's int64 samples run too
_SKIP_FLOATS = {"float16": _SLOW, "float64": _SLOW, "int32": _SLOW}


def _small(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    """Small integers (ties and zeros on purpose) in ``dtype``."""
    return rng.integers(-2, 3, shape).astype(dtype)


# ----------------------------------------------------------------------------- scatters
#
# The suite's time budget: a sample's cost is its graph compilations (2-3 s each here), so each
# entry has one or two seeded samples per dtype and checks its edge cases (0-d, empty, the
# other reductions and include_self) as PyNative reference inputs, against PyTorch too.


def _reduce_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _small(rng, (3, 4), dtype)
    for reduce, include_self in (("amax", False), ("prod", True)):
        # duplicate indices, ties and zeros; index smaller than input along dim 1
        idx = rng.integers(0, 3, (4, 3))
        args = (x, 0, idx, _small(rng, (4, 3), dtype), reduce)
        yield SampleInput(args, {"include_self": include_self}, name=f"{reduce} {include_self}")
        if dtype != "float32":
            return


def _reduce_references() -> Iterator[ReferenceInput]:
    """Every reduction with and without ``input``'s values (ties, zeros and repeated indices,
    gradients included), NaN winning amax/amin, +-inf, 0-d, empty, and a src larger than
    index (only its corner read)."""
    rng = np.random.default_rng(3)
    x = _small(rng, (3, 4), "float64")
    for reduce in REDUCES:
        for include_self in (True, False):
            args = (x, 0, rng.integers(0, 3, (4, 3)), _small(rng, (4, 3), "float64"), reduce)
            yield ReferenceInput(SampleInput(args, {"include_self": include_self}), grad=True)
    ints = _small(rng, (3, 4), "int64") * 3
    for reduce in REDUCES:  # integer mean rounds down (negative values too)
        args = (ints, 1, rng.integers(0, 4, (3, 5)), _small(rng, (3, 5), "int64"), reduce)
        yield ReferenceInput(SampleInput(args, {"include_self": reduce != "mean"}))
    nan, inf = np.nan, np.inf
    x = np.array([1.0, nan, -inf, 4.0], np.float32)
    src = np.array([nan, 2.0, 3.0, inf, -inf, 0.0], np.float32)
    idx = np.array([0, 0, 1, 2, 2, 3])
    for reduce in REDUCES:
        nan_sample = SampleInput((x, 0, idx, src, reduce), {"include_self": False})
        yield ReferenceInput(nan_sample, _BOTH)
    yield ReferenceInput(SampleInput((x, 0, idx, src, "amin")), _BOTH)
    yield from _kernel_references(rng)
    zero_d = (np.asarray(1.0), 0, np.asarray(0), np.asarray(2.0), "prod")
    yield ReferenceInput(SampleInput(zero_d, name="0-d"), grad=True)
    empty = (x, 0, np.zeros(0, np.int64), src[:0], "mean")
    yield ReferenceInput(SampleInput(empty, name="empty index"), grad=True)
    big = np.arange(20, dtype=np.float64).reshape(4, 5)
    sample = SampleInput((np.zeros((3, 5)), 0, np.array([[2, 0], [1, 2]]), big, "sum"))
    yield ReferenceInput(sample)


_BOTH = ("aot", "composite")


def _kernel_references(rng: np.random.Generator) -> Iterator[ReferenceInput]:
    """The kernel's own cases: float16 accumulated as PyTorch's opmath (3000 values into two
    places; mean's count rounded to float16 above 2048), a 3-D input along dim 1 with index
    smaller than input and src, and enough elements for several threads (gradients too)."""
    x = rng.standard_normal(3).astype(np.float16)
    idx = rng.integers(0, 2, 3000)
    src = rng.standard_normal(3000).astype(np.float16)
    for reduce in ("sum", "mean"):
        yield ReferenceInput(
            SampleInput((x, 0, idx, src, reduce), name=f"float16 {reduce}"), ("aot",)
        )
    cube = _small(rng, (2, 3, 5), "float64")
    dim1 = (cube, 1, rng.integers(0, 3, (2, 6, 4)), _small(rng, (3, 7, 5), "float64"), "prod")
    yield ReferenceInput(SampleInput(dim1, {"include_self": False}, name="3-D dim 1"), ("aot",))
    big = rng.standard_normal((300, 300)).round(1)
    threads = (big, 0, rng.integers(0, 300, (300, 300)), big[::-1].copy(), "amax")
    yield ReferenceInput(SampleInput(threads, name="threads"), ("aot",), grad=True)


def _scatter_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _small(rng, (3, 4), dtype)
    perm = np.stack([rng.permutation(3)[:2] for _ in range(4)], 1)  # no repeated position
    yield SampleInput((x, 0, perm, _small(rng, (2, 4), dtype)), name="dim 0")


def _scatter_references() -> Iterator[ReferenceInput]:
    rng = np.random.default_rng(4)
    x = _small(rng, (3, 4), "float32")
    sample = SampleInput((x, 1, np.array([[3, 0], [1, 2]]), _small(rng, (2, 2), "float32")))
    yield ReferenceInput(sample, grad=True)
    yield ReferenceInput(SampleInput((x, 1, np.array([[2], [0]]), 5), name="number src"))
    yield ReferenceInput(SampleInput((x, 1, np.array([[2], [2]]), x), {"reduce": "add"}))
    yield ReferenceInput(SampleInput((x, 1, np.array([[2], [2]]), x), {"reduce": "multiply"}))
    zero_d = (np.asarray(1.0), 0, np.asarray(0), np.asarray(4.0))
    yield ReferenceInput(SampleInput(zero_d, name="0-d"), grad=True)
    yield ReferenceInput(SampleInput((x, 0, np.zeros((0, 4), np.int64), x[:0]), name="empty"))


def _scatter_add_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _small(rng, (3, 4), dtype)
    yield SampleInput((x, 1, rng.integers(0, 4, (3, 6)), _small(rng, (3, 6), dtype)), name="dups")


def _scatter_errors(fn: Any, *extra: Any) -> Any:
    def errors() -> Iterator[ErrorInput]:
        # a TypeError first: the first error input is also checked under ms.jit
        x = np.zeros((2, 3), np.float32)
        i = np.array([[0, 1, 2]])
        s = np.ones((1, 3), np.float32)
        yield ErrorInput(SampleInput((x, 0, i * 1.0, s, *extra)), TypeError, "index must be an int")
        yield ErrorInput(SampleInput((x, 0, i, s, *extra)), ValueError, r"index out of range")
        yield ErrorInput(SampleInput((x, 0, -i, s, *extra)), ValueError, r"every value must be")
        yield ErrorInput(SampleInput((x, 0, i[0], s, *extra)), ValueError, "same number of dims")
        yield ErrorInput(SampleInput((x, 1, i, s[:, :2], *extra)), ValueError, "no larger than")
        bad = s.astype(np.float64)
        yield ErrorInput(SampleInput((x, 1, i, bad, *extra)), TypeError, "src must have input's")
        yield ErrorInput(SampleInput((x, 2, i, s, *extra)), ValueError, "dim must be in the range")

    errors.__name__ = f"_{fn}_errors"
    return errors


def _reduce_errors() -> Iterator[ErrorInput]:
    yield from _scatter_errors("scatter_reduce", "amax")()
    x = np.zeros((2, 3), np.float32)
    i = np.array([[0, 1, 0]])
    yield ErrorInput(SampleInput((x, 0, i, x[:1], "max")), ValueError, "reduce must be one of")


def _scatter_entry(name: str, op: Any, samples: Any, errors: Any, **extra: Any) -> OpInfo:
    extra.setdefault("dtypes", ("float32", "int64"))
    extra.setdefault("grad_argnums", (0, 3))
    return OpInfo(
        name=f"indexing.{name}",
        op=op,
        ref=torch_ref(f"torch.{name}"),
        mirrors=f"torch.{name}",
        torch_apis=(f"torch.{name}", f"torch.Tensor.{name}"),
        sample_inputs=samples,
        error_inputs=errors,
        **extra,
    )


# ----------------------------------------------------------------------------- index ops


def _index_add_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _small(rng, (3, 4), dtype)
    yield SampleInput((x, 1, np.array([3, 0, 3]), _small(rng, (3, 3), dtype)), {"alpha": 2})


def _index_copy_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _small(rng, (3, 4), dtype)
    yield SampleInput((x, 1, np.array([3, 0]), _small(rng, (3, 2), dtype)), name="dim 1")


def _source_references(op: str) -> Any:
    def references() -> Iterator[ReferenceInput]:
        rng = np.random.default_rng(5)
        x = _small(rng, (3, 4), "float32")
        args = (x, 0, np.array([2, 0, 1]), _small(rng, (3, 4), "float32"))
        yield ReferenceInput(SampleInput(args, name="dim 0"), grad=True)
        yield ReferenceInput(SampleInput((x, -1, np.array([1]), x[:, :1]), name="dim -1"))
        yield ReferenceInput(SampleInput((x, 0, np.zeros(0, np.int64), x[:0]), name="empty"))
        zero_d = (np.asarray(1.0), 0, np.array([0]), np.asarray(3.0))
        if op == "index_add":  # PyTorch's index_copy rejects a 0-d source
            yield ReferenceInput(SampleInput(zero_d, {"alpha": -2}, name="0-d"), grad=True)

    references.__name__ = f"_{op}_references"
    return references


def _index_source_errors(fn: str) -> Any:
    def errors() -> Iterator[ErrorInput]:
        x = np.zeros((2, 3), np.float32)
        i = np.array([0, 2])
        s = np.ones((2, 2), np.float32)
        yield ErrorInput(SampleInput((x, 1, i * 1.0, s)), TypeError, "index must be an int")
        yield ErrorInput(SampleInput((x, 1, i + 1, s)), ValueError, r"index out of range")
        yield ErrorInput(SampleInput((x, 1, i[None], s)), ValueError, "0-d or 1-D")
        yield ErrorInput(SampleInput((x, 0, i, s)), ValueError, "source must have shape")
        yield ErrorInput(SampleInput((x, 1, i, s.astype(int))), TypeError, "source must have")

    errors.__name__ = f"_{fn}_errors"
    return errors


def _index_fill_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _small(rng, (3, 4), dtype)
    yield SampleInput((x, 1, np.array([3, 0, 3]), np.asarray(2, dtype)), name="Tensor value")


def _index_fill_references() -> Iterator[ReferenceInput]:
    x = _small(np.random.default_rng(6), (3, 4), "float32")
    yield ReferenceInput(SampleInput((x, 0, np.array([-1, 0]), -3.5), name="negative index"))
    yield ReferenceInput(SampleInput((np.asarray(5.0), 0, np.array([0]), 1), name="0-d"), grad=True)
    yield ReferenceInput(SampleInput((x, 1, np.zeros(0, np.int64), 1), name="empty"), grad=True)


def _index_fill_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, 1, np.array([0]), "a")), TypeError, "value must be")
    yield ErrorInput(SampleInput((x, 1, np.array([3]), 1.0)), ValueError, "index out of range")
    yield ErrorInput(SampleInput((x, 1, np.array([-4]), 1.0)), ValueError, r"\[-3, 3\)")
    yield ErrorInput(SampleInput((x, 1, np.array([0]), x[0])), ValueError, "0-d Tensor")


def _index_select_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _small(rng, (3, 4), dtype)
    yield SampleInput((x, 1, np.array([3, 0, 3, 1])), name="repeated")


def _index_select_references() -> Iterator[ReferenceInput]:
    x = _small(np.random.default_rng(7), (3, 4), "float32")
    yield ReferenceInput(SampleInput((x, 0, np.asarray(2)), name="0-d index"), grad=True)
    yield ReferenceInput(SampleInput((np.asarray(5.0), 0, np.array([0])), name="0-d"), grad=True)
    yield ReferenceInput(SampleInput((x, 0, np.zeros(0, np.int64)), name="empty"), grad=True)


def _index_select_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, 1, np.array([0.0]))), TypeError, "index must be an int")
    yield ErrorInput(SampleInput((x, 1, np.array([3]))), ValueError, r"in \[0, 3\)")
    yield ErrorInput(SampleInput((x, 1, np.array([-1]))), ValueError, "index out of range")
    yield ErrorInput(SampleInput((x, 1, np.zeros((1, 1), np.int64))), ValueError, "0-d or 1-D")


def _take_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _small(rng, (3, 4), dtype)
    yield SampleInput((x, np.array([[0, -1, 5], [5, 11, -12]])), name="negative, repeated")


def _take_references() -> Iterator[ReferenceInput]:
    yield ReferenceInput(SampleInput((np.asarray(5.0), np.asarray(0)), name="0-d"), grad=True)
    x = np.ones((3, 4), np.float32)
    yield ReferenceInput(SampleInput((x, np.zeros((2, 0), np.int64)), name="empty"), grad=True)


def _take_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, np.array([0.0]))), TypeError, "index must be an int")
    yield ErrorInput(SampleInput((x, np.array([6]))), ValueError, r"in \[-6, 6\)")
    yield ErrorInput(SampleInput((x, np.array([-7]))), ValueError, "index out of range")


def _bench_scatter_reduce() -> SampleInput:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1000, 1000)).astype(np.float32)
    idx = rng.integers(0, 1000, (1000, 1000))
    return SampleInput((x, 0, idx, x, "amax"), name="(1000, 1000) float32, amax, dim 0")


def _torch(name: str) -> TorchOpInfo:
    skips = _SKIP_FLOATS if name in ("scatter_reduce.mean", "scatter_reduce.prod") else _SKIP
    return TorchOpInfo(name, stride=3, skip_dtypes=skips)


OPS: List[OpInfo] = [
    _scatter_entry(
        "scatter_reduce",
        scatter_reduce,
        _reduce_samples,
        _reduce_errors,
        dtypes=("float16", "float32", "int64"),
        dispatch_op="indexing.scatter_reduce",
        references=_reduce_references,
        bench_input=_bench_scatter_reduce,
        torch_opinfo=tuple(_torch(f"scatter_reduce.{r}") for r in REDUCES),
    ),
    _scatter_entry(
        "scatter",
        scatter,
        _scatter_samples,
        _scatter_errors("scatter"),
        dispatch_op="indexing.scatter",
        references=_scatter_references,
        torch_opinfo=(_torch("scatter"),),
    ),
    _scatter_entry(
        "scatter_add",
        scatter_add,
        _scatter_add_samples,
        _scatter_errors("scatter_add"),
        torch_opinfo=(_torch("scatter_add"),),
    ),
    _scatter_entry(
        "index_add",
        index_add,
        _index_add_samples,
        _index_source_errors("index_add"),
        dtypes=("float16", "float32", "int64"),
        references=_source_references("index_add"),
        torch_opinfo=(_torch("index_add"),),
    ),
    _scatter_entry(
        "index_copy",
        index_copy,
        _index_copy_samples,
        _index_source_errors("index_copy"),
        references=_source_references("index_copy"),
        torch_opinfo=(_torch("index_copy"),),
    ),
    _scatter_entry(
        "index_fill",
        index_fill,
        _index_fill_samples,
        _index_fill_errors,
        references=_index_fill_references,
        torch_opinfo=(_torch("index_fill"),),
    ),
    _scatter_entry(
        "index_select",
        index_select,
        _index_select_samples,
        _index_select_errors,
        grad_argnums=(0,),
        dispatch_op="indexing.index_select",
        references=_index_select_references,
        torch_opinfo=(_torch("index_select"),),
    ),
    _scatter_entry(
        "take",
        take,
        _take_samples,
        _take_errors,
        grad_argnums=(0,),
        dispatch_op="indexing.take",
        references=_take_references,
        torch_opinfo=(_torch("take"),),
    ),
]
