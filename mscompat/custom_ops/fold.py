"""Binding of the im2col / col2im kernels (``cpu/fold_kernel.cc``) as MindSpore Custom ops.

``Im2Col(x, geom, cols_shape, image_shape)`` is PyTorch's ``unfold`` of an (N, C, H, W) tensor
(a copy: floats, integers, bool) and ``Col2Im(cols, geom, cols_shape, image_shape)`` its ``fold``
(PyTorch's summation order; float32/float64, float16 through float32 with every addition rounded
to float16: ``round_half``, which the caller sets for float16 inputs of either op); each is the
other's bprop. ``geom`` is (9,) int64
``[kh, kw, dh, dw, ph, pw, sh, sw, round_half]``; the int8 carriers give the (K, L) column and
(H, W) image shapes. The ``aot`` backends of ``shape.unfold`` and ``shape.fold``.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import CustomRegOp, DataType

from mscompat.custom_ops.aot import (
    COPY_TYPES,
    KernelUnavailableError,
    aot_op,
    kernel_path,
    same_dtype,
    warn_once,
)
from mscompat.custom_ops.registry import current_device, device_target

__all__ = ["KERNELS", "kernel_ops", "probe"]

#: device -> entry point -> the Custom op, filled by :func:`kernel_ops`.
KERNELS: Dict[str, Dict[str, Any]] = {}

_I64 = DataType.I64_Default
_I8 = DataType.I8_Default


def _reg(name: str, data: str, out: str, target: str, dtypes: Tuple[Any, ...]) -> Any:
    reg = CustomRegOp(name).input(0, data).input(1, "geom").input(2, "cols_shape")
    reg = reg.input(3, "image_shape").output(0, out)
    for dt in dtypes:
        reg = reg.dtype_format(dt, _I64, _I8, _I8, dt)
    return reg.target(target).get_op_info()


def _cols_shape(x: Any, geom: Any, cols: Any, image: Any) -> Any:
    return [x[0], x[1] * cols[0], cols[1]]


def _image_shape(c: Any, geom: Any, cols: Any, image: Any) -> Any:
    return [c[0], c[1] // cols[0], image[0], image[1]]


def _im2col_bprop(
    x: Tensor, geom: Tensor, cols: Tensor, image: Tensor, out: Tensor, dout: Tensor
) -> Any:
    col2im = KERNELS[device_target()]["Col2Im"]
    if dout.dtype == ms.float16:  # the caller set round_half in geom (Im2Col ignores it)
        dx = col2im(dout.astype(ms.float32), geom, cols, image).astype(ms.float16)
    else:
        dx = col2im(dout, geom, cols, image)
    z = ops.zeros_like
    return dx, z(geom), z(cols), z(image)


def _col2im_bprop(
    c: Tensor, geom: Tensor, cols: Tensor, image: Tensor, out: Tensor, dout: Tensor
) -> Any:
    dc = KERNELS[device_target()]["Im2Col"](dout, geom, cols, image)
    z = ops.zeros_like
    return dc, z(geom), z(cols), z(image)


def kernel_ops(device: str) -> Tuple[Any, Any]:
    """The ``Im2Col`` and ``Col2Im`` Custom ops for ``device`` (built once)."""
    if device not in KERNELS:
        path = kernel_path("fold", device)
        f32, f64 = DataType.F32_Default, DataType.F64_Default
        im2col = aot_op(
            path,
            "Im2Col",
            _cols_shape,
            same_dtype,
            _reg("mscompat_im2col", "x", "cols", device, COPY_TYPES),
            _im2col_bprop,
        )
        col2im = aot_op(
            path,
            "Col2Im",
            _image_shape,
            same_dtype,
            _reg("mscompat_col2im", "cols", "x", device, (f32, f64)),
            _col2im_bprop,
        )
        KERNELS[device] = {"Im2Col": im2col, "Col2Im": col2im}
    return KERNELS[device]["Im2Col"], KERNELS[device]["Col2Im"]


def probe() -> None:
    """Registry probe: the library loads, unfolds and folds a small case as PyTorch does."""
    try:
        im2col, col2im = kernel_ops(current_device())
    except KernelUnavailableError as exc:
        warn_once("fold", f"mscompat: {exc}")
        raise
    x = Tensor(np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3))
    geom = Tensor(np.array([2, 2, 1, 1, 0, 0, 1, 1, 0], np.int64))  # k2, no padding, stride 1
    cols_shape = Tensor(np.zeros((4, 2), np.int8))
    image_shape = Tensor(np.zeros((2, 3), np.int8))
    cols = im2col(x, geom, cols_shape, image_shape).asnumpy()
    # torch.nn.functional.unfold(x, 2)
    want = [[1.0, 2.0], [2.0, 3.0], [4.0, 5.0], [5.0, 6.0]]
    if cols.shape != (1, 4, 2) or cols[0].tolist() != want:
        raise RuntimeError(f"im2col kernel self-check failed: {cols}")
    back = col2im(Tensor(cols), geom, cols_shape, image_shape).asnumpy()
    # torch.nn.functional.fold(that, (2, 3), 2): each element times the blocks covering it
    if back.reshape(-1).tolist() != [1.0, 4.0, 3.0, 4.0, 10.0, 6.0]:
        raise RuntimeError(f"col2im kernel self-check failed: {back}")
