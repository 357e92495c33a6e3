"""16-byte vector path of a strided element-wise loop: ``vectorize-stream`` (optimize) and
``scalarize-stream`` (simplify).

A *strided map* writes one element per iteration from the element of the same index of
one input, each thread starting at its own offset and all threads striding together::

    for (int c = gt; c < cols; c += G) {
        yr[c] = expf(xr[c] - m) * inv;
    }

or, more generally, a body of scalar locals computed from elements ``A[i]`` of any number
of inputs and stores ``Y[i] = ...`` to one or more outputs (``float v = x[i]; y[i] = v >
0.f ? v : 0.f;``, ``out[i] = a * x[i] + b * g[i];``, an optimizer step storing two arrays).

``vectorize-stream`` puts a 16-byte vector copy of it in front, taken when a run-time
flag says the length is a multiple of the vector width and the pointers are aligned: the
same threads stride over vectors instead of elements (optionally U vectors in flight per
thread, then a remainder loop), and the scalar loop stays as the fallback.
``scalarize-stream`` drops the vector path again when it is exactly the vector form of
its fallback (it regenerates it and compares). Helpers come from passes.vectorize_lanes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.affine import affine_of
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Bool, Choice, Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.guard import GLOBAL_INDEX, GRID_SIZE
from kltrans.passes.rewrite import (
    indent_of as line_indent, norm, shift, splice, statements, unshift)
from kltrans.match.predicates import PURE_CALLS as _PURE
from kltrans.match.predicates import pure as _pure
from kltrans.passes.vector_facts import (
    ELEMS, aligned_roots as _aligned_roots, assigned as _assigned, base_type as _base_type,
    block_indent_step as _indent_step, declaration as _declaration,
    divisible_lens as _divisible_lens, flat as _flat, idents as _idents,
    is_pointer as _is_pointer, multiple as _multiple, root as _root, single as _single,
    strip as _strip)
from kltrans.passes.vector_facts import (
    GLOBAL_ID_TEXTS as _GLOBAL_IDS, GRID_STRIDE_TEXTS as _GRID, resolve_const as _resolve,
    subscript_index as _sub_index)

COMPONENTS = "xyzw"
_SIMPLE = re.compile(r"^[A-Za-z_][\w.]*$|^[0-9]+[uU]?$")


def _p(text: str) -> str:
    return text if _SIMPLE.match(text) else f"({text})"


# ====================================================================== the scalar loop
@dataclass
class MapLoop:
    loop: object
    var: str
    vtype: str  # the loop variable's type
    start: str
    bound: str  # N
    step: str
    dst: str  # Y
    src: str  # X
    stmt: object  # the statement `Y[I] = E;`
    value: object  # E
    reads: list  # the X[I] nodes in E
    start_node: object = None  # S (the initializer, or the value of i's declaration)
    step_node: object = None  # STEP
    decl: object = None  # `T i = S;` before a loop `for (; i < N; ...)`, else None
    srcs: list = None  # the arrays read, in order of first read
    dsts: list = None  # the arrays stored, in order of first store
    general: bool = False  # a body of locals and stores (else the one store Y[i] = E(X[i]))
    stmts: list = None  # the body's statements (general form)
    locals: list = None  # the names the body declares (general form)
    events: list = None  # ("read" | "store", array, node) in program order (general form)

    def __post_init__(self):
        if self.srcs is None:
            self.srcs = [self.src]
        if self.dsts is None:
            self.dsts = [self.dst]

    @property
    def arrays(self) -> list:
        return self.srcs + [d for d in self.dsts if d not in self.srcs]


def _outer_index(unit, fn, loop, var: str, vector=None):
    """(declaration, value) of the index of ``for (; i < N; i += STEP)``: a plain top-level
    ``T i = S;`` before the loop, assigned nowhere but in the loop's update and not used
    after the loop (the vector path advances it instead of the loop); or why not.
    ``vector``: the then-branch of a dispatch around the loop, whose updates are allowed."""
    got = _declaration(unit, fn, var, loop.start_byte) if fn is not None else None
    if got is None or got[0].type != "declaration" or got[1] is None:
        return None, f"{var} is not declared with an initial value before the loop"
    decl, value = got
    if decl.parent is None or not (decl.parent.start_byte <= loop.start_byte and
                                   loop.end_byte <= decl.parent.end_byte):
        return None, f"the declaration of {var} is not in a block around the loop"
    if len(decl.children_by_field_name("declarator")) != 1 or any(
            c.type in ("type_qualifier", "storage_class_specifier") for c in decl.children):
        return None, f"`{norm(unit.text(decl))}`: only `T {var} = S;` is supported"
    upd = loop.child_by_field_name("update")
    for n in unit.walk(fn.node):
        if n.type in ("assignment_expression", "update_expression"):
            t = _strip(n.child_by_field_name("left") or n.child_by_field_name("argument"))
            if t is not None and t.type == "identifier" and unit.text(t) == var and \
                    not (upd.start_byte <= n.start_byte and n.end_byte <= upd.end_byte) and \
                    not (vector is not None and vector.start_byte <= n.start_byte and
                         n.end_byte <= vector.end_byte):
                return None, (f"{var} is assigned at line {unit.line_col(n.start_byte)[0]} "
                              "besides the loop's update")
    for n in _idents(unit, fn.node, var):
        if n.start_byte >= loop.end_byte:
            return None, (f"{var} is used after the loop (line {unit.line_col(n.start_byte)[0]}): "
                          "the vector path would leave it at another value")
    return (decl, value), None


def map_loop(unit, loop, fn=None, vector=None) -> "MapLoop | str":
    if loop is None or loop.type != "for_statement":
        return "not a for loop"
    init = loop.child_by_field_name("initializer")
    cond = loop.child_by_field_name("condition")
    upd = loop.child_by_field_name("update")
    if cond is None or upd is None or (init is not None and init.type != "declaration"):
        return "the loop is not `for (T i = S; i < N; i += STEP)` or `for (; i < N; i += STEP)`"
    decl = None
    c = _strip(cond)
    if init is not None:
        decls = init.children_by_field_name("declarator")
        if len(decls) != 1 or decls[0].type != "init_declarator":
            return "the loop declares more than one variable"
        var = unit.text(decls[0].child_by_field_name("declarator"))
        start_node = decls[0].child_by_field_name("value")
        vtype = norm(unit.text(init.child_by_field_name("type")))
    else:
        if c.type != "binary_expression" or _strip(c.child_by_field_name("left")).type != "identifier":
            return "the condition is not `i < N`"
        var = unit.text(_strip(c.child_by_field_name("left")))
        got, why = _outer_index(unit, fn, loop, var, vector)
        if got is None:
            return why
        decl, start_node = got
        vtype = norm(unit.text(decl.child_by_field_name("type")))
    start = norm(unit.text(start_node))
    if c.type != "binary_expression" or unit.text(c.child_by_field_name("operator")) != "<" \
            or norm(unit.text(c.child_by_field_name("left"))) != var:
        return f"the condition is not `{var} < N`"
    bound = c.child_by_field_name("right")
    u = _strip(upd)
    if u.type != "assignment_expression" or unit.text(u.child_by_field_name("operator")) != "+=" \
            or norm(unit.text(u.child_by_field_name("left"))) != var:
        return f"the update is not `{var} += STEP`"
    step = u.child_by_field_name("right")
    for part in (bound, step):
        if _idents(unit, part, var) or not _pure(unit, part):
            return f"`{norm(unit.text(part))}` is not loop-invariant"
    body = loop.child_by_field_name("body")
    one = _one_store(unit, body, var)
    if isinstance(one, str):
        gen = _general(unit, body, var)
        if isinstance(gen, str):
            return one if len(statements(body)) == 1 else gen
        srcs, dsts, stmts, names, events, reads = gen
        return MapLoop(loop, var, vtype, start, norm(unit.text(bound)), norm(unit.text(step)),
                       dsts[0], srcs[0], None, None, reads, start_node, step, decl, srcs, dsts,
                       True, stmts, names, events)
    stmt, dst, value, src, reads = one
    return MapLoop(loop, var, vtype, start, norm(unit.text(bound)), norm(unit.text(step)), dst,
                   src, stmt, value, reads, start_node, step, decl)


def _one_store(unit, body, var):
    """(stmt, Y, E, X, reads) of a body that is the one store ``Y[i] = E(X[i])``, or why not."""
    stmt = _single(body)
    e = None
    if stmt is not None and stmt.type == "expression_statement":
        inner = [x for x in stmt.named_children if x.type != "comment"]
        e = inner[0] if len(inner) == 1 else None
    if e is None or e.type != "assignment_expression" or unit.text(e.child_by_field_name("operator")) != "=":
        return "the body is not one assignment `Y[i] = E;`"
    lhs = _strip(e.child_by_field_name("left"))
    if lhs.type != "subscript_expression" or _strip(lhs.child_by_field_name("argument")).type != "identifier":
        return "the body does not store to `Y[i]`"
    if norm(unit.text(_sub_index(lhs))) != var:
        return f"the store index is not `{var}`"
    dst = unit.text(_strip(lhs.child_by_field_name("argument")))
    value = e.child_by_field_name("right")
    reads, src = [], None
    for n in unit.walk(value):
        if n.type == "subscript_expression":
            a = _strip(n.child_by_field_name("argument"))
            if a.type != "identifier" or norm(unit.text(_sub_index(n))) != var:
                return f"`{norm(unit.text(n))}` is not an element `X[{var}]`"
            if src is not None and unit.text(a) != src:
                return f"the value reads two arrays ({src}, {unit.text(a)})"
            src = unit.text(a)
            reads.append(n)
    if src is None:
        return "the value reads no element `X[i]`"
    cover = {r.id for r in reads}
    for n in _idents(unit, value, var):
        p = n.parent
        while p is not None and p.id not in cover and p.id != value.id:
            p = p.parent
        if p is None or p.id not in cover:
            return f"the value uses `{var}` outside `{src}[{var}]`"
    return stmt, dst, value, src, reads


_EXITS = ("return_statement", "break_statement", "continue_statement", "goto_statement")
_STMTS = ("declaration", "expression_statement", "if_statement", "compound_statement")


def _store(unit, s):
    """(Y[..] node, value) of a statement ``Y[..] = E;``, else None."""
    if s.type != "expression_statement":
        return None
    inner = [x for x in s.named_children if x.type != "comment"]
    e = inner[0] if len(inner) == 1 else None
    if e is None or e.type != "assignment_expression" or \
            unit.text(e.child_by_field_name("operator")) != "=":
        return None
    lhs = _strip(e.child_by_field_name("left"))
    if lhs.type != "subscript_expression":
        return None
    return lhs, e.child_by_field_name("right")


def _declared(unit, node) -> list:
    """The names declared by the declarations under ``node``."""
    out = []
    for n in unit.walk(node):
        if n.type == "declaration":
            for d in n.children_by_field_name("declarator"):
                if d.type == "init_declarator":
                    d = d.child_by_field_name("declarator")
                out.append(unit.text(d) if d.type == "identifier" else None)
    return out


def _general(unit, body, var):
    """(inputs, outputs, statements, locals, events, reads) of a body made of scalar locals
    computed from elements ``A[i]`` and stores ``Y[i] = E;`` (statements of the body), or
    why it is not one."""
    stmts = statements(body)
    names = _declared(unit, body)
    if None in names:
        return "the body declares something other than a scalar local"
    srcs, dsts, events, reads, lhs_ids = [], [], [], [], set()
    for s in stmts:
        if s.type not in _STMTS:
            return f"`{norm(unit.text(s))[:40]}` is not a declaration, an assignment or a store"
        st = _store(unit, s)
        if st is not None:
            lhs = st[0]
            a = _strip(lhs.child_by_field_name("argument"))
            if a.type != "identifier" or unit.text(a) in names:
                return f"`{norm(unit.text(lhs))}` is not a store to an array `Y[{var}]`"
            if norm(unit.text(_sub_index(lhs))) != var:
                return f"the store index of `{norm(unit.text(lhs))}` is not `{var}`"
            lhs_ids.add(lhs.id)
            if unit.text(a) not in dsts:
                dsts.append(unit.text(a))
            events.append((s.end_byte, "store", unit.text(a), lhs))
    for n in unit.walk(body):
        if n.type in _EXITS:
            return f"`{norm(unit.text(n))}` leaves the body early"
        if n.type in ("assignment_expression", "update_expression"):
            t = _strip(n.child_by_field_name("left") or n.child_by_field_name("argument"))
            if t is not None and t.id in lhs_ids:
                continue
            if t is None or t.type != "identifier" or unit.text(t) not in names:
                return (f"`{norm(unit.text(n))}` assigns something other than a local of the "
                        f"body or a statement `Y[{var}] = E;`")
        if n.type == "subscript_expression" and n.id not in lhs_ids:
            a = _strip(n.child_by_field_name("argument"))
            if a.type != "identifier" or unit.text(a) in names or \
                    norm(unit.text(_sub_index(n))) != var:
                return f"`{norm(unit.text(n))}` is not an element `X[{var}]`"
            reads.append(n)
            if unit.text(a) not in srcs:
                srcs.append(unit.text(a))
            events.append((n.start_byte, "read", unit.text(a), n))
    if not dsts:
        return f"the body stores no element `Y[{var}]`"
    if not srcs:
        return f"the body reads no element `X[{var}]`"
    cover = {r.id for r in reads} | lhs_ids
    arrays = set(srcs) | set(dsts)
    for n in _idents(unit, body):
        name = unit.text(n)
        if name != var and name not in arrays:
            continue
        p = n.parent
        while p is not None and p.id not in cover and p.id != body.id:
            p = p.parent
        if p is None or p.id not in cover:
            return f"the body uses `{name}` outside the elements `A[{var}]`"
        if name in arrays and _strip(p.child_by_field_name("argument")).id != n.id:
            return f"the body uses `{name}` in an index"
    events.sort(key=lambda e: e[0])
    return srcs, dsts, stmts, names, [e[1:] for e in events], reads


def _vec_type(unit, fn, ml) -> "tuple[str, int, int] | str":
    out = None
    for ptr in ml.arrays:
        got = _declaration(unit, fn, ptr, ml.loop.start_byte)
        if got is None or not _is_pointer(unit, got[0]):
            return f"{ptr} is not a pointer declared in {fn.name}"
        ty = norm(re.sub(r"\b(const|volatile|__restrict__|__restrict)\b", "",
                         _base_type(unit, got[0])))
        if ty not in ELEMS:
            return f"{ptr} points to {ty or '?'}: no 16-byte vector type of it"
        if out is not None and out[0] != ty:
            return f"{ml.arrays[0]} and {ptr} have different element types"
        out = (ty, ELEMS[ty])
    ty, (prefix, size) = out
    w = 16 // size
    return f"{prefix}{w}", w, 16


def _component(unit, ml, tmp: str, comp: str) -> str:
    reps = [(r.start_byte, r.end_byte, f"{tmp}.{comp}") for r in ml.reads]
    return norm(splice(unit, ml.value, reps))


def render(unit, ml, vt: str, w: int, o: dict, step: str) -> list[str]:
    """The vector path's statements (one per line, nested with ``step``)."""
    S = _p(ml.step)
    comps = COMPONENTS[:w]
    div = f"{ml.bound} >> {w.bit_length() - 1}" if o["div"] == "shift" else f"{_p(ml.bound)} / {w}"
    ity = ml.vtype
    rq = " __restrict__" if o.get("restrict") else ""
    out = [f"{'const ' if o['const'] else ''}{vt}*{rq} {o['xv']} = "
           f"reinterpret_cast<{'const ' if o['const'] else ''}{vt}*>({ml.src});",
           f"{vt}*{rq} {o['yv']} = reinterpret_cast<{vt}*>({ml.dst});",
           f"const {ity} {o['nv']} = {div};"]
    if ml.decl is None:  # else the vector path advances the index declared before the loop
        out.append(f"{ity} {ml.var} = {ml.start};")
    I, U, u, T, O = ml.var, str(o["unroll"]), o["u"], o["t"], o["o"]
    if U != "1":
        out += [f"for (; {I} + ({U} - 1) * {S} < {o['nv']}; {I} += {U} * {S}) {{",
                f"{step}{vt} {T}[{U}];",
                f"{step}for (int {u} = 0; {u} < {U}; ++{u}) {{",
                f"{step}{step}{T}[{u}] = {o['xv']}[{I} + {u} * {S}];",
                f"{step}}}",
                f"{step}for (int {u} = 0; {u} < {U}; ++{u}) {{",
                f"{step}{step}{vt} {O};"]
        out += [f"{step}{step}{O}.{c} = {_component(unit, ml, f'{T}[{u}]', c)};" for c in comps]
        out += [f"{step}{step}{o['yv']}[{I} + {u} * {S}] = {O};", f"{step}}}", "}"]
    out += [f"for (; {I} < {o['nv']}; {I} += {S}) {{",
            f"{step}const {vt} {T} = {o['xv']}[{I}];",
            f"{step}{vt} {O};"]
    out += [f"{step}{O}.{c} = {_component(unit, ml, T, c)};" for c in comps]
    out += [f"{step}{o['yv']}[{I}] = {O};", "}"]
    return out


