// Non-maximum suppression with torchvision's CPU result: index kernels for MindSpore's
// ops.Custom(func_type="aot").
//
// torchvision's CPU nms (torchvision/csrc/ops/cpu/nms_kernel.cpp) orders the boxes by descending
// score with a stable sort, NaN first (measured on torchvision 0.28: equal scores keep their
// positions' order; PyTorch's default sort(descending=True) would not). Then, in that order, each box not yet suppressed is
// kept and suppresses every later box whose IoU with it is > iou_threshold (the float IoU is
// compared with the double threshold). We run the same sort with the same comparison, so ties
// come out in torchvision's order, and compute each IoU with the same operations in the same
// order (std::max/std::min argument order matters for NaN).
//
// Whether a later box is suppressed depends only on the kept boxes before it, so the work can be
// reordered without changing the result: the boxes are gathered in score order (contiguous
// arrays), then processed in blocks of kBlock: the block's own boxes are decided sequentially,
// and its kept boxes then suppress the rest of the list in one branch-free pass that the
// compiler vectorises (AVX2 where the CPU has it), split over threads for large inputs. Suppressed
// boxes are not skipped in that pass (a bit OR'ed in), kept boxes are never revisited.
//
//   Nms(boxes (n, 4), scores (n), p=[threshold bits]) -> keep (n) int64, count (1) int64
//   BatchedNms(boxes, scores, idxs (n) int64, p) -> keep, count
//
// keep holds the kept positions in torchvision's order, then -1; count their number. p[0] is
// the float64 threshold's bit pattern. BatchedNms is torchvision's _batched_nms_vanilla (the
// path batched_nms takes on CPU for more than 1000 boxes): NMS within each class, then the kept
// positions in ascending order sorted by `scores[keep].sort(descending=True)`, PyTorch's
// unstable sort: libstdc++'s std::sort on (score, position) pairs. float32/float64.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "common.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::IsNan;

constexpr int64_t kBlock = 256;

// PyTorch's descending order (KeyValueCompDesc): NaN first.
template <typename T>
struct Greater {
  bool operator()(const std::pair<T, int64_t> &a, const std::pair<T, int64_t> &b) const {
    return (IsNan(a.first) && !IsNan(b.first)) || (a.first > b.first);
  }
};

// The positions `pos` (in that sequence) sorted by descending score: stable (nms's order) or
// PyTorch's unstable sort(descending=True).
template <typename T>
void SortByScore(const T *scores, bool stable, std::vector<int64_t> *pos) {
  std::vector<std::pair<T, int64_t>> pairs(pos->size());
  for (size_t k = 0; k < pos->size(); ++k) pairs[k] = {scores[(*pos)[k]], (*pos)[k]};
  if (stable) {
    std::stable_sort(pairs.begin(), pairs.end(), Greater<T>());
  } else {
    std::sort(pairs.begin(), pairs.end(), Greater<T>());
  }
  for (size_t k = 0; k < pos->size(); ++k) (*pos)[k] = pairs[k].second;
}

// The threshold in T for `ovr > threshold` with ovr of type T: for float, the largest float <=
// the double threshold gives the same answer for every float ovr (NaN stays NaN: nothing passes).
template <typename T>
T ThresholdIn(double t) {
  if constexpr (std::is_same<T, double>::value) {
    return t;
  } else {
    float f = static_cast<float>(t);
    if (static_cast<double>(f) > t) f = std::nextafter(f, -INFINITY);
    return f;
  }
}

// Boxes gathered in score order, with their areas computed as torchvision does.
template <typename T>
struct Sorted {
  std::vector<T> x1, y1, x2, y2, area;
  std::vector<uint8_t> removed;
  void Gather(const T *boxes, const std::vector<int64_t> &order) {
    const size_t n = order.size();
    x1.resize(n), y1.resize(n), x2.resize(n), y2.resize(n), area.resize(n);
    removed.assign(n, 0);
    for (size_t k = 0; k < n; ++k) {
      const T *b = boxes + 4 * order[k];
      x1[k] = b[0], y1[k] = b[1], x2[k] = b[2], y2[k] = b[3];
      area[k] = (b[2] - b[0]) * (b[3] - b[1]);
    }
  }
};

