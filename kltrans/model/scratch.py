"""Shared arrays a thread uses as its own cache: every thread reads back only what it stored.

A row kernel that sweeps its row several times may keep what the first sweep read in
shared memory and read it from there in the later sweeps, each thread touching only the
elements it stored itself (no barrier needed between the sweeps)::

    for (int j = tid; j < cols; j += blockDim.x) {      // sweep 1
        const float v = row[j];
        cache[j] = v;
        m = fmaxf(m, v);
    }
    ...
    for (int j = tid; j < cols; j += blockDim.x) {      // sweep 2
        const float e = expf(cache[j] - m);
        cache[j] = e;                                   // updated in place
        s += e;
    }
    ...
    for (int j = tid; j < cols; j += blockDim.x)        // sweep 3
        out[j] = cache[j] / s;

:func:`private_cache` reads a shared array as such a :class:`PrivateCache` when every
access ``S[i]`` of it (through any view: a static array, an ``extern __shared__`` buffer
reached through a cast pointer) indexes by the variable of its innermost loop, and those
loops are block- or grid-stride loops with one iteration space per thread (the same start,
step and bound, in any spelling, :mod:`kltrans.model.loops`) that start at the thread's
linear index (or its x index in a 1-D block): the element sets of two threads of a block
never meet, so a thread's read sees its own last store. Stores are plain
``S[i] = E;`` statements run by every iteration (directly in the loop's body); the first
access is a store; no access is an update or an atomic.

:func:`cached_values` writes each read as the value its thread stored, in the reading
loop's variable: the store's ``E`` with the loop's own locals written out (their
initializers) and earlier reads of the cache replaced in turn, so the three sweeps above
read ``row[j]``, then ``expf(row[j] - m)``. A value may read only names that no statement
from its store's loop to the read assigns (or passes to a reference parameter of a
function of the unit), and memory the kernel never writes (or, for
global memory, that the facts say no written pointer overlaps); calls must be free of
effects. That the rewritten kernel does the same is for the block machine to check.

Layering: :mod:`kltrans.model.accesses`, :mod:`kltrans.model.loops`, the public names of
:mod:`kltrans.analysis`, :mod:`kltrans.match.predicates`, :mod:`kltrans.syntax`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from kltrans.analysis import Affine, loop_of
from kltrans.analysis.affine import LOOP_NODE_TYPES, strip_parens
from kltrans.match.predicates import pure
from kltrans.model.accesses import accesses, typedefs
from kltrans.model.launch import block_dim
from kltrans.model.loops import loop_fact
from kltrans.syntax.contract import contracts

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.analysis import Loop
    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

#: loops whose iterations two threads of one block never share
PRIVATE_KINDS = ("block-stride", "grid-stride")
_MARK = "\x00"   # the loop variable in a value, until a reading loop names it


@dataclass(frozen=True)
class Use:
    """One access of the cache: ``node`` (the subscript), ``mode`` (read or write), the
    ``loop`` it indexes by and ``stmt``, the statement of the loop's body holding it."""

    node: "Node" = field(repr=False)
    mode: str
    loop: "Loop" = field(repr=False)
    stmt: "Node" = field(repr=False)


@dataclass(frozen=True)
class PrivateCache:
    """A shared array each thread uses as its own cache (module doc)."""

    base: str                  # as :func:`accesses` names it (the array or extern buffer)
    view: str                  # the type an element is moved as
    uses: tuple                # every :class:`Use`, in program order
    loops: tuple = field(repr=False)   # the loops' nodes, in program order


def _innermost_loop(node: "Node") -> "Node | None":
    p = node.parent
    while p is not None and p.type not in ("function_definition", "lambda_expression"):
        if p.type in LOOP_NODE_TYPES:
            return p
        p = p.parent
    return None


def _body_statement(node: "Node", loop: "Loop") -> "Node | None":
    """The statement directly in ``loop``'s body that holds ``node``."""
    body = loop.body
    if body is None:
        return None
    if body.type != "compound_statement":
        return body
    c = node
    while c.parent is not None and c.parent.id != body.id:
        c = c.parent
    return c if c.parent is not None else None


