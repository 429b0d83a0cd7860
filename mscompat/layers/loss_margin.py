"""Margin losses of ``torch.nn.functional``: ``soft_margin_loss``, ``multilabel_margin_loss``,
``multi_margin_loss``, ``margin_ranking_loss``, ``hinge_embedding_loss`` and their ``torch.nn``
Cells, composed of MindSpore ops with PyTorch's formulas (MindSpore's own ``ops`` versions
differ in defaults, dtypes or gradients on CPU).
"""

from __future__ import annotations

from typing import Optional, Tuple

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_float_tensor, check_int, check_number
from mscompat.custom_ops.registry import call, register
from mscompat.layers._loss_common import (
    Loss,
    MarginLoss,
    apply_reduction,
    as_tensor,
    broadcast_pair,
    check_dtype_match,
    check_index_range,
    check_index_tensor,
    legacy_reduction,
    scalar,
    upcast,
)

__all__ = [
    "HingeEmbeddingLoss",
    "MarginRankingLoss",
    "MultiLabelMarginLoss",
    "MultiMarginLoss",
    "SoftMarginLoss",
    "hinge_embedding_loss",
    "margin_ranking_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "soft_margin_loss",
]


# ----------------------------------------------------------------------------- soft_margin_loss


@register("layers.soft_margin_loss", "composite", note="stable softplus(-y x) in MindSpore ops")
def _soft_margin_pointwise(x: Tensor, y: Tensor) -> Tensor:
    z = -(x * y)
    # log(1 + exp(z)) = max(z, 0) + log1p(exp(-|z|)): finite where exp(z) overflows
    return ops.maximum(z, ops.zeros_like(z)) + ops.log1p(ops.exp(-ops.abs(z)))


def soft_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """Two-class logistic loss, as ``torch.nn.functional.soft_margin_loss``.

    .. math:: \\ell = \\log(1 + e^{-y x})

    Args:
        input (Tensor[*]): scores, float16, float32 or float64.
        target (Tensor, broadcastable with ``input``): labels, 1 or -1.
        size_average (bool, optional): deprecated (PyTorch's legacy mapping).
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Returns:
        Tensor: 0-d, or the broadcast shape with ``'none'``; ``input``'s dtype.

    Raises:
        TypeError: non-float Tensors.
        ValueError: shapes that do not broadcast, an invalid ``reduction``.

    .. note::
        Computed as :math:`\\max(z, 0) + \\log(1 + e^{-|z|})`, :math:`z = -yx`: finite where
        PyTorch's :math:`\\log(1 + e^{z})` overflows to inf (:math:`|yx| > 88` in float32)
        and its gradient to NaN.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import soft_margin_loss
        >>> round(float(soft_margin_loss(ms.Tensor([2.0, -1.0]), ms.Tensor([1.0, 1.0]))), 6)
        0.720095
    """
    x = check_float_tensor(input, "input")
    y = check_dtype_match(x, target, "input", "target")
    red = legacy_reduction(size_average, reduce, reduction)
    xb, yb = broadcast_pair(upcast(x), upcast(y), "input", "target")
    if xb.shape != x.shape:
        # PyTorch writes the loss into a Tensor of input's shape: a target that widens it fails
        raise ValueError(
            f"soft_margin_loss(): target of shape {y.shape} must broadcast to input's shape "
            f"{x.shape}"
        )
    return apply_reduction(call("layers.soft_margin_loss", xb, yb), red, x.dtype)


class SoftMarginLoss(Loss):
    """Two-class logistic loss Cell, as ``torch.nn.SoftMarginLoss``. See
    :func:`soft_margin_loss`.

    Args:
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - input: :math:`(*)`.
        - target: same shape as ``input``, values 1 or -1.
        - output: scalar, or :math:`(*)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import SoftMarginLoss
        >>> round(float(SoftMarginLoss(reduction="sum")(ms.Tensor([0.0]), ms.Tensor([1.0]))), 6)
        0.693147
    """

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return soft_margin_loss(input, target, reduction=self.reduction)


# ----------------------------------------------------------------------------- multi-class


