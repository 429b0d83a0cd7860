// Scaled dot-product attention, forward and backward, for MindSpore's ops.Custom(func_type="aot");
// float32. Flash-attention style: the (L, S) attention weights are never held whole, only a
// block of query rows at a time; the backward recomputes them from the rows' max and sum.
//
//   SdpaForward(q, k, v, bias, index, opts) -> out, stats
//     q:     (N, L, E) float32; k: (N / G, S, E); v: (N / G, S, Ev) (G: the GQA group size,
//            query n uses key/value n / G)
//     bias:  (M, Lm, S) the additive mask (Lm is L or 1); query n adds bias[index[n]]
//     index: (N,) int64
//     opts:  (3,) float32 [scale, is_causal, has_bias] (without has_bias, bias and index are
//            not read)
//     out:   (N, L, Ev); stats: (N, L, 2) each row's max score and the log of its sum of
//            exp(score - max) (their sum, the log-sum-exp, would round the weights the backward
//            recomputes to its ulp: 1.5e-5 at scores of 250); max +inf for a row whose every key
//            is masked (its output is zeros, as PyTorch's CPU kernels)
//   Per (n, block of query rows): scores = scale q k^T + bias (one sgemm; with is_causal only
//   the keys the block's last row sees), row softmax in place, out = weights v (one sgemm).
//
//   SdpaBackward(q, k, v, bias, index, opts, out, stats, dout) -> dq, dk, dv
//     per key/value head (so that dk and dv are summed by one thread, in a fixed order; few
//     heads: in a few fixed parts, added in order), per query head of its group, per block of
//     query rows:
//       P = exp(scale q k^T + bias - max - log sum), dv += P^T dout, dP = dout v^T,
//       dS = P (dP - rowsum(P dP)), dq = scale dS k, dk += scale dS^T q
//     (out is not read: rowsum(P dP) = rowsum(dout out)).
//
//   SdpaForwardBiased: SdpaForward, the entry of a float mask (its bprop adds SdpaBiasGrad).
//   SdpaBiasGrad(q, k, v, bias, index, opts, stats, dout) -> dbias (bias's shape): dS summed
//     over the queries using each mask (and over the rows where Lm is 1), per (mask, block of
//     rows): each unit writes outputs of its own.
//
// The matrix products are oneDNN's dnnl_sgemm (sgemm.h), each on one thread; the units are
// split over threads (parallel.h). Without dnnl_sgemm every entry returns kBadOption (the probe
// fails and the composite runs). Calling convention: common.h.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common.h"
#include "parallel.h"
#include "sgemm.h"
#include "softmax_row.h"

namespace {

using namespace mscompat::status;
using mscompat::HasShape;

// Elements of one block of scores (rows x S): 64 rows of 512 keys, 128 KiB, stay in L2 between
// the sgemms and the softmax (64 K elements measured no faster). Never fewer than kMinRows rows:
// at S = 4096 blocks of 64 rows took 10-25 % less CPU time than blocks of 8-32 (the sgemms'
// efficiency outweighs the blocks leaving L2).
constexpr int64_t kBlockElements = 32768;
constexpr int64_t kMinRows = 64;

struct Problem {
  const float *q = nullptr, *k = nullptr, *v = nullptr, *bias = nullptr;
  const int64_t *index = nullptr;
  int64_t n = 0, l = 0, s = 0, e = 0, ev = 0, groups = 1, bias_rows = 0;
  float scale = 1.0f;
  bool causal = false;
  int64_t rows = 1;  // query rows per block

