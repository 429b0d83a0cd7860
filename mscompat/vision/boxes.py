"""Box utilities of ``torchvision.ops.boxes``: area, format conversion, clipping, filtering,
boxes around masks.

Same names, signatures, defaults and output dtypes as torchvision 0.28 (an integer box stays an
integer where PyTorch's arithmetic keeps it one, true divisions give float32, float16 areas are
computed in float32 as torchvision's ``_upcast`` does). Only the axis-aligned formats ``'xyxy'``,
``'xywh'`` and ``'cxcywh'`` are supported; the rotated ones raise ``ValueError``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_finite_number, check_int, check_number, check_tensor
from mscompat.vision._box_utils import (
    as_float,
    check_boxes,
    check_fmt,
    is_int_tensor,
    upcast,
)

__all__ = [
    "box_area",
    "box_convert",
    "clip_boxes_to_image",
    "masks_to_boxes",
    "remove_small_boxes",
]


def box_area(boxes: Tensor, fmt: str = "xyxy") -> Tensor:
    """Area of each box.

    Mirrors ``torchvision.ops.box_area``. For ``'xyxy'``
    :math:`(x_2 - x_1)(y_2 - y_1)`; for ``'xywh'`` and ``'cxcywh'`` :math:`w\\,h`.

    Args:
        boxes (Tensor[..., 4]): boxes, float or integer dtype.
        fmt (str): ``'xyxy'`` | ``'xywh'`` | ``'cxcywh'``. Default: ``'xyxy'``.

    Returns:
        Tensor[...]: areas; float16 boxes give float32, int8/int16/uint8 give int32, other
        dtypes are kept (torchvision's ``_upcast``).

    Raises:
        TypeError: ``boxes`` not a Tensor of a floating or integer dtype.
        ValueError: last dim of ``boxes`` not 4, unknown or rotated ``fmt``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import box_area
        >>> box_area(ms.Tensor([[0.0, 0.0, 2.0, 3.0], [1.0, 1.0, 1.5, 2.0]]))
        Tensor(shape=[2], dtype=Float32, value= [ 6.00000000e+00,  5.00000000e-01])
    """
    boxes = check_boxes(boxes, "boxes")
    fmt = check_fmt(fmt)
    b = upcast(boxes)
    if boxes.size == 0:
        return ops.zeros(boxes.shape[:-1], b.dtype)
    if fmt == "xyxy":
        return (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    return b[..., 2] * b[..., 3]


def _to_xyxy(boxes: Tensor, fmt: str) -> Tensor:
    """torchvision's ``_box_xywh_to_xyxy`` / ``_box_cxcywh_to_xyxy``, op for op."""
    if fmt == "xyxy":
        return boxes
    x, y, w, h = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
    if fmt == "xywh":
        return ops.stack((x, y, x + w, y + h), -1)
    x, y, w, h = as_float(x), as_float(y), as_float(w), as_float(h)
    half_w, half_h = 0.5 * w, 0.5 * h
    return ops.stack((x - half_w, y - half_h, x + half_w, y + half_h), -1)


def _from_xyxy(boxes: Tensor, fmt: str) -> Tensor:
    """torchvision's ``_box_xyxy_to_xywh`` / ``_box_xyxy_to_cxcywh``, op for op."""
    if fmt == "xyxy":
        return boxes
    x1, y1, x2, y2 = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
    w, h = x2 - x1, y2 - y1
    if fmt == "xywh":
        return ops.stack((x1, y1, w, h), -1)
    # the sums are taken in the boxes' dtype, then divided (integers: as float32)
    cx, cy = as_float(x1 + x2) / 2, as_float(y1 + y2) / 2
    return ops.stack((cx, cy, w.astype(cx.dtype), h.astype(cx.dtype)), -1)


def box_convert(boxes: Tensor, in_fmt: str, out_fmt: str) -> Tensor:
    """Convert boxes between ``'xyxy'``, ``'xywh'`` and ``'cxcywh'``.

    Mirrors ``torchvision.ops.box_convert`` (axis-aligned formats): ``xyxy`` is the corners
    :math:`(x_1, y_1, x_2, y_2)`, ``xywh`` the top-left corner and size, ``cxcywh`` the centre
    and size. Conversions between ``xywh`` and ``cxcywh`` go through ``xyxy``, as torchvision's.

    Args:
        boxes (Tensor[..., 4]): boxes in ``in_fmt``.
        in_fmt (str): format of ``boxes``.
        out_fmt (str): format of the result.

    Returns:
        Tensor[..., 4]: the converted boxes (a copy when ``in_fmt == out_fmt``). Integer boxes
        stay integer between ``xyxy`` and ``xywh``; a conversion from or to ``cxcywh`` divides
        by 2, which makes them float32 (as PyTorch's true division).

    Raises:
        TypeError: ``boxes`` not a Tensor of a floating or integer dtype.
        ValueError: last dim not 4, unknown or rotated format.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import box_convert
        >>> box_convert(ms.Tensor([[10.0, 20.0, 4.0, 6.0]]), "cxcywh", "xyxy")
        Tensor(shape=[1, 4], dtype=Float32, value=
        [[ 8.00000000e+00,  1.70000000e+01,  1.20000000e+01,  2.30000000e+01]])
    """
    boxes = check_boxes(boxes, "boxes")
    in_fmt = check_fmt(in_fmt, "in_fmt")
    out_fmt = check_fmt(out_fmt, "out_fmt")
    if in_fmt == out_fmt:
        return ops.deepcopy(boxes) if boxes.size else ops.zeros(boxes.shape, boxes.dtype)
    int_kept = is_int_tensor(boxes) and "cxcywh" not in (in_fmt, out_fmt)
    if boxes.size == 0:
        return ops.zeros(boxes.shape, boxes.dtype if int_kept else as_float(boxes).dtype)
    return _from_xyxy(_to_xyxy(boxes, in_fmt), out_fmt)


def _check_size(size: Any) -> Tuple[Any, Any]:
    if not isinstance(size, (tuple, list)) or len(size) != 2:
        raise TypeError(f"size must be a (height, width) tuple, but got {size!r}")
    height, width = size
    for name, value in (("height", height), ("width", width)):
        check_finite_number(value, f"size ({name})", size)
        if value < 0:
            raise ValueError(f"size must be non-negative, but got {name}={value!r} (size={size})")
    return height, width


def clip_boxes_to_image(boxes: Tensor, size: Sequence[int]) -> Tensor:
    """Clip boxes to lie inside an image of ``size = (height, width)``.

    Mirrors ``torchvision.ops.clip_boxes_to_image``: x coordinates are clamped to
    :math:`[0, \\text{width}]`, y coordinates to :math:`[0, \\text{height}]`. The gradient
    passes where a coordinate is inside the bounds, ends included (PyTorch's ``clamp``).

    Args:
        boxes (Tensor[..., 4]): boxes in ``(x1, y1, x2, y2)`` format.
        size (Tuple[int, int]): ``(height, width)`` of the image.

    Returns:
        Tensor[..., 4]: the clipped boxes, ``boxes``' dtype.

    Raises:
        TypeError: ``boxes`` not a Tensor of a box dtype, ``size`` not two numbers.
        ValueError: last dim not 4, negative or non-finite ``size`` (PyTorch would clamp to
            the negative bound).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import clip_boxes_to_image
        >>> clip_boxes_to_image(ms.Tensor([[-5.0, 2.0, 30.0, 50.0]]), (40, 20))
        Tensor(shape=[1, 4], dtype=Float32, value=
        [[ 0.00000000e+00,  2.00000000e+00,  2.00000000e+01,  4.00000000e+01]])
    """
    boxes = check_boxes(boxes, "boxes")
    height, width = _check_size(size)
    if boxes.size == 0:
        return ops.zeros(boxes.shape, boxes.dtype)
    hi = ms.Tensor([width, height, width, height], boxes.dtype)
    clipped = ops.where(boxes < 0, ops.zeros_like(boxes), boxes)
    return ops.where(clipped > hi, ops.broadcast_to(hi, boxes.shape), clipped)


def _keep_mask(boxes: Tensor, min_size: float) -> Tensor:
    """``(w >= min_size) & (h >= min_size)``, compared in PyTorch's dtype: the boxes' for a
    float box, float32 for an integer box and a fractional ``min_size``."""
    ws, hs = boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1]
    if is_int_tensor(boxes) and not float(min_size).is_integer():
        ws, hs = ws.astype(ms.float32), hs.astype(ms.float32)
    bound = ms.Tensor(min_size, ws.dtype)
    return ops.logical_and(ws >= bound, hs >= bound)


