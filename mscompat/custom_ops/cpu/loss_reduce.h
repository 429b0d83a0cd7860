// The weighted reduction the fused loss kernels share (box_loss_kernel.cc,
// regression_loss_kernel.cc): MMDetection's weight_reduce_loss and a Cell's loss_weight folded
// into the loss kernel, so that a graph's whole `mean`/`sum` loss is one Custom op (each extra
// MindSpore op in a graph costs about as much as PyTorch's whole loss on 10k boxes).
//
//   out = T(T(sum_i w_i * loss_i / divisor) * multiplier)
//
// over n items of `width` prediction elements each (a box: 4; an elementwise loss: 1), with the
// per-item weight w_i: none (wmode 0), one per item (wmode 1, broadcast over the width) or one
// per prediction element averaged over the item (wmode 2: MMDetection's IoU Cells average an
// (n, 4) weight to (n,)). The products are rounded to T as PyTorch's `loss * weight` is; the sum
// is accumulated in double over fixed blocks (the result does not depend on the thread count)
// and is at least as accurate as PyTorch's float32 pairwise sum.
//
// With `zero_check` (MMDetection's SmoothL1Loss/L1Loss/IoU Cells) and no weight > 0, the output
// is instead the Cells' shortcut `(pred * weight).sum()`, without divisor or multiplier.

#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "parallel.h"

namespace mscompat {

// The reduction's parameters, read from the tail of the kernel's coef vector:
// [..., wmode + 4 * zero_check, divisor, multiplier].
struct ReducePlan {
  int wmode = 0;
  bool zero_check = false;
  double divisor = 1.0, multiplier = 1.0;

  template <typename T>
  explicit ReducePlan(const T *tail)
      : wmode(static_cast<int>(tail[0]) & 3),
        zero_check((static_cast<int>(tail[0]) & 4) != 0),
        divisor(static_cast<double>(tail[1])),
        multiplier(static_cast<double>(tail[2])) {}

  // The number of weight elements this plan reads for n items of `width`.
  int64_t WeightCount(int64_t n, int width) const {
    return wmode == 0 ? 0 : (wmode == 1 ? n : n * width);
  }
};

// Items per block of the fixed-order partial sums.
constexpr int64_t kReduceBlock = 2048;

// sum_i term(i) over [0, n) in double, by blocks of kReduceBlock items summed in order; the
// blocks spread over threads as ParallelFor(min_work, grain) decides for `work` units. A block's
// terms are computed into a buffer first (a loop the compiler can vectorise for elementwise
// losses), then summed with four accumulators (a sum in one accumulator waits on each add).
template <typename F>
double BlockSum(int64_t n, int64_t work, int64_t min_work, int64_t grain, F term) {
  using V = decltype(term(int64_t(0)));
  const int64_t blocks = (n + kReduceBlock - 1) / kReduceBlock;
  std::vector<double> partial(static_cast<size_t>(blocks), 0.0);
  double *out = partial.data();
  ParallelFor(blocks, work, min_work, grain, [=](int64_t b0, int64_t b1) {
    V buf[kReduceBlock];
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t begin = b * kReduceBlock;
      const int64_t m = std::min(n, begin + kReduceBlock) - begin;
      for (int64_t k = 0; k < m; ++k) buf[k] = term(begin + k);
      double s[4] = {0.0, 0.0, 0.0, 0.0};
      int64_t k = 0;
      for (; k + 4 <= m; k += 4)
        for (int j = 0; j < 4; ++j) s[j] += static_cast<double>(buf[k + j]);
      for (; k < m; ++k) s[0] += static_cast<double>(buf[k]);
      out[b] = (s[0] + s[1]) + (s[2] + s[3]);
    }
  });
  double total = 0.0;
  for (double s : partial) total += s;
  return total;
}

// The weight of item i (its average over the width for wmode 2, as PyTorch's mean(-1)).
template <typename T>
inline T ItemWeight(const ReducePlan &plan, const T *w, int64_t i, int width) {
  if (plan.wmode == 1) return w[i];
  T s = w[i * width];
  for (int k = 1; k < width; ++k) s += w[i * width + k];
  return s / static_cast<T>(width);
}

