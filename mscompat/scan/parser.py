"""Find the PyTorch API call sites of a Python file with :mod:`ast` (the code is never run).

What is resolved:

* import aliases: ``import torch.nn.functional as F``, ``from torch import nn``,
  ``from torch.nn import functional``, ``from torchvision.ops import nms``, imports inside
  functions, ``torch.nn.modules.conv.Conv2d`` spelled out;
* ``nn.Module`` attributes and local names bound to a module instance
  (``self.pool = nn.AdaptiveAvgPool2d(1)`` then ``self.pool(x)`` is a call of
  ``torch.nn.AdaptiveAvgPool2d``, with the constructor's arguments);
* tensor methods (``x.sort()``, ``t.view(-1)``) where the receiver is known to be a tensor:
  ``forward`` parameters, parameters annotated ``Tensor``, names assigned from torch calls,
  module calls, tensor arithmetic, indexing or other tensor methods; a few methods that only
  tensors have (``view``, ``permute``, ``masked_fill``...) count on any receiver that is not a
  known module or NumPy value;
* risk flags from MindSpore's migration guide: dynamic shapes (``masked_select``, ``nonzero``,
  ``unique``, boolean-mask indexing, slicing with tensor bounds, ``topk`` with a tensor ``k``...),
  second-order gradients (``create_graph=True``), data processing inside ``forward`` (NumPy,
  OpenCV, PIL, ``.numpy()``, ``.item()``, ``.tolist()``).

Which names are APIs, and which calls are risks, is :mod:`mscompat.scan.apis`; what is reported,
:mod:`mscompat.scan.findings`.
"""

from __future__ import annotations

import ast
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Optional, Set, Tuple

from mscompat.scan.apis import (
    DATA_ROOTS,
    DYNAMIC_SHAPE_APIS,
    NON_TENSOR_RESULTS,
    NON_TENSOR_TORCH,
    STATIC_VARIANTS,
    TENSOR_ONLY_METHODS,
    TRACKED_ROOTS,
    canonical,
    is_module_class,
    is_reported,
)
from mscompat.scan.findings import CallSite, FileScan, Risk
from mscompat.scan.syntax import (
    BUILTIN_RESULTS,
    arg_node,
    call_args,
    imports,
    is_buffer_call,
    is_builtin_call,
    is_self_attr,
    statements,
    truthy,
)

__all__ = ["CallSite", "FileScan", "Risk", "scan_source"]


class _Scope:
    def __init__(self, parent: Optional[_Scope] = None) -> None:
        self.parent = parent
        self.aliases: Dict[str, str] = {}  # local name -> dotted module/callable path
        self.tensors: Set[str] = set()
        self.bools: Set[str] = set()
        self.modules: Dict[str, Tuple[str, Dict[str, Any]]] = {}  # name -> (api, ctor args)
        self.foreign: Set[str] = set()  # names bound to values that are not tensors

    def is_foreign(self, name: str) -> bool:
        s: Optional[_Scope] = self
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
        s: Optional[_Scope] = self
        while s is not None:
            values = getattr(s, table)
            if name in values:
                return values[name]
            s = s.parent
        return None


