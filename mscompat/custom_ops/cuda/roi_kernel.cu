// RoI Align forward and backward CUDA kernels for MindSpore's ops.Custom(func_type="aot") on GPU,
// with the entry points and parameters of ../cpu/roi_kernel.cc:
//   RoIAlign(x, rois, size, p) -> y            RoIAlignGrad(dy, rois, like, size, p) -> dx
// torchvision's CUDA scheme (torchvision/csrc/ops/cuda/roi_align_kernel.cu): one thread per
// output element; the backward adds with atomicAdd, so its order of additions, and the last
// bits of its sums, vary from run to run (as torchvision's CUDA backward). float32/float64 (the
// front door runs float16 in float32 with p[2] = 1, which this kernel ignores: float32
// arithmetic). p lives in device memory: [sampling_ratio, aligned, half, spatial_scale bits].
//
// Built by setup.py when nvcc is present, as the GPU half of the "roi" library (the other RoI
// ops have no CUDA kernel: KernelLibrary's cuda_entries). tools/check_cuda.py runs it against
// torchvision's CUDA roi_align.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "../cpu/common.h"

namespace {

using namespace mscompat::status;

constexpr int kThreads = 256;

int Blocks(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

int Launched() { return cudaGetLastError() == cudaSuccess ? kOk : kLaunchFailed; }

struct Geometry {
  int64_t n, c, h, w, k, ph, pw;
};

__device__ __forceinline__ double Scale(const int64_t *p) {
  double s;
  memcpy(&s, &p[3], sizeof(double));
  return s;
}

// torchvision's bilinear weights of the sample (y, x); false outside [-1, H] x [-1, W].
template <typename T>
__device__ bool Weights(int64_t height, int64_t width, T y, T x, T *w, int64_t *pos) {
  if (!(y >= T(-1) && y <= T(height) && x >= T(-1) && x <= T(width))) return false;
  if (y <= T(0)) y = T(0);
  if (x <= T(0)) x = T(0);
  int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = T(y_low);
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = T(x_low);
  } else {
    x_high = x_low + 1;
  }
  const T ly = y - T(y_low), lx = x - T(x_low);
  const T hy = T(1) - ly, hx = T(1) - lx;
  w[0] = hy * hx;
  w[1] = hy * lx;
  w[2] = ly * hx;
  w[3] = ly * lx;
  pos[0] = y_low * width + x_low;
  pos[1] = y_low * width + x_high;
  pos[2] = y_high * width + x_low;
  pos[3] = y_high * width + x_high;
  return true;
}

// The RoI of output element `index`: its batch (-1: skipped), start, bin size and grid.
template <typename T>
__device__ int64_t Roi(const T *rois, const int64_t *p, const Geometry &g, int64_t n, T *start_h,
                       T *start_w, T *bin_h, T *bin_w, int *grid_h, int *grid_w) {
  const T *r = rois + n * 5;
  const T b = r[0];
  if (!(b > T(-1) && b < T(g.n))) return -1;
  const bool aligned = p[1] != 0;
  const T scale = T(Scale(p));
  const T offset = aligned ? T(0.5) : T(0);
  *start_w = r[1] * scale - offset;
  *start_h = r[2] * scale - offset;
  T width = (r[3] * scale - offset) - *start_w;
  T height = (r[4] * scale - offset) - *start_h;
  if (!aligned) {
    if (width < T(1)) width = T(1);
    if (height < T(1)) height = T(1);
  }
  *bin_h = height / T(g.ph);
  *bin_w = width / T(g.pw);
  const int64_t sampling = p[0];
  *grid_h = sampling > 0 ? static_cast<int>(sampling) : static_cast<int>(ceil(height / T(g.ph)));
  *grid_w = sampling > 0 ? static_cast<int>(sampling) : static_cast<int>(ceil(width / T(g.pw)));
  return static_cast<int64_t>(b);
}

template <typename T>
__global__ void Forward(const T *x, const T *rois, const int64_t *p, Geometry g, T *y) {
  const int64_t total = g.k * g.c * g.ph * g.pw;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t pw = i % g.pw, ph = (i / g.pw) % g.ph, c = (i / g.pw / g.ph) % g.c;
    const int64_t n = i / g.pw / g.ph / g.c;
    T sh, sw, bh, bw;
    int gh, gw;
    const int64_t b = Roi(rois, p, g, n, &sh, &sw, &bh, &bw, &gh, &gw);
    if (b < 0) {
      y[i] = T(0);
      continue;
    }
    const T *in = x + (b * g.c + c) * g.h * g.w;
    T acc = T(0);
    for (int iy = 0; iy < gh; ++iy) {
      const T yy = (sh + T(ph) * bh) + (T(iy + .5f) * bh) / T(gh);
      for (int ix = 0; ix < gw; ++ix) {
        const T xx = (sw + T(pw) * bw) + (T(ix + .5f) * bw) / T(gw);
        T w[4];
        int64_t pos[4];
        if (!Weights(g.h, g.w, yy, xx, w, pos)) continue;
        acc += w[0] * in[pos[0]] + w[1] * in[pos[1]] + w[2] * in[pos[2]] + w[3] * in[pos[3]];
      }
    }
    const int count = gh * gw > 1 ? gh * gw : 1;
    y[i] = acc / T(count);
  }
}

