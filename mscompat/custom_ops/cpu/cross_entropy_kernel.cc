// torch.nn.functional.cross_entropy on (N, C) logits and int64 class indices, fused forward and
// backward CPU kernels for MindSpore's ops.Custom(func_type="aot"):
//
//   CrossEntropyForward(x, target, weight, ignore) -> loss (N)
//   CrossEntropyBackward(x, target, weight, ignore, dloss) -> dx
//     the per-row term -weight[t] log_softmax(x)[t], 0 where t == ignore (a target outside
//     [0, C) other than ignore is kBadShape: the front door checked the range).
//   CrossEntropyReduce(x, target, weight, ignore, mode) -> (loss (0-d), bad (1) int64)
//   CrossEntropyReduceBackward(x, target, weight, ignore, mode, dout) -> dx
//     the same term summed (mode 0) or averaged over the kept targets' weights (mode 1,
//     PyTorch's 'mean') in the kernel, the targets outside [0, C) counted (and skipped) for the
//     front door's error: no MindSpore op around it but that test.
//
// float32 or float64 (x/weight/dloss share it). Rows are split over threads for large inputs
// (MSCOMPAT_NUM_THREADS caps the count); float32 rows of 8 or more classes go 8 rows at a time
// (softmax_row.h). The backward is log_softmax's of the one-hot gradient: k softmax(x) - k at t.

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include "common.h"
#include "parallel.h"
#include "softmax_row.h"

namespace {

using namespace mscompat::status;
using mscompat::LogSumExpRows;
using mscompat::NumElements;
using mscompat::ParallelRows;
using mscompat::ScaledSoftmaxRows;

template <typename T>
int CeLoss(const T *x, const int64_t *target, const T *w, int64_t ignore, T *loss,
                        int64_t n, int64_t c) {
  std::atomic<bool> bad{false};
  ParallelRows(n, c, [&](int64_t r0, int64_t r1) {
    T m[8], log_s[8];
    for (int64_t r = r0; r < r1;) {
      const int64_t rows = LogSumExpRows(x, r, r1, c, m, log_s);
      for (int64_t q = 0; q < rows; ++q, ++r) {
        const int64_t t = target[r];
        if (t == ignore || t < 0 || t >= c) {
          bad = bad || t != ignore;
          loss[r] = T(0);
          continue;
        }
        loss[r] = -(((x[r * c + t] - m[q]) - log_s[q]) * w[t]);
      }
    }
  });
  return bad ? kBadShape : kOk;
}

// The rows' gradient of -w[t] log_softmax(x)[t] times dloss (row_scale(r)): log_softmax's
// backward of the one-hot gradient, k softmax(x) - k at t with k = row_scale(r) w[t]; zeros
// for ignored and out-of-range targets (kBadShape for the latter).
template <typename T, typename Scale>
int CeRowsGrad(const T *x, const int64_t *target, const T *w, int64_t ignore, Scale row_scale,
               T *dx, int64_t n, int64_t c) {
  std::atomic<bool> bad{false};
  ParallelRows(n, c, [&](int64_t r0, int64_t r1) {
    T k[8];
    for (int64_t r = r0; r < r1;) {
      const int64_t rows = std::min<int64_t>(8, r1 - r);
      for (int64_t q = 0; q < rows; ++q) {
        const int64_t t = target[r + q];
        k[q] = (t == ignore || t < 0 || t >= c) ? T(0) : row_scale(r + q) * w[t];
      }
      const int64_t done = ScaledSoftmaxRows(x, r, r1, c, k, dx);
      for (int64_t q = 0; q < done; ++q, ++r) {
        const int64_t t = target[r];
        if (t == ignore || t < 0 || t >= c) {
          bad = bad || t != ignore;
          std::fill(dx + r * c, dx + (r + 1) * c, T(0));  // 0 even for non-finite logits
          continue;
        }
        dx[r * c + t] -= k[q];
      }
    }
  });
  return bad ? kBadShape : kOk;
}

template <typename T>
int CeGrad(const T *x, const int64_t *target, const T *w, int64_t ignore, const T *g, T *dx,
           int64_t n, int64_t c) {
  return CeRowsGrad(x, target, w, ignore, [g](int64_t r) { return g[r]; }, dx, n, c);
}

// The reduced forms: mode 0 'sum', 1 'mean' (PyTorch's: over the weights of the targets
// that are not ignored). The rows' losses and weights are summed in double over a fixed number
// of row blocks added in order (deterministic); the result is T(total) / T(weights), as
// nll_loss divides, so a mean where every target is ignored is 0 / 0 = NaN, as PyTorch's.
constexpr int64_t kCeBlocks = 64;

template <typename T>
int CeReduce(const T *x, const int64_t *target, const T *w, int64_t ignore, int64_t mode,
             T *out, int64_t *bad_count, int64_t n, int64_t c) {
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(kCeBlocks, n));
  double total[kCeBlocks] = {}, weights[kCeBlocks] = {};
  std::atomic<int64_t> bad{0};
  mscompat::ParallelFor(blocks, n * c, 1 << 15, 1 << 14, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      double sum = 0.0, wsum = 0.0;
      T m[8], log_s[8];
      const int64_t end = (b + 1) * n / blocks;
      for (int64_t r = b * n / blocks; r < end;) {
        const int64_t rows = LogSumExpRows(x, r, end, c, m, log_s);
        for (int64_t q = 0; q < rows; ++q, ++r) {
          const int64_t t = target[r];
          if (t == ignore) continue;
          if (t < 0 || t >= c) {  // counted: the front door raises PyTorch's error
            ++bad;
            continue;
          }
          sum += -(((x[r * c + t] - m[q]) - log_s[q]) * w[t]);
          wsum += w[t];
        }
      }
      total[b] = sum;
      weights[b] = wsum;
    }
  });
  double sum = 0.0, wsum = 0.0;
  for (int64_t b = 0; b < blocks; ++b) {
    sum += total[b];
    wsum += weights[b];
  }
  out[0] = mode == 1 ? static_cast<T>(sum) / static_cast<T>(wsum) : static_cast<T>(sum);
  bad_count[0] = bad;
  return kOk;
}

