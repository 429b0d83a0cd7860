"""Op database entries for the convolutions (``mscompat.layers.conv``, ``conv_layers``)."""

from __future__ import annotations

from typing import Any, Callable, Iterator, List

import numpy as np

from mscompat.layers import (
    Conv1d,
    Conv2d,
    Conv3d,
    ConvTranspose1d,
    ConvTranspose2d,
    ConvTranspose3d,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
)
from mscompat.testing.db._common import every_dtype_first, normal, torch_ref
from mscompat.testing.opinfo import (
    ErrorInput,
    KnownDifference,
    OpInfo,
    SampleInput,
    ToleranceOverride,
    TorchOpInfo,
)
from mscompat.testing.tolerances import Tolerance


def _conv_samples(nd: int) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    sp = (7, 6, 5)[:nd]

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        # 1-D and 3-D run the 2-D code (1-D as height 1): one sample each (the suite's time)
        x = normal(rng, (2, 4) + sp, dtype)
        w = normal(rng, (6, 2) + (3,) * nd, dtype)
        b = normal(rng, (6,), dtype)
        we = normal(rng, (3, 4) + (2,) * nd, dtype)  # even kernel: 'same' pads one more after
        if nd == 1:
            yield SampleInput((x[0], we, None, 2, "valid"), name="unbatched, stride 2")
            return
        yield SampleInput(
            (x, w, b),
            {"stride": 2, "padding": 1, "dilation": (2,) + (1,) * (nd - 1), "groups": 2},
            name="groups=2, stride 2, dilation",
        )
        if nd == 3:
            return
        yield SampleInput((x, we), {"padding": "same", "dilation": 1}, name="'same', even k")
        xt = np.swapaxes(normal(rng, (2, 4) + sp[::-1], dtype), 2, -1)  # non-contiguous
        dw = normal(rng, (4, 1) + (3,) * nd, dtype)
        yield SampleInput(
            (xt, dw),
            {"padding": (2,) + (0,) * (nd - 1), "groups": 4},
            name="depthwise, transposed input",
        )
        yield SampleInput((x[:0], w, b), {"groups": 2}, name="empty batch")
        if nd == 2:  # float32 only: the C++ kernel's blocks of rows and sets of blocks
            xb = normal(rng, (1, 64, 9, 41), dtype, 0.1)  # small values: see conv_transpose
            wb = normal(rng, (2, 64, 7, 7), dtype, 0.05)
            yield SampleInput((xb, wb, b[:2], 1, 3), name="k=7, 64 channels: row blocks")

    samples.__name__ = f"conv{nd}d_samples"
    return samples


def _conv_t_samples(nd: int) -> Callable[[str, np.random.Generator], Iterator[SampleInput]]:
    sp = (4, 3, 5)[:nd]

    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        x = normal(rng, (2, 4) + sp, dtype)
        w = normal(rng, (4, 3) + (3,) * nd, dtype)
        b = normal(rng, (6,), dtype)
        if nd == 1:
            k4 = normal(rng, (4, 2, 4), dtype)
            yield SampleInput((x[0], k4, None, 2, 1), name="unbatched, k=4, s=2, p=1 (decoder)")
            return
        # output_padding < dilation (not < stride): past col2im's blocks, zeros at the end
        yield SampleInput(
            (x, w),
            {"padding": 1, "output_padding": 1, "dilation": 2},
            name="output_padding 1 < dilation 2",
        )
        if nd == 3:
            return
        yield SampleInput(
            (x, w, b),
            {"stride": 2, "padding": 1, "output_padding": (1,) + (0,) * (nd - 1), "groups": 2},
            name="groups=2, stride 2, output_padding",
        )
        yield SampleInput((x[:0], w, b), {"groups": 2}, name="empty batch")
        # float32 only: the C++ kernel's blocks of rows and sets of blocks
        # small values: the weight gradient's 369-term sums cancel to near zero in places, where
        # PyTorch's float32 is 4e-5 from float64 at scale 1 (ours 7e-6): within atol at 0.1
        xb = normal(rng, (1, 2, 9, 41), dtype, 0.1)
        wb = normal(rng, (2, 64, 7, 7), dtype, 0.05)
        yield SampleInput((xb, wb, b[:1].repeat(64), 1, 3), name="k=7, 64 channels: row blocks")

    samples.__name__ = f"conv_transpose{nd}d_samples"
    return samples


_F16_GRAD = ToleranceOverride(
    "float16",
    "grad",
    Tolerance(atol=2e-2, rtol=1e-2),
    "PyTorch's float16 conv3d backward rounds partial sums to float16, we round once: one "
    "element in 1,680 differs by 0.0156 (one float16 ulp at 16)",
)


_KNOWN = (
    KnownDifference(
        "nn.functional.conv_transpose3d",
        "float32",
        (8, 9),
        "float32 summation order: the input gradient's 216-term sums of products up to 81 "
        "(PyTorch's sample values reach 9) put one element of 500 1.1e-4 from PyTorch's (batched "
        "and unbatched)",
    ),
)


