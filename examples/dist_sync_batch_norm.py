"""``mscompat.nn.SyncBatchNorm`` under ``msrun`` with 2 CPU workers against PyTorch's
``BatchNorm2d`` on the concatenated batch.

Each rank takes its part of a global batch of 5 (rank 0: 3 samples, rank 1: 2), runs 2
training steps of a ``SyncBatchNorm`` in PyNative and in graph mode (``ms.jit``), float32 (and
float64 in PyNative), and writes its outputs, the gradient of the global loss
``sum(y * g)`` with respect to its input and its local weight and bias gradients, and the running
statistics, to ``<out>/<mode>_rank<r>.npz``. ``--compare`` then checks them against
``torch.nn.BatchNorm2d`` on the whole batch: outputs and input gradients concatenated, weight
gradients summed over the ranks (what the data-parallel gradient reducer does), running
statistics equal on every rank. ``unsynced_y0`` is how far PyTorch's per-rank ``BatchNorm2d``
is from that reference: what the check would see if nothing were synchronised. Then a port's
training step: ``Conv2d`` + ReLU + MindSpore's ``nn.BatchNorm2d`` converted by
``SyncBatchNorm.convert_sync_batchnorm``, 2 SGD steps of ``TrainOneStepCell`` under
``DATA_PARALLEL``, against ``torch.optim.SGD`` on the whole batch (``train``). From the
repository root, with the venv's ``python`` first on ``PATH`` (msrun starts ``python`` from
it)::

    msrun --worker_num=2 --local_worker_num=2 --master_port=8131 --join=True \\
        --log_dir=sbn_out/logs examples/dist_sync_batch_norm.py --out sbn_out
    python examples/dist_sync_batch_norm.py --out sbn_out --compare
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

if __package__ in (None, ""):  # run as a script (msrun): make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

__all__ = ["compare", "main", "run_rank"]

C, STEPS, MOMENTUM, LR = 3, 2, 0.1, 0.01
#: (tag, graph mode, dtype)
RUNS = (
    ("pynative", False, "float32"),
    ("graph", True, "float32"),
    ("pynative64", False, "float64"),
)


def global_batches() -> Dict[str, Any]:
    """The steps' global inputs and cotangents, the initial parameters and each rank's rows."""
    rng = np.random.default_rng(0)
    xs = [rng.normal(2.0, 3.0, (5, C, 4, 3)).astype(np.float32) for _ in range(STEPS)]
    gs = [rng.normal(size=(5, C, 4, 3)).astype(np.float32) for _ in range(STEPS)]
    weight = rng.uniform(0.5, 1.5, C).astype(np.float32)
    bias = rng.normal(size=C).astype(np.float32)
    return {"x": xs, "g": gs, "weight": weight, "bias": bias, "rows": [(0, 3), (3, 5)]}


def run_rank(out: Path) -> None:
    """This rank's 2 steps in each run, written to ``<out>/<tag>_rank<r>.npz``."""
    import mindspore as ms
    from mindspore import Tensor, nn
    from mindspore.communication import get_group_size, get_rank, init

    from mscompat.layers import SyncBatchNorm

    ms.set_device("CPU")
    init()
    rank, world = get_rank(), get_group_size()
    data = global_batches()
    lo, hi = data["rows"][rank]

    class Loss(nn.Cell):
        def __init__(self, bn: nn.Cell) -> None:
            super().__init__(auto_prefix=False)
            self.bn = bn

        def construct(self, x: Tensor, g: Tensor) -> Any:
            y = self.bn(x)
            return (y * g).sum(), y

    out.mkdir(parents=True, exist_ok=True)
    for tag, graph, dtype in RUNS:
        bn = SyncBatchNorm(C, momentum=MOMENTUM, dtype=getattr(ms, dtype))
        bn.weight.set_data(Tensor(data["weight"].astype(dtype)))
        bn.bias.set_data(Tensor(data["bias"].astype(dtype)))
        loss = Loss(bn)
        params = [bn.weight, bn.bias]
        step = ms.value_and_grad(loss, (0,), params, has_aux=True)
        if graph:
            step = ms.jit(step)
        res: Dict[str, np.ndarray] = {}
        for s in range(STEPS):
            x, g = (Tensor(a[lo:hi].astype(dtype)) for a in (data["x"][s], data["g"][s]))
            (_, y), (dx, (dw, db)) = step(x, g)
            res.update({f"y{s}": y.asnumpy(), f"dx{s}": dx.asnumpy()})
            res.update({f"dw{s}": dw.asnumpy(), f"db{s}": db.asnumpy()})
        res["running_mean"] = bn.running_mean.asnumpy()
        res["running_var"] = bn.running_var.asnumpy()
        res["num_batches_tracked"] = bn.num_batches_tracked.asnumpy()
        np.savez(out / f"{tag}_rank{rank}.npz", **res)
    train_rank(out, rank, world)
    print(f"rank {rank}/{world}: rows [{lo}, {hi}) done")


