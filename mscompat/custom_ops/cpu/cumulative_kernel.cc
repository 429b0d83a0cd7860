// Running maximum / minimum with their positions, and its gradient, with PyTorch's CPU rules:
// kernels for MindSpore's ops.Custom(func_type="aot").
//
// PyTorch's cummax/cummin (aten/src/ATen/native/ReduceOps.cpp) scan each line keeping the
// current extreme `out` and its position: element x replaces it when x is NaN, or when `out` is
// not NaN and x >= out (cummax; x <= out for cummin). So equal values move the position to the
// later one, a NaN sticks (only a later NaN replaces it), and -0.0 ties with +0.0. Its gradient
// (cummaxmin_backward) scatter-adds the incoming gradient to the positions, in order.
//
//   CumExtreme(x, p=[dim, is_min]) -> values (x's shape and dtype), idx (int64)
//   CumExtremeGrad(dvalues, idx, p=[dim, is_min]) -> dx (dvalues' shape and dtype)
//
// x: float16/32/64, int8/16/32/64, uint8, bool (float16 ordered through its bits, exactly as
// PyTorch compares it as float; bool as uint8); dvalues: float16/32/64 (float16 summed in
// float and rounded once, as PyTorch's scatter_add). Each scan runs along `dim` of the tensor as it is
// ((outer, n, inner) strides, no transpose). Lines are independent, so each thread owns whole
// lines (no atomics in the gradient); large inputs are split over threads (parallel.h).

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common.h"
#include "half.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;

// A float16 element (its bits).
struct Half {
  uint16_t bits;
};

// The order key of an element and whether it is NaN: the value itself, except float16, whose
// key is a signed integer with the order of its values (-0.0 and +0.0 both 0).
template <typename T>
inline T Key(T v) {
  return v;
}
inline int32_t Key(Half v) {
  const int32_t mag = v.bits & 0x7FFF;
  return (v.bits & 0x8000) ? -mag : mag;
}
template <typename T>
inline bool IsNan(T v) {
  return mscompat::IsNan(v);
}
inline bool IsNan(Half v) { return (v.bits & 0x7FFF) > 0x7C00; }

// float16 <-> float32: exact to float; from float, v must be a float16 value (RoundToHalf'ed).
inline float ToFloat(Half h) {
  const uint32_t sign = static_cast<uint32_t>(h.bits & 0x8000) << 16;
  const uint32_t exp = (h.bits >> 10) & 0x1F, frac = h.bits & 0x3FF;
  float v;
  if (exp == 0) {  // zero or subnormal: frac * 2^-24
    v = static_cast<float>(frac) * 5.9604644775390625e-08f;
    uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    b |= sign;
    std::memcpy(&v, &b, sizeof v);
    return v;
  }
  const uint32_t b = sign | (exp == 31 ? (0xFFu << 23) | (frac << 13)
                                       : ((exp + 112) << 23) | (frac << 13));
  std::memcpy(&v, &b, sizeof v);
  return v;
}
inline Half FromFloat(float v) {  // v: a float16 value held in a float (RoundToHalf'ed)
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  const uint16_t sign = static_cast<uint16_t>((b >> 16) & 0x8000);
  const uint32_t mag = b & 0x7FFFFFFF;
  if (mag > 0x7F800000u) return Half{static_cast<uint16_t>(sign | 0x7E00)};  // NaN
  if (mag >= 0x47800000u) return Half{static_cast<uint16_t>(sign | 0x7C00)};  // >= 2^16: inf
  if (mag < 0x38800000u) {  // below 2^-14: subnormal, a multiple of 2^-24
    float a;
    std::memcpy(&a, &mag, sizeof a);
    return Half{static_cast<uint16_t>(sign | static_cast<uint16_t>(a * 16777216.0f))};
  }
  return Half{static_cast<uint16_t>(sign | (((mag >> 23) - 112) << 10) | ((mag >> 13) & 0x3FF))};
}

// Gradient sums: in T, float16's in float, rounded once (as PyTorch's scatter_add).
template <typename T>
inline T ToAcc(T v) {
  return v;
}
inline float ToAcc(Half v) { return ToFloat(v); }
template <typename T>
inline void Store(T &slot, T v) {
  slot = v;
}
inline void Store(Half &slot, float v) { slot = FromFloat(mscompat::RoundToHalf(v)); }

// The (outer, n, inner) split of a shape around `dim`; false if dim is out of range.
bool Split(int nd, const int64_t *shape, int64_t dim, int64_t *outer, int64_t *n,
           int64_t *inner) {
  if (nd < 1 || dim < 0 || dim >= nd) return false;
  *outer = *inner = 1;
  for (int d = 0; d < dim; ++d) *outer *= shape[d];
  for (int d = static_cast<int>(dim) + 1; d < nd; ++d) *inner *= shape[d];
  *n = shape[dim];
  return true;
}

// One line of n elements `stride` apart. float/double: while the extreme is not NaN, x
// replaces it unless x < out (x > out for the minimum), which covers x NaN too: one compare
// per element; once it is NaN only a NaN replaces it.
template <typename T, bool kMin>
void ScanLine(const T *x, int64_t n, int64_t stride, T *values, int64_t *idx) {
  T out = x[0];
  int64_t at = 0, i = 0;
  if constexpr (std::is_floating_point<T>::value) {
    for (; i < n && out == out; ++i) {
      const T v = x[i * stride];
      if (!(kMin ? v > out : v < out)) {
        out = v;
        at = i;
      }
      values[i * stride] = out;
      idx[i * stride] = at;
    }
    for (; i < n; ++i) {
      const T v = x[i * stride];
      if (v != v) {
        out = v;
        at = i;
      }
      values[i * stride] = out;
      idx[i * stride] = at;
    }
  } else {
    auto key = Key(out);
    bool nan = IsNan(out);
    for (; i < n; ++i) {
      const T v = x[i * stride];
      const auto kv = Key(v);
      const bool v_nan = IsNan(v);
      if (v_nan || (!nan && (kMin ? kv <= key : kv >= key))) {
        out = v;
        key = kv;
        nan = v_nan;
        at = i;
      }
      values[i * stride] = out;
      idx[i * stride] = at;
    }
  }
}

