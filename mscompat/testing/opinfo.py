"""The op database's record types, in the spirit of PyTorch's ``OpInfo``.

An :class:`OpInfo` names the mscompat callable and its PyTorch reference, generates seeded
sample inputs (edge cases included), error inputs and reference inputs (ties, NaN, large exact
cases), states supported dtypes (per backend where a backend covers fewer), tolerance overrides
with their reason (scoped to a backend where only one needs them), the PyTorch OpInfos whose own
samples it must pass and the ones known to differ. Every per-op fact lives on its entry: the
generic tests in ``tests/test_op_db.py`` and ``tests/test_torch_opinfo.py`` and the
``mscompat parity`` command iterate over :data:`mscompat.testing.OP_DB`; adding an entry runs
every check for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Tuple, Type

import numpy as np

from mscompat.testing.tolerances import Tolerance, default_tolerance

__all__ = [
    "ErrorInput",
    "KnownDifference",
    "OpInfo",
    "ReferenceInput",
    "SampleInput",
    "ToleranceOverride",
    "TorchOpInfo",
]


@dataclass(frozen=True)
class SampleInput:
    """One call: NumPy arrays in ``args``/``kwargs`` become Tensors on each side.

    Attributes:
        args: positional inputs.
        kwargs: keyword inputs (never differentiated).
        init_kwargs: constructor arguments, for Cell entries (``OpInfo.is_cell``).
        name: a short description shown in test ids and reports.
        params: parameter name -> NumPy array set on both the Cell and the PyTorch module
            after construction (Cells whose initialisation is random: ``Linear``...).
    """

    args: Tuple[Any, ...]
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    init_kwargs: Mapping[str, Any] = field(default_factory=dict)
    name: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        return self.name or ",".join(f"{getattr(a, 'shape', a)}" for a in self.args)


@dataclass(frozen=True)
class ErrorInput:
    """A call that must raise ``error_type`` with a message matching the regex ``match``."""

    sample: SampleInput
    error_type: Type[Exception]
    match: str


_EXACT = Tolerance(atol=0.0, rtol=0.0)


@dataclass(frozen=True)
class ReferenceInput:
    """An extra input checked against PyTorch beyond the seeded samples: ties, NaN, large or
    bit-exact cases (PyTorch's ``reference_inputs``).

    Attributes:
        sample: the call.
        backends: the backends it is checked on (each one forced, through the entry's backend
            variants); empty: the backend the plain entry chooses.
        modes: ``'pynative'`` and/or ``'graph'``.
        grad: also compare the gradients of the entry's ``grad_argnums``.
        tolerances: per compared array (``"output[0]"``, ``"grad[arg 1]"``), a tolerance other
            than the default, which is exact: same dtype, NaN and inf in the same places, and
            equal values (bit-identical up to the sign of zero).
    """

    sample: SampleInput
    backends: Tuple[str, ...] = ()
    modes: Tuple[str, ...] = ("pynative",)
    grad: bool = False
    tolerances: Mapping[str, Tolerance] = field(default_factory=dict)

    def tolerance(self, label: str) -> Tolerance:
        return self.tolerances.get(label, _EXACT)


@dataclass(frozen=True)
class ToleranceOverride:
    """A looser (or tighter) tolerance for one dtype and kind, with the reason why; ``backend``
    scopes it to one backend variant (empty: every backend)."""

    dtype: str
    kind: str
    tolerance: Tolerance
    reason: str
    backend: str = ""


@dataclass(frozen=True)
class TorchOpInfo:
    """One of PyTorch's own OpInfos (``torch.testing._internal.common_methods_invocations``)
    whose sample inputs the entry's op must pass (``tests/test_torch_opinfo.py``).

    Attributes:
        name: PyTorch's OpInfo ``name``, or ``name.variant_test_name`` for a variant.
        adapter: PyTorch's call signature as a call of ours (an ATen op's integer codes, say);
            None: the entry's ``op``.
        stride: run every ``stride``-th sample (PyTorch generates hundreds for some ops).
        skip_dtypes: dtype -> why PyTorch's samples of that dtype are not run at all.
    """

    name: str
    adapter: Optional[Callable[..., Any]] = None
    stride: int = 1
    skip_dtypes: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class KnownDifference:
    """PyTorch OpInfo samples known to differ from mscompat, with the reason. They are expected
    to fail, so a fix shows up as an unexpected pass."""

    opinfo: str
    dtype: str
    indices: Tuple[int, ...]
    reason: str


SampleFn = Callable[[str, np.random.Generator], Iterable[SampleInput]]


def _no_errors() -> Iterable[ErrorInput]:
    return ()


def _no_references() -> Iterable[ReferenceInput]:
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
        backend_dtypes: backend -> the dtypes its variant runs, for a backend that covers fewer
            than ``dtypes`` (e.g. a kernel built for float32/float64 only).
        references: ``() -> ReferenceInput...``: ties, NaN, large exact cases, each checked on
            the backends it names.
        torch_opinfo: PyTorch's own OpInfos this entry must pass.
        known: samples of those OpInfos known to differ, each with its reason.

    A Cell is tied to its function by its own ``is_cell`` entry: the Cell's constructor
    arguments, their defaults and per-call overrides are logic the function's samples do not
    reach, so every public Cell has an entry that builds it from ``init_kwargs`` and compares
    it with the PyTorch module (its docstring's "See :func:`...`" names the function entry).
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
    backend_dtypes: Mapping[str, Tuple[str, ...]] = field(default_factory=dict)
    references: Callable[[], Iterable[ReferenceInput]] = _no_references
    torch_opinfo: Tuple[TorchOpInfo, ...] = ()
    known: Tuple[KnownDifference, ...] = ()

    @property
    def import_line(self) -> str:
        """``from mscompat.<package> import <name>`` for this entry."""
        package, _, name = self.name.rpartition(".")
        return f"from mscompat.{package} import {name}"

    @property
    def full_name(self) -> str:
        return f"{self.name}[{self.variant}]" if self.variant else self.name

    def tolerance(self, dtype: str, kind: str) -> Tolerance:
        """The tolerance for ``dtype`` and ``kind``: an override for this backend, else one for
        every backend, else the table's."""
        found = [
            o
            for o in self.tolerance_overrides
            if o.dtype == dtype and o.kind == kind and o.backend in ("", self.backend)
        ]
        for o in sorted(found, key=lambda o: not o.backend):
            return o.tolerance
        return default_tolerance(dtype, kind)

    def known_difference(self, opinfo: str, dtype: str, index: int) -> Optional[str]:
        """Why PyTorch OpInfo ``opinfo``'s sample ``index`` in ``dtype`` differs (None: it
        must pass)."""
        for k in self.known:
            if k.opinfo == opinfo and k.dtype == dtype and index in k.indices:
                return k.reason
        return None

    def samples(self, dtype: str, seed: int = 0) -> Tuple[SampleInput, ...]:
        """The seeded samples for ``dtype`` (the same arrays on every call)."""
        return tuple(self.sample_inputs(dtype, np.random.default_rng(seed)))

    def ms_callable(self, sample: SampleInput) -> Callable[..., Any]:
        """The MindSpore callable for ``sample`` (a Cell is constructed here, outside jit)."""
        if self.is_cell:
            init = {k: _init_value(v) for k, v in sample.init_kwargs.items()}
            cell = self.op(**init)
            for name, value in sample.params.items():
                getattr(cell, name).set_data(_init_value(value))
            return cell
        return self.op

    def torch_callable(self, sample: SampleInput) -> Callable[..., Any]:
        """The PyTorch callable for ``sample``."""
        if self.is_cell:
            module = self.ref(**dict(sample.init_kwargs))
            if sample.params:
                import torch

                with torch.no_grad():
                    for name, value in sample.params.items():
                        getattr(module, name).copy_(torch.from_numpy(np.array(value)))
            return module
        return self.ref


def _init_value(v: Any) -> Any:
    if isinstance(v, np.ndarray):
        import mindspore as ms

        return ms.Tensor(v)
    return v
