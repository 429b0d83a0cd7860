"""Op database entries for average and power-average pooling and the channel/pixel shuffles
(``mscompat.shape.avg_pool``, ``lp_pool``, ``shuffle``)."""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

from mscompat import shape as S
from mscompat.testing.db._common import bench, every_dtype_first, normal, torch_entry
from mscompat.testing.opinfo import ErrorInput, SampleInput, ToleranceOverride, TorchOpInfo
from mscompat.testing.tolerances import Tolerance

_D = {1: "1d", 2: "2d", 3: "3d"}
#: PyTorch's CPU avg_pool3d (and so lp_pool3d) has no float16 kernel.
_DTYPES = {n: ("float32", "float64") if n == 3 else ("float16", "float32", "float64") for n in _D}


def _sp(n: int, sizes: Any) -> Any:
    return tuple(sizes[:n])


# ----------------------------------------------------------------------------- avg_pool


def _avg_samples(n: int) -> Any:
    """Edge cases on 2-d (the code is shared by 1-d/2-d/3-d); 1-d/3-d get the main one."""

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = normal(rng, (2, 2) + _sp(n, (7, 6, 5)), dtype)
        yield SampleInput(
            (x, 3, 2, 1),
            {"ceil_mode": True, "count_include_pad": False},
            name="k3 s2 p1 ceil, no pad count",
        )
        if n != 2:
            return
        yield SampleInput((x, 2, 1, 1), {"divisor_override": 3}, name="k2 s1 p1 divisor_override")
        yield SampleInput((x[0], (3, 2), None, (1, 0), True), name="unbatched, per-dim sizes, ceil")
        yield SampleInput((np.zeros((0, 2, 4, 4), dtype), 2), name="empty batch")

    samples.__name__ = f"avg_pool{n}d_samples"
    return samples


def _avg_errors(n: int) -> Any:
    def errors() -> Iterator[ErrorInput]:
        x = np.ones((1, 2) + _sp(n, (6, 5, 4)), np.float32)
        yield ErrorInput(SampleInput((x, 2, 2, 2)), ValueError, "at most half of kernel size")
        yield ErrorInput(SampleInput((x, 0)), ValueError, "kernel_size must be greater")
        yield ErrorInput(SampleInput((x, 7)), ValueError, "is too small")
        yield ErrorInput(SampleInput((x[0, 0, 0:1],) + (2,)), ValueError, r"Expected \dD or \dD")
        yield ErrorInput(SampleInput((x.astype(np.int32), 2)), TypeError, "floating-point")
        yield ErrorInput(SampleInput((x, 2), {"count_include_pad": 1}), TypeError, "must be a bool")
        if n > 1:
            yield ErrorInput(
                SampleInput((x, 2), {"divisor_override": 0}), ValueError, "divisor must be not zero"
            )

    return errors


# ----------------------------------------------------------------------------- lp_pool


def _lp_samples(n: int) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = normal(rng, (2, 2) + _sp(n, (6, 5, 4)), dtype)
        # Positive inputs keep fractional powers finite; the gradient of |x|^p at 0 is avoided.
        pos = np.abs(x) + 0.25
        yield SampleInput((x, 2, 2), name="p=2 k2")
        if n == 2:
            yield SampleInput((pos[0], 1.5, (3, 2), 1, True), name="p=1.5 unbatched, s1, ceil")

    samples.__name__ = f"lp_pool{n}d_samples"
    return samples


def _lp_errors(n: int) -> Any:
    def errors() -> Iterator[ErrorInput]:
        x = np.ones((1, 2) + _sp(n, (6, 5, 4)), np.float32)
        yield ErrorInput(SampleInput((x, 0, 2)), ValueError, "norm_type must be non-zero")
        yield ErrorInput(SampleInput((x, "2", 2)), TypeError, "norm_type must be a number")
        yield ErrorInput(SampleInput((x, 2, 2.5)), TypeError, "kernel_size must be an int")
        yield ErrorInput(SampleInput((x, 2, 9)), ValueError, "is too small")

    return errors


