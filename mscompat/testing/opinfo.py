"""The op database's record types, in the spirit of PyTorch's ``OpInfo``.

An :class:`OpInfo` names the mscompat callable and its PyTorch reference, generates seeded
sample inputs (edge cases included) and error inputs, and states supported dtypes and any
tolerance overrides with their reason. The generic tests in ``tests/test_op_db.py`` and the
``mscompat parity`` command iterate over :data:`mscompat.testing.OP_DB`; adding an entry runs
every check for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Tuple, Type

import numpy as np

from mscompat.testing.tolerances import Tolerance, default_tolerance

__all__ = ["ErrorInput", "OpInfo", "SampleInput", "ToleranceOverride"]


@dataclass(frozen=True)
class SampleInput:
    """One call: NumPy arrays in ``args``/``kwargs`` become Tensors on each side.

    Attributes:
        args: positional inputs.
        kwargs: keyword inputs (never differentiated).
        init_kwargs: constructor arguments, for Cell entries (``OpInfo.is_cell``).
        name: a short description shown in test ids and reports.
    """

    args: Tuple[Any, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    init_kwargs: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""

    def describe(self) -> str:
        return self.name or ",".join(f"{getattr(a, 'shape', a)}" for a in self.args)


@dataclass(frozen=True)
class ErrorInput:
    """A call that must raise ``error_type`` with a message matching the regex ``match``."""

    sample: SampleInput
    error_type: Type[Exception]
    match: str


@dataclass(frozen=True)
class ToleranceOverride:
    """A looser (or tighter) tolerance for one dtype and kind, with the reason why."""

    dtype: str
    kind: str
    tolerance: Tolerance
    reason: str


SampleFn = Callable[[str, np.random.Generator], Iterable[SampleInput]]


def _no_errors() -> Iterable[ErrorInput]:
    return ()


@dataclass
class OpInfo:
    """One entry of the op database.

    Attributes:
        name: public name, e.g. ``"losses.sigmoid_focal_loss"``.
        op: the mscompat function, or Cell class when ``is_cell``.
        ref: the PyTorch reference with the same call signature; for a Cell, a factory taking
            the ``init_kwargs`` and returning the callable.
        sample_inputs: ``(dtype_name, rng) -> SampleInput...``, edge cases included.
        mirrors: the PyTorch/MMDetection API this entry mirrors (docs and reports).
        torch_apis: fully qualified PyTorch-side names this entry is a drop-in for (e.g.
            ``"torch.sort"``, ``"torch.Tensor.sort"``, ``"torch.nn.Flatten"``); ``mscompat scan``
            maps call sites to mscompat through them.
        error_inputs: ``() -> ErrorInput...``.
        dtypes: NumPy dtype names the op supports.
        grad_argnums: positional inputs to differentiate; empty if not differentiable.
        supports_graph: also run under ``ms.jit``.
        is_cell: ``op`` is a Cell class constructed with each sample's ``init_kwargs``.
        tolerance_overrides: exceptions to the tolerance table, each with a reason.
        variant: a label for a second entry of the same op (e.g. a forced backend).
        dispatch_op: the op's name in :mod:`mscompat.custom_ops.registry`, when its
            implementation is chosen there; the database then holds one variant per backend.
        backend: for a variant, the backend forced while it runs.
        bench_input: ``() -> SampleInput`` of about 1e6 float32 elements for ``mscompat bench``.
    """

    name: str
    op: Callable[..., Any]
    ref: Callable[..., Any]
    sample_inputs: SampleFn
    mirrors: str = ""
    torch_apis: Tuple[str, ...] = ()
    error_inputs: Callable[[], Iterable[ErrorInput]] = _no_errors
    dtypes: Tuple[str, ...] = ("float16", "float32", "float64")
    grad_argnums: Tuple[int, ...] = (0,)
    supports_graph: bool = True
    is_cell: bool = False
    tolerance_overrides: Sequence[ToleranceOverride] = ()
    variant: str = ""
    dispatch_op: str = ""
    backend: str = ""
    bench_input: Optional[Callable[[], SampleInput]] = None

    @property
    def import_line(self) -> str:
        """``from mscompat.<package> import <name>`` for this entry."""
        package, _, name = self.name.rpartition(".")
        return f"from mscompat.{package} import {name}"

    @property
    def full_name(self) -> str:
        return f"{self.name}[{self.variant}]" if self.variant else self.name

    def tolerance(self, dtype: str, kind: str) -> Tolerance:
        for o in self.tolerance_overrides:
            if o.dtype == dtype and o.kind == kind:
                return o.tolerance
        return default_tolerance(dtype, kind)

    def samples(self, dtype: str, seed: int = 0) -> Tuple[SampleInput, ...]:
        """The seeded samples for ``dtype`` (the same arrays on every call)."""
        return tuple(self.sample_inputs(dtype, np.random.default_rng(seed)))

    def ms_callable(self, sample: SampleInput) -> Callable[..., Any]:
        """The MindSpore callable for ``sample`` (a Cell is constructed here, outside jit)."""
        if self.is_cell:
            init = {k: _init_value(v) for k, v in sample.init_kwargs.items()}
            return self.op(**init)
        return self.op

    def torch_callable(self, sample: SampleInput) -> Callable[..., Any]:
        """The PyTorch callable for ``sample``."""
        if self.is_cell:
            return self.ref(**dict(sample.init_kwargs))
        return self.ref


def _init_value(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        import mindspore as ms

        return ms.Tensor(v)
    return v
