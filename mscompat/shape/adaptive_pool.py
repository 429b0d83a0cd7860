"""Adaptive average and max pooling with PyTorch's bins, for any input and output size.

Mirrors ``torch.nn.functional.adaptive_{avg,max}_pool{1,2,3}d`` and the ``nn.Adaptive*Pool*``
modules. MindSpore 2.10 on CPU has no kernel for the ``mint`` adaptive pools and
``ops.adaptive_avg_pool1d`` / ``ops.adaptive_max_pool1d`` reject sizes that do not divide (11 to
5); these work for every size, output larger than the input included.

Bin ``i`` of a dim of input length :math:`L` and output length :math:`O` covers

.. math::
    [\\lfloor iL/O \\rfloor,\\ \\lceil (i+1)L/O \\rceil)

and indices are flat positions in each ``(N, C)`` plane of the input, int64, as PyTorch's.
An output size of 1 everywhere is the migration guide's ReduceMean/ReduceMax with
``keep_dims=True`` (taken automatically).

Backends: on CPU both run ``aot`` kernels (``custom_ops/cpu/pool_kernel.cc``: PyTorch's loop
over each bin in C++, its numbers bit for bit), elsewhere the composite: averaging MatMul /
ReduceMean for average pooling (faster than MindSpore's AdaptiveAvgPool2D/3D kernels in graph
mode, which stay selectable as ``native``), separable gathers for max pooling.
"""

from __future__ import annotations

from typing import Any, Callable, Tuple

from mindspore import Tensor, nn

from mscompat.custom_ops.registry import call
from mscompat.shape._adaptive_backends import MaxOut, OutputSize  # also registers them
from mscompat.shape._pooling import adaptive_output_size, check_pool_input, empty_like_output

__all__ = [
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
]


# ----------------------------------------------------------------------------- front doors


def _avg(op: str, x: Tensor, out: Tuple[int, ...]) -> Tensor:
    if x.size == 0 or 0 in out:  # answered here: no backend sees an empty tensor
        return empty_like_output(x, len(out), out)[0]
    return call(op, x, out)


def _max(op: str, x: Tensor, out: Tuple[int, ...], return_indices: bool) -> MaxOut:
    if x.size == 0 or 0 in out:
        values, indices = empty_like_output(x, len(out), out)
        if return_indices:
            return values, indices
        return values
    return call(op, x, out, return_indices)


def _check_return_indices(return_indices: Any, fn: str) -> None:
    if not isinstance(return_indices, bool):
        raise TypeError(f"{fn}(): return_indices must be a bool, but got {return_indices!r}")


def adaptive_avg_pool1d(input: Tensor, output_size: OutputSize) -> Tensor:
    """1-D adaptive average pooling, as ``torch.nn.functional.adaptive_avg_pool1d``.

    Each output element is the mean of its bin
    :math:`[\\lfloor iL/O \\rfloor, \\lceil (i+1)L/O \\rceil)`; any :math:`L` and :math:`O`
    (non-divisible, or :math:`O > L`).

    Args:
        input (Tensor[N, C, L] or Tensor[C, L]): float16, float32 or float64.
        output_size (int | tuple[int | None]): :math:`O`; ``None`` keeps :math:`L`.

    Returns:
        Tensor[N, C, O] or Tensor[C, O]: ``input``'s dtype (float16 accumulated in float32).

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` not an int/tuple.
        ValueError: ``input`` not 2-D/3-D, an empty non-batch dim, a negative output size.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_avg_pool1d
        >>> x = ms.Tensor([[[1.0, 2.0, 3.0, 4.0, 5.0]]])
        >>> adaptive_avg_pool1d(x, 3)
        Tensor(shape=[1, 1, 3], dtype=Float32, value=
        [[[ 1.50000000e+00,  3.00000000e+00,  4.50000000e+00]]])
    """
    x = check_pool_input(input, 1, "adaptive_avg_pool1d")
    out = adaptive_output_size(output_size, x.shape[-1:], "adaptive_avg_pool1d", x.shape[:-1])
    return _avg("shape.adaptive_avg_pool1d", x, out)


