// Transposed convolution (and its gradients) as blocked matrix products + col2im / im2col, for
// MindSpore's ops.Custom(func_type="aot"); float32.
//
//   ConvTransposeGemm(x, w, b, geom, size) -> y
//     x:    (N, Cin, H, W) float32; w: (Cin, Cout / groups, kh, kw) (PyTorch's layout);
//     b:    (Cout,) float32 (zeros for no bias)
//     geom: (9,) int64 [kh, kw, dh, dw, ph, pw, sh, sw, groups]
//     size: (Ho, Wo) int8, read for its shape
//     y:    (N, Cout, Ho, Wo): per (image, group, block of output channels), per block of input
//           rows: columns = w^T x (one sgemm), then each column added to its output element
//           (col2im), while the columns are in cache.
//   ConvTransposeGemmBackward(dy, x, w, geom, size) -> dx, dw
//     per (image, group, block of input rows): columns = im2col(dy) once, dx = w columns
//     (the convolution of dy) and dw += x columns^T (per-set sums, added at the end).
//   ConvGemm(x, w, b, geom, size) -> y and ConvGemmWeight(x, dy, w, geom) -> dw
//     PyTorch's conv2d (symmetric padding; w (C_out, C_in / groups, kh, kw)) and its weight
//     gradient: the backward's two halves with the roles of the sides swapped (the
//     convolution's input gradient is ConvTransposeGemm).
//
// The matrix products are oneDNN's dnnl_sgemm (sgemm.h): MindSpore's own convolution kernels
// pick oneDNN's reference implementation for PyTorch's plain NCHW layout (measured 600-900 ms
// where PyTorch takes a few ms). Each sgemm runs on one thread (MindSpore's oneDNN has a threadpool runtime); the work is
// split over threads here. Without dnnl_sgemm every entry returns kBadOption (the probe fails
// and the caller falls back to matmul + col2im).
//
// Calling convention: common.h.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "common.h"
#include "parallel.h"
#include "sgemm.h"

namespace {

using namespace mscompat::status;

using mscompat::Sgemm;
using mscompat::SgemmFn;

// Columns per block: 256 KiB of float32 (in L2 between the sgemm and col2im; measured faster
// than 128 KiB, as fast as 512 KiB-1 MiB).
constexpr int64_t kBlockElements = 65536;

struct Geometry {
  int64_t n = 0, cin = 0, h = 0, w = 0, cout = 0, ho = 0, wo = 0;
  int64_t kh = 1, kw = 1, dh = 1, dw = 1, ph = 0, pw = 0, sh = 1, sw = 1, groups = 1;
  int64_t k = 1, cig = 0, cog = 0;  // kernel positions, input / output channels per group

  // Input rows per block when a block's columns have `rows_of_cols` rows.
  int64_t RowsPerBlock(int64_t rows_of_cols) const {
    return std::max<int64_t>(1, std::min<int64_t>(h, kBlockElements / (rows_of_cols * w)));
  }
};

// The geometry from geom's values `p`, the weight's shape `ws` (4-D) and the sizes of the two
// sides: the small one (n, cin, h, w) and the large one's (ho, wo).
int Fill(const int64_t *p, const int64_t *ws, int64_t n, int64_t cin, int64_t h, int64_t w,
         int64_t ho, int64_t wo, Geometry *g) {
  int64_t *fields[] = {&g->kh, &g->kw, &g->dh, &g->dw, &g->ph, &g->pw, &g->sh, &g->sw, &g->groups};
  for (int i = 0; i < 9; ++i) *fields[i] = p[i];
  g->n = n;
  g->cin = cin;
  g->h = h;
  g->w = w;
  g->ho = ho;
  g->wo = wo;
  if (g->kh < 1 || g->kw < 1 || g->dh < 1 || g->dw < 1 || g->ph < 0 || g->pw < 0 ||
      g->sh < 1 || g->sw < 1 || g->groups < 1 || g->cin % g->groups != 0)
    return kBadShape;
  if (ws[0] != g->cin || ws[2] != g->kh || ws[3] != g->kw) return kBadShape;
  g->k = g->kh * g->kw;
  g->cig = g->cin / g->groups;
  g->cog = ws[1];
  g->cout = g->cog * g->groups;
  if (g->n < 1 || g->h < 1 || g->w < 1 || g->ho < 1 || g->wo < 1 || g->cog < 1) return kBadShape;
  return kOk;
}

bool GeometryShapes(int *ndims, int64_t **shapes, std::initializer_list<int> four, int geom_at,
                    int size_at) {
  for (int i : four)
    if (ndims[i] != 4) return false;
  return ndims[geom_at] == 1 && shapes[geom_at][0] == 9 && (size_at < 0 || ndims[size_at] == 2);
}

// The transposed convolution's geometry: x (the small side) at x_at, the weight at w_at, the
// large side's (Ho, Wo) from the carrier at size_at.
int ReadGeometry(int *ndims, int64_t **shapes, int x_at, int w_at, int geom_at, int size_at,
                 void **params, Geometry *g) {
  if (!GeometryShapes(ndims, shapes, {x_at, w_at}, geom_at, size_at)) return kBadShape;
  const int64_t *xs = shapes[x_at];
  return Fill(static_cast<const int64_t *>(params[geom_at]), shapes[w_at], xs[0], xs[1], xs[2],
              xs[3], shapes[size_at][0], shapes[size_at][1], g);
}

// Output planes are handled in a stride-split ("phase") layout: the (sh * sw) sub-grids of the
// elements with oh % sh == a and ow % sw == b, each (hq, wq), one after the other. A kernel
// position (i, j) then maps input (ih, iw) to sub-grid element (ih + qh, iw + qw) of one phase:
// col2im and im2col are contiguous row loops (vectorized) instead of stride-sw ones.
struct Phases {
  int64_t hq = 0, wq = 0, plane = 0;  // sub-grid size; floats per plane
  bool identity = false;              // stride 1: the layout is the plain one

