// MMDetection's distribution_focal_loss (GFL), fused forward and backward CPU kernels for
// MindSpore's ops.Custom(func_type="aot"):
//
//   DflForward(pred, label, weight, coef) -> loss (N)     coef = [d0, d1, loss_weight]
//   DflTotal(pred, label, weight, coef) -> loss (0-d)
//   DflBackward(pred, label, weight, coef, dloss) -> (dpred, dlabel, dweight)
//
// Per row i of the (N, C) logits, with l = trunc(y_i) (PyTorch's label.long()) and
// CE(t) = -log_softmax(x_i)[t]:
//   loss_i = w_i ((l + 1 - y_i) CE(l) + (y_i - l) CE(l + 1))
// DflForward writes loss_i * loss_weight (reduction 'none'); DflTotal the weighted sum divided
// by d0 + d1 (added in double: N + 0 for 'mean', avg_factor + eps) times loss_weight:
// MMDetection's weight_reduce_loss and the module's loss_weight in one pass. weight has N
// elements, or one when there is none (a 1, read only when N = 1; its gradient is 0).
// dloss has N elements (DflForward's) or is 0-d
// (DflTotal's); the gradients of label (through the two bin weights, as PyTorch's autograd
// gives it) and of weight are returned with pred's.
//
// A row reads its logits once for the log-sum-exp and picks both bins from it. A label
// outside (-1, C - 1) (a bin outside [0, C), or NaN) is kBadShape: the front door checks the
// range first, this guards the memory. float32 or float64, one dtype for all; float32 rows go
// 8 at a time on AVX2 CPUs (lane = row, see Avx2Lanes); rows are split over threads for large
// inputs (MSCOMPAT_NUM_THREADS caps the count).

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common.h"
#include "loss_math.h"
#include "parallel.h"
#include "softmax_row.h"

namespace {

using namespace mscompat::status;
using mscompat::NumElements;
#ifdef MSCOMPAT_AVX2
using mscompat::ExpNonPositive;
using mscompat::LogAtLeastOne;
#endif

constexpr int kBlock = 8;             // rows per block: the lanes of the float32 path
constexpr int64_t kMaxLaneCols = 64;  // the widest row the float32 path transposes

// The terms of a block of up to kBlock rows. The float32 path also keeps the block transposed
// as exp(x - m) (column j of row l at e[j * kBlock + l]) and the sums s of each row.
template <typename T>
struct BlockTerms {
  T m[kBlock], log_s[kBlock], wl[kBlock], wr[kBlock], ce_l[kBlock], ce_r[kBlock];
  int64_t left[kBlock];
  bool lanes = false;  // e and s are filled
  alignas(32) float e[kMaxLaneCols * kBlock];
  alignas(32) float s[kBlock];

  T Loss(int l) const { return ce_l[l] * wl[l] + ce_r[l] * wr[l]; }

  // The bins of row l (label y, of a row at `row`) once m and log_s are known; false if the
  // label is out of range (its terms are zeros).
  bool Pick(int l, const T *row, T y, int64_t c) {
    // trunc(y) in [0, c - 2]: -1 < y < c - 1 (false for NaN)
    if (!(y > T(-1) && y < static_cast<T>(c - 1))) {
      wl[l] = wr[l] = ce_l[l] = ce_r[l] = T(0);
      left[l] = 0;
      return false;
    }
    const int64_t k = static_cast<int64_t>(y);  // PyTorch's label.long()
    left[l] = k;
    wl[l] = static_cast<T>(k + 1) - y;
    wr[l] = y - static_cast<T>(k);
    ce_l[l] = -((row[k] - m[l]) - log_s[l]);
    ce_r[l] = -((row[k + 1] - m[l]) - log_s[l]);
    return true;
  }
};

#ifdef MSCOMPAT_AVX2
// dst[i * dst_stride + l] = src[l * src_stride + i] for an 8 x 8 block of floats.
__attribute__((target("avx2,fma"))) inline void Transpose8(const float *src, int64_t src_stride,
                                                           float *dst, int64_t dst_stride) {
  __m256 r[8], t[8];
  for (int l = 0; l < 8; ++l) r[l] = _mm256_loadu_ps(src + l * src_stride);
  for (int l = 0; l < 8; l += 2) {
    t[l] = _mm256_unpacklo_ps(r[l], r[l + 1]);
    t[l + 1] = _mm256_unpackhi_ps(r[l], r[l + 1]);
  }
  for (int h = 0; h < 8; h += 4) {
    r[h] = _mm256_shuffle_ps(t[h], t[h + 2], 0x44);
    r[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], 0xEE);
    r[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0x44);
    r[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0xEE);
  }
  for (int i = 0; i < 4; ++i) {
    _mm256_storeu_ps(dst + i * dst_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x20));
    _mm256_storeu_ps(dst + (i + 4) * dst_stride, _mm256_permute2f128_ps(r[i], r[i + 4], 0x31));
  }
}

