// Sigmoid focal loss (MMDetection's py_sigmoid_focal_loss, elementwise part): fused forward and
// backward CUDA kernels for MindSpore's ops.Custom(func_type="aot") on GPU.
//
// Same entry points, parameters and numerics as ../cpu/focal_loss_kernel.cc:
//   FocalLossForward(pred, target, coef) -> loss               coef = [gamma, alpha] (device)
//   FocalLossBackward(pred, target, coef, dloss) -> (dpred, dtarget)
// Shapes and dtypes are checked on the host; kernels run on the stream MindSpore passes.

#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace {

constexpr int kOk = 0;
constexpr int kBadArity = 1;
constexpr int kBadDtype = 2;
constexpr int kBadShape = 3;
constexpr int kLaunchFailed = 4;

int64_t NumElements(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[i];
  return n;
}

bool SameShape(int nd_a, const int64_t *a, int nd_b, const int64_t *b) {
  if (nd_a != nd_b) return false;
  for (int i = 0; i < nd_a; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

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
    dt[i] = g * (-xi * fw + r.bce * ((alpha - (T(1) - alpha)) * pw + r.alpha_t * dpw * (T(1) - T(2) * r.p)));
  }
}

int Blocks(int64_t n, int threads) {
  int64_t b = (n + threads - 1) / threads;
  return static_cast<int>(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

int Dtype(const char *name) {
  if (std::strcmp(name, "float32") == 0) return 32;
  if (std::strcmp(name, "float64") == 0) return 64;
  return 0;
}

}  // namespace

extern "C" int FocalLossForward(int nparam, void **params, int *ndims, int64_t **shapes,
                                const char **dtypes, void *stream, void *extra) {
  (void)extra;
  if (nparam != 4) return kBadArity;
  const int dt = Dtype(dtypes[0]);
  if (dt == 0 || Dtype(dtypes[1]) != dt || Dtype(dtypes[2]) != dt || Dtype(dtypes[3]) != dt)
    return kBadDtype;
  if (!SameShape(ndims[0], shapes[0], ndims[1], shapes[1]) ||
      !SameShape(ndims[0], shapes[0], ndims[3], shapes[3]) || NumElements(ndims[2], shapes[2]) != 2)
    return kBadShape;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  if (n == 0) return kOk;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const int threads = 256;
  if (dt == 32) {
    ForwardKernel<float><<<Blocks(n, threads), threads, 0, s>>>(
        static_cast<const float *>(params[0]), static_cast<const float *>(params[1]),
        static_cast<const float *>(params[2]), static_cast<float *>(params[3]), n);
  } else {
    ForwardKernel<double><<<Blocks(n, threads), threads, 0, s>>>(
        static_cast<const double *>(params[0]), static_cast<const double *>(params[1]),
        static_cast<const double *>(params[2]), static_cast<double *>(params[3]), n);
  }
  return cudaGetLastError() == cudaSuccess ? kOk : kLaunchFailed;
}

extern "C" int FocalLossBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *stream, void *extra) {
  (void)extra;
  if (nparam != 6) return kBadArity;
  const int dt = Dtype(dtypes[0]);
  for (int i = 1; i < 6; ++i)
    if (Dtype(dtypes[i]) != dt) return kBadDtype;
  if (dt == 0) return kBadDtype;
  for (int i : {1, 3, 4, 5})
    if (!SameShape(ndims[0], shapes[0], ndims[i], shapes[i])) return kBadShape;
  if (NumElements(ndims[2], shapes[2]) != 2) return kBadShape;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  if (n == 0) return kOk;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const int threads = 256;
  if (dt == 32) {
    BackwardKernel<float><<<Blocks(n, threads), threads, 0, s>>>(
        static_cast<const float *>(params[0]), static_cast<const float *>(params[1]),
        static_cast<const float *>(params[2]), static_cast<const float *>(params[3]),
        static_cast<float *>(params[4]), static_cast<float *>(params[5]), n);
  } else {
    BackwardKernel<double><<<Blocks(n, threads), threads, 0, s>>>(
        static_cast<const double *>(params[0]), static_cast<const double *>(params[1]),
        static_cast<const double *>(params[2]), static_cast<const double *>(params[3]),
        static_cast<double *>(params[4]), static_cast<double *>(params[5]), n);
  }
  return cudaGetLastError() == cudaSuccess ? kOk : kLaunchFailed;
}
