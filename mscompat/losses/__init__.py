"""Losses with PyTorch / MMDetection semantics."""

from mscompat.losses.focal import SigmoidFocalLoss, sigmoid_focal_loss
from mscompat.losses.utils import reduce_loss, weight_reduce_loss, weighted_loss

__all__ = [
    "SigmoidFocalLoss",
    "reduce_loss",
    "sigmoid_focal_loss",
    "weight_reduce_loss",
    "weighted_loss",
]
