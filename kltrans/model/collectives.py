"""Collectives: the reductions and scans of a unit, and its synchronizations, in any spelling.

:func:`collectives` lists each place where values are combined, as a :class:`Collective`:

- thread: a counted loop folding an expression of its counter into an outer variable;
- warp: a loop over halving offsets (``>>= 1``, ``/= 2`` from ``16``, ``warpSize / 2``,
  ``tile.size() / 2`` ...; doubling ones for a xor butterfly) folding a variable with a
  shuffle of itself, directly, through a temporary or a combine call (``fold(m, s,
  shfl(m), shfl(s))``: a ``merge``); the same written out (16, 8, 4, 2, 1); ``cg::reduce``,
  ``__reduce_*_sync``; scans: shuffle-up loops over doubling offsets, ``cg::*_scan``;
- block (warp when at most 32 slots and no block barrier): shared-memory trees read as
  index arithmetic, the slot read ``s`` above the one written (sequential or interleaved,
  by the loop's direction), such steps written out (``if (blockSize >= 512)``, a volatile
  last warp), Hillis-Steele (the slot read ``off`` below), Blelloch (the down-sweep's
  swap), warp results parked at a warp index, a block barrier, then a warp collective (or
  one loop) over the slots ("warp-slots");
- grid: an atomic to an address no lane changes, by one leader (``if (lane == 0)``) or of
  a collective's result (into ``__shared__`` or ``*_block``: block); a spin loop re-reading
  memory in a function that scans: a look-back, approximate, as its ``note`` says;
- the call of a ``__device__`` helper or a lambda holding one: the widest, ``via`` it.

Knowingly not: offsets from a table, ``__shfl_sync(m, v, lane ^ o)`` butterflies, trees
indexed neither by polynomials nor ``w + e``, private scans, CAS loops in helpers, CUB.
Refused: a broadcast, a loop that moves values without folding them, a per-thread atomic
to one address (naive roots do that), a constant increment (a counter), an atomic to a
per-lane address (a histogram). :func:`synchronizations` lists a function's barriers
(:func:`kltrans.analysis.barriers`, the model's operations deciding a group's kind) and
the calls of helpers or lambdas holding one. Nothing here raises on odd code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kltrans.analysis import Affine, affine_of, barriers, enclosing_conditions, loops, sources, warp_uniform
from kltrans.analysis.affine import THREAD_SYMBOLS, strip_parens
from kltrans.model.ops import operations
from kltrans.syntax.cuda import enclosing_function, find_functions, subscript_index

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

_WIDTH = {"thread": 0, "warp": 1, "block": 2, "grid": 3}
_COMPOUND = {"+=": "sum", "|=": "or", "&=": "and", "^=": "xor", "*=": "custom", "-=": "custom"}
_BINARY = {"+": "sum", "|": "or", "&": "and", "^": "xor", "*": "custom"}
_NAMED = {**{n: "max" for n in ("max", "fmax", "fmaxf", "__hmax", "__hmax2", "hmax")},
          **{n: "min" for n in ("min", "fmin", "fminf", "__hmin", "__hmin2", "hmin")}}
_ATOMIC = {"atomic.add": "sum", "atomic.max": "max", "atomic.min": "min", "atomic.cas": "custom"}
_SHUFFLE = {"shuffle.down": "shuffle-down", "shuffle.xor": "shuffle-xor", "shuffle.up": "shuffle-up-scan"}
_HALVE, _DOUBLE = {">>=1", "/=2"}, {"<<=1", "*=2"}
_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_HOLDERS = ("compound_statement", "if_statement", "else_clause", "translation_unit",
            "case_statement") + _LOOPS
_LOOKBACK = ("approximate: a spin loop re-reading memory in a function that scans; "
             "the predecessor and the flag protocol are not checked")


@dataclass(frozen=True)
class Collective:
    """A reduction or scan. ``kind`` reduce | scan; ``scope`` thread | warp | block | grid;
    ``op`` sum | max | min | and | or | xor | custom | merge (several values folded by
    different or custom operators: an online-softmax pair); ``how`` the technique; ``value``
    what is combined (None when a helper combines its own locals); ``via`` the helper or
    lambda a call site reaches it through; ``note`` what is approximate or unusual."""

    kind: str
    scope: str
    op: str
    how: str
    node: "Node" = field(compare=False, repr=False)
    line: int
    function: str | None
    value: str | None
    via: str | None = None
    note: str | None = None

    @property
    def mark(self) -> str:
        """Its name for the naive check: ``warp reduction (shuffle-xor via warpReduce)``."""
        via = f" via {self.via}" if self.via else ""
        return f"{self.scope} {'reduction' if self.kind == 'reduce' else 'scan'} ({self.how}{via})"


@dataclass(frozen=True)
class Sync:
    """A barrier: ``scope`` block | warp | tile | grid | cluster; ``via`` the helper called."""

    scope: str
    node: "Node" = field(compare=False, repr=False)
    line: int
    function: str | None
    via: str | None = None


# ----------------------------------------------------------------------------- helpers
def _text(unit, node) -> str:
    return " ".join(unit.text(strip_parens(node)).split()) if node is not None else ""


def _within(node, outer) -> bool:
    return outer is not None and outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _stmt(node):
    """The statement holding ``node``."""
    while node.parent is not None and node.parent.type not in _HOLDERS:
        node = node.parent
    return node


def _flatten(node) -> list:
    """The statements of a block in order, entering blocks and ``if``s without ``else``."""
    if node is None or node.type == "comment":
        return []
    if node.type == "compound_statement":
        return [s for c in node.named_children for s in _flatten(c)]
    if node.type == "if_statement" and node.child_by_field_name("alternative") is None:
        return _flatten(node.child_by_field_name("consequence"))
    return [node]


def _assigns(unit, node):
    """(assignment, left, operator, right) under ``node``."""
    for a in unit.nodes_of_type("assignment_expression", within=node):
        left, op, right = (a.child_by_field_name(k) for k in ("left", "operator", "right"))
        if left is not None and op is not None and right is not None:
            yield a, left, unit.text(op), right


def _args(node) -> list:
    a = node.child_by_field_name("arguments")
    return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def _callee(unit, call) -> str:
    f = call.child_by_field_name("function")
    f = f.child_by_field_name("name") if f is not None and f.type == "template_function" else f
    named = f is not None and f.type in ("identifier", "qualified_identifier")
    return unit.text(f).split("::")[-1] if named else ""


def _fn_node(unit, node):
    f = enclosing_function(unit, node)
    return f.node if f is not None else None


def _const(unit, node) -> int | None:
    a = affine_of(unit, node) if node is not None else None
    return a.value() if a is not None else None


def _idents(unit, node) -> set[str]:
    return {unit.text(n) for n in unit.walk(node) if n.type == "identifier"}


def _make(unit, kind, scope, folds_or_op, how, node, value=None, via=None, note=None) -> Collective:
    """A collective at ``node``; ``folds_or_op`` is an operator or the folds that give it and the value."""
    op = folds_or_op
    if isinstance(folds_or_op, list):
        op, value = _fold_op(folds_or_op)
    f = enclosing_function(unit, node)
    return Collective(kind, scope, op, how, node, unit.location(node.start_byte).line,
                      f.name if f else None, value, via, note)


# ----------------------------------------------------------------------------- folding
def _self_fold(unit, left, op, right):
    """(target, op, the other operand) when an assignment folds something into its target."""
    target, r = _text(unit, left), strip_parens(right)
    if op in _COMPOUND:
        return target, _COMPOUND[op], right
    if op == "=" and r.type == "binary_expression":
        pair = (r.child_by_field_name("left"), r.child_by_field_name("right"))
        bop = unit.text(r.child_by_field_name("operator"))
        for mine, other in (pair, pair[::-1]):
            if bop in _BINARY and _text(unit, mine) == target:
                return target, _BINARY[bop], other
    if op == "=" and r.type in ("call_expression", "conditional_expression"):
        call = r.type == "call_expression"
        parts = _args(r) if call else r.named_children
        if len(parts) >= 2 and target in {_text(unit, p) for p in parts}:
            return target, _NAMED.get(_callee(unit, r), "custom") if call else "custom", r
    return None


def _folds(unit, st, contribs, want) -> list[tuple[str, str]]:
    """(target, op) of each fold of one of ``contribs`` in statement ``st`` (``want`` picks
    the targets); a call statement over them is a custom fold of its wanted arguments."""
    out = [g[:2] for _, l, op, r in _assigns(unit, st) for g in [_self_fold(unit, l, op, r)]
           if g and want(g[0]) and any(_within(c, g[2]) for c in contribs)]
    call = strip_parens(st.named_children[0]) if st.type == "expression_statement" and st.named_children \
        else None
    if not out and call is not None and call.type == "call_expression" and \
            any(_within(c, call) for c in contribs):
        out = [(_text(unit, x), "custom") for x in _args(call) if want(_text(unit, x))]
    return out


def _combine(unit, contrib, stmts, want) -> list[tuple[str, str]]:
    """How ``contrib`` is folded in ``stmts``: directly, or parked in one temporary first
    (``float t = shfl(v, o); v += t;``)."""
    st = _stmt(contrib)
    got = _folds(unit, st, [contrib], want)
    decls = st.children_by_field_name("declarator") if st.type == "declaration" else []
    parked = [_text(unit, d.child_by_field_name("declarator")) for d in decls
              if d.type == "init_declarator" and _within(contrib, d.child_by_field_name("value"))]
    parked += [_text(unit, l) for _, l, op, r in _assigns(unit, st) if op == "=" and _within(contrib, r)]
    tmp = None if got else next((t for t in parked if t.isidentifier()), None)
    for s in (x for x in stmts if tmp and x.start_byte > st.start_byte):
        got = _folds(unit, s, [n for n in unit.walk(s) if n.type == "identifier" and unit.text(n) == tmp],
                     want)
        if got:
            break
    return got


def _fold_op(folds) -> tuple[str, str]:
    """(op, value): one operator over the values, else ``merge``."""
    by: dict[str, set] = {}
    for t, op in folds:
        by.setdefault(t, set()).add(op)
    ops = {next(iter(o)) if len(o) == 1 else "custom" for o in by.values()}
    op = ops.pop() if len(ops) == 1 else "merge"
    return ("merge" if len(by) > 1 and op == "custom" else op), ", ".join(by)


# ------------------------------------------------------------------- loops and unrolled
class _Ctx:
    def __init__(self, unit):
        self.unit, self.ops, self.loops = unit, operations(unit), loops(unit)
        self.shared = {d.name for d in unit.shared_decls()}
        self.bars = [o.node for o in self.ops if o.name == "barrier.block"] + \
            [b.node for b in barriers(unit, None) if b.scope == "block"]

    def barrier_in(self, a: int, b: int) -> bool:
        return any(a <= n.start_byte < b for n in self.bars)

    def shuffles(self):
        for o in self.ops:
            off, val = o.operands.get("delta") or o.operands.get("lane_mask"), o.operands.get("value")
            if o.name in _SHUFFLE and off is not None and val is not None:
                yield o, off, _text(self.unit, val)


def _innermost(node, loop) -> bool:
    p = node.parent
    while p is not None and p.id != loop.id and p.type not in _LOOPS + ("lambda_expression",):
        p = p.parent
    return p is not None and p.id == loop.id


def _warp_loop(ctx, L) -> Collective | None:
    unit, stmts, folds, names = ctx.unit, _flatten(L.body), [], set()
    for o, off, v in ctx.shuffles():
        if _innermost(o.node, L.node) and L.var in _idents(unit, off):
            got = _combine(unit, o.node, stmts, lambda t, v=v: t == v)
            folds, names = folds + got, names | ({o.name} if got else set())
    halving = L.step_text in _HALVE
    if not folds or not (names == {"shuffle.up"} and not halving or "shuffle.up" not in names and
                         (halving or names == {"shuffle.xor"})):
        return None  # a down shuffle over doubling offsets, an up shuffle over halving ones
    how = _SHUFFLE["shuffle.xor" if "shuffle.xor" in names else min(names)]
    return _make(unit, "scan" if "up" in how else "reduce", "warp", folds, how, L.node)


def _offset(unit, r, w) -> Affine | None:
    """Read index minus written index: as polynomials, or read off ``w + e`` / ``w - e``."""
    ra, wa = affine_of(unit, r), affine_of(unit, w)
    if ra is not None and wa is not None:
        return ra - wa
    r = strip_parens(r)
    op = unit.text(r.child_by_field_name("operator")) if r.type == "binary_expression" else ""
    left, right = r.child_by_field_name("left"), r.child_by_field_name("right")
    if op in ("+", "-") and _text(unit, left) == _text(unit, w):
        e = affine_of(unit, right)
        return None if e is None else e if op == "+" else -e
    return affine_of(unit, left) if op == "+" and _text(unit, right) == _text(unit, w) else None


def _array_steps(unit, stmts):
    """(array, read index - written index, folds, statement) for each read of an array the
    statements also write (at a varying index) whose value is folded into something."""
    writes, out = {}, []
    for s in stmts:
        for a, left, _, _ in _assigns(unit, s):
            w = subscript_index(left) if _stmt(a).id == s.id else None
            if w is not None and _const(unit, w) is None:
                writes.setdefault(_text(unit, left.child_by_field_name("argument")), w)
    for s in stmts:
        lefts = {left.id for _, left, _, _ in _assigns(unit, s)}
        for r in unit.nodes_of_type("subscript_expression", within=s):
            arr, i = _text(unit, r.child_by_field_name("argument")), subscript_index(r)
            d = _offset(unit, i, writes[arr]) if r.id not in lefts and arr in writes and i is not None \
                and _stmt(r).id == s.id else None
            folds = _combine(unit, r, stmts, lambda t: True) if d is not None else []
            out += [(arr, d, folds, s)] if folds else []
    return out


def _swapped(unit, stmts) -> str | None:
    """Blelloch's down-sweep, ``A[x] = A[y]`` and ``A[y] += t`` in one body: A."""
    moved, added = {}, set()
    for _, left, op, right in (a for s in stmts for a in _assigns(unit, s)):
        right = strip_parens(right)
        if op == "=" and left.type == right.type == "subscript_expression":
            moved[_text(unit, right)] = _text(unit, right.child_by_field_name("argument"))
        elif op == "+=" and left.type == "subscript_expression":
            added.add(_text(unit, left))
    return next((moved[k] for k in moved if k in added), None)


