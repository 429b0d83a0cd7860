"""Measure which MindSpore callable can stand in for each PyTorch API, on this machine's backend.

This script produces ``mscompat/scan/data/api_knowledge.json``, the knowledge behind
``mscompat scan``. Nothing in that file is typed by hand: for every case below the PyTorch API is
run with ``torch`` on a small seeded input, each MindSpore candidate (``mindspore.mint``, then
``mindspore.ops``, then ``mindspore.nn`` Cells, then ``Tensor`` methods, then adapted calls named
in the case) is run **with the same call**, and the outcome is recorded:

* eager: PyNative forward, compared with torch (shape, dtype, values; atol = rtol = 1e-4);
* grad: ``ms.grad`` of ``sum(out * W)`` with a fixed random ``W`` against torch autograd
  (atol = rtol = 1e-3), for cases with float inputs;
* jit: the same call inside ``ms.jit``, forward compared with torch.

Status of a candidate: ``OK``, ``NO-GRAD``, ``GRAPH-FAILS``, ``DIFFERS`` (the call is rejected,
or runs with another result, or only an adapted call works), ``CPU-UNREGISTERED`` (a kernel error
on this backend; the name is kept for every backend), ``MISSING`` (no candidate exists). The best
candidate wins (OK < NO-GRAD < GRAPH-FAILS < DIFFERS < CPU-UNREGISTERED).

Crash isolation: cases run in a worker process that reports one JSON line per case; the parent
restarts the worker after a crash (recorded as ``CRASH``), a timeout, or any failing case (a failed
MindSpore call can poison later calls in the same process).

Run it by hand (it is not part of the test suite; about 10 minutes on 2 CPU cores)::

    python tools/probe_apis.py                       # measure on CPU, merge into the data file
    python tools/probe_apis.py --device GPU          # on a GPU machine: fills the GPU column
    python tools/probe_apis.py --only interpolate    # re-measure a subset

Each run replaces the column of the device it ran on and keeps the other columns.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "mscompat" / "scan" / "data" / "api_knowledge.json"
F = "torch.nn.functional."
T = "torch.Tensor."
NN = "torch.nn."

# ----------------------------------------------------------------------------------------------
# Case table
# ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Arr:
    """An input array: ``kind`` f (normal float32), w (spread over [-4, 4]), p (positive),
    u (0..1), i (int64 in [0, hi)),
    b (bool), s (sorted float32 along the last axis), box (valid xyxy boxes)."""

    shape: Tuple[int, ...]
    kind: str = "f"
    hi: int = 4


@dataclass(frozen=True)
class DT:
    """A dtype argument: torch.<name> / mindspore.<name>."""

    name: str


def f(*shape: int) -> Arr:
    return Arr(tuple(shape), "f")


def p(*shape: int) -> Arr:
    return Arr(tuple(shape), "p")


def u(*shape: int) -> Arr:
    return Arr(tuple(shape), "u")


def i(*shape: int, hi: int = 4) -> Arr:
    return Arr(tuple(shape), "i", hi)


def b(*shape: int) -> Arr:
    return Arr(tuple(shape), "b")


@dataclass
class Case:
    """One probe: a PyTorch API called one way.

    Attributes:
        api: fully qualified PyTorch name (``torch.nn.functional.interpolate``).
        args, kwargs: the call (Arr become tensors; DT become dtypes).
        variant: a label for this way of calling it ("" for the plain call).
        when: keyword arguments (name -> literal) of call sites this variant describes; the
            scanner matches call sites against it.
        init, init_kwargs: for ``torch.nn`` Module classes, the constructor arguments.
        adapted: extra candidates ``(label, source)`` where ``source`` is the call written with
            ``t0, t1...`` for the tensors (e.g. ``"ops.gelu(t0, approximate='none')"``), or
            for a module the expression constructing the Cell (``"nn.Conv2d(3, 4, 3, ...)"``);
            an adapted candidate that passes makes the status DIFFERS, "works as <label>".
        grad: check gradients (float inputs).
        values: compare values (False for random ops: shape and dtype only).
        hint: one sentence explaining a difference, appended to the note when status is not OK.
        ref: ``"name"`` of a NumPy reference in ``REFS`` when torch has no such op here.
        extra_candidates: more names to try with the same call (e.g. ``ops.iou``).
        torch_src: a scripted case: the torch code (an expression, or a function body with
            ``return``) over the tensors ``t0, t1...``; for a ``torch.nn`` class, the expression
            constructing the module. ``TLoop``/``TDictLoop``/``TScale``/``tstats`` are in scope.
        ms_native: scripted counterparts ``(label, source)`` in the same form (MindSpore side;
            ``Loop``/``DictLoop``/``Scale``/``stats``, ``ms``, ``initializer`` in scope).
        jit: when not empty, the jit stage is not run and this says why (host-side APIs).
        group: topic, for the report.
    """

    api: str
    args: Tuple[Any, ...] = ()
    kwargs: Dict[str, Any] = field(default_factory=dict)
    variant: str = ""
    when: Dict[str, Any] = field(default_factory=dict)
    init: Tuple[Any, ...] = ()
    init_kwargs: Dict[str, Any] = field(default_factory=dict)
    adapted: Tuple[Tuple[str, str], ...] = ()
    grad: bool = True
    values: bool = True
    hint: str = ""
    ref: str = ""
    extra_candidates: Tuple[str, ...] = ()
    group: str = ""
    lookup_only: bool = False
    torch_src: str = ""
    ms_native: Tuple[Tuple[str, str], ...] = ()
    jit: str = ""

    @property
    def scripted(self) -> bool:
        """A case written as code (containers, optimizers, contexts): ``torch_src`` on the torch
        side, ``ms_native`` (counterparts) and ``adapted`` (other constructs) on MindSpore's."""
        return bool(self.torch_src)

    @property
    def key(self) -> str:
        return f"{self.api}({self.variant})" if self.variant else self.api

    @property
    def is_module(self) -> bool:
        name = self.api.rsplit(".", 1)[-1]
        return self.api.startswith(NN) and not self.api.startswith(F) and name[:1].isupper()

    @property
    def is_method(self) -> bool:
        return self.api.startswith(T)


X4 = f(2, 3, 8, 8)
X2 = f(4, 6)
# activations: 240 values spread over [-4, 4], so approximations (tanh gelu) show up
WIDE = Arr((6, 40), "w")


