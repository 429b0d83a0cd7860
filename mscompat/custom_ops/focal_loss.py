"""Binding of the fused sigmoid focal loss kernels (``cpu/focal_loss_kernel.cc``,
``cuda/focal_loss_kernel.cu``) as MindSpore Custom ops with a custom bprop.

The front door, :func:`mscompat.losses.sigmoid_focal_loss`, validates its inputs and asks the
registry; this module declares the Custom ops; ``mscompat/losses/focal.py`` registers them as the
``aot`` backend of ``losses.sigmoid_focal_loss``.
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from mindspore import Tensor

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["FORWARD", "KERNELS", "LIBRARY", "probe"]


def _check_dtypes(*dtypes: Any) -> Any:
    # MindSpore passes TensorTypes here: compare element types (x.element_type()).
    first = dtypes[0].element_type() if hasattr(dtypes[0], "element_type") else dtypes[0]
    for d in dtypes[1:]:
        other = d.element_type() if hasattr(d, "element_type") else d
        if other != first:
            raise TypeError(f"focal loss kernel: inputs must share one dtype, got {dtypes}")
    return dtypes[0]


def _check_shapes(pred: Any, *others: Any) -> Any:
    for s in others:
        if list(s) != list(pred):
            raise ValueError(f"focal loss kernel: shapes must match, got {pred} and {s}")
    return pred


def _fwd_shape(pred: Any, target: Any, coef: Any) -> Any:
    if list(coef) != [2]:
        raise ValueError(f"focal loss kernel: coef must have shape (2,), got {coef}")
    return _check_shapes(pred, target)


def _bwd_shape(pred: Any, target: Any, coef: Any, dout: Any) -> Any:
    shape = _check_shapes(pred, target, dout)
    return shape, shape


def _bwd_dtype(pred: Any, target: Any, coef: Any, dout: Any) -> Any:
    dtype = _check_dtypes(pred, target, coef, dout)
    return dtype, dtype


def _bprop(pred: Tensor, target: Tensor, coef: Tensor, out: Tensor, dout: Tensor) -> Any:
    dpred, dtarget = KERNELS[device_target()]["FocalLossBackward"](pred, target, coef, dout)
    return (dpred, dtarget) + zeros(coef)


def _self_check(k: Dict[str, Any]) -> None:
    x = Tensor(np.array([0.0], np.float32))
    out = k["FocalLossForward"](x, x, Tensor(np.array([2.0, 0.25], np.float32))).asnumpy()
    # pred 0, target 0: bce = log 2, pt = 1/2, focal weight 0.75 * 1/4
    expect(np.allclose(out, [0.75 * 0.25 * np.log(2.0)], rtol=1e-6), "focal loss kernel", out)


LIBRARY = KernelLibrary(
    "focal_loss",
    [
        Entry(
            "FocalLossForward",
            "pred target coef -> loss",
            FLOATS,
            _fwd_shape,
            _bprop,
            out_dtype=_check_dtypes,
        ),
        Entry(
            "FocalLossBackward",
            "pred target coef dloss -> dpred dtarget",
            FLOATS,
            _bwd_shape,
            bprop=None,
            out_dtype=_bwd_dtype,
        ),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
#: device -> the forward Custom op (the front door's), filled with :data:`KERNELS`.
FORWARD: Dict[str, Any] = LIBRARY.table("FocalLossForward")
probe = LIBRARY.probe
