"""Multi-head attention: ``multi_head_attention_forward`` and ``MultiheadAttention``, as
PyTorch's ``torch.nn.functional.multi_head_attention_forward`` and ``torch.nn.MultiheadAttention``.

PyTorch's semantics, step by step (``torch/nn/functional.py``): boolean masks mean True = masked
(the opposite of :func:`~mscompat.layers.scaled_dot_product_attention`'s) and become ``-inf``;
``key_padding_mask`` is added to ``attn_mask``; ``bias_k``/``bias_v`` and ``add_zero_attn`` append
a key (and a zero mask column); with ``need_weights`` the weights are an explicit softmax (a
fully masked query row gives NaN, as PyTorch), averaged over heads unless
``average_attn_weights=False``; without, the attention is
:func:`~mscompat.layers.scaled_dot_product_attention` (a fully masked row gives zeros, as
PyTorch's CPU kernel), which also takes ``is_causal`` when no mask has to be merged. The Cell's
parameters have PyTorch's names (``in_proj_weight``, ``q_proj_weight``..., ``out_proj.weight``),
so a PyTorch state dict maps one to one.
"""

from __future__ import annotations

import math
from typing import Any, Dict, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.initializer import Normal, Uniform, initializer
from mindspore.ops import constexpr

from mscompat._checks import check_bool, check_float_tensor, check_int, check_number, check_tensor
from mscompat.layers.attention import scaled_dot_product_attention

__all__ = ["MultiheadAttention", "multi_head_attention_forward"]

_FN = "multi_head_attention_forward"
Shape = Tuple[int, ...]


@constexpr
def _plan(
    q: Shape,
    k: Shape,
    v: Shape,
    kpm: Optional[Shape],
    mask: Optional[Shape],
    embed: Any,
    heads: Any,
    separate: bool,
    bias_kv: bool,
    zero_attn: bool,
    static_k: Optional[Shape],
    static_v: Optional[Shape],
) -> Tuple[bool, int, int, int, int]:
    """PyTorch's shape checks; (batched, L, N, head dim, S after the appended keys)."""
    if len(q) not in (2, 3):
        raise ValueError(f"{_FN}(): query must be 2-D (unbatched) or 3-D, but got shape {q}")
    batched = len(q) == 3
    if len(k) != len(q) or len(v) != len(q):
        raise ValueError(
            f"{_FN}(): key and value must be {len(q)}-D as query, but got key of shape {k} and "
            f"value of shape {v}"
        )
    if kpm is not None and len(kpm) != len(q) - 1:
        raise ValueError(
            f"{_FN}(): key_padding_mask must be {len(q) - 1}-D (N, S) for a {len(q)}-D query, "
            f"but got shape {kpm}"
        )
    if mask is not None and len(mask) not in (2, 3):
        raise ValueError(f"{_FN}(): attn_mask must be 2-D or 3-D, but got shape {mask}")
    heads = check_int(heads, "num_heads")
    embed = check_int(embed, "embed_dim_to_check")
    length, src = q[0], k[0]
    bsz = q[1] if batched else 1
    e = q[-1]
    if e != embed:
        raise ValueError(f"{_FN}(): expected embed_dim {embed}, but got query of shape {q}")
    if heads < 1 or e % heads:
        raise ValueError(f"{_FN}(): embed_dim {e} must be divisible by num_heads {heads}")
    hd = e // heads
    if separate:
        if tuple(k[:-1]) != tuple(v[:-1]):
            raise ValueError(
                f"{_FN}(): key's sequence and batch dims {k[:-1]} do not match value's {v[:-1]}"
            )
    elif tuple(k) != tuple(v):
        raise ValueError(f"{_FN}(): key shape {k} does not match value shape {v}")
    if batched and k[1] != bsz:
        raise ValueError(f"{_FN}(): key's batch dim must be {bsz}, but got key of shape {k}")
    if mask is not None:
        want = (length, src) if len(mask) == 2 else (bsz * heads, length, src)
        if tuple(mask) != want:
            raise ValueError(
                f"{_FN}(): the shape of the {len(mask)}-D attn_mask is {mask}, but should be {want}"
            )
    if bias_kv and (static_k is not None or static_v is not None):
        raise ValueError(f"{_FN}(): bias_k/bias_v cannot be added to static_k/static_v")
    for name, st in (("static_k", static_k), ("static_v", static_v)):
        if st is not None and (len(st) != 3 or st[0] != bsz * heads or st[2] != hd):
            raise ValueError(
                f"{_FN}(): {name} must have shape ({bsz * heads}, S, {hd}), but got {st}"
            )
    s = static_k[1] if static_k is not None else src + int(bias_kv)
    s += int(zero_attn)
    if kpm is not None and tuple(kpm) != ((bsz, src) if batched else (src,)):
        raise ValueError(
            f"{_FN}(): key_padding_mask must have shape {(bsz, src) if batched else (src,)}, "
            f"but got {kpm}"
        )
    return batched, length, bsz, hd, s


