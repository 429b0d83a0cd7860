"""IoU losses of matched box pairs: ``generalized_box_iou_loss``, ``distance_box_iou_loss``,
``complete_box_iou_loss`` (``torchvision.ops.giou_loss``/``diou_loss``/``ciou_loss``).

Op for op as torchvision 0.28: boxes other than float32/float64 (float16, integers) are
computed in float32 (torchvision's ``_upcast_non_float``), the intersection is 0 unless the
boxes overlap with a positive width and height, and ``'mean'`` of no boxes is 0.
"""

from __future__ import annotations

import math
from typing import Any, Tuple

import mindspore as ms
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat._checks import check_finite_number, check_reduction, check_same_shape
from mscompat.custom_ops import box_loss as _kernels
from mscompat.custom_ops import loss_reduce
from mscompat.custom_ops.registry import call, chosen_backend, dispatch, register
from mscompat.vision._box_utils import check_boxes, upcast_non_float

__all__ = ["complete_box_iou_loss", "distance_box_iou_loss", "generalized_box_iou_loss"]

_Coords = Tuple[Tensor, Tensor, Tensor, Tensor]


def _check(
    boxes1: Tensor, boxes2: Tensor, reduction: str, eps: float
) -> Tuple[Tensor, Tensor, float]:
    eps = check_finite_number(eps, "eps")
    boxes1 = check_boxes(boxes1, "boxes1")
    boxes2 = check_same_shape(boxes1, check_boxes(boxes2, "boxes2"), "boxes1", "boxes2")
    check_reduction(reduction)
    return boxes1, boxes2, eps


def _unbind(b: Tensor) -> _Coords:
    return b[..., 0], b[..., 1], b[..., 2], b[..., 3]


def _inter_union(a: _Coords, g: _Coords) -> Tuple[Tensor, Tensor]:
    """torchvision's ``_loss_inter_union``: the intersection only where it is positive."""
    x1, y1, x2, y2 = a
    x1g, y1g, x2g, y2g = g
    xk1, yk1 = ops.maximum(x1, x1g), ops.maximum(y1, y1g)
    xk2, yk2 = ops.minimum(x2, x2g), ops.minimum(y2, y2g)
    overlap = ops.logical_and(yk2 > yk1, xk2 > xk1)
    # the product with the mask, not ``where``: see _box_utils.clamp_min0
    inter = (xk2 - xk1) * (yk2 - yk1) * overlap.astype(x1.dtype)
    union = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - inter
    return inter, union


def _enclosing(a: _Coords, g: _Coords) -> _Coords:
    return (
        ops.minimum(a[0], g[0]),
        ops.minimum(a[1], g[1]),
        ops.maximum(a[2], g[2]),
        ops.maximum(a[3], g[3]),
    )


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _empty(boxes1: Tensor, reduction: str) -> Tensor:
    """The loss of no boxes: an empty ``'none'``, else 0 (torchvision's ``0.0 * loss.sum()``)."""
    dtype = upcast_non_float(boxes1).dtype
    if reduction == "none":
        return ops.zeros(boxes1.shape[:-1], dtype)
    return ops.zeros((), dtype)


_FOUR_OVER_PI2 = 4 / (math.pi**2)
_GIOU = "vision.generalized_box_iou_loss"
_DIOU = "vision.distance_box_iou_loss"
_CIOU = "vision.complete_box_iou_loss"
_COMPOSITE_NOTE = "MindSpore ops, torchvision's op sequence"
_AOT_NOTE = "fused C++ forward and backward kernels; 'mean'/'sum' in the same kernel"


def _diou_loss(a: _Coords, g: _Coords, eps: float) -> Tuple[Tensor, Tensor]:
    """torchvision's ``_diou_iou_loss``: the DIoU loss and the IoU."""
    inter, union = _inter_union(a, g)
    e = ms.Tensor(eps, union.dtype)
    iou = inter / (union + e)
    xc1, yc1, xc2, yc2 = _enclosing(a, g)
    cw, ch = xc2 - xc1, yc2 - yc1
    diag = (cw * cw) + (ch * ch) + e
    x1, y1, x2, y2 = a
    x1g, y1g, x2g, y2g = g
    dx = (x2 + x1) / 2 - (x1g + x2g) / 2
    dy = (y2 + y1) / 2 - (y1g + y2g) / 2
    return 1 - iou + ((dx * dx) + (dy * dy)) / diag, iou


