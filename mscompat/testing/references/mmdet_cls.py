"""MMDetection 3.3's classification and heatmap losses, transcribed
in plain PyTorch from ``mmdet/models/losses`` (``cross_entropy_loss.py``, ``focal_loss.py``,
``varifocal_loss.py``, ``gfocal_loss.py``, ``gaussian_focal_loss.py``, ``seesaw_loss.py``;
``dice_loss.py``, ``kd_loss.py`` and ``accuracy.py`` are in :mod:`.mmdet_misc`).

These are the oracles: they follow MMDetection's Python line by line (MMDetection's ``assert``s
become ``AssertionError``s here as there), so mscompat is checked against MMDetection's numbers
without installing MMDetection or mmcv. The Cell factories take the constructor arguments and
return MMDetection's ``forward``.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

import torch
import torch.nn.functional as F

from mscompat.testing.references.mmdet import (
    py_sigmoid_focal_loss,
    weight_reduce_loss,
    weighted_loss,
)

Fn = Callable[..., Any]


# ------------------------------------------------------------------ cross_entropy_loss.py


def cross_entropy(
    pred,
    label,
    weight=None,
    reduction="mean",
    avg_factor=None,
    class_weight=None,
    ignore_index=-100,
    avg_non_ignore=False,
):
    ignore_index = -100 if ignore_index is None else ignore_index
    loss = F.cross_entropy(
        pred, label, weight=class_weight, reduction="none", ignore_index=ignore_index
    )
    if (avg_factor is None) and avg_non_ignore and reduction == "mean":
        avg_factor = label.numel() - (label == ignore_index).sum().item()
    if weight is not None:
        weight = weight.float()
    return weight_reduce_loss(loss, weight=weight, reduction=reduction, avg_factor=avg_factor)


def _expand_onehot_labels(labels, label_weights, label_channels, ignore_index):
    bin_labels = labels.new_full((labels.size(0), label_channels), 0)
    valid_mask = (labels >= 0) & (labels != ignore_index)
    inds = torch.nonzero(valid_mask & (labels < label_channels), as_tuple=False)
    if inds.numel() > 0:
        bin_labels[inds, labels[inds]] = 1
    valid_mask = valid_mask.view(-1, 1).expand(labels.size(0), label_channels).float()
    if label_weights is None:
        bin_label_weights = valid_mask
    else:
        bin_label_weights = label_weights.view(-1, 1).repeat(1, label_channels)
        bin_label_weights *= valid_mask
    return bin_labels, bin_label_weights, valid_mask


def binary_cross_entropy(
    pred,
    label,
    weight=None,
    reduction="mean",
    avg_factor=None,
    class_weight=None,
    ignore_index=-100,
    avg_non_ignore=False,
):
    ignore_index = -100 if ignore_index is None else ignore_index
    if pred.dim() != label.dim():
        label, weight, valid_mask = _expand_onehot_labels(
            label, weight, pred.size(-1), ignore_index
        )
    else:
        valid_mask = ((label >= 0) & (label != ignore_index)).float()
        if weight is not None:  # noqa: SIM108 - MMDetection's lines
            weight = weight * valid_mask
        else:
            weight = valid_mask
    if (avg_factor is None) and avg_non_ignore and reduction == "mean":
        avg_factor = valid_mask.sum().item()
    weight = weight.float()
    loss = F.binary_cross_entropy_with_logits(
        pred, label.float(), pos_weight=class_weight, reduction="none"
    )
    return weight_reduce_loss(loss, weight, reduction=reduction, avg_factor=avg_factor)


def mask_cross_entropy(
    pred,
    target,
    label,
    reduction="mean",
    avg_factor=None,
    class_weight=None,
    ignore_index=None,
    **kwargs,
):
    assert ignore_index is None, "BCE loss does not support ignore_index"
    assert reduction == "mean" and avg_factor is None
    num_rois = pred.size()[0]
    inds = torch.arange(0, num_rois, dtype=torch.long, device=pred.device)
    pred_slice = pred[inds, label].squeeze(1)
    return F.binary_cross_entropy_with_logits(
        pred_slice, target, weight=class_weight, reduction="mean"
    )[None]


def cross_entropy_module(
    use_sigmoid=False,
    use_mask=False,
    reduction="mean",
    class_weight=None,
    ignore_index=None,
    loss_weight=1.0,
    avg_non_ignore=False,
) -> Fn:
    assert (use_sigmoid is False) or (use_mask is False)
    if use_sigmoid:
        criterion: Fn = binary_cross_entropy
    elif use_mask:
        criterion = mask_cross_entropy
    else:
        criterion = cross_entropy

    default_ignore = ignore_index

    def forward(
        cls_score,
        label,
        weight=None,
        avg_factor=None,
        reduction_override=None,
        ignore_index=None,
        **kwargs,
    ):
        assert reduction_override in (None, "none", "mean", "sum")
        red = reduction_override if reduction_override else reduction
        ign = default_ignore if ignore_index is None else ignore_index
        cw = None if class_weight is None else cls_score.new_tensor(class_weight)
        return loss_weight * criterion(
            cls_score,
            label,
            weight,
            class_weight=cw,
            reduction=red,
            avg_factor=avg_factor,
            ignore_index=ign,
            avg_non_ignore=avg_non_ignore,
            **kwargs,
        )

    return forward


# ------------------------------------------------------------------------- focal_loss.py


def py_focal_loss_with_prob(
    pred, target, weight=None, gamma=2.0, alpha=0.25, reduction="mean", avg_factor=None
):
    if pred.dim() != target.dim():
        num_classes = pred.size(1)
        target = F.one_hot(target, num_classes=num_classes + 1)
        target = target[:, :num_classes]
    target = target.type_as(pred)
    pt = (1 - pred) * target + pred * (1 - target)
    focal_weight = (alpha * target + (1 - alpha) * (1 - target)) * pt.pow(gamma)
    loss = F.binary_cross_entropy(pred, target, reduction="none") * focal_weight
    if weight is not None:
        if weight.shape != loss.shape:
            if weight.size(0) == loss.size(0):
                weight = weight.view(-1, 1)
            else:
                assert weight.numel() == loss.numel()
                weight = weight.view(loss.size(0), -1)
        assert weight.ndim == loss.ndim
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


def focal_module(
    use_sigmoid=True, gamma=2.0, alpha=0.25, reduction="mean", loss_weight=1.0, activated=False
) -> Fn:
    assert use_sigmoid is True, "Only sigmoid focal loss supported now."

    def forward(pred, target, weight=None, avg_factor=None, reduction_override=None):
        assert reduction_override in (None, "none", "mean", "sum")
        red = reduction_override if reduction_override else reduction
        if activated:
            fn: Fn = py_focal_loss_with_prob
        elif pred.dim() == target.dim():
            fn = py_sigmoid_focal_loss
        else:  # the CPU branch (mmcv's CUDA kernel gives the same numbers)
            num_classes = pred.size(1)
            target = F.one_hot(target, num_classes=num_classes + 1)
            target = target[:, :num_classes]
            fn = py_sigmoid_focal_loss
        return loss_weight * fn(
            pred, target, weight, gamma=gamma, alpha=alpha, reduction=red, avg_factor=avg_factor
        )

    return forward


# ---------------------------------------------------------------------- varifocal_loss.py


def varifocal_loss(
    pred,
    target,
    weight=None,
    alpha=0.75,
    gamma=2.0,
    iou_weighted=True,
    reduction="mean",
    avg_factor=None,
):
    assert pred.size() == target.size()
    pred_sigmoid = pred.sigmoid()
    target = target.type_as(pred)
    if iou_weighted:
        focal_weight = (
            target * (target > 0.0).float()
            + alpha * (pred_sigmoid - target).abs().pow(gamma) * (target <= 0.0).float()
        )
    else:
        focal_weight = (target > 0.0).float() + alpha * (pred_sigmoid - target).abs().pow(gamma) * (
            target <= 0.0
        ).float()
    loss = F.binary_cross_entropy_with_logits(pred, target, reduction="none") * focal_weight
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


def varifocal_module(
    use_sigmoid=True, alpha=0.75, gamma=2.0, iou_weighted=True, reduction="mean", loss_weight=1.0
) -> Fn:
    assert use_sigmoid is True
    assert alpha >= 0.0

    def forward(pred, target, weight=None, avg_factor=None, reduction_override=None):
        red = reduction_override if reduction_override else reduction
        return loss_weight * varifocal_loss(
            pred,
            target,
            weight,
            alpha=alpha,
            gamma=gamma,
            iou_weighted=iou_weighted,
            reduction=red,
            avg_factor=avg_factor,
        )

    return forward


# ------------------------------------------------------------------------ gfocal_loss.py


@weighted_loss
def quality_focal_loss(pred, target, beta=2.0):
    assert len(target) == 2
    label, score = target
    pred_sigmoid = pred.sigmoid()
    scale_factor = pred_sigmoid
    zerolabel = scale_factor.new_zeros(pred.shape)
    loss = F.binary_cross_entropy_with_logits(pred, zerolabel, reduction="none") * scale_factor.pow(
        beta
    )
    bg_class_ind = pred.size(1)
    pos = ((label >= 0) & (label < bg_class_ind)).nonzero().squeeze(1)
    pos_label = label[pos].long()
    scale_factor = score[pos] - pred_sigmoid[pos, pos_label]
    loss[pos, pos_label] = F.binary_cross_entropy_with_logits(
        pred[pos, pos_label], score[pos], reduction="none"
    ) * scale_factor.abs().pow(beta)
    return loss.sum(dim=1, keepdim=False)


@weighted_loss
def quality_focal_loss_tensor_target(pred, target, beta=2.0, activated=False):
    assert pred.size() == target.size()
    if activated:
        pred_sigmoid = pred
        loss_function: Fn = F.binary_cross_entropy
    else:
        pred_sigmoid = pred.sigmoid()
        loss_function = F.binary_cross_entropy_with_logits
    scale_factor = pred_sigmoid
    target = target.type_as(pred)
    zerolabel = scale_factor.new_zeros(pred.shape)
    loss = loss_function(pred, zerolabel, reduction="none") * scale_factor.pow(beta)
    pos = target != 0
    scale_factor = target[pos] - pred_sigmoid[pos]
    loss[pos] = loss_function(pred[pos], target[pos], reduction="none") * scale_factor.abs().pow(
        beta
    )
    return loss.sum(dim=1, keepdim=False)


@weighted_loss
def quality_focal_loss_with_prob(pred, target, beta=2.0):
    assert len(target) == 2
    label, score = target
    pred_sigmoid = pred
    scale_factor = pred_sigmoid
    zerolabel = scale_factor.new_zeros(pred.shape)
    loss = F.binary_cross_entropy(pred, zerolabel, reduction="none") * scale_factor.pow(beta)
    bg_class_ind = pred.size(1)
    pos = ((label >= 0) & (label < bg_class_ind)).nonzero().squeeze(1)
    pos_label = label[pos].long()
    scale_factor = score[pos] - pred_sigmoid[pos, pos_label]
    loss[pos, pos_label] = F.binary_cross_entropy(
        pred[pos, pos_label], score[pos], reduction="none"
    ) * scale_factor.abs().pow(beta)
    return loss.sum(dim=1, keepdim=False)


@weighted_loss
def distribution_focal_loss(pred, label):
    dis_left = label.long()
    dis_right = dis_left + 1
    weight_left = dis_right.float() - label
    weight_right = label - dis_left.float()
    return (
        F.cross_entropy(pred, dis_left, reduction="none") * weight_left
        + F.cross_entropy(pred, dis_right, reduction="none") * weight_right
    )


def qfl_pair(
    pred, label, score, weight=None, reduction="mean", avg_factor=None, beta=2.0, activated=False
):
    """The tuple-target QFL with the tuple's two tensors as separate arguments."""
    fn = quality_focal_loss_with_prob if activated else quality_focal_loss
    return fn(pred, (label, score), weight, reduction=reduction, avg_factor=avg_factor, beta=beta)


def qfl_prob_pair(pred, label, score, weight=None, reduction="mean", avg_factor=None, beta=2.0):
    return quality_focal_loss_with_prob(
        pred, (label, score), weight, reduction=reduction, avg_factor=avg_factor, beta=beta
    )


def quality_focal_module(
    use_sigmoid=True, beta=2.0, reduction="mean", loss_weight=1.0, activated=False
) -> Fn:
    assert use_sigmoid is True

    def forward(pred, target, weight=None, avg_factor=None, reduction_override=None, score=None):
        red = reduction_override if reduction_override else reduction
        if score is not None:  # the database passes a tuple target's two tensors apart
            target = (target, score)
        fn: Fn = quality_focal_loss_with_prob if activated else quality_focal_loss
        if isinstance(target, torch.Tensor):
            fn = partial(quality_focal_loss_tensor_target, activated=activated)
        return loss_weight * fn(
            pred, target, weight, beta=beta, reduction=red, avg_factor=avg_factor
        )

    return forward


def distribution_focal_module(reduction="mean", loss_weight=1.0) -> Fn:
    def forward(pred, target, weight=None, avg_factor=None, reduction_override=None):
        red = reduction_override if reduction_override else reduction
        return loss_weight * distribution_focal_loss(
            pred, target, weight, reduction=red, avg_factor=avg_factor
        )

    return forward


