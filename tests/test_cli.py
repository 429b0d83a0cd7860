"""``mscompat parity`` runs the op database and prints a table; its exit code reflects failures."""

from __future__ import annotations

import subprocess
import sys


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mscompat", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_parity_command_prints_a_passing_table():
    proc = _run("parity", "--op", "weight_reduce_loss", "--dtype", "float32", "-q")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:4] == ["op", "mode", "dtype", "cases"]
    rows = [ln.split() for ln in lines if ln.startswith("losses.weight_reduce_loss")]
    assert {(r[1], r[2]) for r in rows} >= {("pynative", "float32"), ("graph", "float32")}
    assert all(r[-1] == "PASS" for r in rows)
    assert "4 passed, 0 failed" in proc.stdout


def test_unknown_op_is_a_usage_error():
    proc = _run("parity", "--op", "no_such_op")
    assert proc.returncode == 2
    assert "no op matches" in proc.stderr
