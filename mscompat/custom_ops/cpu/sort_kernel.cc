// Sorting and selection with PyTorch's CPU results, ties included: index kernels for
// MindSpore's ops.Custom(func_type="aot").
//
// PyTorch leaves the order of equal elements unspecified, but its CPU kernels are
// deterministic: they run libstdc++'s std::sort / std::stable_sort / std::partial_sort /
// std::nth_element (or a quickselect) on (value, position) pairs with NaN as the largest value.
// Running the same algorithms with the same comparisons on the same sequence gives the same
// permutation, so these kernels return the positions PyTorch returns (measured against torch
// 2.13 CPU in tests/test_sort_kernel.py).
//
// Calling convention: common.h. Every kernel takes x (float32/float64/int32/int64, any shape; the last dim
// is the one sorted or reduced) and p (int64 parameters) and writes int64 positions along the
// last dim:
//
//   SortIndices(x, p=[descending, stable])      -> (..., n)  argsort
//   TopkIndices(x, p=[k, largest, sorted])      -> (..., n)  the first k are torch.topk's
//   KthIndices(x, p=[k])                        -> (..., 1)  torch.kthvalue (1-based k)
//   MedianIndices(x, p=[0])                     -> (..., 1)  torch.median(dim)
//   ModeIndices(x, p=[0])                       -> (..., 1)  torch.mode
//
// and the gather of the values at those positions, with its gradient (MindSpore's CPU
// GatherD is several times slower than torch's gather; figures in the CHANGELOG):
//
//   TakeAlong(x, idx)        -> y   y[..., j] = x[..., idx[..., j]]; any 1/2/4/8-byte dtype
//   PlaceAlong(dy, idx, x)   -> dx  zeros of x's shape with dx[..., idx[..., j]] = dy[..., j]
//                                   (the gradient of TakeAlong for positions that are distinct
//                                   within a row, as every index kernel here returns)
//
// Rows are independent; large inputs are split over threads (parallel.h; MSCOMPAT_NUM_THREADS
// caps them).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::IsNan;

// NaN-aware orders: NaN is the largest value (PyTorch's and NumPy's convention).
template <typename T>
struct Less {
  bool operator()(const std::pair<T, int64_t> &a, const std::pair<T, int64_t> &b) const {
    return (!IsNan(a.first) && IsNan(b.first)) || (a.first < b.first);
  }
};

template <typename T>
struct Greater {
  bool operator()(const std::pair<T, int64_t> &a, const std::pair<T, int64_t> &b) const {
    return (IsNan(a.first) && !IsNan(b.first)) || (a.first > b.first);
  }
};

template <typename T>
inline bool GreaterOrNan(T a, T b) {
  return (IsNan(a) && !IsNan(b)) || (a > b);
}

template <typename T>
void Load(const T *row, int64_t n, std::vector<std::pair<T, int64_t>> *pairs) {
  pairs->resize(n);
  for (int64_t j = 0; j < n; ++j) (*pairs)[j] = {row[j], j};
}

// ---------------------------------------------------------------------------- one row each

template <typename T>
void SortRow(const T *row, int64_t n, bool descending, bool stable, int64_t *out,
             std::vector<std::pair<T, int64_t>> *buf) {
  Load(row, n, buf);
  if (descending) {
    if (stable) {
      std::stable_sort(buf->begin(), buf->end(), Greater<T>());
    } else {
      std::sort(buf->begin(), buf->end(), Greater<T>());
    }
  } else {
    if (stable) {
      std::stable_sort(buf->begin(), buf->end(), Less<T>());
    } else {
      std::sort(buf->begin(), buf->end(), Less<T>());
    }
  }
  for (int64_t j = 0; j < n; ++j) out[j] = (*buf)[j].second;
}

// PyTorch's topk: partial_sort when 64 k <= n, else nth_element (+ sort of the first k - 1).
template <typename T, typename Cmp>
void TopkOrder(std::vector<std::pair<T, int64_t>> *q, int64_t k, bool sorted, Cmp cmp) {
  if (k * 64 <= static_cast<int64_t>(q->size())) {
    std::partial_sort(q->begin(), q->begin() + k, q->end(), cmp);
  } else {
    std::nth_element(q->begin(), q->begin() + k - 1, q->end(), cmp);
    if (sorted) std::sort(q->begin(), q->begin() + k - 1, cmp);
  }
}

template <typename T>
void TopkRow(const T *row, int64_t n, int64_t k, bool largest, bool sorted, int64_t *out,
             std::vector<std::pair<T, int64_t>> *buf) {
  Load(row, n, buf);
  if (k > 0) {
    if (largest) {
      TopkOrder(buf, k, sorted, Greater<T>());
    } else {
      TopkOrder(buf, k, sorted, Less<T>());
    }
  }
  for (int64_t j = 0; j < n; ++j) out[j] = (*buf)[j].second;
}

// The k-th smallest (0-based k) by median-of-three quickselect (Sedgewick's partitioning), the
// selection PyTorch's kthvalue runs; values and positions are swapped together.
template <typename T>
int64_t QuickSelect(std::vector<std::pair<T, int64_t>> *buf, int64_t k) {
  auto &a = *buf;
  auto gt = [&](int64_t i, int64_t j) { return GreaterOrNan(a[i].first, a[j].first); };
  int64_t lo = 0, hi = static_cast<int64_t>(a.size()) - 1;
  while (true) {
    if (hi <= lo) break;
    if (hi == lo + 1) {
      if (gt(lo, hi)) std::swap(a[lo], a[hi]);
      break;
    }
    int64_t mid = (lo + hi) >> 1;
    std::swap(a[mid], a[lo + 1]);
    if (gt(lo + 1, hi)) std::swap(a[lo + 1], a[hi]);
    if (gt(lo, hi)) std::swap(a[lo], a[hi]);
    if (gt(lo + 1, lo)) std::swap(a[lo + 1], a[lo]);
    int64_t i = lo + 1, j = hi;
    const T pivot = a[lo].first;
    while (true) {
      do ++i;
      while (GreaterOrNan(pivot, a[i].first));
      do --j;
      while (GreaterOrNan(a[j].first, pivot));
      if (j < i) break;
      std::swap(a[i], a[j]);
    }
    std::swap(a[lo], a[j]);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
  return a[k].second;
}

template <typename T>
int64_t KthRow(const T *row, int64_t n, int64_t k, std::vector<std::pair<T, int64_t>> *buf) {
  Load(row, n, buf);
  return QuickSelect(buf, k - 1);
}

// torch.median(dim): the first NaN if any, else the (n - 1) / 2-th in (value, position) order.
template <typename T>
int64_t MedianRow(const T *row, int64_t n, std::vector<int64_t> *idx) {
  for (int64_t j = 0; j < n; ++j)
    if (IsNan(row[j])) return j;
  idx->resize(n);
  std::iota(idx->begin(), idx->end(), int64_t{0});
  auto nth = idx->begin() + (n - 1) / 2;
  std::nth_element(idx->begin(), nth, idx->end(), [row](int64_t i, int64_t j) {
    return row[i] < row[j] || (row[i] == row[j] && i < j);
  });
  return *nth;
}

// torch.mode: std::sort by value (plain <), then the first run of greatest length; the position
// is that of the run's last element.
template <typename T>
int64_t ModeRow(const T *row, int64_t n, std::vector<std::pair<T, int64_t>> *buf) {
  Load(row, n, buf);
  auto &e = *buf;
  std::sort(e.begin(), e.end(),
            [](const std::pair<T, int64_t> &a, const std::pair<T, int64_t> &b) {
              return a.first < b.first;
            });
  int64_t best = 0, best_count = 0, count = 0;
  for (int64_t i = 0; i < n; ++i) {
    ++count;
    if (i == n - 1 || e[i].first != e[i + 1].first) {
      if (count > best_count) {
        best = e[i].second;
        best_count = count;
      }
      count = 0;
    }
  }
  return best;
}

// ---------------------------------------------------------------------------- rows, threads

// body(row_begin, row_end) over [0, rows), split over threads when the work is large.
template <typename F>
void ForRows(int64_t rows, int64_t n, F body) {
  if (rows < 2) {
    body(0, rows);
    return;
  }
  mscompat::ParallelFor(rows, rows * n, 1 << 16, 1 << 15, body);
}

enum class Kind { kSort, kTopk, kKth, kMedian, kMode };

template <typename T>
void Run(Kind kind, const T *x, int64_t rows, int64_t n, const int64_t *p, int64_t *out) {
  ForRows(rows, n, [=](int64_t begin, int64_t end) {
    std::vector<std::pair<T, int64_t>> buf;
    std::vector<int64_t> idx;
    for (int64_t r = begin; r < end; ++r) {
      const T *row = x + r * n;
      switch (kind) {
        case Kind::kSort:
          SortRow(row, n, p[0] != 0, p[1] != 0, out + r * n, &buf);
          break;
        case Kind::kTopk:
          TopkRow(row, n, p[0], p[1] != 0, p[2] != 0, out + r * n, &buf);
          break;
        case Kind::kKth:
          out[r] = KthRow(row, n, p[0], &buf);
          break;
        case Kind::kMedian:
          out[r] = MedianRow(row, n, &idx);
          break;
        case Kind::kMode:
          out[r] = ModeRow(row, n, &buf);
          break;
      }
    }
  });
}

int Launch(Kind kind, int nparam, void **params, int *ndims, int64_t **shapes,
           const char **dtypes, int64_t n_params_needed) {
  if (nparam != 3) return kBadArity;
  if (std::strcmp(dtypes[1], "int64") != 0 || std::strcmp(dtypes[2], "int64") != 0)
    return kBadDtype;
  if (ndims[0] < 1 || ndims[1] != 1 || shapes[1][0] < n_params_needed) return kBadShape;
  const int64_t n = shapes[0][ndims[0] - 1];
  if (n <= 0) return kBadShape;
  const int64_t rows = mscompat::NumElements(ndims[0], shapes[0]) / n;
  const auto *p = static_cast<const int64_t *>(params[1]);
  if (kind == Kind::kTopk && (p[0] < 0 || p[0] > n)) return kBadShape;
  if (kind == Kind::kKth && (p[0] < 1 || p[0] > n)) return kBadShape;
  auto *out = static_cast<int64_t *>(params[2]);
  return mscompat::ByDtype<float, double, int32_t, int64_t>(dtypes[0], [&](auto v) {
    Run(kind, static_cast<const decltype(v) *>(params[0]), rows, n, p, out);
  });
}

}  // namespace

