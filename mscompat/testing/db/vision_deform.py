"""Op database entries for ``mscompat.vision`` ``deform_conv2d`` and ``DeformConv2d``.

The oracle is the plain-PyTorch float64 transcription of torchvision's kernel
(:mod:`mscompat.testing.references.deform_conv`; torchvision is not a test dependency), checked
once against torchvision 0.28's compiled op (figures on ``docs/api/vision_deform.rst``).
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional, Tuple

import numpy as np

from mscompat.testing.db._common import every_dtype_first, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput
from mscompat.vision import DeformConv2d, deform_conv2d

_REF = "mscompat.testing.references.deform_conv"


def _out(size: int, k: int, s: int, p: int, d: int) -> int:
    return (size + 2 * p - (d * (k - 1) + 1)) // s + 1


def _pair(v: Any) -> Tuple[int, int]:
    return (v, v) if isinstance(v, int) else (v[0], v[1])


# (name, input shape, out channels, kernel, stride, padding, dilation, offset groups,
#  weight groups, mask, offsets: normal times a scale, or "integer")
# fmt: off
_CASES: Tuple[Tuple[Any, ...], ...] = (
    ("k3 p1, mask", (2, 4, 6, 7), 6, (3, 3), 1, [1, 1], 1, 1, 1, True, 1.5),
    ("integer offsets: exact pixels, exactly -1, near and far (9 px) outside", (1, 3, 5, 6), 4,
     (3, 3), 1, 1, 1, 1, 1, True, "integer"),
    ("offset groups 2, weight groups 2, k(3, 2) s(2, 1) p(1, 2) d(2, 1)", (2, 4, 9, 8), 6,
     (3, 2), (2, 1), (1, 2), (2, 1), 2, 2, True, 1.0),
    ("no mask (v1), offset groups = channels, k(1, 3), no bias", (3, 4, 5, 6), 4, (1, 3), 1,
     (0, 1), 1, 4, 4, False, 1.0),
    ("empty batch", (0, 2, 5, 5), 3, (3, 3), 1, 1, 1, 1, 1, True, 1.0),
)
# fmt: on


def _arrays(case: Tuple[Any, ...], dtype: str, rng: np.random.Generator) -> Any:
    name, shape, cout, k, s, p, d, og, g, use_mask, offsets = case
    n, c, h, w = shape
    (sh, sw), (ph, pw), (dh, dw) = _pair(s), _pair(p), _pair(d)
    oh, ow = _out(h, k[0], sh, ph, dh), _out(w, k[1], sw, pw, dw)
    off_shape = (n, 2 * og * k[0] * k[1], oh, ow)
    if offsets == "integer":  # a quarter of them three times as far
        off = rng.integers(-3, 4, off_shape) * rng.choice([1.0, 1.0, 1.0, 3.0], off_shape)
    else:
        off = rng.standard_normal(off_shape) * offsets
    x = rng.standard_normal(shape)
    weight = rng.standard_normal((cout, c // g, *k)) * 0.5
    bias = None if "no bias" in name else rng.standard_normal(cout)
    mask = rng.uniform(0.0, 1.0, (n, og * k[0] * k[1], oh, ow)) if use_mask else None
    cast = [None if a is None else a.astype(dtype) for a in (x, off, weight, bias, mask)]
    return cast, (s, p, d)


def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for case in _CASES:
        (x, off, weight, bias, mask), (s, p, d) = _arrays(case, dtype, rng)
        # positional, so that mask (argument 7) is differentiated with the others
        yield SampleInput((x, off, weight, bias, s, p, d, mask), name=case[0])


def cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    _, shape, cout, k, s, p, d, _og, _g, _mask, _ = case = _CASES[2]
    (x, off, weight, bias, mask), _ = _arrays(case, dtype, rng)
    init = dict(
        in_channels=shape[1],
        out_channels=cout,
        kernel_size=k,
        stride=s,
        padding=p,
        dilation=d,
        groups=2,
        weight_init=weight,
        bias_init=bias,
    )
    yield SampleInput((x, off, mask), init_kwargs=init, name=case[0])
    (x, off, weight, _, _), _ = _arrays(_CASES[0], dtype, rng)
    init = dict(
        in_channels=4, out_channels=6, kernel_size=3, padding=1, bias=False, weight_init=weight
    )
    yield SampleInput((x, off), init_kwargs=init, name="bias=False, no mask")


def bench() -> SampleInput:
    """The issue's benchmark: 2 x 64 x 56 x 56, 64 output channels, 3 x 3, padding 1."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 64, 56, 56)).astype(np.float32)
    off = (rng.standard_normal((2, 18, 56, 56)) * 2).astype(np.float32)
    weight = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
    bias = rng.standard_normal(64).astype(np.float32)
    return SampleInput((x, off, weight, bias, 1, 1), name="2x64x56x56, 64 out, k3 p1")


