"""Channel and pixel shuffles, as ``torch.nn.functional.channel_shuffle``,
``pixel_shuffle`` and ``pixel_unshuffle`` and their Cells.

Pure rearrangements (a reshape, a transpose, a reshape), so the values are PyTorch's bit for
bit in every dtype and the gradient is the inverse rearrangement. MindSpore 2.10's
``ops.channel_shuffle`` has no gradient ("ChannelShuffle's bprop not defined") and
``mint.nn.functional`` has no ``pixel_unshuffle``/``channel_shuffle``.
"""

from __future__ import annotations

from typing import Any, Tuple

from mindspore import Tensor, nn, ops

from mscompat._checks import check_tensor, is_int

__all__ = [
    "ChannelShuffle",
    "PixelShuffle",
    "PixelUnshuffle",
    "channel_shuffle",
    "pixel_shuffle",
    "pixel_unshuffle",
]


def _positive(value: Any, name: str, fn: str) -> int:
    if not is_int(value):
        raise TypeError(f"{fn}(): {name} must be an int, but got {value!r}")
    if value <= 0:
        raise ValueError(f"{fn}(): {name} must be positive, but got {name}={value}")
    return int(value)


def _at_least_3d(x: Any, fn: str) -> Tensor:
    x = check_tensor(x, "input")
    if x.ndim < 3:
        raise ValueError(
            f"{fn}(): expects input to have at least 3 dimensions, but got input with "
            f"{x.ndim} dimension(s)"
        )
    return x


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """Channel shuffle (ShuffleNet), as :func:`torch.nn.functional.channel_shuffle`.

    Channel :math:`c = g \\cdot (C/G) + j` of the input becomes channel :math:`j G + g`:
    ``(N, G, C/G, *) -> (N, C/G, G, *)``.

    Args:
        input (Tensor[N, C, ...]): any dtype, at least 3 dims.
        groups (int): :math:`G`, divides ``C``.

    Returns:
        Tensor[N, C, ...]: input's dtype.

    Raises:
        TypeError: ``input`` not a Tensor, ``groups`` not an int.
        ValueError: fewer than 3 dims, ``groups <= 0``, ``C`` not divisible by ``groups``.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.shape import channel_shuffle
        >>> x = ms.Tensor(np.arange(6, dtype=np.float32).reshape(1, 6, 1))
        >>> channel_shuffle(x, 3).asnumpy().reshape(-1).tolist()
        [0.0, 2.0, 4.0, 1.0, 3.0, 5.0]
    """
    x = _at_least_3d(input, "channel_shuffle")
    g = _positive(groups, "groups", "channel_shuffle")
    c = x.shape[1]
    if c % g:
        raise ValueError(
            f"channel_shuffle(): Number of channels must be divisible by groups. Got {c} "
            f"channels and {g} groups."
        )
    if x.size == 0:
        return x
    rest = x.shape[2:]
    y = x.reshape((x.shape[0], g, c // g) + rest)
    return ops.swapaxes(y, 1, 2).reshape(x.shape)


def _shuffle_shapes(
    x: Tensor, r: int, up: bool, fn: str
) -> Tuple[Tuple[int, ...], Tuple[int, ...]]:
    lead, (c, h, w) = x.shape[:-3], x.shape[-3:]
    if up:
        if c % (r * r):
            raise ValueError(
                f"{fn}(): expects its input's 'channel' dimension to be divisible by the "
                f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
            )
        return lead + (c // (r * r), r, r, h, w), lead + (c // (r * r), h * r, w * r)
    for name, size in (("height", h), ("width", w)):
        if size % r:
            raise ValueError(
                f"{fn}(): expects {name} to be divisible by downscale_factor, but "
                f"input.size({-2 if name == 'height' else -1})={size} is not divisible by {r}"
            )
    return lead + (c, h // r, r, w // r, r), lead + (c * r * r, h // r, w // r)


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """Sub-pixel upscaling, as :func:`torch.nn.functional.pixel_shuffle`.

    ``(*, C r^2, H, W) -> (*, C, H r, W r)``:
    :math:`y_{c, h r + i, w r + j} = x_{c r^2 + i r + j, h, w}`.

    Args:
        input (Tensor[..., C r^2, H, W]): any dtype, at least 3 dims.
        upscale_factor (int): :math:`r > 0`.

    Returns:
        Tensor[..., C, H r, W r]: input's dtype.

    Raises:
        TypeError: ``input`` not a Tensor, ``upscale_factor`` not an int.
        ValueError: fewer than 3 dims, ``r <= 0``, channels not divisible by :math:`r^2`.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.shape import pixel_shuffle
        >>> x = ms.Tensor(np.arange(4, dtype=np.float32).reshape(4, 1, 1))
        >>> pixel_shuffle(x, 2).asnumpy().tolist()
        [[[0.0, 1.0], [2.0, 3.0]]]
    """
    x = _at_least_3d(input, "pixel_shuffle")
    r = _positive(upscale_factor, "upscale_factor", "pixel_shuffle")
    split, out = _shuffle_shapes(x, r, True, "pixel_shuffle")
    if x.size == 0:
        return x.reshape(out)
    k = len(split) - 5  # leading dims
    perm = tuple(range(k)) + (k, k + 3, k + 1, k + 4, k + 2)
    return ops.transpose(x.reshape(split), perm).reshape(out)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """The inverse of :func:`pixel_shuffle`, as :func:`torch.nn.functional.pixel_unshuffle`.

    ``(*, C, H r, W r) -> (*, C r^2, H, W)``.

    Args:
        input (Tensor[..., C, H r, W r]): any dtype, at least 3 dims.
        downscale_factor (int): :math:`r > 0`.

    Returns:
        Tensor[..., C r^2, H, W]: input's dtype.

    Raises:
        TypeError: ``input`` not a Tensor, ``downscale_factor`` not an int.
        ValueError: fewer than 3 dims, ``r <= 0``, height or width not divisible by ``r``.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.shape import pixel_unshuffle
        >>> x = ms.Tensor(np.arange(4, dtype=np.float32).reshape(1, 2, 2))
        >>> pixel_unshuffle(x, 2).asnumpy().reshape(-1).tolist()
        [0.0, 1.0, 2.0, 3.0]
    """
    x = _at_least_3d(input, "pixel_unshuffle")
    r = _positive(downscale_factor, "downscale_factor", "pixel_unshuffle")
    split, out = _shuffle_shapes(x, r, False, "pixel_unshuffle")
    if x.size == 0:
        return x.reshape(out)
    k = len(split) - 5
    perm = tuple(range(k)) + (k, k + 2, k + 4, k + 1, k + 3)
    return ops.transpose(x.reshape(split), perm).reshape(out)


class ChannelShuffle(nn.Cell):
    """Channel shuffle Cell, as :class:`torch.nn.ChannelShuffle`. See :func:`channel_shuffle`.

    Shape:
        - input: ``(N, C, *)``; output: the same.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.shape import ChannelShuffle
        >>> x = ms.Tensor(np.arange(4, dtype=np.float32).reshape(1, 4, 1))
        >>> ChannelShuffle(2)(x).asnumpy().reshape(-1).tolist()
        [0.0, 2.0, 1.0, 3.0]
    """

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def construct(self, input: Tensor) -> Tensor:
        return channel_shuffle(input, self.groups)


class PixelShuffle(nn.Cell):
    """Sub-pixel upscaling Cell, as :class:`torch.nn.PixelShuffle`. See :func:`pixel_shuffle`.

    Shape:
        - input: ``(*, C r^2, H, W)``; output ``(*, C, H r, W r)``.
    """

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def construct(self, input: Tensor) -> Tensor:
        return pixel_shuffle(input, self.upscale_factor)


class PixelUnshuffle(nn.Cell):
    """The inverse of :class:`PixelShuffle`, as :class:`torch.nn.PixelUnshuffle`. See
    :func:`pixel_unshuffle`.

    Shape:
        - input: ``(*, C, H r, W r)``; output ``(*, C r^2, H, W)``.
    """

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def construct(self, input: Tensor) -> Tensor:
        return pixel_unshuffle(input, self.downscale_factor)
