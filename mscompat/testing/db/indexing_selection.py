"""Op database entries for the selections and their static-shape variants
(``mscompat.indexing.selection``, ``mscompat.indexing.unique``)."""

from __future__ import annotations

from itertools import chain
from typing import Any, Iterator, List

import numpy as np

from mscompat.indexing import (
    argwhere,
    masked_select,
    nonzero,
    nonzero_static,
    topk_mask,
    unique,
    unique_consecutive,
)
from mscompat.testing.db._common import bench, every_dtype_first, normal, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, ReferenceInput, SampleInput, TorchOpInfo

DTYPES = ("float16", "float32", "float64", "int32", "int64")


def _sparse(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return (rng.integers(0, 3, shape) * (rng.random(shape) > 0.5)).astype(dtype)


def _nonzero_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((_sparse(rng, (4, 7), dtype),), name="(4, 7)")
    yield SampleInput((_sparse(rng, (2, 3, 5), dtype),), name="(2, 3, 5)")
    yield SampleInput((np.zeros((3, 4), dtype),), name="all zero")
    yield SampleInput((np.asarray(2, dtype),), name="0-d nonzero")
    yield SampleInput((np.zeros((0, 3), dtype),), name="empty (0, 3)")


def _nonzero_references() -> Iterator[ReferenceInput]:
    """0-d input in graph mode too: its one test is made on the device, not read on the host
    (found by PyTorch's OpInfo sample nonzero(0-d, as_tuple=True), wrong in graph mode)."""
    for value, as_tuple in ((2.5, True), (0.0, False)):
        sample = SampleInput((np.asarray(value, np.float32),), {"as_tuple": as_tuple})
        yield ReferenceInput(sample, modes=("pynative", "graph"))


def _static_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _sparse(rng, (4, 7), dtype)
    count = int((x != 0).sum())
    yield SampleInput((x,), {"size": count + 3}, name="padded")
    yield SampleInput((x,), {"size": max(count - 2, 0), "fill_value": 5}, name="truncated")
    yield SampleInput((_sparse(rng, (2, 3, 5), dtype),), {"size": 40, "fill_value": -7})
    yield SampleInput((np.zeros((3, 4), dtype),), {"size": 2}, name="all zero")
    yield SampleInput((np.asarray(0, dtype),), {"size": 3}, name="0-d")
    yield SampleInput((np.zeros((0, 3), dtype),), {"size": 2, "fill_value": 9}, name="empty")


def _masked_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (4, 6), dtype) if dtype.startswith("float") else _sparse(rng, (4, 6), dtype)
    yield SampleInput((x, rng.random((4, 6)) > 0.5), name="same shape")
    yield SampleInput((x, rng.random((1, 6)) > 0.5), name="broadcast mask")
    yield SampleInput((x[:, :1], rng.random((4, 6)) > 0.3), name="broadcast input")
    yield SampleInput((x, np.zeros((4, 6), bool)), name="none selected")
    yield SampleInput((np.zeros((0, 6), dtype), np.zeros((0, 6), bool)), name="empty")


def _masked_static_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for k, sample in enumerate(_masked_samples(dtype, rng)):
        x, m = sample.args
        n = int(np.broadcast_to(m, np.broadcast_shapes(x.shape, m.shape)).sum())
        size = n + 2 if k % 2 == 0 else max(n - 3, 0)
        yield SampleInput((x, m), {"size": size, "fill_value": -1}, name=f"{sample.name}, {size}")


def masked_select_static_ref(input: Any, mask: Any, *, size: int, fill_value: Any = 0) -> Any:
    """torch.masked_select, padded with ``fill_value`` or cut to ``size``."""
    import torch

    chosen = torch.masked_select(input, mask)[:size]
    pad = torch.full((size - chosen.shape[0],), fill_value, dtype=input.dtype)
    return torch.cat((chosen, pad))


def topk_mask_ref(input: Any, k: Any, dim: int = -1, largest: bool = True) -> Any:
    """The top ``k`` places by a stable sort (equal values: the earlier first)."""
    import torch

    order = torch.sort(input, dim=dim, descending=largest, stable=True).indices
    shape = [1] * input.ndim
    shape[dim] = input.shape[dim]
    places = torch.arange(input.shape[dim]).reshape(shape).expand_as(order).contiguous()
    rank = torch.empty_like(order).scatter_(dim, order, places)
    return rank < int(k)


def _topk_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    ties = (rng.integers(0, 4, (3, 9)) * (0.5 if dtype.startswith("float") else 1)).astype(dtype)
    yield SampleInput((ties, np.asarray(3, np.int64)), name="ties, k as a Tensor")
    yield SampleInput((ties, 4, 0), name="dim 0")
    yield SampleInput((ties, 2, -1, False), name="smallest")
    yield SampleInput((ties, 20), name="k > n")
    yield SampleInput((ties, 0), name="k = 0")


