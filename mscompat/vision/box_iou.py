"""Pairwise IoU of two sets of boxes: ``box_iou`` and its generalized, distance and complete
variants (``torchvision.ops.boxes``).

Op for op as torchvision 0.28, so the numbers and the dtypes agree: float16 boxes give float32
IoU (torchvision's ``_upcast``; the corner differences are rounded in float16 first), integer
boxes give float32 (PyTorch's true division), and degenerate boxes give the same NaN
(``0 / 0``). Leading batch dims broadcast: ``boxes1 (..., N, 4)`` and ``boxes2 (..., M, 4)``
give ``(..., N, M)``.
"""

from __future__ import annotations

import math
from typing import Tuple

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_finite_number
from mscompat.vision._box_utils import (
    as_float,
    check_boxes,
    check_fmt,
    clamp_min0,
    has_zero,
    leading_shape,
    upcast,
)

__all__ = ["box_iou", "complete_box_iou", "distance_box_iou", "generalized_box_iou"]


def _check_pair(boxes1: Tensor, boxes2: Tensor) -> Tuple[Tensor, Tensor, Tuple[int, ...]]:
    """Both ``(..., N, 4)`` with broadcastable batch dims and one dtype; the output shape."""
    boxes1 = check_boxes(boxes1, "boxes1", min_ndim=2)
    boxes2 = check_boxes(boxes2, "boxes2", min_ndim=2)
    if boxes1.dtype != boxes2.dtype:
        raise TypeError(
            "boxes2 must have the same dtype as boxes1, but got "
            f"boxes1.dtype={boxes1.dtype} and boxes2.dtype={boxes2.dtype}"
        )
    shape = leading_shape(boxes1, boxes2) + (boxes1.shape[-2], boxes2.shape[-2])
    return boxes1, boxes2, shape


def _empty(shape: Tuple[int, ...], boxes: Tensor) -> bool:
    return boxes.size == 0 or has_zero(shape)


def _iou_dtype(boxes: Tensor) -> ms.dtype:
    return ms.float64 if boxes.dtype == ms.float64 else ms.float32


