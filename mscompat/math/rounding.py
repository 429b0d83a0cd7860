"""Rounding to a number of decimals, as :func:`torch.round`.

``ops.round`` rounds half to even (as PyTorch) but has no ``decimals``. PyTorch scales by a
power of ten, rounds, and scales back (``nearbyint(x * 10**d) / 10**d``; for ``d < 0``
``nearbyint(x / 10**-d) * 10**-d``), float16 in float32; so do we, so the results (double
rounding included: ``round(0.125, decimals=2) == 0.12``) are PyTorch's.
"""

from __future__ import annotations

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_int, check_tensor, is_float_dtype
from mscompat.custom_ops.registry import call, register

__all__ = ["round"]

_INTS = (ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8)


@register("math.round", "composite", note="ops.round (half to even) of x scaled by 10**decimals")
def _round_composite(x: Tensor, decimals: int) -> Tensor:
    wide = x.astype(ms.float32) if x.dtype == ms.float16 else x
    if decimals > 0:
        scale = float(10**decimals)
        wide = ops.round(wide * scale) / scale
    elif decimals < 0:
        scale = float(10 ** (-decimals))
        wide = ops.round(wide / scale) * scale
    else:
        wide = ops.round(wide)
    return wide.astype(x.dtype)


def round(input: Tensor, *, decimals: int = 0) -> Tensor:  # noqa: A001 - PyTorch's name
    """Round to ``decimals`` decimal places, halves to even, as :func:`torch.round`.

    .. math::
        \\text{out} = \\operatorname{nearbyint}(x \\cdot 10^{d}) / 10^{d}

    The gradient is zero, as PyTorch's.

    Args:
        input (Tensor[*]): float16/32/64 (float16 computed in float32), or an integer dtype
            (returned unchanged; PyTorch has no integer kernel for ``decimals != 0``).
        decimals (int): decimal places; negative rounds to tens, hundreds, ...

    Returns:
        Tensor: ``input``'s shape and dtype.

    Raises:
        TypeError: ``input`` not a real Tensor, ``decimals`` not an int, an integer ``input``
            with ``decimals != 0``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import round
        >>> round(ms.Tensor([0.5, 1.5, 2.5, -0.5])).asnumpy().tolist()
        [0.0, 2.0, 2.0, -0.0]
        >>> round(ms.Tensor([1250.0, 1351.0]), decimals=-2).asnumpy().tolist()
        [1200.0, 1400.0]
    """
    x = check_tensor(input, "round(): input")
    decimals = check_int(decimals, "round(): decimals")
    if x.dtype in _INTS:
        if decimals != 0:
            raise TypeError(f"round(): decimals must be 0 for integer input ({x.dtype})")
        return x
    if not is_float_dtype(x.dtype):
        raise TypeError(f"round(): input must be a float or integer Tensor, but got {x.dtype}")
    if x.size == 0:  # answered here: no kernel sees an empty tensor
        return x
    if x.ndim == 0:
        return call("math.round", x.reshape((1,)), decimals).reshape(())
    return call("math.round", x, decimals)
