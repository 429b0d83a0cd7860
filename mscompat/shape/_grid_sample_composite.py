"""The composite ``grid_sample``: PyTorch's CPU kernels op for op, in MindSpore ops.

The vectorized 2-D kernel (``aten/src/ATen/native/cpu/GridSamplerKernel.cpp``) for 4-D input and
the generic 3-D kernel (``GridSampler.cpp`` / ``GridSampler.h``) for 5-D input, so that values at
exact pixel centres, on borders and far outside land where PyTorch puts them, and gradients
w.r.t. ``grid`` use the same conventions (the clip has zero gradient on the border itself;
reflection flips the sign). Input values are read with one batched gather per corner (taps out
of bounds read a zero appended to the input), so the gradient w.r.t. ``input`` is a scatter-add
of the interpolation weights. float16 is computed as PyTorch's CPU kernels do: every arithmetic
op in float32, rounded to float16 at once; 5-D float16 has PyTorch's float16 backward
(:class:`_Half3d`).
"""

from __future__ import annotations

from typing import Callable, List, Tuple

import mindspore as ms
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat.custom_ops import grid_sample as _grid_kernels
from mscompat.custom_ops.registry import device_target

_MODES = ("bilinear", "nearest", "bicubic")
_PADDINGS = ("zeros", "border", "reflection")
_A = -0.75  # cubic convolution constant, as PyTorch (UpSampleBicubic2d.h)

Rounder = Callable[[Tensor], Tensor]


@constexpr
def _options(mode: str, padding_mode: str, align_corners: bool) -> Tensor:
    """The kernels' ``opts`` Tensor for a (mode, padding_mode, align_corners) configuration."""
    return Tensor(_grid_kernels.options(mode, padding_mode, align_corners))


def _identity(x: Tensor) -> Tensor:
    return x


def _half_round(x: Tensor) -> Tensor:
    """Round a float32 intermediate to float16 and back (one PyTorch float16 op)."""
    return x.astype(ms.float16).astype(ms.float32)


# ----------------------------------------------------------------------------- coordinates


def _clip(x: Tensor, size: int, nan_to_max: bool) -> Tensor:
    """Clamp to ``[0, size - 1]``; zero gradient on the borders themselves (PyTorch).

    NaN becomes 0 in the vectorized 2-D kernel and ``size - 1`` in the generic 3-D kernel.
    """
    hi = float(size - 1)
    zero = ops.zeros_like(x)
    top = ops.full_like(x, hi)
    if nan_to_max:
        return ops.where(x <= 0, zero, ops.where(x < hi, x, top))
    return ops.where(x > 0, ops.where(x < hi, x, top), zero)


def _reflect_2d(x: Tensor, size: int, align_corners: bool, r: Rounder) -> Tensor:
    """The vectorized kernel's reflection: fold ``|x - low|`` by ``2 * span``, then mirror."""
    if align_corners:
        if size <= 1:
            return ops.zeros_like(x)
        low, twice_span = 0.0, float(2 * (size - 1))
    else:
        low, twice_span = -0.5, float(2 * size)
    t = r(x - low) if low != 0.0 else x
    sign = ops.where(t < 0, ops.full_like(t, -1.0), ops.ones_like(t))
    a = t * sign  # |t| with gradient +1 at 0, as PyTorch
    flips = ops.stop_gradient(ops.trunc(r(a / twice_span)))
    extra = r(a - ops.stop_gradient(r(flips * twice_span)))
    mirrored = r(twice_span - extra)
    out = ops.where(extra > mirrored, mirrored, extra)
    return r(out + low) if low != 0.0 else out


