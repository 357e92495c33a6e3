"""Shared arrays that only hold a copy: the value each read of one stands for.

A kernel that stages data in shared memory stores into a ``__shared__`` array once per
element and reads it back after a barrier. When the array has a single store statement,
``S[w] = E;`` with ``E`` a pure expression that reads no shared memory, a read ``S[r]``
stands for ``E`` as the thread that stored element ``r`` computed it. :func:`shared_copy`
reads such an array as a :class:`SharedCopy`; :func:`read_value` writes the value of one of
its reads as an expression of the reading thread:

- the store's index is solved for its variables, dimension by dimension, as written in
  any order: ``v``, ``v + c``, ``c + v``, ``v - c`` (``c`` the same for every thread) and
  the row-major pair ``v * M + u`` (``M * v``, ``u + v * M`` ...) against a read
  ``x * M + y``; so ``xs[i] = x[base + i]`` read as ``xs[k]`` is ``x[base + k]``, and
  ``As[row * BS + col] = A[row * K + col]`` read as ``As[row * BS + k]`` is
  ``A[row * K + k]``;
- every other name ``E`` reads must be the same in the storing and the reading thread
  (no thread id reaches it, :func:`kltrans.analysis.affine.thread_dependent`, or it is a
  local built from variables the index maps to themselves) and must not be assigned
  between the store and a read, except a pointer advanced by the same amount in every
  thread (``A += BK`` after the barrier), which the read's index takes back.

Several stores (a tile and its halo: ``t[ty + 1][tx + 1] = ...`` and, under ``if
(threadIdx.y == 0)``, ``t[0][tx + 1] = ...``) are read by thread index
(:func:`_by_threads`): each store's index is a thread index plus a constant, or a
constant, per dimension, so the thread that wrote the element a read names is known
(its guard's ``threadIdx.t == v`` picks the rest); the read is the first store whose
writer exists and whose guards hold, the value as that writer computed it (its locals
written out, cast to their own types). Stores that cannot be the source at the block's
size are dropped. These stores may not sit in loops or else branches.

What these facts leave open (that the reads fall inside what was stored, that a barrier
separates them) is for the block machine (:func:`kltrans.model.block.same_effects`) to
check on the rewritten kernel. Refused, with a reason: ``extern`` and accessor-reached
arrays (their reads are not named by the array), read-modify-writes and atomics, values
that read shared memory or memory the kernel stores to, or call functions with effects.

Layering: :mod:`kltrans.model.accesses`, the public names of :mod:`kltrans.analysis`,
:mod:`kltrans.match.predicates`, :mod:`kltrans.syntax`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kltrans.analysis.affine import (Affine, affine_of, conjuncts, resolve_name,
                                     strip_parens, thread_dependent)
from kltrans.match.predicates import pure
from kltrans.model.accesses import accesses

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

_LOOPS = ("for_statement", "while_statement", "do_statement")
_PRIMARY = ("identifier", "number_literal", "subscript_expression", "field_expression",
            "call_expression", "parenthesized_expression")


@dataclass(frozen=True)
class SharedCopy:
    """A ``__shared__`` array written by one store ``S[w] = E;`` (module doc)."""

    array: str
    decl: "Node" = field(repr=False)      # the array's declaration statement
    elem_type: str                         # as declared
    dims: tuple                            # each dimension as declared
    store: "Node" = field(repr=False)      # the expression statement
    value: "Node" = field(repr=False)      # E
    holder: "Node" = field(repr=False)     # the store, or the loop or ``if`` holding only it
    index: tuple = field(repr=False)       # per dimension, the store's index node
    reads: tuple = field(repr=False)       # the subscript nodes reading the array
    stores: tuple = field(default=(), repr=False)   # every Store, in file order
    holders: tuple = field(default=(), repr=False)  # what goes with each store


@dataclass(frozen=True)
class Store:
    """One store ``S[w] = E;`` of a staged array and the ``if`` conditions it runs under
    (then-branches, outermost first)."""

    stmt: "Node" = field(repr=False)
    value: "Node" = field(repr=False)
    index: tuple = field(repr=False)
    guards: tuple = field(repr=False)


def subscripts(node: "Node") -> tuple["Node", list["Node"]]:
    """The array and its index nodes, outermost dimension first: ``t[a][b]`` gives
    ``(t, [a, b])``."""
    idx = []
    while node.type == "subscript_expression":
        i = node.child_by_field_name("indices") or node.child_by_field_name("index")
        inner = [c for c in i.named_children if c.type != "comment"] if i is not None else []
        idx.append(inner[0] if len(inner) == 1 and i.type == "subscript_argument_list"
                   else i)
        node = node.child_by_field_name("argument")
    return node, idx[::-1]


def shared_decl(unit: "Unit", decl: "Node") -> tuple[str, str, tuple] | None:
    """``(name, element type, dimensions)`` of a static ``__shared__`` array declaration."""
    if decl.type != "declaration" or "__shared__" not in unit.text(decl).split("[")[0]:
        return None
    if any(unit.text(c) == "extern" for c in decl.children
           if c.type == "storage_class_specifier"):
        return None
    ds = decl.children_by_field_name("declarator")
    if len(ds) != 1 or ds[0].type != "array_declarator":
        return None
    d, dims = ds[0], []
    while d.type == "array_declarator":
        size = d.child_by_field_name("size")
        if size is None:
            return None
        dims.append(unit.text(size))
        d = d.child_by_field_name("declarator")
    if d.type != "identifier":
        return None
    ty = unit.text(decl.child_by_field_name("type"))
    return unit.text(d), ty, tuple(dims[::-1])


def _holder(store: "Node") -> "Node":
    """The statement to delete with the store: a loop or ``if`` holding only it."""
    node = store
    while True:
        p = node.parent
        if p is not None and p.type == "compound_statement" and \
                len([c for c in p.named_children if c.type != "comment"]) == 1:
            p = p.parent
        if p is None or p.type not in _LOOPS + ("if_statement",):
            return node
        if p.type == "if_statement" and p.child_by_field_name("alternative") is not None:
            return node
        node = p


def shared_copy(unit: "Unit", fn: "Function", decl: "Node") -> "SharedCopy | str":
    """The copy held by the array ``decl`` declares, or why it is not one (module doc)."""
    got = shared_decl(unit, decl)
    if got is None:
        return "not a static __shared__ array"
    name, ty, dims = got
    mine = [a for a in accesses(unit, fn) if a.space == "shared" and a.base == name]
    writes = [a for a in mine if a.mode != "read"]
    if not writes or any(a.mode != "write" for a in writes):
        return f"{name} has {len(writes)} stores, {sum(a.mode != 'write' for a in writes)} " \
               "of them not plain (a copy is plain stores)"
    for a in mine:
        base, idx = subscripts(a.node)
        if a.node.type != "subscript_expression" or base.type != "identifier" or \
                unit.text(base) != name or len(idx) != len(dims):
            return f"{name} is reached as `{unit.text(a.node)}`, not by subscripts"
    stored = {a.base for a in accesses(unit, fn) if a.mode != "read"}
    stores = []
    for wr in writes:
        got = _store(unit, fn, name, wr.node, stored)
        if isinstance(got, str):
            return got
        stores.append(got)
    if len(stores) > 1:
        for st in stores:
            if st.guards is None:
                return f"{name} has {len(stores)} stores, one of them in a loop or an else " \
                       "branch (several stores are read by thread index, outside loops)"
    first = stores[0]
    return SharedCopy(name, decl, ty, dims, first.stmt, first.value, _holder(first.stmt),
                      first.index, tuple(a.node for a in mine if a.mode == "read"),
                      tuple(stores), tuple(_holder(st.stmt) for st in stores))


def _store(unit, fn, name, w, stored) -> "Store | str":
    asg = w.parent
    if asg is None or asg.type != "assignment_expression" or \
            unit.text(asg.child_by_field_name("operator")) != "=" or \
            asg.child_by_field_name("left") != w or asg.parent.type != "expression_statement":
        return f"the store `{unit.text(w)}` is not a statement `{name}[...] = value;`"
    value = asg.child_by_field_name("right")
    if not pure(unit, value):
        return "the stored value calls or assigns"
    for a in accesses(unit, fn):
        if a.node.start_byte >= value.start_byte and a.node.end_byte <= value.end_byte:
            if a.space == "shared":
                return "the stored value reads shared memory"
            if a.base in stored or a.base is None:
                return f"the stored value reads {a.base or unit.text(a.node)}, which the " \
                       "kernel also stores to (or which is not known)"
    return Store(asg.parent, value, tuple(subscripts(w)[1]), _guards(asg.parent, fn))


def _guards(stmt: "Node", fn: "Function") -> "tuple | None":
    """The conditions of the ``if`` statements around ``stmt`` (then-branches), outermost
    first; None when a loop or an else branch holds it."""
    out, node = [], stmt
    while node.parent is not None and node.parent != fn.body and node != fn.body:
        p = node.parent
        if p.type in _LOOPS:
            return None
        if p.type == "if_statement":
            if p.child_by_field_name("consequence") != node:
                return None
            out.append(p.child_by_field_name("condition"))
        elif p.type not in ("compound_statement",):
            return None
        node = p
    return tuple(out[::-1])


# ------------------------------------------------------------------ read values
def _names(unit: "Unit", node: "Node") -> list["Node"]:
    """The identifiers of ``node`` that name variables (not callees or fields)."""
    out = []
    for x in unit.walk(node):
        p = x.parent
        if x.type != "identifier":
            continue
        if p is not None and p.type == "call_expression" and p.child_by_field_name("function") == x:
            continue
        out.append(x)
    return out


def _terms(unit: "Unit", node: "Node", sign: int = 1) -> list[tuple[int, "Node"]]:
    """``node`` as a sum: ``(sign, term)`` pairs, parentheses stripped."""
    node = strip_parens(node)
    if node.type == "binary_expression":
        op = unit.text(node.child_by_field_name("operator"))
        if op in ("+", "-"):
            return _terms(unit, node.child_by_field_name("left"), sign) + \
                _terms(unit, node.child_by_field_name("right"), sign if op == "+" else -sign)
    return [(sign, node)]


def _product(unit: "Unit", node: "Node") -> tuple["Node", "Node"] | None:
    node = strip_parens(node)
    if node.type == "binary_expression" and unit.text(node.child_by_field_name("operator")) == "*":
        return node.child_by_field_name("left"), node.child_by_field_name("right")
    return None


def _key(unit: "Unit", node: "Node") -> str:
    return "".join(unit.text(strip_parens(node)).split())


def _wrap(text: str, node: "Node | None" = None) -> str:
    return text if node is not None and strip_parens(node).type in _PRIMARY else f"({text})"


def _solve(unit: "Unit", w: "Node", r: "Node", local: set) -> dict | str:
    """Values of the store index ``w``'s variables that make it the read index ``r``."""
    ts = _terms(unit, w)
    vars_ = [(s, t) for s, t in ts if strip_parens(t).type == "identifier" and
             unit.text(strip_parens(t)) in local]
    prods = [(s, t, _product(unit, t)) for s, t in ts if _product(unit, t) is not None]
    rest = [(s, t) for s, t in ts if (s, t) not in vars_ and
            all(t is not p[1] for p in prods) and unit.text(t) != "0"]
    if any(local & {unit.text(x) for x in _names(unit, t)} for _, t in rest):
        return f"the store index `{unit.text(w)}` is not a variable plus a constant"
    # the row-major pair v * M + u against x * M + y
    if len(prods) == 1 and len(vars_) == 1 and not rest and prods[0][0] == vars_[0][0] == 1:
        f1, f2 = prods[0][2]
        pick = [(a, b) for a, b in ((f1, f2), (f2, f1)) if strip_parens(a).type == "identifier"
                and unit.text(strip_parens(a)) in local and not
                (local & {unit.text(x) for x in _names(unit, b)})]
        rt = _terms(unit, r)
        rp = [(s, t, _product(unit, t)) for s, t in rt if _product(unit, t) is not None]
        if pick and len(rt) == 2 and all(s == 1 for s, _ in rt):
            v, m = pick[0]
            for s, t, (g1, g2) in rp:
                other = next(x for _, x in rt if x is not t)
                for x, mm in ((g1, g2), (g2, g1)):
                    if _key(unit, mm) == _key(unit, m):
                        return {unit.text(strip_parens(v)): _wrap(unit.text(x), x),
                                unit.text(strip_parens(vars_[0][1])): _wrap(unit.text(other),
                                                                            other)}
        return f"the read index `{unit.text(r)}` is not `x * {unit.text(pick[0][1]) if pick else 'M'} + y`"
    if len(vars_) != 1 or prods or vars_[0][0] != 1:
        return f"the store index `{unit.text(w)}` is not a variable plus a constant"
    v = unit.text(strip_parens(vars_[0][1]))
    # r - (rest), cancelling terms the read index spells the same way
    rt = list(_terms(unit, r))
    extra = []
    for s, t in rest:
        hit = next((i for i, (s2, t2) in enumerate(rt) if s2 == s and
                    _key(unit, t2) == _key(unit, t)), None)
        if hit is not None:
            rt.pop(hit)
        else:
            extra.append((-s, t))
    parts = [(s, unit.text(t), t) for s, t in rt] + [(s, unit.text(t), t) for s, t in extra]
    if not parts:
        return {v: "0"}
    text = ""
    for i, (s, tx, node) in enumerate(parts):
        tx = tx if strip_parens(node).type in _PRIMARY or node.type == "binary_expression" and \
            unit.text(node.child_by_field_name("operator")) in ("*", "/", "%") else f"({tx})"
        text += (("-" if s < 0 else "") + tx) if i == 0 else (" + " if s > 0 else " - ") + tx
    return {v: _wrap(text) if len(parts) > 1 or parts[0][0] < 0 else
            _wrap(parts[0][1], parts[0][2])}


