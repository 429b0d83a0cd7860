"""``pad`` with PyTorch's four modes, and the padding Cells, as :func:`torch.nn.functional.pad`.

MindSpore 2.10 on CPU has no kernel for ``mint.nn.functional.pad`` nor for the ``mint.nn``
padding Cells ("ConstantPadND / ReflectionPad2D unregistered"); under ``ms.jit`` the reflect
and replicate ones crash the process. Here every mode is a copy along each padded dim:

* ``constant``: the kept part (a slice: negative pads crop) between blocks of ``value``;
* ``reflect``, ``replicate``, ``circular``: a gather with a static index table of the output
  position ``o`` in input coordinates ``i = o - pad_left``, mapped into ``[0, L)`` as
  :math:`|i|` then :math:`2(L-1) - i` (reflect), :math:`\\operatorname{clamp}(i, 0, L-1)`
  (replicate) or :math:`i \\bmod L` (circular).

The values are copies, bit for bit PyTorch's; the gradient of a gather adds the output
gradients that came from one input element (float16 in the order MindSpore adds them).
On Ascend ``mint.nn.functional.pad`` runs where its probe passes (``native``).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_numel, check_tensor, is_int
from mscompat.custom_ops.aot import constant
from mscompat.custom_ops.registry import call, register

__all__ = [
    "CircularPad1d",
    "CircularPad2d",
    "CircularPad3d",
    "ConstantPad1d",
    "ConstantPad2d",
    "ConstantPad3d",
    "ReflectionPad1d",
    "ReflectionPad2d",
    "ReflectionPad3d",
    "ReplicationPad1d",
    "ReplicationPad2d",
    "ReplicationPad3d",
    "ZeroPad1d",
    "ZeroPad2d",
    "ZeroPad3d",
    "pad",
]

_MODES = ("constant", "reflect", "replicate", "circular")
Pads = Tuple[Tuple[int, int], ...]  # (left, right) per dim, from the first padded dim on


# ----------------------------------------------------------------------------- planning


@constexpr
def _plan(shape: Tuple[int, ...], pad: Any, mode: Any, value: Any, is_bool: bool) -> Pads:
    """PyTorch's checks of ``F.pad``; the (left, right) pads of the last ``len(pad) // 2``
    dims, outermost first."""
    if not isinstance(pad, (tuple, list)) or not all(is_int(p) for p in pad):
        raise TypeError(f"pad(): pad must be a tuple of ints, but got {pad!r}")
    if mode not in _MODES:
        raise ValueError(f"pad(): mode must be one of {_MODES}, but got mode={mode!r}")
    if len(pad) % 2:
        raise ValueError(f"pad(): Padding length must be divisible by 2, but got pad={pad!r}")
    ndim, n = len(shape), len(pad) // 2
    if n > ndim:
        raise ValueError(
            f"pad(): Padding length should be less than or equal to two times the input "
            f"dimension but got padding length {len(pad)} and input of dimension {ndim}"
        )
    if mode != "constant":
        if value is not None and value != 0:
            raise ValueError(f'pad(): Padding mode "{mode}" doesn\'t take in value argument')
        if n > 3 or ndim not in (n + 1, n + 2):
            raise ValueError(
                f"pad(): mode={mode!r} pads the last 1, 2 or 3 dims of a 2D/3D, 3D/4D or "
                f"4D/5D input, but got padding length {len(pad)} for a {ndim}D input"
            )
        if is_bool and mode != "circular":
            raise TypeError(f"pad(): mode={mode!r} does not take a bool input")
    elif value is not None and (
        isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating))
    ):
        raise TypeError(f"pad(): value must be a number or None, but got value={value!r}")
    pairs = tuple((int(pad[2 * k]), int(pad[2 * k + 1])) for k in range(n))[::-1]
    out = list(shape)
    for k, (lo, hi) in enumerate(pairs):
        d = ndim - n + k
        length = shape[d]
        size = length + lo + hi
        if size < 0:
            raise ValueError(
                f"pad(): the padded size of dim {d} is {length} + {lo} + {hi} = {size}, "
                f"which is negative (pad={tuple(pad)})"
            )
        if mode == "reflect" and (lo >= length or hi >= length):
            raise ValueError(
                f"pad(): Padding size should be less than the corresponding input dimension, "
                f"but got: padding ({lo}, {hi}) at dimension {d} of input {list(shape)}"
            )
        kept = length - max(-lo, 0) - max(-hi, 0)
        # (PyTorch checks the uncropped size and then reads past the cropped part: garbage)
        if mode == "circular" and (lo > kept or hi > kept):
            raise ValueError(
                f"pad(): Padding value causes wrapping around more than once: padding "
                f"({lo}, {hi}) at dimension {d} of input {list(shape)}"
            )
        empty = length == 0 if mode == "replicate" else kept <= 0  # replicate clamps, uncropped
        if mode in ("replicate", "circular") and empty and size > 0:
            raise ValueError(
                f"pad(): mode={mode!r} cannot pad dim {d} of input {list(shape)}: nothing is "
                f"left of it after the negative pads ({lo}, {hi})"
            )
        out[d] = size
    check_numel(tuple(out), "pad", pad=tuple(pad))
    return pairs


@constexpr
def _padded_shape(shape: Tuple[int, ...], pairs: Pads) -> Tuple[int, ...]:
    first = len(shape) - len(pairs)
    return tuple(s + lo + hi for s, (lo, hi) in zip(shape[first:], pairs))


def _index_table(length: int, lo: int, hi: int, mode: str) -> np.ndarray:
    """Input position of each output position along one dim (see the module docstring)."""
    i = np.arange(-lo, length + hi)
    if mode == "reflect":
        i = np.abs(i)
        i = np.where(i >= length, 2 * (length - 1) - i, i)
    elif mode == "replicate":
        i = np.clip(i, 0, length - 1)
    else:  # circular: PyTorch crops first (negative pads), then wraps the cropped part
        start, kept = max(-lo, 0), length - max(-lo, 0) - max(-hi, 0)
        i = np.mod(np.arange(-max(lo, 0), kept + max(hi, 0)), kept) + start
    return i.astype(np.int32)


@constexpr
def _table(length: int, lo: int, hi: int, mode: str) -> Tensor:
    return Tensor(_index_table(length, lo, hi, mode))


# ----------------------------------------------------------------------------- backends


def _constant_dim(x: Tensor, axis: int, lo: int, hi: int, value: Any) -> Tensor:
    length = x.shape[axis]
    begin, end = max(-lo, 0), length - max(-hi, 0)
    if begin > 0 or end < length:
        x = ops.narrow(x, axis, begin, max(end - begin, 0))
    parts = []
    for size in (max(lo, 0), -1, max(hi, 0)):
        if size == -1:
            parts.append(x)
        elif size > 0:
            shape = x.shape[:axis] + (size,) + x.shape[axis + 1 :]
            parts.append(ops.fill(x.dtype, shape, value))
    return parts[0] if len(parts) == 1 else ops.concat(parts, axis)


@register("layers.pad", "composite", note="slices, fill blocks and static-table gathers")
def _pad_composite(x: Tensor, pairs: Pads, mode: str, value: Any) -> Tensor:
    first = x.ndim - len(pairs)
    for k, (lo, hi) in enumerate(pairs):
        axis = first + k
        if lo == 0 and hi == 0:
            continue
        if mode == "constant":
            x = _constant_dim(x, axis, lo, hi, value)
        elif x.shape[axis] + lo + hi == 0:
            x = ops.narrow(x, axis, 0, 0)
        else:
            x = ops.gather(x, _table(x.shape[axis], lo, hi, mode), axis)
    return x


def _mint_pad_probe() -> None:
    ms.mint.nn.functional.pad(Tensor(np.ones((1, 2, 3), np.float32)), (1, 1), "reflect")


@register(
    "layers.pad",
    "native",
    devices=("Ascend",),
    probe=_mint_pad_probe,
    note="mint.nn.functional.pad (no CPU kernel in MindSpore 2.10)",
)
def _pad_mint(x: Tensor, pairs: Pads, mode: str, value: Any) -> Tensor:
    flat: Tuple[int, ...] = ()
    for lo, hi in reversed(pairs):
        flat = flat + (lo, hi)
    return ms.mint.nn.functional.pad(x, flat, mode, value if mode == "constant" else None)


# ----------------------------------------------------------------------------- front door


def pad(
    input: Tensor, pad: Sequence[int], mode: str = "constant", value: Optional[float] = None
) -> Tensor:
    """Pads ``input``, as :func:`torch.nn.functional.pad`.

    ``pad = (left_last, right_last, left_2nd_last, right_2nd_last, ...)`` pads the last
    ``len(pad) // 2`` dims; a negative pad removes that many elements (crops). Output size of
    a padded dim: :math:`L + \\text{left} + \\text{right}`. Values:

    .. math::
        y_o = \\begin{cases} x_{o - \\text{left}} & \\text{inside} \\\\
        \\text{value} & \\text{constant} \\\\
        x_{r(o - \\text{left})} & \\text{reflect}, r(i) = L - 1 - |L - 1 - |i|| \\\\
        x_{\\min(\\max(o - \\text{left}, 0), L - 1)} & \\text{replicate} \\\\
        x_{(o - \\text{left}) \\bmod L} & \\text{circular (of the cropped part)}
        \\end{cases}

    ``constant`` pads any number of dims of any dtype; the other modes pad the last 1, 2 or 3
    dims of a (batched or not) 2D/3D, 3D/4D or 4D/5D input, with PyTorch's limits (reflect:
    each pad < L; circular: each pad <= L).

    Args:
        input (Tensor): any dtype (not bool with reflect/replicate).
        pad (tuple of int): even length, at most ``2 * input.ndim``.
        mode (str): ``'constant'``, ``'reflect'``, ``'replicate'`` or ``'circular'``.
        value (float, optional): the fill of ``'constant'`` (default 0).

    Returns:
        Tensor: input's dtype, the padded shape.

    Raises:
        TypeError: ``input`` not a Tensor, ``pad`` not ints, ``value`` not a number.
        ValueError: odd or too long ``pad``, unknown ``mode``, a pad too large for the mode,
            a negative padded size, ``value`` with a non-constant mode.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import pad
        >>> x = ms.Tensor([[[0.0, 1.0, 2.0, 3.0]]])
        >>> pad(x, (2, 1), mode="reflect").asnumpy().tolist()
        [[[2.0, 1.0, 0.0, 1.0, 2.0, 3.0, 2.0]]]
        >>> pad(x, (-1, 2), value=9.0).asnumpy().tolist()
        [[[1.0, 2.0, 3.0, 9.0, 9.0]]]
    """
    x = check_tensor(input, "input")
    pairs = _plan(x.shape, pad, mode, value, x.dtype == ms.bool_)
    fill = 0 if value is None else value
    out = x.shape[: x.ndim - len(pairs)] + _padded_shape(x.shape, pairs)
    if x.size == 0 or 0 in out:  # answered here: no kernel sees an empty tensor
        return constant(out, fill, x.dtype)
    return call("layers.pad", x, pairs, mode, fill)


# ----------------------------------------------------------------------------- Cells


def _ntuple_pad(padding: Any, n: int, cls: str) -> Tuple[int, ...]:
    if is_int(padding):
        return (int(padding),) * (2 * n)
    if (
        isinstance(padding, (tuple, list))
        and len(padding) == 2 * n
        and all(is_int(p) for p in padding)
    ):
        return tuple(int(p) for p in padding)
    raise TypeError(f"{cls}: padding must be an int or a tuple of {2 * n} ints, got {padding!r}")


class _PadNd(nn.Cell):
    """PyTorch's ``_ConstantPadNd``/``_ReflectionPadNd``/...: ``padding`` and ``construct``
    calling :func:`pad` with the class's mode."""

    _N = 1
    _MODE = "constant"

    def __init__(self, padding: Union[int, Sequence[int]], value: float = 0.0) -> None:
        super().__init__()
        self.padding = _ntuple_pad(padding, self._N, type(self).__name__)
        self.value = value

    def construct(self, input: Tensor) -> Tensor:
        if self._MODE == "circular" and input.ndim not in (self._N + 1, self._N + 2):
            raise ValueError(
                f"{type(self).__name__}: expected {self._N + 1}D or {self._N + 2}D input "
                f"(got {input.ndim}D input)"
            )
        if self._MODE == "constant":
            return pad(input, self.padding, "constant", self.value)
        return pad(input, self.padding, self._MODE)

    def extend_repr(self) -> str:
        return f"padding={self.padding}"


