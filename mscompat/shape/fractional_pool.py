"""Fractional max pooling (Graham, 2014), as ``torch.nn.functional.fractional_max_pool2d/3d``
and ``nn.FractionalMaxPool2d/3d``.

MindSpore 2.10's ``ops.fractional_max_pool2d`` has no CPU gradient
("FractionalMaxPoolGradWithFixedKsize: Unsupported data type") and draws its own windows.
Here the windows are PyTorch's: for each ``(n, c)`` plane and spatial dim, with its sample
:math:`u \\in [0, 1)` (``_random_samples[n, c]``; PyTorch's order: W, H for 2-D and T, H, W
for 3-D), output position :math:`i < O - 1` starts at

.. math::
    s_i = \\operatorname{trunc}((i + u)\\alpha) - \\operatorname{trunc}(u\\alpha), \\qquad
    \\alpha = \\frac{L - k}{O - 1}

(computed in the input's dtype and truncated, as PyTorch's int casts, which matters only for
a sample outside [0, 1)) and the last at :math:`L - k`. Each window of
``kernel_size`` picks, as max pooling, its first maximum in row-major order or its last NaN;
indices are int64 flat positions in the plane, and the gradient goes to the picked element.
Without ``_random_samples`` the samples are drawn uniformly (``ops.rand``).
"""

from __future__ import annotations

from typing import Any, Optional, Tuple, Union

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore.ops import constexpr

from mscompat._checks import check_tensor
from mscompat.custom_ops.registry import call, register
from mscompat.shape._pooling import check_pool_input, ntuple, select_along
from mscompat.shape.max_pool import IntOrTuple, MaxOut

__all__ = [
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
    "fractional_max_pool2d",
    "fractional_max_pool3d",
]

#: Which sample drives which spatial dim (index into the spatial dims), PyTorch's order.
_SAMPLE_DIM = {2: (1, 0), 3: (0, 1, 2)}  # 2-D: sample 0 -> W, 1 -> H


@constexpr
def _alpha(length: int, kernel: int, out: int, dtype: Any) -> Tensor:
    """PyTorch's ``scalar_t(L - k) / scalar_t(O - 1)``, rounded to ``dtype``."""
    value = np.asarray(np.float64(length - kernel) / np.float64(out - 1))
    if dtype != ms.float64:
        value = value.astype(np.float32)
    return Tensor(value.astype(ms.dtype_to_nptype(dtype)))


def _round(t: Tensor, dtype: Any) -> Tensor:
    return t.astype(dtype).astype(t.dtype) if dtype == ms.float16 else t


def _starts(u: Tensor, length: int, kernel: int, out: int, dtype: Any) -> Tensor:
    """Window starts ``(P, O)`` int32 for the per-plane samples ``u`` ``(P, 1)``."""
    last = ops.full((u.shape[0], 1), length - kernel, dtype=ms.int32)
    if out == 1:
        return last
    work = ms.float32 if dtype == ms.float16 else dtype
    alpha = _alpha(length, kernel, out, dtype).astype(work)
    i = Tensor(np.arange(out - 1), work).reshape(1, -1)
    uw = u.astype(work)
    # PyTorch's int casts truncate: the floor for samples in [0, 1), not for others it takes
    first = ops.trunc(_round(_round(i + uw, dtype) * alpha, dtype))
    offset = ops.trunc(_round(uw * alpha, dtype))
    return ops.concat(((first - offset).astype(ms.int32), last), 1)


@register(
    ("shape.fractional_max_pool2d", "shape.fractional_max_pool3d"),
    "composite",
    note="per-plane window tables, one gather, PyTorch's max pick",
)
def _fractional_composite(
    x: Tensor, kernel: Tuple[int, ...], out: Tuple[int, ...], samples: Tensor
) -> Tuple[Tensor, Tensor]:
    n = len(kernel)
    spatial = x.shape[x.ndim - n :]
    planes = x.reshape((-1,) + spatial)
    p = planes.shape[0]
    u = samples.reshape(p, n)
    flat: Any = None
    for d in range(n):
        s = _SAMPLE_DIM[n].index(d)
        start = _starts(u[:, s : s + 1], spatial[d], kernel[d], out[d], x.dtype)
        pos = start.reshape(p, out[d], 1) + Tensor(np.arange(kernel[d], dtype=np.int32))
        # (P, O_0, .., O_d, K_0, .., K_d): the new dim's output and window axes go last
        shape = [p] + [1] * (2 * n)
        shape[1 + d], shape[1 + n + d] = out[d], kernel[d]
        pos = pos.reshape(tuple(shape))
        flat = pos if flat is None else flat * spatial[d] + pos
    count, window = int(np.prod(out)), int(np.prod(kernel))
    flat = ops.broadcast_to(flat, (p,) + tuple(out) + tuple(kernel)).reshape(p, count, window)
    rows = planes.reshape(p, -1)
    values = ops.stop_gradient(ops.gather_elements(rows, 1, flat.reshape(p, -1)))
    pick = select_along(values.reshape(p, count, window), 2)
    index = ops.gather_elements(flat, 2, pick.expand_dims(2)).reshape(p, count)
    index = ops.stop_gradient(index.astype(ms.int64))
    y = ops.gather_elements(rows, 1, index)
    lead = x.shape[: x.ndim - n]
    return y.reshape(lead + tuple(out)), index.reshape(lead + tuple(out))


