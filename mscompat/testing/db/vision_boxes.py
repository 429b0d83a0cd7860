"""Op database entries for ``mscompat.vision``'s box ops, IoU losses and focal loss.

The references are torchvision 0.28's ops transcribed in plain PyTorch
(``mscompat.testing.references.torchvision_ops``): the suite never imports torchvision.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, List, Tuple

import numpy as np

from mscompat.testing.db._common import every_dtype_first, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput
from mscompat.vision.box_iou import (
    box_iou,
    complete_box_iou,
    distance_box_iou,
    generalized_box_iou,
)
from mscompat.vision.box_losses import (
    complete_box_iou_loss,
    distance_box_iou_loss,
    generalized_box_iou_loss,
)
from mscompat.vision.boxes import (
    box_area,
    box_convert,
    clip_boxes_to_image,
    masks_to_boxes,
    remove_small_boxes,
)
from mscompat.vision.focal_loss import sigmoid_focal_loss

FLOATS = ("float16", "float32", "float64")
BOX_DTYPES = FLOATS + ("int32", "int64")
FMTS = ("xyxy", "xywh", "cxcywh")


def _ref(name: str) -> Callable[..., Any]:
    return torch_ref(f"mscompat.testing.references.torchvision_ops:{name}")


def _is_int(dtype: str) -> bool:
    return np.dtype(dtype).kind in "iu"


def boxes_xyxy(
    rng: np.random.Generator, n: int, dtype: str, scale: float = 10.0, lead: Tuple[int, ...] = ()
) -> np.ndarray:
    """Random ``(x1, y1, x2, y2)`` boxes with positive sides (integers: rounded, on a 3x
    finer grid so that sides of 0 and ties also occur)."""
    xy = rng.uniform(0, scale, lead + (n, 2))
    wh = rng.uniform(0, scale / 2, lead + (n, 2))
    b = np.concatenate([xy, xy + wh], -1)
    if _is_int(dtype):
        b = np.round(b * 3)
    return b.astype(dtype)


def boxes_in(rng: np.random.Generator, n: int, dtype: str, fmt: str) -> np.ndarray:
    """Random boxes in ``fmt`` (``xywh``/``cxcywh``: a point and a positive size)."""
    if fmt == "xyxy":
        return boxes_xyxy(rng, n, dtype)
    b = np.concatenate([rng.uniform(0, 10, (n, 2)), rng.uniform(0.1, 5, (n, 2))], -1)
    return (np.round(b * 3) if _is_int(dtype) else b).astype(dtype)


def adversarial_pair(rng: np.random.Generator, dtype: str) -> Tuple[np.ndarray, np.ndarray]:
    """Pairs that are identical, touching along an edge or at a corner, nested, disjoint,
    zero-area (a line, a point) and sharing coordinates (ties of max/min)."""
    a = np.array(
        [
            [0, 0, 4, 4],
            [0, 0, 4, 4],
            [0, 0, 4, 4],
            [1, 1, 3, 3],
            [0, 0, 2, 2],
            [2, 2, 2, 6],
            [3, 3, 3, 3],
            [0, 0, 6, 2],
        ],
        dtype,
    )
    b = np.array(
        [
            [0, 0, 4, 4],
            [4, 0, 8, 4],
            [4, 4, 6, 6],
            [0, 0, 4, 4],
            [5, 5, 9, 9],
            [2, 2, 2, 6],
            [3, 3, 3, 3],
            [0, 0, 2, 6],
        ],
        dtype,
    )
    return a, b


def huge_boxes(rng: np.random.Generator, n: int, dtype: str) -> np.ndarray:
    """Boxes with coordinates near the top of the dtype's useful range (float16: 3e4)."""
    scale = 3e4 if dtype == "float16" else 1e6
    return boxes_xyxy(rng, n, dtype, scale=scale)


# ----------------------------------------------------------------------------- box_area


def area_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    a = np.concatenate([adversarial_pair(rng, dtype)[0], huge_boxes(rng, 2, dtype)])
    yield SampleInput((a,), name="xyxy: zero-area, ties, huge")
    yield SampleInput((boxes_in(rng, 5, dtype, "cxcywh"),), {"fmt": "cxcywh"}, name="cxcywh")
    yield SampleInput(
        (boxes_xyxy(rng, 3, dtype, lead=(2,))[:, 0],),
        {"fmt": "xywh"},
        name="xywh, batched (2, 3, 4)",
    )
    yield SampleInput((np.zeros((0, 4), dtype),), name="empty")


