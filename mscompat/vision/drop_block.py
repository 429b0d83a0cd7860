"""Structured dropout of torchvision: ``drop_block2d``/``drop_block3d`` (DropBlock) and
``stochastic_depth``, with their Cells ``DropBlock2d``, ``DropBlock3d``, ``StochasticDepth``.

The masks are drawn with MindSpore's random ops (``ops.rand``), so they differ from PyTorch's
for the same seed; their law is torchvision's, and so are every deterministic case
(``training=False``, ``p=0``, ``p=1``), the block structure and the rescaling. Under a fixed
``mindspore.set_seed`` at the start of a process the masks repeat from run to run.

.. note::
    A MindSpore Cell starts in inference mode: call ``cell.set_train()`` (PyTorch modules
    start in training mode) for the Cells to drop anything. ``inplace=True`` is accepted and
    returns a new tensor (MindSpore has no in-place update of a graph value).
"""

from __future__ import annotations

from typing import Any, Tuple

import mindspore as ms
from mindspore import Tensor, nn, ops

from mscompat._checks import check_bool, check_float_tensor, check_int, check_number

__all__ = [
    "DropBlock2d",
    "DropBlock3d",
    "StochasticDepth",
    "drop_block2d",
    "drop_block3d",
    "stochastic_depth",
]


def _check_p(p: Any) -> float:
    p = check_number(p, "p")
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got p={p}")
    return p


def _bernoulli(shape: Tuple[int, ...], prob: float, dtype: Any) -> Tensor:
    """0/1 draws with P(1) = ``prob`` (PyTorch's ``bernoulli_(prob)``), in ``dtype``."""
    return (ops.rand(shape, dtype=ms.float32) < prob).astype(dtype)


