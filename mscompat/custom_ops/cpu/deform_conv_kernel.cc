// Deformable convolution (torchvision.ops.deform_conv2d) for MindSpore's
// ops.Custom(func_type="aot"): the sampling (deformable im2col) and its backward; the GEMMs are
// MindSpore matmuls in the calling graph.
//
//   DeformIm2Col(x, offset, mask, geom, kernel) -> cols
//     x:      (N, C, H, W) float32/float64
//     offset: (N, 2 * G * kh * kw, OH, OW): (dy, dx) per offset group g and kernel position k
//             at channels g * 2K + 2k and g * 2K + 2k + 1 (torchvision's layout)
//     mask:   (N, G * kh * kw, OH, OW), read when use_mask (else any tensor of x's dtype)
//     geom:   (10,) int64 [kh, kw, sh, sw, ph, pw, dh, dw, G, use_mask]
//     kernel: (kh, kw) int8, read for its shape
//     cols:   (N, C * K, OH * OW): row c * K + k holds mask * bilinear(x[n, c], y, x) of
//             kernel position k = i * kw + j at every output position, where
//             y = (oy * sh - ph) + i * dh + offset_y and x likewise (torchvision's
//             bilinear_interpolate: 0 outside (-1, H) x (-1, W), corners outside the image 0).
//   DeformIm2ColGrad(dcols, x, offset, mask, geom, kernel) -> dx doffset dmask
//     torchvision's deformable_col2im (dx) and deformable_col2im_coord (doffset, dmask) given
//     the columns' gradient: the same formulas, evaluated in the same order per output element
//     (offset and mask gradients summed over the group's channels in order; each image
//     element's gradient added in (kernel position, output position) order). dmask is zero
//     when use_mask is 0.
//
// The sampling coordinates, corner indices and weights of every (n, g, k, output position) are
// computed once per call into a table that all channels of the group share (torchvision
// recomputes them per channel); the work is split over threads (parallel.h).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;

struct Geometry {
  int64_t n = 0, c = 0, h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  int64_t groups = 1, cg = 0, k = 1, l = 0;
  bool use_mask = false;
};

// One sampling point: its four corners (y_l, x_l), (y_l, x_h), (y_h, x_l), (y_h, x_h).
template <typename T>
struct Tap {
  int64_t idx[4];  // flat position of each corner in its plane (0 where outside the image)
  T w[4];          // bilinear weights hh * hw, hh * lw, lh * hw, lh * lw
  T cw[4];         // col2im weights times the mask: mask * ((1 - |y - yc|) * (1 - |x - xc|))
  T m, fy, fx;     // mask value; y - y_l, x - x_l
  unsigned valid;  // bit q: corner q inside the image (get_coordinate_weight)
  unsigned touch;  // bit q: corner q receives an input gradient (col2im's |y - yp| < 1 rule)
  bool inside;     // the point lies in (-1, H) x (-1, W) (bilinear_interpolate)
};

// floor(v) for a point that may touch the image, else -2 (every corner outside; NaN too).
template <typename T>
int64_t Low(T v, int64_t size) {
  return (v > T(-2) && v < T(size + 1)) ? static_cast<int64_t>(std::floor(v)) : -2;
}

template <typename T>
void MakeTap(T y, T x, T m, const Geometry &g, Tap<T> *t) {
  t->m = m;
  t->inside = !(y <= T(-1) || T(g.h) <= y || x <= T(-1) || T(g.w) <= x);
  const int64_t yl = Low(y, g.h), xl = Low(x, g.w);
  const T lh = y - T(yl), lw = x - T(xl);
  const T hh = T(1) - lh, hw = T(1) - lw;
  t->fy = lh;
  t->fx = lw;
  t->w[0] = hh * hw;
  t->w[1] = hh * lw;
  t->w[2] = lh * hw;
  t->w[3] = lh * lw;
  t->valid = t->touch = 0;
  for (int q = 0; q < 4; ++q) {
    const int64_t yc = yl + (q >> 1), xc = xl + (q & 1);
    const bool ok = yc >= 0 && yc < g.h && xc >= 0 && xc < g.w;
    t->idx[q] = ok ? yc * g.w + xc : 0;
    const T ay = std::abs(y - T(yc)), ax = std::abs(x - T(xc));
    t->cw[q] = m * ((T(1) - ay) * (T(1) - ax));
    if (ok) {
      t->valid |= 1u << q;
      if (ay < T(1) && ax < T(1)) t->touch |= 1u << q;
    }
  }
}

