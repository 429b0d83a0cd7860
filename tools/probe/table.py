"""The probe's case table: ``cases.toml`` read into :class:`Case` objects, and their inputs.

The table is data: every value in it is a TOML literal, a tensor spec such as ``{f = [4, 6]}``,
a dtype ``{dtype = "float16"}`` or a tuple ``{tuple = [1, 1]}``. Code that a case needs (torch
and MindSpore sides of scripted cases, adapted calls, NumPy references) lives in
:mod:`tools.probe.scripted` and is named by function.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the probe needs Python 3.11's tomllib
    tomllib = None

__all__ = ["CASES_FILE", "Arr", "Case", "DType", "Named", "case_inputs", "load_cases"]

CASES_FILE = Path(__file__).resolve().parent / "cases.toml"
F = "torch.nn.functional."
T = "torch.Tensor."
NN = "torch.nn."
#: Tensor kinds of the table: see the comment at the top of ``cases.toml``.
KINDS = ("f", "w", "p", "u", "i", "b", "s", "box")
_CASE_KEYS = {
    "api", "variant", "args", "kwargs", "init", "init_kwargs", "when", "grad", "values", "jit",
    "hint", "extra_candidates", "reference", "lookup_only", "torch", "native", "adapted",
}  # fmt: skip


@dataclass(frozen=True)
class Arr:
    """A seeded input array: ``kind`` (one of :data:`KINDS`), ``shape``, ``hi`` for ``i``."""

    shape: Tuple[int, ...]
    kind: str = "f"
    hi: int = 4


@dataclass(frozen=True)
class DType:
    """A dtype argument: ``torch.<name>`` on the torch side, ``mindspore.<name>`` on the other."""

    name: str


@dataclass(frozen=True)
class Named:
    """A candidate written as code: ``label`` in the report, ``fn`` in :mod:`scripted`."""

    label: str
    fn: str


@dataclass(frozen=True)
class Case:
    """One probe: a PyTorch API called one way.

    Attributes:
        api: fully qualified PyTorch name (``torch.nn.functional.interpolate``).
        group: topic, for the report.
        args: positional inputs (:class:`Arr` become tensors, :class:`DType` dtypes).
        kwargs: keyword inputs (never tensors).
        variant: a label for this way of calling it (``""`` for the plain call).
        when: keyword arguments of the call sites this variant describes.
        init: for a ``torch.nn`` Module class, the constructor's positional arguments.
        init_kwargs: ... and its keyword arguments.
        grad: check gradients of the float32 inputs.
        values: compare values (False for random ops: shape and dtype only).
        jit: when not empty, the jit stage is not run and this says why.
        hint: one sentence explaining a difference, put first in the note when not OK.
        extra_candidates: more MindSpore names tried with the same call.
        reference: a NumPy reference in :mod:`scripted` standing in for torch.
        lookup_only: only look the name up.
        torch: a scripted case's torch function in :mod:`scripted`.
        native: a scripted case's MindSpore counterparts.
        adapted: adapted calls; one that passes makes the status DIFFERS.
    """

    api: str
    group: str
    args: Tuple[Any, ...] = ()
    kwargs: Dict[str, Any] = field(default_factory=dict)
    variant: str = ""
    when: Dict[str, Any] = field(default_factory=dict)
    init: Tuple[Any, ...] = ()
    init_kwargs: Dict[str, Any] = field(default_factory=dict)
    grad: bool = True
    values: bool = True
    jit: str = ""
    hint: str = ""
    extra_candidates: Tuple[str, ...] = ()
    reference: str = ""
    lookup_only: bool = False
    torch: str = ""
    native: Tuple[Named, ...] = ()
    adapted: Tuple[Named, ...] = ()

    @property
    def key(self) -> str:
        """``api(variant)``, or ``api`` for the plain call."""
        return f"{self.api}({self.variant})" if self.variant else self.api

    @property
    def scripted(self) -> bool:
        """A case written as code on both sides (containers, optimizers, contexts)."""
        return bool(self.torch)

    @property
    def is_module(self) -> bool:
        """A ``torch.nn`` Module class (constructed, then called)."""
        name = self.api.rsplit(".", 1)[-1]
        return self.api.startswith(NN) and not self.api.startswith(F) and name[:1].isupper()

    @property
    def is_method(self) -> bool:
        """A ``torch.Tensor`` method (called on the first input)."""
        return self.api.startswith(T)

    def functions(self) -> List[str]:
        """Names of every :mod:`scripted` function this case refers to."""
        names = [self.torch, self.reference] + [n.fn for n in self.native + self.adapted]
        return [n for n in names if n]


def _value(v: Any, where: str) -> Any:
    """A TOML value of the table as the probe's value (spec, dtype, tuple, list or literal)."""
    if isinstance(v, list):
        return [_value(x, where) for x in v]
    if not isinstance(v, dict):
        return v
    if set(v) == {"dtype"}:
        return DType(str(v["dtype"]))
    if set(v) == {"tuple"}:
        return tuple(_value(x, where) for x in v["tuple"])
    kinds = [k for k in v if k in KINDS]
    if len(kinds) != 1 or set(v) - {kinds[0], "hi"}:
        raise ValueError(
            f"{where}: cannot read the value {v!r} (expected one tensor kind of {KINDS}, "
            "{dtype = ...} or {tuple = [...]})"
        )
    kind = kinds[0]
    return Arr(tuple(int(n) for n in v[kind]), kind, int(v.get("hi", 4)))


