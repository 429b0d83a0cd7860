"""One small registry of implementations keyed by (op, backend).

Modelled on mmcv's device registry (``pytorch_device_registry.hpp``) and torchvision's
compiled-op-with-pure-fallback. Backends:

* ``composite``: MindSpore ops composed; runs everywhere; the reference implementation.
* ``native``: a MindSpore built-in kernel; used only where a probe shows it is registered for the
  current device target (probed once per process and device, then cached).
* ``aot``: our own C++/CUDA kernel through ``ops.Custom(func_type="aot")``, where it was built.

Each op has a selection order (default: ``aot``, ``native``, ``composite``); the first available
backend runs. A user can force one with the ``MSCOMPAT_BACKEND`` environment variable
(``"composite"`` for every op, or ``"losses.sigmoid_focal_loss=aot,shape.sort=native"``) or with
:func:`use_backend`; :func:`which` says what will run and why. Forcing a backend that is not
available raises :class:`BackendNotAvailableError`, naming the op, the backend asked for and the
backends that exist.

The choice is made when the front door is called: in PyNative at every call, under ``ms.jit``
when the graph is compiled (a compiled graph keeps the backend it was compiled with).
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from mindspore.ops import constexpr

from mscompat.custom_ops import _tables

__all__ = [
    "BACKENDS",
    "DEFAULT_ORDER",
    "ENV_VAR",
    "BackendNotAvailableError",
    "Choice",
    "Implementation",
    "available",
    "current_device",
    "device_target",
    "dispatch",
    "implementations",
    "register",
    "registered_ops",
    "set_order",
    "use_backend",
    "which",
]

BACKENDS = ("aot", "native", "composite")
DEFAULT_ORDER = ("aot", "native", "composite")
DEVICES = ("CPU", "GPU", "Ascend")
ENV_VAR = "MSCOMPAT_BACKEND"


class BackendNotAvailableError(LookupError):
    """A backend was asked for (or needed) that is not registered or not available here."""


@dataclass(frozen=True)
class Implementation:
    """One registered implementation of an op."""

    op: str
    backend: str
    fn: Callable[..., Any]
    devices: Tuple[str, ...]
    probe: Optional[Callable[[], Any]]
    note: str


@dataclass(frozen=True)
class Choice:
    """What :func:`which` found: the backend that runs, on which device, and why."""

    op: str
    backend: str
    device: str
    reason: str
    forced: bool


# op -> backend -> implementations, each for its own devices (no device in two of them).
_REGISTRY: Dict[str, Dict[str, List[Implementation]]] = {}
_ORDER: Dict[str, Tuple[str, ...]] = {}
_PROBES: Dict[Tuple[str, str, str], Tuple[bool, str]] = {}
_PROBE_LOCK = threading.Lock()
_FORCED = threading.local()


def register(
    op: str,
    backend: str,
    *,
    devices: Sequence[str] = DEVICES,
    probe: Optional[Callable[[], Any]] = None,
    note: str = "",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering ``fn`` as the ``backend`` implementation of ``op`` on ``devices``.

    One op may have several implementations of one backend for different devices (e.g. a
    ``native`` one through ``mint.sort`` for Ascend and another through ``ops.topk`` for CPU);
    registering a device twice for the same (op, backend) is an error.

    Args:
        op: the op's public name, e.g. ``"losses.sigmoid_focal_loss"``.
        backend: one of :data:`BACKENDS`.
        devices: device targets it may run on (``"CPU"``, ``"GPU"``, ``"Ascend"``).
        probe: called once per process and device before first use; it should run the kernel
            on a tiny input and raise if the kernel is not usable here (e.g. "kernel
            unregistered"). Its exception message becomes the reason shown by :func:`which`.
        note: a short description shown by ``mscompat ops``.

    Example:
        >>> from mscompat.custom_ops import register
        >>> @register("demo.double", "composite", note="x + x")
        ... def _double(x):
        ...     return x + x
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, but got {backend!r}")
    bad = [d for d in devices if d not in DEVICES]
    if bad:
        raise ValueError(f"devices must be among {DEVICES}, but got {bad}")

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        impls = _REGISTRY.setdefault(op, {}).setdefault(backend, [])
        taken = [d for i in impls for d in i.devices if d in devices]
        if taken:
            raise ValueError(
                f"op {op!r} already has a {backend!r} implementation for {taken}; "
                "register each device once"
            )
        impls.append(Implementation(op, backend, fn, tuple(devices), probe, note))
        table = getattr(_tables, _table_attr(op), None)
        if table is None:
            table = {}
            setattr(_tables, _table_attr(op), table)
        for device in devices:
            table[f"{backend}:{device}"] = fn
        return fn

    return deco


def set_order(op: str, order: Sequence[str]) -> None:
    """Set the selection order of ``op`` (backends tried first to last)."""
    bad = [b for b in order if b not in BACKENDS]
    if bad:
        raise ValueError(f"order must only name backends among {BACKENDS}, but got {bad}")
    _ORDER[op] = tuple(order)


def registered_ops() -> List[str]:
    """All op names with at least one implementation, sorted."""
    return sorted(_REGISTRY)


def implementations(op: str) -> Dict[str, Tuple[Implementation, ...]]:
    """The implementations registered for ``op``: backend -> one per device group."""
    if op not in _REGISTRY:
        raise BackendNotAvailableError(
            f"no implementation registered for op {op!r}; known ops: {registered_ops()}"
        )
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


def available(op: str, backend: str, device: Optional[str] = None) -> Tuple[bool, str]:
    """Whether ``backend`` can run ``op`` on ``device`` (default: current), and why (not)."""
    device = device or current_device()
    impl = _impl_for(op, backend, device)
    if impl is None:
        others = [d for i in _REGISTRY.get(op, {}).get(backend, ()) for d in i.devices]
        if others:
            return False, f"{backend} is registered for {'/'.join(others)}, not {device}"
        return False, f"no {backend} implementation registered"
    if impl.probe is None:
        return True, impl.note or f"{backend} implementation"
    key = (op, backend, device)
    with _PROBE_LOCK:
        if key not in _PROBES:
            try:
                impl.probe()
                _PROBES[key] = (
                    True,
                    f"probe passed on {device}" + (f": {impl.note}" if impl.note else ""),
                )
            except Exception as exc:  # noqa: BLE001 - any failure means "not usable here"
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                _PROBES[key] = (False, f"probe failed on {device}: {first[:200]}")
        return _PROBES[key]


def _env_forced(op: str) -> Optional[str]:
    value = os.environ.get(ENV_VAR, "").strip()
    if not value:
        return None
    if "=" not in value:
        return value
    for item in value.split(","):
        name, _, backend = item.partition("=")
        if name.strip() == op:
            return backend.strip()
    return None


def _forced(op: str) -> Tuple[Optional[str], str]:
    stack: List[Tuple[Optional[str], str]] = getattr(_FORCED, "stack", [])
    for ops, backend in reversed(stack):
        if ops is None or ops == op:
            return backend, "forced by use_backend()"
    env = _env_forced(op)
    if env is not None:
        return env, f"forced by {ENV_VAR}={os.environ.get(ENV_VAR)}"
    return None, ""


def which(op: str, device: Optional[str] = None) -> Choice:
    """The backend that will run ``op`` on ``device`` (default: current), and why.

    Raises:
        BackendNotAvailableError: the op is unknown, or a forced backend is not available.

    Example:
        >>> from mscompat.custom_ops import which
        >>> which("losses.sigmoid_focal_loss").backend in ("aot", "native", "composite")
        True
    """
    impls = implementations(op)
    device = device or current_device()
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
        return Choice(op, forced, device, f"{why}; {reason}", True)
    skipped: List[str] = []
    for backend in _ORDER.get(op, DEFAULT_ORDER):
        if backend not in impls:
            continue
        ok, reason = available(op, backend, device)
        if ok:
            why_first = f" (skipped: {'; '.join(skipped)})" if skipped else ""
            return Choice(op, backend, device, f"{reason}{why_first}", False)
        skipped.append(f"{backend}: {reason}")
    raise BackendNotAvailableError(
        f"op {op!r}: no backend available on {device}; registered: {sorted(impls)}; "
        f"{'; '.join(skipped)}"
    )


@constexpr
def _table_attr(op: str) -> str:
    return "op_" + op.replace(".", "__")


@constexpr
def _chosen(op: str) -> str:
    # A MindSpore constexpr: under ms.jit it runs in Python at compile time (MindSpore would
    # otherwise parse the registry into the graph); in PyNative it is a plain call.
    choice = which(op)
    return f"{choice.backend}:{choice.device}"


def dispatch(op: str) -> Callable[..., Any]:
    """The implementation :func:`which` chooses for ``op`` on the current device.

    Usable inside ``ms.jit``: the choice is made in Python when the graph is compiled, and the
    graph only refers to this op's own implementations (one op's table, read from
    :mod:`mscompat.custom_ops._tables`), so another op's code is never parsed.
    """
    return getattr(_tables, _table_attr(op))[_chosen(op)]


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
    stack = getattr(_FORCED, "stack", None)
    if stack is None:
        stack = _FORCED.stack = []
    stack.append((op, backend))
    try:
        yield
    finally:
        stack.pop()
