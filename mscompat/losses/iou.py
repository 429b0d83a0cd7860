"""MMDetection's IoU, GIoU, DIoU and CIoU box losses (the Bounded, EIoU and SIoU losses are in
:mod:`mscompat.losses.iou_variants`).

Mirrors ``mmdet/models/losses/iou_loss.py`` (MMDetection 3.3): each ``*_loss`` function has the
``@weighted_loss`` signature ``(pred, target, weight=None, reduction='mean', avg_factor=None,
**config)`` and each Cell MMDetection's constructor and ``forward(pred, target, weight=None,
avg_factor=None, reduction_override=None)``, with its special cases: an all-non-positive
``weight`` returns ``(pred * weight).sum()`` (IoULoss: unless ``reduction='none'``), and a
``(n, 4)`` weight is averaged to ``(n,)``. float16 follows PyTorch on CPU op by op (IoU and GIoU
compute the overlaps in float32, as MMDetection; CIoU returns float32 there, as MMDetection's
``.float()`` makes it). The elementwise loss is chosen by the registry: the composite below or
the fused kernel (``custom_ops/cpu/box_loss_kernel.cc``) for float32/float64 boxes.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Optional, Tuple

from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat._checks import check_bool, check_number
from mscompat.custom_ops import box_loss as _kernels
from mscompat.custom_ops.registry import call, register
from mscompat.losses import _fused as _fused_mod
from mscompat.losses import _torch_math as tm
from mscompat.losses._iou_common import (
    CELL_SHAPE,
    F16,
    F32,
    BoxLoss,
    centre_terms,
    check_boxes,
    clamp_unit,
    fill_docs,
    finish,
    promoted,
    simple,
    wh,
)
from mscompat.losses.bbox_overlaps import overlaps
from mscompat.losses.utils import AvgFactor, _promote

__all__ = [
    "CIoULoss",
    "DIoULoss",
    "GIoULoss",
    "IoULoss",
    "ciou_loss",
    "diou_loss",
    "giou_loss",
    "iou_loss",
]

# Computed here, in double: graph mode does arithmetic on Python floats in float32.
_CIOU_FACTOR = 4 / math.pi**2
_IOU_MODES = ("linear", "square", "log")
_LINEAR_WARNING = (
    'DeprecationWarning: Setting "linear=True" in iou_loss is deprecated, please use '
    '"mode=`linear`" instead.'
)


# ----------------------------------------------------------------------------- elementwise


def _iou_elementwise(pred: Tensor, target: Tensor, mode: str, eps: float) -> Tensor:
    half = pred.dtype == F16
    ious = overlaps(pred.astype(F32) if half else pred, target, "iou", True, 1e-6)
    ious = tm.clamp_min(ious, eps)
    if half:
        ious = ious.astype(F16)
    if mode == "linear":
        return tm.sub(1.0, ious)
    if mode == "square":
        return tm.sub(1.0, tm.square(ious))
    return -tm.ew(ops.log, ious)


def _giou_elementwise(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    half = pred.dtype == F16
    gious = overlaps(pred.astype(F32) if half else pred, target, "giou", True, eps)
    if half:
        gious = gious.astype(F16)
    return tm.sub(1.0, gious)


def _centre_gap(pred: Tensor, target: Tensor, i: int) -> Tensor:
    """``(t[i] + t[i+2]) - (p[i] + p[i+2])``: twice the gap of the centres along x or y."""
    return tm.sub(tm.add(target[:, i], target[:, i + 2]), tm.add(pred[:, i], pred[:, i + 2]))


def _diou_terms(pred: Tensor, target: Tensor, eps: float) -> Tuple[Tensor, Tensor, Tensor]:
    ious, e1, e2 = centre_terms(pred, target, eps)
    enclose_wh = tm.clamp_min(tm.sub(e2, e1), 0.0)
    c2 = tm.add(tm.add(tm.square(enclose_wh[:, 0]), tm.square(enclose_wh[:, 1])), eps)
    left = tm.div(tm.square(_centre_gap(pred, target, 0)), 4.0)
    right = tm.div(tm.square(_centre_gap(pred, target, 1)), 4.0)
    return ious, tm.add(left, right), c2


def _diou_elementwise(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    ious, rho2, c2 = _diou_terms(pred, target, eps)
    return tm.sub(1.0, tm.sub(ious, tm.div(rho2, c2)))


def _ciou_elementwise(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    ious, rho2, c2 = _diou_terms(pred, target, eps)
    w1, h1 = wh(pred, eps)
    w2, h2 = wh(target, eps)
    angle = tm.sub(tm.ew(ops.atan, tm.div(w2, h2)), tm.ew(ops.atan, tm.div(w1, h1)))
    v = tm.mul(_CIOU_FACTOR, tm.square(angle))
    # MMDetection: alpha under torch.no_grad(), its mask .float() (float32 for float16 boxes)
    mask = tm.stop(ious > 0.5).astype(F32)
    alpha = tm.stop(tm.div(tm.mul(mask, v), tm.add(tm.sub(1.0, ious), v)))
    cious = tm.sub(ious, tm.add(tm.div(rho2, c2), tm.mul(alpha, v)))
    return tm.sub(1.0, clamp_unit(cious))


# ----------------------------------------------------------------------------- dispatch

_COMPOSITE_NOTE = "MindSpore ops, MMDetection's op sequence"
_AOT_NOTE = (
    "fused C++ forward and backward kernels; 'mean'/'sum' with the weight, a number "
    "avg_factor and a Cell's loss_weight in the same kernel (a Tensor avg_factor: divided after)"
)
_IOU, _GIOU, _DIOU, _CIOU = (f"losses.{n}_loss" for n in ("iou", "giou", "diou", "ciou"))
register(_IOU, "composite", note=_COMPOSITE_NOTE)(_iou_elementwise)
register(_GIOU, "composite", note=_COMPOSITE_NOTE)(_giou_elementwise)
register(_DIOU, "composite", note=_COMPOSITE_NOTE)(_diou_elementwise)
register(_CIOU, "composite", note=_COMPOSITE_NOTE)(_ciou_elementwise)


@constexpr
def _head(op: str, first: Any, eps: float = 0.0) -> Tuple[float, float, float]:
    """The kernel's ``(kind, eps, eps2)`` for ``op`` and its config (``mode, eps`` for
    iou_loss, ``eps`` for the others)."""
    if op == _IOU:
        # bbox_overlaps' own eps (1e-6) bounds the union; eps bounds the IoU
        return (float(_kernels.KINDS["mmdet_iou_" + first]), eps, 1e-6)
    kind = _kernels.KINDS["mmdet_" + op[len("losses.") : -len("_loss")]]
    return (float(kind), first, first)


# The aot implementations take a plan (mscompat.losses._fused.tail) and the weight for the
# reduced loss in the same kernel; the front doors pass them where the plan covers the call.
@_kernels.LIBRARY.backend(_IOU, _AOT_NOTE, _kernels.kernel_dtypes)
def _iou_aot(
    pred: Tensor, target: Tensor, mode: str, eps: float, plan: Any = (), weight: Any = None
) -> Tensor:
    return _kernels.box_loss(pred, target, _head(_IOU, mode, eps), plan, weight)


@_kernels.LIBRARY.backend(_GIOU, _AOT_NOTE, _kernels.kernel_dtypes)
def _giou_aot(
    pred: Tensor, target: Tensor, eps: float, plan: Any = (), weight: Any = None
) -> Tensor:
    return _kernels.box_loss(pred, target, _head(_GIOU, eps), plan, weight)


@_kernels.LIBRARY.backend(_DIOU, _AOT_NOTE, _kernels.kernel_dtypes)
def _diou_aot(
    pred: Tensor, target: Tensor, eps: float, plan: Any = (), weight: Any = None
) -> Tensor:
    return _kernels.box_loss(pred, target, _head(_DIOU, eps), plan, weight)


@_kernels.LIBRARY.backend(_CIOU, _AOT_NOTE, _kernels.kernel_dtypes)
def _ciou_aot(
    pred: Tensor, target: Tensor, eps: float, plan: Any = (), weight: Any = None
) -> Tensor:
    return _kernels.box_loss(pred, target, _head(_CIOU, eps), plan, weight)


def _iou_call(pred: Tensor, target: Tensor, mode: str, eps: float) -> Tensor:
    return call(_IOU, pred, target, mode, eps)


def _giou_call(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    return call(_GIOU, pred, target, eps)


def _diou_call(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    return call(_DIOU, pred, target, eps)


def _ciou_call(pred: Tensor, target: Tensor, eps: float) -> Tensor:
    return call(_CIOU, pred, target, eps)


# ----------------------------------------------------------------------------- functions


def iou_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    linear: bool = False,
    mode: str = "log",
    eps: float = 1e-6,
) -> Tensor:
    """IoU loss (`UnitBox <https://arxiv.org/abs/1608.01471>`_), MMDetection's ``iou_loss``.

    With :math:`u = \\max(\\operatorname{IoU}(p, t), \\epsilon)` (the aligned
    :func:`~mscompat.losses.bbox_overlaps`, its own eps 1e-6):

    .. math::
        \\ell = 1 - u \\;(\\text{linear}), \\quad 1 - u^2 \\;(\\text{square}), \\quad
        -\\log u \\;(\\text{log})
    {args}
        linear (bool): deprecated: ``mode='linear'`` (warns). Default: False.
        mode (str): ``'linear'`` | ``'square'`` | ``'log'``. Default: ``'log'``.
        eps (float): lower bound of the IoU. Default: 1e-6.

    Returns:
        Tensor[n] for ``'none'``, else 0-d; ``pred``'s dtype (float16 boxes: the IoU in
        float32, then float16, as MMDetection). No boxes: the mean is NaN, the sum 0.

    Raises:
        ValueError: boxes not of shape (n, 4) or of different shapes, an unknown ``mode`` or
            ``reduction``, ``avg_factor`` with ``'sum'``.
        TypeError: non-floating boxes.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import iou_loss
        >>> pred = ms.Tensor([[0.0, 0.0, 10.0, 10.0], [0.0, 0.0, 4.0, 4.0]])
        >>> target = ms.Tensor([[0.0, 0.0, 10.0, 20.0], [0.0, 0.0, 4.0, 4.0]])
        >>> iou_loss(pred, target, reduction="none", mode="linear")
        Tensor(shape=[2], dtype=Float32, value= [ 5.00000000e-01,  0.00000000e+00])
    """
    pred, target = check_boxes(pred, target, reduction, avg_factor)
    if mode not in _IOU_MODES:
        raise ValueError(f"mode must be one of {_IOU_MODES}, but got {mode!r}")
    if check_bool(linear, "linear"):
        mode = "linear"
        warnings.warn(_LINEAR_WARNING, stacklevel=2)
    check_number(eps, "eps")
    plan = _fused_mod.tail(_IOU, (mode, eps), pred, target, weight, reduction, avg_factor, box=True)
    if plan:
        return _fused_mod.run(_IOU, (mode, eps), plan, pred, target, weight, avg_factor)
    return finish(_iou_call, pred, target, weight, reduction, avg_factor, pred.dtype, 0, mode, eps)


def giou_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    eps: float = 1e-7,
) -> Tensor:
    """Generalized IoU loss (`Rezatofighi et al. <https://arxiv.org/abs/1902.09630>`_),
    MMDetection's ``giou_loss``: :math:`\\ell = 1 - \\operatorname{GIoU}(p, t)` with the
    aligned :func:`~mscompat.losses.bbox_overlaps` in mode ``'giou'`` and this ``eps``.
    {args}
        eps (float): lower bound of the union and enclosing area. Default: 1e-7.

    Returns:
        Tensor[n] for ``'none'``, else 0-d; ``pred``'s dtype (float16: the GIoU in float32).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import giou_loss
        >>> pred = ms.Tensor([[0.0, 0.0, 10.0, 10.0], [10.0, 10.0, 20.0, 20.0]])
        >>> target = ms.Tensor([[0.0, 0.0, 10.0, 20.0], [0.0, 0.0, 10.0, 10.0]])
        >>> giou_loss(pred, target, reduction="none")
        Tensor(shape=[2], dtype=Float32, value= [ 5.00000000e-01,  1.50000000e+00])
    """
    pred, target = check_boxes(pred, target, reduction, avg_factor)
    check_number(eps, "eps")
    plan = _fused_mod.tail(_GIOU, (eps,), pred, target, weight, reduction, avg_factor, box=True)
    if plan:
        return _fused_mod.run(_GIOU, (eps,), plan, pred, target, weight, avg_factor)
    return simple(_giou_call, pred, target, weight, reduction, avg_factor, pred.dtype, eps)


def diou_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    eps: float = 1e-7,
) -> Tensor:
    """Distance-IoU loss (`Zheng et al. <https://arxiv.org/abs/1911.08287>`_), MMDetection's
    ``diou_loss``:

    .. math::
        \\ell = 1 - \\frac{I}{U + \\epsilon} + \\frac{\\rho^2}{c_w^2 + c_h^2 + \\epsilon}

    (:math:`\\rho` the distance of the centres, :math:`c` the enclosing box).
    {args}
        eps (float): added to the union and the diagonal. Default: 1e-7.

    Returns:
        Tensor[n] for ``'none'``, else 0-d, in the promoted dtype of the boxes.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import diou_loss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> round(float(diou_loss(pred, target)), 4)
        0.7436
    """
    pred, target = check_boxes(pred, target, reduction, avg_factor)
    check_number(eps, "eps")
    plan = _fused_mod.tail(_DIOU, (eps,), pred, target, weight, reduction, avg_factor, box=True)
    if plan:
        return _fused_mod.run(_DIOU, (eps,), plan, pred, target, weight, avg_factor)
    dtype = promoted(pred, target)
    return simple(_diou_call, pred, target, weight, reduction, avg_factor, dtype, eps)


def ciou_loss(
    pred: Tensor,
    target: Tensor,
    weight: Optional[Tensor] = None,
    reduction: str = "mean",
    avg_factor: AvgFactor = None,
    eps: float = 1e-7,
) -> Tensor:
    """Complete-IoU loss (`Zheng et al. <https://arxiv.org/abs/2005.03572>`_), MMDetection's
    ``ciou_loss``:

    .. math::
        v = \\frac{4}{\\pi^2}\\Big(\\arctan\\frac{w_t}{h_t} - \\arctan\\frac{w_p}{h_p}\\Big)^2,
        \\quad \\alpha = [\\text{IoU} > 0.5]\\,\\frac{v}{1 - \\text{IoU} + v}, \\quad
        \\ell = 1 - \\operatorname{clamp}\\Big(\\text{IoU} - \\frac{\\rho^2}{c^2} - \\alpha v,
        -1, 1\\Big)

    with :math:`h + \\epsilon` heights and :math:`\\alpha` carrying no gradient
    (MMDetection's ``torch.no_grad()``). As in MMDetection, identical boxes large enough that
    ``U + eps`` rounds to ``U`` give :math:`\\alpha = 0/0` = NaN.
    {args}
        eps (float): added to the union, diagonal and heights. Default: 1e-7.

    Returns:
        Tensor[n] for ``'none'``, else 0-d; float32 for float16 boxes (MMDetection's
        ``.float()`` mask), else the promoted dtype of the boxes.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import ciou_loss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> round(float(ciou_loss(pred, target)), 4)
        0.7436
    """
    pred, target = check_boxes(pred, target, reduction, avg_factor)
    check_number(eps, "eps")
    plan = _fused_mod.tail(_CIOU, (eps,), pred, target, weight, reduction, avg_factor, box=True)
    if plan:
        return _fused_mod.run(_CIOU, (eps,), plan, pred, target, weight, avg_factor)
    dtype = _promote(promoted(pred, target), F32)
    return simple(_ciou_call, pred, target, weight, reduction, avg_factor, dtype, eps)


fill_docs(iou_loss, giou_loss, diou_loss, ciou_loss)


# ----------------------------------------------------------------------------- Cells


class _FusedBoxLoss(BoxLoss):
    """A Cell whose loss has the reducing kernel: ``_op`` names its elementwise op."""

    _op = _GIOU

    def _config(self) -> Tuple[Any, ...]:
        return (self.eps,)

    def _fused_plan(
        self,
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor],
        reduction: str,
        avg_factor: AvgFactor,
    ) -> Tuple[Any, ...]:
        return _fused_mod.tail(
            self._op,
            self._config(),
            pred,
            target,
            weight,
            reduction,
            avg_factor,
            self.loss_weight,
            zero_check=True,
            box=True,
            cell=True,
        )

    def _fused_loss(
        self,
        plan: Tuple[Any, ...],
        pred: Tensor,
        target: Tensor,
        weight: Optional[Tensor],
        avg_factor: AvgFactor,
    ) -> Tensor:
        return _fused_mod.run(
            self._op, self._config(), plan, pred, target, weight, avg_factor, self.loss_weight
        )


class IoULoss(_FusedBoxLoss):
    """IoU loss Cell, MMDetection's ``IoULoss``. See :func:`iou_loss`.

    ``forward(pred, target, weight=None, avg_factor=None, reduction_override=None)``: a
    ``weight`` with no positive entry returns ``(pred * weight).sum()`` unless the reduction is
    ``'none'``; the result is scaled by ``loss_weight``.

    Args:
        linear (bool): deprecated: ``mode='linear'`` (warns). Default: False.
        eps (float): lower bound of the IoU. Default: 1e-6.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.
        mode (str): ``'linear'`` | ``'square'`` | ``'log'``. Default: ``'log'``.
    {shape}

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import IoULoss
        >>> pred = ms.Tensor([[0.0, 0.0, 10.0, 10.0]])
        >>> target = ms.Tensor([[0.0, 0.0, 10.0, 20.0]])
        >>> round(float(IoULoss(mode="linear", loss_weight=2.0)(pred, target)), 4)
        1.0
    """

    def __init__(
        self,
        linear: bool = False,
        eps: float = 1e-6,
        reduction: str = "mean",
        loss_weight: float = 1.0,
        mode: str = "log",
    ) -> None:
        super().__init__(eps, reduction, loss_weight, zero_unless_none=True)
        if mode not in _IOU_MODES:
            raise ValueError(f"mode must be one of {_IOU_MODES}, but got {mode!r}")
        if check_bool(linear, "linear"):
            mode = "linear"
            warnings.warn(_LINEAR_WARNING.replace("iou_loss", "IOULoss"), stacklevel=2)
        self.mode = mode
        self.linear = linear

    _op = _IOU

    def _config(self) -> Tuple[Any, ...]:
        return (self.mode, self.eps)

    def _loss(self, p: Tensor, t: Tensor, w: Optional[Tensor], r: str, af: AvgFactor) -> Tensor:
        return iou_loss(p, t, w, r, af, False, self.mode, self.eps)


class GIoULoss(_FusedBoxLoss):
    """GIoU loss Cell, MMDetection's ``GIoULoss``. See :func:`giou_loss`.

    A ``weight`` with no positive entry returns ``(pred * weight).sum()`` (any reduction); a
    ``(n, 4)`` weight is averaged to ``(n,)``; the result is scaled by ``loss_weight``.

    Args:
        eps (float): lower bound of the union and enclosing area. Default: 1e-6.
        reduction (str): ``'none'`` | ``'mean'`` | ``'sum'``. Default: ``'mean'``.
        loss_weight (float): factor of the loss. Default: 1.0.
    {shape}

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import GIoULoss
        >>> pred = ms.Tensor([[10.0, 10.0, 20.0, 20.0]])
        >>> target = ms.Tensor([[0.0, 0.0, 10.0, 10.0]])
        >>> GIoULoss()(pred, target)
        Tensor(shape=[], dtype=Float32, value= 1.5)
    """

    def __init__(
        self, eps: float = 1e-6, reduction: str = "mean", loss_weight: float = 1.0
    ) -> None:
        super().__init__(eps, reduction, loss_weight)

    def _loss(self, p: Tensor, t: Tensor, w: Optional[Tensor], r: str, af: AvgFactor) -> Tensor:
        return giou_loss(p, t, w, r, af, self.eps)


class DIoULoss(GIoULoss):
    """DIoU loss Cell, MMDetection's ``DIoULoss``. See :func:`diou_loss`; the arguments and
    the ``forward`` are :class:`GIoULoss`'s.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import DIoULoss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> round(float(DIoULoss()(pred, target)), 4)
        0.7436
    """

    _op = _DIOU

    def _loss(self, p: Tensor, t: Tensor, w: Optional[Tensor], r: str, af: AvgFactor) -> Tensor:
        return diou_loss(p, t, w, r, af, self.eps)


class CIoULoss(GIoULoss):
    """CIoU loss Cell, MMDetection's ``CIoULoss``. See :func:`ciou_loss`; the arguments and
    the ``forward`` are :class:`GIoULoss`'s.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.losses import CIoULoss
        >>> pred = ms.Tensor([[0.0, 0.0, 2.0, 2.0]])
        >>> target = ms.Tensor([[1.0, 0.0, 3.0, 2.0]])
        >>> round(float(CIoULoss()(pred, target)), 4)
        0.7436
    """

    _op = _CIOU

    def _loss(self, p: Tensor, t: Tensor, w: Optional[Tensor], r: str, af: AvgFactor) -> Tensor:
        return ciou_loss(p, t, w, r, af, self.eps)


for _cls in (IoULoss, GIoULoss):
    _cls.__doc__ = (_cls.__doc__ or "").replace("    {shape}", CELL_SHAPE.strip("\n"))
