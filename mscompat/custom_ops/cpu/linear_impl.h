// The linear-interpolation kernels' implementation (see linear_kernel.cc), compiled twice by
// fma_build.h. No include guard on purpose; MSCOMPAT_NS names the namespace of each copy.

namespace MSCOMPAT_NS {

using namespace mscompat::status;

inline float Fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline double Fma(double a, double b, double c) { return __builtin_fma(a, b, c); }

using mscompat::ParallelFor;

// One axis: output position k reads source positions i0[k], i1[k] with weights l0[k], l1[k].
template <typename T>
struct Axis {
  int64_t n = 1, o = 1;
  const int64_t *i0 = nullptr, *i1 = nullptr;
  const T *l0 = nullptr, *l1 = nullptr;
};

template <typename T>
struct Geometry {
  int64_t planes = 0;
  int dims = 0;        // spatial axes in use: the last `dims` of the three
  bool small = false;  // 2-D only: PyTorch's channels-last kernel (out_h + out_w <= 128)
  // float16 run in float32: the forward weights rounded to float16, as PyTorch stores them
  // (except in its 2-D channels-last kernel); copies of the tables, one per axis.
  std::vector<T> half_lambdas[3];
  int64_t channels = 1;  // planes are (batch, channel) pairs; the channels-last kernel's lanes
  Axis<T> ax[3];
};

// PyTorch's generic kernel (upsample_generic_Nd_kernel_impl): innermost axis first, each level
// `t_0 * w_0 + t_1 * w_1` with the first product fused: fma(t_0, w_0, t_1 * w_1).
template <typename T>
inline T Row(const T *r, const Axis<T> &a, int64_t k) {
  return Fma(r[a.i0[k]], a.l0[k], r[a.i1[k]] * a.l1[k]);
}

// The horizontal passes (Row over a whole output row) of the last two source rows used.
template <typename T>
class RowCache {
 public:
  explicit RowCache(int64_t width) : buf_(2 * width), width_(width) {}

  // The horizontal pass of `src`; never evicts the row of `keep` (the other row in use).
  const T *Get(const T *src, const Axis<T> &a, const T *keep) {
    for (int i = 0; i < 2; ++i)
      if (key_[i] == src) return buf_.data() + i * width_;
    const int slot = key_[0] == keep ? 1 : 0;
    key_[slot] = src;
    T *dst = buf_.data() + slot * width_;
    for (int64_t k = 0; k < width_; ++k) dst[k] = Row(src, a, k);
    return dst;
  }

