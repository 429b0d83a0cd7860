"""Resampling with PyTorch semantics: ``interpolate``, the ``upsample`` functions and their Cells.

Mirrors ``torch.nn.functional.interpolate`` (every mode: ``nearest``, ``nearest-exact``,
``linear``, ``bilinear``, ``bicubic``, ``trilinear``, ``area``; ``antialias`` for bilinear and
bicubic), ``upsample``, ``upsample_nearest``, ``upsample_bilinear``, ``nn.Upsample``,
``nn.UpsamplingNearest2d`` and ``nn.UpsamplingBilinear2d``.

Resampling is separable: each spatial axis is resampled on its own. Shapes are static, so the
per-axis source indices and weights are computed in NumPy when the call is traced, with
PyTorch's CPU arithmetic (coordinates in float32 for float16/float32 inputs, float64 for
float64), and applied with MindSpore ops: a broadcast (integer nearest upsampling), a gather
(other nearest), a reshape-mean (area with an integer ratio) or a matrix product with the
``(out, in)`` weight matrix (linear, bicubic, antialias, area). Gradients follow automatically.

Backends (``shape.interpolate``): on CPU the ``aot`` kernels run ``nearest``/``nearest-exact``
(``custom_ops/cpu/nearest_kernel.cc``: the same index tables, PyTorch's scatter-add backward)
and ``linear``/``bilinear``/``trilinear`` (``custom_ops/cpu/linear_kernel.cc``: the same index
and weight tables, PyTorch's CPU arithmetic and backward loop; float16 in float32 with float16
forward weights) and ``bicubic``
without antialias (``custom_ops/cpu/cubic_kernel.cc``: PyTorch's source coordinates, Keys'
coefficients and arithmetic, forward and backward; float16 with float16 weights);
``ops.interpolate`` (``native``) runs float32 linear modes where its rounding gives PyTorch's
numbers; everything else is the composite above.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional, Sequence, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_float_tensor, check_tensor, is_int
from mscompat.custom_ops import cubic as _cubic_kernels
from mscompat.custom_ops import linear as _linear_kernels
from mscompat.custom_ops import nearest as _nearest_kernels
from mscompat.custom_ops.registry import TensorSpec, call, device_target, register
from mscompat.shape.adaptive_pool import _avg_composite as adaptive_avg_composite

__all__ = [
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "interpolate",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]

Size = Union[int, Sequence[int], None]
Scale = Union[float, Sequence[float], None]

_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
_NO_CORNERS = ("nearest", "nearest-exact", "area")
_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_CUBIC_A = -0.75  # PyTorch's upsample_bicubic2d coefficient
_AA_CUBIC_A = -0.5  # PyTorch's _upsample_bicubic2d_aa filter (as PIL)


# ----------------------------------------------------------------------------- argument plan


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


@constexpr
def _plan(
    shape: Tuple[int, ...],
    size: Any,
    scale_factor: Any,
    mode: Any,
    align_corners: Any,
    recompute_scale_factor: Any,
    antialias: Any,
) -> Tuple[Tuple[int, ...], Tuple[Optional[float], ...], bool]:
    """Validate as ``torch.nn.functional.interpolate``; return (output sizes, scales, corners).

    ``scales`` holds, per axis, the scale factor PyTorch's kernel uses in the coordinate
    transform (None: derived from the sizes).
    """
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, _MODES))}, but got {mode!r}")
    if mode in _NO_CORNERS:
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                f"linear | bilinear | bicubic | trilinear, but got mode={mode!r} and "
                f"align_corners={align_corners!r}"
            )
        corners = False
    else:
        if align_corners is not None and not isinstance(align_corners, bool):
            raise TypeError(f"align_corners must be a bool or None, but got {align_corners!r}")
        corners = bool(align_corners)
    if not isinstance(antialias, bool):
        raise TypeError(f"antialias must be a bool, but got {antialias!r}")
    if recompute_scale_factor is not None and not isinstance(recompute_scale_factor, bool):
        raise TypeError(
            f"recompute_scale_factor must be a bool or None, but got {recompute_scale_factor!r}"
        )
    ndim = len(shape)
    if ndim not in (3, 4, 5):
        raise ValueError(
            "input must be 3-D, 4-D or 5-D (N, C, d1[, d2[, d3]]) for mode "
            f"{mode!r}, but got input of shape {tuple(shape)}"
        )
    dim = ndim - 2
    if mode in _MODE_DIMS and _MODE_DIMS[mode] != dim:
        need = _MODE_DIMS[mode] + 2
        raise ValueError(
            f"mode={mode!r} needs {need}-D input, but got input of shape {tuple(shape)} ({ndim}-D)"
        )
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError(
            "antialias=True is restricted to the bilinear and bicubic modes with a 4-D input, "
            f"but got mode={mode!r}"
        )
    spatial = tuple(int(n) for n in shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError(
            "only one of size or scale_factor should be defined, but got "
            f"size={size!r} and scale_factor={scale_factor!r}"
        )
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined, but both are None")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError(
                "recompute_scale_factor is not meaningful with an explicit size, but got "
                f"size={size!r} and recompute_scale_factor=True"
            )
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    f"size must have {dim} elements (one per spatial dim of an input of shape "
                    f"{tuple(shape)}), but got size={size!r}"
                )
            if not all(is_int(s) for s in size):
                raise TypeError(f"size must be an int or a tuple of ints, but got size={size!r}")
            out = tuple(int(s) for s in size)
        elif is_int(size):
            out = (int(size),) * dim
        else:
            raise TypeError(f"size must be an int or a tuple of ints, but got size={size!r}")
        scales: Tuple[Optional[float], ...] = (None,) * dim
    else:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f"scale_factor must have {dim} elements (one per spatial dim of an input of "
                    f"shape {tuple(shape)}), but got scale_factor={scale_factor!r}"
                )
            factors = tuple(scale_factor)
        else:
            factors = (scale_factor,) * dim
        if not all(_is_number(s) for s in factors):
            raise TypeError(
                "scale_factor must be a number or a tuple of numbers, but got "
                f"scale_factor={scale_factor!r}"
            )
        # PyTorch: output size = floor(in * scale) in double precision.
        out = tuple(int(math.floor(n * float(s))) for n, s in zip(spatial, factors))
        if recompute_scale_factor or mode == "area":
            scales = (None,) * dim
        else:
            scales = tuple(float(s) for s in factors)
    if any(o <= 0 for o in out) or any(n <= 0 for n in spatial):
        raise ValueError(
            "input and output sizes should be greater than 0, but got input spatial sizes "
            f"{spatial} and output sizes {out} (size={size!r}, scale_factor={scale_factor!r})"
        )
    return out, scales, corners


# ----------------------------------------------------------------------------- per-axis weights


def _ct(dtype_name: str) -> Any:
    """PyTorch's CPU coordinate type (``opmath_t``): float64 for float64, float32 otherwise."""
    return np.float64 if dtype_name == "float64" else np.float32


