"""The example port (examples/fcos_port), reduced: 10 SGD steps of the PyTorch FCOS and its
MindSpore port (graph mode) from the same converted weights; then the same MindSpore training
under ``msrun`` with 2 CPU workers, each on half of the global batch."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the examples are not part of the installed package
    sys.path.insert(0, str(ROOT))

from examples.fcos_port import dist_train, train  # noqa: E402

STEPS = 10


@pytest.fixture(scope="module")
def example_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("fcos_port")
    return out, train.run(steps=STEPS, out=out, verbose=False, score_thr=0.0)


def test_example_port_trains_alike(example_run):
    out, figures = example_run
    assert figures["weights"] == {"loaded": 40}
    assert figures["layers_ok"], figures["layers_first_failure"]
    assert figures["loss_max_rel"] <= 1e-3
    assert figures["detections"]["equal"], figures["detections"]
    assert figures["detections"]["kept"] == 4 * 20  # max_per_img kept in each image
    assert figures["ok"]
    losses = [float(line.split(",")[1]) for line in (out / "torch.csv").read_text().split()[1:]]
    assert len(losses) == STEPS and min(losses[STEPS // 2 :]) < losses[0]  # it learns
    assert (out / "loss_curves.png").stat().st_size > 0


def test_compare_detections_catches_a_difference():
    det = {
        "boxes": np.array([[0, 0, 10, 10]], np.float32),
        "scores": np.array([0.5], np.float32),
        "labels": np.array([1]),
    }
    assert train.compare_detections([det], [det])["equal"]
    other = dict(det, labels=np.array([2]))
    assert not train.compare_detections([det], [other])["equal"]
    moved = dict(det, boxes=det["boxes"] + 0.1)
    assert not train.compare_detections([det], [moved])["equal"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_msrun_data_parallel_matches_one_process(example_run, tmp_path):
    bin_dir = Path(sys.executable).parent
    msrun = shutil.which("msrun", path=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    if msrun is None:
        pytest.skip("msrun (MindSpore's launcher) is not installed next to this python")
    reference, _ = example_run  # the 1-process MindSpore run on the whole batch, same steps
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    cmd = [
        msrun, "--worker_num=2", "--local_worker_num=2", f"--master_port={_free_port()}",
        "--join=True", f"--log_dir={tmp_path / 'logs'}",
        str(ROOT / "examples" / "fcos_port" / "dist_train.py"),
        "--steps", str(STEPS), "--out", str(tmp_path),
        "--ckpt", str(reference / "fcos_init.ckpt"),
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    logs = "".join(p.read_text()[-2000:] for p in sorted((tmp_path / "logs").glob("worker_*.log")))
    assert proc.returncode == 0, proc.stdout[-2000:] + logs
    csv = tmp_path / "reference.csv"
    ms_losses = example_run[1]["mindspore_losses"]
    csv.write_text("step,loss\n" + "".join(f"{i},{v!r}\n" for i, v in enumerate(ms_losses)))
    figures = dist_train.compare(tmp_path, csv, reference / "mindspore_params.npz")
    assert figures["workers"] == 2 and figures["steps"] == STEPS
    assert figures["ranks_params_max_abs_diff"] == 0.0  # the ranks stay bitwise identical
    assert figures["ranks_loss_max_abs_diff"] == 0.0
    # the split global batch trains as the whole batch, up to the reduction order
    assert figures["loss_max_rel_vs_single"] <= 1e-5
    assert figures["params_max_rel_vs_single"] <= 1e-5
