"""``torchvision.ops`` for MindSpore: box ops, IoU losses, NMS, RoI ops, deformable convolution
and layers, under torchvision's names, signatures, defaults and dtypes.

This package is both the domain package of these ops (one module per family) and the mirror of
``torchvision.ops``: ``from mscompat.vision import nms`` is torchvision's ``nms``. MMDetection's
focal loss (:func:`mscompat.losses.sigmoid_focal_loss`) is not torchvision's: its third
argument is ``weight`` (torchvision's is ``alpha``), its ``reduction`` defaults to ``'mean'``
(torchvision's to ``'none'``), and it takes ``avg_factor``.

Example:
    >>> import mindspore as ms
    >>> from mscompat.vision import nms
    >>> boxes = ms.Tensor([[0, 0, 10, 10], [0, 0, 10, 5]], ms.float32)  # IoU exactly 0.5
    >>> nms(boxes, ms.Tensor([0.9, 0.8], ms.float32), 0.5).asnumpy().tolist()
    [0, 1]
    >>> from mscompat.vision import box_iou
    >>> boxes = ms.Tensor([[0.0, 0.0, 2.0, 2.0], [1.0, 1.0, 3.0, 3.0]])
    >>> box_iou(boxes, boxes)
    Tensor(shape=[2, 2], dtype=Float32, value=
    [[ 1.00000000e+00,  1.42857149e-01],
     [ 1.42857149e-01,  1.00000000e+00]])
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.vision.box_iou import box_iou as box_iou
from mscompat.vision.box_iou import complete_box_iou as complete_box_iou
from mscompat.vision.box_iou import distance_box_iou as distance_box_iou
from mscompat.vision.box_iou import generalized_box_iou as generalized_box_iou
from mscompat.vision.box_losses import complete_box_iou_loss as complete_box_iou_loss
from mscompat.vision.box_losses import distance_box_iou_loss as distance_box_iou_loss
from mscompat.vision.box_losses import generalized_box_iou_loss as generalized_box_iou_loss
from mscompat.vision.boxes import box_area as box_area
from mscompat.vision.boxes import box_convert as box_convert
from mscompat.vision.boxes import clip_boxes_to_image as clip_boxes_to_image
from mscompat.vision.boxes import masks_to_boxes as masks_to_boxes
from mscompat.vision.boxes import remove_small_boxes as remove_small_boxes
from mscompat.vision.deform_conv import DeformConv2d as DeformConv2d
from mscompat.vision.deform_conv import deform_conv2d as deform_conv2d
from mscompat.vision.drop_block import DropBlock2d as DropBlock2d
from mscompat.vision.drop_block import DropBlock3d as DropBlock3d
from mscompat.vision.drop_block import StochasticDepth as StochasticDepth
from mscompat.vision.drop_block import drop_block2d as drop_block2d
from mscompat.vision.drop_block import drop_block3d as drop_block3d
from mscompat.vision.drop_block import stochastic_depth as stochastic_depth
from mscompat.vision.focal_loss import sigmoid_focal_loss as sigmoid_focal_loss
from mscompat.vision.layers import Conv2dNormActivation as Conv2dNormActivation
from mscompat.vision.layers import FrozenBatchNorm2d as FrozenBatchNorm2d
from mscompat.vision.layers import SqueezeExcitation as SqueezeExcitation
from mscompat.vision.nms import batched_nms as batched_nms
from mscompat.vision.nms import nms as nms
from mscompat.vision.poolers import MultiScaleRoIAlign as MultiScaleRoIAlign
from mscompat.vision.ps_roi import PSRoIAlign as PSRoIAlign
from mscompat.vision.ps_roi import PSRoIPool as PSRoIPool
from mscompat.vision.ps_roi import ps_roi_align as ps_roi_align
from mscompat.vision.ps_roi import ps_roi_pool as ps_roi_pool
from mscompat.vision.roi_align import RoIAlign as RoIAlign
from mscompat.vision.roi_align import roi_align as roi_align
from mscompat.vision.roi_pool import RoIPool as RoIPool
from mscompat.vision.roi_pool import roi_pool as roi_pool

# fmt: off
__all__: List[str] = [
    "Conv2dNormActivation", "DeformConv2d", "DropBlock2d", "DropBlock3d", "FrozenBatchNorm2d",
    "MultiScaleRoIAlign", "PSRoIAlign", "PSRoIPool", "RoIAlign", "RoIPool", "SqueezeExcitation",
    "StochasticDepth", "batched_nms", "box_area", "box_convert", "box_iou", "clip_boxes_to_image",
    "complete_box_iou", "complete_box_iou_loss", "deform_conv2d", "distance_box_iou",
    "distance_box_iou_loss", "drop_block2d", "drop_block3d", "generalized_box_iou",
    "generalized_box_iou_loss", "masks_to_boxes", "nms", "ps_roi_align", "ps_roi_pool",
    "remove_small_boxes", "roi_align", "roi_pool", "sigmoid_focal_loss", "stochastic_depth",
]
# fmt: on
# END GENERATED
