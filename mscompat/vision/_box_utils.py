"""Checks and dtype rules shared by the box ops (torchvision's ``ops/_utils.py`` helpers)."""

from __future__ import annotations

from typing import Any, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor
from mindspore.ops import constexpr

from mscompat._checks import check_tensor

__all__ = [
    "AXIS_ALIGNED",
    "BOX_DTYPES",
    "ROTATED",
    "as_float",
    "check_boxes",
    "check_fmt",
    "clamp_min0",
    "has_zero",
    "is_int_tensor",
    "leading_shape",
    "upcast",
    "upcast_non_float",
]

AXIS_ALIGNED = ("xyxy", "xywh", "cxcywh")
ROTATED = ("xywhr", "cxcywhr", "xyxyxyxy")

#: The dtypes torchvision's box arithmetic accepts (bool boxes fail in PyTorch's subtraction).
BOX_DTYPES = (
    ms.float16,
    ms.float32,
    ms.float64,
    ms.int8,
    ms.int16,
    ms.int32,
    ms.int64,
    ms.uint8,
)
_FLOATS = (ms.float16, ms.float32, ms.float64)


def is_int_tensor(x: Tensor) -> bool:
    return x.dtype not in _FLOATS


def check_boxes(boxes: Any, name: str, min_ndim: int = 1, floating: bool = False) -> Tensor:
    """Return ``boxes``; ``TypeError`` unless a Tensor of a box dtype, ``ValueError`` unless
    its last dim is 4 and it has at least ``min_ndim`` dims."""
    boxes = check_tensor(boxes, name)
    allowed = _FLOATS if floating else BOX_DTYPES
    if boxes.dtype not in allowed:
        kinds = "float16, float32 or float64" if floating else "a floating or integer dtype"
        raise TypeError(f"{name} must have {kinds}, but got dtype {boxes.dtype}")
    if boxes.ndim < min_ndim or boxes.shape[-1] != 4:
        want = "(N, 4)" if min_ndim == 2 else "(..., 4)"
        raise ValueError(f"{name} must have shape {want}, but got {name}.shape={boxes.shape}")
    return boxes


def check_fmt(fmt: Any, name: str = "fmt", allowed: Tuple[str, ...] = AXIS_ALIGNED) -> str:
    """Return ``fmt``; ``ValueError`` unless it is one of ``allowed`` (the rotated formats of
    torchvision are named as not supported)."""
    if fmt in allowed:
        return str(fmt)
    if fmt in ROTATED:
        raise ValueError(
            f"{name}={fmt!r}: rotated box formats are not supported by mscompat; "
            f"supported: {', '.join(allowed)}"
        )
    raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, but got {fmt!r}")


@constexpr
def _broadcast(shape1: Tuple[int, ...], shape2: Tuple[int, ...]) -> Tuple[int, ...]:
    """A compile-time constant under ``ms.jit`` (graph mode has no ``try``)."""
    try:
        return tuple(np.broadcast_shapes(shape1[:-2], shape2[:-2]))
    except ValueError:
        raise ValueError(
            "the batch dims of boxes1 and boxes2 must broadcast, but got "
            f"boxes1.shape={shape1} and boxes2.shape={shape2}"
        ) from None


def leading_shape(boxes1: Tensor, boxes2: Tensor) -> Tuple[int, ...]:
    """The broadcast of the batch dims of ``boxes1`` (..., N, 4) and ``boxes2`` (..., M, 4)."""
    return _broadcast(tuple(boxes1.shape), tuple(boxes2.shape))


@constexpr
def has_zero(shape: Tuple[int, ...]) -> bool:
    """Whether ``shape`` has no element (a compile-time constant under ``ms.jit``)."""
    return any(int(s) == 0 for s in shape)


def upcast(x: Tensor) -> Tensor:
    """torchvision's ``_upcast``: float16 -> float32, int8/int16/uint8 -> int32."""
    if x.dtype == ms.float16:
        return x.astype(ms.float32)
    if x.dtype in (ms.int8, ms.int16, ms.uint8):
        return x.astype(ms.int32)
    return x


def upcast_non_float(x: Tensor) -> Tensor:
    """torchvision's ``_upcast_non_float``: anything but float32/float64 -> float32."""
    if x.dtype in (ms.float32, ms.float64):
        return x
    return x.astype(ms.float32)


def as_float(x: Tensor) -> Tensor:
    """``x`` as PyTorch's true division sees it: integers as float32 (the default dtype)."""
    return x.astype(ms.float32) if is_int_tensor(x) else x


def clamp_min0(x: Tensor) -> Tensor:
    """``x.clamp(min=0)`` as PyTorch differentiates it: the gradient passes where ``x >= 0``
    (at 0 too, unlike ``maximum``'s tie split), and NaN stays NaN (``ops.clamp`` makes it 0).

    A product with the mask: MindSpore 2.10's CPU ``where`` (Select) is ~40x slower than an
    elementwise product; a negative ``x`` gives ``-0.0`` where PyTorch gives ``0.0``.
    """
    return x * (x >= 0).astype(x.dtype)
