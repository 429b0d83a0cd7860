"""Op database entries for the activations of ``mscompat.layers`` (``activation``,
``activation_smooth``, ``softmax``), driven by one table: each row gives the function, its
argument variants, the values where its formula branches (checked with gradients) and the
edges (signed zeros, +-inf, NaN: forward only, passed as a keyword so that PyTorch's
dtype-dependent NaN gradients are not compared)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Sequence, Tuple

import numpy as np

from mscompat import layers as L
from mscompat.testing.db._common import bench, every_dtype_first, normal, torch_entry
from mscompat.testing.db.layers_loss_classification import HALF, torch_module
from mscompat.testing.opinfo import (
    ErrorInput,
    KnownDifference,
    OpInfo,
    ReferenceInput,
    SampleInput,
    TorchOpInfo,
)

__all__ = ["OPS", "config_cell_entry"]

_EDGES = (-np.inf, -30.0, -0.0, 0.0, 25.0, np.inf, np.nan)
_NOT_FLOAT = {d: "integer input: these activations take float tensors" for d in ("int32", "int64")}
#: PyTorch's OpInfo samples in float32 only: the entry's own samples cover float16/float64
#: (the suite's time budget)
_F32_ONLY = {
    **_NOT_FLOAT,
    **{d: "float16/float64 are covered by the entry's own samples" for d in ("float16", "float64")},
}

# name -> (argument variants, branch points, edge values, function-specific errors)
Row = Tuple[Sequence[Dict[str, Any]], Sequence[float], Sequence[float], Sequence[Any]]
_ROWS: Dict[str, Row] = {
    "relu": (({},), (0.0, -1.0, 1.0), _EDGES, ()),
    "relu6": (({},), (0.0, 6.0, 7.0), _EDGES, ()),
    "hardtanh": (
        ({}, {"min_val": -2.0, "max_val": 0.5}),
        (-1.0, 1.0, 0.0),
        _EDGES,
        (({"min_val": 1.0, "max_val": 0.0}, ValueError, "max_val must be >= min_val"),),
    ),
    "leaky_relu": (({}, {"negative_slope": 0.2}), (0.0,), _EDGES, ()),
    "threshold": (({"threshold": 0.5, "value": -2.0},), (0.5,), _EDGES, ()),
    "elu": (({}, {"alpha": 1.5}), (0.0,), _EDGES, ()),
    "selu": (({},), (0.0, -2.0), _EDGES, ()),
    "celu": (
        ({}, {"alpha": 2.0}),
        (0.0,),
        _EDGES,
        (({"alpha": 0.0}, ValueError, "alpha must not be 0"),),
    ),
    "rrelu": (
        ({}, {"lower": 0.1, "upper": 0.3}, {"lower": 0.2, "upper": 0.2, "training": True}),
        (0.0,),
        _EDGES,
        (({"lower": 0.5, "upper": 0.1}, ValueError, "lower must be <= upper"),),
    ),
    "gelu": (
        ({}, {"approximate": "tanh"}),
        (-3.0,),
        (-30.0, -0.0, 0.0, 25.0, np.nan),
        (({"approximate": "exact"}, ValueError, "approximate must be"),),
    ),
    "silu": (({},), (0.0,), _EDGES[1:-2] + (np.nan,), ()),
    "mish": (({},), (0.0, 30.0), _EDGES[1:], ()),
    "softplus": (
        ({}, {"beta": 2.0, "threshold": 5.0}),
        (2.5, 20.0),
        _EDGES,
        (({"beta": 0.0}, ValueError, "beta must not be 0"),),
    ),
    "softsign": (({},), (0.0,), _EDGES, ()),
    "logsigmoid": (({},), (0.0, -100.0, 100.0), _EDGES, ()),
    "sigmoid": (({},), (0.0, -100.0), _EDGES, ()),
    "tanh": (({},), (0.0,), _EDGES, ()),
    "hardsigmoid": (({},), (-3.0, 3.0, 0.0), _EDGES, ()),
    "hardswish": (({},), (-3.0, 3.0, 0.0), _EDGES, ()),
    "hardshrink": (({}, {"lambd": 1.0}), (-0.5, 0.5), _EDGES, ()),
    "softshrink": (
        ({}, {"lambd": 1.0}),
        (-0.5, 0.5),
        _EDGES,
        (({"lambd": -1.0}, ValueError, "lambd must be >= 0"),),
    ),
    "tanhshrink": (({},), (0.0,), _EDGES, ()),
}


def _samples(name: str, row: Row) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    variants, kinks, edges, _ = row

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = normal(rng, (3, 4), dtype, 3.0)
        x[0, : len(kinks)] = kinks  # the branch points, differentiated
        yield SampleInput((x,), dict(variants[0]), name=f"{variants[0]} with branch points")
        if dtype != "float32":
            return
        for v in variants[1:]:
            yield SampleInput((x,), dict(v), name=str(v))
        edge = np.array(edges, dtype)
        yield SampleInput((), {"input": edge, **variants[-1]}, name="signed zeros, inf, NaN")
        if name == "relu":  # the front door every activation shares (_pointwise.apply)
            yield SampleInput((x[:, :0],), name="empty")
            yield SampleInput((np.array(1.5, dtype),), name="0-d")

    samples.__name__ = f"{name}_samples"
    return samples


def _errors(row: Row) -> Callable[[], Iterator[ErrorInput]]:
    def errors() -> Iterator[ErrorInput]:
        x = np.ones((2, 3), np.float32)
        kw = dict(row[0][0])
        yield ErrorInput(SampleInput((x.astype(np.int32),), kw), TypeError, "input must be a float")
        yield ErrorInput(SampleInput(([1.0],), kw), TypeError, "input must be a mindspore.Tensor")
        for kwargs, kind, match in row[3]:
            yield ErrorInput(SampleInput((x,), kwargs), kind, match)

    return errors


#: PyTorch's rrelu samples with training=True and a non-empty input: random slopes, drawn by
#: MindSpore's generator here (tests/test_layers_act.py checks them by their properties)
_RRELU_RANDOM = (0, 2, 5, 6, 12, 13, 14, 15, 16, 18, 21, 22, *range(28, 43))
_RANDOM_SLOPES = "training=True: random slopes from MindSpore's generator, not PyTorch's"


#: PyTorch's (128, 128) sample with NaN inputs: its CPU backward gives another gradient at NaN
#: in its vectorised loop (0, or NaN for the elu family) than in its elementwise loop (the
#: incoming gradient), which short tensors and the tail of long ones take; we follow the
#: elementwise rule, which PyTorch's 9-element NaN sample checks
_NAN_GRAD = {
    "elu": (13, 27),
    "celu": (13, 27),
    "selu": (13, 27),
    "relu6": (13, 27),
    "hardtanh": (15, 31),
    "hardshrink": (16, 33),
    "softshrink": (15, 31),
}
_VECTORISED_NAN = "gradient at NaN: PyTorch's vectorised backward differs from its elementwise one"
_FLOATS = ("float16", "float32", "float64")
#: float64's 9-element NaN sample too: 8 of its 9 elements fill two 4-wide double vectors, so
#: PyTorch's vectorised rule gives 0 there (tools/opinfo_audit.py)
_NAN_GRAD_F64 = {
    "hardtanh": (14, 30),
    "hardshrink": (15, 32),
    "relu6": (12, 26),
    "softshrink": (14, 30),
}


def _nan_grad_samples(name: str, dtype: str) -> Tuple[int, ...]:
    extra = _NAN_GRAD_F64.get(name, ()) if dtype == "float64" else ()
    return tuple(sorted(_NAN_GRAD[name] + extra))


def _entry(name: str, row: Row) -> OpInfo:
    apis: Tuple[str, ...] = (f"torch.nn.functional.{name}",)
    if name in ("relu", "elu", "hardtanh", "threshold", "leaky_relu", "celu", "selu", "rrelu"):
        apis += (f"torch.nn.functional.{name}_",)  # the non-mutating alias (see _pointwise)
    opinfo = "nn.functional." + name
    if name in ("sigmoid", "tanh"):
        opinfo = name  # PyTorch's OpInfo of the same function
    known: Tuple[KnownDifference, ...] = ()
    # every float dtype (the suite runs float32; tools/opinfo_audit.py all three)
    if name == "rrelu":
        known = tuple(KnownDifference(opinfo, d, _RRELU_RANDOM, _RANDOM_SLOPES) for d in _FLOATS)
    if name in _NAN_GRAD:
        known = tuple(
            KnownDifference(opinfo, d, _nan_grad_samples(name, d), _VECTORISED_NAN) for d in _FLOATS
        )
    return torch_entry(
        f"layers.{name}",
        getattr(L, name),
        f"torch.nn.functional.{name}",
        _samples(name, row),
        _errors(row),
        torch_apis=apis,
        bench_input=bench((1000, 1000)),
        torch_opinfo=(TorchOpInfo(opinfo, stride=6, skip_dtypes=_F32_ONLY),),
        known=known,
        # x - tanh(x) cancels near 0: PyTorch's float16 rounds its float32 tanh there
        tolerance_overrides=HALF if name == "tanhshrink" else (),
        supports_graph=False,  # graph mode: tests/test_layers_act.py, one compilation
    )


# ----------------------------------------------------------------------------- prelu, softmax, glu


def _prelu_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 3, 4), dtype)
    x[0, 0, 0] = 0.0
    yield SampleInput((x, np.array([0.25, -0.5, 2.0], dtype)), name="per channel")
    yield SampleInput((x, np.array([0.1], dtype)), name="one slope")
    yield SampleInput((x[0, 0], np.array(0.3, dtype)), name="1-D, 0-d weight")


def _prelu_errors() -> Iterator[ErrorInput]:
    x = np.ones((2, 3), np.float32)
    w = np.ones((2,), np.float32)
    yield ErrorInput(SampleInput((x, w)), ValueError, r"weight must have 1 or channel size \(3\)")
    yield ErrorInput(SampleInput((x, w.reshape(1, 2))), ValueError, "weight must be 0-d or 1-D")


def _softmax_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 3, 4), dtype, 3.0)
    yield SampleInput((x,), {"dim": 1}, name="dim=1")
    yield SampleInput((x,), {"dim": -1}, name="dim=-1")
    rows = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf], [1e4, 0.0, np.nan]])
    yield SampleInput((), {"input": rows.astype(dtype), "dim": 1}, name="-inf, masked row, NaN")
    yield SampleInput((x,), {"dim": 0, "dtype": None}, name="dim=0")
    yield SampleInput((x[:0],), {"dim": 1}, name="empty")
    yield SampleInput((np.array(2.0, dtype),), {"dim": 0}, name="0-d")


def _softmax_errors() -> Iterator[ErrorInput]:
    x = np.ones((2, 3), np.float32)
    yield ErrorInput(SampleInput((x,), {"dim": 2}), ValueError, "dim must be in the range")
    yield ErrorInput(SampleInput((x.astype(np.int32), 0)), TypeError, "input must be a float")


def _glu_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 4, 3), dtype)
    yield SampleInput((x,), {"dim": 1}, name="dim=1")
    yield SampleInput((x[:, :, :2],), name="dim=-1")


def _glu_references() -> Iterator[ReferenceInput]:
    """An empty input in graph mode (graph mode's Slice refused it: PyTorch's OpInfo sample 8)."""
    yield ReferenceInput(SampleInput((np.zeros((0, 2, 4), np.float32), 1)), modes=("graph",))


def _glu_errors() -> Iterator[ErrorInput]:
    x = np.ones((2, 3), np.float32)
    yield ErrorInput(SampleInput((x,)), ValueError, "halving dimension must be even")
    yield ErrorInput(SampleInput((np.array(1.0, np.float32),)), ValueError, "at least 1 dim")


# ----------------------------------------------------------------------------- Cells

_CELLS: Dict[str, Dict[str, Any]] = {
    "ReLU": {},
    "ReLU6": {},
    "Hardtanh": {"min_val": -0.5, "max_val": 2.0},
    "LeakyReLU": {"negative_slope": 0.3},
    "Threshold": {"threshold": 0.1, "value": 20.0},
    "ELU": {"alpha": 0.5},
    "SELU": {},
    "CELU": {"alpha": 0.5},
    "RReLU": {"lower": 0.2, "upper": 0.2},
    "PReLU": {"num_parameters": 4, "init": 0.1},
    "GELU": {"approximate": "tanh"},
    "SiLU": {},
    "Mish": {},
    "Softplus": {"beta": 0.5, "threshold": 2.0},
    "Softsign": {},
    "LogSigmoid": {},
    "Sigmoid": {},
    "Tanh": {},
    "Hardsigmoid": {},
    "Hardswish": {},
    "Hardshrink": {"lambd": 0.2},
    "Softshrink": {"lambd": 0.2},
    "Tanhshrink": {},
    "Softmax": {"dim": 1},
    "Softmin": {"dim": 0},
    "LogSoftmax": {"dim": -1},
    "GLU": {"dim": 1},
}


def _cell(name: str, init: Dict[str, Any]) -> OpInfo:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield SampleInput((normal(rng, (3, 4), dtype, 3.0),), init_kwargs=init, name=str(init))

    def errors() -> Iterator[ErrorInput]:
        yield ErrorInput(
            SampleInput((np.ones(2, np.int32),), init_kwargs=init), TypeError, "must be"
        )

    samples.__name__ = f"{name}_samples"
    return config_cell_entry(name, samples, errors)


def config_cell_entry(name: str, samples: Any, errors: Any) -> OpInfo:
    """The entry of Cell ``mscompat.layers.<name>`` against ``torch.nn.<name>``: float32
    forward in PyNative only, its function's entry covers the dtypes and gradients and
    ``tests/test_layers_act.py`` compiles every Cell in one graph (the suite's time budget)."""
    entry = torch_entry(
        f"layers.{name}",
        getattr(L, name),
        f"torch.nn.{name}",
        samples,
        errors,
        is_cell=True,
        dtypes=("float32",),
        grad_argnums=(),
        supports_graph=False,
    )
    entry.ref = torch_module(f"torch.nn.{name}")
    return entry


OPS: List[OpInfo] = [
    *(_entry(name, row) for name, row in _ROWS.items()),
    torch_entry(
        "layers.prelu",
        L.prelu,
        "torch.nn.functional.prelu",
        _prelu_samples,
        _prelu_errors,
        grad_argnums=(0, 1),
        torch_opinfo=(TorchOpInfo("nn.functional.prelu", skip_dtypes=_F32_ONLY),),
        supports_graph=False,  # graph mode: tests/test_layers_act.py, one compilation
    ),
    *(
        torch_entry(
            f"layers.{name}",
            getattr(L, name),
            f"torch.nn.functional.{name}",
            every_dtype_first(_softmax_samples, keep=1),
            _softmax_errors,
            bench_input=bench((1000, 1000), 1),
            tolerance_overrides=HALF,
            torch_opinfo=(TorchOpInfo(opinfo, stride=2, skip_dtypes=_F32_ONLY),),
            supports_graph=False,  # graph mode: tests/test_layers_act.py, one compilation
        )
        for name, opinfo in (
            ("softmax", "softmax"),
            ("log_softmax", "log_softmax"),
            ("softmin", "nn.functional.softmin"),
        )
    ),
    torch_entry(
        "layers.glu",
        L.glu,
        "torch.nn.functional.glu",
        _glu_samples,
        _glu_errors,
        torch_opinfo=(TorchOpInfo("nn.functional.glu", skip_dtypes=_F32_ONLY),),
        supports_graph=False,  # graph mode: tests/test_layers_act.py, one compilation
        references=_glu_references,
    ),
    *(_cell(name, init) for name, init in _CELLS.items()),
]
