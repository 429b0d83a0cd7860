"""The dispatch registry: per-call choice (``supports``), ``which`` for a call, forcing, families,
unqualified names and an isolated registry. Demo ops live only inside ``isolated()``."""

from __future__ import annotations

from typing import Any, Dict, List

import mindspore as ms
import numpy as np
import pytest
import torch

import mscompat.shape as shape
from mscompat.custom_ops import (
    BackendNotAvailableError,
    TensorSpec,
    _tables,
    isolated,
    register,
    registered_ops,
    resolve,
    set_order,
    unsupported,
    use_backend,
    which,
)
from mscompat.custom_ops.registry import available, call, implementations
from mscompat.losses import sigmoid_focal_loss
from mscompat.testing.references.mmdet import py_sigmoid_focal_loss


@pytest.fixture(autouse=True)
def _isolated():
    with isolated():
        yield
    assert not [op for op in registered_ops() if op.startswith("demo.")]


def _f32_only(x: TensorSpec) -> Any:
    return None if x.dtype == ms.float32 else f"{x.dtype_name} is not supported"


def _demo() -> None:
    register("demo.double", "composite", note="x + x")(lambda x: x + x)
    register("demo.double", "aot", supports=_f32_only, note="kernel")(lambda x: x * 2)


def test_isolated_forgets_ops_orders_and_tables():
    before = registered_ops()
    with isolated():
        _demo()
        set_order("demo.double", ("composite", "aot"))
        assert "demo.double" in registered_ops()
        assert hasattr(_tables, "op_demo__double")
    assert registered_ops() == before
    assert not hasattr(_tables, "op_demo__double")


def test_per_call_choice_and_reason():
    _demo()
    x32, x64 = ms.Tensor([1.0], ms.float32), ms.Tensor([1.0], ms.float64)
    assert which("demo.double").backend == "aot"  # per op: predicates not consulted
    assert which("demo.double", x32).backend == "aot"
    choice = which("demo.double", x64)
    assert choice.backend == "composite"
    assert choice.reason == "aot: float64 is not supported -> composite: x + x"
    assert unsupported("demo.double", "aot", x64) == "float64 is not supported"
    assert unsupported("demo.double", "aot", x32) is None


def test_forcing_an_unsupporting_backend_raises_with_the_reason():
    _demo()
    x64 = ms.Tensor([1.0], ms.float64)
    with use_backend("aot", "demo.double"):
        with pytest.raises(BackendNotAvailableError, match="float64 is not supported"):
            which("demo.double", x64)
        with pytest.raises(BackendNotAvailableError, match=r"Backends that do here: \['compo"):
            call("demo.double", x64)


def test_family_registration_is_one_call():
    register(("demo.pool1d", "demo.pool2d"), "composite", note="shared")(abs)
    assert implementations("demo.pool1d")["composite"][0].fn is abs
    assert implementations("demo.pool2d")["composite"][0].op == "demo.pool2d"
    set_order(("demo.pool1d", "demo.pool2d"), ("composite",))
    assert which("demo.pool2d").backend == "composite"


def test_one_probe_runs_once_for_a_family():
    runs: List[int] = []
    register(("demo.a", "demo.b"), "aot", probe=lambda: runs.append(1))(abs)
    assert available("demo.a", "aot")[0] and available("demo.b", "aot")[0]
    assert runs == [1]


def test_unqualified_names_resolve_when_unambiguous():
    assert resolve("sigmoid_focal_loss") == "losses.sigmoid_focal_loss"
    assert which("sigmoid_focal_loss").op == "losses.sigmoid_focal_loss"
    register("demo.interpolate", "composite")(abs)
    with pytest.raises(BackendNotAvailableError, match="ambiguous"):
        resolve("interpolate")
    with pytest.raises(BackendNotAvailableError, match="no implementation registered"):
        which("no_such_op")


def test_ascend_only_registration_is_one_line_and_unavailable_on_cpu():
    register("demo.ascend_only", "native", devices=("Ascend",), note="mint kernel")(abs)
    register("demo.ascend_only", "composite")(abs)
    ok, why = available("demo.ascend_only", "native")
    assert not ok and "Ascend" in why
    assert which("demo.ascend_only").backend == "composite"
    assert "native: native is registered for Ascend" in which("demo.ascend_only").reason
    assert which("demo.ascend_only", device="Ascend").backend == "native"


