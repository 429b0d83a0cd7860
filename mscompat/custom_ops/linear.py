"""Binding of the linear-interpolation kernels (``cpu/linear_kernel.cc``) as MindSpore Custom ops.

``LinearResample(x, idx0, lam0, idx1, lam1, idx2, lam2, opts)`` mixes, along each spatial
axis of ``x`` (N, C, *spatial), the two source elements PyTorch's
``compute_source_index_and_lambda`` picks (tables from ``mscompat/shape/interpolate.py``),
with PyTorch's CPU arithmetic (its generic kernel, or for 2-D outputs with
``out_h + out_w <= 128`` its channels-last kernel); its bprop is
``LinearResampleBackward``, PyTorch's backward loop. The ``aot`` backend of
``shape.interpolate`` in modes ``linear``, ``bilinear`` and ``trilinear`` for float32/float64,
and for float16 run in float32 (``opts`` ``half_weights``: the forward weights rounded to
float16, as PyTorch's float16 kernels store them).
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from mindspore import Tensor

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "probe"]


def _forward_shape(x: Any, i0: Any, l0: Any, i1: Any, l1: Any, i2: Any, *_: Any) -> Any:
    dims = len(x) - 2
    return list(x[:2]) + [i0[1], i1[1], i2[1]][3 - dims :]


def _forward_bprop(
    x: Tensor,
    i0: Tensor,
    l0: Tensor,
    i1: Tensor,
    l1: Tensor,
    i2: Tensor,
    l2: Tensor,
    opts: Tensor,
    out: Tensor,
    dout: Tensor,
) -> Any:
    dx = KERNELS[device_target()]["LinearResampleBackward"](dout, x, i0, l0, i1, l1, i2, l2, opts)
    return (dx,) + zeros(i0, l0, i1, l1, i2, l2, opts)


def _self_check(k: Dict[str, Any]) -> None:
    """Resamples a small case as PyTorch does."""
    x = Tensor(np.array([[[0.0, 1.0, 2.0]]], np.float32))
    unit_idx = Tensor(np.zeros((2, 1), np.int64))
    unit_lam = Tensor(np.array([[1.0], [0.0]], np.float32))
    # width 3 -> 5, align_corners=False: sources 0 (clamped), 0.4, 1.0, 1.6, 2.2 (last index)
    idx = Tensor(np.array([[0, 0, 1, 1, 2], [1, 1, 2, 2, 2]], np.int64))
    lam = Tensor(np.array([[1.0, 0.6, 1.0, 0.4, 0.8], [0.0, 0.4, 0.0, 0.6, 0.2]], np.float32))
    tables = (unit_idx, unit_lam, unit_idx, unit_lam, idx, lam, Tensor(np.array([0, 0], np.int64)))
    y = k["LinearResample"](x, *tables).asnumpy()
    # torch.nn.functional.interpolate(x[0], size=5, mode="linear")
    ok = np.allclose(y.reshape(-1), [0.0, 0.4, 1.0, 1.6, 2.0], rtol=0, atol=1e-6)
    expect(ok, "linear kernel", y)
    dx = k["LinearResampleBackward"](Tensor(np.ones((1, 1, 5), np.float32)), x, *tables)
    # the same call's x.grad for a gradient of ones
    ok = np.allclose(dx.asnumpy().reshape(-1), [1.6, 1.8, 1.6], rtol=0, atol=1e-6)
    expect(ok, "linear backward", dx)


_TABLES = "idx0:i64 lam0 idx1:i64 lam1 idx2:i64 lam2 opts:i64"
LIBRARY = KernelLibrary(
    "linear",
    [
        Entry("LinearResample", f"x {_TABLES} -> y", FLOATS, _forward_shape, _forward_bprop),
        Entry("LinearResampleBackward", f"dy x {_TABLES} -> dx", FLOATS, shape_of(1)),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe
