"""Binding of the fused pointwise-loss kernels (``cpu/pointwise_loss_kernel.cc``:
``torch.nn.functional``'s ``binary_cross_entropy_with_logits``, ``l1_loss``, ``mse_loss``,
``smooth_l1_loss`` and ``huber_loss``) as MindSpore Custom ops with custom bprops.

The front doors (:mod:`mscompat.layers`) validate their inputs and ask the registry; their
modules register :func:`pointwise_loss` as the ``aot`` backend of their ops. A ``'mean'`` or
``'sum'`` is one kernel (the reduction fused: at detection sizes a graph op around the kernel
costs about as much as the kernel); an elementwise ``weight`` is MindSpore's ops around the
elementwise kernel.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import TensorSpec, device_target

__all__ = ["KERNELS", "KINDS", "LIBRARY", "kernel_dtypes", "pointwise_loss", "probe"]

#: The kernel's loss kinds (``coef[0]``).
KINDS = {"bce_with_logits": 0, "l1": 1, "mse": 2, "smooth_l1": 3, "huber": 4}


# PyTorch does not differentiate pos_weight: its gradient here is zeros
def _bprop(x: Tensor, t: Tensor, pw: Tensor, coef: Tensor, out: Tensor, dout: Tensor) -> Any:
    dx, dt = KERNELS[device_target()]["PointwiseLossBackward"](x, t, pw, coef, dout)
    return (dx, dt) + zeros(pw, coef)


def _sum_bprop(x: Tensor, t: Tensor, pw: Tensor, coef: Tensor, out: Tensor, dout: Tensor) -> Any:
    dx, dt = KERNELS[device_target()]["PointwiseLossSumBackward"](x, t, pw, coef, dout)
    return (dx, dt) + zeros(pw, coef)


def _scalar_shape(*_: Any) -> Any:
    return []


def _self_check(k: Dict[str, Any]) -> None:
    x = Tensor(np.array([0.0, 0.0, 2.0], np.float32))
    t = Tensor(np.array([1.0, 0.0, 1.0], np.float32))
    pw = Tensor(np.array([2.0], np.float32))
    got = k["PointwiseLoss"](x, t, pw, Tensor(np.array([0.0, 0.0, 1.0], np.float32))).asnumpy()
    # x = 0: 2 log 2 for t = 1 (pos_weight 2), log 2 for t = 0; x = 2, t = 1: 2 log(1 + e^-2)
    want = [2 * np.log(2.0), np.log(2.0), 2 * np.log1p(np.exp(-2.0))]
    expect(np.allclose(got, want, rtol=1e-6), "pointwise loss kernel", got)
    coef = Tensor(np.array([KINDS["smooth_l1"], 0.5, 3.0], np.float32))
    mean = k["PointwiseLossSum"](x, t, pw, coef).asnumpy()
    # |d| = 1, 0, 1 with beta 0.5: 0.75 + 0 + 0.75, over 3
    expect(np.allclose(mean, 0.5, rtol=1e-6), "pointwise loss kernel (mean)", mean)


LIBRARY = KernelLibrary(
    "pointwise_loss",
    [
        Entry("PointwiseLoss", "x t pw coef -> loss", FLOATS, shape_of(0), _bprop),
        Entry(
            "PointwiseLossBackward",
            "x t pw coef dloss -> dx dt",
            FLOATS,
            shape_of(0, 0),
            None,
        ),
        Entry("PointwiseLossSum", "x t pw coef -> loss", FLOATS, _scalar_shape, _sum_bprop),
        Entry(
            "PointwiseLossSumBackward",
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


def kernel_dtypes(x: TensorSpec, t: TensorSpec, *rest: Any) -> Optional[str]:
    """The ``supports`` predicate of the ``aot`` backends: float32/float64 (the front doors
    compute float16 in float32), one dtype for every tensor argument."""
    if x.dtype not in (ms.float32, ms.float64):
        return f"{x.dtype_name} is not supported by the kernel (float32/float64)"
    for other in (t, *rest):
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


def pointwise_loss(
    kind: str,
    x: Tensor,
    t: Tensor,
    reduction: str,
    p: float = 0.0,
    pos_weight: Optional[Tensor] = None,
) -> Tensor:
    """The loss ``kind`` (:data:`KINDS`) of ``x`` and ``t`` (one shape and dtype,
    float32/float64), reduced (``'none'``/``'mean'``/``'sum'``); ``p`` is smooth L1's beta
    (> 0) or Huber's delta, ``pos_weight`` BCE's (broadcastable to ``x``)."""
    pw = _pos_weight_operand(x, pos_weight)
    k = KERNELS[device_target()]
    divisor = x.size if reduction == "mean" else 1
    coef = Tensor([float(KINDS[kind]), p, float(divisor)], x.dtype)
    if reduction == "none":
        return k["PointwiseLoss"](x, t, pw, coef)
    return k["PointwiseLossSum"](x, t, pw, coef)
