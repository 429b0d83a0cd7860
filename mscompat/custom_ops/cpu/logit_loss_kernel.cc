// torch.nn.functional.binary_cross_entropy_with_logits, fused forward and backward CPU kernels
// for MindSpore's ops.Custom(func_type="aot"):
//
//   BceLogitsForward(x, t, pw) -> loss                      elementwise, x's shape
//   BceLogitsBackward(x, t, pw, dloss) -> (dx, dt)
//   BceLogitsSum(x, t, pw, coef) -> loss                    0-d: the sum of the losses / coef[0]
//   BceLogitsSumBackward(x, t, pw, coef, dout) -> (dx, dt)
//
// loss = (1 - t) x - (1 + (pw - 1) t) log_sigmoid(x), PyTorch's CPU formula and order of
// operations, log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)). pw (pos_weight) holds 1 value,
// or the last k sizes of x (a row of the flat input: element i takes pw[i % numel(pw)]); the
// front door passes a tensor of ones(1) when there is none. The gradients are PyTorch's
// (binary_cross_entropy_with_logits' backward): dx = ((1 + (pw - 1) t) sigmoid(x) - pw t) g,
// dt = (log_sigmoid(-x) - pw log_sigmoid(x)) g; PyTorch does not differentiate pos_weight.
//
// The summed form is the 'mean' / 'sum' reduction in one pass (coef[0] = n or 1): each of a
// fixed number of blocks sums in double, and the blocks are added in order, so the result does
// not depend on the thread count. float32 (AVX2 + libmvec 8 lanes at a time where the CPU has
// them) or float64; all tensors share the dtype. Work is split over threads above 2^15 elements.

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common.h"
#include "loss_math.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::NumElements;

constexpr int64_t kBlocks = 64;  // blocks of rows for the sums (fixed: deterministic results)

template <typename T>
struct Terms {
  T loss, log_sig, sig;
};

// The loss of one element and the pieces its gradient needs.
template <typename T>
inline Terms<T> Bce(T x, T t, T pw) {
  const T e = std::exp(-std::abs(x));
  const T log_sig = std::min(x, T(0)) - std::log1p(e);
  const T log_weight = (pw - T(1)) * t + T(1);
  const T sig = x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
  return {(T(1) - t) * x - log_weight * log_sig, log_sig, sig};
}

// Rows of `cols` elements (cols = numel(pw)); body(row_begin, row_end, block) over kBlocks
// contiguous blocks of rows, the blocks shared out over threads.
template <typename F>
void ForBlocks(int64_t rows, int64_t cols, F body) {
  const int64_t blocks = std::min<int64_t>(kBlocks, rows);
  mscompat::ParallelFor(blocks, rows * cols, 1 << 15, 1 << 14, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) body(b * rows / blocks, (b + 1) * rows / blocks, b);
  });
}

#ifdef MSCOMPAT_AVX2
// The losses of 8 floats (Bce's formula, lane by lane).
__attribute__((target("avx2,fma"))) inline __m256 Avx2Bce(__m256 x, __m256 t, __m256 pw) {
  const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(zero, _mm256_and_ps(x, abs_mask)));
  const __m256 log_sig = _mm256_sub_ps(_mm256_min_ps(x, zero), _ZGVdN8v_log1pf(e));
  const __m256 log_weight = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(pw, one), t), one);
  return _mm256_sub_ps(_mm256_mul_ps(_mm256_sub_ps(one, t), x),
                       _mm256_mul_ps(log_weight, log_sig));
}

// Losses of elements [0, n) of a float32 row into out (or their sum in double when out is
// null); returns the first element not done (the scalar loop finishes the row).
__attribute__((target("avx2,fma"))) int64_t Avx2Row(const float *x, const float *t,
                                                    const float *pw, bool one_pw, int64_t n,
                                                    float *out, double *sum) {
  int64_t j = 0;
  const __m256 pw1 = _mm256_set1_ps(pw[0]);
  for (; j + 8 <= n; j += 8) {
    const __m256 l = Avx2Bce(_mm256_loadu_ps(x + j), _mm256_loadu_ps(t + j),
                             one_pw ? pw1 : _mm256_loadu_ps(pw + j));
    if (out != nullptr) {
      _mm256_storeu_ps(out + j, l);
    } else {
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, l);
      for (float v : lanes) *sum += v;
    }
  }
  return j;
}
#endif

// Losses of a row of `cols` elements starting at flat index i0: into out, or summed into *sum.
template <typename T>
void Row(const T *x, const T *t, const T *pw, int64_t cols, bool one_pw, T *out, double *sum) {
  int64_t j = 0;
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (mscompat::HasAvx2()) j = Avx2Row(x, t, pw, one_pw, cols, out, sum);
  }
#endif
  for (; j < cols; ++j) {
    const T l = Bce(x[j], t[j], one_pw ? pw[0] : pw[j]).loss;
    if (out != nullptr) {
      out[j] = l;
    } else {
      *sum += l;
    }
  }
}

