"""Variance and standard deviation with PyTorch's ``correction``: ``var``, ``std``,
``var_mean``, ``std_mean``.

MindSpore 2.10's ``ops.var``/``ops.std`` take ``ddof`` but not PyTorch's signature (``dim`` as
tuple, ``correction`` as a float, the legacy ``unbiased`` forms) nor its result where
``N - correction <= 0``. These are composites of ``mean``/``sum``: the sum of squared
deviations divided by ``max(0, N - correction)`` (so ``inf`` or ``nan`` there, as PyTorch), in
float32 for float16 inputs (PyTorch accumulates half in float too).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_bool, check_number, check_tensor, is_float_dtype, wrap_dim
from mscompat.custom_ops.registry import call, register

__all__ = ["std", "std_mean", "var", "var_mean"]

_OPS = ("math.var", "math.std", "math.var_mean", "math.std_mean")


@register(_OPS, "composite", note="sum of squared deviations / max(0, N - correction)")
def _moments_composite(
    x: Tensor, axes: Tuple[int, ...], dof: float, keepdim: bool
) -> Tuple[Tensor, Tensor]:
    wide = x.astype(ms.float32) if x.dtype == ms.float16 else x
    mean = ops.mean(wide, axes, True)
    # The mean's own path contributes sum(x - mean) = 0 to the gradient: cut it, so the
    # gradient is PyTorch's 2 (x - mean) / (N - correction), without its rounding noise.
    dev = wide - ops.stop_gradient(mean)
    total = ops.sum(dev * dev, axes, keepdim)
    # forward: divided by max(0, dof) (inf below 0); PyTorch's backward: by dof itself
    if dof < 0:  # noqa: SIM108 - ms.jit parses a statement more reliably
        var = ops.stop_gradient(total / 0.0 - total / dof) + total / dof
    else:
        var = total / dof
    if not keepdim:
        mean = mean.squeeze(axes)
    return var.astype(x.dtype), mean.astype(x.dtype)


def _sqrt(var: Tensor) -> Tensor:
    """``sqrt(var)`` whose gradient is 0 where ``var`` is 0 (PyTorch's ``std_backward`` masks
    it there; a plain sqrt gives inf * 0 = nan)."""
    zero = var == 0
    return ops.where(zero, ops.zeros_like(var), ops.sqrt(ops.where(zero, ops.ones_like(var), var)))


def _axes(dim: Any, ndim: int, fn: str) -> Tuple[int, ...]:
    """``dim`` as a sorted tuple of non-negative dims; None or empty: every dim."""
    if dim is None:
        return tuple(range(ndim))
    dims = tuple(dim) if isinstance(dim, (list, tuple)) else (dim,)
    if not dims:
        return tuple(range(ndim))
    out = tuple(wrap_dim(d, max(ndim, 1), ndim, name=f"{fn}(): dim") % max(ndim, 1) for d in dims)
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}(): dim {dim} names a dim more than once")
    return tuple(sorted(out))


def _moments(
    fn: str,
    input: Any,
    dim: Any,
    unbiased: Optional[bool],
    keepdim: Any,
    correction: Any,
) -> Tuple[Tensor, Tensor]:
    x = check_tensor(input, f"{fn}(): input")
    if not is_float_dtype(x.dtype):
        raise TypeError(
            f"{fn}(): input must be a float16/float32/float64 Tensor, but got dtype {x.dtype}"
        )
    if isinstance(dim, bool):  # the legacy form var(input, unbiased)
        if unbiased is not None:
            raise TypeError(f"{fn}(): unbiased given twice (as dim={dim} and unbiased=)")
        dim, unbiased = None, dim
    if unbiased is not None:
        if correction is not None:
            raise TypeError(f"{fn}(): pass either unbiased or correction, not both")
        c = 1.0 if check_bool(unbiased, f"{fn}(): unbiased") else 0.0
    else:
        c = 1.0 if correction is None else check_number(correction, f"{fn}(): correction")
    keepdim = check_bool(keepdim, f"{fn}(): keepdim")
    axes = _axes(dim, x.ndim, fn)
    n = 1
    for a in axes:
        n *= x.shape[a]
    out_shape = tuple(
        1 if i in axes else s for i, s in enumerate(x.shape) if keepdim or i not in axes
    )
    if x.size == 0:  # answered here: no kernel sees an empty tensor (a mean of nothing: nan)
        nan = ops.full(out_shape, float("nan"), dtype=x.dtype)
        return nan, nan
    if x.ndim == 0:
        x, axes = x.reshape((1,)), (0,)
    var, mean = call(f"math.{fn}", x, axes, n - c, keepdim)
    return var.reshape(out_shape), mean.reshape(out_shape)


_ARGS = """Args:
        input (Tensor[*]): float16, float32 or float64; 0-d and empty allowed.
        dim (int or tuple of ints, optional): the dims to reduce; None or ``()``: all. A bool
            here is PyTorch's legacy ``{fn}(input, unbiased)``.
        unbiased (bool, optional): PyTorch's legacy form: ``correction=1`` if True, else 0
            (positional third, as ``{fn}(input, dim, unbiased, keepdim)``).
        keepdim (bool): keep the reduced dims with size 1.
        correction (float, optional): subtracted from the number of elements reduced,
            ``N``; default 1 (Bessel's correction). ``N - correction <= 0`` divides by 0.

    Raises:
        TypeError: ``input`` not a float Tensor, ``dim``/``keepdim``/``unbiased``/
            ``correction`` of the wrong type, both ``unbiased`` and ``correction`` given.
        ValueError: ``dim`` out of range or repeated."""


def var(
    input: Tensor,
    dim: Any = None,
    unbiased: Optional[bool] = None,
    keepdim: bool = False,
    *,
    correction: Optional[float] = None,
) -> Tensor:
    """Variance over ``dim``, as :func:`torch.var`.

    .. math::
        \\operatorname{var}(x) = \\frac{1}{\\max(0, N - \\delta N)}
        \\sum_{i=1}^{N} (x_i - \\bar{x})^2

    with :math:`\\delta N` = ``correction``.

    {args}

    Returns:
        Tensor: ``input``'s dtype; ``input``'s shape without the reduced dims (size 1 with
        ``keepdim``).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import var
        >>> x = ms.Tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 9.0]])
        >>> var(x, 1).asnumpy().tolist()
        [1.0, 13.0]
        >>> var(x, 1, correction=3).asnumpy().tolist()
        [inf, inf]
    """
    return _moments("var", input, dim, unbiased, keepdim, correction)[0]


def std(
    input: Tensor,
    dim: Any = None,
    unbiased: Optional[bool] = None,
    keepdim: bool = False,
    *,
    correction: Optional[float] = None,
) -> Tensor:
    """Standard deviation over ``dim``, as :func:`torch.std`: the square root of :func:`var`.

    .. math::
        \\sigma(x) = \\sqrt{\\frac{1}{\\max(0, N - \\delta N)} \\sum_{i=1}^{N} (x_i - \\bar{x})^2}

    {args}

    Returns:
        Tensor: as :func:`var`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import std
        >>> std(ms.Tensor([1.0, 3.0, 5.0])).asnumpy().tolist()
        2.0
    """
    return _sqrt(_moments("std", input, dim, unbiased, keepdim, correction)[0])


def var_mean(
    input: Tensor,
    dim: Any = None,
    unbiased: Optional[bool] = None,
    keepdim: bool = False,
    *,
    correction: Optional[float] = None,
) -> Tuple[Tensor, Tensor]:
    """Variance and mean over ``dim``, as :func:`torch.var_mean`: ``(var(...), mean(...))``.

    .. math::
        \\bar{x} = \\frac{1}{N} \\sum_{i=1}^{N} x_i, \\qquad
        \\operatorname{var}(x) = \\frac{1}{\\max(0, N - \\delta N)}
        \\sum_{i=1}^{N} (x_i - \\bar{x})^2

    {args}

    Returns:
        (Tensor, Tensor): the variance and the mean, each as :func:`var`'s result.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import var_mean
        >>> v, m = var_mean(ms.Tensor([1.0, 3.0, 5.0]))
        >>> v.asnumpy().tolist(), m.asnumpy().tolist()
        (4.0, 3.0)
    """
    return _moments("var_mean", input, dim, unbiased, keepdim, correction)


def std_mean(
    input: Tensor,
    dim: Any = None,
    unbiased: Optional[bool] = None,
    keepdim: bool = False,
    *,
    correction: Optional[float] = None,
) -> Tuple[Tensor, Tensor]:
    """Standard deviation and mean over ``dim``, as :func:`torch.std_mean`.

    .. math::
        \\bar{x} = \\frac{1}{N} \\sum_{i=1}^{N} x_i, \\qquad
        \\sigma(x) = \\sqrt{\\frac{1}{\\max(0, N - \\delta N)} \\sum_{i=1}^{N} (x_i - \\bar{x})^2}

    {args}

    Returns:
        (Tensor, Tensor): the standard deviation and the mean, each as :func:`var`'s result.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.math import std_mean
        >>> s, m = std_mean(ms.Tensor([1.0, 3.0, 5.0]))
        >>> s.asnumpy().tolist(), m.asnumpy().tolist()
        (2.0, 3.0)
    """
    v, m = _moments("std_mean", input, dim, unbiased, keepdim, correction)
    return _sqrt(v), m


for _fn in (var, std, var_mean, std_mean):
    _fn.__doc__ = (_fn.__doc__ or "").replace("{args}", _ARGS.replace("{fn}", _fn.__name__))
