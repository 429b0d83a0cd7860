"""The Sphinx docs build with -W (warnings are errors) and the examples in docstrings run."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mscompat

ROOT = Path(__file__).resolve().parents[1]


def _modules():
    """Every Python module of the package (not ``__main__``, which runs the CLI)."""
    for info in pkgutil.walk_packages(mscompat.__path__, "mscompat."):
        spec = info.module_finder.find_spec(info.name, None)  # type: ignore[call-arg]
        origin = getattr(spec, "origin", None) or ""
        if origin.endswith(".py") and not info.name.endswith("__main__"):
            yield info.name


MODULES = ["mscompat", *_modules()]
_RAN = {}


@pytest.fixture(scope="module", autouse=True)
def _every_op_registered():
    # A doctest asks the registry about ops that register when their package is imported.
    for name in MODULES:
        importlib.import_module(name)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    """Every ``>>>`` example of every module runs and prints what it says (one process: the
    doctests share the imports)."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    _RAN[name] = result.attempted
    assert result.failed == 0


def test_every_example_line_is_collected():
    """doctest finds as many examples as the sources have ``>>>`` lines (none is hidden where
    the finder does not look, e.g. in a nested function)."""
    for name in MODULES:
        if name not in _RAN:
            pytest.skip("run with test_docstring_examples_run")
        path = Path(importlib.import_module(name).__file__ or "")
        lines = len(re.findall(r"^\s*>>> ", path.read_text(encoding="utf-8"), re.M))
        assert _RAN[name] == lines, f"{name}: {lines} '>>>' lines, {_RAN[name]} examples ran"
    assert sum(_RAN.values()) > 250


def test_sphinx_build_is_clean(tmp_path):
    pytest.importorskip("sphinx")
    out = tmp_path / "html"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx",
            "-W",
            "--keep-going",
            "-b",
            "html",
            "-q",
            str(ROOT / "docs"),
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (out / "api" / "generated" / "mscompat.losses.sigmoid_focal_loss.html").exists()
    matrix = (out / "support_matrix.html").read_text(encoding="utf-8")
    assert "losses.sigmoid_focal_loss" in matrix
    shutil.rmtree(ROOT / "docs" / "api" / "generated", ignore_errors=True)
