"""Side-by-side timing of ``mscompat.nn.SyncBatchNorm`` (training, forward+backward, graph mode)
on a ``(N, 64, 32, 32)`` float32 batch.

Run from the repository root, with the venv's ``python`` first on ``PATH``
(``PYTHONPATH=$PWD python tools/bench_sync_batch_norm.py``). Two measurements:

* one process: ``SyncBatchNorm`` not distributed (PyTorch's path: ``F.batch_norm``) against
  ``torch.nn.SyncBatchNorm`` eager on the same batch;
* ``--workers 2`` (the script starts itself under ``msrun`` with 2 CPU workers): each rank's
  synchronised step on its half of the batch against the unsynchronised ``BatchNorm2d`` on the
  same half (the cost of the 4 all-reduces) and PyTorch's ``BatchNorm2d`` on that half
  (PyTorch's ``SyncBatchNorm`` refuses CPU tensors when distributed).

Each pair is timed in alternating blocks (``--rounds`` pairs of ``--repeat`` calls, the first
call of each block untimed); the ratio of the blocks' fastest calls is reported as median
[min, max] over the rounds. Measure on a quiet machine (``uptime``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, List, Optional, Sequence

import numpy as np

if __package__ in (None, ""):  # run as a script (msrun): make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

C = 64


def _fastest(fn: Callable[[], Any], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def _pair(a: Callable[[], Any], b: Callable[[], Any], rounds: int, repeat: int) -> str:
    ratios, best_a, best_b = [], [], []
    for _ in range(rounds):
        ta, tb = _fastest(a, repeat), _fastest(b, repeat)
        ratios.append(ta / tb)
        best_a.append(ta)
        best_b.append(tb)
    return (
        f"{min(best_a) * 1e3:8.2f} ms vs {min(best_b) * 1e3:8.2f} ms: ratio "
        f"{statistics.median(ratios):.2f} [{min(ratios):.2f}, {max(ratios):.2f}]"
    )


def _ms_step(cell: Any, x: np.ndarray) -> Callable[[], Any]:
    import mindspore as ms
    from mindspore import Tensor

    class Loss(ms.nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.bn = cell

        def construct(self, t: Tensor) -> Tensor:
            return (self.bn(t) ** 2).sum()

    grad = ms.jit(ms.grad(Loss(), 0, cell.trainable_params()))
    xt = Tensor(x)
    return lambda: grad(xt)[0].asnumpy()


def _torch_step(module: Any, x: np.ndarray) -> Callable[[], Any]:
    import torch

    xt = torch.from_numpy(x).requires_grad_()

    def step() -> Any:
        xt.grad = None
        (module(xt) ** 2).sum().backward()
        return xt.grad

    return step


def single(batch: int, rounds: int, repeat: int) -> None:
    import torch

    from mscompat.nn import SyncBatchNorm

    x = np.random.default_rng(0).standard_normal((batch, C, 32, 32)).astype(np.float32)
    res = _pair(
        _ms_step(SyncBatchNorm(C), x),
        _torch_step(torch.nn.SyncBatchNorm(C), x),
        rounds,
        repeat,
    )
    print(f"1 process, {x.shape}: mscompat graph vs torch.nn.SyncBatchNorm eager: {res}")


def worker(batch: int, rounds: int, repeat: int) -> None:
    import mindspore as ms
    import torch
    from mindspore.communication import get_group_size, get_rank, init

    from mscompat.nn import BatchNorm2d, SyncBatchNorm

    ms.set_device("CPU")
    init()
    rank, world = get_rank(), get_group_size()
    per = batch // world
    x = np.random.default_rng(0).standard_normal((batch, C, 32, 32)).astype(np.float32)
    x = x[rank * per : (rank + 1) * per]
    sync = _ms_step(SyncBatchNorm(C), x)
    vs_local = _pair(sync, _ms_step(BatchNorm2d(C), x), rounds, repeat)
    vs_torch = _pair(sync, _torch_step(torch.nn.BatchNorm2d(C), x), rounds, repeat)
    print(f"rank {rank}/{world}, local {x.shape}: synced vs mscompat BatchNorm2d: {vs_local}")
    print(f"rank {rank}/{world}, local {x.shape}: synced vs torch BatchNorm2d: {vs_torch}")


def launch(workers: int, argv: Sequence[str]) -> int:
    bin_dir = Path(sys.executable).parent
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    msrun = shutil.which("msrun", path=path)
    if msrun is None:
        raise SystemExit("msrun (MindSpore's launcher) is not installed next to this python")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PATH=path)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    logs = Path(tempfile.mkdtemp(prefix="bench_sync_bn_"))
    cmd: List[str] = [
        msrun, f"--worker_num={workers}", f"--local_worker_num={workers}",
        f"--master_port={port}", "--join=True", f"--log_dir={logs}", __file__, "--as-rank",
        *argv,
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    for log in sorted(logs.glob("worker_*.log")):
        print("".join(line for line in log.read_text().splitlines(True) if "rank " in line))
    if proc.returncode:
        print(proc.stdout[-3000:], proc.stderr[-3000:], f"(logs in {logs})")
    return proc.returncode


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--workers", type=int, default=0, help="also run under msrun")
    parser.add_argument("--as-rank", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    common = ["--batch", str(args.batch), "--rounds", str(args.rounds)]
    common += ["--repeat", str(args.repeat)]
    if args.as_rank:
        worker(args.batch, args.rounds, args.repeat)
        return 0
    print(os.popen("uptime").read().strip())
    single(args.batch, args.rounds, args.repeat)
    return launch(args.workers, common) if args.workers > 1 else 0


if __name__ == "__main__":
    raise SystemExit(main())
