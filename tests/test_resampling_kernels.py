"""The unpooling, nearest, linear, bicubic, im2col/col2im and grid_sample kernels
(``custom_ops/cpu/pool_kernel.cc``, ``nearest_kernel.cc``, ``linear_kernel.cc``,
``cubic_kernel.cc``, ``fold_kernel.cc``, ``grid_sample_kernel.cc``) on inputs the op database
does not build (or compares only within a tolerance):
duplicate and out-of-range unpooling indices, float16 nearest gradients, both of PyTorch's
bilinear code paths, bicubic down- and upsampling in float16/32/64, float64 source indices next
to an integer, inf inputs, PyTorch's "large" grid_sample sample, NaN / far-outside grids and
float16 5-D grid_sample gradients.
Compared with torch 2.13 CPU exactly where the kernels reproduce PyTorch's arithmetic, PyNative
and graph mode.
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mscompat.custom_ops import aot, use_backend, which
from mscompat.shape import fold, grid_sample, interpolate, max_unpool2d, unfold


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


def _unpool(x, idx):
    return max_unpool2d(x, idx, 2, output_size=(4, 4))


@pytest.mark.parametrize("backend", ["aot", "composite"])
def test_unpool_duplicates_last_wins_and_gradient_gathers(backend):
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 2, 2, 2)
    idx = np.array([[[[5, 5], [0, 5]], [[15, 3], [3, 3]]]], np.int64)  # repeated positions
    ct = np.random.default_rng(0).standard_normal((1, 2, 4, 4)).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_()
    want = F.max_unpool2d(tx, torch.from_numpy(idx), 2, output_size=(4, 4))
    want.backward(torch.from_numpy(ct))
    want = want.detach()
    with use_backend(backend, "shape.max_unpool2d"):
        for graph in (False, True):
            fn = ms.jit(_unpool) if graph else _unpool
            got = fn(ms.Tensor(x), ms.Tensor(idx)).asnumpy()
            np.testing.assert_array_equal(got, want.numpy())
            (dx,) = _grads(_unpool, (x, idx), ct, (0,), graph)
            np.testing.assert_array_equal(dx, tx.grad.numpy())


def test_unpool_out_of_range_index_is_dropped():
    """PyTorch raises; both backends drop the value (documented) and give it no gradient."""
    x = np.ones((1, 1, 1, 2), np.float32)
    idx = np.array([[[[1, 99]]]], np.int64)
    for backend in ("aot", "composite"):
        with use_backend(backend, "shape.max_unpool2d"):
            got = max_unpool2d(ms.Tensor(x), ms.Tensor(idx), 2, output_size=(2, 4)).asnumpy()
        assert got.reshape(-1).tolist() == [0.0, 1.0] + [0.0] * 6


def _nearest(x):
    return interpolate(x, size=(7, 10), mode="nearest")


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
@pytest.mark.parametrize("graph", [False, True])
def test_nearest_kernel_matches_torch_exactly(dtype, graph):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 5, 4)).astype(dtype)
    ct = rng.standard_normal((2, 3, 7, 10)).astype(dtype)
    tx = torch.from_numpy(x).requires_grad_()
    ty = F.interpolate(tx, size=(7, 10), mode="nearest")
    ty.backward(torch.from_numpy(ct))
    fn = ms.jit(_nearest) if graph else _nearest
    np.testing.assert_array_equal(fn(ms.Tensor(x)).asnumpy(), ty.detach().numpy())
    # float16: PyTorch accumulates the repeated gradients in float32 and rounds once.
    (dx,) = _grads(_nearest, (x,), ct, (0,), graph)
    np.testing.assert_array_equal(dx, tx.grad.numpy())


def _linear_fn(mode, kwargs):
    def fn(x):
        return interpolate(x, mode=mode, **kwargs)

    return fn


_MODE = {3: "linear", 4: "bilinear", 5: "trilinear"}
_LINEAR_CASES = {
    # PyTorch's generic kernel (out_h + out_w > 128)
    "bilinear x2 generic": ((2, 5, 32, 64), {"scale_factor": 2}),
    "bilinear down, corners": ((1, 3, 50, 60), {"size": (31, 100), "align_corners": True}),
    # its channels-last kernel (out_h + out_w <= 128): vector lanes and scalar tail channels
    "bilinear small, 11 channels": ((2, 11, 7, 9), {"scale_factor": (1.7, 2.3)}),
    "bilinear 1x1 input, 6 channels": ((1, 6, 1, 1), {"size": (100, 90)}),
    "linear": ((2, 4, 9), {"size": 20}),
    "linear down, corners": ((2, 3, 60), {"size": 100, "align_corners": True}),
    "trilinear": ((2, 3, 4, 5, 6), {"size": (7, 9, 11)}),
    "trilinear recompute": ((1, 2, 6, 5, 4), {"scale_factor": 0.6, "recompute_scale_factor": True}),
}
_LINEAR_GRAPH = ("bilinear x2 generic", "bilinear small, 11 channels", "trilinear")


#: PyTorch's float16 channels-last kernel (small 2-D outputs) has its own vector arithmetic: the
#: kernel's float16 results there are within 1 ulp in a few elements (gradients exact).
_LINEAR_NOT_HALF = ("bilinear small, 11 channels", "bilinear 1x1 input, 6 channels")


def _linear_params():
    for name in _LINEAR_CASES:
        for dtype in ("float16", "float32", "float64"):
            if dtype == "float16" and name in _LINEAR_NOT_HALF:
                continue
            yield pytest.param(name, dtype, False, id=f"{name}-{dtype}")
            if name in _LINEAR_GRAPH and dtype == "float32":
                yield pytest.param(name, dtype, True, id=f"{name}-{dtype}-graph")


def _check_exact(mode, shape, kwargs, dtype, graph):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(shape).astype(dtype)
    tx = torch.from_numpy(x).requires_grad_()
    ty = F.interpolate(tx, mode=mode, **kwargs)
    ct = rng.standard_normal(tuple(ty.shape)).astype(dtype)
    ty.backward(torch.from_numpy(ct))
    fn = _linear_fn(mode, kwargs)
    got = (ms.jit(fn) if graph else fn)(ms.Tensor(x)).asnumpy()
    np.testing.assert_array_equal(got, ty.detach().numpy())
    (dx,) = _grads(fn, (x,), ct, (0,), graph)
    np.testing.assert_array_equal(dx, tx.grad.numpy())


@pytest.mark.parametrize("name, dtype, graph", list(_linear_params()))
def test_linear_kernel_matches_torch_exactly(name, dtype, graph):
    """Forward and input gradient bit-identical to torch 2.13 CPU (its fused multiply-adds,
    its floorf on float64 source indices, its backward accumulation order; float16: float16
    forward weights, float32 backward accumulation)."""
    shape, kwargs = _LINEAR_CASES[name]
    _check_exact(_MODE[len(shape)], shape, kwargs, dtype, graph)


_CUBIC_CASES = {
    # PyTorch's OpInfo "large" sample: the forward's fused source index and coefficients
    # differ from the backward's unfused ones (the gradient was 6e-5 off with shared weights)
    "down 345x456 -> 270x270": ((1, 2, 345, 456), {"size": (270, 270)}),
    "down, corners": ((2, 3, 40, 50), {"size": (27, 31), "align_corners": True}),
    "up x2": ((2, 3, 16, 20), {"scale_factor": 2}),
    "up 2.3, taps clamped at the border": ((1, 2, 5, 7), {"scale_factor": 2.3}),
    "same size (PyTorch copies the gradient)": ((1, 2, 6, 5), {"size": (6, 5)}),
    "1x1 input": ((1, 3, 1, 1), {"size": (3, 4), "align_corners": True}),
}
_CUBIC_GRAPH = ("down, corners", "up x2")


def _cubic_params():
    for name in _CUBIC_CASES:
        for dtype in ("float16", "float32", "float64"):
            yield pytest.param(name, dtype, False, id=f"{name}-{dtype}")
            if name in _CUBIC_GRAPH and dtype != "float64":
                yield pytest.param(name, dtype, True, id=f"{name}-{dtype}-graph")


@pytest.mark.parametrize("name, dtype, graph", list(_cubic_params()))
def test_cubic_kernel_matches_torch_exactly(name, dtype, graph):
    """Bicubic forward and input gradient bit-identical to torch 2.13 CPU: the forward's
    fused multiply-adds (source index, two of the coefficient polynomials, the tap sums),
    float16 weights for float16, the backward's own unfused coefficients and loop order."""
    shape, kwargs = _CUBIC_CASES[name]
    _check_exact("bicubic", shape, kwargs, dtype, graph)


