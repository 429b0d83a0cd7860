"""Train the PyTorch FCOS and its MindSpore port side by side and prove the port.

From the repository root::

    python -m examples.fcos_port.train --steps 100 --out fcos_port_out

1. ``convert_weights``: the PyTorch model's seeded random weights (and frozen statistics) into
   the MindSpore Cell; every tensor must load.
2. ``compare_layers`` at step 0: every layer's output and every parameter's gradient within
   float32 tolerance.
3. ``steps`` SGD steps of both (MindSpore in graph mode) on the same seeded batches; the
   per-step losses' maximum relative deviation must be ``<= --max-rel`` (1e-3); CSV logs, the
   deviation table and the plot (``compare_losses``) go to ``--out``.
4. The trained models' detections after ``batched_nms``: same kept boxes and labels, scores
   and coordinates within tolerance.

Exits 1 if a check fails; ``summary.json`` holds the measured figures.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

__all__ = ["compare_detections", "main", "run", "torch_noise_floor"]


def compare_detections(
    want: List[Dict[str, np.ndarray]],
    got: List[Dict[str, np.ndarray]],
    box_atol: float = 0.05,
    score_atol: float = 1e-4,
) -> Dict[str, Any]:
    """Per image, pair each PyTorch detection with an unpaired MindSpore one of the same label
    whose box and score are within ``box_atol`` (pixels) and ``score_atol``; ``equal`` when
    every detection of both sides is paired. Pairing, not position: scores equal to float32
    rounding may come out of the sort in either order."""
    equal = len(want) == len(got)
    box_err = score_err = 0.0
    kept = unpaired = 0
    for w, g in zip(want, got):
        free = list(range(len(g["labels"])))
        kept += len(w["labels"])
        for i in range(len(w["labels"])):
            for j in free:
                db = float(np.abs(w["boxes"][i] - g["boxes"][j]).max())
                ds = float(abs(w["scores"][i] - g["scores"][j]))
                if w["labels"][i] == g["labels"][j] and db <= box_atol and ds <= score_atol:
                    free.remove(j)
                    box_err, score_err = max(box_err, db), max(score_err, ds)
                    break
            else:
                unpaired += 1
        unpaired += len(free)
    return {
        "equal": equal and unpaired == 0,
        "kept": kept,
        "unpaired": unpaired,
        "max_box_err": box_err,
        "max_score_err": score_err,
        "box_atol": box_atol,
        "score_atol": score_atol,
    }


def torch_noise_floor(steps: int, batches: List[Any], lr: float) -> float:
    """The control: PyTorch against itself, every initial weight moved up by one float32 ulp.
    Training amplifies rounding differences; a port's curve can only be held to a bound well
    above this one (at a learning rate where training is chaotic it is not small)."""
    import torch

    from examples.fcos_port import torch_fcos
    from mscompat.port import compare_losses

    ref = torch_fcos.make_model(seed=0)
    moved = torch_fcos.make_model(seed=0)
    with torch.no_grad():
        for p in moved.parameters():
            up = np.nextafter(p.numpy(), np.float32(np.inf))
            p.copy_(torch.from_numpy(np.asarray(up, np.float32)))
    a = torch_fcos.train(ref, steps, batches, lr)
    b = torch_fcos.train(moved, steps, batches, lr)
    return compare_losses(a, b).max_rel()


def backends(images: np.ndarray) -> Dict[str, str]:
    """Which backend of each mscompat op with kernels the port calls runs on these inputs
    (:func:`mscompat.custom_ops.which`): the port proves mscompat's drop-ins inside a model."""
    import mindspore as ms

    import examples.fcos_port.ms_fcos  # noqa: F401 - imports (registers) the ops it uses
    from examples.fcos_port.data import NUM_CLASSES, STRIDES
    from mscompat.custom_ops import which

    n = images.shape[0]
    points = sum((images.shape[-1] // s) ** 2 for s in STRIDES)
    cls = ms.Tensor(np.zeros((n * points, NUM_CLASSES), np.float32))
    side = images.shape[-1] // STRIDES[-1]
    top = ms.Tensor(np.zeros((n, 16, side, side), np.float32))  # the FPN's top map
    boxes = ms.Tensor(np.tile(np.array([[0.0, 0.0, 8.0, 8.0]], np.float32), (50, 1)))
    scores = ms.Tensor(np.linspace(0, 1, 50).astype(np.float32))
    calls = {
        "losses.sigmoid_focal_loss": (cls, cls),
        "shape.interpolate": (top, None, 2),
        "vision.batched_nms": (boxes, scores, ms.Tensor(np.zeros(50, np.int64)), 0.5),
    }
    return {op: which(op, *args).backend for op, args in calls.items()}


def run(*args: Any, **kwargs: Any) -> Dict[str, Any]:
    """The whole check (:func:`_run`) with PyTorch on one thread (a tiny model: more threads
    only add overhead on a small CPU), PyTorch's thread count restored after (other code in the
    process computes with it: PyTorch's kernels round differently on one thread and on several).
    """
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _run(*args, **kwargs)
    finally:
        torch.set_num_threads(threads)


def _run(
    steps: int = 100,
    out: Optional[Path] = None,
    lr: Optional[float] = None,
    max_rel: float = 1e-3,
    verbose: bool = True,
    score_thr: float = 0.05,
) -> Dict[str, Any]:
    """Everything above; returns the figures (and writes them to ``out`` when given).
    ``score_thr``: the detections' score threshold (an untrained model scores below 0.05)."""

    from examples.fcos_port import ms_fcos, torch_fcos
    from examples.fcos_port.data import LR, train_batch
    from mscompat.port import compare_layers, compare_losses, convert_weights, save_checkpoint

    say = print if verbose else (lambda *_: None)
    lr = LR if lr is None else lr
    batches = [train_batch(s) for s in range(steps)]
    torch_model = torch_fcos.make_model(seed=0)
    cell = ms_fcos.FCOS()
    table = convert_weights(torch_model, cell)
    say(f"convert_weights: {table.counts()}")
    if out is not None:  # the converted start, for other runs (dist_train.py --ckpt)
        Path(out).mkdir(parents=True, exist_ok=True)
        save_checkpoint(cell, Path(out) / "fcos_init.ckpt")
    if not table.ok:
        say(table)
    layers = compare_layers(torch_model, cell, (batches[0][0],))
    say(layers.render())
    layer_abs = {
        kind: max((r.max_abs for r in layers.rows if r.kind == kind), default=0.0)
        for kind in ("output", "grad")
    }

    t0 = time.perf_counter()
    ms_losses = ms_fcos.train(cell, steps, batches, lr)
    ms_time = time.perf_counter() - t0
    t0 = time.perf_counter()
    torch_losses = torch_fcos.train(torch_model, steps, batches, lr)
    torch_time = time.perf_counter() - t0
    curves = compare_losses(torch_losses, ms_losses)
    noise = torch_noise_floor(steps, batches, lr)
    say(
        f"PyTorch against itself, initial weights moved by one float32 ulp: max rel dev {noise:.3g}"
    )
    say(curves.summary())

    images = batches[0][0]
    det = compare_detections(
        torch_fcos.predict(torch_model, images, score_thr=score_thr),
        ms_fcos.predict(cell, images, score_thr=score_thr),
    )
    say(f"detections after batched_nms: {det}")
    params = {n: p.detach().numpy() for n, p in torch_model.named_parameters()}
    param_err = max(
        float(np.abs(params[p.name] - p.asnumpy()).max() / max(np.abs(params[p.name]).max(), 1e-12))
        for p in cell.trainable_params()
    )
    figures: Dict[str, Any] = {
        "mscompat_backends": backends(images),
        "steps": steps,
        "lr": lr,
        "weights": table.counts(),
        "weights_ok": table.ok,
        "layers_ok": layers.ok,
        "layers_max_abs": layer_abs,
        "layers_first_failure": None if layers.first_failure is None else layers.first_failure.path,
        "mindspore_losses": ms_losses,
        "loss_first": torch_losses[0],
        "loss_last": torch_losses[-1],
        "loss_max_rel": curves.max_rel(),
        "torch_self_max_rel": noise,
        "loss_max_abs": curves.max_abs(),
        "params_max_rel_after": param_err,
        "detections": det,
        "mindspore_train_s": round(ms_time, 2),
        "torch_train_s": round(torch_time, 2),
    }
    figures["ok"] = bool(
        table.ok and layers.ok and figures["loss_max_rel"] <= max_rel and det["equal"]
    )
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        for name, losses in (("torch", torch_losses), ("mindspore", ms_losses)):
            with open(out / f"{name}.csv", "w") as f:
                f.write("step,loss\n")
                f.writelines(f"{i},{v!r}\n" for i, v in enumerate(losses))
        curves.to_csv(out / "deviation.csv")
        np.savez(
            out / "mindspore_params.npz", **{p.name: p.asnumpy() for p in cell.trainable_params()}
        )
        try:
            figures["plot"] = str(curves.plot(out / "loss_curves.png"))
        except ImportError as err:  # matplotlib is the optional 'plot' extra
            say(f"no plot: {err}")
        (out / "layers.txt").write_text(layers.render() + "\n")
        (out / "summary.json").write_text(json.dumps(figures, indent=2) + "\n")
    say(json.dumps({k: v for k, v in figures.items() if k != "mindspore_losses"}, indent=2))
    return figures


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--lr", type=float, default=None)
    parser.add_argument("--out", type=Path, default=Path("fcos_port_out"))
    parser.add_argument("--max-rel", type=float, default=1e-3)
    args = parser.parse_args(argv)
    figures = run(args.steps, args.out, args.lr, args.max_rel)
    print("PASS" if figures["ok"] else "FAIL")
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
