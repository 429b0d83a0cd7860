"""Every public name of :mod:`mscompat.nn.functional` and :mod:`mscompat.tensor` runs on CPU in
a fresh process.

``mint`` functions exist on CPU and fail only when called ("kernel unregistered"), so importing
is no evidence: each name is called once on a tiny valid input, in one new Python process (one
MindSpore start-up for all of them, with no state left by other tests: no forced backend, no
compiled graph, no grad recording). A name is called as its row in :data:`CALLS` says, or, with
no row, on the first float32 sample of the op-database function entry whose ``torch_apis`` gives
the name; a public name with neither fails the test (``docs/contributing.rst``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The inputs the calls use, defined once in the child process.
PRELUDE = textwrap.dedent(
    """
    import mindspore as ms, numpy as np
    ms.set_context(device_target="CPU", mode=ms.PYNATIVE_MODE)
    import mscompat.nn.functional as F
    import mscompat.tensor as T
    rng = np.random.default_rng(0)
    def rand(*shape, dtype=np.float32):
        return ms.Tensor(rng.standard_normal(shape).astype(dtype))
    x = rand(2, 3)                                # (N, C) logits, a matrix
    v = rand(3)                                   # a vector
    seq = rand(1, 2, 6)                           # (N, C, L)
    img = rand(1, 2, 4, 4)                        # (N, C, H, W)
    vol = rand(1, 1, 4, 4, 4)                     # (N, C, D, H, W)
    labels = ms.Tensor(np.array([0, 2], np.int64))
    pm1 = ms.Tensor(np.array([1.0, -1.0], np.float32))
    pm1x = ms.Tensor(np.array([[1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]], np.float32))
    positive = ms.Tensor(np.abs(rng.standard_normal((2, 3))).astype(np.float32) + 0.1)
    idx = ms.Tensor(np.array([[0, 2], [1, 3]], np.int64))
    weight = rand(4, 3)
    grid = ms.Tensor(rng.uniform(-1, 1, (1, 3, 3, 2)).astype(np.float32))
    q = rand(1, 2, 4, 8)                          # (N, heads, L, E)
    """
)

#: ``"mirror.name": "an expression calling it"``, evaluated after :data:`PRELUDE`.
#: One row per public name of mscompat.nn.functional ("F.") and mscompat.tensor ("T.").
CALLS = {
    # mscompat.nn.functional
    "F.adaptive_avg_pool1d": "F.adaptive_avg_pool1d(seq, 4)",
    "F.adaptive_avg_pool2d": "F.adaptive_avg_pool2d(img, 3)",
    "F.adaptive_avg_pool3d": "F.adaptive_avg_pool3d(vol, 3)",
    "F.adaptive_max_pool1d": "F.adaptive_max_pool1d(seq, 4)",
    "F.adaptive_max_pool2d": "F.adaptive_max_pool2d(img, 3)",
    "F.adaptive_max_pool3d": "F.adaptive_max_pool3d(vol, 3)",
    "F.cosine_embedding_loss": "F.cosine_embedding_loss(x, x, pm1)",
    "F.cross_entropy": "F.cross_entropy(x, labels)",
    "F.embedding": "F.embedding(idx, weight)",
    "F.embedding_bag": "F.embedding_bag(idx, weight)",
    "F.fold": "F.fold(rand(1, 4, 4), output_size=(3, 3), kernel_size=2)",
    "F.gaussian_nll_loss": "F.gaussian_nll_loss(x, x, positive)",
    "F.grid_sample": "F.grid_sample(img, grid, align_corners=False)",
    "F.hinge_embedding_loss": "F.hinge_embedding_loss(x, pm1x)",
    "F.huber_loss": "F.huber_loss(x, x * 2)",
    "F.instance_norm": "F.instance_norm(seq)",
    "F.interpolate": "F.interpolate(img, scale_factor=2, mode='bilinear')",
    "F.kl_div": "F.kl_div(x, x, reduction='batchmean', log_target=True)",
    "F.local_response_norm": "F.local_response_norm(img, 2)",
    "F.margin_ranking_loss": "F.margin_ranking_loss(v[:2], v[1:], pm1)",
    "F.max_pool1d": "F.max_pool1d(seq, 2)",
    "F.max_pool2d": "F.max_pool2d(img, 2)",
    "F.max_pool3d": "F.max_pool3d(vol, 2)",
    "F.max_unpool1d": "F.max_unpool1d(*F.max_pool1d(seq, 2, return_indices=True), 2)",
    "F.max_unpool2d": "F.max_unpool2d(*F.max_pool2d(img, 2, return_indices=True), 2)",
    "F.max_unpool3d": "F.max_unpool3d(*F.max_pool3d(vol, 2, return_indices=True), 2)",
    "F.multi_margin_loss": "F.multi_margin_loss(x, labels)",
    "F.multilabel_margin_loss": "F.multilabel_margin_loss(x, ms.Tensor([[2, 0, -1], [1, -1, 0]]))",
    "F.nll_loss": "F.nll_loss(x, labels)",
    "F.one_hot": "F.one_hot(labels)",
    "F.poisson_nll_loss": "F.poisson_nll_loss(x, positive)",
    "F.rms_norm": "F.rms_norm(x, [3])",
    "F.scaled_dot_product_attention": "F.scaled_dot_product_attention(q, q, q, is_causal=True)",
    "F.soft_margin_loss": "F.soft_margin_loss(x, pm1x)",
    "F.triplet_margin_loss": "F.triplet_margin_loss(x, x * 2, x * 3)",
    "F.triplet_margin_with_distance_loss": "F.triplet_margin_with_distance_loss(x, x, x * 2)",
    "F.unfold": "F.unfold(img, 2)",
    "F.upsample": "F.upsample(img, scale_factor=2)",
    "F.upsample_bilinear": "F.upsample_bilinear(img, scale_factor=2)",
    "F.upsample_nearest": "F.upsample_nearest(img, scale_factor=2)",
    # mscompat.tensor
    "T.adaptive_avg_pool1d": "T.adaptive_avg_pool1d(seq, 4)",
    "T.addcmul": "T.addcmul(x, x, v, value=0.5)",
    "T.arange": "T.arange(1, 2.5, 0.5)",
    "T.argmax": "T.argmax(x, 1)",
    "T.argmin": "T.argmin(x)",
    "T.argsort": "T.argsort(x, dim=1)",
    "T.argwhere": "T.argwhere(x > 0)",
    "T.atan": "T.atan(x)",
    "T.atan2": "T.atan2(x, v)",
    "T.baddbmm": "T.baddbmm(v, rand(2, 2, 4), rand(2, 4, 3), alpha=0.5)",
    "T.clone": "T.clone(x)",
    "T.count_nonzero": "T.count_nonzero(x > 0, dim=1)",
    "T.cummax": "T.cummax(x, 1)",
    "T.cummin": "T.cummin(x, 1)",
    "T.cumsum": "T.cumsum(x, 1)",
    "T.einsum": "T.einsum('ij,kj->ik', x, x)",
    "T.flatten": "T.flatten(img, 1)",
    "T.full_like": "T.full_like(x, 2.5)",
    "T.isin": "T.isin(labels, labels)",
    "T.kthvalue": "T.kthvalue(x, 2, 1)",
    "T.linspace": "T.linspace(0, 1, 5)",
    "T.logsumexp": "T.logsumexp(x, 1)",
    "T.masked_select": "T.masked_select(x, x > 0)",
    "T.max_pool1d": "T.max_pool1d(seq, 2)",
    "T.max_pool2d": "T.max_pool2d(img, 2)",
    "T.max_pool3d": "T.max_pool3d(vol, 2)",
    "T.median": "T.median(x, 1)",
    "T.mm": "T.mm(x, x.T)",
    "T.mode": "T.mode(x, 1)",
    "T.msort": "T.msort(x)",
    "T.nanquantile": "T.nanquantile(x, 0.5, dim=1)",
    "T.nonzero": "T.nonzero(x > 0)",
    "T.nonzero_static": "T.nonzero_static(x > 0, size=4)",
    "T.norm": "T.norm(x, dim=1)",
    "T.ones_like": "T.ones_like(x)",
    "T.outer": "T.outer(v, v)",
    "T.quantile": "T.quantile(x, 0.25)",
    "T.roll": "T.roll(x, 1, 1)",
    "T.round": "T.round(x, decimals=1)",
    "T.sort": "T.sort(x, dim=1)",
    "T.squeeze": "T.squeeze(seq, 0)",
    "T.stack": "T.stack([x, x], 1)",
    "T.std": "T.std(x, 1)",
    "T.std_mean": "T.std_mean(x, 1)",
    "T.take_along_dim": "T.take_along_dim(x, T.argsort(x, dim=1), 1)",
    "T.topk": "T.topk(x, 2)",
    "T.tril": "T.tril(x)",
    "T.triu": "T.triu(x, 1)",
    "T.unflatten": "T.unflatten(x, 1, (3, 1))",
    "T.unique": "T.unique(labels, return_counts=True)",
    "T.unique_consecutive": "T.unique_consecutive(labels)",
    "T.unsqueeze": "T.unsqueeze(x, 0)",
    "T.var": "T.var(x, 1)",
    "T.var_mean": "T.var_mean(x, 1)",
    "T.zeros_like": "T.zeros_like(x)",
}

#: The child: every public name's row run once; the rows missing, failing or returning no
#: Tensor, as JSON on the last line of stdout.
_CHILD = PRELUDE + textwrap.dedent(
    """
    import json, sys, traceback
    calls = json.loads(sys.argv[1])
    public = {"F." + n for n in F.__all__} | {"T." + n for n in T.__all__}
    problems = {n: "not a public name of its mirror" for n in set(calls) - public}
    from mscompat.testing import OP_DB
    def as_ms(a):
        if isinstance(a, np.ndarray):
            return ms.Tensor(a)
        return [as_ms(b) for b in a] if isinstance(a, list) else a
    def from_db(name):
        # no row: the op database's first sample of the function entry mirroring the name
        mirror, _, fn = name.partition(".")
        api = ("torch.nn.functional." if mirror == "F" else "torch.") + fn
        for info in OP_DB:
            if info.backend or info.is_cell or api not in info.torch_apis:
                continue
            s = info.samples("float32" if "float32" in info.dtypes else info.dtypes[0])[0]
            args = ", ".join(f"as_ms(S.args[{i}])" for i in range(len(s.args)))
            return f"{name}({args}, **{{k: as_ms(v) for k, v in S.kwargs.items()}})", s
        return None, None
    samples = {}
    for name in public - set(calls):
        calls[name], samples[name] = from_db(name)
        if calls[name] is None:
            problems[name] = "no row in CALLS, no op-database entry (tests/test_fresh_process.py)"
    def tensors(out):
        if isinstance(out, ms.Tensor):
            return [out]
        if isinstance(out, (tuple, list)):
            return [t for o in out for t in tensors(o)]
        return []
    for name in sorted(n for n in public & set(calls) if calls[n] is not None):
        try:
            got = tensors(eval(calls[name], globals(), {"S": samples.get(name)}))
            if not got:
                problems[name] = "returned no Tensor"
            for t in got:
                t.asnumpy()  # the kernel really ran
        except Exception as exc:  # noqa: BLE001 - every failure is reported by name
            problems[name] = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}"
    print(json.dumps(problems))
    """
)


def test_every_mirror_name_runs_on_cpu_in_a_fresh_process(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    env.pop("MSCOMPAT_BACKEND", None)  # the registry's own choice, as users get it
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(CALLS)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    problems = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not problems, "\n".join(f"{name}: {why}" for name, why in sorted(problems.items()))
