"""PyTorch's own OpInfo sample inputs (``torch.testing._internal.common_methods_invocations``) for
every op of ``mscompat.shape`` that PyTorch describes, run through mscompat in PyNative mode and
compared with PyTorch: outputs and gradients, float16/32/64 (and int32/int64 where PyTorch
supports them), with the tolerance table's tolerances; and in graph mode (``ms.jit``) for every
250th sample (the first always) in float32.

Our own op database (tests/test_op_db.py) covers graph mode for every entry and the edge cases we
chose; this file checks the inputs PyTorch chose. Which PyTorch OpInfos an op must pass, through
which adapter, every how many samples (PyTorch generates hundreds for some) and which samples
are known to differ (with the reason; expected to fail, so a fix shows up as an unexpected pass)
are facts of the op's database entry (``OpInfo.torch_opinfo``, ``OpInfo.known``).
"""

from __future__ import annotations

import pytest

pytest.importorskip("expecttest", reason="torch.testing._internal needs expecttest")

from mscompat.testing.parity import ParityError  # noqa: E402
from mscompat.testing.torch_opinfo import (  # noqa: E402
    check_case,
    supported_dtypes,
    torch_opinfo_cases,
    torch_opinfos,
)

DTYPES = ("float16", "float32", "float64", "int32", "int64")
MAPPED = torch_opinfos()


def _params():
    for key in sorted(MAPPED):
        theirs = supported_dtypes(key)
        skips = MAPPED[key][1].skip_dtypes
        for dtype in (d for d in DTYPES if d in theirs):
            marks = [pytest.mark.skip(reason=skips[dtype])] if dtype in skips else []
            yield pytest.param(key, dtype, id=f"{key}-{dtype}", marks=marks)


@pytest.mark.parametrize("key, dtype", list(_params()))
def test_torch_samples(key, dtype):
    _check_samples(key, dtype, MAPPED[key][1].stride, ("pynative",))


#: Graph mode compiles every sample: every GRAPH_STRIDE-th sample (the first always), float32
#: (a suite-speed setting, the same for every op).
GRAPH_STRIDE = 250


def _graph_params():
    for key in sorted(MAPPED):
        theirs, skips = supported_dtypes(key), MAPPED[key][1].skip_dtypes
        dtype = next((d for d in ("float32",) + DTYPES if d in theirs and d not in skips), None)
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
        known = MAPPED[key][0].known_difference(key, dtype, case.index)
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
    assert not fixed, "samples listed as known now pass; remove them:\n" + "\n".join(fixed)


def test_known_differences_name_mapped_opinfos():
    for info, _ in MAPPED.values():
        for k in info.known:
            assert k.opinfo in MAPPED and MAPPED[k.opinfo][0] is info, (info.full_name, k)
            assert k.reason and k.indices, (info.full_name, k)
