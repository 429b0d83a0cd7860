"""Binding of the nearest-neighbour kernels (``cpu/nearest_kernel.cc``) as MindSpore Custom ops.

``NearestGather`` copies ``x[n, c, t0[i], t1[j], t2[k]]`` (``x`` of shape (N, C, *spatial), 1 to 3
spatial axes, which use the last tables) for PyTorch's source-index tables
(computed in ``mscompat/shape/interpolate.py``); its bprop is ``NearestScatterAdd``, PyTorch's
backward loop (gradients added to the source elements in output order; float16 accumulated in
float32 and rounded once, as PyTorch's CPU kernel does). The ``aot`` backend of
``shape.interpolate`` in modes ``nearest`` and ``nearest-exact``.
"""

from __future__ import annotations

from typing import Any, Dict

import mindspore as ms
import numpy as np
from mindspore import Tensor
from mindspore.ops import DataType

from mscompat.custom_ops.aot import HALF_FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "probe"]

_F16, _F32, _F64 = DataType.F16_Default, DataType.F32_Default, DataType.F64_Default


def _gather_shape(x: Any, t0: Any, t1: Any, t2: Any) -> Any:
    dims = len(x) - 2
    return list(x[:2]) + [t0[0], t1[0], t2[0]][3 - dims :]


def _gather_bprop(x: Tensor, t0: Tensor, t1: Tensor, t2: Tensor, out: Tensor, dout: Tensor) -> Any:
    scatter = KERNELS[device_target()]["NearestScatterAdd"]
    if dout.dtype == ms.float16:
        dx = scatter(dout.astype(ms.float32), x, t0, t1, t2).astype(ms.float16)
    else:
        dx = scatter(dout, x, t0, t1, t2)
    return (dx,) + zeros(t0, t1, t2)


def _self_check(k: Dict[str, Any]) -> None:
    """Gathers and scatter-adds a small case as PyTorch does."""
    x = Tensor(np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3))
    zero = Tensor(np.zeros((1,), np.int64))
    rows = Tensor(np.array([0, 0, 1], np.int64))
    cols = Tensor(np.array([0, 0, 1, 1, 2, 2], np.int64))
    y = k["NearestGather"](x, zero, rows, cols).asnumpy()
    ok = y[0, 0, 2].tolist() == [3.0, 3.0, 4.0, 4.0, 5.0, 5.0] and y[0, 0, 1, 5] == 2.0
    expect(ok, "nearest kernel", y)
    dy = Tensor(np.ones((1, 1, 3, 6), np.float32))
    dx = k["NearestScatterAdd"](dy, x, zero, rows, cols).asnumpy()
    expect(dx.reshape(-1).tolist() == [4.0, 4.0, 4.0, 2.0, 2.0, 2.0], "nearest backward", dx)


_TABLES = "t0:i64 t1:i64 t2:i64"
LIBRARY = KernelLibrary(
    "nearest",
    [
        # uint8: images, a copy as well
        Entry(
            "NearestGather",
            f"x {_TABLES} -> y",
            (*HALF_FLOATS, DataType.U8_Default),
            _gather_shape,
            _gather_bprop,
        ),
        # float16 gradients are accumulated in float32 (dy) for a float16 x
        Entry(
            "NearestScatterAdd",
            f"dy x:U {_TABLES} -> dx",
            ((_F32, _F32), (_F64, _F64), (_F32, _F16)),
            shape_of(1),
        ),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe
