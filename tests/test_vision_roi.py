"""RoI ops facts the op database's samples do not reach: the kernel's skipped RoIs (how
MultiScaleRoIAlign masks other levels), its single-level path, and the backend choice."""

from __future__ import annotations

import mindspore as ms
import numpy as np

from mscompat.custom_ops.registry import call, which
from mscompat.vision import MultiScaleRoIAlign, roi_align


def _x() -> ms.Tensor:
    return ms.Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 9)).astype(np.float32))


def test_a_marked_roi_gives_zeros_and_no_gradient() -> None:
    rois = np.array([[1, 0.5, 1.0, 6.0, 7.0], [-1, 0.5, 1.0, 6.0, 7.0]], np.float32)
    out = call("vision.roi_align", _x(), ms.Tensor(rois), (2, 2), 1.0, 2, False).asnumpy()
    want = roi_align(_x(), ms.Tensor(rois[:1]), 2, 1.0, 2).asnumpy()
    assert np.array_equal(out[:1], want) and not out[1].any()

    def loss(x: ms.Tensor) -> ms.Tensor:
        return call("vision.roi_align", x, ms.Tensor(rois[1:]), (2, 2), 1.0, 2, False).sum()

    assert not ms.grad(loss)(_x()).asnumpy().any()


def test_single_level_pooler_is_roi_align_at_the_inferred_scale() -> None:
    boxes = np.array([[1.0, 2.0, 20.0, 30.0], [0.0, 0.0, 33.0, 35.0]], np.float32)
    pool = MultiScaleRoIAlign(["p"], (2, 3), -1)
    got = pool({"p": _x()}, [ms.Tensor(boxes[:1]), ms.Tensor(boxes[1:])], [(32, 36), (30, 30)])
    rois = np.concatenate([[[0.0], [1.0]], boxes], 1).astype(np.float32)
    want = roi_align(_x(), ms.Tensor(rois), (2, 3), 0.25, -1)  # 8 / 32 -> 2 ** -2
    assert np.array_equal(got.asnumpy(), want.asnumpy())


def test_adaptive_grid_runs_the_kernel() -> None:
    rois = ms.Tensor(np.array([[0, 0.0, 0.0, 4.0, 4.0]], np.float32))
    assert which("roi_align", _x(), rois, 2, 1.0, -1).backend == "aot"
