"""Run op database entries: PyTorch once, MindSpore in each mode, compare; used by the tests
and by ``mscompat parity``."""

from __future__ import annotations

import contextlib
import re
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from mscompat.testing.opinfo import ErrorInput, OpInfo, ReferenceInput, SampleInput
from mscompat.testing.parity import (
    MODES,
    ParityReport,
    compare_runs,
    make_cotangents,
    run_mindspore,
    run_torch,
)
from mscompat.testing.tolerances import Tolerance

__all__ = [
    "CaseResult",
    "backend_context",
    "check_error_input",
    "check_reference",
    "chosen_backend",
    "grad_argnums_of",
    "iter_cases",
    "iter_references",
    "run_case",
    "skip_reason",
]


def skip_reason(info: OpInfo) -> Optional[str]:
    """Why a backend variant cannot run on this machine (None if it can)."""
    if not info.backend:
        return None
    from mscompat.custom_ops.registry import available

    ok, why = available(info.dispatch_op, info.backend)
    return None if ok else f"{info.full_name}: backend {info.backend!r} unavailable here: {why}"


_CHOSEN: Dict[Tuple[str, str, int], str] = {}


def chosen_backend(info: OpInfo, dtype: str, index: int, seed: int = 0) -> str:
    """The backend the registry picks for sample ``index`` of a dispatched entry in ``dtype``
    on this machine: per call (the implementations' ``supports``), or the op's choice where the
    front door answers the call before any backend (an empty input)."""
    from mscompat.custom_ops import registry

    key = (info.name + info.variant.rpartition("-")[0], dtype, index)
    if key not in _CHOSEN:
        sample = info.samples(dtype, seed)[index]
        backend = "none"
        if hasattr(registry, "unsupported"):  # the registry chooses per call
            from mscompat.testing.parity import _to_ms

            args = [_to_ms(a) for a in sample.args]
            kwargs = {k: _to_ms(v) for k, v in sample.kwargs.items()}
            with warnings.catch_warnings():  # the front door's own (grid_sample's default)
                warnings.simplefilter("ignore")
                backend = registry.which(info.dispatch_op, *args, **kwargs).backend
        if backend == "none":
            backend = registry.which(info.dispatch_op).backend
        _CHOSEN[key] = backend
    return _CHOSEN[key]


def parity_in_variants(info: OpInfo) -> bool:
    """A dispatched entry runs parity through its per-backend variants (one of which is what
    the entry itself would run), and its error inputs once, on itself."""
    return bool(info.dispatch_op) and not info.backend


def backend_context(info: OpInfo) -> contextlib.AbstractContextManager:
    """Force the entry's backend (a no-op for entries that are not backend variants)."""
    if not info.backend:
        return contextlib.nullcontext()
    from mscompat.custom_ops.registry import use_backend

    return use_backend(info.backend, info.dispatch_op)


