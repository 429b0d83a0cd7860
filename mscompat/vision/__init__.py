"""``torchvision.ops`` for MindSpore: box ops, IoU losses, NMS, RoI ops, deformable convolution
and layers, under torchvision's names, signatures, defaults and dtypes.

This package is both the domain package of these ops (one module per family) and the mirror of
``torchvision.ops``: ``from mscompat.vision import nms`` is torchvision's ``nms``. MMDetection's
focal loss (:func:`mscompat.losses.sigmoid_focal_loss`) is not torchvision's: its third
argument is ``weight`` (torchvision's is ``alpha``), its ``reduction`` defaults to ``'mean'``
(torchvision's to ``'none'``), and it takes ``avg_factor``.
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
from mscompat.vision.boxes import remove_small_boxes_static as remove_small_boxes_static
from mscompat.vision.focal_loss import sigmoid_focal_loss as sigmoid_focal_loss

# fmt: off
__all__: List[str] = [
    "box_area", "box_convert", "box_iou", "clip_boxes_to_image", "complete_box_iou",
    "complete_box_iou_loss", "distance_box_iou", "distance_box_iou_loss", "generalized_box_iou",
    "generalized_box_iou_loss", "masks_to_boxes", "remove_small_boxes", "remove_small_boxes_static",
    "sigmoid_focal_loss",
]
# fmt: on
# END GENERATED
