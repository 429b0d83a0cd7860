"""One small registry of implementations keyed by (op, backend), chosen per call.

Modelled on mmcv's device registry (``pytorch_device_registry.hpp``) and torchvision's
compiled-op-with-pure-fallback. Backends:

* ``composite``: MindSpore ops composed; runs everywhere; the reference implementation.
* ``native``: a MindSpore built-in kernel; used only where a probe shows it is registered for the
  current device target (probed once per process and device, then cached).
* ``aot``: our own C++/CUDA kernel through ``ops.Custom(func_type="aot")``, where it was built.

An implementation may declare which calls it ``supports``: a predicate on the call's static
facts (dtypes, shapes, argument values) that returns ``None`` for a call it runs and a short
reason for one it does not ("float16 is not supported by the kernel"). Each op has a selection
order (default: ``aot``, ``native``, ``composite``); the first backend that is available here
AND supports the call runs. The choice is made when the front door calls :func:`dispatch`: in
PyNative at every call, under ``ms.jit`` when the graph is compiled (the facts are then
compile-time constants, and a compiled graph keeps the backend it was compiled with).

A user can force a backend with the ``MSCOMPAT_BACKEND`` environment variable (``"composite"``
for every op, or ``"losses.sigmoid_focal_loss=aot,shape.sort=native"``) or with
:func:`use_backend`; :func:`which` says what runs and why, for an op or for one call. Forcing a
backend that is not available, or that does not support the call, raises
:class:`BackendNotAvailableError` saying why.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from mindspore import Tensor
from mindspore.ops import constexpr

from mscompat.custom_ops import _tables

__all__ = [
    "BACKENDS",
    "DEFAULT_ORDER",
    "ENV_VAR",
    "BackendNotAvailableError",
    "Choice",
    "Implementation",
    "TensorSpec",
    "available",
    "call",
    "chosen_backend",
    "current_device",
    "device_target",
    "dispatch",
    "implementations",
    "isolated",
    "register",
    "registered_ops",
    "resolve",
    "set_order",
    "unsupported",
    "use_backend",
    "which",
]

BACKENDS = ("aot", "native", "composite")
DEFAULT_ORDER = ("aot", "native", "composite")
DEVICES = ("CPU", "GPU", "Ascend")
ENV_VAR = "MSCOMPAT_BACKEND"

#: ``supports(*facts) -> None | reason``: the implementation's positional arguments, each Tensor
#: replaced by its :class:`TensorSpec`.
Supports = Callable[..., Optional[str]]
OpNames = Union[str, Sequence[str]]


class BackendNotAvailableError(LookupError):
    """A backend was asked for (or needed) that is not registered, not available here, or does
    not support the call."""


@dataclass(frozen=True)
class TensorSpec:
    """The static facts of a Tensor argument, as a ``supports`` predicate sees them."""

    dtype: Any
    shape: Tuple[int, ...]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def dtype_name(self) -> str:
        """PyTorch's spelling of the dtype: ``"float16"``, ``"int64"``, ``"bool"``."""
        return str(self.dtype).lower()

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n


@dataclass(frozen=True)
class Implementation:
    """One registered implementation of an op."""

    op: str
    backend: str
    fn: Callable[..., Any]
    devices: Tuple[str, ...]
    probe: Optional[Callable[[], Any]]
    note: str
    supports: Optional[Supports] = None


@dataclass(frozen=True)
class Choice:
    """What :func:`which` found: the backend that runs, on which device, and why.

    ``backend`` is ``"none"`` when the front door answered the call before any backend (an
    empty input, say).
    """

    op: str
    backend: str
    device: str
    reason: str
    forced: bool


# op -> backend -> implementations, each for its own devices (no device in two of them).
_REGISTRY: Dict[str, Dict[str, List[Implementation]]] = {}
_ORDER: Dict[str, Tuple[str, ...]] = {}
# (probe, device) -> (usable, why): one run per probe, shared by the ops of a kernel library.
_PROBES: Dict[Tuple[Any, str], Tuple[bool, str]] = {}
_PROBE_LOCK = threading.Lock()
_LOCAL = threading.local()  # .stack: forced backends; .capture: the op which() is asking about
_TENSOR = "__mscompat_tensor__"


