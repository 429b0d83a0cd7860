// Non-maximum suppression with torchvision's CPU result on the GPU: CUDA kernels for MindSpore's
// ops.Custom(func_type="aot"). Same entry points, parameters and results as
// ../cpu/nms_kernel.cc (see there for torchvision's order and arithmetic):
//
//   Nms(boxes (n, 4), scores (n), p=[threshold bits]) -> keep (n) int64, count (1) int64
//   BatchedNms(boxes, scores, idxs (n) int64, p) -> keep, count
//
// The order of the boxes is computed on the host with the CPU kernel's sorts (a stable sort by
// descending score, NaN first; for BatchedNms the final std::sort of the kept positions), so
// ties come out as on CPU. The GPU computes the suppression bitmask, as torchvision's CUDA
// kernel does: bit j of row i set when box j comes after box i in that order, IoU(i, j) >
// threshold (and, for BatchedNms, same class: per-class NMS in the global stable order is NMS in
// each class's own stable order). The IoU uses the CPU kernel's operations with explicitly
// rounded intrinsics (no fused multiply-add). The host then sweeps the mask in order.
// The mask takes n * ceil(n / 64) * 8 bytes (3 MB for 5,000 boxes).
//
// Checked against torchvision's nms/batched_nms on an H100 by tools/check_cuda.py.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "../cpu/common.h"