def _unique_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = rng.integers(-3, 4, (5, 6)).astype(dtype)
    yield SampleInput((x,), {"return_inverse": True, "return_counts": True}, name="all")
    yield SampleInput((x,), {"return_counts": True}, name="counts")
    yield SampleInput((np.asarray(3, dtype),), {"return_inverse": True}, name="0-d")
    yield SampleInput((np.zeros((0, 2), dtype),), {"return_counts": True}, name="empty")
    both = {"return_inverse": True, "return_counts": True}
    yield SampleInput((x[:, :2],), {"dim": 0, **both}, name="distinct rows (dim=0)")
    yield SampleInput((x.reshape(2, 3, 5) % 2,), {"dim": -1, **both}, name="dim=-1 of 3-D")


def _consecutive_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = np.repeat(rng.integers(-2, 3, 12), rng.integers(1, 4, 12)).astype(dtype)
    yield SampleInput((x,), {"return_inverse": True, "return_counts": True}, name="runs")
    yield SampleInput((x.reshape(1, -1),), {"return_counts": True}, name="2-D")
    yield SampleInput((np.zeros((0,), dtype),), {"return_inverse": True}, name="empty")
    rows = np.repeat(rng.integers(0, 2, (5, 3)), [2, 1, 3, 1, 2], axis=0).astype(dtype)
    both = {"return_inverse": True, "return_counts": True}
    yield SampleInput((rows,), {"dim": 0, **both}, name="runs of rows (dim=0)")
    yield SampleInput((rows.T.copy(),), {"dim": 1, **both}, name="runs of columns (dim=1)")


_BOTH = ("aot", "composite")
#: PyTorch's unique/unique_consecutive samples (528/264) take ~5 s to generate per dtype: run by
#: tools/opinfo_audit.py (every sample and dtype), not by the suite, which checks the same paths
#: with the entries' dim samples and graph-mode references
_AUDITED = {
    d: "the suite's time budget: PyTorch generates them in ~5 s (tools/opinfo_audit.py runs them)"
    for d in DTYPES
}


def _dynamic_references(fn: str) -> Any:
    """Graph mode without ``size=`` (MindSpore's dynamic-shape UniqueConsecutive), flattened
    (each NaN distinct) and along a dim."""

    def references() -> Iterator[ReferenceInput]:
        both = {"return_inverse": True, "return_counts": True}
        flat = np.array([2.0, -0.0, np.nan, 0.0, 2.0, 2.0, -1.0, np.nan], np.float32)
        rows = np.array([[1, 2], [1, 2], [0, 5], [1, 2]], np.int64)
        for x, kwargs in ((flat, both), (rows, {"dim": 0, **both})):
            yield ReferenceInput(SampleInput((x,), kwargs, name=fn), modes=("graph",))

    return references


def _unique_references() -> Iterator[ReferenceInput]:
    """Each NaN distinct and last, -0.0 == +0.0, infinities, in float16/32; the kernel's own
    dtypes (bool, int8, uint8, int16; int64 extremes: every radix pass); 3,000 elements (the
    inverse written through buckets), on both backends."""
    nan, inf = np.nan, np.inf
    special = np.array([2, -0.0, nan, 0.0, -inf, 2, nan, inf, -1, 0.0, -0.0, nan])
    both = {"return_inverse": True, "return_counts": True}
    for dtype in ("float16", "float32"):
        yield ReferenceInput(SampleInput((special.astype(dtype),), both, name=dtype), _BOTH)
    rng = np.random.default_rng(7)
    for dtype in ("bool", "int8", "uint8", "int16"):
        x = rng.integers(0, 2, 40) if dtype == "bool" else rng.integers(-5, 5, 40) % 250
        yield ReferenceInput(
            SampleInput((x.astype(dtype).reshape(4, 10),), both, name=dtype), _BOTH
        )
    big = np.iinfo(np.int64)
    extremes = np.array([big.max, -3, big.min, 0, big.max, 5 << 40, -(5 << 40), 0], np.int64)
    yield ReferenceInput(SampleInput((extremes,), both, name="int64 extremes"), _BOTH)
    long = rng.integers(-50, 50, (3, 1000)).astype(np.float64) * 0.25
    yield ReferenceInput(SampleInput((long,), both, name="3,000 elements"), _BOTH)


def _unique_static_references() -> Iterator[ReferenceInput]:
    """``size`` beyond the number of elements (the kernel's outputs padded), in graph mode."""
    x = np.array([3.0, -1.0, 3.0, np.nan], np.float32)
    for kwargs in ({"size": 7, "fill_value": -2.0}, {"size": 6}):
        yield ReferenceInput(SampleInput((x,), kwargs), _BOTH, ("pynative", "graph"))


