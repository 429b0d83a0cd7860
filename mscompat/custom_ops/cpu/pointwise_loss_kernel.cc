// The pointwise losses of torch.nn.functional, fused forward and backward CPU kernels for
// MindSpore's ops.Custom(func_type="aot"):
//
//   PointwiseLoss(x, t, pw, coef) -> loss                   elementwise, x's shape
//   PointwiseLossBackward(x, t, pw, coef, dloss) -> (dx, dt)
//   PointwiseLossSum(x, t, pw, coef) -> loss                0-d: the sum of the losses / divisor
//   PointwiseLossSumBackward(x, t, pw, coef, dout) -> (dx, dt)
//
// coef = [kind, p, divisor]; d = x - t, z = |d|:
//   0 binary_cross_entropy_with_logits  (1 - t) x - (1 + (pw - 1) t) log_sigmoid(x)
//   1 l1_loss                           z
//   2 mse_loss                          d * d
//   3 smooth_l1_loss (beta = p > 0)     z < p ? 0.5 z z / p : z - 0.5 p
//   4 huber_loss (delta = p)            z < p ? 0.5 z z : p (z - 0.5 p)
// PyTorch's CPU formulas and order of operations, log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)).
// pw (BCE's pos_weight; ignored by the others) holds 1 value or the last k sizes of x: element
// i takes pw[i % numel(pw)]. The gradients are PyTorch's backward formulas: BCE dx = ((1 + (pw
// - 1) t) sigmoid(x) - pw t) g, dt = (log_sigmoid(-x) - pw log_sigmoid(x)) g (pos_weight is not
// differentiable in PyTorch); l1 sign(d) g; mse 2 d g; smooth L1 d / beta inside, sign(d)
// outside; huber d inside, delta sign(d) outside; dt = -dx for the distances. Each product is
// divided by the divisor (the mean's n, as PyTorch's backward divides).
//
// The summed form is the 'mean' / 'sum' reduction in one pass (divisor n or 1): each of a fixed
// number of blocks sums in double and the blocks are added in order, so the result does not
// depend on the thread count; the total is rounded to the dtype, then divided, as PyTorch's
// mean. float32 (AVX2 where the CPU has it: BCE with libmvec 8 lanes at a time, the distances
// vectorised by the compiler) or float64; all tensors share the dtype. Blocks are split over
// threads above 2^15 elements.

// Floating-point exceptions are not trapped (MindSpore's default, and PyTorch's): saying so lets
// the compiler turn the distances' branches into vector selects. The values are unchanged.
#pragma GCC optimize("no-trapping-math")

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "common.h"
#include "loss_math.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::NumElements;

constexpr int64_t kBlocks = 64;  // blocks of elements for the sums (fixed: deterministic)
constexpr int64_t kBuffer = 512;  // floats computed before they are summed (vector paths)

template <typename T>
inline T Sign(T v) {
  return static_cast<T>((v > T(0)) - (v < T(0)));
}

// ----------------------------------------------------------------------------- the losses

struct Bce {
  template <typename T>
  static inline T Loss(T x, T t, T pw, T) {
    const T log_sig = std::min(x, T(0)) - std::log1p(std::exp(-std::abs(x)));
    return (T(1) - t) * x - ((pw - T(1)) * t + T(1)) * log_sig;
  }
  template <typename T>
  static inline void Grad(T x, T t, T pw, T, T g, T div, T *dx, T *dt) {
    const T e = std::exp(-std::abs(x));
    const T log_sig = std::min(x, T(0)) - std::log1p(e);
    const T sig = x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
    *dx = (((pw - T(1)) * t + T(1)) * sig - pw * t) * g / div;
    // log_sigmoid(-x) = log_sigmoid(x) - x
    *dt = ((log_sig - x) - pw * log_sig) * g / div;
  }
};

struct L1 {
  template <typename T>
  static inline T Loss(T x, T t, T, T) {
    return std::abs(x - t);
  }
  template <typename T>
  static inline void Grad(T x, T t, T, T, T g, T div, T *dx, T *dt) {
    *dx = Sign(x - t) * g / div;
    *dt = -*dx;
  }
};

struct Mse {
  template <typename T>
  static inline T Loss(T x, T t, T, T) {
    return (x - t) * (x - t);
  }
  template <typename T>
  static inline void Grad(T x, T t, T, T, T g, T div, T *dx, T *dt) {
    *dx = T(2) * (x - t) * g / div;
    *dt = -*dx;
  }
};