@register(_GIOU, "composite", note=_COMPOSITE_NOTE)
def _giou_elementwise(boxes1: Tensor, boxes2: Tensor, eps: float) -> Tensor:
    a, g = _unbind(boxes1), _unbind(boxes2)
    inter, union = _inter_union(a, g)
    e = ms.Tensor(eps, union.dtype)
    iou = inter / (union + e)
    xc1, yc1, xc2, yc2 = _enclosing(a, g)
    area_c = (xc2 - xc1) * (yc2 - yc1)
    return 1 - (iou - ((area_c - union) / (area_c + e)))


@register(_DIOU, "composite", note=_COMPOSITE_NOTE)
def _diou_elementwise(boxes1: Tensor, boxes2: Tensor, eps: float) -> Tensor:
    return _diou_loss(_unbind(boxes1), _unbind(boxes2), eps)[0]


@register(_CIOU, "composite", note=_COMPOSITE_NOTE)
def _ciou_elementwise(boxes1: Tensor, boxes2: Tensor, eps: float) -> Tensor:
    a, g = _unbind(boxes1), _unbind(boxes2)
    diou_loss, iou = _diou_loss(a, g, 1e-7)
    w_pred, h_pred = a[2] - a[0], a[3] - a[1]
    w_gt, h_gt = g[2] - g[0], g[3] - g[1]
    d = ops.atan(w_gt / h_gt) - ops.atan(w_pred / h_pred)
    v = ms.Tensor(_FOUR_OVER_PI2, d.dtype) * (d * d)
    alpha = ops.stop_gradient(v / (1 - iou + v + ms.Tensor(eps, v.dtype)))
    return diou_loss + alpha * v


@constexpr
def _head(op: str, eps: float) -> Tuple[float, float, float]:
    """The kernel's ``(kind, eps, eps2)``: torchvision's CIoU keeps its DIoU part's default
    eps (1e-7); eps enters only alpha."""
    kind = {_GIOU: "tv_giou", _DIOU: "tv_diou", _CIOU: "tv_ciou"}[op]
    return (float(_kernels.KINDS[kind]), eps, 1e-7 if op == _CIOU else eps)


@_kernels.LIBRARY.backend(_GIOU, _AOT_NOTE, _kernels.kernel_dtypes)
def _giou_aot(
    boxes1: Tensor, boxes2: Tensor, eps: float, plan: Any = (), weight: Any = None
) -> Tensor:
    return _kernels.box_loss(boxes1, boxes2, _head(_GIOU, eps), plan, weight)


@_kernels.LIBRARY.backend(_DIOU, _AOT_NOTE, _kernels.kernel_dtypes)
def _diou_aot(
    boxes1: Tensor, boxes2: Tensor, eps: float, plan: Any = (), weight: Any = None
) -> Tensor:
    return _kernels.box_loss(boxes1, boxes2, _head(_DIOU, eps), plan, weight)


@_kernels.LIBRARY.backend(_CIOU, _AOT_NOTE, _kernels.kernel_dtypes)
def _ciou_aot(
    boxes1: Tensor, boxes2: Tensor, eps: float, plan: Any = (), weight: Any = None
) -> Tensor:
    return _kernels.box_loss(boxes1, boxes2, _head(_CIOU, eps), plan, weight)


def _loss(op: str, boxes1: Tensor, boxes2: Tensor, reduction: str, eps: float) -> Tensor:
    """Checks, torchvision's ``_upcast_non_float``, the loss ``op`` (the registry chooses its
    backend), the reduction: in the same kernel as the loss where the aot backend runs
    ('mean'/'sum'), else after it."""
    boxes1, boxes2, eps = _check(boxes1, boxes2, reduction, eps)
    if boxes1.size == 0:
        return _empty(boxes1, reduction)
    boxes1, boxes2 = upcast_non_float(boxes1), upcast_non_float(boxes2)
    backend = chosen_backend(op, boxes1, boxes2, eps)
    plan = loss_reduce.plan(backend, boxes1, boxes2, None, reduction, None, width=4)
    if plan:
        # the aot implementation with the plan: the reduction in its kernel
        return dispatch(op, boxes1, boxes2, eps)(boxes1, boxes2, eps, plan, None)
    return _reduce(call(op, boxes1, boxes2, eps), reduction)


