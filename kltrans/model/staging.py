"""The load phase of a block reduction: what each thread stages in its shared slot.

A block reduction first has every thread store a value in its own slot of a shared array,
then folds the slots in a tree (:mod:`kltrans.model.collectives`). :func:`staged_load`
reads the store at a statement as a :class:`StagedLoad`: the slot ``A[t]`` (``t`` the
thread's index in the block, :mod:`kltrans.model.geometry`), and the value as a fold of
``factor`` guarded loads of one input, ``B`` elements apart from a global index ``i``::

    in[i] (if i < n, else pad)  op  in[i + B] (if i + B < n)  op ...  in[i + (F-1) B]

where ``i = blockIdx.x * (F B) + threadIdx.x`` (so a block covers ``F`` block-sized
chunks) and ``op`` is the fold of the tree that follows. Two spellings of the value:

- ``expression``: the store's right-hand side, ``(i < n) ? in[i] : 0``, optionally
  followed by ``op (i + B < n ? in[i + B] : 0)`` terms;
- ``local``: a local accumulator, ``T acc = (i < n) ? in[i] : 0;``, then ``F - 1``
  statements ``if (i + k B < n) acc op= in[i + k B];`` (or ``acc = acc op in[...]``,
  braced or not), then ``A[t] = acc;`` (the CUDA samples' spelling).

Indices, guards and strides are compared as affine maps in the thread geometry
(:func:`kltrans.model.geometry.geometry_affine`: cooperative-groups spellings read as builtins),
so ``i + blockDim.x`` and ``blockDim.x + i``, a ``#define`` block and ``blockDim.x``, a
product in either order are one reading. Refused, with a reason: an index used outside the
load (the rest of the kernel must see the data only through the slot), guards with other
bounds, loads of several inputs, strides that are not multiples of one block.

Layering: :mod:`kltrans.model.accesses`, :mod:`kltrans.model.collectives`,
:mod:`kltrans.model.geometry`, :mod:`kltrans.analysis`, :mod:`kltrans.syntax`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kltrans.analysis import Affine
from kltrans.analysis.affine import strip_parens
from kltrans.model.accesses import accesses
from kltrans.model.collectives import collectives
from kltrans.model.geometry import geometry_affine, role_of
from kltrans.syntax.cuda import enclosing_function, subscript_index

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.unit import Unit

#: the tree folds a load can be combined with, their infix operator (identity 0)
INFIX = {"sum": "+", "or": "|", "xor": "^"}
_OPS = {"+": "sum", "|": "or", "^": "xor"}


@dataclass(frozen=True)
class Guarded:
    """One load ``in[e]`` under ``e < n``: the subscript's index node and the whole term
    (the conditional expression, or the guarding ``if`` statement of the local form)."""

    node: "Node" = field(repr=False)
    index: "Node" = field(repr=False)
    offset: Affine


@dataclass(frozen=True)
class StagedLoad:
    """The store of a thread's value into its slot before a block's tree (module doc)."""

    store: "Node" = field(repr=False)    # the statement ``A[t] = v;``
    array: str
    thread: str                          # the slot's index as written
    value: "Node" = field(repr=False)    # ``v``
    src: str
    bound: str                           # ``n`` as written
    pad: str                             # the value past the end, as written
    index: str                           # ``i``
    index_decl: "Node" = field(repr=False)
    scale: "Node" = field(repr=False)    # ``X`` in ``blockIdx.x * X``
    block: str | None                    # ``B`` as written (None: not read)
    factor: int
    terms: tuple = field(repr=False)     # the ``factor`` Guarded loads, in order
    form: str                            # expression | local
    local: str | None = None
    local_decl: "Node | None" = field(default=None, repr=False)
    op: str = "sum"                      # the tree's fold
    elem_type: str | None = None


def _stmt_expr(stmt) -> "Node | None":
    if stmt is None or stmt.type != "expression_statement" or not stmt.named_children:
        return None
    return strip_parens(stmt.named_children[0])


def _guarded(unit, node, env) -> tuple | None:
    """(src, bound, index node, pad) of ``(e < n) ? src[e] : pad``."""
    node = strip_parens(node)
    if node.type != "conditional_expression":
        return None
    cond = strip_parens(node.child_by_field_name("condition"))
    then = strip_parens(node.child_by_field_name("consequence"))
    got = _load_under(unit, cond, then)
    return None if got is None else (*got, unit.text(node.child_by_field_name("alternative")))


def _load_under(unit, cond, load) -> tuple | None:
    """(src, bound, index node) when ``load`` is ``src[e]`` and ``cond`` is ``e < n``."""
    if cond.type != "binary_expression" or unit.text(cond.child_by_field_name("operator")) != "<":
        return None
    e = subscript_index(load) if load.type == "subscript_expression" else None
    if e is None:
        return None
    left, right = geometry_affine(unit, cond.child_by_field_name("left")), geometry_affine(unit, e)
    if left is None or left != right:
        return None
    return (unit.text(load.child_by_field_name("argument")),
            " ".join(unit.text(cond.child_by_field_name("right")).split()), e)


def _folded_terms(unit, value) -> tuple[list, str | None]:
    """The operands of a left-nested infix fold ``a op b op c`` and its operator."""
    terms, x, op = [], strip_parens(value), None
    while x.type == "binary_expression" and unit.text(x.child_by_field_name("operator")) in _OPS \
            and op in (None, unit.text(x.child_by_field_name("operator"))):
        op = unit.text(x.child_by_field_name("operator"))
        terms.insert(0, x.child_by_field_name("right"))
        x = strip_parens(x.child_by_field_name("left"))
    return [x, *terms], op


def _accumulate(unit, stmt, acc) -> tuple | None:
    """(if statement, operator, load) of ``if (c) acc op= load;`` in any bracing."""
    if stmt.type != "if_statement" or stmt.child_by_field_name("alternative") is not None:
        return None
    body = stmt.child_by_field_name("consequence")
    kids = [c for c in body.named_children if c.type != "comment"] \
        if body.type == "compound_statement" else [body]
    e = _stmt_expr(kids[0]) if len(kids) == 1 else None
    if e is None or e.type != "assignment_expression" or \
            unit.text(e.child_by_field_name("left")) != acc:
        return None
    op, right = unit.text(e.child_by_field_name("operator")), e.child_by_field_name("right")
    if op == "=":
        terms, op2 = _folded_terms(unit, right)
        if len(terms) != 2 or unit.text(terms[0]) != acc:
            return None
        op, right = op2 + "=", terms[1]
    if op[:-1] not in _OPS:
        return None
    cond = strip_parens(stmt.child_by_field_name("condition"))
    cond = strip_parens(cond.named_children[0]) if cond.type == "condition_clause" else cond
    got = _load_under(unit, cond, strip_parens(right))
    return None if got is None else (op[:-1], got)


def _local_form(unit, store, name):
    """(declaration, [(if, op, load)]) of the accumulator ``name`` stored at ``store``."""
    block = store.parent
    stmts = [c for c in block.named_children if c.type != "comment"]
    at = next(k for k, c in enumerate(stmts) if c.id == store.id)
    adds = []
    for k in range(at - 1, -1, -1):
        s = stmts[k]
        if s.type == "declaration":
            d = s.child_by_field_name("declarator")
            if d is not None and d.type == "init_declarator" and \
                    unit.text(d.child_by_field_name("declarator")) == name and \
                    len([c for c in s.named_children if c.type == "init_declarator"]) == 1:
                return s, d.child_by_field_name("value"), adds[::-1]
        got = _accumulate(unit, s, name)
        if got is None:
            return None
        adds.append((s, *got))
    return None


def _scale(unit, decl_value) -> "Node | None":
    """``X`` of the product ``blockIdx.x * X`` (either order) in ``decl_value``."""
    for n in unit.walk(decl_value):
        r = role_of(unit, n) if n.type in ("field_expression", "identifier", "call_expression") \
            else None
        if r is None or r.kind != "block" or r.dim != "x":
            continue
        p = n.parent
        while p is not None and p.type == "parenthesized_expression":
            p = p.parent
        if p is None or p.type != "binary_expression" or \
                unit.text(p.child_by_field_name("operator")) != "*":
            return None
        left, right = p.child_by_field_name("left"), p.child_by_field_name("right")
        return right if left.start_byte <= n.start_byte < left.end_byte else left
    return None


def _index_decl(unit, fn, name) -> "Node | None":
    found = [n for n in unit.walk(fn.body) if n.type == "init_declarator"
             and unit.text(n.child_by_field_name("declarator")) == name]
    return found[0] if len(found) == 1 else None


def _used_elsewhere(unit, fn, name, keep) -> "Node | None":
    for n in unit.walk(fn.body):
        if n.type == "identifier" and unit.text(n) == name and \
                not any(k.start_byte <= n.start_byte < k.end_byte for k in keep):
            return n
    return None


def staged_load(unit: "Unit", stmt: "Node") -> tuple[StagedLoad | None, str]:
    """(the staged load at statement ``stmt``, why) or (None, why not)."""
    fn = enclosing_function(unit, stmt)
    e = _stmt_expr(stmt)
    if fn is None or e is None or e.type != "assignment_expression" or \
            unit.text(e.child_by_field_name("operator")) != "=":
        return None, "not a store statement"
    left = strip_parens(e.child_by_field_name("left"))
    slot = subscript_index(left)
    if slot is None:
        return None, "the store does not write an array element"
    write = next((a for a in accesses(unit, fn) if a.node.id == left.id and a.mode == "write"),
                 None)
    if write is None or write.space != "shared":
        return None, f"{unit.text(left)} is not a shared-memory element"
    r = role_of(unit, slot)
    if r is None or r.kind != "thread" or r.dim not in ("x", "linear") or r.split is not None:
        return None, f"the slot {unit.text(slot)} is not the thread's index in the block"
    array = unit.text(left.child_by_field_name("argument"))
    tree = next((c for c in collectives(unit, fn) if c.scope == "block" and c.kind == "reduce"
                 and c.node.start_byte > stmt.end_byte
                 and any(n.type == "subscript_expression"
                         and unit.text(n.child_by_field_name("argument")) == array
                         for n in unit.walk(c.node))), None)
    if tree is None:
        return None, f"no block reduction over {array} follows the store"
    value = strip_parens(e.child_by_field_name("right"))
    local = decl = None
    if value.type == "identifier":
        got = _local_form(unit, stmt, unit.text(value))
        if got is None:
            return None, (f"{unit.text(value)} is not a local set from a guarded load and "
                          f"guarded accumulations right before the store")
        decl, first, adds = got
        local, form = unit.text(value), "local"
        g0 = _guarded(unit, first, {})
        ops = {op for _, op, _ in adds}
        pieces = [(first, g0)] + [(s, (*ld, None)) for s, _, ld in adds]
    else:
        terms, op = _folded_terms(unit, value)
        ops = {op} if op else set()
        form = "expression"
        pieces = [(t, _guarded(unit, t, {})) for t in terms]
        g0 = pieces[0][1]
    if g0 is None or any(g is None for _, g in pieces):
        return None, "the stored value is not a fold of guarded loads `(i < n) ? in[i] : pad`"
    if len(ops) > 1 or (ops and _OPS[ops.pop()] != tree.op):
        return None, f"the loads are not combined with the tree's fold ({tree.op})"
    src, bound, first_index, pad = g0
    if any(g[0] != src or g[1] != bound for _, g in pieces):
        return None, "the guarded loads read other inputs or have other bounds"
    if strip_parens(first_index).type != "identifier":
        return None, "the first load's index is not a local"
    index = unit.text(strip_parens(first_index))
    reads = [geometry_affine(unit, g[2]) for _, g in pieces]
    if any(r is None for r in reads):
        return None, "an index of the loads is not affine in the thread geometry"
    offsets = [r - reads[0] for r in reads]
    step = offsets[1] if len(offsets) > 1 else None
    if step is not None and any(o != step * Affine.const(k) for k, o in enumerate(offsets)):
        return None, "the loads are not one stride apart"
    idecl = _index_decl(unit, fn, index)
    scale = _scale(unit, idecl.child_by_field_name("value")) if idecl is not None else None
    if scale is None:
        return None, f"{index} is not declared as blockIdx.x * X + threadIdx.x"
    sa, f = geometry_affine(unit, scale), len(pieces)
    want = Affine.sym("blockIdx.x") * sa + Affine.sym("threadIdx.x") if sa is not None else None
    if want is None or geometry_affine(unit, idecl.child_by_field_name("value")) != want:
        return None, f"{index} is not blockIdx.x * X + threadIdx.x"
    if step is not None and sa != step * Affine.const(f):
        return None, (f"a block covers {unit.text(scale)} elements, not the {f} loads "
                      f"{unit.text(pieces[1][1][2])} apart")
    keep = [idecl, stmt, decl] + [s for s, _ in pieces] if form == "local" else [idecl, stmt]
    other = _used_elsewhere(unit, fn, index, [k for k in keep if k is not None])
    if other is not None:
        return None, (f"{index} is used at line {unit.line_col(other.start_byte)[0]} outside "
                      "the load: the rest of the kernel must see the data only through the slot")
    block = unit.text(scale) if f == 1 else _block_text(unit, scale, pieces[1][1][2], index, f)
    terms = tuple(Guarded(s, g[2], o) for (s, g), o in zip(pieces, offsets))
    return StagedLoad(stmt, array, unit.text(slot), value, src, bound, pad, index,
                      idecl.parent, scale, block, f, terms, form, local, decl, tree.op,
                      write.elem_type), f"{form} fold of {f} guarded load(s) of {src}"


def _block_text(unit, scale, second, index, f) -> str | None:
    """``B`` as written: the other side of ``B * F`` in the scale, or of ``i + B``."""
    x = strip_parens(scale)
    if x.type == "binary_expression" and unit.text(x.child_by_field_name("operator")) == "*":
        for a, b in (("left", "right"), ("right", "left")):
            if unit.text(x.child_by_field_name(a)).rstrip("uU") == str(f):
                return unit.text(x.child_by_field_name(b))
    s = strip_parens(second)
    if s.type == "binary_expression" and unit.text(s.child_by_field_name("operator")) == "+":
        for a, b in (("left", "right"), ("right", "left")):
            if unit.text(s.child_by_field_name(a)) == index:
                return unit.text(s.child_by_field_name(b))
    return None


__all__ = ["INFIX", "Guarded", "StagedLoad", "staged_load"]
