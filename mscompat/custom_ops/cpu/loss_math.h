// Elementwise pieces shared by the loss kernels (focal, quality focal, varifocal, cross
// entropy): PyTorch's pow with its special-cased exponents and its backward, and the AVX2
// vector math the float32 paths use (MSCOMPAT_AVX2 on x86_64 glibc).

#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>
#if defined(__x86_64__) && defined(__GLIBC__)
#include <immintrin.h>
#define MSCOMPAT_AVX2 1
// glibc's vector math library (libmvec): 8-lane AVX2 expf and log1pf, <= 2 ulp.
extern "C" __m256 _ZGVdN8v_expf(__m256);
extern "C" __m256 _ZGVdN8v_log1pf(__m256);
extern "C" __m256 _ZGVdN8v_logf(__m256);
#if __GLIBC_PREREQ(2, 35)
// 8-lane AVX2 atanf (libmvec from glibc 2.35).
#define MSCOMPAT_AVX2_ATAN 1
extern "C" __m256 _ZGVdN8v_atanf(__m256);
#endif
#endif

namespace mscompat {

#ifdef MSCOMPAT_AVX2
// Whether this CPU runs the AVX2+FMA paths (checked once).
inline bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif

#ifdef MSCOMPAT_AVX2
// x[k] = f8(x[k]) (an 8-lane libmvec function) for the first multiple of 8 of n floats; returns
// that count (the caller finishes the tail with the scalar function).
__attribute__((target("avx2,fma"))) inline int64_t Lanes8(float *x, int64_t n,
                                                          __m256 (*f8)(__m256)) {
  int64_t k = 0;
  for (; k + 8 <= n; k += 8) _mm256_storeu_ps(x + k, f8(_mm256_loadu_ps(x + k)));
  return k;
}
#endif

// x[k] = log(x[k]) / atan(x[k]) over n elements: float32 in vector lanes where available
// (PyTorch's float32 log and atan are vector ones too, Sleef's), else std::log / std::atan.
template <typename T>
void LogInPlace(T *x, int64_t n) {
  int64_t k = 0;
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (HasAvx2()) k = Lanes8(x, n, _ZGVdN8v_logf);
  }
#endif
  for (; k < n; ++k) x[k] = std::log(x[k]);
}

template <typename T>
void AtanInPlace(T *x, int64_t n) {
  int64_t k = 0;
#ifdef MSCOMPAT_AVX2_ATAN
  if constexpr (std::is_same<T, float>::value) {
    if (HasAvx2()) k = Lanes8(x, n, _ZGVdN8v_atanf);
  }
#endif
  for (; k < n; ++k) x[k] = std::atan(x[k]);
}

// x ** e with PyTorch's special cases (exact squares and cubes, ones for e == 0).
template <typename T>
inline T PowExp(T x, T e) {
  if (e == T(2)) return x * x;
  if (e == T(1)) return x;
  if (e == T(0)) return T(1);
  if (e == T(3)) return x * x * x;
  return std::pow(x, e);
}

// d(x ** e)/dx, PyTorch's pow backward: 0 for e == 0, else e * x^(e - 1).
template <typename T>
inline T PowExpGrad(T x, T e) {
  if (e == T(0)) return T(0);
  if (e == T(1)) return T(1);
  if (e == T(2)) return T(2) * x;
  return e * std::pow(x, e - T(1));
}

}  // namespace mscompat
