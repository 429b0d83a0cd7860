"""Pooling checks the op database cannot express: round trips, random sizes, doctests."""

from __future__ import annotations

import doctest

import mindspore as ms
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mscompat.shape.adaptive_pool
import mscompat.shape.max_pool
from mscompat.custom_ops import implementations, which
from mscompat.shape import adaptive_avg_pool2d, adaptive_max_pool2d, max_pool2d, max_unpool2d

torch = pytest.importorskip("torch")
F = torch.nn.functional


@pytest.mark.parametrize("module", [mscompat.shape.adaptive_pool, mscompat.shape.max_pool])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


def test_unpool_round_trip_overlapping_windows():
    """Overlapping windows give duplicate indices; unpooling keeps each maximum once."""
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, size=(2, 3, 7, 8)).astype(np.float32)
    values, indices = max_pool2d(ms.Tensor(x), 3, 1, 1, return_indices=True)
    ours = max_unpool2d(values, indices, 3, 1, 1, output_size=(7, 8)).asnumpy()
    tv, ti = F.max_pool2d(torch.from_numpy(x), 3, 1, 1, return_indices=True)
    np.testing.assert_array_equal(indices.asnumpy(), ti.numpy())
    expected = F.max_unpool2d(tv, ti, 3, 1, 1, output_size=(7, 8)).numpy()
    np.testing.assert_array_equal(ours, expected)


def test_pools_are_registered_with_a_composite():
    for name in ("adaptive_avg_pool2d", "adaptive_max_pool3d", "max_pool1d", "max_unpool2d"):
        assert "composite" in implementations(f"shape.{name}")
        assert which(f"shape.{name}").backend in ("aot", "native", "composite")


@settings(max_examples=12, deadline=None)
@given(
    h=st.integers(1, 9),
    w=st.integers(1, 9),
    oh=st.integers(1, 11),
    ow=st.integers(1, 11),
    seed=st.integers(0, 2**16),
)
def test_adaptive_random_sizes_match_torch(h, w, oh, ow, seed):
    x = np.random.default_rng(seed).integers(-2, 3, size=(2, h, w)).astype(np.float32)
    avg = adaptive_avg_pool2d(ms.Tensor(x), (oh, ow)).asnumpy()
    np.testing.assert_allclose(
        avg, F.adaptive_avg_pool2d(torch.from_numpy(x), (oh, ow)).numpy(), rtol=1e-6, atol=1e-6
    )
    values, indices = adaptive_max_pool2d(ms.Tensor(x), (oh, ow), return_indices=True)
    tv, ti = F.adaptive_max_pool2d(torch.from_numpy(x), (oh, ow), return_indices=True)
    np.testing.assert_array_equal(values.asnumpy(), tv.numpy())
    np.testing.assert_array_equal(indices.asnumpy(), ti.numpy())


@settings(max_examples=12, deadline=None)
@given(
    size=st.integers(1, 12),
    k=st.integers(1, 4),
    s=st.integers(1, 3),
    d=st.integers(1, 2),
    ceil=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_max_pool_random_windows_match_torch(size, k, s, d, ceil, seed):
    x = np.random.default_rng(seed).integers(-2, 3, size=(2, size, size + 1)).astype(np.float32)
    p = k // 2
    try:
        tv, ti = F.max_pool2d(torch.from_numpy(x), k, s, p, d, ceil, return_indices=True)
    except RuntimeError:
        return  # PyTorch rejects the sizes (output too small)
    if np.isinf(tv.numpy()).any():
        return  # a window entirely in the padding: we raise, see max_pool2d's docs
    values, indices = max_pool2d(ms.Tensor(x), k, s, p, d, ceil, return_indices=True)
    np.testing.assert_array_equal(values.asnumpy(), tv.numpy())
    np.testing.assert_array_equal(indices.asnumpy(), ti.numpy())


def _avg_fn(fn, out):
    def call(x):
        return fn(x, out)

    return call


@pytest.mark.parametrize(
    "name, shape, out",
    [
        ("adaptive_avg_pool1d", (2, 3, 11), 5),
        ("adaptive_avg_pool2d", (2, 3, 11, 13), (5, 4)),
        ("adaptive_avg_pool2d", (3, 7, 9), (9, 3)),  # unbatched, output larger than input
        ("adaptive_avg_pool3d", (2, 3, 6, 7, 9), (4, 5, 3)),
    ],
)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_adaptive_avg_aot_kernel_bit_identical(name, shape, out, dtype):
    """The aot kernel (chosen on request) is PyTorch's loop: same sums, same divisions."""
    from mscompat.custom_ops import aot, use_backend

    try:
        aot.kernel_path("pool", "CPU")
    except aot.KernelUnavailableError:
        pytest.skip("CPU kernels not built")
    fn = getattr(mscompat.shape.adaptive_pool, name)
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(dtype)
    tx = torch.from_numpy(x).requires_grad_()
    ty = getattr(torch.nn.functional, name)(tx, out)
    ct = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.from_numpy(ct))
    call = _avg_fn(fn, out)

    def loss(a, c):
        return (call(a) * c).sum()

    with use_backend("aot", f"shape.{name}"):
        got = ms.jit(call)(ms.Tensor(x)).asnumpy()
        dx = ms.grad(loss)(ms.Tensor(x), ms.Tensor(ct)).asnumpy()
    np.testing.assert_array_equal(got, ty.detach().numpy())
    np.testing.assert_array_equal(dx, tx.grad.numpy())