def _scale_value(n_in: int, n_out: int, scale: Optional[float], ct: Any) -> Any:
    """``compute_scales_value``: 1/scale when a scale is given, else in/out (in ``ct``)."""
    if scale is not None and scale > 0:
        return ct(1.0 / scale)
    return ct(n_in) / ct(n_out)


def _area_scale(n_in: int, n_out: int, corners: bool, scale: Optional[float], ct: Any) -> Any:
    """``area_pixel_compute_scale``."""
    if corners:
        return ct(n_in - 1) / ct(n_out - 1) if n_out > 1 else ct(0)
    return _scale_value(n_in, n_out, scale, ct)


def _source(ratio: Any, n_out: int, corners: bool, cubic: bool, ct: Any) -> np.ndarray:
    """``area_pixel_compute_source_index`` for every output index (in ``ct``)."""
    i = np.arange(n_out).astype(ct)
    if corners:
        return (ratio * i).astype(ct)
    # ``scale * (dst + 0.5) - 0.5`` is compiled to a fused multiply-add in PyTorch's CPU kernels
    # (one rounding; measured: 345 -> 270 rows differ by 1 ulp of the source index otherwise,
    # 2.6e-4 in the output). float32: the float64 product and difference are exact, then
    # rounded once; float64: exact rationals, rounded once.
    half = i + ct(0.5)
    if ct is np.float32:
        src = (np.float64(ratio) * half.astype(np.float64) - 0.5).astype(np.float32)
    else:
        r = Fraction(float(ratio))
        src = np.array([float(r * Fraction(float(h)) - Fraction(1, 2)) for h in half])
    return src if cubic else np.maximum(src, ct(0))


def _nearest_index(
    n_in: int, n_out: int, scale: Optional[float], exact: bool, special: bool
) -> np.ndarray:
    """PyTorch's nearest source index per output index (``nearest_idx`` and friends)."""
    i = np.arange(n_out)
    s = _scale_value(n_in, n_out, scale, np.float32)
    if exact:
        # floorf((dst + 0.5) * scale): the product in double, rounded to float, then floored.
        src = np.floor(((i + 0.5) * np.float64(s)).astype(np.float32))
    else:
        # The 2-D kernel special-cases equal sizes and exact doubling; 1-D and 3-D do not.
        if special and n_out == n_in:
            return i
        if special and n_out == 2 * n_in:
            return i >> 1
        src = np.floor(i.astype(np.float32) * s)
    return np.minimum(src.astype(np.int64), n_in - 1)


