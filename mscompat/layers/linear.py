"""``linear`` and ``bilinear`` as ``torch.nn.functional``, and the Cells ``Linear``,
``Bilinear`` and ``Identity`` as ``torch.nn`` (``Flatten``/``Unflatten``: :mod:`mscompat.shape`).

The Cells keep PyTorch's parameter names and layouts (``Linear.weight`` is ``(out_features,
in_features)``, ``Bilinear.weight`` ``(out_features, in1_features, in2_features)``), so a
PyTorch state dict loads by name, and PyTorch's initialisation (:math:`U(-k, k)`, :math:`k =
1/\\sqrt{\\text{fan\\_in}}`) drawn from MindSpore's generator (``mindspore.set_seed``).
float16 is computed in float32 and rounded once (PyTorch's CPU matmul accumulates in float32).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Tuple

import mindspore as ms
from mindspore import Parameter, Tensor, mint, nn, ops
from mindspore.common.initializer import Uniform, initializer

from mscompat._checks import check_float_tensor, check_int
from mscompat.custom_ops.registry import call, register
from mscompat.layers._pointwise import work

__all__ = ["Bilinear", "Identity", "Linear", "bilinear", "linear"]


@register("layers.linear", "composite", note="matmul in float32 for float16, then bias")
def _linear_composite(x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
    w = work(weight)
    flat = work(x).reshape((-1, x.shape[-1]))
    out = ops.matmul(flat, w.T if weight.ndim == 2 else w.reshape((-1, 1)))
    if bias is not None:
        out = out + work(bias)
    shape = x.shape[:-1] + ((weight.shape[0],) if weight.ndim == 2 else ())
    return out.reshape(shape).astype(x.dtype)


@register("layers.linear", "native", devices=("Ascend",), note="mint.nn.functional.linear")
def _linear_native(x: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
    return mint.nn.functional.linear(x, weight, bias)


def _check_bias(bias: Any, out: Tuple[int, ...], fn: str) -> Optional[Tensor]:
    if bias is None:
        return None
    bias = check_float_tensor(bias, "bias")
    if bias.shape != out and bias.size != 1:
        raise ValueError(f"{fn}(): bias must have shape {out}, but got {bias.shape}")
    return bias


def linear(input: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """Affine map :math:`y = x W^T + b`, as :func:`torch.nn.functional.linear`.

    Args:
        input (Tensor[..., in_features]): float16, float32 or float64.
        weight (Tensor[out_features, in_features] or Tensor[in_features]): PyTorch's layout.
        bias (Tensor[out_features], optional).

    Returns:
        Tensor: ``(..., out_features)`` (``(...)`` for a 1-D weight), input's dtype.

    Raises:
        TypeError: non-float Tensors. ValueError: ``in_features`` differ, a bias of another
        shape, a 0-d input or weight of more than 2 dims.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import linear
        >>> w = ms.Tensor([[1.0, 2.0], [0.0, -1.0], [1.0, 1.0]])
        >>> linear(ms.Tensor([[1.0, 1.0]]), w, ms.Tensor([0.0, 0.0, 1.0])).asnumpy().tolist()
        [[3.0, -1.0, 3.0]]
    """
    x = check_float_tensor(input, "input")
    weight = check_float_tensor(weight, "weight")
    if x.ndim == 0 or weight.ndim not in (1, 2):
        raise ValueError(
            f"linear(): input must have at least 1 dim and weight 1 or 2, but got "
            f"input.shape={x.shape}, weight.shape={weight.shape}"
        )
    if weight.shape[-1] != x.shape[-1]:
        raise ValueError(
            f"linear(): input.shape[-1] ({x.shape[-1]}) must equal weight.shape[-1] "
            f"({weight.shape[-1]})"
        )
    out = weight.shape[:1] if weight.ndim == 2 else ()
    bias = _check_bias(bias, out, "linear")
    shape = x.shape[:-1] + out
    if x.size == 0 or weight.size == 0:  # no kernel on empty operands: zeros (+ bias)
        zeros = ops.zeros(shape, x.dtype)
        return zeros if bias is None else zeros + bias.astype(x.dtype)
    return call("layers.linear", x, weight, bias)


@register("layers.bilinear", "composite", note="two matmuls in float32 for float16")
def _bilinear_composite(x1: Tensor, x2: Tensor, weight: Tensor, bias: Optional[Tensor]) -> Tensor:
    out_f, in1, in2 = weight.shape
    a = work(x1).reshape((-1, in1))
    b = work(x2).reshape((-1, in2))
    # y[n, o] = sum_ij a[n, i] W[o, i, j] b[n, j]: (a @ W') is (n, o * in2)
    table = work(weight).transpose(1, 0, 2).reshape((in1, out_f * in2))
    y = (ops.matmul(a, table).reshape((-1, out_f, in2)) * b.reshape((-1, 1, in2))).sum(-1)
    if bias is not None:
        y = y + work(bias)
    return y.reshape(x1.shape[:-1] + (out_f,)).astype(x1.dtype)


def bilinear(
    input1: Tensor, input2: Tensor, weight: Tensor, bias: Optional[Tensor] = None
) -> Tensor:
    """Bilinear map :math:`y_o = x_1^T A_o x_2 + b_o`, as :func:`torch.nn.functional.bilinear`.

    Args:
        input1 (Tensor[..., in1_features]): float16, float32 or float64.
        input2 (Tensor[..., in2_features]): the same leading dims.
        weight (Tensor[out_features, in1_features, in2_features]).
        bias (Tensor[out_features], optional).

    Returns:
        Tensor: ``(..., out_features)``, input1's dtype.

    Raises:
        ValueError: shapes that do not match.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.layers import bilinear
        >>> w = ms.Tensor(np.ones((1, 2, 2), np.float32))
        >>> bilinear(ms.Tensor([[1.0, 2.0]]), ms.Tensor([[3.0, 4.0]]), w).asnumpy().tolist()
        [[21.0]]
    """
    x1 = check_float_tensor(input1, "input1")
    x2 = check_float_tensor(input2, "input2")
    weight = check_float_tensor(weight, "weight")
    if (
        weight.ndim != 3
        or x1.ndim == 0
        or x1.shape[:-1] != x2.shape[:-1]
        or (x1.shape[-1], x2.shape[-1]) != weight.shape[1:]
    ):
        raise ValueError(
            f"bilinear(): expected input1 (*, in1), input2 (*, in2) with the same leading dims "
            f"and weight (out, in1, in2), but got {x1.shape}, {x2.shape}, {weight.shape}"
        )
    bias = _check_bias(bias, weight.shape[:1], "bilinear")
    if x1.size == 0 or x2.size == 0 or weight.size == 0:
        zeros = ops.zeros(x1.shape[:-1] + weight.shape[:1], x1.dtype)
        return zeros if bias is None else zeros + bias.astype(x1.dtype)
    return call("layers.bilinear", x1, x2, weight, bias)


def _uniform(shape: Tuple[int, ...], fan_in: int, dtype: Any, name: str) -> Parameter:
    bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    return Parameter(initializer(Uniform(bound), shape, dtype or ms.float32), name=name)


def _features(*values: Any) -> Tuple[int, ...]:
    out = []
    for name, value in zip(("in_features", "out_features", "third"), values):
        n = check_int(value, name)
        if n < 0:
            raise ValueError(f"{name} must be >= 0, but got {n}")
        out.append(n)
    return tuple(out)


class Linear(nn.Cell):
    """As :class:`torch.nn.Linear`: parameters ``weight`` ``(out_features, in_features)`` and
    ``bias`` ``(out_features,)``, both :math:`U(-k, k)`, :math:`k = 1/\\sqrt{\\text{in}}`.
    See :func:`linear`.

    Shape:
        - input: :math:`(*, H_{in})`; output: :math:`(*, H_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Linear
        >>> layer = Linear(3, 2)
        >>> layer.weight.shape, layer(ms.ops.ones((4, 3), ms.float32)).shape
        ((2, 3), (4, 2))
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in_features, self.out_features = _features(in_features, out_features)
        self.weight = _uniform(
            (self.out_features, self.in_features), self.in_features, dtype, "weight"
        )
        self.bias = (
            _uniform((self.out_features,), self.in_features, dtype, "bias") if bias else None
        )

    def construct(self, input: Tensor) -> Tensor:
        return linear(input, self.weight, self.bias)


class Bilinear(nn.Cell):
    """As :class:`torch.nn.Bilinear`: ``weight`` ``(out_features, in1_features,
    in2_features)`` and ``bias``, :math:`U(-k, k)` with :math:`k = 1/\\sqrt{\\text{in1}}`.
    See :func:`bilinear`.

    Shape:
        - input1: :math:`(*, H_1)`, input2: :math:`(*, H_2)`; output: :math:`(*, H_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Bilinear
        >>> layer = Bilinear(2, 3, 4)
        >>> layer(ms.ops.ones((5, 2), ms.float32), ms.ops.ones((5, 3), ms.float32)).shape
        (5, 4)
    """

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features, self.in2_features, self.out_features = _features(
            in1_features, in2_features, out_features
        )
        shape = (self.out_features, self.in1_features, self.in2_features)
        self.weight = _uniform(shape, self.in1_features, dtype, "weight")
        self.bias = (
            _uniform((self.out_features,), self.in1_features, dtype, "bias") if bias else None
        )

    def construct(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)


class Identity(nn.Cell):
    """As :class:`torch.nn.Identity`: returns its input; any constructor arguments are
    ignored. It has no functional form.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Identity
        >>> Identity(54, unused="x")(ms.Tensor([1.0])).asnumpy().tolist()
        [1.0]
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def construct(self, input: Tensor) -> Tensor:
        return input
