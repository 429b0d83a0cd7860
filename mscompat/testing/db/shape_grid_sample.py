"""Op database entries for ``mscompat.shape.grid_sample``."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterator, List

import numpy as np

from mscompat.shape import grid_sample
from mscompat.testing import opinfo
from mscompat.testing.db._common import torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, ReferenceInput, SampleInput, TorchOpInfo
from mscompat.testing.tolerances import Tolerance

_PADDINGS = ("zeros", "border", "reflection")


_GRID_MODES = ("bilinear", "nearest", "bicubic")


def grid_sampler_2d(
    input: Any,  # noqa: A002 - PyTorch's argument name
    grid: Any,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
) -> Any:
    """``torch.grid_sampler_2d`` (integer mode and padding codes) as
    :func:`mscompat.shape.grid_sample`."""
    mode = _GRID_MODES[interpolation_mode]
    return grid_sample(input, grid, mode, _PADDINGS[padding_mode], align_corners)


#: ``torch.grid_sampler_3d`` (5-D input): the same codes; ``grid_sample`` tells the ranks apart.
grid_sampler_3d = grid_sampler_2d


def _grid(rng: np.random.Generator, shape: Any, kind: str, dtype: str) -> np.ndarray:
    """Sampling grids: random, exactly on pixel centres and borders, or far outside."""
    if kind == "random":
        g = rng.uniform(-1.25, 1.25, shape)
    elif kind == "exact":
        # pixel centres and edges of 4/5/6-wide inputs, -1, 0, 1 and just outside
        g = rng.choice([-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 1 / 3, -0.6, 1.2], shape)
    else:
        g = rng.uniform(-40.0, 40.0, shape)
        g.reshape(-1)[::5] = 6e4 if dtype == "float16" else 1e6
    return g.astype(dtype)


def _x(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _pick(dtype: str, items: List[SampleInput], others: int) -> Iterator[SampleInput]:
    """All samples for float32; the first ``others`` for float16/float64 (test-time budget)."""
    return iter(items if dtype == "float32" else items[:others])


def samples_2d(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (2, 3, 5, 6), dtype)
    items = [
        SampleInput(
            (x, _grid(rng, (2, 4, 3, 2), "exact", dtype), "nearest", "reflection", False),
            name="nearest reflection ac=False exact (ties to even)",
        ),
        SampleInput(
            (x, _grid(rng, (2, 4, 3, 2), "random", dtype)),
            {"mode": "bilinear", "padding_mode": "border", "align_corners": True},
            name="bilinear border ac=True random",
        ),
        SampleInput((x, _grid(rng, (2, 4, 3, 2), "random", dtype)), name="defaults (None)"),
        SampleInput(
            (x, _grid(rng, (2, 4, 3, 2), "exact", dtype), "bilinear", "reflection", True),
            name="bilinear reflection ac=True exact",
        ),
        SampleInput(
            (x, _grid(rng, (2, 3, 4, 2), "far", dtype), "nearest", "border", True),
            name="nearest far, border ac=True",
        ),
        SampleInput(
            (x, _grid(rng, (2, 3, 4, 2), "far", dtype), "nearest", "zeros", False),
            name="nearest far, zeros",
        ),
        SampleInput(
            (_x(rng, (1, 2, 1, 4), dtype), _grid(rng, (1, 1, 5, 2), "exact", dtype), "nearest"),
            {"padding_mode": "reflection", "align_corners": True},
            name="H=1 input, reflection ac=True",
        ),
        SampleInput(
            (
                np.ascontiguousarray(_x(rng, (2, 6, 5, 3), dtype)).transpose(0, 3, 2, 1),
                _grid(rng, (2, 2, 7, 2), "exact", dtype),
                "bilinear",
                "zeros",
                False,
            ),
            name="non-contiguous input, exact grid",
        ),
        SampleInput(
            (np.zeros((0, 3, 4, 4), dtype), np.zeros((0, 2, 2, 2), dtype), "nearest"),
            name="empty batch",
        ),
    ]
    return _pick(dtype, items[:5], 1)


def _table(x_shape: Any, rows: Any, keep: int) -> Any:
    """Samples ``(x, grid, mode, padding_mode, align_corners)`` from rows ``(grid shape, grid
    kind, mode, padding_mode, align_corners, name)``; the first ``keep`` rows run (float32),
    the first one in float16/float64."""

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = _x(rng, x_shape, dtype)
        items = [
            SampleInput((x, _grid(rng, shape, kind, dtype), *call), name=name)
            for shape, kind, *call, name in rows
        ]
        return _pick(dtype, items[:keep], 1)

    return samples


samples_bicubic = _table(
    (2, 2, 5, 6),
    (
        (
            (2, 3, 4, 2),
            "random",
            "bicubic",
            "reflection",
            False,
            "bicubic reflection ac=False random",
        ),
        ((2, 3, 4, 2), "exact", "bicubic", "zeros", True, "bicubic zeros ac=True exact"),
        ((2, 2, 3, 2), "far", "bicubic", "border", False, "bicubic far, border"),
    ),
    keep=2,
)

samples_3d = _table(
    (2, 2, 3, 4, 5),
    (
        (
            (2, 2, 3, 2, 3),
            "random",
            "bilinear",
            "reflection",
            False,
            "5-D trilinear reflection ac=False random",
        ),
        (
            (2, 2, 3, 2, 3),
            "exact",
            "nearest",
            "zeros",
            True,
            "5-D nearest zeros ac=True exact (ties)",
        ),
        ((2, 2, 2, 2, 3), "far", "bilinear", "border", True, "5-D trilinear far, border"),
    ),
    keep=2,
)


def bench() -> SampleInput:
    rng = np.random.default_rng(0)
    x = _x(rng, (8, 32, 64, 64), "float32")  # 1e6 elements, a feature map warped by a flow
    return SampleInput(
        (x, _grid(rng, (8, 64, 64, 2), "random", "float32"), "bilinear", "zeros", False),
        name="8x32x64x64 bilinear",
    )


def errors() -> Iterator[ErrorInput]:
    rng = np.random.default_rng(0)
    x = _x(rng, (2, 3, 4, 5), "float32")
    g = _grid(rng, (2, 3, 3, 2), "random", "float32")
    yield ErrorInput(SampleInput((x, g, "linear")), ValueError, r"mode must be .*linear")
    yield ErrorInput(SampleInput((x, g, "bilinear", "zero")), ValueError, r"padding_mode must be")
    yield ErrorInput(SampleInput((x, g[..., :1])), ValueError, r"grid must have size 2 in its")
    yield ErrorInput(SampleInput((x, g[:1])), ValueError, r"same batch size")
    yield ErrorInput(SampleInput((x[0], g[0])), ValueError, r"input must be 4-D or 5-D")
    yield ErrorInput(SampleInput((x, g[0])), ValueError, r"grid must have as many dims as input")
    x5 = _x(rng, (2, 3, 2, 4, 5), "float32")
    g5 = _grid(rng, (2, 1, 3, 3, 3), "random", "float32")
    yield ErrorInput(
        SampleInput((x5, g5, "bicubic")), ValueError, r"'bicubic' only supports 4-D input"
    )
    yield ErrorInput(SampleInput((x5, g5[..., :2])), ValueError, r"grid must have size 3")
    yield ErrorInput(SampleInput((x, g.astype(np.float64))), TypeError, r"same dtype as input")
    yield ErrorInput(SampleInput((x.astype(np.int32), g)), TypeError, r"input must be a floating")
    yield ErrorInput(
        SampleInput((x, g), {"align_corners": "yes"}), TypeError, r"align_corners must be a bool"
    )
    yield ErrorInput(
        SampleInput((np.zeros((2, 3, 0, 5), np.float32), g)), ValueError, r"non-empty spatial"
    )
    yield ErrorInput(SampleInput((x, [[0.0, 0.0]])), TypeError, r"grid must be a mindspore.Tensor")


def _grad(dtype: str, atol: float, rtol: float, reason: str) -> opinfo.ToleranceOverride:
    return opinfo.ToleranceOverride(dtype, "grad", Tolerance(atol=atol, rtol=rtol), reason)


_BICUBIC_HALF = (
    "PyTorch accumulates the float16 grid gradient in float16 over 16 taps and the channels; "
    "mscompat accumulates in float32"
)
_BICUBIC_ORDER = (
    "the grid gradient sums 16 taps x C channels of O(10) terms; the order of summation "
    "differs from PyTorch's loop (a few float32 ulps of the terms)"
)

_HALF_5D = (
    "composite backend: the input gradient is summed in float32 and rounded once; PyTorch "
    "rounds each += to float16 (the aot kernel, chosen on CPU, reproduces that bit for bit; the "
    "grid gradient is PyTorch's on both)"
)

_F16_GRID_GRAD = opinfo.ToleranceOverride(
    "float16",
    "grad",
    Tolerance(atol=5e-2, rtol=2e-2),
    "PyTorch accumulates the float16 grid gradient in float16 over channels and corners (each "
    "+= rounds to 2**-11 relative); mscompat accumulates in float32 and rounds once",
)

_HALF_GRID_GRAD = (
    "float16 grid gradient: PyTorch's float16 backward rounds each of its own operations to "
    "float16; ours is the gradient of the op-by-op rounded forward (outputs identical): 1-2 of "
    "520 grid-gradient elements differ by up to 0.0625"
)


def _half_5d() -> Any:
    """float16 5-D input, a grid reaching past the borders (many points clamped onto the same
    border voxels: long float16 accumulations)."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 5, 6, 7)).astype(np.float16)
    return x, rng.uniform(-1.4, 1.4, (2, 4, 5, 6, 3)).astype(np.float16)


