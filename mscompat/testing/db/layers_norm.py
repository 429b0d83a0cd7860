"""Op database entries for normalisations (``mscompat.layers.normalization``)."""

from __future__ import annotations

from typing import Any, Callable, Iterator, List

import numpy as np

from mscompat.layers import (
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LocalResponseNorm,
    RMSNorm,
    instance_norm,
    local_response_norm,
    rms_norm,
)
from mscompat.testing.db._common import bench, every_dtype_first, normal, torch_ref
from mscompat.testing.opinfo import (
    ErrorInput,
    KnownDifference,
    OpInfo,
    SampleInput,
    ToleranceOverride,
    TorchOpInfo,
)
from mscompat.testing.tolerances import Tolerance

#: PyTorch's float16 instance norm (a batch norm of the (1, N * C, *) view) rounds its
#: steps to float16; ours rounds once: 1 ulp apart at values in [2, 4).
_F16_INSTANCE = (
    ToleranceOverride(
        "float16",
        "forward",
        Tolerance(atol=2e-3, rtol=1e-3),
        "PyTorch rounds each step of its float16 batch norm, we round once: 1 ulp in [2, 4)",
    ),
)

# ----------------------------------------------------------------------------- rms_norm


def _rms_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 3, 4, 5), dtype)
    yield SampleInput((x, (4, 5), normal(rng, (4, 5), dtype)), name="weight, 2 dims")
    yield SampleInput((x, [5]), name="no weight, eps=None (finfo)")
    yield SampleInput((x, [5], None, 0.1), name="eps=0.1")
    yield SampleInput((normal(rng, (6, 3), dtype).T, (6,)), name="transposed")
    yield SampleInput((np.zeros((0, 4), dtype), (4,)), name="empty")


def _rms_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3), np.float32)
    yield ErrorInput(SampleInput((x, (2,))), ValueError, "must be the last dims of input")
    yield ErrorInput(SampleInput((x, "3")), TypeError, "normalized_shape must be an int")
    yield ErrorInput(SampleInput((x, (3,), np.ones(2, np.float32))), ValueError, "weight must have")
    yield ErrorInput(SampleInput((x.astype(np.int32), (3,))), TypeError, "input must be a floating")


def _rms_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 3, 4), dtype)
    yield SampleInput((x,), init_kwargs={"normalized_shape": [3, 4]}, name="affine")
    yield SampleInput(
        (x,), init_kwargs={"normalized_shape": 4, "eps": 1e-3, "elementwise_affine": False}
    )


# ----------------------------------------------------------------------------- instance_norm


def _instance_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 3, 4, 5), dtype)
    c = normal(rng, (3,), dtype)
    yield SampleInput((x, None, None, c, c), name="affine (2, 3, 4, 5)")
    yield SampleInput((x,), name="plain")
    stats = (np.abs(c), np.abs(c) + 1)
    yield SampleInput(
        (x, *stats), {"use_input_stats": False, "eps": 0.01}, name="running statistics"
    )
    yield SampleInput((normal(rng, (2, 3, 7), dtype).transpose(0, 1, 2),), name="1-D spatial")
    yield SampleInput((normal(rng, (1, 2, 2, 3, 2), dtype),), name="3-D spatial")
    yield SampleInput((np.zeros((0, 3, 4), dtype),), name="empty batch")


def _instance_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3, 4), np.float32)
    c = np.ones(3, np.float32)
    yield ErrorInput(SampleInput((x[0],)), ValueError, "at least 3 dims")
    yield ErrorInput(
        SampleInput((x, None, None, c[:2])), ValueError, r"weight must have shape \(3,\)"
    )
    yield ErrorInput(
        SampleInput((x,), {"use_input_stats": False}), ValueError, "running_mean and running_var"
    )
    yield ErrorInput(SampleInput((x[..., :1],)), ValueError, "more than 1 spatial element")
    yield ErrorInput(SampleInput((x,), {"momentum": "0.1"}), TypeError, "momentum must be a number")


def _torch_cell(cls: str) -> Callable[..., Any]:
    def make(**kwargs: Any) -> Any:
        import torch

        return getattr(torch.nn, cls)(**kwargs)

    return make


def _instance_cell_samples(dims: int) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = normal(rng, (2, 3) + (4,) * dims, dtype)
        yield SampleInput((x,), init_kwargs={"num_features": 3}, name="defaults")
        yield SampleInput(
            (x[0],),
            init_kwargs={"num_features": 3, "affine": True, "track_running_stats": True},
            name="unbatched, affine, tracked (training)",
        )

    samples.__name__ = f"instance{dims}d_samples"
    return samples


def _instance_cell_errors(dims: int = 1) -> Any:
    def errors() -> Iterator[ErrorInput]:
        x = np.zeros((2, 4) + (5,) * dims, np.float32)
        yield ErrorInput(
            SampleInput((x,), init_kwargs={"num_features": 3}), ValueError, "num_features"
        )
        yield ErrorInput(
            SampleInput((x[0, 0],), init_kwargs={"num_features": 4}), ValueError, "expected a"
        )

    return errors


def _rms_cell_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3, 4), np.float32)
    yield ErrorInput(SampleInput((x,), init_kwargs={"normalized_shape": 3}), ValueError, "shape")


