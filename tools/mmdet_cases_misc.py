"""The seeded cases of ``tools/check_mmdet.py`` for GHM and the remaining losses (Seesaw, Dice,
knowledge distillation, EQLv2, ``Accuracy``, ``bbox_overlaps``)."""

from __future__ import annotations

from typing import Any, Iterator

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

__all__ = ["ghm", "misc"]


def ghm(mm: Any, ours: Any, rng: np.random.Generator, nr: int) -> Iterator[Case]:
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
        ctor, call = split(o, ("bins", "momentum", "loss_weight", "reduction"))
        calls = []
        for _ in range(3):  # one instance over 3 calls: acc_sum carries the momentum
            pred = logits(rng, (8, 3), False)
            if call["target"] == "dense":
                target: np.ndarray = (rng.uniform(size=(8, 3)) > 0.6).astype(np.float64)
                lw = (rng.uniform(size=(8, 3)) > 0.2).astype(np.float64)
            else:
                target = rng.integers(0, 4, 8)
                lw = (rng.uniform(size=8) > 0.2).astype(np.float64)
            calls.append(((pred, target, lw), {"reduction_override": call["reduction_override"]}))
        yield make("GHMC", m.GHMC, ours.GHMC, ctor, calls, extra=call)
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
        ctor, call = split(o, ("mu", "bins", "momentum", "loss_weight", "reduction"))
        calls = []
        for _ in range(3):
            pred, target = rng.standard_normal((6, 4)), rng.standard_normal((6, 4))
            lw = (rng.uniform(size=(6, 4)) > 0.2).astype(np.float64)
            calls.append(((pred, target, lw), call))
        yield make("GHMR", m.GHMR, ours.GHMR, ctor, calls, extra=call)


def misc(mm: Any, ours: Any, rng: np.random.Generator, nr: int) -> Iterator[Case]:
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
        ctor, call = split(o, keys)
        calls = []
        for _ in range(3):  # cum_samples accumulates over the calls
            labels = rng.integers(0, c + 1, 9)
            kw = {
                "label_weights": make_weight(rng, call["label_weights"], (9,)),
                "avg_factor": call["avg_factor"],
                "reduction_override": call["reduction_override"],
            }
            calls.append(((logits(rng, (9, c + 2), False), labels), kw))
        yield make(
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
        ctor, call = split(o, keys)
        pred = logits(rng, (4, 3, 3), False)
        if not ctor["activate"]:
            pred = rng.uniform(0, 1, (4, 3, 3))
        target = (rng.uniform(size=(4, 3, 3)) > 0.5).astype(np.float64)
        target[0] = 0.0  # an empty mask
        kw = std_kw(call, make_weight(rng, call["weight"], (4,)))
        yield case("DiceLoss", m, ours, ctor, (pred, target), kw, call, i % 5, grad=(0, 1))
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
        ctor, call = split(o, ("T", "reduction", "loss_weight"))
        kw = std_kw(call, make_weight(rng, call["weight"], (5,)))
        yield make(
            "KnowledgeDistillationKLDivLoss",
            m.KnowledgeDistillationKLDivLoss,
            ours.KnowledgeDistillationKLDivLoss,
            ctor,
            [((logits(rng, (5, 4), False), logits(rng, (5, 4), False)), kw)],
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
        ctor, call = split(o, ("mu", "alpha", "gamma", "reduction", "loss_weight"))
        calls = []
        for _ in range(3):  # pos_grad / neg_grad accumulate in the backward pass
            kw = {"weight": make_weight(rng, call["weight"], (6, c + 1))}
            calls.append(((logits(rng, (6, c + 1), False), rng.integers(0, c + 1, 6)), kw))
        yield make(
            "EQLV2Loss", m.EQLV2Loss, ours.EQLV2Loss, {"num_classes": c, **ctor}, calls, extra=call
        )
    m = mm["accuracy"]
    for o in combos(
        {"topk": [1, (1, 2), (3, 1)], "thresh": [None, 0.5, 0.9], "n": [7, 0]}, rng, nr
    ):
        pred = rng.standard_normal((o["n"], 4))
        target = rng.integers(0, 4, o["n"])
        ctor = {"topk": o["topk"], "thresh": o["thresh"]}
        yield make(
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
        b1, b2 = boxes(rng, 6, o["boxes"])
        if not o["is_aligned"]:
            b2 = b2[:4]
        if o["empty"]:
            b1 = b1[:0]
        if o["batch"]:
            b1, b2 = np.stack([b1, b1 + 1.0]), np.stack([b2, b2 * 0.9])
        kw = {k: o[k] for k in ("mode", "is_aligned", "eps")}
        yield Case(
            "bbox_overlaps",
            desc(o),
            lambda: ov.bbox_overlaps,
            lambda: ours.bbox_overlaps,
            [((b1, b2), kw)],
            grad=(0, 1),
            dtypes=F16 if i % 3 == 0 else ("float32", "float64"),
        )
