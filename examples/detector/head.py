"""RetinaNet head with a squeeze-and-excitation gate (adaptive pooling)."""

import math

import torch
from torch import nn
from torch.nn import functional


class SEGate(nn.Module):
    def __init__(self, channels: int, reduction: int = 4) -> None:
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Linear(channels, channels // reduction)
        self.fc2 = nn.Linear(channels // reduction, channels)

    def forward(self, x):
        w = self.pool(x).flatten(1)
        w = torch.sigmoid(self.fc2(functional.relu(self.fc1(w))))
        return x * w.view(w.shape[0], -1, 1, 1)


class RetinaHead(nn.Module):
    def __init__(self, channels: int, num_classes: int, num_anchors: int = 9) -> None:
        super().__init__()
        self.num_classes = num_classes
        cls, reg = [], []
        for _ in range(2):
            cls += [
                nn.Conv2d(channels, channels, 3, padding=1),
                nn.GroupNorm(8, channels),
                nn.ReLU(),
            ]
            reg += [
                nn.Conv2d(channels, channels, 3, padding=1),
                nn.GroupNorm(8, channels),
                nn.ReLU(),
            ]
        self.cls_tower = nn.Sequential(*cls)
        self.reg_tower = nn.Sequential(*reg)
        self.gate = SEGate(channels)
        self.cls_logits = nn.Conv2d(channels, num_anchors * num_classes, 3, padding=1)
        self.bbox_pred = nn.Conv2d(channels, num_anchors * 4, 3, padding=1)
        prior = 0.01
        nn.init.constant_(self.cls_logits.bias, -math.log((1 - prior) / prior))

    def forward(self, feats):
        logits, deltas = [], []
        for x in feats:
            x = self.gate(x)
            n = x.shape[0]
            c = self.cls_logits(self.cls_tower(x))
            r = self.bbox_pred(self.reg_tower(x))
            logits.append(c.permute(0, 2, 3, 1).reshape(n, -1, self.num_classes))
            deltas.append(r.permute(0, 2, 3, 1).reshape(n, -1, 4))
        return torch.cat(logits, dim=1), torch.cat(deltas, dim=1)
