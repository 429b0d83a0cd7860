"""MMDetection's Bounded IoU, EIoU and SIoU box losses (see :mod:`mscompat.losses.iou` for the
conventions they share with IoU, GIoU, DIoU and CIoU).

Mirrors ``mmdet/models/losses/iou_loss.py`` (MMDetection 3.3). float16 follows PyTorch on CPU
op by op (EIoU returns float32 there, as MMDetection's ``.float()`` makes it).
"""

from __future__ import annotations

import math
from typing import Optional

from mindspore import Tensor, ops

from mscompat._checks import check_bool, check_number
from mscompat.losses import _iou_common as common
from mscompat.losses import _torch_math as tm
from mscompat.losses.utils import AvgFactor, _promote

__all__ = [
    "BoundedIoULoss",
    "EIoULoss",
    "SIoULoss",
    "bounded_iou_loss",
    "eiou_loss",
    "siou_loss",
]

_HALF_PI = math.pi / 2
_SIN_45 = 2**0.5 / 2


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


def _gap_left_to_right(pred: Tensor, target: Tensor, i: int) -> Tensor:
    """``t[i] + t[i+2] - p[i] - p[i+2]``, evaluated left to right."""
    return tm.sub(tm.sub(tm.add(target[:, i], target[:, i + 2]), pred[:, i]), pred[:, i + 2])


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
    sign = tm.stop(tm.compare_scalar(lambda x, s: x < s, ious, smooth_point)).astype(common.F32)
    quad = tm.div(tm.mul(tm.mul(0.5, sign), tm.square(ious)), smooth_point)
    lin = tm.mul(tm.sub(1.0, sign), tm.ew(lambda x, s: x - 0.5 * s, ious, smooth_point))
    return tm.add(quad, lin)


def _siou_elementwise(pred: Tensor, target: Tensor, eps: float, neg_gamma: bool) -> Tensor:
    ious, e1, e2 = common.centre_terms(pred, target, eps)
    enclose_wh = tm.clamp_min(tm.sub(e2, e1), eps)  # MMDetection: clamp(min=eps), not 0
    cw, ch = enclose_wh[:, 0], enclose_wh[:, 1]
    w1, h1 = common.wh(pred, eps)
    w2, h2 = common.wh(target, eps)
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
    return tm.sub(1.0, common.clamp_unit(sious))


# ----------------------------------------------------------------------------- functions


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
    pred, target = common.check_boxes(pred, target, reduction, avg_factor)
    check_number(beta, "beta")
    check_number(eps, "eps")
    return common.finish(
        _bounded_elementwise,
        pred,
        target,
        weight,
        reduction,
        avg_factor,
        common.promoted(pred, target),
        4,
        beta,
        eps,
    )


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
    pred, target = common.check_boxes(pred, target, reduction, avg_factor)
    check_number(smooth_point, "smooth_point")
    check_number(eps, "eps")
    dtype = _promote(common.promoted(pred, target), common.F32)
    return common.simple(
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
    pred, target = common.check_boxes(pred, target, reduction, avg_factor)
    check_number(eps, "eps")
    check_bool(neg_gamma, "neg_gamma")
    dtype = common.promoted(pred, target)
    return common.simple(
        _siou_elementwise, pred, target, weight, reduction, avg_factor, dtype, eps, neg_gamma
    )


common.fill_docs(bounded_iou_loss, eiou_loss, siou_loss)


# ----------------------------------------------------------------------------- Cells


class BoundedIoULoss(common.BoxLoss):
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
        super().__init__(eps, reduction, loss_weight, mean_weight=False)
        self.beta = check_number(beta, "beta")

    def _loss(self, p: Tensor, t: Tensor, w: Optional[Tensor], r: str, af: AvgFactor) -> Tensor:
        return bounded_iou_loss(p, t, w, r, af, self.beta, self.eps)


class EIoULoss(common.BoxLoss):
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

    def _loss(self, p: Tensor, t: Tensor, w: Optional[Tensor], r: str, af: AvgFactor) -> Tensor:
        return eiou_loss(p, t, w, r, af, self.smooth_point, self.eps)


class SIoULoss(common.BoxLoss):
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

    def _loss(self, p: Tensor, t: Tensor, w: Optional[Tensor], r: str, af: AvgFactor) -> Tensor:
        return siou_loss(p, t, w, r, af, self.eps, self.neg_gamma)
