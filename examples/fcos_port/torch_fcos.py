"""The PyTorch original: a small FCOS-style detector, as a user's model would be written.

Backbone of strided convolutions with torchvision's ``FrozenBatchNorm2d``, an FPN whose top-down
path is ``interpolate(scale_factor=2)``, FCOS's shared head (classification, box distances
through a learnable ``Scale`` and ``exp``, centerness), MMDetection's losses (FocalLoss, GIoULoss
weighted by the centerness target, sigmoid CrossEntropyLoss on the centerness) and
``batched_nms`` post-processing.

MMDetection's losses and torchvision's ``FrozenBatchNorm2d`` and ``batched_nms`` come from
mscompat's plain-torch transcriptions (``mscompat.testing``: the oracles of its op database), so
this file runs with torch alone.
"""

from __future__ import annotations

import math
from typing import Dict, List, Tuple

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from examples.fcos_port.data import IMAGE_SIZE, LR, NUM_CLASSES, STRIDES, points
from mscompat.testing.db.vision_nms import batched_nms_ref as batched_nms
from mscompat.testing.references.mmdet_box import GIoULoss
from mscompat.testing.references.mmdet_cls import cross_entropy_module, focal_module
from mscompat.testing.references.torchvision_ops import FrozenBatchNorm2d

__all__ = ["FCOS", "FrozenBatchNorm2d", "fcos_loss", "make_model", "make_optimizer", "predict"]


class ConvBN(nn.Module):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride=2, padding=1, bias=False)
        self.bn = FrozenBatchNorm2d(cout)

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(self.bn(self.conv(x)))


class Backbone(nn.Module):
    """Four stride-2 stages; returns the stride-8 and stride-16 maps."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = ConvBN(3, 8)
        self.layer1 = ConvBN(8, 16)
        self.layer2 = ConvBN(16, 16)
        self.layer3 = ConvBN(16, 32)
        self.out_channels = (16, 32)

    def forward(self, x: Tensor) -> Tuple[Tensor, Tensor]:
        c3 = self.layer2(self.layer1(self.stem(x)))
        return c3, self.layer3(c3)


class FPN(nn.Module):
    def __init__(self, in_channels: Tuple[int, int], channels: int) -> None:
        super().__init__()
        self.lateral_convs = nn.ModuleList(nn.Conv2d(c, channels, 1) for c in in_channels)
        self.fpn_convs = nn.ModuleList(
            nn.Conv2d(channels, channels, 3, padding=1) for _ in in_channels
        )

    def forward(self, feats: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tensor]:
        top = self.lateral_convs[1](feats[1])
        low = self.lateral_convs[0](feats[0]) + F.interpolate(top, scale_factor=2, mode="nearest")
        return self.fpn_convs[0](low), self.fpn_convs[1](top)


class Scale(nn.Module):
    """MMCV's ``Scale``: a learnable scalar factor."""

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.tensor(scale, dtype=torch.float32))

    def forward(self, x: Tensor) -> Tensor:
        return x * self.scale


class FCOSHead(nn.Module):
    """FCOS's head, shared by the levels: one conv tower per branch, centerness on the
    regression tower; per level a ``Scale`` before ``exp``."""

    def __init__(self, channels: int, num_classes: int, num_levels: int) -> None:
        super().__init__()
        self.cls_conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.reg_conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv_cls = nn.Conv2d(channels, num_classes, 3, padding=1)
        self.conv_reg = nn.Conv2d(channels, 4, 3, padding=1)
        self.conv_centerness = nn.Conv2d(channels, 1, 3, padding=1)
        self.scales = nn.ModuleList(Scale(1.0) for _ in range(num_levels))
        for conv in (self.cls_conv, self.reg_conv, self.conv_reg, self.conv_centerness):
            nn.init.normal_(conv.weight, std=0.01)
            nn.init.zeros_(conv.bias)
        nn.init.normal_(self.conv_cls.weight, std=0.01)
        nn.init.constant_(self.conv_cls.bias, -math.log((1 - 0.01) / 0.01))  # prior 0.01

    def forward(self, feats: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tensor, Tensor]:
        cls, reg, ctr = [], [], []
        for x, scale in zip(feats, self.scales):
            c = F.relu(self.cls_conv(x))
            r = F.relu(self.reg_conv(x))
            cls.append(_flat(self.conv_cls(c)))
            reg.append(_flat(scale(self.conv_reg(r)).exp()))
            ctr.append(_flat(self.conv_centerness(r)))
        return torch.cat(cls, 1), torch.cat(reg, 1), torch.cat(ctr, 1)[..., 0]


def _flat(x: Tensor) -> Tensor:
    """(B, C, H, W) -> (B, H*W, C), row-major points as :func:`data.points`."""
    return x.permute(0, 2, 3, 1).reshape(x.shape[0], -1, x.shape[1])


