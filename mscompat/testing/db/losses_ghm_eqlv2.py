"""Op database entries for MMDetection's GHM-C, GHM-R and EQLv2 losses (one step from a given
state; the state over several steps is checked in ``tests/test_losses_state.py``)."""

from __future__ import annotations

from typing import Any, Callable, Iterator, List

import numpy as np

from mscompat.losses import GHMC, GHMR, EQLV2Loss, eqlv2_loss, ghmc_loss, ghmr_loss
from mscompat.testing.db._common import every_dtype_first, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput


def _ref(name: str) -> Callable[..., Any]:
    return torch_ref(f"mscompat.testing.references.mmdet_stateful:{name}")


def _cls(rng: np.random.Generator, n: int, c: int, dtype: str) -> Any:
    x = (rng.standard_normal((n, c)) * 3).astype(dtype)
    t = (rng.uniform(size=(n, c)) < 0.3).astype(dtype)
    lw = (rng.uniform(size=(n, c)) < 0.8).astype(dtype)
    return x, t, lw


def ghmc_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x, t, lw = _cls(rng, 8, 5, dtype)
    acc = rng.uniform(0, 5, 10).astype(np.float32)
    yield SampleInput((x, t, lw, 10, 0.0, acc), name="momentum 0")
    yield SampleInput((x, t, lw, 10, 0.75, acc), name="momentum .75, acc_sum")
    yield SampleInput((x, t, lw, 4, 0.5, acc[:4], "none", 2.0), name="4 bins, none, loss_weight")
    labels = rng.integers(-1, 6, 8)  # -1 and 5: outside [0, C), all-zero rows
    yield SampleInput(
        (x, labels, rng.uniform(size=8).astype(dtype), 10, 0.0, acc), name="class indices"
    )
    yield SampleInput((x, t, np.zeros_like(lw), 10, 0.0, acc), name="no valid element")
    ext = x.copy()
    ext.reshape(-1)[::3] = 1e4
    yield SampleInput((ext, t, lw, 10, 0.0, acc), name="logits 1e4")


def ghmr_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p = (rng.standard_normal((8, 4)) * 0.3).astype(dtype)
    t = (rng.standard_normal((8, 4)) * 0.3).astype(dtype)
    t[0] = p[0]  # g = 0: the first bin
    lw = (rng.uniform(size=(8, 4)) < 0.8).astype(dtype) * 0.5
    acc = rng.uniform(0, 5, 10).astype(np.float32)
    yield SampleInput((p, t, lw, 0.02, 10, 0.0, acc), name="momentum 0")
    yield SampleInput((p, t, lw, 0.05, 10, 0.7, acc), name="mu .05 momentum .7")
    yield SampleInput((p, t, lw, 0.02, 5, 0.0, acc[:5], "none", 0.5), name="5 bins, none")
    yield SampleInput((p * 1e3, t, lw, 0.02, 10, 0.0, acc), name="large diffs (last edge 1e3)")


def _ghm_errors(fn_name: str) -> Callable[[], Iterator[ErrorInput]]:
    def errors() -> Iterator[ErrorInput]:
        x = np.ones((4, 3), np.float32)
        yield ErrorInput(SampleInput((x, x, x), {"reduction": "sum"}), ValueError, r"reduction")
        yield ErrorInput(SampleInput((x, x, x), {"bins": 0}), ValueError, r"bins must be >= 1")
        yield ErrorInput(SampleInput((x, x, x), {"momentum": 1.0}), ValueError, r"momentum must")
        yield ErrorInput(SampleInput((x, x[:2], x)), ValueError, r"target")
        yield ErrorInput(
            SampleInput((x, x, x), {"momentum": 0.5, "acc_sum": np.zeros(3, np.float32)}),
            ValueError,
            r"acc_sum must be a float32 Tensor of shape \(10,\)",
        )
        yield ErrorInput(SampleInput((x.astype(np.int32), x, x)), TypeError, r"pred must be")

    return errors


def _ghm_cell_samples(labels: bool) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x, t, lw = _cls(rng, 6, 4, dtype)
        if not labels:
            x, t = x * 0.3, t * 0.5
        yield SampleInput((x, t, lw), name="defaults")
        yield SampleInput((x, t, lw), init_kwargs={"momentum": 0.75, "bins": 5}, name="momentum")
        yield SampleInput(
            (x, t, lw),
            {"reduction_override": "none"},
            init_kwargs={"loss_weight": 2.0},
            name="override none, loss_weight",
        )

    return samples


def _ghm_cell_errors() -> Iterator[ErrorInput]:
    x = np.ones((4, 3), np.float32)
    yield ErrorInput(
        SampleInput((x, x, x), {"reduction_override": "sum"}), ValueError, r"reduction"
    )
    yield ErrorInput(
        SampleInput((x, x, x), {"reduction_override": "avg"}), ValueError, r"reduction_override"
    )
    yield ErrorInput(SampleInput((x, x, x), init_kwargs={"bins": 2.5}), TypeError, r"bins")


def _ghmc_cell_errors() -> Iterator[ErrorInput]:
    yield from _ghm_cell_errors()
    x = np.ones((4, 3), np.float32)
    yield ErrorInput(
        SampleInput((x, x, x), init_kwargs={"use_sigmoid": False}), NotImplementedError, r"sigmoid"
    )


def _stats(rng: np.random.Generator, c: int) -> Any:
    pos = rng.uniform(0, 3, c).astype(np.float32)
    neg = rng.uniform(1, 5, c).astype(np.float32)
    return pos, neg, (pos / (neg + np.float32(1e-10))).astype(np.float32)


def eqlv2_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    n, c = 7, 6
    x = (rng.standard_normal((n, c)) * 3).astype(dtype)
    label = rng.integers(0, c, n)
    pos, neg, ratio = _stats(rng, c - 1)
    start = np.full(c - 1, 100, np.float32)
    zeros = np.zeros(c - 1, np.float32)
    yield SampleInput((x, label, zeros, zeros, start), name="first step")
    yield SampleInput((x, label, pos, neg, ratio), name="accumulated statistics")
    yield SampleInput(
        (x, label, pos, neg, ratio, 0.5, 2.0, 6.0, 0.5), name="mu .5 alpha 2 gamma 6 lw .5"
    )
    yield SampleInput((x, label - c, pos, neg, ratio), name="negative labels (from the end)")


def eqlv2_errors() -> Iterator[ErrorInput]:
    x = np.ones((4, 3), np.float32)
    s = np.zeros(2, np.float32)
    lab = np.zeros(4, np.int64)
    yield ErrorInput(SampleInput((x[0], lab, s, s, s)), ValueError, r"cls_score must have shape")
    yield ErrorInput(SampleInput((x, lab[:3], s, s, s)), ValueError, r"label must be an integer")
    yield ErrorInput(
        SampleInput((x, lab.astype(np.float32), s, s, s)), ValueError, r"label must be an integer"
    )
    yield ErrorInput(SampleInput((x, lab, s[:1], s, s)), ValueError, r"pos_grad must have shape")


def eqlv2_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = (rng.standard_normal((5, 4)) * 3).astype(dtype)
    label = rng.integers(0, 4, 5)
    yield SampleInput((x, label), init_kwargs={"num_classes": 3}, name="defaults")
    yield SampleInput(
        (x, label),
        {"reduction_override": "sum", "avg_factor": 3.0},
        init_kwargs={"num_classes": 3, "loss_weight": 2.0, "mu": 0.5},
        name="ignored reduction_override/avg_factor",
    )


def eqlv2_cell_errors() -> Iterator[ErrorInput]:
    x = np.ones((4, 3), np.float32)
    lab = np.zeros(4, np.int64)
    yield ErrorInput(
        SampleInput((x, lab), init_kwargs={"num_classes": 3}), ValueError, r"pos_grad must have"
    )
    yield ErrorInput(
        SampleInput((x, lab), init_kwargs={"num_classes": 2, "use_distributed": True}),
        NotImplementedError,
        r"use_distributed",
    )


def _ghm_bench() -> SampleInput:
    rng = np.random.default_rng(0)
    x, t, lw = _cls(rng, 12500, 80, "float32")
    return SampleInput((x, t, lw), init_kwargs={"momentum": 0.75}, name="1e6 elements")


OPS: List[OpInfo] = [
    OpInfo(
        name="losses.ghmc_loss",
        op=ghmc_loss,
        ref=_ref("ghmc_loss"),
        mirrors="mmdet.models.losses.GHMC.forward (state passed in and out)",
        sample_inputs=every_dtype_first(ghmc_samples, keep=2),
        error_inputs=_ghm_errors("ghmc_loss"),
    ),
    OpInfo(
        name="losses.ghmr_loss",
        op=ghmr_loss,
        ref=_ref("ghmr_loss"),
        mirrors="mmdet.models.losses.GHMR.forward (state passed in and out)",
        sample_inputs=every_dtype_first(ghmr_samples, keep=2),
        error_inputs=_ghm_errors("ghmr_loss"),
        grad_argnums=(0, 1),
    ),
    OpInfo(
        name="losses.GHMC",
        op=GHMC,
        ref=_ref("GHMC"),
        mirrors="mmdet.models.losses.GHMC",
        torch_apis=("mmdet.models.losses.GHMC", "mmdet.models.losses.ghm_loss.GHMC"),
        sample_inputs=every_dtype_first(_ghm_cell_samples(True)),
        error_inputs=_ghmc_cell_errors,
        is_cell=True,
        bench_input=_ghm_bench,
    ),
    OpInfo(
        name="losses.GHMR",
        op=GHMR,
        ref=_ref("GHMR"),
        mirrors="mmdet.models.losses.GHMR",
        torch_apis=("mmdet.models.losses.GHMR", "mmdet.models.losses.ghm_loss.GHMR"),
        sample_inputs=every_dtype_first(_ghm_cell_samples(False)),
        error_inputs=_ghm_cell_errors,
        grad_argnums=(0, 1),
        is_cell=True,
    ),
    OpInfo(
        name="losses.eqlv2_loss",
        op=eqlv2_loss,
        ref=_ref("eqlv2_loss"),
        mirrors="mmdet.models.losses.EQLV2Loss.forward (state passed in and out)",
        sample_inputs=every_dtype_first(eqlv2_samples, keep=2),
        error_inputs=eqlv2_errors,
    ),
    OpInfo(
        name="losses.EQLV2Loss",
        op=EQLV2Loss,
        ref=_ref("EQLV2Loss"),
        mirrors="mmdet.models.losses.EQLV2Loss",
        torch_apis=("mmdet.models.losses.EQLV2Loss", "mmdet.models.losses.eqlv2_loss.EQLV2Loss"),
        sample_inputs=every_dtype_first(eqlv2_cell_samples),
        error_inputs=eqlv2_cell_errors,
        is_cell=True,
    ),
]
