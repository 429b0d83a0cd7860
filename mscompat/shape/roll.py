"""``roll`` as :func:`torch.roll`: MindSpore 2.10 has no CPU kernel for ``mint.roll``,
``ops.roll`` or ``Tensor.roll`` ("The kernel Roll unregistered"; Swin Transformer's shifted
windows call it). A roll along a dim is two slices concatenated, so the composite is exact for
every dtype, compiles under ``ms.jit`` and has PyTorch's gradient (the incoming gradient rolled
back)."""

from __future__ import annotations

from typing import Any, Sequence, Tuple, Union

from mindspore import Tensor, ops

from mscompat._checks import check_int, check_tensor, wrap_dim
from mscompat.custom_ops.registry import call, register

__all__ = ["roll"]

IntOrSeq = Union[int, Sequence[int]]


def _ints(value: Any, name: str) -> Tuple[int, ...]:
    if isinstance(value, (tuple, list)):
        return tuple(check_int(v, name) for v in value)
    return (check_int(value, name),)


@register("shape.roll", "composite", note="two slices concatenated per dim")
def _roll(x: Tensor, shifts: Tuple[int, ...], dims: Tuple[int, ...]) -> Tensor:
    for shift, dim in zip(shifts, dims):
        n = x.shape[dim]
        s = shift % n
        if s:
            x = ops.concat((ops.narrow(x, dim, n - s, s), ops.narrow(x, dim, 0, n - s)), dim)
    return x


def roll(input: Tensor, shifts: IntOrSeq, dims: Any = None) -> Tensor:
    """Rotate ``input`` along ``dims`` by ``shifts`` places, as :func:`torch.roll`.

    .. math::
        \\text{out}[\\ldots, (i + s) \\bmod n, \\ldots] = \\text{input}[\\ldots, i, \\ldots]

    Without ``dims`` the input is flattened, rolled and given back its shape. Shifts larger
    than a dim wrap around; negative shifts roll the other way.

    Args:
        input (Tensor[*]): any dtype; 0-d allowed.
        shifts (int or tuple of int): places per dim.
        dims (int or tuple of int, optional): the dims, as many as ``shifts`` (may repeat).

    Returns:
        Tensor: ``input``'s shape and dtype.

    Raises:
        TypeError: ``input`` not a Tensor, a shift or dim not an int.
        ValueError: ``shifts`` and ``dims`` of different lengths, a dim out of range, several
            shifts without dims.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.tensor import roll
        >>> x = ms.Tensor([[1, 2, 3], [4, 5, 6]])
        >>> roll(x, 1, 1).asnumpy().tolist()
        [[3, 1, 2], [6, 4, 5]]
        >>> roll(x, (1, -1), (0, 1)).asnumpy().tolist()
        [[5, 6, 4], [2, 3, 1]]
    """
    x = check_tensor(input, "input")
    s = _ints(shifts, "shifts")
    if dims is None:
        if len(s) != 1:
            raise ValueError(f"shifts must be a single int when dims is None, but got {shifts!r}")
        if x.size == 0 or x.ndim == 0:
            return x
        return call("shape.roll", x.reshape(-1), s, (0,)).reshape(x.shape)
    d = _ints(dims, "dims")
    if len(s) != len(d):
        raise ValueError(
            f"shifts and dims must have the same length, but got {len(s)} and {len(d)}"
        )
    axes = tuple(wrap_dim(v, max(x.ndim, 1), x.ndim, "dims") for v in d)
    if x.size == 0 or x.ndim == 0:
        return x
    return call("shape.roll", x, s, axes)
