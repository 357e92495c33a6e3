"""Mutation testing of the gate: known bugs planted in the corpus experts, one at a time.

:func:`generate` takes an expert kernel (a :class:`~kltrans.syntax.unit.Unit`) and returns
one :class:`Mutant` per site of each mutation operator below, in every ``__global__`` and
``__device__`` function. A mutant is the expert's source with exactly one change, made on
the tree (nodes, :class:`~kltrans.syntax.edits.Edit`, :func:`~kltrans.syntax.edits.apply_edits`),
so every untouched byte stays as it was. Ids are deterministic:
``<workload>/<file stem>:<operator>:L<line>`` (``.1``, ``.2``, ... in column order when a
line holds several sites of one operator); mutants whose source equals an earlier one
are dropped.

Operators:

``delete-barrier``
    remove one ``__syncthreads();`` or ``__syncwarp(...);`` statement (a lone body of an
    unbraced ``if``/loop becomes ``{}``).
``bound-off-by-one``
    in one bound check, ``<`` <-> ``<=`` and ``>`` <-> ``>=``. A bound check is a relational
    comparison inside the condition of an ``if``, a loop or a ``?:`` (possibly under
    ``&&``, ``||``, ``!`` and parentheses) with an operand that names a size: an integer
    parameter of the function, a ``#define`` constant, ``blockDim``/``gridDim``, or an
    integer local computed from those (see :func:`names_size`).
``shuffle-offset``
    in one ``__shfl_{down,up,xor,}_sync`` call, the offset/lane argument ``o`` becomes
    ``(o) + 1`` (xor: ``(o) ^ 1``, or ``2`` when ``o`` is ``1``).
``shuffle-divergent``
    one statement holding a warp shuffle goes under ``if (threadIdx.x & 1) { ... }``. A
    declaration or a ``return`` cannot be wrapped without changing its scope, so then the
    nearest enclosing statement that can (a loop, usually) is wrapped; a ``#pragma``
    that applies to the wrapped statement moves inside the ``if`` with it.
``smem-index``
    in one subscript of a shared array, index ``i`` becomes ``(i) + 1``. Shared arrays
    are the ``__shared__`` declarations (``unit.shared_decls()``), the device-function
    parameters they are passed to (followed through calls) and local pointers set from
    them. At most :data:`SMEM_MAX_PER_FILE` sites per file, spread evenly over the
    file's sites in source order.
``remove-bounds-check``
    the condition of one ``if`` whose condition holds a bound check becomes ``true``.

:func:`gate_mutants` runs the gate (compile and correct) on mutants in a thread pool; each
gate runs its worker subprocess, so a hang or a crash ends only that mutant. A mutant that
NVRTC (sm_90) rejects is ``uncompilable``; one for which NVRTC makes the expert's very
cubin is ``equivalent`` (trivial compiler equivalence: on the GPU it *is* the expert, so
no gate can kill it) and is not gated; one whose correct stage fails is ``rejected``; one
that passes is ``survived``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterable

from kltrans.syntax.edits import Edit, EditError, apply_edits

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.unit import Unit

OPERATORS = ("delete-barrier", "bound-off-by-one", "shuffle-offset", "shuffle-divergent",
             "smem-index", "remove-bounds-check")
SMEM_MAX_PER_FILE = 6
BARRIERS = ("__syncthreads", "__syncwarp")
SHUFFLES = ("__shfl_down_sync", "__shfl_up_sync", "__shfl_xor_sync", "__shfl_sync")
FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">"}
DIVERGENT = "threadIdx.x & 1"
SIZE_BUILTINS = ("blockDim", "gridDim")
INT_WORDS = {"int", "unsigned", "signed", "long", "short", "size_t", "ptrdiff_t", "ssize_t",
             "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
             "uint64_t", "intptr_t", "uintptr_t", "const", "constexpr", "static", "volatile",
             "__restrict__", "std::size_t", "std::ptrdiff_t"}
_STATEMENTS = {"expression_statement", "declaration", "return_statement", "if_statement",
               "for_statement", "while_statement", "do_statement", "compound_statement",
               "for_range_loop", "switch_statement"}
_LOOPS_AND_IFS = ("if_statement", "for_statement", "while_statement", "do_statement")


@dataclass(frozen=True)
class Mutant:
    """One planted bug: the expert's ``source`` with one change at ``line``."""

    id: str
    operator: str
    line: int
    description: str
    source: str

    @property
    def label(self) -> str:
        """``<workload>/<stem>``: the id's first part."""
        return self.id.split(":", 1)[0]


