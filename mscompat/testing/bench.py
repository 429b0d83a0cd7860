"""Time mscompat against PyTorch on the same input, in one process, side by side.

For an op database entry with a ``bench_input`` (about 1e6 float32 elements), measures PyTorch
CPU eager, mscompat in PyNative and mscompat in graph mode (``ms.jit``, compiled before timing),
forward and forward+backward, as the median of repeated runs, and reports the ratio
``mscompat graph / PyTorch eager`` (below 1.0: mscompat is faster). The PyTorch and graph-mode
calls of a row are timed in alternating blocks, so that a slow spell of the machine affects
both. An entry that does not run under ``ms.jit`` (``supports_graph=False``: a data-dependent
output shape) is timed in PyNative only, against PyTorch in the same alternating blocks, and its
ratio is ``mscompat pynative / PyTorch eager``.
"""

from __future__ import annotations

import statistics
import time
import warnings
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from mscompat.custom_ops.registry import BackendNotAvailableError
from mscompat.testing.opinfo import OpInfo, SampleInput
from mscompat.testing.parity import (
    _as_tuple,
    _to_ms,
    _weighted_sum,
    make_cotangents,
    run_torch,
)
from mscompat.testing.runner import backend_context, grad_argnums_of

__all__ = ["SETTLE_S", "BenchResult", "bench_op", "format_results", "settle"]

#: Seconds to wait before a timed block. After a parallel region PyTorch's OpenMP threads spin
#: for about 7.5 ms (libgomp's default; measured: the idle process burns 7.5 ms of CPU after one
#: ``embedding_bag``), holding a core that the next block's own threads need: a block of 20 short
#: MindSpore calls ran entirely beside a spinning PyTorch thread. After the pause both sides
#: start from sleeping threads, and each block's untimed first call wakes its own.
SETTLE_S = 0.02


def settle() -> None:
    """Wait :data:`SETTLE_S` seconds: the other side's threads go back to sleep."""
    time.sleep(SETTLE_S)


@dataclass(frozen=True)
class BenchResult:
    """Median wall times in milliseconds for one entry and one direction."""

    op: str
    direction: str  # "forward" or "forward+backward"
    elements: int
    torch_ms: float
    pynative_ms: float
    graph_ms: float  # NaN where not ``graph``
    graph: bool = True  # False: an entry that runs in PyNative only

    @property
    def ratio(self) -> float:
        """mscompat graph mode time / PyTorch eager time (PyNative time for a PyNative-only
        entry)."""
        return (self.graph_ms if self.graph else self.pynative_ms) / self.torch_ms


def _median_ms(fn: Callable[[], Any], repeat: int, min_time: float = 0.2) -> float:
    fn()  # warm-up (and graph compilation)
    times: List[float] = []
    start = time.perf_counter()
    while len(times) < repeat or (time.perf_counter() - start < min_time and len(times) < 200):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def _paired_median_ms(
    first: Callable[[], Any],
    second: Callable[[], Any],
    repeat: int,
    rounds: int = 3,
    min_time: float = 0.1,
) -> Tuple[float, float]:
    """Medians of two calls timed in alternating blocks (first, second, first, ...).

    The ratio of the two is what the table reports; alternating blocks keeps a slow spell of
    the machine (measured on the shared 2-core VM: the same row 1.0 ms in one run, 1.8 ms in
    the next) from landing on one side only. Blocks, not single calls: right after a PyTorch
    call its OpenMP threads keep spinning and slow a MindSpore call down (call-by-call
    alternation made some graph-mode rows 3-10x slower). Each block starts after
    :func:`settle` with an untimed call.
    """
    times: Tuple[List[float], List[float]] = ([], [])
    for _ in range(rounds):
        for fn, out in ((first, times[0]), (second, times[1])):
            settle()
            fn()  # warm-up (graph compilation in the first round), untimed
            start = time.perf_counter()
            block = 0
            while block < repeat or (time.perf_counter() - start < min_time and block < 200):
                t0 = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t0)
                block += 1
    return statistics.median(times[0]) * 1e3, statistics.median(times[1]) * 1e3


def bench_op(info: OpInfo, repeat: int = 10, backward: bool = True) -> List[BenchResult]:
    """Benchmark one entry on its ``bench_input``; forward, and forward+backward if any.

    A backend variant (``info.backend``) is timed with that backend forced; none (a warning
    says why) when that backend does not support the bench input's call.
    """
    with backend_context(info):
        return _bench_op(info, repeat, backward)


