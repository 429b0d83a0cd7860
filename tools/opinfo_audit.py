"""Audit PyTorch's own OpInfo samples beyond what the suite runs.

``tests/test_torch_opinfo.py`` strides the samples and skips many dtypes for the suite's time
budget. This tool runs, for every mapped PyTorch OpInfo and every dtype of the suite's list
that PyTorch supports on CPU, **every** sample forward and gradient in PyNative mode, and graph
mode on every ``--graph-stride``-th sample. It skips only dtypes whose skip reason is a real
unsupported case (integer input to a float op, a documented PyTorch abort), never the
suite-time ones.

Each (OpInfo, dtype) job runs in a worker subprocess (MindSpore can crash the process on edge
cases): the parent watches the worker's progress lines, kills it after ``--timeout`` seconds
without progress, records the crash or hang against the job and restarts a worker on the jobs
left. Results go to ``--out`` (JSON lines, one per sample) and a text summary next to it.

Usage::

    PYTHONPATH=$PWD python tools/opinfo_audit.py --out /tmp/audit.jsonl [--only roll einsum]
    PYTHONPATH=$PWD python tools/opinfo_audit.py --summarize /tmp/audit.jsonl

Run it in the background: a full audit takes far longer than a shell's foreground limit.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]

#: Skip reasons naming a real unsupported case (kept skipped); any other reason is suite time.
REAL_SKIP_WORDS = ("integer", "take float", "float tensors", "float only", "abort")

#: Issue 17's listed functions and issue 16's torch losses: audited first.
PRIORITY = [
    "scaled_dot_product_attention",
    "einsum",
    "roll",
    "one_hot",
    "unique",
    "unique_consecutive",
    "nonzero",
    "argwhere",
    "cummax",
    "cummin",
    "repeat_interleave",
    "unfold",
    "take_along_dim",
    "scatter_reduce",
    "index_add",
    "index_copy",
    "index_fill",
    "var",
    "std",
    "var_mean",
    "std_mean",
    "round",
    "isin",
    "quantile",
    "nanquantile",
    "elu",
    "selu",
    "rrelu",
    "alpha_dropout",
    "instance_norm",
    "local_response_norm",
    "rms_norm",
    "embedding",
    "embedding_bag",
    "pairwise_distance",
    "conv_transpose2d",
    "channel_shuffle",
    "lp_pool3d",
    "fractional_max_pool2d",
    "kl_div",
    "soft_margin_loss",
    "multilabel_margin_loss",
    "triplet_margin_loss",
    "multi_margin_loss",
    "huber_loss",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "margin_ranking_loss",
    "cosine_embedding_loss",
    "hinge_embedding_loss",
    "cross_entropy",
    "nll_loss",
]


def _test_module() -> Any:
    sys.path.insert(0, str(ROOT / "tests"))
    import test_torch_opinfo

    return test_torch_opinfo


def _priority(key: str) -> int:
    name = key.replace("nn.functional.", "").split(".")[0]
    return PRIORITY.index(name) if name in PRIORITY else len(PRIORITY)


def jobs(only: Optional[Sequence[str]]) -> Tuple[List[Tuple[str, str]], List[Dict[str, Any]]]:
    """(key, dtype) jobs in priority order, and the dtypes skipped with their real reason."""
    from mscompat.testing.torch_opinfo import supported_dtypes

    mod = _test_module()
    todo: List[Tuple[str, str]] = []
    skipped: List[Dict[str, Any]] = []
    for key in sorted(mod.MAPPED, key=lambda k: (_priority(k), k)):
        info, record = mod.MAPPED[key]
        short = info.name.rpartition(".")[2]
        if only and not any(o in (key, short, key.replace("nn.functional.", "")) for o in only):
            continue
        theirs = supported_dtypes(key)
        for dtype in (d for d in mod.DTYPES if d in theirs):
            reason = record.skip_dtypes.get(dtype, "")
            if reason and any(w in reason for w in REAL_SKIP_WORDS):
                skipped.append({"opinfo": key, "dtype": dtype, "skip": reason})
            else:
                todo.append((key, dtype))
    return todo, skipped


def _emit(row: Dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(row) + "\n")
    sys.stdout.flush()


def _run_job(key: str, dtype: str, graph_stride: int) -> None:
    from mscompat.testing.parity import ParityError, reset_grad_state
    from mscompat.testing.torch_opinfo import check_case, torch_opinfo_cases

    mod = _test_module()
    info = mod.MAPPED[key][0]
    ran = 0
    for case in torch_opinfo_cases([key], dtypes=[dtype]):
        if case.opinfo != key:
            continue
        ran += 1
        modes: Tuple[str, ...] = ("pynative",)
        if case.index % graph_stride == 0:
            modes += ("graph",)
        row: Dict[str, Any] = {
            "opinfo": key,
            "dtype": dtype,
            "index": case.index,
            "modes": list(modes),
            "grad": bool(case.grad_argnums),
            "known": info.known_difference(key, dtype, case.index),
            "sample": case.describe()[:300],
        }
        _emit({"event": "start", **row})
        start = time.perf_counter()
        try:
            report = check_case(case, modes)
            worst = report.worst()
            row["ok"] = True
            if worst is not None:
                row.update(
                    worst=f"{worst.mode} {worst.label}",
                    max_abs=worst.max_abs,
                    atol=worst.tolerance.atol,
                    rtol=worst.tolerance.rtol,
                )
        except ParityError as exc:
            row.update(ok=False, error=str(exc)[-1500:])
        except Exception as exc:  # noqa: BLE001 - the audit records any failure
            row.update(ok=False, error=f"{type(exc).__name__}: {str(exc)[:1200]}")
            reset_grad_state()
        row["seconds"] = round(time.perf_counter() - start, 3)
        _emit({"event": "sample", **row})
    _emit({"event": "done", "opinfo": key, "dtype": dtype, "ran": ran})


def worker(job_list: List[Tuple[str, str]], graph_stride: int) -> None:
    """Run the jobs in this process, writing JSON lines to stdout."""
    for key, dtype in job_list:
        _emit({"event": "job", "opinfo": key, "dtype": dtype})
        _run_job(key, dtype, graph_stride)


def _spawn(job_list: List[Tuple[str, str]], graph_stride: int) -> subprocess.Popen[str]:
    cmd = [sys.executable, __file__, "--worker", json.dumps(job_list)]
    cmd += ["--graph-stride", str(graph_stride)]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, bufsize=1
    )


def _lines(proc: subprocess.Popen[str], timeout: float) -> Iterator[Optional[str]]:
    """The worker's lines; None when none came for ``timeout`` seconds (the worker hangs)."""
    import selectors

    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    while True:
        if not sel.select(timeout):
            yield None
            return
        line = proc.stdout.readline()
        if not line:
            return
        yield line


