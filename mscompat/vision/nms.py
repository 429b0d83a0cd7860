"""Non-maximum suppression, as ``torchvision.ops.nms`` and ``torchvision.ops.batched_nms``.

The kept indices are torchvision's (CPU), ties included: torchvision orders the boxes by
descending score with a stable sort (equal scores by position, NaN first), keeps each box not
yet suppressed and suppresses every later box whose IoU with it is ``> iou_threshold`` (the
float IoU compared with the double threshold, so IoU exactly at the threshold is kept).
``batched_nms`` follows torchvision's two CPU paths: up to 1,000 boxes it runs ``nms`` on boxes
shifted per class (``boxes + idxs * (boxes.max() + 1)``, rounded as torchvision rounds them,
which can change an IoU in the last bit and lets classes touch when coordinates are negative),
above it NMS per class, then the kept indices sorted by score with PyTorch's default (unstable)
sort, whose order of equal scores is libstdc++'s ``std::sort``'s.

Dispatched (``vision.nms``, ``vision.batched_nms``):

* ``aot``: ``custom_ops/cpu/nms_kernel.cc``: torchvision's sort and arithmetic, blocked so the
  IoU pass is branch-free, vectorised and threaded; float32/float64. On GPU
  ``custom_ops/cuda/nms_kernel.cu`` (a suppression bitmask, as torchvision's CUDA kernel, with
  the CPU's order and arithmetic; built where nvcc is found; ``tools/check_cuda.py``).
* ``composite``: MindSpore ops: the IoU matrix, then the suppression as a fixed point
  (``keep[j] = no kept i before j with IoU > threshold``, iterated until it stops changing, which
  is the sequential sweep's result). Exact, except the order of equal scores among the kept
  boxes of ``batched_nms``'s per-class path (by position; torchvision's is ``std::sort``'s).

``max_output=K`` gives the static-shape form for graph mode: ``(indices, count)``, the first
``K`` indices padded with ``-1`` and the number of valid ones.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat._checks import check_int, check_tensor
from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect
from mscompat.custom_ops.registry import call, device_target, register
from mscompat.shape import argsort

__all__ = ["batched_nms", "nms"]

_OPS = ("vision.nms", "vision.batched_nms")
_KERNEL_FLOATS = (ms.float32, ms.float64)
_INTS = (ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8)
#: torchvision's batched_nms takes its per-class path on CPU above this many box coordinates.
_VANILLA_NUMEL = 4000

NmsResult = Union[Tensor, Tuple[Tensor, Tensor]]


@constexpr
def _threshold_bits(threshold: float) -> Tuple[int]:
    """The float64 threshold's bit pattern, as the kernels take it (an int64 parameter)."""
    return (int(np.array(threshold, np.float64).view(np.int64)),)


@constexpr
def _threshold_in(threshold: float, dtype: Any) -> float:
    """The threshold in ``dtype`` for ``iou > threshold``: for float32, the largest float32 <=
    the double threshold (the same answer for every float32 IoU as torchvision's comparison in
    double)."""
    if dtype != ms.float32 or np.isnan(threshold):
        return float(threshold)
    with np.errstate(over="ignore"):  # beyond float32's range: inf, stepped down below
        f = np.float32(threshold)
    if float(f) > threshold:
        f = np.nextafter(f, np.float32(-np.inf))
    return float(f)


# ----------------------------------------------------------------------------- kernel


def _out_shape(*shapes: Any) -> Any:
    return [shapes[0][0]], [1]


def _self_check(k: Dict[str, Any]) -> None:
    """17 boxes, 3 score levels: the kept boxes in a stable order (torchvision's; PyTorch's
    default sort would not give it); box 16's IoU with box 0 is exactly 0.5: kept."""
    boxes = np.array([[20.0 * i, 0, 20.0 * i + 10, 10] for i in range(17)], np.float32)
    boxes[16] = (0, 0, 10, 5)
    scores = np.array([2, 1, 2, 0, 1, 2, 1, 0, 2, 1, 0, 2, 1, 2, 0, 1, 2], np.float32)
    p = Tensor(_threshold_bits(0.5), ms.int64)
    keep, count = k["Nms"](Tensor(boxes), Tensor(scores), p)
    got = keep.asnumpy().tolist(), int(count.asnumpy()[0])
    want = [0, 2, 5, 8, 11, 13, 16, 1, 4, 6, 9, 12, 15, 3, 7, 10, 14]
    expect(got == (want, 17), "nms kernel", got)


