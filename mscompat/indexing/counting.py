"""``bincount`` and ``histc`` with PyTorch's semantics (``mint.bincount``/``mint.histc`` have no
CPU kernel on MindSpore 2.10; ``ops.bincount`` takes int32 only and returns float32).

Both count with a scatter-add over int64 bin positions. ``histc`` bins as PyTorch's
CPU kernel: ``trunc((x - min) * bins / (max - min))`` in the input's dtype, the last edge
inclusive, values outside ``[min, max]`` and NaN skipped; its length is ``bins``, so it runs in
graph mode, ``min == max`` included (the range is then read on device). ``bincount``'s length
depends on the data (the largest value plus one), so it reads it: PyNative only.
"""

from __future__ import annotations

from typing import Optional

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from mscompat._checks import check_int, check_number, check_tensor, is_float_dtype
from mscompat.custom_ops.registry import call, register
from mscompat.indexing._positions import scatter_sum

__all__ = ["bincount", "histc"]

_INTS = (ms.int8, ms.int16, ms.int32, ms.int64, ms.uint8)


@register(("indexing.bincount", "indexing.histc"), "composite", note="scatter-add")
def _count(weights: Tensor, bins: Tensor, length: int) -> Tensor:
    return scatter_sum(weights, bins, length)


def bincount(input: Tensor, weights: Optional[Tensor] = None, minlength: int = 0) -> Tensor:
    """The number of times each value occurs in ``input`` (or the sum of its ``weights``), as
    :func:`torch.bincount`.

    .. math::
        \\text{out}_v = \\sum_{i : \\text{input}_i = v} w_i \\quad (w_i = 1 \\text{ without
        weights}), \\qquad v = 0 \\dots \\max(\\text{max(input)} + 1, \\text{minlength}) - 1

    The length depends on the data, which is read: PyNative only.

    Args:
        input (Tensor[N]): non-negative integers.
        weights (Tensor[N], optional): a weight per element (any real dtype).
        minlength (int): the least length of the result.

    Returns:
        Tensor[L]: int64 without ``weights``; float32 for float32 ``weights``, float64 for any
        other (PyTorch's dtypes).

    Raises:
        TypeError: ``input`` not an integer Tensor, ``weights`` not a Tensor.
        ValueError: ``input`` not 1-D or negative, ``weights`` of another shape, a negative
            ``minlength``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import bincount
        >>> bincount(ms.Tensor([1, 1, 3], ms.int64), minlength=5).asnumpy().tolist()
        [0, 2, 0, 1, 0]
        >>> w = ms.Tensor([0.5, 0.25, 2.0])
        >>> bincount(ms.Tensor([1, 1, 3], ms.int64), w).asnumpy().tolist()
        [0.0, 0.75, 0.0, 2.0]
    """
    x = check_tensor(input, "input")
    if x.dtype not in _INTS:
        raise TypeError(f"bincount(): input must be an integer Tensor, but got dtype {x.dtype}")
    if x.ndim != 1:
        raise ValueError(f"bincount(): input must be 1-D, but got {x.ndim}-D")
    n = check_int(minlength, "minlength")
    if n < 0:
        raise ValueError(f"bincount(): minlength must be non-negative, but got {n}")
    out_dtype = ms.int64
    if weights is not None:
        w = check_tensor(weights, "weights")
        if w.shape != x.shape:
            raise ValueError(
                f"bincount(): weights must have input's shape {x.shape}, but got {w.shape}"
            )
        out_dtype = ms.float32 if w.dtype == ms.float32 else ms.float64
    values = x.asnumpy()  # the length is data: read it (PyNative)
    if values.size and values.min() < 0:
        raise ValueError("bincount(): input must hold non-negative values")
    length = max(int(values.max()) + 1 if values.size else 0, n)
    if values.size == 0:
        return ops.zeros((length,), out_dtype)
    w = ops.ones(x.shape, out_dtype) if weights is None else weights.astype(out_dtype)
    return call("indexing.bincount", w, x.astype(ms.int64), length)


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    """A histogram of ``input`` in ``bins`` equal bins over ``[min, max]``, as
    :func:`torch.histc`.

    .. math::
        \\text{bin}(x) = \\Big\\lfloor \\frac{(x - \\min) \\cdot \\text{bins}}{\\max - \\min}
        \\Big\\rfloor, \\quad x = \\max \\mapsto \\text{bins} - 1

    computed in ``input``'s dtype (PyTorch's rounding); elements outside ``[min, max]`` and NaN
    are not counted. ``min == max`` (the default ``0, 0``) takes ``input``'s smallest and
    largest values; an empty range is widened by 1 on each side.

    Args:
        input (Tensor[*]): float16/32/64, any shape (flattened).
        bins (int): the number of bins, ``> 0``.
        min (number): the lower edge.
        max (number): the upper edge, ``>= min``.

    Returns:
        Tensor[bins]: the counts, ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a float Tensor, ``bins`` not an int.
        ValueError: ``bins <= 0``, ``max < min``, a non-finite range.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import histc
        >>> histc(ms.Tensor([1.0, 2.0, 1.0, 4.0, 5.0]), bins=4, min=0, max=4).asnumpy().tolist()
        [0.0, 2.0, 1.0, 1.0]
    """
    x = check_tensor(input, "input")
    if not is_float_dtype(x.dtype):
        raise TypeError(f"histc(): input must be a float Tensor, but got dtype {x.dtype}")
    b = check_int(bins, "bins")
    if b <= 0:
        raise ValueError(f"histc(): bins must be > 0, but got {b}")
    lo, hi = check_number(min, "min"), check_number(max, "max")
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"histc(): range of [{lo}, {hi}] is not finite")
    if lo > hi:
        raise ValueError(f"histc(): max must be larger than min, but got min={lo}, max={hi}")
    flat = x.reshape(-1)
    if flat.shape[0] == 0:
        return ops.zeros((b,), x.dtype)
    if lo == hi:  # the data's range, read on device (the length stays static)
        left, right = ops.min(flat)[0], ops.max(flat)[0]
        same = left == right
        left = ops.where(same, left - 1, left)
        right = ops.where(same, right + 1, right)
    else:
        left, right = ops.scalar_to_tensor(lo, x.dtype), ops.scalar_to_tensor(hi, x.dtype)
    inside = ops.logical_and(flat >= left, flat <= right)  # NaN: outside
    scaled = (flat - left) * ops.scalar_to_tensor(b, x.dtype) / (right - left)
    pos = ops.where(inside, scaled, ops.zeros_like(scaled)).astype(ms.int64)
    pos = ops.minimum(pos, b - 1)
    pos = ops.where(inside, pos, ops.full_like(pos, b))  # slot b: the elements not counted
    return call("indexing.histc", ops.ones(flat.shape, x.dtype), pos, b + 1)[:b]