# ---------------------------------------------------------------- gaussian_focal_loss.py


@weighted_loss
def gaussian_focal_loss(
    pred, gaussian_target, alpha=2.0, gamma=4.0, pos_weight=1.0, neg_weight=1.0
):
    eps = 1e-12
    pos_weights = gaussian_target.eq(1)
    neg_weights = (1 - gaussian_target).pow(gamma)
    pos_loss = -(pred + eps).log() * (1 - pred).pow(alpha) * pos_weights
    neg_loss = -(1 - pred + eps).log() * pred.pow(alpha) * neg_weights
    return pos_weight * pos_loss + neg_weight * neg_loss


def gaussian_focal_loss_with_pos_inds(
    pred,
    gaussian_target,
    pos_inds,
    pos_labels,
    alpha=2.0,
    gamma=4.0,
    pos_weight=1.0,
    neg_weight=1.0,
    reduction="mean",
    avg_factor=None,
):
    eps = 1e-12
    neg_weights = (1 - gaussian_target).pow(gamma)
    pos_pred_pix = pred[pos_inds]
    pos_pred = pos_pred_pix.gather(1, pos_labels.unsqueeze(1))
    pos_loss = -(pos_pred + eps).log() * (1 - pos_pred).pow(alpha)
    pos_loss = weight_reduce_loss(pos_loss, None, reduction, avg_factor)
    neg_loss = -(1 - pred + eps).log() * pred.pow(alpha) * neg_weights
    neg_loss = weight_reduce_loss(neg_loss, None, reduction, avg_factor)
    return pos_weight * pos_loss + neg_weight * neg_loss