def _constant_cell(n: int, zero: bool) -> Any:
    """The ``ZeroPad{n}d``/``ConstantPad{n}d`` constructor (``value`` only for the latter)."""
    if zero:

        def init(self: Any, padding: Union[int, Sequence[int]]) -> None:
            _PadNd.__init__(self, padding, 0.0)

    else:

        def init(self: Any, padding: Union[int, Sequence[int]], value: float) -> None:  # type: ignore[misc]
            _PadNd.__init__(self, padding, value)

    return init


class ConstantPad1d(_PadNd):
    """Pads the last dim with ``value``, as :class:`torch.nn.ConstantPad1d`. See :func:`pad`.

    Args:
        padding (int or tuple of 2 ints): (left, right); negative crops.
        value (float): the fill.

    Shape:
        - input: ``(C, W)`` or ``(N, C, W)`` (any rank); output ``W + left + right``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import ConstantPad1d
        >>> ConstantPad1d((1, 0), 5.0)(ms.Tensor([[1.0, 2.0]])).asnumpy().tolist()
        [[5.0, 1.0, 2.0]]
    """

    _N = 1
    __init__ = _constant_cell(1, False)


class ConstantPad2d(_PadNd):
    """Pads the last 2 dims with ``value``, as :class:`torch.nn.ConstantPad2d`. See
    :func:`pad` and :class:`ConstantPad1d`; ``padding``: (left, right, top, bottom).

    Shape:
        - input: ``(C, H, W)`` or ``(N, C, H, W)``; output padded in H and W.
    """

    _N = 2
    __init__ = _constant_cell(2, False)


