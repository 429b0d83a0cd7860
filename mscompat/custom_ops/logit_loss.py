"""Binding of the fused ``binary_cross_entropy_with_logits`` kernels
(``cpu/logit_loss_kernel.cc``) as MindSpore Custom ops with custom bprops.

The front door (:func:`mscompat.layers.binary_cross_entropy_with_logits`) validates its inputs
and asks the registry; ``mscompat/layers/loss_regression.py`` registers :func:`bce_with_logits`
as the ``aot`` backend of ``layers.binary_cross_entropy_with_logits``. A ``'mean'``/``'sum'``
without ``weight`` is one kernel (the reduction fused: a graph op around the kernel costs about
as much as the kernel at detection sizes); the rest is the elementwise kernel and MindSpore's
ops.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import TensorSpec, device_target

__all__ = ["KERNELS", "LIBRARY", "bce_with_logits", "kernel_dtypes", "probe"]


# PyTorch refuses to differentiate pos_weight: its gradient here is zeros
def _bprop(x: Tensor, t: Tensor, pw: Tensor, out: Tensor, dout: Tensor) -> Any:
    dx, dt = KERNELS[device_target()]["BceLogitsBackward"](x, t, pw, dout)
    return (dx, dt) + zeros(pw)


def _sum_bprop(x: Tensor, t: Tensor, pw: Tensor, coef: Tensor, out: Tensor, dout: Tensor) -> Any:
    dx, dt = KERNELS[device_target()]["BceLogitsSumBackward"](x, t, pw, coef, dout)
    return (dx, dt) + zeros(pw, coef)


def _scalar_shape(*_: Any) -> Any:
    return []


def _self_check(k: Dict[str, Any]) -> None:
    x = Tensor(np.array([0.0, 0.0, 2.0], np.float32))
    t = Tensor(np.array([1.0, 0.0, 1.0], np.float32))
    pw = Tensor(np.array([2.0], np.float32))
    got = k["BceLogitsForward"](x, t, pw).asnumpy()
    # x = 0: 2 log 2 for t = 1 (pos_weight 2), log 2 for t = 0; x = 2, t = 1: 2 log(1 + e^-2)
    want = [2 * np.log(2.0), np.log(2.0), 2 * np.log1p(np.exp(-2.0))]
    expect(np.allclose(got, want, rtol=1e-6), "logit loss kernel", got)
    total = k["BceLogitsSum"](x, t, pw, Tensor(np.array([3.0], np.float32))).asnumpy()
    expect(np.allclose(total, sum(want) / 3, rtol=1e-6), "logit loss kernel (mean)", total)


LIBRARY = KernelLibrary(
    "logit_loss",
    [
        Entry("BceLogitsForward", "x t pw -> loss", FLOATS, shape_of(0), _bprop),
        Entry("BceLogitsBackward", "x t pw dloss -> dx dt", FLOATS, shape_of(0, 0), None),
        Entry("BceLogitsSum", "x t pw coef -> loss", FLOATS, _scalar_shape, _sum_bprop),
        Entry(
            "BceLogitsSumBackward",
            "x t pw coef dout -> dx dt",
            FLOATS,
            shape_of(0, 0),
            None,
        ),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe


def kernel_dtypes(
    x: TensorSpec, t: TensorSpec, weight: Any, pos_weight: Any, *_: object
) -> Optional[str]:
    """The ``supports`` predicate of the ``aot`` backend: float32/float64 (the front door
    computes float16 in float32), one dtype for all tensors."""
    if x.dtype not in (ms.float32, ms.float64):
        return f"{x.dtype_name} is not supported by the kernel (float32/float64)"
    for other in (t, weight, pos_weight):
        if isinstance(other, TensorSpec) and other.dtype != x.dtype:
            return "mixed dtypes are not supported by the kernel"
    return None


@constexpr
def _trailing(x_shape: Tuple[int, ...], pw_shape: Tuple[int, ...]) -> bool:
    """Whether ``pos_weight``'s shape, leading ones dropped, is a trailing part of ``x``'s:
    then element ``i`` of the flat input takes ``pos_weight[i % numel]``."""
    dims = list(pw_shape)
    while dims and dims[0] == 1:
        dims.pop(0)
    return not dims or tuple(x_shape[len(x_shape) - len(dims) :]) == tuple(dims)


def _pos_weight_operand(x: Tensor, pos_weight: Optional[Tensor]) -> Tensor:
    if pos_weight is None:
        return Tensor([1.0], x.dtype)
    if _trailing(x.shape, pos_weight.shape):
        return pos_weight.reshape((-1,))
    return ops.broadcast_to(pos_weight, x.shape)


def bce_with_logits(x: Tensor, t: Tensor, pos_weight: Optional[Tensor], reduction: str) -> Tensor:
    """The loss of logits ``x`` and targets ``t`` (one shape and dtype, float32/float64;
    ``pos_weight`` broadcastable to ``x``), reduced (``'none'``/``'mean'``/``'sum'``)."""
    pw = _pos_weight_operand(x, pos_weight)
    k = KERNELS[device_target()]
    if reduction == "none":
        return k["BceLogitsForward"](x, t, pw)
    divisor = x.size if reduction == "mean" else 1
    return k["BceLogitsSum"](x, t, pw, Tensor([divisor], x.dtype))