def _array_loop(ctx, L) -> Collective | None:
    unit, halving, stmts = ctx.unit, L.step_text in _HALVE, _flatten(L.body)
    steps, swapped = _array_steps(unit, stmts), _swapped(unit, stmts)
    tree = [f for _, d, fs, _ in steps if d == Affine.sym(L.var) for f in fs]
    hs = [f for _, d, fs, _ in steps if d.coeff(L.var) == Affine.const(-1) for f in fs]
    if tree:
        kind, how, folds = "reduce", f"shared-tree-{'sequential' if halving else 'interleaved'}", tree
    elif hs and not halving:
        kind, how, folds = "scan", "hillis-steele", hs
    elif swapped:
        kind, how, folds = "scan", "blelloch", [(swapped, "sum")]
    else:
        return None
    extent = (L.init if halving else L.bound)
    small = extent is not None and extent.value() is not None and extent.value() <= 32
    scope = "warp" if small and not ctx.barrier_in(L.node.start_byte, L.node.end_byte) else "block"
    return _make(unit, kind, scope, folds, how, L.node)


def _thread_loop(ctx, L) -> Collective | None:
    unit = ctx.unit
    if L.var is None or L.step is None or L.body is None:
        return None
    inside = {_text(unit, d.child_by_field_name("declarator"))
              for d in unit.nodes_of_type("init_declarator", within=L.node)}
    folds = [g[:2] for s in _flatten(L.body) if s.type not in _LOOPS for _, l, op, r in _assigns(unit, s)
             for g in [_self_fold(unit, l, op, r)]
             if g and g[0].isidentifier() and g[0] not in inside and L.var in sources(unit, g[2])]
    return _make(unit, "reduce", "thread", folds, "loop", L.node) if folds else None


