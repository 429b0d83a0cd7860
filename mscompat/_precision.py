"""Float32 arithmetic rounded once from float64, for the places where MindSpore's float32 CPU
kernels are less accurate than PyTorch's (shared by :mod:`mscompat.layers` and
:mod:`mscompat.losses`)."""

from __future__ import annotations

from typing import Any, Callable

import mindspore as ms
from mindspore import Tensor

__all__ = ["in_float64"]


def in_float64(fn: Callable[..., Tensor], x: Tensor, *args: Any) -> Tensor:
    """``fn(x, *args)`` for a float32 ``x`` evaluated in float64 and rounded once to float32,
    as PyTorch's correctly rounded float32 ``exp``/``log`` (<= 1 ulp); MindSpore 2.10's float32
    CPU ``exp``/``log``/``softmax`` are off by up to ~100 ulp (mean ~30 for ``exp``), which a
    cancellation amplifies (a KL divergence of near-equal distributions: 1e-4 relative, checked
    by ``tools/check_mmdet.py``) and ``exp`` of a large input shows whole. Other dtypes:
    ``fn(x, *args)``."""
    if x.dtype == ms.float32:
        return fn(x.astype(ms.float64), *args).astype(ms.float32)
    return fn(x, *args)
