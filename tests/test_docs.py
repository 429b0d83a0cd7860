"""The Sphinx docs build with -W (warnings are errors) and the examples in docstrings run."""

from __future__ import annotations

import doctest
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import mscompat.losses.focal
import mscompat.losses.utils
import mscompat.testing.parity

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "module", [mscompat.losses.focal, mscompat.losses.utils, mscompat.testing.parity]
)
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


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
