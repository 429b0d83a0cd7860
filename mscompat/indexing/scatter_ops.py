"""``scatter``, ``scatter_add`` and ``scatter_reduce`` with PyTorch's semantics and gradients.

On MindSpore 2.10 CPU ``mint.scatter_add`` has no kernel, and ``ops.tensor_scatter_elements``
knows no ``mean``/``amax``/``amin`` nor ``include_self``. The reduction is a dispatched
primitive (``indexing.scatter_reduce``):

* ``aot`` (CPU; float16/32/64, int32, int64): ``custom_ops/cpu/scatter_kernel.cc``, PyTorch's
  CPU loop in one pass over ``src`` (threads split by output lines, so no two write one
  element), the index range checked on the way; its backward is a kernel too.
* ``composite``: every element of ``index`` names one element of ``input`` by its linear
  position (:mod:`._positions`), and the reduction is one of MindSpore's ``unsorted_segment_*``
  kernels over those positions (registered on CPU for int64 positions and every dtype).

The backward is PyTorch's ``scatter_reduce_backward``:

* ``sum``: the incoming gradient, and gathered for ``src``;
* ``mean``: divided by the number of values averaged;
* ``amax``/``amin``: split evenly among every value equal to the result, ``input``'s value
  counted even with ``include_self=False`` (PyTorch's rule: its share is then dropped);
* ``prod``: the product of the others, exact where a value is zero.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, Union

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import check_bool, check_number, check_tensor, wrap_dim
from mscompat.custom_ops import scatter as _scatter_kernels
from mscompat.custom_ops.registry import call, device_target, register
from mscompat.indexing._positions import (
    check_in_range,
    check_index,
    flat_positions,
    range_message,
    scatter_sum,
)

__all__ = ["scatter", "scatter_add", "scatter_reduce"]

REDUCES = ("sum", "prod", "mean", "amax", "amin")
_FLOATS = (ms.float16, ms.float32, ms.float64)
#: the unit of the NaN count in the high bits of the hit count (2**32 hits per position: not
#: on this hardware); a Tensor, so that graph mode keeps it int64
_NAN_UNIT = Tensor(1 << 32, ms.int64)
_TYPES = (*_FLOATS, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8)
_KERNEL_TYPES = (*_FLOATS, ms.int32, ms.int64)


# ----------------------------------------------------------------------------- flat reduction


def _ones(t: Tensor) -> Tensor:
    """Ones of ``t``'s shape and dtype (``ops.ones_like`` in both a forward and its custom
    bprop makes MindSpore 2.10's graph compiler fail: "The func graph is empty")."""
    return ops.ones(t.shape, t.dtype)


def _segment_reduce(x: Tensor, src: Tensor, pos: Tensor, reduce: str, include_self: bool) -> Tensor:
    """``x`` (flat) with each ``src[j]`` reduced into ``x[pos[j]]``: PyTorch's forward."""
    n = x.shape[0]
    extreme = reduce in ("amax", "amin")
    flags = _ones(pos)
    if extreme and x.dtype in _FLOATS:
        # a NaN wins, as PyTorch (the segment kernels skip it): NaNs counted in the high
        # 32 bits of the same segment sum that counts the hits
        flags = flags + ops.isnan(src).astype(ms.int64) * _NAN_UNIT
    hits = scatter_sum(flags, pos, n)
    if reduce in ("sum", "mean"):
        red = scatter_sum(src, pos, n)
        if include_self:
            red = red + x
        if reduce == "mean":
            count = ops.maximum(hits + int(include_self), 1).astype(x.dtype)
            red = red / count if x.dtype in _FLOATS else ops.floor_divide(red, count)
    elif reduce == "prod":
        red = ops.unsorted_segment_prod(src, pos, n)
        if include_self:
            red = red * x
    else:
        is_max = reduce == "amax"
        red = (ops.unsorted_segment_max if is_max else ops.unsorted_segment_min)(src, pos, n)
        if include_self:
            red = ops.maximum(red, x) if is_max else ops.minimum(red, x)
        if x.dtype in _FLOATS:
            nan = hits >= _NAN_UNIT
            if include_self:
                nan = ops.logical_or(nan, ops.isnan(x))
            red = ops.where(nan, ops.fill(x.dtype, (n,), float("nan")), red)
    return ops.where(hits > 0, red, x)


