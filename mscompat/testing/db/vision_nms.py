"""Op database entries for non-maximum suppression (``mscompat.vision.nms``).

The reference is plain PyTorch, slow and obvious, as torchvision's own ``_reference_nms``
(``test/test_ops.py``): the boxes in a stable descending order of score, each kept box's IoU
with every later box computed in the boxes' dtype and compared in float64 (as torchvision's
kernel compares its IoU with the double threshold). ``batched_nms`` follows torchvision's two
CPU paths: shifted boxes up to 1,000 boxes, per-class NMS and ``torch.sort`` above.
No torchvision import: the suite never needs it.
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional

import numpy as np

from mscompat.testing.db._common import every_dtype_first
from mscompat.testing.opinfo import ErrorInput, OpInfo, ReferenceInput, SampleInput
from mscompat.vision.nms import batched_nms, nms

DTYPES = ("float32", "float64")
#: torchvision's batched_nms shifts the boxes per class up to this many coordinates.
_TRICK_NUMEL = 4000


# ----------------------------------------------------------------------------- reference


def _iou_row(b: Any, i: int) -> Any:
    """IoU of box ``i`` with every box, in the boxes' dtype, torchvision's operations (its
    ``std::max(a, b)`` is ``a < b ? b : a``, its ``std::min(a, b)`` is ``b < a ? b : a``)."""
    import torch

    def larger(a: Any, c: Any) -> Any:
        return torch.where(a < c, c, a)

    def smaller(a: Any, c: Any) -> Any:
        return torch.where(c < a, c, a)

    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    zero = torch.zeros((), dtype=b.dtype)
    w = larger(zero, smaller(b[i, 2], b[:, 2]) - larger(b[i, 0], b[:, 0]))
    h = larger(zero, smaller(b[i, 3], b[:, 3]) - larger(b[i, 1], b[:, 1]))
    inter = w * h
    return inter / (area[i] + area - inter)


def _nms_reference(boxes: Any, scores: Any, iou_threshold: float) -> Any:
    import torch

    order = torch.sort(scores, descending=True, stable=True)[1].tolist()
    suppressed = [False] * len(order)
    keep = []
    for a, i in enumerate(order):
        if suppressed[i]:
            continue
        keep.append(i)
        over = (_iou_row(boxes, i).double() > iou_threshold).tolist()
        for j in order[a + 1 :]:
            suppressed[j] = suppressed[j] or over[j]
    return torch.tensor(keep, dtype=torch.int64)


def _static(keep: Any, max_output: Optional[int]) -> Any:
    """torchvision's result truncated to ``max_output`` and padded with -1, and the count."""
    import torch

    if max_output is None:
        return keep
    got = keep[:max_output]
    pad = torch.full((max_output - len(got),), -1, dtype=torch.int64)
    return torch.cat([got, pad]), torch.tensor(len(got), dtype=torch.int64)


def nms_ref(boxes: Any, scores: Any, iou_threshold: float, max_output: Any = None) -> Any:
    return _static(_nms_reference(boxes, scores, iou_threshold), max_output)


def batched_nms_ref(
    boxes: Any, scores: Any, idxs: Any, iou_threshold: float, max_output: Any = None
) -> Any:
    import torch

    if boxes.numel() == 0:
        return _static(torch.zeros((0,), dtype=torch.int64), max_output)
    if boxes.numel() <= _TRICK_NUMEL:
        offsets = idxs.to(boxes) * (boxes.max() + torch.tensor(1).to(boxes))
        return _static(_nms_reference(boxes + offsets[:, None], scores, iou_threshold), max_output)
    keep_mask = torch.zeros_like(scores, dtype=torch.bool)
    for c in torch.unique(idxs):
        at = torch.where(idxs == c)[0]
        keep_mask[at[_nms_reference(boxes[at], scores[at], iou_threshold)]] = True
    kept = torch.where(keep_mask)[0]
    # PyTorch's default (unstable) sort, as torchvision: its order of equal scores
    return _static(kept[scores[kept].sort(descending=True)[1]], max_output)


# ----------------------------------------------------------------------------- inputs


def _boxes(rng: np.random.Generator, n: int, dtype: str, scale: float = 100.0) -> np.ndarray:
    xy = rng.random((n, 2)) * scale
    wh = rng.random((n, 2)) * scale * 0.3
    return np.concatenate([xy, xy + wh], 1).astype(dtype)


