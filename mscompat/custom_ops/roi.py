"""Bindings of the RoI pooling kernels (``cpu/roi_kernel.cc``) as MindSpore Custom ops.

``RoIAlign``, ``RoIPool``, ``PSRoIAlign`` and ``PSRoIPool`` are torchvision's CPU kernels
(``roi_align``, ``roi_pool``, ``ps_roi_align``, ``ps_roi_pool``), arithmetic and order of
accumulation included, for float32/float64 input (float16: float32 tensors holding float16
values, every operation rounded to float16 when :func:`params` says ``half``). Each has a bprop
that runs its backward kernel (torchvision's ``_roi_align_backward``...); the RoIs get no
gradient, as in torchvision. The ``aot`` backends of ``vision.roi_align``, ``vision.roi_pool``,
``vision.ps_roi_align`` and ``vision.ps_roi_pool``; indexed inside graphs through
:data:`KERNELS`.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np
from mindspore import Tensor

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "params", "probe"]


def params(sampling_ratio: int, aligned: bool, half: bool, spatial_scale: float) -> np.ndarray:
    """The kernels' ``p`` input: [sampling_ratio, aligned, half, the bits of spatial_scale as
    a float64] (int64)."""
    bits = np.array([float(spatial_scale)], np.float64).view(np.int64)[0]
    return np.array([sampling_ratio, int(aligned), int(half), bits], np.int64)


def _pooled_shape(x: Any, rois: Any, size: Any, p: Any) -> Any:
    return [rois[0], x[1], size[0], size[1]]


def _ps_shape(x: Any, rois: Any, size: Any, p: Any) -> Any:
    return [rois[0], x[1] // max(size[0] * size[1], 1), size[0], size[1]]


def _pool_shape(x: Any, rois: Any, size: Any, p: Any) -> Any:
    shape = _pooled_shape(x, rois, size, p)
    return shape, shape


def _align_bprop(
    x: Tensor, rois: Tensor, size: Tensor, p: Tensor, out: Tensor, dout: Tensor
) -> Any:
    dx = KERNELS[device_target()]["RoIAlignGrad"](dout, rois, x, size, p)
    return (dx,) + zeros(rois, size, p)


def _ps_align_bprop(
    x: Tensor, rois: Tensor, size: Tensor, p: Tensor, out: Tensor, dout: Tensor
) -> Any:
    dx = KERNELS[device_target()]["PSRoIAlignGrad"](dout, rois, x, size, p)
    return (dx,) + zeros(rois, size, p)


def _pool_bprop(x: Tensor, rois: Tensor, size: Tensor, p: Tensor, out: Any, dout: Any) -> Any:
    dx = KERNELS[device_target()]["RoIPoolGrad"](dout[0], out[1], rois, x, size, p)
    return (dx,) + zeros(rois, size, p)


def _ps_pool_bprop(
    x: Tensor, rois: Tensor, size: Tensor, p: Tensor, out: Tensor, dout: Tensor
) -> Any:
    dx = KERNELS[device_target()]["PSRoIPoolGrad"](dout, rois, x, size, p)
    return (dx,) + zeros(rois, size, p)


def _self_check(k: Dict[str, Any]) -> None:
    """A 4 x 4 ramp: roi_align of the whole map, roi_pool's argmax routing, the
    position-sensitive channel mapping (values worked out by hand from torchvision's rules)."""
    x = Tensor(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
    rois = Tensor(np.array([[0, 0.0, 0.0, 3.0, 3.0]], np.float32))
    one = Tensor(np.zeros((1, 1), np.int8))
    p = Tensor(params(1, False, False, 1.0))
    # one sample at (1.5, 1.5): the mean of 5, 6, 9, 10
    y = k["RoIAlign"](x, rois, one, p).asnumpy().tolist()
    expect(y == [[[[7.5]]]], "roi_align kernel", y)
    dx = k["RoIAlignGrad"](Tensor(np.ones((1, 1, 1, 1), np.float32)), rois, x, one, p).asnumpy()
    expect(dx.reshape(-1)[[5, 6, 9, 10]].tolist() == [0.25] * 4, "roi_align backward", dx)
    if "RoIPool" not in k:  # the GPU library: roi_align only
        return
    values, argmax = k["RoIPool"](x, rois, one, p)
    expect(values.asnumpy().tolist() == [[[[15.0]]]], "roi_pool kernel", values)
    expect(argmax.asnumpy().tolist() == [[[[15]]]], "roi_pool argmax", argmax)
    x4 = Tensor(np.arange(64, dtype=np.float32).reshape(1, 4, 4, 4))
    two = Tensor(np.zeros((2, 2), np.int8))
    ps = k["PSRoIPool"](x4, Tensor(np.array([[0, 0.0, 0.0, 4.0, 4.0]], np.float32)), two, p)
    # bin (i, j) averages channel 2 i + j over its 2 x 2 cells (clipped to H - 1, W - 1)
    got = ps.asnumpy().reshape(-1).tolist()
    expect(got == [2.5, 20.0, 40.5, 58.0], "ps_roi_pool kernel", got)


def _entry(name: str, shape: Any, bprop: Any) -> Tuple[Entry, Entry]:
    grad_sig = (
        "dy argmax:i32 rois like size:i8 p:i64 -> dx"
        if name == "RoIPool"
        else "dy rois like size:i8 p:i64 -> dx"
    )
    out = "y argmax:i32" if name == "RoIPool" else "y"
    return (
        Entry(name, f"x rois size:i8 p:i64 -> {out}", FLOATS, shape, bprop),
        Entry(f"{name}Grad", grad_sig, FLOATS, shape_of(3 if name == "RoIPool" else 2)),
    )


LIBRARY = KernelLibrary(
    "roi",
    [
        *_entry("RoIAlign", _pooled_shape, _align_bprop),
        *_entry("RoIPool", _pool_shape, _pool_bprop),
        *_entry("PSRoIAlign", _ps_shape, _ps_align_bprop),
        *_entry("PSRoIPool", _ps_shape, _ps_pool_bprop),
    ],
    _self_check,
    cuda_entries=("RoIAlign", "RoIAlignGrad"),
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe
