"""Binding of the matmul + col2im transposed-convolution kernels (``cpu/conv_gemm_kernel.cc``)
as MindSpore Custom ops; float32.

``ConvTransposeGemm(x, w, b, geom, size)`` is PyTorch's ``conv_transpose2d`` of an
(N, Cin, H, W) input with a (Cin, Cout / groups, kh, kw) weight and a (Cout,) bias into the
(N, Cout, Ho, Wo) output that ``size`` (an int8 carrier of shape (Ho, Wo)) names; ``geom`` is
(9,) int64 ``[kh, kw, dh, dw, ph, pw, sh, sw, groups]``. Its bprop is
``ConvTransposeGemmBackward(dy, x, w, geom, size) -> (dx, dw)`` and the bias gradient
``dy.sum((0, 2, 3))``. ``ConvGemm(x, w, b, geom, size)`` is PyTorch's ``conv2d`` (symmetric
padding, weight (C_out, C_in / groups, kh, kw), ``size`` the output's (H_out, W_out)): the
transposed convolution's input gradient, whose gradients are ``ConvTransposeGemm`` (input) and
``ConvGemmWeight(x, dy, w, geom)`` (weight). The matrix products are oneDNN's ``dnnl_sgemm``
from the libdnnl that MindSpore's CPU backend loads: the library's probe fails where there is
none.
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from mindspore import Tensor, ops
from mindspore.common import dtype as mstype
from mindspore.common.dtype import float32
from mindspore.ops import DataType

from mscompat.custom_ops.aot import Entry, KernelLibrary, expect, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "probe"]

_F32 = (DataType.F32_Default,)


def _forward_shape(x: Any, w: Any, b: Any, geom: Any, size: Any) -> Any:
    return [x[0], b[0], size[0], size[1]]


def _backward_shape(dy: Any, x: Any, w: Any, geom: Any, size: Any) -> Any:
    return (list(x), list(w))


def _backward_dtype(*dtypes: Any) -> Any:
    return (float32, float32)


def _forward_bprop(
    x: Tensor, w: Tensor, b: Tensor, geom: Tensor, size: Tensor, out: Tensor, dout: Tensor
) -> Any:
    dx, dw = KERNELS[device_target()]["ConvTransposeGemmBackward"](dout, x, w, geom, size)
    return (dx, dw, dout.sum((0, 2, 3))) + zeros(geom, size)


def _conv_shape(x: Any, w: Any, b: Any, geom: Any, size: Any) -> Any:
    return [x[0], w[0], size[0], size[1]]


def _conv_bprop(
    x: Tensor, w: Tensor, b: Tensor, geom: Tensor, size: Tensor, out: Tensor, dout: Tensor
) -> Any:
    k = KERNELS[device_target()]
    image = ops.zeros(x.shape[2:], mstype.int8)  # a carrier: its shape is x's (H, W)
    dx = k["ConvTransposeGemm"](dout, w, ops.zeros((x.shape[1],), float32), geom, image)
    dw = k["ConvGemmWeight"](x, dout, w, geom)
    return (dx, dw, dout.sum((0, 2, 3))) + zeros(geom, size)


def _weight_shape(x: Any, dy: Any, w: Any, geom: Any) -> Any:
    return list(w)


def _self_check(k: Dict[str, Any]) -> None:
    """A 1 x 2 input, kernel (1, 3), stride 2: the overlapping column adds both inputs."""
    x = Tensor(np.array([[[[1.0, 2.0]]]], np.float32))
    w = Tensor(np.array([[[[1.0, 10.0, 100.0]]]], np.float32))
    b = Tensor(np.array([0.5], np.float32))
    geom = Tensor(np.array([1, 3, 1, 1, 0, 0, 1, 2, 1], np.int64))
    size = Tensor(np.zeros((1, 5), np.int8))
    y = k["ConvTransposeGemm"](x, w, b, geom, size).asnumpy()
    # torch.nn.functional.conv_transpose2d(x, w, b, stride=(1, 2))
    want = [1.5, 10.5, 102.5, 20.5, 200.5]
    expect(y.reshape(-1).tolist() == want, "conv_transpose gemm kernel", y)
    dy = Tensor(np.array([[[[1.0, 2.0, 3.0, 4.0, 5.0]]]], np.float32))
    dx, dw = k["ConvTransposeGemmBackward"](dy, x, w, geom, size)
    # the same call's x.grad and w.grad for the output gradient dy
    ok = dx.asnumpy().reshape(-1).tolist() == [321.0, 543.0]
    expect(ok and dw.asnumpy().reshape(-1).tolist() == [7.0, 10.0, 13.0], "its backward", dx, dw)
    # the convolution of dy with w is dx: torch.nn.functional.conv2d(dy, w, b, stride=(1, 2))
    conv = k["ConvGemm"](dy, w, b, geom, Tensor(np.zeros((1, 2), np.int8))).asnumpy()
    expect(conv.reshape(-1).tolist() == [321.5, 543.5], "conv gemm kernel", conv)
    dw = k["ConvGemmWeight"](dy, x, w, geom).asnumpy()
    expect(dw.reshape(-1).tolist() == [7.0, 10.0, 13.0], "conv gemm weight kernel", dw)


_GEOMETRY = "geom:i64 size:i8"
LIBRARY = KernelLibrary(
    "conv_gemm",
    [
        Entry("ConvTransposeGemm", f"x w b {_GEOMETRY} -> y", _F32, _forward_shape, _forward_bprop),
        Entry("ConvGemm", f"x w b {_GEOMETRY} -> y", _F32, _conv_shape, _conv_bprop),
        Entry("ConvGemmWeight", "x dy w geom:i64 -> dw", _F32, _weight_shape, None),
        Entry(
            "ConvTransposeGemmBackward",
            f"dy x w {_GEOMETRY} -> dx dw",
            _F32,
            _backward_shape,
            None,
            _backward_dtype,
        ),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe
