"""Position-sensitive RoI pooling (R-FCN), as ``torchvision.ops.ps_roi_align``,
``ps_roi_pool``, ``PSRoIAlign`` and ``PSRoIPool``.

The input has ``C = C_out * PH * PW`` channels; output bin ``(i, j)`` of channel ``c`` pools
input channel ``(c * PH + i) * PW + j`` only.

Backends of ``vision.ps_roi_align`` and ``vision.ps_roi_pool``: ``aot`` (CPU),
``custom_ops/cpu/roi_kernel.cc``, torchvision's CPU kernels with their arithmetic and quirks,
kept on purpose because models were trained with them: ``ps_roi_align`` always shifts boxes by
-0.5 and does not force small RoIs to 1 x 1 (an empty adaptive grid gives ``0 / 0 = NaN``);
``ps_roi_pool``'s forward clips its bins to ``[0, H - 1] x [0, W - 1]`` and its backward to
``[0, H] x [0, W]``, so its gradient is torchvision's, not the derivative of its forward at the
last row and column. No composite backend: these ops run where the kernel is built (CPU).
"""

from __future__ import annotations

from typing import Tuple, Union

import mindspore as ms
from mindspore import Tensor, ops

from mscompat._checks import check_finite_number, check_int
from mscompat.custom_ops import roi as _roi_kernels
from mscompat.custom_ops.registry import call, device_target
from mscompat.vision._roi_common import (
    BoxesArg,
    RoICell,
    check_batch_index,
    check_roi_input,
    kernel_params,
    pooled_size,
    rois_of,
    size_carrier,
)

__all__ = ["PSRoIAlign", "PSRoIPool", "ps_roi_align", "ps_roi_pool"]

OutputSize = Union[int, Tuple[int, int]]


def _run(name: str, x: Tensor, rois: Tensor, pooled: Tuple[int, int], p: Tensor) -> Tensor:
    half = x.dtype == ms.float16
    if half:
        x, rois = x.astype(ms.float32), rois.astype(ms.float32)
    y = _roi_kernels.KERNELS[device_target()][name](x, rois, size_carrier(pooled), p)
    return y.astype(ms.float16) if half else y


@_roi_kernels.LIBRARY.backend("vision.ps_roi_align", "C++ port of torchvision's CPU kernel")
def _ps_roi_align_aot(
    x: Tensor, rois: Tensor, pooled: Tuple[int, int], scale: float, sampling_ratio: int
) -> Tensor:
    p = kernel_params(sampling_ratio, True, x.dtype == ms.float16, scale)
    return _run("PSRoIAlign", x, rois, pooled, p)


@_roi_kernels.LIBRARY.backend("vision.ps_roi_pool", "C++ port of torchvision's CPU kernel")
def _ps_roi_pool_aot(x: Tensor, rois: Tensor, pooled: Tuple[int, int], scale: float) -> Tensor:
    p = kernel_params(0, False, x.dtype == ms.float16, scale)
    return _run("PSRoIPool", x, rois, pooled, p)


def _prepare(
    fn: str, input: Tensor, boxes: BoxesArg, output_size: OutputSize
) -> Tuple[Tensor, Tensor, Tuple[int, int]]:
    x = check_roi_input(fn, input)
    pooled = pooled_size(fn, output_size)
    if x.shape[1] % (pooled[0] * pooled[1]) != 0:
        raise ValueError(
            f"{fn}(): the channels of input ({x.shape[1]}) must be a multiple of "
            f"output_size[0] * output_size[1] ({pooled[0] * pooled[1]})"
        )
    return x, rois_of(fn, boxes, x, pooled), pooled


def ps_roi_align(
    input: Tensor,
    boxes: BoxesArg,
    output_size: OutputSize,
    spatial_scale: float = 1.0,
    sampling_ratio: int = -1,
) -> Tensor:
    """Position-sensitive RoI Align (R-FCN), as :func:`torchvision.ops.ps_roi_align`.

    :func:`roi_align` with ``aligned=True`` geometry (no 1 x 1 minimum) where output bin
    ``(i, j)`` of channel ``c`` samples input channel ``(c * PH + i) * PW + j``:

    .. math::
        y_{k,c,i,j} = \\frac{1}{G_h G_w} \\sum_{a, b}
        \\operatorname{bilinear}(x_{b_k,(c P_H + i) P_W + j}, \\ldots)

    Args:
        input (Tensor[N, C, H, W]): float16/32/64, ``C`` a multiple of ``PH * PW``.
        boxes (Tensor[K, 5] or list of Tensor[L, 4]): RoIs as in :func:`roi_align`.
        output_size (int or (int, int)): (PH, PW).
        spatial_scale (float): box-to-input scale.
        sampling_ratio (int): samples per bin per axis; ``<= 0``: adaptive.

    Returns:
        Tensor[K, C / (PH * PW), PH, PW].

    Raises:
        TypeError, ValueError: as :func:`roi_align`; ``ValueError`` if ``C`` is not a
            multiple of ``PH * PW``.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import ps_roi_align
        >>> x = ms.Tensor(np.ones((1, 8, 5, 5), np.float32))
        >>> ps_roi_align(x, ms.Tensor([[0.0, 0.0, 0.0, 4.0, 4.0]]), 2, sampling_ratio=2).shape
        (1, 2, 2, 2)
    """
    x, rois, pooled = _prepare("ps_roi_align", input, boxes, output_size)
    scale = check_finite_number(spatial_scale, "spatial_scale")
    ratio = check_int(sampling_ratio, "sampling_ratio")
    c_out = x.shape[1] // (pooled[0] * pooled[1])
    if rois.shape[0] == 0 or c_out == 0:  # answered here: no kernel sees an empty tensor
        return ops.zeros((rois.shape[0], c_out, *pooled), x.dtype)
    rois = ops.stop_gradient(check_batch_index("ps_roi_align", rois, x.shape[0]))
    return call("vision.ps_roi_align", x, rois, pooled, scale, ratio)


