"""``mscompat scan``: migration analysis of a PyTorch code base.

Finds every PyTorch API a code base calls (with :mod:`ast`; the code is never imported or run)
and says, for the chosen MindSpore backend, what each becomes: ``native`` (the MindSpore
counterpart that was measured to work), ``differs`` (works with another signature, default or
result, and what), ``mscompat`` (the import line of our drop-in) or ``missing``; plus the
migration guide's risk flags (dynamic shapes, second-order gradients, data processing in
``forward``).

Example:
    >>> from mscompat.scan import scan_source_text
    >>> result = scan_source_text("import torch.nn.functional as F\\ny = F.relu(x)\\n")
    >>> [(u.api, u.verdict.verdict) for u in result.uses]
    [('torch.nn.functional.relu', 'native')]
"""

from __future__ import annotations

import ast
import gc
import multiprocessing
import os
import sys
import time
import tokenize
from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterator, List, Optional, Tuple, Union

from mscompat.scan.apis import TRACKED_ROOTS
from mscompat.scan.findings import CallSite, FileScan, Risk
from mscompat.scan.knowledge import (
    BACKENDS,
    VERDICTS,
    Knowledge,
    MscompatEntry,
    Verdict,
    decide,
    load_knowledge,
    mscompat_entries,
)
from mscompat.scan.parser import scan_source

__all__ = [
    "BACKENDS",
    "DEFAULT_MAX_BYTES",
    "VERDICTS",
    "ApiSummary",
    "CallSite",
    "Risk",
    "ScanResult",
    "Skipped",
    "Use",
    "Verdict",
    "scan",
    "scan_source_text",
]

#: The tensor methods the parser knows, and those it takes for tensor methods by name alone.
Methods = Tuple[FrozenSet[str], FrozenSet[str]]
#: Files above this size are skipped (reported), default 2 MiB.
DEFAULT_MAX_BYTES = 2 * 1024 * 1024
SKIP_DIRS = frozenset(
    {"__pycache__", "node_modules", "site-packages", "venv", ".venv", ".git", ".tox", ".eggs"}
)


@dataclass
class Use:
    """One call site with its verdict."""

    file: str
    site: CallSite
    verdict: Verdict

    @property
    def api(self) -> str:
        return self.site.api

    @property
    def line(self) -> int:
        return self.site.line


@dataclass
class Skipped:
    """A file or folder that was not scanned, and why."""

    path: str
    reason: str


@dataclass
class ApiSummary:
    """All call sites of one API."""

    api: str
    verdict: str
    counterpart: str
    note: str
    sites: List[Tuple[str, int]]
    variants: Dict[str, str]
    level: str = ""


@dataclass
class ScanResult:
    """What :func:`scan` found."""

    root: str
    backend: str
    files: List[str] = field(default_factory=list)
    uses: List[Use] = field(default_factory=list)
    risks: List[Tuple[str, Risk]] = field(default_factory=list)
    skipped: List[Skipped] = field(default_factory=list)
    measured: Dict[str, Dict[str, object]] = field(default_factory=dict)
    backend_measured: bool = True
    seconds: float = 0.0
    warnings: List[str] = field(default_factory=list)

    def apis(self) -> List[ApiSummary]:
        """One row per API, worst verdict of its call sites first, then by number of sites."""
        rows: Dict[str, ApiSummary] = {}
        for u in self.uses:
            row = rows.get(u.api)
            v = u.verdict
            if row is None:
                row = rows[u.api] = ApiSummary(
                    u.api, v.verdict, v.counterpart, v.note, [], {}, v.level
                )
            elif _rank(v.verdict) > _rank(row.verdict):
                row.verdict, row.counterpart, row.note = v.verdict, v.counterpart, v.note
                row.level = v.level
            row.sites.append((u.file, u.line))
            row.variants[v.variant or "default"] = v.verdict
        return sorted(rows.values(), key=lambda r: (-_rank(r.verdict), -len(r.sites), r.api))

    def counts(self) -> Dict[str, int]:
        """Number of distinct APIs per verdict (worst call site)."""
        out = {v: 0 for v in VERDICTS}
        for row in self.apis():
            out[row.verdict] += 1
        return out

    def site_counts(self) -> Dict[str, int]:
        """Number of call sites per verdict."""
        out = {v: 0 for v in VERDICTS}
        for u in self.uses:
            out[u.verdict.verdict] += 1
        return out


