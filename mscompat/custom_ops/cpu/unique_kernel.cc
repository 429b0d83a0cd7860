// The sorted distinct values of a flat tensor, with the inverse and the counts, as PyTorch's CPU
// torch.unique(sorted=True): a kernel for MindSpore's ops.Custom(func_type="aot").
//
//   UniqueSorted(x) -> values (n, x's dtype), inverse (n, int64), counts (n, int64),
//                      count (1, int64)
//   UniqueSortedCounts(x) -> values, counts, count  (the same without the inverse)
//
// x: 1-D of n > 0 elements, float16/32/64, int8/16/32/64, uint8 or bool. The first `count`
// entries of values/counts are the distinct values in ascending order and their number of
// occurrences; the rest are padding (values: the smallest value; counts: 0), so that a caller
// with a static size can cut or pad them. inverse[i] is the place of x[i]'s value in values.
// Values compare with ==: -0.0 equals +0.0 (the value kept is the first one in x) and every NaN
// is distinct (NaNs come last, in the order of x), as PyTorch's CPU kernel.
//
// The sort is a stable least-significant-digit radix sort of order-preserving unsigned keys
// (8-bit digits, a pass skipped where every key shares its digit): O(n) per pass where
// std::sort of (value, position) pairs (what PyTorch's kernel runs) is O(n log n) with
// unpredictable branches.

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "common.h"

