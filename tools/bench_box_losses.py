"""Side-by-side timing of the box and box-regression losses: mscompat in graph mode (``ms.jit``)
against PyTorch eager on the same 10k float32 box pairs (the regression losses: 10k x 4
deltas), forward and forward+backward, per backend.

Run from the repository root (``PYTHONPATH=$PWD python tools/bench_box_losses.py``). The
PyTorch side is MMDetection's code transcribed in plain torch
(``mscompat.testing.references.mmdet_box``) and, where importable (``/work/tvenv``), the real
``torchvision.ops`` losses (else the plain-torch transcription in
``mscompat.testing.references.torchvision_ops``). The rows marked "w+af" make MMDetection's
usual call: an (n, 4) weight and a number ``avg_factor`` (the regression Cells and GIoULoss
with ``loss_weight`` 2 there). Each row times the two sides in alternating
blocks (``--rounds`` pairs of blocks of ``--repeat`` calls, the first call of each block
untimed) and reports, per block, the ratio graph / torch of the fastest calls (the
uncontended time: on the shared 2-core machine the medians of both sides swing 10-20x with the
load), its median over the blocks with min and max, and the median ratio of the medians.
"""

from __future__ import annotations

import argparse
import statistics
import time
from typing import Any, Callable, Dict, List, Sequence, Tuple

import mindspore as ms
import numpy as np
import torch

from mscompat import losses, vision
from mscompat.custom_ops import use_backend
from mscompat.testing.bench import settle
from mscompat.testing.references import mmdet_box

try:  # the real torchvision ops (its own venv); the suite's transcription otherwise
    import torchvision.ops as tv_ops

    TV_SOURCE = "torchvision " + __import__("torchvision").__version__
except ImportError:  # pragma: no cover - depends on the environment
    from mscompat.testing.references import torchvision_ops as tv_ops  # type: ignore[no-redef]

    TV_SOURCE = "plain-torch transcription"

Pair = Tuple[Callable[..., Any], Callable[..., Any]]


def _boxes(n: int) -> Tuple[np.ndarray, ...]:
    rng = np.random.default_rng(0)
    xy = rng.uniform(0, 100, (n, 2))
    t = np.concatenate([xy, xy + rng.uniform(1, 30, (n, 2))], 1).astype(np.float32)
    p = (t + rng.uniform(-3, 3, t.shape)).astype(np.float32)
    return p, t, rng.uniform(size=(n, 4)).astype(np.float32)


def _deltas(n: int) -> Tuple[np.ndarray, ...]:
    rng = np.random.default_rng(1)
    p, t = (rng.standard_normal((n, 4)).astype(np.float32) for _ in range(2))
    return p, t, rng.uniform(size=(n, 4)).astype(np.float32)


_AF = 123.0  # avg_factor of the "w+af" rows
_GIOU_CELL = losses.GIoULoss()
_GIOU_CELL2 = losses.GIoULoss(loss_weight=2.0)
_SMOOTH_CELL = losses.SmoothL1Loss(loss_weight=2.0)
_L1_CELL = losses.L1Loss(loss_weight=2.0)
_BALANCED_CELL = losses.BalancedL1Loss(loss_weight=2.0)