def remove_small_boxes(
    boxes: Tensor, min_size: float, *, size: Optional[int] = None, fill_value: int = -1
) -> Tensor:
    """Indices of the boxes whose sides are both at least ``min_size``.

    Mirrors ``torchvision.ops.remove_small_boxes``: keeps box :math:`i` when
    :math:`x_2 - x_1 \\ge \\text{min\\_size}` and :math:`y_2 - y_1 \\ge \\text{min\\_size}`.

    The number of kept boxes depends on the data. With ``size`` (an extension, keyword-only,
    in the manner of ``jax.numpy.nonzero(..., size=, fill_value=)`` and PyTorch's
    ``nonzero_static``) the result has exactly ``size`` entries, a static shape for
    ``ms.jit``: the first kept indices, then ``fill_value``; with the default
    ``fill_value=-1`` the count of kept boxes is ``(keep >= 0).sum()``, and ``size=N`` (the
    number of boxes) never drops one. Without ``size`` MindSpore 2.10 runs the dynamic shape
    on CPU in graph mode too.

    Args:
        boxes (Tensor[N, 4]): boxes in ``(x1, y1, x2, y2)`` format.
        min_size (float): minimum side length.
        size (int, optional): length of the result (``>= 0``); None: the number of kept
            boxes, as torchvision.
        fill_value (int): the entries past the kept boxes when ``size`` is given. Default: -1.

    Returns:
        Tensor[K] or Tensor[size]: int64 indices of the kept boxes, ascending.

    Raises:
        TypeError: ``boxes`` not a Tensor of a box dtype, ``min_size`` not a number, ``size``
            or ``fill_value`` not ints.
        ValueError: ``boxes`` not of shape ``(N, 4)`` (torchvision also takes ``(..., 4)``
            and returns the first-dim index of each kept box), ``size < 0``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import remove_small_boxes
        >>> boxes = ms.Tensor([[0.0, 0.0, 5.0, 5.0], [0.0, 0.0, 0.5, 9.0], [1.0, 1.0, 3.0, 2.0]])
        >>> remove_small_boxes(boxes, 1.0)
        Tensor(shape=[2], dtype=Int64, value= [0, 2])
        >>> def static(b):
        ...     return remove_small_boxes(b, 1.0, size=3)
        >>> ms.jit(static)(boxes)
        Tensor(shape=[3], dtype=Int64, value= [ 0,  2, -1])
    """
    boxes = check_boxes(boxes, "boxes", min_ndim=2)
    if boxes.ndim != 2:
        raise ValueError(f"boxes must have shape (N, 4), but got boxes.shape={boxes.shape}")
    min_size = check_number(min_size, "min_size")
    fill_value = check_int(fill_value, "fill_value")
    if size is not None:
        size = check_int(size, "size")
        if size < 0:
            raise ValueError(f"size must be >= 0, but got size={size}")
    n = boxes.shape[0]
    if size is None:
        if n == 0:
            return ops.zeros((0,), ms.int64)
        return ops.nonzero(_keep_mask(boxes, min_size)).reshape(-1).astype(ms.int64)
    if n == 0 or size == 0:
        return ops.fill(ms.int64, (size,), fill_value)
    keep = _keep_mask(boxes, min_size).astype(ms.int64)
    # Each kept box goes to its rank among the kept ones; the others (and ranks past ``size``)
    # go to a spare slot ``size``, which is cut off. Slots hold index + 1 (0: empty).
    rank = ops.cumsum(keep, 0) - 1
    slot = ops.where(ops.logical_and(keep > 0, rank < size), rank, ops.full_like(rank, size))
    values = ops.arange(1, n + 1, dtype=ms.int64) * keep
    out = ops.scatter_nd(slot.reshape(-1, 1), values, (size + 1,))[:size]
    return ops.where(out > 0, out - 1, ops.full_like(out, fill_value))


