"""RetinaNet-like detector: backbone + FPN + head + focal loss + post-processing."""

import torch
from torch import nn

from .backbone import Backbone
from .fpn import FPN
from .head import RetinaHead
from .losses import detection_loss
from .postprocess import postprocess, select_level


class Detector(nn.Module):
    def __init__(self, num_classes: int = 20) -> None:
        super().__init__()
        self.backbone = Backbone()
        self.neck = FPN(self.backbone.out_channels, 64)
        self.head = RetinaHead(64, num_classes)
        self.dropout = nn.Dropout(0.1)

    def forward(self, images):
        feats = self.neck(self.backbone(images))
        feats = [self.dropout(f) for f in feats]
        return self.head(feats)

    @torch.no_grad()
    def detect(self, images, anchors):
        logits, deltas = self(images)
        outs = [select_level(logits[0], anchors, deltas[0])]
        return postprocess(outs)


def train_step(model, optimizer, images, labels, target_deltas, num_classes: int = 20):
    logits, deltas = model(images)
    loss = detection_loss(logits, deltas, labels, target_deltas, num_classes)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()


def gradient_penalty(model, images):
    images = images.clone().requires_grad_(True)
    logits, _ = model(images)
    (grad,) = torch.autograd.grad(logits.sum(), images, create_graph=True)
    return grad.pow(2).flatten(1).sum(1).mean()


def make_optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=1e-4)