def _segment_grads(
    x: Tensor, src: Tensor, pos: Tensor, out: Tensor, dout: Tensor, reduce: str, incl: bool
) -> Tuple[Tensor, Tensor]:
    """PyTorch's ``scatter_reduce_backward`` on the flat tensors."""
    n = x.shape[0]
    hits = scatter_sum(_ones(pos), pos, n)
    if reduce == "sum":
        dx, dsrc = dout, ops.gather(dout, pos, 0)
    elif reduce == "mean":
        dx = dout / ops.maximum(hits + int(incl), 1).astype(dout.dtype)
        dsrc = ops.gather(dx, pos, 0)
    elif reduce == "prod":
        masked_x = ops.where(x == 0, _ones(x), x)
        dx = dout * _segment_reduce(masked_x, src, pos, reduce, incl) / masked_x
        src_zero = src == 0
        zeros = ops.gather(scatter_sum(src_zero.astype(ms.int32), pos, n), pos, 0)
        single = ops.logical_and(src_zero, zeros == 1)
        masked = _segment_reduce(x, ops.where(single, _ones(src), src), pos, reduce, incl)
        dsrc = ops.where(
            single,
            ops.gather(dout * masked, pos, 0),
            ops.gather(dout * out, pos, 0) / ops.where(src_zero, _ones(src), src),
        )
    else:
        self_is = (x == out).astype(x.dtype)
        src_is = (src == ops.gather(out, pos, 0)).astype(x.dtype)
        share = dout / (self_is + scatter_sum(src_is, pos, n))
        dx, dsrc = self_is * share, src_is * ops.gather(share, pos, 0)
    if not incl:
        dx = ops.where(hits > 0, ops.zeros(dx.shape, dx.dtype), dx)
    return dx, dsrc


class _SegmentReduce(nn.Cell):
    """The flat reduction with PyTorch's backward; one instance per (reduce, include_self),
    built at import (graph mode reads them from :data:`_CELLS`)."""

    def __init__(self, reduce: str, include_self: bool) -> None:
        super().__init__()
        self.reduce = reduce
        self.include_self = include_self

    def construct(self, x: Tensor, src: Tensor, pos: Tensor) -> Tensor:
        return _segment_reduce(x, src, pos, self.reduce, self.include_self)

    def bprop(
        self, x: Tensor, src: Tensor, pos: Tensor, out: Tensor, dout: Tensor
    ) -> Tuple[Tensor, Tensor, Tensor]:
        dx, dsrc = _segment_grads(x, src, pos, out, dout, self.reduce, self.include_self)
        return dx, dsrc, ops.zeros(pos.shape, pos.dtype)


_CELLS: Dict[str, Dict[bool, _SegmentReduce]] = {
    r: {inc: _SegmentReduce(r, inc) for inc in (False, True)} for r in REDUCES
}


@register("indexing.scatter_reduce", "composite", note="segment ops on flat positions")
def _scatter_reduce_composite(
    x: Tensor, src: Tensor, idx: Tensor, axis: int, reduce: str, include_self: bool, fn: str
) -> Tensor:
    idx = check_in_range(idx, 0, x.shape[axis], fn, "index", f"input.shape[{axis}]")
    pos = flat_positions(idx, tuple(x.shape), axis).reshape(-1)
    vals = _fit(src, tuple(idx.shape)).reshape(-1)
    return _CELLS[reduce][include_self](x.reshape(-1), vals, pos).reshape(x.shape)


def _kernel_supports(x: Any, *rest: Any) -> Optional[str]:
    return None if x.dtype in _KERNEL_TYPES else "float16/32/64, int32 and int64 only"


@_scatter_kernels.LIBRARY.backend(
    "indexing.scatter_reduce", "C++ loop in PyTorch's order, one pass", _kernel_supports
)
def _scatter_reduce_aot(
    x: Tensor, src: Tensor, idx: Tensor, axis: int, reduce: str, include_self: bool, fn: str
) -> Tensor:
    """``ScatterReduce`` on the tensors as they are (float16 as float32, rounded per step as
    PyTorch's Half); it counts the indices out of range, a scalar condition for the raise."""
    half = x.dtype == ms.float16
    p = _scatter_kernels.params(axis, reduce, include_self, half)
    key, vals = (x.astype(ms.float32), src.astype(ms.float32)) if half else (x, src)
    if idx.dtype != ms.int64:
        idx = idx.astype(ms.int64)
    out, bad = _scatter_kernels.KERNELS[device_target()]["ScatterReduce"](key, idx, vals, p)
    if bad[0] > 0:
        raise ValueError(range_message(fn, "index", 0, x.shape[axis], f"input.shape[{axis}]"))
    return out.astype(ms.float16) if half else out


# ----------------------------------------------------------------------------- front doors


