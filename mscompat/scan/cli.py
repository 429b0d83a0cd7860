"""The ``mscompat scan`` subcommand."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mscompat.scan.knowledge import BACKENDS

__all__ = ["add_parser", "run"]


def run(args: argparse.Namespace) -> int:
    from mscompat.scan import DEFAULT_MAX_BYTES, scan
    from mscompat.scan.report import exit_code, render

    try:
        result = scan(
            args.path,
            backend=args.backend,
            max_bytes=int(args.max_size_mb * 1024 * 1024)
            if args.max_size_mb
            else DEFAULT_MAX_BYTES,
            progress=False if args.no_progress else None,
        )
    except FileNotFoundError as exc:
        print(f"mscompat scan: {exc}", file=sys.stderr)
        return 2
    text = render(result, args.format, top=args.top)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text if text.endswith("\n") else text + "\n")
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return exit_code(result, args.fail_on or "")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``scan`` to the ``mscompat`` command's subparsers."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "scan",
        help="migration analysis of a PyTorch code base: each API's MindSpore verdict",
        description=(
            "Parse every .py file under PATH (never imported or run), find the PyTorch APIs it "
            "calls and say for each what it becomes on the MindSpore backend: native (the "
            "counterpart, measured), differs (what), mscompat (our drop-in's import line) or "
            "missing; plus risk flags (dynamic shapes, second-order gradients, data processing "
            "inside forward)."
        ),
    )
    p.add_argument("path", help="a folder or a .py file")
    p.add_argument("--backend", default="CPU", choices=list(BACKENDS))
    p.add_argument("--format", default="table", choices=["table", "markdown", "json", "csv"])
    p.add_argument(
        "--fail-on",
        choices=["missing", "differs"],
        help="exit 1 when a call site is missing (or, with 'differs', missing or differs)",
    )
    p.add_argument("--top", type=int, default=15, help="rows in the table's to-do list (0: all)")
    p.add_argument("-o", "--output", help="write the report to this file")
    p.add_argument("--max-size-mb", type=float, default=0, help="skip larger files (default 2)")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.set_defaults(func=run)
    return p
