"""Binding of the grid_sample kernels (``cpu/grid_sample_kernel.cc``) as MindSpore Custom ops.

``GridSample2d(x, grid, opts)`` is PyTorch's vectorized CPU kernel for 4-D input (bilinear,
nearest, bicubic; zeros, border, reflection; align_corners) in float32/float64, arithmetic
included; its bprop is ``GridSample2dBackward`` (gradients w.r.t. ``x`` and ``grid``). The
``aot`` backend of ``shape.grid_sample`` for 4-D float32/float64 input.

``GridSample3dHalfBackward(dy, x, grid, opts)`` is PyTorch's float16 backward for 5-D input
(bilinear, nearest): its scalar kernel with every operation rounded to float16, on float32
tensors that hold float16 values (the caller casts); the bprop of the ``aot`` backend's float16
5-D ``grid_sample``.
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from mindspore import Tensor
from mindspore.ops import DataType

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "MODES", "PADDINGS", "options", "probe"]

#: The kernels' codes for ``mode`` and ``padding_mode``.
MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
PADDINGS = {"zeros": 0, "border": 1, "reflection": 2}


def options(mode: str, padding_mode: str, align_corners: bool) -> np.ndarray:
    """The ``opts`` input: [mode, padding, align_corners] as int64."""
    return np.array([MODES[mode], PADDINGS[padding_mode], int(align_corners)], np.int64)


def _forward_shape(x: Any, grid: Any, opts: Any) -> Any:
    return [x[0], x[1], grid[1], grid[2]]


def _forward_bprop(x: Tensor, grid: Tensor, opts: Tensor, out: Tensor, dout: Tensor) -> Any:
    dx, dgrid = KERNELS[device_target()]["GridSample2dBackward"](dout, x, grid, opts)
    return (dx, dgrid) + zeros(opts)


def _self_check(k: Dict[str, Any]) -> None:
    """Samples a small case as PyTorch does."""
    x = Tensor(np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2))
    g = Tensor(np.array([[[[0.25, -0.5]]]], np.float32))
    opts = Tensor(options("bilinear", "zeros", False))
    y = k["GridSample2d"](x, g, opts).asnumpy().reshape(-1)
    # torch.nn.functional.grid_sample(x, g, "bilinear", "zeros", False)
    expect(np.allclose(y, [0.75, 4.75], rtol=0, atol=1e-6), "grid_sample kernel", y)
    dx, dg = k["GridSample2dBackward"](Tensor(np.ones((1, 2, 1, 1), np.float32)), x, g, opts)
    # the same call's x.grad and grid.grad for a gradient of ones
    want = np.array([0.25, 0.75, 0.0, 0.0] * 2, np.float32)
    ok = np.allclose(dx.asnumpy().reshape(-1), want, atol=1e-6) and np.allclose(
        dg.asnumpy().reshape(-1), [2.0, 4.0], atol=1e-6
    )
    expect(ok, "grid_sample backward", dx, dg)


_BACKWARD = "dy x grid opts:i64 -> dx dgrid"
LIBRARY = KernelLibrary(
    "grid_sample",
    [
        Entry("GridSample2d", "x grid opts:i64 -> y", FLOATS, _forward_shape, _forward_bprop),
        Entry("GridSample2dBackward", _BACKWARD, FLOATS, shape_of(1, 2)),
        Entry("GridSample3dHalfBackward", _BACKWARD, (DataType.F32_Default,), shape_of(1, 2)),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe
