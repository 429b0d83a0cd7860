"""Run a PyTorch model and its MindSpore port on the same input and compare them layer by layer.

Each submodule's output is captured (forward hooks on the PyTorch side, ``Cell`` forward hooks
in PyNative mode on ours) and paired by module path (``backbone.layer1.0.conv1``); the gradient
of every parameter is paired by name (BatchNorm's ``weight`` is ``gamma``...). The first layer
past tolerance, in the order PyTorch ran them, is where a port goes wrong.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from mscompat.port.weights import torch_to_mindspore_names, unit_dims_only
from mscompat.testing.tolerances import default_tolerance

__all__ = ["LayerReport", "LayerRow", "compare_layers"]


@dataclass
class LayerRow:
    """One compared tensor: a layer's output or a parameter's gradient."""

    kind: str  # "output" | "grad"
    path: str
    torch_shape: Tuple[int, ...]
    ms_shape: Tuple[int, ...]
    max_abs: float
    max_rel: float
    ok: bool
    note: str = ""


@dataclass
class LayerReport:
    """What :func:`compare_layers` found; ``first_failure`` names the first layer past
    tolerance (in PyTorch's execution order), or is None."""

    rows: List[LayerRow] = field(default_factory=list)
    atol: float = 0.0
    rtol: float = 0.0
    unpaired: List[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.rows)

    @property
    def first_failure(self) -> Optional[LayerRow]:
        return next((r for r in self.rows if not r.ok), None)

    def render(self) -> str:
        head = ("kind", "path", "shape", "max abs err", "max rel err", "ok")
        body = [
            (r.kind, r.path or "(model)", str(r.torch_shape), f"{r.max_abs:.3g}",
             f"{r.max_rel:.3g}", "ok" if r.ok else f"FAIL {r.note}".rstrip())
            for r in self.rows
        ]  # fmt: skip
        widths = [max(len(x[i]) for x in [head, *body]) for i in range(len(head))]
        lines = [
            "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in [head, *body]
        ]
        first = self.first_failure
        lines.append(
            f"tolerance atol={self.atol:g} rtol={self.rtol:g}; "
            + (f"first past tolerance: {first.kind} {first.path}" if first else "all within")
        )
        if self.unpaired:
            lines.append(
                "not paired (no counterpart on the other side): " + ", ".join(self.unpaired)
            )
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.render()


def _leaves(out: Any) -> List[Any]:
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in _leaves(o)]
    if isinstance(out, dict):
        return [x for k in sorted(out) for x in _leaves(out[k])]
    return [out] if hasattr(out, "shape") else []


def _np(value: Any) -> np.ndarray:
    if hasattr(value, "detach"):
        return np.asarray(value.detach().cpu().numpy())
    if hasattr(value, "asnumpy"):
        return np.asarray(value.asnumpy())
    return np.asarray(value)


def _errors(
    got: np.ndarray, want: np.ndarray, atol: float, rtol: float
) -> Tuple[float, float, bool]:
    if got.size == 0:
        return 0.0, 0.0, True
    a, b = got.astype(np.float64), want.astype(np.float64)
    diff = np.abs(a - b)
    both_nan = np.isnan(a) & np.isnan(b)
    diff = np.where(both_nan, 0.0, diff)
    rel = diff / np.maximum(np.abs(b), np.finfo(np.float64).tiny)
    ok = bool(np.all(diff <= atol + rtol * np.abs(b)))
    return float(np.nanmax(diff)), float(np.nanmax(rel)), ok


def _as_inputs(inputs: Union[np.ndarray, Sequence[np.ndarray]]) -> Tuple[np.ndarray, ...]:
    if isinstance(inputs, np.ndarray):
        return (inputs,)
    if not isinstance(inputs, (tuple, list)) or not all(isinstance(a, np.ndarray) for a in inputs):
        raise TypeError("inputs must be a NumPy array or a tuple of NumPy arrays")
    return tuple(inputs)


def _torch_run(model: Any, inputs: Tuple[np.ndarray, ...], grads: bool, seed: int) -> Any:
    import torch

    captured: Dict[str, List[Any]] = {}
    order: List[str] = []
    handles = []
    for name, module in model.named_modules():

        def hook(_m: Any, _i: Any, out: Any, name: str = name) -> None:
            if name not in captured:
                order.append(name)
            captured.setdefault(name, []).append([o.detach().clone() for o in _leaves(out)])

        handles.append(module.register_forward_hook(hook))
    args = [torch.from_numpy(np.ascontiguousarray(a)) for a in inputs]
    try:
        out = _leaves(model(*args))
    finally:
        for h in handles:
            h.remove()
    cotangents = _cotangents([tuple(o.shape) for o in out], seed)
    param_grads: Dict[str, np.ndarray] = {}
    if grads and out:
        model.zero_grad()
        loss = sum((o.double() * torch.from_numpy(c)).sum() for o, c in zip(out, cotangents))
        loss.backward()
        for name, p in model.named_parameters():
            if p.grad is not None:
                param_grads[name] = p.grad.detach().cpu().numpy()
    return captured, order, param_grads


