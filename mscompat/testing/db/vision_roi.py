"""Op database entries for the RoI ops of ``mscompat.vision`` (``roi_align``, ``roi_pool``,
``ps_roi_align``, ``ps_roi_pool``, their Cells and ``MultiScaleRoIAlign``).

The reference is :mod:`mscompat.testing.references.roi` (loops in plain PyTorch; the suite
never imports torchvision). Checked once against torchvision 0.28's compiled CPU ops on seeded
cases (documented on ``docs/api/vision_roi.rst``): the references agree to float64 rounding, and
the ``aot`` kernels are bit-identical to torchvision in float16, float32 and float64.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

from mscompat.testing.db._common import every_dtype_first, torch_ref
from mscompat.testing.opinfo import (
    ErrorInput,
    OpInfo,
    SampleInput,
    ToleranceOverride,
)
from mscompat.testing.tolerances import Tolerance
from mscompat.vision import (
    MultiScaleRoIAlign,
    PSRoIAlign,
    PSRoIPool,
    RoIAlign,
    RoIPool,
    ps_roi_align,
    ps_roi_pool,
    roi_align,
    roi_pool,
)

_REF = "mscompat.testing.references.roi"

# torchvision's float16 kernels round every operation to float16 (each bin sums up to 4 G^2
# rounded products), the reference is float64: measured up to 2e-3 absolute (values of order 1).
_HALF = (
    ToleranceOverride(
        "float16",
        "forward",
        Tolerance(atol=3e-3, rtol=1e-2),
        "torchvision's float16 kernel rounds each operation; the reference is float64",
    ),
    ToleranceOverride(
        "float16",
        "grad",
        Tolerance(atol=4e-3, rtol=1e-2),
        "torchvision's float16 backward adds in float16; the reference is float64",
    ),
)


def _rois(
    rng: np.random.Generator, n: int, k: int, h: int, w: int, dtype: str, kind: str = "mixed"
) -> np.ndarray:
    """k RoIs (batch index, x1, y1, x2, y2) over an h x w image (coordinates before scaling)."""
    x1, y1 = rng.uniform(-0.3 * w, w, k), rng.uniform(-0.3 * h, h, k)
    bw, bh = rng.uniform(0.5, 0.9 * w, k), rng.uniform(0.5, 0.9 * h, k)
    if kind == "tiny":
        bw, bh = rng.uniform(0.0, 0.6, k), rng.uniform(0.0, 0.6, k)
    elif kind == "huge":  # far beyond every border
        x1, y1 = rng.uniform(-2 * w, -w, k), rng.uniform(-2 * h, -h, k)
        bw, bh = rng.uniform(3 * w, 4 * w, k), rng.uniform(3 * h, 4 * h, k)
    elif kind == "outside":  # entirely off the map
        x1, y1 = rng.uniform(w + 2, 2 * w, k), rng.uniform(-3 * h, -h - 2, k)
    elif kind == "inverted":  # x2 < x1, y2 < y1
        bw, bh = -bw, -bh
    batch = rng.integers(0, n, k).astype(np.float64)
    return np.stack([batch, x1, y1, x1 + bw, y1 + bh], 1).astype(dtype)


def _x(rng: np.random.Generator, shape: Tuple[int, ...], dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _mixed(rng: np.random.Generator, n: int, h: int, w: int, dtype: str) -> np.ndarray:
    """RoIs of every kind in one array: across the border, tiny, huge, off the map, inverted."""
    kinds = ("mixed", "tiny", "huge", "outside", "inverted")
    return np.concatenate([_rois(rng, n, 2 if k == "mixed" else 1, h, w, dtype, k) for k in kinds])


def _align_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (2, 3, 7, 9), dtype)
    yield SampleInput((x, _mixed(rng, 2, 14, 18, dtype), (3, 2), 0.5, 2, False), name="sr 2")
    boxes = [_rois(rng, 1, 2, 7, 9, dtype)[:, 1:], _rois(rng, 1, 3, 7, 9, dtype)[:, 1:]]
    yield SampleInput((x, boxes, 2, 1.0, -1, True), name="list of boxes, adaptive, aligned")
    yield SampleInput((x, _mixed(rng, 2, 28, 36, dtype), 2, 0.25, 0, False), name="sr 0")
    yield SampleInput((x, np.zeros((0, 5), dtype), 2, 1.0, -1, False), name="empty K")
    empty_first = [np.zeros((0, 4), dtype), _mixed(rng, 1, 7, 9, dtype)[:, 1:]]
    yield SampleInput((x, empty_first, (1, 3), 1.0, 3, True), name="list with an empty image")


def _pool_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (2, 3, 7, 9), dtype)
    yield SampleInput((x, _mixed(rng, 2, 14, 18, dtype), (3, 2), 0.5), name="mixed")
    boxes = [_rois(rng, 1, 2, 7, 9, dtype)[:, 1:], _rois(rng, 1, 3, 7, 9, dtype)[:, 1:]]
    yield SampleInput((x, boxes, 2, 1.0), name="list of boxes")
    ties = np.round(x * 2).astype(dtype)  # ties: the first maximum is picked
    yield SampleInput((ties, _mixed(rng, 2, 7, 9, dtype), (2, 3), 1.0), name="ties")
    yield SampleInput((x, np.zeros((0, 5), dtype), 2, 1.0), name="empty K")


def _ps_samples(with_ratio: bool) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = _x(rng, (2, 8, 7, 9), dtype)
        extra = (2,) if with_ratio else ()
        yield SampleInput((x, _mixed(rng, 2, 14, 18, dtype), 2, 0.5, *extra), name="mixed")
        boxes = [_rois(rng, 1, 2, 7, 9, dtype)[:, 1:], _rois(rng, 1, 1, 7, 9, dtype)[:, 1:]]
        extra = (-1,) if with_ratio else ()
        yield SampleInput((x[:, :6], boxes, (3, 2), 1.0, *extra), name="list, (3, 2)")
        yield SampleInput((x, np.zeros((0, 5), dtype), 2, 1.0), name="empty K")

    samples.__name__ = "ps_samples"
    return samples


def _errors(fn: Any, ps: bool = False) -> Any:
    def errors() -> Iterator[ErrorInput]:
        c = 8 if ps else 3
        x = np.zeros((2, c, 5, 5), np.float32)
        rois = np.array([[0, 0, 0, 2, 2]], np.float32)
        yield ErrorInput(SampleInput((x[0], rois, 2)), ValueError, "input must be a 4-D")
        yield ErrorInput(
            SampleInput((x.astype(np.int32), rois, 2)), TypeError, "input must be a floating"
        )
        yield ErrorInput(SampleInput((x, rois[:, 1:], 2)), ValueError, r"Tensor\[K, 5\]")
        yield ErrorInput(SampleInput((x, [rois], 2)), ValueError, r"boxes\[0\] must be a Tensor")
        yield ErrorInput(SampleInput((x, 3, 2)), TypeError, "boxes must be a Tensor")
        yield ErrorInput(SampleInput((x, rois.astype(np.float64), 2)), TypeError, "dtype of input")
        bad = rois.copy()
        bad[0, 0] = 2
        yield ErrorInput(SampleInput((x, bad, 2)), ValueError, "batch index")
        if fn == "roi_align":
            bad[0, 0] = -1
            yield ErrorInput(SampleInput((x, bad, 2)), ValueError, "batch index")
        yield ErrorInput(SampleInput((x, rois, 0)), ValueError, "output_size must be positive")
        yield ErrorInput(SampleInput((x, rois, (2, 2, 2))), TypeError, "output_size must be")
        yield ErrorInput(SampleInput((x, rois, 2.5)), TypeError, "output_size must be")
        yield ErrorInput(SampleInput((x, rois, 2, "1")), TypeError, "spatial_scale")
        if fn in ("roi_align", "ps_roi_align"):
            yield ErrorInput(SampleInput((x, rois, 2, 1.0, 1.5)), TypeError, "sampling_ratio")
        if fn == "roi_align":
            yield ErrorInput(SampleInput((x, rois, 2, 1.0, 2, "yes")), TypeError, "aligned")
        if ps:
            yield ErrorInput(SampleInput((x[:, :6], rois, 2)), ValueError, "multiple of")

    errors.__name__ = f"{fn}_errors"
    return errors


def _bench_align() -> SampleInput:
    return _fpn_bench(with_options=True)


def _bench_pool() -> SampleInput:
    return _fpn_bench(with_options=False)


def _fpn_bench(with_options: bool) -> SampleInput:
    """FPN-like: 2 x 256 x 50 x 68 features (stride 16 of 800 x 1088), 512 RoIs, 7 x 7."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 256, 50, 68)).astype(np.float32)
    xy = rng.uniform(0, 1000, (512, 2))
    wh = np.exp(rng.uniform(np.log(16), np.log(600), (512, 2)))
    batch = rng.integers(0, 2, (512, 1))
    rois = np.concatenate([batch, xy, xy + wh], 1).astype(np.float32)
    extra = (1.0 / 16, 2, False) if with_options else (1.0 / 16,)
    return SampleInput((x, rois, 7, *extra), name="FPN: (2, 256, 50, 68), 512 RoIs, 7x7")