def _reflect_3d(x: Tensor, size: int, align_corners: bool, r: Rounder) -> Tensor:
    """The generic kernel's ``reflect_coordinates`` (fmod and flip parity)."""
    if align_corners:
        if size <= 1:
            return ops.zeros_like(x)
        low, span = 0.0, float(size - 1)
    else:
        low, span = -0.5, float(size)
    t = r(x - low) if low != 0.0 else x
    sign = ops.where(t < 0, ops.full_like(t, -1.0), ops.ones_like(t))
    a = t * sign
    extra = a - ops.stop_gradient(a - ops.fmod(a, ops.full_like(a, span)))
    flips = ops.stop_gradient(ops.floor(r(a / span)))
    odd = ops.fmod(flips, ops.full_like(flips, 2.0)) != 0
    out = ops.where(odd, r(r(span - extra) + low), r(extra + low))
    return out


def _unnormalize_2d(
    g: Tensor, size: int, align_corners: bool, r: Rounder, fused: bool = False
) -> Tensor:
    if align_corners:
        return r(r(g + 1.0) * ((size - 1) / 2.0))
    if fused:
        # PyTorch's vectorized float32 kernel computes (g + 1) * (size / 2) - 0.5 with a fused
        # multiply-add (one rounding): exact in float64, then rounded once.
        return ((g + 1.0).astype(ms.float64) * (size / 2.0) - 0.5).astype(ms.float32)
    return r(r(r(g + 1.0) * (size / 2.0)) - 0.5)


def _unnormalize_3d(g: Tensor, size: int, align_corners: bool, r: Rounder) -> Tensor:
    if align_corners:
        return r(r(r(g + 1.0) / 2.0) * float(size - 1))
    return r(r(r(r(g + 1.0) * float(size)) - 1.0) / 2.0)


def _pad_2d(x: Tensor, size: int, padding_mode: str, align_corners: bool, r: Rounder) -> Tensor:
    if padding_mode == "border":
        return _clip(x, size, nan_to_max=False)
    if padding_mode == "reflection":
        return _clip(_reflect_2d(x, size, align_corners, r), size, nan_to_max=False)
    return x


def _source_index_3d(
    g: Tensor, size: int, padding_mode: str, align_corners: bool, r: Rounder
) -> Tensor:
    x = _unnormalize_3d(g, size, align_corners, r)
    if padding_mode == "border":
        x = _clip(x, size, nan_to_max=True)
    elif padding_mode == "reflection":
        x = _clip(_reflect_3d(x, size, align_corners, r), size, nan_to_max=True)
    # PyTorch's safe_downgrade_to_int_range: NaN, inf and huge values read as -100 (outside).
    ok = (x <= 2147483646.0) & (x >= -2147483648.0)
    return ops.where(ok, x, ops.full_like(x, -100.0))


# ----------------------------------------------------------------------------- gathering


def _flatten_input(inp: Tensor) -> Tensor:
    """``input`` as (N, C, prod(spatial) + 1): the flat spatial dims and one trailing zero,
    read by taps that fall outside."""
    n, c = inp.shape[0], inp.shape[1]
    total = 1
    for size in inp.shape[2:]:
        total *= size
    flat = inp.reshape(n, c, total)
    return ops.concat((flat, ops.zeros((n, c, 1), inp.dtype)), 2)


def _slot(coords: List[Tensor], spatial: Tuple[int, ...]) -> Tensor:
    """Flat spatial index (int32, N x P) of integer-valued coordinates; ``prod(spatial)`` for
    taps outside."""
    total = 1
    for size in spatial:
        total *= size
    first = coords[0]
    valid = (first > -1.0) & (first < float(spatial[0]))
    index = first
    for i in range(1, len(coords)):
        c = coords[i]
        valid = valid & (c > -1.0) & (c < float(spatial[i]))
        index = index * float(spatial[i]) + c
    return ops.where(valid, index, ops.full_like(index, float(total))).astype(ms.int32)


