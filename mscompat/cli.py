"""The ``mscompat`` command line."""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Dict, List, Optional, Sequence, Tuple

__all__ = ["main"]


def _parity(args: argparse.Namespace) -> int:
    try:
        import torch  # noqa: F401
    except ImportError:
        print(
            "mscompat parity needs PyTorch as the reference: pip install 'mscompat[parity]'",
            file=sys.stderr,
        )
        return 2
    import mindspore as ms

    from mscompat.testing import OP_DB
    from mscompat.testing.runner import (
        check_error_input,
        iter_cases,
        parity_in_variants,
        run_case,
        skip_reason,
    )

    ms.set_device(args.device)
    ops = [i for i in OP_DB if not args.op or any(sel in i.full_name for sel in args.op)]
    if not ops:
        print(f"no op matches {args.op}; known: {[i.full_name for i in OP_DB]}", file=sys.stderr)
        return 2
    modes = args.mode or ["pynative", "graph"]
    # (op, mode, dtype) -> [cases, worst forward err, worst grad err, failures]
    rows: Dict[Tuple[str, str, str], List[float]] = {}
    failures: List[str] = []
    start = time.perf_counter()
    runnable = [i for i in ops if not parity_in_variants(i) and not skip_reason(i)]
    cases = list(iter_cases(runnable, args.dtype))
    for n, (info, dtype, index, sample) in enumerate(cases, 1):
        if not args.quiet:
            print(f"\r[{n}/{len(cases)}] {info.full_name} {dtype}".ljust(70), end="", flush=True)
        result = run_case(info, dtype, index, modes)
        if result.unsupported:  # the forced backend does not run this call
            continue
        for mode in modes:
            if mode == "graph" and not info.supports_graph:
                continue
            row = rows.setdefault((info.full_name, mode, dtype), [0, 0.0, 0.0, 0])
            row[0] += 1
            kinds = ["forward", "grad"] if result.has_grad else ["forward"]
            for kind in kinds:
                try:
                    report = result.report(mode, kind)
                except RuntimeError as exc:
                    row[3] += 1
                    failures.append(f"{info.full_name} {dtype} {mode} [{sample.describe()}]: {exc}")
                    break
                worst = max((c.max_abs for c in report.comparisons), default=0.0)
                slot = 1 if kind == "forward" else 2
                row[slot] = max(row[slot], worst)
                if not report.ok:
                    row[3] += 1
                    failures.append(
                        f"{info.full_name} {dtype} {mode} {kind} [{sample.describe()}]\n"
                        + report.format()
                    )
    for info in ops:
        if info.backend:
            continue
        for err in info.error_inputs():
            for mode in modes:
                problem = check_error_input(info, err, mode)
                row = rows.setdefault((info.full_name, mode, "errors"), [0, 0.0, 0.0, 0])
                row[0] += 1
                if problem:
                    row[3] += 1
                    failures.append(f"{info.full_name} {mode} error input: {problem}")
    if not args.quiet:
        print("\r".ljust(72) + "\r", end="")
    table = [("op", "mode", "dtype", "cases", "max fwd err", "max grad err", "result")]
    for (op, mode, dtype), (count, fwd, grad, bad) in rows.items():
        errs = dtype == "errors"
        table.append(
            (
                op,
                mode,
                dtype,
                str(int(count)),
                "-" if errs else f"{fwd:.3g}",
                "-" if errs else f"{grad:.3g}",
                "PASS" if not bad else f"FAIL ({int(bad)})",
            )
        )
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    for i, r in enumerate(table):
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * w for w in widths))
    elapsed = time.perf_counter() - start
    n_pass = sum(1 for r in rows.values() if not r[3])
    print(
        f"\n{n_pass} passed, {len(rows) - n_pass} failed  "
        f"(op x mode x dtype rows, MindSpore {ms.__version__} on {args.device}, {elapsed:.0f}s)"
    )
    for f in failures[: args.show_failures]:
        print("\n" + f)
    return 1 if failures else 0


def _bench(args: argparse.Namespace) -> int:
    import mindspore as ms

    from mscompat.testing import OP_DB
    from mscompat.testing.bench import bench_op, format_results, select

    ms.set_device(args.device)
    entries = select(OP_DB, args.op)
    if not entries:
        print(f"no benchmarked op matches {args.op}", file=sys.stderr)
        return 2
    from mscompat.testing.runner import skip_reason

    results = []
    for info in entries:
        reason = skip_reason(info)
        if reason:
            print(f"skipped {reason}", file=sys.stderr)
            continue
        if not args.quiet:
            print(f"benchmarking {info.full_name} ...", file=sys.stderr, flush=True)
        results.extend(bench_op(info, repeat=args.repeat))
    print(format_results(results))
    if args.rst:
        with open(args.rst, "w", encoding="utf-8") as f:
            f.write(format_results(results, rst=True) + "\n")
    return 0


