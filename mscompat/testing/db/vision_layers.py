"""Op database entries for ``mscompat.vision``'s layers: DropBlock, stochastic depth,
``FrozenBatchNorm2d``, ``Conv2dNormActivation``, ``SqueezeExcitation``.

The random layers are compared with PyTorch where they are deterministic (``training=False``,
``p=0``, every seed drawn); their random masks are checked by properties in
``tests/test_vision_layers.py``. The Cells with weights are compared through small test
wrappers that load one seeded state dict, by torchvision's names, on both sides.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import nn

from mscompat.testing.db._common import every_dtype_first, torch_ref
from mscompat.testing.opinfo import ErrorInput, OpInfo, SampleInput
from mscompat.vision.drop_block import (
    DropBlock2d,
    DropBlock3d,
    StochasticDepth,
    drop_block2d,
    drop_block3d,
    stochastic_depth,
)
from mscompat.vision.layers import Conv2dNormActivation, FrozenBatchNorm2d, SqueezeExcitation

_REFS = "mscompat.testing.references.torchvision_ops"


def _normal(rng: np.random.Generator, shape: Any, dtype: str) -> np.ndarray:
    return rng.standard_normal(shape).astype(dtype)


# ----------------------------------------------------------------------------- drop_block


def drop_block_samples(dims: int) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        shape = (2, 3) + (5,) * dims
        x = _normal(rng, shape, dtype)
        yield SampleInput((x, 0.5, 3), {"training": False}, name="training=False: identity")
        yield SampleInput((x, 0.0, 3), name="p=0: identity")
        yield SampleInput((x, 1.0, 1), name="p=1, block 1: all dropped")
        yield SampleInput((x, 1.0, 7, False, 1e-3), name="p=1, block clipped to 5: all dropped")

    return samples


def drop_block_errors(dims: int) -> Any:
    def errors() -> Iterator[ErrorInput]:
        x = np.ones((1, 1) + (6,) * dims, np.float32)
        yield ErrorInput(SampleInput((x, 1.5, 3)), ValueError, r"drop probability has to be")
        yield ErrorInput(SampleInput((x[0], 0.5, 3)), ValueError, rf"input should be {dims + 2}")
        yield ErrorInput(SampleInput((x, 0.5, 4)), ValueError, r"block size should be odd")
        yield ErrorInput(SampleInput((x, 0.5, 0)), ValueError, r"block_size must be >= 1")
        yield ErrorInput(SampleInput((x, 0.5, 3.0)), TypeError, r"block_size must be an int")
        yield ErrorInput(SampleInput((x.astype(np.int32), 0.5, 3)), TypeError, r"input must be")

    return errors


def stochastic_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _normal(rng, (4, 3, 2), dtype)
    yield SampleInput((x, 0.5, "row", False), name="training=False: identity")
    yield SampleInput((x, 0.0, "batch"), name="p=0: identity")
    yield SampleInput((x, 1.0, "row"), name="p=1 row: zeros")
    yield SampleInput((x, 1.0, "batch"), name="p=1 batch: zeros")


def stochastic_errors() -> Iterator[ErrorInput]:
    x = np.ones((4, 3), np.float32)
    yield ErrorInput(SampleInput((x, -0.1, "row")), ValueError, r"drop probability has to be")
    yield ErrorInput(SampleInput((x, 0.5, "col")), ValueError, r"mode has to be either")
    yield ErrorInput(SampleInput((np.float32(1.0) * x[0, 0], 0.5, "row")), TypeError, r"input")


@dataclass
class CellInfo(OpInfo):
    """A Cell entry whose samples may also set ``train`` (a MindSpore Cell starts in inference
    mode, a PyTorch module in training mode: each side is put in the same mode), ``state`` (a
    seeded state dict with PyTorch's names, loaded on both sides) and the names of the layers
    (``norm``/``act``/``scale_act``: MindSpore's here, PyTorch's in the reference)."""

    def ms_callable(self, sample: SampleInput) -> Any:
        init = dict(sample.init_kwargs)
        state, train = init.pop("state", None), init.pop("train", None)
        init.pop("dims", None)
        for key, table in (("norm", _NORMS), ("act", _ACTS), ("scale_act", _ACTS)):
            if key in init:
                init[_LAYER_ARGS[self.name][key]] = table[init.pop(key)]
        cell = self.op(**init)
        _load(cell, state)
        if train is not None:
            cell.set_train(train)
        elif self.name.startswith(("vision.Drop", "vision.Stochastic")):
            cell.set_train(True)  # PyTorch's default mode
        return cell


def drop_block_cell_samples(dims: int) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = _normal(rng, (2, 3) + (4,) * dims, dtype)
        extra = {} if dims == 2 else {"dims": 3}
        yield SampleInput(
            (x,),
            init_kwargs={"p": 0.5, "block_size": 3, "train": False, **extra},
            name="inference mode: identity",
        )
        yield SampleInput(
            (x,),
            init_kwargs={"p": 1.0, "block_size": 1, "eps": 1e-3, **extra},
            name="training, p=1: all dropped",
        )

    return samples


def stochastic_cell_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _normal(rng, (4, 3), dtype)
    yield SampleInput(
        (x,), init_kwargs={"p": 0.3, "mode": "row", "train": False}, name="inference mode: identity"
    )
    yield SampleInput((x,), init_kwargs={"p": 1.0, "mode": "batch"}, name="p=1: zeros")


def cell_errors(dims: int) -> Any:
    def errors() -> Iterator[ErrorInput]:
        x = np.ones((1, 1) + (5,) * dims, np.float32)
        yield ErrorInput(
            SampleInput((x,), init_kwargs={"p": 2.0, "block_size": 3}),
            ValueError,
            r"drop probability",
        )
        yield ErrorInput(
            SampleInput((x,), init_kwargs={"p": 0.5, "block_size": 2}),
            ValueError,
            r"block size should be odd",
        )

    return errors


def stochastic_cell_errors() -> Iterator[ErrorInput]:
    x = np.ones((4, 3), np.float32)
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"p": 0.5, "mode": "rows"}), ValueError, r"mode has to be"
    )


# ----------------------------------------------------------------------------- weights


def _set(param: Any, value: np.ndarray) -> None:
    param.set_data(ms.Tensor(value))


def _load(cell: nn.Cell, state: Optional[Dict[str, np.ndarray]]) -> nn.Cell:
    """Load a torch-named state dict: by name, and BatchNorm2d's four by their torch names."""
    params = dict(cell.parameters_and_names())
    renames = {
        "weight": "gamma",
        "bias": "beta",
        "running_mean": "moving_mean",
        "running_var": "moving_variance",
    }
    for name, value in (state or {}).items():
        if name not in params:
            prefix, _, leaf = name.rpartition(".")
            name = f"{prefix}.{renames[leaf]}"
        _set(params[name], value)
    return cell


_NORMS = {"bn": nn.BatchNorm2d, "frozen": FrozenBatchNorm2d, None: None}
_ACTS = {
    "relu": nn.ReLU,
    "hardswish": nn.HSwish,
    "sigmoid": nn.Sigmoid,
    "hardsigmoid": nn.HSigmoid,
    None: None,
}
_LAYER_ARGS = {
    "vision.Conv2dNormActivation": {"norm": "norm_layer", "act": "activation_layer"},
    "vision.SqueezeExcitation": {"act": "activation", "scale_act": "scale_activation"},
}


def _bn_state(rng: np.random.Generator, prefix: str, c: int, dtype: str) -> Dict[str, Any]:
    return {
        f"{prefix}weight": rng.uniform(0.5, 1.5, c).astype(dtype),
        f"{prefix}bias": _normal(rng, (c,), dtype),
        f"{prefix}running_mean": _normal(rng, (c,), dtype),
        f"{prefix}running_var": rng.uniform(0.5, 2.0, c).astype(dtype),
    }


def frozen_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _normal(rng, (2, 3, 4, 5), dtype)
    yield SampleInput((x,), init_kwargs={"num_features": 3}, name="defaults")
    yield SampleInput(
        (x,),
        init_kwargs={"num_features": 3, "eps": 1e-3, "state": _bn_state(rng, "", 3, dtype)},
        name="loaded state, eps 1e-3",
    )


def frozen_errors() -> Iterator[ErrorInput]:
    x = np.ones((2, 3, 4, 4), np.float32)
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"num_features": 4}),
        ValueError,
        r"x must have shape \(N, 4, H, W\)",
    )
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"num_features": 3.0}),
        TypeError,
        r"num_features must be an int",
    )