def audit(
    job_list: List[Tuple[str, str]],
    out: Path,
    timeout: float,
    graph_stride: int,
    per_worker: int = 0,
) -> None:
    """Run the jobs in worker subprocesses, restarting after a crash or hang, and after every
    ``per_worker`` jobs (0: never). A long-lived worker that has compiled thousands of graphs
    can run another function's cached graph (MindSpore 2.10; seen for gaussian_nll_loss, unique
    and unique_consecutive, all clean in a fresh process): ``--jobs-per-worker 1`` avoids it."""
    left = list(job_list)
    with out.open("a") as fh:
        while left:
            proc = _spawn(left[:per_worker] if per_worker else left, graph_stride)
            current: Optional[Tuple[str, str]] = None
            started: Optional[Dict[str, Any]] = None
            hung = False
            for line in _lines(proc, timeout):
                if line is None:
                    hung = True
                    proc.kill()
                    break
                row = json.loads(line)
                if row["event"] == "job":
                    current = (row["opinfo"], row["dtype"])
                    left.remove(current)
                elif row["event"] == "start":
                    started = row
                elif row["event"] in ("sample", "done"):
                    started = None
                    fh.write(line)
                    fh.flush()
            rc = proc.wait()
            if current is not None and (hung or rc != 0):
                what = f"no progress for {timeout:.0f} s (killed)" if hung else f"exit code {rc}"
                crash = dict(started or {"opinfo": current[0], "dtype": current[1], "index": -1})
                crash.update(event="crash", ok=False, error=f"worker crashed: {what}")
                fh.write(json.dumps(crash) + "\n")
                fh.flush()
            elif current is None:
                break  # the worker cannot even start: stop rather than loop


