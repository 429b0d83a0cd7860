"""Average pooling with PyTorch's windows and divisors, as ``torch.nn.functional.avg_pool*d``.

MindSpore 2.10 on CPU has no kernel for ``mint.nn.functional.avg_pool1d/2d/3d``;
``ops.avg_pool*d`` run in float16/float32 but their gradients take no float64. Window ``j`` of
a dim of length :math:`L` covers :math:`[js - p, \\min(js - p + k, L + p))`; its sum over the
input positions inside it is divided by

* ``divisor_override`` when given, else
* the window's size counting the padding (``count_include_pad=True``, the default), else
* the number of input positions in it,

a product over the spatial dims. Output lengths are max pooling's (``ceil_mode``: the last
window must start inside the input or the left padding).

Backends: ``native`` (float16/float32): ``ops.avg_pool1d/2d/3d``, which match PyTorch there;
``composite``: zero padding, ``k`` strided views summed per dim (float16 in float32) and a
static divisor table; ``mint`` on Ascend where its probe passes.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import is_int
from mscompat.custom_ops.registry import TensorSpec, call, register
from mscompat.shape._pooling import check_pool_input, from_planes, to_planes
from mscompat.shape.max_pool import IntOrTuple, _pool_params

__all__ = [
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
]

Window = Tuple[Tuple[int, ...], Tuple[int, ...], Tuple[int, ...]]  # kernel, stride, padding


def _divisors(length: int, out: int, k: int, s: int, p: int) -> Tuple[np.ndarray, np.ndarray]:
    """Per output position of one dim: (window size with padding, positions inside input)."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, length + p)
    inside = np.minimum(end, length) - np.maximum(start, 0)
    return (end - start).astype(np.float64), inside.astype(np.float64)


@constexpr
def _divisor_table(
    spatial: Tuple[int, ...],
    out: Tuple[int, ...],
    window: Window,
    include_pad: bool,
    override: Any,
    dtype: Any,
) -> Tensor:
    """The divisor of every output position, shaped ``out`` (a compile-time constant)."""
    if override is not None:
        return Tensor(np.array(float(override)), dtype)
    table = np.ones((), np.float64)
    for i, length in enumerate(spatial):
        full, inside = _divisors(length, out[i], window[0][i], window[1][i], window[2][i])
        table = np.multiply.outer(table, full if include_pad else inside)
    return Tensor(table, dtype)


def _window_sum(x: Tensor, axis: int, length_out: int, k: int, s: int, p: int) -> Tensor:
    """Sum of each window along ``axis`` of ``x`` (zero padded as needed).

    Each window offset ``j`` is a slice of ``length_out * s`` positions reshaped to
    ``(length_out, s)`` of which the first column is kept: no strided slice (MindSpore's CPU
    StridedSliceGrad failed with "input memory out of bounds" on 1e6-element inputs).
    """
    length = x.shape[axis]
    right = max(0, (k - 1) + length_out * s - length - p)
    parts = []
    for size in (p, -1, right):
        if size == -1:
            parts.append(x)
        elif size > 0:
            parts.append(ops.zeros(x.shape[:axis] + (size,) + x.shape[axis + 1 :], x.dtype))
    xp = parts[0] if len(parts) == 1 else ops.concat(parts, axis)
    lead, tail = x.shape[:axis], x.shape[axis + 1 :]
    pieces = []
    for j in range(k):
        piece = ops.narrow(xp, axis, j, length_out * s)
        if s > 1:
            piece = ops.narrow(piece.reshape(lead + (length_out, s) + tail), axis + 1, 0, 1)
            piece = piece.reshape(lead + (length_out,) + tail)
        pieces.append(piece)
    total = pieces[0]
    for piece in pieces[1:]:
        total = total + piece
    return total


_OPS = tuple(f"shape.avg_pool{d}d" for d in (1, 2, 3))


