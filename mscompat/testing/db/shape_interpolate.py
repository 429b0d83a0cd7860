"""Op database entries for resampling: ``interpolate``, the ``upsample`` functions and Cells."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np

from mscompat.shape.interpolate import (
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
    interpolate,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, ToleranceOverride
from mscompat.testing.tolerances import Tolerance


def _torch(path: str) -> Callable[..., Any]:
    """A lazily imported ``torch.<path>`` (function, or module class for Cell entries)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        import warnings

        import torch

        obj: Any = torch
        for part in path.split("."):
            obj = getattr(obj, part)
        with warnings.catch_warnings():  # upsample* are deprecated in PyTorch
            warnings.simplefilter("ignore")
            return obj(*args, **kwargs)

    call.__name__ = path.rsplit(".", 1)[-1]
    return call


def _x(rng: np.random.Generator, shape: Tuple[int, ...], dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _sample(
    rng: np.random.Generator, shape: Tuple[int, ...], dtype: str, name: str, **kwargs: Any
) -> SampleInput:
    return SampleInput((_x(rng, shape, dtype),), kwargs, name=name)


# (name, input shape, kwargs, also run in float16/float64)
_CASES: List[Tuple[str, Tuple[int, ...], Dict[str, Any], bool]] = [
    ("nearest int scale 2 (FPN)", (2, 3, 4, 6), {"scale_factor": 2}, True),
    ("nearest scales (0.6, 1.7)", (1, 2, 5, 7), {"scale_factor": (0.6, 1.7)}, False),
    ("nearest 1-D scale 1.7", (1, 2, 5), {"scale_factor": 1.7}, False),
    ("nearest 3-D size", (1, 2, 3, 4, 5), {"size": (5, 7, 3)}, False),
    ("nearest-exact 0.6", (1, 2, 5, 7), {"scale_factor": 0.6, "mode": "nearest-exact"}, False),
    ("linear 1.7", (2, 2, 7), {"scale_factor": 1.7, "mode": "linear"}, True),
    ("bilinear int scale 2", (2, 3, 4, 6), {"scale_factor": 2, "mode": "bilinear"}, True),
    ("bilinear 1.7", (1, 2, 5, 4), {"scale_factor": 1.7, "mode": "bilinear"}, False),
    (
        "bilinear 1.7 recompute",
        (1, 2, 5, 4),
        {"scale_factor": 1.7, "mode": "bilinear", "recompute_scale_factor": True},
        False,
    ),
    (
        "bilinear down 0.6 corners",
        (1, 2, 9, 7),
        {"scale_factor": 0.6, "mode": "bilinear", "align_corners": True},
        False,
    ),
    (
        "trilinear scales",
        (1, 2, 3, 4, 5),
        {"scale_factor": (2, 1.5, 0.6), "mode": "trilinear"},
        True,
    ),
    ("bicubic 1.7", (1, 2, 5, 4), {"scale_factor": 1.7, "mode": "bicubic"}, True),
    (
        "bicubic size corners",
        (1, 2, 4, 6),
        {"size": (7, 3), "mode": "bicubic", "align_corners": True},
        False,
    ),
    ("bicubic down 0.6", (1, 2, 9, 7), {"scale_factor": 0.6, "mode": "bicubic"}, False),
    ("area (9, 7) -> (3, 4)", (1, 2, 9, 7), {"size": (3, 4), "mode": "area"}, True),
    ("area 1-D upsample", (1, 2, 5), {"size": 7, "mode": "area"}, False),
    ("bilinear from 1x1", (1, 2, 1, 1), {"size": (3, 2), "mode": "bilinear"}, False),
    ("bicubic to 1x1", (1, 2, 4, 5), {"size": 1, "mode": "bicubic"}, False),
    (
        "antialias bilinear down",
        (1, 2, 9, 8),
        {"size": (4, 3), "mode": "bilinear", "antialias": True},
        True,
    ),
    (
        "antialias bicubic corners",
        (1, 2, 9, 8),
        {"scale_factor": (0.45, 0.6), "mode": "bicubic", "antialias": True, "align_corners": True},
        True,
    ),
    (
        "antialias bilinear up+down",
        (1, 2, 4, 5),
        {"scale_factor": (1.7, 0.6), "mode": "bilinear", "antialias": True},
        False,
    ),
]


def interpolate_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for name, shape, kwargs, every_dtype in _CASES:
        if dtype != "float32" and not every_dtype:
            continue
        if dtype == "float16" and kwargs.get("antialias"):
            continue  # PyTorch's antialias kernels have no float16 on CPU
        yield _sample(rng, shape, dtype, name, **kwargs)
    if dtype == "float32":
        nc = _x(rng, (1, 2, 6, 5), dtype).transpose(0, 1, 3, 2)
        yield SampleInput((nc,), {"scale_factor": 1.5, "mode": "bilinear"}, name="non-contiguous")
        image = rng.integers(0, 256, (1, 3, 5, 7)).astype(np.uint8)
        yield SampleInput((image,), {"scale_factor": 1.7}, name="uint8 image, nearest")


def _fpn(scale: Any = 2, **kwargs: Any) -> Callable[[], SampleInput]:
    def bench() -> SampleInput:
        x = np.random.default_rng(0).standard_normal((2, 256, 32, 64)).astype(np.float32)
        return SampleInput((x,), {"scale_factor": scale, **kwargs}, name="FPN level x2")

    return bench


def _cell_bench(**init: Any) -> Callable[[], SampleInput]:
    def bench() -> SampleInput:
        x = np.random.default_rng(0).standard_normal((2, 256, 32, 64)).astype(np.float32)
        return SampleInput((x,), init_kwargs=init, name="FPN level x2")

    return bench


def interpolate_errors() -> Iterator[ErrorInput]:
    x3 = np.ones((1, 2, 5), np.float32)
    x4 = np.ones((1, 2, 5, 4), np.float32)
    x5 = np.ones((1, 1, 3, 4, 5), np.float32)
    cases: List[Tuple[np.ndarray, Dict[str, Any], type, str]] = [
        (x4, {"scale_factor": 2, "mode": "cubic"}, ValueError, r"mode must be one of"),
        (x3, {"scale_factor": 2, "mode": "bilinear"}, ValueError, r"mode='bilinear' needs 4-D"),
        (x4, {"scale_factor": 2, "mode": "linear"}, ValueError, r"mode='linear' needs 3-D"),
        (x4, {"scale_factor": 2, "mode": "trilinear"}, ValueError, r"mode='trilinear' needs 5-D"),
        (x5, {"scale_factor": 2, "mode": "bicubic"}, ValueError, r"mode='bicubic' needs 4-D"),
        (np.ones((2, 5), np.float32), {"size": 3}, ValueError, r"input must be 3-D, 4-D or 5-D"),
        (x4, {"size": 3, "scale_factor": 2}, ValueError, r"only one of size or scale_factor"),
        (x4, {}, ValueError, r"either size or scale_factor should be defined"),
        (x4, {"size": 3, "align_corners": True}, ValueError, r"align_corners option can only"),
        (x4, {"size": 3, "mode": "area", "align_corners": False}, ValueError, r"align_corners"),
        (x4, {"size": 3, "antialias": True}, ValueError, r"antialias=True is restricted"),
        (x5, {"size": 3, "mode": "trilinear", "antialias": True}, ValueError, r"antialias=True"),
        (x4, {"size": 3, "recompute_scale_factor": True}, ValueError, r"recompute_scale_factor"),
        (x4, {"size": (3, 4, 5)}, ValueError, r"size must have 2 elements"),
        (x4, {"scale_factor": (2.0,)}, ValueError, r"scale_factor must have 2 elements"),
        (x4, {"size": (3, 4.0)}, TypeError, r"size must be an int or a tuple of ints"),
        (x4, {"size": 3.0}, TypeError, r"size must be an int or a tuple of ints"),
        (x4, {"scale_factor": "2"}, TypeError, r"scale_factor must be a number"),
        (x4, {"size": 0}, ValueError, r"sizes should be greater than 0"),
        (x4, {"scale_factor": 0.1}, ValueError, r"sizes should be greater than 0"),
        (x4, {"size": 3, "mode": "bilinear", "align_corners": 1}, TypeError, r"align_corners"),
        (x4.astype(np.int32), {"size": 3}, TypeError, r"input must be a floating"),
        (x4.astype(np.uint8), {"size": 3, "mode": "bilinear"}, TypeError, r"nearest modes only"),
    ]
    for x, kwargs, err, match in cases:
        yield ErrorInput(SampleInput((x,), kwargs), err, match)


def upsample_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield _sample(rng, (2, 3, 4, 6), dtype, "nearest scale 2", scale_factor=2)
    yield _sample(rng, (1, 2, 5, 4), dtype, "bilinear 1.7", scale_factor=1.7, mode="bilinear")
    yield _sample(
        rng,
        (1, 2, 5, 4),
        dtype,
        "bicubic corners",
        size=(3, 7),
        mode="bicubic",
        align_corners=True,
    )


def upsample_errors() -> Iterator[ErrorInput]:
    x = np.ones((1, 2, 5), np.float32)
    yield ErrorInput(SampleInput((x,), {"scale_factor": 2, "mode": "bilinear"}), ValueError, "4-D")
    yield ErrorInput(SampleInput((x,)), ValueError, r"either size or scale_factor")


def upsample_nearest_errors() -> Iterator[ErrorInput]:
    x = np.ones((1, 2, 5), np.float32)
    yield ErrorInput(SampleInput((x,), {"size": 3, "scale_factor": 2}), ValueError, "only one")
    yield ErrorInput(SampleInput((x,)), ValueError, r"either size or scale_factor")


def upsample_nearest_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield _sample(rng, (2, 3, 4, 6), dtype, "scale 2", scale_factor=2)
    yield _sample(rng, (1, 2, 5, 4, 3), dtype, "3-D size", size=(7, 2, 3))


def upsample_bilinear_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield _sample(rng, (2, 3, 4, 6), dtype, "scale 2", scale_factor=2)
    yield _sample(rng, (1, 2, 5, 4), dtype, "size (3, 7)", size=(3, 7))


def upsample_bilinear_errors() -> Iterator[ErrorInput]:
    x = np.ones((1, 2, 5), np.float32)
    yield ErrorInput(SampleInput((x,), {"size": 3}), ValueError, r"mode='bilinear' needs 4-D")
    yield ErrorInput(SampleInput((x[None],), {"size": 3, "scale_factor": 2}), ValueError, "only")


def upsample_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (1, 2, 5, 4), dtype)
    yield SampleInput((x,), init_kwargs={"scale_factor": 2}, name="nearest int 2")
    yield SampleInput(
        (x,), init_kwargs={"scale_factor": 1.7, "mode": "bilinear"}, name="bilinear 1.7"
    )
    yield SampleInput(
        (x,),
        init_kwargs={"scale_factor": (1.7, 0.6), "mode": "bicubic", "recompute_scale_factor": True},
        name="bicubic recompute",
    )
    yield SampleInput(
        (x,),
        init_kwargs={"size": [3, 6], "mode": "bilinear", "align_corners": True},
        name="size list corners",
    )
    yield SampleInput((_x(rng, (1, 2, 7), dtype),), init_kwargs={"size": 4, "mode": "area"})


