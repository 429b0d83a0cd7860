"""Op database entries for ``cross_entropy``, ``nll_loss`` and their Cells
(``mscompat.layers.loss_classification``), against ``torch.nn.functional``."""

from __future__ import annotations

from typing import Any, Callable, Iterator, List

import numpy as np

from mscompat.layers import CrossEntropyLoss, NLLLoss, cross_entropy, nll_loss
from mscompat.testing.db._common import every_dtype_first, normal, torch_entry
from mscompat.testing.opinfo import (
    ErrorInput,
    SampleInput,
    ToleranceOverride,
    TorchOpInfo,
)
from mscompat.testing.tolerances import Tolerance

__all__ = ["HALF", "HALF_SKIP", "OPS", "torch_module"]

#: float16 is computed in float32 and rounded once; PyTorch's CPU kernels round each step.
HALF = (
    ToleranceOverride(
        "float16",
        "forward",
        Tolerance(atol=5e-3, rtol=4e-3),
        "computed in float32 and rounded once; PyTorch rounds each op to float16 (a few ulps, "
        "more where terms cancel)",
    ),
    ToleranceOverride(
        "float16",
        "grad",
        Tolerance(atol=1e-2, rtol=1e-2),
        "computed in float32 and rounded once; PyTorch rounds each backward op to float16",
    ),
)


#: PyTorch's OpInfo samples run at the default tolerances: float16 is checked in the entries'
#: own samples instead, at the HALF tolerance
HALF_SKIP = {"float16": "float16 rounds once (PyTorch per op): see the entry's HALF tolerance"}


def torch_module(path: str) -> Callable[..., Any]:
    """A Cell entry's ``ref``: the ``torch.nn`` module ``path`` built from the ``init_kwargs``
    (NumPy arrays become tensors)."""

    def make(**kwargs: Any) -> Any:
        import torch

        module: Any = torch.nn
        converted = {
            k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()
        }
        return getattr(module, path.rpartition(".")[2])(**converted)

    make.__name__ = path.rpartition(".")[2]
    return make


def _targets(rng: np.random.Generator, shape: Any, c: int) -> np.ndarray:
    return rng.integers(0, c, shape).astype(np.int64)


def _class_samples(dtype: str, rng: np.random.Generator, smoothing: bool) -> Iterator[SampleInput]:
    n, c = 7, 5
    x = normal(rng, (n, c), dtype, 3.0)
    t = _targets(rng, (n,), c)
    t[2] = -100
    w = rng.uniform(0.2, 2.0, c).astype(dtype)
    ls = {"label_smoothing": 0.2} if smoothing else {}
    yield SampleInput((x, t, w), ls, name="weight, weighted mean, one ignored")
    yield SampleInput((x, t, w), {"reduction": "none", **ls}, name="weight none")
    t3 = t.copy()
    t3[t3 == -100] = 0
    yield SampleInput(
        (x, t3, w), {"ignore_index": 3, "reduction": "sum", **ls}, name="ignore 3 weight sum"
    )
    x4 = normal(rng, (2, c, 3, 4), dtype, 2.0)
    t4 = _targets(rng, (2, 3, 4), c)
    t4[0, 1, 2] = -100
    yield SampleInput((x4, t4, w), ls, name="K-dim (N, C, 3, 4) weight")
    yield SampleInput((x[0], np.array(t3[0])), {"reduction": "none"}, name="1-D input, 0-d target")
    all_ignored = np.full((3,), -100, np.int64)
    yield SampleInput((x[:3], all_ignored, w), ls, name="all ignored: NaN mean")
    yield SampleInput((x[:0], t[:0]), ls, name="empty N=0: NaN mean")
    big = normal(rng, (64, 80), dtype, 4.0)
    yield SampleInput((big, _targets(rng, (64,), 80)), {"reduction": "sum"}, name="64x80 sum")
    yield SampleInput((x, t), {"reduce": False, **ls}, name="legacy reduce=False (none)")


def _ce_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _class_samples(dtype, rng, True)
    n, c = 6, 4
    x = normal(rng, (n, c), dtype, 2.0)
    probs = rng.dirichlet(np.ones(c), n).astype(dtype)
    w = rng.uniform(0.2, 2.0, c).astype(dtype)
    yield SampleInput((x, probs, w), {"label_smoothing": 0.3}, name="probabilities weight ls")
    yield SampleInput((x, probs), {"reduction": "none"}, name="probabilities none")
    xk = normal(rng, (2, c, 5), dtype)
    pk = np.moveaxis(rng.dirichlet(np.ones(c), (2, 5)), -1, 1).astype(dtype)
    yield SampleInput((xk, pk), {"label_smoothing": 0.1}, name="K-dim probabilities")
    ext = normal(rng, (4, c), dtype, 3.0)
    ext[0, 0], ext[1, 1], ext[2, :] = 1e4, -1e4, 1e4
    yield SampleInput((ext, np.array([0, 0, 3, 1], np.int64)), name="logits +-1e4")
    yield SampleInput((ext, probs[:4]), {"reduction": "none"}, name="probabilities +-1e4")