__device__ __forceinline__ void AtomicAdd(float *at, float v) { atomicAdd(at, v); }

__device__ __forceinline__ void AtomicAdd(double *at, double v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600
  atomicAdd(at, v);
#else
  auto *bits = reinterpret_cast<unsigned long long *>(at);
  unsigned long long old = *bits, seen;
  do {
    seen = old;
    old = atomicCAS(bits, seen, __double_as_longlong(v + __longlong_as_double(seen)));
  } while (seen != old);
#endif
}

template <typename T>
__global__ void Backward(const T *dy, const T *rois, const int64_t *p, Geometry g, T *dx) {
  const int64_t total = g.k * g.c * g.ph * g.pw;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t pw = i % g.pw, ph = (i / g.pw) % g.ph, c = (i / g.pw / g.ph) % g.c;
    const int64_t n = i / g.pw / g.ph / g.c;
    T sh, sw, bh, bw;
    int gh, gw;
    const int64_t b = Roi(rois, p, g, n, &sh, &sw, &bh, &bw, &gh, &gw);
    if (b < 0) continue;
    T *out = dx + (b * g.c + c) * g.h * g.w;
    const T grad = dy[i];
    const T count = T(gh * gw);
    for (int iy = 0; iy < gh; ++iy) {
      const T yy = (sh + T(ph) * bh) + (T(iy + .5f) * bh) / T(gh);
      for (int ix = 0; ix < gw; ++ix) {
        const T xx = (sw + T(pw) * bw) + (T(ix + .5f) * bw) / T(gw);
        T w[4];
        int64_t pos[4];
        if (!Weights(g.h, g.w, yy, xx, w, pos)) continue;
        for (int j = 0; j < 4; ++j) AtomicAdd(out + pos[j], grad * w[j] / count);
      }
    }
  }
}

// x rois size p at the given positions: fills g; kOk or the status.
int Check(int *ndims, int64_t **shapes, const char **dtypes, int x, int rois, int size, int p,
          Geometry *g) {
  if (std::strcmp(dtypes[x], dtypes[rois]) != 0) return kBadDtype;
  if (!mscompat::AllDtype(dtypes, {p}, "int64")) return kBadDtype;
  if (ndims[x] != 4 || ndims[rois] != 2 || shapes[rois][1] != 5 || ndims[size] != 2)
    return kBadShape;
  if (!mscompat::HasShape(ndims[p], shapes[p], {4})) return kBadShape;
  *g = Geometry{shapes[x][0],    shapes[x][1],    shapes[x][2],   shapes[x][3],
                shapes[rois][0], shapes[size][0], shapes[size][1]};
  return kOk;
}

}  // namespace

extern "C" int RoIAlign(int nparam, void **params, int *ndims, int64_t **shapes,
                        const char **dtypes, void *stream, void *) {
  if (nparam != 5) return kBadArity;
  Geometry g;
  if (int rc = Check(ndims, shapes, dtypes, 0, 1, 2, 3, &g)) return rc;
  const int64_t total = g.k * g.c * g.ph * g.pw;
  if (total == 0) return kOk;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    Forward<T><<<Blocks(total), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
        static_cast<const int64_t *>(params[3]), g, static_cast<T *>(params[4]));
    return Launched();
  });
}

extern "C" int RoIAlignGrad(int nparam, void **params, int *ndims, int64_t **shapes,
                            const char **dtypes, void *stream, void *) {
  if (nparam != 6) return kBadArity;
  Geometry g;
  if (int rc = Check(ndims, shapes, dtypes, 2, 1, 3, 4, &g)) return rc;
  if (std::strcmp(dtypes[0], dtypes[2]) != 0) return kBadDtype;
  const auto cu = static_cast<cudaStream_t>(stream);
  const int64_t elems = g.n * g.c * g.h * g.w;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    if (cudaMemsetAsync(params[5], 0, elems * sizeof(T), cu) != cudaSuccess) return kLaunchFailed;
    const int64_t total = g.k * g.c * g.ph * g.pw;
    if (total == 0) return kOk;
    Backward<T><<<Blocks(total), kThreads, 0, cu>>>(
        static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
        static_cast<const int64_t *>(params[4]), g, static_cast<T *>(params[5]));
    return Launched();
  });
}