def ops_table(device: Optional[str] = None) -> List[Tuple[str, str, str, str, str]]:
    """(op, backend, available, chosen, why) for every registered implementation."""
    import mscompat.losses  # noqa: F401 - importing the op families registers them
    import mscompat.shape  # noqa: F401
    from mscompat.custom_ops.registry import (
        BackendNotAvailableError,
        available,
        implementations,
        registered_ops,
        which,
    )

    rows = []
    for op in registered_ops():
        try:
            chosen: Optional[str] = which(op, device=device).backend
        except BackendNotAvailableError:
            chosen = None
        for backend in sorted(implementations(op)):
            ok, why = available(op, backend, device)
            rows.append((op, backend, "yes" if ok else "no", "*" if backend == chosen else "", why))
    return rows


def _ops(args: argparse.Namespace) -> int:
    import mindspore as ms

    ms.set_device(args.device)
    rows = [("op", "backend", "available", "chosen", "why")] + ops_table(args.device)
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for i, r in enumerate(rows):
        print("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4])
        if i == 0:
            print("  ".join("-" * w for w in widths) + "  " + "-" * 3)
    return 0


def _compare_losses(args: argparse.Namespace) -> int:
    from mscompat.port import compare_losses

    try:
        comparison = compare_losses(args.reference, args.candidate, names=args.names)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(comparison.summary())
    if args.csv:
        print(f"wrote {comparison.to_csv(args.csv)}")
    if args.plot:
        try:
            print(f"wrote {comparison.plot(args.plot)}")
        except ImportError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    if args.max_rel is not None and comparison.max_rel() > args.max_rel:
        print(f"FAIL: loss deviates by {comparison.max_rel():.3g} > {args.max_rel:g}")
        return 1
    return 0


def build_parser() -> argparse.ArgumentParser:
    from mscompat import __version__

    parser = argparse.ArgumentParser(
        prog="mscompat", description="PyTorch-compatible ops for MindSpore, checked against PyTorch"
    )
    parser.add_argument("--version", action="version", version=f"mscompat {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    from mscompat.scan.cli import add_parser as add_scan_parser

    add_scan_parser(sub)
    p = sub.add_parser(
        "parity",
        help="run the op database against PyTorch on this machine and print a table",
    )
    p.add_argument("--op", action="append", help="only ops whose name contains this (repeatable)")
    p.add_argument("--dtype", action="append", choices=["float16", "float32", "float64"])
    p.add_argument("--mode", action="append", choices=["pynative", "graph"])
    p.add_argument("--device", default=os.environ.get("MSCOMPAT_DEVICE", "CPU"))
    p.add_argument("--show-failures", type=int, default=5, metavar="N")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=_parity)
    b = sub.add_parser("bench", help="time ops against PyTorch on the same input (ratios)")
    b.add_argument("--op", action="append", help="only ops whose name contains this")
    b.add_argument("--repeat", type=int, default=10)
    b.add_argument("--device", default=os.environ.get("MSCOMPAT_DEVICE", "CPU"))
    b.add_argument("--rst", metavar="PATH", help="also write a reST table (docs)")
    b.add_argument("-q", "--quiet", action="store_true")
    b.set_defaults(func=_bench)
    o = sub.add_parser("ops", help="which implementation of each op runs on this machine, and why")
    o.add_argument("--device", default=os.environ.get("MSCOMPAT_DEVICE", "CPU"))
    o.set_defaults(func=_ops)
    c = sub.add_parser(
        "compare-losses",
        help="per-step deviation of two training runs' losses (CSV logs: step,loss[,grad_norm])",
    )
    c.add_argument("reference", help="the PyTorch run's CSV log")
    c.add_argument("candidate", help="the port's CSV log")
    c.add_argument("--names", nargs=2, default=("torch", "mindspore"), metavar=("REF", "CAND"))
    c.add_argument("--csv", metavar="PATH", help="write the per-step table")
    c.add_argument("--plot", metavar="PATH", help="write a PNG of both curves and their difference")
    c.add_argument(
        "--max-rel", type=float, metavar="X", help="exit 1 if a step's relative deviation exceeds X"
    )
    c.set_defaults(func=_compare_losses)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    os.environ.setdefault("GLOG_v", "3")
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