LIBRARY = KernelLibrary(
    "nms",
    [
        Entry("Nms", "boxes scores p:i64 -> keep:i64 count:i64", FLOATS, _out_shape),
        Entry(
            "BatchedNms", "boxes scores idxs:i64 p:i64 -> keep:i64 count:i64", FLOATS, _out_shape
        ),
    ],
    _self_check,
)
KERNELS = LIBRARY.kernels
#: On GPU the probe's self-check decides too (a failure leaves the composite): the CUDA kernels
#: are checked without MindSpore (tools/check_cuda.py), their MindSpore binding is not.
_DEVICES = ("CPU", "GPU")


def _kernel_dtypes(boxes: Any, *_: Any) -> Optional[str]:
    if boxes.dtype in _KERNEL_FLOATS:
        return None
    return f"{boxes.dtype_name} is not supported by the kernel (float32/float64)"


def _shifted(boxes: Tensor, idxs: Tensor) -> Tensor:
    """torchvision's coordinate trick, rounded as it rounds: ``boxes + idxs * (max + 1)``."""
    offsets = idxs.astype(boxes.dtype) * (boxes.max() + ops.ones((), boxes.dtype))
    return boxes + offsets.reshape((-1, 1))


@LIBRARY.backend(_OPS[0], "torchvision's sort and sweep, blocked", _kernel_dtypes, _DEVICES)
def _nms_aot(boxes: Tensor, scores: Tensor, threshold: float) -> Tuple[Tensor, Tensor]:
    p = Tensor(_threshold_bits(threshold), ms.int64)
    return KERNELS[device_target()]["Nms"](boxes, scores, p)


@LIBRARY.backend(_OPS[1], "torchvision's two CPU paths", _kernel_dtypes, _DEVICES)
def _batched_aot(
    boxes: Tensor, scores: Tensor, idxs: Tensor, threshold: float, per_class: bool
) -> Tuple[Tensor, Tensor]:
    p = Tensor(_threshold_bits(threshold), ms.int64)
    if per_class:
        return KERNELS[device_target()]["BatchedNms"](boxes, scores, idxs, p)
    return KERNELS[device_target()]["Nms"](_shifted(boxes, idxs), scores, p)


# ----------------------------------------------------------------------------- composite


def _iou_above(boxes: Tensor, threshold: float) -> Tensor:
    """``iou[i, j] > threshold`` for the (sorted) boxes, with torchvision's arithmetic:
    ``std::max(a, b)`` is ``a < b ? b : a`` and ``std::min(a, b)`` is ``b < a ? b : a``."""
    x1, y1, x2, y2 = boxes[:, 0], boxes[:, 1], boxes[:, 2], boxes[:, 3]
    area = (x2 - x1) * (y2 - y1)
    zero = ops.zeros((), boxes.dtype)

    def larger(a: Tensor, b: Tensor) -> Tensor:  # std::max(a[:, None], b[None, :])
        a, b = a.reshape((-1, 1)), b.reshape((1, -1))
        return ops.where(a < b, b, a)

    def smaller(a: Tensor, b: Tensor) -> Tensor:  # std::min(a[:, None], b[None, :])
        a, b = a.reshape((-1, 1)), b.reshape((1, -1))
        return ops.where(b < a, b, a)

    dw = smaller(x2, x2) - larger(x1, x1)
    dh = smaller(y2, y2) - larger(y1, y1)
    inter = ops.where(zero < dw, dw, zero) * ops.where(zero < dh, dh, zero)
    ovr = inter / (area.reshape((-1, 1)) + area.reshape((1, -1)) - inter)
    return ovr > Tensor(_threshold_in(threshold, boxes.dtype), boxes.dtype)


def _sweep(order: Tensor, above: Tensor) -> Tuple[Tensor, Tensor]:
    """The sequential sweep over the boxes in ``order`` (``above[i, j]``: box i would suppress
    box j) as a fixed point; the kept indices padded with -1, and their count."""
    n = above.shape[0]
    later = ops.triu(ops.ones((n, n), ms.float32), 1)
    weights = ops.where(above, later, ops.zeros_like(later))
    keep = ops.ones((1, n), ms.float32)
    changed = Tensor(1.0, ms.float32)
    while changed > 0:
        # box j is kept when no kept box before it suppresses it; every iteration fixes at
        # least one more box in order, and a fixed point is the sweep's result
        new = (ops.matmul(keep, weights) < 0.5).astype(ms.float32)
        changed = ops.abs(new - keep).sum()
        keep = new
    kept = keep.reshape(-1) > 0.5
    # kept boxes first, in order: sort on distinct keys (exact in float32 below 2**23 boxes)
    position = ops.arange(0, n, dtype=ms.float32)
    key = ops.where(kept, position, position + n)
    _, at = ops.sort(key)
    picked = ops.gather(order, at, 0)
    count = kept.astype(ms.int64).sum().reshape((1,))
    valid = ops.arange(0, n, dtype=ms.int64) < count
    return ops.where(valid, picked, ops.full_like(picked, -1)), count