# ------------------------------------------------------------------------ helpers
def _label(unit: "Unit") -> str:
    path = unit.origin.path if unit.origin is not None else unit.path
    stem = os.path.splitext(os.path.basename(path))[0]
    folder = os.path.basename(os.path.dirname(os.path.abspath(path)))
    return f"{folder}/{stem}" if folder else stem


def _squash(text: str) -> str:
    return " ".join(text.split())


def _functions(unit: "Unit") -> list:
    """``__global__`` and ``__device__`` functions, in file order."""
    fns = [f for f in unit.kernels() + unit.device_functions() if f.body is not None]
    fns.sort(key=lambda f: f.node.start_byte)
    return fns


def _in(node: "Node", span: tuple[int, int]) -> bool:
    return span[0] <= node.start_byte and node.end_byte <= span[1]


def _nodes(unit: "Unit", node_type: str, fns) -> list[tuple["Node", object]]:
    """(node, function) for every node of ``node_type`` inside a function body."""
    out = []
    for f in fns:
        for n in unit.nodes_of_type(node_type, f.body):
            out.append((n, f))
    return out


def _callee(unit: "Unit", call: "Node") -> str:
    fn = call.child_by_field_name("function")
    return unit.text(fn).strip() if fn is not None else ""


def _line(unit: "Unit", node_or_offset) -> int:
    off = node_or_offset if isinstance(node_or_offset, int) else node_or_offset.start_byte
    return unit.line_col(off)[0]


def _short(text: str, n: int = 60) -> str:
    t = _squash(text)
    return t if len(t) <= n else t[: n - 3] + "..."


def _indent_of(unit: "Unit", offset: int) -> str:
    line = unit.line_text(_line(unit, offset))
    return line[: len(line) - len(line.lstrip())]


# ------------------------------------------------------------------ size analysis
def _macro_names(unit: "Unit") -> set[str]:
    """Object-like ``#define`` names of the unit (sizes and constants)."""
    out = set()
    for n in unit.nodes_of_type("preproc_def"):
        name = n.child_by_field_name("name")
        if name is not None and n.child_by_field_name("value") is not None:
            out.add(unit.text(name))
    return out


def _is_int_type(text: str) -> bool:
    words = _squash(text.replace("*", " * ").replace("&", " & ")).split()
    return bool(words) and "*" not in words and "&" not in words and \
        all(w in INT_WORDS for w in words) and any(w not in ("const", "constexpr", "static",
                                                              "volatile") for w in words)


def _identifier_nodes(unit: "Unit", node: "Node") -> list["Node"]:
    if node.type == "identifier":
        return [node]
    return unit.nodes_of_type("identifier", node)


def _uses_builtin_size(unit: "Unit", node: "Node") -> bool:
    for n in [node] + unit.nodes_of_type("field_expression", node):
        if n.type == "field_expression":
            arg = n.child_by_field_name("argument")
            if arg is not None and unit.text(arg).strip() in SIZE_BUILTINS:
                return True
    return False


def _declared_name(unit: "Unit", declarator: "Node") -> str | None:
    n = declarator
    while n is not None and n.type not in ("identifier", "field_identifier"):
        n = n.child_by_field_name("declarator")
    return unit.text(n) if n is not None else None


def _scope_declarations(unit: "Unit", scope: "Node", before: int) -> list["Node"]:
    """Declarators declared directly in ``scope`` (a block or a for loop) before ``before``."""
    decls = []
    if scope.type == "compound_statement":
        for c in scope.named_children:
            if c.start_byte >= before:
                break
            if c.type == "declaration":
                decls.append(c)
    elif scope.type in ("for_statement", "for_range_loop"):
        init = scope.child_by_field_name("initializer")
        if init is not None and init.type == "declaration":
            decls.append(init)
    out = []
    for d in decls:
        out.extend(d.children_by_field_name("declarator"))
    return out


def resolve_local(unit: "Unit", ident: "Node", fn) -> "Node | None":
    """The local declarator (inside ``fn``'s body) that ``ident`` refers to, if any."""
    name = unit.text(ident)
    p = ident.parent
    stop = fn.body.parent
    while p is not None and p.id != stop.id:
        found = None
        for d in _scope_declarations(unit, p, ident.start_byte):
            if _declared_name(unit, d) == name:
                found = d
        if found is not None:
            return found
        p = p.parent
    return None


