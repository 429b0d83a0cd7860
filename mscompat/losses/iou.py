"""MMDetection's IoU-family box losses: IoU, Bounded IoU, GIoU, DIoU, CIoU, EIoU, SIoU.

Mirrors ``mmdet/models/losses/iou_loss.py`` (MMDetection 3.3): each ``*_loss`` function has the
``@weighted_loss`` signature ``(pred, target, weight=None, reduction='mean', avg_factor=None,
**config)`` and each Cell MMDetection's constructor and ``forward(pred, target, weight=None,
avg_factor=None, reduction_override=None)``, with its special cases: an all-non-positive
``weight`` returns ``(pred * weight).sum()`` (IoULoss: unless ``reduction='none'``), and a
``(n, 4)`` weight is averaged to ``(n,)``. float16 follows PyTorch on CPU op by op (IoU and GIoU
compute the overlaps in float32, as MMDetection; CIoU and EIoU return float32 there, as
MMDetection's ``.float()`` makes them).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Optional, Tuple

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import (
    check_bool,
    check_float_tensor,
    check_number,
    check_reduction,
    check_tensor,
)
from mscompat.custom_ops import box_loss as _kernels
from mscompat.custom_ops.registry import call, register
from mscompat.losses import _torch_math as tm
from mscompat.losses.bbox_overlaps import overlaps
from mscompat.losses.utils import AvgFactor, _check_avg_factor, _promote, _sum, weight_reduce_loss

__all__ = [
    "BoundedIoULoss",
    "CIoULoss",
    "DIoULoss",
    "EIoULoss",
    "GIoULoss",
    "IoULoss",
    "SIoULoss",
    "bounded_iou_loss",
    "ciou_loss",
    "diou_loss",
    "eiou_loss",
    "giou_loss",
    "iou_loss",
    "siou_loss",
]

F16, F32 = ms.float16, ms.float32
# Computed here, in double: graph mode does arithmetic on Python floats in float32.
_CIOU_FACTOR = 4 / math.pi**2
_HALF_PI = math.pi / 2
_SIN_45 = 2**0.5 / 2
_IOU_MODES = ("linear", "square", "log")
_LINEAR_WARNING = (
    'DeprecationWarning: Setting "linear=True" in iou_loss is deprecated, please use '
    '"mode=`linear`" instead.'
)


def _check_boxes(
    pred: Any, target: Any, reduction: str, avg_factor: AvgFactor
) -> Tuple[Tensor, Tensor]:
    pred = check_float_tensor(pred, "pred")
    target = check_float_tensor(target, "target")
    if pred.ndim != 2 or pred.shape[1] != 4:
        raise ValueError(f"pred must have shape (n, 4), but got pred.shape={pred.shape}")
    if target.shape != pred.shape:
        raise ValueError(
            f"target must have the same shape as pred {pred.shape}, but got {target.shape}"
        )
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    return pred, target


def _finish(
    loss_fn: Callable[..., Tensor],
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor],
    reduction: str,
    avg_factor: AvgFactor,
    out_dtype: Any,
    out_cols: int,
    *config: Any,
) -> Tensor:
    """The elementwise loss (zeros of its dtype and shape for no boxes: no kernel runs on an
    empty input), then :func:`weight_reduce_loss`."""
    if pred.shape[0] == 0:
        shape = (0,) if out_cols == 0 else (0, out_cols)
        loss = ops.zeros(shape, out_dtype)
    else:
        loss = loss_fn(pred, target, *config)
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


def _promoted(pred: Tensor, target: Tensor) -> Any:
    return _promote(pred.dtype, target.dtype)


# ----------------------------------------------------------------------------- elementwise


def _iou_elementwise(pred: Tensor, target: Tensor, mode: str, eps: float) -> Tensor:
    half = pred.dtype == F16
    ious = overlaps(pred.astype(F32) if half else pred, target, "iou", True, 1e-6)
    ious = tm.clamp_min(ious, eps)
    if half:
        ious = ious.astype(F16)
    if mode == "linear":
        return tm.sub(1.0, ious)
    if mode == "square":
        return tm.sub(1.0, tm.square(ious))
    return -tm.ew(ops.log, ious)


def _giou_elementwise(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    half = pred.dtype == F16
    gious = overlaps(pred.astype(F32) if half else pred, target, "giou", True, eps)
    if half:
        gious = gious.astype(F16)
    return tm.sub(1.0, gious)


def _bounded_elementwise(pred: Tensor, target: Tensor, beta: float, eps: float) -> Tensor:
    pred_ctrx = tm.mul(tm.add(pred[:, 0], pred[:, 2]), 0.5)
    pred_ctry = tm.mul(tm.add(pred[:, 1], pred[:, 3]), 0.5)
    pred_w = tm.sub(pred[:, 2], pred[:, 0])
    pred_h = tm.sub(pred[:, 3], pred[:, 1])
    target = tm.stop(target)  # MMDetection computes the target terms under torch.no_grad()
    target_ctrx = tm.mul(tm.add(target[:, 0], target[:, 2]), 0.5)
    target_ctry = tm.mul(tm.add(target[:, 1], target[:, 3]), 0.5)
    target_w = tm.sub(target[:, 2], target[:, 0])
    target_h = tm.sub(target[:, 3], target[:, 1])
    dx = tm.sub(target_ctrx, pred_ctrx)
    dy = tm.sub(target_ctry, pred_ctry)

    def centre(t_size: Tensor, d: Tensor) -> Tensor:
        d2 = tm.mul(2.0, tm.ew(ops.abs, d))
        ratio = tm.div(tm.sub(t_size, d2), tm.add(tm.add(t_size, d2), eps))
        return tm.sub(1.0, tm.tmax(ratio, ops.zeros_like(ratio)))

    def size(t_size: Tensor, p_size: Tensor) -> Tensor:
        a = tm.div(t_size, tm.add(p_size, eps))
        b = tm.div(p_size, tm.add(t_size, eps))
        return tm.sub(1.0, tm.tmin(a, b))

    comb = ops.stack(
        [
            centre(target_w, dx),
            centre(target_h, dy),
            size(target_w, pred_w),
            size(target_h, pred_h),
        ],
        axis=-1,
    )
    small = tm.compare_scalar(lambda x, s: x < s, comb, beta)
    quad = tm.div(tm.mul(tm.mul(0.5, comb), comb), beta)
    lin = tm.ew(lambda c, b: c - 0.5 * b, comb, beta)  # 0.5 * beta in the dtype (graph mode)
    return ops.where(small, quad, lin)


def _centre_terms(pred: Tensor, target: Tensor, eps: float) -> Tuple[Tensor, Tensor, Tensor]:
    """IoU with ``+ eps`` on the union, and the enclosing box's corners (DIoU, CIoU, SIoU)."""
    lt = tm.tmax(pred[:, :2], target[:, :2])
    rb = tm.tmin(pred[:, 2:], target[:, 2:])
    wh = tm.clamp_min(tm.sub(rb, lt), 0.0)
    overlap = tm.mul(wh[:, 0], wh[:, 1])
    ap = tm.mul(tm.sub(pred[:, 2], pred[:, 0]), tm.sub(pred[:, 3], pred[:, 1]))
    ag = tm.mul(tm.sub(target[:, 2], target[:, 0]), tm.sub(target[:, 3], target[:, 1]))
    union = tm.add(tm.sub(tm.add(ap, ag), overlap), eps)
    ious = tm.div(overlap, union)
    return ious, tm.tmin(pred[:, :2], target[:, :2]), tm.tmax(pred[:, 2:], target[:, 2:])


