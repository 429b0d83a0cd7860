// IoU-family box losses of matched box pairs, fused: MMDetection's iou_loss (linear, square,
// log), giou_loss, diou_loss, ciou_loss and torchvision's generalized_box_iou_loss,
// distance_box_iou_loss, complete_box_iou_loss (elementwise part), forward and backward, for
// MindSpore's ops.Custom(func_type="aot").
//
// Calling convention and status codes: common.h.
//
//   BoxLossForward(pred, target, coef) -> loss               coef = [kind, eps, eps2]
//   BoxLossBackward(pred, target, coef, dloss) -> (dpred, dtarget)
//   BoxLossReduce(pred, target, weight, rcoef) -> out (0-d)
//   BoxLossReduceBackward(pred, target, weight, rcoef, dout) -> (dpred, dtarget, dweight)
//
// rcoef = [kind, eps, eps2, wmode + 4 * zero_check, divisor, multiplier]: the weighted mean or
// sum of the losses (loss_reduce.h); weight (n,) (wmode 1), (n, 4) (wmode 2) or, with wmode 0,
// any one element (ignored, its gradient 0).
//
// pred/target (..., 4) boxes (x1, y1, x2, y2), loss (...); float32 or float64; `kind` picks the
// loss (Kind below), `eps` is the loss's eps, `eps2` the second one where the reference has
// two (MMDetection's iou_loss: bbox_overlaps' 1e-6; torchvision's ciou: its DIoU's 1e-7).
//
// Each loss follows its reference's PyTorch code op for op, in the input's dtype (no fused
// multiply-adds: setup.py builds with -ffp-contract=off), and the backward is PyTorch's
// autograd of that code: torch.max/min split the gradient of a tie in halves, clamp(min=0)
// passes it at 0, torchvision's masked intersection passes none outside the mask, CIoU's alpha
// is a constant (torch.no_grad()), NaN propagates as in PyTorch. One pass over the boxes, split
// over threads for large inputs (parallel.h).

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>

#include <vector>

#include "box_geometry.h"
#include "common.h"
#include "loss_math.h"
#include "loss_reduce.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::NumElements;
using namespace mscompat::box;

enum Kind {
  kIouLinear = 0,
  kIouSquare = 1,
  kIouLog = 2,
  kMmdetGiou = 3,
  kMmdetDiou = 4,
  kMmdetCiou = 5,
  kTvGiou = 10,
  kTvDiou = 11,
  kTvCiou = 12,
  kIouClamped = 20,  // internal: iou_loss's clamped IoU (for the vector log pass)
};

constexpr double kFourOverPiSquared = 0.40528473456935108578;  // 4 / pi^2

// MMDetection's iou_loss and giou_loss (bbox_overlaps, aligned, mode 'iou' or 'giou').
template <typename T>
T MmdetOverlaps(int kind, const T *p, const T *t, T eps, T eps2, T dl, Grads<T> *g) {
  const Corners<T> c(p, t);
  const MmdetOverlap<T> o(c);
  const T area1 = (p[2] - p[0]) * (p[3] - p[1]);
  const T area2 = (t[2] - t[0]) * (t[3] - t[1]);
  const T u0 = area1 + area2 - o.overlap;
  const bool giou = kind == kMmdetGiou;
  const T u_eps = giou ? eps : eps2;  // iou_loss calls bbox_overlaps with its default 1e-6
  const T union_ = Max(u0, u_eps);
  const T ious = o.overlap / union_;
  T loss, g_ious = T(0), g_union = T(0);
  T ew = T(0), eh = T(0), e0 = T(0), enc = T(0), r = T(0);
  if (giou) {
    ew = Clamp0(c.er0 - c.el0);
    eh = Clamp0(c.er1 - c.el1);
    e0 = ew * eh;
    enc = Max(e0, eps);
    r = (enc - union_) / enc;
    loss = T(1) - (ious - r);
    if (g == nullptr) return loss;
    g_ious = -dl;
    const T g_r = dl;
    const T g_num = g_r / enc;
    const T g_enc = g_num - g_r * (r / enc);
    g_union = -g_num;
    T w_e0, w_eps;
    MaxWeights(e0, eps, &w_e0, &w_eps);
    const T g_e0 = g_enc * w_e0;
    const T g_ew = (c.er0 - c.el0) >= T(0) ? g_e0 * eh : T(0);
    const T g_eh = (c.er1 - c.el1) >= T(0) ? g_e0 * ew : T(0);
    c.Outer(p, t, -g_ew, -g_eh, g_ew, g_eh, g);
  } else {
    const T ci = ious < eps ? eps : ious;  // clamp(min=eps), NaN kept
    if (kind == kIouClamped) return ci;
    if (kind == kIouLinear) {
      loss = T(1) - ci;
    } else if (kind == kIouSquare) {
      loss = T(1) - ci * ci;
    } else {
      loss = -std::log(ci);
    }
    if (g == nullptr) return loss;
    T g_ci;
    if (kind == kIouLinear) {
      g_ci = -dl;
    } else if (kind == kIouSquare) {
      g_ci = -dl * (T(2) * ci);
    } else {
      g_ci = -dl / ci;
    }
    g_ious = ious >= eps ? g_ci : T(0);
  }
  const T g_ov = g_ious / union_;
  g_union -= g_ious * (ious / union_);
  T w_u0, w_eps;
  MaxWeights(u0, u_eps, &w_u0, &w_eps);
  const T g_u0 = g_union * w_u0;
  AreaGrad(p, g_u0, g->p);
  AreaGrad(t, g_u0, g->t);
  o.Grad(p, t, c, g_ov - g_u0, g);
  return loss;
}

