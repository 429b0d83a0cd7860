"""Prove a port: convert a PyTorch model's weights into its MindSpore port, compare the two
layer by layer and gradient by gradient, and compare their training curves.

Example:
    >>> from mscompat.port import compare_losses
    >>> compare_losses([1.0, 0.5], [1.0, 0.5]).max_rel()
    0.0
"""

from mscompat.port.curves import LossComparison, compare_losses, read_log
from mscompat.port.layers import LayerReport, LayerRow, compare_layers
from mscompat.port.weights import (
    WeightRow,
    WeightTable,
    convert_weights,
    load_checkpoint,
    save_checkpoint,
    torch_to_mindspore_names,
)

__all__ = [
    "LayerReport",
    "LayerRow",
    "LossComparison",
    "WeightRow",
    "WeightTable",
    "compare_layers",
    "compare_losses",
    "convert_weights",
    "load_checkpoint",
    "read_log",
    "save_checkpoint",
    "torch_to_mindspore_names",
]
