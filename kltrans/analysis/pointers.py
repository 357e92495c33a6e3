"""Pointer parameters: which are written, which escape analysis, and aliasing.

:func:`pointer_params` tells, for each pointer parameter of a kernel, whether the kernel
writes through it. Writes are found through simple local aliases (``float* row = x + r *
n; row[j] = v`` writes ``x``), casts (``*reinterpret_cast<float4*>(&y[4 * i]) = v``),
atomics (``atomicAdd(&x[i], v)``, ``atomicAdd(x + i, v)``, ``atomicAdd(x, v)``), store
intrinsics (``__stcs(&y[i], v)``), ``memcpy``/``memset`` destinations, and calls to device
functions of the unit (analysed in turn). A pointer that reaches something the analysis
cannot follow — a call to a function the unit does not define, a store of the pointer
into memory, another pointer variable assigned from an expression it cannot read — is an
*escape*: the answer is then ``None`` (unknown) unless a write was found anyway.

A ``const`` pointee cannot be written without a cast that drops ``const``; such a
parameter is read-only unless the kernel casts it (C-style or ``const_cast``) to a
non-const pointer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kltrans.analysis.affine import (
    _cache,
    _declarators,
    _norm,
    _pointer_type,
    _resolve,
    _strip_parens,
    _unit_info,
)
from kltrans.analysis.barriers import _call_name, is_builtin_call
from kltrans.analysis.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function, Param
    from kltrans.syntax.unit import Unit

ATOMICS = {"atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax", "atomicInc",
           "atomicDec", "atomicCAS", "atomicAnd", "atomicOr", "atomicXor"}
# builtins that write through their first argument
STORES = {"__stcs", "__stcg", "__stwb", "__stwt", "__stcv", "memcpy", "memset", "memmove",
          "__pipeline_memcpy_async", "memcpy_async", "cp_async", "__builtin_memcpy",
          "__builtin_memset", "store", "atomic_store"}
# builtins that write through the pointers after the first argument
OUT_PARAMS = {"sincos": (1, 2), "sincosf": (1, 2), "__sincosf": (1, 2), "sincospi": (1, 2),
              "sincospif": (1, 2), "modf": (1,), "modff": (1,), "frexp": (1,), "frexpf": (1,),
              "remquo": (2,), "remquof": (2,)}
_CHAR_TYPES = {"char", "unsigned char", "signed char", "int8_t", "uint8_t", "std::byte", "void",
               "uchar", "byte"}


@dataclass(frozen=True)
class PointerParam:
    """A pointer parameter and what the function does with it.

    ``written``: True when written through (``writes`` lists where), False when provably
    only read, None when it escapes the analysis (``escapes`` lists where).
    """

    name: str
    param: "Param" = field(compare=False)
    const: bool
    restrict: bool
    written: bool | None
    writes: tuple = field(default=(), compare=False, repr=False)
    escapes: tuple = field(default=(), compare=False, repr=False)
    reason: str = ""


class Aliases:
    """Which parameters each local pointer variable may point into (flow-insensitive)."""

    def __init__(self, unit: "Unit", fn_node: "Node", params: list[str]):
        self.unit = unit
        self.fn = fn_node
        self.params = set(params)
        self.points: dict[str, set[str]] = {p: {p} for p in params}
        self.const_dropped: set[str] = set()  # params reachable through a non-const cast
        self.escapes: list[tuple["Node", set[str], str]] = []
        self._compute()

    def bases(self, node: "Node | None", _depth: int = 0) -> set[str]:
        """The parameters a pointer-valued expression may point into."""
        if node is None or _depth > 30:
            return set()
        node = _strip_parens(node)
        t = node.type
        u = self.unit
        if t == "identifier":
            return set(self.points.get(u.text(node), ()))
        if t == "binary_expression":
            op = u.text(node.child_by_field_name("operator"))
            if op in ("+", "-"):
                return self.bases(node.child_by_field_name("left"), _depth + 1) | \
                    self.bases(node.child_by_field_name("right"), _depth + 1)
            return set()
        if t == "pointer_expression":
            op = u.text(node.child_by_field_name("operator"))
            arg = node.child_by_field_name("argument")
            if op == "&":
                return self.lvalue_bases(arg, _depth + 1)
            return set()  # *p is a value (unless p is a pointer to pointer: ignored)
        if t == "cast_expression":
            inner = self.bases(node.child_by_field_name("value"), _depth + 1)
            ty = node.child_by_field_name("type")
            if inner and ty is not None and "const" not in u.text(ty) and _pointer_type(u, ty):
                self.const_dropped |= inner
            return inner
        if t == "call_expression":
            name, kind = _call_name(u, node)
            args = node.child_by_field_name("arguments")
            argl = [a for a in args.named_children if a.type != "comment"] if args else []
            if kind == "template" and name in ("reinterpret_cast", "static_cast", "const_cast") \
                    and len(argl) == 1:
                inner = self.bases(argl[0], _depth + 1)
                targs = node.child_by_field_name("function").child_by_field_name("arguments")
                if inner and (name == "const_cast" or (
                        targs is not None and _pointer_type(u, targs)
                        and "const" not in u.text(targs))):
                    self.const_dropped |= inner
                return inner
            if name in ("__ldg", "__ldcs", "__ldca", "__ldcg", "__ldlu", "__ldcv"):
                return set()
            return set()
        if t == "conditional_expression":
            return self.bases(node.child_by_field_name("consequence"), _depth + 1) | \
                self.bases(node.child_by_field_name("alternative"), _depth + 1)
        if t == "subscript_expression":
            return set()  # an element value (pointer arrays are not followed)
        if t == "comma_expression":
            return self.bases(node.child_by_field_name("right"), _depth + 1)
        if t == "assignment_expression":
            return self.bases(node.child_by_field_name("right"), _depth + 1)
        return set()

    def lvalue_bases(self, node: "Node | None", _depth: int = 0) -> set[str]:
        """The parameters an lvalue (``x[i]``, ``*p``, ``p->f``, ``x[i].a``) lives in."""
        if node is None or _depth > 30:
            return set()
        node = _strip_parens(node)
        t = node.type
        u = self.unit
        if t == "subscript_expression":
            arg = node.child_by_field_name("argument")
            a = _strip_parens(arg)
            if a is not None and a.type == "subscript_expression":
                return self.lvalue_bases(a, _depth + 1) | self.bases(a, _depth + 1)
            return self.bases(arg, _depth + 1)
        if t == "pointer_expression" and u.text(node.child_by_field_name("operator")) == "*":
            return self.bases(node.child_by_field_name("argument"), _depth + 1)
        if t == "field_expression":
            op = node.child_by_field_name("operator")
            arg = node.child_by_field_name("argument")
            if op is not None and u.text(op) == "->":
                return self.bases(arg, _depth + 1)
            return self.lvalue_bases(arg, _depth + 1)
        return set()

    def _compute(self) -> None:
        u = self.unit
        # pointer variables and their sources: declarations and assignments
        flows: list[tuple[str, "Node"]] = []
        self.local_ptrs: set[str] = set()
        for n in u.walk(self.fn):
            if n.type == "declaration":
                for top, ident, value in _declarators(u, n):
                    name = u.text(ident)
                    if value is not None:
                        flows.append((name, value))
            elif n.type == "assignment_expression":
                left = _strip_parens(n.child_by_field_name("left"))
                if left is not None and left.type == "identifier":
                    flows.append((u.text(left), n.child_by_field_name("right")))
        changed = True
        rounds = 0
        while changed and rounds < 20:
            changed = False
            rounds += 1
            for name, value in flows:
                b = self.bases(value)
                if not b:
                    continue
                cur = self.points.setdefault(name, set())
                if not b <= cur:
                    cur |= b
                    changed = True


def written_positions(unit: "Unit", callee: "Function", active: set) -> dict[int, bool | None]:
    """For a device function: parameter position -> written (True/False/None)."""
    key = callee.node.id
    c = _cache(unit).setdefault("written_positions", {})
    if key in c:
        return c[key]
    if key in active:
        return {}
    active.add(key)
    try:
        res = {}
        pps = {pp.name: pp for pp in _pointer_params(unit, callee, active)}
        for i, p in enumerate(callee.params):
            if p.name in pps:
                res[i] = pps[p.name].written
            elif p.reference and not p.const:
                res[i] = True
        c[key] = res
        return res
    finally:
        active.discard(key)


def _pointer_params(unit: "Unit", fn: "Function", active: set) -> list[PointerParam]:
    params = [p for p in fn.params if p.name and (p.pointer > 0 or p.array)]
    if not params:
        return []
    names = [p.name for p in params]
    al = _Aliases(unit, fn.node, names)
    writes: dict[str, list] = {n: [] for n in names}
    escapes: dict[str, list] = {n: [] for n in names}
    info = _unit_info(unit)

    def add(target: dict, bases: set, node):
        for b in bases:
            if b in target:
                target[b].append(node)

    for n in unit.walk(fn.node):
        t = n.type
        if t == "assignment_expression":
            left = n.child_by_field_name("left")
            add(writes, al.lvalue_bases(left), n)
            # a pointer stored anywhere but a local variable escapes
            lt = _strip_parens(left)
            rb = al.bases(n.child_by_field_name("right"))
            if rb and lt is not None and (lt.type != "identifier" or
                                          not _private_local(unit, lt)):
                add(escapes, rb, n)
        elif t == "update_expression":
            add(writes, al.lvalue_bases(n.child_by_field_name("argument")), n)
        elif t == "call_expression":
            name, kind = _call_name(unit, n)
            args = n.child_by_field_name("arguments")
            argl = [a for a in args.named_children if a.type != "comment"] if args else []
            if kind == "template" and name in ("reinterpret_cast", "static_cast", "const_cast",
                                                "bit_cast"):
                continue
            base_name = name.split("_block")[0].split("_system")[0]
            if base_name in ATOMICS or name in STORES or name.startswith("atomic"):
                if argl:
                    add(writes, al.bases(argl[0]), n)
                continue  # the other arguments are values or read-only sources
            if name in OUT_PARAMS:
                for i in OUT_PARAMS[name]:
                    if i < len(argl):
                        add(writes, al.bases(argl[i]), n)
                continue
            callees = info.functions.get(name, ()) if kind in ("identifier", "template",
                                                                "qualified") else ()
            if callees:
                for i, a in enumerate(argl):
                    b = al.bases(a) | al.lvalue_bases(a)
                    if not b:
                        continue
                    verdicts = [written_positions(unit, c, active).get(i, False)
                                for c in callees]
                    if any(v is True for v in verdicts):
                        add(writes, b, n)
                    elif any(v is None for v in verdicts):
                        add(escapes, b, n)
                continue
            if is_builtin_call(unit, n):
                continue
            for a in argl:
                b = al.bases(a)
                lb = al.lvalue_bases(a)
                add(escapes, b | lb, n)
        elif t == "return_statement":
            for c in n.named_children:
                add(escapes, al.bases(c), n)
        elif t == "lambda_expression":
            body = n.child_by_field_name("body")
            used = {unit.text(x) for x in unit.walk(body)} if body is not None else set()
            for p in names:
                for var, bs in al.points.items():
                    if p in bs and var in used:
                        escapes[p].append(n)
                        break
        elif t == "initializer_list":
            for c in n.named_children:
                add(escapes, al.bases(c), n)

    out = []
    for p in params:
        w, e = writes[p.name], escapes[p.name]
        const_ro = p.const and p.name not in al.const_dropped
        if w:
            written, reason = True, f"written at line {unit.line_col(w[0].start_byte)[0]}: " \
                                    f"`{_norm(unit.text(w[0]))[:60]}`"
        elif const_ro:
            written, reason = False, "const pointee, never cast to a non-const pointer"
        elif e:
            written, reason = None, f"escapes at line {unit.line_col(e[0].start_byte)[0]}: " \
                                    f"`{_norm(unit.text(e[0]))[:60]}`"
        else:
            written, reason = False, "only read"
        out.append(PointerParam(p.name, p, p.const, p.restrict, written, tuple(w), tuple(e),
                                reason))
    return out


def _private_local(unit: "Unit", ident: "Node") -> bool:
    """A variable of this thread: a local or parameter, not ``__shared__``/``static``."""
    b = _resolve(unit, ident, unit.text(ident))
    if b.kind == "param":
        return True
    if b.kind != "local" or b.decl is None:
        return False
    return not any(c.type in ("type_qualifier", "storage_class_specifier") and
                   unit.text(c) in ("__shared__", "static") for c in b.decl.children)


def pointer_params(unit: "Unit", fn: "Function") -> list[PointerParam]:
    """Each pointer (or array) parameter of ``fn`` and whether ``fn`` writes through it."""
    try:
        return _pointer_params(unit, fn, set())
    except RecursionError:  # pragma: no cover - defensive
        return [PointerParam(p.name, p, p.const, p.restrict, None, reason="too deep to analyse")
                for p in fn.params if p.name and p.pointer > 0]


def _pointee(p: "Param") -> str:
    base = p.base_type
    for q in ("const", "volatile", "__restrict__", "struct"):
        base = base.replace(q, " ")
    return _norm(base)


def may_alias(unit: "Unit", fn: "Function", a: str, b: str) -> Verdict:
    """Whether parameters ``a`` and ``b`` may point into the same memory.

    Aliasing is a property of the call site, so most answers are *unknown*. Decided
    statically: the same name (holds); a non-pointer among them (fails); a ``__restrict__``
    parameter (fails: the declaration promises no overlap); pointees of different known
    sizes, neither a character type (fails: strict aliasing forbids accessing one object
    as both).
    """
    from kltrans.analysis.smem import type_size

    params = {p.name: p for p in fn.params if p.name}
    if a == b:
        return Verdict.yes(f"{a} and {b} are the same parameter")
    for n in (a, b):
        if n not in params:
            return Verdict.unknown(f"{fn.name} has no parameter {n}")
        p = params[n]
        if p.pointer == 0 and not p.array:
            return Verdict.no(f"{n} is not a pointer")
    pa, pb = params[a], params[b]
    for p in (pa, pb):
        if p.restrict:
            return Verdict.no(f"{p.name} is __restrict__: the kernel's declaration promises no "
                              "overlap")
    ta, tb = _pointee(pa), _pointee(pb)
    if ta != tb and pa.pointer == pb.pointer == 1 and ta not in _CHAR_TYPES and tb not in _CHAR_TYPES:
        sa, sb = type_size(unit, ta), type_size(unit, tb)
        if sa is not None and sb is not None and sa != sb:
            return Verdict.no(f"{a} points to {ta} ({sa} bytes) and {b} to {tb} ({sb} bytes): "
                              "strict aliasing rules out overlapping objects")
    wa = {pp.name: pp.written for pp in pointer_params(unit, fn)}
    note = ""
    if wa.get(a) is False and wa.get(b) is False:
        note = "; neither is written, so overlap would be harmless"
    return Verdict.unknown(f"aliasing of {a} and {b} is a property of the call site{note}")


_Aliases = Aliases  # the name the package's own modules use
