"""Shared pieces of the pooling ops: argument parsing, window tables and the max selection.

Pooling is done one spatial dim at a time (separably) with static window tables: a table of
shape ``(O, K)`` lists, for each output position along a dim, the input positions of its window
in window order. Positions outside the input (padding, or the short bins of adaptive pooling)
are replaced by the nearest valid position of the same window, so the table stays monotone and
a duplicate only ever repeats its neighbour: the first maximum and the last NaN then land on the
same input position as PyTorch's loop ``if (val > maxval || isnan(val))`` picks.

The separable selection is exact: in row-major window order, the first maximum of a 2-D window
is the first maximum of the first row that holds the maximum, and the last NaN is the last NaN
of the last row that holds a NaN. The tables are built with NumPy from static shapes, so they
are compile-time constants under ``ms.jit``.
"""

from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat._checks import check_int64, check_numel, check_tensor, is_float_dtype, is_int
from mscompat.custom_ops import pool as _pool_kernels
from mscompat.custom_ops.aot import kernel_dtype
from mscompat.custom_ops.registry import device_target

__all__: List[str] = []

_DIM_NAMES = {1: "1d", 2: "2d", 3: "3d"}


def ntuple(value: Any, n: int, name: str, fn: str, allow_one: bool = True) -> Tuple[int, ...]:
    """``value`` (an int or a sequence of ``n`` ints, each within int64; or of 1 int, unless
    ``allow_one`` is False) as a tuple of ``n`` ints."""
    if is_int(value):
        return (int(check_int64(value, name, fn=fn)),) * n
    if isinstance(value, (tuple, list)):
        if len(value) == 1 and is_int(value[0]) and (allow_one or n == 1):
            return (int(check_int64(value[0], name, value, fn)),) * n
        if len(value) == n and all(is_int(v) for v in value):
            return tuple(int(check_int64(v, name, value, fn)) for v in value)
    raise TypeError(f"{fn}(): {name} must be an int or a tuple of {n} ints, but got {value!r}")


INT_DTYPES = (ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8)


def check_pool_input(
    x: Any,
    n: int,
    fn: str,
    name: str = "input",
    allow_int: bool = False,
    unbatched_empty: bool = True,
) -> Tensor:
    """Return ``x``; it must be a float (or, with ``allow_int``, integer) Tensor of ``n + 1`` or
    ``n + 2`` dims whose non-batch dims are not empty (PyTorch's rule: only the batch dim may be
    0; for an unbatched input, its first dim too unless ``unbatched_empty`` is False, as in
    PyTorch's max pooling)."""
    x = check_tensor(x, name)
    if allow_int and x.dtype in INT_DTYPES:
        pass
    elif not is_float_dtype(x.dtype):
        kinds = "floating-point or integer" if allow_int else "floating-point"
        raise TypeError(
            f"{fn}(): {name} must be a {kinds} Tensor (float16, float32 or float64"
            f"{', int8, int16, int32, int64 or uint8' if allow_int else ''}), "
            f"but got dtype {x.dtype}"
        )
    if x.ndim not in (n + 1, n + 2):
        raise ValueError(
            f"{fn}(): Expected {n + 1}D or {n + 2}D (batch mode) {name}, "
            f"but got {name} of shape {x.shape}"
        )
    for d in range(1 if x.ndim == n + 2 else 0, x.ndim):
        if x.shape[d] == 0 and (x.ndim == n + 2 or d > 0 or not unbatched_empty):
            raise ValueError(
                f"{fn}(): Expected {name} to have non-zero size for non-batch dimensions, "
                f"but got {name} of shape {x.shape} with dimension {d} being empty"
            )
    return x


@constexpr
def adaptive_output_size(
    output_size: Any, spatial: Sequence[int], fn: str, lead: Sequence[int] = ()
) -> Tuple[int, ...]:
    """``output_size`` (int, or tuple with ints or None meaning the input's size) as ints; the
    output (``lead`` dims, then those sizes) may not exceed :data:`MAX_ELEMENTS` elements.

    A compile-time constant under ``ms.jit``: its errors are raised before the dispatch of the
    call that needs its result is evaluated (a plain function's raise was not, and the
    registry then saw a dead value)."""
    n = len(spatial)
    kinds = "an int or a tuple of 1 int" if n == 1 else f"an int or a tuple of {n} ints or None"
    if output_size is None or isinstance(output_size, bool):
        raise TypeError(f"{fn}(): output_size must be {kinds}, but got {output_size!r}")
    if is_int(output_size):
        sizes: Tuple[Any, ...] = (output_size,) * n
    elif isinstance(output_size, (tuple, list)):
        sizes = tuple(output_size)
    else:
        raise TypeError(f"{fn}(): output_size must be {kinds}, but got {output_size!r}")
    if len(sizes) != n:
        raise ValueError(f"{fn}(): output_size must have {n} elements, but got {output_size!r}")
    out: List[int] = []
    for s, size in zip(sizes, spatial):
        if (s is None and n > 1) or is_int(s):
            check_int64(s, "output_size", output_size, fn)
        else:  # not an int; None only in 2-d/3-d (PyTorch: the 1-d functions take ints only)
            raise TypeError(f"{fn}(): output_size must be {kinds}, but got {output_size!r}")
        if s is None:
            out.append(int(size))
        elif s < 0:
            raise ValueError(
                f"{fn}(): elements of output_size must be >= 0, but got {output_size!r}"
            )
        else:
            out.append(int(s))
    check_numel(tuple(lead) + tuple(out), fn, output_size=output_size)
    return tuple(out)