def _size_state(unit: "Unit", fn) -> tuple[set[str], set[str], set[int]]:
    """(size names when not declared locally, parameter names, ids of size locals)."""
    key = ("size-state", fn.node.id)
    if key in unit._cache:
        return unit._cache[key]
    names = set(_macro_names(unit))
    params = {p.name for p in fn.params if p.name}
    for p in fn.params:
        if p.name and p.pointer == 0 and not p.array and _is_int_type(p.base_type):
            names.add(p.name)
    for t in fn.template_params:
        if t.kind == "value" and t.name and t.type and _is_int_type(t.type):
            names.add(t.name)
    locals_ = []  # (declarator node, initializer node)
    for d in unit.nodes_of_type("declaration", fn.body):
        tnode = d.child_by_field_name("type")
        if tnode is None:
            continue
        quals = " ".join(unit.text(c) for c in d.children if c.type == "type_qualifier")
        if not _is_int_type(quals + " " + unit.text(tnode)):
            continue
        for decl in d.children_by_field_name("declarator"):
            if decl.type != "init_declarator":
                continue
            value = decl.child_by_field_name("value")
            inner = decl.child_by_field_name("declarator")
            if value is None or inner is None or inner.type != "identifier":
                continue
            locals_.append((decl, value))
    sized: set[int] = set()
    changed = True
    while changed:
        changed = False
        for decl, value in locals_:
            if decl.id in sized:
                continue
            hit = _uses_builtin_size(unit, value)
            for ident in [] if hit else _identifier_nodes(unit, value):
                target = resolve_local(unit, ident, fn)
                if target is not None:
                    hit = target.id in sized
                else:
                    nm = unit.text(ident)
                    hit = nm in names or nm in params
                if hit:
                    break
            if hit:
                sized.add(decl.id)
                changed = True
    state = (names, params, sized)
    unit._cache[key] = state
    return state


def names_size(unit: "Unit", node: "Node", fn) -> bool:
    """Whether expression ``node`` (inside function ``fn``) names a size.

    Sizes: integer parameters and integer template parameters, ``#define`` constants,
    ``blockDim``/``gridDim``, and integer locals whose initializer mentions a size, any
    parameter (``head``, computed from the pointer ``x``) or ``blockDim``/``gridDim``, to
    a fixed point. Names are resolved with C++ block scoping.
    """
    if _uses_builtin_size(unit, node):
        return True
    names, _params, sized = _size_state(unit, fn)
    for ident in _identifier_nodes(unit, node):
        target = resolve_local(unit, ident, fn)
        if target is not None:
            if target.id in sized:
                return True
        elif unit.text(ident) in names:
            return True
    return False


def _condition_owner(node: "Node") -> "Node | None":
    """The if/loop/ternary whose condition ``node`` sits in (through &&, ||, !, parens)."""
    n = node
    while True:
        p = n.parent
        if p is None:
            return None
        if p.type == "parenthesized_expression" or p.type == "condition_clause":
            n = p
            continue
        if p.type == "binary_expression":
            op = p.child_by_field_name("operator")
            if op is not None and op.type in ("&&", "||", "and", "or"):
                n = p
                continue
            return None
        if p.type == "unary_expression":
            op = p.child_by_field_name("operator")
            if op is not None and op.type in ("!", "not"):
                n = p
                continue
            return None
        if p.type in _LOOPS_AND_IFS + ("conditional_expression",):
            cond = p.child_by_field_name("condition")
            return p if cond is not None and cond.id == n.id else None
        return None


def bound_checks(unit: "Unit", fns=None) -> list[tuple["Node", "Node", object]]:
    """(comparison, owner if/loop/ternary, function) for every bound check, in file order."""
    fns = _functions(unit) if fns is None else fns
    out = []
    for n, f in _nodes(unit, "binary_expression", fns):
        op = n.child_by_field_name("operator")
        if op is None or op.type not in FLIP:
            continue
        owner = _condition_owner(n)
        if owner is None:
            continue
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if left is None or right is None:
            continue
        if names_size(unit, left, f) or names_size(unit, right, f):
            out.append((n, owner, f))
    return out


# ------------------------------------------------------------------- shared arrays
def _root_name(unit: "Unit", expr: "Node | None") -> str | None:
    """The array a pointer-valued expression is based on: ``a`` of ``a``, ``a[i]``,
    ``a + k``, ``&a[i]``, ``(T*)a``, ``reinterpret_cast<T*>(a)``."""
    n = expr
    while n is not None:
        t = n.type
        if t == "identifier":
            return unit.text(n)
        if t == "parenthesized_expression":
            n = n.named_children[0] if n.named_children else None
        elif t == "subscript_expression":
            n = n.child_by_field_name("argument")
        elif t == "binary_expression":
            op = n.child_by_field_name("operator")
            if op is None or op.type not in ("+", "-"):
                return None
            n = n.child_by_field_name("left")
        elif t == "pointer_expression":
            op = n.child_by_field_name("operator")
            if op is None or op.type != "&":
                return None
            n = n.child_by_field_name("argument")
        elif t == "cast_expression":
            n = n.child_by_field_name("value")
        elif t == "call_expression":  # reinterpret_cast<T*>(a)
            fn = n.child_by_field_name("function")
            args = n.child_by_field_name("arguments")
            if fn is None or args is None or "cast" not in unit.text(fn).split("<")[0]:
                return None
            kids = args.named_children
            n = kids[0] if len(kids) == 1 else None
        else:
            return None
    return None


