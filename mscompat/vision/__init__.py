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
    "MultiScaleRoIAlign", "PSRoIAlign", "PSRoIPool", "RoIAlign", "RoIPool", "ps_roi_align",
    "ps_roi_pool", "roi_align", "roi_pool",
]
# fmt: on
# END GENERATED
