"""One warp per row: ``row-per-warp`` (optimize) and its inverse ``row-per-thread`` (simplify).

Both passes start from a *row kernel*: the global thread index picks a row, a guard
drops the threads past the last row, and the rest of the kernel works on that row::

    int row = blockIdx.x * blockDim.x + threadIdx.x;     // or (...) / 32 after row-per-warp
    if (row >= rows) return;                             // or if (row < rows) { ... }
    ... declarations, per-row scalars, loops over the columns c of the row ...

The analysis of that shape (:func:`_analyse`) is shared by the two passes; each
precondition reads the findings of its own category from it.

A second form, ``group=cols`` (the corpus softmax expert's template), gives each row a
group of G threads chosen from the row length at run time::

    const int q = (cols + W - 1) / W;
    const int rpb = q >= 1 && q <= R ? R / q : 1;    // rows per block, R = T / 32
    const int G = T / rpb;                           // threads per row: 32 .. T
    const int group = threadIdx.x / G;
    const int gt = threadIdx.x % G;
    const int row = blockIdx.x * rpb + group;        // was blockIdx.x * blockDim.x + threadIdx.x
    const bool active = row < rows;
    ... for (int c = gt; c < cols; c += G) ...       // was for (int c = 0; c < cols; ++c)

Its analysis is :func:`_group_build`; the preconditions dispatch on the anchor that
matched (:func:`_either`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kltrans.analysis.affine import (
    THREAD_SYMBOLS,
    Affine,
    element_address,
    Evaluator,
    affine_of,
)
from kltrans.analysis.barriers import barrier_calls, barriers
from kltrans.analysis.loops import assigned_in
from kltrans.analysis.pointers import may_alias
from kltrans.analysis.verdict import Verdict
from kltrans.analysis.warps import warp_primitives
from kltrans.match import Rule
from kltrans.passes import Choice, Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.syntax import Edit
from kltrans.analysis.affine import strip_parens as _strip
from kltrans.passes.guard import GLOBAL_INDEX, builtin, index_decl
from kltrans.passes.rewrite import (
    contract_of, header_expr, indent_of as line_indent, inside, int_text, norm, statements,
    used_names)
from kltrans.passes.token_forms import (
    line_of as _line, snippet as _snip, compact as _compact, unparen as _unparen)
from kltrans.passes.vector_facts import expr_of as _expr_of
from kltrans.passes.expr_facts import (
    FLOAT_TYPES as _FLOATS, INT_TYPES as _INTS, PER_THREAD_SOURCES as _PER_THREAD,
    PURE_CALLS as _PURE_CALLS, base_param as _base_param, decl_items as _decl_items,
    decl_type as _decl_type, identifiers as _idents, mentions as _mentions,
    number_value as _num, per_thread_sources as _thread_dep, side_effect_free as _pure)
from kltrans.passes.reductions import (
    FOLD_FUNCS as _FUNCS, IDEMPOTENT_OPS as _IDEMPOTENT, OP_IDENTITY as _IDENTITY,
    Reduction, reduction_of as _reduction)
from kltrans.passes.launch_facts import GROUP_GRID as _GROUP_GRID

WARP = 32
GROUPS = (32, "cols")
LANES = ("lane", "ln", "lane_id", "l")
OFFSETS = ("off", "offset", "o", "sh")

_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_INCR = {"pre": "++{c}", "post": "{c}++", "add": "{c} += 1"}


# ==================================================================== small helpers
def _has_array(unit, decl) -> bool:
    return any(n.type == "array_declarator" for n in unit.walk(decl))


# ======================================================================= reductions


def _butterfly(red: Reduction, off: str) -> str:
    shfl = f"__shfl_xor_sync(0xffffffff, {red.var}, {off})"
    if red.op in _FUNCS:
        s = f"{red.var} = {red.op}({red.var}, {shfl});"
    else:
        s = f"{red.var} {red.op}= {shfl};"
    return f"for (int {off} = 16; {off} > 0; {off} >>= 1) {s}"


_BFLY = re.compile(
    r"^for\(int(?P<o>\w+)=16;(?P=o)>0;(?P=o)>>=1\)(?:"
    r"(?P<v>\w+)(?P<op>[+*|&])=__shfl_xor_sync\(0xffffffff[uU]?,(?P=v),(?P=o)\);"
    r"|(?P<v2>\w+)=(?P<f>\w+)\((?P=v2),__shfl_xor_sync\(0xffffffff[uU]?,(?P=v2),(?P=o)\)\);)$")


def _match_butterfly(unit, stmt):
    """(variable, operator, offset name) of a butterfly statement, or None."""
    if stmt is None or stmt.type != "for_statement":
        return None
    m = _BFLY.match(_compact(unit.text(stmt)))
    if m is None:
        return None
    if m.group("v"):
        return m.group("v"), m.group("op"), m.group("o")
    if m.group("f") in _FUNCS:
        return m.group("v2"), m.group("f"), m.group("o")
    return None


# ========================================================================= analysis
@dataclass
class ColLoop:
    node: object
    var: str
    bound: object
    init: object  # the initial value node (0, or the lane after row-per-warp)
    update: object
    reductions: list = field(default_factory=list)
    butterflies: list = field(default_factory=list)  # (stmt, var, op, off) after the loop
    locals: set = field(default_factory=set)


@dataclass
class RowKernel:
    guard: object
    row: str
    decl: object  # IndexDecl of row
    rows: object  # the bound node
    exit: bool
    body: list  # the row body's statements
    warped: bool  # row-per-warp output (row = (...) / 32 and a lane)
    lane: str | None = None
    lane_decl: object = None
    loops: list = field(default_factory=list)
    lane0: list = field(default_factory=list)  # per-row writes (statements)
    scalars: dict = field(default_factory=dict)  # row-level scalar -> (declaration, type, value)
    issues: dict = field(default_factory=dict)  # precondition name -> Verdict
    own_shuffles: list = field(default_factory=list)  # butterflies after unparsed loops
    bad_loops: list = field(default_factory=list)  # loops reported as not column loops


#: the inverse reports the forward pass's findings under its own precondition names
_WARPED_NAMES = {"row-index": "warp-row-index", "row-major": "warp-row-index",
                 "loop-shapes": "strided-loops", "warp-uniform-guard": "strided-loops"}


def _issue(k: RowKernel, name: str, verdict: Verdict):
    if k.warped:
        name = _WARPED_NAMES.get(name, name)
    k.issues.setdefault(name, verdict)


_CACHE: dict = {}


def _analyse(site, warped: bool) -> RowKernel:
    key = (id(site.unit), site.node.id, warped)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is site.unit:
        return hit[1]
    k = _build(site, warped)
    if len(_CACHE) > 256:
        _CACHE.clear()
    _CACHE[key] = (site.unit, k)
    return k


def _build(site, warped: bool) -> RowKernel:
    unit, fn = site.unit, site.function
    node = site.node
    b = site.match.bindings
    row = site.text("R")
    exit_ = "BODY" not in b
    top = statements(fn.body)
    if exit_:
        pos = next(i for i, s in enumerate(top) if s.id == node.id) if \
            node.parent is not None and node.parent.id == fn.body.id else None
        body = top[pos + 1:] if pos is not None else []
    else:
        body = statements(b["BODY"])
    d = index_decl(unit, fn, row)
    k = RowKernel(node, row, d, b["N"], exit_, body, warped)
    _check_guard(k, site)
    _check_row_index(k, site)
    if isinstance(d, str):
        return k
    _check_prologue(k, site)
    _check_body(k, site)
    _check_storage(k, site)
    return k


# ---------------------------------------------------------------- the row index
def _check_guard(k: RowKernel, site):
    unit, fn = site.unit, site.function
    node = k.guard
    name = "warp-uniform-guard"
    n = _snip(unit, k.rows)
    if node.parent is None or node.parent.id != fn.body.id:
        _issue(k, name, Verdict.no(f"the row guard is nested in a "
                                   f"{node.parent.type.replace('_', ' ')}: it must be a statement "
                                   f"of {fn.name}'s body"))
    if not _pure(unit, k.rows):
        _issue(k, name, Verdict.no(f"the row bound `{n}` has side effects"))
    dep = _thread_dep(unit, k.rows) & (THREAD_SYMBOLS | {"?"})
    if dep:
        _issue(k, name, Verdict.no(f"the row bound `{n}` depends on {', '.join(sorted(dep))}: "
                                   "the guard would split a warp"))
    for m in _idents(unit, k.rows):
        if assigned_in(unit, fn.body, unit.text(m)):
            _issue(k, name, Verdict.no(f"the kernel assigns `{unit.text(m)}`, part of the row "
                                       f"bound `{n}`"))
    if not k.exit:
        later = [s for s in statements(fn.body) if s.start_byte > node.end_byte]
        if later:
            _issue(k, "loop-shapes", Verdict.no(
                f"line {_line(unit, later[0])}: `{_snip(unit, later[0])}` runs after the row "
                "guard: the guarded statement must end the kernel"))


def _check_row_index(k: RowKernel, site):
    unit, fn = site.unit, site.function
    d = k.decl
    name = "row-index"
    if isinstance(d, str):
        _issue(k, name, Verdict.no(d))
        return
    if assigned_in(unit, fn.body, k.row):
        _issue(k, name, Verdict.no(f"{k.row} is assigned after its declaration"))
        return
    e = norm(unit.text(d.value))
    if not k.warped:
        a = affine_of(unit, d.value)
        if a is None or a != GLOBAL_INDEX:
            what = f" (it is {a})" if a is not None else ""
            _issue(k, name, Verdict.no(f"`{k.row} = {e}` is not the global thread index "
                                       f"blockIdx.x * blockDim.x + threadIdx.x{what}: one thread "
                                       "per row is what the pass turns into one warp per row"))
        return
    v = _strip(d.value)
    inner = None
    if v.type == "binary_expression" and unit.text(v.child_by_field_name("operator")) == "/" \
            and int_text(unit.text(v.child_by_field_name("right"))) == WARP and \
            v.child_by_field_name("left").type == "parenthesized_expression":
        inner = _strip(v.child_by_field_name("left"))
    if inner is None or affine_of(unit, inner) != GLOBAL_INDEX:
        _issue(k, name, Verdict.no(f"`{k.row} = {e}` is not (blockIdx.x * blockDim.x + "
                                   "threadIdx.x) / 32, the warp index row-per-warp writes"))
        return
    nxt = d.decl.next_named_sibling
    while nxt is not None and nxt.type == "comment":
        nxt = nxt.next_named_sibling
    lane = None
    if nxt is not None and nxt.type == "declaration":
        items = _decl_items(unit, nxt)
        if len(items) == 1 and items[0][2] is not None and \
                norm(unit.text(items[0][2])).replace(" ", "") == "threadIdx.x&31":
            lane = items[0][0]
    if lane is None:
        _issue(k, name, Verdict.no(f"the statement after `{k.row}`'s declaration is not the lane "
                                   "`int lane = threadIdx.x & 31;`"))
        return
    if assigned_in(unit, fn.body, lane):
        _issue(k, name, Verdict.no(f"the lane {lane} is assigned after its declaration"))
        return
    k.lane, k.lane_decl = lane, nxt


def _check_prologue(k: RowKernel, site):
    """Statements before the guard: declarations without side effects only."""
    unit, fn = site.unit, site.function
    skip = {k.decl.decl.id} | ({k.lane_decl.id} if k.lane_decl is not None else set())
    used_in_body = {unit.text(n) for s in k.body for n in _idents(unit, s)}
    for s in statements(fn.body):
        if s.start_byte >= k.guard.start_byte or s.id in skip:
            continue
        if s.type != "declaration" or not _pure(unit, s):
            _issue(k, "loop-shapes", Verdict.no(
                f"line {_line(unit, s)}: `{_snip(unit, s)}` runs before the row guard; only "
                "declarations without side effects may"))
            continue
        if _has_array(unit, s):
            _issue(k, "storage-check", Verdict.no(
                f"line {_line(unit, s)}: `{_snip(unit, s)}` declares an array: only per-thread "
                "scalars carry over to a warp"))
        for nm, _, value in _decl_items(unit, s):
            if nm in used_in_body and value is not None and _thread_dep(unit, value) and \
                    not _mentions(unit, value, k.row):
                _issue(k, "row-index", Verdict.no(
                    f"`{nm}` (line {_line(unit, s)}) depends on the thread other than through "
                    f"{k.row} and the row body uses it"))


# ------------------------------------------------------------------- the row body
def _parse_loop(k: RowKernel, site, s) -> "ColLoop | str":
    unit = site.unit
    init = s.child_by_field_name("initializer")
    cond = s.child_by_field_name("condition")
    upd = s.child_by_field_name("update")
    what = f"line {_line(unit, s)}: the loop `{_snip(unit, s, 50)}`"
    if init is None or init.type != "declaration" or cond is None or upd is None:
        return f"{what} is not `for (int c = START; c < B; STEP)`"
    items = _decl_items(unit, init)
    if len(items) != 1 or items[0][2] is None or _decl_type(unit, init) not in _INTS:
        return f"{what} does not declare one integer counter with a start value"
    c, _, start = items[0]
    cnd = _strip(cond)
    if cnd.type != "binary_expression" or unit.text(cnd.child_by_field_name("operator")) != "<" \
            or norm(unit.text(cnd.child_by_field_name("left"))) != c:
        return f"{what} does not run while {c} < B"
    bound = cnd.child_by_field_name("right")
    u = _compact(unit.text(upd))
    if k.warped:
        if norm(unit.text(start)) != k.lane or u != f"{c}+={WARP}":
            return f"{what} is not lane-strided `for (int {c} = {k.lane}; {c} < B; {c} += 32)`"
    else:
        if int_text(unit.text(start)) != 0 or u not in (f"++{c}", f"{c}++", f"{c}+=1"):
            return f"{what} does not start at 0 and step by 1"
    if assigned_in(unit, s.child_by_field_name("body"), c):
        return f"{what} assigns its counter {c} in the body"
    if not _pure(unit, bound) or _thread_dep(unit, bound) & (THREAD_SYMBOLS | {"?"}):
        return f"{what}: its bound `{_snip(unit, bound)}` is not the same for every thread"
    for m in _idents(unit, bound):
        if assigned_in(unit, site.function.body, unit.text(m)):
            return f"{what}: the kernel assigns `{unit.text(m)}`, part of the bound"
    return ColLoop(s, c, bound, start, upd)


def _check_body(k: RowKernel, site):
    unit = site.unit
    shapes = "loop-shapes"
    if not any(s.type in _LOOPS for s in k.body):
        _issue(k, shapes, Verdict.no("the row body has no loop over the columns"))
    i = 0
    body = k.body
    while i < len(body):
        s = body[i]
        i += 1
        where = f"line {_line(unit, s)}: `{_snip(unit, s)}`"
        if s.type == "declaration":
            if _has_array(unit, s):
                _issue(k, "storage-check", Verdict.no(
                    f"{where} declares an array: only per-thread scalars carry over to a warp"))
            if not _pure(unit, s):
                _issue(k, shapes, Verdict.no(f"{where} has side effects"))
            for nm, _, value in _decl_items(unit, s):
                k.scalars[nm] = (s, _decl_type(unit, s), value)
            continue
        if s.type == "for_statement" and _match_butterfly(unit, s) is None:
            lp = _parse_loop(k, site, s)
            if isinstance(lp, str):
                _issue(k, shapes, Verdict.no(lp))
                k.bad_loops.append(s)
                while k.warped and i < len(body) and _match_butterfly(unit, body[i]) is not None:
                    k.own_shuffles.append(body[i])  # reported with the loop, not as foreign
                    i += 1
                continue
            _check_loop_body(k, site, lp)
            while k.warped and i < len(body) and _match_butterfly(unit, body[i]) is not None:
                v, op, off = _match_butterfly(unit, body[i])
                lp.butterflies.append((body[i], v, op, off))
                i += 1
            k.loops.append(lp)
            continue
        if s.type in _LOOPS or s.type == "for_statement":
            _issue(k, shapes, Verdict.no(f"{where} is not a loop over the columns of the row"))
            continue
        if k.warped and s.type == "if_statement":
            cond = s.child_by_field_name("condition")
            cons = s.child_by_field_name("consequence")
            if k.lane and _compact(unit.text(cond)) == f"({k.lane}==0)" and \
                    s.child_by_field_name("alternative") is None and \
                    cons.type == "expression_statement":
                w = _row_write(k, site, cons)
                if isinstance(w, str):
                    _issue(k, "lane0-writes", Verdict.no(w))
                elif w is None:
                    _issue(k, "lane0-writes", Verdict.no(
                        f"{where}: the lane-0 statement is not a write of a per-row value"))
                else:
                    k.lane0.append(s)
                continue
        e = _expr_of(s)
        if e is None or e.type != "assignment_expression":
            kind = s.type.replace("_statement", "").replace("_", " ")
            _issue(k, shapes, Verdict.no(
                f"{where} is a{'n' if kind[0] in 'aeiou' else ''} {kind}: the row guard must be the "
                "only branch, and the row body only declarations, per-row scalars and loops "
                "over the columns"))
            continue
        if not _pure(unit, e.child_by_field_name("right")):
            _issue(k, shapes, Verdict.no(f"{where} has side effects"))
            continue
        left = _strip(e.child_by_field_name("left"))
        if left.type == "identifier":
            continue  # a per-row scalar: the same value in every lane
        w = _row_write(k, site, s)
        if isinstance(w, str):
            _issue(k, "row-major", Verdict.no(w))
        elif w is None:
            _issue(k, shapes, Verdict.no(f"{where} writes something other than a scalar or an "
                                         "array element"))
        elif k.warped:
            _issue(k, "lane0-writes", Verdict.no(
                f"{where} writes a per-row value in every lane: row-per-warp writes it from "
                f"`if ({k.lane} == 0)`"))
        else:
            k.lane0.append(s)
    _check_scalars(k, site)


def _row_env(k):
    return {k.row: Affine.sym("@row")}


def _address(k, site, sub):
    try:
        return element_address(site.unit, sub, Evaluator(site.unit, _row_env(k)))[0]
    except Exception:
        return None


def _row_write(k, site, stmt):
    """For ``A[idx] = E;`` with idx the row: True; a string when it writes elsewhere; None
    when the statement is not an element write."""
    unit = site.unit
    e = _expr_of(stmt)
    if e is None or e.type != "assignment_expression":
        return None
    left = _strip(e.child_by_field_name("left"))
    if left.type != "subscript_expression":
        return None
    a = _address(k, site, left)
    if a is None or a != Affine.sym("@row"):
        return (f"line {_line(unit, stmt)}: `{_snip(unit, left)}` outside the column loops is not "
                f"the per-row element [{k.row}] (it is {a if a is not None else 'not affine'})")
    return True


def _check_loop_body(k: RowKernel, site, lp: ColLoop):
    unit = site.unit
    shapes = "loop-shapes"
    body = lp.node.child_by_field_name("body")
    stmts = statements(body)
    flat = []
    for s in stmts:
        if s.type == "compound_statement":
            flat.extend(statements(s))
        else:
            flat.append(s)
    row_elem = Affine.sym("@row") * (affine_of(unit, lp.bound) or Affine.sym("?bound")) + \
        Affine.sym(lp.var)
    lp.row_elem = row_elem
    for s in flat:
        where = f"line {_line(unit, s)}: `{_snip(unit, s)}`"
        for n in unit.walk(s):
            if n.type in ("return_statement", "goto_statement", "break_statement",
                          "continue_statement"):
                _issue(k, shapes, Verdict.no(f"{where} leaves the loop early"))
        if s.type == "declaration":
            if _has_array(unit, s):
                _issue(k, "storage-check", Verdict.no(
                    f"{where} declares an array: only per-thread scalars carry over to a warp"))
            if not _pure(unit, s):
                _issue(k, shapes, Verdict.no(f"{where} has side effects"))
            lp.locals |= {nm for nm, _, _ in _decl_items(unit, s)}
            continue
        e = _expr_of(s)
        if e is None or e.type != "assignment_expression":
            _issue(k, shapes, Verdict.no(
                f"{where} in the column loop is neither a declaration nor an assignment: a loop "
                "over the row must be an elementwise map or a reduction into a scalar"))
            continue
        if not _pure(unit, e.child_by_field_name("right")):
            _issue(k, shapes, Verdict.no(f"{where} has side effects"))
            continue
        left = _strip(e.child_by_field_name("left"))
        if left.type == "identifier":
            var = unit.text(left)
            if var in lp.locals:
                continue
            r = _reduction(unit, e, var)
            if isinstance(r, str):
                _issue(k, shapes, Verdict.no(r))
            else:
                lp.reductions.append(r)
            continue
        if left.type != "subscript_expression":
            _issue(k, shapes, Verdict.no(f"{where} writes through `{_snip(unit, left)}`: only "
                                         "subscripts of the row are analysed"))
            continue
        a = _address(k, site, left)
        if a is None:  # the analysis cannot tell where it writes: not known, not refuted
            _issue(k, "row-major", Verdict.unknown(
                f"{where} writes `{_snip(unit, left)}` at an offset that is not affine in the "
                f"thread and loop indices; the row element would be {k.row} * "
                f"{_snip(unit, lp.bound)} + {lp.var}, so row-major rows are not proven"))
        elif a != row_elem:
            _issue(k, "row-major", Verdict.no(
                f"{where} writes `{_snip(unit, left)}` at {a}, not the row element "
                f"{k.row} * {_snip(unit, lp.bound)} + {lp.var}: rows are not laid out row-major"))


def _check_scalars(k: RowKernel, site):
    """Every accumulator is reduced in one loop, read there only by its reduction, and
    enters it with the value of its declaration."""
    unit, fn = site.unit, site.function
    shapes = "loop-shapes"
    seen = {}
    for lp in k.loops:
        for r in lp.reductions:
            if r.var in seen:
                _issue(k, shapes, Verdict.no(
                    f"{r.var} is reduced twice (lines {_line(unit, seen[r.var])} and "
                    f"{_line(unit, r.stmt)}): the second reduction would add every lane's full "
                    "value"))
            seen[r.var] = r.stmt
            if r.var not in k.scalars:
                _issue(k, "storage-check", Verdict.no(
                    f"the accumulator {r.var} (line {_line(unit, r.stmt)}) is not declared in "
                    "the row body: only row-private scalars can be reduced across a warp"))
                continue
            body = lp.node.child_by_field_name("body")
            other = [n for n in _mentions(unit, body, r.var) if not inside(n, r.stmt)]
            if other or len([n for n in _mentions(unit, r.stmt, r.var)]) > 2:
                _issue(k, "storage-check", Verdict.no(
                    f"the loop at line {_line(unit, lp.node)} reads the accumulator {r.var} "
                    f"outside its reduction (line {_line(unit, (other or [r.stmt])[0])}): a lane "
                    "holds only a partial value there"))
            decl, ty, value = k.scalars[r.var]
            for s in k.body:
                if decl.end_byte <= s.start_byte < lp.node.start_byte and \
                        assigned_in(unit, s, r.var):
                    _issue(k, "storage-check", Verdict.no(
                        f"{r.var} is assigned at line {_line(unit, s)} before its reduction loop: "
                        "it must enter the loop with the value of its declaration"))
            if r.op not in _IDEMPOTENT:
                want = _IDENTITY[r.op]
                got = _num(unit, value) if value is not None else None
                if got != want:
                    _issue(k, "storage-check", Verdict.no(
                        f"{r.var} starts at `{_snip(unit, value) if value is not None else '?'}`, "
                        f"not {want}, the identity of {r.op}: every lane would count it once"))
        if k.warped:
            want = [(r.var, r.op) for r in lp.reductions]
            got = [(v, op) for _, v, op, _ in lp.butterflies]
            if want != got:
                _issue(k, "strided-loops", Verdict.no(
                    f"the loop at line {_line(unit, lp.node)} reduces "
                    f"{', '.join(f'{v} ({o})' for v, o in want) or 'nothing'} but is followed "
                    f"by butterflies for {', '.join(f'{v} ({o})' for v, o in got) or 'nothing'}"))
    for lp in k.loops:
        body = lp.node.child_by_field_name("body")
        for nm in k.scalars:
            if nm in seen or nm in lp.locals:
                continue
            if assigned_in(unit, body, nm):
                _issue(k, shapes, Verdict.no(f"the loop at line {_line(unit, lp.node)} assigns "
                                             f"the row scalar {nm}"))
    if k.warped and k.lane:
        allowed = {k.lane_decl.id}
        for lp in k.loops:
            allowed.add(lp.init.id)
        for s in k.bad_loops:  # already reported (strided-loops)
            if s.child_by_field_name("initializer") is not None:
                allowed.add(s.child_by_field_name("initializer").id)
        for s in k.lane0:
            allowed.add(s.child_by_field_name("condition").id)
        for n in _mentions(unit, fn.body, k.lane):
            p = n
            ok = False
            while p is not None:
                if p.id in allowed:
                    ok = True
                    break
                p = p.parent
            if not ok:
                _issue(k, "warp-row-index", Verdict.no(
                    f"the lane {k.lane} is used at line {_line(unit, n)} other than as a loop "
                    "start or in `if (lane == 0)`"))
                break
    # the body sees the thread only through row (and, warped, the lane)
    for s in k.body:
        for n in unit.walk(s):
            b = builtin(unit, n)
            if b is not None and b in _PER_THREAD:
                _issue(k, "row-index", Verdict.no(
                    f"the row body reads {b} (line {_line(unit, n)}): it may depend on the "
                    f"thread only through {k.row}"))


# ----------------------------------------------------------------------- storage


def _check_storage(k: RowKernel, site, ctx=None):
    unit, fn = site.unit, site.function
    for n in unit.walk(fn.body):
        if n.type == "declaration" and "__shared__" in unit.text(n):
            _issue(k, "storage-check", Verdict.no(
                f"line {_line(unit, n)} declares shared memory: rows would communicate through it"))
        if n.type == "pointer_expression" and unit.text(n.child_by_field_name("operator")) == "*":
            _issue(k, "storage-check", Verdict.unknown(
                f"line {_line(unit, n)}: the dereference `{_snip(unit, n)}` is not analysed "
                "(write it as a subscript)"))
    loop_of = {}
    for lp in k.loops:
        for n in unit.walk(lp.node):
            loop_of[n.id] = lp
    written, reads = set(), []
    for s in k.body:
        for n in unit.walk(s):
            if n.type != "subscript_expression":
                continue
            p = n.parent
            is_write = p is not None and p.type == "assignment_expression" and \
                _strip(p.child_by_field_name("left")).id == n.id
            base = _base_param(unit, fn, n.child_by_field_name("argument"))
            if is_write:
                if base is None:
                    _issue(k, "storage-check", Verdict.unknown(
                        f"line {_line(unit, n)}: cannot tell which array `{_snip(unit, n)}` writes"))
                else:
                    written.add(base)
                if p.child_by_field_name("operator") is not None and \
                        unit.text(p.child_by_field_name("operator")) != "=":
                    reads.append((n, base))
            else:
                reads.append((n, base))
    k.written = written
    k.outside_reads = []
    for n, base in reads:
        lp = loop_of.get(n.id)
        a = _address(k, site, n)
        at_elem = lp is not None and a is not None and a == lp.row_elem
        if base in written and not at_elem:
            _issue(k, "storage-check", Verdict.no(
                f"line {_line(unit, n)} reads `{_snip(unit, n)}` of {base}, which the kernel "
                "writes, at another element than the one the same thread writes: rows (or "
                "lanes) would communicate through memory"))
        elif base is None and not at_elem:
            _issue(k, "storage-check", Verdict.unknown(
                f"line {_line(unit, n)}: cannot tell which array `{_snip(unit, n)}` reads"))
        elif not at_elem:
            k.outside_reads.append((n, base))


def _alias_verdict(k: RowKernel, site, ctx) -> Verdict | None:
    unit, fn = site.unit, site.function
    for n, base in getattr(k, "outside_reads", []):
        for w in sorted(getattr(k, "written", ())):
            v = may_alias(unit, fn, base, w)
            if v.fails or ctx.assumed("no_alias", base, w):
                continue
            return Verdict.unknown(
                f"line {_line(unit, n)} reads {base} at `{_snip(unit, n)}`, not the row element, "
                f"and {base} may overlap {w}, which the kernel writes ({v.reason}); declare them "
                f"__restrict__ or pass --assume 'no_alias({base},{w})'")
    return None


# ================================================================== preconditions
def _report(name: str, yes: str):
    def check(site, ctx) -> Verdict:
        k = _analyse(site, site.pass_.kind == "simplify")
        v = k.issues.get(name)
        if name == "storage-check" and v is None:
            v = _alias_verdict(k, site, ctx)
        if v is not None:
            return v
        return Verdict.yes(yes.format(row=k.row, lane=k.lane or "lane"))
    return check


def _reduction_ops(site, ctx) -> Verdict:
    k = _analyse(site, site.pass_.kind == "simplify")
    unit = site.unit
    rs = [r for lp in k.loops for r in lp.reductions]
    if not rs:
        return Verdict.yes("no reduction: the loops are elementwise maps")
    for r in rs:
        if r.var not in k.scalars:
            return Verdict.unknown(f"the type of the accumulator {r.var} is not known")
        ty = k.scalars[r.var][1].replace("const ", "")
        if ty not in _FLOATS | _INTS:
            return Verdict.no(f"the accumulator {r.var} is a {ty}: __shfl_xor_sync moves float, "
                              "double and integer scalars only")
        if ty in _FLOATS and r.op in ("|", "&"):
            return Verdict.no(f"{r.op} on the {ty} {r.var}")
        if ty in _FLOATS and r.op in ("+", "*") and not ctx.assumed("reassoc"):
            return Verdict.unknown(
                f"{r.var} {r.op}= ... (line {_line(unit, r.stmt)}) is a {ty} "
                f"{'sum' if r.op == '+' else 'product'}: a warp adds 32 partial "
                f"{'sums' if r.op == '+' else 'products'} in another order, which rounds "
                "differently; pass --assume reassoc when that is acceptable (the workload's "
                "tolerance)")
    ops = sorted({r.op for r in rs})
    note = " (float reassociation assumed: --assume reassoc)" if any(
        k.scalars[r.var][1].replace("const ", "") in _FLOATS and r.op in ("+", "*")
        for r in rs) else ""
    return Verdict.yes(f"reductions with {', '.join(ops)}: associative and commutative{note}")


def _block_size(site, ctx, c) -> tuple[int | None, str]:
    blk = c.block[0].strip()
    v = int_text(blk)
    if v is None and blk in ctx.sizes:
        v = ctx.sizes[blk]
    if v is None:
        m = re.search(rf"^\s*#\s*define\s+{re.escape(blk)}\s+\(?\s*(\d+)\s*\)?\s*$",
                      site.unit.source.decode("utf-8", "replace"), re.MULTILINE)
        if m:
            v = int(m.group(1))
    return v, blk


def _whole_warps(site, ctx) -> Verdict:
    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    v, blk = _block_size(site, ctx, c)
    if v is not None:
        if v % WARP:
            return Verdict.no(f"block={blk} = {v} is not a multiple of 32: a warp would straddle "
                              "two blocks and hold lanes of two different rows")
        return Verdict.yes(f"block={blk} = {v}, a whole number of warps: blockIdx.x * "
                           "blockDim.x is a multiple of 32, so the 32 lanes of a warp share "
                           "(blockIdx.x * blockDim.x + threadIdx.x) / 32")
    if ctx.divisible(blk, WARP) or ctx.assumed("full_warp"):
        return Verdict.yes(f"block={blk} is a multiple of 32 (assumed)")
    return Verdict.unknown(f"block={blk}: cannot tell that it is a multiple of 32; pass "
                           f"--assume '{blk}%32==0' (or full_warp)")


def _no_barrier(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    k = _analyse(site, site.pass_.kind == "simplify")
    own = {s.id for lp in k.loops for s, *_ in lp.butterflies} | {s.id for s in k.own_shuffles}
    for b in barriers(unit, fn):
        return Verdict.no(f"{b.kind} at line {b.line}: a row kernel with one thread per row has "
                          "no barrier; the warp's shuffles would have to interleave with it")
    for call, why in barrier_calls(unit, fn):
        return Verdict.no(f"line {_line(unit, call)}: {why}")
    for w in warp_primitives(unit, fn):
        p, mine = w.node, False
        while p is not None:
            if p.id in own:
                mine = True
                break
            p = p.parent
        if not mine:
            return Verdict.no(f"warp primitive {w.name} at line {w.line}: the kernel already "
                              "uses warp-level communication")
    return Verdict.yes("no barrier or warp primitive" +
                       (" besides the butterflies" if own else ""))


def _fresh_names(site, ctx) -> Verdict:
    p = site.pass_
    lane, off = _names(p, site)
    if lane == off:
        return Verdict.no(f"the lane and the shuffle offset are both named {lane}")
    used = used_names(site.unit, site.function)
    for what, nm in (("lane", lane), ("shuffle offset", off)):
        if nm in used:
            return Verdict.no(f"the {what} name {nm} is already used in {site.function.name}")
    return Verdict.yes(f"lane {lane} and shuffle offset {off} are fresh")


def _names(p, site):
    from kltrans.passes.rewrite import fresh_numbered as fresh

    unit, fn = site.unit, site.function
    lane = p.lane if p.lane != "auto" else fresh(unit, fn, LANES)
    off = p.offset if p.offset != "auto" else fresh(unit, fn, OFFSETS, taken={lane})
    return lane, off


def _grid_times(contract) -> tuple[str | None, str]:
    import ast

    g = contract.grid[0].strip()
    try:
        tree = ast.parse(g, mode="eval").body
    except SyntaxError:
        return None, f"grid={g} does not parse"
    if isinstance(tree, ast.BinOp) and isinstance(tree.op, ast.Mult) and \
            isinstance(tree.right, ast.Constant) and tree.right.value == WARP:
        return header_expr(ast.get_source_segment(g, tree.left)), f"grid={g} is G * 32"
    return None, f"grid={g} is not G * 32: cannot tell the grid of one thread per row"


def _contract_shape(site, ctx) -> Verdict:
    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    g, why = _grid_times(c)
    return Verdict.yes(f"{why}: restored to {g}") if g is not None else Verdict.no(why)


def _guard_rule(**extra):
    """``if (row < rows) BODY`` holding a loop, or an early exit ``if (row >= rows) return;``
    (braces or not) before one."""
    exits = tuple(Rule(pattern=p, precedes=Rule(kind="for_statement"))
                  for p in ("if ($R >= $N) return;", "if ($R >= $N) { return; }"))
    return Rule(any=(Rule(pattern="if ($R < $N) $BODY;", has=Rule(kind="for_statement")),) + exits,
                inside_kernel=True, constraints={"R": {"kind": "identifier"}}, **extra)


ROW_GUARD = _guard_rule()
WARP_GUARD = _guard_rule(follows=Rule(pattern="$T $L = threadIdx.x & 31;"))


# ============================================================ the G-threads-per-row form
# A row group of G threads, G chosen from the row length at run time (the corpus softmax
# and layernorm experts): a block of T threads holds rpb = R / ceil(cols / W) rows
# (R = T / 32, so G = T / rpb is 32 for rows of at most W columns, up to T for long rows),
# thread gt of group `group` works on columns gt, gt + G, ...; ``active`` drops the
# threads of rows past the end (every thread of a group has the same answer).
GROUP_PRELUDE = (
    "const int {q} = ({n} + {wm1}) / {W};",
    "const int {rpb} = {q} >= 1 && {q} <= {R} ? {R} / {q} : 1;  // rows per block",
    "const int {G} = {T} / {rpb};  // threads per row",
    "const int {gidx} = threadIdx.x / {G};",
    "const int {gt} = threadIdx.x % {G};",
)
GROUP_ROW = "blockIdx.x * {rpb} + {gidx}"
THREAD_ROW_VALUE = "blockIdx.x * blockDim.x + threadIdx.x"
_GROUP_EXPRS = ("n", "wm1", "W", "R", "T")
GROUP_SITE = Rule(kind="declaration", inside_kernel=True,
                  regex=r"^(const\s+)?int\s+\w+\s*=\s*blockIdx\.x\s*\*\s*\w+\s*\+\s*\w+\s*;$")
THREAD_SITE = Rule(kind="declaration", inside_kernel=True,
                   regex=r"^(const\s+)?int\s+\w+\s*=\s*blockIdx\.x\s*\*\s*blockDim\.x\s*\+"
                         r"\s*threadIdx\.x\s*;$",
                   precedes=Rule(kind="declaration",
                                 regex=r"^(const\s+)?bool\s+\w+\s*=\s*\w+\s*<\s*\w+\s*;$"))
_GROUP_NAMES = ("q", "rpb", "gsize", "gidx", "rank")
_MEMORY_WRITE = ("subscript_expression", "pointer_expression", "field_expression")


def _tok(text: str) -> str:
    from kltrans.passes.rewrite import token_text as _n

    return _n(text)


def _is_group_site(site) -> bool:
    return site.node.type == "declaration"


@dataclass
class GroupKernel:
    row: str = ""
    names: dict = field(default_factory=dict)  # q rpb G gidx gt n W wm1 R T
    prelude: list = field(default_factory=list)  # the five statements (simplify side)
    rest: list = field(default_factory=list)  # top-level statements after the row decl
    strided: list = field(default_factory=list)  # (loop, var, incr-or-None)
    whole: list = field(default_factory=list)
    issues: dict = field(default_factory=dict)


def _gstmts(node):
    return [c for c in node.named_children if c.type != "comment"]


def _loop_header(unit, loop):
    """(var, start text, bound text, step text) of ``for (int c = A; c < B; STEP)``."""
    init = loop.child_by_field_name("initializer")
    cond = loop.child_by_field_name("condition")
    upd = loop.child_by_field_name("update")
    if init is None or cond is None or upd is None or init.type != "declaration":
        return None
    m = re.fullmatch(r"int (\w+) = (.+) ;", _tok(unit.text(init)))
    if m is None:
        return None
    var = m.group(1)
    c = re.fullmatch(rf"{var} < (.+)", _tok(unit.text(cond)))
    if c is None:
        return None
    return var, m.group(2), c.group(1), _tok(unit.text(upd))


def _incr_of(step: str, var: str) -> "str | None":
    return {f"++ {var}": "pre", f"{var} ++": "post", f"{var} += 1": "add"}.get(step)


def _loop_effects(unit, loop, var: str):
    """(memory writes, scalars written, why-not-simple) of a column loop's body."""
    body = loop.child_by_field_name("body")
    writes, scalars = [], set()
    local = {unit.text(n) for n in unit.walk(body) if n.type == "identifier"
             and n.parent is not None and n.parent.type in ("init_declarator", "declaration")}
    for n in unit.walk(body):
        if n.type in _LOOPS:
            return writes, scalars, f"line {_line(unit, n)}: a loop inside the column loop"
        if n.type in ("return_statement", "break_statement", "continue_statement",
                      "goto_statement"):
            return writes, scalars, f"line {_line(unit, n)}: an early exit in the column loop"
        if n.type in ("assignment_expression", "update_expression"):
            tgt = _strip(n.child_by_field_name("left") or n.child_by_field_name("argument"))
            if tgt is None:
                continue
            if tgt.type == "identifier":
                if unit.text(tgt) not in local:
                    scalars.add(unit.text(tgt))
            elif tgt.type in _MEMORY_WRITE:
                writes.append(tgt)
            else:
                return writes, scalars, f"line {_line(unit, n)}: an assignment to {_snip(unit, tgt)}"
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            name = re.sub(r"<.*>$", "", unit.text(f) if f is not None else "")
            if name in _PURE_CALLS:
                continue
            for a in (n.child_by_field_name("arguments").named_children or ()):
                a = _strip(a)
                if a is not None and a.type == "identifier" and unit.text(a) not in local:
                    scalars.add(unit.text(a))  # a reference parameter may write it
                elif a is not None and a.type in ("pointer_expression",) and \
                        unit.text(a).startswith("&"):
                    return writes, scalars, (f"line {_line(unit, a)}: an address passed to "
                                             f"{name}")
    return writes, scalars, None


def _dead_after(unit, stmts, idx: int, names: set) -> bool:
    """Every name in ``names`` is plainly reassigned (``x = E;``, E without x) in the
    top-level statements after ``stmts[idx]`` before any other mention."""
    left = set(names)
    for s in stmts[idx + 1:]:
        if not left:
            return True
        e = _expr_of(s)
        if e is not None and e.type == "assignment_expression" and \
                unit.text(e.child_by_field_name("operator")) == "=":
            tgt = _strip(e.child_by_field_name("left"))
            if tgt is not None and tgt.type == "identifier" and unit.text(tgt) in left:
                nm = unit.text(tgt)
                if not _mentions(unit, e.child_by_field_name("right"), nm):
                    left.discard(nm)
                    continue
        if any(unit.text(n) in left for n in _idents(unit, s)):
            return False
    return not left


def _classify(unit, stmts, top: int, loop, var: str, ptrs: set) -> "tuple[str, str]":
    """('map' | 'dead' | 'fold', why): what a column loop does to the row."""
    writes, scalars, why = _loop_effects(unit, loop, var)
    if why is not None:
        return "other", why
    for w in writes:
        if w.type != "subscript_expression":
            return "other", f"line {_line(unit, w)}: a write through {_snip(unit, w)}"
        arr = _strip(w.child_by_field_name("argument"))
        idx = w.child_by_field_name("indices") or w.child_by_field_name("index")
        it = _tok(unit.text(idx)).strip("[] ") if idx is not None else ""
        if arr is None or arr.type != "identifier" or unit.text(arr) not in ptrs or it != var:
            return "other", (f"line {_line(unit, w)}: the write {_snip(unit, w)} is not the "
                             f"element [{var}] of a row pointer")
    if writes and scalars:
        return "other", (f"line {_line(unit, loop)}: the loop both writes the row and updates "
                         f"{', '.join(sorted(scalars))}")
    if writes:
        return "map", ""
    if scalars and _dead_after(unit, stmts, top, scalars):
        return "dead", ""
    return "fold", ""


def _top_index(stmts, node) -> "int | None":
    for i, s in enumerate(stmts):
        if s.start_byte <= node.start_byte and node.end_byte <= s.end_byte:
            return i
    return None


def _row_pointers(unit, fn) -> set:
    """Parameters and locals declared as pointers (row bases)."""
    out = {p.name for p in fn.params if p.name and (p.pointer or p.array)}
    for n in unit.walk(fn.node):
        if n.type == "pointer_declarator":
            d = n
            while d is not None and d.type != "identifier":
                d = d.child_by_field_name("declarator")
            if d is not None:
                out.add(unit.text(d))
    return out


def _group_build(site) -> GroupKernel:
    """The G-threads-per-row form around ``site`` (simplify: the prelude's row declaration;
    optimize: ``row = blockIdx.x * blockDim.x + threadIdx.x`` followed by ``active``)."""
    unit, fn = site.unit, site.function
    k = GroupKernel()
    simplify = site.pass_.kind == "simplify"
    body = fn.node.child_by_field_name("body")
    st = _gstmts(body)
    me = next((i for i, s in enumerate(st) if s.id == site.node.id), None)
    if me is None:
        k.issues["form"] = Verdict.no("the row declaration is not a top-level statement of the "
                                      "kernel")
        return k
    items = _decl_items(unit, site.node)
    k.row = items[0][0] if items else ""
    if simplify:
        if me < 5:
            k.issues["form"] = Verdict.no("fewer than five declarations before the row")
            return k
        from kltrans.passes.token_forms import template_regex

        text = " ".join(_tok(unit.text(s)) for s in st[me - 5:me])
        m = template_regex("\n".join(GROUP_PRELUDE), _GROUP_EXPRS).fullmatch(text)
        if m is None:
            k.issues["form"] = Verdict.no(
                "the row is not computed by the group prelude `q = (cols + W - 1) / W; rpb = "
                "q >= 1 && q <= R ? R / q : 1; G = T / rpb; group = threadIdx.x / G; gt = "
                "threadIdx.x % G`")
            return k
        k.names = dict(m.groupdict())
        val = items[0][2] if items else None
        if val is None or _tok(unit.text(val)) != _tok(GROUP_ROW.format(**k.names)):
            k.issues["form"] = Verdict.no(f"the row is not blockIdx.x * {k.names['rpb']} + "
                                          f"{k.names['gidx']}")
            return k
        W = k.names["W"]
        wm1 = k.names["wm1"].replace(" ", "")
        if not (W.isdigit() and wm1 == str(int(W) - 1)) and wm1 != f"{W}-1":
            k.issues["form"] = Verdict.no(f"({k.names['n']} + {k.names['wm1']}) / {W} is not "
                                          f"ceil({k.names['n']} / {W})")
            return k
        k.prelude = st[me - 5:me]
        names = {k.names[x] for x in ("q", "rpb", "G", "gidx", "gt")}
    else:
        p = site.pass_
        k.names = {"q": p.q, "rpb": p.rpb, "G": p.gsize, "gidx": p.gidx, "gt": p.rank}
        names = set()
    k.rest = st[me + 1:]
    # thread dependence only through the row (and the group names in the loop headers)
    allowed = set()
    ptrs = _row_pointers(unit, fn)
    for i, s in enumerate(k.rest):
        for n in unit.walk(s):
            if n.type in _LOOPS and n.type != "for_statement":
                k.issues.setdefault("loops", Verdict.no(
                    f"line {_line(unit, n)}: a {n.type.split('_')[0]} loop (only for loops "
                    f"over the columns are distributed)"))
            if n.type != "for_statement":
                continue
            h = _loop_header(unit, n)
            if h is None:
                continue
            var, start, bound, step = h
            top = _top_index(k.rest, n)
            if simplify and start == k.names["gt"] and step == f"{var} += {k.names['G']}":
                kind, why = _classify(unit, k.rest, top, n, var, ptrs)
                k.strided.append((n, var, kind, why))
                allowed.update(x.id for x in _idents(unit, n.child_by_field_name("initializer")))
                allowed.update(x.id for x in _idents(unit, n.child_by_field_name("update")))
            elif start == "0" and _incr_of(step, var) is not None:
                kind, why = _classify(unit, k.rest, top, n, var, ptrs)
                k.whole.append((n, var, kind, why))
    if not simplify:
        bounds = {b for lp, var, kind, why in k.whole if kind in ("map", "dead")
                  for b in [_loop_header(unit, lp)[2]]}
        k.names["n"] = next(iter(bounds)) if len(bounds) == 1 else ""
        if len(bounds) > 1:
            k.issues.setdefault("loops", Verdict.no(
                f"the distributed loops have different bounds ({', '.join(sorted(bounds))})"))
    else:
        for lp, var, kind, why in k.strided:
            if _loop_header(unit, lp)[2] != k.names["n"]:
                k.issues.setdefault("loops", Verdict.no(
                    f"line {_line(unit, lp)}: the strided loop's bound is not "
                    f"{k.names['n']}, the length the group size is chosen from"))
    for s in k.rest:
        for n in _idents(unit, s):
            t = unit.text(n)
            if t in names and n.id not in allowed:
                k.issues["index"] = Verdict.no(
                    f"line {_line(unit, n)}: {t} is used outside the strided loop headers")
                break
            if n.parent is not None and n.parent.type == "field_expression" and \
                    t in ("threadIdx", "blockIdx", "blockDim", "gridDim"):
                k.issues["index"] = Verdict.no(
                    f"line {_line(unit, n)}: {t} is read outside the row index (the row "
                    f"body must depend on the thread only through {k.row})")
                break
        if "index" in k.issues:
            break
    for nm in {k.row} | names:
        if nm and _assigned_anywhere(unit, fn, nm):
            k.issues["index"] = Verdict.no(f"{nm} is assigned after its declaration")
    # writes outside the column loops
    loops = [lp for lp, *_ in k.strided + k.whole]
    for s in k.rest:
        for n in unit.walk(s):
            if n.type in ("assignment_expression", "update_expression"):
                tgt = _strip(n.child_by_field_name("left") or n.child_by_field_name("argument"))
                if tgt is not None and tgt.type in _MEMORY_WRITE and \
                        not any(lp.start_byte <= n.start_byte < lp.end_byte for lp in loops):
                    k.issues["writes"] = Verdict.no(
                        f"line {_line(unit, n)}: {_snip(unit, tgt)} is written outside the "
                        f"column loops (every thread of a row group would write it)")
                    break
        if "writes" in k.issues:
            break
    # storage: no shared memory, no local arrays
    for n in unit.walk(body):
        if n.type == "declaration" and "__shared__" in unit.text(n):
            k.issues["storage"] = Verdict.no(f"line {_line(unit, n)}: shared memory")
            break
        if n.type == "array_declarator":
            k.issues["storage"] = Verdict.no(f"line {_line(unit, n)}: a local array "
                                             f"{_snip(unit, n)}")
            break
    return k


def _assigned_anywhere(unit, fn, name: str) -> bool:
    for n in unit.walk(fn.node):
        if n.type in ("assignment_expression", "update_expression"):
            t = _strip(n.child_by_field_name("left") or n.child_by_field_name("argument"))
            if t is not None and t.type == "identifier" and unit.text(t) == name:
                return True
    return False


_GCACHE: dict = {}


def _group(site) -> GroupKernel:
    p = site.pass_
    key = (id(site.unit), site.node.id, p.kind, tuple(getattr(p, x, "") for x in _GROUP_NAMES))
    hit = _GCACHE.get(key)
    if hit is not None and hit[0] is site.unit:
        return hit[1]
    k = _group_build(site)
    if len(_GCACHE) > 256:
        _GCACHE.clear()
    _GCACHE[key] = (site.unit, k)
    return k


def _g_form(k) -> "Verdict | None":
    return k.issues.get("form")


def _g_index(site, ctx) -> Verdict:
    k = _group(site)
    v = _g_form(k) or k.issues.get("index")
    if v is not None:
        return v
    n = k.names
    if site.pass_.kind == "simplify":
        return Verdict.yes(f"{k.row} = blockIdx.x * {n['rpb']} + {n['gidx']} with {n['G']} "
                           f"threads per row; {n['gt']} and {n['G']} appear only as the start "
                           f"and step of the strided loops")
    return Verdict.yes(f"{k.row} is the global thread index and the row body depends on the "
                       f"thread only through it")


