"""Binding of the fused IoU-family box-loss kernels (``cpu/box_loss_kernel.cc``) as MindSpore
Custom ops with a custom bprop.

The front doors (:mod:`mscompat.losses.iou`'s ``iou_loss``, ``giou_loss``, ``diou_loss``,
``ciou_loss`` and :mod:`mscompat.vision.box_losses`' torchvision losses) validate their inputs
and ask the registry; this module declares the kernels and :func:`box_loss`, the call their
``aot`` backends make.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.loss_reduce import coef, run
from mscompat.custom_ops.registry import TensorSpec, device_target

__all__ = [
    "KERNELS",
    "KINDS",
    "LIBRARY",
    "box_loss",
    "kernel_dtypes",
    "probe",
]

#: The loss kinds of the kernel (its ``enum Kind``).
KINDS = {
    "mmdet_iou_linear": 0,
    "mmdet_iou_square": 1,
    "mmdet_iou_log": 2,
    "mmdet_giou": 3,
    "mmdet_diou": 4,
    "mmdet_ciou": 5,
    "tv_giou": 10,
    "tv_diou": 11,
    "tv_ciou": 12,
}


def _fwd_shape(pred: Any, target: Any, coef: Any) -> Any:
    if list(pred) != list(target) or not pred or pred[-1] != 4 or list(coef) != [3]:
        raise ValueError(f"box loss kernel: bad shapes {pred}, {target}, {coef}")
    return list(pred)[:-1]


def _bprop(pred: Tensor, target: Tensor, coef: Tensor, out: Tensor, dout: Tensor) -> Any:
    dpred, dtarget = KERNELS[device_target()]["BoxLossBackward"](pred, target, coef, dout)
    return (dpred, dtarget) + zeros(coef)


def _reduce_shape(pred: Any, target: Any, weight: Any, rcoef: Any) -> Any:
    if list(pred) != list(target) or not pred or pred[-1] != 4 or list(rcoef) != [6]:
        raise ValueError(f"box loss kernel: bad shapes {pred}, {target}, {rcoef}")
    return []


def _reduce_bprop(
    pred: Tensor, target: Tensor, weight: Tensor, rcoef: Tensor, out: Tensor, dout: Tensor
) -> Any:
    grads = KERNELS[device_target()]["BoxLossReduceBackward"](pred, target, weight, rcoef, dout)
    return grads + zeros(rcoef)


def _self_check(k: Dict[str, Any]) -> None:
    p = Tensor(np.array([[0.0, 0.0, 2.0, 2.0]], np.float32))
    t = Tensor(np.array([[1.0, 0.0, 3.0, 2.0]], np.float32))
    coef = Tensor(np.array([KINDS["mmdet_iou_linear"], 1e-6, 1e-6], np.float32))
    out = k["BoxLossForward"](p, t, coef).asnumpy()
    # intersection 2, union 6
    expect(np.allclose(out, [1.0 - 2.0 / 6.0], rtol=1e-6), "box loss kernel", out)
    # the same pair twice, weights 1 and 3, sum divided by 2: 2 * (1 - 1/3)
    rcoef = Tensor(np.array([KINDS["mmdet_iou_linear"], 1e-6, 1e-6, 1, 2, 1], np.float32))
    w = Tensor(np.array([1.0, 3.0], np.float32))
    two = [Tensor(np.concatenate([x.asnumpy()] * 2)) for x in (p, t)]
    red = k["BoxLossReduce"](two[0], two[1], w, rcoef).asnumpy()
    expect(np.allclose(red, 4.0 / 3.0, rtol=1e-6), "box loss reducing kernel", red)


LIBRARY = KernelLibrary(
    "box_loss",
    [
        Entry("BoxLossForward", "pred target coef -> loss", FLOATS, _fwd_shape, _bprop),
        # no second derivative
        Entry("BoxLossBackward", "pred target coef dloss -> dp dt", FLOATS, shape_of(0, 1), None),
        Entry(
            "BoxLossReduce", "pred target weight rcoef -> out", FLOATS, _reduce_shape, _reduce_bprop
        ),
        Entry(
            "BoxLossReduceBackward",
            "pred target weight rcoef dout -> dp dt dw",
            FLOATS,
            shape_of(0, 1, 2),
            None,
        ),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe


def kernel_dtypes(pred: TensorSpec, target: TensorSpec, *_: object) -> Optional[str]:
    """The ``supports`` predicate of the ``aot`` backends: both boxes float32 or both
    float64."""
    if pred.dtype == target.dtype and pred.dtype in (ms.float32, ms.float64):
        return None
    if pred.dtype != target.dtype:
        return f"mixed dtypes {pred.dtype_name}/{target.dtype_name} are not supported by the kernel"
    return f"{pred.dtype_name} is not supported by the kernel (float32/float64)"


def box_loss(
    pred: Tensor,
    target: Tensor,
    head: Tuple[float, float, float],
    plan: Tuple[Any, ...] = (),
    weight: Any = None,
) -> Tensor:
    """The loss of the pairs ``pred``, ``target`` (``(..., 4)``, one dtype, float32/float64);
    ``head`` = ``(kind, eps, eps2)``, kind of :data:`KINDS`. Elementwise ``(...)``, or with the
    ``plan`` of :func:`~mscompat.custom_ops.loss_reduce.plan` the weighted mean or sum (0-d) in
    the same kernel."""
    kernels = KERNELS[device_target()]
    if plan:
        return run(kernels["BoxLossReduce"], head, plan, pred, target, weight)
    return kernels["BoxLossForward"](pred, target, coef(head, (), pred.dtype))