def masks_to_boxes(masks: Tensor) -> Tensor:
    """The ``(x1, y1, x2, y2)`` box around the nonzero pixels of each mask.

    Mirrors ``torchvision.ops.masks_to_boxes``: :math:`x_1, x_2` are the first and last
    columns holding a nonzero pixel, :math:`y_1, y_2` the first and last rows (inclusive, so a
    one-pixel mask has :math:`x_1 = x_2`). An all-zero mask gives ``[0, 0, 0, 0]``.

    Args:
        masks (Tensor[N, H, W]): masks, any numeric or bool dtype (nonzero is foreground).

    Returns:
        Tensor[N, 4]: float32 boxes; ``(0, 4)`` when ``masks`` has no element (as torchvision,
        also for ``N > 0`` with ``H`` or ``W`` zero).

    Raises:
        TypeError: ``masks`` not a Tensor.
        ValueError: ``masks`` not 3-D.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import masks_to_boxes
        >>> m = np.zeros((1, 4, 6), np.uint8)
        >>> m[0, 1:3, 2:5] = 1
        >>> masks_to_boxes(ms.Tensor(m))
        Tensor(shape=[1, 4], dtype=Float32, value=
        [[ 2.00000000e+00,  1.00000000e+00,  4.00000000e+00,  2.00000000e+00]])
    """
    masks = check_tensor(masks, "masks")
    if masks.ndim != 3:
        raise ValueError(f"masks must have shape (N, H, W), but got masks.shape={masks.shape}")
    if masks.size == 0:
        return ops.zeros((0, 4), ms.float32)
    _, h, w = masks.shape
    fg = masks if masks.dtype == ms.bool_ else masks != 0
    rows = ops.any(fg, 2)  # (N, H)
    cols = ops.any(fg, 1)  # (N, W)

    def first_last(hit: Tensor, length: int) -> Tuple[Tensor, Tensor]:
        pos = ops.arange(0, length, dtype=ms.float32)
        first = ops.amin(ops.where(hit, pos, ops.full_like(pos, length)), 1)
        last = ops.amax(ops.where(hit, pos, ops.full_like(pos, -1)), 1)
        return first, last

    y1, y2 = first_last(rows, h)
    x1, x2 = first_last(cols, w)
    found = ops.any(rows, 1).reshape(-1, 1)
    boxes = ops.stack((x1, y1, x2, y2), 1)
    return ops.where(found, boxes, ops.zeros_like(boxes))
