// Max pooling's pick (max_pool1d/2d/3d and adaptive_max_pool1d/2d/3d): the flat index of the
// element PyTorch's CPU kernels select in every window, for MindSpore's
// ops.Custom(func_type="aot").
//
// PyTorch's CPU loop starts from the window's first position with -inf (the lowest value for
// integers) and scans the window in row-major order, taking an element when
// `val > max || isnan(val)`: the first maximum, or the last NaN. The same scan here gives
// the same index and value (the backward, PyTorch's scatter-add of the gradient to the picked
// elements, is the Custom op's bprop in MindSpore).
//
//   WindowMax(x, t0, t1, t2, dims) -> (values, idx)
//     x:  (*lead, *spatial) float32/float64/int32/int64 with 1 to 3 spatial axes, taken as
//         planes in place (no reshape, which MindSpore's graph mode runs as a copy)
//     ti: (Oi, Ki) int64 window tables: input positions along axis i of window o (repeats of a
//         valid position stand for positions outside the input); the spatial axes use the last
//         tables, the others are (1, 1) zeros
//     dims: int8 of shape (number of spatial axes,), only its shape is read
//     values: (*lead, *O), x's dtype: the picked elements
//     idx: (*lead, *O) int64, flat index (p0 * n1 + p1) * n2 + p2 into each plane.

// Adaptive average pooling (adaptive_avg_pool1d/2d/3d), PyTorch's CPU loop: per window, the sum
// in row-major order, then divided by each axis's window length in turn (sum / k0 / k1 / k2);
// the backward adds dy / k0 / k1 / k2 to every element of the window, windows in order.
//
//   WindowMean(x, r0, r1, r2, dims) -> y
//     x: (*lead, *spatial) float32/float64; ri: (Oi, 2) int64 [start, end) of window o along
//     axis i (the spatial axes use the last tables, the others are (1, 2) [0, 1]); dims as in
//     WindowMax;  y: (*lead, *O).
//   WindowMeanGrad(dy, like, r0, r1, r2, dims) -> dx (like's shape).
//
// Max unpooling (max_unpool1d/2d/3d), PyTorch's CPU loop: zeros, then every input element
// written at its index in order (a later duplicate overwrites); out-of-range indices are
// skipped (PyTorch raises). Copies only, so any 2/4/8-byte dtype.
//
//   ScatterPlanes(x, idx, size) -> out
//     x, idx: (*lead, *in) values and int64 flat indices into each plane;  size: int8 of the
//     output plane's shape (*out, 1 to 3 axes), only its shape is read
//     out: (*lead, *out), x's dtype. N-D in place: no reshape, which MindSpore's graph mode
//     runs as a copy (the output is 4x the input).
//
// The two backwards, PyTorch's loops:
//   ScatterAddPlanes(dy, idx, like, dims) -> dx: max pooling's; dy, idx (*lead, *O), like
//     (*lead, *spatial), dims as in WindowMax; dx (like's shape, dy's dtype float32/float64)
//     = 0, then dx[b, idx[b, j]] += dy[b, j] for j in order, per plane b.
//   CountOutside(idx, size) -> count: the indices outside the output plane (max unpooling
//     raises on any, as PyTorch).
//   GatherPlanes(dy, idx, size) -> dx: max unpooling's; dy (*lead, *out), idx (*lead, *in),
//     size as in ScatterPlanes; dx[b, j] = dy[b, idx[b, j]] per plane b (0 where the index is
//     out of range), any 2/4/8-byte dtype.
//
// Calling convention: common.h. Large inputs are split over threads (MSCOMPAT_NUM_THREADS caps
// them).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>
#include <type_traits>
#include <vector>

#include "common.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::IsNan;
using mscompat::ParallelFor;
using mscompat::SameLead;

