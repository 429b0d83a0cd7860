"""Op database entries for ``sync_batch_norm`` and ``SyncBatchNorm``
(``mscompat.layers.sync_norm``): the single-process path, which PyTorch runs too.

Not distributed, :class:`torch.nn.SyncBatchNorm` is ``F.batch_norm`` on CPU (it raises only
when ``torch.distributed`` is initialised and the input is not on a GPU), so the Cell is
compared with PyTorch's own ``SyncBatchNorm``; the function, which PyTorch keeps private (an
autograd Function), with ``F.batch_norm``. The synchronised path needs ``msrun``: it is
checked by ``examples/dist_sync_batch_norm.py`` (``tests/test_sync_batch_norm.py``).
"""

from __future__ import annotations

from typing import Any, Iterator, List, Optional

import numpy as np

from mscompat import layers as L
from mscompat.testing.db._common import bench, normal, torch_entry
from mscompat.testing.db.layers_norm import _F16_INSTANCE
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput


def _torch_sync_batch_norm(
    input: Any,
    running_mean: Any,
    running_var: Any,
    weight: Any = None,
    bias: Any = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
    process_group: Optional[str] = None,
) -> Any:
    """PyTorch's single-process SyncBatchNorm: ``F.batch_norm`` (the group is not used)."""
    import torch

    return torch.nn.functional.batch_norm(
        input, running_mean, running_var, weight, bias, training, momentum, eps
    )


def _samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (3, 2, 2, 3), dtype, 2.0) + 1
    c = normal(rng, (2,), dtype)
    rm, rv = normal(rng, (2,), dtype), np.abs(normal(rng, (2,), dtype)) + 0.5
    yield SampleInput((x, rm, rv, c, c, True, 0.3), name="training, momentum 0.3")
    yield SampleInput(
        (x[:, :, 0], rm, rv, None, c), {"process_group": "unused_group"}, name="eval, 3-D"
    )


def _errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3, 4), np.float32)
    c = np.ones(3, np.float32)
    yield ErrorInput(SampleInput((x, c, c), {"process_group": 0}), TypeError, "process_group")
    yield ErrorInput(SampleInput((x[0, 0], None, None)), ValueError, "at least 2 dims")
    yield ErrorInput(SampleInput((x, c[:2], c)), ValueError, "running_mean must have shape")


def _cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (3, 2, 3, 2), dtype) * 2 + 1
    yield SampleInput((x,), init_kwargs={"num_features": 2}, name="4-D, defaults")
    yield SampleInput(
        (normal(rng, (4, 2), dtype),),
        init_kwargs={"num_features": 2, "momentum": None, "eps": 0.1, "bias": False},
        name="2-D, cumulative average, no bias",
    )
    yield SampleInput(
        (normal(rng, (2, 3, 2, 1, 2), dtype),),
        init_kwargs={"num_features": 3, "affine": False, "track_running_stats": False},
        name="5-D, no parameters",
    )


def _cell_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3, 4), np.float32)
    yield ErrorInput(SampleInput((x,), init_kwargs={"num_features": 0}), ValueError, "num_features")
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"num_features": 4}), ValueError, r"input.shape\[1\]"
    )
    yield ErrorInput(
        SampleInput((x[0, 0],), init_kwargs={"num_features": 3}),
        ValueError,
        "expected at least 2D input",
    )
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"num_features": 3, "process_group": 1}),
        TypeError,
        "process_group",
    )


OPS: List[OpInfo] = [
    OpInfo(
        name="layers.sync_batch_norm",
        op=L.sync_batch_norm,
        ref=_torch_sync_batch_norm,
        mirrors="torch.nn.SyncBatchNorm's function (torch.nn.functional.batch_norm alone)",
        sample_inputs=_samples,
        error_inputs=_errors,
        tolerance_overrides=_F16_INSTANCE,
        bench_input=bench(
            (16, 64, 32, 32), None, None, None, None, True, name="(16, 64, 32, 32) training"
        ),
    ),
    torch_entry(
        "layers.SyncBatchNorm",
        L.SyncBatchNorm,
        "torch.nn.SyncBatchNorm",
        _cell_samples,
        _cell_errors,
        is_cell=True,
        # float32: PyTorch's modules hold float32 parameters, which other dtypes do not mix with.
        dtypes=("float32",),
    ),
]
