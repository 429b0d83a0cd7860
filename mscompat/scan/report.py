"""Formats of a :class:`~mscompat.scan.ScanResult`: table (terminal), markdown, json, csv."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Dict, Iterator, List, Sequence, Tuple

from mscompat.scan import ScanResult
from mscompat.scan.knowledge import VERDICTS

__all__ = ["FORMATS", "exit_code", "render"]

FORMATS = ("table", "markdown", "json", "csv")
_MEANING = {
    "native": "a MindSpore counterpart works as is on this backend (named)",
    "differs": "works with another signature, default or result (what is said)",
    "mscompat": "use the mscompat drop-in (import line given)",
    "missing": "nothing works yet on this backend",
    "unmeasured": "not measured for this backend / no probe case",
}
_FAIL_ON = {"missing": ("missing",), "differs": ("missing", "differs")}


def exit_code(result: ScanResult, fail_on: str = "") -> int:
    """1 when a call site has a verdict at or beyond ``fail_on`` (``missing`` / ``differs``)."""
    if not fail_on:
        return 0
    bad = _FAIL_ON[fail_on]
    return 1 if any(u.verdict.verdict in bad for u in result.uses) else 0


def _where(sites: Sequence[Any], limit: int = 3) -> str:
    text = ", ".join(f"{f}:{line}" for f, line in sites[:limit])
    return text + (f" (+{len(sites) - limit})" if len(sites) > limit else "")


def _header(result: ScanResult) -> List[str]:
    lines = []
    m = result.measured.get(result.backend)
    if m:
        lines.append(
            f"knowledge: measured on {result.backend} with MindSpore {m.get('mindspore')}, "
            f"torch {m.get('torch')}, {m.get('date')} ({m.get('cases')} probe cases)"
        )
    else:
        done = ", ".join(sorted(result.measured)) or "none"
        lines.append(
            f"knowledge: {result.backend} was NOT MEASURED (measured: {done}); verdicts marked "
            f"'documented' rest on MindSpore's own 'Supported Platforms' statement, judged by "
            f"the {done} measurement -- run `python tools/probe_apis.py --device "
            f"{result.backend}` on such a machine to measure them"
        )
    lines.extend(f"warning: {w}" for w in result.warnings)
    return lines


def _summary_counts(result: ScanResult) -> Dict[str, Any]:
    return {"apis": result.counts(), "call_sites": result.site_counts()}


def render(result: ScanResult, fmt: str = "table", top: int = 10) -> str:
    if fmt == "json":
        return _json(result)
    if fmt == "csv":
        return _csv(result)
    if fmt == "markdown":
        return _markdown(result, top)
    return _table(result, top)


def _json(result: ScanResult) -> str:
    data = {
        "root": result.root,
        "backend": result.backend,
        "backend_measured": result.backend_measured,
        "knowledge": result.measured,
        "warnings": result.warnings,
        "summary": _summary_counts(result),
        "files": result.files,
        "apis": [
            {
                "api": r.api,
                "verdict": r.verdict,
                "counterpart": r.counterpart,
                "note": r.note,
                "call_sites": len(r.sites),
                "level": r.level,
            }
            for r in result.apis()
        ],
        "call_sites": [
            {
                "file": u.file,
                "line": u.line,
                "col": u.site.col,
                "api": u.api,
                "how": u.site.how,
                "verdict": u.verdict.verdict,
                "counterpart": u.verdict.counterpart,
                "variant": u.verdict.variant,
                "status": u.verdict.status,
                "alternative": u.verdict.alternative,
                "note": u.verdict.note,
                "level": u.verdict.level,
                "confidence": u.site.confidence,
            }
            for u in result.uses
        ],
        "risks": [
            {"file": f, "line": r.line, "kind": r.kind, "what": r.what, "detail": r.detail}
            for f, r in result.risks
        ],
        "skipped": [{"path": s.path, "reason": s.reason} for s in result.skipped],
        "seconds": round(result.seconds, 3),
    }
    return _dump(data)


def _dump(data: Dict[str, Any]) -> str:
    """``data`` as JSON, one top-level key per line and one list element per line.

    ``json.dumps(indent=...)`` runs CPython's pure-Python encoder (the C encoder takes no
    indent): 1.35 s of the 1000-file scan's CPU here, against 0.5 s for this layout.
    """
    parts = []
    for key, value in data.items():
        if isinstance(value, list) and value:
            body = ",\n".join("    " + json.dumps(item) for item in value)
            parts.append(f"  {json.dumps(key)}: [\n{body}\n  ]")
        else:
            parts.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(parts) + "\n}"


def _csv(result: ScanResult) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(
        ["kind", "file", "line", "api", "verdict", "counterpart", "variant", "note", "level",
         "confidence"]
    )  # fmt: skip
    for u in result.uses:
        v = u.verdict
        w.writerow(
            ["call", u.file, u.line, u.api, v.verdict, v.counterpart, v.variant, v.note, v.level,
             u.site.confidence]
        )  # fmt: skip
    for f, r in result.risks:
        w.writerow(["risk", f, r.line, r.what, r.kind, "", "", r.detail, "", ""])
    for s in result.skipped:
        w.writerow(["skipped", s.path, "", "", "", "", "", s.reason, "", ""])
    return buf.getvalue()


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 3] + "..."


def _todo(row: Any) -> str:
    if row.verdict == "mscompat":
        return row.counterpart
    if row.verdict == "differs" and row.counterpart:
        return _short(f"{row.counterpart}: {row.note}", 150)
    if row.verdict in ("differs", "missing"):
        return _short(row.note, 150)
    return row.counterpart or row.note


def _verdict(v: Any) -> str:
    """``native`` measured, ``native (documented)``."""
    return f"{v.verdict} (documented)" if v.level == "documented" else v.verdict


def _table(result: ScanResult, top: int) -> str:
    rows = result.apis()
    out: List[str] = []
    out.append(f"mscompat scan {result.root}  (backend {result.backend})")
    out.extend(_header(result))
    out.append(
        f"{len(result.files)} files, {len(result.uses)} call sites of {len(rows)} PyTorch APIs, "
        f"{len(result.risks)} risk flags, {len(result.skipped)} skipped, {result.seconds:.1f}s"
    )
    out.append("")
    counts, sites = result.counts(), result.site_counts()
    out.append("verdict      APIs  sites  meaning")
    for v in VERDICTS:
        out.append(f"{v:<11} {counts[v]:>5}  {sites[v]:>5}  {_MEANING[v]}")
    todo = [r for r in rows if r.verdict in ("missing", "differs", "mscompat")]
    if todo:
        out.append("")
        out.append("To do (worst first):")
        for r in todo[: max(top, 0) or len(todo)]:
            out.append(f"  {_verdict(r):<20} {r.api}  [{len(r.sites)} sites: {_where(r.sites)}]")
            out.append(f"            -> {_todo(r)}")
        if len(todo) > top > 0:
            out.append(f"  ... {len(todo) - top} more (see per-file detail or --format json)")
    if result.risks:
        out.append("")
        out.append("Risk flags (migration guide):")
        for f, rk in result.risks:
            out.append(f"  {rk.kind:<17} {f}:{rk.line}  {rk.what}: {rk.detail}")
    if any(u.site.confidence == "name" for u in result.uses):
        out.append("")
        out.append("API?: a tensor method recognised by its name alone (receiver of unknown type)")
    out.append("")
    out.append("Per file:")
    for f, uses in _uses_by_file(result):
        out.append(f"  {f}")
        for u in uses:
            v = u.verdict
            target = v.counterpart if v.verdict in ("native", "mscompat") else _short(v.note, 70)
            if v.verdict == "differs" and v.counterpart:
                target = f"{v.counterpart}: {_short(v.note, 60)}"
            api = u.api + ("?" if u.site.confidence == "name" else "")
            out.append(f"    {u.line:>5}  {_verdict(v):<21} {api:<42} {target}")
    if result.skipped:
        out.append("")
        out.append("Skipped:")
        for s in result.skipped:
            out.append(f"  {s.path}: {s.reason}")
    return "\n".join(out)


def _uses_by_file(result: ScanResult) -> Iterator[Tuple[str, List[Any]]]:
    """``(file, its call sites)`` for each file with call sites, in the scan's order."""
    by_file: Dict[str, List[Any]] = {}
    for u in result.uses:
        by_file.setdefault(u.file, []).append(u)
    for f in result.files:
        if by_file.get(f):
            yield f, by_file[f]