def _lane(unit, ml, stmt, w: int, comp: str) -> list[str]:
    """The lines of one body statement for the lane ``comp``: each element ``A[i]`` (read or
    stored) becomes the component of A's register vector."""
    reps = [(n.start_byte, n.end_byte, f"{a}{w}.{comp}") for _, a, n in ml.events
            if stmt.start_byte <= n.start_byte and n.end_byte <= stmt.end_byte]
    lines = splice(unit, stmt, reps).split("\n")
    ind = line_indent(unit, stmt.start_byte)
    return [lines[0]] + [ln[len(ind):] if ln.startswith(ind) else ln.lstrip() for ln in lines[1:]]


def render_general(unit, ml, vt: str, w: int, o: dict, step: str) -> list[str]:
    """The vector path of a body of locals and stores: each input loaded once as a vector,
    the body once per lane (in its own block when it declares locals), each output stored
    once as a vector."""
    S, I, suf = _p(ml.step), ml.var, o["suffix"]
    c = "const " if o["const"] else ""
    rq = " __restrict__" if o.get("restrict") else ""
    div = f"{ml.bound} >> {w.bit_length() - 1}" if o["div"] == "shift" else f"{_p(ml.bound)} / {w}"
    out = [f"{c}{vt}*{rq} {a}{suf} = reinterpret_cast<{c}{vt}*>({a});" for a in ml.srcs]
    out += [f"{vt}*{rq} {a}{suf} = reinterpret_cast<{vt}*>({a});" for a in ml.dsts]
    out.append(f"const {ml.vtype} {o['nv']} = {div};")
    if ml.decl is None:
        out.append(f"{ml.vtype} {I} = {ml.start};")
    out.append(f"for (; {I} < {o['nv']}; {I} += {S}) {{")
    out += [f"{step}const {vt} {a}{w} = {a}{suf}[{I}];" for a in ml.srcs]
    out += [f"{step}{vt} {a}{w};" for a in ml.dsts]
    for comp in COMPONENTS[:w]:
        lines = [ln for st in ml.stmts for ln in _lane(unit, ml, st, w, comp)]
        if ml.locals:
            out += [f"{step}{{"] + [f"{step}{step}{ln}" for ln in lines] + [f"{step}}}"]
        else:
            out += [f"{step}{ln}" for ln in lines]
    out += [f"{step}{a}{suf}[{I}] = {a}{w};" for a in ml.dsts]
    out.append("}")
    return out


