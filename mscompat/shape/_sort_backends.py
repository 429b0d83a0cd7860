"""The dispatched primitives of the sort family: int64 positions along one axis.

``shape.sort`` (argsort), ``shape.topk``, ``shape.kthvalue``, ``shape.median``, ``shape.mode``
and ``shape.take_along`` (the values at the positions, differentiable). ``aot`` (CPU): C++
kernels (``custom_ops/cpu/sort_kernel.cc``) running the algorithms of PyTorch's CPU kernels on
(value, position) pairs. ``native``: ``ops.topk`` on an order key in which NaN is larger than
``+inf``. ``composite``: a sort of unique ``int64`` keys ``rank * n + position``.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from mscompat.custom_ops import sort as _sort_kernels
from mscompat.custom_ops.aot import kernel_dtype
from mscompat.custom_ops.registry import TensorSpec, call, device_target, register

_FLOATS = (ms.float16, ms.float32, ms.float64)
_INTS = (ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8)

# Constants are module-level Tensors: in graph mode a Python float is rounded to float32.
_INF32 = Tensor(np.float32(np.inf))
_MAX32 = Tensor(np.finfo(np.float32).max)
_INF64 = Tensor(np.float64(np.inf))
_MAX64 = Tensor(np.finfo(np.float64).max)


# ----------------------------------------------------------------------------- helpers


def _int64(idx: Tensor) -> Tensor:
    return idx if idx.dtype == ms.int64 else idx.astype(ms.int64)


def _first_nan(x: Tensor, axis: int) -> Tuple[Tensor, Tensor]:
    """(whether the slice has a NaN, position of its first NaN), keepdims along ``axis``."""
    n = x.shape[axis]
    shape = [1] * x.ndim
    shape[axis] = n
    position = ops.arange(0, n, dtype=ms.int64).reshape(tuple(shape))
    isnan = ops.isnan(x)
    first = ops.where(isnan, position, ops.full_like(position, n)).min(axis=axis, keepdims=True)
    return first < n, first


# ----------------------------------------------------------------------------- order key


def _order_key(x: Tensor) -> Tuple[Tensor, bool]:
    """A tensor that sorts like ``x`` in PyTorch's order (NaN largest), and a flag.

    float16/float32 are widened (exactly) to float32/float64, where ``+inf`` becomes the largest
    finite value and NaN ``+inf``: NaN then sorts after ``+inf`` and all NaNs tie. float64 has no
    wider type: NaN becomes ``+inf`` and the flag says that NaN and ``+inf`` still tie.
    """
    if x.dtype == ms.float16 or x.dtype == ms.float32:
        if x.dtype == ms.float16:
            wide, inf, big = x.astype(ms.float32), _INF32, _MAX32
        else:
            wide, inf, big = x.astype(ms.float64), _INF64, _MAX64
        key = ops.where(wide == inf, big, wide)
        return ops.where(ops.isnan(wide), inf, key), False
    if x.dtype == ms.float64:
        return ops.where(ops.isnan(x), _INF64, x), True
    if x.dtype == ms.int64 or x.dtype == ms.int32:
        return x, False
    return x.astype(ms.int32), False


def _narrow(x: Tensor, axis: int, length: int) -> Tensor:
    return ops.narrow(x, axis, 0, length)


# ----------------------------------------------------------------------------- shape.sort


def _sort_probe() -> None:
    x = Tensor(np.array([[2.0, 1.0, 2.0, 1.0, 2.0, 0.0, 1.0]], np.float32))
    for descending, expected in ((False, [5, 1, 3, 6, 0, 2, 4]), (True, [0, 2, 4, 1, 3, 6, 5])):
        got = ops.topk(x, 7, dim=-1, largest=descending)[1].asnumpy().reshape(-1).tolist()
        if got != expected:
            raise RuntimeError(f"ops.topk is not stable here: got {got}, expected {expected}")
    y = Tensor(np.array([1.0 + 2e-12, 1.0, 1.0 + 1e-12], np.float64))
    got = ops.topk(y, 3, dim=-1, largest=False)[1].asnumpy().tolist()
    if got != [1, 2, 0]:
        raise RuntimeError(f"ops.topk does not sort float64 exactly here: got {got}")


@register("shape.sort", "native", probe=_sort_probe, note="ops.topk(k=n) on the order key")
def _sort_native(x: Tensor, axis: int, descending: bool, stable: bool = True) -> Tensor:
    # ops.topk, not ops.sort: ops.sort on CPU compares float64 in float32 precision.
    key, nan_ties_inf = _order_key(x)
    idx = ops.topk(key, x.shape[axis], dim=axis, largest=descending, sorted=True)[1]
    if nan_ties_inf:
        # NaN and +inf tied (in position order): a stable sort on isnan puts NaN after +inf
        # (before it, descending), each group keeping position order.
        flag = ops.isnan(ops.gather_elements(x, axis, idx)).astype(ms.int32)
        fix = ops.topk(flag, x.shape[axis], dim=axis, largest=descending, sorted=True)[1]
        idx = ops.gather_elements(idx, axis, fix)
    return idx


@register("shape.sort", "composite", note="sort of unique int64 keys rank * n + position")
def _sort_composite(x: Tensor, axis: int, descending: bool, stable: bool = True) -> Tensor:
    last = x.ndim - 1
    xl = x if axis == last else ops.swapaxes(x, axis, last)
    key, nan_ties_inf = _order_key(xl)
    n = xl.shape[-1]
    # Values only: exact whatever the tie order (ops.sort would round float64 to float32).
    sorted_key = ops.topk(key, n, dim=-1, largest=False, sorted=True)[0]
    if descending:  # number of elements strictly greater
        rank = n - ops.searchsorted(sorted_key, key, right=True)
    else:  # number of elements strictly less
        rank = ops.searchsorted(sorted_key, key)
    rank = rank.astype(ms.int64) * 2
    if nan_ties_inf:
        isnan = ops.isnan(xl).astype(ms.int64)
        rank = rank + (1 - isnan if descending else isnan)
    position = ops.arange(0, n, dtype=ms.int64)
    unique = rank * n + position
    idx = ops.sort(unique, axis=-1)[1]
    return idx if axis == last else ops.swapaxes(idx, axis, last)


# ----------------------------------------------------------------------------- shape.topk


def _topk_probe() -> None:
    x = Tensor(np.array([[2.0, 1.0, 2.0, 1.0, 2.0, 0.0, 1.0]], np.float32))
    for largest, expected in ((True, [0, 2, 4]), (False, [5, 1, 3])):
        got = ops.topk(x, 3, dim=-1, largest=largest)[1].asnumpy().reshape(-1).tolist()
        if got != expected:
            raise RuntimeError(f"ops.topk ties are not by position: got {got}, expected {expected}")


@register("shape.topk", "native", probe=_topk_probe, note="ops.topk (ties by position), order key")
def _topk_native(x: Tensor, k: int, axis: int, largest: bool, sorted: bool = True) -> Tensor:
    key, nan_ties_inf = _order_key(x)
    if nan_ties_inf:  # float64: NaN would tie with +inf in ops.topk
        return _narrow(_sort_native(x, axis, largest), axis, k)
    return ops.topk(key, k, dim=axis, largest=largest, sorted=True)[1]


# On CPU, PyTorch's positions among equal values and NaN are those its C++ kernels leave
# (std::partial_sort / nth_element for topk, std::sort's introsort for mode): the aot kernels run
# the same algorithms; the composite reproduces them only along short dims and declines the
# rest there (forcing it raises, saying why). On other devices PyTorch's order is its own
# kernels' again, and the composite's stable order is what it offers.
_CPU = ("CPU",)
_ELSEWHERE = ("GPU", "Ascend")


def _topk_ties(x: TensorSpec, k: int, axis: int, *_: Any) -> Optional[str]:
    if x.shape[axis] <= 3:
        return None
    return (
        "PyTorch's CPU topk orders ties and NaN along a dim longer than 3 as its "
        "std::partial_sort/nth_element leave them, which only the aot kernel reproduces"
    )


@register(
    "shape.topk", "composite", devices=_CPU, note="the first k of shape.sort", supports=_topk_ties
)
def _topk_composite(x: Tensor, k: int, axis: int, largest: bool, sorted: bool = True) -> Tensor:
    return _narrow(_sort_composite(x, axis, largest), axis, k)


register("shape.topk", "composite", devices=_ELSEWHERE, note="the first k of shape.sort")(
    _topk_composite
)


# ----------------------------------------------------------------------------- aot kernels


def _kernel_input(x: Tensor, axis: int) -> Tensor:
    """``x`` with ``axis`` last, in a dtype the kernels take (:func:`kernel_dtype`)."""
    last = x.ndim - 1
    return kernel_dtype(x if axis == last else ops.swapaxes(x, axis, last))


def _from_last(idx: Tensor, axis: int) -> Tensor:
    last = idx.ndim - 1
    return idx if axis == last else ops.swapaxes(idx, axis, last)


def _kernel_indices(name: str, x: Tensor, axis: int, params: Tuple[int, ...]) -> Tensor:
    """Positions along ``axis`` from the kernel entry point ``name`` with int64 ``params``."""
    kernel = _sort_kernels.KERNELS[device_target()][name]
    return _from_last(kernel(_kernel_input(x, axis), Tensor(params, ms.int64)), axis)


@_sort_kernels.LIBRARY.backend(
    "shape.sort", "C++ std::sort/std::stable_sort on (value, position): PyTorch's CPU order of ties"
)
def _sort_aot(x: Tensor, axis: int, descending: bool, stable: bool = True) -> Tensor:
    # PyTorch sorts a 1-D integer tensor of >= 32768 elements ascending with a (stable) radix
    # sort (fbgemm); every other non-stable sort is std::sort.
    radix = x.ndim == 1 and x.dtype in _INTS and not descending and x.shape[0] >= 32768
    return _kernel_indices("SortIndices", x, axis, (int(descending), int(stable or radix)))


@_sort_kernels.LIBRARY.backend(
    "shape.topk", "C++ partial_sort/nth_element on (value, position), as PyTorch's CPU topk"
)
def _topk_aot(x: Tensor, k: int, axis: int, largest: bool, sorted: bool = True) -> Tensor:
    return _narrow(_kernel_indices("TopkIndices", x, axis, (k, int(largest), int(sorted))), axis, k)


# ----------------------------------------------------------------------------- shape.take_along
# The values at the positions: x[..., idx[..., j], ...] along ``axis``, differentiable in x.


@register("shape.take_along", "composite", note="ops.gather_elements")
def _take_along_composite(x: Tensor, axis: int, idx: Tensor) -> Tensor:
    return ops.gather_elements(x, axis, idx)


@register(
    "shape.take_along",
    "aot",
    devices=("CPU",),
    probe=_sort_kernels.take_probe,
    note="C++ copy (TakeAlong; bprop PlaceAlong), faster than MindSpore's CPU GatherD",
)
def _take_along_aot(x: Tensor, axis: int, idx: Tensor) -> Tensor:
    kernel = _sort_kernels.KERNELS[device_target()]["TakeAlong"]
    return _from_last(kernel(_from_last(x, axis), _from_last(idx, axis)), axis)


def _take_along(x: Tensor, axis: int, idx: Tensor) -> Tensor:
    """``x`` at the int64 positions ``idx`` along ``axis`` (distinct within a row)."""
    return call("shape.take_along", x, axis, _int64(idx))


# kthvalue / median / mode primitives: positions with size 1 along ``axis`` (keepdims).


@_sort_kernels.LIBRARY.backend(
    "shape.kthvalue",
    "C++ median-of-three quickselect on (value, position), as PyTorch's CPU kthvalue",
)
def _kthvalue_aot(x: Tensor, k: int, axis: int) -> Tensor:
    return _kernel_indices("KthIndices", x, axis, (k,))


@register("shape.kthvalue", "composite", note="position k-1 of a stable ascending sort")
def _kthvalue_composite(x: Tensor, k: int, axis: int) -> Tensor:
    return ops.narrow(_topk_composite(x, k, axis, False), axis, k - 1, 1)


@_sort_kernels.LIBRARY.backend(
    "shape.median", "C++ first NaN, else nth_element by (value, position), as PyTorch's CPU median"
)
def _median_aot(x: Tensor, axis: int) -> Tensor:
    return _kernel_indices("MedianIndices", x, axis, (0,))


@register("shape.median", "composite", note="first NaN, else (n-1)//2 of a stable ascending sort")
def _median_composite(x: Tensor, axis: int) -> Tensor:
    n = x.shape[axis]
    idx = _kthvalue_composite(x, (n - 1) // 2 + 1, axis)
    if x.dtype in _FLOATS:
        has_nan, first_nan = _first_nan(x, axis)
        idx = ops.where(has_nan, first_nan, _int64(idx))
    return idx


@_sort_kernels.LIBRARY.backend(
    "shape.mode", "C++ std::sort by value, then the first longest run, as PyTorch's CPU mode"
)
def _mode_aot(x: Tensor, axis: int) -> Tensor:
    return _kernel_indices("ModeIndices", x, axis, (0,))


_INSERTION_MAX = 16  # libstdc++'s std::sort sorts up to 16 elements by insertion sort


def _mode_insertion(xl: Tensor) -> Tensor:
    """PyTorch's CPU ``mode`` along the last axis of ``xl`` (at most 16 elements), index with
    the axis kept: libstdc++'s insertion sort of (value, position) pairs by ``value <`` (a NaN
    compares false both ways, so NaNs stay where the passes leave them and split runs), then the
    last element of the first longest run of equal values (each NaN a run of its own)."""
    n = xl.shape[-1]
    rng = Tensor(np.arange(n, dtype=np.int32))
    a = xl
    p = ops.broadcast_to(rng, xl.shape)
    for i in range(1, n):  # __insertion_sort: to the front, or __unguarded_linear_insert
        v = a[..., i : i + 1]
        vp = p[..., i : i + 1]
        front = v < a[..., 0:1]
        gt = (v < a[..., :i]).astype(ms.int32)
        moved = ops.cumprod(ops.flip(gt, (-1,)), -1).sum(-1, keepdims=True)
        pos = ops.where(front, ops.zeros_like(moved), i - moved)
        a_next = ops.concat((a[..., :1], a[..., :-1]), -1)  # a[j - 1]
        p_next = ops.concat((p[..., :1], p[..., :-1]), -1)
        keep = rng < pos
        shift = ops.logical_and(rng > pos, rng <= i)
        a = ops.where(keep, a, ops.where(rng == pos, v, ops.where(shift, a_next, a)))
        p = ops.where(keep, p, ops.where(rng == pos, vp, ops.where(shift, p_next, p)))
    ones = ops.ones(xl.shape[:-1] + (1,), ms.bool_)
    end = ops.concat((a[..., :-1] != a[..., 1:], ones), -1)  # a run ends here (NaN != NaN)
    ends = ops.where(end, rng, -1)
    before = ops.concat((ops.full(xl.shape[:-1] + (1,), -1, dtype=ms.int32), ends[..., :-1]), -1)
    previous_end = ops.cummax(before, -1)[0]
    count = ops.where(end, rng - previous_end, 0)
    most = count.max(axis=-1, keepdims=True)
    first = ops.where(ops.logical_and(end, count == most), rng, n).min(axis=-1, keepdims=True)
    return ops.gather_elements(p, xl.ndim - 1, first).astype(ms.int64)


def _mode_ties(x: TensorSpec, axis: int) -> Optional[str]:
    if x.shape[axis] <= _INSERTION_MAX:
        return None
    return (
        f"PyTorch's CPU mode picks among ties and NaN along a dim longer than {_INSERTION_MAX} "
        "as std::sort's introsort leaves them, which only the aot kernel reproduces"
    )


_MODE_NOTE = "std::sort's insertion passes (<= 16); else stable sort, last of the most frequent"


@register("shape.mode", "composite", devices=_CPU, note=_MODE_NOTE, supports=_mode_ties)
def _mode_composite(x: Tensor, axis: int) -> Tensor:
    n = x.shape[axis]
    last = x.ndim - 1
    xl = x if axis == last else ops.swapaxes(x, axis, last)
    if n <= _INSERTION_MAX:  # PyTorch's own order; longer dims: std::sort's introsort order
        idx = _mode_insertion(xl)
        return idx if axis == last else ops.swapaxes(idx, axis, last)
    order = _sort_composite(xl, last, False)
    key = ops.gather_elements(_order_key(xl)[0], last, order)
    left = ops.searchsorted(key, key)
    right = ops.searchsorted(key, key, right=True)
    count = right - left
    most = count.max(axis=-1, keepdims=True)
    # The first run with the highest count (the smallest value); its last element is the last
    # occurrence, since the sort is stable.
    end = ops.where(count == most, right - 1, ops.full_like(right, n)).min(axis=-1, keepdims=True)
    idx = ops.gather_elements(order, last, end.astype(order.dtype))
    return idx if axis == last else ops.swapaxes(idx, axis, last)


register("shape.mode", "composite", devices=_ELSEWHERE, note=_MODE_NOTE)(_mode_composite)
