"""Decode boxes, keep the top-k candidates per level, class-wise NMS."""

import torch
import torchvision
from torchvision.ops import nms


def decode(anchors, deltas, clip: float = 4.135):
    widths = anchors[:, 2] - anchors[:, 0]
    heights = anchors[:, 3] - anchors[:, 1]
    cx = anchors[:, 0] + 0.5 * widths
    cy = anchors[:, 1] + 0.5 * heights
    dx, dy, dw, dh = deltas.unbind(dim=1)
    dw = dw.clamp(max=clip)
    dh = dh.clamp(max=clip)
    pcx, pcy = dx * widths + cx, dy * heights + cy
    pw, ph = torch.exp(dw) * widths, torch.exp(dh) * heights
    return torch.stack([pcx - 0.5 * pw, pcy - 0.5 * ph, pcx + 0.5 * pw, pcy + 0.5 * ph], dim=1)


def select_level(logits, anchors, deltas, score_thr: float = 0.05, pre_nms: int = 1000):
    scores = logits.sigmoid().flatten()
    keep = scores > score_thr
    scores = scores[keep]  # dynamic shape: boolean mask
    idx = torch.nonzero(keep).squeeze(1)
    num_topk = min(pre_nms, idx.numel())
    scores, order = scores.sort(descending=True)
    scores, order = scores[:num_topk], order[:num_topk]
    idx = idx[order]
    num_classes = logits.shape[-1]
    anchor_idx = torch.div(idx, num_classes, rounding_mode="floor")
    labels = idx % num_classes
    boxes = decode(anchors[anchor_idx], deltas[anchor_idx])
    return boxes, scores, labels


def postprocess(level_outputs, iou_thr: float = 0.5, max_det: int = 100):
    boxes, scores, labels = [torch.cat(t) for t in zip(*level_outputs)]
    offsets = labels.to(boxes) * (boxes.max() + 1)
    keep = nms(boxes + offsets[:, None], scores, iou_thr)
    keep = keep[:max_det]
    top_scores, top_idx = torch.topk(scores[keep], k=min(max_det, keep.numel()))
    kept = keep[top_idx]
    alt = torchvision.ops.batched_nms(boxes, scores, labels, iou_thr)
    return boxes[kept], top_scores, labels[kept], alt
