"""Op database entries for adaptive pooling, max pooling with indices and max unpooling."""

from __future__ import annotations

from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np

from mscompat import shape as S
from mscompat.testing.db._common import torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, ReferenceInput, SampleInput, TorchOpInfo
from mscompat.testing.tolerances import Tolerance


def _x(rng: np.random.Generator, shape: Tuple[int, ...], dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


def _ties(rng: np.random.Generator, shape: Tuple[int, ...], dtype: str) -> np.ndarray:
    """Few distinct values: many ties inside every window."""
    return rng.integers(-2, 3, size=shape).astype(dtype)


def _with_nan(rng: np.random.Generator, shape: Tuple[int, ...], dtype: str) -> np.ndarray:
    x = _ties(rng, shape, dtype)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, size=max(2, flat.size // 7), replace=False)] = np.nan
    return x


def _spatial(n: int, sizes: Tuple[int, ...]) -> Tuple[int, ...]:
    return sizes[:n]


# ----------------------------------------------------------------------------- adaptive


def _adaptive_samples(n: int, is_max: bool) -> Callable[[str, np.random.Generator], Any]:
    """Edge cases on 2-d (the code is shared by 1-d/2-d/3-d); 1-d/3-d get the main ones.

    Few samples on purpose: each costs two graph compilations (forward and gradient).
    """

    def gen(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        sp = _spatial(n, (11, 9, 7))
        kw = {"return_indices": True} if is_max else {}
        odd = (5, 4, 3)[:n]
        up = (13, 10, 8)[:n]
        if dtype != "float32":
            yield SampleInput((_ties(rng, (2, 2) + sp, dtype), odd), kw, name="non-divisible")
            return
        main = _with_nan(rng, (2, 3) + sp, dtype) if is_max else _x(rng, (2, 3) + sp, dtype)
        yield SampleInput((main, odd), kw, name="non-divisible" + (", NaN, ties" if is_max else ""))
        if n != 2:
            return
        yield SampleInput((_x(rng, (0, 2) + sp, dtype), odd), kw, name="empty batch")
        yield SampleInput(
            (_ties(rng, (3,) + sp, dtype), (None, up[1])), kw, name="unbatched, None, out > in"
        )
        yield SampleInput((_ties(rng, (2, 3) + sp, dtype), 1), kw, name="size 1 (reduce), ties")

    return gen


def _adaptive_errors(n: int, is_max: bool) -> Callable[[], Any]:
    def gen() -> Iterator[ErrorInput]:
        sp = _spatial(n, (6, 5, 4))
        x = np.ones((2, 3) + sp, np.float32)
        yield ErrorInput(SampleInput((x, -1)), ValueError, r"output_size must be >= 0")
        yield ErrorInput(SampleInput((x, (2,) * (n + 1))), ValueError, r"must have \d elements")
        yield ErrorInput(SampleInput((x, "2")), TypeError, r"output_size must be an int")
        yield ErrorInput(
            SampleInput((x, 10**9)), ValueError, r"output_size=1000000000 gives the output of"
        )
        if n == 1:  # PyTorch's 1-d adaptive pooling takes no None
            yield ErrorInput(SampleInput((x, (None,))), TypeError, r"a tuple of 1 int, but got")
        if n != 2:
            return
        yield ErrorInput(SampleInput((x, 2.5)), TypeError, r"output_size must be an int")
        yield ErrorInput(SampleInput((x[0, 0], 2)), ValueError, r"Expected \dD or \dD")
        yield ErrorInput(SampleInput((x[None], 2)), ValueError, r"Expected \dD or \dD")
        yield ErrorInput(SampleInput((x.astype(np.int32), 2)), TypeError, r"floating-point")
        yield ErrorInput(SampleInput(([1.0, 2.0], 2)), TypeError, r"input must be a mindspore")
        yield ErrorInput(SampleInput((x[:, :0], 2)), ValueError, r"non-zero size")
        if is_max:
            yield ErrorInput(SampleInput((x, 2, 1)), TypeError, r"return_indices must be a bool")

    return gen


def _adaptive_bench(n: int, is_max: bool) -> Callable[[], SampleInput]:
    def gen() -> SampleInput:
        rng = np.random.default_rng(0)
        shape = {1: (64, 64, 256), 2: (8, 32, 64, 64), 3: (4, 16, 16, 32, 32)}[n]
        out = {1: (7,), 2: (7, 7), 3: (3, 5, 7)}[n]
        kw = {"return_indices": True} if is_max else {}
        return SampleInput((_x(rng, shape, "float32"), out), kw, name="1e6 elements")

    return gen


def _adaptive_cell_samples(n: int, is_max: bool) -> Callable[[str, np.random.Generator], Any]:
    def gen(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        sp = _spatial(n, (7, 6, 5))
        init: dict = {"output_size": (3, 4, 2)[:n]}
        if is_max:
            init["return_indices"] = True
        yield SampleInput((_ties(rng, (3,) + sp, dtype),), init_kwargs=init, name="unbatched ties")

    return gen


def _cell_errors(n: int, init: dict) -> Callable[[], Any]:
    def gen() -> Iterator[ErrorInput]:
        x = np.ones((2, 3) + _spatial(n, (6, 5, 4)), np.float32)
        yield ErrorInput(SampleInput((x[None],), init_kwargs=init), ValueError, r"Expected")
        bad = x.astype(np.bool_) if "kernel_size" in init else x.astype(np.int32)
        yield ErrorInput(SampleInput((bad,), init_kwargs=init), TypeError, r"floating-point")

    return gen


# ----------------------------------------------------------------------------- max pooling


def _max_pool_samples(n: int) -> Callable[[str, np.random.Generator], Any]:
    """Edge cases on 2-d (the code is shared by 1-d/2-d/3-d); 1-d/3-d get the main ones."""

    def gen(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        sp = _spatial(n, (11, 9, 7))
        ri = {"return_indices": True}
        if dtype != "float32":
            yield SampleInput((_ties(rng, (2, 2) + sp, dtype), 3, 2, 1), ri, name="k3 s2 p1 ties")
            return
        yield SampleInput(
            (_with_nan(rng, (2, 2) + sp, dtype), 3, 2, 1),
            {"return_indices": True, "ceil_mode": True},
            name="k3 s2 p1 ceil, ties, NaN",
        )
        if n != 2:
            return
        yield SampleInput((_x(rng, (0, 2) + sp, dtype), 2), ri, name="empty batch")
        yield SampleInput(
            (_ties(rng, (3,) + sp, dtype), (3, 2), (2, 1), (1, 0)),
            {"dilation": (1, 2), "return_indices": True},
            name="unbatched, overlapping, dilation",
        )
        yield SampleInput(
            (_x(rng, (1, 2, 5, 5), dtype), 2, 2, 1),
            {"ceil_mode": True, "return_indices": True},
            name="ceil drops the window starting in the padding",
        )
        yield SampleInput((np.full((1, 2) + sp, -np.inf, dtype), 3, 2, 1), name="all -inf, padding")

    return gen


def _max_pool_errors(n: int) -> Callable[[], Any]:
    def gen() -> Iterator[ErrorInput]:
        sp = _spatial(n, (6, 5, 4))
        x = np.ones((2, 3) + sp, np.float32)
        yield ErrorInput(SampleInput((x, 2, 2, 2)), ValueError, r"at most half of kernel size")
        yield ErrorInput(SampleInput((x, 0)), ValueError, r"kernel_size must be greater than")
        yield ErrorInput(SampleInput((x, 2, 0)), ValueError, r"stride must be greater than zero")
        yield ErrorInput(
            SampleInput((np.ones((0,) + sp, np.float32), 2)),
            ValueError,
            r"non-zero size for non-batch dimensions.* dimension 0 being empty",
        )
        yield ErrorInput(
            SampleInput((x, 10**9, 1, 5 * 10**8)),
            ValueError,
            r"kernel_size=1000000000 gives a window table",
        )
        if n != 2:
            return
        yield ErrorInput(
            SampleInput((x, 2), {"dilation": 0}), ValueError, r"dilation must be greater"
        )
        yield ErrorInput(SampleInput((x, 2, 1, -1)), ValueError, r"padding must be non-negative")
        yield ErrorInput(SampleInput((x, 7)), ValueError, r"output size .* is too small")
        yield ErrorInput(SampleInput((x, (2,) * (n + 1))), TypeError, r"kernel_size must be an")
        yield ErrorInput(SampleInput((x, 2.0)), TypeError, r"kernel_size must be an int")
        yield ErrorInput(SampleInput((x[0, 0], 2)), ValueError, r"Expected \dD or \dD")
        yield ErrorInput(SampleInput((x.astype(np.bool_), 2)), TypeError, r"floating-point or")
        yield ErrorInput(SampleInput(((1.0, 2.0), 2)), TypeError, r"input must be a mindspore")
        yield ErrorInput(
            SampleInput((x, 2), {"ceil_mode": 1}), TypeError, r"ceil_mode must be a bool"
        )
        yield ErrorInput(
            SampleInput((x, 2), {"return_indices": 1}), TypeError, r"return_indices must"
        )
        yield ErrorInput(
            SampleInput((np.ones((1, 1) + (1,) * n, np.float32), 2, 1, 1, 2)),
            ValueError,
            r"lies entirely in the padding",
        )

    return gen


def _max_pool_bench(n: int) -> Callable[[], SampleInput]:
    def gen() -> SampleInput:
        rng = np.random.default_rng(0)
        shape = {1: (64, 64, 256), 2: (8, 32, 64, 64), 3: (4, 16, 16, 32, 32)}[n]
        return SampleInput(
            (_x(rng, shape, "float32"), 2), {"return_indices": True}, name="1e6 elements, k2"
        )

    return gen


def _max_pool_cell_samples(n: int) -> Callable[[str, np.random.Generator], Any]:
    def gen(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        sp = _spatial(n, (7, 6, 5))
        yield SampleInput(
            (_ties(rng, (2, 2) + sp, dtype),),
            init_kwargs={"kernel_size": 3, "stride": 2, "padding": 1, "return_indices": True},
            name="k3 s2 p1 indices, ties",
        )

    return gen


# ----------------------------------------------------------------------------- unpooling


def _window_indices(
    rng: np.random.Generator, lead: Tuple[int, ...], pooled: Tuple[int, ...], k: int, out: Any
) -> np.ndarray:
    """Valid, distinct flat indices: one random position inside each (k, stride k) window."""
    n = len(pooled)
    grids = np.meshgrid(*[np.arange(p) for p in pooled], indexing="ij")
    pos = [g[None] * k + rng.integers(0, k, size=lead + tuple(pooled)) for g in grids]
    pos = [np.minimum(p, o - 1) for p, o in zip(pos, out)]
    flat = pos[0]
    for i in range(1, n):
        flat = flat * out[i] + pos[i]
    return flat.reshape(lead + tuple(pooled)).astype(np.int64)


def _unpool_samples(n: int) -> Callable[[str, np.random.Generator], Any]:
    def gen(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        pooled = _spatial(n, (4, 3, 2))
        lead = (2, 3)
        out = tuple(2 * p for p in pooled)
        if dtype != "float32":
            idx = _window_indices(rng, lead, pooled, 2, out)
            yield SampleInput((_x(rng, lead + pooled, dtype), idx, 2), name="k2")
            return
        odd = tuple(o + 1 for o in out)
        idx = _window_indices(rng, lead, pooled, 2, odd)
        yield SampleInput(
            (_x(rng, lead + pooled, dtype), idx, 2, 2, 0, lead + odd),
            name="output_size with N, C",
        )
        if n != 2:
            return
        idx = _window_indices(rng, (3,), pooled, 3, tuple(3 * p - 2 for p in pooled))
        yield SampleInput((_x(rng, (3,) + pooled, dtype), idx, 3, 3, 1), name="unbatched k3 p1")
        yield SampleInput(
            (_x(rng, (0, 2) + pooled, dtype), np.zeros((0, 2) + pooled, np.int64), 2),
            name="empty batch",
        )

    return gen


def _unpool_errors(n: int) -> Callable[[], Any]:
    def gen() -> Iterator[ErrorInput]:
        pooled = _spatial(n, (4, 3, 2))
        x = np.ones((2, 3) + pooled, np.float32)
        idx = np.zeros((2, 3) + pooled, np.int64)
        yield ErrorInput(SampleInput((x, idx.astype(np.int32), 2)), TypeError, r"int64")
        yield ErrorInput(SampleInput((x, idx[:1], 2)), ValueError, r"indices must have the shape")
        for bad in (10**6, -1):
            yield ErrorInput(
                SampleInput((x, np.full(idx.shape, bad, np.int64), 2)),
                ValueError,
                r"Found an invalid max index in indices",
            )
        yield ErrorInput(SampleInput((x, idx, 0)), ValueError, r"kernel_size must be greater")
        yield ErrorInput(SampleInput((x, idx, 2, 0)), ValueError, r"stride must be greater")
        yield ErrorInput(
            SampleInput((x, idx, 10**9)), ValueError, r"kernel_size=1000000000, .* gives the output"
        )
        if n != 2:
            return
        yield ErrorInput(
            SampleInput((x, idx, 2), {"output_size": (99,) * n}),
            ValueError,
            r"invalid output_size",
        )
        yield ErrorInput(
            SampleInput((x, idx, 2), {"output_size": (8,) * (n + 1)}),
            ValueError,
            r"should be a sequence containing",
        )
        yield ErrorInput(SampleInput((x, [0, 1], 2)), TypeError, r"indices must be a mindspore")
        yield ErrorInput(SampleInput((x[None], idx[None], 2)), ValueError, r"Expected")

    return gen


def _unpool_bench(n: int) -> Callable[[], SampleInput]:
    def gen() -> SampleInput:
        rng = np.random.default_rng(0)
        pooled = {1: (64, 64, 128), 2: (8, 32, 32, 32), 3: (4, 16, 8, 16, 16)}[n]
        lead, sp = pooled[:2], pooled[2:]
        idx = _window_indices(rng, lead, sp, 2, tuple(2 * p for p in sp))
        return SampleInput((_x(rng, pooled, "float32"), idx, 2), name="2.6e5 -> 1e6 elements")

    return gen


def _unpool_cell_errors(n: int) -> Callable[[], Any]:
    def gen() -> Iterator[ErrorInput]:
        pooled = _spatial(n, (4, 3, 2))
        x = np.ones((2, 3) + pooled, np.float32)
        idx = np.zeros((2, 3) + pooled, np.int64)
        init = {"kernel_size": 2}
        yield ErrorInput(
            SampleInput((x, idx.astype(np.int32)), init_kwargs=init), TypeError, r"int64"
        )
        yield ErrorInput(
            SampleInput((x[None], idx[None]), init_kwargs=init), ValueError, r"Expected"
        )
        yield ErrorInput(
            SampleInput((x, np.full(idx.shape, -1, np.int64)), init_kwargs=init),
            ValueError,
            r"Found an invalid max index in indices",
        )

    return gen


def _unpool_cell_samples(n: int) -> Callable[[str, np.random.Generator], Any]:
    def gen(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        pooled = _spatial(n, (3, 2, 2))
        out = tuple(2 * p + 1 for p in pooled)
        idx = _window_indices(rng, (2, 2), pooled, 2, out)
        yield SampleInput(
            (_x(rng, (2, 2) + pooled, dtype), idx),
            {"output_size": out},
            init_kwargs={"kernel_size": 2},
            name="k2 output_size",
        )

    return gen


# ----------------------------------------------------------------------------- references


def _tied(shape: Tuple[int, ...], dtype: str, seed: int, nan: bool) -> np.ndarray:
    """5 levels: many tied maxima in every window; 5% NaN (whole NaN windows) when ``nan``."""
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, shape).astype(dtype)
    if nan:
        x[rng.random(shape) < 0.05] = np.nan
    return x


#: Max pooling calls whose positions among tied maxima and NaN PyTorch's CPU kernels decide
#: (the aot kernels reproduce them): input shape, then the arguments after the input.
_TIE_CALLS: Dict[str, Tuple[Tuple[int, ...], Tuple[Any, ...], Dict[str, Any]]] = {
    "max_pool1d": ((2, 3, 17), (3, 2, 1, 1), {"ceil_mode": True, "return_indices": True}),
    "max_pool2d": ((2, 3, 11, 12), (3, 2, 1, 2), {"ceil_mode": False, "return_indices": True}),
    "max_pool3d": ((1, 2, 5, 6, 4), (2, 1, 1, 1), {"ceil_mode": True, "return_indices": True}),
    "adaptive_max_pool1d": ((2, 3, 13), (5, True), {}),
    "adaptive_max_pool2d": ((2, 3, 11, 9), ((4, 7), True), {}),
    "adaptive_max_pool3d": ((1, 2, 5, 7, 6), ((2, 3, 5), True), {}),
}

_GRAD_TOL = Tolerance(atol=1e-6, rtol=1e-6)


def _tie_references(name: str) -> Callable[[], Iterator[ReferenceInput]]:
    """Values and int64 positions exactly PyTorch's (PyNative, float16/32/64); the gradient to
    those positions in graph mode (float32)."""
    shape, args, kwargs = _TIE_CALLS[name]

    def references() -> Iterator[ReferenceInput]:
        for dtype in ("float16", "float32", "float64"):
            x = _tied(shape, dtype, 3, True)
            sample = SampleInput((x, *args), kwargs, name=f"ties+NaN {dtype}")
            yield ReferenceInput(sample, backends=("aot",))
        x = _tied(shape, "float32", 5, False)
        sample = SampleInput((x, *args), kwargs, name="ties, gradient")
        yield ReferenceInput(
            sample,
            backends=("aot",),
            modes=("graph",),
            grad=True,
            tolerances={"output[0]": _GRAD_TOL, "grad[arg 0]": _GRAD_TOL},
        )

    return references


def _unpool_references() -> Iterator[ReferenceInput]:
    """Repeated positions: the last value written wins, the gradient gathers (both backends)."""
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 2, 2, 2)
    idx = np.array([[[[5, 5], [0, 5]], [[15, 3], [3, 3]]]], np.int64)
    sample = SampleInput((x, idx, 2), {"output_size": (4, 4)}, name="duplicate indices")
    yield ReferenceInput(
        sample, backends=("aot", "composite"), modes=("pynative", "graph"), grad=True
    )


def _no_refs() -> Iterator[ReferenceInput]:
    return iter(())


# ----------------------------------------------------------------------------- entries

#: PyTorch's OpInfo samples of these are run with a stride (it generates hundreds).
_STRIDE = {
    "max_pool1d": 7,
    "max_pool2d": 23,
    "max_pool3d": 11,
    "max_unpool1d": 3,
    "max_unpool2d": 5,
    "max_unpool3d": 3,
}


def _function(fn: str, samples: Any, errors: Any, bench: Any, **extra: Any) -> OpInfo:
    """The entry of ``torch.nn.functional.<fn>``, dispatched as ``shape.<fn>``."""
    opinfos = (f"nn.functional.{fn}",) + (
        (f"nn.functional.{fn}.grad",) if fn.startswith("max_unpool") else ()
    )
    return OpInfo(
        name=f"shape.{fn}",
        op=getattr(S, fn),
        ref=torch_ref(f"torch.nn.functional.{fn}"),
        mirrors=f"torch.nn.functional.{fn}",
        sample_inputs=samples,
        error_inputs=errors,
        bench_input=bench,
        dispatch_op=f"shape.{fn}",
        references=extra.pop("references", _tie_references(fn) if fn in _TIE_CALLS else _no_refs),
        torch_opinfo=tuple(
            TorchOpInfo(o, stride=1 if o.endswith(".grad") else _STRIDE.get(fn, 1)) for o in opinfos
        ),
        **extra,
    )


def _cell(cell: str, samples: Any, errors: Any) -> OpInfo:
    """The entry of the Cell ``torch.nn.<cell>`` (float32: the arithmetic is the function's)."""
    return OpInfo(
        name=f"shape.{cell}",
        op=getattr(S, cell),
        ref=torch_ref(f"torch.nn.{cell}"),
        mirrors=f"torch.nn.{cell}",
        torch_apis=(f"torch.nn.{cell}",),
        sample_inputs=samples,
        error_inputs=errors,
        dtypes=("float32",),
        is_cell=True,
    )


#: The adaptive average pooling kernels: aot in float32/float64; MindSpore's 3-D one not in
#: float16 (PyTorch sums float16 bins in float16, as the composite does).
_AVG_BACKEND_DTYPES = {
    n: {"aot": ("float32", "float64"), **({"native": ("float32", "float64")} if n == 3 else {})}
    for n in (1, 2, 3)
}

_D = {1: "1d", 2: "2d", 3: "3d"}
OPS: List[OpInfo] = []

for _n in (1, 2, 3):
    _d = _D[_n]
    for _kind, _is_max in (("avg", False), ("max", True)):
        _fn = f"adaptive_{_kind}_pool{_d}"
        OPS.append(
            _function(
                _fn,
                _adaptive_samples(_n, _is_max),
                _adaptive_errors(_n, _is_max),
                _adaptive_bench(_n, _is_max),
                torch_apis=(f"torch.nn.functional.{_fn}",)
                + ((f"torch.{_fn}",) if _kind == "avg" and _n == 1 else ()),
                backend_dtypes=_AVG_BACKEND_DTYPES[_n] if _kind == "avg" else {},
            )
        )
        OPS.append(
            _cell(
                f"Adaptive{_kind.capitalize()}Pool{_d}",
                _adaptive_cell_samples(_n, _is_max),
                _cell_errors(_n, {"output_size": 2}),
            )
        )
    _fn = f"max_pool{_d}"
    OPS.append(
        _function(
            _fn,
            _max_pool_samples(_n),
            _max_pool_errors(_n),
            _max_pool_bench(_n),
            torch_apis=(
                f"torch.nn.functional.{_fn}",
                f"torch.nn.functional.{_fn}_with_indices",
                f"torch.{_fn}",
            ),
            dtypes=("float16", "float32", "float64", "int32", "int64"),
        )
    )
    OPS.append(
        _cell(f"MaxPool{_d}", _max_pool_cell_samples(_n), _cell_errors(_n, {"kernel_size": 2}))
    )
    _fn = f"max_unpool{_d}"
    OPS.append(
        _function(
            _fn,
            _unpool_samples(_n),
            _unpool_errors(_n),
            _unpool_bench(_n),
            torch_apis=(f"torch.nn.functional.{_fn}",),
            **({"references": _unpool_references} if _n == 2 else {}),
        )
    )
    OPS.append(_cell(f"MaxUnpool{_d}", _unpool_cell_samples(_n), _unpool_cell_errors(_n)))
