"""The MindSpore FCOS training under ``msrun`` data parallel, and its 1-process reference.

Each rank takes its slice of the global batch, gradients are averaged over the ranks
(``DATA_PARALLEL``, ``gradients_mean=True``) and the loss normalisers (the number of positive
points, the centerness sum) are averaged with an all-reduce, so that the ranks compute the loss
of the global batch. From the repository root, with the venv's ``python`` first on ``PATH``
(msrun starts ``python`` from it)::

    msrun --worker_num=2 --local_worker_num=2 --master_port=8129 --join=True \\
        --log_dir=fcos_dist_out/msrun_logs examples/fcos_port/dist_train.py --out fcos_dist_out
    python examples/fcos_port/dist_train.py --out fcos_dist_out        # 1 process, whole batch

(``--ckpt fcos_port_out/fcos_init.ckpt``: start from the checkpoint ``train.py`` wrote, instead
of converting the PyTorch model in each process.)
    python examples/fcos_port/dist_train.py --out fcos_dist_out --compare

Started by ``msrun`` (its ``RANK_SIZE``/``MS_WORKER_NUM`` in the environment) it calls
``mindspore.communication.init()``; otherwise it runs alone on the whole batch. Each process
writes its per-step losses and final parameters to ``--out``; ``--compare`` checks that the
ranks' parameters are identical and that the 2-worker loss curve matches the 1-process one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Dict, Optional, Sequence

import numpy as np

if __package__ in (None, ""):  # run as a script (msrun): make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.fcos_port.data import LR  # noqa: E402

__all__ = ["compare", "main", "train_rank"]


def _world_from_env() -> int:
    return int(os.environ.get("MS_WORKER_NUM", os.environ.get("RANK_SIZE", "1")))


def train_rank(
    steps: int,
    out: Path,
    lr: float = LR,
    global_batch: int = 4,
    ckpt: Optional[Path] = None,
) -> Dict[str, Any]:
    """Train this process's share (all of it when not under msrun) from the converted weights
    in ``ckpt`` (default: convert the PyTorch model here); write ``losses_<tag>.csv`` and
    ``params_<tag>.npz`` (tag ``rank<r>`` or ``single``)."""
    import mindspore as ms

    from examples.fcos_port import ms_fcos
    from examples.fcos_port.data import train_batch

    ms.set_device("CPU")
    world, rank, tag = 1, 0, "single"
    if _world_from_env() > 1:
        from mindspore.communication import get_group_size, get_rank, init

        init()
        world, rank = get_group_size(), get_rank()
        tag = f"rank{rank}"
        ms.set_auto_parallel_context(
            parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True, device_num=world
        )
    if global_batch % world:
        raise ValueError(f"global batch {global_batch} does not split over {world} ranks")
    per = global_batch // world
    batches = [
        tuple(a[rank * per : (rank + 1) * per] for a in train_batch(s, global_batch))
        for s in range(steps)
    ]
    cell = ms_fcos.FCOS()
    _initial_weights(cell, ckpt)  # the same start on every rank
    losses = ms_fcos.train(cell, steps, batches, lr, world=world)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"losses_{tag}.csv", "w") as f:
        f.write("step,loss\n")
        f.writelines(f"{i},{v!r}\n" for i, v in enumerate(losses))
    np.savez(out / f"params_{tag}.npz", **{p.name: p.asnumpy() for p in cell.trainable_params()})
    return {"tag": tag, "world": world, "losses": losses}


def _initial_weights(cell: Any, ckpt: Optional[Path]) -> None:
    """Load the converted weights: from a checkpoint written once (the workers then need no
    torch), or by converting the seeded PyTorch model in this process."""
    if ckpt is not None:
        from mscompat.port import load_checkpoint

        missing = load_checkpoint(cell, ckpt)
        if missing:
            raise RuntimeError(f"{ckpt} does not fill {missing}")
        return
    from examples.fcos_port import torch_fcos
    from mscompat.port import convert_weights

    table = convert_weights(torch_fcos.make_model(seed=0), cell)
    if not table.ok:
        raise RuntimeError(f"weights did not convert:\n{table}")


def compare(
    out: Path, reference: Optional[Path] = None, reference_params: Optional[Path] = None
) -> Dict[str, Any]:
    """The ranks' parameters (bitwise) and losses, and the 2-worker curve (``rank0``'s: the
    global batch's loss) against the 1-process run on the whole batch (``reference``: a
    ``step,loss`` CSV, default ``losses_single.csv``; ``reference_params``: an ``.npz``,
    default ``params_single.npz``)."""
    from mscompat.port import compare_losses

    ranks = sorted(out.glob("params_rank*.npz"))
    if len(ranks) < 2:
        raise FileNotFoundError(f"no msrun run in {out} (params_rank*.npz)")
    params = [dict(np.load(p)) for p in ranks]
    rank_diff = max(float(np.abs(params[0][k] - q[k]).max()) for q in params[1:] for k in params[0])
    rank_curves = [
        compare_losses(out / "losses_rank0.csv", out / f"losses_{p.stem[7:]}.csv").max_abs()
        for p in ranks[1:]
    ]
    single = dict(np.load(reference_params or out / "params_single.npz"))
    param_rel = max(
        float(np.abs(single[k] - params[0][k]).max() / max(np.abs(single[k]).max(), 1e-12))
        for k in single
    )
    curves = compare_losses(
        reference or out / "losses_single.csv",
        out / "losses_rank0.csv",
        names=("1 process", f"{len(ranks)} workers"),
    )
    return {
        "workers": len(ranks),
        "ranks_params_max_abs_diff": rank_diff,
        "ranks_loss_max_abs_diff": max(rank_curves),
        "loss_max_rel_vs_single": curves.max_rel(),
        "params_max_rel_vs_single": param_rel,
        "steps": curves.steps,
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="FCOS port under msrun data parallel")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=LR)
    parser.add_argument("--out", type=Path, default=Path("fcos_dist_out"))
    parser.add_argument("--ckpt", type=Path, default=None, help="converted initial weights")
    parser.add_argument("--compare", action="store_true", help="compare the runs in --out")
    parser.add_argument("--max-rel", type=float, default=1e-5)
    args = parser.parse_args(argv)
    if args.compare:
        figures = compare(args.out)
        print(json.dumps(figures, indent=2))
        ok = (
            figures["ranks_params_max_abs_diff"] == 0
            and figures["loss_max_rel_vs_single"] <= args.max_rel
        )
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1
    res = train_rank(args.steps, args.out, args.lr, ckpt=args.ckpt)
    first, last = res["losses"][0], res["losses"][-1]
    print(f"{res['tag']}: world {res['world']}, losses {first:.6f} -> {last:.6f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
