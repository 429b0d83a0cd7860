"""MMDetection's cross-entropy losses: ``cross_entropy``, ``binary_cross_entropy``,
``mask_cross_entropy`` and the ``CrossEntropyLoss`` Cell (``cross_entropy_loss.py``)."""

from __future__ import annotations

import warnings
from typing import Any, Optional, Sequence, Tuple, Union

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import (
    check_bool,
    check_float_tensor,
    check_int,
    check_number,
    check_reduction,
    check_tensor,
    is_float_dtype,
)
from mscompat.custom_ops import cross_entropy as _kernels
from mscompat.custom_ops.registry import (
    TensorSpec,
    call,
    chosen_backend,
    device_target,
    register,
)
from mscompat.losses import _ops
from mscompat.losses.utils import (
    AvgFactor,
    _avg_factor_div,
    _check_avg_factor,
    _sum,
    scalar_like,
    weight_reduce_loss,
)

__all__ = ["CrossEntropyLoss", "binary_cross_entropy", "cross_entropy", "mask_cross_entropy"]

ClassWeight = Union[Tensor, Sequence[float], None]


def _class_weight(class_weight: ClassWeight, pred: Tensor, size: int) -> Optional[Tensor]:
    """``class_weight`` as a Tensor of ``pred``'s dtype (MMDetection's Cell makes it with
    ``cls_score.new_tensor``), of ``size`` entries."""
    if class_weight is None:
        return None
    if isinstance(class_weight, Tensor):
        w = class_weight
    elif isinstance(class_weight, (list, tuple)):
        w = Tensor([check_number(v, "class_weight") for v in class_weight], pred.dtype)
    else:
        got = type(class_weight).__name__
        raise TypeError(f"class_weight must be a Tensor, a list of floats or None, but got {got}")
    if w.shape != (size,):
        raise ValueError(
            f"class_weight must have shape ({size},) (one per class), but got {w.shape}"
        )
    return w.astype(pred.dtype)


def _check_int_label(label: Any, name: str = "label") -> Tensor:
    label = check_tensor(label, name)
    if is_float_dtype(label.dtype) or label.dtype == ms.bool_:
        raise TypeError(f"{name} must be an integer Tensor of class indices, but got {label.dtype}")
    return label


def _ce_elementwise(
    pred: Tensor, label: Tensor, class_weight: Optional[Tensor], ignore_index: int
) -> Tensor:
    """``F.cross_entropy(pred, label, class_weight, reduction='none', ignore_index)``."""
    x, half = _ops.widen(pred)
    valid = label != ignore_index
    safe = ops.where(valid, label, ops.zeros_like(label)).astype(ms.int64)
    logp = _ops.rnd(_ops.log_softmax(x, 1), half)
    picked = ops.gather_elements(logp, 1, safe.expand_dims(1)).squeeze(1)
    loss = -picked
    if class_weight is not None:
        w, _ = _ops.widen(class_weight)
        loss = _ops.rnd(loss * ops.gather(w, safe, 0), half)
    loss = ops.where(valid, loss, ops.zeros_like(loss))
    return _ops.narrow(loss, half)


register("losses.cross_entropy", "composite", note="MindSpore ops, log_softmax + gather")(
    _ce_elementwise
)


def _ce_kernel_supports(
    pred: TensorSpec, label: TensorSpec, class_weight: Optional[TensorSpec], ignore_index: int
) -> Optional[str]:
    if pred.ndim != 2:
        return f"{pred.ndim}-D pred is not supported by the kernel ((N, C) only)"
    return _ops.kernel_dtype(pred)


@_kernels.LIBRARY.backend(
    "losses.cross_entropy",
    "fused C++ log-softmax + pick, forward and backward",
    _ce_kernel_supports,
)
def _ce_aot(
    pred: Tensor, label: Tensor, class_weight: Optional[Tensor], ignore_index: int
) -> Tensor:
    w, ignore = _kernel_config(pred, class_weight, ignore_index)
    return _kernels.CROSS_ENTROPY[device_target()](pred, label.astype(ms.int64), w, ignore)


def _kernel_config(
    pred: Tensor, class_weight: Optional[Tensor], ignore_index: int
) -> Tuple[Tensor, Tensor]:
    """The cross-entropy kernels' class weight (ones for none) and ignore index Tensors."""
    c = pred.shape[1]
    w = ops.ones((c,), pred.dtype) if class_weight is None else class_weight.astype(pred.dtype)
    return w, Tensor([ignore_index], ms.int64)


