"""mscompat.port: weight conversion, layer-by-layer comparison and loss curves, on a small
convolutional model and its MindSpore port."""

from __future__ import annotations

import csv

import numpy as np
import pytest
import torch
from mindspore import nn

from mscompat.cli import main
from mscompat.port import (
    LayerReport,
    LayerRow,
    LossComparison,
    WeightRow,
    WeightTable,
    compare_layers,
    compare_losses,
    convert_weights,
    load_checkpoint,
    read_log,
    save_checkpoint,
    torch_to_mindspore_names,
)


class TorchNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = torch.nn.Sequential(
            torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.BatchNorm2d(4), torch.nn.GELU()
        )
        self.embed = torch.nn.Embedding(5, 4)
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x, idx):
        y = self.stem(x).mean((2, 3)) + self.embed(idx)
        return self.head(y)


class MsNet(nn.Cell):
    def __init__(self, approximate: bool = False) -> None:
        super().__init__()
        self.stem = nn.SequentialCell(
            [
                nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True),
                nn.BatchNorm2d(4),
                nn.GELU(approximate=approximate),
            ]
        )
        self.embed = nn.Embedding(5, 4)
        self.head = nn.Dense(4, 2)

    def construct(self, x, idx):
        y = self.stem(x).mean((2, 3)) + self.embed(idx)
        return self.head(y)


def _models(approximate: bool = False):
    torch.manual_seed(0)
    t = TorchNet().eval()
    with torch.no_grad():  # non-trivial BatchNorm statistics
        t.stem[1].running_mean.uniform_(-0.5, 0.5)
        t.stem[1].running_var.uniform_(0.5, 2.0)
    m = MsNet(approximate)
    m.set_train(False)
    return t, m


INPUTS = (
    np.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype(np.float32),
    np.array([1, 4], dtype=np.int64),
)


def test_weights_are_renamed_loaded_and_reported():
    t, m = _models()
    table = convert_weights(t, m)
    assert table.ok, table.render()
    rows = {r.torch_name: r for r in table.rows}
    assert rows["stem.1.weight"].ms_name == "stem.1.gamma"
    assert rows["stem.1.running_var"].ms_name == "stem.1.moving_variance"
    assert rows["embed.weight"].ms_name == "embed.embedding_table"
    assert rows["stem.1.num_batches_tracked"].status == "dropped"
    np.testing.assert_array_equal(m.stem[1].moving_mean.asnumpy(), t.stem[1].running_mean.numpy())
    # a bare state dict: BatchNorm recognised by its running_mean
    m2 = MsNet()
    assert convert_weights(t.state_dict(), m2).ok


def test_norm_prelu_and_conv1d_layouts_are_converted():
    """LayerNorm/GroupNorm -> gamma/beta, PReLU -> w, MindSpore's 4-D Conv1d weight (a
    reshape), mscompat's InstanceNorm2d keeping PyTorch's names; the converted layers agree."""
    from mscompat.layers import InstanceNorm2d

    torch.manual_seed(0)
    t = torch.nn.Sequential(
        torch.nn.Conv1d(3, 6, 3), torch.nn.GroupNorm(2, 6), torch.nn.PReLU(6),
        torch.nn.LayerNorm(4, eps=1e-7),
    )  # fmt: skip
    m = nn.SequentialCell([
        nn.Conv1d(3, 6, 3, pad_mode="valid", has_bias=True), nn.GroupNorm(2, 6), nn.PReLU(6),
        nn.LayerNorm((4,)),
    ])  # fmt: skip
    table = convert_weights(t, m)
    assert table.ok, table.render()
    rows = {r.torch_name: (r.ms_name, r.transform) for r in table.rows}
    assert rows["0.weight"] == ("0.weight", "reshape")
    assert rows["1.weight"] == ("1.gamma", "rename") and rows["2.weight"] == ("2.w", "rename")
    assert rows["3.bias"] == ("3.beta", "rename")
    x = np.random.default_rng(0).random((2, 3, 6), np.float32)
    report = compare_layers(t, m, (x,), atol=1e-4, rtol=1e-4)  # float32 gradient sums
    assert report.ok, report.render()
    t_in = torch.nn.Sequential(torch.nn.InstanceNorm2d(3, affine=True, track_running_stats=True))
    m_in = nn.SequentialCell([InstanceNorm2d(3, affine=True, track_running_stats=True)])
    rows = {r.torch_name: (r.ms_name, r.transform) for r in convert_weights(t_in, m_in).rows}
    assert rows["0.running_var"] == ("0.running_var", "copy")


