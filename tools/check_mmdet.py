"""Run MMDetection 3.3's unmodified loss code against ``mscompat.losses`` on seeded cases.

The op database compares ``mscompat.losses`` with plain-torch transcriptions of MMDetection
(``mscompat/testing/references/``); this script closes the loop by importing MMDetection's own
loss modules from a source tree (no mmcv / mmengine needed: light stubs stand in for the
registry, ``BaseModule``, ``print_log``, ``reduce_mean``, ``multi_apply`` and mmcv's CUDA-only
``sigmoid_focal_loss``) and running both sides on the same inputs: every constructor option and
call argument of the issue-16 losses (strided), float16/32/64, forward and the gradient of every
differentiable input, our side in PyNative and under ``ms.jit``, stateful losses (GHM with
momentum, EQLV2) over several calls on one instance.

Usage (not part of the suite: CI has no MMDetection source)::

    PYTHONPATH=$PWD /work/venv/bin/python tools/check_mmdet.py --mmdet-src /work/mmdet_src
    ... --quick            # a one-minute subset
    ... --only GHMC,IoULoss --verbose

It exits non-zero when any case mismatches, listing each (loss, options, mode, compared array,
max abs / rel error and both values at the worst element).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
import types
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

__all__ = ["Case", "load_mmdet", "main", "run_case"]

LOSS_FILES = (
    "utils", "accuracy", "cross_entropy_loss", "focal_loss", "varifocal_loss", "gfocal_loss",
    "gaussian_focal_loss", "iou_loss", "smooth_l1_loss", "balanced_l1_loss", "mse_loss",
    "ghm_loss", "seesaw_loss", "dice_loss", "kd_loss", "eqlv2_loss",
)  # fmt: skip


# ----------------------------------------------------------------------------- loading


def _package(name: str, path: Optional[str] = None) -> types.ModuleType:
    mod = types.ModuleType(name)
    mod.__path__ = [path] if path else []  # a package whose heavy __init__ never runs
    sys.modules[name] = mod
    return mod


def _load(name: str, path: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _install_stubs(src: str) -> None:
    import torch
    from torch import nn

    root = os.path.join(src, "mmdet")
    _package("mmdet", root)
    models = _package("mmdet.models", os.path.join(root, "models"))
    _package("mmdet.models.losses", os.path.join(root, "models", "losses"))
    _package("mmdet.structures", os.path.join(root, "structures"))
    bbox = _package("mmdet.structures.bbox", os.path.join(root, "structures", "bbox"))

    class _Registry:
        def register_module(self, *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
            if args and isinstance(args[0], type):
                return args[0]
            return lambda cls: cls

        def build(self, cfg: Any) -> Any:  # not needed by the losses checked here
            raise NotImplementedError("registry build is stubbed out")

    registry = types.ModuleType("mmdet.registry")
    registry.MODELS = _Registry()  # type: ignore[attr-defined]
    registry.TASK_UTILS = _Registry()  # type: ignore[attr-defined]
    sys.modules["mmdet.registry"] = registry
    utils = types.ModuleType("mmdet.utils")
    utils.reduce_mean = lambda t: t  # type: ignore[attr-defined]  # one process
    sys.modules["mmdet.utils"] = utils

    def multi_apply(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Tuple[Any, ...]:
        res = [func(*a, **kwargs) for a in zip(*args)]
        return tuple(map(list, zip(*res)))

    mutils = types.ModuleType("mmdet.models.utils")
    mutils.multi_apply = multi_apply  # type: ignore[attr-defined]
    sys.modules["mmdet.models.utils"] = mutils
    models.utils = mutils  # type: ignore[attr-defined]

    def mmcv_focal(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("mmcv.ops.sigmoid_focal_loss is MMDetection's CUDA path only")

    _package("mmcv")
    ops = types.ModuleType("mmcv.ops")
    ops.sigmoid_focal_loss = mmcv_focal  # type: ignore[attr-defined]
    sys.modules["mmcv.ops"] = ops

    class BaseModule(nn.Module):
        def __init__(self, init_cfg: Any = None) -> None:
            super().__init__()
            self.init_cfg = init_cfg

    _package("mmengine")
    for sub, attrs in (
        ("model", {"BaseModule": BaseModule}),
        ("logging", {"print_log": lambda *a, **k: None}),
        ("structures", {"BaseDataElement": type("BaseDataElement", (), {})}),
    ):
        m = types.ModuleType("mmengine." + sub)
        m.__dict__.update(attrs)
        sys.modules["mmengine." + sub] = m
    ov = _load(
        "mmdet.structures.bbox.bbox_overlaps",
        os.path.join(root, "structures", "bbox", "bbox_overlaps.py"),
    )
    bbox.bbox_overlaps = ov.bbox_overlaps  # type: ignore[attr-defined]
    del torch


def load_mmdet(src: str) -> Dict[str, types.ModuleType]:
    """MMDetection's loss modules (and ``bbox_overlaps``), imported from ``src`` unmodified."""
    _install_stubs(src)
    out = {}
    for name in LOSS_FILES:
        path = os.path.join(src, "mmdet", "models", "losses", name + ".py")
        out[name] = _load("mmdet.models.losses." + name, path)
    out["bbox_overlaps"] = sys.modules["mmdet.structures.bbox.bbox_overlaps"]
    return out


# ----------------------------------------------------------------------------- cases


@dataclass
class Case:
    """One option combination: a torch callable factory and ours, and the calls to make.

    ``calls`` are ``(args, kwargs)`` with NumPy arrays (float arrays are cast to the case's
    dtype; tuples of arrays are passed as tuples); several calls go to one instance (state).
    ``grad`` are the positions of ``args`` differentiated (float arrays only).
    """

    loss: str
    desc: str
    mm: Callable[[], Any]
    ours: Callable[[], Any]
    calls: List[Tuple[tuple, Dict[str, Any]]]
    grad: Tuple[int, ...] = (0,)
    dtypes: Tuple[str, ...] = ("float32", "float64")
    graph: bool = True
    notes: List[str] = field(default_factory=list)


def _cast(a: Any, dtype: str) -> Any:
    if isinstance(a, np.ndarray) and a.dtype.kind == "f":
        return a.astype(dtype)
    if isinstance(a, tuple):
        return tuple(_cast(e, dtype) for e in a)
    return a


def _flatten(out: Any) -> List[Any]:
    if isinstance(out, dict):
        return [v for o in out.values() for v in _flatten(o)]
    if isinstance(out, (list, tuple)):
        return [v for o in out for v in _flatten(o)]
    return [] if out is None else [out]


def _flat_graph(out: Any) -> Any:
    """``_flatten`` for one level, in a form ``ms.jit`` compiles (dict values in order)."""
    if isinstance(out, dict):
        return tuple(out.values())
    if isinstance(out, (tuple, list)):
        return tuple(out)
    return (out,)


def _run_torch(
    obj: Any, args: tuple, kwargs: Dict[str, Any], grad: Sequence[int], rng: np.random.Generator
) -> Tuple[List[np.ndarray], List[np.ndarray], list]:
    import torch

    def conv(a: Any, g: bool = False) -> Any:
        if isinstance(a, np.ndarray):
            return torch.from_numpy(a.copy()).requires_grad_(g)
        if isinstance(a, tuple):
            return tuple(conv(e) for e in a)
        return a

    targs = [conv(a, i in grad) for i, a in enumerate(args)]
    tkw = {k: conv(v) for k, v in kwargs.items()}
    outs = _flatten(obj(*targs, **tkw))
    np_outs = [o.detach().numpy().copy() if torch.is_tensor(o) else np.asarray(o) for o in outs]
    cts = [
        rng.standard_normal(o.shape).astype(o.dtype) if o.dtype.kind == "f" else None
        for o in np_outs
    ]
    grads: List[np.ndarray] = []
    if grad:
        pairs = [
            (o, torch.from_numpy(c))
            for o, c in zip(outs, cts)
            if c is not None and torch.is_tensor(o) and o.requires_grad
        ]
        inputs = [targs[i] for i in grad]
        got = (
            torch.autograd.grad(
                [p[0] for p in pairs], inputs, [p[1] for p in pairs], allow_unused=True
            )
            if pairs
            else [None] * len(inputs)
        )
        grads = [
            (g if g is not None else torch.zeros_like(x)).numpy().copy()
            for g, x in zip(got, inputs)
        ]
    return np_outs, grads, cts


_GEN_DIR: List[str] = []
_ALIVE: List[Any] = []
BOTH_RAISE: Dict[str, str] = {}


_TEMPLATE = """import mindspore as ms


def make(obj, flat):
    def call({params}):
        return flat(obj({call_args}))

    def scalar({params}, cts):
        outs = call({params})
        total = ms.Tensor(0.0, ms.float64)
        for o, c in zip(outs, cts):
            total = total + (o.astype(ms.float64) * c).sum()
        return (total,) + outs

    return call, scalar
"""


def _generated(obj: Any, n_args: int, kwargs: Dict[str, Any], arr_keys: Tuple[str, ...]) -> Any:
    """``(call, scalar)`` for one case, written to a module file of its own: ``call(*args,
    *arrays)`` = ``obj(*args, k=array..., other keywords as literals)`` flattened, ``scalar``
    its outputs dotted with cotangents. ``ms.jit`` parses source: a dict cannot be built in a
    graph, and one shared closure recompiled per case ends up resolving the wrong names."""
    import tempfile

    if not _GEN_DIR:
        _GEN_DIR.append(tempfile.mkdtemp(prefix="check_mmdet_"))
    names = [f"a{i}" for i in range(n_args)] + [f"k{i}" for i in range(len(arr_keys))]
    named = [f"{k}=k{i}" for i, k in enumerate(arr_keys)]
    named += [f"{k}={v!r}" for k, v in kwargs.items() if k not in arr_keys]
    src = _TEMPLATE.format(params=", ".join(names), call_args=", ".join(names[:n_args] + named))
    path = os.path.join(_GEN_DIR[0], f"case_{len(_ALIVE)}.py")
    with open(path, "w") as f:
        f.write(src)
    module = _load(os.path.basename(path)[:-3], path)
    _ALIVE.append(module)  # kept: MindSpore keys compile caches by object ids
    return module.make(obj, _flat_graph)


def _ms_fn(obj: Any, kwargs: Dict[str, Any], grad: Sequence[int], mode: str) -> Callable[..., Any]:
    """``run(args, kwargs, cotangents) -> (outputs, grads)``; one compiled graph for all the
    calls of a case (array keyword arguments and cotangents are inputs, not constants)."""
    import mindspore as ms

    def conv(a: Any) -> Any:
        if isinstance(a, np.ndarray):
            return ms.Tensor(a.copy())
        if isinstance(a, tuple):
            return tuple(conv(e) for e in a)
        return a

    arr_keys = tuple(k for k, v in kwargs.items() if isinstance(v, np.ndarray))
    fns: List[Any] = []

    def run(args: tuple, kw: Dict[str, Any], cts: list) -> Tuple[List[np.ndarray], list]:
        if not fns:
            call, scalar = _generated(obj, len(args), kw, arr_keys)
            fn = (
                ms.value_and_grad(scalar, grad_position=tuple(grad), has_aux=True) if grad else call
            )
            fns.append(ms.jit(fn) if mode == "graph" else fn)
            _ALIVE.extend((obj, call, scalar, fn, fns[0]))
        fn = fns[0]
        margs = [conv(x) for x in args] + [conv(kw[k]) for k in arr_keys]
        if not grad:
            return [np.asarray(o.asnumpy()) for o in fn(*margs)], []
        mcts = tuple(ms.Tensor(np.zeros(()) if c is None else c.astype(np.float64)) for c in cts)
        try:
            values, got = fn(*margs, mcts)
        except BaseException:
            from mscompat.testing.parity import reset_grad_state

            reset_grad_state()
            raise
        got = got if isinstance(got, tuple) else (got,)
        return [np.asarray(o.asnumpy()) for o in values[1:]], [g.asnumpy() for g in got]

    return run


TOL = {"float16": (1e-3, 1e-2), "float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10)}
GRAD_TOL = {"float16": (1e-2, 2e-2), "float32": (1e-5, 1e-4), "float64": (1e-10, 1e-10)}


def _compare(label: str, a: np.ndarray, e: np.ndarray, tol: Tuple[float, float]) -> Optional[str]:
    a, e = np.asarray(a), np.asarray(e)
    if a.shape != e.shape:
        return f"{label}: shape {a.shape} != mmdet {e.shape}"
    if a.dtype != e.dtype:
        return f"{label}: dtype {a.dtype} != mmdet {e.dtype}"
    if a.size == 0:
        return None
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    same = (a64 == e64) | (np.isnan(a64) & np.isnan(e64))
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.where(same, 0.0, np.abs(a64 - e64))
        bad = ~same & ~(diff <= tol[0] + tol[1] * np.abs(e64))
    if not bad.any():
        return None
    i = (
        np.unravel_index(
            int(np.argmax(np.where(bad, np.nan_to_num(diff, nan=np.inf), -1))), a.shape
        )
        if a.ndim
        else ()
    )
    rel = diff[i] / abs(e64[i]) if e64[i] != 0 else float("inf")
    return (
        f"{label}: {int(bad.sum())}/{a.size} bad, max abs {diff[i]:.3g} rel {rel:.3g} "
        f"(ours {a64[i]!r} mmdet {e64[i]!r} at {tuple(int(x) for x in i)})"
    )


def run_case(case: Case, dtype: str, modes: Sequence[str], seed: int) -> List[str]:
    """Every mismatch of one case in one dtype (empty when all agree)."""
    problems: List[str] = []
    rng = np.random.default_rng(seed)
    calls = [(_cast(a, dtype), {n: _cast(v, dtype) for n, v in k.items()}) for a, k in case.calls]
    grad = tuple(i for i in case.grad)
    try:
        mm = case.mm()
        expected = []
        for args, kw in calls:
            expected.append(_run_torch(mm, args, kw, grad, rng))
    except Exception as exc:  # noqa: BLE001
        mm_error: Optional[str] = f"{type(exc).__name__}: {str(exc)[:150]}"
    else:
        mm_error = None
    for mode in modes:
        try:
            ours = case.ours()
            got, fns = [], {}
            for j, (args, kw) in enumerate(calls):
                cts = expected[j][2] if mm_error is None else [None]
                key = repr(
                    sorted((k, None if isinstance(v, np.ndarray) else v) for k, v in kw.items())
                )
                if key not in fns:  # the calls of a stateful case share one graph
                    fns[key] = _ms_fn(ours, kw, grad if mm_error is None else (), mode)
                got.append(fns[key](args, kw, cts))
        except Exception as exc:  # noqa: BLE001
            if mm_error is None:
                problems.append(
                    f"[{mode}] ours raises, mmdet does not: "
                    f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
                )
            else:  # both refuse (avg_factor with 'sum', a broadcast error, ...)
                BOTH_RAISE[f"{case.loss} {dtype}"] = mm_error
            continue
        if mm_error is not None:
            problems.append(f"[{mode}] mmdet raises ({mm_error}), ours does not")
            continue
        for j, ((e_out, e_grad, _), (a_out, a_grad)) in enumerate(zip(expected, got)):
            tag = f"[{mode}] call {j}" if len(calls) > 1 else f"[{mode}]"
            if len(a_out) != len(e_out):
                problems.append(f"{tag} {len(a_out)} outputs, mmdet {len(e_out)}")
                continue
            for k, (a, e) in enumerate(zip(a_out, e_out)):
                # a float32 output of a float64 call (MMDetection's label.float()) is compared
                # at float32's tolerance
                p = _compare(f"{tag} out{k}", a, e, TOL.get(str(e.dtype), (0, 0)))
                if p:
                    problems.append(p)
            for k, (a, e) in zip(grad, zip(a_grad, e_grad)):
                p = _compare(f"{tag} grad arg{k}", a, e, GRAD_TOL.get(str(e.dtype), (0, 0)))
                if p:
                    problems.append(p)
    return problems


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mmdet-src", required=True, help="folder holding mmdet/")
    parser.add_argument("--quick", action="store_true", help="a one-minute subset")
    parser.add_argument("--only", default="", help="comma-separated loss names")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-graph", action="store_true", help="PyNative only")
    parser.add_argument("--verbose", action="store_true")
    opts = parser.parse_args(argv)
    os.environ.setdefault("GLOG_v", "3")  # MindSpore's "compiled again" warnings: one per case
    warnings.simplefilter("ignore")  # MMDetection's deprecation and avg_non_ignore warnings
    mm = load_mmdet(opts.mmdet_src)
    import mindspore as ms
    from mmdet_cases import all_cases  # tools/mmdet_cases.py

    import mscompat.losses as ours

    ms.set_context(mode=ms.PYNATIVE_MODE)
    only = {s for s in opts.only.split(",") if s}
    cases = [c for c in all_cases(mm, ours, opts.seed, opts.quick) if not only or c.loss in only]
    start, n_runs, failures = time.time(), 0, 0
    per_loss: Dict[str, int] = {}
    for idx, case in enumerate(cases):
        # graph mode on every sixth case (and every third stateful one), in one dtype: each
        # graph-mode run is a 1-3 s compilation, 30x the PyNative run
        graph = case.graph and not opts.no_graph and idx % (3 if len(case.calls) > 1 else 6) == 0
        for d, dtype in enumerate(case.dtypes):
            modes = ["pynative", "graph"] if graph and d == idx % len(case.dtypes) else ["pynative"]
            problems = run_case(case, dtype, modes, opts.seed + idx)
            n_runs += len(modes)
            per_loss[case.loss] = per_loss.get(case.loss, 0) + 1
            if problems:
                failures += 1
                print(f"MISMATCH {case.loss} {case.desc} {dtype}")
                for p in problems:
                    print("    " + p)
            elif opts.verbose:
                print(f"ok {case.loss} {case.desc} {dtype} {modes}")
            sys.stdout.flush()
    print(
        f"\n{len(cases)} option combinations, {sum(per_loss.values())} case-dtypes, "
        f"{n_runs} runs (case x dtype x mode), {failures} mismatching, "
        f"{time.time() - start:.0f} s"
    )
    print("per loss:", ", ".join(f"{k} {v}" for k, v in sorted(per_loss.items())))
    print(f"{len(BOTH_RAISE)} (loss, dtype) pairs had cases both sides refuse, e.g.:")
    for k, v in list(BOTH_RAISE.items())[:: max(1, len(BOTH_RAISE) // 8)]:
        print(f"    {k}: {v}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
