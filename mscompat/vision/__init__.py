"""``torchvision.ops``' functions and Cells under their ``torchvision.ops`` names.

Empty in this release: no op database entry is a drop-in for a ``torchvision.ops`` name yet.
``python tools/generate.py`` writes this list from the op database's ``torchvision.ops`` names,
so the first such entry (``nms``, ``roi_align``, torchvision's ``sigmoid_focal_loss``) is
re-exported here when the tool is run. MMDetection's focal loss
(:func:`mscompat.losses.sigmoid_focal_loss`) is not torchvision's and is not re-exported here:
its third argument is ``weight`` (torchvision's is ``alpha``), its ``reduction`` defaults to
``'mean'`` (torchvision's to ``'none'``), and it takes ``avg_factor``.

Example:
    >>> import mscompat.vision
    >>> mscompat.vision.__all__
    []
"""

# BEGIN GENERATED (tools/generate.py)
# the op database's torch_apis, by the rules of mscompat/_namespaces.py
from typing import List

__all__: List[str] = []
# END GENERATED
