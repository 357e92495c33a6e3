"""The element-wise guard: the form ``grid-stride``, ``coarsen``, ``vectorize-access`` and
other passes start from, read once here::

    // kltrans: launch K grid=ceil_div(n, 256) block=256
    __global__ void K(...) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) BODY            // BODY handles element i, and only element i
    }

:data:`GUARD` anchors it; :func:`guarded` reads a site; :func:`index_decl` finds the
index's declaration; the preconditions every such pass shares are
:data:`GUARD_PRECONDITIONS` (bound-check, global-index, sole-work, element-private,
no-early-exit, no-barrier, index-type, launch-contract). :func:`int_width` and
:func:`bound_width` give integer widths; :data:`GLOBAL_INDEX` and :data:`GRID_SIZE` are the
global index and the grid's thread count as affine forms.

Layering: the engine (:mod:`kltrans.passes`) over :mod:`kltrans.analysis`,
:mod:`kltrans.match` and :mod:`kltrans.syntax`; passes import it, never each other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kltrans.analysis.affine import BLOCK_SYMBOLS, THREAD_SYMBOLS, Affine, affine_of, sources
from kltrans.analysis.barriers import barrier_calls, barriers
from kltrans.analysis.loops import assigned_in
from kltrans.analysis.verdict import Verdict
from kltrans.analysis.warps import warp_primitives
from kltrans.match import Rule
from kltrans.match.predicates import pure
from kltrans.passes.facts import Precondition
from kltrans.passes.rewrite import (contract_of, declarator_ident as _declarator_ident,
                                    declared_names, inside, norm, statements)

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.passes.base import Site

GRID_SIZE = Affine.sym("blockDim.x") * Affine.sym("gridDim.x")
GLOBAL_INDEX = Affine.sym("blockIdx.x") * Affine.sym("blockDim.x") + Affine.sym("threadIdx.x")
GRID_SYMBOLS = frozenset(f"gridDim.{c}" for c in "xyz")
PER_THREAD = THREAD_SYMBOLS | BLOCK_SYMBOLS | GRID_SYMBOLS
_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")

#: ``if (i < n) BODY`` (the form the passes rewrite) or ``if (i >= n) return;`` (an early
#: exit: anchored so that ``bound-check`` can say why it is refused).
GUARD = Rule(any=(Rule(pattern="if ($I < $N) $BODY;"),
                  Rule(pattern="if ($I >= $N) return;")),
             inside_kernel=True, constraints={"I": {"kind": "identifier"}})


@dataclass(frozen=True)
class Guarded:
    """The guarded statement at a site of :data:`GUARD`."""

    stmt: "Node"  # the if statement
    cond: "Node"  # its condition_clause, parentheses included
    index: str
    bound: "Node"
    body: "Node | None"  # None for the early-exit form

    @property
    def exit(self) -> bool:
        return self.body is None


def guarded(site: "Site") -> Guarded:
    node = site.node
    b = site.match.bindings
    return Guarded(node, node.child_by_field_name("condition"), site.text("I"), b["N"],
                   b.get("BODY"))


@dataclass(frozen=True)
class IndexDecl:
    """``[const] T i = E;`` — the declaration of the index variable in the kernel body."""

    decl: "Node"
    value: "Node"
    type_text: str  # T (the declaration's type, const dropped)
    const: "Node | None"  # the leading const qualifier, when there is one


def index_decl(unit, fn, name: str) -> "IndexDecl | str":
    """The declaration of ``name`` among the kernel body's statements, or why there is none."""
    body = fn.body
    found = None
    for s in statements(body):
        if s.type != "declaration":
            continue
        decls = s.children_by_field_name("declarator")
        for d in decls:
            ident = _declarator_ident(d)
            if ident is not None and unit.text(ident) == name:
                if len(decls) != 1:
                    return (f"{name} is declared together with other variables: "
                            f"`{norm(unit.text(s))}`")
                if d.type != "init_declarator" or _declarator_ident(d).parent.id != d.id:
                    return f"`{norm(unit.text(s))}` does not give {name} a plain initial value"
                found = (s, d.child_by_field_name("value"))
    if found is None:
        return f"{name} is not declared by a statement of {fn.name}'s body"
    s, value = found
    others = [n for n, _ in declared_names(unit, fn.node) if n == name]
    if len(others) != 1:
        return f"{name} is declared {len(others)} times in {fn.name}"
    const = None
    ty = s.child_by_field_name("type")
    dcl = s.child_by_field_name("declarator")
    for c in s.children:
        if c.id in (ty.id, dcl.id) or c.type == ";":
            continue
        if c.type == "type_qualifier" and unit.text(c) == "const" and c.start_byte < ty.start_byte:
            const = c
            continue
        return f"`{norm(unit.text(s))}`: only `[const] T {name} = ...;` is supported"
    return IndexDecl(s, value, norm(unit.text(ty)), const)


