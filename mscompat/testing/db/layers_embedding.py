"""Op database entries for embeddings (``mscompat.layers.embedding``)."""

from __future__ import annotations

from typing import Any, Callable, Iterator, List

import numpy as np

from mscompat.layers import Embedding, EmbeddingBag, embedding, embedding_bag
from mscompat.testing.db._common import every_dtype_first, normal, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput, TorchOpInfo

# ----------------------------------------------------------------------------- embedding


def _embedding_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    w = normal(rng, (10, 4), dtype)
    x = rng.integers(0, 10, (3, 5))
    x[0, :3] = 7  # the padding row, repeated: its gradient must stay zero
    yield SampleInput((x, w), {"padding_idx": 7}, name="padding_idx=7 (3, 5)")
    yield SampleInput((x.astype(np.int32), w), {"max_norm": 1.0}, name="int32, max_norm=1")
    yield SampleInput((x, w), {"max_norm": 1.5, "norm_type": 1.0}, name="max_norm, norm_type=1")
    yield SampleInput(
        (x, w), {"scale_grad_by_freq": True, "padding_idx": -3}, name="scale_grad_by_freq"
    )
    yield SampleInput((x.T, w), name="transposed indices")
    yield SampleInput((np.array(4), w), name="0-d index")
    yield SampleInput((np.zeros((0, 3), np.int64), w), name="empty")


def _embedding_errors() -> Iterator[ErrorInput]:
    w = np.zeros((5, 3), np.float32)
    x = np.array([[0, 4]])
    yield ErrorInput(SampleInput((x.astype(np.float32), w)), TypeError, "input must be an int32")
    yield ErrorInput(SampleInput((x, w[0])), ValueError, "weight must be 2-D")
    yield ErrorInput(SampleInput((x, w.astype(np.int32))), TypeError, "weight must be a floating")
    yield ErrorInput(
        SampleInput((x, w), {"padding_idx": 5}), ValueError, "padding_idx must be within"
    )
    yield ErrorInput(SampleInput((x + 1, w)), ValueError, r"index outside \[0, 5\)")
    yield ErrorInput(SampleInput((x - 1, w)), ValueError, r"index outside \[0, 5\)")
    yield ErrorInput(SampleInput((x, w), {"max_norm": "1"}), TypeError, "max_norm must be a number")


# ----------------------------------------------------------------------------- embedding_bag


def _bag_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    w = normal(rng, (12, 5), dtype)
    x = rng.integers(0, 12, (4, 6))
    x[1, :4] = 3
    x[2] = 3  # a bag of padding only: zeros
    flat = x.reshape(-1)
    offsets = np.array([0, 5, 5, 11, 20])  # an empty bag
    yield SampleInput((x, w), {"mode": "mean", "padding_idx": 3}, name="2-D mean padding")
    yield SampleInput((flat, w, offsets), {"mode": "max"}, name="1-D offsets max")
    yield SampleInput((x, w), {"mode": "max", "padding_idx": 3}, name="2-D max padding")
    yield SampleInput((flat, w, offsets), {"mode": "sum"}, name="1-D offsets sum")
    last = np.array([0, 5, 5, 11, 24])
    yield SampleInput(
        (flat, w, last), {"mode": "mean", "include_last_offset": True}, name="include_last_offset"
    )
    psw = normal(rng, (24,), dtype)
    yield SampleInput(
        (flat, w, offsets), {"mode": "sum", "per_sample_weights": psw}, name="per_sample_weights"
    )
    yield SampleInput((x.T, w), {"mode": "max", "max_norm": 1.0}, name="transposed, max_norm")
    # Every index once or every index twice: PyTorch 2.13's CPU scale_grad_by_freq divides
    # by the right count only there (pytorch/pytorch#190063).
    twice = np.repeat(rng.permutation(12)[:4], 2).reshape(2, 4)
    yield SampleInput((twice, w), {"mode": "sum", "scale_grad_by_freq": True}, name="freq")
    yield SampleInput((np.zeros((0,), np.int64), w, np.array([0, 0])), name="empty input")
    # 499 columns take every block of the kernel's loops (16, 8, 4, 2 and 1 vectors of 8 or 16
    # lanes, then single columns): the rows above are narrower than one vector.
    wide = normal(rng, (7, 499), dtype)
    bags = rng.integers(0, 7, (3, 5))
    scale = normal(rng, bags.shape, dtype)
    yield SampleInput(
        (bags, wide), {"mode": "sum", "per_sample_weights": scale}, name="wide rows, weighted"
    )
    yield SampleInput((bags, wide), {"mode": "mean", "padding_idx": 2}, name="wide rows, padding")
    yield SampleInput((bags, wide), {"mode": "mean"}, name="wide rows, mean")


