"""Binding of the bicubic-interpolation kernels (``cpu/cubic_kernel.cc``) as MindSpore Custom ops.

``CubicResample(x, src_h, src_w, opts)`` interpolates the (N, C, H, W) tensor ``x`` with Keys'
cubic (A = -0.75) at the source coordinates PyTorch's ``area_pixel_compute_source_index``
gives every output row and column (tables from ``mscompat/shape/interpolate.py``), with
PyTorch's CPU arithmetic; its bprop is ``CubicResampleBackward``, PyTorch's backward loop. The
``aot`` backend of ``shape.interpolate`` in mode ``bicubic`` (without antialias).
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from mindspore import Tensor

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "probe"]


def _forward_shape(x: Any, src_h: Any, src_w: Any, opts: Any) -> Any:
    return [x[0], x[1], src_h[1], src_w[1]]


def _forward_bprop(
    x: Tensor, src_h: Tensor, src_w: Tensor, opts: Tensor, out: Tensor, dout: Tensor
) -> Any:
    dx = KERNELS[device_target()]["CubicResampleBackward"](dout, x, src_h, src_w, opts)
    return (dx,) + zeros(src_h, src_w, opts)


def _self_check(k: Dict[str, Any]) -> None:
    """Resamples a small case as PyTorch does."""
    x = Tensor(np.array([[[[0.0, 1.0, 2.0, 4.0]]]], np.float32))
    # (1, 4) -> (1, 3), align_corners=True: columns at 0, 1.5, 3; the single row at 0
    src_h = Tensor(np.zeros((2, 1), np.float32))
    src_w = Tensor(np.array([[0.0, 1.5, 3.0], [0.0, 1.5, 3.0]], np.float32))
    opts = Tensor(np.array([0], np.int64))
    y = k["CubicResample"](x, src_h, src_w, opts).asnumpy()
    # torch.nn.functional.interpolate(x, size=(1, 3), mode="bicubic", align_corners=True)
    expect(np.allclose(y.reshape(-1), [0.0, 1.40625, 4.0], rtol=0, atol=1e-6), "cubic kernel", y)
    dy = Tensor(np.ones((1, 1, 1, 3), np.float32))
    dx = k["CubicResampleBackward"](dy, x, src_h, src_w, opts).asnumpy()
    # the same call's x.grad for a gradient of ones
    ok = np.allclose(dx.reshape(-1), [0.90625, 0.59375, 0.59375, 0.90625], atol=1e-6)
    expect(ok, "cubic backward", dx)


LIBRARY = KernelLibrary(
    "cubic",
    [
        Entry(
            "CubicResample", "x src_h src_w opts:i64 -> y", FLOATS, _forward_shape, _forward_bprop
        ),
        Entry("CubicResampleBackward", "dy x src_h src_w opts:i64 -> dx", FLOATS, shape_of(1)),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe
