// Deformable convolution sampling (torchvision.ops.deform_conv2d) for MindSpore's
// ops.Custom(func_type="aot") on GPU.
//
// Same entry points, parameters and formulas as ../cpu/deform_conv_kernel.cc:
//   DeformIm2Col(x, offset, mask, geom, kernel) -> cols
//   DeformIm2ColGrad(dcols, x, offset, mask, geom, kernel) -> dx doffset dmask
// geom (10 int64: kh, kw, sh, sw, ph, pw, dh, dw, offset groups, use_mask) lives on the device:
// it is copied to the host on the stream MindSpore passes, shapes are checked there, and the
// kernels run on that stream. One thread per column element (forward, input gradient: added
// with atomicAdd, so the order of the additions to one input element is not fixed), one per
// (n, g, k, position) for the offset and mask gradients (the group's channels in order).
// Calling convention, status codes and shape checks: ../cpu/common.h.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "../cpu/common.h"

namespace {

using namespace mscompat::status;

struct Geometry {
  int64_t n, c, h, w, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw, groups, cg, k, l;
  bool use_mask;
};

__device__ __forceinline__ double AtomicAdd(double *at, double v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 600
  unsigned long long *bits = reinterpret_cast<unsigned long long *>(at);
  unsigned long long old = *bits, seen;
  do {
    seen = old;
    old = atomicCAS(bits, seen, __double_as_longlong(v + __longlong_as_double(seen)));
  } while (seen != old);
  return __longlong_as_double(old);
#else
  return atomicAdd(at, v);
#endif
}

__device__ __forceinline__ float AtomicAdd(float *at, float v) { return atomicAdd(at, v); }

// The sampling point of kernel position k at output position p of (n, group): y and x.
template <typename T>
__device__ __forceinline__ void Point(const T *offset, const Geometry &g, int64_t ng, int64_t k,
                                      int64_t p, T *y, T *x) {
  const int64_t i = k / g.kw, j = k % g.kw, oy = p / g.ow, ox = p % g.ow;
  const T *at = offset + (ng * 2 * g.k + 2 * k) * g.l + p;
  *y = T((oy * g.sh - g.ph) + i * g.dh) + at[0];
  *x = T((ox * g.sw - g.pw) + j * g.dw) + at[g.l];
}

template <typename T>
__device__ __forceinline__ int64_t Low(T v, int64_t size) {
  return (v > T(-2) && v < T(size + 1)) ? static_cast<int64_t>(floor(v)) : -2;
}

// The four corners (y_l, x_l), (y_l, x_h), (y_h, x_l), (y_h, x_h): values (0 outside the image).
template <typename T>
__device__ __forceinline__ void Corners(const T *img, const Geometry &g, int64_t yl, int64_t xl,
                                        T *v) {
  for (int q = 0; q < 4; ++q) {
    const int64_t yc = yl + (q >> 1), xc = xl + (q & 1);
    v[q] = (yc >= 0 && yc < g.h && xc >= 0 && xc < g.w) ? img[yc * g.w + xc] : T(0);
  }
}

template <typename T>
__device__ __forceinline__ T Bilinear(const Geometry &g, T y, T x, int64_t yl, int64_t xl,
                                      const T *v) {
  if (y <= T(-1) || T(g.h) <= y || x <= T(-1) || T(g.w) <= x) return T(0);
  const T lh = y - T(yl), lw = x - T(xl), hh = T(1) - lh, hw = T(1) - lw;
  return hh * hw * v[0] + hh * lw * v[1] + lh * hw * v[2] + lh * lw * v[3];
}

template <typename T>
__global__ void Im2ColKernel(const T *x, const T *offset, const T *mask, Geometry g, T *cols) {
  const int64_t total = g.n * g.c * g.k * g.l;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
       e += (int64_t)blockDim.x * gridDim.x) {
    const int64_t p = e % g.l, k = (e / g.l) % g.k, nc = e / (g.l * g.k);
    const int64_t n = nc / g.c, c = nc % g.c, ng = n * g.groups + c / g.cg;
    T y, xs, v[4];
    Point(offset, g, ng, k, p, &y, &xs);
    const int64_t yl = Low(y, g.h), xl = Low(xs, g.w);
    Corners(x + nc * g.h * g.w, g, yl, xl, v);
    const T m = g.use_mask ? mask[(ng * g.k + k) * g.l + p] : T(1);
    cols[e] = m * Bilinear(g, y, xs, yl, xl, v);
  }
}

