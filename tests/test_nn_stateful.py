"""Stateful behaviour the op database does not compare: BatchNorm's running statistics and
step counter (PyNative and ``ms.jit``), eval mode, weight loading by PyTorch's names, and
fractional max pooling's own random samples."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mscompat import nn as mnn  # noqa: E402
from mscompat.port import convert_weights  # noqa: E402


def _steps(cell, module, shape, n=3, jit=False):
    rng = np.random.default_rng(0)
    run = ms.jit(cell.construct) if jit else cell
    for _ in range(n):
        x = (rng.standard_normal(shape) * 2 + 1).astype(np.float32)
        got = run(ms.Tensor(x)).asnumpy()
        want = module(torch.from_numpy(x)).detach().numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("momentum", [0.3, None])
@pytest.mark.parametrize("jit", [False, True])
def test_batch_norm_running_statistics(momentum, jit):
    cell, module = mnn.BatchNorm2d(3, momentum=momentum), torch.nn.BatchNorm2d(3, momentum=momentum)
    _steps(cell, module, (4, 3, 2, 2), jit=jit)
    np.testing.assert_allclose(cell.running_mean.asnumpy(), module.running_mean.numpy(), atol=1e-6)
    np.testing.assert_allclose(cell.running_var.asnumpy(), module.running_var.numpy(), atol=1e-6)
    assert int(cell.num_batches_tracked.asnumpy()) == int(module.num_batches_tracked) == 3
    cell.set_train(False)
    module.eval()
    _steps(cell, module, (4, 3, 2, 2), n=1, jit=jit)
    assert int(cell.num_batches_tracked.asnumpy()) == 3  # eval does not count


def test_batch_norm_functional_updates_in_place():
    x = np.random.default_rng(1).standard_normal((5, 2, 3)).astype(np.float32)
    rm = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), "rm")
    rv = ms.Parameter(ms.Tensor(np.ones(2, np.float32)), "rv")
    trm, trv = torch.zeros(2), torch.ones(2)
    mnn.functional.batch_norm(ms.Tensor(x), rm, rv, training=True, momentum=0.2)
    torch.nn.functional.batch_norm(torch.from_numpy(x), trm, trv, training=True, momentum=0.2)
    np.testing.assert_allclose(rm.asnumpy(), trm.numpy(), atol=1e-6)
    np.testing.assert_allclose(rv.asnumpy(), trv.numpy(), atol=1e-6)


def test_convert_weights_keeps_pytorch_names():
    module = torch.nn.Sequential(
        torch.nn.LayerNorm(4), torch.nn.BatchNorm1d(4), torch.nn.GroupNorm(2, 4)
    )
    for p in module.parameters():
        torch.nn.init.normal_(p)
    module[1].running_mean.normal_()
    module[1].num_batches_tracked.fill_(7)
    cell = ms.nn.SequentialCell([mnn.LayerNorm(4), mnn.BatchNorm1d(4), mnn.GroupNorm(2, 4)])
    table = convert_weights(module, cell)
    assert table.ok and table.counts() == {"loaded": 9}, table.render()
    assert int(cell[1].num_batches_tracked.asnumpy()) == 7
    x = np.random.default_rng(2).standard_normal((3, 4)).astype(np.float32)
    module.eval()
    cell.set_train(False)
    want = module(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(cell(ms.Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_fractional_max_pool_draws_valid_windows():
    x = ms.Tensor(np.random.default_rng(3).standard_normal((2, 3, 9, 8)).astype(np.float32))
    values, indices = mnn.functional.fractional_max_pool2d(x, 2, (4, 5), return_indices=True)
    flat = x.asnumpy().reshape(2, 3, -1)
    picked = np.take_along_axis(flat, indices.asnumpy().reshape(2, 3, -1), 2)
    np.testing.assert_array_equal(picked.reshape(values.shape), values.asnumpy())

    # each plane's windows are PyTorch's for some samples u in [0, 1): one u per distinct
    # sequence of window starts, tried in PyTorch (its sample order is W, H)
    def candidates(length, kernel, out):
        alpha = (length - kernel) / (out - 1)
        seqs = {}
        for u in (np.arange(2048) + 0.5) / 2048:
            seqs.setdefault(tuple(int((i + u) * alpha) - int(u * alpha) for i in range(out)), u)
        return list(seqs.values())

    matched = np.zeros((2, 3), bool)
    xt = torch.from_numpy(x.asnumpy())
    for u_h in candidates(9, 2, 4):
        for u_w in candidates(8, 2, 5):
            u = torch.tensor([u_w, u_h], dtype=torch.float32).expand(2, 3, 2).contiguous()
            want, want_idx = torch.nn.functional.fractional_max_pool2d(
                xt, 2, (4, 5), return_indices=True, _random_samples=u
            )
            same = (want.numpy() == values.asnumpy()) & (want_idx.numpy() == indices.asnumpy())
            matched |= same.reshape(2, 3, -1).all(-1)
    assert matched.all()
