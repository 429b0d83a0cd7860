// Sigmoid focal loss (MMDetection's py_sigmoid_focal_loss, elementwise part): fused forward and
// backward CUDA kernels for MindSpore's ops.Custom(func_type="aot") on GPU.
//
// Same entry points, parameters and numerics as ../cpu/focal_loss_kernel.cc:
//   FocalLossForward(pred, target, coef) -> loss               coef = [gamma, alpha] (device)
//   FocalLossBackward(pred, target, coef, dloss) -> (dpred, dtarget)
// Shapes and dtypes are checked on the host; kernels run on the stream MindSpore passes.
// Calling convention, status codes and shape checks: ../cpu/common.h.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "../cpu/common.h"

namespace {

using namespace mscompat::status;
using mscompat::NumElements;

template <typename T>
__device__ __forceinline__ T PowGamma(T pt, T gamma) {
  if (gamma == T(2)) return pt * pt;
  if (gamma == T(1)) return pt;
  if (gamma == T(0)) return T(1);
  if (gamma == T(3)) return pt * pt * pt;
  return pow(pt, gamma);
}

template <typename T>
__device__ __forceinline__ T PowGammaGrad(T pt, T gamma) {
  if (gamma == T(0)) return T(0);
  if (gamma == T(1)) return T(1);
  if (gamma == T(2)) return T(2) * pt;
  return gamma * pow(pt, gamma - T(1));
}

template <typename T>
struct Terms {
  T p, bce, pt, alpha_t;
};

template <typename T>
__device__ __forceinline__ Terms<T> Compute(T x, T t, T alpha) {
  Terms<T> r;
  const T e = exp(-fabs(x));
  r.p = x >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
  const T log_sig = fmin(x, T(0)) - log1p(e);
  r.bce = (T(1) - t) * x - log_sig;
  r.pt = (T(1) - r.p) * t + r.p * (T(1) - t);
  r.alpha_t = alpha * t + (T(1) - alpha) * (T(1) - t);
  return r;
}

template <typename T>
__global__ void ForwardKernel(const T *x, const T *t, const T *coef, T *loss, int64_t n) {
  const T gamma = coef[0], alpha = coef[1];
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)blockDim.x * gridDim.x) {
    Terms<T> r = Compute(x[i], t[i], alpha);
    loss[i] = r.bce * (r.alpha_t * PowGamma(r.pt, gamma));
  }
}

template <typename T>
__global__ void BackwardKernel(const T *x, const T *t, const T *coef, const T *dloss, T *dx, T *dt,
                               int64_t n) {
  const T gamma = coef[0], alpha = coef[1];
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)blockDim.x * gridDim.x) {
    const T xi = x[i], ti = t[i], g = dloss[i];
    Terms<T> r = Compute(xi, ti, alpha);
    const T pw = PowGamma(r.pt, gamma), dpw = PowGammaGrad(r.pt, gamma);
    const T fw = r.alpha_t * pw;
    dx[i] = g * ((r.p - ti) * fw + r.bce * r.alpha_t * dpw * (r.p * (T(1) - r.p) * (T(1) - T(2) * ti)));
    const T dpt = r.alpha_t * dpw;  // dpt/dt's two terms apart, as on CPU (NaN as PyTorch's)
    dt[i] = g * (-xi * fw + r.bce * ((alpha - (T(1) - alpha)) * pw + (dpt * (T(1) - r.p) - dpt * r.p)));
  }
}

constexpr int kThreads = 256;

int Blocks(int64_t n) {
  int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

int Launched() { return cudaGetLastError() == cudaSuccess ? kOk : kLaunchFailed; }

}  // namespace

extern "C" int FocalLossForward(int nparam, void **params, int *ndims, int64_t **shapes,
                                const char **dtypes, void *stream, void *) {
  if (nparam != 4) return kBadArity;
  // params: pred, target, coef (2 elements), loss
  if (int rc = mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1, 3}, 2, 2)) return rc;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  if (n == 0) return kOk;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    ForwardKernel<T><<<Blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
        static_cast<const T *>(params[2]), static_cast<T *>(params[3]), n);
    return Launched();
  });
}

extern "C" int FocalLossBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *stream, void *) {
  if (nparam != 6) return kBadArity;
  // params: pred, target, coef (2 elements), dloss, dpred, dtarget
  if (int rc = mscompat::CheckElementwise(ndims, shapes, dtypes, {0, 1, 3, 4, 5}, 2, 2)) return rc;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  if (n == 0) return kOk;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    BackwardKernel<T><<<Blocks(n), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
        static_cast<const T *>(params[2]), static_cast<const T *>(params[3]),
        static_cast<T *>(params[4]), static_cast<T *>(params[5]), n);
    return Launched();
  });
}
