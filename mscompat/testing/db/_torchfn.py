"""The table form shared by the op database entries of the ``torch.*`` functions that
``mint`` lacks on CPU (``db/math_torch_functions.py``, ``db/shape_torch_functions.py``): one
row per function, the reference converting a MindSpore ``dtype`` argument to PyTorch's."""

from __future__ import annotations

from typing import Any, Callable, Tuple

from mscompat.testing.db._common import torch_ref
from mscompat.testing.opinfo import OpInfo, TorchOpInfo

__all__ = ["row", "torch_dtype_ref"]


def torch_dtype_ref(path: str) -> Callable[..., Any]:
    """``torch_ref(path)`` with a ``dtype=mindspore.float64`` keyword given as ``torch.float64``
    (the samples pass our dtypes)."""
    ref = torch_ref(path)

    def call(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("dtype") is not None:
            import torch

            kwargs["dtype"] = getattr(torch, str(kwargs["dtype"]).lower())
        return ref(*args, **kwargs)

    call.__name__ = ref.__name__
    return call


def row(
    name: str,
    op: Any,
    samples: Any,
    errors: Any,
    dtypes: Tuple[str, ...],
    *,
    grad: Tuple[int, ...] = (0,),
    method: bool = True,
    path: str = "",
    opinfo: Tuple[TorchOpInfo, ...] = (),
    **extra: Any,
) -> OpInfo:
    """The entry ``<package>.<name>`` for ``torch.<name>`` (or ``path``), dispatched through the
    registry under the same name, a drop-in for ``torch.Tensor.<name>`` too when ``method``."""
    short = name.split(".", 1)[1]
    path = path or f"torch.{short}"
    extra.setdefault("dispatch_op", name)
    apis = (path,) + ((f"torch.Tensor.{short}",) if method else ())
    return OpInfo(
        name=name,
        op=op,
        ref=torch_dtype_ref(path),
        mirrors=path,
        torch_apis=apis,
        sample_inputs=samples,
        error_inputs=errors,
        dtypes=dtypes,
        grad_argnums=grad,
        torch_opinfo=opinfo,
        **extra,
    )