def _unrolled(ctx) -> list[Collective]:
    """Steps written out one by one (16, 8, 4, 2, 1), in shuffles or in slots of an array."""
    unit, out, covered = ctx.unit, [], []
    for block in unit.nodes_of_type("compound_statement"):
        if any(a <= block.start_byte < b for a, b in covered):
            continue
        stmts = _flatten(block)
        ids, steps = {s.id for s in stmts}, []
        for o, off, v in ctx.shuffles():
            k = _const(unit, off) if _stmt(o.node).id in ids else None
            got = _combine(unit, o.node, stmts, lambda t, v=v: t == v) if k else []
            steps += [(o.name, k, got, _stmt(o.node))] if got else []
        steps += [("slots " + a, d.value(), f, s) for a, d, f, s in _array_steps(unit, stmts)
                  if (d.value() or 0) > 0]
        for key in sorted({s[0] for s in steps}):
            mine = sorted((s for s in steps if s[0] == key), key=lambda s: s[3].start_byte)
            out += _runs(ctx, key, mine, covered)
    return out


def _runs(ctx, key, steps, covered) -> list[Collective]:
    """Collectives of runs of two or more offsets, each half (a scan's: twice) the last."""
    out, run = [], []
    for s in steps + [None]:
        prev = run[-1][1] if run else None
        nxt = None if prev is None else prev * 2 if key == "shuffle.up" else prev / 2
        if s is not None and (prev is None or s[1] in (prev, nxt)):
            run.append(s)
            continue
        if len({x[1] for x in run}) >= 2:
            first, last, folds = run[0][3], run[-1][3], [f for x in run for f in x[2]]
            covered.append((first.start_byte, last.end_byte))
            if key.startswith("slots"):
                scope = "block" if ctx.barrier_in(first.start_byte, last.end_byte) else "warp"
                out.append(_make(ctx.unit, "reduce", scope, folds, "shared-tree-unrolled", first))
            else:
                kind = "scan" if key == "shuffle.up" else "reduce"
                out.append(_make(ctx.unit, kind, "warp", folds, _SHUFFLE[key], first))
        run = [s]
    return out


