"""``grid_sample``: PyTorch's ``torch.nn.functional.grid_sample``, every mode, padding and dim.

Backends (``shape.grid_sample``): the composite (:mod:`mscompat.shape._grid_sample_composite`,
PyTorch's CPU kernels op for op); on CPU the ``aot`` kernels for 4-D float32/float64 (a C++ port
of PyTorch's CPU kernel, forward and backward) and 5-D float16 (the composite forward with
PyTorch's float16 backward loop in C++); ``ops.grid_sample`` (``native``) for bilinear float32
and 5-D float64, where its numbers are PyTorch's.
"""

from __future__ import annotations

import warnings
from typing import Any, Optional, Tuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from mscompat._checks import check_float_tensor
from mscompat.custom_ops import grid_sample as _grid_kernels
from mscompat.custom_ops.registry import TensorSpec, call, device_target, register
from mscompat.shape._grid_sample_composite import (
    _HALF_3D,
    _MODES,
    _PADDINGS,
    Rounder,
    _grid_sample_2d,
    _grid_sample_3d,
    _half_round,
    _identity,
    _options,
)

__all__ = ["grid_sample"]


# ----------------------------------------------------------------------------- dispatch


@register(
    "shape.grid_sample",
    "composite",
    note="batched gathers of the corners/taps, PyTorch's CPU kernels op for op",
)
def _grid_sample_composite(
    input: Tensor, grid: Tensor, mode: str, padding_mode: str, align_corners: bool
) -> Tensor:
    half = input.dtype == ms.float16
    r: Rounder = _half_round if half else _identity
    x = input.astype(ms.float32) if half else input
    g = grid.astype(ms.float32) if half else grid
    if input.ndim == 4:
        fused = input.dtype == ms.float32  # float32 only: float16 rounds op by op
        out = _grid_sample_2d(x, g, mode, padding_mode, align_corners, r, fused)
    elif half:
        return _HALF_3D["composite"][mode][padding_mode][align_corners](input, grid)
    else:
        out = _grid_sample_3d(x, g, mode, padding_mode, align_corners, r)
    return out.astype(ms.float16) if half else out


def _probe_native() -> None:
    x = Tensor(np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2))
    g = Tensor(np.array([[[[0.25, -0.5]]]], np.float32))
    got = ops.grid_sample(x, g, "bilinear", "zeros", False).asnumpy()
    if not np.allclose(got.reshape(-1), [0.75, 4.75]):
        raise RuntimeError(f"ops.grid_sample gave {got.reshape(-1)}")


def _native_supports(input: TensorSpec, grid: TensorSpec, mode: str, *_: Any) -> Optional[str]:
    # Measured on CPU, MindSpore 2.10: its nearest mode rounds halves away from zero (PyTorch:
    # to even), its 4-D float64 kernel computes in float32, its float16 results are not
    # PyTorch's, and it has no bicubic mode.
    if mode != "bilinear":
        return f"mode={mode!r}: MindSpore's kernel differs from PyTorch's (bilinear only)"
    if input.dtype == ms.float32 or (input.dtype == ms.float64 and input.ndim == 5):
        return None
    return f"{input.dtype_name} {input.ndim}-D: MindSpore's kernel differs from PyTorch's"


@register(
    "shape.grid_sample",
    "native",
    probe=_probe_native,
    note="ops.grid_sample (GridSampler2D/3D)",
    supports=_native_supports,
)
def _grid_sample_native(
    input: Tensor, grid: Tensor, mode: str, padding_mode: str, align_corners: bool
) -> Tensor:
    return ops.grid_sample(input, grid, mode, padding_mode, align_corners)


def _kernel_supports(input: TensorSpec, *_: Any) -> Optional[str]:
    if input.ndim == 4 and input.dtype in (ms.float32, ms.float64):
        return None
    if input.ndim == 5 and input.dtype == ms.float16:
        return None
    return f"{input.dtype_name} {input.ndim}-D is not supported by the kernels"


