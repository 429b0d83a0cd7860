"""The sort/selection kernels (``custom_ops/cpu/sort_kernel.cc``): PyTorch's CPU positions among
equal elements, which the op database (built to avoid unspecified ties) does not exercise.

Inputs with many ties (and NaN) are run through mscompat with the ``aot`` backend and compared
with torch 2.13 CPU exactly: values and int64 positions, PyNative and graph mode, every dtype.
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch

from mscompat.custom_ops import aot, use_backend, which
from mscompat.shape import kthvalue, median, mode, sort, topk

OPS = ("shape.sort", "shape.topk", "shape.kthvalue", "shape.median", "shape.mode")
DTYPES = ("float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64")


def _built() -> bool:
    try:
        aot.kernel_path("sort", "CPU")
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


def test_aot_is_chosen_on_cpu():
    for op in OPS:
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
