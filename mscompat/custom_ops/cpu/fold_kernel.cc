// im2col / col2im (unfold / fold) for MindSpore's ops.Custom(func_type="aot"), PyTorch's loops.
//
//   Im2Col(x, geom, cols_shape, image_shape) -> cols
//     x:           (N, C, H, W) any 1-, 2-, 4- or 8-byte dtype (a copy: zeros where a block
//                  reaches into the padding)
//     geom:        (9,) int64 [kh, kw, dh, dw, ph, pw, sh, sw, round_half]
//     cols_shape:  (K, L) int8, read for its shape: K = kh * kw, L = blocks
//     image_shape: (H, W) int8, read for its shape
//     cols:        (N, C * K, L); row c * K + i * kw + j holds the (i, j) kernel offset of
//                  channel c for every block, blocks in row-major order
//   Col2Im(cols, geom, cols_shape, image_shape) -> x
//     PyTorch's col2im: per (n, c) plane, zeros, then every column row in order (kernel offset
//     (i, j) row-major), every block in order, added to its image element; float32/float64.
//     round_half: each addition rounded to float16 (PyTorch's float16 col2im adds in float16;
//     the caller runs float16 as float32 and casts the exact result back).
//
// Calling convention: common.h. Work is split over (n, c) planes (MSCOMPAT_NUM_THREADS caps the
// threads).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include "common.h"
#include "half.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::AllDtype;

struct Geometry {
  int64_t planes = 0, k = 0, blocks = 0;
  int64_t h = 0, w = 0, oh = 0, ow = 0;
  int64_t kh = 1, kw = 1, dh = 1, dw = 1, ph = 0, pw = 0, sh = 1, sw = 1;
  bool round_half = false;
};

// Reads geom and the carriers; `x_at` is the (N, C, H, W) image, `cols_at` the (N, C*K, L)
// columns (one of the two is the output).
int ReadGeometry(void **params, int *ndims, int64_t **shapes, int x_at, int cols_at,
                 Geometry *g) {
  if (ndims[1] != 1 || shapes[1][0] != 9 || ndims[2] != 2 || ndims[3] != 2) return kBadShape;
  const int64_t *p = static_cast<const int64_t *>(params[1]);
  g->kh = p[0];
  g->kw = p[1];
  g->dh = p[2];
  g->dw = p[3];
  g->ph = p[4];
  g->pw = p[5];
  g->sh = p[6];
  g->sw = p[7];
  g->round_half = p[8] != 0;
  if (g->kh < 1 || g->kw < 1 || g->dh < 1 || g->dw < 1 || g->ph < 0 || g->pw < 0 ||
      g->sh < 1 || g->sw < 1)
    return kBadShape;
  g->k = g->kh * g->kw;
  g->h = shapes[3][0];
  g->w = shapes[3][1];
  g->oh = (g->h + 2 * g->ph - g->dh * (g->kh - 1) - 1) / g->sh + 1;
  g->ow = (g->w + 2 * g->pw - g->dw * (g->kw - 1) - 1) / g->sw + 1;
  g->blocks = g->oh * g->ow;
  if (g->oh < 1 || g->ow < 1 || shapes[2][0] != g->k || shapes[2][1] != g->blocks)
    return kBadShape;
  const int64_t *xs = shapes[x_at], *cs = shapes[cols_at];
  if (ndims[x_at] != 4 || ndims[cols_at] != 3 || xs[2] != g->h || xs[3] != g->w ||
      cs[0] != xs[0] || cs[1] != xs[1] * g->k || cs[2] != g->blocks)
    return kBadShape;
  g->planes = xs[0] * xs[1];
  return kOk;
}

template <typename F>
void ForPlanes(const Geometry &g, int64_t work_per_plane, F body) {
  mscompat::ParallelFor(g.planes, g.planes * work_per_plane, body);
}