def _cell_samples(kind: str) -> Any:
    init: Dict[str, Dict[str, Any]] = {
        "RoIAlign": {
            "output_size": (2, 3),
            "spatial_scale": 0.5,
            "sampling_ratio": -1,
            "aligned": True,
        },
        "RoIPool": {"output_size": 2, "spatial_scale": 0.5},
        "PSRoIAlign": {"output_size": 2, "spatial_scale": 0.5, "sampling_ratio": 2},
        "PSRoIPool": {"output_size": (2, 2), "spatial_scale": 0.5},
    }

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        c = 8 if kind.startswith("PS") else 3
        x = _x(rng, (2, c, 6, 7), dtype)
        yield SampleInput((x, _rois(rng, 2, 4, 12, 14, dtype)), init_kwargs=init[kind])

    samples.__name__ = f"{kind}_samples"
    return samples


def _cell_errors(name: str) -> Any:
    def errors() -> Iterator[ErrorInput]:
        x = np.zeros((1, 8, 4, 4), np.float32)
        init: Dict[str, Any] = {"output_size": 2, "spatial_scale": 1.0}
        if name in ("RoIAlign", "PSRoIAlign"):
            init["sampling_ratio"] = 2
        yield ErrorInput(
            SampleInput((x, np.zeros((1, 4), np.float32)), init_kwargs=init), ValueError, "K, 5"
        )

    return errors


