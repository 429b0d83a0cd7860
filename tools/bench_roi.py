"""Side by side: torchvision's CPU roi_pool/roi_align against mscompat's (graph mode), forward
and forward+backward, in alternating blocks in one process, on the FPN-like input of
docs/api/vision_roi.rst. Needs torchvision's compiled ops (the default CUDA torch wheel, which
runs on CPU) and MindSpore in one environment:

    PYTHONPATH=. python tools/bench_roi.py
"""

import time

import mindspore as ms
import numpy as np
import torch
import torchvision

from mscompat.testing.bench import settle
from mscompat.vision import roi_align, roi_pool

rng = np.random.default_rng(0)
x = rng.standard_normal((2, 256, 50, 68)).astype(np.float32)
K = 512
b = rng.integers(0, 2, K).astype(np.float32)
xy = rng.uniform(0, 800, (K, 2))
wh = rng.uniform(32, 400, (K, 2))
boxes = np.concatenate([b[:, None], xy, xy + wh], 1).astype(np.float32)
cot = rng.standard_normal((K, 256, 7, 7)).astype(np.float32)
S = 1 / 16
xt, bt, ct = torch.from_numpy(x), torch.from_numpy(boxes), torch.from_numpy(cot)
xm, bm, cm = ms.Tensor(x), ms.Tensor(boxes), ms.Tensor(cot)


def t_fwd(fn, kw):
    return lambda: fn(xt, bt, (7, 7), spatial_scale=S, **kw)


def t_fb(fn, kw):
    def step():
        a = xt.clone().requires_grad_(True)
        (fn(a, bt, (7, 7), spatial_scale=S, **kw) * ct).sum().backward()
        return a.grad

    return step


def m_fwd(fn, kw):
    def f(a, bb):
        return fn(a, bb, (7, 7), S, **kw)

    j = ms.jit(f)
    return lambda: j(xm, bm).asnumpy()


def m_fb(fn, kw):
    def loss(a, bb, c):
        return (fn(a, bb, (7, 7), S, **kw) * c).sum()

    g = ms.jit(ms.grad(loss))
    return lambda: g(xm, bm, cm).asnumpy()


for name, tfn, mfn, kw in (
    ("roi_pool", torchvision.ops.roi_pool, roi_pool, {}),
    ("roi_align", torchvision.ops.roi_align, roi_align, {"sampling_ratio": 2}),
):
    for direction, tmk, mmk in (("forward", t_fwd, m_fwd), ("forward+backward", t_fb, m_fb)):
        t, m = tmk(tfn, kw), mmk(mfn, kw)
        m()
        t()
        ratios, tts, tms = [], [], []
        for _ in range(7):
            settle()
            t0 = time.perf_counter()
            [t() for _ in range(5)]
            tt = (time.perf_counter() - t0) / 5
            settle()
            t0 = time.perf_counter()
            [m() for _ in range(5)]
            tm = (time.perf_counter() - t0) / 5
            ratios.append(tm / tt)
            tts.append(tt)
            tms.append(tm)
        r = sorted(ratios)
        print(
            f"{name} {direction}: torchvision {np.median(tts) * 1e3:.0f} ms, "
            f"mscompat {np.median(tms) * 1e3:.0f} ms, "
            f"ratio median {r[3]:.2f} (min {r[0]:.2f}, max {r[-1]:.2f})",
            flush=True,
        )
