"""Vector fast path of a lane loop: ``vectorize-lanes`` (optimize) and ``scalarize-lanes`` (simplify).

A *lane loop* moves W consecutive elements between a pointer and registers, one scalar
access per lane, usually with a bounds check per lane::

    for (int j = 0; j < 4; ++j) {                                   // load shape
        v[k][j] = active && base + j < cols ? xr[base + j] : -INFINITY;
    }
    for (int j = 0; j < 4; ++j) {                                   // store shape
        if (active && base + j < cols) {
            yr[base + j] = v[k][j] * f;
        }
    }

``vectorize-lanes`` puts a 16-byte vector path in front of it, taken when a run-time flag
(``vec_ok``: the row length is a multiple of W and the pointers are aligned) holds, and
keeps the loop as the scalar fallback; ``scalarize-lanes`` drops the vector path again
when it is exactly the vector form of its fallback. Both share the analysis below.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Bool, Choice, Identifier, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.rewrite import (
    indent_of as line_indent, norm, shift, splice, unshift)
from kltrans.match.predicates import pure as _pure
from kltrans.passes.vector_facts import (
    ELEMS, aligned_roots as _aligned_roots, assigned as _assigned, base_type as _base_type,
    block_indent_step as _indent_step, declaration as _declaration,
    divisible_lens as _divisible_lens, expr_of as _expr, flat as _flat, idents as _idents,
    int_constant as _int, is_array as _is_array, is_pointer as _is_pointer,
    multiple as _multiple, root as _root, single as _single, strip as _strip)

COMPONENTS = "xyzw"
LOADS = ("deref", "paren", "ldg")
FILLS = ("chain", "each")


# ==================================================================== small helpers
# ======================================================================= lane loops
@dataclass
class Lanes:
    loop: object
    var: str
    width: int
    kind: str  # "load" | "store"
    ptr: str  # the pointer accessed (source of a load, destination of a store)
    idx: object  # IDX of ptr[IDX + j]
    dst: str | None  # load: the register array prefix (v[k] of v[k][j])
    cond: object | None  # the per-lane condition (None: unconditional)
    bounds: list  # [(IDX + j node, LEN text)]
    fill: object | None  # load: the value past the bound
    value: object | None  # store: the stored expression E(j)
    stmt: object


def _lane_index(unit, node, var):
    """IDX when ``node`` is ``IDX + var`` (IDX free of var)."""
    node = _strip(node)
    if node is None or node.type != "binary_expression":
        return None
    if unit.text(node.child_by_field_name("operator")) != "+":
        return None
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    r = _strip(right)
    if r is None or r.type != "identifier" or unit.text(r) != var:
        return None
    if _idents(unit, left, var):
        return None
    return left


def _access(unit, node, var):
    """(pointer name, IDX) for ``P[IDX + var]``."""
    node = _strip(node)
    if node is None or node.type != "subscript_expression":
        return None
    arg = node.child_by_field_name("argument")
    idx = node.child_by_field_name("indices")
    if arg is None or arg.type != "identifier" or idx is None:
        return None
    inner = [c for c in idx.named_children if c.type != "comment"]
    if len(inner) != 1:
        return None
    base = _lane_index(unit, inner[0], var)
    return (unit.text(arg), base) if base is not None else None


def _bounds(unit, cond, var) -> "list | str":
    """Every use of var in cond is ``IDX + var < LEN`` (or ``LEN > IDX + var``)."""
    out = []
    seen = set()
    for n in unit.walk(cond):
        if n.type != "binary_expression":
            continue
        op = unit.text(n.child_by_field_name("operator"))
        left, right = n.child_by_field_name("left"), n.child_by_field_name("right")
        if op == "<" and _lane_index(unit, left, var) is not None and not _idents(unit, right, var):
            out.append((_strip(left), norm(unit.text(_strip(right)))))
            seen.update(x.id for x in _idents(unit, left, var))
        elif op == ">" and _lane_index(unit, right, var) is not None and not _idents(unit, left, var):
            out.append((_strip(right), norm(unit.text(_strip(left)))))
            seen.update(x.id for x in _idents(unit, right, var))
    for x in _idents(unit, cond, var):
        if x.id not in seen:
            return f"`{norm(unit.text(cond))}` uses {var} other than in a bound `IDX + {var} < LEN`"
    if not out:
        return f"`{norm(unit.text(cond))}` has no bound `IDX + {var} < LEN`"
    return out


def lane_loop(unit, loop) -> "Lanes | str":
    """The lane loop at ``loop``, or why it is not one."""
    if loop is None or loop.type != "for_statement":
        return "not a for loop"
    init = loop.child_by_field_name("initializer")
    cond = loop.child_by_field_name("condition")
    upd = loop.child_by_field_name("update")
    if init is None or init.type != "declaration" or cond is None or upd is None:
        return "the loop header is not `for (int j = 0; j < W; ++j)`"
    decl = [d for d in init.children_by_field_name("declarator")]
    if len(decl) != 1 or decl[0].type != "init_declarator" or _int(unit, decl[0].child_by_field_name("value")) != 0:
        return "the loop does not start its lane index at 0"
    var = unit.text(decl[0].child_by_field_name("declarator"))
    if cond.type != "binary_expression" or unit.text(cond.child_by_field_name("operator")) != "<" \
            or norm(unit.text(cond.child_by_field_name("left"))) != var:
        return f"the loop condition is not `{var} < W`"
    width = _int(unit, cond.child_by_field_name("right"))
    if width not in (2, 4):
        return f"the lane count `{norm(unit.text(cond.child_by_field_name('right')))}` is not 2 or 4"
    if norm(unit.text(upd)).replace(" ", "") not in (f"++{var}", f"{var}++", f"{var}+=1"):
        return f"the loop does not step {var} by one"
    stmt = _single(loop.child_by_field_name("body"))
    if stmt is None:
        return "the loop body is not a single statement"
    # -------------------------------------------------------------------- load shape
    e = _expr(stmt)
    if e is not None and e.type == "assignment_expression" \
            and unit.text(e.child_by_field_name("operator")) == "=":
        left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
        if left.type == "subscript_expression" and norm(unit.text(left.child_by_field_name("indices"))) == f"[{var}]":
            dst = left.child_by_field_name("argument")
            if _idents(unit, dst, var):
                return f"the register array `{norm(unit.text(dst))}` is indexed by {var} twice"
            r = _strip(right)
            c = fill = None
            if r.type == "conditional_expression":
                c, fill = r.child_by_field_name("condition"), r.child_by_field_name("alternative")
                r = r.child_by_field_name("consequence")
                if _idents(unit, fill, var):
                    return f"the fill value `{norm(unit.text(fill))}` depends on {var}"
            acc = _access(unit, r, var)
            if acc is not None:
                bounds = _bounds(unit, c, var) if c is not None else []
                if isinstance(bounds, str):
                    return bounds
                return Lanes(loop, var, width, "load", acc[0], acc[1], unit.text(dst), c,
                             bounds, fill, None, stmt)
            return f"`{norm(unit.text(right))}` is not a load `P[IDX + {var}]`"
    # ------------------------------------------------------------------- store shape
    c = None
    inner = stmt
    if stmt.type == "if_statement":
        if stmt.child_by_field_name("alternative") is not None:
            return "the lane's if has an else branch"
        c = stmt.child_by_field_name("condition")
        if c is not None and c.type == "condition_clause":
            c = c.child_by_field_name("value") or c.named_children[0]
        inner = _single(stmt.child_by_field_name("consequence"))
    e = _expr(inner)
    if e is None or e.type != "assignment_expression" or unit.text(e.child_by_field_name("operator")) != "=":
        return "the loop body is neither a lane load `v[j] = P[IDX + j]` nor a lane store `P[IDX + j] = E`"
    acc = _access(unit, e.child_by_field_name("left"), var)
    if acc is None:
        return f"`{norm(unit.text(e.child_by_field_name('left')))}` is not a store `P[IDX + {var}]`"
    bounds = []
    if c is not None:
        bounds = _bounds(unit, c, var)
        if isinstance(bounds, str):
            return bounds
    return Lanes(loop, var, width, "store", acc[0], acc[1], None, c, bounds, None,
                 e.child_by_field_name("right"), stmt)


# ===================================================================== the vector form
def _vec_type(unit, fn, lanes) -> "tuple[str, int] | str":
    got = _declaration(unit, fn, lanes.ptr, lanes.loop.start_byte)
    if got is None:
        return f"{lanes.ptr} is not declared in {fn.name}"
    decl, _ = got
    if not _is_pointer(unit, decl):
        return f"{lanes.ptr} is not a pointer"
    ty = re.sub(r"\b(const|volatile|__restrict__|__restrict)\b", "", _base_type(unit, decl))
    ty = norm(ty)
    if ty not in ELEMS:
        return f"{lanes.ptr} points to {ty or '?'}: no vector type of it"
    prefix, size = ELEMS[ty]
    if prefix == "double" and lanes.width != 2:
        return f"{lanes.width} doubles do not fit a 16-byte vector"
    return f"{prefix}{lanes.width}", size * lanes.width


def _paren(unit, node) -> str:
    t = norm(unit.text(node))
    n = _strip(node) if node.type == "parenthesized_expression" else node
    if n.type in ("identifier", "number_literal", "subscript_expression", "call_expression",
                  "field_expression", "parenthesized_expression"):
        return t
    if n.type == "binary_expression" and unit.text(n.child_by_field_name("operator")) in "*/%+-":
        return t
    return f"({t})"


def _vector_cond(unit, lanes) -> str | None:
    if lanes.cond is None:
        return None
    reps = [(b.start_byte, b.end_byte, unit.text(lanes_idx(unit, b, lanes.var)))
            for b, _ in lanes.bounds]
    return norm(splice(unit, lanes.cond, reps))


def lanes_idx(unit, node, var):
    return _lane_index(unit, node, var)


def _lane_value(unit, node, var: str, k: int) -> str:
    reps = [(n.start_byte, n.end_byte, str(k)) for n in _idents(unit, node, var)]
    return norm(splice(unit, node, reps))


def render(unit, lanes, vt: str, temp: str, load: str, fill: str, const: bool,
           step: str) -> list[str]:
    """The vector path's statements, one per line, indented by ``step`` per level."""
    comps = COMPONENTS[:lanes.width]
    addr = f"{lanes.ptr} + {_paren(unit, lanes.idx)}"
    body: list[str] = []
    if lanes.kind == "load":
        cast = f"reinterpret_cast<const {vt}*>({addr})"
        expr = {"deref": f"*{cast}", "paren": f"*({cast})", "ldg": f"__ldg({cast})"}[load]
        body.append(f"{'const ' if const else ''}{vt} {temp} = {expr};")
        body += [f"{lanes.dst}[{k}] = {temp}.{c};" for k, c in enumerate(comps)]
    else:
        body.append(f"{vt} {temp};")
        body += [f"{temp}.{c} = {_lane_value(unit, lanes.value, lanes.var, k)};"
                 for k, c in enumerate(comps)]
        body.append(f"*reinterpret_cast<{vt}*>({addr}) = {temp};")
    cond = _vector_cond(unit, lanes)
    if cond is None:
        return body
    out = [f"if ({cond}) {{"] + [step + s for s in body]
    if lanes.kind == "load":
        fv = norm(unit.text(lanes.fill))
        out.append("} else {")
        if fill == "chain":
            out.append(step + " = ".join(f"{lanes.dst}[{k}]" for k in range(lanes.width)) + f" = {fv};")
        else:
            out += [f"{step}{lanes.dst}[{k}] = {fv};" for k in range(lanes.width)]
    out.append("}")
    return out