struct SmoothL1 {
  template <typename T>
  static inline T Loss(T x, T t, T, T beta) {
    const T z = std::abs(x - t), quadratic = T(0.5) * z * z / beta, linear = z - T(0.5) * beta;
    return z < beta ? quadratic : linear;
  }
  template <typename T>
  static inline void Grad(T x, T t, T, T beta, T g, T div, T *dx, T *dt) {
    const T d = x - t;
    *dx = (d < -beta ? T(-1) : (d > beta ? T(1) : d / beta)) * g / div;
    *dt = -*dx;
  }
};

struct Huber {
  template <typename T>
  static inline T Loss(T x, T t, T, T delta) {
    const T z = std::abs(x - t), quadratic = T(0.5) * z * z, linear = delta * (z - T(0.5) * delta);
    return z < delta ? quadratic : linear;
  }
  template <typename T>
  static inline void Grad(T x, T t, T, T delta, T g, T div, T *dx, T *dt) {
    const T d = x - t;
    *dx = (d < -delta ? -delta : (d > delta ? delta : d)) * g / div;
    *dt = -*dx;
  }
};

// ----------------------------------------------------------------------------- segments

// A run of elements that shares one row of pw: x, t, out start at the run, pw at its column
// (one_pw: pw[0] for all).
template <typename T>
struct Seg {
  const T *x, *t, *pw;
  bool one_pw;
  int64_t n;
  T p;
};

template <typename K, typename T>
void LossesScalar(const Seg<T> &s, int64_t j, T *out) {
  for (; j < s.n; ++j) out[j] = K::Loss(s.x[j], s.t[j], s.one_pw ? s.pw[0] : s.pw[j], s.p);
}

template <typename K, typename T>
void GradsScalar(const Seg<T> &s, int64_t j, const T *dl, T g0, T div, T *dx, T *dt) {
  for (; j < s.n; ++j)
    K::Grad(s.x[j], s.t[j], s.one_pw ? s.pw[0] : s.pw[j], s.p, dl != nullptr ? dl[j] : g0, div,
            dx + j, dt + j);
}

#ifdef MSCOMPAT_AVX2
// The distances: the scalar loops compiled for AVX2 (the compiler vectorises them).
template <typename K>
__attribute__((target("avx2,fma"))) void LossesAvx2(const Seg<float> &s, float *out) {
  LossesScalar<K>(s, 0, out);
}

template <typename K>
__attribute__((target("avx2,fma"))) void GradsAvx2(const Seg<float> &s, const float *dl,
                                                   float g0, float div, float *dx, float *dt) {
  GradsScalar<K>(s, 0, dl, g0, div, dx, dt);
}

struct Avx2Terms {
  __m256 e, log_sig;
};

__attribute__((target("avx2,fma"))) inline Avx2Terms Avx2LogSig(__m256 x) {
  const __m256 zero = _mm256_setzero_ps();
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(zero, _mm256_and_ps(x, abs_mask)));
  return {e, _mm256_sub_ps(_mm256_min_ps(x, zero), _ZGVdN8v_log1pf(e))};
}

// BCE, 8 lanes at a time with libmvec's expf/log1pf (Bce's formulas); the scalar loop ends it.
template <>
__attribute__((target("avx2,fma"))) void LossesAvx2<Bce>(const Seg<float> &s, float *out) {
  const __m256 one = _mm256_set1_ps(1.0f), pw1 = _mm256_set1_ps(s.pw[0]);
  int64_t j = 0;
  for (; j + 8 <= s.n; j += 8) {
    const __m256 x = _mm256_loadu_ps(s.x + j), t = _mm256_loadu_ps(s.t + j);
    const __m256 pw = s.one_pw ? pw1 : _mm256_loadu_ps(s.pw + j);
    const __m256 log_weight = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(pw, one), t), one);
    const __m256 l = _mm256_sub_ps(_mm256_mul_ps(_mm256_sub_ps(one, t), x),
                                   _mm256_mul_ps(log_weight, Avx2LogSig(x).log_sig));
    _mm256_storeu_ps(out + j, l);
  }
  LossesScalar<Bce>(s, j, out);
}

