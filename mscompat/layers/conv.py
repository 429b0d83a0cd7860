"""Convolutions and transposed convolutions, as ``torch.nn.functional.conv{1,2,3}d``,
``conv_transpose{1,2,3}d`` and the ``torch.nn`` Cells ``Conv{1,2,3}d``,
``ConvTranspose{1,2,3}d``: PyTorch's weight layouts, ``padding='same'``/``'valid'``,
``output_padding``, groups, dilation, ``padding_mode``, unbatched inputs, float16/32/64.

``mint.nn.functional.conv*`` has no CPU kernel in MindSpore 2.10; ``ops.conv2d`` runs but is
15-70x slower than PyTorch on CPU and has no float64; MindSpore's ``conv_transpose2d`` takes
another weight layout. Each call is dispatched (``layers.conv2d``...): see
:mod:`mscompat.layers._conv_impl` for the backends and why.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat._checks import check_float_tensor, check_tensor, is_int
from mscompat.custom_ops.registry import call
from mscompat.layers._conv_impl import CONV, CONV_T

__all__ = [
    "conv1d",
    "conv2d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "conv_transpose3d",
]

Ints = Tuple[int, ...]
IntOrTuple = Union[int, Sequence[int]]


# ----------------------------------------------------------------------------- validation


def _ints(value: Any, nd: int, name: str, fn: str, minimum: int) -> Ints:
    """An int or a sequence of ``nd`` ints (or of one, repeated, as PyTorch), each
    ``>= minimum``."""
    if is_int(value):
        out: Ints = (int(value),) * nd
    elif isinstance(value, (tuple, list)) and all(is_int(v) for v in value):
        out = tuple(int(v) for v in value)
        if len(out) == 1:
            out = out * nd
        if len(out) != nd:
            raise ValueError(f"{fn}(): {name} must have {nd} elements, but got {name}={value!r}")
    else:
        raise TypeError(
            f"{fn}(): {name} must be an int or a tuple of {nd} ints, but got "
            f"{type(value).__name__} ({name}={value!r})"
        )
    if min(out) < minimum:
        what = "positive" if minimum == 1 else "non-negative"
        raise ValueError(f"{fn}(): {name} must be {what}, but got {name}={value!r}")
    return out


def _groups(groups: Any, fn: str) -> int:
    if not is_int(groups):
        raise TypeError(f"{fn}(): groups must be an int, but got {type(groups).__name__}")
    if groups < 1:
        raise ValueError(f"{fn}(): groups must be a positive integer, but got groups={groups}")
    return int(groups)


def _check_shapes(fn: str, nd: int, x: Ints, w: Ints, b: Optional[Ints]) -> bool:
    """Ranks and bias shape; returns whether ``x`` is batched."""
    if len(x) not in (nd + 1, nd + 2):
        raise ValueError(
            f"{fn}(): expected a {nd + 1}-D (unbatched) or {nd + 2}-D (batched) input, but got "
            f"input of shape {x}"
        )
    if len(w) != nd + 2:
        raise ValueError(f"{fn}(): weight must be {nd + 2}-D, but got weight of shape {w}")
    if min(w[2:]) < 1:
        raise ValueError(f"{fn}(): the kernel size must be positive, but got weight of shape {w}")
    return len(x) == nd + 2


def _check_bias(fn: str, b: Optional[Ints], cout: int, w: Ints) -> None:
    if b is not None and tuple(b) != (cout,):
        raise ValueError(
            f"{fn}(): given weight of shape {w}, bias must be 1-D with {cout} elements, but "
            f"got bias of shape {b}"
        )


@constexpr
def _conv_plan(
    fn: str,
    nd: int,
    x: Ints,
    w: Ints,
    b: Optional[Ints],
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: Any,
) -> Tuple[bool, Tuple[Any, ...], Ints, bool]:
    """(batched, the backend's arguments (stride, pad before, pad after, dilation, groups),
    output shape, whether the output is all bias: an empty input or output). Compile-time
    under ``ms.jit``."""
    batched = _check_shapes(fn, nd, x, w, b)
    xb = tuple(x) if batched else (1,) + tuple(x)
    s = _ints(stride, nd, "stride", fn, 1)
    d = _ints(dilation, nd, "dilation", fn, 1)
    g = _groups(groups, fn)
    k = tuple(w[2:])
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(
                f"{fn}(): padding must be 'same', 'valid', an int or a tuple of {nd} ints, but "
                f"got padding={padding!r}"
            )
        if padding == "same" and max(s) > 1:
            raise ValueError(
                f"{fn}(): padding='same' is not supported for strided convolutions (PyTorch "
                f"raises), but got stride={stride!r}"
            )
        total = tuple(d[i] * (k[i] - 1) if padding == "same" else 0 for i in range(nd))
        lo = tuple(t // 2 for t in total)
        hi = tuple(total[i] - lo[i] for i in range(nd))
    else:
        lo = hi = _ints(padding, nd, "padding", fn, 0)
    if w[0] % g:
        raise ValueError(
            f"{fn}(): weight.shape[0] (out channels) must be divisible by groups, but got "
            f"weight of shape {tuple(w)} and groups={g}"
        )
    if xb[1] != w[1] * g:
        raise ValueError(
            f"{fn}(): given groups={g} and weight of shape {tuple(w)}, input must have "
            f"{w[1] * g} channels, but got input of shape {tuple(x)}"
        )
    _check_bias(fn, b, w[0], tuple(w))
    padded = tuple(xb[2 + i] + lo[i] + hi[i] for i in range(nd))
    span = tuple(d[i] * (k[i] - 1) + 1 for i in range(nd))
    if any(padded[i] < span[i] for i in range(nd)):
        raise ValueError(
            f"{fn}(): the padded input size per channel {padded} is smaller than the dilated "
            f"kernel size {span}: input of shape {tuple(x)}, weight of shape {tuple(w)}"
        )
    out = tuple((padded[i] - span[i]) // s[i] + 1 for i in range(nd))
    shape = (xb[0], w[0]) + out
    empty = min(xb[:1] + xb[2:]) == 0 or xb[1] == 0 or w[0] == 0
    return batched, (s, lo, hi, d, g), shape if batched else shape[1:], empty


@constexpr
def _conv_t_plan(
    fn: str,
    nd: int,
    x: Ints,
    w: Ints,
    b: Optional[Ints],
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: Any,
    dilation: Any,
) -> Tuple[bool, Tuple[Any, ...], Ints, bool]:
    """(batched, the backend's arguments (stride, padding, dilation, groups, spatial output
    size), output shape, whether the output is all bias)."""
    batched = _check_shapes(fn, nd, x, w, b)
    xb = tuple(x) if batched else (1,) + tuple(x)
    s = _ints(stride, nd, "stride", fn, 1)
    p = _ints(padding, nd, "padding", fn, 0)
    op = _ints(output_padding, nd, "output_padding", fn, 0)
    d = _ints(dilation, nd, "dilation", fn, 1)
    g = _groups(groups, fn)
    if any(op[i] >= s[i] and op[i] >= d[i] for i in range(nd)):
        raise ValueError(
            f"{fn}(): output_padding must be smaller than either stride or dilation, but got "
            f"output_padding={output_padding!r}, stride={stride!r}, dilation={dilation!r}"
        )
    if w[0] % g:
        raise ValueError(
            f"{fn}(): weight.shape[0] (in channels) must be divisible by groups, but got "
            f"weight of shape {tuple(w)} and groups={g}"
        )
    if xb[1] != w[0]:
        raise ValueError(
            f"{fn}(): given weight of shape {tuple(w)}, input must have {w[0]} channels, but "
            f"got input of shape {tuple(x)}"
        )
    cout = w[1] * g
    _check_bias(fn, b, cout, tuple(w))
    size = tuple(
        (xb[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (w[2 + i] - 1) + op[i] + 1 for i in range(nd)
    )
    if min(size) < 1:
        raise ValueError(
            f"{fn}(): the output size per channel would be {size}: too small (input of shape "
            f"{tuple(x)}, weight of shape {tuple(w)}, padding={padding!r})"
        )
    shape = (xb[0], cout) + size
    empty = min(xb) == 0 or cout == 0
    return batched, (s, p, d, g, size), shape if batched else shape[1:], empty


def _tensors(fn: str, input: Any, weight: Any, bias: Any) -> Tuple[Tensor, Tensor]:
    x = check_float_tensor(input, "input")
    w = check_tensor(weight, "weight")
    if w.dtype != x.dtype:
        raise TypeError(
            f"{fn}(): weight must have input's dtype {x.dtype}, but got weight.dtype={w.dtype}"
        )
    if bias is not None:
        b = check_tensor(bias, "bias")
        if b.dtype != x.dtype:
            raise TypeError(
                f"{fn}(): bias must have input's dtype {x.dtype}, but got bias.dtype={b.dtype}"
            )
    return x, w


def _bias_only(shape: Ints, bias: Optional[Tensor], dtype: Any, batched: bool) -> Tensor:
    """The output of an empty convolution: zeros, plus the bias where there are elements."""
    out = ops.zeros(shape, dtype)
    if bias is not None and min(shape) > 0:
        lead = (1,) if batched else ()
        out = out + bias.reshape(lead + (-1,) + (1,) * (len(shape) - len(lead) - 1))
    return out


# ----------------------------------------------------------------------------- functions


def _run(nd: int, transposed: bool, input: Any, weight: Any, bias: Any, *options: Any) -> Tensor:
    """Check, answer an empty call, else dispatch ``layers.conv{nd}d`` or
    ``layers.conv_transpose{nd}d`` with the batched input and the plan's arguments."""
    fn = f"conv_transpose{nd}d" if transposed else f"conv{nd}d"
    x, w = _tensors(fn, input, weight, bias)
    b_shape = None if bias is None else bias.shape
    plan = _conv_t_plan if transposed else _conv_plan
    batched, args, shape, empty = plan(fn, nd, x.shape, w.shape, b_shape, *options)
    if empty:
        return _bias_only(shape, bias, x.dtype, batched)
    op = (CONV_T if transposed else CONV)[nd - 1]
    out = call(op, x if batched else x.expand_dims(0), w, bias, *args)
    return out if batched else out.squeeze(0)