def _read(flat: Tensor, coords: List[Tensor], spatial: Tuple[int, ...]) -> Tensor:
    """``input[n, :, coords]`` as (N, C, P); ``coords`` are integer-valued float (N, P) tensors,
    one per spatial dim (slowest first); taps out of bounds read 0."""
    return ops.gather(flat, ops.stop_gradient(_slot(coords, spatial)), 2, batch_dims=1)


def _acc(terms: List[Tensor], r: Rounder) -> Tensor:
    out = terms[0]
    for t in terms[1:]:
        out = r(out + t)
    return out


# ----------------------------------------------------------------------------- 2-D kernels


def _bilinear_2d(flat: Tensor, sizes: Tuple[int, int], x: Tensor, y: Tensor, r: Rounder) -> Tensor:
    x_w = ops.stop_gradient(ops.floor(x))
    y_n = ops.stop_gradient(ops.floor(y))
    w = r(x - x_w)
    e = r(1.0 - w)
    n = r(y - y_n)
    s = r(1.0 - n)
    x_e = x_w + 1.0
    y_s = y_n + 1.0
    terms = [
        r(_read(flat, [y_n, x_w], sizes) * r(s * e).expand_dims(1)),
        r(_read(flat, [y_n, x_e], sizes) * r(s * w).expand_dims(1)),
        r(_read(flat, [y_s, x_w], sizes) * r(n * e).expand_dims(1)),
        r(_read(flat, [y_s, x_e], sizes) * r(n * w).expand_dims(1)),
    ]
    return _acc(terms, r)


def _cubic_coefficients(t: Tensor, r: Rounder) -> List[Tensor]:
    """PyTorch's ``get_cubic_coefficients`` (A = -0.75), op for op."""

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        return r(r(r(r(r(r(_A * x) - 5.0 * _A) * x) + 8.0 * _A) * x) - 4.0 * _A)

    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return r(r(r(r(r((_A + 2.0) * x) - (_A + 3.0)) * x) * x) + 1.0)

    return [far(r(t + 1.0)), near(t), near(r(1.0 - t)), far(r(2.0 - t))]


def _bicubic_2d(
    flat: Tensor,
    x: Tensor,
    y: Tensor,
    sizes: Tuple[int, int],
    padding_mode: str,
    align_corners: bool,
    r: Rounder,
) -> Tensor:
    h, w = sizes
    ix = ops.stop_gradient(ops.floor(x))
    iy = ops.stop_gradient(ops.floor(y))
    cx = _cubic_coefficients(r(x - ix), r)
    cy = _cubic_coefficients(r(y - iy), r)

    def tap(base: Tensor, k: int, size: int) -> Tensor:
        t = _pad_2d(base + float(k - 1), size, padding_mode, align_corners, r)
        return ops.stop_gradient(ops.trunc(t))

    xs = [tap(ix, i, w) for i in range(4)]
    ys = [tap(iy, j, h) for j in range(4)]
    rows = []
    for j in range(4):
        terms = [r(cx[i].expand_dims(1) * _read(flat, [ys[j], xs[i]], sizes)) for i in range(4)]
        rows.append(_acc(terms, r))
    return _acc([r(cy[j].expand_dims(1) * rows[j]) for j in range(4)], r)


def _grid_sample_2d(
    inp: Tensor,
    grid: Tensor,
    mode: str,
    padding_mode: str,
    align_corners: bool,
    r: Rounder,
    fused: bool = False,
) -> Tensor:
    n, c, h, w = inp.shape
    ho, wo = grid.shape[1], grid.shape[2]
    g = grid.reshape(n, ho * wo, 2)
    gx, gy = g[:, :, 0], g[:, :, 1]
    flat = _flatten_input(inp)
    if mode == "bicubic":
        x = _unnormalize_2d(gx, w, align_corners, r, fused)
        y = _unnormalize_2d(gy, h, align_corners, r, fused)
        out = _bicubic_2d(flat, x, y, (h, w), padding_mode, align_corners, r)
    else:
        x = _unnormalize_2d(gx, w, align_corners, r, fused)
        y = _unnormalize_2d(gy, h, align_corners, r, fused)
        x = _pad_2d(x, w, padding_mode, align_corners, r)
        y = _pad_2d(y, h, padding_mode, align_corners, r)
        if mode == "nearest":
            xn = ops.stop_gradient(ops.round(x))
            yn = ops.stop_gradient(ops.round(y))
            out = _read(flat, [yn, xn], (h, w))
        else:
            out = _bilinear_2d(flat, (h, w), x, y, r)
    return out.reshape(n, c, ho, wo)


