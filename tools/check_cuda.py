"""Check the CUDA kernels against PyTorch's and torchvision's CUDA ops, without MindSpore.

MindSpore's GPU build is not needed: each ``mscompat/custom_ops/cuda/<name>_kernel.cu`` is built
with setup.py's nvcc command, loaded with ``ctypes`` and called through MindSpore's aot calling
convention (``int Fn(int nparam, void **params, int *ndims, int64_t **shapes, const char
**dtypes, void *stream, void *extra)``) with the device pointers of torch CUDA tensors and
torch's current stream, the way ``ops.Custom(func_type="aot")`` calls it on GPU.

Checked, float32 and float64, forward and backward:

* ``FocalLossForward``/``FocalLossBackward`` against MMDetection's ``py_sigmoid_focal_loss``
  (our plain-torch transcription, ``mscompat/testing/references/mmdet.py``) and its autograd
  gradients for ``pred`` and ``target``, computed by torch on the CPU in the same dtype;
* ``Nms``/``BatchedNms``: the kept indices, in order, equal to torchvision's CPU ``nms`` and
  per-class ``batched_nms`` (the result the CPU kernel gives), ties and duplicates included;
* ``RoIAlign``/``RoIAlignGrad`` against ``torchvision.ops.roi_align`` on CUDA and its gradient;
* ``DeformIm2Col``/``DeformIm2ColGrad``, with the weight's matmul as ``mscompat`` does it,
  against ``torchvision.ops.deform_conv2d`` on CUDA: output and the gradients of the input,
  offset, mask and weight.

``--large`` adds the benchmark-sized inputs (float32). ``--bench`` times each kernel beside the
torch op on the same input (CUDA events, alternating blocks, medians of per-block medians;
ratios as min/median/max over blocks).

``--device cpu`` runs the same checks on the CPU kernels (``_<name>_cpu*.so`` built in place)
with host pointers: it tests this harness where no GPU is.

Usage::

    python tools/check_cuda.py [--device cuda|cpu] [--large] [--bench] [--out DIR]
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import importlib.util
import json
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Sequence, Tuple

import numpy as np
import torch
import torchvision
from torchvision.ops import boxes as tv_boxes

ROOT = Path(__file__).resolve().parents[1]
OPS = ROOT / "mscompat" / "custom_ops"

#: setup.py's nvcc command (BuildKernels._build_cuda), source and output appended.
NVCC_FLAGS = ["-O3", "-shared", "-Xcompiler", "-fPIC", "-std=c++17", "-D_GLIBCXX_USE_CXX11_ABI=0"]


_DTYPE_NAMES = {
    torch.float32: b"float32",
    torch.float64: b"float64",
    torch.int64: b"int64",
    torch.int32: b"int32",
    torch.int8: b"int8",
}

_ENTRY = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_int,
    ctypes.POINTER(ctypes.c_void_p),
    ctypes.POINTER(ctypes.c_int),
    ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)),
    ctypes.POINTER(ctypes.c_char_p),
    ctypes.c_void_p,
    ctypes.c_void_p,
)


class Kernels:
    """The entry points of one built library, called with torch tensors (inputs, then outputs)."""

    def __init__(self, path: str, device: str) -> None:
        self.lib = ctypes.CDLL(path)
        self.device = device

    def __call__(self, name: str, *tensors: torch.Tensor) -> None:
        fn = _ENTRY((name, self.lib))
        ts = [t if t.is_contiguous() else t.contiguous() for t in tensors]
        n = len(ts)
        params = (ctypes.c_void_p * n)(*[t.data_ptr() for t in ts])
        ndims = (ctypes.c_int * n)(*[t.dim() for t in ts])
        keep = [(ctypes.c_int64 * max(t.dim(), 1))(*t.shape) for t in ts]
        shapes = (ctypes.POINTER(ctypes.c_int64) * n)(
            *[ctypes.cast(a, ctypes.POINTER(ctypes.c_int64)) for a in keep]
        )
        dtypes = (ctypes.c_char_p * n)(*[_DTYPE_NAMES[t.dtype] for t in ts])
        stream = torch.cuda.current_stream().cuda_stream if self.device == "cuda" else 0
        rc = fn(n, params, ndims, shapes, dtypes, ctypes.c_void_p(stream), None)
        if rc != 0:
            raise RuntimeError(f"{name} returned status {rc}")


def build(device: str, workdir: Path) -> Dict[str, Kernels]:
    """Every kernel library for ``device``: nvcc-built CUDA sources, or the in-place CPU builds."""
    out = {}
    for src in sorted((OPS / "cuda").glob("*_kernel.cu")):
        name = src.name[: -len("_kernel.cu")]
        if device == "cuda":
            target = workdir / f"_{name}_cuda.so"
            cmd = [shutil.which("nvcc") or "nvcc", *NVCC_FLAGS, str(src), "-o", str(target)]
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True)
            print(f"built {target.name} in {time.perf_counter() - t0:.1f} s", flush=True)
            out[name] = Kernels(str(target), device)
        else:
            found = sorted(glob.glob(str(OPS / f"_{name}_cpu*.so")))
            if not found:
                raise SystemExit(f"no CPU build of {name}: run setup.py build_ext --inplace")
            out[name] = Kernels(found[0], device)
    return out


def _reference_module(name: str) -> Any:
    """A plain-torch reference file, loaded without importing mscompat (which needs MindSpore)."""
    path = ROOT / "mscompat" / "testing" / "references" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"_ref_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ------------------------------------------------------------------------------ comparison


class Report:
    """Collects each check's worst error against its tolerance."""

    def __init__(self) -> None:
        self.rows: List[Dict[str, Any]] = []

    def close(
        self, what: str, got: torch.Tensor, want: torch.Tensor, rtol: float, atol: float
    ) -> None:
        got, want = got.detach().double().cpu(), want.detach().double().cpu()
        if got.shape != want.shape:
            self._add(what, False, f"shape {tuple(got.shape)} != {tuple(want.shape)}")
            return
        nan_ok = bool(torch.equal(torch.isnan(got), torch.isnan(want)))
        finite = ~torch.isnan(want)
        err = (got - want).abs()[finite]
        bound = (atol + rtol * want.abs())[finite]
        worst = float((err / bound).max()) if err.numel() else 0.0
        max_err = float(err.max()) if err.numel() else 0.0
        ok = nan_ok and worst <= 1.0
        self._add(
            what,
            ok,
            f"max |err| {max_err:.3g} ({worst:.2f} of tolerance)"
            + ("" if nan_ok else ", NaNs differ"),
        )

    def equal(self, what: str, got: Sequence[int], want: Sequence[int]) -> None:
        got, want = list(got), list(want)
        ok = got == want
        detail = (
            f"{len(want)} kept"
            if ok
            else f"got {got[:12]}... want {want[:12]}... ({len(got)} vs {len(want)})"
        )
        self._add(what, ok, detail)

    def _add(self, what: str, ok: bool, detail: str) -> None:
        self.rows.append({"check": what, "ok": ok, "detail": detail})
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {detail}", flush=True)

    @property
    def failures(self) -> int:
        return sum(not r["ok"] for r in self.rows)


#: (rtol, atol) per dtype for results that are sums in another order than the reference's.
TOL = {torch.float32: (2e-5, 2e-6), torch.float64: (1e-11, 1e-13)}


def _scaled_atol(dtype: torch.dtype, ref: torch.Tensor) -> Tuple[float, float]:
    """TOL with atol scaled by the reference's largest magnitude (sums of signed terms cancel)."""
    rtol, atol = TOL[dtype]
    return rtol, atol + rtol * float(ref.detach().abs().max().clamp(min=1.0))


# ------------------------------------------------------------------------------ focal loss


def check_focal(k: Kernels, dev: str, rep: Report, gen: torch.Generator) -> None:
    mmdet = _reference_module("mmdet")
    for dtype in (torch.float32, torch.float64):
        for gamma, alpha in (
            (2.0, 0.25),
            (1.5, 0.5),
            (0.0, 0.25),
            (1.0, 0.75),
            (3.0, 0.25),
            (0.5, 0.1),
            (0.7, 0.25),
        ):
            x = torch.randn(1000, 80, generator=gen, dtype=torch.float64) * 4
            x[0, :8] = torch.tensor(
                [1e4, -1e4, 0.0, 50.0, -50.0, 1e-8, 30.0, -30.0], dtype=torch.float64
            )
            t = (torch.rand(1000, 80, generator=gen, dtype=torch.float64) < 0.1).double()
            t[1] = torch.rand(80, generator=gen, dtype=torch.float64)  # soft targets (QFL-like)
            t[0, :8] = torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0, 0.5, 1.0, 0.0], dtype=torch.float64)
            dloss = torch.randn(1000, 80, generator=gen, dtype=torch.float64)
            xr, tr = x.to(dtype).requires_grad_(), t.to(dtype).requires_grad_()
            want = mmdet.py_sigmoid_focal_loss(xr, tr, gamma=gamma, alpha=alpha, reduction="none")
            want_dx, want_dt = torch.autograd.grad(want, (xr, tr), dloss.to(dtype))
            xd, td, gd = (v.to(dev, dtype) for v in (x, t, dloss))
            coef = torch.tensor([gamma, alpha], dtype=dtype, device=dev)
            loss = torch.empty_like(xd)
            k("FocalLossForward", xd, td, coef, loss)
            dx, dt = torch.empty_like(xd), torch.empty_like(xd)
            k("FocalLossBackward", xd, td, coef, gd, dx, dt)
            tag = f"focal {str(dtype)[6:]} gamma={gamma} alpha={alpha}"
            rtol, atol = TOL[dtype]
            rep.close(f"{tag} loss", loss, want, rtol * 5, atol)
            rep.close(
                f"{tag} dpred", dx, want_dx, *_scaled_atol(dtype, want_dx.nan_to_num(0, 0, 0))
            )
            rep.close(
                f"{tag} dtarget", dt, want_dt, *_scaled_atol(dtype, want_dt.nan_to_num(0, 0, 0))
            )


