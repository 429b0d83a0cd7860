"""MMDetection 3.3's segmentation and distillation losses and its accuracy metric, transcribed
in plain PyTorch from ``mmdet/models/losses`` (``dice_loss.py``, ``kd_loss.py``,
``accuracy.py``), as :mod:`.mmdet_cls` transcribes the classification losses (its conventions).
"""

from __future__ import annotations

from typing import Any, Callable

import torch
import torch.nn.functional as F

from mscompat.testing.references.mmdet import weight_reduce_loss, weighted_loss

Fn = Callable[..., Any]


# -------------------------------------------------------------------------- dice_loss.py


def dice_loss(
    pred, target, weight=None, eps=1e-3, reduction="mean", naive_dice=False, avg_factor=None
):
    input = pred.flatten(1)
    target = target.flatten(1).float()
    a = torch.sum(input * target, 1)
    if naive_dice:
        b = torch.sum(input, 1)
        c = torch.sum(target, 1)
        d = (2 * a + eps) / (b + c + eps)
    else:
        b = torch.sum(input * input, 1) + eps
        c = torch.sum(target * target, 1) + eps
        d = (2 * a) / (b + c)
    loss = 1 - d
    if weight is not None:
        assert weight.ndim == loss.ndim
        assert len(weight) == len(pred)
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


def dice_module(
    use_sigmoid=True, activate=True, reduction="mean", naive_dice=False, loss_weight=1.0, eps=1e-3
) -> Fn:
    def forward(pred, target, weight=None, reduction_override=None, avg_factor=None):
        red = reduction_override if reduction_override else reduction
        if activate:
            if use_sigmoid:
                pred = pred.sigmoid()
            else:
                raise NotImplementedError
        return loss_weight * dice_loss(
            pred,
            target,
            weight,
            eps=eps,
            reduction=red,
            naive_dice=naive_dice,
            avg_factor=avg_factor,
        )

    return forward


# ---------------------------------------------------------------------------- kd_loss.py


@weighted_loss
def knowledge_distillation_kl_div_loss(pred, soft_label, T, detach_target=True):
    assert pred.size() == soft_label.size()
    target = F.softmax(soft_label / T, dim=1)
    if detach_target:
        target = target.detach()
    return F.kl_div(F.log_softmax(pred / T, dim=1), target, reduction="none").mean(1) * (T * T)


def kd_module(reduction="mean", loss_weight=1.0, T=10) -> Fn:
    assert T >= 1

    def forward(pred, soft_label, weight=None, avg_factor=None, reduction_override=None):
        red = reduction_override if reduction_override else reduction
        return loss_weight * knowledge_distillation_kl_div_loss(
            pred, soft_label, weight, reduction=red, avg_factor=avg_factor, T=T
        )

    return forward


# --------------------------------------------------------------------------- accuracy.py


def accuracy(pred, target, topk=1, thresh=None):
    assert isinstance(topk, (int, tuple))
    if isinstance(topk, int):
        topk = (topk,)
        return_single = True
    else:
        return_single = False
    maxk = max(topk)
    if pred.size(0) == 0:
        accu = [pred.new_tensor(0.0) for i in range(len(topk))]
        return accu[0] if return_single else accu
    assert pred.ndim == 2 and target.ndim == 1
    assert pred.size(0) == target.size(0)
    assert maxk <= pred.size(1)
    pred_value, pred_label = pred.topk(maxk, dim=1)
    pred_label = pred_label.t()
    correct = pred_label.eq(target.view(1, -1).expand_as(pred_label))
    if thresh is not None:
        correct = correct & (pred_value > thresh).t()
    res = []
    for k in topk:
        correct_k = correct[:k].reshape(-1).float().sum(0, keepdim=True)
        res.append(correct_k.mul_(100.0 / pred.size(0)))
    return res[0] if return_single else res


def accuracy_module(topk=(1,), thresh=None) -> Fn:
    return lambda pred, target: accuracy(pred, target, topk, thresh)
