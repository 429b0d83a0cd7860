"""Code the case table names: scripted cases, adapted calls and NumPy references.

``cases.toml`` refers to these functions by name. Conventions:

* a scripted case's torch function (``torch = "..."``) and its MindSpore counterparts
  (``native``, ``adapted``) take the case's tensors positionally and return the outputs that are
  compared; for a ``torch.nn`` Module class they take nothing and return the module (or Cell),
  which the runner gives torch's parameters and calls on the inputs;
* an adapted call of a plain case takes the case's tensors (``gelu_exact(x)``);
* a NumPy reference (``reference = "..."``) takes the case's NumPy inputs.

The MindSpore functions are ordinary module-level functions, so ``ms.jit`` can parse them.
"""

from __future__ import annotations

from typing import Any, List, Sequence

import mindspore as ms
import numpy as np
import torch
from mindspore import mint, nn, ops
from mindspore.common.initializer import Constant, HeNormal, Normal, XavierUniform, initializer

# ----------------------------------------------------------------------------- helpers


class Loop(nn.Cell):
    """Runs ``x`` through every Cell of a CellList (a ModuleList's usual ``forward``)."""

    def __init__(self, layers: nn.CellList) -> None:
        super().__init__()
        self.layers = layers

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class DictLoop(nn.Cell):
    """Runs ``x`` through the Cells of a CellDict in the order of ``keys``."""

    def __init__(self, layers: nn.CellDict, keys: Sequence[str]) -> None:
        super().__init__()
        self.layers = layers
        self.keys = keys

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        for k in self.keys:
            x = self.layers[k](x)
        return x


class Scale(nn.Cell):
    """``x * w`` with a Parameter ``w`` of ``n`` halves."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.w = ms.Parameter(ms.Tensor(np.full((n,), 0.5, np.float32)), name="w")

    def construct(self, x: ms.Tensor) -> ms.Tensor:
        return x * self.w


class TLoop(torch.nn.Module):
    """Torch twin of :class:`Loop`."""

    def __init__(self, layers: torch.nn.ModuleList) -> None:
        super().__init__()
        self.layers = layers

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x)
        return x


class TDictLoop(torch.nn.Module):
    """Torch twin of :class:`DictLoop`."""

    def __init__(self, layers: torch.nn.ModuleDict, keys: Sequence[str]) -> None:
        super().__init__()
        self.layers = layers
        self.keys = list(keys)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for k in self.keys:
            x = self.layers[k](x)
        return x


class TScale(torch.nn.Module):
    """Torch twin of :class:`Scale`."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.w = torch.nn.Parameter(torch.full((n,), 0.5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.w


def _stats(a: np.ndarray, scale: float, bounded: bool) -> List[float]:
    """Mean, std (and max |w| when ``bounded``) in units of ``scale``, rounded to 0.1.

    Random initialisers are compared through these numbers: the same distribution gives the same
    rounded statistics on both sides, whatever the random stream.
    """
    a = a.astype(np.float64)
    out = [round(float(a.mean()) / scale, 1) + 0.0, round(float(a.std()) / scale, 1)]
    return out + [round(float(np.abs(a).max()) / scale, 1)] if bounded else out


# ----------------------------------------------------------------------------- adapted calls


def gelu_exact(t0: ms.Tensor) -> ms.Tensor:
    return ops.gelu(t0, approximate="none")


def interpolate_size_16(t0: ms.Tensor) -> ms.Tensor:
    return ops.interpolate(t0, size=(16, 16))


def conv2d_valid() -> nn.Cell:
    return nn.Conv2d(3, 4, 3, pad_mode="valid", has_bias=True)


def conv2d_pad1() -> nn.Cell:
    return nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)


def conv2d_1x1_no_bias() -> nn.Cell:
    return nn.Conv2d(3, 4, 1, pad_mode="valid")


def conv2d_stride2_pad1() -> nn.Cell:
    return nn.Conv2d(3, 4, 3, stride=2, pad_mode="pad", padding=1, has_bias=True)


def conv_transpose2d_valid() -> nn.Cell:
    return nn.Conv2dTranspose(3, 4, 2, stride=2, pad_mode="valid", has_bias=True)


def conv1d_valid() -> nn.Cell:
    return nn.Conv1d(3, 4, 3, pad_mode="valid", has_bias=True)


def dense_6_5() -> nn.Cell:
    return nn.Dense(6, 5)


def gelu_exact_cell() -> nn.Cell:
    return nn.GELU(approximate=False)


def max_pool2d_pad1() -> nn.Cell:
    return nn.MaxPool2d(3, 2, pad_mode="pad", padding=1)


# ----------------------------------------------------------------------------- containers


def sequential_torch() -> torch.nn.Module:
    return torch.nn.Sequential(torch.nn.Linear(6, 6), torch.nn.ReLU(), torch.nn.Linear(6, 5))


def sequential_cell() -> nn.Cell:
    return nn.SequentialCell([nn.Dense(6, 6), nn.ReLU(), nn.Dense(6, 5)])


def module_list_torch() -> torch.nn.Module:
    layers = [torch.nn.Linear(6, 6), torch.nn.ReLU(), torch.nn.Linear(6, 5)]
    return TLoop(torch.nn.ModuleList(layers))


def cell_list() -> nn.Cell:
    return Loop(nn.CellList([nn.Dense(6, 6), nn.ReLU(), nn.Dense(6, 5)]))


def module_dict_torch() -> torch.nn.Module:
    layers = torch.nn.ModuleDict({"fc": torch.nn.Linear(6, 5), "act": torch.nn.ReLU()})
    return TDictLoop(layers, ["fc", "act"])


def cell_dict() -> nn.Cell:
    return DictLoop(nn.CellDict({"fc": nn.Dense(6, 5), "act": nn.ReLU()}), ["fc", "act"])


def parameter_torch() -> torch.nn.Module:
    return TScale(6)


def parameter_cell() -> nn.Cell:
    return Scale(6)


# ----------------------------------------------------------------------------- autograd contexts


def no_grad_torch(t0: torch.Tensor) -> torch.Tensor:
    with torch.no_grad():
        y = t0 * 2.0
    return y + t0 * t0


def stop_gradient(t0: ms.Tensor) -> ms.Tensor:
    return ops.stop_gradient(t0 * 2.0) + t0 * t0


def enable_grad_torch(t0: torch.Tensor) -> torch.Tensor:
    with torch.no_grad(), torch.enable_grad():
        y = t0 * t0
    return y


def plain_square(t0: ms.Tensor) -> ms.Tensor:
    return t0 * t0


# ----------------------------------------------------------------------------- tensor creation


def tensor_torch() -> torch.Tensor:
    return torch.tensor([[1.0, 2.0], [3.0, 4.5]])


def tensor_function() -> ms.Tensor:
    return ms.tensor([[1.0, 2.0], [3.0, 4.5]])


def tensor_class() -> ms.Tensor:
    return ms.Tensor([[1.0, 2.0], [3.0, 4.5]])


def tensor_int_torch() -> torch.Tensor:
    return torch.tensor([1, 2, 3])


def tensor_int_function() -> ms.Tensor:
    return ms.tensor([1, 2, 3])


def tensor_int_class() -> ms.Tensor:
    return ms.Tensor([1, 2, 3])


def from_numpy_torch(t0: torch.Tensor) -> torch.Tensor:
    return torch.from_numpy(t0.numpy())


def from_numpy_function(t0: ms.Tensor) -> ms.Tensor:
    return ms.from_numpy(t0.asnumpy())


def from_numpy_method(t0: ms.Tensor) -> ms.Tensor:
    return ms.Tensor.from_numpy(t0.asnumpy())


def as_tensor_torch(t0: torch.Tensor) -> torch.Tensor:
    return torch.as_tensor(t0.numpy())


def as_tensor_function(t0: ms.Tensor) -> ms.Tensor:
    return ms.tensor(t0.asnumpy())


def as_tensor_class(t0: ms.Tensor) -> ms.Tensor:
    return ms.Tensor(t0.asnumpy())


# ----------------------------------------------------------------------------- initialisers


def constant_init_torch(t0: torch.Tensor) -> torch.Tensor:
    return torch.nn.init.constant_(t0.clone(), 0.5)


def constant_init_ms(t0: ms.Tensor) -> ms.Tensor:
    w = ms.Parameter(t0 + 0, name="w")
    w.set_data(initializer(Constant(0.5), w.shape, w.dtype))
    return w + 0


def normal_init_torch() -> List[float]:
    return _stats(torch.nn.init.normal_(torch.empty(256, 64), 0.0, 0.02).numpy(), 0.02, False)


def normal_init_ms() -> List[float]:
    return _stats(initializer(Normal(0.02, 0.0), (256, 64), ms.float32).asnumpy(), 0.02, False)


def xavier_uniform_init_torch() -> List[float]:
    return _stats(torch.nn.init.xavier_uniform_(torch.empty(64, 128)).numpy(), 0.102, True)


def xavier_uniform_init_ms() -> List[float]:
    return _stats(initializer(XavierUniform(), (64, 128), ms.float32).asnumpy(), 0.102, True)