# One text per family, each function's own example after it (a literal docstring: the
# doctests that run are the ">>>" lines of the source).
_CONV_DOC = """{n}-D convolution (cross-correlation), as :func:`torch.nn.functional.conv{n}d`.

    .. math::
        \\text{{out}}(b, o, \\mathbf{{x}}) = \\text{{bias}}(o) + \\sum_{{c \\in G(o)}}
        \\sum_{{\\mathbf{{k}}}} \\text{{weight}}(o, c, \\mathbf{{k}})\\,
        \\text{{input}}(b, c, \\mathbf{{s}} \\odot \\mathbf{{x}} - \\mathbf{{p}}
        + \\mathbf{{d}} \\odot \\mathbf{{k}})

    where :math:`G(o)` are the input channels of output channel ``o``'s group and positions
    outside the input are zeros. ``padding='same'`` pads ``dilation * (k - 1)`` in total, the
    odd one after (PyTorch's rule; stride 1 only); ``'valid'`` pads nothing. float16 is computed
    in float32 and rounded once, as PyTorch's CPU kernel.

    Args:
        input (Tensor[N, C_in, {dims}] or Tensor[C_in, {dims}]): float16, float32 or float64.
        weight (Tensor[C_out, C_in / groups, {kdims}]): input's dtype.
        bias (Tensor[C_out], optional): input's dtype. Default: None.
        stride (int or tuple): step of the kernel, per dim. Default: 1.
        padding (int, tuple, 'same' or 'valid'): zeros on both sides of each dim. Default: 0.
        dilation (int or tuple): spacing of the kernel's elements. Default: 1.
        groups (int): channel groups, dividing ``C_in`` and ``C_out``. Default: 1.

    Returns:
        Tensor[N, C_out, {odims}]: input's dtype (no batch dim for an unbatched input).

    Raises:
        TypeError: a non-Tensor, non-float or mismatched dtype; a non-int argument.
        ValueError: wrong ranks, channels not matching ``groups``, a bias of the wrong shape,
            non-positive stride/dilation/groups, negative padding, ``'same'`` with a stride, a
            kernel larger than the padded input.

    """