def _area(b: Tensor, fmt: str) -> Tensor:
    b = upcast(b)
    if fmt == "xyxy":
        return (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    return b[..., 2] * b[..., 3]


def _corners(b: Tensor, fmt: str) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """``x1, y1, x2, y2`` of each box, computed in the boxes' dtype as torchvision does."""
    x, y, u, v = b[..., 0], b[..., 1], b[..., 2], b[..., 3]
    if fmt == "xyxy":
        return x, y, u, v
    if fmt == "xywh":
        return x, y, x + u, y + v
    half_w, half_h = as_float(u) / 2, as_float(v) / 2
    x, y = x.astype(half_w.dtype), y.astype(half_w.dtype)
    return x - half_w, y - half_h, x + half_w, y + half_h


def _rows(a: Tensor) -> Tensor:
    return ops.expand_dims(a, -1)  # (..., N) -> (..., N, 1)


def _cols(b: Tensor) -> Tensor:
    return ops.expand_dims(b, -2)  # (..., M) -> (..., 1, M)


def _inter_union(boxes1: Tensor, boxes2: Tensor, fmt: str) -> Tuple[Tensor, Tensor]:
    """torchvision's ``_box_inter_union``, one coordinate at a time (the same elementwise ops
    as its ``(..., N, M, 2)`` tensors, without slicing them)."""
    area1, area2 = _area(boxes1, fmt), _area(boxes2, fmt)
    ax1, ay1, ax2, ay2 = _corners(boxes1, fmt)
    bx1, by1, bx2, by2 = _corners(boxes2, fmt)
    w = ops.minimum(_rows(ax2), _cols(bx2)) - ops.maximum(_rows(ax1), _cols(bx1))
    h = ops.minimum(_rows(ay2), _cols(by2)) - ops.maximum(_rows(ay1), _cols(by1))
    w, h = clamp_min0(upcast(w)), clamp_min0(upcast(h))
    inter = w * h
    areas = _rows(area1) + _cols(area2)
    if areas.dtype != inter.dtype:
        areas = areas.astype(inter.dtype)
    return inter, areas - inter


def _div(a: Tensor, b: Tensor) -> Tensor:
    """PyTorch's ``a / b``: integers divided as float32."""
    return as_float(a) / as_float(b)


def _enclosing_wh(boxes1: Tensor, boxes2: Tensor) -> Tuple[Tensor, Tensor]:
    """Width and height of the smallest box enclosing each pair, ``(..., N, M)`` each."""
    w = ops.maximum(_rows(boxes1[..., 2]), _cols(boxes2[..., 2])) - ops.minimum(
        _rows(boxes1[..., 0]), _cols(boxes2[..., 0])
    )
    h = ops.maximum(_rows(boxes1[..., 3]), _cols(boxes2[..., 3])) - ops.minimum(
        _rows(boxes1[..., 1]), _cols(boxes2[..., 1])
    )
    return clamp_min0(upcast(w)), clamp_min0(upcast(h))


def box_iou(boxes1: Tensor, boxes2: Tensor, fmt: str = "xyxy") -> Tensor:
    """Intersection over union (Jaccard index) of every pair of boxes.

    Mirrors ``torchvision.ops.box_iou`` (axis-aligned formats):

    .. math::
        \\text{IoU}(A, B) = \\frac{|A \\cap B|}{|A| + |B| - |A \\cap B|}

    Args:
        boxes1 (Tensor[..., N, 4]): first set of boxes, float or integer.
        boxes2 (Tensor[..., M, 4]): second set, same dtype; batch dims broadcast.
        fmt (str): ``'xyxy'`` | ``'xywh'`` | ``'cxcywh'``. Default: ``'xyxy'``.

    Returns:
        Tensor[..., N, M]: IoU; float64 for float64 boxes, else float32. A pair of
        zero-area boxes gives NaN (``0 / 0``), as torchvision.

    Raises:
        TypeError: not Tensors of a box dtype, or of different dtypes.
        ValueError: not of shape ``(..., N, 4)``, batch dims that do not broadcast, an
            unknown ``fmt`` or a rotated one (``'cxcywhr'``, ``'xywhr'``, ``'xyxyxyxy'``: not
            supported).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import box_iou
        >>> a = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> b = ms.Tensor([[1.0, 1.0, 3.0, 3.0], [0.0, 0.0, 2.0, 2.0]])
        >>> box_iou(a, b)
        Tensor(shape=[1, 2], dtype=Float32, value=
        [[ 1.42857149e-01,  1.00000000e+00]])
    """
    boxes1, boxes2, shape = _check_pair(boxes1, boxes2)
    fmt = check_fmt(fmt)
    if _empty(shape, boxes1) or boxes2.size == 0:
        return ops.zeros(shape, _iou_dtype(boxes1))
    inter, union = _inter_union(boxes1, boxes2, fmt)
    return _div(inter, union)


def generalized_box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    """Generalized IoU (`Rezatofighi et al., 2019 <https://arxiv.org/abs/1902.09630>`_) of
    every pair of boxes.

    Mirrors ``torchvision.ops.generalized_box_iou``. With :math:`C` the smallest box enclosing
    :math:`A` and :math:`B` and :math:`U = |A \\cup B|`:

    .. math::
        \\text{GIoU}(A, B) = \\text{IoU}(A, B) - \\frac{|C| - U}{|C|}

    Args:
        boxes1 (Tensor[..., N, 4]): first set, ``(x1, y1, x2, y2)``.
        boxes2 (Tensor[..., M, 4]): second set, same dtype.

    Returns:
        Tensor[..., N, M]: GIoU in :math:`[-1, 1]`; dtypes as :func:`box_iou`.

    Raises:
        TypeError, ValueError: as :func:`box_iou`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import generalized_box_iou
        >>> a = ms.Tensor([[0.0, 0.0, 1.0, 1.0]])
        >>> b = ms.Tensor([[2.0, 0.0, 3.0, 1.0]])
        >>> generalized_box_iou(a, b)
        Tensor(shape=[1, 1], dtype=Float32, value=
        [[-3.33333343e-01]])
    """
    boxes1, boxes2, shape = _check_pair(boxes1, boxes2)
    if _empty(shape, boxes1) or boxes2.size == 0:
        return ops.zeros(shape, _iou_dtype(boxes1))
    inter, union = _inter_union(boxes1, boxes2, "xyxy")
    iou = _div(inter, union)
    wi, hi = _enclosing_wh(boxes1, boxes2)
    areai = wi * hi
    return iou - _div(areai - union, areai)


def _diou_iou(boxes1: Tensor, boxes2: Tensor, eps: float) -> Tuple[Tensor, Tensor]:
    """torchvision's ``_box_diou_iou`` on upcast boxes."""
    inter, union = _inter_union(boxes1, boxes2, "xyxy")
    iou = _div(inter, union)
    wi, hi = _enclosing_wh(boxes1, boxes2)
    diag = as_float(wi * wi + hi * hi)
    diag = diag + ms.Tensor(eps, diag.dtype)
    x_p = as_float(boxes1[..., 0] + boxes1[..., 2]) / 2
    y_p = as_float(boxes1[..., 1] + boxes1[..., 3]) / 2
    x_g = as_float(boxes2[..., 0] + boxes2[..., 2]) / 2
    y_g = as_float(boxes2[..., 1] + boxes2[..., 3]) / 2
    dx = _rows(x_p) - _cols(x_g)
    dy = _rows(y_p) - _cols(y_g)
    return iou - (dx * dx + dy * dy) / diag, iou


def distance_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
    """Distance IoU (`Zheng et al., 2019 <https://arxiv.org/abs/1911.08287>`_) of every pair.

    Mirrors ``torchvision.ops.distance_box_iou``. With :math:`\\rho` the distance between the
    centres and :math:`c` the diagonal of the smallest enclosing box:

    .. math::
        \\text{DIoU}(A, B) = \\text{IoU}(A, B) - \\frac{\\rho^2}{c^2 + \\varepsilon}

    Args:
        boxes1 (Tensor[..., N, 4]): first set, ``(x1, y1, x2, y2)``.
        boxes2 (Tensor[..., M, 4]): second set, same dtype.
        eps (float): added to :math:`c^2`. Default: 1e-7.

    Returns:
        Tensor[..., N, M]: DIoU; float64 for float64 boxes, else float32.

    Raises:
        TypeError, ValueError: as :func:`box_iou`; ``eps`` not a finite number.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import distance_box_iou
        >>> a = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> b = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> distance_box_iou(a, b).asnumpy().astype(float).round(4).tolist()
        [[0.2564]]
    """
    boxes1, boxes2, shape = _check_pair(boxes1, boxes2)
    eps = check_finite_number(eps, "eps")
    if _empty(shape, boxes1) or boxes2.size == 0:
        return ops.zeros(shape, _iou_dtype(boxes1))
    return _diou_iou(upcast(boxes1), upcast(boxes2), eps)[0]


_FOUR_OVER_PI2 = 4 / (math.pi**2)


def complete_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
    """Complete IoU (`Zheng et al., 2019 <https://arxiv.org/abs/1911.08287>`_) of every pair.

    Mirrors ``torchvision.ops.complete_box_iou``: DIoU minus an aspect-ratio term,

    .. math::
        v = \\frac{4}{\\pi^2}\\Big(\\arctan\\frac{w_A}{h_A} - \\arctan\\frac{w_B}{h_B}\\Big)^2,
        \\qquad \\alpha = \\frac{v}{1 - \\text{IoU} + v + \\varepsilon}, \\qquad
        \\text{CIoU} = \\text{DIoU} - \\alpha v

    with :math:`\\alpha` a constant for the gradient (``torch.no_grad`` in torchvision).

    Args:
        boxes1 (Tensor[..., N, 4]): first set, ``(x1, y1, x2, y2)``.
        boxes2 (Tensor[..., M, 4]): second set, same dtype.
        eps (float): added to :math:`c^2` and to the denominator of :math:`\\alpha`.
            Default: 1e-7.

    Returns:
        Tensor[..., N, M]: CIoU; float64 for float64 boxes, else float32.

    Raises:
        TypeError, ValueError: as :func:`distance_box_iou`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import complete_box_iou
        >>> a = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> b = ms.Tensor([[1.0, 0.0, 3.0, 4.0]])
        >>> complete_box_iou(a, b).asnumpy().astype(float).round(4).tolist()
        [[0.1179]]
    """
    boxes1, boxes2, shape = _check_pair(boxes1, boxes2)
    eps = check_finite_number(eps, "eps")
    if _empty(shape, boxes1) or boxes2.size == 0:
        return ops.zeros(shape, _iou_dtype(boxes1))
    boxes1, boxes2 = upcast(boxes1), upcast(boxes2)
    diou, iou = _diou_iou(boxes1, boxes2, eps)
    w_pred = _rows(boxes1[..., 2] - boxes1[..., 0])
    h_pred = _rows(boxes1[..., 3] - boxes1[..., 1])
    w_gt = _cols(boxes2[..., 2] - boxes2[..., 0])
    h_gt = _cols(boxes2[..., 3] - boxes2[..., 1])
    d = ops.atan(_div(w_pred, h_pred)) - ops.atan(_div(w_gt, h_gt))
    v = ms.Tensor(_FOUR_OVER_PI2, d.dtype) * (d * d)
    alpha = ops.stop_gradient(v / (1 - iou + v + ms.Tensor(eps, v.dtype)))
    return diou - alpha * v
