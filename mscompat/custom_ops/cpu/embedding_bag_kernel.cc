// embedding_bag with PyTorch's CPU arithmetic: kernels for MindSpore's ops.Custom(func_type="aot").
//
//   BagSum(w, idx, off, psw, cfg, bags) -> out, status       modes 'sum' and 'mean'
//   BagMax(w, idx, off, psw, cfg, bags) -> out, argmax, status
//   BagSumGrad(dout, w, idx, off, psw, cfg) -> dw, dpsw
//   BagMaxGrad(dout, argmax, w) -> dw
//
// w (rows, D) float32/float64; idx (B, L) (bag b = positions b*L .. b*L+L-1) or (n,) cut at off
// (int32/int64, idx's dtype; ignored for 2-D idx); psw: idx's shape, w's dtype, or a 1-element
// dummy; cfg float64 [mode (0 sum, 1 mean, 2 max), padding_idx (-1: none), unused (the
// offsets' length says where the last bag ends), has psw, max_norm (< 0: none), norm_type, scale_grad_by_freq]; bags: int8 whose length is the
// number of bags (only its shape is read); out (B, D); argmax (B, D) int64: the row each output
// element came from, -1 for a bag with no row.
// status (1,) int64: 0, or 1 (an index outside [0, rows)), 2 (off[0] != 0), 3 (off[-1] > n):
// the front door raises PyTorch's errors from it (a failing kernel status would surface as a
// bare RuntimeError).
//
// PyTorch (aten/src/ATen/native/EmbeddingBag.cpp): a bag sums its rows in index order, in T
// (fbgemm for float32, axpy for float64), per_sample_weights scaling each row; 'mean' divides
// the sum by the bag's count of rows; 'max' keeps, per element, the first row whose value is
// greater (a later NaN never wins); padding_idx rows are left out of every bag and count; an
// empty bag gives zeros. max_norm renormalises a looked-up row in place: norm in T, factor
// max_norm / (norm + 1e-7) in double, the product in T; the gradient reaches the row unscaled.
// Backward ('sum'/'mean'): each row's gradient is the sum, over its occurrences in index order,
// of T(scale) * dout[bag], scale = psw / count of the row in idx (scale_grad_by_freq) / the
// bag's count (mean), in double; the padding row gets none. per_sample_weights' gradient:
// dot(dout[bag], row). Backward ('max'): dout added to the argmax rows, bag by bag.
//
// Threads (parallel.h): forward by bags, the sum backward by weight rows (a counting sort of
// the indices gives each row its occurrences in order), the max backward by columns: every
// output element has one writer, and sums keep PyTorch's order.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "common.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::ParallelFor;

constexpr int kSum = 0, kMean = 1, kMax = 2;

struct Config {
  int mode;
  int64_t pad;
  bool has_psw, by_freq;
  double max_norm, norm_type;
};

Config ReadConfig(const double *c) {
  return {static_cast<int>(c[0]), static_cast<int64_t>(c[1]), c[3] != 0, c[6] != 0, c[4], c[5]};
}

// The bags' layout: 2-D idx (bags of `len`) or 1-D idx cut at off.
template <typename I>
struct Layout {
  const I *off;
  int64_t n, bags, len, n_off;  // len > 0: 2-D; n_off: bags (+ 1 with include_last_offset)

  void Range(int64_t b, int64_t *start, int64_t *end) const {
    if (len > 0) {
      *start = b * len;
      *end = *start + len;
      return;
    }
    const int64_t s = static_cast<int64_t>(off[b]);
    const int64_t e = b + 1 < n_off ? static_cast<int64_t>(off[b + 1]) : n;
    *start = std::min<int64_t>(std::max<int64_t>(s, 0), n);
    *end = std::min<int64_t>(std::max<int64_t>(e, *start), n);
  }

  // 0, or the status of bad offsets (PyTorch's checks).
  int Check() const {
    if (len > 0 || n_off == 0) return 0;
    if (off[0] != 0) return 2;
    if (static_cast<int64_t>(off[n_off - 1]) > n) return 3;
    return 0;
  }
};