def shared_names(unit: "Unit") -> dict[int, set[str]]:
    """Per function (by node id): the names that refer to shared memory there."""
    fns = _functions(unit)
    by_name: dict[str, list] = {}
    for f in fns:
        by_name.setdefault(f.name, []).append(f)
    out: dict[int, set[str]] = {f.node.id: set() for f in fns}
    file_scope = set()
    for s in unit.shared_decls():
        owner = next((f for f in fns if f.name == s.function and
                      f.node.start_byte <= s.node.start_byte < f.node.end_byte), None)
        if owner is None:
            file_scope.add(s.name)
        else:
            out[owner.node.id].add(s.name)
    for f in fns:
        out[f.node.id] |= file_scope
    changed = True
    while changed:
        changed = False
        for f in fns:
            names = out[f.node.id]
            # local pointers set from a shared array
            for d in unit.nodes_of_type("init_declarator", f.body):
                name = d.child_by_field_name("declarator")
                while name is not None and name.type == "pointer_declarator":
                    name = name.child_by_field_name("declarator")
                if name is None or name.type != "identifier" or unit.text(name) in names:
                    continue
                if d.child_by_field_name("declarator").type != "pointer_declarator":
                    continue
                if _root_name(unit, d.child_by_field_name("value")) in names:
                    names.add(unit.text(name))
                    changed = True
            # parameters of device functions that receive a shared array
            for call in unit.nodes_of_type("call_expression", f.body):
                fnode = call.child_by_field_name("function")
                if fnode is None:
                    continue
                if fnode.type == "template_function":
                    fnode = fnode.child_by_field_name("name")
                cname = unit.text(fnode).strip() if fnode is not None else ""
                args = call.child_by_field_name("arguments")
                if cname not in by_name or args is None:
                    continue
                argv = [a for a in args.named_children if a.type != "comment"]
                for callee in by_name[cname]:
                    if len(callee.params) != len(argv):
                        continue
                    for p, a in zip(callee.params, argv):
                        if p.name and (p.pointer or p.array) and \
                                _root_name(unit, a) in names and p.name not in out[callee.node.id]:
                            out[callee.node.id].add(p.name)
                            changed = True
    return out


def smem_subscripts(unit: "Unit") -> list["Node"]:
    """Every subscript of a shared array (each index of a multi-dimensional access is a
    site of its own), in source order."""
    shared = shared_names(unit)
    out = []
    for n, f in _nodes(unit, "subscript_expression", _functions(unit)):
        if _root_name(unit, n.child_by_field_name("argument")) in shared[f.node.id]:
            idx = n.child_by_field_name("indices")
            if idx is not None and len([c for c in idx.named_children if c.type != "comment"]) == 1:
                out.append(n)
    seen, uniq = set(), []
    for n in out:
        if (n.start_byte, n.end_byte) not in seen:
            seen.add((n.start_byte, n.end_byte))
            uniq.append(n)
    uniq.sort(key=lambda n: (n.start_byte, n.end_byte))
    return uniq


def spread(items: list, k: int) -> list:
    """At most ``k`` items, evenly spread over ``items`` (first and last included)."""
    if len(items) <= k:
        return list(items)
    if k == 1:
        return [items[0]]
    picks = sorted({round(i * (len(items) - 1) / (k - 1)) for i in range(k)})
    return [items[i] for i in picks]


# -------------------------------------------------------------------- operators
# each yields (site node for the line, edits, description)
def _op_delete_barrier(unit: "Unit", fns):
    for call, _f in _nodes(unit, "call_expression", fns):
        if _callee(unit, call) not in BARRIERS:
            continue
        stmt = call.parent
        if stmt is None or stmt.type != "expression_statement" or \
                len([c for c in stmt.named_children if c.type != "comment"]) != 1:
            continue
        text = _squash(unit.text(stmt))
        if stmt.parent is not None and stmt.parent.type == "compound_statement":
            src = unit.source
            start = src.rfind(b"\n", 0, stmt.start_byte) + 1
            end = src.find(b"\n", stmt.end_byte)
            end = len(src) if end < 0 else end + 1
            if src[start:stmt.start_byte].strip() == b"" and src[stmt.end_byte:end].strip() == b"":
                edit = Edit.delete(start, end)  # alone on its line: drop the line
            else:
                edit = Edit.replace(stmt, "")
        else:
            edit = Edit.replace(stmt, "{}")
        yield stmt, [edit], f"delete `{text}`"


