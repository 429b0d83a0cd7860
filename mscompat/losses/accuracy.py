"""Classification accuracy metric, as MMDetection's ``accuracy.py`` (no gradient)."""

from __future__ import annotations

from typing import List, Optional, Tuple, Union

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import check_float_tensor, check_number, check_tensor, is_float_dtype, is_int

__all__ = ["Accuracy", "accuracy"]

TopK = Union[int, Tuple[int, ...]]


def _check_topk(topk: TopK) -> Tuple[Tuple[int, ...], bool]:
    if is_int(topk):
        ks: Tuple[int, ...] = (int(topk),)  # type: ignore[arg-type]
        single = True
    elif isinstance(topk, tuple) and topk and all(is_int(k) for k in topk):
        ks, single = tuple(int(k) for k in topk), False
    else:
        raise TypeError(f"topk must be an int or a non-empty tuple of ints, but got {topk!r}")
    for k in ks:
        if k < 1:
            raise ValueError(f"topk values must be >= 1, but got {topk!r}")
    return ks, single


def accuracy(
    pred: Tensor, target: Tensor, topk: TopK = 1, thresh: Optional[float] = None
) -> Union[Tensor, List[Tensor]]:
    """Top-k accuracy in percent, as MMDetection's ``mmdet.models.losses.accuracy``.

    .. math::
        \\text{acc}_k = \\frac{100}{N} \\sum_i [y_i \\in \\operatorname{topk}(x_i, k)
        \\wedge x_{i, y_i} > \\text{thresh}]

    A metric: the result carries no gradient.

    Args:
        pred (Tensor[N, C]): scores.
        target (Tensor[N]): class indices (integer).
        topk (int | tuple[int]): the k to evaluate. Default: 1.
        thresh (float, optional): a prediction counts only if its score is above it.

    Returns:
        Tensor[1] (float32) for an int ``topk``, else a list of them; for ``N = 0`` 0-d zeros
        of ``pred``'s dtype, as MMDetection's ``pred.new_tensor(0.0)``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import accuracy
        >>> pred = ms.Tensor([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]])
        >>> accuracy(pred, ms.Tensor([1, 1], ms.int64))
        Tensor(shape=[1], dtype=Float32, value= [ 5.00000000e+01])
        >>> [float(a[0]) for a in accuracy(pred, ms.Tensor([1, 1], ms.int64), topk=(1, 2))]
        [50.0, 100.0]
    """
    pred = check_float_tensor(pred, "pred")
    target = check_tensor(target, "target")
    ks, single = _check_topk(topk)
    if thresh is not None:
        check_number(thresh, "thresh")
    if pred.ndim >= 1 and pred.shape[0] == 0:
        zeros = [ops.zeros((), pred.dtype) for _ in ks]
        return zeros[0] if single else zeros
    if pred.ndim != 2 or target.ndim != 1 or pred.shape[0] != target.shape[0]:
        raise ValueError(
            "pred must have shape (N, C) and target (N,), but got "
            f"pred.shape={pred.shape} and target.shape={target.shape}"
        )
    if is_float_dtype(target.dtype) or target.dtype == ms.bool_:
        raise TypeError(
            f"target must hold class indices (an integer dtype), but got {target.dtype}"
        )
    maxk = max(ks)
    if maxk > pred.shape[1]:
        raise ValueError(f"maxk {maxk} exceeds pred dimension {pred.shape[1]}")
    scores = ops.stop_gradient(pred)
    values, labels = ops.topk(scores, maxk, dim=1)
    correct = labels.astype(ms.int64) == target.astype(ms.int64).reshape(-1, 1)
    if thresh is not None:
        correct = ops.logical_and(correct, values > _scalar(thresh, values))
    hits = correct.astype(ms.float32)
    res = []
    for k in ks:
        count = hits[:, :k].sum().reshape(1)
        res.append(count * (100.0 / pred.shape[0]))
    return res[0] if single else res


def _scalar(value: float, x: Tensor) -> Union[Tensor, float]:
    return Tensor(value, x.dtype) if x.dtype == ms.float64 else value


class Accuracy(nn.Cell):
    """MMDetection's ``Accuracy`` module. See :func:`accuracy` (fixed ``topk``/``thresh``).

    Args:
        topk (int | tuple[int]): Default: ``(1,)`` (so the result is a list).
        thresh (float, optional): score threshold.

    Shape:
        - pred: :math:`(N, C)`; target: :math:`(N)`; output: Tensor[1] or a list of them.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import Accuracy
        >>> pred = ms.Tensor([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2]])
        >>> [float(a[0]) for a in Accuracy(topk=(1, 2))(pred, ms.Tensor([1, 1], ms.int64))]
        [50.0, 100.0]
    """

    def __init__(self, topk: TopK = (1,), thresh: Optional[float] = None) -> None:
        super().__init__()
        _check_topk(topk)
        if thresh is not None:
            check_number(thresh, "thresh")
        self.topk = topk
        self.thresh = thresh

    def construct(self, pred: Tensor, target: Tensor) -> Union[Tensor, List[Tensor]]:
        return accuracy(pred, target, self.topk, self.thresh)