def _locals(unit: "Unit", fn: "Function", copy: SharedCopy) -> set:
    """The names the store's index may solve for: variables that differ between threads
    or iterations (not parameters or sizes the same for every thread)."""
    out = set()
    for w in copy.index:
        for x in _names(unit, w):
            if thread_dependent(unit, x) or _loop_variable(unit, x):
                out.add(unit.text(x))
    return out


def _loop_variable(unit: "Unit", ident: "Node") -> bool:
    name, node = unit.text(ident), ident.parent
    while node is not None:
        if node.type == "for_statement":
            init = node.child_by_field_name("initializer")
            if init is not None and name in {unit.text(x) for x in unit.walk(init)
                                             if x.type == "identifier"}:
                return True
        node = node.parent
    return False


def _advance(unit: "Unit", name: str, start: int, end: int, sigma: dict) -> "str | None":
    """How far pointer ``name`` is advanced in ``[start, end)`` of the source, as text
    (``""``: not assigned there); None when it is assigned otherwise than by ``name +=
    d``, ``name -= d`` or ``++`` with ``d`` the same for every thread."""
    parts = []
    for x in unit.walk(unit.root):
        if not (start <= x.start_byte < end) or \
                x.type not in ("assignment_expression", "update_expression"):
            continue
        target = x.child_by_field_name("left") or x.child_by_field_name("argument")
        if target is None or unit.text(strip_parens(target)) != name:
            continue
        if x.type == "update_expression":
            op = "+" if "++" in unit.text(x) else "-"
            parts.append((op, "1", None))
            continue
        op, d = unit.text(x.child_by_field_name("operator")), x.child_by_field_name("right")
        if op not in ("+=", "-=") or thread_dependent(unit, d) or \
                set(sigma) & {unit.text(y) for y in _names(unit, d)}:
            return None
        parts.append((op[0], unit.text(d), d))
    text = ""
    for op, d, node in parts:
        d = d if node is None or strip_parens(node).type in _PRIMARY else f"({d})"
        text += f" {'-' if op == '+' else '+'} {d}"
    return text


