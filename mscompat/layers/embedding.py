"""Embeddings: ``embedding``, ``Embedding``, ``embedding_bag`` and ``EmbeddingBag``, as PyTorch.

MindSpore 2.10's ``nn.Embedding`` gives the ``padding_idx`` row a non-zero gradient (PyTorch:
zero) and zeroes that row of a supplied table; ``mint.nn.functional.embedding`` has no CPU
kernel in PyNative; there is no ``embedding_bag``. These follow PyTorch: the padding row's
gradient is zero, ``max_norm`` renormalises the rows looked up (PyTorch's ``embedding_renorm_``:
``row * max_norm / (norm + 1e-7)``), ``scale_grad_by_freq`` divides each row's gradient by the
number of times the row occurs in ``input``.

Indices outside ``[0, num_embeddings)`` raise a ``ValueError`` (PyTorch: ``IndexError``), in
graph mode too, before the lookup.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_bool, check_float_tensor, check_number, check_tensor, is_int
from mscompat._graph import compiling
from mscompat.custom_ops import embedding_bag as _bag_kernels
from mscompat.custom_ops.embedding_bag import STATUS_CHECK, rows_of
from mscompat.custom_ops.registry import call, device_target, register
from mscompat.layers._embedding_ops import (
    bag_ids,
    check_offsets,
    check_status,
    dense_bags,
    in_range,
    lookup,
    range_message,
    segment_bags,
)

__all__ = ["Embedding", "EmbeddingBag", "embedding", "embedding_bag"]

_INDEX = (ms.int32, ms.int64)
_MODES = ("sum", "mean", "max")
_BAG_OP = "layers.embedding_bag"
#: The static facts of a bag call the backends take: (mode, padding_idx wrapped (-1: none),
#: max_norm (-1: none), norm_type, scale_grad_by_freq, number of bags).
_BagSpec = Tuple[str, int, float, float, bool, int]


# ----------------------------------------------------------------------------- checks


def _check_indices(x: Any, name: str, fn: str) -> Tensor:
    x = check_tensor(x, name)
    if x.dtype not in _INDEX:
        raise TypeError(f"{fn}(): {name} must be an int32 or int64 Tensor, but got {x.dtype}")
    return x


def _check_weight(weight: Any, fn: str) -> Tensor:
    w = check_float_tensor(weight, "weight")
    if w.ndim != 2:
        raise ValueError(
            f"{fn}(): weight must be 2-D (num_embeddings, embedding_dim), got {w.shape}"
        )
    return w


@constexpr
def _padding(padding_idx: Any, n: int, fn: str) -> int:
    """``padding_idx`` wrapped into ``[0, n)``; -1 for None."""
    if padding_idx is None:
        return -1
    if not is_int(padding_idx):
        raise TypeError(f"{fn}(): padding_idx must be an int or None, but got {padding_idx!r}")
    if not -n <= padding_idx < n:
        raise ValueError(
            f"{fn}(): padding_idx must be within [-{n}, {n}) (num_embeddings={n}), but got "
            f"padding_idx={padding_idx}"
        )
    return int(padding_idx) % n


@constexpr
def _norm_args(max_norm: Any, norm_type: Any, fn: str) -> Tuple[float, float]:
    """(max_norm or -1.0 for None, norm_type)."""
    p = check_number(norm_type, "norm_type")
    if max_norm is None:
        return -1.0, p
    m = check_number(max_norm, "max_norm")
    if m < 0:
        raise ValueError(f"{fn}(): max_norm must be >= 0, but got max_norm={max_norm}")
    return m, p


def embedding(
    input: Tensor,
    weight: Tensor,
    padding_idx: Optional[int] = None,
    max_norm: Optional[float] = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """Rows of ``weight`` at ``input``, as :func:`torch.nn.functional.embedding`.

    .. math::
        \\text{out}[i_1, \\ldots, i_k, :] = W[\\text{input}[i_1, \\ldots, i_k], :]

    The gradient of ``weight`` adds the incoming gradient to each looked-up row; the row
    ``padding_idx`` gets none. ``max_norm``: each looked-up row with a ``norm_type``-norm above
    ``max_norm`` is scaled by ``max_norm / (norm + 1e-7)`` (PyTorch's renorm; the gradient
    reaches the row unscaled, as PyTorch's in-place renorm).

    .. note::
        PyTorch also writes the renormalised rows back into ``weight``; this function does not
        modify ``weight`` (its results are the same on every call, since a renormalised row is
        within ``max_norm``). ``sparse`` is accepted and ignored: the gradient is dense.

    Args:
        input (Tensor[*]): int32 or int64 indices in ``[0, num_embeddings)``; any shape.
        weight (Tensor[num_embeddings, embedding_dim]): float16, float32 or float64.
        padding_idx (int, optional): a row whose gradient is zero; negative counts from the end.
        max_norm (float, optional): renormalise looked-up rows to at most this norm.
        norm_type (float): the p of the norm for ``max_norm``.
        scale_grad_by_freq (bool): divide each row's gradient by its count in ``input``.
        sparse (bool): accepted for PyTorch's signature; no effect.

    Returns:
        Tensor[..., embedding_dim]: weight's dtype.

    Raises:
        TypeError: non-integer ``input``, non-float ``weight``, bad argument types.
        ValueError: ``weight`` not 2-D, ``padding_idx`` out of range, an index out of range.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import embedding
        >>> w = ms.Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
        >>> embedding(ms.Tensor([[2, 0]]), w, padding_idx=0).asnumpy().tolist()
        [[[4.0, 5.0], [0.0, 1.0]]]
    """
    fn = "embedding"
    idx = _check_indices(input, "input", fn)
    w = _check_weight(weight, fn)
    n = w.shape[0]
    pad = _padding(padding_idx, n, fn)
    limit, p = _norm_args(max_norm, norm_type, fn)
    check_bool(scale_grad_by_freq, "scale_grad_by_freq")
    check_bool(sparse, "sparse")
    if idx.size == 0:
        return ops.zeros(idx.shape + (w.shape[1],), w.dtype)
    idx = in_range(idx, n, range_message(fn, "input", n))
    if idx.ndim == 0:
        return lookup(w, idx.reshape((1,)), pad, limit, p, scale_grad_by_freq).reshape(-1)
    return lookup(w, idx, pad, limit, p, scale_grad_by_freq)


# ----------------------------------------------------------------------------- bags


@constexpr
def _bag_plan(
    shape: Tuple[int, ...],
    offsets_shape: Any,
    mode: Any,
    include_last: Any,
    psw_shape: Any,
    by_freq: Any,
    fn: str,
) -> int:
    """Check the bag layout; return the number of bags."""
    if mode not in _MODES:
        raise ValueError(f"{fn}(): mode must be one of 'sum', 'mean', 'max', but got {mode!r}")
    if mode == "max" and by_freq is True:
        raise ValueError(f"{fn}(): max mode does not support scaling the gradient by the frequency")
    check_bool(include_last, "include_last_offset")
    if psw_shape is not None:
        if mode != "sum":
            raise ValueError(
                f"{fn}(): per_sample_weights was not None. per_sample_weights is only supported "
                f"for mode='sum' (got mode={mode!r})"
            )
        if tuple(psw_shape) != tuple(shape):
            raise ValueError(
                f"{fn}(): per_sample_weights must have input's shape {tuple(shape)}, but got "
                f"{tuple(psw_shape)}"
            )
    if len(shape) == 2:
        if offsets_shape is not None:
            raise ValueError(f"{fn}(): if input is 2-D, then offsets has to be None")
        return int(shape[0])
    if len(shape) != 1:
        raise ValueError(f"{fn}(): input has to be 1-D or 2-D, but got shape {tuple(shape)}")
    if offsets_shape is None:
        raise ValueError(f"{fn}(): offsets has to be a 1-D Tensor but got None")
    if len(offsets_shape) != 1:
        raise ValueError(f"{fn}(): offsets has to be a 1-D Tensor, but got shape {offsets_shape}")
    bags = int(offsets_shape[0]) - (1 if include_last else 0)
    if bags < 0:
        raise ValueError(f"{fn}(): include_last_offset needs at least one offset")
    return bags


def embedding_bag(
    input: Tensor,
    weight: Tensor,
    offsets: Optional[Tensor] = None,
    max_norm: Optional[float] = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Optional[Tensor] = None,
    include_last_offset: bool = False,
    padding_idx: Optional[int] = None,
) -> Tensor:
    """Sums, means or maxima of bags of embeddings, as :func:`torch.nn.functional.embedding_bag`.

    .. math::
        \\text{out}[b] = \\operatorname{reduce}_{i \\in \\text{bag } b,\\;
        \\text{input}[i] \\ne \\text{padding\\_idx}} \\; w_i \\, W[\\text{input}[i]]

    with ``reduce`` the sum, mean or (elementwise) max, and ``w`` the ``per_sample_weights``
    (``mode='sum'`` only; 1 otherwise). A 2-D ``input (B, N)`` is ``B`` bags of ``N``; a 1-D
    ``input`` is cut into bags starting at ``offsets`` (``offsets[0] == 0``; with
    ``include_last_offset`` the last offset ends the last bag). An empty bag, or one holding only
    ``padding_idx``, gives zeros. ``max_norm``, ``norm_type`` and ``scale_grad_by_freq`` act as
    in :func:`embedding`.

    .. note::
        With ``scale_grad_by_freq``, each row's gradient is divided by the row's count in
        ``input``, as :func:`embedding` and PyTorch's CUDA kernel do. PyTorch 2.13's CPU kernel
        divides some rows by another row's count (pytorch/pytorch#190063, fixed upstream): a
        row occurring once after a repeated one in sorted order gets a smaller gradient there.

    Args:
        input (Tensor[B, N] or Tensor[n]): int32 or int64 indices.
        weight (Tensor[num_embeddings, embedding_dim]): float16, float32 or float64.
        offsets (Tensor[B] or Tensor[B + 1], optional): int32/int64 bag starts, for 1-D input.
        max_norm, norm_type, scale_grad_by_freq, sparse: as :func:`embedding`.
        mode (str): ``'sum'``, ``'mean'`` or ``'max'``.
        per_sample_weights (Tensor, optional): input's shape, weight's dtype (``'sum'`` only).
        include_last_offset (bool): ``offsets`` has ``B + 1`` entries, the last one the end.
        padding_idx (int, optional): an index left out of every bag.

    Returns:
        Tensor[B, embedding_dim]: weight's dtype.

    Raises:
        TypeError: bad dtypes or argument types.
        ValueError: bad shapes or mode, ``offsets[0] != 0``, an index out of range. In a graph
            the index and offsets errors are raised when the graph runs, and MindSpore 2.10
            cannot run that compiled graph again afterwards ("Invalid output number for
            flatten stub output nodes"); other graphs are unaffected.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import embedding_bag
        >>> w = ms.Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
        >>> x = ms.Tensor([0, 2, 1, 2])
        >>> embedding_bag(x, w, ms.Tensor([0, 2]), mode="sum").asnumpy().tolist()
        [[4.0, 6.0], [6.0, 8.0]]
    """
    fn = "embedding_bag"
    idx = _check_indices(input, "input", fn)
    w = _check_weight(weight, fn)
    if offsets is not None:
        offsets = _check_indices(offsets, "offsets", fn)
    psw = None
    if per_sample_weights is not None:
        psw = check_float_tensor(per_sample_weights, "per_sample_weights")
        if psw.dtype != w.dtype:
            raise TypeError(
                f"{fn}(): per_sample_weights must have weight's dtype {w.dtype}, but got "
                f"{psw.dtype}"
            )
    bags = _bag_plan(
        idx.shape,
        None if offsets is None else offsets.shape,
        mode,
        include_last_offset,
        None if psw is None else psw.shape,
        scale_grad_by_freq,
        fn,
    )
    n, dim = w.shape[0], w.shape[1]
    pad = _padding(padding_idx, n, fn)
    limit, p = _norm_args(max_norm, norm_type, fn)
    check_bool(scale_grad_by_freq, "scale_grad_by_freq")
    check_bool(sparse, "sparse")
    if idx.size == 0 or bags == 0:  # answered here: no backend sees an empty bag list
        if offsets is not None:
            check_offsets(offsets, idx.shape[0], fn)
        return ops.zeros((bags, dim), w.dtype)
    spec = (mode, pad, limit, p, scale_grad_by_freq, bags)
    return call(_BAG_OP, idx, w, offsets, psw, spec)


@register(_BAG_OP, "composite", note="gather, then masked sums/maxima (segment ops for offsets)")
def _bags_composite(
    idx: Tensor, w: Tensor, offsets: Optional[Tensor], psw: Optional[Tensor], spec: _BagSpec
) -> Tensor:
    mode, pad, limit, p, by_freq, bags = spec
    fn = "embedding_bag"
    n = w.shape[0]
    if offsets is not None:
        check_offsets(offsets, idx.shape[0], fn)
    idx = in_range(idx, n, range_message(fn, "input", n))
    work = ms.float32 if w.dtype == ms.float16 else w.dtype
    rows = lookup(w, idx, pad, limit, p, by_freq).astype(work)
    keep = ops.ones(idx.shape, ms.bool_) if pad < 0 else idx != pad
    if psw is not None:
        rows = rows * psw.astype(work).expand_dims(-1)
    if idx.ndim == 2:
        out = dense_bags(rows, keep, mode, work)
    else:
        out = segment_bags(rows, keep, bag_ids(offsets, idx.shape[0]), bags, mode, work)
    return out if work == w.dtype else out.astype(w.dtype)


@constexpr
def _bag_config(mode: str, pad: int, limit: float, p: float, psw: bool, by_freq: bool) -> Tensor:
    """The kernels' float64 configuration (``custom_ops.embedding_bag.CONFIG_SIZE``), built at
    compile time under ``ms.jit``."""
    cfg = [_MODES.index(mode), pad, 0, float(psw), limit, p, float(by_freq)]
    return Tensor(np.array(cfg, np.float64))


@constexpr
def _bag_dummies(bags: int, index: Any, work: Any) -> Tuple[Tensor, Tensor, Tensor]:
    """The number of bags as a shape (int8), and 1-element stand-ins for missing offsets and
    per_sample_weights (the kernels ignore them)."""
    carrier = Tensor(np.zeros((bags,), np.int8))
    off = Tensor(np.zeros((1,), np.int64)).astype(index)
    return carrier, off, Tensor(np.zeros((1,), np.float64)).astype(work)


@_bag_kernels.LIBRARY.backend(
    _BAG_OP, "C++ bags in PyTorch's order (threaded by bags); row-by-row scatter-add backward"
)
def _bags_aot(
    idx: Tensor, w: Tensor, offsets: Optional[Tensor], psw: Optional[Tensor], spec: _BagSpec
) -> Tensor:
    """float16 runs in float32 (as the composite, and PyTorch's accumulation)."""
    mode, pad, limit, p, by_freq, bags = spec
    work = w if w.dtype != ms.float16 else w.astype(ms.float32)
    carrier, off, psw_in = _bag_dummies(bags, idx.dtype, work.dtype)
    if offsets is not None:
        off = offsets if offsets.dtype == idx.dtype else offsets.astype(idx.dtype)
    if psw is not None:
        psw_in = psw if psw.dtype == work.dtype else psw.astype(work.dtype)
    cfg = _bag_config(mode, pad, limit, p, psw is not None, by_freq)
    kernels = _bag_kernels.KERNELS[device_target()]
    if mode == "max":
        out, _, status = kernels["BagMax"](work, idx, off, psw_in, cfg, carrier)
    else:
        out, status = kernels["BagSum"](work, idx, off, psw_in, cfg, carrier)
    if compiling():
        # In a graph the check runs as Python called by the graph: an `if status: raise` split
        # the graph at a branch, which tripled the forward's time and its median 10-40x.
        out = ops.depend(out, STATUS_CHECK["op"](status, rows_of(w.shape[0])))
    elif status:  # PyNative: one element, non-zero when a check failed (the cheapest condition)
        check_status(status.asnumpy(), np.array([w.shape[0]]))
    return out if out.dtype == w.dtype else out.astype(w.dtype)


# ----------------------------------------------------------------------------- Cells


def _table(num: int, dim: int, padding: int, dtype: Any) -> Tensor:
    """PyTorch's initial table: standard normal (MindSpore's generator), padding row zero."""
    table = ops.standard_normal((num, dim)).asnumpy().astype(np.float64)
    if padding >= 0:
        table[padding] = 0.0
    return Tensor(table, dtype)


class Embedding(nn.Cell):
    """A lookup table, as :class:`torch.nn.Embedding`. See :func:`embedding`.

    The parameter is ``weight`` (``num_embeddings x embedding_dim``), so a PyTorch state dict
    maps by name. It starts standard normal (drawn by MindSpore's generator), with the
    ``padding_idx`` row zero; ``_weight`` gives the table instead (kept as given, as PyTorch).

    Shape:
        - input: ``(*)`` int32/int64.
        - output: ``(*, embedding_dim)``.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import Embedding
        >>> table = ms.Tensor(np.eye(3, dtype=np.float32))
        >>> emb = Embedding.from_pretrained(table, padding_idx=1)
        >>> emb(ms.Tensor([2, 1])).asnumpy().tolist()
        [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: Optional[int] = None,
        max_norm: Optional[float] = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Optional[Tensor] = None,
        _freeze: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_sizes(num_embeddings, embedding_dim)
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = None
        if padding_idx is not None:
            self.padding_idx = _padding(padding_idx, num_embeddings, "Embedding")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        table = _initial(_weight, num_embeddings, embedding_dim, self.padding_idx, dtype)
        self.weight = Parameter(table, name="weight", requires_grad=not _freeze)

    def construct(self, input: Tensor) -> Tensor:
        return embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: Optional[int] = None,
        max_norm: Optional[float] = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An ``Embedding`` holding ``embeddings`` (2-D), frozen unless ``freeze=False``."""
        table = _check_weight(embeddings, "Embedding.from_pretrained")
        return cls(
            table.shape[0],
            table.shape[1],
            padding_idx,
            max_norm,
            norm_type,
            scale_grad_by_freq,
            sparse,
            _weight=table,
            _freeze=freeze,
        )


def _check_sizes(num: Any, dim: Any) -> None:
    for name, v in (("num_embeddings", num), ("embedding_dim", dim)):
        if not is_int(v):
            raise TypeError(f"{name} must be an int, but got {v!r}")
        if v < 0:
            raise ValueError(f"{name} must be >= 0, but got {name}={v}")


def _initial(weight: Any, num: int, dim: int, padding: Optional[int], dtype: Any) -> Tensor:
    if weight is None:
        return _table(num, dim, -1 if padding is None else padding, dtype or ms.float32)
    w = _check_weight(weight, "Embedding")
    if tuple(w.shape) != (num, dim):
        raise ValueError(
            f"Shape of weight does not match num_embeddings and embedding_dim: got "
            f"{tuple(w.shape)}, expected {(num, dim)}"
        )
    return w.copy()


class EmbeddingBag(nn.Cell):
    """Sums, means or maxima of bags of embeddings, as :class:`torch.nn.EmbeddingBag`.

    See :func:`embedding_bag`. The parameter is ``weight``, initialised as :class:`Embedding`'s.

    Shape:
        - input: ``(B, N)``, or ``(n,)`` with ``offsets (B,)`` / ``(B + 1,)``.
        - output: ``(B, embedding_dim)``.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import EmbeddingBag
        >>> table = ms.Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
        >>> bag = EmbeddingBag.from_pretrained(table, mode="max")
        >>> bag(ms.Tensor([[0, 2], [1, 0]])).asnumpy().tolist()
        [[4.0, 5.0], [2.0, 3.0]]
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: Optional[float] = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        _weight: Optional[Tensor] = None,
        include_last_offset: bool = False,
        padding_idx: Optional[int] = None,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_sizes(num_embeddings, embedding_dim)
        if mode not in _MODES:
            raise ValueError(f"mode must be one of 'sum', 'mean', 'max', but got {mode!r}")
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = None
        if padding_idx is not None:
            self.padding_idx = _padding(padding_idx, num_embeddings, "EmbeddingBag")
        table = _initial(_weight, num_embeddings, embedding_dim, self.padding_idx, dtype)
        self.weight = Parameter(table, name="weight")

    def construct(
        self,
        input: Tensor,
        offsets: Optional[Tensor] = None,
        per_sample_weights: Optional[Tensor] = None,
    ) -> Tensor:
        return embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm: Optional[float] = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: str = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: Optional[int] = None,
    ) -> EmbeddingBag:
        """An ``EmbeddingBag`` holding ``embeddings`` (2-D), frozen unless ``freeze=False``."""
        table = _check_weight(embeddings, "EmbeddingBag.from_pretrained")
        bag = cls(
            table.shape[0],
            table.shape[1],
            max_norm,
            norm_type,
            scale_grad_by_freq,
            mode,
            sparse,
            _weight=table,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        bag.weight.requires_grad = not freeze
        return bag
