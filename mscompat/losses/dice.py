"""Dice loss (`V-Net <https://arxiv.org/abs/1606.04797>`_), as MMDetection's ``dice_loss.py``."""

from __future__ import annotations

from typing import Optional

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import (
    check_bool,
    check_float_tensor,
    check_number,
    check_reduction,
    check_tensor,
)
from mscompat.losses import _ops
from mscompat.losses.utils import AvgFactor, _check_avg_factor, scalar_like, weight_reduce_loss

__all__ = ["DiceLoss", "dice_loss"]


def _rowsum(x: Tensor) -> Tensor:
    if x.shape[1] == 0:
        return ops.zeros(x.shape[:1], x.dtype)
    return x.sum(1)


def dice_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    eps: float = 1e-3,
    reduction: str = "mean",
    naive_dice: bool = False,
    avg_factor: AvgFactor = None,
) -> Tensor:
    """Dice loss per sample, as MMDetection's ``mmdet.models.losses.dice_loss``.

    With :math:`a = \\sum p t`, per sample (all dims but the first flattened):

    .. math::
        \\ell = 1 - \\frac{2a}{\\sum p^2 + \\epsilon + \\sum t^2 + \\epsilon}
        \\quad\\text{or, with naive\\_dice,}\\quad
        \\ell = 1 - \\frac{2a + \\epsilon}{\\sum p + \\sum t + \\epsilon}

    then :func:`~mscompat.losses.weight_reduce_loss`.

    Args:
        pred (Tensor[N, ...]): probabilities (or any scores), float16/32/64.
        target (Tensor[N, ...]): targets, ``pred``'s number of elements per sample (cast to
            float32, as MMDetection's ``target.float()``: a float16 ``pred`` gives float32).
        weight (Tensor[N], optional): per-sample weight.
        eps (float): smoothing term. Default: 1e-3.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        naive_dice (bool): the V-Net form (False) or the naive one (True). Default: False.
        avg_factor (float | Tensor, optional): divide the sum by ``avg_factor + eps``.

    Returns:
        Tensor: ``(N,)`` for ``'none'``, else 0-d.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import dice_loss
        >>> pred = ms.Tensor([[0.9, 0.1, 0.8], [0.2, 0.7, 0.1]])
        >>> target = ms.Tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
        >>> dice_loss(pred, target, reduction="none").shape
        (2,)
    """
    pred = check_float_tensor(pred, "pred")
    target = check_tensor(target, "target")
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    check_number(eps, "eps")
    check_bool(naive_dice, "naive_dice")
    if (
        pred.ndim < 1
        or target.ndim < 1
        or pred.shape[0] != target.shape[0]
        or (pred.size != target.size)
    ):
        raise ValueError(
            "pred and target must have the same number of samples and elements, but got "
            f"pred.shape={pred.shape} and target.shape={target.shape}"
        )
    n = pred.shape[0]
    if weight is not None:
        weight = check_tensor(weight, "weight")
        if weight.ndim != 1 or weight.shape[0] != n:
            raise ValueError(
                f"weight must have shape (N,)=({n},), but got weight.shape={weight.shape}"
            )
    cd = _ops.compute_dtype(pred.dtype)
    out = _ops._promote(pred.dtype, ms.float32)
    x = pred.reshape(n, -1).astype(cd)
    # the target side is float32 in MMDetection (``target.float()``) whatever pred's dtype: its
    # sums are float32 ops, and its two gradient contributions meet (and round) in float32
    t32 = target.reshape(n, -1).astype(ms.float32)
    e = scalar_like(float(eps), x)
    a = _rowsum(_ops.rd(x * t32.astype(cd), out))
    if naive_dice:
        b = _ops.rd(_rowsum(x), pred.dtype)
        c = _rowsum(t32).astype(cd)
        d = (2 * a + e) / (b + c + e)
    else:
        b = _ops.rd(_rowsum(_ops.rd(x * x, pred.dtype)), pred.dtype)
        b = _ops.rd(b + e, pred.dtype)
        c = (_rowsum(t32 * t32) + scalar_like(float(eps), t32)).astype(cd)
        d = (2 * a) / (b + c)
    loss = (1 - d).astype(out)
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


class DiceLoss(nn.Cell):
    """MMDetection's ``DiceLoss``. See :func:`dice_loss`.

    The loss of ``sigmoid(pred)`` (``activate``) or of
    ``pred``, times ``loss_weight``.

    Args:
        use_sigmoid (bool): activate with a sigmoid; with ``activate``, False is not supported
            (MMDetection raises ``NotImplementedError``). Default: True.
        activate (bool): apply the activation to ``pred``. Default: True.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        naive_dice (bool): the naive dice form. Default: False.
        loss_weight (float): factor of the loss. Default: 1.0.
        eps (float): smoothing term. Default: 1e-3.

    Shape:
        - pred: :math:`(N, *)` logits (or probabilities without ``activate``).
        - target: :math:`(N, *)`; weight: :math:`(N)`; output: scalar or :math:`(N)`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import DiceLoss
        >>> pred = ms.Tensor([[2.0, -1.0, 1.5], [-0.5, 1.0, -2.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])
        >>> DiceLoss()(pred, target).shape
        ()
    """

    def __init__(
        self,
        use_sigmoid: bool = True,
        activate: bool = True,
        reduction: str = "mean",
        naive_dice: bool = False,
        loss_weight: float = 1.0,
        eps: float = 1e-3,
    ) -> None:
        super().__init__()
        self.use_sigmoid = check_bool(use_sigmoid, "use_sigmoid")
        self.activate = check_bool(activate, "activate")
        self.reduction = reduction
        self.naive_dice = check_bool(naive_dice, "naive_dice")
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self.eps = check_number(eps, "eps")

    def construct(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor] = None,
        reduction_override: Optional[str] = None,
        avg_factor: AvgFactor = None,
    ) -> Tensor:
        if reduction_override is not None:
            check_reduction(reduction_override, "reduction_override")
        reduction = self.reduction if reduction_override is None else reduction_override
        pred = check_float_tensor(pred, "pred")
        if self.activate:
            if not self.use_sigmoid:
                raise NotImplementedError("DiceLoss with activate=True needs use_sigmoid=True")
            x, half = _ops.widen(pred)
            pred = _ops.narrow(_ops.rnd(ops.sigmoid(x), half), half)
        loss = dice_loss(pred, target, weight, self.eps, reduction, self.naive_dice, avg_factor)
        return _ops.scale(loss, self.loss_weight)