def _g_loops(site, ctx) -> Verdict:
    k = _group(site)
    v = _g_form(k)
    if v is not None:
        return v
    simplify = site.pass_.kind == "simplify"
    if "loops" in k.issues:
        return k.issues["loops"]
    for lp, var, kind, why in k.strided:
        if kind == "other":
            return Verdict.no(why)
        if kind == "fold":
            return Verdict.no(f"line {_line(site.unit, lp)}: the strided loop folds into "
                              f"scalars read later: each thread holds a partial result")
    moved = []
    for lp, var, kind, why in k.whole:
        if kind == "other":
            return Verdict.no(why)
        if kind in ("map", "dead"):
            moved.append(lp)
    if simplify and moved:
        return Verdict.no(f"line {_line(site.unit, moved[0])}: a whole-row loop that is a map or "
                          f"a dead fold (row-per-warp would stride it)")
    if not simplify and not moved:
        return Verdict.no("no column loop to distribute over the group (no map, no dead fold)")
    if not simplify and not re.fullmatch(r"[A-Za-z_]\w*", k.names.get("n", "")):
        return Verdict.no(f"the column loops' bound {k.names.get('n') or '?'} is not a plain "
                          f"name (the group size is chosen from it)")
    n = (len(k.strided), len(k.whole)) if simplify else (len(moved), len(k.whole) - len(moved))
    return Verdict.yes(f"{n[0]} strided column loop(s) (maps or folds whose result is "
                       f"overwritten), {n[1]} whole-row fold(s) every thread keeps")