def _centre_gap(pred: Tensor, target: Tensor, i: int) -> Tensor:
    """``(t[i] + t[i+2]) - (p[i] + p[i+2])``: twice the gap of the centres along x or y."""
    return tm.sub(tm.add(target[:, i], target[:, i + 2]), tm.add(pred[:, i], pred[:, i + 2]))


def _gap_left_to_right(pred: Tensor, target: Tensor, i: int) -> Tensor:
    """``t[i] + t[i+2] - p[i] - p[i+2]``, evaluated left to right."""
    return tm.sub(tm.sub(tm.add(target[:, i], target[:, i + 2]), pred[:, i]), pred[:, i + 2])


def _diou_terms(pred: Tensor, target: Tensor, eps: float) -> Tuple[Tensor, Tensor, Tensor]:
    ious, e1, e2 = _centre_terms(pred, target, eps)
    enclose_wh = tm.clamp_min(tm.sub(e2, e1), 0.0)
    c2 = tm.add(tm.add(tm.square(enclose_wh[:, 0]), tm.square(enclose_wh[:, 1])), eps)
    left = tm.div(tm.square(_centre_gap(pred, target, 0)), 4.0)
    right = tm.div(tm.square(_centre_gap(pred, target, 1)), 4.0)
    return ious, tm.add(left, right), c2


