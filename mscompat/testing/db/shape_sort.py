"""Op database entries for the sort family of ``mscompat.shape`` (``mscompat.shape.sort``)."""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

from mscompat.shape import argsort, kthvalue, median, mode, msort, sort, topk
from mscompat.testing.db._common import bench, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, ReferenceInput, SampleInput, TorchOpInfo

DTYPES = ("float16", "float32", "float64", "int32", "int64")


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def _distinct(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    """Values without ties (exact in float16 too): a permutation, centred and scaled."""
    size = int(np.prod(shape))
    perm = rng.permutation(size) - size // 2
    return (perm * (0.25 if _is_float(dtype) else 1)).astype(dtype).reshape(shape)


def _ties(rng: np.random.Generator, shape: Any, dtype: str, levels: int = 3) -> np.ndarray:
    return (rng.integers(0, levels, shape) * (0.5 if _is_float(dtype) else 1)).astype(dtype)


def _pruned(gen: Any, keep: Any) -> Any:
    """All samples in float32; in the other dtypes only those named in ``keep[dtype]`` (the
    suite's time budget: each sample compiles four graphs)."""

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for sample in gen(dtype, rng):
            if dtype == "float32" or sample.name in keep.get(dtype, ()):
                yield sample

    samples.__name__ = gen.__name__
    return samples


def _close(rng: np.random.Generator, dtype: str) -> np.ndarray:
    """Values one ulp apart around 1 (and +-1e300 in float64): a float32 sort would tie them."""
    if not _is_float(dtype):
        return (rng.permutation(9) + 2**31 - 5).astype(dtype)
    eps = np.finfo(dtype).eps
    x = np.array([1 + eps * k for k in rng.permutation(7)] + [2, 3], np.float64)
    if dtype == "float64":
        x[-2:] = (1e300, 2e300)
    return x.astype(dtype)


def _special(dtype: str) -> np.ndarray:
    """NaN, +-inf, -0.0 and +0.0, ties: 10 elements (PyTorch's small-dim sort is stable)."""
    nan, inf = np.nan, np.inf
    return np.array([[3, nan, 1, 3, inf, -inf, -0.0, 0.0, nan, inf]], dtype)


def sort_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _distinct(rng, (4, 7), dtype)
    yield SampleInput((x,), name="defaults")
    yield SampleInput((x, 0, True), name="dim 0 descending")
    yield SampleInput((_distinct(rng, (2, 5, 3), dtype),), {"dim": -2}, name="3-D dim -2")
    yield SampleInput((_distinct(rng, (6, 5), dtype).T,), {"dim": 1}, name="transposed input")
    yield SampleInput((_ties(rng, (3, 12), dtype),), name="ties, dim 12 (stable=False)")
    if dtype == "float32":  # once: bools sort as False < True
        bools = rng.random((3, 9)) < 0.5
        yield SampleInput((bools, 1, True), name="bool descending")
    yield SampleInput((_ties(rng, (3, 12), dtype),), {"descending": True}, name="ties desc")
    yield SampleInput(
        (_ties(rng, (2, 40), dtype),), {"stable": True, "descending": True}, name="ties 40 stable"
    )
    yield SampleInput(
        (_ties(rng, (40, 2), dtype),), {"dim": 0, "stable": True}, name="ties 40 dim 0 stable"
    )
    if _is_float(dtype):
        yield SampleInput((_special(dtype),), name="nan inf -0")
        yield SampleInput((_special(dtype),), {"descending": True}, name="nan inf -0 desc")
        yield SampleInput(
            (np.tile(_special(dtype), (1, 5)),), {"stable": True}, name="nan inf 50 stable"
        )
    yield SampleInput((_close(rng, dtype),), name="1 ulp apart")
    yield SampleInput((_distinct(rng, (4, 1), dtype),), {"dim": 1}, name="size-1 dim")
    yield SampleInput((_distinct(rng, (1,), dtype),), name="1 element")
    yield SampleInput((np.array(2.5 if _is_float(dtype) else 2, dtype),), name="0-d")
    yield SampleInput((np.array(3, dtype),), {"dim": 0, "descending": True}, name="0-d dim 0")
    yield SampleInput((np.zeros((0, 5), dtype),), name="empty (0, 5)")
    yield SampleInput((np.zeros((3, 0), dtype),), {"dim": 1}, name="empty (3, 0)")


def _errors_common(fn_args: Any = (), bools: bool = False) -> Iterator[ErrorInput]:
    """``bools``: the op sorts bools (as PyTorch's sort and mode do); complex is refused."""
    x = np.ones((3, 4), np.float32)
    yield ErrorInput(SampleInput(([1.0, 2.0], *fn_args)), TypeError, r"input must be a")
    bad = np.ones((3, 4), np.complex64 if bools else np.bool_)
    message = r"integer or bool Tensor" if bools else r"input must be a floating"
    yield ErrorInput(SampleInput((bad, *fn_args)), TypeError, message)
    yield ErrorInput(
        SampleInput((x, *fn_args), {"dim": 2}), ValueError, r"dim must be in the range \[-2, 1\]"
    )
    yield ErrorInput(SampleInput((x, *fn_args), {"dim": -3}), ValueError, r"dim must be in")
    yield ErrorInput(SampleInput((x, *fn_args), {"dim": 1.0}), TypeError, r"dim must be an int")
    yield ErrorInput(
        SampleInput((np.array(1.0, np.float32), *fn_args), {"dim": 1}),
        ValueError,
        r"dim must be in the range \[-1, 0\] for a 0-D input",
    )


def sort_errors() -> Iterator[ErrorInput]:
    yield from _errors_common(bools=True)
    x = np.ones((3, 4), np.float32)
    yield ErrorInput(SampleInput((x,), {"descending": 1}), TypeError, r"descending must be a bool")
    yield ErrorInput(SampleInput((x,), {"stable": None}), TypeError, r"stable must be a bool")


def argsort_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((_distinct(rng, (3, 6), dtype),), name="defaults")
    yield SampleInput((_ties(rng, (3, 10), dtype), 1, True), name="ties desc")
    yield SampleInput(
        (_ties(rng, (30, 2), dtype),), {"dim": 0, "stable": True}, name="ties 30 stable"
    )
    if _is_float(dtype):
        yield SampleInput((_special(dtype),), name="nan inf")
    yield SampleInput((np.array(1, dtype),), name="0-d")
    yield SampleInput((np.zeros((2, 0), dtype),), name="empty")


def msort_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((_distinct(rng, (6, 3), dtype),), name="2-D")
    yield SampleInput((_ties(rng, (8, 2, 2), dtype),), name="3-D ties")
    if _is_float(dtype):
        yield SampleInput((_special(dtype).T,), name="nan inf")
    yield SampleInput((np.array(1, dtype),), name="0-d")
    yield SampleInput((np.zeros((0, 3), dtype),), name="empty")


def msort_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput(([1.0, 2.0],)), TypeError, r"input must be a")
    yield ErrorInput(SampleInput((np.ones(3, np.complex64),)), TypeError, r"or bool Tensor")


def topk_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _distinct(rng, (4, 9), dtype)
    yield SampleInput((x, 3), name="k 3")
    yield SampleInput((x, 2), {"largest": False}, name="k 2 smallest")
    yield SampleInput((x, 3, 0), name="dim 0")
    yield SampleInput((_distinct(rng, (2, 3, 5), dtype), 2, -2, False), name="3-D dim -2")
    yield SampleInput((x, 9), name="k = n")
    yield SampleInput((x, 0), name="k 0")
    yield SampleInput((x, 1), {"sorted": False}, name="k 1 unsorted")
    yield SampleInput(
        (_distinct(rng, (2, 128), dtype), 2), {"sorted": False}, name="64k<=n unsorted"
    )
    yield SampleInput((_ties(rng, (6, 3), dtype, 2), 2), name="ties in dim 3")
    yield SampleInput((_ties(rng, (6, 3), dtype, 2), 2, 1, False), name="ties smallest")
    if _is_float(dtype):
        special = np.array([[1, np.nan, 3, 2, -np.inf, np.inf, 0.5]], dtype)
        yield SampleInput((special, 3), name="nan inf largest")
        yield SampleInput((special, 3), {"largest": False}, name="nan inf smallest")
    yield SampleInput((_distinct(rng, (5, 1), dtype), 1), name="size-1 dim")
    yield SampleInput((np.array(2, dtype), 1), name="0-d")
    yield SampleInput((np.zeros((0, 5), dtype), 2), name="empty (0, 5)")


def topk_errors() -> Iterator[ErrorInput]:
    yield from _errors_common((2,))
    x = np.ones((3, 4), np.float32)
    yield ErrorInput(SampleInput((x, 5)), ValueError, r"k must be in the range \[0, 4\]")
    yield ErrorInput(
        SampleInput((np.ones((3, 0), np.float32), 1)),
        ValueError,
        r"k must be in the range \[0, 0\] \(the size of dim=-1 of input of shape \(3, 0\)\)",
    )
    yield ErrorInput(SampleInput((x, -1)), ValueError, r"k must be in the range")
    yield ErrorInput(SampleInput((x, 2.0)), TypeError, r"k must be an int")
    yield ErrorInput(SampleInput((x, 4, 0)), ValueError, r"k must be in the range \[0, 3\]")
    yield ErrorInput(SampleInput((x, 2), {"largest": "no"}), TypeError, r"largest must be a bool")
    yield ErrorInput(SampleInput((x, 2), {"sorted": 0}), TypeError, r"sorted must be a bool")


def kthvalue_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _distinct(rng, (4, 9), dtype)
    yield SampleInput((x, 1), name="k 1")
    yield SampleInput((x, 5), name="k 5")
    yield SampleInput((x, 9), {"keepdim": True}, name="k n keepdim")
    yield SampleInput((x, 3, 0), name="dim 0")
    yield SampleInput((_distinct(rng, (2, 4, 3), dtype), 2, -2, True), name="3-D dim -2 keepdim")
    yield SampleInput((_distinct(rng, (5, 4), dtype).T, 2), name="transposed input")
    if _is_float(dtype):
        special = np.array([[1, np.nan, 3, -np.inf, np.inf]], dtype)
        for k in (2, 4, 5):
            yield SampleInput((special, k), name=f"nan inf k {k}")
    yield SampleInput((_distinct(rng, (3, 1), dtype), 1), name="size-1 dim")
    yield SampleInput((np.array(2, dtype), 1), name="0-d")
    yield SampleInput((np.zeros((0, 4), dtype), 2), name="empty (0, 4)")
    yield SampleInput((np.zeros((0, 4), dtype), 2), {"keepdim": True}, name="empty keepdim")


def kthvalue_errors() -> Iterator[ErrorInput]:
    yield from _errors_common((1,))
    x = np.ones((3, 4), np.float32)
    yield ErrorInput(SampleInput((x, 0)), ValueError, r"k must be in the range \[1, 4\]")
    yield ErrorInput(SampleInput((x, 5)), ValueError, r"k must be in the range \[1, 4\]")
    yield ErrorInput(
        SampleInput((np.ones((3, 0), np.float32), 1)),
        ValueError,
        r"k must be in the range \[1, 0\] \(the size of dim=-1 of input of shape",
    )
    yield ErrorInput(SampleInput((x, None)), TypeError, r"k must be an int")
    yield ErrorInput(SampleInput((x, 1), {"keepdim": 1}), TypeError, r"keepdim must be a bool")
    yield ErrorInput(
        SampleInput((np.zeros((3, 0), np.float32), 1)), ValueError, r"k must be in the range"
    )


def _no_refs() -> Iterator[ReferenceInput]:
    return iter(())


def _median_ref(input: Any, dim: Any = None, keepdim: bool = False) -> Any:
    import torch

    if dim is None:
        return torch.median(input)
    return torch.median(input, dim, keepdim)


def median_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _distinct(rng, (4, 6), dtype)
    yield SampleInput((x,), name="global, even n")
    yield SampleInput((_distinct(rng, (3, 5), dtype),), name="global, odd n")
    yield SampleInput((_ties(rng, (3, 5), dtype),), name="global ties (grad spread)")
    yield SampleInput((x, 1), name="dim 1, even")
    yield SampleInput((x, 0, True), name="dim 0 keepdim")
    yield SampleInput((_distinct(rng, (2, 5, 3), dtype), -2), name="3-D dim -2")
    yield SampleInput((_distinct(rng, (7, 4), dtype).T, 1), name="transposed input")
    if _is_float(dtype):
        nan = np.array([[1, np.nan, 3, 2, np.nan], [4, 0, -1, 2, 5], [np.inf, 1, -np.inf, 0, 9]])
        yield SampleInput((nan.astype(dtype),), name="global nan (grad spread)")
        yield SampleInput((nan.astype(dtype), 1), name="dim nan: first nan")
        yield SampleInput((np.zeros((0,), dtype),), name="global empty: nan")
    yield SampleInput((_distinct(rng, (3, 1), dtype), 1), name="size-1 dim")
    yield SampleInput((np.array(2, dtype),), name="0-d global")
    yield SampleInput((np.array(2, dtype), 0), name="0-d dim 0")
    yield SampleInput((np.zeros((0, 4), dtype), 1), name="empty (0, 4) dim 1")


def median_errors() -> Iterator[ErrorInput]:
    yield from _errors_common()
    x = np.ones((3, 4), np.float32)
    yield ErrorInput(SampleInput((x,), {"keepdim": True}), ValueError, r"keepdim=True needs dim")
    yield ErrorInput(SampleInput((x, 1, "yes")), TypeError, r"keepdim must be a bool")
    yield ErrorInput(
        SampleInput((np.zeros((3, 0), np.float32), 1)), ValueError, r"needs a non-empty dim"
    )


def mode_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((_ties(rng, (4, 12), dtype, 4),), name="ties: last occurrence")
    yield SampleInput((_ties(rng, (10, 3), dtype, 3), 0), name="dim 0")
    yield SampleInput((_ties(rng, (2, 16, 2), dtype, 5), 1, True), name="dim 16 keepdim")
    yield SampleInput((_ties(rng, (3, 6), dtype, 2).T, 1), name="transposed input")
    yield SampleInput((_distinct(rng, (2, 40), dtype),), name="distinct 40: smallest")
    yield SampleInput((np.array([[2, 7, 2, 7, 1]], dtype),), name="equal counts: smallest")
    yield SampleInput((_ties(rng, (3, 1), dtype), 1), name="size-1 dim")
    yield SampleInput((np.array(2, dtype),), name="0-d")
    yield SampleInput((np.zeros((0, 4), dtype), 1), name="empty (0, 4)")
    if dtype == "float32":  # once: bools
        yield SampleInput((rng.random((3, 9)) < 0.3, 1), name="bool")


def mode_errors() -> Iterator[ErrorInput]:
    yield from _errors_common(bools=True)
    x = np.ones((3, 4), np.float32)
    yield ErrorInput(SampleInput((x, 1, 0)), TypeError, r"keepdim must be a bool")
    yield ErrorInput(
        SampleInput((np.zeros((3, 0), np.float32), 1)), ValueError, r"needs a non-empty dim"
    )


def _mode_bench() -> SampleInput:
    x = np.random.default_rng(0).integers(0, 50, (1000, 1000)).astype(np.float32)
    return SampleInput((x,), name="(1000, 1000) float32, 50 levels")


# ----------------------------------------------------------------------------- references

#: The dtypes of the tie references: every integer width the index kernels copy.
TIE_DTYPES = ("float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64")

#: Calls on many ties (and NaN) where PyTorch's CPU kernels answer with their own positions
#: among equal elements (``std::sort``, its partial sort for ``64 * k <= n``, ...), which the
#: aot kernels reproduce: (4, 150) rows are longer than 16 (std::sort's insertion-sort cutoff)
#: and than 64 * k for k = 2.
_TIE_CALLS: Dict[str, Tuple[Tuple[Tuple[Any, ...], Dict[str, Any]], ...]] = {
    "sort": (((0,), {}), ((-1, True), {}), ((), {"dim": 1, "stable": True})),
    "topk": (((20, 1, True, True), {}), ((20, 1, False, False), {}), ((2, 1), {})),
    "kthvalue": (((7, 1), {}),),
    "median": (((1,), {}),),
    "mode": (((1,), {}),),
}


def _tied(shape: Any, dtype: str, seed: int = 0, nan: bool = True) -> np.ndarray:
    """5 levels (many ties), 5% NaN in floating dtypes."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, shape).astype(dtype)
    if nan and dtype.startswith("float"):
        x[rng.random(shape) < 0.05] = np.nan
    return x


def _backends(kwargs: Dict[str, Any]) -> Tuple[str, ...]:
    """A stable sort has one answer, whichever backend the registry picks for it; the other
    calls are PyTorch's own order among ties, which the aot kernels reproduce."""
    return () if kwargs.get("stable") else ("aot",)


def _tie_references(name: str) -> Any:
    """PyTorch's CPU positions among ties and NaN, exactly (values, int64 positions, dtypes),
    on the aot kernels: every dtype in PyNative, float32 in graph mode."""

    def references() -> Iterator[ReferenceInput]:
        for args, kwargs in _TIE_CALLS[name]:
            call = f"{name}{args}{kwargs or ''}"
            for seed, dtype in enumerate(TIE_DTYPES):
                x = _tied((4, 150), dtype, seed=seed)
                sample = SampleInput((x, *args), kwargs, name=f"{call} ties+NaN {dtype}")
                yield ReferenceInput(sample, backends=_backends(kwargs))
            sample = SampleInput((_tied((4, 150), "float32", seed=11), *args), kwargs)
            yield ReferenceInput(
                dataclasses.replace(sample, name=f"{call} ties+NaN graph"),
                backends=_backends(kwargs),
                modes=("graph",),
            )
        if name == "sort":
            # PyTorch sorts a 1-D integer tensor of >= 32768 elements ascending with a stable
            # radix sort; 2-D rows go through std::sort (not stable)
            for shape in ((40000,), (1, 40000)):
                sample = SampleInput((_tied(shape, "int32"),), name=f"radix case {shape}")
                yield ReferenceInput(sample, backends=("aot",))
        if name == "topk":
            sample = SampleInput(
                (_tied((3, 100), "float32", nan=False), 30, 1, False, False),
                name="gradient to torch's positions among ties",
            )
            yield ReferenceInput(sample, backends=("aot",), modes=("graph",), grad=True)

    return references


# ----------------------------------------------------------------------------- entries

#: In the dtypes other than float32, only the samples named here run (the suite's time budget:
#: each sample compiles four graphs).
_KEEP: Dict[str, Dict[str, Tuple[str, ...]]] = {
    "sort": {
        "float16": ("nan inf -0", "ties desc"),
        "float64": ("nan inf -0 desc", "nan inf 50 stable", "1 ulp apart"),
        "int32": ("ties 40 stable", "empty (3, 0)"),
        "int64": ("ties 40 dim 0 stable", "1 ulp apart"),
    },
    "argsort": {
        "float16": ("ties desc",),
        "float64": ("nan inf",),
        "int32": ("defaults",),
        "int64": ("ties desc",),
    },
    "msort": {
        "float16": ("nan inf",),
        "float64": ("2-D",),
        "int32": ("3-D ties",),
        "int64": ("2-D",),
    },
    "topk": {
        "float16": ("nan inf largest", "k 3"),
        "float64": ("nan inf largest", "nan inf smallest", "dim 0"),
        "int32": ("ties smallest",),
        "int64": ("ties in dim 3", "k 0"),
    },
    "kthvalue": {
        "float16": ("nan inf k 4",),
        "float64": ("nan inf k 5", "3-D dim -2 keepdim"),
        "int32": ("k 5",),
        "int64": ("dim 0",),
    },
    "median": {
        "float16": ("global ties (grad spread)", "dim nan: first nan"),
        "float64": ("global nan (grad spread)", "dim 1, even"),
        "int32": ("global, even n",),
        "int64": ("dim 0 keepdim", "global ties (grad spread)"),
    },
    "mode": {
        "float16": ("ties: last occurrence",),
        "float64": ("dim 16 keepdim",),
        "int32": ("equal counts: smallest",),
        "int64": ("dim 0", "transposed input"),
    },
}

_SQUARE = (1000, 1000)

#: op, samples, errors, dispatched op, bench input
_FAMILY: Tuple[Tuple[Any, Any, Any, str, Any], ...] = (
    (sort, sort_samples, sort_errors, "shape.sort", bench(_SQUARE)),
    (argsort, argsort_samples, sort_errors, "shape.sort", bench(_SQUARE)),
    (msort, msort_samples, msort_errors, "shape.sort", bench(_SQUARE)),
    (topk, topk_samples, topk_errors, "shape.topk", bench(_SQUARE, 100)),
    (kthvalue, kthvalue_samples, kthvalue_errors, "shape.kthvalue", bench(_SQUARE, 500)),
    (median, median_samples, median_errors, "shape.median", bench(_SQUARE, 1)),
    (mode, mode_samples, mode_errors, "shape.mode", _mode_bench),
)

OPS: List[OpInfo] = [
    OpInfo(
        name=f"shape.{op.__name__}",
        op=op,
        ref=_median_ref if op is median else torch_ref(f"torch.{op.__name__}"),
        mirrors=f"torch.{op.__name__}",
        torch_apis=(f"torch.{op.__name__}", f"torch.Tensor.{op.__name__}"),
        sample_inputs=_pruned(samples, _KEEP[op.__name__]),
        error_inputs=errors,
        dtypes=DTYPES,
        grad_argnums=() if op is argsort else (0,),
        bench_input=bench_input,
        dispatch_op=dispatch_op,
        references=_tie_references(op.__name__) if op.__name__ in _TIE_CALLS else _no_refs,
        torch_opinfo=(TorchOpInfo(op.__name__),),
    )
    for op, samples, errors, dispatch_op, bench_input in _FAMILY
]