def _rank(verdict: str) -> int:
    # missing is the worst, then differs (rewrite by hand), mscompat (change an import)
    return {"native": 0, "unmeasured": 1, "mscompat": 2, "differs": 3, "missing": 4}[verdict]


def _read_source(path: Path) -> str:
    raw = path.read_bytes()
    encoding, _ = tokenize.detect_encoding(BytesIO(raw).readline)
    return raw.decode(encoding)


def _iter_py_files(root: Path, skipped: List[Skipped]) -> Iterator[Path]:
    """Every ``.py`` under ``root``, following symlinks once (a loop is reported)."""
    if root.is_file() or (root.is_symlink() and not root.is_dir()):
        yield root
        return
    seen = set()
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            real = d.resolve(strict=True)
        except (OSError, RuntimeError) as exc:
            skipped.append(Skipped(str(d), f"cannot resolve ({type(exc).__name__})"))
            continue
        if real in seen:
            skipped.append(Skipped(str(d), f"symlink loop (already scanned as {real})"))
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(str(d), f"cannot list: {exc.strerror or exc}"))
            continue
        subdirs = []
        for e in entries:
            try:
                is_dir = e.is_dir()  # follows symlinks
            except OSError:
                is_dir = False
            if is_dir:
                if e.name in SKIP_DIRS or e.name.startswith("."):
                    continue
                subdirs.append(Path(e.path))
            elif e.name.endswith(".py"):
                if e.is_symlink() and not os.path.exists(e.path):
                    skipped.append(Skipped(e.path, "broken symlink"))
                    continue
                yield Path(e.path)
        stack.extend(reversed(subdirs))


def _scan_file(path: Path, max_bytes: int, methods: Methods) -> Union[FileScan, str]:
    try:
        size = path.stat().st_size
    except OSError as exc:
        return f"cannot stat: {exc.strerror or exc}"
    if size > max_bytes:
        return f"too large ({size / 1e6:.1f} MB > {max_bytes / 1e6:.1f} MB limit)"
    try:
        text = _read_source(path)
    except (UnicodeDecodeError, SyntaxError, LookupError) as exc:
        return f"not valid text in its declared encoding ({type(exc).__name__}: {exc})"[:200]
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if "\x00" in text:
        return "cannot parse (the file contains null bytes)"
    # The syntax tree is acyclic and freed by reference counting: the cyclic collector, which
    # its many allocations keep triggering, only costs time here (18% of a 1000-file scan).
    collecting = gc.isenabled()
    gc.disable()
    try:
        if not any(root in text for root in TRACKED_ROOTS):
            ast.parse(text)  # only to report syntax errors: nothing to find without torch names
            return FileScan()
        return scan_source(text, *methods)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"cannot parse ({type(exc).__name__}: {str(exc)[:80]})"
    finally:
        if collecting:
            gc.enable()


def _scan_chunk(args: Tuple[List[Path], int, Methods]) -> List[Union[FileScan, str]]:
    paths, max_bytes, methods = args
    return [_scan_file(p, max_bytes, methods) for p in paths]


