"""Op database entries for MMDetection's cross-entropy losses and accuracy
(``mscompat.losses.cross_entropy``, ``mscompat.losses.accuracy``)."""

from __future__ import annotations

from typing import Any, Callable, Iterator, List

import numpy as np

from mscompat.losses import (
    Accuracy,
    CrossEntropyLoss,
    accuracy,
    binary_cross_entropy,
    cross_entropy,
    mask_cross_entropy,
)
from mscompat.testing.db._common import every_dtype_first, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, ToleranceOverride
from mscompat.testing.tolerances import Tolerance


def _ref(name: str) -> Callable[..., Any]:
    return torch_ref(f"mscompat.testing.references.mmdet_cls:{name}")


def _logits(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return (rng.standard_normal(shape) * 3).astype(dtype)


def _extreme(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    x = _logits(rng, shape, dtype)
    x.reshape(-1)[0::3] = 1e4
    x.reshape(-1)[1::3] = -1e4
    return x


def _labels(rng: np.random.Generator, n: int, c: int) -> np.ndarray:
    return rng.integers(0, c, size=n).astype(np.int64)


def ce_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    n, c = 7, 5
    x, y = _logits(rng, (n, c), dtype), _labels(rng, n, c)
    ign = y.copy()
    ign[[1, 4]] = -100
    w = rng.uniform(size=n).astype(dtype)
    cw = rng.uniform(0.5, 2, size=c).astype(dtype)
    yield SampleInput((x, y), name="defaults")
    yield SampleInput((x, ign), {"reduction": "none"}, name="ignore -100 none")
    yield SampleInput((x, y), {"class_weight": cw, "reduction": "sum"}, name="class_weight")
    # float16 pred with a weight gives float32 (MMDetection's weight.float()); a 1-ulp float16
    # difference of PyTorch's weighted nll_loss then shows at float32 tolerance: float32 only
    yield SampleInput((x, y, w), {"class_weight": cw, "reduction": "sum"}, name="w, class_weight")
    y3 = y.copy()
    y3[0] = 3
    yield SampleInput((x, y3), {"ignore_index": 3, "avg_non_ignore": True}, name="ignore_index 3")
    yield SampleInput((x, ign, w), {"avg_non_ignore": True}, name="weight avg_non_ignore")
    yield SampleInput((_extreme(rng, (n, c), dtype), y), name="logits +-1e4")
    yield SampleInput((np.zeros((0, c), dtype), np.zeros(0, np.int64)), name="empty mean (NaN)")
    yield SampleInput(
        (_logits(rng, (2, c, 3, 2), dtype), rng.integers(0, c, size=(2, 3, 2))), name="(N,C,H,W)"
    )


def ce_errors() -> Iterator[ErrorInput]:
    x, y = np.zeros((4, 3), np.float32), np.array([0, 1, 2, 1])
    yield ErrorInput(SampleInput((x, y[:3])), ValueError, r"pred must have shape \(N, C, \*\)")
    yield ErrorInput(SampleInput((x, x)), TypeError, r"label must be an integer Tensor")
    yield ErrorInput(SampleInput((x, np.array([0, 1, 3, 1]))), ValueError, r"in \[0, 3\)")
    yield ErrorInput(SampleInput((x, np.array([0, -1, 2, 1]))), ValueError, r"in \[0, 3\)")
    yield ErrorInput(SampleInput((x, y), {"reduction": "avg"}), ValueError, r"reduction must be")
    yield ErrorInput(
        SampleInput((x, y), {"reduction": "sum", "avg_factor": 2.0}),
        ValueError,
        r"avg_factor can not be used with reduction=\"sum\"",
    )
    yield ErrorInput(
        SampleInput((x, y), {"class_weight": [1.0, 2.0]}),
        ValueError,
        r"class_weight must have shape \(3,\)",
    )
    yield ErrorInput(SampleInput((x.astype(np.int32), y)), TypeError, r"pred must be a floating")


def bce_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    n, c = 6, 4
    x = _logits(rng, (n, c), dtype)
    y = rng.integers(0, c + 1, size=n).astype(np.int64)  # c: background
    y[2] = -100
    w = rng.uniform(size=n).astype(dtype)
    soft = rng.uniform(size=(n, c)).astype(dtype)
    soft[0, 1] = -100.0
    cw = rng.uniform(0.5, 2, size=c).astype(dtype)
    yield SampleInput((x, y), name="index labels, background, ignore")
    yield SampleInput((x, y, w), {"avg_non_ignore": True}, name="index avg_non_ignore, weight")
    # float16 logits with the float32 one-hot labels: ATen rounds the weighted log-sigmoid to
    # float16 (an in-place mul_), the rest of the loss is float32
    yield SampleInput((x, y), {"class_weight": cw, "reduction": "none"}, name="index class_weight")
    # the mean divided by eps (float32's): a cotangent of 8e6 that ATen's own backward formula
    # carries into float16 logits as (sigmoid(x) - t) * 8e6 (inf only where that overflows)
    yield SampleInput((x, soft), {"avg_factor": 0.0}, name="soft targets, avg_factor=0")
    yield SampleInput((x, soft), {"reduction": "sum"}, name="soft targets, ignored")
    yield SampleInput(
        (x, soft, rng.uniform(size=(n, c)).astype(dtype)),
        {"avg_factor": 2.0},
        name="soft weight avg_factor",
    )
    yield SampleInput((x, soft), {"class_weight": cw}, name="class_weight (pos_weight)")
    yield SampleInput((_extreme(rng, (n, c), dtype), y), {"reduction": "none"}, name="+-1e4")
    yield SampleInput((_logits(rng, (n,), dtype), soft[:, 0]), name="(N,) pred and label")
    yield SampleInput((np.zeros((0, c), dtype), np.zeros(0, np.int64)), name="empty")


def bce_errors() -> Iterator[ErrorInput]:
    x = np.zeros((4, 3), np.float32)
    yield ErrorInput(SampleInput((x, x[:2])), ValueError, r"label must have the same shape")
    yield ErrorInput(SampleInput((x, np.array([0, 1]))), ValueError, r"pred must have shape")
    yield ErrorInput(SampleInput((x, np.zeros(4, np.float32))), TypeError, r"label must be an")
    yield ErrorInput(
        SampleInput((x, np.array([0, 1, 2, 3]), np.ones(3, np.float32))),
        ValueError,
        r"weight must have N=4",
    )
    yield ErrorInput(
        SampleInput((x, x), {"reduction": "sum", "avg_factor": 1.0}),
        ValueError,
        r"avg_factor can not be used",
    )


def mask_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    n, c = 3, 4
    x = _logits(rng, (n, c, 4, 3), dtype)
    t = (rng.uniform(size=(n, 4, 3)) < 0.5).astype(dtype)
    lab = np.array([3, 0, 3])
    yield SampleInput((x, t, lab), name="(N, C, H, W)")
    yield SampleInput(
        (x, t, lab),
        {"class_weight": rng.uniform(size=(3,)).astype(dtype)},
        name="class_weight over W",
    )
    yield SampleInput((_extreme(rng, (n, c, 4, 3), dtype), t, lab), name="+-1e4")


def mask_errors() -> Iterator[ErrorInput]:
    x, t, lab = (
        np.zeros((2, 3, 4, 4), np.float32),
        np.zeros((2, 4, 4), np.float32),
        np.array([0, 2]),
    )
    yield ErrorInput(
        SampleInput((x, t, lab), {"reduction": "sum"}),
        ValueError,
        r"supports only reduction='mean'",
    )
    yield ErrorInput(
        SampleInput((x, t, lab), {"ignore_index": -100}),
        ValueError,
        r"BCE loss does not support ignore_index",
    )
    yield ErrorInput(SampleInput((x, t, np.array([0, 3]))), ValueError, r"in \[0, 3\)")
    yield ErrorInput(SampleInput((x, t[:, :3], lab)), ValueError, r"target must have shape")


def ce_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    n, c = 6, 4
    x, y = _logits(rng, (n, c), dtype), _labels(rng, n, c)
    ign = y.copy()
    ign[0] = 2
    w = rng.uniform(size=n).astype(dtype)
    yield SampleInput((x, y), name="softmax defaults")
    yield SampleInput(
        (x, y, w),
        {"reduction_override": "sum"},
        init_kwargs={"class_weight": [1.0, 2.0, 0.5, 1.5], "loss_weight": 0.5},
        name="class_weight loss_weight",
    )
    yield SampleInput(
        (x, ign),
        {"ignore_index": 2},
        init_kwargs={"avg_non_ignore": True},
        name="per-call ignore_index",
    )
    yield SampleInput(
        (x, np.append(y[:-1], c)),
        init_kwargs={"use_sigmoid": True},
        name="sigmoid, background label",
    )
    yield SampleInput(
        (x, y, w),
        {"avg_factor": 3.0},
        init_kwargs={"use_sigmoid": True, "class_weight": [1.0, 2.0, 0.5, 1.5]},
        name="sigmoid class_weight avg_factor",
    )
    yield SampleInput(
        (
            _logits(rng, (3, c, 2, 2), dtype),
            (rng.uniform(size=(3, 2, 2)) < 0.5).astype(dtype),
            np.array([1, 0, 3]),
        ),
        init_kwargs={"use_mask": True},
        name="use_mask",
    )


def ce_cell_errors() -> Iterator[ErrorInput]:
    x, y = np.zeros((4, 3), np.float32), np.array([0, 1, 2, 1])
    yield ErrorInput(
        SampleInput((x, y), init_kwargs={"use_sigmoid": True, "use_mask": True}),
        ValueError,
        r"use_sigmoid and use_mask can not both be True",
    )
    yield ErrorInput(
        SampleInput((x, y), {"reduction_override": "avg"}),
        ValueError,
        r"reduction_override must be",
    )
    yield ErrorInput(
        SampleInput((x, y), init_kwargs={"loss_weight": "1"}),
        TypeError,
        r"loss_weight must be a number",
    )


def accuracy_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    n, c = 8, 5
    # distinct scores per row: PyTorch's topk order of ties is unspecified
    x = np.stack([rng.permutation(c) for _ in range(n)]).astype(dtype) / c
    y = _labels(rng, n, c)
    yield SampleInput((x, y), name="top1")
    yield SampleInput((x, y), {"topk": (1, 3), "thresh": 0.5}, name="topk (1, 3), thresh")
    yield SampleInput(
        (np.zeros((0, c), dtype), np.zeros(0, np.int64)), {"topk": (1, 2)}, name="empty"
    )


def accuracy_errors() -> Iterator[ErrorInput]:
    x, y = np.zeros((4, 3), np.float32), np.array([0, 1, 2, 1])
    yield ErrorInput(SampleInput((x, y), {"topk": 4}), ValueError, r"maxk 4 exceeds pred dim")
    yield ErrorInput(SampleInput((x, y), {"topk": [1]}), TypeError, r"topk must be an int")
    yield ErrorInput(SampleInput((x, y[:2])), ValueError, r"pred must have shape \(N, C\)")


def accuracy_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = np.stack([rng.permutation(4) for _ in range(6)]).astype(dtype) / 4
    y = _labels(rng, 6, 4)
    yield SampleInput((x, y), init_kwargs={"topk": 2, "thresh": 0.2}, name="topk 2 thresh")


def accuracy_cell_errors() -> Iterator[ErrorInput]:
    x, y = np.zeros((4, 3), np.float32), np.array([0, 1, 2, 1])
    yield ErrorInput(SampleInput((x, y), init_kwargs={"topk": 0}), ValueError, r"topk values")
    yield ErrorInput(SampleInput((x, y), init_kwargs={"thresh": "a"}), TypeError, r"thresh must")


def ce_bench() -> SampleInput:
    rng = np.random.default_rng(0)
    return SampleInput(
        (_logits(rng, (100000, 80), "float32"), _labels(rng, 100000, 80)),
        name="100k anchors x 80 classes",
    )


def bce_bench() -> SampleInput:
    rng = np.random.default_rng(0)
    return SampleInput(
        (_logits(rng, (100000, 80), "float32"), _labels(rng, 100000, 81)),
        name="100k anchors x 80 classes, index labels",
    )


_HALF_LOGSOFTMAX = ToleranceOverride(
    "float16",
    "grad",
    Tolerance(atol=2e-3, rtol=1e-2),
    "PyTorch's float16 softmax backward rounds its intermediate products; ours rounds once",
)

OPS: List[OpInfo] = [
    OpInfo(
        name="losses.cross_entropy",
        op=cross_entropy,
        ref=_ref("cross_entropy"),
        mirrors="mmdet.models.losses.cross_entropy",
        torch_apis=(
            "mmdet.models.losses.cross_entropy",
            "mmdet.models.losses.cross_entropy_loss.cross_entropy",
        ),
        sample_inputs=every_dtype_first(ce_samples, keep=3),
        error_inputs=ce_errors,
        bench_input=ce_bench,
        dispatch_op="losses.cross_entropy",
        # the fused kernel runs float32/float64 (float16: the op-by-op composite)
        backend_dtypes={"aot": ("float32", "float64")},
        tolerance_overrides=(_HALF_LOGSOFTMAX,),
    ),
    OpInfo(
        name="losses.binary_cross_entropy",
        op=binary_cross_entropy,
        ref=_ref("binary_cross_entropy"),
        mirrors="mmdet.models.losses.binary_cross_entropy",
        torch_apis=(
            "mmdet.models.losses.binary_cross_entropy",
            "mmdet.models.losses.cross_entropy_loss.binary_cross_entropy",
        ),
        sample_inputs=every_dtype_first(bce_samples, keep=4),
        error_inputs=bce_errors,
        bench_input=bce_bench,
    ),
    OpInfo(
        name="losses.mask_cross_entropy",
        op=mask_cross_entropy,
        ref=_ref("mask_cross_entropy"),
        mirrors="mmdet.models.losses.mask_cross_entropy",
        torch_apis=(
            "mmdet.models.losses.mask_cross_entropy",
            "mmdet.models.losses.cross_entropy_loss.mask_cross_entropy",
        ),
        sample_inputs=every_dtype_first(mask_samples, keep=1),
        error_inputs=mask_errors,
    ),
    OpInfo(
        name="losses.CrossEntropyLoss",
        op=CrossEntropyLoss,
        ref=_ref("cross_entropy_module"),
        mirrors="mmdet.models.losses.CrossEntropyLoss",
        torch_apis=(
            "mmdet.models.losses.CrossEntropyLoss",
            "mmdet.models.losses.cross_entropy_loss.CrossEntropyLoss",
        ),
        sample_inputs=every_dtype_first(ce_cell_samples, keep=1),
        error_inputs=ce_cell_errors,
        is_cell=True,
        tolerance_overrides=(_HALF_LOGSOFTMAX,),
    ),
    OpInfo(
        name="losses.accuracy",
        op=accuracy,
        ref=torch_ref("mscompat.testing.references.mmdet_misc:accuracy"),
        mirrors="mmdet.models.losses.accuracy",
        torch_apis=("mmdet.models.losses.accuracy", "mmdet.models.losses.accuracy.accuracy"),
        sample_inputs=every_dtype_first(accuracy_samples, keep=1),
        error_inputs=accuracy_errors,
        grad_argnums=(),
    ),
    OpInfo(
        name="losses.Accuracy",
        op=Accuracy,
        ref=torch_ref("mscompat.testing.references.mmdet_misc:accuracy_module"),
        mirrors="mmdet.models.losses.Accuracy",
        torch_apis=("mmdet.models.losses.Accuracy", "mmdet.models.losses.accuracy.Accuracy"),
        sample_inputs=every_dtype_first(accuracy_cell_samples, keep=1),
        is_cell=True,
        grad_argnums=(),
        error_inputs=accuracy_cell_errors,
    ),
]