template <>
__attribute__((target("avx2,fma"))) void GradsAvx2<Bce>(const Seg<float> &s, const float *dl,
                                                        float g0, float div, float *dx,
                                                        float *dt) {
  const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  const __m256 pw1 = _mm256_set1_ps(s.pw[0]), g1 = _mm256_set1_ps(g0), dv = _mm256_set1_ps(div);
  int64_t j = 0;
  for (; j + 8 <= s.n; j += 8) {
    const __m256 x = _mm256_loadu_ps(s.x + j), t = _mm256_loadu_ps(s.t + j);
    const __m256 pw = s.one_pw ? pw1 : _mm256_loadu_ps(s.pw + j);
    const __m256 g = dl != nullptr ? _mm256_loadu_ps(dl + j) : g1;
    const Avx2Terms v = Avx2LogSig(x);
    const __m256 sig = _mm256_div_ps(
        _mm256_blendv_ps(v.e, one, _mm256_cmp_ps(x, zero, _CMP_GE_OQ)), _mm256_add_ps(one, v.e));
    const __m256 log_weight = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(pw, one), t), one);
    const __m256 d = _mm256_sub_ps(_mm256_mul_ps(log_weight, sig), _mm256_mul_ps(pw, t));
    _mm256_storeu_ps(dx + j, _mm256_div_ps(_mm256_mul_ps(d, g), dv));
    const __m256 d_t = _mm256_sub_ps(_mm256_sub_ps(v.log_sig, x), _mm256_mul_ps(pw, v.log_sig));
    _mm256_storeu_ps(dt + j, _mm256_div_ps(_mm256_mul_ps(d_t, g), dv));
  }
  GradsScalar<Bce>(s, j, dl, g0, div, dx, dt);
}

// The sum of n floats in double, 8 lanes at a time.
__attribute__((target("avx2,fma"))) double SumAvx2(const float *v, int64_t n) {
  __m256d lo = _mm256_setzero_pd(), hi = _mm256_setzero_pd();
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 x = _mm256_loadu_ps(v + j);
    lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
    hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)));
  }
  alignas(32) double lanes[4];
  _mm256_store_pd(lanes, _mm256_add_pd(lo, hi));
  double total = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
  for (; j < n; ++j) total += v[j];
  return total;
}
#endif

template <typename K, typename T>
void Losses(const Seg<T> &s, T *out) {
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (mscompat::HasAvx2()) return LossesAvx2<K>(s, out);
  }
#endif
  LossesScalar<K>(s, 0, out);
}

template <typename K, typename T>
void Grads(const Seg<T> &s, const T *dl, T g0, T div, T *dx, T *dt) {
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (mscompat::HasAvx2()) return GradsAvx2<K>(s, dl, g0, div, dx, dt);
  }
#endif
  GradsScalar<K>(s, 0, dl, g0, div, dx, dt);
}

template <typename T>
double SumOf(const T *v, int64_t n) {
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (mscompat::HasAvx2()) return SumAvx2(v, n);
  }
#endif
  double total = 0.0;
  for (int64_t j = 0; j < n; ++j) total += v[j];
  return total;
}

// ----------------------------------------------------------------------------- the passes

struct Inputs {
  int64_t n, npw;
};

// body(segment, offset, block) over [0, n) in kBlocks (or fewer) blocks shared out over
// threads, each block cut where a row of pw ends.
template <typename T, typename F>
void ForSegments(const T *x, const T *t, const T *pw, Inputs in, T p, int64_t max_len, F body) {
  const int64_t blocks = std::min<int64_t>(kBlocks, std::max<int64_t>(1, in.n / 1024));
  mscompat::ParallelFor(blocks, in.n, 1 << 15, 1 << 14, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t end = (b + 1) * in.n / blocks;
      for (int64_t i = b * in.n / blocks; i < end;) {
        const int64_t col = in.npw == 1 ? 0 : i % in.npw;
        const int64_t len = std::min({end - i, in.npw == 1 ? end - i : in.npw - col, max_len});
        body(Seg<T>{x + i, t + i, pw + col, in.npw == 1, len, p}, i, b);
        i += len;
      }
    }
  });
}

template <typename K, typename T>
void Elementwise(const T *x, const T *t, const T *pw, Inputs in, T p, T *out) {
  ForSegments(x, t, pw, in, p, in.n, [&](const Seg<T> &s, int64_t i, int64_t) {
    Losses<K>(s, out + i);
  });
}

template <typename K, typename T>
T Sum(const T *x, const T *t, const T *pw, Inputs in, T p, T divisor) {
  double partial[kBlocks] = {};
  ForSegments(x, t, pw, in, p, kBuffer, [&](const Seg<T> &s, int64_t, int64_t b) {
    T buffer[kBuffer];
    Losses<K>(s, buffer);
    partial[b] += SumOf(buffer, s.n);
  });
  double total = 0.0;
  for (double v : partial) total += v;
  return static_cast<T>(total) / divisor;
}

template <typename K, typename T>
void Backward(const T *x, const T *t, const T *pw, Inputs in, T p, const T *dl, T g0, T div,
              T *dx, T *dt) {
  ForSegments(x, t, pw, in, p, in.n, [&](const Seg<T> &s, int64_t i, int64_t) {
    Grads<K>(s, dl == nullptr ? dl : dl + i, g0, div, dx + i, dt + i);
  });
}