// The factor PyTorch's renorm gives the row (1 when within max_norm or no max_norm).
template <typename T>
double RenormFactor(const T *row, int64_t dim, const Config &c) {
  if (c.max_norm < 0) return 1.0;
  T norm = 0;
  const double p = c.norm_type;
  if (std::isinf(p) && p > 0) {
    for (int64_t d = 0; d < dim; ++d) norm = std::max(norm, static_cast<T>(std::fabs(row[d])));
  } else if (p == 2.0) {
    for (int64_t d = 0; d < dim; ++d) norm += row[d] * row[d];
    norm = std::sqrt(norm);
  } else if (p == 1.0) {
    for (int64_t d = 0; d < dim; ++d) norm += std::fabs(row[d]);
  } else {
    for (int64_t d = 0; d < dim; ++d) norm += static_cast<T>(std::pow(std::fabs(row[d]), p));
    norm = static_cast<T>(std::pow(norm, 1.0 / p));
  }
  const double n = static_cast<double>(norm);
  return n > c.max_norm ? c.max_norm / (n + 1e-7) : 1.0;
}

// The hot loops (embedding_bag_loops.h), compiled three times: for any CPU, for AVX2+FMA and for
// AVX-512, chosen at run time by what the CPU has.
#define MSCOMPAT_NS loops_generic
#define MSCOMPAT_VEC_BYTES 32
#include "embedding_bag_loops.h"
#undef MSCOMPAT_VEC_BYTES
#undef MSCOMPAT_NS
#if defined(__GNUC__) && defined(__x86_64__)
#define MSCOMPAT_LOOPS_FMA 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define MSCOMPAT_NS loops_fma
#define MSCOMPAT_VEC_BYTES 32
#include "embedding_bag_loops.h"
#undef MSCOMPAT_VEC_BYTES
#undef MSCOMPAT_NS
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
#define MSCOMPAT_NS loops_avx512
#define MSCOMPAT_VEC_BYTES 64
#include "embedding_bag_loops.h"
#undef MSCOMPAT_VEC_BYTES
#undef MSCOMPAT_NS
#pragma GCC pop_options
#undef MSCOMPAT_LOOPS_FMA
#define MSCOMPAT_HAVE_FMA_LOOPS 1
#endif

// The loops of this CPU's copy.
template <typename T, typename I>
struct Loops {
  void (*sum_bag)(T *, const T *const *, const T *, int64_t, int64_t, T);
  void (*sum_bag_at)(T *, const T *, const I *, int64_t, const T *, int64_t, int64_t, T);
  void (*add_scaled)(T *, const T *, T, int64_t);
  void (*max_row)(T *, int64_t *, const T *, int64_t, int64_t);
  bool (*all_plain)(const I *, int64_t, int64_t, int64_t);
  T (*dot)(const T *, const T *, int64_t);

  static const Loops &Get() {
#ifdef MSCOMPAT_HAVE_FMA_LOOPS
    // libgcc's checks include the OS's saving of the AVX/AVX-512 registers (XCR0).
    static const bool fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    static const bool avx512 = fma && __builtin_cpu_supports("avx512f");
    static const Loops wide{loops_avx512::SumBag<T>, loops_avx512::SumBagAt<T, I>,
                            loops_avx512::AddScaled<T>, loops_avx512::MaxRow<T>,
                            loops_avx512::AllPlain<I>, loops_avx512::Dot<T>};
    static const Loops fast{loops_fma::SumBag<T>, loops_fma::SumBagAt<T, I>,
                            loops_fma::AddScaled<T>, loops_fma::MaxRow<T>,
                            loops_fma::AllPlain<I>, loops_fma::Dot<T>};
    if (avx512) return wide;
    if (fma) return fast;
#endif
    static const Loops plain{loops_generic::SumBag<T>, loops_generic::SumBagAt<T, I>,
                             loops_generic::AddScaled<T>, loops_generic::MaxRow<T>,
                             loops_generic::AllPlain<I>, loops_generic::Dot<T>};
    return plain;
  }
};

// The sums and means of bags [begin, end) when all their indices are rows of the table and none
// is the padding row (the common case; else false, nothing written): straight from the table,
// the rows prefetched across bags. One check of the chunk's indices, not one per bag.
template <typename T, typename I>
bool SumPlain(const T *w, int64_t rows, int64_t dim, const I *idx, const Layout<I> &lay,
              const T *psw, const Config &c, T *out, int64_t begin, int64_t end) {
  int64_t lo = lay.n, hi = 0;  // the indices the bags cover: [lo, hi)
  for (int64_t b = begin; b < end; ++b) {
    int64_t start, stop;
    lay.Range(b, &start, &stop);
    if (stop > start) {
      lo = std::min(lo, start);
      hi = std::max(hi, stop);
    }
  }
  const Loops<T, I> &loops = Loops<T, I>::Get();
  if (lo < hi && !loops.all_plain(idx + lo, hi - lo, rows, c.pad)) return false;
  for (int64_t b = begin; b < end; ++b) {
    int64_t start, stop;
    lay.Range(b, &start, &stop);
    const int64_t size = stop - start;
    const T div = c.mode == kMean && size > 0 ? static_cast<T>(size) : T(1);
    loops.sum_bag_at(out + b * dim, w, idx + start, hi - start, c.has_psw ? psw + start : nullptr,
                     size, dim, div);
  }
  return true;
}

