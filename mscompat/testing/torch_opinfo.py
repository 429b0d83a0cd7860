"""PyTorch's own OpInfo sample inputs, run through mscompat and compared with PyTorch.

PyTorch describes every operator it tests with an ``OpInfo`` in
``torch.testing._internal.common_methods_invocations.op_db``; each yields sample inputs
(``SampleInput(input, args, kwargs)``) covering the operator's argument space. This module maps
those OpInfos to the mscompat functions that mirror them and runs every sample through
:func:`~mscompat.testing.assert_parity`, so our ops are checked on PyTorch's inputs, not only
on the ones we chose. ``torch.testing._internal`` needs the ``expecttest`` package (in the
``test`` extra).

Example:
    >>> from mscompat.testing.torch_opinfo import torch_opinfo_cases
    >>> case = next(iter(torch_opinfo_cases(["msort"], dtypes=["float32"])))
    >>> case.op, case.dtype
    ('msort', 'float32')
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from mscompat.custom_ops.registry import call
from mscompat.shape import grid_sample, interpolate
from mscompat.testing.parity import ParityReport, assert_parity

__all__ = [
    "TORCH_OPINFO_MAP",
    "TorchCase",
    "check_case",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "supported_dtypes",
    "torch_opinfo_cases",
    "upsample_bilinear2d_aa",
]

_INTERPOLATE_MODES = (
    "nearest",
    "nearest-exact",
    "linear",
    "bilinear",
    "bicubic",
    "trilinear",
    "area",
)

#: PyTorch OpInfo ``name`` (``name.variant`` for a variant) -> ``module:function`` in mscompat.
TORCH_OPINFO_MAP: Dict[str, str] = {
    "argsort": "mscompat.shape:argsort",
    "sort": "mscompat.shape:sort",
    "msort": "mscompat.shape:msort",
    "topk": "mscompat.shape:topk",
    "kthvalue": "mscompat.shape:kthvalue",
    "median": "mscompat.shape:median",
    "mode": "mscompat.shape:mode",
    "squeeze": "mscompat.shape:squeeze",
    "squeeze.multiple": "mscompat.shape:squeeze",
    "squeeze_copy": "mscompat.shape:squeeze",
    "unsqueeze": "mscompat.shape:unsqueeze",
    "unsqueeze_copy": "mscompat.shape:unsqueeze",
    "flatten": "mscompat.shape:flatten",
    "unflatten": "mscompat.shape:unflatten",
    "nn.functional.unfold": "mscompat.shape:unfold",
    "nn.functional.grid_sample": "mscompat.shape:grid_sample",
    # ATen ops behind the functional ones, through the adapters below
    "grid_sampler_2d": "mscompat.testing.torch_opinfo:grid_sampler_2d",
    "grid_sampler_3d": "mscompat.testing.torch_opinfo:grid_sampler_3d",
    "_upsample_bilinear2d_aa": "mscompat.testing.torch_opinfo:upsample_bilinear2d_aa",
    "nn.functional.upsample_nearest": "mscompat.shape:upsample_nearest",
    "nn.functional.upsample_bilinear": "mscompat.shape:upsample_bilinear",
    **{
        f"nn.functional.interpolate.{mode}": "mscompat.shape:interpolate"
        for mode in _INTERPOLATE_MODES
    },
    **{
        f"nn.functional.{kind}_pool{d}d": f"mscompat.shape:{kind}_pool{d}d"
        for kind in ("adaptive_avg", "adaptive_max", "max")
        for d in (1, 2, 3)
    },
    **{f"nn.functional.max_unpool{d}d": f"mscompat.shape:max_unpool{d}d" for d in (1, 2, 3)},
    **{f"nn.functional.max_unpool{d}d.grad": f"mscompat.shape:max_unpool{d}d" for d in (1, 2, 3)},
}

_DTYPES = ("float16", "float32", "float64", "int32", "int64")

_GRID_MODES = ("bilinear", "nearest", "bicubic")
_GRID_PADDINGS = ("zeros", "border", "reflection")


def grid_sampler_2d(
    input: Any,  # noqa: A002 - PyTorch's argument name
    grid: Any,
    interpolation_mode: int,
    padding_mode: int,
    align_corners: bool,
) -> Any:
    """``torch.grid_sampler_2d`` (integer mode and padding codes) as
    :func:`mscompat.shape.grid_sample`."""
    mode = _GRID_MODES[interpolation_mode]
    return grid_sample(input, grid, mode, _GRID_PADDINGS[padding_mode], align_corners)


#: ``torch.grid_sampler_3d`` (5-D input): the same codes; ``grid_sample`` tells the ranks apart.
grid_sampler_3d = grid_sampler_2d


def upsample_bilinear2d_aa(
    input: Any,  # noqa: A002 - PyTorch's argument name
    output_size: Optional[Sequence[int]] = None,
    align_corners: bool = False,
    scale_factors: Optional[Sequence[float]] = None,
    scales_h: Optional[float] = None,
    scales_w: Optional[float] = None,
) -> Any:
    """``aten._upsample_bilinear2d_aa`` (both overloads) as :func:`mscompat.shape.interpolate`
    with ``mode="bilinear", antialias=True``.

    ATen takes an output size together with the scales its coordinates use (which
    ``interpolate`` cannot express when both are given): that case goes to the dispatched
    primitive directly.
    """
    if output_size is None:
        return interpolate(
            input,
            scale_factor=tuple(scale_factors or ()),
            mode="bilinear",
            align_corners=align_corners,
            antialias=True,
        )
    if scales_h is None and scales_w is None:
        return interpolate(
            input,
            size=tuple(output_size),
            mode="bilinear",
            align_corners=align_corners,
            antialias=True,
        )
    sizes = (int(output_size[0]), int(output_size[1]))
    scales = (scales_h, scales_w)
    return call("shape.interpolate", input, sizes, scales, "bilinear", bool(align_corners), True)


@dataclass
class TorchCase:
    """One PyTorch sample input for one mscompat op, as NumPy arrays."""

    op: str
    opinfo: str
    dtype: str
    index: int
    args: List[Any]
    kwargs: Dict[str, Any]
    torch_fn: Callable[..., Any]
    ms_fn: Callable[..., Any]
    differentiable: bool
    grad_argnums: List[int] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.opinfo}-{self.dtype}-{self.index}"

    def describe(self) -> str:
        def show(v: Any) -> str:
            if isinstance(v, np.ndarray):
                return f"array{list(v.shape)}:{v.dtype}"
            return repr(v)

        parts = [show(a) for a in self.args] + [f"{k}={show(v)}" for k, v in self.kwargs.items()]
        return f"{self.opinfo}({', '.join(parts)})"


def _opinfo_key(info: Any) -> str:
    return f"{info.name}.{info.variant_test_name}" if info.variant_test_name else info.name


def _resolve(target: str) -> Callable[..., Any]:
    module, name = target.split(":")
    return getattr(importlib.import_module(module), name)


def _convert(value: Any) -> Tuple[Any, bool]:
    """A torch value as NumPy / plain Python; second item: False if it cannot be converted."""
    import torch

    if isinstance(value, torch.Tensor):
        if value.dtype == torch.bfloat16 or value.is_complex():
            return None, False
        return value.detach().cpu().numpy().copy(), True
    if isinstance(value, torch.Size):
        return tuple(value), True
    if isinstance(value, (list, tuple)):
        items = [_convert(v) for v in value]
        if not all(ok for _, ok in items):
            return None, False
        return type(value)(v for v, _ in items), True
    if isinstance(value, (torch.dtype, torch.device, torch.memory_format)):
        return None, False
    return value, True


def supported_dtypes(key: str) -> Tuple[str, ...]:
    """The dtypes PyTorch's OpInfo ``key`` (``name`` or ``name.variant``) supports on CPU."""
    from torch.testing._internal.common_methods_invocations import op_db

    for info in op_db:
        if _opinfo_key(info) == key:
            return tuple(sorted(str(d).replace("torch.", "") for d in info.supported_dtypes("cpu")))
    raise KeyError(f"PyTorch has no OpInfo {key!r}")


