// torch.nn.functional.layer_norm, fused forward and backward CPU kernels for MindSpore's
// ops.Custom(func_type="aot"):
//
//   LayerNormForward(x, w, b, coef) -> (y, mean, rstd)     coef = [eps]
//   LayerNormBackward(x, w, mean, rstd, dy) -> (dx, dw, db)
//
// x is (rows, cols) as a flat buffer (cols = numel(w): the normalised trailing dims); w and b
// are the affine parameters (ones and zeros when the front door has none); mean and rstd hold
// one value per row. PyTorch's CPU kernel (aten/src/ATen/native/cpu/layer_norm_kernel.cpp):
// the biased variance, rstd = 1 / sqrt(max(var, 0) + eps), y = (x * rstd + (-rstd * mean)) * w
// + b; the backward's dx = rstd * dy * w + b' * x + c' with ds = sum(dy * w * x), db = sum(dy *
// w), b' = (db * mean - ds) * rstd^3 / cols, c' = -b' * mean - db * rstd / cols; dw = sum over
// rows of dy * (x - mean) * rstd, db = sum over rows of dy. The row moments and the sums are
// accumulated in double (PyTorch: a float Welford for float32), the per-column sums over a
// fixed number of row blocks added in order (deterministic). float32 or float64; rows are
// split over threads.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::NumElements;

constexpr int64_t kBlocks = 32;  // row blocks of the parameter gradients (fixed: deterministic)

template <typename T>
void Forward(const T *x, const T *w, const T *b, T eps, int64_t rows, int64_t cols, T *y,
             T *mean, T *rstd) {
  mscompat::ParallelFor(rows, rows * cols, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const T *xr = x + r * cols;
      double sum = 0.0;
      for (int64_t j = 0; j < cols; ++j) sum += xr[j];
      const double m = sum / static_cast<double>(cols);
      double sq = 0.0;
      for (int64_t j = 0; j < cols; ++j) sq += (xr[j] - m) * (xr[j] - m);
      const T mu = static_cast<T>(m);
      const T var = static_cast<T>(sq / static_cast<double>(cols));
      const T inv = T(1) / std::sqrt(std::max(var, T(0)) + eps);
      const T shift = -inv * mu;
      T *yr = y + r * cols;
      for (int64_t j = 0; j < cols; ++j) yr[j] = (xr[j] * inv + shift) * w[j] + b[j];
      mean[r] = mu;
      rstd[r] = inv;
    }
  });
}

template <typename T>
void Backward(const T *x, const T *w, const T *mean, const T *rstd, const T *dy, int64_t rows,
              int64_t cols, T *dx, T *dw, T *db) {
  const int64_t blocks = std::min<int64_t>(kBlocks, rows);
  std::vector<double> part_w(static_cast<size_t>(blocks * cols), 0.0);
  std::vector<double> part_b(static_cast<size_t>(blocks * cols), 0.0);
  mscompat::ParallelFor(blocks, rows * cols, [&](int64_t b0, int64_t b1) {
    for (int64_t blk = b0; blk < b1; ++blk) {
      double *pw = part_w.data() + blk * cols, *pb = part_b.data() + blk * cols;
      for (int64_t r = blk * rows / blocks; r < (blk + 1) * rows / blocks; ++r) {
        const T *xr = x + r * cols, *gr = dy + r * cols;
        const T mu = mean[r], inv = rstd[r];
        double ds = 0.0, dbias = 0.0;
        for (int64_t j = 0; j < cols; ++j) {
          const T g = gr[j];
          ds += static_cast<double>(g * w[j]) * xr[j];
          dbias += static_cast<double>(g * w[j]);
          pw[j] += static_cast<double>(g * ((xr[j] - mu) * inv));
          pb[j] += g;
        }
        const T scale = T(1) / static_cast<T>(cols);
        const T bb = (static_cast<T>(dbias) * mu - static_cast<T>(ds)) * inv * inv * inv * scale;
        const T c = -bb * mu - static_cast<T>(dbias) * inv * scale;
        T *dxr = dx + r * cols;
        for (int64_t j = 0; j < cols; ++j) dxr[j] = inv * gr[j] * w[j] + bb * xr[j] + c;
      }
    }
  });
  for (int64_t j = 0; j < cols; ++j) {
    double sw = 0.0, sb = 0.0;
    for (int64_t blk = 0; blk < blocks; ++blk) {
      sw += part_w[blk * cols + j];
      sb += part_b[blk * cols + j];
    }
    dw[j] = static_cast<T>(sw);
    db[j] = static_cast<T>(sb);
  }
}

// One float dtype for the tensors at 0..count-1; x's elements a whole number of rows of
// numel(w); the tensors at `per_row` hold one value per row.
int Check(int *ndims, int64_t **shapes, const char **dtypes, int count,
          std::initializer_list<int> per_row, int64_t *rows, int64_t *cols) {
  const char *dt = dtypes[0];
  if (std::strcmp(dt, "float32") != 0 && std::strcmp(dt, "float64") != 0) return kBadDtype;
  for (int i = 1; i < count; ++i)
    if (std::strcmp(dtypes[i], dt) != 0) return kBadDtype;
  const int64_t n = NumElements(ndims[0], shapes[0]);
  *cols = NumElements(ndims[1], shapes[1]);
  if (*cols < 1 || n % *cols != 0) return kBadShape;
  *rows = n / *cols;
  for (int i : per_row)
    if (NumElements(ndims[i], shapes[i]) != *rows) return kBadShape;
  return kOk;
}

}  // namespace

extern "C" int LayerNormForward(int nparam, void **params, int *ndims, int64_t **shapes,
                                const char **dtypes, void *, void *) {
  if (nparam != 7) return kBadArity;
  // params: x, w (cols), b (cols), coef (1: eps), y (x's shape), mean (rows), rstd (rows)
  int64_t rows, cols;
  if (int rc = Check(ndims, shapes, dtypes, 7, {5, 6}, &rows, &cols)) return rc;
  if (NumElements(ndims[2], shapes[2]) != cols || NumElements(ndims[3], shapes[3]) != 1 ||
      !mscompat::SameShape(ndims[0], shapes[0], ndims[4], shapes[4]))
    return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    Forward(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
            static_cast<const T *>(params[2]), static_cast<const T *>(params[3])[0], rows, cols,
            static_cast<T *>(params[4]), static_cast<T *>(params[5]), static_cast<T *>(params[6]));
  });
}

extern "C" int LayerNormBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *, void *) {
  if (nparam != 8) return kBadArity;
  // params: x, w (cols), mean (rows), rstd (rows), dy (x's shape), dx, dw (cols), db (cols)
  int64_t rows, cols;
  if (int rc = Check(ndims, shapes, dtypes, 8, {2, 3}, &rows, &cols)) return rc;
  for (int i : {4, 5})
    if (!mscompat::SameShape(ndims[0], shapes[0], ndims[i], shapes[i])) return kBadShape;
  for (int i : {6, 7})
    if (NumElements(ndims[i], shapes[i]) != cols) return kBadShape;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    Backward(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
             static_cast<const T *>(params[2]), static_cast<const T *>(params[3]),
             static_cast<const T *>(params[4]), rows, cols, static_cast<T *>(params[5]),
             static_cast<T *>(params[6]), static_cast<T *>(params[7]));
  });
}
