"""Max unpooling with PyTorch's semantics: the inverse of :func:`~mscompat.shape.max_pool2d`.

Mirrors ``torch.nn.functional.max_unpool{1,2,3}d`` and the ``nn.MaxUnpool*`` modules: zeros,
then each value written at its int64 index (a flat position in its ``(N, C)`` output plane; of
duplicate indices the later value is kept); the output size is
:math:`(L_{in} - 1) s - 2p + k` per dim, or ``output_size`` within ``stride`` of it. The
gradient gathers the output gradient at the indices. Out-of-range indices raise, as PyTorch's
"Found an invalid max index".

Backends: on CPU the ``aot`` kernel (``custom_ops/cpu/pool_kernel.cc``, PyTorch's unpooling
loop, gather backward); elsewhere the composite (``tensor_scatter_elements`` per plane).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence, Tuple

import mindspore as ms
from mindspore import Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_numel, check_tensor
from mscompat.custom_ops import pool as _pool_kernels
from mscompat.custom_ops.registry import call, device_target, register
from mscompat.shape._pooling import check_pool_input, ntuple, shape_carrier
from mscompat.shape.max_pool import IntOrTuple, _stride

__all__ = [
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
]

_UNPOOL_OPS = tuple(f"shape.max_unpool{d}d" for d in (1, 2, 3))


# ----------------------------------------------------------------------------- backends


def _max_unpool_composite(x: Tensor, indices: Tensor, out: Tuple[int, ...], message: str) -> Tensor:
    """Scatter each plane's values to their indices (a later duplicate overwrites)."""
    _check_indices_range(indices, _plane(out), message)
    n = len(out)
    shape = x.shape[: x.ndim - n] + out
    if x.size == 0:
        return ops.zeros(shape, x.dtype)
    b = 1
    for s in x.shape[: x.ndim - n]:
        b *= s
    planes = x.reshape(b, -1)
    idx = indices.reshape(b, -1)
    size = 1
    for s in out:
        size *= s
    result = ops.tensor_scatter_elements(ops.zeros((b, size), x.dtype), idx, planes, 1)
    return result.reshape(shape)


register(_UNPOOL_OPS, "composite", note="tensor_scatter_elements per plane")(_max_unpool_composite)


@_pool_kernels.LIBRARY.backend(
    _UNPOOL_OPS, "C++ loop of PyTorch's unpooling (later duplicate wins) + gather backward"
)
def _max_unpool_aot(x: Tensor, indices: Tensor, out: Tuple[int, ...], message: str) -> Tensor:
    """PyTorch's unpooling loop in C++ (``ScatterPlanes``); its bprop gathers the gradient.
    ``CountOutside`` checks the indices in one pass (a scalar condition for the raise)."""
    kernels = _pool_kernels.KERNELS[device_target()]
    plane = shape_carrier(out)  # only its shape is read: the output plane's
    if kernels["CountOutside"](indices, plane)[0] > 0:
        raise ValueError(message)
    return kernels["ScatterPlanes"](x, indices, plane)


# ----------------------------------------------------------------------------- front doors


def _unpool(op: str, x: Tensor, idx: Tensor, out: Tuple[int, ...], message: str) -> Tensor:
    if x.size == 0:
        return ops.zeros(x.shape[: x.ndim - len(out)] + out, x.dtype)
    return call(op, x, idx, out, message)


