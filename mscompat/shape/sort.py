"""Sorting and selection with PyTorch semantics: ``sort``, ``argsort``, ``msort``, ``topk``,
``kthvalue``, ``median`` and ``mode``.

The migration guide replaces a full ``Sort`` by ``TopK``; on MindSpore 2.10 CPU ``mint.sort``,
``mint.argsort``, ``mint.topk``, ``mint.kthvalue`` and ``mint.median`` have no kernel. Every
function here is built on dispatched primitives (see :mod:`mscompat.custom_ops`) that return
int64 positions along one axis:

* ``shape.sort`` (argsort), ``shape.topk``, ``shape.kthvalue``, ``shape.median`` and
  ``shape.mode``.
* ``aot`` (CPU): C++ kernels (``custom_ops/cpu/sort_kernel.cc``) that run the algorithms of
  PyTorch's CPU kernels (``std::sort``, ``std::partial_sort``/``std::nth_element``, quickselect)
  on (value, position) pairs, so that even the positions PyTorch leaves "unspecified" among
  equal elements are PyTorch's.
* ``native``: ``ops.topk`` (stable, exact in float64; checked by its probe on each device) on an
  order key in which NaN is larger than ``+inf``. ``composite``: a sort of unique ``int64`` keys
  ``rank * n + position``. Both order equal elements by position (a stable sort): PyTorch's
  result wherever its order is specified.

Values are gathered from the input with the positions (``gather_elements``), so their gradient
is PyTorch's: the incoming gradient scattered to the selected positions.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_bool, check_int, check_tensor, wrap_dim
from mscompat.custom_ops.registry import call
from mscompat.shape._sort_backends import (
    _FLOATS,
    _INTS,
    _int64,
    _take_along,
)

__all__ = ["argsort", "kthvalue", "median", "mode", "msort", "sort", "topk"]

# ----------------------------------------------------------------------------- validation


def _check_input(input: Any, name: str = "input", bools: bool = False) -> Tensor:
    """Return ``input``; raise ``TypeError`` unless it is a float or integer Tensor (or bool,
    where ``bools``: PyTorch sorts and counts bools)."""
    x = check_tensor(input, name)
    if x.dtype not in _FLOATS and x.dtype not in _INTS and not (bools and x.dtype == ms.bool_):
        kinds = "floating-point, integer or bool" if bools else "floating-point or integer"
        raise TypeError(f"{name} must be a {kinds} Tensor, but got dtype {x.dtype}")
    return x


def _key(x: Tensor) -> Tensor:
    """What the kernels order: ``x``, bools as uint8 (False < True, as PyTorch)."""
    return x.astype(ms.uint8) if x.dtype == ms.bool_ else x


def _wrap_dim(dim: Any, ndim: int, name: str = "dim") -> int:
    """``dim`` in ``[0, max(ndim, 1))``; a 0-d tensor accepts ``dim`` in ``{-1, 0}`` (PyTorch)."""
    return wrap_dim(dim, max(ndim, 1), ndim, name)


def _check_k(k: Any, size: int, dim: Any, shape: Tuple[int, ...], name: str = "k") -> int:
    k = check_int(k, name)
    if not 0 <= k <= size:
        raise ValueError(
            f"{name} must be in the range [0, {size}] (the size of dim={dim} of input of shape "
            f"{shape}), but got {k}"
        )
    return k


# ----------------------------------------------------------------------------- helpers


def _zeros(shape: Tuple[int, ...], dtype: Any) -> Tensor:
    return ops.zeros(shape, dtype)


def _scalar_result(x: Tensor) -> Tuple[Tensor, Tensor]:
    """(values, indices) of a selection over a 0-d tensor: the tensor itself and index 0."""
    return x, _zeros((), ms.int64)


def _select(x: Tensor, idx: Tensor, axis: int, keepdim: bool) -> Tuple[Tensor, Tensor]:
    """Gather ``x`` at ``idx`` (size 1 along ``axis``); drop ``axis`` unless ``keepdim``."""
    idx = _int64(ops.stop_gradient(idx))
    values = _take_along(x, axis, idx)
    if not keepdim:
        shape = x.shape[:axis] + x.shape[axis + 1 :]
        values, idx = values.reshape(shape), idx.reshape(shape)
    return values, idx


def _check_dim_size(fn: str, x: Tensor, dim: Any, axis: int) -> None:
    if x.shape[axis] == 0:
        raise ValueError(
            f"{fn}(input, dim) needs a non-empty dim, but input.shape[{dim}] = 0 "
            f"(input.shape={x.shape})"
        )


def _empty_selection(x: Tensor, axis: int, keepdim: bool) -> Tuple[Tensor, Tensor]:
    shape = _reduced_shape(x.shape, axis, keepdim)
    return _zeros(shape, x.dtype), _zeros(shape, ms.int64)


def _reduced_shape(shape: Tuple[int, ...], axis: int, keepdim: bool) -> Tuple[int, ...]:
    return shape[:axis] + ((1,) if keepdim else ()) + shape[axis + 1 :]


# ----------------------------------------------------------------------------- public API


def sort(
    input: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> Tuple[Tensor, Tensor]:
    """Sort the elements of ``input`` along ``dim``, as :func:`torch.sort`.

    NaN is sorted as the largest value (last, or first when ``descending``). With
    ``stable=True`` equal elements keep their original order.

    .. note::
        With ``stable=False`` PyTorch leaves the order of equal elements unspecified; its CPU
        kernel runs ``std::sort`` (a stable radix sort for 1-D integer input of >= 32768
        elements, ascending). The ``aot`` backend (CPU) runs the same algorithms and returns
        PyTorch's indices; the ``composite``/``native`` backends (used where the kernel is not
        built) return the stable order: along dims longer than 16 the indices of ties may then
        differ from PyTorch CPU's (the values are the same).

    Args:
        input (Tensor[*]): float16/float32/float64, integer or bool tensor.
        dim (int): the dim to sort along; negative counts from the end.
        descending (bool): sort from largest to smallest.
        stable (bool): keep the order of equal elements.

    Returns:
        tuple(Tensor[*], Tensor[*]): ``(values, indices)``; ``indices`` are int64 positions
        along ``dim`` with ``values == input.gather(dim, indices)``.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import sort
        >>> x = ms.Tensor(np.array([3.0, float("nan"), 1.0, 3.0, 2.0], np.float32))
        >>> values, indices = sort(x)
        >>> values.asnumpy()
        array([ 1.,  2.,  3.,  3., nan], dtype=float32)
        >>> indices.asnumpy()
        array([2, 4, 0, 3, 1], dtype=int64)
    """
    x = _check_input(input, bools=True)
    axis = _wrap_dim(dim, x.ndim)
    check_bool(descending, "descending")
    check_bool(stable, "stable")
    if x.ndim == 0 and axis == 0:  # uses axis: its check must run in graph mode too
        return _scalar_result(x)
    if x.size == 0:
        return x, _zeros(x.shape, ms.int64)
    key = _key(x)
    idx = ops.stop_gradient(call("shape.sort", key, axis, descending, stable))
    values = _take_along(key, axis, idx)
    return values.astype(ms.bool_) if x.dtype == ms.bool_ else values, _int64(idx)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    """The int64 indices that sort ``input`` along ``dim``, as :func:`torch.argsort`.

    ``argsort(input, ...)`` is ``sort(input, ...)[1]``; see :func:`sort` (NaN largest; the order
    of equal elements is PyTorch CPU's).

    Args:
        input (Tensor[*]): float, integer or bool tensor.
        dim (int): the dim to sort along.
        descending (bool): sort from largest to smallest.
        stable (bool): keep the order of equal elements.

    Returns:
        Tensor[*]: int64 indices, the shape of ``input``.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import argsort
        >>> argsort(ms.Tensor(np.array([[2, 0, 2, 1]], np.int32)), dim=1, descending=True)
        Tensor(shape=[1, 4], dtype=Int64, value=
        [[0, 2, 3, 1]])
    """
    return sort(input, dim, descending, stable=stable)[1]


def msort(input: Tensor) -> Tensor:
    """Sort ``input`` along its first dim, ascending, as :func:`torch.msort`.

    ``msort(input)`` is ``sort(input, dim=0)[0]``; see :func:`sort`.

    Args:
        input (Tensor[N, ...]): float, integer or bool tensor.

    Returns:
        Tensor[N, ...]: the sorted values.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import msort
        >>> msort(ms.Tensor(np.array([[3.0, 0.5], [1.0, 2.0]], np.float32)))
        Tensor(shape=[2, 2], dtype=Float32, value=
        [[ 1.00000000e+00,  5.00000000e-01],
         [ 3.00000000e+00,  2.00000000e+00]])
    """
    return sort(input, 0)[0]


def topk(
    input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
) -> Tuple[Tensor, Tensor]:
    """The ``k`` largest (or smallest) elements of ``input`` along ``dim``, as :func:`torch.topk`.

    NaN counts as the largest value.

    .. note::
        PyTorch leaves the choice among equal elements, and the order with ``sorted=False``,
        unspecified; its CPU kernel runs ``std::partial_sort`` (``64 * k <= n``) or
        ``std::nth_element``. The ``aot`` backend (CPU) runs the same and returns PyTorch's
        result; the ``composite``/``native`` backends always sort and take equal elements in
        their original order, which is PyTorch's along dims of up to 3 elements only (ties,
        NaNs among them, may be picked otherwise on longer dims: reproducing libstdc++'s
        introselect swaps with tensor ops is not attempted).

    Args:
        input (Tensor[*]): float or integer tensor.
        k (int): how many elements, ``0 <= k <= input.shape[dim]``.
        dim (int): the dim to select along.
        largest (bool): the largest (True) or the smallest (False) elements.
        sorted (bool): return them sorted (``False``: PyTorch CPU's order, see the note).

    Returns:
        tuple(Tensor[*], Tensor[*]): ``(values, indices)`` with ``k`` elements along ``dim``;
        ``indices`` are int64.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import topk
        >>> values, indices = topk(ms.Tensor(np.array([1.0, 5.0, 3.0, 5.0], np.float32)), 3)
        >>> values
        Tensor(shape=[3], dtype=Float32, value= [ 5.00000000e+00,  5.00000000e+00,  3.00000000e+00])
        >>> indices
        Tensor(shape=[3], dtype=Int64, value= [1, 3, 2])
    """
    x = _check_input(input)
    axis = _wrap_dim(dim, x.ndim)
    size = x.shape[axis] if x.ndim else 1
    k = _check_k(k, size, dim, x.shape)
    check_bool(largest, "largest")
    check_bool(sorted, "sorted")
    if x.ndim == 0 and axis == 0 and k <= 1:  # uses axis: its check must run in graph mode too
        return _scalar_result(x)
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1 :]
    if k == 0 or x.size == 0:
        return _zeros(shape, x.dtype), _zeros(shape, ms.int64)
    idx = _int64(ops.stop_gradient(call("shape.topk", x, k, axis, largest, sorted)))
    return _take_along(x, axis, idx), idx


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Tuple[Tensor, Tensor]:
    """The ``k``-th smallest element of ``input`` along ``dim``, as :func:`torch.kthvalue`.

    NaN counts as the largest value.

    .. note::
        Among equal elements PyTorch returns an unspecified position; its CPU kernel runs a
        median-of-three quickselect. The ``aot`` backend (CPU) runs the same and returns
        PyTorch's position; the ``composite`` backend returns the ``k``-th of a stable
        ascending sort (the value is the same).

    Args:
        input (Tensor[*]): float or integer tensor.
        k (int): which one, ``1 <= k <= input.shape[dim]``.
        dim (int): the dim to select along.
        keepdim (bool): keep ``dim`` with size 1.

    Returns:
        tuple(Tensor, Tensor): ``(values, indices)``, ``input``'s shape without ``dim`` (or with
        size 1 there if ``keepdim``); ``indices`` are int64.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import kthvalue
        >>> x = ms.Tensor(np.array([[4.0, 1.0, 3.0], [0.0, 2.0, 5.0]], np.float32))
        >>> values, indices = kthvalue(x, 2, dim=1)
        >>> values
        Tensor(shape=[2], dtype=Float32, value= [ 3.00000000e+00,  2.00000000e+00])
        >>> indices
        Tensor(shape=[2], dtype=Int64, value= [2, 1])
    """
    x = _check_input(input)
    axis = _wrap_dim(dim, x.ndim)
    size = x.shape[axis] if x.ndim else 1
    k = check_int(k, "k")
    if not 1 <= k <= size:
        raise ValueError(
            f"k must be in the range [1, {size}] (the size of dim={dim} of input of shape "
            f"{x.shape}), but got {k}"
        )
    check_bool(keepdim, "keepdim")
    if x.ndim == 0 and axis == 0:  # uses axis: its check must run in graph mode too
        return _scalar_result(x)
    if x.size == 0:
        return _empty_selection(x, axis, keepdim)
    return _select(x, call("shape.kthvalue", x, k, axis), axis, keepdim)


def _evenly_distributed(x: Tensor, value: Tensor) -> Tensor:
    """``value`` (0-d, an element of the 1-D ``x``), differentiable as PyTorch's
    ``evenly_distribute_backward`` of ``median()``: the gradient is spread evenly over the
    elements of ``x`` equal to ``value`` (NaN matching NaN).

    Built from ``max``/``min`` (whose MindSpore gradient splits evenly among ties, exact forward)
    and, for a NaN value, a masked mean (NaN forward either way). A Cell with a ``bprop`` would
    be simpler but gives a zero gradient under ``ms.jit(ms.grad(...))`` in MindSpore 2.10.
    """
    value = ops.stop_gradient(value)
    xs = ops.stop_gradient(x)  # the masks are constants for autodiff
    isnan = ops.isnan(xs)
    value_isnan = ops.isnan(value)
    mask = ops.stop_gradient(ops.logical_or(xs == value, ops.logical_and(isnan, value_isnan)))
    finite_mask = ops.stop_gradient(ops.logical_and(mask, ops.logical_not(isnan)))
    inf = ops.full_like(x, float("inf"))
    low = ops.where(finite_mask, x, -inf).max()  # fillers below: ties only among the mask
    high = ops.where(finite_mask, x, inf).min()  # for value == -inf
    count = mask.astype(ms.float32).sum().astype(x.dtype)
    nan_mean = ops.where(mask, x, ops.zeros_like(x)).sum() / count
    minus_inf = ops.logical_and(ops.isinf(value), value < 0)
    return ops.where(value_isnan, nan_mean, ops.where(minus_inf, high, low))


def median(
    input: Tensor, dim: Optional[int] = None, keepdim: bool = False
) -> Union[Tensor, Tuple[Tensor, Tensor]]:
    """The lower median of ``input``, as :func:`torch.median`.

    * ``median(input)``: the lower median of all elements, a 0-d tensor (NaN if any element is
      NaN, NaN for an empty float tensor). Its gradient is spread evenly over the elements equal
      to the median, as in PyTorch.
    * ``median(input, dim, keepdim=False)``: ``(values, indices)``, the lower median along
      ``dim`` (the ``(n - 1) // 2``-th smallest, 0-based) and its int64 position; a slice with a
      NaN gives NaN at the position of its first NaN. The gradient goes to that position.

    Among equal elements the position is the one a stable ascending sort puts at the median
    (PyTorch's CPU kernel breaks ties by position too).

    Args:
        input (Tensor[*]): float or integer tensor.
        dim (int, optional): the dim to reduce; None for the global median.
        keepdim (bool): keep ``dim`` with size 1 (only with ``dim``).

    Returns:
        Tensor or tuple(Tensor, Tensor): the global median, or ``(values, indices)``.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import median
        >>> x = ms.Tensor(np.array([[1.0, 4.0, 2.0, 8.0], [3.0, 0.0, 9.0, 5.0]], np.float32))
        >>> median(x)
        Tensor(shape=[], dtype=Float32, value= 3)
        >>> values, indices = median(x, dim=1)
        >>> values
        Tensor(shape=[2], dtype=Float32, value= [ 2.00000000e+00,  3.00000000e+00])
        >>> indices
        Tensor(shape=[2], dtype=Int64, value= [2, 0])
    """
    x = _check_input(input)
    check_bool(keepdim, "keepdim")
    if dim is None:
        if keepdim:
            raise ValueError("keepdim=True needs dim; median(input) reduces all elements")
        return _global_median(x)
    axis = _wrap_dim(dim, x.ndim)
    if x.ndim == 0 and axis == 0:  # uses axis: its check must run in graph mode too
        return _scalar_result(x)
    _check_dim_size("median", x, dim, axis)
    if x.size == 0:
        return _empty_selection(x, axis, keepdim)
    return _select(x, call("shape.median", x, axis), axis, keepdim)


def _global_median(x: Tensor) -> Tensor:
    n = x.size
    if n == 0:
        if x.dtype not in _FLOATS:
            raise ValueError(f"median() of an empty {x.dtype} tensor is undefined (no NaN)")
        return ops.full_like(ops.zeros((), x.dtype), float("nan"))
    flat = x.reshape((n,))
    idx = ops.stop_gradient(call("shape.median", flat, 0))
    value = ops.gather_elements(flat, 0, idx).reshape(())
    if x.dtype in _FLOATS:
        nan = ops.full_like(value, float("nan"))
        value = ops.where(ops.isnan(ops.stop_gradient(flat)).any(), nan, value)
        return _evenly_distributed(flat, value)
    return value


def mode(input: Tensor, dim: int = -1, keepdim: bool = False) -> Tuple[Tensor, Tensor]:
    """The most frequent value of ``input`` along ``dim`` and its position, as :func:`torch.mode`.

    Among equally frequent values the smallest is returned.

    .. note::
        PyTorch's CPU kernel sorts (value, position) pairs by value (``std::sort``), returns the
        position of the last element of the first longest run: along dims of more than 16
        elements that is an unspecified occurrence, and each NaN is a run of its own. The
        ``aot`` backend (CPU) runs the same and returns PyTorch's result; so does the
        ``composite`` backend along dims of up to 16 elements (libstdc++'s insertion sort,
        NaNs included, run with MindSpore ops); along longer dims it returns the last
        occurrence and counts NaNs as equal values, sorted last.

    Args:
        input (Tensor[*]): float, integer or bool tensor.
        dim (int): the dim to reduce.
        keepdim (bool): keep ``dim`` with size 1.

    Returns:
        tuple(Tensor, Tensor): the most frequent values and their int64 positions, shaped as
        :func:`kthvalue`'s.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.shape import mode
        >>> values, indices = mode(ms.Tensor(np.array([[2, 7, 2, 7, 1]], np.int64)))
        >>> values
        Tensor(shape=[1], dtype=Int64, value= [2])
        >>> indices
        Tensor(shape=[1], dtype=Int64, value= [2])
    """
    x = _check_input(input, bools=True)
    axis = _wrap_dim(dim, x.ndim)
    check_bool(keepdim, "keepdim")
    if x.ndim == 0 and axis == 0:  # uses axis: its check must run in graph mode too
        return _scalar_result(x)
    _check_dim_size("mode", x, dim, axis)
    if x.size == 0:
        return _empty_selection(x, axis, keepdim)
    key = _key(x)
    values, idx = _select(key, call("shape.mode", key, axis), axis, keepdim)
    return values.astype(ms.bool_) if x.dtype == ms.bool_ else values, idx