@register(_OPS, "composite", note="zero padding, per-offset slice sums, static divisor table")
def _avg_pool_composite(
    x: Tensor, window: Window, out: Tuple[int, ...], include_pad: bool, override: Any
) -> Tensor:
    n = len(out)
    work = ms.float32 if x.dtype == ms.float16 else x.dtype
    y = to_planes(x, n).astype(work)
    for i in range(n):
        y = _window_sum(y, 1 + i, out[i], window[0][i], window[1][i], window[2][i])
    spatial = x.shape[x.ndim - n :]
    y = y / _divisor_table(spatial, out, window, include_pad, override, work)
    return from_planes(y.astype(x.dtype), x, n)


def _native_dtypes(
    x: TensorSpec, window: Any, out: Any, include_pad: bool, override: Any
) -> Optional[str]:
    if x.dtype not in (ms.float16, ms.float32):
        return f"ops.avg_pool*d's gradient takes float16/float32, not {x.dtype}"
    if override is not None:
        return "MindSpore's AvgPool gradient ignores divisor_override (measured: wrong gradient)"
    return None


def _native_probe() -> None:
    ops.avg_pool2d(Tensor(np.ones((1, 1, 3, 3), np.float32)), 2, 1, 1, True, False, 0)


@register(
    _OPS,
    "native",
    devices=("CPU", "GPU"),
    probe=_native_probe,
    supports=_native_dtypes,
    note="ops.avg_pool1d/2d/3d",
)
def _avg_pool_native(
    x: Tensor, window: Window, out: Tuple[int, ...], include_pad: bool, override: Any
) -> Tensor:
    n = len(out)
    kernel, stride, pad = window
    y = to_planes(x, n).expand_dims(1)
    ceil = _ceil_needed(x.shape[x.ndim - n :], out, window)
    if n == 1:
        y = ops.avg_pool1d(y, kernel[0], stride[0], pad[0], ceil, include_pad)
    elif n == 2:
        pads = (pad[0], pad[0], pad[1], pad[1])
        y = ops.avg_pool2d(y, kernel, stride, pads, ceil, include_pad, override or 0)
    else:
        pads6 = (pad[0], pad[0], pad[1], pad[1], pad[2], pad[2])
        y = ops.avg_pool3d(y, kernel, stride, pads6, ceil, include_pad, override or 0)
    return from_planes(y.squeeze(1), x, n)


def _ceil_needed(spatial: Tuple[int, ...], out: Tuple[int, ...], window: Window) -> bool:
    """Whether floor mode would give fewer windows than ``out`` (then ``ceil_mode`` is on)."""
    for i, length in enumerate(spatial):
        k, s, p = window[0][i], window[1][i], window[2][i]
        if (length + 2 * p - k) // s + 1 < out[i]:
            return True
    return False


def _mint_probe() -> None:
    ms.mint.nn.functional.avg_pool2d(Tensor(np.ones((1, 1, 3, 3), np.float32)), 2)


@register(_OPS, "native", devices=("Ascend",), probe=_mint_probe, note="mint avg_pool*d")
def _avg_pool_mint(
    x: Tensor, window: Window, out: Tuple[int, ...], include_pad: bool, override: Any
) -> Tensor:
    n = len(out)
    kernel, stride, pad = window
    ceil = _ceil_needed(x.shape[x.ndim - n :], out, window)
    f = ms.mint.nn.functional
    if n == 1:
        return f.avg_pool1d(x, kernel, stride, pad, ceil, include_pad)
    fn = f.avg_pool2d if n == 2 else f.avg_pool3d
    return fn(x, kernel, stride, pad, ceil, include_pad, override)


# ----------------------------------------------------------------------------- front doors


