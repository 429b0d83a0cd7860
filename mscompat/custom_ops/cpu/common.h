// What every kernel entry point shares: the status codes it returns, element counts, shape
// checks and the choice of a kernel instantiation by dtype. Plain host C++17 (no intrinsics, no
// threads): the CUDA kernels include it too (../cpu/common.h).
//
// Calling convention (MindSpore aot): int Fn(int nparam, void **params, int *ndims,
// int64_t **shapes, const char **dtypes, void *stream, void *extra); params holds the inputs,
// then the outputs; a non-zero return is reported by MindSpore as the kernel's failure.

#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <type_traits>

namespace mscompat {

// The entry points' status codes (`using namespace mscompat::status;` brings in these alone).
inline namespace status {
constexpr int kOk = 0;
constexpr int kBadArity = 1;      // nparam is not the entry point's
constexpr int kBadDtype = 2;      // a dtype the kernel does not take, or dtypes that differ
constexpr int kBadShape = 3;      // shapes that do not fit together, or an index out of range
constexpr int kBadOption = 4;     // an option value outside its range (grid_sample's opts)
constexpr int kLaunchFailed = 4;  // the CUDA launch failed (the CUDA kernels' own 4)
}  // namespace status

// ------------------------------------------------------------------------------ element counts

// The number of elements of a tensor of rank `ndim`.
inline int64_t NumElements(int ndim, const int64_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[i];
  return n;
}

// ------------------------------------------------------------------------------ shape checks

// Whether a and b have the same first `k` sizes.
inline bool SameLead(const int64_t *a, const int64_t *b, int k) {
  for (int i = 0; i < k; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

// Whether two shapes are equal (rank and sizes).
inline bool SameShape(int nd_a, const int64_t *a, int nd_b, const int64_t *b) {
  return nd_a == nd_b && SameLead(a, b, nd_a);
}

// Whether a tensor's shape is exactly `want`.
inline bool HasShape(int nd, const int64_t *shape, std::initializer_list<int64_t> want) {
  return nd == static_cast<int>(want.size()) && SameLead(shape, want.begin(), nd);
}

// Elementwise kernels with a parameter vector: the tensors at `same` share the first one's shape
// and one dtype, float32 or float64, and the tensor at `param` has `count` elements of that
// dtype. kOk, kBadDtype (checked first) or kBadShape.
inline int CheckElementwise(int *ndims, int64_t **shapes, const char **dtypes,
                            std::initializer_list<int> same, int param, int64_t count);

// ------------------------------------------------------------------------------ dtypes

// Whether the dtype strings at the listed parameter positions all equal `want`.
inline bool AllDtype(const char **dtypes, std::initializer_list<int> at, const char *want) {
  for (int i : at)
    if (std::strcmp(dtypes[i], want) != 0) return false;
  return true;
}

// The dtype of the listed parameter positions if they all have the same one, else "".
inline const char *SharedDtype(const char **dtypes, std::initializer_list<int> at) {
  const char *first = dtypes[*at.begin()];
  return AllDtype(dtypes, at, first) ? first : "";
}

// The dtype shared by the listed parameters if it is float32 or float64, else "".
inline const char *FloatDtype(const char **dtypes, std::initializer_list<int> at) {
  const char *dt = SharedDtype(dtypes, at);
  return (std::strcmp(dt, "float32") == 0 || std::strcmp(dt, "float64") == 0) ? dt : "";
}

// (rows, cols) of a 2-D tensor; false for another rank.
inline bool Matrix(int nd, const int64_t *shape, int64_t *n, int64_t *c) {
  if (nd != 2) return false;
  *n = shape[0];
  *c = shape[1];
  return true;
}

// Bytes per element of a MindSpore dtype name, 0 if not a plain 1/2/4/8-byte type.
inline int ElementSize(const char *dt) {
  for (const char *name : {"int8", "uint8", "bool"})
    if (std::strcmp(dt, name) == 0) return 1;
  for (const char *name : {"float16", "int16", "uint16", "bfloat16"})
    if (std::strcmp(dt, name) == 0) return 2;
  for (const char *name : {"float32", "int32", "uint32"})
    if (std::strcmp(dt, name) == 0) return 4;
  for (const char *name : {"float64", "int64", "uint64"})
    if (std::strcmp(dt, name) == 0) return 8;
  return 0;
}

inline int CheckElementwise(int *ndims, int64_t **shapes, const char **dtypes,
                            std::initializer_list<int> same, int param, int64_t count) {
  const char *dtype = SharedDtype(dtypes, same);
  if (std::strcmp(dtype, "float32") != 0 && std::strcmp(dtype, "float64") != 0) return kBadDtype;
  const int first = *same.begin();
  for (int i : same)
    if (!SameShape(ndims[first], shapes[first], ndims[i], shapes[i])) return kBadShape;
  if (std::strcmp(dtypes[param], dtype) != 0 || NumElements(ndims[param], shapes[param]) != count)
    return kBadShape;
  return kOk;
}

// Whether v is NaN (false for integer types).
template <typename T>
inline bool IsNan(T v) {
  if constexpr (std::is_floating_point<T>::value) {
    return std::isnan(v);
  } else {
    return false;
  }
}

// MindSpore's name of the dtype of T.
template <typename T>
constexpr const char *DtypeName() {
  if constexpr (std::is_same<T, float>::value) return "float32";
  if constexpr (std::is_same<T, double>::value) return "float64";
  if constexpr (std::is_same<T, int32_t>::value) return "int32";
  if constexpr (std::is_same<T, int64_t>::value) return "int64";
}

// f(T{}) as a status: f's own, or kOk where f returns nothing.
template <typename T, typename F>
int CallWith(F &f) {
  if constexpr (std::is_void<decltype(f(T{}))>::value) {
    f(T{});
    return kOk;
  } else {
    return f(T{});
  }
}

// Runs f(T{}) for the T of Ts whose dtype is `dtype` (f instantiates the kernel for
// decltype(value)); kBadDtype for any other dtype.
template <typename... Ts, typename F>
int ByDtype(const char *dtype, F &&f) {
  int rc = kBadDtype;
  (void)((std::strcmp(dtype, DtypeName<Ts>()) == 0 && ((rc = CallWith<Ts>(f)), true)) || ...);
  return rc;
}

// For kernels that only move elements: runs f(E{}) with E the unsigned integer of the dtype's
// size (uint8_t .. uint64_t); kBadDtype for a dtype of another size.
template <typename F>
int ByElementSize(const char *dtype, F &&f) {
  switch (ElementSize(dtype)) {
    case 1: return CallWith<uint8_t>(f);
    case 2: return CallWith<uint16_t>(f);
    case 4: return CallWith<uint32_t>(f);
    case 8: return CallWith<uint64_t>(f);
    default: return kBadDtype;
  }
}

}  // namespace mscompat
