"""Loading and calling the compiled kernels (``ops.Custom(func_type="aot")``).

Kernels are built when the package is installed (``setup.py``) and shipped inside it; they are
loaded only from this package's own directory, by absolute path, and refused if the file or its
folder is writable by others. A missing build warns once and the op runs its composite
implementation.

A binding module declares its library: a :class:`KernelLibrary` of :class:`Entry` (each entry
point's C name, parameter signature, dtype rows, output shape rule and bprop) and a self-check.
:meth:`KernelLibrary.probe` is the registry probe of the ``aot`` backend: it loads the library
(:func:`kernel_path`), builds every primitive once per device into :attr:`KernelLibrary.kernels`
(the plain dict that code compiled into graphs indexes) and runs the self-check.

Every launch of a custom kernel in PyNative goes through one process-wide lock
(:data:`KERNEL_LOCK`): concurrent launches of the same Custom primitive from several Python
threads gave wrong results in 1-5 % of calls on MindSpore 2.10. In graph mode the primitive is
part of the compiled graph and the lock is not involved; MindSpore's ``ms.jit`` must not be
called from several threads at once (it segfaulted, for plain ops too): hold
:data:`KERNEL_LOCK` around such calls.
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import stat
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import ops
from mindspore.ops import CustomRegOp, DataType, constexpr

__all__ = [
    "COPY_TYPES",
    "FLOATS",
    "HALF_FLOATS",
    "INDEX_TYPES",
    "KERNEL_LOCK",
    "Entry",
    "KernelLibrary",
    "KernelUnavailableError",
    "LockedCustom",
    "constant",
    "expect",
    "kernel_dtype",
    "kernel_path",
    "reg_info",
    "shape_of",
    "warn_once",
    "zeros",
]

#: The dtypes of the kernels that only move elements (im2col, take-along): floats, integers,
#: bool.
COPY_TYPES = (
    DataType.F16_Default,
    DataType.F32_Default,
    DataType.F64_Default,
    DataType.BOOL_Default,
    DataType.I8_Default,
    DataType.U8_Default,
    DataType.I16_Default,
    DataType.I32_Default,
    DataType.I64_Default,
)

#: Process-wide lock serialising custom-kernel launches (re-entrant).
KERNEL_LOCK = threading.RLock()

_HERE = Path(__file__).resolve().parent
_WARNED: Dict[str, bool] = {}


class KernelUnavailableError(RuntimeError):
    """The compiled kernel is not built for this install, or may not be loaded."""


def _unsafe(path: Path) -> Optional[str]:
    for p in (path, path.parent):
        mode = p.stat().st_mode
        if mode & stat.S_IWOTH:
            return f"{p} is writable by others"
    return None


def kernel_path(name: str, device: str = "CPU") -> str:
    """Absolute path of the compiled kernel library ``name`` for ``device``.

    Args:
        name: kernel family, e.g. ``"focal_loss"``.
        device: ``"CPU"`` (g++ build) or ``"GPU"`` (nvcc build).

    Raises:
        KernelUnavailableError: not built, or the file/folder is writable by others.
    """
    suffix = {"CPU": "cpu", "GPU": "cuda"}.get(device)
    if suffix is None:
        raise KernelUnavailableError(f"no compiled kernels for device {device!r}")
    found = sorted(glob.glob(str(_HERE / f"_{name}_{suffix}*.so")))
    if not found:
        hint = (
            "reinstall with a C++ compiler (g++) available"
            if device == "CPU"
            else "reinstall with nvcc on PATH (or MSCOMPAT_BUILD_CUDA=1)"
        )
        raise KernelUnavailableError(
            f"the {device} kernel library for {name!r} was not built with this install of "
            f"mscompat ({_HERE}); {hint}. The composite implementation is used meanwhile."
        )
    path = Path(found[0]).resolve()
    if path.parent != _HERE:
        raise KernelUnavailableError(f"refusing to load {path}: not inside {_HERE}")
    problem = _unsafe(path)
    if problem:
        raise KernelUnavailableError(f"refusing to load {path}: {problem}")
    _pin(str(path))
    return str(path)


_PINNED: Dict[str, Any] = {}


def _pin(path: str) -> None:
    """Keep the library mapped for the life of the process (``RTLD_NODELETE``).

    The CPU kernels share one pool of sleeping helper threads (``cpu/parallel.h``), whose code
    lives in the library that started them. MindSpore closes a Custom op's library when the op
    is freed; the next kernel to wake the pool then ran unmapped code (a segfault in a helper
    thread, seen after a test freed the deformable-convolution ops and NMS used the pool).
    """
    if path in _PINNED:
        return
    try:
        _PINNED[path] = ctypes.CDLL(path, mode=os.RTLD_NOW | os.RTLD_NODELETE)
    except OSError:  # e.g. a CUDA library without the CUDA runtime: its probe reports it
        _PINNED[path] = None


def warn_once(key: str, message: str) -> None:
    """Emit ``message`` as a RuntimeWarning the first time ``key`` is seen in this process."""
    if not _WARNED.get(key):
        _WARNED[key] = True
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def kernel_dtype(x: Any) -> Any:
    """``x`` in a dtype the index kernels take: float16 -> float32 and int8/int16/uint8 ->
    int32 (exact, and ordered as PyTorch orders them: it compares float16 as float)."""
    if x.dtype == ms.float16:
        return x.astype(ms.float32)
    if x.dtype == ms.int8 or x.dtype == ms.int16 or x.dtype == ms.uint8:
        return x.astype(ms.int32)
    return x


class LockedCustom(ops.Custom):
    """``ops.Custom`` whose PyNative launches hold :data:`KERNEL_LOCK`.

    In graph mode the primitive is compiled into the graph and ``__call__`` is not used.
    """

    def __call__(self, *args: Any) -> Any:
        with KERNEL_LOCK:
            return super().__call__(*args)


# ------------------------------------------------------------------------------ declaring kernels

#: float32, float64.
FLOATS = (DataType.F32_Default, DataType.F64_Default)
#: float16, float32, float64.
HALF_FLOATS = (DataType.F16_Default, *FLOATS)
#: The dtypes the index kernels take (see :func:`kernel_dtype`).
INDEX_TYPES = (*FLOATS, DataType.I32_Default, DataType.I64_Default)

# The fixed dtypes a signature may name: (registration dtype, MindSpore dtype).
_FIXED = {
    "i64": (DataType.I64_Default, ms.int64),
    "i32": (DataType.I32_Default, ms.int32),
    "i8": (DataType.I8_Default, ms.int8),
    "f32": (DataType.F32_Default, ms.float32),
    "f64": (DataType.F64_Default, ms.float64),
    "bool": (DataType.BOOL_Default, ms.bool_),
}
_VARIABLES = ("T", "U")


def _parse(signature: str) -> Tuple[List[Tuple[str, str]], List[Tuple[str, str]]]:
    """``"x t:i64 -> y"`` -> ([("x", "T"), ("t", "i64")], [("y", "T")])."""
    inputs, arrow, outputs = signature.partition("->")
    parsed = []
    for part in (inputs, outputs):
        params = []
        for token in part.split():
            name, _, kind = token.partition(":")
            if (kind or "T") not in _VARIABLES and kind not in _FIXED:
                raise ValueError(f"unknown dtype {kind!r} in kernel signature {signature!r}")
            params.append((name, kind or "T"))
        parsed.append(params)
    if not arrow or not parsed[1]:
        raise ValueError(f"kernel signature {signature!r} needs '->' and at least one output")
    unbound = {k for _, k in parsed[1] if k in _VARIABLES} - {k for _, k in parsed[0]}
    if unbound:
        raise ValueError(f"kernel signature {signature!r}: no input of dtype {sorted(unbound)}")
    return parsed[0], parsed[1]


def reg_info(op_name: str, signature: str, types: Sequence[Any], target: str) -> Any:
    """The ``CustomRegOp`` registration of a kernel with ``signature`` (see :class:`Entry`):
    one dtype-format row per item of ``types`` (a DataType for ``T``, or a ``(T, U)`` pair)."""
    inputs, outputs = _parse(signature)
    reg = CustomRegOp(op_name)
    for i, (name, _) in enumerate(inputs):
        reg = reg.input(i, name)
    for i, (name, _) in enumerate(outputs):
        reg = reg.output(i, name)
    for row in types:
        bound = dict(zip(_VARIABLES, (row,) if isinstance(row[0], str) else row))
        reg = reg.dtype_format(*[bound.get(k) or _FIXED[k][0] for _, k in inputs + outputs])
    return reg.target(target).get_op_info()


def _signature_dtype(signature: str) -> Callable[..., Any]:
    """``out_dtype`` read off a signature: a ``T``/``U`` output has the dtype of the first input
    of that kind, a fixed one its dtype."""
    inputs, outputs = _parse(signature)
    first: Dict[str, int] = {}
    for i, (_, kind) in enumerate(inputs):
        first.setdefault(kind, i)
    picks = [first[k] if k in _VARIABLES else _FIXED[k][1] for _, k in outputs]

    def out_dtype(*dtypes: Any) -> Any:
        got = tuple(dtypes[p] if isinstance(p, int) else p for p in picks)
        return got[0] if len(got) == 1 else got

    return out_dtype


def shape_of(*at: int) -> Callable[..., Any]:
    """``out_shape`` of a kernel whose output has the shape of input ``at`` (several indices:
    one output each)."""

    def out_shape(*shapes: Any) -> Any:
        got = tuple(list(shapes[i]) for i in at)
        return got[0] if len(got) == 1 else got

    return out_shape


@constexpr
def constant(shape: Tuple[int, ...], value: Any, dtype: Any) -> Any:
    """A Tensor of ``shape`` filled with ``value``, built at compile time under ``ms.jit`` (a
    kernel's constant input, e.g. the weights of "no weight": no op in the graph)."""
    return ms.Tensor(np.full(shape, value, ms.dtype_to_nptype(dtype)))


def zeros(*xs: Any) -> Tuple[Any, ...]:
    """``zeros_like`` of each argument: the gradients of kernel inputs that have none (usable
    in a bprop compiled into a graph)."""
    return tuple([ops.zeros_like(x) for x in xs])


# bprops of kernels that are not differentiated (index outputs; backward kernels, whose second
# derivatives are not provided), by number of inputs. MindSpore compiles a bprop into graphs from
# its source and needs its parameters spelled out: no *args.
def _no_grad1(a: Any, out: Any, dout: Any) -> Any:
    return zeros(a)


def _no_grad2(a: Any, b: Any, out: Any, dout: Any) -> Any:
    return zeros(a, b)


def _no_grad3(a: Any, b: Any, c: Any, out: Any, dout: Any) -> Any:
    return zeros(a, b, c)


def _no_grad4(a: Any, b: Any, c: Any, d: Any, out: Any, dout: Any) -> Any:
    return zeros(a, b, c, d)


def _no_grad5(a: Any, b: Any, c: Any, d: Any, e: Any, out: Any, dout: Any) -> Any:
    return zeros(a, b, c, d, e)


def _no_grad6(a: Any, b: Any, c: Any, d: Any, e: Any, f: Any, out: Any, dout: Any) -> Any:
    return zeros(a, b, c, d, e, f)


def _no_grad9(
    a: Any, b: Any, c: Any, d: Any, e: Any, f: Any, g: Any, h: Any, i: Any, out: Any, dout: Any
) -> Any:
    return zeros(a, b, c, d, e, f, g, h, i)


_NO_GRAD = {
    1: _no_grad1,
    2: _no_grad2,
    3: _no_grad3,
    4: _no_grad4,
    5: _no_grad5,
    6: _no_grad6,
    9: _no_grad9,
}


@dataclass(frozen=True)
class Entry:
    """One entry point of a kernel library, declared.

    Attributes:
        name: the exported C function (``extern "C" int Name(...)``).
        signature: the kernel's parameters in order, inputs ``->`` outputs, each ``name`` or
            ``name:kind``: kind ``T`` (the default) and ``U`` take their dtypes from each row of
            ``types``; ``i64``, ``i32``, ``i8``, ``f32``, ``f64`` and ``bool`` are fixed. Example:
            ``"x t0:i64 dims:i8 -> values indices:i64"``.
        types: the dtype rows the kernel accepts: a ``DataType`` for ``T``, or ``(T, U)`` pairs.
        out_shape: input shapes -> output shape (a tuple of shapes for several outputs).
        bprop: ``(*inputs, out, dout) -> input gradients``, compiled into graphs (index other
            kernels through a library's prebuilt dicts only); ``"zeros"`` (the default): zeros
            for every input; ``None``: no bprop (differentiating the primitive fails).
        out_dtype: input dtypes -> output dtype(s); default: read off the signature.
    """

    name: str
    signature: str
    types: Sequence[Any]
    out_shape: Callable[..., Any]
    bprop: Union[Callable[..., Any], str, None] = "zeros"
    out_dtype: Optional[Callable[..., Any]] = None

    def __post_init__(self) -> None:
        n_inputs = len(_parse(self.signature)[0])
        if self.bprop == "zeros" and n_inputs not in _NO_GRAD:
            raise ValueError(f"{self.name}: no zero bprop for {n_inputs} inputs; give a bprop")

    def build(self, path: str, target: str) -> LockedCustom:
        """The aot primitive of this entry point in the library at ``path``."""
        op_name = "mscompat_" + re.sub(r"(?<!^)(?=[A-Z])", "_", self.name).lower()
        bprop = _NO_GRAD[len(_parse(self.signature)[0])] if self.bprop == "zeros" else self.bprop
        return LockedCustom(
            f"{path}:{self.name}",
            out_shape=self.out_shape,
            out_dtype=self.out_dtype or _signature_dtype(self.signature),
            func_type="aot",
            reg_info=reg_info(op_name, self.signature, self.types, target),
            **({} if bprop is None else {"bprop": bprop}),
        )


class KernelLibrary:
    """A compiled kernel library (``_<name>_cpu*.so`` / ``_<name>_cuda.so``) and its entry points.

    The primitives are built once per device, by :meth:`ops` (which the registry's probe runs
    before the ``aot`` backend is ever chosen), into :attr:`kernels` and the dicts handed out by
    :meth:`table`: plain dicts that code compiled into a graph (front doors, bprops) only
    indexes, since nothing may be built there.

    Args:
        name: the library, ``cpu/<name>_kernel.cc`` / ``cuda/<name>_kernel.cu``.
        entries: its entry points.
        self_check: ``check(kernels)`` run by :meth:`probe`: computes known values with
            ``kernels`` (entry name -> primitive) and raises if they are wrong.
        cuda_entries: the entry names the CUDA source implements, where it has fewer than the
            C++ one (None: all of them); the GPU's kernels and self-check have only these.
    """

    def __init__(
        self,
        name: str,
        entries: Sequence[Entry],
        self_check: Callable[[Dict[str, Any]], None],
        cuda_entries: Optional[Sequence[str]] = None,
    ) -> None:
        self.name = name
        self.entries = tuple(entries)
        self.self_check = self_check
        unknown = set(cuda_entries or ()) - {e.name for e in self.entries}
        if unknown:
            raise ValueError(f"cuda_entries names no entry of {name!r}: {sorted(unknown)}")
        self.cuda_entries = None if cuda_entries is None else tuple(cuda_entries)
        #: device -> entry name -> primitive.
        self.kernels: Dict[str, Dict[str, Any]] = {}
        self._tables: Dict[str, Dict[str, Any]] = {}

    def table(self, entry: str) -> Dict[str, Any]:
        """The dict device -> primitive of ``entry`` (filled with :attr:`kernels`)."""
        if entry not in {e.name for e in self.entries}:
            raise KeyError(f"{self.name} has no entry point {entry!r}")
        table = self._tables.setdefault(entry, {})
        table.update({d: ops_[entry] for d, ops_ in self.kernels.items() if entry in ops_})
        return table

    def ops(self, device: str) -> Dict[str, Any]:
        """Entry name -> primitive for ``device``, built once per process.

        Raises:
            KernelUnavailableError: the library is not built or may not be loaded
                (:func:`kernel_path`).
        """
        if device not in self.kernels:
            path = kernel_path(self.name, device)
            entries = self.entries
            if device == "GPU" and self.cuda_entries is not None:
                entries = tuple(e for e in entries if e.name in self.cuda_entries)
            built = {e.name: e.build(path, device) for e in entries}
            for entry, table in self._tables.items():
                if entry in built:
                    table[device] = built[entry]
            self.kernels[device] = built
        return self.kernels[device]

    def backend(
        self,
        op: Union[str, Sequence[str]],
        note: str,
        supports: Optional[Callable[..., Optional[str]]] = None,
        devices: Sequence[str] = ("CPU",),
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Decorator registering an ``aot`` implementation of ``op`` that runs this library's
        kernels: :func:`~mscompat.custom_ops.registry.register` with this library's probe."""
        from mscompat.custom_ops.registry import register

        return register(op, "aot", devices=devices, probe=self.probe, note=note, supports=supports)

    def probe(self, check: Optional[Callable[[Dict[str, Any]], None]] = None) -> None:
        """Registry probe: the library loads for the current device (else a one-time warning
        and the error) and passes ``check`` (default: its self-check)."""
        from mscompat.custom_ops.registry import current_device

        try:
            kernels = self.ops(current_device())
        except KernelUnavailableError as exc:
            warn_once(self.name, f"mscompat: {exc}")
            raise
        (check or self.self_check)(kernels)


def expect(ok: Any, what: str, *got: Any) -> None:
    """A self-check's verdict: raise ``RuntimeError("<what> self-check failed: <got>")`` unless
    ``ok``."""
    if not ok:
        raise RuntimeError(f"{what} self-check failed: " + ", ".join(str(g) for g in got))
