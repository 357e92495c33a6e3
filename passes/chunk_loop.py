"""Chunked grid-stride loops: ``chunk-loop`` (optimize) and its inverse ``unchunk-loop``.

A grid-stride loop over ``n`` elements becomes a loop over ``n / W`` chunks of W
consecutive elements (the form vector loads and stores need) and a scalar tail for the
last ``n % W`` elements, one per thread. Whether the two do the same thing is read from
the kernel model (:mod:`kltrans.model.effects`): the chunk body must store, at concrete
sizes and thread ids, exactly what the W elements' scalar bodies store, and no element may
touch what another writes. The spelling of either side does not matter.
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis import loop_of
from kltrans.analysis.affine import strip_parens
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.accesses import accesses
from kltrans.model.effects import Machine, Unsupported, before, draws, interference, run_with
from kltrans.model.grid import sized_launches, same_grid_results
from kltrans.model.launch import block_dim, regrid
from kltrans.model.loops import loop_fact
from kltrans.passes import Choice, Identifier, OneOf, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import (dead_declarations, declarator_ident,
                                    drop_unused_definitions, fresh_numbered, indent_of,
                                    insert_lines_before, lex, norm, remove, remove_described,
                                    rename, rewritten_unit, splice, statements, unshift,
                                    used_names)
from kltrans.syntax import Edit
from kltrans.syntax.contract import contracts
from kltrans.syntax.cuda import subscript_index

WIDTHS = (2, 4, 8, 16)
MAX_CHUNK_TOKENS = 4096
_LOOPS = Rule(any=(Rule(kind="for_statement"), Rule(kind="while_statement")))
_VECTORS = {2: "float2", 4: "float4"}


# ----------------------------------------------------------------------- reading
@dataclass(frozen=True)
class Tail:
    """The scalar tail after a chunk loop: ``int J = START; if (J < N) BODY`` (kind ``if``),
    ``for (int J = START; J < N; J += STRIDE) BODY`` (kind ``loop``) or ``if (G) BODY``
    whose accesses all index one element ``E`` (kind ``guard``: START is E, ``sites`` its
    occurrences, N read from the chunk count ``C = N / W``)."""

    kind: str
    var: str
    start: object  # START
    stmt: object  # the if or for statement
    bound: object  # N
    body: object
    stride: object = None  # STRIDE (loop)
    sites: tuple = ()  # E's index expressions (guard)
    width: int | None = None  # W of C = N / W (guard)


def _grid_loop(site):
    """(analysis loop, var, bound node) of a grid-stride loop ``var < bound``, or why not."""
    fact = loop_fact(site.unit, site.node)
    lp = loop_of(site.unit, site.node)
    if fact is None or fact.kind != "grid-stride" or lp is None:
        return f"not a grid-stride loop ({fact.reason if fact else 'no loop fact'})"
    if lp.cond_op != "<" or lp.bound_node is None or lp.var is None:
        return f"the loop condition is not `{lp.var} < N`"
    if site.node.parent is None or site.node.parent != site.function.body:
        return "the loop is not a statement of the kernel's body"
    return lp, lp.var, lp.bound_node


def _tail(site) -> Tail | str:
    unit, nxt = site.unit, _next(site.node)
    decl = None
    if nxt is not None and nxt.type == "for_statement":
        lp = loop_of(unit, nxt)
        init = nxt.child_by_field_name("initializer")
        if lp is None or lp.var is None or lp.cond_op != "<" or lp.step_op != "+=" or \
                init is None or init.type != "declaration" or lp.init_node is None:
            return "the tail loop is not `for (int j = START; j < n; j += stride)`"
        return Tail("loop", lp.var, lp.init_node, nxt, lp.bound_node, lp.body, lp.step_node)
    if nxt is not None and nxt.type == "declaration" and \
            len(nxt.children_by_field_name("declarator")) == 1:
        decl, nxt = nxt, _next(nxt)
    if nxt is None or nxt.type != "if_statement" or nxt.child_by_field_name("alternative"):
        return ("the loop is not followed by a scalar tail `int j = ...; if (j < n) ...`, "
                "`if (G) { ... P[E] ... }` or `for (int j = ...; j < n; j += stride) ...`")
    cond = nxt.child_by_field_name("condition").named_children[-1]
    while cond.type == "parenthesized_expression":
        cond = cond.named_children[-1]
    if decl is None or cond.type != "binary_expression" or \
            unit.text(cond.child_by_field_name("operator")) != "<" or \
            cond.child_by_field_name("left").type != "identifier":
        return _guard_tail(site, nxt) if decl is None else "the tail's condition is not `j < n`"
    var = unit.text(cond.child_by_field_name("left"))
    ident = declarator_ident(decl.children_by_field_name("declarator")[0]) if decl else None
    if ident is None or unit.text(ident) != var:
        return f"the tail's index {var} is not declared right before it"
    value = decl.children_by_field_name("declarator")[0].child_by_field_name("value")
    if value is None:
        return f"the tail's index {var} has no initial value"
    return Tail("if", var, value, nxt, cond.child_by_field_name("right"),
                nxt.child_by_field_name("consequence"))


def _guard_tail(site, stmt) -> Tail | str:
    """``if (G) BODY`` after the chunk loop: every access of BODY (the kernel model's) is
    ``P[E]`` for one element expression E; the element count N is the dividend of the
    chunk count (``C = N / W`` or ``N >> k``, declared before the loop or inline)."""
    unit, fn, body = site.unit, site.function, stmt.child_by_field_name("consequence")
    inside = [a for a in accesses(unit, fn)
              if body.start_byte <= a.node.start_byte < body.end_byte and a.space == "global"]
    if not inside or any(a.node.type != "subscript_expression" or a.width != 1 for a in inside):
        return "the tail's condition is not `j < n` and its accesses are not all `P[E]`"
    sites = tuple(subscript_index(a.node) for a in inside)
    if None in sites or len({norm(unit.text(x)) for x in sites}) != 1:
        return "the tail's accesses index more than one element"
    got = _dividend(site)
    if isinstance(got, str):
        return got
    return Tail("guard", None, sites[0], stmt, got[0], body, sites=sites, width=got[1])


def _dividend(site):
    """N of the chunk loop's bound ``C`` with ``C = N / W`` or ``N >> k`` (C declared in the
    kernel's body before the loop, or the bound itself), or why not."""
    unit, lp = site.unit, loop_of(site.unit, site.node)
    c = strip_parens(lp.bound_node)
    if c.type == "identifier":
        name = unit.text(c)
        decls = [x for x in statements(site.function.body)
                 if x.type == "declaration" and x.end_byte <= site.node.start_byte and
                 any(unit.text(declarator_ident(d) or d) == name
                     for d in x.children_by_field_name("declarator"))]
        d = next((d for d in decls[-1].children_by_field_name("declarator")
                  if unit.text(declarator_ident(d) or d) == name), None) if decls else None
        c = strip_parens(d.child_by_field_name("value")) if d is not None and \
            d.child_by_field_name("value") is not None else None
        if c is None:
            return f"the chunk count {name} is not declared with a value before the loop"
    op = unit.text(c.child_by_field_name("operator")) if c.type == "binary_expression" else None
    right = c.child_by_field_name("right") if op else None
    k = int(unit.text(right)) if right is not None and unit.text(right).isdigit() else None
    w = k if op == "/" else 1 << k if op == ">>" and k is not None and k < 8 else None
    if w not in WIDTHS:
        return f"the chunk count is not `N / W` or `N >> k` for a W in {WIDTHS}"
    return c.child_by_field_name("left"), w


def _next(node):
    nxt = node.next_named_sibling
    while nxt is not None and nxt.type == "comment":
        nxt = nxt.next_named_sibling
    return nxt


def _block(site) -> int | None:
    c = contracts(site.unit).get(site.function.name)
    return block_dim(c).value if c is not None else None


def _reading(site, ctx):
    """Everything unchunk-loop needs, read once per site: a dict, or why not."""
    key = ("unchunk", site.node.id)
    memo = site.unit.memo("chunk_loop", lambda u: {})
    if key not in memo:
        memo[key] = _read_chunks(site)
    return memo[key]


def _read_chunks(site):
    got = _grid_loop(site)
    if isinstance(got, str):
        return got
    lp, var, bound = got
    tail = _tail(site)
    if isinstance(tail, str):
        return tail
    unit, fn = site.unit, site.function
    if any(n.type == "identifier" and unit.text(n) == var for n in unit.walk(tail.body)):
        return f"the tail's body reads {var}, the name the merged loop's index takes"
    width = None
    checked = []
    for ints in draws(fn, _block(site), seed=site.node.start_byte):
        m = Machine(unit, fn, ints)
        try:
            env = before(m, site.node)
            count = m.value(bound, env)
            start = m.value(lp.init_node, env)
            n = m.value(tail.bound, env)
            j = m.value(tail.start, env)
            step = m.value(tail.stride, env) if tail.stride is not None else None
        except (Unsupported, AttributeError) as e:
            return f"the sizes cannot be read at concrete values: {e}"
        if tail.kind == "loop" and step != ints["blockDim.x"] * ints["gridDim.x"]:
            return (f"the tail loop does not step by the grid's thread count "
                    f"({unit.text(tail.stride)})")
        if not all(isinstance(v, int) for v in (count, start, n, j)) or count <= 0:
            return "the chunk count, the start, n or the tail index is not an integer"
        w = tail.width if tail.kind == "guard" else \
            (j - start) // count if (j - start) % count == 0 else None
        if w not in WIDTHS or (width is not None and w != width):
            return (f"the tail does not start at W * {unit.text(bound)} + "
                    f"{unit.text(lp.init_node)} for one W in {WIDTHS}")
        width = w
        if not count * w <= n < (count + 1) * w:
            return (f"{unit.text(bound)} is not {unit.text(tail.bound)} / {w} "
                    f"(at {unit.text(tail.bound)}={n}: {count})")
        checked.append((m, env, start % count))
    return {"loop": lp, "var": var, "bound": bound, "tail": tail, "width": width,
            "draws": checked}


#: the sizes the grid machine compares a merged loop at: neither a multiple of a width, so
#: that the tail has work; the last grows until the grid has two blocks (a tail that runs
#: in every block shows only there)
GRID_CHECK_SIZES = (18, 35)


def _same_grid(site, ctx) -> tuple:
    """(same, why) of the kernel before and after the merge, over whole grids (the grid
    machine, :mod:`kltrans.model.grid`) at GRID_CHECK_SIZES; None where it cannot run."""
    try:
        new = rewritten_unit(site, ctx)
    except SkipSite as e:
        return None, str(e)
    fn = site.function
    return same_grid_results(site.unit, new, fn.name,
                             sized_launches(site.unit, fn, GRID_CHECK_SIZES[:1]) +
                             sized_launches(site.unit, fn, GRID_CHECK_SIZES[1:], min_blocks=2))


def _stores_nothing(reading) -> bool:
    """Whether the chunk body stores nothing at any draw (what it does stays in registers:
    comparing stores then says nothing)."""
    body = reading["loop"].body
    try:
        return not any(run_with(m, env, {reading["var"]: i}, [body]).stores
                       for m, env, i in reading["draws"])
    except Unsupported:
        return True


def _same_elements(reading) -> str | None:
    w, var, tail = reading["width"], reading["var"], reading["tail"]
    body = reading["loop"].body
    for m, env, i in reading["draws"]:
        try:
            chunk = run_with(m, env, {var: i}, [body])
            lanes = {w * i + c: run_with(m, env, {tail.var: w * i + c}, [tail.body])
                     for c in range(w)}
        except Unsupported as e:
            return f"cannot run the bodies: {e}"
        joined = {}
        for fx in lanes.values():
            joined.update(fx.stores)
        if chunk.stores != joined:
            miss = sorted(set(joined) ^ set(chunk.stores)) or sorted(
                k for k in joined if joined[k] != chunk.stores[k])
            return (f"chunk {i} does not store what elements {w * i}..{w * i + w - 1} of "
                    f"the tail's body store (first difference at {miss[0][0]}[{miss[0][1]}])")
        why = interference(lanes)
        if why:
            return why
    return None


# ------------------------------------------------------------------ preconditions
def _chunk_form(site, ctx) -> Verdict:
    got = _reading(site, ctx)
    if isinstance(got, str):
        return Verdict.no(got)
    return Verdict.yes(f"a grid-stride loop over {site.unit.text(got['bound'])} chunks of "
                       f"{got['width']} and the scalar tail of the rest")


def _same_work(site, ctx) -> Verdict:
    got = _reading(site, ctx)
    if isinstance(got, str):
        return Verdict.unknown(got)
    if got["tail"].kind != "guard":
        why = _same_elements(got)
        if why:
            return Verdict.no(why)
        if not _stores_nothing(got):
            return Verdict.yes(f"each chunk stores what its {got['width']} elements' scalar "
                               f"bodies store, and no element touches another's writes "
                               f"({len(got['draws'])} launches)")
    # a guarded tail has no index of its own to run it at, and a chunk that keeps its work
    # in registers stores nothing to compare: the kernel is run whole, merged and not
    ok, why = _same_grid(site, ctx)
    if ok is None:
        return Verdict.unknown(why)
    if not ok:
        return Verdict.no(f"the merged loop does not do what the chunks and the tail do: {why}")
    return Verdict.yes(f"merged and chunked: {why}")


@dataclass(frozen=True)
class UnchunkLoop(Pass):
    """Merge a chunked grid-stride loop and its scalar tail into one loop over elements.

    Before::

        const int n4 = n / 4;
        for (int i = tid; i < n4; i += stride) {
            float4 v = make_float4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
            v.x = f(v.x); v.y = f(v.y); v.z = f(v.z); v.w = f(v.w);
            y[4 * i] = v.x; y[4 * i + 1] = v.y; y[4 * i + 2] = v.z; y[4 * i + 3] = v.w;
        }
        int j = 4 * n4 + tid;
        if (j < n) { y[j] = f(x[j]); }

    After::

        const int n4 = n / 4;
        for (int i = tid; i < n; i += stride) { y[i] = f(x[i]); }

    The tail is ``int J = W * C + start; if (J < N) BODY``, a grid-stride loop ``for
    (int J = W * C + start; J < N; J += stride) BODY``, or any guarded ``if (G) BODY`` whose
    accesses all index one element E (``if (blockIdx.x == 0 && threadIdx.x < n - 4 * n4)
    s += x[4 * n4 + threadIdx.x];``: N is then read from ``C = N / W`` or ``N >> k``). A
    grid sized for W elements per thread (``ceil_div(n, 4 * B)``) is sized for one again.

    Preconditions: chunk-form (a grid-stride ``for``/``while`` loop over ``C`` chunks,
    followed by the tail, with ``C = N / W`` for one W of 2, 4, 8, 16, checked at
    concrete sizes), same-work (run by the model at three launches:
    a chunk stores exactly what the scalar tail body stores for its W elements, and no
    element writes what another reads or writes; a guarded tail, or chunks that store
    nothing (a sum kept in a register), are checked by running the whole kernel merged and
    not over whole grids on the grid machine, one of them two blocks at least), tail-fits (an ``if`` tail: a block has
    at least W - 1 threads, one per leftover element). Declarations the merged loop no
    longer reads (the chunk count) and the helpers and structs only the chunks used go.

    Options: none (the width and the tail are read from the code).

    Round trip: ``chunk-loop`` with the width, the chunk count and the lane form.
    """

    name = "unchunk-loop"
    kind = "simplify"
    inverse = "chunk-loop"
    anchor = _LOOPS
    preconditions = (
        Precondition("chunk-form", "layout",
                     "a grid-stride loop over N / W chunks, then a scalar tail for the rest",
                     _chunk_form),
        Precondition("same-work", "layout",
                     "the chunk body does what the tail body does for each of its W elements",
                     _same_work),
        Precondition("tail-fits", "hardware",
                     "a block has at least W - 1 threads (one per leftover element)",
                     lambda site, ctx: _tail_fits(site, _width(site, ctx))),
    )

    def rewrite(self, site, ctx):
        got = _reading(site, ctx)
        if isinstance(got, str):
            raise SkipSite(got)
        unit, lp, tail = site.unit, got["loop"], got["tail"]
        body = lp.body
        step = _while_step(site, lp)
        ind = indent_of(unit, site.node.start_byte)
        if tail.kind == "guard":
            lines = [ln for st in statements(tail.body) for ln in _lines(unit, st, splice(
                unit, st, [(x.start_byte, x.end_byte, got["var"]) for x in tail.sites
                           if st.start_byte <= x.start_byte < st.end_byte]))]
        else:
            lines = _body_lines(unit, tail.body, tail.var, got["var"])
        inner = ind + _step_indent(unit, body, ind)
        text = "{\n" + "".join(f"{inner}{ln}\n" for ln in lines)
        if step is not None:
            text += f"{inner}{unit.text(step)}\n"
        text += ind + "}"
        edits = [Edit(got["bound"].start_byte, got["bound"].end_byte, unit.text(tail.bound)),
                 Edit(body.start_byte, body.end_byte, text),
                 remove(unit, site.node.end_byte + 1, tail.stmt.end_byte)
                 if unit.source[site.node.end_byte:site.node.end_byte + 1] == b"\n"
                 else Edit.delete(site.node.end_byte, tail.stmt.end_byte)]
        # what only the chunks and the tail's index read goes with them: the chunk count,
        # pack helpers and the structs they move
        gone = [(got["bound"].start_byte, got["bound"].end_byte),
                (body.start_byte, body.end_byte), (site.node.end_byte, tail.stmt.end_byte)]
        keep = set(lex(unit.text(tail.bound))) | set(lex(text)) | {got["var"]}
        dead = dead_declarations(unit, site.function, gone, keep)
        edits += [remove_described(unit, d) for d in dead]
        gone += [(d.start_byte, d.end_byte) for d in dead]
        return edits + drop_unused_definitions(unit, gone, keep)

    def update_contract(self, contract, site, ctx):
        # a grid sized for W elements per thread (one chunk) is sized for one again
        got = _reading(site, ctx)
        if isinstance(got, str):
            return contract
        new = regrid(contract, site.unit.text(got["tail"].bound), got["width"], divide=True)
        return new or contract

    def inverse_for(self, site, ctx):
        got = _reading(site, ctx)
        bound = site.unit.text(got["bound"])
        # chunk-loop's vector lanes carry one store `A[i] = f(B[i])`; a fold carries copies
        stmts = statements(got["tail"].body)
        one_store = len(stmts) == 1 and stmts[0].type == "expression_statement" and \
            stmts[0].named_children[0].type == "assignment_expression" and \
            site.unit.text(stmts[0].named_children[0].child_by_field_name("operator")) == "="
        lanes = "vector" if one_store and any(t in site.unit.text(got["loop"].body) for t in
                                              ("make_float", "float4", "float2")) else "copies"
        return ChunkLoop(width=got["width"], count=bound if bound.isidentifier() else "auto",
                         tail_var=got["tail"].var or "auto", lanes=lanes,
                         tail="loop" if got["tail"].kind == "loop" else "if")


def _width(site, ctx) -> int | None:
    if isinstance(site.pass_, ChunkLoop):
        return site.pass_.width
    got = _reading(site, ctx)
    return None if isinstance(got, str) else got["width"]


def _tail_fits(site, w) -> Verdict:
    tail = site.pass_.tail if isinstance(site.pass_, ChunkLoop) else None
    if tail is None:
        got = _reading(site, None)
        tail = got["tail"].kind if not isinstance(got, str) else None
    if tail == "loop":
        return Verdict.yes("the tail is a grid-stride loop: any number of threads covers it")
    b = _block(site)
    if w is None:
        return Verdict.unknown("no chunk width")
    if b is None:
        return Verdict.unknown("the block size is not a constant of the launch contract")
    if b < w - 1:
        return Verdict.no(f"a block of {b} threads has fewer than the {w - 1} threads the "
                          f"tail may need")
    return Verdict.yes(f"{b} threads per block >= the {w - 1} the tail may need")


def _while_step(site, lp):
    """The update statement of a while loop (its last statement), or None."""
    if site.node.type != "while_statement":
        return None
    stmts = statements(lp.body)
    if not stmts or lp.update_node is None or not (
            stmts[-1].start_byte <= lp.update_node.start_byte < stmts[-1].end_byte):
        raise SkipSite("the while loop does not end with its one update")
    return stmts[-1]


def _step_indent(unit, body, ind) -> str:
    stmts = statements(body)
    got = indent_of(unit, stmts[0].start_byte) if stmts else ""
    return got[len(ind):] if got.startswith(ind) and len(got) > len(ind) else "    "


def _body_lines(unit, body, old, new) -> list[str]:
    """The statements of ``body`` with identifier ``old`` replaced by ``new``, one entry
    per line, each without the statement's own indentation."""
    return [ln for s in statements(body) for ln in _lines(unit, s, rename(unit, s, old, new))]


def _lines(unit, stmt, text: str) -> list[str]:
    """``text`` (statement ``stmt`` rewritten) as lines without the statement's indentation."""
    return unshift(text, indent_of(unit, stmt.start_byte)).split("\n")


# ------------------------------------------------------------------ chunk-loop
def _element_reading(site, ctx):
    """(loop, var, bound, draws) of a grid-stride loop over elements, or why not."""
    memo = site.unit.memo("chunk_loop", lambda u: {})
    key = ("chunk", site.node.id)
    if key not in memo:
        got = _grid_loop(site)
        if not isinstance(got, str):
            lp = got[0]
            runs = []
            for ints in draws(site.function, _block(site), seed=site.node.start_byte):
                m = Machine(site.unit, site.function, ints)
                try:
                    env = before(m, site.node)
                    n, start = m.value(got[2], env), m.value(lp.init_node, env)
                except (Unsupported, AttributeError) as e:
                    got = f"the sizes cannot be read at concrete values: {e}"
                    break
                if not isinstance(n, int) or not isinstance(start, int):
                    got = "the bound or the start is not an integer"
                    break
                runs.append((m, env, n, start))
            else:
                got = got + (runs,)
        memo[key] = got
    return memo[key]


def _elements(site, ctx) -> Verdict:
    got = _element_reading(site, ctx)
    if isinstance(got, str):
        return Verdict.no(got)
    lp, var, _, runs = got
    w = site.pass_.width
    body = _scalar_body(site, lp)
    for m, env, n, start in runs:
        e0 = (start // w) * w
        try:
            per = {e: run_with(m, env, {var: e}, body)
                   for e in [*range(e0, e0 + w), e0 + w + 1]}
        except Unsupported as e:
            return Verdict.unknown(f"cannot run the loop body: {e}")
        why = interference(per)
        if why:
            return Verdict.no(why)
    return Verdict.yes(f"the body's elements are independent ({len(runs)} launches)")


def _lane_form(site, ctx) -> Verdict:
    if site.pass_.lanes == "copies":
        return Verdict.yes("W copies of the body")
    got = _element_reading(site, ctx)
    if isinstance(got, str):
        return Verdict.unknown(got)
    parts = _vector_parts(site, got[0], got[1])
    if isinstance(parts, str):
        return Verdict.no(parts)
    return Verdict.yes(f"one store of a function of {parts[1]}[{got[1]}]: "
                       f"{_VECTORS[site.pass_.width]} lanes")


def _vector_parts(site, lp, var):
    """(store target array text, loaded array text, value node, load nodes) of a body
    that is the one statement ``A[var] = E`` where E reads one array only as ``B[var]``."""
    unit, w = site.unit, site.pass_.width
    if w not in _VECTORS:
        return f"no float vector type of {w} lanes"
    body = _scalar_body(site, lp)
    if len(body) != 1 or body[0].type != "expression_statement":
        return "the body is not one statement `A[i] = f(B[i])`"
    e = body[0].named_children[0]
    if e.type != "assignment_expression" or unit.text(e.child_by_field_name("operator")) != "=":
        return "the body is not one assignment `A[i] = f(B[i])`"
    left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
    if left.type != "subscript_expression" or _index_text(unit, left) != var:
        return f"the assignment's target is not `A[{var}]`"
    loads, others = [], []
    for n in unit.walk(right):
        if n.type == "subscript_expression" and _index_text(unit, n) == var:
            loads.append(n)
        elif n.type == "identifier" and unit.text(n) == var and \
                not any(ld.start_byte <= n.start_byte < ld.end_byte for ld in loads):
            others.append(n)
    arrays = {unit.text(n.child_by_field_name("argument")) for n in loads}
    if len(arrays) != 1 or others:
        return f"the value does not read exactly one array at [{var}] and {var} nowhere else"
    base = next(iter(arrays))
    elem = next((p.base_type for p in site.function.params if p.name == base), None)
    if elem is None or elem.replace("const", "").strip() != "float":
        return f"{base} is not a float parameter"
    return unit.text(left.child_by_field_name("argument")), base, right, loads


def _index_text(unit, sub) -> str:
    idx = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
    return unit.text(idx).strip("[] ")


def _scalar_body(site, lp) -> list:
    """The loop body's statements, without a while loop's update."""
    stmts = statements(lp.body)
    return stmts[:-1] if site.node.type == "while_statement" else stmts


def _count_ok(site, ctx) -> Verdict:
    p = site.pass_
    got = _element_reading(site, ctx)
    if isinstance(got, str):
        return Verdict.unknown(got)
    found = _count_name(site, got)
    if p.count == "auto":
        return Verdict.yes(f"reuses {found}" if found else "declares a chunk count")
    if found != p.count and p.count not in used_names(site.unit, site.function):
        return Verdict.yes(f"declares {p.count} = {site.unit.text(got[2])} / {p.width}")
    if found != p.count:
        return Verdict.no(f"{p.count} is not a variable holding {site.unit.text(got[2])} / "
                          f"{p.width} before the loop")
    return Verdict.yes(f"{p.count} = {site.unit.text(got[2])} / {p.width}")


def _count_name(site, got) -> str | None:
    """A variable declared before the loop whose value is bound / W in every launch."""
    w, runs = site.pass_.width, got[3]
    names = None
    for m, env, n, _ in runs:
        here = {k for k, c in env.items()
                if getattr(c, "value", None) == n // w and isinstance(c.value, int)}
        names = here if names is None else names & here
    params = {p.name for p in site.function.params}
    order = [k for k in (runs[0][1] if runs else {}) if k in (names or set()) - params]
    if site.pass_.count != "auto" and site.pass_.count in order:
        return site.pass_.count
    return order[-1] if order else None


def _body_fits(site, ctx) -> Verdict:
    got = _element_reading(site, ctx)
    if isinstance(got, str):
        return Verdict.unknown(got)
    size = len(lex(site.unit.text(got[0].body))) * site.pass_.width
    if size > MAX_CHUNK_TOKENS:
        return Verdict.no(f"the chunk body would be about {size} tokens "
                          f"(> {MAX_CHUNK_TOKENS})")
    return Verdict.yes(f"about {size} tokens per chunk")



@dataclass(frozen=True)
class ChunkLoop(Pass):
    """Split a grid-stride loop over elements into chunks of W and a scalar tail.

    Before::

        for (int i = tid; i < n; i += stride) { y[i] = f(x[i]); }

    After ``chunk-loop{width=4,lanes=vector}``::

        const int n4 = n / 4;
        for (int i = tid; i < n4; i += stride) {
            float4 v = make_float4(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
            v.x = f(v.x); v.y = f(v.y); v.z = f(v.z); v.w = f(v.w);
            y[4 * i] = v.x; y[4 * i + 1] = v.y; y[4 * i + 2] = v.z; y[4 * i + 3] = v.w;
        }
        int j = 4 * n4 + tid;
        if (j < n) { y[j] = f(x[j]); }

    The chunk's elements are consecutive, so ``vectorize-views`` can then move each as one
    128-bit access. Preconditions: element-loop (a grid-stride ``for``/``while`` loop ``i
    < N`` among the kernel's statements, not already a chunk loop with its tail),
    independent (run by the model at three launches:
    no element writes what another reads or writes), lane-form (``vector``: the body is
    one store ``A[i] = f(B[i])`` of float arrays; ``copies`` takes any body), count (a
    named ``count`` holds N / W before the loop), tail-fits (``tail=if``: a block has at
    least W - 1 threads), body-fits (W copies of the body stay under 4096 tokens). A grid
    sized for one element per thread (``ceil_div(n, B)``) is sized for one chunk
    (``ceil_div(n, W * B)``).

    Options: ``width`` (2, 4, 8, 16; ``vector`` lanes: 2 or 4), ``count`` (the variable
    holding N / W, or ``auto``: one already declared, else a new one), ``tail_var`` (the
    tail's index, ``auto``: a fresh name), ``lanes`` (``vector``: load W lanes into a
    ``float2``/``float4``, compute each, store each; ``copies``: W copies of the body),
    ``tail`` (``if``: one leftover element per thread; ``loop``: a grid-stride loop over
    the leftovers).
    """

    name = "chunk-loop"
    kind = "optimize"
    inverse = "unchunk-loop"
    anchor = _LOOPS
    preconditions = (
        Precondition("element-loop", "layout", "a grid-stride loop `i < N` over elements",
                     lambda site, ctx: _loop_verdict(site, ctx)),
        Precondition("independent", "storage",
                     "no element writes what another element reads or writes", _elements),
        Precondition("lane-form", "layout",
                     "vector lanes need one store of a function of one float array",
                     _lane_form),
        Precondition("count", "layout", "the named chunk count holds N / W", _count_ok),
        Precondition("tail-fits", "hardware",
                     "a block has at least W - 1 threads (one per leftover element)",
                     lambda site, ctx: _tail_fits(site, site.pass_.width)),
        Precondition("body-fits", "hardware",
                     "the chunk body stays small (instruction cache, registers)", _body_fits),
    )

    width: int = option(4, Choice(*WIDTHS), "elements per chunk", tune=True)
    count: str = option("auto", OneOf(Choice("auto"), Identifier()),
                        "the variable holding N / W (auto: reuse or declare one; a name: "
                        "reuse it, or declare it where the kernel has no such name)")
    tail_var: str = option("auto", OneOf(Choice("auto"), Identifier()),
                           "the scalar tail's index (auto: a fresh name)")
    lanes: str = option("vector", Choice("vector", "copies"),
                        "vector: float2/float4 lanes; copies: W copies of the body", tune=True)
    tail: str = option("if", Choice("if", "loop"),
                       "if: one leftover element per thread; loop: a grid-stride loop over them")

    def rewrite(self, site, ctx):
        got = _element_reading(site, ctx)
        if isinstance(got, str):
            raise SkipSite(got)
        unit, fn, w = site.unit, site.function, self.width
        lp, var, bound = got[0], got[1], got[2]
        ind = indent_of(unit, site.node.start_byte)
        inner = ind + _step_indent(unit, lp.body, ind)
        edits = []
        count = _count_name(site, got)
        if self.count != "auto" and count != self.count:
            count = None
        if count is None:
            count = self.count if self.count != "auto" else \
                fresh_numbered(unit, fn, [f"n{w}", "chunks"])
            edits.append(insert_lines_before(unit, site.node,
                                             f"const int {count} = {unit.text(bound)} / {w};"))
        tv = self.tail_var if self.tail_var != "auto" else fresh_numbered(
            unit, fn, ["j", "tail", "k"], taken=[count])
        body = _scalar_body(site, lp)
        lanes = self._lanes(site, lp, var, body)
        text = "{\n" + "".join(f"{inner}{ln}\n" for ln in lanes)
        if site.node.type == "while_statement":
            text += f"{inner}{unit.text(statements(lp.body)[-1])}\n"
        text += ind + "}"
        tail = _body_lines(unit, lp.body, var, tv)
        if site.node.type == "while_statement":
            tail = tail[:-1]
        start = f"{w} * {count} + {unit.text(lp.init_node)}"
        head = (f"{ind}for (int {tv} = {start}; {tv} < {unit.text(bound)}; "
                f"{tv} += {unit.text(lp.step_node)}) {{\n" if self.tail == "loop" else
                f"{ind}int {tv} = {start};\n{ind}if ({tv} < {unit.text(bound)}) {{\n")
        tail_text = "\n" + head + "".join(f"{inner}{ln}\n" for ln in tail) + ind + "}"
        edits += [Edit(bound.start_byte, bound.end_byte, count),
                  Edit(lp.body.start_byte, lp.body.end_byte, text),
                  Edit.insert(site.node.end_byte, tail_text)]
        return edits

    def update_contract(self, contract, site, ctx):
        # a grid sized for one element per thread is sized for one chunk of W
        got = _element_reading(site, ctx)
        if isinstance(got, str):
            return contract
        return regrid(contract, site.unit.text(got[2]), self.width) or contract

    def _lanes(self, site, lp, var, body) -> list[str]:
        unit, w = site.unit, self.width
        at = [f"{w} * {var}" + (f" + {c}" if c else "") for c in range(w)]
        if self.lanes == "copies":
            out = []
            declares = any(s.type == "declaration" for s in body)
            for c in range(w):
                lines = [ln for s in body
                         for ln in _lines(unit, s, _substitute(unit, s, var, at[c]))]
                out += (["{"] + ["    " + x for x in lines] + ["}"]) if declares else lines
            return out
        target, src, value, loads = _vector_parts(site, lp, var)
        v = fresh_numbered(unit, site.function, ["v", "vec"])
        lane = "xyzw"
        out = [f"{_VECTORS[w]} {v} = make_{_VECTORS[w]}("
               + ", ".join(f"{src}[{a}]" for a in at) + ");"]
        for c in range(w):
            reps = [(ld.start_byte, ld.end_byte, f"{v}.{lane[c]}") for ld in loads]
            out.append(f"{v}.{lane[c]} = {splice(unit, value, reps)};")
        out += [f"{target}[{at[c]}] = {v}.{lane[c]};" for c in range(w)]
        return out


def _substitute(unit, node, var: str, expr: str) -> str:
    """``node``'s text with identifier ``var`` replaced by ``expr``, parenthesized unless
    it stands alone (a whole subscript, argument or initializer)."""
    alone = ("subscript_argument_list", "argument_list", "init_declarator")
    reps = [(n.start_byte, n.end_byte,
             expr if n.parent is not None and n.parent.type in alone else f"({expr})")
            for n in unit.walk(node) if n.type == "identifier" and unit.text(n) == var]
    return splice(unit, node, reps)


def _loop_verdict(site, ctx) -> Verdict:
    got = _element_reading(site, ctx)
    if isinstance(got, str):
        return Verdict.no(got)
    chunked = _reading(site, ctx)
    if not isinstance(chunked, str):
        return Verdict.no(f"the loop already runs over {site.unit.text(chunked['bound'])} "
                          f"chunks of {chunked['width']} with a scalar tail")
    if site.node.type == "while_statement":
        try:
            _while_step(site, got[0])
        except SkipSite as e:
            return Verdict.no(str(e))
    return Verdict.yes(f"grid-stride loop over {site.unit.text(got[2])} elements")
