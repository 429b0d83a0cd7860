"""The index kernels (``custom_ops/cpu/sort_kernel.cc``, ``pool_kernel.cc``) beyond what the op
database expresses.

PyTorch's CPU positions among equal elements and NaN (ties, NaN, the radix-sort case, the
gradient to the tied positions, max pooling windows with tied maxima and NaN) are reference
inputs of the sort and pooling entries (``references`` in ``mscompat/testing/db``), checked
exactly by ``tests/test_op_db.py::test_reference_inputs``. Here: which backend runs, that the
tie checks can fail (the stable composite differs from PyTorch's unstable order) and the
``take_along`` primitive, which has no PyTorch counterpart.
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch

from mscompat.custom_ops import aot, use_backend, which
from mscompat.shape import sort

OPS = ("shape.sort", "shape.topk", "shape.kthvalue", "shape.median", "shape.mode")
DTYPES = ("float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64")


def _built() -> bool:
    try:
        aot.kernel_path("sort", "CPU")
        aot.kernel_path("pool", "CPU")
    except aot.KernelUnavailableError:
        return False
    return True


pytestmark = pytest.mark.skipif(not _built(), reason="CPU sort kernel not built")


def _tied(shape, dtype, seed=0, nan=True):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, shape).astype(dtype)
    if nan and dtype.startswith("float"):
        x[rng.random(shape) < 0.05] = np.nan
    return x


POOL_OPS = tuple(f"shape.{k}_pool{d}d" for k in ("max", "adaptive_max") for d in (1, 2, 3))


def test_aot_is_chosen_on_cpu():
    for op in OPS + POOL_OPS:
        assert which(op).backend == "aot", which(op)


def test_unstable_sort_differs_from_stable_so_the_test_can_fail():
    x = _tied((4, 150), "float32", nan=False)
    t = torch.from_numpy(x)
    assert not torch.equal(torch.sort(t).indices, torch.sort(t, stable=True).indices)
    with use_backend("composite", "shape.sort"):
        composite = sort(ms.Tensor(x))[1].asnumpy()
    np.testing.assert_array_equal(composite, torch.sort(t, stable=True).indices.numpy())
    assert not np.array_equal(composite, torch.sort(t).indices.numpy())


# -- shape.take_along: the values at the positions (TakeAlong / PlaceAlong) ------------------


def _take_fn(axis):
    from mscompat.shape.sort import _take_along

    def fn(x, idx):
        return _take_along(x, axis, idx)

    return fn


@pytest.mark.parametrize("dtype", ("bool",) + DTYPES)
@pytest.mark.parametrize("axis", [2, 0])
def test_take_along_kernel_copies_every_dtype(dtype, axis):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 5, 6)) * 50).astype(dtype)
    order = np.argsort(rng.random((4, 5, 6)), axis=axis)
    idx = order[:3] if axis == 0 else order[:, :, :4]  # distinct positions, fewer than n
    assert which("shape.take_along").backend == "aot"
    got = _take_fn(axis)(ms.Tensor(x), ms.Tensor(idx.astype(np.int64))).asnumpy()
    np.testing.assert_array_equal(got, np.take_along_axis(x, idx, axis))


@pytest.mark.parametrize("graph", [False, True])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_take_along_gradient_places_the_cotangent(dtype, graph):
    """PlaceAlong, TakeAlong's bprop: the cotangent at the positions, zeros elsewhere; the
    composite (gather_elements) gives the same."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 9)).astype(dtype)
    idx = np.argsort(rng.random((6, 9)), axis=1)[:, :5].astype(np.int64)
    ct = rng.standard_normal((6, 5)).astype(dtype)
    fn = _take_fn(1)

    def loss(a, i, c):
        return (fn(a, i) * c).sum()

    g = ms.grad(loss)
    g = ms.jit(g) if graph else g
    want = np.zeros_like(x)
    np.put_along_axis(want, idx, ct, 1)
    args = (ms.Tensor(x), ms.Tensor(idx), ms.Tensor(ct))
    np.testing.assert_array_equal(g(*args).asnumpy(), want)
    with use_backend("composite", "shape.take_along"):
        np.testing.assert_array_equal(ms.grad(loss)(*args).asnumpy(), want)


def test_take_along_rejects_positions_out_of_range():
    """The kernel checks the positions itself: a bad one is an error, not a wild read."""
    bad = ms.Tensor(np.array([[0], [3]], np.int64))
    with pytest.raises(RuntimeError, match="TakeAlong"):
        _take_fn(1)(ms.Tensor(np.zeros((2, 3), np.float32)), bad).asnumpy()
