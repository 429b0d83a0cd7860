"""``layer_norm``, ``group_norm`` and ``normalize`` with their Cells, as PyTorch.

MindSpore 2.10 on CPU has no kernel for ``mint.nn.functional.layer_norm`` ("Create kernelmod
for op LayerNormExt failed") nor ``mint.nn.functional.normalize`` (LinalgVectorNorm);
``nn.LayerNorm`` defaults to ``epsilon=1e-7`` and names its parameters ``gamma``/``beta``;
``ops.L2Normalize`` takes ``p=2`` only. These compute PyTorch's formulas: statistics in the
input's dtype (float16 in float32, rounded once, as PyTorch's CPU kernels), biased variance.
``layer_norm`` in float32 runs MindSpore's fused ``LayerNorm`` kernel (``native``; it computes
float64 in float32, so float64 takes the composite), and ``mint`` on Ascend where its probe
passes.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_bool, check_float_tensor, check_number, is_int
from mscompat.custom_ops import layer_norm as _ln_kernels
from mscompat.custom_ops.registry import TensorSpec, call, register
from mscompat.layers.normalization import _const, _work

__all__ = ["GroupNorm", "LayerNorm", "group_norm", "layer_norm", "normalize"]


def _moments(wide: Tensor, dims: Tuple[int, ...]) -> Tuple[Tensor, Tensor]:
    """Mean and biased variance over ``dims`` (kept), and the centred input."""
    mean = wide.mean(dims, keep_dims=True)
    centred = wide - mean
    return centred, (centred * centred).mean(dims, keep_dims=True)


def affine(y: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], shape: Any) -> Tensor:
    """``y * weight + bias`` with both reshaped to ``shape`` and cast to ``y``'s dtype."""
    if weight is not None:
        y = y * weight.astype(y.dtype).reshape(shape)
    if bias is not None:
        y = y + bias.astype(y.dtype).reshape(shape)
    return y


def check_param(t: Any, name: str, shape: Tuple[int, ...], fn: str) -> Optional[Tensor]:
    """``t`` (None, or a float Tensor of ``shape``), checked."""
    if t is None:
        return None
    t = check_float_tensor(t, name)
    if t.shape != shape:
        raise ValueError(f"{fn}(): {name} must have shape {shape}, but got {name}.shape={t.shape}")
    return t


# ----------------------------------------------------------------------------- layer_norm


@constexpr
def _ln_plan(shape: Tuple[int, ...], normalized_shape: Any, eps: Any) -> Any:
    norm = (normalized_shape,) if is_int(normalized_shape) else normalized_shape
    if not isinstance(norm, (tuple, list)) or not all(is_int(s) for s in norm):
        raise TypeError(
            f"layer_norm(): normalized_shape must be an int or a sequence of ints, but got "
            f"{normalized_shape!r}"
        )
    norm = tuple(int(s) for s in norm)
    if not norm or len(norm) > len(shape) or tuple(shape[len(shape) - len(norm) :]) != norm:
        raise ValueError(
            f"layer_norm(): normalized_shape={list(norm)} must be the last dims of input, but "
            f"input.shape={tuple(shape)}"
        )
    return norm, check_number(eps, "eps")


@register("layers.layer_norm", "composite", note="mean and biased variance, float16 in float32")
def _layer_norm_composite(
    x: Tensor, ndims: int, weight: Optional[Tensor], bias: Optional[Tensor], eps: float
) -> Tensor:
    wide = x.astype(_work(x.dtype))
    centred, var = _moments(wide, tuple(range(x.ndim - ndims, x.ndim)))
    y = centred * ops.rsqrt(var + _const(eps, wide.dtype))
    return affine(y, weight, bias, x.shape[x.ndim - ndims :]).astype(x.dtype)


_ln_kernels.LIBRARY.backend(
    "layers.layer_norm",
    "fused C++ forward and backward (PyTorch's formulas)",
    _ln_kernels.kernel_dtypes,
)(_ln_kernels.layer_norm)


def _float32_only(x: TensorSpec, *_: Any) -> Optional[str]:
    if x.dtype == ms.float32:
        return None
    return f"MindSpore's LayerNorm kernel computes {x.dtype} in float32 precision, not PyTorch's"


