// RoI pooling kernels with torchvision's CPU arithmetic, for MindSpore's ops.Custom(func_type="aot").
//
// torchvision's torchvision/csrc/ops/cpu/{roi_align,roi_pool,ps_roi_align,ps_roi_pool}_kernel.cpp
// run one loop over the RoIs; these kernels compute every output and gradient element with the
// same expressions in the same order, so the results are theirs bit for bit:
//
//   RoIAlign(x, rois, size, p) -> y            RoIAlignGrad(dy, rois, like, size, p) -> dx
//   RoIPool(x, rois, size, p) -> y, argmax     RoIPoolGrad(dy, argmax, rois, like, p) -> dx
//   PSRoIAlign(x, rois, size, p) -> y          PSRoIAlignGrad(dy, rois, like, size, p) -> dx
//   PSRoIPool(x, rois, size, p) -> y           PSRoIPoolGrad(dy, rois, like, size, p) -> dx
//
// x (N, C, H, W) float32/float64; rois (K, 5) of x's dtype (batch index, x1, y1, x2, y2);
// size (PH, PW) int8, only its shape is read (the output size, for MindSpore's shape rule);
// like: a tensor of x's shape (the gradient's shape); argmax int32, the flat position in the
// plane (-1: nothing pooled); p int64: [sampling_ratio, aligned, half, spatial_scale's bits].
// half != 0: x holds float16 values in float32 and every operation is rounded to float16, as
// torchvision's c10::Half arithmetic (each op computed in float, rounded back).
// A RoI whose batch index is outside [0, N) gives zeros and no gradient (torchvision reads out
// of bounds; the front door refuses them, and MultiScaleRoIAlign marks RoIs of other levels so).
//
// Threads: forward kernels split the RoIs (disjoint outputs); backward kernels split the
// channels (each thread owns whole input planes and visits the RoIs in torchvision's order, so
// every gradient element receives its additions in torchvision's order, without races).

#include <cmath>
#include <cstdint>
#include <cstring>
#include <new>
#include <type_traits>
#include <vector>

#include "common.h"
#include "parallel.h"
#include "roi_common.h"
#include "roi_pool.h"

namespace {

using namespace mscompat::status;
using namespace mscompat::roi;

// ------------------------------------------------------------------------------ RoIAlign

template <typename T>
struct Sample {
  int64_t pos1, pos2, pos3, pos4;
  T w1, w2, w3, w4;
  bool inside;
};

// One RoI's geometry, as torchvision's roi_align / ps_roi_align compute it.
template <typename T>
struct AlignRoi {
  T start_h, start_w, bin_h, bin_w;
  int grid_h, grid_w;
};

template <typename T, typename S>
AlignRoi<T> AlignGeometry(const S *roi, T scale, const Dims &d, int64_t sampling, bool aligned,
                          bool clamp_small) {
  const T offset = aligned ? T(0.5) : T(0.0);
  const T start_w = Load<T>(roi[1]) * scale - offset;
  const T start_h = Load<T>(roi[2]) * scale - offset;
  const T end_w = Load<T>(roi[3]) * scale - offset;
  const T end_h = Load<T>(roi[4]) * scale - offset;
  T width = end_w - start_w;
  T height = end_h - start_h;
  if (clamp_small) {  // roi_align without aligned: malformed RoIs forced to 1x1
    if (Val(width) < 1.0f) width = T(1.0);
    if (Val(height) < 1.0f) height = T(1.0);
  }
  AlignRoi<T> r;
  r.start_h = start_h;
  r.start_w = start_w;
  r.bin_h = height / T(static_cast<int>(d.ph));
  r.bin_w = width / T(static_cast<int>(d.pw));
  const int ph = static_cast<int>(d.ph), pw = static_cast<int>(d.pw);
  r.grid_h = sampling > 0 ? static_cast<int>(sampling)
                          : static_cast<int>(std::ceil(Val(height / T(ph))));
  r.grid_w = sampling > 0 ? static_cast<int>(sampling)
                          : static_cast<int>(std::ceil(Val(width / T(pw))));
  return r;
}

// The sample point (y, x) -> corner positions and weights (torchvision's bilinear rule: outside
// [-1, H] x [-1, W] nothing; below 0 clamped to 0; at the last row/column the corner repeats).
template <typename T>
Sample<T> Bilinear(int64_t height, int64_t width, T y, T x) {
  Sample<T> s{0, 0, 0, 0, T(0.0), T(0.0), T(0.0), T(0.0), false};
  const double yv = Val(y), xv = Val(x);
  if (!(yv >= -1.0 && yv <= static_cast<double>(height) && xv >= -1.0 &&
        xv <= static_cast<double>(width)))
    return s;
  if (Val(y) <= 0) y = T(0.0);
  if (Val(x) <= 0) x = T(0.0);
  int64_t y_low = static_cast<int64_t>(Val(y)), x_low = static_cast<int64_t>(Val(x));
  int64_t y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = T(static_cast<int>(y_low));
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = T(static_cast<int>(x_low));
  } else {
    x_high = x_low + 1;
  }
  const T ly = y - T(static_cast<int>(y_low));
  const T lx = x - T(static_cast<int>(x_low));
  const T hy = T(1. - Val(ly)), hx = T(1. - Val(lx));
  s.w1 = hy * hx;
  s.w2 = hy * lx;
  s.w3 = ly * hx;
  s.w4 = ly * lx;
  s.pos1 = y_low * width + x_low;
  s.pos2 = y_low * width + x_high;
  s.pos3 = y_high * width + x_low;
  s.pos4 = y_high * width + x_high;
  s.inside = true;
  return s;
}

