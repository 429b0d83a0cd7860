"""ruff and mypy, as configured in pyproject.toml, are clean."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "cmd",
    [["ruff", "check", "."], ["ruff", "format", "--check", "."], [sys.executable, "-m", "mypy"]],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_tool_is_clean(cmd):
    if cmd[0] == "ruff" and shutil.which("ruff") is None:
        pytest.skip("ruff not installed (pip install -e '.[dev]')")
    if cmd[0] == sys.executable:
        pytest.importorskip("mypy")
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
