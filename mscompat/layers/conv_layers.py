"""The convolution Cells, as ``torch.nn.Conv{1,2,3}d`` and ``torch.nn.ConvTranspose{1,2,3}d``:
PyTorch's constructor, parameter names (``weight``, ``bias``), weight layouts and
initialisation (Kaiming uniform with ``a = sqrt(5)``: uniform in ``±1 / sqrt(fan_in)``, the bias
in the same range; drawn by MindSpore's generator, so not PyTorch's numbers). Each forward is
one call of the function of :mod:`mscompat.layers.conv` (after ``padding_mode``'s padding).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence, Tuple, Union

import mindspore as ms
from mindspore import Parameter, Tensor, nn
from mindspore.common.initializer import Uniform, initializer
from mindspore.ops import constexpr

from mscompat._checks import check_bool, check_int
from mscompat.layers._conv_impl import pad_nd
from mscompat.layers.conv import (
    _ints,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)

__all__ = [
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
]

Ints = Tuple[int, ...]
IntOrTuple = Union[int, Sequence[int]]
_MODES = ("zeros", "reflect", "replicate", "circular")


def _initial(init: Any, shape: Ints, bound: float, name: str, dtype: Any) -> Any:
    """``init`` (a Tensor of ``shape`` or an initializer), or uniform in ``±bound``."""
    if init is None:
        if bound == 0.0 or 0 in shape:
            return initializer("zeros", shape, dtype)
        return initializer(Uniform(bound), shape, dtype)
    if isinstance(init, Tensor) or hasattr(init, "__array__"):
        value = init if isinstance(init, Tensor) else Tensor(init)
        if tuple(value.shape) != shape:
            raise ValueError(f"{name} must have shape {shape}, but got {tuple(value.shape)}")
        return value.astype(dtype)
    return initializer(init, shape, dtype)


class _ConvBase(nn.Cell):
    """Configuration and parameters shared by the direct and transposed Cells."""

    _nd = 2
    _transposed = False

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntOrTuple,
        stride: IntOrTuple,
        padding: Any,
        dilation: IntOrTuple,
        groups: int,
        bias: bool,
        padding_mode: str,
        dtype: Any,
        weight_init: Any,
        bias_init: Any,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        in_channels = check_int(in_channels, "in_channels")
        out_channels = check_int(out_channels, "out_channels")
        groups = check_int(groups, "groups")
        check_bool(bias, "bias")
        if groups <= 0:
            raise ValueError(f"{name}: groups must be a positive integer, but got {groups}")
        if in_channels % groups:
            raise ValueError(f"{name}: in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError(f"{name}: out_channels must be divisible by groups")
        if padding_mode not in _MODES:
            raise ValueError(
                f"{name}: padding_mode must be one of {_MODES}, but got {padding_mode!r}"
            )
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f'{name}: only "zeros" padding mode is supported')
        nd = self._nd
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size = _ints(kernel_size, nd, "kernel_size", name, 1)
        self.stride = _ints(stride, nd, "stride", name, 1)
        self.dilation = _ints(dilation, nd, "dilation", name, 1)
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(
                    f"{name}: invalid padding string {padding!r}, should be one of "
                    "['valid', 'same']"
                )
            if padding == "same" and max(self.stride) > 1:
                raise ValueError(
                    f"{name}: padding='same' is not supported for strided convolutions"
                )
            self.padding: Any = padding
        else:
            self.padding = _ints(padding, nd, "padding", name, 0)
        self.padding_mode = padding_mode
        # the padding of padding_mode, as PyTorch's _reversed_padding_repeated_twice
        if padding == "same":
            total = [self.dilation[i] * (self.kernel_size[i] - 1) for i in range(nd)]
            self._lo = tuple(t // 2 for t in total)
            self._hi = tuple(t - t // 2 for t in total)
        elif padding == "valid":
            self._lo = self._hi = (0,) * nd
        else:
            self._lo = self._hi = self.padding
        dtype = ms.float32 if dtype is None else dtype
        if self._transposed:
            shape = (in_channels, out_channels // groups) + self.kernel_size
        else:
            shape = (out_channels, in_channels // groups) + self.kernel_size
        fan_in = shape[1] * math.prod(self.kernel_size)
        bound = 1.0 / math.sqrt(fan_in) if fan_in else 0.0
        self.weight = Parameter(_initial(weight_init, shape, bound, "weight_init", dtype), "weight")
        self.bias: Optional[Parameter] = None
        if bias:
            init = _initial(bias_init, (out_channels,), bound, "bias_init", dtype)
            self.bias = Parameter(init, "bias")

    def extend_repr(self) -> str:
        text = (
            f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
            f"stride={self.stride}"
        )
        if self.padding != (0,) * self._nd:
            text += f", padding={self.padding!r}"
        if self.dilation != (1,) * self._nd:
            text += f", dilation={self.dilation}"
        if self.groups != 1:
            text += f", groups={self.groups}"
        if self.bias is None:
            text += ", bias=False"
        if self.padding_mode != "zeros":
            text += f", padding_mode={self.padding_mode!r}"
        return text


@constexpr
def _check_pad_fits(shape: Ints, lo: Ints, hi: Ints, mode: str, name: str) -> bool:
    """PyTorch's limits of ``F.pad``: reflect pads below the size, circular at most the size."""
    nd = len(lo)
    for i in range(nd):
        size = shape[len(shape) - nd + i]
        pad = max(lo[i], hi[i])
        if (mode == "reflect" and pad >= size) or (mode == "circular" and pad > size):
            raise ValueError(
                f"{name}: padding_mode={mode!r} with padding {pad} does not fit an input of "
                f"shape {shape} (reflect: padding < size; circular: padding <= size)"
            )
        if size == 0:
            raise ValueError(f"{name}: padding_mode={mode!r} needs a non-empty input, got {shape}")
    return True