def test_linear_kernel_keeps_inf_within_its_taps():
    x = np.zeros((1, 1, 4, 6), np.float32)
    x[0, 0, 1, 2] = np.inf
    want = F.interpolate(torch.from_numpy(x), size=(8, 12), mode="bilinear").numpy()
    got = interpolate(ms.Tensor(x), size=(8, 12), mode="bilinear").asnumpy()
    np.testing.assert_array_equal(got, want)  # inf near (2..3, 4..5), NaN where 0 * inf
    assert np.isfinite(got[0, 0, 6:]).all()


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


_HALF_5D = {}


def _half_5d():
    """float16 5-D input, a grid reaching past the borders (many points clamped onto the same
    border voxels: long float16 accumulations) and a cotangent."""
    if not _HALF_5D:
        rng = np.random.default_rng(5)
        x = rng.standard_normal((2, 3, 5, 6, 7)).astype(np.float16)
        g = rng.uniform(-1.4, 1.4, (2, 4, 5, 6, 3)).astype(np.float16)
        ct = rng.standard_normal((2, 3, 4, 5, 6)).astype(np.float16)
        _HALF_5D["x"] = (x, g, ct)
    return _HALF_5D["x"]


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_5d_float16_gradients_bit_identical(mode, padding, align):
    """float16 5-D: the composite forward and the GridSample3dHalfBackward kernel give PyTorch's
    output and both gradients bit for bit (PyTorch rounds every operation of its scalar
    kernel to float16, including each += into grad_input and the grid-gradient sums)."""
    x, g, ct = _half_5d()
    want, got = _grid_sample_both(x, g, ct, mode, padding, align)
    for w, o in zip(want, got):  # output, input gradient, grid gradient
        np.testing.assert_array_equal(o, w)