// The backward of CeReduce: each kept row's gradient of -w[t] log_softmax(x)[t] times dout (over
// the targets' weight sum for the mean, as nll_loss's backward divides the incoming gradient).
template <typename T>
int CeReduceGrad(const T *x, const int64_t *target, const T *w, int64_t ignore, int64_t mode,
                 T dout, T *dx, int64_t n, int64_t c) {
  double wsum = 0.0;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t t = target[r];
    if (t != ignore && t >= 0 && t < c) wsum += w[t];
  }
  const T g = mode == 1 ? dout / static_cast<T>(wsum) : dout;
  return CeRowsGrad(x, target, w, ignore, [g](int64_t) { return g; }, dx, n, c);
}

}  // namespace

// The shape checks of the cross-entropy entry points: x (N, C), target (N) int64, weight (C),
// ignore one int64, then `extra` tensors of N elements (dloss) and `grads` of x's shape.
static int CheckCrossEntropy(int *ndims, int64_t **shapes, const char **dtypes, bool backward,
                      int64_t *n, int64_t *c) {
  if (!mscompat::Matrix(ndims[0], shapes[0], n, c)) return kBadShape;
  if (std::strcmp(dtypes[1], "int64") != 0 || std::strcmp(dtypes[3], "int64") != 0)
    return kBadDtype;
  if (NumElements(ndims[1], shapes[1]) != *n || NumElements(ndims[2], shapes[2]) != *c ||
      NumElements(ndims[3], shapes[3]) != 1 || NumElements(ndims[4], shapes[4]) != *n)
    return kBadShape;
  if (backward && !mscompat::SameShape(ndims[0], shapes[0], ndims[5], shapes[5]))
    return kBadShape;
  return kOk;
}

extern "C" int CrossEntropyForward(int nparam, void **params, int *ndims, int64_t **shapes,
                                   const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  // params: x (N, C), target (N) int64, weight (C), ignore (1) int64, loss (N)
  int64_t n, c;
  if (int rc = CheckCrossEntropy(ndims, shapes, dtypes, false, &n, &c)) return rc;
  return mscompat::ByDtype<float, double>(mscompat::FloatDtype(dtypes, {0, 2, 4}), [&](auto v) {
    using T = decltype(v);
    return CeLoss(static_cast<const T *>(params[0]),
                               static_cast<const int64_t *>(params[1]),
                               static_cast<const T *>(params[2]),
                               static_cast<const int64_t *>(params[3])[0],
                               static_cast<T *>(params[4]), n, c);
  });
}