def _md(text: str) -> str:
    return " ".join(str(text).replace("|", "\\|").split())


_PLAN_INTRO = (
    "One checklist per file. Add the file's import block, change each call site listed, then "
    "work through the migration guide's checks: dynamic shapes (use the static variant named), "
    "second-order gradients, data processing inside the network. Call sites that map to "
    "MindSpore as they are (native) are counted, not listed. `API?`: a tensor method recognised "
    "by its name alone."
)


def _import_block(uses: Sequence[Any]) -> List[str]:
    """``from mscompat.nn.functional import interpolate, max_pool2d``: one line per module."""
    names: Dict[str, List[str]] = {}
    for u in uses:
        line = u.verdict.counterpart if u.verdict.verdict == "mscompat" else ""
        if line.startswith("from mscompat") and " import " in line:
            module, _, name = line[len("from ") :].partition(" import ")
            if name not in names.setdefault(module, []):
                names[module].append(name)
    return [f"from {m} import {', '.join(sorted(n))}" for m, n in sorted(names.items())]


def _plan(file: str, uses: Sequence[Any], risks: Sequence[Any]) -> List[str]:
    out = [f"#### `{file}`", ""]
    block = _import_block(uses)
    if block:
        out += ["Imports to add:", "", "```python", *block, "```", ""]
    native = [u for u in uses if u.verdict.verdict == "native"]
    for u in uses:
        v = u.verdict
        if v.verdict == "native":
            continue
        api = f"`{u.api}`" + ("?" if u.site.confidence == "name" else "")
        basis = " (documented)" if v.level == "documented" else ""
        if v.verdict == "mscompat":
            what = f"use `{v.counterpart}`" if v.counterpart else "use the mscompat drop-in"
        elif v.verdict == "differs" and v.counterpart:
            what = f"`{v.counterpart}` {v.note}"
        else:
            what = v.note
        out.append(f"- [ ] line {u.line}: {api} **{v.verdict}**{basis}: {_md(_short(what, 240))}")
    for rk in risks:
        out.append(f"- [ ] line {rk.line}: check ({rk.kind}) {_md(rk.what)}: {_md(rk.detail)}")
    if native:
        apis = sorted({f"`{u.api}`" for u in native})
        shown = ", ".join(apis[:8]) + (f" and {len(apis) - 8} more" if len(apis) > 8 else "")
        out.append(f"- {len(native)} call sites map to MindSpore as they are: {shown}")
    out.append("")
    return out


