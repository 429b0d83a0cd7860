"""Compare two training runs' per-step losses (and gradient norms): the migration guide's
"loss decrease trend" check, as numbers, a CSV and a plot."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

import numpy as np

__all__ = ["LossComparison", "compare_losses", "read_log"]

Run = Union[str, Path, Sequence[float], Dict[str, Sequence[float]]]


def read_log(path: Union[str, Path]) -> Dict[str, List[float]]:
    """A CSV with a header (``step,loss[,grad_norm...]``) -> ``{column: values}``.

    Raises:
        FileNotFoundError: no such file.
        ValueError: no ``loss`` column, or a value that is not a number.
    """
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows or "loss" not in rows[0]:
        raise ValueError(f"{path}: expected a CSV with a 'loss' column")
    out: Dict[str, List[float]] = {k: [] for k in rows[0] if k}
    for n, row in enumerate(rows, 2):
        for k in out:
            try:
                out[k].append(float(row[k]))
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{path}:{n}: {k}={row[k]!r} is not a number") from exc
    return out


def _columns(run: Run, name: str) -> Dict[str, List[float]]:
    if isinstance(run, (str, Path)):
        return read_log(run)
    if isinstance(run, dict):
        if "loss" not in run:
            raise ValueError(f"{name} must have a 'loss' entry")
        return {k: [float(x) for x in v] for k, v in run.items()}
    return {"loss": [float(x) for x in run]}


@dataclass
class LossComparison:
    """Two runs side by side: per-step values and their deviation.

    Attributes:
        names: the runs' labels.
        a, b: ``{column: values}`` over the common steps (``loss``, and ``grad_norm`` where
            both runs logged it).
        abs_dev, rel_dev: ``{column: |a - b|}`` and ``|a - b| / |a|`` per step (``a`` is the
            reference run).
    """

    names: Sequence[str]
    a: Dict[str, np.ndarray]
    b: Dict[str, np.ndarray]
    abs_dev: Dict[str, np.ndarray]
    rel_dev: Dict[str, np.ndarray]

    @property
    def steps(self) -> int:
        return len(self.a["loss"])

    def max_abs(self, column: str = "loss") -> float:
        return float(np.max(self.abs_dev[column])) if self.steps else 0.0

    def max_rel(self, column: str = "loss") -> float:
        return float(np.max(self.rel_dev[column])) if self.steps else 0.0

    def summary(self) -> str:
        parts = [f"{self.steps} steps ({self.names[0]} vs {self.names[1]})"]
        for col in self.a:
            worst = int(np.argmax(self.rel_dev[col])) if self.steps else 0
            parts.append(
                f"{col}: max abs dev {self.max_abs(col):.3g}, max rel dev "
                f"{self.max_rel(col):.3g} (step {worst})"
            )
        return "; ".join(parts)

    def to_csv(self, path: Union[str, Path]) -> Path:
        """One row per step: each run's value and the deviations, per column."""
        out = Path(path)
        cols = list(self.a)
        with open(out, "w", newline="", encoding="utf-8") as f:
            w = csv.writer(f)
            header = ["step"]
            for c in cols:
                header += [f"{c}_{self.names[0]}", f"{c}_{self.names[1]}", f"{c}_abs_dev",
                           f"{c}_rel_dev"]  # fmt: skip
            w.writerow(header)
            for s in range(self.steps):
                row: List[object] = [s]
                for c in cols:
                    values = (self.a[c][s], self.b[c][s], self.abs_dev[c][s], self.rel_dev[c][s])
                row += [repr(float(v)) for v in values]
                w.writerow(row)
        return out

    def plot(self, path: Union[str, Path], column: str = "loss") -> Path:
        """A PNG: both curves (top) and their relative difference per step (bottom, log scale).

        Raises:
            ImportError: matplotlib is not installed (``pip install mscompat[plot]``).
        """
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise ImportError("plotting needs matplotlib: pip install 'mscompat[plot]'") from exc
        steps = np.arange(self.steps)
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
        top.plot(steps, self.a[column], label=self.names[0])
        top.plot(steps, self.b[column], "--", label=self.names[1])
        top.set_ylabel(column)
        top.legend()
        top.set_title(f"{column}: {self.names[0]} vs {self.names[1]}")
        rel = np.array(self.rel_dev[column], np.float64)
        equal = rel == 0  # no point on a log scale: left out and counted in the legend
        rel[equal] = np.nan
        label = (
            f"{int(equal.sum())} of {self.steps} steps equal (not drawn)" if equal.any() else None
        )
        bottom.semilogy(steps, rel, ".-", color="tab:red", label=label)
        if label:
            bottom.legend()
        bottom.set_ylabel("relative difference")
        bottom.set_xlabel("step")
        fig.tight_layout()
        out = Path(path)
        fig.savefig(out, dpi=100)
        plt.close(fig)
        return out


def compare_losses(
    reference: Run, candidate: Run, *, names: Optional[Sequence[str]] = None
) -> LossComparison:
    """Per-step deviation of ``candidate`` (the port) from ``reference`` (PyTorch).

    Args:
        reference, candidate: a CSV path (``step,loss[,grad_norm]``), a sequence of losses, or
            ``{"loss": [...], "grad_norm": [...]}``.
        names: labels for the table and the plot (default ``("torch", "mindspore")``).

    Returns:
        :class:`LossComparison` over the steps both runs have (``summary()``, ``to_csv``,
        ``plot``).

    Raises:
        ValueError: a run without losses, or runs of different lengths.

    Example:
        >>> c = compare_losses([2.0, 1.5, 1.0], [2.0, 1.5003, 1.0])
        >>> round(c.max_rel(), 6), c.steps
        (0.0002, 3)
    """
    a = _columns(reference, "reference")
    b = _columns(candidate, "candidate")
    if len(a["loss"]) != len(b["loss"]):
        raise ValueError(
            f"the runs have {len(a['loss'])} and {len(b['loss'])} steps: compare runs of equal "
            "length"
        )
    cols = [c for c in a if c in b and c != "step"]
    fa = {c: np.asarray(a[c], np.float64) for c in cols}
    fb = {c: np.asarray(b[c], np.float64) for c in cols}
    abs_dev = {c: np.abs(fa[c] - fb[c]) for c in cols}
    rel_dev = {c: abs_dev[c] / np.maximum(np.abs(fa[c]), np.finfo(np.float64).tiny) for c in cols}
    return LossComparison(tuple(names or ("torch", "mindspore")), fa, fb, abs_dev, rel_dev)