def gaussian_focal_module(
    alpha=2.0, gamma=4.0, reduction="mean", loss_weight=1.0, pos_weight=1.0, neg_weight=1.0
) -> Fn:
    def forward(
        pred,
        target,
        pos_inds=None,
        pos_labels=None,
        weight=None,
        avg_factor=None,
        reduction_override=None,
    ):
        red = reduction_override if reduction_override else reduction
        if pos_inds is not None:
            assert pos_labels is not None
            return loss_weight * gaussian_focal_loss_with_pos_inds(
                pred,
                target,
                pos_inds,
                pos_labels,
                alpha=alpha,
                gamma=gamma,
                pos_weight=pos_weight,
                neg_weight=neg_weight,
                reduction=red,
                avg_factor=avg_factor,
            )
        return loss_weight * gaussian_focal_loss(
            pred,
            target,
            weight,
            alpha=alpha,
            gamma=gamma,
            pos_weight=pos_weight,
            neg_weight=neg_weight,
            reduction=red,
            avg_factor=avg_factor,
        )

    return forward


# ------------------------------------------------------------------------ seesaw_loss.py


def seesaw_ce_loss(
    cls_score,
    labels,
    label_weights,
    cum_samples,
    num_classes,
    p,
    q,
    eps,
    reduction="mean",
    avg_factor=None,
):
    assert cls_score.size(-1) == num_classes
    assert len(cum_samples) == num_classes
    onehot_labels = F.one_hot(labels, num_classes)
    seesaw_weights = cls_score.new_ones(onehot_labels.size())
    if p > 0:
        sample_ratio_matrix = cum_samples[None, :].clamp(min=1) / cum_samples[:, None].clamp(min=1)
        index = (sample_ratio_matrix < 1.0).float()
        sample_weights = sample_ratio_matrix.pow(p) * index + (1 - index)
        mitigation_factor = sample_weights[labels.long(), :]
        seesaw_weights = seesaw_weights * mitigation_factor
    if q > 0:
        scores = F.softmax(cls_score.detach(), dim=1)
        self_scores = scores[torch.arange(0, len(scores)).long(), labels.long()]
        score_matrix = scores / self_scores[:, None].clamp(min=eps)
        index = (score_matrix > 1.0).float()
        compensation_factor = score_matrix.pow(q) * index + (1 - index)
        seesaw_weights = seesaw_weights * compensation_factor
    cls_score = cls_score + (seesaw_weights.log() * (1 - onehot_labels))
    loss = F.cross_entropy(cls_score, labels, weight=None, reduction="none")
    if label_weights is not None:
        label_weights = label_weights.float()
    return weight_reduce_loss(
        loss, weight=label_weights, reduction=reduction, avg_factor=avg_factor
    )