def _render(unit, ml, vt: str, w: int, o: dict, step: str) -> list[str]:
    return (render_general if ml.general else render)(unit, ml, vt, w, o, step)

# ========================================================================= the analysis
@dataclass
class Found:
    ml: "MapLoop | None" = None
    why: str = ""
    flag: str | None = None
    dispatch: object = None


def _find(site) -> Found:
    unit, node = site.unit, site.node
    if node.type == "for_statement":
        ml = map_loop(unit, node, site.function)
        if isinstance(ml, str):
            return Found(why=ml)
        return Found(ml, flag=getattr(site.pass_, "flag", None))
    cond = _strip(node.child_by_field_name("condition"))
    alt = node.child_by_field_name("alternative")
    if cond is None or cond.type != "identifier" or alt is None:
        return Found(why="not `if (flag) { ... } else { ... }`")
    els = [c for c in alt.named_children if c.type != "comment"]
    loop = _single(els[0]) if len(els) == 1 else None
    if loop is None or loop.type != "for_statement":
        return Found(why="the else branch is not a single loop")
    ml = map_loop(unit, loop, site.function, node.child_by_field_name("consequence"))
    if isinstance(ml, str):
        return Found(why=f"the else branch is not a strided map: {ml}")
    return Found(ml, flag=unit.text(cond), dispatch=node)


