// Sigmoid focal loss (MMDetection's py_sigmoid_focal_loss, elementwise part): fused forward and
// backward CPU kernels for MindSpore's ops.Custom(func_type="aot").
//
// Calling convention and status codes: common.h (a non-zero code becomes a RuntimeError in
// Python).
//
//   FocalLossForward(pred, target, coef) -> loss               coef = [gamma, alpha]
//   FocalLossBackward(pred, target, coef, dloss) -> (dpred, dtarget)
//
// pred/target/dloss/outputs have the same shape (checked here and, earlier, in Python);
// float32 or float64; coef has 2 elements of the same dtype. Each kernel is one pass over the
// data, split over threads for large inputs (MSCOMPAT_NUM_THREADS caps the count).
//
// Numerics follow PyTorch: p = sigmoid(x), log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)),
// bce = (1 - t) x - log_sigmoid(x) (stable at |x| = 1e4), pt = (1 - p) t + p (1 - t),
// loss = (alpha t + (1 - alpha)(1 - t)) pt^gamma bce.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "common.h"
#include "loss_math.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::NumElements;
#ifdef MSCOMPAT_AVX2
using mscompat::HasAvx2;
#endif
using mscompat::PowExp;
using mscompat::PowExpGrad;

// Elementwise work: one thread below 2^15 elements, one per 2^14 above (parallel.h's pool).
template <typename F>
void ParallelFor(int64_t n, F body) {
  mscompat::ParallelFor(n, n, 1 << 15, 1 << 14, body);
}

template <typename T>
int64_t VectorForward(const T *, const T *, T, T, T *, int64_t begin, int64_t) {
  return begin;
}

template <typename T>
int64_t VectorBackward(const T *, const T *, T, T, const T *, T *, T *, int64_t begin, int64_t) {
  return begin;
}

// The terms of the loss at one element (a_neg = 1 - alpha).
template <typename T>
struct Terms {
  T p, bce, pt, alpha_t;

  Terms(T xi, T ti, T alpha, T a_neg) {
    const T e = std::exp(-std::abs(xi));
    p = xi >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
    const T log_sig = std::min(xi, T(0)) - std::log1p(e);
    bce = (T(1) - ti) * xi - log_sig;
    pt = (T(1) - p) * ti + p * (T(1) - ti);
    alpha_t = alpha * ti + a_neg * (T(1) - ti);
  }
};

template <typename T>
void Forward(const T *x, const T *t, T gamma, T alpha, T *loss, int64_t n) {
  const T a_neg = T(1) - alpha;
  ParallelFor(n, [=](int64_t begin_, int64_t end) {
    const int64_t begin = VectorForward(x, t, gamma, alpha, loss, begin_, end);
    for (int64_t i = begin; i < end; ++i) {
      const Terms<T> r(x[i], t[i], alpha, a_neg);
      loss[i] = r.bce * (r.alpha_t * PowExp(r.pt, gamma));
    }
  });
}

template <typename T>
void Backward(const T *x, const T *t, T gamma, T alpha, const T *dloss, T *dx, T *dt, int64_t n) {
  const T a_neg = T(1) - alpha;
  ParallelFor(n, [=](int64_t begin_, int64_t end) {
    const int64_t begin = VectorBackward(x, t, gamma, alpha, dloss, dx, dt, begin_, end);
    for (int64_t i = begin; i < end; ++i) {
      const T xi = x[i], ti = t[i], g = dloss[i];
      const Terms<T> r(xi, ti, alpha, a_neg);
      const T p = r.p, bce = r.bce, pt = r.pt, alpha_t = r.alpha_t;
      const T pw = PowExp(pt, gamma);
      const T dpw = PowExpGrad(pt, gamma);
      const T fw = alpha_t * pw;
      // d/dx: dbce/dx = p - t; dpt/dx = p (1 - p) (1 - 2 t)
      dx[i] = g * ((p - ti) * fw + bce * alpha_t * dpw * (p * (T(1) - p) * (T(1) - T(2) * ti)));
      // d/dt: dbce/dt = -x; dalpha_t/dt = 2 alpha - 1; dpt/dt = (1 - p) - p, its two terms
      // apart as autograd has them: at pt = 0 with gamma < 1 (dpw = inf) and p = 1, PyTorch's
      // inf * 0 - inf is NaN, where inf * (1 - 2 p) would be -inf.
      const T dpt = alpha_t * dpw;
      dt[i] = g * (-xi * fw + bce * ((alpha - a_neg) * pw + (dpt * (T(1) - p) - dpt * p)));
    }
  });
}

