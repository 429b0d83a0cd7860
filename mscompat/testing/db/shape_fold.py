"""Op database entries for ``mscompat.shape`` ``unfold``/``fold``/``Unfold``/``Fold``."""

from __future__ import annotations

from typing import Any, Iterator, List, Tuple

import numpy as np

from mscompat.shape import Fold, Unfold, fold, unfold
from mscompat.shape.fold import _blocks, _check_params
from mscompat.testing.db._common import torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, ReferenceInput, SampleInput, TorchOpInfo

# (input shape, kwargs, name): edge cases of the block geometry
_CASES: Tuple[Tuple[Tuple[int, ...], dict, str], ...] = (
    ((2, 3, 5, 6), {"kernel_size": 3}, "k3"),
    ((2, 3, 7, 6), {"kernel_size": (2, 3), "stride": (2, 1)}, "k(2,3) s(2,1) non-divisible"),
    ((1, 2, 7, 8), {"kernel_size": 3, "dilation": 2, "padding": 1}, "dilation 2, padding 1"),
    ((2, 2, 6, 7), {"kernel_size": 2, "stride": 3, "padding": (0, 1)}, "stride > kernel"),
    ((1, 3, 4, 5), {"kernel_size": (4, 5)}, "kernel = input: L=1"),
    ((2, 4, 5, 5), {"kernel_size": 1}, "k1"),
    ((1, 2, 3, 3), {"kernel_size": 2, "padding": 2, "stride": 2}, "padding > kernel/2"),
    ((1, 2, 6, 9), {"kernel_size": (1, 3), "dilation": (1, 3), "stride": (2, 2)}, "k(1,3) d3"),
    ((3, 5, 6), {"kernel_size": 2, "stride": 2}, "unbatched"),
    ((0, 2, 4, 4), {"kernel_size": 2}, "empty batch"),
)