def _store_target(unit: "Unit", stmt: "Node") -> "tuple[Node, Node] | None":
    """(left, right) of a plain store statement ``L = R;``."""
    if stmt.type != "expression_statement" or not stmt.named_children:
        return None
    e = stmt.named_children[0]
    if e.type != "assignment_expression" or unit.text(e.child_by_field_name("operator")) != "=":
        return None
    return strip_parens(e.child_by_field_name("left")), e.child_by_field_name("right")


def private_cache(unit: "Unit", fn: "Function", base: str) -> "PrivateCache | str":
    """The shared array ``base`` of ``fn`` as a :class:`PrivateCache`, or why it is not."""
    accs = [a for a in accesses(unit, fn) if a.space == "shared" and a.base == base]
    if not accs:
        return f"{base} is not accessed in {fn.name} itself"
    uses, key = [], None
    for a in accs:
        what = f"`{unit.text(a.node)}` (line {a.line})"
        if a.mode not in ("read", "write"):
            return f"{what} is a {a.mode} access"
        ln = _innermost_loop(a.node)
        lp = loop_of(unit, ln) if ln is not None else None
        fact = loop_fact(unit, ln) if ln is not None else None
        if lp is None or fact is None or lp.var is None:
            return f"{what} is not indexed by a loop's variable"
        if fact.kind not in PRIVATE_KINDS:
            return (f"{what} is in a {fact.kind} loop: threads of a block may reach the "
                    f"same element")
        if fact.start is not None and fact.start.dim != "linear" and not _one_d(unit, fn):
            return (f"{what}: its loop starts at the {fact.start.dim} index of a block that "
                    f"is not 1-D (or has no launch): threads may share an element")
        width = a.width or 1
        if a.index is None or a.index != Affine.sym(lp.var) * width:
            return f"{what}: the index is not the loop variable {lp.var}"
        k = (fact.kind, fact.start, fact.step, lp.cond_op, lp.bound, a.view, width)
        if key is not None and k != key:
            return f"{what}: its loop does not run over the same elements as the first's"
        key = k
        stmt = _body_statement(a.node, lp)
        if stmt is None:
            return f"{what} is not in a statement of its loop's body"
        if a.mode == "write":
            st = _store_target(unit, stmt)
            if st is None or st[0].id != a.node.id:
                return f"{what} is stored otherwise than by a statement `S[i] = E;` of the loop"
        uses.append(Use(a.node, a.mode, lp, stmt))
    uses.sort(key=lambda u: u.node.start_byte)
    if uses[0].mode != "write":
        return f"`{unit.text(uses[0].node)}` (line {unit.line_col(uses[0].node.start_byte)[0]}) " \
               f"reads {base} before any store"
    loops = []
    for u in uses:
        if not loops or loops[-1].id != u.loop.node.id:
            loops.append(u.loop.node)
    parents = {n.parent.id for n in loops if n.parent is not None}
    if len({n.id for n in loops}) != len(loops) or len(parents) != 1:
        return f"the loops that access {base} are not one after another in one block"
    return PrivateCache(base, key[5] or "", tuple(uses), tuple(loops))


def _one_d(unit: "Unit", fn: "Function") -> bool:
    """Whether the launch contract gives ``fn`` a block of one dimension."""
    c = contracts(unit).get(fn.name)
    return c is not None and all(block_dim(c, k).value == 1 for k in (1, 2))


def private_caches(unit: "Unit", fn: "Function") -> dict:
    """``{base: PrivateCache or why not}`` for every shared array ``fn`` accesses."""
    def find(u):
        bases = sorted({a.base for a in accesses(u, fn) if a.space == "shared" and a.base})
        return {b: private_cache(u, fn, b) for b in bases}
    return unit.memo(f"scratch.caches.{fn.name}.{fn.node.start_byte}", find)


def _assigned(unit: "Unit", fn: "Function", names: dict, end: int) -> str | None:
    """A name of ``names`` (``{name: offset}``) assigned or incremented between its
    offset and ``end``, or passed there to a reference parameter of a function of the
    unit (which may assign it)."""
    refs = _reference_params(unit)
    for n in unit.walk(fn.body):
        if n.start_byte >= end:
            continue
        if n.type in ("assignment_expression", "update_expression"):
            t = strip_parens(n.child_by_field_name("left") or n.child_by_field_name("argument"))
            if t is not None and t.type == "identifier" and \
                    names.get(unit.text(t), end) < n.end_byte:
                return unit.text(t)
        elif n.type == "call_expression":
            f, args = n.child_by_field_name("function"), n.child_by_field_name("arguments")
            ks = refs.get(unit.text(f) if f is not None else "", ())
            given = [a for a in args.named_children if a.type != "comment"] if args else []
            for k in ks:
                t = strip_parens(given[k]) if k < len(given) else None
                if t is not None and t.type == "identifier" and \
                        names.get(unit.text(t), end) < n.end_byte:
                    return unit.text(t)
    return None


