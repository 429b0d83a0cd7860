"""The public record types behave as documented."""

from __future__ import annotations

import numpy as np

from mscompat.custom_ops import Choice, registered_ops, which
from mscompat.scan import ApiSummary, CallSite, Risk, ScanResult, Skipped, Use, Verdict, scan
from mscompat.testing import (
    Comparison,
    ErrorInput,
    KnownDifference,
    OpInfo,
    ParityReport,
    ReferenceInput,
    SampleInput,
    Tolerance,
    ToleranceOverride,
    TorchOpInfo,
    default_tolerance,
    get_op,
)


def test_tolerance_table_and_overrides():
    assert default_tolerance("float32") == Tolerance(atol=1e-5, rtol=1.3e-6)
    assert default_tolerance("int64") == Tolerance(0.0, 0.0)
    base = get_op("losses.reduce_loss")
    loose = Tolerance(1e-2, 1e-2)
    info = OpInfo(
        name="demo",
        op=base.op,
        ref=base.ref,
        sample_inputs=base.sample_inputs,
        tolerance_overrides=(ToleranceOverride("float16", "grad", loose, "a stated reason"),),
    )
    assert info.tolerance("float16", "grad") == loose
    assert info.tolerance("float16", "forward") == default_tolerance("float16", "forward")


def test_parity_report_worst_and_format():
    tol = Tolerance(1e-5, 1e-5)
    good = Comparison("output[0]", "pynative", "float32", 1e-7, 1e-7, tol, True)
    bad = Comparison("grad[input 0]", "graph", "float32", 0.1, 0.5, tol, False, "1/4 out")
    report = ParityReport([good, bad])
    assert not report.ok and report.worst() is bad
    assert "FAIL (1/4 out)" in report.format()


def test_reference_input_record_is_exact_unless_told():
    ref = ReferenceInput(
        SampleInput((np.ones(2),)), ("aot",), tolerances={"output[0]": Tolerance(1e-3, 0.0)}
    )
    assert ref.tolerance("output[1]") == Tolerance(0.0, 0.0)
    assert ref.tolerance("output[0]").atol == 1e-3 and ref.modes == ("pynative",) and not ref.grad


def test_torch_opinfo_and_known_difference_records():
    entry = get_op("shape.cummax")
    assert TorchOpInfo("cummax") in entry.torch_opinfo and entry.torch_opinfo[0].stride == 1
    known = [k for info in (get_op("shape.grid_sample"),) for k in info.known]
    assert known and all(isinstance(k, KnownDifference) and k.reason for k in known)


def test_error_input_record():
    err = ErrorInput(SampleInput((np.ones(2),)), ValueError, "x")
    assert err.error_type is ValueError and err.sample.describe() == "(2,)"


def test_registry_records():
    assert "losses.sigmoid_focal_loss" in registered_ops()
    choice = which("losses.sigmoid_focal_loss")
    assert isinstance(choice, Choice) and choice.device == "CPU"


def test_scan_result_records(tmp_path):
    (tmp_path / "m.py").write_text(
        "import torch\nimport torch.nn.functional as F\n"
        "def f(x):\n    return F.interpolate(x, scale_factor=2), torch.nonzero(x)\n"
    )
    (tmp_path / "bad.py").write_text("def (:\n")
    result = scan(str(tmp_path))
    assert isinstance(result, ScanResult)
    assert result.uses and all(isinstance(u, Use) for u in result.uses)
    assert all(isinstance(u.site, CallSite) and isinstance(u.verdict, Verdict) for u in result.uses)
    assert all(isinstance(r, ApiSummary) for r in result.apis())
    assert {r.api for r in result.apis()} >= {"torch.nn.functional.interpolate", "torch.nonzero"}
    assert result.risks and all(isinstance(r, Risk) for _, r in result.risks)
    assert [s.path.endswith("bad.py") for s in result.skipped] == [True]
    assert all(isinstance(s, Skipped) for s in result.skipped)
