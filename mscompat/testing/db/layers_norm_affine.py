"""Op database entries for ``layer_norm``, ``group_norm``, ``normalize``, ``batch_norm`` and
their Cells (``mscompat.layers.affine_norm``, ``mscompat.layers.batch_norms``)."""

from __future__ import annotations

from typing import Any, Iterator, List

import numpy as np

from mscompat import layers as L
from mscompat.testing.db._common import bench, every_dtype_first, normal, torch_entry
from mscompat.testing.db.layers_norm import _F16_INSTANCE
from mscompat.testing.opinfo import ErrorInput, SampleInput, TorchOpInfo

# ----------------------------------------------------------------------------- layer_norm


def _ln_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 3, 4, 5), dtype, 3.0) + 2
    w, b = normal(rng, (4, 5), dtype), normal(rng, (4, 5), dtype)
    yield SampleInput((x, (4, 5), w, b), name="affine, 2 dims, mean 2")
    yield SampleInput((x, (5,), None, b[0], 0.1), name="bias only, eps=0.1")
    yield SampleInput((np.zeros((0, 4), dtype), (4,)), name="empty")


def _ln_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, (2,))), ValueError, "must be the last dims of input")
    yield ErrorInput(SampleInput((x, "3")), TypeError, "normalized_shape must be an int")
    yield ErrorInput(SampleInput((x, (3,), np.ones(2, np.float32))), ValueError, "weight must")
    yield ErrorInput(SampleInput((x, (3,), None, None, "e")), TypeError, "eps must be a number")
    yield ErrorInput(SampleInput((x.astype(np.int32), (3,))), TypeError, "input must be a float")


def _ln_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 3, 4), dtype)
    yield SampleInput((x,), init_kwargs={"normalized_shape": [3, 4]}, name="affine")
    yield SampleInput((x,), init_kwargs={"normalized_shape": 4, "bias": False, "eps": 1e-3})


# ----------------------------------------------------------------------------- group_norm


def _gn_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 6, 3, 2), dtype, 2.0) - 1
    c = normal(rng, (6,), dtype)
    yield SampleInput((x, 3, c, c), name="3 groups, affine")
    yield SampleInput((x, 6, None, None, 0.5), name="a group per channel, eps=0.5")
    yield SampleInput((np.zeros((0, 4, 3), dtype), 2), name="empty batch")


def _gn_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 6, 3), np.float32)
    yield ErrorInput(SampleInput((x, 4)), ValueError, "divisible by num_groups")
    yield ErrorInput(SampleInput((x, 0)), ValueError, "divisible by num_groups")
    yield ErrorInput(SampleInput((x, 2.0)), TypeError, "num_groups must be an int")
    yield ErrorInput(SampleInput((x[0, 0], 1)), ValueError, "at least 2 dimensions")
    yield ErrorInput(SampleInput((x, 2, np.ones(3, np.float32))), ValueError, "weight must have")


def _gn_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 4, 3), dtype)
    yield SampleInput((x,), init_kwargs={"num_groups": 2, "num_channels": 4}, name="affine")


# ----------------------------------------------------------------------------- normalize


def _nz_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (3, 4, 2), dtype)
    yield SampleInput((x,), name="p=2 dim=1")
    z = x.copy()
    z[0, :, 0] = 0  # divided by eps, zero gradient (float32: float16's eps underflows to 0)
    yield SampleInput((z, 1.0, -1), name="p=1 dim=-1, a zero vector")
    yield SampleInput((x[:, :, 1], float("inf"), 1), name="p=inf")


def _nz_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, 2.0, 2)), ValueError, r"dim must be in the range \[-2, 1\]")
    yield ErrorInput(SampleInput((x, "2")), TypeError, "p must be a number")
    yield ErrorInput(SampleInput((x, 2.0, 1.0)), TypeError, "dim must be an int")
    yield ErrorInput(SampleInput((x.astype(np.int64),)), TypeError, "input must be a float")


# ----------------------------------------------------------------------------- batch_norm


def _bn_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (4, 3, 2, 3), dtype, 2.0) + 1
    c = normal(rng, (3,), dtype)
    rm, rv = normal(rng, (3,), dtype), np.abs(normal(rng, (3,), dtype)) + 0.5
    yield SampleInput((x, rm, rv, c, c, True, 0.3), name="training, momentum 0.3")
    yield SampleInput((x, rm, rv, c, c), name="eval, affine")
    yield SampleInput(
        (normal(rng, (5, 3), dtype), None, None, None, c, True, 0.1, 0.5),
        name="2-D training, no running statistics, eps=0.5",
    )
    yield SampleInput((np.zeros((0, 3, 2), dtype), rm, rv), name="empty batch")


