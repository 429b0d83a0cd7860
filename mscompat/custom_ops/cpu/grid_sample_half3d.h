// The backward of 5-D grid_sample in float16, as PyTorch computes it on the CPU: its generic
// scalar kernel (aten/src/ATen/native/GridSampler.cpp, grid_sampler_3d_backward_cpu_impl)
// instantiated for at::Half, where every operation is done in float32 and rounded to float16
// at once (H below): the source coordinates and their gradient multipliers
// (grid_sampler_compute_source_index_set_grad), the corner weights, each addition into
// grad_input in the kernel's order (points, then channels, then corners), and the grid
// gradient accumulated channel by channel, corner by corner.
//
// The tensors hold float16 values as float32 (the caller casts both ways, exactly).

#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "half.h"
#include "parallel.h"

namespace mscompat {
namespace half3d {

inline float H(float v) { return RoundToHalf(v); }

// An at::Half built from an integer (through float, as c10 does).
inline float HalfOf(int64_t v) { return H(static_cast<float>(v)); }

// std::floor of an at::Half, then static_cast<int64_t> (x86: out of range -> the lowest value).
inline int64_t FloorIndex(float v) {
  const float f = std::floor(v);
  if (!(f >= -9.2e18f && f <= 9.2e18f)) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(f);
}

struct Source {
  float pos;   // source coordinate
  float mult;  // d pos / d grid
};

// grid_sampler_compute_source_index_set_grad on at::Half; padding 0 zeros, 1 border,
// 2 reflection.
inline Source SourceIndex(float coord, int64_t size, int padding, bool align) {
  float pos, mult;
  if (align) {
    mult = H(HalfOf(size - 1) / 2.0f);
    pos = H(H(H(coord + 1.0f) / 2.0f) * HalfOf(size - 1));
  } else {
    mult = H(HalfOf(size) / 2.0f);
    pos = H(H(H(H(coord + 1.0f) * HalfOf(size)) - 1.0f) / 2.0f);
  }
  if (padding == 0) return {pos, mult};
  if (padding == 2) {  // reflect_coordinates_set_grad, then the clip below
    const int64_t twice_low = align ? 0 : -1;
    const int64_t twice_high = align ? 2 * (size - 1) : 2 * size - 1;
    float refl;
    if (twice_low == twice_high) {
      refl = 0.0f;
      pos = 0.0f;
    } else {
      const float low = H(HalfOf(twice_low) / 2.0f);
      const float span = H(HalfOf(twice_high - twice_low) / 2.0f);
      float in = H(pos - low);
      float sign = 1.0f;
      if (in < 0.0f) {
        sign = -1.0f;
        in = -in;
      }
      const float extra = H(std::fmod(in, span));
      const int flips = static_cast<int>(std::floor(H(in / span)));
      if (flips % 2 == 0) {
        refl = sign;
        pos = H(extra + low);
      } else {
        refl = -sign;
        pos = H(H(span - extra) + low);
      }
    }
    mult = H(mult * refl);
  }
  // clip_coordinates_set_grad: the borders themselves have no gradient (NaN keeps 1)
  const float top = HalfOf(size - 1);
  float clip = 1.0f;
  if (pos <= 0.0f) {
    clip = 0.0f;
    pos = 0.0f;
  } else if (pos >= top) {
    clip = 0.0f;
    pos = top;
  }
  return {pos, H(mult * clip)};
}

struct Dims {
  int64_t n, c, d, h, w, od, oh, ow;
};

inline bool Inside(int64_t z, int64_t y, int64_t x, const Dims &s) {
  return z >= 0 && z < s.d && y >= 0 && y < s.h && x >= 0 && x < s.w;
}

// One batch element: dx[n] (zeroed by the caller) and dgrid[n].
inline void BackwardOne(const float *dy, const float *x, const float *grid, const Dims &s,
                        int mode, int padding, bool align, int64_t n, float *dx, float *dgrid) {
  const int64_t plane = s.d * s.h * s.w, points = s.od * s.oh * s.ow;
  const float *xn = x + n * s.c * plane;
  float *dxn = dx + n * s.c * plane;
  const float *dyn = dy + n * s.c * points;
  for (int64_t p = 0; p < points; ++p) {
    const float *g = grid + (n * points + p) * 3;
    float *dg = dgrid + (n * points + p) * 3;
    const Source sx = SourceIndex(g[0], s.w, padding, align);
    const Source sy = SourceIndex(g[1], s.h, padding, align);
    const Source sz = SourceIndex(g[2], s.d, padding, align);
    if (mode == 1) {  // nearest: grad_input only, the grid gradient is zero
      const int64_t xi = static_cast<int64_t>(std::nearbyint(sx.pos));
      const int64_t yi = static_cast<int64_t>(std::nearbyint(sy.pos));
      const int64_t zi = static_cast<int64_t>(std::nearbyint(sz.pos));
      if (Inside(zi, yi, xi, s)) {
        const int64_t at = (zi * s.h + yi) * s.w + xi;
        for (int64_t c = 0; c < s.c; ++c)
          dxn[c * plane + at] = H(dxn[c * plane + at] + dyn[c * points + p]);
      }
      dg[0] = dg[1] = dg[2] = 0.0f;
      continue;
    }
    const int64_t x0 = FloorIndex(sx.pos), y0 = FloorIndex(sy.pos), z0 = FloorIndex(sz.pos);
    // The factor of the near (index 0) and far (1) corner along each axis: PyTorch's
    // (ix_bse - ix) and (ix - ix_tnw), int64 operands converted to at::Half.
    const float fx[2] = {H(HalfOf(x0 + 1) - sx.pos), H(sx.pos - HalfOf(x0))};
    const float fy[2] = {H(HalfOf(y0 + 1) - sy.pos), H(sy.pos - HalfOf(y0))};
    const float fz[2] = {H(HalfOf(z0 + 1) - sz.pos), H(sz.pos - HalfOf(z0))};
    int64_t at[8];
    bool in[8];
    float weight[8];
    for (int k = 0; k < 8; ++k) {  // tnw, tne, tsw, tse, bnw, bne, bsw, bse
      const int bx = k & 1, by = (k >> 1) & 1, bz = k >> 2;
      in[k] = Inside(z0 + bz, y0 + by, x0 + bx, s);
      at[k] = in[k] ? ((z0 + bz) * s.h + (y0 + by)) * s.w + (x0 + bx) : 0;
      weight[k] = H(H(fx[bx] * fy[by]) * fz[bz]);
    }
    float gix = 0.0f, giy = 0.0f, giz = 0.0f;
    for (int64_t c = 0; c < s.c; ++c) {
      const float gout = dyn[c * points + p];
      float *dxc = dxn + c * plane;
      const float *xc = xn + c * plane;
      for (int k = 0; k < 8; ++k)
        if (in[k]) dxc[at[k]] = H(dxc[at[k]] + H(weight[k] * gout));
      for (int k = 0; k < 8; ++k) {
        if (!in[k]) continue;
        const int bx = k & 1, by = (k >> 1) & 1, bz = k >> 2;
        const float val = xc[at[k]];
        // gix -= ... for the near x corners, += for the far ones (likewise y, z)
        const float tx = H(H(H(val * fy[by]) * fz[bz]) * gout);
        const float ty = H(H(H(val * fx[bx]) * fz[bz]) * gout);
        const float tz = H(H(H(val * fx[bx]) * fy[by]) * gout);
        gix = bx ? H(gix + tx) : H(gix - tx);
        giy = by ? H(giy + ty) : H(giy - ty);
        giz = bz ? H(giz + tz) : H(giz - tz);
      }
    }
    dg[0] = H(sx.mult * gix);
    dg[1] = H(sy.mult * giy);
    dg[2] = H(sz.mult * giz);
  }
}

// dx (zeroed here) and dgrid for the whole batch; batch elements in parallel, as PyTorch.
inline void Backward(const float *dy, const float *x, const float *grid, const Dims &s, int mode,
                     int padding, bool align, float *dx, float *dgrid) {
  const int64_t plane = s.d * s.h * s.w, points = s.od * s.oh * s.ow;
  for (int64_t i = 0; i < s.n * s.c * plane; ++i) dx[i] = 0.0f;
  const int64_t work = s.n * points * (s.c + 1);
  ParallelFor(s.n, work, 1 << 14, 1 << 13, [&](int64_t begin, int64_t end) {
    for (int64_t n = begin; n < end; ++n)
      BackwardOne(dy, x, grid, s, mode, padding, align, n, dx, dgrid);
  });
}

}  // namespace half3d
}  // namespace mscompat
