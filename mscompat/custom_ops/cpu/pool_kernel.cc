// Max pooling's pick (max_pool1d/2d/3d and adaptive_max_pool1d/2d/3d): the flat index of the
// element PyTorch's CPU kernels select in every window, for MindSpore's
// ops.Custom(func_type="aot").
//
// PyTorch's CPU loop starts from the window's first position with -inf (the lowest value for
// integers) and scans the window in row-major order, taking an element when
// `val > max || isnan(val)`: the first maximum, or the last NaN. The same scan here gives
// the same index; values are then gathered in MindSpore (whose gather backward is PyTorch's
// max pooling backward: the gradient scatter-added to the picked elements).
//
//   WindowMaxIndex(x, t0, t1, t2) -> idx
//     x:  (B, n0, n1, n2) float32/float64/int32/int64 planes (1-D/2-D pooling: n0 = n1 = 1)
//     ti: (Oi, Ki) int64 window tables: input positions along dim i of window o (repeats of a
//         valid position stand for positions outside the input)
//     idx: (B, O0 * O1 * O2) int64, flat index (p0 * n1 + p1) * n2 + p2 into each plane.
//
// Calling convention (MindSpore aot): int Fn(int nparam, void **params, int *ndims,
// int64_t **shapes, const char **dtypes, void *stream, void *extra); params holds the inputs,
// then the outputs. Large inputs are split over threads (MSCOMPAT_NUM_THREADS caps them).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <thread>
#include <type_traits>
#include <vector>

namespace {

constexpr int kOk = 0;
constexpr int kBadArity = 1;
constexpr int kBadDtype = 2;
constexpr int kBadShape = 3;

template <typename T>
inline bool IsNan(T v) {
  if constexpr (std::is_floating_point<T>::value) {
    return std::isnan(v);
  } else {
    return false;
  }
}

template <typename T>
constexpr T Lowest() {
  if constexpr (std::is_floating_point<T>::value) {
    return -std::numeric_limits<T>::infinity();
  } else {
    return std::numeric_limits<T>::lowest();
  }
}

struct Table {
  const int64_t *pos;
  int64_t out, k;
};

int NumThreads(int64_t work) {
  if (work < (1 << 16)) return 1;
  int hw = static_cast<int>(std::thread::hardware_concurrency());
  if (hw <= 0) hw = 1;
  if (const char *env = std::getenv("MSCOMPAT_NUM_THREADS")) {
    int cap = std::atoi(env);
    if (cap > 0) hw = std::min(hw, cap);
  }
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(hw, work / (1 << 15))));
}

template <typename F>
void ParallelFor(int64_t n, int64_t work, F body) {
  int threads = std::min<int64_t>(NumThreads(work), n);
  if (threads <= 1) {
    body(0, n);
    return;
  }
  std::vector<std::thread> pool;
  int64_t chunk = (n + threads - 1) / threads;
  for (int i = 1; i < threads; ++i) {
    int64_t begin = std::min(n, i * chunk), end = std::min(n, begin + chunk);
    pool.emplace_back([=] { body(begin, end); });
  }
  body(0, std::min(n, chunk));
  for (auto &th : pool) th.join();
}

template <typename T>
void Run(const T *x, int64_t planes, const int64_t *n, const Table *t, int64_t *out) {
  const int64_t plane = n[0] * n[1] * n[2];
  const int64_t rows = planes * t[0].out * t[1].out;  // one row: the O2 windows of (b, o0, o1)
  const int64_t taps = t[0].k * t[1].k * t[2].k;
  const int64_t o2n = t[2].out, k2 = t[2].k;
  ParallelFor(rows, rows * o2n * taps, [=](int64_t begin, int64_t end) {
    std::vector<T> max(o2n);
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / (t[0].out * t[1].out);
      const int64_t o01 = row % (t[0].out * t[1].out);
      const int64_t o0 = o01 / t[1].out, o1 = o01 % t[1].out;
      const T *src = x + b * plane;
      const int64_t *p0 = t[0].pos + o0 * t[0].k;
      const int64_t *p1 = t[1].pos + o1 * t[1].k;
      const int64_t *p2 = t[2].pos;
      int64_t *best = out + row * o2n;
      // The windows of a row are independent: scanning tap by tap across all of them keeps
      // the CPU busy (no loop-carried dependency), in each window's own tap order.
      const int64_t first = (p0[0] * n[1] + p1[0]) * n[2];
      for (int64_t o2 = 0; o2 < o2n; ++o2) {
        max[o2] = Lowest<T>();
        best[o2] = first + p2[o2 * k2];
      }
      for (int64_t a = 0; a < t[0].k; ++a) {
        for (int64_t c = 0; c < t[1].k; ++c) {
          const int64_t line = (p0[a] * n[1] + p1[c]) * n[2];
          for (int64_t e = 0; e < k2; ++e) {
            for (int64_t o2 = 0; o2 < o2n; ++o2) {
              const int64_t idx = line + p2[o2 * k2 + e];
              const T val = src[idx];
              const bool take = (val > max[o2]) | IsNan(val);  // branch-free
              max[o2] = take ? val : max[o2];
              best[o2] = take ? idx : best[o2];
            }
          }
        }
      }
    }
  });
}

}  // namespace

extern "C" int WindowMaxIndex(int nparam, void **params, int *ndims, int64_t **shapes,
                              const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  for (int i = 1; i < 5; ++i)
    if (std::strcmp(dtypes[i], "int64") != 0) return kBadDtype;
  if (ndims[0] != 4 || ndims[4] != 2) return kBadShape;
  Table t[3];
  for (int i = 0; i < 3; ++i) {
    if (ndims[i + 1] != 2 || shapes[i + 1][0] < 1 || shapes[i + 1][1] < 1) return kBadShape;
    t[i] = {static_cast<const int64_t *>(params[i + 1]), shapes[i + 1][0], shapes[i + 1][1]};
  }
  const int64_t planes = shapes[0][0];
  const int64_t n[3] = {shapes[0][1], shapes[0][2], shapes[0][3]};
  if (shapes[4][0] != planes || shapes[4][1] != t[0].out * t[1].out * t[2].out) return kBadShape;
  for (int i = 0; i < 3; ++i) {  // every table position must lie inside the input
    for (int64_t j = 0; j < t[i].out * t[i].k; ++j)
      if (t[i].pos[j] < 0 || t[i].pos[j] >= n[i]) return kBadShape;
  }
  auto *out = static_cast<int64_t *>(params[4]);
  const char *dt = dtypes[0];
  if (std::strcmp(dt, "float32") == 0) {
    Run(static_cast<const float *>(params[0]), planes, n, t, out);
  } else if (std::strcmp(dt, "float64") == 0) {
    Run(static_cast<const double *>(params[0]), planes, n, t, out);
  } else if (std::strcmp(dt, "int32") == 0) {
    Run(static_cast<const int32_t *>(params[0]), planes, n, t, out);
  } else if (std::strcmp(dt, "int64") == 0) {
    Run(static_cast<const int64_t *>(params[0]), planes, n, t, out);
  } else {
    return kBadDtype;
  }
  return kOk;
}
