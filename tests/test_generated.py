"""What ``tools/generate.py`` writes is committed as it writes it.

The mirrors' and domain packages' imports and ``__all__`` and the mirrors' docs lists are
derived from the op database and the family modules' ``__all__``; each test fails when a
generated block differs from what the tool produces now (the drop-in table it also writes is
checked by ``tests/test_scan.py``).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUN = "run: python tools/generate.py"


def _load_tool():
    spec = importlib.util.spec_from_file_location("_generate", ROOT / "tools" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generate = _load_tool()
BLOCKS = generate.generated_blocks()


@pytest.mark.parametrize(
    "path", sorted(BLOCKS), ids=[str(p.relative_to(ROOT)) for p in sorted(BLOCKS)]
)
def test_generated_block_is_fresh(path):
    text = path.read_text(encoding="utf-8")
    assert generate.replace_block(path, BLOCKS[path]) == text, (
        f"{path.relative_to(ROOT)}: the generated block is stale; {RUN}"
    )


def test_every_file_has_one_block():
    for path in BLOCKS:
        text = path.read_text(encoding="utf-8")
        begin, end = generate.PY_MARKERS if path.suffix == ".py" else generate.RST_MARKERS
        assert text.count(begin) == text.count(end) == 1, path


def test_the_mirrors_and_domain_packages_are_all_generated():
    names = {str(p.relative_to(ROOT)) for p in BLOCKS}
    assert {
        "mscompat/shape/__init__.py",
        "mscompat/losses/__init__.py",
        "mscompat/nn/__init__.py",
        "mscompat/nn/functional.py",
        "mscompat/tensor.py",
        "mscompat/vision/__init__.py",
        "mscompat/layers/__init__.py",
        "mscompat/indexing/__init__.py",
        "mscompat/math/__init__.py",
        "docs/api/nn.rst",
        "docs/api/nn_functional.rst",
        "docs/api/tensor.rst",
    } <= names


def test_a_stale_block_is_named_and_repaired(tmp_path):
    """A name missing from a copy of a page: check mode names the file and writes nothing, and
    the block the tool writes restores the page."""
    source = ROOT / "docs" / "api" / "nn.rst"
    original = source.read_text(encoding="utf-8")
    page = tmp_path / "nn.rst"
    page.write_text(original.replace("\n   MaxPool2d\n", "\n"), encoding="utf-8")
    repaired = generate.replace_block(page, BLOCKS[source])
    assert repaired == original
    assert generate._update(page, repaired, check=True) == page
    assert page.read_text(encoding="utf-8") != original
    assert generate._update(page, repaired, check=False) == page
    assert page.read_text(encoding="utf-8") == original


def test_generated_python_is_one_import_a_line_and_a_sorted_all():
    """The form that keeps ruff format stable and each re-export explicit."""
    block = BLOCKS[ROOT / "mscompat" / "nn" / "functional.py"]
    assert "from mscompat.shape.grid_sample import grid_sample as grid_sample\n" in block
    names = re.findall(r'"(\w+)"', block.split("__all__")[1])
    assert names == sorted(names) and "interpolate" in names
