"""Op database entries for ``roll`` (``mscompat.shape.roll``), ``one_hot`` and
``take_along_dim`` (``mscompat.indexing.gather``)."""

from __future__ import annotations

from typing import Iterator, List

import numpy as np

from mscompat.indexing import one_hot, take_along_dim
from mscompat.shape import roll
from mscompat.testing.db._common import bench, every_dtype_first, normal, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, TorchOpInfo

DTYPES = ("float16", "float32", "float64", "int32", "int64")


def _values(rng: np.random.Generator, shape: tuple, dtype: str) -> np.ndarray:
    if dtype.startswith("float"):
        return normal(rng, shape, dtype)
    return rng.integers(-9, 9, shape).astype(dtype)


def _roll_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _values(rng, (3, 4, 5), dtype)
    yield SampleInput((x, 2, 1), name="one dim")
    yield SampleInput((x, (1, -7, 13), (0, 2, -1)), name="several dims, repeated, wrapped")
    yield SampleInput((x, -3), name="no dims: flattened")
    yield SampleInput((x.transpose(2, 0, 1), (2, 1), (0, 1)), name="non-contiguous")
    yield SampleInput((np.asarray(1.5, dtype), 3), name="0-d")
    yield SampleInput((np.zeros((0, 3), dtype), 1, 1), name="empty")


def _roll_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, (1, 2))), ValueError, "single int when dims is None")
    yield ErrorInput(SampleInput((x, (1, 2), 0)), ValueError, "same length")
    yield ErrorInput(SampleInput((x, 1, 2)), ValueError, "dims must be in the range")
    yield ErrorInput(SampleInput((x, 1.5, 0)), TypeError, "shifts must be an int")


def _one_hot_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((rng.integers(0, 5, (3, 4)).astype(dtype), 6), name="(3, 4), 6 classes")
    yield SampleInput((rng.integers(0, 5, (7,)).astype(dtype),), name="num_classes=-1")
    yield SampleInput((np.asarray(2, dtype), 3), name="0-d")
    yield SampleInput((np.zeros((0, 2), dtype), 4), name="empty")


def _one_hot_errors() -> Iterator[ErrorInput]:
    x = np.array([0, 3], np.int64)
    yield ErrorInput(SampleInput((x, 3)), ValueError, r"class values must be in \[0, num")
    yield ErrorInput(SampleInput((np.array([-1, 0]), 3)), ValueError, "class values")
    yield ErrorInput(SampleInput((x.astype(np.float32), 3)), TypeError, "integer Tensor")
    yield ErrorInput(SampleInput((x, -2)), ValueError, "num_classes must be -1")
    yield ErrorInput(SampleInput((np.zeros(0, np.int64),)), ValueError, "non-empty")


def _take_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _values(rng, (3, 5), dtype)
    yield SampleInput((x, rng.integers(0, 5, (3, 2)), 1), name="dim 1")
    yield SampleInput((x, rng.integers(0, 3, (4, 1)), 0), name="dim 0, broadcast indices")
    yield SampleInput((x, rng.integers(0, 5, (1, 3)), -1), name="broadcast input rows")
    yield SampleInput((x, rng.integers(0, 15, (6,))), name="no dim: flattened")
    yield SampleInput((x, np.zeros((3, 0), np.int64), 1), name="empty indices")


def _take_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, np.zeros((2,), np.int64), 1)), ValueError, "same number")
    yield ErrorInput(SampleInput((x, np.zeros((3, 1), np.int64), 1)), ValueError, "broadcast")
    yield ErrorInput(SampleInput((x, np.zeros((2, 1), np.float32), 1)), TypeError, "integer")
    yield ErrorInput(SampleInput((x, np.zeros((2, 1), np.int64), 2)), ValueError, "dim must be")


OPS: List[OpInfo] = [
    OpInfo(
        name="shape.roll",
        op=roll,
        ref=torch_ref("torch.roll"),
        mirrors="torch.roll",
        torch_apis=("torch.roll", "torch.Tensor.roll"),
        sample_inputs=every_dtype_first(_roll_samples, keep=2),
        error_inputs=_roll_errors,
        dtypes=DTYPES,
        dispatch_op="shape.roll",
        bench_input=bench((1000, 1000), (3, -5), (0, 1)),
        torch_opinfo=(TorchOpInfo("roll", stride=2),),
    ),
    OpInfo(
        name="indexing.one_hot",
        op=one_hot,
        ref=torch_ref("torch.nn.functional.one_hot"),
        mirrors="torch.nn.functional.one_hot",
        torch_apis=("torch.nn.functional.one_hot",),
        sample_inputs=_one_hot_samples,
        error_inputs=_one_hot_errors,
        dtypes=("int64",),  # PyTorch's takes int64 only (ours takes every integer dtype)
        grad_argnums=(),
        supports_graph=False,  # num_classes=-1 reads the data; the graph-mode form is below
        dispatch_op="indexing.one_hot",
        torch_opinfo=(TorchOpInfo("nn.functional.one_hot"),),
    ),
    OpInfo(
        name="indexing.one_hot",
        variant="graph",
        op=one_hot,
        ref=torch_ref("torch.nn.functional.one_hot"),
        mirrors="torch.nn.functional.one_hot with num_classes",
        sample_inputs=lambda dtype, rng: (
            s for s in _one_hot_samples(dtype, rng) if len(s.args) == 2
        ),
        error_inputs=lambda: (e for e in _one_hot_errors() if len(e.sample.args) == 2),
        dtypes=("int64",),
        grad_argnums=(),
    ),
    OpInfo(
        name="indexing.take_along_dim",
        op=take_along_dim,
        ref=torch_ref("torch.take_along_dim"),
        mirrors="torch.take_along_dim",
        torch_apis=("torch.take_along_dim", "torch.Tensor.take_along_dim"),
        sample_inputs=every_dtype_first(_take_samples, keep=2),
        error_inputs=_take_errors,
        dtypes=DTYPES,
        dispatch_op="indexing.take_along_dim",
        torch_opinfo=(TorchOpInfo("take_along_dim", stride=2),),
    ),
]
