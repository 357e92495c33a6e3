"""Vector loads and stores: ``vectorize-access`` (optimize) and ``scalarize-access`` (simplify)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kltrans.analysis.affine import unit_stride
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.pattern import Pattern
from kltrans.passes import Choice, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.match.predicates import pure
from kltrans.passes.guard import (
    GUARD, GUARD_PRECONDITIONS, bound_width as _bound_width, check_global_index,
    check_index_type, check_sole_work, guarded, index_decl, int_width as _int_width)
from kltrans.passes.rewrite import (
    call_parts, contract_of, fresh_numbered as fresh, header_expr, indent_of as line_indent,
    indent_step, int_text, norm, rename, shift, splice, statements, unshift, used_names)

#: element type -> vector type prefix (4-byte elements only)
ELEMENTS = {"float": "float", "int": "int", "unsigned int": "uint", "unsigned": "uint"}
COMPONENTS = "xyzw"
TAIL_VARS = ("k", "e", "kk", "ee")


def _params(site) -> dict:
    return {p.name: p for p in site.function.params if p.name}


def _index_subscripts(unit, body, index: str) -> list:
    """Subscript expressions in ``body`` whose index mentions ``index``."""
    out = []
    for n in unit.walk(body):
        if n.type != "subscript_expression":
            continue
        idx = n.child_by_field_name("indices") or n.child_by_field_name("index")
        if idx is not None and any(m.type == "identifier" and unit.text(m) == index
                                   for m in unit.walk(idx)):
            out.append(n)
    return out


def _plain(unit, sub, index: str) -> str | None:
    """The pointer name when ``sub`` is exactly ``P[index]`` with P an identifier."""
    arg = sub.child_by_field_name("argument")
    idx = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
    inner = [c for c in idx.named_children if c.type != "comment"] if idx is not None else []
    if arg is not None and arg.type == "identifier" and len(inner) == 1 and \
            inner[0].type == "identifier" and unit.text(inner[0]) == index:
        return unit.text(arg)
    return None


@dataclass
class _Access:
    node: object
    read: bool
    write: bool
    top_store: object = None  # the body-level statement `P[i] = e;`


@dataclass
class _Ptr:
    name: str
    elem: str
    accesses: list = field(default_factory=list)
    var: str = ""

    @property
    def written(self) -> bool:
        return any(a.write for a in self.accesses)

    @property
    def loaded(self) -> bool:
        tops = [a.top_store for a in self.accesses if a.top_store is not None]
        if not tops:
            return True  # read, or written on some paths only: keep the other lanes' values
        first = min(tops, key=lambda s: s.start_byte)
        return any(a.read and a.node.start_byte < first.end_byte for a in self.accesses)


def _pointers(site) -> list[_Ptr]:
    """The pointers accessed as ``P[i]`` in the body, in order of first access."""
    unit = site.unit
    g = guarded(site)
    params = _params(site)
    top_level = {s.id for s in statements(g.body)}
    out: dict[str, _Ptr] = {}
    for sub in _index_subscripts(unit, g.body, g.index):
        p = _plain(unit, sub, g.index)
        if p is None:
            continue
        par = params.get(p)
        ptr = out.setdefault(p, _Ptr(p, par.base_type if par is not None else "?"))
        parent = sub.parent
        acc = _Access(sub, True, False)
        if parent.type == "assignment_expression" and \
                parent.child_by_field_name("left").id == sub.id:
            op = site.unit.text(parent.child_by_field_name("operator"))
            acc = _Access(sub, op != "=", True)
            st = parent.parent
            if op == "=" and st is not None and st.type == "expression_statement" and \
                    st.id in top_level:
                acc.top_store = st
        elif parent.type == "update_expression":
            acc = _Access(sub, True, True)
        ptr.accesses.append(acc)
    return list(out.values())


def _aligned(ctx, name: str, nbytes: int) -> bool:
    for f in ctx.assumptions:
        if f.name == "aligned" and len(f.args) == 2 and f.args[0] in (name, "*"):
            k = int_text(f.args[1])
            if k is not None and k % nbytes == 0:
                return True
    return False


# ------------------------------------------------- the element guard of a coarsened loop
def _coarsened(site, ctx):
    """The site of ``uncoarsen`` (every precondition holding) whose element guard is this
    site's guard, when the guard is ``coarsen``'s ``if (j < n)`` inside ``for (c ...) {
    T j = i + c * blockDim.x; if (j < n) ...}``; else None. Then j takes every value of
    [0, F * grid * block) exactly once, one per (thread, c), consecutive threads on
    consecutive j: the same facts as a plain global index, one level down."""
    from kltrans.passes.registry import get_pass

    g = guarded(site)
    body = g.stmt.parent
    loop = body.parent if body is not None and body.type == "compound_statement" else None
    if loop is None or loop.type != "for_statement":
        return None
    inv = get_pass("uncoarsen")()
    for s in inv.sites(site.unit, ctx):
        if s.node.id == loop.id and s.text("J") == g.index:
            return s if all(v.holds for _, v in inv.check(s, ctx)) else None
    return None


def _step(unit, stmt) -> str:
    """One level of indentation: that of the kernel-body statement holding ``stmt``."""
    top = stmt
    while top.parent is not None and top.parent.parent is not None and \
            top.parent.parent.type != "function_definition":
        top = top.parent
    return indent_step(unit, top)


def _elem_decl(site, ctx):
    """(declaration, type text) of the guard's index: a kernel-body statement, or ``T j =
    ...;`` at the top of a coarsened loop; else (None, why)."""
    g = guarded(site)
    d = index_decl(site.unit, site.function, g.index)
    if not isinstance(d, str):
        return d.decl, d.type_text
    cs = _coarsened(site, ctx)
    if cs is None:
        return None, d
    decl = statements(cs.node.child_by_field_name("body"))[0]
    return decl, norm(site.unit.text(decl.child_by_field_name("type")))


def _or_coarsened(check, what: str):
    def run(site, ctx) -> Verdict:
        v = check(site, ctx)
        if v.holds:
            return v
        cs = _coarsened(site, ctx)
        if cs is None:
            return v
        return Verdict.yes(what.format(j=guarded(site).index, i=cs.text("I"), f=cs.text("F")))
    return run


def _coarsened_sole_work(site, ctx) -> Verdict:
    v = check_sole_work(site, ctx)
    if v.holds:
        return v
    cs = _coarsened(site, ctx)
    if cs is None:
        return v
    unit, fn = site.unit, site.function
    loop = cs.node
    if loop.parent is None or loop.parent.id != fn.body.id:
        return Verdict.no(f"the coarsened loop is nested in a {loop.parent.type}: it must be a "
                          f"statement of {fn.name}'s body")
    for s in statements(fn.body):
        if s.id == loop.id:
            continue
        if s.type != "declaration" or not pure(unit, s):
            return Verdict.no(f"line {unit.line_col(s.start_byte)[0]}: `{norm(unit.text(s))[:60]}` "
                              "runs outside the coarsened loop")
    return Verdict.yes(f"{fn.name} runs the coarsened loop over {guarded(site).index}, nothing "
                       "else")


def _coarsened_index_type(site, ctx) -> Verdict:
    v = check_index_type(site, ctx)
    if v.holds:
        return v
    cs = _coarsened(site, ctx)
    if cs is None:
        return v
    g = guarded(site)
    _, ty = _elem_decl(site, ctx)
    n = norm(site.unit.text(g.bound))
    wi, (wn, tn) = _int_width(ty), _bound_width(site, g.bound)
    if wi is None or wi < wn:
        return Verdict.no(f"{g.index} is {ty}, narrower than the bound {n} ({tn}) or not an "
                          "integer type the pass knows")
    return Verdict.yes(f"{g.index} is {ty}, as wide as the bound {n} ({tn})")


_COARSENED_OK = {
    "global-index": _or_coarsened(check_global_index,
                                  "{j} = {i} + c * blockDim.x is the element index of a "
                                  "{f}-way coarsened loop (each element once)"),
    "sole-work": _coarsened_sole_work,
    "index-type": _coarsened_index_type,
}
GUARD_OR_COARSENED = tuple(
    Precondition(p.name, p.category, p.doc + " (or the element guard of a coarsened loop)",
                 _COARSENED_OK[p.name]) if p.name in _COARSENED_OK else p
    for p in GUARD_PRECONDITIONS)


# ------------------------------------------------------------------ preconditions
def _element_type(site, ctx) -> Verdict:
    w = site.pass_.width
    ptrs = _pointers(site)
    if not ptrs:
        return Verdict.no(f"the body accesses no pointer at {guarded(site).index}")
    params = _params(site)
    for p in ptrs:
        par = params.get(p.name)
        if par is None or par.pointer != 1:
            continue  # plain-index says why
        if p.elem not in ELEMENTS:
            return Verdict.no(f"{p.name} points to {p.elem}: vectorize-access handles 4-byte "
                              f"float and int elements ({w} of them make a "
                              f"{w * 4}-byte vector)")
    return Verdict.yes(", ".join(f"{p.name}: {p.elem} -> {ELEMENTS.get(p.elem, '?')}{w}"
                                 for p in ptrs))


def _element_wise(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    g = guarded(site)
    shared = {d.name for d in unit.shared_decls() if d.function == fn.name}
    for n in unit.walk(g.body):
        line = unit.line_col(n.start_byte)[0]
        if n.type == "identifier" and unit.text(n) in shared:
            return Verdict.no(f"the body uses shared memory {unit.text(n)} (line {line}): "
                              "threads exchange data, the body is not element-wise")
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            name = unit.text(f) if f is not None else ""
            if re.match(r"^(::)?(atomic|__atomic|__nv_atomic)", name):
                return Verdict.no(f"the body calls {name} (line {line}): an atomic is a "
                                  "cross-thread dependence")
    return Verdict.yes("no shared memory, barrier or atomic in the body")


def _unit_stride(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    g = guarded(site)
    subs = _index_subscripts(unit, g.body, g.index)
    for s in subs:
        v = unit_stride(unit, s, "threadIdx.x", fn)
        if not v.holds:
            return v
    return Verdict.yes(f"{len(subs)} access(es) at stride 1 in threadIdx.x")


def _plain_index(site, ctx) -> Verdict:
    unit = site.unit
    g = guarded(site)
    i = g.index
    params = _params(site)
    written = {p.name for p in _pointers(site) if p.written}
    for n in unit.walk(g.body):
        line = unit.line_col(n.start_byte)[0]
        if n.type == "identifier" and unit.text(n) == i:
            sub = n.parent.parent if n.parent is not None else None
            if sub is None or sub.type != "subscript_expression" or _plain(unit, sub, i) is None:
                ctx_text = norm(unit.text(n.parent))[:40]
                return Verdict.no(f"{i} is used as a value (`{ctx_text}`, line {line}), not only "
                                  f"as the index of P[{i}]: a thread now holds {i} for several "
                                  "elements")
            p = _plain(unit, sub, i)
            par = params.get(p)
            if par is None or par.pointer != 1 or par.array:
                return Verdict.no(f"{p}[{i}] (line {line}): {p} is not a pointer parameter of "
                                  f"{site.function.name}, so nothing can be said of its alignment")
            up = sub.parent
            if up is not None and up.type == "pointer_expression" and \
                    unit.text(up.child_by_field_name("operator")) == "&":
                return Verdict.no(f"the address &{p}[{i}] is taken (line {line}): a vector lane "
                                  "has no address in memory")
        if n.type == "identifier" and unit.text(n) in written:
            sub = n.parent
            if sub is None or sub.type != "subscript_expression" or \
                    _plain(unit, sub, i) != unit.text(n):
                return Verdict.no(f"{unit.text(n)} is written at {i} and also used as "
                                  f"`{norm(unit.text(sub or n))[:40]}` (line {line}): the vector "
                                  "store would overwrite or miss it")
    return Verdict.yes(f"every use of {i} is an access P[{i}] to a pointer parameter")


def _alignment(site, ctx) -> Verdict:
    w = site.pass_.width
    nbytes = 4 * w
    missing = [p.name for p in _pointers(site) if not _aligned(ctx, p.name, nbytes)]
    if missing:
        p = missing[0]
        return Verdict.unknown(f"{p} must be {nbytes}-byte aligned for a {nbytes}-byte vector "
                               f"access; alignment is a property of the allocation: pass "
                               f"--assume aligned({p},{nbytes}) or --assume 'aligned(*,{nbytes})'")
    return Verdict.yes(f"{', '.join(p.name for p in _pointers(site))} {nbytes}-byte aligned "
                       "(assumed)")


def _remainder(site, ctx) -> Verdict:
    p = site.pass_
    w = p.width
    n = norm(site.unit.text(guarded(site).bound))
    if p.tail == "emit":
        return Verdict.yes(f"guarded: a scalar tail loop handles the last {n} % {w} elements")
    if ctx.divisible(n, w):
        return Verdict.yes(f"{n} % {w} == 0 (assumed): no tail")
    return Verdict.unknown(f"tail=assume needs {n} % {w} == 0, which is not known: pass "
                           f"--assume '{n}%{w}==0', or use tail=emit")


@dataclass(frozen=True)
class VectorizeAccess(Pass):
    """Vectorize an element-wise kernel: each thread loads and stores ``width`` elements.

    Before::

        // kltrans: launch scale grid=ceil_div(n, 256) block=256
        __global__ void scale(const float* x, float* y, float a, float b, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) y[i] = a * x[i] + b;
        }

    After ``vectorize-access{width=4}`` (with ``--assume 'aligned(*,16)'``)::

        // kltrans: launch scale grid=ceil_div(ceil_div(n, 4), 256) block=256
        __global__ void scale(const float* x, float* y, float a, float b, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (4 * i + 3 < n) {
            const float4 x4 = reinterpret_cast<const float4*>(x)[i];
            float4 y4;
            y4.x = a * x4.x + b;
            y4.y = a * x4.y + b;
            y4.z = a * x4.z + b;
            y4.w = a * x4.w + b;
            reinterpret_cast<float4*>(y)[i] = y4;
          } else {
            for (int k = 4 * i; k < n; ++k) y[k] = a * x[k] + b;
          }
        }

    Thread ``i`` now handles elements ``4i .. 4i+3``: each pointer read at ``i`` is loaded
    once as a vector (``const`` when it is never written), the body is copied once per
    lane with ``x[i]`` read as ``x4.x``, ``x4.y``, ..., and each pointer written at ``i``
    is stored once as a vector. A pointer written only on some paths (or read before it
    is written) is loaded first, so the lanes the body does not write keep their values.
    The grid of the launch header is divided by ``width``.

    Runtime facts. From the context (never checked at run time): the alignment of every
    pointer (``--assume 'aligned(*,16)'`` or ``aligned(x,16)`` per pointer; 8 bytes for
    width 2) and, with ``tail=assume``, the divisibility of the bound
    (``--assume 'n%4==0'``). Guarded in the code: with ``tail=emit`` (the default), the
    last ``n % width`` elements are handled by the scalar loop in the ``else`` branch,
    so any ``n`` is correct.

    Preconditions: those of ``grid-stride`` — bound-check (pipeline), global-index
    (layout: ``i`` is the plain global index), sole-work (pipeline), element-private
    (layout), no-early-exit (pipeline), no-barrier (pipeline), index-type (dtype),
    launch-contract (hardware: a 1-D launch header to rewrite) — plus element-type
    (dtype: every pointer accessed at ``i`` points to 4-byte float, int or unsigned int),
    element-wise (pipeline: no shared memory and no atomics in the body), unit-stride
    (layout: every access indexed by ``i`` moves by one element per thread), plain-index
    (layout: ``i`` is used only as ``P[i]`` with P a pointer parameter, never as a value
    or an address; a written pointer is accessed only at ``i``), aligned (storage:
    alignment facts from the context), remainder (layout: ``tail=emit``, or
    ``tail=assume`` with the divisibility fact).

    The element guard of a coarsened loop (``coarsen``'s output ``for (int c = 0; c < F;
    ++c) { T j = i + c * blockDim.x; if (j < n) BODY }``, where ``uncoarsen`` would hold)
    is accepted too: j then takes every value below F * grid * block once, consecutive
    threads on consecutive j, so global-index, sole-work (the coarsened loop is the
    kernel's only work) and index-type (j's type) hold for it as for a plain index, and
    the grid is divided by ``width`` once more.

    Options: ``width`` (2 or 4; default 4: ``float4``/``int4``/``uint4``, 2:
    ``float2``/...), ``tail`` (``emit``: a guarded scalar tail, or ``assume``: no tail,
    ``n % width == 0`` from the context; default ``emit``).
    """

    name = "vectorize-access"
    kind = "optimize"
    inverse = "scalarize-access"
    anchor = GUARD
    preconditions = GUARD_OR_COARSENED + (
        Precondition("element-type", "dtype",
                     "every pointer accessed at i points to 4-byte float, int or unsigned int",
                     _element_type),
        Precondition("element-wise", "pipeline",
                     "the body has no cross-thread dependence (no shared memory, no atomics)",
                     _element_wise),
        Precondition("unit-stride", "layout",
                     "every access indexed by i has stride 1 in threadIdx.x", _unit_stride),
        Precondition("plain-index", "layout",
                     "i is used only as P[i] with P a pointer parameter (not as a value or an "
                     "address)", _plain_index),
        Precondition("aligned", "storage",
                     "every accessed pointer is aligned to the vector size (from the context)",
                     _alignment),
        Precondition("remainder", "layout",
                     "the last n % width elements are handled: an emitted tail, or n % width "
                     "== 0 from the context", _remainder),
    )

    width: int = option(4, Choice(4, 2), "elements per vector access (float4 or float2)", tune=True)
    tail: str = option("emit", Choice("emit", "assume"),
                       "emit: a scalar tail for the last n % width elements; assume: none "
                       "(n % width == 0 from the context)", tune=True)

    def rewrite(self, site, ctx):
        unit, fn = site.unit, site.function
        g = guarded(site)
        _, itype = _elem_decl(site, ctx)
        w, i, n = self.width, g.index, unit.text(g.bound)
        ptrs = sorted(_pointers(site), key=lambda p: not p.loaded)  # loads first
        used = used_names(unit, fn)
        taken: set = set()
        for p in ptrs:
            for cand in (f"{p.name}{w}", f"{p.name}_v{w}"):
                if cand not in used and cand not in taken:
                    break
            else:
                k = 0
                while f"{p.name}_v{w}_{k}" in used | taken:
                    k += 1
                cand = f"{p.name}_v{w}_{k}"
            p.var = cand
            taken.add(cand)
        ind = line_indent(unit, g.stmt.start_byte)
        st = _step(unit, g.stmt)
        inner = ind + st
        lines = [f"if ({w} * {i} + {w - 1} < {n}) {{"]
        for p in ptrs:
            vt = f"{ELEMENTS[p.elem]}{w}"
            load = f" = reinterpret_cast<const {vt}*>({p.name})[{i}]"
            if p.loaded and not p.written:
                lines.append(f"{inner}const {vt} {p.var}{load};")
            elif p.loaded:
                lines.append(f"{inner}{vt} {p.var}{load};")
            else:
                lines.append(f"{inner}{vt} {p.var};")
        for c in COMPONENTS[:w]:
            reps = [(a.node.start_byte, a.node.end_byte, f"{p.var}.{c}")
                    for p in ptrs for a in p.accesses]
            lines.append(inner + shift(splice(unit, g.body, reps), st))
        for p in ptrs:
            if p.written:
                vt = f"{ELEMENTS[p.elem]}{w}"
                lines.append(f"{inner}reinterpret_cast<{vt}*>({p.name})[{i}] = {p.var};")
        if self.tail == "emit":
            k = fresh(unit, fn, TAIL_VARS, taken)
            body = shift(rename(unit, g.body, i, k), st)
            lines.append(f"{ind}}} else {{")
            lines.append(f"{inner}for ({itype} {k} = {w} * {i}; {k} < {n}; ++{k}) {body}")
        lines.append(f"{ind}}}")
        return [Edit(g.stmt.start_byte, g.stmt.end_byte, "\n".join(lines))]

    def update_contract(self, contract, site, ctx):
        g = contract.grid[0]
        n = norm(site.unit.text(guarded(site).bound))
        got = call_parts(g)
        if got is not None and len(got[1]) == 2 and norm(got[1][0]) == n:
            f, (x, b) = got
            return contract.with_(grid=(f"{f}({f}({x}, {self.width}), {b})",))
        f = "CEIL_DIV" if "CEIL_DIV(" in g else "ceil_div"
        return contract.with_(grid=(f"{f}({g}, {self.width})",))

    def inverse_for(self, site, ctx):
        return ScalarizeAccess()


# ------------------------------------------------------------------------ inverse
VECTORIZED = Rule(any=(Rule(pattern="if ($W * $I + $M < $N) $VEC; else $TAIL;"),
                       Rule(pattern="if ($W * $I + $M < $N) $VEC;")),
                  inside_kernel=True,
                  constraints={"W": {"predicate": "int-literal"}, "M": {"predicate": "int-literal"},
                               "I": {"kind": "identifier"}})
_TAIL = Pattern.compile("for ($T $K = $W * $I; $K < $N; ++$K) $BODY;")
_VT = r"(float|int|uint)([24])"
_DECL = re.compile(rf"^(const )?{_VT} (\w+)"
                   rf"(?: = reinterpret_cast<const {_VT} ?\*>\((\w+)\)\[(\w+)\])?;$")
_STORE = re.compile(rf"^reinterpret_cast<{_VT} ?\*>\((\w+)\)\[(\w+)\] = (\w+);$")


@dataclass
class _VForm:
    width: int
    index: str
    bound: str
    vars: dict  # var -> (pointer, vector type)
    lanes: list
    tail: object = None  # the tail loop's body
    tail_var: str | None = None


def _vector_form(site) -> "_VForm | str":
    unit = site.unit
    b = site.match.bindings
    w, m = int_text(site.text("W")), int_text(site.text("M"))
    i, n = site.text("I"), norm(site.text("N"))
    if w not in (2, 4) or m != w - 1:
        return f"the guard `{w} * {i} + {m} < {n}` is not that of a width-2 or width-4 vector"
    vec = b["VEC"]
    if vec.type != "compound_statement":
        return "the vector branch is not a block"
    stmts = statements(vec)
    loads: dict = {}
    decl_types: dict = {}
    k = 0
    while k < len(stmts) and stmts[k].type == "declaration":
        text = norm(unit.text(stmts[k]))
        mm = _DECL.match(text)
        if mm is None:
            return f"`{text}` is not a vector load or declaration"
        vt = mm.group(2) + mm.group(3)
        var = mm.group(4)
        decl_types[var] = vt
        if mm.group(7) is not None:
            if mm.group(5) + mm.group(6) != vt or mm.group(8) != i:
                return f"`{text}` does not load a {vt} at {i}"
            loads[var] = mm.group(7)
        k += 1
    stores: dict = {}
    e = len(stmts)
    while e > k and stmts[e - 1].type == "expression_statement":
        text = norm(unit.text(stmts[e - 1]))
        mm = _STORE.match(text)
        if mm is None:
            break
        vt, ptr, at, var = mm.group(1) + mm.group(2), mm.group(3), mm.group(4), mm.group(5)
        if at != i or decl_types.get(var) != vt:
            return f"`{text}` does not store a declared {vt} at {i}"
        stores[var] = ptr
        e -= 1
    lanes = stmts[k:e]
    if len(lanes) != w:
        return f"{len(lanes)} statements between the vector loads and stores, not {w} lanes"
    if not decl_types:
        return "no vector loads or stores"
    vars_ = {}
    for var, vt in decl_types.items():
        ptr = loads.get(var) or stores.get(var)
        if ptr is None:
            return f"{var} is neither loaded nor stored"
        if var in loads and var in stores and loads[var] != stores[var]:
            return (f"{var} is loaded from {loads[var]} but stored to {stores[var]}: the lanes "
                    "do not say which pointer each value belongs to")
        vars_[var] = (ptr, vt)
    ptrs = [p for p, _ in vars_.values()]
    if len(set(ptrs)) != len(ptrs):
        return "two vectors for the same pointer"
    form = _VForm(w, i, n, vars_, lanes)
    tail = b.get("TAIL")
    if tail is not None:
        tstmts = statements(tail)
        got = _TAIL.match(unit, tstmts[0]) if len(tstmts) == 1 else None
        if got is None or int_text(unit.text(got["W"])) != w or unit.text(got["I"]) != i or \
                norm(unit.text(got["N"])) != n:
            return (f"the else branch is not the scalar tail `for (k = {w} * {i}; k < {n}; ++k) "
                    "...`")
        form.tail, form.tail_var = got["BODY"], unit.text(got["K"])
    return form


def _lane(unit, form: _VForm, lane, comp: str) -> "str | None":
    """The lane's statement with ``x4.<comp>`` read back as ``x[i]`` (None: not a lane)."""
    reps = []
    for n in unit.walk(lane):
        if n.type == "identifier" and unit.text(n) in form.vars:
            f = n.parent
            if f is None or f.type != "field_expression" or \
                    f.child_by_field_name("argument").id != n.id or \
                    unit.text(f.child_by_field_name("field")) != comp or \
                    unit.text(f.child_by_field_name("operator")) != ".":
                return None
            reps.append((f.start_byte, f.end_byte, f"{form.vars[unit.text(n)][0]}[{form.index}]"))
    return splice(unit, lane, reps)