def _diou_elementwise(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    ious, rho2, c2 = _diou_terms(pred, target, eps)
    return tm.sub(1.0, tm.sub(ious, tm.div(rho2, c2)))


def _wh(boxes: Tensor, eps: float) -> Tuple[Tensor, Tensor]:
    return tm.sub(boxes[:, 2], boxes[:, 0]), tm.add(tm.sub(boxes[:, 3], boxes[:, 1]), eps)


def _clamp_unit(x: Tensor) -> Tensor:
    """``x.clamp(-1, 1)``, NaN kept (MindSpore's clamp maps NaN to the bound; PyTorch's keeps
    it, and CIoU's alpha is NaN for identical boxes)."""
    return tm.ew(lambda v: ops.where(ops.isnan(v), v, ops.clamp(v, -1.0, 1.0)), x)


def _ciou_elementwise(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    ious, rho2, c2 = _diou_terms(pred, target, eps)
    w1, h1 = _wh(pred, eps)
    w2, h2 = _wh(target, eps)
    angle = tm.sub(tm.ew(ops.atan, tm.div(w2, h2)), tm.ew(ops.atan, tm.div(w1, h1)))
    v = tm.mul(_CIOU_FACTOR, tm.square(angle))
    # MMDetection: alpha under torch.no_grad(), its mask .float() (float32 for float16 boxes)
    mask = tm.stop(ious > 0.5).astype(F32)
    alpha = tm.stop(tm.div(tm.mul(mask, v), tm.add(tm.sub(1.0, ious), v)))
    cious = tm.sub(ious, tm.add(tm.div(rho2, c2), tm.mul(alpha, v)))
    return tm.sub(1.0, _clamp_unit(cious))


def _eiou_elementwise(pred: Tensor, target: Tensor, smooth_point: float, eps: float) -> Tensor:
    px1, py1, px2, py2 = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    tx1, ty1, tx2, ty2 = target[:, 0], target[:, 1], target[:, 2], target[:, 3]
    ex1, ey1 = tm.tmin(px1, tx1), tm.tmin(py1, ty1)
    ix1, iy1 = tm.tmax(px1, tx1), tm.tmax(py1, ty1)
    ix2, iy2 = tm.tmin(px2, tx2), tm.tmin(py2, ty2)
    xmin, ymin = tm.tmin(ix1, ix2), tm.tmin(iy1, iy2)
    xmax, ymax = tm.tmax(ix1, ix2), tm.tmax(iy1, iy2)
    inter = tm.add(
        tm.mul(tm.sub(ix2, ex1), tm.sub(iy2, ey1)), tm.mul(tm.sub(xmin, ex1), tm.sub(ymin, ey1))
    )
    inter = tm.sub(inter, tm.mul(tm.sub(ix1, ex1), tm.sub(ymax, ey1)))
    inter = tm.sub(inter, tm.mul(tm.sub(xmax, ex1), tm.sub(iy1, ey1)))
    areas = tm.add(
        tm.mul(tm.sub(px2, px1), tm.sub(py2, py1)), tm.mul(tm.sub(tx2, tx1), tm.sub(ty2, ty1))
    )
    union = tm.add(tm.sub(areas, inter), eps)
    ious = tm.sub(1.0, tm.div(inter, union))
    sign = tm.stop(tm.compare_scalar(lambda x, s: x < s, ious, smooth_point)).astype(F32)
    quad = tm.div(tm.mul(tm.mul(0.5, sign), tm.square(ious)), smooth_point)
    lin = tm.mul(tm.sub(1.0, sign), tm.ew(lambda x, s: x - 0.5 * s, ious, smooth_point))
    return tm.add(quad, lin)


def _siou_elementwise(pred: Tensor, target: Tensor, eps: float, neg_gamma: bool) -> Tensor:
    ious, e1, e2 = _centre_terms(pred, target, eps)
    enclose_wh = tm.clamp_min(tm.sub(e2, e1), eps)  # MMDetection: clamp(min=eps), not 0
    cw, ch = enclose_wh[:, 0], enclose_wh[:, 1]
    w1, h1 = _wh(pred, eps)
    w2, h2 = _wh(target, eps)
    # MMDetection sums t1 + t2 - p1 - p2 left to right here (float16 rounds differently from
    # DIoU's (t1 + t2) - (p1 + p2))
    s_cw = tm.add(tm.mul(_gap_left_to_right(pred, target, 0), 0.5), eps)
    s_ch = tm.add(tm.mul(_gap_left_to_right(pred, target, 1), 0.5), eps)
    sigma = tm.ew(ops.sqrt, tm.add(tm.square(s_cw), tm.square(s_ch)))
    sin_1 = tm.div(tm.ew(ops.abs, s_cw), sigma)
    sin_2 = tm.div(tm.ew(ops.abs, s_ch), sigma)
    sin_alpha = ops.where(tm.compare_scalar(lambda x, s: x > s, sin_1, _SIN_45), sin_2, sin_1)
    angle = tm.sub(tm.mul(tm.ew(ops.asin, sin_alpha), 2.0), _HALF_PI)
    angle_cost = tm.ew(ops.cos, angle)
    rho_x = tm.square(tm.div(s_cw, cw))
    rho_y = tm.square(tm.div(s_ch, ch))
    gamma = tm.sub(angle_cost, 2.0) if neg_gamma else tm.sub(2.0, angle_cost)
    distance_cost = tm.sub(
        tm.sub(2.0, tm.ew(ops.exp, tm.mul(gamma, rho_x))), tm.ew(ops.exp, tm.mul(gamma, rho_y))
    )

    def shape_term(a: Tensor, b: Tensor) -> Tensor:
        omega = tm.div(tm.ew(ops.abs, tm.sub(a, b)), tm.tmax(a, b))
        return tm.ew(lambda x: ops.pow(x, 4.0), tm.sub(1.0, tm.ew(ops.exp, -omega)))

    shape_cost = tm.add(shape_term(w1, w2), shape_term(h1, h2))
    sious = tm.sub(ious, tm.mul(0.5, tm.add(distance_cost, shape_cost)))
    return tm.sub(1.0, _clamp_unit(sious))


# ----------------------------------------------------------------------------- dispatch

_COMPOSITE_NOTE = "MindSpore ops, MMDetection's op sequence"
_AOT_NOTE = "fused C++ forward and backward kernels"
register("losses.iou_loss", "composite", note=_COMPOSITE_NOTE)(_iou_elementwise)
register("losses.giou_loss", "composite", note=_COMPOSITE_NOTE)(_giou_elementwise)
register("losses.diou_loss", "composite", note=_COMPOSITE_NOTE)(_diou_elementwise)
register("losses.ciou_loss", "composite", note=_COMPOSITE_NOTE)(_ciou_elementwise)


@_kernels.LIBRARY.backend("losses.iou_loss", _AOT_NOTE, _kernels.kernel_dtypes)
def _iou_aot(pred: Tensor, target: Tensor, mode: str, eps: float) -> Tensor:
    kind = _kernels.KINDS["mmdet_iou_log"]
    if mode == "linear":
        kind = _kernels.KINDS["mmdet_iou_linear"]
    elif mode == "square":
        kind = _kernels.KINDS["mmdet_iou_square"]
    # bbox_overlaps' own eps (1e-6) bounds the union; eps bounds the IoU
    return _kernels.box_loss(pred, target, kind, eps, 1e-6)


@_kernels.LIBRARY.backend("losses.giou_loss", _AOT_NOTE, _kernels.kernel_dtypes)
def _giou_aot(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    return _kernels.box_loss(pred, target, _kernels.KINDS["mmdet_giou"], eps, eps)


@_kernels.LIBRARY.backend("losses.diou_loss", _AOT_NOTE, _kernels.kernel_dtypes)
def _diou_aot(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    return _kernels.box_loss(pred, target, _kernels.KINDS["mmdet_diou"], eps, eps)


@_kernels.LIBRARY.backend("losses.ciou_loss", _AOT_NOTE, _kernels.kernel_dtypes)
def _ciou_aot(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    return _kernels.box_loss(pred, target, _kernels.KINDS["mmdet_ciou"], eps, eps)


def _iou_call(pred: Tensor, target: Tensor, mode: str, eps: float) -> Tensor:
    return call("losses.iou_loss", pred, target, mode, eps)


def _giou_call(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    return call("losses.giou_loss", pred, target, eps)


def _diou_call(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    return call("losses.diou_loss", pred, target, eps)


def _ciou_call(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    return call("losses.ciou_loss", pred, target, eps)


# ----------------------------------------------------------------------------- functions

_LOSS_ARGS = """
    Args:
        pred (Tensor[n, 4]): predicted boxes ``(x1, y1, x2, y2)``, float16/32/64.
        target (Tensor[n, 4]): target boxes, a floating dtype.
        weight (Tensor[n], optional): per-box weight.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): with ``'mean'``, divide the weighted sum by
            ``avg_factor + eps`` (float32 epsilon); not allowed with ``'sum'``."""


def iou_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    linear: bool = False,
    mode: str = "log",
    eps: float = 1e-6,
) -> Tensor:
    """IoU loss (`UnitBox <https://arxiv.org/abs/1608.01471>`_), MMDetection's ``iou_loss``.

    With :math:`u = \\max(\\operatorname{IoU}(p, t), \\epsilon)` (the aligned
    :func:`~mscompat.losses.bbox_overlaps`, its own eps 1e-6):

    .. math::
        \\ell = 1 - u \\;(\\text{linear}), \\quad 1 - u^2 \\;(\\text{square}), \\quad
        -\\log u \\;(\\text{log})
    {args}
        linear (bool): deprecated: ``mode='linear'`` (warns). Default: False.
        mode (str): ``'linear'`` | ``'square'`` | ``'log'``. Default: ``'log'``.
        eps (float): lower bound of the IoU. Default: 1e-6.

    Returns:
        Tensor[n] for ``'none'``, else 0-d; ``pred``'s dtype (float16 boxes: the IoU in
        float32, then float16, as MMDetection). No boxes: the mean is NaN, the sum 0.

    Raises:
        ValueError: boxes not of shape (n, 4) or of different shapes, an unknown ``mode`` or
            ``reduction``, ``avg_factor`` with ``'sum'``.
        TypeError: non-floating boxes.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import iou_loss
        >>> pred = ms.Tensor([[0.0, 0.0, 10.0, 10.0], [0.0, 0.0, 4.0, 4.0]])
        >>> target = ms.Tensor([[0.0, 0.0, 10.0, 20.0], [0.0, 0.0, 4.0, 4.0]])
        >>> iou_loss(pred, target, reduction="none", mode="linear")
        Tensor(shape=[2], dtype=Float32, value= [ 5.00000000e-01,  0.00000000e+00])
    """
    pred, target = _check_boxes(pred, target, reduction, avg_factor)
    if mode not in _IOU_MODES:
        raise ValueError(f"mode must be one of {_IOU_MODES}, but got {mode!r}")
    if check_bool(linear, "linear"):
        mode = "linear"
        warnings.warn(_LINEAR_WARNING, stacklevel=2)
    check_number(eps, "eps")
    return _finish(_iou_call, pred, target, weight, reduction, avg_factor, pred.dtype, 0, mode, eps)


def bounded_iou_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    beta: float = 0.2,
    eps: float = 1e-3,
) -> Tensor:
    """Bounded IoU loss (`Tychsen-Smith & Petersson <https://arxiv.org/abs/1711.00164>`_),
    MMDetection's ``bounded_iou_loss``.

    With :math:`w_t, h_t` the target size, :math:`d_x, d_y` the gap of the centres:

    .. math::
        \\ell_x = 1 - \\max\\Big(\\frac{w_t - 2|d_x|}{w_t + 2|d_x| + \\epsilon}, 0\\Big), \\quad
        \\ell_w = 1 - \\min\\Big(\\frac{w_t}{w_p + \\epsilon}, \\frac{w_p}{w_t + \\epsilon}\\Big)

    (likewise :math:`\\ell_y, \\ell_h`), each then smooth-L1 with threshold :math:`\\beta`.
    The target terms carry no gradient (MMDetection's ``torch.no_grad()``).
    {args}
            Here ``weight`` has the loss's shape ``(n, 4)``.
        beta (float): smooth-L1 threshold. Default: 0.2.
        eps (float): added to the denominators. Default: 1e-3.

    Returns:
        Tensor[n, 4] for ``'none'``, else 0-d, in the promoted dtype of the boxes.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import bounded_iou_loss
        >>> pred = ms.Tensor([[0.0, 0.0, 10.0, 10.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 11.0, 12.0]])
        >>> round(float(bounded_iou_loss(pred, target)), 4)
        0.1222
    """
    pred, target = _check_boxes(pred, target, reduction, avg_factor)
    check_number(beta, "beta")
    check_number(eps, "eps")
    return _finish(
        _bounded_elementwise,
        pred,
        target,
        weight,
        reduction,
        avg_factor,
        _promoted(pred, target),
        4,
        beta,
        eps,
    )


def _simple(
    elementwise: Callable[..., Tensor],
    pred: Any,
    target: Any,
    weight: Optional[Tensor],
    reduction: str,
    avg_factor: AvgFactor,
    out_dtype: Any,
    *config: Any,
) -> Tensor:
    return _finish(elementwise, pred, target, weight, reduction, avg_factor, out_dtype, 0, *config)


def giou_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    eps: float = 1e-7,
) -> Tensor:
    """Generalized IoU loss (`Rezatofighi et al. <https://arxiv.org/abs/1902.09630>`_),
    MMDetection's ``giou_loss``: :math:`\\ell = 1 - \\operatorname{GIoU}(p, t)` with the
    aligned :func:`~mscompat.losses.bbox_overlaps` in mode ``'giou'`` and this ``eps``.
    {args}
        eps (float): lower bound of the union and enclosing area. Default: 1e-7.

    Returns:
        Tensor[n] for ``'none'``, else 0-d; ``pred``'s dtype (float16: the GIoU in float32).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import giou_loss
        >>> pred = ms.Tensor([[0.0, 0.0, 10.0, 10.0], [10.0, 10.0, 20.0, 20.0]])
        >>> target = ms.Tensor([[0.0, 0.0, 10.0, 20.0], [0.0, 0.0, 10.0, 10.0]])
        >>> giou_loss(pred, target, reduction="none")
        Tensor(shape=[2], dtype=Float32, value= [ 5.00000000e-01,  1.50000000e+00])
    """
    pred, target = _check_boxes(pred, target, reduction, avg_factor)
    check_number(eps, "eps")
    return _simple(_giou_call, pred, target, weight, reduction, avg_factor, pred.dtype, eps)


def diou_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    eps: float = 1e-7,
) -> Tensor:
    """Distance-IoU loss (`Zheng et al. <https://arxiv.org/abs/1911.08287>`_), MMDetection's
    ``diou_loss``:

    .. math::
        \\ell = 1 - \\frac{I}{U + \\epsilon} + \\frac{\\rho^2}{c_w^2 + c_h^2 + \\epsilon}

    (:math:`\\rho` the distance of the centres, :math:`c` the enclosing box).
    {args}
        eps (float): added to the union and the diagonal. Default: 1e-7.

    Returns:
        Tensor[n] for ``'none'``, else 0-d, in the promoted dtype of the boxes.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import diou_loss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> round(float(diou_loss(pred, target)), 4)
        0.7436
    """
    pred, target = _check_boxes(pred, target, reduction, avg_factor)
    check_number(eps, "eps")
    dtype = _promoted(pred, target)
    return _simple(_diou_call, pred, target, weight, reduction, avg_factor, dtype, eps)


def ciou_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    eps: float = 1e-7,
) -> Tensor:
    """Complete-IoU loss (`Zheng et al. <https://arxiv.org/abs/2005.03572>`_), MMDetection's
    ``ciou_loss``:

    .. math::
        v = \\frac{4}{\\pi^2}\\Big(\\arctan\\frac{w_t}{h_t} - \\arctan\\frac{w_p}{h_p}\\Big)^2,
        \\quad \\alpha = [\\text{IoU} > 0.5]\\,\\frac{v}{1 - \\text{IoU} + v}, \\quad
        \\ell = 1 - \\operatorname{clamp}\\Big(\\text{IoU} - \\frac{\\rho^2}{c^2} - \\alpha v,
        -1, 1\\Big)

    with :math:`h + \\epsilon` heights and :math:`\\alpha` carrying no gradient
    (MMDetection's ``torch.no_grad()``). As in MMDetection, identical boxes large enough that
    ``U + eps`` rounds to ``U`` give :math:`\\alpha = 0/0` = NaN.
    {args}
        eps (float): added to the union, diagonal and heights. Default: 1e-7.

    Returns:
        Tensor[n] for ``'none'``, else 0-d; float32 for float16 boxes (MMDetection's
        ``.float()`` mask), else the promoted dtype of the boxes.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import ciou_loss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> round(float(ciou_loss(pred, target)), 4)
        0.7436
    """
    pred, target = _check_boxes(pred, target, reduction, avg_factor)
    check_number(eps, "eps")
    dtype = _promote(_promoted(pred, target), F32)
    return _simple(_ciou_call, pred, target, weight, reduction, avg_factor, dtype, eps)


def eiou_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    smooth_point: float = 0.1,
    eps: float = 1e-7,
) -> Tensor:
    """Smooth Extended-IoU loss (`Peng & Yu, 2021
    <https://ieeexplore.ieee.org/abstract/document/9429909>`_), MMDetection's ``eiou_loss``:
    with :math:`x = 1 - I / (U + \\epsilon)` and :math:`s` the smooth point,

    .. math::
        \\ell = \\begin{cases} 0.5\\,x^2 / s & x < s \\\\ x - 0.5\\,s & \\text{otherwise}
        \\end{cases}

    (the intersection written with MMDetection's signed extent terms).
    {args}
        smooth_point (float): the threshold :math:`s`. Default: 0.1.
        eps (float): added to the union. Default: 1e-7.

    Returns:
        Tensor[n] for ``'none'``, else 0-d; float32 for float16 boxes (MMDetection's
        ``.float()`` sign), else the promoted dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import eiou_loss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> round(float(eiou_loss(pred, target)), 4)
        0.6167
    """
    pred, target = _check_boxes(pred, target, reduction, avg_factor)
    check_number(smooth_point, "smooth_point")
    check_number(eps, "eps")
    dtype = _promote(_promoted(pred, target), F32)
    return _simple(
        _eiou_elementwise, pred, target, weight, reduction, avg_factor, dtype, smooth_point, eps
    )


def siou_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    eps: float = 1e-7,
    neg_gamma: bool = False,
) -> Tensor:
    """SCYLLA-IoU loss (`Gevorgyan <https://arxiv.org/abs/2205.12740>`_), MMDetection's
    ``siou_loss``: :math:`\\ell = 1 - \\operatorname{clamp}(\\text{IoU} - (\\Delta + \\Omega)
    / 2, -1, 1)` with the angle-weighted distance cost

    .. math::
        \\Lambda = \\cos(2 \\arcsin(\\sin\\alpha) - \\pi/2), \\quad
        \\Delta = \\sum_{k \\in \\{x, y\\}} (1 - e^{\\gamma \\rho_k}), \\quad
        \\gamma = \\pm(2 - \\Lambda)

    and the shape cost :math:`\\Omega = \\sum (1 - e^{-\\omega})^4`.
    {args}
        eps (float): MMDetection's eps (union, heights, centre gaps, enclosing box).
            Default: 1e-7.
        neg_gamma (bool): :math:`\\gamma = \\Lambda - 2` as in the paper (True) or
            :math:`2 - \\Lambda` (MMDetection's default). Default: False.

    Returns:
        Tensor[n] for ``'none'``, else 0-d, in the promoted dtype of the boxes.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import siou_loss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> round(float(siou_loss(pred, pred)), 4)
        0.0
    """
    pred, target = _check_boxes(pred, target, reduction, avg_factor)
    check_number(eps, "eps")
    check_bool(neg_gamma, "neg_gamma")
    dtype = _promoted(pred, target)
    return _simple(
        _siou_elementwise, pred, target, weight, reduction, avg_factor, dtype, eps, neg_gamma
    )


for _fn in (iou_loss, bounded_iou_loss, giou_loss, diou_loss, ciou_loss, eiou_loss, siou_loss):
    # a blank line first: the placeholder follows text or a math block
    _fn.__doc__ = (_fn.__doc__ or "").replace("    {args}", "\n" + _LOSS_ARGS.strip("\n"))


# ----------------------------------------------------------------------------- Cells


def _module_forward(
    loss_fn: Callable[..., Tensor],
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor],
    avg_factor: AvgFactor,
    reduction: str,
    loss_weight: float,
    mean_weight: bool,
    zero_unless_none: bool,
    *config: Any,
) -> Tensor:
    """The ``forward`` of MMDetection's IoU-loss modules around ``loss_fn``."""
    pred = check_float_tensor(pred, "pred")
    if weight is not None:
        weight = check_tensor(weight, "weight")
        if mean_weight and weight.ndim > 1 and weight.shape != pred.shape:
            # checked before the data-dependent branch: graph mode compiles both branches
            raise ValueError(
                f"a weight of more than 1 dim must have pred's shape {pred.shape}, but got "
                f"weight.shape={weight.shape}"
            )
        if not (zero_unless_none and reduction == "none") and not ops.any(weight > 0):
            # MMDetection: `if weight is not None and not torch.any(weight > 0)`: a sum that is
            # 0 for zero weights and keeps the graph connected (no loss_weight, no reduction)
            if pred.ndim == weight.ndim + 1:
                weight = weight.expand_dims(1)
            return _sum(tm.mul(pred, weight))
        if mean_weight and weight.ndim > 1:
            if weight.shape != pred.shape:
                raise ValueError(
                    f"a weight of more than 1 dim must have pred's shape {pred.shape}, but got "
                    f"weight.shape={weight.shape}"
                )
            weight = tm.tmean_last(weight)  # MMDetection: (n, 4) -> (n,)
    loss = loss_fn(pred, target, weight, reduction, avg_factor, *config)
    return tm.scale(loss, loss_weight)