def _from_ops(ctx) -> list[Collective]:
    """``cg::reduce``, ``__reduce_*_sync``, ``cg::*_scan``."""
    return [_make(ctx.unit, "reduce" if o.name == "reduce.warp" else "scan", "warp",
                  o.reduce_op or ("custom" if o.name == "reduce.warp" else "sum"),
                  "cg-scan" if o.name == "scan.warp" else "reduce-intrinsic" if o.spelling.startswith("__")
                  else "cg-reduce", o.node, _text(ctx.unit, o.operands.get("value")))
            for o in ctx.ops if o.name in ("reduce.warp", "scan.warp")]


# ------------------------------------------------------- helpers, slots, atomics, look-back
def _callables(unit) -> dict[str, list]:
    """name -> [(body, parameter names)] of device helpers and of lambdas bound to a name."""
    out: dict[str, list] = {}
    for f in find_functions(unit):
        if not f.is_kernel:
            out.setdefault(f.name, []).append((f.node, [p.name for p in f.params]))
    for d in unit.nodes_of_type("init_declarator"):
        v, n = d.child_by_field_name("value"), d.child_by_field_name("declarator")
        if v is not None and n is not None and v.type == "lambda_expression":
            params = [([unit.text(i) for i in unit.walk(p) if i.type == "identifier"] or [None])[-1]
                      for p in unit.nodes_of_type("parameter_declaration", within=v)]
            out.setdefault(unit.text(n), []).append((v, params))
    return out