# ======================================================================= the analysis
@dataclass
class Found:
    lanes: "Lanes | None" = None
    why: str = ""
    flag: str | None = None
    dispatch: object = None  # the if (flag) statement (simplify)


def _find(site, flag_opt: str | None) -> Found:
    unit = site.unit
    node = site.node
    if node.type == "for_statement":
        lanes = lane_loop(unit, node)
        if isinstance(lanes, str):
            return Found(why=lanes)
        return Found(lanes, flag=flag_opt)
    # if (flag) { vector } else { lane loop }
    cond = _strip(node.child_by_field_name("condition"))
    alt = node.child_by_field_name("alternative")
    if cond is None or cond.type != "identifier" or alt is None:
        return Found(why="not `if (flag) { ... } else { ... }`")
    els = [c for c in alt.named_children if c.type != "comment"]
    loop = _single(els[0]) if len(els) == 1 else None
    if loop is None or loop.type != "for_statement":
        return Found(why="the else branch is not a single loop")
    lanes = lane_loop(unit, loop)
    if isinstance(lanes, str):
        return Found(why=f"the else branch is not a lane loop: {lanes}")
    return Found(lanes, flag=unit.text(cond), dispatch=node)


def _found(site) -> Found:
    flag = getattr(site.pass_, "flag", None) if site.pass_ is not None else None
    return _find(site, flag)


