"""The backends of ``shape.interpolate``: composite, native (``ops.interpolate``) and aot.

The composite applies the per-axis tables of :mod:`mscompat.shape._resample_tables` with
MindSpore ops: a broadcast (integer nearest upsampling), a gather (other nearest), a
reshape-mean (area with an integer ratio) or a matrix product with the ``(out, in)`` weight
matrix (linear, bicubic, antialias, area). On CPU the ``aot`` kernels run ``nearest`` and
``nearest-exact`` (``custom_ops/cpu/nearest_kernel.cc``), the linear modes
(``linear_kernel.cc``) and ``bicubic`` without antialias (``cubic_kernel.cc``) with the same
tables and PyTorch's arithmetic and backward loops; ``ops.interpolate`` (``native``) runs the
float32 linear modes where its rounding gives PyTorch's numbers.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat.custom_ops import cubic as _cubic_kernels
from mscompat.custom_ops import linear as _linear_kernels
from mscompat.custom_ops import nearest as _nearest_kernels
from mscompat.custom_ops.registry import TensorSpec, device_target, register
from mscompat.shape._adaptive_backends import _avg_composite as adaptive_avg_composite
from mscompat.shape._nonfinite import contract
from mscompat.shape._resample_tables import (
    _MODE_DIMS,
    _area_scale,
    _ct,
    _linear_taps,
    _nearest_index,
    _nearest_step,
    _scale_value,
    _source,
    _weights_step,
)

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
        return contract(x, axis, param[0], param[1])
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


def _native_supports(x: TensorSpec, *plan: Any) -> Optional[str]:
    # plan: (out_sizes, scales, mode, corners, antialias), as the implementations take it.
    if _native_ok(x.shape, x.dtype_name, *plan):
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


def _kernel_supports(x: TensorSpec, *plan: Any) -> Optional[str]:
    out_sizes, _, mode, _, antialias = plan
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
