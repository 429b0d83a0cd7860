"""``SyncBatchNorm``: ``convert_sync_batchnorm``, evaluation as PyTorch's, the empty-rank error,
and (with ``MSCOMPAT_DIST=1``: 40-50 s measured) 2 CPU workers under ``msrun`` against PyTorch's
``BatchNorm2d`` on the whole batch. The single-process forward and gradients are in the op
database (``layers.SyncBatchNorm``, ``layers.sync_batch_norm``)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from mindspore import Tensor, nn

from mscompat.layers import BatchNorm1d, BatchNorm2d, SyncBatchNorm, sync_batch_norm
from mscompat.layers import sync_norm as sbn

ROOT = Path(__file__).resolve().parents[1]


class _Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(4, 3), BatchNorm1d(3, momentum=None)])
        self.ms_bn = nn.BatchNorm2d(2, momentum=0.7)  # MindSpore's: PyTorch's momentum 0.3
        self.extra = nn.CellList([nn.ReLU(), BatchNorm2d(2, affine=False)])


def test_convert_sync_batchnorm_keeps_values_names_and_mode():
    net = _Net()
    net.body[1].weight.set_data(Tensor(np.array([1.0, 2.0, 3.0], np.float32)))
    net.body[1].running_var.set_data(Tensor(np.array([4.0, 5.0, 6.0], np.float32)))
    net.ms_bn.gamma.set_data(Tensor(np.array([7.0, 8.0], np.float32)))
    net.ms_bn.moving_mean.set_data(Tensor(np.array([0.5, -0.5], np.float32)))
    net.extra[1].set_train(False)
    net.ms_bn.set_train(True)  # MindSpore Cells start in evaluation, PyTorch modules in training
    out = SyncBatchNorm.convert_sync_batchnorm(net, "group_a")
    assert out is net
    body, ms_bn, plain = net.body[1], net.ms_bn, net.extra[1]
    assert [type(c) for c in (body, ms_bn, plain)] == [SyncBatchNorm] * 3
    assert type(net.body[0]) is nn.Dense and type(net.extra[0]) is nn.ReLU
    assert net.body.cell_list[1] is body  # SequentialCell's construct list is updated
    np.testing.assert_array_equal(body.weight.asnumpy(), [1, 2, 3])
    np.testing.assert_array_equal(body.running_var.asnumpy(), [4, 5, 6])
    np.testing.assert_array_equal(ms_bn.weight.asnumpy(), [7, 8])
    np.testing.assert_array_equal(ms_bn.running_mean.asnumpy(), [0.5, -0.5])
    assert body.momentum is None and ms_bn.momentum == pytest.approx(0.3)
    assert plain.weight is None and plain.affine is False and not plain.training
    assert body.process_group == "group_a" and ms_bn.training
    names = sorted(p.name for p in net.get_parameters())
    assert "ms_bn.running_var" in names and "body.1.weight" in names
    assert "extra.1.running_mean" in names and not [n for n in names if "gamma" in n]


def test_convert_sync_batchnorm_of_a_batch_norm_returns_a_new_cell():
    bn = BatchNorm2d(3, eps=0.1, bias=False)
    new = SyncBatchNorm.convert_sync_batchnorm(bn)
    assert isinstance(new, SyncBatchNorm) and new is not bn
    assert new.eps == 0.1 and new.bias is None and new.weight is not None
    with pytest.raises(TypeError, match="module must be"):
        SyncBatchNorm.convert_sync_batchnorm(torch.nn.BatchNorm2d(3))
    with pytest.raises(TypeError, match="process_group"):
        SyncBatchNorm.convert_sync_batchnorm(bn, 3)


def test_eval_and_untracked_as_pytorch():
    x = np.random.default_rng(0).normal(1.0, 2.0, (4, 3, 5)).astype(np.float32)
    for tracked in (True, False):
        ours = SyncBatchNorm(3, track_running_stats=tracked)
        theirs = torch.nn.SyncBatchNorm(3, track_running_stats=tracked)
        ours(Tensor(x))  # one training step, then eval
        theirs(torch.from_numpy(x))
        ours.set_train(False)
        theirs.eval()
        got, want = ours(Tensor(x * 0.5)).asnumpy(), theirs(torch.from_numpy(x * 0.5))
        np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_an_empty_rank_raises_before_any_collective(monkeypatch):
    # As if under msrun with 2 ranks: the empty rank must fail loudly, not desynchronise.
    monkeypatch.setattr(sbn, "_group_of", lambda group: ("fake_group", 2))
    x = Tensor(np.zeros((0, 3, 2), np.float32))
    with pytest.raises(ValueError, match="at least one sample"):
        sync_batch_norm(x, None, None, training=True)
    y = sync_batch_norm(x, Tensor(np.zeros(3, np.float32)), Tensor(np.ones(3, np.float32)))
    assert y.shape == (0, 3, 2)  # evaluation does not synchronise


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.skipif(
    os.environ.get("MSCOMPAT_DIST") != "1",
    reason="2 msrun CPU workers take 40-50 s here: set MSCOMPAT_DIST=1 to run",
)
def test_two_workers_match_pytorch_on_the_whole_batch(tmp_path):
    bin_dir = Path(sys.executable).parent
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    msrun = shutil.which("msrun", path=path)
    if msrun is None:
        pytest.skip("msrun (MindSpore's launcher) is not installed next to this python")
    env = dict(os.environ, PATH=path)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    script = str(ROOT / "examples" / "dist_sync_batch_norm.py")
    cmd = [
        msrun, "--worker_num=2", "--local_worker_num=2", f"--master_port={_free_port()}",
        "--join=True", f"--log_dir={tmp_path / 'logs'}", script, "--out", str(tmp_path),
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    logs = "".join(p.read_text()[-2000:] for p in sorted((tmp_path / "logs").glob("worker_*.log")))
    assert proc.returncode == 0, proc.stdout[-2000:] + logs
    sys.path.insert(0, str(ROOT))
    try:
        from examples import dist_sync_batch_norm as dist
    finally:
        sys.path.remove(str(ROOT))
    figures = dist.compare(tmp_path)
    assert figures["unsynced_y0"] > 0.1  # the check sees a missing synchronisation
    assert max(figures["train"].values()) <= 1e-5, figures["train"]
    for tag, _, _ in dist.RUNS:
        run = figures[tag]
        assert run.pop("num_batches_tracked") == dist.STEPS
        assert max(run.values()) <= 1e-5, (tag, run)
        assert run["running_mean_ranks"] == run["running_var_ranks"] == 0.0