// Every sample of a RoI in torchvision's order (ph, pw, iy, ix); `bin_origin` says how the
// bin's first coordinate is formed: roi_align adds `start + ph * bin` then the offset,
// ps_roi_align forms `ph * bin + start` first (its hstart).
template <typename T>
void Samples(const AlignRoi<T> &r, const Dims &d, bool ps, std::vector<Sample<T>> *out) {
  out->clear();
  const int ph_n = static_cast<int>(d.ph), pw_n = static_cast<int>(d.pw);
  for (int ph = 0; ph < ph_n; ++ph) {
    for (int pw = 0; pw < pw_n; ++pw) {
      for (int iy = 0; iy < r.grid_h; ++iy) {
        const T dy = T(static_cast<float>(iy + .5f)) * r.bin_h / T(r.grid_h);
        const T y = ps ? (T(ph) * r.bin_h + r.start_h) + dy : (r.start_h + T(ph) * r.bin_h) + dy;
        for (int ix = 0; ix < r.grid_w; ++ix) {
          const T dx = T(static_cast<float>(ix + .5f)) * r.bin_w / T(r.grid_w);
          const T x =
              ps ? (T(pw) * r.bin_w + r.start_w) + dx : (r.start_w + T(pw) * r.bin_w) + dx;
          out->push_back(Bilinear(d.h, d.w, y, x));
        }
      }
    }
  }
}

template <typename T, typename S>
void RoIAlignForward(const S *x, const S *rois, const Dims &d, const Params &p, S *y) {
  const T scale = T(p.spatial_scale);
  const int64_t plane = d.h * d.w, bins = d.ph * d.pw;
  constexpr bool kFast = std::is_same<T, S>::value;  // float32/float64: channels innermost
  std::vector<S> last;
  if (kFast) last = ChannelsLast(x, d);
  mscompat::ParallelFor(d.k, d.k * d.c * bins * 4, 1 << 14, 1 << 13, [&](int64_t b, int64_t e) {
    std::vector<Sample<T>> samples;
    std::vector<T> acc(kFast ? static_cast<size_t>(d.c) : 0);
    for (int64_t n = b; n < e; ++n) {
      const S *roi = rois + n * 5;
      S *out = y + n * d.c * bins;
      const int64_t batch = BatchOf<T>(roi, d.n);
      if (batch < 0) {
        std::fill(out, out + d.c * bins, S(0));
        continue;
      }
      const AlignRoi<T> r = AlignGeometry(roi, scale, d, p.sampling_ratio, p.aligned, !p.aligned);
      Samples(r, d, false, &samples);
      const int per_bin = r.grid_h * r.grid_w;
      const T count = T(std::max(per_bin, 1));
      if constexpr (kFast) {
        const S *img = last.data() + batch * plane * d.c;
        T *__restrict a = acc.data();
        const int64_t nc = d.c;
        for (int64_t bin = 0; bin < bins; ++bin) {
          std::fill(a, a + nc, T(0));
          const Sample<T> *s = samples.data() + bin * per_bin;
          for (int i = 0; i < per_bin; ++i, ++s) {
            const S *__restrict p1 = img + s->pos1 * nc, *__restrict p2 = img + s->pos2 * nc;
            const S *__restrict p3 = img + s->pos3 * nc, *__restrict p4 = img + s->pos4 * nc;
            const T w1 = s->w1, w2 = s->w2, w3 = s->w3, w4 = s->w4;
            for (int64_t c = 0; c < nc; ++c)
              a[c] += w1 * p1[c] + w2 * p2[c] + w3 * p3[c] + w4 * p4[c];
          }
          for (int64_t c = 0; c < nc; ++c) out[c * bins + bin] = a[c] / count;
        }
      } else {
        for (int64_t c = 0; c < d.c; ++c) {
          const S *in = x + (batch * d.c + c) * plane;
          const Sample<T> *s = samples.data();
          for (int64_t bin = 0; bin < bins; ++bin) {
            T acc1 = T(0.0);
            for (int i = 0; i < per_bin; ++i, ++s) {
              acc1 += s->w1 * Load<T>(in[s->pos1]) + s->w2 * Load<T>(in[s->pos2]) +
                      s->w3 * Load<T>(in[s->pos3]) + s->w4 * Load<T>(in[s->pos4]);
            }
            out[c * bins + bin] = static_cast<S>(Val(acc1 / count));
          }
        }
      }
    }
  });
}

