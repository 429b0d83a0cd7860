"""``deform_conv2d``/``DeformConv2d`` beyond the op database: identities against PyTorch's
``conv2d`` (zero offsets are a convolution, equal integer offsets a shifted convolution), on
both backends, and torchvision's initialisation of the layer."""

from __future__ import annotations

import math

import mindspore as ms
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mscompat.custom_ops import use_backend, which
from mscompat.vision import DeformConv2d, deform_conv2d

BACKENDS = ("aot", "composite")


def _skip_unavailable(backend: str) -> None:
    choice = which("vision.deform_conv2d")
    if backend == "aot" and choice.backend != "aot":
        pytest.skip(f"aot kernel not available here: {choice.reason}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_offsets_are_conv2d(backend):
    """Zero offsets, no mask: torch's conv2d, with weight groups, stride, padding and
    dilation (float64)."""
    _skip_unavailable(backend)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 7, 6))
    w = rng.standard_normal((6, 2, 3, 2))
    b = rng.standard_normal(6)
    kw = {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2)}
    want = F.conv2d(torch.tensor(x), torch.tensor(w), torch.tensor(b), groups=2, **kw).numpy()
    off = np.zeros((2, 2 * 2 * 6, *want.shape[2:]))  # two offset groups
    with use_backend(backend, "vision.deform_conv2d"):
        got = deform_conv2d(ms.Tensor(x), ms.Tensor(off), ms.Tensor(w), ms.Tensor(b), **kw)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_offsets_are_a_shifted_conv2d(backend):
    """The same integer offset (dy, dx) everywhere, a mask of ones: a window of the conv2d of
    the zero-padded input, moved by (dy, dx) (the kernel reads the image itself where conv2d's
    padding would give zeros); gradients too (float64)."""
    _skip_unavailable(backend)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 6, 7))
    w = rng.standard_normal((4, 3, 3, 3))
    dy, dx = 2, -1
    off = np.zeros((2, 18, 6, 7))
    off[:, 0::2], off[:, 1::2] = dy, dx
    mask = np.ones((2, 9, 6, 7))
    xt = torch.tensor(x, requires_grad=True)
    full = F.conv2d(F.pad(xt, (4, 4, 4, 4)), torch.tensor(w))  # x[a + i - 4] at position a
    want = full[:, :, 3 + dy : 3 + dy + 6, 3 + dx : 3 + dx + 7]  # a = o - 1 + d + 4
    ct = rng.standard_normal(want.shape)
    want.backward(torch.tensor(ct))

    def loss(x_: ms.Tensor) -> ms.Tensor:
        out = deform_conv2d(x_, ms.Tensor(off), ms.Tensor(w), padding=1, mask=ms.Tensor(mask))
        return (out * ms.Tensor(ct)).sum(), out

    with use_backend(backend, "vision.deform_conv2d"):
        (_, out), dx_ = ms.value_and_grad(loss, has_aux=True)(ms.Tensor(x))
    np.testing.assert_allclose(out.asnumpy(), want.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dx_.asnumpy(), xt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_layer_initialisation_is_torchvisions():
    """Kaiming uniform with a = sqrt(5): weight and bias uniform in +-1/sqrt(fan_in), float32."""
    ms.set_seed(0)
    layer = DeformConv2d(8, 16, kernel_size=(3, 2), groups=2)
    weight, bias = layer.weight.asnumpy(), layer.bias.asnumpy()
    bound = 1 / math.sqrt(4 * 3 * 2)
    assert weight.shape == (16, 4, 3, 2) and weight.dtype == np.float32
    assert bias.shape == (16,) and bias.dtype == np.float32
    for values in (weight, bias):
        assert np.abs(values).max() <= bound
        assert np.abs(values).max() > 0.8 * bound  # spread over the range, not a constant
    assert DeformConv2d(4, 4, 3, bias=False).bias is None
    assert repr(DeformConv2d(4, 8, 3, padding=1, groups=2, bias=False)) == (
        "DeformConv2d(4, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2, "
        "bias=False)"
    )


def test_layer_initial_values():
    w = np.full((6, 2, 3, 3), 0.5, np.float32)
    layer = DeformConv2d(4, 6, 3, groups=2, weight_init=w, bias_init=ms.Tensor(np.ones(6)))
    assert (layer.weight.asnumpy() == 0.5).all() and (layer.bias.asnumpy() == 1).all()
    with pytest.raises(ValueError, match=r"weight_init must have shape \(6, 4, 3, 3\)"):
        DeformConv2d(4, 6, 3, weight_init=w)


def test_aot_is_chosen_on_cpu():
    choice = which("vision.deform_conv2d")
    assert choice.backend in ("aot", "composite")
    if choice.backend == "composite":
        pytest.skip(f"aot kernel not built here: {choice.reason}")
    assert "probe passed" in choice.reason or "aot" in choice.reason