def _cotangents(shapes: List[Tuple[int, ...]], seed: int) -> List[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


def _ms_run(cell: Any, inputs: Tuple[np.ndarray, ...], grads: bool, seed: int) -> Any:
    import mindspore as ms

    captured: Dict[str, List[Any]] = {}
    handles = []
    for name, sub in cell.cells_and_names():

        def hook(_c: Any, _i: Any, out: Any, name: str = name) -> None:
            captured.setdefault(name, []).append([_np(o) for o in _leaves(out)])

        handles.append(sub.register_forward_hook(hook))
    args = [ms.Tensor(a) for a in inputs]
    try:
        outs = [o for o in _leaves(cell(*args))]
    finally:
        for h in handles:
            h.remove()
    param_grads: Dict[str, np.ndarray] = {}
    if grads and outs:
        cots = [
            ms.Tensor(c.astype(_np(o).dtype))
            for o, c in zip(outs, _cotangents([tuple(o.shape) for o in outs], seed))
        ]
        weights = cell.trainable_params()

        def loss_fn(*xs: Any) -> Any:
            res = _leaves(cell(*xs))
            total = (res[0] * cots[0]).sum()
            for r, c in zip(res[1:], cots[1:]):
                total = total + (r * c).sum()
            return total

        found = ms.grad(loss_fn, grad_position=None, weights=weights)(*args)
        for p, g in zip(weights, found):
            param_grads[p.name] = _np(g)
    return captured, param_grads


def compare_layers(
    torch_model: Any,
    cell: Any,
    inputs: Union[np.ndarray, Sequence[np.ndarray]],
    *,
    grads: bool = True,
    atol: Optional[float] = None,
    rtol: Optional[float] = None,
    seed: int = 0,
    ms_inputs: Optional[Callable[[np.ndarray], np.ndarray]] = None,
) -> LayerReport:
    """Feed the same NumPy inputs to both models; compare every layer's output and every
    parameter's gradient.

    Args:
        torch_model: the PyTorch original (put it in the mode you compare: ``eval()``...).
        cell: its MindSpore port, with the same module tree (run in PyNative mode here: the
            Cell forward hooks that capture the layers run only there).
        inputs: a NumPy array or a tuple of them, fed to both (integer arrays as int64 to
            PyTorch; ``ms_inputs`` may cast an array for MindSpore).
        grads: also compare the gradient of ``sum(output * cotangent)`` (seeded cotangents)
            with respect to every parameter, paired by name.
        atol, rtol: defaults from the float32 gradient row of the tolerance table, which
            covers the accumulation of a deep network's layers.
        seed: the cotangents' seed.

    Returns:
        :class:`LayerReport` (``print`` it; ``report.first_failure``).

    Raises:
        TypeError: ``inputs`` is not NumPy.
    """
    import mindspore as ms

    arrays = _as_inputs(inputs)
    tol = default_tolerance("float32", "grad")
    atol = tol.atol if atol is None else atol
    rtol = tol.rtol if rtol is None else rtol
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        t_out, order, t_grads = _torch_run(torch_model, arrays, grads, seed)
        m_arrays = tuple(ms_inputs(a) if ms_inputs else a for a in arrays)
        m_out, m_grads = _ms_run(cell, m_arrays, grads, seed)
    finally:
        ms.set_context(mode=mode)
    report = LayerReport(atol=atol, rtol=rtol)
    for path in order:
        if path not in m_out:
            report.unpaired.append(f"torch:{path or '(model)'}")
            continue
        for k, (t_leaves, m_leaves) in enumerate(zip(t_out[path], m_out[path])):
            for j, (t, m) in enumerate(zip(t_leaves, m_leaves)):
                want, got = _np(t), m
                label = (
                    path
                    + (f"#{k}" if len(t_out[path]) > 1 else "")
                    + (f"[{j}]" if len(t_leaves) > 1 else "")
                )
                report.rows.append(_row("output", label, want, got, atol, rtol))
    names = torch_to_mindspore_names(list(t_grads), _types(torch_model))
    for t_name, want in t_grads.items():
        candidates, _ = names[t_name]
        target = next((c for c in candidates if c in m_grads), None)
        if target is None:
            report.unpaired.append(f"grad:{t_name}")
            continue
        report.rows.append(_row("grad", t_name, want, m_grads[target], atol, rtol))
    return report


def _types(model: Any) -> Dict[str, str]:
    return {name: type(m).__name__ for name, m in model.named_modules()}


def _row(
    kind: str, path: str, want: np.ndarray, got: np.ndarray, atol: float, rtol: float
) -> LayerRow:
    if unit_dims_only(tuple(got.shape), tuple(want.shape)):
        got = got.reshape(want.shape)  # MindSpore's 1-D convolutions keep a 4-D weight
    if tuple(want.shape) != tuple(got.shape):
        return LayerRow(kind, path, tuple(want.shape), tuple(got.shape), float("nan"),
                        float("nan"), False, "shape mismatch")  # fmt: skip
    max_abs, max_rel, ok = _errors(got, want, atol, rtol)
    return LayerRow(kind, path, tuple(want.shape), tuple(got.shape), max_abs, max_rel, ok)
