"""Binding of the fused box-regression loss kernels (``cpu/regression_loss_kernel.cc``:
MMDetection's smooth L1, L1 and balanced L1, elementwise) as MindSpore Custom ops with a custom
bprop.

The front doors (:func:`mscompat.losses.smooth_l1_loss`, ``l1_loss``, ``balanced_l1_loss``)
validate their inputs and ask the registry; ``mscompat/losses/regression.py`` registers these
kernels as the ``aot`` backends of ``losses.smooth_l1_loss``, ``l1_loss`` and
``balanced_l1_loss``; the reducing entry points run their weighted ``'mean'``/``'sum'``.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Tuple

import numpy as np
from mindspore import Tensor
from mindspore.ops import constexpr

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.loss_reduce import coef as const_coef
from mscompat.custom_ops.loss_reduce import run
from mscompat.custom_ops.registry import device_target

__all__ = [
    "BALANCED_L1",
    "FORWARD",
    "KERNELS",
    "L1",
    "LIBRARY",
    "OP_KINDS",
    "SMOOTH_L1",
    "coefficients",
    "head",
    "regression_loss",
]

#: The kernel's loss kinds (``coef[0]``).
L1, SMOOTH_L1, BALANCED_L1 = 0, 1, 2


def _coefficients(
    kind: int, beta: float = 1.0, alpha: float = 0.5, gamma: float = 1.5
) -> Tuple[float, ...]:
    b = math.e ** (gamma / alpha) - 1 if kind == BALANCED_L1 else 1.0
    return (float(kind), beta, alpha, gamma, b, alpha / b, gamma / b, alpha * beta)


@constexpr
def coefficients(
    kind: int, beta: float = 1.0, alpha: float = 0.5, gamma: float = 1.5
) -> Tuple[float, ...]:
    """The kernel's ``coef`` vector: ``(kind, beta, alpha, gamma, b, alpha / b, gamma / b,
    alpha * beta)`` with ``b = e ** (gamma / alpha) - 1``, in Python doubles as MMDetection
    computes them (rounded to the tensor's dtype by the caller). A ``constexpr``: computed in
    Python at compile time under ``ms.jit``."""
    return _coefficients(kind, beta, alpha, gamma)


#: The registry's op names of the kernel's kinds.
OP_KINDS = {
    "losses.l1_loss": L1,
    "losses.smooth_l1_loss": SMOOTH_L1,
    "losses.balanced_l1_loss": BALANCED_L1,
}


@constexpr
def head(op: str, beta: float = 1.0, alpha: float = 0.5, gamma: float = 1.5) -> Tuple[float, ...]:
    """:func:`coefficients` of the op ``op`` (:data:`OP_KINDS`) and its config (none, ``beta``
    or ``beta, alpha, gamma``)."""
    return _coefficients(OP_KINDS[op], beta, alpha, gamma)


def regression_loss(
    pred: Tensor,
    target: Tensor,
    head: Tuple[float, ...],
    plan: Tuple[Any, ...] = (),
    weight: Any = None,
) -> Tensor:
    """The loss of ``head`` (:func:`coefficients`): elementwise (pred's shape), or with the
    ``plan`` of :func:`~mscompat.custom_ops.loss_reduce.plan` the weighted mean or sum (0-d) in
    the same kernel."""
    if plan:
        kernel = KERNELS[device_target()]["RegressionLossReduce"]
        return run(kernel, head, plan, pred, target, weight)
    return FORWARD[device_target()](pred, target, const_coef(head, (), pred.dtype))


def _bprop(pred: Tensor, target: Tensor, coef: Tensor, out: Tensor, dout: Tensor) -> Any:
    dpred, dtarget = KERNELS[device_target()]["RegressionLossBackward"](pred, target, coef, dout)
    return (dpred, dtarget) + zeros(coef)


def _reduce_shape(pred: Any, target: Any, weight: Any, rcoef: Any) -> Any:
    if list(pred) != list(target) or list(rcoef) != [11]:
        raise ValueError(f"regression loss kernel: bad shapes {pred}, {target}, {rcoef}")
    return []


def _reduce_bprop(
    pred: Tensor, target: Tensor, weight: Tensor, rcoef: Tensor, out: Tensor, dout: Tensor
) -> Any:
    kernel = KERNELS[device_target()]["RegressionLossReduceBackward"]
    return kernel(pred, target, weight, rcoef, dout) + zeros(rcoef)


def _self_check(k: Dict[str, Any]) -> None:
    x = Tensor(np.array([0.0, 0.25, 3.0], np.float32))
    t = Tensor(np.zeros(3, np.float32))
    coef = Tensor(np.array(coefficients(SMOOTH_L1, beta=0.5), np.float32))
    out = k["RegressionLossForward"](x, t, coef).asnumpy()
    # d = 0: 0; d = 0.25 < beta: 0.5 * d^2 / beta = 0.0625; d = 3: d - beta / 2 = 2.75
    expect(np.allclose(out, [0.0, 0.0625, 2.75], rtol=1e-6), "regression loss kernel", out)
    # weights 1, 2, 1, the sum divided by 2: (0.0625 * 2 + 2.75) / 2
    rcoef = Tensor(np.array(coefficients(SMOOTH_L1, beta=0.5) + (1, 2, 1), np.float32))
    w = Tensor(np.array([1.0, 2.0, 1.0], np.float32))
    red = k["RegressionLossReduce"](x, t, w, rcoef).asnumpy()
    expect(np.allclose(red, 1.4375, rtol=1e-6), "regression loss reducing kernel", red)


LIBRARY = KernelLibrary(
    "regression_loss",
    [
        Entry("RegressionLossForward", "pred target coef -> loss", FLOATS, shape_of(0), _bprop),
        Entry(
            "RegressionLossBackward",
            "pred target coef dloss -> dpred dtarget",
            FLOATS,
            shape_of(0, 0),
            bprop=None,
        ),
        Entry(
            "RegressionLossReduce",
            "pred target weight rcoef -> out",
            FLOATS,
            _reduce_shape,
            _reduce_bprop,
        ),
        Entry(
            "RegressionLossReduceBackward",
            "pred target weight rcoef dout -> dpred dtarget dweight",
            FLOATS,
            shape_of(0, 0, 2),
            bprop=None,
        ),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
#: device -> the forward Custom op (the front doors'), filled with :data:`KERNELS`.
FORWARD: Dict[str, Any] = LIBRARY.table("RegressionLossForward")
probe = LIBRARY.probe