template <typename T, bool kMin>
void ScanLines(const T *x, int64_t outer, int64_t n, int64_t inner, T *values, int64_t *idx) {
  mscompat::ParallelFor(outer * inner, outer * inner * n, [=](int64_t begin, int64_t end) {
    for (int64_t line = begin; line < end; ++line) {
      const int64_t base = (line / inner) * n * inner + line % inner;
      ScanLine<T, kMin>(x + base, n, inner, values + base, idx + base);
    }
  });
}

// dx = 0, then dx[idx[i]] += dvalues[i] along each line, i ascending: each run of equal
// positions (the forward's positions only grow along a line) summed in its accumulation type
// and added once; false for an index outside [0, n).
template <typename T>
bool GradLines(const T *dv, const int64_t *idx, int64_t outer, int64_t n, int64_t inner, T *dx) {
  std::atomic<bool> ok{true};
  std::memset(static_cast<void *>(dx), 0, sizeof(T) * outer * n * inner);
  mscompat::ParallelFor(outer * inner, outer * inner * n, [&, dv, idx, dx](int64_t b, int64_t e) {
    for (int64_t line = b; line < e; ++line) {
      const int64_t base = (line / inner) * n * inner + line % inner;
      int64_t run = -1;
      decltype(ToAcc(T{})) sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        const int64_t j = idx[base + i * inner];
        if (static_cast<uint64_t>(j) >= static_cast<uint64_t>(n)) {
          ok = false;
          return;
        }
        if (j != run) {
          if (run >= 0) Store(dx[base + run * inner], ToAcc(dx[base + run * inner]) + sum);
          run = j;
          sum = 0;
        }
        sum += ToAcc(dv[base + i * inner]);
      }
      Store(dx[base + run * inner], ToAcc(dx[base + run * inner]) + sum);
    }
  });
  return ok;
}

// Runs f(T{}) with T the storage type of `dtype` (see the header); kBadDtype for others.
template <typename F>
int ByStorage(const char *dtype, F &&f) {
  if (std::strcmp(dtype, "float16") == 0) return f(Half{}), kOk;
  if (std::strcmp(dtype, "uint8") == 0 || std::strcmp(dtype, "bool") == 0) return f(uint8_t{}), kOk;
  if (std::strcmp(dtype, "int8") == 0) return f(int8_t{}), kOk;
  if (std::strcmp(dtype, "int16") == 0) return f(int16_t{}), kOk;
  return mscompat::ByDtype<float, double, int32_t, int64_t>(dtype, f);
}

}  // namespace

extern "C" int CumExtreme(int nparam, void **params, int *ndims, int64_t **shapes,
                          const char **dtypes, void *, void *) {
  if (nparam != 4) return kBadArity;
  if (!mscompat::AllDtype(dtypes, {1, 3}, "int64") || std::strcmp(dtypes[0], dtypes[2]) != 0)
    return kBadDtype;
  if (!mscompat::HasShape(ndims[1], shapes[1], {2})) return kBadShape;
  for (int out : {2, 3})
    if (!mscompat::SameShape(ndims[0], shapes[0], ndims[out], shapes[out])) return kBadShape;
  const auto *p = static_cast<const int64_t *>(params[1]);
  int64_t outer, n, inner;
  if (!Split(ndims[0], shapes[0], p[0], &outer, &n, &inner)) return kBadShape;
  if (outer * inner * n == 0) return kOk;
  auto *idx = static_cast<int64_t *>(params[3]);
  return ByStorage(dtypes[0], [&](auto t) {
    using T = decltype(t);
    const auto *x = static_cast<const T *>(params[0]);
    auto *values = static_cast<T *>(params[2]);
    if (p[1] != 0) {
      ScanLines<T, true>(x, outer, n, inner, values, idx);
    } else {
      ScanLines<T, false>(x, outer, n, inner, values, idx);
    }
  });
}

extern "C" int CumExtremeGrad(int nparam, void **params, int *ndims, int64_t **shapes,
                              const char **dtypes, void *, void *) {
  if (nparam != 4) return kBadArity;
  if (!mscompat::AllDtype(dtypes, {1, 2}, "int64") || std::strcmp(dtypes[0], dtypes[3]) != 0)
    return kBadDtype;
  if (!mscompat::HasShape(ndims[2], shapes[2], {2})) return kBadShape;
  for (int other : {1, 3})
    if (!mscompat::SameShape(ndims[0], shapes[0], ndims[other], shapes[other])) return kBadShape;
  const auto *p = static_cast<const int64_t *>(params[2]);
  int64_t outer, n, inner;
  if (!Split(ndims[0], shapes[0], p[0], &outer, &n, &inner)) return kBadShape;
  if (outer * inner * n == 0) return kOk;
  const auto *idx = static_cast<const int64_t *>(params[1]);
  int rc = kOk;
  const auto run = [&](auto t) {
    using T = decltype(t);
    if (!GradLines(static_cast<const T *>(params[0]), idx, outer, n, inner,
                   static_cast<T *>(params[3])))
      rc = kBadShape;
  };
  if (std::strcmp(dtypes[0], "float16") == 0) {
    run(Half{});
    return rc;
  }
  const int by = mscompat::ByDtype<float, double>(dtypes[0], run);
  return by != kOk ? by : rc;
}