def torch_opinfo_cases(
    ops: Optional[Iterable[str]] = None,
    dtypes: Sequence[str] = _DTYPES,
    reference: bool = True,
) -> Iterator[TorchCase]:
    """Yield PyTorch's sample inputs for the mapped ops.

    Args:
        ops: OpInfo keys of :data:`TORCH_OPINFO_MAP` (``name`` or ``name.variant``), or mscompat
            function names; default all.
        dtypes: NumPy dtype names to generate, intersected with the dtypes PyTorch supports.
        reference: use ``reference_inputs`` (a superset of ``sample_inputs``) where defined.
    """
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    wanted = set(ops) if ops is not None else None
    for info in op_db:
        key = _opinfo_key(info)
        target = TORCH_OPINFO_MAP.get(key)
        if target is None:
            continue
        short = target.split(":")[1]
        if wanted is not None and key not in wanted and short not in wanted:
            continue
        ms_fn = _resolve(target)
        supported = {str(d).replace("torch.", "") for d in info.supported_dtypes("cpu")}
        for dtype in dtypes:
            if dtype not in supported:
                continue
            t_dtype = getattr(torch, dtype)
            differentiable = bool(info.supports_autograd) and dtype.startswith("float")
            make = info.reference_inputs if reference else info.sample_inputs
            torch.manual_seed(0)
            for index, sample in enumerate(make("cpu", t_dtype, requires_grad=differentiable)):
                items = [_convert(sample.input)]
                items += [_convert(a) for a in sample.args]
                kw = {k: _convert(v) for k, v in sample.kwargs.items()}
                if not all(ok for _, ok in items) or not all(ok for _, ok in kw.values()):
                    continue
                args = [v for v, _ in items]
                grad_argnums = [
                    i
                    for i, a in enumerate(args)
                    if differentiable and isinstance(a, np.ndarray) and a.dtype.kind == "f"
                ]
                yield TorchCase(
                    op=short,
                    opinfo=key,
                    dtype=dtype,
                    index=index,
                    args=args,
                    kwargs={k: v for k, (v, _) in kw.items()},
                    torch_fn=info.op,
                    ms_fn=ms_fn,
                    differentiable=differentiable,
                    grad_argnums=grad_argnums,
                )


def check_case(case: TorchCase, modes: Sequence[str] = ("pynative",)) -> ParityReport:
    """Run one case through :func:`~mscompat.testing.assert_parity` (raises ``ParityError``)."""
    return assert_parity(
        case.ms_fn,
        case.torch_fn,
        *case.args,
        kwargs=case.kwargs,
        grad=bool(case.grad_argnums),
        grad_argnums=case.grad_argnums,
        modes=modes,
    )
