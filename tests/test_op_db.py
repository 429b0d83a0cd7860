"""Generic parity tests generated from the op database (mscompat.testing.OP_DB).

Every entry gets, for every dtype and sample: forward parity against PyTorch in PyNative and
graph mode, gradient parity (mindspore.grad vs torch autograd), graph vs PyNative, and every
error input in both modes. One run per case is shared by all its tests (runner cache).
"""

from __future__ import annotations

import pytest

from mscompat.testing import OP_DB
from mscompat.testing.runner import (
    check_error_input,
    iter_cases,
    parity_in_variants,
    run_case,
    skip_reason,
)

# A dispatched op is checked once per registered backend (its variants, "name[backend]"), which
# includes the backend the plain entry would choose; its error inputs are backend independent
# (validation runs before dispatch) and run once, on the plain entry.
# To keep the suite within its time budget, a backend that is not the one chosen on this machine
# is checked in float32 only; the chosen backend (what users get) in every dtype. `mscompat
# parity` runs every dtype of every backend.


def _dtypes_checked(info):
    if not info.backend or skip_reason(info):
        return info.dtypes
    from mscompat.custom_ops.registry import which

    if which(info.dispatch_op).backend == info.backend or "float32" not in info.dtypes:
        return info.dtypes
    return ("float32",)


CASES = [
    pytest.param(info, dtype, index, id=f"{info.full_name}-{dtype}-{index}-{sample.describe()}")
    for info, dtype, index, sample in iter_cases([i for i in OP_DB if not parity_in_variants(i)])
    if dtype in _dtypes_checked(info)
]
ERRORS = [
    pytest.param(info, err, id=f"{info.full_name}-{i}-{err.error_type.__name__}-{err.match[:30]}")
    for info in OP_DB
    if not info.backend
    for i, err in enumerate(info.error_inputs())
]
MODES = ["pynative", "graph"]


def _skip_unavailable(info):
    reason = skip_reason(info)
    if reason:
        pytest.skip(reason)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("info,dtype,index", CASES)
def test_forward_parity(info, dtype, index, mode):
    _skip_unavailable(info)
    if mode == "graph" and not info.supports_graph:
        pytest.skip(f"{info.full_name} does not support graph mode")
    report = run_case(info, dtype, index).report(mode, "forward")
    assert report.ok, "\n" + report.format()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("info,dtype,index", CASES)
def test_grad_parity(info, dtype, index, mode):
    _skip_unavailable(info)
    result = run_case(info, dtype, index)
    if not result.has_grad:
        pytest.skip("no differentiable input in this sample")
    report = result.report(mode, "grad")
    assert report.ok, "\n" + report.format()


@pytest.mark.parametrize("info,dtype,index", CASES)
def test_graph_matches_pynative(info, dtype, index):
    _skip_unavailable(info)
    if not info.supports_graph:
        pytest.skip(f"{info.full_name} does not support graph mode")
    report = run_case(info, dtype, index).graph_vs_pynative()
    assert report.ok, "\n" + report.format()


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("info,err", ERRORS)
def test_error_inputs(info, err, mode):
    _skip_unavailable(info)
    problem = check_error_input(info, err, mode)
    assert problem is None, problem


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
