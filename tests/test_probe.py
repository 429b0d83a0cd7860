"""The API probe (``tools/probe/``): its case table, its scripted cases, and its output.

The knowledge file ``mscompat/scan/data/api_knowledge.json`` is the probe's output; the last test
re-measures every 4th case of the table (every case with ``MSCOMPAT_PROBE_ALL=1``: about 50 s
of CPU on 2 cores, over the suite's time budget) and compares the file with the shipped one.
"""

from __future__ import annotations

import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the probe imports as ``tools.probe`` from the repository root
    sys.path.insert(0, str(ROOT))

pytest.importorskip("tomllib", reason="the probe's case table needs Python >= 3.11 (tomllib)")

from tools.probe import scripted  # noqa: E402
from tools.probe.table import Arr, Case, case_inputs, load_cases  # noqa: E402

SHIPPED = ROOT / "mscompat" / "scan" / "data" / "api_knowledge.json"
CASES = load_cases()
STRIDE = 1 if os.environ.get("MSCOMPAT_PROBE_ALL") == "1" else 4


def _shipped() -> Dict[str, Any]:
    return json.loads(SHIPPED.read_text(encoding="utf-8"))


def test_table_covers_the_knowledge_file() -> None:
    """Every case of the table is an entry of the shipped file, and the other way round."""
    shipped = {
        (api, variant) for api, entry in _shipped()["apis"].items() for variant in entry["variants"]
    }
    table = {(c.api, c.variant) for c in CASES}
    assert table == shipped, (sorted(table - shipped), sorted(shipped - table))
    assert len({c.key for c in CASES}) == len(CASES)


def test_every_case_parses() -> None:
    kinds = set()
    for case in CASES:
        assert isinstance(case, Case) and case.group, case.key
        args, kwargs = case_inputs(case)
        assert len(args) == len(case.args) and kwargs.keys() == case.kwargs.keys(), case.key
        kinds.add("scripted" if case.scripted else "module" if case.is_module else "call")
        if case.is_module:
            assert case.api.startswith("torch.nn."), case.key
        if case.lookup_only:
            assert not case.args and not case.scripted, case.key
    assert kinds == {"scripted", "module", "call"}


def test_scripted_names_resolve() -> None:
    """Each function a case names exists in scripted.py, and each public one there is named."""
    named = {name for case in CASES for name in case.functions()}
    for name in sorted(named):
        assert callable(getattr(scripted, name, None)), f"scripted.py has no function {name}"
    defined = {
        name
        for name, obj in vars(scripted).items()
        if inspect.isfunction(obj) and obj.__module__ == scripted.__name__ and name[0] != "_"
    }
    assert defined <= named, f"functions no case names: {sorted(defined - named)}"
    for case in CASES:
        if case.native or case.torch:
            assert case.scripted, f"{case.key}: native counterparts without a torch function"


def test_inputs_are_seeded() -> None:
    case = next(c for c in CASES if any(isinstance(a, Arr) and a.kind == "box" for a in c.args))
    first, again = case_inputs(case)[0], case_inputs(case)[0]
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    boxes = first[0]
    assert (boxes[:, 2:] > boxes[:, :2]).all()


def test_unknown_key_is_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "cases.toml"
    bad.write_text('[[group]]\nname = "x"\n[[group.case]]\napi = "torch.abs"\nargz = []\n')
    with pytest.raises(ValueError, match="unknown keys"):
        load_cases(bad)


def _without_run_facts(data: Dict[str, Any]) -> Dict[str, Any]:
    """The knowledge without the date and duration of the run that produced it."""
    data = json.loads(json.dumps(data))
    for column in data.get("measured", {}).values():
        column.pop("date", None)
        column.pop("seconds", None)
    return data


def test_regenerated_knowledge_equals_shipped(tmp_path: Path) -> None:
    """Measure the cases again (CPU) and compare with the shipped file, entry by entry."""
    import mindspore as ms
    import torch

    from tools.probe.run import main

    column = _shipped()["measured"]["CPU"]
    if (column["mindspore"], column["torch"]) != (ms.__version__, torch.__version__):
        pytest.skip(
            f"the shipped knowledge was measured with mindspore {column['mindspore']} and torch "
            f"{column['torch']}; this is mindspore {ms.__version__}, torch {torch.__version__}"
        )
    out = tmp_path / "api_knowledge.json"
    argv = ["--device", "CPU", "--quiet", "--out", str(out)]
    if STRIDE > 1:  # the other cases keep their shipped entries
        out.write_text(SHIPPED.read_text(encoding="utf-8"), encoding="utf-8")
        argv += [arg for case in CASES[::STRIDE] for arg in ("--only", case.key)]
    assert main(argv) == 0
    got = _without_run_facts(json.loads(out.read_text(encoding="utf-8")))
    want = _without_run_facts(_shipped())
    differ = []
    for api, entry in got["apis"].items():
        for variant, var in entry["variants"].items():
            shipped = want["apis"].get(api, {}).get("variants", {}).get(variant)
            if shipped != var:
                differ.append(f"{api}({variant}): {json.dumps(var)} != {json.dumps(shipped)}")
    assert not differ, "\n".join(differ)
    assert got == want