def area_errors() -> Iterator[ErrorInput]:
    b = np.ones((3, 4), np.float32)
    yield ErrorInput(SampleInput((b[:, :3],)), ValueError, r"boxes must have shape \(\.\.\., 4\)")
    yield ErrorInput(SampleInput((b, "xyx")), ValueError, r"fmt must be one of")
    yield ErrorInput(SampleInput((b, "cxcywhr")), ValueError, r"fmt='?cxcywhr'?: rotated")
    yield ErrorInput(SampleInput((b.astype(np.bool_),)), TypeError, r"boxes must have a floating")
    yield ErrorInput(SampleInput((b.tolist(),)), TypeError, r"boxes must be a mindspore.Tensor")


# ----------------------------------------------------------------------------- box_convert


def convert_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    big = np.concatenate([boxes_xyxy(rng, 4, dtype), huge_boxes(rng, 2, dtype)])
    yield SampleInput((big, "xyxy", "cxcywh"), name="xyxy->cxcywh (huge too)")
    for in_fmt, out_fmt in (("cxcywh", "xywh"), ("xywh", "xyxy"), ("xyxy", "xyxy")):
        boxes = boxes_in(rng, 5, dtype, in_fmt)
        yield SampleInput((boxes, in_fmt, out_fmt), name=f"{in_fmt}->{out_fmt}")
    yield SampleInput(
        (boxes_xyxy(rng, 3, dtype, lead=(2,)), "xyxy", "xywh"), name="batched xyxy->xywh"
    )
    yield SampleInput((np.zeros((0, 4), dtype), "cxcywh", "xyxy"), name="empty")


def convert_errors() -> Iterator[ErrorInput]:
    b = np.ones((3, 4), np.float32)
    yield ErrorInput(SampleInput((b[:, :3], "xyxy", "xywh")), ValueError, r"boxes must have")
    yield ErrorInput(SampleInput((b, "xyxy", "yxyx")), ValueError, r"out_fmt must be one of")
    yield ErrorInput(SampleInput((b, "ccwh", "xyxy")), ValueError, r"in_fmt must be one of")
    yield ErrorInput(SampleInput((b, "xywhr", "xyxy")), ValueError, r"in_fmt='?xywhr'?: rotated")


# ----------------------------------------------------------------------------- pairwise IoU


def iou_samples(fmts: Tuple[str, ...], extra: Tuple[Tuple[str, Any], ...] = ()) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        a, b = adversarial_pair(rng, dtype)
        yield SampleInput((a, b), name="identical, touching, nested, zero-area")
        for fmt in fmts[::-1]:
            kw = {} if fmt == "xyxy" else {"fmt": fmt}
            yield SampleInput(
                (boxes_in(rng, 7, dtype, fmt), boxes_in(rng, 5, dtype, fmt)), kw, name=fmt
            )
        for label, kwargs in extra:
            yield SampleInput(
                (boxes_xyxy(rng, 4, dtype), boxes_xyxy(rng, 3, dtype)), kwargs, name=label
            )
        yield SampleInput(
            (boxes_xyxy(rng, 4, dtype, lead=(2,)), boxes_xyxy(rng, 3, dtype, lead=(1,))),
            name="batched (2,4,4) x (1,3,4)",
        )
        yield SampleInput((np.zeros((0, 4), dtype), boxes_xyxy(rng, 3, dtype)), name="N=0")
        yield SampleInput((huge_boxes(rng, 5, dtype), huge_boxes(rng, 4, dtype)), name="huge")

    return samples


