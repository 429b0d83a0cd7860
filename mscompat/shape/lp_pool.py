"""Power-average pooling, as ``torch.nn.functional.lp_pool1d/2d/3d`` and ``nn.LPPool1d-3d``.

MindSpore 2.10 has ``ops.lp_pool1d/2d`` but no 3-D one, and their gradients take no float64.
PyTorch's definition, followed step by step (float16 rounded after each step, as PyTorch's
float16 ops do):

.. math::
    y = \\left(\\operatorname{sign}(a) \\operatorname{relu}(|a|) \\cdot \\prod_i k_i
    \\right)^{1/p} = \\left(a \\prod_i k_i\\right)^{1/p},
    \\qquad a = \\operatorname{avg\\_pool}(x^p)

(no padding, ``ceil_mode`` as average pooling's). With ``p = 1`` this is sum pooling; as
``p`` grows it approaches max pooling. It runs on :func:`mscompat.shape.avg_pool2d`'s
dispatch (``shape.avg_pool*d``).
"""

from __future__ import annotations

from typing import Any, Optional

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import check_number
from mscompat.layers.normalization import _const
from mscompat.shape._pooling import ntuple
from mscompat.shape.avg_pool import avg_pool
from mscompat.shape.max_pool import IntOrTuple

__all__ = ["LPPool1d", "LPPool2d", "LPPool3d", "lp_pool1d", "lp_pool2d", "lp_pool3d"]


def _rounded(t: Tensor, dtype: Any) -> Tensor:
    """``t`` rounded to ``dtype`` (float16) and widened back: one PyTorch float16 op."""
    return t.astype(dtype).astype(t.dtype) if dtype == ms.float16 else t


def lp_pool(
    input: Tensor, n: int, norm_type: Any, kernel_size: Any, stride: Any, ceil_mode: Any, fn: str
) -> Tensor:
    """PyTorch's ``lp_pool{n}d`` on :func:`mscompat.shape.avg_pool.avg_pool`."""
    p = check_number(norm_type, "norm_type")
    if p == 0:
        raise ValueError(f"{fn}(): norm_type must be non-zero (the result is x ** (1 / p))")
    kernel = ntuple(kernel_size, n, "kernel_size", fn)
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): input must be a mindspore.Tensor, but got {type(input).__name__}")
    dtype = input.dtype
    work = ms.float32 if dtype == ms.float16 else dtype
    x = input.astype(work) if input.dtype in (ms.float16, ms.float32, ms.float64) else input
    powered = _rounded(ops.pow(x, _const(p, work)) if p != 2 else x * x, dtype)
    if powered.dtype != dtype:  # validation (and float16 averaging) in the input's dtype
        powered = powered.astype(dtype)
    a = avg_pool(powered, n, kernel, stride, 0, ceil_mode, True, None, fn).astype(work)
    size = 1
    for k in kernel:
        size *= k
    # PyTorch's sign(a) * relu(|a|) is a itself (NaN included; MindSpore's sign(NaN) is 0).
    scaled = _rounded(a * _const(float(size), work), dtype)
    return ops.pow(scaled, _const(1.0 / p, work)).astype(dtype)


def lp_pool1d(
    input: Tensor,
    norm_type: float,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    ceil_mode: bool = False,
) -> Tensor:
    """1-D power-average pooling, as :func:`torch.nn.functional.lp_pool1d`.

    .. math::
        y_j = \\Big(\\sum_{i \\in \\text{window } j} x_i^p\\Big)^{1/p}

    (as the module docstring: the window mean times ``kernel_size``; a negative sum, odd
    ``p``, gives NaN for fractional :math:`1/p`, as PyTorch).

    Args:
        input (Tensor[N, C, L] or Tensor[C, L]): float16, float32 or float64.
        norm_type (float): :math:`p`, non-zero.
        kernel_size (int): the window.
        stride (int, optional): default ``kernel_size``.
        ceil_mode (bool): ceil in the output length.

    Returns:
        Tensor[N, C, L_out] or Tensor[C, L_out]: input's dtype.

    Raises:
        TypeError: non-float input, non-number ``norm_type``, non-int sizes.
        ValueError: ``norm_type=0``, bad sizes (as :func:`mscompat.shape.avg_pool1d`).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import lp_pool1d
        >>> y = lp_pool1d(ms.Tensor([[[3.0, 4.0, 1.0, 1.0]]]), 2, 2)
        >>> y.asnumpy().astype(float).round(4).tolist()
        [[[5.0, 1.4142]]]
    """
    return lp_pool(input, 1, norm_type, kernel_size, stride, ceil_mode, "lp_pool1d")