def _flag_decl(site, f: Found):
    unit, fn = site.unit, site.function
    got = _declaration(unit, fn, f.flag, f.lanes.loop.start_byte)
    if got is None or got[1] is None:
        return None
    return got


def check_vector_flag(site, ctx) -> Verdict:
    f = _found(site)
    if f.lanes is None:
        return Verdict.unknown(f.why)
    unit, fn = site.unit, site.function
    vt = _vec_type(unit, fn, f.lanes)
    if isinstance(vt, str):
        return Verdict.unknown(vt)
    got = _flag_decl(site, f)
    if got is None:
        return Verdict.no(f"no flag `{f.flag}` with an initializer is declared before the loop "
                          f"(it must test the row length and the alignment at run time)")
    if _assigned(unit, fn, f.flag):
        return Verdict.no(f"the flag {f.flag} is assigned after its declaration")
    value = got[1]
    flat = _flat(unit.text(value))
    bad = next((t for t in ("||", "?", "!=", "!(") if t in flat), None)
    if bad is not None:
        return Verdict.no(f"`{f.flag}` is not a plain conjunction of `== 0` tests (it has {bad})")
    lens = _divisible_lens(unit, value, f.lanes.width)
    for _, ln in f.lanes.bounds:
        if ln not in lens:
            return Verdict.no(f"`{f.flag}` does not test that the bound {ln} is a multiple of "
                              f"{f.lanes.width} (per-lane bounds would differ from the vector's)")
    root = _root(unit, fn, f.lanes.ptr, f.lanes.loop.start_byte)
    if root is None:
        return Verdict.no(f"{f.lanes.ptr} is not a parameter or `param + offset`")
    aligned = _aligned_roots(unit, value, vt[1])
    if root[0] not in aligned:
        return Verdict.no(f"`{f.flag}` does not test the {vt[1]}-byte alignment of {root[0]}")
    return Verdict.yes(f"`{f.flag}` tests {', '.join(sorted(lens)) or 'no bound'} % "
                       f"{f.lanes.width} == 0 and the alignment of {root[0]} (run-time guard)")