// The shape of the work: n elements as rows of numel(pw) (one row of all of them when pw holds
// one value, which every element shares).
struct Layout {
  int64_t rows, cols;
  bool one_pw;
};

Layout LayoutOf(int64_t n, int64_t npw) {
  if (npw == 1) return {1, n, true};
  return {n / npw, npw, false};
}

// The flat range [begin, end) of the elements as (rows, cols) rows: one pw row, or chunks of
// the single row when pw holds one value (then any element range is a valid "row").
template <typename T, typename F>
void ForChunks(int64_t n, Layout s, F body) {
  if (s.one_pw) {
    const int64_t blocks = std::min<int64_t>(kBlocks, std::max<int64_t>(1, n / 1024));
    mscompat::ParallelFor(blocks, n, 1 << 15, 1 << 14, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) body(b * n / blocks, (b + 1) * n / blocks, b);
    });
    return;
  }
  ForBlocks(s.rows, s.cols, [&](int64_t r0, int64_t r1, int64_t b) {
    body(r0 * s.cols, r1 * s.cols, b);
  });
}

template <typename T>
void Elementwise(const T *x, const T *t, const T *pw, int64_t n, Layout s, T *out) {
  ForChunks<T>(n, s, [&](int64_t i0, int64_t i1, int64_t) {
    if (s.one_pw) {
      Row(x + i0, t + i0, pw, i1 - i0, true, out + i0, nullptr);
      return;
    }
    for (int64_t i = i0; i < i1; i += s.cols) Row(x + i, t + i, pw, s.cols, false, out + i, nullptr);
  });
}

template <typename T>
T Sum(const T *x, const T *t, const T *pw, int64_t n, Layout s, T divisor) {
  double partial[kBlocks] = {};
  ForChunks<T>(n, s, [&](int64_t i0, int64_t i1, int64_t b) {
    double acc = 0.0;
    if (s.one_pw) {
      Row(x + i0, t + i0, pw, i1 - i0, true, static_cast<T *>(nullptr), &acc);
    } else {
      for (int64_t i = i0; i < i1; i += s.cols)
        Row(x + i, t + i, pw, s.cols, false, static_cast<T *>(nullptr), &acc);
    }
    partial[b] = acc;
  });
  double total = 0.0;
  for (double p : partial) total += p;
  // PyTorch's mean rounds the sum to T before dividing by n
  return static_cast<T>(total) / divisor;
}

// Gradients of a row of `cols` elements: the incoming gradient dl[j] (or g0 for every element
// when dl is null).
template <typename T>
void GradScalar(const T *x, const T *t, const T *pw, int64_t j, int64_t cols, bool one_pw,
                const T *dl, T g0, T div, T *dx, T *dt) {
  for (; j < cols; ++j) {
    const T p = one_pw ? pw[0] : pw[j], g = dl != nullptr ? dl[j] : g0;
    const Terms<T> v = Bce(x[j], t[j], p);
    const T log_weight = (p - T(1)) * t[j] + T(1);
    dx[j] = (log_weight * v.sig - p * t[j]) * g / div;
    // log_sigmoid(-x) = log_sigmoid(x) - x
    dt[j] = ((v.log_sig - x[j]) - p * v.log_sig) * g / div;
  }
}

#ifdef MSCOMPAT_AVX2
__attribute__((target("avx2,fma"))) int64_t Avx2GradRow(const float *x, const float *t,
                                                        const float *pw, int64_t n, bool one_pw,
                                                        const float *dl, float g0, float div,
                                                        float *dx, float *dt) {
  const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 pw1 = _mm256_set1_ps(pw[0]), g1 = _mm256_set1_ps(g0), dv = _mm256_set1_ps(div);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 xv = _mm256_loadu_ps(x + j), tv = _mm256_loadu_ps(t + j);
    const __m256 p = one_pw ? pw1 : _mm256_loadu_ps(pw + j);
    const __m256 g = dl != nullptr ? _mm256_loadu_ps(dl + j) : g1;
    const __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(zero, _mm256_and_ps(xv, abs_mask)));
    const __m256 log_sig = _mm256_sub_ps(_mm256_min_ps(xv, zero), _ZGVdN8v_log1pf(e));
    const __m256 sig = _mm256_div_ps(
        _mm256_blendv_ps(e, one, _mm256_cmp_ps(xv, zero, _CMP_GE_OQ)), _mm256_add_ps(one, e));
    const __m256 log_weight = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(p, one), tv), one);
    const __m256 d = _mm256_sub_ps(_mm256_mul_ps(log_weight, sig), _mm256_mul_ps(p, tv));
    _mm256_storeu_ps(dx + j, _mm256_div_ps(_mm256_mul_ps(d, g), dv));
    const __m256 dtv =
        _mm256_sub_ps(_mm256_sub_ps(log_sig, xv), _mm256_mul_ps(p, log_sig));
    _mm256_storeu_ps(dt + j, _mm256_div_ps(_mm256_mul_ps(dtv, g), dv));
  }
  return j;
}
#endif