  // Keys a block of rows [r0, r1) sees (is_causal: none after the last row's position).
  int64_t Keys(int64_t r1) const { return causal ? std::min(s, r1) : s; }
};

// Reads and checks the shared inputs (q, k, v, bias, index, opts at 0..5).
int Read(void **params, int *ndims, int64_t **shapes, const char **dtypes, int floats_to,
         Problem *p) {
  for (int i = 0; i <= floats_to; ++i)
    if (i != 4 && !mscompat::AllDtype(dtypes, {i}, "float32")) return kBadDtype;
  if (!mscompat::AllDtype(dtypes, {4}, "int64")) return kBadDtype;
  for (int i = 0; i < 4; ++i)
    if (ndims[i] != 3) return kBadShape;
  const int64_t *qs = shapes[0], *ks = shapes[1], *vs = shapes[2], *bs = shapes[3];
  p->n = qs[0];
  p->l = qs[1];
  p->e = qs[2];
  p->s = ks[1];
  p->ev = vs[2];
  if (ks[0] < 1 || p->n % ks[0] != 0 || ks[2] != p->e || vs[0] != ks[0] || vs[1] != p->s)
    return kBadShape;
  p->groups = p->n / ks[0];
  if (!HasShape(ndims[4], shapes[4], {p->n}) || !HasShape(ndims[5], shapes[5], {3}))
    return kBadShape;
  const float *opts = static_cast<const float *>(params[5]);
  p->scale = opts[0];
  p->causal = opts[1] != 0.0f;
  p->q = static_cast<const float *>(params[0]);
  p->k = static_cast<const float *>(params[1]);
  p->v = static_cast<const float *>(params[2]);
  if (opts[2] != 0.0f) {
    if ((bs[1] != 1 && bs[1] != p->l) || bs[2] != p->s) return kBadShape;
    p->bias = static_cast<const float *>(params[3]);
    p->index = static_cast<const int64_t *>(params[4]);
    p->bias_rows = bs[1];
    for (int64_t i = 0; i < p->n; ++i)
      if (p->index[i] < 0 || p->index[i] >= bs[0]) return kBadShape;
  }
  p->rows = std::min(p->l, std::max(kMinRows, kBlockElements / std::max<int64_t>(1, p->s)));
  return kOk;
}

// scores (r1 - r0, cols) of query n's rows [r0, r1): scale q k^T + bias, -inf after the
// diagonal with is_causal.
__attribute__((target_clones("avx2", "default"))) void Scores(const Problem &p, int64_t n,
                                                             int64_t r0, int64_t r1,
                                                             int64_t cols, float *scores,
                                                             mscompat::SgemmFn sgemm) {
  const float *key = p.k + n / p.groups * p.s * p.e;
  sgemm('N', 'T', r1 - r0, cols, p.e, p.scale, p.q + (n * p.l + r0) * p.e, p.e, key, p.e, 0.0f,
        scores, cols);
  for (int64_t r = r0; r < r1; ++r) {
    float *row = scores + (r - r0) * cols;
    if (p.bias != nullptr) {
      const float *b = p.bias + (p.index[n] * p.bias_rows + (p.bias_rows == 1 ? 0 : r)) * p.s;
      for (int64_t j = 0; j < cols; ++j) row[j] += b[j];
    }
    if (p.causal)
      for (int64_t j = r + 1; j < cols; ++j) row[j] = -INFINITY;
  }
}

void Forward(const Problem &p, float *out, float *stats, mscompat::SgemmFn sgemm) {
  const int64_t blocks = (p.l + p.rows - 1) / p.rows;
  const int64_t flops = 2 * p.n * p.l * p.s * (p.e + p.ev);
  mscompat::ParallelFor(p.n * blocks, flops / 64, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(p.rows * p.s));
    for (int64_t u = begin; u < end; ++u) {
      const int64_t n = u / blocks, r0 = u % blocks * p.rows, r1 = std::min(p.l, r0 + p.rows);
      const int64_t cols = p.Keys(r1);
      Scores(p, n, r0, r1, cols, scores.data(), sgemm);
      for (int64_t r = r0; r < r1; ++r) {
        float *row = scores.data() + (r - r0) * cols;
        float *m = stats + 2 * (n * p.l + r);
        mscompat::ScaledSoftmaxOnePass(row, cols, 1.0f, row, m, true);
        if (m[0] == -INFINITY) {  // every key masked: zeros, and no weight in the backward
          std::fill(row, row + cols, 0.0f);
          m[0] = INFINITY;
          m[1] = 0.0f;
        }
      }
      sgemm('N', 'N', r1 - r0, p.ev, cols, 1.0f, scores.data(), cols,
            p.v + n / p.groups * p.s * p.ev, p.ev, 0.0f, out + (n * p.l + r0) * p.ev, p.ev);
    }
  });
}