def check_aligned_index(site, ctx) -> Verdict:
    f = _found(site)
    if f.lanes is None:
        return Verdict.unknown(f.why)
    unit, fn = site.unit, site.function
    L = f.lanes
    before = L.loop.start_byte
    got = _flag_decl(site, f)
    lens = _divisible_lens(unit, got[1], L.width) if got is not None else set()
    if not _multiple(unit, fn, L.idx, L.width, lens, before):
        return Verdict.no(f"the lane base `{norm(unit.text(L.idx))}` is not provably a multiple "
                          f"of {L.width}")
    root = _root(unit, fn, L.ptr, before)
    if root is None:
        return Verdict.no(f"{L.ptr} is not a parameter or `param + offset`")
    if root[1] is not None and not _multiple(unit, fn, root[1], L.width, lens, before):
        return Verdict.no(f"the offset `{norm(unit.text(root[1]))}` of {L.ptr} from {root[0]} is "
                          f"not a multiple of {L.width} or of a length the flag tests")
    return Verdict.yes(f"{L.ptr} + {norm(unit.text(L.idx))} is a multiple of {L.width} "
                       f"elements from {root[0]}")


def check_element_type(site, ctx) -> Verdict:
    f = _found(site)
    if f.lanes is None:
        return Verdict.unknown(f.why)
    vt = _vec_type(site.unit, site.function, f.lanes)
    if isinstance(vt, str):
        return Verdict.no(vt)
    return Verdict.yes(f"{f.lanes.width} lanes of {f.lanes.ptr} are one {vt[0]}")


