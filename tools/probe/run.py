"""The probe's command line: run the cases in worker processes, merge into the knowledge file.

Crash isolation: cases run in a worker process (``python -m tools.probe.run --worker --ids ...``)
that prints one JSON line per case. The parent starts a fresh worker for the cases left after a
crash (recorded as ``CRASH``), a timeout, or a case whose gradient or jit stage failed (a failed
MindSpore call can poison later calls in the same process).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import inspect
import json
import os
import platform
import selectors
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from tools.probe.documented import tables
from tools.probe.table import T, load_cases

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "mscompat" / "scan" / "data" / "api_knowledge.json"
GENERATED_BY = "tools/probe_apis.py"

__all__ = ["DATA", "main", "measure", "merge"]


def _worker(indices: Sequence[int], device: str) -> None:
    """Measure ``indices`` in this process, printing ``START i`` then ``RESULT {json}`` for each."""
    os.environ.setdefault("GLOG_v", "3")
    import mindspore as ms
    import numpy as np

    ms.set_device(device)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    # an error of an asynchronous launch would otherwise surface in a later, unrelated call
    ms.runtime.launch_blocking()
    with contextlib.suppress(SystemError):  # the first call may absorb a NumPy C-API error
        ms.Tensor(np.ones(2, np.float32)) + 1
    from tools.probe.measure import run_case

    cases = load_cases()
    for idx in indices:
        print(f"START {idx}", flush=True)
        rec = run_case(cases[idx])
        rec["index"] = idx
        print("RESULT " + json.dumps(rec), flush=True)


def _crash(idx: int, why: str) -> Dict[str, Any]:
    case = load_cases()[idx]
    return {
        "index": idx,
        "key": case.key,
        "api": case.api,
        "variant": case.variant,
        "when": case.when,
        "group": case.group,
        "status": "CRASH",
        "counterpart": "",
        "note": why,
        "tried": [],
    }


def measure(
    indices: List[int], device: str = "CPU", timeout: float = 120.0, verbose: bool = False
) -> Dict[int, Dict[str, Any]]:
    """Measure the cases ``indices`` (positions in :func:`load_cases`) in worker processes.

    Args:
        indices: the cases to measure.
        device: MindSpore device target (``CPU``, ``GPU``, ``Ascend``).
        timeout: seconds one case may take before its worker is killed.
        verbose: print one line per case to stderr.

    Returns:
        dict: case index -> record (see :func:`tools.probe.measure.run_case`).
    """
    results: Dict[int, Dict[str, Any]] = {}
    pending = list(indices)
    env = {
        **os.environ,
        "GLOG_v": "3",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        ),
    }
    while pending:
        cmd = [sys.executable, "-m", "tools.probe.run", "--worker", "--device", device]
        cmd += ["--ids", ",".join(map(str, pending))]
        proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
        )
        assert proc.stdout is not None  # for the type checker: stdout=PIPE
        current: Optional[int] = None
        started = False
        deadline = time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        buf = ""
        restart = False
        while not restart:
            if not sel.select(timeout=max(0.1, deadline - time.monotonic())):
                if time.monotonic() > deadline:
                    proc.kill()
                    if current is not None:
                        results[current] = _crash(current, f"timeout after {timeout:.0f}s")
                    break
                continue
            chunk = os.read(proc.stdout.fileno(), 65536).decode()
            if not chunk:
                break
            buf += chunk
            while "\n" in buf and not restart:
                line, buf = buf.split("\n", 1)
                if line.startswith("START "):
                    current = int(line.split()[1])
                    started = True
                    deadline = time.monotonic() + timeout
                elif line.startswith("RESULT "):
                    rec = json.loads(line[7:])
                    results[rec["index"]] = rec
                    current = None
                    if verbose:
                        print(
                            f"  [{len(results)}/{len(indices)}] {rec['key']}: "
                            f"{rec['status']} {rec['counterpart']}",
                            file=sys.stderr,
                            flush=True,
                        )
                    # a failed grad or jit stage can poison later calls: a fresh process
                    if any(t["status"] in ("NO-GRAD", "GRAPH-FAILS") for t in rec["tried"]):
                        proc.kill()
                        restart = True
        proc.wait()
        sel.close()
        proc.stdout.close()
        if not started:
            # it died before its first case (an import error): restarting would loop forever
            raise RuntimeError(
                f"the probe's worker exited before its first case (exit {proc.returncode}); "
                f"run `python -m tools.probe.run --worker --ids {pending[0]}` to see why"
            )
        if current is not None and current not in results:
            results[current] = _crash(current, f"process crashed (exit {proc.returncode})")
        pending = [k for k in pending if k not in results]
    return results


def _torch_params(api: str) -> List[str]:
    """Positional parameter names of the torch API (the scanner maps positional args)."""
    from tools.probe.measure import torch_function

    try:
        if api.startswith(T):
            return []
        obj = torch_function(api)
        sig = inspect.signature(obj.__init__ if isinstance(obj, type) else obj)  # type: ignore[misc]
    except Exception:  # noqa: BLE001 - builtins have no signature, mmcv is not installed
        return []
    names = [
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    return names[1:] if names[:1] == ["self"] else names


def merge(
    data: Dict[str, Any],
    results: Dict[int, Dict[str, Any]],
    device: str,
    seconds: Optional[int],
) -> Dict[str, Any]:
    """Put ``results`` into the knowledge ``data`` as the column of ``device``.

    Args:
        data: the knowledge file's content (``{}`` for a new file); updated in place.
        results: records from :func:`measure`.
        device: the column to replace.
        seconds: the run's duration; None (a partial run) keeps the previous full run's.

    Returns:
        dict: ``data``, with its ``apis`` sorted by name.
    """
    import mindspore as ms
    import torch

    from tools.probe.measure import STATUSES

    data.setdefault("format", 1)
    data["generated_by"] = GENERATED_BY
    data["statuses"] = list(STATUSES)
    data["tensor_methods"] = sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
    data.update(tables())
    measured = data.setdefault("measured", {})
    previous = measured.get(device, {})
    measured[device] = {
        "mindspore": ms.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "date": datetime.date.today().isoformat(),
        "seconds": seconds if seconds is not None else previous.get("seconds", 0),
        "cases": 0,
    }
    apis: Dict[str, Any] = data.setdefault("apis", {})
    for idx in sorted(results):
        rec = results[idx]
        entry = apis.setdefault(rec["api"], {"group": rec["group"], "variants": {}})
        entry["group"] = rec["group"]
        var = entry["variants"].setdefault(rec["variant"], {"when": rec["when"]})
        var["when"] = rec["when"]
        var[device] = {
            "status": rec["status"],
            "counterpart": rec["counterpart"],
            "note": rec["note"],
            "tried": [f"{t['candidate']}={t['status']}" for t in rec["tried"]],
        }
    for name, entry in apis.items():
        params = _torch_params(name)
        if params:
            entry["params"] = params
    data["apis"] = {k: apis[k] for k in sorted(apis)}
    # the number of cases measured on this device, partial runs included
    measured[device]["cases"] = sum(
        device in var for entry in apis.values() for var in entry["variants"].values()
    )
    return data


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The ``tools/probe_apis.py`` command line."""
    ap = argparse.ArgumentParser(description="Measure MindSpore counterparts of PyTorch APIs.")
    ap.add_argument("--device", default="CPU", choices=["CPU", "GPU", "Ascend"])
    ap.add_argument("--only", action="append", help="only cases whose key contains this")
    ap.add_argument("--out", default=str(DATA), help="the knowledge file to update")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--ids", help=argparse.SUPPRESS)
    ap.add_argument("-q", "--quiet", action="store_true")
    ap.add_argument(
        "--tables",
        action="store_true",
        help="only refresh the tables read from the installed packages (documented platforms, "
        "tensor-only method names); measure nothing",
    )
    args = ap.parse_args(argv)
    if args.worker:
        _worker([int(x) for x in args.ids.split(",")], args.device)
        return 0
    if args.tables:
        out = Path(args.out)
        data = json.loads(out.read_text(encoding="utf-8"))
        data.update(tables())
        out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
        print(f"tables refreshed -> {out}")
        return 0
    cases = load_cases()
    only = args.only or []
    indices = [k for k, c in enumerate(cases) if not only or any(s in c.key for s in only)]
    start = time.perf_counter()
    results = measure(indices, args.device, args.timeout, not args.quiet)
    elapsed = time.perf_counter() - start
    out = Path(args.out)
    data: Dict[str, Any] = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    merge(data, results, args.device, None if args.only else round(elapsed))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    counts: Dict[str, int] = {}
    for rec in results.values():
        counts[rec["status"]] = counts.get(rec["status"], 0) + 1
    print(f"{len(results)} cases on {args.device} in {elapsed:.0f}s: {counts} -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