def check_map_loop(site, ctx) -> Verdict:
    f = _find(site)
    if f.ml is None:
        return Verdict.no(f.why)
    ml = f.ml
    if ml.general:
        if str(getattr(site.pass_, "unroll", 1)) != "1":
            return Verdict.no("unroll > 1 takes only a body that is one store `Y[i] = E(X[i])` "
                              f"(this one has {len(ml.stmts)} statements or several arrays)")
        return Verdict.yes(f"a body of locals and stores `{'/'.join(ml.dsts)}[{ml.var}]` from "
                           f"`{'/'.join(ml.srcs)}[{ml.var}]`, strided by {ml.step}")
    return Verdict.yes(f"`{f.ml.dst}[{f.ml.var}] = E({f.ml.src}[{f.ml.var}])` strided by "
                       f"{f.ml.step}")


def check_whole_range(site, ctx) -> Verdict:
    f = _find(site)
    if f.ml is None:
        return Verdict.unknown(f.why)
    unit, fn, ml = site.unit, site.function, f.ml
    before = ml.loop.start_byte
    start = _resolve(unit, fn, ml.start, before).strip("()")
    step = _flat(ml.step).strip("()")
    sa = affine_of(unit, ml.start_node, fn) if ml.start_node is not None else None
    ga = affine_of(unit, ml.step_node, fn) if ml.step_node is not None else None
    ok = (sa is not None and sa == GLOBAL_INDEX and ga is not None and ga == GRID_SIZE) or \
        (start == "threadIdx.x" and step == "blockDim.x") or \
        (start in _GLOBAL_IDS and step in _GRID) or \
        (start.endswith("%" + step) and "threadIdx.x" in start) or \
        (step == "32" and start.endswith("&31") and "threadIdx.x" in start)
    if not ok:
        return Verdict.unknown(f"cannot show that the threads' starts `{ml.start}` cover each "
                               f"residue of the stride `{ml.step}` once (then vectors and "
                               f"elements would be split differently)")
    return Verdict.yes(f"the threads' starts {ml.start} cover every residue of {ml.step} once: "
                       f"the loop covers the whole range")


def emitted_flag(unit, fn, ml, flag: str) -> str:
    """The declaration of the run-time flag that vectorize-stream writes before the loop
    when none is declared, or why it cannot: ``const bool F = N % W == 0 &&
    reinterpret_cast<size_t>(X) % 16 == 0 [&& ... (Y) ...];`` over the parameters of X, Y."""
    vt = _vec_type(unit, fn, ml)
    if isinstance(vt, str):
        raise ValueError(vt)
    if not re.fullmatch(r"[A-Za-z_][\w.]*", _flat(ml.bound)):
        raise ValueError(f"the bound `{ml.bound}` is not a name: the pass writes the flag's "
                         f"test `N % {vt[1]} == 0` only for a plain name")
    roots = []
    for ptr in ml.arrays:
        root = _root(unit, fn, ptr, ml.loop.start_byte)
        if root is None:
            raise ValueError(f"{ptr} is not a parameter or `param + offset`")
        if root[0] not in roots:
            roots.append(root[0])
    tests = [f"{ml.bound} % {vt[1]} == 0"] + \
        [f"reinterpret_cast<size_t>({r}) % {vt[2]} == 0" for r in roots]
    return f"const bool {flag} = {' && '.join(tests)};"


def _emits_flag(site, f) -> bool:
    """No declaration of the flag before the loop: vectorize-stream writes one."""
    return f.dispatch is None and \
        _declaration(site.unit, site.function, f.flag or "", f.ml.loop.start_byte) is None


def _dropped_flag(site, f):
    """The flag's declaration when scalarize-stream removes it with the vector path: the
    statement just before the dispatch, exactly the declaration vectorize-stream emits, the
    flag named nowhere else but in the dispatch's condition; else None."""
    unit, fn = site.unit, site.function
    if f.dispatch is None or f.ml is None:
        return None
    prev = f.dispatch.prev_named_sibling
    if prev is None or prev.type != "declaration":
        return None
    try:
        want = emitted_flag(unit, fn, f.ml, f.flag)
    except ValueError:
        return None
    if _flat(unit.text(prev)) != _flat(want):
        return None
    cond = f.dispatch.child_by_field_name("condition")
    for n in _idents(unit, fn.node, f.flag):
        if not (prev.start_byte <= n.start_byte < prev.end_byte or
                cond.start_byte <= n.start_byte < cond.end_byte):
            return None
    return prev


def check_element_type(site, ctx) -> Verdict:
    f = _find(site)
    if f.ml is None:
        return Verdict.unknown(f.why)
    vt = _vec_type(site.unit, site.function, f.ml)
    if isinstance(vt, str):
        return Verdict.no(vt)
    return Verdict.yes(f"{vt[1]} elements of {' / '.join(f.ml.arrays)} are one {vt[0]}")


def check_vector_flag(site, ctx) -> Verdict:
    f = _find(site)
    if f.ml is None:
        return Verdict.unknown(f.why)
    unit, fn, ml = site.unit, site.function, f.ml
    vt = _vec_type(unit, fn, ml)
    if isinstance(vt, str):
        return Verdict.unknown(vt)
    if _emits_flag(site, f):
        p = ml.loop.parent
        if p is None or p.type != "compound_statement":
            return Verdict.no(f"no flag `{f.flag}` is declared before the loop, and the loop is "
                              "not a statement of a block, where the pass could declare it")
        try:
            text = emitted_flag(unit, fn, ml, f.flag)
        except ValueError as e:
            return Verdict.no(f"no flag `{f.flag}` is declared before the loop, and the pass "
                              f"cannot write one: {e}")
        return Verdict.yes(f"the pass declares `{text}` before the loop (run-time guard)")
    got = _declaration(unit, fn, f.flag or "", ml.loop.start_byte)
    if got is None or got[1] is None:
        return Verdict.no(f"no flag `{f.flag}` with an initializer is declared before the loop "
                          f"(it must test the length and the alignment at run time)")
    if _assigned(unit, fn, f.flag):
        return Verdict.no(f"the flag {f.flag} is assigned after its declaration")
    flat = _flat(unit.text(got[1]))
    bad = next((t for t in ("||", "?", "!=", "!(") if t in flat), None)
    if bad is not None:
        return Verdict.no(f"`{f.flag}` is not a plain conjunction of `== 0` tests (it has {bad})")
    lens = _divisible_lens(unit, got[1], vt[1])
    if _flat(ml.bound) not in lens:
        return Verdict.no(f"`{f.flag}` does not test that the length {ml.bound} is a multiple "
                          f"of {vt[1]}")
    aligned = _aligned_roots(unit, got[1], vt[2])
    for ptr in ml.arrays:
        root = _root(unit, fn, ptr, ml.loop.start_byte)
        if root is None:
            return Verdict.no(f"{ptr} is not a parameter or `param + offset`")
        if root[0] not in aligned:
            return Verdict.no(f"`{f.flag}` does not test the 16-byte alignment of {root[0]}")
    return Verdict.yes(f"`{f.flag}` tests {ml.bound} % {vt[1]} == 0 and the alignment of the "
                       f"pointers (run-time guard)")


def check_aligned_offset(site, ctx) -> Verdict:
    f = _find(site)
    if f.ml is None:
        return Verdict.unknown(f.why)
    unit, fn, ml = site.unit, site.function, f.ml
    vt = _vec_type(unit, fn, ml)
    if isinstance(vt, str):
        return Verdict.unknown(vt)
    got = _declaration(unit, fn, f.flag or "", ml.loop.start_byte)
    lens = _divisible_lens(unit, got[1], vt[1]) if got is not None and got[1] is not None else set()
    if _emits_flag(site, f):
        lens = {_flat(ml.bound)}
    for ptr in ml.arrays:
        root = _root(unit, fn, ptr, ml.loop.start_byte)
        if root is None:
            return Verdict.no(f"{ptr} is not a parameter or `param + offset`")
        if root[1] is not None and not _multiple(unit, fn, root[1], vt[1], lens,
                                                  ml.loop.start_byte):
            return Verdict.no(f"the offset `{norm(unit.text(root[1]))}` of {ptr} from {root[0]} "
                              f"is not a multiple of {vt[1]} or of a length the flag tests")
    return Verdict.yes(f"{', '.join(ml.arrays)} start a whole number of vectors from their "
                       f"parameters")


def check_element_wise(site, ctx) -> Verdict:
    f = _find(site)
    if f.ml is None:
        return Verdict.unknown(f.why)
    unit, fn, ml = site.unit, site.function, f.ml
    if ml.general:
        return _element_wise_general(site, ctx, ml)
    if not _pure_math(unit, ml.value):
        return Verdict.no(f"`{norm(unit.text(ml.value))}` has side effects")
    for n in unit.walk(ml.value):
        if n.type == "pointer_expression" and unit.text(n.child_by_field_name("operator")) == "*":
            return Verdict.no(f"`{norm(unit.text(n))}` reads memory besides {ml.src}[{ml.var}]")
    if _idents(unit, ml.value, ml.dst):
        return Verdict.no(f"the value reads {ml.dst}, the array the loop writes")
    if getattr(site.pass_, "restrict", False):
        rx = _root(unit, fn, ml.src, ml.loop.start_byte)
        ry = _root(unit, fn, ml.dst, ml.loop.start_byte)
        if rx is None or ry is None or not ctx.assumed("no_alias", rx[0], ry[0]):
            return Verdict.no(f"__restrict__ vector pointers need no_alias of {ml.src} and "
                              f"{ml.dst} (say --assume 'no_alias(*)')")
    for n in _idents(unit, ml.value):
        name = unit.text(n)
        if name not in (ml.var, ml.src) and _assigned_in(unit, ml.loop, name):
            return Verdict.no(f"`{name}` changes inside the loop")
    return Verdict.yes(f"each element of {ml.dst} depends only on the same element of {ml.src} "
                       f"and loop-invariant values")


_MATH = {"sinf", "cosf", "tanf", "powf", "exp2f", "expm1f", "log2f", "log10f", "log1pf", "erff",
         "erfcf", "normcdff", "tanh", "sin", "cos", "pow", "log", "sqrt", "copysignf", "floorf",
         "ceilf", "roundf", "truncf", "rintf", "__sinf", "__cosf", "__powf", "__saturatef",
         "__frcp_rn", "__fsqrt_rn", "__fmul_rn", "__fadd_rn", "__fmaf_rn", "abs", "fdividef"}


def _pure_math(unit, node) -> bool:
    """No assignment, and every call a known pure function (vectorize_lanes's or _MATH)."""
    for n in unit.walk(node):
        if n.type in ("assignment_expression", "update_expression"):
            return False
        if n.type == "call_expression" and not _known_pure(unit, n):
            return False
    return True


def _known_pure(unit, call) -> bool:
    f = call.child_by_field_name("function")
    name = re.sub(r"<.*>$", "", unit.text(f)) if f is not None else ""
    return name in _PURE or name in _MATH


def _element_wise_general(site, ctx, ml) -> Verdict:
    unit = site.unit
    body = ml.loop.child_by_field_name("body")
    for n in unit.walk(body):
        if n.type == "call_expression":
            if not _known_pure(unit, n):
                return Verdict.no(f"`{norm(unit.text(n))}` is a call with side effects (or not "
                                  "known to be pure)")
        if n.type == "pointer_expression" and unit.text(n.child_by_field_name("operator")) == "*":
            return Verdict.no(f"`{norm(unit.text(n))}` reads memory besides the elements "
                              f"`A[{ml.var}]`")
    if getattr(site.pass_, "restrict", False):
        why = _alias_pairs(site, ctx, ml, ml.arrays)
        if why:
            return Verdict.no(f"__restrict__ vector pointers need {why} (say --assume "
                              "'no_alias(*)')")
    for n in _idents(unit, body):
        name = unit.text(n)
        if name not in ml.locals and name not in ml.arrays and name != ml.var and \
                _assigned_in(unit, ml.loop, name):
            return Verdict.no(f"`{name}` changes inside the loop")
    return Verdict.yes(f"each element of {', '.join(ml.dsts)} depends only on the same element "
                       f"of {', '.join(ml.srcs)}, locals of the body and loop-invariant values")


def _alias_pairs(site, ctx, ml, arrays) -> str | None:
    """None when every two of ``arrays`` are known not to alias, else what is missing."""
    unit, fn = site.unit, site.function
    roots = [_root(unit, fn, a, ml.loop.start_byte) for a in arrays]
    for i, a in enumerate(arrays):
        for j in range(i + 1, len(arrays)):
            ra, rb = roots[i], roots[j]
            if ra is not None and rb is not None and ra[0] != rb[0] and \
                    _restrict_param(unit, fn, ra[0]) and _restrict_param(unit, fn, rb[0]):
                continue
            if ra is None or rb is None or not ctx.assumed("no_alias", ra[0], rb[0]):
                return f"no_alias of {a} and {arrays[j]}"
    return None


def _restrict_param(unit, fn, name: str) -> bool:
    """``name`` is a parameter declared ``__restrict__`` (the kernel's promise that the
    memory it reaches is reached through no other pointer)."""
    got = _declaration(unit, fn, name, fn.node.end_byte)
    return got is not None and got[0].type == "parameter_declaration" and \
        re.search(r"\b__restrict(__)?\b", unit.text(got[0])) is not None


def check_loads_first(site, ctx) -> Verdict:
    """The vector path loads every input before it stores any output: no element is read
    after a store to its array, nor (without no_alias) after a store to an array that may be
    the same memory; an array is not both read and stored (in place)."""
    f = _find(site)
    if f.ml is None:
        return Verdict.unknown(f.why)
    ml = f.ml
    if not ml.general:
        return Verdict.yes("one store after its reads")
    inplace = [a for a in ml.dsts if a in ml.srcs]
    stored: list = []
    unit = site.unit
    for kind, a, n in ml.events:
        if kind == "store":
            stored.append(a)
            continue
        if a in stored:
            return Verdict.no(f"`{norm(unit.text(n))}` is read after a store to {a}: the vector "
                              "path loads every input before it stores")
        for b in dict.fromkeys(stored):
            why = _alias_pairs(site, ctx, ml, [a, b])
            if why:
                return Verdict.no(f"`{norm(unit.text(n))}` is read after a store to {b}, which "
                                  f"may be the same memory: the vector path loads every input "
                                  f"before it stores ({why} is not assumed)")
    if inplace:
        return Verdict.no(f"the body stores to {inplace[0]}, which it also reads (in place): "
                          "the vector path would read it through a const view and write it "
                          "through another")
    return Verdict.yes("every element is read before the body stores to any array")