class _ConvNd(_ConvBase):
    _fn: Callable[..., Tensor] = staticmethod(conv2d)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntOrTuple,
        stride: IntOrTuple = 1,
        padding: Union[str, IntOrTuple] = 0,
        dilation: IntOrTuple = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
        *,
        weight_init: Any = None,
        bias_init: Any = None,
    ) -> None:
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            dtype,
            weight_init,
            bias_init,
        )

    def construct(self, input: Tensor) -> Tensor:
        if self.padding_mode == "zeros":
            return self._fn(
                input,
                self.weight,
                self.bias,
                self.stride,
                self.padding,
                self.dilation,
                self.groups,
            )
        _check_pad_fits(input.shape, self._lo, self._hi, self.padding_mode, type(self).__name__)
        x = pad_nd(input, self._lo, self._hi, self.padding_mode)
        return self._fn(x, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)


class _ConvTransposeNd(_ConvBase):
    _transposed = True
    _fn: Callable[..., Tensor] = staticmethod(conv_transpose2d)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntOrTuple,
        stride: IntOrTuple = 1,
        padding: IntOrTuple = 0,
        output_padding: IntOrTuple = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: IntOrTuple = 1,
        padding_mode: str = "zeros",
        device: Any = None,
        dtype: Any = None,
        *,
        weight_init: Any = None,
        bias_init: Any = None,
    ) -> None:
        name = type(self).__name__
        if isinstance(padding, str):
            raise TypeError(f"{name}: padding must be an int or a tuple of ints, not a string")
        super().__init__(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation,
            groups,
            bias,
            padding_mode,
            dtype,
            weight_init,
            bias_init,
        )
        self.output_padding = _ints(output_padding, self._nd, "output_padding", name, 0)

    def construct(self, input: Tensor, output_size: Optional[Sequence[int]] = None) -> Tensor:
        op = self.output_padding
        if output_size is not None:
            op = _output_padding(
                type(self).__name__,
                input.shape,
                tuple(output_size),
                self.stride,
                self.padding,
                self.kernel_size,
                self.dilation,
            )
        return self._fn(
            input,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            op,
            self.groups,
            self.dilation,
        )


