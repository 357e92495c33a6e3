"""Chunk-to-strided index remapping: ``coalesce-remap`` (optimize) and its inverse
``uncoalesce-remap`` (simplify).

Both passes start from a *chunk loop*: every thread handles ``C`` elements, the loop's
first statement names the element::

    for (int k = 0; k < C; ++k) {
      int i = tid * C + k;                                            // contiguous chunk
      int i = (blockIdx.x * blockDim.x) * C + k * blockDim.x + threadIdx.x;  // block-strided
      ... element i ...
    }

A block handles the same ``C * blockDim.x`` elements either way; only which thread of
the block handles which of them changes. The analysis of the loop body (what it reads,
writes and accumulates) is shared by the two passes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kltrans.analysis.affine import THREAD_SYMBOLS, Affine, element_address, Evaluator, affine_of
from kltrans.analysis.barriers import barrier_calls, barriers
from kltrans.analysis.loops import assigned_in
from kltrans.analysis.pointers import may_alias
from kltrans.analysis.verdict import Verdict
from kltrans.analysis.warps import warp_primitives
from kltrans.match import Rule
from kltrans.passes import Identifier, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.syntax import Edit
from kltrans.passes.guard import GLOBAL_INDEX, int_width as _width, builtin, check_contract
from kltrans.passes.rewrite import declared_names, inside, statements
from kltrans.passes.expr_facts import (
    FLOAT_TYPES as _FLOATS, INT_TYPES as _INTS, base_param as _base_param,
    decl_items as _decl_items, decl_type as _decl_type, mentions as _mentions,
    number_value as _num, side_effect_free as _pure, per_thread_sources as _thread_dep)
from kltrans.passes.token_forms import compact as _compact, line_of as _line, snippet as _snip
from kltrans.passes.vector_facts import expr_of as _expr_of
from kltrans.passes.reductions import (
    reduction_of as _reduction, IDEMPOTENT_OPS as _IDEMPOTENT, OP_IDENTITY as _IDENTITY)
from kltrans.analysis.affine import strip_parens as _strip

_BID = Affine.sym("blockIdx.x")
_BDIM = Affine.sym("blockDim.x")
_TID = Affine.sym("threadIdx.x")
_PER_THREAD = THREAD_SYMBOLS | {"?"}
_EXITS = ("return_statement", "goto_statement", "break_statement", "continue_statement")
_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_INLINE = "inline"

#: the chunk loop: ``for (int k = 0; k < C; STEP) { T i = E; ... }``
CHUNK_LOOP = Rule(pattern="for (int $K = 0; $K < $C; $STEP) $BODY;", inside_kernel=True,
                  constraints={"K": {"kind": "identifier"}, "BODY": {"kind": "compound_statement"}})


# ========================================================================= analysis
@dataclass
class Chunk:
    loop: object
    k: str
    c_node: object
    c_aff: "Affine | None"
    decl: object = None  # the declaration of the element index
    index: str | None = None
    value: object = None  # its initial value
    form: str | None = None  # "chunk" (tid * C + k), "strided" (the remapped form)
    tid: str | None = None  # the global-index variable the chunk form names (or None: inline)
    reductions: list = field(default_factory=list)
    accs: dict = field(default_factory=dict)  # accumulator -> (declaration, type, value)
    issues: dict = field(default_factory=dict)


def _issue(ch: Chunk, name: str, v: Verdict):
    ch.issues.setdefault(name, v)


_CACHE: dict = {}


def _analyse(site) -> Chunk:
    key = (id(site.unit), site.node.id)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is site.unit:
        return hit[1]
    ch = _build(site)
    if len(_CACHE) > 256:
        _CACHE.clear()
    _CACHE[key] = (site.unit, ch)
    return ch


def _strided(c_aff, k) -> Affine:
    return _BID * _BDIM * c_aff + Affine.sym(k) * _BDIM + _TID


def _global_index_var(unit, fn, name) -> bool:
    """``name`` is a variable of the kernel declared once as the global thread index."""
    for s in unit.walk(fn.body):
        if s.type != "declaration":
            continue
        for nm, _, value in _decl_items(unit, s):
            if nm == name and value is not None:
                return affine_of(unit, value) == GLOBAL_INDEX and \
                    not assigned_in(unit, fn.body, name) and \
                    len([n for n, _ in declared_names(unit, fn.node) if n == name]) == 1
    return False


def _build(site) -> Chunk:
    unit, fn = site.unit, site.function
    loop = site.node
    k = site.text("K")
    c_node = site.match.bindings["C"]
    ch = Chunk(loop, k, c_node, affine_of(unit, c_node))
    step = _compact(site.text("STEP"))
    if step not in (f"++{k}", f"{k}++", f"{k}+=1"):
        _issue(ch, "index-form", Verdict.no(f"the loop steps by `{site.text('STEP')}`, not by 1"))
    if ch.c_aff is None or _thread_dep(unit, c_node) & _PER_THREAD or not _pure(unit, c_node):
        _issue(ch, "index-form", Verdict.no(
            f"the chunk size `{_snip(unit, c_node)}` is not a thread-independent integer"))
        return ch
    if assigned_in(unit, site.match.bindings["BODY"], k):
        _issue(ch, "index-form", Verdict.no(f"the loop body assigns its counter {k}"))
    body = statements(site.match.bindings["BODY"])
    first = body[0] if body else None
    items = _decl_items(unit, first) if first is not None and first.type == "declaration" else []
    if len(items) != 1 or items[0][2] is None:
        _issue(ch, "index-form", Verdict.no(
            "the loop body does not start with the element index `int i = ...;`"))
        return ch
    ch.decl, (ch.index, _, ch.value) = first, items[0]
    if _width(_decl_type(unit, first)) is None:
        _issue(ch, "index-form", Verdict.no(f"the element index {ch.index} is a "
                                           f"{_decl_type(unit, first)}, not an integer"))
    a = affine_of(unit, ch.value)
    if a is not None and a == GLOBAL_INDEX * ch.c_aff + Affine.sym(k):
        ch.form = "chunk"
        v = _strip(ch.value)
        tid = None
        if v.type == "binary_expression":
            for side in ("left", "right"):
                t = _strip(v.child_by_field_name(side))
                if t.type == "binary_expression" and \
                        unit.text(t.child_by_field_name("operator")) == "*":
                    for s2 in ("left", "right"):
                        x = _strip(t.child_by_field_name(s2))
                        if x.type == "identifier" and _global_index_var(unit, fn, unit.text(x)):
                            tid = unit.text(x)
        ch.tid = tid
    elif a is not None and a == _strided(ch.c_aff, k):
        ch.form = "strided"
    else:
        _issue(ch, "index-form", Verdict.no(
            f"`{ch.index} = {_snip(unit, ch.value)}` is neither the chunk index tid * "
            f"{_snip(unit, c_node)} + {k} (tid the global thread index) nor the block-strided "
            f"(blockIdx.x * blockDim.x) * {_snip(unit, c_node)} + {k} * blockDim.x + "
            f"threadIdx.x"))
    if assigned_in(unit, fn.body, ch.index):
        _issue(ch, "index-form", Verdict.no(f"the element index {ch.index} is assigned"))
    _check_body(ch, site, body[1:])
    return ch


def _check_body(ch: Chunk, site, rest):
    unit, fn = site.unit, site.function
    own = {ch.index} | {n for s in rest for n, _ in declared_names(unit, s)}
    # statements: declarations, guards, element writes, reductions into accumulators
    writes, reads = [], []

    def visit(s):
        if s.type == "compound_statement":
            for t in statements(s):
                visit(t)
            return
        if s.type == "declaration":
            if not _pure(unit, s):
                _issue(ch, "element-private", Verdict.no(
                    f"line {_line(unit, s)}: `{_snip(unit, s)}` has side effects"))
            if any(n.type == "array_declarator" for n in unit.walk(s)):
                _issue(ch, "element-private", Verdict.no(
                    f"line {_line(unit, s)}: `{_snip(unit, s)}` declares an array"))
            return
        if s.type == "if_statement":
            cond = s.child_by_field_name("condition")
            if not _pure(unit, cond):
                _issue(ch, "element-private", Verdict.no(
                    f"line {_line(unit, s)}: the condition has side effects"))
            visit(s.child_by_field_name("consequence"))
            alt = s.child_by_field_name("alternative")
            if alt is not None:
                for t in alt.named_children:
                    visit(t)
            return
        e = _expr_of(s)
        if e is None or e.type != "assignment_expression":
            if s.type in _EXITS:
                return  # reported as no-early-exit
            if s.type == "expression_statement" and any(
                    n.type == "call_expression" for n in unit.walk(s)):
                return  # a call: barriers and warp primitives are no-barrier's; others below
            _issue(ch, "element-private", Verdict.no(
                f"line {_line(unit, s)}: `{_snip(unit, s)}` is not an element-wise statement "
                "(declarations, branches, element writes and reductions only)"))
            return
        if not _pure(unit, e.child_by_field_name("right")):
            _issue(ch, "element-private", Verdict.no(
                f"line {_line(unit, s)}: `{_snip(unit, s)}` has side effects"))
        left = _strip(e.child_by_field_name("left"))
        if left.type == "identifier":
            nm = unit.text(left)
            if nm in own and nm != ch.index:
                return
            r = _reduction(unit, e, nm)
            if isinstance(r, str):
                _issue(ch, "element-private", Verdict.no(r))
            else:
                ch.reductions.append(r)
            return
        if left.type == "subscript_expression":
            writes.append(left)
            return
        _issue(ch, "element-private", Verdict.no(
            f"line {_line(unit, s)}: writes through `{_snip(unit, left)}`: only subscripts are "
            "analysed"))

    for s in rest:
        visit(s)
    accs = {r.var for r in ch.reductions}
    for s in rest:
        for n in unit.walk(s):
            if n.type in _EXITS:
                _issue(ch, "no-early-exit", Verdict.no(
                    f"line {_line(unit, n)}: `{_snip(unit, n)}` leaves an element early: the "
                    "thread's other elements (now a different set) would be skipped"))
            b = builtin(unit, n)
            if b is not None and b in THREAD_SYMBOLS | {"blockIdx.x", "blockDim.x"}:
                _issue(ch, "element-private", Verdict.no(
                    f"line {_line(unit, n)}: the body reads {b}: it may depend on the thread "
                    f"only through {ch.index}"))
            if n.type == "identifier":
                nm = unit.text(n)
                if nm == ch.k:
                    _issue(ch, "element-private", Verdict.no(
                        f"line {_line(unit, n)}: the body uses the counter {ch.k}: it may "
                        f"depend on the position in the chunk only through {ch.index}"))
                elif nm not in own and nm not in accs and _thread_dep(unit, n) & _PER_THREAD and \
                        not (n.parent is not None and n.parent.type == "call_expression" and
                             n.parent.child_by_field_name("function").id == n.id):
                    _issue(ch, "element-private", Verdict.no(
                        f"line {_line(unit, n)}: the body reads `{nm}`, which depends on the "
                        f"thread other than through {ch.index}"))
    for s in rest:
        for n in unit.walk(s):
            if n.type == "call_expression" and not _pure(unit, n):
                f = n.child_by_field_name("function")
                nm = unit.text(f) if f is not None else "?"
                if not any(n.id == w.node.id for w in warp_primitives(unit, fn)) and \
                        not any(n.id == c.id for c, _ in barrier_calls(unit, fn)) and \
                        not any(inside(b.node, n) or b.node.id == n.id
                                for b in barriers(unit, fn)):
                    _issue(ch, "element-private", Verdict.no(
                        f"line {_line(unit, n)}: the call {nm}(...) may have side effects"))
            if n.type == "subscript_expression" and not any(n.id == w.id for w in writes):
                reads.append(n)
            if n.type == "pointer_expression" and \
                    unit.text(n.child_by_field_name("operator")) == "*":
                _issue(ch, "element-private", Verdict.unknown(
                    f"line {_line(unit, n)}: the dereference `{_snip(unit, n)}` is not analysed"))
    for w in writes:
        p = w.parent
        if p.child_by_field_name("operator") is not None and \
                unit.text(p.child_by_field_name("operator")) != "=":
            reads.append(w)
    env = {ch.index: Affine.sym("@i")}

    def addr(sub):
        try:
            return element_address(unit, sub, Evaluator(unit, env))[0]
        except Exception:
            return None

    written = set()
    for w in writes:
        base = _base_param(unit, fn, w.child_by_field_name("argument"))
        a = addr(w)
        if base is None or a is None or a != Affine.sym("@i"):
            _issue(ch, "element-private", Verdict.no(
                f"line {_line(unit, w)}: `{_snip(unit, w)}` is not the element [{ch.index}] of "
                "a parameter array: another thread could touch it after the remap"))
        else:
            written.add(base)
    ch.outside = []
    for r in reads:
        base = _base_param(unit, fn, r.child_by_field_name("argument"))
        a = addr(r)
        if a is not None and a == Affine.sym("@i"):
            continue
        if base is None:
            _issue(ch, "element-private", Verdict.unknown(
                f"line {_line(unit, r)}: cannot tell which array `{_snip(unit, r)}` reads"))
        elif base in written:
            _issue(ch, "element-private", Verdict.no(
                f"line {_line(unit, r)} reads `{_snip(unit, r)}` of {base}, which the loop "
                f"writes, at another element than {ch.index}: after the remap another thread "
                "may write it first"))
        else:
            ch.outside.append((r, base))
    ch.written = written
    _check_accumulators(ch, site, rest)


def _check_accumulators(ch: Chunk, site, rest):
    """Private accumulators: declared before the loop at the identity, reduced once in
    it, used after it only by an atomic of the same operator at a thread-independent
    address (the block's set of elements is the same, the thread's is not)."""
    unit, fn = site.unit, site.function
    body = ch.loop.child_by_field_name("body")
    seen = set()
    for r in ch.reductions:
        if r.var in seen:
            _issue(ch, "element-private", Verdict.no(f"{r.var} is reduced twice in the loop"))
        seen.add(r.var)
        other = [n for n in _mentions(unit, body, r.var) if not inside(n, r.stmt)]
        if other:
            _issue(ch, "element-private", Verdict.no(
                f"line {_line(unit, other[0])} reads the accumulator {r.var} outside its "
                "reduction: its partial value depends on which elements the thread had"))
        decl = None
        for s in statements(fn.body):
            if s.type == "declaration" and s.end_byte <= ch.loop.start_byte:
                for nm, _, value in _decl_items(unit, s):
                    if nm == r.var:
                        decl = (s, _decl_type(unit, s), value)
        if decl is None or ch.loop.parent is None or ch.loop.parent.id != fn.body.id:
            _issue(ch, "element-private", Verdict.no(
                f"the accumulator {r.var} is not a scalar declared in the kernel body before "
                "the chunk loop"))
            continue
        ch.accs[r.var] = decl
        s, _, value = decl
        between = [t for t in statements(fn.body)
                   if s.end_byte <= t.start_byte and t.end_byte <= ch.loop.start_byte]
        if any(assigned_in(unit, t, r.var) for t in between):
            _issue(ch, "element-private", Verdict.no(f"{r.var} is assigned before the loop"))
        if r.op not in _IDEMPOTENT and (value is None or _num(unit, value) != _IDENTITY[r.op]):
            _issue(ch, "element-private", Verdict.no(
                f"{r.var} does not start at {_IDENTITY[r.op]}, the identity of {r.op}"))
        atomics = {"+": "atomicAdd", "max": "atomicMax", "min": "atomicMin", "|": "atomicOr",
                   "&": "atomicAnd"}
        want = atomics.get(r.op)
        uses = [n for n in _mentions(unit, fn.body, r.var)
                if n.start_byte >= ch.loop.end_byte]
        for n in uses:
            call = n.parent.parent if n.parent is not None else None
            ok = call is not None and call.type == "call_expression" and \
                unit.text(call.child_by_field_name("function")) == want and \
                call.parent is not None and call.parent.type == "expression_statement"
            if ok:
                args = [a for a in call.child_by_field_name("arguments").named_children
                        if a.type != "comment"]
                ok = len(args) == 2 and args[1].id == n.id and \
                    not (_thread_dep(unit, args[0]) & _PER_THREAD)
            if not ok:
                _issue(ch, "element-private", Verdict.no(
                    f"line {_line(unit, n)} uses the accumulator {r.var} after the loop other "
                    f"than in {want or 'an atomic'}(P, {r.var}) with a thread-independent P: "
                    "each thread's partial now covers other elements"))


# ================================================================== preconditions
def _report(name: str, yes: str):
    def check(site, ctx) -> Verdict:
        ch = _analyse(site)
        v = ch.issues.get(name)
        if v is not None:
            return v
        if name == "element-private":
            for r, base in getattr(ch, "outside", []):
                for w in sorted(getattr(ch, "written", ())):
                    a = may_alias(site.unit, site.function, base, w)
                    if a.fails or ctx.assumed("no_alias", base, w):
                        continue
                    return Verdict.unknown(
                        f"line {_line(site.unit, r)} reads {base} at `{_snip(site.unit, r)}`, "
                        f"not element {ch.index}, and {base} may overlap {w}, which the loop "
                        f"writes ({a.reason}); declare them __restrict__ or pass --assume "
                        f"'no_alias({base},{w})'")
        return Verdict.yes(yes.format(i=ch.index or "i", k=ch.k))
    return check


def _index_form(want: str):
    def check(site, ctx) -> Verdict:
        ch = _analyse(site)
        v = ch.issues.get("index-form")
        if v is not None:
            return v
        unit = site.unit
        e = f"`{ch.index} = {_snip(unit, ch.value)}`"
        if ch.form != want:
            if want == "chunk":
                return Verdict.no(f"{e} is already block-strided: consecutive threads touch "
                                  "consecutive elements")
            return Verdict.no(f"{e} is the contiguous chunk index, not the block-strided one")
        if want == "chunk":
            return Verdict.yes(f"{e} is tid * C + {ch.k}: each thread walks its own chunk")
        return Verdict.yes(f"{e} is (blockIdx.x * blockDim.x) * C + {ch.k} * blockDim.x + "
                           "threadIdx.x")
    return check


def _reduction_ops(site, ctx) -> Verdict:
    ch = _analyse(site)
    if not ch.reductions:
        return Verdict.yes("no accumulator: the loop is element-wise")
    for r in ch.reductions:
        ty = ch.accs[r.var][1].replace("const ", "") if r.var in ch.accs else None
        if ty is None:
            return Verdict.unknown(f"the type of the accumulator {r.var} is not known")
        if ty not in _FLOATS | _INTS:
            return Verdict.no(f"the accumulator {r.var} is a {ty}")
        if ty in _FLOATS and r.op in ("|", "&"):
            return Verdict.no(f"{r.op} on the {ty} {r.var}")
        if ty in _FLOATS and r.op in ("+", "*") and not ctx.assumed("reassoc"):
            return Verdict.unknown(
                f"{r.var} {r.op}= ... (line {_line(site.unit, r.stmt)}) is a {ty} "
                f"{'sum' if r.op == '+' else 'product'}: each thread's partial covers other "
                "elements, which rounds differently; pass --assume reassoc when that is "
                "acceptable")
    return Verdict.yes("accumulators use associative, commutative operators"
                       + (" (float reassociation assumed)" if ctx.assumed("reassoc") else ""))


def _no_barrier(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    loop = site.node
    for b in barriers(unit, fn):
        if inside(b.node, loop):
            return Verdict.no(f"{b.kind} at line {b.line} inside the chunk loop: the remap "
                              "changes which elements the threads hold when they meet there")
    for call, why in barrier_calls(unit, fn):
        if inside(call, loop):
            return Verdict.no(f"line {_line(unit, call)}: {why}")
    for w in warp_primitives(unit, fn):
        if inside(w.node, loop):
            return Verdict.no(f"warp primitive {w.name} at line {w.line} inside the chunk loop: "
                              "lanes exchange values of other elements after the remap")
    return Verdict.yes("no barrier or warp primitive in the chunk loop")


def _no_early_exit(site, ctx) -> Verdict:
    ch = _analyse(site)
    return ch.issues.get("no-early-exit") or Verdict.yes("no return, break, continue or goto "
                                                         "in the chunk loop")


_SHARED = (
    Precondition("no-barrier", "pipeline",
                 "no barrier or warp primitive inside the chunk loop", _no_barrier),
    Precondition("no-early-exit", "pipeline",
                 "no return, break, continue or goto in the chunk loop", _no_early_exit),
    Precondition("element-private", "storage",
                 "elements are independent: writes at [i] only, arrays written read only at "
                 "[i], other reads do not overlap them, accumulators private and combined by "
                 "an atomic",
                 _report("element-private", "each element {i} is handled on its own; "
                         "accumulators only meet in an atomic")),
    Precondition("reduction-ops", "dtype",
                 "accumulators use associative, commutative operators (float + and * need "
                 "--assume reassoc)", _reduction_ops),
    Precondition("launch-contract", "hardware",
                 "a 1-D `// kltrans: launch` header (the grid is unchanged: a block covers "
                 "C * blockDim.x elements before and after)", check_contract),
)


# ========================================================================= passes
@dataclass(frozen=True)
class CoalesceRemap(Pass):
    """Remap a per-thread contiguous chunk to a block-strided one, so warps coalesce.

    Before::

        // kltrans: launch scale grid=ceil_div(n, 256 * 4) block=256
        int tid = blockIdx.x * blockDim.x + threadIdx.x;
        for (int k = 0; k < 4; ++k) {
          int i = tid * 4 + k;
          if (i < n) y[i] = a * x[i] + b;
        }

    After ``coalesce-remap``::

        // kltrans: launch scale grid=ceil_div(n, 256 * 4) block=256
        int tid = blockIdx.x * blockDim.x + threadIdx.x;
        for (int k = 0; k < 4; ++k) {
          int i = (blockIdx.x * blockDim.x) * 4 + k * blockDim.x + threadIdx.x;
          if (i < n) y[i] = a * x[i] + b;
        }

    Before, the 32 lanes of a warp touch addresses C elements apart on every iteration;
    after, they touch 32 consecutive elements. Block b covers the elements
    ``[b * blockDim.x * C, (b + 1) * blockDim.x * C)`` in both forms, only the thread
    that handles each element changes, so the grid is unchanged and no size fact is
    needed (the body's own guard, if any, still bounds every element). ``tid`` stays
    declared (it may become unused). The chunk size C is the loop bound: a literal, a
    ``#define`` or a template parameter.

    Preconditions: index-form (layout: the loop is ``for (int k = 0; k < C; ++k)`` with a
    thread-independent C, its first statement declares ``i = tid * C + k`` with ``tid``
    the global thread index (named or written out), neither ``i`` nor ``k`` assigned),
    element-private (storage: the body depends on the thread and on ``k`` only through
    ``i``; it writes only element ``[i]`` of parameter arrays; an array it writes is read
    only at ``[i]``; arrays read at other elements must not overlap written ones —
    ``__restrict__``, distinct element sizes, or ``--assume no_alias(...)``; accumulators
    are scalars declared before the loop at the identity, reduced once, and used after it
    only in ``atomicAdd(P, acc)`` (or the atomic of their operator) with P
    thread-independent), reduction-ops (dtype: accumulators use +, *, |, &, min/max;
    float + and * need ``--assume reassoc``), no-barrier (pipeline: no barrier or warp
    primitive in the loop), no-early-exit (pipeline: no return/break/continue/goto in the
    loop), launch-contract (hardware: a 1-D launch header; nothing in it changes).

    Options: none (the inverse takes the name of the global index variable, if any).
    """

    name = "coalesce-remap"
    kind = "optimize"
    inverse = "uncoalesce-remap"
    anchor = CHUNK_LOOP
    preconditions = (
        Precondition("index-form", "layout",
                     "the chunk loop from 0 by 1 to C starts with i = tid * C + k, tid the "
                     "global thread index", _index_form("chunk")),
    ) + _SHARED

    def rewrite(self, site, ctx):
        ch = _analyse(site)
        if ch.form != "chunk":
            raise SkipSite("not a chunk index")
        c = site.unit.text(ch.c_node)
        if ch.c_node.type not in ("identifier", "number_literal"):
            c = f"({c})"
        text = f"(blockIdx.x * blockDim.x) * {c} + {ch.k} * blockDim.x + threadIdx.x"
        return [Edit(ch.value.start_byte, ch.value.end_byte, text)]

    def inverse_for(self, site, ctx):
        ch = _analyse(site)
        return UncoalesceRemap(tid=ch.tid or _INLINE)


@dataclass(frozen=True)
class UncoalesceRemap(Pass):
    """Give each thread a contiguous chunk again (undo coalesce-remap).

    Before::

        int tid = blockIdx.x * blockDim.x + threadIdx.x;
        for (int k = 0; k < 4; ++k) {
          int i = (blockIdx.x * blockDim.x) * 4 + k * blockDim.x + threadIdx.x;
          if (i < n) y[i] = a * x[i] + b;
        }

    After ``uncoalesce-remap{tid=tid}``::

        int tid = blockIdx.x * blockDim.x + threadIdx.x;
        for (int k = 0; k < 4; ++k) {
          int i = tid * 4 + k;
          if (i < n) y[i] = a * x[i] + b;
        }

    Preconditions: index-form (layout: the loop ``for (int k = 0; k < C; ++k)`` starts
    with ``i`` whose value is ``blockIdx.x * blockDim.x * C + k * blockDim.x +
    threadIdx.x``, however spelled), and, as for coalesce-remap, element-private
    (storage), reduction-ops (dtype), no-barrier and no-early-exit (pipeline),
    launch-contract (hardware; the grid is unchanged).

    Options: ``tid``: the variable holding the global thread index to write ``tid * C +
    k`` with (it must be declared in the kernel as blockIdx.x * blockDim.x + threadIdx.x),
    ``inline`` for ``(blockIdx.x * blockDim.x + threadIdx.x) * C + k``, or ``auto``
    (default: such a variable when the kernel has one, else inline).
    """

    name = "uncoalesce-remap"
    kind = "simplify"
    inverse = "coalesce-remap"
    anchor = CHUNK_LOOP
    preconditions = (
        Precondition("index-form", "layout",
                     "the chunk loop from 0 by 1 to C starts with i = (blockIdx.x * "
                     "blockDim.x) * C + k * blockDim.x + threadIdx.x", _index_form("strided")),
    ) + _SHARED

    tid: str = option("auto", Identifier(), "global-index variable to write tid * C + k with "
                      "(auto: one the kernel declares, else inline)")

    def _tid(self, site) -> str:
        unit, fn = site.unit, site.function
        if self.tid == _INLINE:
            return "(blockIdx.x * blockDim.x + threadIdx.x)"
        if self.tid != "auto":
            if not _global_index_var(unit, fn, self.tid):
                raise SkipSite(f"{self.tid} is not a variable holding the global thread index")
            return self.tid
        for s in statements(fn.body):
            if s.type == "declaration" and s.start_byte < site.node.start_byte:
                for nm, _, _ in _decl_items(unit, s):
                    if _global_index_var(unit, fn, nm):
                        return nm
        return "(blockIdx.x * blockDim.x + threadIdx.x)"

    def rewrite(self, site, ctx):
        ch = _analyse(site)
        if ch.form != "strided":
            raise SkipSite("not the block-strided index")
        c = site.unit.text(ch.c_node)
        if ch.c_node.type not in ("identifier", "number_literal"):
            c = f"({c})"
        return [Edit(ch.value.start_byte, ch.value.end_byte, f"{self._tid(site)} * {c} + {ch.k}")]

    def inverse_for(self, site, ctx):
        return CoalesceRemap()