def test_failing_probe_is_reported_and_skipped():
    def probe():
        raise RuntimeError("The kernel Sort unregistered")

    register("demo.probe", "native", probe=probe)(abs)
    register("demo.probe", "composite")(abs)
    choice = which("demo.probe")
    assert choice.backend == "composite"
    assert "The kernel Sort unregistered" in choice.reason


def test_one_backend_can_have_per_device_implementations():
    register("demo.per_device", "native", devices=("CPU",), note="ops kernel")(abs)
    register("demo.per_device", "native", devices=("Ascend",), note="mint kernel")(abs)
    register("demo.per_device", "composite")(abs)
    assert which("demo.per_device").backend == "native"
    assert which("demo.per_device", device="Ascend").backend == "native"
    assert len(implementations("demo.per_device")["native"]) == 2
    with pytest.raises(ValueError, match="already has a 'native' implementation for"):
        register("demo.per_device", "native", devices=("CPU",))(abs)


def test_graph_mode_only_parses_the_called_ops_implementations():
    # An op whose implementation cannot be compiled must not break graph mode for others.
    @register("demo.uncompilable", "composite")
    def _uncompilable(x):
        return _name_that_does_not_exist(x)  # noqa: F821

    x = ms.Tensor(np.zeros((2, 3), np.float32))

    def loss(a, b):
        return sigmoid_focal_loss(a, b)

    expected = py_sigmoid_focal_loss(torch.zeros(2, 3), torch.zeros(2, 3)).item()
    assert abs(float(ms.jit(loss)(x, x).asnumpy()) - expected) < 1e-6


def test_graph_mode_chooses_per_call_at_compile_time():
    def double_aot(x):
        return x * 2

    def double_composite(x):
        return x + x + 1  # tells the two apart

    register("demo.double", "aot", supports=_f32_only)(double_aot)
    register("demo.double", "composite")(double_composite)

    @ms.jit
    def run(x):
        return call("demo.double", x)

    assert run(ms.Tensor([1.0], ms.float32)).asnumpy().tolist() == [2.0]
    assert run(ms.Tensor([1.0], ms.float64)).asnumpy().tolist() == [3.0]


def _twice(x):
    return x * 2


def _sum_twice(x):
    return x + x


def test_graph_mode_forced_unsupported_backend_fails_at_compile():
    register("demo.double", "aot", supports=_f32_only)(_twice)
    register("demo.double", "composite")(_sum_twice)

    @ms.jit
    def run(x):
        return call("demo.double", x) * 1

    with use_backend("aot", "demo.double"), pytest.raises(Exception, match="float64 is not"):
        run(ms.Tensor([1.0], ms.float64))


# ----------------------------------------------------------------------------- the real ops
# which(op, *call) against what really runs: each implementation of the op is wrapped in the
# op's table (read by dispatch at every PyNative call) to record the backend that ran.


def _spy(monkeypatch: pytest.MonkeyPatch, op: str) -> List[str]:
    ran: List[str] = []
    table: Dict[str, Any] = getattr(_tables, "op_" + op.replace(".", "__"))
    for key, fn in list(table.items()):

        def wrapped(*args: Any, _fn: Any = fn, _key: str = key) -> Any:
            ran.append(_key.split(":")[0])
            return _fn(*args)

        monkeypatch.setitem(table, key, wrapped)
    return ran


_R = np.random.default_rng(0)
_X = _R.standard_normal((2, 3, 6, 6)).astype(np.float32)
_X5 = _R.standard_normal((1, 2, 3, 3, 3)).astype(np.float32)
_G4 = _R.uniform(-1, 1, (2, 4, 4, 2)).astype(np.float32)
_G5 = _R.uniform(-1, 1, (1, 2, 2, 2, 3)).astype(np.float32)
_BOX = np.array([[0, 0, 2, 3], [1, 1, 4, 2], [2, 0, 3, 5]], np.float32)
_CORNERS = {"align_corners": True}
_AA = {"antialias": True}


def _t(a: np.ndarray, dtype: Any = None) -> ms.Tensor:
    t = ms.Tensor(a)
    return t if dtype is None else t.astype(dtype)