def _g_writes(site, ctx) -> Verdict:
    k = _group(site)
    v = _g_form(k) or k.issues.get("writes")
    return v if v is not None else Verdict.yes("the row is written only in the column loops, "
                                               "each element by one thread")


def _g_storage(site, ctx) -> Verdict:
    k = _group(site)
    v = _g_form(k) or k.issues.get("storage")
    if v is not None:
        return v
    unit = site.unit
    written = set()
    for lp, var, kind, why in k.strided + k.whole:
        w, _, _ = _loop_effects(unit, lp, var)
        for t in w:
            a = _strip(t.child_by_field_name("argument"))
            if a is not None:
                written.add(unit.text(a))
    for lp, var, kind, why in k.strided + k.whole:
        for n in unit.walk(lp.child_by_field_name("body")):
            if n.type == "subscript_expression":
                a = _strip(n.child_by_field_name("argument"))
                idx = n.child_by_field_name("indices") or n.child_by_field_name("index")
                it = _tok(unit.text(idx)).strip("[] ") if idx is not None else ""
                if a is not None and unit.text(a) in written and it != var:
                    return Verdict.no(f"line {_line(unit, n)}: {_snip(unit, n)} reads a written "
                                      f"row at another column")
    return Verdict.yes("scalars only; each written row element is read only by the thread "
                       "that writes it")


def _g_dtype(site, ctx) -> Verdict:
    k = _group(site)
    v = _g_form(k)
    if v is not None:
        return v
    return Verdict.yes("no reduction is split over the group: whole-row folds stay whole in "
                       "every thread, strided folds are overwritten (no reassociation)")