// PyTorch's im2col for the planes [begin, end): element-wise copies.
template <typename T>
void Im2Col(const T *x, const Geometry &g, T *cols) {
  ForPlanes(g, g.k * g.blocks, [=, &g](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const T *img = x + plane * g.h * g.w;
      T *out = cols + plane * g.k * g.blocks;
      for (int64_t i = 0; i < g.kh; ++i) {
        for (int64_t j = 0; j < g.kw; ++j) {
          T *row = out + (i * g.kw + j) * g.blocks;
          for (int64_t bh = 0; bh < g.oh; ++bh) {
            const int64_t y = bh * g.sh - g.ph + i * g.dh;
            T *dst = row + bh * g.ow;
            if (y < 0 || y >= g.h) {
              std::fill(dst, dst + g.ow, T(0));
              continue;
            }
            const T *src = img + y * g.w;
            for (int64_t bw = 0; bw < g.ow; ++bw) {
              const int64_t xw = bw * g.sw - g.pw + j * g.dw;
              dst[bw] = xw >= 0 && xw < g.w ? src[xw] : T(0);
            }
          }
        }
      }
    }
  });
}

// PyTorch's col2im for the planes [begin, end): in column order, each value added to its image
// element (rounded to float16 after every addition when g.round_half).
template <typename T>
void Col2Im(const T *cols, const Geometry &g, T *x) {
  ForPlanes(g, g.k * g.blocks + g.h * g.w, [=, &g](int64_t begin, int64_t end) {
    std::fill(x + begin * g.h * g.w, x + end * g.h * g.w, T(0));
    for (int64_t plane = begin; plane < end; ++plane) {
      T *img = x + plane * g.h * g.w;
      const T *in = cols + plane * g.k * g.blocks;
      for (int64_t i = 0; i < g.kh; ++i) {
        for (int64_t j = 0; j < g.kw; ++j) {
          const T *row = in + (i * g.kw + j) * g.blocks;
          for (int64_t bh = 0; bh < g.oh; ++bh) {
            const int64_t y = bh * g.sh - g.ph + i * g.dh;
            if (y < 0 || y >= g.h) continue;
            const T *src = row + bh * g.ow;
            T *dst = img + y * g.w;
            for (int64_t bw = 0; bw < g.ow; ++bw) {
              const int64_t xw = bw * g.sw - g.pw + j * g.dw;
              if (xw < 0 || xw >= g.w) continue;
              const T sum = dst[xw] + src[bw];
              dst[xw] = g.round_half ? static_cast<T>(mscompat::RoundToHalf(
                                           static_cast<float>(sum)))
                                     : sum;
            }
          }
        }
      }
    }
  });
}

// Im2Col (params: x, geom, carriers, cols) or Col2Im (params: cols, geom, carriers, x).
template <bool kCol2Im, typename T>
int Run(void **params, int *ndims, int64_t **shapes) {
  Geometry g;
  if (int rc = ReadGeometry(params, ndims, shapes, kCol2Im ? 4 : 0, kCol2Im ? 0 : 4, &g))
    return rc;
  const T *in = static_cast<const T *>(params[0]);
  T *out = static_cast<T *>(params[4]);
  if constexpr (kCol2Im) {
    Col2Im(in, g, out);
  } else {
    Im2Col(in, g, out);
  }
  return kOk;
}

bool Carriers(const char **dtypes) {
  return AllDtype(dtypes, {1}, "int64") && AllDtype(dtypes, {2, 3}, "int8");
}

}  // namespace

extern "C" int Im2Col(int nparam, void **params, int *ndims, int64_t **shapes,
                      const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  if (!Carriers(dtypes) || std::strcmp(dtypes[0], dtypes[4]) != 0) return kBadDtype;
  // a copy: only the element size matters
  return mscompat::ByElementSize(
      dtypes[0], [&](auto e) { return Run<false, decltype(e)>(params, ndims, shapes); });
}

extern "C" int Col2Im(int nparam, void **params, int *ndims, int64_t **shapes,
                      const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  if (!Carriers(dtypes)) return kBadDtype;
  return mscompat::ByDtype<float, double>(
      mscompat::SharedDtype(dtypes, {0, 4}),
      [&](auto t) { return Run<true, decltype(t)>(params, ndims, shapes); });
}
