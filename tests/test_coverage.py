"""Every public name is covered: an op database entry, a docs autosummary line, a CHANGELOG line.

Public names are the ``__all__`` of the domain packages (``mscompat.losses``, ``mscompat.shape``)
and of the mirror packages shaped like PyTorch's namespaces (``mscompat.nn``,
``mscompat.nn.functional``, ``mscompat.tensor``, ``mscompat.vision``), which re-export the same
objects: an object is covered once, wherever it is exported.

* An op database entry covers the object it runs (``OpInfo.op``) and the object its public name
  resolves to (``losses.weighted_loss`` is a decorator: its entry runs a decorated loss). A Cell
  is covered by its own ``is_cell`` entry (see :class:`mscompat.testing.OpInfo`), and its
  docstring's "See :func:`...`" names a function that has an entry.
* A docs autosummary line (``docs/api/*.rst``, under its ``.. currentmodule::``) documents the
  object it resolves to.
* CHANGELOG.md mentions the name in a code span.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from mscompat.testing import OP_DB

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "mscompat.losses",
    "mscompat.shape",
    "mscompat.nn",
    "mscompat.nn.functional",
    "mscompat.tensor",
    "mscompat.vision",
)


def _public():
    for package in PACKAGES:
        try:
            module = importlib.import_module(package)
        except ImportError:  # a mirror package not written yet
            continue
        for name in module.__all__:
            yield package, name, getattr(module, name)


PUBLIC = list(_public())


def _resolve(module, name):
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None


def _entry_objects():
    covered = {}
    for info in OP_DB:
        if info.backend:
            continue
        package, _, name = info.name.rpartition(".")
        for obj in (info.op, _resolve(f"mscompat.{package}", name)):
            if obj is not None:
                covered.setdefault(id(obj), info)
    return covered


def _autosummary_objects():
    """id -> (module, name) of every object an autosummary line of docs/api documents."""
    found = {}
    for rst in sorted((ROOT / "docs" / "api").glob("*.rst")):
        module, in_summary = None, False
        for line in rst.read_text(encoding="utf-8").splitlines():
            if line.startswith(".. currentmodule::"):
                module = line.split("::", 1)[1].strip()
            if line.startswith(".. autosummary::"):
                in_summary = True
                continue
            if in_summary and line and not line[0].isspace():
                in_summary = False
            entry = line.strip()
            if not in_summary or not entry or entry.startswith(":"):
                continue
            path = entry if module is None else f"{module}.{entry}"
            owner, _, name = path.rpartition(".")
            obj = _resolve(owner, name)
            if obj is not None:
                found.setdefault(id(obj), path)
    return found


def _family(match):
    return " ".join(f"{match.group(1)}{d}" for d in ("1d", "2d", "3d"))


def _changelog_tokens():
    """The words of CHANGELOG.md's code spans; a family ``max_pool1d/2d/3d`` or ``MaxPool*d``
    names each of its members."""
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    tokens = set()
    for span in re.findall(r"`([^`]+)`", text):
        span = re.sub(r"(\w+?)1d/2d/3d", _family, span)
        tokens.update(re.findall(r"\w+", re.sub(r"(\w+)\*d", _family, span)))
    return tokens


IDS = [f"{package}.{name}" for package, name, _ in PUBLIC]


def test_public_names_are_found():
    assert {p for p, _, _ in PUBLIC} >= {"mscompat.losses", "mscompat.shape"}
    assert len(PUBLIC) > 50


@pytest.mark.parametrize("package, name, obj", PUBLIC, ids=IDS)
def test_public_name_has_an_op_database_entry(package, name, obj):
    assert id(obj) in _ENTRIES, (
        f"{package}.{name} has no op database entry (mscompat/testing/db): add an OpInfo"
    )
    if isinstance(obj, type):
        assert _ENTRIES[id(obj)].is_cell, f"{package}.{name} is a Cell without its own entry"
        if "has no functional form" in (obj.__doc__ or ""):
            return  # a block without a function in PyTorch/torchvision (FrozenBatchNorm2d...)
        see = re.search(r"See\s+:func:`~?([\w.]+)`", obj.__doc__ or "")
        assert see, f"{package}.{name}'s docstring does not say 'See :func:`...`'"
        function = _resolve(obj.__module__, see.group(1).rpartition(".")[2])
        assert id(function) in _ENTRIES, f"{package}.{name}: {see.group(1)} has no entry"


@pytest.mark.parametrize("package, name, obj", PUBLIC, ids=IDS)
def test_public_name_has_a_docs_autosummary_line(package, name, obj):
    assert id(obj) in _DOCUMENTED, f"{package}.{name} has no autosummary line in docs/api/*.rst"


@pytest.mark.parametrize("package, name, obj", PUBLIC, ids=IDS)
def test_public_name_is_in_the_changelog(package, name, obj):
    assert name in _CHANGELOG, f"{package}.{name} is not mentioned in CHANGELOG.md (`{name}`)"


_ENTRIES = _entry_objects()
_DOCUMENTED = _autosummary_objects()
_CHANGELOG = _changelog_tokens()
