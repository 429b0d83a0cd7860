"""Binding of the fused distribution focal loss kernels (``cpu/dfl_kernel.cc``: MMDetection's
``distribution_focal_loss`` per row, or reduced with its weight, ``avg_factor`` and the
module's ``loss_weight``) as MindSpore Custom ops with a custom bprop.

:func:`mscompat.losses.distribution_focal_loss` validates its inputs and asks the registry;
its module registers these kernels as the ``aot`` backend of
``losses.distribution_focal_loss``.
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from mindspore import Tensor

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["DFL", "DFL_TOTAL", "KERNELS", "LIBRARY", "probe"]


def _dfl_bprop(
    pred: Tensor, label: Tensor, weight: Tensor, coef: Tensor, out: Tensor, dout: Tensor
) -> Any:
    dpred, dlabel, dweight = KERNELS[device_target()]["DflBackward"](
        pred, label, weight, coef, dout
    )
    return (dpred, dlabel, dweight) + zeros(coef)


def _scalar_shape(*shapes: Any) -> Any:
    return []


def _self_check(k: Dict[str, Any]) -> None:
    # two bins of equal logits: both cross-entropies are log 2, whatever the label
    x = Tensor(np.zeros((2, 2), np.float32))
    label = Tensor(np.array([0.25, 0.0], np.float32))
    weight = Tensor(np.array([1.0, 3.0], np.float32))
    coef = Tensor(np.array([1.0, 0.0, 2.0], np.float32))
    rows = k["DflForward"](x, label, weight, coef).asnumpy()
    expect(np.allclose(rows, [2 * np.log(2.0), 6 * np.log(2.0)], rtol=1e-6), "DFL kernel", rows)
    total = k["DflTotal"](x, label, weight, Tensor(np.array([3.5, 0.5, 1.0], np.float32))).asnumpy()
    expect(np.allclose(total, np.log(2.0), rtol=1e-6), "DFL total kernel", total)


LIBRARY = KernelLibrary(
    "dfl",
    [
        Entry("DflForward", "pred label weight coef -> loss", FLOATS, shape_of(1), _dfl_bprop),
        Entry("DflTotal", "pred label weight coef -> loss", FLOATS, _scalar_shape, _dfl_bprop),
        Entry(
            "DflBackward",
            "pred label weight coef dloss -> dpred dlabel dweight",
            FLOATS,
            shape_of(0, 1, 2),
            bprop=None,
        ),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
#: device -> the forward Custom ops (the front door's): per row, and reduced.
DFL: Dict[str, Any] = LIBRARY.table("DflForward")
DFL_TOTAL: Dict[str, Any] = LIBRARY.table("DflTotal")
probe = LIBRARY.probe
