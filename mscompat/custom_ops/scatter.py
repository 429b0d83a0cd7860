"""Bindings of the scatter kernels (``cpu/scatter_kernel.cc``) as MindSpore Custom ops.

* ``ScatterReduce``: ``scatter_reduce`` in one pass over the index, PyTorch's CPU order and
  rules (NaN wins amax/amin, include_self, integer mean rounding down), on the tensors' own
  shapes (no flat positions); also the number of indices out of range, which it skips (the
  front door raises on any). Its bprop is ``ScatterReduceGrad``, PyTorch's
  ``scatter_reduce_backward``.

Both are indexed inside graphs through :data:`KERNELS`, filled by the registry's probe.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import DataType

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "REDUCE_CODES", "params"]

#: The kernels' numbering of the reductions.
REDUCE_CODES = {"sum": 0, "prod": 1, "mean": 2, "amax": 3, "amin": 4}


def params(axis: int, reduce: str, include_self: bool, half: bool) -> Tensor:
    """The kernels' parameter vector ``[dim, reduce, include_self, half]``."""
    return Tensor((axis, REDUCE_CODES[reduce], int(include_self), int(half)), ms.int64)


def _forward_shape(x: Any, idx: Any, src: Any, p: Any) -> Any:
    return list(x), [1]


def _forward_bprop(
    x: Tensor, idx: Tensor, src: Tensor, p: Tensor, out: Any, dout: Any
) -> Tuple[Tensor, ...]:
    """PyTorch's ``scatter_reduce_backward`` (integers have no gradient)."""
    dx, dsrc = ops.zeros_like(x), ops.zeros_like(src)
    if x.dtype == ms.float32 or x.dtype == ms.float64:
        dx, dsrc = KERNELS[device_target()]["ScatterReduceGrad"](x, idx, src, out[0], dout[0], p)
    return dx, ops.zeros_like(idx), dsrc, ops.zeros_like(p)


def _self_check(k: Dict[str, Any]) -> None:
    """amax with a NaN, an untouched position and an index out of range (skipped, counted);
    the backward's tie split."""
    x = Tensor(np.array([1.0, 2.0, 3.0], np.float32))
    idx = Tensor(np.array([0, 0, 2, 5], np.int64))
    src = Tensor(np.array([np.nan, 4.0, 3.0, 9.0], np.float32))
    p = params(0, "amax", True, False)
    out, bad = k["ScatterReduce"](x, idx, src, p)
    got = out.asnumpy().tolist()
    ok = np.isnan(got[0]) and got[1:] == [2.0, 3.0] and bad.asnumpy().tolist() == [1]
    expect(ok, "scatter kernel", got, bad)
    dout = Tensor(np.ones(3, np.float32))
    dx, dsrc = k["ScatterReduceGrad"](x, idx[:3], src[:3], out, dout, p)
    # position 0: the NaN result equals nothing, so its share is 0 * (1 / 0), NaN (PyTorch's)
    grads = dx.asnumpy().tolist()
    ok = np.isnan(grads[0]) and grads[1:] == [1.0, 0.5] and dsrc.asnumpy().tolist()[2] == 0.5
    expect(ok, "scatter backward", dx, dsrc)


_VALUES = (*FLOATS, DataType.I32_Default, DataType.I64_Default)

LIBRARY = KernelLibrary(
    "scatter",
    [
        Entry(
            "ScatterReduce",
            "x idx:i64 src p:i64 -> out bad:i64",
            _VALUES,
            _forward_shape,
            _forward_bprop,
        ),
        Entry(
            "ScatterReduceGrad",
            "x idx:i64 src out dout p:i64 -> dx dsrc",
            FLOATS,
            shape_of(0, 2),
        ),
    ],
    _self_check,
)
KERNELS = LIBRARY.kernels