def _render(unit: "Unit", node: "Node", sigma: dict, shift: dict) -> str:
    """``node``'s text with the names of ``sigma`` replaced and each subscript of a pointer
    of ``shift`` moved back by its advance."""
    if node.type == "identifier" and unit.text(node) in sigma and node.parent is not None \
            and not (node.parent.type == "call_expression" and
                     node.parent.child_by_field_name("function") == node):
        return sigma[unit.text(node)]
    if not node.children:
        return unit.text(node)
    out, at = [], node.start_byte
    for c in node.children:
        out += [unit.text((at, c.start_byte)), _render(unit, c, sigma, shift)]
        at = c.end_byte
    out.append(unit.text((at, node.end_byte)))
    text = "".join(out)
    if node.type == "subscript_expression":
        base, idx = subscripts(node)
        if base.type == "identifier" and shift.get(unit.text(base)) and len(idx) == 1:
            return f"{unit.text(base)}[{_render(unit, idx[0], sigma, shift)}" \
                   f"{shift[unit.text(base)]}]"
    return text


def _readers_own(unit: "Unit", fn: "Function", x: "Node", sigma: dict, depth: int = 0) -> bool:
    """Whether name ``x`` of the stored value has the same value in the reading thread as
    in the storing one: the same in every thread, a variable the index maps to itself, or a
    local never assigned after its declaration whose value is made of such names
    (``gi = blockIdx.x * T + i`` with ``i`` fixed by the index)."""
    n = unit.text(x)
    if n in sigma:
        return sigma[n] == n
    if not thread_dependent(unit, x):
        return True
    b = resolve_name(unit, x, n)
    if depth > 4 or b.kind != "local" or b.value is None or \
            _advance(unit, n, b.value.end_byte, fn.node.end_byte, {}) != "":
        return False
    return all(y.type != "field_expression" or not thread_dependent(unit, y)
               for y in unit.walk(b.value)) and \
        all(_readers_own(unit, fn, y, sigma, depth + 1) for y in _names(unit, b.value))