def iou_errors(with_fmt: bool, with_eps: bool) -> Callable[[], Iterator[ErrorInput]]:
    def errors() -> Iterator[ErrorInput]:
        b = np.ones((3, 4), np.float32)
        yield ErrorInput(SampleInput((b[:, :3], b)), ValueError, r"boxes1 must have shape \(N, 4\)")
        yield ErrorInput(SampleInput((b, b[0])), ValueError, r"boxes2 must have shape \(N, 4\)")
        yield ErrorInput(
            SampleInput((b, b.astype(np.float64))), TypeError, r"boxes2 must have the same dtype"
        )
        yield ErrorInput(
            SampleInput((np.ones((2, 3, 4), np.float32), np.ones((3, 3, 4), np.float32))),
            ValueError,
            r"batch dims of boxes1 and boxes2 must broadcast",
        )
        if with_fmt:
            yield ErrorInput(SampleInput((b, b, "xxyy")), ValueError, r"fmt must be one of")
            yield ErrorInput(SampleInput((b, b, "xyxyxyxy")), ValueError, r"rotated box formats")
        if with_eps:
            yield ErrorInput(SampleInput((b, b), {"eps": "1e-7"}), TypeError, r"eps must be a")

    return errors


def iou_bench() -> SampleInput:
    rng = np.random.default_rng(0)
    return SampleInput(
        (boxes_xyxy(rng, 1000, "float32", 100.0), boxes_xyxy(rng, 1000, "float32", 100.0)),
        name="1000 x 1000 boxes",
    )


# ----------------------------------------------------------------------------- clip, filter


def clip_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    b = boxes_xyxy(rng, 8, dtype, scale=12.0) - (np.array(3, dtype))
    yield SampleInput((b, (6, 8)), name="some outside")
    a = np.array([[0, -1, 8, 6], [-2, 0, 3, 9], [1, 1, 2, 2]], dtype)
    yield SampleInput((a, (6, 8)), name="on the bounds (gradient at the ends)")
    yield SampleInput((np.zeros((0, 4), dtype), (5, 5)), name="empty")
    yield SampleInput((boxes_xyxy(rng, 3, dtype, lead=(2,)), (0, 7.5)), name="batched, height 0")


def clip_errors() -> Iterator[ErrorInput]:
    b = np.ones((3, 4), np.float32)
    yield ErrorInput(SampleInput((b, (5, -1))), ValueError, r"size must be non-negative.*width")
    yield ErrorInput(SampleInput((b, (5,))), TypeError, r"size must be a \(height, width\)")
    yield ErrorInput(SampleInput((b, (5, float("inf")))), ValueError, r"size \(width\) must be")
    yield ErrorInput(SampleInput((b[:, :2], (5, 5))), ValueError, r"boxes must have shape")


def small_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    b = boxes_xyxy(rng, 10, dtype)
    yield SampleInput((b, 2.5), name="fractional min_size")
    a, _ = adversarial_pair(rng, dtype)
    yield SampleInput((a, 2), name="sides exactly min_size (>=), int min_size")
    yield SampleInput((b, 1e9), name="none kept")
    yield SampleInput((np.zeros((0, 4), dtype), 1.0), name="empty")
    yield SampleInput((b, 2.5), {"size": 10}, name="size N (static)")
    yield SampleInput((b, 2.0), {"size": 3, "fill_value": -7}, name="size 3 < kept, fill -7")
    yield SampleInput((np.zeros((0, 4), dtype), 1.0), {"size": 2}, name="empty, size 2")


def small_errors() -> Iterator[ErrorInput]:
    b = np.ones((3, 4), np.float32)
    yield ErrorInput(SampleInput((b[:, :3], 1.0)), ValueError, r"boxes must have shape \(N, 4\)")
    yield ErrorInput(SampleInput((b[None], 1.0)), ValueError, r"boxes must have shape \(N, 4\)")
    yield ErrorInput(SampleInput((b, "1")), TypeError, r"min_size must be a number")
    yield ErrorInput(SampleInput((b, 1.0), {"size": -1}), ValueError, r"size must be >= 0")
    yield ErrorInput(SampleInput((b, 1.0), {"size": 2.0}), TypeError, r"size must be an int")
    yield ErrorInput(
        SampleInput((b, 1.0), {"size": 3, "fill_value": None}), TypeError, r"fill_value must be"
    )


def masks_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    m = (rng.uniform(size=(5, 7, 9)) < 0.1).astype(dtype)
    m[2] = 0  # empty mask
    m[3] = 0
    m[3, 4, 5] = 1  # one pixel
    m[4] = 1  # full
    yield SampleInput((m,), name="random, empty, one-pixel and full masks")
    yield SampleInput((np.zeros((0, 5, 5), dtype),), name="N=0")
    yield SampleInput((np.zeros((3, 0, 4), dtype),), name="H=0 gives (0, 4)")