// `take ? a : b` without a branch: on random data a branch mispredicts about half the time.
template <typename T>
inline T Select(bool take, T a, T b) {
  using U = typename std::conditional<sizeof(T) == 8, uint64_t, uint32_t>::type;
  U ua, ub;
  std::memcpy(&ua, &a, sizeof(T));
  std::memcpy(&ub, &b, sizeof(T));
  const U mask = static_cast<U>(0) - static_cast<U>(take);
  const U r = (ua & mask) | (ub & ~mask);
  T out;
  std::memcpy(&out, &r, sizeof(T));
  return out;
}

template <typename T>
constexpr T Lowest() {
  if constexpr (std::is_floating_point<T>::value) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

struct Table {
  const int64_t *pos;
  int64_t out, k;
};

template <typename T>
void Run(const T *x, int64_t planes, const int64_t *n, const Table *t, T *values,
         int64_t *out) {
  const int64_t plane = n[0] * n[1] * n[2];
  const int64_t rows = planes * t[0].out * t[1].out;  // one row: the O2 windows of (b, o0, o1)
  const int64_t taps = t[0].k * t[1].k * t[2].k;
  const int64_t o2n = t[2].out, k2 = t[2].k;
  const bool long_windows = taps >= 16;
  ParallelFor(rows, rows * o2n * taps, [=](int64_t begin, int64_t end) {
    std::vector<T> max_buf(o2n);
    std::vector<int64_t> pick_buf(o2n), col_buf(k2 * o2n);
    for (int64_t o2 = 0; o2 < o2n; ++o2)  // the last axis's table, tap-major
      for (int64_t e = 0; e < k2; ++e) col_buf[e * o2n + o2] = t[2].pos[o2 * k2 + e];
    T *__restrict mx = max_buf.data();
    int64_t *__restrict pick = pick_buf.data();
    const int64_t *col = col_buf.data();
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / (t[0].out * t[1].out);
      const int64_t o01 = row % (t[0].out * t[1].out);
      const int64_t o0 = o01 / t[1].out, o1 = o01 % t[1].out;
      const T *src = x + b * plane;
      const int64_t *p0 = t[0].pos + o0 * t[0].k;
      const int64_t *p1 = t[1].pos + o1 * t[1].k;
      // The windows of a row are independent: scanning tap by tap across all of them keeps
      // the CPU busy (no loop-carried dependency), in each window's own tap order.
      const int64_t first = (p0[0] * n[1] + p1[0]) * n[2];
      for (int64_t o2 = 0; o2 < o2n; ++o2) {
        mx[o2] = Lowest<T>();
        pick[o2] = first + col[o2];
      }
      for (int64_t a = 0; a < t[0].k; ++a) {
        for (int64_t c = 0; c < t[1].k; ++c) {
          const int64_t line = (p0[a] * n[1] + p1[c]) * n[2];
          const T *__restrict in = src + line;
          for (int64_t e = 0; e < k2; ++e) {
            const int64_t *__restrict ce = col + e * o2n;
            if (long_windows) {  // few updates after the first taps: a branch predicts well
              for (int64_t o2 = 0; o2 < o2n; ++o2) {
                const T val = in[ce[o2]];
                if ((val > mx[o2]) | IsNan(val)) {
                  mx[o2] = val;
                  pick[o2] = line + ce[o2];
                }
              }
            } else {  // about every other tap updates on random data: no branch
              for (int64_t o2 = 0; o2 < o2n; ++o2) {
                const T val = in[ce[o2]];
                const bool take = (val > mx[o2]) | IsNan(val);
                mx[o2] = Select(take, val, mx[o2]);
                pick[o2] = Select(take, line + ce[o2], pick[o2]);
              }
            }
          }
        }
      }
      std::copy(mx, mx + o2n, values + row * o2n);
      std::copy(pick, pick + o2n, out + row * o2n);
    }
  });
}

struct Ranges {
  const int64_t *se;  // (out, 2): [start, end) per window
  int64_t out;
};

