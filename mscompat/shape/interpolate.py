"""Resampling with PyTorch semantics: ``interpolate``, the ``upsample`` functions and their Cells.

Mirrors ``torch.nn.functional.interpolate`` (every mode: ``nearest``, ``nearest-exact``,
``linear``, ``bilinear``, ``bicubic``, ``trilinear``, ``area``; ``antialias`` for bilinear and
bicubic), ``upsample``, ``upsample_nearest``, ``upsample_bilinear``, ``nn.Upsample``,
``nn.UpsamplingNearest2d`` and ``nn.UpsamplingBilinear2d``.

Resampling is separable: each spatial axis is resampled on its own. Shapes are static, so the
per-axis source indices and weights are computed in NumPy when the call is traced, with
PyTorch's CPU arithmetic (coordinates in float32 for float16/float32 inputs, float64 for
float64), and applied with MindSpore ops: a broadcast (integer nearest upsampling), a gather
(other nearest), a reshape-mean (area with an integer ratio) or a matrix product with the
``(out, in)`` weight matrix (linear, bicubic, antialias, area). Gradients follow automatically.

Backends (``shape.interpolate``): on CPU the ``aot`` kernels run ``nearest``/``nearest-exact``
(``custom_ops/cpu/nearest_kernel.cc``: the same index tables, PyTorch's scatter-add backward)
and ``linear``/``bilinear``/``trilinear`` (``custom_ops/cpu/linear_kernel.cc``: the same index
and weight tables, PyTorch's CPU arithmetic and backward loop; float16 in float32 with float16
forward weights) and ``bicubic``
without antialias (``custom_ops/cpu/cubic_kernel.cc``: PyTorch's source coordinates, Keys'
coefficients and arithmetic, forward and backward; float16 with float16 weights);
``ops.interpolate`` (``native``) runs float32 linear modes where its rounding gives PyTorch's
numbers; everything else is the composite above.
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import (
    check_finite_number,
    check_float_tensor,
    check_number,
    check_numel,
    check_tensor,
    is_int,
)
from mscompat.custom_ops.registry import call
from mscompat.shape import _interpolate_backends  # noqa: F401 - registers the backends
from mscompat.shape._resample_tables import _MODE_DIMS

__all__ = [
    "Upsample",
    "UpsamplingBilinear2d",
    "UpsamplingNearest2d",
    "interpolate",
    "upsample",
    "upsample_bilinear",
    "upsample_nearest",
]

Size = Union[int, Sequence[int], None]
Scale = Union[float, Sequence[float], None]

_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "bicubic", "trilinear", "area")
_NO_CORNERS = ("nearest", "nearest-exact", "area")


# ----------------------------------------------------------------------------- argument plan


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)


@constexpr
def _plan(
    shape: Tuple[int, ...],
    size: Any,
    scale_factor: Any,
    mode: Any,
    align_corners: Any,
    recompute_scale_factor: Any,
    antialias: Any,
) -> Tuple[Tuple[int, ...], Tuple[Optional[float], ...], bool]:
    """Validate as ``torch.nn.functional.interpolate``; return (output sizes, scales, corners).

    ``scales`` holds, per axis, the scale factor PyTorch's kernel uses in the coordinate
    transform (None: derived from the sizes).
    """
    if not isinstance(mode, str) or mode not in _MODES:
        raise ValueError(f"mode must be one of {', '.join(map(repr, _MODES))}, but got {mode!r}")
    if mode in _NO_CORNERS:
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                f"linear | bilinear | bicubic | trilinear, but got mode={mode!r} and "
                f"align_corners={align_corners!r}"
            )
        corners = False
    else:
        if align_corners is not None and not isinstance(align_corners, bool):
            raise TypeError(f"align_corners must be a bool or None, but got {align_corners!r}")
        corners = bool(align_corners)
    if not isinstance(antialias, bool):
        raise TypeError(f"antialias must be a bool, but got {antialias!r}")
    if recompute_scale_factor is not None and not isinstance(recompute_scale_factor, bool):
        raise TypeError(
            f"recompute_scale_factor must be a bool or None, but got {recompute_scale_factor!r}"
        )
    ndim = len(shape)
    if ndim not in (3, 4, 5):
        raise ValueError(
            "input must be 3-D, 4-D or 5-D (N, C, d1[, d2[, d3]]) for mode "
            f"{mode!r}, but got input of shape {tuple(shape)}"
        )
    dim = ndim - 2
    if mode in _MODE_DIMS and _MODE_DIMS[mode] != dim:
        need = _MODE_DIMS[mode] + 2
        raise ValueError(
            f"mode={mode!r} needs {need}-D input, but got input of shape {tuple(shape)} ({ndim}-D)"
        )
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError(
            "antialias=True is restricted to the bilinear and bicubic modes with a 4-D input, "
            f"but got mode={mode!r}"
        )
    spatial = tuple(int(n) for n in shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError(
            "only one of size or scale_factor should be defined, but got "
            f"size={size!r} and scale_factor={scale_factor!r}"
        )
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined, but both are None")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError(
                "recompute_scale_factor is not meaningful with an explicit size, but got "
                f"size={size!r} and recompute_scale_factor=True"
            )
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    f"size must have {dim} elements (one per spatial dim of an input of shape "
                    f"{tuple(shape)}), but got size={size!r}"
                )
            if not all(is_int(s) for s in size):
                raise TypeError(f"size must be an int or a tuple of ints, but got size={size!r}")
            out = tuple(int(s) for s in size)
        elif is_int(size):
            out = (int(size),) * dim
        else:
            raise TypeError(f"size must be an int or a tuple of ints, but got size={size!r}")
        scales: Tuple[Optional[float], ...] = (None,) * dim
    else:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f"scale_factor must have {dim} elements (one per spatial dim of an input of "
                    f"shape {tuple(shape)}), but got scale_factor={scale_factor!r}"
                )
            factors = tuple(scale_factor)
        else:
            factors = (scale_factor,) * dim
        if not all(_is_number(s) for s in factors):
            raise TypeError(
                "scale_factor must be a number or a tuple of numbers, but got "
                f"scale_factor={scale_factor!r}"
            )
        factors = tuple(check_finite_number(s, "scale_factor", scale_factor) for s in factors)
        # PyTorch: output size = floor(in * scale) in double precision.
        out = tuple(int(math.floor(n * float(s))) for n, s in zip(spatial, factors))
        if recompute_scale_factor or mode == "area":
            scales = (None,) * dim
        else:
            scales = tuple(float(s) for s in factors)
    if any(o <= 0 for o in out) or any(n <= 0 for n in spatial):
        raise ValueError(
            "input and output sizes should be greater than 0, but got input spatial sizes "
            f"{spatial} and output sizes {out} (size={size!r}, scale_factor={scale_factor!r})"
        )
    if shape[1] == 0 and mode != "area":
        raise ValueError(
            f"input must have a non-empty channel dim for mode={mode!r} (PyTorch: 'Non-empty "
            f"{ndim}D data tensor expected'), but got input of shape {tuple(shape)}"
        )
    check_numel(tuple(shape[:2]) + out, "interpolate", size=size, scale_factor=scale_factor)
    return out, scales, corners


# ----------------------------------------------------------------------------- public functions


def _check_input(x: Any, mode: Any) -> Tensor:
    """A float tensor, or uint8 (images) for the nearest modes, which copy."""
    x = check_tensor(x, "input")
    if x.dtype == ms.uint8 and mode in ("nearest", "nearest-exact"):
        return x
    if x.dtype == ms.uint8:
        raise TypeError(
            f"input of dtype UInt8 is supported by the nearest modes only, not mode={mode!r} "
            "(PyTorch's uint8 bilinear/bicubic kernels round in their own fixed-point "
            "arithmetic, not reproduced here); convert to float32 first"
        )
    return check_float_tensor(x, "input")


def interpolate(
    input: Tensor,  # noqa: A002 - PyTorch's argument name
    size: Size = None,
    scale_factor: Scale = None,
    mode: str = "nearest",
    align_corners: Optional[bool] = None,
    recompute_scale_factor: Optional[bool] = None,
    antialias: bool = False,
) -> Tensor:
    """Down/up-sample ``input`` to ``size`` or by ``scale_factor``, as PyTorch.

    Mirrors ``torch.nn.functional.interpolate``: same arguments, defaults, validation and
    numbers. For an output index :math:`i` of an axis resized from :math:`n_{in}` to
    :math:`n_{out}`, the source coordinate is

    .. math::
        x = \\begin{cases}
        i \\,\\frac{n_{in} - 1}{n_{out} - 1} & \\text{align\\_corners}\\\\
        (i + \\tfrac12)\\, r - \\tfrac12, \\quad
        r = \\begin{cases} 1 / \\text{scale\\_factor} & \\text{given and not recomputed}\\\\
        n_{in} / n_{out} & \\text{otherwise}\\end{cases} & \\text{else}
        \\end{cases}

    ``nearest`` takes :math:`\\lfloor i\\,r \\rfloor` (PyTorch's legacy rule), ``nearest-exact``
    :math:`\\lfloor (i + \\frac12)\\,r \\rfloor`; ``linear``/``bilinear``/``trilinear`` mix the two
    neighbours of :math:`x` (clamped at 0); ``bicubic`` uses Keys' cubic with
    :math:`A = -0.75` on four taps, border taps replicated; ``area`` is adaptive average
    pooling; ``antialias=True`` widens the triangle (bilinear) or cubic (:math:`A = -0.5`)
    filter by the downsampling ratio and normalises the weights, as
    ``_upsample_bilinear2d_aa``/``_upsample_bicubic2d_aa``.

    Args:
        input (Tensor[N, C, W], Tensor[N, C, H, W] or Tensor[N, C, D, H, W]): float16, float32
            or float64; also uint8 in the nearest modes (as PyTorch).
        size (int or tuple of int, optional): output spatial size.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size; the
            output size is :math:`\\lfloor n_{in} \\cdot s \\rfloor`. Ints are accepted.
        mode (str): ``'nearest'`` | ``'nearest-exact'`` | ``'linear'`` (3-D) | ``'bilinear'``
            (4-D) | ``'bicubic'`` (4-D) | ``'trilinear'`` (5-D) | ``'area'``. Default:
            ``'nearest'``.
        align_corners (bool, optional): align the centres of the corner pixels; only for the
            interpolating modes. Default: False for them.
        recompute_scale_factor (bool, optional): True: compute the output size from
            ``scale_factor``, then interpolate as if that size had been given (the scale used
            is in/out). False or None: use ``scale_factor`` itself in the coordinate transform.
        antialias (bool): anti-aliasing when downsampling; bilinear and bicubic, 4-D only.
            Default: False.

    Returns:
        Tensor: ``(N, C, *output_size)``, ``input``'s dtype.

    Raises:
        TypeError: ``input`` not a floating Tensor; ``size``/``scale_factor``/flags of the
            wrong type.
        ValueError: unknown ``mode``; an input rank the mode does not support; both or neither
            of ``size`` and ``scale_factor``; a ``size``/``scale_factor`` of the wrong length;
            an output or input size of 0; ``align_corners`` with nearest/area modes;
            ``antialias`` with other modes; ``recompute_scale_factor=True`` with ``size``.

    .. note::
        Where PyTorch raises ``NotImplementedError`` (a mode on an input of the wrong rank) or
        ``RuntimeError`` (an output size of 0), this raises ``ValueError``. float16 is computed
        in float32 and rounded once (PyTorch CPU does the same); ``antialias=True`` also
        accepts float16, which PyTorch's CPU kernel does not. Empty inputs return an empty
        output (except an input with 0 channels, which PyTorch refuses but in ``area`` mode).
        An inf or NaN in the input stays within the filter taps, as in PyTorch: a tap of
        weight 0 on an inf gives NaN, all-+inf taps give +inf. PyTorch's
        1-D and 3-D ``nearest`` backward uses its 2-D index rule (an axis whose size is
        unchanged or exactly doubled by a scale factor is treated as a copy or ``i // 2``)
        where its forward does not; this gradient is the exact gradient of the forward.
        PyTorch 2.13's antialias kernel returns wrong values when the output width is 1
        and the height changes; this computes the correct separable result.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import interpolate
        >>> x = ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]]]])
        >>> interpolate(x, scale_factor=2).shape
        (1, 1, 4, 4)
        >>> interpolate(x, scale_factor=2, mode="bilinear")[0, 0, 0].asnumpy().tolist()
        [1.0, 1.25, 1.75, 2.0]
        >>> interpolate(x, size=3, mode="bicubic", align_corners=True)[0, 0, 1].asnumpy().tolist()
        [2.0, 2.5, 3.0]
        >>> [round(v, 4) for v in interpolate(x, size=3, mode="bicubic")[0, 0, 0].tolist()]
        [0.7396, 1.3264, 1.9132]
    """
    input = _check_input(input, mode)  # noqa: A001
    out_sizes, scales, corners = _plan(
        input.shape, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias
    )
    if input.size == 0:
        return ops.zeros(input.shape[:2] + out_sizes, input.dtype)
    return call("shape.interpolate", input, out_sizes, scales, mode, corners, antialias)


def upsample(
    input: Tensor,  # noqa: A002 - PyTorch's argument name
    size: Size = None,
    scale_factor: Scale = None,
    mode: str = "nearest",
    align_corners: Optional[bool] = None,
) -> Tensor:
    """Upsample ``input``; PyTorch's deprecated alias of :func:`interpolate`.

    Mirrors ``torch.nn.functional.upsample``: ``interpolate(input, size, scale_factor, mode,
    align_corners)``.

    Args:
        input (Tensor[N, C, ...]): 3-D, 4-D or 5-D floating input.
        size (int or tuple of int, optional): output spatial size.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.
        mode (str): as :func:`interpolate`. Default: ``'nearest'``.
        align_corners (bool, optional): as :func:`interpolate`.

    Returns:
        Tensor: ``(N, C, *output_size)``, ``input``'s dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import upsample
        >>> upsample(ms.Tensor([[[1.0, 2.0]]]), scale_factor=2).asnumpy().tolist()
        [[[1.0, 1.0, 2.0, 2.0]]]
    """
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(
    input: Tensor,  # noqa: A002 - PyTorch's argument name
    size: Size = None,
    scale_factor: Scale = None,
) -> Tensor:
    """Nearest upsampling; mirrors ``torch.nn.functional.upsample_nearest``.

    ``interpolate(input, size, scale_factor, mode='nearest')``.

    Args:
        input (Tensor[N, C, ...]): 3-D, 4-D or 5-D float or uint8 input.
        size (int or tuple of int, optional): output spatial size.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.

    Returns:
        Tensor: ``(N, C, *output_size)``, ``input``'s dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import upsample_nearest
        >>> upsample_nearest(ms.Tensor([[[1.0, 2.0]]]), size=3).asnumpy().tolist()
        [[[1.0, 1.0, 2.0]]]
    """
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(
    input: Tensor,  # noqa: A002 - PyTorch's argument name
    size: Size = None,
    scale_factor: Scale = None,
) -> Tensor:
    """Bilinear upsampling with ``align_corners=True``; mirrors
    ``torch.nn.functional.upsample_bilinear``.

    ``interpolate(input, size, scale_factor, mode='bilinear', align_corners=True)``.

    Args:
        input (Tensor[N, C, H, W]): floating input.
        size (int or tuple of int, optional): output spatial size.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.

    Returns:
        Tensor: ``(N, C, H_out, W_out)``, ``input``'s dtype.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import upsample_bilinear
        >>> upsample_bilinear(ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]]]]), size=3)[0, 0, 0].tolist()
        [1.0, 1.5, 2.0]
    """
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ----------------------------------------------------------------------------- Cells


def _cell_scale(scale_factor: Scale) -> Scale:
    """``nn.Upsample``'s normalisation: floats (a tuple of floats), falsy values as None."""
    if scale_factor is None or isinstance(scale_factor, (int, float)):
        return check_number(scale_factor, "scale_factor") if scale_factor else None
    if isinstance(scale_factor, (tuple, list)):
        return tuple(check_number(f, "scale_factor") for f in scale_factor)
    raise TypeError(
        "scale_factor must be a number or a tuple of numbers, but got "
        f"{type(scale_factor).__name__} (scale_factor={scale_factor!r})"
    )


