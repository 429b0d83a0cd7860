"""Normalisations MindSpore lacks or parametrises differently on CPU: ``rms_norm``,
``instance_norm`` and ``local_response_norm`` with their Cells, as PyTorch.

On MindSpore 2.10 CPU ``ops.rms_norm`` has no kernel ("The kernel RmsNorm unregistered"),
``nn.InstanceNorm2d`` has none either and there is no functional ``instance_norm``, and
``ops.lrn`` / ``nn.LRN`` use TensorFlow's parametrisation (``depth_radius = size // 2`` and an
``alpha`` not divided by ``size``). These compute PyTorch's formulas, float16 in float32.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_bool, check_float_tensor, check_number, check_numel, is_int

__all__ = [
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LocalResponseNorm",
    "RMSNorm",
    "instance_norm",
    "local_response_norm",
    "rms_norm",
]

# PyTorch 2.13's default eps is that of the dtype it computes in: float32 for float16.
_EPS = {ms.float16: float(np.finfo(np.float32).eps), ms.float32: float(np.finfo(np.float32).eps)}


@constexpr
def _const(value: float, dtype: Any) -> Tensor:
    """``value`` as a 0-d constant (under ``ms.jit`` a Python float is rounded to float32)."""
    return Tensor(np.array(value, np.float64), dtype)


def _work(dtype: Any) -> Any:
    return ms.float32 if dtype == ms.float16 else dtype


# ----------------------------------------------------------------------------- rms_norm


@constexpr
def _rms_plan(shape: Tuple[int, ...], normalized_shape: Any, eps: Any, dtype: Any) -> Any:
    """(normalized dims as a tuple, eps) checked as PyTorch."""
    norm = (normalized_shape,) if is_int(normalized_shape) else normalized_shape
    if not isinstance(norm, (tuple, list)) or not all(is_int(s) for s in norm):
        raise TypeError(
            f"rms_norm(): normalized_shape must be an int or a sequence of ints, but got "
            f"{normalized_shape!r}"
        )
    norm = tuple(int(s) for s in norm)
    if not norm or tuple(shape[len(shape) - len(norm) :]) != norm or len(norm) > len(shape):
        raise ValueError(
            f"rms_norm(): normalized_shape={list(norm)} must be the last dims of input, but "
            f"input.shape={tuple(shape)}"
        )
    value = _EPS.get(dtype, float(np.finfo(np.float64).eps)) if eps is None else eps
    return norm, check_number(value, "eps")


def rms_norm(
    input: Tensor,
    normalized_shape: Union[int, Sequence[int]],
    weight: Optional[Tensor] = None,
    eps: Optional[float] = None,
) -> Tensor:
    """Root-mean-square normalisation, as :func:`torch.nn.functional.rms_norm`.

    .. math::
        y = \\frac{x}{\\sqrt{\\operatorname{mean}(x^2) + \\epsilon}} \\cdot w

    over the last ``len(normalized_shape)`` dims; ``eps=None`` is the machine epsilon of the
    dtype computed in (float32 for float16 input, as PyTorch 2.13). float16 is computed in
    float32, ``weight`` included, and rounded once (PyTorch's CPU kernel).

    Args:
        input (Tensor[..., normalized_shape]): float16, float32 or float64.
        normalized_shape (int or sequence of int): the trailing dims normalised.
        weight (Tensor[normalized_shape], optional): elementwise scale.
        eps (float, optional): added to the mean square.

    Returns:
        Tensor: input's shape and dtype.

    Raises:
        TypeError: non-float input or weight, bad ``normalized_shape``.
        ValueError: ``normalized_shape`` not the trailing dims, weight of another shape.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import rms_norm
        >>> y = rms_norm(ms.Tensor([[3.0, 4.0]]), [2], eps=0.0)
        >>> y.asnumpy().astype(float).round(4).tolist()
        [[0.8485, 1.1314]]
    """
    x = check_float_tensor(input, "input")
    norm, value = _rms_plan(x.shape, normalized_shape, eps, x.dtype)
    if weight is not None:
        weight = check_float_tensor(weight, "weight")
        if weight.shape != norm:
            raise ValueError(
                f"rms_norm(): weight must have normalized_shape {norm}, but got {weight.shape}"
            )
    if x.size == 0:
        return x
    work = _work(x.dtype)
    wide = x.astype(work)
    dims = tuple(range(x.ndim - len(norm), x.ndim))
    mean_square = (wide * wide).mean(dims, keep_dims=True)
    y = wide * ops.rsqrt(mean_square + _const(value, work))
    if weight is not None:
        y = y * weight.astype(work)
    return y.astype(x.dtype)


class RMSNorm(nn.Cell):
    """Root-mean-square normalisation, as :class:`torch.nn.RMSNorm`. See :func:`rms_norm`.

    The parameter is ``weight`` (ones), with ``elementwise_affine``.

    Shape:
        - input: ``(*, normalized_shape)``; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import RMSNorm
        >>> y = RMSNorm(2, eps=0.0)(ms.Tensor([[3.0, 4.0]]))
        >>> y.asnumpy().astype(float).round(4).tolist()
        [[0.8485, 1.1314]]
    """

    def __init__(
        self,
        normalized_shape: Union[int, Sequence[int]],
        eps: Optional[float] = None,
        elementwise_affine: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        shape: Tuple[Any, ...] = (
            (normalized_shape,) if is_int(normalized_shape) else tuple(normalized_shape)  # type: ignore[arg-type]
        )
        if not all(is_int(s) and s > 0 for s in shape):
            raise ValueError(f"normalized_shape must hold positive ints, got {normalized_shape!r}")
        check_numel(shape, "RMSNorm", "the weight", normalized_shape=normalized_shape)
        self.normalized_shape = tuple(int(s) for s in shape)
        self.eps = eps
        self.elementwise_affine = check_bool(elementwise_affine, "elementwise_affine")
        self.weight = None
        if elementwise_affine:
            ones = Tensor(np.ones(self.normalized_shape), dtype or ms.float32)
            self.weight = Parameter(ones, name="weight")

    def construct(self, input: Tensor) -> Tensor:
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)


# ----------------------------------------------------------------------------- instance_norm


@constexpr
def _numbers(momentum: Any, eps: Any) -> Tuple[float, float]:
    return check_number(momentum, "momentum"), check_number(eps, "eps")


def _check_stat(t: Any, name: str, channels: int) -> Tensor:
    t = check_float_tensor(t, name)
    if t.shape != (channels,):
        raise ValueError(
            f"instance_norm(): {name} must have shape ({channels},) (input's channels), but "
            f"got {t.shape}"
        )
    return t


def instance_norm(
    input: Tensor,
    running_mean: Optional[Tensor] = None,
    running_var: Optional[Tensor] = None,
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Instance normalisation, as :func:`torch.nn.functional.instance_norm`.

    .. math::
        y_{n,c} = \\frac{x_{n,c} - \\mu_{n,c}}{\\sqrt{\\sigma^2_{n,c} + \\epsilon}}\\,
        w_c + b_c

    with the mean and biased variance of each sample's channel over the spatial dims
    (``use_input_stats``), or ``running_mean``/``running_var`` (``use_input_stats=False``).
    With ``use_input_stats`` and running statistics given, they are updated in place as
    PyTorch: ``r = (1 - momentum) * r + momentum * s`` with ``s`` the batch mean of the
    per-instance means and unbiased variances (they must be ``Parameter`` under ``ms.jit``).

    Args:
        input (Tensor[N, C, ...]): float16, float32 or float64, at least one spatial dim.
        running_mean, running_var (Tensor[C], optional): running statistics.
        weight, bias (Tensor[C], optional): affine parameters.
        use_input_stats (bool): normalise with the input's statistics.
        momentum (float): the running statistics' update factor.
        eps (float): added to the variance.

    Returns:
        Tensor[N, C, ...]: input's dtype.

    Raises:
        TypeError: non-float tensors, bad argument types.
        ValueError: fewer than 3 dims, a statistic of the wrong shape, running statistics
            missing with ``use_input_stats=False``, a single value per channel.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import instance_norm
        >>> x = ms.Tensor([[[1.0, 3.0], [2.0, 6.0]]])
        >>> instance_norm(x, eps=0.0).asnumpy().tolist()
        [[[-1.0, 1.0], [-1.0, 1.0]]]
    """
    x = check_float_tensor(input, "input")
    if x.ndim < 3:
        raise ValueError(
            f"instance_norm(): input must be (N, C, *) with at least 3 dims, got {x.shape}"
        )
    channels = x.shape[1]
    check_bool(use_input_stats, "use_input_stats")
    m, e = _numbers(momentum, eps)
    if running_mean is not None:
        running_mean = _check_stat(running_mean, "running_mean", channels)
    if running_var is not None:
        running_var = _check_stat(running_var, "running_var", channels)
    if weight is not None:
        weight = _check_stat(weight, "weight", channels)
    if bias is not None:
        bias = _check_stat(bias, "bias", channels)
    if not use_input_stats and (running_mean is None or running_var is None):
        raise ValueError(
            "instance_norm(): running_mean and running_var are needed when use_input_stats=False"
        )
    spatial = 1
    for s in x.shape[2:]:
        spatial *= s
    if use_input_stats and spatial == 1 and x.size > 0:
        raise ValueError(
            f"instance_norm(): expected more than 1 spatial element when training, got input "
            f"size {x.shape}"
        )
    if x.size == 0:
        return x
    work = _work(x.dtype)
    wide = x.astype(work)
    shape = (1, channels) + (1,) * (x.ndim - 2)
    if use_input_stats:
        dims = tuple(range(2, x.ndim))
        mean = wide.mean(dims, keep_dims=True)
        centred = wide - mean
        var = (centred * centred).mean(dims, keep_dims=True)
        y = centred * ops.rsqrt(var + _const(e, work))
        if running_mean is not None and running_var is not None:
            _update(running_mean, running_var, mean, var, spatial, m)
    else:  # both statistics were checked present above
        rm = running_mean.astype(work).reshape(shape)  # type: ignore[union-attr]
        rv = running_var.astype(work).reshape(shape)  # type: ignore[union-attr]
        y = (wide - rm) * ops.rsqrt(rv + _const(e, work))
    if weight is not None:
        y = y * weight.astype(work).reshape(shape)
    if bias is not None:
        y = y + bias.astype(work).reshape(shape)
    return y.astype(x.dtype)


def _update(
    running_mean: Tensor, running_var: Tensor, mean: Tensor, var: Tensor, n: int, m: float
) -> None:
    """PyTorch's running-statistics update (unbiased variance, averaged over the batch)."""
    batch_mean = ops.stop_gradient(mean).reshape(mean.shape[:2]).mean(0)
    unbiased = ops.stop_gradient(var).reshape(var.shape[:2]).mean(0) * _const(
        n / (n - 1), var.dtype
    )
    keep = _const(1.0 - m, running_mean.dtype)
    step = _const(m, running_mean.dtype)
    ops.assign(running_mean, keep * running_mean + step * batch_mean.astype(running_mean.dtype))
    ops.assign(running_var, keep * running_var + step * unbiased.astype(running_var.dtype))


class _InstanceNorm(nn.Cell):
    """PyTorch's ``_InstanceNorm``: ``weight``/``bias`` with ``affine``, ``running_mean``/
    ``running_var`` with ``track_running_stats`` (non-trainable Parameters)."""

    _DIMS = 2

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if not is_int(num_features) or num_features <= 0:
            raise ValueError(f"num_features must be a positive int, but got {num_features!r}")
        check_numel(
            (num_features,), type(self).__name__, "the parameters", num_features=num_features
        )
        self.num_features = num_features
        self.eps = check_number(eps, "eps")
        self.momentum = check_number(momentum, "momentum")
        self.affine = check_bool(affine, "affine")
        self.track_running_stats = check_bool(track_running_stats, "track_running_stats")
        dt = dtype or ms.float32
        self.weight = self.bias = None
        if affine:
            self.weight = Parameter(Tensor(np.ones(num_features), dt), name="weight")
            self.bias = Parameter(Tensor(np.zeros(num_features), dt), name="bias")
        self.running_mean = self.running_var = None
        # A PyTorch module starts in training mode; set_train(False) is its eval().
        self.set_train(True)
        if track_running_stats:
            zeros, ones = np.zeros(num_features), np.ones(num_features)
            self.running_mean = Parameter(Tensor(zeros, dt), "running_mean", requires_grad=False)
            self.running_var = Parameter(Tensor(ones, dt), "running_var", requires_grad=False)

    def construct(self, input: Tensor) -> Tensor:
        x = check_float_tensor(input, "input")
        batched = x.ndim == self._DIMS + 2
        if not batched and x.ndim != self._DIMS + 1:
            raise ValueError(
                f"{type(self).__name__}: expected a {self._DIMS + 1}-D or {self._DIMS + 2}-D "
                f"input, but got {x.ndim}-D {x.shape}"
            )
        if x.shape[-self._DIMS - 1] != self.num_features:
            raise ValueError(
                f"{type(self).__name__}: expected input's channels (dim {-self._DIMS - 1}) to "
                f"be num_features={self.num_features}, but got shape {x.shape}"
            )
        if not batched:
            x = x.expand_dims(0)
        use_input = self.training or not self.track_running_stats
        y = instance_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            use_input,
            self.momentum,
            self.eps,
        )
        return y if batched else y.squeeze(0)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of ``(N, C, L)`` or ``(C, L)``, as :class:`torch.nn.InstanceNorm1d`.

    See :func:`instance_norm`. PyTorch's defaults: ``affine=False``,
    ``track_running_stats=False``. As a PyTorch module, it starts in training mode
    (``set_train(True)``): tracked running statistics are updated in training and used after
    ``set_train(False)`` (PyTorch's ``eval()``).

    Shape:
        - input: ``(N, C, L)`` or ``(C, L)``; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import InstanceNorm1d
        >>> InstanceNorm1d(1, eps=0.0)(ms.Tensor([[[1.0, 3.0]]])).asnumpy().tolist()
        [[[-1.0, 1.0]]]
    """

    _DIMS = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of ``(N, C, H, W)`` or ``(C, H, W)``, as
    :class:`torch.nn.InstanceNorm2d`. See :func:`instance_norm` and :class:`InstanceNorm1d`.

    Shape:
        - input: ``(N, C, H, W)`` or ``(C, H, W)``; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import InstanceNorm2d
        >>> InstanceNorm2d(1, eps=0.0)(ms.Tensor([[[[1.0, 3.0]]]])).asnumpy().tolist()
        [[[[-1.0, 1.0]]]]
    """

    _DIMS = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of ``(N, C, D, H, W)`` or ``(C, D, H, W)``, as
    :class:`torch.nn.InstanceNorm3d`. See :func:`instance_norm` and :class:`InstanceNorm1d`.

    Shape:
        - input: ``(N, C, D, H, W)`` or ``(C, D, H, W)``; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import InstanceNorm3d
        >>> InstanceNorm3d(1, eps=0.0)(ms.Tensor([[[[[1.0, 3.0]]]]])).asnumpy().tolist()
        [[[[[-1.0, 1.0]]]]]
    """

    _DIMS = 3


# ----------------------------------------------------------------------------- local_response_norm


def local_response_norm(
    input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0
) -> Tensor:
    """Local response normalisation across channels, as
    :func:`torch.nn.functional.local_response_norm`.

    .. math::
        b_c = a_c \\left(k + \\frac{\\alpha}{n}
        \\sum_{c' = c - \\lfloor n/2 \\rfloor}^{c + \\lfloor (n-1)/2 \\rfloor} a_{c'}^2
        \\right)^{-\\beta}

    with ``n = size`` and channels outside ``[0, C)`` counting as zeros (PyTorch's
    parametrisation; MindSpore's ``ops.lrn`` is TensorFlow's: ``depth_radius = size // 2`` and
    no division by ``size``).

    Args:
        input (Tensor[N, C, ...]): float16, float32 or float64, at least 3 dims.
        size (int): the number of neighbouring channels, >= 1.
        alpha (float): multiplicative factor.
        beta (float): exponent.
        k (float): additive factor.

    Returns:
        Tensor[N, C, ...]: input's dtype.

    Raises:
        TypeError: non-float input, non-int size.
        ValueError: fewer than 3 dims, ``size < 1``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import local_response_norm
        >>> x = ms.Tensor([[[2.0], [0.0]]])
        >>> local_response_norm(x, 2, alpha=1.0, beta=1.0).asnumpy().tolist()
        [[[0.6666666865348816], [0.0]]]
    """
    x = check_float_tensor(input, "input")
    if x.ndim < 3:
        raise ValueError(
            f"local_response_norm(): expected 3D or higher dimensionality input (got {x.ndim} "
            "dimensions)"
        )
    if not is_int(size):
        raise TypeError(f"local_response_norm(): size must be an int, but got {size!r}")
    if size < 1:
        raise ValueError(f"local_response_norm(): size must be >= 1, but got size={size}")
    a = check_number(alpha, "alpha")
    b = check_number(beta, "beta")
    kk = check_number(k, "k")
    if x.size == 0:
        return x
    work = _work(x.dtype)
    wide = x.astype(work)
    square = wide * wide
    channels = x.shape[1]
    before, after = size // 2, (size - 1) // 2
    pads = [(0, 0)] * x.ndim
    pads[1] = (before, after)
    flat_pads: Tuple[int, ...] = ()
    for lo, hi in reversed(pads):
        flat_pads = flat_pads + (lo, hi)
    padded = ops.pad(square, flat_pads)
    total = ops.narrow(padded, 1, 0, channels)
    for shift in range(1, size):
        total = total + ops.narrow(padded, 1, shift, channels)
    div = total / _const(float(size), work)
    div = ops.pow(div * _const(a, work) + _const(kk, work), _const(b, work))
    return (wide / div).astype(x.dtype)


class LocalResponseNorm(nn.Cell):
    """Local response normalisation, as :class:`torch.nn.LocalResponseNorm`.

    See :func:`local_response_norm`.

    Shape:
        - input: ``(N, C, *)``; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import LocalResponseNorm
        >>> LocalResponseNorm(2, alpha=1.0, beta=1.0)(ms.Tensor([[[2.0], [0.0]]])).shape
        (1, 2, 1)
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        if not is_int(size) or size < 1:
            raise ValueError(f"size must be an int >= 1, but got {size!r}")
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def construct(self, input: Tensor) -> Tensor:
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)
