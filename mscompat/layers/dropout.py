"""Dropout as ``torch.nn.functional`` and ``torch.nn``: ``dropout``, ``dropout1d``/``2d``/``3d``
(whole channels), ``alpha_dropout`` and ``feature_alpha_dropout`` (SELU networks), and their
Cells.

On MindSpore 2.10 CPU ``mint.nn.functional.dropout``/``dropout2d`` have no kernel and there is
no alpha dropout. The masks are drawn by MindSpore's generator (``mindspore.set_seed``), so
they are reproducible but not PyTorch's; everything else is PyTorch's ``_dropout_impl``:
``training=False``, ``p=0`` or an empty input return the input, ``p=1`` multiplies it by 0
(NaN stays NaN), kept values are scaled by :math:`1/(1-p)`, and alpha dropout sets dropped
values to SELU's negative saturation then applies the affine map that keeps a standard normal
input's mean and variance. ``inplace=True`` returns a new Tensor.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import mindspore as ms
from mindspore import Tensor, mint, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_bool, check_float_tensor, check_number
from mscompat.custom_ops.registry import call, register
from mscompat.layers._pointwise import const

__all__ = [
    "AlphaDropout",
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "FeatureAlphaDropout",
    "alpha_dropout",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "feature_alpha_dropout",
]

_SELU_SATURATION = 1.7580993408473766  # SELU's alpha * scale: -this is its limit at -inf


@register("layers.dropout", "composite", note="uniform mask from MindSpore's generator")
def _dropout_composite(x: Tensor, p: float, feature: bool, alpha: bool) -> Tensor:
    w = x.astype(ms.float32) if x.dtype == ms.float16 else x
    if p == 1.0:
        return (w * 0).astype(x.dtype)
    shape = x.shape[:2] + (1,) * (x.ndim - 2) if feature else x.shape
    keep = (ops.rand(shape, dtype=w.dtype) < const(1.0, w.dtype, plus=-p)).astype(w.dtype)
    if not alpha:
        return (w * (keep * const(1.0, w.dtype, over=1.0 - p))).astype(x.dtype)
    # PyTorch: a = 1 / sqrt((alpha^2 p + 1)(1 - p)); y = a * (x * keep + alpha' * (keep - 1))
    # + alpha' * a * p with alpha' = SELU's saturation
    a = 1.0 / math.sqrt((_SELU_SATURATION**2 * p + 1) * (1 - p))
    b = (keep - 1) * const(_SELU_SATURATION * a, w.dtype) + const(_SELU_SATURATION * a * p, w.dtype)
    return (w * keep * const(a, w.dtype) + b).astype(x.dtype)


@register(
    "layers.dropout",
    "native",
    devices=("Ascend",),
    note="mint.nn.functional.dropout",
    supports=lambda x, p, feature, alpha: "plain dropout only" if feature or alpha else None,
)
def _dropout_native(x: Tensor, p: float, feature: bool, alpha: bool) -> Tensor:
    return mint.nn.functional.dropout(x, p, True)


def _run(input: Any, p: Any, training: Any, inplace: Any, feature: bool, alpha: bool) -> Tensor:
    x = check_float_tensor(input, "input")
    p = check_number(p, "p")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    check_bool(training, "training")
    check_bool(inplace, "inplace")
    if not training or p == 0 or x.size == 0:
        return x  # before the rank check: PyTorch returns such an input of any rank as it is
    if feature and x.ndim < 2:
        raise ValueError(
            f"feature (channel) dropout needs an input of at least 2 dims, but got {x.ndim}"
        )
    return call("layers.dropout", x, p, feature, alpha)


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Elementwise dropout, as :func:`torch.nn.functional.dropout`.

    .. math:: y = x \\cdot m / (1 - p),\\quad m \\sim \\text{Bernoulli}(1 - p)

    Args:
        input (Tensor[*]): float16, float32 or float64.
        p (float): drop probability in [0, 1]. Default: 0.5.
        training (bool): False returns ``input``. Default: True.
        inplace (bool): accepted (a new Tensor is returned).

    Raises:
        ValueError: ``p`` outside [0, 1]. TypeError: non-float input, non-bool flags.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import dropout
        >>> dropout(ms.Tensor([1.0, 2.0]), 0.5, training=False).asnumpy().tolist()
        [1.0, 2.0]
    """
    return _run(input, p, training, inplace, False, False)


@constexpr
def _warn_dims(fn: str, ndim: int) -> bool:
    # in Python at compile time under ms.jit (the graph cannot call warnings)
    warnings.warn(f"{fn}: received a {ndim}-D input (expected 4-D or 5-D)", stacklevel=4)
    return True


def _channel_dropout(input: Any, p: float, training: bool, inplace: bool, dims: int) -> Tensor:
    x = check_float_tensor(input, "input")
    fn = f"dropout{dims}d"
    if dims == 1 and x.ndim not in (2, 3):
        raise ValueError(f"dropout1d: expected a 2-D or 3-D input, but got {x.ndim}-D")
    if dims == 3 and x.ndim not in (4, 5):
        _warn_dims(fn, x.ndim)
    unbatched = (dims == 1 and x.ndim == 2) or (dims == 3 and x.ndim != 5)
    if unbatched:
        x = x.expand_dims(0)
    y = _run(x, p, training, inplace, True, False)
    return y.squeeze(0) if unbatched else y


