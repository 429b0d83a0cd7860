// Row-wise log-sum-exp and scaled softmax of a row of logits, shared by the cross-entropy
// kernels (class_loss_kernel.cc), the distribution focal loss kernels (dfl_kernel.cc) and the
// attention kernels (attention_kernel.cc).
//
// float32 rows 8 lanes at a time with libmvec's expf (the sum in 8 partial sums, then added);
// the scalar code takes the tail, short rows, CPUs without AVX2 and float64.

#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "loss_math.h"

namespace mscompat {

// (max, log of the sum of exp(x - max)) of one row.
template <typename T>
inline void LogSumExpScalar(const T *row, int64_t c, T *m, T *log_s) {
  T top = row[0];
  for (int64_t j = 1; j < c; ++j) top = std::max(top, row[j]);
  T s = T(0);
  for (int64_t j = 0; j < c; ++j) s += std::exp(row[j] - top);
  *m = top;
  *log_s = std::log(s);
}

// out[j] = k * softmax(row)[j] = k * exp((row[j] - m) - log_s), from column `from` on.
template <typename T>
inline void ScaledSoftmaxScalar(const T *row, int64_t from, int64_t c, T m, T log_s, T k, T *out) {
  for (int64_t j = from; j < c; ++j) out[j] = k * std::exp((row[j] - m) - log_s);
}

#ifdef MSCOMPAT_AVX2
// exp of 8 floats <= 0 (x - max), inlined so that the columns of a block overlap (faster
// than a libmvec call per column): Cephes' expf (Cody-Waite reduction by ln 2, its polynomial,
// about 1 ulp), 0 below -87.3 where expf leaves the normal range (a sum that holds exp(0) = 1
// cannot tell).
__attribute__((target("avx2,fma"))) inline __m256 ExpNonPositive(__m256 x) {
  const __m256 low = _mm256_set1_ps(-87.3f);
  const __m256 under = _mm256_cmp_ps(x, low, _CMP_LT_OQ);
  x = _mm256_max_ps(low, x);  // NaN is the second operand: it stays NaN
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i scale =
      _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_andnot_ps(under, _mm256_mul_ps(p, _mm256_castsi256_ps(scale)));
}

// log of 8 floats >= 1 (a row's sum of exps) or NaN, inlined for the same reason: Cephes' logf
// (mantissa in [sqrt(1/2), sqrt(2)), its polynomial, about 1 ulp).
__attribute__((target("avx2,fma"))) inline __m256 LogAtLeastOne(__m256 x) {
  const __m256i bits = _mm256_castps_si256(x);
  __m256 e = _mm256_cvtepi32_ps(
      _mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(126)));
  __m256 m = _mm256_castsi256_ps(_mm256_or_si256(
      _mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f000000)));
  const __m256 one = _mm256_set1_ps(1.0f);
  // m in [0.5, 1): below sqrt(1/2) take 2m - 1 and e - 1, else m - 1
  const __m256 small = _mm256_cmp_ps(m, _mm256_set1_ps(0.707106781186547524f), _CMP_LT_OQ);
  e = _mm256_sub_ps(e, _mm256_and_ps(one, small));
  m = _mm256_sub_ps(_mm256_add_ps(m, _mm256_and_ps(m, small)), one);
  const __m256 z = _mm256_mul_ps(m, m);
  __m256 p = _mm256_set1_ps(7.0376836292e-2f);
  for (float k : {-1.1514610310e-1f, 1.1676998740e-1f, -1.2420140846e-1f, 1.4249322787e-1f,
                  -1.6668057665e-1f, 2.0000714765e-1f, -2.4999993993e-1f, 3.3333331174e-1f})
    p = _mm256_fmadd_ps(p, m, _mm256_set1_ps(k));
  __m256 y = _mm256_mul_ps(_mm256_mul_ps(p, m), z);
  y = _mm256_fmadd_ps(e, _mm256_set1_ps(-2.12194440e-4f), y);
  y = _mm256_fnmadd_ps(_mm256_set1_ps(0.5f), z, y);
  // a NaN sum (a NaN logit) stays NaN: its bits would read as a finite number
  return _mm256_or_ps(_mm256_fmadd_ps(e, _mm256_set1_ps(0.693359375f), _mm256_add_ps(m, y)),
                      _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

// The largest value of a row of c >= 8 floats.
__attribute__((target("avx2,fma"))) inline float RowMaxAvx2(const float *row, int64_t c) {
  __m256 vmax = _mm256_loadu_ps(row);
  int64_t j = 8;
  for (; j + 8 <= c; j += 8) vmax = _mm256_max_ps(vmax, _mm256_loadu_ps(row + j));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vmax);
  float top = lanes[0];
  for (int l = 1; l < 8; ++l) top = std::max(top, lanes[l]);
  for (; j < c; ++j) top = std::max(top, row[j]);
  return top;
}