class ConstantPad3d(_PadNd):
    """Pads the last 3 dims with ``value``, as :class:`torch.nn.ConstantPad3d`. See
    :func:`pad` and :class:`ConstantPad1d`; ``padding``: (left, right, top, bottom, front,
    back).

    Shape:
        - input: ``(C, D, H, W)`` or ``(N, C, D, H, W)``; output padded in D, H and W.
    """

    _N = 3
    __init__ = _constant_cell(3, False)


class ZeroPad1d(_PadNd):
    """Pads the last dim with zeros, as :class:`torch.nn.ZeroPad1d`. See :func:`pad`.

    Shape:
        - input: ``(C, W)`` or ``(N, C, W)``; output ``W + left + right``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import ZeroPad1d
        >>> ZeroPad1d(1)(ms.Tensor([[1.0, 2.0]])).asnumpy().tolist()
        [[0.0, 1.0, 2.0, 0.0]]
    """

    _N = 1
    __init__ = _constant_cell(1, True)


class ZeroPad2d(_PadNd):
    """Pads the last 2 dims with zeros, as :class:`torch.nn.ZeroPad2d`. See :func:`pad`.

    Shape:
        - input: ``(C, H, W)`` or ``(N, C, H, W)``; output padded in H and W.
    """

    _N = 2
    __init__ = _constant_cell(2, True)