def _stable_order(scores: Tensor) -> Tensor:
    return argsort(scores, 0, True, True)


@register(_OPS[0], "composite", note="IoU matrix and a fixed-point sweep")
def _nms_composite(boxes: Tensor, scores: Tensor, threshold: float) -> Tuple[Tensor, Tensor]:
    order = _stable_order(scores)
    return _sweep(order, _iou_above(ops.gather(boxes, order, 0), threshold))


@register(_OPS[1], "composite", note="IoU matrix of same-class pairs, fixed-point sweep")
def _batched_composite(
    boxes: Tensor, scores: Tensor, idxs: Tensor, threshold: float, per_class: bool
) -> Tuple[Tensor, Tensor]:
    if not per_class:
        return _nms_composite(_shifted(boxes, idxs), scores, threshold)
    order = _stable_order(scores)
    above = _iou_above(ops.gather(boxes, order, 0), threshold)
    cls = ops.gather(idxs, order, 0)
    same = cls.reshape((-1, 1)) == cls.reshape((1, -1))
    return _sweep(order, ops.logical_and(above, same))


# ----------------------------------------------------------------------------- front doors


def _check_threshold(value: Any, fn: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"{fn}(): iou_threshold must be a number, but got {type(value).__name__} "
            f"(iou_threshold={value!r})"
        )
    return float(value)


def _check_boxes(boxes: Any, scores: Any, fn: str) -> Tuple[Tensor, Tensor]:
    boxes = check_tensor(boxes, "boxes")
    scores = check_tensor(scores, "scores")
    if boxes.dtype not in _KERNEL_FLOATS:
        raise TypeError(
            f"{fn}(): boxes must be a float32 or float64 Tensor (torchvision's CPU kernel "
            f"raises NotImplementedError for float16), but got dtype {boxes.dtype}"
        )
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise ValueError(f"{fn}(): boxes must have shape (N, 4), but got shape {boxes.shape}")
    if scores.ndim != 1:
        raise ValueError(f"{fn}(): scores must be 1-D, but got shape {scores.shape}")
    if scores.shape[0] != boxes.shape[0]:
        raise ValueError(
            f"{fn}(): scores must have one score per box, but got boxes.shape={boxes.shape} "
            f"and scores.shape={scores.shape}"
        )
    if scores.dtype != boxes.dtype:
        raise TypeError(
            f"{fn}(): scores must have the dtype of boxes ({boxes.dtype}), "
            f"but got dtype {scores.dtype}"
        )
    return boxes, scores


def _check_max_output(max_output: Any, fn: str) -> int:
    if max_output is None:
        return -1
    k = check_int(max_output, "max_output")
    if k < 0:
        raise ValueError(f"{fn}(): max_output must be >= 0, but got max_output={k}")
    return k


def _finish(keep: Tensor, count: Tensor, k: int) -> NmsResult:
    """The dynamic result (``k < 0``) or the static ``(indices[:k] padded with -1, count)``."""
    if k < 0:
        return ops.masked_select(keep, keep >= 0)
    n = keep.shape[0]
    if k > n:
        keep = ops.concat((keep, ops.full((k - n,), -1, dtype=ms.int64)))
    return keep[:k], ops.minimum(count.reshape(()), Tensor(k, ms.int64))


def _empty(k: int) -> NmsResult:
    if k < 0:
        return Tensor(np.zeros((0,), np.int64))
    return ops.full((k,), -1, dtype=ms.int64), Tensor(0, ms.int64)


