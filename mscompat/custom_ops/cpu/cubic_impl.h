// The bicubic-interpolation kernels' implementation (see cubic_kernel.cc), compiled twice by
// fma_build.h. No include guard on purpose; MSCOMPAT_NS names the namespace of each copy.

namespace MSCOMPAT_NS {

using namespace mscompat::status;
using mscompat::HasShape;

inline float Fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline double Fma(double a, double b, double c) { return __builtin_fma(a, b, c); }

// One axis: output position k reads source positions idx[j * o + k] (j = 0..3) with weights
// w[j * o + k], PyTorch's taps (clamped to the axis) and Keys' cubic coefficients (A = -0.75).
template <typename T>
struct Axis {
  int64_t n = 1, o = 1;
  std::vector<int64_t> idx;
  std::vector<T> w;
};

// get_cubic_upsample_coefficients at t. `forward`: as compiled in PyTorch's vectorized
// (AVX2/AVX-512) forward kernel file, where the compiler fuses `(A + 2) * x - (A + 3)`,
// `A * x - 5 * A` and `(...) * x + 8 * A` (measured against torch); the backward kernel's file
// is compiled without FMA.
template <typename T>
void Coefficients(T t, bool forward, T *c) {
  const T a = T(-0.75);
  auto near = [&](T x) -> T {  // cubic_convolution1, |x| <= 1
    const T r = forward ? Fma(a + 2, x, -(a + 3)) : (a + 2) * x - (a + 3);
    return r * x * x + 1;
  };
  auto far = [&](T x) -> T {  // cubic_convolution2, 1 < |x| < 2
    const T r = forward ? Fma(Fma(a, x, -(5 * a)), x, 8 * a) : (a * x - 5 * a) * x + 8 * a;
    return r * x - 4 * a;
  };
  const T x2 = T(1) - t;
  c[0] = far(t + T(1));
  c[1] = near(t);
  c[2] = near(x2);
  c[3] = far(x2 + T(1));
}

// guard_index_and_lambda and the four clamped taps of every output position from its source
// coordinate `src` (PyTorch's area_pixel_compute_source_index, computed by the caller).
template <typename T>
void MakeAxis(const T *src, int64_t n, int64_t o, bool forward, bool half_weights,
              Axis<T> *ax) {
  ax->n = n;
  ax->o = o;
  ax->idx.resize(4 * o);
  ax->w.resize(4 * o);
  for (int64_t k = 0; k < o; ++k) {
    const T real = src[k];
    // floorf, as PyTorch: a float64 coordinate is rounded to float32 before it is floored
    const int64_t i = std::min(static_cast<int64_t>(std::floor(static_cast<float>(real))), n - 1);
    const T lambda = std::min(std::max(real - static_cast<T>(i), T(0)), T(1));
    T c[4];
    Coefficients(lambda, forward, c);
    for (int j = 0; j < 4; ++j) {
      ax->idx[j * o + k] = std::max<int64_t>(std::min<int64_t>(i - 1 + j, n - 1), 0);
      const T v = c[j];
      ax->w[j * o + k] = half_weights ? static_cast<T>(mscompat::RoundToHalf(static_cast<float>(v)))
                                      : v;
    }
  }
}

using mscompat::ParallelFor;

// PyTorch's generic kernel (Interpolate<n, ..., 4>): per level t_0 * w_0 + t_1 * w_1 with the
// first product fused, then the two remaining terms fused one at a time.
template <typename T>
inline T Sum4(T t0, T t1, T t2, T t3, const T *w, int64_t o, int64_t k) {
  const T s = Fma(t0, w[k], t1 * w[o + k]);
  return Fma(t3, w[3 * o + k], Fma(t2, w[2 * o + k], s));
}

// The horizontal passes of the last four source rows used (exactly the values a per-output
// computation gives: a row's pass does not depend on the output row).
template <typename T>
class RowCache {
 public:
  explicit RowCache(int64_t width) : buf_(4 * width), width_(width) {}

  const T *Get(const T *src, const Axis<T> &a, const T *const *keep) {
    for (int i = 0; i < 4; ++i)
      if (key_[i] == src) return buf_.data() + i * width_;
    int slot = 0;
    while (key_[slot] == keep[0] || key_[slot] == keep[1] || key_[slot] == keep[2] ||
           key_[slot] == keep[3])
      ++slot;  // at most three of the four slots hold the other rows in use
    key_[slot] = src;
    T *dst = buf_.data() + slot * width_;
    const int64_t *i = a.idx.data();
    const int64_t o = a.o;
    for (int64_t k = 0; k < o; ++k)
      dst[k] = Sum4(src[i[k]], src[i[o + k]], src[i[2 * o + k]], src[i[3 * o + k]], a.w.data(),
                    o, k);
    return dst;
  }

