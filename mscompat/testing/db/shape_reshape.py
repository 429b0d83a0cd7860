"""Op database entries for the reshape equivalents of ``mscompat.shape``
(``mscompat.shape.reshape``)."""

from __future__ import annotations

from typing import Any, Iterator, List, Tuple

import numpy as np

from mscompat.shape import Flatten, Unflatten, flatten, squeeze, unflatten, unsqueeze
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput

DTYPES = ("float16", "float32", "float64", "int32", "int64")


def _x(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return (rng.standard_normal(shape) * 4).astype(dtype)


def _float32_only(gen: Any, keep: int = 1) -> Any:
    """All samples in float32, the first ``keep`` in the other dtypes (reshape does not depend
    on the dtype; the suite's time budget)."""

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for i, sample in enumerate(gen(dtype, rng)):
            if dtype == "float32" or i < keep:
                yield sample

    samples.__name__ = gen.__name__
    return samples


def squeeze_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (2, 1, 3, 1), dtype)
    yield SampleInput((x,), name="all size-1 dims")
    yield SampleInput((x, 1), name="dim 1")
    yield SampleInput((x, -1), name="dim -1")
    yield SampleInput((x, 0), name="dim 0 (size 2: unchanged)")
    yield SampleInput((x, (0, 1, -1)), name="tuple dims")
    yield SampleInput((_x(rng, (1, 1), dtype),), name="all ones -> 0-d")
    yield SampleInput((np.array(1.5, dtype),), name="0-d")
    yield SampleInput((np.array(1.5, dtype), 0), name="0-d dim 0")
    yield SampleInput((np.zeros((0, 1, 2), dtype), 1), name="empty")
    yield SampleInput((_x(rng, (3, 1, 2), dtype).transpose(2, 1, 0),), name="transposed input")


def _dim_errors(extra: Any = ()) -> Iterator[ErrorInput]:
    x = np.ones((2, 1, 3), np.float32)
    yield ErrorInput(SampleInput(([1.0], 0, *extra)), TypeError, r"input must be a")
    yield ErrorInput(SampleInput((x, 5, *extra)), ValueError, r"dim must be in the range")
    yield ErrorInput(SampleInput((x, 1.0, *extra)), TypeError, r"dim must be an int")


def squeeze_errors() -> Iterator[ErrorInput]:
    yield from _dim_errors()
    x = np.ones((2, 1, 3), np.float32)
    yield ErrorInput(SampleInput((x, (1, -2))), ValueError, r"dim must not repeat")
    yield ErrorInput(SampleInput((x, -4)), ValueError, r"dim must be in the range \[-3, 2\]")


def unsqueeze_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (2, 3), dtype)
    yield SampleInput((x, 0), name="dim 0")
    yield SampleInput((x, 2), name="dim n")
    yield SampleInput((x, -1), name="dim -1")
    yield SampleInput((x, -3), name="dim -n-1")
    yield SampleInput((np.array(2.0, dtype), 0), name="0-d")
    yield SampleInput((np.zeros((0, 2), dtype), 1), name="empty")


def unsqueeze_errors() -> Iterator[ErrorInput]:
    yield from _dim_errors()
    x = np.ones((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, -4)), ValueError, r"dim must be in the range \[-3, 2\]")


def flatten_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (2, 3, 4, 2), dtype)
    yield SampleInput((x,), name="all")
    yield SampleInput((x, 1), name="start 1")
    yield SampleInput((x, 1, 2), name="1..2")
    yield SampleInput((x, -3, -2), name="negative dims")
    yield SampleInput((x, 2, 2), name="start == end")
    yield SampleInput((np.array(3.0, dtype),), name="0-d -> (1,)")
    yield SampleInput((np.zeros((2, 0, 3), dtype), 1), name="empty")
    yield SampleInput((_x(rng, (4, 3), dtype).T,), name="transposed input")


def flatten_errors() -> Iterator[ErrorInput]:
    x = np.ones((2, 3, 4), np.float32)
    yield ErrorInput(SampleInput(([1.0],)), TypeError, r"input must be a")
    yield ErrorInput(SampleInput((x, 2, 1)), ValueError, r"start_dim cannot come after end_dim")
    yield ErrorInput(SampleInput((x, 3)), ValueError, r"start_dim must be in the range \[-3, 2\]")
    yield ErrorInput(SampleInput((x, 0, -4)), ValueError, r"end_dim must be in the range")
    yield ErrorInput(SampleInput((x, 0.0)), TypeError, r"start_dim must be an int")
    yield ErrorInput(
        SampleInput((np.array(1.0, np.float32), 0, 1)), ValueError, r"end_dim must be in the range"
    )


def unflatten_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (2, 12, 3), dtype)
    yield SampleInput((x, 1, (3, 4)), name="dim 1")
    yield SampleInput((x, -2, (2, -1, 3)), name="-1 inferred")
    yield SampleInput((x, 0, [1, 2]), name="list sizes")
    yield SampleInput((x, 2, (3,)), name="single size")
    yield SampleInput((np.zeros((2, 0), dtype), 1, (0, 5)), name="empty")