// roi_align's and ps_roi_align's backward: each sample's four weighted gradients added to the
// input plane, (roi, [c_out,] ph, pw, iy, ix) in torchvision's order. ps: the input channel of
// output bin (c_out, ph, pw) is (c_out * PH + ph) * PW + pw.
template <typename T, typename S>
void AlignBackward(const S *dy, const S *rois, const Dims &d, const Params &p, bool ps, S *dx) {
  const T scale = T(p.spatial_scale);
  const int64_t plane = d.h * d.w, bins = d.ph * d.pw;
  const int64_t c_out = ps ? d.c / bins : d.c;
  std::fill(dx, dx + d.n * d.c * plane, S(0));
  std::vector<int64_t> batch(static_cast<size_t>(d.k));
  for (int64_t n = 0; n < d.k; ++n) batch[static_cast<size_t>(n)] = BatchOf<T>(rois + n * 5, d.n);
  // Each chunk of input channels visits every RoI in order; ps channels map to one bin each.
  mscompat::ParallelFor(d.c, d.k * d.c * bins * 4, 1 << 14, 1 << 13, [&](int64_t cb, int64_t ce) {
    std::vector<Sample<T>> samples;
    for (int64_t n = 0; n < d.k; ++n) {
      const int64_t b = batch[static_cast<size_t>(n)];
      if (b < 0) continue;
      const S *roi = rois + n * 5;
      const AlignRoi<T> r =
          AlignGeometry(roi, scale, d, p.sampling_ratio, ps || p.aligned, !ps && !p.aligned);
      Samples(r, d, ps, &samples);
      const int per_bin = r.grid_h * r.grid_w;
      const T count = T(per_bin);
      for (int64_t c = cb; c < ce; ++c) {
        S *g_in = dx + (b * d.c + c) * plane;
        int64_t first = 0, last = bins;  // the bins of this channel
        const S *g_out;
        if (ps) {
          first = c % bins;
          last = first + 1;
          g_out = dy + (n * c_out + c / bins) * bins;
        } else {
          g_out = dy + (n * d.c + c) * bins;
        }
        for (int64_t bin = first; bin < last; ++bin) {
          const T g = Load<T>(g_out[bin]);
          const Sample<T> *s = samples.data() + bin * per_bin;
          for (int i = 0; i < per_bin; ++i, ++s) {
            if (!s->inside) continue;
            AddTo(g_in + s->pos1, g * s->w1 / count);
            AddTo(g_in + s->pos2, g * s->w2 / count);
            AddTo(g_in + s->pos3, g * s->w3 / count);
            AddTo(g_in + s->pos4, g * s->w4 / count);
          }
        }
      }
    }
  });
}

