"""Which receivers of a method call are tensors: the scan parser's inference.

A method call is reported as a tensor method when its receiver is known to be a tensor
(``forward`` parameters, names bound to torch results, ``nn.Parameter`` attributes and buffers,
loop variables over tensors...) or, in a file that imports torch, when the method is one only
tensors have; values known not to be tensors (literals, builtins' results, values of NumPy,
logging and the rest of the standard library, parameters documented as ``np.ndarray``) are
never receivers.
"""

from __future__ import annotations

import ast
from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

from mscompat.scan.apis import (
    NON_TENSOR_RESULTS,
    NON_TENSOR_ROOTS,
    NON_TENSOR_TORCH,
    is_module_class,
)
from mscompat.scan.syntax import BUILTIN_RESULTS, is_builtin_call, is_self_attr

__all__ = ["ReceiverInference", "Scope"]


class Scope:
    def __init__(self, parent: Optional[Scope] = None) -> None:
        self.parent = parent
        self.aliases: Dict[str, str] = {}  # local name -> dotted module/callable path
        self.tensors: Set[str] = set()
        self.bools: Set[str] = set()
        self.modules: Dict[str, Tuple[str, Dict[str, Any]]] = {}  # name -> (api, ctor args)
        self.foreign: Set[str] = set()  # names bound to values that are not tensors
        self.weak: Set[str] = set()  # forward() inputs: tensors, unless used as containers
        self.library: Set[str] = set()  # ... of a non-tensor library (their elements are not)

    def is_library(self, name: str) -> bool:
        s: Optional[Scope] = self
        while s is not None:
            if name in s.library:
                return True
            if name in s.tensors or name in s.foreign or name in s.modules:
                return False
            s = s.parent
        return False

    def is_foreign(self, name: str) -> bool:
        s: Optional[Scope] = self
        while s is not None:
            if name in s.foreign:
                return True
            if name in s.tensors or name in s.modules:
                return False
            s = s.parent
        return False

    def lookup_alias(self, name: str) -> Optional[str]:
        found: Optional[str] = self._inherited("aliases", name)
        return found

    def is_tensor(self, name: str) -> bool:
        return name in self.tensors

    def module(self, name: str) -> Optional[Tuple[str, Dict[str, Any]]]:
        found: Optional[Tuple[str, Dict[str, Any]]] = self._inherited("modules", name)
        return found

    def _inherited(self, table: str, name: str) -> Any:
        """``name`` in the ``table`` dict of this scope or, failing that, of the enclosing ones."""
        s: Optional[Scope] = self
        while s is not None:
            values = getattr(s, table)
            if name in values:
                return values[name]
            s = s.parent
        return None