def errors() -> Iterator[ErrorInput]:
    x = np.ones((2, 4, 6, 6), np.float32)
    off = np.zeros((2, 18, 6, 6), np.float32)
    w = np.ones((6, 4, 3, 3), np.float32)
    m = np.ones((2, 9, 6, 6), np.float32)

    def e(args: Tuple[Any, ...], kwargs: Optional[dict], kind: Any, match: str) -> ErrorInput:
        return ErrorInput(SampleInput(args, kwargs or {}), kind, match)

    yield e(
        (x, off[:, :17], w),
        {"padding": 1},
        ValueError,
        r"offset.shape\[1\] must be a positive multiple of 2 \* kh \* kw = 18",
    )
    yield e(
        (x, off[:, :, :5], w),
        {"padding": 1},
        ValueError,
        r"offset must have shape \(2, 18, 6, 6\), but got \(2, 18, 5, 6\)",
    )
    yield e(
        (x, off, w),
        {"padding": 1, "mask": m[:, :8]},
        ValueError,
        r"mask must have shape \(2, 9, 6, 6\), but got \(2, 8, 6, 6\)",
    )
    yield e((x, off, w), {"padding": 1, "mask": m[0]}, ValueError, r"mask must be 4-D")
    yield e(
        (x, off, w[:, :3]),
        {"padding": 1},
        ValueError,
        r"weight.shape\[1\] \(3\) must divide the input's channels \(4\)",
    )
    yield e(
        (x, off, np.ones((5, 2, 3, 3), np.float32)),
        {"padding": 1},
        ValueError,
        r"weight.shape\[0\] \(5\) must be divisible by the weight groups \(2",
    )
    yield e(
        (x, np.zeros((2, 54, 6, 6), np.float32), w),
        {"padding": 1},
        ValueError,
        r"offset groups \(3 = .*\) must divide the input's channels \(4\)",
    )
    yield e((x[0], off, w), {"padding": 1}, ValueError, r"input must be 4-D")
    yield e((x, off[0], w), {"padding": 1}, ValueError, r"offset must be 4-D")
    yield e((x, off, w[0]), {"padding": 1}, ValueError, r"weight must be 4-D")
    yield e(
        (x, off, w, np.ones((5,), np.float32)),
        {"padding": 1},
        ValueError,
        r"bias must have shape \(6,\), but got",
    )
    yield e((x, off, w), {"padding": 1, "stride": 0}, ValueError, r"stride must be greater")
    yield e((x, off, w), {"padding": -1}, ValueError, r"padding must be non-negative")
    yield e(
        (x, off, w),
        {"padding": 1, "dilation": (1, 2, 3)},
        ValueError,
        r"dilation must have 2 elements",
    )
    yield e((x, off, w), {"padding": 1.5}, TypeError, r"padding must be an int")
    yield e(
        (x, off.astype(np.float64), w), {"padding": 1}, TypeError, r"offset must have input's dtype"
    )
    yield e(
        (x.astype(np.int32), off, w),
        {"padding": 1},
        TypeError,
        r"input must be a floating-point Tensor",
    )
    yield e((x.tolist(), off, w), {"padding": 1}, TypeError, r"input must be a mindspore.Tensor")
    yield e(
        (x, off, w),
        {"padding": 1, "mask": m.tolist()},
        TypeError,
        r"mask must be a mindspore.Tensor",
    )
    yield e(
        (np.ones((2, 4, 2, 2), np.float32), np.zeros((2, 18, 0, 0), np.float32), w),
        None,
        ValueError,
        r"the output size would be \(0, 0\): too small",
    )
    yield e(
        (np.ones((2, 4, 0, 6), np.float32), off, w),
        {"padding": 1},
        ValueError,
        r"input must have non-zero channels, height and width",
    )


def cell_errors() -> Iterator[ErrorInput]:
    x = np.ones((2, 4, 6, 6), np.float32)
    off = np.zeros((2, 18, 6, 6), np.float32)

    def e(init: dict, kind: Any, match: str) -> ErrorInput:
        return ErrorInput(SampleInput((x, off), init_kwargs=init), kind, match)

    yield e(
        {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "groups": 3},
        ValueError,
        r"in_channels must be divisible by groups",
    )
    yield e(
        {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "weight_init": []},
        TypeError,
        r"weight_init must be a Tensor, an array, an initializer",
    )
    yield e(
        {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "groups": 4},
        ValueError,
        r"out_channels must be divisible by groups",
    )
    yield e(
        {"in_channels": 4, "out_channels": 6, "kernel_size": 0},
        ValueError,
        r"kernel_size must be greater than zero",
    )
    yield e(
        {"in_channels": 4, "out_channels": 6, "kernel_size": 3, "padding": 0},
        ValueError,
        r"offset must have shape \(2, 18, 4, 4\)",
    )


OPS: List[OpInfo] = [
    OpInfo(
        name="vision.deform_conv2d",
        op=deform_conv2d,
        ref=torch_ref(f"{_REF}:deform_conv2d"),
        sample_inputs=every_dtype_first(samples),
        mirrors="torchvision.ops.deform_conv2d",
        torch_apis=("torchvision.ops.deform_conv2d",),
        error_inputs=errors,
        grad_argnums=(0, 1, 2, 3, 7),
        dispatch_op="vision.deform_conv2d",
        bench_input=bench,
    ),
    OpInfo(
        name="vision.DeformConv2d",
        op=DeformConv2d,
        ref=torch_ref(f"{_REF}:DeformConv2d"),
        sample_inputs=cell_samples,
        mirrors="torchvision.ops.DeformConv2d",
        torch_apis=("torchvision.ops.DeformConv2d",),
        error_inputs=cell_errors,
        dtypes=("float32",),
        grad_argnums=(0, 1, 2),
        is_cell=True,
    ),
]