def _op_bound_off_by_one(unit: "Unit", fns):
    for cmp_, owner, _f in bound_checks(unit, fns):
        op = cmp_.child_by_field_name("operator")
        new = FLIP[op.type]
        before = _short(unit.text(cmp_))
        after = _short(unit.text((cmp_.start_byte, op.start_byte)) + new +
                       unit.text((op.end_byte, cmp_.end_byte)))
        where = owner.type.replace("_statement", "").replace("conditional_expression", "?:")
        yield op, [Edit.replace(op, new)], f"{where} condition: `{before}` -> `{after}`"


def _shuffle_arg(unit: "Unit", call: "Node") -> "Node | None":
    args = call.child_by_field_name("arguments")
    if args is None:
        return None
    argv = [a for a in args.named_children if a.type != "comment"]
    return argv[2] if len(argv) >= 3 else None


def _op_shuffle_offset(unit: "Unit", fns):
    for call, _f in _nodes(unit, "call_expression", fns):
        name = _callee(unit, call)
        if name not in SHUFFLES:
            continue
        arg = _shuffle_arg(unit, call)
        if arg is None:
            continue
        o = unit.text(arg)
        if name == "__shfl_xor_sync":
            new = "2" if o.strip() == "1" else f"({o}) ^ 1"
        else:
            new = f"({o}) + 1"
        yield arg, [Edit.replace(arg, new)], f"{name} lane/offset `{_short(o)}` -> `{new}`"


def _op_shuffle_divergent(unit: "Unit", fns):
    from kltrans.syntax.cuda import pragmas_for

    for call, f in _nodes(unit, "call_expression", fns):
        if _callee(unit, call) not in SHUFFLES:
            continue
        stmt = call.parent
        while stmt is not None and stmt.id != f.body.id:
            if stmt.type in _STATEMENTS and stmt.type not in ("declaration", "return_statement",
                                                              "compound_statement"):
                parent = stmt.parent
                # a for loop's initializer is a declaration, never a statement to wrap
                if parent is not None and parent.type == "for_statement" and \
                        (parent.child_by_field_name("body") is None or
                         parent.child_by_field_name("body").id != stmt.id):
                    stmt = parent
                    continue
                break
            stmt = stmt.parent
        if stmt is None or stmt.id == f.body.id:
            continue
        prag = pragmas_for(unit, stmt)
        start = min([p.start for p in prag] + [stmt.start_byte])
        indent = _indent_of(unit, stmt.start_byte)
        head = f"if ({DIVERGENT}) {{"
        if start < stmt.start_byte:  # pragmas on their own lines: open the if above them
            edits = [Edit.insert(start, f"{indent}{head}\n"), Edit.insert(stmt.end_byte, f"\n{indent}}}")]
        else:
            edits = [Edit.insert(stmt.start_byte, f"{head} "), Edit.insert(stmt.end_byte, " }")]
        what = stmt.type.replace("_statement", "").replace("expression", "statement")
        yield stmt, edits, (f"{what} holding `{_short(unit.text(call), 48)}` under "
                            f"`if ({DIVERGENT})`")


def _op_smem_index(unit: "Unit", fns):
    spans = [(f.body.start_byte, f.body.end_byte) for f in fns]
    sites = [n for n in smem_subscripts(unit) if any(_in(n, s) for s in spans)]
    for n in spread(sites, SMEM_MAX_PER_FILE):
        idx = n.child_by_field_name("indices")
        i = [c for c in idx.named_children if c.type != "comment"][0]
        new = f"({unit.text(i)}) + 1"
        arr = _short(unit.text(n.child_by_field_name("argument")), 30)
        yield i, [Edit.replace(i, new)], f"shared index `{arr}[{_short(unit.text(i))}]` -> `[{new}]`"


def _op_remove_bounds_check(unit: "Unit", fns):
    seen = set()
    for _cmp, owner, _f in bound_checks(unit, fns):
        if owner.type != "if_statement" or owner.id in seen:
            continue
        seen.add(owner.id)
        clause = owner.child_by_field_name("condition")
        value = clause.child_by_field_name("value") if clause is not None else None
        if value is None:
            continue
        yield value, [Edit.replace(value, "true")], f"if (`{_short(unit.text(value))}`) -> if (true)"


