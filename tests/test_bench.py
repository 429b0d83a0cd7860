"""The benchmark runner times mscompat and PyTorch on the same input and reports a ratio."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np

from mscompat.testing import SampleInput, get_op
from mscompat.testing.bench import bench_op, format_results


def _small() -> SampleInput:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    return SampleInput((x, (x > 0).astype(np.float32)), name="small")


def test_bench_op_reports_forward_and_backward_with_ratios():
    for name in ("losses.sigmoid_focal_loss[aot]", "losses.sigmoid_focal_loss[composite]"):
        info = dataclasses.replace(get_op(name), bench_input=_small)
        results = bench_op(info, repeat=3)
        assert [r.direction for r in results] == ["forward", "forward+backward"]
        for r in results:
            assert r.op == name and r.elements == 512
            assert r.torch_ms > 0 and r.pynative_ms > 0 and r.graph_ms > 0
            assert r.ratio == r.graph_ms / r.torch_ms
        table = format_results(results, rst=True)
        assert name in table and "graph / torch" in table


def test_ops_command_lists_backends():
    proc = subprocess.run(
        [sys.executable, "-m", "mscompat", "ops"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line.split() for line in proc.stdout.splitlines()]
    focal = [r for r in rows if r and r[0] == "losses.sigmoid_focal_loss"]
    assert {r[1] for r in focal} >= {"aot", "composite"}
    assert sum(1 for r in focal if len(r) > 3 and r[3] == "*") == 1


def test_bench_op_times_a_pynative_only_entry_in_pynative():
    """An entry that cannot run under ms.jit (a data-dependent shape) is timed in PyNative."""
    rng = np.random.default_rng(0)
    small = SampleInput((rng.integers(0, 9, 64).astype(np.float32),), {"return_counts": True})
    info = dataclasses.replace(get_op("indexing.unique[aot]"), bench_input=lambda: small)
    (result,) = bench_op(info, repeat=2)
    assert not result.graph and np.isnan(result.graph_ms) and result.pynative_ms > 0
    assert result.ratio == result.pynative_ms / result.torch_ms
    assert f"{result.ratio:.2f} (pynative)" in format_results([result])