def _ce_aot_reduced(
    pred: Tensor,
    label: Tensor,
    class_weight: Optional[Tensor],
    ignore_index: int,
    reduction: str,
    avg_factor: AvgFactor,
    message: str,
) -> Tensor:
    """MMDetection's ``weight_reduce_loss`` of the ``aot`` backend's loss without a weight: the
    kernel sums the rows (and counts the labels out of range, read here for the error), then
    ``'mean'`` divides by ``N`` or ``avg_factor + eps``; no per-row loss is written."""
    w, ignore = _kernel_config(pred, class_weight, ignore_index)
    kernel = _kernels.CROSS_ENTROPY_REDUCE[device_target()]
    total, bad = kernel(pred, label.astype(ms.int64), w, ignore, Tensor([0], ms.int64))
    if bad[0] > 0:  # read, in graph mode too, as check_label_range
        raise ValueError(message)
    if reduction == "sum":
        return total
    if avg_factor is not None:
        return _avg_factor_div(total, avg_factor)
    return total / scalar_like(float(label.size), total)


def cross_entropy(
    pred: Tensor,
    label: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    class_weight: ClassWeight = None,
    ignore_index: Optional[int] = -100,
    avg_non_ignore: bool = False,
) -> Tensor:
    """Softmax cross-entropy, as MMDetection's ``mmdet.models.losses.cross_entropy``.

    .. math::
        \\ell_i = -w_{y_i} \\log \\operatorname{softmax}(x_i)_{y_i}, \\qquad
        \\ell_i = 0 \\text{ where } y_i = \\text{ignore\\_index}

    then :func:`~mscompat.losses.weight_reduce_loss`: ``'mean'`` divides by the number of all
    elements, ignored ones included, unless ``avg_non_ignore`` (then by the non-ignored count
    plus eps, as MMDetection's ``avg_factor = label.numel() - ignored``).

    Args:
        pred (Tensor[N, C] or Tensor[N, C, d1, ...]): logits, float16/32/64.
        label (Tensor[N] or Tensor[N, d1, ...]): class indices, an integer dtype.
        weight (Tensor, optional): elementwise weight of the loss's shape (cast to float32,
            as MMDetection's ``weight.float()``: a float16 ``pred`` gives a float32 loss).
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): divide the sum by ``avg_factor + eps``.
        class_weight (Tensor[C] | list[float], optional): weight of each class.
        ignore_index (int | None): label to ignore; None means -100. Default: -100.
        avg_non_ignore (bool): average over the non-ignored labels only. Default: False.

    Returns:
        Tensor: the loss of ``label``'s shape for ``'none'``, else 0-d.

    Raises:
        TypeError: ``pred`` not floating, ``label`` not integer.
        ValueError: shapes that do not match, a label outside ``[0, C)`` that is not
            ``ignore_index`` (PyTorch: "Target ... is out of bounds"), invalid ``reduction``,
            ``avg_factor`` with ``'sum'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import cross_entropy
        >>> pred = ms.Tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]])
        >>> label = ms.Tensor([0, 2], ms.int64)
        >>> round(float(cross_entropy(pred, label)), 6)
        0.175456
        >>> cross_entropy(pred, ms.Tensor([0, -100], ms.int64), reduction="none").shape
        (2,)
    """
    pred = check_float_tensor(pred, "pred")
    label = _check_int_label(label)
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    check_bool(avg_non_ignore, "avg_non_ignore")
    ignore_index = -100 if ignore_index is None else check_int(ignore_index, "ignore_index")
    if pred.ndim < 2 or label.shape != pred.shape[:1] + pred.shape[2:]:
        raise ValueError(
            "pred must have shape (N, C, *) and label (N, *), but got "
            f"pred.shape={pred.shape} and label.shape={label.shape}"
        )
    num_classes = pred.shape[1]
    cw = _class_weight(class_weight, pred, num_classes)
    message = f"label: each target must be in [0, {num_classes}) or ignore_index"
    fusable = weight is None and reduction != "none" and not (avg_non_ignore and avg_factor is None)
    if fusable and chosen_backend("losses.cross_entropy", pred, label, cw, ignore_index) == "aot":
        return _ce_aot_reduced(pred, label, cw, ignore_index, reduction, avg_factor, message)
    label = _ops.check_label_range(label, 0, num_classes, "label", message, ignore=ignore_index)
    if weight is not None:
        weight = check_tensor(weight, "weight").astype(ms.float32)
    loss = call("losses.cross_entropy", pred, label, cw, ignore_index)
    if avg_factor is None and avg_non_ignore and reduction == "mean":
        count = _sum((label != ignore_index).astype(ms.float32))
        if weight is not None:
            loss = weight_reduce_loss(loss, weight, "none")
        return _ops.div_count(_sum(loss), count)
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


