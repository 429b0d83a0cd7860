"""Pointwise functions with PyTorch's dtype rules: ``atan``, ``atan2``, ``addcmul``.

``mint.atan``, ``mint.atan2``, ``mint.addcmul`` fail on MindSpore 2.10 CPU ("kernel
unregistered"); these run ``mint`` on Ascend and ``mindspore.ops`` elsewhere. As PyTorch,
``atan``/``atan2`` of integer or bool inputs are float32, and the operands of ``atan2`` and
``addcmul`` broadcast.
"""

from __future__ import annotations

from typing import Any, Tuple

import mindspore as ms
from mindspore import Tensor, mint, ops

from mscompat._checks import check_number, check_tensor, is_float_dtype
from mscompat._mint import mint_or_composite
from mscompat.custom_ops.registry import call

__all__ = ["addcmul", "atan", "atan2"]


def _float_input(x: Any, name: str) -> Tensor:
    """``x`` checked, and as PyTorch computes it: integer and bool inputs become float32."""
    x = check_tensor(x, name)
    return x if is_float_dtype(x.dtype) else x.astype(ms.float32)


def _broadcast_shape(
    a: Tuple[int, ...], b: Tuple[int, ...], fn: str, names: str
) -> Tuple[int, ...]:
    """The broadcast shape of shapes ``a`` and ``b``; ``ValueError`` naming them if none."""
    n = max(len(a), len(b))
    sa = (1,) * (n - len(a)) + tuple(a)
    sb = (1,) * (n - len(b)) + tuple(b)
    out: Tuple[int, ...] = ()
    for m, k in zip(sa, sb):
        if m != k and m != 1 and k != 1:
            raise ValueError(f"{fn}(): {names} must be broadcastable, but got shapes {a} and {b}")
        out = out + (k if m == 1 else m,)
    return out


def _atan_mint(x: Tensor) -> Tensor:
    return mint.atan(x)


@mint_or_composite("math.atan", _atan_mint, "ops.atan")
def _atan_composite(x: Tensor) -> Tensor:
    return ops.atan(x)


def atan(input: Tensor) -> Tensor:
    """Elementwise arctangent in radians, as :func:`torch.atan`.

    Args:
        input (Tensor[*]): float16/32/64; integer or bool inputs are computed in float32.

    Returns:
        Tensor: ``input``'s shape; its dtype, or float32 for an integer input.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import atan
        >>> [round(v, 4) for v in atan(ms.Tensor([0.0, 1.0, -1.0])).asnumpy().tolist()]
        [0.0, 0.7854, -0.7854]
    """
    x = _float_input(input, "atan(): input")
    if x.size == 0:  # answered here: no kernel sees an empty tensor
        return x
    return call("math.atan", x)


def _atan2_mint(y: Tensor, x: Tensor) -> Tensor:
    return mint.atan2(y, x)


def _delta(t: Tensor, fixed: Tensor) -> Tensor:
    """``t - fixed``: zero, with gradient one (0 where infinite: inf - inf is NaN)."""
    return ops.where(ops.isinf(fixed), ops.zeros_like(t), t - fixed)


@mint_or_composite("math.atan2", _atan2_mint, "ops.atan2, PyTorch's gradient (0 at the origin)")
def _atan2_composite(y: Tensor, x: Tensor) -> Tensor:
    # ops.atan2's gradient is NaN at (0, 0) where PyTorch's is 0: the value comes from
    # ops.atan2, the gradient from PyTorch's formula (x, -y) / (x^2 + y^2) with an infinite
    # reciprocal set to 0, attached through terms that are exactly zero (a coefficient set to 0
    # where the other input is infinite: inf * 0 would make the value NaN).
    sy, sx = ops.stop_gradient(y), ops.stop_gradient(x)
    value = ops.atan2(sy, sx)
    recip = 1 / (sy * sy + sx * sx)
    recip = ops.where(ops.isinf(recip), ops.zeros_like(recip), recip)
    dy = ops.where(ops.isinf(sx), ops.zeros_like(recip), sx * recip)
    dx = ops.where(ops.isinf(sy), ops.zeros_like(recip), sy * recip)
    return value + dy * _delta(y, sy) - dx * _delta(x, sx)