class ReceiverInference:
    """The inference half of the parser's visitor (a mixin: the visitor owns the state)."""

    scope: Scope
    tensor_methods: FrozenSet[str]
    by_name: FrozenSet[str]
    class_attrs: List[Dict[str, Tuple[str, Dict[str, Any]]]]
    class_tensors: List[Set[str]]
    class_foreign: List[Set[str]]

    def visit(self, node: ast.AST) -> Any:  # pragma: no cover - the visitor's
        raise NotImplementedError

    def dotted(self, node: ast.AST) -> Optional[str]:  # pragma: no cover - the visitor's
        raise NotImplementedError

    def tracked(self, node: ast.AST) -> Optional[str]:  # pragma: no cover - the visitor's
        raise NotImplementedError

    def _module_ctor(self, value: ast.AST) -> Optional[Tuple[str, Dict[str, Any]]]:
        raise NotImplementedError  # pragma: no cover - the visitor's

    def is_tensor(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return self.scope.is_tensor(node.id)
        if isinstance(node, ast.Call):
            func = node.func
            name = self.tracked(func)
            if name:
                if name in NON_TENSOR_TORCH or is_module_class(name):
                    return False
                return name.startswith(("torch.", "torchvision.ops."))
            if self._module_of_call(func) is not None:
                return True
            if isinstance(func, ast.Attribute):
                if func.attr in NON_TENSOR_RESULTS:
                    return False
                if self.is_tensor(func.value) and func.attr in self.tensor_methods:
                    return True
                if func.attr in self.by_name and self._plain_receiver(func.value):
                    return True
            return False
        if isinstance(node, ast.BinOp):
            return self.is_tensor(node.left) or self.is_tensor(node.right)
        if isinstance(node, ast.UnaryOp):
            return self.is_tensor(node.operand)
        if isinstance(node, ast.Subscript):
            return self.is_tensor(node.value)
        if isinstance(node, ast.Attribute):
            if is_self_attr(node) and self.class_tensors:
                return node.attr in self.class_tensors[-1]
            return node.attr in ("T", "mT", "data", "grad", "real", "imag") and self.is_tensor(
                node.value
            )
        if isinstance(node, ast.IfExp):
            return self.is_tensor(node.body) and self.is_tensor(node.orelse)
        if isinstance(node, ast.Compare):
            return self.is_bool_tensor(node)
        return False

    def is_bool_tensor(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Compare):
            return self.is_tensor(node.left) or any(self.is_tensor(c) for c in node.comparators)
        if isinstance(node, ast.Name):
            return node.id in self.scope.bools
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
            return self.is_bool_tensor(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
            return self.is_bool_tensor(node.left) or self.is_bool_tensor(node.right)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "bool" and self.is_tensor(node.func.value):
                return True
            name = self.tracked(node.func)
            if name in ("torch.logical_and", "torch.logical_or", "torch.logical_not", "torch.isin"):
                return True
        return False

    def _module_of_call(self, func: ast.AST) -> Optional[Tuple[str, Dict[str, Any]]]:
        """``self.pool`` / ``pool`` bound to a Module instance: (api, constructor args)."""
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and self.class_attrs
        ):
            return self.class_attrs[-1].get(func.attr)
        if isinstance(func, ast.Name):
            return self.scope.module(func.id)
        return None

    def _bind(
        self, target: ast.AST, tensor: bool, boolean: bool, module: Any, foreign: bool = False
    ) -> None:
        if isinstance(target, ast.Name):
            self.scope.tensors.discard(target.id)
            self.scope.bools.discard(target.id)
            self.scope.modules.pop(target.id, None)
            self.scope.foreign.discard(target.id)
            self.scope.library.discard(target.id)
            if foreign and not (tensor or boolean or module is not None):
                self.scope.foreign.add(target.id)
            if tensor:
                self.scope.tensors.add(target.id)
            if boolean:
                self.scope.bools.add(target.id)
            if module is not None:
                self.scope.modules[target.id] = module
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._bind(elt, tensor, False, None, foreign)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, False, False, None)

    def _assign(self, target: ast.AST, value: ast.AST) -> None:
        """Bind ``target`` to what ``value`` is; ``a, b = x, y`` pairs the elements."""
        pairs = isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Tuple)
        if pairs and len(target.elts) == len(value.elts):  # type: ignore[attr-defined]
            for t, v in zip(target.elts, value.elts):  # type: ignore[attr-defined]
                self._assign(t, v)
            return
        boolean = self.is_bool_tensor(value)
        library = self._library_value(value)
        foreign = library or self._foreign_value(value)
        self._bind(
            target, self.is_tensor(value) or boolean, boolean, self._module_ctor(value), foreign
        )
        if library and isinstance(target, ast.Name):
            self.scope.library.add(target.id)

    def _foreign_value(self, node: ast.AST) -> bool:
        """A value that is evidently not a tensor: a literal, a builtin's result, the result of
        another library's call (``np.zeros``, ``logging.getLogger``), ``.numpy()``/``.item()``,
        or a method of such a value."""
        if isinstance(node, (ast.Constant, ast.List, ast.Dict, ast.Set, ast.JoinedStr)):
            return True
        if isinstance(node, (ast.ListComp, ast.DictComp, ast.SetComp, ast.Lambda)):
            return True
        if isinstance(node, ast.Name):
            return self.scope.is_foreign(node.id)
        if isinstance(node, ast.Subscript):
            return self._foreign_value(node.value)
        if isinstance(node, ast.Attribute):
            if is_self_attr(node) and self.class_foreign:
                return node.attr in self.class_foreign[-1]
            return self._foreign_value(node.value)
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        builtin = isinstance(func, ast.Name) and self.scope.lookup_alias(func.id) is None
        if builtin and func.id in BUILTIN_RESULTS:  # type: ignore[attr-defined]
            return True
        dotted = self.dotted(func)
        if dotted is not None:
            return dotted.split(".", 1)[0] in NON_TENSOR_ROOTS
        if isinstance(func, ast.Attribute):
            if func.attr in ("numpy", "tolist", "item") and not self._foreign_value(func.value):
                return True
            return self._foreign_value(func.value)
        return False

    def visit_For(self, node: ast.For) -> None:
        self.visit(node.iter)
        self._bind_loop(node.target, node.iter)
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    def _bind_loop(self, target: ast.AST, iterable: ast.AST) -> None:
        """``for t in x.unbind(0)`` / ``for t in tensor``: t is a tensor; over a literal, a
        ``range`` or another library's value: not one. ``enumerate``/``zip``/``reversed``/
        ``sorted``/``list``/``tuple`` pass their arguments' elements through."""
        wrapper = iterable.func.id if is_builtin_call(iterable) else ""  # type: ignore[attr-defined]
        args = getattr(iterable, "args", [])
        elts = target.elts if isinstance(target, ast.Tuple) else []
        if wrapper == "enumerate" and len(elts) == 2 and args:
            self._bind(elts[0], False, False, None, True)
            self._bind_loop(elts[1], args[0])
        elif wrapper == "zip" and elts and len(elts) == len(args):
            for elt, arg in zip(elts, args):
                self._bind_loop(elt, arg)
        elif wrapper in ("reversed", "sorted", "list", "tuple") and args:
            self._bind_loop(target, args[0])
        else:
            # the elements of a list or dict may be tensors: only a range's or a non-tensor
            # library's (``for row in np.array(...)``) are known not to be
            library = wrapper == "range" or self._library_value(iterable)
            self._bind(target, self.is_tensor(iterable), False, None, library)
            if library and isinstance(target, ast.Name):
                self.scope.library.add(target.id)

    def _library_value(self, node: ast.AST) -> bool:
        """A value of a non-tensor library (``np.zeros(3)``, its rows, its methods' results,
        arithmetic on it)."""
        if isinstance(node, ast.Name):
            return self.scope.is_library(node.id)
        if isinstance(node, (ast.Subscript, ast.Attribute)):
            return self._library_value(node.value)
        if isinstance(node, (ast.BinOp, ast.Compare)):
            sides: List[ast.expr] = (
                [node.left, node.right]
                if isinstance(node, ast.BinOp)
                else [node.left, *node.comparators]
            )
            return any(self._library_value(s) for s in sides) and not any(
                self.is_tensor(s) for s in sides
            )
        if isinstance(node, ast.UnaryOp):
            return self._library_value(node.operand)
        if isinstance(node, ast.Call):
            dotted = self.dotted(node.func)
            if dotted is not None:
                return dotted.split(".", 1)[0] in NON_TENSOR_ROOTS
            return isinstance(node.func, ast.Attribute) and self._library_value(node.func.value)
        return False

    def _comprehension(self, node: Any, values: List[ast.AST]) -> None:
        saved = (set(self.scope.tensors), set(self.scope.foreign), set(self.scope.bools))
        for gen in node.generators:
            self.visit(gen.iter)
            self._bind_loop(gen.target, gen.iter)
            for cond in gen.ifs:
                self.visit(cond)
        for value in values:
            self.visit(value)
        self.scope.tensors, self.scope.foreign, self.scope.bools = saved

    def visit_ListComp(self, node: ast.ListComp) -> None:
        self._comprehension(node, [node.elt])

    def visit_SetComp(self, node: ast.SetComp) -> None:
        self._comprehension(node, [node.elt])

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> None:
        self._comprehension(node, [node.elt])

    def visit_DictComp(self, node: ast.DictComp) -> None:
        self._comprehension(node, [node.key, node.value])

    def _plain_receiver(self, recv: ast.AST, known: bool = False) -> bool:
        """Not a module path (``np.sort``), an nn.Module instance, ``self`` or a literal."""
        if self.dotted(recv) is not None or self._module_of_call(recv) is not None:
            return False
        if isinstance(recv, ast.Name) and recv.id in ("self", "cls"):
            return False
        if not known and (self._foreign_value(recv) or self._library_value(recv)):
            return False
        return not isinstance(recv, (ast.Constant, ast.List, ast.Dict, ast.Tuple, ast.JoinedStr))

    def _dynamic_value(self, node: ast.AST) -> bool:
        """A value that is a tensor or read from one (``.item()``, ``int(t)``)."""
        if self.is_tensor(node):
            return True
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in ("item", "tolist"):
                return self.is_tensor(node.func.value)
            if isinstance(node.func, ast.Name) and node.func.id in ("int", "min", "max"):
                return any(self._dynamic_value(a) for a in node.args)
        if isinstance(node, ast.BinOp):
            return self._dynamic_value(node.left) or self._dynamic_value(node.right)
        return False