@constexpr
def _output_padding(name: str, shape: Ints, size: Ints, s: Ints, p: Ints, k: Ints, d: Ints) -> Ints:
    """PyTorch's ``_output_padding``: the output padding that gives ``output_size``."""
    nd = len(k)
    if len(size) not in (nd, nd + 1, nd + 2):
        raise ValueError(
            f"{name}: output_size must have {nd} or {nd + 2} elements (got {len(size)})"
        )
    size = size[len(size) - nd :]
    inp = shape[len(shape) - nd :]
    out = []
    for i in range(nd):
        low = (inp[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + 1
        if not low <= size[i] <= low + s[i] - 1:
            raise ValueError(
                f"{name}: requested an output size of {size}, but valid sizes range from "
                f"{low} to {low + s[i] - 1} in dim {i} (for an input of shape {shape})"
            )
        out.append(size[i] - low)
    return tuple(out)


def _doc(kind: str, n: int) -> str:
    """The Cell's text, without its example (each class has its own: a literal docstring, so
    the doctests that run are the source's ">>>" lines)."""
    fn = f"conv_transpose{n}d" if kind == "ConvTranspose" else f"conv{n}d"
    dims = ("L", "H, W", "D, H, W")[n - 1]
    extra = (
        "output_padding (int or tuple): extra size at the end of each dim. Default: 0.\n"
        "        groups (int): Default: 1.\n"
        "        bias (bool): learn a bias. Default: True.\n"
        "        dilation (int or tuple): Default: 1.\n"
        "        padding_mode (str): ``'zeros'`` only (as PyTorch).\n"
        if kind == "ConvTranspose"
        else "dilation (int or tuple): Default: 1.\n"
        "        groups (int): Default: 1.\n"
        "        bias (bool): learn a bias. Default: True.\n"
        "        padding_mode (str): ``'zeros'``, ``'reflect'``, ``'replicate'`` or "
        "``'circular'``.\n"
    )
    padding = "int or tuple" if kind == "ConvTranspose" else "int, tuple, 'same' or 'valid'"
    layout = (
        "(C_in, C_out / groups, k...)"
        if kind == "ConvTranspose"
        else ("(C_out, C_in / groups, k...)")
    )
    call = "layer(x, output_size=...)" if kind == "ConvTranspose" else "layer(x)"
    return f"""{n}-D {"transposed " if kind == "ConvTranspose" else ""}convolution layer. \
See :func:`mscompat.layers.{fn}`.

    Mirrors ``torch.nn.{kind}{n}d``: the weight ``{layout}`` (PyTorch's layout, so a state dict
    loads unchanged) and the bias are Kaiming-uniform initialised as PyTorch's.

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int or tuple): kernel size.
        stride (int or tuple): Default: 1.
        padding ({padding}): Default: 0.
        {extra}        device: accepted for PyTorch's signature and ignored.
        dtype (mindspore dtype, optional): the parameters' dtype. Default: float32.
        weight_init (Tensor or initializer, keyword-only): the weight's initial value instead
            of PyTorch's initialisation (as MindSpore's ``nn.Conv2d`` takes one).
        bias_init (Tensor or initializer, keyword-only): the same for the bias.

    Shape:
        - input: :math:`(N, C_{{in}}, {dims})` or :math:`(C_{{in}}, {dims})`.
        - output: :math:`(N, C_{{out}}, ...)`, the size of :func:`mscompat.layers.{fn}`
          (``{call}``).

    """


class Conv1d(_ConvNd):
    """
    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Conv1d
        >>> layer = Conv1d(4, 6, 3, padding=1)
        >>> layer(ms.ops.ones((2, 4, 5), ms.float32)).shape
        (2, 6, 5)
    """

    _nd = 1
    _fn = staticmethod(conv1d)


class Conv2d(_ConvNd):
    """
    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Conv2d
        >>> layer = Conv2d(4, 6, 3, padding=1)
        >>> layer(ms.ops.ones((2, 4, 5, 5), ms.float32)).shape
        (2, 6, 5, 5)
    """

    _nd = 2
    _fn = staticmethod(conv2d)


class Conv3d(_ConvNd):
    """
    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Conv3d
        >>> layer = Conv3d(4, 6, 3, padding=1)
        >>> layer(ms.ops.ones((2, 4, 5, 5, 5), ms.float32)).shape
        (2, 6, 5, 5, 5)
    """

    _nd = 3
    _fn = staticmethod(conv3d)


class ConvTranspose1d(_ConvTransposeNd):
    """
    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import ConvTranspose1d
        >>> layer = ConvTranspose1d(4, 6, 4, stride=2, padding=1)
        >>> layer(ms.ops.ones((2, 4, 5), ms.float32)).shape
        (2, 6, 10)
    """

    _nd = 1
    _fn = staticmethod(conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """
    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import ConvTranspose2d
        >>> layer = ConvTranspose2d(4, 6, 4, stride=2, padding=1)
        >>> layer(ms.ops.ones((2, 4, 5, 5), ms.float32)).shape
        (2, 6, 10, 10)
    """

    _nd = 2
    _fn = staticmethod(conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """
    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import ConvTranspose3d
        >>> layer = ConvTranspose3d(4, 6, 4, stride=2, padding=1)
        >>> layer(ms.ops.ones((2, 4, 5, 5, 5), ms.float32)).shape
        (2, 6, 10, 10, 10)
    """

    _nd = 3
    _fn = staticmethod(conv_transpose3d)


for _cls in (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d):
    _cls.__doc__ = _doc(_cls.__name__[:-2], _cls._nd) + (_cls.__doc__ or "")