def _vector_form_check(site, ctx) -> Verdict:
    form = _vector_form(site)
    if isinstance(form, str):
        return Verdict.no(form)
    if _lane(site.unit, form, form.lanes[0], "x") is None:
        return Verdict.no("the first lane uses a vector other than as its .x component")
    return Verdict.yes(f"width-{form.width} vector access of "
                       f"{', '.join(p for p, _ in form.vars.values())}"
                       + (" with a scalar tail" if form.tail is not None else ""))


def _vector_type(site, ctx) -> Verdict:
    form = _vector_form(site)
    if isinstance(form, str):
        return Verdict.unknown(form)
    params = _params(site)
    for var, (ptr, vt) in form.vars.items():
        par = params.get(ptr)
        if par is None or par.pointer != 1:
            return Verdict.no(f"{ptr} is not a pointer parameter of {site.function.name}")
        want = ELEMENTS.get(par.base_type)
        if want is None or f"{want}{form.width}" != vt:
            return Verdict.no(f"{ptr} points to {par.base_type} but is accessed as {vt}: the "
                              "lanes are not its elements")
    return Verdict.yes("each vector type is its pointer's element type times "
                       f"{form.width}")


def _lanes_agree(site, ctx) -> Verdict:
    unit = site.unit
    form = _vector_form(site)
    if isinstance(form, str):
        return Verdict.unknown(form)
    first = _lane(unit, form, form.lanes[0], "x")
    if first is None:
        return Verdict.unknown("the first lane is not a lane")
    for c, lane in zip(COMPONENTS[1:], form.lanes[1:]):
        got = _lane(unit, form, lane, c)
        if got is None or norm(got) != norm(first):
            return Verdict.no(f"lane .{c} (line {unit.line_col(lane.start_byte)[0]}) is not lane "
                              f".x with .{c} for .x: the lanes compute different things")
    if form.tail is not None:
        tail = rename(unit, form.tail, form.tail_var, form.index)
        if norm(tail) != norm(first):
            return Verdict.no(f"the scalar tail (line {unit.line_col(form.tail.start_byte)[0]}) "
                              "does not compute what the lanes compute")
    return Verdict.yes(f"{form.width} lanes" + (" and the tail" if form.tail is not None else "")
                       + " compute the same body")


