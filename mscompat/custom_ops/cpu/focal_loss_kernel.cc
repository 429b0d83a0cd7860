// Sigmoid focal loss (MMDetection's py_sigmoid_focal_loss, elementwise part): fused forward and
// backward CPU kernels for MindSpore's ops.Custom(func_type="aot").
//
// Calling convention (MindSpore aot): int Fn(int nparam, void **params, int *ndims,
// int64_t **shapes, const char **dtypes, void *stream, void *extra); params holds the inputs,
// then the outputs. Return 0 on success; any other value becomes a RuntimeError in Python.
//
//   FocalLossForward(pred, target, coef) -> loss               coef = [gamma, alpha]
//   FocalLossBackward(pred, target, coef, dloss) -> (dpred, dtarget)
//
// pred/target/dloss/outputs have the same shape (checked here and, earlier, in Python);
// float32 or float64; coef has 2 elements of the same dtype. Each kernel is one pass over the
// data, split over threads for large inputs (MSCOMPAT_NUM_THREADS caps the count).
//
// Numerics follow PyTorch: p = sigmoid(x), log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)),
// bce = (1 - t) x - log_sigmoid(x) (stable at |x| = 1e4), pt = (1 - p) t + p (1 - t),
// loss = (alpha t + (1 - alpha)(1 - t)) pt^gamma bce.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr int kOk = 0;
constexpr int kBadArity = 1;
constexpr int kBadDtype = 2;
constexpr int kBadShape = 3;

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

int NumThreads(int64_t n) {
  if (n < (1 << 15)) return 1;
  int hw = static_cast<int>(std::thread::hardware_concurrency());
  if (hw <= 0) hw = 1;
  if (const char *env = std::getenv("MSCOMPAT_NUM_THREADS")) {
    int cap = std::atoi(env);
    if (cap > 0) hw = std::min(hw, cap);
  }
  int64_t by_size = n / (1 << 14);
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(hw, by_size)));
}

template <typename F>
void ParallelFor(int64_t n, F body) {
  int threads = NumThreads(n);
  if (threads == 1) {
    body(0, n);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  int64_t chunk = (n + threads - 1) / threads;
  for (int i = 1; i < threads; ++i) {
    int64_t begin = std::min(n, i * chunk), end = std::min(n, begin + chunk);
    pool.emplace_back([=] { body(begin, end); });
  }
  body(0, std::min(n, chunk));
  for (auto &th : pool) th.join();
}

// pt ** gamma, with PyTorch's special cases (exact squares, ones for gamma == 0).
template <typename T>
inline T PowGamma(T pt, T gamma) {
  if (gamma == T(2)) return pt * pt;
  if (gamma == T(1)) return pt;
  if (gamma == T(0)) return T(1);
  if (gamma == T(3)) return pt * pt * pt;
  return std::pow(pt, gamma);
}

// d(pt ** gamma)/d pt, PyTorch's pow backward: 0 for gamma == 0, gamma * pt^(gamma - 1).
template <typename T>
inline T PowGammaGrad(T pt, T gamma) {
  if (gamma == T(0)) return T(0);
  if (gamma == T(1)) return T(1);
  if (gamma == T(2)) return T(2) * pt;
  return gamma * std::pow(pt, gamma - T(1));
}

template <typename T>
void Forward(const T *x, const T *t, T gamma, T alpha, T *loss, int64_t n) {
  const T a_neg = T(1) - alpha;
  ParallelFor(n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const T xi = x[i], ti = t[i];
      const T e = std::exp(-std::abs(xi));
      const T p = xi >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
      const T log_sig = std::min(xi, T(0)) - std::log1p(e);
      const T bce = (T(1) - ti) * xi - log_sig;
      const T pt = (T(1) - p) * ti + p * (T(1) - ti);
      const T alpha_t = alpha * ti + a_neg * (T(1) - ti);
      loss[i] = bce * (alpha_t * PowGamma(pt, gamma));
    }
  });
}

