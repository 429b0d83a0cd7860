// Dense classification losses of a detection head, fused forward and backward CPU kernels for
// MindSpore's ops.Custom(func_type="aot"):
//
//   QflForward(pred, pos, score, coef) -> loss            coef = [beta]
//   QflBackward(pred, pos, score, coef, dloss) -> (dpred, dscore)
//     MMDetection's quality_focal_loss before the class sum, on logits: where pos (bool, pred's
//     shape) BCEWithLogits(x, s) |s - sigmoid(x)|^beta, elsewhere BCEWithLogits(x, 0)
//     sigmoid(x)^beta; score has pred's shape or one value per row (N or N x 1).
//   VflForward(pred, target, coef) -> loss                coef = [alpha, gamma, iou_weighted]
//   VflBackward(pred, target, coef, dloss) -> (dpred, dtarget)
//     MMDetection's varifocal_loss, elementwise: BCEWithLogits(x, t) times t (or 1) where
//     t > 0, alpha |sigmoid(x) - t|^gamma elsewhere; the weight is differentiated, as there.
// float32 or float64 (pred/target/score/weight/dloss share it). Rows are split over threads for
// large inputs (MSCOMPAT_NUM_THREADS caps the count). Numerics follow PyTorch's CPU formulas:
// log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)), BCEWithLogits(x, t) = (1 - t) x -
// log_sigmoid(x), pow's backward exponent * x^(exponent - 1) (0 for exponent 0), abs's sign(d).

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
#ifdef MSCOMPAT_AVX2
using mscompat::HasAvx2;
#endif
using mscompat::PowExp;
using mscompat::PowExpGrad;
using mscompat::ParallelRows;

template <typename T>
inline T Sign(T v) {
  return static_cast<T>((v > T(0)) - (v < T(0)));
}

// sigmoid(x) and log_sigmoid(x), stable at |x| = 1e4.
template <typename T>
struct Sigmoid {
  T p, log_sig;

  explicit Sigmoid(T x) {
    const T e = std::exp(-std::abs(x));
    p = x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
    log_sig = std::min(x, T(0)) - std::log1p(e);
  }
};

// ------------------------------------------------------------------------ quality focal loss

// The vector paths of a row of QFL return the first column they did not compute (the scalar
// loop goes on from there): float32 with beta == 2 on AVX2 CPUs; none elsewhere.
template <typename T>
int64_t QflVectorRow(const T *, const bool *, const T *, bool, T, T *, int64_t) {
  return 0;
}

template <typename T>
int64_t QflVectorRowGrad(const T *, const bool *, const T *, bool, T, const T *, T *, T *, T *,
                         int64_t) {
  return 0;
}

#ifdef MSCOMPAT_AVX2
// sigmoid(x) and log_sigmoid(x) of 8 floats (Sigmoid's formulas).
struct Avx2Sigmoid {
  __m256 p, log_sig;
};

__attribute__((target("avx2,fma"))) inline Avx2Sigmoid Avx2Sig(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(zero, _mm256_and_ps(x, abs_mask)));
  Avx2Sigmoid r;
  r.p = _mm256_div_ps(_mm256_blendv_ps(e, one, _mm256_cmp_ps(x, zero, _CMP_GE_OQ)),
                      _mm256_add_ps(one, e));
  r.log_sig = _mm256_sub_ps(_mm256_min_ps(x, zero), _ZGVdN8v_log1pf(e));
  return r;
}

// 8 bools as a lane mask.
__attribute__((target("avx2,fma"))) inline __m256 Avx2Mask(const bool *b) {
  const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(b)));
  return _mm256_castsi256_ps(_mm256_cmpgt_epi32(v, _mm256_setzero_si256()));
}