def _nll_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield from _class_samples(dtype, rng, False)


def _errors(fn: str) -> Callable[[], Iterator[ErrorInput]]:
    def errors() -> Iterator[ErrorInput]:
        x = np.zeros((4, 3), np.float32)
        t = np.array([0, 1, 2, 1], np.int64)
        yield ErrorInput(SampleInput((x, t.astype(np.float32))), TypeError, r"target must be")
        yield ErrorInput(SampleInput((x, t > 0)), TypeError, r"target must be")
        yield ErrorInput(
            SampleInput((x, np.array([0, 3, 1, 1], np.int64))),
            ValueError,
            rf"{fn}\(\): target holds a value out of range: each must be in \[0, 3\)",
        )
        yield ErrorInput(
            SampleInput((x, np.array([0, -1, 1, 1], np.int64))), ValueError, r"out of range"
        )
        yield ErrorInput(SampleInput((x, t[:3])), ValueError, r"target must have shape \(4,?\)")
        yield ErrorInput(SampleInput((x, t), {"reduction": "avg"}), ValueError, r"reduction must")
        yield ErrorInput(
            SampleInput((x, t, np.ones(4, np.float32))), ValueError, r"weight must be 1-D"
        )
        yield ErrorInput(
            SampleInput((x.astype(np.int32), t)), TypeError, r"input must be a floating"
        )
        yield ErrorInput(SampleInput((x, t), {"ignore_index": 1.5}), TypeError, r"ignore_index")
        yield ErrorInput(
            SampleInput((x, t), {"size_average": "yes"}), TypeError, r"size_average must be a bool"
        )
        if fn == "cross_entropy":
            yield ErrorInput(
                SampleInput((x, t), {"label_smoothing": 1.5}),
                ValueError,
                r"label_smoothing must be between 0.0 and 1.0",
            )
            yield ErrorInput(
                SampleInput((x, np.zeros((4, 2), np.float32))),
                TypeError,
                r"target must be int64 class indices, or class probabilities",
            )

    return errors


def _cell_samples(ce: bool) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = normal(rng, (6, 4), dtype, 2.0)
        t = _targets(rng, (6,), 4)
        t[1] = 2
        w = rng.uniform(0.2, 2.0, 4).astype(dtype)
        extra = {"label_smoothing": 0.1} if ce else {}
        yield SampleInput((x, t), name="defaults")
        yield SampleInput(
            (x, t),
            init_kwargs={"weight": w, "ignore_index": 2, "reduction": "sum", **extra},
            name="weight ignore 2 sum",
        )

    return samples


def _cell_errors() -> Iterator[ErrorInput]:
    x = np.zeros((4, 3), np.float32)
    t = np.array([0, 1, 2, 1], np.int64)
    yield ErrorInput(
        SampleInput((x, t), init_kwargs={"reduction": "batchmean"}), ValueError, r"reduction must"
    )
    yield ErrorInput(
        SampleInput((x, t), init_kwargs={"ignore_index": None}), TypeError, r"ignore_index must"
    )


def _ce_bench() -> SampleInput:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((100_000, 80)).astype(np.float32)  # COCO classes over 100k anchors
    return SampleInput((x, rng.integers(0, 80, 100_000).astype(np.int64)), name="100k x 80")


OPS: List[Any] = [
    torch_entry(
        "layers.cross_entropy",
        cross_entropy,
        "torch.nn.functional.cross_entropy",
        every_dtype_first(_ce_samples, keep=2),
        _errors("cross_entropy"),
        grad_argnums=(0, 1),
        tolerance_overrides=HALF,
        dispatch_op="layers.cross_entropy",
        bench_input=_ce_bench,
        torch_opinfo=(TorchOpInfo("nn.functional.cross_entropy", skip_dtypes=HALF_SKIP),),
    ),
    torch_entry(
        "layers.nll_loss",
        nll_loss,
        "torch.nn.functional.nll_loss",
        every_dtype_first(_nll_samples, keep=2),
        _errors("nll_loss"),
        tolerance_overrides=HALF,
        dispatch_op="layers.nll_loss",
        torch_opinfo=(TorchOpInfo("nn.functional.nll_loss", stride=3, skip_dtypes=HALF_SKIP),),
    ),
    torch_entry(
        "layers.CrossEntropyLoss",
        CrossEntropyLoss,
        "torch.nn.CrossEntropyLoss",
        _cell_samples(True),
        _cell_errors,
        is_cell=True,
        dtypes=("float32",),  # configuration only: the function's entry covers the dtypes
        tolerance_overrides=HALF,
    ),
    torch_entry(
        "layers.NLLLoss",
        NLLLoss,
        "torch.nn.NLLLoss",
        _cell_samples(False),
        _cell_errors,
        is_cell=True,
        dtypes=("float32",),  # configuration only: the function's entry covers the dtypes
        tolerance_overrides=HALF,
    ),
]
for _entry in OPS[2:]:
    _entry.ref = torch_module(_entry.mirrors)