# ------------------------------------------------------------------------------ nms


def _bits(value: float) -> int:
    """A float64's bit pattern as an int64: how the kernels take a threshold or a scale."""
    return int(np.array(value, np.float64).view(np.int64))


def _roi_params(ratio: int, aligned: bool, scale: float, dev: str) -> torch.Tensor:
    """RoIAlign's ``p``: [sampling_ratio, aligned, half, spatial_scale's bits]."""
    return torch.tensor([ratio, int(aligned), 0, _bits(scale)], dtype=torch.int64, device=dev)


def _random_boxes(n: int, gen: torch.Generator, dtype: torch.dtype) -> torch.Tensor:
    xy = torch.rand(n, 2, generator=gen, dtype=torch.float64) * 200
    wh = torch.rand(n, 2, generator=gen, dtype=torch.float64) * 60
    b = torch.cat([xy, xy + wh], 1)
    if n >= 8:
        b[1] = b[0]  # a duplicate
        b[2, 2:] = b[2, :2]  # zero area
        b[3] = b[4] + 0.25  # near-duplicate
    return b.to(dtype)


def _run_nms(
    k: Kernels, dev: str, boxes: torch.Tensor, scores: torch.Tensor, thr: float, idxs=None
) -> List[int]:
    n = boxes.shape[0]
    p = torch.tensor([_bits(thr)], dtype=torch.int64, device=dev)
    keep = torch.empty(n, dtype=torch.int64, device=dev)
    count = torch.empty(1, dtype=torch.int64, device=dev)
    bd, sd = boxes.to(dev), scores.to(dev)
    if idxs is None:
        k("Nms", bd, sd, p, keep, count)
    else:
        k("BatchedNms", bd, sd, idxs.to(dev), p, keep, count)
    c = int(count.cpu()[0]) if n else 0
    return keep.cpu()[:c].tolist()