__attribute__((target("avx2,fma"))) inline void LogSumExpAvx2(const float *row, int64_t c, float *m,
                                                        float *log_s) {
  const float top = RowMaxAvx2(row, c);
  const __m256 vtop = _mm256_set1_ps(top);
  __m256 acc = _mm256_setzero_ps();
  int64_t j = 0;
  alignas(32) float lanes[8];
  for (; j + 8 <= c; j += 8)
    acc = _mm256_add_ps(acc, _ZGVdN8v_expf(_mm256_sub_ps(_mm256_loadu_ps(row + j), vtop)));
  _mm256_store_ps(lanes, acc);
  float s = 0.0f;
  for (int l = 0; l < 8; ++l) s += lanes[l];
  for (; j < c; ++j) s += std::exp(row[j] - top);
  *m = top;
  *log_s = std::log(s);
}

// exp(z) of 8 lanes, 0 where z < -87 (where expf is below float's smallest normal number, 0 at
// -inf): libmvec's expf takes a scalar path for the whole vector when one lane is out of its
// range, so rows of masked (-inf) scores took 8x longer. NaN stays NaN.
__attribute__((target("avx2,fma"))) inline __m256 ExpFlushedAvx2(__m256 z) {
  const __m256 floor = _mm256_set1_ps(-87.0f);
  const __m256 e = _ZGVdN8v_expf(_mm256_max_ps(floor, z));  // max_ps(floor, NaN) is NaN
  return _mm256_andnot_ps(_mm256_cmp_ps(z, floor, _CMP_LT_OQ), e);
}

// exp of 8 lanes: ExpFlushedAvx2 where `flush`, else libmvec's expf.
__attribute__((target("avx2,fma"))) inline __m256 Exp8Avx2(__m256 z, bool flush) {
  return flush ? ExpFlushedAvx2(z) : _ZGVdN8v_expf(z);
}

__attribute__((target("avx2,fma"))) inline int64_t ScaledSoftmaxAvx2(const float *row, int64_t c,
                                                               float m, float log_s, float k,
                                                               float *out, bool flush = false) {
  const __m256 vm = _mm256_set1_ps(m), vl = _mm256_set1_ps(log_s), vk = _mm256_set1_ps(k);
  int64_t j = 0;
  for (; j + 8 <= c; j += 8) {
    const __m256 z = _mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(row + j), vm), vl);
    _mm256_storeu_ps(out + j, _mm256_mul_ps(vk, Exp8Avx2(z, flush)));
  }
  return j;
}