class _BoxLoss(nn.Cell):
    """Configuration shared by the IoU-loss Cells."""

    def __init__(self, eps: float, reduction: str, loss_weight: float) -> None:
        super().__init__()
        check_reduction(reduction)
        self.eps = check_number(eps, "eps")
        self.reduction = reduction
        self.loss_weight = check_number(loss_weight, "loss_weight")

    def _reduction(self, reduction_override: Optional[str]) -> str:
        if reduction_override is None:
            return self.reduction
        check_reduction(reduction_override, "reduction_override")
        return reduction_override


_CELL_SHAPE = """
    Shape:
        - pred, target: :math:`(n, 4)` boxes ``(x1, y1, x2, y2)``.
        - weight: :math:`(n,)` or :math:`(n, 4)` (averaged over the last dim).
        - output: scalar, or :math:`(n,)` with ``'none'``."""


class IoULoss(_BoxLoss):
    """IoU loss Cell, MMDetection's ``IoULoss``. See :func:`iou_loss`.

    ``forward(pred, target, weight=None, avg_factor=None, reduction_override=None)``: a
    ``weight`` with no positive entry returns ``(pred * weight).sum()`` unless the reduction is
    ``'none'``; the result is scaled by ``loss_weight``.

    Args:
        linear (bool): deprecated: ``mode='linear'`` (warns). Default: False.
        eps (float): lower bound of the IoU. Default: 1e-6.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.
        mode (str): ``'linear'`` | ``'square'`` | ``'log'``. Default: ``'log'``.
    {shape}

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import IoULoss
        >>> pred = ms.Tensor([[0.0, 0.0, 10.0, 10.0]])
        >>> target = ms.Tensor([[0.0, 0.0, 10.0, 20.0]])
        >>> round(float(IoULoss(mode="linear", loss_weight=2.0)(pred, target)), 4)
        1.0
    """

    def __init__(
        self,
        linear: bool = False,
        eps: float = 1e-6,
        reduction: str = "mean",
        loss_weight: float = 1.0,
        mode: str = "log",
    ) -> None:
        super().__init__(eps, reduction, loss_weight)
        if mode not in _IOU_MODES:
            raise ValueError(f"mode must be one of {_IOU_MODES}, but got {mode!r}")
        if check_bool(linear, "linear"):
            mode = "linear"
            warnings.warn(_LINEAR_WARNING.replace("iou_loss", "IOULoss"), stacklevel=2)
        self.mode = mode
        self.linear = linear

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        reduction = self._reduction(reduction_override)
        return _module_forward(
            iou_loss,
            pred,
            target,
            weight,
            avg_factor,
            reduction,
            self.loss_weight,
            True,
            True,
            False,
            self.mode,
            self.eps,
        )