def _bag_errors() -> Iterator[ErrorInput]:
    w = np.zeros((5, 3), np.float32)
    x = np.array([0, 4, 2])
    off = np.array([0, 2])
    yield ErrorInput(SampleInput((x, w)), ValueError, "offsets has to be a 1-D Tensor but got None")
    yield ErrorInput(SampleInput((x[None], w, off)), ValueError, "if input is 2-D, then offsets")
    yield ErrorInput(SampleInput((x, w, off), {"mode": "min"}), ValueError, "mode must be one of")
    yield ErrorInput(
        SampleInput((x, w, off), {"mode": "max", "per_sample_weights": np.ones(3, np.float32)}),
        ValueError,
        "per_sample_weights is only supported for mode='sum'",
    )
    yield ErrorInput(
        SampleInput((x, w, off), {"mode": "max", "scale_grad_by_freq": True}),
        ValueError,
        "max mode does not support",
    )
    yield ErrorInput(SampleInput((x, w, off + 1)), ValueError, r"offsets\[0\] has to be 0")
    yield ErrorInput(SampleInput((x, w, np.array([0, 4]))), ValueError, r"offsets\[-1\] can not")
    yield ErrorInput(SampleInput((x + 3, w, off)), ValueError, r"index outside \[0, 5\)")
    yield ErrorInput(SampleInput((x[None, None], w)), ValueError, "input has to be 1-D or 2-D")


def _bag_bench() -> SampleInput:
    rng = np.random.default_rng(0)
    w = normal(rng, (10000, 64), "float32")
    x = rng.integers(0, 10000, (4096, 16))
    return SampleInput((x, w), {"mode": "mean"}, name="(4096, 16) bags of a (10000, 64) table")


def _embedding_bench() -> SampleInput:
    rng = np.random.default_rng(0)
    w = normal(rng, (10000, 64), "float32")
    return SampleInput((rng.integers(0, 10000, (64, 256)), w), name="(64, 256) from (10000, 64)")


# ----------------------------------------------------------------------------- PyTorch's OpInfos


def embedding_weight_first(
    weight: Any,
    input: Any,
    padding_idx: Any = None,
    max_norm: Any = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Any:
    """PyTorch's OpInfo ``nn.functional.embedding`` calls ``(weight, input, ...)``."""
    return embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)


def embedding_bag_weight_first(
    weight: Any,
    input: Any,
    offsets: Any = None,
    max_norm: Any = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: str = "mean",
    sparse: bool = False,
    per_sample_weights: Any = None,
    include_last_offset: bool = False,
    padding_idx: Any = None,
) -> Any:
    """PyTorch's OpInfo ``nn.functional.embedding_bag`` calls ``(weight, input, ...)``."""
    return embedding_bag(
        input,
        weight,
        offsets,
        max_norm,
        norm_type,
        scale_grad_by_freq,
        mode,
        sparse,
        per_sample_weights,
        include_last_offset,
        padding_idx,
    )


# ----------------------------------------------------------------------------- Cells


def _torch_cell(cls: str) -> Callable[..., Any]:
    """PyTorch's module built from ``init_kwargs`` (``_weight`` given as a NumPy array)."""

    def make(**kwargs: Any) -> Any:
        import torch

        if "_weight" in kwargs:
            kwargs["_weight"] = torch.from_numpy(np.array(kwargs["_weight"]))
        return getattr(torch.nn, cls)(**kwargs)

    return make