// MMDetection's diou_loss and ciou_loss.
template <typename T>
T MmdetDistance(int kind, const T *p, const T *t, T eps, T dl, Grads<T> *g, const T *at) {
  const Corners<T> c(p, t);
  const MmdetOverlap<T> o(c);
  const T ap = (p[2] - p[0]) * (p[3] - p[1]);
  const T ag = (t[2] - t[0]) * (t[3] - t[1]);
  const T union_ = ap + ag - o.overlap + eps;
  const T ious = o.overlap / union_;
  const T dcw = c.er0 - c.el0, dch = c.er1 - c.el1;
  const T cw = Clamp0(dcw), ch = Clamp0(dch);
  const T c2 = cw * cw + ch * ch + eps;
  const T sx = (t[0] + t[2]) - (p[0] + p[2]);
  const T sy = (t[1] + t[3]) - (p[1] + p[3]);
  const T rho2 = sx * sx / T(4) + sy * sy / T(4);
  const T q = rho2 / c2;
  const bool ciou = kind == kMmdetCiou;
  const T factor = static_cast<T>(kFourOverPiSquared);
  const T w1 = p[2] - p[0], h1 = p[3] - p[1] + eps;
  const T w2 = t[2] - t[0], h2 = t[3] - t[1] + eps;
  T loss, cious = T(0), alpha = T(0);
  Aspect<T> a(T(1), T(1), T(1), T(1), factor);
  if (ciou) {
    a = Aspect<T>(w1, h1, w2, h2, factor, at);
    const T mask = ious > T(0.5) ? T(1) : T(0);
    alpha = mask * a.v / (T(1) - ious + a.v);
    cious = ious - (q + alpha * a.v);
    // clamp(-1, 1), NaN kept
    const T clamped = cious < T(-1) ? T(-1) : (cious > T(1) ? T(1) : cious);
    loss = T(1) - clamped;
  } else {
    loss = T(1) - (ious - q);
  }
  if (g == nullptr) return loss;
  T g_ious, g_q;
  if (ciou) {
    const T g_c = (cious >= T(-1) && cious <= T(1)) ? -dl : T(0);
    g_ious = g_c;
    g_q = -g_c;
    T gw[4];
    a.Grad(w1, h1, w2, h2, factor, g_q * alpha, gw);
    g->Sizes(gw);
  } else {
    g_ious = -dl;
    g_q = dl;
  }
  // q = rho2 / c2, rho2 = sx^2 / 4 + sy^2 / 4
  const T g_rho2 = g_q / c2;
  const T g_c2 = -g_q * (q / c2);
  const T g_sx = (g_rho2 / T(4)) * (T(2) * sx);
  const T g_sy = (g_rho2 / T(4)) * (T(2) * sy);
  g->Centres(-g_sx, -g_sy);  // sx = (t1 + t2) - (p1 + p2)
  const T g_cw = dcw >= T(0) ? g_c2 * (T(2) * cw) : T(0);
  const T g_ch = dch >= T(0) ? g_c2 * (T(2) * ch) : T(0);
  c.Outer(p, t, -g_cw, -g_ch, g_cw, g_ch, g);
  // ious = overlap / union, union = ap + ag - overlap + eps
  const T g_union = -g_ious * (ious / union_);
  AreaGrad(p, g_union, g->p);
  AreaGrad(t, g_union, g->t);
  o.Grad(p, t, c, g_ious / union_ - g_union, g);
  return loss;
}