def _linear_taps(
    n_in: int, n_out: int, scale: Optional[float], corners: bool, dtype_name: str, half: bool
) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``compute_source_index_and_lambda`` for every output index: (i0, i1, l0, l1).

    ``half``: the weights rounded to float16 first, as PyTorch's 1-D and 3-D float16 kernels
    do (its 2-D float16 kernel keeps them in float32). An axis of unchanged size is a copy
    (i0 = i1 = i, l0 = 1, l1 = 0), as PyTorch special-cases it.
    """
    ct = _ct(dtype_name)
    if n_in == n_out:
        i = np.arange(n_in, dtype=np.int64)
        return i, i, np.ones(n_in, ct), np.zeros(n_in, ct)
    src = _source(_area_scale(n_in, n_out, corners, scale, ct), n_out, corners, False, ct)
    # guard_index_and_lambda floors with floorf: a float64 source index is rounded to float32
    # first (58.99999999999999 -> 59, weight 0), the weight is then taken in float64.
    i0 = np.minimum(np.floor(src.astype(np.float32)).astype(np.int64), n_in - 1)
    l1 = np.clip(src - i0.astype(ct), ct(0), ct(1)).astype(ct)
    if half:
        l1 = l1.astype(np.float16)
    l0 = (l1.dtype.type(1) - l1).astype(l1.dtype)
    return i0, i0 + (i0 < n_in - 1), l0, l1


def _linear_matrix(
    n_in: int,
    n_out: int,
    scale: Optional[float],
    corners: bool,
    dtype_name: str,
    half_lambdas: bool = False,
) -> np.ndarray:
    """(out, in) weights of linear interpolation (see :func:`_linear_taps`)."""
    if n_in == n_out:
        return np.eye(n_in)
    i0, i1, l0, l1 = _linear_taps(n_in, n_out, scale, corners, dtype_name, half_lambdas)
    w = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    np.add.at(w, (rows, i0), l0.astype(np.float64))
    np.add.at(w, (rows, i1), l1.astype(np.float64))
    return w


def _cubic_conv1(x: np.ndarray, a: Any) -> np.ndarray:
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic_conv2(x: np.ndarray, a: Any) -> np.ndarray:
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def _cubic_matrix(
    n_in: int, n_out: int, scale: Optional[float], corners: bool, dtype_name: str
) -> np.ndarray:
    """(out, in) weights of bicubic interpolation, A = -0.75, border taps clamped.

    float16: each tap's weight is rounded to float16, as PyTorch's float16 kernel stores them
    (measured: fewer mismatched elements against torch by 10x).
    """
    ct = _ct(dtype_name)
    a, one = ct(_CUBIC_A), ct(1)
    src = _source(_area_scale(n_in, n_out, corners, scale, ct), n_out, corners, True, ct)
    idx = np.minimum(np.floor(src).astype(np.int64), n_in - 1)
    t = np.clip(src - idx.astype(ct), ct(0), one).astype(ct)
    coeffs = (
        _cubic_conv2(t + one, a),
        _cubic_conv1(t, a),
        _cubic_conv1(one - t, a),
        _cubic_conv2(ct(2) - t, a),
    )
    w = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    for k, c in enumerate(coeffs):
        taps = np.clip(idx - 1 + k, 0, n_in - 1)
        c = c.astype(np.float16) if dtype_name == "float16" else c.astype(ct)
        np.add.at(w, (rows, taps), c.astype(np.float64))
    return w


def _aa_filter(x: np.ndarray, cubic: bool, ct: Any) -> np.ndarray:
    x = np.abs(x)
    if not cubic:
        return np.where(x < 1, 1 - x, 0).astype(ct)
    a = ct(_AA_CUBIC_A)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = (((x - 5) * x + 8) * x - 4) * a
    return np.where(x < 1, near, np.where(x < 2, far, 0)).astype(ct)


def _aa_matrix(
    n_in: int, n_out: int, scale: Optional[float], corners: bool, cubic: bool, dtype_name: str
) -> np.ndarray:
    """(out, in) weights of ``_upsample_{bilinear,bicubic}2d_aa`` (support widened by the
    downsampling ratio, weights normalised to sum 1); an axis of unchanged size is copied."""
    ct = _ct(dtype_name)
    if n_in == n_out:
        return np.eye(n_in)
    interp = 4 if cubic else 2
    s = _area_scale(n_in, n_out, corners, scale, ct)
    support = ct(interp * 0.5) * s if s >= 1 else ct(interp * 0.5)
    max_size = int(math.ceil(support)) * 2 + 1
    invscale = ct(1) / s if s >= 1 else ct(1)
    w = np.zeros((n_out, n_in))
    for i in range(n_out):
        center = ct(s * (i + 0.5))
        xmin = max(int(center - support + ct(0.5)), 0)
        xsize = min(max(min(int(center + support + ct(0.5)), n_in) - xmin, 0), max_size)
        arg = ((np.arange(xsize) + xmin - center + ct(0.5)) * invscale).astype(ct)
        taps = _aa_filter(arg, cubic, ct)
        total = taps.sum(dtype=ct)
        if total != 0:
            taps = (taps / total).astype(ct)
        w[i, xmin : xmin + xsize] = taps
    return w


def _area_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(out, in) weights of adaptive average pooling: windows [floor(i*in/out), ceil(...))."""
    w = np.zeros((n_out, n_in))
    for i in range(n_out):
        start = (i * n_in) // n_out
        end = -((-(i + 1) * n_in) // n_out)
        w[i, start:end] = 1.0 / (end - start)
    return w


@constexpr
def _nearest_step(
    n_in: int, n_out: int, scale: Optional[float], exact: bool, special: bool
) -> Tuple[str, Any]:
    """How to take one axis in nearest mode: ('copy', 0), ('repeat', k) or ('gather', idx)."""
    idx = _nearest_index(n_in, n_out, scale, exact, special)
    if n_out == n_in and np.array_equal(idx, np.arange(n_in)):
        return "copy", 0
    if n_out % n_in == 0 and np.array_equal(idx, np.arange(n_out) // (n_out // n_in)):
        return "repeat", n_out // n_in
    return "gather", Tensor(idx.astype(np.int32))


@constexpr
def _weights_step(
    mode: str,
    n_in: int,
    n_out: int,
    scale: Optional[float],
    corners: bool,
    antialias: bool,
    dtype_name: str,
    half_lambdas: bool,
) -> Tuple[str, Any]:
    """How to resample one axis: ('copy', 0), ('mean', k) or ('matmul', W[out, in])."""
    if mode == "area":
        if n_in == n_out:
            return "copy", 0
        if n_in % n_out == 0:
            return "mean", n_in // n_out
        w = _area_matrix(n_in, n_out)
    elif antialias:
        w = _aa_matrix(n_in, n_out, scale, corners, mode == "bicubic", dtype_name)
    elif mode == "bicubic":
        w = _cubic_matrix(n_in, n_out, scale, corners, dtype_name)
    else:
        w = _linear_matrix(n_in, n_out, scale, corners, dtype_name, half_lambdas)
    if n_in == n_out and np.array_equal(w, np.eye(n_in)):
        return "copy", 0
    return "matmul", Tensor(w.astype(np.float64 if dtype_name == "float64" else np.float32))


# ----------------------------------------------------------------------------- per-axis application


def _repeat_axis(x: Tensor, axis: int, k: int) -> Tensor:
    """Each element of ``axis`` repeated ``k`` times (nearest upsampling by an integer)."""
    shape = x.shape
    expanded = x.reshape(shape[: axis + 1] + (1,) + shape[axis + 1 :])
    tiled = ops.broadcast_to(expanded, shape[: axis + 1] + (k,) + shape[axis + 1 :])
    return tiled.reshape(shape[:axis] + (shape[axis] * k,) + shape[axis + 1 :])


@constexpr
def _repeat_factors(
    shape: Tuple[int, ...],
    out_sizes: Tuple[int, ...],
    scales: Tuple[Optional[float], ...],
    exact: bool,
    special: bool,
) -> Tuple[int, ...]:
    """Per-axis integer repeat factors when every axis is a copy or a repeat, else ()."""
    factors = []
    for n_in, n_out, s in zip(shape[2:], out_sizes, scales):
        kind, param = _nearest_step(n_in, n_out, s, exact, special)
        if kind == "gather":
            return ()
        factors.append(param if kind == "repeat" else 1)
    return tuple(factors)


def _repeat_all(x: Tensor, factors: Tuple[int, ...]) -> Tensor:
    """Nearest upsampling by integer factors on every spatial axis, as one broadcast."""
    shape = x.shape
    split = shape[:2]
    tiled = shape[:2]
    out = shape[:2]
    for n, k in zip(shape[2:], factors):
        split = split + (n, 1)
        tiled = tiled + (n, k)
        out = out + (n * k,)
    return ops.broadcast_to(x.reshape(split), tiled).reshape(out)


def _mean_axis(x: Tensor, axis: int, k: int) -> Tensor:
    """Mean over consecutive windows of ``k`` along ``axis`` (area with an integer ratio)."""
    shape = x.shape
    grouped = x.reshape(shape[:axis] + (shape[axis] // k, k) + shape[axis + 1 :])
    return grouped.mean(axis=axis + 1)


def _matmul_axis(x: Tensor, axis: int, w: Tensor) -> Tensor:
    """Contract ``axis`` of ``x`` with ``w`` of shape (out, in)."""
    shape = x.shape
    ndim = len(shape)
    if axis == ndim - 1:
        return ops.matmul(x, w.T)
    if axis == ndim - 2:
        return ops.matmul(w, x)
    # depth of a 5-D input: fold the two trailing axes
    folded = x.reshape(shape[: axis + 1] + (shape[axis + 1] * shape[axis + 2],))
    out = ops.matmul(w, folded)
    return out.reshape(shape[:axis] + (w.shape[0],) + shape[axis + 1 :])


def _nearest_axis(
    x: Tensor, axis: int, n_out: int, scale: Optional[float], exact: bool, special: bool
) -> Tensor:
    kind, param = _nearest_step(x.shape[axis], n_out, scale, exact, special)
    if kind == "repeat":
        return _repeat_axis(x, axis, param)
    if kind == "gather":
        return ops.gather(x, param, axis)
    return x


def _weighted_axis(
    x: Tensor,
    axis: int,
    mode: str,
    n_out: int,
    scale: Optional[float],
    corners: bool,
    antialias: bool,
    dtype_name: str,
    half_lambdas: bool = False,
) -> Tensor:
    kind, param = _weights_step(
        mode, x.shape[axis], n_out, scale, corners, antialias, dtype_name, half_lambdas
    )
    if kind == "mean":
        return _mean_axis(x, axis, param)
    if kind == "matmul":
        return _matmul_axis(x, axis, param)
    return x


def _dtype_name(dtype: Any) -> str:
    if dtype == ms.float64:
        return "float64"
    if dtype == ms.float16:
        return "float16"
    return "float32"


@register(
    "shape.interpolate",
    "composite",
    note="separable: broadcast/gather (nearest), reshape-mean (area), weight-matrix matmul",
)
def _interpolate_composite(
    x: Tensor,
    out_sizes: Tuple[int, ...],
    scales: Tuple[Optional[float], ...],
    mode: str,
    corners: bool,
    antialias: bool,
) -> Tensor:
    dim = len(out_sizes)
    if mode in ("nearest", "nearest-exact"):
        exact = mode == "nearest-exact"
        special = dim == 2
        factors = _repeat_factors(x.shape, out_sizes, scales, exact, special)
        if factors:
            return _repeat_all(x, factors)
        y = _nearest_axis(x, 2, out_sizes[0], scales[0], exact, special)
        if dim >= 2:
            y = _nearest_axis(y, 3, out_sizes[1], scales[1], exact, special)
        if dim >= 3:
            y = _nearest_axis(y, 4, out_sizes[2], scales[2], exact, special)
        return y
    name = _dtype_name(x.dtype)
    half = name == "float16"
    if mode == "area" and half and dim == 3:  # area is adaptive_avg_pool3d: float16 summation
        return adaptive_avg_composite(x, out_sizes)
    # PyTorch's float16 linear kernels round the weights to float16, except the 2-D kernel it
    # uses when out_h + out_w <= 128 (its "vectorized" condition), which keeps them in float32.
    hl = half and (dim != 2 or out_sizes[0] + out_sizes[1] > 128)
    y = x.astype(ms.float32) if half else x
    y = _weighted_axis(y, 2, mode, out_sizes[0], scales[0], corners, antialias, name, hl)
    if dim >= 2:
        y = _weighted_axis(y, 3, mode, out_sizes[1], scales[1], corners, antialias, name, hl)
    if dim >= 3:
        y = _weighted_axis(y, 4, mode, out_sizes[2], scales[2], corners, antialias, name, hl)
    return y.astype(ms.float16) if half else y


# ----------------------------------------------------------------------------- native kernel


@constexpr
def _native_ok(
    shape: Tuple[int, ...],
    dtype_name: str,
    out_sizes: Tuple[int, ...],
    scales: Tuple[Optional[float], ...],
    mode: str,
    corners: bool,
    antialias: bool,
) -> bool:
    """Whether ``ops.interpolate`` gives PyTorch's numbers for this call.

    MindSpore's linear kernels derive the scale from the sizes and compute in float32: exact
    for float32 when the scale PyTorch uses equals in/out (or with align_corners) and every
    source index rounds as PyTorch's fused multiply-add does.
    """
    if mode not in ("linear", "bilinear", "trilinear") or antialias or dtype_name != "float32":
        return False
    for n_in, n_out, s in zip(shape[2:], out_sizes, scales):
        if n_out == 1 or n_in == 1:
            return False
        if corners or n_in == n_out:
            continue
        ratio = _scale_value(n_in, n_out, s, np.float32)
        if ratio != _scale_value(n_in, n_out, None, np.float32):
            return False
        # MindSpore rounds scale * (dst + 0.5) before subtracting 0.5; PyTorch fuses the two
        # (see _source): the native kernel is exact only where that makes no difference.
        half = np.arange(n_out, dtype=np.float32) + np.float32(0.5)
        unfused = (ratio * half).astype(np.float32) - np.float32(0.5)
        if not np.array_equal(unfused, _source(ratio, n_out, False, True, np.float32)):
            return False
    return True


def _probe_native() -> None:
    """``ops.interpolate`` bilinear must be registered here and give PyTorch's numbers."""
    x = Tensor(np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3))
    got = ops.interpolate(x, size=(3, 5), mode="bilinear", align_corners=False).asnumpy()
    # torch.nn.functional.interpolate(x, size=(3, 5), mode="bilinear")[0, 0, 1]
    expected = np.array([1.5, 1.9, 2.5, 3.1, 3.5], np.float32)
    if not np.allclose(got[0, 0, 1], expected, rtol=1e-6, atol=1e-6):
        raise RuntimeError(f"ops.interpolate(bilinear) gives {got[0, 0, 1]}, PyTorch {expected}")


def _native_supports(
    x: TensorSpec,
    out_sizes: Tuple[int, ...],
    scales: Tuple[Optional[float], ...],
    mode: str,
    corners: bool,
    antialias: bool,
) -> Optional[str]:
    if _native_ok(x.shape, x.dtype_name, out_sizes, scales, mode, corners, antialias):
        return None
    return (
        "ops.interpolate differs from PyTorch here (exact only for float32 linear modes "
        "with a size-derived scale)"
    )


@register(
    "shape.interpolate",
    "native",
    probe=_probe_native,
    note="ops.interpolate (float32 linear/bilinear/trilinear with a size-derived scale)",
    supports=_native_supports,
)
def _interpolate_native(
    x: Tensor,
    out_sizes: Tuple[int, ...],
    scales: Tuple[Optional[float], ...],
    mode: str,
    corners: bool,
    antialias: bool,
) -> Tensor:
    return ops.interpolate(x, size=out_sizes, mode=mode, align_corners=corners)


# ----------------------------------------------------------------------------- aot kernel


@constexpr
def _nearest_table(
    n_in: int, n_out: int, scale: Optional[float], exact: bool, special: bool
) -> Tensor:
    return Tensor(_nearest_index(n_in, n_out, scale, exact, special).astype(np.int64))


@constexpr
def _linear_tables(
    n_in: int, n_out: int, scale: Optional[float], corners: bool, dtype_name: str
) -> Tuple[Tensor, Tensor]:
    """One axis's (2, out) source indices and (2, out) weights for ``LinearResample``."""
    i0, i1, l0, l1 = _linear_taps(n_in, n_out, scale, corners, dtype_name, False)
    ct = _ct(dtype_name)
    return Tensor(np.stack([i0, i1]).astype(np.int64)), Tensor(np.stack([l0, l1]).astype(ct))


@constexpr
def _unit_tables(dtype_name: str) -> Tuple[Tensor, Tensor]:
    """The tables of an unused leading axis of size 1."""
    ct = _ct(dtype_name)
    return Tensor(np.zeros((2, 1), np.int64)), Tensor(np.array([[1], [0]], ct))


@constexpr
def _linear_options(shape: Tuple[int, ...], out_sizes: Tuple[int, ...], half: bool) -> Tensor:
    """``opts`` of ``LinearResample``: [small, half_weights].

    ``small``: PyTorch's 2-D float kernel takes its channels-last path (other arithmetic) when
    out_h + out_w <= 128, or when the input is also channels-last contiguous (H = W = 1) with
    more than 3 channels. ``half_weights``: a float16 input (run in float32); PyTorch's float16
    kernels store the forward weights in float16, except its channels-last kernel.
    """
    dim = len(out_sizes)
    small = dim == 2 and (
        out_sizes[0] + out_sizes[1] <= 128 or (shape[2] * shape[3] == 1 and shape[1] > 3)
    )
    return Tensor(np.array([int(small), int(half)], np.int64))


@constexpr
def _cubic_table(
    n_in: int, n_out: int, scale: Optional[float], corners: bool, dtype_name: str
) -> Tensor:
    """One axis's (2, out) source coordinates for ``CubicResample``.

    Row 0 as PyTorch's forward kernel computes them (``scale * (i + 0.5) - 0.5`` as one fused
    multiply-add, see :func:`_source`), row 1 as its backward kernel does (a file compiled
    without FMA: the product rounded, then 0.5 subtracted).
    """
    ct = _ct(dtype_name)
    ratio = _area_scale(n_in, n_out, corners, scale, ct)
    forward = _source(ratio, n_out, corners, True, ct)
    i = np.arange(n_out).astype(ct)
    if corners:
        backward = (ratio * i).astype(ct)
    else:
        backward = ((ratio * (i + ct(0.5))).astype(ct) - ct(0.5)).astype(ct)
    return Tensor(np.stack([forward, backward]).astype(ct))


@constexpr
def _half_weights(dtype_name: str) -> Tensor:
    """``opts`` of ``CubicResample``: PyTorch's float16 kernel stores its weights in float16."""
    return Tensor(np.array([int(dtype_name == "float16")], np.int64))


def _probe_aot() -> None:
    """The three kernel libraries load and pass their self-checks."""
    _nearest_kernels.probe()
    _linear_kernels.probe()
    _cubic_kernels.probe()


def _linear_aot(
    x: Tensor, out_sizes: Tuple[int, ...], scales: Tuple[Optional[float], ...], corners: bool
) -> Tensor:
    dim = len(out_sizes)
    name = _dtype_name(x.dtype)
    spatial = x.shape[2:]
    unit_idx, unit_lam = _unit_tables(name)
    tables = [unit_idx, unit_lam] * (3 - dim)
    for i in range(dim):
        idx, lam = _linear_tables(spatial[i], out_sizes[i], scales[i], corners, name)
        tables = tables + [idx, lam]
    op = _linear_kernels.KERNELS[device_target()]["LinearResample"]
    if name == "float16":
        # float32 (exact), float16 weights, one rounding of the result; the backward kernel
        # accumulates in float32 with float32 weights and rounds once, as PyTorch's.
        y = op(x.astype(ms.float32), *tables, _linear_options(x.shape, out_sizes, True))
        return y.astype(ms.float16)
    return op(x, *tables, _linear_options(x.shape, out_sizes, False))


def _cubic_aot(
    x: Tensor, out_sizes: Tuple[int, ...], scales: Tuple[Optional[float], ...], corners: bool
) -> Tensor:
    name = _dtype_name(x.dtype)
    half = name == "float16"
    src_h = _cubic_table(x.shape[2], out_sizes[0], scales[0], corners, name)
    src_w = _cubic_table(x.shape[3], out_sizes[1], scales[1], corners, name)
    op = _cubic_kernels.KERNELS[device_target()]["CubicResample"]
    # float16 runs in float32 (exact) with float16 weights and one rounding of the result, as
    # PyTorch's float16 kernel; its backward accumulates in float32 and rounds once too.
    y = op(x.astype(ms.float32) if half else x, src_h, src_w, _half_weights(name))
    return y.astype(ms.float16) if half else y


def _kernel_supports(
    x: TensorSpec,
    out_sizes: Tuple[int, ...],
    scales: Tuple[Optional[float], ...],
    mode: str,
    corners: bool,
    antialias: bool,
) -> Optional[str]:
    if antialias:
        return "antialias is not supported by the kernels"
    if mode == "area":
        return "mode='area' is not supported by the kernels (adaptive average pooling)"
    if mode not in ("nearest", "nearest-exact") and x.dtype_name not in _FLOAT_NAMES:
        return f"{x.dtype_name} is not supported by the {mode} kernel"
    if 0 in out_sizes:
        return "an empty output is not supported by the kernels"
    return None


_FLOAT_NAMES = ("float16", "float32", "float64")


@register(
    "shape.interpolate",
    "aot",
    devices=("CPU",),
    probe=_probe_aot,
    note="nearest/nearest-exact: C++ copy with PyTorch's index tables (scatter-add backward); "
    "linear/bilinear/trilinear and bicubic (float16/32/64): C++ with PyTorch's tables, "
    "arithmetic and backward loop",
    supports=_kernel_supports,
)
def _interpolate_aot(
    x: Tensor,
    out_sizes: Tuple[int, ...],
    scales: Tuple[Optional[float], ...],
    mode: str,
    corners: bool,
    antialias: bool,
) -> Tensor:
    if mode == "bicubic":
        return _cubic_aot(x, out_sizes, scales, corners)
    if mode in _MODE_DIMS:
        return _linear_aot(x, out_sizes, scales, corners)
    dim = len(out_sizes)
    exact = mode == "nearest-exact"
    special = dim == 2
    spatial = x.shape[2:]
    zero = Tensor(np.zeros((1,), np.int64))
    tables = [zero] * (3 - dim) + [
        _nearest_table(spatial[i], out_sizes[i], scales[i], exact, special) for i in range(dim)
    ]
    op = _nearest_kernels.KERNELS[device_target()]["NearestGather"]
    return op(x, tables[0], tables[1], tables[2])


# ----------------------------------------------------------------------------- public functions


def _check_input(x: Any, mode: Any) -> Tensor:
    """A float tensor, or uint8 (images) for the nearest modes, which copy."""
    x = check_tensor(x, "input")
    if x.dtype == ms.uint8 and mode in ("nearest", "nearest-exact"):
        return x
    if x.dtype == ms.uint8:
        raise TypeError(
            f"input of dtype UInt8 is supported by the nearest modes only, not mode={mode!r} "
            "(PyTorch's uint8 bilinear/bicubic kernels round in their own fixed-point "
            "arithmetic, not reproduced here); convert to float32 first"
        )
    return check_float_tensor(x, "input")


def interpolate(
    input: Tensor,  # noqa: A002 - PyTorch's argument name
    size: Size = None,
    scale_factor: Scale = None,
    mode: str = "nearest",
    align_corners: Optional[bool] = None,
    recompute_scale_factor: Optional[bool] = None,
    antialias: bool = False,
) -> Tensor:
    """Down/up-sample ``input`` to ``size`` or by ``scale_factor``, as PyTorch.

    Mirrors ``torch.nn.functional.interpolate``: same arguments, defaults, validation and
    numbers. For an output index :math:`i` of an axis resized from :math:`n_{in}` to
    :math:`n_{out}`, the source coordinate is

    .. math::
        x = \\begin{cases}
        i \\,\\frac{n_{in} - 1}{n_{out} - 1} & \\text{align\\_corners}\\\\
        (i + \\tfrac12)\\, r - \\tfrac12, \\quad
        r = \\begin{cases} 1 / \\text{scale\\_factor} & \\text{given and not recomputed}\\\\
        n_{in} / n_{out} & \\text{otherwise}\\end{cases} & \\text{else}
        \\end{cases}

    ``nearest`` takes :math:`\\lfloor i\\,r \\rfloor` (PyTorch's legacy rule), ``nearest-exact``
    :math:`\\lfloor (i + \\frac12)\\,r \\rfloor`; ``linear``/``bilinear``/``trilinear`` mix the two
    neighbours of :math:`x` (clamped at 0); ``bicubic`` uses Keys' cubic with
    :math:`A = -0.75` on four taps, border taps replicated; ``area`` is adaptive average
    pooling; ``antialias=True`` widens the triangle (bilinear) or cubic (:math:`A = -0.5`)
    filter by the downsampling ratio and normalises the weights, as
    ``_upsample_bilinear2d_aa``/``_upsample_bicubic2d_aa``.

    Args:
        input (Tensor[N, C, W], Tensor[N, C, H, W] or Tensor[N, C, D, H, W]): float16, float32
            or float64; also uint8 in the nearest modes (as PyTorch).
        size (int or tuple of int, optional): output spatial size.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size; the
            output size is :math:`\\lfloor n_{in} \\cdot s \\rfloor`. Ints are accepted.
        mode (str): ``'nearest'`` | ``'nearest-exact'`` | ``'linear'`` (3-D) | ``'bilinear'``
            (4-D) | ``'bicubic'`` (4-D) | ``'trilinear'`` (5-D) | ``'area'``. Default:
            ``'nearest'``.
        align_corners (bool, optional): align the centres of the corner pixels; only for the
            interpolating modes. Default: False for them.
        recompute_scale_factor (bool, optional): True: compute the output size from
            ``scale_factor``, then interpolate as if that size had been given (the scale used
            is in/out). False or None: use ``scale_factor`` itself in the coordinate transform.
        antialias (bool): anti-aliasing when downsampling; bilinear and bicubic, 4-D only.
            Default: False.

    Returns:
        Tensor: ``(N, C, *output_size)``, ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a floating Tensor; ``size``/``scale_factor``/flags of the
            wrong type.
        ValueError: unknown ``mode``; an input rank the mode does not support; both or neither
            of ``size`` and ``scale_factor``; a ``size``/``scale_factor`` of the wrong length;
            an output or input size of 0; ``align_corners`` with nearest/area modes;
            ``antialias`` with other modes; ``recompute_scale_factor=True`` with ``size``.

    .. note::
        Where PyTorch raises ``NotImplementedError`` (a mode on an input of the wrong rank) or
        ``RuntimeError`` (an output size of 0), this raises ``ValueError``. float16 is computed
        in float32 and rounded once (PyTorch CPU does the same); ``antialias=True`` also
        accepts float16, which PyTorch's CPU kernel does not. Empty inputs return an empty
        output. The composite's weighted modes are a matrix product per axis, so an inf or NaN
        in the input spreads along the whole output row of that axis (PyTorch keeps it within
        the filter taps; so do the CPU kernels for the linear modes and bicubic). PyTorch's
        1-D and 3-D ``nearest`` backward uses its 2-D index rule (an axis whose size is
        unchanged or exactly doubled by a scale factor is treated as a copy or ``i // 2``)
        where its forward does not; this gradient is the exact gradient of the forward.
        PyTorch 2.13's antialias kernel returns wrong values when the output width is 1
        and the height changes; this computes the correct separable result.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import interpolate
        >>> x = ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
        >>> interpolate(x, scale_factor=2).shape
        (1, 1, 4, 4)
        >>> interpolate(x, scale_factor=2, mode="bilinear")[0, 0, 0].asnumpy().tolist()
        [1.0, 1.25, 1.75, 2.0]
        >>> interpolate(x, size=3, mode="bicubic", align_corners=True)[0, 0, 1].asnumpy().tolist()
        [2.0, 2.5, 3.0]
        >>> [round(v, 4) for v in interpolate(x, size=3, mode="bicubic")[0, 0, 0].tolist()]
        [0.7396, 1.3264, 1.9132]
    """
    input = _check_input(input, mode)  # noqa: A001
    out_sizes, scales, corners = _plan(
        input.shape, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias
    )
    if input.size == 0:
        return ops.zeros(input.shape[:2] + out_sizes, input.dtype)
    return call("shape.interpolate", input, out_sizes, scales, mode, corners, antialias)


def upsample(
    input: Tensor,  # noqa: A002 - PyTorch's argument name
    size: Size = None,
    scale_factor: Scale = None,
    mode: str = "nearest",
    align_corners: Optional[bool] = None,
) -> Tensor:
    """Upsample ``input``; PyTorch's deprecated alias of :func:`interpolate`.

    Mirrors ``torch.nn.functional.upsample``: ``interpolate(input, size, scale_factor, mode,
    align_corners)``.

    Args:
        input (Tensor[N, C, ...]): 3-D, 4-D or 5-D floating input.
        size (int or tuple of int, optional): output spatial size.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.
        mode (str): as :func:`interpolate`. Default: ``'nearest'``.
        align_corners (bool, optional): as :func:`interpolate`.

    Returns:
        Tensor: ``(N, C, *output_size)``, ``input``'s dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import upsample
        >>> upsample(ms.Tensor([[[1.0, 2.0]]]), scale_factor=2).asnumpy().tolist()
        [[[1.0, 1.0, 2.0, 2.0]]]
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(
    input: Tensor,  # noqa: A002 - PyTorch's argument name
    size: Size = None,
    scale_factor: Scale = None,
) -> Tensor:
    """Nearest upsampling; mirrors ``torch.nn.functional.upsample_nearest``.

    ``interpolate(input, size, scale_factor, mode='nearest')``.

    Args:
        input (Tensor[N, C, ...]): 3-D, 4-D or 5-D float or uint8 input.
        size (int or tuple of int, optional): output spatial size.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.

    Returns:
        Tensor: ``(N, C, *output_size)``, ``input``'s dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import upsample_nearest
        >>> upsample_nearest(ms.Tensor([[[1.0, 2.0]]]), size=3).asnumpy().tolist()
        [[[1.0, 1.0, 2.0]]]
    """
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(
    input: Tensor,  # noqa: A002 - PyTorch's argument name
    size: Size = None,
    scale_factor: Scale = None,
) -> Tensor:
    """Bilinear upsampling with ``align_corners=True``; mirrors
    ``torch.nn.functional.upsample_bilinear``.

    ``interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)``.

    Args:
        input (Tensor[N, C, H, W]): floating input.
        size (int or tuple of int, optional): output spatial size.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.

    Returns:
        Tensor: ``(N, C, H_out, W_out)``, ``input``'s dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import upsample_bilinear
        >>> upsample_bilinear(ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]]]]), size=3)[0, 0, 0].tolist()
        [1.0, 1.5, 2.0]
    """
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ----------------------------------------------------------------------------- Cells


def _cell_scale(scale_factor: Scale) -> Scale:
    """``nn.Upsample``'s normalisation: floats (a tuple of floats), falsy values as None."""
    if scale_factor is None or isinstance(scale_factor, (int, float)):
        return float(scale_factor) if scale_factor else None
    return tuple(float(f) for f in scale_factor)


