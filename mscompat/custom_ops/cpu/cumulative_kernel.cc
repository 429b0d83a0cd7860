// Running maximum / minimum positions with PyTorch's CPU rule: an index kernel for MindSpore's
// ops.Custom(func_type="aot").
//
// PyTorch's cummax/cummin (aten/src/ATen/native/ReduceOps.cpp) scan each line keeping the
// current extreme `out` and its position: element x replaces it when x is NaN, or when `out` is
// not NaN and x >= out (cummax; x <= out for cummin). So equal values move the position to the
// later one, a NaN sticks (only a later NaN replaces it), and -0.0 ties with +0.0.
//
//   CumExtremeIndices(x, p=[dim, is_min]) -> idx (x's shape, int64)
//
// x: float32/float64/int32/int64 (the front door converts float16, small integers and bool
// exactly); the scan runs along `dim` of x as it is ((outer, n, inner) strides, no transpose).
// Lines are independent; large inputs are split over threads (parallel.h).

#include <cstdint>

#include "common.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::IsNan;

template <typename T>
void ScanLines(const T *x, int64_t outer, int64_t n, int64_t inner, bool is_min, int64_t *idx) {
  mscompat::ParallelFor(outer * inner, outer * inner * n, [=](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t base = (line / inner) * n * inner + line % inner;
      T out = x[base];
      int64_t at = 0;
      for (int64_t i = 0; i < n; ++i) {
        const T v = x[base + i * inner];
        const bool better = is_min ? v <= out : v >= out;
        if (IsNan(v) || (!IsNan(out) && better)) {
          out = v;
          at = i;
        }
        idx[base + i * inner] = at;
      }
    }
  });
}

}  // namespace

extern "C" int CumExtremeIndices(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *, void *) {
  if (nparam != 3) return kBadArity;
  if (!mscompat::AllDtype(dtypes, {1, 2}, "int64")) return kBadDtype;
  if (!mscompat::HasShape(ndims[1], shapes[1], {2})) return kBadShape;
  if (!mscompat::SameShape(ndims[0], shapes[0], ndims[2], shapes[2])) return kBadShape;
  const auto *p = static_cast<const int64_t *>(params[1]);
  const int nd = ndims[0];
  const int64_t dim = p[0];
  if (nd < 1 || dim < 0 || dim >= nd) return kBadShape;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shapes[0][d];
  for (int d = static_cast<int>(dim) + 1; d < nd; ++d) inner *= shapes[0][d];
  const int64_t n = shapes[0][dim];
  if (outer * inner * n == 0) return kOk;
  auto *idx = static_cast<int64_t *>(params[2]);
  return mscompat::ByDtype<float, double, int32_t, int64_t>(dtypes[0], [&](auto t) {
    using T = decltype(t);
    ScanLines(static_cast<const T *>(params[0]), outer, n, inner, p[1] != 0, idx);
  });
}