@constexpr
def _plan(
    shape: Tuple[int, ...],
    n: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: Any,
    count_include_pad: Any,
    divisor_override: Any,
    fn: str,
) -> Tuple[Window, Tuple[int, ...]]:
    """PyTorch's checks, then (window, output size). A compile-time constant under ``ms.jit``:
    its errors are raised before the dispatch is traced (a plain function's raise was not, and
    the registry then saw dead values)."""
    shaped = np.broadcast_to(np.zeros((), np.int8), shape)  # .shape/.ndim, no memory
    params, out = _pool_params(shaped, n, kernel_size, stride, padding, 1, ceil_mode, False, fn)
    if not isinstance(count_include_pad, bool):
        raise TypeError(f"{fn}(): count_include_pad must be a bool, but got {count_include_pad!r}")
    if divisor_override is not None:
        if not is_int(divisor_override):
            raise TypeError(
                f"{fn}(): divisor_override must be an int, but got {divisor_override!r}"
            )
        if divisor_override == 0:
            raise ValueError(f"{fn}(): divisor must be not zero, but got divisor_override=0")
    return (params[0], params[1], params[2]), out


def avg_pool(
    input: Tensor,
    n: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: Any,
    count_include_pad: Any,
    divisor_override: Any,
    fn: str,
) -> Tensor:
    """Validation (PyTorch's rules and messages) and dispatch of ``avg_pool{n}d``."""
    x = check_pool_input(input, n, fn)
    window, out = _plan(
        x.shape,
        n,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        fn,
    )
    if x.size == 0:
        return ops.zeros(x.shape[: x.ndim - n] + out, x.dtype)
    return call(f"shape.avg_pool{n}d", x, window, out, count_include_pad, divisor_override)