def adaptive_bins(length: int, out: int) -> Tuple[List[int], List[int]]:
    """PyTorch's adaptive bins ``[floor(i*L/O), ceil((i+1)*L/O))``: (starts, ends)."""
    starts = [(i * length) // out for i in range(out)]
    ends = [-((-(i + 1) * length) // out) for i in range(out)]
    return starts, ends


def adaptive_table(length: int, out: int) -> np.ndarray:
    """PyTorch's adaptive bins (:func:`adaptive_bins`) as an ``(O, K)`` table."""
    starts, ends = adaptive_bins(length, out)
    k = max(e - s for s, e in zip(starts, ends))
    table = np.zeros((out, k), np.int32)
    for i, (s, e) in enumerate(zip(starts, ends)):
        table[i] = np.minimum(np.arange(s, s + k), e - 1)
    return table


def adaptive_weights(length: int, out: int, dtype: Any) -> np.ndarray:
    """``(O, L)`` averaging matrix of PyTorch's adaptive bins (row i: 1/count on its bin)."""
    w = np.zeros((out, length), dtype)
    for i, (s, e) in enumerate(zip(*adaptive_bins(length, out))):
        w[i, s:e] = 1.0 / (e - s)
    return w


def pool_output_length(
    length: int, kernel: int, stride: int, pad: int, dilation: int, ceil_mode: bool
) -> int:
    """PyTorch's ``pooling_output_shape``: the last window must start inside the input or the
    left padding."""
    extra = stride - 1 if ceil_mode else 0
    out = (length + 2 * pad - dilation * (kernel - 1) - 1 + extra) // stride + 1
    if ceil_mode and (out - 1) * stride >= length + pad:
        out -= 1
    return out


def pool_table(
    length: int, out: int, kernel: int, stride: int, pad: int, dilation: int
) -> Optional[np.ndarray]:
    """The ``(O, kernel)`` window table of max pooling; None if a window has no valid position."""
    table = np.zeros((out, kernel), np.int32)
    for o in range(out):
        pos = o * stride - pad + dilation * np.arange(kernel)
        valid = pos[(pos >= 0) & (pos < length)]
        if valid.size == 0:
            return None
        table[o] = np.clip(pos, valid[0], valid[-1])
    return table


def _arange_along(k: int, axis: int, ndim: int) -> Tensor:
    shape = [1] * ndim
    shape[axis] = k
    return Tensor(np.arange(k, dtype=np.int32).reshape(shape))


def select_along(g: Tensor, axis: int) -> Tensor:
    """Position along ``axis`` that PyTorch's max loop picks: the last NaN if any, else the
    first maximum. int32, ``axis`` removed."""
    k = g.shape[axis]
    nan = ops.isnan(g)
    filled = ops.where(nan, float("-inf"), g)
    top = ops.amax(filled, axis, True)
    rng = _arange_along(k, axis, g.ndim)
    first = ops.amin(ops.where(filled == top, rng, k), axis)
    last_nan = ops.amax(ops.where(nan, rng, -1), axis)
    return ops.where(last_nan >= 0, last_nan, first)


_SCAN_MAX_K = 16  # windows up to this size are scanned; longer ones are reduced in one go


def _column(t: Tensor, col: np.ndarray, axis: int) -> Tensor:
    """``t`` taken at positions ``col`` along ``axis``: a strided slice when ``col`` is an
    arithmetic progression (the usual case), else a gather."""
    step = int(col[1] - col[0]) if col.shape[0] > 1 else 1
    if step > 0 and bool(np.all(np.diff(col) == step)):
        begin = [0] * t.ndim
        end = list(t.shape)
        strides = [1] * t.ndim
        begin[axis] = int(col[0])
        end[axis] = int(col[-1]) + 1
        strides[axis] = step
        return ops.strided_slice(t, tuple(begin), tuple(end), tuple(strides))
    return ops.gather(t, Tensor(col.astype(np.int32)), axis)


def _const_along(values: np.ndarray, axis: int, ndim: int) -> Tensor:
    shape = [1] * ndim
    shape[axis] = values.shape[0]
    return Tensor(values.astype(np.int32).reshape(shape))


def max_flat_index(x: Tensor, tables: Sequence[np.ndarray]) -> Tensor:
    """Flat index into each plane of ``x`` (B, *S) of the element PyTorch's max pooling picks
    for every window; ``tables[i]`` is the ``(O_i, K_i)`` window table of spatial dim ``i``.
    Returns int64 of shape (B, prod(O)).

    Short windows run PyTorch's loop itself, one window position at a time over all windows
    at once (``take = val > cur or isnan(val)``); long ones use :func:`select_along`.
    """
    n = len(tables)
    val = ops.stop_gradient(x)
    carry = val  # replaced on the first step; keeps the type checker and the parser happy
    inner = 1
    for j in range(n):
        i = n - 1 - j
        axis = 1 + i
        table = tables[i]
        out, k = table.shape
        length = x.shape[axis]
        if k <= _SCAN_MAX_K:
            cur_v = _column(val, table[:, 0], axis)
            cur_p = _const_along(table[:, 0] * inner, axis, cur_v.ndim)
            if j > 0:
                cur_p = cur_p + _column(carry, table[:, 0], axis)
            for kk in range(1, k):
                if not bool(np.all(table[:, kk] == table[:, kk - 1])):
                    g = _column(val, table[:, kk], axis)
                    take = ops.logical_or(g > cur_v, ops.isnan(g))
                    cand = _const_along(table[:, kk] * inner, axis, g.ndim)
                    if j > 0:
                        cand = cand + _column(carry, table[:, kk], axis)
                    cur_v = ops.where(take, g, cur_v)
                    cur_p = ops.where(take, cand, cur_p)
            val = cur_v
            carry = ops.broadcast_to(cur_p, cur_v.shape)
        else:
            g = ops.gather(val, Tensor(table.reshape(-1)), axis)
            g = g.reshape(val.shape[:axis] + (out, k) + val.shape[axis + 1 :])
            sel = select_along(g, axis + 1)
            offs = Tensor((np.arange(out, dtype=np.int32) * k).reshape([out] + [1] * (n - 1 - i)))
            pos = ops.gather(Tensor(table.reshape(-1)), sel + offs, 0)
            val = ops.gather_elements(g, axis + 1, sel.expand_dims(axis + 1)).squeeze(axis + 1)
            carry = pos * inner if j == 0 else pos * inner + ops.gather_elements(carry, axis, pos)
        inner = inner * length
    return ops.stop_gradient(carry.reshape(x.shape[0], -1).astype(ms.int64))


@constexpr
def shape_carrier(shape: Tuple[int, ...]) -> Tensor:
    """An int8 zeros Tensor whose shape is the information (kernels read only its shape).

    Built at compile time: a ``Tensor(np.zeros((1,), np.int8))`` written in graph-mode code
    was merged with an equal-valued int64 constant of another shape (MindSpore 2.10).
    """
    return Tensor(np.zeros(shape, np.int8))


def kernel_max(x: Tensor, tables: Sequence[np.ndarray]) -> Tuple[Tensor, Tensor]:
    """PyTorch's pick by the ``aot`` kernel (``custom_ops/cpu/pool_kernel.cc``), the same scan
    as :func:`max_flat_index` run in C++, on ``x`` (*lead, *S) as it is (one table per spatial
    axis): ``(values, indices)`` of shape (*lead, *O), values in ``x``'s dtype, int64 flat
    indices into each plane; the gradient flows to ``x`` through the kernel's bprop."""
    n = len(tables)
    one = np.zeros((1, 1), np.int64)
    padded = [one] * (3 - n) + [np.asarray(t, np.int64) for t in tables]
    xk = kernel_dtype(x)
    op = _pool_kernels.KERNELS[device_target()]["WindowMax"]
    dims = shape_carrier((n,))
    values, flat = op(xk, Tensor(padded[0]), Tensor(padded[1]), Tensor(padded[2]), dims)
    if values.dtype != x.dtype:
        values = values.astype(x.dtype)
    return values, ops.stop_gradient(flat)


def max_flat_index_global(x: Tensor) -> Tensor:
    """Flat index of PyTorch's pick over each whole plane of ``x`` (B, *S): (B, 1) int64."""
    flat = ops.stop_gradient(x).reshape(x.shape[0], -1)
    return ops.stop_gradient(select_along(flat, 1).astype(ms.int64).reshape(-1, 1))


def gather_planes(x: Tensor, flat: Tensor, out_spatial: Tuple[int, ...]) -> Tensor:
    """``x`` (B, *S) gathered at ``flat`` (B, P) per plane, shaped (B, *out_spatial); its
    gradient scatter-adds to the picked elements, as PyTorch's max pooling backward."""
    planes = x.reshape(x.shape[0], -1)
    return ops.gather_elements(planes, 1, flat).reshape((x.shape[0],) + out_spatial)


def to_planes(x: Tensor, n: int) -> Tensor:
    """(N, C, *S) or (C, *S) -> (N*C, *S)."""
    return x.reshape((-1,) + x.shape[x.ndim - n :])


def from_planes(y: Tensor, x: Tensor, n: int) -> Tensor:
    """(N*C, *O) back to (N, C, *O) or (C, *O) following the layout of ``x``."""
    return y.reshape(x.shape[: x.ndim - n] + y.shape[1:])


def empty_like_output(x: Tensor, n: int, out_spatial: Tuple[int, ...]) -> Tuple[Tensor, Tensor]:
    """Zero-element (values, int64 indices) for an empty input or an empty output size."""
    shape = x.shape[: x.ndim - n] + out_spatial
    return ops.zeros(shape, x.dtype), ops.zeros(shape, ms.int64)
