"""Verdicts: what a PyTorch API becomes on a MindSpore backend.

Two sources, both read at run time:

* ``data/api_knowledge.json``, written by ``tools/probe_apis.py``, which ran each MindSpore
  counterpart against torch on the backend (forward, gradient, ``ms.jit``); one column per
  backend, absent where that backend was not measured;
* the op database :data:`mscompat.testing.OP_DB` (each entry's ``torch_apis``) and the
  dispatch registry, for the mscompat drop-ins; the import line names the mirror of the
  PyTorch namespace (``mscompat.nn.functional``, ``mscompat.nn``, ``mscompat.tensor``) where
  it holds the op, else the entry's domain package (``import_line``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

__all__ = [
    "BACKENDS",
    "VERDICTS",
    "Knowledge",
    "MscompatEntry",
    "Verdict",
    "load_knowledge",
    "build_mscompat_entries",
    "drop_ins_table",
    "mscompat_entries",
]

BACKENDS = ("CPU", "GPU", "Ascend")
#: Verdicts, best first. ``unmeasured``: not in the knowledge for this backend.
VERDICTS = ("native", "differs", "mscompat", "missing", "unmeasured")
DATA_FILE = Path(__file__).resolve().parent / "data" / "api_knowledge.json"
_STATUS_VERDICT = {
    "OK": "native",
    "NO-GRAD": "differs",
    "GRAPH-FAILS": "differs",
    "DIFFERS": "differs",
    "CPU-UNREGISTERED": "missing",
    "MISSING": "missing",
    "CRASH": "missing",
}
_STATUS_WHAT = {
    "NO-GRAD": "forward matches PyTorch, the gradient does not",
    "GRAPH-FAILS": "works in PyNative, fails or differs under ms.jit",
    "DIFFERS": "the same call is rejected or gives another result",
    "CPU-UNREGISTERED": "no kernel on this backend",
    "MISSING": "no counterpart",
    "CRASH": "the counterpart crashed the process",
}


@dataclass(frozen=True)
class MscompatEntry:
    """An mscompat drop-in for a PyTorch API (from the op database)."""

    name: str
    import_line: str
    dispatch_op: str = ""
    backends: Tuple[str, ...] = ()


@dataclass
class Verdict:
    """What a call site of ``api`` becomes on ``backend``.

    Attributes:
        verdict: one of :data:`VERDICTS`.
        counterpart: the MindSpore callable (native / differs), or the mscompat import line.
        note: what differs, why it is missing, or what was not measured.
        status: the probe's status (``OK``, ``DIFFERS``...) or ``""``.
        variant: the measured variant that matched the call site.
        alternative: for a native verdict, an mscompat import line that also covers it.
        measured_on: the backends whose measurement the verdict rests on.
        level: ``"measured"`` (the probe ran the counterpart on this backend), ``"documented"``
            (MindSpore's docstring lists this backend under "Supported Platforms"; not run),
            or ``""`` (neither: an mscompat drop-in, or nothing known).
    """

    api: str
    verdict: str
    counterpart: str = ""
    note: str = ""
    status: str = ""
    variant: str = ""
    alternative: str = ""
    measured_on: List[str] = field(default_factory=list)
    level: str = ""


def _same(a: Any, b: Any) -> bool:
    if b == "*":
        return a is not None
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


class Knowledge:
    """The measured table, queried per call site."""

    def __init__(self, data: Dict[str, Any]) -> None:
        self.data = data
        self.apis: Dict[str, Any] = data.get("apis", {})
        self.measured: Dict[str, Any] = data.get("measured", {})
        self.tensor_methods = frozenset(data.get("tensor_methods", ()))
        self.tensor_only_methods = frozenset(data.get("tensor_only_methods", ()))
        #: ``{"mint.roll": ["Ascend", "GPU"]}``: MindSpore's own "Supported Platforms"
        self.documented: Dict[str, List[str]] = data.get("documented", {})
        self._by_mindspore: Optional[Dict[str, Dict[str, Tuple[str, str, str]]]] = None

    def is_measured(self, backend: str) -> bool:
        return backend in self.measured

    def _variant(self, entry: Dict[str, Any], kwargs: Dict[str, Any]) -> Tuple[str, Any]:
        params: List[str] = entry.get("params", [])
        named = dict(kwargs)
        for k, pname in enumerate(params):
            if f"#{k}" in kwargs and pname not in named:
                named[pname] = kwargs[f"#{k}"]
        best: Optional[Tuple[str, Any]] = None
        best_n = -1
        for label, var in entry["variants"].items():
            when: Dict[str, Any] = var.get("when", {})
            if all(_same(named.get(k), v) for k, v in when.items()) and len(when) > best_n:
                best, best_n = (label, var), len(when)
        if best is None:
            label = next(iter(entry["variants"]))
            best = (label, entry["variants"][label])
        return best

    def lookup(
        self, api: str, kwargs: Optional[Dict[str, Any]], backend: str
    ) -> Tuple[Optional[str], str, Optional[Dict[str, Any]], str]:
        """(api key used, variant label, measured record for ``backend`` or None, how found)."""
        key = api
        how = ""
        if key not in self.apis and api.startswith("torch.Tensor."):
            alt = "torch." + api[len("torch.Tensor.") :]
            if alt in self.apis:
                key, how = alt, f"measured as {alt}"
        if key not in self.apis and api.startswith("torch.nn.functional."):
            alt = "torch." + api[len("torch.nn.functional.") :]
            if alt in self.apis:
                key, how = alt, f"measured as {alt}"
        entry = self.apis.get(key)
        if entry is None:
            return None, "", None, ""
        label, var = self._variant(entry, kwargs or {})
        return key, label, var.get(backend), how

    def platforms(self, name: str) -> Tuple[List[str], str]:
        """MindSpore's documented platforms of a counterpart (``mint.roll``), and the name
        whose docstring said so (a ``Tensor.X`` method is documented as ``ops.X``)."""
        if name in self.documented:
            return self.documented[name], name
        if name.startswith("Tensor."):
            for proxy in ("ops." + name[len("Tensor.") :], "mint." + name[len("Tensor.") :]):
                if proxy in self.documented:
                    return self.documented[proxy], proxy
        return [], ""

    def by_mindspore(self) -> Dict[str, Dict[str, Tuple[str, str, str]]]:
        """``{MindSpore name: {backend: (status, PyTorch API, note)}}`` over every candidate the
        probe ran (``mint.roll`` tried for ``torch.roll``): the worst status over the variants,
        and the PyTorch function it stood in for (a ``torch.X`` before a ``torch.Tensor.X``)."""
        if self._by_mindspore is not None:
            return self._by_mindspore
        order = ["OK", "NO-GRAD", "GRAPH-FAILS", "DIFFERS", "CPU-UNREGISTERED", "MISSING", "CRASH"]
        out: Dict[str, Dict[str, Tuple[str, str, str]]] = {}
        for api, entry in self.apis.items():
            for var in entry["variants"].values():
                for backend in BACKENDS:
                    rec = var.get(backend)
                    if not rec:
                        continue
                    for tried in rec.get("tried", []):
                        cand, _, status = tried.partition("=")
                        if status not in order:
                            continue
                        note = rec.get("note", "") if cand == rec.get("counterpart") else ""
                        slot = out.setdefault(cand, {})
                        prev = slot.get(backend)
                        if prev is None:
                            slot[backend] = (status, api, note)
                            continue
                        worse = order.index(status) > order.index(prev[0])
                        better_api = prev[1].startswith("torch.Tensor.") and not api.startswith(
                            "torch.Tensor."
                        )
                        slot[backend] = (
                            status if worse else prev[0],
                            api if better_api else prev[1],
                            note if worse else prev[2],
                        )
        self._by_mindspore = out
        return out

    def other_backends(self, key: str, label: str, backend: str) -> Dict[str, Any]:
        var = self.apis[key]["variants"][label]
        return {b: var[b] for b in BACKENDS if b != backend and b in var}

    def worst_variant(self, api: str, backend: str) -> Optional[Dict[str, Any]]:
        entry = self.apis.get(api)
        if not entry:
            return None
        recs = [v[backend] for v in entry["variants"].values() if backend in v]
        order = ["OK", "NO-GRAD", "GRAPH-FAILS", "DIFFERS", "CPU-UNREGISTERED", "MISSING", "CRASH"]
        return max(recs, key=lambda r: order.index(r["status"]), default=None)


@lru_cache(maxsize=4)
def _load(path: str) -> Knowledge:
    with open(path, encoding="utf-8") as f:
        return Knowledge(json.load(f))


def load_knowledge(path: Optional[str] = None) -> Knowledge:
    """The knowledge file shipped with the package (or ``path``)."""
    return _load(str(path or DATA_FILE))


#: The drop-in table (:func:`build_mscompat_entries` for every backend), generated from the op
#: database by ``python tools/generate.py``; ``tests/test_scan.py`` fails when it differs
#: from the op database.
DROP_INS_FILE = Path(__file__).resolve().parent / "data" / "drop_ins.json"


def build_mscompat_entries(backend: str) -> Dict[str, List[MscompatEntry]]:
    """``{torch api: [MscompatEntry...]}`` from the op database itself (imports MindSpore and
    every op module: about 3 s of CPU here, which is why :func:`mscompat_entries` reads the
    generated table instead).

    Raises:
        Exception: whatever importing the op database raises.
    """
    from mscompat._namespaces import mirror_import_line
    from mscompat.testing.db import OP_DB

    try:
        from mscompat.custom_ops import registry
    except Exception:  # noqa: BLE001
        registry = None  # type: ignore[assignment]
    out: Dict[str, List[MscompatEntry]] = {}
    for info in OP_DB:
        if info.variant or info.backend:
            continue
        backends: Tuple[str, ...] = ()
        if info.dispatch_op and registry is not None:
            try:
                impls = registry.implementations(info.dispatch_op)
                backends = tuple(
                    b for b, group in impls.items() if any(backend in i.devices for i in group)
                )
            except Exception:  # noqa: BLE001
                backends = ()
        for api in info.torch_apis:
            # the mirror shaped like the PyTorch namespace where one holds the op
            # (``from mscompat.nn.functional import interpolate``), else the domain package
            line = mirror_import_line(api, info.op) or info.import_line
            entry = MscompatEntry(info.name, line, info.dispatch_op, backends)
            lst = out.setdefault(api, [])
            if all(e.name != entry.name for e in lst):
                lst.append(entry)
    return out


def drop_ins_table() -> Dict[str, Dict[str, List[List[Any]]]]:
    """The content of :data:`DROP_INS_FILE`, built now from the op database."""
    return {
        b: {
            api: [[e.name, e.import_line, e.dispatch_op, list(e.backends)] for e in entries]
            for api, entries in sorted(build_mscompat_entries(b).items())
        }
        for b in BACKENDS
    }


@lru_cache(maxsize=1)
def _drop_ins_file() -> Dict[str, Dict[str, List[List[Any]]]]:
    with open(DROP_INS_FILE, encoding="utf-8") as f:
        data: Dict[str, Dict[str, List[List[Any]]]] = json.load(f)
    return data


def mscompat_entries(backend: str) -> Dict[str, List[MscompatEntry]]:
    """``{torch api: [MscompatEntry...]}``: mscompat's drop-ins for ``backend``, from the table
    generated from the op database (:data:`DROP_INS_FILE`; the scan needs neither MindSpore nor
    the op modules).

    Raises:
        OSError, ValueError, KeyError: the table is missing or unreadable
            (:func:`mscompat.scan.scan` reports it and goes on without mscompat verdicts).
    """
    table = _drop_ins_file()[backend]
    return {
        api: [MscompatEntry(n, line, op, tuple(bs)) for n, line, op, bs in rows]
        for api, rows in table.items()
    }


def decide(
    api: str,
    kwargs: Optional[Dict[str, Any]],
    backend: str,
    knowledge: Knowledge,
    drop_ins: Dict[str, List[MscompatEntry]],
) -> Verdict:
    """The verdict for one call site: of a PyTorch-side API, or of a MindSpore one
    (``mindspore.mint.roll`` in a half-ported code base)."""
    if api.startswith("mindspore."):
        verdict = decide_mindspore(api, backend, knowledge, drop_ins)
    else:
        verdict = _decide(api, kwargs, backend, knowledge, drop_ins)
    if not verdict.level and backend in verdict.measured_on:
        verdict.level = "measured"
    return verdict


_FAILS = ("CPU-UNREGISTERED", "MISSING", "CRASH")


def _torch_name(name: str) -> str:
    """The PyTorch function a MindSpore name mirrors by spelling: ``mint.nn.functional.pad`` ->
    ``torch.nn.functional.pad``, ``ops.roll`` -> ``torch.roll``."""
    for ms_prefix, torch_prefix in (
        ("mint.nn.functional.", "torch.nn.functional."),
        ("mint.nn.", "torch.nn."),
        ("mint.linalg.", "torch.linalg."),
        ("mint.special.", "torch.special."),
        ("mint.", "torch."),
        ("ops.", "torch."),
        ("nn.", "torch.nn."),
        ("Tensor.", "torch.Tensor."),
    ):
        if name.startswith(ms_prefix):
            return torch_prefix + name[len(ms_prefix) :]
    return ""


def _working_counterpart(knowledge: Knowledge, torch_api: str, backend: str, not_this: str) -> str:
    """A MindSpore callable measured to run ``torch_api`` correctly on ``backend``, if any."""
    entry = knowledge.apis.get(torch_api)
    if not entry:
        return ""
    for var in entry["variants"].values():
        rec = var.get(backend)
        if rec and rec.get("status") == "OK" and rec.get("counterpart") != not_this:
            return str(rec.get("counterpart", ""))
    return ""


def decide_mindspore(
    api: str, backend: str, knowledge: Knowledge, drop_ins: Dict[str, List[MscompatEntry]]
) -> Verdict:
    """The verdict for a MindSpore call (``mindspore.mint.roll``) on ``backend``: measured
    where the probe ran it there, else as MindSpore documents it; a call that fails gets the
    mscompat drop-in of the PyTorch function it stands for."""
    key = api[len("mindspore.") :]
    runs = knowledge.by_mindspore().get(key, {})
    measured = runs.get(backend)
    torch_api = (measured or next(iter(runs.values()), ("", "", "")))[1] or _torch_name(key)
    ours = drop_ins.get(torch_api) or []
    line = ours[0].import_line if ours else ""
    instead = f"; use `{line}`" if line else ""
    if measured is not None:
        status, _, note = measured
        what = _STATUS_WHAT.get(status, status)
        if status == "OK":
            return Verdict(
                api, "native", api, f"measured on {backend} against {torch_api}", status,
                alternative=line, measured_on=[backend],
            )  # fmt: skip
        if status in _FAILS:
            working = _working_counterpart(knowledge, torch_api, backend, key)
            if not line and working:  # another MindSpore callable runs it here
                return Verdict(
                    api, "differs", _qualify(working),
                    f"{key}: {what} ({backend}, measured); {_qualify(working)} runs "
                    f"{torch_api} there (measured)", status, measured_on=[backend],
                )  # fmt: skip
            return Verdict(
                api, "mscompat" if line else "missing", line,
                f"{key}: {what} ({backend}, measured){instead}", status, measured_on=[backend],
            )  # fmt: skip
        against = f"{what} (against {torch_api}){': ' + note if note else ''}"
        if status == "DIFFERS":  # it runs; called as PyTorch's function, it differs
            return Verdict(
                api, "native", api, f"runs on {backend}; {against}", status, alternative=line,
                measured_on=[backend],
            )  # fmt: skip
        return Verdict(
            api, "differs", api, against + instead, status, alternative=line,
            measured_on=[backend],
        )  # fmt: skip
    platforms, source = knowledge.platforms(key)
    if platforms:
        listed = ", ".join(platforms)
        if backend in platforms:
            return Verdict(
                api, "native", api,
                f"MindSpore documents {source} for {listed} (not measured on {backend})",
                alternative=line, level="documented",
            )  # fmt: skip
        return Verdict(
            api, "mscompat" if line else "missing", line,
            f"MindSpore documents {source} for {listed} only, not {backend}{instead}",
            level="documented",
        )  # fmt: skip
    return Verdict(
        api,
        "unmeasured",
        "",
        "neither measured nor documented (no Supported Platforms line in its docstring)",
    )


def _documented(
    api: str, key: str, label: str, backend: str, knowledge: Knowledge, line: str, runs: str
) -> Optional[Verdict]:
    """For a backend with no measured column: the first candidate the probe tried (elsewhere)
    that MindSpore documents for ``backend``, judged by what that measurement found."""
    others = knowledge.other_backends(key, label, backend)
    if not others:
        return None
    seen, rec = next(iter(others.items()))
    cands = [c.partition("=")[0] for c in rec.get("tried", [])] or [rec.get("counterpart", "")]
    statuses = {c.partition("=")[0]: c.partition("=")[2] for c in rec.get("tried", [])}
    named = []
    for cand in cands:
        platforms, source = knowledge.platforms(cand)
        if not platforms:
            continue
        named.append(f"{source}: {', '.join(platforms)}")
        if backend not in platforms:
            continue
        status = statuses.get(cand, rec.get("status", ""))
        doc = f"MindSpore documents {source} for {', '.join(platforms)}; not measured on {backend}"
        if status in ("OK",) + _FAILS:
            if status == "CPU-UNREGISTERED" or status == "OK":
                return Verdict(
                    api, "native", _qualify(cand), doc + f" ({seen}: {status})", "", label,
                    line, level="documented",
                )  # fmt: skip
            continue
        what = _STATUS_WHAT.get(status, status)
        if line:
            return Verdict(
                api, "mscompat", line, f"{_qualify(cand)} {what} (measured on {seen}){runs}",
                "", label, level="documented",
            )  # fmt: skip
        note = rec.get("note", "")
        return Verdict(
            api, "differs", _qualify(cand), f"{what} (measured on {seen}): {note}; {doc}", "",
            label, level="documented",
        )  # fmt: skip
    if line:
        return Verdict(api, "mscompat", line, f"covered by mscompat{runs}", "", label)
    if named:
        return Verdict(
            api, "missing", "", f"no counterpart documented for {backend} ({'; '.join(named)})",
            "", label, level="documented",
        )  # fmt: skip
    return None


def _decide(
    api: str,
    kwargs: Optional[Dict[str, Any]],
    backend: str,
    knowledge: Knowledge,
    drop_ins: Dict[str, List[MscompatEntry]],
) -> Verdict:
    key, label, rec, how = knowledge.lookup(api, kwargs, backend)
    ours = drop_ins.get(api) or (drop_ins.get(key) if key else None) or []
    mscompat_line = ours[0].import_line if ours else ""
    runs = f" (runs: {', '.join(ours[0].backends)})" if ours and ours[0].backends else ""
    if key is not None and rec is not None and rec["status"] in ("UNVERIFIED", "ERROR"):
        if ours:
            return Verdict(
                api, "mscompat", mscompat_line, f"covered by mscompat{runs}", rec["status"], label,
                measured_on=[backend],
            )  # fmt: skip
        return Verdict(
            api, "unmeasured", _qualify(rec.get("counterpart", "")), rec.get("note", ""),
            rec["status"], label, measured_on=[backend],
        )  # fmt: skip
    if key is not None and rec is not None:
        status = rec["status"]
        verdict = _STATUS_VERDICT.get(status, "missing")
        note = rec.get("note", "")
        if how:
            note = f"{how}; {note}" if note else how
        counterpart = rec.get("counterpart", "")
        if verdict == "native":
            return Verdict(
                api, "native", _qualify(counterpart), note, status, label, mscompat_line,
                [backend],
            )  # fmt: skip
        if ours:
            why = _STATUS_WHAT.get(status, status)
            return Verdict(
                api,
                "mscompat",
                mscompat_line,
                f"native: {status} ({why}){': ' + _qualify(counterpart) if counterpart else ''}"
                + runs,
                status,
                label,
                measured_on=[backend],
            )
        if verdict == "differs":
            what = _STATUS_WHAT[status]
            return Verdict(
                api, "differs", _qualify(counterpart), f"{what}: {note}" if note else what,
                status, label, measured_on=[backend],
            )  # fmt: skip
        what = _STATUS_WHAT.get(status, status)
        return Verdict(
            api, "missing", _qualify(counterpart), f"{what}: {note}" if note else what, status,
            label, measured_on=[backend],
        )  # fmt: skip
    if key is not None:
        documented = _documented(api, key, label, backend, knowledge, mscompat_line, runs)
        if documented is not None:
            return documented
    if ours:
        note = "covered by mscompat" + runs
        if key is not None:
            note += f"; not measured natively on {backend}"
        return Verdict(api, "mscompat", mscompat_line, note, "", label)
    if key is not None:
        others = knowledge.other_backends(key, label, backend)
        seen = "; ".join(
            f"{b}: {r['status']} {_qualify(r.get('counterpart', ''))}".rstrip()
            for b, r in others.items()
        )
        return Verdict(
            api, "unmeasured", "", f"not measured on {backend}" + (f" ({seen})" if seen else ""),
            "", label, measured_on=sorted(others),
        )  # fmt: skip
    return Verdict(api, "unmeasured", "", "not in the knowledge base (no probe case)")


def _qualify(counterpart: str) -> str:
    """``ops.sort`` -> ``mindspore.ops.sort`` (labels of adapted calls are kept)."""
    if not counterpart:
        return ""
    if counterpart.startswith(("mint.", "ops.", "nn.")):
        return "mindspore." + counterpart
    if counterpart.startswith("Tensor."):
        return "mindspore." + counterpart
    return counterpart
