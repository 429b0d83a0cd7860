"""Smooth and shrinking activations as ``torch.nn.functional`` and ``torch.nn``: ``gelu``,
``mish``, ``softplus``, ``softsign``, ``logsigmoid``, ``sigmoid``, ``tanh``,
``hardsigmoid``, ``hardswish``, ``hardshrink``, ``softshrink``, ``tanhshrink`` and their Cells.

On MindSpore 2.10 CPU ``mint.nn.functional.gelu``/``mish``/``logsigmoid`` have no kernel,
``ops.gelu`` defaults to the tanh approximation (PyTorch: ``'none'``) and ``mint``'s
``softplus`` has no CPU gradient. Dispatch and the float16/NaN/kink conventions:
:mod:`mscompat.layers._pointwise`.
"""

from __future__ import annotations

import math

import mindspore as ms
from mindspore import Tensor, mint, nn, ops

from mscompat._checks import check_bool
from mscompat.layers._pointwise import apply, const, mint_fn, number, register_activation, safe

__all__ = [
    "GELU",
    "Hardshrink",
    "Hardsigmoid",
    "Hardswish",
    "LogSigmoid",
    "Mish",
    "Sigmoid",
    "Softplus",
    "Softshrink",
    "Softsign",
    "Tanh",
    "Tanhshrink",
    "gelu",
    "hardshrink",
    "hardsigmoid",
    "hardswish",
    "logsigmoid",
    "mish",
    "sigmoid",
    "softplus",
    "softshrink",
    "softsign",
    "tanh",
    "tanhshrink",
]

_TANH_BETA = math.sqrt(2.0) * (2.0 / math.sqrt(math.pi)) * 0.5  # PyTorch's kBeta
_TANH_KAPPA = 0.044715


def _tanh64(w: Tensor) -> Tensor:
    # MindSpore's float32 tanh is ~1e-5 off (PyTorch's is within an ulp): float64, rounded once
    if w.dtype == ms.float32:
        return ops.tanh(w.astype(ms.float64)).astype(ms.float32)
    return ops.tanh(w)


def _softplus_stable(w: Tensor) -> Tensor:
    # max(x, 0) + log1p(exp(-|x|)): no overflow, and a finite gradient everywhere
    return ops.relu(w) + ops.log1p(ops.exp(-ops.abs(w)))


def _gelu_native(x: Tensor, approximate: str) -> Tensor:
    return mint.nn.functional.gelu(x, approximate=approximate)


@register_activation("gelu", _gelu_native)
def _gelu(w: Tensor, approximate: str) -> Tensor:
    if approximate == "tanh":
        inner = const(_TANH_BETA, w.dtype) * (w + const(_TANH_KAPPA, w.dtype) * w * w * w)
        # (1 + tanh(u)) / 2 = sigmoid(2u): MindSpore's float32 tanh is -1 from u < -4 on
        return w * ops.sigmoid(inner + inner)
    # erfc(-x / sqrt 2) = 1 + erf(x / sqrt 2) without float32's cancellation at x << 0
    return w * const(0.5, w.dtype) * ops.erfc(w * const(-1.0, w.dtype, over=math.sqrt(2.0)))


@register_activation("mish", mint_fn("mish"))
def _mish(w: Tensor) -> Tensor:
    return w * _tanh64(_softplus_stable(w))


@register_activation("softplus", mint_fn("softplus"))
def _softplus(w: Tensor, beta: float, threshold: float) -> Tensor:
    # PyTorch: x * beta > threshold ? x : log1p(exp(x * beta)) / beta
    scaled = w * const(beta, w.dtype)
    linear = scaled > const(threshold, w.dtype)
    soft = ops.log1p(ops.exp(safe(ops.logical_not(linear), scaled))) / const(beta, w.dtype)
    return ops.where(linear, w, soft)


@register_activation("softsign", None)
def _softsign(w: Tensor) -> Tensor:
    return w / (1 + ops.abs(w))


@register_activation("logsigmoid", mint_fn("logsigmoid"))
def _logsigmoid(w: Tensor) -> Tensor:
    # PyTorch: min(x, 0) - log1p(exp(-|x|)), its gradient 1/2 at 0
    neg = w < 0
    return safe(neg, w) - ops.log1p(ops.exp(ops.where(neg, w, -w)))