def _conv_state(
    rng: np.random.Generator, cin: int, cout: int, k: Any, groups: int, norm: Any, bias: bool
) -> Dict[str, Any]:
    kh, kw = (k, k) if isinstance(k, int) else k
    state = {
        "0.weight": (rng.standard_normal((cout, cin // groups, kh, kw)) * 0.3).astype(np.float32)
    }
    if bias:
        state["0.bias"] = _normal(rng, (cout,), "float32")
    if norm is not None:
        state.update(_bn_state(rng, "1.", cout, "float32"))
    return state


def conv_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _normal(rng, (2, 4, 7, 6), dtype)
    cases: List[Tuple[str, Dict[str, Any]]] = [
        ("defaults: 3x3, BatchNorm2d (inference), ReLU", {}),
        ("stride 2, BatchNorm2d in training mode", {"stride": 2, "train": True}),
        (
            "(3, 1) kernel, dilation 2, groups 2, frozen BN, Hardswish",
            {
                "kernel_size": (3, 1),
                "dilation": 2,
                "groups": 2,
                "norm": "frozen",
                "act": "hardswish",
            },
        ),
        (
            "no norm (bias), no activation, padding 0",
            {"kernel_size": 1, "padding": 0, "norm": None, "act": None},
        ),
    ]
    for name, extra in cases:
        kw: Dict[str, Any] = {"in_channels": 4, "out_channels": 6, **extra}
        bias = extra.get("norm", "bn") is None
        kw["state"] = _conv_state(
            rng, 4, 6, kw.get("kernel_size", 3), kw.get("groups", 1), kw.get("norm", "bn"), bias
        )
        yield SampleInput((x,), init_kwargs=kw, name=name)


def conv_errors() -> Iterator[ErrorInput]:
    x = np.ones((1, 4, 5, 5), np.float32)
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"in_channels": 4, "out_channels": 6, "groups": 4}),
        ValueError,
        r"must be divisible by groups",
    )
    yield ErrorInput(
        SampleInput(
            (x,), init_kwargs={"in_channels": 4, "out_channels": 6, "stride": 2, "padding": "same"}
        ),
        ValueError,
        r"padding='same' is not supported for strided",
    )
    yield ErrorInput(
        SampleInput(
            (x,), init_kwargs={"in_channels": 4, "out_channels": 6, "kernel_size": (3, 3, 3)}
        ),
        ValueError,
        r"kernel_size must be an int or a pair",
    )