CALLS = [
    ("losses.sigmoid_focal_loss", lambda d: (_t(_X, d), _t(_X > 0, d)), {}),
    ("shape.adaptive_avg_pool2d", lambda d: (_t(_X, d), 4), {}),
    ("shape.adaptive_avg_pool2d", lambda d: (_t(_X, d), 1), {}),
    ("shape.adaptive_max_pool2d", lambda d: (_t(_X, d), 4), {}),
    ("shape.max_pool2d", lambda d: (_t(_X, d), 2), {}),
    ("shape.max_unpool2d", None, {}),
    ("shape.interpolate", lambda d: (_t(_X, d),), {"scale_factor": 2, "mode": "bilinear"}),
    ("shape.interpolate", lambda d: (_t(_X, d),), {"size": 4, "mode": "area"}),
    ("shape.interpolate", lambda d: (_t(_X, d),), {"size": 4, "mode": "bicubic"}),
    ("shape.interpolate", lambda d: (_t(_X, d),), {"size": 4, "mode": "bilinear", **_AA}),
    ("shape.grid_sample", lambda d: (_t(_X, d), _t(_G4, d)), {"align_corners": False}),
    ("shape.grid_sample", lambda d: (_t(_X5, d), _t(_G5, d)), {"align_corners": False}),
    ("shape.grid_sample", lambda d: (_t(_X5, d), _t(_G5, d)), {"mode": "nearest", **_CORNERS}),
    ("shape.sort", lambda d: (_t(_X, d),), {}),
    ("shape.topk", lambda d: (_t(_X, d), 3), {}),
    ("shape.fold", lambda d: (_t(_X.reshape(2, 12, 9), d), (4, 4), 2), {}),
    ("shape.fold", lambda d: (_t(_X.reshape(2, 12, 9) > 0, ms.int32), (4, 4), 2), {}),
    ("losses.giou_loss", lambda d: (_t(_BOX, d), _t(_BOX[::-1].copy(), d)), {}),
    ("vision.complete_box_iou_loss", lambda d: (_t(_BOX, d), _t(_BOX[::-1].copy(), d)), {}),
    ("layers.embedding_bag", lambda d: (_t(np.array([[0, 2], [1, 0]])), _t(_BOX, d)), {}),
]


def _unpool_args(dtype: Any) -> tuple:
    values, indices = shape.max_pool2d(_t(_X, dtype), 2, return_indices=True)
    return values, indices, 2


# float16 (where the predicates refuse most) and float32; float64 is in the op database's variants.
@pytest.mark.parametrize("dtype", [ms.float16, ms.float32], ids=str)
@pytest.mark.parametrize("op,make,kwargs", CALLS, ids=lambda v: v if isinstance(v, str) else "")
def test_which_names_the_backend_that_runs(monkeypatch, op, make, kwargs, dtype):
    args = _unpool_args(dtype) if make is None else make(dtype)
    front = getattr(__import__(f"mscompat.{op.split('.')[0]}", fromlist=["_"]), op.split(".", 1)[1])
    choice = which(op, *args, **kwargs)
    ran = _spy(monkeypatch, op)
    front(*args, **kwargs)
    assert ran == [choice.backend], choice.reason
    for backend in implementations(op):
        if not available(op, backend)[0]:
            continue
        ran.clear()
        with use_backend(backend, op):
            try:
                forced = which(op, *args, **kwargs)
            except BackendNotAvailableError as exc:
                assert "does not support this call" in str(exc)
                with pytest.raises(BackendNotAvailableError):
                    front(*args, **kwargs)
                assert ran == []
                continue
            front(*args, **kwargs)
        assert ran == [backend] == [forced.backend]


def test_float16_focal_says_why_it_is_not_the_kernel():
    x = ms.Tensor([[1.0, -1.0]], ms.float16)
    choice = which("sigmoid_focal_loss", x, x)
    assert choice.backend == "composite"
    assert choice.reason.startswith("aot: float16 is not supported by the kernel")


def test_empty_input_is_answered_before_any_backend(monkeypatch):
    x = ms.Tensor(np.zeros((0, 3, 4, 4), np.float32))
    assert which("adaptive_avg_pool2d", x, 2).backend == "none"
    ran = _spy(monkeypatch, "shape.adaptive_avg_pool2d")
    assert shape.adaptive_avg_pool2d(x, 2).shape == (0, 3, 2, 2)
    assert ran == []


def test_which_reports_the_front_doors_validation_error():
    with pytest.raises(ValueError, match="mode"):
        which("interpolate", ms.Tensor(_X), scale_factor=2, mode="cubic")
