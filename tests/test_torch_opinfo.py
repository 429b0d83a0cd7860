"""PyTorch's own OpInfo sample inputs (``torch.testing._internal.common_methods_invocations``) for
every op of ``mscompat.shape`` that PyTorch describes, run through mscompat in PyNative mode and
compared with PyTorch: outputs and gradients, float16/32/64 (and int32/int64 where PyTorch
supports them), with the tolerance table's tolerances; and in graph mode (``ms.jit``) for every
100th sample (the first always) in float32.

Our own op database (tests/test_op_db.py) covers graph mode for every entry and the edge cases we
chose; this file checks the inputs PyTorch chose. Samples that are known to differ are listed in
``KNOWN`` with the reason and are expected to fail (so a fix shows up as an unexpected pass). The
very large max-pooling and unfold families are sampled with a stride to keep the suite's time.
"""

from __future__ import annotations

import pytest

pytest.importorskip("expecttest", reason="torch.testing._internal needs expecttest")

from mscompat.testing.parity import ParityError  # noqa: E402
from mscompat.testing.torch_opinfo import (  # noqa: E402
    TORCH_OPINFO_MAP,
    check_case,
    supported_dtypes,
    torch_opinfo_cases,
)

DTYPES = ("float16", "float32", "float64", "int32", "int64")

#: Run every n-th sample of these (PyTorch generates 100s of them).
STRIDE = {
    "nn.functional.max_pool1d": 7,
    "nn.functional.max_pool2d": 23,
    "nn.functional.max_pool3d": 11,
    "nn.functional.max_unpool1d": 3,
    "nn.functional.max_unpool2d": 5,
    "nn.functional.max_unpool3d": 3,
    "nn.functional.unfold": 3,
    # 30 samples up to (20, 21, 22, 23, 24); all 30 pass in float16/32/64 (checked by hand)
    "grid_sampler_3d": 2,
}

#: dtypes not run for an OpInfo, with the reason.
SKIP_DTYPES = {
    ("nn.functional.grid_sample", "float16"): "torch 2.13's float16 CPU grid_sample returns NaN "
    "on the (2, 3, 345, 456) sample and its backward corrupts the heap (process abort)",
}

_TORCH_RAISES = "PyTorch itself raises NotImplementedError (antialias has no float16 CPU kernel)"
_HALF_GRID_GRAD = (
    "float16 grid gradient: PyTorch's float16 backward rounds each of its own operations to "
    "float16; ours is the gradient of the op-by-op rounded forward (outputs identical): 1-2 of "
    "520 grid-gradient elements differ by up to 0.0625"
)

#: (OpInfo key, dtype, sample index) -> why the sample is expected to fail. The interpolate ones
#: are PyTorch's (2, 3, 345, 456) "large input" samples; the grid_sampler_2d ones its bilinear
#: and bicubic samples.
KNOWN = {
    **{("grid_sampler_2d", "float16", i): _HALF_GRID_GRAD for i in (*range(6), *range(12, 18))},
    ("nn.functional.interpolate.bicubic", "float16", 24): _TORCH_RAISES,
    ("nn.functional.interpolate.bicubic", "float16", 26): _TORCH_RAISES,
    ("nn.functional.interpolate.bilinear", "float16", 24): _TORCH_RAISES,
    ("nn.functional.interpolate.bilinear", "float16", 26): _TORCH_RAISES,
}


def _params():
    for key in sorted(TORCH_OPINFO_MAP):
        theirs = supported_dtypes(key)
        for dtype in (d for d in DTYPES if d in theirs):
            marks = []
            if (key, dtype) in SKIP_DTYPES:
                marks.append(pytest.mark.skip(reason=SKIP_DTYPES[(key, dtype)]))
            yield pytest.param(key, dtype, id=f"{key}-{dtype}", marks=marks)


@pytest.mark.parametrize("key, dtype", list(_params()))
def test_torch_samples(key, dtype):
    _check_samples(key, dtype, STRIDE.get(key, 1), ("pynative",))


#: Graph mode compiles every sample: every GRAPH_STRIDE-th sample (the first always), float32.
GRAPH_STRIDE = 100


def _graph_params():
    for key in sorted(TORCH_OPINFO_MAP):
        theirs = supported_dtypes(key)
        dtype = next((d for d in ("float32",) + DTYPES if d in theirs), None)
        if dtype is not None:
            yield pytest.param(key, dtype, id=f"{key}-{dtype}")


@pytest.mark.parametrize("key, dtype", list(_graph_params()))
def test_torch_samples_graph(key, dtype):
    _check_samples(key, dtype, GRAPH_STRIDE, ("graph",))


def _check_samples(key, dtype, stride, modes):
    unexpected, fixed, ran = [], [], 0
    for case in torch_opinfo_cases([key], dtypes=[dtype]):
        if case.opinfo != key or case.index % stride:
            continue
        ran += 1
        known = KNOWN.get((key, dtype, case.index))
        try:
            check_case(case, modes)
        except ParityError as exc:
            if known is None:
                unexpected.append(f"{case.describe()}\n{exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - report any failure with the sample
            if known is None:
                unexpected.append(f"{case.describe()}\n{type(exc).__name__}: {exc}")
            continue
        if known is not None:
            fixed.append(f"{case.describe()} (listed as known: {known})")
    if ran == 0:
        pytest.skip(f"PyTorch has no {dtype} samples for {key}")
    assert not unexpected, f"{len(unexpected)} of {ran} samples differ:\n" + "\n".join(unexpected)
    assert not fixed, "samples listed in KNOWN now pass; remove them:\n" + "\n".join(fixed)