// removed[m] |= IoU(box k, box m) > thr for m in [lo, hi): torchvision's arithmetic with
// std::max(a, b) == (a < b ? b : a) and std::min(a, b) == (b < a ? b : a) written out, so the
// loop vectorises with the same NaN behaviour.
#define MSCOMPAT_SUPPRESS_BODY                                 \
  const T ix1 = s->x1[k], iy1 = s->y1[k], ix2 = s->x2[k];      \
  const T iy2 = s->y2[k], iarea = s->area[k];                  \
  const T *x1 = s->x1.data(), *y1 = s->y1.data();              \
  const T *x2 = s->x2.data(), *y2 = s->y2.data();              \
  const T *area = s->area.data();                              \
  uint8_t *removed = s->removed.data();                        \
  for (int64_t m = lo; m < hi; ++m) {                          \
    const T xx1 = ix1 < x1[m] ? x1[m] : ix1;                   \
    const T yy1 = iy1 < y1[m] ? y1[m] : iy1;                   \
    const T xx2 = x2[m] < ix2 ? x2[m] : ix2;                   \
    const T yy2 = y2[m] < iy2 ? y2[m] : iy2;                   \
    const T dw = xx2 - xx1, dh = yy2 - yy1;                    \
    const T w = T(0) < dw ? dw : T(0);                         \
    const T h = T(0) < dh ? dh : T(0);                         \
    const T inter = w * h;                                     \
    const T ovr = inter / (iarea + area[m] - inter);           \
    removed[m] |= static_cast<uint8_t>(ovr > thr);             \
  }

template <typename T>
__attribute__((target_clones("avx2", "default"))) void Suppress(Sorted<T> *s, int64_t k,
                                                                 int64_t lo, int64_t hi, T thr) {
  MSCOMPAT_SUPPRESS_BODY
}

#undef MSCOMPAT_SUPPRESS_BODY

// torchvision's sweep over the sorted boxes; the kept positions (into the order) in `kept`.
// `threads`: whether the passes over the rest of the list may use the helper threads.
template <typename T>
void Sweep(Sorted<T> *s, T thr, bool threads, std::vector<int64_t> *kept) {
  const int64_t n = static_cast<int64_t>(s->x1.size());
  std::vector<int64_t> block_kept;
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t b1 = std::min(n, b0 + kBlock);
    block_kept.clear();
    for (int64_t k = b0; k < b1; ++k) {
      if (s->removed[k]) continue;
      block_kept.push_back(k);
      Suppress(s, k, k + 1, b1, thr);
    }
    kept->insert(kept->end(), block_kept.begin(), block_kept.end());
    const int64_t rest = n - b1;
    if (rest <= 0 || block_kept.empty()) continue;
    const auto pass = [&](int64_t begin, int64_t end) {
      for (int64_t k : block_kept) Suppress(s, k, b1 + begin, b1 + end, thr);
    };
    const int64_t work = rest * static_cast<int64_t>(block_kept.size());
    if (threads) {
      mscompat::ParallelFor(rest, work, 1 << 18, 1 << 16, pass);
    } else {
      pass(0, rest);
    }
  }
}

template <typename T>
int64_t RunNms(const T *boxes, const T *scores, int64_t n, double threshold, int64_t *keep) {
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  SortByScore(scores, true, &order);
  Sorted<T> s;
  s.Gather(boxes, order);
  std::vector<int64_t> kept;
  Sweep(&s, ThresholdIn<T>(threshold), true, &kept);
  for (size_t k = 0; k < kept.size(); ++k) keep[k] = order[kept[k]];
  return static_cast<int64_t>(kept.size());
}