def _expand_onehot_labels(
    labels: Tensor, label_weights: Optional[Tensor], channels: int, ignore_index: int
) -> Any:
    """MMDetection's ``_expand_onehot_labels``: (N,) indices -> (N, C) one-hot of the labels'
    dtype, the weights repeated per class and masked, and the float32 valid mask."""
    valid = ops.logical_and(labels >= 0, labels != ignore_index)
    bins = ops.logical_and(_ops.onehot(labels, channels), valid.expand_dims(1))
    bin_labels = bins.astype(labels.dtype)
    valid_mask = ops.broadcast_to(
        valid.astype(ms.float32).reshape(-1, 1), (labels.shape[0], channels)
    )
    if label_weights is None:
        bin_weights = valid_mask
    else:
        repeated = ops.broadcast_to(label_weights.reshape(-1, 1), (labels.shape[0], channels))
        # in-place ``*=``: the weights keep their dtype
        bin_weights = _ops.mul(repeated, valid_mask).astype(label_weights.dtype)
    return bin_labels, bin_weights, valid_mask


def binary_cross_entropy(
    pred: Tensor,
    label: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    class_weight: ClassWeight = None,
    ignore_index: Optional[int] = -100,
    avg_non_ignore: bool = False,
) -> Tensor:
    """Sigmoid (binary) cross-entropy, as MMDetection's
    ``mmdet.models.losses.binary_cross_entropy``.

    With ``label`` of one dim less than ``pred`` (class indices), the labels are expanded to
    one-hot over ``pred``'s last dim (indices outside ``[0, C)`` give an all-zero row; negative
    ones and ``ignore_index`` get weight 0). Otherwise ``label`` is a (soft) target of
    ``pred``'s shape and elements with ``label < 0`` or ``== ignore_index`` get weight 0.

    .. math::
        \\ell = w \\big((1 - t)\\,x - (1 + (p_c - 1)\\,t) \\log\\sigma(x)\\big)

    with :math:`p_c` = ``class_weight`` (PyTorch's ``pos_weight``), then
    :func:`~mscompat.losses.weight_reduce_loss`.

    Args:
        pred (Tensor[N, C] or Tensor[N]): logits, float16/32/64.
        label (Tensor[N] or Tensor of ``pred``'s shape): class indices (integer) or targets.
        weight (Tensor, optional): sample-wise weight, (N,) with index labels.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        avg_factor (float | Tensor, optional): divide the sum by ``avg_factor + eps``.
        class_weight (Tensor[C] | list[float], optional): ``pos_weight`` of each class.
        ignore_index (int | None): label to ignore; None means -100. Default: -100.
        avg_non_ignore (bool): average over the valid elements only. Default: False.

    Returns:
        Tensor: float32 (MMDetection casts the labels with ``label.float()``, and PyTorch's
        loss takes the target's dtype) of ``pred``'s shape for ``'none'``, else 0-d.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import binary_cross_entropy
        >>> pred = ms.Tensor([[2.0, -1.0, 0.5], [0.3, 1.0, -2.0]])
        >>> label = ms.Tensor([1, 3], ms.int64)  # 3: background, no positive class
        >>> round(float(binary_cross_entropy(pred, label)), 6)
        1.118135
    """
    pred = check_float_tensor(pred, "pred")
    label = check_tensor(label, "label")
    check_reduction(reduction)
    _check_avg_factor(avg_factor, reduction)
    check_bool(avg_non_ignore, "avg_non_ignore")
    ignore_index = -100 if ignore_index is None else check_int(ignore_index, "ignore_index")
    if weight is not None:
        weight = check_tensor(weight, "weight")
    if pred.ndim != label.ndim:
        label = _check_int_label(label)
        if pred.ndim != 2 or label.shape != pred.shape[:1]:
            raise ValueError(
                "with class-index labels pred must have shape (N, C) and label (N,), but got "
                f"pred.shape={pred.shape} and label.shape={label.shape}"
            )
        if weight is not None and weight.size != label.shape[0]:
            raise ValueError(
                f"weight must have N={label.shape[0]} elements with class-index labels, "
                f"but got weight.shape={weight.shape}"
            )
        label, weight, valid_mask = _expand_onehot_labels(
            label, weight, pred.shape[-1], ignore_index
        )
    else:
        if label.shape != pred.shape:
            raise ValueError(
                "label must have the same shape as pred (or one dim less), but got "
                f"pred.shape={pred.shape} and label.shape={label.shape}"
            )
        valid_mask = ops.logical_and(label >= 0, label != ignore_index).astype(ms.float32)
        weight = valid_mask if weight is None else _ops.mul(weight, valid_mask)
    cw = _class_weight(class_weight, pred, pred.shape[-1] if pred.ndim else 1)
    weight = weight.astype(ms.float32)
    loss = _ops.bce_logits_mixed(pred, label.astype(ms.float32), cw)
    if avg_factor is None and avg_non_ignore and reduction == "mean":
        return _ops.div_count(_sum(_ops.mul(loss, weight)), _sum(valid_mask))
    return weight_reduce_loss(loss, weight, reduction, avg_factor)


