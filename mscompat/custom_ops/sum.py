"""Binding of the all-element sum kernel (``cpu/sum_kernel.cc``) as a MindSpore Custom op with
a custom bprop, and the registry op ``losses.reduce_sum`` the losses' reductions call.

MindSpore 2.10's CPU ``ReduceSum`` over every axis of a 2-D or 4-D tensor took 20-28 ms for
8e6 float32 elements (PyTorch: 0.2 ms): the ``'mean'`` of a dense loss (100k anchors x 80
classes) cost more than the loss. The kernel sums in double over fixed blocks on threads.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import mindspore as ms
import numpy as np
from mindspore import Tensor

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import TensorSpec, call, device_target, register

__all__ = ["KERNELS", "LIBRARY", "MIN_KERNEL_SIZE", "probe", "reduce_sum"]


def _bprop(x: Tensor, coef: Tensor, out: Tensor, dout: Tensor) -> Any:
    return (KERNELS[device_target()]["SumAllBackward"](x, coef, dout),) + zeros(coef)


def _scalar_shape(*_: Any) -> Any:
    return []


def _self_check(k: Dict[str, Any]) -> None:
    x = Tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
    got = k["SumAll"](x, Tensor(np.array([2.0], np.float32))).asnumpy()
    expect(np.allclose(got, 33.0), "sum kernel", got)


LIBRARY = KernelLibrary(
    "sum",
    [
        Entry("SumAll", "x coef -> out", FLOATS, _scalar_shape, _bprop),
        Entry("SumAllBackward", "x coef dout -> dx", FLOATS, shape_of(0), None),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by :func:`probe`; indexed inside graphs.
KERNELS = LIBRARY.kernels
probe = LIBRARY.probe


@register("losses.reduce_sum", "composite", note="MindSpore's sum over every axis")
def _reduce_sum_composite(x: Tensor, divisor: int) -> Tensor:
    total = x.sum()
    return total if divisor == 1 else total / divisor


#: Below this many elements MindSpore's own sum is as fast, and it runs in every graph (a Custom
#: op refuses to run in the dynamically typed graphs some Python fallbacks compile to).
MIN_KERNEL_SIZE = 1 << 16


def _float_kernel(x: TensorSpec, *_: Any) -> Optional[str]:
    if x.dtype not in (ms.float32, ms.float64):
        return f"{x.dtype_name} is not supported by the kernel (float32/float64)"
    if x.size < MIN_KERNEL_SIZE:
        return f"{x.size} elements: MindSpore's sum (the kernel from {MIN_KERNEL_SIZE})"
    return None


@LIBRARY.backend(
    "losses.reduce_sum", "C++ sum in double over fixed blocks, on threads", _float_kernel
)
def _reduce_sum_aot(x: Tensor, divisor: int) -> Tensor:
    return KERNELS[device_target()]["SumAll"](x, Tensor([float(divisor)], x.dtype))


def reduce_sum(x: Tensor, divisor: int = 1) -> Tensor:
    """The sum of all elements of a non-empty float ``x`` divided by ``divisor`` (1: the sum;
    ``x.size``: PyTorch's mean), 0-d, in ``x``'s dtype."""
    return call("losses.reduce_sum", x, divisor)
