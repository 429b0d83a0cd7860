"""Losses with PyTorch / MMDetection semantics."""

# BEGIN GENERATED (tools/generate.py)
# the __all__ of each public module of this package
from typing import List

from mscompat.losses.focal import SigmoidFocalLoss as SigmoidFocalLoss
from mscompat.losses.focal import sigmoid_focal_loss as sigmoid_focal_loss
from mscompat.losses.utils import reduce_loss as reduce_loss
from mscompat.losses.utils import weight_reduce_loss as weight_reduce_loss
from mscompat.losses.utils import weighted_loss as weighted_loss

# fmt: off
__all__: List[str] = [
    "SigmoidFocalLoss", "reduce_loss", "sigmoid_focal_loss", "weight_reduce_loss", "weighted_loss",
]
# fmt: on
# END GENERATED