  explicit Phases(const Geometry &g)
      : hq((g.ho + g.sh - 1) / g.sh),
        wq((g.wo + g.sw - 1) / g.sw),
        plane(g.sh * g.sw * hq * wq),
        identity(g.sh == 1 && g.sw == 1) {}
};

// Where kernel offset `first` (-p + k * d) lands in the phase layout along a dim of stride s:
// phase first mod s, shift floor(first / s).
inline void Split(int64_t first, int64_t s, int64_t *phase, int64_t *shift) {
  *phase = ((first % s) + s) % s;
  *shift = (first - *phase) / s;
}

// The input columns [lo, hi) whose output column iw * sw - pw + j * dw lies in [0, wo).
void ColumnRange(const Geometry &g, int64_t j, int64_t *lo, int64_t *hi) {
  const int64_t first = -g.pw + j * g.dw;  // output column of input column 0
  *lo = first >= 0 ? 0 : (-first + g.sw - 1) / g.sw;
  *hi = first > g.wo - 1 ? 0 : std::min<int64_t>(g.w, (g.wo - 1 - first) / g.sw + 1);
  *lo = std::min(*lo, *hi);
}

// Phase layout -> plain (N, C, Ho, Wo) plane, or back (kToPhases).
template <bool kToPhases>
void Interleave(const Geometry &g, const Phases &ph, float *phased, float *plain) {
  for (int64_t oh = 0; oh < g.ho; ++oh) {
    const int64_t a = oh % g.sh;
    float *row = plain + oh * g.wo;
    if (g.sw == 2) {  // the common stride: both phases per element pair (vectorized)
      float *even = phased + (a * 2 * ph.hq + oh / g.sh) * ph.wq, *odd = even + ph.hq * ph.wq;
      const int64_t pairs = g.wo / 2;
      for (int64_t q = 0; q < pairs; ++q) {
        if constexpr (kToPhases) {
          even[q] = row[2 * q];
          odd[q] = row[2 * q + 1];
        } else {
          row[2 * q] = even[q];
          row[2 * q + 1] = odd[q];
        }
      }
      if (g.wo % 2) {
        if constexpr (kToPhases) {
          even[pairs] = row[g.wo - 1];
        } else {
          row[g.wo - 1] = even[pairs];
        }
      }
      continue;
    }
    for (int64_t b = 0; b < g.sw; ++b) {
      float *sub = phased + ((a * g.sw + b) * ph.hq + oh / g.sh) * ph.wq;
      const int64_t n = (g.wo - b + g.sw - 1) / g.sw;
      for (int64_t q = 0; q < n; ++q) {
        if constexpr (kToPhases) {
          sub[q] = row[q * g.sw + b];
        } else {
          row[q * g.sw + b] = sub[q];
        }
      }
    }
  }
}

// An offset ForColumnRows passes for an output row outside the output (a real offset may be
// negative: the columns before lo never land).
constexpr int64_t kOutside = std::numeric_limits<int64_t>::min();

// For each column row of a block (nc channels x K kernel offsets, input rows [h0, h0 + r)) and
// each input row ih: body(column offset, offset in the phase-layout planes or kOutside where
// the output row is outside, lo, hi), the columns [lo, hi) of that row landing inside.
template <typename F>
void ForColumnRows(const Geometry &g, const Phases &ph, int64_t nc, int64_t h0, int64_t r,
                   F body) {
  const int64_t len = r * g.w;
  for (int64_t c = 0; c < nc; ++c) {
    for (int64_t i = 0; i < g.kh; ++i) {
      int64_t a, qh;
      Split(-g.ph + i * g.dh, g.sh, &a, &qh);
      for (int64_t j = 0; j < g.kw; ++j) {
        int64_t b, qw, lo, hi;
        Split(-g.pw + j * g.dw, g.sw, &b, &qw);
        ColumnRange(g, j, &lo, &hi);
        const int64_t row = (c * g.k + i * g.kw + j) * len;
        const int64_t sub = c * ph.plane + (a * g.sw + b) * ph.hq * ph.wq + qw;
        for (int64_t ih = 0; ih < r; ++ih) {
          const int64_t oh = (h0 + ih) * g.sh - g.ph + i * g.dh;
          const bool inside = oh >= 0 && oh < g.ho;
          body(row + ih * g.w, inside ? sub + (h0 + ih + qh) * ph.wq : kOutside, lo, hi);
        }
      }
    }
  }
}

// col2im of one block of columns (nc channels, input rows [h0, h0 + r)) into nc phase-layout
// planes at `planes` (built for AVX2 too: the row additions are its vector loop).
__attribute__((target_clones("avx2", "default"))) void AddColumns(
    const Geometry &g, const Phases &ph, const float *cols, int64_t nc, int64_t h0, int64_t r,
    float *planes) {
  ForColumnRows(g, ph, nc, h0, r, [=](int64_t at, int64_t to, int64_t lo, int64_t hi) {
    if (to == kOutside) return;
    const float *src = cols + at;
    float *dst = planes + to;
    for (int64_t iw = lo; iw < hi; ++iw) dst[iw] += src[iw];
  });
}

// y = conv_transpose(x, w) + b, units (image, group, block of cb output channels).
void Scatter(const float *x, const float *wt, const float *b, const Geometry &g, int64_t cb,
             float *y, SgemmFn sgemm) {
  const Phases ph(g);
  const int64_t blocks = (g.cog + cb - 1) / cb;
  const int64_t units = g.n * g.groups * blocks;
  const int64_t flops = g.n * g.cin * g.h * g.w * g.cog * g.k;
  mscompat::ParallelFor(units, flops / 64, [&](int64_t begin, int64_t end) {
    const int64_t rows = g.RowsPerBlock(cb * g.k);
    std::vector<float> cols(static_cast<size_t>(cb * g.k * rows * g.w));
    std::vector<float> phased(ph.identity ? 0 : static_cast<size_t>(cb * ph.plane));
    for (int64_t u = begin; u < end; ++u) {
      const int64_t image = u / (g.groups * blocks), group = u / blocks % g.groups;
      const int64_t c0 = u % blocks * cb, nc = std::min(cb, g.cog - c0);
      float *out = y + (image * g.cout + group * g.cog + c0) * g.ho * g.wo;
      float *planes = ph.identity ? out : phased.data();
      for (int64_t c = 0; c < nc; ++c)
        std::fill(planes + c * ph.plane, planes + (c + 1) * ph.plane, b[group * g.cog + c0 + c]);
      const float *a = wt + group * g.cig * g.cog * g.k + c0 * g.k;  // (Cin_g, Cout_g * K)
      const float *in = x + (image * g.cin + group * g.cig) * g.h * g.w;
      for (int64_t h0 = 0; h0 < g.h; h0 += rows) {
        const int64_t r = std::min(rows, g.h - h0), len = r * g.w;
        sgemm('T', 'N', nc * g.k, len, g.cig, 1.0f, a, g.cog * g.k, in + h0 * g.w, g.h * g.w,
              0.0f, cols.data(), len);
        AddColumns(g, ph, cols.data(), nc, h0, r, planes);
      }
      if (!ph.identity)
        for (int64_t c = 0; c < nc; ++c)
          Interleave<false>(g, ph, planes + c * ph.plane, out + c * g.ho * g.wo);
    }
  });
}

// im2col of the phase-layout dy planes of one (image, group) for the input rows [h0, h0 + r):
// (Cout_g * K, r * W).
void Gather(const float *planes, const Geometry &g, const Phases &ph, int64_t h0, int64_t r,
            float *cols) {
  ForColumnRows(g, ph, g.cog, h0, r, [=, &g](int64_t at, int64_t from, int64_t lo, int64_t hi) {
    float *dst = cols + at;
    if (from == kOutside || lo >= hi) {
      std::fill(dst, dst + g.w, 0.0f);
      return;
    }
    const float *src = planes + from;
    std::fill(dst, dst + lo, 0.0f);
    std::copy(src + lo, src + hi, dst + lo);
    std::fill(dst + hi, dst + g.w, 0.0f);
  });
}

// dx = conv(dy, w) and dw = sum x im2col(dy)^T (either may be null: not computed), units
// (image, group, block of input rows).
void Backward(const float *dy, const float *x, const float *wt, const Geometry &g, float *dx,
              float *dw, SgemmFn sgemm, const float *bias = nullptr) {
  const int64_t rows = g.RowsPerBlock(g.cog * g.k);
  const int64_t chunks = (g.h + rows - 1) / rows;
  const int64_t units = g.n * g.groups * chunks;
  const int64_t weights = g.cin * g.cog * g.k;
  const int64_t flops = 2 * g.n * g.cin * g.h * g.w * g.cog * g.k;
  const int threads = mscompat::NumThreads(flops / 64, 1 << 16, 1 << 15);
  // Units in `sets` fixed sets (round robin), each with its own weight gradient, summed in set
  // order at the end: deterministic, and the sets are handed out on demand (a thread the OS
  // deschedules delays one set, not half of the work).
  const int64_t sets = std::min<int64_t>(units, threads == 1 ? 1 : 4 * threads);
  std::vector<float> partial(dw != nullptr ? static_cast<size_t>(sets * weights) : 0, 0.0f);
  const Phases ph(g);
  std::vector<float> phased;
  if (!ph.identity) {  // dy in the phase layout, once
    phased.resize(static_cast<size_t>(g.n * g.cout * ph.plane));
    mscompat::ParallelFor(g.n * g.cout, g.n * g.cout * g.ho * g.wo, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p)
        Interleave<true>(g, ph, phased.data() + p * ph.plane,
                         const_cast<float *>(dy) + p * g.ho * g.wo);
    });
  }
  const float *planes = ph.identity ? dy : phased.data();
  mscompat::ParallelFor(sets, flops / 64, 1 << 16, 1 << 15, [&](int64_t begin, int64_t end) {
    std::vector<float> cols(static_cast<size_t>(g.cog * g.k * rows * g.w));
    for (int64_t set = begin; set < end; ++set) {
      float *acc = dw != nullptr ? partial.data() + set * weights : nullptr;
      for (int64_t u = set; u < units; u += sets) {
        const int64_t image = u / (g.groups * chunks), group = u / chunks % g.groups;
        const int64_t h0 = u % chunks * rows, r = std::min(rows, g.h - h0), len = r * g.w;
        Gather(planes + (image * g.cout + group * g.cog) * ph.plane, g, ph, h0, r, cols.data());
        const int64_t at = (image * g.cin + group * g.cig) * g.h * g.w + h0 * g.w;
        if (bias != nullptr)  // dx starts as the bias (the convolution's forward)
          for (int64_t c = 0; c < g.cig; ++c)
            std::fill(dx + at + c * g.h * g.w, dx + at + c * g.h * g.w + len,
                      bias[group * g.cig + c]);
        if (dx != nullptr)  // w: (Cin_g, Cout_g * K) per group
          sgemm('N', 'N', g.cig, len, g.cog * g.k, 1.0f, wt + group * g.cig * g.cog * g.k,
                g.cog * g.k, cols.data(), len, bias != nullptr ? 1.0f : 0.0f, dx + at, g.h * g.w);
        if (dw != nullptr)
          sgemm('N', 'T', g.cig, g.cog * g.k, len, 1.0f, x + at, g.h * g.w, cols.data(), len,
                1.0f, acc + group * g.cig * g.cog * g.k, g.cog * g.k);
      }
    }
  });
  if (dw == nullptr) return;
  std::copy(partial.begin(), partial.begin() + weights, dw);
  for (int64_t set = 1; set < sets; ++set)
    for (int64_t i = 0; i < weights; ++i) dw[i] += partial[set * weights + i];
}

