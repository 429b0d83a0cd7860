"""Op database entry for ``einsum`` (``mscompat.math.einsum``)."""

from __future__ import annotations

from typing import Any, Iterator, List

import numpy as np

from mscompat.math import einsum
from mscompat.testing.db._common import normal, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, TorchOpInfo

DTYPES = ("float16", "float32", "float64", "int32", "int64")

#: (equation, operand shapes): matmul, attention, diagonals, ellipsis broadcasting, summed-out
#: labels, three operands, a size-1 label broadcast, 0-d and empty operands.
_CASES = (
    ("bhqd,bhkd->bhqk", ((2, 3, 4, 5), (2, 3, 6, 5))),
    ("ij,jk->ik", ((3, 4), (4, 5))),
    ("ii->i", ((4, 4),)),
    ("ii", ((4, 4),)),
    ("iji->j", ((3, 2, 3),)),
    ("...ij,...jk", ((2, 1, 3, 4), (5, 4, 2))),
    ("bij,bjk->bik", ((1, 3, 4), (5, 4, 2))),
    ("ab,bc,cd->ad", ((2, 3), (3, 4), (4, 5))),
    ("ij,jk", ((2, 1), (3, 4))),
    ("ij,ij->ij", ((2, 3), (2, 3))),
    ("ba,ca->bc", ((3, 4), (5, 4))),
    ("Ba,aC", ((2, 3), (3, 4))),
    (",->", ((), ())),
    ("i,ij->j", ((0,), (0, 3))),
    ("bn,anm,bm->ba", ((2, 3), (4, 3, 5), (2, 5))),
)


def _values(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    if dtype.startswith("int"):
        return np.asarray(rng.integers(-4, 5, shape), dtype)
    return np.asarray(normal(rng, shape, dtype))


def _samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    for i, (eq, shapes) in enumerate(_CASES):
        if dtype != "float32" and i > 2:
            continue
        ops_ = [_values(rng, s, dtype) for s in shapes]
        yield SampleInput((eq, *ops_), name=f"{eq!r} {shapes}")
    if dtype == "float32":
        x = normal(rng, (5, 4), dtype)
        yield SampleInput(("ij,jk->ik", x.T, x), name="non-contiguous (transposed view)")


def _errors() -> Iterator[ErrorInput]:
    a = np.zeros((2, 3), np.float32)
    b = np.zeros((3, 4), np.float32)
    yield ErrorInput(SampleInput(("ij,jk->ik", a)), ValueError, "1 operand")
    yield ErrorInput(SampleInput(("ijk,jk->ik", a, b)), ValueError, "number of dimensions")
    yield ErrorInput(SampleInput(("i1,jk->ik", a, b)), ValueError, "invalid subscript")
    yield ErrorInput(SampleInput(("ij,jk->iz", a, b)), ValueError, "output subscript z")
    yield ErrorInput(SampleInput(("ij,jk->ii", a, b)), ValueError, "more than once")
    yield ErrorInput(SampleInput(("ij,ik->jk", a, b)), ValueError, "do not broadcast")
    yield ErrorInput(SampleInput(("ii->i", a)), ValueError, "sizes don't match")
    yield ErrorInput(SampleInput(("......i->i", a)), ValueError, "more than one ellipsis")
    yield ErrorInput(SampleInput((3, a)), TypeError, "equation must be a str")
    yield ErrorInput(SampleInput(("ij->i", [1.0])), TypeError, "operands")
    yield ErrorInput(SampleInput(("ij,jk", a, b.astype(np.float64))), TypeError, "one dtype")


def _bench() -> SampleInput:
    rng = np.random.default_rng(0)
    q = rng.standard_normal((8, 8, 512, 64)).astype(np.float32)
    k = rng.standard_normal((8, 8, 512, 64)).astype(np.float32)
    return SampleInput(("bhqd,bhkd->bhqk", q, k), name="attention B=8 H=8 L=S=512 D=64 float32")


def torch_einsum_adapter(tensors: Any, equation: str) -> Any:
    """PyTorch's OpInfo calls ``op(tensors, equation)``."""
    return einsum(equation, tensors)


OPS: List[OpInfo] = [
    OpInfo(
        name="math.einsum",
        op=einsum,
        ref=torch_ref("torch.einsum"),
        mirrors="torch.einsum",
        torch_apis=("torch.einsum",),
        sample_inputs=_samples,
        error_inputs=_errors,
        dtypes=DTYPES,
        grad_argnums=(1, 2, 3),
        dispatch_op="math.einsum",
        bench_input=_bench,
        torch_opinfo=(TorchOpInfo("einsum", adapter=torch_einsum_adapter),),
    )
]