def _defined(unit, st) -> set[str]:
    """The variables statement ``st`` declares with a value or assigns."""
    decl = st.children_by_field_name("declarator") if st.type == "declaration" else []
    return {_text(unit, d.child_by_field_name("declarator")) for d in decl if d.type == "init_declarator"} \
        | {_text(unit, left) for _, left, _, _ in _assigns(unit, st)}


def _feeds(unit, c, x: str) -> bool:
    return x in _defined(unit, _stmt(c.node)) or x in (c.value or "").split(", ")


def _call_sites(ctx, found, helpers) -> list[Collective]:
    """The widest collective of a helper (not a thread's) at each call of it, its value
    the arguments the helper's value is passed in, or what the call's statement defines."""
    unit, out = ctx.unit, []
    for call in unit.nodes_of_type("call_expression"):
        for body, params in helpers.get(_callee(unit, call), ()):
            inner = [c for c in found if c.scope != "thread" and _within(c.node, body)]
            if inner and not _within(call, body):
                best, args = max(inner, key=lambda c: (_WIDTH[c.scope], -c.node.start_byte)), _args(call)
                mapped = [_text(unit, args[params.index(p)]) for p in (best.value or "").split(", ")
                          if p in params and params.index(p) < len(args)]
                mapped = mapped or sorted(_defined(unit, _stmt(call)))[:1]
                out.append(_make(unit, best.kind, best.scope, best.op, best.how, call,
                                 ", ".join(mapped) or None, via=_callee(unit, call), note=best.note))
                break
    return out


