"""The weighted reduction fused into the box and regression loss kernels
(``custom_ops/loss_reduce.py``, ``cpu/loss_reduce.h``): what the op database's samples do not
reach (gradients to the weight, a Tensor ``avg_factor``, NaN, which calls fuse), against the
plain-torch transcriptions of MMDetection and torchvision."""

from __future__ import annotations

from typing import Any, Callable, List

import mindspore as ms
import numpy as np
import pytest
import torch

from mscompat import losses, vision
from mscompat.custom_ops import available, use_backend
from mscompat.custom_ops.loss_reduce import plan
from mscompat.losses import _fused
from mscompat.testing.references import mmdet_box as ref
from mscompat.testing.references import torchvision_ops as tv_ref

pytestmark = pytest.mark.skipif(
    not available("losses.giou_loss", "aot")[0], reason="the box loss kernels are not built"
)


def _data(n: int = 7) -> List[np.ndarray]:
    rng = np.random.default_rng(3)
    xy = rng.uniform(0, 20, (n, 2))
    t = np.concatenate([xy, xy + rng.uniform(1, 10, (n, 2))], 1)
    p = t + rng.uniform(-2, 2, t.shape)
    return [p, t, rng.uniform(size=n), rng.uniform(size=(n, 4))]


def _check(ms_fn: Callable[..., Any], th_fn: Callable[..., Any], arrays: List[np.ndarray]) -> None:
    """Value and gradients to every input (float64), PyNative."""
    xs = [torch.tensor(a, requires_grad=True) for a in arrays]
    expected = th_fn(*xs)
    expected.backward()
    value, grads = ms.value_and_grad(ms_fn, grad_position=tuple(range(len(arrays))))(
        *(ms.Tensor(a) for a in arrays)
    )
    np.testing.assert_allclose(value.asnumpy(), expected.detach().numpy(), rtol=1e-12, atol=1e-14)
    for g, x in zip(grads, xs):
        want = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        np.testing.assert_allclose(g.asnumpy(), want, rtol=1e-12, atol=1e-14)


def test_box_function_weight_grad():
    p, t, w, _ = _data()
    _check(
        lambda a, b, c: losses.ciou_loss(a, b, c, avg_factor=2.5),
        lambda a, b, c: ref.ciou_loss(a, b, c, avg_factor=2.5),
        [p, t, w],
    )


def test_box_cell_weight_averaged_loss_weight_tensor_avg_factor():
    p, t, _, w4 = _data()
    cell, th = losses.GIoULoss(loss_weight=2.0), ref.GIoULoss(loss_weight=2.0)
    _check(
        lambda a, b, c: cell(a, b, c, avg_factor=3.0),
        lambda a, b, c: th(a, b, c, avg_factor=3.0),
        [p, t, w4],
    )
    af, th_af = ms.Tensor(3.0, ms.float64), torch.tensor(3.0, dtype=torch.float64)
    _check(
        lambda a, b, c: cell(a, b, c, avg_factor=af),
        lambda a, b, c: th(a, b, c, avg_factor=th_af),
        [p, t, w4],
    )


def test_box_cell_zero_weight_shortcut_grads():
    p, t, w, _ = _data()
    cell, th = losses.IoULoss(loss_weight=2.0), ref.IoULoss(loss_weight=2.0)
    _check(lambda a, b, c: cell(a, b, c), lambda a, b, c: th(a, b, c), [p, t, -w])


def test_regression_cell_tensor_avg_factor_and_zero_weight():
    p, t, _, w4 = _data()
    cell, th = (
        losses.SmoothL1Loss(beta=0.5, loss_weight=2.0),
        ref.SmoothL1Loss(beta=0.5, loss_weight=2.0),
    )
    af, th_af = ms.Tensor(5.0, ms.float64), torch.tensor(5.0, dtype=torch.float64)
    _check(
        lambda a, b, c: cell(a, b, c, avg_factor=af),
        lambda a, b, c: th(a, b, c, avg_factor=th_af),
        [p, t, w4],
    )
    _check(lambda a, b, c: cell(a, b, c), lambda a, b, c: th(a, b, c), [p, t, 0 * w4])
    _check(
        lambda a, b, c: losses.balanced_l1_loss(a, b, c, reduction="sum"),
        lambda a, b, c: ref.balanced_l1_loss(a, b, c, reduction="sum"),
        [p, t, w4],
    )


def test_nan_box_gives_nan_mean_as_torch():
    p, t, w, _ = _data()
    p[2, 1] = np.nan
    got = losses.giou_loss(ms.Tensor(p), ms.Tensor(t), ms.Tensor(w)).asnumpy()
    want = ref.giou_loss(torch.tensor(p), torch.tensor(t), torch.tensor(w)).numpy()
    assert np.isnan(got) and np.isnan(want)
    got = vision.distance_box_iou_loss(ms.Tensor(p), ms.Tensor(t), "sum").asnumpy()
    assert np.isnan(got) and np.isnan(
        tv_ref.distance_box_iou_loss(torch.tensor(p), torch.tensor(t), "sum").numpy()
    )


def test_which_calls_fuse():
    p, t, w, w4 = (ms.Tensor(a.astype(np.float32)) for a in _data())

    def fused(*args: Any, **kw: Any) -> bool:
        return bool(_fused.tail("losses.giou_loss", (1e-7,), *args, **kw))

    assert fused(p, t, w, "mean", 2.0, box=True)
    assert fused(p, t, w4, "sum", None, 2.0, True, box=True, cell=True)
    assert not fused(p, t, w4, "mean", None, box=True)  # the function refuses an (n, 4) weight
    assert not fused(p, t, w.astype(ms.float64), "mean", None, box=True)  # promoted weight
    assert not fused(p, t, None, "none", None, box=True)
    assert not fused(p, t, w, "sum", 2.0, box=True)  # the front door's error
    assert not fused(p.astype(ms.float16), t.astype(ms.float16), None, "mean", None, box=True)
    # zero-weight shortcut and a Tensor avg_factor: the division would apply to the shortcut
    af = ms.Tensor(2.0)
    assert not fused(p, t, w, "mean", af, 1.0, True, box=True)
    assert plan("aot", p, t, None, "mean", af, width=4) == (0.0, 1.0, 1.0, True)
    with use_backend("composite", "losses.giou_loss"):
        assert not fused(p, t, w, "mean", 2.0, box=True)
        composite = losses.giou_loss(p, t, w, avg_factor=2.0).asnumpy()
    np.testing.assert_allclose(
        losses.giou_loss(p, t, w, avg_factor=2.0).asnumpy(), composite, rtol=1e-6
    )


def _smooth_cell_call(cell: Any) -> Callable[..., Any]:
    def fn(a: ms.Tensor, b: ms.Tensor, c: ms.Tensor) -> ms.Tensor:
        return cell(a, b, c, avg_factor=4.0)

    return fn


def test_graph_mode_matches_pynative():
    p, t, _, w4 = (ms.Tensor(a.astype(np.float32)) for a in _data())
    fn = _smooth_cell_call(losses.SmoothL1Loss(loss_weight=2.0))
    grad = ms.value_and_grad(fn, grad_position=(0, 1, 2))
    eager, eager_grads = grad(p, t, w4)
    graph, graph_grads = ms.jit(grad)(p, t, w4)
    np.testing.assert_array_equal(graph.asnumpy(), eager.asnumpy())
    for g, e in zip(graph_grads, eager_grads):
        np.testing.assert_array_equal(g.asnumpy(), e.asnumpy())
