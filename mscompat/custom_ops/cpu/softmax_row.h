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