def masks_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(SampleInput((np.ones((4, 4), np.uint8),)), ValueError, r"masks must have")
    yield ErrorInput(SampleInput(([[1]],)), TypeError, r"masks must be a mindspore.Tensor")


# ----------------------------------------------------------------------------- losses


def loss_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    b1, b2 = boxes_xyxy(rng, 9, dtype), boxes_xyxy(rng, 9, dtype)
    a, b = adversarial_pair(rng, dtype)
    yield SampleInput((a[:5], b[:5]), name="identical, touching, nested, disjoint (none)")
    yield SampleInput((b1, b2, "mean"), name="mean")
    yield SampleInput((b1, b2), {"eps": 0.5, "reduction": "sum"}, name="eps 0.5, sum")
    yield SampleInput((b1[0], b2[0]), name="one pair (4,)")
    yield SampleInput((huge_boxes(rng, 6, dtype), huge_boxes(rng, 6, dtype), "sum"), name="huge")
    e = np.zeros((0, 4), dtype)
    yield SampleInput((e, e, "mean"), name="empty mean (0)")
    yield SampleInput((e, e), name="empty none")


def loss_errors() -> Iterator[ErrorInput]:
    b = np.ones((3, 4), np.float32)
    yield ErrorInput(SampleInput((b[:, :3], b[:, :3])), ValueError, r"boxes1 must have shape")
    yield ErrorInput(SampleInput((b, b[:2])), ValueError, r"boxes2 must have the same shape")
    yield ErrorInput(SampleInput((b, b, "avg")), ValueError, r"reduction must be one of")
    yield ErrorInput(SampleInput((b, b), {"eps": None}), TypeError, r"eps must be a number")


def zero_area_loss_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    """The GIoU/DIoU cases plus zero-area pairs (0 / eps: finite); CIoU's aspect ratio w / h
    of a zero-height box is NaN in torchvision too, so it gets only the others."""
    yield from loss_samples(dtype, rng)
    a, b = adversarial_pair(rng, dtype)
    yield SampleInput((a[5:], b[5:]), name="zero-area pairs")


def loss_bench() -> SampleInput:
    rng = np.random.default_rng(0)
    return SampleInput(
        (boxes_xyxy(rng, 10000, "float32", 100.0), boxes_xyxy(rng, 10000, "float32", 100.0)),
        {"reduction": "mean"},
        name="10k box pairs, mean",
    )


def focal_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = (rng.standard_normal((6, 5)) * 3).astype(dtype)
    hard = (rng.uniform(size=(6, 5)) < 0.3).astype(dtype)
    soft = rng.uniform(size=(6, 5)).astype(dtype)
    yield SampleInput((x, hard), name="defaults")
    yield SampleInput((x, soft, 0.5, 1.5, "mean"), name="soft, a.5 g1.5 mean")
    yield SampleInput((x, hard), {"alpha": -1, "gamma": 0, "reduction": "sum"}, name="a-1 g0 (BCE)")
    ext = x.copy()
    ext.reshape(-1)[0::3] = 1e4
    ext.reshape(-1)[1::3] = -1e4
    yield SampleInput((ext, hard), {"reduction": "mean"}, name="logits +-1e4")
    yield SampleInput(
        (
            (rng.standard_normal((2, 3, 4))).astype(dtype),
            rng.uniform(size=(2, 3, 4)).astype(dtype),
            1.0,
            2.5,
        ),
        name="3-D, a1 g2.5",
    )
    e = np.zeros((0, 5), dtype)
    yield SampleInput((e, e), {"reduction": "mean"}, name="empty mean (NaN)")