// ps_roi_align's forward: output channel (c_out, ph, pw) reads input channel
// (c_out * PH + ph) * PW + pw; the bin is the mean of its samples (count = grid_h * grid_w, so
// an empty grid gives 0 / 0, as torchvision).
template <typename T, typename S>
void PSRoIAlignForward(const S *x, const S *rois, const Dims &d, const Params &p, S *y) {
  const T scale = T(p.spatial_scale);
  const int64_t plane = d.h * d.w, bins = d.ph * d.pw, c_out = d.c / bins;
  using Scratch = std::vector<Sample<T>>;
  ForEachRoi<T, Scratch>(rois, d, c_out * bins, y, [&](const S *roi, int64_t batch, S *out,
                                                       Scratch &samples) {
    const AlignRoi<T> r = AlignGeometry(roi, scale, d, p.sampling_ratio, true, false);
    Samples(r, d, true, &samples);
    const int per_bin = r.grid_h * r.grid_w;
    const T count = T(per_bin);
    for (int64_t c = 0; c < c_out * bins; ++c) {
      const int64_t bin = c % bins;
      const S *in = x + (batch * d.c + c) * plane;
      const Sample<T> *s = samples.data() + bin * per_bin;
      T acc = T(0.0);
      for (int i = 0; i < per_bin; ++i, ++s) {
        if (!s->inside) {
          acc += T(0.0);
          continue;
        }
        acc += s->w1 * Load<T>(in[s->pos1]) + s->w2 * Load<T>(in[s->pos2]) +
               s->w3 * Load<T>(in[s->pos3]) + s->w4 * Load<T>(in[s->pos4]);
      }
      out[c] = static_cast<S>(Val(acc / count));
    }
  });
}

// ------------------------------------------------------------------------------ entry points

// Checks x (N, C, H, W), rois (K, 5) of x's dtype, p (4,) int64; fills d (PH, PW from size).
int CheckCommon(int *ndims, int64_t **shapes, const char **dtypes, int x, int rois, int size,
                int p, Dims *d) {
  if (std::strcmp(dtypes[x], dtypes[rois]) != 0) return kBadDtype;
  if (!mscompat::AllDtype(dtypes, {p}, "int64")) return kBadDtype;
  if (ndims[x] != 4 || ndims[rois] != 2 || shapes[rois][1] != 5 || ndims[size] != 2)
    return kBadShape;
  if (!mscompat::HasShape(ndims[p], shapes[p], {4})) return kBadShape;
  *d = Dims{shapes[x][0], shapes[x][1], shapes[x][2], shapes[x][3],
            shapes[rois][0], shapes[size][0], shapes[size][1]};
  if (d->ph <= 0 || d->pw <= 0 || d->h <= 0 || d->w <= 0) return kBadShape;
  return kOk;
}

// Runs f(T{}, S{}) for the dtype (float16 arithmetic when p says so).
// A RoI of astronomically many samples (a huge box with an adaptive grid) fails with kBadShape
// instead of ending the process (std::bad_alloc must not cross the C entry point).
template <typename F>
int Dispatch(const char *dtype, const Params &p, F &&f) {
  try {
    if (std::strcmp(dtype, "float64") == 0) {
      f(double{}, double{});
      return kOk;
    }
    if (std::strcmp(dtype, "float32") != 0) return kBadDtype;
    if (p.half) {
      f(Half16{}, float{});
    } else {
      f(float{}, float{});
    }
  } catch (const std::bad_alloc &) {
    return kBadShape;
  }
  return kOk;
}

}  // namespace

#define ROI_ARGS int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes, \
                 void *, void *

// x rois size p -> y
extern "C" int RoIAlign(ROI_ARGS) {
  if (nparam != 5) return kBadArity;
  Dims d;
  if (int rc = CheckCommon(ndims, shapes, dtypes, 0, 1, 2, 3, &d)) return rc;
  const Params p = ReadParams(static_cast<const int64_t *>(params[3]));
  if (d.k * d.c == 0) return kOk;
  return Dispatch(dtypes[0], p, [&](auto t, auto s) {
    using T = decltype(t);
    using S = decltype(s);
    RoIAlignForward<T>(static_cast<const S *>(params[0]), static_cast<const S *>(params[1]), d, p,
                       static_cast<S *>(params[4]));
  });
}

// dy rois like size p -> dx (ps != 0 in the name's variant below)
int AlignGradEntry(ROI_ARGS, bool ps) {
  if (nparam != 6) return kBadArity;
  Dims d;
  if (int rc = CheckCommon(ndims, shapes, dtypes, 2, 1, 3, 4, &d)) return rc;
  if (std::strcmp(dtypes[0], dtypes[2]) != 0) return kBadDtype;
  const Params p = ReadParams(static_cast<const int64_t *>(params[4]));
  if (ps && d.c % (d.ph * d.pw) != 0) return kBadShape;
  return Dispatch(dtypes[0], p, [&](auto t, auto s) {
    using T = decltype(t);
    using S = decltype(s);
    AlignBackward<T>(static_cast<const S *>(params[0]), static_cast<const S *>(params[1]), d, p,
                     ps, static_cast<S *>(params[5]));
  });
}

extern "C" int RoIAlignGrad(ROI_ARGS) {
  return AlignGradEntry(nparam, params, ndims, shapes, dtypes, nullptr, nullptr, false);
}