def nms(
    boxes: Tensor, scores: Tensor, iou_threshold: float, *, max_output: Optional[int] = None
) -> NmsResult:
    """Non-maximum suppression, as :func:`torchvision.ops.nms` (its CPU result, ties included).

    In decreasing order of score, each box not yet suppressed is kept, and suppresses every
    later box ``j`` with

    .. math::
        \\mathrm{IoU}(i, j) = \\frac{|b_i \\cap b_j|}{|b_i| + |b_j| - |b_i \\cap b_j|}
        > \\text{iou\\_threshold}.

    IoU exactly at the threshold does not suppress; equal scores are taken in order of
    position (torchvision's stable sort; NaN scores first). Any number of boxes; float32 and
    float64 (torchvision's CPU kernel has no float16: cast first).

    Graph mode: without ``max_output`` the result has a data-dependent length (MindSpore's
    dynamic shape, which ``ms.jit`` compiles on CPU); with ``max_output=K`` the shapes are
    static: ``(indices, count)``, torchvision's result truncated to ``K`` and padded with
    ``-1``, and the number of valid entries.

    Args:
        boxes (Tensor[N, 4]): ``(x1, y1, x2, y2)`` boxes, float32 or float64.
        scores (Tensor[N]): their scores, ``boxes``' dtype.
        iou_threshold (float): boxes with IoU ``> iou_threshold`` are suppressed.
        max_output (int, optional): keyword only: the static form's length ``K >= 0``.

    Returns:
        Tensor[M] int64: the kept indices in decreasing order of score; with ``max_output``,
        ``(Tensor[K] int64, Tensor[] int64)``.

    Raises:
        TypeError: not Tensors, a dtype other than float32/float64, ``scores`` of another
            dtype, ``iou_threshold`` not a number, ``max_output`` not an int.
        ValueError: ``boxes`` not ``(N, 4)``, ``scores`` not ``(N,)``, ``max_output < 0``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import nms
        >>> boxes = ms.Tensor([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30]], ms.float32)
        >>> scores = ms.Tensor([0.9, 0.8, 0.7], ms.float32)
        >>> nms(boxes, scores, 0.5).asnumpy().tolist()
        [0, 2]
        >>> keep, count = nms(boxes, scores, 0.5, max_output=4)  # static shapes, for ms.jit
        >>> keep.asnumpy().tolist(), int(count)
        ([0, 2, -1, -1], 2)
    """
    boxes, scores = _check_boxes(boxes, scores, "nms")
    threshold = _check_threshold(iou_threshold, "nms")
    k = _check_max_output(max_output, "nms")
    if boxes.shape[0] == 0:  # answered here: no backend sees an empty tensor
        return _empty(k)
    keep, count = call("vision.nms", boxes, scores, threshold)
    return _finish(keep, count, k)


def batched_nms(
    boxes: Tensor,
    scores: Tensor,
    idxs: Tensor,
    iou_threshold: float,
    *,
    max_output: Optional[int] = None,
) -> NmsResult:
    """NMS within each category, as :func:`torchvision.ops.batched_nms` (its CPU result).

    Boxes of different ``idxs`` never suppress each other, as torchvision computes it on CPU:
    up to 1,000 boxes, :func:`nms` of the boxes shifted by ``idxs * (boxes.max() + 1)``
    (rounded in ``boxes``' dtype as torchvision rounds them; with negative coordinates classes
    may then overlap, as in torchvision); above, NMS per category and the kept indices sorted by
    score with PyTorch's unstable sort (equal scores in its order, not by position).
    ``max_output`` as in :func:`nms`.

    Args:
        boxes (Tensor[N, 4]): ``(x1, y1, x2, y2)`` boxes, float32 or float64.
        scores (Tensor[N]): their scores, ``boxes``' dtype.
        idxs (Tensor[N]): integer category of each box.
        iou_threshold (float): boxes with IoU ``> iou_threshold`` are suppressed.
        max_output (int, optional): keyword only: the static form's length ``K >= 0``.

    Returns:
        Tensor[M] int64: the kept indices in decreasing order of score; with ``max_output``,
        ``(Tensor[K] int64, Tensor[] int64)``.

    Raises:
        TypeError: as :func:`nms`; ``idxs`` not an integer Tensor.
        ValueError: as :func:`nms`; ``idxs`` not ``(N,)``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import batched_nms
        >>> boxes = ms.Tensor([[0, 0, 10, 10], [1, 1, 11, 11], [1, 1, 11, 11]], ms.float32)
        >>> scores = ms.Tensor([0.9, 0.8, 0.7], ms.float32)
        >>> batched_nms(boxes, scores, ms.Tensor([0, 0, 1]), 0.5).asnumpy().tolist()
        [0, 2]
    """
    boxes, scores = _check_boxes(boxes, scores, "batched_nms")
    idxs = check_tensor(idxs, "idxs")
    if idxs.dtype not in _INTS:
        raise TypeError(f"batched_nms(): idxs must be an integer Tensor, but got {idxs.dtype}")
    if idxs.shape != scores.shape:
        raise ValueError(
            f"batched_nms(): idxs must have one category per box, but got "
            f"boxes.shape={boxes.shape} and idxs.shape={idxs.shape}"
        )
    threshold = _check_threshold(iou_threshold, "batched_nms")
    k = _check_max_output(max_output, "batched_nms")
    if boxes.shape[0] == 0:
        return _empty(k)
    per_class = boxes.shape[0] * 4 > _VANILLA_NUMEL
    if idxs.dtype != ms.int64:
        idxs = idxs.astype(ms.int64)
    keep, count = call("vision.batched_nms", boxes, scores, idxs, threshold, per_class)
    return _finish(keep, count, k)
