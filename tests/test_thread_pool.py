"""The CPU kernels' thread pool (``mscompat/custom_ops/cpu/parallel.h``), driven from C++.

The kernels' numbers are tested through their ops; this file tests what the pool itself
promises: every chunk runs once, a helper does not share the caller's CPU, and the thread count
follows the CPUs the process may use."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CXX = shutil.which("g++") or shutil.which("c++")

pytestmark = pytest.mark.skipif(
    CXX is None or not hasattr(os, "sched_setaffinity"), reason="needs a C++ compiler and Linux"
)


@pytest.fixture(scope="module")
def driver(tmp_path_factory) -> Path:
    exe = tmp_path_factory.mktemp("pool") / "driver"
    subprocess.run(
        [
            str(CXX),
            "-std=c++17",
            "-O2",
            "-pthread",
            f"-I{ROOT / 'mscompat' / 'custom_ops' / 'cpu'}",
            str(ROOT / "tests" / "data" / "thread_pool_driver.cc"),
            "-o",
            str(exe),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return exe


def _run(exe: Path, mode: str, cpus=None) -> dict:
    def limit() -> None:
        if cpus is not None:
            os.sched_setaffinity(0, cpus)

    env = {k: v for k, v in os.environ.items() if not k.startswith("MSCOMPAT_")}
    proc = subprocess.run(
        [str(exe), mode], capture_output=True, text=True, timeout=120, preexec_fn=limit, env=env
    )
    assert proc.returncode == 0, proc.stderr
    return {k: int(v) for k, v in (item.split("=") for item in proc.stdout.split())}


def test_every_index_once_and_helpers_off_the_callers_cpu(driver):
    got = _run(driver, "cover")
    assert got["bad"] == 0
    if got["cpus"] < 2:
        pytest.skip("one CPU: no helpers")
    # 600 calls of 16 chunks, the caller pinned to each CPU in turn and pausing so that the
    # helpers sleep: before helpers moved off the caller's CPU, a third of their chunks ran on it
    # (the kernel then runs at one thread's speed).
    assert got["helper_chunks"] > 0
    assert got["on_caller_cpu"] * 20 <= got["helper_chunks"], got


def test_thread_count_follows_the_process_cpus(driver):
    allowed = sorted(os.sched_getaffinity(0))
    assert _run(driver, "threads", {allowed[0]})["threads"] == 1
    assert _run(driver, "threads")["threads"] == len(allowed)
