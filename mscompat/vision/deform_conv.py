"""Deformable convolution, v1 and v2 (modulated): ``deform_conv2d`` and ``DeformConv2d``, as in
``torchvision.ops``.

Each output position samples the input at the kernel's grid points moved by learned offsets
(bilinear interpolation, zero outside the image), optionally scales each sample by a mask, and
contracts the samples with the weight: torchvision's deformable im2col followed by a matrix
product per weight group. The sampling follows torchvision's CPU kernel
(``torchvision/csrc/ops/cpu/deform_conv2d_kernel.cpp``) formula by formula; its gradients are
torchvision's: the input gradient spread to the sampled corners, the offset gradient from the
bilinear weights' derivative (``get_coordinate_weight``) and the mask gradient from the samples.

Backends (:doc:`/kernels`): ``aot`` (``custom_ops/cpu/deform_conv_kernel.cc``: the sampling and
its backward in C++, threads; the matrix products are MindSpore's) and ``composite`` (four
gathers per sample point and a matmul, differentiated by MindSpore). MindSpore's
``ops.deformable_conv2d`` is not a backend: it orders the offsets differently (``[dx...,
dy..., mask...]``, an adapter is a concatenation); through such an adapter it runs on CPU but
is not exact (a seeded 2 x 4 x 6 x 7 float32 case: up to 9.5e-7 from our output, which is
torchvision's sampling exactly), rejects float64 and computes float16 in float16 (1.6e-2 off).
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional, Sequence, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.initializer import HeUniform, Initializer, Uniform, initializer
from mindspore.ops import constexpr

from mscompat._checks import check_float_tensor, check_int, check_numel, check_tensor
from mscompat.custom_ops import deform_conv as _kernels
from mscompat.custom_ops.registry import call, device_target, register
from mscompat.shape.fold import _pair

__all__ = ["DeformConv2d", "deform_conv2d"]

IntOrPair = Union[int, Tuple[int, int], Sequence[int]]
#: (kh, kw, sh, sw, ph, pw, dh, dw, offset_groups, use_mask, weight_groups, out_h, out_w)
Geometry = Tuple[int, int, int, int, int, int, int, int, int, int, int, int, int]

_FN = "deform_conv2d"


def _out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    # C++ integer division (truncation), as torchvision's kernel computes it
    span = size + 2 * p - (d * (k - 1) + 1)
    return (span // s if span >= 0 else -((-span) // s)) + 1


def _check_rank(x: Tensor, name: str, ndim: int, what: str) -> None:
    if x.ndim != ndim:
        raise ValueError(
            f"{_FN}(): {name} must be {ndim}-D {what}, but got {name} of shape {x.shape}"
        )


def _plan(
    input: Tensor,
    offset: Tensor,
    weight: Tensor,
    bias: Optional[Tensor],
    stride: Any,
    padding: Any,
    dilation: Any,
    mask: Optional[Tensor],
) -> Geometry:
    """Validates every argument (errors name it) and returns the geometry."""
    _check_rank(input, "input", 4, "(N, C, H, W)")
    _check_rank(offset, "offset", 4, "(N, 2 * offset_groups * kh * kw, out_h, out_w)")
    _check_rank(weight, "weight", 4, "(out_channels, in_channels // groups, kh, kw)")
    for name, t in (("offset", offset), ("weight", weight), ("bias", bias), ("mask", mask)):
        if t is not None and t.dtype != input.dtype:
            raise TypeError(
                f"{_FN}(): {name} must have input's dtype {input.dtype}, but got {t.dtype}"
            )
    s = _pair(stride, "stride", _FN)
    p = _pair(padding, "padding", _FN)
    d = _pair(dilation, "dilation", _FN)
    if min(s) <= 0:
        raise ValueError(f"{_FN}(): stride must be greater than zero, but got {s}")
    if min(p) < 0:
        raise ValueError(f"{_FN}(): padding must be non-negative, but got {p}")
    if min(d) <= 0:
        raise ValueError(f"{_FN}(): dilation must be greater than zero, but got {d}")
    n, c, h, w = input.shape
    cout, cin_g, kh, kw = weight.shape
    if min(c, h, w) == 0:
        raise ValueError(
            f"{_FN}(): input must have non-zero channels, height and width, "
            f"but got input of shape {input.shape}"
        )
    if min(cout, cin_g, kh, kw) == 0:
        raise ValueError(f"{_FN}(): weight must have no zero dim, but got shape {weight.shape}")
    if c % cin_g != 0:
        raise ValueError(
            f"{_FN}(): weight.shape[1] ({cin_g}) must divide the input's channels ({c}): "
            "weight groups are in_channels // weight.shape[1]"
        )
    groups = c // cin_g
    if cout % groups != 0:
        raise ValueError(
            f"{_FN}(): weight.shape[0] ({cout}) must be divisible by the weight groups "
            f"({groups} = in_channels {c} // weight.shape[1] {cin_g})"
        )
    k = kh * kw
    if offset.shape[1] == 0 or offset.shape[1] % (2 * k) != 0:
        raise ValueError(
            f"{_FN}(): offset.shape[1] must be a positive multiple of 2 * kh * kw = {2 * k}, "
            f"but got offset of shape {offset.shape}"
        )
    offset_groups = offset.shape[1] // (2 * k)
    if c % offset_groups != 0:
        raise ValueError(
            f"{_FN}(): the offset groups ({offset_groups} = offset.shape[1] // (2 * kh * kw)) "
            f"must divide the input's channels ({c})"
        )
    oh = _out_size(h, kh, s[0], p[0], d[0])
    ow = _out_size(w, kw, s[1], p[1], d[1])
    if oh <= 0 or ow <= 0:
        raise ValueError(
            f"{_FN}(): given input of spatial size {(h, w)}, kernel {(kh, kw)}, stride={s}, "
            f"padding={p}, dilation={d}, the output size would be {(oh, ow)}: too small"
        )
    want = (n, 2 * offset_groups * k, oh, ow)
    if offset.shape != want:
        raise ValueError(f"{_FN}(): offset must have shape {want}, but got {offset.shape}")
    if mask is not None:
        _check_rank(mask, "mask", 4, "(N, offset_groups * kh * kw, out_h, out_w)")
        want = (n, offset_groups * k, oh, ow)
        if mask.shape != want:
            raise ValueError(f"{_FN}(): mask must have shape {want}, but got {mask.shape}")
    if bias is not None and bias.shape != (cout,):
        raise ValueError(f"{_FN}(): bias must have shape ({cout},), but got {bias.shape}")
    check_numel((n, c, k, oh, ow), _FN, "sampled columns", stride=stride, padding=padding)
    use_mask = int(mask is not None)
    return (kh, kw, *s, *p, *d, offset_groups, use_mask, groups, oh, ow)


def _conv(cols: Tensor, weight: Tensor, bias: Optional[Tensor], geo: Geometry) -> Tensor:
    """The weight groups' matrix products with the (N, C * K, L) columns, plus the bias."""
    n, ck, _ = cols.shape
    groups, oh, ow = geo[10], geo[11], geo[12]
    cout = weight.shape[0]
    if groups == 1:
        out = ops.matmul(weight.reshape(cout, ck), cols)
    else:
        wg = weight.reshape(groups, cout // groups, ck // groups)
        out = ops.matmul(wg, cols.reshape(n, groups, ck // groups, oh * ow))
    out = out.reshape(n, cout, oh, ow)
    if bias is not None:
        out = out + bias.reshape(1, cout, 1, 1)
    return out


@constexpr
def _bases(geo: Geometry, dtype: Any) -> Tuple[Tensor, Tensor]:
    """The undeformed sampling rows and columns, (K, L) each: ``(o * s - p) + i * d``."""
    kh, kw, sh, sw, ph, pw, dh, dw = geo[:8]
    oh, ow = geo[11], geo[12]
    i, j = np.divmod(np.arange(kh * kw), kw)
    rows = (np.arange(oh) * sh - ph)[None, :, None] + (i * dh)[:, None, None]
    cols = (np.arange(ow) * sw - pw)[None, None, :] + (j * dw)[:, None, None]
    shape = (kh * kw, oh, ow)
    np_dtype = ms.dtype_to_nptype(dtype)
    rows = np.broadcast_to(rows, shape).reshape(kh * kw, oh * ow).astype(np_dtype)
    cols = np.broadcast_to(cols, shape).reshape(kh * kw, oh * ow).astype(np_dtype)
    return Tensor(rows), Tensor(cols)


@register("vision.deform_conv2d", "composite", note="4 gathers per sample point + matmul")
def _deform_composite(
    x: Tensor,
    offset: Tensor,
    mask: Optional[Tensor],
    weight: Tensor,
    bias: Optional[Tensor],
    geo: Geometry,
) -> Tensor:
    n, c, h, w = x.shape
    k, groups = geo[0] * geo[1], geo[8]
    cg, length = c // groups, geo[11] * geo[12]
    base_y, base_x = _bases(geo, x.dtype)
    off = offset.reshape(n, groups, k, 2, length)
    y = off[:, :, :, 0] + base_y
    xs = off[:, :, :, 1] + base_x
    y0 = ops.stop_gradient(ops.floor(y))
    x0 = ops.stop_gradient(ops.floor(xs))
    ly, lx = y - y0, xs - x0
    hy, hx = 1 - ly, 1 - lx
    image = x.reshape(n, groups, cg, h * w)
    flat = (n, groups, 1, k * length)
    terms = []
    # torchvision's corner order and sum ((w1 v1 + w2 v2) + w3 v3) + w4 v4; a corner outside
    # the image reads 0, and the derivative of the weights in y and x is its offset gradient
    for dy, dx, weight_q in ((0, 0, hy * hx), (0, 1, hy * lx), (1, 0, ly * hx), (1, 1, ly * lx)):
        yc, xc = y0 + dy, x0 + dx
        valid = (yc >= 0) & (yc <= h - 1) & (xc >= 0) & (xc <= w - 1)
        index = ops.where(valid, yc * w + xc, ops.zeros_like(yc)).astype(ms.int32)
        index = ops.broadcast_to(index.reshape(flat), (n, groups, cg, k * length))
        v = ops.gather_elements(image, 3, index)
        v = ops.where(valid.reshape(flat), v, ops.zeros_like(v))
        terms.append(weight_q.reshape(flat) * v)
    total = ((terms[0] + terms[1]) + terms[2]) + terms[3]
    if mask is not None:
        total = mask.reshape(flat) * total
    return _conv(total.reshape(n, c * k, length), weight, bias, geo)


@constexpr
def _kernel_args(geo: Geometry) -> Tuple[Tensor, Tensor]:
    """``geom`` and the (kh, kw) carrier of the ``DeformIm2Col`` kernel."""
    geom = np.array(geo[:10], np.int64)
    return Tensor(geom), Tensor(np.zeros((geo[0], geo[1]), np.int8))


@_kernels.LIBRARY.backend(
    "vision.deform_conv2d",
    "C++/CUDA deformable im2col + matmul; gradient: C++/CUDA col2im and coordinate gradients",
    devices=("CPU", "GPU"),
)
def _deform_aot(
    x: Tensor,
    offset: Tensor,
    mask: Optional[Tensor],
    weight: Tensor,
    bias: Optional[Tensor],
    geo: Geometry,
) -> Tensor:
    geom, carrier = _kernel_args(geo)
    m = mask if mask is not None else ops.zeros((1,), x.dtype)
    cols = _kernels.KERNELS[device_target()]["DeformIm2Col"](x, offset, m, geom, carrier)
    return _conv(cols, weight, bias, geo)


def deform_conv2d(
    input: Tensor,
    offset: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride: IntOrPair = 1,
    padding: IntOrPair = 0,
    dilation: IntOrPair = 1,
    mask: Optional[Tensor] = None,
) -> Tensor:
    """Deformable convolution: v2 (modulated) with ``mask``, v1 without.

    Mirrors ``torchvision.ops.deform_conv2d`` (Dai et al., *Deformable Convolutional Networks*,
    2017; Zhu et al., *Deformable ConvNets v2*, 2019). With ``K = kh * kw`` kernel positions
    ``p_k = (i d_h, j d_w)``, ``G`` offset groups and channel ``c`` in offset group ``g``:

    .. math::
        \\text{out}[n, o, p] = \\text{bias}[o] + \\sum_{c \\in \\text{group}(o)} \\sum_{k}
        \\text{weight}[o, c, k]\\; m_{n g k p}\\;
        \\text{bilinear}\\big(\\text{input}[n, c],\\; p\\,s - \\text{pad} + p_k
        + \\Delta_{n g k p}\\big)

    where ``Δ = (offset[n, 2(gK + k)], offset[n, 2(gK + k) + 1])`` is the (dy, dx) pair at
    output position ``p``, ``m = mask[n, gK + k]`` (1 without a mask), and ``bilinear`` is 0 for
    a point outside ``(-1, H) x (-1, W)``, with corners outside the image read as 0. Weight
    groups are ``in_channels // weight.shape[1]``. Gradients flow to ``input``, ``offset``,
    ``mask``, ``weight`` and ``bias``, torchvision's (the offset gradient at a corner is the
    one-sided derivative of the bilinear weights, including at exactly -1).

    Args:
        input (Tensor[N, C, H, W]): float16, float32 or float64.
        offset (Tensor[N, 2 * G * kh * kw, out_h, out_w]): (dy, dx) per offset group and
            kernel position.
        weight (Tensor[out_channels, C // groups, kh, kw]): the kernel.
        bias (Tensor[out_channels], optional): added to every output position. Default: None.
        stride (int or tuple[int, int]): step between output positions. Default: 1.
        padding (int or tuple[int, int]): implicit zeros on both sides. Default: 0.
        dilation (int or tuple[int, int]): spacing of the kernel positions. Default: 1.
        mask (Tensor[N, G * kh * kw, out_h, out_w], optional): modulation of each sample.
            Default: None.

    Returns:
        Tensor[N, out_channels, out_h, out_w]: ``input``'s dtype, where ``out_h = (H + 2 pad_h
        - (d_h (kh - 1) + 1)) // s_h + 1`` (likewise ``out_w``).

    Raises:
        TypeError: an argument that is not a Tensor, a non-floating dtype or dtypes that
            differ; ``stride``/``padding``/``dilation`` not an int or pair of ints.
        ValueError: wrong ranks; ``offset``'s channels not a multiple of ``2 * kh * kw`` or its
            groups not dividing the channels; ``weight.shape[1]`` not dividing the channels or
            the groups not dividing ``weight.shape[0]``; ``offset``/``mask``/``bias`` shapes that
            do not match; an empty channel, height or width; an output smaller than 1.

    .. note::
        float16 runs in float32 (the sampling and the matrix products) and is rounded once at
        the end; torchvision's CPU kernel computes float16 in float16 operation by operation,
        so its float16 results are further from the exact value than ours (see
        :doc:`/api/vision_deform`).

    Example:
        Half a pixel down and right: the mean of 4 pixels, or half the sum of 2 on the last row
        and column, whose other corners are outside the image.

        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import deform_conv2d
        >>> x = ms.Tensor(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
        >>> weight = ms.Tensor(np.ones((1, 1, 1, 1), np.float32))
        >>> offset = ms.Tensor(np.full((1, 2, 4, 4), 0.5, np.float32))
        >>> deform_conv2d(x, offset, weight)[0, 0]
        Tensor(shape=[4, 4], dtype=Float32, value=
        [[ 2.50000000e+00,  3.50000000e+00,  4.50000000e+00,  2.50000000e+00],
         [ 6.50000000e+00,  7.50000000e+00,  8.50000000e+00,  4.50000000e+00],
         [ 1.05000000e+01,  1.15000000e+01,  1.25000000e+01,  6.50000000e+00],
         [ 6.25000000e+00,  6.75000000e+00,  7.25000000e+00,  3.75000000e+00]])
    """
    input = check_float_tensor(input, "input")
    offset = check_tensor(offset, "offset")
    weight = check_tensor(weight, "weight")
    if bias is not None:
        bias = check_tensor(bias, "bias")
    if mask is not None:
        mask = check_tensor(mask, "mask")
    geo = _plan(input, offset, weight, bias, stride, padding, dilation, mask)
    n, cout = input.shape[0], weight.shape[0]
    if n == 0:
        return ops.zeros((0, cout, geo[11], geo[12]), input.dtype)
    if input.dtype == ms.float16:  # computed in float32, rounded once
        wide = [t if t is None else t.astype(ms.float32) for t in (input, offset, mask, weight)]
        b = bias if bias is None else bias.astype(ms.float32)
        out = call("vision.deform_conv2d", wide[0], wide[1], wide[2], wide[3], b, geo)
        return out.astype(ms.float16)
    return call("vision.deform_conv2d", input, offset, mask, weight, bias, geo)


def _initial(init: Any, shape: Tuple[int, ...], name: str) -> Tensor:
    """A float32 initial value of ``shape`` from a Tensor/array or a MindSpore initializer."""
    if isinstance(init, (Tensor, np.ndarray)):
        value = init if isinstance(init, Tensor) else Tensor(init)
        if tuple(value.shape) != shape:
            raise ValueError(f"{name} must have shape {shape}, but got {tuple(value.shape)}")
        return value.astype(ms.float32)
    if not isinstance(init, (str, Initializer, numbers.Number)):
        raise TypeError(
            f"{name} must be a Tensor, an array, an initializer or its name, but got "
            f"{type(init).__name__}"
        )
    return initializer(init, shape, ms.float32)


class DeformConv2d(nn.Cell):
    """Deformable convolution layer. See :func:`deform_conv2d`.

    Mirrors ``torchvision.ops.DeformConv2d``: the weight ``(out_channels, in_channels //
    groups, kh, kw)`` and the bias are initialised as torchvision's (Kaiming uniform with
    ``a = sqrt(5)``, i.e. uniform in ``±1 / sqrt(fan_in)``, the bias in the same range), float32.

    Args:
        in_channels (int): input channels.
        out_channels (int): output channels.
        kernel_size (int or tuple[int, int]): kernel size.
        stride (int or tuple[int, int]): Default: 1.
        padding (int or tuple[int, int]): Default: 0.
        dilation (int or tuple[int, int]): Default: 1.
        groups (int): weight groups; must divide ``in_channels`` and ``out_channels``.
            Default: 1.
        bias (bool): learn a bias. Default: True.
        weight_init (Tensor or initializer, keyword-only): the weight's initial value instead of
            torchvision's initialisation (as MindSpore's ``nn.Conv2d`` takes one; a Tensor
            must have the weight's shape). Default: None.
        bias_init (Tensor or initializer, keyword-only): the same for the bias. Default: None.

    Shape:
        - input: :math:`(N, C_{in}, H, W)`; offset: :math:`(N, 2 G k_h k_w, H_{out}, W_{out})`;
          mask (optional): :math:`(N, G k_h k_w, H_{out}, W_{out})`.
        - output: :math:`(N, C_{out}, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import DeformConv2d
        >>> layer = DeformConv2d(4, 8, kernel_size=3, padding=1)
        >>> x = ms.Tensor(np.ones((2, 4, 5, 5), np.float32))
        >>> offset = ms.Tensor(np.zeros((2, 18, 5, 5), np.float32))
        >>> layer(x, offset).shape
        (2, 8, 5, 5)
    """

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: IntOrPair,
        stride: IntOrPair = 1,
        padding: IntOrPair = 0,
        dilation: IntOrPair = 1,
        groups: int = 1,
        bias: bool = True,
        *,
        weight_init: Any = None,
        bias_init: Any = None,
    ) -> None:
        super().__init__()
        in_channels = check_int(in_channels, "in_channels")
        out_channels = check_int(out_channels, "out_channels")
        groups = check_int(groups, "groups")
        if groups <= 0:
            raise ValueError(f"groups must be positive, but got {groups}")
        if in_channels <= 0 or out_channels <= 0:
            raise ValueError(
                f"in_channels and out_channels must be positive, "
                f"but got {in_channels} and {out_channels}"
            )
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = _pair(kernel_size, "kernel_size", "DeformConv2d")
        if min(self.kernel_size) <= 0:
            raise ValueError(f"kernel_size must be greater than zero, but got {kernel_size}")
        self.stride = _pair(stride, "stride", "DeformConv2d")
        self.padding = _pair(padding, "padding", "DeformConv2d")
        self.dilation = _pair(dilation, "dilation", "DeformConv2d")
        self.groups = groups
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        if weight_init is None:
            weight_init = HeUniform(math.sqrt(5))
        self.weight = Parameter(_initial(weight_init, shape, "weight_init"), "weight")
        self.bias: Optional[Parameter] = None
        if bias:
            if bias_init is None:
                bias_init = Uniform(1 / math.sqrt(shape[1] * shape[2] * shape[3]))
            self.bias = Parameter(_initial(bias_init, (out_channels,), "bias_init"), "bias")

    def construct(self, input: Tensor, offset: Tensor, mask: Optional[Tensor] = None) -> Tensor:
        return deform_conv2d(
            input,
            offset,
            self.weight,
            self.bias,
            stride=self.stride,
            padding=self.padding,
            dilation=self.dilation,
            mask=mask,
        )

    def extend_repr(self) -> str:
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}"
        s += f", stride={self.stride}"
        s += f", padding={self.padding}" if self.padding != (0, 0) else ""
        s += f", dilation={self.dilation}" if self.dilation != (1, 1) else ""
        s += f", groups={self.groups}" if self.groups != 1 else ""
        s += ", bias=False" if self.bias is None else ""
        return s
