"""The index kernels (``custom_ops/cpu/sort_kernel.cc``, ``pool_kernel.cc``): PyTorch's CPU
positions among equal elements and NaN, which the op database (built to avoid unspecified
ties) does not exercise.

Inputs with many ties (and NaN) are run through mscompat with the ``aot`` backend and compared
with torch 2.13 CPU exactly: values, int64 positions and gradients, PyNative and graph mode.
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch

from mscompat.custom_ops import aot, use_backend, which
from mscompat.shape import (
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    kthvalue,
    max_pool1d,
    max_pool2d,
    max_pool3d,
    median,
    mode,
    sort,
    topk,
)

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


def _run(fn, x, mode_):
    xt = ms.Tensor(x)
    if mode_ == "graph":
        fn = ms.jit(fn)
    return [o.asnumpy() for o in fn(xt)]


def _sort_dim0(x):
    return sort(x, 0)


def _sort_desc(x):
    return sort(x, -1, True)


def _sort_stable(x):
    return sort(x, 1, stable=True)


def _topk_big_k(x):
    return topk(x, 20, 1, True, True)


def _topk_small_unsorted(x):
    return topk(x, 20, 1, False, False)


def _topk_partial(x):  # 64 * k <= n: PyTorch's partial_sort branch
    return topk(x, 2, 1)


def _kth(x):
    return kthvalue(x, 7, 1)


def _median(x):
    return median(x, 1)


def _mode(x):
    return mode(x, 1)


CASES = [
    (_sort_dim0, lambda t: torch.sort(t, 0)),
    (_sort_desc, lambda t: torch.sort(t, -1, True)),
    (_sort_stable, lambda t: torch.sort(t, dim=1, stable=True)),
    (_topk_big_k, lambda t: torch.topk(t, 20, 1, True, True)),
    (_topk_small_unsorted, lambda t: torch.topk(t, 20, 1, False, False)),
    (_topk_partial, lambda t: torch.topk(t, 2, 1)),
    (_kth, lambda t: torch.kthvalue(t, 7, 1)),
    (_median, lambda t: torch.median(t, 1)),
    (_mode, lambda t: torch.mode(t, 1)),
]


POOL_OPS = tuple(f"shape.{k}_pool{d}d" for k in ("max", "adaptive_max") for d in (1, 2, 3))


def test_aot_is_chosen_on_cpu():
    for op in OPS + POOL_OPS:
        assert which(op).backend == "aot", which(op)


@pytest.mark.parametrize("fn, ref", CASES, ids=[c[0].__name__.strip("_") for c in CASES])
@pytest.mark.parametrize("dtype", DTYPES)
def test_ties_match_torch_pynative(fn, ref, dtype):
    # (4, 150): rows longer than 16 (std::sort's insertion-sort cutoff) and than 64 * k for k=2.
    x = _tied((4, 150), dtype, seed=DTYPES.index(dtype))
    expected = [o.numpy() for o in ref(torch.from_numpy(x))]
    got = _run(fn, x, "pynative")
    for g, e in zip(got, expected):
        assert g.dtype == e.dtype
        np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("fn, ref", CASES, ids=[c[0].__name__.strip("_") for c in CASES])
def test_ties_match_torch_graph(fn, ref):
    x = _tied((4, 150), "float32", seed=11)
    expected = [o.numpy() for o in ref(torch.from_numpy(x))]
    for g, e in zip(_run(fn, x, "graph"), expected):
        np.testing.assert_array_equal(g, e)


def test_unstable_sort_differs_from_stable_so_the_test_can_fail():
    x = _tied((4, 150), "float32", nan=False)
    t = torch.from_numpy(x)
    assert not torch.equal(torch.sort(t).indices, torch.sort(t, stable=True).indices)
    with use_backend("composite", "shape.sort"):
        composite = sort(ms.Tensor(x))[1].asnumpy()
    np.testing.assert_array_equal(composite, torch.sort(t, stable=True).indices.numpy())
    assert not np.array_equal(composite, torch.sort(t).indices.numpy())


def test_radix_sort_case_is_stable():
    # PyTorch sorts a 1-D integer tensor of >= 32768 elements ascending with a stable radix sort.
    x = _tied((40000,), "int32")
    got = sort(ms.Tensor(x))[1].asnumpy()
    np.testing.assert_array_equal(got, torch.sort(torch.from_numpy(x)).indices.numpy())
    x2 = _tied((1, 40000), "int32")  # 2-D: std::sort, not stable
    got2 = sort(ms.Tensor(x2))[1].asnumpy()
    np.testing.assert_array_equal(got2, torch.sort(torch.from_numpy(x2)).indices.numpy())


def test_gradient_goes_to_torch_positions():
    x = _tied((3, 100), "float32", nan=False)

    def loss(a):
        return (topk(a, 30, 1, False, False)[0] * ms.Tensor(np.arange(30, dtype=np.float32))).sum()

    got = ms.jit(ms.grad(loss))(ms.Tensor(x)).asnumpy()
    t = torch.from_numpy(x).requires_grad_()
    (torch.topk(t, 30, 1, False, False)[0] * torch.arange(30.0)).sum().backward()
    np.testing.assert_array_equal(got, t.grad.numpy())


# ----------------------------------------------------------------------------- max pooling


def _mp1(x):
    return max_pool1d(x, 3, 2, 1, 1, True, True)


def _mp2(x):
    return max_pool2d(x, 3, 2, 1, 2, False, True)


def _mp3(x):
    return max_pool3d(x, 2, 1, 1, 1, True, True)


def _amp1(x):
    return adaptive_max_pool1d(x, 5, True)


def _amp2(x):
    return adaptive_max_pool2d(x, (4, 7), True)


def _amp3(x):
    return adaptive_max_pool3d(x, (2, 3, 5), True)


def _pool_cases():
    f = torch.nn.functional
    return [
        ("max_pool1d", _mp1, lambda t: f.max_pool1d(t, 3, 2, 1, 1, True, True), (2, 3, 17)),
        ("max_pool2d", _mp2, lambda t: f.max_pool2d(t, 3, 2, 1, 2, False, True), (2, 3, 11, 12)),
        ("max_pool3d", _mp3, lambda t: f.max_pool3d(t, 2, 1, 1, 1, True, True), (1, 2, 5, 6, 4)),
        ("adaptive_max_pool1d", _amp1, lambda t: f.adaptive_max_pool1d(t, 5, True), (2, 3, 13)),
        (
            "adaptive_max_pool2d",
            _amp2,
            lambda t: f.adaptive_max_pool2d(t, (4, 7), True),
            (2, 3, 11, 9),
        ),
        (
            "adaptive_max_pool3d",
            _amp3,
            lambda t: f.adaptive_max_pool3d(t, (2, 3, 5), True),
            (1, 2, 5, 7, 6),
        ),
    ]


POOL_CASES = _pool_cases()


@pytest.mark.parametrize("name, fn, ref, shape", POOL_CASES, ids=[c[0] for c in POOL_CASES])
@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
def test_pool_ties_and_nan_match_torch(name, fn, ref, shape, dtype):
    x = _tied(shape, dtype, seed=3, nan=True)  # 5 levels: many tied maxima, some NaN windows
    tv, ti = ref(torch.from_numpy(x))
    v, i = fn(ms.Tensor(x))
    np.testing.assert_array_equal(i.asnumpy(), ti.numpy())
    np.testing.assert_array_equal(v.asnumpy(), tv.numpy())


@pytest.mark.parametrize("name, fn, ref, shape", POOL_CASES, ids=[c[0] for c in POOL_CASES])
def test_pool_gradient_graph_mode(name, fn, ref, shape):
    x = _tied(shape, "float32", seed=5, nan=False)
    ct = np.random.default_rng(1).standard_normal(ref(torch.from_numpy(x))[0].shape)
    ct = ct.astype(np.float32)

    def loss(a):
        return (fn(a)[0] * ms.Tensor(ct)).sum()

    got = ms.jit(ms.grad(loss))(ms.Tensor(x)).asnumpy()
    t = torch.from_numpy(x).requires_grad_()
    (ref(t)[0] * torch.from_numpy(ct)).sum().backward()
    np.testing.assert_allclose(got, t.grad.numpy(), rtol=1e-6, atol=1e-6)


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