// dS = P (dP - rowsum(P dP)) of one block, in place of dP (rowsum(P dP) is rowsum(dout out),
// PyTorch's flash kernel's form; this one, its math kernel's and autograd's softmax backward,
// was measured closer to PyTorch where the weights are peaked: scores of ~100 and more).
__attribute__((target_clones("avx2", "default"))) void ScoreGradient(const float *weights,
                                                                    int64_t rows, int64_t cols,
                                                                    float *dp) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *w = weights + r * cols;
    float *g = dp + r * cols;
    float d = 0.0f;
    for (int64_t j = 0; j < cols; ++j) d += w[j] * g[j];
    for (int64_t j = 0; j < cols; ++j) g[j] = w[j] * (g[j] - d);
  }
}

// The weights P (in `weights`) and the score gradient dS (in `grads`) of query n's rows
// [r0, r1), from the forward's row stats; returns the block's number of keys.
int64_t BlockGradient(const Problem &p, int64_t n, int64_t r0, const float *stats,
                      const float *dout, float *weights, float *grads, mscompat::SgemmFn sgemm) {
  const int64_t r1 = std::min(p.l, r0 + p.rows), rows = r1 - r0, cols = p.Keys(r1);
  const float *value = p.v + n / p.groups * p.s * p.ev;
  Scores(p, n, r0, r1, cols, weights, sgemm);
  for (int64_t r = 0; r < rows; ++r) {
    const float *m = stats + 2 * (n * p.l + r0 + r);
    float *row = weights + r * cols;
    mscompat::ScaledSoftmax(row, cols, m[0], m[1], 1.0f, row, true);
  }
  sgemm('N', 'T', rows, cols, p.ev, 1.0f, dout + (n * p.l + r0) * p.ev, p.ev, value, p.ev, 0.0f,
        grads, cols);
  ScoreGradient(weights, rows, cols, grads);
  return cols;
}

// The backward of one block of query n's rows [r0, r1): dq, and dk, dv added to dkey, dvalue.
void BackwardBlock(const Problem &p, int64_t n, int64_t r0, const float *stats, const float *dout,
                   float *dq, float *dkey, float *dvalue, float *weights, float *grads,
                   mscompat::SgemmFn sgemm) {
  const int64_t rows = std::min(p.l, r0 + p.rows) - r0;
  const int64_t cols = BlockGradient(p, n, r0, stats, dout, weights, grads, sgemm);
  const float *key = p.k + n / p.groups * p.s * p.e;
  sgemm('T', 'N', cols, p.ev, rows, 1.0f, weights, cols, dout + (n * p.l + r0) * p.ev, p.ev, 1.0f,
        dvalue, p.ev);
  sgemm('N', 'N', rows, p.e, cols, p.scale, grads, cols, key, p.e, 0.0f, dq + (n * p.l + r0) * p.e,
        p.e);
  sgemm('T', 'N', cols, p.e, rows, p.scale, grads, cols, p.q + (n * p.l + r0) * p.e, p.e, 1.0f,
        dkey, p.e);
}

