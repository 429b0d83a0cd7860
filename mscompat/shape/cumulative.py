"""Running maximum and minimum with their positions: ``cummax`` and ``cummin``, as PyTorch.

On MindSpore 2.10 CPU ``mint.cummin`` has no kernel, and the gradients of ``ops.cummax`` /
``ops.cummin`` fail ("Unsupported op [InplaceScatterAdd] on CPU"); ``ops.cummin``'s indices are
int32. These return PyTorch's values, int64 indices and gradient.

Values and positions come from a dispatched primitive (``shape.cummax`` / ``shape.cummin``):

* ``aot`` (CPU): ``custom_ops/cpu/cumulative_kernel.cc``, PyTorch's scan, line by line, writing
  values and positions in one pass in the input's own dtype; its bprop is the kernel
  ``CumExtremeGrad``, PyTorch's gradient: the incoming gradient scatter-added to the positions,
  line by line.
* ``composite``: a log-step (Hillis-Steele) scan of (value, position) pairs, whose combine is
  PyTorch's rule, so it is exact too; the values are the input gathered at the positions, so
  their gradient (autodiff) is PyTorch's as well.
"""

from __future__ import annotations

import functools
from typing import Any, Dict, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat._checks import check_tensor, wrap_dim
from mscompat.custom_ops.aot import (
    COPY_TYPES,
    HALF_FLOATS,
    Entry,
    KernelLibrary,
    expect,
    kernel_dtype,
    shape_of,
    zeros,
)
from mscompat.custom_ops.registry import call, device_target, register

__all__ = ["cummax", "cummin"]

_OPS = ("shape.cummax", "shape.cummin")
_FLOATS = (ms.float16, ms.float32, ms.float64)
_REAL = (*_FLOATS, ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8, ms.bool_)


# ----------------------------------------------------------------------------- kernel


def _self_check(k: Dict[str, Any]) -> None:
    """Ties move to the later position; a NaN sticks until the next NaN (PyTorch's CPU rule);
    the gradient adds up at the positions."""
    x = Tensor(np.array([1.0, 3.0, 3.0, np.nan, 5.0, np.nan, 2.0], np.float16))
    p = Tensor(np.array([0, 0], np.int64))
    values, idx = k["CumExtreme"](x, p)
    dx = k["CumExtremeGrad"](Tensor(np.ones(7, np.float16)), idx, p).asnumpy().tolist()
    got = idx.asnumpy().tolist(), np.isnan(values.asnumpy()).tolist(), dx
    want = [0, 1, 2, 3, 3, 5, 5], [False] * 3 + [True] * 4, [1, 1, 1, 2, 0, 2, 0]
    expect(got == want, "cumulative kernel", got)


def _bprop(x: Tensor, p: Tensor, out: Any, dout: Any) -> Any:
    return KERNELS[device_target()]["CumExtremeGrad"](dout[0], out[1], p), zeros(p)[0]


LIBRARY = KernelLibrary(
    "cumulative",
    [
        Entry("CumExtreme", "x p:i64 -> values idx:i64", COPY_TYPES, shape_of(0, 0), _bprop),
        Entry("CumExtremeGrad", "dv idx:i64 p:i64 -> dx", HALF_FLOATS, shape_of(0), bprop=None),
    ],
    _self_check,
)
KERNELS = LIBRARY.kernels


@functools.cache
def _cached_params(axis: int, is_min: bool) -> Tensor:
    return Tensor((axis, int(is_min)), ms.int64)


@constexpr
def _params(axis: int, is_min: bool) -> Tensor:
    """The kernel's parameter vector: a constant of the graph; in PyNative built once per
    (axis, is_min) (a Tensor costs 30 us to build)."""
    return _cached_params(axis, is_min)


@LIBRARY.backend(_OPS, "C++ scan, PyTorch's rule; C++ scatter-add gradient")
def _cumulative_aot(x: Tensor, axis: int, is_min: bool) -> Tuple[Tensor, Tensor]:
    # The kernel takes every dtype as it is: no cast around it.
    values, idx = KERNELS[device_target()]["CumExtreme"](x, _params(axis, is_min))
    return values, idx


# ----------------------------------------------------------------------------- composite


def _shifted(t: Tensor, axis: int, k: int) -> Tensor:
    """``t`` moved ``k`` places along ``axis`` (the first ``k`` places: anything)."""
    n = t.shape[axis]
    return ops.concat((ops.narrow(t, axis, 0, k), ops.narrow(t, axis, 0, n - k)), axis)