def _assigned_in(unit, node, name) -> bool:
    for n in unit.walk(node):
        if n.type in ("assignment_expression", "update_expression"):
            t = _strip(n.child_by_field_name("left") or n.child_by_field_name("argument"))
            if t is not None and t.type == "identifier" and unit.text(t) == name:
                return True
    return False


def _names(o, ml=None) -> list:
    if ml is not None and ml.general:
        return [a + o["suffix"] for a in ml.arrays] + [f"{a}{o.get('w', 4)}" for a in ml.arrays] + \
            [o["nv"]]
    return [o["xv"], o["yv"], o["nv"], o["t"], o["o"]] + ([o["u"]] if str(o["unroll"]) != "1" else [])


def _free(unit, fn, ml, names) -> str | None:
    # the vector path opens its own block: only names the loop itself uses could be
    # captured by its declarations
    used = {unit.text(n) for n in _idents(unit, ml.loop)}
    for n in names:
        if n in used:
            return n
    if len(set(names)) != len(names):
        return "a repeated name"
    return None


def check_fresh_names(site, ctx) -> Verdict:
    f = _find(site)
    if f.ml is None:
        return Verdict.unknown(f.why)
    o = _opts(site.pass_)
    if f.ml.general:
        vt = _vec_type(site.unit, site.function, f.ml)
        o["w"] = vt[1] if not isinstance(vt, str) else 4
    clash = _free(site.unit, site.function, f.ml, _names(o, f.ml))
    if clash:
        return Verdict.no(f"the temporary name {clash} is already used in {site.function.name}")
    if _emits_flag(site, f) and _idents(site.unit, site.function.node, f.flag):
        return Verdict.no(f"the flag name {f.flag} is already used in {site.function.name} "
                          "(the pass declares it before the loop)")
    return Verdict.yes("the vector temporaries' names are free")


def check_not_vectorized(site, ctx) -> Verdict:
    node = site.node
    p = node.parent
    while p is not None and p.type == "compound_statement" and len(
            [c for c in p.named_children if c.type != "comment"]) == 1:
        p = p.parent
    if p is not None and p.type == "else_clause":
        p = p.parent
    if p is not None and p.type == "if_statement" and p.child_by_field_name("alternative") is not None:
        c = _strip(p.child_by_field_name("condition"))
        if c is not None and c.type == "identifier" and p.child_by_field_name("alternative").start_byte <= node.start_byte:
            return Verdict.no(f"the loop is already the scalar fallback of `if ({site.unit.text(c)})`")
    return Verdict.yes("the loop is not the fallback of a vector dispatch")


def _opts(p) -> dict:
    return {"xv": p.xv, "yv": p.yv, "nv": p.nv, "t": p.t, "o": p.o, "u": p.u,
            "unroll": p.unroll, "div": p.div, "const": p.const, "restrict": p.restrict,
            "suffix": p.suffix}


# =============================================================== reading the vector form
def vector_options(site) -> "dict | None":
    """The options of vectorize-stream that give the dispatch's then-branch, if any."""
    f = _find(site)
    if f.dispatch is None or f.ml is None:
        return None
    unit, fn, ml = site.unit, site.function, f.ml
    vt = _vec_type(unit, fn, ml)
    if isinstance(vt, str):
        return None
    then = f.dispatch.child_by_field_name("consequence")
    flat = _flat(unit.text(then))
    V = re.escape(vt[0])
    if ml.general:
        a = ml.srcs[0]
        m = re.search(rf"(const)?{V}\*(__restrict__)?({re.escape(a)}\w*)=reinterpret_cast<"
                      rf"(?:const)?{V}\*>\({re.escape(a)}\);", flat)
        m3 = re.search(rf"const{re.escape(ml.vtype.replace(' ', ''))}(\w+)=[^;]*?(>>|/)", flat)
        if not (m and m3) or m.group(3)[len(a):] not in _SUFFIXES:
            return None
        return {"const": bool(m.group(1)), "restrict": bool(m.group(2)),
                "suffix": m.group(3)[len(a):], "nv": m3.group(1),
                "div": "shift" if m3.group(2) == ">>" else "div"}
    o = {"const": True, "restrict": False, "div": "shift", "unroll": 1, "u": "u", "t": "t",
         "o": "o"}
    m = re.search(rf"(const)?{V}\*(__restrict__)?(\w+)=reinterpret_cast<(?:const)?{V}\*>\({re.escape(ml.src)}\);", flat)
    m2 = re.search(rf"{V}\*(?:__restrict__)?(\w+)=reinterpret_cast<{V}\*>\({re.escape(ml.dst)}\);", flat)
    m3 = re.search(rf"const{re.escape(ml.vtype.replace(' ', ''))}(\w+)=[^;]*?(>>|/)", flat)
    if not (m and m2 and m3):
        return None
    o.update(const=bool(m.group(1)), restrict=bool(m.group(2)), xv=m.group(3), yv=m2.group(1),
             nv=m3.group(1),
             div="shift" if m3.group(2) == ">>" else "div")
    mu = re.search(rf"for\(;{re.escape(ml.var)}\+\((\w+)-1\)\*", flat)
    if mu:
        o["unroll"] = int(mu.group(1)) if mu.group(1).isdigit() else mu.group(1)
        mt = re.search(rf"{V}(\w+)\[{re.escape(mu.group(1))}\];for\(int(\w+)=0", flat)
        if mt:
            o.update(t=mt.group(1), u=mt.group(2))
    mr = re.search(rf"const{V}(\w+)=\w+\[{re.escape(ml.var)}\];{V}(\w+);", flat)
    if mr:
        o.update(t=mr.group(1), o=mr.group(2))
    return o


def _rendered_matches(site, f, o) -> bool:
    unit, fn = site.unit, site.function
    vt = _vec_type(unit, fn, f.ml)
    then = f.dispatch.child_by_field_name("consequence")
    got = _flat(unit.text(then))
    full = {"xv": "xv", "yv": "yv", "t": "t", "o": "o", "u": "u", "unroll": 1,
            "suffix": "_vec", **o}
    want = _flat("{" + "\n".join(_render(unit, f.ml, vt[0], vt[1], full, "    ")) + "}")
    return got == want


def check_vector_dispatch(site, ctx) -> Verdict:
    f = _find(site)
    if f.dispatch is None:
        return Verdict.no(f.why or "not a flag dispatch")
    return Verdict.yes(f"`if ({f.flag})` with the strided map over {f.ml.dst} as its fallback")


def check_vector_form(site, ctx) -> Verdict:
    f = _find(site)
    if f.ml is None or f.dispatch is None:
        return Verdict.unknown(f.why)
    o = vector_options(site)
    if o is None or not _rendered_matches(site, f, o):
        return Verdict.no("the then-branch is not the vector form of the else-branch's loop "
                          "(as vectorize-stream writes it)")
    if f.ml.general:
        return Verdict.yes(f"the then-branch is vectorize-stream{{suffix={o['suffix']}}} of the loop")
    return Verdict.yes(f"the then-branch is vectorize-stream{{unroll={o['unroll']}}} of the loop")