// Lane l of the result: the max (Reduce8Max) or the sum (Reduce8Sum) of the 8 lanes of v[l].
// Three shuffle stages for all 8 rows instead of a horizontal reduction per row.
template <typename Op>
__attribute__((target("avx2,fma"))) inline __m256 Reduce8(const __m256 *v, Op op) {
  __m256 t[4];
  for (int i = 0; i < 4; ++i)  // pairs of rows, lanes 0/1 and 2/3 of each half combined
    t[i] = op(_mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]),
              _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  const __m256 u0 = op(_mm256_shuffle_ps(t[0], t[1], 0x44), _mm256_shuffle_ps(t[0], t[1], 0xEE));
  const __m256 u1 = op(_mm256_shuffle_ps(t[2], t[3], 0x44), _mm256_shuffle_ps(t[2], t[3], 0xEE));
  return op(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

struct MaxOp {
  __attribute__((target("avx2,fma"))) __m256 operator()(__m256 a, __m256 b) const {
    return _mm256_max_ps(a, b);
  }
};

struct AddOp {
  __attribute__((target("avx2,fma"))) __m256 operator()(__m256 a, __m256 b) const {
    return _mm256_add_ps(a, b);
  }
};

__attribute__((target("avx2,fma"))) inline __m256 Reduce8Max(const __m256 *v) {
  return Reduce8(v, MaxOp());
}

__attribute__((target("avx2,fma"))) inline __m256 Reduce8Sum(const __m256 *v) {
  return Reduce8(v, AddOp());
}

// The lanes of a row's last, partial group of 8 (c % 8 of them): the mask of maskload.
struct Tail8 {
  int64_t full;  // the columns in whole groups of 8
  __m256i lanes;
  __m256 mask;
};

__attribute__((target("avx2,fma"))) inline Tail8 TailOf(int64_t c) {
  alignas(32) static const int32_t kOnes[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};
  Tail8 tail;
  tail.full = c / 8 * 8;
  tail.lanes =
      _mm256_loadu_si256(reinterpret_cast<const __m256i *>(kOnes + 8 - (c - tail.full)));
  tail.mask = _mm256_castsi256_ps(tail.lanes);
  return tail;
}

// Lane l: the max of row l of 8 consecutive rows of c >= 8 floats.
__attribute__((target("avx2,fma"))) inline __m256 RowMax8Rows(const float *x, int64_t c,
                                                              const Tail8 &tail) {
  const __m256 low = _mm256_set1_ps(-INFINITY);
  __m256 v[8];
  for (int l = 0; l < 8; ++l) {
    const float *row = x + l * c;
    __m256 a = _mm256_loadu_ps(row), b = low;
    int64_t j = 8;
    for (; j + 16 <= tail.full; j += 16) {
      a = _mm256_max_ps(a, _mm256_loadu_ps(row + j));
      b = _mm256_max_ps(b, _mm256_loadu_ps(row + j + 8));
    }
    if (j < tail.full) a = _mm256_max_ps(a, _mm256_loadu_ps(row + j));
    if (tail.full < c) {
      const __m256 last = _mm256_maskload_ps(row + tail.full, tail.lanes);
      b = _mm256_max_ps(b, _mm256_blendv_ps(low, last, tail.mask));
    }
    v[l] = _mm256_max_ps(a, b);
  }
  return Reduce8Max(v);
}

// Lane l: the sum of exp(x - top[l]) over row l of 8 consecutive rows of c >= 8 floats; with
// `out`, each exp is stored there too (row l at out + l * c).
__attribute__((target("avx2,fma"))) inline __m256 ExpSum8Rows(const float *x, int64_t c,
                                                              const Tail8 &tail, __m256 top,
                                                              float *out) {
  __m256 v[8];
  for (int l = 0; l < 8; ++l) {
    const float *row = x + l * c;
    float *dst = out == nullptr ? nullptr : out + l * c;
    const __m256 ml = _mm256_permutevar8x32_ps(top, _mm256_set1_epi32(l));
    __m256 a = _mm256_setzero_ps(), b = _mm256_setzero_ps();
    for (int64_t j = 0; j < tail.full; j += 8) {  // two chains: a row's exps overlap
      const __m256 e = ExpNonPositive(_mm256_sub_ps(_mm256_loadu_ps(row + j), ml));
      if (dst != nullptr) _mm256_storeu_ps(dst + j, e);
      if ((j & 8) == 0) {
        a = _mm256_add_ps(a, e);
      } else {
        b = _mm256_add_ps(b, e);
      }
    }
    if (tail.full < c) {
      const __m256 last = _mm256_maskload_ps(row + tail.full, tail.lanes);
      const __m256 e = _mm256_and_ps(ExpNonPositive(_mm256_sub_ps(last, ml)), tail.mask);
      if (dst != nullptr) _mm256_maskstore_ps(dst + tail.full, tail.lanes, e);
      b = _mm256_add_ps(b, e);
    }
    v[l] = _mm256_add_ps(a, b);
  }
  return Reduce8Sum(v);
}

// (max, log of the sum of exp(x - max)) of 8 consecutive rows of c >= 8 floats at once: the 8
// rows' lanes are reduced together and take one vector log (no horizontal reduction or scalar
// log per row).
__attribute__((target("avx2,fma"))) inline void LogSumExp8Rows(const float *x, int64_t c,
                                                               float *m, float *log_s) {
  const Tail8 tail = TailOf(c);
  const __m256 top = RowMax8Rows(x, c, tail);
  _mm256_storeu_ps(m, top);
  _mm256_storeu_ps(log_s, LogAtLeastOne(ExpSum8Rows(x, c, tail, top, nullptr)));
}

// out row l = k[l] * softmax(x row l) for 8 consecutive rows of c >= 8 floats, one exp per
// element (stored, then scaled).
__attribute__((target("avx2,fma"))) inline void ScaledSoftmax8Rows(const float *x, int64_t c,
                                                                   const float *k, float *out) {
  const Tail8 tail = TailOf(c);
  const __m256 s = ExpSum8Rows(x, c, tail, RowMax8Rows(x, c, tail), out);
  alignas(32) float scale[8];
  _mm256_store_ps(scale, _mm256_div_ps(_mm256_loadu_ps(k), s));
  for (int l = 0; l < 8; ++l) {
    float *dst = out + l * c;
    const __m256 sl = _mm256_set1_ps(scale[l]);
    int64_t j = 0;
    for (; j + 8 <= c; j += 8) _mm256_storeu_ps(dst + j, _mm256_mul_ps(sl, _mm256_loadu_ps(dst + j)));
    for (; j < c; ++j) dst[j] *= scale[l];
  }
}
#endif

// out[j] = k * softmax(row)[j] with one exp per element: exp(row[j] - max) stored in out, then
// scaled by k / sum (a backward's softmax; the forward's log-sum-exp is not kept); returns the
// sum.
template <typename T>
inline T ScaledSoftmaxOnePassScalar(const T *row, int64_t from, int64_t c, T m, T k, T *out,
                                    T s) {
  for (int64_t j = from; j < c; ++j) {
    out[j] = std::exp(row[j] - m);
    s += out[j];
  }
  const T scale = k / s;
  for (int64_t j = 0; j < c; ++j) out[j] *= scale;
  return s;
}

#ifdef MSCOMPAT_AVX2
// The vector part of ScaledSoftmaxOnePass: the max, then exp(x - max) of whole groups of 8 into
// out; returns the first column left to the scalar loop and the groups' sum in *s.
__attribute__((target("avx2,fma"))) inline int64_t ExpShiftedAvx2(const float *row, int64_t c,
                                                                  float *m, float *out,
                                                                  float *s, bool flush = false) {
  const float top = RowMaxAvx2(row, c);
  const __m256 vtop = _mm256_set1_ps(top);
  __m256 acc = _mm256_setzero_ps();
  int64_t j = 0;
  alignas(32) float lanes[8];
  for (; j + 8 <= c; j += 8) {
    const __m256 e = Exp8Avx2(_mm256_sub_ps(_mm256_loadu_ps(row + j), vtop), flush);
    _mm256_storeu_ps(out + j, e);
    acc = _mm256_add_ps(acc, e);
  }
  _mm256_store_ps(lanes, acc);
  float sum = 0.0f;
  for (int l = 0; l < 8; ++l) sum += lanes[l];
  *m = top;
  *s = sum;
  return j;
}
#endif

// ScaledSoftmaxOnePass; where `stats` is given, the row's max and the log of its sum of
// exp(x - max) are stored there (a backward recomputes the softmax from them with ScaledSoftmax,
// more precisely than from their sum, the log-sum-exp); a row of -inf has max -inf and a NaN
// `out` (the caller decides what it means). `row` may be `out`. `flush`: exponentials below
// float's smallest normal number are 0 (ExpFlushedAvx2: fast on rows of masked scores).
template <typename T>
inline void ScaledSoftmaxOnePass(const T *row, int64_t c, T k, T *out, T *stats = nullptr,
                                 bool flush = false) {
  T m = row[0], s = T(0);
  int64_t from = 0;
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (c >= 8 && HasAvx2()) from = ExpShiftedAvx2(row, c, &m, out, &s, flush);
  }
#endif
  if (from == 0)
    for (int64_t j = 1; j < c; ++j) m = std::max(m, row[j]);
  s = ScaledSoftmaxOnePassScalar(row, from, c, m, k, out, s);
  if (stats != nullptr) {
    stats[0] = m;
    stats[1] = std::log(s);
  }
}