class FCOS(nn.Module):
    """Returns per point: class logits ``(B, P, C)``, box distances in strides ``(B, P, 4)``,
    centerness logits ``(B, P)``."""

    def __init__(self, num_classes: int = NUM_CLASSES, channels: int = 16) -> None:
        super().__init__()
        self.backbone = Backbone()
        self.neck = FPN(self.backbone.out_channels, channels)
        self.head = FCOSHead(channels, num_classes, len(STRIDES))

    def forward(self, images: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
        return self.head(self.neck(self.backbone(images)))


def make_model(seed: int = 0) -> FCOS:
    """The model with seeded random weights, and "pretrained" frozen statistics (random too,
    so that converting them matters)."""
    torch.manual_seed(seed)
    model = FCOS()
    g = torch.Generator().manual_seed(seed + 1)
    for m in model.modules():
        if isinstance(m, FrozenBatchNorm2d):
            n = m.weight.numel()
            m.weight.copy_(1 + 0.1 * torch.randn(n, generator=g))
            m.bias.copy_(0.1 * torch.randn(n, generator=g))
            m.running_mean.copy_(0.1 * torch.randn(n, generator=g))
            m.running_var.copy_(1 + 0.1 * torch.rand(n, generator=g))
    return model


def make_optimizer(model: nn.Module, lr: float = LR) -> torch.optim.SGD:
    return torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=1e-4)


loss_cls_fn = focal_module(use_sigmoid=True, gamma=2.0, alpha=0.25, loss_weight=1.0)
loss_bbox_fn = GIoULoss(loss_weight=1.0)
loss_centerness_fn = cross_entropy_module(use_sigmoid=True, loss_weight=1.0)


def _as_boxes(dist: Tensor) -> Tensor:
    """Distances ``(l, t, r, b)`` from a point to boxes around it (the point at 0): GIoU does
    not depend on where the point is."""
    return torch.cat([-dist[:, :2], dist[:, 2:]], 1)


def centerness_target(dist: Tensor) -> Tensor:
    lr, tb = dist[:, 0::2], dist[:, 1::2]
    ratio = (lr.min(-1)[0] / lr.max(-1)[0]) * (tb.min(-1)[0] / tb.max(-1)[0])
    return torch.sqrt(ratio)


def fcos_loss(
    outputs: Tuple[Tensor, Tensor, Tensor], labels: Tensor, bbox_targets: Tensor
) -> Dict[str, Tensor]:
    """MMDetection's ``FCOSHead.loss_by_feat`` on one process: the losses of the positive
    points, selected by index (``reduce_mean`` is the identity here)."""
    cls, reg, ctr = outputs
    num_classes = cls.shape[-1]
    cls, reg, ctr = cls.reshape(-1, num_classes), reg.reshape(-1, 4), ctr.reshape(-1)
    labels, bbox_targets = labels.reshape(-1).long(), bbox_targets.reshape(-1, 4)
    pos_inds = ((labels >= 0) & (labels < num_classes)).nonzero().reshape(-1)
    num_pos = max(float(pos_inds.numel()), 1.0)
    loss_cls = loss_cls_fn(cls, labels, avg_factor=num_pos)
    pos_reg, pos_ctr, pos_targets = reg[pos_inds], ctr[pos_inds], bbox_targets[pos_inds]
    pos_ctr_targets = centerness_target(pos_targets)
    denorm = max(pos_ctr_targets.sum().detach().item(), 1e-6)
    if len(pos_inds) > 0:
        loss_bbox = loss_bbox_fn(
            _as_boxes(pos_reg), _as_boxes(pos_targets), weight=pos_ctr_targets, avg_factor=denorm
        )
        loss_ctr = loss_centerness_fn(pos_ctr, pos_ctr_targets, avg_factor=num_pos)
    else:
        loss_bbox, loss_ctr = pos_reg.sum(), pos_ctr.sum()
    return {"loss_cls": loss_cls, "loss_bbox": loss_bbox, "loss_centerness": loss_ctr}


def train(
    model: FCOS, steps: int, batches: List[Tuple[np.ndarray, ...]], lr: float = LR
) -> List[float]:
    """SGD on ``batches[step]``; the total loss of each step (before its update)."""
    opt = make_optimizer(model, lr)
    model.train()
    losses = []
    for images, labels, targets in batches[:steps]:
        parts = fcos_loss(
            model(torch.from_numpy(images)), torch.from_numpy(labels), torch.from_numpy(targets)
        )
        loss = sum(parts.values())
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def predict(
    model: FCOS,
    images: np.ndarray,
    score_thr: float = 0.05,
    nms_pre: int = 50,
    iou_threshold: float = 0.5,
    max_per_img: int = 20,
) -> List[Dict[str, np.ndarray]]:
    """Per image: the ``nms_pre`` best (point, class) scores ``sigmoid(cls) *
    sigmoid(centerness)``, their boxes in pixels, ``batched_nms`` per class, those above
    ``score_thr``, at most ``max_per_img``."""
    model.eval()
    cls, reg, ctr = model(torch.from_numpy(images))
    xy, stride = (torch.from_numpy(a) for a in points(IMAGE_SIZE))
    out = []
    for b in range(images.shape[0]):
        scores = (cls[b].sigmoid() * ctr[b].sigmoid()[:, None]).reshape(-1)
        top, idx = scores.topk(nms_pre)
        point, label = idx // cls.shape[-1], idx % cls.shape[-1]
        d = reg[b][point] * stride[point, None]
        p = xy[point]
        boxes = torch.stack(
            [p[:, 0] - d[:, 0], p[:, 1] - d[:, 1], p[:, 0] + d[:, 2], p[:, 1] + d[:, 3]], 1
        )
        boxes = boxes.clamp(0, IMAGE_SIZE)
        keep = batched_nms(boxes, top, label, iou_threshold)
        keep = keep[top[keep] > score_thr][:max_per_img]
        out.append(
            {
                "boxes": boxes[keep].numpy(),
                "scores": top[keep].numpy(),
                "labels": label[keep].numpy(),
            }
        )
    return out
