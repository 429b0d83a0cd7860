"""Binding of the fused scaled dot-product attention kernels (``cpu/attention_kernel.cc``) as
MindSpore Custom ops with a custom bprop; float32.

``SdpaForward(q, k, v, bias, index, opts) -> (out, stats)`` is the attention of ``q (N, L, E)``
with ``k (N / G, S, E)`` and ``v (N / G, S, Ev)`` (query ``n`` uses key/value ``n // G``: GQA
without repeating heads), adding ``bias[index[n]]`` (``bias (M, Lm, S)``, ``Lm`` L or 1) to
the scores where ``opts = [scale, is_causal, has_bias]`` says so; ``stats (N, L, 2)`` holds
each row's max score and log of its sum of exponentials, from which the backward recomputes
the weights (flash-attention style: no ``(L, S)`` tensor is kept between forward and
backward). Its bprop is
``SdpaBackward(q, k, v, bias, index, opts, out, stats, dout) -> (dq, dk, dv)``. The matrix
products are oneDNN's ``dnnl_sgemm`` from the libdnnl that MindSpore's CPU backend loads: the
library's probe fails where there is none.

:mod:`mscompat.layers.attention` registers the ``aot`` backend of
``layers.scaled_dot_product_attention`` with :func:`kernel_supports`.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional

import mindspore as ms
import numpy as np
from mindspore import Tensor
from mindspore.ops import DataType, constexpr

from mscompat.custom_ops.aot import Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import TensorSpec, device_target

__all__ = ["KERNELS", "LIBRARY", "attention", "kernel_supports", "options", "probe"]

_F32 = (DataType.F32_Default,)


def _forward_shape(q: Any, k: Any, v: Any, bias: Any, index: Any, opts: Any) -> Any:
    return [q[0], q[1], v[2]], [q[0], q[1], 2]


def _backward_shape(*shapes: Any) -> Any:
    return list(shapes[0]), list(shapes[1]), list(shapes[2])


def _bprop(
    q: Tensor, k: Tensor, v: Tensor, bias: Tensor, index: Tensor, opts: Tensor, out: Any, dout: Any
) -> Any:
    backward = KERNELS[device_target()]["SdpaBackward"]
    dq, dk, dv = backward(q, k, v, bias, index, opts, out[0], out[1], dout[0])
    return (dq, dk, dv) + zeros(bias, index, opts)


def _bprop_biased(
    q: Tensor, k: Tensor, v: Tensor, bias: Tensor, index: Tensor, opts: Tensor, out: Any, dout: Any
) -> Any:
    kernels = KERNELS[device_target()]
    dq, dk, dv = kernels["SdpaBackward"](q, k, v, bias, index, opts, out[0], out[1], dout[0])
    dbias = kernels["SdpaBiasGrad"](q, k, v, bias, index, opts, out[1], dout[0])
    return (dq, dk, dv, dbias) + zeros(index, opts)


@constexpr
def options(scale: float, is_causal: bool, has_bias: bool) -> Tensor:
    """The kernels' ``opts`` input ``[scale, is_causal, has_bias]`` (a compile-time constant
    under ``ms.jit``)."""
    return Tensor(np.array([scale, float(is_causal), float(has_bias)], np.float32))


def _self_check(k: Dict[str, Any]) -> None:
    """One query, two keys: weights (e, 1) / (e + 1); a second, fully masked query gives 0."""
    q = Tensor(np.array([[[1.0, 0.0], [1.0, 0.0]]], np.float32))
    key = Tensor(np.array([[[1.0, 0.0], [0.0, 1.0]]], np.float32))
    v = Tensor(np.array([[[1.0], [3.0]]], np.float32))
    bias = Tensor(np.array([[[0.0, 0.0], [-np.inf, -np.inf]]], np.float32))
    index = Tensor(np.zeros((1,), np.int64))
    out, stats = k["SdpaForward"](q, key, v, bias, index, options(1.0, False, True))
    got = out.asnumpy().reshape(-1).tolist() + stats.asnumpy().reshape(-1).tolist()
    want = [(math.e + 3.0) / (math.e + 1.0), 0.0, 1.0, math.log(1.0 + 1.0 / math.e), math.inf, 0]
    expect(np.allclose(got, want, rtol=1e-5), "attention kernel", got)
    dout = Tensor(np.ones((1, 2, 1), np.float32))
    opts = options(1.0, False, True)
    dq, dk, dv = k["SdpaBackward"](q, key, v, bias, index, opts, out, stats, dout)
    # torch: the same attention's q.grad, k.grad, v.grad for a gradient of ones
    w = math.e / (math.e + 1.0)
    dv_want = [w, 1.0 - w]
    ok = np.allclose(dv.asnumpy().reshape(-1), dv_want, rtol=1e-5)
    expect(ok and not dq.asnumpy()[0, 1].any(), "its backward", dq, dk, dv)
    # dS = P (dP - rowsum(P dP)) with dP = v^T: (-2 w (1 - w), 2 w (1 - w)); the masked row 0
    dbias = k["SdpaBiasGrad"](q, key, v, bias, index, opts, stats, dout).asnumpy().reshape(-1)
    want = [-2.0 * w * (1.0 - w), 2.0 * w * (1.0 - w), 0.0, 0.0]
    expect(np.allclose(dbias, want, rtol=1e-5, atol=1e-7), "its mask gradient", dbias)


_SIGNATURE = "q k v bias index:i64 opts -> out stats"
LIBRARY = KernelLibrary(
    "attention",
    [
        Entry("SdpaForward", _SIGNATURE, _F32, _forward_shape, _bprop),
        Entry("SdpaForwardBiased", _SIGNATURE, _F32, _forward_shape, _bprop_biased),
        Entry(
            "SdpaBackward",
            "q k v bias index:i64 opts out stats dout -> dq dk dv",
            _F32,
            _backward_shape,
            None,
        ),
        Entry(
            "SdpaBiasGrad", "q k v bias index:i64 opts stats dout -> dbias", _F32, shape_of(3), None
        ),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe


def kernel_supports(
    q: TensorSpec,
    k: Any,
    v: Any,
    mask: Any,
    dropout_p: float,
    is_causal: bool,
    scale: float,
    groups: int,
) -> Optional[str]:
    """The ``supports`` predicate of the ``aot`` backend: float32 (float16 computed in float32
    and rounded once, as the composite and PyTorch's CPU kernels), no dropout, ``E >= 1``."""
    if q.dtype not in (ms.float16, ms.float32):
        return f"{q.dtype_name} is not supported by the kernel (float32; float16 through it)"
    if dropout_p > 0:
        return "dropout_p > 0 is not supported by the kernel (the composite draws the dropout)"
    if q.shape[-1] == 0:
        return "an empty embedding (E = 0) is not supported by the kernel"
    return None


def attention(
    q: Tensor, k: Tensor, v: Tensor, bias: Tensor, index: Tensor, opts: Tensor, biased: bool
) -> Tensor:
    """``SdpaForward``'s output (float32 ``(N, L, E)``, ``(N / G, S, E)``, ``(N / G, S, Ev)``
    inputs; ``opts`` from :func:`options`); ``biased``: ``bias`` is a float mask, whose gradient
    the bprop gives (``SdpaForwardBiased``; else the bias has none)."""
    entry = "SdpaForwardBiased" if biased else "SdpaForward"
    return KERNELS[device_target()][entry](q, k, v, bias, index, opts)[0]