def unique_static_ref(input: Any, fn: str, **kwargs: Any) -> Any:
    """PyTorch's unique / unique_consecutive padded to ``size`` as JAX does (counts 0)."""
    import torch

    size = kwargs.pop("size")
    fill = kwargs.pop("fill_value", None)
    out = getattr(torch, fn)(input, return_inverse=True, return_counts=True, **kwargs)
    values, inverse, counts = out
    if fill is None:
        fill = values[0].item() if values.numel() else 0
    values = torch.cat((values, torch.full((size,), fill, dtype=values.dtype)))[:size]
    counts = torch.cat((counts, torch.zeros(size, dtype=counts.dtype)))[:size]
    return values, inverse, counts


def _unique_static_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = rng.integers(-3, 4, (5, 6)).astype(dtype)
    distinct = len(np.unique(x))
    yield SampleInput((x,), {"size": distinct + 3, "fill_value": 9}, name="padded")
    yield SampleInput((x,), {"size": distinct + 2}, name="padded with the smallest")
    yield SampleInput((x,), {"size": max(distinct - 2, 1)}, name="truncated")


def _static_unique(fn: Any) -> Any:
    name = fn.__name__

    def call(input: Any, **kwargs: Any) -> Any:
        return fn(input, return_inverse=True, return_counts=True, **kwargs)

    call.__name__ = f"{name}_static"
    return call


def _errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput(([1.0],), {"size": 2}), TypeError, "input must be a mindspore")
    yield ErrorInput(SampleInput((x,), {"size": -1}), ValueError, "size must be non-negative")
    yield ErrorInput(SampleInput((x,), {"size": 2.0}), TypeError, "size must be an int")
    yield ErrorInput(SampleInput((x,), {"size": 2, "fill_value": 0.5}), TypeError, "fill_value")


def _nonzero_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput(([1.0],)), TypeError, "input must be a mindspore")
    yield ErrorInput(SampleInput((x,), {"as_tuple": 1}), TypeError, "as_tuple must be a bool")


def _masked_static_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    m = np.zeros((2, 3), bool)
    yield ErrorInput(SampleInput((x, m), {"size": -1}), ValueError, "size must be non-negative")
    yield ErrorInput(SampleInput((x, m), {"size": 1.5}), TypeError, "size must be an int")


def _masked_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(
        SampleInput((x, np.zeros((2, 3), np.float32))), TypeError, "mask must be a bool"
    )
    yield ErrorInput(SampleInput((x, np.zeros((4, 3), bool))), ValueError, "do not broadcast")


def _topk_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, 1.5)), TypeError, "k must be an int")
    yield ErrorInput(SampleInput((x, np.asarray(1.0, np.float32))), TypeError, "k must be an int")
    yield ErrorInput(SampleInput((x, 1, 2)), ValueError, "dim")
    yield ErrorInput(SampleInput((np.asarray(1.0, np.float32), 1)), ValueError, "at least 1-D")


def _unique_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x,), {"dim": 2}), ValueError, "dim must be in the range")
    yield ErrorInput(SampleInput((x,), {"dim": 0, "size": 3}), ValueError, "dim must be None")
    yield ErrorInput(SampleInput((x[:, :0],), {"dim": 0}), ValueError, "0-sized dimension")
    yield ErrorInput(SampleInput((x,), {"return_counts": 1}), TypeError, "return_counts must")
    yield ErrorInput(SampleInput((x,), {"size": -2}), ValueError, "size must be")


