// The grid_sample kernels' implementation (see grid_sample_kernel.cc), compiled twice by
// fma_build.h (the AVX2 copy with MSCOMPAT_AVX2). No include guard on purpose; MSCOMPAT_NS names
// the namespace of each copy.

namespace MSCOMPAT_NS {

using namespace mscompat::status;
using mscompat::HasShape;

enum Mode { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum Padding { kZeros = 0, kBorder = 1, kReflection = 2 };

template <typename F>
void ParallelFor(int64_t n, int64_t work, F body) {
  mscompat::ParallelFor(n, work, 1 << 15, 1 << 14, body);
}

// One fused multiply-add, a * b + c with one rounding (the instruction where the CPU has it).
inline float Fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
inline double Fma(double a, double b, double c) { return __builtin_fma(a, b, c); }

// The integer type PyTorch converts coordinates to (int_same_size_t) and its conversion:
// truncation, with NaN and out-of-range values giving the lowest integer (x86 cvtt*).
template <typename T>
using Int = typename std::conditional<sizeof(T) == 4, int32_t, int64_t>::type;

template <typename T>
inline Int<T> ToInt(T v) {
  using I = Int<T>;
  const T lo = static_cast<T>(std::numeric_limits<I>::min());
  if (!(v >= lo && v < -lo)) return std::numeric_limits<I>::min();
  return static_cast<I>(v);
}

// PyTorch's maximum/minimum (NaN propagates) and its clamp (NaN -> 0).
template <typename T>
inline T Minimum(T a, T b) {
  return (std::isnan(a) || std::isnan(b)) ? std::numeric_limits<T>::quiet_NaN() : std::min(a, b);
}

// ComputeLocation: one spatial axis's unnormalize / padding, and their gradient.
template <typename T>
struct Axis {
  T max_val, scale, low, twice_span;
  bool empty, align;
  int padding;

  Axis(int64_t size, bool align_corners, int pad)
      : max_val(static_cast<T>(size - 1)), align(align_corners), padding(pad) {
    if (align_corners) {
      scale = static_cast<T>(size - 1) / 2;
      low = 0;
      twice_span = static_cast<T>(size - 1) * 2;
      empty = size <= 1;
    } else {
      scale = static_cast<T>(size) / 2;
      low = static_cast<T>(-0.5);
      twice_span = static_cast<T>(size) * 2;
      empty = size <= 0;
    }
  }

  T Unnormalize(T g) const {
    return align ? (g + T(1)) * scale : Fma(g + T(1), scale, T(-0.5));
  }

  T Clip(T v) const {  // max(v, 0) with NaN -> 0, then min with max_val
    T lo = v > T(0) ? v : T(0);
    return lo < max_val ? lo : max_val;
  }

  // Clip and its gradient multiplier (0 on and beyond the borders).
  T ClipGrad(T v, T *grad) const {
    T lo = v > T(0) ? v : T(0);
    T res = lo < max_val ? lo : max_val;
    *grad = (lo != T(0) && res != max_val) ? T(1) : T(0);
    return res;
  }

  T Reflect(T v, T *grad) const {
    if (empty) {
      if (grad) *grad = T(0);
      return T(0);
    }
    const T in = align ? v : v - low;
    const T a = std::fabs(in);
    const T flips = std::trunc(a / twice_span);
    const T extra = Fma(-flips, twice_span, a);
    const T reflected = twice_span - extra;
    const bool flip = extra > reflected;
    if (grad) *grad = (flip != (in < T(0))) ? T(-1) : T(1);
    T out = grad ? (flip ? reflected : extra) : Minimum(extra, reflected);
    return align ? out : out + low;
  }

  // The sampling coordinate of a grid value (ComputeLocation::apply).
  T Apply(T g) const {
    T x = Unnormalize(g);
    if (padding == kBorder) return Clip(x);
    if (padding == kReflection) return Clip(Reflect(x, nullptr));
    return x;
  }

  // apply_get_grad: the coordinate and d coordinate / d grid.
  T ApplyGrad(T g, T *grad) const {
    T x = Unnormalize(g);
    if (padding == kZeros) {
      *grad = scale;
      return x;
    }
    T mult = scale;
    if (padding == kReflection) {
      T refl;
      x = Reflect(x, &refl);
      mult = refl * scale;
    }
    T clip;
    x = ClipGrad(x, &clip);
    *grad = clip * mult;
    return x;
  }