class SeesawLossRef(torch.nn.Module):
    """MMDetection's ``SeesawLoss`` (its ``cum_samples`` buffer kept across calls)."""

    def __init__(
        self,
        use_sigmoid=False,
        p=0.8,
        q=2.0,
        num_classes=1203,
        eps=1e-2,
        reduction="mean",
        loss_weight=1.0,
        return_dict=True,
    ):
        super().__init__()
        assert not use_sigmoid
        self.p, self.q, self.num_classes, self.eps = p, q, num_classes, eps
        self.reduction, self.loss_weight, self.return_dict = reduction, loss_weight, return_dict
        self.cum_samples: torch.Tensor
        self.register_buffer("cum_samples", torch.zeros(self.num_classes + 1, dtype=torch.float))

    def forward(
        self, cls_score, labels, label_weights=None, avg_factor=None, reduction_override=None
    ):
        assert reduction_override in (None, "none", "mean", "sum")
        reduction = reduction_override if reduction_override else self.reduction
        assert cls_score.size(-1) == self.num_classes + 2
        pos_inds = labels < self.num_classes
        obj_labels = (labels == self.num_classes).long()
        for u_l in labels.unique():
            inds_ = labels == u_l.item()
            self.cum_samples[u_l] += inds_.sum()
        if label_weights is not None:
            label_weights = label_weights.float()
        else:
            label_weights = labels.new_ones(labels.size(), dtype=torch.float)
        cls_score_classes, cls_score_objectness = cls_score[..., :-2], cls_score[..., -2:]
        if pos_inds.sum() > 0:
            loss_cls_classes = self.loss_weight * seesaw_ce_loss(
                cls_score_classes[pos_inds],
                labels[pos_inds],
                label_weights[pos_inds],
                self.cum_samples[: self.num_classes],
                self.num_classes,
                self.p,
                self.q,
                self.eps,
                reduction,
                avg_factor,
            )
        else:
            loss_cls_classes = cls_score_classes[pos_inds].sum()
        loss_cls_objectness = self.loss_weight * cross_entropy(
            cls_score_objectness, obj_labels, label_weights, reduction, avg_factor
        )
        if self.return_dict:
            return {
                "loss_cls_objectness": loss_cls_objectness,
                "loss_cls_classes": loss_cls_classes,
            }
        return loss_cls_classes + loss_cls_objectness


def seesaw_module(**kwargs: Any) -> Fn:
    return SeesawLossRef(**kwargs)