def conv1d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride: IntOrTuple = 1,
    padding: Union[str, IntOrTuple] = 0,
    dilation: IntOrTuple = 1,
    groups: int = 1,
) -> Tensor:
    """
    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import conv1d
        >>> x = ms.Tensor(np.arange(4, dtype=np.float32).reshape(1, 1, 4))
        >>> w = ms.Tensor(np.ones((1, 1, 2), np.float32))
        >>> conv1d(x, w, padding="same").asnumpy().reshape(-1).tolist()
        [1.0, 3.0, 5.0, 3.0]
    """
    return _run(1, False, input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride: IntOrTuple = 1,
    padding: Union[str, IntOrTuple] = 0,
    dilation: IntOrTuple = 1,
    groups: int = 1,
) -> Tensor:
    """
    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import conv2d
        >>> x = ms.Tensor(np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2))
        >>> w = ms.Tensor(np.ones((1, 1, 2, 2), np.float32))
        >>> conv2d(x, w, padding="same").asnumpy().reshape(-1).tolist()
        [6.0, 4.0, 5.0, 3.0]
    """
    return _run(2, False, input, weight, bias, stride, padding, dilation, groups)


def conv3d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride: IntOrTuple = 1,
    padding: Union[str, IntOrTuple] = 0,
    dilation: IntOrTuple = 1,
    groups: int = 1,
) -> Tensor:
    """
    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import conv3d
        >>> x = ms.Tensor(np.arange(2, dtype=np.float32).reshape(1, 1, 2, 1, 1))
        >>> w = ms.Tensor(np.ones((1, 1, 2, 1, 1), np.float32))
        >>> conv3d(x, w, padding="same").asnumpy().reshape(-1).tolist()
        [1.0, 1.0]
    """
    return _run(3, False, input, weight, bias, stride, padding, dilation, groups)


