"""Focal loss as in MMDetection (``py_sigmoid_focal_loss``) and a smooth-L1 box loss."""

import torch
import torch.nn.functional as F

try:  # MMDetection's own FocalLoss, when it is installed
    from mmdet.models.losses import FocalLoss
except ImportError:  # pragma: no cover
    FocalLoss = None


def reduce_loss(loss, reduction):
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def py_sigmoid_focal_loss(pred, target, weight=None, gamma=2.0, alpha=0.25, reduction="mean"):
    pred_sigmoid = pred.sigmoid()
    target = target.type_as(pred)
    pt = (1 - pred_sigmoid) * target + pred_sigmoid * (1 - target)
    focal_weight = (alpha * target + (1 - alpha) * (1 - target)) * pt.pow(gamma)
    loss = F.binary_cross_entropy_with_logits(pred, target, reduction="none") * focal_weight
    if weight is not None:
        loss = loss * weight.view(-1, 1)
    return reduce_loss(loss, reduction)


def box_loss(deltas, target_deltas, beta: float = 1.0 / 9):
    return F.smooth_l1_loss(deltas, target_deltas, beta=beta, reduction="sum")


def detection_loss(logits, deltas, labels, target_deltas, num_classes: int):
    """labels: (N, A) int64 with -1 = ignore, 0 = background, k = class k."""
    valid = labels >= 0
    positive = labels > 0
    onehot = F.one_hot(labels.clamp(min=0), num_classes + 1)[..., 1:].float()
    num_pos = positive.sum().clamp(min=1).float()
    cls = py_sigmoid_focal_loss(logits[valid], onehot[valid], reduction="sum") / num_pos
    reg = box_loss(deltas[positive], target_deltas[positive]) / num_pos
    return cls + reg


def build_cls_loss():
    if FocalLoss is not None:
        return FocalLoss(use_sigmoid=True, gamma=2.0, alpha=0.25, loss_weight=1.0)
    return py_sigmoid_focal_loss


def zero_loss_like(x):
    return torch.zeros_like(x).sum()
