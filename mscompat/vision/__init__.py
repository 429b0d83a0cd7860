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

from mscompat.vision.deform_conv import DeformConv2d as DeformConv2d
from mscompat.vision.deform_conv import deform_conv2d as deform_conv2d

# fmt: off
__all__: List[str] = [
    "DeformConv2d", "deform_conv2d",
]
# fmt: on
# END GENERATED