// The terms (with e and s) of a full block of 8 float32 rows of c <= kMaxLaneCols columns,
// lane l = row l: the block is transposed first, 8 x 8 at a time (no horizontal max or sum
// per row, and a row of 17 bins wastes no lanes; gathers instead were 2x slower on the AMD
// Zen 5 measured); false if a label is out of range (BlockTerms::Pick's formulas).
__attribute__((target("avx2,fma"))) bool Avx2Lanes(const float *x, const float *y, int64_t c,
                                                   BlockTerms<float> *b) {
  int64_t j0 = 0;
  for (; j0 + 8 <= c; j0 += 8) Transpose8(x + j0, c, b->e + j0 * kBlock, kBlock);
  for (int l = 0; l < kBlock; ++l)
    for (int64_t j = j0; j < c; ++j) b->e[j * kBlock + l] = x[l * c + j];
  __m256 m = _mm256_load_ps(b->e);
  for (int64_t j = 1; j < c; ++j) m = _mm256_max_ps(m, _mm256_load_ps(b->e + j * kBlock));
  __m256 s = _mm256_setzero_ps();
  for (int64_t j = 0; j < c; ++j) {
    const __m256 ej = ExpNonPositive(_mm256_sub_ps(_mm256_load_ps(b->e + j * kBlock), m));
    _mm256_store_ps(b->e + j * kBlock, ej);
    s = _mm256_add_ps(s, ej);
  }
  const __m256 log_s = LogAtLeastOne(s);
  _mm256_storeu_ps(b->m, m);
  _mm256_store_ps(b->s, s);
  _mm256_storeu_ps(b->log_s, log_s);
  b->lanes = true;
  const __m256 yv = _mm256_loadu_ps(y), one = _mm256_set1_ps(1.0f);
  const __m256 ok =
      _mm256_and_ps(_mm256_cmp_ps(yv, _mm256_set1_ps(-1.0f), _CMP_GT_OQ),
                    _mm256_cmp_ps(yv, _mm256_set1_ps(static_cast<float>(c - 1)), _CMP_LT_OQ));
  const __m256i left = _mm256_cvttps_epi32(_mm256_and_ps(yv, ok));
  const __m256i at = _mm256_add_epi32(
      _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                         _mm256_set1_epi32(static_cast<int>(c))),
      left);
  const __m256 lf = _mm256_cvtepi32_ps(left);
  const __m256 xl = _mm256_i32gather_ps(x, at, 4), xr = _mm256_i32gather_ps(x + 1, at, 4);
  _mm256_storeu_ps(b->wl, _mm256_and_ps(_mm256_sub_ps(_mm256_add_ps(lf, one), yv), ok));
  _mm256_storeu_ps(b->wr, _mm256_and_ps(_mm256_sub_ps(yv, lf), ok));
  _mm256_storeu_ps(b->ce_l, _mm256_and_ps(_mm256_sub_ps(log_s, _mm256_sub_ps(xl, m)), ok));
  _mm256_storeu_ps(b->ce_r, _mm256_and_ps(_mm256_sub_ps(log_s, _mm256_sub_ps(xr, m)), ok));
  alignas(32) int32_t lanes[kBlock];
  _mm256_store_si256(reinterpret_cast<__m256i *>(lanes), left);
  for (int l = 0; l < kBlock; ++l) b->left[l] = lanes[l];
  return _mm256_movemask_ps(ok) == 0xff;
}

