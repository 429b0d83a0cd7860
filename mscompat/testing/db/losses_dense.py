"""Op database entries for MMDetection's heatmap, segmentation, distillation and long-tail
losses: Gaussian focal, Dice, knowledge-distillation KL and Seesaw."""

from __future__ import annotations

from typing import Any, Callable, Iterator, List

import numpy as np

from mscompat.losses import (
    DiceLoss,
    GaussianFocalLoss,
    KnowledgeDistillationKLDivLoss,
    SeesawLoss,
    dice_loss,
    gaussian_focal_loss,
    gaussian_focal_loss_with_pos_inds,
    knowledge_distillation_kl_div_loss,
    seesaw_ce_loss,
)
from mscompat.testing.db._common import every_dtype_first, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, ToleranceOverride
from mscompat.testing.tolerances import Tolerance


def _ref(name: str) -> Callable[..., Any]:
    """A reference of :mod:`.mmdet_cls`, or ``module:name`` of another references module."""
    qualified = name if ":" in name else f"mmdet_cls:{name}"
    return torch_ref(f"mscompat.testing.references.{qualified}")


def _logits(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return (rng.standard_normal(shape) * 3).astype(dtype)


def _prob(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return rng.uniform(0.02, 0.98, size=shape).astype(dtype)


def _heatmap(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    t = rng.uniform(size=shape) ** 3
    t.reshape(-1)[::7] = 1.0  # the peaks
    return t.astype(dtype)


# ------------------------------------------------------------------------ Gaussian focal


def gfl_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p, t = _prob(rng, (2, 3, 4, 4), dtype), _heatmap(rng, (2, 3, 4, 4), dtype)
    yield SampleInput((p, t), name="heatmap (N, C, H, W)")
    yield SampleInput(
        (p, t, None, "sum"),
        {"alpha": 1.5, "gamma": 3.0, "pos_weight": 2.0, "neg_weight": 0.5},
        name="alpha gamma pos/neg weights, sum",
    )
    edge = p.copy()
    edge.reshape(-1)[:3] = (0.0, 1.0, 0.5)  # log(0 + 1e-12) finite, log(1 - 1 + 1e-12) too
    yield SampleInput((edge, t), {"reduction": "none"}, name="p = 0, 1")


def gfl_errors() -> Iterator[ErrorInput]:
    x = np.full((4, 3), 0.5, np.float32)
    yield ErrorInput(SampleInput((x, x[:2])), ValueError, r"gaussian_target must have the same")
    yield ErrorInput(SampleInput((x, x.astype(np.float64))), TypeError, r"pred's dtype")
    yield ErrorInput(SampleInput((x, x, None, "sum", 2.0)), ValueError, r"avg_factor can not")


def _pos(rng: np.random.Generator) -> Any:
    return np.array([0, 5, 2]), np.array([1, 0, 3])


def gflpi_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p, t = _prob(rng, (6, 4), dtype), _heatmap(rng, (6, 4), dtype)
    inds, labels = _pos(rng)
    yield SampleInput((p, t, inds, labels), name="mean")
    yield SampleInput((p, t, inds, labels), {"reduction": "sum", "pos_weight": 2.0}, name="sum")
    yield SampleInput((p, t, inds, labels), {"avg_factor": 3.0}, name="avg_factor")
    yield SampleInput(
        (p, t, np.zeros(0, np.int64), np.zeros(0, np.int64)),
        {"avg_factor": 0.0},
        name="no positives, avg_factor 0",
    )
    yield SampleInput(
        (p, t, np.zeros(0, np.int64), np.zeros(0, np.int64)),
        {"reduction": "sum"},
        name="no positives sum",
    )


def gflpi_errors() -> Iterator[ErrorInput]:
    x = np.full((4, 3), 0.5, np.float32)
    yield ErrorInput(
        SampleInput((x, x, np.array([0, 4]), np.array([0, 1]))),
        ValueError,
        r"pos_inds: each must be in \[-4, 4\)",
    )
    yield ErrorInput(
        SampleInput((x, x, np.array([0, 1]), np.array([0, 3]))),
        ValueError,
        r"pos_labels: each must be in",
    )
    yield ErrorInput(
        SampleInput((x, x, np.array([0.0]), np.array([0]))),
        TypeError,
        r"pos_inds must be a 1-D integer",
    )


def gfl_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p, t = _prob(rng, (6, 4), dtype), _heatmap(rng, (6, 4), dtype)
    inds, labels = _pos(rng)
    yield SampleInput(
        (p, t, inds, labels),
        {"avg_factor": 3.0},
        init_kwargs={"pos_weight": 0.25, "neg_weight": 0.75},
        name="pos_inds",
    )


def gfl_cell_errors() -> Iterator[ErrorInput]:
    x = np.full((4, 3), 0.5, np.float32)
    yield ErrorInput(SampleInput((x, x, np.array([0]))), ValueError, r"pos_labels must be given")


# ---------------------------------------------------------------------------------- Dice


def dice_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p = _prob(rng, (4, 3, 5), dtype)
    t = (rng.uniform(size=(4, 3, 5)) < 0.4).astype(dtype)
    w = rng.uniform(size=4).astype(dtype)
    yield SampleInput((p, t), name="defaults")
    yield SampleInput((p, t, w), {"naive_dice": True, "reduction": "none"}, name="naive")
    yield SampleInput((p, np.zeros_like(t)), {"reduction": "sum"}, name="empty masks")


def dice_errors() -> Iterator[ErrorInput]:
    x = np.full((4, 3), 0.5, np.float32)
    yield ErrorInput(SampleInput((x, x[:2])), ValueError, r"same number of samples")
    yield ErrorInput(
        SampleInput((x, x, np.ones((4, 1), np.float32))),
        ValueError,
        r"weight must have shape \(N,\)",
    )


def dice_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _logits(rng, (4, 8), dtype)
    t = (rng.uniform(size=(4, 8)) < 0.4).astype(dtype)
    yield SampleInput((x, t), name="sigmoid activate")
    yield SampleInput(
        (_prob(rng, (4, 8), dtype), t),
        {"reduction_override": "none"},
        init_kwargs={"activate": False, "naive_dice": True, "loss_weight": 2.0},
        name="no activation, naive",
    )


def dice_cell_errors() -> Iterator[ErrorInput]:
    x = np.full((4, 3), 0.5, np.float32)
    yield ErrorInput(
        SampleInput((x, x), init_kwargs={"use_sigmoid": False}),
        NotImplementedError,
        r"needs use_sigmoid=True",
    )


# ------------------------------------------------------------------------------------ KD


def kd_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x, s = _logits(rng, (5, 6), dtype), _logits(rng, (5, 6), dtype)
    yield SampleInput(
        (x, s, rng.uniform(size=5).astype(dtype)), {"T": 2, "reduction": "none"}, name="T 2 weight"
    )
    sharp = s * 30  # a teacher so confident that most of its softmax underflows to 0
    yield SampleInput((x, sharp), {"T": 1, "avg_factor": 2.0}, name="T 1 zeros in target")


def kd_errors() -> Iterator[ErrorInput]:
    x = np.zeros((4, 3), np.float32)
    yield ErrorInput(SampleInput((x, x[:2]), {"T": 2}), ValueError, r"soft_label must have")
    yield ErrorInput(SampleInput((x, x), {"T": "2"}), TypeError, r"T must be a number")


def kd_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x, s = _logits(rng, (5, 6), dtype), _logits(rng, (5, 6), dtype)
    yield SampleInput((x, s), name="T 10")
    yield SampleInput(
        (x, s), {"reduction_override": "sum"}, init_kwargs={"T": 3, "loss_weight": 0.5}, name="T 3"
    )


def kd_cell_errors() -> Iterator[ErrorInput]:
    x = np.zeros((4, 3), np.float32)
    yield ErrorInput(SampleInput((x, x), init_kwargs={"T": 0.5}), ValueError, r"T must be >= 1")


# -------------------------------------------------------------------------------- Seesaw


def seesaw_fn_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    n, c = 8, 5
    x, y = _logits(rng, (n, c), dtype), rng.integers(0, c, size=n)
    cum = np.array([500.0, 40.0, 3.0, 0.0, 90.0], np.float32)
    w = rng.uniform(size=n).astype(dtype)
    yield SampleInput((x, y, None, cum, c, 0.8, 2.0, 1e-2), name="defaults")
    yield SampleInput((x, y, w, cum, c, 0.0, 2.0, 1e-2, "mean", 3.0), name="p 0 avg_factor")


def seesaw_fn_errors() -> Iterator[ErrorInput]:
    x, y, cum = np.zeros((4, 3), np.float32), np.array([0, 1, 2, 1]), np.ones(3, np.float32)
    yield ErrorInput(
        SampleInput((x, y, None, cum, 4, 0.8, 2.0, 0.01)), ValueError, r"num_classes=4 columns"
    )
    yield ErrorInput(
        SampleInput((x, np.array([0, 3, 1, 1]), None, cum, 3, 0.8, 2.0, 0.01)),
        ValueError,
        r"class values must be in \[0, 3\)",
    )


def seesaw_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    n, c = 10, 4
    x = _logits(rng, (n, c + 2), dtype)
    y = rng.integers(0, c + 1, size=n)
    y[:2] = c  # background
    yield SampleInput((x, y), init_kwargs={"num_classes": c, "return_dict": False}, name="sum")
    yield SampleInput(
        (x, y, rng.uniform(size=n).astype(dtype)),
        {"avg_factor": 4.0},
        init_kwargs={"num_classes": c, "return_dict": False, "loss_weight": 0.5},
        name="label_weights avg_factor",
    )
    yield SampleInput(
        (x, np.full(n, c)),
        {"reduction_override": "sum"},
        init_kwargs={"num_classes": c, "return_dict": False},
        name="no positives",
    )


def seesaw_errors() -> Iterator[ErrorInput]:
    x, y = np.zeros((4, 5), np.float32), np.array([0, 1, 2, 3])
    yield ErrorInput(
        SampleInput((x, y), init_kwargs={"num_classes": 4}),
        ValueError,
        r"num_classes \+ 2 = 6 columns",
    )
    yield ErrorInput(
        SampleInput((x, np.array([0, 4, 1, 1])), init_kwargs={"num_classes": 3}),
        ValueError,
        r"class values must be in \[0, 3\]",
    )
    yield ErrorInput(
        SampleInput((x, y), init_kwargs={"use_sigmoid": True}),
        ValueError,
        r"only use_sigmoid=False",
    )


_HALF = (
    ToleranceOverride(
        "float16",
        "grad",
        Tolerance(atol=2e-3, rtol=2e-2),
        "PyTorch's float16 backward rounds each intermediate product",
    ),
    ToleranceOverride(
        "float16",
        "forward",
        Tolerance(atol=1e-3, rtol=2e-3),
        "float16 sums of many terms: 1-ulp differences of log/softmax add up",
    ),
)


_KD = _HALF + (
    ToleranceOverride(
        "float32",
        "forward",
        Tolerance(atol=1e-5, rtol=1e-5),
        "the KL is a small difference of large terms (cancellation), times T^2: PyTorch's and "
        "our float32 each err by ~2e-6 relative (MindSpore's own float32 softmax/log, off by "
        "~30 ulp, erred by 1e-4: tools/check_mmdet.py)",
    ),
)
_SEESAW = _HALF + (
    ToleranceOverride(
        "float32",
        "forward",
        Tolerance(atol=1e-5, rtol=3e-5),
        "float16 scores give float32 losses through float16 softmax/log_softmax "
        "(1-ulp float16 differences); float32 log_softmax differs by a few ulps",
    ),
)


def _entry(
    name: str, op: Any, ref: str, samples: Any, errors: Any, api: str, **extra: Any
) -> OpInfo:
    mm = f"mmdet.models.losses.{name}"
    extra.setdefault("tolerance_overrides", _HALF)
    return OpInfo(
        name=f"losses.{name}",
        op=op,
        ref=_ref(ref),
        mirrors=mm,
        torch_apis=(mm, f"mmdet.models.losses.{api}.{name}"),
        sample_inputs=samples,
        error_inputs=errors,
        **extra,
    )


OPS: List[OpInfo] = [
    _entry(
        "gaussian_focal_loss",
        gaussian_focal_loss,
        "gaussian_focal_loss",
        every_dtype_first(gfl_samples, 1),
        gfl_errors,
        "gaussian_focal_loss",
        grad_argnums=(0, 1),
        dispatch_op="losses.gaussian_focal_loss",
    ),
    _entry(
        "gaussian_focal_loss_with_pos_inds",
        gaussian_focal_loss_with_pos_inds,
        "gaussian_focal_loss_with_pos_inds",
        every_dtype_first(gflpi_samples, 1),
        gflpi_errors,
        "gaussian_focal_loss",
    ),
    _entry(
        "GaussianFocalLoss",
        GaussianFocalLoss,
        "gaussian_focal_module",
        every_dtype_first(gfl_cell_samples, 1),
        gfl_cell_errors,
        "gaussian_focal_loss",
        is_cell=True,
        dtypes=("float32",),  # the dtypes run through the function entry,
    ),
    _entry(
        "dice_loss",
        dice_loss,
        "mmdet_misc:dice_loss",
        every_dtype_first(dice_samples, 1),
        dice_errors,
        "dice_loss",
        grad_argnums=(0, 1),
    ),
    _entry(
        "DiceLoss",
        DiceLoss,
        "mmdet_misc:dice_module",
        every_dtype_first(dice_cell_samples, 1),
        dice_cell_errors,
        "dice_loss",
        is_cell=True,
        dtypes=("float32",),  # the dtypes run through the function entry,
    ),
    _entry(
        "knowledge_distillation_kl_div_loss",
        knowledge_distillation_kl_div_loss,
        "mmdet_misc:knowledge_distillation_kl_div_loss",
        every_dtype_first(kd_samples, 1),
        kd_errors,
        "kd_loss",
        tolerance_overrides=_KD,
    ),
    _entry(
        "KnowledgeDistillationKLDivLoss",
        KnowledgeDistillationKLDivLoss,
        "mmdet_misc:kd_module",
        every_dtype_first(kd_cell_samples, 1),
        kd_cell_errors,
        "kd_loss",
        is_cell=True,
        dtypes=("float32",),  # the dtypes run through the function entry,
        tolerance_overrides=_KD,
    ),
    _entry(
        "seesaw_ce_loss",
        seesaw_ce_loss,
        "seesaw_ce_loss",
        every_dtype_first(seesaw_fn_samples, 1),
        seesaw_fn_errors,
        "seesaw_loss",
        tolerance_overrides=_SEESAW,
    ),
    _entry(
        "SeesawLoss",
        SeesawLoss,
        "seesaw_module",
        every_dtype_first(seesaw_samples, 1),
        seesaw_errors,
        "seesaw_loss",
        is_cell=True,
        tolerance_overrides=_SEESAW,
    ),
]