def _warp_slots(ctx, found) -> list[Collective]:
    """Warp results parked at a warp index, a block barrier, a warp collective (or one loop)
    over the slots."""
    unit, out = ctx.unit, []
    for a, left, op, right in _assigns(unit, unit.root):
        i = subscript_index(left) if op == "=" else None
        if i is None or _const(unit, i) is not None or not warp_uniform(unit, i).holds:
            continue
        fn, x = _fn_node(unit, a), _text(unit, right)
        arr = _text(unit, left.child_by_field_name("argument"))
        mine = [c for c in found if _within(c.node, fn)]
        before = [c for c in mine if c.scope == "warp" and c.node.end_byte <= a.start_byte
                  and _feeds(unit, c, x)]
        bar = [b for b in ctx.bars if _within(b, fn) and b.start_byte > a.end_byte]
        reads = [r for r in unit.nodes_of_type("subscript_expression", within=fn) if bar and
                 r.start_byte > bar[0].start_byte and _text(unit, r.child_by_field_name("argument")) == arr]
        after = [c for c in mine if reads and (c.scope == "warp" and c.node.end_byte > reads[0].start_byte
                 or c.scope == "thread" and any(_within(r, c.node) for r in reads))]
        if before and after:
            ops = {c.op for c in before if _stmt(c.node).id == _stmt(before[-1].node).id}
            note = "the operator is chosen at run time" if len(ops) > 1 else \
                "the slots are folded by one loop" if after[0].scope == "thread" else None
            out.append(_make(unit, after[0].kind, "block", ops.pop() if len(ops) == 1 else "custom",
                             "warp-slots", _stmt(a), x, note=note))
    return out


def _address(ctx, addr) -> tuple[str, bool]:
    """(the variable an address is taken in, whether every lane names that one address)."""
    a = strip_parens(addr)
    if a.type == "pointer_expression" and ctx.unit.text(a).startswith("&"):
        a = strip_parens(a.child_by_field_name("argument"))
        while a.type == "subscript_expression":
            if subscript_index(a) is None or not warp_uniform(ctx.unit, subscript_index(a)).holds:
                return "", False
            a = strip_parens(a.child_by_field_name("argument"))
        if a.type == "identifier" and ctx.unit.text(a) in ctx.shared:
            return ctx.unit.text(a), True
    return ctx.unit.text(a), warp_uniform(ctx.unit, a).holds


def _leader(unit, node) -> bool:
    """Whether ``node`` runs in one thread of its group (``if (lane == 0)``)."""
    for cond, _ in enclosing_conditions(unit, node):
        for b in unit.nodes_of_type("binary_expression", within=cond):
            sides = [b.child_by_field_name(k) for k in ("left", "right")]
            if unit.text(b.child_by_field_name("operator")) == "==" and None not in sides and \
                    len([s for s in sides if sources(unit, s) & THREAD_SYMBOLS]) == 1:
                return True
    return False


def _atomics(ctx, found) -> list[Collective]:
    unit, out = ctx.unit, []
    for o in (o for o in ctx.ops if o.name in _ATOMIC):
        addr, val = o.operands.get("address"), o.operands.get("value")
        base, same = _address(ctx, addr) if addr is not None else ("", False)
        if not same or val is None or _const(unit, val) is not None:
            continue  # a histogram (a per-lane address), a counter (a constant)
        block = base in ctx.shared or o.spelling.endswith("_block")
        fed = any(c.scope in ("warp", "block") and c.node.end_byte <= o.node.start_byte and
                  _fn_node(unit, c.node) == _fn_node(unit, o.node) and _feeds(unit, c, _text(unit, val))
                  for c in found)
        if block or fed or _leader(unit, o.node):
            out.append(_make(unit, "reduce", "block" if block else "grid", _ATOMIC[o.name], "atomic",
                             o.node, _text(unit, val)))
    return out