  // compute_coordinates: padding of an integer-valued tap coordinate (bicubic).
  T Coordinates(T v) const {
    if (padding == kBorder) return Clip(v);
    if (padding == kReflection) return Clip(Reflect(v, nullptr));
    return v;
  }
};

template <typename T>
struct Geometry {
  int64_t n, c, h, w, ho, wo;
  int mode, padding;
  bool align;
};

template <typename T>
constexpr int64_t Step() {
  return 64 / sizeof(T);  // one 512-bit vector: PyTorch's block of points
}

template <typename T>
struct Sampler {
  const Geometry<T> &g;
  Axis<T> ax, ay;
  const bool in_bound;  // padding other than zeros: the clipped taps are always inside
  static constexpr T kA = T(-0.75);

  explicit Sampler(const Geometry<T> &geo)
      : g(geo),
        ax(geo.w, geo.align, geo.padding),
        ay(geo.h, geo.align, geo.padding),
        in_bound(geo.padding != kZeros) {}

  bool Inside(Int<T> ix, Int<T> iy) const { return ix > -1 && ix < g.w && iy > -1 && iy < g.h; }

  static void Cubic(T t, T c[4]) {
    T x = t + T(1);
    c[0] = ((kA * x - T(5) * kA) * x + T(8) * kA) * x - T(4) * kA;
    x = t;
    c[1] = Fma(Fma(kA + T(2), x, -(kA + T(3))) * x, x, T(1));
    x = T(1) - t;
    c[2] = Fma(Fma(kA + T(2), x, -(kA + T(3))) * x, x, T(1));
    x = T(2) - t;
    c[3] = ((kA * x - T(5) * kA) * x + T(8) * kA) * x - T(4) * kA;
  }

  static void CubicGrad(T t, T c[4]) {
    T x = T(-1) - t;
    c[0] = ((T(-3) * kA) * x - T(10) * kA) * x - T(8) * kA;
    x = T(0) - t;
    c[1] = ((T(-3) * (kA + T(2))) * x - T(2) * (kA + T(3))) * x;
    x = T(1) - t;
    c[2] = ((T(3) * (kA + T(2))) * x - T(2) * (kA + T(3))) * x;
    x = T(2) - t;
    c[3] = ((T(3) * kA) * x - T(10) * kA) * x + T(8) * kA;
  }

  // Offset of bicubic tap (x, y) (integer-valued coordinates) in a plane, or -1 if outside.
  int64_t Tap(T x, T y) const {
    Int<T> ix = ToInt(ax.Coordinates(x)), iy = ToInt(ay.Coordinates(y));
    if (!in_bound && !Inside(ix, iy)) return -1;
    return static_cast<int64_t>(iy) * g.w + ix;
  }

  // ---------------------------------------------------------------- forward, one point
  void Forward(const T *in, T gx, T gy, T *out, int64_t out_stride) const {
    const int64_t plane = g.h * g.w;
    if (g.mode == kBicubic) {
      T x = ax.Unnormalize(gx), y = ay.Unnormalize(gy);
      T fx = std::floor(x), fy = std::floor(y);
      T cx[4], cy[4];
      Cubic(x - fx, cx);
      Cubic(y - fy, cy);
      int64_t off[4][4];
      for (int j = 0; j < 4; ++j)
        for (int i = 0; i < 4; ++i) off[j][i] = Tap(fx + T(i - 1), fy + T(j - 1));
      for (int64_t c = 0; c < g.c; ++c, in += plane, out += out_stride) {
        T rows[4];
        for (int j = 0; j < 4; ++j) {
          T v[4];
          for (int i = 0; i < 4; ++i) v[i] = off[j][i] >= 0 ? in[off[j][i]] : T(0);
          rows[j] = (Fma(cx[0], v[0], cx[1] * v[1]) + cx[2] * v[2]) + cx[3] * v[3];
        }
        *out = Fma(cy[3], rows[3], Fma(cy[2], rows[2], Fma(cy[1], rows[1], cy[0] * rows[0])));
      }
      return;
    }
    T x = ax.Apply(gx), y = ay.Apply(gy);
    if (g.mode == kNearest) {
      Int<T> ix = ToInt(std::nearbyint(x)), iy = ToInt(std::nearbyint(y));
      bool ok = in_bound || Inside(ix, iy);
      int64_t o = static_cast<int64_t>(iy) * g.w + ix;
      for (int64_t c = 0; c < g.c; ++c, in += plane, out += out_stride) *out = ok ? in[o] : T(0);
      return;
    }
  }