def check_nms(k: Kernels, dev: str, rep: Report, gen: torch.Generator) -> None:
    for dtype in (torch.float32, torch.float64):
        for n in (1, 7, 64, 65, 1000, 5000):
            for thr in (0.5, 0.7, 0.0, 1.0):
                if n == 5000 and thr != 0.5:
                    continue
                boxes = _random_boxes(n, gen, dtype)
                scores = torch.rand(n, generator=gen, dtype=torch.float64).to(dtype)
                if n >= 64:  # ties: a few distinct scores
                    scores[: n // 2] = torch.round(scores[: n // 2] * 4) / 4
                want = torchvision.ops.nms(boxes, scores, thr).tolist()
                tag = f"nms {str(dtype)[6:]} n={n} iou>{thr}"
                rep.equal(tag, _run_nms(k, dev, boxes, scores, thr), want)
                if n in (65, 1000):
                    idxs = torch.randint(0, 5, (n,), generator=gen)
                    s = torch.rand(n, generator=gen, dtype=torch.float64).to(dtype)
                    want = tv_boxes._batched_nms_vanilla(boxes, s, idxs, thr).tolist()
                    rep.equal(f"batched_{tag}", _run_nms(k, dev, boxes, s, thr, idxs), want)


# ------------------------------------------------------------------------------ roi_align


def _random_rois(k: int, n: int, h: int, w: int, gen: torch.Generator) -> torch.Tensor:
    b = torch.randint(0, n, (k, 1), generator=gen).double()
    xy = torch.rand(k, 2, generator=gen, dtype=torch.float64) * torch.tensor([w, h]) * 1.2 - 4
    wh = torch.rand(k, 2, generator=gen, dtype=torch.float64) * torch.tensor([w, h]) * 0.8
    r = torch.cat([b, xy, xy + wh], 1)
    r[0, 3:] = r[0, 1:3] + 0.3  # tiny
    r[1, 3:] = r[1, 1:3] - 2.0  # inverted
    r[2, 1:] = torch.tensor([-10.0, -10.0, w + 10.0, h + 10.0])  # over the border
    return r


def _check_roi_align_half(k, rep, tag, x, rois, dy, size, scale, ratio, aligned, p) -> None:
    """float16 as the front door runs it on GPU (float32 arithmetic, rounded once), against
    torchvision under ``torch.autocast``, which runs ``roi_align`` in float32 the same way. The
    detail also gives the distance to torchvision's native float16 CUDA kernel (its coordinates
    rounded to float16 at each step)."""
    xh, rh, dyh = x.half(), rois.half(), dy.half()
    xa = xh.clone().requires_grad_()
    with torch.autocast("cuda", dtype=torch.float16):
        want = torchvision.ops.roi_align(xa, rh, size, scale, ratio, aligned)
    (want_dx,) = torch.autograd.grad(want, xa, dyh)
    xn = xh.clone().requires_grad_()
    native = torchvision.ops.roi_align(xn, rh, size, scale, ratio, aligned)
    (native_dx,) = torch.autograd.grad(native, xn, dyh)
    y = torch.empty(want.shape, dtype=torch.float32, device=x.device)
    dx = torch.empty_like(x)
    carrier = torch.empty(size, dtype=torch.int8, device=x.device)
    k("RoIAlign", xh.float(), rh.float(), carrier, p, y)
    k("RoIAlignGrad", dyh.float(), rh.float(), x, carrier, p, dx)
    for name, got, ref, nat in (("fwd", y, want, native), ("dx", dx, want_dx, native_dx)):
        ref = ref.detach()
        far = float((got.half().float() - nat.detach().float()).abs().max())
        # one float16 rounding of float32 results that may differ in their last bits
        atol = 1e-3 * float(ref.abs().max().clamp(min=1))
        rep.close(
            f"{tag} float16 {name} vs autocast (native float16 kernel: {far:.3g} away)",
            got.half(),
            ref,
            1e-3,
            atol,
        )


def check_roi_align(k: Kernels, dev: str, rep: Report, gen: torch.Generator) -> None:
    cases = [
        ((2, 8, 32, 40), (7, 7), 1.0, 2, False),
        ((2, 8, 32, 40), (7, 7), 0.5, 2, True),
        ((1, 4, 20, 24), (2, 3), 0.25, 1, True),
        ((2, 5, 17, 13), (3, 3), 1.3, 0, False),
        ((2, 5, 17, 13), (3, 3), 1.0, -1, True),
        ((3, 2, 9, 11), (1, 1), 1.0, 4, False),
    ]
    for dtype in (torch.float32, torch.float64):
        for shape, size, scale, ratio, aligned in cases:
            n, c, h, w = shape
            x = torch.randn(*shape, generator=gen, dtype=torch.float64).to(dev, dtype)
            rois = _random_rois(40, n, int(h / scale), int(w / scale), gen).to(dev, dtype)
            xr = x.clone().requires_grad_()
            want = torchvision.ops.roi_align(xr, rois, size, scale, ratio, aligned)
            dy = torch.randn(want.shape, generator=gen, dtype=torch.float64).to(dev, dtype)
            (want_dx,) = torch.autograd.grad(want, xr, dy)
            p = _roi_params(ratio, aligned, scale, dev)
            carrier = torch.empty(size, dtype=torch.int8, device=dev)
            y = torch.empty_like(want)
            k("RoIAlign", x, rois, carrier, p, y)
            dx = torch.empty_like(x)
            k("RoIAlignGrad", dy, rois, x, carrier, p, dx)
            tag = (
                f"roi_align {str(dtype)[6:]} {shape} out={size} scale={scale} ratio={ratio} "
                f"aligned={aligned}"
            )
            rep.close(f"{tag} fwd", y, want, *_scaled_atol(dtype, want))
            rep.close(f"{tag} dx", dx, want_dx, *_scaled_atol(dtype, want_dx))
            if dtype == torch.float32 and dev == "cuda":
                _check_roi_align_half(k, rep, tag, x, rois, dy, size, scale, ratio, aligned, p)


# ------------------------------------------------------------------------------ deform_conv


def _deform(k: Kernels, x, offset, mask, weight, bias, stride, padding, dilation, groups):
    """mscompat's deform_conv2d on the kernel: im2col, then one matmul per weight group."""
    n = x.shape[0]
    oc, cg, kh, kw = weight.shape
    off_groups = offset.shape[1] // (2 * kh * kw)
    geom = torch.tensor(
        [kh, kw, *stride, *padding, *dilation, off_groups, int(mask is not None)],
        dtype=torch.int64,
        device=x.device,
    )
    carrier = torch.empty((kh, kw), dtype=torch.int8, device=x.device)
    oh, ow = offset.shape[2:]
    m = mask if mask is not None else torch.zeros(1, dtype=x.dtype, device=x.device)
    cols = torch.empty((n, x.shape[1] * kh * kw, oh * ow), dtype=x.dtype, device=x.device)
    k("DeformIm2Col", x, offset, m, geom, carrier, cols)
    wg = weight.reshape(groups, oc // groups, cg * kh * kw)
    cg_cols = cols.reshape(n, groups, cg * kh * kw, oh * ow)
    out = torch.einsum("gok,ngkl->ngol", wg, cg_cols).reshape(n, oc, oh, ow)
    if bias is not None:
        out = out + bias.reshape(1, -1, 1, 1)

    def backward(dout: torch.Tensor):
        d = dout.reshape(n, groups, oc // groups, oh * ow)
        dcols = torch.einsum("gok,ngol->ngkl", wg, d).reshape(cols.shape).contiguous()
        dweight = torch.einsum("ngol,ngkl->gok", d, cg_cols).reshape(weight.shape)
        dx, doff = torch.empty_like(x), torch.empty_like(offset)
        dm = torch.empty_like(m)
        k("DeformIm2ColGrad", dcols, x, offset, m, geom, carrier, dx, doff, dm)
        return dx, doff, (dm if mask is not None else None), dweight

    return out, backward


def check_deform_conv(k: Kernels, dev: str, rep: Report, gen: torch.Generator) -> None:
    # (n, c, h, w), oc, kernel, stride, padding, dilation, weight groups, offset groups, mask
    cases = [
        ((2, 6, 9, 11), 4, (3, 3), (1, 1), (1, 1), (1, 1), 1, 1, True),
        ((2, 6, 9, 11), 4, (3, 3), (2, 1), (1, 0), (1, 2), 2, 2, True),
        ((1, 4, 8, 8), 6, (3, 2), (1, 2), (0, 1), (2, 1), 1, 2, False),
        ((2, 3, 5, 7), 3, (1, 1), (1, 1), (0, 0), (1, 1), 3, 1, True),
    ]
    for dtype in (torch.float32, torch.float64):
        for shape, oc, ks, stride, padding, dilation, groups, og, use_mask in cases:
            n, c, h, w = shape
            oh = (h + 2 * padding[0] - dilation[0] * (ks[0] - 1) - 1) // stride[0] + 1
            ow = (w + 2 * padding[1] - dilation[1] * (ks[1] - 1) - 1) // stride[1] + 1
            kk = ks[0] * ks[1]

            def r(*s, scale=1.0, dtype=dtype):
                return (torch.randn(*s, generator=gen, dtype=torch.float64) * scale).to(dev, dtype)

            x, weight, bias = r(n, c, h, w), r(oc, c // groups, *ks), r(oc)
            offset = r(n, 2 * og * kk, oh, ow, scale=2.0)
            offset.view(-1)[:5] = torch.tensor([7.5, -9.0, 0.5, 30.0, -0.25], dtype=dtype)
            mask = torch.sigmoid(r(n, og * kk, oh, ow)) if use_mask else None
            leaves = [t.clone().requires_grad_() for t in (x, offset, weight, bias)]
            mr = mask.clone().requires_grad_() if use_mask else None
            want = torchvision.ops.deform_conv2d(
                leaves[0], leaves[1], leaves[2], leaves[3], stride, padding, dilation, mr
            )
            dout = r(*want.shape)
            wants = torch.autograd.grad(want, leaves[:3] + ([mr] if use_mask else []), dout)
            got, backward = _deform(
                k, x, offset, mask, weight, bias, stride, padding, dilation, groups
            )
            dx, doff, dm, dw = backward(dout)
            tag = (
                f"deform_conv2d {str(dtype)[6:]} {shape} oc={oc} k={ks} s={stride} p={padding} "
                f"d={dilation} g={groups} og={og} mask={use_mask}"
            )
            rep.close(f"{tag} out", got, want, *_scaled_atol(dtype, want))
            for name, g_, w_ in zip(
                ("dx", "doffset", "dweight", "dmask"), (dx, doff, dw, dm), wants
            ):
                rep.close(f"{tag} {name}", g_, w_, *_scaled_atol(dtype, w_))


# ------------------------------------------------------------------------------ benchmarks


def _time_ms(fn: Callable[[], Any], dev: str, reps: int) -> float:
    if dev == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / reps
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    return (time.perf_counter() - t0) * 1e3 / reps


def paired(
    ours: Callable[[], Any], theirs: Callable[[], Any], dev: str, blocks: int = 9, reps: int = 20
) -> Dict[str, float]:
    """Alternating blocks of ``reps`` calls; per-block ratios ours/theirs."""
    for f in (ours, theirs):
        f()
    if dev == "cuda":
        torch.cuda.synchronize()
    a, b = [], []
    for i in range(blocks):
        pair = [(ours, a), (theirs, b)] if i % 2 == 0 else [(theirs, b), (ours, a)]
        for f, acc in pair:
            acc.append(_time_ms(f, dev, reps))
    ratios = sorted(x / y for x, y in zip(a, b))
    return {
        "ours_ms": float(np.median(a)),
        "torch_ms": float(np.median(b)),
        "ratio": float(np.median(ratios)),
        "ratio_min": ratios[0],
        "ratio_max": ratios[-1],
    }


def check_large(kernels: Dict[str, Kernels], dev: str, rep: Report, gen: torch.Generator) -> None:
    """The benchmark-sized inputs (grid-stride loops, many blocks, a 20,000-box mask), float32."""
    f32 = torch.float32
    mmdet = _reference_module("mmdet")
    x = torch.randn(100_000, 80, generator=gen)
    t = (torch.rand(100_000, 80, generator=gen) < 0.01).float()
    xr, tr = x.clone().requires_grad_(), t.clone().requires_grad_()
    want = mmdet.py_sigmoid_focal_loss(xr, tr, gamma=2.0, alpha=0.25, reduction="none")
    g = torch.randn(want.shape, generator=gen)
    want_dx, want_dt = torch.autograd.grad(want, (xr, tr), g)
    xd, td, gd = x.to(dev), t.to(dev), g.to(dev)
    coef = torch.tensor([2.0, 0.25], device=dev)
    loss, dx, dt = torch.empty_like(xd), torch.empty_like(xd), torch.empty_like(xd)
    kernels["focal_loss"]("FocalLossForward", xd, td, coef, loss)
    kernels["focal_loss"]("FocalLossBackward", xd, td, coef, gd, dx, dt)
    for name, got, ref in (("loss", loss, want), ("dpred", dx, want_dx), ("dtarget", dt, want_dt)):
        rep.close(f"large focal 100000x80 {name}", got, ref, *_scaled_atol(f32, ref))
    for n in (20_000,):
        boxes = _random_boxes(n, gen, f32) * 4
        scores = torch.rand(n, generator=gen)
        for thr in (0.5, 0.7):
            want = torchvision.ops.nms(boxes, scores, thr).tolist()
            rep.equal(
                f"large nms n={n} iou>{thr}",
                _run_nms(kernels["nms"], dev, boxes, scores, thr),
                want,
            )
    feat = torch.randn(2, 256, 100, 136, generator=gen).to(dev)
    rois = _random_rois(512, 2, 800, 1088, gen).float().to(dev)
    fr = feat.clone().requires_grad_()
    want = torchvision.ops.roi_align(fr, rois, (7, 7), 0.125, 2, True)
    dy = torch.randn(want.shape, generator=gen).to(dev)
    (want_dx,) = torch.autograd.grad(want, fr, dy)
    p = _roi_params(2, True, 0.125, dev)
    carrier = torch.empty((7, 7), dtype=torch.int8, device=dev)
    y, dfeat = torch.empty_like(want), torch.empty_like(feat)
    kernels["roi"]("RoIAlign", feat, rois, carrier, p, y)
    kernels["roi"]("RoIAlignGrad", dy, rois, feat, carrier, p, dfeat)
    rep.close("large roi_align 2x256x100x136 512 RoIs fwd", y, want, *_scaled_atol(f32, want))
    rep.close("large roi_align dx", dfeat, want_dx, *_scaled_atol(f32, want_dx))
    xd = torch.randn(2, 64, 50, 68, generator=gen).to(dev)
    wd = (torch.randn(64, 64, 3, 3, generator=gen) * 0.05).to(dev)
    off = (torch.randn(2, 18, 50, 68, generator=gen) * 2).to(dev)
    msk = torch.rand(2, 9, 50, 68, generator=gen).to(dev)
    leaves = [v.clone().requires_grad_() for v in (xd, off, wd, msk)]
    want = torchvision.ops.deform_conv2d(
        leaves[0], leaves[1], leaves[2], None, (1, 1), (1, 1), (1, 1), leaves[3]
    )
    do = torch.randn(want.shape, generator=gen).to(dev)
    wants = torch.autograd.grad(want, leaves, do)
    got, backward = _deform(
        kernels["deform_conv"], xd, off, msk, wd, None, (1, 1), (1, 1), (1, 1), 1
    )
    dxd, doff, dm, dw = backward(do)
    rep.close("large deform_conv2d 2x64x50x68 out", got, want, *_scaled_atol(f32, want))
    for name, a, b in zip(("dx", "doffset", "dweight", "dmask"), (dxd, doff, dw, dm), wants):
        rep.close(f"large deform_conv2d {name}", a, b, *_scaled_atol(f32, b))


def bench(
    kernels: Dict[str, Kernels], dev: str, gen: torch.Generator
) -> Dict[str, Dict[str, float]]:
    out = {}
    f32 = torch.float32
    # focal: 100k anchors x 80 classes, the elementwise loss and its gradient.
    x = torch.randn(100_000, 80, generator=gen).to(dev)
    t = (torch.rand(100_000, 80, generator=gen) < 0.01).float().to(dev)
    coef = torch.tensor([2.0, 0.25], device=dev)
    loss, g = torch.empty_like(x), torch.ones_like(x)
    dx, dt = torch.empty_like(x), torch.empty_like(x)
    kf = kernels["focal_loss"]
    out["focal fwd (100000x80)"] = paired(
        lambda: kf("FocalLossForward", x, t, coef, loss),
        lambda: torchvision.ops.sigmoid_focal_loss(x, t, 0.25, 2.0, "none"),
        dev,
    )
    xr = x.clone().requires_grad_()

    def torch_fb():
        torchvision.ops.sigmoid_focal_loss(xr, t, 0.25, 2.0, "sum").backward()

    out["focal fwd+bwd (100000x80)"] = paired(
        lambda: (
            kf("FocalLossForward", x, t, coef, loss),
            kf("FocalLossBackward", x, t, coef, g, dx, dt),
        ),
        torch_fb,
        dev,
    )
    # nms: 5000 boxes (a detector's pre-NMS top-k).
    boxes = _random_boxes(5000, gen, f32).to(dev)
    scores = torch.rand(5000, generator=gen).to(dev)
    kn = kernels["nms"]
    out["nms (5000 boxes, iou 0.5)"] = paired(
        lambda: _run_nms(kn, dev, boxes, scores, 0.5),
        lambda: torchvision.ops.nms(boxes, scores, 0.5).tolist(),
        dev,
        reps=5,
    )
    # roi_align: a Faster R-CNN box head's level (256 channels, 512 RoIs, 7x7, ratio 2).
    feat = torch.randn(2, 256, 100, 136, generator=gen).to(dev)
    rois = _random_rois(512, 2, 800, 1088, gen).float().to(dev)
    p = _roi_params(2, True, 0.125, dev)
    carrier = torch.empty((7, 7), dtype=torch.int8, device=dev)
    y = torch.empty((512, 256, 7, 7), device=dev)
    dy = torch.randn(y.shape, generator=gen).to(dev)
    dfeat = torch.empty_like(feat)
    kr = kernels["roi"]
    out["roi_align fwd (2x256x100x136, 512 RoIs)"] = paired(
        lambda: kr("RoIAlign", feat, rois, carrier, p, y),
        lambda: torchvision.ops.roi_align(feat, rois, (7, 7), 0.125, 2, True),
        dev,
    )
    fr = feat.clone().requires_grad_()
    out["roi_align fwd+bwd"] = paired(
        lambda: (
            kr("RoIAlign", feat, rois, carrier, p, y),
            kr("RoIAlignGrad", dy, rois, feat, carrier, p, dfeat),
        ),
        lambda: torchvision.ops.roi_align(fr, rois, (7, 7), 0.125, 2, True).backward(dy),
        dev,
    )
    # deform_conv2d: a DCN layer of a ResNet stage (2 x 256 x 50 x 68, 3x3, mask).
    xd = torch.randn(2, 256, 50, 68, generator=gen).to(dev)
    wd = (torch.randn(256, 256, 3, 3, generator=gen) * 0.02).to(dev)
    off = torch.randn(2, 18, 50, 68, generator=gen).to(dev)
    msk = torch.rand(2, 9, 50, 68, generator=gen).to(dev)
    kd = kernels["deform_conv"]
    out["deform_conv2d fwd (2x256x50x68, 3x3, mask)"] = paired(
        lambda: _deform(kd, xd, off, msk, wd, None, (1, 1), (1, 1), (1, 1), 1)[0],
        lambda: torchvision.ops.deform_conv2d(xd, off, wd, None, (1, 1), (1, 1), (1, 1), msk),
        dev,
        reps=5,
    )
    geom = torch.tensor([3, 3, 1, 1, 1, 1, 1, 1, 1, 1], dtype=torch.int64, device=dev)
    carrier3 = torch.empty((3, 3), dtype=torch.int8, device=dev)
    cols = torch.empty((2, 256 * 9, 50 * 68), device=dev)
    out["deform_conv2d: our im2col alone vs torchvision's whole op"] = paired(
        lambda: kd("DeformIm2Col", xd, off, msk, geom, carrier3, cols),
        lambda: torchvision.ops.deform_conv2d(xd, off, wd, None, (1, 1), (1, 1), (1, 1), msk),
        dev,
        reps=5,
    )
    leaves = [t_.clone().requires_grad_() for t_ in (xd, off, wd, msk)]
    do = torch.randn(2, 256, 50, 68, generator=gen).to(dev)

    def ours_fb():
        o, back = _deform(kd, xd, off, msk, wd, None, (1, 1), (1, 1), (1, 1), 1)
        return back(do)

    out["deform_conv2d fwd+bwd"] = paired(
        ours_fb,
        lambda: torchvision.ops.deform_conv2d(
            leaves[0], leaves[1], leaves[2], None, (1, 1), (1, 1), (1, 1), leaves[3]
        ).backward(do),
        dev,
        reps=5,
    )
    return out


def main(argv: Sequence[str] = ()) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--bench", action="store_true")
    parser.add_argument("--large", action="store_true", help="also the benchmark-sized inputs")
    parser.add_argument("--out", type=Path, default=None, help="write report.json here")
    parser.add_argument(
        "--only", default="", help="comma-separated: focal,nms,roi_align,deform_conv"
    )
    args = parser.parse_args(argv or None)
    dev = args.device
    if dev == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA device")
    info = {
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "python": platform.python_version(),
        "gpu": torch.cuda.get_device_name() if dev == "cuda" else platform.processor(),
    }
    if dev == "cuda":
        info["nvcc"] = (
            subprocess.run(["nvcc", "--version"], capture_output=True, text=True)
            .stdout.strip()
            .splitlines()[-1]
        )
    print(json.dumps(info), flush=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rep = Report()
    with tempfile.TemporaryDirectory() as tmp:
        kernels = build(dev, Path(tmp))
        gen = torch.Generator().manual_seed(0)
        checks = {
            "focal": (check_focal, "focal_loss"),
            "nms": (check_nms, "nms"),
            "roi_align": (check_roi_align, "roi"),
            "deform_conv": (check_deform_conv, "deform_conv"),
        }
        only = [s for s in args.only.split(",") if s] or list(checks)
        for name in only:
            fn, lib = checks[name]
            fn(kernels[lib], dev, rep, gen)
        if args.large:
            check_large(kernels, dev, rep, gen)
        timings = bench(kernels, dev, gen) if args.bench else {}
    for name, row in timings.items():
        print(
            f"bench {name}: ours {row['ours_ms']:.3f} ms, torch {row['torch_ms']:.3f} ms, "
            f"ratio {row['ratio']:.2f} (min {row['ratio_min']:.2f}, max {row['ratio_max']:.2f})",
            flush=True,
        )
    print(f"{len(rep.rows) - rep.failures} of {len(rep.rows)} checks passed", flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "report.json").write_text(
            json.dumps({"info": info, "checks": rep.rows, "bench": timings}, indent=1)
        )
    return 1 if rep.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
