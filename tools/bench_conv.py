"""Side-by-side timing of the convolutions: mscompat in graph mode (``ms.jit``) against PyTorch
CPU eager on the same float32 input, forward and forward+backward (gradients of input, weight
and bias for an output gradient that is an input of the graph).

Run from the repository root (``PYTHONPATH=$PWD python tools/bench_conv.py``). Rows: the op
database's bench inputs of ``conv_transpose2d`` (8 x 64 x 32 x 32 -> 32 channels, k=4, s=2,
p=1) and ``conv2d`` (8 x 64 x 32 x 32 -> 64 channels, k=3, p=1), and a ``conv_transpose1d``
decoder step; ``--paths``: ``gemm`` (the default float32 ``aot`` path: one C++ kernel, blocked
oneDNN sgemm + col2im) and ``legacy`` (the matmul + ``shape.fold`` col2im path that float16 and
float64 take), ``composite``. Timing as ``tools/bench_box_losses.py``: alternating blocks, the
ratio graph / torch of each block's fastest calls, median [min, max] over the blocks.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from typing import Any, Callable, Dict, Tuple

import mindspore as ms
import numpy as np
import torch
from bench_box_losses import _compare  # type: ignore[import-not-found]

from mscompat import layers
from mscompat.custom_ops import use_backend
from mscompat.layers import _conv_impl

Row = Tuple[str, Tuple[Any, Any], Callable[..., Any], Tuple[int, ...], Tuple[int, ...], int]


def _conv_t2(x: ms.Tensor, w: ms.Tensor, b: ms.Tensor) -> ms.Tensor:
    return layers.conv_transpose2d(x, w, b, 2, 1)


def _conv_t1(x: ms.Tensor, w: ms.Tensor, b: ms.Tensor) -> ms.Tensor:
    return layers.conv_transpose1d(x, w, b, 2, 1)


def _conv2(x: ms.Tensor, w: ms.Tensor, b: ms.Tensor) -> ms.Tensor:
    return layers.conv2d(x, w, b, 1, 1)


# output . dy (dy an input of the graph: a constant one lets the compiler fold the backward)
def _conv_t2_dot(x: ms.Tensor, w: ms.Tensor, b: ms.Tensor, dy: ms.Tensor) -> ms.Tensor:
    return (_conv_t2(x, w, b) * dy).sum()


def _conv_t1_dot(x: ms.Tensor, w: ms.Tensor, b: ms.Tensor, dy: ms.Tensor) -> ms.Tensor:
    return (_conv_t1(x, w, b) * dy).sum()


def _conv2_dot(x: ms.Tensor, w: ms.Tensor, b: ms.Tensor, dy: ms.Tensor) -> ms.Tensor:
    return (_conv2(x, w, b) * dy).sum()


def _rows() -> Dict[str, Row]:
    """name -> (registry op, (mscompat fn, its dot with dy), torch fn, input shape, weight
    shape, bias size)."""
    f = torch.nn.functional
    return {
        "conv_transpose2d 8x64x32x32 k4 s2 p1 -> 32": (
            "layers.conv_transpose2d",
            (_conv_t2, _conv_t2_dot),
            lambda x, w, b: f.conv_transpose2d(x, w, b, 2, 1),
            (8, 64, 32, 32),
            (64, 32, 4, 4),
            32,
        ),
        "conv_transpose1d 8x64x1024 k4 s2 p1 -> 32": (
            "layers.conv_transpose1d",
            (_conv_t1, _conv_t1_dot),
            lambda x, w, b: f.conv_transpose1d(x, w, b, 2, 1),
            (8, 64, 1024),
            (64, 32, 4),
            32,
        ),
        "conv2d 8x64x32x32 k3 p1 -> 64": (
            "layers.conv2d",
            (_conv2, _conv2_dot),
            lambda x, w, b: f.conv2d(x, w, b, 1, 1),
            (8, 64, 32, 32),
            (64, 64, 3, 3),
            64,
        ),
    }


def _bench_row(
    name: str, row: Row, path: str, rng: np.random.Generator, rounds: int, repeat: int
) -> None:
    """Times one row on one path, forward and forward+backward, and prints two lines."""
    op, (ms_fn, ms_dot), th_fn, xs, ws, cout = row
    x = rng.standard_normal(xs).astype(np.float32)
    w = (rng.standard_normal(ws) * 0.05).astype(np.float32)
    b = rng.standard_normal(cout).astype(np.float32)
    with torch.no_grad():
        dy = rng.standard_normal(th_fn(*map(torch.from_numpy, (x, w, b))).shape)
    dy = dy.astype(np.float32)
    mx, mw, mb, mdy = (ms.Tensor(a) for a in (x, w, b, dy))
    # legacy: the float16/float64 path (matmul + shape.fold's col2im), run in float32
    if path == "legacy":
        _conv_impl._GEMM_USABLE[_conv_impl.current_device()] = False
    with use_backend("composite" if path == "composite" else "aot", op):
        fwd = ms.jit(ms_fn)
        grad = ms.jit(ms.grad(ms_dot, grad_position=(0, 1, 2)))
        fwd(mx, mw, mb).asnumpy()
        grad(mx, mw, mb, mdy)[0].asnumpy()

    def th_fwd() -> Any:
        with torch.no_grad():
            return th_fn(*map(torch.from_numpy, (x, w, b)))

    def th_both() -> Any:
        leaves = [torch.from_numpy(a).requires_grad_() for a in (x, w, b)]
        th_fn(*leaves).backward(torch.from_numpy(dy))

    def ms_fwd() -> Any:
        return fwd(mx, mw, mb).asnumpy()

    def ms_both() -> Any:
        return [g.asnumpy() for g in grad(mx, mw, mb, mdy)]

    for label, mfn, tfn in (("forward", ms_fwd, th_fwd), ("forward+backward", ms_both, th_both)):
        th_ms, g_ms, ratio, lo, hi, med = _compare(mfn, tfn, rounds, repeat)
        print(
            f"{name:44s} {path:9s} {label:17s} {th_ms:9.3f} {g_ms:9.3f} "
            f"{ratio:6.2f} [{lo:5.2f}, {hi:5.2f}] {med:10.2f}",
            flush=True,
        )
    _conv_impl._GEMM_USABLE.clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--paths", default="gemm,legacy")
    parser.add_argument("--only", default="", help="substring of the row names to run")
    parser.add_argument("--torch-threads", type=int, default=0, help="0: torch's default")
    parser.add_argument("--no-header", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    if not args.no_header:
        print(
            f"float32; torch {torch.__version__} ({torch.get_num_threads()} threads); times: "
            f"the fastest call; ratio = graph / torch eager of the fastest calls of a block, "
            f"median [min, max] over {args.rounds} alternating blocks of {args.repeat} calls",
            flush=True,
        )
        print(
            f"{'row':44s} {'path':9s} {'pass':17s} {'torch ms':>9s} {'graph ms':>9s} "
            f"{'ratio':>6s} {'[min, max]':>14s} {'of medians':>10s}",
            flush=True,
        )
    rows = [name for name in _rows() if not args.only or args.only in name]
    if len(rows) > 1:
        # one process per row: in one process, the conv2d row's graph failed to compile
        # ("Parse Lambda Function Fail") after the transposed rows' graphs (MindSpore 2.10)
        for name in rows:
            argv = [a for a in sys.argv[1:] if not a.startswith("--only")]
            cmd = [sys.executable, __file__, *argv, f"--only={name}", "--no-header"]
            subprocess.run(cmd, check=False)
        return
    rng = np.random.default_rng(0)
    for path in args.paths.split(","):
        _bench_row(rows[0], _rows()[rows[0]], path, rng, args.rounds, args.repeat)


if __name__ == "__main__":
    main()