bool Float32(const char **dtypes, std::initializer_list<int> at) {
  for (int i : at)
    if (std::strcmp(dtypes[i], "float32") != 0) return false;
  return true;
}

bool Carriers(const char **dtypes, int geom_at) {
  return std::strcmp(dtypes[geom_at], "int64") == 0 && std::strcmp(dtypes[geom_at + 1], "int8") == 0;
}

}  // namespace

// params: x, w, b, geom, size, y
extern "C" int ConvTransposeGemm(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  if (!Float32(dtypes, {0, 1, 2, 5}) || !Carriers(dtypes, 3)) return kBadDtype;
  const SgemmFn sgemm = Sgemm();
  if (sgemm == nullptr) return kBadOption;
  Geometry g;
  if (int rc = ReadGeometry(ndims, shapes, 0, 1, 3, 4, params, &g)) return rc;
  if (!mscompat::HasShape(ndims[2], shapes[2], {g.cout}) ||
      !mscompat::HasShape(ndims[5], shapes[5], {g.n, g.cout, g.ho, g.wo}))
    return kBadShape;
  // channel blocks: a few units per thread when there are few (image, group) pairs
  const int64_t pairs = g.n * g.groups;
  const int64_t split = std::min<int64_t>(g.cog, (16 + pairs - 1) / pairs);
  const int64_t cb = (g.cog + split - 1) / split;
  Scatter(static_cast<const float *>(params[0]), static_cast<const float *>(params[1]),
          static_cast<const float *>(params[2]), g, cb, static_cast<float *>(params[5]), sgemm);
  return kOk;
}