def _float_mask(mask: Optional[Tensor], name: str, dtype: Any) -> Optional[Tensor]:
    """PyTorch's ``_canonical_mask``: bool (True = masked) -> 0 / -inf; float as it is."""
    if mask is None:
        return None
    mask = check_tensor(mask, name)
    if mask.dtype == ms.bool_:
        return ops.where(mask, ops.full((), float("-inf"), dtype=dtype), ops.zeros((), dtype))
    if mask.dtype not in (ms.float16, ms.float32, ms.float64):
        raise TypeError(f"{_FN}(): only bool and floating types of {name} are supported")
    return mask.astype(dtype)


def _softmax(x: Tensor) -> Tensor:
    """Softmax over the last dim; a row of only ``-inf`` gives NaN, as PyTorch. (MindSpore
    2.10's float32 CPU ``ops.softmax`` turns every row of the tensor to zeros then.)"""
    top = ops.stop_gradient(x.max(-1, keepdims=True))
    e = ops.exp(x - top)
    return e / e.sum(-1, keepdims=True)


def _linear(x: Tensor, w: Tensor, b: Optional[Tensor], dtype: Any) -> Tensor:
    out = ops.matmul(x, w.swapaxes(0, 1))
    return _rounded(out if b is None else out + b, dtype)


def _rounded(x: Tensor, dtype: Any) -> Tensor:
    """``x`` rounded to float16 when the call is in float16 (PyTorch's float16 kernels round
    each intermediate: projections, scores, weights, heads), computing on in float32."""
    return x.astype(dtype).astype(x.dtype) if dtype == ms.float16 else x


def _pad_last(mask: Optional[Tensor]) -> Optional[Tensor]:
    """A zero column after the last (the appended key is not masked)."""
    if mask is None:
        return None
    return ops.concat((mask, ops.zeros(mask.shape[:-1] + (1,), mask.dtype)), -1)


def _checked(name: str, t: Any, dtype: Any) -> Any:
    if t is None:
        return None
    t = check_tensor(t, name)
    if t.dtype != dtype:
        raise TypeError(f"{_FN}(): {name} must have query's dtype {dtype}, but got {t.dtype}")
    return t


