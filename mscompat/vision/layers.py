"""Building blocks of torchvision's models (``torchvision.ops.misc``): ``FrozenBatchNorm2d``,
``Conv2dNormActivation``, ``SqueezeExcitation``.

Parameter names follow torchvision's, so a PyTorch state dict maps by name where the layers
are the same (``FrozenBatchNorm2d``'s ``weight``/``bias``/``running_mean``/``running_var``,
``SqueezeExcitation``'s ``fc1``/``fc2``, the ``0``/``1``/``2`` children of
``Conv2dNormActivation``); the default norm layer is MindSpore's ``nn.BatchNorm2d``, whose own
parameters are ``gamma``/``beta``/``moving_mean``/``moving_variance``.
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

from mscompat._checks import check_float_tensor, check_int, check_number

__all__ = ["Conv2dNormActivation", "FrozenBatchNorm2d", "SqueezeExcitation"]


class FrozenBatchNorm2d(nn.Cell):
    """BatchNorm2d whose statistics and affine parameters are fixed.

    Mirrors ``torchvision.ops.FrozenBatchNorm2d``:

    .. math::
        y = x \\cdot s + (b - \\mu s), \\qquad s = w / \\sqrt{\\sigma^2 + \\varepsilon}

    The four tensors are parameters that are not trained (``requires_grad=False``) named as
    torchvision's buffers, ``weight``, ``bias``, ``running_mean``, ``running_var``: a PyTorch
    state dict loads by name (``num_batches_tracked`` is ignored, as torchvision does).
    torchvision has no functional form of this block; its op database entry compares it with
    the PyTorch module, loaded with the same state.

    Args:
        num_features (int): number of channels ``C``.
        eps (float): added to the variance. Default: 1e-5.

    Shape:
        - input: :math:`(N, C, H, W)`, float.
        - output: same shape.

    Raises:
        TypeError: ``num_features`` not an int, ``eps`` not a number; input not a floating
            Tensor.
        ValueError: ``num_features < 1``; input not 4-D or with other than ``C`` channels.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import FrozenBatchNorm2d
        >>> bn = FrozenBatchNorm2d(2)
        >>> sorted(p.name for p in bn.get_parameters())
        ['bias', 'running_mean', 'running_var', 'weight']
        >>> y = bn(ms.ops.ones((1, 2, 1, 1), ms.float32))
        >>> y.asnumpy().astype(float).round(6).reshape(-1).tolist()
        [0.999995, 0.999995]
    """

    def __init__(self, num_features: int, eps: float = 1e-5) -> None:
        super().__init__()
        num_features = check_int(num_features, "num_features")
        if num_features < 1:
            raise ValueError(f"num_features must be >= 1, but got {num_features}")
        self.num_features = num_features
        self.eps = check_number(eps, "eps")
        for name, value in (
            ("weight", 1.0),
            ("bias", 0.0),
            ("running_mean", 0.0),
            ("running_var", 1.0),
        ):
            data = Tensor(np.full((num_features,), value, np.float32))
            setattr(self, name, Parameter(data, name=name, requires_grad=False))

    def construct(self, x: Tensor) -> Tensor:
        x = check_float_tensor(x, "x")
        if x.ndim != 4 or x.shape[1] != self.num_features:
            raise ValueError(
                f"x must have shape (N, {self.num_features}, H, W), but got x.shape={x.shape}"
            )
        w = self.weight.reshape(1, -1, 1, 1)
        b = self.bias.reshape(1, -1, 1, 1)
        rv = self.running_var.reshape(1, -1, 1, 1)
        rm = self.running_mean.reshape(1, -1, 1, 1)
        scale = w * ops.rsqrt(rv + ms.Tensor(self.eps, rv.dtype))
        bias = b - rm * scale
        return x * scale + bias


IntOrPair = Union[int, Tuple[int, int]]


def _pair(value: Any, name: str) -> Tuple[int, int]:
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ValueError(f"{name} must be an int or a pair of ints, but got {value!r}")
        return check_int(value[0], name), check_int(value[1], name)
    v = check_int(value, name)
    return v, v


def _conv_padding(
    padding: Any, kernel_size: Tuple[int, int], dilation: Tuple[int, int], stride: Tuple[int, int]
) -> Tuple[str, Union[int, Tuple[int, int, int, int]]]:
    """MindSpore's ``(pad_mode, padding)`` for PyTorch's ``padding`` (None: torchvision's
    ``(kernel_size - 1) // 2 * dilation``)."""
    if padding is None:
        ph, pw = ((k - 1) // 2 * d for k, d in zip(kernel_size, dilation))
        return "pad", (ph, ph, pw, pw)
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"padding must be 'same', 'valid', an int or a pair, got {padding!r}")
        if padding == "same" and stride != (1, 1):
            raise ValueError("padding='same' is not supported for strided convolutions")
        return padding, 0
    ph, pw = _pair(padding, "padding")
    return "pad", (ph, ph, pw, pw)


class Conv2dNormActivation(nn.SequentialCell):
    """Convolution, normalisation and activation, as one block.

    Mirrors ``torchvision.ops.Conv2dNormActivation``: a ``Conv2d`` (children ``0``), then
    ``norm_layer(out_channels)`` and ``activation_layer()`` where they are not None.
    torchvision has no functional form of this block; its op database entry compares it with
    the PyTorch module, loaded with the same state, in inference and training mode.

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int or Tuple[int, int]): Default: 3.
        stride (int or Tuple[int, int]): Default: 1.
        padding (int, Tuple[int, int], str or None): None gives
            ``(kernel_size - 1) // 2 * dilation``. Default: None.
        groups (int): Default: 1.
        norm_layer (Callable[..., Cell] or None): Default: ``mindspore.nn.BatchNorm2d``.
        activation_layer (Callable[..., Cell] or None): Default: ``mindspore.nn.ReLU``.
        dilation (int or Tuple[int, int]): Default: 1.
        inplace (bool or None): accepted for compatibility (MindSpore's activations have no
            ``inplace``; they are constructed without arguments). Default: True.
        bias (bool or None): bias of the convolution; None: only when ``norm_layer`` is None.

    Shape:
        - input: :math:`(N, C_{in}, H, W)`.
        - output: :math:`(N, C_{out}, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import Conv2dNormActivation
        >>> block = Conv2dNormActivation(3, 8, kernel_size=3, stride=2)
        >>> block(ms.ops.ones((1, 3, 9, 9), ms.float32)).shape
        (1, 8, 5, 5)
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntOrPair = 3,
        stride: IntOrPair = 1,
        padding: Optional[Union[IntOrPair, str]] = None,
        groups: int = 1,
        norm_layer: Optional[Callable[..., nn.Cell]] = nn.BatchNorm2d,
        activation_layer: Optional[Callable[..., nn.Cell]] = nn.ReLU,
        dilation: IntOrPair = 1,
        inplace: Optional[bool] = True,
        bias: Optional[bool] = None,
    ) -> None:
        in_channels = check_int(in_channels, "in_channels")
        out_channels = check_int(out_channels, "out_channels")
        groups = check_int(groups, "groups")
        if in_channels < 1 or out_channels < 1 or groups < 1:
            raise ValueError(
                "in_channels, out_channels and groups must be >= 1, but got "
                f"{in_channels}, {out_channels}, {groups}"
            )
        if in_channels % groups or out_channels % groups:
            raise ValueError(
                f"in_channels ({in_channels}) and out_channels ({out_channels}) must be "
                f"divisible by groups ({groups})"
            )
        ks, st, dil = (
            _pair(kernel_size, "kernel_size"),
            _pair(stride, "stride"),
            _pair(dilation, "dilation"),
        )
        pad_mode, pad = _conv_padding(padding, ks, dil, st)
        if bias is None:
            bias = norm_layer is None
        layers: List[nn.Cell] = [
            nn.Conv2d(
                in_channels,
                out_channels,
                ks,
                st,
                pad_mode=pad_mode,
                padding=pad,
                dilation=dil,
                group=groups,
                has_bias=bool(bias),
            )
        ]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer())
        super().__init__(layers)
        self.out_channels = out_channels


class SqueezeExcitation(nn.Cell):
    """Squeeze-and-Excitation block (`Hu et al., 2017 <https://arxiv.org/abs/1709.01507>`_).

    Mirrors ``torchvision.ops.SqueezeExcitation``:
    :math:`y = x \\cdot \\sigma(W_2\\,\\delta(W_1\\,\\text{avgpool}(x)))`, with ``fc1``,
    ``fc2`` 1x1 convolutions with bias (torchvision's names).
    torchvision has no functional form of this block; its op database entry compares it with
    the PyTorch module, loaded with the same state.

    Args:
        input_channels (int): channels of the input.
        squeeze_channels (int): channels of the bottleneck.
        activation (Callable[..., Cell]): :math:`\\delta`. Default: ``mindspore.nn.ReLU``.
        scale_activation (Callable[..., Cell]): :math:`\\sigma`. Default:
            ``mindspore.nn.Sigmoid``.

    Shape:
        - input: :math:`(N, C, H, W)`.
        - output: same shape.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import SqueezeExcitation
        >>> se = SqueezeExcitation(8, 2)
        >>> sorted(p.name for p in se.get_parameters())
        ['fc1.bias', 'fc1.weight', 'fc2.bias', 'fc2.weight']
        >>> se(ms.ops.ones((1, 8, 4, 4), ms.float32)).shape
        (1, 8, 4, 4)
    """

    def __init__(
        self,
        input_channels: int,
        squeeze_channels: int,
        activation: Callable[..., nn.Cell] = nn.ReLU,
        scale_activation: Callable[..., nn.Cell] = nn.Sigmoid,
    ) -> None:
        super().__init__()
        input_channels = check_int(input_channels, "input_channels")
        squeeze_channels = check_int(squeeze_channels, "squeeze_channels")
        if input_channels < 1 or squeeze_channels < 1:
            raise ValueError(
                "input_channels and squeeze_channels must be >= 1, but got "
                f"{input_channels} and {squeeze_channels}"
            )
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1, pad_mode="valid", has_bias=True)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1, pad_mode="valid", has_bias=True)
        self.activation = activation()
        self.scale_activation = scale_activation()

    def _scale(self, x: Tensor) -> Tensor:
        scale = x.mean(axis=(2, 3), keep_dims=True)
        scale = self.activation(self.fc1(scale))
        return self.scale_activation(self.fc2(scale))

    def construct(self, x: Tensor) -> Tensor:
        return self._scale(x) * x