template <typename T, typename I>
int Forward(const T *w, int64_t rows, int64_t dim, const I *idx, const Layout<I> &lay,
            const T *psw, const Config &c, T *out, int64_t *argmax) {
  const int bad_offsets = lay.Check();
  if (bad_offsets) return bad_offsets;
  std::atomic<bool> bad{false};
  if (lay.len == 0 && lay.n_off > lay.bags) {  // include_last_offset: indices past the last bag
    const int64_t last = static_cast<int64_t>(lay.off[lay.n_off - 1]);
    for (int64_t i = std::max<int64_t>(last, 0); i < lay.n; ++i)
      if (idx[i] < 0 || static_cast<int64_t>(idx[i]) >= rows) bad = true;
  }
  const bool renorm = c.max_norm >= 0;
  const Loops<T, I> &loops = Loops<T, I>::Get();
  ParallelFor(lay.bags, lay.n * dim + lay.bags, [&](int64_t begin, int64_t end) {
    if (c.mode != kMax && !renorm && SumPlain(w, rows, dim, idx, lay, psw, c, out, begin, end))
      return;
    std::vector<const T *> picked;  // the bag's rows, in order (renormalised ones in `scaled`)
    std::vector<int64_t> ids;       // their indices (max mode)
    std::vector<T> scale, scaled;
    for (int64_t b = begin; b < end; ++b) {
      T *o = out + b * dim;
      int64_t start, stop;
      lay.Range(b, &start, &stop);
      const int64_t size = stop - start;
      if (c.mode != kMax && !renorm && loops.all_plain(idx + start, size, rows, c.pad)) {
        const T div = c.mode == kMean && size > 0 ? static_cast<T>(size) : T(1);
        loops.sum_bag_at(o, w, idx + start, size, c.has_psw ? psw + start : nullptr, size, dim,
                         div);
        continue;
      }
      if (static_cast<int64_t>(picked.size()) < size) {
        picked.resize(size);
        ids.resize(size);
        scale.resize(size);
        if (renorm) scaled.resize(size * dim);
      }
      int64_t count = 0;
      for (int64_t i = start; i < stop; ++i) {
        const int64_t r = static_cast<int64_t>(idx[i]);
        if (r < 0 || r >= rows) {
          bad.store(true, std::memory_order_relaxed);
          continue;
        }
        if (r == c.pad) continue;
        const T *row = w + r * dim;
        const double factor = renorm ? RenormFactor(row, dim, c) : 1.0;
        if (factor != 1.0) {
          T *dst = scaled.data() + (i - start) * dim;
          for (int64_t d = 0; d < dim; ++d) dst[d] = row[d] * static_cast<T>(factor);
          row = dst;
        }
        picked[count] = row;
        ids[count] = r;
        if (c.has_psw) scale[count] = psw[i];
        ++count;
      }
      if (c.mode != kMax) {
        const T div = c.mode == kMean && count > 0 ? static_cast<T>(count) : T(1);
        loops.sum_bag(o, picked.data(), c.has_psw ? scale.data() : nullptr, count, dim, div);
        continue;
      }
      int64_t *at = argmax + b * dim;
      if (count == 0) {
        std::fill(o, o + dim, T(0));
        std::fill(at, at + dim, int64_t{-1});
        continue;
      }
      std::copy(picked[0], picked[0] + dim, o);
      std::fill(at, at + dim, ids[0]);
      for (int64_t k = 1; k < count; ++k) loops.max_row(o, at, picked[k], ids[k], dim);
    }
  });
  return bad.load() ? 1 : 0;
}