def _indices(key: Tensor, axis: int, is_min: bool) -> Tensor:
    n = key.shape[axis]
    shape = [1] * key.ndim
    shape[axis] = n
    position = ops.arange(0, n, dtype=ms.int64).reshape(tuple(shape))
    idx = ops.broadcast_to(position, key.shape)
    value = key
    nan = ops.isnan(key) if key.dtype in _FLOATS else ops.zeros_like(key, dtype=ms.bool_)
    k = 1
    while k < n:
        # Each place summarises the k places ending there; combine it with the k before:
        # the later summary wins when it is NaN, or when the earlier is not NaN and it is >=
        # (<= for the minimum): PyTorch's step, so the scan gives its positions exactly.
        prev_value, prev_idx = _shifted(value, axis, k), _shifted(idx, axis, k)
        prev_nan = _shifted(nan, axis, k)
        later = value <= prev_value if is_min else value >= prev_value
        keep = ops.logical_or(nan, ops.logical_and(ops.logical_not(prev_nan), later))
        keep = ops.logical_or(keep, position < k)
        value = ops.where(keep, value, prev_value)
        idx = ops.where(keep, idx, prev_idx)
        nan = ops.where(keep, nan, prev_nan)
        k *= 2
    return idx


@register(_OPS, "composite", note="log-step scan of (value, position) pairs + gather")
def _cumulative_composite(x: Tensor, axis: int, is_min: bool) -> Tuple[Tensor, Tensor]:
    key = kernel_dtype(x.astype(ms.int32) if x.dtype == ms.bool_ else x)
    idx = ops.stop_gradient(_indices(key, axis, is_min))
    if x.dtype == ms.bool_:
        return ops.gather_elements(key, axis, idx).astype(ms.bool_), idx
    return ops.gather_elements(x, axis, idx), idx


# ----------------------------------------------------------------------------- front doors


def _cumulative(fn: str, input: Any, dim: Any, is_min: bool) -> Tuple[Tensor, Tensor]:
    x = check_tensor(input, "input")
    if x.dtype not in _REAL:
        raise TypeError(f"{fn}(): input must be a real or bool Tensor, but got dtype {x.dtype}")
    axis = wrap_dim(dim, max(x.ndim, 1), x.ndim)
    if x.ndim == 0:
        return x, ops.zeros((), ms.int64)
    if x.size == 0:  # answered here: no backend sees an empty tensor
        return x, ops.zeros(x.shape, ms.int64)
    values, idx = call(f"shape.{fn}", x, axis, is_min)
    return values, idx


def cummax(input: Tensor, dim: int) -> Tuple[Tensor, Tensor]:
    """Running maximum of ``input`` along ``dim`` and its positions, as :func:`torch.cummax`.

    .. math::
        \\text{values}_i = \\max_{j \\le i} x_j, \\qquad
        \\text{indices}_i = \\text{the last } j \\le i \\text{ with } x_j = \\text{values}_i

    A NaN is the maximum from where it stands until the next NaN (NaN propagates); equal values
    give the later position; ``-0.0`` and ``+0.0`` are equal. The gradient of ``values`` adds
    the incoming gradient to ``input`` at ``indices``.

    Args:
        input (Tensor[*]): any real dtype or bool; 0-d allowed.
        dim (int): the dim to scan, in ``[-input.ndim, input.ndim)`` (``{-1, 0}`` for 0-d).

    Returns:
        (Tensor, Tensor): ``values`` (``input``'s shape and dtype) and ``indices`` (int64).

    Raises:
        TypeError: ``input`` not a Tensor, ``dim`` not an int.
        ValueError: ``dim`` out of range.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import cummax
        >>> values, indices = cummax(ms.Tensor([1.0, 3.0, 3.0, 2.0, 5.0]), 0)
        >>> values.asnumpy().tolist(), indices.asnumpy().tolist()
        ([1.0, 3.0, 3.0, 3.0, 5.0], [0, 1, 2, 2, 4])
    """
    return _cumulative("cummax", input, dim, False)


def cummin(input: Tensor, dim: int) -> Tuple[Tensor, Tensor]:
    """Running minimum of ``input`` along ``dim`` and its positions, as :func:`torch.cummin`.

    :func:`cummax` with the minimum: equal values give the later position, a NaN is the
    minimum until the next NaN; the same arguments, dtypes, results and errors.

    Args:
        input (Tensor[*]): any real dtype or bool.
        dim (int): the dim to scan.

    Returns:
        (Tensor, Tensor): the running minimum and its int64 positions, ``input``'s shape.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import cummin
        >>> values, indices = cummin(ms.Tensor([[2, 1, 1, 3]], ms.int32), 1)
        >>> values.asnumpy().tolist(), indices.asnumpy().tolist()
        ([[2, 1, 1, 1]], [[0, 1, 2, 2]])
    """
    return _cumulative("cummin", input, dim, True)