// Calls f(s0, e0, s1, e1, s2, e2) for every window of a plane, in output order.
template <typename F>
void EachWindow(const Ranges *r, F f) {
  for (int64_t o0 = 0; o0 < r[0].out; ++o0)
    for (int64_t o1 = 0; o1 < r[1].out; ++o1)
      for (int64_t o2 = 0; o2 < r[2].out; ++o2)
        f(r[0].se[2 * o0], r[0].se[2 * o0 + 1], r[1].se[2 * o1], r[1].se[2 * o1 + 1],
          r[2].se[2 * o2], r[2].se[2 * o2 + 1]);
}

template <typename T>
void Mean(const T *x, int64_t planes, const int64_t *n, const Ranges *r, T *y) {
  const int64_t plane_in = n[0] * n[1] * n[2];
  const int64_t plane_out = r[0].out * r[1].out * r[2].out;
  ParallelFor(planes, planes * (plane_in + plane_out), [=](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const T *src = x + b * plane_in;
      T *dst = y + b * plane_out;
      EachWindow(r, [&](int64_t s0, int64_t e0, int64_t s1, int64_t e1, int64_t s2, int64_t e2) {
        T sum = 0;
        for (int64_t i0 = s0; i0 < e0; ++i0)
          for (int64_t i1 = s1; i1 < e1; ++i1) {
            const T *line = src + (i0 * n[1] + i1) * n[2];
            for (int64_t i2 = s2; i2 < e2; ++i2) sum += line[i2];
          }
        *dst++ = sum / static_cast<T>(e0 - s0) / static_cast<T>(e1 - s1) / static_cast<T>(e2 - s2);
      });
    }
  });
}

template <typename T>
void MeanGrad(const T *dy, int64_t planes, const int64_t *n, const Ranges *r, T *dx) {
  const int64_t plane_in = n[0] * n[1] * n[2];
  const int64_t plane_out = r[0].out * r[1].out * r[2].out;
  ParallelFor(planes, planes * (plane_in + plane_out), [=](int64_t begin, int64_t end) {
    std::fill(dx + begin * plane_in, dx + end * plane_in, T(0));
    for (int64_t b = begin; b < end; ++b) {
      const T *src = dy + b * plane_out;
      T *dst = dx + b * plane_in;
      EachWindow(r, [&](int64_t s0, int64_t e0, int64_t s1, int64_t e1, int64_t s2, int64_t e2) {
        const T delta =
            *src++ / static_cast<T>(e0 - s0) / static_cast<T>(e1 - s1) / static_cast<T>(e2 - s2);
        for (int64_t i0 = s0; i0 < e0; ++i0)
          for (int64_t i1 = s1; i1 < e1; ++i1) {
            T *line = dst + (i0 * n[1] + i1) * n[2];
            for (int64_t i2 = s2; i2 < e2; ++i2) line[i2] += delta;
          }
      });
    }
  });
}

template <typename T>
void Scatter(const T *x, const int64_t *idx, int64_t planes, int64_t p, int64_t s, T *out) {
  ParallelFor(planes, planes * (p + s), [=](int64_t begin, int64_t end) {
    std::memset(static_cast<void *>(out + begin * s), 0, sizeof(T) * (end - begin) * s);
    for (int64_t b = begin; b < end; ++b) {
      const T *src = x + b * p;
      const int64_t *at = idx + b * p;
      T *dst = out + b * s;
      for (int64_t i = 0; i < p; ++i) {
        const int64_t j = at[i];
        if (j >= 0 && j < s) dst[j] = src[i];
      }
    }
  });
}

template <typename T>
void ScatterAdd(const T *dy, const int64_t *idx, int64_t planes, int64_t p, int64_t s, T *dx) {
  ParallelFor(planes, planes * (p + s), [=](int64_t begin, int64_t end) {
    std::fill(dx + begin * s, dx + end * s, T(0));
    for (int64_t b = begin; b < end; ++b) {
      const T *src = dy + b * p;
      const int64_t *at = idx + b * p;
      T *dst = dx + b * s;
      for (int64_t i = 0; i < p; ++i) {
        const int64_t j = at[i];
        if (j >= 0 && j < s) dst[j] += src[i];
      }
    }
  });
}