def test_grid_sample_5d_float16_graph_and_composite_grid_gradient():
    """The kernel's gradients in graph mode; the composite (no C++ build) gives PyTorch's grid
    gradient bit for bit and its input gradient to float16 accuracy."""
    x, g, ct = _half_5d()
    tx = torch.from_numpy(x).requires_grad_()
    tg = torch.from_numpy(g).requires_grad_()
    F.grid_sample(tx, tg, "bilinear", "border", True).backward(torch.from_numpy(ct))
    want_dx, want_dg = tx.grad.numpy(), tg.grad.numpy()

    def fn(a, b):
        return grid_sample(a, b, "bilinear", "border", True)

    dx, dg = _grads(fn, (x, g), ct, (0, 1), True)
    np.testing.assert_array_equal(dx, want_dx)
    np.testing.assert_array_equal(dg, want_dg)
    with use_backend("composite", "shape.grid_sample"):
        dx, dg = _grads(fn, (x, g), ct, (0, 1), False)
    np.testing.assert_array_equal(dg, want_dg)
    np.testing.assert_allclose(dx, want_dx, rtol=2e-2, atol=2e-2)


def _gs_zeros(a, b):
    return grid_sample(a, b, "bilinear", "zeros", False)


def _gs_border(a, b):
    return grid_sample(a, b, "bicubic", "border", True)


@pytest.mark.parametrize(
    "fn, mode, padding, align",
    [
        (_gs_zeros, "bilinear", "zeros", False),
        (_gs_border, "bicubic", "border", True),
    ],
)
def test_grid_sample_nan_and_far_points_graph(fn, mode, padding, align):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
    g = rng.uniform(-1, 1, (1, 3, 4, 2)).astype(np.float32)
    g[0, 0, :, 0] = [np.nan, 1e30, -1e30, 3.0]
    want = F.grid_sample(torch.from_numpy(x), torch.from_numpy(g), mode, padding, align)
    got = ms.jit(fn)(ms.Tensor(x), ms.Tensor(g)).asnumpy()
    np.testing.assert_array_equal(got, want.numpy())


def _unfold_fn(kwargs):
    def fn(x):
        return unfold(x, **kwargs)

    return fn


def _fold_fn(size, kwargs):
    def fn(x):
        return fold(x, size, **kwargs)

    return fn


_FOLD_CASES = {
    "k3 p1 (a conv's im2col)": ((2, 3, 9, 11), {"kernel_size": 3, "padding": 1}),
    "k2 s2 (patches)": ((1, 2, 8, 8), {"kernel_size": 2, "stride": 2}),
    "k(3, 2) d(2, 1) p(2, 0) s(1, 3)": (
        (2, 4, 10, 7),
        {"kernel_size": (3, 2), "dilation": (2, 1), "padding": (2, 0), "stride": (1, 3)},
    ),
}


def _fold_params():
    for name in _FOLD_CASES:
        for dtype in ("float16", "float32", "float64"):
            yield pytest.param(name, dtype, False, id=f"{name}-{dtype}")
        yield pytest.param(name, "float16", True, id=f"{name}-float16-graph")


@pytest.mark.parametrize("name, dtype, graph", list(_fold_params()))
def test_fold_kernels_match_torch_exactly(name, dtype, graph):
    """unfold (a copy) and fold (PyTorch's col2im order; float16 rounded after every addition),
    forward and gradient, bit-identical to torch 2.13 CPU."""
    shape, kwargs = _FOLD_CASES[name]
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    tx = torch.from_numpy(x).requires_grad_()
    ty = F.unfold(tx, **kwargs)
    ct = (rng.standard_normal(tuple(ty.shape)) * 4).astype(dtype)
    ty.backward(torch.from_numpy(ct))
    fn = _unfold_fn(kwargs)
    np.testing.assert_array_equal(
        (ms.jit(fn) if graph else fn)(ms.Tensor(x)).asnumpy(), ty.detach().numpy()
    )
    (dx,) = _grads(fn, (x,), ct, (0,), graph)
    np.testing.assert_array_equal(dx, tx.grad.numpy())  # col2im of ct
    # fold of the columns ct: the same col2im; its gradient is im2col of the cotangent
    tc = torch.from_numpy(ct).requires_grad_()
    tf = F.fold(tc, shape[2:], **kwargs)
    tf.backward(torch.from_numpy(x))
    ffn = _fold_fn(shape[2:], kwargs)
    np.testing.assert_array_equal(
        (ms.jit(ffn) if graph else ffn)(ms.Tensor(ct)).asnumpy(), tf.detach().numpy()
    )
    (dc,) = _grads(ffn, (ct,), x, (0,), graph)
    np.testing.assert_array_equal(dc, tc.grad.numpy())
