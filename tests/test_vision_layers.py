"""The random layers of mscompat.vision checked by their properties (PyTorch's random stream
is not MindSpore's, so their masks cannot be compared with torchvision's), and the state-dict
names of the layers with weights. The deterministic cases are in the op database."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import mindspore as ms
import numpy as np
import pytest
from mindspore import ops

from mscompat.vision import (
    FrozenBatchNorm2d,
    SqueezeExcitation,
    StochasticDepth,
    drop_block2d,
    drop_block3d,
    stochastic_depth,
)


def _windows_zero(dropped: np.ndarray, k: int) -> np.ndarray:
    """For each pixel, whether some k x k window (inside the map) holding it is all dropped."""
    h, w = dropped.shape
    covered = np.zeros_like(dropped)
    for i in range(h - k + 1):
        for j in range(w - k + 1):
            if dropped[i : i + k, j : j + k].all():
                covered[i : i + k, j : j + k] = True
    return covered


def test_drop_block2d_blocks_fraction_and_scale():
    x = ops.ones((4, 8, 16, 16), ms.float32)
    p, k = 0.2, 3
    out = drop_block2d(x, p, k).asnumpy()
    dropped = out == 0
    kept = ~dropped
    # rescaling: every kept value is numel / (eps + kept count)
    scale = out.size / (1e-6 + kept.sum())
    np.testing.assert_allclose(out[kept], scale, rtol=1e-6)
    # block structure: each dropped pixel lies in a dropped k x k block (the seeds are drawn in
    # the valid region, so their blocks are whole inside the map)
    for n in range(2):
        for c in range(4):
            assert (_windows_zero(dropped[n, c], k) == dropped[n, c]).all()
    # the law: seeds ~ Bernoulli(gamma) over (H-k+1)^2 positions; P(pixel kept) is
    # (1 - gamma) ** (number of seed positions whose block covers it)
    gamma = p * 16 * 16 / (k * k * 14 * 14)
    cover = np.zeros((16, 16))
    for i in range(14):
        for j in range(14):
            cover[i : i + k, j : j + k] += 1
    expected = ((1 - gamma) ** cover).mean()
    assert abs(kept.mean() - expected) < 0.03, (kept.mean(), expected)


def test_drop_block3d_fraction_and_identity():
    x = ops.ones((2, 4, 8, 8, 8), ms.float32)
    assert drop_block3d(x, 0.3, 3, training=False) is x
    assert drop_block3d(x, 0.0, 3) is x
    out = drop_block3d(x, 0.3, 3).asnumpy()
    kept = out != 0
    assert 0.5 < kept.mean() < 0.95
    np.testing.assert_allclose(out[kept], out.size / (1e-6 + kept.sum()), rtol=1e-6)


def _dropped(v):
    out = drop_block2d(v, 0.3, 3)
    return out.sum(), out


def test_drop_block_graph_mode_gradient_is_the_mask_times_the_scale():
    x = ops.ones((2, 3, 9, 9), ms.float32)
    (_, out), grad = ms.jit(ms.value_and_grad(_dropped, has_aux=True))(x)
    out, grad = out.asnumpy(), grad.asnumpy()
    assert (out == 0).any() and (out != 0).any()
    np.testing.assert_array_equal(grad, out)  # d(sum(x * m * s))/dx = m * s = out at x = 1


@pytest.mark.parametrize("mode", ["row", "batch"])
def test_stochastic_depth_rows_and_scale(mode):
    x = ops.ones((4000, 3), ms.float32)
    out = stochastic_depth(x, 0.25, mode).asnumpy()
    values = set(np.unique(out).tolist())
    assert values <= {0.0, np.float32(1 / 0.75)}
    if mode == "row":
        assert (out == out[:, :1]).all()  # whole rows
        assert abs((out[:, 0] != 0).mean() - 0.75) < 0.03
    else:
        assert len(values) == 1  # all or nothing


def test_stochastic_depth_cell_mode():
    cell = StochasticDepth(0.5, "row")
    x = ops.ones((64, 2), ms.float32)
    assert (cell(x).asnumpy() == 1).all()  # a MindSpore Cell starts in inference mode
    cell.set_train()
    assert (cell(x).asnumpy() == 0).any()


def test_fixed_seed_repeats_the_masks():
    """ms.set_seed at the start of a process: the same masks in two runs."""
    code = textwrap.dedent(
        """
        import mindspore as ms
        from mscompat.vision import drop_block2d, stochastic_depth
        ms.set_seed(7)
        x = ms.ops.ones((2, 3, 8, 8), ms.float32)
        a = drop_block2d(x, 0.3, 3).asnumpy()
        b = stochastic_depth(x, 0.5, "row").asnumpy()
        print((a != 0).astype(int).tobytes().hex(), (b[:, 0, 0, 0] != 0).tolist())
        """
    )
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        for _ in range(2)
    ]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr[-2000:]
    assert runs[0].stdout.strip().splitlines()[-1] == runs[1].stdout.strip().splitlines()[-1]


def test_frozen_batch_norm_loads_a_torch_state_dict_by_name():
    torch = pytest.importorskip("torch")
    from mscompat.testing.references.torchvision_ops import FrozenBatchNorm2d as TorchFrozen

    rng = np.random.default_rng(0)
    ref = TorchFrozen(3)
    with torch.no_grad():
        for b in ref.buffers():
            b.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, 3).astype(np.float32)))
    state = {k: ms.Parameter(ms.Tensor(v.numpy()), name=k) for k, v in ref.state_dict().items()}
    state["num_batches_tracked"] = ms.Parameter(ms.Tensor(0, ms.int64), name="nbt")
    cell = FrozenBatchNorm2d(3)
    not_loaded, _ = ms.load_param_into_net(cell, state)
    assert not not_loaded
    x = rng.standard_normal((2, 3, 4, 4)).astype(np.float32)
    np.testing.assert_allclose(
        cell(ms.Tensor(x)).asnumpy(), ref(torch.from_numpy(x)).numpy(), rtol=1e-6, atol=1e-6
    )
    assert all(not p.requires_grad for p in cell.get_parameters())


def test_squeeze_excitation_names_match_torchvision():
    se = SqueezeExcitation(8, 2)
    names = [p.name for p in se.get_parameters()]
    assert names == ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
