"""Binding of the fused cross-entropy kernels (``cpu/cross_entropy_kernel.cc``: the per-row term
of ``torch.nn.functional.cross_entropy`` on ``(N, C)`` logits and class indices, and its sum or
PyTorch's mean in the kernel) as MindSpore Custom ops with custom bprops.

The front doors (:func:`mscompat.layers.cross_entropy`, :func:`mscompat.losses.cross_entropy`)
validate their inputs and ask the registry; their modules register these kernels as the ``aot``
backends of ``layers.cross_entropy`` and ``losses.cross_entropy``.
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from mindspore import Tensor

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import device_target

__all__ = ["CROSS_ENTROPY", "CROSS_ENTROPY_REDUCE", "KERNELS", "LIBRARY", "probe"]


def _ce_bprop(
    x: Tensor, target: Tensor, weight: Tensor, ignore: Tensor, out: Tensor, dout: Tensor
) -> Any:
    dx = KERNELS[device_target()]["CrossEntropyBackward"](x, target, weight, ignore, dout)
    return (dx,) + zeros(target, weight, ignore)


def _ce_reduce_bprop(
    x: Tensor, target: Tensor, weight: Tensor, ignore: Tensor, mode: Tensor, out: Any, dout: Any
) -> Any:
    dx = KERNELS[device_target()]["CrossEntropyReduceBackward"](
        x, target, weight, ignore, mode, dout[0]
    )
    return (dx,) + zeros(target, weight, ignore, mode)


def _reduce_shape(*_: Any) -> Any:
    return [], [1]


def _self_check(k: Dict[str, Any]) -> None:
    x = Tensor(np.array([[0.0, 0.0]], np.float32))
    ce = k["CrossEntropyForward"](
        x,
        Tensor(np.array([1], np.int64)),
        Tensor(np.array([1.0, 2.0], np.float32)),
        Tensor(np.array([-100], np.int64)),
    ).asnumpy()
    # log_softmax of equal logits is -log 2, times the class weight 2
    expect(np.allclose(ce, [2.0 * np.log(2.0)], rtol=1e-6), "cross-entropy kernel", ce)


LIBRARY = KernelLibrary(
    "cross_entropy",
    [
        Entry(
            "CrossEntropyForward",
            "x target:i64 weight ignore:i64 -> loss",
            FLOATS,
            shape_of(1),
            _ce_bprop,
        ),
        Entry(
            "CrossEntropyBackward",
            "x target:i64 weight ignore:i64 dloss -> dx",
            FLOATS,
            shape_of(0),
            bprop=None,
        ),
        Entry(
            "CrossEntropyReduce",
            "x target:i64 weight ignore:i64 mode:i64 -> loss bad:i64",
            FLOATS,
            _reduce_shape,
            _ce_reduce_bprop,
        ),
        Entry(
            "CrossEntropyReduceBackward",
            "x target:i64 weight ignore:i64 mode:i64 dout -> dx",
            FLOATS,
            shape_of(0),
            bprop=None,
        ),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
#: device -> the per-row forward Custom op (the front doors').
CROSS_ENTROPY: Dict[str, Any] = LIBRARY.table("CrossEntropyForward")
#: device -> the reduced cross-entropy op (``mode``: 0 sum, 1 PyTorch's weighted mean).
CROSS_ENTROPY_REDUCE: Dict[str, Any] = LIBRARY.table("CrossEntropyReduce")
probe = LIBRARY.probe
