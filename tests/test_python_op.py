"""``custom_ops.python_op``: a graph's Python op keeps its thread's Python state between calls."""

from __future__ import annotations

import ctypes
import threading
from typing import Any, List, Tuple

import mindspore as ms
import numpy as np
from mindspore import ops

from mscompat.custom_ops.python_op import python_op

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