def _work(t: Any, name: str, dtype: Any, work: Any) -> Any:
    """``t`` checked to have query's ``dtype``, in the working dtype (None stays None)."""
    return None if t is None else _checked(name, t, dtype).astype(work)


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Optional[Tensor],
    in_proj_bias: Optional[Tensor],
    bias_k: Optional[Tensor],
    bias_v: Optional[Tensor],
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Optional[Tensor],
    training: bool = True,
    key_padding_mask: Optional[Tensor] = None,
    need_weights: bool = True,
    attn_mask: Optional[Tensor] = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Optional[Tensor] = None,
    k_proj_weight: Optional[Tensor] = None,
    v_proj_weight: Optional[Tensor] = None,
    static_k: Optional[Tensor] = None,
    static_v: Optional[Tensor] = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> Tuple[Tensor, Optional[Tensor]]:
    """Multi-head attention (Vaswani et al., 2017), as
    :func:`torch.nn.functional.multi_head_attention_forward`.

    .. math::
        \\operatorname{head}_i = \\operatorname{softmax}\\!\\left(
        \\frac{(Q W^Q_i)(K W^K_i)^\\top}{\\sqrt{d}} + M\\right) V W^V_i, \\qquad
        \\operatorname{out} = [\\operatorname{head}_1, \\dots, \\operatorname{head}_h] W^O + b^O

    with :math:`M` the merged float masks (bool masks: True is masked, :math:`-\\infty`).
    See the module docstring for the steps, NaN rows and ``is_causal``.

    Args:
        query (Tensor[L, N, E] or Tensor[L, E]): float16/32/64 (sequence first).
        key (Tensor[S, N, E_k] or Tensor[S, E_k]): query's dtype.
        value (Tensor[S, N, E_v] or Tensor[S, E_v]): query's dtype.
        embed_dim_to_check (int): ``E``.
        num_heads (int): heads, dividing ``E``.
        in_proj_weight (Tensor[3E, E], optional): packed q/k/v projection (unless
            ``use_separate_proj_weight``).
        in_proj_bias (Tensor[3E], optional): packed projection bias.
        bias_k, bias_v (Tensor[1, 1, E], optional): a key and a value appended to the sequence.
        add_zero_attn (bool): append a zero key and value after the projections.
        dropout_p (float): dropout on the attention weights (only when ``training``).
        out_proj_weight (Tensor[E, E]): output projection.
        out_proj_bias (Tensor[E], optional): output projection bias.
        training (bool): apply dropout. Default: True.
        key_padding_mask (Tensor[N, S] or Tensor[S], optional): bool (True: ignore the key) or
            float (added).
        need_weights (bool): also return the attention weights. Default: True.
        attn_mask (Tensor[L, S] or Tensor[N * num_heads, L, S], optional): bool or float.
        use_separate_proj_weight (bool): use ``q_proj_weight`` ``(E, E)``, ``k_proj_weight``
            ``(E, E_k)`` and ``v_proj_weight`` ``(E, E_v)``.
        q_proj_weight, k_proj_weight, v_proj_weight (Tensor, optional): see above.
        static_k, static_v (Tensor[N * num_heads, S, E / num_heads], optional): projected keys
            and values used as they are.
        average_attn_weights (bool): average the returned weights over heads. Default: True.
        is_causal (bool): a hint that ``attn_mask`` is causal (PyTorch requires the mask); used
            by the ``need_weights=False`` path when no key padding mask is given.

    Returns:
        tuple: ``(output (Tensor[L, N, E]), weights (Tensor[N, L, S], Tensor[N, num_heads, L,
        S] without averaging, or None when not ``need_weights``))``; no batch dim for an
        unbatched query.

    Raises:
        TypeError: a non-Tensor, non-float or mismatched dtype, a mask of another dtype.
        ValueError: shapes that do not match PyTorch's checks, ``is_causal`` without
            ``attn_mask``, a missing projection weight.

    Example:
        >>> import mindspore as ms, numpy as np
        >>> from mscompat.layers import multi_head_attention_forward
        >>> x = ms.Tensor(np.ones((3, 1, 4), np.float32))
        >>> w, b = ms.Tensor(np.eye(4, dtype=np.float32)), ms.Tensor(np.zeros(4, np.float32))
        >>> w3 = ms.Tensor(np.concatenate([np.eye(4, dtype=np.float32)] * 3))
        >>> out, weights = multi_head_attention_forward(
        ...     x, x, x, 4, 2, w3, None, None, None, False, 0.0, w, b)
        >>> out.shape, weights.asnumpy()[0, 0].astype(float).round(4).tolist()
        ((3, 1, 4), [0.3333, 0.3333, 0.3333])
    """
    q_in = check_float_tensor(query, "query")
    dtype = q_in.dtype
    k_in = _checked("key", check_float_tensor(key, "key"), dtype)
    v_in = _checked("value", check_float_tensor(value, "value"), dtype)
    for flag, name in (
        (add_zero_attn, "add_zero_attn"),
        (training, "training"),
        (need_weights, "need_weights"),
        (is_causal, "is_causal"),
        (use_separate_proj_weight, "use_separate_proj_weight"),
        (average_attn_weights, "average_attn_weights"),
    ):
        check_bool(flag, name)
    p = check_number(dropout_p, "dropout_p")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{_FN}(): dropout_p must be in [0, 1], but got {dropout_p}")
    if is_causal and attn_mask is None:
        raise ValueError(
            f"{_FN}(): is_causal=True needs attn_mask (PyTorch raises: the flag is a hint)"
        )
    if (bias_k is None) != (bias_v is None):
        raise ValueError(f"{_FN}(): bias_k and bias_v must be given together")
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise ValueError(
                f"{_FN}(): use_separate_proj_weight=True needs q_proj_weight, k_proj_weight "
                "and v_proj_weight"
            )
    elif in_proj_weight is None:
        raise ValueError(f"{_FN}(): in_proj_weight is None and use_separate_proj_weight=False")
    kpm_in = (
        None if key_padding_mask is None else check_tensor(key_padding_mask, "key_padding_mask")
    )
    mask_in = None if attn_mask is None else check_tensor(attn_mask, "attn_mask")
    batched, length, bsz, hd, src = _plan(
        q_in.shape,
        k_in.shape,
        v_in.shape,
        None if kpm_in is None else kpm_in.shape,
        None if mask_in is None else mask_in.shape,
        embed_dim_to_check,
        num_heads,
        use_separate_proj_weight,
        bias_k is not None,
        add_zero_attn,
        None if static_k is None else static_k.shape,
        None if static_v is None else static_v.shape,
    )
    heads, e = num_heads, q_in.shape[-1]
    work = ms.float32 if dtype == ms.float16 else dtype
    q, k, v = q_in.astype(work), k_in.astype(work), v_in.astype(work)
    if not batched:
        q, k, v = q.expand_dims(1), k.expand_dims(1), v.expand_dims(1)
    kpm = _float_mask(kpm_in, "key_padding_mask", work)
    if kpm is not None and not batched:
        kpm = kpm.expand_dims(0)
    mask = _float_mask(mask_in, "attn_mask", work)
    causal = is_causal and kpm is None and not need_weights
    if causal:
        mask = None

    # projections
    b_in = _work(in_proj_bias, "in_proj_bias", dtype, work)
    bq = bk = bv = None
    if b_in is not None:
        bq, bk, bv = b_in[:e], b_in[e : 2 * e], b_in[2 * e :]
    if use_separate_proj_weight:
        wq, wk, wv = (
            _work(q_proj_weight, "q_proj_weight", dtype, work),
            _work(k_proj_weight, "k_proj_weight", dtype, work),
            _work(v_proj_weight, "v_proj_weight", dtype, work),
        )
    else:
        packed = _work(in_proj_weight, "in_proj_weight", dtype, work)
        wq, wk, wv = packed[:e], packed[e : 2 * e], packed[2 * e :]
    q, k, v = _linear(q, wq, bq, dtype), _linear(k, wk, bk, dtype), _linear(v, wv, bv, dtype)

    if mask is not None and mask.ndim == 2:
        mask = mask.expand_dims(0)
    if bias_k is not None:
        bk_t, bv_t = _work(bias_k, "bias_k", dtype, work), _work(bias_v, "bias_v", dtype, work)
        k = ops.concat((k, ops.broadcast_to(bk_t.reshape(1, 1, e), (1, bsz, e))), 0)
        v = ops.concat((v, ops.broadcast_to(bv_t.reshape(1, 1, e), (1, bsz, e))), 0)
        mask, kpm = _pad_last(mask), _pad_last(kpm)
    q = q.reshape(length, bsz * heads, hd).swapaxes(0, 1)
    k = (
        k.reshape(k.shape[0], bsz * heads, hd).swapaxes(0, 1)
        if static_k is None
        else _work(static_k, "static_k", dtype, work)
    )
    v = (
        v.reshape(v.shape[0], bsz * heads, hd).swapaxes(0, 1)
        if static_v is None
        else _work(static_v, "static_v", dtype, work)
    )
    if add_zero_attn:
        zeros = ops.zeros((bsz * heads, 1, hd), work)
        k, v = ops.concat((k, zeros), 1), ops.concat((v, zeros), 1)
        mask, kpm = _pad_last(mask), _pad_last(kpm)
    if kpm is not None:
        kpm = ops.broadcast_to(kpm.reshape(bsz, 1, 1, src), (bsz, heads, 1, src))
        kpm = kpm.reshape(bsz * heads, 1, src)
        mask = kpm if mask is None else mask + kpm
    if not training:
        p = 0.0

    weights = None
    if need_weights:
        scores = ops.bmm(_rounded(q * math.sqrt(1.0 / hd), dtype), k.swapaxes(1, 2))
        if mask is not None:
            scores = scores + mask
        attn = _rounded(_softmax(_rounded(scores, dtype)), dtype)
        if p > 0.0:
            attn = ops.dropout(attn, p=p)
        out = _rounded(ops.bmm(attn, v), dtype).swapaxes(0, 1).reshape(length * bsz, e)
        weights = attn.reshape(bsz, heads, length, src)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            weights = weights.squeeze(0)
        weights = weights.astype(dtype)
    else:
        if mask is not None:
            if mask.shape[0] == 1:  # noqa: SIM108 - graph mode: branches of different shapes
                mask = mask.expand_dims(0)
            else:
                mask = mask.reshape(bsz, heads, -1, src)
        out = scaled_dot_product_attention(
            q.reshape(bsz, heads, length, hd),
            k.reshape(bsz, heads, src, hd),
            v.reshape(bsz, heads, src, hd),
            mask,
            p,
            causal,
        )
        out = _rounded(out, dtype).transpose(2, 0, 1, 3).reshape(length * bsz, e)
    out = _linear(
        out,
        _work(out_proj_weight, "out_proj_weight", dtype, work),
        _work(out_proj_bias, "out_proj_bias", dtype, work),
        dtype,
    )
    out = out.reshape(length, bsz, e)
    if not batched:
        out = out.squeeze(1)
    return out.astype(dtype), weights


