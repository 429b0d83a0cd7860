"""nms / batched_nms beyond the op database: the backend choice, the composite's documented
difference (the order of equal scores among batched_nms's kept boxes above 1,000 boxes), and
the static form inside ms.jit with more boxes than MindSpore's NMSWithMask takes."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest

from mscompat.custom_ops import use_backend, which
from mscompat.testing.db.vision_nms import batched_nms_ref, nms_ref
from mscompat.vision import batched_nms, nms

torch = pytest.importorskip("torch")


def _boxes(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    xy = rng.random((n, 2)) * 600
    return np.concatenate([xy, xy + rng.random((n, 2)) * 80], 1).astype(np.float32)


def test_which_names_the_backend_that_runs():
    b = ms.Tensor(_boxes(10))
    s = ms.Tensor(np.ones(10, np.float32))
    assert which("nms", b, s, 0.5).backend in ("aot", "composite")
    assert which("batched_nms", b, s, ms.Tensor(np.zeros(10, np.int64)), 0.5).op == (
        "vision.batched_nms"
    )
    assert which("nms", b[:0], s[:0], 0.5).backend == "none"  # empty: the front door answers


def test_composite_orders_tied_kept_scores_by_position_on_the_per_class_path():
    n = 1200  # torchvision's per-class path; three score levels: many ties among kept boxes
    rng = np.random.default_rng(3)
    b, s = _boxes(n, 3), rng.integers(0, 3, n).astype(np.float32)
    idxs = rng.integers(0, 40, n)
    with use_backend("composite"):
        got = batched_nms(ms.Tensor(b), ms.Tensor(s), ms.Tensor(idxs), 0.5).asnumpy()
    want = batched_nms_ref(torch.from_numpy(b), torch.from_numpy(s), torch.from_numpy(idxs), 0.5)
    want = want.numpy()
    assert sorted(got.tolist()) == sorted(want.tolist())
    assert np.array_equal(s[got], s[want])  # the same scores in the same order
    # within each score level, by position (a stable order); torchvision's is std::sort's
    for level in np.unique(s[got]):
        at = got[s[got] == level]
        assert np.array_equal(at, np.sort(at))


def test_static_form_in_graph_mode_beyond_nmswithmask_limit():
    n = 4000  # MindSpore's NMSWithMask takes at most 2,864 boxes
    rng = np.random.default_rng(4)
    b, s = _boxes(n, 4), rng.random(n).astype(np.float32)

    @ms.jit
    def run(boxes, scores):
        return nms(boxes, scores, 0.6, max_output=3000)

    keep, count = run(ms.Tensor(b), ms.Tensor(s))
    want = nms_ref(torch.from_numpy(b), torch.from_numpy(s), 0.6, max_output=3000)
    assert np.array_equal(keep.asnumpy(), want[0].numpy())
    assert int(count) == int(want[1])


def test_float16_is_refused_as_torchvision_cpu_refuses_it():
    b = ms.Tensor(_boxes(4).astype(np.float16))
    with pytest.raises(TypeError, match="float16"):
        nms(b, ms.Tensor(np.ones(4, np.float16)), 0.5)