_OPS: dict[str, Callable] = {
    "delete-barrier": _op_delete_barrier,
    "bound-off-by-one": _op_bound_off_by_one,
    "shuffle-offset": _op_shuffle_offset,
    "shuffle-divergent": _op_shuffle_divergent,
    "smem-index": _op_smem_index,
    "remove-bounds-check": _op_remove_bounds_check,
}


def generate(unit: "Unit", label: str | None = None, operators=OPERATORS) -> list[Mutant]:
    """Every mutant of ``unit`` (see the module docstring), in operator then source order.

    ``label`` names the unit in the ids (default ``<folder>/<file stem>``).
    """
    label = label or _label(unit)
    fns = _functions(unit)
    seen = {unit.source}
    out: list[Mutant] = []
    for op in operators:
        found = []  # (line, column, description, source)
        for site, edits, desc in _OPS[op](unit, fns):
            try:
                new = apply_edits(unit, edits)
            except EditError:
                continue
            if new.source in seen:
                continue
            seen.add(new.source)
            line, col = unit.line_col(site.start_byte)
            found.append((line, col, desc, new.source.decode("utf-8")))
        found.sort(key=lambda t: (t[0], t[1]))
        per_line: dict[int, int] = {}
        for line, *_ in found:
            per_line[line] = per_line.get(line, 0) + 1
        rank: dict[int, int] = {}
        for line, _col, desc, src in found:
            tag = f"L{line}"
            if per_line[line] > 1:
                rank[line] = rank.get(line, 0) + 1
                tag += f".{rank[line]}"
            out.append(Mutant(f"{label}:{op}:{tag}", op, line, f"line {line}: {desc}", src))
    return out


def source_sha(source: str) -> str:
    """A short content hash of a mutant's source (to tell a stale saved verdict)."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def compile_mutant(mutant: Mutant, path: str, arch: str = "sm_90",
                   name_expression: str | None = None):
    """NVRTC :class:`~kltrans.gate.compile.CompileResult` of the mutant, named ``path``."""
    from kltrans.gate.compile import compile_unit
    from kltrans.syntax.unit import parse

    return compile_unit(parse(mutant.source, path), arch=arch,
                        name_expressions=[name_expression] if name_expression else [])


def compiles(mutant: Mutant, path: str = "kernel.cu", arch: str = "sm_90") -> bool:
    """Whether NVRTC compiles the mutant for ``arch``."""
    return compile_mutant(mutant, path, arch).ok


_EXPERT_CUBIN: dict = {}
_EXPERT_LOCK = threading.Lock()


def _expert_cubin(kernel_file: str, arch: str, name_expression: str | None) -> bytes | None:
    from kltrans.gate.compile import compile_unit
    from kltrans.syntax.unit import load

    key = (os.path.abspath(kernel_file), arch, name_expression)
    with _EXPERT_LOCK:
        if key not in _EXPERT_CUBIN:
            [unit] = load(kernel_file)
            r = compile_unit(unit, arch=arch,
                             name_expressions=[name_expression] if name_expression else [])
            _EXPERT_CUBIN[key] = r.cubin if r.ok else None
        return _EXPERT_CUBIN[key]


def local_includes(unit: "Unit") -> list[str]:
    """Quoted ``#include "x"`` paths of the unit (relative to its folder)."""
    out = []
    for n in unit.nodes_of_type("preproc_include"):
        p = n.child_by_field_name("path")
        if p is not None and p.type == "string_literal":
            out.append(unit.text(p).strip('"'))
    return out


def expert_mutants(workload: str, variant: str = "expert") -> tuple[list[Mutant], str, dict]:
    """(mutants, kernel file, spec entry) for one corpus workload's ``variant``."""
    from kltrans.syntax.unit import load
    from kltrans.workload.spec import load_workload

    wl = load_workload(workload)
    entry = wl.kernels[variant]
    path = os.path.join(wl.path, entry["file"])
    [unit] = load(path)
    return generate(unit), path, entry