class BoundedIoULoss(_BoxLoss):
    """Bounded IoU loss Cell, MMDetection's ``BoundedIoULoss``. See :func:`bounded_iou_loss`.

    A ``weight`` with no positive entry returns ``(pred * weight).sum()``; ``weight`` is not
    averaged (the loss is ``(n, 4)``).

    Args:
        beta (float): smooth-L1 threshold. Default: 0.2.
        eps (float): added to the denominators. Default: 1e-3.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.

    Shape:
        - pred, target: :math:`(n, 4)`; weight: :math:`(n, 4)`.
        - output: scalar, or :math:`(n, 4)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import BoundedIoULoss
        >>> pred = ms.Tensor([[0.0, 0.0, 10.0, 10.0]])
        >>> BoundedIoULoss()(pred, pred, reduction_override="none").shape
        (1, 4)
    """

    def __init__(
        self,
        beta: float = 0.2,
        eps: float = 1e-3,
        reduction: str = "mean",
        loss_weight: float = 1.0,
    ) -> None:
        super().__init__(eps, reduction, loss_weight)
        self.beta = check_number(beta, "beta")

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        reduction = self._reduction(reduction_override)
        return _module_forward(
            bounded_iou_loss,
            pred,
            target,
            weight,
            avg_factor,
            reduction,
            self.loss_weight,
            False,
            False,
            self.beta,
            self.eps,
        )