@register_activation("sigmoid", mint_fn("sigmoid"))
def _sigmoid(w: Tensor) -> Tensor:
    return ops.sigmoid(w)


@register_activation("tanh", mint_fn("tanh"))
def _tanh(w: Tensor) -> Tensor:
    return _tanh64(w)


@register_activation("hardsigmoid", mint_fn("hardsigmoid"))
def _hardsigmoid(w: Tensor) -> Tensor:
    # PyTorch: min(max(x + 3, 0), 6) / 6; the gradient 1/6 strictly inside (-3, 3), else 0
    t = w + 3
    six = const(6.0, w.dtype)
    inside = ops.logical_and(t > 0, t < six)
    outside = ops.where(t <= 0, ops.zeros_like(t), ops.where(t >= six, six, ops.stop_gradient(t)))
    return ops.where(inside, t, outside) / six


@register_activation("hardswish", mint_fn("hardswish"))
def _hardswish(w: Tensor) -> Tensor:
    # PyTorch: x * min(max(x + 3, 0), 6) / 6; the gradient 0 for x <= -3, x / 3 + 0.5 below 3,
    # else 1 (NaN included)
    t = w + 3
    six = const(6.0, w.dtype)
    mid = ops.logical_and(t > 0, t < six)
    m = safe(mid, w)
    return ops.where(mid, m * (m + 3) / six, ops.where(t <= 0, w * 0, w))


@register_activation("hardshrink", mint_fn("hardshrink"))
def _hardshrink(w: Tensor, lambd: float) -> Tensor:
    # PyTorch: (x >= -l && x <= l) ? 0 : x, NaN passing with its gradient
    lam = const(lambd, w.dtype)
    return ops.where(ops.logical_and(w >= -lam, w <= lam), ops.zeros_like(w), w)


@register_activation("softshrink", mint_fn("softshrink"))
def _softshrink(w: Tensor, lambd: float) -> Tensor:
    # PyTorch: x > l ? x - l : (x < -l ? x + l : 0); NaN stays NaN with gradient 1 (its
    # elementwise backward: 0 only where -l <= x <= l)
    lam = const(lambd, w.dtype)
    inside = ops.logical_and(w >= -lam, w <= lam)
    return ops.where(inside, w * 0, ops.where(w > lam, w - lam, w + lam))