conv1d.__doc__ = _CONV_DOC.format(
    n=1,
    dims="L",
    kdims="k",
    odims="L_out",
) + (conv1d.__doc__ or "")
conv2d.__doc__ = _CONV_DOC.format(
    n=2,
    dims="H, W",
    kdims="kh, kw",
    odims="H_out, W_out",
) + (conv2d.__doc__ or "")
conv3d.__doc__ = _CONV_DOC.format(
    n=3,
    dims="D, H, W",
    kdims="kd, kh, kw",
    odims="D_out, H_out, W_out",
) + (conv3d.__doc__ or "")

_CONV_T_DOC = """{n}-D transposed convolution, as :func:`torch.nn.functional.conv_transpose{n}d`.

    The adjoint of :func:`conv{n}d` with the same ``stride``, ``padding``, ``dilation`` and
    ``groups``: each input element adds ``input(b, c) * weight(c, o, k)`` to the output at
    ``s * x - p + d * k``. PyTorch's weight layout ``(C_in, C_out / groups, k...)``
    (MindSpore's ``Conv2dTranspose`` takes another). The output size per dim is
    :math:`(L - 1) s - 2p + d (k - 1) + \\text{{output_padding}} + 1`; ``output_padding`` (smaller
    than the stride or the dilation) adds rows at the end. float16 is computed in float32 and
    rounded once.

    Args:
        input (Tensor[N, C_in, {dims}] or Tensor[C_in, {dims}]): float16, float32 or float64.
        weight (Tensor[C_in, C_out / groups, {kdims}]): input's dtype.
        bias (Tensor[C_out], optional): input's dtype. Default: None.
        stride (int or tuple): Default: 1.
        padding (int or tuple): ``dilation * (k - 1) - padding`` zeros on each side of the
            equivalent direct convolution's input. Default: 0.
        output_padding (int or tuple): extra size at the end of each dim. Default: 0.
        groups (int): channel groups, dividing ``C_in``. Default: 1.
        dilation (int or tuple): spacing of the kernel's elements. Default: 1.

    Returns:
        Tensor[N, C_out, {odims}]: input's dtype (no batch dim for an unbatched input).

    Raises:
        TypeError: a non-Tensor, non-float or mismatched dtype; a non-int argument.
        ValueError: wrong ranks, channels not matching the weight, a bias of the wrong shape,
            ``output_padding`` not smaller than stride or dilation, an output size below 1.

    """


def conv_transpose1d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride: IntOrTuple = 1,
    padding: IntOrTuple = 0,
    output_padding: IntOrTuple = 0,
    groups: int = 1,
    dilation: IntOrTuple = 1,
) -> Tensor:
    """
    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import conv_transpose1d
        >>> x = ms.Tensor(np.ones((1, 1, 2), np.float32))
        >>> w = ms.Tensor(np.ones((1, 1, 3), np.float32))
        >>> conv_transpose1d(x, w, stride=2).asnumpy().reshape(-1).tolist()
        [1.0, 1.0, 2.0, 1.0, 1.0]
    """
    return _run(1, True, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride: IntOrTuple = 1,
    padding: IntOrTuple = 0,
    output_padding: IntOrTuple = 0,
    groups: int = 1,
    dilation: IntOrTuple = 1,
) -> Tensor:
    """
    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import conv_transpose2d
        >>> x = ms.Tensor(np.ones((1, 1, 1, 2), np.float32))
        >>> w = ms.Tensor(np.ones((1, 1, 1, 3), np.float32))
        >>> conv_transpose2d(x, w, stride=2).asnumpy().reshape(-1).tolist()
        [1.0, 1.0, 2.0, 1.0, 1.0]
    """
    return _run(2, True, input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(
    input: Tensor,
    weight: Tensor,
    bias: Optional[Tensor] = None,
    stride: IntOrTuple = 1,
    padding: IntOrTuple = 0,
    output_padding: IntOrTuple = 0,
    groups: int = 1,
    dilation: IntOrTuple = 1,
) -> Tensor:
    """
    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import conv_transpose3d
        >>> x = ms.Tensor(np.ones((1, 1, 1, 1, 2), np.float32))
        >>> w = ms.Tensor(np.ones((1, 1, 1, 1, 3), np.float32))
        >>> conv_transpose3d(x, w, stride=2).asnumpy().reshape(-1).tolist()
        [1.0, 1.0, 2.0, 1.0, 1.0]
    """
    return _run(3, True, input, weight, bias, stride, padding, output_padding, groups, dilation)


conv_transpose1d.__doc__ = _CONV_T_DOC.format(
    n=1,
    dims="L",
    kdims="k",
    odims="L_out",
) + (conv_transpose1d.__doc__ or "")
conv_transpose2d.__doc__ = _CONV_T_DOC.format(
    n=2,
    dims="H, W",
    kdims="kh, kw",
    odims="H_out, W_out",
) + (conv_transpose2d.__doc__ or "")
conv_transpose3d.__doc__ = _CONV_T_DOC.format(
    n=3,
    dims="D, H, W",
    kdims="kd, kh, kw",
    odims="D_out, H_out, W_out",
) + (conv_transpose3d.__doc__ or "")
