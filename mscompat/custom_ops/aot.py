"""Loading and calling the compiled kernels (``ops.Custom(func_type="aot")``).

Kernels are built when the package is installed (``setup.py``) and shipped inside it; they are
loaded only from this package's own directory, by absolute path, and refused if the file or its
folder is writable by others. A missing build warns once and the op runs its composite
implementation.

Every launch of a custom kernel in PyNative goes through one process-wide lock
(:data:`KERNEL_LOCK`): concurrent launches of the same Custom primitive from several Python
threads gave wrong results in 1-5 % of calls on MindSpore 2.10. In graph mode the primitive is
part of the compiled graph and the lock is not involved; MindSpore's ``ms.jit`` must not be
called from several threads at once (it segfaulted, for plain ops too): hold
:data:`KERNEL_LOCK` around such calls.
"""

from __future__ import annotations

import glob
import stat
import threading
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, Optional

import mindspore as ms
from mindspore import ops
from mindspore.ops import CustomRegOp, DataType

__all__ = [
    "COPY_TYPES",
    "KERNEL_LOCK",
    "aot_op",
    "KernelUnavailableError",
    "LockedCustom",
    "index_reg_info",
    "kernel_dtype",
    "kernel_path",
    "same_dtype",
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
    return str(path)


def warn_once(key: str, message: str) -> None:
    """Emit ``message`` as a RuntimeWarning the first time ``key`` is seen in this process."""
    if not _WARNED.get(key):
        _WARNED[key] = True
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def index_reg_info(name: str, n_int64_inputs: int, target: str) -> Any:
    """Registration of an index kernel: input ``x`` (float32/float64/int32/int64), then
    ``n_int64_inputs`` int64 inputs; one int64 output."""
    reg = CustomRegOp(name).input(0, "x")
    for i in range(n_int64_inputs):
        reg = reg.input(i + 1, f"p{i}")
    reg = reg.output(0, "y")
    i64 = DataType.I64_Default
    for fmt in (
        DataType.F32_Default,
        DataType.F64_Default,
        DataType.I32_Default,
        DataType.I64_Default,
    ):
        reg = reg.dtype_format(fmt, *([i64] * (n_int64_inputs + 1)))
    return reg.target(target).get_op_info()


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


def same_dtype(x: Any, *_: Any) -> Any:
    """``out_dtype`` of a kernel whose output has its first input's dtype."""
    return x


def aot_op(
    path: str,
    entry: str,
    out_shape: Callable[..., Any],
    out_dtype: Callable[..., Any],
    reg_info: Any,
    bprop: Optional[Callable[..., Any]] = None,
) -> LockedCustom:
    """The aot primitive ``entry`` of the kernel library at ``path`` (see :func:`kernel_path`).

    Args:
        path: the library's absolute path.
        entry: the exported C function.
        out_shape: input shapes -> output shape.
        out_dtype: input dtypes -> output dtype.
        reg_info: the ``CustomRegOp`` registration (input/output dtypes).
        bprop: ``(*inputs, out, dout) -> input gradients``; none for a non-differentiable op.
    """
    extra = {} if bprop is None else {"bprop": bprop}
    return LockedCustom(
        f"{path}:{entry}",
        out_shape=out_shape,
        out_dtype=out_dtype,
        func_type="aot",
        reg_info=reg_info,
        **extra,
    )
