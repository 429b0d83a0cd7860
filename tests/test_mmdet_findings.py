"""Cases found by ``tools/check_mmdet.py`` (MMDetection 3.3's own loss code against ours), kept
here against the plain-torch transcriptions so the suite catches them without MMDetection.

They need more than the op database's table: float64 agreement to 1e-12 where MMDetection
computes part of a float64 call in float32, and graph mode on an empty input.
"""

import mindspore as ms
import numpy as np
import pytest
import torch

from mscompat.losses import (
    BoundedIoULoss,
    CIoULoss,
    EIoULoss,
    GIoULoss,
    L1Loss,
    SmoothL1Loss,
    dice_loss,
    ghmc_loss,
    seesaw_ce_loss,
)
from mscompat.testing.references import mmdet_box, mmdet_cls, mmdet_misc, mmdet_stateful


@pytest.mark.parametrize("cls", [SmoothL1Loss, GIoULoss])
def test_empty_weight_takes_the_shortcut_in_graph_mode(cls):
    # MMDetection: `if weight is not None and not torch.any(weight > 0): return (pred *
    # weight).sum()` comes before the avg_factor-with-'sum' refusal, so empty boxes give 0.
    # Graph mode used to compile the other branch too and raise.
    loss = cls()
    empty = ms.Tensor(np.zeros((0, 4), np.float32))

    def run(p, t, w):
        return loss(p, t, w, avg_factor=2.0, reduction_override="sum")

    for fn in (run, ms.jit(run)):
        out = fn(empty, empty, empty)
        assert out.shape == () and float(out) == 0.0


def _call_with(cls, kwargs):
    def run(p, t, w):
        return cls()(p, t, w, **kwargs)

    return run


# L1Loss: the regression Cells' path; BoundedIoULoss: the IoU family's, and its (n,) weight
@pytest.mark.parametrize("cls", [L1Loss, BoundedIoULoss])
def test_zero_weight_comes_before_the_refusals_in_graph_mode(cls):
    # MMDetection returns `(pred * weight).sum()` for a weight with no positive entry before it
    # refuses avg_factor with 'sum' (or, for BoundedIoULoss, an (n,) weight of its (n, 4)
    # loss). A graph used to refuse both when it compiled; it now returns the 0 and refuses a
    # positive weight when it runs.
    pred = ms.Tensor(np.array([[0, 0, 2, 2], [1, 1, 3, 4]], np.float32))
    target = ms.Tensor(np.array([[0, 0, 2, 3], [1, 0, 3, 4]], np.float32))
    calls = [({"avg_factor": 4.0, "reduction_override": "sum"}, np.zeros((2, 4), np.float32))]
    if cls is BoundedIoULoss:
        calls = [({}, np.zeros(2, np.float32))]
    for kwargs, zeros in calls:
        run = _call_with(cls, kwargs)
        for fn in (run, ms.jit(run)):
            assert float(fn(pred, target, ms.Tensor(zeros))) == 0.0
        for fn in (ms.jit(run), ms.jit(ms.grad(run))):  # a graph that only differentiates too
            with pytest.raises(ValueError, match="avg_factor can not be used|dims as the loss"):
                fn(pred, target, ms.Tensor(zeros + 1))


@pytest.mark.parametrize("name", ["EIoULoss", "CIoULoss"])
def test_zero_weight_branch_compiles_for_float16_boxes(name):
    # MMDetection's zero-weight shortcut returns a float16 sum, its EIoU loss of float16 boxes a
    # float32 tensor: graph mode compiles both branches and could not join them (a TypeError at
    # compile time). The shortcut now takes the loss's dtype in a graph; its value stays 0.
    cls = {"EIoULoss": EIoULoss, "CIoULoss": CIoULoss}[name]
    rng = np.random.default_rng(5)
    corner = rng.uniform(0, 10, (5, 2))
    pred = np.concatenate([corner, corner + rng.uniform(0.5, 5, (5, 2))], 1).astype(np.float16)
    target = (pred + rng.uniform(-0.5, 0.5, (5, 4))).astype(np.float16)
    weight = rng.uniform(0.1, 1, (5, 4)).astype(np.float16)
    ref = getattr(mmdet_box, name)(reduction="none")
    want = ref(torch.tensor(pred), torch.tensor(target), torch.tensor(weight))
    loss = cls(reduction="none")

    def run(p, t, w):
        return loss(p, t, w)

    graph = ms.jit(run)
    out = graph(ms.Tensor(pred), ms.Tensor(target), ms.Tensor(weight))
    assert out.dtype == {torch.float32: ms.float32, torch.float16: ms.float16}[want.dtype]
    np.testing.assert_allclose(out.asnumpy(), want.numpy(), rtol=1e-3, atol=1e-3)
    zero = graph(ms.Tensor(pred), ms.Tensor(target), ms.Tensor(np.zeros_like(weight)))
    assert zero.shape == () and float(zero) == 0.0


def test_dice_float64_target_side_is_float32_as_mmdetection():
    # MMDetection's dice_loss casts the target with .float(): in a float64 call its sums (and
    # the gradient reaching the target) are float32. Ours computed them in float64: 1e-8 off.
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.95, (4, 3, 3))
    t = (rng.uniform(size=(4, 3, 3)) > 0.5).astype(np.float64)  # masks (soft targets' float32
    # sums depend on the summation order)
    for naive in (False, True):
        tp = torch.tensor(p, requires_grad=True)
        tt = torch.tensor(t, requires_grad=True)
        ref = mmdet_misc.dice_loss(tp, tt, eps=1e-3, naive_dice=naive, reduction="none")
        ct = rng.standard_normal(4)
        gp, gt = torch.autograd.grad(ref, (tp, tt), torch.tensor(ct))

        def f(a, b, naive=naive, ct=ct):
            loss = dice_loss(a, b, eps=1e-3, naive_dice=naive, reduction="none")
            return (loss * ms.Tensor(ct)).sum()

        ours = dice_loss(ms.Tensor(p), ms.Tensor(t), eps=1e-3, naive_dice=naive, reduction="none")
        np.testing.assert_allclose(ours.asnumpy(), ref.detach().numpy(), rtol=1e-12, atol=0)
        g = ms.grad(f, grad_position=(0, 1))(ms.Tensor(p), ms.Tensor(t))
        np.testing.assert_allclose(g[0].asnumpy(), gp.numpy(), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(g[1].asnumpy(), gt.numpy(), rtol=1e-12, atol=1e-15)


def test_seesaw_float64_mitigation_is_float32_rounded_once():
    # MMDetection's cum_samples buffer is float32: the mitigation factor pow(ratio, p) is a
    # float32 op even in a float64 call. MindSpore's float32 pow was tens of ulp off.
    rng = np.random.default_rng(4)
    c = 5
    score = rng.standard_normal((9, c + 2)) * 2
    labels = rng.integers(0, c + 1, 9)
    cum = np.array([3, 7, 1, 12, 5, 40], np.float32)
    args = dict(num_classes=c + 1, p=0.8, q=2.0, eps=1e-2, reduction="sum")
    ref = mmdet_cls.seesaw_ce_loss(
        torch.tensor(score[:, : c + 1]), torch.tensor(labels), None, torch.tensor(cum), **args
    )
    ours = seesaw_ce_loss(
        ms.Tensor(score[:, : c + 1]), ms.Tensor(labels), None, ms.Tensor(cum), **args
    )
    np.testing.assert_allclose(ours.asnumpy(), ref.numpy(), rtol=1e-12, atol=0)


def test_ghmc_gradient_norm_on_a_bin_edge_as_pytorch():
    # sigmoid(-2.1972241) is 0.10000004 in PyTorch's float32 (bin 1) and was 0.09999999 in
    # MindSpore's (bin 0): a g across an edge changes every weight (bin counts, valid bins).
    pred = np.array([[-2.1972241401672363], [-1.7], [1.5], [-0.4]], np.float32)
    target = np.zeros((4, 1), np.float32)  # g = sigmoid(pred); sigmoid(-1.7) is in bin 1
    lw = np.ones((4, 1), np.float32)
    ref, _ = mmdet_stateful.ghmc_loss(
        torch.tensor(pred), torch.tensor(target), torch.tensor(lw), reduction="none"
    )
    ours, _ = ghmc_loss(ms.Tensor(pred), ms.Tensor(target), ms.Tensor(lw), reduction="none")
    np.testing.assert_allclose(ours.asnumpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