@register_activation("tanhshrink", None)
def _tanhshrink(w: Tensor) -> Tensor:
    return w - _tanh64(w)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit, as :func:`torch.nn.functional.gelu`.

    .. math:: y = x\\,\\Phi(x) = \\tfrac{x}{2}\\,(1 + \\operatorname{erf}(x/\\sqrt2))

    ``approximate='tanh'``: :math:`\\tfrac{x}{2}(1 + \\tanh(\\sqrt{2/\\pi}(x + 0.044715x^3)))`.

    Raises:
        ValueError: ``approximate`` not ``'none'`` or ``'tanh'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import gelu
        >>> gelu(ms.Tensor([0.0, 1.0])).asnumpy().astype(float).round(4).tolist()
        [0.0, 0.8413]
    """
    if approximate not in ("none", "tanh"):
        raise ValueError(f"approximate must be 'none' or 'tanh', but got {approximate!r}")
    return apply("layers.gelu", input, False, approximate)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """:math:`x \\tanh(\\operatorname{softplus}(x))`, as :func:`torch.nn.functional.mish`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import mish
        >>> mish(ms.Tensor([0.0])).asnumpy().tolist()
        [0.0]
    """
    return apply("layers.mish", input, inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """:math:`\\frac1\\beta \\log(1 + e^{\\beta x})`, linear where :math:`\\beta x >
    \\text{threshold}`, as :func:`torch.nn.functional.softplus`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import softplus
        >>> softplus(ms.Tensor([0.0, 30.0])).asnumpy().astype(float).round(4).tolist()
        [0.6931, 30.0]
    """
    b, t = number(beta, "beta"), number(threshold, "threshold")
    if b == 0:
        raise ValueError("softplus(): beta must not be 0 (it divides the result)")
    return apply("layers.softplus", input, False, b, t)


def softsign(input: Tensor) -> Tensor:
    """:math:`x / (1 + |x|)`, as :func:`torch.nn.functional.softsign`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import softsign
        >>> softsign(ms.Tensor([1.0, -3.0])).asnumpy().tolist()
        [0.5, -0.75]
    """
    return apply("layers.softsign", input, False)


def logsigmoid(input: Tensor) -> Tensor:
    """:math:`\\log \\sigma(x) = \\min(x, 0) - \\log(1 + e^{-|x|})`, as
    :func:`torch.nn.functional.logsigmoid` (stable for large :math:`|x|`).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import logsigmoid
        >>> logsigmoid(ms.Tensor([0.0, -100.0])).asnumpy().astype(float).round(4).tolist()
        [-0.6931, -100.0]
    """
    return apply("layers.logsigmoid", input, False)


def sigmoid(input: Tensor) -> Tensor:
    """:math:`1 / (1 + e^{-x})`, as :func:`torch.nn.functional.sigmoid`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import sigmoid
        >>> sigmoid(ms.Tensor([0.0])).asnumpy().tolist()
        [0.5]
    """
    return apply("layers.sigmoid", input, False)


def tanh(input: Tensor) -> Tensor:
    """Hyperbolic tangent, as :func:`torch.nn.functional.tanh`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import tanh
        >>> tanh(ms.Tensor([0.0])).asnumpy().tolist()
        [0.0]
    """
    return apply("layers.tanh", input, False)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """:math:`\\min(\\max(x + 3, 0), 6) / 6`, as :func:`torch.nn.functional.hardsigmoid`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import hardsigmoid
        >>> hardsigmoid(ms.Tensor([-4.0, 0.0, 4.0])).asnumpy().tolist()
        [0.0, 0.5, 1.0]
    """
    return apply("layers.hardsigmoid", input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """:math:`x \\min(\\max(x + 3, 0), 6) / 6`, as :func:`torch.nn.functional.hardswish`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import hardswish
        >>> hardswish(ms.Tensor([-4.0, 3.0])).asnumpy().tolist()
        [-0.0, 3.0]
    """
    return apply("layers.hardswish", input, inplace)


def _lambd(lambd: float) -> float:
    value = number(lambd, "lambd")
    if value < 0:
        raise ValueError(f"lambd must be >= 0, but got lambd={value}")
    return value


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """0 where :math:`|x| \\le \\lambda`, else :math:`x`, as
    :func:`torch.nn.functional.hardshrink`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import hardshrink
        >>> hardshrink(ms.Tensor([0.5, 2.0])).asnumpy().tolist()
        [0.0, 2.0]
    """
    return apply("layers.hardshrink", input, False, number(lambd, "lambd"))


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """:math:`x - \\lambda` above :math:`\\lambda`, :math:`x + \\lambda` below
    :math:`-\\lambda`, else 0, as :func:`torch.nn.functional.softshrink`.

    Raises:
        ValueError: ``lambd < 0``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import softshrink
        >>> softshrink(ms.Tensor([0.25, 2.0, -2.0])).asnumpy().tolist()
        [0.0, 1.5, -1.5]
    """
    return apply("layers.softshrink", input, False, _lambd(lambd))


def tanhshrink(input: Tensor) -> Tensor:
    """:math:`x - \\tanh(x)`, as :func:`torch.nn.functional.tanhshrink`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import tanhshrink
        >>> tanhshrink(ms.Tensor([0.0])).asnumpy().tolist()
        [0.0]
    """
    return apply("layers.tanhshrink", input, False)


# ----------------------------------------------------------------------------- Cells


class _Stateless(nn.Cell):
    """A Cell holding only PyTorch's ``inplace`` flag (accepted, a new Tensor is returned)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = check_bool(inplace, "inplace")


class Mish(_Stateless):
    """As :class:`torch.nn.Mish`. See :func:`mish`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Mish
        >>> Mish()(ms.Tensor([0.0])).asnumpy().tolist()
        [0.0]
    """

    def construct(self, input: Tensor) -> Tensor:
        return mish(input)