def generalized_box_iou_loss(
    boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7
) -> Tensor:
    """Generalized IoU loss (`Rezatofighi et al., 2019 <https://arxiv.org/abs/1902.09630>`_)
    of matched pairs of boxes.

    Mirrors ``torchvision.ops.generalized_box_iou_loss``. With :math:`I, U` the intersection
    and union of a pair and :math:`C` the area of its smallest enclosing box:

    .. math::
        \\ell = 1 - \\Big(\\frac{I}{U + \\varepsilon} - \\frac{C - U}{C + \\varepsilon}\\Big)

    Args:
        boxes1 (Tensor[N, 4] or Tensor[4]): predicted boxes ``(x1, y1, x2, y2)``.
        boxes2 (Tensor, same shape): target boxes.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'none'``.
        eps (float): added to the denominators. Default: 1e-7.

    Returns:
        Tensor: ``(N,)`` for ``'none'``, else 0-d; float64 for float64 boxes, else float32.

    Raises:
        TypeError: not Tensors of a box dtype; ``eps`` not a number.
        ValueError: last dim not 4, different shapes, invalid ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import generalized_box_iou_loss
        >>> a = ms.Tensor([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 1.0, 1.0]])
        >>> b = ms.Tensor([[1.0, 1.0, 3.0, 3.0], [2.0, 0.0, 3.0, 1.0]])
        >>> generalized_box_iou_loss(a, b).asnumpy().astype(float).round(4).tolist()
        [1.0794, 1.3333]
    """
    return _loss(_GIOU, boxes1, boxes2, reduction, eps)


def distance_box_iou_loss(
    boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7
) -> Tensor:
    """Distance IoU loss (`Zheng et al., 2019 <https://arxiv.org/abs/1911.08287>`_) of matched
    pairs of boxes.

    Mirrors ``torchvision.ops.distance_box_iou_loss``. With :math:`\\rho` the distance between
    the centres and :math:`c` the diagonal of the smallest enclosing box:

    .. math::
        \\ell = 1 - \\frac{I}{U + \\varepsilon} + \\frac{\\rho^2}{c^2 + \\varepsilon}

    Args:
        boxes1 (Tensor[N, 4] or Tensor[4]): predicted boxes ``(x1, y1, x2, y2)``.
        boxes2 (Tensor, same shape): target boxes.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'none'``.
        eps (float): added to the denominators. Default: 1e-7.

    Returns:
        Tensor: ``(N,)`` for ``'none'``, else 0-d; float64 for float64 boxes, else float32.

    Raises:
        TypeError, ValueError: as :func:`generalized_box_iou_loss`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import distance_box_iou_loss
        >>> a = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> b = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> round(float(distance_box_iou_loss(a, b, reduction="sum")), 4)
        0.7436
    """
    return _loss(_DIOU, boxes1, boxes2, reduction, eps)


def complete_box_iou_loss(
    boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7
) -> Tensor:
    """Complete IoU loss (`Zheng et al., 2019 <https://arxiv.org/abs/1911.08287>`_) of matched
    pairs of boxes.

    Mirrors ``torchvision.ops.complete_box_iou_loss``: the DIoU loss plus an aspect-ratio
    term,

    .. math::
        v = \\frac{4}{\\pi^2}\\Big(\\arctan\\frac{w_g}{h_g} - \\arctan\\frac{w}{h}\\Big)^2,
        \\qquad \\alpha = \\frac{v}{1 - \\text{IoU} + v + \\varepsilon}, \\qquad
        \\ell = \\ell_{\\text{DIoU}} + \\alpha v

    with :math:`\\alpha` a constant for the gradient (``torch.no_grad`` in torchvision).

    .. note::
        As in torchvision, ``eps`` enters only :math:`\\alpha`: the DIoU part is computed with
        its default ``1e-7``.

    Args:
        boxes1 (Tensor[N, 4] or Tensor[4]): predicted boxes ``(x1, y1, x2, y2)``.
        boxes2 (Tensor, same shape): target boxes.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'none'``.
        eps (float): added to the denominator of :math:`\\alpha`. Default: 1e-7.

    Returns:
        Tensor: ``(N,)`` for ``'none'``, else 0-d; float64 for float64 boxes, else float32.

    Raises:
        TypeError, ValueError: as :func:`generalized_box_iou_loss`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import complete_box_iou_loss
        >>> a = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> b = ms.Tensor([[1.0, 0.0, 3.0, 4.0]])
        >>> complete_box_iou_loss(a, b).asnumpy().astype(float).round(4).tolist()
        [0.8821]
    """
    return _loss(_CIOU, boxes1, boxes2, reduction, eps)