  // Bilinear forward over a block of points: the corner offsets, masks and weights first,
  // then channel by channel (reads from one plane at a time; loads are branch-free).
  void BilinearForward(const T *in, const T *gr, int64_t first, int64_t len, T *out) const {
    constexpr int64_t kMax = 256;
    const int64_t points = g.ho * g.wo, plane = g.h * g.w, W = g.w;
    int64_t o[4][kMax];
    T wt[4][kMax];
    bool m[4][kMax];
    for (int64_t k = 0; k < len; ++k) {
      const int64_t p = first + k;
      T x = ax.Apply(gr[2 * p]), y = ay.Apply(gr[2 * p + 1]);
      T xw = std::floor(x), yn = std::floor(y);
      T w = x - xw, e = T(1) - w, n = y - yn, s = T(1) - n;
      wt[0][k] = s * e;
      wt[1][k] = s * w;
      wt[2][k] = n * e;
      wt[3][k] = n * w;
      Int<T> iw = ToInt(xw), ih = ToInt(yn);
      Int<T> ie = iw + 1, is = ih + 1;
      bool mw = in_bound || (iw > -1 && iw < g.w), mn = in_bound || (ih > -1 && ih < g.h);
      bool me = ie > -1 && ie < g.w, ms = is > -1 && is < g.h;
      m[0][k] = mw && mn;
      m[1][k] = me && mn;
      m[2][k] = mw && ms;
      m[3][k] = me && ms;
      const int64_t base = static_cast<int64_t>(ih) * W + iw;
      const int64_t at[4] = {base, base + 1, base + W, base + W + 1};
      for (int q = 0; q < 4; ++q) o[q][k] = m[q][k] ? at[q] : 0;  // masked: a safe read
    }
    // One point of one channel plane (loads are branch-free: a masked corner reads offset 0).
    auto point = [&](const T *src, int64_t k) {
      T v[4];
      for (int q = 0; q < 4; ++q) {
        const T r = src[o[q][k]];
        v[q] = m[q][k] ? r : T(0);
      }
      return Fma(v[3], wt[3][k], Fma(v[2], wt[2][k], Fma(v[1], wt[1][k], v[0] * wt[0][k])));
    };
#ifdef MSCOMPAT_AVX2
    if (std::is_same<T, float>::value && plane < (int64_t(1) << 31)) {
      // Eight points at a time: masked gathers (a masked-out corner reads nothing and is 0),
      // then the same multiply and fused multiply-adds as `point`.
      alignas(32) int32_t o32[4][kMax];
      alignas(32) int32_t m32[4][kMax];
      for (int q = 0; q < 4; ++q)
        for (int64_t k = 0; k < len; ++k) {
          o32[q][k] = static_cast<int32_t>(o[q][k]);
          m32[q][k] = m[q][k] ? -1 : 0;
        }
      const int64_t vec_len = len - len % 8;
      for (int64_t c = 0; c < g.c; ++c, in += plane, out += points) {
        const float *src = reinterpret_cast<const float *>(in);
        float *dst = reinterpret_cast<float *>(out) + first;
        for (int64_t k = 0; k < vec_len; k += 8) {
          __m256 v[4], w[4];
          for (int q = 0; q < 4; ++q) {
            const auto *at = reinterpret_cast<const __m256i *>(o32[q] + k);
            const auto *keep = reinterpret_cast<const __m256i *>(m32[q] + k);
            const __m256i idx = _mm256_load_si256(at);
            const __m256 mask = _mm256_castsi256_ps(_mm256_load_si256(keep));
            v[q] = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), src, idx, mask, 4);
            w[q] = _mm256_loadu_ps(reinterpret_cast<const float *>(wt[q] + k));
          }
          __m256 acc = _mm256_mul_ps(v[0], w[0]);
          acc = _mm256_fmadd_ps(v[1], w[1], acc);
          acc = _mm256_fmadd_ps(v[2], w[2], acc);
          acc = _mm256_fmadd_ps(v[3], w[3], acc);
          _mm256_storeu_ps(dst + k, acc);
        }
        for (int64_t k = vec_len; k < len; ++k) out[first + k] = point(in, k);
      }
      return;
    }
#endif
    for (int64_t c = 0; c < g.c; ++c, in += plane, out += points)
      for (int64_t k = 0; k < len; ++k) out[first + k] = point(in, k);
  }
};

