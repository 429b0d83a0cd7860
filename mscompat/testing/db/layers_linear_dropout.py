"""Op database entries for ``mscompat.layers.linear`` (``linear``, ``bilinear`` and the Cells
``Linear``, ``Bilinear``, ``Identity``) and
``mscompat.layers.dropout``.

Dropout's masks come from MindSpore's generator, not PyTorch's: its entries compare the
deterministic calls (``training=False``, ``p=0``, ``p=1``, empty input) with PyTorch, and
``tests/test_layers_act.py`` checks the random ones by their properties. The Cells with a
random initialisation get the same parameters on both sides (``SampleInput.params``).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List

import numpy as np

from mscompat import layers as L
from mscompat.testing.db._common import bench, every_dtype_first, normal, torch_entry
from mscompat.testing.db.layers_activation import config_cell_entry
from mscompat.testing.db.layers_loss_classification import HALF
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, TorchOpInfo

__all__ = ["OPS"]

_X = np.ones((2, 3), np.float32)
_F32_ONLY = {
    "float16": "float16 rounds once (PyTorch per op): covered by the entry's own samples",
    "float64": "covered by the entry's own samples (the suite's time budget)",
    "int32": "float tensors only",
    "int64": "float tensors only",
}

# ----------------------------------------------------------------------------- linear, bilinear


def _linear_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x, w, b = normal(rng, (2, 3, 4), dtype), normal(rng, (5, 4), dtype), normal(rng, (5,), dtype)
    yield SampleInput((x, w, b), name="(2, 3, 4) @ (5, 4)^T + b")
    yield SampleInput((x[0].T, w[:, :3]), name="no bias, transposed input")
    yield SampleInput((x[0, 0], w[0]), name="1-D input and weight")
    yield SampleInput((x[:, :0], w, b), name="empty batch")
    yield SampleInput((x[..., :0], w[:, :0], b), name="in_features = 0: the bias")


def _linear_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput((_X, _X[:, :2])), ValueError, r"input.shape\[-1\] \(3\) must equal"
    )
    yield ErrorInput(SampleInput((_X, _X, _X[0])), ValueError, "bias must have shape")
    yield ErrorInput(SampleInput((_X, _X.astype(np.int32))), TypeError, "weight must be a float")


def _bilinear_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x1, x2 = normal(rng, (2, 3, 4), dtype), normal(rng, (2, 3, 2), dtype)
    w, b = normal(rng, (5, 4, 2), dtype), normal(rng, (5,), dtype)
    yield SampleInput((x1, x2, w, b), name="(2, 3) batch")
    yield SampleInput((x1[0, 0], x2[0, 0], w), name="1-D, no bias")
    yield SampleInput((x1[:0], x2[:0], w, b), name="empty")


def _bilinear_errors() -> Iterator[ErrorInput]:
    w = np.ones((4, 3, 3), np.float32)
    yield ErrorInput(SampleInput((_X, _X[:1], w)), ValueError, "the same leading dims")
    yield ErrorInput(SampleInput((_X, _X, w[0])), ValueError, "weight")


# ----------------------------------------------------------------------------- Cells


_cell_entry = config_cell_entry


def _linear_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    params = {"weight": normal(rng, (3, 4), dtype), "bias": normal(rng, (3,), dtype)}
    init = {"in_features": 4, "out_features": 3}
    yield SampleInput((normal(rng, (2, 4), dtype),), init_kwargs=init, params=params)
    yield SampleInput(
        (normal(rng, (4,), dtype),),
        init_kwargs={**init, "bias": False},
        params={"weight": params["weight"]},
        name="no bias, unbatched",
    )


def _bilinear_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    params = {"weight": normal(rng, (3, 2, 4), dtype), "bias": normal(rng, (3,), dtype)}
    init = {"in1_features": 2, "in2_features": 4, "out_features": 3}
    x1, x2 = normal(rng, (5, 2), dtype), normal(rng, (5, 4), dtype)
    yield SampleInput((x1, x2), init_kwargs=init, params=params)


def _shape_cell_samples(name: str, inits: List[Dict[str, Any]]) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for init in inits:
            yield SampleInput((normal(rng, (2, 3, 4), dtype),), init_kwargs=init, name=str(init))

    samples.__name__ = f"{name}_samples"
    return samples


def _cell_errors(init: Dict[str, Any], kind: type, match: str, x: Any = _X) -> Any:
    def errors() -> Iterator[ErrorInput]:
        yield ErrorInput(SampleInput((x,), init_kwargs=init), kind, match)

    return errors


# ----------------------------------------------------------------------------- dropout

_DROPOUT_FNS = ("dropout", "dropout1d", "dropout2d", "dropout3d")
_ALPHA_FNS = ("alpha_dropout", "feature_alpha_dropout")


def _dropout_samples(name: str) -> Any:
    shape = {"dropout1d": (2, 3, 4), "dropout3d": (1, 2, 2, 2, 2)}.get(name, (2, 3, 2, 2))

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = normal(rng, shape, dtype)
        x.flat[0] = np.nan
        yield SampleInput((x,), {"p": 0.3, "training": False}, name="training=False: identity")
        yield SampleInput((x,), {"p": 0.0, "training": True}, name="p=0: identity")
        yield SampleInput((x,), {"p": 1.0, "training": True}, name="p=1: x * 0 (NaN stays)")
        yield SampleInput((x[:0],), {"p": 0.5, "training": True}, name="empty")
        if name == "feature_alpha_dropout":  # any rank when nothing is dropped, as PyTorch
            for low in (x[0, 0, 0], np.asarray(x[0, 0, 0, 0])):
                yield SampleInput((low,), {"training": False}, name=f"{low.ndim}-D, not training")

    samples.__name__ = f"{name}_samples"
    return samples


def _dropout_errors(name: str) -> Any:
    def errors() -> Iterator[ErrorInput]:
        x = np.ones((2, 3, 4), np.float32)
        yield ErrorInput(SampleInput((x,), {"p": 1.5}), ValueError, "between 0 and 1, but got 1.5")
        yield ErrorInput(SampleInput((x,), {"training": 1}), TypeError, "training must be a bool")
        if name == "dropout1d":
            yield ErrorInput(SampleInput((x[0, 0],)), ValueError, "expected a 2-D or 3-D input")
        if name == "feature_alpha_dropout":
            yield ErrorInput(
                SampleInput((x[0, 0],), {"training": True}),
                ValueError,
                "at least 2 dims, but got 1",
            )

    return errors


def _dropout_cell_samples(name: str) -> Any:
    shape = (2, 3, 2, 2) if name == "Dropout3d" else (2, 3, 2)

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        # a PyTorch module is in training mode, a Cell in evaluation: p=0 agrees in both
        yield SampleInput((normal(rng, shape, dtype),), init_kwargs={"p": 0.0})

    samples.__name__ = f"{name}_samples"
    return samples


OPS: List[OpInfo] = [
    torch_entry(
        "layers.linear",
        L.linear,
        "torch.nn.functional.linear",
        every_dtype_first(_linear_samples, keep=1),
        _linear_errors,
        grad_argnums=(0, 1, 2),
        tolerance_overrides=HALF,
        supports_graph=False,  # graph mode: tests/test_layers_act.py, one compilation
        bench_input=lambda: SampleInput(
            (np.ones((1024, 1024), np.float32), np.ones((512, 1024), np.float32))
        ),
        torch_opinfo=(TorchOpInfo("nn.functional.linear", stride=2, skip_dtypes=_F32_ONLY),),
    ),
    torch_entry(
        "layers.bilinear",
        L.bilinear,
        "torch.nn.functional.bilinear",
        every_dtype_first(_bilinear_samples, keep=1),
        _bilinear_errors,
        grad_argnums=(0, 1, 2, 3),
        tolerance_overrides=HALF,
        supports_graph=False,  # graph mode: tests/test_layers_act.py, one compilation
        torch_opinfo=(TorchOpInfo("nn.functional.bilinear", stride=2, skip_dtypes=_F32_ONLY),),
    ),
    _cell_entry(
        "Linear",
        _linear_cell_samples,
        _cell_errors({"in_features": 2.0, "out_features": 3}, TypeError, "in_features must be"),
    ),
    _cell_entry(
        "Bilinear",
        _bilinear_cell_samples,
        _cell_errors(
            {"in1_features": 2, "in2_features": -1, "out_features": 3}, ValueError, "must be >= 0"
        ),
    ),
    _cell_entry(
        "Identity",
        _shape_cell_samples("Identity", [{}]),
        lambda: iter(
            [ErrorInput(SampleInput((_X, _X)), TypeError, "positional argument|number of provided")]
        ),
    ),
    *(
        torch_entry(
            f"layers.{name}",
            getattr(L, name),
            f"torch.nn.functional.{name}",
            every_dtype_first(_dropout_samples(name), keep=1),
            _dropout_errors(name),
            supports_graph=False,  # graph mode: tests/test_layers_act.py, one compilation
            # the kernel is dropout's (every dtype there); these differ in the mask's shape
            dtypes=("float16", "float32", "float64") if name == "dropout" else ("float32",),
            bench_input=bench((1000, 1000), 0.5, True),
        )
        for name in _DROPOUT_FNS + _ALPHA_FNS
    ),
    *(
        _cell_entry(
            name,
            _dropout_cell_samples(name),
            _cell_errors({"p": -0.1}, ValueError, "between 0 and 1"),
        )
        for name in (
            "Dropout",
            "Dropout1d",
            "Dropout2d",
            "Dropout3d",
            "AlphaDropout",
            "FeatureAlphaDropout",
        )
    ),
]
