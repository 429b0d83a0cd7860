// scatter_reduce with PyTorch's CPU semantics and its backward: index kernels for MindSpore's
// ops.Custom(func_type="aot").
//
// PyTorch (aten/src/ATen/native/cpu/ScatterGatherKernel.cpp) starts from a copy of `self`; with
// include_self=False it first writes the reduction's identity (0, 1, lowest, highest) at every
// position the index names; then each src element is combined into its position, the elements
// of one output position in increasing order along `dim`: sum/mean add, prod multiplies, amax
// takes `isnan(src) ? src : max(out, src)` (a NaN wins and sticks; a tie keeps the earlier
// value, so -0.0 vs +0.0 keeps the first), amin likewise. mean then divides by the number of
// values averaged (self counted with include_self; 1 where nothing was scattered), rounding
// down for integers.
//
//   ScatterReduce(x, idx, src, p) -> (out, bad)
//     x: (*X) float32/float64/int32/int64;  idx: (*I) int64;  src: (*S) x's dtype, with
//     I <= S in every dim and I <= X in every dim but `dim` (only src's leading I corner is
//     read);  p: int64 [dim, reduce (0 sum, 1 prod, 2 mean, 3 amax, 4 amin), include_self,
//     half];  out: x's shape;  bad: int64 (1,), the number of indices outside [0, X[dim])
//     (skipped; the front door raises on any).
//     half=1: float32 data that stands for float16 (the front door converts exactly and
//     rounds the result). PyTorch accumulates float16 in float32 (its opmath type); what it
//     rounds to float16 on the way is rounded here too: mean's sum and count before the
//     division, the backward's counts and each elementwise step.
//
//   ScatterReduceGrad(x, idx, src, out, dout, p) -> (dx, dsrc): PyTorch's
//     scatter_reduce_backward (torch/csrc/autograd/FunctionsManual.cpp), float32/float64:
//     sum: dx = dout, dsrc = dout gathered; mean: both divided by the count;
//     prod: dx = dout * prod(masked self, src) / masked self (zeros of self masked to 1),
//       dsrc = dout * out / src, or dout * (the product without it) for a position's single
//       zero;
//     amax/amin: dout split evenly among the values equal to the result (self counted even
//       with include_self=False);
//     then dx = 0 where the index writes when include_self=False. dsrc is 0 outside the
//     index's corner.
//
// Threads split the index by output lines (all coordinates but `dim`): every output element is
// written by one thread only, and sees its contributions in PyTorch's order.

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "common.h"
#include "half.h"
#include "parallel.h"

namespace {

using namespace mscompat::status;
using mscompat::IsNan;
using mscompat::ParallelFor;

constexpr int kOutOfMemory = 5;  // a scratch buffer could not be allocated

enum Reduce { kSum = 0, kProd = 1, kMean = 2, kAmax = 3, kAmin = 4 };

// The index viewed as (outer, n, inner) around `dim`, with the offsets in x and src of every
// outer and inner coordinate (the three tensors have different shapes).
struct Geometry {
  int64_t outer = 1, n = 1, inner = 1;  // the index's
  int64_t n_x = 1, stride_x = 1, stride_s = 1, size_x = 1, size_s = 1, size_i = 1;
  std::vector<int64_t> x_outer, s_outer, x_inner, s_inner;
  bool dense = false;  // x_inner[c] == s_inner[c] == c: the inner coordinates are contiguous
};

// The offsets in a and b (strides sa, sb) of every coordinate of shape[from, to), row-major.
void Offsets(const int64_t *shape, int from, int to, const int64_t *sa, const int64_t *sb,
             std::vector<int64_t> *a, std::vector<int64_t> *b) {
  int64_t count = 1;
  for (int k = from; k < to; ++k) count *= shape[k];
  a->resize(count);
  b->resize(count);
  for (int64_t i = 0; i < count; ++i) {
    int64_t rest = i, oa = 0, ob = 0;
    for (int k = to - 1; k >= from; --k) {
      const int64_t c = rest % shape[k];
      rest /= shape[k];
      oa += c * sa[k];
      ob += c * sb[k];
    }
    (*a)[i] = oa;
    (*b)[i] = ob;
  }
}

void Strides(int nd, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int k = nd - 1; k >= 0; --k) {
    strides[k] = s;
    s *= shape[k];
  }
}