def _errors(fn: Any, nd: int, transposed: bool) -> Callable[[], Iterator[ErrorInput]]:
    def errors() -> Iterator[ErrorInput]:
        sp = (5,) * nd
        x = np.ones((2, 4) + sp, np.float32)
        w = np.ones(((4, 2) if transposed else (6, 4)) + (3,) * nd, np.float32)

        def e(args: tuple, kwargs: Any, kind: Any, match: str) -> ErrorInput:
            return ErrorInput(SampleInput(args, kwargs or {}), kind, match)

        yield e((x.tolist(), w), None, TypeError, "input must be a mindspore.Tensor")
        yield e((x.astype(np.int32), w), None, TypeError, "input must be a floating-point")
        yield e((x, w.astype(np.float64)), None, TypeError, "weight must have input's dtype")
        yield e((x[0, 0], w), None, ValueError, r"expected a \d-D \(unbatched\)")
        yield e((x, w[0]), None, ValueError, r"weight must be \d-D")
        yield e((x[:, :3], w), None, ValueError, "input must have 4 channels")
        yield e((x, w, np.ones(5, np.float32)), None, ValueError, "bias must be 1-D with")
        yield e((x, w), {"stride": 0}, ValueError, "stride must be positive")
        yield e((x, w), {"dilation": (1,) * (nd + 1)}, ValueError, "dilation must have")
        yield e((x, w), {"groups": 3 if transposed else 4}, ValueError, "divisible by groups")
        yield e((x, w), {"padding": 1.5}, TypeError, "padding must be an int or a tuple")
        if transposed:
            yield e(
                (x, w),
                {"stride": 2, "output_padding": 2},
                ValueError,
                "output_padding must be smaller than either stride or dilation",
            )
            yield e((x, w), {"padding": 4}, ValueError, "output size per channel would be")
        else:
            yield e((x, w), {"padding": -1}, ValueError, "padding must be non-negative")
            yield e((x, w), {"padding": "full"}, ValueError, "padding must be 'same', 'valid'")
            yield e(
                (x, w),
                {"padding": "same", "stride": 2},
                ValueError,
                "padding='same' is not supported for strided",
            )
            yield e((x, w), {"dilation": 3}, ValueError, "smaller than the dilated kernel")

    errors.__name__ = f"{fn.__name__}_errors"
    return errors


def _bench_conv_t() -> SampleInput:
    rng = np.random.default_rng(0)
    x = normal(rng, (8, 64, 32, 32), "float32")
    w = normal(rng, (64, 32, 4, 4), "float32", 0.05)
    return SampleInput(
        (x, w, normal(rng, (32,), "float32")),
        {"stride": 2, "padding": 1},
        name="8x64x32x32 -> 32 channels, k=4, s=2, p=1 float32",
    )


def _bench_conv(nd: int) -> Callable[[], SampleInput]:
    def bench() -> SampleInput:
        rng = np.random.default_rng(0)
        sp = ((1024,), (32, 32), (8, 16, 16))[nd - 1]
        x = normal(rng, (8, 64) + sp, "float32")
        w = normal(rng, (64, 64) + (3,) * nd, "float32", 0.05)
        return SampleInput(
            (x, w, normal(rng, (64,), "float32")),
            {"padding": 1},
            name=f"8x64x{'x'.join(map(str, sp))}, 64 channels, k=3 float32",
        )

    return bench


# ----------------------------------------------------------------------------- Cells


def _torch_cell(name: str) -> Callable[..., Any]:
    """PyTorch's module ``torch.nn.<name>`` with the parameters ``weight_init``/``bias_init``
    (NumPy arrays: mscompat's keyword-only extension gives both sides the same values)."""

    def build(**init: Any) -> Any:
        import torch

        weight, bias = init.pop("weight_init"), init.pop("bias_init", None)
        init.pop("dtype", None)
        module = getattr(torch.nn, name)(**init).double()
        with torch.no_grad():
            module.weight.copy_(torch.from_numpy(np.asarray(weight, np.float64)))
            if bias is not None:
                module.bias.copy_(torch.from_numpy(np.asarray(bias, np.float64)))
        module.float()
        return module

    return build


