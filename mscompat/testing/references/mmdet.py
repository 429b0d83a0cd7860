"""MMDetection 3.x loss code, transcribed in plain PyTorch (``mmdet/models/losses``).

These are the oracles: they follow MMDetection's Python line by line (including its weight
reshaping and the ``+ eps`` on ``avg_factor``), so mscompat is checked against MMDetection's
numbers without installing MMDetection or mmcv.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Optional

import torch
import torch.nn.functional as F


def reduce_loss(loss: torch.Tensor, reduction: str) -> torch.Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def weight_reduce_loss(
    loss: torch.Tensor,
    weight: Optional[torch.Tensor] = None,
    reduction: str = "mean",
    avg_factor: Any = None,
) -> torch.Tensor:
    if weight is not None:
        loss = loss * weight
    if avg_factor is None:
        return reduce_loss(loss, reduction)
    if reduction == "mean":
        return loss.sum() / (avg_factor + torch.finfo(torch.float32).eps)
    if reduction != "none":
        raise ValueError('avg_factor can not be used with reduction="sum"')
    return loss


def py_sigmoid_focal_loss(
    pred: torch.Tensor,
    target: torch.Tensor,
    weight: Optional[torch.Tensor] = None,
    gamma: float = 2.0,
    alpha: float = 0.25,
    reduction: str = "mean",
    avg_factor: Any = None,
) -> torch.Tensor:
    prob = pred.sigmoid()
    target = target.type_as(pred)
    pt = (1 - prob) * target + prob * (1 - target)
    focal_weight = (alpha * target + (1 - alpha) * (1 - target)) * pt.pow(gamma)
    loss = F.binary_cross_entropy_with_logits(pred, target, reduction="none") * focal_weight
    if weight is not None:
        if weight.shape != loss.shape:
            if weight.size(0) == loss.size(0):
                weight = weight.view(-1, 1)
            else:
                assert weight.numel() == loss.numel()
                weight = weight.view(loss.size(0), -1)
        assert weight.ndim == loss.ndim
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


def sigmoid_focal_loss_module(
    weight: Any = None,
    gamma: float = 2.0,
    alpha: float = 0.25,
    reduction: str = "mean",
    avg_factor: Any = None,
    loss_weight: float = 1.0,
) -> Callable[..., torch.Tensor]:
    """MMDetection's ``FocalLoss(use_sigmoid=True).forward`` with the guide's constructor
    defaults for ``weight``/``avg_factor`` (a per-call value wins)."""
    default_weight = None if weight is None else torch.as_tensor(weight)

    def forward(
        pred: torch.Tensor,
        target: torch.Tensor,
        weight: Optional[torch.Tensor] = None,
        avg_factor: Any = None,
        reduction_override: Optional[str] = None,
    ) -> torch.Tensor:
        red = reduction_override if reduction_override else reduction
        w = default_weight if weight is None else weight
        af = avg_factor if avg_factor is not None else avg_factor_default
        return loss_weight * py_sigmoid_focal_loss(pred, target, w, gamma, alpha, red, af)

    avg_factor_default = avg_factor
    return forward


def weighted_loss(loss_func: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """``mmdet.models.losses.utils.weighted_loss``: an elementwise loss with ``weight``,
    ``reduction`` and ``avg_factor``."""

    @functools.wraps(loss_func)
    def wrapper(
        pred: torch.Tensor,
        target: torch.Tensor,
        weight: Optional[torch.Tensor] = None,
        reduction: str = "mean",
        avg_factor: Any = None,
        **kwargs: Any,
    ) -> torch.Tensor:
        loss = loss_func(pred, target, **kwargs)
        return weight_reduce_loss(loss, weight, reduction, avg_factor)

    return wrapper
