"""``torch.nn.functional.pairwise_distance`` and ``torch.nn.PairwiseDistance``.

MindSpore 2.10 has no ``pairwise_distance``; ``ops.norm`` differs from ``torch.norm`` at a zero
vector (NaN gradient where PyTorch gives 0). The p-norm here is PyTorch's, gradient included:
``p = 0`` counts the nonzero entries (no gradient), ``p = ±inf`` is the largest/smallest
magnitude, and a zero vector has a zero gradient for every ``p >= 1``. float16 is computed in
float32 and rounded once (PyTorch's CPU norm accumulates half in float).
"""

from __future__ import annotations

import math

from mindspore import Tensor, nn, ops

from mscompat._checks import check_bool, check_float_tensor, check_number
from mscompat.custom_ops.registry import call, register
from mscompat.layers._loss_common import broadcast_pair, scalar, upcast

__all__ = ["PairwiseDistance", "pairwise_distance"]


def pnorm(d: Tensor, p: float, keepdim: bool = False) -> Tensor:
    """``torch.norm(d, p, dim=-1, keepdim)`` (a 0-d ``d`` is its own last dim), with
    PyTorch's gradient: zero where the norm is zero (``p >= 1``), none for ``p = 0``."""
    if d.ndim == 0:
        d = d.reshape((1,))
        out = pnorm(d, p, keepdim)
        return out.reshape(()) if not keepdim else out.reshape((1,))
    a = ops.abs(d)
    if p == 0:
        return ops.stop_gradient((a != 0).astype(d.dtype).sum(-1, keepdims=keepdim))
    if math.isinf(p):
        return a.max(-1, keepdims=keepdim) if p > 0 else a.min(-1, keepdims=keepdim)
    if p == 1:
        return a.sum(-1, keepdims=keepdim)
    if p == 2:
        s = (d * d).sum(-1, keepdims=keepdim)
    else:
        s = ops.pow(a, scalar(p, d)).sum(-1, keepdims=keepdim)
    zero = s == 0
    # sqrt/pow of 1 where the sum is 0, masked back to 0: a finite (zero) gradient there
    safe = ops.where(zero, ops.ones_like(s), s)
    root = ops.sqrt(safe) if p == 2 else ops.pow(safe, scalar(1.0 / p, d))
    return ops.where(zero, ops.zeros_like(s), root)


@register("layers.pairwise_distance", "composite", note="PyTorch's p-norm in MindSpore ops")
def _pairwise(x1: Tensor, x2: Tensor, p: float, eps: float, keepdim: bool) -> Tensor:
    # the difference in the input dtype (PyTorch's float16 rounds it), the norm in float32
    d = upcast(x1 - x2 + scalar(eps, x1))
    return pnorm(d, p, keepdim).astype(x1.dtype)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    r"""The ``p``-norm distance between the rows of ``x1`` and ``x2``, as
    ``torch.nn.functional.pairwise_distance``.

    .. math:: d = \left(\sum_k |x_{1,k} - x_{2,k} + \epsilon|^p\right)^{1/p}

    over the last dim of the broadcast inputs (``p = 0``: the count of nonzero terms;
    ``p = inf``: the largest magnitude, ``-inf`` the smallest).

    Args:
        x1 (Tensor[..., D]): float16, float32 or float64.
        x2 (Tensor[..., D]): broadcastable with ``x1``, the same dtype.
        p (float): the norm degree. Default: 2.0.
        eps (float): added to the difference (keeps the norm away from 0). Default: 1e-6.
        keepdim (bool): keep the reduced dim (size 1). Default: False.

    Returns:
        Tensor[...]: the broadcast shape without its last dim (kept with ``keepdim``); a 1-D
        pair gives a 0-d result.

    Raises:
        TypeError: non-float inputs, different dtypes, ``p``/``eps`` not numbers.
        ValueError: shapes that do not broadcast.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import pairwise_distance
        >>> x1, x2 = ms.Tensor([[0.0, 0.0], [1.0, 1.0]]), ms.Tensor([[3.0, 4.0], [1.0, 1.0]])
        >>> [round(v, 4) for v in pairwise_distance(x1, x2, eps=0.0).asnumpy().tolist()]
        [5.0, 0.0]
    """
    x1 = check_float_tensor(x1, "x1")
    x2 = check_float_tensor(x2, "x2")
    if x1.dtype != x2.dtype:
        raise TypeError(
            f"pairwise_distance(): x1 and x2 must have the same dtype, but got {x1.dtype} and "
            f"{x2.dtype}"
        )
    p = float(check_number(p, "p"))
    eps = float(check_number(eps, "eps"))
    keepdim = check_bool(keepdim, "keepdim")
    x1, x2 = broadcast_pair(x1, x2, "x1", "x2")
    if x1.size == 0:  # the norm of an empty row is 0; no kernel sees an empty input
        return ops.zeros(x1.shape[:-1] + ((1,) if keepdim else ()), x1.dtype)
    return call("layers.pairwise_distance", x1, x2, p, eps, keepdim)


class PairwiseDistance(nn.Cell):
    """The pairwise ``p``-norm distance as a Cell, as ``torch.nn.PairwiseDistance``. See
    :func:`pairwise_distance`.

    Args:
        p (float): the norm degree. Default: 2.0.
        eps (float): added to the difference. Default: 1e-6.
        keepdim (bool): keep the reduced dim. Default: False.

    Shape:
        - x1, x2: :math:`(N, D)` or :math:`(D)`, broadcastable.
        - output: :math:`(N)` or :math:`()` (:math:`(N, 1)` / :math:`(1)` with ``keepdim``).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import PairwiseDistance
        >>> d = PairwiseDistance(p=1.0, eps=0.0)
        >>> float(d(ms.Tensor([1.0, 2.0]), ms.Tensor([0.0, 0.0])))
        3.0
    """

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = float(check_number(p, "p"))
        self.eps = float(check_number(eps, "eps"))
        self.keepdim = check_bool(keepdim, "keepdim")

    def construct(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
