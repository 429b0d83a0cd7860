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
    NON_TENSOR_ROOTS,
    STATIC_VARIANTS,
    TENSOR_ONLY_METHODS,
    TRACKED_ROOTS,
    canonical,
    is_module_class,
    is_reported,
)
from mscompat.scan.findings import CallSite, FileScan, Risk
from mscompat.scan.receivers import ReceiverInference, Scope
from mscompat.scan.syntax import (
    CONTAINER_METHODS,
    arg_node,
    call_args,
    imports,
    is_buffer_call,
    is_self_attr,
    param_types,
    statements,
    truthy,
)

__all__ = ["CallSite", "FileScan", "Risk", "scan_source"]


class _Visitor(ReceiverInference, ast.NodeVisitor):
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
        self.scope = Scope()
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
        self.scope = Scope(outer)
        is_forward = node.name == "forward" and bool(self.class_attrs)
        params = list(node.args.posonlyargs) + list(node.args.args) + list(node.args.kwonlyargs)
        documented = param_types(ast.get_docstring(node) or "")
        for k, a in enumerate(params):
            ann = a.annotation
            ann_name = self.dotted(ann) if ann is not None else None
            annotated = ann_name == "torch.Tensor" or (
                isinstance(ann, ast.Name) and ann.id == "Tensor"
            )
            kind = documented.get(a.arg, "")
            if ann_name and ann_name.split(".", 1)[0] in NON_TENSOR_ROOTS:
                kind = "library"
            if kind == "library":  # np.ndarray by annotation or docstring
                self.scope.library.add(a.arg)
                self.scope.foreign.add(a.arg)
            elif annotated or kind == "tensor":
                self.scope.tensors.add(a.arg)
            elif is_forward and k > 0 and ann is None:
                self.scope.tensors.add(a.arg)
                self.scope.weak.add(a.arg)  # a forward() input may also be a dict or a list
        if is_forward:
            self.in_forward += 1
        for stmt in node.body:
            self.visit(stmt)
        if is_forward:
            self.in_forward -= 1
        self.scope = outer

    # -- inference -----------------------------------------------------------------------
    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for t in node.targets:
            self.visit(t)
            self._assign(t, node.value)

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

    def _method(self, node: ast.Call, func: ast.Attribute) -> None:
        meth = func.attr
        recv = func.value
        if meth not in self.tensor_methods:
            return
        known = self.is_tensor(recv) and self._plain_receiver(recv, known=True)
        if known and meth in CONTAINER_METHODS and isinstance(recv, ast.Name):
            known = recv.id not in self.scope.weak  # outputs.values() of a dict input
        if not known and (meth not in self.by_name or not self._plain_receiver(recv)):
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