def _check_scatter(
    fn: str, input: Any, dim: Any, index: Any, src: Any
) -> Tuple[Tensor, int, Tensor, Tensor]:
    """PyTorch's checks of a scatter: dtypes, numbers of dims, ``index`` fitting inside
    ``src`` (every dim) and ``input`` (every dim but ``dim``); ``(input, axis, index, src)``
    with 0-d tensors made 1-D."""
    x = check_tensor(input, "input")
    idx = check_index(index, "index", fn)
    s = check_tensor(src, "src")
    if x.dtype not in _TYPES:
        raise TypeError(f"{fn}(): input must be a real Tensor, but got dtype {x.dtype}")
    if s.dtype != x.dtype:
        raise TypeError(f"{fn}(): src must have input's dtype {x.dtype}, but got {s.dtype}")
    axis = wrap_dim(dim, max(x.ndim, 1), x.ndim)
    if idx.size and not x.ndim == idx.ndim == s.ndim:
        raise ValueError(
            f"{fn}(): input, index and src must have the same number of dims, but got "
            f"{x.ndim}, {idx.ndim} and {s.ndim}"
        )
    for d in range(idx.ndim if idx.size else 0):
        if idx.shape[d] > s.shape[d] or (d != axis and idx.shape[d] > x.shape[d]):
            raise ValueError(
                f"{fn}(): index {idx.shape} must be no larger than src {s.shape} in every dim "
                f"and than input {x.shape} in every dim but dim={axis}"
            )
    if x.ndim == 0:
        x, idx, s = x.reshape(1), idx.reshape(1), s.reshape(1)
    return x, axis, idx, s


def _fit(src: Tensor, shape: Tuple[int, ...]) -> Tensor:
    """``src``'s leading corner of ``shape`` (PyTorch reads only that part)."""
    if tuple(src.shape) == tuple(shape):
        return src
    return ops.slice(src, (0,) * src.ndim, shape)


def scatter_reduce(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Tensor,
    reduce: str,
    *,
    include_self: bool = True,
) -> Tensor:
    """Reduce ``src`` into ``input`` at ``index`` along ``dim``, as :func:`torch.scatter_reduce`.

    For a 3-D input and ``dim=0``, each ``src[i][j][k]`` is reduced into
    ``out[index[i][j][k]][j][k]``:

    .. math::
        \\text{out}_p = \\operatorname{reduce}\\big(\\{x_p \\text{ if include\\_self}\\}
        \\cup \\{\\text{src}_q : \\text{position}(q) = p\\}\\big)

    and ``out_p = x_p`` where nothing is scattered. ``mean`` of integers rounds down (PyTorch's
    floor division); a NaN wins ``amax``/``amin``. Gradients are PyTorch's (module docstring):
    ties of ``amax``/``amin`` share the gradient evenly; ``prod`` is exact with zeros.

    Args:
        input (Tensor[*]): float16/32/64 or integer.
        dim (int): the dim ``index`` addresses.
        index (Tensor[*]): int64 (or int32) positions in ``[0, input.shape[dim])``, the same
            number of dims as ``input``, no larger than ``src`` in any dim and than ``input``
            in any dim but ``dim``.
        src (Tensor[*]): the values, ``input``'s dtype; only its leading ``index.shape``
            corner is read.
        reduce (str): ``'sum' | 'prod' | 'mean' | 'amax' | 'amin'``.
        include_self (bool): reduce ``input``'s own values too (default ``True``).

    Returns:
        Tensor: ``input``'s shape and dtype.

    Raises:
        TypeError: not Tensors, ``index`` not integer, ``src`` of another dtype.
        ValueError: ``reduce`` unknown, mismatched dims or sizes, an index out of range.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import scatter_reduce
        >>> x = ms.Tensor([1.0, 2.0, 3.0])
        >>> src = ms.Tensor([5.0, 0.5, 4.0, 7.0])
        >>> index = ms.Tensor([0, 0, 2, 2], ms.int64)
        >>> scatter_reduce(x, 0, index, src, "amax").asnumpy().tolist()
        [5.0, 2.0, 7.0]
        >>> scatter_reduce(x, 0, index, src, "mean", include_self=False).asnumpy().tolist()
        [2.75, 2.0, 5.5]
    """
    if reduce not in REDUCES:
        raise ValueError(f"scatter_reduce(): reduce must be one of {REDUCES}, but got {reduce!r}")
    incl = check_bool(include_self, "include_self")
    return _scatter_reduce("scatter_reduce", input, dim, index, src, reduce, incl)