def _unpool_args(
    input: Any,
    indices: Any,
    n: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    output_size: Any,
    fn: str,
) -> Tuple[Tensor, Tensor, Tuple[int, ...], str]:
    """Validated input, indices, PyTorch's ``_unpool_output_size`` and the message of an
    invalid index (the backends check the indices)."""
    x = check_pool_input(input, n, fn)
    idx = check_tensor(indices, "indices")
    if idx.dtype != ms.int64:
        raise TypeError(f"{fn}(): indices must be an int64 Tensor, but got dtype {idx.dtype}")
    if idx.shape != x.shape:
        raise ValueError(
            f"{fn}(): indices must have the shape of input, but got input.shape={x.shape} "
            f"and indices.shape={idx.shape}"
        )
    # PyTorch's max_unpool takes n values or one int, not a 1-tuple, for each (Python code)
    kernel = ntuple(kernel_size, n, "kernel_size", fn, allow_one=False)
    strides = _stride(stride, kernel, n, fn, allow_one=False)
    pads = ntuple(padding, n, "padding", fn, allow_one=False)
    for name, values in (("kernel_size", kernel), ("stride", strides)):
        if min(values) <= 0:
            raise ValueError(f"{fn}(): {name} must be greater than zero, but got {name}={values}")
    if min(pads) < 0:
        raise ValueError(f"{fn}(): padding must be non-negative, but got padding={pads}")
    spatial = x.shape[x.ndim - n :]
    default = tuple((spatial[d] - 1) * strides[d] + kernel[d] - 2 * pads[d] for d in range(n))
    if output_size is None:
        out = default
    else:
        if not isinstance(output_size, (tuple, list)) or not all(
            isinstance(v, int) and not isinstance(v, bool) for v in output_size
        ):
            raise TypeError(f"{fn}(): output_size must be a sequence of ints, got {output_size!r}")
        sizes: Sequence[int] = output_size
        if len(sizes) == n + 2:
            sizes = sizes[2:]
        if len(sizes) != n:
            raise ValueError(
                f"{fn}(): output_size should be a sequence containing {n} or {n + 2} elements, "
                f"but it has a length of '{len(output_size)}'"
            )
        for d in range(n):
            lo, hi = default[d] - strides[d], default[d] + strides[d]
            if not lo < sizes[d] < hi:
                raise ValueError(
                    f'{fn}(): invalid output_size "{tuple(output_size)}" '
                    f"(dim {d} must be between {lo} and {hi}, from kernel_size={kernel_size!r}, "
                    f"stride={stride!r}, padding={padding!r})"
                )
        out = tuple(int(v) for v in sizes)
    if min(out) < 1:
        given = "output_size" if output_size is not None else "kernel_size, stride, padding"
        raise ValueError(
            f"{fn}(): the output size {out} must be positive, but got it from {given} "
            f"(kernel_size={kernel_size!r}, stride={stride!r}, padding={padding!r}, "
            f"output_size={output_size!r})"
        )
    check_numel(
        x.shape[: x.ndim - n] + out,
        fn,
        kernel_size=kernel_size,
        stride=stride,
        padding=padding,
        output_size=output_size,
    )
    return x, idx, out, _index_message(fn, out, (kernel_size, stride, padding, output_size))


def _plane(out: Tuple[int, ...]) -> int:
    plane = 1
    for size in out:
        plane *= size
    return plane


@constexpr
def _index_message(fn: str, out: Tuple[int, ...], args: Tuple[Any, ...]) -> str:
    """The message of an invalid index (a constant under ``ms.jit``: the message of a raise
    under a Tensor condition must be one); the backends check the indices."""
    plane = _plane(out)
    kernel_size, stride, padding, output_size = args
    return (
        f"{fn}(): Found an invalid max index in indices: each must be in [0, {plane}), the "
        f"flat positions of an output plane of size {list(out)} (kernel_size={kernel_size!r}, "
        f"stride={stride!r}, padding={padding!r}, output_size={output_size!r}); were the "
        "indices made by a max pooling with other arguments (padding, ceil_mode, input size)?"
    )


def _check_indices_range(idx: Tensor, plane: int, message: str) -> Tensor:
    """Return ``idx``; raise ``ValueError(message)`` if an index lies outside ``[0, plane)``.

    PyTorch raises "Found an invalid max index"; indices out of range almost always come from
    a max pooling with other arguments (padding, ceil_mode, another input size). The check
    reads the values, in graph mode too (a raise under a Tensor condition, whose message must
    be a constant there)."""
    if idx.size > 0 and ops.logical_or(idx < 0, idx >= plane).any():
        raise ValueError(message)
    return idx