def _holds_tensor(v: Any) -> bool:
    return isinstance(v, Arr) or (isinstance(v, list) and any(isinstance(x, Arr) for x in v))


def _when(v: Any) -> Any:
    # the knowledge file stores ``when`` as JSON: a tuple written {tuple = [...]} is a list there
    if isinstance(v, dict) and set(v) == {"tuple"}:
        return [_when(x) for x in v["tuple"]]
    return v


def _named(items: Any, where: str) -> Tuple[Named, ...]:
    out = []
    for item in items:
        if not isinstance(item, dict) or set(item) != {"label", "fn"}:
            raise ValueError(f"{where}: expected {{label = ..., fn = ...}}, got {item!r}")
        out.append(Named(str(item["label"]), str(item["fn"])))
    return tuple(out)


def _case(api: str, group: str, raw: Dict[str, Any]) -> Case:
    where = f"{api}({raw.get('variant', '')})"
    unknown = set(raw) - _CASE_KEYS
    if unknown:
        raise ValueError(f"{where}: unknown keys {sorted(unknown)}")
    kwargs = {k: _value(v, where) for k, v in raw.get("kwargs", {}).items()}
    if any(_holds_tensor(v) for v in kwargs.values()):
        raise ValueError(f"{where}: tensors go in args, not kwargs")
    return Case(
        api=api,
        group=group,
        args=tuple(_value(a, where) for a in raw.get("args", [])),
        kwargs=kwargs,
        variant=str(raw.get("variant", "")),
        when={k: _when(v) for k, v in raw.get("when", {}).items()},
        init=tuple(_value(a, where) for a in raw.get("init", [])),
        init_kwargs={k: _value(v, where) for k, v in raw.get("init_kwargs", {}).items()},
        grad=bool(raw.get("grad", True)),
        values=bool(raw.get("values", True)),
        jit=str(raw.get("jit", "")),
        hint=str(raw.get("hint", "")),
        extra_candidates=tuple(raw.get("extra_candidates", ())),
        reference=str(raw.get("reference", "")),
        lookup_only=bool(raw.get("lookup_only", False)),
        torch=str(raw.get("torch", "")),
        native=_named(raw.get("native", []), where),
        adapted=_named(raw.get("adapted", []), where),
    )


def load_cases(path: Optional[Path] = None) -> List[Case]:
    """Read the case table, in file order (a case's index is its position here).

    Args:
        path: the TOML file; default :data:`CASES_FILE`.

    Returns:
        list[Case]: one case per API of every ``[[group.case]]`` entry.

    Raises:
        ValueError: an entry with an unknown key or a value the table cannot express.
    """
    if tomllib is None:  # pragma: no cover
        raise RuntimeError("the probe's case table needs Python >= 3.11 (tomllib)")
    with open(path or CASES_FILE, "rb") as fh:
        data = tomllib.load(fh)
    cases: List[Case] = []
    for group in data.get("group", []):
        for raw in group.get("case", []):
            apis = raw["api"] if isinstance(raw["api"], list) else [raw["api"]]
            cases.extend(_case(api, group["name"], raw) for api in apis)
    keys = [c.key for c in cases]
    dupes = sorted({k for k in keys if keys.count(k) > 1})
    if dupes:
        raise ValueError(f"cases measured twice: {dupes}")
    return cases


def _array(a: Arr, rng: np.random.Generator) -> np.ndarray:
    if a.kind == "u" and a.shape[-1] != 2:
        return rng.random(a.shape).astype(np.float32)
    if a.kind == "u":  # a sampling grid (x, y) for grid_sample, inside the image
        return rng.uniform(-0.9, 0.9, a.shape).astype(np.float32)
    if a.kind == "w":
        n = int(np.prod(a.shape))
        return rng.permutation(np.linspace(-4, 4, n)).astype(np.float32).reshape(a.shape)
    if a.kind == "f":
        return rng.standard_normal(a.shape).astype(np.float32)
    if a.kind == "p":
        return (rng.random(a.shape) + 0.5).astype(np.float32)
    if a.kind == "i":
        return rng.integers(0, a.hi, a.shape).astype(np.int64)
    if a.kind == "b":
        return rng.random(a.shape) > 0.5
    if a.kind == "s":
        return np.sort(rng.standard_normal(a.shape).astype(np.float32), axis=-1)
    if a.kind == "box":
        xy = rng.random((a.shape[0], 2)).astype(np.float32) * 10
        wh = rng.random((a.shape[0], 2)).astype(np.float32) * 6 + 1
        return np.concatenate([xy, xy + wh], axis=1)
    raise ValueError(f"unknown tensor kind {a.kind!r}; expected one of {KINDS}")


def case_inputs(case: Case, seed: int = 0) -> Tuple[List[Any], Dict[str, Any]]:
    """The case's call with NumPy arrays in place of the tensor specs (same seed, same arrays).

    Returns:
        tuple: ``(args, kwargs)``; a list of specs becomes a list of arrays, dtypes and other
        values stay as they are.
    """
    rng = np.random.default_rng(seed)

    def build(a: Any) -> Any:
        if isinstance(a, Arr):
            return _array(a, rng)
        if isinstance(a, list):
            return [build(x) for x in a]
        return a

    return [build(a) for a in case.args], {k: build(v) for k, v in case.kwargs.items()}