def _names(op: OpNames) -> Tuple[str, ...]:
    return (op,) if isinstance(op, str) else tuple(op)


def register(
    op: OpNames,
    backend: str,
    *,
    devices: Sequence[str] = DEVICES,
    probe: Optional[Callable[[], Any]] = None,
    note: str = "",
    supports: Optional[Supports] = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering ``fn`` as the ``backend`` implementation of ``op`` on ``devices``.

    One op may have several implementations of one backend for different devices (e.g. a
    ``native`` one through ``mint.sort`` for Ascend and another through ``ops.topk`` for CPU);
    registering a device twice for the same (op, backend) is an error. One function may serve a
    family of ops (``("shape.max_pool1d", "shape.max_pool2d", "shape.max_pool3d")``).

    Args:
        op: the op's public name, e.g. ``"losses.sigmoid_focal_loss"``, or a sequence of names.
        backend: one of :data:`BACKENDS`.
        devices: device targets it may run on (``"CPU"``, ``"GPU"``, ``"Ascend"``).
        probe: called once per process and device before first use; it should run the kernel
            on a tiny input and raise if the kernel is not usable here (e.g. "kernel
            unregistered"). Its exception message becomes the reason shown by :func:`which`.
            Ops sharing one probe function share its result.
        note: a short description shown by ``mscompat ops``.
        supports: ``supports(*args)`` with the implementation's positional arguments, each
            Tensor replaced by a :class:`TensorSpec`; returns ``None`` when this implementation
            runs the call, else a short reason. Evaluated in Python (at compile time under
            ``ms.jit``). Default: every call.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.custom_ops import isolated, register, which
        >>> with isolated():
        ...     @register("demo.double", "composite", note="x + x")
        ...     def _double(x):
        ...         return x + x
        ...     @register("demo.double", "native",
        ...               supports=lambda x: None if x.dtype == ms.float32 else "float32 only")
        ...     def _double_native(x):
        ...         return x * 2
        ...     which("demo.double", ms.Tensor([1.0], ms.float64)).reason
        'native: float32 only -> composite: x + x'
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, but got {backend!r}")
    bad = [d for d in devices if d not in DEVICES]
    if bad:
        raise ValueError(f"devices must be among {DEVICES}, but got {bad}")
    names = _names(op)
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"op must be a name or a sequence of names, but got {op!r}")

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        for name in names:
            impls = _REGISTRY.setdefault(name, {}).setdefault(backend, [])
            taken = [d for i in impls for d in i.devices if d in devices]
            if taken:
                raise ValueError(
                    f"op {name!r} already has a {backend!r} implementation for {taken}; "
                    "register each device once"
                )
            impls.append(Implementation(name, backend, fn, tuple(devices), probe, note, supports))
            attr = _table_attr(name)
            table = getattr(_tables, attr, None)
            if table is None:
                table = {}
                setattr(_tables, attr, table)
            for device in devices:
                table[f"{backend}:{device}"] = fn
        return fn

    return deco


def set_order(op: OpNames, order: Sequence[str]) -> None:
    """Set the selection order of ``op`` (or of each op of a family): backends, first to last."""
    bad = [b for b in order if b not in BACKENDS]
    if bad:
        raise ValueError(f"order must only name backends among {BACKENDS}, but got {bad}")
    for name in _names(op):
        _ORDER[name] = tuple(order)


def registered_ops() -> List[str]:
    """All op names with at least one implementation, sorted."""
    return sorted(_REGISTRY)


def resolve(op: str) -> str:
    """The registered name of ``op``: itself, or the one op whose name after the package is
    ``op`` (``"sigmoid_focal_loss"`` -> ``"losses.sigmoid_focal_loss"``).

    Raises:
        BackendNotAvailableError: unknown, or an unqualified name two packages share.
    """
    if op in _REGISTRY:
        return op
    matches = [name for name in _REGISTRY if name.split(".", 1)[-1] == op]
    if len(matches) == 1:
        return matches[0]
    if matches:
        raise BackendNotAvailableError(
            f"op name {op!r} is ambiguous: it may be any of {sorted(matches)}; qualify it"
        )
    raise BackendNotAvailableError(
        f"no implementation registered for op {op!r}; known ops: {registered_ops()}"
    )


def implementations(op: str) -> Dict[str, Tuple[Implementation, ...]]:
    """The implementations registered for ``op``: backend -> one per device group."""
    op = resolve(op)
    return {backend: tuple(impls) for backend, impls in _REGISTRY[op].items()}


def _impl_for(op: str, backend: str, device: str) -> Optional[Implementation]:
    for impl in _REGISTRY.get(op, {}).get(backend, ()):
        if device in impl.devices:
            return impl
    return None


def current_device() -> str:
    """MindSpore's current device target (``"CPU"``, ``"GPU"`` or ``"Ascend"``)."""
    import mindspore as ms

    return str(ms.get_context("device_target"))


@constexpr
def device_target() -> str:
    """:func:`current_device` as a compile-time constant (usable inside ``ms.jit``)."""
    return current_device()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def available(op: str, backend: str, device: Optional[str] = None) -> Tuple[bool, str]:
    """Whether ``backend`` can run ``op`` on ``device`` (default: current), and why (not).

    This is about the build and the device, not a particular call: see :func:`unsupported`.
    """
    op = resolve(op)
    device = device or current_device()
    impl = _impl_for(op, backend, device)
    if impl is None:
        others = [d for i in _REGISTRY.get(op, {}).get(backend, ()) for d in i.devices]
        if others:
            return False, f"{backend} is registered for {'/'.join(others)}, not {device}"
        return False, f"no {backend} implementation registered"
    if impl.probe is None:
        return True, impl.note or f"{backend} implementation"
    key = (impl.probe, device)
    with _PROBE_LOCK:
        if key not in _PROBES:
            try:
                impl.probe()
                _PROBES[key] = (True, f"probe passed on {device}")
            except Exception as exc:  # noqa: BLE001 - any failure means "not usable here"
                _PROBES[key] = (False, f"probe failed on {device}: {_first_line(exc)}")
        ok, why = _PROBES[key]
    return ok, f"{why}: {impl.note}" if ok and impl.note else why


def _spec(value: Any) -> Any:
    """A fact as :func:`dispatch` passes it (a tagged tuple for a Tensor) -> what
    ``supports`` sees."""
    if isinstance(value, tuple) and len(value) == 3 and value[0] == _TENSOR:
        return TensorSpec(value[1], tuple(value[2]))
    if isinstance(value, Tensor):
        return TensorSpec(value.dtype, tuple(value.shape))
    return value


def unsupported(op: str, backend: str, *args: Any, device: Optional[str] = None) -> Optional[str]:
    """Why ``backend``'s implementation of ``op`` does not run a call with the implementation
    arguments ``args`` (Tensors or :class:`TensorSpec`), or ``None`` when it does.

    Only the call is judged here, not the build: see :func:`available`.
    """
    op = resolve(op)
    impl = _impl_for(op, backend, device or current_device())
    if impl is None or impl.supports is None:
        return None
    return impl.supports(*(_spec(a) for a in args))


def _env_forced(op: str) -> Optional[str]:
    value = os.environ.get(ENV_VAR, "").strip()
    if not value:
        return None
    if "=" not in value:
        return value
    for item in value.split(","):
        name, _, backend = item.partition("=")
        name = name.strip()
        if name == op or (name not in _REGISTRY and name == op.split(".", 1)[-1]):
            return backend.strip()
    return None


def _forced(op: str) -> Tuple[Optional[str], str]:
    stack: List[Tuple[Optional[str], str]] = getattr(_LOCAL, "stack", [])
    for name, backend in reversed(stack):
        if name is None or name == op:
            return backend, "forced by use_backend()"
    env = _env_forced(op)
    if env is not None:
        return env, f"forced by {ENV_VAR}={os.environ.get(ENV_VAR)}"
    return None, ""


def _choose(op: str, device: str, facts: Optional[Tuple[Any, ...]]) -> Choice:
    """The choice for ``op`` on ``device``: per call when ``facts`` are given, else per op
    (a ``supports`` predicate is then not consulted)."""
    impls = _REGISTRY[op]
    specs = None if facts is None else tuple(_spec(f) for f in facts)

    def refusal(backend: str) -> Optional[str]:
        impl = _impl_for(op, backend, device)
        if specs is None or impl is None or impl.supports is None:
            return None
        try:
            return impl.supports(*specs)
        except Exception as exc:  # noqa: BLE001 - e.g. the dead values ms.jit still traces
            # after a validation raise: a predicate that cannot judge the call declines it.
            return f"its supports check failed on this call ({type(exc).__name__}: {exc})"

    forced, why = _forced(op)
    if forced is not None:
        if forced not in BACKENDS:
            raise BackendNotAvailableError(
                f"op {op!r}: backend {forced!r} ({why}) is not one of {BACKENDS}"
            )
        ok, reason = available(op, forced, device)
        if not ok:
            raise BackendNotAvailableError(
                f"op {op!r}: backend {forced!r} was asked for ({why}) but is not available on "
                f"{device}: {reason}. Registered backends: {sorted(impls)}; available here: "
                f"{[b for b in sorted(impls) if available(op, b, device)[0]]}"
            )
        refused = refusal(forced)
        if refused:
            runs = [b for b in sorted(impls) if available(op, b, device)[0] and not refusal(b)]
            raise BackendNotAvailableError(
                f"op {op!r}: backend {forced!r} was asked for ({why}) but does not support this "
                f"call: {refused}. Backends that do here: {runs}"
            )
        return Choice(op, forced, device, f"{why}; {reason}", True)
    skipped: List[str] = []
    for backend in _ORDER.get(op, DEFAULT_ORDER):
        if backend not in impls:
            continue
        ok, reason = available(op, backend, device)
        refused = refusal(backend) if ok else None
        if ok and not refused:
            lead = "".join(f"{s} -> " for s in skipped)
            return Choice(op, backend, device, f"{lead}{backend}: {reason}", False)
        skipped.append(f"{backend}: {refused or reason}")
    raise BackendNotAvailableError(
        f"op {op!r}: no backend runs this on {device}; registered: {sorted(impls)}; "
        f"{'; '.join(skipped)}"
    )


class _Captured(Exception):
    """Raised by :func:`dispatch` when :func:`which` runs a front door to see its choice."""

    def __init__(self, choice: Choice) -> None:
        super().__init__(choice.backend)
        self.choice = choice


def _front_door(op: str) -> Optional[Callable[..., Any]]:
    """The public function of ``op`` by the naming rule ``"pkg.name"`` -> ``mscompat.pkg.name``."""
    package, _, name = op.rpartition(".")
    try:
        module = importlib.import_module(f"mscompat.{package}")
    except ImportError:
        return None
    fn = getattr(module, name, None)
    return fn if callable(fn) else None


def which(op: str, *args: Any, device: Optional[str] = None, **kwargs: Any) -> Choice:
    """The backend that runs ``op`` on ``device`` (default: current), and why.

    With no call arguments, the choice for the op (``supports`` predicates not consulted).
    With arguments, the choice for that call: they are the arguments of the op's public
    function (``mscompat.<package>.<name>``), which validates and plans them as a real call
    would and stops where it would dispatch; for an op without a public function, they are the
    implementation's own arguments.

    Raises:
        BackendNotAvailableError: the op is unknown, or a forced backend is not available or
            does not support the call.
        ValueError, TypeError: the call's arguments are bad (the front door's own error).

    Example:
        >>> import mindspore as ms
        >>> from mscompat.custom_ops import which
        >>> which("sigmoid_focal_loss").op
        'losses.sigmoid_focal_loss'
        >>> x = ms.Tensor([[1.0, -1.0]], ms.float16)
        >>> which("sigmoid_focal_loss", x, x).backend
        'composite'
    """
    op = resolve(op)
    device = device or current_device()
    if not args and not kwargs:
        return _choose(op, device, None)
    front = _front_door(op)
    if front is None:
        return _choose(op, device, tuple(_spec(a) for a in args))
    previous = getattr(_LOCAL, "capture", None)
    _LOCAL.capture = (op, device)
    try:
        front(*args, **kwargs)
    except _Captured as captured:
        return captured.choice
    finally:
        _LOCAL.capture = previous
    return Choice(op, "none", device, "answered by the front door before any backend", False)


@constexpr
def _table_attr(op: str) -> str:
    return "op_" + op.replace(".", "__")


@constexpr
def _chosen(op: str, facts: Tuple[Any, ...]) -> str:
    # A MindSpore constexpr: under ms.jit it runs in Python at compile time (MindSpore would
    # otherwise parse the registry into the graph); in PyNative it is a plain call.
    capture = getattr(_LOCAL, "capture", None)
    if capture is not None and capture[0] == op:
        raise _Captured(_choose(op, capture[1], facts))
    choice = _choose(op, current_device(), facts)
    return f"{choice.backend}:{choice.device}"


def _facts(*args: Any) -> Tuple[Any, ...]:
    # Parsed by ms.jit: a Tensor's dtype and shape are constants there, the Tensor is not.
    out: Tuple[Any, ...] = ()
    for a in args:
        if isinstance(a, Tensor):  # noqa: SIM108 - ms.jit parses a statement more reliably
            out = out + ((_TENSOR, a.dtype, a.shape),)
        else:
            out = out + (a,)
    return out


def dispatch(op: str, *args: Any) -> Callable[..., Any]:
    """The implementation that runs ``op`` for the call ``fn(*args)`` on the current device.

    The front door passes the implementation's positional arguments; the first backend in the
    op's order that is available and whose ``supports`` accepts their static facts is chosen.
    Usable inside ``ms.jit``: the choice is made in Python when the graph is compiled, and the
    graph only refers to this op's own implementations (one op's table, read from
    :mod:`mscompat.custom_ops._tables`), so another op's code is never parsed.
    """
    return getattr(_tables, _table_attr(op))[_chosen(op, _facts(*args))]


@constexpr
def _backend_of(choice: str) -> str:
    return choice.partition(":")[0]


def chosen_backend(op: str, *args: Any) -> str:
    """The backend (``"aot"``, ``"native"``, ``"composite"``) :func:`dispatch` chooses for
    ``op`` on the implementation arguments ``args``; a compile-time constant under ``ms.jit``.
    For a front door that plans around the backend (e.g. a reduction fused into an ``aot``
    kernel); under :func:`which` it reports the choice as :func:`dispatch` does."""
    return _backend_of(_chosen(op, _facts(*args)))


def call(op: str, *args: Any) -> Any:
    """Run ``op`` on ``args`` with the implementation :func:`dispatch` chooses for them."""
    return dispatch(op, *args)(*args)


@contextlib.contextmanager
def use_backend(backend: str, op: Optional[str] = None) -> Iterator[None]:
    """Force ``backend`` for ``op`` (or every op) inside the ``with`` block (this thread).

    Example:
        >>> from mscompat.custom_ops import use_backend, which
        >>> with use_backend("composite", "losses.sigmoid_focal_loss"):
        ...     which("losses.sigmoid_focal_loss").backend
        'composite'
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, but got {backend!r}")
    name = None if op is None else resolve(op)
    stack = getattr(_LOCAL, "stack", None)
    if stack is None:
        stack = _LOCAL.stack = []
    stack.append((name, backend))
    try:
        yield
    finally:
        stack.pop()


@contextlib.contextmanager
def isolated() -> Iterator[None]:
    """Register ops inside the ``with`` block without leaving them in the registry (tests).

    Everything registered, ordered or probed inside is forgotten on exit; what was there before
    is kept as it was.
    """
    tables = {a: dict(t) for a, t in vars(_tables).items() if a.startswith("op_")}
    # Implementations are immutable and hold the kernel libraries' own probes: copy the
    # containers only (a deep copy would probe copies of the libraries, whose tables no graph
    # reads).
    registry = {op: {b: list(i) for b, i in impls.items()} for op, impls in _REGISTRY.items()}
    saved = (registry, dict(_ORDER), dict(_PROBES), tables)
    try:
        yield
    finally:
        registry, order, probes, tables = saved
        _REGISTRY.clear()
        _REGISTRY.update(registry)
        _ORDER.clear()
        _ORDER.update(order)
        _PROBES.clear()
        _PROBES.update(probes)
        for attr in [a for a in vars(_tables) if a.startswith("op_")]:
            if attr not in tables:
                delattr(_tables, attr)
        for attr, value in tables.items():
            setattr(_tables, attr, value)