# ================================================================================ passes
_SUFFIXES = ("_vec", "_v", "v", "_4", "_f4", "_v4")
_UNROLL = OneOf(IntRange(1, 16), Identifier(words=()))


@dataclass(frozen=True)
class VectorizeStream(Pass):
    """Give a strided element-wise loop a 16-byte vector path behind a run-time flag.

    A loop ``for (T i = S; i < N; i += STEP) Y[i] = E(X[i]);`` (every thread starts at its
    own S, all stride by STEP) becomes ``if (flag) { vector loop } else { the loop }``: the
    same threads stride over the N / W vectors of X and Y (W = 16 bytes / element size),
    U vectors in flight per thread and then a remainder loop, E applied per component.
    Each element is still computed exactly once from the same value, so the result is
    bit-identical. The flag is a run-time GUARD computed by the kernel (N % W == 0 and the
    16-byte alignment of both pointers' parameters); the offsets of X and Y from their
    parameters must be multiples of W or of a length the flag tests. When no flag is
    declared before the loop (e.g. right after ``grid-stride``), the pass declares it
    just before the dispatch: ``const bool vec_ok = N % W == 0 &&
    reinterpret_cast<size_t>(X0) % 16 == 0 && ...;`` over the parameters X0, Y0 of X and
    Y (N must be a plain name) - a run-time GUARD, no context fact needed.

    Also accepted: ``for (; i < N; i += STEP)`` with ``T i = S;`` declared before the loop
    (the form ``grid-stride{fold=false}`` writes), when i is assigned nowhere else and not
    used after the loop: the vector path then advances i itself. A STEP or start held in
    a const local (``nthreads = (size_t)gridDim.x * blockDim.x``) is read through it.

    General bodies: statements that declare or assign scalar locals of the body and
    statements ``Y[i] = E;``, reading elements ``A[i]`` (exactly index i) of any number of
    arrays of one element type, with no other memory access, no call that is not a known
    pure math function (so no barrier, no atomic), no break/continue/return. The vector path
    loads each input once (``const float4 x4 = x_vec[i];``), runs the body once per lane
    with ``A[i]`` replaced by the lane of A's register vector (in a block of its own when
    the body declares locals, so the lanes' locals do not meet) and stores each output
    once (``y_vec[i] = y4;``). The flag tests the alignment of every array. Since every
    input is loaded before any store, an element must not be read after a store to its
    array, nor after a store to another array that may be the same memory (unless
    ``no_alias`` is assumed or both are ``__restrict__`` parameters); an array both read
    and stored (in place) is refused. ``unroll`` must be 1 for these bodies.

    Before::

        for (int i = gid; i < n; i += stride) {
            const float a = x[i];
            out[i] = a * g[i] / (1.f + expf(-a));
        }

    After ``vectorize-stream``::

        if (vec_ok) {
            const float4* x_vec = reinterpret_cast<const float4*>(x);
            const float4* g_vec = reinterpret_cast<const float4*>(g);
            float4* out_vec = reinterpret_cast<float4*>(out);
            const int nv = n >> 2;
            int i = gid;
            for (; i < nv; i += stride) {
                const float4 x4 = x_vec[i];
                const float4 g4 = g_vec[i];
                float4 out4;
                {
                    const float a = x4.x;
                    out4.x = a * g4.x / (1.f + expf(-a));
                }
                ... (lanes y, z, w)
                out_vec[i] = out4;
            }
        } else {
            (the loop)
        }

    Before::

        for (int c = gt; c < cols; c += G) {
            yr[c] = expf(xr[c] - m) * inv;
        }

    After ``vectorize-stream{flag=vec_ok,xv=xv,yv=yv,unroll=2}``::

        if (vec_ok) {
            const float4* xv = reinterpret_cast<const float4*>(xr);
            float4* yv = reinterpret_cast<float4*>(yr);
            const int nv = cols >> 2;
            int c = gt;
            for (; c + (2 - 1) * G < nv; c += 2 * G) {
                float4 t[2];
                for (int u = 0; u < 2; ++u) {
                    t[u] = xv[c + u * G];
                }
                for (int u = 0; u < 2; ++u) {
                    float4 o;
                    o.x = expf(t[u].x - m) * inv;
                    ...
                    yv[c + u * G] = o;
                }
            }
            for (; c < nv; c += G) {
                const float4 t = xv[c];
                float4 o;
                o.x = expf(t.x - m) * inv;
                ...
                yv[c] = o;
            }
        } else {
            for (int c = gt; c < cols; c += G) {
                yr[c] = expf(xr[c] - m) * inv;
            }
        }

    Preconditions: map-loop (layout: ``for (T i = S; i < N; i += STEP)`` or ``for (; i <
    N; i += STEP)`` (i not used after it) with invariant N
    and STEP whose body is one store ``Y[i] = E`` reading only ``X[i]``, or a general body
    as above; ``unroll`` 1 for a general body), whole-range
    (layout: the threads' starts cover each residue of STEP once - ``threadIdx.x`` by
    ``blockDim.x``, the global index by ``blockDim.x * gridDim.x``, ``t % G`` by ``G``,
    ``t & 31`` by 32 - so elements and vectors are both split over all threads), element-type
    (dtype: X and Y point to the same float, int, unsigned or double type), vector-flag
    (hardware: the flag is a const conjunction of ``== 0`` tests of N % W and of the
    16-byte alignment of both parameters, never reassigned; or none is declared and the
    pass can write it), aligned-offset (layout: X and
    Y are a parameter plus a multiple of W or of a tested length), element-wise (storage:
    E is pure, reads no other memory and not Y, and its other names do not change in the
    loop; in a general body every call is pure and nothing but the body's locals changes),
    loads-first (storage: no element is read after a store to its array, or to an array
    that may alias it without ``no_alias`` / ``__restrict__``; no array both read and
    stored), not-vectorized (pipeline: the loop is not already the fallback of a flag
    dispatch), fresh-names (pipeline: the temporaries' names are unused, and the flag's
    name anywhere in the function when the pass declares it).

    Options: ``flag``; ``xv``/``yv``/``nv``/``t``/``o``/``u`` (names of the vector
    pointers, the vector count, the loaded and stored temporaries and the unroll index);
    ``unroll`` (vectors in flight per thread: an integer or a macro name; 1: no main loop);
    ``div`` (``shift`` ``N >> 2`` or ``div`` ``N / 4``); ``const`` (const input pointer);
    ``restrict`` (declare both vector pointers ``__restrict__``: they are views of X and Y,
    which element-wise already keeps apart); ``suffix`` (general bodies: the vector
    pointer of array A is named A + suffix, its register vector A + W).
    """

    name = "vectorize-stream"
    kind = "optimize"
    inverse = "scalarize-stream"
    scope = "device"
    anchor = Rule(any=(Rule(pattern="for ($T $I = $S; $I < $N; $I += $STEP) $BODY;"),
                       Rule(pattern="for (; $I < $N; $I += $STEP) $BODY;")))
    preconditions = (
        Precondition("map-loop", "layout",
                     "the loop is a strided map: Y[i] = E(X[i]), or locals and stores at i", check_map_loop),
        Precondition("whole-range", "layout",
                     "the threads' starts cover every residue of the stride", check_whole_range),
        Precondition("element-type", "dtype",
                     "the arrays have one element type with a 16-byte vector", check_element_type),
        Precondition("vector-flag", "hardware",
                     "the flag tests N % W == 0 and the pointers' alignment", check_vector_flag),
        Precondition("aligned-offset", "layout",
                     "the arrays are whole vectors from their parameters", check_aligned_offset),
        Precondition("element-wise", "storage",
                     "each element depends only on elements at i and invariants", check_element_wise),
        Precondition("loads-first", "storage",
                     "no element is read after a store that may change it", check_loads_first),
        Precondition("not-vectorized", "pipeline",
                     "the loop has no vector path yet", check_not_vectorized),
        Precondition("fresh-names", "pipeline",
                     "the temporaries' names are free", check_fresh_names),
    )

    flag: str = option("vec_ok", Identifier(words=()), "the run-time flag variable")
    xv: str = option("xv", Identifier(words=()), "name of the vector input pointer")
    yv: str = option("yv", Identifier(words=()), "name of the vector output pointer")
    nv: str = option("nv", Identifier(words=()), "name of the vector count")
    t: str = option("t", Identifier(words=()), "name of the loaded temporary")
    o: str = option("o", Identifier(words=()), "name of the stored temporary")
    u: str = option("u", Identifier(words=()), "name of the unroll index")
    unroll: object = option(1, _UNROLL, "vectors in flight per thread (integer or macro)",
                                        tune=True)
    div: str = option("shift", Choice("shift", "div"), "N >> log2(W) or N / W")
    const: bool = option(True, Bool(), "declare the vector input pointer const")
    restrict: bool = option(False, Bool(), "declare both vector pointers __restrict__")
    suffix: str = option("_vec", Choice(*_SUFFIXES), "suffix of the vector pointers' names "
                         "(bodies of locals and stores: x -> x_vec)")

    def rewrite(self, site, ctx):
        f = _find(site)
        unit, ml = site.unit, f.ml
        vt = _vec_type(unit, site.function, ml)
        step = _indent_step(unit, ml.loop)
        ind = line_indent(unit, ml.loop.start_byte)
        vec = _render(unit, ml, vt[0], vt[1], _opts(self), step)
        lines = [f"if ({self.flag}) {{"] + [ind + step + s for s in vec] + \
            [f"{ind}}} else {{", f"{ind}{step}{shift(unit.text(ml.loop), step)}", f"{ind}}}"]
        if _emits_flag(site, f):
            lines.insert(0, emitted_flag(unit, site.function, ml, self.flag) + "\n" + ind)
            lines[0] += lines.pop(1)
        return [Edit.replace(ml.loop, "\n".join(lines))]

    def inverse_for(self, site, ctx):
        return ScalarizeStream(drop_flag=_emits_flag(site, _find(site)))