template <typename T, typename I>
void SumGrad(const T *dout, const T *w, int64_t rows, int64_t dim, const I *idx,
             const Layout<I> &lay, const T *psw, const Config &c, T *dw, T *dpsw) {
  const int64_t n = lay.n;
  std::vector<int64_t> bag_of(n, -1), bag_count(lay.bags, 0), first(rows + 1, 0), order(n);
  for (int64_t b = 0; b < lay.bags; ++b) {
    int64_t start, stop;
    lay.Range(b, &start, &stop);
    for (int64_t i = start; i < stop; ++i) {
      const int64_t r = static_cast<int64_t>(idx[i]);
      if (r < 0 || r >= rows || r == c.pad) continue;
      bag_of[i] = b;
      ++bag_count[b];
      ++first[r + 1];
    }
  }
  for (int64_t r = 0; r < rows; ++r) first[r + 1] += first[r];
  {
    std::vector<int64_t> next(first.begin(), first.end() - 1);
    for (int64_t i = 0; i < n; ++i)
      if (bag_of[i] >= 0) order[next[static_cast<int64_t>(idx[i])]++] = i;
  }
  const Loops<T, I> &loops = Loops<T, I>::Get();
  ParallelFor(rows, n * dim + rows * dim, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      T *g = dw + r * dim;
      std::fill(g, g + dim, T(0));
      const int64_t freq = first[r + 1] - first[r];
      for (int64_t k = first[r]; k < first[r + 1]; ++k) {
        const int64_t i = order[k], b = bag_of[i];
        double scale = c.has_psw ? static_cast<double>(psw[i]) : 1.0;
        if (c.by_freq) scale /= static_cast<double>(freq);
        if (c.mode == kMean) scale /= static_cast<double>(bag_count[b]);
        loops.add_scaled(g, dout + b * dim, static_cast<T>(scale), dim);
      }
    }
  });
  if (!c.has_psw) {
    dpsw[0] = 0;
    return;
  }
  ParallelFor(n, n * dim, [&](int64_t begin, int64_t end) {
    std::vector<T> scaled(c.max_norm >= 0 ? dim : 0);
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = bag_of[i];
      if (b < 0) {
        dpsw[i] = 0;
        continue;
      }
      const T *row = w + static_cast<int64_t>(idx[i]) * dim;
      const double factor = RenormFactor(row, dim, c);
      if (factor != 1.0) {
        for (int64_t d = 0; d < dim; ++d) scaled[d] = row[d] * static_cast<T>(factor);
        row = scaled.data();
      }
      dpsw[i] = loops.dot(dout + b * dim, row, dim);
    }
  });
}

// Shapes shared by the forward and the sum backward (w at 0, idx at 1, off at 2, psw at 3, cfg
// at 4, `bags` the number of bags); kOk or kBadShape.
int ReadLayout(int *ndims, int64_t **shapes, int64_t bags, int64_t *rows, int64_t *dim,
               int64_t *n, int64_t *len, int64_t *n_off) {
  if (ndims[0] != 2 || ndims[1] < 1 || ndims[1] > 2 || ndims[2] != 1) return kBadShape;
  if (!mscompat::HasShape(ndims[4], shapes[4], {7})) return kBadShape;
  *rows = shapes[0][0];
  *dim = shapes[0][1];
  *n = mscompat::NumElements(ndims[1], shapes[1]);
  *len = ndims[1] == 2 ? shapes[1][1] : 0;
  *n_off = shapes[2][0];
  if (ndims[1] == 2 && shapes[1][0] != bags) return kBadShape;
  const int64_t n_psw = mscompat::NumElements(ndims[3], shapes[3]);
  if (n_psw != *n && n_psw != 1) return kBadShape;
  return kOk;
}

template <typename F>
int ByTypes(const char **dtypes, F &&f) {
  if (std::strcmp(dtypes[1], dtypes[2]) != 0 || std::strcmp(dtypes[4], "float64") != 0)
    return kBadDtype;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto t) {
    return mscompat::ByDtype<int32_t, int64_t>(dtypes[1], [&](auto i) {
      using T = decltype(t);
      using I = decltype(i);
      return f(T{}, I{});
    });
  });
}