// The weight of prediction element j of item i in the Cells' shortcut (pred * weight).sum().
template <typename T>
inline T ElementWeight(const ReducePlan &plan, const T *w, int64_t i, int j, int width) {
  return plan.wmode == 1 ? w[i] : w[i * width + j];
}

// Whether the Cells' zero-weight shortcut applies: zero_check, a weight, and none of it > 0.
template <typename T>
bool ZeroShortcut(const ReducePlan &plan, const T *w, int64_t n, int width) {
  if (!plan.zero_check || plan.wmode == 0) return false;
  const int64_t m = plan.WeightCount(n, width);
  for (int64_t k = 0; k < m; ++k)
    if (w[k] > T(0)) return false;
  return true;
}

// The forward: `loss(i)` is item i's loss (T). Work per item `cost` picks the threads.
template <typename T, typename Loss>
T ReduceForward(const ReducePlan &plan, int64_t n, int width, const T *pred, const T *w,
                int64_t cost, int64_t min_work, int64_t grain, Loss loss) {
  if (ZeroShortcut(plan, w, n, width)) {
    const double s = BlockSum(n, n, 1 << 16, 1 << 15, [=](int64_t i) {
      double r = 0.0;
      for (int j = 0; j < width; ++j)
        r += static_cast<double>(pred[i * width + j] * ElementWeight(plan, w, i, j, width));
      return r;
    });
    return static_cast<T>(s);
  }
  // one loop per weight mode: no per-item branch on it
  double s;
  if (plan.wmode == 0) {
    s = BlockSum(n, n * cost, min_work, grain, loss);
  } else if (plan.wmode == 1) {
    s = BlockSum(n, n * cost, min_work, grain, [=](int64_t i) { return T(w[i] * loss(i)); });
  } else {
    s = BlockSum(n, n * cost, min_work, grain,
                 [=](int64_t i) { return T(ItemWeight(plan, w, i, width) * loss(i)); });
  }
  T r = static_cast<T>(s / plan.divisor);
  if (plan.multiplier != 1.0) r = r * static_cast<T>(plan.multiplier);
  return r;
}

// The backward: `grad(i, dl)` writes item i's gradients for dloss_i = dl and returns its loss.
// dpred/dtarget of the shortcut and dweight are written here (dweight: one element, 0, when the
// call had no weight).
template <typename T, typename Grad>
void ReduceBackward(const ReducePlan &plan, int64_t n, int width, const T *pred, const T *w,
                    T dout, T *dpred, T *dtarget, T *dweight, int64_t cost, int64_t min_work,
                    int64_t grain, Grad grad) {
  if (plan.wmode == 0) dweight[0] = T(0);
  if (ZeroShortcut(plan, w, n, width)) {
    ParallelFor(n, n, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        T dw = T(0);
        for (int j = 0; j < width; ++j) {
          const int64_t e = i * width + j;
          dpred[e] = ElementWeight(plan, w, i, j, width) * dout;
          dtarget[e] = T(0);
          if (plan.wmode == 1) {
            dw += pred[e] * dout;
          } else {
            dweight[e] = pred[e] * dout;
          }
        }
        if (plan.wmode == 1) dweight[i] = dw;
      }
    });
    return;
  }
  // PyTorch's chain: loss_weight * x, then mean's / n (or / (avg_factor + eps)), then * weight
  T g = dout;
  if (plan.multiplier != 1.0) g = g * static_cast<T>(plan.multiplier);
  if (plan.divisor != 1.0) g = g / static_cast<T>(plan.divisor);
  ParallelFor(n, n * cost, min_work, grain, [=](int64_t begin, int64_t end) {
    if (plan.wmode == 0) {
      for (int64_t i = begin; i < end; ++i) grad(i, g);
    } else if (plan.wmode == 1) {
      for (int64_t i = begin; i < end; ++i) dweight[i] = g * grad(i, g * w[i]);
    } else {
      for (int64_t i = begin; i < end; ++i) {
        const T dw = g * grad(i, g * ItemWeight(plan, w, i, width));
        for (int j = 0; j < width; ++j) dweight[i * width + j] = dw / static_cast<T>(width);
      }
    }
  });
}

}  // namespace mscompat