extern "C" int PSRoIAlignGrad(ROI_ARGS) {
  return AlignGradEntry(nparam, params, ndims, shapes, dtypes, nullptr, nullptr, true);
}

// x rois size p -> y
extern "C" int PSRoIAlign(ROI_ARGS) {
  if (nparam != 5) return kBadArity;
  Dims d;
  if (int rc = CheckCommon(ndims, shapes, dtypes, 0, 1, 2, 3, &d)) return rc;
  if (d.c % (d.ph * d.pw) != 0) return kBadShape;
  const Params p = ReadParams(static_cast<const int64_t *>(params[3]));
  if (d.k * d.c == 0) return kOk;
  return Dispatch(dtypes[0], p, [&](auto t, auto s) {
    using T = decltype(t);
    using S = decltype(s);
    PSRoIAlignForward<T>(static_cast<const S *>(params[0]), static_cast<const S *>(params[1]), d,
                         p, static_cast<S *>(params[4]));
  });
}

// x rois size p -> y argmax
extern "C" int RoIPool(ROI_ARGS) {
  if (nparam != 6) return kBadArity;
  Dims d;
  if (int rc = CheckCommon(ndims, shapes, dtypes, 0, 1, 2, 3, &d)) return rc;
  if (!mscompat::AllDtype(dtypes, {5}, "int32")) return kBadDtype;
  const Params p = ReadParams(static_cast<const int64_t *>(params[3]));
  if (d.k * d.c == 0) return kOk;
  return Dispatch(dtypes[0], p, [&](auto t, auto s) {
    using T = decltype(t);
    using S = decltype(s);
    RoIPoolForward<T>(static_cast<const S *>(params[0]), static_cast<const S *>(params[1]), d, p,
                      static_cast<S *>(params[4]), static_cast<int32_t *>(params[5]));
  });
}

// dy argmax rois like size p -> dx
extern "C" int RoIPoolGrad(ROI_ARGS) {
  if (nparam != 7) return kBadArity;
  Dims d;
  if (int rc = CheckCommon(ndims, shapes, dtypes, 3, 2, 4, 5, &d)) return rc;
  if (std::strcmp(dtypes[0], dtypes[3]) != 0 || !mscompat::AllDtype(dtypes, {1}, "int32"))
    return kBadDtype;
  if (!mscompat::SameShape(ndims[0], shapes[0], ndims[1], shapes[1])) return kBadShape;
  const Params p = ReadParams(static_cast<const int64_t *>(params[5]));
  return Dispatch(dtypes[0], p, [&](auto t, auto s) {
    using T = decltype(t);
    using S = decltype(s);
    RoIPoolBackward<T>(static_cast<const S *>(params[0]), static_cast<const int32_t *>(params[1]),
                       static_cast<const S *>(params[2]), d, static_cast<S *>(params[6]));
  });
}

// x rois size p -> y
extern "C" int PSRoIPool(ROI_ARGS) {
  if (nparam != 5) return kBadArity;
  Dims d;
  if (int rc = CheckCommon(ndims, shapes, dtypes, 0, 1, 2, 3, &d)) return rc;
  if (d.c % (d.ph * d.pw) != 0) return kBadShape;
  const Params p = ReadParams(static_cast<const int64_t *>(params[3]));
  if (d.k * d.c == 0) return kOk;
  return Dispatch(dtypes[0], p, [&](auto t, auto s) {
    using T = decltype(t);
    using S = decltype(s);
    PSRoIPoolForward<T>(static_cast<const S *>(params[0]), static_cast<const S *>(params[1]), d, p,
                        static_cast<S *>(params[4]));
  });
}

// dy rois like size p -> dx
extern "C" int PSRoIPoolGrad(ROI_ARGS) {
  if (nparam != 6) return kBadArity;
  Dims d;
  if (int rc = CheckCommon(ndims, shapes, dtypes, 2, 1, 3, 4, &d)) return rc;
  if (std::strcmp(dtypes[0], dtypes[2]) != 0) return kBadDtype;
  if (d.c % (d.ph * d.pw) != 0) return kBadShape;
  const Params p = ReadParams(static_cast<const int64_t *>(params[4]));
  return Dispatch(dtypes[0], p, [&](auto t, auto s) {
    using T = decltype(t);
    using S = decltype(s);
    PSRoIPoolBackward<T>(static_cast<const S *>(params[0]), static_cast<const S *>(params[1]), d,
                         p, static_cast<S *>(params[5]));
  });
}