@dataclass
class CaseResult:
    """One sample of one entry in one dtype: PyTorch's results and MindSpore's per mode."""

    info: OpInfo
    sample: SampleInput
    dtype: str
    expected_out: List[np.ndarray] = field(default_factory=list)
    expected_grads: List[np.ndarray] = field(default_factory=list)
    outs: Dict[str, List[np.ndarray]] = field(default_factory=dict)
    grads: Dict[str, List[np.ndarray]] = field(default_factory=dict)
    errors: Dict[str, str] = field(default_factory=dict)
    #: why the forced backend does not run this call (the registry's ``supports``): not checked
    unsupported: str = ""

    def report(self, mode: str, kind: str) -> ParityReport:
        """Compare ``mode`` (``'pynative'``/``'graph'``) with PyTorch for ``kind``
        (``'forward'``/``'grad'``)."""
        report = ParityReport()
        if "torch" in self.errors:
            raise RuntimeError(f"the PyTorch reference failed:\n{self.errors['torch']}")
        if mode in self.errors:
            raise RuntimeError(f"mscompat failed in {mode} mode:\n{self.errors[mode]}")
        if kind == "forward":
            labels = [f"output[{i}]" for i in range(len(self.expected_out))]
            compare_runs(
                report, mode, self.outs[mode], self.expected_out, labels, kind, self.info.tolerance
            )
        else:
            labels = [f"grad[arg {i}]" for i in self.info.grad_argnums]
            compare_runs(
                report,
                mode,
                self.grads[mode],
                self.expected_grads,
                labels,
                kind,
                self.info.tolerance,
            )
        return report

    def graph_vs_pynative(self) -> ParityReport:
        """Graph mode against PyNative, outputs and gradients, with the table's tolerance."""
        report = ParityReport()
        for mode in MODES:
            if mode in self.errors:
                raise RuntimeError(f"mscompat failed in {mode} mode:\n{self.errors[mode]}")
        n = len(self.outs["pynative"])
        compare_runs(
            report,
            "graph",
            self.outs["graph"],
            self.outs["pynative"],
            [f"output[{i}] vs pynative" for i in range(n)],
            "forward",
            self.info.tolerance,
        )
        compare_runs(
            report,
            "graph",
            self.grads["graph"],
            self.grads["pynative"],
            [f"grad[arg {i}] vs pynative" for i in self.info.grad_argnums],
            "grad",
            self.info.tolerance,
        )
        return report

    @property
    def has_grad(self) -> bool:
        return bool(self.expected_grads)


def grad_argnums_of(info: OpInfo, sample: SampleInput) -> Tuple[int, ...]:
    """The entry's ``grad_argnums`` that are floating NumPy arrays in ``sample``."""
    return tuple(
        i
        for i in info.grad_argnums
        if i < len(sample.args)
        and isinstance(sample.args[i], np.ndarray)
        and sample.args[i].dtype.kind == "f"
    )


_CACHE: Dict[Tuple[str, str, int], CaseResult] = {}


def run_case(
    info: OpInfo, dtype: str, index: int, modes: Sequence[str] = MODES, seed: int = 0
) -> CaseResult:
    """Run sample ``index`` of ``info`` in ``dtype``: PyTorch once, MindSpore in every mode.

    Results are cached per (entry, dtype, index), so the forward, gradient and graph-vs-PyNative
    tests of one case share a single run (and a single graph compilation).
    """
    key = (info.full_name, dtype, index)
    # an entry without graph mode never has a graph result: the cache must not wait for one
    modes = [m for m in modes if m != "graph" or info.supports_graph]
    if key in _CACHE and all(m in _CACHE[key].outs or m in _CACHE[key].errors for m in modes):
        return _CACHE[key]
    sample = info.samples(dtype, seed)[index]
    result = CaseResult(info, sample, dtype)
    argnums = grad_argnums_of(info, sample)
    try:
        ref = info.torch_callable(sample)
        result.expected_out, _ = run_torch(ref, sample.args, sample.kwargs)
        cts = make_cotangents(result.expected_out, np.random.default_rng(seed + 1))
        if argnums and any(c is not None for c in cts):
            _, result.expected_grads = run_torch(
                ref, sample.args, sample.kwargs, grad_argnums=argnums, cotangents=cts
            )
        else:
            argnums = ()
    except Exception:
        result.errors["torch"] = traceback.format_exc()
        _CACHE[key] = result
        return result
    for mode in modes:
        if mode == "graph" and not info.supports_graph:
            continue
        try:
            fn = info.ms_callable(sample)
            with backend_context(info):
                result.outs[mode], result.grads[mode] = run_mindspore(
                    fn,
                    sample.args,
                    sample.kwargs,
                    mode=mode,
                    grad_argnums=argnums,
                    cotangents=cts,
                )
        except Exception as exc:
            refused = _refusal(info, exc)
            if refused:
                result.unsupported = refused
                break
            result.errors[mode] = traceback.format_exc()
    _CACHE[key] = result
    return result