// Units (key/value head, part): a head's (query head, block) items are split round robin into
// `parts` when there are fewer than two heads per thread; part 0 sums into dk/dv, the others
// into their own buffers, added in part order at the end (deterministic).
void Backward(const Problem &p, const float *stats, const float *dout, float *dq, float *dk,
              float *dv, mscompat::SgemmFn sgemm) {
  const int64_t heads = p.n / p.groups, blocks = (p.l + p.rows - 1) / p.rows;
  const int64_t items = p.groups * blocks, kv = p.s * (p.e + p.ev);
  const int64_t flops = 4 * p.n * p.l * p.s * (p.e + p.ev);
  const int threads = mscompat::NumThreads(flops / 64, 1 << 16, 1 << 15);
  const int64_t parts = std::min<int64_t>(items, std::max<int64_t>(1, 2 * threads / heads));
  std::vector<float> partial(static_cast<size_t>((parts - 1) * heads * kv));
  mscompat::ParallelFor(heads * parts, flops / 64, [&](int64_t begin, int64_t end) {
    std::vector<float> weights(static_cast<size_t>(p.rows * p.s));
    std::vector<float> grads(static_cast<size_t>(p.rows * p.s));
    for (int64_t u = begin; u < end; ++u) {
      const int64_t h = u / parts, part = u % parts;
      float *dkey = part == 0 ? dk + h * p.s * p.e : partial.data() + ((part - 1) * heads + h) * kv;
      float *dvalue = part == 0 ? dv + h * p.s * p.ev : dkey + p.s * p.e;
      std::fill(dkey, dkey + p.s * p.e, 0.0f);
      std::fill(dvalue, dvalue + p.s * p.ev, 0.0f);
      for (int64_t i = part; i < items; i += parts)
        BackwardBlock(p, h * p.groups + i / blocks, i % blocks * p.rows, stats, dout, dq, dkey,
                      dvalue, weights.data(), grads.data(), sgemm);
    }
  });
  for (int64_t part = 1; part < parts; ++part) {
    for (int64_t h = 0; h < heads; ++h) {
      const float *from = partial.data() + ((part - 1) * heads + h) * kv;
      float *dkey = dk + h * p.s * p.e, *dvalue = dv + h * p.s * p.ev;
      for (int64_t j = 0; j < p.s * p.e; ++j) dkey[j] += from[j];
      for (int64_t j = 0; j < p.s * p.ev; ++j) dvalue[j] += from[p.s * p.e + j];
    }
  }
}

// dbias (M, Lm, S): the sum of dS over the queries n using each mask (index[n]) and, where
// Lm is 1, over the rows. Units (mask, block of rows), each writing its own rows (Lm = L) or
// its own row sum (Lm = 1, added in block order at the end): no unit shares an output.
void BiasGradient(const Problem &p, int64_t masks, const float *stats, const float *dout,
                  float *dbias, mscompat::SgemmFn sgemm) {
  const int64_t blocks = (p.l + p.rows - 1) / p.rows;
  const bool per_row = p.bias_rows != 1;
  std::vector<float> sums(per_row ? 0 : static_cast<size_t>(masks * blocks * p.s), 0.0f);
  const int64_t flops = 2 * p.n * p.l * p.s * (p.e + p.ev);
  mscompat::ParallelFor(masks * blocks, flops / 64, [&](int64_t begin, int64_t end) {
    std::vector<float> weights(static_cast<size_t>(p.rows * p.s));
    std::vector<float> grads(static_cast<size_t>(p.rows * p.s));
    for (int64_t u = begin; u < end; ++u) {
      const int64_t m = u / blocks, r0 = u % blocks * p.rows;
      const int64_t rows = std::min(p.l, r0 + p.rows) - r0;
      float *to = per_row ? dbias + (m * p.l + r0) * p.s : sums.data() + u * p.s;
      std::fill(to, to + (per_row ? rows : 1) * p.s, 0.0f);
      for (int64_t n = 0; n < p.n; ++n) {
        if (p.index[n] != m) continue;
        BlockGradient(p, n, r0, stats, dout, weights.data(), grads.data(), sgemm);
        for (int64_t r = 0; r < rows; ++r) {
          float *row = to + (per_row ? r : 0) * p.s;
          for (int64_t j = 0; j < p.s; ++j) row[j] += grads[r * p.s + j];
        }
      }
    }
  });
  if (per_row) return;
  for (int64_t m = 0; m < masks; ++m) {
    float *row = dbias + m * p.s;
    std::copy(sums.data() + m * blocks * p.s, sums.data() + (m * blocks + 1) * p.s, row);
    for (int64_t b = 1; b < blocks; ++b)
      for (int64_t j = 0; j < p.s; ++j) row[j] += sums[(m * blocks + b) * p.s + j];
  }
}