// dx of a full block: row l, column j = k[l] softmax = k[l] e[j][l] / s[l] (transposed back).
__attribute__((target("avx2,fma"))) void Avx2ScaledSoftmax(const BlockTerms<float> &b,
                                                           const float *k, int64_t c,
                                                           float *dx) {
  alignas(32) float p[kMaxLaneCols * kBlock];
  const __m256 ks = _mm256_div_ps(_mm256_loadu_ps(k), _mm256_load_ps(b.s));
  for (int64_t j = 0; j < c; ++j)
    _mm256_store_ps(p + j * kBlock, _mm256_mul_ps(ks, _mm256_load_ps(b.e + j * kBlock)));
  int64_t j0 = 0;
  for (; j0 + 8 <= c; j0 += 8) Transpose8(p + j0 * kBlock, kBlock, dx + j0, c);
  for (int l = 0; l < kBlock; ++l)
    for (int64_t j = j0; j < c; ++j) dx[l * c + j] = p[j * kBlock + l];
}
#endif

// The terms of the block of `cnt` rows at row `r`; false if a label is out of range.
template <typename T>
bool Terms(const T *x, const T *y, int64_t r, int64_t c, int cnt, BlockTerms<T> *b) {
  x += r * c;
  y += r;
  b->lanes = false;
#ifdef MSCOMPAT_AVX2
  if constexpr (std::is_same<T, float>::value) {
    if (cnt == kBlock && c <= kMaxLaneCols && mscompat::HasAvx2()) return Avx2Lanes(x, y, c, b);
  }
#endif
  bool ok = true;
  for (int l = 0; l < cnt; ++l) {
    mscompat::LogSumExp(x + l * c, c, &b->m[l], &b->log_s[l]);
    ok = b->Pick(l, x + l * c, y[l], c) && ok;
  }
  return ok;
}

// The inputs shared by the entry points.
template <typename T>
struct Dfl {
  const T *x, *y, *w;
  bool per_row_w;  // weight has N elements (else there is none)
  T divisor, loss_weight;
  int64_t n, c;

  int64_t Blocks() const { return (n + kBlock - 1) / kBlock; }

  // body(block, row, rows in the block, terms), blocks split over threads; false if a label
  // is out of range.
  template <typename F>
  bool ForBlocks(F body) const {
    std::atomic<bool> bad{false};
    mscompat::ParallelFor(Blocks(), n * c, 1 << 15, 1 << 14, [&](int64_t b0, int64_t b1) {
      BlockTerms<T> t;
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t r = b * kBlock;
        const int cnt = static_cast<int>(std::min<int64_t>(kBlock, n - r));
        if (!Terms(x, y, r, c, cnt, &t)) bad = true;
        body(b, r, cnt, t);
      }
    });
    return !bad;
  }
};

// loss_i * loss_weight (out: N) or the reduced total (out: 1 element).
template <typename T>
int DflLoss(const Dfl<T> &d, bool total, T *out) {
  std::vector<double> partial(total ? d.Blocks() : 0);
  const bool ok = d.ForBlocks([&](int64_t b, int64_t r, int cnt, const BlockTerms<T> &t) {
    double acc = 0.0;
    for (int l = 0; l < cnt; ++l) {
      const T v = d.per_row_w ? t.Loss(l) * d.w[r + l] : t.Loss(l);
      if (total) {
        acc += static_cast<double>(v);
      } else {
        out[r + l] = v * d.loss_weight;
      }
    }
    if (total) partial[b] = acc;
  });
  if (total) {
    double s = 0.0;
    for (double p : partial) s += p;  // fixed order: the result does not depend on threads
    out[0] = (static_cast<T>(s) / d.divisor) * d.loss_weight;
  }
  return ok ? kOk : kBadShape;
}