def _bench_op(info: OpInfo, repeat: int, backward: bool) -> List[BenchResult]:
    import mindspore as ms
    import torch

    if info.bench_input is None:
        raise ValueError(f"{info.full_name} has no bench_input")
    sample: SampleInput = info.bench_input()
    elements = max(int(np.asarray(a).size) for a in sample.args if isinstance(a, np.ndarray))
    fn = info.ms_callable(sample)
    ref = info.torch_callable(sample)
    ms_args = [_to_ms(a) for a in sample.args]
    ms_kwargs = {k: _to_ms(v) for k, v in sample.kwargs.items()}
    t_args = [torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in sample.args]
    t_kwargs = {
        k: torch.from_numpy(np.array(v)) if isinstance(v, np.ndarray) else v
        for k, v in sample.kwargs.items()
    }

    def call(*a: Any) -> Any:
        return fn(*a, **ms_kwargs)

    try:
        call(*ms_args)
    except BackendNotAvailableError as exc:  # a forced backend that does not run this call
        warnings.warn(f"{info.full_name}: not timed: {exc}", RuntimeWarning, stacklevel=2)
        return []
    # PyNative-only entries: the PyNative call stands where the compiled one would
    graph = info.supports_graph
    jitted = ms.jit(call) if graph else call

    def sync(out: Any) -> None:
        for o in out if isinstance(out, tuple) else (out,):
            o.asnumpy()

    torch_ms, graph_ms = _paired_median_ms(
        lambda: ref(*t_args, **t_kwargs), lambda: sync(jitted(*ms_args)), repeat
    )
    results = [
        _result(
            info.full_name,
            "forward",
            elements,
            torch_ms,
            lambda: sync(call(*ms_args)),
            graph_ms,
            graph,
            repeat,
        )
    ]
    argnums = list(grad_argnums_of(info, sample))
    if backward and argnums:
        outs, _ = run_torch(ref, sample.args, sample.kwargs)
        cts = make_cotangents(outs, np.random.default_rng(0))
        t_cts = [torch.from_numpy(c) if c is not None else None for c in cts]
        ms_cts = [ms.Tensor(c.astype(np.float32)) if c is not None else None for c in cts]

        def torch_fb() -> None:
            leaves = [
                t.detach().requires_grad_(i in argnums) if isinstance(t, torch.Tensor) else t
                for i, t in enumerate(t_args)
            ]
            out = ref(*leaves, **t_kwargs)
            out = out if isinstance(out, tuple) else (out,)
            pairs = [(o, c) for o, c in zip(out, t_cts) if c is not None]
            torch.autograd.backward([p[0] for p in pairs], [p[1] for p in pairs])

        # The cotangents are inputs, not constants: a constant cotangent lets graph mode fold
        # the whole backward of a linear op (interpolate, squeeze...) at compile time.
        n_args = len(ms_args)
        live = [c for c in ms_cts if c is not None]
        slots: List[Optional[int]] = []  # where each output's cotangent sits in the inputs
        for c in ms_cts:
            slots.append(None if c is None else n_args + len([s for s in slots if s is not None]))

        def weighted(*a: Any) -> Any:
            cts = []
            for s in slots:
                cts.append(None if s is None else a[s])
            return _weighted_sum(_as_tuple(call(*a[:n_args])), cts)

        grad_fn = ms.grad(weighted, grad_position=tuple(argnums))
        grad_jit = ms.jit(grad_fn) if graph else grad_fn
        grad_args = list(ms_args) + live
        torch_ms, graph_ms = _paired_median_ms(torch_fb, lambda: sync(grad_jit(*grad_args)), repeat)
        results.append(
            _result(
                info.full_name,
                "forward+backward",
                elements,
                torch_ms,
                lambda: sync(grad_fn(*grad_args)),
                graph_ms,
                graph,
                repeat,
            )
        )
    return results


def _result(
    op: str,
    direction: str,
    elements: int,
    torch_ms: float,
    pynative: Callable[[], Any],
    paired_ms: float,
    graph: bool,
    repeat: int,
) -> BenchResult:
    """The row of one direction: ``paired_ms`` was timed next to PyTorch, in graph mode (or in
    PyNative for a PyNative-only entry, whose graph time is then NaN)."""
    if not graph:
        return BenchResult(op, direction, elements, torch_ms, paired_ms, float("nan"), False)
    return BenchResult(op, direction, elements, torch_ms, _median_ms(pynative, repeat), paired_ms)


def format_results(results: Sequence[BenchResult], rst: bool = False) -> str:
    """A plain-text (or reStructuredText simple) table of ``results``."""
    head = (
        "op",
        "direction",
        "elements",
        "torch eager ms",
        "mscompat pynative ms",
        "mscompat graph ms",
        "graph / torch",
    )
    rows = [head] + [
        (
            r.op if not rst else f"``{r.op}``",
            r.direction,
            f"{r.elements:.0e}",
            f"{r.torch_ms:.2f}",
            f"{r.pynative_ms:.2f}",
            f"{r.graph_ms:.2f}" if r.graph else "-",
            f"{r.ratio:.2f}" if r.graph else f"{r.ratio:.2f} (pynative)",
        )
        for r in results
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    line = "  ".join("=" * w if rst else "-" * w for w in widths)
    out = [line] if rst else []
    out.append("  ".join(c.ljust(w) for c, w in zip(head, widths)).rstrip())
    out.append(line)
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows[1:]]
    if rst:
        out.append(line)
    return "\n".join(out)


def select(op_db: Sequence[OpInfo], names: Optional[Sequence[str]]) -> List[OpInfo]:
    """Entries with a bench input whose name contains one of ``names`` (all if None)."""
    return [
        i
        for i in op_db
        if i.bench_input is not None and (not names or any(n in i.full_name for n in names))
    ]
