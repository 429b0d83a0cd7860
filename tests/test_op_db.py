"""Generic parity tests generated from the op database (mscompat.testing.OP_DB).

Every entry gets, for every dtype and sample: forward parity against PyTorch and gradient parity
(mindspore.grad vs torch autograd) in PyNative mode, and the same plus graph vs PyNative under
ms.jit on a fixed subset of the samples (see _graph_checked); every error input in PyNative, a
subset under ms.jit; every reference input (ties, NaN, large exact cases) on the backends
and in the modes it names, at its tolerances (exact unless stated). One run per case is shared
by all its tests (runner cache).
"""

from __future__ import annotations

import os

import pytest

from mscompat.testing import OP_DB
from mscompat.testing.runner import (
    check_error_input,
    check_reference,
    chosen_backend,
    iter_cases,
    iter_references,
    parity_in_variants,
    run_case,
    skip_reason,
)

# A dispatched op is checked once per registered backend (its variants, "name[backend]"), in
# the dtypes that backend runs (the entry's backend_dtypes); its error inputs are backend
# independent (validation runs before dispatch) and run once, on the plain entry.
# To keep the suite within its time budget, a backend variant runs a sample in float32, and in
# the other dtypes only where it is the backend the registry picks for that call on this
# machine (what users get): every sample runs in every dtype on the backend that really runs
# it. A sample the forced backend does not support is skipped with the registry's reason.
# `mscompat parity` runs every dtype of every backend.


def _checked(info, dtype, index):
    if not info.backend or skip_reason(info):
        return True
    if dtype == "float32" or "float32" not in info.dtypes:
        return True
    return chosen_backend(info, dtype, index) == info.backend


CASES = [
    pytest.param(info, dtype, index, id=f"{info.full_name}-{dtype}-{index}-{sample.describe()}")
    for info, dtype, index, sample in iter_cases([i for i in OP_DB if not parity_in_variants(i)])
    if _checked(info, dtype, index)
]


class _Indexed:
    """An error input with its position in the whole list (for the graph-mode subset)."""

    def __init__(self, err, index):
        self.err, self.index = err, index

    def __getattr__(self, name):
        return getattr(self.err, name)


_ALL_ERRORS = [
    (info, i, err)
    for info in OP_DB
    if not info.backend
    for i, err in enumerate(info.error_inputs())
]
ERRORS = [
    pytest.param(
        info,
        _Indexed(err, k),
        id=f"{info.full_name}-{i}-{err.error_type.__name__}-{err.match[:30]}",
    )
    for k, (info, i, err) in enumerate(_ALL_ERRORS)
]
REFERENCES = [
    pytest.param(info, ref, id=f"{info.full_name}-{i}-{ref.sample.describe()}")
    for info, i, ref in iter_references(OP_DB)
]
MODES = ["pynative", "graph"]


def _skip_unavailable(info):
    reason = skip_reason(info)
    if reason:
        pytest.skip(reason)


# The suite's time budget (20 minutes on the 2-core build machine): a case's cost is mostly
# its graph compilation (1-4 s each, against 0.2-0.5 s for the PyNative run), so graph mode
# (forward, gradient, graph vs PyNative) runs on a fixed subset of the cases: a plain entry's
# first sample in every dtype and every fifth float32 sample; a backend variant's (the same
# Python around another kernel) every sixth float32 sample. PyNative runs every sample in every
# dtype. Error inputs are checked in PyNative for all and under ms.jit for every twelfth of
# the whole list (the validation helpers are shared and run before any kernel in both modes;
# each graph-mode check is a 3-4 s compilation). `MSCOMPAT_GRAPH_ALL=1` (and `mscompat
# parity`) run all.
GRAPH_ALL = os.environ.get("MSCOMPAT_GRAPH_ALL") == "1"
GRAPH_ERRORS_EVERY = 12


