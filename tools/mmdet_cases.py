"""The seeded cases of ``tools/check_mmdet.py``: every issue-16 loss, its options swept.

Each option grid is covered one option at a time from the defaults (every value of every option
appears) plus a seeded random sample of the full product; inputs include adversarial values
(logits of +-1e4, zero-area and identical boxes, no positives, ``avg_factor=0``, ignored labels).
"""

from __future__ import annotations

import itertools
from functools import partial
from typing import Any, Callable, Dict, Iterator, List, Tuple

import numpy as np
from check_mmdet import Case

__all__ = ["all_cases", "combos"]

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


def _split(opts: dict, ctor_keys: Tuple[str, ...]) -> Tuple[dict, dict]:
    return (
        {k: v for k, v in opts.items() if k in ctor_keys},
        {k: v for k, v in opts.items() if k not in ctor_keys},
    )


def _desc(opts: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in opts.items() if v is not None)


def _logits(rng: np.random.Generator, shape: tuple, extreme: bool) -> np.ndarray:
    x = rng.standard_normal(shape) * 2.0
    if extreme:  # saturated sigmoid / softmax: MMDetection is finite there
        x.flat[::3] = 1e4
        x.flat[1::5] = -1e4
    return x


def _boxes(rng: np.random.Generator, n: int, kind: str) -> Tuple[np.ndarray, np.ndarray]:
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


def _weight(rng: np.random.Generator, kind: Any, shape: tuple) -> Any:
    if kind is None:
        return None
    if kind == "zeros":
        return np.zeros(shape)
    w = rng.uniform(0, 2, shape)
    if kind == "sparse":
        w[::2] = 0.0
    return w


def _make(
    name: str, mm: Callable[..., Any], ours: Callable[..., Any], ctor: dict, calls: list, **kw: Any
) -> Case:
    return Case(
        name,
        _desc({**ctor, **kw.pop("extra", {})}),
        partial(mm, **ctor),
        partial(ours, **ctor),
        calls,
        **kw,
    )


def _case(
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
    return _make(
        name,
        getattr(m, name),
        getattr(ours, name),
        ctor,
        [(args, kw)],
        extra=call,
        grad=grad,
        dtypes=dtypes,
    )


def _std_kw(call: dict, weight: Any) -> Dict[str, Any]:
    """The common keyword arguments of MMDetection's loss modules."""
    return {
        "weight": weight,
        "avg_factor": call["avg_factor"],
        "reduction_override": call["reduction_override"],
    }


# ----------------------------------------------------------------------------- classification


def _ce(mm: Any, ours: Any, rng: np.random.Generator, nr: int) -> Iterator[Case]:
    m = mm["cross_entropy_loss"]
    n, c = 7, 5
    grid = {
        "use_sigmoid": [False, True],
        "reduction": RED,
        "class_weight": [None, "cw"],
        "ignore_index": [None, 2, -100],
        "loss_weight": [1.0, 0.5],
        "avg_non_ignore": [False, True],
        "weight": [None, "row"],
        "avg_factor": [None, 5.0, 0.0],
        "reduction_override": OVR,
        "call_ignore": [None, 1],
        "target": ["index", "extreme", "dense"],
    }
    keys = (
        "use_sigmoid",
        "reduction",
        "class_weight",
        "ignore_index",
        "loss_weight",
        "avg_non_ignore",
    )
    for i, o in enumerate(combos(grid, rng, nr)):
        if o["target"] == "dense" and not o["use_sigmoid"]:
            continue
        ctor, call = _split(o, keys)
        width = c if not ctor["use_sigmoid"] or o["target"] == "dense" else c
        if ctor["class_weight"] == "cw":
            ctor["class_weight"] = list(rng.uniform(0.5, 2, width).round(3))
        pred = _logits(rng, (n, width), o["target"] == "extreme")
        if o["target"] == "dense":
            label = (rng.uniform(size=(n, c)) > 0.6).astype(np.float64)
            wshape: tuple = (n, c)
        else:
            label = rng.integers(0, c + (1 if ctor["use_sigmoid"] else 0), n)
            label[0] = -100
            label[1] = 2
            label[2] = 1
            wshape = (n,)
        kw: Dict[str, Any] = {
            "weight": _weight(rng, call["weight"], wshape),
            "avg_factor": call["avg_factor"],
            "reduction_override": call["reduction_override"],
            "ignore_index": call["call_ignore"],
        }
        yield _case("CrossEntropyLoss", m, ours, ctor, (pred, label), kw, call, i % 4)
    # use_mask=True: (N, C, H, W) logits, (N, H, W) targets, the class of each mask
    for i, o in enumerate(
        combos(
            {
                "reduction": RED,
                "class_weight": [None, "cw"],
                "avg_factor": [None, 3.0],
                "reduction_override": OVR,
                "loss_weight": [1.0, 2.0],
            },
            rng,
            4,
        )
    ):
        ctor, call = _split(o, ("reduction", "class_weight", "loss_weight"))
        if ctor["class_weight"] == "cw":
            ctor["class_weight"] = list(rng.uniform(0.5, 2, 3).round(3))
        pred = _logits(rng, (4, 3, 5, 5), i % 2 == 1)
        target = (rng.uniform(size=(4, 5, 5)) > 0.5).astype(np.float64)
        label = rng.integers(0, 3, 4)
        yield _make(
            "CrossEntropyLoss",
            m.CrossEntropyLoss,
            ours.CrossEntropyLoss,
            {"use_mask": True, **ctor},
            [((pred, target, label), call)],
            extra=call,
        )
    # the functions themselves, PyTorch's default ignore_index=-100 path
    for fname in ("cross_entropy", "binary_cross_entropy"):
        for o in combos(
            {
                "reduction": RED,
                "avg_non_ignore": [False, True],
                "ignore_index": [-100, 3],
                "avg_factor": [None, 4.0],
            },
            rng,
            3,
        ):
            pred = _logits(rng, (6, 4), False)
            label = rng.integers(0, 4, 6)
            label[0] = -100
            label[1] = 3
            yield Case(
                fname,
                _desc(o),
                lambda f=fname: getattr(m, f),
                lambda f=fname: getattr(ours, f),
                [((pred, label), o)],
            )
    pred = _logits(rng, (3, 4, 2, 2), False)
    target = (rng.uniform(size=(3, 2, 2)) > 0.5).astype(np.float64)
    yield Case(
        "mask_cross_entropy",
        "reduction=sum",
        lambda: m.mask_cross_entropy,
        lambda: ours.mask_cross_entropy,
        [((pred, target, np.array([0, 3, 1])), {"reduction": "sum"})],
    )


def _focal(mm: Any, ours: Any, rng: np.random.Generator, nr: int) -> Iterator[Case]:
    m = mm["focal_loss"]
    n, c = 6, 4
    grid = {
        "gamma": [2.0, 1.5, 0.0],
        "alpha": [0.25, 0.75],
        "reduction": RED,
        "loss_weight": [1.0, 0.5],
        "activated": [False, True],
        "target": ["index", "onehot", "soft", "no_pos"],
        "weight": [None, "row", "full"],
        "avg_factor": [None, 3.0, 0.0],
        "reduction_override": OVR,
        "extreme": [False, True],
    }
    keys = ("gamma", "alpha", "reduction", "loss_weight", "activated")
    for i, o in enumerate(combos(grid, rng, nr)):
        ctor, call = _split(o, keys)
        pred = _logits(rng, (n, c), call["extreme"])
        if ctor["activated"]:
            pred = rng.uniform(0.02, 0.98, (n, c))
        tk = call["target"]
        if tk in ("index", "no_pos"):
            target: np.ndarray = rng.integers(0, c + 1, n) if tk == "index" else np.full(n, c)
        else:
            target = np.eye(c)[rng.integers(0, c, n)]
            if tk == "soft":
                target = target * rng.uniform(0.1, 1.0, (n, 1))
        w = _weight(rng, call["weight"], (n,) if call["weight"] == "row" else (n, c))
        kw = _std_kw(call, w)
        yield _make(
            "FocalLoss",
            m.FocalLoss,
            ours.FocalLoss,
            ctor,
            [((pred, target), kw)],
            extra={
                "target": tk,
                "weight": call["weight"],
                "extreme": call["extreme"],
                "avg_factor": call["avg_factor"],
                "reduction_override": call["reduction_override"],
            },
            dtypes=F16 if i % 5 == 0 else ("float32", "float64"),
        )


def _varifocal(mm: Any, ours: Any, rng: np.random.Generator, nr: int) -> Iterator[Case]:
    m = mm["varifocal_loss"]
    n, c = 6, 4
    grid = {
        "alpha": [0.75, 0.5],
        "gamma": [2.0, 1.0],
        "iou_weighted": [True, False],
        "reduction": RED,
        "loss_weight": [1.0, 2.0],
        "weight": [None, "full", "col"],
        "avg_factor": [None, 2.5, 0.0],
        "reduction_override": OVR,
        "extreme": [False, True],
        "no_pos": [False, True],
    }
    keys = ("alpha", "gamma", "iou_weighted", "reduction", "loss_weight")
    for i, o in enumerate(combos(grid, rng, nr)):
        ctor, call = _split(o, keys)
        pred = _logits(rng, (n, c), call["extreme"])
        target = np.eye(c)[rng.integers(0, c, n)] * rng.uniform(0.1, 1, (n, 1))
        if call["no_pos"]:
            target[:] = 0
        w = _weight(rng, call["weight"], (n, 1) if call["weight"] == "col" else (n, c))
        kw = _std_kw(call, w)
        yield _case("VarifocalLoss", m, ours, ctor, (pred, target), kw, call, i % 5, grad=(0, 1))


def _gfocal(mm: Any, ours: Any, rng: np.random.Generator, nr: int) -> Iterator[Case]:
    m = mm["gfocal_loss"]
    n, c = 6, 4
    grid = {
        "beta": [2.0, 1.0],
        "activated": [False, True],
        "reduction": RED,
        "loss_weight": [1.0, 0.5],
        "target": ["tuple", "tensor", "no_pos"],
        "weight": [None, "row"],
        "avg_factor": [None, 3.0, 0.0],
        "reduction_override": OVR,
        "extreme": [False, True],
    }
    keys = ("beta", "activated", "reduction", "loss_weight")
    for i, o in enumerate(combos(grid, rng, nr)):
        ctor, call = _split(o, keys)
        pred = (
            rng.uniform(0.02, 0.98, (n, c))
            if ctor["activated"]
            else _logits(rng, (n, c), call["extreme"])
        )
        label = rng.integers(0, c + 1, n)
        if call["target"] == "no_pos":
            label[:] = c
        score = rng.uniform(0, 1, n)
        grad: Tuple[int, ...] = (0,)
        if call["target"] == "tensor":
            target: Any = np.eye(c + 1)[label][:, :c] * score[:, None]
            grad = (0, 1)
        else:
            target = (label, score)
        kw = {
            "weight": _weight(rng, call["weight"], (n,)),  # both forms sum over the classes
            "avg_factor": call["avg_factor"],
            "reduction_override": call["reduction_override"],
        }
        yield _case("QualityFocalLoss", m, ours, ctor, (pred, target), kw, call, i % 5, grad=grad)
    grid = {
        "reduction": RED,
        "loss_weight": [1.0, 0.25],
        "weight": [None, "row"],
        "avg_factor": [None, 2.0, 0.0],
        "reduction_override": OVR,
    }
    for o in combos(grid, rng, max(nr // 2, 2)):
        ctor, call = _split(o, ("reduction", "loss_weight"))
        pred = _logits(rng, (5, 8), False)
        label = rng.uniform(0, 6.99, 5)
        label[0], label[1] = 0.0, 3.0  # integral labels: the right bin's weight is 0
        kw = _std_kw(call, _weight(rng, call["weight"], (5,)))
        yield _make(
            "DistributionFocalLoss",
            m.DistributionFocalLoss,
            ours.DistributionFocalLoss,
            ctor,
            [((pred, label), kw)],
            extra=call,
            grad=(0, 1),
        )


def _gaussian(mm: Any, ours: Any, rng: np.random.Generator, nr: int) -> Iterator[Case]:
    m = mm["gaussian_focal_loss"]
    grid = {
        "alpha": [2.0, 1.5],
        "gamma": [4.0, 3.0],
        "pos_weight": [1.0, 0.5],
        "neg_weight": [1.0, 2.0],
        "reduction": RED,
        "loss_weight": [1.0, 0.5],
        "form": ["dense", "pos_inds"],
        "weight": [None, "full"],
        "avg_factor": [None, 4.0, 0.0],
        "reduction_override": OVR,
    }
    keys = ("alpha", "gamma", "pos_weight", "neg_weight", "reduction", "loss_weight")
    for i, o in enumerate(combos(grid, rng, nr)):
        ctor, call = _split(o, keys)
        n, c = 8, 3
        pred = rng.uniform(0.01, 0.99, (n, c))
        pred[0, 0] = 1.0  # saturated probabilities: MMDetection's eps keeps them finite
        pred[1, 1] = 0.0
        target = rng.uniform(0, 0.9, (n, c))
        pos_inds = np.array([2, 5, 6])
        pos_labels = np.array([0, 2, 1])
        target[pos_inds, pos_labels] = 1.0
        target[0, 0] = 1.0
        kw: Dict[str, Any] = {
            "avg_factor": call["avg_factor"],
            "reduction_override": call["reduction_override"],
        }
        if call["form"] == "pos_inds":
            kw.update(pos_inds=pos_inds, pos_labels=pos_labels)
        else:
            kw["weight"] = _weight(rng, call["weight"], (n, c))
        yield _case(
            "GaussianFocalLoss", m, ours, ctor, (pred, target), kw, call, i % 5, grad=(0, 1)
        )


# ----------------------------------------------------------------------------- box losses


def _iou(mm: Any, ours: Any, rng: np.random.Generator, nr: int) -> Iterator[Case]:
    m = mm["iou_loss"]
    call_grid = {
        "reduction": RED,
        "loss_weight": [1.0, 2.0],
        "boxes": ["random", "degenerate"],
        "weight": [None, "row", "box", "zeros"],
        "avg_factor": [None, 3.0],
        "reduction_override": OVR,
    }
    families = (
        (
            "IoULoss",
            {"mode": ["log", "linear", "square"], "eps": [1e-6, 1e-3], "linear": [False, True]},
        ),
        ("BoundedIoULoss", {"beta": [0.2, 0.5], "eps": [1e-3, 0.1]}),
        ("GIoULoss", {"eps": [1e-6, 1e-2]}),
        ("DIoULoss", {"eps": [1e-6, 1e-2]}),
        ("CIoULoss", {"eps": [1e-6, 1e-2]}),
        ("EIoULoss", {"eps": [1e-6, 1e-2], "smooth_point": [0.1, 0.5]}),
        ("SIoULoss", {"eps": [1e-6, 1e-2], "neg_gamma": [False, True]}),
    )
    for name, own in families:
        keys = tuple(own) + ("reduction", "loss_weight")
        for i, o in enumerate(combos({**own, **call_grid}, rng, nr)):
            ctor, call = _split(o, keys)
            pred, target = _boxes(rng, 6, call["boxes"])
            wk = call["weight"]
            w = _weight(rng, wk, (6, 4) if wk == "box" else (6,))
            kw = _std_kw(call, w)
            yield _case(name, m, ours, ctor, (pred, target), kw, call, i % 6, grad=(0, 1))


def _regression(mm: Any, ours: Any, rng: np.random.Generator, nr: int) -> Iterator[Case]:
    call_grid = {
        "reduction": RED,
        "loss_weight": [1.0, 0.5],
        "weight": [None, "full", "zeros"],
        "avg_factor": [None, 4.0, 0.0],
        "reduction_override": OVR,
        "shape": [(5, 4), (0, 4)],
    }
    families = (
        ("SmoothL1Loss", "smooth_l1_loss", {"beta": [1.0, 0.5, 2.0]}),
        ("L1Loss", "smooth_l1_loss", {}),
        (
            "BalancedL1Loss",
            "balanced_l1_loss",
            {"alpha": [0.5, 1.0], "gamma": [1.5, 0.8], "beta": [1.0, 0.3]},
        ),
        ("MSELoss", "mse_loss", {}),
    )
    for name, module, own in families:
        keys = tuple(own) + ("reduction", "loss_weight")
        for i, o in enumerate(combos({**own, **call_grid}, rng, nr)):
            ctor, call = _split(o, keys)
            shape = call["shape"]
            pred = rng.standard_normal(shape) * 2
            target = rng.standard_normal(shape) * 2
            if shape[0]:
                beta = ctor.get("beta", 1.0)
                target.flat[0] = pred.flat[0] + beta  # exactly at the kink
                target.flat[1] = pred.flat[1]
            kw = _std_kw(call, _weight(rng, call["weight"], shape))
            yield _case(name, mm[module], ours, ctor, (pred, target), kw, call, i % 6, (0, 1))


# ----------------------------------------------------------------------------- the rest


def _ghm(mm: Any, ours: Any, rng: np.random.Generator, nr: int) -> Iterator[Case]:
    m = mm["ghm_loss"]
    grid = {
        "bins": [10, 5],
        "momentum": [0.0, 0.75],
        "loss_weight": [1.0, 0.5],
        "reduction": RED,
        "target": ["dense", "index"],
        "reduction_override": OVR,
    }
    for o in combos(grid, rng, nr):
        ctor, call = _split(o, ("bins", "momentum", "loss_weight", "reduction"))
        calls = []
        for _ in range(3):  # one instance over 3 calls: acc_sum carries the momentum
            pred = _logits(rng, (8, 3), False)
            if call["target"] == "dense":
                target: np.ndarray = (rng.uniform(size=(8, 3)) > 0.6).astype(np.float64)
                lw = (rng.uniform(size=(8, 3)) > 0.2).astype(np.float64)
            else:
                target = rng.integers(0, 4, 8)
                lw = (rng.uniform(size=8) > 0.2).astype(np.float64)
            calls.append(((pred, target, lw), {"reduction_override": call["reduction_override"]}))
        yield _make("GHMC", m.GHMC, ours.GHMC, ctor, calls, extra=call)
    grid = {
        "mu": [0.02, 0.1],
        "bins": [10, 4],
        "momentum": [0.0, 0.75],
        "loss_weight": [1.0, 2.0],
        "reduction": RED,
        "avg_factor": [None, 5.0],
        "reduction_override": OVR,
    }
    for o in combos(grid, rng, nr):
        ctor, call = _split(o, ("mu", "bins", "momentum", "loss_weight", "reduction"))
        calls = []
        for _ in range(3):
            pred, target = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
            lw = (rng.uniform(size=(6, 4)) > 0.2).astype(np.float64)
            calls.append(((pred, target, lw), call))
        yield _make("GHMR", m.GHMR, ours.GHMR, ctor, calls, extra=call)


def _misc(mm: Any, ours: Any, rng: np.random.Generator, nr: int) -> Iterator[Case]:
    m = mm["seesaw_loss"]
    c = 5
    grid = {
        "p": [0.8, 0.0],
        "q": [2.0, 0.0],
        "eps": [1e-2, 0.5],
        "reduction": RED,
        "loss_weight": [1.0, 0.5],
        "return_dict": [True, False],
        "label_weights": [None, "row"],
        "avg_factor": [None, 4.0],
        "reduction_override": OVR,
    }
    keys = ("p", "q", "eps", "reduction", "loss_weight", "return_dict")
    for o in combos(grid, rng, nr):
        ctor, call = _split(o, keys)
        calls = []
        for _ in range(3):  # cum_samples accumulates over the calls
            labels = rng.integers(0, c + 1, 9)
            kw = {
                "label_weights": _weight(rng, call["label_weights"], (9,)),
                "avg_factor": call["avg_factor"],
                "reduction_override": call["reduction_override"],
            }
            calls.append(((_logits(rng, (9, c + 2), False), labels), kw))
        yield _make(
            "SeesawLoss",
            m.SeesawLoss,
            ours.SeesawLoss,
            {"num_classes": c, **ctor},
            calls,
            extra=call,
        )
    m = mm["dice_loss"]
    grid = {
        "use_sigmoid": [True, False],
        "activate": [True, False],
        "naive_dice": [False, True],
        "eps": [1e-3, 1.0],
        "reduction": RED,
        "loss_weight": [1.0, 2.0],
        "weight": [None, "row"],
        "avg_factor": [None, 2.0],
        "reduction_override": OVR,
    }
    keys = ("use_sigmoid", "activate", "naive_dice", "eps", "reduction", "loss_weight")
    for i, o in enumerate(combos(grid, rng, nr)):
        ctor, call = _split(o, keys)
        pred = _logits(rng, (4, 3, 3), False)
        if not ctor["activate"]:
            pred = rng.uniform(0, 1, (4, 3, 3))
        target = (rng.uniform(size=(4, 3, 3)) > 0.5).astype(np.float64)
        target[0] = 0.0  # an empty mask
        kw = _std_kw(call, _weight(rng, call["weight"], (4,)))
        yield _case("DiceLoss", m, ours, ctor, (pred, target), kw, call, i % 5, grad=(0, 1))
    m = mm["kd_loss"]
    grid = {
        "T": [10, 1, 2.5],
        "reduction": RED,
        "loss_weight": [1.0, 0.5],
        "weight": [None, "row"],
        "avg_factor": [None, 3.0],
        "reduction_override": OVR,
    }
    for o in combos(grid, rng, nr):
        ctor, call = _split(o, ("T", "reduction", "loss_weight"))
        kw = _std_kw(call, _weight(rng, call["weight"], (5,)))
        yield _make(
            "KnowledgeDistillationKLDivLoss",
            m.KnowledgeDistillationKLDivLoss,
            ours.KnowledgeDistillationKLDivLoss,
            ctor,
            [((_logits(rng, (5, 4), False), _logits(rng, (5, 4), False)), kw)],
            extra=call,
            grad=(0, 1),
        )
    m = mm["eqlv2_loss"]
    grid = {
        "mu": [0.8, 0.5],
        "alpha": [4.0, 2.0],
        "gamma": [12, 6],
        "reduction": RED,
        "loss_weight": [1.0, 0.5],
        "weight": [None, "row"],
    }
    for o in combos(grid, rng, nr):
        ctor, call = _split(o, ("mu", "alpha", "gamma", "reduction", "loss_weight"))
        calls = []
        for _ in range(3):  # pos_grad / neg_grad accumulate in the backward pass
            kw = {"weight": _weight(rng, call["weight"], (6, c + 1))}
            calls.append(((_logits(rng, (6, c + 1), False), rng.integers(0, c + 1, 6)), kw))
        yield _make(
            "EQLV2Loss", m.EQLV2Loss, ours.EQLV2Loss, {"num_classes": c, **ctor}, calls, extra=call
        )
    m = mm["accuracy"]
    for o in combos(
        {"topk": [1, (1, 2), (3, 1)], "thresh": [None, 0.5, 0.9], "n": [7, 0]}, rng, nr
    ):
        pred = rng.standard_normal((o["n"], 4))
        target = rng.integers(0, 4, o["n"])
        ctor = {"topk": o["topk"], "thresh": o["thresh"]}
        yield _make(
            "Accuracy",
            m.Accuracy,
            ours.Accuracy,
            ctor,
            [((pred, target), {})],
            extra={"n": o["n"]},
            grad=(),
        )
    ov = mm["bbox_overlaps"]
    for i, o in enumerate(
        combos(
            {
                "mode": ["iou", "iof", "giou"],
                "is_aligned": [False, True],
                "eps": [1e-6, 1e-2],
                "boxes": ["random", "degenerate"],
                "batch": [False, True],
                "empty": [False, True],
            },
            rng,
            nr,
        )
    ):
        b1, b2 = _boxes(rng, 6, o["boxes"])
        if not o["is_aligned"]:
            b2 = b2[:4]
        if o["empty"]:
            b1 = b1[:0]
        if o["batch"]:
            b1, b2 = np.stack([b1, b1 + 1.0]), np.stack([b2, b2 * 0.9])
        kw = {k: o[k] for k in ("mode", "is_aligned", "eps")}
        yield Case(
            "bbox_overlaps",
            _desc(o),
            lambda: ov.bbox_overlaps,
            lambda: ours.bbox_overlaps,
            [((b1, b2), kw)],
            grad=(0, 1),
            dtypes=F16 if i % 3 == 0 else ("float32", "float64"),
        )


def all_cases(mm: Dict[str, Any], ours: Any, seed: int, quick: bool) -> List[Case]:
    """Every case, seeded; ``quick`` keeps the one-at-a-time sweeps and fewer random draws."""
    rng = np.random.default_rng(seed)
    nr = 2 if quick else 8
    out: List[Case] = []
    for gen in (_ce, _focal, _varifocal, _gfocal, _gaussian, _iou, _regression, _ghm, _misc):
        out.extend(gen(mm, ours, rng, nr))
    if quick:
        out = out[::3]
    return out