#ifdef MSCOMPAT_AVX2
// Float32 AVX2 versions of Forward/Backward (8 elements per step, same formulas); the scalar
// template handles the tail, float64, and CPUs without AVX2.
struct Avx2Terms {
  __m256 p, bce, pt, alpha_t;
};

__attribute__((target("avx2,fma"))) inline Avx2Terms Avx2Compute(__m256 x, __m256 t,
                                                                   __m256 alpha, __m256 a_neg) {
  const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(zero, _mm256_and_ps(x, abs_mask)));
  const __m256 nonneg = _mm256_cmp_ps(x, zero, _CMP_GE_OQ);
  Avx2Terms r;
  r.p = _mm256_div_ps(_mm256_blendv_ps(e, one, nonneg), _mm256_add_ps(one, e));
  const __m256 log_sig = _mm256_sub_ps(_mm256_min_ps(x, zero), _ZGVdN8v_log1pf(e));
  const __m256 one_minus_t = _mm256_sub_ps(one, t);
  r.bce = _mm256_sub_ps(_mm256_mul_ps(one_minus_t, x), log_sig);
  r.pt = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(one, r.p), t), _mm256_mul_ps(r.p, one_minus_t));
  r.alpha_t = _mm256_add_ps(_mm256_mul_ps(alpha, t), _mm256_mul_ps(a_neg, one_minus_t));
  return r;
}

// gamma kind: 0 -> pt^0, 1 -> pt, 2 -> pt*pt; other gammas use the scalar path.
template <int G>
__attribute__((target("avx2,fma"))) inline __m256 Avx2Pow(__m256 pt) {
  if (G == 0) return _mm256_set1_ps(1.0f);
  if (G == 1) return pt;
  return _mm256_mul_ps(pt, pt);
}

template <int G>
__attribute__((target("avx2,fma"))) inline __m256 Avx2PowGrad(__m256 pt) {
  if (G == 0) return _mm256_setzero_ps();
  if (G == 1) return _mm256_set1_ps(1.0f);
  return _mm256_mul_ps(_mm256_set1_ps(2.0f), pt);
}

template <int G>
__attribute__((target("avx2,fma"))) int64_t Avx2Forward(const float *x, const float *t,
                                                         float alpha, float *loss, int64_t begin,
                                                         int64_t end) {
  const __m256 va = _mm256_set1_ps(alpha), vn = _mm256_set1_ps(1.0f - alpha);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    Avx2Terms r = Avx2Compute(_mm256_loadu_ps(x + i), _mm256_loadu_ps(t + i), va, vn);
    _mm256_storeu_ps(loss + i, _mm256_mul_ps(r.bce, _mm256_mul_ps(r.alpha_t, Avx2Pow<G>(r.pt))));
  }
  return i;
}