def _x(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _cols_shape(shape: Tuple[int, ...], kw: dict) -> Tuple[Tuple[int, ...], Tuple[int, int]]:
    size = (shape[-2], shape[-1])
    k, d, p, s = _check_params(
        "fold", kw["kernel_size"], kw.get("dilation", 1), kw.get("padding", 0), kw.get("stride", 1)
    )
    oh, ow = _blocks(size, k, d, p, s)
    cols = (shape[-3] * k[0] * k[1], oh * ow)
    return (shape[:-3] + cols), size


def unfold_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    cases = [_CASES[i] for i in ((1, 2, 3, 4, 6, 8, 9) if dtype == "float32" else (1,))]
    for shape, kw, name in cases:
        yield SampleInput((_x(rng, shape, dtype),), dict(kw), name=name)
    if dtype != "float32":
        return
    x = _x(rng, (2, 2, 4, 5), dtype)
    x.reshape(-1)[::7] = np.inf
    yield SampleInput((x,), {"kernel_size": 2, "padding": 1}, name="inf values (exact copy)")
    xt = np.ascontiguousarray(_x(rng, (2, 6, 5, 3), dtype)).transpose(0, 3, 2, 1)
    yield SampleInput((xt, [2, 2], 1), {"stride": [1, 2]}, name="non-contiguous, list args")


def fold_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    cases = [_CASES[i] for i in ((1, 2, 3, 4, 6, 8, 9) if dtype == "float32" else (1,))]
    for shape, kw, name in cases:
        cols, size = _cols_shape(shape, kw)
        yield SampleInput((_x(rng, cols, dtype), size), dict(kw), name=name)
    if dtype != "float32":
        return
    cols, _ = _cols_shape((1, 3, 5, 5), {"kernel_size": 3})
    yield SampleInput((_x(rng, cols, dtype), 5, 3), name="int output_size")
    cols, _ = _cols_shape((2, 2, 6, 7), {"kernel_size": 2, "stride": 3, "padding": (0, 1)})
    yield SampleInput(
        (_x(rng, cols, dtype), [6, 7], [2, 2]),
        {"padding": [0, 1], "stride": 3},
        name="list arguments",
    )


def unfold_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for shape, kw, name in (_CASES[2], _CASES[8]):
        yield SampleInput((_x(rng, shape, dtype),), init_kwargs=dict(kw), name=name)


def fold_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for shape, kw, name in (_CASES[2], _CASES[8]):
        cols, size = _cols_shape(shape, kw)
        init = dict(kw, output_size=size)
        yield SampleInput((_x(rng, cols, dtype),), init_kwargs=init, name=name)


def unfold_bench() -> SampleInput:
    x = _x(np.random.default_rng(0), (8, 32, 64, 64), "float32")  # 1e6 elements
    return SampleInput((x, 3), {"padding": 1}, name="8x32x64x64 k3 p1")


def fold_bench() -> SampleInput:
    # the columns of an 8x4x64x64 image with k3 p1: 8 x 36 x 4096 = 1.2e6 elements
    x = _x(np.random.default_rng(0), (8, 36, 4096), "float32")
    return SampleInput((x, (64, 64), 3), {"padding": 1}, name="8x36x4096 -> 8x4x64x64")


def unfold_errors() -> Iterator[ErrorInput]:
    x = np.ones((2, 3, 5, 6), np.float32)
    yield ErrorInput(SampleInput((x, 0)), ValueError, r"kernel_size must be greater than zero")
    yield ErrorInput(SampleInput((x, 2), {"dilation": 0}), ValueError, r"dilation must be")
    yield ErrorInput(SampleInput((x, 2), {"padding": -1}), ValueError, r"padding must be non-neg")
    yield ErrorInput(SampleInput((x, 2), {"stride": (1, 0)}), ValueError, r"stride must be")
    yield ErrorInput(SampleInput((x, 7)), ValueError, r"sliding blocks would have shape \(-1, 0\)")
    yield ErrorInput(SampleInput((x, (2, 3, 4))), ValueError, r"kernel_size must have 2 elements")
    yield ErrorInput(SampleInput((x, 2.0)), TypeError, r"kernel_size must be an int")
    yield ErrorInput(SampleInput((x[0, 0], 2)), ValueError, r"input must be 3-D .* or 4-D")
    yield ErrorInput(
        SampleInput((np.ones((2, 0, 5, 6), np.float32), 2)), ValueError, r"non-zero sizes"
    )
    yield ErrorInput(SampleInput((x.tolist(), 2)), TypeError, r"input must be a mindspore.Tensor")
    yield ErrorInput(
        SampleInput((x, 2), {"padding": 10**9}),
        ValueError,
        r"unfold\(\): .*padding=1000000000 gives the output .* limit of 2\*\*31",
    )


def fold_errors() -> Iterator[ErrorInput]:
    c = np.ones((2, 12, 20), np.float32)  # unfold of (2, 3, 5, 6) with k2
    yield ErrorInput(
        SampleInput((c, (5, 5), 2)), ValueError, r"number of sliding blocks 4 \* 4 = 16, but got"
    )
    yield ErrorInput(SampleInput((c[:, :5], (5, 6), 2)), ValueError, r"divisible by the product")
    yield ErrorInput(SampleInput((c, (5, 6), 0)), ValueError, r"kernel_size must be greater")
    yield ErrorInput(SampleInput((c, (1, 1), 2)), ValueError, r"sliding blocks 0 \* 0 = 0")
    yield ErrorInput(SampleInput((c[None], (5, 6), 2)), ValueError, r"input must be 2-D .* or 3-D")
    yield ErrorInput(SampleInput((c, (5, 6, 7), 2)), ValueError, r"output_size must have 2")
    yield ErrorInput(SampleInput((c, "56", 2)), TypeError, r"output_size must be an int")
    yield ErrorInput(
        SampleInput((np.ones((2, 0, 20), np.float32), (5, 6), 2)), ValueError, r"non-zero sizes"
    )
    yield ErrorInput(SampleInput((c, (5, 6), 2), {"stride": -1}), ValueError, r"stride must be")
    yield ErrorInput(
        SampleInput((np.ones((2, 12, 1), np.float32), (2, 2), 2), {"padding": 10**9}),
        ValueError,
        r"fold\(\): given output_size=\(2, 2\).*padding=\(1000000000, 1000000000\)",
    )


def unfold_cell_errors() -> Iterator[ErrorInput]:
    x = np.ones((2, 3, 5, 6), np.float32)
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"kernel_size": 0}), ValueError, r"kernel_size must be"
    )
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"kernel_size": 6}), ValueError, r"sliding blocks would"
    )


