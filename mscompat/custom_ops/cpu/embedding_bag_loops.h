// The hot loops of embedding_bag_kernel.cc, included there twice (namespace MSCOMPAT_NS): plain,
// and under #pragma GCC target("avx2,fma"). The arithmetic is the same in both: -ffp-contract=off
// leaves products and sums unfused, and the fused multiply-adds of PyTorch's fbgemm/axpy are
// std::fma in both (an instruction in the second). No include guard, on purpose.

#include <cmath>
#include <cstdint>

namespace MSCOMPAT_NS {

// out += s * row (PyTorch's axpy), fused.
template <typename T>
void AddScaled(T *__restrict out, const T *__restrict row, T s, int64_t dim) {
  for (int64_t d = 0; d < dim; ++d) out[d] = std::fma(s, row[d], out[d]);
}

constexpr int64_t kAhead = 8;  // rows prefetched ahead

// Columns [col, col + B) of a bag of `count` rows, row(k) the k-th: summed in order from 0 (each
// times scale[k], fused, when given) in registers, then divided by `div` (a mean's count; 1: a
// sum, stored as it is); the next rows prefetched (they are scattered in the table).
template <typename T, int B, typename Row>
void SumColumns(T *__restrict out, const Row &row, const T *scale, int64_t count, int64_t col,
                T div) {
  T acc[B] = {};
  for (int64_t k = 0; k < count; ++k) {
    const T *__restrict r = row(k) + col;
    if (k + kAhead < count)
      for (int j = 0; j < B; j += 64 / static_cast<int>(sizeof(T)))
        __builtin_prefetch(row(k + kAhead) + col + j);
    if (scale) {
      const T s = scale[k];
      for (int j = 0; j < B; ++j) acc[j] = std::fma(s, r[j], acc[j]);
    } else {
      for (int j = 0; j < B; ++j) acc[j] += r[j];
    }
  }
  if (div == T(1)) {
    for (int j = 0; j < B; ++j) out[col + j] = acc[j];
  } else {
    for (int j = 0; j < B; ++j) out[col + j] = acc[j] / div;
  }
}

template <typename T, typename Row>
void SumRows(T *out, const Row &row, const T *scale, int64_t count, int64_t dim, T div) {
  constexpr int kBlock = 64 / sizeof(T) * 4;  // four cache lines: 8 AVX registers
  int64_t col = 0;
  for (; col + kBlock <= dim; col += kBlock)
    SumColumns<T, kBlock>(out, row, scale, count, col, div);
  for (; col + 8 <= dim; col += 8) SumColumns<T, 8>(out, row, scale, count, col, div);
  for (; col < dim; ++col) SumColumns<T, 1>(out, row, scale, count, col, div);
}

// A bag whose rows are listed (`rows`: some renormalised, or padding left out).
template <typename T>
void SumBag(T *out, const T *const *rows, const T *scale, int64_t count, int64_t dim, T div) {
  SumRows(out, [rows](int64_t k) { return rows[k]; }, scale, count, dim, div);
}

// A bag whose rows are all w[idx[k]] (checked by the caller).
template <typename T, typename I>
void SumBagAt(T *out, const T *w, const I *idx, const T *scale, int64_t count, int64_t dim,
              T div) {
  SumRows(out, [=](int64_t k) { return w + static_cast<int64_t>(idx[k]) * dim; }, scale, count,
          dim, div);
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