template <typename T>
void Gather(const T *dy, const int64_t *idx, int64_t planes, int64_t p, int64_t s, T *dx) {
  ParallelFor(planes, planes * p, [=](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const T *src = dy + b * s;
      const int64_t *at = idx + b * p;
      T *dst = dx + b * p;
      for (int64_t i = 0; i < p; ++i) {
        const int64_t j = at[i];
        dst[i] = (j >= 0 && j < s) ? src[j] : T(0);
      }
    }
  });
}


}  // namespace

namespace {

// Splits an (*lead, *plane) shape whose plane has `n` axes: the number of planes and the plane
// size; false if the rank is not above n.
bool SplitPlanes(int rank, const int64_t *shape, int n, int64_t *planes, int64_t *size) {
  if (n < 1 || rank <= n) return false;
  *planes = 1;
  *size = 1;
  for (int i = 0; i < rank; ++i) (i < rank - n ? *planes : *size) *= shape[i];
  return true;
}

// The scatter/gather kernels' dtypes: int64 indices at params[1], the output (at `out`) in the
// dtype of params[0].
bool IndexDtypes(const char **dtypes, int out) {
  return std::strcmp(dtypes[1], "int64") == 0 && std::strcmp(dtypes[out], dtypes[0]) == 0;
}

// Runs f(E{}) for float16/32/64 with E the unsigned integer of its size (a copy); kBadDtype else.
template <typename F>
int ByFloatSize(const char *dt, F &&f) {
  for (const char *name : {"float16", "float32", "float64"})
    if (std::strcmp(dt, name) == 0) return mscompat::ByElementSize(dt, f);
  return kBadDtype;
}

}  // namespace

extern "C" int WindowMax(int nparam, void **params, int *ndims, int64_t **shapes,
                         const char **dtypes, void *, void *) {
  if (nparam != 7) return kBadArity;
  for (int i = 1; i < 4; ++i)
    if (std::strcmp(dtypes[i], "int64") != 0) return kBadDtype;
  if (std::strcmp(dtypes[6], "int64") != 0 || std::strcmp(dtypes[5], dtypes[0]) != 0)
    return kBadDtype;
  if (ndims[4] != 1 || shapes[4][0] < 1 || shapes[4][0] > 3) return kBadShape;
  const int dims = static_cast<int>(shapes[4][0]), rank = ndims[0], unused = 3 - dims;
  int64_t planes, plane_size;
  if (!SplitPlanes(rank, shapes[0], dims, &planes, &plane_size)) return kBadShape;
  Table t[3];
  int64_t n[3];
  for (int i = 0; i < 3; ++i) {
    if (ndims[i + 1] != 2 || shapes[i + 1][0] < 1 || shapes[i + 1][1] < 1) return kBadShape;
    t[i] = {static_cast<const int64_t *>(params[i + 1]), shapes[i + 1][0], shapes[i + 1][1]};
    n[i] = i < unused ? 1 : shapes[0][rank - dims + i - unused];
  }
  for (int i = 5; i < 7; ++i) {  // values and indices: (*lead, *window counts)
    if (ndims[i] != rank || !SameLead(shapes[i], shapes[0], rank - dims)) return kBadShape;
    for (int d = 0; d < dims; ++d)
      if (shapes[i][rank - dims + d] != t[unused + d].out) return kBadShape;
  }
  for (int i = 0; i < 3; ++i) {  // every table position must lie inside the input
    if (i < unused && t[i].out != 1) return kBadShape;
    for (int64_t j = 0; j < t[i].out * t[i].k; ++j)
      if (t[i].pos[j] < 0 || t[i].pos[j] >= n[i]) return kBadShape;
  }
  auto *out = static_cast<int64_t *>(params[6]);
  return mscompat::ByDtype<float, double, int32_t, int64_t>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    Run(static_cast<const T *>(params[0]), planes, n, t, static_cast<T *>(params[5]), out);
  });
}

