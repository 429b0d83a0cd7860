"""torchvision 0.28's ``ops`` (boxes, IoU losses, focal loss, layers) in plain PyTorch.

The oracles of ``mscompat.vision``'s op database: the same PyTorch ops in the same order as
torchvision's Python (``torchvision/ops/boxes.py``, ``_utils.py``, ``giou_loss.py``...), so
dtypes (float16 areas in float32, integer boxes divided as float32), NaN of degenerate boxes
and gradients are torchvision's, without installing torchvision. They were checked once
against torchvision 0.28's own functions (``tools``-free script in the vision helper's report).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Dict, List, Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def _upcast(t: Tensor) -> Tensor:
    if t.is_floating_point():
        return t if t.dtype in (torch.float32, torch.float64) else t.float()
    return t if t.dtype in (torch.int32, torch.int64) else t.int()


def _upcast_non_float(t: Tensor) -> Tensor:
    return t if t.dtype in (torch.float32, torch.float64) else t.float()


# ----------------------------------------------------------------------------- boxes


def box_area(boxes: Tensor, fmt: str = "xyxy") -> Tensor:
    boxes = _upcast(boxes)
    if fmt == "xyxy":
        return (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
    return boxes[..., 2] * boxes[..., 3]


def box_convert(boxes: Tensor, in_fmt: str, out_fmt: str) -> Tensor:
    if in_fmt == out_fmt:
        return boxes.clone()
    if in_fmt == "xywh":
        x, y, w, h = boxes.unbind(-1)
        boxes = torch.stack([x, y, x + w, y + h], dim=-1)
    elif in_fmt == "cxcywh":
        cx, cy, w, h = boxes.unbind(-1)
        boxes = torch.stack((cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h), dim=-1)
    if out_fmt == "xyxy":
        return boxes
    x1, y1, x2, y2 = boxes.unbind(-1)
    if out_fmt == "xywh":
        return torch.stack((x1, y1, x2 - x1, y2 - y1), dim=-1)
    return torch.stack(((x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1), dim=-1)


def _corners(b: Tensor, fmt: str) -> Tuple[Tensor, Tensor]:
    if fmt == "xyxy":
        return b[..., None, :2], b[..., None, 2:]
    if fmt == "xywh":
        return b[..., None, :2], b[..., None, :2] + b[..., None, 2:]
    return b[..., None, :2] - b[..., None, 2:] / 2, b[..., None, :2] + b[..., None, 2:] / 2


def _inter_union(boxes1: Tensor, boxes2: Tensor, fmt: str = "xyxy") -> Tuple[Tensor, Tensor]:
    area1, area2 = box_area(boxes1, fmt), box_area(boxes2, fmt)
    lt1, rb1 = _corners(boxes1, fmt)
    lt2, rb2 = _corners(boxes2, fmt)
    # _corners gives (..., N, 1, 2); the second set goes to (..., 1, M, 2)
    lt = torch.max(lt1, lt2.transpose(-2, -3))
    rb = torch.min(rb1, rb2.transpose(-2, -3))
    wh = _upcast(rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    return inter, area1[..., None] + area2[..., None, :] - inter


def box_iou(boxes1: Tensor, boxes2: Tensor, fmt: str = "xyxy") -> Tensor:
    inter, union = _inter_union(boxes1, boxes2, fmt)
    return inter / union


def _enclosing_wh(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    lti = torch.min(boxes1[..., None, :2], boxes2[..., None, :, :2])
    rbi = torch.max(boxes1[..., None, 2:], boxes2[..., None, :, 2:])
    return _upcast(rbi - lti).clamp(min=0)


def generalized_box_iou(boxes1: Tensor, boxes2: Tensor) -> Tensor:
    inter, union = _inter_union(boxes1, boxes2)
    iou = inter / union
    whi = _enclosing_wh(boxes1, boxes2)
    areai = whi[..., 0] * whi[..., 1]
    return iou - (areai - union) / areai


def _diou_iou(boxes1: Tensor, boxes2: Tensor, eps: float) -> Tuple[Tensor, Tensor]:
    iou = box_iou(boxes1, boxes2)
    whi = _enclosing_wh(boxes1, boxes2)
    diag = (whi[..., 0] ** 2) + (whi[..., 1] ** 2) + eps
    x_p = (boxes1[..., 0] + boxes1[..., 2]) / 2
    y_p = (boxes1[..., 1] + boxes1[..., 3]) / 2
    x_g = (boxes2[..., 0] + boxes2[..., 2]) / 2
    y_g = (boxes2[..., 1] + boxes2[..., 3]) / 2
    centers = (_upcast(x_p[..., None] - x_g[..., None, :]) ** 2) + (
        _upcast(y_p[..., None] - y_g[..., None, :]) ** 2
    )
    return iou - centers / diag, iou


def distance_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
    return _diou_iou(_upcast(boxes1), _upcast(boxes2), eps)[0]


def complete_box_iou(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tensor:
    boxes1, boxes2 = _upcast(boxes1), _upcast(boxes2)
    diou, iou = _diou_iou(boxes1, boxes2, eps)
    w_pred = boxes1[..., None, 2] - boxes1[..., None, 0]
    h_pred = boxes1[..., None, 3] - boxes1[..., None, 1]
    w_gt = boxes2[..., None, :, 2] - boxes2[..., None, :, 0]
    h_gt = boxes2[..., None, :, 3] - boxes2[..., None, :, 1]
    v = (4 / (math.pi**2)) * torch.pow(torch.atan(w_pred / h_pred) - torch.atan(w_gt / h_gt), 2)
    with torch.no_grad():
        alpha = v / (1 - iou + v + eps)
    return diou - alpha * v


def clip_boxes_to_image(boxes: Tensor, size: Tuple[int, int]) -> Tensor:
    height, width = size
    x = boxes[..., 0::2].clamp(min=0, max=width)
    y = boxes[..., 1::2].clamp(min=0, max=height)
    return torch.stack((x, y), dim=boxes.dim()).reshape(boxes.shape)


def remove_small_boxes(
    boxes: Tensor, min_size: float, *, size: Optional[int] = None, fill_value: int = -1
) -> Tensor:
    """torchvision's; with ``size``, padded as PyTorch's ``nonzero_static`` pads."""
    ws, hs = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    keep = torch.where((ws >= min_size) & (hs >= min_size))[0]
    if size is None:
        return keep
    out = torch.full((size,), fill_value, dtype=torch.int64)
    n = min(size, keep.numel())
    out[:n] = keep[:n]
    return out


def masks_to_boxes(masks: Tensor) -> Tensor:
    """Plainly: the first and last nonzero row and column of each mask, one mask at a time."""
    if masks.numel() == 0:
        return torch.zeros((0, 4), dtype=torch.float)
    out = torch.zeros((masks.shape[0], 4), dtype=torch.float)
    for i, m in enumerate(masks):
        ys, xs = torch.where(m != 0)
        if ys.numel():
            out[i] = torch.stack([xs.min(), ys.min(), xs.max(), ys.max()]).float()
    return out


# ----------------------------------------------------------------------------- losses


def _loss_inter_union(boxes1: Tensor, boxes2: Tensor) -> Tuple[Tensor, Tensor]:
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    xk1, yk1 = torch.max(x1, x1g), torch.max(y1, y1g)
    xk2, yk2 = torch.min(x2, x2g), torch.min(y2, y2g)
    inter = torch.zeros_like(x1)
    mask = (yk2 > yk1) & (xk2 > xk1)
    inter[mask] = (xk2[mask] - xk1[mask]) * (yk2[mask] - yk1[mask])
    union = (x2 - x1) * (y2 - y1) + (x2g - x1g) * (y2g - y1g) - inter
    return inter, union


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean() if loss.numel() > 0 else 0.0 * loss.sum()
    if reduction == "sum":
        return loss.sum()
    return loss


def generalized_box_iou_loss(
    boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7
) -> Tensor:
    boxes1, boxes2 = _upcast_non_float(boxes1), _upcast_non_float(boxes2)
    inter, union = _loss_inter_union(boxes1, boxes2)
    iou = inter / (union + eps)
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    area_c = (torch.max(x2, x2g) - torch.min(x1, x1g)) * (torch.max(y2, y2g) - torch.min(y1, y1g))
    return _reduce(1 - (iou - ((area_c - union) / (area_c + eps))), reduction)


def _diou_loss(boxes1: Tensor, boxes2: Tensor, eps: float = 1e-7) -> Tuple[Tensor, Tensor]:
    inter, union = _loss_inter_union(boxes1, boxes2)
    iou = inter / (union + eps)
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    diag = (
        ((torch.max(x2, x2g) - torch.min(x1, x1g)) ** 2)
        + ((torch.max(y2, y2g) - torch.min(y1, y1g)) ** 2)
        + eps
    )
    centers = (((x2 + x1) / 2 - (x1g + x2g) / 2) ** 2) + (((y2 + y1) / 2 - (y1g + y2g) / 2) ** 2)
    return 1 - iou + (centers / diag), iou


def distance_box_iou_loss(
    boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7
) -> Tensor:
    boxes1, boxes2 = _upcast_non_float(boxes1), _upcast_non_float(boxes2)
    return _reduce(_diou_loss(boxes1, boxes2, eps)[0], reduction)


def complete_box_iou_loss(
    boxes1: Tensor, boxes2: Tensor, reduction: str = "none", eps: float = 1e-7
) -> Tensor:
    boxes1, boxes2 = _upcast_non_float(boxes1), _upcast_non_float(boxes2)
    diou_loss, iou = _diou_loss(boxes1, boxes2)  # torchvision passes no eps here
    x1, y1, x2, y2 = boxes1.unbind(dim=-1)
    x1g, y1g, x2g, y2g = boxes2.unbind(dim=-1)
    v = (4 / (math.pi**2)) * torch.pow(
        torch.atan((x2g - x1g) / (y2g - y1g)) - torch.atan((x2 - x1) / (y2 - y1)), 2
    )
    with torch.no_grad():
        alpha = v / (1 - iou + v + eps)
    return _reduce(diou_loss + alpha * v, reduction)


def sigmoid_focal_loss(
    inputs: Tensor,
    targets: Tensor,
    alpha: float = 0.25,
    gamma: float = 2,
    reduction: str = "none",
) -> Tensor:
    targets = targets.to(inputs.dtype)
    p = torch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if alpha >= 0:
        loss = (alpha * targets + (1 - alpha) * (1 - targets)) * loss
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


# ----------------------------------------------------------------------------- layers


def drop_block2d(
    input: Tensor,
    p: float,
    block_size: int,
    inplace: bool = False,
    eps: float = 1e-6,
    training: bool = True,
) -> Tensor:
    """Deterministic cases only (``training=False``, ``p=0``, all seeds drawn): the random
    mask is checked by properties in ``tests/test_vision_layers.py``."""
    return _drop_block(input, p, block_size, eps, training, 2)


def drop_block3d(
    input: Tensor,
    p: float,
    block_size: int,
    inplace: bool = False,
    eps: float = 1e-6,
    training: bool = True,
) -> Tensor:
    return _drop_block(input, p, block_size, eps, training, 3)


def _drop_block(
    x: Tensor, p: float, block_size: int, eps: float, training: bool, dims: int
) -> Tensor:
    """torchvision's algorithm where it is deterministic: ``gamma == 1`` (``p == 1`` with
    ``block_size`` 1 or covering the input) draws every seed."""
    if not training or p == 0.0:
        return x
    spatial = x.shape[2:]
    bs = min([block_size, *spatial])
    valid = math.prod(s - bs + 1 for s in spatial)
    gamma = (p * math.prod(spatial)) / ((bs**dims) * valid)
    if gamma != 1.0:
        raise ValueError(f"the reference is random for gamma={gamma} (deterministic for 1)")
    noise = torch.ones((*x.shape[:2], *(s - bs + 1 for s in spatial)), dtype=x.dtype)
    noise = F.pad(noise, [bs // 2] * (2 * dims), value=0)
    pool = F.max_pool2d if dims == 2 else F.max_pool3d
    noise = pool(noise.float(), kernel_size=bs, stride=1, padding=bs // 2).to(x.dtype)
    noise = 1 - noise
    normalize_scale = noise.numel() / (eps + noise.sum())
    return x * noise * normalize_scale


def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
    if not training or p == 0.0:
        return input
    if p != 1.0:
        raise ValueError("the reference covers p in {0, 1} only (random otherwise)")
    size = [input.shape[0]] + [1] * (input.ndim - 1) if mode == "row" else [1] * input.ndim
    return input * torch.zeros(size, dtype=input.dtype)  # bernoulli(0), no division


class FrozenBatchNorm2d(nn.Module):
    """torchvision's ``FrozenBatchNorm2d``; ``state``: the four buffers as NumPy arrays (their
    dtype is kept)."""

    def __init__(self, num_features: int, eps: float = 1e-5, state: Optional[Any] = None) -> None:
        super().__init__()
        self.eps = eps
        for name, init in (
            ("weight", torch.ones),
            ("bias", torch.zeros),
            ("running_mean", torch.zeros),
            ("running_var", torch.ones),
        ):
            value = init(num_features) if state is None else torch.from_numpy(state[name])
            self.register_buffer(name, value)

    weight: Tensor
    bias: Tensor
    running_mean: Tensor
    running_var: Tensor

    def forward(self, x: Tensor) -> Tensor:
        w = self.weight.reshape(1, -1, 1, 1)
        b = self.bias.reshape(1, -1, 1, 1)
        rv = self.running_var.reshape(1, -1, 1, 1)
        rm = self.running_mean.reshape(1, -1, 1, 1)
        scale = w * (rv + self.eps).rsqrt()
        bias = b - rm * scale
        return x * scale + bias


def _load(module: nn.Module, state: Any) -> nn.Module:
    with torch.no_grad():
        for name, value in (state or {}).items():
            owner = module
            *path, leaf = name.split(".")
            for part in path:
                owner = getattr(owner, part)
            getattr(owner, leaf).copy_(torch.from_numpy(value))
    return module


_NORMS: Dict[Any, Any] = {"bn": nn.BatchNorm2d, "frozen": FrozenBatchNorm2d, None: None}
_ACTS: Dict[Any, Any] = {
    "relu": nn.ReLU,
    "hardswish": nn.Hardswish,
    "sigmoid": nn.Sigmoid,
    "hardsigmoid": nn.Hardsigmoid,
    None: None,
}


def conv2d_norm_activation(
    in_channels: int,
    out_channels: int,
    kernel_size: Any = 3,
    stride: Any = 1,
    padding: Any = None,
    groups: int = 1,
    norm: Any = "bn",
    act: Any = "relu",
    dilation: Any = 1,
    bias: Optional[bool] = None,
    state: Any = None,
    train: bool = False,
) -> nn.Module:
    """torchvision's ``Conv2dNormActivation`` (plain ``nn.Sequential``) with ``state``."""
    if padding is None:
        if isinstance(kernel_size, int) and isinstance(dilation, int):
            padding = (kernel_size - 1) // 2 * dilation
        else:
            ks = (kernel_size,) * 2 if isinstance(kernel_size, int) else kernel_size
            dl = (dilation,) * 2 if isinstance(dilation, int) else dilation
            padding = tuple((ks[i] - 1) // 2 * dl[i] for i in range(2))
    if bias is None:
        bias = norm is None
    layers: List[nn.Module] = [
        nn.Conv2d(
            in_channels,
            out_channels,
            kernel_size,
            stride,
            padding,
            dilation=dilation,
            groups=groups,
            bias=bias,
        )
    ]
    if norm is not None:
        layers.append(_NORMS[norm](out_channels))
    if act is not None:
        layers.append(_ACTS[act]())
    module = _load(nn.Sequential(*layers), state or {})
    return module.train(train)


class _SqueezeExcitation(nn.Module):
    def __init__(self, input_channels: int, squeeze_channels: int, act: str, scale_act: str):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = _ACTS[act]()
        self.scale_activation = _ACTS[scale_act]()

    def forward(self, x: Tensor) -> Tensor:
        scale = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return scale * x


def squeeze_excitation(
    input_channels: int,
    squeeze_channels: int,
    act: str = "relu",
    scale_act: str = "sigmoid",
    state: Any = None,
) -> Callable[..., Tensor]:
    """torchvision's ``SqueezeExcitation`` with ``state``."""
    return _load(_SqueezeExcitation(input_channels, squeeze_channels, act, scale_act), state)


def drop_block_module(
    p: float, block_size: int, train: bool = True, dims: int = 2, **kwargs: Any
) -> Callable[..., Tensor]:
    def call(x: Tensor) -> Tensor:
        fn = drop_block2d if dims == 2 else drop_block3d
        return fn(x, p, block_size, training=train, **kwargs)

    return call


def stochastic_depth_module(p: float, mode: str, train: bool = True) -> Callable[..., Tensor]:
    return lambda x: stochastic_depth(x, p, mode, train)