 private:
  std::vector<T> buf_;
  int64_t width_;
  const T *key_[2] = {nullptr, nullptr};
};

template <typename T>
void Forward(const T *x, const Geometry<T> &g, T *y) {
  const Axis<T> &ad = g.ax[0], &ah = g.ax[1], &aw = g.ax[2];
  const int64_t plane_in = ad.n * ah.n * aw.n;
  const int64_t rows = g.planes * ad.o * ah.o;
  const int64_t ow = aw.o;
  ParallelFor(rows, rows * ow, [=, &g, &ad, &ah, &aw](int64_t begin, int64_t end) {
    RowCache<T> cache(g.dims == 2 && !g.small ? ow : 0);
    for (int64_t row = begin; row < end; ++row) {
      const int64_t b = row / (ad.o * ah.o);
      const int64_t dh = row % (ad.o * ah.o);
      const int64_t d = dh / ah.o, h = dh % ah.o;
      const T *p = x + b * plane_in;
      T *out = y + row * ow;
      if (g.dims == 1) {
        for (int64_t k = 0; k < ow; ++k) out[k] = Row(p, aw, k);
      } else if (g.dims == 2 && g.small) {
        // cpu_upsample_linear_channels_last: combined weights w_ij = a_i * b_j; channels in
        // whole 256-bit vectors sum right to left (fma(x00, w00, fma(x01, w01, fma(x11, w11,
        // x10 * w10)))), the remaining channels left to right (x00 * w00 fused into x01 * w01,
        // then one fused term at a time).
        const int64_t lanes = 32 / static_cast<int64_t>(sizeof(T));
        const bool vector_lane = b % g.channels < g.channels - g.channels % lanes;
        const T *r0 = p + ah.i0[h] * aw.n, *r1 = p + ah.i1[h] * aw.n;
        const T a0 = ah.l0[h], a1 = ah.l1[h];
        for (int64_t k = 0; k < ow; ++k) {
          const T b0 = aw.l0[k], b1 = aw.l1[k];
          const int64_t c0 = aw.i0[k], c1 = aw.i1[k];
          const T w00 = a0 * b0, w01 = a0 * b1, w10 = a1 * b0, w11 = a1 * b1;
          if (vector_lane) {
            out[k] = Fma(r0[c0], w00, Fma(r0[c1], w01, Fma(r1[c1], w11, r1[c0] * w10)));
          } else {
            out[k] = Fma(r1[c1], w11, Fma(r1[c0], w10, Fma(r0[c0], w00, r0[c1] * w01)));
          }
        }
      } else if (g.dims == 2) {
        // Each source row's horizontal pass is computed once and kept while consecutive output
        // rows read it (same values as computing it per output row).
        const T *r0 = p + ah.i0[h] * aw.n, *r1 = p + ah.i1[h] * aw.n;
        const T *t0 = cache.Get(r0, aw, nullptr);
        const T *t1 = cache.Get(r1, aw, r0);
        const T a0 = ah.l0[h], a1 = ah.l1[h];
        for (int64_t k = 0; k < ow; ++k) out[k] = Fma(t0[k], a0, t1[k] * a1);
      } else {
        const int64_t nhw = ah.n * aw.n;
        const T *s0 = p + ad.i0[d] * nhw, *s1 = p + ad.i1[d] * nhw;
        const T *r00 = s0 + ah.i0[h] * aw.n, *r01 = s0 + ah.i1[h] * aw.n;
        const T *r10 = s1 + ah.i0[h] * aw.n, *r11 = s1 + ah.i1[h] * aw.n;
        const T a0 = ah.l0[h], a1 = ah.l1[h], c0 = ad.l0[d], c1 = ad.l1[d];
        for (int64_t k = 0; k < ow; ++k) {
          const T t0 = Fma(Row(r00, aw, k), a0, Row(r01, aw, k) * a1);
          const T t1 = Fma(Row(r10, aw, k), a0, Row(r11, aw, k) * a1);
          out[k] = Fma(t0, c0, t1 * c1);
        }
      }
    }
  });
}

// PyTorch's cpu_upsample_linear_backward: per plane, in output order, each source element gets
// fma(weight, grad, acc), the weight being the product of the axes' lambdas (outer first).
template <typename T>
void Backward(const T *dy, const Geometry<T> &g, T *dx) {
  const Axis<T> &ad = g.ax[0], &ah = g.ax[1], &aw = g.ax[2];
  const int64_t plane_in = ad.n * ah.n * aw.n;
  const int64_t plane_out = ad.o * ah.o * aw.o;
  ParallelFor(g.planes, g.planes * (plane_in + 4 * plane_out), [=, &g, &ad, &ah, &aw](
                                                                   int64_t begin, int64_t end) {
    std::fill(dx + begin * plane_in, dx + end * plane_in, T(0));
    for (int64_t b = begin; b < end; ++b) {
      const T *src = dy + b * plane_out;
      T *dst = dx + b * plane_in;
      if (g.dims == 1) {
        for (int64_t k = 0; k < aw.o; ++k) {
          const T v = src[k];
          dst[aw.i0[k]] = Fma(aw.l0[k], v, dst[aw.i0[k]]);
          dst[aw.i1[k]] = Fma(aw.l1[k], v, dst[aw.i1[k]]);
        }
        continue;
      }
      for (int64_t d = 0; d < ad.o; ++d) {
        for (int64_t h = 0; h < ah.o; ++h) {
          const T *in = src + (d * ah.o + h) * aw.o;
          if (g.dims == 2) {
            T *r0 = dst + ah.i0[h] * aw.n, *r1 = dst + ah.i1[h] * aw.n;
            const T a0 = ah.l0[h], a1 = ah.l1[h];
            for (int64_t k = 0; k < aw.o; ++k) {
              const T v = in[k], b0 = aw.l0[k], b1 = aw.l1[k];
              const int64_t c0 = aw.i0[k], c1 = aw.i1[k];
              r0[c0] = Fma(a0 * b0, v, r0[c0]);
              r0[c1] = Fma(a0 * b1, v, r0[c1]);
              r1[c0] = Fma(a1 * b0, v, r1[c0]);
              r1[c1] = Fma(a1 * b1, v, r1[c1]);
            }
          } else {
            const int64_t nhw = ah.n * aw.n;
            T *rows[4] = {dst + ad.i0[d] * nhw + ah.i0[h] * aw.n,
                          dst + ad.i0[d] * nhw + ah.i1[h] * aw.n,
                          dst + ad.i1[d] * nhw + ah.i0[h] * aw.n,
                          dst + ad.i1[d] * nhw + ah.i1[h] * aw.n};
            const T dh[4] = {ad.l0[d] * ah.l0[h], ad.l0[d] * ah.l1[h], ad.l1[d] * ah.l0[h],
                             ad.l1[d] * ah.l1[h]};
            for (int64_t k = 0; k < aw.o; ++k) {
              const T v = in[k], b0 = aw.l0[k], b1 = aw.l1[k];
              const int64_t c0 = aw.i0[k], c1 = aw.i1[k];
              for (int r = 0; r < 4; ++r) {
                rows[r][c0] = Fma(dh[r] * b0, v, rows[r][c0]);
                rows[r][c1] = Fma(dh[r] * b1, v, rows[r][c1]);
              }
            }
          }
        }
      }
    }
  });
}

// Inputs from `first`: (idx_a (2, O_a) int64, lam_a (2, O_a) T) for a = 0, 1, 2, then opts
// (2,) int64 [small, half_weights]; the (N, C, *spatial) tensor x at `x_at`, whose rank gives the spatial
// axes in use (the last dims = rank - 2 of the three tables) and whose C the channels.
template <typename T>
int ReadGeometry(void **params, int *ndims, int64_t **shapes, int x_at, int first,
                 bool forward, Geometry<T> *g) {
  const int rank = ndims[x_at];
  if (rank < 3 || rank > 5) return kBadShape;
  const int64_t *xs = shapes[x_at];
  g->planes = xs[0] * xs[1];
  g->dims = rank - 2;
  const int opt = first + 6;
  if (ndims[opt] != 1 || shapes[opt][0] != 2) return kBadShape;
  const int64_t *opts = static_cast<const int64_t *>(params[opt]);
  g->small = opts[0] != 0 && g->dims == 2;
  const bool half = opts[1] != 0 && forward && !g->small;
  g->channels = xs[1] > 0 ? xs[1] : 1;
  for (int a = 0; a < 3; ++a) {
    const int it = first + 2 * a, lt = it + 1;
    if (ndims[it] != 2 || ndims[lt] != 2 || shapes[it][0] != 2 || shapes[lt][0] != 2 ||
        shapes[it][1] != shapes[lt][1])
      return kBadShape;
    Axis<T> &ax = g->ax[a];
    const int unused = 3 - g->dims;
    ax.n = a < unused ? 1 : xs[2 + a - unused];
    ax.o = shapes[it][1];
    const int64_t *idx = static_cast<const int64_t *>(params[it]);
    const T *lam = static_cast<const T *>(params[lt]);
    ax.i0 = idx;
    ax.i1 = idx + ax.o;
    ax.l0 = lam;
    ax.l1 = lam + ax.o;
    if (half) {  // PyTorch's float16 weights: lambda1 rounded, lambda0 = 1 - that, rounded
      std::vector<T> &h = g->half_lambdas[a];
      h.resize(2 * ax.o);
      for (int64_t k = 0; k < ax.o; ++k) {
        const float l1 = mscompat::RoundToHalf(static_cast<float>(lam[ax.o + k]));
        h[ax.o + k] = static_cast<T>(l1);
        h[k] = static_cast<T>(mscompat::RoundToHalf(1.0f - l1));
      }
      ax.l0 = h.data();
      ax.l1 = h.data() + ax.o;
    }
    if (a < unused) {
      if (ax.o != 1) return kBadShape;  // an unused leading axis
      continue;
    }
    for (int64_t k = 0; k < 2 * ax.o; ++k)
      if (idx[k] < 0 || idx[k] >= ax.n) return kBadShape;
  }
  return kOk;
}

// Whether a tensor is (N, C, *sizes of the axes in use) with x's N and C.
template <typename T>
bool IsShape(int nd, const int64_t *shape, const int64_t *xs, const Geometry<T> &g,
             bool input_side) {
  if (nd != g.dims + 2 || shape[0] != xs[0] || shape[1] != xs[1]) return false;
  for (int d = 0; d < g.dims; ++d) {
    const Axis<T> &ax = g.ax[3 - g.dims + d];
    if (shape[2 + d] != (input_side ? ax.n : ax.o)) return false;
  }
  return true;
}

template <typename T>
int RunForward(void **params, int *ndims, int64_t **shapes) {
  Geometry<T> g;
  if (int rc = ReadGeometry(params, ndims, shapes, 0, 1, true, &g)) return rc;
  if (!IsShape(ndims[8], shapes[8], shapes[0], g, false)) return kBadShape;
  Forward(static_cast<const T *>(params[0]), g, static_cast<T *>(params[8]));
  return kOk;
}

template <typename T>
int RunBackward(void **params, int *ndims, int64_t **shapes) {
  Geometry<T> g;
  if (int rc = ReadGeometry(params, ndims, shapes, 1, 2, false, &g)) return rc;
  if (!IsShape(ndims[0], shapes[0], shapes[1], g, false) ||
      !IsShape(ndims[9], shapes[9], shapes[1], g, true))
    return kBadShape;
  Backward(static_cast<const T *>(params[0]), g, static_cast<T *>(params[9]));
  return kOk;
}

}  // namespace MSCOMPAT_NS