def _g_barrier(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    for b in barriers(unit, fn):
        return Verdict.no(f"{b.kind} at line {b.line}: the group form has no barrier")
    for call, why in barrier_calls(unit, fn):
        return Verdict.no(f"line {_line(unit, call)}: {why}")
    for w in warp_primitives(unit, fn):
        return Verdict.no(f"warp primitive {w.name} at line {w.line}: the group's threads "
                          f"communicate")
    return Verdict.yes("no barrier or warp primitive")


def _g_contract(site, ctx) -> Verdict:
    from kltrans.syntax.contract import evaluate, file_constants

    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    k = _group(site)
    v = _g_form(k)
    if v is not None:
        return v
    consts = file_constants(site.unit)
    try:
        block = int(evaluate(c.block[0], consts))
    except Exception:
        return Verdict.no(f"block={c.block[0]} is not a constant")
    grid = _unparen(c.grid[0])
    if site.pass_.kind == "simplify":
        n = k.names
        try:
            T = int(evaluate(n["T"], consts))
            W = int(evaluate(n["W"], consts))
        except Exception:
            return Verdict.no(f"{n['T']} or {n['W']} is not a constant")
        m = _GROUP_GRID.fullmatch(grid)
        if T != block:
            return Verdict.no(f"{n['T']} = {T} is not the block size {block}")
        if m is None or m.group(2) != n["R"] or m.group(3) != n["n"] or \
                int(m.group(4)) != W:
            return Verdict.no(f"grid={c.grid[0]} is not ceil_div(rows, max(1, {n['R']} / "
                              f"ceil_div({n['n']}, {W}))): rows per block as in the kernel")
        return Verdict.yes(f"grid={c.grid[0]}, block={block}: restored to "
                           f"ceil_div({m.group(1)}, {block})")
    p = site.pass_
    if block % WARP or (block // WARP) & (block // WARP - 1):
        return Verdict.no(f"block={block} is not 32 times a power of two: the row groups "
                          f"T / rpb would not tile the block")
    try:
        T = int(evaluate(str(p.threads), consts))
    except Exception:
        return Verdict.no(f"threads={p.threads} is not a constant")
    if T != block:
        return Verdict.no(f"threads={p.threads} = {T} is not the block size {block}")
    m = re.fullmatch(r"ceil_div\((\w+),(\w+)\)", grid)
    if m is None or int_text(m.group(2)) != block:
        return Verdict.no(f"grid={c.grid[0]} is not ceil_div(rows, {block}): one thread per row")
    return Verdict.yes(f"grid={c.grid[0]}, block={block} (32 x a power of two): rows per "
                       f"block become max(1, {block // WARP} / ceil_div(cols, W))")


def _g_fresh(site, ctx) -> Verdict:
    p = site.pass_
    new = [getattr(p, x) for x in _GROUP_NAMES]
    if len(set(new)) != len(new):
        return Verdict.no("two of the group names are the same")
    used = used_names(site.unit, site.function)
    for nm in new:
        if nm in used:
            return Verdict.no(f"the name {nm} is already used in {site.function.name}")
    return Verdict.yes(f"{', '.join(new)} are fresh")


def _g_active(site, ctx) -> Verdict:
    """The optimize side's row guard: ``const bool active = row < rows;`` right after the
    row, the exits ``if (!active) return;`` at top level (uniform over a group)."""
    k = _group(site)
    v = _g_form(k)
    if v is not None:
        return v
    unit = site.unit
    if not k.rest:
        return Verdict.no("nothing after the row index")
    m = re.fullmatch(rf"(const )?bool (\w+) = {k.row} < (\w+) ;", _tok(unit.text(k.rest[0])))
    if m is None:
        return Verdict.no(f"no `const bool active = {k.row} < rows;` right after the row")
    return Verdict.yes(f"{m.group(2)} = {k.row} < {m.group(3)} is the same for the G threads "
                       f"of a row")


def _either(old, new):
    """A precondition that checks the warp form with ``old`` and the group form with ``new``."""
    def check(site, ctx) -> Verdict:
        return new(site, ctx) if _is_group_site(site) else old(site, ctx)
    return check


def _o_group_opt(site, ctx) -> "Verdict | None":
    """The optimize side's group option must fit the site's form."""
    p = site.pass_
    if _is_group_site(site) and p.group != "cols":
        return Verdict.no("the `active` row form takes a run-time group size: group=cols")
    if not _is_group_site(site) and p.group == "cols":
        return Verdict.no("group=cols needs the row form `const int row = blockIdx.x * "
                          "blockDim.x + threadIdx.x; const bool active = row < rows;`")
    return None


def _o_index(old):
    def check(site, ctx) -> Verdict:
        v = _o_group_opt(site, ctx)
        if v is not None:
            return v
        return _g_index(site, ctx) if _is_group_site(site) else old(site, ctx)
    return check


def _group_rewrite_simplify(site, p) -> list:
    unit = site.unit
    k = _group(site)
    src = unit.source
    first = k.prelude[0]
    from kltrans.passes.token_forms import line_start

    a = line_start(src, first.start_byte)
    b = line_start(src, site.node.start_byte)
    items = _decl_items(unit, site.node)
    val = items[0][2]
    edits = [Edit.delete(a, b), Edit(val.start_byte, val.end_byte, THREAD_ROW_VALUE)]
    for lp, var, kind, why in k.strided:
        init = lp.child_by_field_name("initializer")
        iv = _decl_items(unit, init)[0][2]
        edits.append(Edit(iv.start_byte, iv.end_byte, "0"))
        upd = lp.child_by_field_name("update")
        edits.append(Edit(upd.start_byte, upd.end_byte, _INCR[p.incr].format(c=var)))
    return edits


def _group_rewrite_optimize(site, p) -> list:
    from kltrans.syntax.contract import evaluate, file_constants

    unit = site.unit
    k = _group(site)
    c, _ = contract_of(site)
    block = int(evaluate(c.block[0], file_constants(unit)))
    n = site.pass_
    W = n.width
    wm1 = str(W - 1) if isinstance(W, int) else f"{W} - 1"
    cols = k.names["n"]
    names = dict(q=n.q, rpb=n.rpb, G=n.gsize, gidx=n.gidx, gt=n.rank, n=cols, W=W, wm1=wm1,
                 R=block // WARP, T=n.threads)
    from kltrans.passes.token_forms import line_start

    src = unit.source
    ls = line_start(src, site.node.start_byte)
    ind = src[ls:site.node.start_byte].decode()
    pre = "".join(f"{ind}{t.format(**names)}\n" for t in GROUP_PRELUDE)
    items = _decl_items(unit, site.node)
    val = items[0][2]
    edits = [Edit.insert(ls, pre),
             Edit(val.start_byte, val.end_byte, GROUP_ROW.format(**names))]
    for lp, var, kind, why in k.whole:
        if kind not in ("map", "dead"):
            continue
        init = lp.child_by_field_name("initializer")
        iv = _decl_items(unit, init)[0][2]
        edits.append(Edit(iv.start_byte, iv.end_byte, n.rank))
        upd = lp.child_by_field_name("update")
        edits.append(Edit(upd.start_byte, upd.end_byte, f"{var} += {n.gsize}"))
    return edits


def _group_contract(contract, site, p):
    from kltrans.syntax.contract import evaluate, file_constants

    grid = _unparen(contract.grid[0])
    block = int(evaluate(contract.block[0], file_constants(site.unit)))
    if p.kind == "simplify":
        m = _GROUP_GRID.fullmatch(grid)
        return contract.with_(grid=(header_expr(f"ceil_div({m.group(1)}, {block})"),))
    m = re.fullmatch(r"ceil_div\((\w+),(\w+)\)", grid)
    W = p.width
    w = W if isinstance(W, int) else int(evaluate(W, file_constants(site.unit)))
    return contract.with_(grid=(header_expr(
        f"ceil_div({m.group(1)}, max(1, {block // WARP} / ceil_div({_group(site).names['n']}, "
        f"{w})))"),))


# ========================================================================= passes
@dataclass(frozen=True)
class RowPerWarp(Pass):
    """Give each row of a row-wise kernel a whole warp instead of one thread.

    Before::

        // kltrans: launch rowsum grid=ceil_div(rows, 256) block=256
        __global__ void rowsum(const float* x, float* y, float* total, int rows, int cols) {
          int row = blockIdx.x * blockDim.x + threadIdx.x;
          if (row >= rows) return;
          float s = 0.0f;
          for (int j = 0; j < cols; ++j) s += x[row * cols + j];
          for (int j = 0; j < cols; ++j) y[row * cols + j] = x[row * cols + j] / s;
          total[row] = s;
        }

    After ``row-per-warp`` (with ``--assume reassoc``)::

        // kltrans: launch rowsum grid=(ceil_div(rows, 256) * 32) block=256
        __global__ void rowsum(const float* x, float* y, float* total, int rows, int cols) {
          int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
          int lane = threadIdx.x & 31;
          if (row >= rows) return;
          float s = 0.0f;
          for (int j = lane; j < cols; j += 32) s += x[row * cols + j];
          for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
          for (int j = lane; j < cols; j += 32) y[row * cols + j] = x[row * cols + j] / s;
          if (lane == 0) total[row] = s;
        }

    Every column loop strides by 32 from the lane; every reduction of a loop (``s op= E``,
    ``s = fmaxf(s, E)``...) gets a butterfly of ``__shfl_xor_sync`` with the same
    operator right after the loop, so every lane holds the row's full value and later
    loops and scalars read it as before; per-row writes (``mean[row] = ...``) are done by
    lane 0. The grid of the launch header is multiplied by 32. The row guard cannot split
    a warp's shuffles: with ``blockDim.x`` a multiple of 32 (checked: whole-warps),
    ``blockIdx.x * blockDim.x`` is a multiple of 32, so the 32 lanes of a warp have the
    same ``(blockIdx.x * blockDim.x + threadIdx.x) / 32`` and the guard (whose bound is
    thread-independent, checked: warp-uniform-guard) is warp-uniform; it is the only
    branch around the loops (checked: loop-shapes), so every lane reaches every butterfly.

    Preconditions: row-index (layout: ``row`` is the global thread index declared once,
    never assigned; the row body depends on the thread only through it), row-major
    (layout: loop writes are at ``row * B + c`` for the loop's bound ``B`` and counter ``c``,
    writes outside the loops at ``[row]``), reduction-ops (dtype: every reduction is
    +, *, |, &, fmaxf/fminf/fmax/fmin/max/min over float, double or integer scalars;
    float sums and products are reassociated, which needs ``--assume reassoc`` from the
    context), storage-check (storage: scalars only, no shared memory or local arrays;
    each accumulator is row-private, starts at its declared value, the identity of + or *,
    is reduced in one loop and read there only by its reduction; arrays the kernel writes
    are read only at the element the same thread writes; other arrays read elsewhere must
    not overlap written ones: ``__restrict__``, distinct element sizes or ``--assume
    no_alias(...)``), loop-shapes (pipeline: the row body is declarations, scalar
    assignments, per-row writes and loops ``for (int c = 0; c < B; ++c)`` with a uniform
    ``B`` whose bodies are declarations, maps and reductions, no branch, no early exit;
    the guard is ``if (row < rows) {...}`` ending the kernel or ``if (row >= rows)
    return;``), warp-uniform-guard (pipeline: the guard is a top-level statement with a
    thread-independent bound), no-barrier (pipeline: no barrier or warp primitive),
    whole-warps (hardware: a 1-D launch header whose block is a multiple of 32, from a
    literal, a ``#define``, or ``--assume 'B%32==0'``/``full_warp``), fresh-names
    (pipeline).

    Options: ``group`` (threads per row: 32, or ``cols``: the run-time group size above),
    ``lane`` and ``offset`` (names of the lane and of the butterfly offset; ``auto`` picks
    unused ones: lane, off); for ``group=cols``: ``width`` (W, a number or macro),
    ``threads`` (T as the kernel spells it, default SMX_THREADS), ``q``, ``rpb``,
    ``gsize``, ``gidx``, ``rank`` (the names of q, rpb, G, group, gt).

    With ``group=cols`` the anchor is instead ``const int row = blockIdx.x * blockDim.x +
    threadIdx.x;`` right before ``const bool active = row < rows;`` (grid
    ``ceil_div(rows, T)``, block T = 32 x a power of two): the group prelude of the module
    docstring goes in front of the row, the row becomes ``blockIdx.x * rpb + group``, the
    grid ``ceil_div(rows, max(1, R / ceil_div(cols, W)))``, and the column loops ``for
    (int c = 0; c < cols; ++c)`` that are maps (writes only ``P[c]`` of a row pointer) or
    folds whose scalars are overwritten before any read are strided ``c = gt; c += G``;
    folds whose result is used stay whole in every thread (nothing is reassociated, no
    shuffle). Its checks, under the same names: row-index (nothing else reads the
    thread), warp-uniform-guard (the ``active`` flag is ``row < rows``), no-barrier,
    row-major (no memory write outside the column loops), reduction-ops (always holds:
    no fold is split), storage-check (no shared memory or local arrays; written rows read
    only at [c]), loop-shapes (only for loops, at least one to stride, one plain bound:
    the ``cols`` the group size is chosen from), whole-warps (the header's block is T,
    32 x a power of two, and the grid is ``ceil_div(rows, T)``), fresh-names (q, rpb,
    G, group, gt). The group size is chosen at run time from ``cols``: no context fact.

    Limits: ``(blockIdx.x * blockDim.x + threadIdx.x)`` is computed in unsigned int, so
    rows * 32 must stay below 2^32; mixed loop-step spellings (``++c`` in one loop,
    ``c++`` in another) come back from ``row-per-thread`` with one spelling.
    """

    name = "row-per-warp"
    kind = "optimize"
    inverse = "row-per-thread"
    anchor = Rule(any=(ROW_GUARD, THREAD_SITE))
    preconditions = (
        Precondition("row-index", "layout",
                     "row is the global thread index, declared once and never assigned, and "
                     "the row body depends on the thread only through it",
                     _o_index(_report("row-index", "{row} is the global thread index; the row "
                                      "body depends on the thread only through it"))),
        Precondition("warp-uniform-guard", "pipeline",
                     "the row guard is a top-level statement with a thread-independent bound",
                     _either(_report("warp-uniform-guard", "the guard's bound does not depend "
                                     "on the thread: with whole warps all lanes of a warp "
                                     "share {row}, so the guard is warp-uniform"), _g_active)),
        Precondition("no-barrier", "pipeline",
                     "no barrier or warp primitive in the kernel",
                     _either(_no_barrier, _g_barrier)),
        Precondition("row-major", "layout",
                     "column loops write x[row * B + c]; writes outside them are x[row]",
                     _either(_report("row-major", "every write is the row element row * B + c "
                                     "or the per-row element [{row}]"), _g_writes)),
        Precondition("reduction-ops", "dtype",
                     "reductions are associative and commutative (float + and * need "
                     "--assume reassoc)", _either(_reduction_ops, _g_dtype)),
        Precondition("storage-check", "storage",
                     "per-thread scalar state only, accumulators start at the identity, no "
                     "cross-row communication through memory",
                     _either(_report("storage-check", "scalars only; accumulators are "
                                     "row-private and start at the identity; no array is read "
                                     "where another thread writes"), _g_storage)),
        Precondition("loop-shapes", "pipeline",
                     "the row body is declarations, scalars, per-row writes and column loops "
                     "(maps and reductions) from 0 by 1 with a uniform bound",
                     _either(_report("loop-shapes", "every column loop is an elementwise map or "
                                     "a reduction into a scalar; the row guard is the only "
                                     "branch"), _g_loops)),
        Precondition("whole-warps", "hardware",
                     "a 1-D launch header whose block size is a multiple of 32",
                     _either(_whole_warps, _g_contract)),
        Precondition("fresh-names", "pipeline",
                     "the lane and shuffle-offset names are not used in the kernel",
                     _either(_fresh_names, _g_fresh)),
    )

    group: object = option(32, Choice(*GROUPS),
                           "threads per row: 32 (one warp), or cols (G = threads / rows per "
                           "block, rows per block chosen from the row length at run time)",
                           tune=True)
    lane: str = option("auto", Identifier(), "name of the lane variable (auto: a fresh name)")
    offset: str = option("auto", Identifier(), "name of the butterfly offset (auto: a fresh name)")
    width: object = option(1024, OneOf(IntRange(32, 1 << 20), Identifier(words=())),
                           "group=cols: columns per 32 threads (W: rows of up to W columns get "
                           "one warp)", tune=True)
    threads: object = option("SMX_THREADS", OneOf(IntRange(32, 1024), Identifier(words=())),
                             "group=cols: the block size as the kernel spells it (T)", tune=True)
    q: str = option("q", Identifier(words=()), "group=cols: name of ceil(cols / W)")
    rpb: str = option("rpb", Identifier(words=()), "group=cols: name of the rows per block")
    gsize: str = option("G", Identifier(words=()), "group=cols: name of the group size")
    gidx: str = option("group", Identifier(words=()), "group=cols: name of the group index")
    rank: str = option("gt", Identifier(words=()), "group=cols: name of the rank in the group")

    def rewrite(self, site, ctx):
        if _is_group_site(site):
            return _group_rewrite_optimize(site, self)
        unit = site.unit
        k = _analyse(site, False)
        if isinstance(k.decl, str):
            raise SkipSite(k.decl)
        lane, off = _names(self, site)
        d = k.decl
        ind = line_indent(unit, d.decl.start_byte)
        edits = [Edit(d.value.start_byte, d.value.end_byte, f"({unit.text(d.value)}) / {WARP}"),
                 Edit.insert(d.decl.end_byte, f"\n{ind}int {lane} = threadIdx.x & {WARP - 1};")]
        for lp in k.loops:
            edits.append(Edit(lp.init.start_byte, lp.init.end_byte, lane))
            edits.append(Edit(lp.update.start_byte, lp.update.end_byte, f"{lp.var} += {WARP}"))
            li = line_indent(unit, lp.node.start_byte)
            text = "".join(f"\n{li}{_butterfly(r, off)}" for r in lp.reductions)
            if text:
                edits.append(Edit.insert(lp.node.end_byte, text))
        for s in k.lane0:
            edits.append(Edit.insert(s.start_byte, f"if ({lane} == 0) "))
        return edits

    def update_contract(self, contract, site, ctx):
        if _is_group_site(site):
            return _group_contract(contract, site, self)
        return contract.with_(grid=(header_expr(f"{contract.grid[0]} * {WARP}"),))

    def inverse_for(self, site, ctx):
        if _is_group_site(site):
            k = _group(site)
            moved = [lp for lp, var, kind, why in k.whole if kind in ("map", "dead")]
            h = _loop_header(site.unit, moved[0]) if moved else None
            return RowPerThread(incr=(_incr_of(h[3], h[0]) if h else None) or "pre")
        k = _analyse(site, False)
        incr = "pre"
        if k.loops:
            u = _compact(site.unit.text(k.loops[0].update))
            incr = "post" if u.endswith("++") else "add" if "+=" in u else "pre"
        return RowPerThread(incr=incr)


@dataclass(frozen=True)
class RowPerThread(Pass):
    """Undo row-per-warp: one thread per row again, the shuffles removed, the grid / 32.

    Before::

        // kltrans: launch rowsum grid=(ceil_div(rows, 256) * 32) block=256
        int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
        int lane = threadIdx.x & 31;
        if (row >= rows) return;
        float s = 0.0f;
        for (int j = lane; j < cols; j += 32) s += x[row * cols + j];
        for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffff, s, off);
        if (lane == 0) total[row] = s;

    After ``row-per-thread``::

        // kltrans: launch rowsum grid=ceil_div(rows, 256) block=256
        int row = blockIdx.x * blockDim.x + threadIdx.x;
        if (row >= rows) return;
        float s = 0.0f;
        for (int j = 0; j < cols; ++j) s += x[row * cols + j];
        total[row] = s;

    The inverse of row-per-warp's output shapes: a warp per row written as a lane stride
    of 32 with xor butterflies, or (anchor: ``const int row = blockIdx.x * rpb + group;``
    after the group prelude of the module docstring) the run-time group of G threads
    per row of ``row-per-warp{group=cols}``: the prelude goes, the row becomes
    ``blockIdx.x * blockDim.x + threadIdx.x``, the strided loops ``for (int c = gt; c <
    cols; c += G)`` start at 0 by 1, the grid ``ceil_div(rows, max(1, R / ceil_div(cols,
    W)))`` becomes ``ceil_div(rows, T)``. For that form the checks are: warp-row-index
    (G, gt, group, q, rpb and the thread are read only by the prelude and the strided
    loop headers), strided-loops (every strided loop is a map or a fold whose scalars
    are overwritten before any read, no whole-row loop is one: row-per-warp would stride
    it; the strided loops run to ``cols``), lane0-writes (no memory write outside the
    loops), reduction-ops (always holds), storage-check (no shared memory, no local
    arrays, written rows read only at [c]), no-barrier (none at all), contract-shape
    (the grid is as above and T is the block). Register tiles, shared-memory merges or
    G passed to helpers (the experts before their other steps) are not matched.

    Preconditions: warp-row-index (layout: ``row = (blockIdx.x * blockDim.x +
    threadIdx.x) / 32`` followed by ``int lane = threadIdx.x & 31;``, neither assigned,
    the lane used only as loop starts and in ``if (lane == 0)``; loop writes at ``row * B +
    c``, other writes at ``[row]``), strided-loops
    (pipeline: every column loop is ``for (int c = lane; c < B; c += 32)`` with a map or
    reduction body, followed by exactly one butterfly per reduction, same operator and
    order; nothing else but declarations, scalars and lane-0 writes), lane0-writes
    (storage: per-row writes ``A[row] = E`` are under ``if (lane == 0)``), reduction-ops
    (dtype: as for row-per-warp: back to one sequential sum is again a reassociation),
    storage-check (storage: as for row-per-warp), no-barrier (pipeline: no warp
    primitive other than the butterflies), contract-shape (hardware: the header's grid is
    ``G * 32``, restored to ``G``).

    Options: ``incr`` (how the restored loops step: ``pre`` ``++c``, ``post`` ``c++``,
    ``add`` ``c += 1``).
    """

    name = "row-per-thread"
    kind = "simplify"
    inverse = "row-per-warp"
    anchor = Rule(any=(WARP_GUARD, GROUP_SITE))
    preconditions = (
        Precondition("no-barrier", "pipeline",
                     "no barrier, and no warp primitive besides the butterflies",
                     _either(_no_barrier, _g_barrier)),
        Precondition("warp-row-index", "layout",
                     "row = (blockIdx.x * blockDim.x + threadIdx.x) / 32 and lane = threadIdx.x "
                     "& 31 (or the group prelude), used only as loop starts and lane-0 guards",
                     _either(_report("warp-row-index", "{row} is the warp index and {lane} the "
                                     "lane"), _g_index)),
        Precondition("strided-loops", "pipeline",
                     "column loops are lane-strided by 32, each followed by one butterfly per "
                     "reduction (group form: strided maps and dead folds)",
                     _either(_report("strided-loops", "every column loop is lane-strided and "
                                     "followed by its butterflies"), _g_loops)),
        Precondition("lane0-writes", "storage",
                     "per-row writes are made by lane 0 (group form: no per-row writes)",
                     _either(_report("lane0-writes", "per-row writes are under if ({lane} == "
                                     "0)"), _g_writes)),
        Precondition("reduction-ops", "dtype",
                     "reductions are associative and commutative (float + and * need "
                     "--assume reassoc)", _either(_reduction_ops, _g_dtype)),
        Precondition("storage-check", "storage",
                     "per-thread scalar state only, no cross-row communication through memory",
                     _either(_report("storage-check", "scalars only; no array is read where "
                                     "another thread writes"), _g_storage)),
        Precondition("contract-shape", "hardware",
                     "the launch header's grid is G * 32 (group form: ceil_div(rows, max(1, R "
                     "/ ceil_div(cols, W))))", _either(_contract_shape, _g_contract)),
    )

    incr: str = option("pre", Choice(*_INCR), "step of the restored loops: ++c, c++ or c += 1")

    def rewrite(self, site, ctx):
        if _is_group_site(site):
            return _group_rewrite_simplify(site, self)
        unit = site.unit
        k = _analyse(site, True)
        if isinstance(k.decl, str) or k.lane_decl is None:
            raise SkipSite("not the shape row-per-warp writes")
        d = k.decl
        v = _strip(d.value)
        inner = v.child_by_field_name("left")  # ( E )
        e = _strip(inner)
        edits = [Edit(d.value.start_byte, d.value.end_byte, unit.text(e)),
                 Edit.delete(d.decl.end_byte, k.lane_decl.end_byte)]
        for lp in k.loops:
            edits.append(Edit(lp.init.start_byte, lp.init.end_byte, "0"))
            edits.append(Edit(lp.update.start_byte, lp.update.end_byte,
                              _INCR[self.incr].format(c=lp.var)))
            end = lp.node.end_byte
            for s, *_ in lp.butterflies:
                end = s.end_byte
            if end != lp.node.end_byte:
                edits.append(Edit.delete(lp.node.end_byte, end))
        for s in k.lane0:
            cons = s.child_by_field_name("consequence")
            edits.append(Edit.delete(s.start_byte, cons.start_byte))
        return edits

    def update_contract(self, contract, site, ctx):
        if _is_group_site(site):
            return _group_contract(contract, site, self)
        g, _ = _grid_times(contract)
        return contract if g is None else contract.with_(grid=(g,))

    def inverse_for(self, site, ctx):
        if _is_group_site(site):
            n = _group(site).names

            def num(t):
                return int(t) if t.isdigit() else t
            return RowPerWarp(group="cols", width=num(n["W"]), threads=num(n["T"]), q=n["q"],
                              rpb=n["rpb"], gsize=n["G"], gidx=n["gidx"], rank=n["gt"])
        k = _analyse(site, True)
        off = next((o for lp in k.loops for *_, o in lp.butterflies), "auto")
        return RowPerWarp(lane=k.lane or "auto", offset=off)
