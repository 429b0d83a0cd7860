"""Side-by-side timing of the dense classification losses: mscompat in graph mode (``ms.jit``)
against PyTorch eager on the op database's bench inputs, forward and forward+backward, per
backend.

Run from the repository root (``PYTHONPATH=$PWD python tools/bench_class_losses.py``). Rows:
MMDetection's ``distribution_focal_loss`` (40k x 17 bins: 10k boxes x 4 sides), and on 100k
anchors x 80 classes ``torch.nn.functional.cross_entropy`` (:func:`mscompat.layers.cross_entropy`),
MMDetection's ``cross_entropy``, ``quality_focal_loss``, ``varifocal_loss`` and
``py_sigmoid_focal_loss``. The PyTorch side is MMDetection's code transcribed in plain torch
(``mscompat.testing.references``) and ``torch.nn.functional.cross_entropy`` itself. The
gradients taken are those of the op database's entries (``pred``; DFL's ``label`` too). The
timing is :mod:`bench_box_losses`' (alternating blocks, ratio graph / torch of the blocks'
fastest calls: median [min, max], and the median ratio of the blocks' medians).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Any, Callable, List, Tuple

import mindspore as ms
import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_box_losses import _report  # noqa: E402 - the timing shared with the box losses

from mscompat import layers, losses  # noqa: E402
from mscompat.custom_ops import use_backend  # noqa: E402
from mscompat.testing.references import mmdet, mmdet_cls  # noqa: E402


@dataclass(frozen=True)
class Row:
    """One loss: its registry op, the two sides ``(*inputs) -> 0-d loss``, the inputs' maker
    and the positions of the inputs differentiated."""

    op: str
    ms_fn: Callable[..., Any]
    torch_fn: Callable[..., Any]
    inputs: Callable[[], Tuple[np.ndarray, ...]]
    grads: Tuple[int, ...] = (0,)


def _logits(rng: np.random.Generator, shape: Tuple[int, int]) -> np.ndarray:
    return (rng.standard_normal(shape) * 3).astype(np.float32)


def _dfl_inputs() -> Tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    return _logits(rng, (40000, 17)), rng.uniform(0, 15.99, 40000).astype(np.float32)


def _ce_inputs() -> Tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    return _logits(rng, (100000, 80)), rng.integers(0, 80, 100000).astype(np.int64)


def _qfl_inputs() -> Tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    x = _logits(rng, (100000, 80))
    return (
        x,
        rng.integers(0, 81, 100000).astype(np.int64),
        rng.uniform(size=100000).astype(np.float32),
    )


def _dense_inputs() -> Tuple[np.ndarray, ...]:
    """Logits and IoU-like soft targets, 0 for most elements."""
    rng = np.random.default_rng(0)
    x = _logits(rng, (100000, 80))
    t = rng.uniform(size=x.shape) * (rng.uniform(size=x.shape) < 0.3)
    return x, t.astype(np.float32)


def _onehot_inputs() -> Tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    x = _logits(rng, (100000, 80))
    labels = rng.integers(0, 81, 100000)  # 80: background
    return x, np.eye(81, dtype=np.float32)[labels][:, :80]


# mscompat sides: plain functions (ms.jit parses their source; no lambdas)
def _ms_dfl(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return losses.distribution_focal_loss(p, t)


def _ms_torch_ce(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return layers.cross_entropy(p, t)


def _ms_mmdet_ce(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return losses.cross_entropy(p, t)


def _ms_qfl(p: ms.Tensor, label: ms.Tensor, score: ms.Tensor) -> ms.Tensor:
    return losses.quality_focal_loss(p, (label, score))


def _ms_vfl(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return losses.varifocal_loss(p, t)


def _ms_focal(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return losses.sigmoid_focal_loss(p, t)


def _rows() -> dict:
    return {
        "mmdet distribution_focal_loss": Row(
            "losses.distribution_focal_loss",
            _ms_dfl,
            mmdet_cls.distribution_focal_loss,
            _dfl_inputs,
            (0, 1),
        ),
        "torch F.cross_entropy": Row(
            "layers.cross_entropy", _ms_torch_ce, F.cross_entropy, _ce_inputs
        ),
        "mmdet cross_entropy": Row(
            "losses.cross_entropy", _ms_mmdet_ce, mmdet_cls.cross_entropy, _ce_inputs
        ),
        "mmdet quality_focal_loss": Row(
            "losses.quality_focal_loss",
            _ms_qfl,
            lambda p, label, score: mmdet_cls.quality_focal_loss(p, (label, score)),
            _qfl_inputs,
        ),
        "mmdet varifocal_loss": Row(
            "losses.varifocal_loss", _ms_vfl, mmdet_cls.varifocal_loss, _dense_inputs
        ),
        "mmdet py_sigmoid_focal_loss": Row(
            "losses.sigmoid_focal_loss", _ms_focal, mmdet.py_sigmoid_focal_loss, _onehot_inputs
        ),
    }


def _sides(row: Row, backend: str) -> Tuple[Callable[..., Any], ...]:
    """(mscompat forward, mscompat forward+backward, torch forward, torch forward+backward),
    each a no-argument call that waits for its results."""
    arrays = row.inputs()
    ms_in = [ms.Tensor(a) for a in arrays]
    with use_backend(backend, row.op):
        fwd = ms.jit(row.ms_fn)
        both = ms.jit(ms.value_and_grad(row.ms_fn, grad_position=row.grads))
        fwd(*ms_in).asnumpy()  # compiled with the backend forced
        both(*ms_in)[0].asnumpy()

    def ms_fwd() -> Any:
        return fwd(*ms_in).asnumpy()

    def ms_both() -> Any:
        _, grads = both(*ms_in)
        if isinstance(grads, ms.Tensor):  # one grad_position: the bare gradient
            grads = (grads,)
        return [g.asnumpy() for g in grads]

    def th_fwd() -> Any:
        with torch.no_grad():
            return row.torch_fn(*[torch.from_numpy(a) for a in arrays])

    def th_both() -> Any:
        th_in = [torch.from_numpy(a) for a in arrays]
        for i in row.grads:
            th_in[i] = th_in[i].clone().requires_grad_()
        loss = row.torch_fn(*th_in)
        loss.backward()
        return loss

    return ms_fwd, ms_both, th_fwd, th_both


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--backends", default="aot")
    parser.add_argument("--only", default="", help="substring of the row names to run")
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=0,
        help="torch.set_num_threads (default: torch's own choice; these inputs are above its "
        "parallel grain)",
    )
    args = parser.parse_args()
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    print(
        f"float32; torch {torch.__version__} ({torch.get_num_threads()} threads); load "
        f"{os.getloadavg()[0]:.2f}; ratio = graph / torch eager of the fastest calls of a "
        f"block, median [min, max] over {args.rounds} alternating blocks of {args.repeat} "
        f"calls; 'of medians': the median ratio of the blocks' medians"
    )
    print(
        f"{'row':30s} {'backend':10s} {'pass':17s} {'torch ms':>9s} {'graph ms':>9s} "
        f"{'ratio':>6s} {'[min, max]':>14s} {'of medians':>10s}"
    )
    results: List[str] = []
    for name, row in _rows().items():
        if args.only and args.only not in name:
            continue
        for backend in args.backends.split(","):
            ms_fwd, ms_both, th_fwd, th_both = _sides(row, backend)
            passes = (("forward", ms_fwd, th_fwd), ("forward+backward", ms_both, th_both))
            results += _report(f"{name:30s} {backend:10s}", passes, args.rounds, args.repeat)
    print(f"load at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
