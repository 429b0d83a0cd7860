"""Backends of ``layers.conv{1,2,3}d`` and ``layers.conv_transpose{1,2,3}d`` (see
:mod:`mscompat.layers.conv`), and the padding helpers of the convolution Cells.

Every backend takes a batched input and explicit per-side zero padding. Measured on MindSpore
2.10 CPU (8 x 64 x 32 x 32 input, 3 x 3 kernel, 32 output channels): ``ops.conv2d`` takes
1.5 s where PyTorch takes 0.1 s, and ``ops.Conv2DBackpropInput`` (a transposed convolution)
3 s; im2col (the ``aot`` kernel of ``shape.unfold``) then one matmul takes 0.02-0.04 s. So on CPU
a convolution is a matmul over im2col columns and a transposed convolution a matmul followed by
col2im (``shape.fold``'s ``aot`` kernel), and in float32 one C++ kernel that runs oneDNN's
sgemm and col2im block by block (``custom_ops/cpu/conv_gemm_kernel.cc``: MindSpore's
convolution kernels run oneDNN's reference implementation for the NCHW layout, measured
600-900 ms for the 8 x 64 x 32 x 32, k=4, s=2 transposed convolution PyTorch does in 2-5 ms);
MindSpore's convolution kernels are the ``native`` backend on GPU and Ascend only. float16 is
computed in float32 and rounded once (PyTorch's CPU kernels accumulate float16 in float32:
measured equal to PyTorch's float16 results).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat.custom_ops import conv_gemm as _gemm_kernels
from mscompat.custom_ops import fold as _fold_kernels
from mscompat.custom_ops.registry import (
    TensorSpec,
    call,
    current_device,
    device_target,
    register,
)
from mscompat.shape import fold as _fold  # noqa: F401 - registers shape.unfold, shape.fold
from mscompat.shape._pooling import shape_carrier

__all__ = ["CONV", "CONV_T", "pad_nd", "zero_pad"]

Ints = Tuple[int, ...]

CONV = ("layers.conv1d", "layers.conv2d", "layers.conv3d")
CONV_T = ("layers.conv_transpose1d", "layers.conv_transpose2d", "layers.conv_transpose3d")


# ----------------------------------------------------------------------------- padding


def zero_pad(x: Tensor, lo: Ints, hi: Ints) -> Tensor:
    """Zeros before (``lo``) and after (``hi``) each of the last ``len(lo)`` dims (concatenation:
    exact, any dtype, any backend)."""
    n = len(lo)
    for i in range(n):
        axis = x.ndim - n + i
        if lo[i] or hi[i]:
            parts = []
            if lo[i]:
                parts.append(ops.zeros(x.shape[:axis] + (lo[i],) + x.shape[axis + 1 :], x.dtype))
            parts.append(x)
            if hi[i]:
                parts.append(ops.zeros(x.shape[:axis] + (hi[i],) + x.shape[axis + 1 :], x.dtype))
            x = ops.concat(parts, axis)
    return x


def _take(x: Tensor, axis: int, start: int, stop: int) -> Tensor:
    """``x[..., start:stop, ...]`` along ``axis``."""
    index = (slice(None),) * axis + (slice(start, stop),)
    return x[index]


def _flipped(x: Tensor, axis: int) -> Tensor:
    return ops.reverse(x, (axis,)) if x.shape[axis] > 1 else x


def _repeated(x: Tensor, axis: int, times: int) -> Tensor:
    """``x`` (size 1 along ``axis``) repeated ``times`` times along ``axis``."""
    return ops.broadcast_to(x, x.shape[:axis] + (times,) + x.shape[axis + 1 :])


def pad_nd(x: Tensor, lo: Ints, hi: Ints, mode: str) -> Tensor:
    """PyTorch's ``F.pad`` of the last ``len(lo)`` dims in ``mode`` ``'zeros'``, ``'reflect'``,
    ``'replicate'`` or ``'circular'`` (slices and concatenation: exact; the front door checks
    that the pads fit)."""
    if mode == "zeros":
        return zero_pad(x, lo, hi)
    n = len(lo)
    for i in range(n):
        axis = x.ndim - n + i
        size, a, b = x.shape[axis], lo[i], hi[i]
        if not (a or b):
            continue
        if mode == "reflect":
            before = _flipped(_take(x, axis, 1, a + 1), axis) if a else None
            after = _flipped(_take(x, axis, size - b - 1, size - 1), axis) if b else None
        elif mode == "replicate":
            before = _repeated(_take(x, axis, 0, 1), axis, a) if a else None
            after = _repeated(_take(x, axis, size - 1, size), axis, b) if b else None
        else:  # circular
            before = _take(x, axis, size - a, size) if a else None
            after = _take(x, axis, 0, b) if b else None
        parts = [t for t in (before, x, after) if t is not None]
        x = ops.concat(parts, axis)
    return x


# ----------------------------------------------------------------------------- shared pieces


def _work(x: Tensor) -> Any:
    return ms.float32 if x.dtype == ms.float16 else x.dtype


def _as(x: Tensor, dtype: Any) -> Tensor:
    """``x`` in ``dtype`` (no op when it already is: PyNative's per-op cost)."""
    return x if x.dtype == dtype else x.astype(dtype)


@constexpr
def _offsets(kernel: Ints) -> Tuple[Ints, ...]:
    """Every kernel position, row-major (PyTorch's weight order)."""
    out: Tuple[Ints, ...] = ((),)
    for k in kernel:
        out = tuple(o + (i,) for o in out for i in range(k))
    return out


def _batched_matmul(w: Tensor, x: Tensor) -> Tensor:
    """``w (G, A, B) @ x (N, G, B, L)`` -> ``(N, G, A, L)`` as one batched matmul (a broadcast
    ``ops.matmul`` has no gradient on CPU when ``B`` is 1: "MatMulExt ... shape1[-1] must be
    equal to shape2[-2]")."""
    n, g, b, length = x.shape
    a = w.shape[1]
    wide = ops.broadcast_to(w.expand_dims(0), (n, g, a, b)).reshape(n * g, a, b)
    return ops.bmm(wide, x.reshape(n * g, b, length)).reshape(n, g, a, length)


def _grouped_matmul(w: Tensor, cols: Tensor, groups: int) -> Tensor:
    """``w (G*A, B) @ cols (N, G*B, L)`` per group -> ``(N, G*A, L)``."""
    n, length = cols.shape[0], cols.shape[2]
    a, b = w.shape[0] // groups, w.shape[1]
    out = _batched_matmul(w.reshape(groups, a, b), cols.reshape(n, groups, b, length))
    return out.reshape(n, groups * a, length)


def _finish(out: Tensor, bias: Optional[Tensor], dtype: Any) -> Tensor:
    if bias is not None:
        out = out + _as(bias, out.dtype).reshape((1, -1) + (1,) * (out.ndim - 2))
    return _as(out, dtype)


def _float_only(x: TensorSpec, *_: Any) -> Optional[str]:
    if x.dtype in (ms.float16, ms.float32):
        return None
    return f"{x.dtype_name} is not supported by MindSpore's convolution kernels"


# ----------------------------------------------------------------------------- convolution


def _out_size(size: Ints, k: Ints, s: Ints, d: Ints) -> Ints:
    """Output size of a convolution of the (already padded) ``size``."""
    return tuple((size[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(len(size)))


@constexpr
def _im2col_index(padded: Ints, k: Ints, s: Ints, d: Ints, out: Ints) -> Tensor:
    """Flat positions in the padded input read by each (kernel position, output position):
    ``(K * L,)`` int32, kernel-major (PyTorch's weight order)."""
    flat = np.zeros((1, 1), np.int64)
    for i in range(len(k)):
        pos = np.arange(k[i])[:, None] * d[i] + np.arange(out[i])[None, :] * s[i]  # (k, o)
        flat = flat[:, None, :, None] * padded[i] + pos[None, :, None, :]
        flat = flat.reshape(flat.shape[0] * k[i], -1)
    return Tensor(flat.reshape(-1).astype(np.int32))


@register(CONV, "composite", note="one gather of the padded input (im2col) + matmul")
def _conv_composite(
    x: Tensor, w: Tensor, b: Optional[Tensor], s: Ints, lo: Ints, hi: Ints, d: Ints, g: int
) -> Tensor:
    # Strided slices are avoided: their gradient fails on CPU ("StridedSliceGrad ... out of
    # bounds") when the stride does not divide the extent.
    dtype, work = x.dtype, _work(x)
    x = zero_pad(_as(x, work), lo, hi)
    n, c = x.shape[0], x.shape[1]
    k = tuple(w.shape[2:])
    padded = tuple(x.shape[2:])
    out = _out_size(padded, k, s, d)
    kk, length, size = 1, 1, 1
    for i in range(len(k)):
        kk, length, size = kk * k[i], length * out[i], size * padded[i]
    index = _im2col_index(padded, k, s, d, out)
    cols = ops.gather(x.reshape(n, c, size), index, 2).reshape(n, c * kk, length)
    y = _grouped_matmul(_as(w, work).reshape(w.shape[0], -1), cols, g)
    return _finish(y.reshape((n, w.shape[0]) + out), b, dtype)


@register(
    CONV[:2],
    "aot",
    devices=("CPU",),
    probe=_fold_kernels.probe,
    note=(
        "float32: blocked im2col + oneDNN sgemm in one C++ kernel (conv_gemm); float16/float64: "
        "im2col (shape.unfold's C++ kernel) + matmul"
    ),
)
def _conv_aot(
    x: Tensor, w: Tensor, b: Optional[Tensor], s: Ints, lo: Ints, hi: Ints, d: Ints, g: int
) -> Tensor:
    dtype, work = x.dtype, _work(x)
    one_d = w.ndim == 3
    x, w = _as(x, work), _as(w, work)
    if one_d:  # as a 2-D convolution of height 1
        x, w = x.expand_dims(2), w.expand_dims(2)
        s, lo, hi, d = (1,) + s, (0,) + lo, (0,) + hi, (1,) + d
    pad = lo
    if lo != hi:
        x, pad = zero_pad(x, lo, hi), (0, 0)
    k = (w.shape[2], w.shape[3])
    size = (x.shape[2] + 2 * pad[0], x.shape[3] + 2 * pad[1])
    out = _out_size(size, k, s, d)
    shape = (x.shape[0], w.shape[0]) + (out[1:] if one_d else out)
    if _use_gemm(dtype):  # the transposed convolution's input gradient (conv_gemm kernel)
        geom = _gemm_geom(k, s, pad, d, g)
        if b is None:
            b = ops.zeros((w.shape[0],), x.dtype)
        op = _gemm_kernels.KERNELS[device_target()]["ConvGemm"]
        return op(x, w, b, geom, shape_carrier(out)).reshape(shape)
    cols = call("shape.unfold", x, k, d, pad, s, out)
    y = _grouped_matmul(w.reshape(w.shape[0], -1), cols, g)
    return _finish(y.reshape(shape), b, dtype)


@register(
    CONV,
    "native",
    devices=("GPU", "Ascend"),
    supports=_float_only,
    note="ops.conv2d / ops.conv3d (on CPU 15-70x slower than im2col + matmul: not used)",
)
def _conv_native(
    x: Tensor, w: Tensor, b: Optional[Tensor], s: Ints, lo: Ints, hi: Ints, d: Ints, g: int
) -> Tensor:
    pad = lo
    if lo != hi:
        x, pad = zero_pad(x, lo, hi), (0,) * len(lo)
    if w.ndim == 5:
        y = ops.conv3d(x, w, None, s, "pad", pad, d, g)
        return _finish(y, b, x.dtype)
    if w.ndim == 3:
        y = ops.conv2d(
            x.expand_dims(2), w.expand_dims(2), None, (1,) + s, "pad", (0,) + pad, (1,) + d, g
        ).squeeze(2)
        return _finish(y, b, x.dtype)
    return _finish(ops.conv2d(x, w, None, s, "pad", pad, d, g), b, x.dtype)


# ----------------------------------------------------------------------------- transposed


def _columns(x: Tensor, w: Tensor, g: int, work: Any) -> Tensor:
    """``W^T x`` per group: ``x (N, Cin, ...)``, ``w (Cin, Cout/g, k...)`` ->
    ``(N, Cout * K, L)``, each output channel's K kernel positions together."""
    n, cin = x.shape[0], x.shape[1]
    cig = cin // g
    rows = w.shape[1]
    kk = 1
    for k in w.shape[2:]:
        kk *= k
    wt = _as(w, work).reshape(g, cig, rows * kk).transpose(0, 2, 1)  # (g, Cout_g*K, Cin_g)
    length = 1
    for size in x.shape[2:]:
        length *= size
    cols = _batched_matmul(wt, _as(x, work).reshape(n, g, cig, length))
    return cols.reshape(n, g * rows * kk, length)


@register(CONV_T, "composite", note="matmul + col2im (a scatter-add with a static index)")
def _conv_t_composite(
    x: Tensor, w: Tensor, b: Optional[Tensor], s: Ints, p: Ints, d: Ints, g: int, size: Ints
) -> Tensor:
    dtype, work = x.dtype, _work(x)
    cols = _columns(x, w, g, work)  # (N, Cout * K, L)
    n, cout = x.shape[0], w.shape[1] * g
    k = tuple(w.shape[2:])
    inp = tuple(x.shape[2:])
    nd = len(k)
    # the uncropped output: a convolution of it with (k, s, d) has the input's size
    full = tuple((inp[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 for i in range(nd))
    total = 1
    for f in full:
        total *= f
    index = _im2col_index(full, k, s, d, inp)
    if dtype == ms.float16:  # PyTorch's rounding: see _conv_t_aot
        cols = cols.astype(dtype)
    values = cols.reshape(n * cout, -1).transpose(1, 0)  # (K * L, N * Cout)
    image = ops.unsorted_segment_sum(values, index, total).transpose(1, 0)
    image = image.reshape((n, cout) + full)
    # crop the padding; output_padding beyond the computed extent is zeros
    extra = tuple(max(0, p[i] + size[i] - full[i]) for i in range(nd))
    image = zero_pad(image, (0,) * nd, extra)
    crop = (slice(None), slice(None)) + tuple(slice(p[i], p[i] + size[i]) for i in range(nd))
    return _finish(image[crop], b, dtype)


def _fold_fits(
    x: TensorSpec, w: TensorSpec, b: Any, s: Ints, p: Ints, d: Ints, g: int, size: Ints
) -> Optional[str]:
    inp = x.shape[2:]
    for i in range(len(s)):
        if size[i] + 2 * p[i] - d[i] * (w.shape[2 + i] - 1) - 1 >= inp[i] * s[i]:
            return "output_padding >= stride (col2im would see more blocks than the input has)"
    return None


_GEMM_USABLE: Dict[str, bool] = {}


def _gemm_usable() -> bool:
    """Whether the ``conv_gemm`` kernels load and pass their self-check here (once per
    device)."""
    device = current_device()
    if device not in _GEMM_USABLE:
        try:
            _gemm_kernels.probe()
            _GEMM_USABLE[device] = True
        except Exception:  # noqa: BLE001 - any failure: the matmul + col2im path runs
            _GEMM_USABLE[device] = False
    return _GEMM_USABLE[device]


@constexpr
def _use_gemm(dtype: Any) -> bool:
    return dtype == ms.float32 and _gemm_usable()


def _conv_t_aot_fits(
    x: TensorSpec, w: TensorSpec, b: Any, s: Ints, p: Ints, d: Ints, g: int, size: Ints
) -> Optional[str]:
    if x.dtype == ms.float32 and _gemm_usable():
        return None
    return _fold_fits(x, w, b, s, p, d, g, size)


@constexpr
def _gemm_geom(k: Ints, s: Ints, p: Ints, d: Ints, g: int) -> Tensor:
    """``geom`` of the ``ConvTransposeGemm`` kernels: [kh, kw, dh, dw, ph, pw, sh, sw,
    groups]."""
    return Tensor(np.array([*k, *d, *p, *s, g], np.int64))


def _conv_t_gemm(
    x: Tensor, w: Tensor, b: Optional[Tensor], s: Ints, p: Ints, d: Ints, g: int, size: Ints
) -> Tensor:
    """float32: one C++ kernel, blocked oneDNN sgemm + col2im; bias added inside."""
    one_d = w.ndim == 3
    if one_d:  # as a 2-D transposed convolution of height 1
        x, w = x.expand_dims(2), w.expand_dims(2)
        s, p, d, size = (1,) + s, (0,) + p, (1,) + d, (1,) + size
    if b is None:
        b = ops.zeros((w.shape[1] * g,), x.dtype)
    geom = _gemm_geom(tuple(w.shape[2:]), s, p, d, g)
    out = _gemm_kernels.KERNELS[device_target()]["ConvTransposeGemm"](
        x, w, b, geom, shape_carrier(size)
    )
    return out.squeeze(2) if one_d else out


@register(
    CONV_T[:2],
    "aot",
    devices=("CPU",),
    probe=_fold_kernels.probe,
    supports=_conv_t_aot_fits,
    note=(
        "float32: blocked oneDNN sgemm + col2im in one C++ kernel (conv_gemm); float16/float64: "
        "matmul + col2im (shape.fold's C++ kernel)"
    ),
)
def _conv_t_aot(
    x: Tensor, w: Tensor, b: Optional[Tensor], s: Ints, p: Ints, d: Ints, g: int, size: Ints
) -> Tensor:
    if _use_gemm(x.dtype):
        return _conv_t_gemm(x, w, b, s, p, d, g, size)
    dtype, work = x.dtype, _work(x)
    cols = _columns(x, w, g, work)
    if dtype == ms.float16:
        # PyTorch's float16 kernel rounds the matmul's columns, then each addition of col2im
        # (shape.fold's kernel does the same for float16): measured bit-equal.
        cols = cols.astype(dtype)
    k = tuple(w.shape[2:])
    inp = tuple(x.shape[2:])
    if len(k) == 1:
        k, inp, s, p, d, size = (1,) + k, (1,) + inp, (1,) + s, (0,) + p, (1,) + d, (1,) + size
    out = call("shape.fold", cols, size, k, d, p, s, inp)
    if w.ndim == 3:
        out = out.squeeze(2)
    return _finish(out, b, dtype)