def _layer_norm_probe() -> None:
    one = Tensor(np.ones((2,), np.float32))
    ops.LayerNorm(1, 1, 1e-5)(Tensor(np.ones((1, 2), np.float32)), one, one)


@register(
    "layers.layer_norm",
    "native",
    devices=("CPU", "GPU"),
    probe=_layer_norm_probe,
    supports=_float32_only,
    note="ops.LayerNorm (fused kernel)",
)
def _layer_norm_native(
    x: Tensor, ndims: int, weight: Optional[Tensor], bias: Optional[Tensor], eps: float
) -> Tensor:
    axis = x.ndim - ndims
    shape = x.shape[axis:]
    w = ops.ones(shape, x.dtype) if weight is None else weight.astype(x.dtype)
    b = ops.zeros(shape, x.dtype) if bias is None else bias.astype(x.dtype)
    return ops.LayerNorm(axis, axis, eps)(x, w, b)[0]


def _mint_ln_probe() -> None:
    ms.mint.nn.functional.layer_norm(Tensor(np.ones((1, 2), np.float32)), (2,))


@register(
    "layers.layer_norm",
    "native",
    devices=("Ascend",),
    probe=_mint_ln_probe,
    note="mint.nn.functional.layer_norm",
)
def _layer_norm_mint(
    x: Tensor, ndims: int, weight: Optional[Tensor], bias: Optional[Tensor], eps: float
) -> Tensor:
    return ms.mint.nn.functional.layer_norm(x, x.shape[x.ndim - ndims :], weight, bias, eps)


def layer_norm(
    input: Tensor,
    normalized_shape: Union[int, Sequence[int]],
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    eps: float = 1e-5,
) -> Tensor:
    """Layer normalisation, as :func:`torch.nn.functional.layer_norm`.

    .. math::
        y = \\frac{x - \\operatorname{E}[x]}{\\sqrt{\\operatorname{Var}[x] + \\epsilon}}
        \\cdot w + b

    with the mean and biased variance over the last ``len(normalized_shape)`` dims. float16
    is computed in float32 and rounded once (PyTorch's CPU kernel).

    Args:
        input (Tensor[..., normalized_shape]): float16, float32 or float64.
        normalized_shape (int or sequence of int): the trailing dims normalised.
        weight, bias (Tensor[normalized_shape], optional): elementwise affine parameters.
        eps (float): added to the variance.

    Returns:
        Tensor: input's shape and dtype.

    Raises:
        TypeError: non-float tensors, bad ``normalized_shape`` or ``eps``.
        ValueError: ``normalized_shape`` not the trailing dims, parameters of another shape.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import layer_norm
        >>> layer_norm(ms.Tensor([[1.0, 3.0]]), 2, eps=0.0).asnumpy().tolist()
        [[-1.0, 1.0]]
    """
    x = check_float_tensor(input, "input")
    norm, e = _ln_plan(x.shape, normalized_shape, eps)
    weight = check_param(weight, "weight", norm, "layer_norm")
    bias = check_param(bias, "bias", norm, "layer_norm")
    if x.size == 0:
        return x
    return call("layers.layer_norm", x, len(norm), weight, bias, e)


