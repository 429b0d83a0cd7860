"""``SyncBatchNorm`` as :class:`torch.nn.SyncBatchNorm`: batch normalisation over the batch of
every process of a communication group.

In training, with :func:`mindspore.communication.init` called (``msrun``), each process
all-reduces (``ops.AllReduce``, sum) its per-channel sum and element count, then the sum of
squared deviations from the global mean: the statistics of the concatenated global batch, the
counts free to differ between ranks. MindSpore differentiates ``AllReduce`` (sum) with an
all-reduce of the gradient, so the backward sums the ranks' ``sum(dy)`` and
``sum(dy * (x - mean))`` as PyTorch's ``SyncBatchNorm`` backward does: each rank gets the
gradient of the sum of the ranks' losses with respect to its own input, and the local part of
the weight and bias gradients (the data-parallel gradient reducer sums or averages them, as DDP).
Not distributed, in evaluation, or in a group of one process, it is :func:`batch_norm`
(PyTorch's single-process path: ``F.batch_norm``).

MindSpore's own ``nn.SyncBatchNorm`` (``momentum`` the weight of the old statistics, parameters
``gamma``/``beta``/``moving_mean``/``moving_variance``, 2-D and 4-D inputs, ``process_groups``
as lists of ranks) and ``mint.nn.SyncBatchNorm`` (the world size fixed when the Cell is built)
run the kernels of Ascend/GPU when synchronising (on CPU under ``msrun``, measured: the first
asks for a group name, the second has no ``BatchNormStats`` kernel).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import numel
from mscompat.custom_ops.registry import call, register
from mscompat.layers.affine_norm import affine
from mscompat.layers.batch_norms import (
    Factor,
    Stat,
    _batch_norm,
    _BatchNorm,
    _update,
    check_batch_norm_args,
)
from mscompat.layers.normalization import _const, _work

__all__ = ["SyncBatchNorm", "sync_batch_norm"]


def _check_group(process_group: Any) -> Optional[str]:
    if process_group is not None and not isinstance(process_group, str):
        raise TypeError(
            f"process_group must be None (the world) or a MindSpore communication group name "
            f"(str), but got {type(process_group).__name__}"
        )
    return process_group


@constexpr
def _group_of(process_group: Any) -> Tuple[str, int]:
    """The group's name and number of ranks (1 when no communication is initialised)."""
    from mindspore.communication.management import GlobalComm, get_group_size

    if not GlobalComm.INITED:
        return "", 1
    group = GlobalComm.WORLD_COMM_GROUP if process_group is None else process_group
    return group, int(get_group_size(group))


def _all_reduce(reduce: Any, v: Tensor) -> Tensor:
    """``reduce(v)``; float64 goes through float32 (MindSpore 2.10's CPU AllReduce has no
    float64: the statistics of a float64 input are then about float32-accurate)."""
    if v.dtype == ms.float64:
        return reduce(v.astype(ms.float32)).astype(ms.float64)
    return reduce(v)