# ----------------------------------------------------------------------------- local_response_norm


def _lrn_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = normal(rng, (2, 6, 5), dtype, 2.0)
    yield SampleInput((x, 3), {"alpha": 0.5, "beta": 0.75, "k": 2.0}, name="3-D size=3")
    yield SampleInput((x, 4), name="3-D size=4 (even: window 2 before, 1 after)")
    if dtype != "float16":  # PyTorch: no float16 avg_pool3d, used for 4-D and more
        yield SampleInput((normal(rng, (1, 5, 3, 4), dtype), 2), name="4-D size=2")
        yield SampleInput((normal(rng, (1, 3, 2, 2, 2), dtype), 7), name="5-D size > C")
    yield SampleInput((np.zeros((0, 3, 4), dtype), 2), name="empty")


def _lrn_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3, 4), np.float32)
    yield ErrorInput(SampleInput((x[0], 2)), ValueError, "expected 3D or higher")
    yield ErrorInput(SampleInput((x, 0)), ValueError, "size must be >= 1")
    yield ErrorInput(SampleInput((x, 2.0)), TypeError, "size must be an int")


def _lrn_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((normal(rng, (2, 5, 3), dtype),), init_kwargs={"size": 3, "k": 2.0})


def _lrn_cell_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 3, 4), np.float32)
    yield ErrorInput(SampleInput((x,), init_kwargs={"size": 0}), ValueError, "size must be an int")


OPS: List[OpInfo] = [
    OpInfo(
        name="layers.rms_norm",
        op=rms_norm,
        ref=torch_ref("torch.nn.functional.rms_norm"),
        mirrors="torch.nn.functional.rms_norm",
        torch_apis=("torch.nn.functional.rms_norm",),
        sample_inputs=every_dtype_first(_rms_samples, keep=1),
        error_inputs=_rms_errors,
        grad_argnums=(0,),
        bench_input=bench((64, 128, 128), (128,)),
        torch_opinfo=(TorchOpInfo("nn.functional.rms_norm"),),
    ),
    OpInfo(
        name="layers.RMSNorm",
        op=RMSNorm,
        ref=_torch_cell("RMSNorm"),
        mirrors="torch.nn.RMSNorm",
        torch_apis=("torch.nn.RMSNorm",),
        sample_inputs=every_dtype_first(_rms_cell_samples),
        error_inputs=_rms_cell_errors,
        is_cell=True,
    ),
    OpInfo(
        name="layers.instance_norm",
        op=instance_norm,
        ref=torch_ref("torch.nn.functional.instance_norm"),
        mirrors="torch.nn.functional.instance_norm",
        torch_apis=("torch.nn.functional.instance_norm",),
        sample_inputs=every_dtype_first(_instance_samples, keep=1),
        error_inputs=_instance_errors,
        grad_argnums=(0,),
        bench_input=bench((16, 64, 32, 32)),
        tolerance_overrides=_F16_INSTANCE,
        torch_opinfo=(TorchOpInfo("nn.functional.instance_norm", stride=2),),
        known=(
            KnownDifference(
                "nn.functional.instance_norm",
                "float16",
                tuple(range(8)),
                "1 float16 ulp: PyTorch rounds each step of its float16 batch norm, we round once",
            ),
        ),
    ),
    *(
        OpInfo(
            name=f"layers.{cell.__name__}",
            op=cell,
            ref=_torch_cell(cell.__name__),
            mirrors=f"torch.nn.{cell.__name__}",
            torch_apis=(f"torch.nn.{cell.__name__}",),
            sample_inputs=every_dtype_first(_instance_cell_samples(dims)),
            error_inputs=_instance_cell_errors(dims),
            tolerance_overrides=_F16_INSTANCE,
            is_cell=True,
        )
        for dims, cell in ((1, InstanceNorm1d), (2, InstanceNorm2d), (3, InstanceNorm3d))
    ),
    OpInfo(
        name="layers.local_response_norm",
        op=local_response_norm,
        ref=torch_ref("torch.nn.functional.local_response_norm"),
        mirrors="torch.nn.functional.local_response_norm",
        torch_apis=("torch.nn.functional.local_response_norm",),
        sample_inputs=every_dtype_first(_lrn_samples, keep=1),
        error_inputs=_lrn_errors,
        bench_input=bench((16, 64, 32, 32), 5),
        torch_opinfo=(
            TorchOpInfo(
                "nn.functional.local_response_norm",
                skip_dtypes={
                    "int64": "integer LRN (integer average pooling and power) is not supported: "
                    "the input must be float"
                },
            ),
        ),
        known=(
            KnownDifference(
                "nn.functional.local_response_norm",
                "float16",
                (7,),
                "1 float16 ulp: PyTorch rounds each step (square, average, power) to float16, "
                "we round once",
            ),
        ),
    ),
    OpInfo(
        name="layers.LocalResponseNorm",
        op=LocalResponseNorm,
        ref=_torch_cell("LocalResponseNorm"),
        mirrors="torch.nn.LocalResponseNorm",
        torch_apis=("torch.nn.LocalResponseNorm",),
        sample_inputs=_lrn_cell_samples,
        error_inputs=_lrn_cell_errors,
        is_cell=True,
    ),
]