def unflatten_errors() -> Iterator[ErrorInput]:
    yield from _dim_errors(((3,),))
    x = np.ones((2, 12), np.float32)
    yield ErrorInput(SampleInput((x, 1, (5, 2))), ValueError, r"must multiply to")
    yield ErrorInput(SampleInput((x, 1, (-1, -1))), ValueError, r"at most one -1")
    yield ErrorInput(SampleInput((x, 1, (5, -1))), ValueError, r"cannot be inferred")
    yield ErrorInput(SampleInput((x, 1, ())), ValueError, r"sizes must be non-empty")
    yield ErrorInput(SampleInput((x, 1, 12)), TypeError, r"sizes must be a tuple or list")
    yield ErrorInput(
        SampleInput((np.array(1.0, np.float32), 0, (1,))), ValueError, r"at least one dim"
    )


def flatten_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (2, 3, 4), dtype)
    yield SampleInput((x,), name="defaults (start 1)")
    yield SampleInput((x,), init_kwargs={"start_dim": 0, "end_dim": 1}, name="0..1")
    yield SampleInput((x,), init_kwargs={"start_dim": -2}, name="start -2")


def flatten_cell_errors() -> Iterator[ErrorInput]:
    x = np.ones((2, 3), np.float32)
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"start_dim": 2}), ValueError, r"start_dim must be in"
    )
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"start_dim": "1"}), TypeError, r"start_dim must be an int"
    )


def unflatten_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _x(rng, (2, 12), dtype)
    yield SampleInput((x,), init_kwargs={"dim": 1, "unflattened_size": (3, 4)}, name="dim 1")
    yield SampleInput((x,), init_kwargs={"dim": -1, "unflattened_size": (2, -1)}, name="-1")


def unflatten_cell_errors() -> Iterator[ErrorInput]:
    x = np.ones((2, 12), np.float32)
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"dim": 1, "unflattened_size": (5, 2)}),
        ValueError,
        r"unflattened_size=\(5, 2\) must multiply to",
    )
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"dim": 1, "unflattened_size": 12}),
        TypeError,
        r"unflattened_size must be a tuple or list",
    )


def _squeeze_ref(input: Any, dim: Any = None) -> Any:
    import torch

    return torch.squeeze(input) if dim is None else torch.squeeze(input, dim)


def _ref(name: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        import torch

        return getattr(torch, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _module(name: str) -> Any:
    def make(**kwargs: Any) -> Any:
        import torch

        return getattr(torch.nn, name)(**kwargs)

    make.__name__ = name
    return make


def _bench(*extra: Any, shape: Tuple[int, ...] = (8, 32, 64, 64)) -> Any:
    def make() -> SampleInput:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        return SampleInput((x, *extra), name=f"{shape} float32")

    return make


OPS: List[OpInfo] = [
    OpInfo(
        name="shape.squeeze",
        op=squeeze,
        ref=_squeeze_ref,
        mirrors="torch.squeeze",
        torch_apis=("torch.squeeze", "torch.Tensor.squeeze"),
        sample_inputs=_float32_only(squeeze_samples),
        error_inputs=squeeze_errors,
        dtypes=DTYPES,
        # A size-1 dim to remove: squeezing nothing returns the input itself, no kernel.
        bench_input=_bench(shape=(8, 32, 1, 64, 64)),
    ),
    OpInfo(
        name="shape.unsqueeze",
        op=unsqueeze,
        ref=_ref("unsqueeze"),
        mirrors="torch.unsqueeze",
        torch_apis=("torch.unsqueeze", "torch.Tensor.unsqueeze"),
        sample_inputs=_float32_only(unsqueeze_samples),
        error_inputs=unsqueeze_errors,
        dtypes=DTYPES,
        bench_input=_bench(1),
    ),
    OpInfo(
        name="shape.flatten",
        op=flatten,
        ref=_ref("flatten"),
        mirrors="torch.flatten",
        torch_apis=("torch.flatten", "torch.Tensor.flatten"),
        sample_inputs=_float32_only(flatten_samples),
        error_inputs=flatten_errors,
        dtypes=DTYPES,
        bench_input=_bench(1),
    ),
    OpInfo(
        name="shape.unflatten",
        op=unflatten,
        ref=_ref("unflatten"),
        mirrors="torch.unflatten",
        torch_apis=("torch.unflatten", "torch.Tensor.unflatten"),
        sample_inputs=_float32_only(unflatten_samples),
        error_inputs=unflatten_errors,
        dtypes=DTYPES,
        bench_input=_bench(1, (4, 8)),
    ),
    OpInfo(
        name="shape.Flatten",
        op=Flatten,
        ref=_module("Flatten"),
        mirrors="torch.nn.Flatten",
        torch_apis=("torch.nn.Flatten",),
        sample_inputs=_float32_only(flatten_cell_samples),
        error_inputs=flatten_cell_errors,
        dtypes=DTYPES,
        is_cell=True,
    ),
    OpInfo(
        name="shape.Unflatten",
        op=Unflatten,
        ref=_module("Unflatten"),
        mirrors="torch.nn.Unflatten",
        torch_apis=("torch.nn.Unflatten",),
        sample_inputs=_float32_only(unflatten_cell_samples),
        error_inputs=unflatten_cell_errors,
        dtypes=DTYPES,
        is_cell=True,
    ),
]
