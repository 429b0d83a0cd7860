"""The seeded cases of ``tools/check_mmdet.py``: every issue-16 loss, its options swept.

Each option grid is covered one option at a time from the defaults (every value of every option
appears) plus a seeded random sample of the full product; inputs include adversarial values
(logits of +-1e4, zero-area and identical boxes, no positives, ``avg_factor=0``, ignored labels).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Tuple

import numpy as np
from check_mmdet import Case
from mmdet_case_kit import (  # the shared grids and constructors
    F16,
    OVR,
    RED,
    boxes,
    case,
    combos,
    desc,
    logits,
    make,
    make_weight,
    split,
    std_kw,
)
from mmdet_cases_misc import ghm, misc

__all__ = ["all_cases", "combos"]

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
        ctor, call = split(o, keys)
        width = c if not ctor["use_sigmoid"] or o["target"] == "dense" else c
        if ctor["class_weight"] == "cw":
            ctor["class_weight"] = list(rng.uniform(0.5, 2, width).round(3))
        pred = logits(rng, (n, width), o["target"] == "extreme")
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
            "weight": make_weight(rng, call["weight"], wshape),
            "avg_factor": call["avg_factor"],
            "reduction_override": call["reduction_override"],
            "ignore_index": call["call_ignore"],
        }
        yield case("CrossEntropyLoss", m, ours, ctor, (pred, label), kw, call, i % 4)
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
        ctor, call = split(o, ("reduction", "class_weight", "loss_weight"))
        if ctor["class_weight"] == "cw":
            ctor["class_weight"] = list(rng.uniform(0.5, 2, 3).round(3))
        pred = logits(rng, (4, 3, 5, 5), i % 2 == 1)
        target = (rng.uniform(size=(4, 5, 5)) > 0.5).astype(np.float64)
        label = rng.integers(0, 3, 4)
        yield make(
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
            pred = logits(rng, (6, 4), False)
            label = rng.integers(0, 4, 6)
            label[0] = -100
            label[1] = 3
            yield Case(
                fname,
                desc(o),
                lambda f=fname: getattr(m, f),
                lambda f=fname: getattr(ours, f),
                [((pred, label), o)],
            )
    pred = logits(rng, (3, 4, 2, 2), False)
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
        ctor, call = split(o, keys)
        pred = logits(rng, (n, c), call["extreme"])
        if ctor["activated"]:
            pred = rng.uniform(0.02, 0.98, (n, c))
        tk = call["target"]
        if tk in ("index", "no_pos"):
            target: np.ndarray = rng.integers(0, c + 1, n) if tk == "index" else np.full(n, c)
        else:
            target = np.eye(c)[rng.integers(0, c, n)]
            if tk == "soft":
                target = target * rng.uniform(0.1, 1.0, (n, 1))
        w = make_weight(rng, call["weight"], (n,) if call["weight"] == "row" else (n, c))
        kw = std_kw(call, w)
        yield make(
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
        ctor, call = split(o, keys)
        pred = logits(rng, (n, c), call["extreme"])
        target = np.eye(c)[rng.integers(0, c, n)] * rng.uniform(0.1, 1, (n, 1))
        if call["no_pos"]:
            target[:] = 0
        w = make_weight(rng, call["weight"], (n, 1) if call["weight"] == "col" else (n, c))
        kw = std_kw(call, w)
        yield case("VarifocalLoss", m, ours, ctor, (pred, target), kw, call, i % 5, grad=(0, 1))


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
        ctor, call = split(o, keys)
        pred = (
            rng.uniform(0.02, 0.98, (n, c))
            if ctor["activated"]
            else logits(rng, (n, c), call["extreme"])
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
            "weight": make_weight(rng, call["weight"], (n,)),  # both forms sum over the classes
            "avg_factor": call["avg_factor"],
            "reduction_override": call["reduction_override"],
        }
        yield case("QualityFocalLoss", m, ours, ctor, (pred, target), kw, call, i % 5, grad=grad)
    grid = {
        "reduction": RED,
        "loss_weight": [1.0, 0.25],
        "weight": [None, "row"],
        "avg_factor": [None, 2.0, 0.0],
        "reduction_override": OVR,
    }
    for o in combos(grid, rng, max(nr // 2, 2)):
        ctor, call = split(o, ("reduction", "loss_weight"))
        pred = logits(rng, (5, 8), False)
        label = rng.uniform(0, 6.99, 5)
        label[0], label[1] = 0.0, 3.0  # integral labels: the right bin's weight is 0
        kw = std_kw(call, make_weight(rng, call["weight"], (5,)))
        yield make(
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
        ctor, call = split(o, keys)
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
            kw["weight"] = make_weight(rng, call["weight"], (n, c))
        yield case("GaussianFocalLoss", m, ours, ctor, (pred, target), kw, call, i % 5, grad=(0, 1))


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
            ctor, call = split(o, keys)
            pred, target = boxes(rng, 6, call["boxes"])
            wk = call["weight"]
            w = make_weight(rng, wk, (6, 4) if wk == "box" else (6,))
            kw = std_kw(call, w)
            yield case(name, m, ours, ctor, (pred, target), kw, call, i % 6, grad=(0, 1))


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
            ctor, call = split(o, keys)
            shape = call["shape"]
            pred = rng.standard_normal(shape) * 2
            target = rng.standard_normal(shape) * 2
            if shape[0]:
                beta = ctor.get("beta", 1.0)
                target.flat[0] = pred.flat[0] + beta  # exactly at the kink
                target.flat[1] = pred.flat[1]
            kw = std_kw(call, make_weight(rng, call["weight"], shape))
            yield case(name, mm[module], ours, ctor, (pred, target), kw, call, i % 6, (0, 1))


def all_cases(mm: Dict[str, Any], ours: Any, seed: int, quick: bool) -> List[Case]:
    """Every case, seeded; ``quick`` keeps the one-at-a-time sweeps and fewer random draws."""
    rng = np.random.default_rng(seed)
    nr = 2 if quick else 8
    out: List[Case] = []
    for gen in (_ce, _focal, _varifocal, _gfocal, _gaussian, _iou, _regression, ghm, misc):
        out.extend(gen(mm, ours, rng, nr))
    if quick:
        out = out[::3]
    return out
