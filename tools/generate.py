"""Regenerate every file, or block of a file, that is derived from the op database and the family
modules' ``__all__``. Run it after adding, renaming or removing an op, an op database entry or
a ``torch_apis`` name::

    python tools/generate.py          # rewrite what is stale
    python tools/generate.py --check  # only name what is stale (exit status 1)

What it writes (between ``# BEGIN GENERATED (tools/generate.py)`` and ``# END GENERATED`` in
Python, ``.. BEGIN GENERATED (tools/generate.py)`` and ``.. END GENERATED`` in reST; what is
outside, such as a module docstring with its examples, is left as it is):

* the domain packages' ``__init__`` (:data:`mscompat._namespaces.DOMAIN_PACKAGES`): imports and
  ``__all__``, every name of each public family module's ``__all__`` (``mscompat/shape/fold.py``
  and so on; read from the source, so a stale ``__init__`` that fails to import is repaired);
* the mirrors (:data:`mscompat._namespaces.MIRRORS`: ``mscompat.nn``, ``mscompat.nn.functional``,
  ``mscompat.tensor``, ``mscompat.vision``): imports and ``__all__``, the names the op
  database's ``torch_apis`` give them (:func:`mscompat._namespaces.mirror_exports`), each
  imported from the family module that exports the object;
* the name lists of the mirrors' docs pages (``docs/api/nn.rst``...), grouped by the title of
  the page of the domain package's docs that documents each name, in that page's order;
* ``mscompat/scan/data/drop_ins.json``, the drop-in table ``mscompat scan`` reads
  (:func:`mscompat.scan.knowledge.drop_ins_table`).

``tests/test_generated.py`` (the blocks) and ``tests/test_scan.py`` (the table) fail until the
committed files equal what this tool writes. The Python it writes is already in ``ruff format``
form: one ``from module import name as name`` line per name (the explicit re-export form, which
keeps each import on its own line) and a sorted ``__all__`` filled to the line length between
``# fmt: off`` and ``# fmt: on``.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import re
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from mscompat._namespaces import DOMAIN_PACKAGES, MIRRORS, mirror_exports

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "api"
LINE_LENGTH = 100
PY_MARKERS = ("# BEGIN GENERATED (tools/generate.py)", "# END GENERATED")
RST_MARKERS = (".. BEGIN GENERATED (tools/generate.py)", ".. END GENERATED")

#: (module, name in that module, name it is bound to): ``from module import name as bound``
Import = Tuple[str, str, str]


class GenerateError(Exception):
    """What the sources lack for the tool to generate (said to the user, no traceback)."""


def module_path(module: str) -> Path:
    """The source file of ``module``, found without importing it."""
    base = ROOT.joinpath(*module.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


# -- Python ------------------------------------------------------------------------------------


def _import_key(item: Tuple[Import, str]) -> Tuple[str, int, str]:
    """ruff's isort order: by module, then constants, classes, other names."""
    (module, name, _), _ = item
    kind = 0 if name.isupper() and len(name) > 1 else 1 if name[:1].isupper() else 2
    return module, kind, name


def python_block(
    imports: Sequence[Import],
    names: Sequence[str],
    source: str,
    notes: Optional[Dict[str, str]] = None,
) -> str:
    """The generated block of a package: ``imports`` one a line, then ``__all__`` = ``names``.

    ``notes`` maps an import's bound name to a comment written above it.
    """
    notes = notes or {}
    lines = [PY_MARKERS[0], f"# {source}", "from typing import List", ""]
    for (module, name, alias), note in sorted(
        ((i, notes.get(i[2], "")) for i in imports), key=_import_key
    ):
        if note:  # ruff's isort wants a blank line before a comment inside an import block
            lines.extend([f"# {note}"] if lines[-1] == "" else ["", f"# {note}"])
        line = f"from {module} import {name} as {alias}"
        if len(line) > LINE_LENGTH:  # as ruff format writes a long import
            line = f"from {module} import (\n    {name} as {alias},\n)"
        lines.append(line)
    lines.extend([""] if imports else [])
    if not names:
        lines.append("__all__: List[str] = []")
    else:
        lines += ["# fmt: off", "__all__: List[str] = ["]
        row = "   "
        for name in sorted(names):
            item = f' "{name}",'
            if len(row) + len(item) > LINE_LENGTH:
                lines.append(row)
                row = "   "
            row += item
        lines += [row, "]", "# fmt: on"]
    lines.append(PY_MARKERS[1])
    return "\n".join(lines)