def ps_roi_pool(
    input: Tensor, boxes: BoxesArg, output_size: OutputSize, spatial_scale: float = 1.0
) -> Tensor:
    """Position-sensitive RoI average pooling (R-FCN), as :func:`torchvision.ops.ps_roi_pool`.

    Rounded RoI corners (``end - start`` cells, at least 1), :func:`roi_pool`'s bins, clipped
    to ``[0, H - 1] x [0, W - 1]`` (torchvision's forward), each bin the mean of its cells of
    input channel ``(c * PH + i) * PW + j`` (0 when empty).

    Args:
        input (Tensor[N, C, H, W]): float16/32/64, ``C`` a multiple of ``PH * PW``.
        boxes (Tensor[K, 5] or list of Tensor[L, 4]): RoIs as in :func:`roi_align`.
        output_size (int or (int, int)): (PH, PW).
        spatial_scale (float): box-to-input scale.

    Returns:
        Tensor[K, C / (PH * PW), PH, PW].

    Raises:
        TypeError, ValueError: as :func:`ps_roi_align`.

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import ps_roi_pool
        >>> x = ms.Tensor(np.arange(64, dtype=np.float32).reshape(1, 4, 4, 4))
        >>> y = ps_roi_pool(x, ms.Tensor([[0.0, 0.0, 0.0, 4.0, 4.0]]), 2)
        >>> y.asnumpy().reshape(-1).tolist()
        [2.5, 20.0, 40.5, 58.0]
    """
    x, rois, pooled = _prepare("ps_roi_pool", input, boxes, output_size)
    scale = check_finite_number(spatial_scale, "spatial_scale")
    c_out = x.shape[1] // (pooled[0] * pooled[1])
    if rois.shape[0] == 0 or c_out == 0:
        return ops.zeros((rois.shape[0], c_out, *pooled), x.dtype)
    rois = ops.stop_gradient(check_batch_index("ps_roi_pool", rois, x.shape[0]))
    return call("vision.ps_roi_pool", x, rois, pooled, scale)


class PSRoIAlign(RoICell):
    """Position-sensitive RoI Align as a Cell, as :class:`torchvision.ops.PSRoIAlign`.
    See :func:`ps_roi_align`.

    Args:
        output_size (int or (int, int)): (PH, PW).
        spatial_scale (float): box-to-input scale.
        sampling_ratio (int): samples per bin per axis; ``<= 0``: adaptive.

    Shape:
        - input: (N, C, H, W), ``C`` a multiple of PH * PW; rois: (K, 5).
        - output: (K, C / (PH * PW), PH, PW).

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import PSRoIAlign
        >>> pool = PSRoIAlign(2, spatial_scale=1.0, sampling_ratio=-1)
        >>> pool(ms.Tensor(np.ones((1, 4, 5, 5), np.float32)), ms.Tensor([[0.0, 1, 1, 3, 3]])).shape
        (1, 1, 2, 2)
    """

    def __init__(self, output_size: OutputSize, spatial_scale: float, sampling_ratio: int) -> None:
        super().__init__(
            output_size=output_size, spatial_scale=spatial_scale, sampling_ratio=sampling_ratio
        )

    def construct(self, input: Tensor, rois: BoxesArg) -> Tensor:
        return ps_roi_align(input, rois, self.output_size, self.spatial_scale, self.sampling_ratio)


class PSRoIPool(RoICell):
    """Position-sensitive RoI pooling as a Cell, as :class:`torchvision.ops.PSRoIPool`.
    See :func:`ps_roi_pool`.

    Args:
        output_size (int or (int, int)): (PH, PW).
        spatial_scale (float): box-to-input scale.

    Shape:
        - input: (N, C, H, W), ``C`` a multiple of PH * PW; rois: (K, 5).
        - output: (K, C / (PH * PW), PH, PW).

    Example:
        >>> import mindspore as ms
        >>> import numpy as np
        >>> from mscompat.vision import PSRoIPool
        >>> pool = PSRoIPool(2, spatial_scale=1.0)
        >>> pool(ms.Tensor(np.ones((1, 8, 5, 5), np.float32)), ms.Tensor([[0.0, 1, 1, 3, 3]])).shape
        (1, 2, 2, 2)
    """

    def __init__(self, output_size: OutputSize, spatial_scale: float) -> None:
        super().__init__(output_size=output_size, spatial_scale=spatial_scale)

    def construct(self, input: Tensor, rois: BoxesArg) -> Tensor:
        return ps_roi_pool(input, rois, self.output_size, self.spatial_scale)