class _OutProj(nn.Cell):
    """``out_proj``: holds ``weight`` ``(E, E)`` and ``bias`` (PyTorch's Linear names)."""

    def __init__(self, e: int, bias: bool, dtype: Any, init: Dict[str, Any]) -> None:
        super().__init__()
        self.weight = Parameter(
            _value(init, "out_proj.weight", (e, e), Uniform(1 / math.sqrt(e)), dtype), "weight"
        )
        self.bias = (
            Parameter(_value(init, "out_proj.bias", (e,), "zeros", dtype), "bias") if bias else None
        )


def _value(init: Dict[str, Any], name: str, shape: Shape, default: Any, dtype: Any) -> Any:
    """``init[name]`` (checked against ``shape``) or the initializer ``default``."""
    if name not in init:
        return initializer(default, shape, dtype)
    value = init[name]
    value = value if isinstance(value, Tensor) else Tensor(np.asarray(value))
    if tuple(value.shape) != shape:
        raise ValueError(f"initial[{name!r}] must have shape {shape}, but got {value.shape}")
    return value.astype(dtype)


def _xavier_uniform(shape: Shape) -> Uniform:
    fan_out, fan_in = shape[0], shape[1]
    return Uniform(math.sqrt(6.0 / (fan_in + fan_out)))


