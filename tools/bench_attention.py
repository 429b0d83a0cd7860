"""Side-by-side timing of ``scaled_dot_product_attention``: mscompat in graph mode (``ms.jit``)
against PyTorch CPU eager on the same float32 input, forward and forward+backward (gradients of
query, key and value for an output gradient that is an input of the graph), per backend.

Run from the repository root (``PYTHONPATH=$PWD python tools/bench_attention.py``). Rows: the
op database's bench input (B=8, H=8, L=S=512, D=64: issue 17's target), the same with
``is_causal``, and a GQA row (8 query heads on 2 key/value heads) with a boolean padding mask;
a row with an additive float mask (B, 1, L, S); ``--paths``: ``aot`` (the fused kernel) and
``composite``. Timing as
``tools/bench_box_losses.py``: alternating blocks, the ratio graph / torch of each block's
fastest calls, median [min, max] over the blocks (run it on a quiet machine: ``uptime``).
"""

from __future__ import annotations

import argparse
import os
from typing import Any, Dict, Optional, Tuple, Union

import mindspore as ms
import numpy as np
import torch
from bench_box_losses import _report  # type: ignore[import-not-found]

from mscompat.custom_ops import use_backend
from mscompat.layers import scaled_dot_product_attention as sdpa

_OP = "layers.scaled_dot_product_attention"
# name -> (query shape, key/value shape, is_causal, padding mask (True: boolean, "float": an
# additive float mask, not differentiated), enable_gqa)
Row = Tuple[Tuple[int, ...], Tuple[int, ...], bool, Union[bool, str], bool]
_ROWS: Dict[str, Row] = {
    "B8 H8 L=S=512 D64": ((8, 8, 512, 64), (8, 8, 512, 64), False, False, False),
    "B8 H8 L=S=512 D64 causal": ((8, 8, 512, 64), (8, 8, 512, 64), True, False, False),
    "B8 H8/2 L=S=512 D64 GQA+mask": ((8, 8, 512, 64), (8, 2, 512, 64), False, True, True),
    "B8 H8 L=S=512 D64 float mask": ((8, 8, 512, 64), (8, 8, 512, 64), False, "float", False),
}


def _bench_row(name: str, row: Row, path: str, rounds: int, repeat: int) -> None:
    qs, ks, causal, padded, gqa = row
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in (qs, ks, ks))
    dy = rng.standard_normal(qs).astype(np.float32)
    mask: Optional[np.ndarray] = None
    if padded:  # each batch item attends its first keys only: a (B, 1, 1, S) boolean mask
        keep = rng.integers(qs[2] // 2, qs[2] + 1, size=qs[0])
        mask = np.arange(ks[2])[None, :] < keep[:, None]
        mask = mask[:, None, None, :]
        if padded == "float":  # an additive (B, 1, L, S) float mask (a relative position bias)
            mask = np.where(mask, rng.standard_normal((qs[0], 1, qs[2], ks[2])), -np.inf)
            mask = mask.astype(np.float32)
    mm = None if mask is None else ms.Tensor(mask)

    def ms_fn(q: ms.Tensor, k: ms.Tensor, v: ms.Tensor) -> ms.Tensor:
        return sdpa(q, k, v, attn_mask=mm, is_causal=causal, enable_gqa=gqa)

    def ms_dot(q: ms.Tensor, k: ms.Tensor, v: ms.Tensor, dy: ms.Tensor) -> ms.Tensor:
        return (ms_fn(q, k, v) * dy).sum()

    mq, mk, mv, mdy = (ms.Tensor(a) for a in (q, k, v, dy))
    with use_backend(path, _OP):
        fwd = ms.jit(ms_fn)
        grad = ms.jit(ms.grad(ms_dot, grad_position=(0, 1, 2)))
        fwd(mq, mk, mv).asnumpy()
        grad(mq, mk, mv, mdy)[0].asnumpy()
    tm = None if mask is None else torch.from_numpy(mask)
    th = torch.nn.functional.scaled_dot_product_attention

    def th_fwd() -> Any:
        with torch.no_grad():
            return th(
                *map(torch.from_numpy, (q, k, v)), attn_mask=tm, is_causal=causal, enable_gqa=gqa
            )

    def th_both() -> Any:
        leaves = [torch.from_numpy(a).requires_grad_() for a in (q, k, v)]
        th(*leaves, attn_mask=tm, is_causal=causal, enable_gqa=gqa).backward(torch.from_numpy(dy))

    def ms_fwd() -> Any:
        return fwd(mq, mk, mv).asnumpy()

    def ms_both() -> Any:
        return [g.asnumpy() for g in grad(mq, mk, mv, mdy)]

    passes = (("forward", ms_fwd, th_fwd), ("forward+backward", ms_both, th_both))
    _report(f"{name:30s} {path:9s}", passes, rounds, repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--paths", default="aot,composite")
    parser.add_argument("--only", default="", help="substring of the row names to run")
    args = parser.parse_args()
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    print(
        f"float32; torch {torch.__version__} ({torch.get_num_threads()} threads); load "
        f"{os.getloadavg()[0]:.2f}; ratio = graph / torch eager of the fastest calls of a "
        f"block, median [min, max] over {args.rounds} alternating blocks of {args.repeat} calls",
        flush=True,
    )
    print(
        f"{'row':30s} {'path':9s} {'pass':17s} {'torch ms':>9s} {'graph ms':>9s} "
        f"{'ratio':>6s} {'[min, max]':>14s} {'of medians':>10s}",
        flush=True,
    )
    for name, row in _ROWS.items():
        if args.only and args.only not in name:
            continue
        for path in args.paths.split(","):
            _bench_row(name, row, path, args.rounds, args.repeat)


if __name__ == "__main__":
    main()