def lp_pool2d(
    input: Tensor,
    norm_type: float,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    ceil_mode: bool = False,
) -> Tensor:
    """2-D power-average pooling, as :func:`torch.nn.functional.lp_pool2d`. See
    :func:`lp_pool1d`.

    Args:
        input (Tensor[N, C, H, W] or Tensor[C, H, W]): float16, float32 or float64.
        norm_type (float): :math:`p`, non-zero.
        kernel_size (int | tuple[int, int]): the window.
        stride (int | tuple[int, int], optional): default ``kernel_size``.
        ceil_mode (bool): ceil in the output length.

    Returns:
        Tensor[N, C, H_out, W_out] or Tensor[C, H_out, W_out]: input's dtype.

    Raises:
        TypeError: non-float input, non-number ``norm_type``, non-int sizes.
        ValueError: ``norm_type=0``, bad sizes.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import lp_pool2d
        >>> lp_pool2d(ms.Tensor([[[[1.0, 2.0], [2.0, 4.0]]]]), 2, 2).asnumpy().tolist()
        [[[[5.0]]]]
    """
    return lp_pool(input, 2, norm_type, kernel_size, stride, ceil_mode, "lp_pool2d")


def lp_pool3d(
    input: Tensor,
    norm_type: float,
    kernel_size: IntOrTuple,
    stride: Optional[IntOrTuple] = None,
    ceil_mode: bool = False,
) -> Tensor:
    """3-D power-average pooling, as :func:`torch.nn.functional.lp_pool3d`. See
    :func:`lp_pool1d`.

    Args:
        input (Tensor[N, C, D, H, W] or Tensor[C, D, H, W]): float16, float32 or float64.
        norm_type (float): :math:`p`, non-zero.
        kernel_size (int | tuple[int, int, int]): the window.
        stride (int | tuple[int, int, int], optional): default ``kernel_size``.
        ceil_mode (bool): ceil in the output length.

    Returns:
        Tensor[N, C, D_out, H_out, W_out] or Tensor[C, D_out, H_out, W_out]: input's dtype.

    Raises:
        TypeError: non-float input, non-number ``norm_type``, non-int sizes.
        ValueError: ``norm_type=0``, bad sizes.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import lp_pool3d
        >>> lp_pool3d(ms.Tensor([[[[[3.0, 4.0]]]]]), 2, (1, 1, 2)).asnumpy().tolist()
        [[[[[5.0]]]]]
    """
    return lp_pool(input, 3, norm_type, kernel_size, stride, ceil_mode, "lp_pool3d")


class _LPPoolNd(nn.Cell):
    _N = 2

    def __init__(
        self,
        norm_type: float,
        kernel_size: IntOrTuple,
        stride: Optional[IntOrTuple] = None,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def construct(self, input: Tensor) -> Tensor:
        return lp_pool(
            input,
            self._N,
            self.norm_type,
            self.kernel_size,
            self.stride,
            self.ceil_mode,
            f"lp_pool{self._N}d",
        )


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling Cell, as :class:`torch.nn.LPPool1d`. See :func:`lp_pool1d`.

    Shape:
        - input: ``(N, C, L)`` or ``(C, L)``; output ``(N, C, L_out)`` or ``(C, L_out)``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import LPPool1d
        >>> LPPool1d(1, 2)(ms.Tensor([[[3.0, 4.0]]])).asnumpy().tolist()
        [[[7.0]]]
    """

    _N = 1


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling Cell, as :class:`torch.nn.LPPool2d`. See :func:`lp_pool2d`.

    Shape:
        - input: ``(N, C, H, W)`` or ``(C, H, W)``; output ``(N, C, H_out, W_out)``.
    """

    _N = 2


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling Cell, as :class:`torch.nn.LPPool3d`. See :func:`lp_pool3d`.

    Shape:
        - input: ``(N, C, D, H, W)`` or ``(C, D, H, W)``; output
          ``(N, C, D_out, H_out, W_out)``.
    """

    _N = 3