def adaptive_avg_pool2d(input: Tensor, output_size: OutputSize) -> Tensor:
    """2-D adaptive average pooling, as ``torch.nn.functional.adaptive_avg_pool2d``.

    Bins along each spatial dim as in :func:`adaptive_avg_pool1d`; the output is the mean over
    the product of the two bins. An output size of ``1`` is ``ReduceMean(keep_dims=True)``.

    Args:
        input (Tensor[N, C, H, W] or Tensor[C, H, W]): float16, float32 or float64.
        output_size (int | tuple[int | None, int | None]): :math:`(H_{out}, W_{out})`;
            ``None`` keeps that input size.

    Returns:
        Tensor[N, C, H_out, W_out] or Tensor[C, H_out, W_out]: ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` of another type.
        ValueError: ``input`` not 3-D/4-D, an empty non-batch dim, ``output_size`` of the wrong
            length or negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_avg_pool2d
        >>> x = ms.Tensor([[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]])
        >>> adaptive_avg_pool2d(x, (2, None))
        Tensor(shape=[1, 2, 3], dtype=Float32, value=
        [[[ 2.50000000e+00,  3.50000000e+00,  4.50000000e+00],
          [ 5.50000000e+00,  6.50000000e+00,  7.50000000e+00]]])
    """
    x = check_pool_input(input, 2, "adaptive_avg_pool2d")
    out = adaptive_output_size(output_size, x.shape[-2:], "adaptive_avg_pool2d", x.shape[:-2])
    return _avg("shape.adaptive_avg_pool2d", x, out)


def adaptive_avg_pool3d(input: Tensor, output_size: OutputSize) -> Tensor:
    """3-D adaptive average pooling, as ``torch.nn.functional.adaptive_avg_pool3d``.

    Args:
        input (Tensor[N, C, D, H, W] or Tensor[C, D, H, W]): float16, float32 or float64.
        output_size (int | tuple[int | None, int | None, int | None]): output
            :math:`(D_{out}, H_{out}, W_{out})`; ``None`` keeps that input size.

    Returns:
        Tensor[N, C, D_out, H_out, W_out] or Tensor[C, D_out, H_out, W_out]: ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` of another type.
        ValueError: ``input`` not 4-D/5-D, an empty non-batch dim, ``output_size`` of the wrong
            length or negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_avg_pool3d
        >>> x = ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]], [[5.0, 6.0], [7.0, 8.0]]]])
        >>> adaptive_avg_pool3d(x, 1)
        Tensor(shape=[1, 1, 1, 1], dtype=Float32, value=
        [[[[ 4.50000000e+00]]]])
    """
    x = check_pool_input(input, 3, "adaptive_avg_pool3d")
    out = adaptive_output_size(output_size, x.shape[-3:], "adaptive_avg_pool3d", x.shape[:-3])
    return _avg("shape.adaptive_avg_pool3d", x, out)


def adaptive_max_pool1d(
    input: Tensor, output_size: OutputSize, return_indices: bool = False
) -> MaxOut:
    """1-D adaptive max pooling, as ``torch.nn.functional.adaptive_max_pool1d``.

    Each output element is the maximum of its bin (bins as :func:`adaptive_avg_pool1d`). Like
    PyTorch, the index is the first maximum in the bin, and a NaN wins (the last NaN of the
    bin); the gradient flows to that element only.

    Args:
        input (Tensor[N, C, L] or Tensor[C, L]): float16, float32 or float64.
        output_size (int | tuple[int | None]): :math:`O`; ``None`` keeps :math:`L`.
        return_indices (bool): also return the int64 positions of the maxima. Default: False.

    Returns:
        Tensor[N, C, O] (or [C, O]), and with ``return_indices`` a tuple whose second element
        is the int64 indices into the last dim of ``input``.

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` of another type.
        ValueError: ``input`` not 2-D/3-D, an empty non-batch dim, a negative output size.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_max_pool1d
        >>> x = ms.Tensor([[[1.0, 3.0, 3.0, 0.0, 5.0]]])
        >>> values, indices = adaptive_max_pool1d(x, 3, return_indices=True)
        >>> values
        Tensor(shape=[1, 1, 3], dtype=Float32, value=
        [[[ 3.00000000e+00,  3.00000000e+00,  5.00000000e+00]]])
        >>> indices
        Tensor(shape=[1, 1, 3], dtype=Int64, value=
        [[[1, 1, 4]]])
    """
    x = check_pool_input(input, 1, "adaptive_max_pool1d")
    out = adaptive_output_size(output_size, x.shape[-1:], "adaptive_max_pool1d", x.shape[:-1])
    _check_return_indices(return_indices, "adaptive_max_pool1d")
    return _max("shape.adaptive_max_pool1d", x, out, return_indices)


