"""What the RoI ops share: validation of ``input``, ``boxes`` and ``output_size``, torchvision's
``convert_boxes_to_roi_format``, and the kernels' constant inputs built at compile time."""

from __future__ import annotations

from typing import Any, List, Sequence, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_float_tensor, check_numel, is_int
from mscompat.custom_ops.roi import params

__all__ = [
    "BoxesArg",
    "check_batch_index",
    "check_roi_input",
    "kernel_params",
    "pooled_size",
    "rois_of",
    "size_carrier",
]

#: ``boxes``: Tensor[K, 5] (batch index, x1, y1, x2, y2) or a list of Tensor[L, 4], one per image.
BoxesArg = Union[Tensor, Sequence[Tensor]]


def check_roi_input(fn: str, input: Any) -> Tensor:
    """``input`` as a float (N, C, H, W) Tensor with H, W > 0."""
    x = check_float_tensor(input, "input")
    if x.ndim != 4:
        raise ValueError(
            f"{fn}(): input must be a 4-D Tensor (N, C, H, W), but got shape {tuple(x.shape)}"
        )
    if x.shape[2] == 0 or x.shape[3] == 0:
        raise ValueError(
            f"{fn}(): input must have a non-empty height and width, but got shape {tuple(x.shape)}"
        )
    return x


def pooled_size(fn: str, output_size: Any, name: str = "output_size") -> Tuple[int, int]:
    """``output_size`` (an int or two ints, as torchvision's ``_pair``) as (height, width)."""
    if is_int(output_size):
        size: Tuple[Any, ...] = (output_size, output_size)
    elif isinstance(output_size, (tuple, list)) and len(output_size) in (1, 2):
        size = tuple(output_size) * (2 if len(output_size) == 1 else 1)
    else:
        raise TypeError(
            f"{fn}(): {name} must be an int or a sequence of two ints, but got {output_size!r}"
        )
    if not all(is_int(s) for s in size):
        raise TypeError(f"{fn}(): {name} must hold ints, but got {output_size!r}")
    if not all(0 < int(s) < 2**31 for s in size):
        raise ValueError(f"{fn}(): {name} must be positive, but got {output_size!r}")
    return int(size[0]), int(size[1])


def rois_of(fn: str, boxes: Any, x: Tensor, pooled: Tuple[int, int] = (1, 1)) -> Tensor:
    """``boxes`` as the (K, 5) RoI Tensor (torchvision's ``check_roi_boxes_shape`` and
    ``convert_boxes_to_roi_format``), in ``x``'s dtype as torchvision's kernels require; an
    output (K, C, *pooled) over the size limit is refused (``ValueError`` naming
    ``output_size``)."""
    rois = _rois_of(fn, boxes, x)
    check_numel((rois.shape[0], x.shape[1], *pooled), fn, output_size=pooled)
    return rois


def _rois_of(fn: str, boxes: Any, x: Tensor) -> Tensor:
    if isinstance(boxes, Tensor):
        if boxes.ndim != 2 or boxes.shape[1] != 5:
            raise ValueError(
                f"{fn}(): boxes must be a Tensor[K, 5] or a list of Tensor[L, 4], but got a "
                f"Tensor of shape {tuple(boxes.shape)}"
            )
        _same_dtype(fn, boxes, x)
        return boxes
    if not isinstance(boxes, (list, tuple)):
        raise TypeError(
            f"{fn}(): boxes must be a Tensor[K, 5] or a list of Tensor[L, 4], but got "
            f"{type(boxes).__name__}"
        )
    if len(boxes) == 0:
        raise ValueError(f"{fn}(): boxes must not be an empty list (one Tensor[L, 4] per image)")
    parts: List[Tensor] = []
    for i, b in enumerate(boxes):
        if not isinstance(b, Tensor):
            raise TypeError(
                f"{fn}(): boxes[{i}] must be a mindspore.Tensor, got {type(b).__name__}"
            )
        if b.ndim != 2 or b.shape[1] != 4:
            raise ValueError(
                f"{fn}(): boxes[{i}] must be a Tensor[L, 4], but got shape {tuple(b.shape)}"
            )
        _same_dtype(fn, b, x)
        if b.shape[0] > 0:  # empty pieces are left out: MindSpore's concat of them can crash
            ids = ops.fill(b.dtype, (b.shape[0], 1), i)
            parts.append(ops.concat((ids, b), 1))
    if not parts:
        return ops.zeros((0, 5), x.dtype)
    return parts[0] if len(parts) == 1 else ops.concat(tuple(parts), 0)


def _same_dtype(fn: str, boxes: Tensor, x: Tensor) -> None:
    if boxes.dtype != x.dtype:
        raise TypeError(
            f"{fn}(): boxes must have the dtype of input ({x.dtype}), but got {boxes.dtype} "
            "(torchvision: 'input should have the same type as rois')"
        )


def check_batch_index(fn: str, rois: Tensor, n: int) -> Tensor:
    """``rois``; ``ValueError`` if a batch index (its int conversion) is outside [0, N).
    torchvision reads out of bounds there; the check reads the values, in graph mode too."""
    b = rois[:, 0]
    if ops.logical_not(ops.logical_and(b > -1, b < n)).any():
        raise ValueError(_batch_message(fn, n))
    return rois


@constexpr
def _batch_message(fn: str, n: int) -> str:
    return (
        f"{fn}(): boxes has a batch index (column 0 of the Tensor[K, 5]) outside [0, {n}), "
        f"the images of input (N = {n})"
    )


@constexpr
def size_carrier(size: Tuple[int, int]) -> Tensor:
    """An int8 zeros Tensor of shape ``size`` (the kernels read only its shape; built at compile
    time, see :func:`mscompat.shape._pooling.shape_carrier`)."""
    return Tensor(np.zeros(size, np.int8))


@constexpr
def kernel_params(sampling_ratio: int, aligned: bool, half: bool, scale: float) -> Tensor:
    """The kernels' ``p`` input (:func:`mscompat.custom_ops.roi.params`), built at compile time."""
    return Tensor(params(sampling_ratio, aligned, half, scale), ms.int64)


class RoICell(nn.Cell):
    """The base of the RoI Cells: it holds their configuration (keyword arguments, in
    torchvision's order) and prints it as torchvision's ``__repr__`` does."""

    def __init__(self, **config: Any) -> None:
        super().__init__()
        self._config = tuple(config)
        for name, value in config.items():
            setattr(self, name, value)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)}" for name in self._config)
        return f"{self.__class__.__name__}({fields})"
