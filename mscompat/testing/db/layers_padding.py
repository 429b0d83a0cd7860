"""Op database entries for ``pad`` and the padding Cells (``mscompat.layers.padding``)."""

from __future__ import annotations

from typing import Any, Iterator, List

import numpy as np

from mscompat import layers as L
from mscompat.testing.db._common import bench, every_dtype_first, torch_entry
from mscompat.testing.opinfo import ErrorInput, SampleInput, TorchOpInfo

DTYPES = ("float16", "float32", "float64", "int32", "int64")


def _x(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return (rng.standard_normal(shape) * 4).astype(dtype)


def _samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x3, x4 = _x(rng, (2, 3, 5), dtype), _x(rng, (1, 2, 4, 5), dtype)
    yield SampleInput((x4, (2, -1, 1, 3), "reflect"), name="reflect 2-d, crop right")
    yield SampleInput((x4, (4, 4, 3, 3), "replicate"), name="replicate 2-d, pads >= size")
    yield SampleInput((x3, (3, -2), "circular"), name="circular 1-d, crop, pad == kept size")
    yield SampleInput((x3, (-1, 2, 0, 1, 1, 1), "constant", 7.0), name="constant 3 dims, crop")
    yield SampleInput((x3[0], (4, 4), "reflect"), name="reflect unbatched 1-d, pad = L - 1")
    x5 = _x(rng, (1, 1, 3, 3, 4), dtype)
    yield SampleInput((x5, (1, 2, 2, 1, -1, 2), "circular"), name="circular 3-d, negatives")
    yield SampleInput((np.zeros((0, 2, 3), dtype), (1, 1), "constant", 1.0), name="empty batch")
    yield SampleInput((x3, (-2, -3)), name="crop to size 0")


def _errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3, 4), np.float32)
    yield ErrorInput(SampleInput((x, (1, 1, 1))), ValueError, "must be divisible by 2")
    yield ErrorInput(SampleInput((x, (1,) * 8)), ValueError, "less than or equal to two times")
    yield ErrorInput(SampleInput((x, (1, 1), "foo")), ValueError, "mode must be one of")
    yield ErrorInput(SampleInput((x, (4, 0), "reflect")), ValueError, "Padding size should be")
    yield ErrorInput(SampleInput((x, (5, 0), "circular")), ValueError, "wrapping around more")
    yield ErrorInput(SampleInput((x, (3, -2), "circular")), ValueError, "wrapping around more")
    yield ErrorInput(SampleInput((x, (1,) * 6, "reflect")), ValueError, "pads the last 1, 2 or 3")
    yield ErrorInput(SampleInput((x, (1, 1), "reflect", 2.0)), ValueError, "doesn't take in value")
    yield ErrorInput(SampleInput((x, (-3, -2))), ValueError, "which is negative")
    yield ErrorInput(SampleInput((x, (1.5, 1))), TypeError, "pad must be a tuple of ints")
    yield ErrorInput(SampleInput((x, (1, 1), "constant", "a")), TypeError, "value must be a number")
    yield ErrorInput(SampleInput(([1.0], (1, 1))), TypeError, "input must be a mindspore")


def _cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    """Every Cell once (their construct is one call to pad with the class's mode)."""
    for n in (1, 2, 3):
        x = _x(rng, (1, 2) + (4, 3, 3)[:n], dtype)
        pads = (1, 2, 0, 1, 2, 1)[: 2 * n]
        for cls, extra in (
            ("Zero", {}),
            ("Constant", {"value": -2.5}),
            ("Reflection", {}),
            ("Replication", {}),
            ("Circular", {}),
        ):
            init = {"padding": pads if n != 2 else 1, **extra}
            yield SampleInput((x,), init_kwargs=init, name=f"{cls}Pad{n}d")


_CELLS = [
    f"{k}Pad{n}d"
    for k in ("Zero", "Constant", "Reflection", "Replication", "Circular")
    for n in (1, 2, 3)
]


def _cell_entry(cls: str) -> Any:
    n = int(cls[-2])
    kind = cls[: -len("Pad1d")]

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for s in _cell_samples(dtype, rng):
            if s.name == cls:
                yield s

    def errors() -> Iterator[ErrorInput]:
        init: dict = {"padding": 1, **({"value": 1.0} if kind == "Constant" else {})}
        if cls == "CircularPad1d":  # the other Cells' checks are pad's
            x = np.zeros((2,) * (n + 3), np.float32)
            yield ErrorInput(SampleInput((x,), init_kwargs=init), ValueError, "expected")
        else:
            x = np.zeros((1, 2) + (1,) * n, np.float32)
            err = (ValueError, "Padding size should be") if kind == "Reflection" else None
            if err:
                yield ErrorInput(SampleInput((x,), init_kwargs=init), err[0], err[1])
        bad = {**init, "padding": (1,) * (2 * n + 1)}  # a tuple of the wrong length
        x = np.zeros((1, 2) + (3,) * n, np.float32)
        yield ErrorInput(SampleInput((x,), init_kwargs=bad), TypeError, "padding must be an int")

    samples.__name__ = f"{cls}_samples"
    return torch_entry(
        f"layers.{cls}",
        getattr(L, cls),
        f"torch.nn.{cls}",
        samples,
        errors,
        is_cell=True,
        dtypes=("float32",),
    )


OPS: List[Any] = [
    torch_entry(
        "layers.pad",
        L.pad,
        "torch.nn.functional.pad",
        every_dtype_first(_samples, keep=2),
        _errors,
        dtypes=DTYPES,
        dispatch_op="layers.pad",
        bench_input=bench((8, 32, 64, 64), (1, 1, 1, 1), "reflect", name="(8, 32, 64, 64) reflect"),
        torch_opinfo=tuple(
            TorchOpInfo(f"nn.functional.pad.{v}", stride=3)
            for v in ("constant", "reflect", "replicate", "replicate_negative", "circular")
        ),
    ),
] + [_cell_entry(c) for c in _CELLS]
