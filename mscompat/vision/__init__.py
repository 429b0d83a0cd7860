"""``torchvision.ops``' functions and Cells under their ``torchvision.ops`` names.

Empty in this release: no op database entry is a drop-in for a ``torchvision.ops`` name yet.
``tests/test_namespaces.py`` keeps this list equal to the op database's ``torchvision.ops``
names, so the first such entry (``nms``, ``roi_align``, torchvision's ``sigmoid_focal_loss``)
fails the test until it is re-exported here. MMDetection's focal loss
(:func:`mscompat.losses.sigmoid_focal_loss`) is not torchvision's and is not re-exported here:
its third argument is ``weight`` (torchvision's is ``alpha``), its ``reduction`` defaults to
``'mean'`` (torchvision's to ``'none'``), and it takes ``avg_factor``.

Example:
    >>> import mscompat.vision
    >>> mscompat.vision.__all__
    []
"""

from typing import List

__all__: List[str] = []
