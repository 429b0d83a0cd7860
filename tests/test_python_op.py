"""``custom_ops.python_op``: a graph's Python op keeps its thread's Python state between calls."""

from __future__ import annotations

import ctypes
import threading
from typing import Any, List, Tuple

import mindspore as ms
import numpy as np
import pytest
from mindspore import ops

from mscompat.custom_ops.python_op import python_op, value_error_if

_API = ctypes.pythonapi
_API.PyThreadState_Get.restype = ctypes.c_void_p
_API.PyThreadState_GetID.argtypes = [ctypes.c_void_p]
_API.PyThreadState_GetID.restype = ctypes.c_uint64
#: (thread, id of its Python thread state) per call: a new state gets a new id.
_SEEN: List[Tuple[int, int]] = []


def _record(x: np.ndarray) -> np.ndarray:
    _SEEN.append((threading.get_ident(), _API.PyThreadState_GetID(_API.PyThreadState_Get())))
    return x + 1


def _no_grad(x: Any, out: Any, dout: Any) -> Any:
    return (ops.zeros_like(x),)


_OP = python_op(_record, lambda s: s, lambda t: t, _no_grad)


@ms.jit
def _graph(x: ms.Tensor) -> ms.Tensor:
    return _OP(x) * 2


def test_python_op_runs_in_a_graph_and_keeps_its_thread_state() -> None:
    _SEEN.clear()
    x = ms.Tensor(np.arange(3, dtype=np.float32))
    for _ in range(4):
        np.testing.assert_array_equal(_graph(x).asnumpy(), [2.0, 4.0, 6.0])
    assert len(_SEEN) == 4, _SEEN
    # MindSpore 2.10 makes a Python thread state for every call on its runtime thread (a new
    # id each call) unless one is kept: the last three calls ran on one thread, one state.
    assert len({ident for ident, _ in _SEEN[1:]}) == 1, _SEEN
    assert len({state for _, state in _SEEN[1:]}) == 1, _SEEN


def _guarded(x: ms.Tensor) -> ms.Tensor:
    return (value_error_if(x * 3, x.sum() > 10, "the sum of x must be at most 10") ** 2).sum()


@pytest.mark.parametrize("build", [ms.jit, lambda f: ms.jit(ms.grad(f))], ids=["value", "grad"])
def test_value_error_if_raises_when_the_graph_runs(build) -> None:
    fn = build(_guarded)
    small = ms.Tensor(np.array([1.0, 2.0], np.float32))
    got = fn(small).asnumpy()
    want = 45.0 if got.ndim == 0 else [18.0, 36.0]  # sum (3x)^2, or its gradient 18 x
    np.testing.assert_allclose(got, want)
    # a graph that only differentiates runs the check in the backward
    with pytest.raises(ValueError, match="the sum of x must be at most 10"):
        build(_guarded)(ms.Tensor(np.array([5.0, 6.0], np.float32)))
