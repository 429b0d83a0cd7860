// MMDetection's elementwise box-regression losses (smooth_l1_loss, l1_loss, balanced_l1_loss):
// fused forward and backward CPU kernels for MindSpore's ops.Custom(func_type="aot").
//
// Calling convention and status codes: common.h.
//
//   RegressionLossForward(pred, target, coef) -> loss
//   RegressionLossBackward(pred, target, coef, dloss) -> (dpred, dtarget)
//   RegressionLossReduce(pred, target, weight, rcoef) -> out (0-d)
//   RegressionLossReduceBackward(pred, target, weight, rcoef, dout) -> (dpred, dtarget, dweight)
//
// coef = [kind, beta, alpha, gamma, b, alpha / b, gamma / b, alpha * beta] (the pred dtype):
// kind 0 is L1, 1 smooth L1, 2 balanced L1; b = e^(gamma / alpha) - 1 and its quotients are
// computed in Python doubles, as MMDetection computes them, then rounded to the dtype.
// rcoef = coef + [wmode + 4 * zero_check, divisor, multiplier]: the weighted mean or sum of the
// losses (loss_reduce.h); weight of pred's shape (wmode 1) or, with wmode 0, any one element.
// pred/target/dloss/outputs share one shape; float32 or float64. One pass over the data,
// split over threads for large inputs (MSCOMPAT_NUM_THREADS caps the count).
//
// Numerics follow PyTorch's op sequence: d = |p - t|;
//   smooth L1: d < beta ? 0.5 * d * d / beta : d - 0.5 * beta
//   balanced:  d < beta ? alpha / b * (b d + 1) * log(b d / beta + 1) - alpha d
//                       : gamma d + gamma / b - alpha beta
// and autograd's backward: abs' = sign(p - t) (0 at a tie), torch.where sends the gradient to
// the branch it picked.

// Floating-point operations never trap here (no FP exceptions are enabled): let the compiler
// compute both sides of smooth L1's select in vector lanes (the results are unchanged).
#pragma GCC optimize("no-trapping-math")

#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "common.h"
#include "loss_math.h"
#include "loss_reduce.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::NumElements;

constexpr int kCoef = 8;

template <typename F>
void ParallelFor(int64_t n, F body) {
  mscompat::ParallelFor(n, n, 1 << 15, 1 << 14, body);
}

template <typename T>
struct Coef {
  int kind;
  T beta, alpha, gamma, b, a_over_b, g_over_b, a_beta;

  explicit Coef(const T *c)
      : kind(static_cast<int>(c[0])), beta(c[1]), alpha(c[2]), gamma(c[3]), b(c[4]),
        a_over_b(c[5]), g_over_b(c[6]), a_beta(c[7]) {}
};

template <typename T>
inline T Sign(T v) {
  return static_cast<T>((v > T(0)) - (v < T(0)));
}

// The loss at one element, as a function of d = |p - t|.
template <typename T>
inline T Loss(const Coef<T> &c, T d) {
  if (c.kind == 0) return d;
  if (c.kind == 1) return d < c.beta ? T(0.5) * d * d / c.beta : d - T(0.5) * c.beta;
  if (d < c.beta) {
    const T bd = c.b * d;
    return c.a_over_b * (bd + T(1)) * std::log(bd / c.beta + T(1)) - c.alpha * d;
  }
  return c.gamma * d + c.g_over_b - c.a_beta;
}

// dLoss/dd.
template <typename T>
inline T LossGrad(const Coef<T> &c, T d) {
  if (c.kind == 0) return T(1);
  if (c.kind == 1) return d < c.beta ? (T(0.5) * d + T(0.5) * d) / c.beta : T(1);
  if (d < c.beta) {
    const T bd = c.b * d;
    const T inner = bd / c.beta + T(1);
    // d/dd [a/b (bd + 1) log(bd/beta + 1)] = a/b (b log(.) + (bd + 1) (b / beta) / (.))
    return c.a_over_b * (c.b * std::log(inner) + (bd + T(1)) * (c.b / c.beta) / inner) - c.alpha;
  }
  return c.gamma;
}

// Loss and LossGrad for a kind known at compile time.
template <int K, typename T>
inline T KindLoss(const Coef<T> &c, T d) {
  if constexpr (K == 0) {
    return d;
  } else if constexpr (K == 1) {
    // both sides computed: a select, which the compiler vectorises (it does not speculate a
    // division out of a branch)
    const T quad = T(0.5) * d * d / c.beta, lin = d - T(0.5) * c.beta;
    return d < c.beta ? quad : lin;
  } else {
    return Loss(c, d);
  }
}

template <int K, typename T>
inline T KindLossGrad(const Coef<T> &c, T d) {
  if constexpr (K == 0) {
    return T(1);
  } else if constexpr (K == 1) {
    const T quad = (T(0.5) * d + T(0.5) * d) / c.beta;
    return d < c.beta ? quad : T(1);
  } else {
    return LossGrad(c, d);
  }
}

template <typename T>
void Forward(const T *p, const T *t, const Coef<T> c, T *loss, int64_t n) {
  ParallelFor(n, [=](int64_t begin, int64_t end) {
    if (c.kind == 0) {  // a plain loop the compiler vectorises
      for (int64_t i = begin; i < end; ++i) loss[i] = std::abs(p[i] - t[i]);
    } else if (c.kind == 1) {
      const T beta = c.beta, half_beta = T(0.5) * c.beta;
      for (int64_t i = begin; i < end; ++i) {
        const T d = std::abs(p[i] - t[i]);
        loss[i] = d < beta ? T(0.5) * d * d / beta : d - half_beta;
      }
    } else {
      for (int64_t i = begin; i < end; ++i) loss[i] = Loss(c, std::abs(p[i] - t[i]));
    }
  });
}

