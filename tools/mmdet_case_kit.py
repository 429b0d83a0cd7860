"""Shared pieces of ``tools/check_mmdet.py``'s cases (``mmdet_cases.py``,
``mmdet_cases_misc.py``): option grids, seeded inputs with adversarial values, and the
``Case`` constructor."""

from __future__ import annotations

import itertools
from functools import partial
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
from check_mmdet import Case

__all__ = [
    "F16",
    "OVR",
    "RED",
    "boxes",
    "case",
    "combos",
    "desc",
    "logits",
    "make",
    "split",
    "std_kw",
    "make_weight",
]

F16 = ("float16", "float32", "float64")
RED = ["mean", "sum", "none"]
OVR = [None, "none", "mean", "sum"]


def combos(grid: Dict[str, list], rng: np.random.Generator, n_random: int) -> List[dict]:
    """One option at a time from the first values, then ``n_random`` draws from the product."""
    base = {k: v[0] for k, v in grid.items()}
    out = [dict(base)]
    for k, values in grid.items():
        for v in values[1:]:
            out.append({**base, k: v})
    full = list(itertools.product(*grid.values()))
    for i in rng.choice(len(full), size=min(n_random, len(full)), replace=False):
        out.append(dict(zip(grid.keys(), full[int(i)])))
    return out


def split(opts: dict, ctor_keys: Tuple[str, ...]) -> Tuple[dict, dict]:
    return (
        {k: v for k, v in opts.items() if k in ctor_keys},
        {k: v for k, v in opts.items() if k not in ctor_keys},
    )


def desc(opts: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in opts.items() if v is not None)


def logits(rng: np.random.Generator, shape: tuple, extreme: bool) -> np.ndarray:
    x = rng.standard_normal(shape) * 2.0
    if extreme:  # saturated sigmoid / softmax: MMDetection is finite there
        x.flat[::3] = 1e4
        x.flat[1::5] = -1e4
    return x


def boxes(rng: np.random.Generator, n: int, kind: str) -> Tuple[np.ndarray, np.ndarray]:
    xy = rng.uniform(0, 20, (n, 2))
    wh = rng.uniform(1, 10, (n, 2))
    target = np.concatenate([xy, xy + wh], 1)
    pred = target + rng.normal(0, 2.0, (n, 4))
    pred[:, 2:] = np.maximum(pred[:, 2:], pred[:, :2] + 0.1)
    if kind == "degenerate":
        pred[0, 2:] = pred[0, :2]  # zero-area prediction
        target[1, 2] = target[1, 0]  # zero-width target
        pred[2] = target[2]  # exact match
        pred[3] = target[3] + 30.0  # no overlap at all
    return pred, target


def make_weight(rng: np.random.Generator, kind: Any, shape: tuple) -> Any:
    if kind is None:
        return None
    if kind == "zeros":
        return np.zeros(shape)
    w = rng.uniform(0, 2, shape)
    if kind == "sparse":
        w[::2] = 0.0
    return w


def make(
    name: str, mm: Callable[..., Any], ours: Callable[..., Any], ctor: dict, calls: list, **kw: Any
) -> Case:
    return Case(
        name,
        desc({**ctor, **kw.pop("extra", {})}),
        partial(mm, **ctor),
        partial(ours, **ctor),
        calls,
        **kw,
    )


def case(
    name: str,
    m: Any,
    ours: Any,
    ctor: dict,
    args: tuple,
    kw: dict,
    call: dict,
    f16: int,
    grad: Tuple[int, ...] = (0,),
) -> Case:
    """One call of ``name`` (MMDetection's module ``m`` against ``ours``); float16 too when
    ``f16`` is 0 (a stride over the combinations)."""
    dtypes = F16 if f16 == 0 else ("float32", "float64")
    return make(
        name,
        getattr(m, name),
        getattr(ours, name),
        ctor,
        [(args, kw)],
        extra=call,
        grad=grad,
        dtypes=dtypes,
    )


def std_kw(call: dict, weight: Any) -> Dict[str, Any]:
    """The common keyword arguments of MMDetection's loss modules."""
    return {
        "weight": weight,
        "avg_factor": call["avg_factor"],
        "reduction_override": call["reduction_override"],
    }