template <typename T>
int64_t RunBatched(const T *boxes, const T *scores, const int64_t *idxs, int64_t n,
                   double threshold, int64_t *keep) {
  // Each class's positions in ascending order (a stable sort by class).
  std::vector<int64_t> by_class(n);
  for (int64_t i = 0; i < n; ++i) by_class[i] = i;
  std::stable_sort(by_class.begin(), by_class.end(),
                   [idxs](int64_t a, int64_t b) { return idxs[a] < idxs[b]; });
  std::vector<std::pair<int64_t, int64_t>> groups;  // [begin, end) in by_class
  int64_t work = 0;
  for (int64_t g = 0; g < n;) {
    int64_t e = g + 1;
    while (e < n && idxs[by_class[e]] == idxs[by_class[g]]) ++e;
    groups.emplace_back(g, e);
    work += (e - g) * (e - g);
    g = e;
  }
  std::vector<uint8_t> mask(n, 0);
  const T thr = ThresholdIn<T>(threshold);
  const int64_t n_groups = static_cast<int64_t>(groups.size());
  mscompat::ParallelFor(n_groups, work, 1 << 18, 1 << 16, [&](int64_t begin, int64_t end) {
    Sorted<T> s;
    std::vector<int64_t> order, kept;
    for (int64_t g = begin; g < end; ++g) {
      order.assign(by_class.begin() + groups[g].first, by_class.begin() + groups[g].second);
      SortByScore(scores, true, &order);
      s.Gather(boxes, order);
      kept.clear();
      Sweep(&s, thr, false, &kept);
      for (int64_t k : kept) mask[order[k]] = 1;  // distinct positions: no race
    }
  });
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i)
    if (mask[i]) kept.push_back(i);
  SortByScore(scores, false, &kept);
  std::copy(kept.begin(), kept.end(), keep);
  return static_cast<int64_t>(kept.size());
}

// Checks shared by both entry points: boxes (n, 4), scores (n) of one float dtype, p (1) int64,
// keep (n) and count (1) int64.
int Check(int *ndims, int64_t **shapes, const char **dtypes, int p_at) {
  if (ndims[0] != 2 || shapes[0][1] != 4) return kBadShape;
  const int64_t n = shapes[0][0];
  if (!mscompat::HasShape(ndims[1], shapes[1], {n})) return kBadShape;
  if (std::strcmp(dtypes[0], dtypes[1]) != 0) return kBadDtype;
  if (!mscompat::AllDtype(dtypes, {p_at, p_at + 1, p_at + 2}, "int64")) return kBadDtype;
  if (!mscompat::HasShape(ndims[p_at], shapes[p_at], {1})) return kBadShape;
  if (!mscompat::HasShape(ndims[p_at + 1], shapes[p_at + 1], {n})) return kBadShape;
  if (!mscompat::HasShape(ndims[p_at + 2], shapes[p_at + 2], {1})) return kBadShape;
  return kOk;
}

double Threshold(void *p) {
  double t;
  std::memcpy(&t, p, sizeof t);
  return t;
}

}  // namespace

extern "C" int Nms(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                   void *, void *) {
  if (nparam != 5) return kBadArity;
  if (int rc = Check(ndims, shapes, dtypes, 2)) return rc;
  const int64_t n = shapes[0][0];
  auto *keep = static_cast<int64_t *>(params[3]);
  auto *count = static_cast<int64_t *>(params[4]);
  std::fill(keep, keep + n, int64_t{-1});
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    *count = RunNms(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]), n,
                    Threshold(params[2]), keep);
  });
}

extern "C" int BatchedNms(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  if (int rc = Check(ndims, shapes, dtypes, 3)) return rc;
  const int64_t n = shapes[0][0];
  if (std::strcmp(dtypes[2], "int64") != 0) return kBadDtype;
  if (!mscompat::HasShape(ndims[2], shapes[2], {n})) return kBadShape;
  auto *keep = static_cast<int64_t *>(params[4]);
  auto *count = static_cast<int64_t *>(params[5]);
  std::fill(keep, keep + n, int64_t{-1});
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    *count = RunBatched(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
                        static_cast<const int64_t *>(params[2]), n, Threshold(params[3]), keep);
  });
}
