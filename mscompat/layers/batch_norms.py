"""``batch_norm`` and ``BatchNorm1d/2d/3d`` as PyTorch: its names, defaults and running
statistics.

MindSpore 2.10 on CPU has no kernel for ``mint.nn.functional.batch_norm`` (BatchNormExt);
``ops.batch_norm`` takes no float64 and ``nn.BatchNorm2d`` names its parameters
``gamma``/``beta``/``moving_mean``/``moving_variance``, with ``momentum`` meaning the weight of
the *old* statistics (PyTorch: of the new). Here the Cells keep PyTorch's ``weight``, ``bias``,
``running_mean``, ``running_var`` and ``num_batches_tracked``, which
:func:`mscompat.port.convert_weights` loads as they are. float16 is computed in float32 and
rounded once (PyTorch's CPU kernel). Inference in float32 runs MindSpore's ``BatchNorm``
kernel (``native``), the rest the composite (mean, biased variance; the running variance is
updated with the unbiased one).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

from mscompat._checks import check_bool, check_float_tensor, check_number, is_int, numel
from mscompat.custom_ops.registry import TensorSpec, call, register
from mscompat.layers.affine_norm import affine, check_param
from mscompat.layers.normalization import _const, _work

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "batch_norm"]

Factor = Union[float, Tensor]  # the momentum: a Tensor for the cumulative average of a Cell
Stat = Optional[Tensor]
#: input, running_mean, running_var, weight, bias, training, momentum, eps
BatchNormArgs = Tuple[Tensor, Stat, Stat, Stat, Stat, bool, float, float]


def _update(stat: Tensor, new: Tensor, factor: Factor) -> None:
    """``stat = (1 - factor) * stat + factor * new`` in place (PyTorch's running update)."""
    new = ops.stop_gradient(new).astype(stat.dtype)
    if isinstance(factor, Tensor):
        f = factor.astype(stat.dtype)
        ops.assign(stat, (1 - f) * stat + f * new)
    else:
        ops.assign(stat, _const(1.0 - factor, stat.dtype) * stat + _const(factor, stat.dtype) * new)


@register("layers.batch_norm", "composite", note="moments over (N, *), float16 in float32")
def _batch_norm_composite(
    x: Tensor,
    running_mean: Optional[Tensor],
    running_var: Optional[Tensor],
    weight: Optional[Tensor],
    bias: Optional[Tensor],
    training: bool,
    momentum: Factor,
    eps: float,
) -> Tensor:
    work = _work(x.dtype)
    wide = x.astype(work)
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if training:
        dims = (0,) + tuple(range(2, x.ndim))
        mean = wide.mean(dims, keep_dims=True)
        centred = wide - mean
        var = (centred * centred).mean(dims, keep_dims=True)
        y = centred * ops.rsqrt(var + _const(eps, work))
        if running_mean is not None and running_var is not None:
            n = numel(x.shape) // x.shape[1]
            _update(running_mean, mean.reshape(-1), momentum)
            _update(running_var, var.reshape(-1) * _const(n / (n - 1), work), momentum)
    else:  # the front door checked both statistics present
        rm = running_mean.astype(work).reshape(shape)  # type: ignore[union-attr]
        rv = running_var.astype(work).reshape(shape)  # type: ignore[union-attr]
        y = (wide - rm) * ops.rsqrt(rv + _const(eps, work))
    return affine(y, weight, bias, shape).astype(x.dtype)


def _inference_float32(
    x: TensorSpec, rm: Any, rv: Any, w: Any, b: Any, training: bool, *_: Any
) -> Optional[str]:
    if training:
        return "training: the composite updates the running statistics as PyTorch"
    specs = [t for t in (x, rm, rv, w, b) if t is not None]
    if any(t.dtype != ms.float32 for t in specs):
        return "MindSpore's BatchNorm kernel takes float16/float32 with statistics of its dtype"
    return None


def _bn_probe() -> None:
    c = Tensor(np.ones((2,), np.float32))
    ops.batch_norm(Tensor(np.ones((2, 2, 1, 1), np.float32)), c, c, c, c, False, 0.1, 1e-5)


@register(
    "layers.batch_norm",
    "native",
    devices=("CPU", "GPU"),
    probe=_bn_probe,
    supports=_inference_float32,
    note="ops.batch_norm in inference, float32",
)
def _batch_norm_native(
    x: Tensor,
    running_mean: Optional[Tensor],
    running_var: Optional[Tensor],
    weight: Optional[Tensor],
    bias: Optional[Tensor],
    training: bool,
    momentum: Factor,
    eps: float,
) -> Tensor:
    c = x.shape[1]
    w = ops.ones((c,), x.dtype) if weight is None else weight
    b = ops.zeros((c,), x.dtype) if bias is None else bias
    x4 = x.reshape(x.shape[0], c, -1, 1)
    y = ops.batch_norm(x4, running_mean, running_var, w, b, False, 0.1, eps)
    return y.reshape(x.shape)


def batch_norm(
    input: Tensor,
    running_mean: Optional[Tensor],
    running_var: Optional[Tensor],
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Batch normalisation, as :func:`torch.nn.functional.batch_norm`.

    .. math::
        y_{n,c} = \\frac{x_{n,c} - \\mu_c}{\\sqrt{\\sigma^2_c + \\epsilon}}\\, w_c + b_c

    ``training``: :math:`\\mu_c, \\sigma^2_c` are the mean and biased variance of channel
    ``c`` over the batch and spatial dims, and the running statistics, when given, are
    updated in place: :math:`r \\leftarrow (1 - m) r + m s` with the batch mean and the
    *unbiased* variance (they must be ``Parameter`` under ``ms.jit``). Otherwise the running
    statistics are used.

    Args:
        input (Tensor[N, C, ...]): float16, float32 or float64, at least 2 dims.
        running_mean, running_var (Tensor[C], optional): needed when not ``training``.
        weight, bias (Tensor[C], optional): affine parameters.
        training (bool): use (and update) batch statistics.
        momentum (float): the weight of the new statistics.
        eps (float): added to the variance.

    Returns:
        Tensor[N, C, ...]: input's dtype.

    Raises:
        TypeError: non-float tensors, non-number ``momentum``/``eps``, non-bool ``training``.
        ValueError: fewer than 2 dims, statistics or parameters of another shape, running
            statistics missing when not training, one value per channel when training.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import batch_norm
        >>> x = ms.Tensor([[1.0], [3.0]])
        >>> batch_norm(x, None, None, training=True, eps=0.0).asnumpy().tolist()
        [[-1.0], [1.0]]
    """
    args = check_batch_norm_args(
        "batch_norm", input, running_mean, running_var, weight, bias, training, momentum, eps
    )
    return _batch_norm(*args)


def check_batch_norm_args(
    fn: str,
    input: Any,
    running_mean: Any,
    running_var: Any,
    weight: Any,
    bias: Any,
    training: Any,
    momentum: Any,
    eps: Any,
) -> BatchNormArgs:
    """The arguments of :func:`batch_norm` (and its synchronised variant ``fn``), checked."""
    x = check_float_tensor(input, "input")
    if x.ndim < 2:
        raise ValueError(f"{fn}(): input must be (N, C, *) with at least 2 dims, got {x.shape}")
    c = (x.shape[1],)
    return (
        x,
        check_param(running_mean, "running_mean", c, fn),
        check_param(running_var, "running_var", c, fn),
        check_param(weight, "weight", c, fn),
        check_param(bias, "bias", c, fn),
        check_bool(training, "training"),
        check_number(momentum, "momentum"),
        check_number(eps, "eps"),
    )


def _batch_norm(
    x: Tensor,
    running_mean: Optional[Tensor],
    running_var: Optional[Tensor],
    weight: Optional[Tensor],
    bias: Optional[Tensor],
    training: bool,
    momentum: Factor,
    eps: float,
) -> Tensor:
    if not training and (running_mean is None or running_var is None):
        raise ValueError(
            "batch_norm(): running_mean and running_var must be defined in evaluation mode"
        )
    if training and numel(x.shape) // max(x.shape[1], 1) == 1:
        raise ValueError(
            f"batch_norm(): Expected more than 1 value per channel when training, got input "
            f"size {x.shape}"
        )
    if x.size == 0:
        return x
    return call(
        "layers.batch_norm", x, running_mean, running_var, weight, bias, training, momentum, eps
    )


class _BatchNorm(nn.Cell):
    """PyTorch's ``_BatchNorm``: ``weight``/``bias`` with ``affine``, and with
    ``track_running_stats`` the non-trainable ``running_mean``, ``running_var`` and
    ``num_batches_tracked`` (int64) Parameters."""

    _DIMS: Tuple[int, ...] = (2, 3)

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: Optional[float] = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        if not is_int(num_features) or num_features <= 0:
            raise ValueError(f"num_features must be a positive int, but got {num_features!r}")
        self.num_features = int(num_features)
        self.eps = check_number(eps, "eps")
        self.momentum = None if momentum is None else check_number(momentum, "momentum")
        self.affine = check_bool(affine, "affine")
        self.track_running_stats = check_bool(track_running_stats, "track_running_stats")
        dt = dtype or ms.float32
        c = self.num_features
        self.weight = self.bias = None
        if affine:
            self.weight = Parameter(Tensor(np.ones(c), dt), name="weight")
            if check_bool(bias, "bias"):
                self.bias = Parameter(Tensor(np.zeros(c), dt), name="bias")
        self.running_mean = self.running_var = self.num_batches_tracked = None
        if track_running_stats:
            self.running_mean = Parameter(
                Tensor(np.zeros(c), dt), "running_mean", requires_grad=False
            )
            self.running_var = Parameter(Tensor(np.ones(c), dt), "running_var", requires_grad=False)
            self.num_batches_tracked = Parameter(
                Tensor(0, ms.int64), "num_batches_tracked", requires_grad=False
            )
        # A PyTorch module starts in training mode; set_train(False) is its eval().
        self.set_train(True)

    def construct(self, input: Tensor) -> Tensor:
        x = check_float_tensor(input, "input")
        self._check_input_dim(x)
        if x.shape[1] != self.num_features and (
            self.weight is not None or self.running_mean is not None
        ):
            raise ValueError(
                f"{type(self).__name__}: input.shape[1] must be num_features="
                f"{self.num_features} (channels), but got input.shape={x.shape}"
            )
        factor: Factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.num_batches_tracked is not None:
            ops.assign_add(self.num_batches_tracked, Tensor(1, ms.int64))
            if self.momentum is None:  # the cumulative moving average
                factor = 1.0 / self.num_batches_tracked.astype(ms.float32)
        use_batch = self.training or self.running_mean is None
        keep = not self.training or self.track_running_stats
        return self._normalize(
            x,
            self.running_mean if keep else None,
            self.running_var if keep else None,
            use_batch,
            factor,
        )

    def _check_input_dim(self, x: Tensor) -> None:
        if x.ndim not in self._DIMS:
            want = " or ".join(f"{d}D" for d in self._DIMS)
            raise ValueError(f"{type(self).__name__}: expected {want} input (got {x.ndim}D input)")

    def _normalize(
        self, x: Tensor, running_mean: Stat, running_var: Stat, training: bool, factor: Factor
    ) -> Tensor:
        return _batch_norm(
            x, running_mean, running_var, self.weight, self.bias, training, factor, self.eps
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``(N, C)`` or ``(N, C, L)``, as :class:`torch.nn.BatchNorm1d`.

    See :func:`batch_norm`. PyTorch's defaults (``momentum=0.1``; ``None``: the cumulative
    average, ``1 / num_batches_tracked``), parameter and buffer names. As a PyTorch module it
    starts in training mode: ``set_train(False)`` is ``eval()``.

    Shape:
        - input: ``(N, C)`` or ``(N, C, L)``; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import BatchNorm1d
        >>> bn = BatchNorm1d(1, eps=0.0)
        >>> bn(ms.Tensor([[1.0], [3.0]])).asnumpy().tolist(), bn.running_mean.asnumpy().tolist()
        ([[-1.0], [1.0]], [0.20000000298023224])
    """

    _DIMS = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of ``(N, C, H, W)``, as :class:`torch.nn.BatchNorm2d`. See
    :func:`batch_norm` and :class:`BatchNorm1d`.

    Shape:
        - input: ``(N, C, H, W)``; output: the same.
    """

    _DIMS = (4,)


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of ``(N, C, D, H, W)``, as :class:`torch.nn.BatchNorm3d`. See
    :func:`batch_norm` and :class:`BatchNorm1d`.

    Shape:
        - input: ``(N, C, D, H, W)``; output: the same.
    """

    _DIMS = (5,)
