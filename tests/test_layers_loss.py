"""The ``torch.nn.functional`` losses of ``mscompat.layers``: what the op database's parity
samples cannot say (deliberate differences from PyTorch, identities, PyTorch's legacy
arguments, empty batches where PyTorch's answer is uninitialised memory)."""

from __future__ import annotations

import warnings

import mindspore as ms
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from mindspore import ops

import mscompat.layers as L
from mscompat.layers._loss_common import legacy_reduction


def _t(a: np.ndarray) -> ms.Tensor:
    return ms.Tensor(a)


def test_soft_margin_is_finite_where_pytorch_overflows() -> None:
    x = np.array([1e4, -1e4, 100.0, -100.0], np.float32)
    y = np.array([-1.0, 1.0, -1.0, 1.0], np.float32)
    out = L.soft_margin_loss(_t(x), _t(y), reduction="none").asnumpy()
    np.testing.assert_allclose(out, np.abs(x), rtol=1e-6)  # log(1 + e^z) = z for large z
    grad = ms.grad(lambda a: L.soft_margin_loss(a, _t(y), reduction="sum"))(_t(x)).asnumpy()
    np.testing.assert_allclose(grad, -y, rtol=1e-6)  # d/dx log(1 + e^{-yx}) -> -y
    with torch.no_grad():
        theirs = F.soft_margin_loss(torch.from_numpy(x), torch.from_numpy(y), reduction="none")
    assert torch.isinf(theirs[:2]).all()  # the difference is real: PyTorch overflows there


def test_cross_entropy_with_one_hot_probabilities_equals_class_indices() -> None:
    """Identity: the probability-target path with one-hot targets is the class-index path,
    forward and gradient, with weight and label smoothing (PyTorch's formulas agree too)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 4)).astype(np.float64)
    t = rng.integers(0, 4, 6)
    onehot = np.eye(4)[t]
    w = _t(rng.uniform(0.5, 2.0, 4))

    def by_index(a: ms.Tensor) -> ms.Tensor:
        return L.cross_entropy(a, _t(t.astype(np.int64)), w, reduction="sum", label_smoothing=0.2)

    def by_prob(a: ms.Tensor) -> ms.Tensor:
        return L.cross_entropy(a, _t(onehot), w, reduction="sum", label_smoothing=0.2)

    np.testing.assert_allclose(by_index(_t(x)).asnumpy(), by_prob(_t(x)).asnumpy(), rtol=1e-12)
    np.testing.assert_allclose(
        ms.grad(by_index)(_t(x)).asnumpy(), ms.grad(by_prob)(_t(x)).asnumpy(), rtol=1e-12
    )


def test_kl_div_target_gradient_is_not_zero_unlike_mindspore() -> None:
    logp = _t(np.log(np.array([[0.2, 0.3, 0.5]])))
    q = _t(np.array([[0.1, 0.6, 0.3]]))
    ours = ms.grad(lambda t: L.kl_div(logp, t, reduction="sum"), grad_position=0)(q).asnumpy()
    np.testing.assert_allclose(ours, np.log(q.asnumpy()) + 1 - logp.asnumpy(), rtol=1e-12)
    theirs = ms.grad(lambda t: ops.kl_div(logp, t, reduction="sum"), grad_position=0)(q)
    assert not np.abs(theirs.asnumpy()).any()  # why kl_div is composed here


@pytest.mark.parametrize(
    "size_average,reduce_,expected",
    [
        (None, None, "mean"),
        (False, None, "sum"),
        (True, False, "none"),
        (None, False, "none"),
        (True, True, "mean"),
        (False, True, "sum"),
    ],
)
def test_legacy_reduction_is_pytorchs_mapping(size_average, reduce_, expected) -> None:
    from torch.nn import _reduction

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = (
            "mean"
            if size_average is None and reduce_ is None
            else _reduction.legacy_get_string(size_average, reduce_)
        )
    assert legacy_reduction(size_average, reduce_, "mean") == expected == theirs


@pytest.mark.parametrize("red", ["sum", "none", "mean"])
def test_margin_losses_of_an_empty_batch(red: str) -> None:
    """PyTorch 2.13's CPU sum over no sample reads uninitialised memory here: ours is 0."""
    x = _t(np.zeros((0, 4), np.float32))
    multi = L.multi_margin_loss(x, _t(np.zeros((0,), np.int64)), reduction=red)
    label = L.multilabel_margin_loss(x, _t(np.zeros((0, 4), np.int64)), reduction=red)
    for out in (multi, label):
        if red == "none":
            assert out.shape == (0,)
        else:
            assert out.shape == () and float(out) == 0.0


@pytest.mark.parametrize(
    "fn,args",
    [
        ("cross_entropy", ((0, 3), (0,))),
        ("nll_loss", ((0, 3), (0,))),
        ("kl_div", ((0, 3), (0, 3))),
        ("soft_margin_loss", ((0, 3), (0, 3))),
        ("triplet_margin_loss", ((0, 3), (0, 3), (0, 3))),
        ("cosine_embedding_loss", ((0, 3), (0, 3), (0,))),
    ],
)
def test_empty_batches_sum_and_none_as_pytorch(fn: str, args) -> None:
    ms_args, t_args = [], []
    for i, shape in enumerate(args):
        integer = fn in ("cross_entropy", "nll_loss") and i == 1
        a = np.zeros(shape, np.int64 if integer else np.float32)
        ms_args.append(_t(a))
        t_args.append(torch.from_numpy(a))
    for red in ("sum", "none"):
        ours = getattr(L, fn)(*ms_args, reduction=red).asnumpy()
        theirs = getattr(F, fn)(*t_args, reduction=red).numpy()
        assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)


def test_out_of_range_class_raises_in_graph_mode() -> None:
    @ms.jit
    def run(x: ms.Tensor, t: ms.Tensor) -> ms.Tensor:
        return L.cross_entropy(x, t)

    x = _t(np.zeros((2, 3), np.float32))
    assert np.isfinite(run(x, _t(np.array([0, 2], np.int64))).asnumpy())
    with pytest.raises(ValueError, match=r"target holds a value out of range"):
        run(x, _t(np.array([0, 3], np.int64)))


def test_all_ignored_gradient_is_zero_as_pytorch() -> None:
    x = np.zeros((2, 3), np.float32)
    t = np.array([-100, -100], np.int64)
    grad = ms.grad(lambda a: L.cross_entropy(a, _t(t), label_smoothing=0.1))(_t(x)).asnumpy()
    xt = torch.from_numpy(x).requires_grad_()
    F.cross_entropy(xt, torch.from_numpy(t), label_smoothing=0.1).backward()
    np.testing.assert_array_equal(grad, xt.grad.numpy())
