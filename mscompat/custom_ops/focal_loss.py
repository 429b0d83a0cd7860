"""Binding of the fused sigmoid focal loss kernels (``cpu/focal_loss_kernel.cc``,
``cuda/focal_loss_kernel.cu``) as MindSpore Custom ops with a custom bprop.

The front door, :func:`mscompat.losses.sigmoid_focal_loss`, validates its inputs and asks the
registry; this module only builds the Custom ops; ``mscompat/losses/focal.py`` registers them as the
``aot`` backend of ``losses.sigmoid_focal_loss``.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import CustomRegOp, DataType

from mscompat.custom_ops.aot import KernelUnavailableError, aot_op, kernel_path, warn_once

__all__ = ["FORWARD", "kernel_ops", "probe"]

_OPS: Dict[str, Tuple[Any, Any]] = {}
#: device -> forward Custom op, filled by :func:`kernel_ops` (the registry probe runs it before
#: the aot backend is ever chosen); indexed inside graphs, where nothing may be built.
FORWARD: Dict[str, Any] = {}


def _reg_info(name: str, n_in: int, n_out: int, target: str) -> Any:
    reg = CustomRegOp(name)
    for i in range(n_in):
        reg = reg.input(i, f"x{i}")
    for i in range(n_out):
        reg = reg.output(i, f"y{i}")
    for fmt in (DataType.F32_Default, DataType.F64_Default):
        reg = reg.dtype_format(*([fmt] * (n_in + n_out)))
    return reg.target(target).get_op_info()


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


def _fwd_dtype(pred: Any, target: Any, coef: Any) -> Any:
    return _check_dtypes(pred, target, coef)


def _bwd_shape(pred: Any, target: Any, coef: Any, dout: Any) -> Any:
    shape = _check_shapes(pred, target, dout)
    return shape, shape


def _bwd_dtype(pred: Any, target: Any, coef: Any, dout: Any) -> Any:
    dtype = _check_dtypes(pred, target, coef, dout)
    return dtype, dtype


def kernel_ops(device: str) -> Tuple[Any, Any]:
    """(forward, backward) Custom ops for ``device``, built once per process."""
    if device not in _OPS:
        path = kernel_path("focal_loss", device)
        bwd = aot_op(
            path,
            "FocalLossBackward",
            _bwd_shape,
            _bwd_dtype,
            _reg_info("mscompat_focal_loss_backward", 4, 2, device),
        )

        def bprop(pred: Tensor, target: Tensor, coef: Tensor, out: Tensor, dout: Tensor) -> Any:
            dpred, dtarget = bwd(pred, target, coef, dout)
            return dpred, dtarget, ops.zeros_like(coef)

        fwd = aot_op(
            path,
            "FocalLossForward",
            _fwd_shape,
            _fwd_dtype,
            _reg_info("mscompat_focal_loss_forward", 3, 1, device),
            bprop,
        )
        _OPS[device] = (fwd, bwd)
        FORWARD[device] = fwd
    return _OPS[device]


def probe() -> None:
    """Registry probe: the kernel library loads and computes one known value."""
    from mscompat.custom_ops.registry import current_device

    try:
        fwd, _ = kernel_ops(current_device())
    except KernelUnavailableError as exc:
        warn_once("focal_loss", f"mscompat: {exc}")
        raise
    x = Tensor(np.array([0.0], np.float32))
    out = fwd(x, x, Tensor(np.array([2.0, 0.25], np.float32))).asnumpy()
    # pred 0, target 0: bce = log 2, pt = 1/2, focal weight 0.75 * 1/4
    if not np.allclose(out, [0.75 * 0.25 * np.log(2.0)], rtol=1e-6):
        raise RuntimeError(f"focal loss kernel self-check failed: {out}")
