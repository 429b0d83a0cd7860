"""Measure one case: torch's result, then each MindSpore candidate with the same call.

Inputs are converted and both sides run by :mod:`mscompat.testing.parity` (``run_torch``,
``run_mindspore``, ``make_cotangents``) and arrays compared by its ``compare_arrays``. What is
the probe's own: which candidates exist, how a case's call is bound for each of them, and the
stage a failure is charged to. Stages of a candidate:

* eager: PyNative forward against torch (shape, dtype, values at ``atol = rtol = 1e-4``);
* grad: gradients of ``sum(out * W)`` (seeded ``W``) against torch autograd (``1e-3``), where
  torch's outputs are differentiable;
* jit: the same call compiled with ``ms.jit``, forward against torch.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import mindspore as ms
import numpy as np
import torch
from mindspore import mint, nn, ops

from mscompat.testing.parity import compare_arrays, make_cotangents, run_mindspore, run_torch
from mscompat.testing.tolerances import Tolerance
from tools.probe import scripted
from tools.probe.table import Case, DType, F, case_inputs

__all__ = ["RANK", "STATUSES", "run_case"]

RANK = {"OK": 0, "NO-GRAD": 1, "GRAPH-FAILS": 2, "DIFFERS": 3, "CPU-UNREGISTERED": 4, "CRASH": 5}
#: Every status the knowledge file can hold, best first.
STATUSES = [*RANK, "MISSING", "UNVERIFIED"]
KERNEL_ERRORS = re.compile(
    r"unregistered|Unsupported op|Not found op|only supports? Ascend|only support(s)? (GPU|Ascend)"
    r"|Create kernelmod|Unsupported data type|not supported on this device|kernel .* not found"
    r"|Not implement exception|is not supported on (CPU|GPU)",
    re.I,
)
FORWARD = Tolerance(1e-4, 1e-4)
GRAD = Tolerance(1e-3, 1e-3)
EXACT = Tolerance(0.0, 0.0)
_PARAM_SYNONYMS = {
    "gamma": "weight",
    "beta": "bias",
    "moving_mean": "running_mean",
    "moving_variance": "running_var",
    "mean": "running_mean",
    "variance": "running_var",
}


class _Differs(Exception):
    """A candidate that cannot take the case's call (e.g. another parameter layout)."""


def first_line(exc: BaseException) -> str:
    """The first meaningful line of an exception, at most 220 characters."""
    text = f"{type(exc).__name__}: {exc}".strip()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("-"):
            return line[:220]
    return type(exc).__name__


def _classify(exc: BaseException, stage: str) -> Tuple[str, str]:
    line = first_line(exc)
    if KERNEL_ERRORS.search(str(exc)):
        return "CPU-UNREGISTERED", line
    return "DIFFERS", line if stage == "eager" else f"{stage}: {line}"


# ----------------------------------------------------------------------------- outputs


def _leaves(out: Any) -> List[Any]:
    """The compared values of a call's result: nested sequences flattened, a sequence of plain
    numbers (a shape, a statistic) kept as one value."""
    if isinstance(out, (tuple, list)):
        if all(isinstance(o, (int, float, bool)) for o in out):
            return [np.asarray(out)]
        return [leaf for o in out for leaf in _leaves(o)]
    return [out]


def _host_value(o: Any) -> np.ndarray:
    if isinstance(o, (np.ndarray, np.generic, int, float, bool)):
        return np.array(o)
    raise TypeError(f"unexpected output type {type(o).__name__}")


class _TorchOutputs:
    """``fn`` with its result as a flat tuple of tensors, which :func:`run_torch` expects.

    Remembers whether the last call had a differentiable output: where none has, torch gives no
    gradient to compare with and the grad stage is skipped.
    """

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.differentiable = False

    def __call__(self, *args: Any, **kwargs: Any) -> Tuple[torch.Tensor, ...]:
        leaves = _leaves(self.fn(*args, **kwargs))
        self.differentiable = any(
            isinstance(o, torch.Tensor) and o.is_floating_point() and o.requires_grad
            for o in leaves
        )
        return tuple(
            o if isinstance(o, torch.Tensor) else torch.from_numpy(_host_value(o)) for o in leaves
        )