def _cell_size(size: Size) -> Size:
    return tuple(size) if isinstance(size, list) else size


class Upsample(nn.Cell):
    """Upsampling Cell. See :func:`interpolate`.

    Mirrors ``torch.nn.Upsample``: the constructor's ``scale_factor`` is converted to float
    (each element of a tuple), a falsy ``scale_factor`` (0, 0.0) counts as None, and the call
    is ``interpolate(x, size, scale_factor, mode, align_corners, recompute_scale_factor)``.

    Args:
        size (int or tuple of int, optional): output spatial size.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.
        mode (str): as :func:`interpolate`. Default: ``'nearest'``.
        align_corners (bool, optional): as :func:`interpolate`.
        recompute_scale_factor (bool, optional): as :func:`interpolate`.

    Shape:
        - input: :math:`(N, C, W_{in})`, :math:`(N, C, H_{in}, W_{in})` or
          :math:`(N, C, D_{in}, H_{in}, W_{in})`.
        - output: :math:`(N, C, *\\text{out})` with
          :math:`\\text{out}_d = \\lfloor \\text{in}_d \\times \\text{scale\\_factor}_d \\rfloor`
          or ``size``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import Upsample
        >>> up = Upsample(scale_factor=2, mode="nearest")
        >>> up(ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]]]]))[0, 0, 1].asnumpy().tolist()
        [1.0, 1.0, 2.0, 2.0]
    """

    def __init__(
        self,
        size: Size = None,
        scale_factor: Scale = None,
        mode: str = "nearest",
        align_corners: Optional[bool] = None,
        recompute_scale_factor: Optional[bool] = None,
    ) -> None:
        super().__init__()
        self.size = _cell_size(size)
        self.scale_factor = _cell_scale(scale_factor)
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def construct(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's argument name
        return interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )


class UpsamplingNearest2d(Upsample):
    """2-D nearest upsampling Cell; mirrors ``torch.nn.UpsamplingNearest2d``.

    ``Upsample(size, scale_factor, mode='nearest')``. See :func:`interpolate`.

    Args:
        size (int or tuple of int, optional): output size ``(H_out, W_out)``.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.

    Shape:
        - input: :math:`(N, C, H_{in}, W_{in})`.
        - output: :math:`(N, C, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import UpsamplingNearest2d
        >>> UpsamplingNearest2d(scale_factor=2)(ms.Tensor([[[[1.0, 2.0]]]])).shape
        (1, 1, 2, 4)
    """

    def __init__(self, size: Size = None, scale_factor: Scale = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-D bilinear upsampling Cell with ``align_corners=True``; mirrors
    ``torch.nn.UpsamplingBilinear2d``.

    ``Upsample(size, scale_factor, mode='bilinear', align_corners=True)``. See
    :func:`interpolate`.

    Args:
        size (int or tuple of int, optional): output size ``(H_out, W_out)``.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.

    Shape:
        - input: :math:`(N, C, H_{in}, W_{in})`.
        - output: :math:`(N, C, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import UpsamplingBilinear2d
        >>> up = UpsamplingBilinear2d(scale_factor=2)
        >>> [round(v, 4) for v in up(ms.Tensor([[[[1.0, 2.0]]]]))[0, 0, 0].tolist()]
        [1.0, 1.3333, 1.6667, 2.0]
    """

    def __init__(self, size: Size = None, scale_factor: Scale = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
