# mypy: ignore-errors
# (a transcription of MMDetection's untyped nn.Modules and their buffers: mypy reads its
# register_buffer attributes as Tensor | Module)
"""MMDetection 3.3's box-regression losses and ``bbox_overlaps``, transcribed in plain PyTorch
from ``mmdet/models/losses/{iou,smooth_l1,balanced_l1,mse}_loss.py`` and
``mmdet/structures/bbox/bbox_overlaps.py`` (the GHM and EQLv2 losses are in
:mod:`.mmdet_stateful`).

The oracles of ``mscompat.testing.db.losses_box``: MMDetection's Python line by line (its
no_grad blocks, ``.float()`` casts, ``.item()`` loops and module-level special cases), so
mscompat is checked against MMDetection's numbers without installing MMDetection or mmcv. A
Cell reference is a factory: called with the constructor arguments, it returns the forward.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable, Optional

import numpy as np
import torch
import torch.nn.functional as F

from mscompat.testing.references.mmdet import weighted_loss

Tensor = torch.Tensor


def _fp16_clamp(x: Tensor, min: Any = None, max: Any = None) -> Tensor:
    if not x.is_cuda and x.dtype == torch.float16:
        return x.float().clamp(min, max).half()
    return x.clamp(min, max)


def bbox_overlaps(
    bboxes1: Tensor, bboxes2: Tensor, mode: str = "iou", is_aligned: bool = False, eps: float = 1e-6
) -> Tensor:
    assert mode in ["iou", "iof", "giou"]
    assert bboxes1.size(-1) == 4 or bboxes1.size(0) == 0
    assert bboxes2.size(-1) == 4 or bboxes2.size(0) == 0
    assert bboxes1.shape[:-2] == bboxes2.shape[:-2]
    batch_shape = bboxes1.shape[:-2]
    rows, cols = bboxes1.size(-2), bboxes2.size(-2)
    if is_aligned:
        assert rows == cols
    if rows * cols == 0:
        # MMDetection's bboxes1.new(shape) is uninitialised memory of an empty shape
        return bboxes1.new_zeros(batch_shape + ((rows,) if is_aligned else (rows, cols)))
    area1 = (bboxes1[..., 2] - bboxes1[..., 0]) * (bboxes1[..., 3] - bboxes1[..., 1])
    area2 = (bboxes2[..., 2] - bboxes2[..., 0]) * (bboxes2[..., 3] - bboxes2[..., 1])
    if is_aligned:
        lt = torch.max(bboxes1[..., :2], bboxes2[..., :2])
        rb = torch.min(bboxes1[..., 2:], bboxes2[..., 2:])
        wh = _fp16_clamp(rb - lt, min=0)
        overlap = wh[..., 0] * wh[..., 1]
        union = area1 + area2 - overlap if mode in ["iou", "giou"] else area1
        if mode == "giou":
            enclosed_lt = torch.min(bboxes1[..., :2], bboxes2[..., :2])
            enclosed_rb = torch.max(bboxes1[..., 2:], bboxes2[..., 2:])
    else:
        lt = torch.max(bboxes1[..., :, None, :2], bboxes2[..., None, :, :2])
        rb = torch.min(bboxes1[..., :, None, 2:], bboxes2[..., None, :, 2:])
        wh = _fp16_clamp(rb - lt, min=0)
        overlap = wh[..., 0] * wh[..., 1]
        if mode in ["iou", "giou"]:
            union = area1[..., None] + area2[..., None, :] - overlap
        else:
            union = area1[..., None]
        if mode == "giou":
            enclosed_lt = torch.min(bboxes1[..., :, None, :2], bboxes2[..., None, :, :2])
            enclosed_rb = torch.max(bboxes1[..., :, None, 2:], bboxes2[..., None, :, 2:])
    eps_t = union.new_tensor([eps])
    union = torch.max(union, eps_t)
    ious = overlap / union
    if mode in ["iou", "iof"]:
        return ious
    enclose_wh = _fp16_clamp(enclosed_rb - enclosed_lt, min=0)
    enclose_area = enclose_wh[..., 0] * enclose_wh[..., 1]
    enclose_area = torch.max(enclose_area, eps_t)
    return ious - (enclose_area - union) / enclose_area


# ----------------------------------------------------------------------------- iou_loss.py


@weighted_loss
def iou_loss(
    pred: Tensor, target: Tensor, linear: bool = False, mode: str = "log", eps: float = 1e-6
) -> Tensor:
    assert mode in ["linear", "square", "log"]
    if linear:
        mode = "linear"
    fp16 = pred.dtype == torch.float16
    if fp16:
        pred = pred.to(torch.float32)
    ious = bbox_overlaps(pred, target, is_aligned=True).clamp(min=eps)
    if fp16:
        ious = ious.to(torch.float16)
    if mode == "linear":
        return 1 - ious
    if mode == "square":
        return 1 - ious**2
    return -ious.log()


@weighted_loss
def bounded_iou_loss(pred: Tensor, target: Tensor, beta: float = 0.2, eps: float = 1e-3) -> Tensor:
    pred_ctrx = (pred[:, 0] + pred[:, 2]) * 0.5
    pred_ctry = (pred[:, 1] + pred[:, 3]) * 0.5
    pred_w = pred[:, 2] - pred[:, 0]
    pred_h = pred[:, 3] - pred[:, 1]
    with torch.no_grad():
        target_ctrx = (target[:, 0] + target[:, 2]) * 0.5
        target_ctry = (target[:, 1] + target[:, 3]) * 0.5
        target_w = target[:, 2] - target[:, 0]
        target_h = target[:, 3] - target[:, 1]
    dx = target_ctrx - pred_ctrx
    dy = target_ctry - pred_ctry
    loss_dx = 1 - torch.max(
        (target_w - 2 * dx.abs()) / (target_w + 2 * dx.abs() + eps), torch.zeros_like(dx)
    )
    loss_dy = 1 - torch.max(
        (target_h - 2 * dy.abs()) / (target_h + 2 * dy.abs() + eps), torch.zeros_like(dy)
    )
    loss_dw = 1 - torch.min(target_w / (pred_w + eps), pred_w / (target_w + eps))
    loss_dh = 1 - torch.min(target_h / (pred_h + eps), pred_h / (target_h + eps))
    loss_comb = torch.stack([loss_dx, loss_dy, loss_dw, loss_dh], dim=-1).flatten(1)
    return torch.where(loss_comb < beta, 0.5 * loss_comb * loss_comb / beta, loss_comb - 0.5 * beta)


@weighted_loss
def giou_loss(pred: Tensor, target: Tensor, eps: float = 1e-7) -> Tensor:
    fp16 = pred.dtype == torch.float16
    if fp16:
        pred = pred.to(torch.float32)
    gious = bbox_overlaps(pred, target, mode="giou", is_aligned=True, eps=eps)
    if fp16:
        gious = gious.to(torch.float16)
    return 1 - gious


def _centre_terms(pred: Tensor, target: Tensor, eps: float) -> Any:
    """The lines DIoU, CIoU and SIoU share: ious, enclosing box, corners."""
    lt = torch.max(pred[:, :2], target[:, :2])
    rb = torch.min(pred[:, 2:], target[:, 2:])
    wh = (rb - lt).clamp(min=0)
    overlap = wh[:, 0] * wh[:, 1]
    ap = (pred[:, 2] - pred[:, 0]) * (pred[:, 3] - pred[:, 1])
    ag = (target[:, 2] - target[:, 0]) * (target[:, 3] - target[:, 1])
    union = ap + ag - overlap + eps
    ious = overlap / union
    enclose_x1y1 = torch.min(pred[:, :2], target[:, :2])
    enclose_x2y2 = torch.max(pred[:, 2:], target[:, 2:])
    return ious, enclose_x1y1, enclose_x2y2


@weighted_loss
def diou_loss(pred: Tensor, target: Tensor, eps: float = 1e-7) -> Tensor:
    ious, e1, e2 = _centre_terms(pred, target, eps)
    enclose_wh = (e2 - e1).clamp(min=0)
    cw, ch = enclose_wh[:, 0], enclose_wh[:, 1]
    c2 = cw**2 + ch**2 + eps
    b1_x1, b1_y1, b1_x2, b1_y2 = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    b2_x1, b2_y1, b2_x2, b2_y2 = target[:, 0], target[:, 1], target[:, 2], target[:, 3]
    left = ((b2_x1 + b2_x2) - (b1_x1 + b1_x2)) ** 2 / 4
    right = ((b2_y1 + b2_y2) - (b1_y1 + b1_y2)) ** 2 / 4
    rho2 = left + right
    return 1 - (ious - rho2 / c2)


@weighted_loss
def ciou_loss(pred: Tensor, target: Tensor, eps: float = 1e-7) -> Tensor:
    ious, e1, e2 = _centre_terms(pred, target, eps)
    enclose_wh = (e2 - e1).clamp(min=0)
    cw, ch = enclose_wh[:, 0], enclose_wh[:, 1]
    c2 = cw**2 + ch**2 + eps
    b1_x1, b1_y1, b1_x2, b1_y2 = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    b2_x1, b2_y1, b2_x2, b2_y2 = target[:, 0], target[:, 1], target[:, 2], target[:, 3]
    w1, h1 = b1_x2 - b1_x1, b1_y2 - b1_y1 + eps
    w2, h2 = b2_x2 - b2_x1, b2_y2 - b2_y1 + eps
    left = ((b2_x1 + b2_x2) - (b1_x1 + b1_x2)) ** 2 / 4
    right = ((b2_y1 + b2_y2) - (b1_y1 + b1_y2)) ** 2 / 4
    rho2 = left + right
    factor = 4 / math.pi**2
    v = factor * torch.pow(torch.atan(w2 / h2) - torch.atan(w1 / h1), 2)
    with torch.no_grad():
        alpha = (ious > 0.5).float() * v / (1 - ious + v)
    cious = ious - (rho2 / c2 + alpha * v)
    return 1 - cious.clamp(min=-1.0, max=1.0)


@weighted_loss
def eiou_loss(pred: Tensor, target: Tensor, smooth_point: float = 0.1, eps: float = 1e-7) -> Tensor:
    px1, py1, px2, py2 = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    tx1, ty1, tx2, ty2 = target[:, 0], target[:, 1], target[:, 2], target[:, 3]
    ex1, ey1 = torch.min(px1, tx1), torch.min(py1, ty1)
    ix1, iy1 = torch.max(px1, tx1), torch.max(py1, ty1)
    ix2, iy2 = torch.min(px2, tx2), torch.min(py2, ty2)
    xmin, ymin = torch.min(ix1, ix2), torch.min(iy1, iy2)
    xmax, ymax = torch.max(ix1, ix2), torch.max(iy1, iy2)
    intersection = (
        (ix2 - ex1) * (iy2 - ey1)
        + (xmin - ex1) * (ymin - ey1)
        - (ix1 - ex1) * (ymax - ey1)
        - (xmax - ex1) * (iy1 - ey1)
    )
    union = (px2 - px1) * (py2 - py1) + (tx2 - tx1) * (ty2 - ty1) - intersection + eps
    ious = 1 - (intersection / union)
    smooth_sign = (ious < smooth_point).detach().float()
    return 0.5 * smooth_sign * (ious**2) / smooth_point + (1 - smooth_sign) * (
        ious - 0.5 * smooth_point
    )


@weighted_loss
def siou_loss(pred: Tensor, target: Tensor, eps: float = 1e-7, neg_gamma: bool = False) -> Tensor:
    ious, e1, e2 = _centre_terms(pred, target, eps)
    enclose_wh = (e2 - e1).clamp(min=eps)
    cw, ch = enclose_wh[:, 0], enclose_wh[:, 1]
    b1_x1, b1_y1, b1_x2, b1_y2 = pred[:, 0], pred[:, 1], pred[:, 2], pred[:, 3]
    b2_x1, b2_y1, b2_x2, b2_y2 = target[:, 0], target[:, 1], target[:, 2], target[:, 3]
    w1, h1 = b1_x2 - b1_x1, b1_y2 - b1_y1 + eps
    w2, h2 = b2_x2 - b2_x1, b2_y2 - b2_y1 + eps
    s_cw = (b2_x1 + b2_x2 - b1_x1 - b1_x2) * 0.5 + eps
    s_ch = (b2_y1 + b2_y2 - b1_y1 - b1_y2) * 0.5 + eps
    sigma = torch.pow(s_cw**2 + s_ch**2, 0.5)
    sin_alpha_1 = torch.abs(s_cw) / sigma
    sin_alpha_2 = torch.abs(s_ch) / sigma
    threshold = pow(2, 0.5) / 2
    sin_alpha = torch.where(sin_alpha_1 > threshold, sin_alpha_2, sin_alpha_1)
    angle_cost = torch.cos(torch.asin(sin_alpha) * 2 - math.pi / 2)
    rho_x = (s_cw / cw) ** 2
    rho_y = (s_ch / ch) ** 2
    gamma = angle_cost - 2 if neg_gamma else 2 - angle_cost
    distance_cost = 2 - torch.exp(gamma * rho_x) - torch.exp(gamma * rho_y)
    omiga_w = torch.abs(w1 - w2) / torch.max(w1, w2)
    omiga_h = torch.abs(h1 - h2) / torch.max(h1, h2)
    shape_cost = torch.pow(1 - torch.exp(-1 * omiga_w), 4) + torch.pow(
        1 - torch.exp(-1 * omiga_h), 4
    )
    sious = ious - 0.5 * (distance_cost + shape_cost)
    return 1 - sious.clamp(min=-1.0, max=1.0)


def _box_module(fn: Callable[..., Tensor], mean_weight: bool, zero_unless_none: bool) -> Any:
    """The ``forward`` MMDetection's IoU-loss modules share, around ``fn``."""

    def factory(loss_weight: float = 1.0, reduction: str = "mean", **config: Any) -> Any:
        def forward(
            pred: Tensor,
            target: Tensor,
            weight: Optional[Tensor] = None,
            avg_factor: Any = None,
            reduction_override: Optional[str] = None,
        ) -> Tensor:
            assert reduction_override in (None, "none", "mean", "sum")
            red = reduction_override if reduction_override else reduction
            if (
                weight is not None
                and not torch.any(weight > 0)
                and (red != "none" or not zero_unless_none)
            ):
                if pred.dim() == weight.dim() + 1:
                    weight = weight.unsqueeze(1)
                return (pred * weight).sum()
            if mean_weight and weight is not None and weight.dim() > 1:
                assert weight.shape == pred.shape
                weight = weight.mean(-1)
            return loss_weight * fn(
                pred, target, weight, reduction=red, avg_factor=avg_factor, **config
            )

        return forward

    return factory


def _iou_config(linear: bool = False, eps: float = 1e-6, mode: str = "log", **rest: Any) -> Any:
    if linear:
        mode = "linear"
    return dict(rest, mode=mode, eps=eps)


def IoULoss(**kw: Any) -> Any:  # noqa: N802 - MMDetection's class name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _box_module(iou_loss, True, True)(**_iou_config(**kw))


def BoundedIoULoss(beta: float = 0.2, eps: float = 1e-3, **kw: Any) -> Any:  # noqa: N802
    return _box_module(bounded_iou_loss, False, False)(beta=beta, eps=eps, **kw)


def GIoULoss(eps: float = 1e-6, **kw: Any) -> Any:  # noqa: N802
    return _box_module(giou_loss, True, False)(eps=eps, **kw)


def DIoULoss(eps: float = 1e-6, **kw: Any) -> Any:  # noqa: N802
    return _box_module(diou_loss, True, False)(eps=eps, **kw)


def CIoULoss(eps: float = 1e-6, **kw: Any) -> Any:  # noqa: N802
    return _box_module(ciou_loss, True, False)(eps=eps, **kw)


def EIoULoss(eps: float = 1e-6, smooth_point: float = 0.1, **kw: Any) -> Any:  # noqa: N802
    return _box_module(eiou_loss, True, False)(eps=eps, smooth_point=smooth_point, **kw)


def SIoULoss(eps: float = 1e-6, neg_gamma: bool = False, **kw: Any) -> Any:  # noqa: N802
    return _box_module(siou_loss, True, False)(eps=eps, neg_gamma=neg_gamma, **kw)


# ----------------------------------------------------------------- smooth_l1 / balanced / mse


@weighted_loss
def smooth_l1_loss(pred: Tensor, target: Tensor, beta: float = 1.0) -> Tensor:
    assert beta > 0
    if target.numel() == 0:
        return pred.sum() * 0
    assert pred.size() == target.size()
    diff = torch.abs(pred - target)
    return torch.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)


@weighted_loss
def l1_loss(pred: Tensor, target: Tensor) -> Tensor:
    if target.numel() == 0:
        return pred.sum() * 0
    assert pred.size() == target.size()
    return torch.abs(pred - target)


@weighted_loss
def balanced_l1_loss(
    pred: Tensor,
    target: Tensor,
    beta: float = 1.0,
    alpha: float = 0.5,
    gamma: float = 1.5,
    reduction: str = "mean",
) -> Tensor:
    assert beta > 0
    if target.numel() == 0:
        return pred.sum() * 0
    assert pred.size() == target.size()
    diff = torch.abs(pred - target)
    b = np.e ** (gamma / alpha) - 1
    return torch.where(
        diff < beta,
        alpha / b * (b * diff + 1) * torch.log(b * diff / beta + 1) - alpha * diff,
        gamma * diff + gamma / b - alpha * beta,
    )


@weighted_loss
def mse_loss(pred: Tensor, target: Tensor) -> Tensor:
    return F.mse_loss(pred, target, reduction="none")


def _plain_module(fn: Callable[..., Tensor], zero_weight: bool) -> Any:
    def factory(reduction: str = "mean", loss_weight: float = 1.0, **config: Any) -> Any:
        def forward(
            pred: Tensor,
            target: Tensor,
            weight: Optional[Tensor] = None,
            avg_factor: Any = None,
            reduction_override: Optional[str] = None,
        ) -> Tensor:
            if zero_weight and weight is not None and not torch.any(weight > 0):
                if pred.dim() == weight.dim() + 1:
                    weight = weight.unsqueeze(1)
                return (pred * weight).sum()
            assert reduction_override in (None, "none", "mean", "sum")
            red = reduction_override if reduction_override else reduction
            return loss_weight * fn(
                pred, target, weight, reduction=red, avg_factor=avg_factor, **config
            )

        return forward

    return factory


def SmoothL1Loss(beta: float = 1.0, **kw: Any) -> Any:  # noqa: N802
    return _plain_module(smooth_l1_loss, True)(beta=beta, **kw)


def L1Loss(**kw: Any) -> Any:  # noqa: N802
    return _plain_module(l1_loss, True)(**kw)


def BalancedL1Loss(  # noqa: N802
    alpha: float = 0.5, gamma: float = 1.5, beta: float = 1.0, **kw: Any
) -> Any:
    return _plain_module(balanced_l1_loss, False)(alpha=alpha, gamma=gamma, beta=beta, **kw)


def MSELoss(**kw: Any) -> Any:  # noqa: N802
    return _plain_module(mse_loss, False)(**kw)
