"""Rectifier activations as ``torch.nn.functional`` and ``torch.nn``: ``relu``, ``relu6``,
``leaky_relu``, ``hardtanh``, ``threshold``, ``elu``, ``selu``, ``celu``, ``prelu``, ``silu``
and their Cells (``rrelu``: :mod:`mscompat.layers.rrelu`).

On MindSpore 2.10 CPU ``mint.nn.functional.elu``/``selu``/``hardtanh``/``relu6``/
``leaky_relu``/``threshold`` have no kernel, ``ops.elu`` refuses ``alpha != 1``, ``ops.selu``'s
gradient is wrong for negative inputs. Dispatch and the float16/NaN/kink conventions:
:mod:`mscompat.layers._pointwise`.
"""

from __future__ import annotations

from typing import Any, Optional

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

from mscompat._checks import check_bool, check_float_tensor, check_int
from mscompat.custom_ops.registry import call, register
from mscompat.layers._pointwise import apply, const, mint_fn, number, register_activation, safe

__all__ = [
    "CELU",
    "ELU",
    "Hardtanh",
    "LeakyReLU",
    "PReLU",
    "ReLU",
    "ReLU6",
    "SELU",
    "SiLU",
    "Threshold",
    "celu",
    "celu_",
    "elu",
    "elu_",
    "hardtanh",
    "hardtanh_",
    "leaky_relu",
    "leaky_relu_",
    "prelu",
    "relu",
    "relu_",
    "relu6",
    "selu",
    "selu_",
    "silu",
    "threshold",
    "threshold_",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _clamp(w: Tensor, low: float, high: float) -> Tensor:
    # PyTorch's hardtanh: a bound at or beyond it (gradient 0 there); NaN passes through with
    # its gradient (PyTorch's elementwise backward, which small tensors take)
    lo, hi = const(low, w.dtype), const(high, w.dtype)
    return ops.where(w <= lo, lo, ops.where(w >= hi, hi, w))


def _exp_branch(w: Tensor, alpha: float, scale: float, input_divisor: float) -> Tensor:
    # PyTorch's elu kernel: x <= 0 ? expm1(x / input_divisor) * alpha * scale : x * scale
    neg = w <= 0
    left = ops.expm1(safe(neg, w) * const(1.0, w.dtype, over=input_divisor))
    left = left * const(alpha, w.dtype, times=scale)
    right = w if scale == 1.0 else w * const(scale, w.dtype)
    return ops.where(neg, left, right)


@register_activation("relu", mint_fn("relu"))
def _relu(w: Tensor) -> Tensor:
    return ops.where(w <= 0, ops.zeros_like(w), w)


register_activation("hardtanh", mint_fn("hardtanh"))(_clamp)


@register_activation("leaky_relu", mint_fn("leaky_relu"))
def _leaky_relu(w: Tensor, slope: float) -> Tensor:
    return ops.where(w > 0, w, w * const(slope, w.dtype))


@register_activation("threshold", mint_fn("threshold"))
def _threshold(w: Tensor, threshold: float, value: float) -> Tensor:
    return ops.where(w <= const(threshold, w.dtype), const(value, w.dtype), w)


@register_activation("elu", mint_fn("elu"))
def _elu(w: Tensor, alpha: float) -> Tensor:
    return _exp_branch(w, alpha, 1.0, 1.0)


@register_activation("selu", mint_fn("selu"))
def _selu(w: Tensor) -> Tensor:
    return _exp_branch(w, _SELU_ALPHA, _SELU_SCALE, 1.0)


@register_activation("celu", None)
def _celu(w: Tensor, alpha: float) -> Tensor:
    return _exp_branch(w, alpha, 1.0, alpha)


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """Rectified linear unit, as :func:`torch.nn.functional.relu`: :math:`\\max(x, 0)`.

    NaN stays NaN; the gradient at 0 is 0. ``inplace=True`` returns a new Tensor (see
    :mod:`mscompat.layers._pointwise`); ``relu_`` of :mod:`mscompat.nn.functional` is this.

    Args:
        input (Tensor[*]): float16, float32 or float64.
        inplace (bool): accepted for PyTorch's signature.

    Returns:
        Tensor: input's shape and dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import relu
        >>> relu(ms.Tensor([-1.0, 0.0, 2.0])).asnumpy().tolist()
        [0.0, 0.0, 2.0]
    """
    return apply("layers.relu", input, inplace)


def hardtanh(
    input: Tensor, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """:math:`\\min(\\max(x, \\text{min\\_val}), \\text{max\\_val})`, as
    :func:`torch.nn.functional.hardtanh` (gradient 0 at and beyond the bounds; NaN stays NaN).

    Args:
        input (Tensor[*]): float16, float32 or float64.
        min_val (float): lower bound. Default: -1.
        max_val (float): upper bound, ``>= min_val``. Default: 1.
        inplace (bool): accepted for PyTorch's signature (a new Tensor is returned).

    Raises:
        ValueError: ``max_val < min_val``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import hardtanh
        >>> hardtanh(ms.Tensor([-2.0, 0.5, 3.0])).asnumpy().tolist()
        [-1.0, 0.5, 1.0]
    """
    low, high = number(min_val, "min_val"), number(max_val, "max_val")
    if high < low:
        raise ValueError(f"max_val must be >= min_val, but got min_val={low}, max_val={high}")
    return apply("layers.hardtanh", input, inplace, low, high)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """:math:`\\min(\\max(x, 0), 6)`, as :func:`torch.nn.functional.relu6` (``hardtanh(x, 0,
    6)``).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import relu6
        >>> relu6(ms.Tensor([-1.0, 3.0, 8.0])).asnumpy().tolist()
        [0.0, 3.0, 6.0]
    """
    return apply("layers.hardtanh", input, inplace, 0.0, 6.0)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """:math:`x` if :math:`x > 0` else :math:`\\text{negative\\_slope}\\cdot x`, as
    :func:`torch.nn.functional.leaky_relu` (the gradient at 0 is ``negative_slope``).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import leaky_relu
        >>> leaky_relu(ms.Tensor([-2.0, 2.0]), 0.5).asnumpy().tolist()
        [-1.0, 2.0]
    """
    return apply("layers.leaky_relu", input, inplace, number(negative_slope, "negative_slope"))


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """``value`` where :math:`x \\le \\text{threshold}`, else :math:`x`, as
    :func:`torch.nn.functional.threshold`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import threshold
        >>> threshold(ms.Tensor([0.5, 1.0, 2.0]), 1.0, -5.0).asnumpy().tolist()
        [-5.0, -5.0, 2.0]
    """
    t, v = number(threshold, "threshold"), number(value, "value")
    return apply("layers.threshold", input, inplace, t, v)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Exponential linear unit, as :func:`torch.nn.functional.elu`, any ``alpha``.

    .. math:: y = x \\text{ if } x > 0 \\text{ else } \\alpha\\,(e^x - 1)

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import elu
        >>> elu(ms.Tensor([0.0, 2.0]), alpha=1.5).asnumpy().tolist()
        [0.0, 2.0]
    """
    return apply("layers.elu", input, inplace, number(alpha, "alpha"))


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """Scaled ELU, as :func:`torch.nn.functional.selu`, with PyTorch's gradient
    (``ops.selu``'s is wrong for negative inputs on CPU).

    .. math:: y = \\lambda\\,(x \\text{ if } x > 0 \\text{ else } \\alpha\\,(e^x - 1)),\\quad
        \\alpha \\approx 1.6733,\\ \\lambda \\approx 1.0507

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import selu
        >>> round(float(selu(ms.Tensor([1.0]))[0]), 4)
        1.0507
    """
    return apply("layers.selu", input, inplace)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """Continuously differentiable ELU, as :func:`torch.nn.functional.celu`.

    .. math:: y = x \\text{ if } x > 0 \\text{ else } \\alpha\\,(e^{x/\\alpha} - 1)

    Raises:
        ValueError: ``alpha == 0``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import celu
        >>> celu(ms.Tensor([0.0, 3.0]), alpha=2.0).asnumpy().tolist()
        [0.0, 3.0]
    """
    a = number(alpha, "alpha")
    if a == 0:
        raise ValueError("celu(): alpha must not be 0 (it divides the input)")
    return apply("layers.celu", input, inplace, a)


@register_activation("silu", mint_fn("silu"))
def _silu(w: Tensor) -> Tensor:
    return w * ops.sigmoid(w)


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """:math:`x\\,\\sigma(x)`, as :func:`torch.nn.functional.silu`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import silu
        >>> silu(ms.Tensor([0.0])).asnumpy().tolist()
        [0.0]
    """
    return apply("layers.silu", input, inplace)


@register("layers.prelu", "composite", note="PyTorch's CPU formula in MindSpore ops")
def _prelu_composite(x: Tensor, weight: Tensor) -> Tensor:
    w = x.astype(ms.float32) if x.dtype == ms.float16 else x
    a = weight.astype(w.dtype)
    if x.ndim >= 2 and weight.size > 1:
        a = a.reshape((weight.size,) + (1,) * (x.ndim - 2))
    elif x.ndim == 0:
        a = a.reshape(())
    return ops.where(w > 0, w, w * a).astype(x.dtype)


register("layers.prelu", "native", devices=("Ascend",), note="mint.nn.functional.prelu")(
    mint_fn("prelu")
)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """Parametric ReLU, as :func:`torch.nn.functional.prelu`: :math:`x` if :math:`x > 0` else
    :math:`a_c x`, one slope for all channels or one per channel (dim 1).

    Args:
        input (Tensor[N, C, *] or Tensor[*]): float16, float32 or float64.
        weight (Tensor[1] or Tensor[C]): the slopes (differentiable).

    Raises:
        ValueError: ``weight`` not 0-d/1-D, or its size neither 1 nor the channel count.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import prelu
        >>> prelu(ms.Tensor([[-2.0, 2.0]]), ms.Tensor([0.25])).asnumpy().tolist()
        [[-0.5, 2.0]]
    """
    x = check_float_tensor(input, "input")
    weight = check_float_tensor(weight, "weight")
    if weight.ndim > 1:
        raise ValueError(f"prelu(): weight must be 0-d or 1-D, but got weight.ndim={weight.ndim}")
    if weight.size != 1:
        channels = x.shape[1] if x.ndim > 1 else 1
        if x.ndim == 0 or weight.size != channels:
            raise ValueError(
                f"prelu(): weight must have 1 or channel size ({channels}) elements, but got "
                f"{weight.size}"
            )
    if x.size == 0:
        return x
    return call("layers.prelu", x, weight)


# ----------------------------------------------------------------------------- Cells


class ReLU(nn.Cell):
    """As :class:`torch.nn.ReLU`. See :func:`relu`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import ReLU
        >>> ReLU()(ms.Tensor([-1.0, 1.0])).asnumpy().tolist()
        [0.0, 1.0]
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = check_bool(inplace, "inplace")

    def construct(self, input: Tensor) -> Tensor:
        return relu(input)


class Hardtanh(nn.Cell):
    """As :class:`torch.nn.Hardtanh`. See :func:`hardtanh`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Hardtanh
        >>> Hardtanh(-2.0, 2.0)(ms.Tensor([-3.0, 1.0])).asnumpy().tolist()
        [-2.0, 1.0]
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.min_val, self.max_val = number(min_val, "min_val"), number(max_val, "max_val")
        if self.max_val < self.min_val:
            raise ValueError(f"max_val must be >= min_val, but got {self.min_val}, {self.max_val}")
        self.inplace = check_bool(inplace, "inplace")

    def construct(self, input: Tensor) -> Tensor:
        return hardtanh(input, self.min_val, self.max_val)


class ReLU6(Hardtanh):
    """As :class:`torch.nn.ReLU6`. See :func:`relu6`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import ReLU6
        >>> ReLU6()(ms.Tensor([7.0])).asnumpy().tolist()
        [6.0]
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)


class LeakyReLU(nn.Cell):
    """As :class:`torch.nn.LeakyReLU`. See :func:`leaky_relu`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import LeakyReLU
        >>> LeakyReLU(0.5)(ms.Tensor([-2.0])).asnumpy().tolist()
        [-1.0]
    """

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = number(negative_slope, "negative_slope")
        self.inplace = check_bool(inplace, "inplace")

    def construct(self, input: Tensor) -> Tensor:
        return leaky_relu(input, self.negative_slope)


class Threshold(nn.Cell):
    """As :class:`torch.nn.Threshold`. See :func:`threshold`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Threshold
        >>> Threshold(1.0, 0.0)(ms.Tensor([0.5, 2.0])).asnumpy().tolist()
        [0.0, 2.0]
    """

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value = number(threshold, "threshold"), number(value, "value")
        self.inplace = check_bool(inplace, "inplace")

    def construct(self, input: Tensor) -> Tensor:
        return threshold(input, self.threshold, self.value)


class ELU(nn.Cell):
    """As :class:`torch.nn.ELU`. See :func:`elu`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import ELU
        >>> ELU(2.0)(ms.Tensor([1.0])).asnumpy().tolist()
        [1.0]
    """

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = number(alpha, "alpha")
        self.inplace = check_bool(inplace, "inplace")

    def construct(self, input: Tensor) -> Tensor:
        return elu(input, self.alpha)


class CELU(ELU):
    """As :class:`torch.nn.CELU`. See :func:`celu`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import CELU
        >>> CELU(2.0)(ms.Tensor([1.0])).asnumpy().tolist()
        [1.0]
    """

    def construct(self, input: Tensor) -> Tensor:
        return celu(input, self.alpha)


class SELU(nn.Cell):
    """As :class:`torch.nn.SELU`. See :func:`selu`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import SELU
        >>> SELU()(ms.Tensor([0.0])).asnumpy().tolist()
        [0.0]
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = check_bool(inplace, "inplace")

    def construct(self, input: Tensor) -> Tensor:
        return selu(input)


class SiLU(ReLU):
    """As :class:`torch.nn.SiLU`. See :func:`silu`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import SiLU
        >>> SiLU()(ms.Tensor([0.0])).asnumpy().tolist()
        [0.0]
    """

    def construct(self, input: Tensor) -> Tensor:
        return silu(input)


class PReLU(nn.Cell):
    """As :class:`torch.nn.PReLU`: the parameter ``weight`` holds ``num_parameters`` slopes,
    each ``init``. See :func:`prelu`.

    Shape:
        - input: :math:`(N, C, *)` with ``C == num_parameters`` (or any with 1); output: same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import PReLU
        >>> PReLU()(ms.Tensor([-4.0, 4.0])).asnumpy().tolist()
        [-1.0, 4.0]
    """

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.num_parameters = check_int(num_parameters, "num_parameters")
        if self.num_parameters < 1:
            raise ValueError(f"num_parameters must be >= 1, but got {num_parameters}")
        values = np.full((self.num_parameters,), number(init, "init"))
        self.weight = Parameter(Tensor(values, _dtype(dtype)), name="weight")

    def construct(self, input: Tensor) -> Tensor:
        return prelu(input, self.weight)


def _dtype(dtype: Optional[Any]) -> Any:
    return ms.float32 if dtype is None else dtype


# PyTorch's in-place names: the same functions (a new Tensor is returned, see _pointwise)
relu_ = relu
elu_ = elu
hardtanh_ = hardtanh
threshold_ = threshold
leaky_relu_ = leaky_relu
celu_ = celu
selu_ = selu