def references_5d() -> Iterator[ReferenceInput]:
    """float16 5-D: the composite forward and the GridSample3dHalfBackward kernel give PyTorch's
    output and both gradients bit for bit (PyTorch rounds every operation of its scalar kernel
    to float16, including each += into grad_input and the grid-gradient sums), graph mode too;
    the composite gives PyTorch's grid gradient bit for bit, its input gradient to float16
    accuracy."""
    x, g = _half_5d()
    for mode in ("bilinear", "nearest"):
        for padding in _PADDINGS:
            for align in (False, True):
                sample = SampleInput((x, g, mode, padding, align), name=f"{mode} {padding} {align}")
                yield ReferenceInput(sample, backends=("aot",), grad=True)
    sample = SampleInput((x, g, "bilinear", "border", True), name="bilinear border True")
    yield ReferenceInput(sample, backends=("aot",), modes=("graph",), grad=True)
    yield ReferenceInput(
        sample,
        backends=("composite",),
        grad=True,
        tolerances={
            "output[0]": Tolerance(atol=1e-3, rtol=1e-3),
            "grad[arg 0]": Tolerance(atol=2e-2, rtol=2e-2),
        },
    )


def references_2d() -> Iterator[ReferenceInput]:
    """NaN and far-outside grid points (1e30): PyTorch's output exactly, graph mode."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    g = rng.uniform(-1, 1, (1, 3, 4, 2)).astype(np.float32)
    g[0, 0, :, 0] = [np.nan, 1e30, -1e30, 3.0]
    for args in (("bilinear", "zeros", False), ("bicubic", "border", True)):
        sample = SampleInput((x, g, *args), name=f"NaN and far points {args}")
        yield ReferenceInput(sample, backends=("aot",), modes=("graph",))


_COMMON = dict(
    name="shape.grid_sample",
    op=grid_sample,
    ref=torch_ref("torch.nn.functional.grid_sample"),
    mirrors="torch.nn.functional.grid_sample",
    error_inputs=errors,
    grad_argnums=(0, 1),
)

OPS: List[OpInfo] = [
    OpInfo(
        sample_inputs=samples_2d,
        torch_apis=("torch.nn.functional.grid_sample",),
        tolerance_overrides=(_F16_GRID_GRAD,),
        bench_input=bench,
        dispatch_op="shape.grid_sample",
        backend_dtypes={"aot": ("float32", "float64"), "native": ("float32",)},
        references=references_2d,
        torch_opinfo=(
            TorchOpInfo(
                "nn.functional.grid_sample",
                skip_dtypes={
                    "float16": "torch 2.13's float16 CPU grid_sample returns NaN on the "
                    "(2, 3, 345, 456) sample and its backward corrupts the heap (process abort)"
                },
            ),
            TorchOpInfo("grid_sampler_2d", adapter=grid_sampler_2d),
            # 30 samples up to (20, 21, 22, 23, 24); all 30 pass in float16/32/64 (every fifth
            # runs: float16 alone took 12 s of the suite at stride 2)
            TorchOpInfo("grid_sampler_3d", adapter=grid_sampler_3d, stride=5),
        ),
        known=(
            opinfo.KnownDifference(
                "grid_sampler_2d", "float16", (*range(6), *range(12, 18)), _HALF_GRID_GRAD
            ),
        ),
        **_COMMON,  # type: ignore[arg-type]
    ),
    OpInfo(
        variant="bicubic",
        sample_inputs=samples_bicubic,
        dtypes=("float32", "float16"),
        tolerance_overrides=(
            _grad("float16", 2e-1, 2e-2, _BICUBIC_HALF),
            _grad("float32", 1e-4, 1e-5, _BICUBIC_ORDER),
        ),
        **_COMMON,  # type: ignore[arg-type]
    ),
    OpInfo(
        variant="5d",
        sample_inputs=samples_3d,
        dtypes=("float32", "float64", "float16"),
        tolerance_overrides=(
            dataclasses.replace(_grad("float16", 2e-2, 2e-2, _HALF_5D), backend="composite"),
        ),
        dispatch_op="shape.grid_sample",
        backend_dtypes={"native": ("float32", "float64")},
        references=references_5d,
        **_COMMON,  # type: ignore[arg-type]
    ),
]