// The gradients for dloss (N values, or one for the total).
template <typename T>
int DflGrad(const Dfl<T> &d, const T *dloss, bool per_row_g, T *dx, T *dy, T *dw) {
  const bool ok = d.ForBlocks([&](int64_t, int64_t r, int cnt, const BlockTerms<T> &t) {
    T kl[kBlock], kr[kBlock], k[kBlock];
    for (int l = 0; l < cnt; ++l) {
      const int64_t i = r + l;
      // the chain rule in PyTorch's order: loss_weight, then the mean's division, then weight
      const T gw = (dloss[per_row_g ? i : 0] * d.loss_weight) / d.divisor;
      const T g = d.per_row_w ? gw * d.w[i] : gw;
      if (d.per_row_w) dw[i] = gw * t.Loss(l);
      dy[i] = g * t.ce_r[l] - g * t.ce_l[l];
      kl[l] = g * t.wl[l];
      kr[l] = g * t.wr[l];
      k[l] = kl[l] + kr[l];
    }
    // each cross-entropy's log_softmax backward: k (softmax - onehot(bin))
    T *out = dx + r * d.c;
#ifdef MSCOMPAT_AVX2
    if constexpr (std::is_same<T, float>::value) {
      if (t.lanes) Avx2ScaledSoftmax(t, k, d.c, out);
    }
#endif
    for (int l = 0; l < cnt; ++l) {
      T *row_out = out + l * d.c;
      if (!t.lanes)
        mscompat::ScaledSoftmax(d.x + (r + l) * d.c, d.c, t.m[l], t.log_s[l], k[l], row_out);
      row_out[t.left[l]] -= kl[l];
      row_out[t.left[l] + 1] -= kr[l];
    }
  });
  if (!d.per_row_w) dw[0] = T(0);
  return ok ? kOk : kBadShape;
}

// Checks pred (N, C), label (N), weight (N or 1 element), coef (3) and the tensors up to
// `last`: one dtype, float32 or float64; N > 0 and C >= 2.
int CheckInputs(int *ndims, int64_t **shapes, const char **dtypes, int last, int64_t *n,
                int64_t *c, int64_t *nw) {
  if (ndims[0] != 2) return kBadShape;
  *n = shapes[0][0];
  *c = shapes[0][1];
  const char *dt = dtypes[0];
  if (std::strcmp(dt, "float32") != 0 && std::strcmp(dt, "float64") != 0) return kBadDtype;
  for (int i = 1; i <= last; ++i)
    if (std::strcmp(dtypes[i], dt) != 0) return kBadDtype;
  *nw = NumElements(ndims[2], shapes[2]);
  if (*n == 0 || *c < 2 || NumElements(ndims[1], shapes[1]) != *n || (*nw != *n && *nw != 1) ||
      NumElements(ndims[3], shapes[3]) != 3)
    return kBadShape;
  return kOk;
}

template <typename T>
Dfl<T> Inputs(void **params, int64_t n, int64_t c, int64_t nw) {
  const T *coef = static_cast<const T *>(params[3]);
  return Dfl<T>{static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
                static_cast<const T *>(params[2]), nw == n,
                static_cast<T>(static_cast<double>(coef[0]) + static_cast<double>(coef[1])),
                coef[2], n, c};
}

int Forward(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
            bool total) {
  if (nparam != 5) return kBadArity;
  // params: pred (N, C), label (N), weight (N or 1), coef (2), loss (N, or 0-d)
  int64_t n, c, nw;
  if (int rc = CheckInputs(ndims, shapes, dtypes, 4, &n, &c, &nw)) return rc;
  if (NumElements(ndims[4], shapes[4]) != (total ? 1 : n)) return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    return DflLoss(Inputs<T>(params, n, c, nw), total, static_cast<T *>(params[4]));
  });
}

}  // namespace

extern "C" int DflForward(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *, void *) {
  return Forward(nparam, params, ndims, shapes, dtypes, false);
}

extern "C" int DflTotal(int nparam, void **params, int *ndims, int64_t **shapes,
                        const char **dtypes, void *, void *) {
  return Forward(nparam, params, ndims, shapes, dtypes, true);
}

extern "C" int DflBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                           const char **dtypes, void *, void *) {
  if (nparam != 8) return kBadArity;
  // params: pred, label, weight, coef, dloss (N, or 0-d), dpred, dlabel, dweight
  int64_t n, c, nw;
  if (int rc = CheckInputs(ndims, shapes, dtypes, 7, &n, &c, &nw)) return rc;
  const int64_t ng = NumElements(ndims[4], shapes[4]);
  if ((ng != n && ndims[4] != 0) ||
      !mscompat::SameShape(ndims[0], shapes[0], ndims[5], shapes[5]) ||
      NumElements(ndims[6], shapes[6]) != n || NumElements(ndims[7], shapes[7]) != nw)
    return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    return DflGrad(Inputs<T>(params, n, c, nw), static_cast<const T *>(params[4]), ndims[4] != 0,
                   static_cast<T *>(params[5]), static_cast<T *>(params[6]),
                   static_cast<T *>(params[7]));
  });
}