template <>
__attribute__((target("avx2,fma"))) int64_t QflVectorRow<float>(const float *x, const bool *pos,
                                                                 const float *score,
                                                                 bool per_row, float beta,
                                                                 float *loss, int64_t c) {
  if (beta != 2.0f || !HasAvx2()) return 0;
  const __m256 one = _mm256_set1_ps(1.0f), row_t = _mm256_set1_ps(per_row ? score[0] : 0.0f);
  int64_t j = 0;
  for (; j + 8 <= c; j += 8) {
    const __m256 xi = _mm256_loadu_ps(x + j), m = Avx2Mask(pos + j);
    const __m256 t = per_row ? row_t : _mm256_loadu_ps(score + j);
    const Avx2Sigmoid s = Avx2Sig(xi);
    const __m256 neg = _mm256_mul_ps(_mm256_sub_ps(xi, s.log_sig), _mm256_mul_ps(s.p, s.p));
    const __m256 d = _mm256_sub_ps(t, s.p);
    const __m256 bce = _mm256_sub_ps(_mm256_mul_ps(_mm256_sub_ps(one, t), xi), s.log_sig);
    const __m256 pl = _mm256_mul_ps(bce, _mm256_mul_ps(d, d));
    _mm256_storeu_ps(loss + j, _mm256_blendv_ps(neg, pl, m));
  }
  return j;
}

template <>
__attribute__((target("avx2,fma"))) int64_t QflVectorRowGrad<float>(
    const float *x, const bool *pos, const float *score, bool per_row, float beta,
    const float *g, float *dx, float *dscore, float *row_ds, int64_t c) {
  if (beta != 2.0f || !HasAvx2()) return 0;
  const __m256 one = _mm256_set1_ps(1.0f), two = _mm256_set1_ps(2.0f);
  const __m256 zero = _mm256_setzero_ps(), row_t = _mm256_set1_ps(per_row ? score[0] : 0.0f);
  __m256 acc = zero;
  int64_t j = 0;
  for (; j + 8 <= c; j += 8) {
    const __m256 xi = _mm256_loadu_ps(x + j), m = Avx2Mask(pos + j);
    const __m256 gi = _mm256_loadu_ps(g + j);
    const __m256 t = per_row ? row_t : _mm256_loadu_ps(score + j);
    const Avx2Sigmoid s = Avx2Sig(xi);
    const __m256 dp = _mm256_mul_ps(s.p, _mm256_sub_ps(one, s.p));
    // negatives: d/dx [(x - log_sig) p^2] = p p^2 + (x - log_sig) 2 p dp
    const __m256 bce0 = _mm256_sub_ps(xi, s.log_sig);
    const __m256 two_p_dp = _mm256_mul_ps(_mm256_mul_ps(two, s.p), dp);
    const __m256 gneg = _mm256_add_ps(_mm256_mul_ps(s.p, _mm256_mul_ps(s.p, s.p)),
                                      _mm256_mul_ps(bce0, two_p_dp));
    // positives: |d|^2 with d = t - p, its gradient 2 d (dp/dx = -dp)
    const __m256 d = _mm256_sub_ps(t, s.p), pw = _mm256_mul_ps(d, d), dpw = _mm256_mul_ps(two, d);
    const __m256 bce = _mm256_sub_ps(_mm256_mul_ps(_mm256_sub_ps(one, t), xi), s.log_sig);
    const __m256 gpos = _mm256_sub_ps(_mm256_mul_ps(_mm256_sub_ps(s.p, t), pw),
                                      _mm256_mul_ps(bce, _mm256_mul_ps(dpw, dp)));
    _mm256_storeu_ps(dx + j, _mm256_mul_ps(gi, _mm256_blendv_ps(gneg, gpos, m)));
    const __m256 ds = _mm256_mul_ps(
        gi, _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(zero, xi), pw), _mm256_mul_ps(bce, dpw)));
    const __m256 ds_pos = _mm256_blendv_ps(zero, ds, m);
    if (per_row) {
      acc = _mm256_add_ps(acc, ds_pos);
    } else {
      _mm256_storeu_ps(dscore + j, ds_pos);
    }
  }
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (int l = 0; l < 8; ++l) *row_ds += lanes[l];
  return j;
}
#endif

