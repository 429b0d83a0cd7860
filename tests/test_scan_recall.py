"""The scan's recall and precision on hand-labelled excerpts, and its verdicts for MindSpore
code and for backends known only from MindSpore's documentation."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest
import tomllib

from mscompat.scan import scan, scan_source_text
from mscompat.scan.knowledge import load_knowledge
from mscompat.scan.report import render

DATA = Path(__file__).parent / "data" / "scan_recall"
LABELS = tomllib.loads((DATA / "labels.toml").read_text(encoding="utf-8"))
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "detector"


@pytest.mark.parametrize("excerpt", sorted(LABELS))
def test_every_labelled_call_site_and_nothing_else(excerpt):
    want = collections.Counter(
        (int(line), api.rstrip("?"), api.endswith("?"))
        for line, apis in LABELS[excerpt].items()
        for api in apis
    )
    result = scan_source_text((DATA / f"{excerpt}.py").read_text(encoding="utf-8"))
    got = collections.Counter((u.line, u.api, u.site.confidence == "name") for u in result.uses)
    assert not want - got, f"missed: {sorted(want - got)}"
    assert not got - want, f"reported but not there: {sorted(got - want)}"


def test_receivers_of_other_libraries_are_not_tensors():
    src = """
import logging
import numpy as np
import torch
log = logging.getLogger(__name__)
def f(boxes):
    a = np.zeros(3)
    a.cumsum()
    log.log(10, "x")
    s = "a,b".split(",")
    n = len(boxes)
    for k in range(n):
        k.bit_length()
    return [b.rsqrt() for b in boxes], [v.cumsum() for v in a]
"""
    uses = [(u.line, u.api, u.site.confidence) for u in scan_source_text(src).uses]
    assert uses == [(14, "torch.Tensor.rsqrt", "name")]


def test_name_only_needs_a_torch_import():
    assert scan_source_text("def f(x):\n    return x.rsqrt()\n").uses == []
    uses = scan_source_text("import torch\ndef f(x):\n    return x.rsqrt()\n").uses
    assert [(u.api, u.site.confidence) for u in uses] == [("torch.Tensor.rsqrt", "name")]


def test_tensor_only_table_is_torch_minus_builtins():
    names = load_knowledge().tensor_only_methods
    assert {"rsqrt", "unbind", "cumsum", "masked_fill", "unique", "gather"} <= names
    # names that builtins or nn.Module also have are left to receivers known to be tensors
    assert not {"sort", "index", "copy", "count", "to", "float", "half", "type", "apply"} & names


def test_mindspore_calls_get_their_backend_verdict():
    src = (DATA / "half_ported.py").read_text(encoding="utf-8")
    cpu = {u.api: u.verdict for u in scan_source_text(src, "CPU").uses}
    # mindspore.Tensor is not an API a port replaces
    assert set(cpu) == {
        "mindspore.nn.Dense", "mindspore.mint.roll", "mindspore.mint.nn.functional.pad",
        "mindspore.ops.sort", "mindspore.mint.cumsum",
    }  # fmt: skip
    for api in ("mindspore.mint.roll", "mindspore.mint.nn.functional.pad", "mindspore.mint.cumsum"):
        v = cpu[api]
        assert v.verdict in ("mscompat", "missing", "differs") and v.level == "measured", (api, v)
        assert "no kernel on this backend" in v.note, v
    # the drop-in of the PyTorch function it stands for, or a MindSpore callable that runs it
    assert cpu["mindspore.mint.roll"].counterpart == "from mscompat.tensor import roll"
    pad = cpu["mindspore.mint.nn.functional.pad"]
    assert pad.verdict == "mscompat", pad
    assert pad.counterpart == "from mscompat.nn.functional import pad", pad
    assert cpu["mindspore.ops.sort"].verdict == "native"
    ascend = {u.api: u.verdict for u in scan_source_text(src, "Ascend").uses}
    assert ascend["mindspore.mint.roll"].verdict == "native"
    assert ascend["mindspore.mint.roll"].level == "documented"
    assert "Ascend" in ascend["mindspore.mint.roll"].note


def test_unmeasured_backends_get_documented_verdicts():
    knowledge = load_knowledge()
    assert "Ascend" not in knowledge.measured
    result = scan(EXAMPLE, backend="Ascend")
    levels = collections.Counter(u.verdict.level for u in result.uses)
    assert levels["documented"] > levels[""], levels
    for u in result.uses:
        if u.verdict.verdict in ("native", "differs", "missing"):
            assert u.verdict.level == "documented", (u.api, u.verdict)
    text = render(result, "table")
    assert "(documented)" in text and "NOT MEASURED" in text


def test_documented_platforms_come_from_mindspore_docstrings():
    documented = load_knowledge().documented
    assert documented["mint.roll"] == ["Ascend", "GPU"]
    assert "CPU" in documented["ops.sort"]
    assert len(documented) > 1000
