"""The resampling kernels (``custom_ops/cpu/pool_kernel.cc``, ``nearest_kernel.cc``,
``linear_kernel.cc``, ``cubic_kernel.cc``, ``fold_kernel.cc``, ``grid_sample_kernel.cc``) beyond
what the op database expresses.

Their bit-exact cases (duplicate unpooling indices on both backends, float16 nearest gradients,
both of PyTorch's bilinear code paths, bicubic down- and upsampling in float16/32/64, inf
inputs, im2col/col2im, NaN and far-outside grids, float16 5-D grid_sample gradients) are
reference inputs of the op database entries (``references`` in ``mscompat/testing/db``),
checked by ``tests/test_op_db.py::test_reference_inputs``; an out-of-range unpooling index
raises as in PyTorch (an error input of the unpooling entries). Here: which backend runs, and
PyTorch's "large" grid_sample sample, whose input gradient is PyTorch's only up to a few
elements (a fraction of elements check the database's tolerances cannot state).
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mscompat.custom_ops import aot, which
from mscompat.shape import grid_sample


def _built() -> bool:
    try:
        for name in ("pool", "nearest", "linear", "cubic", "fold", "grid_sample"):
            aot.kernel_path(name, "CPU")
    except aot.KernelUnavailableError:
        return False
    return True


pytestmark = pytest.mark.skipif(not _built(), reason="CPU kernels not built")


def _grads(fn, args, cotangent, argnums, graph):
    def loss(*a):
        return (fn(*a) * ms.Tensor(cotangent)).sum()

    g = ms.grad(loss, grad_position=argnums)
    g = ms.jit(g) if graph else g
    out = g(*[ms.Tensor(a) for a in args])
    return [t.asnumpy() for t in (out if isinstance(out, tuple) else (out,))]


@pytest.mark.parametrize("op", ["shape.max_unpool2d", "shape.interpolate", "shape.grid_sample"])
def test_aot_is_chosen_on_cpu(op):
    assert which(op).backend == "aot"


_LARGE = {}


def _large(dtype):
    """PyTorch's OpInfo "large" grid_sample sample: (2, 3, 345, 456) -> (270, 270)."""
    if dtype not in _LARGE:
        rng = np.random.default_rng(2)
        x = rng.standard_normal((2, 3, 345, 456)).astype(dtype)
        g = rng.uniform(-1.3, 1.3, (2, 270, 270, 2)).astype(dtype)
        ct = rng.standard_normal((2, 3, 270, 270)).astype(dtype)
        _LARGE[dtype] = (x, g, ct)
    return _LARGE[dtype]


def _grid_sample_both(x, g, ct, mode, padding, align):
    """(output, input gradient, grid gradient) of torch's grid_sample and of ours (PyNative)."""
    tx = torch.from_numpy(x).requires_grad_()
    tg = torch.from_numpy(g).requires_grad_()
    ty = F.grid_sample(tx, tg, mode, padding, align)
    ty.backward(torch.from_numpy(ct))

    def fn(a, b):
        return grid_sample(a, b, mode, padding, align)

    y = fn(ms.Tensor(x), ms.Tensor(g)).asnumpy()
    dx, dg = _grads(fn, (x, g), ct, (0, 1), False)
    return (ty.detach().numpy(), tx.grad.numpy(), tg.grad.numpy()), (y, dx, dg)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_kernel_bit_identical_to_torch(dtype, mode, padding):
    x, g, ct = _large(dtype)
    (ty, tdx, tdg), (y, dx, dg) = _grid_sample_both(x, g, ct, mode, padding, padding == "border")
    np.testing.assert_array_equal(y, ty)
    np.testing.assert_array_equal(dg, tdg)
    # The input gradient is summed in PyTorch's order up to a few elements (one rounding).
    close = np.isclose(dx, tdx, rtol=1e-6 if dtype == "float32" else 1e-14, atol=0)
    assert close.mean() > 0.9997 and np.allclose(dx, tdx, rtol=1e-5, atol=1e-5)
