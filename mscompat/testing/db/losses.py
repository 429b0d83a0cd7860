"""Op database entries for ``mscompat.losses``."""

from __future__ import annotations

from typing import Any, Callable, Iterator, List, Tuple

import numpy as np
from mindspore import ops

from mscompat.losses import (
    SigmoidFocalLoss,
    reduce_loss,
    sigmoid_focal_loss,
    weight_reduce_loss,
    weighted_loss,
)
from mscompat.testing.db._common import torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, ToleranceOverride
from mscompat.testing.tolerances import Tolerance


def _ref(name: str) -> Callable[..., Any]:
    """A lazily imported reference from ``mscompat.testing.references.mmdet``."""
    return torch_ref(f"mscompat.testing.references.mmdet:{name}")


def _logits(rng: np.random.Generator, shape: Any, dtype: str, scale: float = 3.0) -> np.ndarray:
    return (rng.standard_normal(shape) * scale).astype(dtype)


def _hard(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return (rng.uniform(size=shape) < 0.3).astype(dtype)


def _soft(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return rng.uniform(size=shape).astype(dtype)


def _extreme(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    x = _logits(rng, shape, dtype)
    flat = x.reshape(-1)
    flat[0::3] = 1e4
    flat[1::3] = -1e4
    return x


def _focal_inputs(rng: np.random.Generator, n: int, c: int, dtype: str) -> Tuple[np.ndarray, ...]:
    """Logits, hard and soft targets, weights (N,) and (N, C)."""
    x, hard, soft = (
        _logits(rng, (n, c), dtype),
        _hard(rng, (n, c), dtype),
        _soft(rng, (n, c), dtype),
    )
    return (
        x,
        hard,
        soft,
        rng.uniform(size=(n,)).astype(dtype),
        rng.uniform(size=(n, c)).astype(dtype),
    )


def focal_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    n, c = 6, 5
    x, hard, soft, w_n, w_nc = _focal_inputs(rng, n, c, dtype)
    yield SampleInput((x, hard), name="hard targets, defaults")
    yield SampleInput((x, soft), {"reduction": "none"}, name="soft targets, none")
    yield SampleInput(
        (x, soft), {"gamma": 1.0, "alpha": 0.5, "reduction": "sum"}, name="g1 a.5 sum"
    )
    yield SampleInput((x, hard), {"gamma": 0.0, "alpha": 0.5}, name="gamma 0")
    yield SampleInput((x, soft), {"gamma": 1.5, "alpha": 0.75, "reduction": "none"}, name="g1.5")
    yield SampleInput((x, hard), {"gamma": 3.0, "alpha": 0.1, "reduction": "sum"}, name="gamma 3")
    yield SampleInput((x, soft), {"gamma": 2.5, "alpha": 0.3, "avg_factor": 1.7}, name="a.3 af1.7")
    yield SampleInput((x, hard), {"weight": w_n}, name="weight (N,) mean")
    yield SampleInput(
        (x, soft), {"weight": w_nc.reshape(-1), "reduction": "sum"}, name="weight (N*C,)"
    )
    yield SampleInput((x, hard), {"weight": w_nc, "reduction": "none"}, name="weight (N,C) none")
    yield SampleInput((x, hard), {"weight": w_n.reshape(n, 1)}, name="weight (N,1)")
    yield SampleInput((x, hard), {"avg_factor": 3.5}, name="avg_factor mean")
    yield SampleInput((x, hard), {"avg_factor": 3.5, "reduction": "none"}, name="avg_factor none")
    yield SampleInput((x, soft), {"weight": w_n, "avg_factor": 0.0}, name="avg_factor 0 (eps)")
    yield SampleInput(
        (x, hard), {"weight": w_n, "avg_factor": np.array(2.5, dtype)}, name="avg_factor tensor"
    )
    ext = _extreme(rng, (n, c), dtype)
    yield SampleInput((ext, hard), name="logits +-1e4 hard")
    yield SampleInput((ext, soft), {"reduction": "none", "gamma": 1.5}, name="logits +-1e4 soft")
    # pt = 0 with gamma < 1: pt ** gamma has an infinite derivative there, and PyTorch's target
    # gradient is NaN (inf * (1 - p) with p = 1), not -inf.
    sat = np.where(rng.uniform(size=(n, c)) < 0.5, 40.0, -40.0).astype(dtype)
    for gamma in (0.5, 0.7):
        yield SampleInput(
            (sat, hard), {"reduction": "none", "gamma": gamma}, name=f"logits +-40 gamma {gamma}"
        )
    yield SampleInput(
        (np.zeros((n, c), dtype), hard), {"reduction": "none"}, name="logits 0 (ties)"
    )
    empty = np.zeros((0, c), dtype)
    for red in ("mean", "sum", "none"):
        yield SampleInput((empty, empty), {"reduction": red}, name=f"empty N=0 {red}")
    yield SampleInput(
        (empty, empty), {"weight": np.zeros((0,), dtype), "avg_factor": 1.0}, name="empty weighted"
    )
    yield SampleInput((_logits(rng, (n, 1), dtype), _hard(rng, (n, 1), dtype), w_n), name="C=1")
    yield SampleInput((x, hard.astype(np.int64)), name="int64 targets")
    yield SampleInput((_logits(rng, (7,), dtype), _soft(rng, (7,), dtype)), name="1-D")
    big = _logits(rng, (64, 80), dtype)
    yield SampleInput((big, _hard(rng, (64, 80), dtype)), {"reduction": "sum"}, name="64x80 sum")
    yield SampleInput(
        (_logits(rng, (2, 3, 4), dtype), _soft(rng, (2, 3, 4), dtype)), name="3-D pred"
    )


def focal_bench() -> SampleInput:
    rng = np.random.default_rng(0)
    shape = (12500, 80)  # 1e6 elements: a RetinaNet-like batch of anchors x COCO classes
    return SampleInput(
        (_logits(rng, shape, "float32"), _hard(rng, shape, "float32")), name="1e6 elements"
    )


def focal_errors() -> Iterator[ErrorInput]:
    rng = np.random.default_rng(0)
    x, t = _logits(rng, (4, 3), "float32"), _hard(rng, (4, 3), "float32")
    yield ErrorInput(SampleInput((x, t[:, :2])), ValueError, r"target must have the same shape")
    yield ErrorInput(SampleInput((x.astype(np.int32), t)), TypeError, r"pred must be a floating")
    yield ErrorInput(SampleInput((x, t), {"reduction": "avg"}), ValueError, r"reduction must be")
    yield ErrorInput(
        SampleInput((x, t), {"reduction": "sum", "avg_factor": 2.0}),
        ValueError,
        r"avg_factor can not be used with reduction=\"sum\"",
    )
    for bad in ((5,), (4, 2), (1, 3), (4, 3, 1)):
        yield ErrorInput(
            SampleInput((x, t), {"weight": np.ones(bad, np.float32)}),
            ValueError,
            r"weight must have shape \(N,\), \(N\*C,\) or \(N, C\)",
        )
    yield ErrorInput(SampleInput((x, t), {"gamma": -1.0}), ValueError, r"gamma must be >= 0")
    yield ErrorInput(SampleInput((x, t), {"weight": [1.0] * 4}), TypeError, r"weight must be a")
    yield ErrorInput(SampleInput((x, t), {"avg_factor": "4"}), TypeError, r"avg_factor must be")


def focal_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    n, c = 5, 4
    x, hard, soft, w_n, w_nc = _focal_inputs(rng, n, c, dtype)
    yield SampleInput((x, hard), name="defaults")
    yield SampleInput(
        (x, soft),
        init_kwargs={"weight": w_n, "gamma": 1.0, "alpha": 0.5, "reduction": "sum"},
        name="ctor weight, sum",
    )
    yield SampleInput(
        (x, hard),
        {"reduction_override": "none"},
        init_kwargs={"avg_factor": 2.0},
        name="ctor avg_factor, override none",
    )
    yield SampleInput(
        (x, hard), {"weight": w_nc}, init_kwargs={"weight": w_n}, name="per-call weight wins"
    )
    yield SampleInput((x, soft), {"avg_factor": 4.0}, name="per-call avg_factor")
    yield SampleInput((x, hard), {"reduction_override": "sum"}, name="override sum")
    yield SampleInput((x, soft), init_kwargs={"loss_weight": 0.3}, name="loss_weight 0.3")
    yield SampleInput(
        (x, soft),
        {"reduction_override": "mean"},
        init_kwargs={"reduction": "sum", "avg_factor": 2.0},
        name="ctor sum+avg_factor, override mean",
    )
    yield SampleInput((_extreme(rng, (n, c), dtype), hard), name="logits +-1e4")


def focal_cell_errors() -> Iterator[ErrorInput]:
    rng = np.random.default_rng(0)
    x, t = _logits(rng, (4, 3), "float32"), _hard(rng, (4, 3), "float32")
    yield ErrorInput(
        SampleInput((x, t), {"reduction_override": "avg"}),
        ValueError,
        r"reduction_override must be",
    )
    yield ErrorInput(
        SampleInput((x, t), init_kwargs={"reduction": "elementwise"}), ValueError, r"reduction must"
    )
    for name in ("gamma", "alpha", "loss_weight"):
        yield ErrorInput(
            SampleInput((x, t), init_kwargs={name: "x"}),
            TypeError,
            rf"{name} must be a number, but got str \({name}='x'\)",
        )
    yield ErrorInput(
        SampleInput((x, t), init_kwargs={"reduction": "sum", "avg_factor": 1.0}),
        ValueError,
        r"avg_factor can not be used",
    )
    yield ErrorInput(
        SampleInput((x, t), {"reduction_override": "sum"}, init_kwargs={"avg_factor": 1.0}),
        ValueError,
        r"avg_factor can not be used",
    )
    yield ErrorInput(
        SampleInput((x, t), {"weight": np.ones((7,), np.float32)}), ValueError, r"weight must"
    )


def weight_reduce_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    loss = rng.uniform(size=(4, 3)).astype(dtype)
    for red in ("none", "mean", "sum"):
        yield SampleInput((loss,), {"reduction": red}, name=f"no weight {red}")
    yield SampleInput((loss, rng.uniform(size=(4, 1)).astype(dtype)), name="weight (N,1)")
    yield SampleInput((loss, rng.uniform(size=(4, 3)).astype(dtype), "sum"), name="weight sum")
    yield SampleInput((loss, None, "mean", 2.5), name="avg_factor")
    yield SampleInput((loss, None, "none", 2.5), name="avg_factor none")
    yield SampleInput((np.zeros((0, 3), dtype),), name="empty mean")


def weight_reduce_errors() -> Iterator[ErrorInput]:
    loss = np.ones((4, 3), np.float32)
    yield ErrorInput(SampleInput((loss, None, "max")), ValueError, r"reduction must be")
    yield ErrorInput(SampleInput((loss, None, "sum", 2.0)), ValueError, r"avg_factor can not")
    yield ErrorInput(
        SampleInput((loss, np.ones((4,), np.float32))), ValueError, r"weight must have as many dims"
    )
    yield ErrorInput(
        SampleInput((loss, np.ones((2, 3), np.float32))), ValueError, r"does not broadcast"
    )
    yield ErrorInput(
        SampleInput((loss.astype(np.int32),)), TypeError, r"loss must be a floating-point .*Int32"
    )


def reduce_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    loss = rng.uniform(size=(5, 3)).astype(dtype)
    for red in ("none", "mean", "sum"):
        yield SampleInput((loss, red), name=red)
    yield SampleInput((rng.uniform(size=(7,)).astype(dtype), "mean"), name="1-D mean")
    yield SampleInput((np.array(2.5, dtype), "sum"), name="0-d")
    for red in ("mean", "sum"):
        yield SampleInput((np.zeros((0, 3), dtype), red), name=f"empty {red}")


def reduce_errors() -> Iterator[ErrorInput]:
    loss = np.ones((4, 3), np.float32)
    yield ErrorInput(SampleInput((loss, "elementwise_mean")), ValueError, r"reduction must be")
    yield ErrorInput(SampleInput((loss.tolist(), "mean")), TypeError, r"loss must be a")
    for dtype in (np.int32, np.int64, np.bool_):
        yield ErrorInput(
            SampleInput((loss.astype(dtype), "mean")),
            TypeError,
            r"loss must be a floating-point Tensor for reduction='mean'",
        )


# weighted_loss is a decorator: its entry checks an L1 loss decorated on each side.


@weighted_loss
def _l1_loss(pred: Any, target: Any) -> Any:
    return ops.abs(pred - target)


def _torch_l1_loss(*args: Any, **kwargs: Any) -> Any:
    import torch

    from mscompat.testing.references import mmdet

    return mmdet.weighted_loss(lambda p, t: torch.abs(p - t))(*args, **kwargs)


def weighted_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    pred, target = _logits(rng, (6, 4), dtype), _logits(rng, (6, 4), dtype)
    weight = rng.uniform(size=(6, 4)).astype(dtype)
    yield SampleInput((pred, target), name="defaults (mean)")
    yield SampleInput((pred, target, weight, "sum"), name="weight, sum")
    yield SampleInput((pred, target, weight), {"avg_factor": 3.5}, name="avg_factor")
    yield SampleInput((pred, target), {"reduction": "none"}, name="none")


def weighted_errors() -> Iterator[ErrorInput]:
    x = np.ones((4, 3), np.float32)
    yield ErrorInput(SampleInput((x, x), {"reduction": "max"}), ValueError, r"reduction must be")
    yield ErrorInput(
        SampleInput((x, x), {"reduction": "sum", "avg_factor": 2.0}),
        ValueError,
        r"avg_factor can not be used",
    )


OPS: List[OpInfo] = [
    OpInfo(
        name="losses.sigmoid_focal_loss",
        op=sigmoid_focal_loss,
        ref=_ref("py_sigmoid_focal_loss"),
        mirrors="mmdet.models.losses.focal_loss.py_sigmoid_focal_loss",
        torch_apis=(
            "mmdet.models.losses.focal_loss.py_sigmoid_focal_loss",
            "mmdet.models.losses.py_sigmoid_focal_loss",
        ),
        sample_inputs=focal_samples,
        error_inputs=focal_errors,
        # the target's gradient too: soft targets (distillation, QFL-style scores) carry one
        grad_argnums=(0, 1),
        tolerance_overrides=(
            ToleranceOverride(
                "float32",
                "grad",
                Tolerance(atol=1e-5, rtol=1e-4),
                "the target's gradient -x * w + bce * dw/dt adds terms of opposite sign, each "
                "up to |x| times the result: a float32 ulp of them is 3e-5 of the result, "
                "made visible by avg_factor=0 (the mean divided by eps = 1.2e-7)",
            ),
        ),
        bench_input=focal_bench,
        dispatch_op="losses.sigmoid_focal_loss",
        # PyTorch rounds every float16 op of the loss: only the op-by-op composite does too
        backend_dtypes={"aot": ("float32", "float64")},
    ),
    OpInfo(
        name="losses.SigmoidFocalLoss",
        op=SigmoidFocalLoss,
        ref=_ref("sigmoid_focal_loss_module"),
        mirrors="mmdet.models.losses.FocalLoss(use_sigmoid=True)",
        torch_apis=("mmdet.models.losses.FocalLoss", "mmdet.models.losses.focal_loss.FocalLoss"),
        sample_inputs=focal_cell_samples,
        error_inputs=focal_cell_errors,
        is_cell=True,
    ),
    *(
        OpInfo(
            name=f"losses.{op.__name__}",
            op=op,
            ref=_ref(op.__name__),
            mirrors=f"mmdet.models.losses.utils.{op.__name__}",
            torch_apis=(f"mmdet.models.losses.utils.{op.__name__}",),
            sample_inputs=samples,
            error_inputs=errors,
        )
        for op, samples, errors in (
            (reduce_loss, reduce_samples, reduce_errors),
            (weight_reduce_loss, weight_reduce_samples, weight_reduce_errors),
        )
    ),
    OpInfo(
        name="losses.weighted_loss",
        op=_l1_loss,
        ref=_torch_l1_loss,
        mirrors="mmdet.models.losses.utils.weighted_loss",
        sample_inputs=weighted_samples,
        error_inputs=weighted_errors,
        grad_argnums=(0, 1),
    ),
]
