"""Helpers shared by the op database modules: the lazy PyTorch reference and seeded inputs."""

from __future__ import annotations

import importlib
import warnings
from typing import Any, Callable, Iterator, Tuple

import numpy as np

from mscompat.testing.opinfo import OpInfo, SampleInput

__all__ = ["bench", "every_dtype_first", "normal", "torch_entry", "torch_ref"]


def torch_ref(path: str) -> Callable[..., Any]:
    """The reference ``path``, imported when first called (the op database is importable
    without loading PyTorch): ``"torch.nn.functional.unfold"``, ``"torch.nn.Unfold"`` (a Cell
    entry's ``ref``: called with the ``init_kwargs``, it builds the module), or
    ``"module:attribute"`` (``"mscompat.testing.references.mmdet:reduce_loss"``). PyTorch's
    warnings (deprecated ``upsample*``, ``grid_sample``'s ``align_corners``) are silenced."""
    module, _, attrs = path.partition(":") if ":" in path else path.partition(".")

    def call(*args: Any, **kwargs: Any) -> Any:
        obj: Any = importlib.import_module(module)
        for part in attrs.split("."):
            obj = getattr(obj, part)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return obj(*args, **kwargs)

    call.__name__ = attrs.rpartition(".")[2]
    return call


def normal(
    rng: np.random.Generator, shape: Tuple[int, ...], dtype: str, scale: float = 1.0
) -> np.ndarray:
    """Standard normal values (times ``scale``) in ``dtype``."""
    return (rng.standard_normal(shape) * scale).astype(dtype)


def every_dtype_first(gen: Any, keep: int = 1) -> Any:
    """All of ``gen``'s samples in float32, the first ``keep`` in the other dtypes (the suite's
    time budget where the code does not depend on the dtype)."""

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        for i, sample in enumerate(gen(dtype, rng)):
            if dtype == "float32" or i < keep:
                yield sample

    samples.__name__ = gen.__name__
    return samples


def bench(
    shape: Tuple[int, ...], *extra: Any, name: str = "", init: bool = False, **kwargs: Any
) -> Callable[[], SampleInput]:
    """``bench_input``: one seeded float32 input of ``shape`` then ``extra`` positional
    arguments and ``kwargs`` (constructor arguments of a Cell entry when ``init``)."""

    def make() -> SampleInput:
        x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        label = name or f"{shape} float32"
        if init:
            return SampleInput((x, *extra), init_kwargs=kwargs, name=label)
        return SampleInput((x, *extra), kwargs, name=label)

    return make


def torch_entry(name: str, op: Any, path: str, samples: Any, errors: Any, **extra: Any) -> OpInfo:
    """The entry ``name`` of ``op`` mirroring ``path`` (``"torch.nn.functional.fold"``, or a
    module class ``"torch.nn.Fold"`` with ``is_cell=True``): the lazy reference, and
    ``torch_apis=(path,)`` unless given."""
    extra.setdefault("torch_apis", (path,))
    return OpInfo(
        name=name,
        op=op,
        ref=torch_ref(path),
        mirrors=path,
        sample_inputs=samples,
        error_inputs=errors,
        **extra,
    )