 private:
  std::vector<T> buf_;
  int64_t width_;
  const T *key_[4] = {nullptr, nullptr, nullptr, nullptr};
};

template <typename T>
void Forward(const T *x, int64_t planes, const Axis<T> &ah, const Axis<T> &aw, T *y) {
  const int64_t rows = planes * ah.o, ow = aw.o, plane_in = ah.n * aw.n;
  ParallelFor(rows, rows * ow * 4, [=, &ah, &aw](int64_t begin, int64_t end) {
    RowCache<T> cache(ow);
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / ah.o, h = row % ah.o;
      const T *p = x + b * plane_in;
      const T *src[4] = {nullptr, nullptr, nullptr, nullptr};
      const T *pass[4];
      for (int j = 0; j < 4; ++j) src[j] = p + ah.idx[j * ah.o + h] * aw.n;
      for (int j = 0; j < 4; ++j) pass[j] = cache.Get(src[j], aw, src);
      T *out = y + row * ow;
      for (int64_t k = 0; k < ow; ++k)
        out[k] = Sum4(pass[0][k], pass[1][k], pass[2][k], pass[3][k], ah.w.data(), ah.o, h);
    }
  });
}

// PyTorch's upsample_bicubic2d_backward_out_frame: per plane, in output order, the 16 taps
// (width tap outer) each get `dy * w_h * w_w` added.
template <typename T>
void Backward(const T *dy, int64_t planes, const Axis<T> &ah, const Axis<T> &aw, T *dx) {
  const int64_t plane_in = ah.n * aw.n, plane_out = ah.o * aw.o;
  ParallelFor(planes, planes * (plane_in + 16 * plane_out), [=, &ah, &aw](int64_t begin,
                                                                         int64_t end) {
    std::fill(dx + begin * plane_in, dx + end * plane_in, T(0));
    for (int64_t b = begin; b < end; ++b) {
      const T *src = dy + b * plane_out;
      T *dst = dx + b * plane_in;
      for (int64_t h = 0; h < ah.o; ++h) {
        for (int64_t k = 0; k < aw.o; ++k) {
          const T v = src[h * aw.o + k];
          for (int ii = 0; ii < 4; ++ii) {
            const int64_t c = aw.idx[ii * aw.o + k];
            const T wx = aw.w[ii * aw.o + k];
            for (int jj = 0; jj < 4; ++jj)
              dst[ah.idx[jj * ah.o + h] * aw.n + c] += v * ah.w[jj * ah.o + h] * wx;
          }
        }
      }
    }
  });
}

// Inputs from `first`: src_h (2, OH) and src_w (2, OW) in T (row 0 the forward kernel's source
// coordinates, row 1 the backward kernel's), then opts (1,) int64 [half_weights]; the (N, C, H,
// W) tensor at `x_at`.
template <typename T>
int ReadAxes(void **params, int *ndims, int64_t **shapes, int x_at, int first, bool forward,
             Axis<T> *ah, Axis<T> *aw) {
  if (ndims[x_at] != 4) return kBadShape;
  const int64_t *xs = shapes[x_at];
  for (int a = 0; a < 2; ++a)
    if (ndims[first + a] != 2 || shapes[first + a][0] != 2) return kBadShape;
  const int opt = first + 2;
  if (ndims[opt] != 1 || shapes[opt][0] != 1) return kBadShape;
  const bool half = static_cast<const int64_t *>(params[opt])[0] != 0 && forward;
  const int row = forward ? 0 : 1;
  const int64_t oh = shapes[first][1], ow = shapes[first + 1][1];
  MakeAxis(static_cast<const T *>(params[first]) + row * oh, xs[2], oh, forward, half, ah);
  MakeAxis(static_cast<const T *>(params[first + 1]) + row * ow, xs[3], ow, forward, half, aw);
  return kOk;
}

template <typename T>
int RunForward(void **params, int *ndims, int64_t **shapes) {
  Axis<T> ah, aw;
  if (int rc = ReadAxes(params, ndims, shapes, 0, 1, true, &ah, &aw)) return rc;
  const int64_t *xs = shapes[0];
  if (!HasShape(ndims[4], shapes[4], {xs[0], xs[1], ah.o, aw.o})) return kBadShape;
  Forward(static_cast<const T *>(params[0]), xs[0] * xs[1], ah, aw, static_cast<T *>(params[4]));
  return kOk;
}

template <typename T>
int RunBackward(void **params, int *ndims, int64_t **shapes) {
  Axis<T> ah, aw;
  if (int rc = ReadAxes(params, ndims, shapes, 1, 2, false, &ah, &aw)) return rc;
  const int64_t *xs = shapes[1];
  if (!HasShape(ndims[0], shapes[0], {xs[0], xs[1], ah.o, aw.o}) ||
      !HasShape(ndims[5], shapes[5], {xs[0], xs[1], xs[2], xs[3]}))
    return kBadShape;
  const T *dy = static_cast<const T *>(params[0]);
  T *dx = static_cast<T *>(params[5]);
  if (ah.o == ah.n && aw.o == aw.n) {  // PyTorch copies the gradient when the sizes are equal
    std::copy(dy, dy + xs[0] * xs[1] * xs[2] * xs[3], dx);
    return kOk;
  }
  Backward(dy, xs[0] * xs[1], ah, aw, dx);
  return kOk;
}

}  // namespace MSCOMPAT_NS