class _Visitor(ast.NodeVisitor):
    def __init__(
        self,
        tensor_methods: FrozenSet[str],
        tensor_only: FrozenSet[str] = frozenset(),
        imports_torch: bool = True,
    ) -> None:
        self.tensor_methods = tensor_methods
        # methods taken for tensor methods by their name alone (only in a file importing torch)
        self.by_name = (TENSOR_ONLY_METHODS | tensor_only) if imports_torch else frozenset()
        self.result = FileScan()
        self.scope = _Scope()
        self.class_attrs: List[Dict[str, Tuple[str, Dict[str, Any]]]] = []
        self.class_tensors: List[Set[str]] = []  # self.X bound to a tensor (Parameter, buffer)
        self.class_foreign: List[Set[str]] = []  # self.X bound to a non-tensor (a logger...)
        self.in_forward = 0
        self._dispatch: Dict[type, Callable[[ast.AST], Any]] = {}

    # -- traversal (faster than NodeVisitor's: cached dispatch, ``ctx`` nodes skipped) -----
    def visit(self, node: ast.AST) -> Any:
        cls = type(node)
        meth = self._dispatch.get(cls)
        if meth is None:
            found: Callable[[ast.AST], Any] = getattr(
                self, "visit_" + cls.__name__, self.generic_visit
            )
            self._dispatch[cls] = meth = found
        return meth(node)

    def generic_visit(self, node: ast.AST) -> None:
        for name in node._fields:
            if name == "ctx":
                continue
            value = getattr(node, name, None)
            if isinstance(value, list):
                for item in value:
                    if isinstance(item, ast.AST):
                        self.visit(item)
            elif isinstance(value, ast.AST):
                self.visit(value)

    # -- names ---------------------------------------------------------------------------
    def dotted(self, node: ast.AST) -> Optional[str]:
        """The fully qualified name an expression refers to, if it is an imported name."""
        if isinstance(node, ast.Name):
            return self.scope.lookup_alias(node.id)
        if isinstance(node, ast.Attribute):
            base = self.dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def tracked(self, node: ast.AST) -> Optional[str]:
        name = self.dotted(node)
        if name and name.split(".", 1)[0] in TRACKED_ROOTS:
            return canonical(name)
        return None

    # -- imports -------------------------------------------------------------------------
    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.asname:
                self.scope.aliases[a.asname] = a.name
            else:
                root = a.name.split(".", 1)[0]
                self.scope.aliases[root] = root

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module:
            return
        for a in node.names:
            if a.name == "*":
                continue
            self.scope.aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    # -- scopes --------------------------------------------------------------------------
    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for d in node.decorator_list:
            self.visit(d)
        for base in node.bases:
            self.visit(base)
        attrs: Dict[str, Tuple[str, Dict[str, Any]]] = {}
        tensors: Set[str] = set()
        foreign: Set[str] = set()
        # first pass over the methods' statements (not expressions): self.X = nn.Y(...),
        # self.X = nn.Parameter(...) / torch.zeros(...), self.register_buffer("X", ...),
        # self.X = logging.getLogger(...)
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for stmt in statements(item.body):
                    if isinstance(stmt, ast.Assign):
                        ctor = self._module_ctor(stmt.value)
                        name = self.tracked(getattr(stmt.value, "func", stmt.value))
                        is_param = name in ("torch.nn.Parameter", "torch.nn.parameter.Parameter")
                        for t in stmt.targets:
                            if not is_self_attr(t):
                                continue
                            attr = t.attr  # type: ignore[attr-defined]
                            if ctor is not None and not is_param:
                                attrs[attr] = ctor
                            elif is_param or self.is_tensor(stmt.value):
                                tensors.add(attr)
                            elif self._foreign_value(stmt.value):
                                foreign.add(attr)
                    elif isinstance(stmt, ast.Expr) and is_buffer_call(stmt.value):
                        tensors.add(stmt.value.args[0].value)  # type: ignore[attr-defined]
        self.class_attrs.append(attrs)
        self.class_tensors.append(tensors)
        self.class_foreign.append(foreign)
        for stmt in node.body:
            self.visit(stmt)
        self.class_attrs.pop()
        self.class_tensors.pop()
        self.class_foreign.pop()

    def _module_ctor(self, value: ast.AST) -> Optional[Tuple[str, Dict[str, Any]]]:
        if isinstance(value, ast.Call):
            name = self.tracked(value.func)
            if name and is_module_class(name):
                return name, call_args(value)
        return None

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._function(node)

    def _function(self, node: Any) -> None:
        for d in node.decorator_list:
            self.visit(d)
        for default in list(node.args.defaults) + [
            d for d in node.args.kw_defaults if d is not None
        ]:
            self.visit(default)
        outer = self.scope
        self.scope = _Scope(outer)
        is_forward = node.name == "forward" and bool(self.class_attrs)
        params = list(node.args.posonlyargs) + list(node.args.args) + list(node.args.kwonlyargs)
        for k, a in enumerate(params):
            ann = a.annotation
            ann_name = self.dotted(ann) if ann is not None else None
            annotated = ann_name == "torch.Tensor" or (
                isinstance(ann, ast.Name) and ann.id == "Tensor"
            )
            if annotated or (is_forward and k > 0 and ann is None):
                self.scope.tensors.add(a.arg)
        if is_forward:
            self.in_forward += 1
        for stmt in node.body:
            self.visit(stmt)
        if is_forward:
            self.in_forward -= 1
        self.scope = outer

    # -- inference -----------------------------------------------------------------------
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

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for t in node.targets:
            self.visit(t)
        tensor = self.is_tensor(node.value)
        boolean = self.is_bool_tensor(node.value)
        module = self._module_ctor(node.value)
        foreign = self._foreign_value(node.value)
        for t in node.targets:
            self._bind(t, tensor or boolean, boolean, module, foreign)

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
            return dotted.split(".", 1)[0] not in TRACKED_ROOTS
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
            tensor, foreign = self.is_tensor(iterable), self._foreign_value(iterable)
            self._bind(target, tensor, False, None, foreign)

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

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            tensor = self.is_tensor(node.value) or self.dotted(node.annotation) == "torch.Tensor"
            self._bind(
                node.target, tensor, self.is_bool_tensor(node.value), self._module_ctor(node.value)
            )

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.generic_visit(node)
        if isinstance(node.target, ast.Name) and self.is_tensor(node.value):
            self.scope.tensors.add(node.target.id)

    def visit_With(self, node: ast.With) -> None:
        self.generic_visit(node)

    # -- calls and risks -----------------------------------------------------------------
    def add(
        self, api: str, node: ast.AST, args: Dict[str, Any], how: str, confidence: str = ""
    ) -> None:
        line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
        self.result.calls.append(CallSite(api, line, col, args, how, confidence))
        reason = DYNAMIC_SHAPE_APIS.get(api)
        if reason:
            self.risk("dynamic-shape", node, api, reason)

    def risk(self, kind: str, node: ast.AST, what: str, detail: str) -> None:
        if kind == "dynamic-shape":
            static = STATIC_VARIANTS.get(what) or STATIC_VARIANTS.get(what.rsplit(".", 1)[-1])
            if static:
                detail = f"{detail}; static shape for graph mode: {static}"
        self.result.risks.append(Risk(kind, getattr(node, "lineno", 0), what, detail))

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = self.tracked(func)
        if name and not is_reported(name):
            pass  # mindspore.Tensor, mindspore.jit...: not an API a port replaces
        elif name:
            args = call_args(node)
            how = "construct" if is_module_class(name) else "call"
            self.add(name, node, args, how)
            self._call_risks(name, node, args)
        else:
            module = self._module_of_call(func)
            if module is not None:
                self.add(module[0], node, module[1], "module")
            elif isinstance(func, ast.Attribute):
                self._method(node, func)
            if self.in_forward:
                root = (self.dotted(func) or "").split(".", 1)[0]
                if root in DATA_ROOTS:
                    self.risk(
                        "in-graph-data",
                        node,
                        self.dotted(func) or root,
                        f"{root} call inside forward: it runs on the host, outside the graph",
                    )
        self.generic_visit(node)

    def _plain_receiver(self, recv: ast.AST) -> bool:
        """Not a module path (``np.sort``), an nn.Module instance, ``self`` or a literal."""
        if self.dotted(recv) is not None or self._module_of_call(recv) is not None:
            return False
        if isinstance(recv, ast.Name) and recv.id in ("self", "cls"):
            return False
        if self._foreign_value(recv):
            return False
        return not isinstance(recv, (ast.Constant, ast.List, ast.Dict, ast.Tuple, ast.JoinedStr))

    def _method(self, node: ast.Call, func: ast.Attribute) -> None:
        meth = func.attr
        recv = func.value
        if meth not in self.tensor_methods or not self._plain_receiver(recv):
            return
        known = self.is_tensor(recv)
        if not known and meth not in self.by_name:
            return
        args = call_args(node)
        api = f"torch.Tensor.{meth}"
        self.add(api, node, args, "method", "" if known else "name")
        self._call_risks(api, node, args)
        if self.in_forward and meth in ("numpy", "tolist", "item") and known:
            self.risk(
                "in-graph-data",
                node,
                api,
                f".{meth}() inside forward leaves the graph (host sync; not compilable)",
            )

    def _call_risks(self, api: str, node: ast.Call, args: Dict[str, Any]) -> None:
        short = api.rsplit(".", 1)[-1]
        if short == "topk":
            k_node = arg_node(node, 1 if api == "torch.topk" else 0, "k")
            if k_node is not None and self._dynamic_value(k_node):
                self.risk("dynamic-shape", node, api, "k is a tensor value, not a constant")
        if api in ("torch.where",) and len(node.args) == 1 and not node.keywords:
            self.risk(
                "dynamic-shape", node, api, "where(condition) returns value-dependent indices"
            )
        if short == "repeat_interleave":
            r_node = arg_node(node, 1 if api == "torch.repeat_interleave" else 0, "repeats")
            if r_node is not None and self.is_tensor(r_node):
                self.risk("dynamic-shape", node, api, "tensor repeats: output length is dynamic")
        if api == "torch.autograd.grad" and truthy(args.get("create_graph")):
            self.risk(
                "second-order-grad",
                node,
                api,
                "create_graph=True: a second-order gradient; every op on the path needs a "
                "second-order bprop in MindSpore",
            )
        if short == "backward" and truthy(args.get("create_graph")):
            self.risk("second-order-grad", node, api, "backward(create_graph=True)")
        if api.startswith("torch.autograd.functional."):
            self.risk("second-order-grad", node, api, "higher-order autograd function")
        if self.in_forward and api.startswith("torchvision.transforms"):
            self.risk("in-graph-data", node, api, "data transform inside forward")

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

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if self.is_tensor(node.value):
            index = node.slice
            parts: Iterable[ast.AST] = index.elts if isinstance(index, ast.Tuple) else [index]
            for part in parts:
                if self.is_bool_tensor(part):
                    self.risk(
                        "dynamic-shape",
                        node,
                        "boolean mask indexing",
                        "x[mask]: output length depends on the mask (like masked_select)",
                    )
                elif isinstance(part, ast.Slice):
                    bounds = [b for b in (part.lower, part.upper, part.step) if b is not None]
                    if any(self._dynamic_value(b) for b in bounds):
                        self.risk(
                            "dynamic-shape",
                            node,
                            "slicing with tensor bounds",
                            "x[a:b] with a bound read from a tensor: the shape is dynamic",
                        )
        self.generic_visit(node)


def scan_source(
    text: str, tensor_methods: Iterable[str], tensor_only: Iterable[str] = ()
) -> FileScan:
    """Parse ``text`` and return its call sites and risks.

    ``tensor_only``: method names taken for tensor methods on any receiver not known to be
    something else, in a file that imports torch (reported with ``confidence="name"``).

    Raises:
        SyntaxError, ValueError (null bytes), RecursionError (absurd nesting): the caller
        reports the file as skipped.
    """
    tree = ast.parse(text)
    torch_roots = frozenset({"torch", "torchvision"})
    visitor = _Visitor(
        frozenset(tensor_methods), frozenset(tensor_only), imports(tree, torch_roots)
    )
    visitor.visit(tree)
    visitor.result.definitions = [
        (n.name, n.lineno)
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
    ]
    visitor.result.calls.sort(key=lambda c: (c.line, c.col))
    visitor.result.risks.sort(key=lambda r: r.line)
    return visitor.result
