// Linear interpolation (interpolate mode='linear' / 'bilinear' / 'trilinear', upsample_bilinear)
// for MindSpore's ops.Custom(func_type="aot").
//
// The two source indices and weights of every output position along each axis are computed in
// Python with PyTorch's rule (compute_source_index_and_lambda, mscompat/shape/interpolate.py)
// and passed as tables; the kernels follow PyTorch's CPU arithmetic, including the
// multiply-adds its compiler fuses (linear_impl.h).
//
//   LinearResample(x, idx0, lam0, idx1, lam1, idx2, lam2, opts) -> y
//     x:    (N, C, *spatial) float32/float64 with 1, 2 or 3 spatial axes (taken as N * C
//           planes in place: no reshape, which MindSpore's graph mode runs as a copy)
//     idxa: (2, Oa) int64 the two source indices along axis a, lama: (2, Oa) their weights;
//           the spatial axes use the last 1, 2 or 3 tables, the others are (2, 1) unused
//     opts: (2,) int64 [small, half_weights]. small: 2-D only, PyTorch's channels-last kernel
//           (which it runs when out_h + out_w <= 128); its arithmetic depends on the channel,
//           read from C. half_weights: float16 run in float32, the forward weights rounded to
//           float16 as PyTorch's float16 kernels store them (not in the channels-last kernel;
//           the backward uses the float32 weights, as PyTorch's)
//     y:    (N, C, *O)
//   LinearResampleBackward(dy, x, idx0, lam0, idx1, lam1, idx2, lam2, opts) -> dx
//     PyTorch's backward loop: per plane, in output order, every source element of an output
//     gets fma(weight, dy, acc) (x is read for its shape only).
//
// Calling convention (MindSpore aot): int Fn(int nparam, void **params, int *ndims,
// int64_t **shapes, const char **dtypes, void *stream, void *extra); params holds the inputs,
// then the outputs. The forward splits output rows over threads, the backward planes
// (MSCOMPAT_NUM_THREADS caps them).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "dispatch.h"
#include "half.h"
#include "parallel.h"

#define MSCOMPAT_LIN_NS mscompat_lin_generic
#include "linear_impl.h"
#undef MSCOMPAT_LIN_NS

#if defined(__GNUC__) && defined(__x86_64__)
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define MSCOMPAT_LIN_NS mscompat_lin_fma
#include "linear_impl.h"
#undef MSCOMPAT_LIN_NS
#pragma GCC pop_options
#define MSCOMPAT_LIN_HAVE_FMA_PATH 1
#endif

namespace {

constexpr int kBadArity = mscompat_lin_generic::kBadArity;
constexpr int kBadDtype = mscompat_lin_generic::kBadDtype;

using mscompat::AllDtype;

// idx0, idx1, idx2 and opts.
bool TablesInt64(const char **dtypes, int first) {
  return AllDtype(dtypes, {first, first + 2, first + 4, first + 6}, "int64");
}

template <typename T>
int Forward(void **params, int *ndims, int64_t **shapes) {
#ifdef MSCOMPAT_LIN_HAVE_FMA_PATH
  if (mscompat::CpuHasFma()) return mscompat_lin_fma::RunForward<T>(params, ndims, shapes);
#endif
  return mscompat_lin_generic::RunForward<T>(params, ndims, shapes);
}

template <typename T>
int Backward(void **params, int *ndims, int64_t **shapes) {
#ifdef MSCOMPAT_LIN_HAVE_FMA_PATH
  if (mscompat::CpuHasFma()) return mscompat_lin_fma::RunBackward<T>(params, ndims, shapes);
#endif
  return mscompat_lin_generic::RunBackward<T>(params, ndims, shapes);
}

}  // namespace

extern "C" int LinearResample(int nparam, void **params, int *ndims, int64_t **shapes,
                              const char **dtypes, void *, void *) {
  if (nparam != 9) return kBadArity;
  if (!TablesInt64(dtypes, 1)) return kBadDtype;
  if (AllDtype(dtypes, {0, 2, 4, 6, 8}, "float32")) return Forward<float>(params, ndims, shapes);
  if (AllDtype(dtypes, {0, 2, 4, 6, 8}, "float64")) return Forward<double>(params, ndims, shapes);
  return kBadDtype;
}

extern "C" int LinearResampleBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                      const char **dtypes, void *, void *) {
  if (nparam != 10) return kBadArity;
  if (!TablesInt64(dtypes, 2)) return kBadDtype;
  if (AllDtype(dtypes, {0, 1, 3, 5, 7, 9}, "float32"))
    return Backward<float>(params, ndims, shapes);
  if (AllDtype(dtypes, {0, 1, 3, 5, 7, 9}, "float64"))
    return Backward<double>(params, ndims, shapes);
  return kBadDtype;
}
