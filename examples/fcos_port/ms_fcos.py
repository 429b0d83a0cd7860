"""The MindSpore port of :mod:`examples.fcos_port.torch_fcos`.

Same module tree and attribute names (so :func:`mscompat.port.convert_weights` pairs every
tensor by name), ``mindspore.nn``/``ops`` where they do the job, and mscompat where MindSpore
has no op with PyTorch's semantics: torchvision's ``FrozenBatchNorm2d`` and ``batched_nms``
(:mod:`mscompat.vision`), PyTorch's ``interpolate`` (:mod:`mscompat.nn.functional`),
MMDetection's ``FocalLoss``, ``GIoULoss`` and ``CrossEntropyLoss`` (:mod:`mscompat.losses`).

One real porting change: PyTorch selects the positive points by index (a data-dependent
shape); graph mode needs static shapes, so the box and centerness losses run on every point
with the positives' mask as ``weight`` (same sums: the other terms are zeros). Under data
parallel the loss normalisers are averaged over the ranks, as MMDetection's ``reduce_mean``.
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

import mscompat.nn.functional as F
from examples.fcos_port.data import IMAGE_SIZE, LR, NUM_CLASSES, STRIDES, points
from mscompat.losses import CrossEntropyLoss, FocalLoss, GIoULoss
from mscompat.vision import FrozenBatchNorm2d, batched_nms

__all__ = ["FCOS", "FCOSLoss", "TrainStep", "make_optimizer", "predict"]


def _conv(cin: int, cout: int, k: int, stride: int = 1, bias: bool = True) -> nn.Conv2d:
    """PyTorch's ``nn.Conv2d(cin, cout, k, stride, padding=k // 2, bias=bias)``."""
    return nn.Conv2d(cin, cout, k, stride=stride, pad_mode="pad", padding=k // 2, has_bias=bias)


class ConvBN(nn.Cell):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = _conv(cin, cout, 3, stride=2, bias=False)
        self.bn = FrozenBatchNorm2d(cout)

    def construct(self, x: Tensor) -> Tensor:
        return ops.relu(self.bn(self.conv(x)))


class Backbone(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.stem = ConvBN(3, 8)
        self.layer1 = ConvBN(8, 16)
        self.layer2 = ConvBN(16, 16)
        self.layer3 = ConvBN(16, 32)
        self.out_channels = (16, 32)

    def construct(self, x: Tensor) -> Tuple[Tensor, Tensor]:
        c3 = self.layer2(self.layer1(self.stem(x)))
        return c3, self.layer3(c3)


class FPN(nn.Cell):
    def __init__(self, in_channels: Tuple[int, int], channels: int) -> None:
        super().__init__()
        self.lateral_convs = nn.CellList([_conv(c, channels, 1) for c in in_channels])
        self.fpn_convs = nn.CellList([_conv(channels, channels, 3) for _ in in_channels])

    def construct(self, feats: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tensor]:
        top = self.lateral_convs[1](feats[1])
        low = self.lateral_convs[0](feats[0]) + F.interpolate(top, scale_factor=2, mode="nearest")
        return self.fpn_convs[0](low), self.fpn_convs[1](top)


class Scale(nn.Cell):
    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.scale = Parameter(Tensor(scale, ms.float32), name="scale")

    def construct(self, x: Tensor) -> Tensor:
        return x * self.scale


def _flat(x: Tensor) -> Tensor:
    return x.transpose(0, 2, 3, 1).reshape(x.shape[0], -1, x.shape[1])


class FCOSHead(nn.Cell):
    def __init__(self, channels: int, num_classes: int, num_levels: int) -> None:
        super().__init__()
        self.cls_conv = _conv(channels, channels, 3)
        self.reg_conv = _conv(channels, channels, 3)
        self.conv_cls = _conv(channels, num_classes, 3)
        self.conv_reg = _conv(channels, 4, 3)
        self.conv_centerness = _conv(channels, 1, 3)
        self.scales = nn.CellList([Scale(1.0) for _ in range(num_levels)])
        # the weights come from PyTorch (convert_weights); no initialisation to port

    def construct(self, feats: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tensor, Tensor]:
        cls, reg, ctr = [], [], []
        for i in range(len(feats)):
            c = ops.relu(self.cls_conv(feats[i]))
            r = ops.relu(self.reg_conv(feats[i]))
            cls.append(_flat(self.conv_cls(c)))
            reg.append(_flat(ops.exp(self.scales[i](self.conv_reg(r)))))
            ctr.append(_flat(self.conv_centerness(r)))
        return ops.cat(cls, 1), ops.cat(reg, 1), ops.cat(ctr, 1)[..., 0]


class FCOS(nn.Cell):
    def __init__(self, num_classes: int = NUM_CLASSES, channels: int = 16) -> None:
        super().__init__()
        self.backbone = Backbone()
        self.neck = FPN(self.backbone.out_channels, channels)
        self.head = FCOSHead(channels, num_classes, len(STRIDES))

    def construct(self, images: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        return self.head(self.neck(self.backbone(images)))


def _as_boxes(dist: Tensor) -> Tensor:
    return ops.cat([-dist[:, :2], dist[:, 2:]], 1)


def centerness_target(dist: Tensor) -> Tensor:
    lr, tb = dist[:, 0::2], dist[:, 1::2]
    ratio = (lr.min(-1) / lr.max(-1)) * (tb.min(-1) / tb.max(-1))
    return ops.sqrt(ratio)


class FCOSLoss(nn.Cell):
    """The network and MMDetection's FCOS loss: ``construct(images, labels, bbox_targets)``
    returns the total loss. ``world > 1``: the normalisers are averaged over the ranks
    (``reduce_mean``: an all-reduce sum divided by the number of ranks)."""

    def __init__(self, net: FCOS, world: int = 1) -> None:
        super().__init__(auto_prefix=False)  # keep the parameters' names (as WithLossCell)
        self.net = net
        self.world = world
        self.loss_cls = FocalLoss(use_sigmoid=True, gamma=2.0, alpha=0.25, loss_weight=1.0)
        self.loss_bbox = GIoULoss(loss_weight=1.0)
        self.loss_centerness = CrossEntropyLoss(use_sigmoid=True, loss_weight=1.0)
        self.all_reduce = ops.AllReduce() if world > 1 else None

    def reduce_mean(self, x: Tensor) -> Tensor:
        if self.all_reduce is None:
            return x
        return self.all_reduce(x) / self.world

    def construct(self, images: Tensor, labels: Tensor, bbox_targets: Tensor) -> Tensor:
        cls, reg, ctr = self.net(images)
        num_classes = cls.shape[-1]
        cls, reg, ctr = cls.reshape(-1, num_classes), reg.reshape(-1, 4), ctr.reshape(-1)
        labels, bbox_targets = labels.reshape(-1), bbox_targets.reshape(-1, 4)
        pos = ops.logical_and(labels >= 0, labels < num_classes).astype(ms.float32)
        num_pos = ops.maximum(self.reduce_mean(pos.sum()), 1.0)
        loss_cls = self.loss_cls(cls, labels, avg_factor=num_pos)
        ctr_targets = centerness_target(bbox_targets) * pos  # 0 off the positives
        denorm = ops.maximum(self.reduce_mean(ops.stop_gradient(ctr_targets.sum())), 1e-6)
        loss_bbox = self.loss_bbox(
            _as_boxes(reg), _as_boxes(bbox_targets), weight=ctr_targets, avg_factor=denorm
        )
        loss_ctr = self.loss_centerness(ctr, ctr_targets, weight=pos, avg_factor=num_pos)
        return loss_cls + loss_bbox + loss_ctr


def make_optimizer(net: nn.Cell, lr: float = LR) -> nn.SGD:
    """``mindspore.nn.SGD`` updates as ``torch.optim.SGD`` (dampening 0): ``d = g + wd * p``,
    ``buf = momentum * buf + d`` (``buf = d`` at the first step), ``p -= lr * buf``."""
    return nn.SGD(net.trainable_params(), learning_rate=lr, momentum=0.9, weight_decay=1e-4)


class TrainStep(nn.Cell):
    """One SGD step; returns the loss (with ``world > 1``, the mean of the ranks' losses: the
    loss of the global batch)."""

    def __init__(self, loss: FCOSLoss, optimizer: nn.Optimizer) -> None:
        super().__init__(auto_prefix=False)  # as TrainOneStepCell
        self.loss = loss
        self.optimizer = optimizer
        self.weights = optimizer.parameters
        self.grad_fn = ms.value_and_grad(loss, None, self.weights)
        self.world = loss.world
        self.reducer = None
        if loss.world > 1:
            self.reducer = nn.DistributedGradReducer(self.weights, mean=True, degree=loss.world)

    def construct(self, images: Tensor, labels: Tensor, bbox_targets: Tensor) -> Tensor:
        value, grads = self.grad_fn(images, labels, bbox_targets)
        if self.reducer is not None:
            grads = self.reducer(grads)
        value = ops.depend(value, self.optimizer(grads))
        return self.loss.reduce_mean(ops.stop_gradient(value))


def train(
    net: FCOS, steps: int, batches: List[Tuple[np.ndarray, ...]], lr: float = LR, world: int = 1
) -> List[float]:
    """Graph-mode SGD on ``batches[step]``; the loss of each step (before its update)."""
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        step = TrainStep(FCOSLoss(net, world), make_optimizer(net, lr))
        step.set_train()
        losses = [float(step(*(Tensor(a) for a in batch)).asnumpy()) for batch in batches[:steps]]
    finally:
        ms.set_context(mode=mode)
    net.set_train(False)
    return losses


def predict(
    net: FCOS,
    images: np.ndarray,
    score_thr: float = 0.05,
    nms_pre: int = 50,
    iou_threshold: float = 0.5,
    max_per_img: int = 20,
) -> List[Dict[str, np.ndarray]]:
    """As :func:`examples.fcos_port.torch_fcos.predict` (PyNative: the kept count is dynamic)."""
    net.set_train(False)
    cls, reg, ctr = net(Tensor(images))
    xy, stride = (Tensor(a) for a in points(IMAGE_SIZE))
    num_classes = cls.shape[-1]
    out = []
    for b in range(images.shape[0]):
        scores = (ops.sigmoid(cls[b]) * ops.sigmoid(ctr[b])[:, None]).reshape(-1)
        top, idx = ops.topk(scores, nms_pre)
        point, label = idx // num_classes, idx % num_classes
        d = reg[b][point] * stride[point][:, None]
        p = xy[point]
        boxes = ops.stack(
            [p[:, 0] - d[:, 0], p[:, 1] - d[:, 1], p[:, 0] + d[:, 2], p[:, 1] + d[:, 3]], 1
        )
        boxes = ops.clamp(boxes, 0.0, float(IMAGE_SIZE))
        keep = batched_nms(boxes, top, label.astype(ms.int64), iou_threshold).asnumpy()
        top_np, boxes_np, label_np = top.asnumpy(), boxes.asnumpy(), label.asnumpy()
        keep = keep[top_np[keep] > score_thr][:max_per_img]
        out.append({"boxes": boxes_np[keep], "scores": top_np[keep], "labels": label_np[keep]})
    return out
