"""The mirrors (mscompat.nn, .nn.functional, .tensor, .vision) against the op database.

Each op database entry names the PyTorch APIs it is a drop-in for (``torch_apis``); the
namespace of each name tells which mirror must re-export the entry's op under that name
(:data:`mscompat._namespaces.MIRRORS`). ``tools/generate.py`` writes the mirrors' imports and
``__all__`` from that, and ``tests/test_generated.py`` fails when they are stale; these tests
check what generation cannot: that a mirror holds the domain object itself, a name PyTorch has,
every domain Cell under a ``torch.nn`` name, and that the mirrors run (doctests, ``ms.jit``).
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
from typing import Any, Dict, List, Tuple

import mindspore as ms
import numpy as np
import pytest

import mscompat
import mscompat._namespaces
import mscompat.nn
import mscompat.nn.functional
import mscompat.tensor
import mscompat.vision
from mscompat._namespaces import (
    DOMAIN_PACKAGES,
    MIRRORS,
    NOT_MIRRORED,
    REQUIRED,
    mirror_exports,
    mirror_import_line,
)
from mscompat.testing.db import OP_DB

torch = pytest.importorskip("torch")

MIRROR_MODULES = sorted(set(MIRRORS.values()))
#: Packages of mscompat that are not op families (infrastructure) or are only mirrors
#: (mscompat.vision is both: torchvision.ops' mirror and the package of those ops).
NOT_DOMAIN = {"custom_ops", "port", "scan", "testing"} | {
    m.split(".")[1] for m in MIRROR_MODULES if m != "mscompat.vision"
}
PACKAGES = sorted(
    f"mscompat.{m.name}"
    for m in pkgutil.iter_modules(mscompat.__path__)
    if m.ispkg and m.name not in NOT_DOMAIN
)

EXPECTED: Dict[str, Dict[str, Tuple[Any, str]]] = mirror_exports(OP_DB)


def _torch_namespaces(module: str) -> List[Any]:
    """The PyTorch objects whose names ``module`` mirrors (``torch.Tensor`` excluded)."""
    spaces = []
    for namespace, mirror in MIRRORS.items():
        if mirror != module or namespace not in REQUIRED:
            continue
        if namespace.startswith("torchvision"):
            spaces.append(pytest.importorskip(namespace))
        else:
            spaces.append(importlib.import_module(namespace))
    return spaces


def test_the_mapping_covers_the_mirrors():
    # a new package of ops must be named in DOMAIN_PACKAGES for tools/generate.py to see it
    assert list(DOMAIN_PACKAGES) == PACKAGES
    assert EXPECTED["mscompat.nn.functional"], "the op database has torch.nn.functional entries"
    assert EXPECTED["mscompat.nn"] and EXPECTED["mscompat.tensor"]


@pytest.mark.parametrize("module_name", MIRROR_MODULES)
def test_mirror_names_are_the_domain_objects(module_name):
    """(b) a mirror re-exports: the same object as the domain package's, defined there."""
    module = importlib.import_module(module_name)
    assert module.__all__ == sorted(EXPECTED[module_name])  # else tests/test_generated.py fails
    for name in module.__all__:
        obj = getattr(module, name)
        op, entry = EXPECTED[module_name][name]
        assert obj is op, f"{module_name}.{name} is not the op of {entry} ({op!r})"
        home = obj.__module__
        assert home.rpartition(".")[0] in DOMAIN_PACKAGES, (
            f"{module_name}.{name} is defined in {home}, not in a domain package"
        )
        assert obj is getattr(importlib.import_module(home.rpartition(".")[0]), obj.__name__), (
            f"{module_name}.{name} is not exported by its domain package"
        )


def _other_api(obj: Any, name: str) -> bool:
    """The Cell's entries name other APIs and not ``torch.nn.<name>``: MMDetection's
    ``L1Loss``/``MSELoss``/``SmoothL1Loss`` (``mmdet.models.losses``) share torch.nn's class
    names, not their semantics, and must not be mirrored as torch.nn's."""
    apis = {api for info in OP_DB if info.op is obj for api in info.torch_apis}
    return bool(apis) and f"torch.nn.{name}" not in apis


