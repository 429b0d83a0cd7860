// The geometry of a pair of boxes shared by the IoU-family box losses (box_loss_kernel.cc):
// PyTorch's NaN-propagating max/min/clamp and their gradients, the intersection corners, areas,
// MMDetection's clamped overlap and CIoU's aspect term, each with its backward.

#pragma once

#include <cmath>

namespace mscompat {
namespace box {

// torch.maximum / torch.minimum: NaN propagates.
template <typename T>
inline T Max(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a > b ? a : b;
}

template <typename T>
inline T Min(T a, T b) {
  if (a != a) return a;
  if (b != b) return b;
  return a < b ? a : b;
}

// x.clamp(min=0): NaN stays NaN.
template <typename T>
inline T Clamp0(T x) {
  return x < T(0) ? T(0) : x;
}

// PyTorch's gradient of maximum(a, b) to a and to b: the larger gets it, a tie halves, NaN
// gives both the whole gradient (its masks compare false). Arithmetic, not branches: random
// boxes make the comparisons unpredictable (branches made the backward 1.5x slower).
template <typename T>
inline void MaxWeights(T a, T b, T *wa, T *wb) {
  const T half_tie = T(0.5) * static_cast<T>(a == b);
  *wa = T(1) - static_cast<T>(a < b) - half_tie;
  *wb = T(1) - static_cast<T>(a > b) - half_tie;
}

template <typename T>
inline void MinWeights(T a, T b, T *wa, T *wb) {
  const T half_tie = T(0.5) * static_cast<T>(a == b);
  *wa = T(1) - static_cast<T>(a > b) - half_tie;
  *wb = T(1) - static_cast<T>(a < b) - half_tie;
}

// Gradient accumulators of one pair of boxes (null in the forward: the compiler drops the
// backward code).
template <typename T>
struct Grads {
  T p[4] = {T(0), T(0), T(0), T(0)};
  T t[4] = {T(0), T(0), T(0), T(0)};

  // Gradients of the widths and heights (x2 - x1, y2 - y1) of p and t: gs = {w_p, h_p, w_t, h_t}.
  void Sizes(const T gs[4]) {
    p[2] += gs[0];
    p[0] -= gs[0];
    p[3] += gs[1];
    p[1] -= gs[1];
    t[2] += gs[2];
    t[0] -= gs[2];
    t[3] += gs[3];
    t[1] -= gs[3];
  }

  // Gradients of the sums p[0] + p[2] and p[1] + p[3], which t's sums are subtracted from.
  void Centres(T gx, T gy) {
    p[0] += gx;
    p[2] += gx;
    t[0] -= gx;
    t[2] -= gx;
    p[1] += gy;
    p[3] += gy;
    t[1] -= gy;
    t[3] -= gy;
  }

  // g into maximum(p[i], t[i]) (or minimum with `is_min`).
  void Extreme(const T *pb, const T *tb, int i, T g, bool is_min) {
    T wp, wt;
    if (is_min) {
      MinWeights(pb[i], tb[i], &wp, &wt);
    } else {
      MaxWeights(pb[i], tb[i], &wp, &wt);
    }
    p[i] += g * wp;
    t[i] += g * wt;
  }
};

// The intersection corners of a pair: lt = max of (x1, y1), rb = min of (x2, y2).
template <typename T>
struct Corners {
  T lt0, lt1, rb0, rb1;
  // the enclosing box: min of (x1, y1), max of (x2, y2)
  T el0, el1, er0, er1;

  Corners(const T *p, const T *t)
      : lt0(Max(p[0], t[0])),
        lt1(Max(p[1], t[1])),
        rb0(Min(p[2], t[2])),
        rb1(Min(p[3], t[3])),
        el0(Min(p[0], t[0])),
        el1(Min(p[1], t[1])),
        er0(Max(p[2], t[2])),
        er1(Max(p[3], t[3])) {}

  // Gradients of lt0, lt1, rb0, rb1 into the boxes.
  void Inner(const T *p, const T *t, T g_lt0, T g_lt1, T g_rb0, T g_rb1, Grads<T> *g) const {
    g->Extreme(p, t, 0, g_lt0, false);
    g->Extreme(p, t, 1, g_lt1, false);
    g->Extreme(p, t, 2, g_rb0, true);
    g->Extreme(p, t, 3, g_rb1, true);
  }

  // Gradients of el0, el1, er0, er1 into the boxes.
  void Outer(const T *p, const T *t, T g_el0, T g_el1, T g_er0, T g_er1, Grads<T> *g) const {
    g->Extreme(p, t, 0, g_el0, true);
    g->Extreme(p, t, 1, g_el1, true);
    g->Extreme(p, t, 2, g_er0, false);
    g->Extreme(p, t, 3, g_er1, false);
  }
};

// Gradient g of (b[2] - b[0]) * (b[3] - b[1]) into the box b's accumulator `gb`.
template <typename T>
inline void AreaGrad(const T *b, T g, T *gb) {
  const T w = b[2] - b[0], h = b[3] - b[1];
  gb[2] += g * h;
  gb[0] -= g * h;
  gb[3] += g * w;
  gb[1] -= g * w;
}

// MMDetection's clamped intersection: wh = (rb - lt).clamp(min=0), overlap = w * h; its
// gradient g_overlap into the boxes (clamp passes the gradient where rb - lt >= 0).
template <typename T>
struct MmdetOverlap {
  T dw, dh, w, h, overlap;

  explicit MmdetOverlap(const Corners<T> &c)
      : dw(c.rb0 - c.lt0), dh(c.rb1 - c.lt1), w(Clamp0(dw)), h(Clamp0(dh)), overlap(w * h) {}

  void Grad(const T *p, const T *t, const Corners<T> &c, T g_ov, Grads<T> *g) const {
    const T g_w = dw >= T(0) ? g_ov * h : T(0);
    const T g_h = dh >= T(0) ? g_ov * w : T(0);
    c.Inner(p, t, -g_w, -g_h, g_w, g_h, g);
  }
};

// CIoU's aspect term v = factor * (atan(w2 / h2) - atan(w1 / h1))^2 and its gradient to w1, h1
// (pred) and w2, h2 (target).
template <typename T>
struct Aspect {
  T r1, r2, d, v;

  // `at`: atan(r1), atan(r2) computed beforehand (Precomputed), or null.
  Aspect(T w1, T h1, T w2, T h2, T factor, const T *at = nullptr)
      : r1(w1 / h1),
        r2(w2 / h2),
        d(at ? at[1] - at[0] : std::atan(r2) - std::atan(r1)),
        v(factor * (d * d)) {}

  // g_v into (g_w1, g_h1, g_w2, g_h2).
  void Grad(T w1, T h1, T w2, T h2, T factor, T g_v, T out[4]) const {
    const T g_d = (g_v * factor) * (T(2) * d);
    const T g_r2 = g_d / (r2 * r2 + T(1));
    const T g_r1 = -g_d / (r1 * r1 + T(1));
    out[0] = g_r1 / h1;
    out[1] = -g_r1 * (r1 / h1);
    out[2] = g_r2 / h2;
    out[3] = -g_r2 * (r2 / h2);
  }
};

}  // namespace box
}  // namespace mscompat