# ------------------------------------------------- several stores, read by thread index
_DIMS = ("x", "y", "z")


def _thread_term(a: Affine) -> "tuple[str, int] | None":
    """``(threadIdx.t, c)`` when ``a`` is ``threadIdx.t + c``."""
    syms = [m for m in a.terms if m]
    if len(syms) == 1 and len(syms[0]) == 1 and syms[0][0].startswith("threadIdx.") and \
            a.terms[syms[0]] == 1:
        return syms[0][0], a.terms.get((), 0)
    return None


def _bounds(a: Affine, block: dict) -> "tuple[int, int] | None":
    """The least and greatest value of ``a`` over the threads of a block (None when it
    has other symbols or the block is not known)."""
    lo = hi = a.terms.get((), 0)
    for m, k in a.terms.items():
        if not m:
            continue
        if len(m) != 1 or not m[0].startswith("threadIdx.") or block.get(m[0]) is None:
            return None
        top = (block[m[0]] - 1) * k
        lo, hi = lo + min(0, top), hi + max(0, top)
    return lo, hi


def _text(a: Affine) -> str:
    t = str(a)
    return t if _wrap_ok(t) else f"({t})"


def _wrap_ok(t: str) -> bool:
    return t.replace("_", "").replace(".", "").isalnum()


