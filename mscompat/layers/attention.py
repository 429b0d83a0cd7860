"""Attention: ``scaled_dot_product_attention`` and ``MultiheadAttention``, as PyTorch.

MindSpore 2.10 has no CPU kernel for ``ops.flash_attention_score`` ("The kernel
FlashAttentionScore unregistered"), and its ``nn.MultiheadAttention`` does not take PyTorch's
state dict names for every configuration. These follow PyTorch 2.13's CPU results:

* a fully masked query row (every key masked by a boolean mask, a ``-inf`` float mask, or
  both with ``is_causal``) gives an output row of zeros and zero gradients (PyTorch's CPU flash
  kernel and its math kernel's safe softmax), not NaN; a NaN in a float mask gives NaN in its
  row, as PyTorch;
* ``is_causal`` is aligned top-left: query ``i`` sees keys ``j <= i``;
* float16 is computed in float32 and rounded once (PyTorch's CPU kernels accumulate in float).

The computation is a dispatched primitive, ``layers.scaled_dot_product_attention``:

* ``aot``: a fused C++ kernel (:mod:`mscompat.custom_ops.attention`), float32 (float16
  through float32) without dropout: per block of query rows, oneDNN's sgemm and the row
  softmax in cache; the backward recomputes the weights from the rows' max and sum (no
  ``(L, S)`` tensor is kept; a float mask's gradient in a pass of its own); GQA without
  repeating the key/value heads;
* ``composite``: MindSpore's batched matmul and softmax on the whole ``(L, S)`` score block,
  or on blocks of query rows when it would exceed :data:`SCORE_BLOCK` elements (long
  sequences: the ``(L, S)`` scores are never held at once, in any dtype).
"""

from __future__ import annotations

import math
from typing import Any, List, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import constexpr

from mscompat._checks import check_bool, check_float_tensor, check_number, check_tensor
from mscompat.custom_ops import attention as _kernels
from mscompat.custom_ops.aot import constant
from mscompat.custom_ops.registry import call, register

__all__ = ["scaled_dot_product_attention"]

_FLOATS = (ms.float16, ms.float32, ms.float64)

#: The most elements of one block of attention scores; a longer query is processed in blocks
#: of rows, so that memory grows with ``L + S``, not ``L * S``, past this size.
SCORE_BLOCK = 2**25
#: The most query blocks (each is a sub-graph under ``ms.jit``).
_MAX_BLOCKS = 64

_SDPA = "layers.scaled_dot_product_attention"
_NEG_INF = float("-inf")


# ----------------------------------------------------------------------------- validation


def _broadcast_shapes(shapes: List[Tuple[int, ...]], names: List[str], fn: str) -> Tuple[int, ...]:
    """NumPy's broadcast of ``shapes``, or a ValueError naming the arguments."""
    try:
        return tuple(int(s) for s in np.broadcast_shapes(*shapes))
    except ValueError:
        given = ", ".join(f"{n}={s}" for n, s in zip(names, shapes))
        raise ValueError(f"{fn}(): the batch dims of {given} do not broadcast") from None


@constexpr
def _plan(
    q_shape: Tuple[int, ...],
    k_shape: Tuple[int, ...],
    v_shape: Tuple[int, ...],
    mask_shape: Optional[Tuple[int, ...]],
    dropout_p: Any,
    is_causal: Any,
    scale: Any,
    enable_gqa: Any,
) -> Tuple[float, float, int, Tuple[int, ...], Tuple[int, ...], bool]:
    """Check the shapes and options as PyTorch; return (dropout_p, scale, GQA group size,
    batch shape, output shape, whether nothing is computed: no keys, or an empty output).
    A compile-time constant under ``ms.jit``: its errors are raised there."""
    fn = "scaled_dot_product_attention"
    for name, shape in (("query", q_shape), ("key", k_shape), ("value", v_shape)):
        if len(shape) < 2:
            raise ValueError(f"{fn}(): {name} must have at least 2 dims (L, E), got {shape}")
    if k_shape[-1] != q_shape[-1]:
        raise ValueError(
            f"{fn}(): key.shape[-1] must equal query.shape[-1] (the embedding size E), but "
            f"got query.shape={q_shape} and key.shape={k_shape}"
        )
    if v_shape[-2] != k_shape[-2]:
        raise ValueError(
            f"{fn}(): value.shape[-2] must equal key.shape[-2] (the source length S), but got "
            f"key.shape={k_shape} and value.shape={v_shape}"
        )
    p = check_number(dropout_p, "dropout_p")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{fn}(): dropout_p must be in [0, 1], but got dropout_p={dropout_p}")
    check_bool(is_causal, "is_causal")
    check_bool(enable_gqa, "enable_gqa")
    if scale is None:
        factor = 1.0 / math.sqrt(q_shape[-1]) if q_shape[-1] else math.inf
    else:
        factor = check_number(scale, "scale")
    groups = 1
    k_lead, v_lead = tuple(k_shape[:-2]), tuple(v_shape[:-2])
    if enable_gqa and min(len(q_shape), len(k_shape), len(v_shape)) >= 3:
        hq, hk, hv = q_shape[-3], k_shape[-3], v_shape[-3]
        if hk != hv or hk == 0 or hq % hk:
            raise ValueError(
                f"{fn}(): with enable_gqa, key and value must have the same number of heads "
                f"(dim -3), dividing query's, but got query.shape={q_shape}, key.shape="
                f"{k_shape} and value.shape={v_shape}"
            )
        groups = hq // hk
        k_lead = k_lead[:-1] + (hq,)
        v_lead = v_lead[:-1] + (hq,)
    lead = _broadcast_shapes([tuple(q_shape[:-2]), k_lead, v_lead], ["query", "key", "value"], fn)
    if mask_shape is not None and is_causal:
        raise ValueError(
            f"{fn}(): attn_mask and is_causal=True cannot both be given (PyTorch raises): "
            "fold the causal mask into attn_mask"
        )
    if mask_shape is not None and len(mask_shape) < 2:
        raise ValueError(f"{fn}(): attn_mask must have at least 2 dims (L, S), got {mask_shape}")
    if mask_shape is not None:
        full = lead + (q_shape[-2], k_shape[-2])
        try:
            ok = tuple(np.broadcast_shapes(tuple(mask_shape), full)) == full
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(
                f"{fn}(): attn_mask of shape {tuple(mask_shape)} does not broadcast to the "
                f"attention weights' shape {full} (batch dims, L, S)"
            )
    out_shape = lead + (q_shape[-2], v_shape[-1])
    return p, factor, groups, lead, out_shape, k_shape[-2] == 0 or 0 in out_shape


def _check_tensors(query: Any, key: Any, value: Any, attn_mask: Any) -> Tuple[Tensor, ...]:
    """Type and dtype checks (graph-mode code: no try, no numpy)."""
    fn = "scaled_dot_product_attention"
    q = check_float_tensor(query, "query")
    k = check_float_tensor(key, "key")
    v = check_float_tensor(value, "value")
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise TypeError(
            f"{fn}(): query, key and value must have the same dtype, but got "
            f"query.dtype={q.dtype}, key.dtype={k.dtype} and value.dtype={v.dtype}"
        )
    if attn_mask is not None:
        mask = check_tensor(attn_mask, "attn_mask")
        if mask.dtype not in (ms.bool_, ms.float32, q.dtype):
            raise TypeError(
                f"{fn}(): attn_mask must be bool, float32 or query's dtype ({q.dtype}), but "
                f"got attn_mask.dtype={mask.dtype}"
            )
        return q, k, v, mask
    return q, k, v


# ----------------------------------------------------------------------------- composite


def _heads_repeated(t: Tensor, groups: int) -> Tensor:
    """``t.repeat_interleave(groups, dim=-3)`` as broadcast and reshape (GQA)."""
    if groups == 1:
        return t
    shape = t.shape
    wide = ops.broadcast_to(t.expand_dims(-3), shape[:-2] + (groups,) + shape[-2:])
    return wide.reshape(shape[:-3] + (shape[-3] * groups,) + shape[-2:])


