"""``unique`` and ``unique_consecutive`` as PyTorch's, with a static-shape form for graph mode.

The number of distinct values is a dynamic shape. With ``size=K`` (as JAX's ``jnp.unique(...,
size=, fill_value=)``) the result has exactly ``K`` entries: the first ``K`` distinct values,
then ``fill_value`` (default: the smallest distinct value, so that every entry is a valid value),
with counts 0 for the padding; ``return_inverse`` is unchanged. Without ``size`` the same
computation runs with ``K`` = the number of elements and the result is cut to the number of
distinct values on the host in PyNative mode; in a graph MindSpore's dynamic-shape
``UniqueConsecutive`` (of the stably sorted values for ``unique``) gives the result instead.
With ``dim`` the distinct slices: ``mscompat.indexing._unique_dim``.

``unique`` dispatches ``indexing.unique``:

* ``aot`` (CPU): ``custom_ops/cpu/unique_kernel.cc``, a stable radix sort of order-preserving
  keys and one pass over the runs, writing values, inverse, counts and their number at once.
* ``composite``: sorts the flattened input (stable), marks where a run of equal values starts,
  numbers the runs with a cumulative sum and scatters values and counts by run number.

Both compile under ``ms.jit`` (``size=``).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from mscompat._checks import check_tensor, wrap_dim
from mscompat._graph import compiling
from mscompat.custom_ops.aot import COPY_TYPES, Entry, KernelLibrary, expect
from mscompat.custom_ops.registry import call, device_target, register
from mscompat.indexing._unique_dim import unique_along, unique_consecutive_along
from mscompat.shape.sort import sort

__all__ = ["unique", "unique_consecutive"]

_REAL = (ms.float16, ms.float32, ms.float64, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8)

Result = Union[Tensor, Tuple[Tensor, ...]]


@register("indexing.runs", "composite", note="run starts + cumulative sum + scatter")
def _runs(values: Tensor, size: int) -> Tuple[Tensor, Tensor, Tensor]:
    """For a 1-D ``values``: (the first ``size`` run values (padding: the first value), the run
    number of each element, the first ``size`` run lengths (padding: 0))."""
    n = values.shape[0]
    starts = ops.concat((ops.ones((1,), ms.bool_), values[1:] != values[:-1]))
    group = ops.cumsum(starts.astype(ms.int32), 0).astype(ms.int64) - 1
    slot = ops.where(group < size, group, ops.full_like(group, size))
    base = ops.broadcast_to(values[:1], (size + 1,))
    firsts = ops.where(starts, slot, ops.full_like(slot, size))
    out = ops.tensor_scatter_elements(base, firsts, values, axis=0, reduction="none")[:size]
    counts = ops.tensor_scatter_elements(
        ops.zeros((size + 1,), ms.int64), slot, ops.ones((n,), ms.int64), axis=0, reduction="add"
    )[:size]
    return out, group, counts


# (values[k], inverse[n] (anything unless asked for), counts[k], the number of distinct values
# (1,)) of a flat input
Unique = Tuple[Tensor, Tensor, Tensor, Tensor]


def _self_check(k: Dict[str, Any]) -> None:
    """Sorted distinct values, -0.0 == +0.0 (the first kept), each NaN distinct and last."""
    x = Tensor(np.array([2.0, -0.0, np.nan, 0.0, 2.0, -1.0, np.nan], np.float32))
    values, inverse, counts, count = (t.asnumpy() for t in k["UniqueSorted"](x))
    got = (
        values[:5].tolist()[:3],
        np.signbit(values[1]),
        inverse.tolist(),
        counts.tolist(),
        count.tolist(),
    )
    want = ([-1.0, -0.0, 2.0], True, [2, 1, 3, 1, 2, 0, 4], [1, 2, 2, 1, 1, 0, 0], [5])
    expect(str(got) == str(want), "unique kernel", got)


LIBRARY = KernelLibrary(
    "unique",
    [
        Entry(
            "UniqueSorted",
            "x -> values inverse:i64 counts:i64 count:i64",
            COPY_TYPES,
            lambda shape: (list(shape), list(shape), list(shape), [1]),
        ),
        Entry(
            "UniqueSortedCounts",
            "x -> values counts:i64 count:i64",
            COPY_TYPES,
            lambda shape: (list(shape), list(shape), [1]),
        ),
    ],
    _self_check,
)
KERNELS = LIBRARY.kernels


@LIBRARY.backend("indexing.unique", "C++ radix sort + one pass over the runs")
def _unique_aot(flat: Tensor, size: int, with_inverse: bool) -> Unique:
    kernels = KERNELS[device_target()]
    if with_inverse:
        values, inverse, counts, count = kernels["UniqueSorted"](flat)
    else:  # the scatter of the inverse is most of the kernel's time: skipped
        values, counts, count = kernels["UniqueSortedCounts"](flat)
        inverse = flat  # not used
    n = flat.shape[0]
    if size == n:
        return values, inverse, counts, count
    if size < n:  # the kernel pads to n with the smallest value and counts 0
        return values[:size], inverse, counts[:size], count
    values = ops.concat((values, ops.broadcast_to(values[:1], (size - n,))))
    return values, inverse, ops.concat((counts, ops.zeros((size - n,), ms.int64))), count


@register("indexing.unique", "composite", note="stable sort + runs + scatter")
def _unique_composite(flat: Tensor, size: int, with_inverse: bool) -> Unique:
    key = flat.astype(ms.int32) if flat.dtype == ms.bool_ else flat
    values, perm = sort(key, 0, stable=True)
    out, group, counts = call("indexing.runs", values, size)
    distinct = group[-1:] + 1
    if with_inverse:
        group = ops.tensor_scatter_elements(ops.zeros_like(group), perm, group, axis=0)
    return out.astype(flat.dtype), group, counts, distinct


def _check(
    fn: str, input: Any, flags: Tuple[Any, ...], dim: Any, size: Any
) -> Tuple[Tensor, Optional[int]]:
    x = check_tensor(input, "input")
    if x.dtype not in _REAL and x.dtype != ms.bool_:
        raise TypeError(f"{fn}(): input must be a real or bool Tensor, but got dtype {x.dtype}")
    for name, value in zip(("return_inverse", "return_counts", "sorted"), flags):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, but got {type(value).__name__}")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        raise ValueError(f"size must be a non-negative int or None, but got {size!r}")
    if dim is None:
        return x, None
    if size is not None:
        raise ValueError(f"{fn}(): size= is for the flattened form: dim must be None with it")
    if x.ndim == 0:
        raise ValueError(f"{fn}(): dim={dim!r} given for a 0-d input (it has no dims)")
    return x, wrap_dim(dim, x.ndim, x.ndim)


def _finish(
    x: Tensor,
    out: Tensor,
    inverse: Tensor,
    counts: Tensor,
    count: Optional[int],
    flags: Tuple[bool, bool],
    fill_value: Any,
    size: Optional[int],
) -> Result:
    if count is not None:  # the dynamic form: cut to the number of runs
        out, counts = out[:count], counts[:count]
    elif fill_value is not None and size:
        padding = ops.arange(0, size, dtype=ms.int64) >= ops.count_nonzero(counts).astype(ms.int64)
        out = ops.where(padding, ops.full_like(out, fill_value), out)
    if out.dtype != x.dtype:
        out = out.astype(x.dtype)
    results = [ops.stop_gradient(out)]
    if flags[0]:
        results.append(inverse.reshape(x.shape))
    if flags[1]:
        results.append(counts)
    return results[0] if len(results) == 1 else tuple(results)


def _empty(x: Tensor, flags: Tuple[bool, bool], size: Optional[int], fill_value: Any) -> Result:
    k = size or 0
    fill = 0 if fill_value is None else fill_value
    out = ops.fill(x.dtype, (k,), fill)
    results = [out]
    if flags[0]:
        results.append(ops.zeros(x.shape, ms.int64))
    if flags[1]:
        results.append(ops.zeros((k,), ms.int64))
    return results[0] if len(results) == 1 else tuple(results)


def _key(x: Tensor) -> Tensor:
    flat = x.reshape(-1)
    return flat.astype(ms.int32) if flat.dtype == ms.bool_ else flat


def _dynamic(x: Tensor, flags: Tuple[bool, bool], sort_first: bool) -> Result:
    """Graph mode without ``size=``: MindSpore's dynamic-shape ``UniqueConsecutive`` (of the
    stably sorted values for ``unique``; each NaN stays distinct), with no host read."""
    key, perm = _key(x), None
    if sort_first:
        key, perm = sort(key, 0, stable=True)
    out, inverse, counts = ops.unique_consecutive(key, True, True, None)
    if perm is not None:
        inverse = ops.tensor_scatter_elements(ops.zeros_like(inverse), perm, inverse, axis=0)
    return _finish(x, out, inverse, counts, None, flags, None, None)


def unique(
    input: Tensor,
    sorted: bool = True,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: Optional[int] = None,
    *,
    size: Optional[int] = None,
    fill_value: Any = None,
) -> Result:
    """The distinct values of ``input``, sorted, as :func:`torch.unique`; with ``size=`` a
    static-shape form for graph mode.

    Values are compared with ``==`` (each NaN is distinct from every value, itself included,
    as PyTorch's CPU ``unique`` counts them). ``sorted=False`` returns sorted values too (PyTorch
    leaves the order unspecified then). Not differentiable (as PyTorch's).

    Args:
        input (Tensor[*]): a real or bool Tensor (flattened unless ``dim`` is given).
        sorted (bool): accepted for PyTorch's signature; the values are always sorted.
        return_inverse (bool): also return, for each element of ``input``, the index of its
            value in the output (int64, ``input``'s shape).
        return_counts (bool): also return how many times each value occurs (int64).
        dim (int, optional): the distinct slices along ``dim`` (sorted lexicographically;
            ``inverse`` and ``counts`` then index the slices), as PyTorch's ``dim=``; not with
            ``size``.
        size (int, optional): the static length of the output and counts.
        fill_value (number, optional): the padding value with ``size`` (default: the
            smallest value); the counts of padding entries are 0.

    Returns:
        Tensor or tuple: ``output`` (``input``'s dtype), then ``inverse`` and ``counts`` when
        asked for, in that order.

    Raises:
        TypeError: ``input`` not a real or bool Tensor, a flag not a bool.
        ValueError: ``dim`` out of range or given with ``size``, ``size`` negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import unique
        >>> x = ms.Tensor([3, 1, 3, 2, 1])
        >>> values, counts = unique(x, return_counts=True)
        >>> values.asnumpy().tolist(), counts.asnumpy().tolist()
        ([1, 2, 3], [2, 1, 2])
        >>> unique(x, size=5, fill_value=-1).asnumpy().tolist()
        [1, 2, 3, -1, -1]
    """
    x, axis = _check("unique", input, (return_inverse, return_counts, sorted), dim, size)
    flags = (return_inverse, return_counts)
    if axis is not None:
        return unique_along(x, axis, flags)
    if x.size == 0:
        return _empty(x, flags, size, fill_value)
    if size is None and compiling():
        return _dynamic(x, flags, sort_first=True)
    flat = x.reshape(-1)
    k = flat.shape[0] if size is None else size
    out, inverse, counts, distinct = call("indexing.unique", flat, k, return_inverse)
    count = int(distinct.asnumpy()[0]) if size is None else None
    return _finish(x, out, inverse, counts, count, flags, fill_value, size)


def unique_consecutive(
    input: Tensor,
    return_inverse: bool = False,
    return_counts: bool = False,
    dim: Optional[int] = None,
    *,
    size: Optional[int] = None,
    fill_value: Any = None,
) -> Result:
    """Collapse runs of equal consecutive values, as :func:`torch.unique_consecutive`; with
    ``size=`` a static-shape form for graph mode.

    Args:
        input (Tensor[*]): a real or bool Tensor (flattened unless ``dim`` is given).
        return_inverse (bool): also return each element's run number (int64, ``input``'s
            shape).
        return_counts (bool): also return each run's length (int64).
        dim (int, optional): collapse runs of equal slices along ``dim`` (``inverse`` and
            ``counts`` then index the slices); not with ``size``.
        size (int, optional): the static length of the output and counts.
        fill_value (number, optional): the padding with ``size`` (default: the first value).

    Returns:
        Tensor or tuple: ``output``, then ``inverse`` and ``counts`` when asked for.

    Raises:
        TypeError: ``input`` not a real or bool Tensor, a flag not a bool.
        ValueError: ``dim`` out of range or given with ``size``, ``size`` negative.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import unique_consecutive
        >>> out, counts = unique_consecutive(ms.Tensor([1, 1, 2, 2, 3, 1]), return_counts=True)
        >>> out.asnumpy().tolist(), counts.asnumpy().tolist()
        ([1, 2, 3, 1], [2, 2, 1, 1])
    """
    x, axis = _check("unique_consecutive", input, (return_inverse, return_counts), dim, size)
    flags = (return_inverse, return_counts)
    if axis is not None:
        return unique_consecutive_along(x, axis, flags)
    if x.size == 0:
        return _empty(x, flags, size, fill_value)
    if size is None and compiling():
        return _dynamic(x, flags, sort_first=False)
    key = _key(x)
    k = key.shape[0] if size is None else size
    out, group, counts = call("indexing.runs", key, k)
    count = int(group[-1].asnumpy()) + 1 if size is None else None
    return _finish(x, out, group, counts, count, flags, fill_value, size)