template <typename T>
void Forward(const T *x, const T *grid, const Geometry<T> &g, T *y) {
  const Sampler<T> sampler(g);
  const int64_t points = g.ho * g.wo, plane = g.h * g.w;
  const int64_t blocks = (points + 255) / 256;
  ParallelFor(g.n * blocks, g.n * points * g.c, [&](int64_t begin, int64_t end) {
    for (int64_t job = begin; job < end; ++job) {
      const int64_t b = job / blocks, first = (job % blocks) * 256;
      const int64_t last = std::min(points, first + 256);
      const T *in = x + b * g.c * plane;
      const T *gr = grid + b * points * 2;
      T *out = y + b * g.c * points;
      if (g.mode == kBilinear) {
        sampler.BilinearForward(in, gr, first, last - first, out);
      } else {
        for (int64_t p = first; p < last; ++p)
          sampler.Forward(in, gr[2 * p], gr[2 * p + 1], out + p, points);
      }
    }
  });
}

// ------------------------------------------------------------------------------- backward
// One block of points (PyTorch's vector of points), in PyTorch's order: per channel, each
// corner's (tap's) contributions to grad_input over the block, then the grid gradient terms.

template <typename T>
void BilinearBlock(const Sampler<T> &s, const T *in, const T *gr, const T *gout, T *gin, T *gg,
                   int64_t p0, int64_t len) {
  constexpr int64_t kStep = Step<T>();
  const Geometry<T> &g = s.g;
  const int64_t points = g.ho * g.wo, plane = g.h * g.w, W = g.w;
  T wn[kStep], ws[kStep], ww[kStep], we[kStep], gxm[kStep], gym[kStep], gx[kStep], gy[kStep];
  int64_t o_nw[kStep], o_ne[kStep], o_sw[kStep], o_se[kStep];
  bool m_nw[kStep], m_ne[kStep], m_sw[kStep], m_se[kStep];
  for (int64_t k = 0; k < len; ++k) {
    const int64_t p = p0 + k;
    T x = s.ax.ApplyGrad(gr[2 * p], &gxm[k]), y = s.ay.ApplyGrad(gr[2 * p + 1], &gym[k]);
    T xw = std::floor(x), yn = std::floor(y);
    ww[k] = x - xw;
    we[k] = T(1) - ww[k];
    wn[k] = y - yn;
    ws[k] = T(1) - wn[k];
    Int<T> iw = ToInt(xw), ih = ToInt(yn);
    Int<T> ie = iw + 1, is = ih + 1;
    bool mw = s.in_bound || (iw > -1 && iw < g.w), mn = s.in_bound || (ih > -1 && ih < g.h);
    bool me = ie > -1 && ie < g.w, ms = is > -1 && is < g.h;
    m_nw[k] = mw && mn;
    m_ne[k] = me && mn;
    m_sw[k] = mw && ms;
    m_se[k] = me && ms;
    const int64_t base = static_cast<int64_t>(ih) * W + iw;
    o_nw[k] = m_nw[k] ? base : 0;  // masked corners read a safe element, then use 0
    o_ne[k] = m_ne[k] ? base + 1 : 0;
    o_sw[k] = m_sw[k] ? base + W : 0;
    o_se[k] = m_se[k] ? base + W + 1 : 0;
    gx[k] = gy[k] = T(0);
  }
  for (int64_t c = 0; c < g.c; ++c) {
    const T *go = gout + c * points + p0;
    const T *ip = in + c * plane;
    T *gi = gin + c * plane;
    for (int64_t k = 0; k < len; ++k)
      if (m_nw[k]) gi[o_nw[k]] += (ws[k] * we[k]) * go[k];
    for (int64_t k = 0; k < len; ++k)
      if (m_ne[k]) gi[o_ne[k]] += (ws[k] * ww[k]) * go[k];
    for (int64_t k = 0; k < len; ++k)
      if (m_sw[k]) gi[o_sw[k]] += (wn[k] * we[k]) * go[k];
    for (int64_t k = 0; k < len; ++k)
      if (m_se[k]) gi[o_se[k]] += (wn[k] * ww[k]) * go[k];
    for (int64_t k = 0; k < len; ++k) {
      const T r_nw = ip[o_nw[k]], r_ne = ip[o_ne[k]], r_sw = ip[o_sw[k]], r_se = ip[o_se[k]];
      const T v_nw = m_nw[k] ? r_nw : T(0), v_ne = m_ne[k] ? r_ne : T(0);
      const T v_sw = m_sw[k] ? r_sw : T(0), v_se = m_se[k] ? r_se : T(0);
      gx[k] = Fma(Fma(v_se - v_sw, wn[k], (v_ne - v_nw) * ws[k]), go[k], gx[k]);
      gy[k] = Fma(Fma(v_se - v_ne, ww[k], (v_sw - v_nw) * we[k]), go[k], gy[k]);
    }
  }
  for (int64_t k = 0; k < len; ++k) {
    gg[2 * (p0 + k)] = gx[k] * gxm[k];
    gg[2 * (p0 + k) + 1] = gy[k] * gym[k];
  }
}

