"""Helpers on Python syntax trees for the scan's parser: literal values of arguments, the
statements of a block, and the shapes of a few calls it recognises."""

from __future__ import annotations

import ast
import re
from typing import Any, Dict, FrozenSet, Iterator, List, Optional

__all__ = [
    "BUILTIN_RESULTS",
    "CONTAINER_METHODS",
    "arg_node",
    "call_args",
    "imports",
    "is_buffer_call",
    "is_builtin_call",
    "is_self_attr",
    "literal",
    "param_types",
    "statements",
    "truthy",
]

#: Builtins whose result is never a tensor.
BUILTIN_RESULTS = frozenset(
    {"len", "range", "int", "float", "str", "bool", "dict", "list", "tuple", "set", "open",
     "repr", "format", "sorted", "enumerate", "zip", "isinstance", "hasattr", "getattr", "type",
     "id", "hash", "print", "input", "frozenset", "bytes", "iter", "vars", "dir", "ord", "chr"}
)  # fmt: skip


#: Methods of Python's containers and strings (``values``, ``index``, ``count``...).
CONTAINER_METHODS = frozenset(
    n for c in (dict, list, tuple, set, str) for n in dir(c) if not n.startswith("_")
)


def literal(node: ast.AST) -> Any:
    """The value of a literal argument (numbers, strings, booleans, None, tuples/lists of
    them, negative numbers), ``"*"`` for anything else."""
    if isinstance(node, ast.Constant):
        return node.value if not isinstance(node.value, bytes) else "*"
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [literal(e) for e in node.elts]
        if "*" in items:
            return "*"
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
    ):
        return -node.operand.value
    return "*"


def call_args(node: ast.Call) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, a in enumerate(node.args):
        if isinstance(a, ast.Starred):
            break
        out[f"#{k}"] = literal(a)
    for kw in node.keywords:
        if kw.arg is not None:
            out[kw.arg] = literal(kw.value)
    return out


def statements(body: List[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements of a block, entering compound statements but not nested functions."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            yield from statements(stmt.body)
            yield from statements(stmt.orelse)
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            yield from statements(stmt.body)
        elif isinstance(stmt, ast.Try):
            yield from statements(stmt.body)
            for h in stmt.handlers:
                yield from statements(h.body)
            yield from statements(stmt.orelse)
            yield from statements(stmt.finalbody)


def is_buffer_call(node: ast.AST) -> bool:
    """``self.register_buffer("name", ...)``."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "register_buffer"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "self"
        and bool(node.args)
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    )


def is_self_attr(t: ast.AST) -> bool:
    return isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"


def arg_node(node: ast.Call, pos: int, name: str) -> Optional[ast.AST]:
    for kw in node.keywords:
        if kw.arg == name:
            return kw.value
    if len(node.args) > pos and not any(isinstance(a, ast.Starred) for a in node.args[: pos + 1]):
        return node.args[pos]
    return None


def truthy(value: Any) -> bool:
    return value is True or value == "*"


def imports(tree: ast.Module, roots: FrozenSet[str]) -> bool:
    """Whether the module imports a package of ``roots`` anywhere (functions included)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        else:
            continue
        if any(n.split(".", 1)[0] in roots for n in names):
            return True
    return False


def is_builtin_call(node: ast.AST) -> bool:
    """A call of a plain name (``enumerate(...)``, ``zip(...)``)."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name)


_DOC_PARAM = re.compile(r"^\s*\**(\w+)\s*\(([^)]*)\)\s*:", re.M)


def param_types(docstring: str) -> Dict[str, str]:
    r"""``{parameter: "tensor" | "library"}`` from a Google-style docstring's ``Args:``
    (``tp (np.ndarray): ...`` -> library, ``x (torch.Tensor): ...`` -> tensor).

    Example:
        >>> param_types("Args:\n    tp (np.ndarray): hits.\n    x (Tensor): boxes.\n")
        {'tp': 'library', 'x': 'tensor'}
    """
    out: Dict[str, str] = {}
    for name, kind in _DOC_PARAM.findall(docstring):
        if re.search(r"\b(np|numpy)\b|ndarray", kind):
            out[name] = "library"
        elif re.search(r"\bTensor\b", kind):
            out[name] = "tensor"
    return out
