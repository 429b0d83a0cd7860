"""The kernel-library helper (``mscompat.custom_ops.aot``): signatures, registrations, probes.

Every library's numbers are tested through its ops (test_op_db.py and the kernel test files);
this file tests what the declarations rely on."""

from __future__ import annotations

import json
import warnings

import mindspore as ms
import pytest
from mindspore.ops import DataType

from mscompat.custom_ops import aot
from mscompat.custom_ops.aot import FLOATS, Entry, KernelLibrary, KernelUnavailableError


def _rows(info):
    info = json.loads(info) if isinstance(info, str) else info
    return [[dt for dt, _ in row] for row in info["dtype_format"]]


def test_registration_rows_follow_the_signature():
    f16, f32 = DataType.F16_Default, DataType.F32_Default
    info = aot.reg_info("demo", "dy x:U t:i64 d:i8 -> dx", [(f32, f32), (f32, f16)], "CPU")
    assert _rows(info) == [
        ["float32", "float32", "int64", "int8", "float32"],
        ["float32", "float16", "int64", "int8", "float32"],
    ]
    info = aot.reg_info("demo", "x p:i64 -> y:i64", FLOATS, "CPU")
    assert _rows(info) == [["float32", "int64", "int64"], ["float64", "int64", "int64"]]


def test_output_dtypes_are_read_off_the_signature():
    entry = Entry("WindowMax", "x t:i64 -> values indices:i64", FLOATS, aot.shape_of(0, 0))
    out_dtype = aot._signature_dtype(entry.signature)
    assert out_dtype(ms.float64, ms.int64) == (ms.float64, ms.int64)
    assert aot._signature_dtype("dy x:U -> dx")(ms.float32, ms.float16) == ms.float32
    assert aot.shape_of(1)([2, 3], [4]) == [4]


@pytest.mark.parametrize(
    ("signature", "message"),
    [
        ("x y", "needs '->'"),
        ("x:q -> y", "unknown dtype 'q'"),
        ("x -> y:U", "no input of dtype"),
    ],
)
def test_bad_signature_is_refused(signature, message):
    with pytest.raises(ValueError, match=message):
        Entry("Demo", signature, FLOATS, aot.shape_of(0))


def test_zero_bprop_needs_a_known_arity():
    with pytest.raises(ValueError, match="no zero bprop for 7 inputs"):
        Entry("Demo", "a b c d e f g -> y", FLOATS, aot.shape_of(0))
    Entry("Demo", "a b c d e f g -> y", FLOATS, aot.shape_of(0), bprop=None)


def test_missing_build_warns_once_and_raises(tmp_path, monkeypatch):
    monkeypatch.setattr(aot, "_HERE", tmp_path)
    library = KernelLibrary(
        "no_such_library", [Entry("Demo", "x -> y", FLOATS, aot.shape_of(0))], lambda k: None
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            with pytest.raises(KernelUnavailableError, match="was not built"):
                library.probe()
    built = [str(w.message) for w in caught if "was not built" in str(w.message)]
    assert len(built) == 1 and "no_such_library" in built[0]
    assert library.kernels == {}


def test_tables_are_filled_with_the_kernels():
    try:
        aot.kernel_path("focal_loss", "CPU")
    except KernelUnavailableError:
        pytest.skip("CPU focal kernel not built")
    from mscompat.custom_ops import focal_loss

    library = KernelLibrary("focal_loss", focal_loss.LIBRARY.entries, lambda k: None)
    before = library.table("FocalLossForward")
    kernels = library.ops("CPU")
    assert before["CPU"] is kernels["FocalLossForward"]
    assert library.table("FocalLossBackward")["CPU"] is kernels["FocalLossBackward"]
    assert isinstance(kernels["FocalLossForward"], aot.LockedCustom)
    with pytest.raises(KeyError, match="no entry point 'Nope'"):
        library.table("Nope")


def test_gpu_builds_only_the_cuda_entries(monkeypatch):
    built = []
    monkeypatch.setattr(aot, "kernel_path", lambda name, device: f"/{name}_{device}.so")
    monkeypatch.setattr(Entry, "build", lambda self, path, device: built.append(self.name) or path)
    entries = [Entry(n, "x -> y", FLOATS, aot.shape_of(0)) for n in ("Align", "Pool")]
    library = KernelLibrary("demo", entries, lambda k: None, cuda_entries=("Align",))
    pool = library.table("Pool")
    assert library.ops("GPU") == {"Align": "/demo_GPU.so"} and built == ["Align"]
    assert "GPU" not in pool and "GPU" not in library.table("Pool")
    assert library.table("Align")["GPU"] == "/demo_GPU.so"
    assert set(library.ops("CPU")) == {"Align", "Pool"}
    with pytest.raises(ValueError, match=r"cuda_entries names no entry of 'demo': \['Nope'\]"):
        KernelLibrary("demo", entries, lambda k: None, cuda_entries=("Nope",))
