// Nearest-neighbour resampling (interpolate mode='nearest' / 'nearest-exact', upsample_nearest)
// for MindSpore's ops.Custom(func_type="aot").
//
// The source index of every output position along each axis is computed in Python with
// PyTorch's rule (mscompat/shape/interpolate.py) and passed as tables; the kernels only copy
// and accumulate.
//
//   NearestGather(x, t0, t1, t2) -> y
//     x:  (N, C, *spatial) with 1, 2 or 3 spatial axes, any 1/2/4/8-byte dtype, taken as
//         N * C planes in place (no reshape, which MindSpore's graph mode runs as a copy)
//     ti: (Oi,) int64 source index along axis i; the spatial axes use the last 1, 2 or 3
//         tables, the others are (1,) unused
//     y:  (N, C, *O), y[n, c, i, j, k] = x[n, c, t0[i], t1[j], t2[k]] (3-D; likewise 1-D, 2-D)
//
//   NearestScatterAdd(dy, x, t0, t1, t2) -> dx
//     the backward, PyTorch's loop: dx = 0, then dx[b, t0[i], t1[j], t2[k]] += dy[b, i, j, k]
//     in output order; float32/float64 (x is read for its shape only).
//
// Calling convention: common.h. Planes are split over threads (MSCOMPAT_NUM_THREADS caps them).

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "common.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::ParallelFor;

struct Geometry {
  int64_t planes, n[3], o[3];
  const int64_t *t[3];
};

// Rows (b, i, j) of the output; a row whose source row equals the previous one is a memcpy.
template <typename T>
void Gather(const T *x, const Geometry &g, T *y) {
  const int64_t rows = g.planes * g.o[0] * g.o[1];
  const int64_t o2 = g.o[2], n2 = g.n[2];
  const int64_t *t2 = g.t[2];
  bool twice = o2 == 2 * n2;  // exact doubling: y[2k] = y[2k + 1] = x[k]
  for (int64_t k = 0; twice && k < o2; ++k) twice = t2[k] == (k >> 1);
  ParallelFor(rows, rows * o2, [=, &g](int64_t begin, int64_t end) {
    const T *prev_src = nullptr;
    const T *prev_out = nullptr;
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / (g.o[0] * g.o[1]);
      const int64_t ij = row % (g.o[0] * g.o[1]);
      const int64_t i = ij / g.o[1], j = ij % g.o[1];
      const T *src = x + ((b * g.n[0] + g.t[0][i]) * g.n[1] + g.t[1][j]) * n2;
      T *dst = y + row * o2;
      if (src == prev_src) {
        std::memcpy(dst, prev_out, sizeof(T) * o2);
      } else if (twice) {
        for (int64_t k = 0; k < n2; ++k) {
          dst[2 * k] = src[k];
          dst[2 * k + 1] = src[k];
        }
      } else {
        for (int64_t k = 0; k < o2; ++k) dst[k] = src[t2[k]];
      }
      prev_src = src;
      prev_out = dst;
    }
  });
}

template <typename T>
void ScatterAdd(const T *dy, const Geometry &g, T *dx) {
  const int64_t plane_in = g.n[0] * g.n[1] * g.n[2];
  const int64_t plane_out = g.o[0] * g.o[1] * g.o[2];
  ParallelFor(g.planes, g.planes * (plane_in + plane_out), [=, &g](int64_t begin, int64_t end) {
    std::fill(dx + begin * plane_in, dx + end * plane_in, T(0));
    for (int64_t b = begin; b < end; ++b) {
      const T *src = dy + b * plane_out;
      T *dst = dx + b * plane_in;
      for (int64_t i = 0; i < g.o[0]; ++i) {
        for (int64_t j = 0; j < g.o[1]; ++j) {
          T *line = dst + (g.t[0][i] * g.n[1] + g.t[1][j]) * g.n[2];
          const T *in = src + (i * g.o[1] + j) * g.o[2];
          for (int64_t k = 0; k < g.o[2]; ++k) line[g.t[2][k]] += in[k];
        }
      }
    }
  });
}

// Reads x's geometry (the tensor at x_at, (N, C, *spatial)) and the three tables
// (params[first..first+2]), checking the tables against the input sizes.
int ReadGeometry(void **params, int *ndims, int64_t **shapes, const char **dtypes,
                 int x_at, int first, Geometry *g) {
  const int rank = ndims[x_at];
  if (rank < 3 || rank > 5) return kBadShape;
  const int64_t *xs = shapes[x_at];
  const int unused = 5 - rank;
  g->planes = xs[0] * xs[1];
  for (int i = 0; i < 3; ++i) {
    g->n[i] = i < unused ? 1 : xs[2 + i - unused];
    if (ndims[first + i] != 1 || std::strcmp(dtypes[first + i], "int64") != 0) return kBadShape;
    g->o[i] = shapes[first + i][0];
    g->t[i] = static_cast<const int64_t *>(params[first + i]);
    if (i < unused && g->o[i] != 1) return kBadShape;
    for (int64_t k = 0; k < g->o[i]; ++k)
      if (g->t[i][k] < 0 || g->t[i][k] >= g->n[i]) return kBadShape;
  }
  return kOk;
}

// Whether a tensor is (N, C, *sizes of the spatial axes) with x's N and C.
bool IsOutShape(int nd, const int64_t *shape, const int64_t *xs, int rank, const Geometry &g,
                bool input_side) {
  if (nd != rank || shape[0] != xs[0] || shape[1] != xs[1]) return false;
  for (int d = 2; d < rank; ++d) {
    const int i = 3 - rank + d;
    if (shape[d] != (input_side ? g.n[i] : g.o[i])) return false;
  }
  return true;
}

}  // namespace

extern "C" int NearestGather(int nparam, void **params, int *ndims, int64_t **shapes,
                             const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  Geometry g;
  if (int rc = ReadGeometry(params, ndims, shapes, dtypes, 0, 1, &g)) return rc;
  if (!IsOutShape(ndims[4], shapes[4], shapes[0], ndims[0], g, false)) return kBadShape;
  if (std::strcmp(dtypes[4], dtypes[0]) != 0) return kBadDtype;
  return mscompat::ByElementSize(dtypes[0], [&](auto e) {  // a copy
    using E = decltype(e);
    Gather(static_cast<const E *>(params[0]), g, static_cast<E *>(params[4]));
  });
}

extern "C" int NearestScatterAdd(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  Geometry g;
  if (int rc = ReadGeometry(params, ndims, shapes, dtypes, 1, 2, &g)) return rc;
  if (!IsOutShape(ndims[0], shapes[0], shapes[1], ndims[1], g, false) ||
      !IsOutShape(ndims[5], shapes[5], shapes[1], ndims[1], g, true))
    return kBadShape;
  if (std::strcmp(dtypes[5], dtypes[0]) != 0) return kBadDtype;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto t) {
    using T = decltype(t);
    ScatterAdd(static_cast<const T *>(params[0]), g, static_cast<T *>(params[5]));
  });
}