def adaptive_max_pool2d(
    input: Tensor, output_size: OutputSize, return_indices: bool = False
) -> MaxOut:
    """2-D adaptive max pooling, as ``torch.nn.functional.adaptive_max_pool2d``.

    The index is the flat position ``h * W + w`` in each ``(N, C)`` plane of the first maximum
    of the bin in row-major order (the last NaN if the bin holds NaN), as PyTorch's.

    Args:
        input (Tensor[N, C, H, W] or Tensor[C, H, W]): float16, float32 or float64.
        output_size (int | tuple[int | None, int | None]): :math:`(H_{out}, W_{out})`;
            ``None`` keeps that input size.
        return_indices (bool): also return the int64 indices. Default: False.

    Returns:
        Tensor[N, C, H_out, W_out] (or [C, H_out, W_out]), and with ``return_indices`` a tuple
        whose second element is the int64 indices of the same shape.

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` of another type.
        ValueError: ``input`` not 3-D/4-D, an empty non-batch dim, ``output_size`` of the wrong
            length or negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_max_pool2d
        >>> x = ms.Tensor([[[1.0, 9.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 2.0]]])
        >>> values, indices = adaptive_max_pool2d(x, 2, return_indices=True)
        >>> values
        Tensor(shape=[1, 2, 2], dtype=Float32, value=
        [[[ 9.00000000e+00,  9.00000000e+00],
          [ 8.00000000e+00,  8.00000000e+00]]])
        >>> indices
        Tensor(shape=[1, 2, 2], dtype=Int64, value=
        [[[1, 1],
          [7, 7]]])
    """
    x = check_pool_input(input, 2, "adaptive_max_pool2d")
    out = adaptive_output_size(output_size, x.shape[-2:], "adaptive_max_pool2d", x.shape[:-2])
    _check_return_indices(return_indices, "adaptive_max_pool2d")
    return _max("shape.adaptive_max_pool2d", x, out, return_indices)


def adaptive_max_pool3d(
    input: Tensor, output_size: OutputSize, return_indices: bool = False
) -> MaxOut:
    """3-D adaptive max pooling, as ``torch.nn.functional.adaptive_max_pool3d``.

    Indices are flat positions ``(d * H + h) * W + w`` in each ``(N, C)`` volume.

    Args:
        input (Tensor[N, C, D, H, W] or Tensor[C, D, H, W]): float16, float32 or float64.
        output_size (int | tuple[int | None, int | None, int | None]): output
            :math:`(D_{out}, H_{out}, W_{out})`; ``None`` keeps that input size.
        return_indices (bool): also return the int64 indices. Default: False.

    Returns:
        Tensor of the output shape, and with ``return_indices`` a tuple whose second element
        is the int64 indices.

    Raises:
        TypeError: ``input`` not a float Tensor, ``output_size`` of another type.
        ValueError: ``input`` not 4-D/5-D, an empty non-batch dim, ``output_size`` of the wrong
            length or negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import adaptive_max_pool3d
        >>> x = ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]], [[8.0, 6.0], [7.0, 8.0]]]])
        >>> values, indices = adaptive_max_pool3d(x, 1, return_indices=True)
        >>> float(values.reshape(-1)[0]), int(indices.reshape(-1)[0])
        (8.0, 4)
    """
    x = check_pool_input(input, 3, "adaptive_max_pool3d")
    out = adaptive_output_size(output_size, x.shape[-3:], "adaptive_max_pool3d", x.shape[:-3])
    _check_return_indices(return_indices, "adaptive_max_pool3d")
    return _max("shape.adaptive_max_pool3d", x, out, return_indices)


# ----------------------------------------------------------------------------- Cells


class _AdaptiveAvgPoolNd(nn.Cell):
    """The average pooling Cells: ``construct`` is one call to the subclass's ``_fn``."""

    _fn: Callable[[Tensor, OutputSize], Tensor]

    def __init__(self, output_size: OutputSize) -> None:
        super().__init__()
        self.output_size = output_size

    def construct(self, input: Tensor) -> Tensor:
        return self._fn(input, self.output_size)