# ----------------------------------------------------------------------------- 3-D kernels


def _coords_3d(
    grid: Tensor, spatial: Tuple[int, int, int], padding_mode: str, align_corners: bool, r: Rounder
) -> Tuple[Tensor, Tensor, Tensor]:
    """Source coordinates (x, y, z), each (N, P), of a (N, Do, Ho, Wo, 3) grid."""
    n = grid.shape[0]
    p = grid.shape[1] * grid.shape[2] * grid.shape[3]
    g = grid.reshape(n, p, 3)
    d, h, w = spatial
    x = _source_index_3d(g[:, :, 0], w, padding_mode, align_corners, r)
    y = _source_index_3d(g[:, :, 1], h, padding_mode, align_corners, r)
    z = _source_index_3d(g[:, :, 2], d, padding_mode, align_corners, r)
    return x, y, z


#: (z, y, x) corner bits in PyTorch's order: tnw, tne, tsw, tse, bnw, bne, bsw, bse.
_CORNER_BITS = tuple((bz, by, bx) for bz in (0, 1) for by in (0, 1) for bx in (0, 1))


def _corners_3d(
    x: Tensor, y: Tensor, z: Tensor, r: Rounder
) -> List[Tuple[Tuple[Tensor, Tensor, Tensor], Tuple[Tensor, Tensor, Tensor]]]:
    """The eight trilinear corners: ((cz, cy, cx), (fx, fy, fz)) with the corner's factors
    (distances to the opposite faces, rounded as PyTorch's scalar kernel)."""
    x0 = ops.stop_gradient(ops.floor(x))
    y0 = ops.stop_gradient(ops.floor(y))
    z0 = ops.stop_gradient(ops.floor(z))
    x1, y1, z1 = x0 + 1.0, y0 + 1.0, z0 + 1.0
    dx = (r(x1 - x), r(x - x0))  # factor of the west / east corner
    dy = (r(y1 - y), r(y - y0))
    dz = (r(z1 - z), r(z - z0))
    zs, ys, xs = (z0, z1), (y0, y1), (x0, x1)
    return [((zs[bz], ys[by], xs[bx]), (dx[bx], dy[by], dz[bz])) for bz, by, bx in _CORNER_BITS]


def _grid_sample_3d(
    inp: Tensor, grid: Tensor, mode: str, padding_mode: str, align_corners: bool, r: Rounder
) -> Tensor:
    n, c, d, h, w = inp.shape
    do, ho, wo = grid.shape[1], grid.shape[2], grid.shape[3]
    flat = _flatten_input(inp)
    x, y, z = _coords_3d(grid, (d, h, w), padding_mode, align_corners, r)
    if mode == "nearest":
        zn = ops.stop_gradient(ops.round(z))
        yn = ops.stop_gradient(ops.round(y))
        xn = ops.stop_gradient(ops.round(x))
        out = _read(flat, [zn, yn, xn], (d, h, w))
        return out.reshape(n, c, do, ho, wo)
    terms = []
    for (cz, cy, cx), (fx, fy, fz) in _corners_3d(x, y, z, r):
        weight = r(r(fx * fy) * fz)
        terms.append(r(_read(flat, [cz, cy, cx], (d, h, w)) * weight.expand_dims(1)))
    return _acc(terms, r).reshape(n, c, do, ho, wo)