# mscompat sides: plain functions (ms.jit parses their source; no lambdas)
def _ms_giou_cell(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return _GIOU_CELL(p, t)


def _ms_iou(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return losses.iou_loss(p, t)


def _ms_diou(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return losses.diou_loss(p, t)


def _ms_ciou(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return losses.ciou_loss(p, t)


def _ms_tv_giou(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return vision.generalized_box_iou_loss(p, t, "mean")


def _ms_tv_diou(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return vision.distance_box_iou_loss(p, t, "mean")


def _ms_tv_ciou(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return vision.complete_box_iou_loss(p, t, "mean")


def _ms_giou_cell_waf(p: ms.Tensor, t: ms.Tensor, w: ms.Tensor) -> ms.Tensor:
    return _GIOU_CELL2(p, t, w, avg_factor=_AF)


def _ms_smooth_l1(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return losses.smooth_l1_loss(p, t)


def _ms_l1(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return losses.l1_loss(p, t)


def _ms_balanced(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return losses.balanced_l1_loss(p, t)


def _ms_smooth_cell(p: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
    return _SMOOTH_CELL(p, t)


def _ms_smooth_cell_waf(p: ms.Tensor, t: ms.Tensor, w: ms.Tensor) -> ms.Tensor:
    return _SMOOTH_CELL(p, t, w, avg_factor=_AF)


def _ms_l1_cell_waf(p: ms.Tensor, t: ms.Tensor, w: ms.Tensor) -> ms.Tensor:
    return _L1_CELL(p, t, w, avg_factor=_AF)


def _ms_balanced_cell_waf(p: ms.Tensor, t: ms.Tensor, w: ms.Tensor) -> ms.Tensor:
    return _BALANCED_CELL(p, t, w, avg_factor=_AF)


def _regression_rows() -> Dict[str, Tuple[str, Pair]]:
    mean = {"reduction": "mean"}
    smooth, l1, bal = (
        c(loss_weight=2.0)
        for c in (mmdet_box.SmoothL1Loss, mmdet_box.L1Loss, mmdet_box.BalancedL1Loss)
    )
    return {
        "mmdet smooth_l1_loss": (
            "losses.smooth_l1_loss",
            (_ms_smooth_l1, lambda p, t: mmdet_box.smooth_l1_loss(p, t, **mean)),
        ),
        "mmdet l1_loss": ("losses.l1_loss", (_ms_l1, lambda p, t: mmdet_box.l1_loss(p, t, **mean))),
        "mmdet balanced_l1_loss": (
            "losses.balanced_l1_loss",
            (_ms_balanced, lambda p, t: mmdet_box.balanced_l1_loss(p, t, **mean)),
        ),
        "mmdet SmoothL1Loss": (
            "losses.smooth_l1_loss",
            (_ms_smooth_cell, lambda p, t: smooth(p, t)),
        ),
        "mmdet SmoothL1Loss w+af": (
            "losses.smooth_l1_loss",
            (_ms_smooth_cell_waf, lambda p, t, w: smooth(p, t, w, avg_factor=_AF)),
        ),
        "mmdet L1Loss w+af": (
            "losses.l1_loss",
            (_ms_l1_cell_waf, lambda p, t, w: l1(p, t, w, avg_factor=_AF)),
        ),
        "mmdet BalancedL1Loss w+af": (
            "losses.balanced_l1_loss",
            (_ms_balanced_cell_waf, lambda p, t, w: bal(p, t, w, avg_factor=_AF)),
        ),
    }


def _rows() -> Dict[str, Tuple[str, Pair]]:
    """name -> (registry op, (mscompat fn, torch fn)), each ``(pred, target[, weight]) -> 0-d
    loss`` (the regression rows' names start with the loss of :func:`_regression_rows`)."""
    mean = {"reduction": "mean"}
    giou = mmdet_box.GIoULoss()
    giou2 = mmdet_box.GIoULoss(loss_weight=2.0)
    return {
        "mmdet GIoULoss": ("losses.giou_loss", (_ms_giou_cell, lambda p, t: giou(p, t))),
        "mmdet GIoULoss w+af": (
            "losses.giou_loss",
            (_ms_giou_cell_waf, lambda p, t, w: giou2(p, t, w, avg_factor=_AF)),
        ),
        "mmdet iou_loss (log)": (
            "losses.iou_loss",
            (_ms_iou, lambda p, t: mmdet_box.iou_loss(p, t, **mean)),
        ),
        "mmdet diou_loss": (
            "losses.diou_loss",
            (_ms_diou, lambda p, t: mmdet_box.diou_loss(p, t, **mean)),
        ),
        "mmdet ciou_loss": (
            "losses.ciou_loss",
            (_ms_ciou, lambda p, t: mmdet_box.ciou_loss(p, t, **mean)),
        ),
        "tv generalized_box_iou_loss": (
            "vision.generalized_box_iou_loss",
            (_ms_tv_giou, lambda p, t: tv_ops.generalized_box_iou_loss(p, t, "mean")),
        ),
        "tv distance_box_iou_loss": (
            "vision.distance_box_iou_loss",
            (_ms_tv_diou, lambda p, t: tv_ops.distance_box_iou_loss(p, t, "mean")),
        ),
        "tv complete_box_iou_loss": (
            "vision.complete_box_iou_loss",
            (_ms_tv_ciou, lambda p, t: tv_ops.complete_box_iou_loss(p, t, "mean")),
        ),
        **_regression_rows(),
    }


def _block(fn: Callable[[], Any], repeat: int) -> Tuple[float, float]:
    """Median and minimum of ``repeat`` timed calls (after :func:`settle`, which lets the other
    side's threads sleep, and an untimed call: compilation in the first block, thread wake-up)."""
    settle()
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def _compare(
    ms_fn: Callable[[], Any], torch_fn: Callable[[], Any], rounds: int, repeat: int
) -> Tuple[float, ...]:
    """Alternating blocks; per block the ratio of the minima (the uncontended time: on a shared
    machine the medians of both sides swing 10-20x with the load) and of the medians."""
    mins: List[Tuple[float, float]] = []
    medians: List[float] = []
    for _ in range(rounds):
        th_med, th_min = _block(torch_fn, repeat)
        ms_med, ms_min = _block(ms_fn, repeat)
        mins.append((th_min, ms_min))
        medians.append(ms_med / th_med)
    ratios = [m / t for t, m in mins]
    return (
        min(t for t, _ in mins) * 1e3,
        min(m for _, m in mins) * 1e3,
        statistics.median(ratios),
        min(ratios),
        max(ratios),
        statistics.median(medians),
    )


def _report(
    head: str, passes: Sequence[Tuple[str, Any, Any]], rounds: int, repeat: int
) -> List[str]:
    """Time each ``(pass name, mscompat call, torch call)`` with :func:`_compare` and print its
    line (``head``, then the figures); return the lines."""
    lines = []
    for label, mfn, tfn in passes:
        th_ms, g_ms, ratio, lo, hi, med = _compare(mfn, tfn, rounds, repeat)
        line = (
            f"{head} {label:17s} {th_ms:9.3f} {g_ms:9.3f} "
            f"{ratio:6.2f} [{lo:5.2f}, {hi:5.2f}] {med:10.2f}"
        )
        print(line, flush=True)
        lines.append(line)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--backends", default="aot,composite")
    parser.add_argument("--only", default="", help="substring of the row names to run")
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch.set_num_threads (default 1: at 10k boxes every torch op is below its "
        "parallel grain of 32768 elements, so extra threads only spin; next to MindSpore's "
        "threads on a 2-core machine they made torch's backward 10-400x slower)",
    )
    args = parser.parse_args()
    if args.torch_threads > 0:
        torch.set_num_threads(args.torch_threads)
    ms.set_context(mode=ms.PYNATIVE_MODE, device_target="CPU")
    inputs = {"boxes": _boxes(args.n), "deltas": _deltas(args.n)}
    print(
        f"{args.n} box pairs (regression: {args.n} x 4 deltas), float32; torch "
        f"{torch.__version__} ({torch.get_num_threads()} "
        f"threads), torchvision side: {TV_SOURCE}; times: the fastest call; ratio = graph / "
        f"torch eager of the fastest calls of a block, median [min, max] over {args.rounds} "
        f"alternating blocks of {args.repeat} calls; 'of medians': the median ratio of the "
        f"blocks' medians"
    )
    print(
        f"{'row':34s} {'backend':10s} {'pass':17s} {'torch ms':>9s} {'graph ms':>9s} "
        f"{'ratio':>6s} {'[min, max]':>14s} {'of medians':>10s}"
    )
    regression = _regression_rows()
    for name, (op, (ms_fn, th_fn)) in _rows().items():
        if args.only and args.only not in name:
            continue
        arrays = inputs["deltas" if name in regression else "boxes"]
        arrays = arrays[: 3 if "w+af" in name else 2]
        ms_args = [ms.Tensor(a) for a in arrays]
        for backend in args.backends.split(","):
            with use_backend(backend, op):
                fwd = ms.jit(ms_fn)
                grad = ms.jit(ms.value_and_grad(ms_fn, grad_position=(0, 1)))
                fwd(*ms_args).asnumpy()
                grad(*ms_args)[0].asnumpy()

            def th_fwd(f: Any = th_fn, arrays: Any = arrays) -> Any:
                with torch.no_grad():
                    return f(*(torch.from_numpy(a) for a in arrays))

            def th_both(f: Any = th_fn, arrays: Any = arrays) -> Any:
                x = torch.from_numpy(arrays[0]).requires_grad_()
                y = torch.from_numpy(arrays[1]).requires_grad_()
                loss = f(x, y, *(torch.from_numpy(a) for a in arrays[2:]))
                loss.backward()
                return loss

            def ms_fwd(f: Any = fwd, a: Any = ms_args) -> Any:
                return f(*a).asnumpy()

            def ms_both(f: Any = grad, a: Any = ms_args) -> Any:
                loss, (gp, gt) = f(*a)
                return gp.asnumpy(), gt.asnumpy()

            passes = (("forward", ms_fwd, th_fwd), ("forward+backward", ms_both, th_both))
            _report(f"{name:34s} {backend:10s}", passes, args.rounds, args.repeat)


if __name__ == "__main__":
    main()