def _graph_checked(info, dtype, index):
    if GRAPH_ALL:
        return True
    if info.backend:
        return dtype == "float32" and index % 6 == 0
    return index == 0 or (dtype == "float32" and index % 5 == 0)


def _run(info, dtype, index, mode=None):
    graph = _graph_checked(info, dtype, index)
    if mode == "graph" and not graph:
        pytest.skip("graph mode is checked on a subset of the samples (the suite's time budget)")
    modes = MODES if graph else ["pynative"]
    result = run_case(info, dtype, index, modes)
    if result.unsupported:
        pytest.skip(result.unsupported)
    return result


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("info,dtype,index", CASES)
def test_forward_parity(info, dtype, index, mode):
    _skip_unavailable(info)
    if mode == "graph" and not info.supports_graph:
        pytest.skip(f"{info.full_name} does not support graph mode")
    report = _run(info, dtype, index, mode).report(mode, "forward")
    assert report.ok, "\n" + report.format()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("info,dtype,index", CASES)
def test_grad_parity(info, dtype, index, mode):
    _skip_unavailable(info)
    if mode == "graph" and not info.supports_graph:
        pytest.skip(f"{info.full_name} does not support graph mode")
    result = _run(info, dtype, index, mode)
    if not result.has_grad:
        pytest.skip("no differentiable input in this sample")
    report = result.report(mode, "grad")
    assert report.ok, "\n" + report.format()


@pytest.mark.parametrize("info,dtype,index", CASES)
def test_graph_matches_pynative(info, dtype, index):
    _skip_unavailable(info)
    if not info.supports_graph:
        pytest.skip(f"{info.full_name} does not support graph mode")
    report = _run(info, dtype, index, "graph").graph_vs_pynative()
    assert report.ok, "\n" + report.format()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("info,err", ERRORS)
def test_error_inputs(info, err, mode):
    _skip_unavailable(info)
    if mode == "graph" and not GRAPH_ALL and err.index % GRAPH_ERRORS_EVERY:
        pytest.skip("every twelfth error input is checked under ms.jit (the suite's time budget)")
    problem = check_error_input(info, err.err, mode)
    assert problem is None, problem


@pytest.mark.parametrize("info,ref", REFERENCES)
def test_reference_inputs(info, ref):
    """Ties, NaN, large and bit-exact cases (each entry's ``references``), on the backends
    they name, at their tolerances (exact unless stated)."""
    _skip_unavailable(info)
    report = check_reference(info, ref)
    assert report.ok, "\n" + report.format()


def test_every_sample_runs_in_every_dtype_on_the_backend_that_runs_it():
    """The backend the registry picks for a sample has a variant in that sample's dtype (the
    entry's backend_dtypes do not leave a call of users unchecked)."""
    names = {(i.full_name, d) for i in OP_DB for d in i.dtypes}
    for info in OP_DB:
        if not parity_in_variants(info):
            continue
        for dtype in info.dtypes:
            for index in range(len(info.samples(dtype))):
                backend = chosen_backend(info, dtype, index)
                label = f"{info.variant}-{backend}" if info.variant else backend
                assert (f"{info.name}[{label}]", dtype) in names, (
                    f"{info.full_name} {dtype} sample {index} runs on {backend!r}, whose "
                    "variant does not run that dtype (backend_dtypes)"
                )


def test_the_plain_entry_of_a_dispatched_op_chooses_a_checked_backend():
    from mscompat.custom_ops.registry import which

    names = {i.full_name for i in OP_DB}
    for info in OP_DB:
        if parity_in_variants(info):
            assert f"{info.name}[{which(info.dispatch_op).backend}]" in names


def test_every_entry_has_samples_errors_and_reference():
    for info in OP_DB:
        assert info.mirrors, f"{info.full_name} does not say which API it mirrors"
        assert list(info.error_inputs()), f"{info.full_name} has no error inputs"
        for dtype in info.dtypes:
            assert info.samples(dtype), f"{info.full_name} has no samples for {dtype}"