template <typename T>
void QflLoss(const T *x, const bool *pos, const T *score, bool per_row, T beta, T *loss,
             int64_t n, int64_t c) {
  ParallelRows(n, c, [=](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t base = r * c;
      const T *srow = per_row ? score + r : score + base;
      const int64_t from =
          QflVectorRow(x + base, pos + base, srow, per_row, beta, loss + base, c);
      for (int64_t i = base + from; i < base + c; ++i) {
        const Sigmoid<T> s(x[i]);
        if (pos[i]) {
          const T t = per_row ? score[r] : score[i];
          loss[i] = ((T(1) - t) * x[i] - s.log_sig) * PowExp(std::abs(t - s.p), beta);
        } else {
          loss[i] = (x[i] - s.log_sig) * PowExp(s.p, beta);
        }
      }
    }
  });
}

template <typename T>
void QflGrad(const T *x, const bool *pos, const T *score, bool per_row, T beta, const T *g,
             T *dx, T *dscore, int64_t n, int64_t c) {
  ParallelRows(n, c, [=](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      T row_ds = T(0);
      const int64_t base = r * c;
      const T *srow = per_row ? score + r : score + base;
      const int64_t from = QflVectorRowGrad(x + base, pos + base, srow, per_row, beta, g + base,
                                            dx + base, per_row ? dscore : dscore + base, &row_ds,
                                            c);
      for (int64_t i = base + from; i < base + c; ++i) {
        const T xi = x[i];
        const Sigmoid<T> s(xi);
        const T dp = s.p * (T(1) - s.p);
        if (pos[i]) {
          const T t = per_row ? score[r] : score[i];
          const T d = t - s.p, a = std::abs(d);
          const T bce = (T(1) - t) * xi - s.log_sig;
          const T pw = PowExp(a, beta), dpw = PowExpGrad(a, beta) * Sign(d);
          dx[i] = g[i] * ((s.p - t) * pw - bce * dpw * dp);
          const T ds = g[i] * (-xi * pw + bce * dpw);
          if (per_row) {
            row_ds += ds;
          } else {
            dscore[i] = ds;
          }
        } else {
          const T bce = xi - s.log_sig;
          dx[i] = g[i] * (s.p * PowExp(s.p, beta) + bce * PowExpGrad(s.p, beta) * dp);
          if (!per_row) dscore[i] = T(0);
        }
      }
      if (per_row) dscore[r] = row_ds;
    }
  });
}

// ------------------------------------------------------------------------ varifocal loss

template <typename T>
struct VflTerms {
  T bce, fw, dfw_dx, dfw_dt, p;

  VflTerms(T xi, T t, T alpha, T gamma, bool iou_weighted) {
    const Sigmoid<T> s(xi);
    p = s.p;
    bce = (T(1) - t) * xi - s.log_sig;
    if (t > T(0)) {
      fw = iou_weighted ? t : T(1);
      dfw_dx = T(0);
      dfw_dt = iou_weighted ? T(1) : T(0);
    } else {
      const T d = s.p - t, a = std::abs(d);
      fw = alpha * PowExp(a, gamma);
      const T pg = alpha * PowExpGrad(a, gamma) * Sign(d);
      dfw_dx = pg * (s.p * (T(1) - s.p));
      dfw_dt = -pg;
    }
  }
};

// The vector paths return the first element they did not compute (the scalar loop goes on
// from there): float32 with gamma == 2 on AVX2 CPUs; none elsewhere.
template <typename T>
int64_t VflVectorLoss(const T *, const T *, T, T, bool, T *, int64_t b, int64_t) {
  return b;
}

template <typename T>
int64_t VflVectorGrad(const T *, const T *, T, T, bool, const T *, T *, T *, int64_t b, int64_t) {
  return b;
}

#ifdef MSCOMPAT_AVX2
// Float32 VFL, gamma == 2, 8 lanes (VflTerms' formulas; |d|^2 = d d, its gradient 2 d).
struct Avx2Vfl {
  __m256 p, bce, fw, pos, d;
};