class GIoULoss(_BoxLoss):
    """GIoU loss Cell, MMDetection's ``GIoULoss``. See :func:`giou_loss`.

    A ``weight`` with no positive entry returns ``(pred * weight).sum()`` (any reduction); a
    ``(n, 4)`` weight is averaged to ``(n,)``; the result is scaled by ``loss_weight``.

    Args:
        eps (float): lower bound of the union and enclosing area. Default: 1e-6.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.
    {shape}

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import GIoULoss
        >>> pred = ms.Tensor([[10.0, 10.0, 20.0, 20.0]])
        >>> target = ms.Tensor([[0.0, 0.0, 10.0, 10.0]])
        >>> GIoULoss()(pred, target)
        Tensor(shape=[], dtype=Float32, value= 1.5)
    """

    def __init__(
        self, eps: float = 1e-6, reduction: str = "mean", loss_weight: float = 1.0
    ) -> None:
        super().__init__(eps, reduction, loss_weight)

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        reduction = self._reduction(reduction_override)
        return _module_forward(
            giou_loss,
            pred,
            target,
            weight,
            avg_factor,
            reduction,
            self.loss_weight,
            True,
            False,
            self.eps,
        )


class DIoULoss(GIoULoss):
    """DIoU loss Cell, MMDetection's ``DIoULoss``. See :func:`diou_loss`; the arguments and
    the ``forward`` are :class:`GIoULoss`'s.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import DIoULoss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> round(float(DIoULoss()(pred, target)), 4)
        0.7436
    """

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        reduction = self._reduction(reduction_override)
        return _module_forward(
            diou_loss,
            pred,
            target,
            weight,
            avg_factor,
            reduction,
            self.loss_weight,
            True,
            False,
            self.eps,
        )