// kOk and g filled, or kBadShape for shapes that do not fit together.
int MakeGeometry(int *ndims, int64_t **shapes, int64_t dim, Geometry *g) {
  const int nd = ndims[0];
  if (nd < 1 || nd > 16 || ndims[1] != nd || ndims[2] != nd || dim < 0 || dim >= nd)
    return kBadShape;
  const int64_t *xs = shapes[0], *is = shapes[1], *ss = shapes[2];
  for (int k = 0; k < nd; ++k)
    if (is[k] > ss[k] || (k != dim && is[k] > xs[k])) return kBadShape;
  int64_t xst[16], sst[16];
  Strides(nd, xs, xst);
  Strides(nd, ss, sst);
  const int d = static_cast<int>(dim);
  Offsets(is, 0, d, xst, sst, &g->x_outer, &g->s_outer);
  Offsets(is, d + 1, nd, xst, sst, &g->x_inner, &g->s_inner);
  g->outer = static_cast<int64_t>(g->x_outer.size());
  g->inner = static_cast<int64_t>(g->x_inner.size());
  g->n = is[d];
  g->n_x = xs[d];
  g->stride_x = xst[d];
  g->stride_s = sst[d];
  g->size_x = mscompat::NumElements(nd, xs);
  g->size_s = mscompat::NumElements(nd, ss);
  g->size_i = mscompat::NumElements(nd, is);
  g->dense = true;
  for (int64_t c = 0; c < g->inner && g->dense; ++c)
    g->dense = g->x_inner[c] == c && g->s_inner[c] == c;
  return kOk;
}

// f(i, s, x) for every element of the output lines [begin, end) (line = outer * inner + c), in
// increasing order along `dim` within each line: i its position in idx, s in src, x the offset
// in x of its line (add idx[i] * stride_x). Lines are walked in blocks of neighbours, row by
// row: idx and src are read in memory order, and the block's outputs (n_x rows of a few cache
// lines each) stay in cache while the index jumps between rows.
template <typename F>
void Visit(const Geometry &g, int64_t begin, int64_t end, F &&f) {
  const int64_t block = std::max<int64_t>(16, (int64_t{1} << 16) / std::max<int64_t>(g.n_x, 1));
  for (int64_t line = begin; line < end;) {
    const int64_t o = line / g.inner, c0 = line % g.inner;
    const int64_t c1 = std::min({g.inner, c0 + (end - line), c0 + block});
    const int64_t xo = g.x_outer[o];
    for (int64_t j = 0; j < g.n; ++j) {
      const int64_t ib = (o * g.n + j) * g.inner;
      const int64_t sb = g.s_outer[o] + j * g.stride_s;
      if (g.dense) {  // no offset tables to read: two loads fewer per element
        for (int64_t c = c0; c < c1; ++c) f(ib + c, sb + c, xo + c);
      } else {
        for (int64_t c = c0; c < c1; ++c) f(ib + c, sb + g.s_inner[c], xo + g.x_inner[c]);
      }
    }
    line += c1 - c0;
  }
}

// Visit over threads, by output lines.
template <typename F>
void ParallelVisit(const Geometry &g, F &&f) {
  ParallelFor(g.outer * g.inner, g.size_i, [&](int64_t begin, int64_t end) {
    Visit(g, begin, end, f);
  });
}

template <typename T>
void ParallelCopy(const T *from, T *to, int64_t n) {
  ParallelFor(n, n / 4, [=](int64_t begin, int64_t end) {
    std::memcpy(to + begin, from + begin, (end - begin) * sizeof(T));
  });
}

// Memory on 2 MiB pages where the system allows it (madvise): a scatter jumps between rows of
// its output, each on its own 4 KiB page, so the backward's random accesses to its scratch
// arrays would otherwise touch thousands of pages per block of lines.
struct HugeBuffer {
  void *data = nullptr;
  size_t bytes = 0;
  void Reserve(size_t want) {
    if (want <= bytes) return;
    std::free(data);
    const size_t huge = size_t{1} << 21;
    bytes = (want + huge - 1) / huge * huge;
    data = std::aligned_alloc(huge, bytes);
    if (data == nullptr) {
      bytes = 0;
      return;
    }
    madvise(data, bytes, MADV_HUGEPAGE);
  }
  ~HugeBuffer() { std::free(data); }
};

// Scratch memory of n elements for a kernel's temporaries (zeroed unless `zero` is false), kept
// from call to call per calling thread and slot up to 2^24 elements (fresh pages each call cost
// page faults worth a pass over the data); larger ones are freed with the object. data() is
// null if out of memory.
template <typename T>
class Scratch {
 public:
  Scratch(int slot, int64_t n, bool zero = true) {
    thread_local HugeBuffer kept[2];
    HugeBuffer &buf = n <= (int64_t{1} << 24) ? kept[slot] : own_;
    buf.Reserve(static_cast<size_t>(n) * sizeof(T));
    T *data = data_ = static_cast<T *>(buf.data);
    if (data == nullptr || !zero) return;
    ParallelFor(n, n / 4, [=](int64_t begin, int64_t end) {
      std::fill(data + begin, data + end, T(0));
    });
  }
  T *data() const { return data_; }