template <typename T>
void BicubicBlock(const Sampler<T> &s, const T *in, const T *gr, const T *gout, T *gin, T *gg,
                  int64_t p0, int64_t len) {
  constexpr int64_t kStep = Step<T>();
  const Geometry<T> &g = s.g;
  const int64_t points = g.ho * g.wo, plane = g.h * g.w;
  T cx[kStep][4], cy[kStep][4], cxg[kStep][4], cyg[kStep][4], gx[kStep], gy[kStep];
  int64_t off[kStep][4][4];  // [point][x tap i][y tap j]
  for (int64_t k = 0; k < len; ++k) {
    const int64_t p = p0 + k;
    T x = s.ax.Unnormalize(gr[2 * p]), y = s.ay.Unnormalize(gr[2 * p + 1]);
    T fx = std::floor(x), fy = std::floor(y);
    Sampler<T>::Cubic(x - fx, cx[k]);
    Sampler<T>::Cubic(y - fy, cy[k]);
    Sampler<T>::CubicGrad(x - fx, cxg[k]);
    Sampler<T>::CubicGrad(y - fy, cyg[k]);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) off[k][i][j] = s.Tap(fx + T(i - 1), fy + T(j - 1));
    gx[k] = gy[k] = T(0);
  }
  for (int64_t c = 0; c < g.c; ++c) {
    const T *go = gout + c * points + p0;
    const T *ip = in + c * plane;
    T *gi = gin + c * plane;
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j) {
        for (int64_t k = 0; k < len; ++k)
          if (off[k][i][j] >= 0) gi[off[k][i][j]] += (go[k] * cx[k][i]) * cy[k][j];
        for (int64_t k = 0; k < len; ++k) {
          const T val = off[k][i][j] >= 0 ? ip[off[k][i][j]] : T(0);
          gx[k] = Fma(-((val * go[k]) * cxg[k][i]), cy[k][j], gx[k]);
          gy[k] = Fma(-((val * go[k]) * cyg[k][j]), cx[k][i], gy[k]);
        }
      }
    }
  }
  for (int64_t k = 0; k < len; ++k) {
    gg[2 * (p0 + k)] = gx[k] * s.ax.scale;
    gg[2 * (p0 + k) + 1] = gy[k] * s.ay.scale;
  }
}