class _AdaptiveMaxPoolNd(nn.Cell):
    """The max pooling Cells: ``construct`` is one call to the subclass's ``_fn``."""

    _fn: Callable[[Tensor, OutputSize, bool], MaxOut]

    def __init__(self, output_size: OutputSize, return_indices: bool = False) -> None:
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def construct(self, input: Tensor) -> MaxOut:
        return self._fn(input, self.output_size, self.return_indices)


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """1-D adaptive average pooling Cell. See :func:`adaptive_avg_pool1d`.

    Args:
        output_size (int | tuple[int | None]): target output length.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveAvgPool1d
        >>> AdaptiveAvgPool1d(2)(ms.Tensor([[1.0, 2.0, 4.0]]))
        Tensor(shape=[1, 2], dtype=Float32, value=
        [[ 1.50000000e+00,  3.00000000e+00]])
    """

    _fn = staticmethod(adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """2-D adaptive average pooling Cell. See :func:`adaptive_avg_pool2d`.

    Args:
        output_size (int | tuple[int | None, int | None]): target :math:`(H_{out}, W_{out})`.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveAvgPool2d
        >>> AdaptiveAvgPool2d(1)(ms.Tensor([[[1.0, 2.0], [3.0, 6.0]]]))
        Tensor(shape=[1, 1, 1], dtype=Float32, value=
        [[[ 3.00000000e+00]]])
    """

    _fn = staticmethod(adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """3-D adaptive average pooling Cell. See :func:`adaptive_avg_pool3d`.

    Args:
        output_size (int | tuple[int | None, int | None, int | None]): target output size.

    Shape:
        - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or
          :math:`(C, D_{out}, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveAvgPool3d
        >>> AdaptiveAvgPool3d((1, 1, 1))(ms.ops.ones((2, 1, 3, 4, 5), ms.float32)).shape
        (2, 1, 1, 1, 1)
    """

    _fn = staticmethod(adaptive_avg_pool3d)


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """1-D adaptive max pooling Cell. See :func:`adaptive_max_pool1d`.

    Args:
        output_size (int | tuple[int | None]): target output length.
        return_indices (bool): also return the int64 indices. Default: False.

    Shape:
        - Input: :math:`(N, C, L_{in})` or :math:`(C, L_{in})`.
        - Output: :math:`(N, C, L_{out})` or :math:`(C, L_{out})`; indices likewise.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveMaxPool1d
        >>> AdaptiveMaxPool1d(2)(ms.Tensor([[1.0, 2.0, 4.0]]))
        Tensor(shape=[1, 2], dtype=Float32, value=
        [[ 2.00000000e+00,  4.00000000e+00]])
    """

    _fn = staticmethod(adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """2-D adaptive max pooling Cell. See :func:`adaptive_max_pool2d`.

    Args:
        output_size (int | tuple[int | None, int | None]): target :math:`(H_{out}, W_{out})`.
        return_indices (bool): also return the int64 indices. Default: False.

    Shape:
        - Input: :math:`(N, C, H_{in}, W_{in})` or :math:`(C, H_{in}, W_{in})`.
        - Output: :math:`(N, C, H_{out}, W_{out})` or :math:`(C, H_{out}, W_{out})`; indices
          likewise.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveMaxPool2d
        >>> AdaptiveMaxPool2d(1)(ms.Tensor([[[1.0, 2.0], [3.0, 6.0]]]))
        Tensor(shape=[1, 1, 1], dtype=Float32, value=
        [[[ 6.00000000e+00]]])
    """

    _fn = staticmethod(adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """3-D adaptive max pooling Cell. See :func:`adaptive_max_pool3d`.

    Args:
        output_size (int | tuple[int | None, int | None, int | None]): target output size.
        return_indices (bool): also return the int64 indices. Default: False.

    Shape:
        - Input: :math:`(N, C, D_{in}, H_{in}, W_{in})` or :math:`(C, D_{in}, H_{in}, W_{in})`.
        - Output: :math:`(N, C, D_{out}, H_{out}, W_{out})` or
          :math:`(C, D_{out}, H_{out}, W_{out})`; indices likewise.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import AdaptiveMaxPool3d
        >>> AdaptiveMaxPool3d((1, 2, 2))(ms.ops.ones((1, 3, 4, 5), ms.float32)).shape
        (1, 1, 2, 2)
    """

    _fn = staticmethod(adaptive_max_pool3d)
