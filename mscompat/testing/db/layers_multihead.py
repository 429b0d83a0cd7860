"""Op database entries for multi-head attention (``mscompat.layers.multihead``)."""

from __future__ import annotations

from typing import Any, Dict, Iterator, List

import numpy as np

from mscompat.layers import MultiheadAttention, multi_head_attention_forward
from mscompat.testing.db._common import every_dtype_first, normal, torch_ref
from mscompat.testing.opinfo import (
    ErrorInput,
    KnownDifference,
    OpInfo,
    SampleInput,
    TorchOpInfo,
)

E, H, L, S, N = 8, 2, 4, 5, 2


def _weights(rng: np.random.Generator, dtype: str, bias: bool = True) -> tuple:
    w = normal(rng, (3 * E, E), dtype, 0.3)
    b = normal(rng, (3 * E,), dtype) if bias else None
    return w, b, normal(rng, (E, E), dtype, 0.3), normal(rng, (E,), dtype)


def _samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    q, k, v = (normal(rng, (n, N, E), dtype) for n in (L, S, S))
    w, b, ow, ob = _weights(rng, dtype)
    base = (q, k, v, E, H, w, b, None, None, False, 0.0, ow, ob)
    kpm = np.zeros((N, S), np.bool_)
    kpm[0, 1:3] = True
    mask = rng.random((L, S)) > 0.7
    yield SampleInput(
        base,
        {"key_padding_mask": kpm, "attn_mask": mask},
        name="bool masks (True = masked), weights",
    )
    fmask = normal(rng, (N * H, L, S), dtype)
    fmask[1, 2] = -np.inf  # a fully masked row without weights: zeros (PyTorch's CPU kernel)
    yield SampleInput(
        base,
        {"key_padding_mask": kpm, "attn_mask": fmask, "need_weights": False},
        name="3-D float mask, -inf row, no weights",
    )
    bk, bv = normal(rng, (1, 1, E), dtype), normal(rng, (1, 1, E), dtype)
    kd, vd = normal(rng, (S, E - 3), dtype), normal(rng, (S, 3), dtype)
    proj = {
        "use_separate_proj_weight": True,
        "q_proj_weight": normal(rng, (E, E), dtype, 0.3),
        "k_proj_weight": normal(rng, (E, E - 3), dtype, 0.3),
        "v_proj_weight": normal(rng, (E, 3), dtype, 0.3),
        "key_padding_mask": kpm[0],
        "average_attn_weights": False,
    }
    yield SampleInput(
        (q[:, 0], kd, vd, E, H, None, b, bk, bv, True, 0.0, ow, None),
        proj,
        name="unbatched, kdim/vdim, bias_k/bias_v, add_zero_attn, per-head weights",
    )
    causal = np.triu(np.full((L, S), -np.inf), 1).astype(dtype)
    yield SampleInput(
        base,
        {"attn_mask": causal, "is_causal": True, "need_weights": False},
        name="is_causal (scaled_dot_product_attention's causal path)",
    )


def _errors() -> Iterator[ErrorInput]:
    rng = np.random.default_rng(0)
    q = normal(rng, (L, N, E), "float32")
    w, b, ow, ob = _weights(rng, "float32")
    base = (q, q, q, E, H, w, b, None, None, False, 0.0, ow, ob)

    def e(args: tuple, kwargs: Any, kind: Any, match: str) -> ErrorInput:
        return ErrorInput(SampleInput(args, kwargs or {}), kind, match)

    yield e((q.tolist(),) + base[1:], None, TypeError, "query must be a mindspore.Tensor")
    yield e((q, q.astype(np.float64)) + base[2:], None, TypeError, "key must have query's")
    yield e((q[0, 0],) + base[1:], None, ValueError, "query must be 2-D")
    yield e(base[:3] + (6,) + base[4:], None, ValueError, "expected embed_dim 6")
    yield e(base[:4] + (3,) + base[5:], None, ValueError, "must be divisible by num_heads")
    yield e((q, q[:, :1], q[:, :1]) + base[3:], None, ValueError, "key.s batch dim must be")
    yield e(
        base,
        {"attn_mask": np.zeros((L, L + 1), np.bool_)},
        ValueError,
        r"2-D attn_mask is \(4, 5\), but should be \(4, 4\)",
    )
    yield e(
        base,
        {"attn_mask": np.zeros((L, L), np.int64)},
        TypeError,
        "only bool and floating types of attn_mask",
    )
    yield e(
        base,
        {"key_padding_mask": np.zeros((N, L + 1), np.bool_)},
        ValueError,
        "key_padding_mask must have shape",
    )
    yield e(base, {"is_causal": True}, ValueError, "is_causal=True needs attn_mask")
    yield e(base[:5] + (None,) + base[6:], None, ValueError, "in_proj_weight is None")
    yield e(
        base[:7] + (np.zeros((1, 1, E), np.float32),) + base[8:],
        None,
        ValueError,
        "bias_k and bias_v must be given together",
    )
    yield e(base[:10] + (1.5,) + base[11:], None, ValueError, "dropout_p must be in")


