"""Activations, dropout and linear layers of ``mscompat.layers``: what the op database cannot
check one entry at a time.

* Graph mode for every activation and its Cell in one ``ms.jit`` compilation (forward and
  gradient against PyNative; the entries run PyNative only, the suite's time budget).
* The random calls (``dropout*`` and ``alpha_dropout`` in training, ``rrelu(training=True)``,
  the Cells' initialisation), checked by their properties: PyTorch's generator is not
  MindSpore's.
"""

from __future__ import annotations

import math

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, ops

from mscompat import layers as L
from mscompat import nn as mnn
from mscompat.nn import functional as F

_CELLS = (
    L.ReLU(),
    L.ReLU6(),
    L.Hardtanh(-2.0, 0.5),
    L.LeakyReLU(0.2),
    L.Threshold(0.5, -2.0),
    L.ELU(1.5),
    L.SELU(),
    L.CELU(2.0),
    L.RReLU(),
    L.PReLU(3),
    L.GELU("tanh"),
    L.SiLU(),
    L.Mish(),
    L.Softplus(2.0, 5.0),
    L.Softsign(),
    L.LogSigmoid(),
    L.Sigmoid(),
    L.Tanh(),
    L.Hardsigmoid(),
    L.Hardswish(),
    L.Hardshrink(),
    L.Softshrink(),
    L.Tanhshrink(),
    L.Softmax(1),
    L.Softmin(0),
    L.LogSoftmax(-1),
    L.GLU(0),
    L.Identity(),
)


class _All(ms.nn.Cell):
    """Every activation, loss, linear map and dropout (through its Cell where it has one)
    summed: one graph for them all."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = ms.nn.CellList(list(_CELLS))
        self.losses = ms.nn.CellList(
            [L.L1Loss(), L.MSELoss(), L.SmoothL1Loss(beta=0.5), L.BCELoss(), L.BCEWithLogitsLoss()]
        )

    def construct(self, x: Tensor, w: Tensor) -> Tensor:
        # the Cells call the functions: one call each keeps the compilation small
        total = L.softmin(x, 0).sum() + L.gelu(x).sum() + L.relu6(x).sum()
        for cell in self.blocks:
            out = cell(x)
            total = total + (out * out).sum()
        total = total + L.prelu(x, w[0, :3].abs()).sum()
        total = total + L.linear(x, w, w[0]).sum() + L.dropout(x, 0.5, training=False).sum()
        total = total + L.bilinear(x, x, ops.stack([w, w]), w[0, :2]).sum()
        for d in (L.dropout1d, L.dropout2d, L.alpha_dropout, L.feature_alpha_dropout):
            total = total + d(x, 0.0, True).sum()
        p = L.sigmoid(x)
        y = L.sigmoid(w[0] - x)
        for loss in (L.l1_loss, L.mse_loss, L.smooth_l1_loss, L.binary_cross_entropy_with_logits):
            total = total + loss(x, y) + L.binary_cross_entropy(p, y, w[0], reduction="sum")
        total = total + L.binary_cross_entropy_with_logits(x, y, pos_weight=w[0])
        for cell in self.losses:
            total = total + cell(p, y)
        return total


def test_every_op_in_one_graph_matches_pynative():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3)) * 3
    x[0] = (0.0, -3.0, 3.0)  # kinks: relu, hardsigmoid/hardswish
    w = rng.uniform(0.5, 1.5, (3, 3))
    args = (Tensor(x, ms.float32), Tensor(w, ms.float32))
    model = _All()
    np.testing.assert_allclose(ms.jit(model)(*args).asnumpy(), model(*args).asnumpy(), rtol=1e-5)


class _Kinks(ms.nn.Cell):
    """The activations whose gradient at a kink or NaN rests on ``where``/``stop_gradient``."""

    def construct(self, x: Tensor) -> Tensor:
        out = L.hardtanh(x) + L.hardswish(x) + L.hardsigmoid(x) + L.elu(x, 1.5)
        out = out + L.softplus(x, 2.0, 5.0) + L.logsigmoid(x) + L.hardshrink(x) + L.relu(x)
        return out.sum()


def test_kink_gradients_in_graph_match_pynative():
    x = Tensor([-3.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.5, 3.0, 30.0, -30.0, float("nan")], ms.float32)
    grad = ms.grad(_Kinks())
    np.testing.assert_allclose(ms.jit(grad)(x).asnumpy(), grad(x).asnumpy(), rtol=1e-6)


def test_inplace_aliases_are_the_functions_and_return_new_tensors():
    for name in ("relu", "elu", "hardtanh", "threshold", "leaky_relu", "celu", "selu", "rrelu"):
        assert getattr(F, f"{name}_") is getattr(F, name)
    x = Tensor([-1.0, 2.0])
    y = F.relu_(x)
    assert x.asnumpy().tolist() == [-1.0, 2.0] and y.asnumpy().tolist() == [0.0, 2.0]
    assert mnn.ReLU is L.ReLU


# ----------------------------------------------------------------------------- random calls


def _x(shape, seed=0, dtype=ms.float32):
    return Tensor(np.random.default_rng(seed).standard_normal(shape), dtype)


def test_dropout_masks_rate_scaling_and_seed():
    x = ops.ones((200, 100), ms.float32)
    ms.set_seed(1)
    y = L.dropout(x, 0.3).asnumpy()
    assert np.all(np.isclose(y, 0.0) | np.isclose(y, 1 / 0.7, rtol=1e-6))
    assert abs((y == 0).mean() - 0.3) < 0.02
    ms.set_seed(1)
    np.testing.assert_array_equal(L.dropout(x, 0.3).asnumpy(), y)  # reproducible
    g = ms.grad(lambda t: L.dropout(t, 0.3).sum())
    ms.set_seed(1)
    np.testing.assert_allclose(g(x).asnumpy(), y)  # the gradient is the mask, scaled


@pytest.mark.parametrize(
    "fn, shape, reduced",
    [
        (L.dropout1d, (20, 30, 5), (2,)),
        (L.dropout1d, (30, 5), (1,)),  # unbatched: one mask per channel
        (L.dropout2d, (20, 30, 2, 3), (2, 3)),
        (L.dropout3d, (20, 30, 2, 2, 2), (2, 3, 4)),
        (L.dropout3d, (30, 2, 2, 2), (1, 2, 3)),
        (L.feature_alpha_dropout, (20, 30, 4), (2,)),
    ],
)
def test_channel_dropout_drops_whole_channels(fn, shape, reduced):
    ms.set_seed(2)
    kwargs = {"training": True} if fn is L.feature_alpha_dropout else {}
    y = fn(ops.ones(shape, ms.float32), 0.4, **kwargs).asnumpy()
    spread = y.max(axis=reduced) - y.min(axis=reduced)
    assert np.all(spread == 0)  # constant over each channel
    assert 0.25 < (y.min(axis=reduced) != y.max()).mean() < 0.55


def test_alpha_dropout_keeps_mean_and_variance():
    ms.set_seed(3)
    x = _x((400, 500))
    y = L.alpha_dropout(x, 0.2, training=True).asnumpy()
    assert abs(y.mean()) < 0.02 and abs(y.var() - 1.0) < 0.03
    dropped = np.isclose(
        y, -1.7580993408473766 * _alpha_a(0.2) + 1.7580993408473766 * _alpha_a(0.2) * 0.2
    )
    assert abs(dropped.mean() - 0.2) < 0.01
    assert L.alpha_dropout(x, 0.2).asnumpy() is not None  # training=False by default: identity
    np.testing.assert_array_equal(L.alpha_dropout(x, 0.2).asnumpy(), x.asnumpy())


@pytest.mark.parametrize("fn", [L.alpha_dropout, L.feature_alpha_dropout])
def test_alpha_dropout_keeps_or_saturates_each_value_and_its_gradient(fn):
    # PyTorch's formula (ATen's _dropout_impl): kept a * x + alpha' a p, dropped alpha' a (p - 1);
    # the gradient a where kept, 0 where dropped; checked on one call's output and gradient.
    ms.set_seed(5)
    p, alpha = 0.3, 1.7580993408473766
    a = _alpha_a(p)
    x = ms.Tensor(np.random.default_rng(0).normal(size=(6, 40, 5)))

    def loss(t):
        y = fn(t, p, training=True)
        return y.sum(), y

    (_, y), grad = ms.value_and_grad(loss, has_aux=True)(x)
    y, grad, xs = y.asnumpy(), grad.asnumpy(), x.asnumpy()
    kept = np.isclose(y, a * xs + alpha * a * p, rtol=1e-12, atol=1e-12)
    assert np.all(kept | np.isclose(y, alpha * a * (p - 1), rtol=1e-12, atol=1e-12))
    np.testing.assert_allclose(grad, np.where(kept, a, 0.0), rtol=1e-12)
    assert 0.2 < 1 - kept.mean() < 0.4
    if fn is L.feature_alpha_dropout:  # one decision per (N, C)
        assert np.all(kept.all(axis=2) | ~kept.any(axis=2))


def _alpha_a(p):
    return 1 / math.sqrt((1.7580993408473766**2 * p + 1) * (1 - p))


def test_dropout_cells_follow_training_mode():
    cell = L.Dropout(0.5)
    x = ops.ones((50, 40), ms.float32)
    np.testing.assert_array_equal(cell(x).asnumpy(), x.asnumpy())
    cell.set_train(True)
    ms.set_seed(4)
    assert 0.4 < (cell(x).asnumpy() == 0).mean() < 0.6
    with pytest.raises(ValueError, match="between 0 and 1"):
        L.AlphaDropout(1.5)


def test_rrelu_training_draws_slopes_in_bounds():
    ms.set_seed(5)
    x = -ops.ones((100, 50), ms.float32)
    y = -L.rrelu(x, 0.1, 0.3, training=True).asnumpy()
    assert y.min() >= 0.1 and y.max() <= 0.3 and y.std() > 0.03
    assert abs(y.mean() - 0.2) < 0.01
    g = ms.grad(lambda t: L.rrelu(t, 0.1, 0.3, training=True).sum())(x).asnumpy()
    assert g.min() >= 0.1 and g.max() <= 0.3  # the gradient is the slope drawn
    pos = L.rrelu(-x, 0.1, 0.3, training=True).asnumpy()
    np.testing.assert_array_equal(pos, np.ones((100, 50)))


def test_linear_and_bilinear_cells_initialise_as_pytorch():
    ms.set_seed(6)
    layer = L.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w = layer.weight.asnumpy()
    assert w.shape == (300, 400) and layer.bias.shape == (300,)
    assert -bound <= w.min() and w.max() <= bound and abs(w.std() - bound / math.sqrt(3)) < 1e-3
    bil = L.Bilinear(100, 20, 30, bias=False)
    assert bil.weight.shape == (30, 100, 20) and bil.bias is None
    assert abs(bil.weight.asnumpy()).max() <= 1 / math.sqrt(100)
    assert L.Linear(3, 2, dtype=ms.float64).weight.dtype == ms.float64