template <typename T>
__global__ void Col2ImKernel(const T *dcols, const T *offset, const T *mask, Geometry g, T *dx) {
  const int64_t total = g.n * g.c * g.k * g.l;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
       e += (int64_t)blockDim.x * gridDim.x) {
    const int64_t p = e % g.l, k = (e / g.l) % g.k, nc = e / (g.l * g.k);
    const int64_t n = nc / g.c, c = nc % g.c, ng = n * g.groups + c / g.cg;
    T y, xs;
    Point(offset, g, ng, k, p, &y, &xs);
    const T m = g.use_mask ? mask[(ng * g.k + k) * g.l + p] : T(1);
    const int64_t yl = Low(y, g.h), xl = Low(xs, g.w);
    for (int q = 0; q < 4; ++q) {
      const int64_t yc = yl + (q >> 1), xc = xl + (q & 1);
      const T ay = fabs(y - T(yc)), ax = fabs(xs - T(xc));
      if (yc >= 0 && yc < g.h && xc >= 0 && xc < g.w && ay < T(1) && ax < T(1))
        AtomicAdd(dx + nc * g.h * g.w + yc * g.w + xc, m * ((T(1) - ay) * (T(1) - ax)) * dcols[e]);
    }
  }
}

template <typename T>
__global__ void CoordKernel(const T *dcols, const T *x, const T *offset, const T *mask,
                            Geometry g, T *doffset, T *dmask) {
  const int64_t total = g.n * g.groups * g.k * g.l;
  for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < total;
       e += (int64_t)blockDim.x * gridDim.x) {
    const int64_t p = e % g.l, k = (e / g.l) % g.k, ng = e / (g.l * g.k);
    const int64_t n = ng / g.groups, grp = ng % g.groups;
    T y, xs, v[4];
    Point(offset, g, ng, k, p, &y, &xs);
    const T m = g.use_mask ? mask[(ng * g.k + k) * g.l + p] : T(1);
    const int64_t yl = Low(y, g.h), xl = Low(xs, g.w);
    const T fy = y - T(yl), fx = xs - T(xl);
    T gy = 0, gx = 0, gm = 0;
    for (int64_t cl = 0; cl < g.cg; ++cl) {
      const int64_t nc = n * g.c + grp * g.cg + cl;
      Corners(x + nc * g.h * g.w, g, yl, xl, v);
      const T col = dcols[(nc * g.k + k) * g.l + p];
      gy += m * (fx * (v[3] - v[1]) + (T(1) - fx) * (v[2] - v[0])) * col;
      gx += m * (fy * (v[3] - v[2]) + (T(1) - fy) * (v[1] - v[0])) * col;
      if (g.use_mask) gm += col * Bilinear(g, y, xs, yl, xl, v);
    }
    T *at = doffset + (ng * 2 * g.k + 2 * k) * g.l + p;
    at[0] = gy;
    at[g.l] = gx;
    if (g.use_mask) dmask[e] = gm;
  }
}

constexpr int kThreads = 256;

int Blocks(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65536 ? (b > 0 ? b : 1) : 65536);
}

int Launched() { return cudaGetLastError() == cudaSuccess ? kOk : kLaunchFailed; }

// geom copied to the host, shapes checked (as the CPU kernel's ReadGeometry).
int ReadGeometry(void **params, int *ndims, int64_t **shapes, int x_at, int offset_at,
                 int mask_at, int geom_at, int cols_at, cudaStream_t stream, Geometry *g) {
  if (ndims[geom_at] != 1 || shapes[geom_at][0] != 10 || ndims[x_at] != 4 ||
      ndims[offset_at] != 4 || ndims[cols_at] != 3)
    return kBadShape;
  int64_t p[10];
  if (cudaMemcpyAsync(p, params[geom_at], sizeof(p), cudaMemcpyDeviceToHost, stream) !=
          cudaSuccess ||
      cudaStreamSynchronize(stream) != cudaSuccess)
    return kLaunchFailed;
  g->kh = p[0], g->kw = p[1], g->sh = p[2], g->sw = p[3], g->ph = p[4], g->pw = p[5];
  g->dh = p[6], g->dw = p[7], g->groups = p[8], g->use_mask = p[9] != 0;
  if (g->kh < 1 || g->kw < 1 || g->sh < 1 || g->sw < 1 || g->ph < 0 || g->pw < 0 ||
      g->dh < 1 || g->dw < 1 || g->groups < 1)
    return kBadShape;
  const int64_t *xs = shapes[x_at], *os = shapes[offset_at], *cs = shapes[cols_at];
  g->n = xs[0], g->c = xs[1], g->h = xs[2], g->w = xs[3];
  g->k = g->kh * g->kw;
  g->oh = (g->h + 2 * g->ph - (g->dh * (g->kh - 1) + 1)) / g->sh + 1;
  g->ow = (g->w + 2 * g->pw - (g->dw * (g->kw - 1) + 1)) / g->sw + 1;
  g->l = g->oh * g->ow;
  if (g->h < 1 || g->w < 1 || g->oh < 1 || g->ow < 1 || g->c % g->groups != 0) return kBadShape;
  g->cg = g->c / g->groups;
  if (!mscompat::HasShape(ndims[offset_at], os, {g->n, 2 * g->groups * g->k, g->oh, g->ow}) ||
      !mscompat::HasShape(ndims[cols_at], cs, {g->n, g->c * g->k, g->l}))
    return kBadShape;
  if (g->use_mask &&
      !mscompat::HasShape(ndims[mask_at], shapes[mask_at], {g->n, g->groups * g->k, g->oh, g->ow}))
    return kBadShape;
  const int carrier = geom_at + 1;
  if (!mscompat::HasShape(ndims[carrier], shapes[carrier], {g->kh, g->kw})) return kBadShape;
  return kOk;
}

}  // namespace