def _mask_bias(
    mask: Optional[Tensor], is_causal: bool, length: int, source: int, dtype: Any
) -> Tuple[Optional[Tensor], Optional[Tensor]]:
    """The additive bias (0 / -inf, or the float mask) and, where some query row may be fully
    masked, the float ``keep`` factor of each row (0.0 for a fully masked row)."""
    bias = None
    if mask is not None:
        if mask.dtype == ms.bool_:
            bias = ops.where(mask, ops.zeros((), dtype), ops.full((), _NEG_INF, dtype=dtype))
        else:
            bias = mask.astype(dtype)
    if is_causal:
        tril = ops.arange(length).reshape((length, 1)) >= ops.arange(source)
        causal = ops.where(tril, ops.zeros((), dtype), ops.full((), _NEG_INF, dtype=dtype))
        bias = causal if bias is None else bias + causal
    keep = None
    if mask is not None and bias is not None:
        # A row whose every key is masked: PyTorch's CPU kernels give zeros there, not NaN.
        masked = ops.equal(bias, ops.full((), _NEG_INF, dtype=dtype))
        keep = ops.logical_not(masked.all(-1, keep_dims=True)).astype(dtype)
        # The row's softmax runs on finite scores (its result is dropped), so no NaN reaches
        # the gradient.
        bias = ops.where(keep > 0, bias, ops.zeros((), dtype))
    return bias, keep


def _block(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    bias: Optional[Tensor],
    keep: Optional[Tensor],
    dropout_p: float,
    lead: Tuple[int, ...],
) -> Tensor:
    """Attention of a block of query rows: ``q (N, l, E)``, ``k (N, S, E)``, ``v (N, S, Ev)``;
    ``bias``/``keep`` broadcast to ``lead + (l, S)`` / ``lead + (l, 1)``."""
    n, rows, source = q.shape[0], q.shape[1], k.shape[1]
    scores = ops.BatchMatMul(transpose_b=True)(q, k)
    if bias is not None:
        scores = (scores.reshape(lead + (rows, source)) + bias).reshape((n, rows, source))
    weights = ops.softmax(scores, -1)
    if dropout_p > 0:
        weights = ops.dropout(weights, p=dropout_p)
    out = ops.BatchMatMul()(weights, v)
    if keep is not None:
        out = (out.reshape(lead + (rows, v.shape[-1])) * keep).reshape((n, rows, v.shape[-1]))
    return out


def _rows(t: Optional[Tensor], start: int, stop: int) -> Optional[Tensor]:
    """``t[..., start:stop, :]`` when ``t`` varies along the query dim (-2), else ``t``."""
    if t is None or t.shape[-2] == 1:
        return t
    return t[..., start:stop, :]


@constexpr
def _scalar(value: float, dtype: Any) -> Tensor:
    """``value`` as a 0-d constant of ``dtype`` (under ``ms.jit`` a Python float multiplying
    a float64 Tensor is rounded to float32 first)."""
    return Tensor(np.array(value, np.float64), dtype)


def _flat(t: Tensor, lead: Tuple[int, ...], dtype: Any, n: int) -> Tensor:
    """``t`` broadcast to ``lead + t.shape[-2:]`` as ``(n, rows, cols)`` in ``dtype`` (no copy
    where nothing changes)."""
    if t.shape[:-2] != lead:
        t = ops.broadcast_to(t, lead + t.shape[-2:])
    if t.dtype != dtype:
        t = t.astype(dtype)
    return t.reshape((n,) + t.shape[-2:])