def _frames(x: Tensor, fn: str) -> Tuple[Tensor, int]:
    """``x`` as ``(N, C)`` (a 0-d or 1-d input is one frame) and its ndim, PyTorch's layout."""
    if x.ndim > 2:
        raise ValueError(f"{fn}(): input must be 0-D, 1-D or 2-D, but got input.shape={x.shape}")
    if x.ndim == 2:
        return x, 2
    return x.reshape(1, -1), x.ndim


def _frameapply_reduction(
    per_frame: Tensor, red: str, keep_shape: Tuple[int, ...], dtype: ms.Type
) -> Tensor:
    """PyTorch's reduction of a per-frame loss: 'mean' of no frame is 0 (not NaN)."""
    if red == "none":
        return per_frame.reshape(keep_shape).astype(dtype)
    if per_frame.size == 0:
        return ops.fill(dtype, (), 0.0)
    return apply_reduction(per_frame, red, dtype)


def _one_hot(index: Tensor, c: int, dtype: ms.Type) -> Tensor:
    """``index``'s one-hot rows in ``dtype`` (MindSpore's OneHot has no float64)."""
    return (index.expand_dims(-1) == ops.arange(c, dtype=index.dtype)).astype(dtype)


@register("layers.multilabel_margin_loss", "composite", note="(N, C, C) hinge table, masked")
def _multilabel_frames(x: Tensor, target: Tensor) -> Tensor:
    c = x.shape[1]
    valid = ops.cumprod((target >= 0).astype(ms.int32), 1).astype(x.dtype)  # up to the first -1
    safe = ops.where(target >= 0, target, ops.zeros_like(target))
    onehot = _one_hot(safe, c, x.dtype)  # (N, K, C)
    is_target = ((onehot * valid.expand_dims(2)).sum(1) > 0).astype(x.dtype)  # (N, C)
    x_t = ops.gather_elements(x, 1, safe)  # (N, K): the score of each listed target
    hinge = ops.relu(1 - x_t.expand_dims(2) + x.expand_dims(1))  # (N, K, C)
    mask = valid.expand_dims(2) * (1 - is_target).expand_dims(1)
    return (hinge * mask).sum((1, 2)) / scalar(float(c), x)