def check_lanes_independent(site, ctx) -> Verdict:
    f = _found(site)
    if f.lanes is None:
        return Verdict.unknown(f.why)
    unit, fn = site.unit, site.function
    L = f.lanes
    before = L.loop.start_byte
    parts = [p for p in (L.cond, L.fill, L.value) if p is not None]
    for p in parts:
        if not _pure(unit, p):
            return Verdict.no(f"`{norm(unit.text(p))}` has side effects")
    if L.kind == "load":
        reg = L.dst.split("[")[0].strip()
        got = _declaration(unit, fn, reg, before)
        if got is None or not _is_array(unit, got[0]) or _is_pointer(unit, got[0]):
            return Verdict.no(f"the loaded lanes go to `{L.dst}`, not a local register array")
        return Verdict.yes(f"the lanes go to the register array {reg}")
    mine = _root(unit, fn, L.ptr, before)
    for n in unit.walk(L.value):
        if n.type not in ("subscript_expression", "pointer_expression"):
            continue
        if n.type == "pointer_expression" and unit.text(n.child_by_field_name("operator")) != "*":
            continue
        arg = _strip(n.child_by_field_name("argument"))
        while arg is not None and arg.type == "subscript_expression":
            arg = _strip(arg.child_by_field_name("argument"))
        if arg is None or arg.type != "identifier":
            return Verdict.no(f"`{norm(unit.text(n))}` reads memory the store may write")
        name = unit.text(arg)
        got = _declaration(unit, fn, name, before)
        if got is not None and _is_array(unit, got[0]) and not _is_pointer(unit, got[0]) \
                and "__shared__" not in unit.text(got[0]):
            continue
        other = _root(unit, fn, name, before)
        if mine is None or other is None or other[0] == mine[0] or \
                not ctx.assumed("no_alias", mine[0], other[0]):
            return Verdict.no(f"`{norm(unit.text(n))}` may read what the store to {L.ptr} writes "
                              f"(say --assume 'no_alias({mine[0] if mine else L.ptr},{name})')")
    return Verdict.yes("the stored values read registers or memory that cannot alias the store")


def _dispatch_text(unit, lanes, flag, vt, temp, load, fill, const, step, ind) -> str:
    vec = render(unit, lanes, vt, temp, load, fill, const, step)
    loop = shift(unit.text(lanes.loop), step)
    lines = [f"if ({flag}) {{"] + [ind + step + s for s in vec] + \
        [f"{ind}}} else {{", f"{ind}{step}{loop}", f"{ind}}}"]
    return "\n".join(lines)


def vector_options(site) -> "dict | None":
    """The options of vectorize-lanes that give the dispatch's then-branch, if any."""
    f = _found(site)
    if f.lanes is None or f.dispatch is None:
        return None
    unit = site.unit
    vt = _vec_type(unit, site.function, f.lanes)
    if isinstance(vt, str):
        return None
    then = f.dispatch.child_by_field_name("consequence")
    want = _flat(unit.text(then))
    temps = re.findall(rf"\b{vt[0]}\s+([A-Za-z_]\w*)", unit.text(then)) or ["t"]
    for temp, load, fill, const in itertools.product(dict.fromkeys(temps), LOADS, FILLS,
                                                     (True, False)):
        got = "{" + "".join(render(unit, f.lanes, vt[0], temp, load, fill, const, "")) + "}"
        if _flat(got) == want:
            return {"temp": temp, "load": load, "fill": fill, "const": const}
    return None


# ======================================================================== optimize
def _check_lane_loop(site, ctx) -> Verdict:
    f = _found(site)
    if f.lanes is None:
        return Verdict.no(f.why)
    L = f.lanes
    return Verdict.yes(f"a lane {L.kind} of {L.width} elements of {L.ptr}")


def _check_not_vectorized(site, ctx) -> Verdict:
    node = site.node
    p = node.parent
    if p is not None and p.type == "compound_statement":
        p = p.parent
    if p is not None and p.type == "else_clause" and p.parent is not None \
            and p.parent.type == "if_statement":
        c = _strip(p.parent.child_by_field_name("condition"))
        if c is not None and c.type == "identifier":
            return Verdict.no(f"the loop is already the scalar fallback of `if "
                              f"({site.unit.text(c)})`")
    return Verdict.yes("the loop has no vector path yet")


