"""Binding of the sort/selection index kernels (``cpu/sort_kernel.cc``) as MindSpore Custom ops.

Each kernel returns int64 positions along the last dim, the ones PyTorch's CPU kernels return,
ties included (see the kernel file). ``mscompat/shape/sort.py`` registers them as the ``aot``
backend of ``shape.sort``, ``shape.topk``, ``shape.kthvalue``, ``shape.median`` and
``shape.mode`` (their bprop gives zeros: positions are integers).

``TakeAlong(x, idx)`` gathers the values at those positions along the last dim (any dtype; a
copy) and ``PlaceAlong(dy, idx, x)``, its bprop, puts the incoming gradient back at them (the
positions of a row are distinct): the ``aot`` backend of ``shape.take_along``, which the sort
family's front doors use for their values (MindSpore's CPU ``GatherD`` is several times slower:
see the CHANGELOG).
"""

from __future__ import annotations

from typing import Any, Dict

import numpy as np
from mindspore import Tensor

from mscompat.custom_ops import aot
from mscompat.custom_ops.registry import device_target

__all__ = ["KERNELS", "LIBRARY", "probe", "take_probe"]

_INDICES = "x p:i64 -> y:i64"  # the index kernels' signature

#: kernel entry point -> True if it returns one position per row, False for a full row.
_ENTRIES = {
    "SortIndices": False,
    "TopkIndices": False,
    "KthIndices": True,
    "MedianIndices": True,
    "ModeIndices": True,
}


def _one_shape(x: Any, p: Any) -> Any:
    return list(x)[:-1] + [1]


def _take_bprop(x: Tensor, idx: Tensor, out: Tensor, dout: Tensor) -> Any:
    return (KERNELS[device_target()]["PlaceAlong"](dout, idx, x),) + aot.zeros(idx)


def _sort_check(k: Dict[str, Any]) -> None:
    # torch 2.13 CPU sort(x): std::sort of 17 elements, not the stable order.
    x = Tensor(np.array([2, 1, 2, 0, 1, 2, 1, 0, 2, 1, 0, 2, 1, 2, 0, 1, 2], np.int32))
    got = k["SortIndices"](x, Tensor(np.array([0, 0], np.int64))).asnumpy().tolist()
    expected = [3, 7, 14, 10, 1, 4, 15, 6, 9, 12, 16, 0, 13, 11, 8, 5, 2]
    aot.expect(got == expected, "sort kernel", got, f"want {expected}")


def _take_check(k: Dict[str, Any]) -> None:
    x = Tensor(np.array([[1.5, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32))
    idx = Tensor(np.array([[2, 0], [1, 2]], np.int64))
    got = k["TakeAlong"](x, idx).asnumpy().tolist()
    back = k["PlaceAlong"](Tensor(np.ones((2, 2), np.float32)), idx, x).asnumpy().tolist()
    ok = got == [[3.0, 1.5], [5.0, -6.0]] and back == [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]]
    aot.expect(ok, "take-along kernel", got, back)


LIBRARY = aot.KernelLibrary(
    "sort",
    [
        *(
            aot.Entry(name, _INDICES, aot.INDEX_TYPES, _one_shape if one else aot.shape_of(0))
            for name, one in _ENTRIES.items()
        ),
        aot.Entry("TakeAlong", "x idx:i64 -> y", aot.COPY_TYPES, aot.shape_of(1), _take_bprop),
        aot.Entry("PlaceAlong", "dy idx:i64 x -> dx", aot.COPY_TYPES, aot.shape_of(2)),
    ],
    _sort_check,
)
#: device -> {entry point: Custom op}, filled by the probes (the registry runs them before the
#: aot backend is ever chosen); indexed inside graphs, where nothing may be built.
KERNELS = LIBRARY.kernels
#: Registry probe of the sort family: the library loads and reproduces PyTorch's tie order.
probe = LIBRARY.probe


def take_probe() -> None:
    """Registry probe of ``shape.take_along``'s aot backend: TakeAlong and PlaceAlong on a
    small case."""
    LIBRARY.probe(_take_check)