def _reference_params(unit: "Unit") -> dict:
    """``{function: positions of its reference parameters}`` for the unit's functions."""
    def find(u):
        out: dict = {}
        for f in u.device_functions():
            ks = tuple(i for i, p in enumerate(f.params) if p.reference)
            if ks:
                out[f.name] = tuple(sorted(set(out.get(f.name, ())) | set(ks)))
        return out
    return unit.memo("scratch.reference_params", find)


@dataclass
class _Value:
    """A cached element's value as text (the loop variable marked), the names it reads
    (each with the offset from which it must keep its value) and the memory it reads."""

    text: str
    names: dict
    bases: set


#: float functions whose result is a float whatever their operands
_FLOAT_CALLS = {"expf", "__expf", "exp2f", "logf", "__logf", "sqrtf", "rsqrtf", "fmaxf",
                "fminf", "fabsf", "tanhf", "__fdividef", "powf", "__powf", "erff", "sinf",
                "cosf", "__sinf", "__cosf", "__frcp_rn", "fmaf", "__fmaf_rn"}


def _resolve(unit: "Unit", ty: str | None) -> str | None:
    if ty is None:
        return None
    ty = " ".join(w for w in ty.split() if w not in ("const", "volatile", "__restrict__"))
    td = typedefs(unit)
    seen = 0
    while ty in td and td[ty][1] == 0 and seen < 8:
        ty, seen = td[ty][0], seen + 1
    return ty


def _type_of(unit: "Unit", fn: "Function", node: "Node", views: dict, loc: dict) -> str | None:
    """The type of expression ``node`` where plainly known: a memory read (its view), a
    declared local or parameter, a float math call, arithmetic of operands of one type."""
    node = strip_parens(node)
    if node.id in views:
        return _resolve(unit, views[node.id])
    if node.type == "identifier":
        t = unit.text(node)
        if t in loc:
            return _resolve(unit, loc[t][0])
        p = next((p for p in fn.params if p.name == t and not p.pointer), None)
        return _resolve(unit, p.base_type) if p is not None else None
    if node.type == "number_literal":
        t = unit.text(node).lower()
        return "float" if t.endswith("f") and not t.startswith("0x") else \
            "double" if "." in t or "e" in t else "int"
    if node.type == "call_expression":
        f = node.child_by_field_name("function")
        return "float" if f is not None and unit.text(f) in _FLOAT_CALLS else None
    if node.type in ("binary_expression", "unary_expression"):
        kinds = {_type_of(unit, fn, c, views, loc) for c in node.named_children}
        floats = kinds - {"int"}
        return floats.pop() if len(floats) == 1 and None not in kinds else \
            "int" if kinds == {"int"} else None
    return None


def _locals(unit: "Unit", loop: "Loop", before: int) -> dict:
    """``{name: (type, initializer)}`` of the single-declarator declarations directly in
    the loop's body before offset ``before``; a name declared twice maps to None."""
    out: dict = {}
    body = loop.body
    if body is None or body.type != "compound_statement":
        return out
    for s in body.named_children:
        if s.start_byte >= before or s.type != "declaration":
            continue
        ds = s.children_by_field_name("declarator")
        ty = unit.text(s.child_by_field_name("type"))
        for d in ds:
            name = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            while name is not None and name.type != "identifier":
                name = name.child_by_field_name("declarator")
            if name is None:
                continue
            value = d.child_by_field_name("value") if d.type == "init_declarator" else None
            key = unit.text(name)
            out[key] = None if key in out or len(ds) != 1 or value is None or \
                d.child_by_field_name("declarator").type != "identifier" else (ty, value)
    return out


