"""``unfold``/``fold`` (im2col/col2im) and the ``Unfold``/``Fold`` Cells, as in PyTorch.

On CPU the ``aot`` kernels (``custom_ops/cpu/fold_kernel.cc``) run PyTorch's ``im2col`` and
``col2im`` loops: ``unfold`` copies, ``fold`` (and ``unfold``'s gradient) adds each column value to
its image element in PyTorch's order (float16: every addition rounded to float16, as PyTorch's
float16 kernel), so both give PyTorch's numbers exactly. The composite ``unfold`` zero-pads the
input and reads all blocks with one gather whose index is built with NumPy from the static
shapes: an exact copy (infinities and NaN stay where they are) whose gradient is a scatter-add.
The composite ``fold`` is its adjoint: each kernel position's block is spread out by the stride,
padded into place and summed, then the padding is cropped. MindSpore's ``Col2Im`` kernel
(``ops.fold``) gives PyTorch's float32 numbers and is the ``native`` fold (see
:doc:`/api/custom_ops`). ``ops.unfold`` (``Im2Col``) is not used: its gradient fails on CPU for
strides that do not divide the input ("StridedSliceGrad ... out of bounds").
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_int64, check_numel, check_tensor, is_int
from mscompat.custom_ops import fold as _fold_kernels
from mscompat.custom_ops.registry import TensorSpec, call, device_target, register
from mscompat.shape._pooling import shape_carrier

__all__ = ["Fold", "Unfold", "fold", "unfold"]

IntOrPair = Union[int, Tuple[int, int], Sequence[int]]


def _pair(value: Any, name: str, fn: str) -> Tuple[int, int]:
    if is_int(value):
        check_int64(value, name, fn=fn)
        return (int(value), int(value))
    if isinstance(value, (tuple, list)):
        if len(value) == 2 and all(is_int(v) for v in value):
            for v in value:
                check_int64(v, name, value, fn)
            return (int(value[0]), int(value[1]))
        if all(is_int(v) for v in value):
            raise ValueError(f"{fn}(): {name} must have 2 elements, but got {tuple(value)}")
    raise TypeError(f"{fn}(): {name} must be an int or a tuple of 2 ints, but got {value!r}")


def _check_params(
    fn: str, kernel_size: Any, dilation: Any, padding: Any, stride: Any
) -> Tuple[Tuple[int, int], Tuple[int, int], Tuple[int, int], Tuple[int, int]]:
    k = _pair(kernel_size, "kernel_size", fn)
    d = _pair(dilation, "dilation", fn)
    p = _pair(padding, "padding", fn)
    s = _pair(stride, "stride", fn)
    if min(k) <= 0:
        raise ValueError(f"{fn}(): kernel_size must be greater than zero, but got {k}")
    if min(d) <= 0:
        raise ValueError(f"{fn}(): dilation must be greater than zero, but got {d}")
    if min(p) < 0:
        raise ValueError(f"{fn}(): padding must be non-negative, but got {p}")
    if min(s) <= 0:
        raise ValueError(f"{fn}(): stride must be greater than zero, but got {s}")
    return k, d, p, s


def _check_sizes(
    fn: str,
    out: Tuple[int, ...],
    padded: Tuple[int, ...],
    kernel_size: Any,
    dilation: Any,
    padding: Any,
    stride: Any,
    output_size: Any = None,
) -> None:
    """The output and the padded image may not exceed ``MAX_ELEMENTS`` elements (shapes as
    factors: ``(N, C, kh, kw, bh, bw)`` for unfold's ``(N, C * kh * kw, bh * bw)``)."""
    named = {"kernel_size": kernel_size, "dilation": dilation, "stride": stride}
    if output_size is not None:
        named["output_size"] = output_size
    check_numel(out, fn, **named, padding=padding)
    check_numel(padded, fn, "a padded image", padding=padding)


def _blocks(
    size: Tuple[int, int],
    k: Tuple[int, int],
    d: Tuple[int, int],
    p: Tuple[int, int],
    s: Tuple[int, int],
) -> Tuple[int, int]:
    """Number of sliding blocks along H and W (may be < 1 for invalid arguments)."""
    oh = (size[0] + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    ow = (size[1] + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    return oh, ow


def _pad_hw(x: Tensor, top: int, bottom: int, left: int, right: int) -> Tensor:
    """Zero-pad the last two dims (concatenation: exact, any dtype, any backend)."""
    if top or bottom:
        parts = []
        if top:
            parts.append(ops.zeros(x.shape[:-2] + (top, x.shape[-1]), x.dtype))
        parts.append(x)
        if bottom:
            parts.append(ops.zeros(x.shape[:-2] + (bottom, x.shape[-1]), x.dtype))
        x = ops.concat(parts, -2)
    if left or right:
        parts = []
        if left:
            parts.append(ops.zeros(x.shape[:-1] + (left,), x.dtype))
        parts.append(x)
        if right:
            parts.append(ops.zeros(x.shape[:-1] + (right,), x.dtype))
        x = ops.concat(parts, -1)
    return x


# ----------------------------------------------------------------------------- unfold


def _unfold_index(
    padded: Tuple[int, int],
    k: Tuple[int, int],
    d: Tuple[int, int],
    s: Tuple[int, int],
    blocks: Tuple[int, int],
) -> np.ndarray:
    """Flat positions in the padded (Hp * Wp) plane read by each (kernel offset, block)."""
    rows = np.arange(k[0])[:, None] * d[0] + np.arange(blocks[0])[None, :] * s[0]  # (kh, oh)
    cols = np.arange(k[1])[:, None] * d[1] + np.arange(blocks[1])[None, :] * s[1]  # (kw, ow)
    flat = rows[:, None, :, None] * padded[1] + cols[None, :, None, :]  # (kh, kw, oh, ow)
    return flat.reshape(-1).astype(np.int32)


@register("shape.unfold", "composite", note="zero padding + one gather with a static index")
def _unfold_composite(
    x: Tensor,
    k: Tuple[int, int],
    d: Tuple[int, int],
    p: Tuple[int, int],
    s: Tuple[int, int],
    blocks: Tuple[int, int],
) -> Tensor:
    n, c = x.shape[0], x.shape[1]
    xp = _pad_hw(x, p[0], p[0], p[1], p[1])
    hp, wp = xp.shape[2], xp.shape[3]
    index = Tensor(_unfold_index((hp, wp), k, d, s, blocks))
    out = ops.gather(xp.reshape(n, c, hp * wp), index, 2)
    return out.reshape(n, c * k[0] * k[1], blocks[0] * blocks[1])


@constexpr
def _kernel_geom(
    k: Tuple[int, int], d: Tuple[int, int], p: Tuple[int, int], s: Tuple[int, int], half: bool
) -> Tensor:
    """``geom`` of the ``Im2Col``/``Col2Im`` kernels: [kh, kw, dh, dw, ph, pw, sh, sw,
    round_half]."""
    return Tensor(np.array([*k, *d, *p, *s, int(half)], np.int64))


@_fold_kernels.LIBRARY.backend(
    "shape.unfold", "C++ im2col (a copy); gradient: C++ col2im in PyTorch's order"
)
def _unfold_aot(
    x: Tensor,
    k: Tuple[int, int],
    d: Tuple[int, int],
    p: Tuple[int, int],
    s: Tuple[int, int],
    blocks: Tuple[int, int],
) -> Tensor:
    geom = _kernel_geom(k, d, p, s, x.dtype == ms.float16)  # float16 gradient: see Col2Im
    cols = shape_carrier((k[0] * k[1], blocks[0] * blocks[1]))
    image = shape_carrier((x.shape[2], x.shape[3]))
    return _fold_kernels.KERNELS[device_target()]["Im2Col"](x, geom, cols, image)


def unfold(
    input: Tensor,
    kernel_size: IntOrPair,
    dilation: IntOrPair = 1,
    padding: IntOrPair = 0,
    stride: IntOrPair = 1,
) -> Tensor:
    """Extract sliding local blocks from a batched image-like tensor (im2col).

    Mirrors ``torch.nn.functional.unfold``. With ``padding`` zeros on both sides of each
    spatial dim, the number of blocks along dim ``i`` is

    .. math::
        L_i = \\left\\lfloor \\frac{S_i + 2\\,\\text{padding}_i
        - \\text{dilation}_i\\,(\\text{kernel\\_size}_i - 1) - 1}{\\text{stride}_i}
        \\right\\rfloor + 1, \\qquad L = L_0 L_1

    and ``output[n, c * kh * kw + i * kw + j, l]`` is the input value at kernel offset
    ``(i, j)`` of block ``l`` (blocks in row-major order).

    Args:
        input (Tensor[N, C, H, W] or Tensor[C, H, W]): any dtype; only the batch dim may be 0.
        kernel_size (int or tuple[int, int]): block size.
        dilation (int or tuple[int, int]): spacing of the block's elements. Default: 1.
        padding (int or tuple[int, int]): implicit zeros on both sides. Default: 0.
        stride (int or tuple[int, int]): step between blocks. Default: 1.

    Returns:
        Tensor: :math:`(N, C \\cdot k_h k_w, L)`, or :math:`(C \\cdot k_h k_w, L)` for unbatched
        input; ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a Tensor; an argument not an int or a pair of ints.
        ValueError: ``input`` not 3-D/4-D or with an empty non-batch dim; a non-positive
            ``kernel_size``/``dilation``/``stride``, a negative ``padding``; no block fits.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.shape import unfold
        >>> x = ms.Tensor(np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3))
        >>> unfold(x, kernel_size=2)
        Tensor(shape=[1, 4, 4], dtype=Float32, value=
        [[[ 0.00000000e+00,  1.00000000e+00,  3.00000000e+00,  4.00000000e+00],
          [ 1.00000000e+00,  2.00000000e+00,  4.00000000e+00,  5.00000000e+00],
          [ 3.00000000e+00,  4.00000000e+00,  6.00000000e+00,  7.00000000e+00],
          [ 4.00000000e+00,  5.00000000e+00,  7.00000000e+00,  8.00000000e+00]]])
    """
    input = check_tensor(input, "input")
    k, d, p, s = _check_params("unfold", kernel_size, dilation, padding, stride)
    if input.ndim not in (3, 4):
        raise ValueError(
            "unfold(): input must be 3-D (C, H, W) or 4-D (N, C, H, W), "
            f"but got input of shape {input.shape}"
        )
    batched = input.ndim == 4
    x = input if batched else input.expand_dims(0)
    if min(x.shape[1:]) == 0:
        raise ValueError(
            "unfold(): input must have non-zero sizes in all but the batch dim, "
            f"but got input of shape {input.shape}"
        )
    size = (x.shape[2], x.shape[3])
    blocks = _blocks(size, k, d, p, s)
    if min(blocks) < 1:
        raise ValueError(
            f"unfold(): given input with spatial size {size}, kernel_size={k}, dilation={d}, "
            f"padding={p}, the array of sliding blocks would have shape {blocks}, "
            "but its components must be at least one"
        )
    _check_sizes(
        "unfold",
        (x.shape[0], x.shape[1], k[0], k[1], blocks[0], blocks[1]),
        (x.shape[0], x.shape[1], size[0] + 2 * p[0], size[1] + 2 * p[1]),
        kernel_size,
        dilation,
        padding,
        stride,
    )
    if x.shape[0] == 0:
        out = ops.zeros((0, x.shape[1] * k[0] * k[1], blocks[0] * blocks[1]), x.dtype)
    else:
        out = call("shape.unfold", x, k, d, p, s, blocks)
    return out if batched else out.squeeze(0)


# ----------------------------------------------------------------------------- fold


def _spread(x: Tensor, s: Tuple[int, int]) -> Tensor:
    """Insert ``s - 1`` zeros between the elements of the last two dims (no trailing zeros)."""
    n, c, h, w = x.shape
    if s[0] > 1:
        x = x.reshape(n, c, h, 1, w)
        x = ops.concat((x, ops.zeros((n, c, h, s[0] - 1, w), x.dtype)), 3)
        x = x.reshape(n, c, h * s[0], w)[:, :, : (h - 1) * s[0] + 1, :]
    hh = x.shape[2]
    if s[1] > 1:
        x = x.reshape(n, c, hh, w, 1)
        x = ops.concat((x, ops.zeros((n, c, hh, w, s[1] - 1), x.dtype)), 4)
        x = x.reshape(n, c, hh, w * s[1])[:, :, :, : (w - 1) * s[1] + 1]
    return x


@register("shape.fold", "composite", note="stride-spread blocks padded into place and summed")
def _fold_composite(
    x: Tensor,
    size: Tuple[int, int],
    k: Tuple[int, int],
    d: Tuple[int, int],
    p: Tuple[int, int],
    s: Tuple[int, int],
    blocks: Tuple[int, int],
) -> Tensor:
    n = x.shape[0]
    c = x.shape[1] // (k[0] * k[1])
    oh, ow = blocks
    hp, wp = size[0] + 2 * p[0], size[1] + 2 * p[1]
    cols = x.reshape(n, c, k[0] * k[1], oh, ow)
    span_h, span_w = (oh - 1) * s[0] + 1, (ow - 1) * s[1] + 1
    total = ops.zeros((n, c, hp, wp), x.dtype)
    for i in range(k[0]):
        for j in range(k[1]):
            block = _spread(cols[:, :, i * k[1] + j], s)
            h0, w0 = i * d[0], j * d[1]
            total = total + _pad_hw(block, h0, hp - h0 - span_h, w0, wp - w0 - span_w)
    return total[:, :, p[0] : p[0] + size[0], p[1] : p[1] + size[1]]


def _float_sums(x: TensorSpec, *_: Any) -> Optional[str]:
    # col2im sums overlapping blocks; integer and bool sums stay in the composite's dtype.
    if x.dtype in (ms.float16, ms.float32, ms.float64):
        return None
    return f"{x.dtype_name} sums are not supported by the kernel (floating dtypes)"


@register(
    "shape.fold",
    "aot",
    devices=("CPU",),
    probe=_fold_kernels.probe,
    supports=_float_sums,
    note="C++ col2im in PyTorch's order (float16: each addition rounded to float16); "
    "gradient: C++ im2col",
)
def _fold_aot(
    x: Tensor,
    size: Tuple[int, int],
    k: Tuple[int, int],
    d: Tuple[int, int],
    p: Tuple[int, int],
    s: Tuple[int, int],
    blocks: Tuple[int, int],
) -> Tensor:
    half = x.dtype == ms.float16
    geom = _kernel_geom(k, d, p, s, half)
    cols = shape_carrier((k[0] * k[1], blocks[0] * blocks[1]))
    image = shape_carrier(size)
    op = _fold_kernels.KERNELS[device_target()]["Col2Im"]
    if half:  # float32 in and out: every sum is a float16 value, the cast back is exact
        return op(x.astype(ms.float32), geom, cols, image).astype(ms.float16)
    return op(x, geom, cols, image)


def _probe_col2im() -> None:
    cols = Tensor(np.ones((1, 4, 4), np.float32))
    got = ops.fold(cols, Tensor(np.array([3, 3], np.int32)), 2, 1, 0, 1).asnumpy()
    if got.shape != (1, 1, 3, 3) or got[0, 0, 1, 1] != 4.0 or got[0, 0, 0, 0] != 1.0:
        raise RuntimeError(f"ops.fold gave an unexpected result of shape {got.shape}")


@register(
    "shape.fold",
    "native",
    probe=_probe_col2im,
    note="ops.fold (Col2Im kernel)",
    supports=_float_sums,
)
def _fold_native(
    x: Tensor,
    size: Tuple[int, int],
    k: Tuple[int, int],
    d: Tuple[int, int],
    p: Tuple[int, int],
    s: Tuple[int, int],
    blocks: Tuple[int, int],
) -> Tensor:
    return ops.fold(x, Tensor(np.array(size, np.int32)), k, d, p, s)


def fold(
    input: Tensor,
    output_size: IntOrPair,
    kernel_size: IntOrPair,
    dilation: IntOrPair = 1,
    padding: IntOrPair = 0,
    stride: IntOrPair = 1,
) -> Tensor:
    """Combine an array of sliding local blocks into a tensor, summing overlaps (col2im).

    Mirrors ``torch.nn.functional.fold``, the adjoint of :func:`unfold`:
    ``input[n, c * kh * kw + i * kw + j, l]`` is added to the output at kernel offset
    ``(i, j)`` of block ``l``; positions in the ``padding`` are dropped. ``input``'s last dim
    must be the number of blocks :math:`L` that :func:`unfold` gives for ``output_size``.

    Args:
        input (Tensor[N, C * kh * kw, L] or Tensor[C * kh * kw, L]): any dtype; only the batch
            dim may be 0.
        output_size (int or tuple[int, int]): spatial size ``(H, W)`` of the output.
        kernel_size (int or tuple[int, int]): block size.
        dilation (int or tuple[int, int]): spacing of the block's elements. Default: 1.
        padding (int or tuple[int, int]): implicit zeros on both sides. Default: 0.
        stride (int or tuple[int, int]): step between blocks. Default: 1.

    Returns:
        Tensor: :math:`(N, C, H, W)`, or :math:`(C, H, W)` for unbatched input.

    Raises:
        TypeError: ``input`` not a Tensor; an argument not an int or a pair of ints.
        ValueError: ``input`` not 2-D/3-D or with an empty non-batch dim; its dim 1 not
            divisible by ``kh * kw``; its last dim not the number of blocks; invalid sizes.

    Example:
        >>> import mindspore as ms
        >>> from mindspore import ops
        >>> from mscompat.shape import fold
        >>> cols = ops.ones((1, 4, 4), ms.float32)
        >>> fold(cols, output_size=3, kernel_size=2)
        Tensor(shape=[1, 1, 3, 3], dtype=Float32, value=
        [[[[ 1.00000000e+00,  2.00000000e+00,  1.00000000e+00],
           [ 2.00000000e+00,  4.00000000e+00,  2.00000000e+00],
           [ 1.00000000e+00,  2.00000000e+00,  1.00000000e+00]]]])
    """
    input = check_tensor(input, "input")
    size = _pair(output_size, "output_size", "fold")
    k, d, p, s = _check_params("fold", kernel_size, dilation, padding, stride)
    if input.ndim not in (2, 3):
        raise ValueError(
            "fold(): input must be 2-D (C * kh * kw, L) or 3-D (N, C * kh * kw, L), "
            f"but got input of shape {input.shape}"
        )
    batched = input.ndim == 3
    x = input if batched else input.expand_dims(0)
    if min(x.shape[1:]) == 0:
        raise ValueError(
            "fold(): input must have non-zero sizes in all but the batch dim, "
            f"but got input of shape {input.shape}"
        )
    if x.shape[1] % (k[0] * k[1]) != 0:
        raise ValueError(
            "fold(): input's dim 1 must be divisible by the product of kernel_size, "
            f"but got input.shape[1]={x.shape[1]} and kernel_size={k}"
        )
    blocks = _blocks(size, k, d, p, s)
    if min(blocks) < 1 or x.shape[2] != blocks[0] * blocks[1]:
        raise ValueError(
            f"fold(): given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, "
            f"stride={s}, input's last dim must be the number of sliding blocks "
            f"{blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, "
            f"but got input.shape[-1]={x.shape[2]}"
        )
    if min(size) < 1:
        raise ValueError(f"fold(): output_size must be positive, but got {size}")
    c = x.shape[1] // (k[0] * k[1])
    _check_sizes(
        "fold",
        (x.shape[0], c) + size,
        (x.shape[0], c, size[0] + 2 * p[0], size[1] + 2 * p[1]),
        kernel_size,
        dilation,
        padding,
        stride,
        output_size,
    )
    if x.shape[0] == 0:
        out = ops.zeros((0, c) + size, x.dtype)
    else:
        out = call("shape.fold", x, size, k, d, p, s, blocks)
    return out if batched else out.squeeze(0)


class Unfold(nn.Cell):
    """Extract sliding local blocks (im2col). See :func:`unfold`.

    Mirrors ``torch.nn.Unfold``.

    Args:
        kernel_size (int or tuple[int, int]): block size.
        dilation (int or tuple[int, int]): spacing of the block's elements. Default: 1.
        padding (int or tuple[int, int]): implicit zeros on both sides. Default: 0.
        stride (int or tuple[int, int]): step between blocks. Default: 1.

    Shape:
        - input: :math:`(N, C, H, W)` or :math:`(C, H, W)`.
        - output: :math:`(N, C \\cdot k_h k_w, L)` or :math:`(C \\cdot k_h k_w, L)`.

    Example:
        >>> from mindspore import ops
        >>> from mscompat.shape import Unfold
        >>> Unfold(kernel_size=(2, 3), stride=2)(ops.ones((2, 5, 3, 4))).shape
        (2, 30, 1)
    """

    def __init__(
        self,
        kernel_size: IntOrPair,
        dilation: IntOrPair = 1,
        padding: IntOrPair = 0,
        stride: IntOrPair = 1,
    ) -> None:
        super().__init__()
        _check_params("Unfold", kernel_size, dilation, padding, stride)
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def construct(self, input: Tensor) -> Tensor:
        return unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)


class Fold(nn.Cell):
    """Combine sliding local blocks into a tensor (col2im). See :func:`fold`.

    Mirrors ``torch.nn.Fold``.

    Args:
        output_size (int or tuple[int, int]): spatial size of the output.
        kernel_size (int or tuple[int, int]): block size.
        dilation (int or tuple[int, int]): spacing of the block's elements. Default: 1.
        padding (int or tuple[int, int]): implicit zeros on both sides. Default: 0.
        stride (int or tuple[int, int]): step between blocks. Default: 1.

    Shape:
        - input: :math:`(N, C \\cdot k_h k_w, L)` or :math:`(C \\cdot k_h k_w, L)`.
        - output: :math:`(N, C, H, W)` or :math:`(C, H, W)`.

    Example:
        >>> from mindspore import ops
        >>> from mscompat.shape import Fold
        >>> Fold(output_size=(4, 5), kernel_size=2)(ops.ones((1, 12, 12))).shape
        (1, 3, 4, 5)
    """

    def __init__(
        self,
        output_size: IntOrPair,
        kernel_size: IntOrPair,
        dilation: IntOrPair = 1,
        padding: IntOrPair = 0,
        stride: IntOrPair = 1,
    ) -> None:
        super().__init__()
        _pair(output_size, "output_size", "Fold")
        _check_params("Fold", kernel_size, dilation, padding, stride)
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def construct(self, input: Tensor) -> Tensor:
        return fold(
            input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )
