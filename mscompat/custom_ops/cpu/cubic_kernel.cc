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
// Calling convention: common.h. The forward splits output rows over threads, the backward
// planes (MSCOMPAT_NUM_THREADS caps them).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "common.h"
#include "half.h"
#include "parallel.h"

#define MSCOMPAT_IMPL "cubic_impl.h"
#include "fma_build.h"

// params: x, src_h, src_w, opts, y
extern "C" int CubicResample(int nparam, void **params, int *ndims, int64_t **shapes,
                             const char **dtypes, void *, void *) {
  return Launch(false, 5, {3}, {0, 1, 2, 4}, nparam, params, ndims, shapes, dtypes);
}

// params: dy, x, src_h, src_w, opts, dx
extern "C" int CubicResampleBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                     const char **dtypes, void *, void *) {
  return Launch(true, 6, {4}, {0, 1, 2, 3, 5}, nparam, params, ndims, shapes, dtypes);
}