// The taps of every (n, g, k, position), in that order.
template <typename T>
std::vector<Tap<T>> MakeTable(const T *offset, const T *mask, const Geometry &g) {
  std::vector<Tap<T>> table(g.n * g.groups * g.k * g.l);
  const int64_t units = g.n * g.groups * g.k;
  mscompat::ParallelFor(units, units * g.l * 8, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t k = u % g.k, ng = u / g.k;  // ng = n * groups + group
      const int64_t i = k / g.kw, j = k % g.kw;
      const T *oy_at = offset + (ng * 2 * g.k + 2 * k) * g.l;
      const T *ox_at = oy_at + g.l;
      const T *m_at = g.use_mask ? mask + (ng * g.k + k) * g.l : nullptr;
      Tap<T> *out = table.data() + u * g.l;
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        const int64_t base_y = (oy * g.sh - g.ph) + i * g.dh;
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          const int64_t p = oy * g.ow + ox;
          const int64_t base_x = (ox * g.sw - g.pw) + j * g.dw;
          const T y = T(base_y) + oy_at[p], x = T(base_x) + ox_at[p];
          MakeTap(y, x, m_at ? m_at[p] : T(1), g, out + p);
        }
      }
    }
  });
  return table;
}

// The four corner values of a tap (0 outside the image).
template <typename T>
inline void Corners(const T *plane, const Tap<T> &t, T *v) {
  for (int q = 0; q < 4; ++q) v[q] = (t.valid >> q) & 1u ? plane[t.idx[q]] : T(0);
}

// torchvision's bilinear_interpolate from the corner values.
template <typename T>
inline T Bilinear(const Tap<T> &t, const T *v) {
  if (!t.inside) return T(0);
  return t.w[0] * v[0] + t.w[1] * v[1] + t.w[2] * v[2] + t.w[3] * v[3];
}

template <typename T>
void Im2Col(const T *x, const std::vector<Tap<T>> &table, const Geometry &g, T *cols) {
  const int64_t planes = g.n * g.c;
  mscompat::ParallelFor(planes, planes * g.k * g.l * 4, [&](int64_t begin, int64_t end) {
    T v[4];
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / g.c, c = plane % g.c;
      const T *img = x + plane * g.h * g.w;
      const Tap<T> *taps = table.data() + (n * g.groups + c / g.cg) * g.k * g.l;
      T *out = cols + plane * g.k * g.l;
      for (int64_t e = 0; e < g.k * g.l; ++e) {
        Corners(img, taps[e], v);
        out[e] = taps[e].m * Bilinear(taps[e], v);
      }
    }
  });
}

