"""What the op database does not reach for the convolution and multi-head attention Cells:
PyTorch's parameter names, shapes and initialisation ranges, and a state dict loaded one to one
by ``port.convert_weights`` (their numbers are checked by the op database entries)."""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mscompat.layers import Conv2d, ConvTranspose3d, MultiheadAttention  # noqa: E402
from mscompat.port import convert_weights  # noqa: E402


def _params(cell):
    return {name: tuple(p.shape) for name, p in cell.parameters_and_names()}


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"kdim": 5, "vdim": 3, "add_bias_kv": True, "bias": False}],
    ids=["packed", "separate-bias_kv-no-bias"],
)
def test_multihead_names_shapes_and_weights_load(kwargs):
    theirs = torch.nn.MultiheadAttention(8, 2, **kwargs)
    ours = MultiheadAttention(8, 2, **kwargs)
    assert _params(ours) == {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    table = convert_weights(theirs, ours)
    assert table.ok
    for name, p in ours.parameters_and_names():
        np.testing.assert_array_equal(p.asnumpy(), theirs.state_dict()[name].numpy())


def test_conv_cells_layout_and_init_range():
    conv = Conv2d(6, 8, (3, 2), groups=2)
    assert _params(conv) == {"weight": (8, 3, 3, 2), "bias": (8,)}
    bound = 1 / math.sqrt(3 * 3 * 2)  # kaiming_uniform(a=sqrt(5)): 1 / sqrt(fan_in)
    w = conv.weight.asnumpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    assert np.abs(conv.bias.asnumpy()).max() <= bound
    up = ConvTranspose3d(4, 6, 2, stride=2, groups=2, bias=False)
    assert _params(up) == {"weight": (4, 3, 2, 2, 2)}  # (C_in, C_out / groups, k...)
    assert np.abs(up.weight.asnumpy()).max() <= 1 / math.sqrt(3 * 8)