// torchvision's generalized_box_iou_loss, distance_box_iou_loss and complete_box_iou_loss.
template <typename T>
T Torchvision(int kind, const T *p, const T *t, T eps, T eps2, T dl, Grads<T> *g, const T *at) {
  const Corners<T> c(p, t);
  const bool inside = (c.rb1 > c.lt1) && (c.rb0 > c.lt0);
  const T iw = c.rb0 - c.lt0, ih = c.rb1 - c.lt1;
  const T inter = inside ? iw * ih : T(0);
  const T union_ = (p[2] - p[0]) * (p[3] - p[1]) + (t[2] - t[0]) * (t[3] - t[1]) - inter;
  // torchvision's ciou: the DIoU part with its default eps, eps only in alpha
  const T e_iou = kind == kTvCiou ? eps2 : eps;
  const T iou = inter / (union_ + e_iou);
  const T cw = c.er0 - c.el0, ch = c.er1 - c.el1;
  T loss, g_iou, g_union = T(0);
  T g_el0 = T(0), g_el1 = T(0), g_er0 = T(0), g_er1 = T(0);
  if (kind == kTvGiou) {
    const T area_c = cw * ch;
    const T den = area_c + eps;
    const T r = (area_c - union_) / den;
    loss = T(1) - (iou - r);
    if (g == nullptr) return loss;
    g_iou = -dl;
    const T g_num = dl / den;
    const T g_area = g_num - dl * (r / den);
    g_union = -g_num;
    g_er0 = g_area * ch;
    g_el0 = -g_er0;
    g_er1 = g_area * cw;
    g_el1 = -g_er1;
  } else {
    const T diag = cw * cw + ch * ch + e_iou;
    const T ex = (p[2] + p[0]) / T(2) - (t[0] + t[2]) / T(2);
    const T ey = (p[3] + p[1]) / T(2) - (t[1] + t[3]) / T(2);
    const T cd = ex * ex + ey * ey;
    const T q = cd / diag;
    loss = T(1) - iou + q;
    const T w1 = p[2] - p[0], h1 = p[3] - p[1];
    const T w2 = t[2] - t[0], h2 = t[3] - t[1];
    const T factor = static_cast<T>(kFourOverPiSquared);
    Aspect<T> a(T(1), T(1), T(1), T(1), factor);
    T alpha = T(0);
    if (kind == kTvCiou) {
      a = Aspect<T>(w1, h1, w2, h2, factor, at);
      alpha = a.v / (T(1) - iou + a.v + eps);
      loss = loss + alpha * a.v;
    }
    if (g == nullptr) return loss;
    g_iou = -dl;
    const T g_cd = dl / diag;
    const T g_diag = -dl * (q / diag);
    const T g_ex = g_cd * (T(2) * ex) / T(2);
    const T g_ey = g_cd * (T(2) * ey) / T(2);
    g->Centres(g_ex, g_ey);
    g_er0 = g_diag * (T(2) * cw);
    g_el0 = -g_er0;
    g_er1 = g_diag * (T(2) * ch);
    g_el1 = -g_er1;
    if (kind == kTvCiou) {
      T gw[4];
      a.Grad(w1, h1, w2, h2, factor, dl * alpha, gw);
      g->Sizes(gw);
    }
  }
  c.Outer(p, t, g_el0, g_el1, g_er0, g_er1, g);
  // iou = inter / (union + eps), union = areas - inter
  const T den = union_ + e_iou;
  g_union -= g_iou * (iou / den);
  AreaGrad(p, g_union, g->p);
  AreaGrad(t, g_union, g->t);
  const T g_inter = g_iou / den - g_union;
  if (inside) {
    const T g_iw = g_inter * ih, g_ih = g_inter * iw;
    c.Inner(p, t, -g_iw, -g_ih, g_iw, g_ih, g);
  }
  return loss;
}


template <typename T>
T BoxLoss(int kind, const T *p, const T *t, T eps, T eps2, T dl, Grads<T> *g,
          const T *at = nullptr) {
  if (kind == kIouLog && at != nullptr && g == nullptr) return -at[0];  // Precomputed's log
  if (kind >= kTvGiou) return Torchvision(kind, p, t, eps, eps2, dl, g, at);
  if (kind >= kMmdetDiou) return MmdetDistance(kind, p, t, eps, dl, g, at);
  return MmdetOverlaps(kind, p, t, eps, eps2, dl, g);
}