def _cell_samples(nd: int, transposed: bool) -> Any:
    def samples(dtype: str, rng: np.random.Generator) -> Iterator[SampleInput]:
        sp = (5, 4, 3)[:nd]
        x = normal(rng, (2, 4) + sp, dtype)
        k = (3,) + (2,) * (nd - 1)
        if transposed:
            w = normal(rng, (4, 3) + k, dtype)
            init = {
                "in_channels": 4,
                "out_channels": 6,
                "kernel_size": k,
                "stride": 2,
                "padding": 1,
                "groups": 2,
                "weight_init": w,
                "bias_init": normal(rng, (6,), dtype),
            }
            if nd != 2:
                yield SampleInput((x,), init_kwargs=init, name="groups=2, stride 2")
                return
            # PyTorch's output_size: one more than the smallest (output_padding 1)
            size = tuple(2 * (s - 1) - 2 + k[i] + 1 for i, s in enumerate(sp))
            yield SampleInput((x, size), init_kwargs=init, name="output_size")
        else:
            w = normal(rng, (6, 2) + k, dtype)
            init = {
                "in_channels": 4,
                "out_channels": 6,
                "kernel_size": k,
                "padding": "same",
                "groups": 2,
                "weight_init": w,
                "bias_init": normal(rng, (6,), dtype),
            }
            # each padding_mode once: zeros ('same') and reflect in 2-D, circular in 1-D,
            # replicate in 3-D
            if nd == 2:
                yield SampleInput((x,), init_kwargs=init, name="'same', groups=2")
            mode = {1: "circular", 2: "reflect", 3: "replicate"}[nd]
            yield SampleInput(
                (x,),
                init_kwargs={**init, "padding": 1, "padding_mode": mode, "stride": 2},
                name=f"padding_mode={mode!r}",
            )

    samples.__name__ = f"{'conv_transpose' if transposed else 'conv'}{nd}d_cell_samples"
    return samples


def _cell_errors(cell: Any, transposed: bool) -> Callable[[], Iterator[ErrorInput]]:
    def errors() -> Iterator[ErrorInput]:
        x = np.ones((2, 4) + (5,) * cell._nd, np.float32)
        base = {"in_channels": 4, "out_channels": 6, "kernel_size": 3}

        def e(init: dict, kind: Any, match: str) -> ErrorInput:
            return ErrorInput(SampleInput((x,), init_kwargs={**base, **init}), kind, match)

        yield e({"groups": 3}, ValueError, "in_channels must be divisible by groups")
        yield e({"groups": 4}, ValueError, "out_channels must be divisible by groups")
        yield e({"padding_mode": "mirror"}, ValueError, "padding_mode must be one of")
        yield e({"kernel_size": 0}, ValueError, "kernel_size must be positive")
        if transposed:
            yield e({"padding_mode": "reflect"}, ValueError, 'only "zeros" padding mode')
        else:
            yield e({"padding": "same", "stride": 2}, ValueError, "not supported for strided")
            yield e({"padding": 5, "padding_mode": "reflect"}, ValueError, "does not fit")

    errors.__name__ = f"{cell.__name__}_errors"
    return errors


def _entries() -> List[OpInfo]:
    out: List[OpInfo] = []
    fns = ((conv1d, conv2d, conv3d), (conv_transpose1d, conv_transpose2d, conv_transpose3d))
    cells = ((Conv1d, Conv2d, Conv3d), (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d))
    for transposed in (False, True):
        for nd in (1, 2, 3):
            fn, cell = fns[transposed][nd - 1], cells[transposed][nd - 1]
            path = f"torch.nn.functional.{fn.__name__}"
            gen = _conv_t_samples(nd) if transposed else _conv_samples(nd)
            # 1-D: float32 only (its code is the 2-D code's, checked in every dtype)
            keep = (2 if transposed else 1) if nd == 2 else 0 if nd == 1 else 1
            # the composite, the GPU/Ascend fallback, runs every sample of the 3-D entries (the
            # only backend there on CPU), conv2d's float64 ones and every conv_transpose2d one
            # (it takes the output_padding >= stride calls on CPU)
            only = (
                ({} if transposed else {"composite": ("float64",)})
                if nd == 2
                else {"composite": ()}
                if nd == 1
                else {}
            )
            tol = (_F16_GRAD,) if nd == 3 and not transposed else ()
            bench = _bench_conv_t if (transposed and nd == 2) else None
            out.append(
                OpInfo(
                    name=f"layers.{fn.__name__}",
                    op=fn,
                    ref=torch_ref(path),
                    mirrors=path,
                    torch_apis=(path,),
                    sample_inputs=every_dtype_first(gen, keep=keep),
                    backend_dtypes=only,
                    tolerance_overrides=tol,
                    error_inputs=_errors(fn, nd, transposed),
                    grad_argnums=(0, 1),
                    dispatch_op=f"layers.{fn.__name__}",
                    dtypes=("float32",) if nd == 1 else ("float16", "float32", "float64"),
                    bench_input=bench or (None if transposed else _bench_conv(nd)),
                    known=_KNOWN if (transposed and nd == 3) else (),
                    torch_opinfo=(
                        TorchOpInfo(
                            f"nn.functional.{fn.__name__}",
                            stride=3,
                            skip_dtypes={
                                "float16": "float16: the op database's samples",
                                "float64": "float64: the op database's samples",
                                "int64": "integer convolutions are not supported (float only)",
                            },
                        ),
                    ),
                )
            )
            out.append(
                OpInfo(
                    name=f"layers.{cell.__name__}",
                    op=cell,
                    ref=_torch_cell(cell.__name__),
                    mirrors=f"torch.nn.{cell.__name__}",
                    torch_apis=(f"torch.nn.{cell.__name__}",),
                    sample_inputs=_cell_samples(nd, transposed),
                    error_inputs=_cell_errors(cell, transposed),
                    dtypes=("float32",),
                    is_cell=True,
                )
            )
    return out


OPS: List[OpInfo] = _entries()