@dataclass(frozen=True)
class VectorizeLanes(Pass):
    """Give a scalar lane loop a 16-byte vector fast path behind a run-time flag.

    A loop over the W lanes (W = 2 or 4) of a register chunk that loads ``P[IDX + j]``
    into a register array (or stores ``E(j)`` to ``P[IDX + j]``), each lane bounds-checked
    with ``IDX + j < LEN``, becomes ``if (flag) { one vector access } else { the loop }``.
    The flag is computed by the kernel (a run-time GUARD, not a context fact): it must
    test ``LEN % W == 0`` and the alignment of the pointer's parameter; then one bound
    check ``IDX < LEN`` covers all W lanes and the vector access is aligned.

    Before::

        for (int j = 0; j < 4; ++j) {
            v[k][j] = base + j < cols ? xr[base + j] : -INFINITY;
        }

    After ``vectorize-lanes{flag=vec_ok}``::

        if (vec_ok) {
            if (base < cols) {
                const float4 t = *reinterpret_cast<const float4*>(xr + base);
                v[k][0] = t.x;
                v[k][1] = t.y;
                v[k][2] = t.z;
                v[k][3] = t.w;
            } else {
                v[k][0] = v[k][1] = v[k][2] = v[k][3] = -INFINITY;
            }
        } else {
            for (int j = 0; j < 4; ++j) {
                v[k][j] = base + j < cols ? xr[base + j] : -INFINITY;
            }
        }

    Preconditions: lane-loop (layout: the loop is ``for (int j = 0; j < W; ++j)`` over one
    lane load into a register array or one lane store, every use of j in the condition a
    bound ``IDX + j < LEN``), element-type (dtype: float, int, unsigned or double
    elements, one vector of W of them), vector-flag (hardware: the flag is a const
    conjunction testing each LEN % W == 0 and the alignment of the pointer's parameter,
    never reassigned), aligned-index (layout: IDX and the pointer's offset from its
    parameter are multiples of W or of a tested LEN), lanes-independent (storage: the
    lanes are pure and a store's values read registers or memory that cannot alias it,
    ``no_alias`` from the context), not-vectorized (pipeline: the loop is not already
    the fallback of a flag dispatch).

    Options: ``flag`` (the flag variable), ``temp`` (name of the vector temporary),
    ``load`` (``deref`` ``*reinterpret_cast<...>``, ``paren`` ``*(reinterpret_cast<...>)``
    or ``ldg`` ``__ldg(...)``), ``fill`` (``chain`` ``a = b = c = d = F`` or ``each``:
    the fill past the bound), ``const`` (declare the loaded temporary const).
    """

    name = "vectorize-lanes"
    kind = "optimize"
    inverse = "scalarize-lanes"
    anchor = Rule(pattern="for ($T $I = 0; $I < $W; $STEP) $BODY;",
                  constraints={"W": {"regex": r"^[0-9]+$"}})
    preconditions = (
        Precondition("lane-loop", "layout",
                     "the loop is a lane load or lane store with bounds IDX + j < LEN",
                     _check_lane_loop),
        Precondition("element-type", "dtype",
                     "the elements have a vector type of W lanes", check_element_type),
        Precondition("vector-flag", "hardware",
                     "the flag tests LEN % W == 0 and the pointer's alignment",
                     check_vector_flag),
        Precondition("aligned-index", "layout",
                     "the vector address is a multiple of W elements from the parameter",
                     check_aligned_index),
        Precondition("lanes-independent", "storage",
                     "pure lanes; a store's values cannot alias it", check_lanes_independent),
        Precondition("not-vectorized", "pipeline",
                     "the loop is not already the fallback of a flag dispatch",
                     _check_not_vectorized),
    )

    flag: str = option("vec_ok", Identifier(()), "the run-time flag variable")
    temp: str = option("t", Identifier(()), "name of the vector temporary")
    load: str = option("deref", Choice(*LOADS), "spelling of the vector load")
    fill: str = option("chain", Choice(*FILLS), "spelling of the fill past the bound")
    const: bool = option(True, Bool(), "declare the loaded temporary const")

    def rewrite(self, site, ctx):
        f = _found(site)
        unit = site.unit
        vt = _vec_type(unit, site.function, f.lanes)
        step = _indent_step(unit, site.node)
        ind = line_indent(unit, site.node.start_byte)
        text = _dispatch_text(unit, f.lanes, self.flag, vt[0], self.temp, self.load,
                              self.fill, self.const, step, ind)
        return [Edit.replace(site.node, text)]

    def inverse_for(self, site, ctx):
        return ScalarizeLanes()


