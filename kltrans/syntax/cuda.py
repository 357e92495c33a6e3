"""CUDA structure of a unit: kernels, device functions, shared memory, launches, pragmas.

Everything here reads the tree of a :class:`~kltrans.syntax.unit.Unit`; text always comes
from the original bytes. Node types used (tree-sitter-cuda 0.21): a function is a
``function_definition``; ``__global__``/``__device__``/``__host__`` are anonymous children
of it; a templated one sits inside ``template_declaration``; ``__launch_bounds__`` is a
``launch_bounds`` child; a launch is a ``call_expression`` with a ``kernel_call_syntax``
child; a shared declaration is a ``declaration`` with ``type_qualifier`` ``__shared__``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.unit import Unit

_WS = re.compile(r"\s+")
_RESTRICT = {"__restrict__", "__restrict", "restrict"}
LOOP_TYPES = ("for_statement", "while_statement", "do_statement", "for_range_loop")


def _squash(text: str) -> str:
    """Collapse whitespace, and drop it around ``*``/``&`` and inside ``<...>`` commas."""
    text = _WS.sub(" ", text).strip()
    text = re.sub(r"\s*([*&])\s*", r"\1 ", text).strip()
    text = re.sub(r"([*&]) ([*&])", r"\1\2", text)
    return text


def _loc(unit: "Unit", node: "Node") -> dict:
    loc = unit.location(node.start_byte)
    return {"line": loc.line, "column": loc.column}


# ---------------------------------------------------------------------------- params
@dataclass(frozen=True)
class Param:
    """A function parameter.

    ``const`` is true when the value or the pointee is const (``const float*``,
    ``float const*``); a const *pointer* (``float* const``) sets ``pointer_const``.
    ``restrict`` is true when ``__restrict__`` qualifies the pointer.
    """

    name: str | None
    type: str  # the declaration without the name, whitespace normalized
    base_type: str  # without qualifiers, '*', '&' or array brackets
    pointer: int = 0
    const: bool = False
    restrict: bool = False
    pointer_const: bool = False
    reference: bool = False
    array: tuple[str, ...] = ()
    default: str | None = None

    def to_json(self) -> dict:
        return {
            "name": self.name, "type": self.type, "base_type": self.base_type,
            "pointer": self.pointer, "const": self.const, "restrict": self.restrict,
            "pointer_const": self.pointer_const, "reference": self.reference,
            "array": list(self.array), "default": self.default,
        }

    def __str__(self) -> str:
        return _param_str(self)


def _param(unit: "Unit", decl: "Node") -> Param:
    const = False
    restrict = False
    pointer_const = False
    pointer = 0
    reference = False
    array: list[str] = []
    name_node = None
    default = None
    for c in decl.children:
        if c.type == "type_qualifier" and unit.text(c) == "const":
            const = True
    base = decl.child_by_field_name("type")
    node = decl.child_by_field_name("declarator")
    dv = decl.child_by_field_name("default_value")
    if dv is not None:
        default = unit.text(dv)
    while node is not None:
        t = node.type
        if t in ("pointer_declarator", "abstract_pointer_declarator"):
            pointer += 1
            for c in node.children:
                if c.type == "type_qualifier":
                    q = unit.text(c)
                    if q in _RESTRICT:
                        restrict = True
                    elif q == "const":
                        pointer_const = True
        elif t in ("reference_declarator", "abstract_reference_declarator"):
            reference = True
        elif t in ("array_declarator", "abstract_array_declarator"):
            size = node.child_by_field_name("size")
            array.insert(0, unit.text(size) if size is not None else "")
        elif t in ("identifier", "field_identifier"):
            name_node = node
            break
        elif t == "parenthesized_declarator":
            pass
        nxt = node.child_by_field_name("declarator")
        if nxt is None:
            # reference_declarator and parenthesized_declarator keep their inner
            # declarator as an unnamed child
            named = [c for c in node.named_children if c.type != "type_qualifier"]
            nxt = named[-1] if named and node.type in (
                "reference_declarator", "parenthesized_declarator") else None
        node = nxt
    # the full type: the declaration's text with the name (and default) removed
    start = decl.start_byte
    end = decl.end_byte
    if dv is not None:
        eq = unit.source.rfind(b"=", start, dv.start_byte)
        end = eq if eq >= 0 else dv.start_byte
    if name_node is not None:
        full = unit.text((start, name_node.start_byte)) + unit.text((name_node.end_byte, end))
    else:
        full = unit.text((start, end))
    return Param(
        name=unit.text(name_node) if name_node is not None else None,
        type=_squash(full),
        base_type=_squash(unit.text(base)) if base is not None else "",
        pointer=pointer, const=const, restrict=restrict, pointer_const=pointer_const,
        reference=reference, array=tuple(array), default=default,
    )


@dataclass(frozen=True)
class TemplateParam:
    kind: str  # "type" | "value" | "template"
    name: str | None
    type: str | None = None  # for value parameters
    default: str | None = None
    variadic: bool = False

    def to_json(self) -> dict:
        return {"kind": self.kind, "name": self.name, "type": self.type,
                "default": self.default, "variadic": self.variadic}

    def __str__(self) -> str:
        head = ("typename" if self.kind == "type" else self.type or "auto")
        s = f"{head}{'...' if self.variadic else ''} {self.name or ''}".rstrip()
        return f"{s} = {self.default}" if self.default else s


def template_params(unit: "Unit", plist: "Node") -> list[TemplateParam]:
    out = []
    for c in plist.named_children:
        t = c.type
        if t == "comment":
            continue
        if t in ("type_parameter_declaration", "optional_type_parameter_declaration",
                 "variadic_type_parameter_declaration"):
            name = c.child_by_field_name("name")
            if name is None:
                ids = [x for x in c.named_children if x.type == "type_identifier"]
                name = ids[0] if ids else None
            d = c.child_by_field_name("default_type")
            out.append(TemplateParam("type", unit.text(name) if name else None,
                                     default=unit.text(d) if d else None,
                                     variadic=t.startswith("variadic")))
        elif t in ("parameter_declaration", "optional_parameter_declaration",
                   "variadic_parameter_declaration"):
            p = _param(unit, c)
            if p.name is None:  # variadic declarators hide the name one level deeper
                ids = [x for x in unit.walk(c) if x.type == "identifier"]
                p = Param(unit.text(ids[-1]) if ids else None, p.type, p.base_type)
            out.append(TemplateParam("value", p.name, type=p.base_type, default=p.default,
                                     variadic=t.startswith("variadic")))
        elif t == "template_template_parameter_declaration":
            ids = [x for x in c.named_children if x.type in ("type_identifier", "identifier")]
            out.append(TemplateParam("template", unit.text(ids[-1]) if ids else None))
    return out


# -------------------------------------------------------------------------- functions
@dataclass(frozen=True)
class Function:
    """A function definition: a ``__global__`` kernel or a ``__device__`` helper."""

    name: str
    qualified_name: str
    params: tuple[Param, ...]
    template_params: tuple[TemplateParam, ...]
    launch_bounds: tuple[str, ...] | None
    attributes: tuple[str, ...]  # __global__, __device__, __host__, __forceinline__, ...
    return_type: str
    extern_c: bool
    node: "Node" = field(compare=False, repr=False)
    template_node: "Node | None" = field(default=None, compare=False, repr=False)
    line: int = 0
    column: int = 0

    @property
    def is_kernel(self) -> bool:
        return "__global__" in self.attributes

    @property
    def is_device(self) -> bool:
        return "__device__" in self.attributes

    @property
    def is_host(self) -> bool:
        return "__host__" in self.attributes or not (self.is_kernel or self.is_device)

    @property
    def outer(self) -> "Node":
        """The outermost node of the definition (the template declaration if any)."""
        return self.template_node or self.node

    @property
    def body(self) -> "Node | None":
        return self.node.child_by_field_name("body")

    def signature(self) -> str:
        tpl = ""
        if self.template_params:
            tpl = "template <" + ", ".join(str(t) for t in self.template_params) + "> "
        lb = f"__launch_bounds__({', '.join(self.launch_bounds)}) " if self.launch_bounds else ""
        args = ", ".join(_param_str(p) for p in self.params)
        attrs = " ".join(a for a in self.attributes if a in ("__global__", "__device__", "__host__"))
        return f"{tpl}{attrs} {lb}{self.return_type} {self.qualified_name}({args})"

    def to_json(self) -> dict:
        return {
            "name": self.name, "qualified_name": self.qualified_name,
            "kind": "kernel" if self.is_kernel else "device",
            "line": self.line, "column": self.column,
            "attributes": list(self.attributes), "return_type": self.return_type,
            "extern_c": self.extern_c,
            "template_params": [t.to_json() for t in self.template_params],
            "launch_bounds": list(self.launch_bounds) if self.launch_bounds is not None else None,
            "params": [p.to_json() for p in self.params],
        }


def _param_str(p: Param) -> str:
    if p.name is None:
        return p.type
    if p.array:
        return p.type.replace("[", f"{p.name}[", 1) if "[" in p.type else f"{p.type} {p.name}"
    return f"{p.type} {p.name}"


_ATTRS = {"__global__", "__device__", "__host__", "__forceinline__", "__noinline__",
          "inline", "static", "__inline__", "constexpr"}


def _function(unit: "Unit", fn: "Node") -> Function | None:
    attrs = []
    launch_bounds = None
    for c in fn.children:
        t = c.type
        if t in ("__global__", "__device__", "__host__"):
            attrs.append(t)
        elif t in ("storage_class_specifier", "type_qualifier", "virtual", "attribute_specifier"):
            txt = unit.text(c)
            if txt in _ATTRS:
                attrs.append(txt)
        elif t == "launch_bounds":
            launch_bounds = _launch_bounds_args(unit, c)
        elif not c.is_named and unit.text(c) in _ATTRS:
            attrs.append(unit.text(c))
    declarator = fn.child_by_field_name("declarator")
    fdecl = declarator
    while fdecl is not None and fdecl.type != "function_declarator":
        fdecl = fdecl.child_by_field_name("declarator")
    if fdecl is None:
        return None
    name_node = fdecl.child_by_field_name("declarator")
    qualified = unit.text(name_node) if name_node is not None else "?"
    name = qualified.split("::")[-1]
    if name_node is not None and name_node.type == "template_function":
        base = name_node.child_by_field_name("name")
        name = unit.text(base).split("::")[-1] if base else name
    params = []
    plist = fdecl.child_by_field_name("parameters")
    if plist is not None:
        for c in plist.named_children:
            if c.type in ("parameter_declaration", "optional_parameter_declaration"):
                p = _param(unit, c)
                if p.base_type == "void" and p.pointer == 0 and p.name is None:
                    continue  # f(void)
                params.append(p)
            elif c.type == "variadic_parameter":
                params.append(Param(None, "...", "..."))
    tnode = fn.parent if fn.parent is not None and fn.parent.type == "template_declaration" else None
    tparams = ()
    if tnode is not None:
        pl = tnode.child_by_field_name("parameters")
        if pl is not None:
            tparams = tuple(_template_params(unit, pl))
    rtype = fn.child_by_field_name("type")
    ret = _squash(unit.text(rtype)) if rtype is not None else ""
    d = declarator
    while d is not None and d.type != "function_declarator":
        if d.type == "pointer_declarator":
            ret += "*"
        elif d.type == "reference_declarator":
            ret += "&"
        d = d.child_by_field_name("declarator")
    extern_c = False
    p = fn.parent
    while p is not None:
        if p.type == "linkage_specification":
            extern_c = True
            break
        p = p.parent
    outer = tnode or fn
    scopes = []
    p = outer.parent
    while p is not None:
        if p.type == "namespace_definition":
            n = p.child_by_field_name("name")
            scopes.append(unit.text(n) if n is not None else "(anonymous)")
        p = p.parent
    qual = "::".join(list(reversed(scopes)) + [qualified])
    start = outer.start_byte
    if outer.parent is not None and outer.parent.type == "linkage_specification":
        start = outer.parent.start_byte  # extern "C" __global__ void k(...) {...}
    loc = unit.location(start)
    return Function(name=name, qualified_name=qual, params=tuple(params),
                    template_params=tparams, launch_bounds=launch_bounds,
                    attributes=tuple(attrs), return_type=ret, extern_c=extern_c, node=fn,
                    template_node=tnode, line=loc.line, column=loc.column)


def _launch_bounds_args(unit: "Unit", node: "Node") -> tuple[str, ...]:
    """Arguments of ``__launch_bounds__(...)`` as written (from the original bytes)."""
    text = unit.text(node)
    inner = text[text.find("(") + 1: text.rfind(")")]
    args, depth, cur = [], 0, []
    for ch in inner:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            args.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    args.append("".join(cur))
    return tuple(_WS.sub(" ", a).strip() for a in args if a.strip())


def find_functions(unit: "Unit") -> list[Function]:
    """Every function definition with its CUDA attributes, in file order (cached)."""
    if "functions" in unit._cache:
        return unit._cache["functions"]
    out = []
    for n in unit.nodes_of_type("function_definition"):
        f = _function(unit, n)
        if f is not None:
            out.append(f)
    unit._cache["functions"] = out
    return out


def subscript_index(sub: "Node") -> "Node | None":
    """The one index of a subscript ``a[i]``; None for any other node or several indices."""
    if sub is None or sub.type != "subscript_expression":
        return None
    i = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
    if i is not None and i.type == "subscript_argument_list":
        kids = [c for c in i.named_children if c.type != "comment"]
        i = kids[0] if len(kids) == 1 else None
    return i


def enclosing_function(unit: "Unit", node: "Node") -> Function | None:
    p = node.parent
    while p is not None:
        if p.type == "function_definition":
            by_id = unit._cache.get("functions_by_id")
            if by_id is None:
                by_id = {f.node.id: f for f in find_functions(unit)}
                unit._cache["functions_by_id"] = by_id
            return by_id.get(p.id)
        p = p.parent
    return None


# ---------------------------------------------------------------------- shared memory
@dataclass(frozen=True)
class SharedDecl:
    name: str
    type: str
    dims: tuple[str, ...]
    extern: bool
    function: str | None
    node: "Node" = field(compare=False, repr=False)
    line: int = 0
    column: int = 0

    def to_json(self) -> dict:
        return {"name": self.name, "type": self.type, "dims": list(self.dims),
                "extern": self.extern, "function": self.function,
                "line": self.line, "column": self.column}


def find_shared(unit: "Unit") -> list[SharedDecl]:
    out = []
    decls = unit.nodes_of_type("declaration") + unit.nodes_of_type("field_declaration")
    decls.sort(key=lambda n: n.start_byte)
    for n in decls:
        quals = [unit.text(c) for c in n.children if c.type == "type_qualifier"]
        if "__shared__" not in quals:
            continue
        extern = any(c.type == "storage_class_specifier" and unit.text(c) == "extern"
                     for c in n.children)
        tnode = n.child_by_field_name("type")
        base = _squash(unit.text(tnode)) if tnode is not None else ""
        fn = enclosing_function(unit, n)
        for d in n.children_by_field_name("declarator"):
            node = d
            dims: list[str] = []
            ptr = ""
            while node is not None and node.type not in ("identifier", "field_identifier"):
                if node.type == "array_declarator":
                    s = node.child_by_field_name("size")
                    dims.insert(0, _WS.sub(" ", unit.text(s)).strip() if s is not None else "")
                elif node.type == "pointer_declarator":
                    ptr += "*"
                nxt = node.child_by_field_name("declarator")
                node = nxt
            if node is None:
                continue
            loc = unit.location(node.start_byte)
            out.append(SharedDecl(unit.text(node), base + ptr, tuple(dims), extern,
                                  fn.name if fn else None, n, loc.line, loc.column))
    return out


# ---------------------------------------------------------------------------- launches
@dataclass(frozen=True)
class Launch:
    kernel: str  # the launched name without template arguments
    callee: str  # as written, e.g. "k<float, 128>"
    template_args: tuple[str, ...]
    grid: str
    block: str
    shared_bytes: str | None
    stream: str | None
    args: tuple[str, ...]
    function: str | None  # the function the launch is in
    node: "Node" = field(compare=False, repr=False)
    line: int = 0
    column: int = 0

    def to_json(self) -> dict:
        return {"kernel": self.kernel, "callee": self.callee,
                "template_args": list(self.template_args), "grid": self.grid,
                "block": self.block, "shared_bytes": self.shared_bytes, "stream": self.stream,
                "args": list(self.args), "function": self.function,
                "line": self.line, "column": self.column}


def find_launches(unit: "Unit") -> list[Launch]:
    out = []
    for n in unit.nodes_of_type("call_expression"):
        cfg = next((c for c in n.children if c.type == "kernel_call_syntax"), None)
        if cfg is None:
            continue
        fnode = n.child_by_field_name("function")
        callee = _WS.sub(" ", unit.text(fnode)).strip() if fnode is not None else "?"
        targs: tuple[str, ...] = ()
        kname = callee
        if fnode is not None and fnode.type == "template_function":
            name = fnode.child_by_field_name("name")
            kname = unit.text(name) if name is not None else callee
            al = fnode.child_by_field_name("arguments")
            if al is not None:
                targs = tuple(_WS.sub(" ", unit.text(a)).strip() for a in al.named_children)
        kname = kname.split("::")[-1] if "::" in kname else kname
        conf = [_WS.sub(" ", unit.text(c)).strip() for c in cfg.named_children
                if c.type != "comment"]
        conf += [None] * (4 - len(conf))
        argl = n.child_by_field_name("arguments")
        args = tuple(_WS.sub(" ", unit.text(a)).strip() for a in argl.named_children
                     if a.type != "comment") if argl is not None else ()
        fn = enclosing_function(unit, n)
        loc = unit.location(n.start_byte)
        out.append(Launch(kname, callee, targs, conf[0] or "", conf[1] or "", conf[2], conf[3],
                          args, fn.name if fn else None, n, loc.line, loc.column))
    return out


# ----------------------------------------------------------------------------- pragmas
@dataclass(frozen=True)
class Pragma:
    """A ``#pragma`` line, lifted out of the tree by normalization, with its target.

    ``target`` is the statement that follows it (skipping comments and other pragmas) in
    the same block; ``loop`` is that statement when it is a loop.
    """

    text: str  # the directive, whitespace collapsed: "#pragma unroll 4"
    start: int
    end: int
    target: "Node | None" = field(compare=False, repr=False)
    line: int = 0
    column: int = 0

    @property
    def name(self) -> str:
        parts = self.text.split()
        return parts[1] if len(parts) > 1 else ""

    @property
    def argument(self) -> str:
        parts = self.text.split(None, 2)
        return parts[2] if len(parts) > 2 else ""

    @property
    def loop(self) -> "Node | None":
        t = self.target
        return t if t is not None and t.type in LOOP_TYPES else None

    def to_json(self, unit: "Unit") -> dict:
        tgt = None
        if self.target is not None:
            loc = unit.location(self.target.start_byte)
            tgt = {"type": self.target.type, "line": loc.line, "column": loc.column}
        return {"text": self.text, "line": self.line, "column": self.column, "target": tgt}


def _pragma_target(unit: "Unit", offset: int) -> "Node | None":
    root = unit.root
    src = unit.normalized
    n_src = len(src)
    pos = offset
    while True:
        while pos < n_src and src[pos:pos + 1].isspace():
            pos += 1
        if pos >= n_src:
            return None
        node = root.descendant_for_byte_range(pos, pos + 1)
        if node is None:
            return None
        if node.type == "comment":
            pos = node.end_byte
            continue
        break
    # climb to the outermost node that starts here: the statement the pragma precedes
    while node.parent is not None and node.parent.start_byte == pos \
            and node.parent.type != "translation_unit":
        node = node.parent
    if not node.is_named or node.type in ("translation_unit", "comment"):
        return None
    return node


def find_pragmas(unit: "Unit") -> list[Pragma]:
    out = []
    for norm in unit.normalizations:
        if norm.rule != "pragma":
            continue
        raw = norm.original.decode("utf-8", errors="replace")
        text = _WS.sub(" ", raw.replace("\\\r\n", " ").replace("\\\n", " ")).strip()
        text = re.sub(r"^#\s*pragma\b", "#pragma", text)
        loc = unit.location(norm.start + (len(norm.original) - len(norm.original.lstrip())))
        out.append(Pragma(text, norm.start, norm.end, _pragma_target(unit, norm.end),
                          loc.line, loc.column))
    return out


def pragmas_for(unit: "Unit", node: "Node") -> list[Pragma]:
    """The pragmas that apply to ``node`` (e.g. ``#pragma unroll`` before a loop)."""
    return [p for p in unit.pragmas if p.target is not None and p.target.id == node.id]


# ------------------------------------------------------------------ macro heads
_WORD_RE = re.compile(r"[A-Za-z_]\w*")
_CUDA_SPACE_WORDS = {"__device__", "__global__"}


def cuda_qualifier_macros(unit: "Unit") -> set[str]:
    """Names of macros that expand (directly or through another) to __device__/__global__."""
    defs = {}
    for n in unit.nodes_of_type("preproc_def") + unit.nodes_of_type("preproc_function_def"):
        name = n.child_by_field_name("name")
        value = n.child_by_field_name("value")
        if name is not None and value is not None:
            defs[unit.text(name)] = set(_WORD_RE.findall(unit.text(value)))
    found = {k for k, words in defs.items() if words & _CUDA_SPACE_WORDS}
    changed = True
    while changed:
        changed = False
        for k, words in defs.items():
            if k not in found and words & found:
                found.add(k)
                changed = True
    return found


def head_words(unit: "Unit", node: "Node", declarator: "Node | None") -> set[str]:
    """The identifiers in a declaration's head (before its declarator)."""
    end = declarator.start_byte if declarator is not None else node.end_byte
    return set(_WORD_RE.findall(unit.text((node.start_byte, end))))


NAMESPACE_CONTAINERS = frozenset({
    "translation_unit", "declaration_list", "linkage_specification", "namespace_definition",
    "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef"})


def at_namespace_scope(node: "Node") -> bool:
    """Whether ``node`` sits at namespace scope (through namespaces, ``extern "C"`` blocks
    and preprocessor conditionals), not in a function or a class."""
    p = node.parent
    while p is not None:
        if p.type == "translation_unit":
            return True
        if p.type not in NAMESPACE_CONTAINERS:
            return False
        p = p.parent
    return False


def declarator_is_function(d: "Node | None") -> bool:
    """Whether a declarator (through pointer/reference declarators) declares a function."""
    while d is not None:
        if d.type == "function_declarator":
            return True
        if d.type not in ("pointer_declarator", "reference_declarator"):
            return False
        nxt = d.child_by_field_name("declarator")
        if nxt is None:
            named = [c for c in d.named_children if c.type != "type_qualifier"]
            nxt = named[-1] if named else None
        d = nxt
    return False


def include_target(unit: "Unit", node: "Node") -> tuple[str, bool] | None:
    """(header name, is a <system> include) of a ``preproc_include``; None for ``#include MACRO``."""
    p = node.child_by_field_name("path")
    if p is None:
        return None
    if p.type == "system_lib_string":
        return unit.text(p)[1:-1].strip(), True
    if p.type == "string_literal":
        return unit.text(p)[1:-1], False
    return None


def reachable_functions(unit: "Unit", kernel: str) -> set[str]:
    """``kernel`` and the names of the functions of the unit it calls, transitively (by
    name; template arguments ignored). A hand-written kernel often keeps its body in a
    ``__device__`` function it calls: ``--kernel K`` means that code too."""
    funcs = {f.name: f for f in find_functions(unit)}
    seen: set[str] = set()
    todo = [kernel]
    while todo:
        k = todo.pop()
        if k in seen:
            continue
        seen.add(k)
        f = funcs.get(k)
        if f is None:
            continue
        for c in unit.nodes_of_type("call_expression", within=f.node):
            fn = c.child_by_field_name("function")
            if fn is None:
                continue
            name = unit.text(fn).split("<")[0].strip()
            if name in funcs and name not in seen:
                todo.append(name)
    return seen


_template_params = template_params  # the name the package's own modules use