def _ms_outputs(fn: Callable[..., Any]) -> Callable[..., Tuple[Any, ...]]:
    """``fn`` with its result as a flat tuple of Tensors, which :func:`run_mindspore` expects.

    Host values (a shape, ``item()``, ``tolist()``) become Tensors here, outside any graph.
    """

    def call(*args: Any, **kwargs: Any) -> Tuple[Any, ...]:
        leaves = _leaves(fn(*args, **kwargs))
        return tuple(o if hasattr(o, "asnumpy") else ms.Tensor(_host_value(o)) for o in leaves)

    return call


def _bind(fn: Callable[..., Any], kwargs: Dict[str, Any]) -> Callable[..., Any]:
    """``fn`` with its keyword arguments fixed: constants of the compiled graph."""

    def call(*args: Any) -> Any:
        return fn(*args, **kwargs)

    return call


def _method(name: str) -> Callable[..., Any]:
    """``t.name(*args, **kwargs)``: a method call, compiled as one under ``ms.jit``."""

    def call(t: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(t, name)(*args, **kwargs)

    return call


def _mismatch(
    got: Sequence[np.ndarray], want: Sequence[np.ndarray], tol: Tolerance, values: bool
) -> Optional[str]:
    """Why ``got`` is not torch's ``want`` (None when it is)."""
    if len(got) != len(want):
        return f"{len(got)} outputs vs torch {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape:
            return f"out{k} shape {g.shape} vs torch {w.shape}"
        if g.dtype != w.dtype:
            # a 0-d float (a Python number on one side) may differ in width only
            if not (g.dtype.kind == w.dtype.kind == "f" and w.ndim == 0):
                return f"out{k} dtype {g.dtype} vs torch {w.dtype}"
            g = g.astype(w.dtype)
        if not values:
            continue
        exact = w.dtype.kind in "biu"
        max_abs, _, ok, note = compare_arrays(g, w, EXACT if exact else tol)
        if not ok:
            if exact:
                return f"out{k} values differ ({note.split(' out of')[0]})"
            return f"out{k} max abs error {max_abs:.3g}"
    return None


# ----------------------------------------------------------------------------- torch side


@dataclass
class _Reference:
    outputs: List[np.ndarray]
    grads: Optional[List[np.ndarray]]
    grad_argnums: List[int]
    cotangents: Optional[List[Optional[np.ndarray]]]


def _scripted(name: str) -> Callable[..., Any]:
    fn = getattr(scripted, name, None)
    if not callable(fn):
        raise LookupError(f"tools/probe/scripted.py has no function {name!r}")
    return fn


def _is_tensor_input(a: Any) -> bool:
    return isinstance(a, np.ndarray) or (
        isinstance(a, list) and bool(a) and isinstance(a[0], np.ndarray)
    )


def _torch_value(v: Any) -> Any:
    if isinstance(v, DType):
        return getattr(torch, v.name)
    if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
        return [torch.from_numpy(x.copy()) for x in v]
    return v


def _ms_value(v: Any) -> Any:
    if isinstance(v, DType):
        return getattr(ms, v.name)
    if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
        return [ms.Tensor(x) for x in v]
    return v


def _torch_module(case: Case) -> torch.nn.Module:
    torch.manual_seed(0)
    if case.torch:
        return _scripted(case.torch)()
    cls = getattr(torch.nn, case.api.rsplit(".", 1)[-1])
    return cls(*case.init, **case.init_kwargs)


def torch_function(api: str) -> Any:
    """The PyTorch object named ``api``."""
    mod, _, name = api.rpartition(".")
    return getattr(importlib.import_module(mod), name)


def _torch_callable(case: Case) -> Callable[..., Any]:
    if case.is_module:

        def module_call(*args: Any, **kwargs: Any) -> Any:
            module = _torch_module(case)
            module.eval()
            return module(*args, **kwargs)

        return module_call
    if case.scripted:
        fn = _scripted(case.torch)

        def scripted_call(*args: Any) -> Any:
            torch.manual_seed(0)
            return fn(*args)

        return scripted_call
    if case.is_method:
        return _method(case.api.rsplit(".", 1)[-1])
    return torch_function(case.api)


def _torch_reference(case: Case) -> _Reference:
    args, kwargs = case_inputs(case)
    grad_argnums = [
        k for k, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype == np.float32
    ]
    if case.reference:
        out = _scripted(case.reference)(*args, **kwargs)
        return _Reference([np.asarray(o) for o in _leaves(out)], None, grad_argnums, None)
    fn = _TorchOutputs(_torch_callable(case))
    t_args = [_torch_value(a) for a in args]
    t_kwargs = {k: _torch_value(v) for k, v in kwargs.items()}
    outputs, _ = run_torch(fn, t_args, t_kwargs)
    grads = cotangents = None
    if case.grad and grad_argnums:
        cotangents = make_cotangents(outputs, np.random.default_rng(1))
        try:
            _, got = run_torch(
                fn, t_args, t_kwargs, grad_argnums=grad_argnums, cotangents=cotangents
            )
            grads = got if fn.differentiable else None
        except RuntimeError:
            grads = None  # not differentiable in torch: no grad stage
    return _Reference(outputs, grads, grad_argnums, cotangents)


# ----------------------------------------------------------------------------- MindSpore side


def _candidate_names(case: Case) -> List[str]:
    if case.scripted:
        return []
    api = case.api
    name = api.rsplit(".", 1)[-1]
    if case.is_method:
        return ["Tensor." + name]
    if case.is_module:
        return ["mint.nn." + name, "nn." + name]
    if api.startswith(F):
        return ["mint.nn.functional." + name, "ops." + name]
    if api.startswith("torch.linalg."):
        return ["mint.linalg." + name, "ops." + name]
    if api.startswith("torch."):
        return ["mint." + name, "ops." + name, "Tensor." + name]
    # third-party detection APIs: the same name anywhere in mint/ops/nn
    return ["mint." + name, "mint.nn.functional." + name, "ops." + name, "nn." + name]


def _resolve(name: str) -> Any:
    root, _, rest = name.partition(".")
    obj: Any = {"mint": mint, "ops": ops, "nn": nn, "Tensor": ms.Tensor}[root]
    for part in rest.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _module_cell(case: Case, make: Callable[[], Any]) -> nn.Cell:
    """The Cell from ``make()``, holding the parameters of torch's module."""
    tmod = _torch_module(case)
    cell = make()
    t_named = [(n, p.detach().numpy()) for n, p in tmod.named_parameters()] + [
        (n, b.numpy()) for n, b in tmod.named_buffers() if "num_batches" not in n
    ]
    m_params = [q for q in cell.get_parameters() if "num_batches" not in q.name]
    if len(t_named) != len(m_params):
        raise _Differs(f"{len(m_params)} parameters vs torch {len(t_named)}")
    by_name = dict(t_named)
    for k, mp in enumerate(m_params):
        last = mp.name.rsplit(".", 1)[-1]
        tp = by_name.get(_PARAM_SYNONYMS.get(last, last), t_named[k][1])
        if tuple(tp.shape) != tuple(mp.shape):
            raise _Differs(
                f"parameter {mp.name} shape {tuple(mp.shape)} vs torch {tuple(tp.shape)}"
            )
        mp.set_data(ms.Tensor(tp.copy()))
    cell.set_train(False)
    return cell


@dataclass(frozen=True)
class _Candidate:
    label: str
    target: Any = None  # a resolved MindSpore name
    fn: str = ""  # or a function of scripted.py
    adapted: bool = False


@dataclass(frozen=True)
class _Bound:
    """A candidate bound to the case's inputs, as :func:`run_mindspore` takes it."""

    fn: Callable[..., Any]
    args: List[Any]
    kwargs: Dict[str, Any]
    grad_argnums: List[int]


def _bound_call(case: Case, cand: _Candidate) -> _Bound:
    """The candidate with the case's inputs.

    A resolved name takes the case's whole call; code from :mod:`scripted` and Cells take the
    case's tensors only.
    """
    args, kwargs = case_inputs(case)
    floats = [k for k, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype == np.float32]
    if cand.target is not None and not case.is_module:
        fn = cand.target
        if cand.label.startswith("Tensor."):
            fn = _method(cand.label.rsplit(".", 1)[-1])
        ms_kwargs = {k: _ms_value(v) for k, v in kwargs.items()}
        return _Bound(fn, [_ms_value(a) for a in args], ms_kwargs, floats)
    slots = [k for k, a in enumerate(args) if _is_tensor_input(a)]
    if case.is_module:
        target = cand.target
        make = _scripted(cand.fn) if cand.fn else lambda: target(*case.init, **case.init_kwargs)
        fn = _module_cell(case, make)
    else:
        fn = _scripted(cand.fn)
    return _Bound(fn, [_ms_value(args[k]) for k in slots], {}, [slots.index(k) for k in floats])


def _run_candidate(case: Case, cand: _Candidate, ref: _Reference) -> Tuple[str, str]:
    try:
        bound = _bound_call(case, cand)
    except _Differs as exc:
        return "DIFFERS", str(exc)
    except Exception as exc:  # noqa: BLE001 - any failure is a finding about the candidate
        return _classify(exc, "construct")
    try:
        got, _ = run_mindspore(_ms_outputs(bound.fn), bound.args, bound.kwargs)
    except Exception as exc:  # noqa: BLE001
        return _classify(exc, "eager")
    bad = _mismatch(got, ref.outputs, FORWARD, case.values)
    if bad:
        return "DIFFERS", bad
    if ref.grads is not None:
        try:
            _, grads = run_mindspore(
                _ms_outputs(bound.fn),
                bound.args,
                bound.kwargs,
                grad_argnums=bound.grad_argnums,
                cotangents=ref.cotangents,
            )
            bad = _mismatch(grads, ref.grads, GRAD, True)
            if bad:
                return "NO-GRAD", "grad: " + bad
        except Exception as exc:  # noqa: BLE001
            return "NO-GRAD", "grad: " + first_line(exc)
    if case.jit:
        return "OK", f"jit stage not run: {case.jit}"
    try:
        # compiled here rather than with mode="graph": host values in the result are turned
        # into Tensors after the graph, outside it
        compiled = ms.jit(_bind(bound.fn, bound.kwargs))
        got, _ = run_mindspore(_ms_outputs(compiled), bound.args)
        bad = _mismatch(got, ref.outputs, FORWARD, case.values)
        if bad:
            return "GRAPH-FAILS", "jit: " + bad
    except Exception as exc:  # noqa: BLE001
        return "GRAPH-FAILS", "jit: " + first_line(exc)
    return "OK", ""


def _missing(case: Case) -> str:
    names = _candidate_names(case)
    return "no callable of this name in " + ", ".join(n.rsplit(".", 1)[0] for n in names)


def run_case(case: Case) -> Dict[str, Any]:
    """Measure one case.

    Returns:
        dict: ``key, api, variant, when, group`` and the verdict: ``status``, ``counterpart``
        (the best candidate), ``note`` and ``tried`` (every candidate's status and note).
    """
    record: Dict[str, Any] = {
        "key": case.key,
        "api": case.api,
        "variant": case.variant,
        "when": case.when,
        "group": case.group,
    }
    candidates = []
    for name in _candidate_names(case) + list(case.extra_candidates):
        target = _resolve(name)
        if target is not None:
            candidates.append(_Candidate(name, target=target))
    adapted = [_Candidate(n.label, fn=n.fn, adapted=True) for n in case.adapted]
    native = [_Candidate(n.label, fn=n.fn) for n in case.native]
    # a scripted case tries its adapted constructs first: a counterpart without a kernel here
    # (mint.optim.AdamW) poisons later calls in the process (nn.AdamWeightDecay then fails too)
    candidates += adapted + native if case.scripted else adapted
    if case.lookup_only and candidates:
        first = candidates[0].label
        note = f"{first} exists under the same name; not compared (no reference here)"
        record.update(status="UNVERIFIED", counterpart=first, note=note, tried=[])
        return record
    if not candidates:
        record.update(status="MISSING", counterpart="", note=_missing(case), tried=[])
        return record
    try:
        ref = _torch_reference(case)
    except Exception as exc:  # noqa: BLE001
        note = "torch reference failed: " + first_line(exc)
        record.update(status="ERROR", counterpart="", note=note, tried=[])
        return record
    tried = []
    for cand in candidates:
        status, note = _run_candidate(case, cand, ref)
        if cand.adapted:
            if status == "OK":
                status, note = "DIFFERS", f"works as {cand.label}" + (f"; {note}" if note else "")
            else:
                status = max(status, "DIFFERS", key=lambda s: RANK[s])
        tried.append({"candidate": cand.label, "status": status, "note": note})
        if status == "OK" and not cand.adapted:
            break
    # among equals, an adapted call that works is the useful counterpart
    best = min(tried, key=lambda t: (RANK[t["status"]], not t["note"].startswith("works as")))
    notes = [best["note"]] if best["note"] else []
    notes += [
        f"{t['candidate']}: {t['status']} - {t['note']}"
        for t in tried
        if t is not best and t["status"] != "OK"
    ]
    if case.hint and best["status"] != "OK":
        notes.insert(0, case.hint)
    record.update(
        status=best["status"],
        counterpart=best["candidate"],
        note=" / ".join(notes)[:600],
        tried=tried,
    )
    return record