# ----------------------------------------------------------- float16 5-D: PyTorch's backward


def _index_mult_3d(g: Tensor, size: int, padding_mode: str, align_corners: bool) -> Tensor:
    """d(source coordinate)/d(grid), as PyTorch's ``grid_sampler_compute_source_index_set_grad``
    (exact: size/2 or (size-1)/2 times 0 or +-1)."""
    r = _half_round
    mult = ops.full_like(g, (size - 1) / 2.0 if align_corners else size / 2.0)
    if padding_mode == "zeros":
        return mult
    x = _unnormalize_3d(g, size, align_corners, r)
    if padding_mode == "reflection":
        if align_corners and size <= 1:
            return ops.zeros_like(g)
        low, span = (0.0, float(size - 1)) if align_corners else (-0.5, float(size))
        t = r(x - low) if low != 0.0 else x
        a = ops.abs(t)
        odd = ops.fmod(ops.floor(r(a / span)), ops.full_like(a, 2.0)) != 0
        flip = (t < 0) != odd  # one of the two mirrors the coordinate
        mult = ops.where(flip, -mult, mult)
        x = _reflect_3d(x, size, align_corners, r)
    on_border = (x <= 0) | (x >= float(size - 1))  # PyTorch: the border itself has no gradient
    return ops.where(on_border, ops.zeros_like(mult), mult)


def _half_grads_3d(
    inp: Tensor, grid: Tensor, dout: Tensor, mode: str, padding_mode: str, align_corners: bool
) -> Tuple[Tensor, Tensor]:
    """Gradients of 5-D ``grid_sample`` in float16 close to PyTorch's scalar CPU kernel
    (``grid_sampler_3d_backward_cpu_impl`` on ``at::Half``), from MindSpore ops.

    Grid (bilinear): for each point, channel by channel and corner by corner (tnw ... bse),
    ``gix -= val * fy * fz * gOut`` (``+=`` for east corners; likewise y and z), every
    multiplication and addition rounded to float16, then ``gix_mult * gix``: PyTorch's numbers.
    Input: the scatter-add of ``weight * gOut`` summed in float32 and rounded once, where
    PyTorch rounds after each addition (float16 accuracy, not bit for bit: the ``aot`` kernel
    ``GridSample3dHalfBackward`` is). ``'nearest'``: zero grid gradient, as PyTorch.
    """
    r = _half_round
    n, c, d, h, w = inp.shape
    p = grid.shape[1] * grid.shape[2] * grid.shape[3]
    flat = _flatten_input(inp.astype(ms.float32))
    g = grid.astype(ms.float32)
    gout = dout.astype(ms.float32).reshape(n, c, p)
    x, y, z = _coords_3d(g, (d, h, w), padding_mode, align_corners, r)
    total = d * h * w
    if mode == "nearest":
        coords = [ops.stop_gradient(ops.round(t)) for t in (z, y, x)]
        slot = _slot(coords, (d, h, w))
        dinp = _scatter_planes(gout, [slot], n, c, total)
        return dinp.reshape(inp.shape).astype(ms.float16), ops.zeros_like(grid)
    per_axis: Tuple[List[Tensor], List[Tensor], List[Tensor]] = ([], [], [])
    scattered, slots = [], []
    for (cz, cy, cx), (fx, fy, fz) in _corners_3d(x, y, z, r):
        slot = _slot([cz, cy, cx], (d, h, w))
        val = ops.gather(flat, slot, 2, batch_dims=1)  # (N, C, P)
        keep = (slot < total).expand_dims(1)
        zero = ops.zeros_like(val)
        for out, (f1, f2) in zip(per_axis, ((fy, fz), (fx, fz), (fx, fy))):
            prod = r(r(r(val * f1.expand_dims(1)) * f2.expand_dims(1)) * gout)
            out.append(ops.where(keep, prod, zero))
        weight = r(r(fx * fy) * fz)
        scattered.append(r(weight.expand_dims(1) * gout))
        slots.append(slot)
    # grid: PyTorch's order of additions, channel-major, corner-minor
    signs = [
        (-1.0 if bx == 0 else 1.0, -1.0 if by == 0 else 1.0, -1.0 if bz == 0 else 1.0)
        for bz, by, bx in _CORNER_BITS
    ]
    sizes = (w, h, d)
    grads = []
    for axis in range(3):
        signed = [t * signs[k][axis] for k, t in enumerate(per_axis[axis])]
        seq = ops.unstack(ops.stack(signed, 2).reshape(n, c * 8, p), 1)
        acc = ops.zeros((n, p), ms.float32)
        for t in seq:
            acc = r(acc + t)
        mult = _index_mult_3d(
            g.reshape(n, p, 3)[:, :, axis], sizes[axis], padding_mode, align_corners
        )
        grads.append(r(mult * acc))
    dgrid = ops.stack(grads, 2).reshape(grid.shape).astype(ms.float16)
    return _scatter_planes(ops.concat(scattered, 2), slots, n, c, total).reshape(inp.shape).astype(
        ms.float16
    ), dgrid