template <typename T>
void GradRow(const T *x, const T *t, const T *pw, int64_t cols, bool one_pw, const T *dl,
             T g0, T div, T *dx, T *dt) {
  int64_t j = 0;
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (mscompat::HasAvx2()) j = Avx2GradRow(x, t, pw, cols, one_pw, dl, g0, div, dx, dt);
  }
#endif
  GradScalar(x, t, pw, j, cols, one_pw, dl, g0, div, dx, dt);
}

// Gradients of all elements: dloss elementwise (dl), or g0 for every element (dl null), each
// divided by `div` (the mean's n: PyTorch divides the product, not the incoming gradient).
template <typename T>
void Grad(const T *x, const T *t, const T *pw, int64_t n, Layout s, const T *dl, T g0, T div,
          T *dx, T *dt) {
  ForChunks<T>(n, s, [&](int64_t i0, int64_t i1, int64_t) {
    const int64_t step = s.one_pw ? i1 - i0 : s.cols;
    for (int64_t i = i0; i < i1; i += step)
      GradRow(x + i, t + i, pw, step, s.one_pw, dl == nullptr ? dl : dl + i, g0, div, dx + i,
              dt + i);
  });
}

// x, t share a shape and a float dtype; pw's element count divides theirs as a trailing
// row; everything else (coef, dloss, outputs) shares the dtype.
int Check(int *ndims, int64_t **shapes, const char **dtypes, int count, Layout *s, int64_t *n) {
  const char *dt = dtypes[0];
  if (std::strcmp(dt, "float32") != 0 && std::strcmp(dt, "float64") != 0) return kBadDtype;
  for (int i = 1; i < count; ++i)
    if (std::strcmp(dtypes[i], dt) != 0) return kBadDtype;
  if (!mscompat::SameShape(ndims[0], shapes[0], ndims[1], shapes[1])) return kBadShape;
  *n = NumElements(ndims[0], shapes[0]);
  const int64_t npw = NumElements(ndims[2], shapes[2]);
  if (npw < 1 || (*n % npw) != 0) return kBadShape;
  *s = LayoutOf(*n, npw);
  return kOk;
}

}  // namespace

extern "C" int BceLogitsForward(int nparam, void **params, int *ndims, int64_t **shapes,
                                const char **dtypes, void *, void *) {
  if (nparam != 4) return kBadArity;
  // params: x, t, pw, loss (x's shape)
  Layout s;
  int64_t n;
  if (int rc = Check(ndims, shapes, dtypes, 4, &s, &n)) return rc;
  if (!mscompat::SameShape(ndims[0], shapes[0], ndims[3], shapes[3])) return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    Elementwise(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
                static_cast<const T *>(params[2]), n, s, static_cast<T *>(params[3]));
  });
}

extern "C" int BceLogitsSum(int nparam, void **params, int *ndims, int64_t **shapes,
                            const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  // params: x, t, pw, coef (1: the divisor), loss (one element)
  Layout s;
  int64_t n;
  if (int rc = Check(ndims, shapes, dtypes, 5, &s, &n)) return rc;
  if (NumElements(ndims[3], shapes[3]) != 1 || NumElements(ndims[4], shapes[4]) != 1)
    return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    static_cast<T *>(params[4])[0] =
        Sum(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
            static_cast<const T *>(params[2]), n, s, static_cast<const T *>(params[3])[0]);
  });
}

extern "C" int BceLogitsBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  // params: x, t, pw, dloss (x's shape), dx, dt
  Layout s;
  int64_t n;
  if (int rc = Check(ndims, shapes, dtypes, 6, &s, &n)) return rc;
  for (int i : {3, 4, 5})
    if (!mscompat::SameShape(ndims[0], shapes[0], ndims[i], shapes[i])) return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    Grad(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
         static_cast<const T *>(params[2]), n, s, static_cast<const T *>(params[3]), T(0), T(1),
         static_cast<T *>(params[4]), static_cast<T *>(params[5]));
  });
}

extern "C" int BceLogitsSumBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                    const char **dtypes, void *, void *) {
  if (nparam != 7) return kBadArity;
  // params: x, t, pw, coef (1), dout (one element), dx, dt
  Layout s;
  int64_t n;
  if (int rc = Check(ndims, shapes, dtypes, 7, &s, &n)) return rc;
  if (NumElements(ndims[3], shapes[3]) != 1 || NumElements(ndims[4], shapes[4]) != 1)
    return kBadShape;
  for (int i : {5, 6})
    if (!mscompat::SameShape(ndims[0], shapes[0], ndims[i], shapes[i])) return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    Grad(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
         static_cast<const T *>(params[2]), n, s, static_cast<const T *>(nullptr),
         static_cast<const T *>(params[4])[0], static_cast<const T *>(params[3])[0],
         static_cast<T *>(params[5]), static_cast<T *>(params[6]));
  });
}
