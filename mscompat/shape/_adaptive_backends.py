"""The backends of the adaptive pools (``shape.adaptive_{avg,max}_pool{1,2,3}d``).

composite: averaging MatMul / ReduceMean (float16 3-D bins summed in float16 as PyTorch does)
and separable window gathers with PyTorch's pick; aot (CPU): ``WindowMean`` and ``WindowMax``
(``custom_ops/cpu/pool_kernel.cc``, PyTorch's loops); native: MindSpore's AdaptiveAvgPool2D/3D.
"""

from __future__ import annotations

from typing import List, Optional, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat.custom_ops import pool as _pool_kernels
from mscompat.custom_ops.registry import (
    TensorSpec,
    device_target,
    register,
    set_order,
)
from mscompat.shape._nonfinite import contract, tap_signs
from mscompat.shape._pooling import (
    adaptive_bins,
    adaptive_table,
    adaptive_weights,
    empty_like_output,
    from_planes,
    gather_planes,
    kernel_max,
    max_flat_index,
    max_flat_index_global,
    shape_carrier,
    to_planes,
)

OutputSize = Union[int, None, Tuple[Optional[int], ...], List[Optional[int]]]
MaxOut = Union[Tensor, Tuple[Tensor, Tensor]]


# ----------------------------------------------------------------------------- composite


_HALF_SCAN_MAX = 64  # largest 3-D bin volume summed element by element in float16


def _round16(t: Tensor) -> Tensor:
    return t.astype(ms.float16).astype(ms.float32)


def _avg3d_half(x: Tensor, output_size: Tuple[int, ...]) -> Tensor:
    """PyTorch's float16 ``adaptive_avg_pool3d`` on CPU: the bin is summed in float16 (every
    addition rounded, in window order), then divided by kT, kH and kW, each rounded.

    ``x`` is (B, T, H, W) float32 holding float16 values; returns float32 holding float16
    values, (B, OT, OH, OW).
    """
    tables, masks, counts = [], [], []
    for i in range(3):
        length, out = x.shape[1 + i], output_size[i]
        table = adaptive_table(length, out)
        starts, ends = adaptive_bins(length, out)
        count = np.array(ends) - np.array(starts)
        tables.append(table)
        masks.append(np.arange(table.shape[1])[None, :] < count[:, None])
        counts.append(count.astype(np.float32))
    g = x
    for i in range(3):  # (B, ..., O_i, K_i, ...): gather every bin's taps along dim i
        axis = 1 + 2 * i
        out, k = tables[i].shape
        g = ops.gather(g, Tensor(tables[i].reshape(-1).astype(np.int32)), axis)
        g = g.reshape(g.shape[:axis] + (out, k) + g.shape[axis + 1 :])
    # (B, OT, KT, OH, KH, OW, KW) -> (B, OT, OH, OW, KT, KH, KW) -> (B, OT, OH, OW, K)
    g = g.transpose(0, 1, 3, 5, 2, 4, 6)
    g = g.reshape(g.shape[:4] + (-1,))
    mask = (
        masks[0][:, None, None, :, None, None]
        & masks[1][None, :, None, None, :, None]
        & masks[2][None, None, :, None, None, :]
    ).reshape(g.shape[1:])
    total = ops.zeros(g.shape[:4], ms.float32)
    for j in range(g.shape[-1]):
        if bool(mask[..., j].any()):
            step = _round16(total + g[..., j])
            total = ops.where(Tensor(mask[..., j]), step, total) if not mask[..., j].all() else step
    for i in range(3):
        shape = [1, 1, 1]
        shape[i] = output_size[i]
        total = _round16(total / Tensor(counts[i].reshape(shape)))
    return total


def _avg_composite(x: Tensor, output_size: Tuple[int, ...]) -> Tensor:
    """Separable adaptive average: one averaging matrix product per spatial dim (float16 3-D:
    PyTorch's float16 summation, see :func:`_avg3d_half`)."""
    n = len(output_size)
    if x.size == 0 or 0 in output_size:
        return empty_like_output(x, n, output_size)[0]
    if n == 3 and x.dtype == ms.float16 and not all(o == 1 for o in output_size):
        planes = to_planes(x.astype(ms.float32), n)
        volume = 1
        for i in range(3):
            volume *= adaptive_table(planes.shape[1 + i], output_size[i]).shape[1]
        if volume <= _HALF_SCAN_MAX:
            return from_planes(_avg3d_half(planes, output_size), x, n).astype(ms.float16)
    half = x.dtype == ms.float16
    y = to_planes(x.astype(ms.float32) if half else x, n)
    if all(o == 1 for o in output_size):
        y = ops.mean(y, tuple(range(1, n + 1)), True)
    else:
        np_dtype = np.float64 if x.dtype == ms.float64 else np.float32
        for i in range(n):
            axis = 1 + i
            length = y.shape[axis]
            out = output_size[i]
            if out != length:  # inf and NaN stay within their bins (see _nonfinite)
                w = adaptive_weights(length, out, np_dtype)
                rows, cols = np.nonzero(w)
                signs = tap_signs([(rows, cols, w[rows, cols])], out, length)
                y = contract(y, axis, Tensor(w), Tensor(signs.astype(np_dtype)))
    y = from_planes(y, x, n)
    return y.astype(ms.float16) if half else y


