"""Side-by-side timing of ``embedding_bag``: mscompat in graph mode (``ms.jit``) against PyTorch
CPU eager on the same input, forward and forward+backward, per mode and backend.

Run from the repository root (``PYTHONPATH=$PWD python tools/bench_embedding_bag.py``). The
input is the op database's bench input ((4096, 16) bags of a (10000, 64) float32 table; 1-D
rows: the same indices flattened, with offsets). Each row times the two sides in alternating
blocks (``--rounds`` pairs of blocks of ``--repeat`` calls, the first call of each block untimed)
and reports, per block, the ratio graph / torch of the fastest calls (the uncontended time: on a
shared machine the medians swing with the load), its median over the blocks with min and max,
and the median ratio of the blocks' medians (the timing of ``tools/bench_box_losses.py``).
The "floor" row times our 2-D sum of bags of one index (the same output, 1/16 of the rows:
the call's fixed cost, the kernel's launch and the graph's status check included) next to
PyTorch's 2-D sum of the bench input.
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Callable, Dict, Tuple

import mindspore as ms
import numpy as np
import torch
from bench_box_losses import _compare  # alternating blocks, ratios of minima (tools/ on sys.path)

from mscompat.custom_ops import use_backend
from mscompat.layers import embedding_bag

Row = Tuple[Tuple[Any, ...], Dict[str, Any]]


def _rows(bags: int, size: int, num: int, dim: int) -> Dict[str, Row]:
    """name -> (positional arrays after the weight: input[, offsets], kwargs)."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, num, (bags, size))
    offsets = np.arange(bags) * size
    rows: Dict[str, Row] = {}
    for mode in ("sum", "mean", "max"):
        rows[f"2-D {mode}"] = ((x,), {"mode": mode})
    rows["1-D offsets mean"] = ((x.reshape(-1), offsets), {"mode": "mean"})
    psw = rng.standard_normal(x.shape).astype(np.float32)
    rows["2-D sum per_sample_weights"] = ((x,), {"mode": "sum", "per_sample_weights": psw})
    return rows


def _sides(w: np.ndarray, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Callable, ...]:
    """(ms forward, ms forward+backward, torch forward, torch forward+backward)."""
    ms_args = [ms.Tensor(a) for a in args]
    ms_kwargs = {k: ms.Tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    th_args = [torch.from_numpy(a) for a in args]
    th_kwargs = {
        k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()
    }
    # PyTorch's table from its own allocator, as a model's weight is (64-byte aligned: rows of
    # 64 float32 then start on a cache line; numpy's array, 16 bytes past one, made PyTorch's
    # call 1.2x slower on the bench input).
    mw, tw = ms.Tensor(w), torch.from_numpy(w).clone()
    out_shape = (args[0].shape[0] if args[0].ndim == 2 else args[1].shape[0], w.shape[1])
    ct = np.random.default_rng(1).standard_normal(out_shape).astype(np.float32)
    mct, tct = ms.Tensor(ct), torch.from_numpy(ct)

    def forward(weight: ms.Tensor) -> ms.Tensor:
        return embedding_bag(ms_args[0], weight, *ms_args[1:], **ms_kwargs)

    def weighted(weight: ms.Tensor, cot: ms.Tensor) -> ms.Tensor:
        return (embedding_bag(ms_args[0], weight, *ms_args[1:], **ms_kwargs) * cot).sum()

    fwd = ms.jit(forward)
    grad = ms.jit(ms.grad(weighted, grad_position=0))

    def ms_fwd() -> Any:
        return fwd(mw).asnumpy()

    def ms_both() -> Any:
        return grad(mw, mct).asnumpy()

    def th_fwd() -> Any:
        with torch.no_grad():
            return torch.nn.functional.embedding_bag(th_args[0], tw, *th_args[1:], **th_kwargs)

    def th_both() -> Any:
        leaf = tw.detach().requires_grad_()
        out = torch.nn.functional.embedding_bag(th_args[0], leaf, *th_args[1:], **th_kwargs)
        out.backward(tct)
        return leaf.grad

    return ms_fwd, ms_both, th_fwd, th_both


def _floor_row(w: np.ndarray, bags: int, rounds: int, repeat: int) -> None:
    x = np.random.default_rng(0).integers(0, w.shape[0], (bags, 16))
    mw, tw, tx = ms.Tensor(w), torch.from_numpy(w).clone(), torch.from_numpy(x)
    one = ms.Tensor(x[:, :1])

    def single(weight: ms.Tensor) -> ms.Tensor:
        return embedding_bag(one, weight, mode="sum")

    floor = ms.jit(single)

    def th_sum() -> Any:
        with torch.no_grad():
            return torch.nn.functional.embedding_bag(tx, tw, mode="sum")

    th_ms, g_ms, ratio, lo, hi, med = _compare(lambda: floor(mw).asnumpy(), th_sum, rounds, repeat)
    print(
        f"{'floor: 2-D sum, 1-row bags':28s} {'aot':10s} {'vs 2-D sum fwd':17s} {th_ms:9.3f} "
        f"{g_ms:9.3f} {ratio:6.2f} [{lo:5.2f}, {hi:5.2f}] {med:10.2f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bags", type=int, default=4096)
    parser.add_argument("--size", type=int, default=16, help="indices per bag")
    parser.add_argument("--num", type=int, default=10000, help="rows of the table")
    parser.add_argument("--dim", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--backends", default="aot")
    parser.add_argument("--only", default="", help="substring of the row names to run")
    parser.add_argument("--torch-threads", type=int, default=0, help="0: torch's default")
    args = parser.parse_args()
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    w = np.random.default_rng(0).standard_normal((args.num, args.dim)).astype(np.float32)
    print(
        f"({args.bags}, {args.size}) bags of a ({args.num}, {args.dim}) float32 table; torch "
        f"{torch.__version__} ({torch.get_num_threads()} threads), load {os.getloadavg()[0]:.2f}; "
        f"times: the fastest call; ratio = graph / torch eager of the fastest calls of a block, "
        f"median [min, max] over {args.rounds} alternating blocks of {args.repeat} calls; "
        f"'of medians': the median ratio of the blocks' medians"
    )
    print(
        f"{'row':28s} {'backend':10s} {'pass':17s} {'torch ms':>9s} {'graph ms':>9s} "
        f"{'ratio':>6s} {'[min, max]':>14s} {'of medians':>10s}"
    )
    for name, (rest, kwargs) in _rows(args.bags, args.size, args.num, args.dim).items():
        if args.only and args.only not in name:
            continue
        for backend in args.backends.split(","):
            with use_backend(backend, "layers.embedding_bag"):
                ms_fwd, ms_both, th_fwd, th_both = _sides(w, rest, kwargs)
                ms_fwd()
                ms_both()
            for label, mfn, tfn in (
                ("forward", ms_fwd, th_fwd),
                ("forward+backward", ms_both, th_both),
            ):
                th_ms, g_ms, ratio, lo, hi, med = _compare(mfn, tfn, args.rounds, args.repeat)
                print(
                    f"{name:28s} {backend:10s} {label:17s} {th_ms:9.3f} {g_ms:9.3f} "
                    f"{ratio:6.2f} [{lo:5.2f}, {hi:5.2f}] {med:10.2f}",
                    flush=True,
                )
    if not args.only or args.only in "floor":
        _floor_row(w, args.bags, args.rounds, args.repeat)
    print(f"load at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