template <int G>
__attribute__((target("avx2,fma"))) int64_t Avx2Backward(const float *x, const float *t,
                                                          float alpha, const float *dloss,
                                                          float *dx, float *dt, int64_t begin,
                                                          int64_t end) {
  const __m256 va = _mm256_set1_ps(alpha), vn = _mm256_set1_ps(1.0f - alpha);
  const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f);
  const __m256 a_diff = _mm256_set1_ps(alpha - (1.0f - alpha));
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    const __m256 xi = _mm256_loadu_ps(x + i), ti = _mm256_loadu_ps(t + i);
    const __m256 g = _mm256_loadu_ps(dloss + i);
    Avx2Terms r = Avx2Compute(xi, ti, va, vn);
    const __m256 pw = Avx2Pow<G>(r.pt), dpw = Avx2PowGrad<G>(r.pt);
    const __m256 fw = _mm256_mul_ps(r.alpha_t, pw);
    const __m256 bce_at_dpw = _mm256_mul_ps(_mm256_mul_ps(r.bce, r.alpha_t), dpw);
    const __m256 dpt_dx = _mm256_mul_ps(_mm256_mul_ps(r.p, _mm256_sub_ps(one, r.p)),
                                        _mm256_sub_ps(one, _mm256_mul_ps(two, ti)));
    const __m256 gx = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(r.p, ti), fw),
                                    _mm256_mul_ps(bce_at_dpw, dpt_dx));
    _mm256_storeu_ps(dx + i, _mm256_mul_ps(g, gx));
    const __m256 gt = _mm256_add_ps(
        _mm256_mul_ps(_mm256_sub_ps(_mm256_setzero_ps(), xi), fw),
        _mm256_add_ps(_mm256_mul_ps(_mm256_mul_ps(r.bce, a_diff), pw),
                      _mm256_mul_ps(bce_at_dpw, _mm256_sub_ps(one, _mm256_mul_ps(two, r.p)))));
    _mm256_storeu_ps(dt + i, _mm256_mul_ps(g, gt));
  }
  return i;
}

int GammaKind(float gamma) {
  if (gamma == 0.0f) return 0;
  if (gamma == 1.0f) return 1;
  if (gamma == 2.0f) return 2;
  return -1;
}
#endif

#ifdef MSCOMPAT_AVX2
template <>
int64_t VectorForward<float>(const float *x, const float *t, float gamma, float alpha, float *loss,
                             int64_t begin, int64_t end) {
  if (!HasAvx2()) return begin;
  switch (GammaKind(gamma)) {
    case 0: return Avx2Forward<0>(x, t, alpha, loss, begin, end);
    case 1: return Avx2Forward<1>(x, t, alpha, loss, begin, end);
    case 2: return Avx2Forward<2>(x, t, alpha, loss, begin, end);
    default: return begin;
  }
}

template <>
int64_t VectorBackward<float>(const float *x, const float *t, float gamma, float alpha,
                              const float *dloss, float *dx, float *dt, int64_t begin,
                              int64_t end) {
  if (!HasAvx2()) return begin;
  switch (GammaKind(gamma)) {
    case 0: return Avx2Backward<0>(x, t, alpha, dloss, dx, dt, begin, end);
    case 1: return Avx2Backward<1>(x, t, alpha, dloss, dx, dt, begin, end);
    case 2: return Avx2Backward<2>(x, t, alpha, dloss, dx, dt, begin, end);
    default: return begin;
  }
}
#endif

}  // namespace

extern "C" int FocalLossForward(int nparam, void **params, int *ndims, int64_t **shapes,
                                const char **dtypes, void *, void *) {
  if (nparam != 4) return kBadArity;
  // params: pred, target, coef (2 elements), loss
  if (int rc = mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1, 3}, 2, 2)) return rc;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    const T *c = static_cast<const T *>(params[2]);
    Forward(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]), c[0], c[1],
            static_cast<T *>(params[3]), n);
  });
}

extern "C" int FocalLossBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  // params: pred, target, coef (2 elements), dloss, dpred, dtarget
  if (int rc = mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1, 3, 4, 5}, 2, 2)) return rc;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    const T *c = static_cast<const T *>(params[2]);
    Backward(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]), c[0], c[1],
             static_cast<const T *>(params[3]), static_cast<T *>(params[4]),
             static_cast<T *>(params[5]), n);
  });
}