def _render_threads(unit: "Unit", fn: "Function", node: "Node", sub: dict, moved: set,
                    depth: int = 0) -> "str | None":
    """``node``'s text as the writer computes it: ``threadIdx.t`` written ``sub[t]``, and
    every local built from a moved thread index written out (None when one cannot be)."""
    if node.type == "field_expression" and unit.text(node).replace(" ", "") in sub:
        return _text(sub[unit.text(node).replace(" ", "")])
    if node.type == "identifier" and node.parent is not None and not (
            node.parent.type == "call_expression" and
            node.parent.child_by_field_name("function") == node):
        src = thread_dependent(unit, node)
        if src & moved or "?" in src:
            b = resolve_name(unit, node, unit.text(node))
            if depth > 4 or b.kind != "local" or b.value is None or \
                    _advance(unit, unit.text(node), b.value.end_byte, fn.node.end_byte, {}):
                return None
            inner = _render_threads(unit, fn, b.value, sub, moved, depth + 1)
            if inner is None:
                return None
            # the local's own type: the writer computed it so (an int, not the unsigned
            # arithmetic of the thread indices written out)
            ty = b.decl.child_by_field_name("type") if b.decl is not None and \
                b.decl.type == "declaration" else None
            plain = b.ident is not None and b.ident.parent is not None and \
                b.ident.parent.type == "init_declarator"
            return f"(({unit.text(ty)})({inner}))" if ty is not None and plain else f"({inner})"
        return unit.text(node)
    if not node.children:
        return unit.text(node)
    out, at = [], node.start_byte
    for c in node.children:
        got = _render_threads(unit, fn, c, sub, moved, depth)
        if got is None:
            return None
        out += [unit.text((at, c.start_byte)), got]
        at = c.end_byte
    out.append(unit.text((at, node.end_byte)))
    return "".join(out)