def _cases() -> List[Case]:
    c: List[Case] = []

    def add(api: str, *args: Any, **kw: Any) -> None:
        opts = {k[1:]: v for k, v in kw.items() if k.startswith("_")}
        kwargs = {k: v for k, v in kw.items() if not k.startswith("_")}
        c.append(Case(api, tuple(args), kwargs, **opts))

    # activations (functional)
    g = {"_group": "activation"}
    for name in ("relu", "relu6", "elu", "selu", "silu", "mish", "hardswish", "hardsigmoid"):
        add(F + name, WIDE, **g)
    for name in ("softsign", "logsigmoid", "tanhshrink", "sigmoid", "tanh"):
        add(F + name, WIDE, **g)
    add(F + "leaky_relu", WIDE, negative_slope=0.2, **g)
    add(F + "leaky_relu", WIDE, _variant="default slope", **g)
    add(F + "hardtanh", WIDE, **g)
    add(F + "softplus", WIDE, **g)
    add(
        F + "gelu",
        WIDE,
        _adapted=(("ops.gelu(x, approximate='none')", "ops.gelu(t0, approximate='none')"),),
        **g,
    )
    add(F + "gelu", WIDE, approximate="tanh", _variant="tanh", _when={"approximate": "tanh"}, **g)
    add(F + "softmax", WIDE, dim=1, **g)
    add(F + "log_softmax", X2, dim=1, **g)
    add(F + "glu", X2, dim=1, **g)
    add(F + "normalize", X2, dim=1, **g)
    add(F + "dropout", X2, p=0.5, training=False, _variant="eval", **g)
    add(F + "one_hot", i(6, hi=5), num_classes=5, _grad=False, **g)
    # linear / conv / norm (functional)
    g = {"_group": "linear/conv/norm"}
    add(F + "linear", X2, f(5, 6), f(5), **g)
    add(F + "conv2d", X4, f(4, 3, 3, 3), f(4), padding=1, **g)
    add(F + "conv2d", X4, f(4, 3, 3, 3), stride=2, _variant="stride", _when={"stride": "*"}, **g)
    add(F + "conv_transpose2d", X4, f(3, 4, 3, 3), stride=2, padding=1, **g)
    add(F + "layer_norm", X2, (6,), **g)
    add(F + "group_norm", f(2, 4, 5, 5), 2, **g)
    add(F + "batch_norm", X4, f(3), p(3), _variant="eval", **g)
    add(F + "embedding", i(5, hi=7), f(7, 3), **g)
    add(F + "pixel_shuffle", f(1, 8, 3, 3), 2, **g)
    add(F + "cosine_similarity", X2, f(4, 6), **g)
    add(F + "pad", X4, (1, 1, 2, 2), **g)
    add(
        F + "pad",
        X4,
        (1, 1, 2, 2),
        mode="reflect",
        _variant="reflect",
        _when={"mode": "reflect"},
        **g,
    )
    add(F + "unfold", X4, 3, padding=1, **g)
    add(F + "fold", f(1, 12, 16), (5, 5), 2, **g)
    add(F + "grid_sample", X4, Arr((2, 5, 5, 2), "u"), align_corners=False, **g)
    add(F + "affine_grid", f(2, 2, 3), [2, 3, 5, 5], align_corners=False, **g)
    # pooling / resize (functional)
    g = {"_group": "pooling/resize"}
    add(F + "max_pool2d", X4, 2, **g)
    add(F + "max_pool2d", X4, 3, 2, 1, _variant="k3s2p1", _when={"padding": "*"}, **g)
    add(F + "avg_pool2d", X4, 2, **g)
    add(F + "adaptive_avg_pool2d", X4, 1, **g)
    add(F + "adaptive_avg_pool2d", f(2, 3, 7, 7), 3, _variant="non-divisible", **g)
    add(F + "adaptive_max_pool2d", X4, 3, **g)
    add(F + "adaptive_avg_pool1d", f(2, 3, 11), 5, **g)
    add(
        F + "interpolate",
        X4,
        scale_factor=2,
        _variant="scale_factor=2",
        _when={"scale_factor": 2},
        _adapted=(("ops.interpolate(x, size=(2*H, 2*W))", "ops.interpolate(t0, size=(16, 16))"),),
        _hint="MindSpore rejects an int scale_factor (and ops.interpolate any scale_factor for "
        "nearest 4-D); pass size=",
        **g,
    )
    add(
        F + "interpolate",
        X4,
        scale_factor=2.0,
        _variant="scale_factor=2.0",
        _when={"scale_factor": 2.0},
        **g,
    )
    add(F + "interpolate", X4, size=(5, 11), _variant="size", _when={"size": "*"}, **g)
    add(
        F + "interpolate",
        X4,
        scale_factor=2,
        mode="bilinear",
        align_corners=False,
        _variant="bilinear,scale_factor",
        _when={"mode": "bilinear", "scale_factor": "*"},
        **g,
    )
    add(
        F + "interpolate",
        X4,
        size=(5, 11),
        mode="bilinear",
        align_corners=False,
        _variant="bilinear,size",
        _when={"mode": "bilinear", "size": "*"},
        **g,
    )
    add(
        F + "interpolate",
        X4,
        size=(5, 11),
        mode="bilinear",
        align_corners=True,
        _variant="bilinear,align_corners",
        _when={"mode": "bilinear", "align_corners": True},
        **g,
    )
    # losses (functional)
    g = {"_group": "loss"}
    add(F + "cross_entropy", f(5, 4), i(5, hi=4), **g)
    add(
        F + "cross_entropy",
        f(5, 4),
        i(5, hi=4),
        label_smoothing=0.1,
        _variant="label_smoothing",
        _when={"label_smoothing": "*"},
        **g,
    )
    add(F + "nll_loss", f(5, 4), i(5, hi=4), **g)
    add(F + "binary_cross_entropy_with_logits", X2, u(4, 6), **g)
    add(F + "binary_cross_entropy", u(4, 6), u(4, 6), **g)
    add(F + "l1_loss", X2, f(4, 6), **g)
    add(F + "mse_loss", X2, f(4, 6), **g)
    add(F + "smooth_l1_loss", X2, f(4, 6), **g)
    add(F + "smooth_l1_loss", X2, f(4, 6), beta=0.5, _variant="beta", _when={"beta": "*"}, **g)
    add(F + "kl_div", f(4, 6), u(4, 6), reduction="batchmean", **g)
    # torch.* math
    g = {"_group": "tensor-op"}
    for name in (
        "abs", "neg", "exp", "sin", "cos", "tanh", "sigmoid", "relu", "floor", "ceil", "round",
        "sign", "erf", "atan", "square", "expm1", "exp2", "trunc", "isnan", "isfinite",
    ):  # fmt: skip
        add("torch." + name, X2, **g)
    for name in ("log", "sqrt", "rsqrt", "log1p", "reciprocal", "log2"):
        add("torch." + name, p(4, 6), **g)
    for name in (
        "add",
        "sub",
        "mul",
        "div",
        "maximum",
        "minimum",
        "atan2",
        "pow",
        "eq",
        "gt",
        "lt",
        "ge",
        "ne",
        "remainder",
        "floor_divide",
    ):
        add("torch." + name, X2, f(4, 6), **g)
    add("torch.pow", X2, 2, _variant="scalar exponent", **g)
    add("torch.clamp", X2, min=0.0, **g)
    add("torch.clamp", X2, -0.5, 0.5, _variant="min,max", _when={"max": "*"}, **g)
    add("torch.matmul", f(2, 4, 5), f(5, 3), **g)
    add("torch.mm", X2, f(6, 3), **g)
    add("torch.bmm", f(2, 4, 5), f(2, 5, 3), **g)
    add("torch.einsum", "bij,bjk->bik", f(2, 4, 5), f(2, 5, 3), **g)
    add("torch.outer", f(4), f(5), **g)
    add("torch.lerp", X2, f(4, 6), 0.3, **g)
    add("torch.where", b(4, 6), X2, f(4, 6), **g)
    add("torch.where", b(4, 6), _variant="condition only", _grad=False, **g)
    add("torch.logical_and", b(4, 6), b(4, 6), **g)
    add("torch.logical_not", b(4, 6), **g)
    # reductions
    for name in ("sum", "mean", "prod", "amax", "amin", "logsumexp", "std", "var", "norm"):
        add("torch." + name, X2, dim=1, **g)
    add("torch.sum", X2, _variant="all", **g)
    add("torch.mean", X2, _variant="all", **g)
    add("torch.max", X2, dim=1, _variant="dim", _when={"dim": "*"}, **g)
    add("torch.max", X2, **g)
    add("torch.min", X2, dim=1, _variant="dim", _when={"dim": "*"}, **g)
    add("torch.argmax", X2, dim=1, **g)
    add("torch.argmin", X2, dim=1, **g)
    add("torch.all", b(4, 6), **g)
    add("torch.any", b(4, 6), **g)
    add("torch.cumsum", X2, dim=1, **g)
    add("torch.cumprod", X2, dim=1, **g)
    add("torch.count_nonzero", b(4, 6), **g)
    # shape / indexing
    g = {"_group": "shape/indexing"}
    add("torch.cat", [f(2, 3), f(4, 3)], **g)
    add("torch.cat", [f(2, 3), f(2, 5)], dim=1, _variant="dim=1", **g)
    add("torch.stack", [f(2, 3), f(2, 3)], **g)
    add("torch.split", f(6, 3), 2, **g)
    add("torch.chunk", f(6, 3), 3, **g)
    add("torch.flatten", X4, 1, **g)
    add("torch.reshape", X2, (3, 8), **g)
    add("torch.transpose", X4, 1, 2, **g)
    add("torch.permute", X4, (0, 2, 3, 1), **g)
    add("torch.squeeze", f(4, 1, 6), **g)
    add("torch.unsqueeze", X2, 1, **g)
    add("torch.flip", X2, (1,), **g)
    add("torch.roll", X2, 1, 1, **g)
    add("torch.tril", f(5, 5), **g)
    add("torch.triu", f(5, 5), **g)
    add("torch.gather", X2, 1, i(4, 3, hi=6), **g)
    add("torch.index_select", X2, 0, i(3, hi=4), **g)
    add("torch.masked_select", X2, b(4, 6), **g)
    add("torch.nonzero", b(4, 6), **g)
    add("torch.nonzero", b(4, 6), as_tuple=True, _variant="as_tuple", _when={"as_tuple": True}, **g)
    add("torch.unique", i(10, hi=4), **g)
    add(
        "torch.unique",
        i(10, hi=4),
        return_inverse=True,
        return_counts=True,
        _variant="inverse,counts",
        _when={"return_counts": True},
        **g,
    )
    add("torch.sort", X2, dim=1, **g)
    add(
        "torch.sort",
        X2,
        dim=1,
        descending=True,
        _variant="descending",
        _when={"descending": True},
        **g,
    )
    add("torch.argsort", X2, dim=1, **g)
    add("torch.topk", X2, 3, **g)
    add("torch.topk", X2, 3, largest=False, _variant="smallest", _when={"largest": False}, **g)
    add("torch.kthvalue", X2, 2, **g)
    add("torch.median", X2, dim=1, **g)
    add("torch.repeat_interleave", X2, 2, dim=0, **g)
    add("torch.scatter", X2, 1, i(4, 2, hi=6), f(4, 2), **g)
    add("torch.scatter_add", X2, 1, i(4, 2, hi=6), f(4, 2), **g)
    add("torch.meshgrid", f(3), f(4), indexing="ij", **g)
    add("torch.cdist", f(4, 3), f(5, 3), **g)
    add("torch.bincount", i(10, hi=5), **g)
    add("torch.searchsorted", Arr((6,), "s"), f(4), **g)
    add("torch.diag", f(4), **g)
    # creation
    g = {"_group": "creation", "_grad": False}
    add("torch.zeros", (2, 3), **g)
    add("torch.ones", (2, 3), **g)
    add("torch.full", (2, 3), 1.5, **g)
    add("torch.eye", 3, **g)
    add("torch.arange", 5, **g)
    add("torch.arange", 0, 10, 2, _variant="start,end,step", _when={"#2": "*"}, **g)
    add("torch.linspace", 0.0, 1.0, 5, **g)
    add("torch.zeros_like", X2, **g)
    add("torch.ones_like", X2, **g)
    add("torch.full_like", X2, 2.0, **g)
    add("torch.rand", 2, 3, _values=False, **g)
    add("torch.randn", 2, 3, _values=False, **g)
    add("torch.clone", X2, _group="creation")
    # tensor methods
    g = {"_group": "tensor-method"}
    for name in (
        "contiguous", "sigmoid", "exp", "abs", "float", "detach", "clone", "t", "neg",
        "sum", "mean", "max", "min", "numel", "dim", "tolist", "numpy", "item", "long", "int",
        "bool", "sqrt", "relu", "tanh", "flatten", "floor", "round", "log", "any", "all", "cpu",
        "half", "double", "squeeze", "norm", "nonzero", "argmax", "argsort", "cumsum", "unique",
        "isnan", "size", "std", "var", "softmax", "cumsum",
    ):  # fmt: skip
        arr: Any = X2
        if name in ("any", "all", "nonzero", "bool"):
            arr = b(4, 6)
        if name in ("item",):
            arr = f(1)
        if name in ("sqrt", "log"):
            arr = p(4, 6)
        if name in ("softmax", "cumsum"):
            add(T + name, arr, 1, **g)
            continue
        if name in ("squeeze",):
            arr = f(4, 1, 6)
        add(T + name, arr, **g)
    add(T + "view", X4, -1, **g)
    add(T + "view", X4, 2, -1, _variant="shape", **g)
    add(T + "reshape", X4, 2, -1, **g)
    add(T + "permute", X4, 0, 2, 3, 1, **g)
    add(T + "transpose", X4, 1, 2, **g)
    add(T + "unsqueeze", X2, 0, **g)
    add(T + "expand", f(4, 1), 4, 6, **g)
    add(T + "expand_as", f(4, 1), f(4, 6), **g)
    add(T + "repeat", X2, 2, 1, **g)
    add(T + "view_as", f(24), X2, **g)
    add(T + "type_as", X2, f(2), **g)
    add(T + "new_zeros", X2, (2, 3), _grad=False, **g)
    add(T + "new_ones", X2, (2, 3), _grad=False, **g)
    add(T + "new_full", X2, (2, 3), 1.5, _grad=False, **g)
    add(T + "new_tensor", X2, [1.0, 2.0], _grad=False, **g)
    add(T + "sort", X2, **g)
    add(
        T + "sort",
        X2,
        dim=1,
        descending=True,
        _variant="descending",
        _when={"descending": True},
        **g,
    )
    add(T + "topk", X2, 3, **g)
    add(
        T + "topk",
        X2,
        3,
        dim=1,
        largest=True,
        sorted=True,
        _variant="dim,largest,sorted",
        _when={"largest": "*"},
        **g,
    )
    add(T + "max", X2, dim=1, _variant="dim", _when={"dim": "*"}, **g)
    add(T + "max", X2, 1, _variant="dim positional", _when={"#0": "*"}, **g)
    add(T + "sum", X2, dim=1, _variant="dim", _when={"dim": "*"}, **g)
    add(T + "sum", X2, -1, keepdim=True, _variant="keepdim", _when={"keepdim": True}, **g)
    add(T + "mean", X2, dim=1, _variant="dim", _when={"dim": "*"}, **g)
    add(T + "clamp", X2, min=0.0, **g)
    add(T + "clamp", X2, min=-0.5, max=0.5, _variant="min,max", _when={"max": "*"}, **g)
    add(T + "pow", X2, 2, **g)
    add(T + "masked_fill", X2, b(4, 6), 0.0, **g)
    add(T + "split", f(6, 3), 2, **g)
    add(T + "chunk", f(6, 3), 3, **g)
    add(T + "gather", X2, 1, i(4, 3, hi=6), **g)
    add(T + "index_select", X2, 0, i(3, hi=4), **g)
    add(T + "masked_select", X2, b(4, 6), **g)
    add(T + "eq", X2, f(4, 6), **g)
    add(T + "gt", X2, 0.0, **g)
    add(T + "flip", X2, 1, **g)
    add(T + "unbind", X2, **g)
    add(T + "to", X2, DT("float16"), _variant="dtype", **g)
    add(T + "type", X2, DT("float16"), _variant="dtype", **g)
    add(T + "fill_", X2, 1.5, _grad=False, **g)
    add(T + "zero_", X2, _grad=False, **g)
    add(T + "add_", X2, f(4, 6), _grad=False, **g)
    add(T + "mul_", X2, 2.0, _grad=False, **g)
    add(T + "clamp_", X2, min=0.0, _grad=False, **g)
    add(T + "sigmoid_", X2, _grad=False, **g)
    add(T + "copy_", X2, f(4, 6), _grad=False, **g)
    add(T + "new_empty", X2, (2, 3), _values=False, _grad=False, **g)
    # modules
    g = {"_group": "module"}

    def mod(name: str, *args: Any, **kw: Any) -> None:
        opts = {k[1:]: v for k, v in kw.items() if k.startswith("_")}
        init_kwargs = {k: v for k, v in kw.items() if not k.startswith("_")}
        inputs = opts.pop("inputs", (X4,))
        c.append(
            Case(
                NN + name,
                tuple(inputs),
                {},
                init=tuple(args),
                init_kwargs=init_kwargs,
                group="module",
                **opts,
            )
        )

    conv_hint = "mindspore.nn.Conv2d defaults to pad_mode='same' and has_bias=False"
    mod(
        "Conv2d",
        3,
        4,
        3,
        _hint=conv_hint,
        _adapted=(
            (
                "nn.Conv2d(..., pad_mode='valid', has_bias=True)",
                "nn.Conv2d(3, 4, 3, pad_mode='valid', has_bias=True)",
            ),
        ),
    )
    mod(
        "Conv2d",
        3,
        4,
        3,
        padding=1,
        _variant="padding",
        _when={"padding": "*"},
        _hint=conv_hint,
        _adapted=(
            (
                "nn.Conv2d(..., pad_mode='pad', padding=p, has_bias=True)",
                "nn.Conv2d(3, 4, 3, pad_mode='pad', padding=1, has_bias=True)",
            ),
        ),
    )
    mod(
        "Conv2d",
        3,
        4,
        1,
        bias=False,
        _variant="bias=False",
        _when={"bias": False},
        _hint=conv_hint,
        _adapted=(("nn.Conv2d(..., pad_mode='valid')", "nn.Conv2d(3, 4, 1, pad_mode='valid')"),),
    )
    mod(
        "Conv2d",
        3,
        4,
        3,
        stride=2,
        padding=1,
        _variant="stride,padding",
        _when={"stride": "*"},
        _hint=conv_hint,
        _adapted=(
            (
                "nn.Conv2d(..., stride=s, pad_mode='pad', padding=p, has_bias=True)",
                "nn.Conv2d(3, 4, 3, stride=2, pad_mode='pad', padding=1, has_bias=True)",
            ),
        ),
    )
    mod(
        "ConvTranspose2d",
        3,
        4,
        2,
        stride=2,
        _adapted=(
            (
                "nn.Conv2dTranspose(..., pad_mode='valid', has_bias=True)",
                "nn.Conv2dTranspose(3, 4, 2, stride=2, pad_mode='valid', has_bias=True)",
            ),
        ),
    )
    mod(
        "Conv1d",
        3,
        4,
        3,
        _inputs=(f(2, 3, 9),),
        _adapted=(
            (
                "nn.Conv1d(..., pad_mode='valid', has_bias=True)",
                "nn.Conv1d(3, 4, 3, pad_mode='valid', has_bias=True)",
            ),
        ),
    )
    mod("Linear", 6, 5, _inputs=(X2,), _adapted=(("nn.Dense(in, out)", "nn.Dense(6, 5)"),))
    mod("BatchNorm2d", 3, _variant="eval")
    mod("BatchNorm1d", 6, _inputs=(X2,), _variant="eval")
    mod("GroupNorm", 2, 4, _inputs=(f(2, 4, 5, 5),))
    mod("LayerNorm", 6, _inputs=(X2,))
    mod(
        "GELU",
        _hint="mindspore.nn.GELU defaults to approximate=True (tanh form)",
        _adapted=(("nn.GELU(approximate=False)", "nn.GELU(approximate=False)"),),
    )
    for name in (
        "ReLU",
        "Sigmoid",
        "Tanh",
        "SiLU",
        "Identity",
        "Hardswish",
        "Mish",
        "ReLU6",
        "ELU",
    ):
        mod(name)
    mod("ReLU", inplace=True, _variant="inplace", _when={"inplace": True})
    mod("LeakyReLU", 0.1)
    mod("Softmax", dim=1)
    mod("Dropout", 0.5, _variant="eval")
    mod("Flatten")
    mod("Flatten", 1, _variant="start_dim=1", _when={"start_dim": 1})
    mod("MaxPool2d", 2)
    mod(
        "MaxPool2d",
        3,
        2,
        1,
        _variant="k3s2p1",
        _when={"padding": "*"},
        _adapted=(
            (
                "nn.MaxPool2d(k, s, pad_mode='pad', padding=p)",
                "nn.MaxPool2d(3, 2, pad_mode='pad', padding=1)",
            ),
        ),
    )
    mod("MaxPool2d", 2, 2, _variant="kernel,stride", _when={"stride": "*"})
    mod("AvgPool2d", 2)
    mod("AdaptiveAvgPool2d", 1)
    mod("AdaptiveAvgPool2d", (1, 1), _variant="(1, 1)", _when={"output_size": (1, 1)})
    mod("AdaptiveAvgPool2d", 3, _inputs=(f(2, 3, 7, 7),), _variant="non-divisible")
    mod("AdaptiveMaxPool2d", 1)
    mod("Upsample", scale_factor=2, mode="nearest")
    mod(
        "Upsample",
        scale_factor=2,
        mode="bilinear",
        align_corners=False,
        _variant="bilinear",
        _when={"mode": "bilinear"},
    )
    mod("Embedding", 7, 3, _inputs=(i(5, hi=7),))
    mod("CrossEntropyLoss", _inputs=(f(5, 4), i(5, hi=4)))
    mod("BCEWithLogitsLoss", _inputs=(X2, u(4, 6)))
    mod("L1Loss", _inputs=(X2, f(4, 6)))
    mod("MSELoss", _inputs=(X2, f(4, 6)))
    mod("SmoothL1Loss", _inputs=(X2, f(4, 6)))
    mod("PixelShuffle", 2, _inputs=(f(1, 8, 3, 3),))
    mod("Unfold", 3, _inputs=(X4,))
    # containers, parameters, autograd contexts, initializers, optimizers (scripted cases)
    g = {"_group": "module"}
    lin = "torch.nn.Linear(6, 6), torch.nn.ReLU(), torch.nn.Linear(6, 5)"
    dense = "nn.Dense(6, 6), nn.ReLU(), nn.Dense(6, 5)"
    add(
        NN + "Sequential",
        X2,
        _torch_src=f"torch.nn.Sequential({lin})",
        _ms_native=(("nn.SequentialCell", f"nn.SequentialCell([{dense}])"),),
        **g,
    )
    add(
        NN + "ModuleList",
        X2,
        _torch_src=f"TLoop(torch.nn.ModuleList([{lin}]))",
        _ms_native=(("nn.CellList", f"Loop(nn.CellList([{dense}]))"),),
        **g,
    )
    add(
        NN + "ModuleDict",
        X2,
        _torch_src="TDictLoop(torch.nn.ModuleDict({'fc': torch.nn.Linear(6, 5), "
        "'act': torch.nn.ReLU()}), ['fc', 'act'])",
        _ms_native=(
            (
                "nn.CellDict",
                "DictLoop(nn.CellDict({'fc': nn.Dense(6, 5), 'act': nn.ReLU()}), ['fc', 'act'])",
            ),
        ),
        **g,
    )
    add(
        NN + "Parameter",
        X2,
        _torch_src="TScale(6)",
        _ms_native=(("mindspore.Parameter", "Scale(6)"),),
        **g,
    )
    g = {"_group": "autograd"}
    add(
        "torch.no_grad",
        X2,
        _torch_src="with torch.no_grad():\n    y = t0 * 2.0\nreturn y + t0 * t0",
        _adapted=(("ops.stop_gradient(y)", "ops.stop_gradient(t0 * 2.0) + t0 * t0"),),
        _hint="MindSpore 2.10 has no public no_grad context (mindspore.no_grad, mint.no_grad "
        "absent): gradients exist only inside ms.grad / ms.value_and_grad, so an inference block "
        "needs nothing, and inside a differentiated function a value is cut with "
        "ops.stop_gradient",
        **g,
    )
    add(
        "torch.enable_grad",
        X2,
        _torch_src="with torch.no_grad():\n    with torch.enable_grad():\n        y = t0 * t0\n"
        "return y",
        _adapted=(("plain code (no context)", "t0 * t0"),),
        _hint="no counterpart context in MindSpore 2.10: code differentiated by ms.grad has "
        "gradients unless ops.stop_gradient cuts them, so the block is written without it",
        **g,
    )
    gc: Dict[str, Any] = {"_group": "creation", "_grad": False}
    add(
        "torch.tensor",
        _torch_src="torch.tensor([[1.0, 2.0], [3.0, 4.5]])",
        _ms_native=(
            ("mindspore.tensor", "ms.tensor([[1.0, 2.0], [3.0, 4.5]])"),
            ("mindspore.Tensor", "ms.Tensor([[1.0, 2.0], [3.0, 4.5]])"),
        ),
        **gc,
    )
    add(
        "torch.tensor",
        _torch_src="torch.tensor([1, 2, 3])",
        _variant="int list",
        _ms_native=(
            ("mindspore.tensor", "ms.tensor([1, 2, 3])"),
            ("mindspore.Tensor", "ms.Tensor([1, 2, 3])"),
        ),
        **gc,
    )
    host = "a NumPy array comes from the host, outside the graph"
    add(
        "torch.from_numpy",
        X2,
        _torch_src="torch.from_numpy(t0.numpy())",
        _ms_native=(
            ("mindspore.from_numpy", "ms.from_numpy(t0.asnumpy())"),
            ("mindspore.Tensor.from_numpy", "ms.Tensor.from_numpy(t0.asnumpy())"),
        ),
        _jit=host,
        **gc,
    )
    add(
        "torch.as_tensor",
        X2,
        _torch_src="torch.as_tensor(t0.numpy())",
        _ms_native=(
            ("mindspore.tensor", "ms.tensor(t0.asnumpy())"),
            ("mindspore.Tensor", "ms.Tensor(t0.asnumpy())"),
        ),
        _jit=host,
        **gc,
    )
    add("torch.empty", (2, 3), _values=False, **gc)
    gi: Dict[str, Any] = {
        "_group": "init",
        "_grad": False,
        "_jit": "initialisation runs at construction time",
    }
    adapt_const = "param.set_data(initializer(Constant(val), param.shape, param.dtype))"
    add(
        "torch.nn.init.constant_",
        X2,
        _torch_src="torch.nn.init.constant_(t0.clone(), 0.5)",
        _adapted=(
            (
                adapt_const,
                "w = ms.Parameter(t0 + 0, name='w')\n"
                "w.set_data(initializer(Constant(0.5), w.shape, w.dtype))\nreturn w + 0",
            ),
        ),
        _hint="mindspore.common.initializer returns new data instead of filling in place",
        **gi,
    )
    # random initialisers: mean, std (and max|w| for a uniform one) in units of torch's std,
    # rounded to 0.1
    for name, args_, msrc, shape, scale, bounded in (
        ("normal_", ", 0.0, 0.02", "Normal(0.02, 0.0)", (256, 64), 0.02, False),
        ("xavier_uniform_", "", "XavierUniform()", (64, 128), 0.102, True),
        ("kaiming_normal_", "", "HeNormal()", (64, 128), 0.125, False),
    ):
        add(
            "torch.nn.init." + name,
            _torch_src=f"tstats(torch.nn.init.{name}(torch.empty{shape}{args_}), {scale}, "
            f"{bounded})",
            _adapted=(
                (
                    f"param.set_data(initializer({msrc}, param.shape, param.dtype))",
                    f"stats(initializer({msrc}, {shape}, ms.float32), {scale}, {bounded})",
                ),
            ),
            _hint="mindspore.common.initializer returns new data instead of filling in place",
            **gi,
        )
    # optimizers: three steps on a Parameter with loss 0.5 * sum(t1 * p**2) (grad t1 * p)
    go: Dict[str, Any] = {
        "_group": "optim",
        "_grad": False,
        "_jit": "the optimizer is called eagerly here",
    }
    torch_steps = (
        "p = torch.nn.Parameter(t0.clone())\nopt = torch.optim.{ctor}\nfor _ in range(3):\n"
        "    opt.zero_grad()\n    (0.5 * t1 * p * p).sum().backward()\n    opt.step()\n"
        "return p.detach()"
    )
    ms_steps = (
        "p = ms.Parameter(t0 + 0, name='p')\nopt = {ctor}\nfor _ in range(3):\n"
        "    opt((t1 * p,))\nreturn p + 0"
    )
    opt_hint = (
        "MindSpore optimizers are Cells called with the gradients (opt(grads)) after "
        "ms.value_and_grad, not step() after backward()"
    )
    for name, tctor, mint_ctor, nn_label, nn_ctor, why in (
        (
            "SGD",
            "SGD([p], lr=0.1, momentum=0.9)",
            "mint.optim.SGD([p], lr=0.1, momentum=0.9)",
            "nn.SGD(params, learning_rate=lr, momentum=m)",
            "nn.SGD([p], learning_rate=0.1, momentum=0.9)",
            "",
        ),
        (
            "Adam",
            "Adam([p], lr=0.01)",
            "mint.optim.Adam([p], lr=0.01)",
            "nn.Adam(params, learning_rate=lr)",
            "nn.Adam([p], learning_rate=0.01)",
            "",
        ),
        (
            "AdamW",
            "AdamW([p], lr=0.01)",
            "mint.optim.AdamW([p], lr=0.01)",
            "nn.AdamWeightDecay(params, learning_rate=lr, weight_decay=0.01)",
            "nn.AdamWeightDecay([p], learning_rate=0.01, weight_decay=0.01)",
            "; nn.AdamWeightDecay applies no bias correction to m and v (and eps defaults to "
            "1e-6), so its steps differ from torch.optim.AdamW",
        ),
    ):
        add(
            "torch.optim." + name,
            X2,
            u(4, 6),
            _torch_src=torch_steps.format(ctor=tctor),
            _ms_native=(("mint.optim." + name, ms_steps.format(ctor=mint_ctor)),),
            _adapted=((nn_label, ms_steps.format(ctor=nn_ctor)),),
            _hint=opt_hint + why,
            **go,
        )
    # torchvision / mmcv / mmdet: NumPy references or lookups
    g = {"_group": "detection"}
    add("torchvision.ops.nms", Arr((12, 4), "box"), u(12), 0.5, _ref="nms", _grad=False, **g)
    add(
        "torchvision.ops.box_iou",
        Arr((5, 4), "box"),
        Arr((6, 4), "box"),
        _ref="box_iou",
        _extra_candidates=("ops.iou",),
        **g,
    )
    for name in (
        "torchvision.ops.batched_nms", "torchvision.ops.roi_align", "torchvision.ops.roi_pool",
        "torchvision.ops.sigmoid_focal_loss", "torchvision.ops.box_area",
        "torchvision.ops.generalized_box_iou", "torchvision.ops.clip_boxes_to_image",
        "torchvision.ops.remove_small_boxes", "torchvision.ops.box_convert",
        "torchvision.ops.deform_conv2d", "torchvision.ops.MultiScaleRoIAlign",
        "torchvision.ops.FeaturePyramidNetwork", "torchvision.ops.FrozenBatchNorm2d",
        "torchvision.ops.RoIAlign", "torchvision.ops.DeformConv2d",
        "mmcv.ops.nms", "mmcv.ops.batched_nms", "mmcv.ops.roi_align", "mmcv.ops.RoIAlign",
        "mmcv.ops.sigmoid_focal_loss", "mmcv.ops.DeformConv2d", "mmcv.cnn.ConvModule",
        "mmdet.models.losses.FocalLoss", "mmdet.models.losses.focal_loss.py_sigmoid_focal_loss",
        "mmdet.models.losses.utils.weight_reduce_loss", "mmdet.models.losses.SmoothL1Loss",
        "mmdet.models.losses.GIoULoss", "mmdet.models.losses.CrossEntropyLoss",
        "mmdet.models.losses.L1Loss",
    ):  # fmt: skip
        add(name, _lookup_only=True, **g)
    return c


CASES = _cases()

# ----------------------------------------------------------------------------------------------
# Worker: runs cases, one JSON line each
# ----------------------------------------------------------------------------------------------

RANK = {"OK": 0, "NO-GRAD": 1, "GRAPH-FAILS": 2, "DIFFERS": 3, "CPU-UNREGISTERED": 4, "CRASH": 5}
KERNEL_ERRORS = re.compile(
    r"unregistered|Unsupported op|Not found op|only supports? Ascend|only support(s)? (GPU|Ascend)"
    r"|Create kernelmod|Unsupported data type|not supported on this device|kernel .* not found"
    r"|Not implement exception|is not supported on (CPU|GPU)",
    re.I,
)


def _first_line(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("-"):
            return line[:220]
    return type(exc).__name__


def _arrays(case: Case, seed: int = 0) -> Tuple[List[Any], Dict[str, Any]]:
    import numpy as np

    rng = np.random.default_rng(seed)

    def build(a: Any) -> Any:
        if isinstance(a, Arr):
            if a.kind == "u" and a.shape[-1] != 2:
                return rng.random(a.shape).astype(np.float32)
            if a.kind == "w":
                n = int(np.prod(a.shape))
                return rng.permutation(np.linspace(-4, 4, n)).astype(np.float32).reshape(a.shape)
            if a.kind == "f":
                return rng.standard_normal(a.shape).astype(np.float32)
            if a.kind == "p":
                return (rng.random(a.shape) + 0.5).astype(np.float32)
            if a.kind == "u":
                return rng.uniform(-0.9, 0.9, a.shape).astype(np.float32)
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
        if isinstance(a, list):
            return [build(x) for x in a]
        return a

    return [build(a) for a in case.args], {k: build(v) for k, v in case.kwargs.items()}


def _to_torch(v: Any) -> Any:
    import numpy as np
    import torch

    if isinstance(v, np.ndarray):
        t = torch.from_numpy(v.copy())
        return t
    if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
        return [_to_torch(x) for x in v]
    if isinstance(v, DT):
        return getattr(torch, v.name)
    return v


def _to_ms(v: Any) -> Any:
    import mindspore as ms
    import numpy as np

    if isinstance(v, np.ndarray):
        return ms.Tensor(v)
    if isinstance(v, list) and v and isinstance(v[0], np.ndarray):
        return [_to_ms(x) for x in v]
    if isinstance(v, DT):
        return getattr(ms, v.name)
    return v


def _flat(out: Any) -> List[Any]:
    """Outputs as a list of NumPy arrays (or plain values)."""
    import numpy as np

    if isinstance(out, (tuple, list)):
        if all(isinstance(o, (int, float, bool)) for o in out):
            return [np.asarray(out)]
        res: List[Any] = []
        for o in out:
            res.extend(_flat(o))
        return res
    if hasattr(out, "detach"):  # torch
        return [out.detach().numpy()]
    if hasattr(out, "asnumpy"):
        return [out.asnumpy()]
    if isinstance(out, np.ndarray):
        return [out]
    if isinstance(out, (int, float, bool, np.generic)):
        return [np.asarray(out)]
    raise TypeError(f"unexpected output type {type(out).__name__}")


def _compare(got: List[Any], want: List[Any], atol: float, values: bool) -> Optional[str]:
    import numpy as np

    if len(got) != len(want):
        return f"{len(got)} outputs vs torch {len(want)}"
    for k, (g_, w_) in enumerate(zip(got, want)):
        g_, w_ = np.asarray(g_), np.asarray(w_)
        if g_.shape != w_.shape:
            return f"out{k} shape {g_.shape} vs torch {w_.shape}"
        if g_.dtype != w_.dtype and not (g_.dtype.kind == w_.dtype.kind == "f" and w_.ndim == 0):
            return f"out{k} dtype {g_.dtype} vs torch {w_.dtype}"
        if not values or g_.size == 0:
            continue
        if g_.dtype.kind in "biu":
            if not np.array_equal(g_, w_):
                return f"out{k} values differ ({int((g_ != w_).sum())}/{g_.size} elements)"
        else:
            g64, w64 = g_.astype(np.float64), w_.astype(np.float64)
            if not np.allclose(g64, w64, atol=atol, rtol=atol, equal_nan=True):
                err = float(np.nanmax(np.abs(g64 - w64)))
                return f"out{k} max abs error {err:.3g}"
    return None


def _np_nms(boxes: Any, scores: Any, thr: float) -> Any:
    import numpy as np

    order = np.argsort(-scores, kind="stable")
    keep: List[int] = []
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    suppressed = np.zeros(len(boxes), bool)
    for a in order:
        if suppressed[a]:
            continue
        keep.append(int(a))
        lt = np.maximum(boxes[a, :2], boxes[:, :2])
        rb = np.minimum(boxes[a, 2:], boxes[:, 2:])
        wh = np.clip(rb - lt, 0, None)
        inter = wh[:, 0] * wh[:, 1]
        iou = inter / (area[a] + area - inter)
        suppressed |= iou > thr
    return np.asarray(keep, np.int64)


def _np_box_iou(b1: Any, b2: Any) -> Any:
    import numpy as np

    a1 = (b1[:, 2] - b1[:, 0]) * (b1[:, 3] - b1[:, 1])
    a2 = (b2[:, 2] - b2[:, 0]) * (b2[:, 3] - b2[:, 1])
    lt = np.maximum(b1[:, None, :2], b2[None, :, :2])
    rb = np.minimum(b1[:, None, 2:], b2[None, :, 2:])
    wh = np.clip(rb - lt, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    return (inter / (a1[:, None] + a2[None, :] - inter)).astype(np.float32)


REFS: Dict[str, Callable[..., Any]] = {"nms": _np_nms, "box_iou": _np_box_iou}


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
    import mindspore as ms
    from mindspore import mint, nn, ops

    root, _, rest = name.partition(".")
    obj: Any = {"mint": mint, "ops": ops, "nn": nn, "Tensor": ms.Tensor}[root]
    for part in rest.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


GEN_DIR = Path(tempfile.gettempdir()) / f"mscompat_probe_{os.getpid()}"
MS_HEADER = """import mindspore as ms
from mindspore import mint, nn, ops
from mindspore.common.initializer import Constant, HeNormal, Normal, XavierUniform, initializer
from probe_helpers import DictLoop, Loop, Scale, stats
"""
# MindSpore helpers of scripted cases, in a real file so that ms.jit can parse them
MS_HELPERS = """import numpy as np
import mindspore as ms
from mindspore import nn, ops


class Loop(nn.Cell):
    def __init__(self, layers):
        super().__init__()
        self.layers = layers

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class DictLoop(nn.Cell):
    def __init__(self, layers, keys):
        super().__init__()
        self.layers = layers
        self.keys = keys

    def construct(self, x):
        for k in self.keys:
            x = self.layers[k](x)
        return x


class Scale(nn.Cell):
    def __init__(self, n):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.full((n,), 0.5, np.float32)), name="w")

    def construct(self, x):
        return x * self.w


def stats(w, scale, bounded):
    a = w.asnumpy().astype(np.float64)
    out = [round(float(a.mean()) / scale, 1) + 0.0, round(float(a.std()) / scale, 1)]
    return out + [round(float(np.abs(a).max()) / scale, 1)] if bounded else out
"""


def _ms_helpers() -> Dict[str, Any]:
    import importlib

    GEN_DIR.mkdir(exist_ok=True)
    path = GEN_DIR / "probe_helpers.py"
    if not path.exists():
        path.write_text(MS_HELPERS, encoding="utf-8")
    if str(GEN_DIR) not in sys.path:
        sys.path.insert(0, str(GEN_DIR))
    mod = importlib.import_module("probe_helpers")
    return {k: getattr(mod, k) for k in ("DictLoop", "Loop", "Scale", "stats")}


def _torch_helpers() -> Dict[str, Any]:
    """Torch twins of ``MS_HELPERS`` (no graph mode needed on this side)."""
    import numpy as np
    import torch

    class TLoop(torch.nn.Module):
        def __init__(self, layers: Any) -> None:
            super().__init__()
            self.layers = layers

        def forward(self, x: Any) -> Any:
            for layer in self.layers:
                x = layer(x)
            return x

    class TDictLoop(torch.nn.Module):
        def __init__(self, layers: Any, keys: Sequence[str]) -> None:
            super().__init__()
            self.layers = layers
            self.keys = list(keys)

        def forward(self, x: Any) -> Any:
            for k in self.keys:
                x = self.layers[k](x)
            return x

    class TScale(torch.nn.Module):
        def __init__(self, n: int) -> None:
            super().__init__()
            self.w = torch.nn.Parameter(torch.full((n,), 0.5))

        def forward(self, x: Any) -> Any:
            return x * self.w

    def tstats(w: Any, scale: float, bounded: bool) -> List[float]:
        a = w.detach().numpy().astype(np.float64)
        out = [round(float(a.mean()) / scale, 1) + 0.0, round(float(a.std()) / scale, 1)]
        return out + [round(float(np.abs(a).max()) / scale, 1)] if bounded else out

    return {"torch": torch, "TLoop": TLoop, "TDictLoop": TDictLoop, "TScale": TScale,
            "tstats": tstats}  # fmt: skip


def _script_fn(src: str, n: int, globs: Dict[str, Any]) -> Callable[..., Any]:
    """``call(t0..)`` from a scripted case's torch source (an expression or a body)."""
    params = ", ".join(f"t{k}" for k in range(n))
    if "\n" in src:
        body = "".join(f"    {line}\n" for line in src.splitlines())
    else:
        body = f"    return {src}\n"
    scope = dict(globs)
    exec(f"def call({params}):\n{body}", scope)  # noqa: S102 (our own table)
    return scope["call"]


def _gen_call(tag: str, src_body: str, n: int, globs: Dict[str, Any]) -> Callable[..., Any]:
    """A module-level function ``call(t0..tn-1)`` written to a file, so ``ms.jit`` can parse it."""
    import importlib.util

    _ms_helpers()  # generated modules import them
    params = ", ".join(f"t{k}" for k in range(n))
    path = GEN_DIR / f"gen_{tag}.py"
    if "\n" in src_body:
        body = "".join(f"    {line}\n" for line in src_body.splitlines())
    else:
        body = f"    return {src_body}\n"
    path.write_text(f"{MS_HEADER}\n\ndef call({params}):\n{body}", encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"gen_{tag}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[f"gen_{tag}"] = module  # ms.jit looks the function's module up by name
    spec.loader.exec_module(module)
    for k, v in globs.items():
        setattr(module, k, v)
    return module.call  # type: ignore[no-any-return]


def _lit(v: Any, consts: Dict[str, Any]) -> str:
    if isinstance(v, DT):
        key = f"DT_{v.name}"
        consts[key] = _to_ms(v)
        return key
    return repr(v)


def _call_source(
    case: Case, target: str, tensor_slots: List[int], n_args: int
) -> Tuple[str, Dict[str, Any]]:
    """Source of the call with tensors as t0.. and constants inline."""
    args_np, kwargs_np = _arrays(case)
    consts: Dict[str, Any] = {}
    parts: List[str] = []
    k = 0
    for a in args_np:
        if _is_tensorish(a):
            parts.append(f"t{k}")
            k += 1
        else:
            parts.append(_lit(a, consts))
    for key, v in kwargs_np.items():
        if _is_tensorish(v):
            parts.append(f"{key}=t{k}")
            k += 1
        else:
            parts.append(f"{key}={_lit(v, consts)}")
    if case.is_method or target.startswith("Tensor."):
        head, rest = parts[0], parts[1:]
        return f"{head}.{target.rsplit('.', 1)[-1]}({', '.join(rest)})", consts
    return f"target({', '.join(parts)})", consts


def _is_tensorish(v: Any) -> bool:
    import numpy as np

    return isinstance(v, np.ndarray) or (
        isinstance(v, list) and bool(v) and isinstance(v[0], np.ndarray)
    )


def _tensor_inputs(case: Case) -> List[Any]:
    args_np, kwargs_np = _arrays(case)
    return [a for a in list(args_np) + list(kwargs_np.values()) if _is_tensorish(a)]


def _torch_run(case: Case) -> Tuple[List[Any], Optional[List[Any]], List[int]]:
    """torch outputs, torch grads (or None) and the positions of float inputs."""
    import numpy as np

    args_np, kwargs_np = _arrays(case)
    tensors = _tensor_inputs(case)
    float_pos = [
        k for k, a in enumerate(tensors) if isinstance(a, np.ndarray) and a.dtype == np.float32
    ]
    if case.ref:
        out = REFS[case.ref](*args_np, **kwargs_np)
        return _flat(out), None, float_pos
    outs = _flat(
        _torch_call(
            case, [_to_torch(a) for a in args_np], {k: _to_torch(v) for k, v in kwargs_np.items()}
        )
    )
    grads = None
    if case.grad:
        try:
            grads = _torch_grads(case, args_np, kwargs_np, float_pos, tensors)
        except RuntimeError:
            grads = None  # not differentiable in torch: no grad stage
    return outs, grads, float_pos


def _torch_call(case: Case, t_args: List[Any], t_kwargs: Dict[str, Any]) -> Any:
    import torch

    if case.is_module:
        module = _torch_module(case)
        module.eval()
        return module(*t_args, **t_kwargs)
    if case.scripted:
        torch.manual_seed(0)
        return _script_fn(case.torch_src, len(t_args), _torch_helpers())(*t_args)
    if case.is_method:
        return getattr(t_args[0], case.api.rsplit(".", 1)[-1])(*t_args[1:], **t_kwargs)
    return _torch_fn(case.api)(*t_args, **t_kwargs)


def _torch_grads(
    case: Case,
    args_np: List[Any],
    kwargs_np: Dict[str, Any],
    float_pos: List[int],
    tensors: List[Any],
) -> Optional[List[Any]]:
    import numpy as np
    import torch

    t_args = [_to_torch(a) for a in args_np]
    t_kwargs = {k: _to_torch(v) for k, v in kwargs_np.items()}
    grad_leaves = []
    if case.grad:
        it = iter(range(len(tensors)))
        for holder in (t_args, list(t_kwargs.values())):
            for a in holder:
                if isinstance(a, list) and a and isinstance(a[0], torch.Tensor):
                    next(it)
                elif isinstance(a, torch.Tensor):
                    pos = next(it)
                    if pos in float_pos:
                        a.requires_grad_(True)
                        grad_leaves.append(a)
    out = _torch_call(case, t_args, t_kwargs)
    grads = None
    if grad_leaves:
        outs_t = out if isinstance(out, (tuple, list)) else [out]
        loss = 0
        rng = np.random.default_rng(1)
        for o in outs_t:
            if isinstance(o, torch.Tensor) and o.is_floating_point() and o.requires_grad:
                w = torch.from_numpy(rng.standard_normal(tuple(o.shape)).astype(np.float32))
                loss = loss + (o * w).sum()
        if isinstance(loss, torch.Tensor):
            gs = torch.autograd.grad(loss, grad_leaves, allow_unused=True)
            grads = [
                (g.numpy() if g is not None else np.zeros(a.shape, np.float32))
                for g, a in zip(gs, grad_leaves)
            ]
    return grads


def _torch_fn(api: str) -> Any:
    import importlib

    mod, _, name = api.rpartition(".")
    return getattr(importlib.import_module(mod), name)


def _torch_module(case: Case) -> Any:
    import torch

    torch.manual_seed(0)
    if case.torch_src:
        return eval(case.torch_src, _torch_helpers())  # noqa: S307 (our own table)
    return getattr(torch.nn, case.api.rsplit(".", 1)[-1])(*case.init, **case.init_kwargs)


def _module_cell(case: Case, target: Any, expr: Optional[str] = None) -> Any:
    """The Cell built with torch's arguments (or ``expr``), holding torch's parameters."""
    import mindspore as ms
    from mindspore import mint, nn, ops

    tmod = _torch_module(case)
    if expr is not None:
        scope = {"mint": mint, "nn": nn, "ops": ops, "ms": ms, **_ms_helpers()}
        cell = eval(expr, scope)  # noqa: S307 (our own table)
    else:
        cell = target(*case.init, **case.init_kwargs)
    t_named = [(n_, p_.detach().numpy()) for n_, p_ in tmod.named_parameters()] + [
        (n_, b_.numpy()) for n_, b_ in tmod.named_buffers() if "num_batches" not in n_
    ]
    m_params = [q for q in cell.get_parameters() if "num_batches" not in q.name]
    if len(t_named) != len(m_params):
        raise _Differs(f"{len(m_params)} parameters vs torch {len(t_named)}")
    synonyms = {
        "gamma": "weight",
        "beta": "bias",
        "moving_mean": "running_mean",
        "moving_variance": "running_var",
        "mean": "running_mean",
        "variance": "running_var",
    }
    by_name = {n_: a for n_, a in t_named}
    pairs = []
    for k, mp in enumerate(m_params):
        last = mp.name.rsplit(".", 1)[-1]
        last = synonyms.get(last, last)
        pairs.append((by_name.get(last, t_named[k][1]), mp))
    for tp, mp in pairs:
        if tuple(tp.shape) != tuple(mp.shape):
            raise _Differs(
                f"parameter {mp.name} shape {tuple(mp.shape)} vs torch {tuple(tp.shape)}"
            )
        mp.set_data(ms.Tensor(tp.copy()))
    cell.set_train(False)
    return cell


class _Differs(Exception):
    pass


def _run_candidate(
    case: Case,
    label: str,
    target: Any,
    source: Optional[str],
    want: List[Any],
    want_grads: Optional[List[Any]],
    float_pos: List[int],
    tag: str,
) -> Tuple[str, str]:
    import mindspore as ms
    import numpy as np

    tensors = _tensor_inputs(case)
    ms_in = [_to_ms(a) for a in tensors]
    globs: Dict[str, Any] = {}
    try:
        if source is not None and case.is_module:
            globs["cell"] = _module_cell(case, None, source)
            body = f"cell({', '.join(f't{k}' for k in range(len(tensors)))})"
        elif source is not None:
            body = source
        elif case.is_module:
            globs["cell"] = _module_cell(case, target)
            body = f"cell({', '.join(f't{k}' for k in range(len(tensors)))})"
        else:
            body, consts = _call_source(case, label, [], len(tensors))
            globs.update(consts)
            globs["target"] = target
        fn = _gen_call(tag, body, len(tensors), globs)
    except _Differs as exc:
        return "DIFFERS", str(exc)
    except Exception as exc:  # noqa: BLE001
        return _classify(exc, "construct")
    try:
        got = _flat(fn(*ms_in))
    except Exception as exc:  # noqa: BLE001
        return _classify(exc, "eager")
    bad = _compare(got, want, 1e-4, case.values)
    if bad:
        return "DIFFERS", bad
    if case.grad and want_grads is not None and float_pos:
        rng = np.random.default_rng(1)

        def loss(*ts: Any) -> Any:
            out = fn(*ts)
            outs = out if isinstance(out, (tuple, list)) else [out]
            total = 0
            r = np.random.default_rng(1)
            for o in outs:
                if isinstance(o, ms.Tensor) and o.dtype in (ms.float32, ms.float16, ms.float64):
                    w = ms.Tensor(r.standard_normal(tuple(o.shape)).astype(np.float32))
                    total = total + (o * w).sum()
            return total

        del rng
        try:
            gs = ms.grad(loss, grad_position=tuple(float_pos))(*ms_in)
            gs = gs if isinstance(gs, (tuple, list)) else (gs,)
            bad = _compare([g.asnumpy() for g in gs], want_grads, 1e-3, True)
            if bad:
                return "NO-GRAD", "grad: " + bad
        except Exception as exc:  # noqa: BLE001
            return "NO-GRAD", "grad: " + _first_line(exc)
    if case.jit:
        return "OK", f"jit stage not run: {case.jit}"
    try:
        jit_got = _flat(ms.jit(fn)(*ms_in))
        bad = _compare(jit_got, want, 1e-4, case.values)
        if bad:
            return "GRAPH-FAILS", "jit: " + bad
    except Exception as exc:  # noqa: BLE001
        return "GRAPH-FAILS", "jit: " + _first_line(exc)
    return "OK", ""


def _classify(exc: BaseException, stage: str) -> Tuple[str, str]:
    line = _first_line(exc)
    if KERNEL_ERRORS.search(str(exc)):
        return "CPU-UNREGISTERED", line
    return "DIFFERS", f"{line}" if stage == "eager" else f"{stage}: {line}"


def run_case(case: Case, device: str) -> Dict[str, Any]:
    """Measure one case; returns its record."""
    record: Dict[str, Any] = {
        "key": case.key,
        "api": case.api,
        "variant": case.variant,
        "when": case.when,
        "group": case.group,
    }
    candidates: List[Tuple[str, Any, Optional[str], bool]] = []
    for name in _candidate_names(case) + list(case.extra_candidates):
        target = _resolve(name)
        if target is not None:
            candidates.append((name, target, None, False))
    scripted: List[Tuple[str, Any, Optional[str], bool]] = [
        (label, None, src, False) for label, src in case.ms_native
    ]
    adapted_calls: List[Tuple[str, Any, Optional[str], bool]] = [
        (label, None, src, True) for label, src in case.adapted
    ]
    # a scripted case tries its adapted constructs first: a counterpart without a kernel here
    # (mint.optim.AdamW) poisons later calls in the process (nn.AdamWeightDecay then fails too)
    candidates += adapted_calls + scripted if case.scripted else adapted_calls
    if case.lookup_only:
        names = _candidate_names(case)
        if candidates:
            record.update(
                status="UNVERIFIED",
                counterpart=candidates[0][0],
                note=f"{candidates[0][0]} exists under the same name; not compared "
                "(no reference here)",
                tried=[],
            )
        else:
            record.update(
                status="MISSING",
                counterpart="",
                note="no callable of this name in " + ", ".join(n.rsplit(".", 1)[0] for n in names),
                tried=[],
            )
        return record
    if not candidates:
        names = _candidate_names(case)
        record.update(
            status="MISSING",
            counterpart="",
            note="no callable of this name in " + ", ".join(n.rsplit(".", 1)[0] for n in names),
            tried=[],
        )
        return record
    try:
        want, want_grads, float_pos = _torch_run(case)
    except Exception as exc:  # noqa: BLE001
        record.update(
            status="ERROR",
            counterpart="",
            note="torch reference failed: " + _first_line(exc),
            tried=[],
        )
        return record
    tried = []
    for n, (label, target, src, adapted) in enumerate(candidates):
        status, note = _run_candidate(
            case,
            label,
            target,
            src,
            want,
            want_grads,
            float_pos,
            f"{abs(hash(case.key)) % 10**8}_{n}",
        )
        if adapted:
            if status == "OK":
                status, note = "DIFFERS", f"works as {label}" + (f"; {note}" if note else "")
            else:
                status = max(status, "DIFFERS", key=lambda s: RANK[s])
        tried.append({"candidate": label, "status": status, "note": note})
        if status == "OK" and not adapted:
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


def _worker(indices: Sequence[int], device: str) -> None:
    os.environ.setdefault("GLOG_v", "3")
    import mindspore as ms
    import numpy as np

    ms.set_device(device)
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.Tensor(np.ones(2, np.float32)) + 1  # warm-up: the first call may absorb a NumPy C-API error
    import torch  # noqa: F401

    for idx in indices:
        print(f"START {idx}", flush=True)
        rec = run_case(CASES[idx], device)
        rec["index"] = idx
        print("RESULT " + json.dumps(rec), flush=True)


def _measure(
    indices: List[int], device: str, timeout: float, verbose: bool
) -> Dict[int, Dict[str, Any]]:
    """Run ``indices`` in worker processes; restart after a crash, timeout or failing case."""
    results: Dict[int, Dict[str, Any]] = {}
    pending = list(indices)
    while pending:
        cmd = [
            sys.executable,
            __file__,
            "--worker",
            "--device",
            device,
            "--ids",
            ",".join(map(str, pending)),
        ]
        proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env={**os.environ, "GLOG_v": "3"},
        )
        current: Optional[int] = None
        restart = False
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        import selectors

        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        buf = ""
        while True:
            if not sel.select(timeout=max(0.1, deadline - time.monotonic())):
                if time.monotonic() > deadline:
                    proc.kill()
                    if current is not None:
                        results[current] = _crash(current, f"timeout after {timeout:.0f}s")
                    restart = True
                    break
                continue
            chunk = os.read(proc.stdout.fileno(), 65536).decode()
            if not chunk:
                break
            buf += chunk
            while "\n" in buf:
                line, buf = buf.split("\n", 1)
                if line.startswith("START "):
                    current = int(line.split()[1])
                    deadline = time.monotonic() + timeout
                elif line.startswith("RESULT "):
                    rec = json.loads(line[7:])
                    results[rec["index"]] = rec
                    if verbose:
                        print(
                            f"  [{len(results)}/{len(indices)}] {rec['key']}: "
                            f"{rec['status']} {rec['counterpart']}",
                            file=sys.stderr,
                            flush=True,
                        )
                    current = None
                    # a failed grad or jit (or a crash) can poison later calls: fresh process
                    if any(t["status"] in ("NO-GRAD", "GRAPH-FAILS") for t in rec["tried"]):
                        restart = True
                        proc.kill()
                        break
            if restart:
                break
        proc.wait()
        if current is not None and current not in results:
            results[current] = _crash(current, f"process crashed (exit {proc.returncode})")
        pending = [k for k in pending if k not in results]
    return results


def _crash(idx: int, why: str) -> Dict[str, Any]:
    case = CASES[idx]
    return {
        "index": idx,
        "key": case.key,
        "api": case.api,
        "variant": case.variant,
        "when": case.when,
        "group": case.group,
        "status": "CRASH",
        "counterpart": "",
        "note": why,
        "tried": [],
    }


def _torch_params(api: str) -> List[str]:
    """Positional parameter names of the torch API (the scanner maps positional args)."""
    import inspect

    try:
        if api.startswith(T):
            return []
        obj = _torch_fn(api)
        sig = inspect.signature(obj.__init__ if isinstance(obj, type) else obj)
    except Exception:  # noqa: BLE001 - builtins have no signature
        return []
    names = [
        p_.name
        for p_ in sig.parameters.values()
        if p_.kind in (p_.POSITIONAL_ONLY, p_.POSITIONAL_OR_KEYWORD)
    ]
    return names[1:] if names[:1] == ["self"] else names


def _tensor_methods() -> List[str]:
    import torch

    return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="CPU", choices=["CPU", "GPU", "Ascend"])
    ap.add_argument("--only", action="append", help="only cases whose key contains this")
    ap.add_argument("--out", default=str(DATA))
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per case")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--ids", help=argparse.SUPPRESS)
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    if args.worker:
        _worker([int(x) for x in args.ids.split(",")], args.device)
        return 0
    indices = [
        k for k, c in enumerate(CASES) if not args.only or any(s in c.key for s in args.only)
    ]
    start = time.perf_counter()
    results = _measure(indices, args.device, args.timeout, not args.quiet)
    elapsed = time.perf_counter() - start
    import mindspore as ms
    import torch

    out = Path(args.out)
    data: Dict[str, Any] = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    data.setdefault("format", 1)
    data["generated_by"] = "tools/probe_apis.py"
    data["statuses"] = list(RANK) + ["MISSING", "UNVERIFIED"]
    data["tensor_methods"] = _tensor_methods()
    measured = data.setdefault("measured", {})
    previous = measured.get(args.device, {})
    measured[args.device] = {
        "mindspore": ms.__version__,
        "torch": torch.__version__,
        "python": platform.python_version(),
        "date": datetime.date.today().isoformat(),
        # a partial run (--only) keeps the full run's duration
        "seconds": round(elapsed) if not args.only else previous.get("seconds", 0),
        "cases": 0,
    }
    apis: Dict[str, Any] = data.setdefault("apis", {})
    for idx in sorted(results):
        rec = results[idx]
        entry = apis.setdefault(rec["api"], {"group": rec["group"], "variants": {}})
        entry["group"] = rec["group"]
        entry["variants"].setdefault(rec["variant"], {"when": rec["when"]})
        var = entry["variants"][rec["variant"]]
        var["when"] = rec["when"]
        var[args.device] = {
            "status": rec["status"],
            "counterpart": rec["counterpart"],
            "note": rec["note"],
            "tried": [f"{t['candidate']}={t['status']}" for t in rec["tried"]],
        }
    for name, entry in apis.items():
        params = _torch_params(name)
        if params:
            entry["params"] = params
    data["apis"] = {k: apis[k] for k in sorted(apis)}
    # the number of cases measured on this device, partial runs included
    measured[args.device]["cases"] = sum(
        args.device in var for entry in apis.values() for var in entry["variants"].values()
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n", encoding="utf-8")
    counts: Dict[str, int] = {}
    for rec in results.values():
        counts[rec["status"]] = counts.get(rec["status"], 0) + 1
    print(f"{len(results)} cases on {args.device} in {elapsed:.0f}s: {counts} -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