# ======================================================================== simplify
def _check_dispatch(site, ctx) -> Verdict:
    f = _found(site)
    if f.lanes is None:
        return Verdict.no(f.why)
    return Verdict.yes(f"`if ({f.flag})` with a lane {f.lanes.kind} loop as its fallback")


def _check_vector_form(site, ctx) -> Verdict:
    f = _found(site)
    if f.lanes is None:
        return Verdict.unknown(f.why)
    vt = _vec_type(site.unit, site.function, f.lanes)
    if isinstance(vt, str):
        return Verdict.unknown(vt)
    opts = vector_options(site)
    if opts is None:
        return Verdict.no(f"the then-branch of `if ({f.flag})` is not the vector form of its "
                          f"lane loop (it may compute something else)")
    return Verdict.yes("the then-branch is the vector form of the lane loop "
                       + ",".join(f"{k}={v}" for k, v in opts.items()))


@dataclass(frozen=True)
class ScalarizeLanes(Pass):
    """Drop the vector fast path of a lane loop, keeping its scalar fallback.

    ``if (flag) { VECTOR } else { LANE LOOP }`` becomes the lane loop when VECTOR is exactly
    the vector form of the loop (what ``vectorize-lanes`` makes of it, for some spelling
    options): under the flag both compute the same values, and the loop is correct for
    every input.

    Before::

        if (vec_ok) {
            if (active && base < cols) {
                float4 t;
                t.x = v[k][0] * f;
                t.y = v[k][1] * f;
                t.z = v[k][2] * f;
                t.w = v[k][3] * f;
                *reinterpret_cast<float4*>(yr + base) = t;
            }
        } else {
            for (int j = 0; j < 4; ++j) {
                if (active && base + j < cols) {
                    yr[base + j] = v[k][j] * f;
                }
            }
        }

    After ``scalarize-lanes``::

        for (int j = 0; j < 4; ++j) {
            if (active && base + j < cols) {
                yr[base + j] = v[k][j] * f;
            }
        }

    Preconditions: vector-dispatch (layout: ``if (flag) ... else`` with a lane loop as
    the else branch), element-type (dtype), vector-flag (hardware), aligned-index
    (layout), lanes-independent (storage): the same facts as ``vectorize-lanes``, so that
    the inverse applies again; vector-form (pipeline: the then-branch is exactly the
    vector form of that loop, so under the flag both compute the same values).

    Options: none (the inverse gets the flag and the spelling options of the site).
    """

    name = "scalarize-lanes"
    kind = "simplify"
    inverse = "vectorize-lanes"
    anchor = Rule(pattern="if ($F) $A; else $B;", constraints={"F": {"kind": "identifier"}})
    preconditions = (
        Precondition("vector-dispatch", "layout",
                     "if (flag) ... else { lane loop }", _check_dispatch),
        Precondition("element-type", "dtype",
                     "the elements have a vector type of W lanes", check_element_type),
        Precondition("vector-flag", "hardware",
                     "the flag tests LEN % W == 0 and the pointer's alignment",
                     check_vector_flag),
        Precondition("aligned-index", "layout",
                     "the vector address is a multiple of W elements from the parameter",
                     check_aligned_index),
        Precondition("lanes-independent", "storage",
                     "pure lanes; a store's values cannot alias it", check_lanes_independent),
        Precondition("vector-form", "pipeline",
                     "the then-branch is the vector form of the lane loop", _check_vector_form),
    )

    def rewrite(self, site, ctx):
        f = _found(site)
        unit = site.unit
        step = _indent_step(unit, f.lanes.loop)
        return [Edit.replace(site.node, unshift(unit.text(f.lanes.loop), step))]

    def inverse_for(self, site, ctx):
        f = _found(site)
        opts = vector_options(site) or {}
        return VectorizeLanes(flag=f.flag, **opts)