@pytest.mark.parametrize("package", DOMAIN_PACKAGES)
def test_cells_with_a_torch_nn_name_are_in_mscompat_nn(package):
    """(c) a domain Cell whose class name torch.nn has is in mscompat.nn, the same object."""
    module = importlib.import_module(package)
    for name in module.__all__:
        obj = getattr(module, name)
        if not (inspect.isclass(obj) and issubclass(obj, ms.nn.Cell)):
            continue
        if hasattr(torch.nn, name) and not _other_api(obj, name):
            assert getattr(mscompat.nn, name, None) is obj, (
                f"{package}.{name} is a Cell under a torch.nn name but mscompat.nn lacks it"
            )


@pytest.mark.parametrize("module_name", MIRROR_MODULES)
def test_mirror_names_exist_in_the_torch_namespace(module_name):
    """(d) every mirror name is a name of the PyTorch namespace it mirrors."""
    module = importlib.import_module(module_name)
    if not module.__all__:
        return  # nothing to check (mscompat.vision today; torchvision is not needed)
    spaces = _torch_namespaces(module_name)
    for name in module.__all__:
        assert any(hasattr(space, name) for space in spaces), (
            f"{module_name}.{name}: {[s.__name__ for s in spaces]} has no such name"
        )


def test_functions_and_cells_are_in_their_mirrors():
    for name in mscompat.nn.__all__:
        assert inspect.isclass(getattr(mscompat.nn, name)), name
    for module in (mscompat.nn.functional, mscompat.tensor):
        for name in module.__all__:
            assert inspect.isfunction(getattr(module, name)), f"{module.__name__}.{name}"
    assert mscompat.nn.functional is importlib.import_module("mscompat.nn.functional")


def test_not_mirrored_names_are_real_and_still_in_the_op_database():
    apis = {api for info in OP_DB for api in info.torch_apis}
    for api, why in NOT_MIRRORED.items():
        assert api in apis, f"{api} is no longer in the op database: drop it from NOT_MIRRORED"
        namespace, _, name = api.rpartition(".")
        assert hasattr(importlib.import_module(namespace), name), api
        assert why
    # the reason is real: PyTorch's *_with_indices return the indices by default
    x = torch.zeros(1, 1, 4)
    assert isinstance(torch.nn.functional.max_pool1d_with_indices(x, 2), tuple)
    assert not isinstance(mscompat.nn.functional.max_pool1d(ms.Tensor(x.numpy()), 2), tuple)


def test_mirror_import_line():
    F = mscompat.nn.functional
    line = mirror_import_line("torch.nn.functional.interpolate", F.interpolate)
    assert line == "from mscompat.nn.functional import interpolate"
    assert mirror_import_line("torch.Tensor.sort", mscompat.tensor.sort) == (
        "from mscompat.tensor import sort"
    )
    assert mirror_import_line("torch.nn.Upsample", mscompat.nn.Upsample) == (
        "from mscompat.nn import Upsample"
    )
    # a name the mirror does not hold points at the mirror's name for the same op
    assert mirror_import_line("torch.nn.functional.max_pool2d_with_indices", F.max_pool2d) == (
        "from mscompat.nn.functional import max_pool2d"
    )
    assert mirror_import_line("mmdet.models.losses.FocalLoss", object()) is None
    assert mirror_import_line("torch.sort", object()) is None


@pytest.mark.parametrize(
    "module",
    [
        mscompat.nn,
        mscompat.nn.functional,
        mscompat.tensor,
        mscompat._namespaces,
    ],
)
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0


def test_a_port_changes_the_import_only():
    """The same source runs with ``F`` bound to torch's module or to the mirror."""
    source = (
        "def forward(x):\n    return F.adaptive_max_pool2d(F.interpolate(x, scale_factor=2), 3)\n"
    )
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 7)).astype(np.float32)
    ns_torch: Dict[str, Any] = {"F": torch.nn.functional}
    ns_ms: Dict[str, Any] = {"F": mscompat.nn.functional}
    exec(source, ns_torch)  # noqa: S102
    exec(source, ns_ms)  # noqa: S102
    expected = ns_torch["forward"](torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(ns_ms["forward"](ms.Tensor(x)).asnumpy(), expected)


def test_mirror_function_runs_under_jit():
    import mscompat.nn.functional as F

    def forward(x):
        return F.interpolate(x, scale_factor=2, mode="bilinear")

    x = np.random.default_rng(1).standard_normal((1, 2, 3, 4)).astype(np.float32)
    expected = torch.nn.functional.interpolate(
        torch.from_numpy(x), scale_factor=2, mode="bilinear"
    ).numpy()
    got = ms.jit(forward)(ms.Tensor(x)).asnumpy()
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