class LayerNorm(nn.Cell):
    """Layer normalisation, as :class:`torch.nn.LayerNorm`. See :func:`layer_norm`.

    Parameters ``weight`` (ones) and ``bias`` (zeros) with ``elementwise_affine`` (``bias``
    only if ``bias=True``): PyTorch's names, which :func:`mscompat.port.convert_weights` loads
    as they are.

    Shape:
        - input: ``(*, normalized_shape)``; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import LayerNorm
        >>> LayerNorm(2, eps=0.0)(ms.Tensor([[1.0, 3.0]])).asnumpy().tolist()
        [[-1.0, 1.0]]
    """

    def __init__(
        self,
        normalized_shape: Union[int, Sequence[int]],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        shape: Tuple[Any, ...] = (
            (normalized_shape,) if is_int(normalized_shape) else tuple(normalized_shape)  # type: ignore[arg-type]
        )
        if not all(is_int(s) and s >= 0 for s in shape):
            raise ValueError(f"normalized_shape must hold ints >= 0, got {normalized_shape!r}")
        self.normalized_shape = tuple(int(s) for s in shape)
        self.eps = check_number(eps, "eps")
        self.elementwise_affine = check_bool(elementwise_affine, "elementwise_affine")
        check_bool(bias, "bias")
        dt = dtype or ms.float32
        self.weight = self.bias = None
        if elementwise_affine:
            self.weight = Parameter(Tensor(np.ones(self.normalized_shape), dt), name="weight")
            if bias:
                self.bias = Parameter(Tensor(np.zeros(self.normalized_shape), dt), name="bias")

    def construct(self, input: Tensor) -> Tensor:
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


# ----------------------------------------------------------------------------- group_norm


@register("layers.group_norm", "composite", note="(N, G, -1) moments, float16 in float32")
def _group_norm_composite(
    x: Tensor, groups: int, weight: Optional[Tensor], bias: Optional[Tensor], eps: float
) -> Tensor:
    wide = x.astype(_work(x.dtype))
    grouped = wide.reshape(x.shape[0], groups, -1)
    centred, var = _moments(grouped, (2,))
    y = (centred * ops.rsqrt(var + _const(eps, wide.dtype))).reshape(x.shape)
    return affine(y, weight, bias, (1, x.shape[1]) + (1,) * (x.ndim - 2)).astype(x.dtype)


def group_norm(
    input: Tensor,
    num_groups: int,
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    eps: float = 1e-5,
) -> Tensor:
    """Group normalisation, as :func:`torch.nn.functional.group_norm`.

    .. math::
        y_{n,c} = \\frac{x_{n,c} - \\mu_{n,g}}{\\sqrt{\\sigma^2_{n,g} + \\epsilon}} w_c + b_c

    with the mean and biased variance of each sample's group ``g`` of ``C / num_groups``
    channels (all spatial positions). float16 in float32, rounded once.

    Args:
        input (Tensor[N, C, ...]): float16, float32 or float64, at least 2 dims.
        num_groups (int): divides ``C``.
        weight, bias (Tensor[C], optional): per-channel affine parameters.
        eps (float): added to the variance.

    Returns:
        Tensor[N, C, ...]: input's dtype.

    Raises:
        TypeError: non-float tensors, a non-int ``num_groups``.
        ValueError: fewer than 2 dims, ``C`` not divisible by ``num_groups``, parameters of
            another shape.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import group_norm
        >>> x = ms.Tensor([[[1.0], [3.0], [0.0], [4.0]]])
        >>> group_norm(x, 2, eps=0.0).asnumpy().reshape(-1).tolist()
        [-1.0, 1.0, -1.0, 1.0]
    """
    x = check_float_tensor(input, "input")
    if not is_int(num_groups):
        raise TypeError(f"group_norm(): num_groups must be an int, but got {num_groups!r}")
    if x.ndim < 2:
        raise ValueError(f"group_norm(): Expected at least 2 dimensions for input, got {x.shape}")
    if num_groups <= 0 or x.shape[1] % num_groups:
        raise ValueError(
            f"group_norm(): Expected number of channels in input to be divisible by "
            f"num_groups, but got input of shape {list(x.shape)} and num_groups={num_groups}"
        )
    e = check_number(eps, "eps")
    weight = check_param(weight, "weight", (x.shape[1],), "group_norm")
    bias = check_param(bias, "bias", (x.shape[1],), "group_norm")
    if x.size == 0:
        return x
    return call("layers.group_norm", x, int(num_groups), weight, bias, e)


class GroupNorm(nn.Cell):
    """Group normalisation, as :class:`torch.nn.GroupNorm`. See :func:`group_norm`.

    Parameters ``weight`` (ones) and ``bias`` (zeros) with ``affine``.

    Shape:
        - input: ``(N, C, *)``; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import GroupNorm
        >>> GroupNorm(1, 2, eps=0.0)(ms.Tensor([[1.0, 3.0]])).asnumpy().tolist()
        [[-1.0, 1.0]]
    """

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if not is_int(num_groups) or not is_int(num_channels) or num_groups <= 0:
            raise ValueError(
                f"num_groups and num_channels must be ints, num_groups > 0, but got "
                f"{num_groups!r}, {num_channels!r}"
            )
        if num_channels % num_groups:
            raise ValueError(
                f"num_channels must be divisible by num_groups, but got {num_channels} and "
                f"{num_groups}"
            )
        self.num_groups, self.num_channels = int(num_groups), int(num_channels)
        self.eps = check_number(eps, "eps")
        self.affine = check_bool(affine, "affine")
        dt = dtype or ms.float32
        self.weight = self.bias = None
        if affine:
            self.weight = Parameter(Tensor(np.ones(num_channels), dt), name="weight")
            self.bias = Parameter(Tensor(np.zeros(num_channels), dt), name="bias")

    def construct(self, input: Tensor) -> Tensor:
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


# ----------------------------------------------------------------------------- normalize


def normalize(
    input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: None = None
) -> Tensor:
    """:math:`L_p` normalisation along ``dim``, as :func:`torch.nn.functional.normalize`.

    .. math::
        y = \\frac{x}{\\max(\\lVert x \\rVert_p, \\epsilon)}

    The norm is PyTorch's ``vector_norm`` (``p = inf``: max of :math:`|x|`; ``p = 0``: count
    of non-zeros); float16 takes its norm rounded to float16, then divides (as PyTorch).

    Args:
        input (Tensor): float16, float32 or float64, any rank (0-d: ``dim`` 0 or -1).
        p (float): the norm's exponent.
        dim (int): the dim normalised.
        eps (float): the smallest norm divided by.
        out: not supported (must be None).

    Returns:
        Tensor: input's shape and dtype.

    Raises:
        TypeError: non-float input, ``p``/``eps`` not numbers, ``dim`` not an int.
        ValueError: ``dim`` out of range, ``out`` given.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import normalize
        >>> normalize(ms.Tensor([[3.0, 4.0]])).asnumpy().tolist()
        [[0.6000000238418579, 0.800000011920929]]
    """
    x = check_float_tensor(input, "input")
    if out is not None:
        raise ValueError("normalize(): out= is not supported; use the returned Tensor")
    pp = check_number(p, "p")
    e = check_number(eps, "eps")
    if not is_int(dim):
        raise TypeError(f"normalize(): dim must be an int, but got {dim!r}")
    n = max(x.ndim, 1)
    if not -n <= dim < n:
        raise ValueError(
            f"normalize(): dim must be in the range [{-n}, {n - 1}] for a {x.ndim}-D input, "
            f"but got {dim}"
        )
    if x.size == 0:
        return x
    if x.ndim == 0:
        return _normalize(x.reshape(1), pp, 0, e).reshape(())
    return _normalize(x, pp, int(dim) % n, e)


def _normalize(x: Tensor, p: float, axis: int, eps: float) -> Tensor:
    wide = x.astype(_work(x.dtype))
    a = ops.abs(wide)
    if p == float("inf"):
        norm = a.max(axis=axis, keepdims=True)
    elif p == float("-inf"):
        norm = a.min(axis=axis, keepdims=True)
    elif p == 0:
        norm = (a != 0).astype(wide.dtype).sum(axis, keepdims=True)
    elif p == 1:
        norm = a.sum(axis, keepdims=True)
    else:
        total = (wide * wide if p == 2 else ops.pow(a, _const(p, wide.dtype))).sum(axis, True)
        # A zero norm's gradient is zero (PyTorch's masked backward), not 0 * inf = NaN.
        nonzero = total > 0
        safe = ops.where(nonzero, total, ops.ones_like(total))
        root = ops.sqrt(safe) if p == 2 else ops.pow(safe, _const(1.0 / p, wide.dtype))
        norm = ops.where(nonzero, root, ops.zeros_like(total))
    norm = norm.astype(x.dtype).astype(wide.dtype)  # PyTorch's norm is in input's dtype
    norm = ops.maximum(norm, _const(eps, wide.dtype).astype(x.dtype).astype(wide.dtype))
    return (wide / norm).astype(x.dtype)