// What every entry point starts with: its arity, the shared inputs (Read), the row stats at
// `stats_at` and the sgemm.
int Start(int nparam, int arity, void **params, int *ndims, int64_t **shapes, const char **dtypes,
          int stats_at, Problem *p, mscompat::SgemmFn *sgemm) {
  if (nparam != arity) return kBadArity;
  if (int rc = Read(params, ndims, shapes, dtypes, arity - 1, p)) return rc;
  if (!HasShape(ndims[stats_at], shapes[stats_at], {p->n, p->l, 2})) return kBadShape;
  *sgemm = mscompat::Sgemm();
  return *sgemm == nullptr ? kBadOption : kOk;
}

}  // namespace

// params: q, k, v, bias, index, opts, out, stats
extern "C" int SdpaForward(int nparam, void **params, int *ndims, int64_t **shapes,
                           const char **dtypes, void *, void *) {
  Problem p;
  mscompat::SgemmFn sgemm;
  if (int rc = Start(nparam, 8, params, ndims, shapes, dtypes, 7, &p, &sgemm)) return rc;
  if (!HasShape(ndims[6], shapes[6], {p.n, p.l, p.ev})) return kBadShape;
  if (p.n * p.l * p.ev == 0) return kOk;
  if (p.s == 0 || p.e == 0) return kBadShape;  // the front door answers these
  Forward(p, static_cast<float *>(params[6]), static_cast<float *>(params[7]), sgemm);
  return kOk;
}

// params: q, k, v, bias, index, opts, out, stats, dout, dq, dk, dv
extern "C" int SdpaBackward(int nparam, void **params, int *ndims, int64_t **shapes,
                            const char **dtypes, void *, void *) {
  Problem p;
  mscompat::SgemmFn sgemm;
  if (int rc = Start(nparam, 12, params, ndims, shapes, dtypes, 7, &p, &sgemm)) return rc;
  for (int i : {6, 8})
    if (!HasShape(ndims[i], shapes[i], {p.n, p.l, p.ev})) return kBadShape;
  for (int i : {0, 1, 2})
    if (!mscompat::SameShape(ndims[9 + i], shapes[9 + i], ndims[i], shapes[i])) return kBadShape;
  if (p.s == 0 || p.e == 0 || p.n * p.l * p.ev == 0) return kBadShape;
  Backward(p, static_cast<const float *>(params[7]), static_cast<const float *>(params[8]),
           static_cast<float *>(params[9]), static_cast<float *>(params[10]),
           static_cast<float *>(params[11]), sgemm);
  return kOk;
}

// SdpaForward for a float mask whose gradient is wanted (its bprop adds SdpaBiasGrad).
extern "C" int SdpaForwardBiased(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *stream, void *extra) {
  return SdpaForward(nparam, params, ndims, shapes, dtypes, stream, extra);
}

// params: q, k, v, bias, index, opts, stats, dout, dbias
extern "C" int SdpaBiasGrad(int nparam, void **params, int *ndims, int64_t **shapes,
                            const char **dtypes, void *, void *) {
  Problem p;
  mscompat::SgemmFn sgemm;
  if (int rc = Start(nparam, 9, params, ndims, shapes, dtypes, 6, &p, &sgemm)) return rc;
  if (p.bias == nullptr || p.causal || !HasShape(ndims[7], shapes[7], {p.n, p.l, p.ev}) ||
      !mscompat::SameShape(ndims[8], shapes[8], ndims[3], shapes[3]))
    return kBadShape;
  if (p.s == 0 || p.e == 0 || p.n * p.l * p.ev == 0) return kBadShape;
  BiasGradient(p, shapes[3][0], static_cast<const float *>(params[6]),
               static_cast<const float *>(params[7]), static_cast<float *>(params[8]), sgemm);
  return kOk;
}