def _target(data: Dict[str, Any], step: int) -> np.ndarray:
    """The training check's regression target at ``step``: ``(5, 4, 4, 3)``."""
    g = data["g"][step]
    return np.ascontiguousarray(np.concatenate([g, g[:, :1]], axis=1))


def _train_init() -> Dict[str, np.ndarray]:
    """The training check's initial parameters, by PyTorch's (and the converted Cells') names."""
    rng = np.random.default_rng(1)
    return {
        "0.weight": rng.normal(0.0, 0.3, (4, C, 3, 3)).astype(np.float32),
        "0.bias": rng.normal(size=4).astype(np.float32),
        "2.weight": rng.uniform(0.5, 1.5, 4).astype(np.float32),
        "2.bias": rng.normal(size=4).astype(np.float32),
    }


def train_rank(out: Path, rank: int, world: int) -> None:
    """A port's training: ``Conv2d`` + ReLU + MindSpore's ``nn.BatchNorm2d`` turned into a
    ``SyncBatchNorm`` by ``convert_sync_batchnorm``, 2 SGD steps of ``TrainOneStepCell`` in
    graph mode under ``DATA_PARALLEL`` (gradients summed: the summed loss of the global
    batch); writes the parameters and running statistics to ``<out>/train_rank<r>.npz``."""
    import mindspore as ms
    from mindspore import Tensor, nn

    from mscompat.layers import Conv2d, SyncBatchNorm

    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_auto_parallel_context(
        parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=False, device_num=world
    )
    net = nn.SequentialCell([Conv2d(C, 4, 3, padding=1), nn.ReLU(), nn.BatchNorm2d(4)])
    init = _train_init()
    net[0].weight.set_data(Tensor(init["0.weight"]))
    net[0].bias.set_data(Tensor(init["0.bias"]))
    net[2].gamma.set_data(Tensor(init["2.weight"]))
    net[2].beta.set_data(Tensor(init["2.bias"]))
    net = SyncBatchNorm.convert_sync_batchnorm(net)
    net.set_train(True)
    loss = nn.WithLossCell(net, nn.MSELoss(reduction="sum"))
    step = nn.TrainOneStepCell(loss, nn.SGD(net.trainable_params(), learning_rate=LR))
    step.set_train()
    data = global_batches()
    lo, hi = data["rows"][rank]
    for s in range(STEPS):
        step(Tensor(data["x"][s][lo:hi]), Tensor(_target(data, s)[lo:hi]))
    np.savez(out / f"train_rank{rank}.npz", **{p.name: p.asnumpy() for p in net.get_parameters()})


def torch_reference(dtype: str) -> Dict[str, np.ndarray]:
    """``torch.nn.BatchNorm2d`` on the whole batch: the same 2 steps, in ``dtype``."""
    import torch

    data = global_batches()
    bn = torch.nn.BatchNorm2d(C, momentum=MOMENTUM, dtype=getattr(torch, dtype))
    with torch.no_grad():
        bn.weight.copy_(torch.from_numpy(data["weight"]))
        bn.bias.copy_(torch.from_numpy(data["bias"]))
    ref: Dict[str, np.ndarray] = {}
    for s in range(STEPS):
        x = torch.from_numpy(data["x"][s].astype(dtype)).requires_grad_()
        bn.zero_grad()
        y = bn(x)
        (y * torch.from_numpy(data["g"][s].astype(dtype))).sum().backward()
        ref.update({f"y{s}": y.detach().numpy(), f"dx{s}": x.grad.numpy()})  # type: ignore
        ref.update({f"dw{s}": bn.weight.grad.numpy().copy()})  # type: ignore[union-attr]
        ref.update({f"db{s}": bn.bias.grad.numpy().copy()})  # type: ignore[union-attr]
    ref["running_mean"] = bn.running_mean.numpy()  # type: ignore[union-attr]
    ref["running_var"] = bn.running_var.numpy()  # type: ignore[union-attr]
    return ref


