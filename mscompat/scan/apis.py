"""The PyTorch-side vocabulary of the scan's parser: which names are APIs to report, what their
canonical spelling is, which methods only a tensor has, which calls do not return a tensor, and
which calls have a value-dependent output shape (a risk flag)."""

from __future__ import annotations

import sys

__all__ = [
    "DATA_ROOTS",
    "DYNAMIC_SHAPE_APIS",
    "NON_TENSOR_RESULTS",
    "NON_TENSOR_ROOTS",
    "NON_TENSOR_TORCH",
    "TENSOR_ONLY_METHODS",
    "TRACKED_ROOTS",
    "MINDSPORE_NAMESPACES",
    "STATIC_VARIANTS",
    "canonical",
    "is_module_class",
    "is_reported",
]

#: Top-level packages whose names the parser resolves: the PyTorch side, and MindSpore (a
#: half-ported code base calls ``mindspore.mint``/``ops``/``nn``).
TRACKED_ROOTS = frozenset({"torch", "torchvision", "mmcv", "mmdet", "mmengine", "mindspore"})
#: The MindSpore namespaces whose calls are reported (with their measured or documented
#: support on the chosen backend); other ``mindspore.*`` names (``Tensor``, ``jit``,
#: ``set_context``) are not APIs a port replaces.
MINDSPORE_NAMESPACES = ("mindspore.mint.", "mindspore.ops.", "mindspore.nn.")
#: Top-level packages whose calls inside ``forward`` are data processing.
DATA_ROOTS = frozenset({"numpy", "cv2", "PIL", "scipy", "pandas", "skimage"})
#: Top-level packages none of whose values is a torch tensor: the data libraries and Python's
#: standard library. A value one of them returns (``np.zeros(3)``, ``logging.getLogger()``) and
#: what its methods return are never receivers of tensor methods; other third-party libraries
#: (``transformers``, ``timm``) may return tensors and are left unknown.
NON_TENSOR_ROOTS = DATA_ROOTS | frozenset(sys.stdlib_module_names) | {"matplotlib", "tqdm"}
#: Methods only a tensor has: counted on any receiver not known to be something else.
TENSOR_ONLY_METHODS = frozenset(
    {
        "contiguous", "expand_as", "masked_fill", "masked_fill_", "masked_select", "new_empty",
        "new_full", "new_ones", "new_tensor", "new_zeros", "nonzero", "numel", "permute",
        "sigmoid", "sigmoid_", "softmax", "log_softmax", "topk", "type_as", "unsqueeze",
        "unsqueeze_", "view", "view_as", "clamp", "clamp_", "detach", "index_select",
        "masked_scatter", "scatter_", "scatter_add_", "index_fill_", "repeat_interleave",
        "backward",
    }
)  # fmt: skip
#: Tensor methods whose result is not a tensor.
NON_TENSOR_RESULTS = frozenset(
    {"item", "tolist", "numpy", "size", "dim", "numel", "ndimension", "data_ptr", "element_size",
     "is_contiguous", "stride", "nelement", "get_device", "storage"}
)  # fmt: skip
#: ``torch.*`` callables whose result is not a tensor (or not interesting as one).
NON_TENSOR_TORCH = frozenset(
    {"torch.device", "torch.no_grad", "torch.enable_grad", "torch.set_grad_enabled",
     "torch.is_tensor", "torch.manual_seed", "torch.load", "torch.save", "torch.Size",
     "torch.cuda.is_available", "torch.cuda.device_count", "torch.get_default_dtype",
     "torch.is_grad_enabled", "torch.jit.script", "torch.jit.trace", "torch.compile"}
)  # fmt: skip
#: Calls whose output shape depends on the values: dynamic shapes in graph mode.
DYNAMIC_SHAPE_APIS = {
    "torch.masked_select": "output length depends on the mask",
    "torch.Tensor.masked_select": "output length depends on the mask",
    "torch.nonzero": "output length depends on the values",
    "torch.Tensor.nonzero": "output length depends on the values",
    "torch.argwhere": "output length depends on the values",
    "torch.Tensor.argwhere": "output length depends on the values",
    "torch.unique": "output length depends on the values",
    "torch.Tensor.unique": "output length depends on the values",
    "torch.unique_consecutive": "output length depends on the values",
    "torch.Tensor.unique_consecutive": "output length depends on the values",
    "torchvision.ops.nms": "number of kept boxes depends on the values",
    "torchvision.ops.batched_nms": "number of kept boxes depends on the values",
    "torchvision.ops.remove_small_boxes": "number of kept boxes depends on the values",
    "mmcv.ops.nms": "number of kept boxes depends on the values",
    "mmcv.ops.batched_nms": "number of kept boxes depends on the values",
}
_NONZERO = "mscompat.tensor.nonzero_static(input, size=K, fill_value=-1)"
_UNIQUE = "mscompat.tensor.unique(input, ..., size=K, fill_value=...)"
_NMS = "max_output=K: mscompat.vision.nms / batched_nms return (indices padded with -1, count)"
#: The static-shape variant to use in graph mode instead of a dynamic-shape API (the migration
#: guide's answer to dynamic shape): named by the dynamic-shape risk flag.
STATIC_VARIANTS = {
    "torch.masked_select": "mscompat.tensor.masked_select(input, mask, size=K, fill_value=0)",
    "torch.Tensor.masked_select": "mscompat.tensor.masked_select(x, mask, size=K, fill_value=0)",
    "torch.nonzero": _NONZERO,
    "torch.Tensor.nonzero": _NONZERO,
    "torch.argwhere": _NONZERO,
    "torch.Tensor.argwhere": _NONZERO,
    "torch.unique": _UNIQUE,
    "torch.Tensor.unique": _UNIQUE,
    "torch.unique_consecutive": "mscompat.tensor.unique_consecutive(input, ..., size=K)",
    "torch.Tensor.unique_consecutive": "mscompat.tensor.unique_consecutive(input, ..., size=K)",
    "torchvision.ops.nms": _NMS,
    "torchvision.ops.batched_nms": _NMS,
    "mmcv.ops.nms": _NMS,
    "mmcv.ops.batched_nms": _NMS,
    "topk": "a fixed k, or mscompat.indexing.topk_mask(input, k, dim) (a mask, static shape)",
    "boolean mask indexing": (
        "mscompat.tensor.masked_select(x, mask, size=K), or keep the shape: "
        "ops.where(mask, x, 0) / x * mask"
    ),
}
# module path spellings that name the same public API
_CANONICAL_PREFIXES = (
    ("torchvision.ops.boxes.", "torchvision.ops."),
    ("torchvision.ops.focal_loss.", "torchvision.ops."),
    ("torchvision.ops.roi_align.", "torchvision.ops."),
    ("torchvision.ops.roi_pool.", "torchvision.ops."),
    ("torchvision.ops.deform_conv.", "torchvision.ops."),
    ("torchvision.ops.feature_pyramid_network.", "torchvision.ops."),
    ("torchvision.ops.misc.", "torchvision.ops."),
    ("torchvision.ops.poolers.", "torchvision.ops."),
    ("torch.functional.", "torch."),
    ("torch._C._nn.", "torch.nn.functional."),
    ("torch.nn.modules.module.", "torch.nn."),
)