def mask_cross_entropy(
    pred: Tensor,
    target: Tensor,
    label: Tensor,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    class_weight: Optional[Tensor] = None,
    ignore_index: Optional[int] = None,
) -> Tensor:
    """Binary cross-entropy of each RoI's mask of its class, as MMDetection's
    ``mmdet.models.losses.mask_cross_entropy`` (Mask R-CNN's mask head).

    .. math::
        \\ell = \\operatorname{mean}\\big(\\operatorname{BCEWithLogits}
        (x_{i, y_i}, t_i)\\big)

    Args:
        pred (Tensor[N, C, H, W]): mask logits per class.
        target (Tensor[N, H, W]): mask targets in [0, 1].
        label (Tensor[N]): the class of each RoI (integer).
        reduction (str): only ``'mean'`` (MMDetection's reserved argument).
        avg_factor: only None.
        class_weight (Tensor, optional): elementwise ``weight`` of the BCE, broadcast to
            (N, H, W).
        ignore_index: only None ("BCE loss does not support ignore_index").

    Returns:
        Tensor[1]: the mean loss, ``pred``'s dtype.

    Example:
        >>> import mindspore as ms
        >>> from mindspore import ops
        >>> from mscompat.losses import mask_cross_entropy
        >>> pred = ops.zeros((2, 3, 4, 4), ms.float32)
        >>> target = ops.ones((2, 4, 4), ms.float32)
        >>> loss = mask_cross_entropy(pred, target, ms.Tensor([0, 2], ms.int64))
        >>> loss.shape, round(float(loss[0]), 6)
        ((1,), 0.693147)
    """
    pred = check_float_tensor(pred, "pred")
    target = check_tensor(target, "target")
    label = _check_int_label(label)
    if ignore_index is not None:
        raise ValueError(f"BCE loss does not support ignore_index, but got {ignore_index!r}")
    if reduction != "mean" or avg_factor is not None:
        raise ValueError(
            "mask_cross_entropy supports only reduction='mean' and avg_factor=None, but got "
            f"reduction={reduction!r}, avg_factor={avg_factor!r}"
        )
    if pred.ndim < 2 or label.shape != pred.shape[:1]:
        raise ValueError(
            f"pred must have shape (N, C, *) and label (N,), but got pred.shape={pred.shape} "
            f"and label.shape={label.shape}"
        )
    sliced_shape = pred.shape[:1] + pred.shape[2:]
    if len(sliced_shape) > 1 and sliced_shape[1] == 1:
        sliced_shape = sliced_shape[:1] + sliced_shape[2:]  # MMDetection's squeeze(1)
    if target.shape != sliced_shape:
        raise ValueError(
            f"target must have shape {sliced_shape} (pred without its class dim), but got "
            f"target.shape={target.shape}"
        )
    _ops.check_label_range(
        label, 0, pred.shape[1], "label", f"label: each class must be in [0, {pred.shape[1]})"
    )
    idx = label.astype(ms.int64).reshape((-1, 1) + (1,) * (pred.ndim - 2))
    idx = ops.broadcast_to(idx, (pred.shape[0], 1) + pred.shape[2:])
    sliced = ops.gather_elements(pred, 1, idx).reshape(sliced_shape)
    if target.dtype != pred.dtype:
        raise TypeError(
            f"target must have pred's dtype {pred.dtype} (PyTorch's binary_cross_entropy_with_"
            f"logits), but got {target.dtype}"
        )
    loss = _ops.bce_logits_mixed(sliced, target)
    if class_weight is not None:
        loss = _ops.mul(loss, check_tensor(class_weight, "class_weight"))
    return weight_reduce_loss(loss, None, "mean").reshape(1)