def _ties(rng: np.random.Generator, n: int, dtype: str, levels: int = 4) -> np.ndarray:
    return rng.integers(0, levels, n).astype(dtype)


def _at_threshold(dtype: str) -> np.ndarray:
    """Boxes whose IoUs are exact binary fractions: with (0, 0, 8, 8), box 1 and box 2 have IoU
    1/2, box 3 3/5, box 4 1/3, box 5 1/2; repeated far apart."""
    base = np.array(
        [[0, 0, 8, 8], [0, 0, 8, 4], [0, 0, 4, 8], [2, 0, 10, 8], [4, 0, 12, 8], [0, 0, 16, 8]]
    )
    return np.concatenate([base + 100 * k for k in range(4)]).astype(dtype)


def nms_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    exact = _at_threshold(dtype)
    yield SampleInput((exact, _ties(rng, len(exact), dtype, 2), 0.5), name="IoU exactly 0.5")
    yield SampleInput(
        (exact, rng.random(len(exact)).astype(dtype), 0.5), {"max_output": 5}, name="static 5"
    )
    b = _boxes(rng, 60, dtype)
    yield SampleInput((b, rng.random(60).astype(dtype), 0.5), name="60 boxes")
    yield SampleInput((b, _ties(rng, 60, dtype), 0.3), name="tied scores")
    yield SampleInput((exact, _ties(rng, len(exact), dtype, 2), 1 / 3), name="IoU exactly 1/3")
    same = np.repeat(_boxes(rng, 1, dtype), 20, 0)
    yield SampleInput((same, _ties(rng, 20, dtype), 0.5), name="identical boxes")
    flat = _boxes(rng, 30, dtype)
    flat[::2, 2] = flat[::2, 0]
    yield SampleInput((flat, rng.random(30).astype(dtype), 0.0), name="zero-area, thr 0")
    huge = _boxes(rng, 30, dtype, scale=1e30)
    yield SampleInput((huge, rng.random(30).astype(dtype), 0.5), name="huge boxes")
    yield SampleInput((b[:1], np.ones(1, dtype), 0.5), name="1 box")
    yield SampleInput((b[:0], np.ones(0, dtype), 0.5), name="0 boxes")
    yield SampleInput((b[:0], np.ones(0, dtype), 0.5), {"max_output": 3}, name="0 boxes, K")
    yield SampleInput((b, _ties(rng, 60, dtype), 0.5), {"max_output": 100}, name="static K > N")


def batched_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    b = _boxes(rng, 60, dtype)
    idxs = rng.integers(0, 4, 60)
    yield SampleInput((b - 50, _ties(rng, 60, dtype), idxs, 0.3), name="negative, ties")
    yield SampleInput(
        (b, rng.random(60).astype(dtype), idxs.astype(np.int32), 0.5),
        {"max_output": 7},
        name="static 7, int32 idxs",
    )
    yield SampleInput((b, rng.random(60).astype(dtype), idxs, 0.5), name="60 boxes, 4 classes")
    yield SampleInput((b[:0], np.ones(0, dtype), idxs[:0], 0.5), name="0 boxes")
    yield SampleInput((b[:1], np.ones(1, dtype), idxs[:1], 0.5), name="1 box")


def _big(rng: np.random.Generator, n: int, dtype: str) -> np.ndarray:
    return _boxes(rng, n, dtype, scale=600.0)


def nms_references() -> Iterator[ReferenceInput]:
    rng = np.random.default_rng(1)
    for dtype in DTYPES:
        b = _big(rng, 3000, dtype)
        sample = SampleInput((b, _ties(rng, 3000, dtype, 20), 0.5), name=f"3000 tied {dtype}")
        yield ReferenceInput(sample, backends=("aot",))
    for n, backend in ((1500, "aot"), (300, "composite")):
        b = _big(rng, n, "float32")
        sample = SampleInput((b, rng.random(n).astype("float32"), 0.7), {"max_output": n + 10})
        yield ReferenceInput(sample, backends=(backend,), modes=("graph",))
    nan = rng.random(200).astype("float32")
    nan[::9] = np.nan
    sample = SampleInput((_big(rng, 200, "float32"), nan, 0.4), name="NaN scores first")
    yield ReferenceInput(sample, backends=("aot", "composite"))


