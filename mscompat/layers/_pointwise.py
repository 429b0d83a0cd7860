"""Machinery shared by the elementwise activations of :mod:`mscompat.layers`.

Each activation is registered twice in the dispatch registry: ``native`` on Ascend, the
``mindspore.mint.nn.functional`` kernel (registered there, missing on CPU: "kernel unregistered"
for ``elu``, ``gelu``, ``hardtanh``, ``mish``, ``logsigmoid``...); ``composite`` everywhere else,
PyTorch's CPU formula in MindSpore ops. The composite computes float16 in float32 and rounds once
(PyTorch's CPU kernels compute reduced floats in float32), and writes each branch with
``ops.where`` on PyTorch's own condition, so the gradient at a kink (``relu`` at 0,
``hardtanh`` at its bounds) and NaN propagation are PyTorch's.

In-place variants (``relu_``...) and ``inplace=True`` return a new Tensor: MindSpore's graph
mode has no aliasing, and an in-place write would cut the autograd tape in PyNative.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import mindspore as ms
import numpy as np
from mindspore import Tensor, mint, ops
from mindspore.ops import constexpr

from mscompat._checks import check_bool, check_float_tensor, check_number
from mscompat.custom_ops.registry import call, register

__all__ = ["apply", "const", "mint_fn", "number", "register_activation", "safe", "work"]


@constexpr
def _split(value: float, plus: float, times: float, over: float, dtype: Any) -> Any:
    exact = (np.float64(value) + np.float64(plus)) * np.float64(times) / np.float64(over)
    high = np.float32(exact)
    low = np.float32(exact - np.float64(high))
    return Tensor(np.array(high, np.float64), dtype), Tensor(np.array(low, np.float64), dtype)


def const(
    value: float, dtype: Any, plus: float = 0.0, times: float = 1.0, over: float = 1.0
) -> Tensor:
    """``(value + plus) * times / over`` as a 0-d constant of ``dtype``, computed in float64
    in Python (under ``ms.jit`` arithmetic on Python floats, and a constant, pass through
    float32: a float64 constant is the sum of two float32-exact parts, 48 significant bits)."""
    high, low = _split(value, plus, times, over, dtype)
    return high + low if dtype == ms.float64 else high


@constexpr
def number(value: Any, name: str) -> float:
    """``value`` checked as a real number (``TypeError`` naming ``name``)."""
    return check_number(value, name)


def work(x: Tensor) -> Tensor:
    """``x`` in the dtype PyTorch's CPU kernel computes in: float32 for float16."""
    return x.astype(ms.float32) if x.dtype == ms.float16 else x


def safe(cond: Tensor, x: Tensor) -> Tensor:
    """``x`` where ``cond``, else 0: the operand of a branch ``ops.where`` may not select, so
    that its unused values (``exp`` of a large input) put no ``0 * inf`` in the gradient."""
    return ops.where(cond, x, ops.zeros_like(x))


def register_activation(
    name: str, native: Optional[Callable[..., Tensor]]
) -> Callable[[Callable[..., Tensor]], Callable[..., Tensor]]:
    """Decorator registering ``layers.<name>``: the composite runs ``formula(w, *params)`` with
    ``w`` in the compute dtype and rounds back to the input's; on Ascend, ``native(x, *params)``.
    (Named functions: ``ms.jit`` cannot parse a lambda passed as an argument.)"""

    def deco(formula: Callable[..., Tensor]) -> Callable[..., Tensor]:
        def composite(x: Tensor, *params: Any) -> Tensor:
            return formula(work(x), *params).astype(x.dtype)

        composite.__name__ = f"_{name}_composite"
        register(f"layers.{name}", "composite", note="PyTorch's CPU formula in MindSpore ops")(
            composite
        )
        if native is not None:
            register(
                f"layers.{name}",
                "native",
                devices=("Ascend",),
                note=f"mindspore.mint.nn.functional.{name}",
            )(native)
        return formula

    return deco


def apply(op: str, input: Any, inplace: Any, *params: Any) -> Tensor:
    """Check ``input`` (a float Tensor) and ``inplace``, then run the registered ``op``
    (``"layers.elu"``); an empty input is returned as it is (no kernel runs on it)."""
    x = check_float_tensor(input, "input")
    check_bool(inplace, "inplace")
    if x.size == 0:
        return x
    return call(op, x, *params)


def mint_fn(name: str) -> Callable[..., Tensor]:
    """``mindspore.mint.nn.functional.<name>`` called with positional parameters."""

    def native(x: Tensor, *params: Any) -> Tensor:
        return getattr(mint.nn.functional, name)(x, *params)

    native.__name__ = f"_{name}_native"
    return native
