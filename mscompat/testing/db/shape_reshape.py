"""Op database entries for the reshape equivalents of ``mscompat.shape``
(``mscompat.shape.reshape``)."""

from __future__ import annotations

from typing import Any, Iterator, List, Tuple

import numpy as np

from mscompat.shape import Flatten, Unflatten, flatten, squeeze, unflatten, unsqueeze
from mscompat.testing.db._common import bench, every_dtype_first, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, TorchOpInfo

DTYPES = ("float16", "float32", "float64", "int32", "int64")


def _x(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return (rng.standard_normal(shape) * 4).astype(dtype)


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
    yield ErrorInput(
        SampleInput((x, 0, (5, 2))), ValueError, r"must multiply to input.shape\[dim=0\]"
    )
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


_IMAGE = (8, 32, 64, 64)

#: op, samples, errors, bench input (None for a Cell), PyTorch OpInfos
_FAMILY: Tuple[Tuple[Any, Any, Any, Any, Tuple[str, ...]], ...] = (
    # A size-1 dim to remove: squeezing nothing returns the input itself, no kernel.
    (squeeze, squeeze_samples, squeeze_errors, bench((8, 32, 1, 64, 64)), ("squeeze",)),
    (unsqueeze, unsqueeze_samples, unsqueeze_errors, bench(_IMAGE, 1), ("unsqueeze",)),
    (flatten, flatten_samples, flatten_errors, bench(_IMAGE, 1), ("flatten",)),
    (unflatten, unflatten_samples, unflatten_errors, bench(_IMAGE, 1, (4, 8)), ("unflatten",)),
    (Flatten, flatten_cell_samples, flatten_cell_errors, None, ()),
    (Unflatten, unflatten_cell_samples, unflatten_cell_errors, None, ()),
)

#: PyTorch's OpInfo variants and ``*_copy`` ops of the same function
_MORE_OPINFOS = {"squeeze": ("squeeze.multiple", "squeeze_copy"), "unsqueeze": ("unsqueeze_copy",)}


def _entry(op: Any, samples: Any, errors: Any, bench_input: Any, opinfos: Any) -> OpInfo:
    name = op.__name__
    cell = bench_input is None
    path = f"torch.nn.{name}" if cell else f"torch.{name}"
    return OpInfo(
        name=f"shape.{name}",
        op=op,
        ref=_squeeze_ref if op is squeeze else torch_ref(path),
        mirrors=path,
        torch_apis=(path,) if cell else (path, f"torch.Tensor.{name}"),
        sample_inputs=every_dtype_first(samples),
        error_inputs=errors,
        dtypes=DTYPES,
        is_cell=cell,
        bench_input=bench_input,
        torch_opinfo=tuple(TorchOpInfo(o) for o in opinfos + _MORE_OPINFOS.get(name, ())),
    )


OPS: List[OpInfo] = [_entry(*row) for row in _FAMILY]
