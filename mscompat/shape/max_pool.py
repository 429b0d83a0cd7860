"""Max pooling with PyTorch's windows and indices (max unpooling: :mod:`.max_unpool`).

Mirrors ``torch.nn.functional.max_pool{1,2,3}d`` / ``max_unpool{1,2,3}d`` and the
``nn.MaxPool*`` / ``nn.MaxUnpool*`` modules: same arguments, defaults (``stride=None`` means
``kernel_size``), output sizes (``ceil_mode``'s rule that the last window must start inside the
input or the left padding), int64 indices (flat positions in each ``(N, C)`` plane), the element
picked in each window (the first maximum in window order; a NaN wins, the last NaN of the
window), and the gradient, which flows to that element only. The migration guide's MaxPool and
MaxPoolWithArgmax are both :func:`max_pool2d` (indices with ``return_indices=True``).

Output length of a dim of input length :math:`L`:

.. math::
    L_{out} = \\left\\lfloor \\frac{L + 2p - d(k - 1) - 1 + (s - 1)[\\text{ceil}]}{s}
    \\right\\rfloor + 1

minus one when ``ceil_mode`` and :math:`(L_{out} - 1)s \\ge L + p`.

Backends: on CPU the ``aot`` kernels (``custom_ops/cpu/pool_kernel.cc``) run PyTorch's loops for
pooling (values and indices; backward: each window's gradient added to its pick) and unpooling
(backward: a gather); elsewhere the composite (window gathers, ``tensor_scatter_elements``).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple, Union

import mindspore as ms
from mindspore import Tensor, nn

from mscompat._checks import check_numel, is_float_dtype
from mscompat.custom_ops import pool as _pool_kernels
from mscompat.custom_ops.registry import call, register
from mscompat.shape._pooling import (
    check_pool_input,
    empty_like_output,
    from_planes,
    gather_planes,
    kernel_max,
    max_flat_index,
    ntuple,
    pool_output_length,
    pool_table,
    to_planes,
)

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
]

_INT32_MAX = 2147483647

IntOrTuple = Union[int, Tuple[int, ...], List[int]]
MaxOut = Union[Tensor, Tuple[Tensor, Tensor]]
Params = Tuple[Tuple[int, ...], Tuple[int, ...], Tuple[int, ...], Tuple[int, ...]]


# ----------------------------------------------------------------------------- validation


def _stride(
    stride: Any, kernel: Tuple[int, ...], n: int, fn: str, allow_one: bool = True
) -> Tuple[int, ...]:
    if stride is None or (isinstance(stride, (tuple, list)) and len(stride) == 0):
        return kernel
    return ntuple(stride, n, "stride", fn, allow_one)


def _pool_params(
    x: Tensor,
    n: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: Any,
    return_indices: Any,
    fn: str,
) -> Tuple[Params, Tuple[int, ...]]:
    """Validated ``(kernel, stride, padding, dilation)`` and the output spatial size."""
    kernel = ntuple(kernel_size, n, "kernel_size", fn)
    strides = _stride(stride, kernel, n, fn)
    pads = ntuple(padding, n, "padding", fn)
    dils = ntuple(dilation, n, "dilation", fn)
    for name, values in (
        ("kernel_size", kernel),
        ("stride", strides),
        ("padding", pads),
        ("dilation", dils),
    ):
        if max(values) > _INT32_MAX:
            raise ValueError(
                f"{fn}(): {name} must be less than 2**31 (PyTorch's pooling takes int32), "
                f"but got {name}={values}"
            )
    if not isinstance(ceil_mode, bool):
        raise TypeError(f"{fn}(): ceil_mode must be a bool, but got {ceil_mode!r}")
    if not isinstance(return_indices, bool):
        raise TypeError(f"{fn}(): return_indices must be a bool, but got {return_indices!r}")
    for name, values in (("kernel_size", kernel), ("stride", strides), ("dilation", dils)):
        if min(values) <= 0:
            raise ValueError(f"{fn}(): {name} must be greater than zero, but got {values}")
    if min(pads) < 0:
        raise ValueError(f"{fn}(): padding must be non-negative, but got {pads}")
    for p, k in zip(pads, kernel):
        if 2 * p > k:
            raise ValueError(
                f"{fn}(): padding should be at most half of kernel size, but got "
                f"padding={pads} and kernel_size={kernel}"
            )
    spatial = x.shape[x.ndim - n :]
    out = tuple(
        pool_output_length(spatial[i], kernel[i], strides[i], pads[i], dils[i], ceil_mode)
        for i in range(n)
    )
    if min(out) < 1:
        raise ValueError(
            f"{fn}(): Given input size {spatial}, calculated output size {out} is too small "
            f"(kernel_size={kernel}, stride={strides}, padding={pads}, dilation={dils})"
        )
    for i in range(n):
        check_numel((out[i], kernel[i]), fn, "a window table", kernel_size=kernel_size)
        if pool_table(spatial[i], out[i], kernel[i], strides[i], pads[i], dils[i]) is None:
            raise ValueError(
                f"{fn}(): a pooling window along spatial dim {i} lies entirely in the padding "
                f"(input size {spatial}, kernel_size={kernel}, padding={pads}, dilation={dils}); "
                "PyTorch returns -inf with an out-of-range index there"
            )
    return (kernel, strides, pads, dils), out


# ----------------------------------------------------------------------------- composite


def _max_pool_composite(
    x: Tensor,
    kernel: Tuple[int, ...],
    stride: Tuple[int, ...],
    padding: Tuple[int, ...],
    dilation: Tuple[int, ...],
    ceil_mode: bool,
    return_indices: bool,
    use_kernel: bool = False,
) -> MaxOut:
    """PyTorch's pick in every window (separable window gathers, or the ``aot`` kernel with
    ``use_kernel``), then one gather of the picked elements."""
    n = len(kernel)
    spatial = x.shape[x.ndim - n :]
    out = tuple(
        pool_output_length(spatial[i], kernel[i], stride[i], padding[i], dilation[i], ceil_mode)
        for i in range(n)
    )
    if x.size == 0:
        values, indices = empty_like_output(x, n, out)
        if return_indices:
            return values, indices
        return values
    tables = tuple(
        pool_table(spatial[i], out[i], kernel[i], stride[i], padding[i], dilation[i])
        for i in range(n)
    )
    # None tables (a window entirely in padding) were rejected by _pool_params.
    if use_kernel:  # the kernel takes x as it is: in graph mode a reshape is a copy
        values, indices = kernel_max(x, tables)  # type: ignore[arg-type]
        if return_indices:
            return values, indices
        return values
    planes = to_planes(x, n)
    # integers are compared as float64 (exact up to 2**53)
    keys = planes if is_float_dtype(planes.dtype) else planes.astype(ms.float64)
    flat = max_flat_index(keys, tables)  # type: ignore[arg-type]
    values = from_planes(gather_planes(planes, flat, out), x, n)
    if return_indices:
        return values, from_planes(flat.reshape((-1,) + out), x, n)
    return values


_POOL_OPS = tuple(f"shape.max_pool{d}d" for d in (1, 2, 3))

register(_POOL_OPS, "composite", note="separable gather + first-max select")(_max_pool_composite)


@_pool_kernels.LIBRARY.backend(
    _POOL_OPS, "C++ scan of each window (PyTorch's loop): values and indices"
)
def _max_pool_aot(
    x: Tensor,
    kernel: Tuple[int, ...],
    stride: Tuple[int, ...],
    padding: Tuple[int, ...],
    dilation: Tuple[int, ...],
    ceil_mode: bool,
    return_indices: bool,
) -> MaxOut:
    return _max_pool_composite(
        x, kernel, stride, padding, dilation, ceil_mode, return_indices, use_kernel=True
    )


# ----------------------------------------------------------------------------- front doors


def _pool(
    op: str, x: Tensor, params: Tuple[Any, ...], out: Tuple[int, ...], ceil: bool, ret: bool
) -> MaxOut:
    if x.size == 0:  # answered here: no backend sees an empty tensor
        values, indices = empty_like_output(x, len(out), out)
        if ret:
            return values, indices
        return values
    return call(op, x, *params, ceil, ret)


def max_pool1d(
    input: Tensor,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    padding: IntOrTuple = 0,
    dilation: IntOrTuple = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> MaxOut:
    """1-D max pooling, as ``torch.nn.functional.max_pool1d``.

    Window :math:`j` covers positions :math:`js - p + id`, :math:`i < k`, that lie inside the
    input (padding never wins). The value is the window's maximum; the index is the first
    maximum in window order, or the last NaN when the window holds NaN (NaN propagates).

    Args:
        input (Tensor[N, C, L] or Tensor[C, L]): float16, float32 or float64.
        kernel_size (int | tuple[int]): window size :math:`k`.
        stride (int | tuple[int], optional): :math:`s`. Default: ``kernel_size``.
        padding (int | tuple[int]): implicit :math:`-\\infty` padding :math:`p \\le k/2`.
            Default: 0.
        dilation (int | tuple[int]): spacing :math:`d` of the window elements. Default: 1.
        ceil_mode (bool): ceil instead of floor in the output length (the last window must
            start inside the input or the left padding). Default: False.
        return_indices (bool): also return the int64 indices. Default: False.

    Returns:
        Tensor[N, C, L_out] (or [C, L_out]), and with ``return_indices`` a tuple whose second
        element is the int64 positions in the last dim of ``input``.

    Raises:
        TypeError: ``input`` not a float Tensor, sizes not ints, flags not bools.
        ValueError: ``input`` not 2-D/3-D, an empty non-batch dim, non-positive sizes,
            ``padding > kernel_size / 2``, an output length < 1, or a window entirely in the
            padding.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import max_pool1d
        >>> x = ms.Tensor([[[1.0, 3.0, 3.0, 0.0, 5.0]]])
        >>> values, indices = max_pool1d(x, 2, ceil_mode=True, return_indices=True)
        >>> values
        Tensor(shape=[1, 1, 3], dtype=Float32, value=
        [[[ 3.00000000e+00,  3.00000000e+00,  5.00000000e+00]]])
        >>> indices
        Tensor(shape=[1, 1, 3], dtype=Int64, value=
        [[[1, 2, 4]]])
    """
    x = check_pool_input(input, 1, "max_pool1d", allow_int=True, unbatched_empty=False)
    params, out = _pool_params(
        x, 1, kernel_size, stride, padding, dilation, ceil_mode, return_indices, "max_pool1d"
    )
    return _pool("shape.max_pool1d", x, params, out, ceil_mode, return_indices)


def max_pool2d(
    input: Tensor,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    padding: IntOrTuple = 0,
    dilation: IntOrTuple = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> MaxOut:
    """2-D max pooling, as ``torch.nn.functional.max_pool2d`` (MaxPool / MaxPoolWithArgmax).

    Per spatial dim as :func:`max_pool1d`. The index is the flat position ``h * W + w`` in each
    ``(N, C)`` plane of the first maximum in row-major window order (the last NaN if any).

    Args:
        input (Tensor[N, C, H, W] or Tensor[C, H, W]): float16, float32 or float64.
        kernel_size (int | tuple[int, int]): window size.
        stride (int | tuple[int, int], optional): Default: ``kernel_size``.
        padding (int | tuple[int, int]): at most half the kernel size. Default: 0.
        dilation (int | tuple[int, int]): Default: 1.
        ceil_mode (bool): ceil in the output size. Default: False.
        return_indices (bool): also return the int64 indices. Default: False.

    Returns:
        Tensor[N, C, H_out, W_out] (or [C, H_out, W_out]), and with ``return_indices`` a tuple
        whose second element is the int64 indices, ready for :func:`max_unpool2d`.

    Raises:
        TypeError: ``input`` not a float Tensor, sizes not ints, flags not bools.
        ValueError: ``input`` not 3-D/4-D, an empty non-batch dim, non-positive sizes,
            ``padding > kernel_size / 2``, an output size < 1, or a window entirely in the
            padding.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import max_pool2d
        >>> x = ms.Tensor([[[1.0, 9.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 2.0]]])
        >>> values, indices = max_pool2d(x, 2, stride=1, return_indices=True)
        >>> values
        Tensor(shape=[1, 2, 2], dtype=Float32, value=
        [[[ 9.00000000e+00,  9.00000000e+00],
          [ 8.00000000e+00,  8.00000000e+00]]])
        >>> indices
        Tensor(shape=[1, 2, 2], dtype=Int64, value=
        [[[1, 1],
          [7, 7]]])
    """
    x = check_pool_input(input, 2, "max_pool2d", allow_int=True, unbatched_empty=False)
    params, out = _pool_params(
        x, 2, kernel_size, stride, padding, dilation, ceil_mode, return_indices, "max_pool2d"
    )
    return _pool("shape.max_pool2d", x, params, out, ceil_mode, return_indices)


def max_pool3d(
    input: Tensor,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    padding: IntOrTuple = 0,
    dilation: IntOrTuple = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> MaxOut:
    """3-D max pooling, as ``torch.nn.functional.max_pool3d``.

    Indices are flat positions ``(d * H + h) * W + w`` in each ``(N, C)`` volume.

    Args:
        input (Tensor[N, C, D, H, W] or Tensor[C, D, H, W]): float16, float32 or float64.
        kernel_size (int | tuple[int, int, int]): window size.
        stride (int | tuple[int, int, int], optional): Default: ``kernel_size``.
        padding (int | tuple[int, int, int]): at most half the kernel size. Default: 0.
        dilation (int | tuple[int, int, int]): Default: 1.
        ceil_mode (bool): ceil in the output size. Default: False.
        return_indices (bool): also return the int64 indices. Default: False.

    Returns:
        Tensor of the output shape, and with ``return_indices`` a tuple whose second element is
        the int64 indices.

    Raises:
        TypeError: ``input`` not a float Tensor, sizes not ints, flags not bools.
        ValueError: ``input`` not 4-D/5-D, an empty non-batch dim, non-positive sizes,
            ``padding > kernel_size / 2``, an output size < 1, or a window entirely in the
            padding.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import max_pool3d
        >>> x = ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]], [[8.0, 6.0], [7.0, 8.0]]]])
        >>> values, indices = max_pool3d(x, 2, return_indices=True)
        >>> float(values.reshape(-1)[0]), int(indices.reshape(-1)[0])
        (8.0, 4)
    """
    x = check_pool_input(input, 3, "max_pool3d", allow_int=True, unbatched_empty=False)
    params, out = _pool_params(
        x, 3, kernel_size, stride, padding, dilation, ceil_mode, return_indices, "max_pool3d"
    )
    return _pool("shape.max_pool3d", x, params, out, ceil_mode, return_indices)


# ----------------------------------------------------------------------------- Cells


class _MaxPoolNd(nn.Cell):
    """The pooling Cells: ``construct`` is one call to the subclass's function ``_fn``."""

    _fn: Callable[..., MaxOut]

    def __init__(
        self,
        kernel_size: IntOrTuple,
        stride: Optional[IntOrTuple] = None,
        padding: IntOrTuple = 0,
        dilation: IntOrTuple = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def construct(self, input: Tensor) -> MaxOut:
        return self._fn(
            input,
            self.kernel_size,
            self.stride,
            self.padding,
            self.dilation,
            self.ceil_mode,
            self.return_indices,
        )


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling Cell. See :func:`max_pool1d`.

    Args (in ``torch.nn.MaxPool1d``'s order; ``return_indices`` before ``ceil_mode``):
        kernel_size, stride (default ``kernel_size``), padding, dilation, return_indices,
        ceil_mode.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`; indices likewise.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import MaxPool1d
        >>> MaxPool1d(2)(ms.Tensor([[1.0, 2.0, 4.0, 3.0]]))
        Tensor(shape=[1, 2], dtype=Float32, value=
        [[ 2.00000000e+00,  4.00000000e+00]])
    """

    _fn = staticmethod(max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling Cell. See :func:`max_pool2d`.

    Args (in ``torch.nn.MaxPool2d``'s order; ``return_indices`` before ``ceil_mode``):
        kernel_size, stride (default ``kernel_size``), padding, dilation, return_indices,
        ceil_mode.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import MaxPool2d
        >>> MaxPool2d(2)(ms.Tensor([[[1.0, 2.0], [4.0, 3.0]]]))
        Tensor(shape=[1, 1, 1], dtype=Float32, value=
        [[[ 4.00000000e+00]]])
    """

    _fn = staticmethod(max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling Cell. See :func:`max_pool3d`.

    Args (in ``torch.nn.MaxPool3d``'s order; ``return_indices`` before ``ceil_mode``):
        kernel_size, stride (default ``kernel_size``), padding, dilation, return_indices,
        ceil_mode.

    Shape:
        - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or
          :math:`(C, D_{out}, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import MaxPool3d
        >>> MaxPool3d(2)(ms.ops.ones((1, 2, 2, 2), ms.float32)).shape
        (1, 1, 1, 1)
    """

    _fn = staticmethod(max_pool3d)