def summarize(path: Path) -> str:
    """A text report: every failing sample, then per-job counts."""
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    fails, lines = [], []
    counts: Dict[Tuple[str, str], List[int]] = {}
    for r in rows:
        if r["event"] == "done":
            continue
        c = counts.setdefault((r["opinfo"], r["dtype"]), [0, 0, 0])
        c[0] += 1
        if not r.get("ok"):
            c[1] += 1
            if r.get("known"):
                c[2] += 1
            else:
                fails.append(r)
    total = sum(c[0] for c in counts.values())
    secs = sum(r.get("seconds", 0.0) for r in rows)
    lines.append(f"{total} samples over {len(counts)} op/dtype jobs, {secs:.0f} s of checks")
    lines.append(f"{len(fails)} unexpected failures (known differences not counted)\n")
    for r in fails:
        lines.append(f"== {r['opinfo']} {r['dtype']} #{r['index']} modes={r.get('modes')}")
        lines.append(f"   {r.get('sample', '')}")
        lines.append("   " + r.get("error", "").strip().replace("\n", "\n   "))
    lines.append("\nper job: samples, failures, known")
    for (key, dtype), (n, bad, known) in sorted(counts.items()):
        lines.append(f"{key:45s} {dtype:8s} {n:5d} {bad:4d} {known:4d}")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", help="OpInfo keys or mscompat op names")
    p.add_argument("--out", type=Path, default=Path("opinfo_audit.jsonl"))
    p.add_argument("--timeout", type=float, default=180.0, help="seconds without progress")
    p.add_argument("--graph-stride", type=int, default=4)
    p.add_argument("--workers", type=int, default=1, help="parallel worker chains")
    p.add_argument("--jobs-per-worker", type=int, default=0, help="restart workers (0: never)")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--summarize", type=Path)
    p.add_argument("--list", action="store_true", help="print the jobs and exit")
    a = p.parse_args(argv)
    if a.worker:
        worker([tuple(j) for j in json.loads(a.worker)], a.graph_stride)
        return 0
    if a.summarize:
        print(summarize(a.summarize))
        return 0
    todo, skipped = jobs(a.only)
    if a.list:
        for key, dtype in todo:
            print(key, dtype)
        for s in skipped:
            print("skip", s["opinfo"], s["dtype"], s["skip"])
        return 0
    outs = [a.out] if a.workers == 1 else [Path(f"{a.out}.{i}") for i in range(a.workers)]
    if a.workers == 1:
        audit(todo, a.out, a.timeout, a.graph_stride, a.jobs_per_worker)
    else:
        import threading

        chains = [todo[i :: a.workers] for i in range(a.workers)]
        threads = [
            threading.Thread(
                target=audit, args=(c, o, a.timeout, a.graph_stride, a.jobs_per_worker)
            )
            for c, o in zip(chains, outs)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    with a.out.with_suffix(".skipped.json").open("w") as fh:
        json.dump(skipped, fh, indent=1)
    for o in outs:
        o.with_suffix(".txt").write_text(summarize(o))
    return 0


if __name__ == "__main__":
    sys.exit(main())
