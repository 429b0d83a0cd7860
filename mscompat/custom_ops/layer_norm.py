"""Binding of the fused layer-norm kernels (``cpu/layer_norm_kernel.cc``) as MindSpore Custom
ops with a custom bprop.

The front door (:func:`mscompat.layers.layer_norm`) validates its inputs and asks the registry;
:mod:`mscompat.layers.affine_norm` registers :func:`layer_norm` as the ``aot`` backend of
``layers.layer_norm``. MindSpore's own CPU ``LayerNorm`` runs float32 only and its gradient
kernel measured 3-4x PyTorch's forward+backward.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import mindspore as ms
import numpy as np
from mindspore import Tensor

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, constant, expect, zeros
from mscompat.custom_ops.registry import TensorSpec, device_target

__all__ = ["KERNELS", "LIBRARY", "kernel_dtypes", "layer_norm", "probe"]


def _bprop(x: Tensor, w: Tensor, b: Tensor, coef: Tensor, out: Any, dout: Any) -> Any:
    dx, dw, db = KERNELS[device_target()]["LayerNormBackward"](x, w, out[1], out[2], dout[0])
    return (dx, dw, db) + zeros(coef)


def _fwd_shape(x: Any, w: Any, b: Any, coef: Any) -> Any:
    n, cols = int(np.prod(x)), int(np.prod(w))
    return list(x), [n // max(cols, 1)], [n // max(cols, 1)]


def _bwd_shape(x: Any, w: Any, mean: Any, rstd: Any, dy: Any) -> Any:
    return list(x), list(w), list(w)


def _self_check(k: Dict[str, Any]) -> None:
    x = Tensor(np.array([[1.0, 3.0], [0.0, 0.0]], np.float32))
    w = Tensor(np.array([2.0, 2.0], np.float32))
    b = Tensor(np.array([0.5, 0.5], np.float32))
    y, mean, _ = k["LayerNormForward"](x, w, b, Tensor(np.array([0.0], np.float32)))
    # row 0: mean 2, var 1 -> (-1, 1) * 2 + 0.5; row 1 with eps 0: 0 / 0 is NaN
    got = y.asnumpy()[0].tolist() + mean.asnumpy().tolist()
    expect(np.allclose(got, [-1.5, 2.5, 2.0, 0.0]), "layer norm kernel", got)


LIBRARY = KernelLibrary(
    "layer_norm",
    [
        Entry("LayerNormForward", "x w b coef -> y mean rstd", FLOATS, _fwd_shape, _bprop),
        Entry("LayerNormBackward", "x w mean rstd dy -> dx dw db", FLOATS, _bwd_shape, None),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe


def kernel_dtypes(x: TensorSpec, ndims: int, weight: Any, bias: Any, *_: Any) -> Optional[str]:
    """The ``supports`` predicate of the ``aot`` backend: float32/float64, the parameters in
    the input's dtype."""
    if x.dtype not in (ms.float32, ms.float64):
        return f"{x.dtype_name} is not supported by the kernel (float32/float64)"
    for p in (weight, bias):
        if isinstance(p, TensorSpec) and p.dtype != x.dtype:
            return "parameters of another dtype than the input are not supported by the kernel"
    return None


def layer_norm(
    x: Tensor, ndims: int, weight: Optional[Tensor], bias: Optional[Tensor], eps: float
) -> Tensor:
    """Layer norm of ``x`` (float32/float64) over its last ``ndims`` dims."""
    cols = 1
    for s in x.shape[x.ndim - ndims :]:
        cols *= s
    w = constant((cols,), 1.0, x.dtype) if weight is None else weight.reshape((cols,))
    b = constant((cols,), 0.0, x.dtype) if bias is None else bias.reshape((cols,))
    coef = Tensor([eps], x.dtype)
    return KERNELS[device_target()]["LayerNormForward"](x, w, b, coef)[0]