def _pyramid_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    feats = {
        name: _x(rng, (2, 3, s, s + 2), dtype)
        for name, s in (("p2", 32), ("p3", 16), ("p4", 8), ("p5", 4))
    }
    xy = rng.uniform(0, 100, (6, 2))
    wh = np.exp(rng.uniform(np.log(4), np.log(120), (6, 2)))
    boxes = np.concatenate([xy, xy + wh], 1).astype(dtype)
    init = {
        "featmap_names": ["p2", "p3", "p4", "p5"],
        "output_size": 3,
        "sampling_ratio": 2,
        "canonical_scale": 64,  # levels 2-5 all used by these boxes
        "canonical_level": 3,
    }
    shapes = [(128, 130), (120, 128)]
    yield SampleInput((feats, [boxes[:4], boxes[4:]], shapes), init_kwargs=init, name="4 levels")


def _pyramid_errors() -> Iterator[ErrorInput]:
    feats = {"p2": np.zeros((1, 3, 8, 8), np.float32)}
    init = {"featmap_names": ["p2"], "output_size": 2, "sampling_ratio": 2}
    box = np.zeros((1, 4), np.float32)
    yield ErrorInput(SampleInput((feats, [box], []), init_kwargs=init), ValueError, "image_shapes")
    yield ErrorInput(
        SampleInput((feats, [box, box], [(32, 32)]), init_kwargs=init), ValueError, "2 images"
    )
    yield ErrorInput(
        SampleInput((feats, [box], [(32, 32)]), init_kwargs=dict(init, featmap_names=["p9"])),
        ValueError,
        "featmap_names",
    )


def _fn_entry(name: str, op: Any, samples: Any, errors: Any, **extra: Any) -> OpInfo:
    return OpInfo(
        name=f"vision.{name}",
        op=op,
        ref=torch_ref(f"{_REF}:{name}"),
        mirrors=f"torchvision.ops.{name}",
        torch_apis=(f"torchvision.ops.{name}",),
        sample_inputs=every_dtype_first(samples, keep=1),
        error_inputs=errors,
        dispatch_op=f"vision.{name}",
        tolerance_overrides=_HALF,
        **extra,
    )


def _cell_entry(name: str, op: Any) -> OpInfo:
    return OpInfo(
        name=f"vision.{name}",
        op=op,
        ref=torch_ref(f"{_REF}:{name}"),
        mirrors=f"torchvision.ops.{name}",
        torch_apis=(f"torchvision.ops.{name}",),
        sample_inputs=_cell_samples(name),
        error_inputs=_cell_errors(name),
        dtypes=("float32",),
        is_cell=True,
    )


OPS: List[OpInfo] = [
    _fn_entry(
        "roi_align",
        roi_align,
        _align_samples,
        _errors("roi_align"),
        bench_input=_bench_align,
        backend_dtypes={"composite": ("float64",)},
    ),
    _fn_entry(
        "roi_pool",
        roi_pool,
        _pool_samples,
        _errors("roi_pool"),
        bench_input=_bench_pool,
        backend_dtypes={"composite": ("float64",)},
    ),
    _fn_entry("ps_roi_align", ps_roi_align, _ps_samples(True), _errors("ps_roi_align", True)),
    _fn_entry("ps_roi_pool", ps_roi_pool, _ps_samples(False), _errors("ps_roi_pool", True)),
    _cell_entry("RoIAlign", RoIAlign),
    _cell_entry("RoIPool", RoIPool),
    _cell_entry("PSRoIAlign", PSRoIAlign),
    _cell_entry("PSRoIPool", PSRoIPool),
    OpInfo(
        name="vision.MultiScaleRoIAlign",
        op=MultiScaleRoIAlign,
        ref=torch_ref(f"{_REF}:MultiScaleRoIAlign"),
        mirrors="torchvision.ops.MultiScaleRoIAlign",
        torch_apis=("torchvision.ops.MultiScaleRoIAlign",),
        sample_inputs=_pyramid_samples,
        error_inputs=_pyramid_errors,
        dtypes=("float32",),
        grad_argnums=(),
        is_cell=True,
    ),
]
