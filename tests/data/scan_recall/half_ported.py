# A half-ported MindSpore file: what `mscompat scan` flags on the chosen backend.
import mindspore as ms
import mindspore.mint.nn.functional as F
from mindspore import mint, nn, ops


class Shift(nn.Cell):
    def __init__(self):
        super().__init__()
        self.proj = nn.Dense(8, 8)

    def construct(self, x):
        y = mint.roll(x, 1, 0)
        y = F.pad(y, (1, 1))
        z = ops.sort(y)[0]
        t = ms.Tensor([1.0])
        return mint.cumsum(self.proj(z), 0) + t