def _scatter_planes(updates: Tensor, slots: List[Tensor], n: int, c: int, total: int) -> Tensor:
    """Sum (N, C, K * P) ``updates`` into (N, C, total) at the (N, P) ``slots`` (concatenated
    in the same order); slot ``total`` collects the taps outside and is dropped."""
    rows = updates.transpose(0, 2, 1).reshape(-1, c)  # (N * K * P, C)
    offsets = (ops.arange(n, dtype=ms.int32) * (total + 1)).reshape(n, 1)
    ids = (ops.concat(slots, 1) + offsets).reshape(-1)
    summed = ops.unsorted_segment_sum(rows, ids, n * (total + 1))
    return summed.reshape(n, total + 1, c)[:, :total].transpose(0, 2, 1)


class _Half3d(ms.nn.Cell):
    """float16 5-D ``grid_sample``: the composite forward (PyTorch's numbers) with PyTorch's
    backward, from the ``GridSample3dHalfBackward`` kernel (``kernel=True``, bit for bit) or
    :func:`_half_grads_3d`. One instance per configuration, built at import (graph mode reads
    them from :data:`_HALF_3D`)."""

    def __init__(self, mode: str, padding_mode: str, align_corners: bool, kernel: bool) -> None:
        super().__init__()
        self.mode = mode
        self.padding_mode = padding_mode
        self.align_corners = align_corners
        self.kernel = kernel

    def construct(self, input: Tensor, grid: Tensor) -> Tensor:
        x = input.astype(ms.float32)
        g = grid.astype(ms.float32)
        out = _grid_sample_3d(x, g, self.mode, self.padding_mode, self.align_corners, _half_round)
        return out.astype(ms.float16)

    def bprop(
        self, input: Tensor, grid: Tensor, out: Tensor, dout: Tensor
    ) -> Tuple[Tensor, Tensor]:
        if self.kernel:
            op = _grid_kernels.KERNELS[device_target()]["GridSample3dHalfBackward"]
            opts = _options(self.mode, self.padding_mode, self.align_corners)
            f32 = ms.float32
            dx, dg = op(dout.astype(f32), input.astype(f32), grid.astype(f32), opts)
            return dx.astype(ms.float16), dg.astype(ms.float16)
        return _half_grads_3d(input, grid, dout, self.mode, self.padding_mode, self.align_corners)


#: "kernel"/"composite" -> mode -> padding_mode -> align_corners -> the Cell.
_HALF_3D = {
    backend: {
        mode: {
            pad: {ac: _Half3d(mode, pad, ac, backend == "kernel") for ac in (False, True)}
            for pad in _PADDINGS
        }
        for mode in ("bilinear", "nearest")
    }
    for backend in ("kernel", "composite")
}
