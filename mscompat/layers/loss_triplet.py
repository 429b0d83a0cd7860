"""Embedding losses of ``torch.nn.functional``: ``triplet_margin_loss``,
``triplet_margin_with_distance_loss``, ``cosine_embedding_loss`` and their ``torch.nn`` Cells,
composed of MindSpore ops with PyTorch's formulas (``pairwise_distance``'s ``+ eps``,
``cosine_embedding_loss``'s ``1e-12``).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from mindspore import Tensor, nn, ops

from mscompat._checks import check_bool, check_float_tensor, check_number, is_float_dtype
from mscompat.custom_ops.registry import call, register
from mscompat.layers._loss_common import (
    Loss,
    MarginLoss,
    apply_reduction,
    check_dtype_match,
    legacy_reduction,
    scalar,
    upcast,
)
from mscompat.layers.distance import pnorm

__all__ = [
    "CosineEmbeddingLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "cosine_embedding_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
]

_COSINE_EPS = 1e-12  # PyTorch's EPSILON in cosine_embedding_loss


def _pairwise_distance(x1: Tensor, x2: Tensor, p: float, eps: float) -> Tensor:
    """``torch.pairwise_distance``: the norm of ``x1 - x2 + eps`` over the last dim."""
    return pnorm(x1 - x2 + scalar(eps, x1), p)


@register("layers.triplet_margin_loss", "composite", note="pairwise p-norms in MindSpore ops")
def _triplet_pointwise(
    a: Tensor, pos: Tensor, neg: Tensor, margin: float, p: float, eps: float, swap: bool
) -> Tensor:
    d_pos = _pairwise_distance(a, pos, p, eps)
    d_neg = _pairwise_distance(a, neg, p, eps)
    if swap:
        d_neg = ops.minimum(d_neg, _pairwise_distance(pos, neg, p, eps))
    return ops.relu(scalar(margin, d_pos) + d_pos - d_neg)


def _check_triplet(anchor: Any, positive: Any, negative: Any) -> Any:
    a = check_float_tensor(anchor, "anchor")
    pos = check_dtype_match(a, positive, "anchor", "positive")
    neg = check_dtype_match(a, negative, "anchor", "negative")
    if a.ndim != pos.ndim or a.ndim != neg.ndim:
        raise ValueError(
            "anchor, positive and negative must have the same number of dims, but got "
            f"anchor {a.ndim}-D, positive {pos.ndim}-D and negative {neg.ndim}-D inputs"
        )
    return a, pos, neg


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """Triplet margin loss, as ``torch.nn.functional.triplet_margin_loss``.

    .. math::
        \\ell = \\max(0, \\text{margin} + d(a, p) - d(a, n)), \\qquad
        d(x, y) = \\lVert x - y + \\epsilon \\rVert_p

    over the last dim; with ``swap``, :math:`d(a, n)` becomes :math:`\\min(d(a, n), d(p, n))`.

    Args:
        anchor (Tensor[N, D] or Tensor[D]): float16, float32 or float64.
        positive (Tensor, same ndim, broadcastable).
        negative (Tensor, same ndim, broadcastable).
        margin (float): Default: 1.0.
        p (float): the norm's order, > 0 (``inf`` too). Default: 2.
        eps (float): added to the differences. Default: 1e-6.
        swap (bool): the distance swap of Balntas et al. Default: False.
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Returns:
        Tensor: 0-d, or ``(N,)`` with ``'none'``; ``anchor``'s dtype.

    Raises:
        TypeError: non-float Tensors, non-number ``margin``/``p``/``eps``, non-bool ``swap``.
        ValueError: inputs of different ndim (PyTorch: RuntimeError), ``p <= 0``, an invalid
            ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import triplet_margin_loss
        >>> a, pos, neg = ms.Tensor([[0.0, 0.0]]), ms.Tensor([[3.0, 4.0]]), ms.Tensor([[1.0, 0.0]])
        >>> round(float(triplet_margin_loss(a, pos, neg)), 4)
        5.0
    """
    a, pos, neg = _check_triplet(anchor, positive, negative)
    margin = check_number(margin, "margin")
    p = check_number(p, "p")
    if not p > 0:
        raise ValueError(f"p must be > 0, but got p={p}")
    eps = check_number(eps, "eps")
    check_bool(swap, "swap")
    red = legacy_reduction(size_average, reduce, reduction)
    loss = call(
        "layers.triplet_margin_loss", upcast(a), upcast(pos), upcast(neg), margin, p, eps, swap
    )
    return apply_reduction(loss, red, a.dtype)


class TripletMarginLoss(Loss):
    """Triplet margin loss Cell, as ``torch.nn.TripletMarginLoss``. See
    :func:`triplet_margin_loss`.

    Args:
        margin (float): Default: 1.0.
        p (float): the norm's order. Default: 2.0.
        eps (float): added to the differences. Default: 1e-6.
        swap (bool): the distance swap. Default: False.
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - anchor, positive, negative: :math:`(N, D)` or :math:`(D)`.
        - output: scalar, or :math:`(N)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import TripletMarginLoss
        >>> a, pos, neg = ms.Tensor([[0.0, 0.0]]), ms.Tensor([[3.0, 4.0]]), ms.Tensor([[1.0, 0.0]])
        >>> round(float(TripletMarginLoss(margin=0.5, p=1)(a, pos, neg)), 4)
        6.5
    """

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average: Optional[bool] = None,
        reduce: Optional[bool] = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.margin = check_number(margin, "margin")
        if self.margin <= 0:  # the module checks (torch.nn.TripletMarginLoss), the function not
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        self.p = check_number(p, "p")
        self.eps = check_number(eps, "eps")
        self.swap = check_bool(swap, "swap")

    def construct(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_loss(
            anchor,
            positive,
            negative,
            self.margin,
            self.p,
            self.eps,
            self.swap,
            reduction=self.reduction,
        )


Distance = Callable[[Tensor, Tensor], Tensor]
_NOT_CALLABLE = (bool, int, float, str, tuple, list, dict, Tensor)


@register(
    "layers.triplet_margin_with_distance_loss", "composite", note="hinge of the given distances"
)
def _triplet_hinge(d_pos: Tensor, d_neg: Tensor, margin: float) -> Tensor:
    return ops.relu(scalar(margin, d_pos) + d_pos - d_neg)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Optional[Distance] = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: str = "mean",
) -> Tensor:
    """Triplet margin loss with a distance of one's choice, as
    ``torch.nn.functional.triplet_margin_with_distance_loss``.

    .. math:: \\ell = \\max(0, \\text{margin} + d(a, p) - d(a, n))

    with :math:`d` = ``distance_function`` (default: the pairwise Euclidean distance with
    ``eps=1e-6``); with ``swap``, :math:`d(a, n)` becomes :math:`\\min(d(a, n), d(p, n))`.

    Args:
        anchor (Tensor[N, *] or Tensor[*]): float16, float32 or float64.
        positive (Tensor, same ndim).
        negative (Tensor, same ndim).
        distance_function (callable, optional): ``(Tensor, Tensor) -> Tensor`` of
            non-negative distances, made of MindSpore ops (it runs inside ``ms.jit`` too).
        margin (float): > 0. Default: 1.0.
        swap (bool): the distance swap. Default: False.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Returns:
        Tensor: 0-d, or the distances' shape with ``'none'``; ``anchor``'s dtype.

    Raises:
        TypeError: non-float Tensors, a ``distance_function`` that is not callable.
        ValueError: inputs of different ndim (PyTorch: RuntimeError), ``margin <= 0``, an
            invalid ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mindspore import ops
        >>> from mscompat.layers import triplet_margin_with_distance_loss
        >>> def l1(x, y):
        ...     return ops.abs(x - y).sum(-1)
        >>> a, pos, neg = ms.Tensor([[0.0, 0.0]]), ms.Tensor([[1.0, 1.0]]), ms.Tensor([[1.0, 0.0]])
        >>> float(triplet_margin_with_distance_loss(a, pos, neg, distance_function=l1))
        2.0
    """
    a, pos, neg = _check_triplet(anchor, positive, negative)
    # ms.jit cannot evaluate callable(): values that are never callable are refused instead
    if isinstance(distance_function, _NOT_CALLABLE):
        raise TypeError(
            f"distance_function must be callable or None, but got {distance_function!r}"
        )
    red = legacy_reduction(None, None, reduction)
    margin = check_number(margin, "margin")
    if not margin > 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    check_bool(swap, "swap")
    if distance_function is None:
        a, pos, neg = upcast(a), upcast(pos), upcast(neg)
        d_pos = _pairwise_distance(a, pos, 2.0, 1e-6)
        d_neg = _pairwise_distance(a, neg, 2.0, 1e-6)
        if swap:
            d_neg = ops.minimum(d_neg, _pairwise_distance(pos, neg, 2.0, 1e-6))
    else:
        d_pos = distance_function(a, pos)
        d_neg = distance_function(a, neg)
        if swap:
            d_neg = ops.minimum(d_neg, distance_function(pos, neg))
    loss = call("layers.triplet_margin_with_distance_loss", upcast(d_pos), upcast(d_neg), margin)
    return apply_reduction(loss, red, anchor.dtype)


class TripletMarginWithDistanceLoss(nn.Cell):
    """Triplet margin loss with a distance of one's choice, as
    ``torch.nn.TripletMarginWithDistanceLoss``. See :func:`triplet_margin_with_distance_loss`.

    Args:
        distance_function (callable, optional): ``(Tensor, Tensor) -> Tensor`` distances.
        margin (float): > 0. Default: 1.0.
        swap (bool): the distance swap. Default: False.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - anchor, positive, negative: :math:`(N, *)` or :math:`(*)`.
        - output: scalar, or the distances' shape with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import TripletMarginWithDistanceLoss
        >>> a, pos, neg = ms.Tensor([[0.0, 0.0]]), ms.Tensor([[3.0, 4.0]]), ms.Tensor([[1.0, 0.0]])
        >>> round(float(TripletMarginWithDistanceLoss(margin=2.0)(a, pos, neg)), 4)
        6.0
    """

    def __init__(
        self,
        *,
        distance_function: Optional[Distance] = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: str = "mean",
    ) -> None:
        super().__init__()
        if distance_function is not None and not callable(distance_function):
            raise TypeError(
                f"distance_function must be callable or None, but got "
                f"{type(distance_function).__name__}"
            )
        self.distance_function = distance_function
        self.margin = check_number(margin, "margin")
        if not self.margin > 0:
            raise ValueError(f"margin must be greater than 0, got {margin}")
        self.swap = check_bool(swap, "swap")
        self.reduction = legacy_reduction(None, None, reduction)

    def construct(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )


# ----------------------------------------------------------------------------- cosine


@register("layers.cosine_embedding_loss", "composite", note="PyTorch's formula in MindSpore ops")
def _cosine_pointwise(x1: Tensor, x2: Tensor, y: Tensor, margin: float) -> Tensor:
    dim = x1.ndim - 1
    eps = scalar(_COSINE_EPS, x1)
    prod = (x1 * x2).sum(dim)
    mag1 = (x1 * x1).sum(dim) + eps
    mag2 = (x2 * x2).sum(dim) + eps
    cos = prod / ops.sqrt(mag1 * mag2)
    zeros = ops.zeros_like(cos)
    pos = ops.where(y == 1, 1 - cos, zeros)
    neg = ops.where(y == -1, ops.relu(cos - scalar(margin, cos)), zeros)
    return pos + neg


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """Cosine embedding loss, as ``torch.nn.functional.cosine_embedding_loss``.

    .. math::
        \\ell = \\begin{cases} 1 - \\cos(x_1, x_2) & y = 1 \\\\
        \\max(0, \\cos(x_1, x_2) - \\text{margin}) & y = -1 \\end{cases}, \\qquad
        \\cos = \\frac{\\sum x_1 x_2}{\\sqrt{(\\sum x_1^2 + 10^{-12})(\\sum x_2^2 + 10^{-12})}}

    (0 for a target neither 1 nor -1).

    Args:
        input1 (Tensor[N, D] or Tensor[D]): float16, float32 or float64.
        input2 (Tensor, same shape as ``input1``).
        target (Tensor[N] or 0-d): 1 or -1, any real dtype.
        margin (float): Default: 0.
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Returns:
        Tensor: 0-d, or ``target``'s shape with ``'none'``; ``input1``'s dtype.

    Raises:
        TypeError: non-float inputs, a non-Tensor ``target``.
        ValueError: ``target`` over 1-D, inputs not one dim more than ``target``, or of
            different shapes, an invalid ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import cosine_embedding_loss
        >>> x1, x2 = ms.Tensor([[1.0, 0.0], [1.0, 1.0]]), ms.Tensor([[0.0, 1.0], [1.0, 1.0]])
        >>> round(float(cosine_embedding_loss(x1, x2, ms.Tensor([1.0, -1.0]))), 6)
        1.0
    """
    x1 = check_float_tensor(input1, "input1")
    x2 = check_dtype_match(x1, input2, "input1", "input2")
    y = check_dtype_match(x1, target, "input1", "target") if _is_float(target) else target
    margin = check_number(margin, "margin")
    red = legacy_reduction(size_average, reduce, reduction)
    if not isinstance(y, Tensor):
        raise TypeError(f"target must be a mindspore.Tensor, but got {type(y).__name__}")
    if y.ndim > 1:
        raise ValueError(
            f"target must be 0-D or 1-D (multi-target not supported), but got target.shape="
            f"{y.shape}"
        )
    if x1.ndim != y.ndim + 1 or x2.shape != x1.shape:
        raise ValueError(
            f"a {y.ndim}-D target expects {y.ndim + 1}-D input1 and input2 of one shape, but "
            f"got input1.shape={x1.shape} and input2.shape={x2.shape}"
        )
    if y.ndim == 1 and y.shape[0] != x1.shape[0]:
        raise ValueError(
            f"target must have {x1.shape[0]} elements (input1.shape[0]), but got "
            f"target.shape={y.shape}"
        )
    loss = call("layers.cosine_embedding_loss", upcast(x1), upcast(x2), upcast(y), margin)
    return apply_reduction(loss, red, x1.dtype)


def _is_float(x: Any) -> bool:
    return isinstance(x, Tensor) and is_float_dtype(x.dtype)


class CosineEmbeddingLoss(MarginLoss):
    """Cosine embedding loss Cell, as ``torch.nn.CosineEmbeddingLoss``. See
    :func:`cosine_embedding_loss`.

    Args:
        margin (float): Default: 0.0.
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - input1, input2: :math:`(N, D)` or :math:`(D)`.
        - target: :math:`(N)` or :math:`()`, values 1 or -1.
        - output: scalar, or :math:`(N)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import CosineEmbeddingLoss
        >>> x1, x2 = ms.Tensor([[1.0, 0.0]]), ms.Tensor([[1.0, 1.0]])
        >>> round(float(CosineEmbeddingLoss(margin=0.5)(x1, x2, ms.Tensor([-1.0]))), 6)
        0.207107
    """

    def __init__(
        self,
        margin: float = 0.0,
        size_average: Optional[bool] = None,
        reduce: Optional[bool] = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def construct(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return cosine_embedding_loss(input1, input2, target, self.margin, reduction=self.reduction)