extern "C" int DeformIm2Col(int nparam, void **params, int *ndims, int64_t **shapes,
                            const char **dtypes, void *stream, void *) {
  if (nparam != 6) return kBadArity;
  if (!mscompat::AllDtype(dtypes, {3}, "int64") || !mscompat::AllDtype(dtypes, {4}, "int8"))
    return kBadDtype;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  Geometry g;
  if (int rc = ReadGeometry(params, ndims, shapes, 0, 1, 2, 3, 5, s, &g)) return rc;
  return mscompat::ByDtype<float, double>(
      mscompat::SharedDtype(dtypes, {0, 1, 2, 5}), [&](auto v) {
        using T = decltype(v);
        const int64_t total = g.n * g.c * g.k * g.l;
        Im2ColKernel<T><<<Blocks(total), kThreads, 0, s>>>(
            static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
            static_cast<const T *>(params[2]), g, static_cast<T *>(params[5]));
        return Launched();
      });
}

extern "C" int DeformIm2ColGrad(int nparam, void **params, int *ndims, int64_t **shapes,
                                const char **dtypes, void *stream, void *) {
  if (nparam != 9) return kBadArity;
  if (!mscompat::AllDtype(dtypes, {4}, "int64") || !mscompat::AllDtype(dtypes, {5}, "int8"))
    return kBadDtype;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  Geometry g;
  if (int rc = ReadGeometry(params, ndims, shapes, 1, 2, 3, 4, 0, s, &g)) return rc;
  if (!mscompat::SameShape(ndims[6], shapes[6], ndims[1], shapes[1]) ||
      !mscompat::SameShape(ndims[7], shapes[7], ndims[2], shapes[2]) ||
      !mscompat::SameShape(ndims[8], shapes[8], ndims[3], shapes[3]))
    return kBadShape;
  return mscompat::ByDtype<float, double>(
      mscompat::SharedDtype(dtypes, {0, 1, 2, 3, 6, 7, 8}), [&](auto v) {
        using T = decltype(v);
        const T *dcols = static_cast<const T *>(params[0]);
        const T *x = static_cast<const T *>(params[1]);
        const T *offset = static_cast<const T *>(params[2]);
        const T *mask = static_cast<const T *>(params[3]);
        T *dx = static_cast<T *>(params[6]);
        T *dmask = static_cast<T *>(params[8]);
        const int64_t dx_bytes = mscompat::NumElements(4, shapes[6]) * sizeof(T);
        const int64_t dm_bytes = mscompat::NumElements(ndims[8], shapes[8]) * sizeof(T);
        if (cudaMemsetAsync(dx, 0, dx_bytes, s) != cudaSuccess) return kLaunchFailed;
        if (!g.use_mask && cudaMemsetAsync(dmask, 0, dm_bytes, s) != cudaSuccess)
          return kLaunchFailed;
        const int64_t coords = g.n * g.groups * g.k * g.l;
        CoordKernel<T><<<Blocks(coords), kThreads, 0, s>>>(dcols, x, offset, mask, g,
                                                           static_cast<T *>(params[7]), dmask);
        const int64_t total = g.n * g.c * g.k * g.l;
        Col2ImKernel<T><<<Blocks(total), kThreads, 0, s>>>(dcols, offset, mask, g, dx);
        return Launched();
      });
}