// The forward's costliest step as one vector pass over all pairs: CIoU's arctangents of the
// aspect ratios w / h of pred and target (two per pair, as Aspect's callers compute the ratios),
// iou_loss's log of the clamped IoU (one per pair); empty for the other kinds. `*stride`: values
// per pair.
template <typename T>
std::vector<T> Precomputed(int kind, const T *p, const T *t, T eps, T eps2, int64_t n,
                           int *stride) {
  std::vector<T> at;
  *stride = kind == kIouLog ? 1 : 2;
  if (kind == kIouLog) {
    at.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i)
      at[i] = MmdetOverlaps<T>(kIouClamped, p + 4 * i, t + 4 * i, eps, eps2, T(0), nullptr);
    mscompat::LogInPlace(at.data(), n);
    return at;
  }
  if (kind != kMmdetCiou && kind != kTvCiou) return at;
  at.resize(static_cast<size_t>(2 * n));
  for (int64_t i = 0; i < n; ++i) {
    const T *a = p + 4 * i, *b = t + 4 * i;
    // MMDetection's heights + eps, torchvision's plain ones
    if (kind == kMmdetCiou) {
      at[2 * i] = (a[2] - a[0]) / (a[3] - a[1] + eps);
      at[2 * i + 1] = (b[2] - b[0]) / (b[3] - b[1] + eps);
    } else {
      at[2 * i] = (a[2] - a[0]) / (a[3] - a[1]);
      at[2 * i + 1] = (b[2] - b[0]) / (b[3] - b[1]);
    }
  }
  mscompat::AtanInPlace(at.data(), 2 * n);
  return at;
}

// Box pairs: one thread below 2^14 pairs (the forward), one per 2^13 above; the backward, about
// four times the work per pair (measured), from 2^12 pairs, one thread per 2^11.
template <typename F>
void ParallelFor(int64_t n, int64_t per_pair, F body) {
  mscompat::ParallelFor(n, n * per_pair, 1 << 14, 1 << 13, body);
}

bool KnownKind(int kind) {
  return (kind >= kIouLinear && kind <= kMmdetCiou) || (kind >= kTvGiou && kind <= kTvCiou);
}

// The checks both entry points share: boxes (..., 4) of one shape and dtype, the loss (...),
// coef 3 elements. The number of pairs, or -1 with `rc` set.
int64_t Pairs(int *ndims, int64_t **shapes, const char **dtypes, int loss_at,
              std::initializer_list<int> boxes, int *rc) {
  *rc = mscompat::CheckElementwise(ndims, shapes, dtypes, boxes, 2, 3);
  if (*rc != kOk) return -1;
  const int nd = ndims[0];
  if (nd < 1 || shapes[0][nd - 1] != 4 || ndims[loss_at] != nd - 1 ||
      !mscompat::SameLead(shapes[0], shapes[loss_at], nd - 1) ||
      std::strcmp(dtypes[loss_at], dtypes[0]) != 0) {
    *rc = kBadShape;
    return -1;
  }
  return NumElements(nd - 1, shapes[0]);
}

// Both entry points: params pred, target, coef, then the loss (forward) or dloss, dpred,
// dtarget (backward).
int Launch(bool backward, int nparam, void **params, int *ndims, int64_t **shapes,
           const char **dtypes) {
  if (nparam != (backward ? 6 : 4)) return kBadArity;
  int rc;
  const int64_t n = backward ? Pairs(ndims, shapes, dtypes, 3, {0, 1, 4, 5}, &rc)
                             : Pairs(ndims, shapes, dtypes, 3, {0, 1}, &rc);
  if (n < 0) return rc;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) -> int {
    using T = decltype(v);
    const T *c = static_cast<const T *>(params[2]);
    const int kind = static_cast<int>(c[0]);
    if (!KnownKind(kind)) return kBadOption;
    const T eps = c[1], eps2 = c[2];
    const T *p = static_cast<const T *>(params[0]);
    const T *t = static_cast<const T *>(params[1]);
    T *out = static_cast<T *>(params[3]);  // the loss, or dloss (read only)
    if (!backward) {
      int stride;
      const std::vector<T> pre = Precomputed(kind, p, t, eps, eps2, n, &stride);
      const T *at = pre.empty() ? nullptr : pre.data();
      ParallelFor(n, 1, [=](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          out[i] = BoxLoss<T>(kind, p + 4 * i, t + 4 * i, eps, eps2, T(0), nullptr,
                              at ? at + stride * i : nullptr);
      });
      return kOk;
    }
    T *dp = static_cast<T *>(params[4]);
    T *dt = static_cast<T *>(params[5]);
    ParallelFor(n, 4, [=](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        Grads<T> g;
        BoxLoss<T>(kind, p + 4 * i, t + 4 * i, eps, eps2, out[i], &g);
        for (int k = 0; k < 4; ++k) {
          dp[4 * i + k] = g.p[k];
          dt[4 * i + k] = g.t[k];
        }
      }
    });
    return kOk;
  });
}