class ZeroPad3d(_PadNd):
    """Pads the last 3 dims with zeros, as :class:`torch.nn.ZeroPad3d`. See :func:`pad`.

    Shape:
        - input: ``(C, D, H, W)`` or ``(N, C, D, H, W)``; output padded in D, H and W.
    """

    _N = 3
    __init__ = _constant_cell(3, True)


class ReflectionPad1d(_PadNd):
    """Reflection padding of the last dim, as :class:`torch.nn.ReflectionPad1d`. See
    :func:`pad` (each pad < the input size).

    Shape:
        - input: ``(C, W)`` or ``(N, C, W)``; output ``W + left + right``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import ReflectionPad1d
        >>> ReflectionPad1d(2)(ms.Tensor([[0.0, 1.0, 2.0]])).asnumpy().tolist()
        [[2.0, 1.0, 0.0, 1.0, 2.0, 1.0, 0.0]]
    """

    _N, _MODE = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Reflection padding of the last 2 dims, as :class:`torch.nn.ReflectionPad2d`. See
    :func:`pad`.

    Shape:
        - input: ``(C, H, W)`` or ``(N, C, H, W)``; output padded in H and W.
    """

    _N, _MODE = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Reflection padding of the last 3 dims, as :class:`torch.nn.ReflectionPad3d`. See
    :func:`pad`.

    Shape:
        - input: ``(C, D, H, W)`` or ``(N, C, D, H, W)``; output padded in D, H and W.
    """

    _N, _MODE = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Edge-replicating padding of the last dim, as :class:`torch.nn.ReplicationPad1d`. See
    :func:`pad`.

    Shape:
        - input: ``(C, W)`` or ``(N, C, W)``; output ``W + left + right``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import ReplicationPad1d
        >>> ReplicationPad1d((2, 1))(ms.Tensor([[0.0, 1.0]])).asnumpy().tolist()
        [[0.0, 0.0, 0.0, 1.0, 1.0]]
    """

    _N, _MODE = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Edge-replicating padding of the last 2 dims, as :class:`torch.nn.ReplicationPad2d`.
    See :func:`pad`.

    Shape:
        - input: ``(C, H, W)`` or ``(N, C, H, W)``; output padded in H and W.
    """

    _N, _MODE = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Edge-replicating padding of the last 3 dims, as :class:`torch.nn.ReplicationPad3d`.
    See :func:`pad`.

    Shape:
        - input: ``(C, D, H, W)`` or ``(N, C, D, H, W)``; output padded in D, H and W.
    """

    _N, _MODE = 3, "replicate"


class CircularPad1d(_PadNd):
    """Circular (wrap-around) padding of the last dim, as :class:`torch.nn.CircularPad1d`.
    See :func:`pad` (each pad <= the input size).

    Shape:
        - input: ``(C, W)`` or ``(N, C, W)``; output ``W + left + right``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import CircularPad1d
        >>> CircularPad1d(1)(ms.Tensor([[0.0, 1.0, 2.0]])).asnumpy().tolist()
        [[2.0, 0.0, 1.0, 2.0, 0.0]]
    """

    _N, _MODE = 1, "circular"


class CircularPad2d(_PadNd):
    """Circular padding of the last 2 dims, as :class:`torch.nn.CircularPad2d`. See
    :func:`pad`.

    Shape:
        - input: ``(C, H, W)`` or ``(N, C, H, W)``; output padded in H and W.
    """

    _N, _MODE = 2, "circular"


class CircularPad3d(_PadNd):
    """Circular padding of the last 3 dims, as :class:`torch.nn.CircularPad3d`. See
    :func:`pad`.

    Shape:
        - input: ``(C, D, H, W)`` or ``(N, C, D, H, W)``; output padded in D, H and W.
    """

    _N, _MODE = 3, "circular"
