"""Bindings of the pooling kernels (``cpu/pool_kernel.cc``) as MindSpore Custom ops.

* ``WindowMax``: for every pooling window, the value and the flat index of the element
  PyTorch's CPU kernel picks (first maximum, last NaN); the aot backend of
  ``max_pool1d/2d/3d`` and ``adaptive_max_pool1d/2d/3d``. Its bprop is ``ScatterAddPlanes``,
  PyTorch's backward loop (each window's gradient added to its pick, in window order).
* ``ScatterPlanes``: max unpooling (zeros, then each value written at its index, a later
  duplicate overwriting); the aot backend of ``max_unpool1d/2d/3d``. Its bprop is
  ``GatherPlanes`` (the gradient at each index, 0 for an out-of-range one).

* ``WindowMean``: adaptive average pooling, PyTorch's loop (the window's sum in row-major order,
  divided by each axis's window length in turn); the aot backend of
  ``adaptive_avg_pool1d/2d/3d`` for float32/float64. Its bprop is ``WindowMeanGrad``.

All are indexed inside graphs through :data:`KERNELS`, filled by :func:`probe` (run by the
registry before the aot backend is chosen).
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor
from mindspore.ops import DataType

from mscompat.custom_ops.aot import (
    FLOATS,
    HALF_FLOATS,
    INDEX_TYPES,
    Entry,
    KernelLibrary,
    expect,
    shape_of,
    zeros,
)
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "probe"]


def _windows_shape(x: Any, t0: Any, t1: Any, t2: Any, dims: Any) -> Any:
    """(*lead, *window counts of the last ``dims`` tables)."""
    n = dims[0]
    return list(x[: len(x) - n]) + [t0[0], t1[0], t2[0]][3 - n :]


def _window_max_shape(x: Any, t0: Any, t1: Any, t2: Any, dims: Any) -> Any:
    p = _windows_shape(x, t0, t1, t2, dims)
    return p, p


def _window_max_bprop(
    x: Tensor, t0: Tensor, t1: Tensor, t2: Tensor, dims: Tensor, out: Any, dout: Any
) -> Tuple[Tensor, ...]:
    """PyTorch's max pooling backward: each window's gradient added to its picked element."""
    grad = dout[0]
    if grad.dtype == ms.float32 or grad.dtype == ms.float64:
        dx = KERNELS[device_target()]["ScatterAddPlanes"](grad, out[1], x, dims)
    else:  # integer input: no gradient
        dx = zeros(x)[0]
    return (dx,) + zeros(t0, t1, t2, dims)


def _scatter_shape(x: Any, idx: Any, size: Any) -> Any:
    return list(x[: len(x) - len(size)]) + list(size)


def _count_shape(idx: Any, size: Any) -> Any:
    return [1]


def _scatter_bprop(x: Tensor, idx: Tensor, size: Tensor, out: Tensor, dout: Tensor) -> Any:
    """Max unpooling's backward: the gradient at each index (zero for a skipped index)."""
    dx = KERNELS[device_target()]["GatherPlanes"](dout, idx, size)
    return (dx,) + zeros(idx, size)


def _mean_bprop(
    x: Tensor, r0: Tensor, r1: Tensor, r2: Tensor, dims: Tensor, out: Tensor, dout: Tensor
) -> Tuple[Tensor, ...]:
    """PyTorch's adaptive average pooling backward (``WindowMeanGrad``)."""
    dx = KERNELS[device_target()]["WindowMeanGrad"](dout, x, r0, r1, r2, dims)
    return (dx,) + zeros(r0, r1, r2, dims)


def _self_check(k: Dict[str, Any]) -> None:
    """Picks as PyTorch (first maximum, last NaN), unpools as PyTorch (a later duplicate
    overwrites), and the backward and adaptive-average kernels on small cases."""
    x = Tensor(np.array([[1.0, 3.0, 3.0, np.nan, 2.0, np.nan]], np.float32))
    one = Tensor(np.zeros((1, 1), np.int64))
    windows = Tensor(np.array([[0, 1, 2], [3, 4, 5]], np.int64))
    dims = Tensor(np.zeros((1,), np.int8))
    values, idx = k["WindowMax"](x, one, one, windows, dims)
    ok = idx.asnumpy().tolist() == [[1, 5]] and values.asnumpy()[0, 0] == 3.0
    expect(ok, "pool kernel", idx, "want [[1, 5]]")
    got = k["ScatterPlanes"](
        Tensor(np.array([[1.0, 2.0, 3.0]], np.float32)),
        Tensor(np.array([[2, 0, 2]], np.int64)),
        Tensor(np.zeros((4,), np.int8)),
    )
    expect(got.asnumpy().tolist() == [[2.0, 0.0, 3.0, 0.0]], "unpool kernel", got)
    count = k["CountOutside"](
        Tensor(np.array([[-1, 0, 3, 4]], np.int64)), Tensor(np.zeros((4,), np.int8))
    )
    expect(count.asnumpy().tolist() == [2], "unpool index check", count)
    dx = k["ScatterAddPlanes"](Tensor(np.array([[1.0, 2.0]], np.float32)), idx, x, dims).asnumpy()
    dy = k["GatherPlanes"](
        got, Tensor(np.array([[2, 9]], np.int64)), Tensor(np.zeros((4,), np.int8))
    ).asnumpy()
    ok = dx.tolist() == [[0.0, 1.0, 0.0, 0.0, 0.0, 2.0]] and dy.tolist() == [[3.0, 0.0]]
    expect(ok, "pool backward", dx, dy)
    ranges = Tensor(np.array([[0, 3], [2, 6]], np.int64))  # two overlapping windows
    unit = Tensor(np.array([[0, 1]], np.int64))
    avg_in = Tensor(np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]], np.float32))
    mean = k["WindowMean"](avg_in, unit, unit, ranges, dims).asnumpy()
    grad = k["WindowMeanGrad"](
        Tensor(np.array([[3.0, 8.0]], np.float32)), avg_in, unit, unit, ranges, dims
    ).asnumpy()
    ok = mean.tolist() == [[2.0, 4.5]] and grad.tolist() == [[1.0, 1.0, 3.0, 2.0, 2.0, 2.0]]
    expect(ok, "adaptive average kernel", mean, grad)


_TABLES = "t0:i64 t1:i64 t2:i64 dims:i8"
LIBRARY = KernelLibrary(
    "pool",
    [
        Entry(
            "WindowMax",
            f"x {_TABLES} -> values indices:i64",
            INDEX_TYPES,
            _window_max_shape,
            _window_max_bprop,
        ),
        Entry("ScatterAddPlanes", "dy indices:i64 like dims:i8 -> dx", FLOATS, shape_of(2)),
        Entry(
            "ScatterPlanes",
            "x indices:i64 size:i8 -> y",
            HALF_FLOATS,
            _scatter_shape,
            _scatter_bprop,
        ),
        Entry("GatherPlanes", "dy indices:i64 size:i8 -> dx", HALF_FLOATS, shape_of(1)),
        Entry(
            "CountOutside",
            "indices:i64 size:i8 -> count:i64",
            (DataType.I64_Default,),
            _count_shape,
        ),
        Entry("WindowMean", f"x {_TABLES} -> y", FLOATS, _windows_shape, _mean_bprop),
        Entry("WindowMeanGrad", f"dy like {_TABLES} -> dx", FLOATS, shape_of(1)),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe
