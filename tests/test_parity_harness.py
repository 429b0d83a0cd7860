"""The parity machinery must catch wrong implementations, not just pass right ones."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch
from mindspore import ops

from mscompat.losses import sigmoid_focal_loss
from mscompat.testing import ParityError, Tolerance, assert_parity, get_op
from mscompat.testing.opinfo import OpInfo
from mscompat.testing.parity import compare_arrays
from mscompat.testing.references.mmdet import py_sigmoid_focal_loss
from mscompat.testing.runner import run_case

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 5)).astype(np.float32)
T = (RNG.uniform(size=(4, 5)) < 0.3).astype(np.float32)


def test_right_port_passes_both_modes_with_grads():
    report = assert_parity(sigmoid_focal_loss, py_sigmoid_focal_loss, X, T, grad_argnums=[0])
    modes = {c.mode for c in report.comparisons}
    labels = {c.label for c in report.comparisons}
    assert modes == {"pynative", "graph"}
    assert labels == {"output[0]", "grad[input 0]"}
    assert report.ok


def _guide_bug_alpha_swapped(pred, target):
    # a classic porting slip: alpha applied to negatives instead of positives
    return sigmoid_focal_loss(pred, target, alpha=0.75)


def test_wrong_forward_is_caught_with_a_readable_report():
    with pytest.raises(ParityError) as info:
        assert_parity(_guide_bug_alpha_swapped, py_sigmoid_focal_loss, X, T, grad_argnums=[0])
    text = str(info.value)
    assert "output[0]" in text and "FAIL" in text and "max abs err" in text
    assert not info.value.report.ok


def test_wrong_gradient_only_is_caught():
    # forward right, backward wrong: stop_gradient drops the modulating factor's gradient
    def focal_no_grad_through_weight(pred, target):
        p = ops.sigmoid(pred)
        pt = ops.stop_gradient((1 - p) * target + p * (1 - target))
        w = (0.25 * target + 0.75 * (1 - target)) * pt * pt
        return (
            ops.binary_cross_entropy_with_logits(
                pred, target, ops.ones_like(pred), ops.ones_like(pred), "none"
            )
            * w
        ).mean()

    with pytest.raises(ParityError) as info:
        assert_parity(focal_no_grad_through_weight, py_sigmoid_focal_loss, X, T, grad_argnums=[0])
    failed = {c.label for c in info.value.report.comparisons if not c.ok}
    assert failed == {"grad[input 0]"}


# MindSpore's graph parser cannot read a lambda written inside a call: ports are plain defs.
def _sum_as_float64(x):
    return ops.cast(x, ms.float64).sum()


def _sum_axis0(x):
    return x.sum(axis=0)


def _scaled(x):
    return x * (1 + 1e-5)


def _torch_sum(x):
    return x.sum()


def test_dtype_and_shape_differences_are_failures():
    with pytest.raises(ParityError, match="dtype float64 != float32"):
        assert_parity(_sum_as_float64, _torch_sum, X, grad=False)
    with pytest.raises(ParityError, match="shape"):
        assert_parity(_sum_axis0, _torch_sum, X, grad=False)


def test_small_error_is_caught_at_float32_tolerance():
    with pytest.raises(ParityError):
        assert_parity(_scaled, torch.clone, X, grad=False)


def test_nan_and_inf_patterns_must_match():
    tol = Tolerance(1e-5, 1e-5)
    assert compare_arrays(np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), tol)[2]
    assert not compare_arrays(np.array([np.nan, 1.0]), np.array([0.0, 1.0]), tol)[2]
    assert not compare_arrays(np.array([np.inf]), np.array([-np.inf]), tol)[2]
    assert compare_arrays(np.array([np.inf]), np.array([np.inf]), tol)[2]


def test_op_db_runner_catches_a_broken_entry():
    good = get_op("losses.sigmoid_focal_loss")

    def broken(pred, target, weight=None, gamma=2.0, alpha=0.25, reduction="mean", avg_factor=None):
        # ignores avg_factor: right on most samples, wrong where avg_factor matters
        return sigmoid_focal_loss(pred, target, weight, gamma, alpha, reduction, None)

    bad = OpInfo(
        name="broken_focal",
        op=broken,
        ref=good.ref,
        sample_inputs=good.sample_inputs,
        mirrors=good.mirrors,
    )
    names = [s.name for s in bad.samples("float32")]
    index = names.index("avg_factor mean")
    result = run_case(bad, "float32", index, modes=("pynative",))
    assert not result.report("pynative", "forward").ok
    fine = names.index("hard targets, defaults")
    assert run_case(bad, "float32", fine, modes=("pynative",)).report("pynative", "forward").ok


def test_torch_module_reference_works():
    report = assert_parity(ops.tanh, torch.nn.Tanh(), X, modes=("pynative",))
    assert report.ok
