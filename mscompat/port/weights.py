"""Convert a PyTorch model's parameters and buffers into a MindSpore Cell, by module structure.

PyTorch and MindSpore name most parameters alike when the port keeps the module tree
(``backbone.layer1.0.conv1.weight``), but not all: MindSpore's BatchNorm and InstanceNorm call
them ``gamma``, ``beta``, ``moving_mean``, ``moving_variance``, its LayerNorm and GroupNorm
``gamma``, ``beta``, its ``nn.PReLU`` ``w``, its ``nn.Embedding`` ``embedding_table``, and
PyTorch's BatchNorm has a ``num_batches_tracked`` counter MindSpore does not keep. Layouts differ
in one place: MindSpore's ``nn.Conv1d``/``nn.Conv1dTranspose`` keep a 4-D weight
``(out, in, 1, k)`` where PyTorch's is ``(out, in, k)`` (a reshape; the 2-D and 3-D
convolutions and transposed convolutions share PyTorch's layouts). This module pairs the two
sides by name after those renames, checks every shape, loads what matches, and reports
everything else: nothing is skipped silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union

import numpy as np

__all__ = [
    "WeightRow",
    "WeightTable",
    "convert_weights",
    "load_checkpoint",
    "save_checkpoint",
    "torch_to_mindspore_names",
    "unit_dims_only",
]

#: PyTorch's BatchNorm parameter and buffer names -> MindSpore's ``nn.BatchNorm*d``.
BATCHNORM_NAMES = {
    "weight": "gamma",
    "bias": "beta",
    "running_mean": "moving_mean",
    "running_var": "moving_variance",
}
_AFFINE_NAMES = {"weight": "gamma", "bias": "beta"}
#: PyTorch module type -> {its parameter name: MindSpore's counterpart's}.
RENAMES: Dict[str, Dict[str, str]] = {
    **{t: BATCHNORM_NAMES for t in ("BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm")},
    **{t: BATCHNORM_NAMES for t in ("InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d")},
    "LayerNorm": _AFFINE_NAMES,
    "GroupNorm": _AFFINE_NAMES,
    "PReLU": {"weight": "w"},
    "Embedding": {"weight": "embedding_table"},
}
#: Buffers PyTorch keeps and MindSpore has no counterpart for.
# (loaded, as any tensor, into a Cell that has a parameter of that name: mscompat's BatchNorm)
DROPPED = {"num_batches_tracked": "BatchNorm's step counter: MindSpore keeps none"}


@dataclass
class WeightRow:
    """One PyTorch tensor and what became of it.

    Attributes:
        torch_name: the state-dict key (``""`` for a Cell parameter PyTorch has no value for).
        ms_name: the Cell's parameter name (``""`` when unmatched or dropped).
        torch_shape, ms_shape: the shapes on each side.
        transform: ``"copy"``, ``"rename"`` (BatchNorm, LayerNorm, Embedding…), ``"reshape"``
            (the same values with unit dims added or removed: MindSpore's 1-D convolutions),
            ``"dropped"``.
        status: ``"loaded"``, ``"dropped"``, ``"unmatched"`` (no Cell parameter of that name),
            ``"shape mismatch"``, ``"missing"`` (a Cell parameter no PyTorch tensor fills).
        note: why, for anything that is not ``loaded``.
    """

    torch_name: str
    ms_name: str
    torch_shape: Tuple[int, ...]
    ms_shape: Tuple[int, ...]
    transform: str
    status: str
    note: str = ""


@dataclass
class WeightTable:
    """What :func:`convert_weights` did, row by row."""

    rows: List[WeightRow] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Every Cell parameter filled and every PyTorch tensor used or knowingly dropped."""
        return all(r.status in ("loaded", "dropped") for r in self.rows)

    def problems(self) -> List[WeightRow]:
        return [r for r in self.rows if r.status not in ("loaded", "dropped")]

    def counts(self) -> Dict[str, int]:
        out: Dict[str, int] = {}
        for r in self.rows:
            out[r.status] = out.get(r.status, 0) + 1
        return dict(sorted(out.items()))

    def render(self) -> str:
        """A fixed-width text table, problems first."""
        head = ("torch name", "mindspore name", "torch shape", "ms shape", "transform", "status")
        order = {"shape mismatch": 0, "unmatched": 1, "missing": 2, "dropped": 3, "loaded": 4}
        rows = sorted(self.rows, key=lambda r: order.get(r.status, 0))
        body = [
            (r.torch_name, r.ms_name, str(r.torch_shape), str(r.ms_shape), r.transform,
             r.status + (f" ({r.note})" if r.note else ""))
            for r in rows
        ]  # fmt: skip
        widths = [max(len(str(x[i])) for x in [head, *body]) for i in range(len(head) - 1)]
        lines = []
        for row in [head, *body]:
            lines.append("  ".join(str(c).ljust(w) for c, w in zip(row, widths)) + "  " + row[-1])
        counts = ", ".join(f"{v} {k}" for k, v in sorted(self.counts().items()))
        return "\n".join(lines + [f"{len(self.rows)} rows: {counts}"])

    def __str__(self) -> str:
        return self.render()


def _module_types(module: Any) -> Dict[str, str]:
    """``{module path: class name}`` of a torch module tree."""
    return {name: type(m).__name__ for name, m in module.named_modules()}


def torch_to_mindspore_names(
    state_dict_keys: List[str], module_types: Optional[Mapping[str, str]] = None
) -> Dict[str, Tuple[List[str], str]]:
    """``{torch key: ([MindSpore names to try, in order], transform)}``.

    A key under a module :data:`RENAMES` knows (its type from ``module_types``; in a bare state
    dict, a prefix that also has ``running_mean`` is a BatchNorm) gets MindSpore's name first and
    its own name second (mscompat's Cells, ``FrozenBatchNorm2d`` among them, keep PyTorch's
    names); in a bare state dict a ``weight`` may also be an ``nn.Embedding``'s
    ``embedding_table``.

    Example:
        >>> torch_to_mindspore_names(["bn.weight", "bn.running_mean", "fc.weight"])["bn.weight"]
        (['bn.gamma', 'bn.weight'], 'rename')
    """
    keys = set(state_dict_keys)
    out: Dict[str, Tuple[List[str], str]] = {}
    for key in state_dict_keys:
        prefix, _, leaf = key.rpartition(".")
        dot = f"{prefix}." if prefix else ""
        if module_types:
            renames = RENAMES.get(module_types.get(prefix, ""), {})
        elif f"{prefix}.running_mean" in keys:
            renames = BATCHNORM_NAMES
        else:
            renames = {}
        if leaf in renames:
            out[key] = ([dot + renames[leaf], key], "rename")
        elif leaf == "weight" and not module_types:  # a bare state dict: maybe an Embedding
            out[key] = ([key, dot + "embedding_table"], "copy")
        else:
            out[key] = ([key], "copy")
    return out


def unit_dims_only(a: Tuple[int, ...], b: Tuple[int, ...]) -> bool:
    """Whether shapes ``a`` and ``b`` differ only by dims of size 1 (the same values in the
    same order: a reshape)."""
    return a != b and [d for d in a if d != 1] == [d for d in b if d != 1]


def _numpy(value: Any) -> np.ndarray:
    detach = getattr(value, "detach", None)
    if detach is not None:
        return np.asarray(detach().cpu().numpy())
    return np.asarray(value)


def _cell_parameters(cell: Any) -> Dict[str, Any]:
    return {name: p for name, p in cell.parameters_and_names()}


def convert_weights(
    torch_module_or_state_dict: Any, cell: Any, *, load: bool = True
) -> WeightTable:
    """Copy a PyTorch model's parameters and buffers into ``cell``, paired by name.

    Args:
        torch_module_or_state_dict: a ``torch.nn.Module`` (its module types decide the renames)
            or a state dict (``{name: tensor or array}``; BatchNorm recognised by its
            ``running_mean``).
        cell: the MindSpore port (a ``mindspore.nn.Cell`` whose module tree follows PyTorch's).
        load: set each matched parameter's data (``False``: only report).

    Returns:
        :class:`WeightTable`: one row per PyTorch tensor (loaded, dropped, unmatched or shape
        mismatch) and one per Cell parameter no tensor filled (missing). Shape-mismatched and
        unmatched entries are never loaded; check ``table.ok`` or print the table.

    Raises:
        TypeError: ``cell`` has no ``parameters_and_names``, or the first argument is neither a
            module nor a mapping.

    Example:
        >>> import torch, mindspore as ms
        >>> from mindspore import nn
        >>> t = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
        >>> m = nn.SequentialCell([nn.Dense(3, 2), nn.BatchNorm1d(2)])
        >>> table = convert_weights(t, m)
        >>> table.ok, table.counts()
        (True, {'dropped': 1, 'loaded': 6})
    """
    if not hasattr(cell, "parameters_and_names"):
        raise TypeError(f"cell must be a mindspore.nn.Cell, but got {type(cell).__name__}")
    if hasattr(torch_module_or_state_dict, "state_dict"):
        state = dict(torch_module_or_state_dict.state_dict(keep_vars=False))
        types: Optional[Dict[str, str]] = _module_types(torch_module_or_state_dict)
    elif isinstance(torch_module_or_state_dict, Mapping):
        state, types = dict(torch_module_or_state_dict), None
    else:
        raise TypeError(
            "torch_module_or_state_dict must be a torch.nn.Module or a state dict, but got "
            f"{type(torch_module_or_state_dict).__name__}"
        )
    params = _cell_parameters(cell)
    names = torch_to_mindspore_names(list(state), types)
    table = WeightTable()
    used = set()
    for key, value in state.items():
        array = _numpy(value)
        torch_shape = tuple(array.shape)
        leaf = key.rpartition(".")[2]
        if leaf in DROPPED and key not in params:  # mscompat.nn.BatchNorm*d keeps its own
            table.rows.append(
                WeightRow(key, "", array.shape, (), "dropped", "dropped", DROPPED[leaf])
            )
            continue
        candidates, transform = names[key]
        target = next((c for c in candidates if c in params and c not in used), None)
        if target is None:
            table.rows.append(
                WeightRow(key, "", array.shape, (), transform, "unmatched",
                          f"no Cell parameter named {' or '.join(candidates)}")
            )  # fmt: skip
            continue
        param = params[target]
        ms_shape = tuple(param.shape)
        if unit_dims_only(tuple(array.shape), ms_shape):
            array, transform = array.reshape(ms_shape), "reshape"
        if tuple(array.shape) != ms_shape:
            table.rows.append(
                WeightRow(key, target, torch_shape, ms_shape, transform, "shape mismatch")
            )
            used.add(target)
            continue
        if load:
            import mindspore as ms

            param.set_data(ms.Tensor(array, dtype=param.dtype))
        used.add(target)
        if transform != "reshape":
            transform = "copy" if target == key else "rename"
        table.rows.append(WeightRow(key, target, torch_shape, ms_shape, transform, "loaded"))
    for name, param in params.items():
        if name not in used:
            table.rows.append(
                WeightRow("", name, (), tuple(param.shape), "", "missing",
                          "no PyTorch tensor fills this parameter")
            )  # fmt: skip
    return table


def save_checkpoint(cell: Any, path: Union[str, Path]) -> Path:
    """Save ``cell``'s parameters as a MindSpore ``.ckpt`` (``mindspore.save_checkpoint``)."""
    import mindspore as ms

    out = Path(path)
    if out.suffix != ".ckpt":
        raise ValueError(f"path must end in .ckpt, but got {str(path)!r}")
    ms.save_checkpoint(cell, str(out))
    return out


def load_checkpoint(cell: Any, path: Union[str, Path]) -> List[str]:
    """Load a ``.ckpt`` into ``cell``; returns the Cell parameters it did not fill.

    Raises:
        FileNotFoundError: no such file.
    """
    import mindspore as ms

    if not Path(path).is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    not_loaded, _ = ms.load_param_into_net(cell, ms.load_checkpoint(str(path)))
    return list(not_loaded)