_LP_F16 = (
    ToleranceOverride(
        "float16",
        "forward",
        Tolerance(atol=1e-3, rtol=2e-3),
        "five float16 roundings (pow, mean, scale, root) in PyTorch's and ours, 1 ulp apart",
    ),
)

# ----------------------------------------------------------------------------- shuffles

_SHUFFLE_DTYPES = ("float16", "float32", "float64", "int32", "int64")


def _channel_samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
    yield SampleInput((normal(rng, (2, 6, 2, 2), dtype) * 4, 3), name="6 channels, 3 groups")
    yield SampleInput((np.zeros((0, 4, 2), dtype), 2), name="empty batch")


def _channel_errors() -> Iterator[ErrorInput]:
    x = np.zeros((2, 6, 3), np.float32)
    yield ErrorInput(SampleInput((x, 4)), ValueError, "must be divisible by groups")
    yield ErrorInput(SampleInput((x, 0)), ValueError, "groups must be positive")
    yield ErrorInput(SampleInput((x, 2.0)), TypeError, "groups must be an int")
    yield ErrorInput(SampleInput((x[0], 2)), ValueError, "at least 3 dimensions")


def _pixel_samples(up: bool) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        if up:
            yield SampleInput((normal(rng, (2, 8, 2, 3), dtype) * 4, 2), name="r=2")
            yield SampleInput((normal(rng, (2, 1, 9, 2, 1), dtype) * 4, 3), name="5-D r=3")
        else:
            yield SampleInput((normal(rng, (2, 2, 4, 6), dtype) * 4, 2), name="r=2")
            yield SampleInput((normal(rng, (3, 1, 1, 3, 6), dtype) * 4, 3), name="5-D r=3")

    samples.__name__ = f"pixel_{'' if up else 'un'}shuffle_samples"
    return samples


def _pixel_errors(up: bool) -> Any:
    name = "upscale_factor" if up else "downscale_factor"

    def errors() -> Iterator[ErrorInput]:
        x = np.zeros((1, 3, 5, 4), np.float32)
        yield ErrorInput(SampleInput((x, 2)), ValueError, "divisible by")
        yield ErrorInput(SampleInput((x, 0)), ValueError, f"{name} must be positive")
        yield ErrorInput(SampleInput((x, 2.0)), TypeError, f"{name} must be an int")
        yield ErrorInput(SampleInput((x[0, 0], 1)), ValueError, "at least 3 dimensions")

    return errors


#: A Cell's bad constructor argument and the error its first call raises.
_CELL_ERRORS: Dict[str, Tuple[Dict[str, Any], type, str]] = {
    "AvgPool": ({"kernel_size": 0}, ValueError, "kernel_size must be greater than zero"),
    "LPPool": ({"kernel_size": 0}, ValueError, "kernel_size must be greater than zero"),
    "ChannelShuffle": ({"groups": 3}, ValueError, "divisible by groups"),
    "PixelShuffle": ({"upscale_factor": 3}, ValueError, "divisible by the square of upscale"),
    "PixelUnshuffle": ({"downscale_factor": 3}, ValueError, "divisible by downscale_factor"),
    "FractionalMaxPool": ({"output_size": None}, ValueError, "either an output size"),
}


def _cell(name: str, init: dict, x: Any, dtypes: Any = ("float32",)) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        yield SampleInput((x(rng, dtype),), init_kwargs=init, name=str(init))

    def errors() -> Iterator[ErrorInput]:
        bad, kind, match = _CELL_ERRORS[name.rstrip("123d") if name[-1] == "d" else name]
        sample = SampleInput((x(np.random.default_rng(0), "float32"),), init_kwargs={**init, **bad})
        yield ErrorInput(sample, kind, match)

    samples.__name__ = f"{name}_samples"
    return torch_entry(
        f"shape.{name}",
        getattr(S, name),
        f"torch.nn.{name}",
        samples,
        errors,
        is_cell=True,
        dtypes=dtypes,
    )


def _planes(n: int, size: int = 5) -> Any:
    return lambda rng, dtype: normal(rng, (2, 2) + (size,) * n, dtype)


OPS: List[Any] = []
for _n, _d in _D.items():
    OPS.append(
        torch_entry(
            f"shape.avg_pool{_d}",
            getattr(S, f"avg_pool{_d}"),
            f"torch.nn.functional.avg_pool{_d}",
            every_dtype_first(_avg_samples(_n), keep=1),
            _avg_errors(_n),
            dtypes=_DTYPES[_n],
            dispatch_op=f"shape.avg_pool{_d}",
            torch_apis=(f"torch.nn.functional.avg_pool{_d}",)
            + (("torch.avg_pool1d",) if _n == 1 else ()),
            bench_input=bench(
                {1: (64, 64, 256), 2: (8, 32, 64, 64), 3: (4, 16, 16, 32, 32)}[_n],
                3,
                2,
                1,
                name="1e6 elements, k3 s2 p1",
            ),
            torch_opinfo=(
                TorchOpInfo(
                    f"nn.functional.avg_pool{_d}",
                    stride=3,
                    skip_dtypes={"int64": "integer average pooling: the input must be float"},
                ),
            ),
        )
    )
    _init: dict = {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}
    OPS.append(_cell(f"AvgPool{_d}", _init, _planes(_n)))
    OPS.append(
        torch_entry(
            f"shape.lp_pool{_d}",
            getattr(S, f"lp_pool{_d}"),
            f"torch.nn.functional.lp_pool{_d}",
            every_dtype_first(_lp_samples(_n), keep=1),
            _lp_errors(_n),
            dtypes=_DTYPES[_n],
            tolerance_overrides=_LP_F16,
            bench_input=bench(
                {1: (64, 64, 256), 2: (8, 32, 64, 64), 3: (4, 16, 16, 32, 32)}[_n],
                2.0,
                2,
                name="1e6 elements, p=2 k2",
            ),
        )
    )
    OPS.append(_cell(f"LPPool{_d}", {"norm_type": 2.0, "kernel_size": 2, "stride": 1}, _planes(_n)))

OPS += [
    torch_entry(
        "shape.channel_shuffle",
        S.channel_shuffle,
        "torch.nn.functional.channel_shuffle",
        every_dtype_first(_channel_samples, keep=1),
        _channel_errors,
        dtypes=_SHUFFLE_DTYPES,
        torch_apis=("torch.nn.functional.channel_shuffle", "torch.channel_shuffle"),
        bench_input=bench((16, 64, 32, 32), 4),
        torch_opinfo=(TorchOpInfo("nn.functional.channel_shuffle"),),
    ),
    _cell("ChannelShuffle", {"groups": 2}, _planes(1)),
    *(
        torch_entry(
            f"shape.pixel_{k}shuffle",
            getattr(S, f"pixel_{k}shuffle"),
            f"torch.nn.functional.pixel_{k}shuffle",
            every_dtype_first(_pixel_samples(k == ""), keep=1),
            _pixel_errors(k == ""),
            dtypes=_SHUFFLE_DTYPES,
            torch_apis=(f"torch.nn.functional.pixel_{k}shuffle", f"torch.pixel_{k}shuffle"),
            bench_input=bench((16, 64, 32, 32), 2),
            torch_opinfo=(TorchOpInfo(f"nn.functional.pixel_{k}shuffle"),),
        )
        for k in ("", "un")
    ),
    _cell("PixelShuffle", {"upscale_factor": 2}, lambda rng, dt: normal(rng, (1, 8, 2, 3), dt)),
    _cell("PixelUnshuffle", {"downscale_factor": 2}, lambda rng, dt: normal(rng, (1, 2, 4, 2), dt)),
]


# ----------------------------------------------------------------------------- fractional


