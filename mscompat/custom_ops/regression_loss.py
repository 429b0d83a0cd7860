"""Binding of the fused box-regression loss kernels (``cpu/regression_loss_kernel.cc``:
MMDetection's smooth L1, L1 and balanced L1, elementwise) as MindSpore Custom ops with a custom
bprop.

The front doors (:func:`mscompat.losses.smooth_l1_loss`, ``l1_loss``, ``balanced_l1_loss``)
validate their inputs and ask the registry; ``mscompat/losses/regression.py`` registers these
kernels as the ``aot`` backend of ``losses.regression_elementwise``.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Tuple

import numpy as np
from mindspore import Tensor
from mindspore.ops import constexpr

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["FORWARD", "KERNELS", "LIBRARY", "L1", "SMOOTH_L1", "BALANCED_L1", "coefficients"]

#: The kernel's loss kinds (``coef[0]``).
L1, SMOOTH_L1, BALANCED_L1 = 0, 1, 2


@constexpr
def coefficients(
    kind: int, beta: float = 1.0, alpha: float = 0.5, gamma: float = 1.5
) -> Tuple[float, ...]:
    """The kernel's ``coef`` vector: ``(kind, beta, alpha, gamma, b, alpha / b, gamma / b,
    alpha * beta)`` with ``b = e ** (gamma / alpha) - 1``, in Python doubles as MMDetection
    computes them (rounded to the tensor's dtype by the caller). A ``constexpr``: computed in
    Python at compile time under ``ms.jit``."""
    b = math.e ** (gamma / alpha) - 1 if kind == BALANCED_L1 else 1.0
    return (float(kind), beta, alpha, gamma, b, alpha / b, gamma / b, alpha * beta)


def _bprop(pred: Tensor, target: Tensor, coef: Tensor, out: Tensor, dout: Tensor) -> Any:
    dpred, dtarget = KERNELS[device_target()]["RegressionLossBackward"](pred, target, coef, dout)
    return (dpred, dtarget) + zeros(coef)


def _self_check(k: Dict[str, Any]) -> None:
    x = Tensor(np.array([0.0, 0.25, 3.0], np.float32))
    t = Tensor(np.zeros(3, np.float32))
    coef = Tensor(np.array(coefficients(SMOOTH_L1, beta=0.5), np.float32))
    out = k["RegressionLossForward"](x, t, coef).asnumpy()
    # d = 0: 0; d = 0.25 < beta: 0.5 * d^2 / beta = 0.0625; d = 3: d - beta / 2 = 2.75
    expect(np.allclose(out, [0.0, 0.0625, 2.75], rtol=1e-6), "regression loss kernel", out)


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
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
#: device -> the forward Custom op (the front doors'), filled with :data:`KERNELS`.
FORWARD: Dict[str, Any] = LIBRARY.table("RegressionLossForward")
probe = LIBRARY.probe