def builtin(unit, node) -> str | None:
    """``threadIdx.x`` for a field expression naming a CUDA builtin, else None."""
    if node.type != "field_expression":
        return None
    text = unit.text(node).replace(" ", "")
    m = re.fullmatch(r"(threadIdx|blockIdx|blockDim|gridDim)\.([xyz])", text)
    return text if m else None


# ------------------------------------------------------------------- contract
# -------------------------------------------------------------- preconditions
def check_bound(site, ctx) -> Verdict:
    g = guarded(site)
    unit = site.unit
    n = norm(unit.text(g.bound))
    if g.exit:
        return Verdict.no(f"the guard is an early exit `if ({g.index} >= {n}) return;`: the "
                          f"rewrite needs the element-wise body under `if ({g.index} < {n})`")
    if not pure(unit, g.bound):
        return Verdict.no(f"the bound `{n}` has side effects: it would be evaluated again")
    dep = sources(unit, g.bound) & (PER_THREAD | {"?"})
    if dep:
        return Verdict.no(f"the bound `{n}` depends on {', '.join(sorted(dep))}: it must be the "
                          "same for every thread")
    for m in unit.walk(g.bound):
        if m.type == "identifier" and assigned_in(unit, g.body, unit.text(m)):
            return Verdict.no(f"the body assigns `{unit.text(m)}`, part of the bound `{n}`")
    return Verdict.yes(f"`if ({g.index} < {n})` guards the element-wise body")


def check_global_index(site, ctx) -> Verdict:
    g = guarded(site)
    unit, fn = site.unit, site.function
    d = index_decl(unit, fn, g.index)
    if isinstance(d, str):
        return Verdict.no(d)
    if assigned_in(unit, fn.body, g.index):
        return Verdict.no(f"{g.index} is assigned after its declaration: it is not the plain "
                          "global index")
    e = norm(unit.text(d.value))
    a = affine_of(unit, d.value)
    if a is None or a != GLOBAL_INDEX:
        what = f" (it is {a})" if a is not None else ""
        return Verdict.no(f"`{g.index} = {e}` is not the global thread index "
                          f"blockIdx.x * blockDim.x + threadIdx.x{what}")
    return Verdict.yes(f"`{g.index} = {e}` is the global thread index")


def _thread_dependent(unit, node) -> frozenset:
    return frozenset(s for s in sources(unit, node) if s in PER_THREAD or s == "?")


def check_sole_work(site, ctx) -> Verdict:
    g = guarded(site)
    unit, fn = site.unit, site.function
    body = fn.body
    if g.stmt.parent is None or g.stmt.parent.id != body.id:
        return Verdict.no(f"the guarded statement is nested in a "
                          f"{g.stmt.parent.type.replace('_', ' ')}: it must be a statement of "
                          f"{fn.name}'s body")
    d = index_decl(unit, fn, g.index)
    for s in statements(body):
        if s.id == g.stmt.id or (not isinstance(d, str) and s.id == d.decl.id):
            continue
        line = unit.line_col(s.start_byte)[0]
        what = f"line {line}: `{norm(unit.text(s))[:60]}`"
        if s.type != "declaration":
            return Verdict.no(f"{what} runs outside the guarded statement; with fewer threads "
                              f"(or several elements per thread) it would run a different number "
                              f"of times")
        if not pure(unit, s):
            return Verdict.no(f"{what} has side effects outside the guarded statement")
    return Verdict.yes(f"{fn.name} computes the index and runs the guarded statement, nothing else")


def check_element_private(site, ctx) -> Verdict:
    g = guarded(site)
    unit = site.unit
    own = {name for name, _ in declared_names(unit, g.body)}
    if g.index in own:
        return Verdict.no(f"the body declares its own {g.index}")
    for n in unit.walk(g.body):
        b = builtin(unit, n)
        if b is not None and b in PER_THREAD:
            return Verdict.no(f"the body reads {b} (line {unit.line_col(n.start_byte)[0]}): once "
                              f"a thread handles other elements, only {g.index} may say which "
                              "element it works on")
        if n.type != "identifier":
            continue
        name = unit.text(n)
        p = n.parent
        if name == g.index or name in own or \
                (p is not None and p.type == "call_expression" and
                 p.child_by_field_name("function") is not None and
                 p.child_by_field_name("function").id == n.id):
            continue
        dep = _thread_dependent(unit, n)
        if "?" in dep:
            return Verdict.unknown(f"cannot tell whether `{name}` depends on the thread")
        if dep:
            return Verdict.no(f"the body reads `{name}`, which depends on "
                              f"{', '.join(sorted(dep))} other than through {g.index}")
    return Verdict.yes(f"the body depends on the thread only through {g.index}")