def kaiming_normal_init_torch() -> List[float]:
    return _stats(torch.nn.init.kaiming_normal_(torch.empty(64, 128)).numpy(), 0.125, False)


def kaiming_normal_init_ms() -> List[float]:
    return _stats(initializer(HeNormal(), (64, 128), ms.float32).asnumpy(), 0.125, False)


# ----------------------------------------------------------------------------- optimizers
# Three steps on a Parameter with loss 0.5 * sum(t1 * p**2), whose gradient is t1 * p.


def _torch_steps(t0: torch.Tensor, t1: torch.Tensor, make: Any) -> torch.Tensor:
    p = torch.nn.Parameter(t0.clone())
    opt = make([p])
    for _ in range(3):
        opt.zero_grad()
        (0.5 * t1 * p * p).sum().backward()
        opt.step()
    return p.detach()


def _ms_steps(t0: ms.Tensor, t1: ms.Tensor, make: Any) -> ms.Tensor:
    p = ms.Parameter(t0 + 0, name="p")
    opt = make([p])
    for _ in range(3):
        opt((t1 * p,))
    return p + 0


def sgd_torch(t0: torch.Tensor, t1: torch.Tensor) -> torch.Tensor:
    return _torch_steps(t0, t1, lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9))


def sgd_mint(t0: ms.Tensor, t1: ms.Tensor) -> ms.Tensor:
    return _ms_steps(t0, t1, lambda ps: mint.optim.SGD(ps, lr=0.1, momentum=0.9))


def sgd_nn(t0: ms.Tensor, t1: ms.Tensor) -> ms.Tensor:
    return _ms_steps(t0, t1, lambda ps: nn.SGD(ps, learning_rate=0.1, momentum=0.9))


def adam_torch(t0: torch.Tensor, t1: torch.Tensor) -> torch.Tensor:
    return _torch_steps(t0, t1, lambda ps: torch.optim.Adam(ps, lr=0.01))


def adam_mint(t0: ms.Tensor, t1: ms.Tensor) -> ms.Tensor:
    return _ms_steps(t0, t1, lambda ps: mint.optim.Adam(ps, lr=0.01))


def adam_nn(t0: ms.Tensor, t1: ms.Tensor) -> ms.Tensor:
    return _ms_steps(t0, t1, lambda ps: nn.Adam(ps, learning_rate=0.01))


def adamw_torch(t0: torch.Tensor, t1: torch.Tensor) -> torch.Tensor:
    return _torch_steps(t0, t1, lambda ps: torch.optim.AdamW(ps, lr=0.01))


def adamw_mint(t0: ms.Tensor, t1: ms.Tensor) -> ms.Tensor:
    return _ms_steps(t0, t1, lambda ps: mint.optim.AdamW(ps, lr=0.01))


def adamw_nn(t0: ms.Tensor, t1: ms.Tensor) -> ms.Tensor:
    return _ms_steps(
        t0, t1, lambda ps: nn.AdamWeightDecay(ps, learning_rate=0.01, weight_decay=0.01)
    )


# ----------------------------------------------------------------------------- NumPy references


def nms_reference(boxes: np.ndarray, scores: np.ndarray, thr: float) -> np.ndarray:
    """Greedy NMS (torchvision's semantics: suppress IoU > thr), indices by falling score."""
    order = np.argsort(-scores, kind="stable")
    keep: List[int] = []
    area = (boxes[:, 2] - boxes[:, 0]) * (boxes[:, 3] - boxes[:, 1])
    suppressed = np.zeros(len(boxes), bool)
    for a in order:
        if suppressed[a]:
            continue
        keep.append(int(a))
        lt = np.maximum(boxes[a, :2], boxes[:, :2])
        rb = np.minimum(boxes[a, 2:], boxes[:, 2:])
        wh = np.clip(rb - lt, 0, None)
        inter = wh[:, 0] * wh[:, 1]
        iou = inter / (area[a] + area - inter)
        suppressed |= iou > thr
    return np.asarray(keep, np.int64)


def box_iou_reference(b1: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """Pairwise IoU of xyxy boxes, ``[N, M]``."""
    a1 = (b1[:, 2] - b1[:, 0]) * (b1[:, 3] - b1[:, 1])
    a2 = (b2[:, 2] - b2[:, 0]) * (b2[:, 3] - b2[:, 1])
    lt = np.maximum(b1[:, None, :2], b2[None, :, :2])
    rb = np.minimum(b1[:, None, 2:], b2[None, :, 2:])
    wh = np.clip(rb - lt, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    return (inter / (a1[:, None] + a2[None, :] - inter)).astype(np.float32)