def _scalar_grid(site, grid: str) -> str | None:
    w = int_text(site.text("W"))
    got = call_parts(grid)
    if got is None or len(got[1]) != 2:
        return None
    f, (a, b) = got
    inner = call_parts(a)
    if inner is not None and len(inner[1]) == 2 and int_text(inner[1][1]) == w:
        return f"{f}({inner[1][0]}, {b})"
    if int_text(b) == w:
        return header_expr(a)
    return None


def _contract_shape(site, ctx) -> Verdict:
    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    g = _scalar_grid(site, c.grid[0])
    if g is None:
        w = site.text("W")
        return Verdict.no(f"grid={c.grid[0]} is neither ceil_div(ceil_div(n, {w}), B) nor "
                          f"ceil_div(G, {w}): cannot tell the grid of one element per thread")
    return Verdict.yes(f"grid={c.grid[0]}: restored to {g}")


@dataclass(frozen=True)
class ScalarizeAccess(Pass):
    """Scalarize vector loads and stores: one element per thread again.

    Before::

        // kltrans: launch scale grid=ceil_div(ceil_div(n, 4), 256) block=256
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (4 * i + 3 < n) {
          const float4 x4 = reinterpret_cast<const float4*>(x)[i];
          float4 y4;
          y4.x = a * x4.x + b;
          y4.y = a * x4.y + b;
          y4.z = a * x4.z + b;
          y4.w = a * x4.w + b;
          reinterpret_cast<float4*>(y)[i] = y4;
        } else {
          for (int k = 4 * i; k < n; ++k) y[k] = a * x[k] + b;
        }

    After ``scalarize-access``::

        // kltrans: launch scale grid=ceil_div(n, 256) block=256
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i] + b;

    The scalar body is the ``.x`` lane with every ``x4.x`` read back as ``x[i]``. It
    recognizes the form ``vectorize-access`` writes (vector loads, one statement per
    lane, vector stores, an optional scalar tail); a hand-written kernel that reuses one
    vector for a load from ``x`` and a store to ``y`` is refused.

    Preconditions: vector-form (layout: the guard ``W * i + W-1 < n`` with W 2 or 4,
    vector loads, W lanes, vector stores, each vector tied to one pointer), vector-type
    (dtype: each vector type is its pointer's element type times W), lanes-agree
    (pipeline: every lane, and the tail, computes the same body), contract-shape
    (hardware: the launch header's grid is ``ceil_div(ceil_div(n, W), B)`` or
    ``ceil_div(G, W)``).

    Options: none (the width and the tail are read from the code).
    """

    name = "scalarize-access"
    kind = "simplify"
    inverse = "vectorize-access"
    anchor = VECTORIZED
    preconditions = (
        Precondition("vector-form", "layout",
                     "vector loads, one statement per lane and vector stores, as "
                     "vectorize-access writes them", _vector_form_check),
        Precondition("vector-type", "dtype",
                     "each vector type is its pointer's 4-byte element type times the width",
                     _vector_type),
        Precondition("lanes-agree", "pipeline",
                     "every lane (and the scalar tail) computes the same body", _lanes_agree),
        Precondition("contract-shape", "hardware",
                     "the launch header's grid is divided by the width", _contract_shape),
    )

    def rewrite(self, site, ctx):
        unit = site.unit
        form = _vector_form(site)
        st = _step(unit, site.node)
        body = unshift(_lane(unit, form, form.lanes[0], "x"), st)
        return [Edit(site.node.start_byte, site.node.end_byte,
                     f"if ({form.index} < {site.text('N')}) {body}")]

    def update_contract(self, contract, site, ctx):
        g = _scalar_grid(site, contract.grid[0])
        return contract if g is None else contract.with_(grid=(g,))

    def inverse_for(self, site, ctx):
        form = _vector_form(site)
        w = form.width if not isinstance(form, str) else 4
        tail = "emit" if isinstance(form, str) or form.tail is not None else "assume"
        return VectorizeAccess(width=w, tail=tail)