def _torch_mha(**init: Any) -> Any:
    """``torch.nn.MultiheadAttention`` with the parameters of ``initial`` (a state dict)."""
    import torch

    state: Dict[str, Any] = init.pop("initial")
    module = torch.nn.MultiheadAttention(**init)
    module.load_state_dict({k: torch.from_numpy(np.asarray(v)) for k, v in state.items()})
    return module


def _cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (N, L, E), dtype)
    kv = normal(rng, (N, S, E - 3), dtype)
    vv = normal(rng, (N, S, 3), dtype)
    state = {
        "q_proj_weight": normal(rng, (E, E), dtype, 0.3),
        "k_proj_weight": normal(rng, (E, E - 3), dtype, 0.3),
        "v_proj_weight": normal(rng, (E, 3), dtype, 0.3),
        "in_proj_bias": normal(rng, (3 * E,), dtype),
        "bias_k": normal(rng, (1, 1, E), dtype),
        "bias_v": normal(rng, (1, 1, E), dtype),
        "out_proj.weight": normal(rng, (E, E), dtype, 0.3),
        "out_proj.bias": normal(rng, (E,), dtype),
    }
    init = {
        "embed_dim": E,
        "num_heads": H,
        "batch_first": True,
        "kdim": E - 3,
        "vdim": 3,
        "add_bias_kv": True,
        "initial": state,
    }
    kpm = np.zeros((N, S), np.bool_)
    kpm[1, :2] = True
    yield SampleInput(
        (x, kv, vv),
        {"key_padding_mask": kpm},
        init_kwargs=init,
        name="batch_first, kdim/vdim, bias_kv, key_padding_mask",
    )


def _cell_errors() -> Iterator[ErrorInput]:
    x = np.ones((L, N, E), np.float32)
    for init, kind, match in (
        ({"embed_dim": 8, "num_heads": 3}, ValueError, "embed_dim must be divisible by"),
        ({"embed_dim": 0, "num_heads": 1}, ValueError, "must be greater than 0"),
        ({"embed_dim": 8, "num_heads": 2, "dropout": 2.0}, ValueError, "dropout must be in"),
        ({"embed_dim": 8, "num_heads": 2.0}, TypeError, "num_heads must be an int"),
    ):
        yield ErrorInput(SampleInput((x, x, x), init_kwargs=init), kind, match)


def _bench() -> SampleInput:
    rng = np.random.default_rng(0)
    e, n, length = 256, 8, 196
    x = normal(rng, (length, n, e), "float32")
    w, b, ow, ob = (normal(rng, s, "float32", 0.05) for s in ((3 * e, e), (3 * e,), (e, e), (e,)))
    return SampleInput(
        (x, x, x, e, 8, w, b, None, None, False, 0.0, ow, ob),
        {"need_weights": False},
        name="ViT-like L=196, N=8, E=256, 8 heads",
    )


# PyTorch's gradient samples (the ones the OpInfo test runs) are one call with dropout_p=0.5
# and training=True: the weights dropped are drawn by MindSpore's generator, not PyTorch's.
_DROPOUT = (
    "dropout_p=0.5 in training: MindSpore's random draws, not PyTorch's (the op database's "
    "samples check the deterministic path)"
)

OPS: List[OpInfo] = [
    OpInfo(
        name="layers.multi_head_attention_forward",
        op=multi_head_attention_forward,
        ref=torch_ref("torch.nn.functional.multi_head_attention_forward"),
        mirrors="torch.nn.functional.multi_head_attention_forward",
        torch_apis=("torch.nn.functional.multi_head_attention_forward",),
        sample_inputs=every_dtype_first(_samples, keep=1),
        error_inputs=_errors,
        grad_argnums=(0, 1, 2),
        bench_input=_bench,
        torch_opinfo=(
            TorchOpInfo(
                "nn.functional.multi_head_attention_forward",
                stride=3,
                skip_dtypes={"float16": "float16: the op database's samples"},
            ),
        ),
        known=tuple(
            KnownDifference("nn.functional.multi_head_attention_forward", d, (0,), _DROPOUT)
            for d in ("float32", "float64")
        ),
    ),
    OpInfo(
        name="layers.MultiheadAttention",
        op=MultiheadAttention,
        ref=_torch_mha,
        mirrors="torch.nn.MultiheadAttention",
        torch_apis=("torch.nn.MultiheadAttention",),
        sample_inputs=_cell_samples,
        error_inputs=_cell_errors,
        dtypes=("float32",),
        grad_argnums=(0, 1, 2),
        is_cell=True,
    ),
]