def check_no_early_exit(site, ctx) -> Verdict:
    g = guarded(site)
    unit = site.unit
    for n in unit.walk(g.body):
        line = unit.line_col(n.start_byte)[0]
        if n.type in ("return_statement", "goto_statement"):
            kw = n.type.replace("_statement", "")
            return Verdict.no(f"the body has a {kw} (line {line}): the thread would leave before "
                              "its other elements")
        if n.type in ("break_statement", "continue_statement"):
            p = n.parent
            target = None
            while p is not None and p.id != g.body.id:
                if p.type in _LOOPS or (p.type == "switch_statement" and
                                        n.type == "break_statement"):
                    target = p
                    break
                p = p.parent
            if target is None:
                kw = n.type.replace("_statement", "")
                return Verdict.no(f"the body has a {kw} that leaves it (line {line})")
    return Verdict.yes("no return, goto, break or continue leaves the body")


def check_no_barrier(site, ctx) -> Verdict:
    g = guarded(site)
    unit, fn = site.unit, site.function
    for b in barriers(unit, fn):
        if inside(b.node, g.body):
            return Verdict.no(f"{b.kind} at line {b.line} inside the body: the rewrite changes how "
                              "many times each thread reaches it (a deadlock on the last, ragged "
                              "elements)")
    for call, why in barrier_calls(unit, fn):
        if inside(call, g.body):
            return Verdict.no(f"line {unit.line_col(call.start_byte)[0]}: {why}: the rewrite "
                              "changes how many times each thread reaches it")
    for w in warp_primitives(unit, fn):
        if inside(w.node, g.body):
            return Verdict.no(f"warp primitive {w.name} at line {w.line} inside the body: the "
                              "lanes of a warp would no longer run it together")
    return Verdict.yes("no barrier or warp primitive in the body")


_INT32 = {"int", "unsigned", "unsigned int", "signed", "signed int", "int32_t", "uint32_t",
          "short", "unsigned short", "int16_t", "uint16_t"}
_INT64 = {"long", "long int", "long long", "long long int", "unsigned long", "unsigned long int",
          "unsigned long long", "unsigned long long int", "size_t", "ssize_t", "ptrdiff_t",
          "int64_t", "uint64_t", "intptr_t", "uintptr_t", "index_t"}


def int_width(type_text: str) -> int | None:
    t = norm(type_text.replace("const", "").replace("std::", ""))
    if t in _INT32:
        return 32
    if t in _INT64:
        return 64
    return None


def bound_width(site, bound) -> tuple[int, str]:
    """(bits, type) of the bound: the widest kernel parameter or template value it names."""
    unit, fn = site.unit, site.function
    params = {p.name: p for p in fn.params if p.name}
    tparams = {t.name: t for t in fn.template_params if t.name and t.kind == "value"}
    best = (32, "int")
    for n in unit.walk(bound):
        if n.type != "identifier":
            continue
        name = unit.text(n)
        ty = None
        if name in params and not params[name].pointer:
            ty = params[name].base_type
        elif name in tparams:
            ty = tparams[name].type
        w = int_width(ty) if ty else None
        if w is not None and w > best[0]:
            best = (w, ty)
    return best


def check_index_type(site, ctx) -> Verdict:
    g = guarded(site)
    d = index_decl(site.unit, site.function, g.index)
    if isinstance(d, str):
        return Verdict.unknown(d)
    n = norm(site.unit.text(g.bound))
    if d.type_text == "auto":
        wi, ti = 32, "auto (unsigned int, from the builtins)"
    else:
        wi, ti = int_width(d.type_text), d.type_text
    if wi is None:
        return Verdict.no(f"{g.index} is a {d.type_text}, not an integer type the pass knows")
    wn, tn = bound_width(site, g.bound)
    if wi < wn:
        return Verdict.no(f"{g.index} is {ti} ({wi}-bit) but the bound {n} is {tn} ({wn}-bit): "
                          f"the new index arithmetic would overflow before reaching {n}")
    return Verdict.yes(f"{g.index} is {ti}, as wide as the bound {n} ({tn})")


def check_contract(site, ctx) -> Verdict:
    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    return Verdict.yes(f"launch header: grid={c.grid[0]} block={c.block[0]}")


GUARD_PRECONDITIONS = (
    Precondition("bound-check", "pipeline",
                 "the element-wise body is guarded by `if (i < n)` with a thread-uniform bound "
                 "the body does not change", check_bound),
    Precondition("global-index", "layout",
                 "i is declared once, as the plain global index blockIdx.x * blockDim.x + "
                 "threadIdx.x, and never assigned", check_global_index),
    Precondition("sole-work", "pipeline",
                 "the kernel does nothing but the guarded statement and declarations without "
                 "side effects", check_sole_work),
    Precondition("element-private", "layout",
                 "the body depends on the thread only through i (no other threadIdx, blockIdx, "
                 "gridDim)", check_element_private),
    Precondition("no-early-exit", "pipeline",
                 "no return, goto, break or continue leaves the body", check_no_early_exit),
    Precondition("no-barrier", "pipeline",
                 "no barrier or warp primitive in the body (threads would reach it a different "
                 "number of times)", check_no_barrier),
    Precondition("index-type", "dtype",
                 "i is an integer type at least as wide as the bound", check_index_type),
    Precondition("launch-contract", "hardware",
                 "the kernel has a 1-D `// kltrans: launch` header line the pass can rewrite",
                 check_contract),
)