def _scatter_reduce(
    fn: str, input: Any, dim: Any, index: Any, src: Any, reduce: str, include_self: bool
) -> Tensor:
    shape = tuple(input.shape) if isinstance(input, Tensor) else ()
    x, axis, idx, s = _check_scatter(fn, input, dim, index, src)
    if idx.size == 0:
        return input
    if x.size == 0:  # every index is out of range (no backend sees an empty tensor)
        raise ValueError(range_message(fn, "index", 0, 0, f"input.shape[{axis}]"))
    out = call("indexing.scatter_reduce", x, s, idx, axis, reduce, include_self, fn)
    return out if tuple(out.shape) == shape else out.reshape(shape)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    """Add ``src`` into ``input`` at ``index`` along ``dim``, as :func:`torch.scatter_add`.

    :func:`scatter_reduce` with ``reduce='sum'`` and ``include_self=True``: the same
    arguments, shapes, errors and gradients (``mint.scatter_add`` has no CPU kernel).

    Args:
        input (Tensor[*]): float16/32/64 or integer.
        dim (int): the dim ``index`` addresses.
        index (Tensor[*]): int64 positions, as :func:`scatter_reduce`'s.
        src (Tensor[*]): the values added, ``input``'s dtype.

    Returns:
        Tensor: ``input``'s shape and dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import scatter_add
        >>> x = ms.Tensor([[0.0, 0.0, 0.0]])
        >>> index = ms.Tensor([[2, 0, 2]], ms.int64)
        >>> scatter_add(x, 1, index, ms.Tensor([[1.0, 2.0, 3.0]])).asnumpy().tolist()
        [[2.0, 0.0, 4.0]]
    """
    return _scatter_reduce("scatter_add", input, dim, index, src, "sum", True)


@register("indexing.scatter", "composite", note="ops.tensor_scatter_elements")
def _scatter_flat(x: Tensor, src: Tensor, pos: Tensor) -> Tensor:
    return ops.tensor_scatter_elements(x, pos, src, 0, "none")


_SCATTER_REDUCES = {"add": "sum", "multiply": "prod"}


def scatter(
    input: Tensor,
    dim: int,
    index: Tensor,
    src: Optional[Union[Tensor, float]] = None,
    *,
    value: Optional[float] = None,
    reduce: Optional[str] = None,
) -> Tensor:
    """Write ``src`` (or ``value``) into ``input`` at ``index`` along ``dim``, as
    :func:`torch.scatter`.

    ``out[index[i][j]][j] = src[i][j]`` for ``dim=0`` (likewise in every dim). Where ``index``
    repeats a position the last write wins (PyTorch's CPU order). The gradient of ``input`` is
    zero where written; ``src``'s is the incoming gradient gathered at ``index``.

    Args:
        input (Tensor[*]): float16/32/64 or integer.
        dim (int): the dim ``index`` addresses.
        index (Tensor[*]): int64 positions, as :func:`scatter_reduce`'s.
        src (Tensor[*] or number): the values, ``input``'s dtype; or a number written everywhere.
        value (number, optional): keyword form of a number ``src`` (``torch.scatter(x, 0, i,
            value=1.0)``).
        reduce (str, optional): ``'add'`` or ``'multiply'``: accumulate instead of writing
            (PyTorch's deprecated form; :func:`scatter_reduce` is the general one).

    Returns:
        Tensor: ``input``'s shape and dtype.

    Raises:
        TypeError: not Tensors, ``index`` not integer, ``src`` and ``value`` both or neither.
        ValueError: ``reduce`` unknown, mismatched dims or sizes, an index out of range.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import scatter
        >>> x = ms.Tensor([[0, 0, 0], [0, 0, 0]])
        >>> index = ms.Tensor([[1, 0, 1]], ms.int64)
        >>> scatter(x, 0, index, ms.Tensor([[7, 8, 9]])).asnumpy().tolist()
        [[0, 8, 0], [7, 0, 9]]
    """
    if (src is None) == (value is None):
        raise TypeError("scatter(): give exactly one of src and value")
    if reduce is not None and reduce not in _SCATTER_REDUCES:
        raise ValueError(f"scatter(): reduce must be 'add' or 'multiply', but got {reduce!r}")
    x = check_tensor(input, "input")
    if not isinstance(src, Tensor):
        number = check_number(value if src is None else src, "value" if src is None else "src")
        shape = tuple(index.shape) if isinstance(index, Tensor) else ()
        src = ops.fill(x.dtype, shape if x.ndim else (), number)
    if reduce is not None:
        return _scatter_reduce("scatter", x, dim, index, src, _SCATTER_REDUCES[reduce], True)
    x, axis, idx, s = _check_scatter("scatter", x, dim, index, src)
    if idx.size == 0:
        return input
    idx = check_in_range(idx, 0, x.shape[axis], "scatter", "index", f"input.shape[{axis}]")
    pos = flat_positions(idx, tuple(x.shape), axis).reshape(-1)
    vals = _fit(s, tuple(idx.shape)).reshape(-1)
    return call("indexing.scatter", x.reshape(-1), vals, pos).reshape(input.shape)