class CrossEntropyLoss(nn.Cell):
    """MMDetection's ``CrossEntropyLoss`` (``mmdet.models.losses.CrossEntropyLoss``).
    See :func:`cross_entropy`.

    Calls :func:`binary_cross_entropy` with ``use_sigmoid``, :func:`mask_cross_entropy` with
    ``use_mask``, else :func:`cross_entropy`, and scales by ``loss_weight``.

    Args:
        use_sigmoid (bool): sigmoid (binary) cross-entropy. Default: False.
        use_mask (bool): mask cross-entropy; not with ``use_sigmoid``. Default: False.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        class_weight (list[float], optional): weight of each class (``pred``'s dtype).
        ignore_index (int, optional): label to ignore (None: -100). Default: None.
        loss_weight (float): factor of the loss. Default: 1.0.
        avg_non_ignore (bool): average over the non-ignored labels. Default: False.

    Shape:
        - cls_score: :math:`(N, C)` (also :math:`(N, C, *)` for softmax).
        - label: :math:`(N)` class indices, or targets of ``cls_score``'s shape (sigmoid);
          with ``use_mask``, the mask targets :math:`(N, H, W)` and ``weight`` the RoI labels.
        - output: scalar, or per element with ``'none'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import CrossEntropyLoss
        >>> loss_fn = CrossEntropyLoss(loss_weight=2.0)
        >>> pred = ms.Tensor([[2.0, 0.5, -1.0], [0.1, 0.2, 3.0]])
        >>> round(float(loss_fn(pred, ms.Tensor([0, 2], ms.int64))), 6)
        0.350913
    """

    def __init__(
        self,
        use_sigmoid: bool = False,
        use_mask: bool = False,
        reduction: str = "mean",
        class_weight: Optional[Sequence[float]] = None,
        ignore_index: Optional[int] = None,
        loss_weight: float = 1.0,
        avg_non_ignore: bool = False,
    ) -> None:
        super().__init__()
        check_bool(use_sigmoid, "use_sigmoid")
        check_bool(use_mask, "use_mask")
        if use_sigmoid and use_mask:
            raise ValueError("use_sigmoid and use_mask can not both be True")
        self.use_sigmoid = use_sigmoid
        self.use_mask = use_mask
        self.reduction = reduction
        self.loss_weight = check_number(loss_weight, "loss_weight")
        self.class_weight = (
            None
            if class_weight is None
            else [check_number(v, "class_weight") for v in class_weight]
        )
        self.ignore_index = (
            None if ignore_index is None else check_int(ignore_index, "ignore_index")
        )
        self.avg_non_ignore = check_bool(avg_non_ignore, "avg_non_ignore")
        if ignore_index is not None and not avg_non_ignore and reduction == "mean":
            warnings.warn(
                "Default ``avg_non_ignore`` is False, if you would like to ignore the certain "
                "label and average loss over non-ignore labels, which is the same with PyTorch "
                "official cross_entropy, set ``avg_non_ignore=True``.",
                stacklevel=2,
            )

    def construct(
        self,
        cls_score: Tensor,
        label: Tensor,
        weight: Optional[Tensor] = None,
        avg_factor: AvgFactor = None,
        reduction_override: Optional[str] = None,
        ignore_index: Optional[int] = None,
    ) -> Tensor:
        if reduction_override is not None:
            check_reduction(reduction_override, "reduction_override")
        reduction = self.reduction if reduction_override is None else reduction_override
        ignore = self.ignore_index if ignore_index is None else ignore_index
        if self.use_mask:
            loss = mask_cross_entropy(
                cls_score, label, weight, reduction, avg_factor, self._cw(cls_score), ignore
            )
        elif self.use_sigmoid:
            loss = binary_cross_entropy(
                cls_score,
                label,
                weight,
                reduction,
                avg_factor,
                self._cw(cls_score),
                ignore,
                self.avg_non_ignore,
            )
        else:
            loss = cross_entropy(
                cls_score,
                label,
                weight,
                reduction,
                avg_factor,
                self._cw(cls_score),
                ignore,
                self.avg_non_ignore,
            )
        return _ops.scale(loss, self.loss_weight)

    def _cw(self, cls_score: Tensor) -> Optional[Tensor]:
        if self.class_weight is None:
            return None
        return Tensor(self.class_weight, cls_score.dtype)