template <typename T>
void Backward(const T *dy, const T *x, const T *grid, const Geometry<T> &g, T *dx, T *dgrid) {
  const Sampler<T> s(g);
  const int64_t points = g.ho * g.wo, plane = g.h * g.w;
  constexpr int64_t kStep = Step<T>();
  ParallelFor(g.n, g.n * points * g.c, [&](int64_t begin, int64_t end) {
    std::fill(dx + begin * g.c * plane, dx + end * g.c * plane, T(0));
    for (int64_t b = begin; b < end; ++b) {
      const T *in = x + b * g.c * plane;
      const T *gr = grid + b * points * 2;
      const T *gout = dy + b * g.c * points;
      T *gin = dx + b * g.c * plane;
      T *gg = dgrid + b * points * 2;
      for (int64_t p0 = 0; p0 < points; p0 += kStep) {
        const int64_t len = std::min(kStep, points - p0);
        if (g.mode == kNearest) {
          int64_t off[kStep];
          for (int64_t k = 0; k < len; ++k) {
            const int64_t p = p0 + k;
            T xx = s.ax.Apply(gr[2 * p]), yy = s.ay.Apply(gr[2 * p + 1]);
            Int<T> ix = ToInt(std::nearbyint(xx)), iy = ToInt(std::nearbyint(yy));
            off[k] = (s.in_bound || s.Inside(ix, iy)) ? static_cast<int64_t>(iy) * g.w + ix : -1;
            gg[2 * p] = gg[2 * p + 1] = T(0);
          }
          for (int64_t c = 0; c < g.c; ++c)
            for (int64_t k = 0; k < len; ++k)
              if (off[k] >= 0) gin[c * plane + off[k]] += gout[c * points + p0 + k];
        } else if (g.mode == kBilinear) {
          BilinearBlock(s, in, gr, gout, gin, gg, p0, len);
        } else {
          BicubicBlock(s, in, gr, gout, gin, gg, p0, len);
        }
      }
    }
  });
}

// Shapes and options shared by both entry points; x at params[xi], grid at params[xi + 1],
// opts at params[xi + 2].
template <typename T>
int ReadGeometry(void **params, int *ndims, int64_t **shapes, int xi, Geometry<T> *g) {
  if (ndims[xi] != 4 || ndims[xi + 1] != 4 || ndims[xi + 2] != 1 || shapes[xi + 2][0] != 3)
    return kBadShape;
  const int64_t *xs = shapes[xi], *gs = shapes[xi + 1];
  if (gs[0] != xs[0] || gs[3] != 2) return kBadShape;
  *g = {xs[0], xs[1], xs[2], xs[3], gs[1], gs[2], 0, 0, false};
  const auto *opts = static_cast<const int64_t *>(params[xi + 2]);
  if (opts[0] < 0 || opts[0] > 2 || opts[1] < 0 || opts[1] > 2 || opts[2] < 0 || opts[2] > 1)
    return kBadOption;
  g->mode = static_cast<int>(opts[0]);
  g->padding = static_cast<int>(opts[1]);
  g->align = opts[2] == 1;
  return kOk;
}

template <typename T>
int RunForward(void **params, int *ndims, int64_t **shapes) {
  Geometry<T> g;
  if (int rc = ReadGeometry(params, ndims, shapes, 0, &g)) return rc;
  if (!HasShape(ndims[3], shapes[3], {g.n, g.c, g.ho, g.wo})) return kBadShape;
  Forward(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]), g,
          static_cast<T *>(params[3]));
  return kOk;
}

template <typename T>
int RunBackward(void **params, int *ndims, int64_t **shapes) {
  Geometry<T> g;
  if (int rc = ReadGeometry(params, ndims, shapes, 1, &g)) return rc;
  if (!HasShape(ndims[0], shapes[0], {g.n, g.c, g.ho, g.wo}) ||
      !HasShape(ndims[4], shapes[4], {g.n, g.c, g.h, g.w}) ||
      !HasShape(ndims[5], shapes[5], {g.n, g.ho, g.wo, 2}))
    return kBadShape;
  Backward(static_cast<const T *>(params[0]), static_cast<const T *>(params[1]),
           static_cast<const T *>(params[2]), g, static_cast<T *>(params[4]),
           static_cast<T *>(params[5]));
  return kOk;
}

}  // namespace MSCOMPAT_NS
