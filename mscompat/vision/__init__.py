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
"""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.vision.deform_conv import DeformConv2d as DeformConv2d
from mscompat.vision.deform_conv import deform_conv2d as deform_conv2d
from mscompat.vision.nms import batched_nms as batched_nms
from mscompat.vision.nms import nms as nms

# fmt: off
__all__: List[str] = [
    "DeformConv2d", "batched_nms", "deform_conv2d", "nms",
]
# fmt: on
# END GENERATED