def atan2(input: Tensor, other: Tensor) -> Tensor:
    """Elementwise arctangent of ``input / other`` in the quadrant of ``(other, input)``, as
    :func:`torch.atan2`.

    Args:
        input (Tensor[*]): the y coordinates.
        other (Tensor[*]): the x coordinates; broadcasts with ``input``. Both must have the
            same dtype (integers become float32).

    Returns:
        Tensor: the broadcast shape, in ``(-pi, pi]``.

    Raises:
        TypeError: a non-Tensor, different dtypes.
        ValueError: shapes that do not broadcast.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import atan2
        >>> out = atan2(ms.Tensor([1.0, 1.0]), ms.Tensor([1.0, -1.0]))
        >>> [round(v, 4) for v in out.asnumpy().tolist()]
        [0.7854, 2.3562]
    """
    y = _float_input(input, "atan2(): input")
    x = _float_input(other, "atan2(): other")
    if y.dtype != x.dtype:
        raise TypeError(
            f"atan2(): input and other must have the same dtype, got {y.dtype} and {x.dtype}"
        )
    shape = _broadcast_shape(y.shape, x.shape, "atan2", "input and other")
    if 0 in shape:
        return ops.zeros(shape, y.dtype)
    return call("math.atan2", y, x)


def _addcmul_mint(x: Tensor, a: Tensor, b: Tensor, value: float) -> Tensor:
    return mint.addcmul(x, a, b, value=value)


@mint_or_composite("math.addcmul", _addcmul_mint, "input + value * tensor1 * tensor2")
def _addcmul_composite(x: Tensor, a: Tensor, b: Tensor, value: float) -> Tensor:
    dtype = x.dtype
    if dtype == ms.float16:  # PyTorch computes float16 in float32, rounding once
        x, a, b = x.astype(ms.float32), a.astype(ms.float32), b.astype(ms.float32)
    out = x + (a * b) * Tensor(value, x.dtype) if value != 1 else x + a * b
    return out.astype(dtype)


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1) -> Tensor:
    """``input + value * tensor1 * tensor2``, elementwise with broadcasting, as
    :func:`torch.addcmul`.

    Args:
        input (Tensor[*]): float16/32/64 or an integer dtype.
        tensor1 (Tensor[*]): same dtype, broadcasts.
        tensor2 (Tensor[*]): same dtype, broadcasts.
        value (number): the scale of the product (an int for integer inputs).

    Returns:
        Tensor: the broadcast shape, ``input``'s dtype.

    Raises:
        TypeError: a non-Tensor, different dtypes, a non-number or (integer inputs) float
            ``value``.
        ValueError: shapes that do not broadcast.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import addcmul
        >>> x, t1, t2 = ms.Tensor([1.0, 1.0]), ms.Tensor([2.0, 3.0]), ms.Tensor([4.0])
        >>> addcmul(x, t1, t2, value=0.5).asnumpy().tolist()
        [5.0, 7.0]
    """
    x = check_tensor(input, "addcmul(): input")
    a = check_tensor(tensor1, "addcmul(): tensor1")
    b = check_tensor(tensor2, "addcmul(): tensor2")
    if not (x.dtype == a.dtype == b.dtype):
        raise TypeError(
            f"addcmul(): input, tensor1 and tensor2 must have the same dtype, "
            f"got {x.dtype}, {a.dtype}, {b.dtype}"
        )
    check_number(value, "addcmul(): value")  # the value itself is kept: an int stays exact
    if not is_float_dtype(x.dtype) and not isinstance(value, int):
        raise TypeError(f"addcmul(): value must be an int for integer input, got value={value!r}")
    _broadcast_shape(a.shape, b.shape, "addcmul", "tensor1 and tensor2")
    _broadcast_shape(x.shape, b.shape, "addcmul", "input and tensor2")
    shape = _broadcast_shape(x.shape, a.shape, "addcmul", "input and tensor1")
    shape = _broadcast_shape(shape, b.shape, "addcmul", "input and tensor2")
    if 0 in shape:
        return ops.zeros(shape, x.dtype)
    return call("math.addcmul", x, a, b, value)