def max_unpool1d(
    input: Tensor,
    indices: Tensor,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    padding: IntOrTuple = 0,
    output_size: Optional[Sequence[int]] = None,
) -> Tensor:
    """1-D max unpooling, as ``torch.nn.functional.max_unpool1d``: the inverse of
    :func:`max_pool1d` with ``return_indices=True``.

    Each value goes to its index in the output row (zeros elsewhere); the default output
    length is :math:`(L_{in} - 1)s - 2p + k`. The gradient of an input element is the output
    gradient at its index.

    Args:
        input (Tensor[N, C, L_in] or Tensor[C, L_in]): float16, float32 or float64.
        indices (Tensor, int64, shape of ``input``): positions from :func:`max_pool1d`.
        kernel_size (int | tuple[int]): the pooling's kernel size.
        stride (int | tuple[int], optional): Default: ``kernel_size``.
        padding (int | tuple[int]): the pooling's padding. Default: 0.
        output_size (sequence[int], optional): ``(L_out,)`` or ``(N, C, L_out)``, strictly
            within ``stride`` of the default (to undo ``ceil_mode`` or an odd input length).

    Returns:
        Tensor[N, C, L_out] or Tensor[C, L_out]: ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a float Tensor, ``indices`` not an int64 Tensor.
        ValueError: wrong ndim, ``indices`` of another shape, an invalid ``output_size``, a
            non-positive ``kernel_size``/``stride``, an output over 2**31 elements, or an index
            outside the output plane (PyTorch: "Found an invalid max index"; in graph mode too).

    .. note::
        Of duplicate indices the later value is kept.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import max_unpool1d
        >>> x = ms.Tensor([[[3.0, 5.0]]])
        >>> idx = ms.Tensor([[[1, 2]]], ms.int64)
        >>> max_unpool1d(x, idx, 2)
        Tensor(shape=[1, 1, 4], dtype=Float32, value=
        [[[ 0.00000000e+00,  3.00000000e+00,  5.00000000e+00,  0.00000000e+00]]])
    """
    x, idx, out, message = _unpool_args(
        input, indices, 1, kernel_size, stride, padding, output_size, "max_unpool1d"
    )
    return _unpool("shape.max_unpool1d", x, idx, out, message)


def max_unpool2d(
    input: Tensor,
    indices: Tensor,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    padding: IntOrTuple = 0,
    output_size: Optional[Sequence[int]] = None,
) -> Tensor:
    """2-D max unpooling, as ``torch.nn.functional.max_unpool2d``: the inverse of
    :func:`max_pool2d` with ``return_indices=True`` (flat indices ``h * W_out + w``).

    Args:
        input (Tensor[N, C, H_in, W_in] or Tensor[C, H_in, W_in]): float16, float32, float64.
        indices (Tensor, int64, shape of ``input``): positions from :func:`max_pool2d`.
        kernel_size (int | tuple[int, int]): the pooling's kernel size.
        stride (int | tuple[int, int], optional): Default: ``kernel_size``.
        padding (int | tuple[int, int]): the pooling's padding. Default: 0.
        output_size (sequence[int], optional): ``(H_out, W_out)`` or ``(N, C, H_out, W_out)``;
            default :math:`(H_{in} - 1)s - 2p + k` per dim.

    Returns:
        Tensor[N, C, H_out, W_out] or Tensor[C, H_out, W_out]: ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a float Tensor, ``indices`` not an int64 Tensor.
        ValueError: wrong ndim, ``indices`` of another shape, an invalid ``output_size``, an
            index outside the output plane (as PyTorch), sizes as :func:`max_unpool1d`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import max_pool2d, max_unpool2d
        >>> x = ms.Tensor([[[1.0, 2.0], [4.0, 3.0]]])
        >>> values, indices = max_pool2d(x, 2, return_indices=True)
        >>> max_unpool2d(values, indices, 2)
        Tensor(shape=[1, 2, 2], dtype=Float32, value=
        [[[ 0.00000000e+00,  0.00000000e+00],
          [ 4.00000000e+00,  0.00000000e+00]]])
    """
    x, idx, out, message = _unpool_args(
        input, indices, 2, kernel_size, stride, padding, output_size, "max_unpool2d"
    )
    return _unpool("shape.max_unpool2d", x, idx, out, message)


