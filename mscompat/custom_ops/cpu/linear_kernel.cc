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
// Calling convention: common.h. The forward splits output rows over threads, the backward
// planes (MSCOMPAT_NUM_THREADS caps them).

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "common.h"
#include "half.h"
#include "parallel.h"

#define MSCOMPAT_IMPL "linear_impl.h"
#include "fma_build.h"

// params: x, idx0, lam0, idx1, lam1, idx2, lam2, opts, y
extern "C" int LinearResample(int nparam, void **params, int *ndims, int64_t **shapes,
                              const char **dtypes, void *, void *) {
  return Launch(false, 9, {1, 3, 5, 7}, {0, 2, 4, 6, 8}, nparam, params, ndims, shapes, dtypes);
}

// params: dy, x, idx0, lam0, idx1, lam1, idx2, lam2, opts, dx
extern "C" int LinearResampleBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                      const char **dtypes, void *, void *) {
  return Launch(true, 10, {2, 4, 6, 8}, {0, 1, 3, 5, 7, 9}, nparam, params, ndims, shapes,
                dtypes);
}