namespace {

using namespace mscompat::status;

constexpr int kBits = 64;

__device__ __forceinline__ float Add(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ float Sub(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ float Mul(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ float Div(float a, float b) { return __fdiv_rn(a, b); }
__device__ __forceinline__ double Add(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double Sub(double a, double b) { return __dsub_rn(a, b); }
__device__ __forceinline__ double Mul(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double Div(double a, double b) { return __ddiv_rn(a, b); }

// Boxes gathered in order (x1, y1, x2, y2, area) and their classes.
template <typename T>
__global__ void GatherKernel(const T *boxes, const int64_t *idxs, const int64_t *order, int64_t n,
                             T *sorted, int64_t *cls) {
  for (int64_t k = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; k < n;
       k += (int64_t)blockDim.x * gridDim.x) {
    const T *b = boxes + 4 * order[k];
    T *s = sorted + 5 * k;
    s[0] = b[0], s[1] = b[1], s[2] = b[2], s[3] = b[3];
    s[4] = Mul(Sub(b[2], b[0]), Sub(b[3], b[1]));
    cls[k] = idxs == nullptr ? 0 : idxs[order[k]];
  }
}

// One thread per (row i, 64-column block): torchvision's CPU arithmetic, std::max(a, b) as
// (a < b ? b : a), std::min(a, b) as (b < a ? b : a).
template <typename T>
__global__ void MaskKernel(const T *s, const int64_t *cls, int64_t n, int64_t col_blocks, T thr,
                           unsigned long long *mask) {
  const int64_t total = n * col_blocks;
  for (int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; t < total;
       t += (int64_t)blockDim.x * gridDim.x) {
    const int64_t i = t / col_blocks, cb = t % col_blocks;
    const T ix1 = s[5 * i], iy1 = s[5 * i + 1], ix2 = s[5 * i + 2], iy2 = s[5 * i + 3];
    const T iarea = s[5 * i + 4];
    unsigned long long bits = 0;
    const int64_t j0 = cb * kBits, j1 = min(n, j0 + kBits);
    for (int64_t j = max(j0, i + 1); j < j1; ++j) {
      if (cls[j] != cls[i]) continue;
      const T *b = s + 5 * j;
      const T xx1 = ix1 < b[0] ? b[0] : ix1;
      const T yy1 = iy1 < b[1] ? b[1] : iy1;
      const T xx2 = b[2] < ix2 ? b[2] : ix2;
      const T yy2 = b[3] < iy2 ? b[3] : iy2;
      const T dw = Sub(xx2, xx1), dh = Sub(yy2, yy1);
      const T w = T(0) < dw ? dw : T(0);
      const T h = T(0) < dh ? dh : T(0);
      const T inter = Mul(w, h);
      const T ovr = Div(inter, Sub(Add(iarea, b[4]), inter));
      if (ovr > thr) bits |= 1ULL << (j - j0);
    }
    mask[t] = bits;
  }
}

template <typename T>
struct Greater {
  bool operator()(const std::pair<T, int64_t> &a, const std::pair<T, int64_t> &b) const {
    return (std::isnan(a.first) && !std::isnan(b.first)) || (a.first > b.first);
  }
};

template <typename T>
T ThresholdIn(double t) {
  if (sizeof(T) == sizeof(double)) return static_cast<T>(t);
  float f = static_cast<float>(t);
  if (static_cast<double>(f) > t) f = std::nextafter(f, -INFINITY);
  return static_cast<T>(f);
}

int Blocks(int64_t n) { return static_cast<int>(std::min<int64_t>((n + 255) / 256, 4096)); }

template <typename T>
int Run(const T *boxes, const T *scores, const int64_t *idxs, const void *p, int64_t n,
        int64_t *keep, int64_t *count, cudaStream_t stream) {
  std::vector<T> host_scores(n);
  double threshold = 0;
  cudaMemcpyAsync(host_scores.data(), scores, n * sizeof(T), cudaMemcpyDeviceToHost, stream);
  cudaMemcpyAsync(&threshold, p, sizeof threshold, cudaMemcpyDeviceToHost, stream);
  if (cudaStreamSynchronize(stream) != cudaSuccess) return kLaunchFailed;
  std::vector<std::pair<T, int64_t>> pairs(n);
  for (int64_t i = 0; i < n; ++i) pairs[i] = {host_scores[i], i};
  std::stable_sort(pairs.begin(), pairs.end(), Greater<T>());
  std::vector<int64_t> order(n);
  for (int64_t i = 0; i < n; ++i) order[i] = pairs[i].second;

  const int64_t col_blocks = (n + kBits - 1) / kBits;
  int64_t *d_order = nullptr, *d_cls = nullptr;
  T *d_sorted = nullptr;
  unsigned long long *d_mask = nullptr;
  bool ok = cudaMalloc(&d_order, n * sizeof(int64_t)) == cudaSuccess &&
            cudaMalloc(&d_cls, n * sizeof(int64_t)) == cudaSuccess &&
            cudaMalloc(&d_sorted, 5 * n * sizeof(T)) == cudaSuccess &&
            cudaMalloc(&d_mask, n * col_blocks * sizeof(unsigned long long)) == cudaSuccess;
  std::vector<unsigned long long> mask;
  if (ok) {
    cudaMemcpyAsync(d_order, order.data(), n * sizeof(int64_t), cudaMemcpyHostToDevice, stream);
    GatherKernel<T><<<Blocks(n), 256, 0, stream>>>(boxes, idxs, d_order, n, d_sorted, d_cls);
    MaskKernel<T><<<Blocks(n * col_blocks), 256, 0, stream>>>(
        d_sorted, d_cls, n, col_blocks, ThresholdIn<T>(threshold), d_mask);
    mask.resize(n * col_blocks);
    cudaMemcpyAsync(mask.data(), d_mask, mask.size() * sizeof(unsigned long long),
                    cudaMemcpyDeviceToHost, stream);
    ok = cudaStreamSynchronize(stream) == cudaSuccess && cudaGetLastError() == cudaSuccess;
  }
  cudaFree(d_order), cudaFree(d_cls), cudaFree(d_sorted), cudaFree(d_mask);
  if (!ok) return kLaunchFailed;

  // The sequential sweep: a box is kept unless a kept box before it set its bit.
  std::vector<unsigned long long> removed(col_blocks, 0);
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < n; ++i) {
    if (removed[i / kBits] & (1ULL << (i % kBits))) continue;
    kept.push_back(order[i]);
    const unsigned long long *row = mask.data() + i * col_blocks;
    for (int64_t c = i / kBits; c < col_blocks; ++c) removed[c] |= row[c];
  }
  if (idxs != nullptr) {  // torchvision's per-class path: kept positions ascending, std::sort
    std::sort(kept.begin(), kept.end());
    std::vector<std::pair<T, int64_t>> by_score(kept.size());
    for (size_t k = 0; k < kept.size(); ++k) by_score[k] = {host_scores[kept[k]], kept[k]};
    std::sort(by_score.begin(), by_score.end(), Greater<T>());
    for (size_t k = 0; k < kept.size(); ++k) kept[k] = by_score[k].second;
  }
  std::vector<int64_t> out(n, -1);
  std::copy(kept.begin(), kept.end(), out.begin());
  const int64_t found = static_cast<int64_t>(kept.size());
  cudaMemcpyAsync(keep, out.data(), n * sizeof(int64_t), cudaMemcpyHostToDevice, stream);
  cudaMemcpyAsync(count, &found, sizeof found, cudaMemcpyHostToDevice, stream);
  // the host buffers must outlive the copies
  return cudaStreamSynchronize(stream) == cudaSuccess ? kOk : kLaunchFailed;
}

int Launch(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
           void *stream, bool batched) {
  if (nparam != (batched ? 6 : 5)) return kBadArity;
  const int p_at = batched ? 3 : 2;
  if (ndims[0] != 2 || shapes[0][1] != 4) return kBadShape;
  const int64_t n = shapes[0][0];
  if (!mscompat::HasShape(ndims[1], shapes[1], {n})) return kBadShape;
  if (std::strcmp(dtypes[0], dtypes[1]) != 0) return kBadDtype;
  if (!mscompat::AllDtype(dtypes, {p_at, p_at + 1, p_at + 2}, "int64")) return kBadDtype;
  if (!mscompat::HasShape(ndims[p_at], shapes[p_at], {1})) return kBadShape;
  if (!mscompat::HasShape(ndims[p_at + 1], shapes[p_at + 1], {n})) return kBadShape;
  if (batched && (std::strcmp(dtypes[2], "int64") != 0 ||
                  !mscompat::HasShape(ndims[2], shapes[2], {n})))
    return kBadShape;
  if (n == 0) return kOk;
  const int64_t *idxs = batched ? static_cast<const int64_t *>(params[2]) : nullptr;
  auto *keep = static_cast<int64_t *>(params[p_at + 1]);
  auto *count = static_cast<int64_t *>(params[p_at + 2]);
  auto s = static_cast<cudaStream_t>(stream);
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto v) {
    using T = decltype(v);
    return Run(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]), idxs,
               params[p_at], n, keep, count, s);
  });
}

}  // namespace

extern "C" int Nms(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
                   void *stream, void *) {
  return Launch(nparam, params, ndims, shapes, dtypes, stream, false);
}

extern "C" int BatchedNms(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *stream, void *) {
  return Launch(nparam, params, ndims, shapes, dtypes, stream, true);
}