// The reducing entry points: params pred, target, weight, rcoef, then out (forward) or dout,
// dpred, dtarget, dweight (backward).
int LaunchReduce(bool backward, int nparam, void **params, int *ndims, int64_t **shapes,
                 const char **dtypes) {
  if (nparam != (backward ? 8 : 5)) return kBadArity;
  int rc = backward ? mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1, 5, 6}, 3, 6)
                    : mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1}, 3, 6);
  if (rc != kOk) return rc;
  const int nd = ndims[0];
  constexpr int out_at = 4;  // the output (forward) or dout (backward)
  if (nd < 1 || shapes[0][nd - 1] != 4 || NumElements(ndims[out_at], shapes[out_at]) != 1 ||
      !mscompat::AllDtype(dtypes, {2, out_at}, dtypes[0]) ||
      (backward && (!mscompat::AllDtype(dtypes, {7}, dtypes[0]) ||
                    !mscompat::SameShape(ndims[2], shapes[2], ndims[7], shapes[7]))))
    return kBadShape;
  const int64_t n = NumElements(nd - 1, shapes[0]);
  const int64_t nw = NumElements(ndims[2], shapes[2]);
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) -> int {
    using T = decltype(v);
    const T *c = static_cast<const T *>(params[3]);
    const int kind = static_cast<int>(c[0]);
    if (!KnownKind(kind)) return kBadOption;
    const mscompat::ReducePlan plan(c + 3);
    if (plan.wmode == 3 || (plan.wmode == 0 ? nw < 1 : nw != plan.WeightCount(n, 4)))
      return kBadShape;
    const T eps = c[1], eps2 = c[2];
    const T *p = static_cast<const T *>(params[0]);
    const T *t = static_cast<const T *>(params[1]);
    const T *w = static_cast<const T *>(params[2]);
    if (!backward) {
      int stride;
      const std::vector<T> pre = Precomputed(kind, p, t, eps, eps2, n, &stride);
      const T *at = pre.empty() ? nullptr : pre.data();
      *static_cast<T *>(params[4]) =
          mscompat::ReduceForward<T>(plan, n, 4, p, w, 1, 1 << 14, 1 << 13, [=](int64_t i) {
            return BoxLoss<T>(kind, p + 4 * i, t + 4 * i, eps, eps2, T(0), nullptr,
                              at ? at + stride * i : nullptr);
          });
      return kOk;
    }
    T *dp = static_cast<T *>(params[5]);
    T *dt = static_cast<T *>(params[6]);
    const T dout = *static_cast<const T *>(params[4]);
    mscompat::ReduceBackward<T>(plan, n, 4, p, w, dout, dp, dt, static_cast<T *>(params[7]), 4,
                                1 << 14, 1 << 13, [=](int64_t i, T dl) {
                                  Grads<T> g;
                                  const T l = BoxLoss<T>(kind, p + 4 * i, t + 4 * i, eps, eps2, dl, &g);
                                  for (int k = 0; k < 4; ++k) {
                                    dp[4 * i + k] = g.p[k];
                                    dt[4 * i + k] = g.t[k];
                                  }
                                  return l;
                                });
    return kOk;
  });
}

}  // namespace

extern "C" int BoxLossForward(int nparam, void **params, int *ndims, int64_t **shapes,
                              const char **dtypes, void *, void *) {
  return Launch(false, nparam, params, ndims, shapes, dtypes);
}

extern "C" int BoxLossBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                               const char **dtypes, void *, void *) {
  return Launch(true, nparam, params, ndims, shapes, dtypes);
}

extern "C" int BoxLossReduce(int nparam, void **params, int *ndims, int64_t **shapes,
                             const char **dtypes, void *, void *) {
  return LaunchReduce(false, nparam, params, ndims, shapes, dtypes);
}

extern "C" int BoxLossReduceBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                     const char **dtypes, void *, void *) {
  return LaunchReduce(true, nparam, params, ndims, shapes, dtypes);
}