@_grid_kernels.LIBRARY.backend(
    "shape.grid_sample",
    "4-D float32/float64: C++ port of PyTorch's CPU kernel (its arithmetic, forward and "
    "backward); 5-D float16: the composite forward with PyTorch's float16 backward in C++",
    _kernel_supports,
)
def _grid_sample_aot(
    input: Tensor, grid: Tensor, mode: str, padding_mode: str, align_corners: bool
) -> Tensor:
    if input.ndim == 4:
        op = _grid_kernels.KERNELS[device_target()]["GridSample2d"]
        return op(input, grid, _options(mode, padding_mode, align_corners))
    return _HALF_3D["kernel"][mode][padding_mode][align_corners](input, grid)


def _warn_align_corners() -> None:
    warnings.warn(
        "Default grid_sample and affine_grid behavior has changed to align_corners=False since "
        "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
        "documentation of grid_sample for details.",
        UserWarning,
        stacklevel=3,
    )


def grid_sample(
    input: Tensor,
    grid: Tensor,
    mode: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: Optional[bool] = None,
) -> Tensor:
    """Sample ``input`` at the normalized locations of ``grid``.

    Mirrors ``torch.nn.functional.grid_sample``: same arguments, defaults and numbers. For 4-D
    ``input`` of shape :math:`(N, C, H_{in}, W_{in})` and ``grid`` of shape
    :math:`(N, H_{out}, W_{out}, 2)`, ``output[n, :, h, w]`` interpolates ``input[n]`` at
    ``grid[n, h, w] = (x, y)``, where :math:`x = -1` is the left border of the input and
    :math:`x = 1` the right one. The pixel coordinate is

    .. math::
        i_x = \\begin{cases}
        \\frac{x + 1}{2}\\,(W_{in} - 1) & \\text{align\\_corners=True (corner pixel centres)}\\\\
        \\frac{x + 1}{2}\\,W_{in} - \\frac{1}{2} & \\text{align\\_corners=False (pixel edges)}
        \\end{cases}

    For 5-D ``input`` :math:`(N, C, D_{in}, H_{in}, W_{in})`, ``grid`` is
    :math:`(N, D_{out}, H_{out}, W_{out}, 3)` with ``(x, y, z)`` and ``'bilinear'`` is
    trilinear.

    Args:
        input (Tensor[N, C, H_in, W_in] or Tensor[N, C, D_in, H_in, W_in]): float16, float32 or
            float64.
        grid (Tensor[N, H_out, W_out, 2] or Tensor[N, D_out, H_out, W_out, 3]): sampling
            locations, mostly in ``[-1, 1]``; same dtype as ``input``.
        mode (str): ``'bilinear'`` | ``'nearest'`` (rounds halves to even, as PyTorch) |
            ``'bicubic'`` (cubic convolution with A = -0.75, 4-D only). Default: ``'bilinear'``.
        padding_mode (str): ``'zeros'`` (0 outside) | ``'border'`` (clamp to the border) |
            ``'reflection'`` (mirror at the border, repeatedly). For ``'bicubic'`` the padding
            applies to each of the 4x4 taps. Default: ``'zeros'``.
        align_corners (bool, optional): whether -1 and 1 are the centres of the corner pixels
            (True) or their outer edges (False). Default ``None`` means False, with PyTorch's
            ``UserWarning``.

    Returns:
        Tensor: :math:`(N, C, H_{out}, W_{out})` or :math:`(N, C, D_{out}, H_{out}, W_{out})`,
        ``input``'s dtype. Differentiable w.r.t. ``input`` and ``grid`` (the grid gradient is 0
        for ``'nearest'``, and 0 for points clamped onto a border, as PyTorch).

    Raises:
        TypeError: ``input``/``grid`` not floating Tensors, of different dtypes, or
            ``align_corners`` not a bool.
        ValueError: unknown ``mode``/``padding_mode``; ``input`` not 4-D or 5-D; ``grid`` of
            another rank, batch size or last dim; ``'bicubic'`` with 5-D input; an empty
            spatial dim of ``input``.

    .. note::
        On CPU, 4-D float32/float64 input runs a C++ port of PyTorch's CPU kernel (``aot``,
        its arithmetic: bit-identical outputs and grid gradients on PyTorch's samples). Else
        MindSpore's ``GridSampler2D/3D`` kernel where it gives PyTorch's numbers
        (``'bilinear'``, float32, and float64 5-D; see :doc:`/api/custom_ops`), else the
        composite.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import grid_sample
        >>> x = ms.Tensor([[[[0.0, 1.0], [2.0, 3.0]]]])
        >>> grid = ms.Tensor([[[[0.0, 0.0], [0.5, -1.0]]]])
        >>> grid_sample(x, grid, align_corners=True)
        Tensor(shape=[1, 1, 1, 2], dtype=Float32, value=
        [[[[ 1.50000000e+00,  7.50000000e-01]]]])
        >>> grid_sample(x, grid, mode="nearest", align_corners=False)  # ties to even
        Tensor(shape=[1, 1, 1, 2], dtype=Float32, value=
        [[[[ 0.00000000e+00,  1.00000000e+00]]]])
    """
    input = check_float_tensor(input, "input")
    grid = check_float_tensor(grid, "grid")
    if mode not in _MODES:
        raise ValueError(
            f"grid_sample(): mode must be 'bilinear', 'nearest' or 'bicubic', but got {mode!r}"
        )
    if padding_mode not in _PADDINGS:
        raise ValueError(
            "grid_sample(): padding_mode must be 'zeros', 'border' or 'reflection', "
            f"but got {padding_mode!r}"
        )
    if align_corners is None:
        _warn_align_corners()
        align_corners = False
    if not isinstance(align_corners, bool):
        raise TypeError(
            f"grid_sample(): align_corners must be a bool or None, but got {align_corners!r}"
        )
    if input.dtype != grid.dtype:
        raise TypeError(
            "grid_sample(): grid must have the same dtype as input, "
            f"but got input.dtype={input.dtype} and grid.dtype={grid.dtype}"
        )
    if input.ndim not in (4, 5):
        raise ValueError(
            f"grid_sample(): input must be 4-D or 5-D, but got input of shape {input.shape}"
        )
    grid = _check_grid(input, grid, mode)
    if input.ndim == 4:
        n, c, ho, wo = input.shape[0], input.shape[1], grid.shape[1], grid.shape[2]
        out_shape: Tuple[int, ...] = (n, c, ho, wo)
    else:
        out_shape = (input.shape[0], input.shape[1]) + tuple(grid.shape[1:4])
    if 0 in out_shape:
        return ops.zeros(out_shape, input.dtype)
    return call("shape.grid_sample", input, grid, mode, padding_mode, align_corners)


def _check_grid(input: Tensor, grid: Tensor, mode: str) -> Tensor:
    nd = input.ndim - 2
    if grid.ndim != input.ndim:
        raise ValueError(
            f"grid_sample(): grid must have as many dims as input ({input.ndim}), "
            f"but got grid of shape {grid.shape} for input of shape {input.shape}"
        )
    if grid.shape[0] != input.shape[0]:
        raise ValueError(
            "grid_sample(): grid and input must have the same batch size, "
            f"but got input of shape {input.shape} and grid of shape {grid.shape}"
        )
    if grid.shape[-1] != nd:
        raise ValueError(
            f"grid_sample(): grid must have size {nd} in its last dim, "
            f"but got grid of shape {grid.shape}"
        )
    if mode == "bicubic" and nd != 2:
        raise ValueError(
            f"grid_sample(): mode='bicubic' only supports 4-D input, but got input of shape "
            f"{input.shape}"
        )
    for d in range(2, input.ndim):
        if input.shape[d] == 0:
            raise ValueError(
                "grid_sample(): input must have non-empty spatial dims, but got input of shape "
                f"{input.shape} with dim {d} being empty"
            )
    return grid