class CIoULoss(GIoULoss):
    """CIoU loss Cell, MMDetection's ``CIoULoss``. See :func:`ciou_loss`; the arguments and
    the ``forward`` are :class:`GIoULoss`'s.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import CIoULoss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> round(float(CIoULoss()(pred, target)), 4)
        0.7436
    """

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        reduction = self._reduction(reduction_override)
        return _module_forward(
            ciou_loss,
            pred,
            target,
            weight,
            avg_factor,
            reduction,
            self.loss_weight,
            True,
            False,
            self.eps,
        )


class EIoULoss(_BoxLoss):
    """Smooth EIoU loss Cell, MMDetection's ``EIoULoss``. See :func:`eiou_loss`; the
    ``forward`` is :class:`GIoULoss`'s.

    Args:
        eps (float): added to the union. Default: 1e-6.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.
        smooth_point (float): the threshold. Default: 0.1.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import EIoULoss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> round(float(EIoULoss()(pred, target)), 4)
        0.6167
    """

    def __init__(
        self,
        eps: float = 1e-6,
        reduction: str = "mean",
        loss_weight: float = 1.0,
        smooth_point: float = 0.1,
    ) -> None:
        super().__init__(eps, reduction, loss_weight)
        self.smooth_point = check_number(smooth_point, "smooth_point")

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        reduction = self._reduction(reduction_override)
        return _module_forward(
            eiou_loss,
            pred,
            target,
            weight,
            avg_factor,
            reduction,
            self.loss_weight,
            True,
            False,
            self.smooth_point,
            self.eps,
        )


class SIoULoss(_BoxLoss):
    """SIoU loss Cell, MMDetection's ``SIoULoss``. See :func:`siou_loss`; the ``forward`` is
    :class:`GIoULoss`'s.

    Args:
        eps (float): MMDetection's eps. Default: 1e-6.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.
        neg_gamma (bool): the paper's :math:`\\gamma = \\Lambda - 2`. Default: False.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import SIoULoss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> round(float(SIoULoss()(pred, pred)), 4)
        0.0
    """

    def __init__(
        self,
        eps: float = 1e-6,
        reduction: str = "mean",
        loss_weight: float = 1.0,
        neg_gamma: bool = False,
    ) -> None:
        super().__init__(eps, reduction, loss_weight)
        self.neg_gamma = check_bool(neg_gamma, "neg_gamma")

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        reduction = self._reduction(reduction_override)
        return _module_forward(
            siou_loss,
            pred,
            target,
            weight,
            avg_factor,
            reduction,
            self.loss_weight,
            True,
            False,
            self.eps,
            self.neg_gamma,
        )


for _cls in (IoULoss, GIoULoss):
    _cls.__doc__ = (_cls.__doc__ or "").replace("    {shape}", _CELL_SHAPE.strip("\n"))
