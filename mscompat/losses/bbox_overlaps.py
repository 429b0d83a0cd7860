"""MMDetection's ``bbox_overlaps``: IoU, IoF and GIoU between two sets of boxes."""

from __future__ import annotations

from mindspore import Tensor, ops

from mscompat._checks import check_bool, check_float_tensor, check_number
from mscompat.losses._torch_math import ew

__all__ = ["bbox_overlaps"]

_MODES = ("iou", "iof", "giou")


def _sub(a: Tensor, b: Tensor) -> Tensor:
    return ew(lambda x, y: x - y, a, b)


def _mul(a: Tensor, b: Tensor) -> Tensor:
    return ew(lambda x, y: x * y, a, b)


def _relu0(x: Tensor) -> Tensor:
    # MMDetection's fp16_clamp(x, min=0): clamp's gradient passes at x == 0, as PyTorch's.
    return ew(lambda v: ops.clamp(v, min=0.0), x)


def area(boxes: Tensor) -> Tensor:
    """``(x2 - x1) * (y2 - y1)`` in ``boxes``' dtype."""
    return _mul(_sub(boxes[..., 2], boxes[..., 0]), _sub(boxes[..., 3], boxes[..., 1]))


def bbox_overlaps(
    bboxes1: Tensor,
    bboxes2: Tensor,
    mode: str = "iou",
    is_aligned: bool = False,
    eps: float = 1e-6,
) -> Tensor:
    """Overlaps (IoU, IoF or GIoU) between two sets of boxes in ``(x1, y1, x2, y2)`` form.

    Mirrors ``mmdet.structures.bbox.bbox_overlaps`` (MMDetection 3.3). With :math:`I` the
    intersection area, :math:`A_1, A_2` the areas and :math:`C` the smallest enclosing box:

    .. math::
        \\text{iou} = \\frac{I}{\\max(A_1 + A_2 - I, \\epsilon)}, \\quad
        \\text{iof} = \\frac{I}{\\max(A_1, \\epsilon)}, \\quad
        \\text{giou} = \\text{iou} - \\frac{\\max(C, \\epsilon) - U}{\\max(C, \\epsilon)}

    (:math:`U` the clamped union). Negative widths and heights of the intersection and of the
    enclosing box are clamped to 0; box areas are not (a box with x2 < x1 has a negative
    area, as in MMDetection).

    Args:
        bboxes1 (Tensor[..., m, 4]): boxes, float16/32/64, or empty.
        bboxes2 (Tensor[..., n, 4]): boxes with the same batch dims ``...``; ``n == m`` when
            ``is_aligned``.
        mode (str): ``'iou'`` | ``'iof'`` | ``'giou'``. Default: ``'iou'``.
        is_aligned (bool): overlaps of the pairs ``(bboxes1[i], bboxes2[i])`` instead of all
            pairs. Default: False.
        eps (float): lower bound of the union (and enclosing area). Default: 1e-6.

    Returns:
        Tensor[..., m, n] (Tensor[..., m] when ``is_aligned``), in the promoted dtype of the
        two inputs (``bboxes1``'s when empty); float16 computed op by op as PyTorch on CPU.

    Raises:
        ValueError: an unknown ``mode``, a last dim other than 4 on a non-empty input,
            different batch dims, or ``m != n`` with ``is_aligned``.
        TypeError: non-floating boxes, a non-bool ``is_aligned``.

    .. note::
        Integer boxes are refused (``TypeError``); MMDetection computes them in integers.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import bbox_overlaps
        >>> b1 = ms.Tensor([[0.0, 0.0, 10.0, 10.0], [10.0, 10.0, 20.0, 20.0]])
        >>> b2 = ms.Tensor([[0.0, 0.0, 10.0, 20.0], [10.0, 10.0, 20.0, 20.0]])
        >>> bbox_overlaps(b1, b2).shape
        (2, 2)
        >>> bbox_overlaps(b1, b2, is_aligned=True)
        Tensor(shape=[2], dtype=Float32, value= [ 5.00000000e-01,  1.00000000e+00])
        >>> round(float(bbox_overlaps(b1, b2, mode="giou")[1, 0]), 4)
        -0.25
    """
    bboxes1 = check_float_tensor(bboxes1, "bboxes1")
    bboxes2 = check_float_tensor(bboxes2, "bboxes2")
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {_MODES}, but got {mode!r}")
    check_bool(is_aligned, "is_aligned")
    check_number(eps, "eps")
    # inline checks (no loop, no helper): graph mode folds them before any kernel
    if bboxes1.ndim < 2 or (bboxes1.shape[-1] != 4 and bboxes1.shape[0] != 0):
        raise ValueError(
            f"bboxes1 must have shape (..., n, 4) (or be empty), but got {bboxes1.shape}"
        )
    if bboxes2.ndim < 2 or (bboxes2.shape[-1] != 4 and bboxes2.shape[0] != 0):
        raise ValueError(
            f"bboxes2 must have shape (..., n, 4) (or be empty), but got {bboxes2.shape}"
        )
    if bboxes1.shape[:-2] != bboxes2.shape[:-2]:
        raise ValueError(
            f"bboxes1 and bboxes2 must have the same batch shape, but got {bboxes1.shape} "
            f"and {bboxes2.shape}"
        )
    rows, cols = bboxes1.shape[-2], bboxes2.shape[-2]
    if is_aligned and rows != cols:
        raise ValueError(
            f"is_aligned=True needs as many boxes in bboxes1 as in bboxes2, but got {rows} "
            f"and {cols}"
        )
    batch = tuple(bboxes1.shape[:-2])
    shape = batch + ((rows,) if is_aligned else (rows, cols))
    if bboxes1.size == 0 or bboxes2.size == 0:
        # MMDetection returns bboxes1.new(shape): an empty (or uninitialised) tensor; here
        # zeros, and no kernel runs on the empty input.
        return ops.zeros(shape, bboxes1.dtype)
    return overlaps(bboxes1, bboxes2, mode, is_aligned, eps)


def overlaps(b1: Tensor, b2: Tensor, mode: str, is_aligned: bool, eps: float) -> Tensor:
    """The computation of :func:`bbox_overlaps` (inputs checked, non-empty)."""
    area1, area2 = area(b1), area(b2)
    if is_aligned:
        p1, p2 = b1, b2
    else:
        p1, p2 = b1.expand_dims(-2), b2.expand_dims(-3)
        area1, area2 = area1.expand_dims(-1), area2.expand_dims(-2)
    lt = ew(ops.maximum, p1[..., :2], p2[..., :2])
    rb = ew(ops.minimum, p1[..., 2:], p2[..., 2:])
    wh = _relu0(_sub(rb, lt))
    overlap = _mul(wh[..., 0], wh[..., 1])
    union = area1 if mode == "iof" else _sub(ew(lambda x, y: x + y, area1, area2), overlap)
    eps_t = Tensor(eps, union.dtype)
    union = ew(ops.maximum, union, eps_t)
    ious = ew(lambda x, y: x / y, overlap, union)
    if mode != "giou":
        return ious
    enclosed_lt = ew(ops.minimum, p1[..., :2], p2[..., :2])
    enclosed_rb = ew(ops.maximum, p1[..., 2:], p2[..., 2:])
    enclose_wh = _relu0(_sub(enclosed_rb, enclosed_lt))
    enclose = ew(ops.maximum, _mul(enclose_wh[..., 0], enclose_wh[..., 1]), eps_t)
    return _sub(ious, ew(lambda x, y: x / y, _sub(enclose, union), enclose))
