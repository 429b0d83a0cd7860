// The sum of all elements of a tensor, as a loss's 'mean'/'sum' needs it, for MindSpore's
// ops.Custom(func_type="aot"):
//
//   SumAll(x, coef) -> out (0-d)             out = T(sum of x) / coef[0]
//   SumAllBackward(x, coef, dout) -> dx      dx = dout / coef[0] everywhere (x's shape)
//
// MindSpore 2.10's CPU ReduceSum over every axis of a 2-D or 4-D tensor took 20-28 ms for 8e6
// float32 elements (1-D: 2.6 ms; PyTorch: 0.2 ms), which dominated the dense losses' forward.
// Here fixed blocks are summed in double and added in order (the result does not depend on the
// thread count, and is at least as accurate as PyTorch's float32 cascade sum); the total is
// rounded to T, then divided, as PyTorch's mean divides. float32 or float64.

#include <algorithm>
#include <cstdint>

#include "common.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::NumElements;

constexpr int64_t kBlocks = 64;

template <typename T>
T SumAll(const T *x, int64_t n, T divisor) {
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(kBlocks, n / 4096));
  double partial[kBlocks] = {};
  mscompat::ParallelFor(blocks, n, 1 << 16, 1 << 15, [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      // four accumulators: one would wait on each add
      double acc[4] = {0.0, 0.0, 0.0, 0.0};
      const int64_t end = (b + 1) * n / blocks;
      int64_t i = b * n / blocks;
      for (; i + 4 <= end; i += 4)
        for (int k = 0; k < 4; ++k) acc[k] += x[i + k];
      for (; i < end; ++i) acc[0] += x[i];
      partial[b] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
  });
  double total = 0.0;
  for (int64_t b = 0; b < blocks; ++b) total += partial[b];
  return static_cast<T>(total) / divisor;
}

template <typename T>
void Fill(T value, int64_t n, T *dx) {
  mscompat::ParallelFor(n, n, 1 << 18, 1 << 17, [&](int64_t i0, int64_t i1) {
    std::fill(dx + i0, dx + i1, value);
  });
}

// x (any shape) and the other tensors share a float dtype; coef and the scalars hold one value.
int Check(int *ndims, int64_t **shapes, const char **dtypes, int count, int64_t *n) {
  const char *dt = dtypes[0];
  if (std::strcmp(dt, "float32") != 0 && std::strcmp(dt, "float64") != 0) return kBadDtype;
  for (int i = 1; i < count; ++i)
    if (std::strcmp(dtypes[i], dt) != 0) return kBadDtype;
  *n = NumElements(ndims[0], shapes[0]);
  return NumElements(ndims[1], shapes[1]) == 1 ? kOk : kBadShape;
}

}  // namespace

extern "C" int SumAll(int nparam, void **params, int *ndims, int64_t **shapes,
                      const char **dtypes, void *, void *) {
  if (nparam != 3) return kBadArity;
  // params: x, coef (1: the divisor), out (one element)
  int64_t n;
  if (int rc = Check(ndims, shapes, dtypes, 3, &n)) return rc;
  if (NumElements(ndims[2], shapes[2]) != 1) return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    static_cast<T *>(params[2])[0] =
        SumAll(static_cast<const T *>(params[0]), n, static_cast<const T *>(params[1])[0]);
  });
}

extern "C" int SumAllBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                              const char **dtypes, void *, void *) {
  if (nparam != 4) return kBadArity;
  // params: x, coef (1), dout (one element), dx (x's shape)
  int64_t n;
  if (int rc = Check(ndims, shapes, dtypes, 4, &n)) return rc;
  if (NumElements(ndims[2], shapes[2]) != 1 ||
      !mscompat::SameShape(ndims[0], shapes[0], ndims[3], shapes[3]))
    return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    // PyTorch's mean backward: the incoming gradient divided by n, the same everywhere
    Fill(static_cast<const T *>(params[2])[0] / static_cast<const T *>(params[1])[0], n,
         static_cast<T *>(params[3]));
  });
}