extern "C" int ScatterPlanes(int nparam, void **params, int *ndims, int64_t **shapes,
                             const char **dtypes, void *, void *) {
  if (nparam != 4) return kBadArity;
  if (!IndexDtypes(dtypes, 3)) return kBadDtype;
  const int rank = ndims[0], n = ndims[2];
  int64_t planes, p, s, out_planes, out_size;
  if (!SplitPlanes(rank, shapes[0], n, &planes, &p) || ndims[1] != rank || ndims[3] != rank ||
      !SameLead(shapes[0], shapes[1], rank) ||
      !SplitPlanes(rank, shapes[3], n, &out_planes, &out_size) ||
      !SameLead(shapes[0], shapes[3], rank - n) || !SameLead(shapes[3] + rank - n, shapes[2], n))
    return kBadShape;
  s = out_size;
  const auto *idx = static_cast<const int64_t *>(params[1]);
  return ByFloatSize(dtypes[0], [&](auto e) {
    using E = decltype(e);
    Scatter(static_cast<const E *>(params[0]), idx, planes, p, s, static_cast<E *>(params[3]));
  });
}

extern "C" int ScatterAddPlanes(int nparam, void **params, int *ndims, int64_t **shapes,
                                const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  if (!IndexDtypes(dtypes, 4)) return kBadDtype;
  if (ndims[3] != 1) return kBadShape;
  const int dims = static_cast<int>(shapes[3][0]), rank = ndims[0];
  int64_t planes, p, like_planes, s;
  if (!SplitPlanes(rank, shapes[0], dims, &planes, &p) || ndims[1] != rank ||
      !SameLead(shapes[0], shapes[1], rank) ||
      !SplitPlanes(ndims[2], shapes[2], dims, &like_planes, &s) || ndims[2] != rank ||
      !SameLead(shapes[0], shapes[2], rank - dims) || ndims[4] != rank ||
      !SameLead(shapes[2], shapes[4], rank))
    return kBadShape;
  const auto *idx = static_cast<const int64_t *>(params[1]);
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    ScatterAdd(static_cast<const T *>(params[0]), idx, planes, p, s, static_cast<T *>(params[4]));
  });
}

extern "C" int GatherPlanes(int nparam, void **params, int *ndims, int64_t **shapes,
                            const char **dtypes, void *, void *) {
  if (nparam != 4) return kBadArity;
  if (!IndexDtypes(dtypes, 3)) return kBadDtype;
  const int rank = ndims[1], n = ndims[2];
  int64_t planes, p, dy_planes, s;
  if (!SplitPlanes(rank, shapes[1], n, &planes, &p) || ndims[0] != rank || ndims[3] != rank ||
      !SplitPlanes(rank, shapes[0], n, &dy_planes, &s) ||
      !SameLead(shapes[0], shapes[1], rank - n) ||
      !SameLead(shapes[0] + rank - n, shapes[2], n) || !SameLead(shapes[1], shapes[3], rank))
    return kBadShape;
  const auto *idx = static_cast<const int64_t *>(params[1]);
  return ByFloatSize(dtypes[0], [&](auto e) {
    using E = decltype(e);
    Gather(static_cast<const E *>(params[0]), idx, planes, p, s, static_cast<E *>(params[3]));
  });
}

// CountOutside(idx, size) -> count: how many of the int64 indices lie outside [0, plane), plane
// the number of elements of `size` (the output plane's shape carrier): max unpooling's check of
// its indices, one pass instead of MindSpore's compare, or and reduce.
extern "C" int CountOutside(int nparam, void **params, int *ndims, int64_t **shapes,
                            const char **dtypes, void *, void *) {
  if (nparam != 3) return kBadArity;
  if (std::strcmp(dtypes[0], "int64") != 0 || std::strcmp(dtypes[2], "int64") != 0)
    return kBadDtype;
  if (!mscompat::HasShape(ndims[2], shapes[2], {1})) return kBadShape;
  const int64_t n = mscompat::NumElements(ndims[0], shapes[0]);
  const int64_t plane = mscompat::NumElements(ndims[1], shapes[1]);
  const auto *idx = static_cast<const int64_t *>(params[0]);
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += (idx[i] < 0) | (idx[i] >= plane);
  *static_cast<int64_t *>(params[2]) = count;
  return kOk;
}

