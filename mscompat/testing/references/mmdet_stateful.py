# mypy: ignore-errors
# (a transcription of MMDetection's untyped nn.Modules and their buffers: mypy reads its
# register_buffer attributes as Tensor | Module)
"""MMDetection 3.3's stateful losses, GHM-C/GHM-R and EQLv2, transcribed in plain PyTorch from
``mmdet/models/losses/{ghm,eqlv2}_loss.py`` with :mod:`.mmdet_box`'s conventions: the modules
keep MMDetection's buffers (momentum, gradient statistics) across calls.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
import torch.nn.functional as F

from mscompat.testing.references.mmdet import weight_reduce_loss

Tensor = torch.Tensor


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
