"""Losses with PyTorch / MMDetection semantics."""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.losses.accuracy import Accuracy as Accuracy
from mscompat.losses.accuracy import accuracy as accuracy
from mscompat.losses.bbox_overlaps import bbox_overlaps as bbox_overlaps
from mscompat.losses.cross_entropy import CrossEntropyLoss as CrossEntropyLoss
from mscompat.losses.cross_entropy import binary_cross_entropy as binary_cross_entropy
from mscompat.losses.cross_entropy import cross_entropy as cross_entropy
from mscompat.losses.cross_entropy import mask_cross_entropy as mask_cross_entropy
from mscompat.losses.dice import DiceLoss as DiceLoss
from mscompat.losses.dice import dice_loss as dice_loss
from mscompat.losses.eqlv2 import EQLV2Loss as EQLV2Loss
from mscompat.losses.eqlv2 import eqlv2_loss as eqlv2_loss
from mscompat.losses.focal import FocalLoss as FocalLoss
from mscompat.losses.focal import SigmoidFocalLoss as SigmoidFocalLoss
from mscompat.losses.focal import py_focal_loss_with_prob as py_focal_loss_with_prob
from mscompat.losses.focal import sigmoid_focal_loss as sigmoid_focal_loss
from mscompat.losses.gaussian_focal import GaussianFocalLoss as GaussianFocalLoss
from mscompat.losses.gaussian_focal import gaussian_focal_loss as gaussian_focal_loss
from mscompat.losses.gaussian_focal import (
    gaussian_focal_loss_with_pos_inds as gaussian_focal_loss_with_pos_inds,
)
from mscompat.losses.gfocal import DistributionFocalLoss as DistributionFocalLoss
from mscompat.losses.gfocal import QualityFocalLoss as QualityFocalLoss
from mscompat.losses.gfocal import distribution_focal_loss as distribution_focal_loss
from mscompat.losses.gfocal import quality_focal_loss as quality_focal_loss
from mscompat.losses.gfocal import (
    quality_focal_loss_tensor_target as quality_focal_loss_tensor_target,
)
from mscompat.losses.gfocal import quality_focal_loss_with_prob as quality_focal_loss_with_prob
from mscompat.losses.ghm import GHMC as GHMC
from mscompat.losses.ghm import GHMR as GHMR
from mscompat.losses.ghm import ghmc_loss as ghmc_loss
from mscompat.losses.ghm import ghmr_loss as ghmr_loss
from mscompat.losses.iou import CIoULoss as CIoULoss
from mscompat.losses.iou import DIoULoss as DIoULoss
from mscompat.losses.iou import GIoULoss as GIoULoss
from mscompat.losses.iou import IoULoss as IoULoss
from mscompat.losses.iou import ciou_loss as ciou_loss
from mscompat.losses.iou import diou_loss as diou_loss
from mscompat.losses.iou import giou_loss as giou_loss
from mscompat.losses.iou import iou_loss as iou_loss
from mscompat.losses.iou_variants import BoundedIoULoss as BoundedIoULoss
from mscompat.losses.iou_variants import EIoULoss as EIoULoss
from mscompat.losses.iou_variants import SIoULoss as SIoULoss
from mscompat.losses.iou_variants import bounded_iou_loss as bounded_iou_loss
from mscompat.losses.iou_variants import eiou_loss as eiou_loss
from mscompat.losses.iou_variants import siou_loss as siou_loss
from mscompat.losses.kd import KnowledgeDistillationKLDivLoss as KnowledgeDistillationKLDivLoss
from mscompat.losses.kd import (
    knowledge_distillation_kl_div_loss as knowledge_distillation_kl_div_loss,
)
from mscompat.losses.regression import BalancedL1Loss as BalancedL1Loss
from mscompat.losses.regression import L1Loss as L1Loss
from mscompat.losses.regression import MSELoss as MSELoss
from mscompat.losses.regression import SmoothL1Loss as SmoothL1Loss
from mscompat.losses.regression import balanced_l1_loss as balanced_l1_loss
from mscompat.losses.regression import l1_loss as l1_loss
from mscompat.losses.regression import mse_loss as mse_loss
from mscompat.losses.regression import smooth_l1_loss as smooth_l1_loss
from mscompat.losses.seesaw import SeesawLoss as SeesawLoss
from mscompat.losses.seesaw import seesaw_ce_loss as seesaw_ce_loss
from mscompat.losses.utils import reduce_loss as reduce_loss
from mscompat.losses.utils import weight_reduce_loss as weight_reduce_loss
from mscompat.losses.utils import weighted_loss as weighted_loss
from mscompat.losses.varifocal import VarifocalLoss as VarifocalLoss
from mscompat.losses.varifocal import varifocal_loss as varifocal_loss

# fmt: off
__all__: List[str] = [
    "Accuracy", "BalancedL1Loss", "BoundedIoULoss", "CIoULoss", "CrossEntropyLoss", "DIoULoss",
    "DiceLoss", "DistributionFocalLoss", "EIoULoss", "EQLV2Loss", "FocalLoss", "GHMC", "GHMR",
    "GIoULoss", "GaussianFocalLoss", "IoULoss", "KnowledgeDistillationKLDivLoss", "L1Loss",
    "MSELoss", "QualityFocalLoss", "SIoULoss", "SeesawLoss", "SigmoidFocalLoss", "SmoothL1Loss",
    "VarifocalLoss", "accuracy", "balanced_l1_loss", "bbox_overlaps", "binary_cross_entropy",
    "bounded_iou_loss", "ciou_loss", "cross_entropy", "dice_loss", "diou_loss",
    "distribution_focal_loss", "eiou_loss", "eqlv2_loss", "gaussian_focal_loss",
    "gaussian_focal_loss_with_pos_inds", "ghmc_loss", "ghmr_loss", "giou_loss", "iou_loss",
    "knowledge_distillation_kl_div_loss", "l1_loss", "mask_cross_entropy", "mse_loss",
    "py_focal_loss_with_prob", "quality_focal_loss", "quality_focal_loss_tensor_target",
    "quality_focal_loss_with_prob", "reduce_loss", "seesaw_ce_loss", "sigmoid_focal_loss",
    "siou_loss", "smooth_l1_loss", "varifocal_loss", "weight_reduce_loss", "weighted_loss",
]
# fmt: on
# END GENERATED
