"""Feature pyramid neck: lateral 1x1 convs, top-down nearest upsampling by 2, P6/P7."""

import torch.nn.functional as F
from torch import nn


class FPN(nn.Module):
    def __init__(self, in_channels, out_channels: int = 64) -> None:
        super().__init__()
        self.lateral = nn.ModuleList(nn.Conv2d(c, out_channels, 1) for c in in_channels)
        self.output = nn.ModuleList(
            nn.Conv2d(out_channels, out_channels, 3, padding=1) for _ in in_channels
        )
        self.p6 = nn.Conv2d(out_channels, out_channels, 3, stride=2, padding=1)
        self.p7 = nn.Conv2d(out_channels, out_channels, 3, stride=2, padding=1)

    def forward(self, feats):
        laterals = [conv(f) for conv, f in zip(self.lateral, feats)]
        for i in range(len(laterals) - 1, 0, -1):
            # the classic FPN top-down path: an int scale factor, nearest mode
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], scale_factor=2)
        outs = [conv(x) for conv, x in zip(self.output, laterals)]
        p6 = self.p6(outs[-1])
        p7 = self.p7(F.relu(p6))
        return outs + [p6, p7]