// Offset and mask gradients: per (n, g, k, block of positions), the group's channels in order.
template <typename T>
void Col2ImCoord(const T *dcols, const T *x, const std::vector<Tap<T>> &table,
                 const Geometry &g, T *doffset, T *dmask) {
  constexpr int64_t kBlock = 512;
  const int64_t blocks = (g.l + kBlock - 1) / kBlock;
  const int64_t units = g.n * g.groups * g.k * blocks;
  mscompat::ParallelFor(units, units * kBlock * g.cg * 4, [&](int64_t begin, int64_t end) {
    T gy[kBlock], gx[kBlock], gm[kBlock], v[4];
    for (int64_t u = begin; u < end; ++u) {
      const int64_t blk = u % blocks, nk = u / blocks;  // nk = (n * groups + group) * K + k
      const int64_t k = nk % g.k, ng = nk / g.k;
      const int64_t n = ng / g.groups, grp = ng % g.groups;
      const int64_t p0 = blk * kBlock, len = std::min(kBlock, g.l - p0);
      const Tap<T> *taps = table.data() + nk * g.l + p0;
      for (int64_t p = 0; p < len; ++p) gy[p] = gx[p] = gm[p] = T(0);
      for (int64_t cl = 0; cl < g.cg; ++cl) {
        const int64_t c = grp * g.cg + cl;
        const T *img = x + (n * g.c + c) * g.h * g.w;
        const T *col = dcols + ((n * g.c + c) * g.k + k) * g.l + p0;
        for (int64_t p = 0; p < len; ++p) {
          const Tap<T> &t = taps[p];
          Corners(img, t, v);
          // get_coordinate_weight, y then x direction
          const T wy = t.fx * (v[3] - v[1]) + (T(1) - t.fx) * (v[2] - v[0]);
          const T wx = t.fy * (v[3] - v[2]) + (T(1) - t.fy) * (v[1] - v[0]);
          gy[p] += t.m * wy * col[p];
          gx[p] += t.m * wx * col[p];
          if (g.use_mask) gm[p] += col[p] * Bilinear(t, v);
        }
      }
      T *oy = doffset + (ng * 2 * g.k + 2 * k) * g.l + p0;
      std::memcpy(oy, gy, len * sizeof(T));
      std::memcpy(oy + g.l, gx, len * sizeof(T));
      if (g.use_mask) std::memcpy(dmask + nk * g.l + p0, gm, len * sizeof(T));
    }
  });
}

// Input gradient: per (n, c) plane, each column value added to the corners it was read from.
template <typename T>
void Col2Im(const T *dcols, const std::vector<Tap<T>> &table, const Geometry &g, T *dx) {
  const int64_t planes = g.n * g.c;
  mscompat::ParallelFor(planes, planes * g.k * g.l * 4, [&](int64_t begin, int64_t end) {
    std::fill(dx + begin * g.h * g.w, dx + end * g.h * g.w, T(0));
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / g.c, c = plane % g.c;
      T *img = dx + plane * g.h * g.w;
      const Tap<T> *taps = table.data() + (n * g.groups + c / g.cg) * g.k * g.l;
      const T *col = dcols + plane * g.k * g.l;
      for (int64_t e = 0; e < g.k * g.l; ++e) {
        const Tap<T> &t = taps[e];
        for (int q = 0; q < 4; ++q)
          if ((t.touch >> q) & 1u) img[t.idx[q]] += t.cw[q] * col[e];
      }
    }
  });
}

// Reads geom and checks the shapes; `x_at`, `offset_at`, `mask_at`, `cols_at`: parameter
// positions of the image, offsets, mask and columns.
int ReadGeometry(void **params, int *ndims, int64_t **shapes, int x_at, int offset_at,
                 int mask_at, int geom_at, int cols_at, Geometry *g) {
  if (ndims[geom_at] != 1 || shapes[geom_at][0] != 10 || ndims[x_at] != 4 ||
      ndims[offset_at] != 4 || ndims[cols_at] != 3)
    return kBadShape;
  const int64_t *p = static_cast<const int64_t *>(params[geom_at]);
  g->kh = p[0], g->kw = p[1], g->sh = p[2], g->sw = p[3], g->ph = p[4], g->pw = p[5];
  g->dh = p[6], g->dw = p[7], g->groups = p[8], g->use_mask = p[9] != 0;
  if (g->kh < 1 || g->kw < 1 || g->sh < 1 || g->sw < 1 || g->ph < 0 || g->pw < 0 ||
      g->dh < 1 || g->dw < 1 || g->groups < 1)
    return kBadShape;
  const int64_t *xs = shapes[x_at], *os = shapes[offset_at], *cs = shapes[cols_at];
  g->n = xs[0], g->c = xs[1], g->h = xs[2], g->w = xs[3];
  g->k = g->kh * g->kw;
  g->oh = (g->h + 2 * g->ph - (g->dh * (g->kh - 1) + 1)) / g->sh + 1;
  g->ow = (g->w + 2 * g->pw - (g->dw * (g->kw - 1) + 1)) / g->sw + 1;
  g->l = g->oh * g->ow;
  if (g->h < 1 || g->w < 1 || g->oh < 1 || g->ow < 1 || g->c % g->groups != 0) return kBadShape;
  g->cg = g->c / g->groups;
  if (!mscompat::HasShape(ndims[offset_at], os, {g->n, 2 * g->groups * g->k, g->oh, g->ow}) ||
      !mscompat::HasShape(ndims[cols_at], cs, {g->n, g->c * g->k, g->l}))
    return kBadShape;
  if (g->use_mask &&
      !mscompat::HasShape(ndims[mask_at], shapes[mask_at], {g->n, g->groups * g->k, g->oh, g->ow}))
    return kBadShape;
  const int carrier = geom_at + 1;  // (kh, kw) int8
  if (!mscompat::HasShape(ndims[carrier], shapes[carrier], {g->kh, g->kw})) return kBadShape;
  return kOk;
}