@dataclass(frozen=True)
class ScalarizeStream(Pass):
    """Drop the 16-byte vector path of a strided element-wise loop, keeping its fallback.

    ``if (flag) { V } else { for (...) Y[i] = E(X[i]); }`` becomes the loop, when V is
    exactly what ``vectorize-stream`` writes for that loop (the pass reads its names,
    unroll count and spellings from V, regenerates it and compares, ignoring comments and
    whitespace). The fallback is correct for every input, and V computes each element
    from the same value, so the result is bit-identical.

    Before::

        if (vec_ok) {
            const float4* xv = reinterpret_cast<const float4*>(xr);
            float4* yv = reinterpret_cast<float4*>(yr);
            const int nv = cols >> 2;
            int c = gt;
            for (; c < nv; c += G) {
                const float4 t = xv[c];
                float4 o;
                o.x = expf(t.x - m) * inv;
                ...
                yv[c] = o;
            }
        } else {
            for (int c = gt; c < cols; c += G) {
                yr[c] = expf(xr[c] - m) * inv;
            }
        }

    After::

        for (int c = gt; c < cols; c += G) {
            yr[c] = expf(xr[c] - m) * inv;
        }

    Preconditions: vector-dispatch (layout: ``if (flag) ... else`` around one strided map
    loop), whole-range, element-type (dtype), vector-flag (hardware), aligned-offset (layout) and
    element-wise and loads-first (storage) as for vectorize-stream (they make the vector
    path valid, so its inverse round-trips), vector-form (pipeline: the then-branch is the regenerated
    vector form).

    With ``drop_flag`` (default true) the flag's declaration goes too when it is exactly
    the one vectorize-stream writes, the statement just before the dispatch, and named
    nowhere else (the inverse of vectorize-stream on a loop without a flag).

    General bodies (locals and several inputs or outputs) are read the same way: the
    suffix of the vector pointers, the count's name and spelling are read from V, the
    per-lane form is regenerated and compared.

    Options: ``drop_flag``; the inverse (``inverse_for``) carries the names, unroll count
    and spellings read from V.
    """

    name = "scalarize-stream"
    kind = "simplify"
    inverse = "vectorize-stream"
    scope = "device"
    anchor = Rule(pattern="if ($F) $A; else $B;", constraints={"F": {"kind": "identifier"}})
    preconditions = (
        Precondition("vector-dispatch", "layout",
                     "if (flag) { ... } else { strided map loop }", check_vector_dispatch),
        Precondition("whole-range", "layout",
                     "the threads' starts cover every residue of the stride", check_whole_range),
        Precondition("element-type", "dtype",
                     "the arrays have one element type with a 16-byte vector", check_element_type),
        Precondition("vector-flag", "hardware",
                     "the flag tests N % W == 0 and the pointers' alignment", check_vector_flag),
        Precondition("aligned-offset", "layout",
                     "the arrays are whole vectors from their parameters", check_aligned_offset),
        Precondition("element-wise", "storage",
                     "each element depends only on elements at i and invariants", check_element_wise),
        Precondition("loads-first", "storage",
                     "no element is read after a store that may change it", check_loads_first),
        Precondition("vector-form", "pipeline",
                     "the then-branch is vectorize-stream of the loop", check_vector_form),
    )

    drop_flag: bool = option(True, Bool(), "also remove the flag's declaration when it is the "
                             "one vectorize-stream writes, just before the dispatch and used by "
                             "nothing else")

    def rewrite(self, site, ctx):
        f = _find(site)
        unit = site.unit
        loop = f.ml.loop
        step = _indent_step(unit, loop)
        d = _dropped_flag(site, f) if self.drop_flag else None
        if d is not None:
            return [Edit(d.start_byte, f.dispatch.end_byte, unshift(unit.text(loop), step))]
        return [Edit.replace(f.dispatch, unshift(unit.text(loop), step))]

    def inverse_for(self, site, ctx):
        f = _find(site)
        o = vector_options(site) or {}
        return VectorizeStream(flag=f.flag, **o)