def _embedding_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    w = normal(rng, (9, 3), dtype)
    x = rng.integers(0, 9, (2, 4))
    init = {"num_embeddings": 9, "embedding_dim": 3, "_weight": w}
    yield SampleInput((x,), init_kwargs={**init, "padding_idx": 2}, name="padding_idx=2")
    yield SampleInput((x,), init_kwargs={**init, "max_norm": 1.0}, name="max_norm=1")


def _bag_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    w = normal(rng, (9, 3), dtype)
    x = rng.integers(0, 9, (8,))
    init = {"num_embeddings": 9, "embedding_dim": 3, "_weight": w}
    yield SampleInput((x, np.array([0, 3, 3])), init_kwargs=init, name="mean (default)")
    yield SampleInput(
        (x, np.array([0, 3, 8])),
        init_kwargs={**init, "mode": "max", "include_last_offset": True, "padding_idx": 1},
        name="max, include_last_offset, padding_idx",
    )


def _cell_errors() -> Iterator[ErrorInput]:
    x = np.array([0, 1])
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"num_embeddings": 3, "embedding_dim": 2, "padding_idx": 3}),
        ValueError,
        "padding_idx must be within",
    )
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"num_embeddings": 3.0, "embedding_dim": 2}),
        TypeError,
        "num_embeddings must be an int",
    )


def _bag_cell_errors() -> Iterator[ErrorInput]:
    yield ErrorInput(
        SampleInput(
            (np.array([[0, 1]]),),
            init_kwargs={"num_embeddings": 3, "embedding_dim": 2, "mode": "x"},
        ),
        ValueError,
        "mode must be one of",
    )


OPS: List[OpInfo] = [
    OpInfo(
        name="layers.embedding",
        op=embedding,
        ref=torch_ref("torch.nn.functional.embedding"),
        mirrors="torch.nn.functional.embedding",
        torch_apis=("torch.nn.functional.embedding",),
        sample_inputs=every_dtype_first(_embedding_samples, keep=1),
        error_inputs=_embedding_errors,
        grad_argnums=(1,),
        bench_input=_embedding_bench,
        torch_opinfo=(TorchOpInfo("nn.functional.embedding", adapter=embedding_weight_first),),
    ),
    OpInfo(
        name="layers.embedding_bag",
        op=embedding_bag,
        ref=torch_ref("torch.nn.functional.embedding_bag"),
        mirrors="torch.nn.functional.embedding_bag",
        torch_apis=("torch.nn.functional.embedding_bag",),
        sample_inputs=every_dtype_first(_bag_samples, keep=2),
        error_inputs=_bag_errors,
        grad_argnums=(1,),
        bench_input=_bag_bench,
        torch_opinfo=(
            TorchOpInfo(
                "nn.functional.embedding_bag", adapter=embedding_bag_weight_first, stride=3
            ),
        ),
        dispatch_op="layers.embedding_bag",
        # every dtype runs the kernel (float16 through float32); the composite, the fallback:
        # the float64 samples (the first two; all of them in `mscompat parity`)
        backend_dtypes={"composite": ("float64",)},
    ),
    OpInfo(
        name="layers.Embedding",
        op=Embedding,
        ref=_torch_cell("Embedding"),
        mirrors="torch.nn.Embedding",
        torch_apis=("torch.nn.Embedding",),
        sample_inputs=every_dtype_first(_embedding_cell_samples),
        error_inputs=_cell_errors,
        grad_argnums=(),
        is_cell=True,
    ),
    OpInfo(
        name="layers.EmbeddingBag",
        op=EmbeddingBag,
        ref=_torch_cell("EmbeddingBag"),
        mirrors="torch.nn.EmbeddingBag",
        torch_apis=("torch.nn.EmbeddingBag",),
        sample_inputs=every_dtype_first(_bag_cell_samples),
        error_inputs=_bag_cell_errors,
        grad_argnums=(),
        is_cell=True,
    ),
]