def family_modules(package: str) -> Iterator[Tuple[str, List[str]]]:
    """``(module, its __all__)`` for each public module of a domain package, read from source."""
    for path in sorted(module_path(package).parent.glob("*.py")):
        if path.name.startswith("_"):
            continue
        names = None
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1:
                target, value = node.targets[0], node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                target, value = node.target, node.value
            else:
                continue
            if isinstance(target, ast.Name) and target.id == "__all__":
                names = ast.literal_eval(value)
        if not isinstance(names, (list, tuple)):
            raise GenerateError(f"{path.relative_to(ROOT)}: no literal __all__ = [...] to export")
        yield f"{package}.{path.stem}", list(names)


def domain_blocks() -> Dict[Path, str]:
    """Each domain package's ``__init__`` block: every public family module's ``__all__``."""
    out = {}
    for package in DOMAIN_PACKAGES:
        imports = [(m, n, n) for m, names in family_modules(package) for n in names]
        source = "the __all__ of each public module of this package"
        out[module_path(package)] = python_block(imports, [n for _, _, n in imports], source)
    return out


def _family_index() -> Dict[int, List[Tuple[str, str]]]:
    """``id(object) -> [(family module, name)...]`` over the domain packages' family modules."""
    index: Dict[int, List[Tuple[str, str]]] = {}
    for package in DOMAIN_PACKAGES:
        for module, names in family_modules(package):
            loaded = importlib.import_module(module)
            for name in names:
                index.setdefault(id(getattr(loaded, name)), []).append((module, name))
    return index


def mirror_names() -> Dict[str, Dict[str, Tuple[Any, str]]]:
    """What each mirror exports, from the op database (importing it imports the domain packages)."""
    from mscompat.testing import OP_DB

    return mirror_exports(OP_DB)


def _check_domain_mirror(
    mirror: str, names: Dict[str, Tuple[Any, str]], index: Dict[int, List[Tuple[str, str]]]
) -> None:
    """A mirror that is also a domain package must export each name as its family module does."""
    for name, (op, entry) in names.items():
        homes = index.get(id(op), [])
        if not any(m.startswith(f"{mirror}.") and n == name for m, n in homes):
            raise GenerateError(
                f"{mirror}.{name} (entry {entry}): {mirror} is a domain package, so a family "
                f"module of it must export this op under the name {name!r}"
            )


def mirror_blocks(exports: Dict[str, Dict[str, Tuple[Any, str]]]) -> Dict[Path, str]:
    """Each mirror's block: its names, imported from the family module that exports each."""
    index = _family_index()
    out = {}
    for mirror, names in exports.items():
        if mirror in DOMAIN_PACKAGES:  # its domain block exports them: check, write nothing
            _check_domain_mirror(mirror, names, index)
            continue
        imports: List[Import] = []
        for name, (op, entry) in names.items():
            homes = index.get(id(op))
            if not homes:
                raise GenerateError(
                    f"{mirror}.{name}: the op of entry {entry} ({op!r}) is in no family "
                    f"module's __all__ ({', '.join(DOMAIN_PACKAGES)})"
                )
            module, home_name = next((h for h in homes if h[1] == name), homes[0])
            imports.append((module, home_name, name))
        notes = {}
        for namespace, child in MIRRORS.items():  # torch.nn.functional is reachable from torch.nn
            parent, _, stem = child.rpartition(".")
            if parent == mirror:
                imports.append((mirror, stem, stem))
                notes[stem] = f"{child} is reachable from {mirror} as {namespace} is"
        source = "the op database's torch_apis, by the rules of mscompat/_namespaces.py"
        out[module_path(mirror)] = python_block(imports, sorted(names), source, notes)
    return out


# -- docs --------------------------------------------------------------------------------------


def _headed(path: Path) -> Iterator[Tuple[str, str, str, str]]:
    """``(h1, h2, currentmodule, name)`` for each autosummary line of a reST page."""
    lines = path.read_text(encoding="utf-8").splitlines()
    h1 = h2 = module = ""
    in_summary = False
    for i, line in enumerate(lines):
        under = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and not line[0].isspace() and len(under) >= len(line.rstrip()):
            if re.fullmatch(r"=+", under):
                h1, h2 = line.strip(), ""
            elif re.fullmatch(r"-+", under):
                h2 = line.strip()
        if line.startswith(".. currentmodule::"):
            module = line.split("::", 1)[1].strip()
        if line.startswith(".. autosummary::"):
            in_summary = True
        elif in_summary and line and not line[0].isspace():
            in_summary = False
        elif in_summary and line.strip() and not line.strip().startswith(":"):
            yield h1, h2, module, line.strip()


def _toctree(path: Path) -> List[Path]:
    text = path.read_text(encoding="utf-8")
    block = re.search(r"^\.\. toctree::\n((?:   .*\n|\n)*)", text, re.M)
    entries = [e.strip() for e in block.group(1).splitlines()] if block else []
    return [path.parent / f"{e}.rst" for e in entries if e and not e.startswith(":")]