// params: dy, x, w, geom, size, dx, dw
extern "C" int ConvTransposeGemmBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                         const char **dtypes, void *, void *) {
  if (nparam != 7) return kBadArity;
  if (!Float32(dtypes, {0, 1, 2, 5, 6}) || !Carriers(dtypes, 3)) return kBadDtype;
  const SgemmFn sgemm = Sgemm();
  if (sgemm == nullptr) return kBadOption;
  Geometry g;
  if (int rc = ReadGeometry(ndims, shapes, 1, 2, 3, 4, params, &g)) return rc;
  if (!mscompat::HasShape(ndims[0], shapes[0], {g.n, g.cout, g.ho, g.wo}) ||
      !mscompat::SameShape(ndims[5], shapes[5], ndims[1], shapes[1]) ||
      !mscompat::SameShape(ndims[6], shapes[6], ndims[2], shapes[2]))
    return kBadShape;
  Backward(static_cast<const float *>(params[0]), static_cast<const float *>(params[1]),
           static_cast<const float *>(params[2]), g, static_cast<float *>(params[5]),
           static_cast<float *>(params[6]), sgemm);
  return kOk;
}

// The convolution (PyTorch's conv2d, symmetric padding) as the transposed convolution's input
// gradient: its input is the large side, its (C_out, C_in / groups, kh, kw) weight the
// transposed one's (Cin, Cout / groups, kh, kw).
// params: x (N, C_in, H, W), w, b (C_out,), geom, size (the output's (H_out, W_out)
// carrier), y
extern "C" int ConvGemm(int nparam, void **params, int *ndims, int64_t **shapes,
                        const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  if (!Float32(dtypes, {0, 1, 2, 5}) || !Carriers(dtypes, 3)) return kBadDtype;
  const SgemmFn sgemm = Sgemm();
  if (sgemm == nullptr) return kBadOption;
  if (!GeometryShapes(ndims, shapes, {0, 1, 5}, 3, 4)) return kBadShape;
  const int64_t *xs = shapes[0], *ws = shapes[1];
  Geometry g;
  if (int rc = Fill(static_cast<const int64_t *>(params[3]), ws, xs[0], ws[0], shapes[4][0],
                    shapes[4][1], xs[2], xs[3], &g))
    return rc;
  if (xs[1] != g.cout || !mscompat::HasShape(ndims[2], shapes[2], {g.cin}) ||
      !mscompat::HasShape(4, shapes[5], {g.n, g.cin, g.h, g.w}))
    return kBadShape;
  Backward(static_cast<const float *>(params[0]), nullptr, static_cast<const float *>(params[1]),
           g, static_cast<float *>(params[5]), nullptr, sgemm,
           static_cast<const float *>(params[2]));
  return kOk;
}

// The convolution's weight gradient. params: x (N, C_in, H, W), dy (N, C_out, H_out, W_out),
// w (read for its shape), geom, dw
extern "C" int ConvGemmWeight(int nparam, void **params, int *ndims, int64_t **shapes,
                              const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  if (!Float32(dtypes, {0, 1, 2, 4}) || std::strcmp(dtypes[3], "int64") != 0) return kBadDtype;
  const SgemmFn sgemm = Sgemm();
  if (sgemm == nullptr) return kBadOption;
  if (!GeometryShapes(ndims, shapes, {0, 1, 2, 4}, 3, -1)) return kBadShape;
  const int64_t *xs = shapes[0], *ds = shapes[1];
  Geometry g;
  if (int rc = Fill(static_cast<const int64_t *>(params[3]), shapes[2], ds[0], ds[1], ds[2],
                    ds[3], xs[2], xs[3], &g))
    return rc;
  if (xs[0] != g.n || xs[1] != g.cout || !mscompat::SameShape(4, shapes[4], 4, shapes[2]))
    return kBadShape;
  Backward(static_cast<const float *>(params[0]), static_cast<const float *>(params[1]), nullptr,
           g, nullptr, static_cast<float *>(params[4]), sgemm);
  return kOk;
}