def _markdown(result: ScanResult, top: int) -> str:
    rows = result.apis()
    out: List[str] = [f"## Migration analysis: `{result.root}` on MindSpore {result.backend}", ""]
    out.extend(f"*{_md(h)}*" for h in _header(result))
    out.append("")
    out.append(
        f"{len(result.files)} files, {len(result.uses)} call sites of {len(rows)} PyTorch APIs, "
        f"{len(result.risks)} risk flags, {len(result.skipped)} files skipped."
    )
    out += ["", "| verdict | APIs | call sites | meaning |", "| --- | ---: | ---: | --- |"]
    counts, sites = result.counts(), result.site_counts()
    for v in VERDICTS:
        out.append(f"| {v} | {counts[v]} | {sites[v]} | {_MEANING[v]} |")
    out += ["", "### APIs", "", "| API | verdict | sites | use / what differs | where |"]
    out.append("| --- | --- | ---: | --- | --- |")
    for r in rows:
        use = r.counterpart if r.verdict in ("native", "mscompat") else r.note
        if r.verdict == "differs" and r.counterpart:
            use = f"`{r.counterpart}`: {r.note}"
        elif r.verdict in ("native", "mscompat") and use:
            use = f"`{use}`"
        out.append(
            f"| `{r.api}` | **{r.verdict}** | {len(r.sites)} | {_md(_short(use, 300))} "
            f"| {_md(_where(r.sites))} |"
        )
    if result.risks:
        out += [
            "",
            "### Risk flags",
            "",
            "| kind | where | what | detail |",
            "| --- | --- | --- | --- |",
        ]
        for f, rk in result.risks:
            out.append(f"| {rk.kind} | {_md(f)}:{rk.line} | {_md(rk.what)} | {_md(rk.detail)} |")
    out += ["", "### Porting plan", "", _PLAN_INTRO, ""]
    risks_by_file: Dict[str, List[Any]] = {}
    for f, rk in result.risks:
        risks_by_file.setdefault(f, []).append(rk)
    for f, uses in _uses_by_file(result):
        out += _plan(f, uses, risks_by_file.get(f, []))
    if result.skipped:
        out += ["### Skipped", ""]
        out += [f"- `{_md(s.path)}`: {_md(s.reason)}" for s in result.skipped]
    return "\n".join(out).rstrip() + "\n"