namespace {

// Reads the window ranges (params[first..first+2]) and dims (params[first+3]) for an
// (*lead, *spatial) tensor at x_at: planes, spatial sizes (1 for unused axes), ranges.
int ReadRanges(void **params, int *ndims, int64_t **shapes, const char **dtypes, int x_at,
               int first, int64_t *planes, int64_t *n, Ranges *r) {
  if (ndims[first + 3] != 1 || shapes[first + 3][0] < 1 || shapes[first + 3][0] > 3)
    return kBadShape;
  const int dims = static_cast<int>(shapes[first + 3][0]), rank = ndims[x_at];
  const int unused = 3 - dims;
  int64_t plane_size;
  if (!SplitPlanes(rank, shapes[x_at], dims, planes, &plane_size)) return kBadShape;
  for (int i = 0; i < 3; ++i) {
    const int at = first + i;
    if (std::strcmp(dtypes[at], "int64") != 0) return kBadDtype;
    if (ndims[at] != 2 || shapes[at][1] != 2 || shapes[at][0] < 1) return kBadShape;
    n[i] = i < unused ? 1 : shapes[x_at][rank - dims + i - unused];
    r[i] = {static_cast<const int64_t *>(params[at]), shapes[at][0]};
    if (i < unused && r[i].out != 1) return kBadShape;
    for (int64_t o = 0; o < r[i].out; ++o) {
      const int64_t a = r[i].se[2 * o], e = r[i].se[2 * o + 1];
      if (a < 0 || e <= a || e > n[i]) return kBadShape;
    }
  }
  return kOk;
}

// Whether a tensor is (*lead of x, *window counts of the spatial axes in use).
bool IsPooledShape(int nd, const int64_t *shape, int rank, const int64_t *xs, int dims,
                   const Ranges *r) {
  if (nd != rank || !SameLead(shape, xs, rank - dims)) return false;
  for (int d = 0; d < dims; ++d)
    if (shape[rank - dims + d] != r[3 - dims + d].out) return false;
  return true;
}

}  // namespace

extern "C" int WindowMean(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  if (std::strcmp(dtypes[5], dtypes[0]) != 0) return kBadDtype;
  int64_t planes, n[3];
  Ranges r[3];
  if (int rc = ReadRanges(params, ndims, shapes, dtypes, 0, 1, &planes, n, r)) return rc;
  const int dims = static_cast<int>(shapes[4][0]);
  if (!IsPooledShape(ndims[5], shapes[5], ndims[0], shapes[0], dims, r)) return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    Mean(static_cast<const T *>(params[0]), planes, n, r, static_cast<T *>(params[5]));
  });
}

extern "C" int WindowMeanGrad(int nparam, void **params, int *ndims, int64_t **shapes,
                              const char **dtypes, void *, void *) {
  if (nparam != 7) return kBadArity;
  if (std::strcmp(dtypes[6], dtypes[0]) != 0 || std::strcmp(dtypes[1], dtypes[0]) != 0)
    return kBadDtype;
  int64_t planes, n[3];
  Ranges r[3];
  if (int rc = ReadRanges(params, ndims, shapes, dtypes, 1, 2, &planes, n, r)) return rc;
  const int dims = static_cast<int>(shapes[5][0]);
  if (!IsPooledShape(ndims[0], shapes[0], ndims[1], shapes[1], dims, r) ||
      ndims[6] != ndims[1] || !SameLead(shapes[6], shapes[1], ndims[1]))
    return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    MeanGrad(static_cast<const T *>(params[0]), planes, n, r, static_cast<T *>(params[6]));
  });
}