 private:
  HugeBuffer own_;
  T *data_ = nullptr;
};

// Rounding after each step: to float16 for half data, none otherwise.
template <typename T>
inline T Round(T v, bool half) {
  if constexpr (std::is_same<T, float>::value) return half ? mscompat::RoundToHalf(v) : v;
  return v;
}

template <typename T>
T Identity(int reduce) {
  switch (reduce) {
    case kProd: return T(1);
    case kAmax: return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                             : std::numeric_limits<T>::lowest();
    case kAmin: return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                             : std::numeric_limits<T>::max();
    default: return T(0);
  }
}

// a / b rounded down (PyTorch's floor_divide), b > 0.
template <typename T>
inline T FloorDivide(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    return a / b;
  } else {
    const T q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
  }
}

// 1 where a == b (so +0 == -0, and a NaN equals nothing), else 0, without a branch: the
// backward of amax/amin compares every value with its result, true about half the time on
// random data, and the branch the compiler made of `T(a == b)` mispredicted that often.
template <typename T>
inline T Equal(T a, T b) {
#if defined(__SSE2__)
  if constexpr (std::is_same<T, float>::value) {
    return _mm_cvtss_f32(_mm_and_ps(_mm_cmpeq_ss(_mm_set_ss(a), _mm_set_ss(b)), _mm_set_ss(1.0f)));
  } else {
    return _mm_cvtsd_f64(_mm_and_pd(_mm_cmpeq_sd(_mm_set_sd(a), _mm_set_sd(b)), _mm_set_sd(1.0)));
  }
#else
  return a == b ? T(1) : T(0);
#endif
}

// A count as PyTorch keeps it: in the data's dtype (float16 counts round above 2048).
template <typename T>
inline T CountAs(int64_t n, bool half) {
  return Round<T>(static_cast<T>(n), half);
}

template <int R, typename T>
void Accumulate(const Geometry &g, const int64_t *idx, const T *src, T *out,
                std::atomic<int64_t> *bad) {
  ParallelFor(g.outer * g.inner, g.size_i, [&](int64_t begin, int64_t end) {
    int64_t outside = 0;
    Visit(g, begin, end, [&](int64_t i, int64_t s, int64_t x) {
      const int64_t k = idx[i];
      if (k < 0 || k >= g.n_x) {
        ++outside;
        return;
      }
      T &o = out[x + k * g.stride_x];
      const T v = src[s];
      if constexpr (R == kSum || R == kMean) o = o + v;
      if constexpr (R == kProd) o = o * v;
      if constexpr (R == kAmax) o = IsNan(v) ? v : std::max(o, v);
      if constexpr (R == kAmin) o = IsNan(v) ? v : std::min(o, v);
    });
    if (outside) bad->fetch_add(outside);
  });
}

template <typename T>
int Forward(const Geometry &g, const T *x, const int64_t *idx, const T *src, int reduce,
             bool incl, bool half, T *out, int64_t *bad) {
  ParallelCopy(x, out, g.size_x);
  std::atomic<int64_t> outside{0};
  auto valid = [&](int64_t i) { return idx[i] >= 0 && idx[i] < g.n_x; };
  if (!incl) {
    const T id = Identity<T>(reduce);
    ParallelVisit(g, [&](int64_t i, int64_t, int64_t x0) {
      if (valid(i)) out[x0 + idx[i] * g.stride_x] = id;
    });
  }
  switch (reduce) {
    case kSum: Accumulate<kSum>(g, idx, src, out, &outside); break;
    case kProd: Accumulate<kProd>(g, idx, src, out, &outside); break;
    case kMean: Accumulate<kMean>(g, idx, src, out, &outside); break;
    case kAmax: Accumulate<kAmax>(g, idx, src, out, &outside); break;
    default: Accumulate<kAmin>(g, idx, src, out, &outside); break;
  }
  if (reduce == kMean) {
    const Scratch<int32_t> counts(0, g.size_x);
    int32_t *count = counts.data();
    if (count == nullptr) return kOutOfMemory;
    ParallelVisit(g, [&](int64_t i, int64_t, int64_t x0) {
      if (valid(i)) ++count[x0 + idx[i] * g.stride_x];
    });
    ParallelFor(g.size_x, g.size_x, [&](int64_t begin, int64_t end) {
      // every position (x / 1 == x where nothing was scattered): no branch on the count
      for (int64_t p = begin; p < end; ++p) {
        const int64_t n = std::max<int64_t>(count[p] + incl, 1);
        out[p] = Round<T>(FloorDivide(Round<T>(out[p], half), CountAs<T>(n, half)), half);
      }
    });
  }
  *bad = outside.load();
  return kOk;
}