def _scan_all(
    files: List[Path], max_bytes: int, methods: Methods
) -> Iterator[Union[FileScan, str]]:
    """Results in the order of ``files``; large trees are parsed in forked worker processes
    (only where fork is safe: before MindSpore, with its threads, is imported)."""
    workers = min(os.cpu_count() or 1, 8)
    if (
        len(files) < 100
        or workers < 2
        or "mindspore" in sys.modules
        or "fork" not in multiprocessing.get_all_start_methods()
    ):
        for f in files:
            yield _scan_file(f, max_bytes, methods)
        return
    size = max(8, len(files) // (workers * 8))
    chunks = [(files[k : k + size], max_bytes, methods) for k in range(0, len(files), size)]
    ctx = multiprocessing.get_context("fork")
    try:
        pool = ctx.Pool(workers)
    except OSError:  # no processes allowed here: do it in this one
        for f in files:
            yield _scan_file(f, max_bytes, methods)
        return
    with pool:
        for part in pool.imap(_scan_chunk, chunks):
            yield from part


def _progress(total: int, enabled: Optional[bool]) -> Any:
    show = enabled if enabled is not None else (total >= 200 and sys.stderr.isatty())
    if not show:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(total=total, unit="file", desc="scanning", file=sys.stderr, leave=False)


def scan(
    path: Union[str, Path],
    backend: str = "CPU",
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Optional[bool] = None,
    knowledge: Optional[Knowledge] = None,
    drop_ins: Optional[Dict[str, List[MscompatEntry]]] = None,
) -> ScanResult:
    """Scan every ``.py`` file under ``path`` (or the file ``path``).

    Args:
        path: a folder or a file.
        backend: ``"CPU"``, ``"GPU"`` or ``"Ascend"``: which column of the knowledge to read.
        max_bytes: files larger than this are skipped and reported.
        progress: show a progress bar (default: on a terminal, for 200 files or more).
        knowledge, drop_ins: override the shipped knowledge / the op database (tests).

    Returns:
        The call sites with verdicts, risk flags, skipped files (never raises for a bad file).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, but got {backend!r}")
    start = time.perf_counter()
    root = Path(path)
    if not root.exists() and not root.is_symlink():
        raise FileNotFoundError(f"no such file or folder: {path}")
    knowledge = knowledge or load_knowledge()
    result = ScanResult(
        str(path), backend, measured=dict(knowledge.measured),
        backend_measured=knowledge.is_measured(backend),
    )  # fmt: skip
    files = list(_iter_py_files(root, result.skipped))
    bar = _progress(len(files), progress)
    methods = (knowledge.tensor_methods, knowledge.tensor_only_methods)
    scans: List[Tuple[str, FileScan]] = []
    for f, out in zip(files, _scan_all(files, max_bytes, methods)):
        rel = str(f.relative_to(root)) if f != root and root in f.parents else str(f)
        if isinstance(out, str):
            result.skipped.append(Skipped(rel, out))
        else:
            result.files.append(rel)
            scans.append((rel, out))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    if drop_ins is None:
        drop_ins = _drop_ins(backend, result) if any(s.calls for _, s in scans) else {}
    cache: Dict[Tuple[str, str], Verdict] = {}
    _local_copies(scans, drop_ins)
    for rel, fs in scans:
        for site in fs.calls:
            ck = (site.api, repr(sorted(site.kwargs.items(), key=lambda kv: kv[0])))
            v = cache.get(ck)
            if v is None:
                v = cache[ck] = decide(site.api, site.kwargs, backend, knowledge, drop_ins)
            result.uses.append(Use(rel, site, v))
        result.risks.extend((rel, r) for r in fs.risks)
    result.seconds = time.perf_counter() - start
    return result


def _drop_ins(backend: str, result: ScanResult) -> Dict[str, List[MscompatEntry]]:
    try:
        return mscompat_entries(backend)
    except Exception as exc:  # noqa: BLE001 - a broken op family must not stop the scan
        result.warnings.append(
            f"mscompat's drop-in table could not be read ({type(exc).__name__}: {exc}); "
            "no mscompat verdicts in this report"
        )
        return {}


def _local_copies(
    scans: List[Tuple[str, FileScan]], drop_ins: Dict[str, List[MscompatEntry]]
) -> None:
    """A function or class defined in the scanned code under the name of a library API that
    mscompat replaces (a copied ``py_sigmoid_focal_loss``) counts as a use of that API."""
    by_short: Dict[str, str] = {}
    for api in drop_ins:
        short = api.rsplit(".", 1)[-1]
        if api.startswith(("mmdet.", "mmcv.", "torchvision.")) and len(short) >= 8:
            by_short.setdefault(short, api)
    if not by_short:
        return
    for _, fs in scans:
        for name, line in fs.definitions:
            full = by_short.get(name)
            if full is not None:
                fs.calls.append(CallSite(full, line, 0, {}, "local-copy"))
        fs.calls.sort(key=lambda c: (c.line, c.col))


def scan_source_text(text: str, backend: str = "CPU", filename: str = "<string>") -> ScanResult:
    """Scan one source text (as :func:`scan` does for a file)."""
    knowledge = load_knowledge()
    result = ScanResult(filename, backend, measured=dict(knowledge.measured))
    result.backend_measured = knowledge.is_measured(backend)
    fs = scan_source(text, knowledge.tensor_methods, knowledge.tensor_only_methods)
    drop_ins = _drop_ins(backend, result) if fs.calls else {}
    result.files.append(filename)
    for site in fs.calls:
        result.uses.append(
            Use(filename, site, decide(site.api, site.kwargs, backend, knowledge, drop_ins))
        )
    result.risks.extend((filename, r) for r in fs.risks)
    return result
