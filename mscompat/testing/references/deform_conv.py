"""torchvision's ``deform_conv2d`` transcribed in plain PyTorch, float64 (no torchvision).

The oracle of the op database entries ``vision.deform_conv2d`` and ``vision.DeformConv2d``:
the obvious computation, vectorised (torchvision's ``test/test_ops.py`` loops over every output
element in Python instead). Each sampling point ``(y, x)`` reads its four corners ``floor(y) +
{0, 1}`` x ``floor(x) + {0, 1}`` with bilinear weights, a corner outside the image reading 0;
torchvision's kernel also returns 0 for a point outside ``(-1, H) x (-1, W)``, which for finite
inputs is what the corner rule already gives (all corners outside, or the one inside weighted 0
at exactly -1), and leaving the rule implicit keeps autograd's gradient torchvision's: the
derivative of the bilinear weights from the right, at exactly -1 too
(``get_coordinate_weight``). Checked once against torchvision 0.28's compiled kernel (figures
on the docs page).
"""

from __future__ import annotations

from typing import Any, Optional

import torch


def _pair(v: Any) -> Any:
    return (int(v), int(v)) if isinstance(v, int) else (int(v[0]), int(v[1]))


def deform_conv2d(
    input: torch.Tensor,
    offset: torch.Tensor,
    weight: torch.Tensor,
    bias: Optional[torch.Tensor] = None,
    stride: Any = 1,
    padding: Any = 0,
    dilation: Any = 1,
    mask: Optional[torch.Tensor] = None,
) -> torch.Tensor:
    """torchvision's ``deform_conv2d`` in float64, returned in ``input``'s dtype."""
    dtype = input.dtype
    x, off, w = input.double(), offset.double(), weight.double()
    n, c, h, wd = x.shape
    cout, cin_g, kh, kw = w.shape
    k = kh * kw
    groups = c // cin_g
    off_groups = off.shape[1] // (2 * k)
    oh, ow = off.shape[2], off.shape[3]
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    i = torch.arange(k) // kw
    j = torch.arange(k) % kw
    base_y = (torch.arange(oh) * sh - ph)[None, :, None] + (i * dh)[:, None, None]  # (K, oh, 1)
    base_x = (torch.arange(ow) * sw - pw)[None, None, :] + (j * dw)[:, None, None]  # (K, 1, ow)
    o = off.reshape(n, off_groups, k, 2, oh, ow)
    y = base_y.double() + o[:, :, :, 0]  # (n, G, K, oh, ow)
    xs = base_x.double() + o[:, :, :, 1]
    y0, x0 = torch.floor(y).detach(), torch.floor(xs).detach()
    ly, lx = y - y0, xs - x0
    image = x.reshape(n, off_groups, c // off_groups, h * wd)
    flat = (n, off_groups, 1, k * oh * ow)
    sampled = torch.zeros(n, off_groups, c // off_groups, k * oh * ow, dtype=torch.float64)
    for dy, dx, corner_w in (
        (0, 0, (1 - ly) * (1 - lx)),
        (0, 1, (1 - ly) * lx),
        (1, 0, ly * (1 - lx)),
        (1, 1, ly * lx),
    ):
        yc, xc = y0 + dy, x0 + dx
        valid = (yc >= 0) & (yc <= h - 1) & (xc >= 0) & (xc <= wd - 1)
        index = torch.where(valid, yc * wd + xc, torch.zeros_like(yc)).long().reshape(flat)
        v = image.gather(3, index.expand(-1, -1, c // off_groups, -1))
        v = torch.where(valid.reshape(flat), v, torch.zeros_like(v))
        sampled = sampled + corner_w.reshape(flat) * v
    if mask is not None:
        sampled = sampled * mask.double().reshape(flat)
    # columns (n, weight group, C_in/groups * K, L): channel-major, then kernel position
    cols = sampled.reshape(n, groups, cin_g * k, oh * ow)
    out = torch.einsum("gok,ngkl->ngol", w.reshape(groups, cout // groups, cin_g * k), cols)
    out = out.reshape(n, cout, oh, ow)
    if bias is not None:
        out = out + bias.double().reshape(1, cout, 1, 1)
    return out.to(dtype)


class DeformConv2d:
    """``torchvision.ops.DeformConv2d`` with the initial values ``weight_init`` and
    ``bias_init`` (mscompat's keyword-only extension: the op database gives both sides' layers
    the same); the other constructor arguments are torchvision's (channels and groups follow
    from the weight's shape)."""

    def __init__(self, weight_init: Any, bias_init: Any = None, **config: Any) -> None:
        self.weight = torch.tensor(weight_init, requires_grad=True)
        self.bias = None if bias_init is None else torch.tensor(bias_init, requires_grad=True)
        self.config = {k: config[k] for k in ("stride", "padding", "dilation") if k in config}

    def __call__(
        self, input: torch.Tensor, offset: torch.Tensor, mask: Optional[torch.Tensor] = None
    ) -> torch.Tensor:
        return deform_conv2d(input, offset, self.weight, self.bias, mask=mask, **self.config)
