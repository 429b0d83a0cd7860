"""Op database entries for ``mscompat.shape.grid_sample``."""

from __future__ import annotations

from typing import Any, Iterator, List, Optional

import numpy as np

from mscompat.shape import grid_sample
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, ToleranceOverride
from mscompat.testing.tolerances import Tolerance

_PADDINGS = ("zeros", "border", "reflection")


def _torch_grid_sample(
    input: Any,
    grid: Any,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: Optional[bool] = None,
) -> Any:
    import warnings

    import torch.nn.functional as F

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return F.grid_sample(input, grid, mode, padding_mode, align_corners)


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


def samples_bicubic(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (2, 2, 5, 6), dtype)
    items = [
        SampleInput(
            (x, _grid(rng, (2, 3, 4, 2), "random", dtype), "bicubic", "reflection", False),
            name="bicubic reflection ac=False random",
        ),
        SampleInput(
            (x, _grid(rng, (2, 3, 4, 2), "exact", dtype), "bicubic", "zeros", True),
            name="bicubic zeros ac=True exact",
        ),
        SampleInput(
            (x, _grid(rng, (2, 2, 3, 2), "far", dtype), "bicubic", "border", False),
            name="bicubic far, border",
        ),
    ]
    return _pick(dtype, items[:2], 1)


def samples_3d(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (2, 2, 3, 4, 5), dtype)
    items = [
        SampleInput(
            (x, _grid(rng, (2, 2, 3, 2, 3), "random", dtype), "bilinear", "reflection", False),
            name="5-D trilinear reflection ac=False random",
        ),
        SampleInput(
            (x, _grid(rng, (2, 2, 3, 2, 3), "exact", dtype), "nearest", "zeros", True),
            name="5-D nearest zeros ac=True exact (ties)",
        ),
        SampleInput(
            (x, _grid(rng, (2, 2, 2, 2, 3), "far", dtype), "bilinear", "border", True),
            name="5-D trilinear far, border",
        ),
    ]
    return _pick(dtype, items[:2], 1)


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


_F16_GRID_GRAD = ToleranceOverride(
    "float16",
    "grad",
    Tolerance(atol=5e-2, rtol=2e-2),
    "PyTorch accumulates the float16 grid gradient in float16 over channels and corners (each "
    "+= rounds to 2**-11 relative); mscompat accumulates in float32 and rounds once",
)

_COMMON = dict(
    ref=_torch_grid_sample,
    mirrors="torch.nn.functional.grid_sample",
    error_inputs=errors,
    grad_argnums=(0, 1),
)

OPS: List[OpInfo] = [
    OpInfo(
        name="shape.grid_sample",
        op=grid_sample,
        sample_inputs=samples_2d,
        torch_apis=("torch.nn.functional.grid_sample",),
        tolerance_overrides=(_F16_GRID_GRAD,),
        bench_input=bench,
        dispatch_op="shape.grid_sample",
        **_COMMON,  # type: ignore[arg-type]
    ),
    OpInfo(
        name="shape.grid_sample",
        variant="bicubic",
        op=grid_sample,
        sample_inputs=samples_bicubic,
        dtypes=("float32", "float16"),
        tolerance_overrides=(
            ToleranceOverride(
                "float16",
                "grad",
                Tolerance(atol=2e-1, rtol=2e-2),
                "PyTorch accumulates the float16 grid gradient in float16 over 16 taps and the "
                "channels; mscompat accumulates in float32",
            ),
            ToleranceOverride(
                "float32",
                "grad",
                Tolerance(atol=1e-4, rtol=1e-5),
                "the grid gradient sums 16 taps x C channels of O(10) terms; the order of "
                "summation differs from PyTorch's loop (a few float32 ulps of the terms)",
            ),
        ),
        **_COMMON,  # type: ignore[arg-type]
    ),
    OpInfo(
        name="shape.grid_sample",
        variant="5d",
        op=grid_sample,
        sample_inputs=samples_3d,
        dtypes=("float32", "float64", "float16"),
        tolerance_overrides=(
            ToleranceOverride(
                "float16",
                "grad",
                Tolerance(atol=2e-2, rtol=2e-2),
                "composite backend: the input gradient is summed in float32 and rounded once; "
                "PyTorch rounds each += to float16 (the aot kernel, chosen on CPU, reproduces "
                "that bit for bit; the grid gradient is PyTorch's on both)",
            ),
        ),
        dispatch_op="shape.grid_sample",
        **_COMMON,  # type: ignore[arg-type]
    ),
]
