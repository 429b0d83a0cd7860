"""Python functions called by a compiled graph (``ops.Custom(func_type="pyfunc")``), cheaply.

MindSpore 2.10 runs a graph's ``pyfunc`` op on its runtime thread, a thread Python does not
know. Each call there makes a Python thread state, runs the function and deletes the state again
(a 16 KiB frame stack mapped and unmapped every call, the unmapping a TLB shootdown on every CPU
of a threaded process). :func:`python_op` keeps that thread's state alive after its first call by
taking one more reference to it (``PyGILState_Ensure`` without the matching release), so later
calls only take the GIL: the ``embedding_bag`` graph's index check cost 0.03 ms less a call (the
kernels page, "Threads").
"""

from __future__ import annotations

import ctypes
import functools
import threading
from typing import Any, Callable, List, Set, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.ops import constexpr

__all__ = ["python_op", "value_error_if"]

_KEPT: Set[int] = set()
_KEPT_LOCK = threading.Lock()


def _keep_thread_state() -> None:
    """Hold one more reference to the calling thread's Python state, once per thread: MindSpore's
    release after the call then leaves the state in place instead of deleting it."""
    ident = threading.get_ident()
    if ident in _KEPT:
        return
    with _KEPT_LOCK:
        if ident not in _KEPT:
            _KEPT.add(ident)
            # The caller holds the GIL on this state: Ensure only counts one more user of it.
            ctypes.pythonapi.PyGILState_Ensure()


def python_op(
    fn: Callable[..., Any],
    out_shape: Callable[..., Any],
    out_dtype: Callable[..., Any],
    bprop: Callable[..., Any],
) -> Any:
    """``ops.Custom(fn, out_shape, out_dtype, func_type="pyfunc", bprop=bprop)`` whose calls
    from a graph's runtime thread keep that thread's Python state between calls.

    Args:
        fn: The Python function, taking and returning numpy arrays.
        out_shape: The output shape from the input shapes (``ops.Custom``'s).
        out_dtype: The output dtype from the input dtypes (``ops.Custom``'s).
        bprop: The op's backward ``(*inputs, out, dout) -> input gradients``.

    Returns:
        The Custom op.
    """

    @functools.wraps(fn)
    def call(*args: Any) -> Any:
        _keep_thread_state()
        return fn(*args)

    return ops.Custom(
        call, out_shape=out_shape, out_dtype=out_dtype, func_type="pyfunc", bprop=bprop
    )


#: The messages of :func:`value_error_if`, registered when a graph is compiled.
_MESSAGES: List[str] = []


@constexpr
def _message_id(message: str) -> Tensor:
    """``[i]`` (int64), a constant of the graph: ``message`` is ``_MESSAGES[i]``."""
    if message not in _MESSAGES:
        _MESSAGES.append(message)
    return Tensor(np.array([_MESSAGES.index(message)], np.int64))


def _raise_if(flag: np.ndarray, which: np.ndarray) -> np.ndarray:
    if flag.any():
        raise ValueError(_MESSAGES[int(which[0])])
    return which


def _no_grad(flag: Tensor, which: Tensor, out: Tensor, dout: Tensor) -> Tuple[Tensor, Tensor]:
    return ops.zeros_like(flag), ops.zeros_like(which)


_RAISE_IF = python_op(
    _raise_if, lambda flag, which: which, lambda flag, which: which, bprop=_no_grad
)


class _Guard(nn.Cell):
    """``x``, with the check in the forward and in the backward: a graph that only
    differentiates drops the forward's check (its value unused), and would return the gradient
    of a call PyTorch refuses."""

    def construct(self, x: Tensor, flag: Tensor, which: Tensor) -> Tensor:
        return ops.depend(x, _RAISE_IF(flag, which))

    def bprop(
        self, x: Tensor, flag: Tensor, which: Tensor, out: Tensor, dout: Tensor
    ) -> Tuple[Tensor, Tensor, Tensor]:
        dx = ops.depend(dout, _RAISE_IF(flag, which))
        return dx, ops.zeros_like(flag), ops.zeros_like(which)


_GUARD = _Guard()


def value_error_if(x: Tensor, flag: Tensor, message: str) -> Tensor:
    """``x``, and ``ValueError(message)`` when the graph runs, if ``flag`` is true: for a
    refusal that depends on the values (PyTorch raises it eagerly), where ``if flag: raise``
    would split the graph at a branch. The check runs before ``x`` is used and before its
    gradient is. MindSpore 2.10 cannot run that graph again after it raised.

    Args:
        x: The tensor the check guards.
        flag: A boolean 0-d tensor.
        message: The error's text, a constant of the graph.

    Returns:
        ``x``.
    """
    return _GUARD(x, flag.astype(ms.int32).reshape((1,)), _message_id(message))
