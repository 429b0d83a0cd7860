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

from typing import Any, Dict

import mindspore as ms
import numpy as np
from mindspore import Tensor

from mscompat.custom_ops.aot import COPY_TYPES, FLOATS, Entry, KernelLibrary, expect, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "probe"]


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
    return (dx,) + zeros(geom, cols, image)


def _col2im_bprop(
    c: Tensor, geom: Tensor, cols: Tensor, image: Tensor, out: Tensor, dout: Tensor
) -> Any:
    return (KERNELS[device_target()]["Im2Col"](dout, geom, cols, image),) + zeros(geom, cols, image)


def _self_check(k: Dict[str, Any]) -> None:
    """Unfolds and folds a small case as PyTorch does."""
    x = Tensor(np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3))
    geom = Tensor(np.array([2, 2, 1, 1, 0, 0, 1, 1, 0], np.int64))  # k2, no padding, stride 1
    carriers = (Tensor(np.zeros((4, 2), np.int8)), Tensor(np.zeros((2, 3), np.int8)))
    cols = k["Im2Col"](x, geom, *carriers).asnumpy()
    # torch.nn.functional.unfold(x, 2)
    want = [[1.0, 2.0], [2.0, 3.0], [4.0, 5.0], [5.0, 6.0]]
    expect(cols.shape == (1, 4, 2) and cols[0].tolist() == want, "im2col kernel", cols)
    back = k["Col2Im"](Tensor(cols), geom, *carriers).asnumpy()
    # torch.nn.functional.fold(that, (2, 3), 2): each element times the blocks covering it
    expect(back.reshape(-1).tolist() == [1.0, 4.0, 3.0, 4.0, 10.0, 6.0], "col2im kernel", back)


_GEOMETRY = "geom:i64 cols_shape:i8 image_shape:i8"
LIBRARY = KernelLibrary(
    "fold",
    [
        Entry("Im2Col", f"x {_GEOMETRY} -> cols", COPY_TYPES, _cols_shape, _im2col_bprop),
        Entry("Col2Im", f"cols {_GEOMETRY} -> x", FLOATS, _image_shape, _col2im_bprop),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe
