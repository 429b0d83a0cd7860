# mypy: ignore-errors
# (a transcription of MMDetection's untyped nn.Modules and their buffers: mypy reads its
# register_buffer attributes as Tensor | Module)
"""MMDetection 3.3's box-regression, GHM and EQLv2 losses and ``bbox_overlaps``, transcribed
in plain PyTorch from ``mmdet/models/losses/{iou,smooth_l1,balanced_l1,mse,ghm,eqlv2}_loss.py``
and ``mmdet/structures/bbox/bbox_overlaps.py``.

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

from mscompat.testing.references.mmdet import weight_reduce_loss, weighted_loss

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


# ----------------------------------------------------------------------------- ghm_loss.py


def _expand_onehot_labels(labels: Tensor, label_weights: Tensor, label_channels: int) -> Any:
    bin_labels = labels.new_full((labels.size(0), label_channels), 0)
    inds = torch.nonzero((labels >= 0) & (labels < label_channels), as_tuple=False).squeeze()
    if inds.numel() > 0:
        bin_labels[inds, labels[inds]] = 1
    bin_label_weights = label_weights.view(-1, 1).expand(label_weights.size(0), label_channels)
    return bin_labels, bin_label_weights


class GHMCModule(torch.nn.Module):
    """``mmdet.models.losses.GHMC``."""

    def __init__(self, bins=10, momentum=0, use_sigmoid=True, loss_weight=1.0, reduction="mean"):  # type: ignore[no-untyped-def]
        super().__init__()
        self.bins = bins
        self.momentum = momentum
        edges = torch.arange(bins + 1).float() / bins
        self.register_buffer("edges", edges)
        self.edges[-1] += 1e-6
        if momentum > 0:
            self.register_buffer("acc_sum", torch.zeros(bins))
        if not use_sigmoid:
            raise NotImplementedError
        self.loss_weight = loss_weight
        self.reduction = reduction

    def forward(self, pred, target, label_weight, reduction_override=None):  # type: ignore[no-untyped-def]
        assert reduction_override in (None, "none", "mean", "sum")
        reduction = reduction_override if reduction_override else self.reduction
        if pred.dim() != target.dim():
            target, label_weight = _expand_onehot_labels(target, label_weight, pred.size(-1))
        target, label_weight = target.float(), label_weight.float()
        edges = self.edges
        mmt = self.momentum
        weights = torch.zeros_like(pred)
        g = torch.abs(pred.sigmoid().detach() - target)
        valid = label_weight > 0
        tot = max(valid.float().sum().item(), 1.0)
        n = 0
        for i in range(self.bins):
            inds = (g >= edges[i]) & (g < edges[i + 1]) & valid
            num_in_bin = inds.sum().item()
            if num_in_bin > 0:
                if mmt > 0:
                    self.acc_sum[i] = mmt * self.acc_sum[i] + (1 - mmt) * num_in_bin
                    weights[inds] = tot / self.acc_sum[i]
                else:
                    weights[inds] = tot / num_in_bin
                n += 1
        if n > 0:
            weights = weights / n
        loss = F.binary_cross_entropy_with_logits(pred, target, reduction="none")
        loss = weight_reduce_loss(loss, weights, reduction=reduction, avg_factor=tot)
        return loss * self.loss_weight


class GHMRModule(torch.nn.Module):
    """``mmdet.models.losses.GHMR``."""

    def __init__(self, mu=0.02, bins=10, momentum=0, loss_weight=1.0, reduction="mean"):  # type: ignore[no-untyped-def]
        super().__init__()
        self.mu = mu
        self.bins = bins
        edges = torch.arange(bins + 1).float() / bins
        self.register_buffer("edges", edges)
        self.edges[-1] = 1e3
        self.momentum = momentum
        if momentum > 0:
            self.register_buffer("acc_sum", torch.zeros(bins))
        self.loss_weight = loss_weight
        self.reduction = reduction

    def forward(self, pred, target, label_weight, avg_factor=None, reduction_override=None):  # type: ignore[no-untyped-def]
        assert reduction_override in (None, "none", "mean", "sum")
        reduction = reduction_override if reduction_override else self.reduction
        mu = self.mu
        edges = self.edges
        mmt = self.momentum
        diff = pred - target
        loss = torch.sqrt(diff * diff + mu * mu) - mu
        g = torch.abs(diff / torch.sqrt(mu * mu + diff * diff)).detach()
        weights = torch.zeros_like(g)
        valid = label_weight > 0
        tot = max(label_weight.float().sum().item(), 1.0)
        n = 0
        for i in range(self.bins):
            inds = (g >= edges[i]) & (g < edges[i + 1]) & valid
            num_in_bin = inds.sum().item()
            if num_in_bin > 0:
                n += 1
                if mmt > 0:
                    self.acc_sum[i] = mmt * self.acc_sum[i] + (1 - mmt) * num_in_bin
                    weights[inds] = tot / self.acc_sum[i]
                else:
                    weights[inds] = tot / num_in_bin
        if n > 0:
            weights /= n
        loss = weight_reduce_loss(loss, weights, reduction=reduction, avg_factor=tot)
        return loss * self.loss_weight


def GHMC(**kw: Any) -> Any:  # noqa: N802
    """A fresh ``GHMC`` per call (the op database compares one step; steps: the module)."""
    return lambda *a, **k: GHMCModule(**kw)(*a, **k)


def GHMR(**kw: Any) -> Any:  # noqa: N802
    return lambda *a, **k: GHMRModule(**kw)(*a, **k)


# ----------------------------------------------------------------------------- eqlv2_loss.py


class EQLV2Module(torch.nn.Module):
    """``mmdet.models.losses.EQLV2Loss`` (``use_distributed=False``; no logging)."""

    def __init__(  # type: ignore[no-untyped-def]
        self,
        use_sigmoid=True,
        reduction="mean",
        class_weight=None,
        loss_weight=1.0,
        num_classes=1203,
        use_distributed=False,
        mu=0.8,
        alpha=4.0,
        gamma=12,
        vis_grad=False,
        test_with_obj=True,
    ):
        super().__init__()
        self.use_sigmoid = True
        self.reduction = reduction
        self.loss_weight = loss_weight
        self.class_weight = class_weight
        self.num_classes = num_classes
        self.vis_grad = vis_grad
        self.mu, self.alpha, self.gamma = mu, alpha, gamma
        self.use_distributed = use_distributed
        self.register_buffer("pos_grad", torch.zeros(self.num_classes))
        self.register_buffer("neg_grad", torch.zeros(self.num_classes))
        self.register_buffer("pos_neg", torch.ones(self.num_classes) * 100)
        self.test_with_obj = test_with_obj

        def _func(x, gamma, mu):  # type: ignore[no-untyped-def]
            return 1 / (1 + torch.exp(-gamma * (x - mu)))

        self.map_func = lambda x: _func(x, gamma=self.gamma, mu=self.mu)

    def forward(self, cls_score, label, weight=None, avg_factor=None, reduction_override=None):  # type: ignore[no-untyped-def]
        self.n_i, self.n_c = cls_score.size()
        target = cls_score.new_zeros(self.n_i, self.n_c)
        target[torch.arange(self.n_i), label] = 1
        pos_w, neg_w = self.get_weight(cls_score)
        weight = pos_w * target + neg_w * (1 - target)
        cls_loss = F.binary_cross_entropy_with_logits(cls_score, target, reduction="none")
        cls_loss = torch.sum(cls_loss * weight) / self.n_i
        self.collect_grad(cls_score.detach(), target.detach(), weight.detach())
        return self.loss_weight * cls_loss

    def collect_grad(self, pred, target, weight):  # type: ignore[no-untyped-def]
        prob = torch.sigmoid(pred)
        grad = target * (prob - 1) + (1 - target) * prob
        grad = torch.abs(grad)
        pos_grad = torch.sum(grad * target * weight, dim=0)[:-1]
        neg_grad = torch.sum(grad * (1 - target) * weight, dim=0)[:-1]
        self.pos_grad += pos_grad
        self.neg_grad += neg_grad
        self.pos_neg = self.pos_grad / (self.neg_grad + 1e-10)

    def get_weight(self, pred):  # type: ignore[no-untyped-def]
        neg_w = torch.cat([self.map_func(self.pos_neg), pred.new_ones(1)])
        pos_w = 1 + self.alpha * (1 - neg_w)
        neg_w = neg_w.view(1, -1).expand(self.n_i, self.n_c)
        pos_w = pos_w.view(1, -1).expand(self.n_i, self.n_c)
        return pos_w, neg_w


def EQLV2Loss(**kw: Any) -> Any:  # noqa: N802
    return lambda *a, **k: EQLV2Module(**kw)(*a, **k)


# The functional forms of mscompat (the state passed in and returned), run on MMDetection's
# modules with their buffers set to that state.


def ghmc_loss(
    pred: Tensor,
    target: Tensor,
    label_weight: Tensor,
    bins: int = 10,
    momentum: float = 0.0,
    acc_sum: Optional[Tensor] = None,
    reduction: str = "mean",
    loss_weight: float = 1.0,
) -> Any:
    module = GHMCModule(bins, momentum, True, loss_weight, reduction)
    if momentum > 0 and acc_sum is not None:
        module.acc_sum.copy_(acc_sum)
    loss = module(pred, target, label_weight)
    return loss, (module.acc_sum.clone() if momentum > 0 else acc_sum)


def ghmr_loss(
    pred: Tensor,
    target: Tensor,
    label_weight: Tensor,
    mu: float = 0.02,
    bins: int = 10,
    momentum: float = 0.0,
    acc_sum: Optional[Tensor] = None,
    reduction: str = "mean",
    loss_weight: float = 1.0,
) -> Any:
    module = GHMRModule(mu, bins, momentum, loss_weight, reduction)
    if momentum > 0 and acc_sum is not None:
        module.acc_sum.copy_(acc_sum)
    loss = module(pred, target, label_weight)
    return loss, (module.acc_sum.clone() if momentum > 0 else acc_sum)


def eqlv2_loss(
    cls_score: Tensor,
    label: Tensor,
    pos_grad: Tensor,
    neg_grad: Tensor,
    pos_neg: Tensor,
    mu: float = 0.8,
    alpha: float = 4.0,
    gamma: float = 12.0,
    loss_weight: float = 1.0,
) -> Any:
    module = EQLV2Module(
        num_classes=pos_grad.numel(), mu=mu, alpha=alpha, gamma=gamma, loss_weight=loss_weight
    )
    module.pos_grad.copy_(pos_grad)
    module.neg_grad.copy_(neg_grad)
    module.pos_neg = pos_neg.detach().clone()
    loss = module(cls_score, label)
    return loss, module.pos_grad.clone(), module.neg_grad.clone(), module.pos_neg.clone()