def batched_references() -> Iterator[ReferenceInput]:
    rng = np.random.default_rng(2)
    for n in (1000, 1001):  # torchvision's two CPU paths
        b = _big(rng, n, "float32")
        sample = SampleInput(
            (b, _ties(rng, n, "float32", 8), rng.integers(0, 80, n), 0.5), name=f"{n} tied"
        )
        yield ReferenceInput(sample, backends=("aot",))
    for n, backend in ((2000, "aot"), (1001, "composite")):
        b = _big(rng, n, "float64")
        sample = SampleInput(
            (b, rng.random(n), rng.integers(0, 80, n), 0.6), {"max_output": n - 200}
        )
        yield ReferenceInput(sample, backends=(backend,), modes=("graph",))


def _errors(batched: bool) -> Iterator[ErrorInput]:
    b = np.ones((3, 4), np.float32)
    s = np.ones(3, np.float32)
    lead = (b, s, np.zeros(3, np.int64)) if batched else (b, s)

    def call(*head: Any, thr: Any = 0.5, **kwargs: Any) -> SampleInput:
        rest = lead[len(head) :]
        return SampleInput((*head, *rest, thr), kwargs)

    yield ErrorInput(call(np.ones((3, 5), np.float32)), ValueError, r"boxes must have shape")
    yield ErrorInput(call(np.ones((4,), np.float32)), ValueError, r"boxes must have shape")
    yield ErrorInput(call(b, np.ones(4, np.float32)), ValueError, r"scores must have one score")
    yield ErrorInput(call(b, np.ones((3, 1), np.float32)), ValueError, r"scores must be 1-D")
    yield ErrorInput(call(b.astype(np.int32)), TypeError, r"boxes must be a float32 or float64")
    yield ErrorInput(call(b.astype(np.float16)), TypeError, r"boxes must be a float32 .*float16")
    yield ErrorInput(call(b, s.astype(np.float64)), TypeError, r"scores must have the dtype")
    yield ErrorInput(call([[0.0, 0, 1, 1]]), TypeError, r"boxes must be a mindspore.Tensor")
    yield ErrorInput(call(thr="0.5"), TypeError, r"iou_threshold must be a number")
    yield ErrorInput(call(max_output=-1), ValueError, r"max_output must be >= 0")
    yield ErrorInput(call(max_output=2.0), TypeError, r"max_output must be an int")
    if batched:
        yield ErrorInput(call(b, s, np.zeros(2, np.int64)), ValueError, r"idxs must have one")
        yield ErrorInput(call(b, s, np.zeros(3, np.float32)), TypeError, r"idxs must be an int")


def nms_errors() -> Iterator[ErrorInput]:
    return _errors(False)


def batched_errors() -> Iterator[ErrorInput]:
    return _errors(True)


def _bench_nms() -> SampleInput:
    rng = np.random.default_rng(0)
    b = _boxes(rng, 5000, "float32", scale=1000.0)
    return SampleInput((b, rng.random(5000).astype("float32"), 0.5), name="5000 boxes")


def _bench_batched() -> SampleInput:
    rng = np.random.default_rng(0)
    b = _boxes(rng, 5000, "float32", scale=1000.0)
    s = rng.random(5000).astype("float32")
    return SampleInput((b, s, rng.integers(0, 80, 5000), 0.5), name="5000 boxes, 80 classes")


#: The composite (the reference backend, not chosen on CPU) runs the float64 samples and its
#: references: each of its graphs (a while loop) takes seconds to compile (the suite's budget).
_COMPOSITE_DTYPES = {"composite": ("float64",)}

OPS: List[OpInfo] = [
    OpInfo(
        name="vision.nms",
        op=nms,
        ref=nms_ref,
        mirrors="torchvision.ops.nms",
        torch_apis=("torchvision.ops.nms",),
        sample_inputs=every_dtype_first(nms_samples, keep=2),
        error_inputs=nms_errors,
        dtypes=DTYPES,
        grad_argnums=(),
        dispatch_op="vision.nms",
        bench_input=_bench_nms,
        backend_dtypes=_COMPOSITE_DTYPES,
        references=nms_references,
    ),
    OpInfo(
        name="vision.batched_nms",
        op=batched_nms,
        ref=batched_nms_ref,
        mirrors="torchvision.ops.batched_nms",
        torch_apis=("torchvision.ops.batched_nms",),
        sample_inputs=every_dtype_first(batched_samples, keep=2),
        error_inputs=batched_errors,
        dtypes=DTYPES,
        grad_argnums=(),
        dispatch_op="vision.batched_nms",
        bench_input=_bench_batched,
        backend_dtypes=_COMPOSITE_DTYPES,
        references=batched_references,
    ),
]
