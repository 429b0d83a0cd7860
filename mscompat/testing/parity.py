"""Run a MindSpore callable and its PyTorch reference on the same NumPy inputs and compare.

The MindSpore side runs in PyNative and in graph mode (``ms.jit``), forward and backward
(``mindspore.grad``); the PyTorch side runs eagerly on CPU with autograd. Gradients are taken of
``sum(output * cotangent)`` with the same seeded random cotangent on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import mindspore as ms
import numpy as np

from mscompat.testing.tolerances import Tolerance, default_tolerance

__all__ = [
    "MODES",
    "Comparison",
    "ParityError",
    "ParityReport",
    "assert_parity",
    "compare_arrays",
    "reset_grad_state",
    "run_mindspore",
    "run_torch",
]

MODES = ("pynative", "graph")


class ParityError(AssertionError):
    """Raised by :func:`assert_parity` when an output or a gradient differs; holds the report."""

    def __init__(self, report: ParityReport) -> None:
        super().__init__("\n" + report.format())
        self.report = report


@dataclass(frozen=True)
class Comparison:
    """One compared array: an output or a gradient, in one mode."""

    label: str
    mode: str
    dtype: str
    max_abs: float
    max_rel: float
    tolerance: Tolerance
    ok: bool
    note: str = ""


@dataclass
class ParityReport:
    """All comparisons of one parity check, with a readable table."""

    comparisons: List[Comparison] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.comparisons)

    def worst(self) -> Optional[Comparison]:
        """The comparison with the largest error relative to its tolerance."""

        def score(c: Comparison) -> float:
            if not c.ok:
                return float("inf")
            return c.max_abs / (c.tolerance.atol + c.tolerance.rtol + 1e-300)

        return max(self.comparisons, key=score, default=None)

    def format(self) -> str:
        head = ("mode", "compared", "dtype", "max abs err", "max rel err", "atol", "rtol", "ok")
        rows = [head] + [
            (
                c.mode,
                c.label,
                c.dtype,
                f"{c.max_abs:.3g}",
                f"{c.max_rel:.3g}",
                f"{c.tolerance.atol:g}",
                f"{c.tolerance.rtol:g}",
                ("PASS" if c.ok else "FAIL") + (f" ({c.note})" if c.note else ""),
            )
            for c in self.comparisons
        ]
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


def compare_arrays(
    actual: np.ndarray, expected: np.ndarray, tolerance: Tolerance
) -> Tuple[float, float, bool, str]:
    """Compare elementwise: ``(max_abs, max_rel, ok, note)``.

    NaN must meet NaN and inf the same inf; the tolerance applies to the finite elements.
    """
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape:
        return float("inf"), float("inf"), False, f"shape {actual.shape} != {expected.shape}"
    if actual.dtype != expected.dtype:
        return float("inf"), float("inf"), False, f"dtype {actual.dtype} != {expected.dtype}"
    if actual.size == 0:
        return 0.0, 0.0, True, ""
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    nan_a, nan_e = np.isnan(a), np.isnan(e)
    inf_mismatch = np.isinf(a) | np.isinf(e)
    inf_mismatch &= ~(a == e)
    finite = ~(nan_a | nan_e | np.isinf(a) | np.isinf(e))
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(a - e)
    max_abs = float(diff[finite].max()) if finite.any() else 0.0
    nonzero = finite & (e != 0)
    max_rel = float((diff[nonzero] / np.abs(e[nonzero])).max()) if nonzero.any() else 0.0
    notes = []
    if (nan_a != nan_e).any():
        notes.append(f"{int((nan_a != nan_e).sum())} NaN mismatches")
    if inf_mismatch.any():
        notes.append(f"{int(inf_mismatch.sum())} inf mismatches")
    within = diff[finite] <= tolerance.atol + tolerance.rtol * np.abs(e[finite])
    if not within.all():
        notes.append(f"{int((~within).sum())}/{a.size} elements out of tolerance")
    return max_abs, max_rel, not notes, "; ".join(notes)


# ----------------------------------------------------------------------------- MindSpore side


def _is_float_array(a: Any) -> bool:
    return isinstance(a, np.ndarray) and a.dtype.kind == "f"


def _to_ms(a: Any) -> Any:
    import mindspore as ms

    if isinstance(a, np.ndarray):
        return ms.Tensor(np.array(a, order="C"))
    if isinstance(a, list) and a and all(isinstance(e, np.ndarray) for e in a):
        return [_to_ms(e) for e in a]  # a list of Tensors (torchvision's per-image boxes)
    if isinstance(a, dict) and a and all(isinstance(e, np.ndarray) for e in a.values()):
        return {k: _to_ms(e) for k, e in a.items()}  # named feature maps (MultiScaleRoIAlign)
    return a


def _as_tuple(out: Any) -> Tuple[Any, ...]:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _outputs(out: Any) -> Tuple[Any, ...]:
    """The outputs of a call, a ``None`` output left out on both sides (PyTorch's
    ``multi_head_attention_forward`` returns ``(output, None)`` without weights)."""
    return tuple(o for o in _as_tuple(out) if o is not None)


def _ms_to_numpy(t: Any) -> np.ndarray:
    return np.asarray(t.asnumpy())


def _weighted_sum(outs: Sequence[Any], cotangents: Sequence[Any]) -> Any:
    """``sum_i sum(out_i * ct_i)`` over the outputs that have a cotangent, in float64."""
    total = ms.Tensor(0.0, ms.float64)
    for out, ct in zip(outs, cotangents):
        if ct is not None:
            total = total + (out.astype(ct.dtype) * ct).sum().astype(ms.float64)
    return total


def _scalarized(fn: Callable[..., Any], cotangents: Sequence[Any]) -> Callable[..., Any]:
    """``fn`` followed by :func:`_weighted_sum` (None cotangents are skipped)."""

    def scalar(*args: Any, **kwargs: Any) -> Any:
        return _weighted_sum(_as_tuple(fn(*args, **kwargs)), cotangents)

    return scalar


# Every closure run_mindspore compiles, kept alive: a freed closure's id goes to the next one,
# and MindSpore keys some of its compile caches by object ids (order-dependent graph-mode
# failures, another op's graph running, were seen in the suite before this).
_ALIVE: List[Callable[..., Any]] = []


def reset_grad_state() -> None:
    """Leave MindSpore's PyNative executor out of gradient recording.

    An exception raised inside a PyNative ``ms.grad``/``value_and_grad`` leaves it recording
    (MindSpore 2.10): every later ``ms.jit`` call then compiles as a gradient sub-graph, and some
    bprops fail there ("Bprop GatherDGradV2 ... The pointer[value] is null").
    """
    from mindspore.common.api import _pynative_executor

    if _pynative_executor.requires_grad():
        _pynative_executor.clear_res()


def run_mindspore(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Optional[Mapping[str, Any]] = None,
    *,
    mode: str = "pynative",
    grad_argnums: Sequence[int] = (),
    cotangents: Optional[Sequence[Optional[np.ndarray]]] = None,
) -> Tuple[List[np.ndarray], List[np.ndarray]]:
    """Run ``fn`` on the inputs converted to Tensors; return (outputs, gradients) as NumPy.

    Args:
        fn: a MindSpore callable (function or Cell instance).
        args, kwargs: NumPy arrays become Tensors; other values are passed as they are.
        mode: ``'pynative'`` or ``'graph'`` (``ms.jit``).
        grad_argnums: positions in ``args`` to differentiate; empty for forward only.
        cotangents: one per output (None for an output not differentiated).
    """
    import mindspore as ms

    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, but got {mode!r}")
    ms_args = [_to_ms(a) for a in args]
    ms_kwargs = {k: _to_ms(v) for k, v in (kwargs or {}).items()}

    def call(*a: Any) -> Any:
        return fn(*a, **ms_kwargs)

    _ALIVE.append(call)
    if not grad_argnums:
        runner = ms.jit(call) if mode == "graph" else call
        return [_ms_to_numpy(o) for o in _outputs(runner(*ms_args))], []
    if cotangents is None:
        raise ValueError("cotangents are needed to take gradients")
    cts: List[Any] = []
    for ct in cotangents:
        if ct is None or ct.size == 0:
            cts.append(None)
        else:
            wide = np.float64 if ct.dtype == np.float64 else np.float32
            cts.append(ms.Tensor(ct.astype(wide)))

    def loss_and_outputs(*a: Any) -> Any:
        # The outputs ride along as auxiliary values: one run (and one graph compilation)
        # gives both the forward results and the gradients.
        outs_ = _outputs(call(*a))
        return (_weighted_sum(outs_, cts), *outs_)

    _ALIVE.append(loss_and_outputs)
    grad_fn = ms.value_and_grad(loss_and_outputs, grad_position=tuple(grad_argnums), has_aux=True)
    if mode == "graph":
        grad_fn = ms.jit(grad_fn)
    try:
        values, got = grad_fn(*ms_args)
    except BaseException:
        reset_grad_state()
        raise
    got = got if isinstance(got, tuple) else (got,)
    outs = [_ms_to_numpy(o) for o in values[1:]]
    grads = [_ms_to_numpy(g) for g in got]
    return outs, grads


# ----------------------------------------------------------------------------- PyTorch side


def run_torch(
    fn: Callable[..., Any],
    args: Sequence[Any],
    kwargs: Optional[Mapping[str, Any]] = None,
    *,
    grad_argnums: Sequence[int] = (),
    cotangents: Optional[Sequence[Optional[np.ndarray]]] = None,
) -> Tuple[List[np.ndarray], List[np.ndarray]]:
    """Run the PyTorch reference eagerly on CPU; return (outputs, gradients) as NumPy."""
    import torch

    t_args: List[Any] = [
        torch.from_numpy(np.array(a)).requires_grad_(i in grad_argnums)
        if isinstance(a, np.ndarray)
        else _list_to_torch(a)
        for i, a in enumerate(args)
    ]
    t_kwargs = {
        k: torch.from_numpy(np.array(v)) if isinstance(v, np.ndarray) else v
        for k, v in (kwargs or {}).items()
    }
    outs = _outputs(fn(*t_args, **t_kwargs))
    np_outs = [o.detach().numpy().copy() for o in outs]
    grads: List[np.ndarray] = []
    if grad_argnums:
        if cotangents is None:
            raise ValueError("cotangents are needed to take gradients")
        pairs = [
            (o, torch.from_numpy(ct))
            for o, ct in zip(outs, cotangents)
            if ct is not None and o.requires_grad
        ]
        inputs = [t_args[i] for i in grad_argnums]
        if pairs:
            got = torch.autograd.grad(
                [p[0] for p in pairs], inputs, [p[1] for p in pairs], allow_unused=True
            )
        else:
            got = tuple(torch.zeros_like(x) for x in inputs)
        grads = [
            (g if g is not None else torch.zeros_like(x)).detach().numpy().copy()
            for g, x in zip(got, inputs)
        ]
    return np_outs, grads


def _list_to_torch(a: Any) -> Any:
    """A non-empty list (dict) of NumPy arrays as a list (dict) of tensors (torchvision's
    per-image boxes, named feature maps); anything else as it is."""
    import torch

    if isinstance(a, list) and a and all(isinstance(e, np.ndarray) for e in a):
        return [torch.from_numpy(np.array(e)) for e in a]
    if isinstance(a, dict) and a and all(isinstance(e, np.ndarray) for e in a.values()):
        return {k: torch.from_numpy(np.array(e)) for k, e in a.items()}
    return a


def make_cotangents(
    outputs: Sequence[np.ndarray], rng: np.random.Generator
) -> List[Optional[np.ndarray]]:
    """A seeded random cotangent for every floating output (None for integer outputs)."""
    cts: List[Optional[np.ndarray]] = []
    for o in outputs:
        if o.dtype.kind == "f":
            cts.append(rng.standard_normal(o.shape).astype(o.dtype))
        else:
            cts.append(None)
    return cts


# ----------------------------------------------------------------------------- comparisons


def compare_runs(
    report: ParityReport,
    mode: str,
    actual: Sequence[np.ndarray],
    expected: Sequence[np.ndarray],
    labels: Sequence[str],
    kind: str,
    tolerance: Optional[Callable[[str, str], Tolerance]] = None,
) -> None:
    """Append one :class:`Comparison` per array pair to ``report``."""
    tol_fn = tolerance or default_tolerance
    if len(actual) != len(expected):
        report.comparisons.append(
            Comparison(
                f"{kind} count",
                mode,
                "-",
                float("inf"),
                float("inf"),
                Tolerance(0.0, 0.0),
                False,
                f"{len(actual)} arrays, expected {len(expected)}",
            )
        )
        return
    for label, a, e in zip(labels, actual, expected):
        tol = tol_fn(str(e.dtype), kind)
        max_abs, max_rel, ok, note = compare_arrays(a, e, tol)
        report.comparisons.append(
            Comparison(label, mode, str(e.dtype), max_abs, max_rel, tol, ok, note)
        )


def assert_parity(
    ms_fn: Callable[..., Any],
    torch_fn: Callable[..., Any],
    *inputs: Any,
    kwargs: Optional[Dict[str, Any]] = None,
    grad: bool = True,
    grad_argnums: Optional[Sequence[int]] = None,
    modes: Sequence[str] = MODES,
    atol: Optional[float] = None,
    rtol: Optional[float] = None,
    seed: int = 0,
) -> ParityReport:
    """Check a MindSpore port against its PyTorch original on the same NumPy inputs.

    Runs ``ms_fn`` in every mode of ``modes`` (PyNative and ``ms.jit`` graph mode) and
    ``torch_fn`` eagerly, compares every output and, with ``grad=True``, the gradient with
    respect to every floating input, and raises :class:`ParityError` with a table of max
    absolute and relative errors when anything is out of tolerance. This is the migration
    guide's ``test_compare``, made systematic.

    .. note::
        In graph mode MindSpore parses ``ms_fn``'s source: define it with ``def`` (or a lambda
        on a line of its own), not as a lambda written inside the call to ``assert_parity``.

    Args:
        ms_fn: MindSpore callable taking Tensors (a function or a Cell instance).
        torch_fn: PyTorch callable taking torch tensors (a function or an ``nn.Module``).
        *inputs: positional inputs; NumPy arrays are converted for each side, other values
            (numbers, strings, None) are passed unchanged.
        kwargs: keyword inputs, converted the same way (they are never differentiated).
        grad: also compare gradients of ``sum(output * cotangent)``.
        grad_argnums: positions to differentiate. Default: every floating NumPy input.
        modes: subset of ``('pynative', 'graph')``.
        atol, rtol: override the dtype's tolerance (see :mod:`mscompat.testing.tolerances`).
        seed: seed of the random cotangents.

    Returns:
        ParityReport: every comparison, when all pass.

    Raises:
        ParityError: an ``AssertionError`` whose message is the report table.

    Example:
        >>> import numpy as np, torch
        >>> from mindspore import ops
        >>> from mscompat.testing import assert_parity
        >>> x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
        >>> report = assert_parity(ops.tanh, torch.tanh, x)
        >>> report.ok
        True
    """
    if grad_argnums is None:
        grad_argnums = [i for i, a in enumerate(inputs) if _is_float_array(a)]
    grad_argnums = list(grad_argnums) if grad else []

    def tol_fn(dtype: str, kind: str) -> Tolerance:
        base = default_tolerance(dtype, kind)
        return Tolerance(base.atol if atol is None else atol, base.rtol if rtol is None else rtol)

    expected_out, _ = run_torch(torch_fn, inputs, kwargs)
    cotangents = make_cotangents(expected_out, np.random.default_rng(seed))
    if grad_argnums and all(c is None for c in cotangents):
        grad_argnums = []
    if grad_argnums:
        _, expected_grads = run_torch(
            torch_fn, inputs, kwargs, grad_argnums=grad_argnums, cotangents=cotangents
        )
    report = ParityReport()
    out_labels = [f"output[{i}]" for i in range(len(expected_out))]
    grad_labels = [f"grad[input {i}]" for i in grad_argnums]
    for mode in modes:
        outs, grads = run_mindspore(
            ms_fn, inputs, kwargs, mode=mode, grad_argnums=grad_argnums, cotangents=cotangents
        )
        compare_runs(report, mode, outs, expected_out, out_labels, "forward", tol_fn)
        if grad_argnums:
            compare_runs(report, mode, grads, expected_grads, grad_labels, "grad", tol_fn)
    if not report.ok:
        raise ParityError(report)
    return report
