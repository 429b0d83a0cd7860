"""The randomised leaky ReLU as ``torch.nn.functional.rrelu`` and ``torch.nn.RReLU``.

On MindSpore 2.10 ``ops.rrelu`` has no ``training`` flag and ``nn.RReLU`` draws random slopes
in evaluation too. Here evaluation is deterministic (the mean slope, as PyTorch), and training
draws one slope per element from MindSpore's generator (``mindspore.set_seed``).
"""

from __future__ import annotations

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import check_bool
from mscompat.custom_ops.registry import register
from mscompat.layers._pointwise import apply, const, number

__all__ = ["RReLU", "rrelu", "rrelu_"]


@register("layers.rrelu", "composite", note="uniform slopes from MindSpore's seeded generator")
def _rrelu_composite(x: Tensor, lower: float, upper: float, training: bool) -> Tensor:
    w = x.astype(ms.float32) if x.dtype == ms.float16 else x
    if training:
        slope = ops.rand_like(w) * const(upper, w.dtype, plus=-lower) + const(lower, w.dtype)
        # PyTorch: x <= 0 takes a slope (NaN keeps gradient 1)
        return ops.where(w <= 0, w * slope, w).astype(x.dtype)
    slope = const(lower, w.dtype, plus=upper, over=2.0)
    # evaluation is leaky_relu: x > 0 keeps x (NaN takes the slope's gradient)
    return ops.where(w > 0, w, w * slope).astype(x.dtype)


def rrelu(
    input: Tensor,
    lower: float = 0.125,
    upper: float = 0.3333333333333333,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomised leaky ReLU, as :func:`torch.nn.functional.rrelu`.

    ``training=False``: ``leaky_relu`` with slope :math:`(l + u) / 2` (deterministic, unlike
    ``ops.rrelu``). ``training=True``: each non-positive element is multiplied by its own slope
    drawn from :math:`U(l, u)` by MindSpore's generator (``mindspore.set_seed``).

    Raises:
        ValueError: ``lower > upper``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import rrelu
        >>> rrelu(ms.Tensor([-4.0, 1.0]), 0.25, 0.75).asnumpy().tolist()
        [-2.0, 1.0]
    """
    low, high = number(lower, "lower"), number(upper, "upper")
    if low > high:
        raise ValueError(f"rrelu(): lower must be <= upper, but got lower={low}, upper={high}")
    return apply("layers.rrelu", input, inplace, low, high, check_bool(training, "training"))


class RReLU(nn.Cell):
    """As :class:`torch.nn.RReLU`: random slopes in training mode (``set_train(True)``), their
    mean in evaluation. See :func:`rrelu`.

    Shape:
        - input: :math:`(*)`; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import RReLU
        >>> RReLU(0.25, 0.75)(ms.Tensor([-4.0])).asnumpy().tolist()
        [-2.0]
    """

    def __init__(
        self, lower: float = 0.125, upper: float = 0.3333333333333333, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower, self.upper = number(lower, "lower"), number(upper, "upper")
        if self.lower > self.upper:
            raise ValueError(f"lower must be <= upper, but got lower={lower}, upper={upper}")
        self.inplace = check_bool(inplace, "inplace")

    def construct(self, input: Tensor) -> Tensor:
        return rrelu(input, self.lower, self.upper, self.training)


rrelu_ = rrelu  # PyTorch's in-place name: the same function (a new Tensor is returned)
