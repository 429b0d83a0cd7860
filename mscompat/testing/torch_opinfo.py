"""PyTorch's own OpInfo sample inputs, run through mscompat and compared with PyTorch.

PyTorch describes every operator it tests with an ``OpInfo`` in
``torch.testing._internal.common_methods_invocations.op_db``; each yields sample inputs
(``SampleInput(input, args, kwargs)``) covering the operator's argument space. The op database
entries name the OpInfos their op must pass (``OpInfo.torch_opinfo``, with an adapter for an
ATen signature and a stride for very long sample lists) and the samples known to differ
(``OpInfo.known``); this module runs every sample through
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

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

import numpy as np

from mscompat.testing.db import OP_DB
from mscompat.testing.db.shape_grid_sample import grid_sampler_2d, grid_sampler_3d
from mscompat.testing.db.shape_interpolate import upsample_bilinear2d_aa
from mscompat.testing.opinfo import OpInfo, TorchOpInfo
from mscompat.testing.parity import ParityReport, assert_parity

__all__ = [
    "TORCH_OPINFO_MAP",
    "TorchCase",
    "check_case",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "supported_dtypes",
    "torch_opinfo_cases",
    "torch_opinfos",
    "upsample_bilinear2d_aa",
]


def torch_opinfos() -> Dict[str, Tuple[OpInfo, TorchOpInfo]]:
    """PyTorch OpInfo key (``name`` or ``name.variant``) -> the op database entry that names it
    in its ``torch_opinfo`` and that record (adapter, stride, dtypes not run)."""
    found: Dict[str, Tuple[OpInfo, TorchOpInfo]] = {}
    for info in OP_DB:
        if info.backend:
            continue
        for t in info.torch_opinfo:
            if t.name in found and found[t.name][0] is not info:
                raise ValueError(
                    f"PyTorch OpInfo {t.name!r} is claimed by {found[t.name][0].full_name} "
                    f"and {info.full_name}"
                )
            found[t.name] = (info, t)
    return found


#: PyTorch OpInfo key (``name`` or ``name.variant``) -> the op database entry whose op (or
#: ATen adapter) runs its samples; read from the entries' ``torch_opinfo``.
TORCH_OPINFO_MAP: Dict[str, str] = {key: info.name for key, (info, _) in torch_opinfos().items()}

_DTYPES = ("float16", "float32", "float64", "int32", "int64")


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
            function names (``"msort"``); default all.
        dtypes: NumPy dtype names to generate, intersected with the dtypes PyTorch supports.
        reference: use ``reference_inputs`` (a superset of ``sample_inputs``) where defined.
    """
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    wanted = set(ops) if ops is not None else None
    mapped = torch_opinfos()
    for info in op_db:
        key = _opinfo_key(info)
        if key not in mapped:
            continue
        entry, record = mapped[key]
        short = entry.name.rpartition(".")[2]
        if wanted is not None and key not in wanted and short not in wanted:
            continue
        ms_fn = record.adapter or entry.op
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