def _max_composite(
    x: Tensor, output_size: Tuple[int, ...], return_indices: bool, use_kernel: bool = False
) -> MaxOut:
    """Adaptive max with PyTorch's pick (first maximum, NaN propagates): separable window
    gathers, or the ``aot`` kernel with ``use_kernel``."""
    n = len(output_size)
    if x.size == 0 or 0 in output_size:
        values, indices = empty_like_output(x, n, output_size)
        if return_indices:
            return values, indices
        return values
    if use_kernel:  # the kernel takes x as it is: in graph mode a reshape is a copy
        spatial = x.shape[x.ndim - n :]
        tables = tuple(adaptive_table(spatial[i], output_size[i]) for i in range(n))
        values, indices = kernel_max(x, tables)
        if return_indices:
            return values, indices
        return values
    planes = to_planes(x, n)
    spatial = planes.shape[1:]
    if all(o == 1 for o in output_size):
        flat = max_flat_index_global(planes)
    else:
        tables = tuple(adaptive_table(spatial[i], output_size[i]) for i in range(n))
        flat = max_flat_index(planes, tables)
    values = from_planes(gather_planes(planes, flat, output_size), x, n)
    if return_indices:
        return values, from_planes(flat.reshape((-1,) + output_size), x, n)
    return values


_AVG_OPS = tuple(f"shape.adaptive_avg_pool{d}d" for d in (1, 2, 3))
_MAX_OPS = tuple(f"shape.adaptive_max_pool{d}d" for d in (1, 2, 3))

register(_AVG_OPS, "composite", note="separable averaging matmuls")(_avg_composite)


@register(_MAX_OPS, "composite", note="separable gather + first-max select")
def _max_pool_composite(x: Tensor, output_size: Tuple[int, ...], return_indices: bool) -> MaxOut:
    return _max_composite(x, output_size, return_indices)


@constexpr
def _bin_ranges(length: int, out: int) -> Tensor:
    """PyTorch's adaptive bins of one axis as an (out, 2) int64 Tensor of [start, end)."""
    return Tensor(np.array(adaptive_bins(length, out), np.int64).T.copy())


def _global(output_size: Tuple[int, ...]) -> Optional[str]:
    # An output size of 1 everywhere is the migration guide's ReduceMean with keep_dims.
    if all(o == 1 for o in output_size):
        return "output size 1 is a ReduceMean (the composite)"
    return None


def _avg_kernel_supports(x: TensorSpec, output_size: Tuple[int, ...]) -> Optional[str]:
    if x.dtype not in (ms.float32, ms.float64):
        return f"{x.dtype_name} is not supported by the kernel (float32/float64)"
    return _global(output_size)


@_pool_kernels.LIBRARY.backend(
    _AVG_OPS, "C++ loop of PyTorch's (sum of each bin / its lengths)", _avg_kernel_supports
)
def _avg_aot(x: Tensor, output_size: Tuple[int, ...]) -> Tensor:
    """``WindowMean`` on ``x`` as it is."""
    n = len(output_size)
    spatial = x.shape[x.ndim - n :]
    unit = _bin_ranges(1, 1)
    ranges = [unit] * (3 - n) + [_bin_ranges(spatial[i], output_size[i]) for i in range(n)]
    op = _pool_kernels.KERNELS[device_target()]["WindowMean"]
    return op(x, ranges[0], ranges[1], ranges[2], shape_carrier((n,)))


@_pool_kernels.LIBRARY.backend(
    _MAX_OPS, "C++ scan of each bin (PyTorch's loop): values and indices"
)
def _max_aot(x: Tensor, output_size: Tuple[int, ...], return_indices: bool) -> MaxOut:
    return _max_composite(x, output_size, return_indices, use_kernel=True)


# ----------------------------------------------------------------------------- native


def _probe_native_avg() -> None:
    """ops.adaptive_avg_pool2d on a non-divisible size (5 -> 3 over [1..5]) must give
    PyTorch's bins; raises if the kernel is missing or bins differ."""
    x = Tensor(np.arange(1.0, 6.0, dtype=np.float32).reshape(1, 1, 1, 5))
    got = ops.adaptive_avg_pool2d(x, (1, 3)).asnumpy().reshape(-1)
    if not np.allclose(got, [1.5, 3.0, 4.5]):
        raise RuntimeError(f"ops.adaptive_avg_pool2d bins differ from PyTorch's: {got}")


def _avg_native_supports(x: TensorSpec, output_size: Tuple[int, ...]) -> Optional[str]:
    if len(output_size) == 3 and x.dtype == ms.float16:
        return "float16 3-D: PyTorch sums float16 bins in float16 (the composite does)"
    return _global(output_size)


@register(
    _AVG_OPS,
    "native",
    devices=("CPU",),
    probe=_probe_native_avg,
    note="ops.adaptive_avg_pool2d/3d (PyTorch's bins, measured exact on CPU)",
    supports=_avg_native_supports,
)
def _avg_native(x: Tensor, output_size: Tuple[int, ...]) -> Tensor:
    """MindSpore's AdaptiveAvgPool2D/3D kernels."""
    n = len(output_size)
    if n == 1:
        y = ops.adaptive_avg_pool2d(x.expand_dims(-2), (1,) + output_size)
        return y.squeeze(-2)
    if n == 2:
        return ops.adaptive_avg_pool2d(x, output_size)
    if x.ndim == 4:
        return ops.adaptive_avg_pool3d(x.expand_dims(0), output_size).squeeze(0)
    return ops.adaptive_avg_pool3d(x, output_size)


# The aot kernel first (PyTorch's loop, bit-identical), then the composite, on every device;
# MindSpore's AdaptiveAvgPool2D/3D kernels and their Grad kernels ran slower than the composite
# in graph mode (docs/benchmarks) and stay selectable (use_backend / MSCOMPAT_BACKEND).
set_order(_AVG_OPS, ("aot", "composite", "native"))