def dropout1d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Whole-channel dropout of ``(N, C, L)`` or ``(C, L)`` input, as
    :func:`torch.nn.functional.dropout1d`: each channel kept with probability :math:`1 - p`
    and scaled by :math:`1/(1-p)`.

    Raises:
        ValueError: input not 2-D or 3-D, ``p`` outside [0, 1].

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import dropout1d
        >>> dropout1d(ms.Tensor([[1.0, 2.0]]), p=0.0).asnumpy().tolist()
        [[1.0, 2.0]]
    """
    return _channel_dropout(input, p, training, inplace, 1)


def dropout2d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Whole-channel dropout, as :func:`torch.nn.functional.dropout2d`: the mask is
    ``(N, C, 1, ...)`` for any input of at least 2 dims (a 3-D input is ``(N, C, L)``, as
    PyTorch 2.13 interprets it).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import dropout2d
        >>> dropout2d(ms.ops.ones((1, 2, 2, 2), ms.float32), p=1.0).sum().item()
        0.0
    """
    return _channel_dropout(input, p, training, inplace, 2)


def dropout3d(
    input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False
) -> Tensor:
    """Whole-channel dropout of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input, as
    :func:`torch.nn.functional.dropout3d`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import dropout3d
        >>> dropout3d(ms.ops.ones((2, 1, 1, 1), ms.float32), training=False).shape
        (2, 1, 1, 1)
    """
    return _channel_dropout(input, p, training, inplace, 3)


def alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Alpha dropout, as :func:`torch.nn.functional.alpha_dropout` (note ``training=False`` by
    default, as PyTorch's): dropped values become SELU's saturation :math:`-\\alpha'`, then
    :math:`y = a\\,x' + b` keeps a standard normal input's mean 0 and variance 1.

    .. math:: a = ((1 - p)(1 + p\\,\\alpha'^2))^{-1/2},\\quad b = a\\,\\alpha' p,\\quad
        \\alpha' \\approx 1.7581

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import alpha_dropout
        >>> alpha_dropout(ms.Tensor([1.0]), 0.5).asnumpy().tolist()
        [1.0]
    """
    return _run(input, p, training, inplace, False, True)


def feature_alpha_dropout(
    input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False
) -> Tensor:
    """Alpha dropout of whole channels (mask ``(N, C, 1, ...)``), as
    :func:`torch.nn.functional.feature_alpha_dropout`. See :func:`alpha_dropout`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import feature_alpha_dropout
        >>> feature_alpha_dropout(ms.Tensor([[1.0]]), 0.5).asnumpy().tolist()
        [[1.0]]
    """
    return _run(input, p, training, inplace, True, True)


class _DropoutCell(nn.Cell):
    """Holds ``p`` and ``inplace``; ``self.training`` (``set_train``) chooses the mode."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        self.p = check_number(p, "p")
        if not 0.0 <= self.p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.inplace = check_bool(inplace, "inplace")


class Dropout(_DropoutCell):
    """As :class:`torch.nn.Dropout` (active after ``set_train(True)``). See :func:`dropout`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Dropout
        >>> Dropout(0.5)(ms.Tensor([1.0])).asnumpy().tolist()
        [1.0]
    """

    def construct(self, input: Tensor) -> Tensor:
        return dropout(input, self.p, self.training)


class Dropout1d(_DropoutCell):
    """As :class:`torch.nn.Dropout1d`. See :func:`dropout1d`.

    Shape:
        - input: :math:`(N, C, L)` or :math:`(C, L)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Dropout1d
        >>> Dropout1d()(ms.Tensor([[1.0]])).asnumpy().tolist()
        [[1.0]]
    """

    def construct(self, input: Tensor) -> Tensor:
        return dropout1d(input, self.p, self.training)


class Dropout2d(_DropoutCell):
    """As :class:`torch.nn.Dropout2d`. See :func:`dropout2d`.

    Shape:
        - input: :math:`(N, C, H, W)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Dropout2d
        >>> Dropout2d()(ms.Tensor([[1.0]])).asnumpy().tolist()
        [[1.0]]
    """

    def construct(self, input: Tensor) -> Tensor:
        return dropout2d(input, self.p, self.training)


class Dropout3d(_DropoutCell):
    """As :class:`torch.nn.Dropout3d`. See :func:`dropout3d`.

    Shape:
        - input: :math:`(N, C, D, H, W)` or :math:`(C, D, H, W)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Dropout3d
        >>> Dropout3d()(ms.ops.ones((1, 1, 1, 1), ms.float32)).shape
        (1, 1, 1, 1)
    """

    def construct(self, input: Tensor) -> Tensor:
        return dropout3d(input, self.p, self.training)


class AlphaDropout(_DropoutCell):
    """As :class:`torch.nn.AlphaDropout`. See :func:`alpha_dropout`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import AlphaDropout
        >>> AlphaDropout(0.2)(ms.Tensor([1.0])).asnumpy().tolist()
        [1.0]
    """

    def construct(self, input: Tensor) -> Tensor:
        return alpha_dropout(input, self.p, self.training)


class FeatureAlphaDropout(_DropoutCell):
    """As :class:`torch.nn.FeatureAlphaDropout`. See :func:`feature_alpha_dropout`.

    Shape:
        - input: :math:`(N, C, *)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import FeatureAlphaDropout
        >>> FeatureAlphaDropout(0.2)(ms.Tensor([[1.0]])).asnumpy().tolist()
        [[1.0]]
    """

    def construct(self, input: Tensor) -> Tensor:
        return feature_alpha_dropout(input, self.p, self.training)
