"""The table form shared by the op database entries of the ``torch.*`` functions that
``mint`` lacks on CPU (``db/math_torch_functions.py``, ``db/shape_torch_functions.py``): one
row per function, the reference converting a MindSpore ``dtype`` argument to PyTorch's."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, Tuple

import numpy as np

from mscompat.testing.db._common import torch_ref
from mscompat.testing.opinfo import OpInfo, ReferenceInput, SampleInput, TorchOpInfo
from mscompat.testing.tolerances import Tolerance, default_tolerance

__all__ = ["f32_opinfo", "row", "split_samples", "torch_dtype_ref"]

_OTHER_DTYPES = (
    "float16", "float64", "bfloat16", "int8", "int16", "int32", "int64", "uint8", "bool",
    "complex64", "complex128",
)  # fmt: skip


def f32_opinfo(name: str, stride: int = 1, also: Tuple[str, ...] = (), **extra: Any) -> TorchOpInfo:
    """PyTorch's OpInfo ``name``, its float32 samples only (every ``stride``-th; and those of
    the dtypes ``also``): the suite's time budget; the entry's reference inputs cover the other
    dtypes."""
    why = "float32 only (the suite's time budget); the entry's references cover this dtype"
    skip = {d: why for d in _OTHER_DTYPES if d not in also}
    return TorchOpInfo(name, stride=stride, skip_dtypes=skip, **extra)


def torch_dtype_ref(path: str) -> Callable[..., Any]:
    """``torch_ref(path)`` with a ``dtype=mindspore.float64`` keyword given as ``torch.float64``
    (the samples pass our dtypes)."""
    ref = torch_ref(path)

    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("dtype") is not None:
            import torch

            kwargs["dtype"] = getattr(torch, str(kwargs["dtype"]).lower())
        return ref(*args, **kwargs)

    call.__name__ = ref.__name__
    return call


def _tolerances(sample: SampleInput) -> Dict[str, Tolerance]:
    """The default tolerances of the sample's first float array's dtype (float32 if none), for
    every output and gradient label (a reference input is exact unless told)."""
    arrays = [a for a in sample.args if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    dtype = str(arrays[0].dtype) if arrays else "float32"
    out = {f"output[{i}]": default_tolerance(dtype, "forward") for i in range(4)}
    out.update({f"grad[arg {i}]": default_tolerance(dtype, "grad") for i in range(4)})
    return out


def split_samples(gen: Any) -> Tuple[Any, Any]:
    """``(sample_inputs, references)`` from one generator: each dtype's first sample is a sample
    (PyNative and graph mode, gradients), the other float32 samples (edge cases: empty, 0-d,
    NaN, other dtypes) are reference inputs checked in PyNative with gradients, at the default
    tolerances. The suite's time budget: a graph-mode case costs about a second of compilation,
    and the edge cases run the same code in both modes."""

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield next(iter(gen(dtype, rng)))

    def references() -> Iterator[ReferenceInput]:
        for sample in list(gen("float32", np.random.default_rng(0)))[1:]:
            yield ReferenceInput(sample, grad=True, tolerances=_tolerances(sample))

    samples.__name__ = gen.__name__
    return samples, references


def row(
    name: str,
    op: Any,
    samples: Any,
    errors: Any,
    dtypes: Tuple[str, ...],
    *,
    grad: Tuple[int, ...] = (0,),
    method: bool = True,
    path: str = "",
    opinfo: Tuple[TorchOpInfo, ...] = (),
    **extra: Any,
) -> OpInfo:
    """The entry ``<package>.<name>`` for ``torch.<name>`` (or ``path``), dispatched through the
    registry under the same name, a drop-in for ``torch.Tensor.<name>`` too when ``method``;
    ``samples`` split by :func:`split_samples`."""
    short = name.split(".", 1)[1]
    path = path or f"torch.{short}"
    extra.setdefault("dispatch_op", name)
    first, rest = split_samples(samples)
    apis = (path,) + ((f"torch.Tensor.{short}",) if method else ())
    return OpInfo(
        name=name,
        op=op,
        ref=torch_dtype_ref(path),
        mirrors=path,
        torch_apis=apis,
        sample_inputs=first,
        references=rest,
        error_inputs=errors,
        dtypes=dtypes,
        grad_argnums=grad,
        torch_opinfo=opinfo,
        **extra,
    )
