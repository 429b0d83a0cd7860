"""Op database entries for resampling: ``interpolate``, the ``upsample`` functions and Cells."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from mscompat.custom_ops.registry import call
from mscompat.shape.interpolate import (
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
    interpolate,
    upsample,
    upsample_bilinear,
    upsample_nearest,
)
from mscompat.testing import opinfo
from mscompat.testing.db._common import bench, torch_entry
from mscompat.testing.opinfo import ErrorInput, OpInfo, ReferenceInput, SampleInput, TorchOpInfo
from mscompat.testing.tolerances import Tolerance


def upsample_bilinear2d_aa(
    input: Any,  # noqa: A002 - PyTorch's argument name
    output_size: Optional[Sequence[int]] = None,
    align_corners: bool = False,
    scale_factors: Optional[Sequence[float]] = None,
    scales_h: Optional[float] = None,
    scales_w: Optional[float] = None,
) -> Any:
    """``aten._upsample_bilinear2d_aa`` (both overloads) as :func:`mscompat.shape.interpolate`
    with ``mode="bilinear", antialias=True``.

    ATen takes an output size together with the scales its coordinates use (which
    ``interpolate`` cannot express when both are given): that case goes to the dispatched
    primitive directly.
    """
    if output_size is None:
        return interpolate(
            input,
            scale_factor=tuple(scale_factors or ()),
            mode="bilinear",
            align_corners=align_corners,
            antialias=True,
        )
    if scales_h is None and scales_w is None:
        return interpolate(
            input,
            size=tuple(output_size),
            mode="bilinear",
            align_corners=align_corners,
            antialias=True,
        )
    sizes = (int(output_size[0]), int(output_size[1]))
    scales = (scales_h, scales_w)
    return call("shape.interpolate", input, sizes, scales, "bilinear", bool(align_corners), True)


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


_FPN = (2, 256, 32, 64)  # an FPN level


def _fpn(**kwargs: Any) -> Callable[[], SampleInput]:
    return bench(_FPN, name="FPN level x2", scale_factor=2, **kwargs)


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
        (x4, {"size": 10**9}, ValueError, r"size=1000000000, .* more than the limit of 2\*\*31"),
        (x4, {"scale_factor": 1e9}, ValueError, r"scale_factor=1000000000.0 gives the output"),
        (x4, {"scale_factor": float("inf")}, ValueError, r"scale_factor must be finite"),
        (x4, {"scale_factor": (2.0, float("nan"))}, ValueError, r"scale_factor must be finite"),
        (x4[:, :0], {"scale_factor": 2}, ValueError, r"input must have a non-empty channel dim"),
        (x3[:, :0], {"size": 7, "mode": "linear"}, ValueError, r"non-empty channel dim"),
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
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"scale_factor": "x"}), TypeError, r"scale_factor must be a"
    )
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"size": 2**31}), ValueError, r"size=2147483648, .* limit"
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

_HALF_BICUBIC = (
    "PyTorch's CPU float16 bicubic kernel sums in its own order with float16 weights; the "
    "composite backend's matrix products differ by up to 2 float16 ulp for |x| < 4 (the aot "
    "kernel reproduces PyTorch exactly)"
)
_HALF = opinfo.ToleranceOverride(
    "float16", "forward", Tolerance(atol=2e-3, rtol=1e-3), _HALF_BICUBIC, backend="composite"
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


# ----------------------------------------------------------------------------- references

_MODE = {3: "linear", 4: "bilinear", 5: "trilinear"}

#: name -> (input shape, kwargs): PyTorch's linear code paths, reproduced bit for bit by the
#: linear kernel (its fused multiply-adds, its floorf on float64 source indices, its backward
#: accumulation order; float16: float16 forward weights, float32 backward accumulation).
_LINEAR_CASES: Dict[str, Tuple[Tuple[int, ...], Dict[str, Any]]] = {
    # PyTorch's generic kernel (out_h + out_w > 128)
    "bilinear x2 generic": ((2, 5, 32, 64), {"scale_factor": 2}),
    "bilinear down, corners": ((1, 3, 50, 60), {"size": (31, 100), "align_corners": True}),
    # its channels-last kernel (out_h + out_w <= 128): vector lanes and scalar tail channels
    "bilinear small, 11 channels": ((2, 11, 7, 9), {"scale_factor": (1.7, 2.3)}),
    "bilinear 1x1 input, 6 channels": ((1, 6, 1, 1), {"size": (100, 90)}),
    "linear": ((2, 4, 9), {"size": 20}),
    "linear down, corners": ((2, 3, 60), {"size": 100, "align_corners": True}),
    "trilinear": ((2, 3, 4, 5, 6), {"size": (7, 9, 11)}),
    "trilinear recompute": ((1, 2, 6, 5, 4), {"scale_factor": 0.6, "recompute_scale_factor": True}),
}
_LINEAR_GRAPH = ("bilinear x2 generic", "bilinear small, 11 channels", "trilinear")
#: PyTorch's float16 channels-last kernel (small 2-D outputs) has its own vector arithmetic:
#: the kernel's float16 results there are within 1 ulp in a few elements (gradients exact).
_LINEAR_NOT_HALF = ("bilinear small, 11 channels", "bilinear 1x1 input, 6 channels")

#: Bicubic: PyTorch's forward computes its source index and coefficients fused, its backward
#: unfused; the kernel reproduces both (float16 weights for float16).
_CUBIC_CASES: Dict[str, Tuple[Tuple[int, ...], Dict[str, Any]]] = {
    # PyTorch's OpInfo "large" sample (the gradient was 6e-5 off with shared weights)
    "down 345x456 -> 270x270": ((1, 2, 345, 456), {"size": (270, 270)}),
    "down, corners": ((2, 3, 40, 50), {"size": (27, 31), "align_corners": True}),
    "up x2": ((2, 3, 16, 20), {"scale_factor": 2}),
    "up 2.3, taps clamped at the border": ((1, 2, 5, 7), {"scale_factor": 2.3}),
    "same size (PyTorch copies the gradient)": ((1, 2, 6, 5), {"size": (6, 5)}),
    "1x1 input": ((1, 3, 1, 1), {"size": (3, 4), "align_corners": True}),
}
_CUBIC_GRAPH = ("down, corners", "up x2")


def _exact(name: str, shape: Tuple[int, ...], kwargs: Dict[str, Any], graph: bool) -> Any:
    for dtype in ("float16", "float32", "float64"):
        if dtype == "float16" and name in _LINEAR_NOT_HALF:
            continue
        x = np.random.default_rng(2).standard_normal(shape).astype(dtype)
        sample = SampleInput((x,), kwargs, name=f"{name} {dtype}")
        both = graph and (
            dtype == "float32" or (kwargs["mode"] == "bicubic" and dtype == "float16")
        )
        modes = ("pynative", "graph") if both else ("pynative",)
        yield ReferenceInput(sample, backends=("aot",), modes=modes, grad=True)


def interpolate_references() -> Iterator[ReferenceInput]:
    """The aot kernels bit-identical to torch 2.13 CPU, forward and input gradient."""
    for dtype in ("float16", "float32", "float64"):
        # float16: PyTorch accumulates the repeated gradients in float32 and rounds once
        x = np.random.default_rng(1).standard_normal((2, 3, 5, 4)).astype(dtype)
        sample = SampleInput((x,), {"size": (7, 10), "mode": "nearest"}, name=f"nearest {dtype}")
        yield ReferenceInput(sample, backends=("aot",), modes=("pynative", "graph"), grad=True)
    for name, (shape, kwargs) in _LINEAR_CASES.items():
        yield from _exact(name, shape, dict(kwargs, mode=_MODE[len(shape)]), name in _LINEAR_GRAPH)
    for name, (shape, kwargs) in _CUBIC_CASES.items():
        yield from _exact(name, shape, dict(kwargs, mode="bicubic"), name in _CUBIC_GRAPH)
    x = np.zeros((1, 1, 4, 6), np.float32)
    x[0, 0, 1, 2] = np.inf  # inf near (2..3, 4..5), NaN where 0 * inf, finite elsewhere
    sample = SampleInput((x,), {"size": (8, 12), "mode": "bilinear"}, name="inf within its taps")
    yield ReferenceInput(sample, backends=("aot",))


_TORCH_RAISES = "PyTorch itself raises NotImplementedError (antialias has no float16 CPU kernel)"

_INTERPOLATE_MODES = (
    "nearest",
    "nearest-exact",
    "linear",
    "bilinear",
    "bicubic",
    "trilinear",
    "area",
)

_INTERPOLATE = "torch.nn.functional.interpolate"

OPS: List[OpInfo] = [
    torch_entry(
        "shape.interpolate",
        interpolate,
        _INTERPOLATE,
        interpolate_samples,
        interpolate_errors,
        bench_input=_fpn(),
        dispatch_op=_DISPATCH,
        tolerance_overrides=(_HALF,),
        backend_dtypes={"native": ("float32",)},
        references=interpolate_references,
        torch_opinfo=(
            *(TorchOpInfo(f"nn.functional.interpolate.{m}") for m in _INTERPOLATE_MODES),
            TorchOpInfo("_upsample_bilinear2d_aa", adapter=upsample_bilinear2d_aa),
        ),
        # PyTorch's (2, 3, 345, 456) "large input" samples
        known=(
            opinfo.KnownDifference(
                "nn.functional.interpolate.bicubic", "float16", (24, 26), _TORCH_RAISES
            ),
            opinfo.KnownDifference(
                "nn.functional.interpolate.bilinear", "float16", (24, 26), _TORCH_RAISES
            ),
        ),
    ),
    torch_entry(
        "shape.interpolate",
        interpolate,
        _INTERPOLATE,
        bicubic_samples,
        interpolate_errors,
        variant="bicubic",
        torch_apis=(),
        bench_input=bench(_FPN, name="bicubic x2", scale_factor=2, mode="bicubic"),
    ),
    *(
        torch_entry(
            f"shape.{fn.__name__}",
            fn,
            f"torch.nn.functional.{fn.__name__}",
            samples,
            errors,
            dtypes=("float32",),
            bench_input=bench_input,
            torch_opinfo=opinfo,
        )
        for fn, samples, errors, bench_input, opinfo in (
            (upsample, upsample_samples, upsample_errors, _fpn(mode="bilinear"), ()),
            (
                upsample_nearest,
                upsample_nearest_samples,
                upsample_nearest_errors,
                _fpn(),
                (TorchOpInfo("nn.functional.upsample_nearest"),),
            ),
            (
                upsample_bilinear,
                upsample_bilinear_samples,
                upsample_bilinear_errors,
                _fpn(),
                (TorchOpInfo("nn.functional.upsample_bilinear"),),
            ),
        )
    ),
    *(
        torch_entry(
            f"shape.{cell.__name__}",
            cell,
            f"torch.nn.{cell.__name__}",
            samples,
            errors,
            dtypes=("float32",),
            is_cell=True,
            bench_input=bench_input,
        )
        for cell, samples, errors, bench_input in (
            (
                Upsample,
                upsample_cell_samples,
                upsample_cell_errors,
                bench(_FPN, name="FPN level x2", init=True, scale_factor=2.0, mode="bilinear"),
            ),
            (UpsamplingNearest2d, nearest2d_cell_samples, cell2d_errors, None),
            (UpsamplingBilinear2d, bilinear2d_cell_samples, cell2d_errors, None),
        )
    ),
]
