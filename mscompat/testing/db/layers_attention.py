"""Op database entries for attention (``mscompat.layers.attention``)."""

from __future__ import annotations

from typing import Iterator, List

import numpy as np

from mscompat.layers import scaled_dot_product_attention
from mscompat.testing.db._common import every_dtype_first, normal, torch_ref
from mscompat.testing.opinfo import (
    ErrorInput,
    KnownDifference,
    OpInfo,
    ReferenceInput,
    SampleInput,
    TorchOpInfo,
)
from mscompat.testing.tolerances import Tolerance


def _qkv(rng: np.random.Generator, dtype: str, q: tuple, k: tuple, ev: int) -> tuple:
    v = k[:-1] + (ev,)
    return normal(rng, q, dtype), normal(rng, k, dtype), normal(rng, v, dtype)


def _sdpa_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    q, k, v = _qkv(rng, dtype, (2, 3, 5, 8), (2, 3, 7, 8), 4)
    mask = rng.random((5, 7)) > 0.4
    mask[2] = False  # a fully masked query row: zeros, as PyTorch's CPU kernels
    yield SampleInput((q, k, v), {"attn_mask": mask}, name="bool mask, one row fully masked")
    yield SampleInput((q, k, v), {"is_causal": True, "scale": 0.3}, name="causal, scale")
    fmask = np.where(rng.random((2, 1, 5, 7)) > 0.3, normal(rng, (2, 1, 5, 7), dtype), -np.inf)
    fmask[1, 0, 4] = -np.inf
    yield SampleInput((q, k, v), {"attn_mask": fmask.astype(dtype)}, name="float -inf mask")
    # PyTorch's causal mask is top-left aligned: with L > S the later rows see every key.
    yield SampleInput(_qkv(rng, dtype, (9, 3), (4, 3), 2), {"is_causal": True}, name="2-D L>S")
    gq, gk, gv = _qkv(rng, dtype, (1, 4, 3, 4), (1, 2, 6, 4), 5)
    yield SampleInput((gq, gk, gv), {"enable_gqa": True}, name="GQA 4 query heads, 2 kv heads")
    # batch dims broadcast (key/value shared across the batch); non-contiguous query
    tq = normal(rng, (3, 2, 4, 4), dtype).transpose(0, 1, 3, 2)
    kv = _qkv(rng, dtype, (1,), (1, 2, 5, 4), 3)[1:]
    yield SampleInput((tq, *kv), name="broadcast batch, transposed query")
    yield SampleInput(_qkv(rng, dtype, (0, 2, 3, 4), (0, 2, 5, 4), 3), name="empty batch")
    yield SampleInput(_qkv(rng, dtype, (2, 3, 4), (2, 0, 4), 3), name="no keys (S=0): zeros")


def _sdpa_references() -> Iterator[ReferenceInput]:
    """NaN in a float mask gives a NaN row (PyTorch's CPU kernel); a long query processed in
    blocks of rows (SCORE_BLOCK) gives the one-block result."""
    rng = np.random.default_rng(3)
    q, k, v = _qkv(rng, "float64", (1, 2, 4, 4), (1, 2, 6, 4), 3)
    mask = normal(rng, (4, 6), "float64")
    mask[1, 2] = np.nan
    mask[3] = -np.inf
    tol = {"output[0]": Tolerance(1e-12, 1e-12), "grad[arg 0]": Tolerance(1e-12, 1e-12)}
    yield ReferenceInput(
        SampleInput((q, k, v), {"attn_mask": mask}, name="NaN and -inf rows"),
        modes=("pynative", "graph"),
        tolerances=tol,
    )
    yield from _sdpa_kernel_references()


def _sdpa_kernel_references() -> Iterator[ReferenceInput]:
    """The ``aot`` kernel's own structure: several blocks of query rows (64 rows at S = 1024),
    each causal block seeing only the keys up to its last row, GQA heads shared without a copy,
    a boolean padding mask broadcast over heads and query rows (one batch item fully masked),
    NaN (a NaN row, as PyTorch) and -inf (zeros) in a float mask."""
    rng = np.random.default_rng(5)
    tol = Tolerance(2e-6, 1e-5)  # float32 rounding (other summation order than PyTorch's)
    tols = {label: tol for label in ("output[0]", "grad[arg 0]", "grad[arg 1]", "grad[arg 2]")}
    qkv = _qkv(rng, "float32", (1, 4, 70, 8), (1, 2, 1024, 8), 4)
    yield ReferenceInput(
        SampleInput(qkv, {"is_causal": True, "enable_gqa": True}, name="blocks, causal, GQA"),
        backends=("aot",),
        modes=("pynative", "graph"),
        grad=True,
        tolerances=tols,
    )
    q, k, v = _qkv(rng, "float32", (1, 2, 4, 4), (1, 2, 6, 4), 3)
    mask = normal(rng, (4, 6), "float32")
    mask[1, 2] = np.nan
    mask[3] = -np.inf
    yield ReferenceInput(
        SampleInput((q, k, v), {"attn_mask": mask}, name="float32 NaN and -inf rows"),
        backends=("aot",),
        grad=True,
        tolerances=tols,
    )
    mask = np.arange(1024)[None, None, None, :] < np.array([700, 0])[:, None, None, None]
    qkv = _qkv(rng, "float32", (2, 2, 40, 8), (2, 2, 1024, 8), 4)
    yield ReferenceInput(
        SampleInput(qkv, {"attn_mask": mask}, name="padding mask, one item fully masked"),
        backends=("aot",),
        grad=True,
        tolerances=tols,
    )