def focal_errors() -> Iterator[ErrorInput]:
    x = np.ones((4, 3), np.float32)
    yield ErrorInput(SampleInput((x, x, 1.5)), ValueError, r"alpha must be in the range \[0, 1\]")
    yield ErrorInput(SampleInput((x, x, -0.5)), ValueError, r"alpha must be in the range")
    yield ErrorInput(SampleInput((x, x[:, :2])), ValueError, r"targets must have the same shape")
    yield ErrorInput(SampleInput((x.astype(np.int32), x)), TypeError, r"inputs must be a floating")
    yield ErrorInput(SampleInput((x, x), {"reduction": "elementwise"}), ValueError, r"reduction")
    yield ErrorInput(SampleInput((x, x), {"gamma": "2"}), TypeError, r"gamma must be a number")


def focal_bench() -> SampleInput:
    rng = np.random.default_rng(0)
    shape = (12500, 80)
    return SampleInput(
        (
            (rng.standard_normal(shape) * 3).astype(np.float32),
            (rng.uniform(size=shape) < 0.1).astype(np.float32),
        ),
        {"reduction": "sum"},
        name="1e6 logits, sum",
    )


def _entry(name: str, op: Any, samples: Any, errors: Any, **extra: Any) -> OpInfo:
    return OpInfo(
        name=f"vision.{name}",
        op=op,
        ref=_ref(name),
        mirrors=f"torchvision.ops.{name}",
        torch_apis=(f"torchvision.ops.{name}",),
        sample_inputs=samples,
        error_inputs=errors,
        **extra,
    )


_IOU_EXTRA: Tuple[Tuple[str, Any], ...] = (("eps 0.1", {"eps": 0.1}),)

OPS: List[OpInfo] = [
    _entry("box_area", box_area, every_dtype_first(area_samples), area_errors, dtypes=BOX_DTYPES),
    _entry(
        "box_convert",
        box_convert,
        every_dtype_first(convert_samples),
        convert_errors,
        dtypes=BOX_DTYPES,
    ),
    _entry(
        "box_iou",
        box_iou,
        every_dtype_first(iou_samples(FMTS), 2),
        iou_errors(True, False),
        dtypes=BOX_DTYPES,
        grad_argnums=(0, 1),
        bench_input=iou_bench,
    ),
    _entry(
        "generalized_box_iou",
        generalized_box_iou,
        every_dtype_first(iou_samples(("xyxy",))),
        iou_errors(False, False),
        dtypes=BOX_DTYPES,
        grad_argnums=(0, 1),
    ),
    *(
        _entry(
            name,
            op,
            every_dtype_first(iou_samples(("xyxy",), _IOU_EXTRA)),
            iou_errors(False, True),
            dtypes=BOX_DTYPES,
            grad_argnums=(0, 1),
        )
        for name, op in (
            ("distance_box_iou", distance_box_iou),
            ("complete_box_iou", complete_box_iou),
        )
    ),
    _entry(
        "clip_boxes_to_image",
        clip_boxes_to_image,
        every_dtype_first(clip_samples),
        clip_errors,
        dtypes=BOX_DTYPES,
    ),
    _entry(
        "remove_small_boxes",
        remove_small_boxes,
        every_dtype_first(small_samples),
        small_errors,
        dtypes=BOX_DTYPES,
        grad_argnums=(),
    ),
    _entry(
        "masks_to_boxes",
        masks_to_boxes,
        every_dtype_first(masks_samples),
        masks_errors,
        dtypes=("bool", "uint8", "float32"),
        grad_argnums=(),
    ),
    *(
        _entry(
            name,
            op,
            every_dtype_first(samples),
            loss_errors,
            dtypes=FLOATS + ("int64",),
            grad_argnums=(0, 1),
            bench_input=loss_bench,
            dispatch_op=f"vision.{name}",
            # every dtype runs the kernel (boxes other than float32/64 are upcast to float32
            # first); the composite, the reference backend elsewhere: one float64 sample (the
            # suite's time budget; all of them in `mscompat parity`)
            backend_dtypes={"composite": ("float64",)},
        )
        for name, op, samples in (
            ("generalized_box_iou_loss", generalized_box_iou_loss, zero_area_loss_samples),
            ("distance_box_iou_loss", distance_box_iou_loss, zero_area_loss_samples),
            ("complete_box_iou_loss", complete_box_iou_loss, loss_samples),
        )
    ),
    _entry(
        "sigmoid_focal_loss",
        sigmoid_focal_loss,
        every_dtype_first(focal_samples, 2),
        focal_errors,
        bench_input=focal_bench,
    ),
]
