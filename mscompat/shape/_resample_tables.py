"""PyTorch's CPU index and weight arithmetic of ``interpolate``, per axis, in NumPy.

Shapes are static, so each spatial axis's source indices and weights are computed when the call
is traced, as PyTorch's CPU kernels compute them (coordinates in float32 for float16/float32
inputs, float64 for float64; its fused multiply-adds where it fuses), and handed to the
composite (as weight matrices) or to the kernels (as tables).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Optional, Tuple

import numpy as np
from mindspore import Tensor
from mindspore.ops import constexpr

from mscompat.shape._nonfinite import Taps, dense, tap_signs

_MODE_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_CUBIC_A = -0.75  # PyTorch's upsample_bicubic2d coefficient
_AA_CUBIC_A = -0.5  # PyTorch's _upsample_bicubic2d_aa filter (as PIL)


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


def _linear_tap_list(
    n_in: int,
    n_out: int,
    scale: Optional[float],
    corners: bool,
    dtype_name: str,
    half_lambdas: bool = False,
) -> Taps:
    """The (rows, cols, weights) taps of linear interpolation (see :func:`_linear_taps`); an
    axis of unchanged size has the taps ``i`` (weight 1) and ``i`` again (weight 0): PyTorch
    still computes ``0 * x``."""
    if n_in == n_out:
        i = np.arange(n_in)
        return [(i, i, np.ones(n_in)), (i, i, np.zeros(n_in))]
    i0, i1, l0, l1 = _linear_taps(n_in, n_out, scale, corners, dtype_name, half_lambdas)
    rows = np.arange(n_out)
    return [(rows, i0, l0), (rows, i1, l1)]


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
    return dense(_cubic_tap_list(n_in, n_out, scale, corners, dtype_name), n_out, n_in)


def _cubic_tap_list(
    n_in: int, n_out: int, scale: Optional[float], corners: bool, dtype_name: str
) -> Taps:
    """The (rows, cols, weights) taps of :func:`_cubic_matrix` (four per row)."""
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
    rows = np.arange(n_out)
    out = []
    for k, c in enumerate(coeffs):
        taps = np.clip(idx - 1 + k, 0, n_in - 1)
        c = c.astype(np.float16) if dtype_name == "float16" else c.astype(ct)
        out.append((rows, taps, c))
    return out


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
    return dense(_aa_tap_list(n_in, n_out, scale, corners, cubic, dtype_name), n_out, n_in)


def _aa_tap_list(
    n_in: int, n_out: int, scale: Optional[float], corners: bool, cubic: bool, dtype_name: str
) -> Taps:
    """The (rows, cols, weights) taps of :func:`_aa_matrix`."""
    ct = _ct(dtype_name)
    if n_in == n_out:
        same = np.arange(n_in)
        return [(same, same, np.ones(n_in))]
    interp = 4 if cubic else 2
    s = _area_scale(n_in, n_out, corners, scale, ct)
    support = ct(interp * 0.5) * s if s >= 1 else ct(interp * 0.5)
    max_size = int(math.ceil(support)) * 2 + 1
    invscale = ct(1) / s if s >= 1 else ct(1)
    out = []
    for i in range(n_out):
        center = ct(s * (i + 0.5))
        xmin = max(int(center - support + ct(0.5)), 0)
        xsize = min(max(min(int(center + support + ct(0.5)), n_in) - xmin, 0), max_size)
        arg = ((np.arange(xsize) + xmin - center + ct(0.5)) * invscale).astype(ct)
        taps = _aa_filter(arg, cubic, ct)
        total = taps.sum(dtype=ct)
        if total != 0:
            taps = (taps / total).astype(ct)
        out.append((np.full(xsize, i), np.arange(xmin, xmin + xsize), taps))
    return out


def _area_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(out, in) weights of adaptive average pooling: windows [floor(i*in/out), ceil(...))."""
    return dense(_area_tap_list(n_in, n_out), n_out, n_in)


def _area_tap_list(n_in: int, n_out: int) -> Taps:
    """The (rows, cols, weights) taps of :func:`_area_matrix`: each bin, weight 1/count."""
    out = []
    for i in range(n_out):
        start = (i * n_in) // n_out
        end = -((-(i + 1) * n_in) // n_out)
        count = end - start
        out.append((np.full(count, i), np.arange(start, end), np.full(count, 1.0 / count)))
    return out


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
    """How to resample one axis: ('copy', 0), ('mean', k) or ('matmul', (W[out, in], signs))
    with the taps' signs for :func:`~mscompat.shape._nonfinite.contract`."""
    if mode == "area":
        if n_in == n_out:
            return "copy", 0
        if n_in % n_out == 0:
            return "mean", n_in // n_out
        taps = _area_tap_list(n_in, n_out)
    elif antialias:
        taps = _aa_tap_list(n_in, n_out, scale, corners, mode == "bicubic", dtype_name)
    elif mode == "bicubic":
        taps = _cubic_tap_list(n_in, n_out, scale, corners, dtype_name)
    else:
        taps = _linear_tap_list(n_in, n_out, scale, corners, dtype_name, half_lambdas)
    w = dense(taps, n_out, n_in)
    signs = tap_signs(taps, n_out, n_in)
    # a copy, unless taps of weight 0 turn an inf into NaN (PyTorch's 0 * inf)
    if n_in == n_out and np.array_equal(w, np.eye(n_in)) and not signs[n_out : 2 * n_out].any():
        return "copy", 0
    np_dtype = np.float64 if dtype_name == "float64" else np.float32
    return "matmul", (Tensor(w.astype(np_dtype)), Tensor(signs.astype(np_dtype)))