int RunForward(void **params, int *ndims, int64_t **shapes, const char **dtypes, bool max) {
  if (std::strcmp(dtypes[3], dtypes[0]) != 0) return kBadDtype;
  if (ndims[5] != 1) return kBadShape;
  const int64_t bags = shapes[5][0];
  int64_t rows, dim, n, len, n_off;
  int rc = ReadLayout(ndims, shapes, bags, &rows, &dim, &n, &len, &n_off);
  if (rc != kOk) return rc;
  if (!mscompat::HasShape(ndims[6], shapes[6], {bags, dim})) return kBadShape;
  const int status_at = max ? 8 : 7;
  if (max && !mscompat::HasShape(ndims[7], shapes[7], {bags, dim})) return kBadShape;
  const Config c = ReadConfig(static_cast<const double *>(params[4]));
  if ((c.mode == kMax) != max) return kBadOption;
  if (len == 0 && n_off < bags) return kBadShape;
  auto *status = static_cast<int64_t *>(params[status_at]);
  return ByTypes(dtypes, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    const Layout<I> lay{static_cast<const I *>(params[2]), n, bags, len, n_off};
    *status = Forward(static_cast<const T *>(params[0]), rows, dim,
                      static_cast<const I *>(params[1]), lay, static_cast<const T *>(params[3]),
                      c, static_cast<T *>(params[6]), max ? static_cast<int64_t *>(params[7])
                                                          : nullptr);
    return kOk;
  });
}

}  // namespace

extern "C" int BagSum(int nparam, void **params, int *ndims, int64_t **shapes,
                      const char **dtypes, void *, void *) {
  if (nparam != 8) return kBadArity;
  return RunForward(params, ndims, shapes, dtypes, false);
}

extern "C" int BagMax(int nparam, void **params, int *ndims, int64_t **shapes,
                      const char **dtypes, void *, void *) {
  if (nparam != 9) return kBadArity;
  return RunForward(params, ndims, shapes, dtypes, true);
}

// BagSumGrad(dout, w, idx, off, psw, cfg) -> dw, dpsw: params shifted by one against the forward.
extern "C" int BagSumGrad(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *, void *) {
  if (nparam != 8) return kBadArity;
  if (std::strcmp(dtypes[0], dtypes[1]) != 0 || std::strcmp(dtypes[4], dtypes[1]) != 0)
    return kBadDtype;
  int64_t rows, dim, n, len, n_off;
  const int64_t bags = shapes[0][0];
  if (ndims[0] != 2) return kBadShape;
  int rc = ReadLayout(ndims + 1, shapes + 1, bags, &rows, &dim, &n, &len, &n_off);
  if (rc != kOk) return rc;
  if (shapes[0][1] != dim || !mscompat::SameShape(ndims[1], shapes[1], ndims[6], shapes[6]) ||
      !mscompat::SameShape(ndims[4], shapes[4], ndims[7], shapes[7]))
    return kBadShape;
  if (len == 0 && n_off < bags) return kBadShape;
  const Config c = ReadConfig(static_cast<const double *>(params[5]));
  return ByTypes(dtypes + 1, [&](auto t, auto i) {
    using T = decltype(t);
    using I = decltype(i);
    const Layout<I> lay{static_cast<const I *>(params[3]), n, bags, len, n_off};
    SumGrad(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]), rows, dim,
            static_cast<const I *>(params[2]), lay, static_cast<const T *>(params[4]), c,
            static_cast<T *>(params[6]), static_cast<T *>(params[7]));
    return kOk;
  });
}

// BagMaxGrad(dout, argmax, w) -> dw: dw = 0, then dw[argmax[b, d], d] += dout[b, d] bag by bag.
extern "C" int BagMaxGrad(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *, void *) {
  if (nparam != 4) return kBadArity;
  if (std::strcmp(dtypes[0], dtypes[2]) != 0 || std::strcmp(dtypes[1], "int64") != 0)
    return kBadDtype;
  if (ndims[0] != 2 || !mscompat::SameShape(2, shapes[0], ndims[1], shapes[1]) ||
      ndims[2] != 2 || shapes[2][1] != shapes[0][1] ||
      !mscompat::SameShape(2, shapes[2], ndims[3], shapes[3]))
    return kBadShape;
  const int64_t bags = shapes[0][0], dim = shapes[0][1], rows = shapes[2][0];
  const auto *at = static_cast<const int64_t *>(params[1]);
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto t) {
    using T = decltype(t);
    const T *dout = static_cast<const T *>(params[0]);
    T *dw = static_cast<T *>(params[3]);
    std::fill(dw, dw + rows * dim, T(0));
    ParallelFor(dim, bags * dim, [&](int64_t begin, int64_t end) {
      for (int64_t b = 0; b < bags; ++b)
        for (int64_t d = begin; d < end; ++d) {
          const int64_t r = at[b * dim + d];
          if (r >= 0 && r < rows) dw[r * dim + d] += dout[b * dim + d];
        }
    });
  });
}