def _look_back(ctx, found) -> list[Collective]:
    """Spin loops (no counter, re-reading memory until a flag changes, storing only to the
    function's local arrays) in functions that scan."""
    unit, out = ctx.unit, []
    for L in ctx.loops:
        cond, fn = L.node.child_by_field_name("condition"), _fn_node(unit, L.node)
        if L.kind not in ("while", "do") or L.step is not None or None in (cond, L.body, fn):
            continue
        reads = [n for n in unit.walk(L.node) if n.type == "subscript_expression" or
                 (n.type == "pointer_expression" and unit.text(n).startswith("*"))]
        local = {_text(unit, d.child_by_field_name("declarator"))
                 for d in unit.nodes_of_type("array_declarator", within=fn)
                 if "__shared__" not in unit.text(d.parent)}
        assigned = {_text(unit, left) for _, left, _, _ in _assigns(unit, L.body)}
        spins = reads and all(t.isidentifier() or t.split("[")[0].strip() in local for t in assigned) and \
            (assigned & _idents(unit, cond) or any(_within(r, cond) for r in reads))
        scans = [c for c in found if c.kind == "scan" and c.scope != "grid" and _within(c.node, fn)]
        if spins and scans:
            out.append(_make(unit, "scan", "grid", scans[0].op, "look-back", L.node, note=_LOOKBACK))
    return out


# ---------------------------------------------------------------------------- the lists
def _add(found, new) -> bool:
    keys = {(c.node.id, c.how, c.via, c.scope) for c in found}
    fresh = [c for c in new if (c.node.id, c.how, c.via, c.scope) not in keys]
    found += fresh
    return bool(fresh)


def _compute(unit) -> list[Collective]:
    try:
        ctx, found, calls, helpers = _Ctx(unit), [], [], _callables(unit)
        for L in ctx.loops:
            stepped = L.var is not None and L.step_text in _HALVE | _DOUBLE
            c = (_warp_loop(ctx, L) or _array_loop(ctx, L)) if stepped else _thread_loop(ctx, L)
            _add(found, [c] if c else [])
        _add(found, _from_ops(ctx) + _unrolled(ctx))
        for _ in range(6):  # helpers of helpers: a block reduction built on a warp one
            grew = _add(found, _warp_slots(ctx, found + calls))
            new = _call_sites(ctx, found + calls, helpers)
            if not grew and {(c.node.id, c.how) for c in new} == {(c.node.id, c.how) for c in calls}:
                break
            calls = new
        found += calls
        _add(found, _atomics(ctx, found))
        _add(found, _look_back(ctx, found))
    except (RecursionError, ValueError, AttributeError, TypeError, IndexError, KeyError):  # odd code
        return []
    return sorted(found, key=lambda c: (c.node.start_byte, -_WIDTH[c.scope], c.how))


def collectives(unit: "Unit", fn: "Function | None" = None) -> list[Collective]:
    """The reductions and scans of the unit (those in ``fn`` when given), in source order."""
    every = unit.memo("model.collectives", _compute)
    return every if fn is None else [c for c in every if _within(c.node, fn.node)]


def synchronizations(unit: "Unit", fn: "Function") -> list[Sync]:
    """The barriers of ``fn`` and the calls of helpers or lambdas that hold one (``via``);
    a ``sync()`` of something that is not a cooperative group is none."""
    def compute(u):
        ops = {o.node.id: o for o in operations(u) if o.name.startswith("barrier.")}
        direct = []
        for b in barriers(u, None):  # the model knows the group (a user's sync() is none)
            o = ops.pop(b.node.id, None)
            direct.append((b.scope if o is None else o.definition.scope, o, b.node))
        direct += [(o.definition.scope, o, o.node) for o in ops.values()]  # under a using-directive
        return [("tile" if o is not None and o.group is not None and o.group.kind == "tile" else s, n)
                for s, o, n in direct if s is not None], _callables(u), {}

    direct, helpers, cache = unit.memo("model.synchronizations", compute)

    def within(node, seen):
        out = [(s, n, None) for s, n in direct if _within(n, node)]
        for call in unit.nodes_of_type("call_expression", within=node):
            for body, _ in helpers.get(_callee(unit, call), ()):
                if body.id not in seen and not _within(call, body):
                    scopes = dict.fromkeys(s for s, _, _ in within(body, seen | {body.id}))
                    out += [(s, call, _callee(unit, call)) for s in scopes]
        return out

    if fn.node.id not in cache:
        try:
            got = sorted(within(fn.node, frozenset({fn.node.id})), key=lambda g: g[1].start_byte)
        except RecursionError:
            got = []
        cache[fn.node.id] = [Sync(s, n, unit.location(n.start_byte).line, fn.name, via)
                             for s, n, via in got]
    return cache[fn.node.id]