def _by_threads(unit: "Unit", fn: "Function", copy: SharedCopy, read: "Node",
                block: dict) -> tuple[str | None, str]:
    """The value of ``read`` when several stores fill the array, each at a thread index
    plus a constant (or a constant) per dimension: per store, the writer is the thread
    those indices name; a store is the read's source where its writer exists and its
    guards hold. Stores that can never be the source (at the block's size) are dropped;
    the last one left is the default."""
    R = [affine_of(unit, i, fn) for i in subscripts(read)[1]]
    if any(r is None or "#" in str(r) for r in R):
        return None, f"the read index of `{unit.text(read)}` is not affine"
    cases = []
    for st in copy.stores:
        sub, conds, dead = {}, [], False
        for w, r in zip(st.index, R):
            W = affine_of(unit, w, fn)
            if W is None:
                return None, f"the store index `{unit.text(w)}` is not affine"
            if W.is_const():
                conds.append(("eq", r - W))
                continue
            tt = _thread_term(W)
            if tt is None or tt[0] in sub:
                return None, f"the store index `{unit.text(w)}` is not a thread index " \
                             "plus a constant"
            sub[tt[0]] = r - Affine.const(tt[1])
            conds.append(("in", sub[tt[0]], tt[0]))
        kept = []
        for g in st.guards:
            for c in conjuncts(unit, g):
                if c.type == "binary_expression" and \
                        unit.text(c.child_by_field_name("operator")) == "==":
                    d = affine_of(unit, c.child_by_field_name("left"), fn)
                    e = affine_of(unit, c.child_by_field_name("right"), fn)
                    tt = _thread_term(d - e) if d is not None and e is not None else None
                    if tt is not None and tt[0] not in sub:
                        sub[tt[0]] = Affine.const(-tt[1])   # the writer the guard picks
                        continue
                kept.append(c)
        moved = {t for t, a in sub.items() if a != Affine.sym(t)}
        for t in ("threadIdx." + d for d in _DIMS):
            if t not in sub and (t in thread_dependent(unit, st.value) or any(
                    t in thread_dependent(unit, c) for c in kept)):
                return None, f"a store's value depends on {t}, which its index does not fix"
        texts = []
        for kind, a, *t in conds:
            b = _bounds(a, block)
            # thread indices are unsigned: constants move to the side that keeps them so
            c = a.terms.get((), 0)
            var = _text(a - Affine.const(c))
            if kind == "eq":
                if b is not None and (b[0] > 0 or b[1] < 0):
                    dead = True
                elif b != (0, 0):
                    texts.append(f"{var} == {-c}" if c <= 0 else f"{var} + {c} == 0")
            else:
                size, dim = block.get(t[0]), "blockDim." + t[0][-1]
                if b is not None and size is not None and (b[1] < 0 or b[0] >= size):
                    dead = True
                    continue
                if b is None or b[0] < 0:
                    texts.append(f"{var} >= {-c}" if c <= 0 else f"{var} + {c} >= 0")
                if b is None or size is None or b[1] >= size:
                    texts.append(f"{var} < {dim} + {-c}" if c < 0 else
                                 f"{var} + {c} < {dim}" if c > 0 else f"{var} < {dim}")
        if dead:
            continue
        for c in kept:
            got = _render_threads(unit, fn, c, sub, moved)
            if got is None:
                return None, "a store's guard names a local that cannot be written out"
            texts.append(f"({got})")
        val = _render_threads(unit, fn, st.value, sub, moved)
        if val is None:
            return None, "the stored value names a local that cannot be written out"
        for x in _names(unit, st.value):
            if _advance(unit, unit.text(x), st.stmt.end_byte, read.start_byte, {}):
                return None, f"{unit.text(x)} is assigned between the store and the read"
        cases.append((texts, _wrap(val, st.value)))
    if not cases:
        return None, f"no store writes the element `{unit.text(read)}` reads"
    text = cases[-1][1]
    for conds, val in reversed(cases[:-1]):
        text = f"({' && '.join(conds) or 'true'} ? {val} : {text})"
    return text, ""