def max_unpool3d(
    input: Tensor,
    indices: Tensor,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    padding: IntOrTuple = 0,
    output_size: Optional[Sequence[int]] = None,
) -> Tensor:
    """3-D max unpooling, as ``torch.nn.functional.max_unpool3d``: the inverse of
    :func:`max_pool3d` with ``return_indices=True``.

    Args:
        input (Tensor[N, C, D_in, H_in, W_in] or Tensor[C, D_in, H_in, W_in]): float16,
            float32 or float64.
        indices (Tensor, int64, shape of ``input``): positions from :func:`max_pool3d`.
        kernel_size (int | tuple[int, int, int]): the pooling's kernel size.
        stride (int | tuple[int, int, int], optional): Default: ``kernel_size``.
        padding (int | tuple[int, int, int]): the pooling's padding. Default: 0.
        output_size (sequence[int], optional): ``(D_out, H_out, W_out)`` or with ``N, C``.

    Returns:
        Tensor[N, C, D_out, H_out, W_out] or Tensor[C, D_out, H_out, W_out].

    Raises:
        TypeError: ``input`` not a float Tensor, ``indices`` not an int64 Tensor.
        ValueError: wrong ndim, ``indices`` of another shape, an invalid ``output_size``, an
            index outside the output plane (as PyTorch), sizes as :func:`max_unpool1d`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import max_unpool3d
        >>> x = ms.Tensor([[[[7.0]]]])
        >>> idx = ms.Tensor([[[[5]]]], ms.int64)
        >>> max_unpool3d(x, idx, 2).reshape(-1)
        Tensor(shape=[8], dtype=Float32, value= [ 0.00000000e+00,  0.00000000e+00,  \
0.00000000e+00,  0.00000000e+00,  0.00000000e+00,  7.00000000e+00,  0.00000000e+00,  \
0.00000000e+00])
    """
    x, idx, out, message = _unpool_args(
        input, indices, 3, kernel_size, stride, padding, output_size, "max_unpool3d"
    )
    return _unpool("shape.max_unpool3d", x, idx, out, message)


# ----------------------------------------------------------------------------- Cells


class _MaxUnpoolNd(nn.Cell):
    """The unpooling Cells: ``construct`` is one call to the subclass's function ``_fn``."""

    _fn: Callable[..., Tensor]

    def __init__(
        self,
        kernel_size: IntOrTuple,
        stride: Optional[IntOrTuple] = None,
        padding: IntOrTuple = 0,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if (stride is not None) else kernel_size
        self.padding = padding

    def construct(
        self, input: Tensor, indices: Tensor, output_size: Optional[Sequence[int]] = None
    ) -> Tensor:
        return self._fn(input, indices, self.kernel_size, self.stride, self.padding, output_size)


class MaxUnpool1d(_MaxUnpoolNd):
    """1-D max unpooling Cell. See :func:`max_unpool1d`.

    Args:
        kernel_size, stride (default ``kernel_size``), padding: those of the pooling.

    Shape:
        - Input, indices: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`, with
          :math:`L_{out} = (L_{in} - 1) s - 2p + k` or ``output_size``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import MaxPool1d, MaxUnpool1d
        >>> x = ms.Tensor([[[1.0, 2.0, 4.0, 3.0]]])
        >>> values, indices = MaxPool1d(2, return_indices=True)(x)
        >>> MaxUnpool1d(2)(values, indices)
        Tensor(shape=[1, 1, 4], dtype=Float32, value=
        [[[ 0.00000000e+00,  2.00000000e+00,  4.00000000e+00,  0.00000000e+00]]])
    """

    _fn = staticmethod(max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """2-D max unpooling Cell. See :func:`max_unpool2d`.

    Args:
        kernel_size, stride (default ``kernel_size``), padding: those of the pooling.

    Shape:
        - Input, indices: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import MaxUnpool2d
        >>> x = ms.Tensor([[[4.0]]])
        >>> MaxUnpool2d(2)(x, ms.Tensor([[[2]]], ms.int64))
        Tensor(shape=[1, 2, 2], dtype=Float32, value=
        [[[ 0.00000000e+00,  0.00000000e+00],
          [ 4.00000000e+00,  0.00000000e+00]]])
    """

    _fn = staticmethod(max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """3-D max unpooling Cell. See :func:`max_unpool3d`.

    Args:
        kernel_size, stride (default ``kernel_size``), padding: those of the pooling.

    Shape:
        - Input, indices: :math:`(N, C, D_{in}, H_{in}, W_{in})` or
          :math:`(C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or
          :math:`(C, D_{out}, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import MaxUnpool3d
        >>> x = ms.ops.ones((1, 1, 1, 1), ms.float32)
        >>> idx = ms.Tensor([[[[3]]]], ms.int64)
        >>> MaxUnpool3d(2)(x, idx).shape
        (1, 2, 2, 2)
    """

    _fn = staticmethod(max_unpool3d)