def upsample_cell_errors() -> Iterator[ErrorInput]:
    x = np.ones((1, 2, 5), np.float32)
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"scale_factor": 2, "mode": "bilinear"}), ValueError, "4-D"
    )
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"scale_factor": 0}), ValueError, r"either size or scale"
    )
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"size": 3, "align_corners": True}), ValueError, "align"
    )


def nearest2d_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (1, 2, 5, 4), dtype)
    yield SampleInput((x,), init_kwargs={"scale_factor": 2}, name="scale 2")
    yield SampleInput((x,), init_kwargs={"size": (3, 7)}, name="size (3, 7)")


def bilinear2d_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (1, 2, 5, 4), dtype)
    yield SampleInput((x,), init_kwargs={"scale_factor": 2}, name="scale 2")
    yield SampleInput((x,), init_kwargs={"size": (3, 7)}, name="size (3, 7)")


def cell2d_errors() -> Iterator[ErrorInput]:
    x = np.ones((1, 2, 5, 4), np.float32)
    yield ErrorInput(SampleInput((x,), init_kwargs={}), ValueError, r"either size or scale")
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"size": 3, "scale_factor": 2}), ValueError, r"only one"
    )


_DISPATCH = "shape.interpolate"

_HALF = ToleranceOverride(
    "float16",
    "forward",
    Tolerance(atol=2e-3, rtol=1e-3),
    "PyTorch's CPU float16 bicubic kernel sums in its own order with float16 weights; the "
    "composite backend's matrix products differ by up to 2 float16 ulp for |x| < 4 (the aot "
    "kernel reproduces PyTorch exactly)",
)


