"""One warp per row: ``row-per-warp`` (optimize) and its inverse ``row-per-thread`` (simplify).

Both passes start from a *row kernel*: the global thread index picks a row, a guard
drops the threads past the last row, and the rest of the kernel works on that row::

    int row = blockIdx.x * blockDim.x + threadIdx.x;     // or (...) / 32 after row-per-warp
    if (row >= rows) return;                             // or if (row < rows) { ... }
    ... declarations, per-row scalars, loops over the columns c of the row ...

The analysis of that shape (:func:`_analyse`) is shared by the two passes; each
precondition reads the findings of its own category from it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kltrans.analysis.affine import (
    BLOCK_SYMBOLS,
    THREAD_SYMBOLS,
    Affine,
    _element_address,
    _Eval,
    affine_of,
    sources,
)
from kltrans.analysis.barriers import barrier_calls, barriers
from kltrans.analysis.loops import assigned_in
from kltrans.analysis.pointers import may_alias
from kltrans.analysis.verdict import Verdict
from kltrans.analysis.warps import warp_primitives
from kltrans.match import Rule
from kltrans.passes import Choice, Identifier, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.syntax import Edit
from kltrans.analysis.affine import strip_parens as _strip
from passes.grid_stride import (
    GLOBAL_INDEX,
    builtin,
    contract_of,
    header_expr,
    index_decl,
    inside,
    int_text,
    line_indent,
    norm,
    statements,
    used_names,
)

WARP = 32
GROUPS = (32,)
LANES = ("lane", "ln", "lane_id", "l")
OFFSETS = ("off", "offset", "o", "sh")
_GRID_SYMBOLS = frozenset(f"gridDim.{c}" for c in "xyz")
_PER_THREAD = THREAD_SYMBOLS | BLOCK_SYMBOLS | _GRID_SYMBOLS | {"?"}

#: side-effect-free calls a map or reduction body may make (math, conversions, loads)
_PURE_CALLS = {
    "min", "max", "fminf", "fmaxf", "fmin", "fmax", "abs", "fabs", "fabsf", "sqrt", "sqrtf",
    "rsqrt", "rsqrtf", "exp", "expf", "__expf", "exp2f", "log", "logf", "__logf", "log2f",
    "tanh", "tanhf", "sinf", "cosf", "__sinf", "__cosf", "powf", "__powf", "erff", "erf",
    "fmaf", "fma", "__fdividef", "__frcp_rn", "__fmul_rn", "__fadd_rn", "__ldg", "__ldcs",
    "__ldca", "__ldcg", "__float2half", "__half2float", "__bfloat162float", "__float2bfloat16",
    "__float2bfloat16_rn", "__int2float_rn", "__float2int_rn", "floorf", "ceilf", "roundf",
    "truncf", "copysignf", "isnan", "isinf", "static_cast"}
#: reduction operators: compound assignment -> operator, and two-argument functions
_COMPOUND = {"+=": "+", "*=": "*", "|=": "|", "&=": "&"}
_BINARY = {"+": "+", "*": "*", "|": "|", "&": "&"}
_FUNCS = {"fmaxf", "fminf", "fmax", "fmin", "max", "min"}
_IDEMPOTENT = {"|", "&"} | _FUNCS
_IDENTITY = {"+": 0, "*": 1}
_FLOATS = {"float", "double"}
_INTS = {"int", "unsigned", "unsigned int", "long", "long long", "unsigned long",
         "unsigned long long", "int32_t", "uint32_t", "int64_t", "uint64_t"}
_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
_INCR = {"pre": "++{c}", "post": "{c}++", "add": "{c} += 1"}


# ==================================================================== small helpers
def _line(unit, node) -> int:
    return unit.line_col(node.start_byte)[0]


def _snip(unit, node, k: int = 60) -> str:
    t = norm(unit.text(node))
    return t if len(t) <= k else t[:k - 3] + "..."


def _pure(unit, node) -> bool:
    """No assignments, increments or calls other than known side-effect-free ones."""
    for n in unit.walk(node):
        if n.type in ("assignment_expression", "update_expression", "new_expression",
                      "delete_expression"):
            return False
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            name = unit.text(f) if f is not None else ""
            name = re.sub(r"<.*>$", "", name).split("::")[-1]
            if name not in _PURE_CALLS:
                return False
    return True


def _thread_dep(unit, node) -> frozenset:
    return frozenset(sources(unit, node)) & _PER_THREAD


def _idents(unit, node):
    return [n for n in unit.walk(node) if n.type == "identifier"]


def _mentions(unit, node, name: str) -> list:
    return [n for n in _idents(unit, node) if unit.text(n) == name]


def _decl_type(unit, decl) -> str:
    ty = decl.child_by_field_name("type")
    return norm(unit.text(ty)) if ty is not None else ""


def _decl_items(unit, decl):
    """(name, declarator, value or None) of each variable a declaration declares."""
    from passes.grid_stride import _declarator_ident

    out = []
    for d in decl.children_by_field_name("declarator"):
        ident = _declarator_ident(d)
        if ident is None:
            continue
        value = d.child_by_field_name("value") if d.type == "init_declarator" else None
        out.append((unit.text(ident), d, value))
    return out


def _has_array(unit, decl) -> bool:
    return any(n.type == "array_declarator" for n in unit.walk(decl))


def _expr_of(stmt):
    if stmt.type != "expression_statement":
        return None
    inner = [c for c in stmt.named_children if c.type != "comment"]
    return inner[0] if len(inner) == 1 else None


def _num(unit, node) -> float | None:
    node = _strip(node)
    if node is None:
        return None
    t = unit.text(node).strip()
    if node.type == "cast_expression":
        return _num(unit, node.child_by_field_name("value"))
    m = re.fullmatch(r"([0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]+)?|\.[0-9]+)[fFuUlL]*", t)
    return float(m.group(1)) if m else None


# ======================================================================= reductions
@dataclass
class Reduction:
    var: str
    op: str  # "+", "*", "|", "&" or a function name (fmaxf, max, ...)
    stmt: object  # the expression statement
    rhs: object  # E


def _reduction(unit, expr, var: str) -> "Reduction | str":
    """The reduction ``var op= E`` (or ``var = var op E``, ``var = f(var, E)``), or why not."""
    op_node = expr.child_by_field_name("operator")
    op = unit.text(op_node) if op_node is not None else "="
    right = expr.child_by_field_name("right")
    stmt = expr.parent
    if op in _COMPOUND:
        e = right
        kind = _COMPOUND[op]
    elif op == "=":
        r = _strip(right)
        kind = e = None
        if r.type == "binary_expression":
            bop = unit.text(r.child_by_field_name("operator"))
            a, b = r.child_by_field_name("left"), r.child_by_field_name("right")
            if bop in _BINARY:
                for x, y in ((a, b), (b, a)):
                    sx = _strip(x)
                    if sx.type == "identifier" and unit.text(sx) == var:
                        kind, e = _BINARY[bop], y
                        break
        elif r.type == "call_expression":
            f = r.child_by_field_name("function")
            args = [c for c in r.child_by_field_name("arguments").named_children
                    if c.type != "comment"]
            if f is not None and unit.text(f) in _FUNCS and len(args) == 2:
                for x, y in ((args[0], args[1]), (args[1], args[0])):
                    sx = _strip(x)
                    if sx.type == "identifier" and unit.text(sx) == var:
                        kind, e = unit.text(f), y
                        break
        if kind is None:
            return (f"`{_snip(unit, expr)}` (line {_line(unit, expr)}) assigns the row scalar "
                    f"{var} but is neither a map nor a reduction {var} op= E / {var} = "
                    f"fmaxf({var}, E)")
    else:
        return (f"`{_snip(unit, expr)}` (line {_line(unit, expr)}): {op} is not an associative "
                f"reduction operator (+=, *=, |=, &=, fmaxf/fminf/max/min)")
    if _mentions(unit, e, var):
        return (f"`{_snip(unit, expr)}` (line {_line(unit, expr)}) reads {var} inside the reduced "
                "term")
    return Reduction(var, kind, stmt, e)


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


def _compact(text: str) -> str:
    """The text without blanks (``int off`` reads ``intoff``: patterns allow for that)."""
    return re.sub(r"\s+", "", text)


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
        return _element_address(site.unit, sub, _Eval(site.unit, _row_env(k)))[0]
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
        if a is None or a != row_elem:
            at = str(a) if a is not None else "a non-affine offset"
            _issue(k, "row-major", Verdict.no(
                f"{where} writes `{_snip(unit, left)}` at {at}, not the row element "
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
def _base_param(unit, fn, node, depth=0):
    """The pointer parameter an expression points into, or None."""
    node = _strip(node)
    if node is None or depth > 12:
        return None
    params = {p.name for p in fn.params if p.name}
    if node.type == "identifier":
        nm = unit.text(node)
        if nm in params:
            return nm
        for s in unit.walk(fn.body):
            if s.type == "declaration":
                for d_nm, _, value in _decl_items(unit, s):
                    if d_nm == nm and value is not None and not assigned_in(unit, fn.body, nm):
                        return _base_param(unit, fn, value, depth + 1)
        return None
    if node.type == "binary_expression":
        for side in ("left", "right"):
            got = _base_param(unit, fn, node.child_by_field_name(side), depth + 1)
            if got is not None:
                return got
        return None
    if node.type == "cast_expression":
        return _base_param(unit, fn, node.child_by_field_name("value"), depth + 1)
    if node.type == "subscript_expression":
        return _base_param(unit, fn, node.child_by_field_name("argument"), depth + 1)
    return None


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
    from passes.grid_stride import fresh

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

    Options: ``group`` (threads per row: 32), ``lane`` and ``offset`` (names of the lane
    and of the butterfly offset; ``auto`` picks unused ones: lane, off).

    Limits: ``(blockIdx.x * blockDim.x + threadIdx.x)`` is computed in unsigned int, so
    rows * 32 must stay below 2^32; mixed loop-step spellings (``++c`` in one loop,
    ``c++`` in another) come back from ``row-per-thread`` with one spelling.
    """

    name = "row-per-warp"
    kind = "optimize"
    inverse = "row-per-thread"
    anchor = ROW_GUARD
    preconditions = (
        Precondition("row-index", "layout",
                     "row is the global thread index, declared once and never assigned, and "
                     "the row body depends on the thread only through it",
                     _report("row-index", "{row} is the global thread index; the row body "
                             "depends on the thread only through it")),
        Precondition("warp-uniform-guard", "pipeline",
                     "the row guard is a top-level statement with a thread-independent bound",
                     _report("warp-uniform-guard", "the guard's bound does not depend on the "
                             "thread: with whole warps all lanes of a warp share {row}, so "
                             "the guard is warp-uniform")),
        Precondition("no-barrier", "pipeline",
                     "no barrier or warp primitive in the kernel", _no_barrier),
        Precondition("row-major", "layout",
                     "column loops write x[row * B + c]; writes outside them are x[row]",
                     _report("row-major", "every write is the row element row * B + c or the "
                             "per-row element [{row}]")),
        Precondition("reduction-ops", "dtype",
                     "reductions are associative and commutative (float + and * need "
                     "--assume reassoc)", _reduction_ops),
        Precondition("storage-check", "storage",
                     "per-thread scalar state only, accumulators start at the identity, no "
                     "cross-row communication through memory",
                     _report("storage-check", "scalars only; accumulators are row-private and "
                             "start at the identity; no array is read where another thread "
                             "writes")),
        Precondition("loop-shapes", "pipeline",
                     "the row body is declarations, scalars, per-row writes and column loops "
                     "(maps and reductions) from 0 by 1 with a uniform bound",
                     _report("loop-shapes", "every column loop is an elementwise map or a "
                             "reduction into a scalar; the row guard is the only branch")),
        Precondition("whole-warps", "hardware",
                     "a 1-D launch header whose block size is a multiple of 32", _whole_warps),
        Precondition("fresh-names", "pipeline",
                     "the lane and shuffle-offset names are not used in the kernel",
                     _fresh_names),
    )

    group: int = option(32, Choice(*GROUPS), "threads per row (one warp)")
    lane: str = option("auto", Identifier(), "name of the lane variable (auto: a fresh name)")
    offset: str = option("auto", Identifier(), "name of the butterfly offset (auto: a fresh name)")

    def rewrite(self, site, ctx):
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
        return contract.with_(grid=(header_expr(f"{contract.grid[0]} * {WARP}"),))

    def inverse_for(self, site, ctx):
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

    The inverse of row-per-warp's output shape only (a warp per row written as a lane
    stride of 32 with xor butterflies). Kernels with G threads per row, register tiles,
    vector loads or shared-memory merges (corpus/softmax/expert.cu,
    corpus/layernorm/expert.cu) do not have that shape and are not matched.

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
    anchor = WARP_GUARD
    preconditions = (
        Precondition("no-barrier", "pipeline",
                     "no barrier, and no warp primitive besides the butterflies", _no_barrier),
        Precondition("warp-row-index", "layout",
                     "row = (blockIdx.x * blockDim.x + threadIdx.x) / 32 and lane = threadIdx.x "
                     "& 31, used only as loop starts and lane-0 guards",
                     _report("warp-row-index", "{row} is the warp index and {lane} the lane")),
        Precondition("strided-loops", "pipeline",
                     "column loops are lane-strided by 32, each followed by one butterfly per "
                     "reduction",
                     _report("strided-loops", "every column loop is lane-strided and followed "
                             "by its butterflies")),
        Precondition("lane0-writes", "storage",
                     "per-row writes are made by lane 0",
                     _report("lane0-writes", "per-row writes are under if ({lane} == 0)")),
        Precondition("reduction-ops", "dtype",
                     "reductions are associative and commutative (float + and * need "
                     "--assume reassoc)", _reduction_ops),
        Precondition("storage-check", "storage",
                     "per-thread scalar state only, no cross-row communication through memory",
                     _report("storage-check", "scalars only; no array is read where another "
                             "thread writes")),
        Precondition("contract-shape", "hardware",
                     "the launch header's grid is G * 32", _contract_shape),
    )

    incr: str = option("pre", Choice(*_INCR), "step of the restored loops: ++c, c++ or c += 1")

    def rewrite(self, site, ctx):
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
        g, _ = _grid_times(contract)
        return contract if g is None else contract.with_(grid=(g,))

    def inverse_for(self, site, ctx):
        k = _analyse(site, True)
        off = next((o for lp in k.loops for *_, o in lp.butterflies), "auto")
        return RowPerWarp(lane=k.lane or "auto", offset=off)