def _render(unit, fn, node, loop, before, reads, views, want, seen=()) -> "_Value | str":
    """``node`` as a value text of type ``want`` (a cast where its own type is not plainly
    ``want``): the loop variable marked, the loop's locals written out (each as the
    value of its declared type), reads of the cache given by ``reads`` (``{node id:
    _Value}``)."""
    if not pure(unit, node):
        return f"`{unit.text(node)}` has an effect"
    loc = _locals(unit, loop, before)
    names: dict = {}
    bases: set = set()
    parts = []

    def take(v):
        for k, at in v.names.items():
            names[k] = min(at, names.get(k, at))
        bases.update(v.bases)

    def visit(n):
        if n.id in reads:
            v = reads[n.id]
            take(v)
            parts.append((n.start_byte, n.end_byte, operand(v.text)))
            return None
        if n.id in views:
            bases.add(views[n.id][1])
        if n.type == "identifier":
            t = unit.text(n)
            if t == loop.var:
                parts.append((n.start_byte, n.end_byte, _MARK))
            elif t in loc:
                if loc[t] is None or t in seen or _assigned(
                        unit, fn, {t: loop.node.start_byte}, loop.node.end_byte):
                    return f"{t} is a local of the loop that is not one fixed value"
                ty, init = loc[t]
                v = _render(unit, fn, init, loop, before, reads, views, ty, seen + (t,))
                if isinstance(v, str):
                    return v
                take(v)
                parts.append((n.start_byte, n.end_byte, operand(v.text)))
            else:
                names[t] = min(loop.node.start_byte, names.get(t, loop.node.start_byte))
            return None
        for c in n.children:
            why = visit(c)
            if why:
                return why
        return None

    why = visit(node)
    if why:
        return why
    text = unit.text(node)
    for s, e, new in sorted(parts, reverse=True):
        text = text[:s - node.start_byte] + new + text[e - node.start_byte:]
    text = " ".join(text.split())
    have = _type_of(unit, fn, node, {k: v[0] for k, v in views.items()},
                    {k: v for k, v in loc.items() if v is not None})
    if want is not None and _resolve(unit, want) != have:
        text = f"static_cast<{' '.join(w for w in want.split() if w != 'const')}>({text})"
    return _Value(text, names, bases)


def operand(text: str) -> str:
    """``text`` as an operand: parenthesized unless a name, a subscript or a call."""
    simple = re.fullmatch(r"[\w\x00.]+(\[[^\[\]]*\])?", text) or \
        re.fullmatch(r"[\w:<>]+\((?:[^()]|\([^()]*\))*\)", text)
    return text if simple else f"({text})"


def cached_values(unit: "Unit", fn: "Function", cache: PrivateCache,
                  no_alias: Callable[[str, str], bool]) -> "list[tuple[Node, str]] | str":
    """``[(read, value)]``: each read of ``cache`` as the value its thread stored, in the
    reading loop's variable (module doc), or why one cannot be written so. ``no_alias(a,
    b)``: whether the facts say global arrays ``a`` and ``b`` never overlap."""
    accs = accesses(unit, fn)
    views = {a.node.id: (a.view or a.elem_type, a.base) for a in accs if a.mode == "read"}
    written = {a.base for a in accs if a.writes and a.base != cache.base}
    spaces = {a.base: a.space for a in accs}
    reads: dict = {}
    cur: "_Value | None" = None
    out = []
    for u in cache.uses:
        if u.mode == "read":
            if cur is None:
                return f"`{unit.text(u.node)}` reads {cache.base} before a store"
            hit = _assigned(unit, fn, cur.names, u.node.start_byte)
            if hit:
                return f"{hit} is assigned between the store and `{unit.text(u.node)}`"
            reads[u.node.id] = cur
            out.append((u.node, cur.text.replace(_MARK, u.loop.var)))
            continue
        right = _store_target(unit, u.stmt)[1]
        v = _render(unit, fn, right, u.loop, u.stmt.start_byte, reads, views, cache.view)
        if isinstance(v, str):
            return v
        for b in v.bases - {cache.base}:
            if spaces.get(b) == "shared":
                return f"the value stored reads shared memory ({b})"
            if b in written:
                return f"the value stored reads {b}, which the kernel writes"
            other = [w for w in sorted(written) if spaces.get(w) == "global" and
                     not no_alias(b, w)]
            if other:
                return f"{b} may overlap {other[0]}, which the kernel writes (no_alias)"
        cur = v
    return out