def gate_mutant(mutant: Mutant, workload: str, kernel_file: str, entry: dict | None = None,
                backend: str = "cpu", timeout_s: float = 120.0, tmp_root: str | None = None,
                arch: str | None = None, equivalence: bool = True) -> dict:
    """Gate one mutant (compile, correct) from a temporary copy of the kernel's folder.

    Returns ``{"operator", "line", "description", "sha", "verdict", "kind", "reason",
    "seconds"}``. ``verdict``:

    - ``uncompilable``: NVRTC (``arch``, default sm_90) rejects the mutant, or the gate's
      compile stage (purity included) does;
    - ``equivalent``: (with ``equivalence``) NVRTC makes the same cubin as for the expert
      (trivial compiler equivalence: the GPU runs the very same code, so no gate can
      tell them apart), not gated;
    - ``rejected``: the correct stage fails; ``survived``: it passes;
    - ``error``: the harness itself failed (a bug here, never a kernel verdict).
    """
    from kltrans.gate.run import gate
    from kltrans.syntax.unit import parse

    entry = entry or {}
    target = arch or "sm_90"
    ne = entry.get("name_expression")
    t0 = time.perf_counter()
    rec = {"operator": mutant.operator, "line": mutant.line, "description": mutant.description,
           "sha": source_sha(mutant.source)}
    d = None
    try:
        r = compile_mutant(mutant, kernel_file, target, ne)
        if not r.ok:
            first = r.errors[0] if r.errors else None
            reason = str(first).splitlines()[0] if first else (r.log.strip().splitlines() or ["?"])[-1]
            verdict, kind = "uncompilable", "nvrtc"
        elif equivalence and r.cubin is not None and \
                r.cubin == _expert_cubin(kernel_file, target, ne):
            verdict, kind, reason = "equivalent", "identical-cubin", \
                f"NVRTC ({target}) makes the expert's cubin"
        else:
            d = tempfile.mkdtemp(prefix="kl-mutant-", dir=tmp_root)
            src_dir = os.path.dirname(os.path.abspath(kernel_file))
            for inc in local_includes(parse(mutant.source, kernel_file)):
                s = os.path.normpath(os.path.join(src_dir, inc))
                if s.startswith(src_dir + os.sep) and os.path.isfile(s):
                    dst = os.path.join(d, os.path.relpath(s, src_dir))
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    shutil.copyfile(s, dst)
            path = os.path.join(d, os.path.basename(kernel_file))
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(mutant.source)
            rep = gate(path, workload, kernel=entry.get("kernel"), backend=backend,
                       stages=["compile", "correct"], timeout_s=timeout_s, arch=arch,
                       name_expression=ne)
            failed = next((s for s in rep.stages if s.status == "fail"), None)
            if failed is None:
                verdict, kind, reason = "survived", None, ""
                if not any(s.stage == "correct" and s.status == "pass" for s in rep.stages):
                    verdict, kind, reason = "error", "no-correct-stage", "the correct stage did not run"
            elif failed.stage == "compile":
                verdict, kind, reason = "uncompilable", failed.data.get("kind") or "compile", \
                    failed.reason
            elif failed.reason.startswith("error: "):
                # the worker failed before judging the kernel (backend, driver, emulator
                # build): no verdict on the mutant. A hang ("timeout: ") or a crash
                # ("crash: ") of the kernel is a rejection.
                verdict, kind, reason = "error", failed.data.get("kind") or "error", failed.reason
            else:
                verdict, kind, reason = "rejected", failed.data.get("kind") or "fail", failed.reason
    except Exception as e:  # the harness, not the kernel: reported, never counted as a kill
        verdict, kind, reason = "error", type(e).__name__, str(e)[:500]
    finally:
        if d is not None:
            shutil.rmtree(d, ignore_errors=True)
    rec.update({"verdict": verdict, "kind": kind, "reason": str(reason)[:500],
                "seconds": round(time.perf_counter() - t0, 3)})
    return rec


def gate_expert(workload: str, kernel_file: str, entry: dict | None = None,
                backend: str = "cpu", timeout_s: float = 120.0, arch: str | None = None) -> dict:
    """The baseline: gate the unmutated kernel; ``{"ok", "reason", "seconds"}``."""
    from kltrans.gate.run import gate

    entry = entry or {}
    t0 = time.perf_counter()
    try:
        rep = gate(kernel_file, workload, kernel=entry.get("kernel"), backend=backend,
                   stages=["compile", "correct"], timeout_s=timeout_s, arch=arch,
                   name_expression=entry.get("name_expression"))
        failed = next((s for s in rep.stages if s.status == "fail"), None)
        ok = failed is None and any(s.stage == "correct" and s.status == "pass" for s in rep.stages)
        reason = "" if ok else (f"{failed.stage}: {failed.reason}" if failed else "not judged")
    except Exception as e:
        ok, reason = False, f"{type(e).__name__}: {e}"
    return {"ok": ok, "reason": reason[:500], "seconds": round(time.perf_counter() - t0, 3)}


