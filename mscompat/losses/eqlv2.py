"""Equalization loss v2 (`Tan et al., 2021 <https://arxiv.org/abs/2012.08548>`_), as
MMDetection's ``EQLV2Loss``.

Mirrors ``mmdet/models/losses/eqlv2_loss.py`` (MMDetection 3.3). MMDetection 3.3 collects the
gradient statistics in ``forward``: after computing the loss it calls ``collect_grad`` with the
analytic gradient of the weighted BCE, ``|sigmoid(x) - t|`` times the weight (the original
EQLv2 code did the same from a backward hook on the logits). Here the statistics ``pos_grad``,
``neg_grad`` and ``pos_neg`` are non-trainable float32 ``Parameter``\\ s of the Cell, updated
with ``assign`` on every call in PyNative and graph mode, at the same point: the weights of a
call use the statistics of the calls before it.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

from mscompat._checks import check_bool, check_float_tensor, check_int, check_number, check_tensor
from mscompat.losses import _ops
from mscompat.losses import _torch_math as tm
from mscompat.losses.utils import _sum

__all__ = ["EQLV2Loss", "eqlv2_loss"]

F16, F32, F64 = ms.float16, ms.float32, ms.float64


def _log_sigmoid(x: Tensor) -> Tensor:
    return ops.minimum(x, ops.zeros_like(x)) - ops.log1p(ops.exp(-ops.abs(x)))


def _bce(pred: Tensor, target: Tensor) -> Tensor:
    """``F.binary_cross_entropy_with_logits`` with a target of ``pred``'s dtype: PyTorch's
    ``(1 - t).mul_(x).sub_(log_sigmoid(x))``, each step rounded in float16."""
    if pred.dtype == F16:
        x, t = pred.astype(F32), target.astype(F32)
        step = ((1 - t).astype(F16).astype(F32) * x).astype(F16).astype(F32)
        return (step - _log_sigmoid(x).astype(F16).astype(F32)).astype(F16)
    return (1 - target) * pred - _log_sigmoid(pred)


def _one_hot(label: Tensor, n_i: int, n_c: int, dtype: Any) -> Tensor:
    """``target[arange(n_i), label] = 1``; a negative label counts from the end, as PyTorch's
    indexing."""
    label = ops.where(label < 0, label + n_c, label)
    cols = ops.arange(n_c, dtype=label.dtype).expand_dims(0)
    return (label.reshape(n_i, 1) == cols).astype(dtype)


def eqlv2_loss(
    cls_score: Tensor,
    label: Tensor,
    pos_grad: Tensor,
    neg_grad: Tensor,
    pos_neg: Tensor,
    mu: float = 0.8,
    alpha: float = 4.0,
    gamma: float = 12.0,
    loss_weight: float = 1.0,
) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """EQLv2 loss and the updated gradient statistics; the function behind :class:`EQLV2Loss`.

    With :math:`r_c` = ``pos_neg`` (accumulated positive over negative gradient of class
    :math:`c`), :math:`f(r) = 1 / (1 + e^{-\\gamma (r - \\mu)})`, the background column's
    :math:`f = 1`, and the one-hot target :math:`t`:

    .. math::
        w^-_c = f(r_c), \\quad w^+_c = 1 + \\alpha (1 - w^-_c), \\quad
        \\ell = \\frac{1}{N} \\sum_{i, c} \\big(w^+_c t_{ic} + w^-_c (1 - t_{ic})\\big)\\,
        \\operatorname{BCE}(x_{ic}, t_{ic})

    then, as MMDetection's ``collect_grad``, with :math:`g = |\\sigma(x) - t|` and the weight
    :math:`w` above (no gradient flows into the statistics):
    ``pos_grad += sum_i g t w``, ``neg_grad += sum_i g (1 - t) w`` (foreground classes),
    ``pos_neg = pos_grad / (neg_grad + 1e-10)``.

    Args:
        cls_score (Tensor[N, C + 1]): logits, the last column the objectness/background.
        label (Tensor[N]): integer class index per row, in ``[-(C+1), C]``.
        pos_grad, neg_grad (Tensor[C]): float32 accumulated gradients.
        pos_neg (Tensor[C]): float32 ratio (100 before the first call).
        mu (float): centre of the mapping. Default: 0.8.
        alpha (float): weight of the positive part. Default: 4.0.
        gamma (float): slope of the mapping. Default: 12.
        loss_weight (float): factor of the loss. Default: 1.0.

    Returns:
        (loss, pos_grad, neg_grad, pos_neg): the 0-d loss (float32 for float16 logits, as
        PyTorch promotes with the float32 statistics; NaN for N = 0, as MMDetection's ``0 / 0``)
        and the three updated float32 statistics.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import eqlv2_loss
        >>> score = ms.Tensor([[2.0, -1.0, 0.5], [0.5, 3.0, -2.0]])
        >>> zeros, start = ms.ops.zeros(2), ms.ops.ones(2) * 100
        >>> loss, pos, neg, ratio = eqlv2_loss(score, ms.Tensor([0, 2]), zeros, zeros, start)
        >>> round(float(loss), 4)
        3.7819
    """
    cls_score = check_float_tensor(cls_score, "cls_score")
    check_number(mu, "mu")
    check_number(alpha, "alpha")
    check_number(gamma, "gamma")
    check_number(loss_weight, "loss_weight")
    label = check_tensor(label, "label")
    if cls_score.ndim != 2:
        raise ValueError(f"cls_score must have shape (N, C), but got {cls_score.shape}")
    n_i, n_c = cls_score.shape
    if label.shape != (n_i,) or label.dtype not in (ms.int32, ms.int64, ms.int16, ms.int8):
        raise ValueError(
            f"label must be an integer Tensor of shape ({n_i},), but got {label.dtype} of "
            f"shape {label.shape}"
        )
    for name, stat in (("pos_grad", pos_grad), ("neg_grad", neg_grad), ("pos_neg", pos_neg)):
        if check_tensor(stat, name).shape != (n_c - 1,):
            raise ValueError(
                f"{name} must have shape ({n_c - 1},) (num_classes = C - 1 for cls_score with "
                f"C = {n_c} columns), but got {stat.shape}"
            )
    # get_weight: the mapping in float32 (the buffers' dtype), then cat with ones of cls_score's
    # the float32 exp rounded once from float64, as PyTorch's (see _ops.in_float64)
    neg_fg = 1 / (1 + _ops.in_float64(ops.exp, -gamma * (pos_neg - mu)))
    w_dtype = tm._promote(F32, cls_score.dtype)
    neg_w = ops.concat([neg_fg.astype(w_dtype), ops.ones(1, w_dtype)]).reshape(1, n_c)
    pos_w = tm.add(1.0, tm.mul(alpha, tm.sub(1.0, neg_w)))
    if n_i == 0:
        nan = ops.fill(tm._promote(w_dtype, cls_score.dtype), (), float("nan"))
        return tm.scale(nan, loss_weight), pos_grad, neg_grad, pos_grad / (neg_grad + 1e-10)
    target = _one_hot(label, n_i, n_c, cls_score.dtype)
    one_minus_t = tm.sub(1.0, target)
    weight = tm.add(tm.mul(pos_w, target), tm.mul(neg_w, one_minus_t))
    loss = _sum(tm.mul(_bce(cls_score, target), weight))
    loss = tm.div(loss, float(n_i))
    # collect_grad(cls_score.detach(), target.detach(), weight.detach())
    prob = tm.ew(ops.sigmoid, ops.stop_gradient(cls_score))
    grad = tm.ew(ops.abs, tm.add(tm.mul(target, tm.sub(prob, 1.0)), tm.mul(one_minus_t, prob)))
    w = ops.stop_gradient(weight)
    pos = _sum_rows(tm.mul(tm.mul(grad, target), w))[:-1]
    neg = _sum_rows(tm.mul(tm.mul(grad, one_minus_t), w))[:-1]
    new_pos = (pos_grad.astype(pos.dtype) + pos).astype(F32)  # in place into float32 buffers
    new_neg = (neg_grad.astype(neg.dtype) + neg).astype(F32)
    new_ratio = new_pos / (new_neg + 1e-10)
    return tm.scale(loss, loss_weight), new_pos, new_neg, new_ratio


def _sum_rows(x: Tensor) -> Tensor:
    """``torch.sum(x, dim=0)``, float16 accumulated in float32."""
    if x.dtype == F16:
        return x.astype(F32).sum(0).astype(F16)
    return x.sum(0)


class EQLV2Loss(nn.Cell):
    """EQLv2 loss Cell, MMDetection's ``EQLV2Loss``. See :func:`eqlv2_loss`.

    ``forward(cls_score, label, weight=None, avg_factor=None, reduction_override=None)``:
    ``weight``, ``avg_factor`` and ``reduction_override`` are accepted and ignored, as in
    MMDetection (the loss is always the weighted sum over ``N``). The statistics are the
    float32 Parameters ``pos_grad``, ``neg_grad`` (zeros) and ``pos_neg`` (100), with
    ``requires_grad=False``, updated by every call.

    Args:
        use_sigmoid (bool): ignored (always sigmoid, as MMDetection). Default: True.
        reduction (str): stored, unused (MMDetection). Default: ``'mean'``.
        class_weight (Tensor, optional): stored, unused (MMDetection).
        loss_weight (float): factor of the loss. Default: 1.0.
        num_classes (int): foreground classes :math:`C`; ``cls_score`` has :math:`C + 1`
            columns. Default: 1203 (LVIS v1).
        use_distributed (bool): all-reduce the statistics; not supported (raises
            ``NotImplementedError`` when True). Default: False.
        mu (float): centre of the mapping. Default: 0.8.
        alpha (float): weight of the positive part. Default: 4.0.
        gamma (int): slope of the mapping. Default: 12.
        vis_grad (bool): stored, unused (MMDetection). Default: False.
        test_with_obj (bool): :meth:`get_activation` scales the foreground scores by
            ``1 - background``. Default: True.

    Shape:
        - cls_score: :math:`(N, C + 1)`; label: :math:`(N,)` integers.
        - output: scalar.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import EQLV2Loss
        >>> loss_fn = EQLV2Loss(num_classes=2)
        >>> score = ms.Tensor([[2.0, -1.0, 0.5], [0.5, 3.0, -2.0]])
        >>> round(float(loss_fn(score, ms.Tensor([0, 2]))), 4)
        3.7819
        >>> loss_fn.pos_grad.asnumpy().round(4)
        array([0.1192, 0.    ], dtype=float32)
    """

    def __init__(
        self,
        use_sigmoid: bool = True,
        reduction: str = "mean",
        class_weight: Optional[Tensor] = None,
        loss_weight: float = 1.0,
        num_classes: int = 1203,
        use_distributed: bool = False,
        mu: float = 0.8,
        alpha: float = 4.0,
        gamma: int = 12,
        vis_grad: bool = False,
        test_with_obj: bool = True,
    ) -> None:
        super().__init__()
        if check_int(num_classes, "num_classes") < 1:
            raise ValueError(f"num_classes must be >= 1, but got {num_classes}")
        if check_bool(use_distributed, "use_distributed"):
            raise NotImplementedError(
                "EQLV2Loss(use_distributed=True) all-reduces the statistics across devices; "
                "mscompat does not support it"
            )
        self.use_sigmoid = True
        self.reduction = reduction
        self.class_weight = class_weight
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self.num_classes = int(num_classes)
        self.group = True
        self.vis_grad = vis_grad
        self.mu = check_number(mu, "mu")
        self.alpha = check_number(alpha, "alpha")
        self.gamma = check_number(gamma, "gamma")
        self.use_distributed = False
        self.test_with_obj = check_bool(test_with_obj, "test_with_obj")
        zeros = np.zeros(self.num_classes, np.float32)
        self.pos_grad = Parameter(Tensor(zeros), name="pos_grad", requires_grad=False)
        self.neg_grad = Parameter(Tensor(zeros.copy()), name="neg_grad", requires_grad=False)
        # 100 at the start: every weight is 1 until statistics accumulate (MMDetection)
        self.pos_neg = Parameter(
            Tensor(np.full(self.num_classes, 100, np.float32)), name="pos_neg", requires_grad=False
        )

    def construct(
        self,
        cls_score: Tensor,
        label: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: Any = None,
        reduction_override: Optional[str] = None,
    ) -> Tensor:
        loss, pos, neg, ratio = eqlv2_loss(
            cls_score,
            label,
            self.pos_grad,
            self.neg_grad,
            self.pos_neg,
            self.mu,
            self.alpha,
            self.gamma,
            self.loss_weight,
        )
        loss = ops.depend(loss, ops.assign(self.pos_grad, pos))
        loss = ops.depend(loss, ops.assign(self.neg_grad, neg))
        return ops.depend(loss, ops.assign(self.pos_neg, ratio))

    def get_channel_num(self, num_classes: int) -> int:
        """``num_classes + 1`` (MMDetection)."""
        return num_classes + 1

    def get_activation(self, pred: Tensor) -> Tensor:
        """Sigmoid scores; with ``test_with_obj`` the foreground columns times
        ``1 - background`` (MMDetection's ``get_activation``)."""
        prob = ops.sigmoid(pred)
        if not self.test_with_obj:
            return prob
        bg = prob[:, -1:]
        return ops.concat([prob[:, :-1] * (1 - bg), bg], axis=1)