namespace {

using namespace mscompat::status;

enum Kind { kUnsigned, kSigned, kFloat };

template <typename U>
constexpr U kSign = static_cast<U>(U(1) << (sizeof(U) * 8 - 1));
// The largest key: every NaN's.
template <typename U>
constexpr U kNanKey = static_cast<U>(~U(0));

// The unsigned key of element bits u whose order is the order of the values; every NaN gets
// kNanKey, -0.0 the key of +0.0. Every other value is the one element with its key (Decode).
template <typename U, Kind kKind>
inline U KeyOf(U u) {
  if constexpr (kKind == kUnsigned) {
    return u;
  } else if constexpr (kKind == kSigned) {
    return static_cast<U>(u ^ kSign<U>);
  } else {
    constexpr int kFrac = sizeof(U) == 2 ? 10 : sizeof(U) == 4 ? 23 : 52;
    constexpr U kInf = static_cast<U>(static_cast<U>(~U(0) ^ kSign<U>) >> kFrac << kFrac);
    const U mag = static_cast<U>(u & ~kSign<U>);
    if (mag > kInf) return kNanKey<U>;
    if (mag == 0) return kSign<U>;
    return (u & kSign<U>) ? static_cast<U>(~u) : static_cast<U>(u | kSign<U>);
  }
}

// The element bits of a key that is not NaN's or zero's (for those several elements share it).
template <typename U, Kind kKind>
inline U Decode(U key) {
  if constexpr (kKind == kUnsigned) {
    return key;
  } else if constexpr (kKind == kSigned) {
    return static_cast<U>(key ^ kSign<U>);
  } else {
    return (key & kSign<U>) ? static_cast<U>(key ^ kSign<U>) : static_cast<U>(~key);
  }
}

// Stable LSD radix sort of keys[0, n) carrying their positions: on return `order` holds the
// positions in ascending key order (equal keys in position order).
template <typename U, typename I>
void RadixSort(std::vector<U> &keys, std::vector<I> &order) {
  const int64_t n = static_cast<int64_t>(keys.size());
  constexpr int kPasses = sizeof(U);
  std::vector<int64_t> hist(static_cast<size_t>(kPasses) * 256, 0);
  for (int64_t i = 0; i < n; ++i)
    for (int p = 0; p < kPasses; ++p) ++hist[p * 256 + ((keys[i] >> (8 * p)) & 0xFF)];
  std::vector<U> keys2(n);
  std::vector<I> order2(n);
  for (int64_t i = 0; i < n; ++i) order[i] = static_cast<I>(i);
  for (int p = 0; p < kPasses; ++p) {
    int64_t *h = &hist[p * 256];
    if (h[(keys[0] >> (8 * p)) & 0xFF] == n) continue;  // one bucket: the pass keeps the order
    int64_t start = 0;
    for (int b = 0; b < 256; ++b) {
      const int64_t c = h[b];
      h[b] = start;
      start += c;
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t to = h[(keys[i] >> (8 * p)) & 0xFF]++;
      keys2[to] = keys[i];
      order2[to] = order[i];
    }
    keys.swap(keys2);
    order.swap(order2);
  }
}

// inverse: may be null (not asked for).
template <typename U, Kind kKind, typename I>
void Unique(const U *x, int64_t n, U *values, int64_t *inverse, int64_t *counts, int64_t *count) {
  std::vector<U> keys(n);
  for (int64_t i = 0; i < n; ++i) keys[i] = KeyOf<U, kKind>(x[i]);
  std::vector<I> order(n);
  RadixSort(keys, order);
  // inverse[order[i]] = run of i, written through 256 buckets of consecutive positions: the
  // direct scatter (random writes over n * 8 bytes) took 3/4 of the time at n = 1e6.
  int shift = 0;
  while (((n - 1) >> shift) >= 256) ++shift;
  std::vector<int64_t> next(inverse != nullptr ? 256 : 0);
  for (size_t b = 0; b < next.size(); ++b) next[b] = static_cast<int64_t>(b) << shift;
  std::vector<I> slot_pos(inverse != nullptr ? n : 0);
  std::vector<int64_t> slot_run(slot_pos.size());
  int64_t g = -1;
  for (int64_t i = 0; i < n; ++i) {
    const U key = keys[i];
    const bool nan = kKind == kFloat && key == kNanKey<U>;
    if (i == 0 || key != keys[i - 1] || nan) {
      ++g;
      // The value from its key (a sequential read); NaN and zero (+0.0 or -0.0: the first
      // in x) from x.
      const bool shared = kKind == kFloat && (nan || key == kSign<U>);
      values[g] = shared ? x[order[i]] : Decode<U, kKind>(key);
      counts[g] = 0;
    }
    ++counts[g];
    if (inverse != nullptr) {
      const int64_t to = next[order[i] >> shift]++;
      slot_pos[to] = order[i];
      slot_run[to] = g;
    }
  }
  if (inverse != nullptr)
    for (int64_t j = 0; j < n; ++j) inverse[slot_pos[j]] = slot_run[j];
  *count = g + 1;
  for (int64_t k = g + 1; k < n; ++k) {
    values[k] = values[0];
    counts[k] = 0;
  }
}

// params: x, values, [inverse,] counts, count.
template <typename U, Kind kKind>
void Run(void **params, int64_t n, bool with_inverse) {
  const auto *x = static_cast<const U *>(params[0]);
  auto *values = static_cast<U *>(params[1]);
  auto **out = reinterpret_cast<int64_t **>(params + 2);
  int64_t *inverse = with_inverse ? out[0] : nullptr;
  out += with_inverse;
  if (n <= INT64_C(0xFFFFFFFF)) {
    Unique<U, kKind, uint32_t>(x, n, values, inverse, out[0], out[1]);
  } else {
    Unique<U, kKind, int64_t>(x, n, values, inverse, out[0], out[1]);
  }
}

int Dispatch(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
             bool with_inverse) {
  if (nparam != 4 + with_inverse) return kBadArity;
  if (std::strcmp(dtypes[0], dtypes[1]) != 0) return kBadDtype;
  for (int out = 2; out < nparam; ++out)
    if (std::strcmp(dtypes[out], "int64") != 0) return kBadDtype;
  if (ndims[0] != 1 || shapes[0][0] < 1) return kBadShape;
  const int64_t n = shapes[0][0];
  for (int out = 1; out < nparam - 1; ++out)
    if (!mscompat::HasShape(ndims[out], shapes[out], {n})) return kBadShape;
  if (!mscompat::HasShape(ndims[nparam - 1], shapes[nparam - 1], {1})) return kBadShape;
  const char *dt = dtypes[0];
  const auto is = [dt](const char *name) { return std::strcmp(dt, name) == 0; };
  const bool inv = with_inverse;
  if (is("float16")) return Run<uint16_t, kFloat>(params, n, inv), kOk;
  if (is("float32")) return Run<uint32_t, kFloat>(params, n, inv), kOk;
  if (is("float64")) return Run<uint64_t, kFloat>(params, n, inv), kOk;
  if (is("int8")) return Run<uint8_t, kSigned>(params, n, inv), kOk;
  if (is("int16")) return Run<uint16_t, kSigned>(params, n, inv), kOk;
  if (is("int32")) return Run<uint32_t, kSigned>(params, n, inv), kOk;
  if (is("int64")) return Run<uint64_t, kSigned>(params, n, inv), kOk;
  if (is("uint8") || is("bool")) return Run<uint8_t, kUnsigned>(params, n, inv), kOk;
  return kBadDtype;
}

}  // namespace

extern "C" int UniqueSorted(int nparam, void **params, int *ndims, int64_t **shapes,
                            const char **dtypes, void *, void *) {
  return Dispatch(nparam, params, ndims, shapes, dtypes, true);
}

extern "C" int UniqueSortedCounts(int nparam, void **params, int *ndims, int64_t **shapes,
                                  const char **dtypes, void *, void *) {
  return Dispatch(nparam, params, ndims, shapes, dtypes, false);
}
