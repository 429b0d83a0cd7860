// grid_sample on 4-D input (torch.nn.functional.grid_sample, bilinear / nearest / bicubic,
// zeros / border / reflection padding, align_corners) for ops.Custom(func_type="aot").
//
// PyTorch's CPU path for 4-D input is its vectorized kernel (aten/src/ATen/native/cpu/
// GridSamplerKernel.cpp); this file follows its arithmetic operation by operation, including
// the fused multiply-adds its compiler forms (unnormalize `(g + 1) * s - 0.5`, the reflection
// fold, the interpolation sums, the grid-gradient accumulations), its clip (NaN -> 0), its
// float -> int conversion (out of range -> the lowest integer, then masked as outside) and,
// in the backward, its order of accumulation into grad_input (points in blocks of one
// 512-bit vector: per channel, corner by corner over the block).
//
//   GridSample2d(x, grid, opts) -> y
//     x: (N, C, H, W) float32/float64;  grid: (N, Ho, Wo, 2), x's dtype
//     opts: (3,) int64 [mode (0 bilinear, 1 nearest, 2 bicubic), padding (0 zeros,
//           1 border, 2 reflection), align_corners (0/1)]
//     y: (N, C, Ho, Wo)
//   GridSample2dBackward(dy, x, grid, opts) -> (dx, dgrid)
//   GridSample3dHalfBackward(dy, x, grid, opts) -> (dx, dgrid)
//     PyTorch's float16 backward for 5-D input (bilinear, nearest): x (N, C, D, H, W),
//     grid (N, Do, Ho, Wo, 3), dy (N, C, Do, Ho, Wo), all float32 holding float16 values
//     (grid_sample_half3d.h)
//
// Calling convention: common.h. Work is split over threads (MSCOMPAT_NUM_THREADS caps them): the
// forward over (batch, blocks of points), the backward over the batch, as PyTorch.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <thread>
#include <type_traits>
#include <vector>

#include "common.h"
#include "grid_sample_half3d.h"
#include "parallel.h"

#define MSCOMPAT_IMPL "grid_sample_impl.h"
#include "fma_build.h"

using namespace mscompat::status;
using mscompat::AllDtype;

// params: x, grid, opts, y
extern "C" int GridSample2d(int nparam, void **params, int *ndims, int64_t **shapes,
                            const char **dtypes, void *, void *) {
  return Launch(false, 4, {2}, {0, 1, 3}, nparam, params, ndims, shapes, dtypes);
}

// params: dy, x, grid, opts, dx, dgrid
extern "C" int GridSample2dBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                    const char **dtypes, void *, void *) {
  return Launch(true, 6, {3}, {0, 1, 2, 4, 5}, nparam, params, ndims, shapes, dtypes);
}

extern "C" int GridSample3dHalfBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                        const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  if (!AllDtype(dtypes, {3}, "int64")) return kBadDtype;
  if (!AllDtype(dtypes, {0, 1, 2, 4, 5}, "float32")) return kBadDtype;
  if (ndims[0] != 5 || ndims[1] != 5 || ndims[2] != 5 || ndims[3] != 1 || shapes[3][0] != 3)
    return kBadShape;
  const int64_t *xs = shapes[1], *gs = shapes[2], *ys = shapes[0];
  const mscompat::half3d::Dims s{xs[0], xs[1], xs[2], xs[3], xs[4], gs[1], gs[2], gs[3]};
  const bool ok = gs[0] == s.n && gs[4] == 3 && ys[0] == s.n && ys[1] == s.c &&
                  ys[2] == s.od && ys[3] == s.oh && ys[4] == s.ow && ndims[4] == 5 &&
                  ndims[5] == 5;
  if (!ok) return kBadShape;
  const int64_t *opts = static_cast<const int64_t *>(params[3]);
  if (opts[0] != 0 && opts[0] != 1) return kBadDtype;  // bilinear or nearest only
  mscompat::half3d::Backward(static_cast<const float *>(params[0]),
                             static_cast<const float *>(params[1]),
                             static_cast<const float *>(params[2]), s, static_cast<int>(opts[0]),
                             static_cast<int>(opts[1]), opts[2] != 0,
                             static_cast<float *>(params[4]), static_cast<float *>(params[5]));
  return kOk;
}
