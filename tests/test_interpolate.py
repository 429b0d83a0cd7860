"""Documented differences of mscompat.shape.interpolate from PyTorch (see its docstring)."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest

from mscompat.shape import interpolate

torch = pytest.importorskip("torch")


def test_nearest_1d_gradient_is_the_forward_adjoint():
    # Size 5 -> 5 with scale 1.1: PyTorch's forward reads [0, 0, 1, 2, 3] (no special case),
    # its backward treats the axis as a copy; mscompat's gradient is the forward's adjoint.
    x = np.arange(5, dtype=np.float32).reshape(1, 1, 5)
    y = interpolate(ms.Tensor(x), scale_factor=1.1)
    tx = torch.from_numpy(x).requires_grad_()
    ty = torch.nn.functional.interpolate(tx, scale_factor=1.1)
    np.testing.assert_array_equal(y.asnumpy(), ty.detach().numpy())
    grad = ms.grad(lambda t: interpolate(t, scale_factor=1.1).sum())(ms.Tensor(x))
    np.testing.assert_array_equal(grad.asnumpy().ravel(), [2, 1, 1, 1, 0])
    ty.sum().backward()
    assert tx.grad.numpy().ravel().tolist() == [1, 1, 1, 1, 1]  # PyTorch's inconsistent rule


def test_antialias_output_width_1_is_separable():
    # PyTorch 2.13 repeats the first row here; mscompat resamples H and W independently.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 1, 7, 3))
    got = interpolate(ms.Tensor(x), size=(5, 1), mode="bilinear", antialias=True).asnumpy()
    t = torch.from_numpy(x)
    f = torch.nn.functional.interpolate
    w_first = f(t, size=(7, 1), mode="bilinear", antialias=True)  # W alone: correct in torch
    h_then = f(w_first.transpose(2, 3), size=(1, 5), mode="bilinear", antialias=True)
    np.testing.assert_allclose(got, h_then.transpose(2, 3).numpy(), rtol=1e-12, atol=1e-12)