def read_value(unit: "Unit", fn: "Function", copy: SharedCopy, read: "Node",
               block: dict | None = None) -> tuple[str | None, str]:
    """The text of the value ``read`` (one of ``copy.reads``) stands for, as an expression
    of the reading thread; or None with why not. A pointer advanced by the same amount in
    every thread between the store and the read (``A += BK;``) is indexed back by it.
    Several stores are read by thread index (:func:`_by_threads`); ``block``:
    ``{"threadIdx.x": size, ...}``, the block's extents where known."""
    if len(copy.stores) > 1:
        return _by_threads(unit, fn, copy, read, block or {})
    _, ridx = subscripts(read)
    local = _locals(unit, fn, copy)
    sigma: dict = {}
    for w, r in zip(copy.index, ridx):
        got = _solve(unit, w, r, local)
        if isinstance(got, str):
            return None, got
        if set(got) & set(sigma):
            return None, f"`{unit.text(w)}` names a variable of another dimension"
        sigma.update(got)
    fixed, moved = set(), set()
    for w in copy.index:
        for x in _names(unit, w):
            n = unit.text(x)
            if n in sigma:
                (fixed if sigma[n] == n else moved).update(thread_dependent(unit, x))
    shift: dict = {}
    for x in _names(unit, copy.value):
        n = unit.text(x)
        if n in sigma:
            continue
        if not _readers_own(unit, fn, x, sigma):
            return None, f"the stored value reads {n}, which differs between threads " \
                         "and the index does not fix it"
        d = _advance(unit, n, copy.store.end_byte, read.start_byte, sigma)
        p = x.parent
        if d is None or d and not (p.type == "subscript_expression" and
                                   p.child_by_field_name("argument") == x):
            return None, f"{n} is assigned between the store and the read"
        if d:
            shift[n] = d
    for x in unit.walk(copy.value):
        src = thread_dependent(unit, x) if x.type == "field_expression" else frozenset()
        if src and ("?" in src or not src <= fixed or src & moved):
            return None, f"the stored value reads {unit.text(x)}, which the index does not fix"
    return _wrap(_render(unit, copy.value, sigma, shift), copy.value), ""


__all__ = ["SharedCopy", "read_value", "shared_copy", "shared_decl", "subscripts"]