def se_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    x = _normal(rng, (2, 6, 5, 4), dtype)
    for act, scale_act in (("relu", "sigmoid"), ("hardswish", "hardsigmoid")):
        state = {
            "fc1.weight": _normal(rng, (3, 6, 1, 1), dtype),
            "fc1.bias": _normal(rng, (3,), dtype),
            "fc2.weight": _normal(rng, (6, 3, 1, 1), dtype),
            "fc2.bias": _normal(rng, (6,), dtype),
        }
        kw = {
            "input_channels": 6,
            "squeeze_channels": 3,
            "act": act,
            "scale_act": scale_act,
            "state": state,
        }
        yield SampleInput((x,), init_kwargs=kw, name=f"{act} / {scale_act}")


def se_errors() -> Iterator[ErrorInput]:
    x = np.ones((1, 4, 5, 5), np.float32)
    yield ErrorInput(
        SampleInput((x,), init_kwargs={"input_channels": 4, "squeeze_channels": 0}),
        ValueError,
        r"squeeze_channels must be >= 1",
    )


def _fn(name: str, op: Any, samples: Any, errors: Any, **extra: Any) -> OpInfo:
    return OpInfo(
        name=f"vision.{name}",
        op=op,
        ref=torch_ref(f"{_REFS}:{name}"),
        mirrors=f"torchvision.ops.{name}",
        torch_apis=(f"torchvision.ops.{name}",),
        sample_inputs=samples,
        error_inputs=errors,
        **extra,
    )


def _cell(name: str, op: Any, ref: str, samples: Any, errors: Any, **extra: Any) -> OpInfo:
    return CellInfo(
        name=f"vision.{name}",
        op=op,
        ref=torch_ref(f"{_REFS}:{ref}"),
        mirrors=f"torchvision.ops.{name}",
        torch_apis=(f"torchvision.ops.{name}",),
        sample_inputs=samples,
        error_inputs=errors,
        is_cell=True,
        **extra,
    )


OPS: List[OpInfo] = [
    _fn(
        "drop_block2d",
        drop_block2d,
        every_dtype_first(drop_block_samples(2), 3),
        drop_block_errors(2),
    ),
    _fn(
        "drop_block3d", drop_block3d, every_dtype_first(drop_block_samples(3)), drop_block_errors(3)
    ),
    _fn(
        "stochastic_depth",
        stochastic_depth,
        every_dtype_first(stochastic_samples, 2),
        stochastic_errors,
    ),
    _cell(
        "DropBlock2d",
        DropBlock2d,
        "drop_block_module",
        every_dtype_first(drop_block_cell_samples(2)),
        cell_errors(2),
    ),
    _cell(
        "DropBlock3d",
        DropBlock3d,
        "drop_block_module",
        every_dtype_first(drop_block_cell_samples(3)),
        cell_errors(3),
    ),
    _cell(
        "StochasticDepth",
        StochasticDepth,
        "stochastic_depth_module",
        every_dtype_first(stochastic_cell_samples),
        stochastic_cell_errors,
    ),
    _cell(
        "FrozenBatchNorm2d",
        FrozenBatchNorm2d,
        "FrozenBatchNorm2d",
        every_dtype_first(frozen_samples),
        frozen_errors,
    ),
    # MindSpore's Conv2d on CPU runs float16/float32: the blocks are checked in float32.
    _cell(
        "Conv2dNormActivation",
        Conv2dNormActivation,
        "conv2d_norm_activation",
        conv_samples,
        conv_errors,
        dtypes=("float32",),
    ),
    _cell(
        "SqueezeExcitation",
        SqueezeExcitation,
        "squeeze_excitation",
        se_samples,
        se_errors,
        dtypes=("float32",),
    ),
]
