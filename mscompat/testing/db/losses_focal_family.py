"""Op database entries for MMDetection's focal-loss family: ``FocalLoss`` and
``py_focal_loss_with_prob``, varifocal, quality and distribution focal losses."""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator, List, Optional

import numpy as np
from mindspore import Tensor

from mscompat.losses import (
    DistributionFocalLoss,
    FocalLoss,
    QualityFocalLoss,
    VarifocalLoss,
    distribution_focal_loss,
    py_focal_loss_with_prob,
    quality_focal_loss,
    quality_focal_loss_tensor_target,
    quality_focal_loss_with_prob,
    varifocal_loss,
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


def _prob(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return rng.uniform(0.02, 0.98, size=shape).astype(dtype)


def _sparse(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    """IoU-like soft targets: 0 for most elements."""
    return (rng.uniform(size=shape) * (rng.uniform(size=shape) < 0.3)).astype(dtype)


N, C = 6, 5


# ----------------------------------------------------------------------------- FocalLoss


def focal_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _logits(rng, (N, C), dtype)
    y = rng.integers(0, C + 1, size=N).astype(np.int64)  # C: background
    w = rng.uniform(size=N).astype(dtype)
    yield SampleInput((x, y), name="index labels with background")
    yield SampleInput(
        (x, y, w),
        {"avg_factor": 2.5},
        init_kwargs={"loss_weight": 0.5},
        name="index labels weight avg_factor",
    )
    yield SampleInput(
        (_prob(rng, (N, C), dtype), _sparse(rng, (N, C), dtype), w),
        {"reduction_override": "sum"},
        init_kwargs={"activated": True},
        name="activated soft",
    )
    yield SampleInput((_extreme(rng, (N, C), dtype), y), name="logits +-1e4")
    yield SampleInput(
        (np.zeros((0, C), dtype), np.zeros(0, np.int64)),
        {"avg_factor": 0.0},
        name="empty, avg_factor 0",
    )


def focal_cell_errors() -> Iterator[ErrorInput]:
    # out-of-range index labels: checked eagerly only on this path (FocalLoss's note; the
    # py_focal_loss_with_prob entry checks them in both modes, tests/test_losses_mmdet.py here)
    x = np.zeros((4, 3), np.float32)
    yield ErrorInput(SampleInput((x, np.zeros(4, np.float32))), TypeError, r"class indices")
    yield ErrorInput(
        SampleInput((x, x), init_kwargs={"use_sigmoid": False}),
        ValueError,
        r"Only sigmoid focal loss supported now",
    )
    yield ErrorInput(
        SampleInput((x, x), {"reduction_override": "sum", "avg_factor": 1.0}),
        ValueError,
        r"avg_factor can not be used",
    )


def prob_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p = _prob(rng, (N, C), dtype)
    yield SampleInput((p, _sparse(rng, (N, C), dtype)), name="soft targets")
    yield SampleInput(
        (p, (rng.uniform(size=(N, C)) < 0.3).astype(dtype), rng.uniform(size=N).astype(dtype)),
        {"gamma": 1.0, "avg_factor": 2.0},
        name="weight avg_factor",
    )
    edge = p.copy()
    edge[0, :2] = (0.0, 1.0)  # BCE's logs clamped at -100: finite
    yield SampleInput((edge, (rng.uniform(size=(N, C)) < 0.3).astype(dtype)), name="p = 0, 1")


def prob_errors() -> Iterator[ErrorInput]:
    x = np.zeros((4, 3), np.float32)
    yield ErrorInput(SampleInput((x, x[:2])), ValueError, r"target must have the same shape")
    yield ErrorInput(SampleInput((x, x), {"gamma": -1.0}), ValueError, r"gamma must be >= 0")
    yield ErrorInput(SampleInput((x, np.array([0, 4, 0, 0]))), ValueError, r"class values")
    yield ErrorInput(SampleInput((x + 1.5, x)), ValueError, r"pred: all elements of input")
    yield ErrorInput(SampleInput((x, np.array([0, -1, 0, 0]))), ValueError, r"class values")


# ------------------------------------------------------------------------------ varifocal


def vfl_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x, t = _logits(rng, (N, C), dtype), _sparse(rng, (N, C), dtype)
    yield SampleInput((x, t), name="defaults")
    yield SampleInput(
        (x, t, rng.uniform(size=(N, 1)).astype(dtype)),
        {"iou_weighted": False, "reduction": "none"},
        name="not iou_weighted",
    )
    if dtype == "float16":
        # the mean over float32's eps: float16 gradients overflow, inf and NaN where PyTorch's
        # are (in float32 the 8e6 scale shows only the target gradient's cancellation)
        yield SampleInput((x, t), {"avg_factor": 0.0}, name="avg_factor 0")
    yield SampleInput((_extreme(rng, (N, C), dtype), t), {"reduction": "sum"}, name="+-1e4")
    yield SampleInput((np.zeros((0, C), dtype), np.zeros((0, C), dtype)), name="empty")


def vfl_errors() -> Iterator[ErrorInput]:
    x = np.zeros((4, 3), np.float32)
    yield ErrorInput(SampleInput((x, x[:2])), ValueError, r"target must have the same shape")
    yield ErrorInput(
        SampleInput((x, x), {"reduction": "sum", "avg_factor": 1.0}),
        ValueError,
        r"avg_factor can not be used",
    )


def vfl_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x, t = _logits(rng, (N, C), dtype), _sparse(rng, (N, C), dtype)
    yield SampleInput((x, t), name="defaults")
    yield SampleInput(
        (x, t),
        {"reduction_override": "sum"},
        init_kwargs={"alpha": 0.25, "loss_weight": 2.0},
        name="override sum",
    )


def vfl_cell_errors() -> Iterator[ErrorInput]:
    x = np.zeros((4, 3), np.float32)
    yield ErrorInput(
        SampleInput((x, x), init_kwargs={"alpha": -0.1}), ValueError, r"alpha must be >= 0"
    )
    yield ErrorInput(
        SampleInput((x, x), init_kwargs={"use_sigmoid": False}),
        ValueError,
        r"Only sigmoid varifocal",
    )


# ------------------------------------------------------------------------------------ QFL


def _qfl(
    pred: Tensor,
    label: Tensor,
    score: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: Any = None,
    beta: float = 2.0,
    activated: bool = False,
) -> Tensor:
    """The tuple target's two tensors passed apart (the database feeds arrays)."""
    fn = quality_focal_loss_with_prob if activated else quality_focal_loss
    return fn(pred, (label, score), weight, reduction, avg_factor, beta)


def _qfl_prob(
    pred: Tensor,
    label: Tensor,
    score: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: Any = None,
    beta: float = 2.0,
) -> Tensor:
    return quality_focal_loss_with_prob(pred, (label, score), weight, reduction, avg_factor, beta)


def qfl_prob_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p, y, s = _prob(rng, (N, C), dtype), _qfl_labels(rng), rng.uniform(size=N).astype(dtype)
    yield SampleInput((p, y, s), name="defaults")
    yield SampleInput(
        (p, y, s, rng.uniform(size=N).astype(dtype)), {"reduction": "sum"}, name="weight sum"
    )


def _qfl_labels(rng: np.random.Generator) -> np.ndarray:
    y = rng.integers(0, C + 1, size=N).astype(np.int64)
    y[0], y[1] = C, -1  # background, negative: no positive class
    return y


def qfl_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x, y, s = _logits(rng, (N, C), dtype), _qfl_labels(rng), rng.uniform(size=N).astype(dtype)
    w = rng.uniform(size=N).astype(dtype)
    yield SampleInput((x, y, s), name="defaults")
    yield SampleInput((x, y, s, w), {"reduction": "none", "beta": 1.5}, name="weight beta 1.5")
    yield SampleInput((x, y, s), {"avg_factor": 0.0}, name="avg_factor 0 (float16 overflows)")
    yield SampleInput((_prob(rng, (N, C), dtype), y, s), {"activated": True}, name="with_prob")
    yield SampleInput((_extreme(rng, (N, C), dtype), y, s), {"reduction": "sum"}, name="+-1e4")
    yield SampleInput((x, np.full(N, C), s), {"avg_factor": 0.0}, name="no positives")


def qfl_errors() -> Iterator[ErrorInput]:
    x, y, s = np.zeros((4, 3), np.float32), np.array([0, 1, 3, 2]), np.zeros(4, np.float32)
    yield ErrorInput(SampleInput((x, y[:2], s)), ValueError, r"label and score must have shape")
    yield ErrorInput(SampleInput((x, s, s)), TypeError, r"label must hold class indices")
    yield ErrorInput(SampleInput((x[0], y, s)), ValueError, r"pred must have shape \(N, C\)")


def qflt_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x, t = _logits(rng, (N, C), dtype), _sparse(rng, (N, C), dtype)
    yield SampleInput((x, t), name="defaults")
    yield SampleInput(
        (_prob(rng, (N, C), dtype), t), {"activated": True, "beta": 1.0}, name="activated"
    )
    yield SampleInput((_extreme(rng, (N, C), dtype), t), name="+-1e4")


def qflt_errors() -> Iterator[ErrorInput]:
    x = np.zeros((4, 3), np.float32)
    yield ErrorInput(SampleInput((x, x[:2])), ValueError, r"target must have the same shape")
    yield ErrorInput(SampleInput((x, x), {"activated": 1}), TypeError, r"activated must be")


class _QflCell(QualityFocalLoss):
    """QualityFocalLoss whose tuple target may come apart (``score=``) for the database."""

    def construct(
        self,
        pred: Tensor,
        target: Any,
        weight: Optional[Tensor] = None,
        avg_factor: Any = None,
        reduction_override: Optional[str] = None,
        score: Optional[Tensor] = None,
    ) -> Tensor:
        if score is not None:
            target = (target, score)
        return super().construct(pred, target, weight, avg_factor, reduction_override)


def qfl_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x, y, s = _logits(rng, (N, C), dtype), _qfl_labels(rng), rng.uniform(size=N).astype(dtype)
    yield SampleInput(
        (_prob(rng, (N, C), dtype), y),
        {"score": s},
        init_kwargs={"activated": True, "loss_weight": 0.5},
        name="tuple activated",
    )
    yield SampleInput(
        (x, _sparse(rng, (N, C), dtype)), {"reduction_override": "none"}, name="tensor target"
    )


def qfl_cell_errors() -> Iterator[ErrorInput]:
    x = np.zeros((4, 3), np.float32)
    yield ErrorInput(
        SampleInput((x, x), init_kwargs={"use_sigmoid": False}), ValueError, r"Only sigmoid in QFL"
    )
    yield ErrorInput(SampleInput((x, x[:1])), ValueError, r"target must have the same shape")


# ------------------------------------------------------------------------------------ DFL


def _dfl_inputs(rng: np.random.Generator, n: int, dtype: str) -> Any:
    pred = _logits(rng, (n, 17), dtype)
    label = rng.uniform(0, 15.99, size=n).astype(dtype)
    label[0] = 3.0  # an integer target: all weight on the left bin
    return pred, label


def dfl_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    # 11 rows: the kernel's float32 path takes 8 rows at a time, the rest one by one
    pred, label = _dfl_inputs(rng, 11, dtype)
    w = rng.uniform(size=11).astype(dtype)
    yield SampleInput((pred, label), name="defaults")
    yield SampleInput((pred, label, w), {"reduction": "none"}, name="weight none")
    yield SampleInput((pred, label, w), {"avg_factor": 4.0}, name="avg_factor")
    yield SampleInput((_extreme(rng, (11, 17), dtype), label), {"reduction": "sum"}, name="+-1e4")
    yield SampleInput((np.zeros((0, 17), dtype), np.zeros(0, dtype)), name="empty")


def dfl_errors() -> Iterator[ErrorInput]:
    pred = np.zeros((3, 5), np.float32)
    yield ErrorInput(
        SampleInput((pred, np.array([0.5, 4.0, 1.0], np.float32))),
        ValueError,
        r"each target must lie in \[0, 4\)",
    )
    yield ErrorInput(
        SampleInput((pred, np.array([0.5, 1.0], np.float32))),
        ValueError,
        r"pred must have shape \(N, n\+1\)",
    )
    yield ErrorInput(SampleInput((pred, np.array([0, 1, 2]))), TypeError, r"label must be a float")


def dfl_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    pred, label = _dfl_inputs(rng, 6, dtype)
    yield SampleInput((pred, label), init_kwargs={"loss_weight": 0.25}, name="loss_weight")


def dfl_cell_errors() -> Iterator[ErrorInput]:
    pred = np.zeros((3, 5), np.float32)
    yield ErrorInput(
        SampleInput((pred, pred[:, 0]), {"reduction_override": "x"}),
        ValueError,
        r"reduction_override must be",
    )


# ---------------------------------------------------------------------------------- bench


def _bench(fn: Callable[[np.random.Generator], SampleInput]) -> Callable[[], SampleInput]:
    return lambda: fn(np.random.default_rng(0))


_BIG = (100000, 80)


def focal_bench(rng: np.random.Generator) -> SampleInput:
    return SampleInput(
        (_logits(rng, _BIG, "float32"), rng.integers(0, 81, size=_BIG[0])),
        name="100k anchors x 80 classes, index labels",
    )


def vfl_bench(rng: np.random.Generator) -> SampleInput:
    return SampleInput(
        (_logits(rng, _BIG, "float32"), _sparse(rng, _BIG, "float32")),
        name="100k anchors x 80 classes",
    )


def qfl_bench(rng: np.random.Generator) -> SampleInput:
    return SampleInput(
        (
            _logits(rng, _BIG, "float32"),
            rng.integers(0, 81, size=_BIG[0]),
            rng.uniform(size=_BIG[0]).astype(np.float32),
        ),
        name="100k anchors x 80 classes",
    )


def dfl_bench(rng: np.random.Generator) -> SampleInput:
    pred, label = _dfl_inputs(rng, 40000, "float32")
    return SampleInput((pred, label), name="10k boxes x 4 sides x 17 bins")


_HALF_GRAD = ToleranceOverride(
    "float16",
    "grad",
    Tolerance(atol=2e-3, rtol=2e-2),
    "PyTorch's float16 backward rounds each intermediate product of the chain rule",
)
_HALF_FWD = ToleranceOverride(
    "float16",
    "forward",
    Tolerance(atol=1e-3, rtol=2e-3),
    "a row sum of float16 terms: PyTorch's and MindSpore's float16 sigmoid/log differ by 1 ulp",
)


# The fused kernels run float32/float64: PyTorch rounds every float16 op of these losses, and
# only the op-by-op composites do too.
_KERNEL_DTYPES = {"aot": ("float32", "float64")}


def _entry(name: str, op: Any, ref: str, samples: Any, errors: Any, **extra: Any) -> OpInfo:
    mm = f"mmdet.models.losses.{name}"
    extra.setdefault("tolerance_overrides", (_HALF_GRAD, _HALF_FWD))
    return OpInfo(
        name=f"losses.{name}",
        op=op,
        ref=_ref(ref),
        mirrors=mm,
        torch_apis=(mm,) + extra.pop("more_apis", ()),
        sample_inputs=samples,
        error_inputs=errors,
        **extra,
    )


OPS: List[OpInfo] = [
    _entry(
        "FocalLoss",
        FocalLoss,
        "focal_module",
        every_dtype_first(focal_cell_samples, 2),
        focal_cell_errors,
        is_cell=True,
        bench_input=_bench(focal_bench),
        more_apis=("mmdet.models.losses.focal_loss.FocalLoss",),
    ),
    _entry(
        "py_focal_loss_with_prob",
        py_focal_loss_with_prob,
        "py_focal_loss_with_prob",
        every_dtype_first(prob_samples, 1),
        prob_errors,
        more_apis=("mmdet.models.losses.focal_loss.py_focal_loss_with_prob",),
    ),
    _entry(
        "varifocal_loss",
        varifocal_loss,
        "varifocal_loss",
        every_dtype_first(vfl_samples, 3),
        vfl_errors,
        grad_argnums=(0, 1),
        bench_input=_bench(vfl_bench),
        dispatch_op="losses.varifocal_loss",
        backend_dtypes=_KERNEL_DTYPES,
        more_apis=("mmdet.models.losses.varifocal_loss.varifocal_loss",),
    ),
    _entry(
        "VarifocalLoss",
        VarifocalLoss,
        "varifocal_module",
        every_dtype_first(vfl_cell_samples, 1),
        vfl_cell_errors,
        is_cell=True,
        dtypes=("float32",),  # the dtypes run through the function entry,
        more_apis=("mmdet.models.losses.varifocal_loss.VarifocalLoss",),
    ),
    _entry(
        "quality_focal_loss",
        _qfl,
        "qfl_pair",
        every_dtype_first(qfl_samples, 3),
        qfl_errors,
        bench_input=_bench(qfl_bench),
        more_apis=("mmdet.models.losses.gfocal_loss.quality_focal_loss",),
    ),
    _entry(
        "quality_focal_loss_with_prob",
        _qfl_prob,
        "qfl_prob_pair",
        every_dtype_first(qfl_prob_samples, 1),
        qfl_errors,
        more_apis=("mmdet.models.losses.gfocal_loss.quality_focal_loss_with_prob",),
    ),
    _entry(
        "quality_focal_loss_tensor_target",
        quality_focal_loss_tensor_target,
        "quality_focal_loss_tensor_target",
        every_dtype_first(qflt_samples, 1),
        qflt_errors,
        grad_argnums=(0, 1),
        more_apis=("mmdet.models.losses.gfocal_loss.quality_focal_loss_tensor_target",),
    ),
    _entry(
        "QualityFocalLoss",
        _QflCell,
        "quality_focal_module",
        every_dtype_first(qfl_cell_samples, 1),
        qfl_cell_errors,
        is_cell=True,
        dtypes=("float32",),  # the dtypes run through the function entry,
        more_apis=("mmdet.models.losses.gfocal_loss.QualityFocalLoss",),
    ),
    _entry(
        "distribution_focal_loss",
        distribution_focal_loss,
        "distribution_focal_loss",
        every_dtype_first(dfl_samples, 1),
        dfl_errors,
        grad_argnums=(0, 1),
        bench_input=_bench(dfl_bench),
        dispatch_op="losses.distribution_focal_loss",
        backend_dtypes=_KERNEL_DTYPES,
        more_apis=("mmdet.models.losses.gfocal_loss.distribution_focal_loss",),
    ),
    _entry(
        "DistributionFocalLoss",
        DistributionFocalLoss,
        "distribution_focal_module",
        every_dtype_first(dfl_cell_samples, 1),
        dfl_cell_errors,
        is_cell=True,
        dtypes=("float32",),  # the dtypes run through the function entry,
        more_apis=("mmdet.models.losses.gfocal_loss.DistributionFocalLoss",),
    ),
]


# The QFL entries call the public function through a wrapper (the tuple target's two arrays
# apart), which the registry's per-call ``which`` cannot take: the plain entries run what the
# registry picks (the fused kernel in float32/float64, the composite in float16) and this
# variant forces the composite in float32 on the +-1e4 logits (the composite's other samples:
# the plain entry's float16 and the ``activated=True`` entry, which always run it).
def _qfl_extreme(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    return (s for s in qfl_samples(dtype, rng) if s.name == "+-1e4")


OPS.append(
    dataclasses.replace(
        next(i for i in OPS if i.name == "losses.quality_focal_loss"),
        variant="composite",
        backend="composite",
        dispatch_op="losses.quality_focal_loss",
        dtypes=("float32",),
        sample_inputs=_qfl_extreme,
    )
)