__attribute__((target("avx2,fma"))) inline Avx2Vfl Avx2VflTerms(__m256 x, __m256 t, __m256 alpha,
                                                                 bool iou) {
  const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 e = _ZGVdN8v_expf(_mm256_sub_ps(zero, _mm256_and_ps(x, abs_mask)));
  Avx2Vfl r;
  r.p = _mm256_div_ps(_mm256_blendv_ps(e, one, _mm256_cmp_ps(x, zero, _CMP_GE_OQ)),
                      _mm256_add_ps(one, e));
  const __m256 log_sig = _mm256_sub_ps(_mm256_min_ps(x, zero), _ZGVdN8v_log1pf(e));
  r.bce = _mm256_sub_ps(_mm256_mul_ps(_mm256_sub_ps(one, t), x), log_sig);
  r.pos = _mm256_cmp_ps(t, zero, _CMP_GT_OQ);
  r.d = _mm256_sub_ps(r.p, t);
  const __m256 neg_fw = _mm256_mul_ps(alpha, _mm256_mul_ps(r.d, r.d));
  r.fw = _mm256_blendv_ps(neg_fw, iou ? t : one, r.pos);
  return r;
}

template <>
__attribute__((target("avx2,fma"))) int64_t VflVectorLoss<float>(const float *x, const float *t,
                                                                  float alpha, float gamma,
                                                                  bool iou, float *loss,
                                                                  int64_t b, int64_t e) {
  if (gamma != 2.0f || !HasAvx2()) return b;
  const __m256 va = _mm256_set1_ps(alpha);
  int64_t i = b;
  for (; i + 8 <= e; i += 8) {
    const Avx2Vfl r = Avx2VflTerms(_mm256_loadu_ps(x + i), _mm256_loadu_ps(t + i), va, iou);
    _mm256_storeu_ps(loss + i, _mm256_mul_ps(r.bce, r.fw));
  }
  return i;
}

template <>
__attribute__((target("avx2,fma"))) int64_t VflVectorGrad<float>(const float *x, const float *t,
                                                                  float alpha, float gamma,
                                                                  bool iou, const float *g,
                                                                  float *dx, float *dt, int64_t b,
                                                                  int64_t e) {
  if (gamma != 2.0f || !HasAvx2()) return b;
  const __m256 va = _mm256_set1_ps(alpha), one = _mm256_set1_ps(1.0f);
  const __m256 zero = _mm256_setzero_ps(), pos_dt = iou ? one : zero;
  int64_t i = b;
  for (; i + 8 <= e; i += 8) {
    const __m256 xi = _mm256_loadu_ps(x + i), ti = _mm256_loadu_ps(t + i);
    const __m256 gi = _mm256_loadu_ps(g + i);
    const Avx2Vfl r = Avx2VflTerms(xi, ti, va, iou);
    // negatives: d(alpha d^2) = 2 alpha d (dp/dx for x, -1 for t); positives: 0 and pos_dt
    const __m256 pg = _mm256_mul_ps(_mm256_add_ps(va, va), r.d);
    const __m256 dfw_dx =
        _mm256_blendv_ps(_mm256_mul_ps(pg, _mm256_mul_ps(r.p, _mm256_sub_ps(one, r.p))), zero,
                         r.pos);
    const __m256 dfw_dt = _mm256_blendv_ps(_mm256_sub_ps(zero, pg), pos_dt, r.pos);
    const __m256 gx = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(r.p, ti), r.fw),
                                    _mm256_mul_ps(r.bce, dfw_dx));
    const __m256 gt = _mm256_add_ps(_mm256_mul_ps(_mm256_sub_ps(zero, xi), r.fw),
                                    _mm256_mul_ps(r.bce, dfw_dt));
    _mm256_storeu_ps(dx + i, _mm256_mul_ps(gi, gx));
    _mm256_storeu_ps(dt + i, _mm256_mul_ps(gi, gt));
  }
  return i;
}
#endif

template <typename T>
void VflLoss(const T *x, const T *t, T alpha, T gamma, bool iou, T *loss, int64_t n) {
  ParallelRows(n, 1, [=](int64_t b0, int64_t e) {
    const int64_t b = VflVectorLoss(x, t, alpha, gamma, iou, loss, b0, e);
    for (int64_t i = b; i < e; ++i) {
      const VflTerms<T> v(x[i], t[i], alpha, gamma, iou);
      loss[i] = v.bce * v.fw;
    }
  });
}