def _cell_size(size: Size) -> Size:
    return tuple(size) if isinstance(size, list) else size


class Upsample(nn.Cell):
    """Upsampling Cell. See :func:`interpolate`.

    Mirrors ``torch.nn.Upsample``: the constructor's ``scale_factor`` is converted to float
    (each element of a tuple), a falsy ``scale_factor`` (0, 0.0) counts as None, and the call
    is ``interpolate(x, size, scale_factor, mode, align_corners, recompute_scale_factor)``.

    Args:
        size (int or tuple of int, optional): output spatial size.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.
        mode (str): as :func:`interpolate`. Default: ``'nearest'``.
        align_corners (bool, optional): as :func:`interpolate`.
        recompute_scale_factor (bool, optional): as :func:`interpolate`.

    Shape:
        - input: :math:`(N, C, W_{in})`, :math:`(N, C, H_{in}, W_{in})` or
          :math:`(N, C, D_{in}, H_{in}, W_{in})`.
        - output: :math:`(N, C, *\\text{out})` with
          :math:`\\text{out}_d = \\lfloor \\text{in}_d \\times \\text{scale\\_factor}_d \\rfloor`
          or ``size``.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import Upsample
        >>> up = Upsample(scale_factor=2, mode="nearest")
        >>> up(ms.Tensor([[[[1.0, 2.0], [3.0, 4.0]]]]))[0, 0, 1].asnumpy().tolist()
        [1.0, 1.0, 2.0, 2.0]
    """

    def __init__(
        self,
        size: Size = None,
        scale_factor: Scale = None,
        mode: str = "nearest",
        align_corners: Optional[bool] = None,
        recompute_scale_factor: Optional[bool] = None,
    ) -> None:
        super().__init__()
        self.size = _cell_size(size)
        self.scale_factor = _cell_scale(scale_factor)
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def construct(self, input: Tensor) -> Tensor:  # noqa: A002 - PyTorch's argument name
        return interpolate(
            input,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )


class UpsamplingNearest2d(Upsample):
    """2-D nearest upsampling Cell; mirrors ``torch.nn.UpsamplingNearest2d``.

    ``Upsample(size, scale_factor, mode='nearest')``. See :func:`interpolate`.

    Args:
        size (int or tuple of int, optional): output size ``(H_out, W_out)``.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.

    Shape:
        - input: :math:`(N, C, H_{in}, W_{in})`.
        - output: :math:`(N, C, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import UpsamplingNearest2d
        >>> UpsamplingNearest2d(scale_factor=2)(ms.Tensor([[[[1.0, 2.0]]]])).shape
        (1, 1, 2, 4)
    """

    def __init__(self, size: Size = None, scale_factor: Scale = None) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """2-D bilinear upsampling Cell with ``align_corners=True``; mirrors
    ``torch.nn.UpsamplingBilinear2d``.

    ``Upsample(size, scale_factor, mode='bilinear', align_corners=True)``. See
    :func:`interpolate`.

    Args:
        size (int or tuple of int, optional): output size ``(H_out, W_out)``.
        scale_factor (float or tuple of float, optional): multiplier of the spatial size.

    Shape:
        - input: :math:`(N, C, H_{in}, W_{in})`.
        - output: :math:`(N, C, H_{out}, W_{out})`.

    Example:
        >>> import mindspore as ms
        >>> from mscompat.shape import UpsamplingBilinear2d
        >>> up = UpsamplingBilinear2d(scale_factor=2)
        >>> [round(v, 4) for v in up(ms.Tensor([[[[1.0, 2.0]]]]))[0, 0, 0].tolist()]
        [1.0, 1.3333, 1.6667, 2.0]
    """

    def __init__(self, size: Size = None, scale_factor: Scale = None) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