class MultiheadAttention(nn.Cell):
    """Multi-head attention layer. See :func:`multi_head_attention_forward`.

    Mirrors ``torch.nn.MultiheadAttention``: parameters ``in_proj_weight`` ``(3E, E)`` (when
    ``kdim == vdim == embed_dim``) or ``q_proj_weight``/``k_proj_weight``/``v_proj_weight``,
    ``in_proj_bias``, ``bias_k``/``bias_v`` (``add_bias_kv``), ``out_proj.weight`` and
    ``out_proj.bias``, initialised as PyTorch's (Xavier uniform, zero biases, Xavier normal
    ``bias_k``/``bias_v``; MindSpore's generator). Dropout applies in training mode
    (``set_train()``; a MindSpore Cell starts in evaluation mode, a PyTorch module in training
    mode). PyTorch's inference fast path (``_native_multi_head_attention``) is not reproduced:
    the results are those of its reference path.

    Args:
        embed_dim (int): ``E``.
        num_heads (int): heads, dividing ``E``.
        dropout (float): dropout on the attention weights. Default: 0.0.
        bias (bool): projection biases. Default: True.
        add_bias_kv (bool): learn ``bias_k``, ``bias_v``. Default: False.
        add_zero_attn (bool): append a zero key/value. Default: False.
        kdim (int, optional): key features (default ``E``).
        vdim (int, optional): value features (default ``E``).
        batch_first (bool): inputs and output are ``(N, L, E)``. Default: False.
        device: accepted for PyTorch's signature and ignored.
        dtype (mindspore dtype, optional): the parameters' dtype. Default: float32.
        initial (dict, keyword-only): parameter name -> initial value (a PyTorch state dict's
            arrays), instead of the initialisation.

    Shape:
        - query ``(L, N, E)`` (``(N, L, E)`` with ``batch_first``, ``(L, E)`` unbatched), key
          ``(S, N, kdim)``, value ``(S, N, vdim)``.
        - output ``(L, N, E)``; weights ``(N, L, S)`` (``(N, num_heads, L, S)`` without
          averaging) or None.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.layers import MultiheadAttention
        >>> mha = MultiheadAttention(8, 2, batch_first=True)
        >>> x = ms.ops.ones((2, 5, 8), ms.float32)
        >>> out, weights = mha(x, x, x)
        >>> out.shape, weights.shape
        ((2, 5, 8), (2, 5, 5))
    """

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: Optional[int] = None,
        vdim: Optional[int] = None,
        batch_first: bool = False,
        device: Any = None,
        dtype: Any = None,
        *,
        initial: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__()
        e = check_int(embed_dim, "embed_dim")
        h = check_int(num_heads, "num_heads")
        if e <= 0 or h <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={e} and "
                f"num_heads={h} instead"
            )
        if e % h:
            raise ValueError(f"embed_dim must be divisible by num_heads, got {e} and {h}")
        p = check_number(dropout, "dropout")
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout must be in [0, 1], but got {dropout}")
        for flag, name in (
            (bias, "bias"),
            (add_bias_kv, "add_bias_kv"),
            (add_zero_attn, "add_zero_attn"),
            (batch_first, "batch_first"),
        ):
            check_bool(flag, name)
        self.embed_dim, self.num_heads, self.dropout = e, h, p
        self.kdim = e if kdim is None else check_int(kdim, "kdim")
        self.vdim = e if vdim is None else check_int(vdim, "vdim")
        self._qkv_same_embed_dim = self.kdim == e and self.vdim == e
        self.batch_first, self.add_zero_attn, self.head_dim = batch_first, add_zero_attn, e // h
        init = dict(initial or {})
        dt = ms.float32 if dtype is None else dtype

        def param(name: str, shape: Shape, default: Any) -> Parameter:
            return Parameter(_value(init, name, shape, default, dt), name)

        self.in_proj_weight: Optional[Parameter] = None
        self.q_proj_weight: Optional[Parameter] = None
        self.k_proj_weight: Optional[Parameter] = None
        self.v_proj_weight: Optional[Parameter] = None
        if self._qkv_same_embed_dim:
            self.in_proj_weight = param("in_proj_weight", (3 * e, e), _xavier_uniform((3 * e, e)))
        else:
            self.q_proj_weight = param("q_proj_weight", (e, e), _xavier_uniform((e, e)))
            self.k_proj_weight = param(
                "k_proj_weight", (e, self.kdim), _xavier_uniform((e, self.kdim))
            )
            self.v_proj_weight = param(
                "v_proj_weight", (e, self.vdim), _xavier_uniform((e, self.vdim))
            )
        self.in_proj_bias = param("in_proj_bias", (3 * e,), "zeros") if bias else None
        self.bias_k: Optional[Parameter] = None
        self.bias_v: Optional[Parameter] = None
        if add_bias_kv:
            self.bias_k = param("bias_k", (1, 1, e), Normal(1 / math.sqrt(e)))
            self.bias_v = param("bias_v", (1, 1, e), Normal(1 / math.sqrt(e)))
        self.out_proj = _OutProj(e, bias, dt, init)

    def construct(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Optional[Tensor] = None,
        need_weights: bool = True,
        attn_mask: Optional[Tensor] = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> Tuple[Tensor, Optional[Tensor]]:
        batched = query.ndim == 3
        if self.batch_first and batched:
            query, key, value = query.swapaxes(0, 1), key.swapaxes(0, 1), value.swapaxes(0, 1)
        out, weights = multi_head_attention_forward(
            query,
            key,
            value,
            self.embed_dim,
            self.num_heads,
            self.in_proj_weight,
            self.in_proj_bias,
            self.bias_k,
            self.bias_v,
            self.add_zero_attn,
            self.dropout,
            self.out_proj.weight,
            self.out_proj.bias,
            training=self.training,
            key_padding_mask=key_padding_mask,
            need_weights=need_weights,
            attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight,
            k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight,
            average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )
        if self.batch_first and batched:
            out = out.swapaxes(0, 1)
        return out, weights