def _bn_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3, 4), np.float32)
    c = np.ones(3, np.float32)
    yield ErrorInput(SampleInput((x, None, None)), ValueError, "must be defined in evaluation")
    yield ErrorInput(
        SampleInput((x[:1, :, :1], None, None, None, None, True)),
        ValueError,
        "more than 1 value per channel",
    )
    yield ErrorInput(SampleInput((x, c[:2], c)), ValueError, "running_mean must have shape")
    yield ErrorInput(SampleInput((x, c, c, None, None, 1)), TypeError, "training must be a bool")
    yield ErrorInput(SampleInput((x, c, c, None, None, True, "m")), TypeError, "momentum must")
    yield ErrorInput(SampleInput((x[0, 0], None, None)), ValueError, "at least 2 dims")


def _bn_cell_samples(dims: int) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = normal(rng, (3, 2) + (3,) * dims, dtype) * 2 + 1
        init = {"num_features": 2, "momentum": None, "affine": dims == 2}
        yield SampleInput((x,), init_kwargs=init, name="training, cumulative average")

    samples.__name__ = f"batch_norm{dims}d_samples"
    return samples


def _bn_cell_errors(dims: int) -> Any:
    def errors() -> Iterator[ErrorInput]:
        x = np.zeros((2, 2) + (3,) * (dims + 1), np.float32)
        init = {"num_features": 2}
        yield ErrorInput(SampleInput((x,), init_kwargs=init), ValueError, "expected")

    return errors


def _norm_cell_errors(init: dict, match: str) -> Any:
    def errors() -> Iterator[ErrorInput]:
        x = np.zeros((1, 4, 4, 4), np.float32)
        yield ErrorInput(SampleInput((x,), init_kwargs=init), ValueError, match)

    return errors


def _cell(name: str, samples: Any, errors: Any, **extra: Any) -> Any:
    # float32: PyTorch's modules hold float32 parameters, which other dtypes do not mix with.
    return torch_entry(
        f"layers.{name}",
        getattr(L, name),
        f"torch.nn.{name}",
        samples,
        errors,
        is_cell=True,
        dtypes=("float32",),
        **extra,
    )


_F16_KNOWN = "1 float16 ulp: PyTorch rounds each step of its float16 batch norm, we round once"

OPS: List[Any] = [
    torch_entry(
        "layers.layer_norm",
        L.layer_norm,
        "torch.nn.functional.layer_norm",
        every_dtype_first(_ln_samples, keep=1),
        _ln_errors,
        grad_argnums=(0, 2),
        dispatch_op="layers.layer_norm",
        bench_input=bench((32, 128, 768), (768,), name="(32, 128, 768) over 768"),
        torch_opinfo=(TorchOpInfo("nn.functional.layer_norm", stride=2),),
    ),
    _cell("LayerNorm", _ln_cell_samples, _norm_cell_errors({"normalized_shape": 5}, "last dims")),
    torch_entry(
        "layers.group_norm",
        L.group_norm,
        "torch.nn.functional.group_norm",
        every_dtype_first(_gn_samples, keep=1),
        _gn_errors,
        grad_argnums=(0, 2),
        dispatch_op="layers.group_norm",
        bench_input=bench((16, 64, 32, 32), 8),
        torch_opinfo=(TorchOpInfo("nn.functional.group_norm", stride=2),),
    ),
    _cell(
        "GroupNorm",
        _gn_cell_samples,
        _norm_cell_errors({"num_groups": 3, "num_channels": 4}, "divisible by num_groups"),
    ),
    torch_entry(
        "layers.normalize",
        L.normalize,
        "torch.nn.functional.normalize",
        every_dtype_first(_nz_samples, keep=1),
        _nz_errors,
        bench_input=bench((64, 256, 64)),
        torch_opinfo=(
            TorchOpInfo(
                "nn.functional.normalize",
                stride=2,
                skip_dtypes={
                    "float16": "PyTorch's float16 vector_norm backward rounds each step to "
                    "float16 (up to 1.5 relative apart); float16 is checked by the entry"
                },
            ),
        ),
    ),
    torch_entry(
        "layers.batch_norm",
        L.batch_norm,
        "torch.nn.functional.batch_norm",
        every_dtype_first(_bn_samples, keep=1),
        _bn_errors,
        grad_argnums=(0,),
        dispatch_op="layers.batch_norm",
        tolerance_overrides=_F16_INSTANCE,
        bench_input=bench(
            (16, 64, 32, 32),
            np.zeros(64, np.float32),
            np.ones(64, np.float32),
            name="(16, 64, 32, 32) eval",
        ),
    ),
] + [_cell(f"BatchNorm{d}d", _bn_cell_samples(d), _bn_cell_errors(d)) for d in (1, 2, 3)]
