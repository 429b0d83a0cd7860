"""Adaptive average and max pooling with PyTorch's bins, for any input and output size.

Mirrors ``torch.nn.functional.adaptive_{avg,max}_pool{1,2,3}d`` and the ``nn.Adaptive*Pool*``
modules. MindSpore 2.10 on CPU has no kernel for the ``mint`` adaptive pools and
``ops.adaptive_avg_pool1d`` / ``ops.adaptive_max_pool1d`` reject sizes that do not divide (11 to
5); these work for every size, output larger than the input included.

Bin ``i`` of a dim of input length :math:`L` and output length :math:`O` covers

.. math::
    [\\lfloor iL/O \\rfloor,\\ \\lceil (i+1)L/O \\rceil)

and indices are flat positions in each ``(N, C)`` plane of the input, int64, as PyTorch's.
An output size of 1 everywhere is the migration guide's ReduceMean/ReduceMax with
``keep_dims=True`` (taken automatically).

Backends: on CPU both run ``aot`` kernels (``custom_ops/cpu/pool_kernel.cc``: PyTorch's loop
over each bin in C++, its numbers bit for bit), elsewhere the composite: averaging MatMul /
ReduceMean for average pooling (faster than MindSpore's AdaptiveAvgPool2D/3D kernels in graph
mode, which stay selectable as ``native``), separable gathers for max pooling.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat.custom_ops import pool as _pool_kernels
from mscompat.custom_ops.registry import (
    TensorSpec,
    call,
    device_target,
    register,
    set_order,
)
from mscompat.shape._pooling import (
    adaptive_bins,
    adaptive_output_size,
    adaptive_table,
    adaptive_weights,
    check_pool_input,
    empty_like_output,
    from_planes,
    gather_planes,
    kernel_max,
    max_flat_index,
    max_flat_index_global,
    shape_carrier,
    to_planes,
)

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
]

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
            if out != length:
                w = adaptive_weights(length, out, np_dtype)
                if axis == y.ndim - 1:
                    y = ops.matmul(y, Tensor(np.ascontiguousarray(w.T)))
                else:
                    shape = y.shape
                    pre = int(np.prod(shape[:axis]))
                    post = int(np.prod(shape[axis + 1 :]))
                    y = ops.matmul(Tensor(w), y.reshape(pre, length, post))
                    y = y.reshape(shape[:axis] + (out,) + shape[axis + 1 :])
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


@register(
    _AVG_OPS,
    "aot",
    devices=("CPU",),
    probe=_pool_kernels.probe,
    note="C++ loop of PyTorch's (sum of each bin / its lengths)",
    supports=_avg_kernel_supports,
)
def _avg_aot(x: Tensor, output_size: Tuple[int, ...]) -> Tensor:
    """``WindowMean`` on ``x`` as it is."""
    n = len(output_size)
    spatial = x.shape[x.ndim - n :]
    unit = _bin_ranges(1, 1)
    ranges = [unit] * (3 - n) + [_bin_ranges(spatial[i], output_size[i]) for i in range(n)]
    op = _pool_kernels.KERNELS[device_target()]["WindowMean"]
    return op(x, ranges[0], ranges[1], ranges[2], shape_carrier((n,)))


@register(
    _MAX_OPS,
    "aot",
    devices=("CPU",),
    probe=_pool_kernels.probe,
    note="C++ scan of each bin (PyTorch's loop): values and indices",
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


# ----------------------------------------------------------------------------- front doors


def _avg(op: str, x: Tensor, out: Tuple[int, ...]) -> Tensor:
    if x.size == 0 or 0 in out:  # answered here: no backend sees an empty tensor
        return empty_like_output(x, len(out), out)[0]
    return call(op, x, out)


def _max(op: str, x: Tensor, out: Tuple[int, ...], return_indices: bool) -> MaxOut:
    if x.size == 0 or 0 in out:
        values, indices = empty_like_output(x, len(out), out)
        if return_indices:
            return values, indices
        return values
    return call(op, x, out, return_indices)


def _check_return_indices(return_indices: Any, fn: str) -> None:
    if not isinstance(return_indices, bool):
        raise TypeError(f"{fn}(): return_indices must be a bool, but got {return_indices!r}")


def adaptive_avg_pool1d(input: Tensor, output_size: OutputSize) -> Tensor:
    """1-D adaptive average pooling, as ``torch.nn.functional.adaptive_avg_pool1d``.

    Each output element is the mean of its bin
    :math:`[\\lfloor iL/O \\rfloor, \\lceil (i+1)L/O \\rceil)`; any :math:`L` and :math:`O`
    (non-divisible, or :math:`O > L`).

    Args:
        input (Tensor[N, C, L] or Tensor[C, L]): float16, float32 or float64.
        output_size (int | tuple[int | None]): :math:`O`; ``None`` keeps :math:`L`.

    Returns:
        Tensor[N, C, O] or Tensor[C, O]: ``input``'s dtype (float16 accumulated in float32).

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` not an int/tuple.
        ValueError: ``input`` not 2-D/3-D, an empty non-batch dim, a negative output size.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_avg_pool1d
        >>> x = ms.Tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]])
        >>> adaptive_avg_pool1d(x, 3)
        Tensor(shape=[1, 1, 3], dtype=Float32, value=
        [[[ 1.50000000e+00,  3.00000000e+00,  4.50000000e+00]]])
    """
    x = check_pool_input(input, 1, "adaptive_avg_pool1d")
    out = adaptive_output_size(output_size, x.shape[-1:], "adaptive_avg_pool1d")
    return _avg("shape.adaptive_avg_pool1d", x, out)


def adaptive_avg_pool2d(input: Tensor, output_size: OutputSize) -> Tensor:
    """2-D adaptive average pooling, as ``torch.nn.functional.adaptive_avg_pool2d``.

    Bins along each spatial dim as in :func:`adaptive_avg_pool1d`; the output is the mean over
    the product of the two bins. An output size of ``1`` is ``ReduceMean(keep_dims=True)``.

    Args:
        input (Tensor[N, C, H, W] or Tensor[C, H, W]): float16, float32 or float64.
        output_size (int | tuple[int | None, int | None]): :math:`(H_{out}, W_{out})`;
            ``None`` keeps that input size.

    Returns:
        Tensor[N, C, H_out, W_out] or Tensor[C, H_out, W_out]: ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` of another type.
        ValueError: ``input`` not 3-D/4-D, an empty non-batch dim, ``output_size`` of the wrong
            length or negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_avg_pool2d
        >>> x = ms.Tensor([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]])
        >>> adaptive_avg_pool2d(x, (2, None))
        Tensor(shape=[1, 2, 3], dtype=Float32, value=
        [[[ 2.50000000e+00,  3.50000000e+00,  4.50000000e+00],
          [ 5.50000000e+00,  6.50000000e+00,  7.50000000e+00]]])
    """
    x = check_pool_input(input, 2, "adaptive_avg_pool2d")
    out = adaptive_output_size(output_size, x.shape[-2:], "adaptive_avg_pool2d")
    return _avg("shape.adaptive_avg_pool2d", x, out)


def adaptive_avg_pool3d(input: Tensor, output_size: OutputSize) -> Tensor:
    """3-D adaptive average pooling, as ``torch.nn.functional.adaptive_avg_pool3d``.

    Args:
        input (Tensor[N, C, D, H, W] or Tensor[C, D, H, W]): float16, float32 or float64.
        output_size (int | tuple[int | None, int | None, int | None]): output
            :math:`(D_{out}, H_{out}, W_{out})`; ``None`` keeps that input size.

    Returns:
        Tensor[N, C, D_out, H_out, W_out] or Tensor[C, D_out, H_out, W_out]: ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` of another type.
        ValueError: ``input`` not 4-D/5-D, an empty non-batch dim, ``output_size`` of the wrong
            length or negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_avg_pool3d
        >>> x = ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]])
        >>> adaptive_avg_pool3d(x, 1)
        Tensor(shape=[1, 1, 1, 1], dtype=Float32, value=
        [[[[ 4.50000000e+00]]]])
    """
    x = check_pool_input(input, 3, "adaptive_avg_pool3d")
    out = adaptive_output_size(output_size, x.shape[-3:], "adaptive_avg_pool3d")
    return _avg("shape.adaptive_avg_pool3d", x, out)


def adaptive_max_pool1d(
    input: Tensor, output_size: OutputSize, return_indices: bool = False
) -> MaxOut:
    """1-D adaptive max pooling, as ``torch.nn.functional.adaptive_max_pool1d``.

    Each output element is the maximum of its bin (bins as :func:`adaptive_avg_pool1d`). Like
    PyTorch, the index is the first maximum in the bin, and a NaN wins (the last NaN of the
    bin); the gradient flows to that element only.

    Args:
        input (Tensor[N, C, L] or Tensor[C, L]): float16, float32 or float64.
        output_size (int | tuple[int | None]): :math:`O`; ``None`` keeps :math:`L`.
        return_indices (bool): also return the int64 positions of the maxima. Default: False.

    Returns:
        Tensor[N, C, O] (or [C, O]), and with ``return_indices`` a tuple whose second element
        is the int64 indices into the last dim of ``input``.

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` of another type.
        ValueError: ``input`` not 2-D/3-D, an empty non-batch dim, a negative output size.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_max_pool1d
        >>> x = ms.Tensor([[[1.0, 3.0, 3.0, 0.0, 5.0]]])
        >>> values, indices = adaptive_max_pool1d(x, 3, return_indices=True)
        >>> values
        Tensor(shape=[1, 1, 3], dtype=Float32, value=
        [[[ 3.00000000e+00,  3.00000000e+00,  5.00000000e+00]]])
        >>> indices
        Tensor(shape=[1, 1, 3], dtype=Int64, value=
        [[[1, 1, 4]]])
    """
    x = check_pool_input(input, 1, "adaptive_max_pool1d")
    out = adaptive_output_size(output_size, x.shape[-1:], "adaptive_max_pool1d")
    _check_return_indices(return_indices, "adaptive_max_pool1d")
    return _max("shape.adaptive_max_pool1d", x, out, return_indices)


def adaptive_max_pool2d(
    input: Tensor, output_size: OutputSize, return_indices: bool = False
) -> MaxOut:
    """2-D adaptive max pooling, as ``torch.nn.functional.adaptive_max_pool2d``.

    The index is the flat position ``h * W + w`` in each ``(N, C)`` plane of the first maximum
    of the bin in row-major order (the last NaN if the bin holds NaN), as PyTorch's.

    Args:
        input (Tensor[N, C, H, W] or Tensor[C, H, W]): float16, float32 or float64.
        output_size (int | tuple[int | None, int | None]): :math:`(H_{out}, W_{out})`;
            ``None`` keeps that input size.
        return_indices (bool): also return the int64 indices. Default: False.

    Returns:
        Tensor[N, C, H_out, W_out] (or [C, H_out, W_out]), and with ``return_indices`` a tuple
        whose second element is the int64 indices of the same shape.

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` of another type.
        ValueError: ``input`` not 3-D/4-D, an empty non-batch dim, ``output_size`` of the wrong
            length or negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_max_pool2d
        >>> x = ms.Tensor([[[1.0, 9.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 2.0]]])
        >>> values, indices = adaptive_max_pool2d(x, 2, return_indices=True)
        >>> values
        Tensor(shape=[1, 2, 2], dtype=Float32, value=
        [[[ 9.00000000e+00,  9.00000000e+00],
          [ 8.00000000e+00,  8.00000000e+00]]])
        >>> indices
        Tensor(shape=[1, 2, 2], dtype=Int64, value=
        [[[1, 1],
          [7, 7]]])
    """
    x = check_pool_input(input, 2, "adaptive_max_pool2d")
    out = adaptive_output_size(output_size, x.shape[-2:], "adaptive_max_pool2d")
    _check_return_indices(return_indices, "adaptive_max_pool2d")
    return _max("shape.adaptive_max_pool2d", x, out, return_indices)


def adaptive_max_pool3d(
    input: Tensor, output_size: OutputSize, return_indices: bool = False
) -> MaxOut:
    """3-D adaptive max pooling, as ``torch.nn.functional.adaptive_max_pool3d``.

    Indices are flat positions ``(d * H + h) * W + w`` in each ``(N, C)`` volume.

    Args:
        input (Tensor[N, C, D, H, W] or Tensor[C, D, H, W]): float16, float32 or float64.
        output_size (int | tuple[int | None, int | None, int | None]): output
            :math:`(D_{out}, H_{out}, W_{out})`; ``None`` keeps that input size.
        return_indices (bool): also return the int64 indices. Default: False.

    Returns:
        Tensor of the output shape, and with ``return_indices`` a tuple whose second element
        is the int64 indices.

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` of another type.
        ValueError: ``input`` not 4-D/5-D, an empty non-batch dim, ``output_size`` of the wrong
            length or negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_max_pool3d
        >>> x = ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]], [[8.0, 6.0], [7.0, 8.0]]]])
        >>> values, indices = adaptive_max_pool3d(x, 1, return_indices=True)
        >>> float(values.reshape(-1)[0]), int(indices.reshape(-1)[0])
        (8.0, 4)
    """
    x = check_pool_input(input, 3, "adaptive_max_pool3d")
    out = adaptive_output_size(output_size, x.shape[-3:], "adaptive_max_pool3d")
    _check_return_indices(return_indices, "adaptive_max_pool3d")
    return _max("shape.adaptive_max_pool3d", x, out, return_indices)


# ----------------------------------------------------------------------------- Cells


class AdaptiveAvgPool1d(nn.Cell):
    """1-D adaptive average pooling Cell. See :func:`adaptive_avg_pool1d`.

    Args:
        output_size (int | tuple[int | None]): target output length.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveAvgPool1d
        >>> AdaptiveAvgPool1d(2)(ms.Tensor([[1.0, 2.0, 4.0]]))
        Tensor(shape=[1, 2], dtype=Float32, value=
        [[ 1.50000000e+00,  3.00000000e+00]])
    """

    def __init__(self, output_size: OutputSize) -> None:
        super().__init__()
        self.output_size = output_size

    def construct(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(nn.Cell):
    """2-D adaptive average pooling Cell. See :func:`adaptive_avg_pool2d`.

    Args:
        output_size (int | tuple[int | None, int | None]): target :math:`(H_{out}, W_{out})`.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveAvgPool2d
        >>> AdaptiveAvgPool2d(1)(ms.Tensor([[[1.0, 2.0], [3.0, 6.0]]]))
        Tensor(shape=[1, 1, 1], dtype=Float32, value=
        [[[ 3.00000000e+00]]])
    """

    def __init__(self, output_size: OutputSize) -> None:
        super().__init__()
        self.output_size = output_size

    def construct(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(nn.Cell):
    """3-D adaptive average pooling Cell. See :func:`adaptive_avg_pool3d`.

    Args:
        output_size (int | tuple[int | None, int | None, int | None]): target output size.

    Shape:
        - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or
          :math:`(C, D_{out}, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveAvgPool3d
        >>> AdaptiveAvgPool3d((1, 1, 1))(ms.ops.ones((2, 1, 3, 4, 5), ms.float32)).shape
        (2, 1, 1, 1, 1)
    """

    def __init__(self, output_size: OutputSize) -> None:
        super().__init__()
        self.output_size = output_size

    def construct(self, input: Tensor) -> Tensor:
        return adaptive_avg_pool3d(input, self.output_size)


class AdaptiveMaxPool1d(nn.Cell):
    """1-D adaptive max pooling Cell. See :func:`adaptive_max_pool1d`.

    Args:
        output_size (int | tuple[int | None]): target output length.
        return_indices (bool): also return the int64 indices. Default: False.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`; indices likewise.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveMaxPool1d
        >>> AdaptiveMaxPool1d(2)(ms.Tensor([[1.0, 2.0, 4.0]]))
        Tensor(shape=[1, 2], dtype=Float32, value=
        [[ 2.00000000e+00,  4.00000000e+00]])
    """

    def __init__(self, output_size: OutputSize, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def construct(self, input: Tensor) -> MaxOut:
        return adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(nn.Cell):
    """2-D adaptive max pooling Cell. See :func:`adaptive_max_pool2d`.

    Args:
        output_size (int | tuple[int | None, int | None]): target :math:`(H_{out}, W_{out})`.
        return_indices (bool): also return the int64 indices. Default: False.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`; indices
          likewise.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveMaxPool2d
        >>> AdaptiveMaxPool2d(1)(ms.Tensor([[[1.0, 2.0], [3.0, 6.0]]]))
        Tensor(shape=[1, 1, 1], dtype=Float32, value=
        [[[ 6.00000000e+00]]])
    """

    def __init__(self, output_size: OutputSize, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def construct(self, input: Tensor) -> MaxOut:
        return adaptive_max_pool2d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool3d(nn.Cell):
    """3-D adaptive max pooling Cell. See :func:`adaptive_max_pool3d`.

    Args:
        output_size (int | tuple[int | None, int | None, int | None]): target output size.
        return_indices (bool): also return the int64 indices. Default: False.

    Shape:
        - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or
          :math:`(C, D_{out}, H_{out}, W_{out})`; indices likewise.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveMaxPool3d
        >>> AdaptiveMaxPool3d((1, 2, 2))(ms.ops.ones((1, 3, 4, 5), ms.float32)).shape
        (1, 1, 2, 2)
    """

    def __init__(self, output_size: OutputSize, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def construct(self, input: Tensor) -> MaxOut:
        return adaptive_max_pool3d(input, self.output_size, self.return_indices)