def gate_mutants(jobs: list[tuple[Mutant, str, str, dict]], backend: str = "cpu", workers: int = 2,
                 timeout_s: float = 120.0, progress: Callable[[Mutant, dict], None] | None = None,
                 arch: str | None = None, equivalence: bool = True,
                 baseline: dict | None = None) -> dict[str, dict]:
    """Gate every ``(mutant, workload, kernel file, spec entry)`` with a thread pool.

    First each expert itself is gated (the baseline of mutation testing: the unmutated
    kernel must pass); the mutants of an expert that fails are not gated and get the
    verdict ``error``. ``baseline``, when given, receives ``{kernel file: result}``.
    Returns ``{mutant id: record}`` in the order of ``jobs`` (see :func:`gate_mutant`);
    ``progress(mutant, record)`` is called as each finishes, in completion order.
    """
    from concurrent.futures import ThreadPoolExecutor, as_completed

    experts = {}
    for _m, wl, kf, entry in jobs:
        experts.setdefault(kf, (wl, entry))
    done: dict[str, dict] = {}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        base_futs = {kf: pool.submit(gate_expert, wl, kf, entry, backend, timeout_s, arch)
                     for kf, (wl, entry) in experts.items()}
        base = {kf: f.result() for kf, f in base_futs.items()}
        if baseline is not None:
            baseline.update(base)
        futs = {}
        for m, wl, kf, entry in jobs:
            if not base[kf]["ok"]:
                rec = {"operator": m.operator, "line": m.line, "description": m.description,
                       "sha": source_sha(m.source), "verdict": "error", "kind": "expert-fails",
                       "reason": f"the expert itself fails the gate: {base[kf]['reason']}",
                       "seconds": 0.0}
                done[m.id] = rec
                if progress is not None:
                    progress(m, rec)
                continue
            futs[pool.submit(gate_mutant, m, wl, kf, entry, backend, timeout_s, None, arch,
                             equivalence)] = m
        for fut in as_completed(futs):
            m = futs[fut]
            done[m.id] = fut.result()
            if progress is not None:
                progress(m, done[m.id])
    return {m.id: done[m.id] for m, _wl, _kf, _e in jobs}


def corpus_jobs(corpus: str, workloads: Iterable[str] | None = None,
                variant: str = "expert") -> list[tuple[Mutant, str, str, dict]]:
    """``(mutant, workload dir, kernel file, spec entry)`` for every workload of ``corpus``
    that has ``variant`` (sorted by name)."""
    names = sorted(workloads) if workloads is not None else sorted(
        n for n in os.listdir(corpus)
        if os.path.isfile(os.path.join(corpus, n, "workload.yaml"))
        or os.path.isfile(os.path.join(corpus, n, "workload.yml")))
    out = []
    for n in names:
        wdir = os.path.join(corpus, n)
        ms, path, entry = expert_mutants(wdir, variant)
        out.extend((m, wdir, path, entry) for m in ms)
    return out


VERDICTS = ("uncompilable", "equivalent", "rejected", "survived", "error")


def summary(results: dict[str, dict], by: str = "operator") -> list[dict]:
    """Per operator (or per expert with ``by="expert"``), then a total row: counts of each
    verdict and the kill rate (rejected / (rejected + survived))."""
    if by == "operator":
        keys = list(OPERATORS)
        group = {k: r["operator"] for k, r in results.items()}
    else:
        group = {k: k.split(":", 1)[0] for k in results}
        keys = list(dict.fromkeys(group.values()))
    rows = []
    for key in keys + ["total"]:
        recs = [r for k, r in results.items() if key == "total" or group[k] == key]
        row = {by: key, "mutants": len(recs)}
        for v in VERDICTS:
            row[v] = sum(r["verdict"] == v for r in recs)
        judged = row["rejected"] + row["survived"]
        row["killed"] = row["rejected"] / judged if judged else None
        rows.append(row)
    return rows


def format_summary(results: dict[str, dict], by: str = "operator") -> str:
    lines = [f"{by:<22}{'mutants':>8}{'uncompil.':>10}{'equiv.':>7}{'rejected':>9}"
             f"{'survived':>9}{'errors':>7}{'killed%':>9}"]
    for r in summary(results, by):
        pct = "-" if r["killed"] is None else f"{100.0 * r['killed']:.1f}"
        lines.append(f"{r[by]:<22}{r['mutants']:>8}{r['uncompilable']:>10}{r['equivalent']:>7}"
                     f"{r['rejected']:>9}{r['survived']:>9}{r['error']:>7}{pct:>9}")
    return "\n".join(lines)
