// Bicubic interpolation (interpolate mode='bicubic' without antialias) for MindSpore's
// ops.Custom(func_type="aot").
//
// The source coordinate of every output row and column is computed in Python with PyTorch's
// rule (area_pixel_compute_source_index, mscompat/shape/interpolate.py); the kernels derive the
// taps and Keys' coefficients from it and follow PyTorch's CPU arithmetic, including the
// multiply-adds its compiler fuses in the forward kernel (cubic_impl.h).
//
//   CubicResample(x, src_h, src_w, opts) -> y
//     x:     (N, C, H, W) float32/float64 (float16 runs as float32 with half_weights)
//     src_h: (2, OH) the source row coordinate of every output row: row 0 as PyTorch's forward
//            kernel computes it (one fused multiply-add), row 1 as its backward kernel does;
//            src_w: (2, OW) the same for columns
//     opts:  (1,) int64 [half_weights]: round the forward weights to float16, as PyTorch's
//            float16 kernel stores them
//     y:     (N, C, OH, OW)
//   CubicResampleBackward(dy, x, src_h, src_w, opts) -> dx
//     PyTorch's backward loop (x is read for its shape only).
//
// Calling convention (MindSpore aot): int Fn(int nparam, void **params, int *ndims,
// int64_t **shapes, const char **dtypes, void *stream, void *extra); params holds the inputs,
// then the outputs. The forward splits output rows over threads, the backward planes
// (MSCOMPAT_NUM_THREADS caps them).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "dispatch.h"
#include "half.h"
#include "parallel.h"

#define MSCOMPAT_CUBIC_NS mscompat_cubic_generic
#include "cubic_impl.h"
#undef MSCOMPAT_CUBIC_NS

#if defined(__GNUC__) && defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define MSCOMPAT_CUBIC_NS mscompat_cubic_fma
#include "cubic_impl.h"
#undef MSCOMPAT_CUBIC_NS
#pragma GCC pop_options
#define MSCOMPAT_CUBIC_HAVE_FMA_PATH 1
#endif

namespace {

constexpr int kBadArity = mscompat_cubic_generic::kBadArity;
constexpr int kBadDtype = mscompat_cubic_generic::kBadDtype;

using mscompat::AllDtype;

template <typename T>
int Forward(void **params, int *ndims, int64_t **shapes) {
#ifdef MSCOMPAT_CUBIC_HAVE_FMA_PATH
  if (mscompat::CpuHasFma()) return mscompat_cubic_fma::RunForward<T>(params, ndims, shapes);
#endif
  return mscompat_cubic_generic::RunForward<T>(params, ndims, shapes);
}

template <typename T>
int Backward(void **params, int *ndims, int64_t **shapes) {
#ifdef MSCOMPAT_CUBIC_HAVE_FMA_PATH
  if (mscompat::CpuHasFma()) return mscompat_cubic_fma::RunBackward<T>(params, ndims, shapes);
#endif
  return mscompat_cubic_generic::RunBackward<T>(params, ndims, shapes);
}

}  // namespace

extern "C" int CubicResample(int nparam, void **params, int *ndims, int64_t **shapes,
                             const char **dtypes, void *, void *) {
  if (nparam != 5) return kBadArity;
  if (!AllDtype(dtypes, {3}, "int64")) return kBadDtype;
  if (AllDtype(dtypes, {0, 1, 2, 4}, "float32")) return Forward<float>(params, ndims, shapes);
  if (AllDtype(dtypes, {0, 1, 2, 4}, "float64")) return Forward<double>(params, ndims, shapes);
  return kBadDtype;
}

extern "C" int CubicResampleBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                     const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  if (!AllDtype(dtypes, {4}, "int64")) return kBadDtype;
  if (AllDtype(dtypes, {0, 1, 2, 3, 5}, "float32"))
    return Backward<float>(params, ndims, shapes);
  if (AllDtype(dtypes, {0, 1, 2, 3, 5}, "float64"))
    return Backward<double>(params, ndims, shapes);
  return kBadDtype;
}