@constexpr
def _output_size(
    output_size: Any,
    output_ratio: Any,
    spatial: Tuple[int, ...],
    kernel: Tuple[int, ...],
    fn: str,
) -> Tuple[int, ...]:
    n = len(spatial)
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    if output_size is not None:
        out = ntuple(output_size, n, "output_size", fn)
    else:
        ratio = (output_ratio,) * n if isinstance(output_ratio, (int, float)) else output_ratio
        if not isinstance(ratio, (tuple, list)) or len(ratio) != n:
            raise TypeError(
                f"{fn}(): output_ratio must be a float or {n} floats, got {output_ratio!r}"
            )
        for r in ratio:
            if isinstance(r, bool) or not isinstance(r, (int, float)) or not 0 < r < 1:
                raise ValueError(
                    f"{fn}(): output_ratio must be between 0 and 1, but got {output_ratio!r}"
                )
        out = tuple(int(s * r) for s, r in zip(spatial, ratio))
    names = ("time", "height", "width")[3 - n :]
    for o, k, s, name in zip(out, kernel, spatial, names):
        if k <= 0 or o <= 0:
            raise ValueError(
                f"{fn}(): kernel_size and output_size must be greater than zero, but got "
                f"kernel_size={kernel}, output_size={out}"
            )
        # PyTorch's 3-D check is strict (the last window may not end at the input's end)
        if o + k - 1 > s or (n == 3 and o + k - 1 == s):
            raise ValueError(f"{fn}(): pool {name} {k} too large relative to input {name} {s}")
    return out


def fractional_max_pool(
    input: Tensor,
    n: int,
    kernel_size: Any,
    output_size: Any,
    output_ratio: Any,
    return_indices: Any,
    samples: Any,
    fn: str,
) -> MaxOut:
    """Validation and dispatch of ``fractional_max_pool{n}d``."""
    x = check_pool_input(input, n, fn)
    kernel = ntuple(kernel_size, n, "kernel_size", fn)
    out = _output_size(output_size, output_ratio, x.shape[x.ndim - n :], kernel, fn)
    if not isinstance(return_indices, bool):
        raise TypeError(f"{fn}(): return_indices must be a bool, but got {return_indices!r}")
    batch = 1 if x.ndim == n + 1 else x.shape[0]
    want = (batch, x.shape[-n - 1], n)
    if samples is None:
        samples = ops.rand(want, dtype=x.dtype)
    else:
        samples = check_tensor(samples, "_random_samples")
        if samples.dtype != x.dtype:
            raise TypeError(
                f"{fn}(): _random_samples must have input's dtype {x.dtype}, got {samples.dtype}"
            )
        if tuple(samples.shape) != want:
            raise ValueError(
                f"{fn}(): _random_samples must have shape {want} (N, C, {n}), but got "
                f"{tuple(samples.shape)}"
            )
    if x.size == 0:
        empty = x.shape[: x.ndim - n] + out
        values, indices = ops.zeros(empty, x.dtype), ops.zeros(empty, ms.int64)
    else:
        values, indices = call(f"shape.{fn}", x, kernel, out, samples)
    if return_indices:
        return values, indices
    return values