def _drop_block(
    input: Tensor, p: Any, block_size: Any, inplace: Any, eps: Any, training: Any, dims: int
) -> Tensor:
    input = check_float_tensor(input, "input")
    p = _check_p(p)
    block_size = check_int(block_size, "block_size")
    check_bool(inplace, "inplace")
    check_bool(training, "training")
    eps = check_number(eps, "eps")
    if input.ndim != dims + 2:
        raise ValueError(
            f"input should be {dims + 2} dimensional, but got {input.ndim} dimensions "
            f"(input.shape={input.shape})"
        )
    if block_size < 1:
        raise ValueError(f"block_size must be >= 1, but got {block_size}")
    if not training or p == 0.0:
        return input
    spatial = tuple(input.shape[2:])
    block_size = min((block_size,) + spatial)
    if block_size % 2 == 0:
        raise ValueError(
            f"block size should be odd, but got {block_size} (min of block_size and the "
            f"spatial sizes {spatial})"
        )
    if input.size == 0:
        return input * 1
    valid = 1
    for s in spatial:
        valid *= s - block_size + 1
    total = 1
    for s in spatial:
        total *= s
    gamma = (p * total) / ((block_size**dims) * valid)
    seeds = tuple(input.shape[:2]) + tuple(s - block_size + 1 for s in spatial)
    noise = _bernoulli(seeds, gamma, ms.float32)
    # torchvision pads the seeds by block_size // 2 and max-pools with the same padding: the
    # same as padding 2 * (block_size // 2) with zeros (the seeds are >= 0) and a valid pool.
    pad = 2 * (block_size // 2)
    noise = ops.pad(noise, (pad,) * (2 * dims))
    if dims == 2:
        pooled = ops.MaxPool(kernel_size=block_size, strides=1, pad_mode="VALID")(noise)
    else:
        pooled = ops.MaxPool3D(kernel_size=block_size, strides=1, pad_mode="VALID")(noise)
    keep = (1 - pooled).astype(input.dtype)
    # PyTorch: numel / (eps + keep.sum()), a Python number over a tensor, is
    # reciprocal(eps + sum) * numel; float16 sums and multiplies in float32, rounded once.
    half = input.dtype == ms.float16
    kept = keep.astype(ms.float32).sum().astype(input.dtype) if half else keep.sum()
    recip = ops.reciprocal(ms.Tensor(eps, input.dtype) + kept)
    if half:
        scale = (recip.astype(ms.float32) * float(keep.size)).astype(input.dtype)
    else:
        scale = recip * ms.Tensor(float(keep.size), input.dtype)
    return input * keep * scale


def drop_block2d(
    input: Tensor,
    p: float,
    block_size: int,
    inplace: bool = False,
    eps: float = 1e-06,
    training: bool = True,
) -> Tensor:
    """DropBlock (`Ghiasi et al., 2018 <https://arxiv.org/abs/1810.12890>`_) on 2-D maps.

    Mirrors ``torchvision.ops.drop_block2d``. Block centres are drawn with probability

    .. math::
        \\gamma = \\frac{p\\,H W}{s^2 (H - s + 1)(W - s + 1)}, \\qquad s = \\min(
        \\text{block\\_size}, H, W)

    in the valid region; each zeroes an :math:`s \\times s` block, and the kept values are
    rescaled by :math:`\\text{numel} / (\\varepsilon + \\text{kept})`.

    Args:
        input (Tensor[N, C, H, W]): float16, float32 or float64.
        p (float): drop probability in :math:`[0, 1]`.
        block_size (int): side of the dropped blocks (odd once clipped to ``H, W``).
        inplace (bool): accepted for compatibility; a new tensor is returned.
        eps (float): added to the kept count. Default: 1e-6.
        training (bool): drop only when True. Default: True.

    Returns:
        Tensor[N, C, H, W]: ``input`` itself when ``training`` is False or ``p == 0``.

    Raises:
        TypeError: ``input`` not a floating Tensor; arguments of the wrong type.
        ValueError: ``p`` outside :math:`[0, 1]`, ``input`` not 4-D, ``block_size < 1`` or
            even after clipping.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import drop_block2d
        >>> x = ms.ops.ones((1, 1, 5, 5), ms.float32)
        >>> bool((drop_block2d(x, 0.5, 3, training=False) == x).all())
        True
        >>> drop_block2d(x, 0.5, 3).shape
        (1, 1, 5, 5)
    """
    return _drop_block(input, p, block_size, inplace, eps, training, 2)


def drop_block3d(
    input: Tensor,
    p: float,
    block_size: int,
    inplace: bool = False,
    eps: float = 1e-06,
    training: bool = True,
) -> Tensor:
    """DropBlock (`Ghiasi et al., 2018 <https://arxiv.org/abs/1810.12890>`_) on 3-D volumes.

    Mirrors ``torchvision.ops.drop_block3d``: as :func:`drop_block2d` with
    :math:`s \\times s \\times s` blocks and
    :math:`\\gamma = p\\,DHW / (s^3 (D - s + 1)(H - s + 1)(W - s + 1))`.

    Args:
        input (Tensor[N, C, D, H, W]): float16, float32 or float64.
        p (float): drop probability in :math:`[0, 1]`.
        block_size (int): side of the dropped blocks (odd once clipped to ``D, H, W``).
        inplace (bool): accepted for compatibility; a new tensor is returned.
        eps (float): added to the kept count. Default: 1e-6.
        training (bool): drop only when True. Default: True.

    Returns:
        Tensor[N, C, D, H, W]: ``input`` itself when ``training`` is False or ``p == 0``.

    Raises:
        TypeError, ValueError: as :func:`drop_block2d` (``input`` must be 5-D).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import drop_block3d
        >>> x = ms.ops.ones((1, 2, 3, 3, 3), ms.float32)
        >>> float(drop_block3d(x, 1.0, 3).sum())  # one block covers everything
        0.0
    """
    return _drop_block(input, p, block_size, inplace, eps, training, 3)


def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
    """Stochastic depth (`Huang et al., 2016 <https://arxiv.org/abs/1603.09382>`_): zero a
    residual branch at random.

    Mirrors ``torchvision.ops.stochastic_depth``: ``mode='row'`` keeps each sample (first
    dim) with probability :math:`1 - p`, ``mode='batch'`` keeps the whole input or none of
    it; what is kept is divided by :math:`1 - p` (not when :math:`p = 1`).

    Args:
        input (Tensor[N, ...]): float16, float32 or float64.
        p (float): probability of zeroing, in :math:`[0, 1]`.
        mode (str): ``'batch'`` or ``'row'``.
        training (bool): drop only when True. Default: True.

    Returns:
        Tensor[N, ...]: ``input`` itself when ``training`` is False or ``p == 0``.

    Raises:
        TypeError: ``input`` not a floating Tensor, ``p`` not a number.
        ValueError: ``p`` outside :math:`[0, 1]`, unknown ``mode``, a 0-d input with
            ``'row'``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.vision import stochastic_depth
        >>> x = ms.ops.ones((4, 3), ms.float32)
        >>> float(stochastic_depth(x, 1.0, "row").sum())
        0.0
        >>> bool((stochastic_depth(x, 0.5, "row", training=False) == x).all())
        True
    """
    input = check_float_tensor(input, "input")
    p = _check_p(p)
    if mode not in ("batch", "row"):
        raise ValueError(f"mode has to be either 'batch' or 'row', but got {mode!r}")
    check_bool(training, "training")
    if mode == "row" and input.ndim == 0:
        raise ValueError("mode='row' needs an input with a batch dim, but input is 0-d")
    if not training or p == 0.0:
        return input
    survival = 1.0 - p
    whole = mode == "batch"
    shape = (1,) * input.ndim if whole else (input.shape[0],) + (1,) * (input.ndim - 1)
    if input.size == 0:
        return input * 1
    noise = _bernoulli(shape, survival, input.dtype)
    if survival > 0.0:
        noise = noise / ms.Tensor(survival, input.dtype)
    return input * noise


class DropBlock2d(nn.Cell):
    """DropBlock on 2-D maps. See :func:`drop_block2d`.

    Drops only in training mode (``cell.set_train()``; a MindSpore Cell starts in inference
    mode, a PyTorch module in training mode).

    Args:
        p (float): drop probability.
        block_size (int): side of the dropped blocks.
        inplace (bool): accepted for compatibility. Default: False.
        eps (float): added to the kept count. Default: 1e-6.

    Shape:
        - input: :math:`(N, C, H, W)`.
        - output: same shape.
    """

    def __init__(self, p: float, block_size: int, inplace: bool = False, eps: float = 1e-06):
        super().__init__()
        self.p = p
        self.block_size = block_size
        self.inplace = inplace
        self.eps = eps

    def construct(self, input: Tensor) -> Tensor:
        return drop_block2d(input, self.p, self.block_size, self.inplace, self.eps, self.training)


class DropBlock3d(DropBlock2d):
    """DropBlock on 3-D volumes. See :func:`drop_block3d`.

    Args:
        p (float): drop probability.
        block_size (int): side of the dropped blocks.
        inplace (bool): accepted for compatibility. Default: False.
        eps (float): added to the kept count. Default: 1e-6.

    Shape:
        - input: :math:`(N, C, D, H, W)`.
        - output: same shape.
    """

    def construct(self, input: Tensor) -> Tensor:
        return drop_block3d(input, self.p, self.block_size, self.inplace, self.eps, self.training)


class StochasticDepth(nn.Cell):
    """Stochastic depth. See :func:`stochastic_depth`.

    Drops only in training mode (``cell.set_train()``).

    Args:
        p (float): probability of zeroing.
        mode (str): ``'batch'`` or ``'row'``.

    Shape:
        - input: :math:`(N, *)`.
        - output: same shape.
    """

    def __init__(self, p: float, mode: str) -> None:
        super().__init__()
        self.p = p
        self.mode = mode

    def construct(self, input: Tensor) -> Tensor:
        return stochastic_depth(input, self.p, self.mode, self.training)