@register(_SDPA, "composite", note="batched matmul + softmax, in blocks of query rows")
def _sdpa_composite(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Optional[Tensor],
    dropout_p: float,
    is_causal: bool,
    scale: float,
    groups: int,
) -> Tensor:
    dtype = q.dtype
    work = ms.float32 if dtype == ms.float16 else dtype
    lead = tuple(q.shape[:-2])
    length, source, ev = q.shape[-2], k.shape[-2], v.shape[-1]
    k = _heads_repeated(k, groups)
    v = _heads_repeated(v, groups)
    n = 1
    for s in lead:
        n *= s
    q3 = _flat(q, lead, work, n)
    k3 = _flat(k, lead, work, n)
    v3 = _flat(v, lead, work, n)
    q3 = q3 * _scalar(scale, work)
    bias, keep = _mask_bias(mask, is_causal, length, source, work)
    rows = max(1, SCORE_BLOCK // max(1, n * source))
    rows = max(rows, -(-length // _MAX_BLOCKS))
    if rows >= length:
        out = _block(q3, k3, v3, bias, keep, dropout_p, lead)
    else:
        parts = []
        for start in range(0, length, rows):
            stop = min(start + rows, length)
            parts.append(
                _block(
                    q3[:, start:stop],
                    k3,
                    v3,
                    _rows(bias, start, stop),
                    _rows(keep, start, stop),
                    dropout_p,
                    lead,
                )
            )
        out = ops.concat(parts, 1)
    out = out.reshape(lead + (length, ev))
    return out if dtype == work else out.astype(dtype)


@constexpr
def _mask_index(mask_lead: Tuple[int, ...], lead: Tuple[int, ...]) -> Tensor:
    """For each of the ``prod(lead)`` attention problems, the index of its mask among the
    ``prod(mask_lead)`` ones of a mask broadcasting over the batch dims ``lead``."""
    padded = (1,) * (len(lead) - len(mask_lead)) + tuple(mask_lead)
    count = int(np.prod(padded, dtype=np.int64))
    index = np.broadcast_to(np.arange(count, dtype=np.int64).reshape(padded), lead)
    return Tensor(np.ascontiguousarray(index).reshape(-1))


def _kernel_bias(
    mask: Optional[Tensor], lead: Tuple[int, ...], n: int, source: int
) -> Tuple[Tensor, Tensor]:
    """The kernel's ``bias (M, Lm, S)`` (a float mask, or 0 where a boolean mask attends and
    -inf where not) and ``index (n,)``; placeholders without a mask."""
    if mask is None:
        return constant((1, 1, 1), 0.0, ms.float32), constant((n,), 0, ms.int64)
    if mask.dtype == ms.bool_:
        bias = ops.where(mask, ops.zeros((), ms.float32), ops.full((), _NEG_INF, dtype=ms.float32))
    else:
        bias = mask.astype(ms.float32)
    rows = bias.shape[-2]
    if bias.shape[-1] != source:
        bias = ops.broadcast_to(bias, bias.shape[:-1] + (source,))
    index = _mask_index(tuple(bias.shape[:-2]), lead)
    return bias.reshape((-1, rows, source)), index


@_kernels.LIBRARY.backend(
    _SDPA,
    "fused C++ kernel: sgemm + softmax per block of query rows; the backward recomputes "
    "the weights from the rows' max and sum",
    _kernels.kernel_supports,
)
def _sdpa_aot(q: Tensor, k: Tensor, v: Tensor, mask: Optional[Tensor], *options: Any) -> Tensor:
    """The composite's arguments; ``options``: dropout_p (0 here), is_causal, scale, groups."""
    is_causal, scale, groups = options[1], options[2], options[3]
    lead = tuple(q.shape[:-2])
    length, source, ev = q.shape[-2], k.shape[-2], v.shape[-1]
    n = 1
    for s in lead:
        n *= s
    kv_lead = lead[:-1] + (lead[-1] // groups,) if groups > 1 else lead
    bias, index = _kernel_bias(mask, lead, n, source)
    out = _kernels.attention(
        _flat(q, lead, ms.float32, n),
        _flat(k, kv_lead, ms.float32, n // groups),
        _flat(v, kv_lead, ms.float32, n // groups),
        bias,
        index,
        _kernels.options(scale, is_causal, mask is not None),
        mask is not None and mask.dtype != ms.bool_,
    )
    return out.reshape(lead + (length, ev)).astype(q.dtype)


# ----------------------------------------------------------------------------- front door


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Optional[Tensor] = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: Optional[float] = None,
    enable_gqa: bool = False,
) -> Tensor:
    """Scaled dot-product attention, as :func:`torch.nn.functional.scaled_dot_product_attention`.

    .. math::
        \\operatorname{out} = \\operatorname{dropout}\\!\\left(\\operatorname{softmax}\\!\\left(
        s\\, Q K^\\top + B\\right)\\right) V, \\qquad s = \\text{scale or } 1/\\sqrt{E}

    where the bias :math:`B` is the float ``attn_mask``, or ``0`` where a boolean ``attn_mask``
    is True and :math:`-\\infty` where it is False, plus :math:`-\\infty` above the diagonal
    with ``is_causal`` (top-left aligned: query ``i`` attends keys ``j <= i``; as PyTorch,
    ``attn_mask`` and ``is_causal`` exclude each other). A query row with every
    key masked gives zeros (and zero gradients), as PyTorch's CPU kernels; a NaN in a float mask
    gives NaN in its row.

    ``dropout_p > 0`` zeroes attention weights with probability ``dropout_p`` and scales the
    others by ``1 / (1 - dropout_p)`` on every call (as PyTorch, there is no training flag:
    pass ``dropout_p=0.0`` in evaluation). The draws come from MindSpore's random generator:
    ``mindspore.set_seed(s)`` makes a program's sequence of calls repeatable; they cannot
    reproduce PyTorch's draws.

    Args:
        query (Tensor[..., L, E]): float16, float32 or float64.
        key (Tensor[..., S, E]): query's dtype; batch dims broadcast with query's.
        value (Tensor[..., S, Ev]): query's dtype.
        attn_mask (Tensor, optional): bool (True: attend), or float32 / query's dtype (added to
            the scores); broadcastable to ``(..., L, S)``.
        dropout_p (float): dropout probability on the attention weights, in ``[0, 1]``.
        is_causal (bool): mask keys after the query's position (top-left aligned).
        scale (float, optional): the factor of :math:`QK^\\top`; default :math:`1/\\sqrt{E}`.
        enable_gqa (bool): grouped-query attention: key and value have ``Hk`` heads (dim -3)
            dividing query's ``Hq``; each is used by ``Hq / Hk`` consecutive query heads.

    Returns:
        Tensor[..., L, Ev]: query's dtype, the broadcast batch dims.

    Raises:
        TypeError: a non-Tensor, non-float or mismatched dtype, a mask of another dtype.
        ValueError: too few dims, mismatched E or S, a mask that does not broadcast, bad GQA
            heads, ``dropout_p`` outside ``[0, 1]``.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import scaled_dot_product_attention
        >>> q = ms.Tensor(np.eye(2, 4, dtype=np.float32)[None])
        >>> v = ms.Tensor(np.array([[[1.0], [3.0]]], np.float32))
        >>> out = scaled_dot_product_attention(q, q, v, is_causal=True)
        >>> out.asnumpy()[0, :, 0].astype(float).round(4).tolist()
        [1.0, 2.2449]
    """
    checked = _check_tensors(query, key, value, attn_mask)
    q, k, v = checked[0], checked[1], checked[2]
    mask = checked[3] if attn_mask is not None else None
    p, factor, groups, lead, out_shape, trivial = _plan(
        q.shape,
        k.shape,
        v.shape,
        None if mask is None else mask.shape,
        dropout_p,
        is_causal,
        scale,
        enable_gqa,
    )
    if trivial:
        # PyTorch: no keys gives zeros; an empty batch or query gives an empty output.
        return ops.zeros(out_shape, q.dtype)
    if q.shape[:-2] != lead:
        q = ops.broadcast_to(q, lead + q.shape[-2:])
    return call(_SDPA, q, k, v, mask, p, is_causal, factor, groups)
