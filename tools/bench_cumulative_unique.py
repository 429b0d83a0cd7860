"""Side-by-side timing of ``cummax``/``cummin`` (graph mode) and ``unique`` (PyNative, and its
``size=`` form in graph mode) against PyTorch eager on the same 1000 x 1000 float32 input,
with the floor of a graph-mode call of that size.

Run from the repository root (``PYTHONPATH=$PWD python tools/bench_cumulative_unique.py``).
Each row times the two sides in alternating blocks (``--rounds`` pairs of blocks of
``--repeat`` calls, the first call of each block untimed; ``_compare`` of
``tools/bench_box_losses.py``) and reports the fastest calls of each side, the ratio mscompat /
torch of the blocks' fastest calls, median [min, max] over the blocks, and the median ratio of
the blocks' medians. Every mscompat call ends with ``asnumpy()`` of each output (what
``mscompat bench`` does); the "floor" rows are jitted calls that only copy the input (``neg``;
with a second int64 output, the outputs of ``cummax``): what any graph-mode op of this size
costs here, next to ``torch.cummax``.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable, Dict, Tuple

import mindspore as ms
import numpy as np
import torch
from mindspore import ops

from mscompat.indexing import unique
from mscompat.shape import cummax, cummin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_box_losses import _compare  # noqa: E402  (a sibling script)

Row = Tuple[Callable[[], Any], Callable[[], Any]]


def _sync(out: Any) -> Any:
    for o in out if isinstance(out, tuple) else (out,):
        o.asnumpy()
    return out


# graph-mode functions (ms.jit parses their source; no lambdas)
def _cummax(x: ms.Tensor) -> Any:
    return cummax(x, 1)


def _cummin(x: ms.Tensor) -> Any:
    return cummin(x, 1)


def _cummax_sum(x: ms.Tensor, ct: ms.Tensor) -> Any:
    return (cummax(x, 1)[0] * ct).sum()


def _floor_one(x: ms.Tensor) -> Any:
    return ops.neg(x)


def _floor_two(x: ms.Tensor) -> Any:
    return ops.neg(x), x.astype(ms.int64)


def _unique_static(x: ms.Tensor) -> Any:
    return unique(x, return_inverse=True, return_counts=True, size=1000, fill_value=0.0)


def _rows(a: np.ndarray) -> Dict[str, Row]:
    x, tx = ms.Tensor(a), torch.from_numpy(a)
    ct = np.random.default_rng(1).standard_normal(a.shape).astype(np.float32)
    mct, tct = ms.Tensor(ct), torch.from_numpy(ct)
    fwd_max, fwd_min = ms.jit(_cummax), ms.jit(_cummin)
    grad = ms.jit(ms.grad(_cummax_sum, grad_position=0))
    floor_one, floor_two = ms.jit(_floor_one), ms.jit(_floor_two)
    static = ms.jit(_unique_static)

    def torch_grad() -> Any:
        leaf = tx.detach().requires_grad_()
        (torch.cummax(leaf, 1)[0] * tct).sum().backward()
        return leaf.grad

    return {
        "cummax graph forward": (lambda: _sync(fwd_max(x)), lambda: torch.cummax(tx, 1)),
        "cummin graph forward": (lambda: _sync(fwd_min(x)), lambda: torch.cummin(tx, 1)),
        "cummax graph fwd+bwd": (lambda: _sync(grad(x, mct)), torch_grad),
        "floor: jit neg": (lambda: _sync(floor_one(x)), lambda: torch.cummax(tx, 1)),
        "floor: jit neg + int64": (lambda: _sync(floor_two(x)), lambda: torch.cummax(tx, 1)),
        "unique counts pynative": (
            lambda: _sync(unique(x, return_counts=True)),
            lambda: torch.unique(tx, return_counts=True),
        ),
        "unique inverse+counts pynative": (
            lambda: _sync(unique(x, return_inverse=True, return_counts=True)),
            lambda: torch.unique(tx, return_inverse=True, return_counts=True),
        ),
        "unique size=1000 graph": (
            lambda: _sync(static(x)),
            lambda: torch.unique(tx, return_inverse=True, return_counts=True),
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--only", default="", help="substring of the row names to run")
    args = parser.parse_args()
    ms.set_context(mode=ms.PYNATIVE_MODE)
    a = np.random.default_rng(0).standard_normal((1000, 1000)).astype(np.float32)
    print(
        f"1000 x 1000 float32, dim 1; torch {torch.__version__} ({torch.get_num_threads()} "
        f"threads), MindSpore {ms.__version__}; load {os.getloadavg()[0]:.2f}; ratio = mscompat "
        f"/ torch of the fastest calls of a block, median [min, max] over {args.rounds} "
        f"alternating blocks of {args.repeat} calls"
    )
    print(
        f"{'row':32s} {'torch ms':>9s} {'ours ms':>9s} {'ratio':>6s} {'[min, max]':>14s} "
        f"{'of medians':>10s}"
    )
    for name, (ours, theirs) in _rows(a).items():
        if args.only and args.only not in name:
            continue
        th_ms, ms_ms, ratio, lo, hi, med = _compare(ours, theirs, args.rounds, args.repeat)
        print(
            f"{name:32s} {th_ms:9.3f} {ms_ms:9.3f} {ratio:6.2f} [{lo:5.2f}, {hi:5.2f}] {med:10.2f}",
            flush=True,
        )
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
