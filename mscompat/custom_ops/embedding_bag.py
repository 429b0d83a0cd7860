"""Bindings of the embedding-bag kernels (``cpu/embedding_bag_kernel.cc``) as MindSpore Custom ops.

* ``BagSum``: modes ``'sum'`` and ``'mean'``, bag by bag in PyTorch's order; its bprop is
  ``BagSumGrad`` (the weight's gradient row by row, per_sample_weights' gradient).
* ``BagMax``: mode ``'max'``, the value and the row of every output element; its bprop is
  ``BagMaxGrad`` (the gradient added to those rows).

Each forward kernel also returns a status (0, or which of PyTorch's checks of the indices and
offsets failed), for the front door (``mscompat.layers.embedding``) to raise PyTorch's error.
The front door is the aot backend of ``layers.embedding_bag``; :data:`KERNELS` is indexed inside
graphs, filled by the registry's probe (:data:`LIBRARY`).
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np
from mindspore import Tensor, ops
from mindspore.ops import DataType, constexpr

from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, expect, shape_of, zeros
from mscompat.custom_ops.registry import device_target

__all__ = [
    "CONFIG_SIZE",
    "KERNELS",
    "LIBRARY",
    "STATUS_CHECK",
    "STATUS_OFFSETS_END",
    "STATUS_OFFSETS_START",
    "rows_of",
]

#: Length of the kernels' float64 configuration: [mode (0 sum, 1 mean, 2 max), padding_idx
#: (-1: none), unused, has per_sample_weights, max_norm (-1: none), norm_type,
#: scale_grad_by_freq].
CONFIG_SIZE = 7
#: The forward kernels' status values besides 0 (fine) and 1 (an index out of range).
STATUS_OFFSETS_START = 2  # offsets[0] != 0
STATUS_OFFSETS_END = 3  # offsets[-1] > the input's length

#: "op" -> the op ``(status, rows_of(num_embeddings)) -> status`` that raises PyTorch's error
#: for a forward kernel's non-zero status, set by the front door (``mscompat.layers.embedding``,
#: which owns the messages). The bprops run it too: a graph that only differentiates (the
#: forward's output unused) still checks.
STATUS_CHECK: Dict[str, Any] = {}

_ROWS = [(t, i) for t in FLOATS for i in (DataType.I32_Default, DataType.I64_Default)]
_INPUTS = "w idx:U off:U psw cfg:f64 bags:i8"


def _sum_shape(w: Any, idx: Any, off: Any, psw: Any, cfg: Any, bags: Any) -> Any:
    return [bags[0], w[1]], [1]


def _max_shape(w: Any, idx: Any, off: Any, psw: Any, cfg: Any, bags: Any) -> Any:
    return [bags[0], w[1]], [bags[0], w[1]], [1]


@constexpr
def rows_of(n: int) -> Tensor:
    """``[n]`` (int64), a constant of the graph: the table's rows for the messages."""
    return Tensor(np.array([n], np.int64))


def _sum_bprop(
    w: Tensor, idx: Tensor, off: Tensor, psw: Tensor, cfg: Tensor, bags: Tensor, out: Any, dout: Any
) -> Tuple[Tensor, ...]:
    """PyTorch's dense backward of 'sum'/'mean' (and of per_sample_weights)."""
    dw, dpsw = KERNELS[device_target()]["BagSumGrad"](dout[0], w, idx, off, psw, cfg)
    dw = ops.depend(dw, STATUS_CHECK["op"](out[1], rows_of(w.shape[0])))
    return (dw,) + zeros(idx, off) + (dpsw,) + zeros(cfg, bags)


def _max_bprop(
    w: Tensor, idx: Tensor, off: Tensor, psw: Tensor, cfg: Tensor, bags: Tensor, out: Any, dout: Any
) -> Tuple[Tensor, ...]:
    """PyTorch's backward of 'max': each output element's gradient added to its row."""
    dw = KERNELS[device_target()]["BagMaxGrad"](dout[0], out[1], w)
    dw = ops.depend(dw, STATUS_CHECK["op"](out[2], rows_of(w.shape[0])))
    return (dw,) + zeros(idx, off, psw, cfg, bags)


def _self_check(k: Dict[str, Any]) -> None:
    """Sums, means and maxima of small bags (an empty one, the padding row left out), their
    gradients, and the status of an index out of range."""
    w = Tensor(np.arange(6, dtype=np.float32).reshape(3, 2))
    idx = Tensor(np.array([0, 2, 1, 2, 0], np.int64))
    off = Tensor(np.array([0, 2, 2], np.int64))
    one = Tensor(np.zeros((1,), np.float32))
    bags = Tensor(np.zeros((3,), np.int8))
    # mean, padding_idx=0: bags [0, 2] -> row 2; [] -> 0; [1, 2, 0] -> mean of rows 1 and 2
    cfg = Tensor(np.array([1, 0, 0, 0, -1, 2, 0], np.float64))
    out, status = k["BagSum"](w, idx, off, one, cfg, bags)
    want = [[4.0, 5.0], [0.0, 0.0], [3.0, 4.0]]
    expect(out.asnumpy().tolist() == want and int(status[0]) == 0, "embedding_bag mean", out)
    dout = Tensor(np.array([[1.0, 2.0], [5.0, 5.0], [2.0, 4.0]], np.float32))
    dw, _ = k["BagSumGrad"](dout, w, idx, off, one, cfg)
    want = [[0.0, 0.0], [1.0, 2.0], [2.0, 4.0]]
    expect(dw.asnumpy().tolist() == want, "embedding_bag mean backward", dw)
    cfg = Tensor(np.array([2, -1, 0, 0, -1, 2, 0], np.float64))
    out, at, status = k["BagMax"](w, idx, off, one, cfg, bags)
    ok = at.asnumpy().tolist() == [[2, 2], [-1, -1], [2, 2]] and int(status[0]) == 0
    expect(ok and out.asnumpy().tolist()[1] == [0.0, 0.0], "embedding_bag max", out, at)
    dw = k["BagMaxGrad"](dout, at, w).asnumpy().tolist()
    expect(dw == [[0.0, 0.0], [0.0, 0.0], [3.0, 6.0]], "embedding_bag max backward", dw)
    bad = Tensor(np.array([0, 3, 1, 2, 0], np.int64))
    cfg = Tensor(np.array([0, -1, 0, 0, -1, 2, 0], np.float64))
    status = k["BagSum"](w, bad, off, one, cfg, bags)[1]
    expect(int(status[0]) == 1, "embedding_bag index check", status)


LIBRARY = KernelLibrary(
    "embedding_bag",
    [
        Entry("BagSum", f"{_INPUTS} -> out status:i64", _ROWS, _sum_shape, _sum_bprop),
        Entry("BagMax", f"{_INPUTS} -> out at:i64 status:i64", _ROWS, _max_shape, _max_bprop),
        Entry("BagSumGrad", "dout w idx:U off:U psw cfg:f64 -> dw dpsw", _ROWS, shape_of(1, 4)),
        Entry("BagMaxGrad", "dout at:i64 w -> dw", FLOATS, shape_of(2)),
    ],
    _self_check,
)
#: device -> entry point -> Custom op, filled by the registry's probe; indexed inside graphs.
KERNELS = LIBRARY.kernels
