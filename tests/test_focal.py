"""Focal-loss properties beyond the op database: identities, random configs, the decorator."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mindspore import ops

from mscompat.losses import SigmoidFocalLoss, sigmoid_focal_loss, weighted_loss
from mscompat.testing import assert_parity
from mscompat.testing.references.mmdet import py_sigmoid_focal_loss, weight_reduce_loss


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gamma0_alpha_half_is_half_bce(dtype):
    # torchvision's test_equal_ce_loss, in MMDetection's convention: with gamma=0 the
    # modulating factor is 1, and alpha=0.5 weights both classes by 0.5.
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((8, 6)) * 5).astype(dtype)
    x[0, :2] = [1e4, -1e4]
    t = (rng.uniform(size=(8, 6)) < 0.5).astype(dtype)

    def ours(p, q):
        return sigmoid_focal_loss(p, q, gamma=0.0, alpha=0.5, reduction="sum")

    def half_bce(p, q):
        return 0.5 * F.binary_cross_entropy_with_logits(p, q, reduction="sum")

    assert_parity(ours, half_bce, x, t, grad_argnums=[0])


def test_extreme_logits_give_finite_values_and_torch_gradients():
    x = np.array([[1e4, -1e4, 1e4, -1e4, 0.0]], np.float32)
    t = np.array([[1.0, 0.0, 0.0, 1.0, 1.0]], np.float32)
    loss = sigmoid_focal_loss(ms.Tensor(x), ms.Tensor(t), reduction="none").asnumpy()
    assert np.isfinite(loss).all()
    grad = ms.grad(lambda p: sigmoid_focal_loss(p, ms.Tensor(t)))(ms.Tensor(x)).asnumpy()
    assert np.isfinite(grad).all()
    assert_parity(sigmoid_focal_loss, py_sigmoid_focal_loss, x, t, grad_argnums=[0])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(1, 6),
    c=st.integers(1, 5),
    gamma=st.sampled_from([0.0, 0.5, 1.0, 2.0, 2.5]),
    alpha=st.floats(0.0, 1.0),
    reduction=st.sampled_from(["none", "mean", "sum"]),
    weight_kind=st.sampled_from([None, "n", "nc", "flat"]),
    scale=st.sampled_from([1.0, 10.0, 100.0]),
    seed=st.integers(0, 2**16),
)
def test_random_configs_match_mmdet(n, c, gamma, alpha, reduction, weight_kind, scale, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((n, c)) * scale).astype(np.float32)
    t = rng.uniform(size=(n, c)).astype(np.float32)
    kwargs = {"gamma": gamma, "alpha": alpha, "reduction": reduction}
    if weight_kind == "n":
        kwargs["weight"] = rng.uniform(size=(n,)).astype(np.float32)
    elif weight_kind == "nc":
        kwargs["weight"] = rng.uniform(size=(n, c)).astype(np.float32)
    elif weight_kind == "flat":
        kwargs["weight"] = rng.uniform(size=(n * c,)).astype(np.float32)
    # gamma < 1 has an infinite derivative where pt == 0; compare values only there
    assert_parity(
        sigmoid_focal_loss,
        py_sigmoid_focal_loss,
        x,
        t,
        kwargs=kwargs,
        grad=gamma >= 1.0,
        grad_argnums=[0],
        modes=("pynative",),
    )


def test_weighted_loss_decorator_matches_mmdet():
    @weighted_loss
    def l1(pred, target):
        return ops.abs(pred - target)

    def l1_ref(pred, target, weight=None, reduction="mean", avg_factor=None):
        return weight_reduce_loss((pred - target).abs(), weight, reduction, avg_factor)

    rng = np.random.default_rng(3)
    p, q = rng.standard_normal((5, 4)).astype(np.float32), rng.standard_normal((5, 4))
    w = rng.uniform(size=(5, 1)).astype(np.float32)
    for kwargs in ({}, {"weight": w, "reduction": "sum"}, {"weight": w, "avg_factor": 3.0}):
        assert_parity(l1, l1_ref, p, q.astype(np.float32), kwargs=kwargs, grad_argnums=[0])
    with pytest.raises(ValueError, match="avg_factor can not be used"):
        l1(ms.Tensor(p), ms.Tensor(p), reduction="sum", avg_factor=2.0)


def test_cell_accepts_the_guides_numpy_weight_and_trains():
    rng = np.random.default_rng(4)
    weight = rng.uniform(size=(3,)).astype(np.float32)
    x = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    t = rng.uniform(-1, 1, (3, 4)).astype(np.float32)  # the guide's own (odd) targets
    cell = SigmoidFocalLoss(weight=weight, gamma=1.0, alpha=0.5, reduction="sum")
    ref = py_sigmoid_focal_loss(
        torch.from_numpy(x), torch.from_numpy(t), torch.from_numpy(weight), 1.0, 0.5, "sum"
    )
    got = cell(ms.Tensor(x), ms.Tensor(t))
    np.testing.assert_allclose(got.asnumpy(), ref.numpy(), rtol=1.3e-6, atol=1e-5)
    # a Cell inside a jitted training step
    param = ms.Parameter(ms.Tensor(x), name="logits")
    target = ms.Tensor(t)

    def forward():
        return cell(param, target)

    step = ms.jit(ms.value_and_grad(forward, None, [param]))
    value, grads = step()
    np.testing.assert_allclose(value.asnumpy(), ref.numpy(), rtol=1.3e-6, atol=1e-5)
    assert grads[0].shape == x.shape


def test_invalid_reduction_never_reaches_a_kernel(monkeypatch):
    called = []
    monkeypatch.setattr(ops, "sigmoid", lambda *a: called.append(a))
    with pytest.raises(ValueError, match="reduction must be one of 'none', 'mean', 'sum'"):
        sigmoid_focal_loss(
            ms.Tensor(np.zeros((2, 2), np.float32)),
            ms.Tensor(np.zeros((2, 2), np.float32)),
            reduction="elementwise",
        )
    assert not called