template <typename T>
void Backward(const T *p, const T *t, const Coef<T> c, const T *g, T *dp, T *dt, int64_t n) {
  ParallelFor(n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const T diff = p[i] - t[i];
      const T v = g[i] * LossGrad(c, std::abs(diff)) * Sign(diff);
      dp[i] = v;
      dt[i] = -v;
    }
  });
}

// The reducing entry points: params pred, target, weight, rcoef, then out (forward) or dout,
// dpred, dtarget, dweight (backward).
int LaunchReduce(bool backward, int nparam, void **params, int *ndims, int64_t **shapes,
                 const char **dtypes) {
  if (nparam != (backward ? 8 : 5)) return kBadArity;
  constexpr int out_at = 4;  // the output (forward) or dout (backward)
  int rc = backward ? mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1, 5, 6}, 3, kCoef + 3)
                    : mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1}, 3, kCoef + 3);
  if (rc != kOk) return rc;
  if (NumElements(ndims[out_at], shapes[out_at]) != 1 ||
      !mscompat::AllDtype(dtypes, {2, out_at}, dtypes[0]) ||
      (backward && (!mscompat::AllDtype(dtypes, {7}, dtypes[0]) ||
                    !mscompat::SameShape(ndims[2], shapes[2], ndims[7], shapes[7]))))
    return kBadShape;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  const int64_t nw = NumElements(ndims[2], shapes[2]);
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) -> int {
    using T = decltype(v);
    const T *cv = static_cast<const T *>(params[3]);
    const Coef<T> c(cv);
    const mscompat::ReducePlan plan(cv + kCoef);
    if (plan.wmode > 1 || (plan.wmode == 0 ? nw < 1 : nw != n)) return kBadShape;
    const T *p = static_cast<const T *>(params[0]);
    const T *t = static_cast<const T *>(params[1]);
    const T *w = static_cast<const T *>(params[2]);
    // the kind as a template argument: L1 and smooth L1 in branch-free loops
    const auto run = [&](auto kind) {
      constexpr int K = decltype(kind)::value;
      if (!backward && K == 2) {
        // balanced L1: log(b d / beta + 1) of every element in one vector pass first
        std::vector<T> logs(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) logs[i] = c.b * std::abs(p[i] - t[i]) / c.beta + T(1);
        mscompat::LogInPlace(logs.data(), n);
        const T *lg = logs.data();
        *static_cast<T *>(params[4]) = mscompat::ReduceForward<T>(
            plan, n, 1, p, w, 1, 1 << 15, 1 << 14, [=](int64_t i) {
              const T d = std::abs(p[i] - t[i]);
              const T bd = c.b * d;
              const T inner = c.a_over_b * (bd + T(1)) * lg[i] - c.alpha * d;
              const T outer = c.gamma * d + c.g_over_b - c.a_beta;
              return d < c.beta ? inner : outer;
            });
        return;
      }
      if (!backward) {
        *static_cast<T *>(params[4]) = mscompat::ReduceForward<T>(
            plan, n, 1, p, w, 1, 1 << 15, 1 << 14,
            [=](int64_t i) { return KindLoss<K>(c, std::abs(p[i] - t[i])); });
        return;
      }
      T *dp = static_cast<T *>(params[5]);
      T *dt = static_cast<T *>(params[6]);
      const T dout = *static_cast<const T *>(params[4]);
      mscompat::ReduceBackward<T>(plan, n, 1, p, w, dout, dp, dt, static_cast<T *>(params[7]),
                                  1, 1 << 15, 1 << 14, [=](int64_t i, T dl) {
                                    const T diff = p[i] - t[i];
                                    const T d = std::abs(diff);
                                    const T g = dl * KindLossGrad<K>(c, d) * Sign(diff);
                                    dp[i] = g;
                                    dt[i] = -g;
                                    return KindLoss<K>(c, d);
                                  });
    };
    if (c.kind == 0) {
      run(std::integral_constant<int, 0>());
    } else if (c.kind == 1) {
      run(std::integral_constant<int, 1>());
    } else {
      run(std::integral_constant<int, 2>());
    }
    return kOk;
  });
}

}  // namespace

extern "C" int RegressionLossForward(int nparam, void **params, int *ndims, int64_t **shapes,
                                     const char **dtypes, void *, void *) {
  if (nparam != 4) return kBadArity;
  // params: pred, target, coef, loss
  if (int rc = mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1, 3}, 2, kCoef)) return rc;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    Forward(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
            Coef<T>(static_cast<const T *>(params[2])), static_cast<T *>(params[3]), n);
  });
}

extern "C" int RegressionLossBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                      const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  // params: pred, target, coef, dloss, dpred, dtarget
  if (int rc = mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1, 3, 4, 5}, 2, kCoef))
    return rc;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    Backward(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
             Coef<T>(static_cast<const T *>(params[2])), static_cast<const T *>(params[3]),
             static_cast<T *>(params[4]), static_cast<T *>(params[5]), n);
  });
}

extern "C" int RegressionLossReduce(int nparam, void **params, int *ndims, int64_t **shapes,
                                    const char **dtypes, void *, void *) {
  return LaunchReduce(false, nparam, params, ndims, shapes, dtypes);
}

extern "C" int RegressionLossReduceBackward(int nparam, void **params, int *ndims,
                                            int64_t **shapes, const char **dtypes, void *,
                                            void *) {
  return LaunchReduce(true, nparam, params, ndims, shapes, dtypes);
}
