"""MMDetection loss behaviour the op database's one-call samples do not reach: Seesaw's
``cum_samples`` state across calls (PyNative and graph), FocalLoss's eager label check, the
constructor warning of CrossEntropyLoss, and identities between the losses."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch

from mscompat.losses import (
    CrossEntropyLoss,
    FocalLoss,
    SeesawLoss,
    binary_cross_entropy,
    sigmoid_focal_loss,
)
from mscompat.testing.references import mmdet_cls as ref


class _Jitted(ms.nn.Cell):
    """The Seesaw Cell called from a graph-mode construct."""

    def __init__(self, loss: SeesawLoss) -> None:
        super().__init__()
        self.loss = loss

    @ms.jit
    def construct(self, score: ms.Tensor, labels: ms.Tensor) -> ms.Tensor:
        return self.loss(score, labels)


@pytest.mark.parametrize("mode", ["pynative", "graph"])
def test_seesaw_cum_samples_accumulate_over_calls(mode: str) -> None:
    rng = np.random.default_rng(0)
    c = 4
    ours = SeesawLoss(num_classes=c, return_dict=False)
    theirs = ref.SeesawLossRef(num_classes=c, return_dict=False)
    fn = _Jitted(ours) if mode == "graph" else ours
    for step in range(4):
        score = (rng.standard_normal((9, c + 2)) * 2).astype(np.float32)
        labels = rng.integers(0, c + 1, size=9)
        labels[step] = c  # a background in every batch
        got = fn(ms.Tensor(score), ms.Tensor(labels))
        want = theirs(torch.from_numpy(score), torch.from_numpy(labels))
        np.testing.assert_allclose(got.asnumpy(), want.numpy(), rtol=2e-5, atol=1e-6)
        np.testing.assert_array_equal(ours.cum_samples.asnumpy(), theirs.cum_samples.numpy())
    assert not ours.cum_samples.requires_grad
    assert "loss.cum_samples" in fn.parameters_dict() or "cum_samples" in ours.parameters_dict()


def test_seesaw_return_dict_and_gradient() -> None:
    rng = np.random.default_rng(1)
    score = (rng.standard_normal((6, 5)) * 2).astype(np.float32)
    labels = np.array([0, 1, 3, 2, 3, 1])
    ours = SeesawLoss(num_classes=3)
    theirs = ref.SeesawLossRef(num_classes=3)
    got = ours(ms.Tensor(score), ms.Tensor(labels))
    t_score = torch.from_numpy(score).requires_grad_(True)
    want = theirs(t_score, torch.from_numpy(labels))
    assert set(got) == set(want) == {"loss_cls_objectness", "loss_cls_classes"}
    for key in want:
        np.testing.assert_allclose(got[key].asnumpy(), want[key].detach().numpy(), rtol=2e-5)
    total = SeesawLoss(num_classes=3, return_dict=False)
    grad = ms.grad(lambda s: total(s, ms.Tensor(labels)))(ms.Tensor(score))
    sum(want.values()).backward()
    np.testing.assert_allclose(grad.asnumpy(), t_score.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_focal_loss_checks_index_labels_eagerly() -> None:
    x = ms.Tensor(np.zeros((3, 4), np.float32))
    with pytest.raises(ValueError, match=r"class values must be in \[0, 4\]"):
        FocalLoss()(x, ms.Tensor(np.array([0, 5, 1])))
    with pytest.raises(ValueError, match=r"class values must be in \[0, 4\]"):
        FocalLoss()(x, ms.Tensor(np.array([0, -1, 1])))


def test_focal_loss_index_labels_equal_one_hot() -> None:
    rng = np.random.default_rng(2)
    x = ms.Tensor((rng.standard_normal((7, 5)) * 3).astype(np.float32))
    labels = np.array([0, 5, 2, 4, 5, 1, 3])
    onehot = np.eye(6, dtype=np.float32)[labels][:, :5]
    a = FocalLoss(reduction="none")(x, ms.Tensor(labels)).asnumpy()
    b = sigmoid_focal_loss(x, ms.Tensor(onehot), reduction="none").asnumpy()
    np.testing.assert_array_equal(a, b)


def test_focal_loss_gamma0_alpha_half_is_half_the_bce() -> None:
    rng = np.random.default_rng(3)
    x = ms.Tensor((rng.standard_normal((6, 4)) * 3).astype(np.float64))
    labels = ms.Tensor(np.array([0, 4, 1, 3, 2, 4]))
    focal = FocalLoss(gamma=0.0, alpha=0.5, reduction="sum")(x, labels)
    bce = binary_cross_entropy(x, labels, reduction="sum")  # float32: MMDetection's label.float()
    np.testing.assert_allclose(2 * focal.asnumpy(), bce.asnumpy(), rtol=1e-6)


def test_cross_entropy_loss_warns_like_mmdetection() -> None:
    with pytest.warns(UserWarning, match="avg_non_ignore"):
        CrossEntropyLoss(ignore_index=255)