def bicubic_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield _sample(
        rng, (2, 3, 17, 23), dtype, "bicubic down to (11, 13)", size=(11, 13), mode="bicubic"
    )
    yield _sample(
        rng,
        (1, 2, 5, 7),
        dtype,
        "bicubic x2, corners",
        scale_factor=2,
        mode="bicubic",
        align_corners=True,
    )


def _bicubic_bench() -> SampleInput:
    x = np.random.default_rng(0).standard_normal((2, 256, 32, 64)).astype(np.float32)
    return SampleInput((x,), {"scale_factor": 2, "mode": "bicubic"}, name="bicubic x2")


OPS: List[OpInfo] = [
    OpInfo(
        name="shape.interpolate",
        op=interpolate,
        ref=_torch("nn.functional.interpolate"),
        mirrors="torch.nn.functional.interpolate",
        torch_apis=("torch.nn.functional.interpolate",),
        sample_inputs=interpolate_samples,
        error_inputs=interpolate_errors,
        bench_input=_fpn(2),
        dispatch_op=_DISPATCH,
        tolerance_overrides=(_HALF,),
    ),
    OpInfo(
        name="shape.interpolate",
        variant="bicubic",
        op=interpolate,
        ref=_torch("nn.functional.interpolate"),
        mirrors="torch.nn.functional.interpolate",
        sample_inputs=bicubic_samples,
        error_inputs=interpolate_errors,
        bench_input=_bicubic_bench,
    ),
    OpInfo(
        name="shape.upsample",
        op=upsample,
        ref=_torch("nn.functional.upsample"),
        mirrors="torch.nn.functional.upsample",
        torch_apis=("torch.nn.functional.upsample",),
        sample_inputs=upsample_samples,
        error_inputs=upsample_errors,
        dtypes=("float32",),
        bench_input=_fpn(2, mode="bilinear"),
    ),
    OpInfo(
        name="shape.upsample_nearest",
        op=upsample_nearest,
        ref=_torch("nn.functional.upsample_nearest"),
        mirrors="torch.nn.functional.upsample_nearest",
        torch_apis=("torch.nn.functional.upsample_nearest",),
        sample_inputs=upsample_nearest_samples,
        error_inputs=upsample_nearest_errors,
        dtypes=("float32",),
        bench_input=_fpn(2),
    ),
    OpInfo(
        name="shape.upsample_bilinear",
        op=upsample_bilinear,
        ref=_torch("nn.functional.upsample_bilinear"),
        mirrors="torch.nn.functional.upsample_bilinear",
        torch_apis=("torch.nn.functional.upsample_bilinear",),
        sample_inputs=upsample_bilinear_samples,
        error_inputs=upsample_bilinear_errors,
        dtypes=("float32",),
        bench_input=_fpn(2),
    ),
    OpInfo(
        name="shape.Upsample",
        op=Upsample,
        ref=_torch("nn.Upsample"),
        mirrors="torch.nn.Upsample",
        torch_apis=("torch.nn.Upsample",),
        sample_inputs=upsample_cell_samples,
        error_inputs=upsample_cell_errors,
        dtypes=("float32",),
        is_cell=True,
        bench_input=_cell_bench(scale_factor=2.0, mode="bilinear"),
    ),
    OpInfo(
        name="shape.UpsamplingNearest2d",
        op=UpsamplingNearest2d,
        ref=_torch("nn.UpsamplingNearest2d"),
        mirrors="torch.nn.UpsamplingNearest2d",
        torch_apis=("torch.nn.UpsamplingNearest2d",),
        sample_inputs=nearest2d_cell_samples,
        error_inputs=cell2d_errors,
        dtypes=("float32",),
        is_cell=True,
    ),
    OpInfo(
        name="shape.UpsamplingBilinear2d",
        op=UpsamplingBilinear2d,
        ref=_torch("nn.UpsamplingBilinear2d"),
        mirrors="torch.nn.UpsamplingBilinear2d",
        torch_apis=("torch.nn.UpsamplingBilinear2d",),
        sample_inputs=bilinear2d_cell_samples,
        error_inputs=cell2d_errors,
        dtypes=("float32",),
        is_cell=True,
    ),
]