template <typename T>
void Backward(const T *x, const T *t, T gamma, T alpha, const T *dloss, T *dx, T *dt, int64_t n) {
  const T a_neg = T(1) - alpha;
  ParallelFor(n, [=](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const T xi = x[i], ti = t[i], g = dloss[i];
      const T e = std::exp(-std::abs(xi));
      const T p = xi >= T(0) ? T(1) / (T(1) + e) : e / (T(1) + e);
      const T log_sig = std::min(xi, T(0)) - std::log1p(e);
      const T bce = (T(1) - ti) * xi - log_sig;
      const T pt = (T(1) - p) * ti + p * (T(1) - ti);
      const T alpha_t = alpha * ti + a_neg * (T(1) - ti);
      const T pw = PowGamma(pt, gamma);
      const T dpw = PowGammaGrad(pt, gamma);
      const T fw = alpha_t * pw;
      // d/dx: dbce/dx = p - t; dpt/dx = p (1 - p) (1 - 2 t)
      dx[i] = g * ((p - ti) * fw + bce * alpha_t * dpw * (p * (T(1) - p) * (T(1) - T(2) * ti)));
      // d/dt: dbce/dt = -x; dalpha_t/dt = 2 alpha - 1; dpt/dt = 1 - 2 p
      dt[i] = g * (-xi * fw + bce * ((alpha - a_neg) * pw + alpha_t * dpw * (T(1) - T(2) * p)));
    }
  });
}

enum class DType { kF32, kF64, kOther };

DType ParseDtype(const char *name) {
  if (std::strcmp(name, "float32") == 0) return DType::kF32;
  if (std::strcmp(name, "float64") == 0) return DType::kF64;
  return DType::kOther;
}

int CheckSame(int count, int *ndims, int64_t **shapes, const char **dtypes, DType *dtype) {
  *dtype = ParseDtype(dtypes[0]);
  if (*dtype == DType::kOther) return kBadDtype;
  for (int i = 1; i < count; ++i) {
    if (ParseDtype(dtypes[i]) != *dtype) return kBadDtype;
    if (!SameShape(ndims[0], shapes[0], ndims[i], shapes[i])) return kBadShape;
  }
  return kOk;
}

}  // namespace

extern "C" int FocalLossForward(int nparam, void **params, int *ndims, int64_t **shapes,
                                const char **dtypes, void *stream, void *extra) {
  (void)stream;
  (void)extra;
  if (nparam != 4) return kBadArity;
  // params: pred, target, coef, loss
  DType dtype;
  int *nd = ndims;
  int64_t **sh = shapes;
  const char *dts[4] = {dtypes[0], dtypes[1], dtypes[3], dtypes[2]};
  int nd3[3] = {nd[0], nd[1], nd[3]};
  int64_t *sh3[3] = {sh[0], sh[1], sh[3]};
  int rc = CheckSame(3, nd3, sh3, dts, &dtype);
  if (rc != kOk) return rc;
  if (ParseDtype(dtypes[2]) != dtype || NumElements(nd[2], sh[2]) != 2) return kBadShape;
  const int64_t n = NumElements(nd[0], sh[0]);
  if (dtype == DType::kF32) {
    auto *c = static_cast<const float *>(params[2]);
    Forward(static_cast<const float *>(params[0]), static_cast<const float *>(params[1]), c[0],
            c[1], static_cast<float *>(params[3]), n);
  } else {
    auto *c = static_cast<const double *>(params[2]);
    Forward(static_cast<const double *>(params[0]), static_cast<const double *>(params[1]), c[0],
            c[1], static_cast<double *>(params[3]), n);
  }
  return kOk;
}

extern "C" int FocalLossBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *stream, void *extra) {
  (void)stream;
  (void)extra;
  if (nparam != 6) return kBadArity;
  // params: pred, target, coef, dloss, dpred, dtarget
  DType dtype;
  const char *dts[5] = {dtypes[0], dtypes[1], dtypes[3], dtypes[4], dtypes[5]};
  int nd5[5] = {ndims[0], ndims[1], ndims[3], ndims[4], ndims[5]};
  int64_t *sh5[5] = {shapes[0], shapes[1], shapes[3], shapes[4], shapes[5]};
  int rc = CheckSame(5, nd5, sh5, dts, &dtype);
  if (rc != kOk) return rc;
  if (ParseDtype(dtypes[2]) != dtype || NumElements(ndims[2], shapes[2]) != 2) return kBadShape;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  if (dtype == DType::kF32) {
    auto *c = static_cast<const float *>(params[2]);
    Backward(static_cast<const float *>(params[0]), static_cast<const float *>(params[1]), c[0],
             c[1], static_cast<const float *>(params[3]), static_cast<float *>(params[4]),
             static_cast<float *>(params[5]), n);
  } else {
    auto *c = static_cast<const double *>(params[2]);
    Backward(static_cast<const double *>(params[0]), static_cast<const double *>(params[1]), c[0],
             c[1], static_cast<const double *>(params[3]), static_cast<double *>(params[4]),
             static_cast<double *>(params[5]), n);
  }
  return kOk;
}
