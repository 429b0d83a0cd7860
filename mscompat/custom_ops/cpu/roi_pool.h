// torchvision's roi_pool and ps_roi_pool, forward and backward, for roi_kernel.cc (whose header
// describes the arithmetic, parameters and threads).

#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "parallel.h"
#include "roi_common.h"

namespace mscompat {
namespace roi {

struct PoolBin {
  int64_t hstart, hend, wstart, wend;
  bool empty;
};

// roi_pool's and ps_roi_pool's bins: RoI corners rounded (half away from zero), bins of
// (size) / (pooled) cells floored/ceiled, clipped to [0, limit_h] x [0, limit_w].
template <typename T, typename S>
inline void PoolBins(const S *roi, T scale, const Dims &d, bool ps, bool float_round, int64_t limit_h,
              int64_t limit_w, std::vector<PoolBin> *out) {
  auto rnd = [&](T v) -> int64_t {
    if (float_round) return static_cast<int64_t>(std::round(static_cast<float>(Val(v))));
    return static_cast<int64_t>(std::round(Val(v)));
  };
  const int64_t start_w = rnd(Load<T>(roi[1]) * scale);
  const int64_t start_h = rnd(Load<T>(roi[2]) * scale);
  const int64_t end_w = rnd(Load<T>(roi[3]) * scale);
  const int64_t end_h = rnd(Load<T>(roi[4]) * scale);
  const int64_t extra = ps ? 0 : 1;  // roi_pool counts both end cells, ps_roi_pool one
  const int64_t roi_w = std::max<int64_t>(end_w - start_w + extra, 1);
  const int64_t roi_h = std::max<int64_t>(end_h - start_h + extra, 1);
  const T bin_h = T(static_cast<int>(roi_h)) / T(static_cast<int>(d.ph));
  const T bin_w = T(static_cast<int>(roi_w)) / T(static_cast<int>(d.pw));
  out->clear();
  for (int ph = 0; ph < d.ph; ++ph) {
    for (int pw = 0; pw < d.pw; ++pw) {
      PoolBin bin;
      bin.hstart = static_cast<int64_t>(std::floor(Val(T(ph) * bin_h)));
      bin.wstart = static_cast<int64_t>(std::floor(Val(T(pw) * bin_w)));
      bin.hend = static_cast<int64_t>(std::ceil(Val(T(ph + 1) * bin_h)));
      bin.wend = static_cast<int64_t>(std::ceil(Val(T(pw + 1) * bin_w)));
      bin.hstart = std::min(std::max<int64_t>(bin.hstart + start_h, 0), limit_h);
      bin.hend = std::min(std::max<int64_t>(bin.hend + start_h, 0), limit_h);
      bin.wstart = std::min(std::max<int64_t>(bin.wstart + start_w, 0), limit_w);
      bin.wend = std::min(std::max<int64_t>(bin.wend + start_w, 0), limit_w);
      bin.empty = bin.hend <= bin.hstart || bin.wend <= bin.wstart;
      out->push_back(bin);
    }
  }
}

template <typename T, typename S>
void RoIPoolForward(const S *x, const S *rois, const Dims &d, const Params &p, S *y,
                    int32_t *argmax) {
  const T scale = T(p.spatial_scale);
  const int64_t plane = d.h * d.w, bins = d.ph * d.pw;
  // -FLT_MAX in T (float16: -inf), the start of a non-empty bin's maximum.
  const T lowest = T(-3.4028234663852886e38);
  constexpr bool kFast = std::is_same<T, S>::value;  // float32/float64: channels innermost
  // the pick's index in lanes of the value's width, so that the select vectorises
  using Idx = typename std::conditional<sizeof(S) == 4, int32_t, int64_t>::type;
  std::vector<S> last;
  if (kFast) last = ChannelsLast(x, d);
  mscompat::ParallelFor(d.k, d.k * d.c * bins * 4, 1 << 14, 1 << 13, [&](int64_t b, int64_t e) {
    std::vector<PoolBin> pool;
    std::vector<T> best_v(kFast ? static_cast<size_t>(d.c) : 0);
    std::vector<Idx> at_v(kFast ? static_cast<size_t>(d.c) : 0);
    for (int64_t n = b; n < e; ++n) {
      const S *roi = rois + n * 5;
      S *out = y + n * d.c * bins;
      int32_t *arg = argmax + n * d.c * bins;
      const int64_t batch = BatchOf<T>(roi, d.n);
      if (batch < 0) {
        std::fill(out, out + d.c * bins, S(0));
        std::fill(arg, arg + d.c * bins, int32_t{-1});
        continue;
      }
      PoolBins(roi, scale, d, false, false, d.h, d.w, &pool);
      if constexpr (kFast) {
        const S *img = last.data() + batch * plane * d.c;
        const int64_t nc = d.c;
        T *__restrict best = best_v.data();
        Idx *__restrict at = at_v.data();
        for (int64_t bin = 0; bin < bins; ++bin) {
          const PoolBin &pb = pool[static_cast<size_t>(bin)];
          std::fill(best, best + nc, pb.empty ? T(0) : lowest);
          std::fill(at, at + nc, Idx{-1});
          for (int64_t h = pb.hstart; h < pb.hend; ++h) {
            for (int64_t w = pb.wstart; w < pb.wend; ++w) {
              const S *__restrict v = img + (h * d.w + w) * nc;
              const Idx idx = static_cast<Idx>(h * d.w + w);
              for (int64_t c = 0; c < nc; ++c) {
                // v > best (NaN: never), as a lane mask so that the loop vectorises
                const S vc = v[c], bc = best[c];
                const Idx mask = -static_cast<Idx>(vc > bc);
                best[c] = vc > bc ? vc : bc;
                at[c] = (idx & mask) | (at[c] & ~mask);
              }
            }
          }
          for (int64_t c = 0; c < nc; ++c) {
            out[c * bins + bin] = best[c];
            arg[c * bins + bin] = static_cast<int32_t>(at[c]);
          }
        }
      } else {
        for (int64_t c = 0; c < d.c; ++c) {
          const S *in = x + (batch * d.c + c) * plane;
          for (int64_t bin = 0; bin < bins; ++bin) {
            const PoolBin &pb = pool[static_cast<size_t>(bin)];
            T best = pb.empty ? T(0.0) : lowest;
            int64_t at = -1;
            for (int64_t h = pb.hstart; h < pb.hend; ++h) {
              for (int64_t w = pb.wstart; w < pb.wend; ++w) {
                const T v = Load<T>(in[h * d.w + w]);
                if (Val(v) > Val(best)) {
                  best = v;
                  at = h * d.w + w;
                }
              }
            }
            out[c * bins + bin] = static_cast<S>(Val(best));
            arg[c * bins + bin] = static_cast<int32_t>(at);
          }
        }
      }
    }
  });
}

// roi_pool's backward: each bin's gradient added at its argmax, (roi, c, ph, pw) in order.
template <typename T, typename S>
void RoIPoolBackward(const S *dy, const int32_t *argmax, const S *rois, const Dims &d, S *dx) {
  const int64_t plane = d.h * d.w, bins = d.ph * d.pw;
  std::fill(dx, dx + d.n * d.c * plane, S(0));
  std::vector<int64_t> batch(static_cast<size_t>(d.k));
  for (int64_t n = 0; n < d.k; ++n) batch[static_cast<size_t>(n)] = BatchOf<T>(rois + n * 5, d.n);
  mscompat::ParallelFor(d.c, d.k * d.c * bins, 1 << 15, 1 << 14, [&](int64_t cb, int64_t ce) {
    for (int64_t n = 0; n < d.k; ++n) {
      const int64_t b = batch[static_cast<size_t>(n)];
      if (b < 0) continue;
      for (int64_t c = cb; c < ce; ++c) {
        S *g_in = dx + (b * d.c + c) * plane;
        const S *g = dy + (n * d.c + c) * bins;
        const int32_t *arg = argmax + (n * d.c + c) * bins;
        for (int64_t bin = 0; bin < bins; ++bin)
          if (arg[bin] >= 0 && arg[bin] < plane) AddTo(g_in + arg[bin], Load<T>(g[bin]));
      }
    }
  });
}

// ps_roi_pool: the forward clips the bins to [0, H - 1] x [0, W - 1] and the backward to
// [0, H] x [0, W], and the backward rounds the corners in float (roundf): torchvision's.
template <typename T, typename S>
void PSRoIPoolForward(const S *x, const S *rois, const Dims &d, const Params &p, S *y) {
  const T scale = T(p.spatial_scale);
  const int64_t plane = d.h * d.w, bins = d.ph * d.pw, c_out = d.c / bins;
  using Scratch = std::vector<PoolBin>;
  ForEachRoi<T, Scratch>(rois, d, c_out * bins, y, [&](const S *roi, int64_t batch, S *out,
                                                       Scratch &pool) {
    PoolBins(roi, scale, d, true, false, d.h - 1, d.w - 1, &pool);
    for (int64_t c = 0; c < c_out * bins; ++c) {
      const PoolBin &pb = pool[static_cast<size_t>(c % bins)];
      const S *in = x + (batch * d.c + c) * plane;
      T sum = T(0.0);
      for (int64_t h = pb.hstart; h < pb.hend; ++h)
        for (int64_t w = pb.wstart; w < pb.wend; ++w) sum += Load<T>(in[h * d.w + w]);
      const T area = T(static_cast<int>((pb.hend - pb.hstart) * (pb.wend - pb.wstart)));
      out[c] = pb.empty ? S(0) : static_cast<S>(Val(sum / area));
    }
  });
}

template <typename T, typename S>
void PSRoIPoolBackward(const S *dy, const S *rois, const Dims &d, const Params &p, S *dx) {
  const T scale = T(p.spatial_scale);
  const int64_t plane = d.h * d.w, bins = d.ph * d.pw, c_out = d.c / bins;
  std::fill(dx, dx + d.n * d.c * plane, S(0));
  std::vector<int64_t> batch(static_cast<size_t>(d.k));
  for (int64_t n = 0; n < d.k; ++n) batch[static_cast<size_t>(n)] = BatchOf<T>(rois + n * 5, d.n);
  mscompat::ParallelFor(d.c, d.k * d.c * 4, 1 << 14, 1 << 13, [&](int64_t cb, int64_t ce) {
    std::vector<PoolBin> pool;
    for (int64_t n = 0; n < d.k; ++n) {
      const int64_t b = batch[static_cast<size_t>(n)];
      if (b < 0) continue;
      PoolBins(rois + n * 5, scale, d, true, true, d.h, d.w, &pool);
      for (int64_t c = cb; c < ce && c < c_out * bins; ++c) {
        const PoolBin &pb = pool[static_cast<size_t>(c % bins)];
        if (pb.empty) continue;  // adds 0 (torchvision's loop is empty too)
        S *g_in = dx + (b * d.c + c) * plane;
        const T area = T(static_cast<int>((pb.hend - pb.hstart) * (pb.wend - pb.wstart)));
        const T diff = Load<T>(dy[n * c_out * bins + c]) / area;
        for (int64_t h = pb.hstart; h < pb.hend; ++h)
          for (int64_t w = pb.wstart; w < pb.wend; ++w) AddTo(g_in + h * d.w + w, diff);
      }
    }
  });
}

}  // namespace roi
}  // namespace mscompat
