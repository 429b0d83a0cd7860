// The hot loops of embedding_bag_kernel.cc, included there three times (namespace MSCOMPAT_NS,
// vectors of MSCOMPAT_VEC_BYTES): plain (32), under #pragma GCC target("avx2,fma") (32) and under
// target("avx512f") (64). The arithmetic is the same in all: each output element is its own lane,
// -ffp-contract=off leaves products and sums unfused, and the fused multiply-adds of PyTorch's
// fbgemm/axpy are std::fma everywhere (an instruction in the last two). Only Dot's order of
// partial sums depends on the width. No include guard, on purpose.

#include <cmath>
#include <cstdint>

namespace MSCOMPAT_NS {

// out += s * row (PyTorch's axpy), fused.
template <typename T>
void AddScaled(T *__restrict out, const T *__restrict row, T s, int64_t dim) {
  for (int64_t d = 0; d < dim; ++d) out[d] = std::fma(s, row[d], out[d]);
}

// Rows prefetched ahead. On a table far larger than the cache (1,000,000 x 128 float32, bags of
// 32), 16 rows took 0.46 ms where 8 took 0.52 and 4 took 0.61 (32: as 16); a table in the
// cache did not mind.
constexpr int64_t kAhead = 16;

// A vector of T (GCC's vector extension): 32 bytes, one AVX register in the AVX2 copy and two SSE
// ones in the plain copy; 64 bytes, one AVX-512 register.
template <typename T>
struct Vec {
  typedef T type __attribute__((vector_size(MSCOMPAT_VEC_BYTES)));
  // the same, read from anywhere (rows are aligned to their element only)
  typedef T loose __attribute__((vector_size(MSCOMPAT_VEC_BYTES), aligned(sizeof(T)), may_alias));
  static constexpr int kLanes = MSCOMPAT_VEC_BYTES / sizeof(T);
};

// a * x + acc per lane, fused (one instruction in the AVX2 and AVX-512 copies, which the including
// file marks with MSCOMPAT_LOOPS_FMA: the target pragma defines no __FMA__; 4 is
// _MM_FROUND_CUR_DIRECTION, all lanes unmasked).
template <typename V>
inline void Fma(const V &a, const V &x, V *acc) {
#if defined(MSCOMPAT_LOOPS_FMA) && MSCOMPAT_VEC_BYTES == 64
  if constexpr (sizeof(a[0]) == 4)
    *acc = __builtin_ia32_vfmaddps512_mask(a, x, *acc, static_cast<unsigned short>(-1), 4);
  else
    *acc = __builtin_ia32_vfmaddpd512_mask(a, x, *acc, static_cast<unsigned char>(-1), 4);
#elif defined(MSCOMPAT_LOOPS_FMA)
  if constexpr (sizeof(a[0]) == 4)
    *acc = __builtin_ia32_vfmaddps256(a, x, *acc);
  else
    *acc = __builtin_ia32_vfmaddpd256(a, x, *acc);
#else
  for (int j = 0; j < static_cast<int>(sizeof(V) / sizeof(a[0])); ++j)
    (*acc)[j] = std::fma(a[j], x[j], (*acc)[j]);
#endif
}

// sum over d of a[d] * b[d] (per_sample_weights' gradient): two vectors of fused lanes, then
// added lane by lane (PyTorch calls BLAS dot, whose order is its own: not bit-exact either way).
template <typename T>
T Dot(const T *a, const T *b, int64_t dim) {
  using V = typename Vec<T>::type;
  using U = typename Vec<T>::loose;
  constexpr int W = Vec<T>::kLanes;
  V acc[2] = {V{}, V{}};
  int64_t d = 0;
  for (; d + 2 * W <= dim; d += 2 * W) {
    Fma(V(*reinterpret_cast<const U *>(a + d)), V(*reinterpret_cast<const U *>(b + d)), &acc[0]);
    Fma(V(*reinterpret_cast<const U *>(a + d + W)), V(*reinterpret_cast<const U *>(b + d + W)),
        &acc[1]);
  }
  const V both = acc[0] + acc[1];
  T sum = 0;
  for (int j = 0; j < W; ++j) sum += both[j];
  for (; d < dim; ++d) sum = std::fma(a[d], b[d], sum);
  return sum;
}

// Columns [col, col + B) of a bag of `count` rows, row(k) the k-th: summed in order from 0 (each
// times scale[k], fused, when kScaled) in registers, then divided by `div` (a mean's count; 1: a
// sum, stored as it is). The rows are scattered in the table: row(k + kAhead) is prefetched at
// the k-th while below `more` (>= count: past the bag into the next bags' rows, else the first
// rows of every bag would wait on memory). B is a multiple of Vec<T>::kLanes: the
// accumulators are vectors, which the compiler keeps in registers (an array of T was zeroed and
// stored through the stack for every bag, a third of the time of a bag of 16).
template <typename T, int B, bool kScaled, typename Row>
void SumColumns(T *__restrict out, const Row &row, int64_t more, const T *scale, int64_t count,
                int64_t col, T div) {
  using V = typename Vec<T>::type;
  constexpr int W = Vec<T>::kLanes, N = B / W;
  static_assert(B % W == 0, "whole vectors");
  using U = typename Vec<T>::loose;
  V acc[N];
#pragma GCC unroll 16
  for (int v = 0; v < N; ++v) acc[v] = V{};
  for (int64_t k = 0; k < count; ++k) {
    const T *__restrict r = row(k) + col;
    if (k + kAhead < more) {
      const char *next = reinterpret_cast<const char *>(row(k + kAhead) + col);
      for (int j = 0; j < B * static_cast<int>(sizeof(T)); j += 64) __builtin_prefetch(next + j);
    }
    const U *x = reinterpret_cast<const U *>(r);
    if (kScaled) {
      const T s = scale[k];
#pragma GCC unroll 16
      for (int v = 0; v < N; ++v) Fma(V{} + s, V(x[v]), &acc[v]);
    } else {
#pragma GCC unroll 16
      for (int v = 0; v < N; ++v) acc[v] += x[v];
    }
  }
  U *o = reinterpret_cast<U *>(out + col);
#pragma GCC unroll 16
  for (int v = 0; v < N; ++v) o[v] = div == T(1) ? acc[v] : acc[v] / div;
}

// The last columns (fewer than a vector), one at a time.
template <typename T, typename Row>
void SumColumn(T *__restrict out, const Row &row, const T *scale, int64_t count, int64_t col,
               T div) {
  T acc = 0;
  for (int64_t k = 0; k < count; ++k)
    acc = scale ? std::fma(scale[k], row(k)[col], acc) : acc + row(k)[col];
  out[col] = div == T(1) ? acc : acc / div;
}

// Columns in blocks of 16, 8, 4, 2 and 1 vectors, the widest that fit first, each block one pass
// over the bag: a row of up to 16 vectors (256 float32 with AVX-512, 128 with AVX2) is read in one
// pass. Two passes of 64 columns over bags of 128-column rows took three times as long on a table
// larger than the cache, each row's second half fetched again; blocks of 128 columns over 64-column
// rows (four passes of one vector) took a quarter longer. The accumulators are 16 registers at
// most (AVX2 has 16, AVX-512 32).
template <typename T, bool kScaled, typename Row>
void SumRows(T *out, const Row &row, int64_t more, const T *scale, int64_t count, int64_t dim,
             T div) {
  constexpr int W = Vec<T>::kLanes;
  int64_t col = 0;
  for (; col + 16 * W <= dim; col += 16 * W)
    SumColumns<T, 16 * W, kScaled>(out, row, more, scale, count, col, div);
  if (col + 8 * W <= dim) {
    SumColumns<T, 8 * W, kScaled>(out, row, more, scale, count, col, div);
    col += 8 * W;
  }
  if (col + 4 * W <= dim) {
    SumColumns<T, 4 * W, kScaled>(out, row, more, scale, count, col, div);
    col += 4 * W;
  }
  if (col + 2 * W <= dim) {
    SumColumns<T, 2 * W, kScaled>(out, row, more, scale, count, col, div);
    col += 2 * W;
  }
  if (col + W <= dim) {
    SumColumns<T, W, kScaled>(out, row, more, scale, count, col, div);
    col += W;
  }
  for (; col < dim; ++col) SumColumn(out, row, scale, count, col, div);
}

template <typename T, typename Row>
void SumRows(T *out, const Row &row, int64_t more, const T *scale, int64_t count, int64_t dim,
             T div) {
  if (scale)
    SumRows<T, true>(out, row, more, scale, count, dim, div);
  else
    SumRows<T, false>(out, row, more, scale, count, dim, div);
}

// A bag whose rows are listed (`rows`: some renormalised, or padding left out).
template <typename T>
void SumBag(T *out, const T *const *rows, const T *scale, int64_t count, int64_t dim, T div) {
  SumRows(out, [rows](int64_t k) { return rows[k]; }, count, scale, count, dim, div);
}

// A bag whose rows are all w[idx[k]]; idx[count .. more) are the next bags' indices, prefetched
// (the caller has checked idx[0 .. max(count, more)) to be rows of w).
template <typename T, typename I>
void SumBagAt(T *out, const T *w, const I *idx, int64_t more, const T *scale, int64_t count,
              int64_t dim, T div) {
  const auto row = [=](int64_t k) { return w + static_cast<int64_t>(idx[k]) * dim; };
  SumRows(out, row, more, scale, count, dim, div);
}

// Whether every index is in [0, rows) and none is `pad` (branch-free: it vectorises).
template <typename I>
bool AllPlain(const I *idx, int64_t n, int64_t rows, int64_t pad) {
  int64_t odd = 0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = static_cast<int64_t>(idx[i]);
    odd |= static_cast<int64_t>(static_cast<uint64_t>(r) >= static_cast<uint64_t>(rows)) |
           static_cast<int64_t>(r == pad);
  }
  return odd == 0;
}

template <typename T>
void MaxRow(T *__restrict out, int64_t *__restrict at, const T *__restrict row, int64_t r,
            int64_t dim) {
  for (int64_t d = 0; d < dim; ++d) {
    const bool take = row[d] > out[d];
    out[d] = take ? row[d] : out[d];
    at[d] = take ? r : at[d];
  }
}

}  // namespace MSCOMPAT_NS
