"""Op database entries for the regression and binary losses of ``mscompat.layers``
(``loss_regression``) and their Cells, against ``torch.nn.functional`` and ``torch.nn``."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np

from mscompat import layers as L
from mscompat.testing.db._common import bench, every_dtype_first, normal, torch_entry
from mscompat.testing.db.layers_activation import config_cell_entry
from mscompat.testing.db.layers_loss_classification import HALF, HALF_SKIP
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, TorchOpInfo

__all__ = ["OPS"]

_X = np.ones((2, 3), np.float32)
_SKIP = {**HALF_SKIP, **{d: "the losses take float tensors" for d in ("int32", "int64")}}
Bad = Tuple[Tuple[Any, ...], Dict[str, Any], type, str]
_COMMON: Tuple[Bad, ...] = (
    ((_X, _X), {"reduction": "avg"}, ValueError, "reduction must be one of"),
    ((_X.astype(np.int32), _X), {}, TypeError, "input must be a floating"),
    ((_X, _X), {"reduce": 1}, TypeError, "reduce must be a bool"),
)


def _errors(*extra: Bad) -> Callable[[], Iterator[ErrorInput]]:
    def errors() -> Iterator[ErrorInput]:
        for args, kwargs, kind, match in _COMMON + extra:
            yield ErrorInput(SampleInput(args, kwargs), kind, match)

    return errors


def _distance_samples(
    extra: Dict[str, Any], weighted: bool
) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x, y = normal(rng, (3, 4), dtype, 2.0), normal(rng, (3, 4), dtype)
        y[0, 0] = x[0, 0]  # a zero difference: the gradient of |d| there is 0
        y[0, 1] = x[0, 1] - 1.0  # |d| == beta: the linear branch
        yield SampleInput((x, y), {**extra, "reduction": "none"}, name="none, d = 0, |d| = 1")
        yield SampleInput((x, y), extra, name="mean")
        yield SampleInput((x, y[:1]), {**extra, "reduction": "sum"}, name="broadcast target")
        yield SampleInput((x, y), {**extra, "size_average": False}, name="legacy size_average")
        if weighted:
            w = rng.uniform(0.1, 2.0, (3, 4)).astype(dtype)
            yield SampleInput((x, y), {"weight": w}, name="weighted mean (sum w l / sum w)")
        edge = np.array([np.inf, -np.inf, np.nan, 1e4], dtype)
        yield SampleInput((), {"input": edge, "target": edge[::-1].copy(), **extra}, name="inf")
        yield SampleInput((x[:0], y[:0]), extra, name="empty mean (NaN)")

    return samples


def _bce_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    p = rng.uniform(0.05, 0.95, (3, 4)).astype(dtype)
    y = (rng.uniform(size=(3, 4)) < 0.5).astype(dtype)
    yield SampleInput((p, y), {"reduction": "none"}, name="none")
    w = rng.uniform(0.5, 2.0, (4,)).astype(dtype)
    yield SampleInput((p, y, w), name="weight (4,) broadcast, mean")
    soft = rng.uniform(size=(3, 4)).astype(dtype)
    yield SampleInput((p, soft), {"reduction": "sum"}, name="soft targets")
    ends = np.array([0.0, 1.0, 0.0, 1.0], dtype)
    yield SampleInput(
        (), {"input": ends, "target": np.array([0.0, 0.0, 1.0, 1.0], dtype)}, name="log clamp"
    )
    yield SampleInput((p[:0], y[:0]), name="empty")


def _bce_logits_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (3, 4), dtype, 3.0)
    y = (rng.uniform(size=(3, 4)) < 0.5).astype(dtype)
    yield SampleInput((x, y), {"reduction": "none"}, name="none")
    pw = rng.uniform(0.5, 3.0, (4,)).astype(dtype)
    yield SampleInput((x, y), {"pos_weight": pw}, name="pos_weight (C,)")
    w = rng.uniform(0.5, 2.0, (3, 1)).astype(dtype)
    yield SampleInput((x, y, w), {"reduction": "sum", "pos_weight": pw}, name="weight, pos_weight")
    big = np.array([-1e4, -100.0, 0.0, 100.0, 1e4], dtype)
    yield SampleInput((big, np.array([1, 0, 1, 1, 0], dtype)), name="+-1e4 logits")
    # rows of 11: the kernel's 8 lanes and a scalar tail; pos_weight as a row, a column, one value
    x11, y11 = normal(rng, (3, 11), dtype, 3.0), rng.uniform(size=(3, 11)).astype(dtype)
    for pw_shape, red in (((11,), "sum"), ((3, 1), "mean"), ((1,), "none")):
        pw = rng.uniform(0.5, 3.0, pw_shape).astype(dtype)
        yield SampleInput((x11, y11), {"pos_weight": pw, "reduction": red}, name=f"pw {pw_shape}")
    yield SampleInput((x[:0], y[:0]), name="empty")


def _cell(name: str, init: Dict[str, Any], probabilities: bool = False) -> OpInfo:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = (
            rng.uniform(0.1, 0.9, (2, 3)).astype(dtype)
            if probabilities
            else normal(rng, (2, 3), dtype)
        )
        y = (rng.uniform(size=(2, 3)) < 0.5).astype(dtype)
        yield SampleInput((x, y), init_kwargs=init, name=str(list(init)))

    def errors() -> Iterator[ErrorInput]:
        bad = {"reduction": "elementwise_mean"}
        yield ErrorInput(SampleInput((_X, _X), init_kwargs=bad), ValueError, "reduction must be")

    samples.__name__ = f"{name}_samples"
    return config_cell_entry(name, samples, errors)


_BENCH = bench((1000, 1000), np.zeros((1000, 1000), np.float32))


def _bench_probabilities() -> SampleInput:
    rng = np.random.default_rng(0)
    p = rng.uniform(0.01, 0.99, (1000, 1000)).astype(np.float32)
    return SampleInput((p, (rng.uniform(size=p.shape) < 0.5).astype(np.float32)), name="1000x1000")


def _entry(name: str, samples: Any, errors: Any, grad: Tuple[int, ...], **extra: Any) -> OpInfo:
    return torch_entry(
        f"layers.{name}",
        getattr(L, name),
        f"torch.nn.functional.{name}",
        every_dtype_first(samples, keep=1),
        errors,
        grad_argnums=grad,
        tolerance_overrides=HALF,
        bench_input=extra.pop("bench_input", _BENCH),
        torch_opinfo=(TorchOpInfo(f"nn.functional.{name}", stride=2, skip_dtypes=_SKIP),),
        supports_graph=False,  # graph mode: tests/test_layers_act.py, one compilation
        **extra,
    )


_W = np.ones((2, 3), np.float32)
OPS: List[OpInfo] = [
    _entry(
        "l1_loss",
        _distance_samples({}, True),
        _errors(((_X, _X), {"weight": _W[:1]}, ValueError, "weight must have input's shape")),
        (0, 1),
        dispatch_op="layers.l1_loss",
    ),
    _entry(
        "mse_loss",
        _distance_samples({}, True),
        _errors(((_X, _X[:, :2]), {}, ValueError, "target must broadcast with input")),
        (0, 1),
        dispatch_op="layers.mse_loss",
    ),
    _entry(
        "smooth_l1_loss",
        _distance_samples({"beta": 1.0}, False),
        _errors(((_X, _X), {"beta": -1.0}, ValueError, "beta must be >= 0")),
        (0, 1),
        dispatch_op="layers.smooth_l1_loss",
    ),
    _entry(
        "binary_cross_entropy",
        _bce_samples,
        _errors(
            ((_X, _X[:1]), {}, ValueError, "target must have input's shape"),
            ((_X * 2, _X), {}, ValueError, "input values must be between 0 and 1"),
        ),
        (0,),
        bench_input=_bench_probabilities,
    ),
    _entry(
        "binary_cross_entropy_with_logits",
        _bce_logits_samples,
        _errors(
            ((_X, _X[:1]), {}, ValueError, "target must have input's shape"),
            ((_X, _X), {"pos_weight": _X[0, :2]}, ValueError, "must broadcast"),
        ),
        (0, 1),
        dispatch_op="layers.binary_cross_entropy_with_logits",
    ),
    _cell("L1Loss", {"reduction": "sum"}),
    _cell("MSELoss", {"reduce": False}),
    _cell("SmoothL1Loss", {"beta": 0.5}),
    _cell("BCELoss", {"weight": np.array([1.0, 2.0, 0.5], np.float32)}, probabilities=True),
    _cell("BCEWithLogitsLoss", {"pos_weight": np.array([1.0, 2.0, 0.5], np.float32)}),
]
