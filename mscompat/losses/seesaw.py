"""Seesaw loss for long-tailed instance segmentation (`Wang et al., 2021
<https://arxiv.org/abs/2008.10032>`_), as MMDetection's ``seesaw_loss.py``."""

from __future__ import annotations

from typing import Dict, Optional, Union

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

from mscompat._checks import (
    check_bool,
    check_float_tensor,
    check_int,
    check_number,
    check_reduction,
    check_tensor,
    is_float_dtype,
)
from mscompat.losses import _ops
from mscompat.losses.accuracy import accuracy
from mscompat.losses.cross_entropy import _ce_elementwise, cross_entropy
from mscompat.losses.utils import (
    AvgFactor,
    _check_avg_factor,
    _sum,
    scalar_like,
    weight_reduce_loss,
)

__all__ = ["SeesawLoss", "seesaw_ce_loss"]


def _seesaw_rows(
    cls_score: Tensor, labels: Tensor, cum_samples: Tensor, p: float, q: float, eps: float
) -> Tensor:
    """Per-row seesaw cross-entropy (``labels`` in range): MMDetection's op sequence and
    dtypes (the float32 ``cum_samples`` and masks make a float16 score float32)."""
    num_classes = cls_score.shape[-1]
    onehot = _ops.onehot(labels, num_classes)
    dtype = cls_score.dtype
    cd = _ops.compute_dtype(dtype)
    x = cls_score.astype(cd)
    weights = ops.ones_like(x)
    w_dtype = dtype
    if p > 0:
        cum = ops.maximum(cum_samples.astype(ms.float32), ops.ones_like(cum_samples))
        ratio = cum.reshape(1, -1) / cum.reshape(-1, 1)
        index = (ratio < 1.0).astype(ms.float32)
        # float32 pow/softmax/log rounded once from float64 (see _ops.in_float64)
        sample_weights = _ops.in_float64(_ops.power, ratio, p) * index + (1 - index)
        mitigation = ops.gather(sample_weights, labels.astype(ms.int64), 0)
        w_dtype = _ops._promote(w_dtype, ms.float32)
        weights = _ops.rd(weights * mitigation.astype(cd), w_dtype)
    if q > 0:
        half = dtype == _ops.HALF
        scores = _ops.rnd(_ops.in_float64(_ops.softmax, ops.stop_gradient(x), 1), half)
        self_scores = ops.gather_elements(scores, 1, labels.astype(ms.int64).reshape(-1, 1))
        floor = ops.full_like(self_scores, scalar_like(eps, self_scores))
        score_matrix = _ops.rnd(scores / ops.maximum(self_scores, floor), half)
        index = (score_matrix > 1.0).astype(cd)
        comp = _ops.rnd(_ops.in_float64(_ops.power, score_matrix, q), half) * index + (1 - index)
        w_dtype = _ops._promote(w_dtype, ms.float32)
        weights = _ops.rd(weights * comp, w_dtype)
    out_dtype = _ops._promote(dtype, w_dtype)
    log_w = _ops.rd(_ops.in_float64(ops.log, weights), w_dtype)
    shifted = _ops.rd(x + log_w * (1 - onehot.astype(cd)), out_dtype).astype(out_dtype)
    return _ce_elementwise(shifted, labels.astype(ms.int64), None, -100)


def _check_seesaw(cls_score: Tensor, labels: Tensor, num_classes: int) -> None:
    if is_float_dtype(labels.dtype) or labels.dtype == ms.bool_:
        raise TypeError(
            f"labels must hold class indices (an integer dtype), but got {labels.dtype}"
        )
    if cls_score.ndim != 2 or labels.shape != cls_score.shape[:1]:
        raise ValueError(
            f"cls_score must have shape (N, C) and labels (N,), but got "
            f"cls_score.shape={cls_score.shape} and labels.shape={labels.shape}"
        )


def seesaw_ce_loss(
    cls_score: Tensor,
    labels: Tensor,
    label_weights: Optional[Tensor],
    cum_samples: Tensor,
    num_classes: int,
    p: float,
    q: float,
    eps: float,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
) -> Tensor:
    """Seesaw cross-entropy, as MMDetection's ``mmdet.models.losses.seesaw_loss.seesaw_ce_loss``.

    The logits of the other classes are shifted by :math:`\\log S_{ij}`, with the mitigation
    factor :math:`M_{ij} = (N_j / N_i)^p` where :math:`N_j < N_i` (cumulative sample counts,
    clamped at 1) and the compensation factor :math:`C_{ij} = (\\sigma_j / \\max(\\sigma_i,
    \\epsilon))^q` where it exceeds 1 (:math:`\\sigma` = softmax of the detached scores):

    .. math::
        \\ell_i = \\operatorname{CE}\\big(x_i + \\log(M_{y_i} C_i)\\,(1 - \\text{onehot}(y_i)),
        \\; y_i\\big)

    then :func:`~mscompat.losses.weight_reduce_loss` with ``label_weights``.

    Args:
        cls_score (Tensor[N, C]): logits of the ``num_classes`` classes.
        labels (Tensor[N]): class indices in ``[0, C)``.
        label_weights (Tensor[N], optional): cast to float32.
        cum_samples (Tensor[C]): cumulative samples per class.
        num_classes (int): ``C``.
        p (float): mitigation exponent (0: off).
        q (float): compensation exponent (0: off).
        eps (float): floor of the own-class score.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): divide the sum by ``avg_factor + eps``.

    Returns:
        Tensor: ``(N,)`` for ``'none'``, else 0-d; float32 for float16 ``cls_score``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import seesaw_ce_loss
        >>> score = ms.Tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]])
        >>> cum = ms.Tensor([100.0, 10.0, 1.0])
        >>> seesaw_ce_loss(score, ms.Tensor([0, 2], ms.int64), None, cum, 3, 0.8, 2.0, 1e-2).shape
        ()
    """
    cls_score = check_float_tensor(cls_score, "cls_score")
    labels = check_tensor(labels, "labels")
    cum_samples = check_tensor(cum_samples, "cum_samples")
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    num_classes = check_int(num_classes, "num_classes")
    p, q, eps = check_number(p, "p"), check_number(q, "q"), check_number(eps, "eps")
    _check_seesaw(cls_score, labels, num_classes)
    if cls_score.shape[-1] != num_classes or cum_samples.shape != (num_classes,):
        raise ValueError(
            f"cls_score must have num_classes={num_classes} columns and cum_samples shape "
            f"({num_classes},), but got {cls_score.shape} and {cum_samples.shape}"
        )
    _ops.check_label_range(
        labels, 0, num_classes, "labels", f"labels: class values must be in [0, {num_classes})"
    )
    loss = _seesaw_rows(cls_score, labels, cum_samples, p, q, eps)
    if label_weights is not None:
        label_weights = check_tensor(label_weights, "label_weights").astype(ms.float32)
    return weight_reduce_loss(loss, label_weights, reduction, avg_factor)