template <typename T>
int Forward(void **params, int *ndims, int64_t **shapes) {
  Geometry g;
  if (int rc = ReadGeometry(params, ndims, shapes, 0, 1, 2, 3, 5, &g)) return rc;
  const T *x = static_cast<const T *>(params[0]);
  const T *offset = static_cast<const T *>(params[1]);
  const T *mask = static_cast<const T *>(params[2]);
  const std::vector<Tap<T>> table = MakeTable(offset, mask, g);
  Im2Col(x, table, g, static_cast<T *>(params[5]));
  return kOk;
}

template <typename T>
int Backward(void **params, int *ndims, int64_t **shapes) {
  Geometry g;
  if (int rc = ReadGeometry(params, ndims, shapes, 1, 2, 3, 4, 0, &g)) return rc;
  if (!mscompat::SameShape(ndims[6], shapes[6], ndims[1], shapes[1]) ||
      !mscompat::SameShape(ndims[7], shapes[7], ndims[2], shapes[2]) ||
      !mscompat::SameShape(ndims[8], shapes[8], ndims[3], shapes[3]))
    return kBadShape;
  const T *dcols = static_cast<const T *>(params[0]);
  const T *x = static_cast<const T *>(params[1]);
  const T *offset = static_cast<const T *>(params[2]);
  const T *mask = static_cast<const T *>(params[3]);
  T *dx = static_cast<T *>(params[6]);
  T *doffset = static_cast<T *>(params[7]);
  T *dmask = static_cast<T *>(params[8]);
  if (!g.use_mask) std::fill(dmask, dmask + mscompat::NumElements(ndims[8], shapes[8]), T(0));
  const std::vector<Tap<T>> table = MakeTable(offset, mask, g);
  Col2ImCoord(dcols, x, table, g, doffset, dmask);
  Col2Im(dcols, table, g, dx);
  return kOk;
}

}  // namespace

extern "C" int DeformIm2Col(int nparam, void **params, int *ndims, int64_t **shapes,
                            const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  if (!mscompat::AllDtype(dtypes, {3}, "int64") || !mscompat::AllDtype(dtypes, {4}, "int8"))
    return kBadDtype;
  return mscompat::ByDtype<float, double>(
      mscompat::SharedDtype(dtypes, {0, 1, 2, 5}),
      [&](auto t) { return Forward<decltype(t)>(params, ndims, shapes); });
}

extern "C" int DeformIm2ColGrad(int nparam, void **params, int *ndims, int64_t **shapes,
                                const char **dtypes, void *, void *) {
  if (nparam != 9) return kBadArity;
  if (!mscompat::AllDtype(dtypes, {4}, "int64") || !mscompat::AllDtype(dtypes, {5}, "int8"))
    return kBadDtype;
  return mscompat::ByDtype<float, double>(
      mscompat::SharedDtype(dtypes, {0, 1, 2, 3, 6, 7, 8}),
      [&](auto t) { return Backward<decltype(t)>(params, ndims, shapes); });
}