extern "C" int CrossEntropyBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                    const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  // params: x, target, weight, ignore, dloss (N), dx (N, C)
  int64_t n, c;
  if (int rc = CheckCrossEntropy(ndims, shapes, dtypes, true, &n, &c)) return rc;
  return mscompat::ByDtype<float, double>(mscompat::FloatDtype(dtypes, {0, 2, 4, 5}), [&](auto v) {
    using T = decltype(v);
    return CeGrad(
        static_cast<const T *>(params[0]), static_cast<const int64_t *>(params[1]),
        static_cast<const T *>(params[2]), static_cast<const int64_t *>(params[3])[0],
        static_cast<const T *>(params[4]), static_cast<T *>(params[5]), n, c);
  });
}

// The reduced entry points: x (N, C), target (N) int64, weight (C), ignore (1) int64, mode (1)
// int64, then the 0-d loss (forward) or dout (1) and dx (N, C) (backward).
static int CheckCeReduce(int *ndims, int64_t **shapes, const char **dtypes, bool backward,
                         int64_t *n, int64_t *c) {
  if (!mscompat::Matrix(ndims[0], shapes[0], n, c)) return kBadShape;
  for (int i : {1, 3, 4})
    if (std::strcmp(dtypes[i], "int64") != 0) return kBadDtype;
  if (NumElements(ndims[1], shapes[1]) != *n || NumElements(ndims[2], shapes[2]) != *c ||
      NumElements(ndims[3], shapes[3]) != 1 || NumElements(ndims[4], shapes[4]) != 1 ||
      NumElements(ndims[5], shapes[5]) != 1)
    return kBadShape;
  if (backward ? !mscompat::SameShape(ndims[0], shapes[0], ndims[6], shapes[6])
               : std::strcmp(dtypes[6], "int64") != 0 || NumElements(ndims[6], shapes[6]) != 1)
    return kBadShape;
  return kOk;
}

extern "C" int CrossEntropyReduce(int nparam, void **params, int *ndims, int64_t **shapes,
                                  const char **dtypes, void *, void *) {
  if (nparam != 7) return kBadArity;
  // params: x, target, weight, ignore, mode, loss (one element), bad (1, int64: the targets
  // outside [0, C) other than ignore, skipped)
  int64_t n, c;
  if (int rc = CheckCeReduce(ndims, shapes, dtypes, false, &n, &c)) return rc;
  return mscompat::ByDtype<float, double>(mscompat::FloatDtype(dtypes, {0, 2, 5}), [&](auto v) {
    using T = decltype(v);
    return CeReduce(static_cast<const T *>(params[0]), static_cast<const int64_t *>(params[1]),
                    static_cast<const T *>(params[2]), static_cast<const int64_t *>(params[3])[0],
                    static_cast<const int64_t *>(params[4])[0], static_cast<T *>(params[5]),
                    static_cast<int64_t *>(params[6]), n, c);
  });
}

extern "C" int CrossEntropyReduceBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                          const char **dtypes, void *, void *) {
  if (nparam != 7) return kBadArity;
  // params: x, target, weight, ignore, mode, dout (one element), dx (N, C)
  int64_t n, c;
  if (int rc = CheckCeReduce(ndims, shapes, dtypes, true, &n, &c)) return rc;
  return mscompat::ByDtype<float, double>(mscompat::FloatDtype(dtypes, {0, 2, 5, 6}), [&](auto v) {
    using T = decltype(v);
    return CeReduceGrad(
        static_cast<const T *>(params[0]), static_cast<const int64_t *>(params[1]),
        static_cast<const T *>(params[2]), static_cast<const int64_t *>(params[3])[0],
        static_cast<const int64_t *>(params[4])[0], static_cast<const T *>(params[5])[0],
        static_cast<T *>(params[6]), n, c);
  });
}