extern "C" int SortIndices(int nparam, void **params, int *ndims, int64_t **shapes,
                           const char **dtypes, void *, void *) {
  return Launch(Kind::kSort, nparam, params, ndims, shapes, dtypes, 2);
}

extern "C" int TopkIndices(int nparam, void **params, int *ndims, int64_t **shapes,
                           const char **dtypes, void *, void *) {
  return Launch(Kind::kTopk, nparam, params, ndims, shapes, dtypes, 3);
}

extern "C" int KthIndices(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *, void *) {
  return Launch(Kind::kKth, nparam, params, ndims, shapes, dtypes, 1);
}

extern "C" int MedianIndices(int nparam, void **params, int *ndims, int64_t **shapes,
                             const char **dtypes, void *, void *) {
  return Launch(Kind::kMedian, nparam, params, ndims, shapes, dtypes, 1);
}

extern "C" int ModeIndices(int nparam, void **params, int *ndims, int64_t **shapes,
                           const char **dtypes, void *, void *) {
  return Launch(Kind::kMode, nparam, params, ndims, shapes, dtypes, 1);
}

namespace {

// (rows, n) and (rows, k) from x's and idx's shapes: same leading dims, any last dims.
bool RowShape(int nd_x, const int64_t *x, int nd_i, const int64_t *idx, int64_t *rows,
              int64_t *n, int64_t *k) {
  if (nd_x < 1 || nd_x != nd_i) return false;
  *rows = 1;
  for (int d = 0; d + 1 < nd_x; ++d) {
    if (x[d] != idx[d]) return false;
    *rows *= x[d];
  }
  *n = x[nd_x - 1];
  *k = idx[nd_x - 1];
  return *n >= 0 && *k >= 0;
}

template <typename E>
void Take(const E *x, const int64_t *idx, int64_t rows, int64_t n, int64_t k, E *y) {
  ForRows(rows, k, [=](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const E *row = x + r * n;
      const int64_t *at = idx + r * k;
      E *out = y + r * k;
      for (int64_t j = 0; j < k; ++j) out[j] = row[at[j]];
    }
  });
}

template <typename E>
void Place(const E *dy, const int64_t *idx, int64_t rows, int64_t n, int64_t k, E *dx) {
  ForRows(rows, n, [=](int64_t begin, int64_t end) {
    std::memset(dx + begin * n, 0, static_cast<size_t>((end - begin) * n) * sizeof(E));
    for (int64_t r = begin; r < end; ++r) {
      E *row = dx + r * n;
      const int64_t *at = idx + r * k;
      const E *g = dy + r * k;
      for (int64_t j = 0; j < k; ++j) row[at[j]] = g[j];
    }
  });
}

// Whether every position is in [0, n).
bool InRange(const int64_t *idx, int64_t count, int64_t n) {
  for (int64_t i = 0; i < count; ++i)
    if (idx[i] < 0 || idx[i] >= n) return false;
  return true;
}

}  // namespace

extern "C" int TakeAlong(int nparam, void **params, int *ndims, int64_t **shapes,
                         const char **dtypes, void *, void *) {
  if (nparam != 3) return kBadArity;
  if (std::strcmp(dtypes[1], "int64") != 0 || std::strcmp(dtypes[2], dtypes[0]) != 0)
    return kBadDtype;
  int64_t rows, n, k;
  if (!RowShape(ndims[0], shapes[0], ndims[1], shapes[1], &rows, &n, &k)) return kBadShape;
  const auto *idx = static_cast<const int64_t *>(params[1]);
  if (!InRange(idx, rows * k, n)) return kBadShape;
  return mscompat::ByElementSize(dtypes[0], [&](auto e) {
    using E = decltype(e);
    Take(static_cast<const E *>(params[0]), idx, rows, n, k, static_cast<E *>(params[2]));
  });
}

extern "C" int PlaceAlong(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *, void *) {
  if (nparam != 4) return kBadArity;
  if (std::strcmp(dtypes[1], "int64") != 0 || std::strcmp(dtypes[2], dtypes[0]) != 0 ||
      std::strcmp(dtypes[3], dtypes[0]) != 0)
    return kBadDtype;
  int64_t rows, n, k;
  if (!RowShape(ndims[2], shapes[2], ndims[1], shapes[1], &rows, &n, &k)) return kBadShape;
  const auto *idx = static_cast<const int64_t *>(params[1]);
  if (!InRange(idx, rows * k, n)) return kBadShape;
  return mscompat::ByElementSize(dtypes[0], [&](auto e) {
    using E = decltype(e);
    Place(static_cast<const E *>(params[0]), idx, rows, n, k, static_cast<E *>(params[3]));
  });
}
