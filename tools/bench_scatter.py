"""Side by side: ``mscompat.indexing.scatter_reduce`` in graph mode (``ms.jit``) against
``torch.scatter_reduce`` eager on CPU, forward and forward+backward, per backend, on the op
database's bench input (1000 x 1000 float32, dim 0, random indices) for amax, sum and mean.

    PYTHONPATH=$PWD python tools/bench_scatter.py [--rounds 5] [--repeat 10]

Each row times the two sides in alternating blocks (``--rounds`` pairs of blocks of
``--repeat`` calls, the first call of each block untimed) and reports the fastest call of
each side and, per pair of blocks, the ratio graph / torch of the fastest calls (the
uncontended time: on a shared machine the medians swing with the load): its median over the
blocks with min and max. Run ``uptime`` next to it: the load is part of the figure.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable, List, Tuple

import mindspore as ms
import numpy as np
import torch

from mscompat.custom_ops import use_backend
from mscompat.indexing import scatter_reduce
from mscompat.testing.bench import settle

N = 1000


def _fastest(fn: Callable[[], Any], repeat: int) -> float:
    """The fastest of ``repeat`` calls after :func:`settle` (the other side's threads sleep) and
    an untimed call (compilation, thread wake-up)."""
    settle()
    fn()
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _side_by_side(
    th: Callable[[], Any], graph: Callable[[], Any], rounds: int, repeat: int
) -> Tuple[float, float, List[float]]:
    pairs = [(_fastest(th, repeat), _fastest(graph, repeat)) for _ in range(rounds)]
    return min(p[0] for p in pairs), min(p[1] for p in pairs), [g / t for t, g in pairs]


def _sides(reduce: str, backend: str) -> List[Tuple[str, Callable[[], Any], Callable[[], Any]]]:
    """(direction, torch call, graph call) for ``reduce`` with ``backend`` forced."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((N, N)).astype(np.float32)
    idx = rng.integers(0, N, (N, N))
    cot = rng.standard_normal((N, N)).astype(np.float32)
    tx, ti, tc = torch.from_numpy(x), torch.from_numpy(idx), torch.from_numpy(cot)
    mx, mi, mc = ms.Tensor(x), ms.Tensor(idx), ms.Tensor(cot)

    def forward(a: ms.Tensor, i: ms.Tensor, s: ms.Tensor) -> ms.Tensor:
        return scatter_reduce(a, 0, i, s, reduce)

    def loss(a: ms.Tensor, i: ms.Tensor, s: ms.Tensor, c: ms.Tensor) -> ms.Tensor:
        return (scatter_reduce(a, 0, i, s, reduce) * c).sum()

    with use_backend(backend, "indexing.scatter_reduce"):
        fwd = ms.jit(forward)
        both = ms.jit(ms.grad(loss, grad_position=(0, 2)))
        fwd(mx, mi, mx).asnumpy()
        both(mx, mi, mx, mc)[0].asnumpy()

    def th_fwd() -> Any:
        with torch.no_grad():
            return torch.scatter_reduce(tx, 0, ti, tx, reduce)

    def th_both() -> Any:
        a, s = tx.clone().requires_grad_(), tx.clone().requires_grad_()
        (torch.scatter_reduce(a, 0, ti, s, reduce) * tc).sum().backward()
        return a.grad

    def ms_both() -> Any:
        return [g.asnumpy() for g in both(mx, mi, mx, mc)]

    return [
        ("forward", th_fwd, lambda: fwd(mx, mi, mx).asnumpy()),
        ("forward+backward", th_both, ms_both),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--reduces", default="amax,sum,mean")
    parser.add_argument("--backends", default="aot,composite")
    parser.add_argument("--torch-threads", type=int, default=0, help="0: torch's default")
    args = parser.parse_args()
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    print(
        f"scatter_reduce, ({N}, {N}) float32, dim 0, random indices, include_self; torch "
        f"{torch.__version__} eager ({torch.get_num_threads()} threads) vs mscompat graph mode; "
        f"ratio = graph / torch of the fastest calls of a block, median [min, max] over "
        f"{args.rounds} alternating pairs of blocks of {args.repeat} calls"
    )
    print(f"{'reduce':6s} {'backend':10s} {'pass':17s} {'torch ms':>9s} {'graph ms':>9s} ratio")
    for reduce in args.reduces.split(","):
        for backend in args.backends.split(","):
            for direction, th, graph in _sides(reduce, backend):
                t, g, ratios = _side_by_side(th, graph, args.rounds, args.repeat)
                print(
                    f"{reduce:6s} {backend:10s} {direction:17s} {t * 1e3:9.2f} {g * 1e3:9.2f} "
                    f"{statistics.median(ratios):.2f} [{min(ratios):.2f}, {max(ratios):.2f}]",
                    flush=True,
                )


if __name__ == "__main__":
    main()