def avg_pool1d(
    input: Tensor,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    padding: IntOrTuple = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """1-D average pooling, as :func:`torch.nn.functional.avg_pool1d`.

    .. math::
        y_j = \\frac{1}{D_j} \\sum_{i = \\max(js - p, 0)}^{\\min(js - p + k, L) - 1} x_i

    with :math:`D_j` the window's size up to :math:`L + p` (``count_include_pad``) or its
    number of input positions. float16 sums in float32 and rounds once.

    Args:
        input (Tensor[N, C, L] or Tensor[C, L]): float16, float32 or float64.
        kernel_size (int | tuple[int]): :math:`k`.
        stride (int | tuple[int], optional): :math:`s` (default ``kernel_size``).
        padding (int | tuple[int]): zero padding :math:`p \\le k / 2`.
        ceil_mode (bool): ceil in the output length.
        count_include_pad (bool): count the padding in the divisor.

    Returns:
        Tensor[N, C, L_out] or Tensor[C, L_out]: input's dtype.

    Raises:
        TypeError: non-float input, sizes not ints, flags not bools.
        ValueError: input not 2-D/3-D, non-positive sizes, ``padding > kernel_size / 2``, an
            output length < 1.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import avg_pool1d
        >>> x = ms.Tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]])
        >>> avg_pool1d(x, 2, ceil_mode=True).asnumpy().tolist()
        [[[1.5, 3.5, 5.0]]]
        >>> avg_pool1d(x, 3, 2, 1).asnumpy().tolist()
        [[[1.0, 3.0, 3.0]]]
    """
    return avg_pool(
        input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None, "avg_pool1d"
    )


def avg_pool2d(
    input: Tensor,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    padding: IntOrTuple = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Optional[int] = None,
) -> Tensor:
    """2-D average pooling, as :func:`torch.nn.functional.avg_pool2d`.

    Each window's sum (see :func:`avg_pool1d`, per dim) divided by ``divisor_override``, or
    the product of the per-dim divisors.

    Args:
        input (Tensor[N, C, H, W] or Tensor[C, H, W]): float16, float32 or float64.
        kernel_size, stride, padding (int | tuple[int, int]): as :func:`avg_pool1d`.
        ceil_mode, count_include_pad (bool): as :func:`avg_pool1d`.
        divisor_override (int, optional): the divisor of every window (non-zero).

    Returns:
        Tensor[N, C, H_out, W_out] or Tensor[C, H_out, W_out]: input's dtype.

    Raises:
        TypeError: non-float input, sizes not ints, flags not bools.
        ValueError: input not 3-D/4-D, bad sizes, ``divisor_override=0``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import avg_pool2d
        >>> x = ms.Tensor([[[1.0, 2.0], [3.0, 4.0]]])
        >>> avg_pool2d(x, 2, 1, 1, count_include_pad=False)[0, 0].asnumpy().tolist()
        [1.0, 1.5, 2.0]
    """
    return avg_pool(
        input,
        2,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        "avg_pool2d",
    )


def avg_pool3d(
    input: Tensor,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    padding: IntOrTuple = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: Optional[int] = None,
) -> Tensor:
    """3-D average pooling, as :func:`torch.nn.functional.avg_pool3d`. See :func:`avg_pool2d`.

    Args:
        input (Tensor[N, C, D, H, W] or Tensor[C, D, H, W]): float16, float32 or float64.
        kernel_size, stride, padding (int | tuple[int, int, int]): as :func:`avg_pool1d`.
        ceil_mode, count_include_pad (bool): as :func:`avg_pool1d`.
        divisor_override (int, optional): the divisor of every window (non-zero).

    Returns:
        Tensor[N, C, D_out, H_out, W_out] or Tensor[C, D_out, H_out, W_out]: input's dtype.

    Raises:
        TypeError: non-float input, sizes not ints, flags not bools.
        ValueError: input not 4-D/5-D, bad sizes, ``divisor_override=0``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import avg_pool3d
        >>> avg_pool3d(ms.Tensor([[[[[1.0, 3.0]]]]]), (1, 1, 2)).asnumpy().tolist()
        [[[[[2.0]]]]]
    """
    return avg_pool(
        input,
        3,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
        "avg_pool3d",
    )


# ----------------------------------------------------------------------------- Cells


class _AvgPoolNd(nn.Cell):
    _N = 2

    def __init__(
        self,
        kernel_size: IntOrTuple,
        stride: Optional[IntOrTuple] = None,
        padding: IntOrTuple = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: Optional[int] = None,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def construct(self, input: Tensor) -> Tensor:
        return avg_pool(
            input,
            self._N,
            self.kernel_size,
            self.stride,
            self.padding,
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
            f"avg_pool{self._N}d",
        )


class AvgPool1d(_AvgPoolNd):
    """1-D average pooling Cell, as :class:`torch.nn.AvgPool1d`. See :func:`avg_pool1d`.

    Args: kernel_size, stride (default ``kernel_size``), padding, ceil_mode,
    count_include_pad.

    Shape:
        - input: ``(N, C, L)`` or ``(C, L)``; output ``(N, C, L_out)`` or ``(C, L_out)``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AvgPool1d
        >>> AvgPool1d(2)(ms.Tensor([[[1.0, 3.0, 5.0, 7.0]]])).asnumpy().tolist()
        [[[2.0, 6.0]]]
    """

    _N = 1

    def __init__(
        self,
        kernel_size: IntOrTuple,
        stride: Optional[IntOrTuple] = None,
        padding: IntOrTuple = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        super().__init__(kernel_size, stride, padding, ceil_mode, count_include_pad, None)


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling Cell, as :class:`torch.nn.AvgPool2d`. See :func:`avg_pool2d`.

    Args: kernel_size, stride (default ``kernel_size``), padding, ceil_mode,
    count_include_pad, divisor_override.

    Shape:
        - input: ``(N, C, H, W)`` or ``(C, H, W)``; output ``(N, C, H_out, W_out)``.
    """

    _N = 2


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling Cell, as :class:`torch.nn.AvgPool3d`. See :func:`avg_pool3d`.

    Shape:
        - input: ``(N, C, D, H, W)`` or ``(C, D, H, W)``; output
          ``(N, C, D_out, H_out, W_out)``.
    """

    _N = 3