def _sdpa_errors() -> Iterator[ErrorInput]:
    q = np.zeros((2, 3, 4), np.float32)
    k = np.zeros((2, 5, 4), np.float32)
    yield ErrorInput(SampleInput((q.tolist(), k, k)), TypeError, "query must be a mindspore")
    yield ErrorInput(
        SampleInput((q, k.astype(np.float64), k)), TypeError, "query, key and value must have"
    )
    yield ErrorInput(
        SampleInput((q.astype(np.int32), k, k)), TypeError, "query must be a floating-point"
    )
    yield ErrorInput(SampleInput((q, k[..., :3], k)), ValueError, r"key.shape\[-1\] must equal")
    yield ErrorInput(SampleInput((q, k, k[:, :4])), ValueError, r"value.shape\[-2\] must equal")
    yield ErrorInput(SampleInput((q[0, 0], k, k)), ValueError, "query must have at least 2")
    yield ErrorInput(
        SampleInput((q, k, k), {"attn_mask": np.zeros((3, 4), np.bool_)}),
        ValueError,
        "attn_mask of shape",
    )
    yield ErrorInput(
        SampleInput((q, k, k), {"attn_mask": np.zeros((3, 5), np.int64)}),
        TypeError,
        "attn_mask must be bool, float32",
    )
    yield ErrorInput(
        SampleInput((q, k, k), {"attn_mask": np.zeros((3, 5), np.bool_), "is_causal": True}),
        ValueError,
        "attn_mask and is_causal",
    )
    yield ErrorInput(SampleInput((q, k, k), {"dropout_p": 1.5}), ValueError, "dropout_p must be")
    yield ErrorInput(SampleInput((q, k, k), {"is_causal": 1}), TypeError, "is_causal must be")
    yield ErrorInput(
        SampleInput(
            (np.zeros((1, 3, 2, 4), np.float32),) + (np.zeros((1, 2, 5, 4), "f4"),) * 2,
            {"enable_gqa": True},
        ),
        ValueError,
        "with enable_gqa",
    )
    yield ErrorInput(
        SampleInput(
            (np.zeros((2, 3, 4), "f4"), np.zeros((3, 5, 4), "f4"), np.zeros((3, 5, 4), "f4"))
        ),
        ValueError,
        "do not broadcast",
    )


def _sdpa_bench() -> SampleInput:
    rng = np.random.default_rng(0)
    q, k, v = _qkv(rng, "float32", (8, 8, 512, 64), (8, 8, 512, 64), 64)
    return SampleInput((q, k, v), name="B=8 H=8 L=S=512 D=64 float32")


_ROUNDING = (
    "rounding: PyTorch's samples (values up to 9, scores up to ~250) differ from PyTorch by "
    "up to {bound}, and both are as far from the float64 result (measured per sample)"
)
# PyTorch's reference inputs with dropout_p=0.5 (every third and fourth of each four).
_DROPOUT_SAMPLES = (2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23)

OPS: List[OpInfo] = [
    OpInfo(
        name="layers.scaled_dot_product_attention",
        op=scaled_dot_product_attention,
        ref=torch_ref("torch.nn.functional.scaled_dot_product_attention"),
        mirrors="torch.nn.functional.scaled_dot_product_attention",
        torch_apis=("torch.nn.functional.scaled_dot_product_attention",),
        sample_inputs=every_dtype_first(_sdpa_samples, keep=2),
        error_inputs=_sdpa_errors,
        grad_argnums=(0, 1, 2),
        dispatch_op="layers.scaled_dot_product_attention",
        backend_dtypes={"aot": ("float16", "float32")},
        bench_input=_sdpa_bench,
        references=_sdpa_references,
        torch_opinfo=(TorchOpInfo("nn.functional.scaled_dot_product_attention", stride=2),),
        known=tuple(
            KnownDifference(
                "nn.functional.scaled_dot_product_attention",
                dtype,
                _DROPOUT_SAMPLES,
                "dropout_p=0.5: the weights dropped are drawn by MindSpore's generator, not "
                "PyTorch's (tests/test_attention.py checks the dropout's statistics)",
            )
            for dtype in ("float16", "float32", "float64")
        )
        + (
            KnownDifference(
                "nn.functional.scaled_dot_product_attention",
                "float32",
                (8, 9, 12, 13, 17, 21, 24),
                _ROUNDING.format(bound="3e-5 (output), 1.4e-4 (gradients)"),
            ),
            KnownDifference(
                "nn.functional.scaled_dot_product_attention",
                "float16",
                (8, 9, 12, 13, 24),
                _ROUNDING.format(bound="4e-3 (output), 2e-2 (gradients)")
                + "; PyTorch rounds its 4-D batch's intermediates to float16, we round once",
            ),
        ),
    ),
]
