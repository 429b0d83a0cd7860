"""Elementwise arithmetic with PyTorch's CPU dtype rules, for the box and regression losses.

PyTorch promotes mixed float operands to the wider dtype and computes each float16 op in
float32, rounding the result once to float16; a Python scalar meets a float64 tensor in float64.
:func:`ew` applies one MindSpore function under these rules, so a loss written as a sequence of
``ew`` calls rounds where PyTorch rounds (float16) and keeps float64 exact.
"""

from __future__ import annotations

from typing import Any, Callable, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

from mscompat.losses.utils import _promote

__all__ = [
    "add",
    "clamp_min",
    "compare_scalar",
    "constant",
    "div",
    "ew",
    "f64",
    "mul",
    "scale",
    "square",
    "stop",
    "sub",
    "tmax",
    "tmean_last",
    "tmin",
]

F16, F32, F64 = ms.float16, ms.float32, ms.float64


def _dtype_of(xs: Any) -> Any:
    """PyTorch's result dtype: 0-d tensors (the losses' precomputed constants) count only when
    no operand has dims, as ``torch.result_type`` ranks them within a category."""
    dt = None
    for x in xs:
        if isinstance(x, Tensor) and x.ndim > 0:
            dt = x.dtype if dt is None else _promote(dt, x.dtype)
    if dt is None:
        for x in xs:
            if isinstance(x, Tensor):
                dt = x.dtype if dt is None else _promote(dt, x.dtype)
    return dt


def _operand(x: Any, dt: Any) -> Any:
    if not isinstance(x, Tensor):
        return Tensor(x, F64) if dt == F64 else x
    if dt == F16:
        return x.astype(F32)
    if x.dtype != dt:
        return x.astype(dt)
    return x


def ew(fn: Callable[..., Tensor], *xs: Any) -> Tensor:
    """``fn(*xs)`` on the operands promoted as PyTorch promotes them (floats only); a float16
    result is computed in float32 and rounded once, as PyTorch's CPU kernels do."""
    dt = _dtype_of(xs)
    y = fn(*[_operand(x, dt) for x in xs])
    if dt == F16:
        return y.astype(F16)
    return y


def stop(x: Tensor) -> Tensor:
    """``x.detach()``."""
    return ops.stop_gradient(x)


def tmean_last(x: Tensor) -> Tensor:
    """``x.mean(-1)``, float16 accumulated in float32 (PyTorch CPU)."""
    if x.dtype == F16:
        return x.astype(F32).mean(-1).astype(F16)
    return x.mean(-1)


def scale(loss: Tensor, factor: float) -> Tensor:
    """``factor * loss`` (MMDetection's ``loss_weight``), as PyTorch multiplies by a scalar."""
    return ew(lambda a, f: a * f, loss, float(factor))


def compare_scalar(op: Callable[[Tensor, Any], Tensor], x: Tensor, s: float) -> Tensor:
    """``op(x, s)`` for a comparison: PyTorch casts the scalar to ``x``'s dtype first (a float16
    tensor is compared with ``float16(s)``), unlike arithmetic, which keeps it in float32."""
    if x.dtype == F16:
        return op(x.astype(F32), float(np.float16(s)))
    if x.dtype == F64:
        return op(x, Tensor(s, F64))
    return op(x, s)


def add(a: Any, b: Any) -> Tensor:
    return ew(lambda x, y: x + y, a, b)


def sub(a: Any, b: Any) -> Tensor:
    return ew(lambda x, y: x - y, a, b)


def mul(a: Any, b: Any) -> Tensor:
    return ew(lambda x, y: x * y, a, b)


class _HalfDivide(nn.Cell):
    """``a / b`` for float16 tensors of one shape, with ATen's backward of ``div`` on Half
    tensors: ``grad / b`` and ``-grad * ((a / b) / b)``, each op computed in float32 and rounded
    to float16. The second overflows to inf where ``a / b**2`` passes 65504 (a zero-area box
    plus eps), and a zero incoming gradient (the side ``torch.min`` did not pick) then gives
    NaN, as PyTorch's float16 gradient has it; the derivative of the float32 division, rounded
    once, stays finite there."""

    def construct(self, a: Tensor, b: Tensor) -> Tensor:
        return (a.astype(F32) / b.astype(F32)).astype(F16)

    def bprop(self, a: Tensor, b: Tensor, out: Tensor, dout: Tensor) -> Tuple[Tensor, Tensor]:
        b32, d32 = b.astype(F32), dout.astype(F32)
        quotient = (out.astype(F32) / b32).astype(F16)  # (a / b) / b, a / b already rounded
        return (d32 / b32).astype(F16), (-d32 * quotient.astype(F32)).astype(F16)


_HALF_DIVIDE = _HalfDivide()


def div(a: Any, b: Any) -> Tensor:
    """``a / b`` (float16 tensors of one shape: :class:`_HalfDivide`'s PyTorch gradient)."""
    tensors = isinstance(a, Tensor) and isinstance(b, Tensor)
    if tensors and a.dtype == F16 and b.dtype == F16 and a.shape == b.shape:
        return _HALF_DIVIDE(a, b)
    return ew(lambda x, y: x / y, a, b)


def square(a: Tensor) -> Tensor:
    """``a ** 2`` (PyTorch's backward ``2 * a * grad`` equals that of ``a * a``)."""
    return ew(lambda x: x * x, a)


def tmax(a: Tensor, b: Tensor) -> Tensor:
    """``torch.max(a, b)``: ties split the gradient in halves in both frameworks."""
    return ew(ops.maximum, a, b)


def tmin(a: Tensor, b: Tensor) -> Tensor:
    return ew(ops.minimum, a, b)


def clamp_min(a: Tensor, low: float) -> Tensor:
    """``a.clamp(min=low)``; the gradient passes at ``a == low``, as in PyTorch."""
    return ew(lambda x, m: ops.clamp(x, min=m), a, low)


def constant(value: Any, dtype: Any) -> Tensor:
    """A 0-d operand for ``ew`` from a float64 0-d tensor: PyTorch computes its scalars in
    Python doubles, and graph mode computes Python floats in float32, so constants are built
    from float64 tensors and rounded once to the computation dtype (float32 for float16)."""
    return value if dtype == F64 else value.astype(F32)


def f64(value: float) -> Tensor:
    return Tensor(value, F64)