OPS: List[OpInfo] = [
    OpInfo(
        name="indexing.nonzero",
        op=nonzero,
        ref=torch_ref("torch.nonzero"),
        mirrors="torch.nonzero",
        torch_apis=("torch.nonzero", "torch.Tensor.nonzero"),
        sample_inputs=every_dtype_first(_nonzero_samples, keep=2),
        error_inputs=_nonzero_errors,
        dtypes=DTYPES,
        grad_argnums=(),
        supports_graph=False,  # a dynamic shape: nonzero_static is the graph-mode form
        torch_opinfo=(TorchOpInfo("nonzero", stride=2),),
        references=_nonzero_references,
    ),
    OpInfo(
        name="indexing.argwhere",
        op=argwhere,
        ref=torch_ref("torch.argwhere"),
        mirrors="torch.argwhere",
        torch_apis=("torch.argwhere", "torch.Tensor.argwhere"),
        sample_inputs=every_dtype_first(_nonzero_samples, keep=1),
        error_inputs=lambda: (e for e in _nonzero_errors() if not e.sample.kwargs),
        dtypes=DTYPES,
        grad_argnums=(),
        supports_graph=False,
        torch_opinfo=(
            TorchOpInfo(
                "argwhere",
                skip_dtypes={
                    d: "the suite's time budget: nonzero's path for every dtype; float32 and "
                    "int64 run (tools/opinfo_audit.py runs every dtype)"
                    for d in ("float16", "float64", "int32")
                },
            ),
        ),
    ),
    OpInfo(
        name="indexing.nonzero_static",
        op=nonzero_static,
        ref=torch_ref("torch.nonzero_static"),
        mirrors="torch.nonzero_static",
        torch_apis=("torch.nonzero_static", "torch.Tensor.nonzero_static"),
        sample_inputs=every_dtype_first(_static_samples, keep=2),
        error_inputs=_errors,
        dtypes=DTYPES,
        grad_argnums=(),
        dispatch_op="indexing.first_positions",
    ),
    OpInfo(
        name="indexing.masked_select",
        op=masked_select,
        ref=torch_ref("torch.masked_select"),
        mirrors="torch.masked_select",
        torch_apis=("torch.masked_select", "torch.Tensor.masked_select"),
        sample_inputs=every_dtype_first(_masked_samples, keep=2),
        error_inputs=_masked_errors,
        dtypes=DTYPES,
        supports_graph=False,  # without size=: a dynamic shape (the static variant below)
        torch_opinfo=(TorchOpInfo("masked_select", stride=2),),
    ),
    OpInfo(
        name="indexing.masked_select",
        variant="static",
        op=masked_select,
        ref=masked_select_static_ref,
        mirrors="torch.masked_select + padding to size",
        sample_inputs=every_dtype_first(_masked_static_samples, keep=2),
        error_inputs=_masked_static_errors,
        dtypes=DTYPES,
    ),
    OpInfo(
        name="indexing.topk_mask",
        op=topk_mask,
        ref=topk_mask_ref,
        mirrors="torch.topk (a mask of its places, for a tensor k)",
        sample_inputs=every_dtype_first(_topk_samples, keep=2),
        error_inputs=_topk_errors,
        dtypes=DTYPES,
        grad_argnums=(),
    ),
    OpInfo(
        name="indexing.unique",
        op=unique,
        ref=torch_ref("torch.unique"),
        mirrors="torch.unique",
        torch_apis=("torch.unique", "torch.Tensor.unique"),
        sample_inputs=every_dtype_first(_unique_samples, keep=2),
        error_inputs=_unique_errors,
        dtypes=DTYPES,
        grad_argnums=(),
        supports_graph=False,  # without size=: a dynamic shape
        dispatch_op="indexing.unique",
        bench_input=bench((1000, 1000), return_counts=True),
        references=lambda: chain(_unique_references(), _dynamic_references("unique")()),
        torch_opinfo=(TorchOpInfo("unique", skip_dtypes=_AUDITED),),
    ),
    OpInfo(
        name="indexing.unique",
        variant="static",
        op=_static_unique(unique),
        ref=lambda input, **kw: unique_static_ref(input, "unique", **kw),
        mirrors="torch.unique + padding to size (as jnp.unique(size=))",
        sample_inputs=every_dtype_first(_unique_static_samples, keep=1),
        error_inputs=lambda: (
            e for e in _unique_errors() if "return_counts" not in e.sample.kwargs
        ),
        dtypes=DTYPES,
        grad_argnums=(),
        dispatch_op="indexing.unique",
        references=_unique_static_references,
        bench_input=bench((1000, 1000), size=1000, fill_value=0.0),
    ),
    OpInfo(
        name="indexing.unique_consecutive",
        op=unique_consecutive,
        ref=torch_ref("torch.unique_consecutive"),
        mirrors="torch.unique_consecutive",
        torch_apis=("torch.unique_consecutive", "torch.Tensor.unique_consecutive"),
        sample_inputs=every_dtype_first(_consecutive_samples, keep=1),
        error_inputs=_unique_errors,
        dtypes=DTYPES,
        grad_argnums=(),
        supports_graph=False,
        torch_opinfo=(TorchOpInfo("unique_consecutive", skip_dtypes=_AUDITED),),
        references=_dynamic_references("unique_consecutive"),
    ),
    OpInfo(
        name="indexing.unique_consecutive",
        variant="static",
        op=_static_unique(unique_consecutive),
        ref=lambda input, **kw: unique_static_ref(input, "unique_consecutive", **kw),
        mirrors="torch.unique_consecutive + padding to size",
        sample_inputs=every_dtype_first(_unique_static_samples, keep=1),
        error_inputs=lambda: (
            e for e in _unique_errors() if "return_counts" not in e.sample.kwargs
        ),
        dtypes=DTYPES,
        grad_argnums=(),
    ),
]
