// What the RoI pooling kernels share (roi_kernel.cc, roi_pool.h): torchvision's float16
// arithmetic, the kernels' parameters and dimensions, and the loads, stores and layout helpers.

#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "half.h"
#include "parallel.h"

namespace mscompat {
namespace roi {

// float16 arithmetic as c10::Half: the value is a float16 number held in a float; each result
// is rounded to float16.
struct Half16 {
  float v = 0.0f;
  Half16() = default;
  explicit Half16(float x) : v(mscompat::RoundToHalf(x)) {}
  explicit Half16(double x) : v(mscompat::RoundToHalf(static_cast<float>(x))) {}
  explicit Half16(int x) : v(mscompat::RoundToHalf(static_cast<float>(x))) {}
  explicit Half16(int64_t x) : v(mscompat::RoundToHalf(static_cast<float>(x))) {}
};
inline Half16 operator+(Half16 a, Half16 b) { return Half16(a.v + b.v); }
inline Half16 operator-(Half16 a, Half16 b) { return Half16(a.v - b.v); }
inline Half16 operator*(Half16 a, Half16 b) { return Half16(a.v * b.v); }
inline Half16 operator/(Half16 a, Half16 b) { return Half16(a.v / b.v); }
inline Half16 &operator+=(Half16 &a, Half16 b) { return a = a + b; }

// The arithmetic value (float16 numbers compare and convert as floats).
inline float Val(Half16 h) { return h.v; }
inline float Val(float x) { return x; }
inline double Val(double x) { return x; }

// T: the arithmetic type (float, double, Half16); S: the storage type (float, double).
template <typename T, typename S>
inline T Load(S v) {
  return T(v);  // a float16 value held in a float: exact
}

struct Params {
  int64_t sampling_ratio = 0;
  bool aligned = false;
  bool half = false;
  double spatial_scale = 1.0;
};

inline Params ReadParams(const int64_t *p) {
  Params out;
  out.sampling_ratio = p[0];
  out.aligned = p[1] != 0;
  out.half = p[2] != 0;
  std::memcpy(&out.spatial_scale, &p[3], sizeof(double));
  return out;
}

struct Dims {
  int64_t n, c, h, w, k, ph, pw;
};

// The batch index of a RoI, -1 when outside [0, n) (torchvision: int conversion of rois[0]).
template <typename T, typename S>
inline int64_t BatchOf(const S *roi, int64_t n) {
  const double b = static_cast<double>(Val(Load<T>(roi[0])));
  if (!(b > -1.0 && b < static_cast<double>(n))) return -1;
  return static_cast<int64_t>(b);
}

// x (N, C, H, W) copied to (N, H, W, C): the channels of a sample point are then contiguous, so
// the fast loops below run over channels (independent accumulations the compiler vectorises;
// each channel's operations are the scalar kernel's, in its order).
template <typename S>
inline std::vector<S> ChannelsLast(const S *x, const Dims &d) {
  std::vector<S> out(static_cast<size_t>(d.n * d.h * d.w * d.c));
  const int64_t plane = d.h * d.w;
  mscompat::ParallelFor(d.n * d.h, d.n * d.c * plane, [&](int64_t b, int64_t e) {
    for (int64_t nh = b; nh < e; ++nh) {
      const int64_t n = nh / d.h, h = nh % d.h;
      S *dst = out.data() + nh * d.w * d.c;
      for (int64_t c = 0; c < d.c; ++c) {
        const S *src = x + (n * d.c + c) * plane + h * d.w;
        for (int64_t w = 0; w < d.w; ++w) dst[w * d.c + c] = src[w];
      }
    }
  });
  return out;
}

// Adds g to a gradient element as torchvision's `*address += val` in T.
template <typename T, typename S>
inline void AddTo(S *at, T g) {
  *at = static_cast<S>(Val(Load<T>(*at) + g));
}

// The position-sensitive forwards' loop: body(roi, batch, out, scratch) for each RoI, over
// threads (one Scratch per chunk of RoIs), out = y + n * per_roi; a RoI whose batch index is
// outside [0, N) gets zeros instead.
template <typename T, typename Scratch, typename S, typename F>
void ForEachRoi(const S *rois, const Dims &d, int64_t per_roi, S *y, F body) {
  mscompat::ParallelFor(d.k, d.k * d.c * 4, 1 << 14, 1 << 13, [&](int64_t b, int64_t e) {
    Scratch scratch;
    for (int64_t n = b; n < e; ++n) {
      const S *roi = rois + n * 5;
      S *out = y + n * per_roi;
      const int64_t batch = BatchOf<T>(roi, d.n);
      if (batch < 0) {
        std::fill(out, out + per_roi, S(0));
        continue;
      }
      body(roi, batch, out, scratch);
    }
  });
}

}  // namespace roi
}  // namespace mscompat