template <typename T>
inline void LogSumExp(const T *row, int64_t c, T *m, T *log_s) {
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (c >= 8 && HasAvx2()) return LogSumExpAvx2(row, c, m, log_s);
  }
#endif
  LogSumExpScalar(row, c, m, log_s);
}

// (max, log-sum-exp) of rows r, r + 1, ... (below `end`) of x's rows of c: 8 rows at once where
// the float32 AVX2 path takes them, else one; returns the count done.
template <typename T>
inline int64_t LogSumExpRows(const T *x, int64_t r, int64_t end, int64_t c, T *m, T *log_s) {
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (c >= 8 && end - r >= 8 && HasAvx2()) {
      LogSumExp8Rows(x + r * c, c, m, log_s);
      return 8;
    }
  }
#endif
  LogSumExp(x + r * c, c, m, log_s);
  return 1;
}

// Rows r, r + 1, ... (below `end`) of out = k[i] * softmax(x's row), k[i] for the i-th row done:
// 8 rows at once where the float32 AVX2 path takes them, else one; returns the count done.
template <typename T>
inline int64_t ScaledSoftmaxRows(const T *x, int64_t r, int64_t end, int64_t c, const T *k,
                                 T *out) {
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (c >= 8 && end - r >= 8 && HasAvx2()) {
      ScaledSoftmax8Rows(x + r * c, c, k, out + r * c);
      return 8;
    }
  }
#endif
  ScaledSoftmaxOnePass(x + r * c, c, k[0], out + r * c);
  return 1;
}

template <typename T>
inline void ScaledSoftmax(const T *row, int64_t c, T m, T log_s, T k, T *out, bool flush = false) {
  int64_t from = 0;
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (HasAvx2()) from = ScaledSoftmaxAvx2(row, c, m, log_s, k, out, flush);
  }
#endif
  ScaledSoftmaxScalar(row, from, c, m, log_s, k, out);
}

}  // namespace mscompat