// ------------------------------------------------------------------------------ backward

// The backward of sum: dx = dout, 0 where a src value landed unless include_self; dsrc = dout
// gathered at the index (0 outside). Its own loop: the general one below reads src and tests
// the reduction at every element, and took 2.5x PyTorch's gather on the bench input.
template <typename T>
void SumBackward(const Geometry &g, const int64_t *idx, const T *dout, bool incl, T *dx, T *dsrc) {
  ParallelCopy(dout, dx, g.size_x);
  if (g.size_s != g.size_i) std::memset(dsrc, 0, g.size_s * sizeof(T));
  // Visit gives each output position to one thread: the zeros of dx are written race-free.
  ParallelVisit(g, [&](int64_t i, int64_t s, int64_t x0) {
    const int64_t k = idx[i];
    if (k < 0 || k >= g.n_x) {
      dsrc[s] = T(0);
      return;
    }
    const int64_t p = x0 + k * g.stride_x;
    dsrc[s] = dout[p];
    if (!incl) dx[p] = T(0);
  });
}

template <typename T>
int Backward(const Geometry &g, const T *x, const int64_t *idx, const T *src, const T *out,
              const T *dout, int reduce, bool incl, bool half, T *dx, T *dsrc) {
  if (reduce == kSum) {
    SumBackward(g, idx, dout, incl, dx, dsrc);
    return kOk;
  }
  const int64_t n = g.size_x;
  const bool extreme = reduce == kAmax || reduce == kAmin;
  auto at = [&](int64_t i, int64_t x0) -> int64_t {
    const int64_t k = idx[i];
    return (k < 0 || k >= g.n_x) ? -1 : x0 + k * g.stride_x;
  };
  auto R = [half](T v) { return Round<T>(v, half); };
  // Per output position: hits, the src values it receives (where needed); acc, mean's count
  // or the number of src values equal to an extreme, then each value's share of the gradient;
  // (prod) the zeros among src and the two products of the backward. For amax/amin the
  // result sits next to acc (res[2p], acc[2p]): the random accesses touch one array.
  const bool need_hits = !incl || reduce == kProd, need_acc = reduce != kSum;
  const Scratch<int32_t> hits_buf(0, need_hits ? n : 0);
  const Scratch<T> acc_buf(1, need_acc ? (extreme ? 2 * n : n) : 0, !extreme);
  int32_t *hits = need_hits ? hits_buf.data() : nullptr;
  T *acc = need_acc ? acc_buf.data() : nullptr;
  if ((need_hits && hits == nullptr) || (need_acc && acc == nullptr)) return kOutOfMemory;
    T *res = extreme ? acc + 1 : nullptr;     // res[p * 2]: out, for amax/amin
  if (extreme) {  // zeroed here, not by Scratch: one pass
    ParallelFor(n, n, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        acc[2 * p] = T(0);
        res[2 * p] = out[p];
      }
    });
  }
  std::vector<T> masked_prod, nonzero_prod;
  if (reduce == kProd) {
    masked_prod.resize(n);
    nonzero_prod.assign(x, x + n);
    for (int64_t p = 0; p < n; ++p) masked_prod[p] = x[p] == T(0) ? T(1) : x[p];
  }
  if (hits != nullptr || acc != nullptr) {
    ParallelVisit(g, [&](int64_t i, int64_t s, int64_t x0) {
      const int64_t p = at(i, x0);
      if (p < 0) return;
      const T v = src[s];
      if (reduce == kMean) acc[p] += T(1);
      if (extreme) acc[2 * p] += Equal(v, res[2 * p]);
      if (reduce == kProd) {
        if (hits[p] == 0 && !incl) masked_prod[p] = nonzero_prod[p] = T(1);
        acc[p] += T(v == T(0));
        masked_prod[p] = masked_prod[p] * v;  // forward products: rounded once, when used
        nonzero_prod[p] = nonzero_prod[p] * (v == T(0) ? T(1) : v);
      }
      if (hits != nullptr) ++hits[p];
    });
  }
  ParallelFor(n, n, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      T d = dout[p];
      bool hit = hits != nullptr && hits[p] > 0;
      if (reduce == kMean) {
        hit = acc[p] > T(0);
        d = acc[p] = R(dout[p] / R(std::max(acc[p] + T(incl), T(1))));
      } else if (extreme) {
        const T self = Equal(x[p], out[p]);
        acc[2 * p] = R(dout[p] / R(self + acc[2 * p]));
        d = self * acc[2 * p];
      } else if (reduce == kProd) {
        const T masked = x[p] == T(0) ? T(1) : x[p];
        d = R(R(dout[p] * R(masked_prod[p])) / masked);
      }
      dx[p] = (!incl && hit) ? T(0) : d;
    }
  });
  if (g.size_s != g.size_i) std::memset(dsrc, 0, g.size_s * sizeof(T));
  ParallelVisit(g, [&](int64_t i, int64_t s, int64_t x0) {
    const int64_t p = at(i, x0);
    const T v = src[s];
    if (p < 0) {
      dsrc[s] = T(0);
    } else if (reduce == kProd) {
      const bool zero = v == T(0);
      dsrc[s] = (zero && acc[p] == T(1)) ? R(dout[p] * R(nonzero_prod[p]))
                                         : R(R(dout[p] * R(out[p])) / (zero ? T(1) : v));
    } else if (extreme) {
      dsrc[s] = Equal(v, res[2 * p]) * acc[2 * p];
    } else {
      dsrc[s] = reduce == kMean ? acc[p] : dout[p];
    }
  });
  return kOk;
}

}  // namespace