def fractional_max_pool2d(
    input: Tensor,
    kernel_size: IntOrTuple,
    output_size: Optional[IntOrTuple] = None,
    output_ratio: Optional[Union[float, Tuple[float, float]]] = None,
    return_indices: bool = False,
    _random_samples: Optional[Tensor] = None,
) -> MaxOut:
    """2-D fractional max pooling, as :func:`torch.nn.functional.fractional_max_pool2d`.

    Windows of ``kernel_size`` start at the pseudo-random :math:`s_i` of the module docstring,
    one sample per plane and dim; ``output_ratio`` gives :math:`O = \\lfloor L r \\rfloor`.

    Args:
        input (Tensor[N, C, H, W] or Tensor[C, H, W]): float16, float32 or float64.
        kernel_size (int | tuple[int, int]): the window.
        output_size (int | tuple[int, int], optional): :math:`(H_{out}, W_{out})`.
        output_ratio (float | tuple[float, float], optional): in (0, 1), if no
            ``output_size``.
        return_indices (bool): also return the int64 flat indices.
        _random_samples (Tensor[N, C, 2], optional): the samples in [0, 1), input's dtype
            (``[..., 0]`` for W, ``[..., 1]`` for H); drawn if None.

    Returns:
        Tensor[N, C, H_out, W_out] (or unbatched), and the indices with ``return_indices``.

    Raises:
        TypeError: non-float input, non-int sizes, samples of another dtype.
        ValueError: neither size nor ratio, a window too large for the output size, samples
            of another shape.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.shape import fractional_max_pool2d
        >>> x = ms.Tensor(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
        >>> u = ms.Tensor(np.full((1, 1, 2), 0.5, np.float32))
        >>> fractional_max_pool2d(x, 2, 2, _random_samples=u).asnumpy().tolist()
        [[[[5.0, 7.0], [13.0, 15.0]]]]
    """
    return fractional_max_pool(
        input,
        2,
        kernel_size,
        output_size,
        output_ratio,
        return_indices,
        _random_samples,
        "fractional_max_pool2d",
    )


def fractional_max_pool3d(
    input: Tensor,
    kernel_size: IntOrTuple,
    output_size: Optional[IntOrTuple] = None,
    output_ratio: Optional[Union[float, Tuple[float, float, float]]] = None,
    return_indices: bool = False,
    _random_samples: Optional[Tensor] = None,
) -> MaxOut:
    """3-D fractional max pooling, as :func:`torch.nn.functional.fractional_max_pool3d`.
    See :func:`fractional_max_pool2d`; ``_random_samples`` is ``(N, C, 3)`` (T, H, W).

    Args:
        input (Tensor[N, C, T, H, W] or Tensor[C, T, H, W]): float16, float32 or float64.
        kernel_size (int | tuple[int, int, int]): the window.
        output_size (int | tuple[int, int, int], optional): the output size.
        output_ratio (float | tuple[float, float, float], optional): in (0, 1).
        return_indices (bool): also return the int64 flat indices.
        _random_samples (Tensor[N, C, 3], optional): the samples in [0, 1).

    Returns:
        Tensor[N, C, T_out, H_out, W_out] (or unbatched), and the indices with
        ``return_indices``.

    Raises:
        TypeError: non-float input, non-int sizes, samples of another dtype.
        ValueError: neither size nor ratio, a window too large, samples of another shape.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.shape import fractional_max_pool3d
        >>> x = ms.Tensor(np.arange(27, dtype=np.float32).reshape(1, 1, 3, 3, 3))
        >>> fractional_max_pool3d(x, 2, 1).asnumpy().tolist()
        [[[[[26.0]]]]]
    """
    return fractional_max_pool(
        input,
        3,
        kernel_size,
        output_size,
        output_ratio,
        return_indices,
        _random_samples,
        "fractional_max_pool3d",
    )


class _FractionalMaxPoolNd(nn.Cell):
    _N = 2

    def __init__(
        self,
        kernel_size: IntOrTuple,
        output_size: Optional[IntOrTuple] = None,
        output_ratio: Any = None,
        return_indices: bool = False,
        _random_samples: Optional[Tensor] = None,
    ) -> None:
        super().__init__()
        if output_size is None and output_ratio is None:
            raise ValueError(
                f"{type(self).__name__} requires specifying either an output size, or a pooling "
                "ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        self.kernel_size = kernel_size
        self.output_size = output_size
        self.output_ratio = output_ratio
        self.return_indices = return_indices
        self._random_samples = _random_samples

    def construct(self, input: Tensor) -> MaxOut:
        return fractional_max_pool(
            input,
            self._N,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            self._random_samples,
            f"fractional_max_pool{self._N}d",
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling Cell, as :class:`torch.nn.FractionalMaxPool2d`. See
    :func:`fractional_max_pool2d`.

    Shape:
        - input: ``(N, C, H, W)`` or ``(C, H, W)``; output ``(N, C, H_out, W_out)``.
    """

    _N = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling Cell, as :class:`torch.nn.FractionalMaxPool3d`. See
    :func:`fractional_max_pool3d`.

    Shape:
        - input: ``(N, C, T, H, W)`` or ``(C, T, H, W)``; output
          ``(N, C, T_out, H_out, W_out)``.
    """

    _N = 3
