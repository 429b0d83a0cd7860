"""The all-element sum kernel behind the losses' 'mean'/'sum' (``losses.reduce_sum``): values
and gradients against NumPy in float64, on an input large enough for the kernel, PyNative and
graph mode."""

import mindspore as ms
import numpy as np
import pytest

from mscompat.custom_ops import use_backend, which
from mscompat.custom_ops.sum import MIN_KERNEL_SIZE, reduce_sum


def _mean(x):
    return reduce_sum(x, x.size)


def _sum(x):
    return reduce_sum(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fn", [_mean, _sum])
def test_kernel_sum_and_gradient(dtype, fn):
    x = np.random.default_rng(0).standard_normal((300, 257)).astype(dtype)
    assert x.size >= MIN_KERNEL_SIZE
    t = ms.Tensor(x)
    assert which("losses.reduce_sum", t, 1).backend == "aot"
    divisor = x.size if fn is _mean else 1
    want = x.astype(np.float64).sum() / divisor
    rtol = 1e-6 if dtype == np.float32 else 1e-13
    for run in (fn, ms.jit(fn)):
        np.testing.assert_allclose(float(run(t).asnumpy()), want, rtol=rtol)
    for grad in (ms.grad(fn), ms.jit(ms.grad(fn))):
        np.testing.assert_allclose(grad(t).asnumpy(), np.full(x.shape, 1.0 / divisor), rtol=rtol)


def test_small_inputs_use_mindspores_sum():
    t = ms.Tensor(np.ones((3, 4), np.float32))
    assert which("losses.reduce_sum", t, 1).backend == "composite"
    assert float(reduce_sum(t, t.size).asnumpy()) == 1.0
    with use_backend("aot", "losses.reduce_sum"), pytest.raises(Exception, match="elements"):
        reduce_sum(t)