// f(K{}) for the loss `kind` of coef[0]; kBadOption for an unknown kind.
template <typename F>
int ByKind(double kind, F &&f) {
  switch (static_cast<int>(kind)) {
    case 0: return f(Bce{}), kOk;
    case 1: return f(L1{}), kOk;
    case 2: return f(Mse{}), kOk;
    case 3: return f(SmoothL1{}), kOk;
    case 4: return f(Huber{}), kOk;
    default: return kBadOption;
  }
}

// x, t share a shape and a float dtype; pw's element count divides theirs; coef holds 3
// values; all `count` tensors share the dtype.
int Check(int *ndims, int64_t **shapes, const char **dtypes, int count, Inputs *in) {
  const char *dt = dtypes[0];
  if (std::strcmp(dt, "float32") != 0 && std::strcmp(dt, "float64") != 0) return kBadDtype;
  for (int i = 1; i < count; ++i)
    if (std::strcmp(dtypes[i], dt) != 0) return kBadDtype;
  if (!mscompat::SameShape(ndims[0], shapes[0], ndims[1], shapes[1])) return kBadShape;
  in->n = NumElements(ndims[0], shapes[0]);
  in->npw = NumElements(ndims[2], shapes[2]);
  if (in->npw < 1 || in->n % in->npw != 0 || NumElements(ndims[3], shapes[3]) != 3)
    return kBadShape;
  return kOk;
}

// The shapes of outputs `at` are x's.
bool LikeX(int *ndims, int64_t **shapes, std::initializer_list<int> at) {
  for (int i : at)
    if (!mscompat::SameShape(ndims[0], shapes[0], ndims[i], shapes[i])) return false;
  return true;
}

template <typename T>
const T *In(void **params, int i) {
  return static_cast<const T *>(params[i]);
}

}  // namespace

extern "C" int PointwiseLoss(int nparam, void **params, int *ndims, int64_t **shapes,
                             const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  // params: x, t, pw, coef, loss (x's shape)
  Inputs in;
  if (int rc = Check(ndims, shapes, dtypes, 5, &in)) return rc;
  if (!LikeX(ndims, shapes, {4})) return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    const T *c = In<T>(params, 3);
    return ByKind(c[0], [&](auto k) {
      Elementwise<decltype(k)>(In<T>(params, 0), In<T>(params, 1), In<T>(params, 2), in, c[1],
                               static_cast<T *>(params[4]));
    });
  });
}

extern "C" int PointwiseLossSum(int nparam, void **params, int *ndims, int64_t **shapes,
                                const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  // params: x, t, pw, coef, loss (one element)
  Inputs in;
  if (int rc = Check(ndims, shapes, dtypes, 5, &in)) return rc;
  if (NumElements(ndims[4], shapes[4]) != 1) return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    const T *c = In<T>(params, 3);
    return ByKind(c[0], [&](auto k) {
      static_cast<T *>(params[4])[0] = Sum<decltype(k)>(In<T>(params, 0), In<T>(params, 1),
                                                        In<T>(params, 2), in, c[1], c[2]);
    });
  });
}

extern "C" int PointwiseLossBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                     const char **dtypes, void *, void *) {
  if (nparam != 7) return kBadArity;
  // params: x, t, pw, coef, dloss (x's shape), dx, dt
  Inputs in;
  if (int rc = Check(ndims, shapes, dtypes, 7, &in)) return rc;
  if (!LikeX(ndims, shapes, {4, 5, 6})) return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    const T *c = In<T>(params, 3);
    return ByKind(c[0], [&](auto k) {
      Backward<decltype(k)>(In<T>(params, 0), In<T>(params, 1), In<T>(params, 2), in, c[1],
                            In<T>(params, 4), T(0), T(1), static_cast<T *>(params[5]),
                            static_cast<T *>(params[6]));
    });
  });
}

extern "C" int PointwiseLossSumBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                        const char **dtypes, void *, void *) {
  if (nparam != 7) return kBadArity;
  // params: x, t, pw, coef, dout (one element), dx, dt
  Inputs in;
  if (int rc = Check(ndims, shapes, dtypes, 7, &in)) return rc;
  if (NumElements(ndims[4], shapes[4]) != 1 || !LikeX(ndims, shapes, {5, 6})) return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    const T *c = In<T>(params, 3);
    return ByKind(c[0], [&](auto k) {
      Backward<decltype(k)>(In<T>(params, 0), In<T>(params, 1), In<T>(params, 2), in, c[1],
                            static_cast<const T *>(nullptr), In<T>(params, 4)[0], c[2],
                            static_cast<T *>(params[5]), static_cast<T *>(params[6]));
    });
  });
}