def canonical(name: str) -> str:
    """``torchvision.ops.boxes.nms`` -> ``torchvision.ops.nms``, ``torch.nn.modules.conv.Conv2d``
    -> ``torch.nn.Conv2d``."""
    for old, new in _CANONICAL_PREFIXES:
        if name.startswith(old):
            return new + name[len(old) :]
    if name.startswith("torch.nn.modules."):
        parts = name.split(".")
        if len(parts) >= 5:
            return "torch.nn." + parts[-1]
    return name


def is_reported(name: str) -> bool:
    """Whether a resolved name is an API call site to report: any PyTorch-side name, and
    MindSpore's under :data:`MINDSPORE_NAMESPACES`."""
    if name.startswith("mindspore."):
        return name.startswith(MINDSPORE_NAMESPACES)
    return name.split(".", 1)[0] != "mindspore"


def is_module_class(name: str) -> bool:
    """``torch.nn.Conv2d``-like names: a class (capitalised last part) under torch.nn or a
    detection library (a Module built, then called)."""
    last = name.rsplit(".", 1)[-1]
    if not last[:1].isupper():
        return False
    prefixes = ("torch.nn.", "torchvision.ops.", "mmcv.", "mmdet.", "mindspore.nn.")
    return (name.startswith(prefixes) or name.startswith("mindspore.mint.nn.")) and not (
        name.startswith(("torch.nn.functional.", "mindspore.mint.nn.functional."))
        or name == "torch.nn.Parameter"
    )