def _unsynced(y_ref: np.ndarray) -> float:
    """How far per-rank (unsynchronised) batch norm is from the global batch's, at step 0."""
    import torch

    data = global_batches()
    bn = torch.nn.BatchNorm2d(C, momentum=MOMENTUM)
    with torch.no_grad():
        bn.weight.copy_(torch.from_numpy(data["weight"]))
        bn.bias.copy_(torch.from_numpy(data["bias"]))
        parts = [bn(torch.from_numpy(data["x"][0][lo:hi])).numpy() for lo, hi in data["rows"]]
    return float(np.abs(np.concatenate(parts) - y_ref).max())


def _compare_training(out: Path) -> Dict[str, float]:
    """``train_rank``'s parameters against PyTorch's SGD on the whole batch (max abs diff per
    name, and between the ranks)."""
    import torch

    data = global_batches()
    torch.manual_seed(0)
    net = torch.nn.Sequential(
        torch.nn.Conv2d(C, 4, 3, padding=1), torch.nn.ReLU(), torch.nn.BatchNorm2d(4)
    )
    with torch.no_grad():
        for name, value in _train_init().items():
            net.state_dict()[name].copy_(torch.from_numpy(value))
    opt = torch.optim.SGD(net.parameters(), lr=LR)
    for s in range(STEPS):
        opt.zero_grad()
        y = net(torch.from_numpy(data["x"][s]))
        ((y - torch.from_numpy(_target(data, s))) ** 2).sum().backward()
        opt.step()
    ranks = [dict(np.load(out / f"train_rank{r}.npz")) for r in range(2)]
    errs = {"ranks": max(float(np.abs(ranks[0][k] - ranks[1][k]).max()) for k in ranks[0])}
    for name, want in net.state_dict().items():
        errs[name] = float(np.abs(ranks[0][name] - want.numpy()).max())
    return errs


def compare(out: Path) -> Dict[str, Any]:
    """Max abs differences per run against ``torch.nn.BatchNorm2d`` on the whole batch."""
    refs = {dtype: torch_reference(dtype) for dtype in ("float32", "float64")}
    figures: Dict[str, Any] = {"unsynced_y0": _unsynced(refs["float32"]["y0"])}
    figures["train"] = _compare_training(out)
    for tag, _, dtype in RUNS:
        ref = refs[dtype]
        ranks: List[Dict[str, np.ndarray]] = [
            dict(np.load(out / f"{tag}_rank{r}.npz")) for r in range(2)
        ]
        errs: Dict[str, float] = {}
        for key, want in ref.items():
            if key[:2] in ("dw", "db"):
                got = sum(r[key] for r in ranks)
            elif key.startswith("running"):
                got = ranks[0][key]
                errs[f"{key}_ranks"] = float(np.abs(ranks[0][key] - ranks[1][key]).max())
            else:
                got = np.concatenate([r[key] for r in ranks])
            errs[key] = float(np.abs(np.asarray(got) - want).max())
        errs["num_batches_tracked"] = float(min(int(r["num_batches_tracked"]) for r in ranks))
        figures[tag] = errs
    return figures


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="SyncBatchNorm under msrun vs torch BatchNorm2d")
    parser.add_argument("--out", type=Path, default=Path("sbn_out"))
    parser.add_argument("--compare", action="store_true", help="compare the run in --out")
    parser.add_argument("--atol", type=float, default=1e-5)
    args = parser.parse_args(argv)
    if not args.compare:
        run_rank(args.out)
        return 0
    figures = compare(args.out)
    print(json.dumps(figures, indent=2))
    runs = [figures[tag] for tag, _, _ in RUNS]
    worst = max(
        v for m in runs + [figures["train"]] for k, v in m.items() if k != "num_batches_tracked"
    )
    ok = worst <= args.atol and all(m["num_batches_tracked"] == STEPS for m in runs)
    print("PASS" if ok else "FAIL", f"max abs diff {worst:.3g}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