class SeesawLoss(nn.Cell):
    """MMDetection's ``SeesawLoss`` (LVIS): seesaw cross-entropy of the class scores of the
    positives and a softmax cross-entropy of the two objectness scores, each times
    ``loss_weight``. See :func:`seesaw_ce_loss`.

    The cumulative number of samples per class (``cum_samples``, ``num_classes + 1`` entries,
    the last for the background) grows at every call and is kept as a non-trainable
    ``Parameter`` updated with ``ops.assign``, in PyNative and graph mode alike; it is part of
    the Cell's state (``parameters_dict``), as MMDetection's buffer is of its ``state_dict``.

    Args:
        use_sigmoid (bool): must be False. Default: False.
        p (float): mitigation exponent. Default: 0.8.
        q (float): compensation exponent. Default: 2.0.
        num_classes (int): number of classes. Default: 1203 (LVIS).
        eps (float): floor of the own-class score. Default: 1e-2.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.
        return_dict (bool): return ``{'loss_cls_objectness', 'loss_cls_classes'}``, else their
            sum. Default: True.

    Shape:
        - cls_score: :math:`(N, C + 2)` (classes, then objectness).
        - labels: :math:`(N)` in :math:`[0, C]` (:math:`C`: background).
        - output: a dict of two scalars, or a scalar.

    .. note::
        With ``reduction='none'`` the class term has one entry per positive (a data-dependent
        size, PyNative only). With no positive the class term is a zero of the promoted dtype
        (float32 for float16 scores; MMDetection's is of the score's dtype).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import SeesawLoss
        >>> loss_fn = SeesawLoss(num_classes=3, return_dict=False)
        >>> score = ms.Tensor([[2.0, 0.5, -1.0, 1.0, 0.0], [0.1, 0.2, 3.0, 0.0, 1.0]])
        >>> loss_fn(score, ms.Tensor([0, 3], ms.int64)).shape
        ()
        >>> loss_fn.cum_samples.asnumpy().tolist()
        [1.0, 0.0, 0.0, 1.0]
    """

    def __init__(
        self,
        use_sigmoid: bool = False,
        p: float = 0.8,
        q: float = 2.0,
        num_classes: int = 1203,
        eps: float = 1e-2,
        reduction: str = "mean",
        loss_weight: float = 1.0,
        return_dict: bool = True,
    ) -> None:
        super().__init__()
        if use_sigmoid is not False:
            raise ValueError(f"SeesawLoss supports only use_sigmoid=False, got {use_sigmoid!r}")
        self.use_sigmoid = False
        self.p = check_number(p, "p")
        self.q = check_number(q, "q")
        self.num_classes = check_int(num_classes, "num_classes")
        if self.num_classes < 1:
            raise ValueError(f"num_classes must be >= 1, but got {num_classes}")
        self.eps = check_number(eps, "eps")
        self.reduction = reduction
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self.return_dict = check_bool(return_dict, "return_dict")
        self.cum_samples = Parameter(
            Tensor(np.zeros(self.num_classes + 1, np.float32)),
            name="cum_samples",
            requires_grad=False,
        )
        self.custom_cls_channels = True
        self.custom_activation = True
        self.custom_accuracy = True

    def get_cls_channels(self, num_classes: int) -> int:
        """The classifier's channels: ``num_classes + 2``."""
        if num_classes != self.num_classes:
            raise ValueError(f"num_classes must be {self.num_classes}, but got {num_classes}")
        return num_classes + 2

    def get_activation(self, cls_score: Tensor) -> Tensor:
        """Scores ``(N, C + 1)``: class softmax times the objectness, then the background."""
        classes, objectness = cls_score[..., :-2], cls_score[..., -2:]
        score_classes = _ops.softmax(classes, -1)
        score_obj = _ops.softmax(objectness, -1)
        return ops.cat([score_classes * score_obj[..., :1], score_obj[..., 1:]], -1)

    def get_accuracy(self, cls_score: Tensor, labels: Tensor) -> Dict[str, Tensor]:
        """``{'acc_objectness', 'acc_classes'}`` (PyNative: the positives are selected)."""
        pos = (labels < self.num_classes).asnumpy()
        obj_labels = (labels == self.num_classes).astype(ms.int64)
        rows = Tensor(np.nonzero(pos)[0].astype(np.int64))
        classes = ops.gather(cls_score[..., :-2], rows, 0)
        return {
            "acc_objectness": accuracy(cls_score[..., -2:], obj_labels),
            "acc_classes": accuracy(classes, ops.gather(labels, rows, 0)),
        }

    def construct(
        self,
        cls_score: Tensor,
        labels: Tensor,
        label_weights: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
    ) -> Union[Tensor, Dict[str, Tensor]]:
        if reduction_override is not None:
            check_reduction(reduction_override, "reduction_override")
        reduction = self.reduction if reduction_override is None else reduction_override
        check_reduction(reduction)
        _check_avg_factor(avg_factor, reduction)
        cls_score = check_float_tensor(cls_score, "cls_score")
        labels = check_tensor(labels, "labels")
        _check_seesaw(cls_score, labels, self.num_classes)
        c = self.num_classes
        if cls_score.shape[-1] != c + 2:
            raise ValueError(
                f"cls_score must have num_classes + 2 = {c + 2} columns, but got "
                f"cls_score.shape={cls_score.shape}"
            )
        _ops.check_label_range(
            labels,
            0,
            c + 1,
            "labels",
            f"labels: class values must be in [0, {c}] ({c}: background)",
        )
        counts = _ops.onehot(labels, c + 1).astype(ms.float32)
        counts = counts.sum(0) if labels.size else ops.zeros((c + 1,), ms.float32)
        cum = self.cum_samples + counts
        ops.assign(self.cum_samples, cum)
        if label_weights is None:
            weights = ops.ones(labels.shape, ms.float32)
        else:
            weights = check_tensor(label_weights, "label_weights").astype(ms.float32)
        classes, objectness = cls_score[:, :c], cls_score[:, c:]
        pos = labels < c
        safe = ops.where(pos, labels, ops.zeros_like(labels))
        rows = _seesaw_rows(classes, safe, cum[:c], self.p, self.q, self.eps)
        cls_loss = self._reduce_positives(rows, weights, pos, reduction, avg_factor)
        cls_loss = _ops.scale(cls_loss, self.loss_weight)
        obj_labels = (labels == c).astype(ms.int64)
        obj_loss = _ops.scale(
            cross_entropy(objectness, obj_labels, weights, reduction, avg_factor),
            self.loss_weight,
        )
        if self.return_dict:
            return {"loss_cls_objectness": obj_loss, "loss_cls_classes": cls_loss}
        return cls_loss + obj_loss

    def _reduce_positives(
        self, rows: Tensor, weights: Tensor, pos: Tensor, reduction: str, avg_factor: AvgFactor
    ) -> Tensor:
        """MMDetection's reduction over the positive rows only, with static shapes (a zero
        when there is none, as its ``cls_score_classes[pos_inds].sum()``)."""
        weighted = _ops.mul(rows, weights)
        if reduction == "none":
            return ops.masked_select(weighted, pos)
        masked = ops.where(pos, weighted, ops.zeros_like(weighted))
        total = _sum(masked)
        count = _sum(pos.astype(ms.float32))
        if reduction == "sum":
            return total
        if avg_factor is None:
            denom = ops.maximum(count, ops.ones_like(count))  # a 0/0 would poison the gradient
            loss = (
                total.astype(_ops.compute_dtype(total.dtype))
                / denom.astype(_ops.compute_dtype(total.dtype))
            ).astype(total.dtype)
        else:
            loss = weight_reduce_loss(masked, None, "mean", avg_factor)
        return ops.where(count > 0, loss, ops.zeros_like(loss))