template <typename T>
void VflGrad(const T *x, const T *t, T alpha, T gamma, bool iou, const T *g, T *dx, T *dt,
                 int64_t n) {
  ParallelRows(n, 1, [=](int64_t b0, int64_t e) {
    const int64_t b = VflVectorGrad(x, t, alpha, gamma, iou, g, dx, dt, b0, e);
    for (int64_t i = b; i < e; ++i) {
      const VflTerms<T> v(x[i], t[i], alpha, gamma, iou);
      dx[i] = g[i] * ((v.p - t[i]) * v.fw + v.bce * v.dfw_dx);
      dt[i] = g[i] * (-x[i] * v.fw + v.bce * v.dfw_dt);
    }
  });
}

}  // namespace

extern "C" int QflForward(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  // params: pred (N, C), pos (N, C) bool, score (N, C) or N values, coef (1), loss
  int64_t n, c;
  if (!mscompat::Matrix(ndims[0], shapes[0], &n, &c)) return kBadShape;
  if (!mscompat::SameShape(ndims[0], shapes[0], ndims[1], shapes[1]) ||
      !mscompat::SameShape(ndims[0], shapes[0], ndims[4], shapes[4]) ||
      NumElements(ndims[3], shapes[3]) != 1)
    return kBadShape;
  const int64_t ns = NumElements(ndims[2], shapes[2]);
  if (ns != n * c && ns != n) return kBadShape;
  if (std::strcmp(dtypes[1], "bool") != 0) return kBadDtype;
  return mscompat::ByDtype<float, double>(mscompat::FloatDtype(dtypes, {0, 2, 3, 4}), [&](auto v) {
    using T = decltype(v);
    QflLoss(static_cast<const T *>(params[0]), static_cast<const bool *>(params[1]),
               static_cast<const T *>(params[2]), ns != n * c,
               static_cast<const T *>(params[3])[0], static_cast<T *>(params[4]), n, c);
  });
}

extern "C" int QflBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                           const char **dtypes, void *, void *) {
  if (nparam != 7) return kBadArity;
  // params: pred, pos, score, coef, dloss, dpred, dscore
  int64_t n, c;
  if (!mscompat::Matrix(ndims[0], shapes[0], &n, &c)) return kBadShape;
  for (int i : {1, 4, 5})
    if (!mscompat::SameShape(ndims[0], shapes[0], ndims[i], shapes[i])) return kBadShape;
  const int64_t ns = NumElements(ndims[2], shapes[2]);
  if ((ns != n * c && ns != n) || NumElements(ndims[6], shapes[6]) != ns) return kBadShape;
  if (std::strcmp(dtypes[1], "bool") != 0) return kBadDtype;
  return mscompat::ByDtype<float, double>(mscompat::FloatDtype(dtypes, {0, 2, 3, 4, 5, 6}), [&](auto v) {
    using T = decltype(v);
    QflGrad(static_cast<const T *>(params[0]), static_cast<const bool *>(params[1]),
                static_cast<const T *>(params[2]), ns != n * c,
                static_cast<const T *>(params[3])[0], static_cast<const T *>(params[4]),
                static_cast<T *>(params[5]), static_cast<T *>(params[6]), n, c);
  });
}

extern "C" int VflForward(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *, void *) {
  if (nparam != 4) return kBadArity;
  // params: pred, target, coef (3), loss
  if (int rc = mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1, 3}, 2, 3)) return rc;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    const T *k = static_cast<const T *>(params[2]);
    VflLoss(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]), k[0], k[1],
               k[2] != T(0), static_cast<T *>(params[3]), n);
  });
}

extern "C" int VflBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                           const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  // params: pred, target, coef (3), dloss, dpred, dtarget
  if (int rc = mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1, 3, 4, 5}, 2, 3)) return rc;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    const T *k = static_cast<const T *>(params[2]);
    VflGrad(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]), k[0], k[1],
                k[2] != T(0), static_cast<const T *>(params[3]), static_cast<T *>(params[4]),
                static_cast<T *>(params[5]), n);
  });
}