def test_mismatches_are_reported_never_skipped():
    t, _ = _models()
    wrong = MsNet()
    wrong.head = nn.Dense(4, 3)  # another output size
    table = convert_weights(t, wrong)
    assert not table.ok
    status = {r.torch_name or r.ms_name: r.status for r in table.rows}
    assert status["head.weight"] == "shape mismatch"
    state = dict(t.state_dict())
    state["extra.weight"] = torch.zeros(2)
    del state["head.bias"]
    table = convert_weights(state, MsNet())
    status = {r.torch_name or r.ms_name: r.status for r in table.rows}
    assert status["extra.weight"] == "unmatched" and status["head.bias"] == "missing"
    assert "shape mismatch" in convert_weights(t, wrong).render()


def test_checkpoint_round_trip(tmp_path):
    t, m = _models()
    convert_weights(t, m)
    path = save_checkpoint(m, tmp_path / "port.ckpt")
    fresh = MsNet()
    assert load_checkpoint(fresh, path) == []
    np.testing.assert_array_equal(fresh.head.weight.asnumpy(), t.head.weight.detach().numpy())
    with pytest.raises(ValueError, match="path"):
        save_checkpoint(m, tmp_path / "port.bin")


def test_layers_and_gradients_match_after_conversion():
    t, m = _models()
    convert_weights(t, m)
    report = compare_layers(t, m, INPUTS)
    assert report.ok, report.render()
    paths = {(r.kind, r.path) for r in report.rows}
    assert {("output", "stem.0"), ("output", "stem.1"), ("output", "head")} <= paths
    assert {("grad", "stem.1.weight"), ("grad", "embed.weight"), ("grad", "head.bias")} <= paths


def test_the_first_wrong_layer_is_named():
    # mindspore.nn.GELU() defaults to the tanh approximation, torch's to the exact form
    t, m = _models(approximate=True)
    convert_weights(t, m)
    report = compare_layers(t, m, INPUTS, grads=False)
    assert not report.ok
    assert report.first_failure is not None and report.first_failure.path == "stem.2"
    assert "first past tolerance: output stem.2" in report.render()


def test_loss_curves_table_csv_plot_and_cli(tmp_path):
    ref = tmp_path / "torch.csv"
    port = tmp_path / "ms.csv"
    losses = [2.0, 1.5, 1.2, 1.0]
    for path, scale in ((ref, 1.0), (port, 1.0 + 2e-4)):
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["step", "loss", "grad_norm"])
            for s, loss in enumerate(losses):
                w.writerow([s, loss * scale, 10.0 / (s + 1)])
    c = compare_losses(ref, port)
    assert c.steps == 4 and c.max_rel() == pytest.approx(2e-4)
    assert c.max_rel("grad_norm") == 0.0
    with open(c.to_csv(tmp_path / "cmp.csv")) as f:
        rows = list(csv.reader(f))
    assert rows[0][:3] == ["step", "loss_torch", "loss_mindspore"] and len(rows) == 5
    png = c.plot(tmp_path / "cmp.png")
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["compare-losses", str(ref), str(port), "--max-rel", "1e-3"]) == 0
    assert main(["compare-losses", str(ref), str(port), "--max-rel", "1e-5"]) == 1
    with pytest.raises(ValueError, match="steps"):
        compare_losses([1.0, 2.0], [1.0])


def test_result_types_and_helpers(tmp_path):
    """The public result types are what the functions return; read_log reads a run's CSV and
    torch_to_mindspore_names gives the renames convert_weights tries."""
    t, m = _models()
    table = convert_weights(t, m)
    assert isinstance(table, WeightTable) and all(isinstance(r, WeightRow) for r in table.rows)
    report = compare_layers(t, m, INPUTS, grads=False)
    assert isinstance(report, LayerReport) and all(isinstance(r, LayerRow) for r in report.rows)
    names = torch_to_mindspore_names(["bn.weight", "bn.running_mean"])
    assert names["bn.weight"] == (["bn.gamma", "bn.weight"], "rename")
    log = tmp_path / "run.csv"
    log.write_text("step,loss\n0,2.0\n1,1.5\n", encoding="utf-8")
    assert isinstance(compare_losses(read_log(log), [2.0, 1.5]), LossComparison)