def fold_cell_errors() -> Iterator[ErrorInput]:
    c = np.ones((2, 12, 20), np.float32)
    yield ErrorInput(
        SampleInput((c,), init_kwargs={"output_size": (5, 5), "kernel_size": 2}),
        ValueError,
        r"number of sliding blocks",
    )
    yield ErrorInput(
        SampleInput((c,), init_kwargs={"output_size": 5, "kernel_size": (2, 2), "dilation": 0}),
        ValueError,
        r"dilation must be",
    )


# ----------------------------------------------------------------------------- references

#: im2col / col2im geometries the aot kernels reproduce bit for bit (input shape, kwargs)
_EXACT_CASES: Tuple[Tuple[str, Tuple[int, ...], dict], ...] = (
    ("k3 p1 (a conv's im2col)", (2, 3, 9, 11), {"kernel_size": 3, "padding": 1}),
    ("k2 s2 (patches)", (1, 2, 8, 8), {"kernel_size": 2, "stride": 2}),
    (
        "k(3, 2) d(2, 1) p(2, 0) s(1, 3)",
        (2, 4, 10, 7),
        {"kernel_size": (3, 2), "dilation": (2, 1), "padding": (2, 0), "stride": (1, 3)},
    ),
)


def _exact_references(fold_side: bool) -> Any:
    """unfold (a copy) and fold (PyTorch's col2im order; float16 rounded after every addition),
    forward and gradient, bit-identical to PyTorch on the aot kernels; float16 also in graph
    mode. fold's input is the columns of the unfold case."""

    def references() -> Iterator[ReferenceInput]:
        for name, shape, kw in _EXACT_CASES:
            for dtype in ("float16", "float32", "float64"):
                rng = np.random.default_rng(3)
                x = (rng.standard_normal(shape) * 4).astype(dtype)
                cols, size = _cols_shape(shape, kw)
                if fold_side:
                    c = (rng.standard_normal(cols) * 4).astype(dtype)
                    sample = SampleInput((c, size), dict(kw), name=f"{name} {dtype}")
                else:
                    sample = SampleInput((x,), dict(kw), name=f"{name} {dtype}")
                modes = ("pynative", "graph") if dtype == "float16" else ("pynative",)
                yield ReferenceInput(sample, backends=("aot",), modes=modes, grad=True)

    return references


# ----------------------------------------------------------------------------- entries


def _entry(name: str, op: Any, samples: Any, errors: Any, **extra: Any) -> OpInfo:
    """``torch.nn.functional.<name>``, or the Cell ``torch.nn.<name>`` (float32)."""
    path = f"torch.nn.{name}" if extra.get("is_cell") else f"torch.nn.functional.{name}"
    return OpInfo(
        name=f"shape.{name}",
        op=op,
        ref=torch_ref(path),
        sample_inputs=samples,
        mirrors=path,
        torch_apis=(path,),
        error_inputs=errors,
        **extra,
    )


OPS: List[OpInfo] = [
    _entry(
        "unfold",
        unfold,
        unfold_samples,
        unfold_errors,
        dispatch_op="shape.unfold",
        bench_input=unfold_bench,
        references=_exact_references(fold_side=False),
        torch_opinfo=(TorchOpInfo("nn.functional.unfold", stride=3),),
    ),
    _entry(
        "fold",
        fold,
        fold_samples,
        fold_errors,
        dispatch_op="shape.fold",
        bench_input=fold_bench,
        references=_exact_references(fold_side=True),
    ),
    _entry(
        "Unfold", Unfold, unfold_cell_samples, unfold_cell_errors, dtypes=("float32",), is_cell=True
    ),
    _entry("Fold", Fold, fold_cell_samples, fold_cell_errors, dtypes=("float32",), is_cell=True),
]