def _fractional_samples(n: int) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = rng.integers(-3, 3, (2, 2) + _sp(n, (7, 6, 5))).astype(dtype)  # ties
        u = rng.random((2, 2, n)).astype(dtype)
        ri = {"return_indices": True, "_random_samples": u}
        yield SampleInput((x, 2, _sp(n, (3, 4, 2))), ri, name="ties, k2")
        if n == 3:
            return
        yield SampleInput(
            (x, _sp(n, (3, 1, 2))),
            {"output_ratio": (0.5,) * n, "_random_samples": u},
            name="output_ratio 0.5, per-dim kernel",
        )
        x1 = x[:1].copy()
        x1[0, 0].reshape(-1)[::3] = np.nan
        yield SampleInput(
            (x1[0], 2, _sp(n, (6, 5, 4))),
            {"_random_samples": u[:1]},
            name="unbatched, NaN, overlapping windows",
        )
        # PyTorch's OpInfo passes normal samples: its int casts truncate toward 0
        outside = np.array([[[4.96, -0.71]]], dtype)
        yield SampleInput(
            (normal(rng, (1, 1, 16, 16), dtype), 1),
            {"output_ratio": (0.5, 0.5), "_random_samples": outside},
            name="samples outside [0, 1)",
        )

    samples.__name__ = f"fractional_max_pool{n}d_samples"
    return samples


def _fractional_errors(n: int) -> Any:
    def errors() -> Iterator[ErrorInput]:
        x = np.ones((2, 2) + _sp(n, (6, 5, 4)), np.float32)
        u = np.full((2, 2, n), 0.5, np.float32)
        yield ErrorInput(SampleInput((x, 2)), ValueError, "either an output_size or")
        yield ErrorInput(SampleInput((x, 2, 6)), ValueError, "too large relative to input")
        yield ErrorInput(
            SampleInput((x, 2, 2), {"_random_samples": u[:1]}),
            ValueError,
            "_random_samples must have shape",
        )
        yield ErrorInput(
            SampleInput((x, 2, 2), {"_random_samples": u.astype(np.float64)}),
            TypeError,
            "_random_samples must have input's dtype",
        )
        yield ErrorInput(SampleInput((x, 2, None, 1.5)), ValueError, "between 0 and 1")

    return errors


def _torch_samples_module(name: str) -> Any:
    """``torch.nn.<name>`` built with its ``_random_samples`` array as a torch Tensor."""

    def make(**kwargs: Any) -> Any:
        import torch

        if kwargs.get("_random_samples") is not None:
            kwargs["_random_samples"] = torch.as_tensor(kwargs["_random_samples"])
        return getattr(torch.nn, name)(**kwargs)

    return make


for _n in (2, 3):
    _d = _D[_n]
    OPS.append(
        torch_entry(
            f"shape.fractional_max_pool{_d}",
            getattr(S, f"fractional_max_pool{_d}"),
            f"torch.nn.functional.fractional_max_pool{_d}",
            every_dtype_first(_fractional_samples(_n), keep=1),
            _fractional_errors(_n),
            dispatch_op=f"shape.fractional_max_pool{_d}",
            bench_input=bench(
                {2: (8, 32, 64, 64), 3: (4, 16, 16, 32, 32)}[_n],
                2,
                {2: (32, 32), 3: (8, 16, 16)}[_n],
                _random_samples=np.full({2: (8, 32, 2), 3: (4, 16, 3)}[_n], 0.5, np.float32),
                name="1e6 elements, k2",
            ),
        )
    )

    def _fractional_cell_input(rng: np.random.Generator, dtype: str, n: int = _n) -> Any:
        return rng.integers(-3, 3, (1, 2) + _sp(n, (6, 5, 5))).astype(dtype)

    _u = np.full((1, 2, _n), 0.3, np.float32)
    _entry = _cell(
        f"FractionalMaxPool{_d}",
        {"kernel_size": 2, "output_size": 3, "return_indices": True, "_random_samples": _u},
        _fractional_cell_input,
    )
    _entry.ref = _torch_samples_module(f"FractionalMaxPool{_d}")
    OPS.append(_entry)
