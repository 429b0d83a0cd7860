"""Binding of the fused dense classification loss kernels (``cpu/class_loss_kernel.cc``:
MMDetection's quality focal and varifocal losses, elementwise) as MindSpore Custom ops with
custom bprops.

The front doors (:func:`mscompat.losses.quality_focal_loss`, ``varifocal_loss``) validate their
inputs and ask the registry; their modules register these kernels as the ``aot`` backends of
``losses.quality_focal_loss`` and ``losses.varifocal_loss``.
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from mindspore import Tensor

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "QFL", "VFL", "probe"]


def _qfl_bprop(
    pred: Tensor, pos: Tensor, score: Tensor, coef: Tensor, out: Tensor, dout: Tensor
) -> Any:
    dpred, dscore = KERNELS[device_target()]["QflBackward"](pred, pos, score, coef, dout)
    return (dpred,) + zeros(pos) + (dscore,) + zeros(coef)


def _vfl_bprop(pred: Tensor, target: Tensor, coef: Tensor, out: Tensor, dout: Tensor) -> Any:
    dpred, dtarget = KERNELS[device_target()]["VflBackward"](pred, target, coef, dout)
    return (dpred, dtarget) + zeros(coef)


def _self_check(k: Dict[str, Any]) -> None:
    x = Tensor(np.array([[0.0, 0.0]], np.float32))
    pos = Tensor(np.array([[True, False]]))
    score = Tensor(np.array([0.5], np.float32))
    qfl = k["QflForward"](x, pos, score, Tensor(np.array([2.0], np.float32))).asnumpy()
    # p = 1/2: positive bce(0, 1/2) = log 2 times |1/2 - 1/2|^2 = 0; negative log 2 * 1/4
    expect(np.allclose(qfl, [[0.0, 0.25 * np.log(2.0)]], rtol=1e-6), "QFL kernel", qfl)
    target = Tensor(np.array([[0.5, 0.0]], np.float32))
    vfl = k["VflForward"](x, target, Tensor(np.array([0.75, 2.0, 1.0], np.float32))).asnumpy()
    # positive: log 2 * 0.5; negative: log 2 * 0.75 * (1/2)^2
    want = [[0.5 * np.log(2.0), 0.75 * 0.25 * np.log(2.0)]]
    expect(np.allclose(vfl, want, rtol=1e-6), "VFL kernel", vfl)


LIBRARY = KernelLibrary(
    "class_loss",
    [
        Entry("QflForward", "pred pos:bool score coef -> loss", FLOATS, shape_of(0), _qfl_bprop),
        Entry(
            "QflBackward",
            "pred pos:bool score coef dloss -> dpred dscore",
            FLOATS,
            shape_of(0, 2),
            bprop=None,
        ),
        Entry("VflForward", "pred target coef -> loss", FLOATS, shape_of(0), _vfl_bprop),
        Entry(
            "VflBackward",
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
#: device -> the forward Custom ops (the front doors'), filled with :data:`KERNELS`.
QFL: Dict[str, Any] = LIBRARY.table("QflForward")
VFL: Dict[str, Any] = LIBRARY.table("VflForward")
probe = LIBRARY.probe
