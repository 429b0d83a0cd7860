"""Membership test, as :func:`torch.isin`.

MindSpore 2.10 has no ``isin`` on CPU. Each element is compared with every test element (a
broadcast equality and ``any``): ``O(N * M)`` memory, exact, static shapes, so it compiles under
``ms.jit``. Mixed dtypes compare in the promoted dtype, as PyTorch (``1 in [1.0]``).
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_bool
from mscompat.custom_ops.registry import call, register

__all__ = ["isin"]

_NUMBER = (bool, int, float)


@register("math.isin", "composite", note="broadcast equality against every test element, any")
def _isin_composite(elements: Tensor, test: Tensor, invert: bool) -> Tensor:
    flat = elements.reshape((-1, 1))
    hit = ops.equal(flat, test.reshape((1, -1))).any(1).reshape(elements.shape)
    return ops.logical_not(hit) if invert else hit


def _as_tensor(value: Any, name: str) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if isinstance(value, _NUMBER):
        return Tensor(value)
    raise TypeError(f"isin(): {name} must be a Tensor or a number, but got {type(value).__name__}")


def isin(
    elements: Any, test_elements: Any, *, assume_unique: bool = False, invert: bool = False
) -> Tensor:
    """Whether each element of ``elements`` is in ``test_elements``, as :func:`torch.isin`.

    .. math::
        \\text{out}_i = \\exists j: \\text{elements}_i = \\text{test\\_elements}_j

    NaN is in nothing (NaN != NaN), as PyTorch.

    Args:
        elements (Tensor[*] or number): the values to look up.
        test_elements (Tensor[*] or number): the values to look for (any shape, flattened).
        assume_unique (bool): accepted for PyTorch's signature; the result does not depend on it.
        invert (bool): return ``not in`` instead.

    Returns:
        Tensor[*]: bool, ``elements``' shape.

    Raises:
        TypeError: both arguments numbers, an argument neither a Tensor nor a number,
            ``assume_unique``/``invert`` not a bool.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import isin
        >>> isin(ms.Tensor([[1, 2], [3, 4]]), ms.Tensor([2, 3])).asnumpy().tolist()
        [[False, True], [True, False]]
    """
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin(): elements or test_elements must be a Tensor, but both are numbers")
    x = _as_tensor(elements, "elements")
    t = _as_tensor(test_elements, "test_elements")
    check_bool(assume_unique, "isin(): assume_unique")
    invert = check_bool(invert, "isin(): invert")
    if x.dtype != t.dtype:  # compare in the promoted dtype
        floats = (ms.float16, ms.float32, ms.float64)
        if x.dtype not in floats and t.dtype not in floats:
            wide = ms.int64
        elif ms.float64 in (x.dtype, t.dtype):
            wide = ms.float64
        else:
            wide = ms.float32
        x_c, t_c = x.astype(wide), t.astype(wide)
    else:
        x_c, t_c = x, t
    if x.size == 0 or t.size == 0:  # answered here: no kernel sees an empty tensor
        return ops.fill(ms.bool_, x.shape, invert)
    return call("math.isin", x_c, t_c, invert)