class Hardsigmoid(_Stateless):
    """As :class:`torch.nn.Hardsigmoid`. See :func:`hardsigmoid`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Hardsigmoid
        >>> Hardsigmoid()(ms.Tensor([0.0])).asnumpy().tolist()
        [0.5]
    """

    def construct(self, input: Tensor) -> Tensor:
        return hardsigmoid(input)


class Hardswish(_Stateless):
    """As :class:`torch.nn.Hardswish`. See :func:`hardswish`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Hardswish
        >>> Hardswish()(ms.Tensor([3.0])).asnumpy().tolist()
        [3.0]
    """

    def construct(self, input: Tensor) -> Tensor:
        return hardswish(input)


class Softsign(nn.Cell):
    """As :class:`torch.nn.Softsign`. See :func:`softsign`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Softsign
        >>> Softsign()(ms.Tensor([1.0])).asnumpy().tolist()
        [0.5]
    """

    def construct(self, input: Tensor) -> Tensor:
        return softsign(input)


class LogSigmoid(nn.Cell):
    """As :class:`torch.nn.LogSigmoid`. See :func:`logsigmoid`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import LogSigmoid
        >>> LogSigmoid()(ms.Tensor([0.0])).asnumpy().astype(float).round(4).tolist()
        [-0.6931]
    """

    def construct(self, input: Tensor) -> Tensor:
        return logsigmoid(input)


class Sigmoid(nn.Cell):
    """As :class:`torch.nn.Sigmoid`. See :func:`sigmoid`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Sigmoid
        >>> Sigmoid()(ms.Tensor([0.0])).asnumpy().tolist()
        [0.5]
    """

    def construct(self, input: Tensor) -> Tensor:
        return sigmoid(input)


class Tanh(nn.Cell):
    """As :class:`torch.nn.Tanh`. See :func:`tanh`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Tanh
        >>> Tanh()(ms.Tensor([0.0])).asnumpy().tolist()
        [0.0]
    """

    def construct(self, input: Tensor) -> Tensor:
        return tanh(input)


class Tanhshrink(nn.Cell):
    """As :class:`torch.nn.Tanhshrink`. See :func:`tanhshrink`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Tanhshrink
        >>> Tanhshrink()(ms.Tensor([0.0])).asnumpy().tolist()
        [0.0]
    """

    def construct(self, input: Tensor) -> Tensor:
        return tanhshrink(input)


class GELU(nn.Cell):
    """As :class:`torch.nn.GELU`. See :func:`gelu`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import GELU
        >>> GELU("tanh")(ms.Tensor([0.0])).asnumpy().tolist()
        [0.0]
    """

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate must be 'none' or 'tanh', but got {approximate!r}")
        self.approximate = approximate

    def construct(self, input: Tensor) -> Tensor:
        return gelu(input, self.approximate)


class Softplus(nn.Cell):
    """As :class:`torch.nn.Softplus`. See :func:`softplus`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Softplus
        >>> Softplus(threshold=1.0)(ms.Tensor([2.0])).asnumpy().tolist()
        [2.0]
    """

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = number(beta, "beta"), number(threshold, "threshold")

    def construct(self, input: Tensor) -> Tensor:
        return softplus(input, self.beta, self.threshold)


class Hardshrink(nn.Cell):
    """As :class:`torch.nn.Hardshrink`. See :func:`hardshrink`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Hardshrink
        >>> Hardshrink(1.0)(ms.Tensor([0.5, 2.0])).asnumpy().tolist()
        [0.0, 2.0]
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = number(lambd, "lambd")

    def construct(self, input: Tensor) -> Tensor:
        return hardshrink(input, self.lambd)


class Softshrink(Hardshrink):
    """As :class:`torch.nn.Softshrink`. See :func:`softshrink`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Softshrink
        >>> Softshrink(1.0)(ms.Tensor([0.5, 2.0])).asnumpy().tolist()
        [0.0, 1.0]
    """

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__(_lambd(lambd))

    def construct(self, input: Tensor) -> Tensor:
        return softshrink(input, self.lambd)