def multilabel_margin_loss(
    input: Tensor,
    target: Tensor,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class multi-label hinge loss, as ``torch.nn.functional.multilabel_margin_loss``.

    For each sample, with :math:`J` the classes listed in ``target`` before its first ``-1``:

    .. math::
        \\ell = \\sum_{j \\in J} \\sum_{i \\notin J} \\frac{\\max(0, 1 - (x_j - x_i))}{C}

    (a class listed twice counts twice, as in PyTorch).

    Args:
        input (Tensor[N, C] or Tensor[C]): scores, float32 or float64 (float16 too, computed
            in float32; PyTorch has no float16 CPU kernel).
        target (Tensor, int64, shape of ``input``): class indices, ``-1``-terminated.
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Returns:
        Tensor: 0-d, or ``(N,)`` with ``'none'`` (0-d for a 1-D input); the mean of no sample
        is 0, as PyTorch's.

    Raises:
        TypeError: a non-float ``input``, a non-integer ``target``.
        ValueError: ``input`` over 2-D, ``target`` of another shape, a target value outside
            ``[-1, C)`` (read, in graph mode too), an invalid ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import multilabel_margin_loss
        >>> x = ms.Tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> y = ms.Tensor([[3, 0, -1, 1]], ms.int64)
        >>> round(float(multilabel_margin_loss(x, y)), 6)
        0.85
    """
    x = check_float_tensor(input, "input")
    t = check_index_tensor(target, "target")
    red = legacy_reduction(size_average, reduce, reduction)
    if t.shape != x.shape:
        raise ValueError(
            f"target must have input's shape {x.shape}, but got target.shape={t.shape}"
        )
    frames, ndim = _frames(upcast(x), "multilabel_margin_loss")
    c = frames.shape[1]
    t = check_index_range(t.reshape(frames.shape), -1, c, None, "multilabel_margin_loss")
    out_shape = (frames.shape[0],) if ndim == 2 else ()
    if frames.size == 0:
        return _frameapply_reduction(
            ops.zeros((frames.shape[0],), frames.dtype), red, out_shape, x.dtype
        )
    per_frame = call("layers.multilabel_margin_loss", frames, t)
    return _frameapply_reduction(per_frame, red, out_shape, x.dtype)


class MultiLabelMarginLoss(Loss):
    """Multi-label hinge loss Cell, as ``torch.nn.MultiLabelMarginLoss``. See
    :func:`multilabel_margin_loss`.

    Args:
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - input: :math:`(C)` or :math:`(N, C)`.
        - target: same shape, int64, ``-1``-terminated class indices.
        - output: scalar, or :math:`(N)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import MultiLabelMarginLoss
        >>> x = ms.Tensor([0.1, 0.2, 0.4, 0.8])
        >>> round(float(MultiLabelMarginLoss()(x, ms.Tensor([3, 0, -1, 1], ms.int64))), 6)
        0.85
    """

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return multilabel_margin_loss(input, target, reduction=self.reduction)


@register("layers.multi_margin_loss", "composite", note="one-hot masked hinge in MindSpore ops")
def _multi_margin_frames(
    x: Tensor, target: Tensor, p: int, margin: float, weight: Optional[Tensor]
) -> Tensor:
    c = x.shape[1]
    index = target.expand_dims(1)
    x_y = ops.gather_elements(x, 1, index)  # (N, 1)
    z = ops.relu(scalar(margin, x) - x_y + x)
    h = z if p == 1 else z * z
    others = 1 - _one_hot(target, c, x.dtype)
    per_frame = (h * others).sum(1)
    if weight is not None:
        per_frame = per_frame * ops.gather(weight, target, 0)
    return per_frame / scalar(float(c), x)


def multi_margin_loss(
    input: Tensor,
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Optional[Tensor] = None,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """Multi-class hinge loss, as ``torch.nn.functional.multi_margin_loss``.

    .. math::
        \\ell = \\frac{1}{C} \\sum_{i \\ne y} w_y \\max(0, \\text{margin} - x_y + x_i)^p

    Args:
        input (Tensor[N, C] or Tensor[C]): scores, float32 or float64 (float16 too, computed in
            float32; PyTorch has no float16 CPU kernel).
        target (Tensor[N], int64): class indices in ``[0, C)`` (0-d or ``(1,)`` for 1-D
            input).
        p (int): 1 or 2. Default: 1.
        margin (float): Default: 1.0.
        weight (Tensor[C], optional): per-class weight :math:`w`.
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Returns:
        Tensor: 0-d, or ``target``'s shape with ``'none'``; the mean of no sample is 0, as
        PyTorch's.

    Raises:
        TypeError: a non-float ``input``/``weight``, a non-integer ``target``/``p``.
        ValueError: ``p`` not 1 or 2, ``input`` over 2-D, ``target`` not of ``N`` elements,
            ``weight`` not 1-D of ``C``, a target outside ``[0, C)`` (read, in graph mode too),
            an invalid ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import multi_margin_loss
        >>> x = ms.Tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> round(float(multi_margin_loss(x, ms.Tensor([3], ms.int64))), 6)
        0.325
    """
    x = check_float_tensor(input, "input")
    t = check_index_tensor(target, "target")
    p = check_int(p, "p")
    if p not in (1, 2):
        raise ValueError(f"only p == 1 and p == 2 supported, but got p={p}")
    margin = check_number(margin, "margin")
    red = legacy_reduction(size_average, reduce, reduction)
    frames, ndim = _frames(upcast(x), "multi_margin_loss")
    n, c = frames.shape
    if t.ndim > 1 or t.size != n:
        raise ValueError(
            f"target must be 0-D or 1-D with {n} elements for input.shape={x.shape}, but got "
            f"target.shape={t.shape}"
        )
    if weight is not None:
        weight = check_dtype_match(x, weight, "input", "weight")
        if weight.ndim != 1 or weight.shape[0] != c:
            raise ValueError(
                f"weight must be one-dimensional with {c} elements, but got "
                f"weight.shape={weight.shape}"
            )
        weight = upcast(weight)
    t = check_index_range(t.reshape(n), 0, c, None, "multi_margin_loss")
    out_shape = tuple(t.shape) if target.ndim > 0 else ()
    if frames.size == 0:
        return _frameapply_reduction(ops.zeros((n,), frames.dtype), red, out_shape, x.dtype)
    per_frame = call("layers.multi_margin_loss", frames, t, p, margin, weight)
    return _frameapply_reduction(per_frame, red, out_shape, x.dtype)


class MultiMarginLoss(Loss):
    """Multi-class hinge loss Cell, as ``torch.nn.MultiMarginLoss``. See
    :func:`multi_margin_loss`.

    Args:
        p (int): 1 or 2. Default: 1.
        margin (float): Default: 1.0.
        weight (Tensor[C], optional): per-class weight.
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - input: :math:`(N, C)` or :math:`(C)`.
        - target: :math:`(N)` or :math:`()`, int64.
        - output: scalar, or :math:`(N)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import MultiMarginLoss
        >>> x = ms.Tensor([[0.1, 0.2, 0.4, 0.8]])
        >>> round(float(MultiMarginLoss(p=2)(x, ms.Tensor([3], ms.int64))), 6)
        0.1525
    """

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Optional[Tensor] = None,
        size_average: Optional[bool] = None,
        reduce: Optional[bool] = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(size_average, reduce, reduction)
        self.p = check_int(p, "p")
        if self.p not in (1, 2):
            raise ValueError(f"only p == 1 and p == 2 supported, but got p={p}")
        self.margin = check_number(margin, "margin")
        self.weight = as_tensor(weight, "weight")

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return multi_margin_loss(
            input, target, self.p, self.margin, self.weight, reduction=self.reduction
        )


# ----------------------------------------------------------------------------- ranking, hinge


@register("layers.margin_ranking_loss", "composite", note="PyTorch's formula in MindSpore ops")
def _ranking_pointwise(x1: Tensor, x2: Tensor, y: Tensor, margin: float) -> Tensor:
    z = -y * (x1 - x2) + scalar(margin, x1)
    # PyTorch's clamp_min keeps NaN (inf - inf), with a zero gradient; MindSpore's relu gives 0
    return ops.where(ops.isnan(z), ops.stop_gradient(z), ops.relu(z))


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """Margin ranking loss, as ``torch.nn.functional.margin_ranking_loss``.

    .. math:: \\ell = \\max(0, -y\\,(x_1 - x_2) + \\text{margin})

    Args:
        input1 (Tensor[*]): float16, float32 or float64.
        input2 (Tensor, same ndim): second scores.
        target (Tensor, same ndim): 1 (``input1`` should rank higher) or -1.
        margin (float): Default: 0.
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Returns:
        Tensor: 0-d, or the broadcast shape with ``'none'``; ``input1``'s dtype.

    Raises:
        TypeError: non-float Tensors, a non-number ``margin``.
        ValueError: inputs of different ndim (PyTorch: RuntimeError) or that do not
            broadcast, an invalid ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import margin_ranking_loss
        >>> a, b = ms.Tensor([1.0, 2.0]), ms.Tensor([2.0, 1.0])
        >>> float(margin_ranking_loss(a, b, ms.Tensor([1.0, 1.0]), margin=0.5))
        0.75
    """
    x1 = check_float_tensor(input1, "input1")
    x2 = check_dtype_match(x1, input2, "input1", "input2")
    y = check_dtype_match(x1, target, "input1", "target")
    margin = check_number(margin, "margin")
    red = legacy_reduction(size_average, reduce, reduction)
    if x1.ndim != x2.ndim or x1.ndim != y.ndim:
        raise ValueError(
            "margin_ranking_loss(): input1, input2 and target must have the same number of "
            f"dims, but got shapes {x1.shape}, {x2.shape} and {y.shape}"
        )
    a, b = broadcast_pair(upcast(x1), upcast(x2), "input1", "input2")
    a, yb = broadcast_pair(a, upcast(y), "input1", "target")
    b, _ = broadcast_pair(b, yb, "input2", "target")
    return apply_reduction(call("layers.margin_ranking_loss", a, b, yb, margin), red, x1.dtype)


class MarginRankingLoss(MarginLoss):
    """Margin ranking loss Cell, as ``torch.nn.MarginRankingLoss``. See
    :func:`margin_ranking_loss`.

    Args:
        margin (float): Default: 0.0.
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - input1, input2: :math:`(N)` or :math:`()`.
        - target: same shape, values 1 or -1.
        - output: scalar, or :math:`(N)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import MarginRankingLoss
        >>> loss = MarginRankingLoss(margin=1.0)
        >>> float(loss(ms.Tensor([3.0]), ms.Tensor([1.0]), ms.Tensor([-1.0])))
        3.0
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
        return margin_ranking_loss(input1, input2, target, self.margin, reduction=self.reduction)


@register("layers.hinge_embedding_loss", "composite", note="PyTorch's formula in MindSpore ops")
def _hinge_pointwise(x: Tensor, y: Tensor, margin: float) -> Tensor:
    zeros = ops.zeros_like(x)
    margin_part = ops.where(y != 1, ops.relu(scalar(margin, x) - x), zeros)
    self_part = ops.where(y != -1, x, zeros)
    return margin_part + self_part


def hinge_embedding_loss(
    input: Tensor,
    target: Tensor,
    margin: float = 1.0,
    size_average: Optional[bool] = None,
    reduce: Optional[bool] = None,
    reduction: str = "mean",
) -> Tensor:
    """Hinge embedding loss, as ``torch.nn.functional.hinge_embedding_loss``.

    .. math::
        \\ell = \\begin{cases} x & y = 1 \\\\ \\max(0, \\text{margin} - x) & y = -1
        \\end{cases}

    (PyTorch's sum of both parts for a target neither 1 nor -1.)

    Args:
        input (Tensor[*]): distances, float16, float32 or float64.
        target (Tensor, broadcastable with ``input``): 1 or -1.
        margin (float): Default: 1.0.
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Returns:
        Tensor: 0-d, or the broadcast shape with ``'none'``; ``input``'s dtype.

    Raises:
        TypeError: non-float Tensors, a non-number ``margin``.
        ValueError: shapes that do not broadcast, an invalid ``reduction``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import hinge_embedding_loss
        >>> x, y = ms.Tensor([0.3, 2.0, 0.4]), ms.Tensor([1.0, -1.0, -1.0])
        >>> round(float(hinge_embedding_loss(x, y, reduction="sum")), 6)
        0.9
    """
    x = check_float_tensor(input, "input")
    y = check_dtype_match(x, target, "input", "target")
    margin = check_number(margin, "margin")
    red = legacy_reduction(size_average, reduce, reduction)
    xb, yb = broadcast_pair(upcast(x), upcast(y), "input", "target")
    return apply_reduction(call("layers.hinge_embedding_loss", xb, yb, margin), red, x.dtype)


class HingeEmbeddingLoss(MarginLoss):
    """Hinge embedding loss Cell, as ``torch.nn.HingeEmbeddingLoss``. See
    :func:`hinge_embedding_loss`.

    Args:
        margin (float): Default: 1.0.
        size_average (bool, optional): deprecated.
        reduce (bool, optional): deprecated.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.

    Shape:
        - input: :math:`(*)`.
        - target: same shape, values 1 or -1.
        - output: scalar, or :math:`(*)` with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import HingeEmbeddingLoss
        >>> float(HingeEmbeddingLoss(margin=2.0)(ms.Tensor([0.5]), ms.Tensor([-1.0])))
        1.5
    """

    def __init__(
        self,
        margin: float = 1.0,
        size_average: Optional[bool] = None,
        reduce: Optional[bool] = None,
        reduction: str = "mean",
    ) -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def construct(self, input: Tensor, target: Tensor) -> Tensor:
        return hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)
