"""``softmax``, ``log_softmax``, ``softmin`` and ``glu`` as ``torch.nn.functional``, with their
Cells.

On MindSpore 2.10 CPU ``mint.nn.functional.log_softmax`` has no kernel in PyNative. These take
PyTorch's ``dim=None`` rule (0 for 0-D, 1-D and 3-D input, else 1) and ``dtype`` (the input is
cast first); float16 is computed in float32 and rounded once, as PyTorch's CPU kernels.
"""

from __future__ import annotations

import warnings
from typing import Any, Optional

from mindspore import Tensor, mint, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_float_tensor, check_int, wrap_dim
from mscompat.custom_ops.registry import call, register
from mscompat.layers._pointwise import work

__all__ = [
    "GLU",
    "LogSoftmax",
    "Softmax",
    "Softmin",
    "glu",
    "log_softmax",
    "softmax",
    "softmin",
]


@register(
    ("layers.softmax", "layers.log_softmax"),
    "composite",
    note="max-shifted exp / sum in MindSpore ops",
)
def _softmax_composite(x: Tensor, dim: int, log: bool, negate: bool) -> Tensor:
    w = work(x)
    if negate:
        w = -w
    shifted = w - ops.stop_gradient(w.max(axis=dim, keepdims=True))
    if log:
        out = shifted - ops.log(ops.exp(shifted).sum(axis=dim, keepdims=True))
    else:
        e = ops.exp(shifted)
        out = e / e.sum(axis=dim, keepdims=True)
    return out.astype(x.dtype)


def _softmax_native(x: Tensor, dim: int, log: bool, negate: bool) -> Tensor:
    w = -x if negate else x
    if log:
        return mint.nn.functional.log_softmax(w, dim)
    return mint.nn.functional.softmax(w, dim)


register(
    ("layers.softmax", "layers.log_softmax"),
    "native",
    devices=("Ascend",),
    note="mint.nn.functional.softmax / log_softmax",
)(_softmax_native)


@constexpr
def _softmax_dim(ndim: int, name: str) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        stacklevel=3,
    )
    return 0 if ndim in (0, 1, 3) else 1


def _run(op: str, input: Any, dim: Optional[int], dtype: Any, log: bool, negate: bool) -> Tensor:
    x = check_float_tensor(input, "input")
    if dtype is not None:
        x = check_float_tensor(x.astype(dtype), "dtype")
    name = op.rpartition(".")[2]
    d = _softmax_dim(x.ndim, name) if dim is None else wrap_dim(dim, max(x.ndim, 1), x.ndim)
    if x.size == 0:
        return x
    if x.ndim == 0:
        return call(op, x.reshape((1,)), 0, log, negate).reshape(())
    return call(op, x, d, log, negate)


def softmax(
    input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """Softmax along ``dim``, as :func:`torch.nn.functional.softmax`.

    .. math:: y_i = \\frac{e^{x_i}}{\\sum_j e^{x_j}}

    Args:
        input (Tensor): float16, float32 or float64.
        dim (int, optional): the reduced dim; None: PyTorch's deprecated implicit choice.
        dtype (mindspore dtype, optional): the input is cast to it first.

    Returns:
        Tensor: input's shape, in ``dtype`` (or input's).

    Raises:
        ValueError: ``dim`` out of range. TypeError: non-float input or ``dtype``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import softmax
        >>> softmax(ms.Tensor([[0.0, 0.0]]), dim=1).asnumpy().tolist()
        [[0.5, 0.5]]
    """
    return _run("layers.softmax", input, dim, dtype, False, False)


def softmin(
    input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """Softmin along ``dim`` (``softmax(-x)``), as :func:`torch.nn.functional.softmin`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import softmin
        >>> softmin(ms.Tensor([1.0, 1.0]), dim=0).asnumpy().tolist()
        [0.5, 0.5]
    """
    return _run("layers.softmax", input, dim, dtype, False, True)


def log_softmax(
    input: Tensor, dim: Optional[int] = None, _stacklevel: int = 3, dtype: Any = None
) -> Tensor:
    """Log-softmax along ``dim``, as :func:`torch.nn.functional.log_softmax`.

    .. math:: y_i = x_i - m - \\log \\sum_j e^{x_j - m},\\quad m = \\max_j x_j

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import log_softmax
        >>> log_softmax(ms.Tensor([0.0, 0.0]), dim=0).asnumpy().astype(float).round(4).tolist()
        [-0.6931, -0.6931]
    """
    return _run("layers.log_softmax", input, dim, dtype, True, False)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit, as :func:`torch.nn.functional.glu`: :math:`a \\otimes \\sigma(b)`
    with :math:`a, b` the halves of ``input`` along ``dim``.

    Raises:
        ValueError: 0-d input, or an odd size along ``dim``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import glu
        >>> glu(ms.Tensor([[2.0, 0.0]])).asnumpy().tolist()
        [[1.0]]
    """
    x = check_float_tensor(input, "input")
    if x.ndim == 0:
        raise ValueError("glu(): input must have at least 1 dim (halving a scalar)")
    d = wrap_dim(check_int(dim, "dim"), x.ndim, x.ndim)
    if x.shape[d] % 2:
        raise ValueError(
            f"glu(): halving dimension must be even, but dimension {d} is size {x.shape[d]}"
        )
    half = x.shape[d] // 2
    if x.size == 0:  # no kernel sees an empty tensor (graph mode's Slice refuses one)
        return ops.zeros(x.shape[:d] + (half,) + x.shape[d + 1 :], x.dtype)
    w = work(x)
    a, b = ops.narrow(w, d, 0, half), ops.narrow(w, d, half, half)
    return (a * ops.sigmoid(b)).astype(x.dtype)


class _SoftmaxCell(nn.Cell):
    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        self.dim = None if dim is None else check_int(dim, "dim")


class Softmax(_SoftmaxCell):
    """As :class:`torch.nn.Softmax`. See :func:`softmax`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Softmax
        >>> Softmax(dim=0)(ms.Tensor([0.0, 0.0])).asnumpy().tolist()
        [0.5, 0.5]
    """

    def construct(self, input: Tensor) -> Tensor:
        return softmax(input, self.dim)


class Softmin(_SoftmaxCell):
    """As :class:`torch.nn.Softmin`. See :func:`softmin`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import Softmin
        >>> Softmin(dim=0)(ms.Tensor([0.0, 0.0])).asnumpy().tolist()
        [0.5, 0.5]
    """

    def construct(self, input: Tensor) -> Tensor:
        return softmin(input, self.dim)


class LogSoftmax(_SoftmaxCell):
    """As :class:`torch.nn.LogSoftmax`. See :func:`log_softmax`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import LogSoftmax
        >>> LogSoftmax(dim=0)(ms.Tensor([0.0, 0.0])).asnumpy().astype(float).round(4).tolist()
        [-0.6931, -0.6931]
    """

    def construct(self, input: Tensor) -> Tensor:
        return log_softmax(input, self.dim)


class GLU(nn.Cell):
    """As :class:`torch.nn.GLU`. See :func:`glu`.

    Shape:
        - input: :math:`(*, 2N, *)`; output: :math:`(*, N, *)`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import GLU
        >>> GLU()(ms.Tensor([2.0, 0.0])).asnumpy().tolist()
        [1.0]
    """

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = check_int(dim, "dim")

    def construct(self, input: Tensor) -> Tensor:
        return glu(input, self.dim)
