"""State across calls of the GHM and EQLv2 Cells: several forward+backward steps against
MMDetection's modules (transcribed in ``mscompat.testing.references.mmdet_stateful``), the loss,
the gradient and the state after every step, in PyNative and graph mode."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest

from mscompat.losses import GHMC, GHMR, EQLV2Loss
from mscompat.testing.parity import reset_grad_state

torch = pytest.importorskip("torch")
R = pytest.importorskip("mscompat.testing.references.mmdet_stateful")

STEPS = 4


def _steps(make_inputs, ms_cell, torch_module, state_names, mode, rtol):
    """Run STEPS forward+backward steps on both sides and compare everything after each."""

    def loss_fn(*args):
        return ms_cell(*args)

    grad_fn = ms.value_and_grad(loss_fn, grad_position=0)
    if mode == "graph":
        grad_fn = ms.jit(grad_fn)
    rng = np.random.default_rng(1)
    try:
        for step in range(STEPS):
            args = make_inputs(rng)
            loss, grad = grad_fn(*[ms.Tensor(a) for a in args])
            t_args = [torch.from_numpy(a) for a in args]
            t_args[0].requires_grad_(True)
            t_loss = torch_module(*t_args)
            (t_grad,) = torch.autograd.grad(t_loss, t_args[0])
            np.testing.assert_allclose(
                loss.asnumpy(),
                t_loss.detach().numpy(),
                rtol=rtol,
                atol=1e-6,
                err_msg=f"step {step}",
            )
            np.testing.assert_allclose(
                grad.asnumpy(), t_grad.numpy(), rtol=rtol, atol=1e-6, err_msg=f"grad, step {step}"
            )
            for name in state_names:
                ours = getattr(ms_cell, name).asnumpy()
                theirs = getattr(torch_module, name).numpy()
                np.testing.assert_allclose(
                    ours, theirs, rtol=1e-5, atol=1e-6, err_msg=f"{name}, step {step}"
                )
    finally:
        reset_grad_state()


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_ghmc_momentum_over_steps(mode):
    def inputs(rng):
        x = (rng.standard_normal((16, 5)) * 3).astype(np.float32)
        t = (rng.uniform(size=(16, 5)) < 0.3).astype(np.float32)
        lw = (rng.uniform(size=(16, 5)) < 0.8).astype(np.float32)
        return x, t, lw

    cell, module = GHMC(bins=6, momentum=0.75), R.GHMCModule(bins=6, momentum=0.75)
    _steps(inputs, cell, module, ["acc_sum"], mode, 1e-5)
    assert cell.acc_sum.asnumpy().sum() > 0


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_ghmr_momentum_over_steps(mode):
    def inputs(rng):
        p = (rng.standard_normal((12, 4)) * 0.2).astype(np.float64)
        t = (rng.standard_normal((12, 4)) * 0.2).astype(np.float64)
        lw = (rng.uniform(size=(12, 4)) < 0.7).astype(np.float64)
        return p, t, lw

    cell, module = GHMR(mu=0.05, momentum=0.6), R.GHMRModule(mu=0.05, momentum=0.6)
    _steps(inputs, cell, module, ["acc_sum"], mode, 1e-7)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_eqlv2_statistics_over_steps(mode):
    """The weights of each step come from the statistics of the steps before it, and the
    statistics are collected once per call (MMDetection 3.3 collects them in forward)."""
    c = 5

    def inputs(rng):
        x = (rng.standard_normal((9, c + 1)) * 2).astype(np.float32)
        return x, rng.integers(0, c + 1, 9)

    cell = EQLV2Loss(num_classes=c, gamma=4, mu=0.5)
    module = R.EQLV2Module(num_classes=c, gamma=4, mu=0.5)
    _steps(inputs, cell, module, ["pos_grad", "neg_grad", "pos_neg"], mode, 2e-5)
    assert (cell.pos_neg.asnumpy() < 100).all()  # left its initial value


def test_state_is_not_trainable():
    assert not GHMC(momentum=0.5).trainable_params()
    assert not EQLV2Loss(num_classes=3).trainable_params()
    assert {p.name for p in EQLV2Loss(num_classes=3).get_parameters()} == {
        "pos_grad",
        "neg_grad",
        "pos_neg",
    }