extern "C" int ScatterReduce(int nparam, void **params, int *ndims, int64_t **shapes,
                             const char **dtypes, void *, void *) {
  if (nparam != 6) return kBadArity;
  if (!mscompat::AllDtype(dtypes, {1, 3, 5}, "int64")) return kBadDtype;
  if (std::strcmp(mscompat::SharedDtype(dtypes, {0, 2, 4}), dtypes[0]) != 0) return kBadDtype;
  if (!mscompat::HasShape(ndims[3], shapes[3], {4}) || !mscompat::HasShape(ndims[5], shapes[5], {1}))
    return kBadShape;
  const auto *p = static_cast<const int64_t *>(params[3]);
  if (p[1] < kSum || p[1] > kAmin) return kBadOption;
  Geometry g;
  if (int rc = MakeGeometry(ndims, shapes, p[0], &g)) return rc;
  if (!mscompat::SameShape(ndims[0], shapes[0], ndims[4], shapes[4])) return kBadShape;
  const bool half = p[3] != 0;
  if (half && std::strcmp(dtypes[0], "float32") != 0) return kBadDtype;
  return mscompat::ByDtype<float, double, int32_t, int64_t>(dtypes[0], [&](auto t) {
    using T = decltype(t);
    return Forward(g, static_cast<const T *>(params[0]), static_cast<const int64_t *>(params[1]),
            static_cast<const T *>(params[2]), static_cast<int>(p[1]), p[2] != 0, half,
            static_cast<T *>(params[4]), static_cast<int64_t *>(params[5]));
  });
}

extern "C" int ScatterReduceGrad(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *, void *) {
  if (nparam != 8) return kBadArity;
  if (!mscompat::AllDtype(dtypes, {1, 5}, "int64")) return kBadDtype;
  if (std::strcmp(mscompat::SharedDtype(dtypes, {0, 2, 3, 4, 6, 7}), dtypes[0]) != 0)
    return kBadDtype;
  if (!mscompat::HasShape(ndims[5], shapes[5], {4})) return kBadShape;
  const auto *p = static_cast<const int64_t *>(params[5]);
  if (p[1] < kSum || p[1] > kAmin) return kBadOption;
  Geometry g;
  if (int rc = MakeGeometry(ndims, shapes, p[0], &g)) return rc;
  for (int at : {3, 4, 6})
    if (!mscompat::SameShape(ndims[0], shapes[0], ndims[at], shapes[at])) return kBadShape;
  if (!mscompat::SameShape(ndims[2], shapes[2], ndims[7], shapes[7])) return kBadShape;
  const bool half = p[3] != 0;
  if (half && std::strcmp(dtypes[0], "float32") != 0) return kBadDtype;
  return mscompat::ByDtype<float, double>(dtypes[0], [&](auto t) {
    using T = decltype(t);
    return Backward(g, static_cast<const T *>(params[0]), static_cast<const int64_t *>(params[1]),
             static_cast<const T *>(params[2]), static_cast<const T *>(params[3]),
             static_cast<const T *>(params[4]), static_cast<int>(p[1]), p[2] != 0, half,
             static_cast<T *>(params[6]), static_cast<T *>(params[7]));
  });
}