def _refusal(info: OpInfo, exc: BaseException) -> str:
    """The reason when ``exc`` is the registry refusing the variant's forced backend for this
    call (the backend's ``supports`` predicate), else ``""``."""
    from mscompat.custom_ops.registry import BackendNotAvailableError

    if not info.backend or not isinstance(exc, BackendNotAvailableError):
        return ""
    return f"{info.full_name}: backend {info.backend!r} does not run this call: {exc}"


def iter_cases(
    op_db: Iterable[OpInfo], dtypes: Optional[Sequence[str]] = None, seed: int = 0
) -> Iterator[Tuple[OpInfo, str, int, SampleInput]]:
    """Every (entry, dtype, sample index, sample) of ``op_db``, in a stable order."""
    for info in op_db:
        for dtype in info.dtypes:
            if dtypes is not None and dtype not in dtypes:
                continue
            for index, sample in enumerate(info.samples(dtype, seed)):
                yield info, dtype, index, sample


def iter_references(op_db: Iterable[OpInfo]) -> Iterator[Tuple[OpInfo, int, ReferenceInput]]:
    """Every (entry, index, reference input) to check: a reference naming backends runs on
    those backend variants, one naming none on the plain entry."""
    for info in op_db:
        for index, ref in enumerate(info.references()):
            if (info.backend in ref.backends) if ref.backends else not info.backend:
                yield info, index, ref


def check_reference(info: OpInfo, ref: ReferenceInput, seed: int = 0) -> ParityReport:
    """Run reference input ``ref`` of ``info`` (its backend forced) in each of ``ref.modes`` and
    compare outputs (and gradients, with ``ref.grad``) with PyTorch at ``ref``'s tolerances."""
    sample = ref.sample
    argnums = grad_argnums_of(info, sample) if ref.grad else ()
    torch_fn = info.torch_callable(sample)
    expected_out, _ = run_torch(torch_fn, sample.args, sample.kwargs)
    cts = make_cotangents(expected_out, np.random.default_rng(seed + 1))
    expected_grads: List[np.ndarray] = []
    if argnums and any(c is not None for c in cts):
        _, expected_grads = run_torch(
            torch_fn, sample.args, sample.kwargs, grad_argnums=argnums, cotangents=cts
        )
    else:
        argnums = ()
    report = ParityReport()
    for mode in ref.modes:
        with backend_context(info):
            outs, grads = run_mindspore(
                info.ms_callable(sample),
                sample.args,
                sample.kwargs,
                mode=mode,
                grad_argnums=argnums,
                cotangents=cts,
            )
        for kind, got, want, labels in (
            ("forward", outs, expected_out, [f"output[{i}]" for i in range(len(expected_out))]),
            ("grad", grads, expected_grads, [f"grad[arg {i}]" for i in argnums]),
        ):
            for label, g, w in zip(labels, got, want):
                compare_runs(report, mode, [g], [w], [label], kind, _fixed(ref.tolerance(label)))
            if len(got) != len(want):
                compare_runs(report, mode, got, want, labels, kind)
    return report


def _fixed(tolerance: Tolerance) -> Callable[[str, str], Tolerance]:
    return lambda dtype, kind: tolerance


def check_error_input(info: OpInfo, error: ErrorInput, mode: str) -> Optional[str]:
    """None if the call raises the expected error in ``mode``, else what happened instead."""
    import mindspore as ms

    from mscompat.testing.parity import _to_ms

    sample = error.sample
    try:
        fn = info.ms_callable(sample)
        args = [_to_ms(a) for a in sample.args]
        kwargs = {k: _to_ms(v) for k, v in sample.kwargs.items()}

        def call(*a: object) -> object:
            return fn(*a, **kwargs)

        with backend_context(info):
            (ms.jit(call) if mode == "graph" else call)(*args)
    except Exception as exc:  # noqa: BLE001 - we inspect what was raised
        if not isinstance(exc, error.error_type):
            return f"raised {type(exc).__name__}: {exc}, expected {error.error_type.__name__}"
        if not re.search(error.match, str(exc)):
            return f"message {str(exc)!r} does not match {error.match!r}"
        return None
    return f"no error raised, expected {error.error_type.__name__} matching {error.match!r}"