@register(
    "layers.sync_batch_norm",
    "composite",
    note="all-reduced sum and count, then sum of squared deviations; float16 in float32",
)
def _sync_batch_norm_composite(
    x: Tensor,
    running_mean: Stat,
    running_var: Stat,
    weight: Stat,
    bias: Stat,
    momentum: Factor,
    eps: float,
    group: str,
) -> Tensor:
    reduce = ops.AllReduce(ops.ReduceOp.SUM, group)
    work = _work(x.dtype)
    wide = x.astype(work)
    c = x.shape[1]
    shape = (1, c) + (1,) * (x.ndim - 2)
    dims = (0,) + tuple(range(2, x.ndim))
    local_count = ops.fill(work, (1,), numel(x.shape) // c)
    sums = _all_reduce(reduce, ops.concat((wide.sum(dims), local_count)))
    count = ops.stop_gradient(sums[c:])  # the global batch's elements per channel
    mean = sums[:c] / count
    centred = wide - mean.reshape(shape)
    # Two passes (not E[x^2] - E[x]^2): no cancellation where |mean| >> std.
    var = _all_reduce(reduce, (centred * centred).sum(dims)) / count
    y = centred * ops.rsqrt(var + _const(eps, work)).reshape(shape)
    if running_mean is not None and running_var is not None:
        _update(running_mean, mean, momentum)
        _update(running_var, var * count / (count - 1), momentum)
    return affine(y, weight, bias, shape).astype(x.dtype)


def _sync_batch_norm(
    x: Tensor,
    running_mean: Stat,
    running_var: Stat,
    weight: Stat,
    bias: Stat,
    training: bool,
    momentum: Factor,
    eps: float,
    process_group: Optional[str],
    sync: bool,
) -> Tensor:
    group, world = _group_of(process_group)
    if not (training and sync) or world < 2:  # PyTorch falls back to F.batch_norm
        return _batch_norm(x, running_mean, running_var, weight, bias, training, momentum, eps)
    if x.size == 0:
        # PyTorch's empty rank joins the backward's all-reduce explicitly; MindSpore 2.10's
        # autodiff prunes the gradient of empty tensors, so that rank would skip it and the
        # ranks' collectives would pair up wrongly (measured: corrupt sums, then a crash).
        raise ValueError(
            f"sync_batch_norm(): every rank needs at least one sample when synchronising, but "
            f"input.shape={x.shape} here (MindSpore's autodiff skips an empty rank's backward "
            f"all-reduce)"
        )
    return call(
        "layers.sync_batch_norm", x, running_mean, running_var, weight, bias, momentum, eps, group
    )


def sync_batch_norm(
    input: Tensor,
    running_mean: Optional[Tensor],
    running_var: Optional[Tensor],
    weight: Optional[Tensor] = None,
    bias: Optional[Tensor] = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
    process_group: Optional[str] = None,
) -> Tensor:
    """Batch normalisation over the batches of all ranks of ``process_group``: the function
    inside :class:`torch.nn.SyncBatchNorm` (PyTorch's ``sync_batch_norm`` autograd Function).

    .. math::
        \\mu_c = \\frac{1}{N} \\sum_{r} \\sum_{i \\in r} x_{i,c}, \\quad
        \\sigma^2_c = \\frac{1}{N} \\sum_{r} \\sum_{i \\in r} (x_{i,c} - \\mu_c)^2, \\quad
        y_{i,c} = \\frac{x_{i,c} - \\mu_c}{\\sqrt{\\sigma^2_c + \\epsilon}}\\, w_c + b_c

    with :math:`N` the global count per channel (the ranks' batches may differ in size; unlike
    PyTorch, none may be empty: see Raises). ``training`` with
    :func:`mindspore.communication.init` called and two or more ranks in the group: the sums
    are all-reduced, the running statistics (the same on every rank) updated with
    :math:`\\mu` and the unbiased :math:`\\sigma^2 N / (N - 1)`, and
    the gradients are those of PyTorch's ``SyncBatchNorm`` (see the module's notes).
    Otherwise exactly :func:`batch_norm`. Works in PyNative and under ``ms.jit``; every rank
    must call it the same number of times (it is a collective).

    .. note::
        MindSpore 2.10's CPU ``AllReduce`` takes no float64: a float64 input's sums are
        all-reduced in float32, so its synchronised statistics are float32-accurate (about
        1e-7 relative). float16 is computed and all-reduced in float32, rounded once.

    Args:
        input (Tensor[N, C, ...]): float16, float32 or float64, at least 2 dims.
        running_mean, running_var (Tensor[C], optional): updated in place when training.
        weight, bias (Tensor[C], optional): affine parameters.
        training (bool): use (and update) the batch statistics, synchronised.
        momentum (float): the weight of the new statistics.
        eps (float): added to the variance.
        process_group (str, optional): a MindSpore communication group
            (:func:`mindspore.communication.create_group`); ``None``: the world.

    Returns:
        Tensor[N, C, ...]: input's dtype.

    Raises:
        TypeError: non-float tensors, non-str ``process_group``, as :func:`batch_norm`.
        ValueError: fewer than 2 dims, statistics or parameters of another shape, running
            statistics missing when not training; an empty local batch when synchronising
            (MindSpore 2.10's autodiff would skip this rank's backward all-reduce and leave
            the others waiting: raised on that rank, before any collective).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import sync_batch_norm
        >>> x = ms.Tensor([[1.0], [3.0]])  # one process: batch_norm
        >>> sync_batch_norm(x, None, None, training=True, eps=0.0).asnumpy().tolist()
        [[-1.0], [1.0]]
    """
    args = check_batch_norm_args(
        "sync_batch_norm", input, running_mean, running_var, weight, bias, training, momentum, eps
    )
    group = _check_group(process_group)
    return _sync_batch_norm(*args, group, args[5])


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation synchronised over the ranks of a communication group, as
    :class:`torch.nn.SyncBatchNorm`.

    See :func:`sync_batch_norm`. PyTorch's arguments, defaults (``momentum=None``: the
    cumulative average), parameter and buffer names (``weight``, ``bias``, ``running_mean``,
    ``running_var``, ``num_batches_tracked``). Synchronises only in training (as PyTorch, not
    in evaluation even without running statistics); not distributed it is the ``BatchNorm``
    of its input's rank. ``process_group``: a MindSpore group name (``None``: the world). As a
    PyTorch module it starts in training mode: ``set_train(False)`` is ``eval()``.

    .. note::
        PyTorch synchronises CUDA (and XPU, HPU) tensors only and raises for CPU ones when
        distributed; this synchronises on every MindSpore device (CPU workers of ``msrun``
        included).

    Shape:
        - input: ``(N, C, ...)``, at least 2 dims; output: the same.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import SyncBatchNorm
        >>> bn = SyncBatchNorm(1, eps=0.0)
        >>> bn(ms.Tensor([[1.0], [3.0]])).asnumpy().tolist(), bn.running_var.asnumpy().tolist()
        ([[-1.0], [1.0]], [1.100000023841858])
    """

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: Optional[float] = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Optional[str] = None,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features, eps, momentum, affine, track_running_stats, device, dtype, bias=bias
        )
        self.process_group = _check_group(process_group)

    def _check_input_dim(self, x: Tensor) -> None:
        if x.ndim < 2:
            raise ValueError(f"SyncBatchNorm: expected at least 2D input (got {x.ndim}D input)")
        if x.shape[1] == 0:
            raise ValueError("SyncBatchNorm: the number of input channels should be non-zero")

    def _normalize(
        self, x: Tensor, running_mean: Stat, running_var: Stat, training: bool, factor: Factor
    ) -> Tensor:
        return _sync_batch_norm(
            x,
            running_mean,
            running_var,
            self.weight,
            self.bias,
            training,
            factor,
            self.eps,
            self.process_group,
            self.training,
        )

    @classmethod
    def convert_sync_batchnorm(cls, module: nn.Cell, process_group: Optional[str] = None) -> Any:
        """Replace every batch normalisation Cell in ``module`` by a :class:`SyncBatchNorm`, as
        :meth:`torch.nn.SyncBatchNorm.convert_sync_batchnorm`.

        Converts mscompat's ``BatchNorm1d/2d/3d`` (and ``SyncBatchNorm``), MindSpore's
        ``nn.BatchNorm1d/2d/3d`` (whose ``momentum`` attribute is already PyTorch's; ``affine``
        where ``gamma`` is trainable; ``gamma``/``beta``/``moving_mean``/``moving_variance``
        become ``weight``/``bias``/``running_mean``/``running_var``) and
        ``mint.nn.BatchNorm1d/2d/3d``, recursively; their values, train mode and parameter
        names' prefixes are kept.

        .. note::
            PyTorch's converted module shares the old module's tensors; here the values are
            copied into new Parameters (MindSpore's names differ): build the optimizer after
            converting, as PyTorch's documentation does before wrapping in DDP.

        Args:
            module (Cell): a network, or a batch normalisation Cell.
            process_group (str, optional): the group to synchronise over; ``None``: the world.

        Returns:
            Cell: ``module`` with its batch normalisations converted, or a new
            :class:`SyncBatchNorm` when ``module`` is one.

        Example:
            >>> from mindspore import nn
            >>> from mscompat.layers import BatchNorm2d, SyncBatchNorm
            >>> net = nn.SequentialCell([nn.Conv2d(3, 4, 3), BatchNorm2d(4), nn.BatchNorm2d(4)])
            >>> net = SyncBatchNorm.convert_sync_batchnorm(net)
            >>> [type(c).__name__ for c in net.cell_list], net[2].momentum
            (['Conv2d', 'SyncBatchNorm', 'SyncBatchNorm'], 0.1)
            >>> sorted(p.name for p in net[1].get_parameters())
            ['1.bias', '1.num_batches_tracked', '1.running_mean', '1.running_var', '1.weight']
        """
        group = _check_group(process_group)
        if not isinstance(module, nn.Cell):
            raise TypeError(f"module must be a mindspore.nn.Cell, but got {type(module).__name__}")
        converted = _as_sync(cls, module, group)
        if converted is not None:
            return converted
        for name, child in list(module.name_cells().items()):
            new = cls.convert_sync_batchnorm(child, group)
            if new is not child:
                _replace_child(module, name, child, new)
        return module


#: (mscompat/PyTorch name, MindSpore nn name) of a batch normalisation's parameters.
_MS_NAMES = (
    ("weight", "gamma"),
    ("bias", "beta"),
    ("running_mean", "moving_mean"),
    ("running_var", "moving_variance"),
)


def _as_sync(cls: Any, module: nn.Cell, group: Optional[str]) -> Optional[nn.Cell]:
    """``module`` as a new ``cls``, or None when it is no batch normalisation."""
    from mindspore.mint.nn.layer.normalization import _BatchNorm as MintBatchNorm
    from mindspore.nn.layer.normalization import _BatchNorm as MsBatchNorm

    if isinstance(module, (_BatchNorm, MintBatchNorm)):
        names = [n for n, _ in _MS_NAMES] + ["num_batches_tracked"]
        values = {n: getattr(module, n, None) for n in names}
        momentum = module.momentum
        affine, tracked = bool(module.affine), bool(module.track_running_stats)
    elif isinstance(module, MsBatchNorm):  # its momentum attribute is already PyTorch's
        values = {ours: getattr(module, theirs, None) for ours, theirs in _MS_NAMES}
        momentum = round(float(module.momentum), 12)  # 1 - 0.9 is 0.09999999999999998
        affine, tracked = bool(module.gamma.requires_grad), True
    else:
        return None
    sync = cls(
        int(module.num_features),
        float(module.eps),
        momentum,
        affine,
        tracked,
        group,
        bias=not affine or values["bias"] is not None,
    )
    for name, value in values.items():
        mine = getattr(sync, name, None)
        if isinstance(mine, Parameter) and isinstance(value, Tensor):
            mine.set_data(value.astype(mine.dtype).copy())
    sync.set_train(module.training)
    return sync


def _replace_child(parent: nn.Cell, name: str, old: nn.Cell, new: nn.Cell) -> None:
    """Put ``new`` where ``parent`` holds ``old``; its Parameters take ``old``'s name prefix."""
    prefix = ""
    for local, param in old.parameters_and_names():
        if param.name.endswith(local):
            prefix = param.name[: len(param.name) - len(local)]
        break
    if isinstance(parent, (nn.SequentialCell, nn.CellList)):
        parent[list(parent.name_cells()).index(name)] = new
    else:
        setattr(parent, name, new)
    if prefix:
        new.update_parameters_name(prefix)