def documented() -> Dict[int, Tuple[int, str, str, int]]:
    """``id(object) -> (section number, section title, currentmodule, position)`` for every
    object documented by the domain packages' docs pages (``docs/api/shape.rst`` and the pages
    of its toctree...). The section is the page's title, or the subsection's on the package's own
    page (whose title is the package's name)."""
    out: Dict[int, Tuple[int, str, str, int]] = {}
    sections: Dict[str, int] = {}
    for package in DOMAIN_PACKAGES:
        index = DOCS / f"{package.split('.', 1)[1]}.rst"
        for page in [index, *_toctree(index)]:
            for position, (h1, h2, module, name) in enumerate(_headed(page)):
                title = h2 if h1 == package or not h1 else h1
                number = sections.setdefault(title, len(sections))
                obj = getattr(importlib.import_module(module), name, None)
                if obj is not None:
                    out.setdefault(id(obj), (number, title, module, position))
    return out


def docs_blocks(exports: Dict[str, Dict[str, Tuple[Any, str]]]) -> Dict[Path, str]:
    """Each mirror page's block: its names, grouped as the domain pages document them."""
    where = documented()
    out = {}
    for mirror, names in exports.items():
        if mirror in DOMAIN_PACKAGES:  # its page is a domain page, written by hand
            continue
        page = DOCS / f"{mirror.removeprefix('mscompat.').replace('.', '_')}.rst"
        groups: Dict[Tuple[int, str, str], List[Tuple[int, str]]] = {}
        for name, (op, entry) in names.items():
            if id(op) not in where:
                raise GenerateError(
                    f"{mirror}.{name} (entry {entry}) has no autosummary line on its domain "
                    "package's docs pages (docs/api/shape*.rst, losses.rst): add one"
                )
            number, title, module, position = where[id(op)]
            groups.setdefault((number, title, module), []).append((position, name))
        lines = [RST_MARKERS[0], ""]
        current = ""
        for (_, title, module), entries in sorted(groups.items()):
            if module != current:
                lines += [f".. currentmodule:: {module}", ""]
                current = module
            lines += [title, "-" * len(title), "", ".. autosummary::", "   :nosignatures:", ""]
            lines += [f"   {name}" for _, name in sorted(entries)] + [""]
        lines.append(RST_MARKERS[1])
        out[page] = "\n".join(lines)
    return out


# -- files -------------------------------------------------------------------------------------


def replace_block(path: Path, block: str) -> str:
    """The text of ``path`` with its generated block replaced by ``block``."""
    begin, end = PY_MARKERS if path.suffix == ".py" else RST_MARKERS
    text = path.read_text(encoding="utf-8")
    start, stop = text.find(begin), text.find(end)
    if start < 0 or stop < start:
        raise GenerateError(f"{path.relative_to(ROOT)}: no '{begin}' ... '{end}' lines")
    return text[:start] + block + text[stop + len(end) :]


def drop_ins_text() -> str:
    from mscompat.scan.knowledge import drop_ins_table

    return json.dumps(drop_ins_table(), indent=1, sort_keys=True) + "\n"


def generated_blocks() -> Dict[Path, str]:
    """Every generated block, by file (what ``tests/test_generated.py`` compares)."""
    exports = mirror_names()
    return {**domain_blocks(), **mirror_blocks(exports), **docs_blocks(exports)}


def _update(path: Path, text: str, check: bool) -> Optional[Path]:
    if path.read_text(encoding="utf-8") == text:
        return None
    if not check:
        path.write_text(text, encoding="utf-8")
    return path


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="write nothing, name what is stale")
    check = parser.parse_args(argv).check
    try:
        # In this order: the domain packages from source (a stale one may not import), then what
        # imports them (the op database), and the drop-in table, which imports the mirrors.
        changed = [_update(p, replace_block(p, b), check) for p, b in domain_blocks().items()]
        if not (check and any(changed)):  # else the rest may not import: it waits for a write
            exports = mirror_names()
            blocks = {**mirror_blocks(exports), **docs_blocks(exports)}
            changed += [_update(p, replace_block(p, b), check) for p, b in blocks.items()]
            from mscompat.scan.knowledge import DROP_INS_FILE

            changed.append(_update(DROP_INS_FILE, drop_ins_text(), check))
    except GenerateError as exc:
        print(f"error: {exc}")
        return 2
    stale = [p.relative_to(ROOT) for p in changed if p is not None]
    for path in stale:
        print(f"{'stale' if check else 'wrote'} {path}")
    if not stale:
        print("up to date")
    if check and stale:
        print("run: python tools/generate.py")
    return 1 if check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
