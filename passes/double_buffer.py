"""Shared-memory double buffering: ``double-buffer`` (optimize) and ``single-buffer`` (simplify).

The optimize pass turns the classic tiled loop (load a tile into shared memory, barrier,
compute on it, barrier) into a software pipeline with 2 (or 3) stages: the loads of the
next tile are issued by a load function before the computation of the current one, and one
barrier per iteration is enough. The simplify pass undoes exactly that shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.affine import affine_of, thread_dependent
from kltrans.analysis.barriers import barriers
from kltrans.analysis.smem import shared_footprint, type_size
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.pattern import tokens
from kltrans.passes import Choice, Identifier, Pass, Precondition, option
from kltrans.syntax import Edit, parse
from kltrans.analysis.affine import strip_parens as _strip
from kltrans.passes.rewrite import (
    fresh_numbered as fresh, indent_of as line_indent, norm, statements)

#: static shared memory a block may declare without the dynamic opt-in (every arch)
STATIC_SMEM_LIMIT = 48 * 1024
STAGES = (2, 3)
LOADERS = ("load_tile", "load_stage", "prefetch_tile")
STAGE_PARAMS = ("stage", "buf", "slot")
_LOOPS = ("for_statement", "while_statement", "do_statement", "for_range_loop")
#: calls allowed in the load and compute phases (no memory side effects)
PURE_CALLS = frozenset("""
min max umin umax fminf fmaxf fmin fmax fabsf fabs abs sqrtf rsqrtf sqrt expf exp __expf
exp2f logf log __logf fmaf fma __fmaf_rn __fmul_rn __fadd_rn __fdividef tanhf sinf cosf
__ldg __ldca __ldcg __ldcs __ldlu __ldcv static_cast reinterpret_cast const_cast
__float2half __half2float __float2bfloat16 __bfloat162float __hmul __hadd __hfma
__shfl_sync __shfl_xor_sync __shfl_down_sync __shfl_up_sync make_float2 make_float4
make_int2 make_int4 floorf ceilf roundf truncf
""".split())
_ZERO_INIT_TYPES = ("declaration", "expression_statement", "if_statement", "for_statement",
                    "preproc_call",
                    "compound_statement")


# ----------------------------------------------------------------- tree helpers
def _root(node):
    """The array/pointer identifier at the root of a subscript chain, or None."""
    while node is not None and node.type == "subscript_expression":
        node = _strip(node.child_by_field_name("argument"))
    return node if node is not None and node.type == "identifier" else None


def _call_name(unit, call) -> str:
    f = call.child_by_field_name("function")
    if f is None:
        return ""
    if f.type == "template_function":
        f = f.child_by_field_name("name")
    return unit.text(f).split("::")[-1] if f is not None else ""


_TYPES = {"float", "double", "int", "unsigned", "half", "__half", "__nv_bfloat16", "size_t",
          "float2", "float4", "int2", "int4", "long", "char", "short", "bool"}


def _pure_call(unit, fn, call) -> bool:
    """A call without memory side effects: known math/casts, or a functional cast T(x)."""
    name = _call_name(unit, call)
    if name in PURE_CALLS or name in _TYPES:
        return True
    return fn is not None and any(t.kind == "type" and t.name == name
                                  for t in fn.template_params)


def _is_barrier_stmt(unit, stmt) -> bool:
    return stmt is not None and stmt.type == "expression_statement" and \
        norm(unit.text(stmt)) in ("__syncthreads();", "__syncthreads ();")


def _splice(unit, start: int, end: int, reps) -> str:
    """``source[start:end]`` with (s, e, text) replacements inside it."""
    out, pos = [], start
    for s, e, text in sorted(reps):
        out.append(unit.source[pos:s].decode("utf-8", "replace"))
        out.append(text)
        pos = e
    out.append(unit.source[pos:end].decode("utf-8", "replace"))
    return "".join(out)


def _idents(unit, node, names):
    return [n for n in unit.walk(node) if n.type == "identifier" and unit.text(n) in names]


def _written(unit, node) -> list:
    """(lhs node, statement) of every assignment / increment inside ``node``."""
    out = []
    for n in unit.walk(node):
        if n.type == "assignment_expression":
            out.append(n.child_by_field_name("left"))
        elif n.type == "update_expression":
            out.append(n.child_by_field_name("argument"))
    return out


def _declared(unit, node) -> set:
    out = set()
    for n in unit.walk(node):
        if n.type == "declaration":
            for d in n.children_by_field_name("declarator"):
                x = d
                while x is not None and x.type not in ("identifier",):
                    x = x.child_by_field_name("declarator")
                if x is not None:
                    out.add(unit.text(x))
    return out


def _static_shared(unit, fn) -> dict:
    """name -> SharedDecl of the static ``__shared__`` arrays declared in ``fn``'s body."""
    body = fn.body
    out = {}
    for d in unit.shared_decls():
        if body is not None and body.start_byte <= d.node.start_byte < body.end_byte:
            out[d.name] = d
    return out


def _decl_ident(unit, decl_node, name):
    for d in decl_node.children_by_field_name("declarator"):
        x = d
        while x is not None and x.type != "identifier":
            x = x.child_by_field_name("declarator")
        if x is not None and unit.text(x) == name:
            return x
    return None


def _paren(unit, node, loose=False) -> str:
    """The node's text, parenthesized unless it is atomic (or, with ``loose``, unless it
    binds tighter than ``<``)."""
    text = unit.text(node)
    n = node
    if n.type in ("identifier", "number_literal", "parenthesized_expression", "call_expression",
                  "field_expression", "subscript_expression", "qualified_identifier"):
        return text
    if loose and n.type == "binary_expression" and \
            unit.text(n.child_by_field_name("operator")) in ("+", "-", "*", "/", "%", "<<", ">>"):
        return text
    return f"({text})"


# -------------------------------------------------------------------- the loop
@dataclass
class TiledLoop:
    loop: object
    kind: str  # "for" | "while"
    var: str
    var_type: str
    bound: object  # node
    step: str  # "1" or the step's text
    step_node: object
    body: object
    loads: list
    barrier1: object
    compute: list
    barrier2: object
    incr: object  # the while loop's increment statement (None for for)
    tiles: dict  # name -> SharedDecl
    stores: list  # lhs subscript nodes written in the load phase

    @property
    def load_start(self):
        return self.loads[0].start_byte

    @property
    def load_end(self):
        return self.loads[-1].end_byte


def _var_decl(unit, fn, name, before):
    """The declaration of local ``name`` in ``fn`` before byte ``before`` (type, node)."""
    best = None
    for n in unit.walk(fn.body):
        if n.type != "declaration" or n.start_byte >= before:
            continue
        if _decl_ident(unit, n, name) is not None:
            best = n
    if best is None:
        for p in fn.params:
            if p.name == name:
                return p.type, None
        return None, None
    return norm(unit.text(best.child_by_field_name("type"))), best


def _step_of(unit, upd, var):
    """The additive step of ``upd`` on ``var``: (text, node) or (None, why)."""
    u = _strip(upd)
    if u.type == "update_expression":
        arg = u.child_by_field_name("argument")
        op = unit.text(u.child_by_field_name("operator"))
        if arg is not None and unit.text(arg) == var and op == "++":
            return "1", None
        return None, f"`{norm(unit.text(u))}` does not count {var} up by one"
    if u.type == "assignment_expression":
        left = u.child_by_field_name("left")
        op = unit.text(u.child_by_field_name("operator"))
        right = _strip(u.child_by_field_name("right"))
        if left is None or unit.text(left) != var:
            return None, f"`{norm(unit.text(u))}` does not update {var}"
        if op == "+=":
            return unit.text(right), right
        if op == "=" and right.type == "binary_expression" and \
                unit.text(right.child_by_field_name("operator")) == "+" and \
                unit.text(right.child_by_field_name("left")) == var:
            r = right.child_by_field_name("right")
            return unit.text(r), r
    return None, f"`{norm(unit.text(u))}` is not an additive step of {var}"


def _pure(unit, node) -> str | None:
    """None when ``node`` has no side effects, else what it does."""
    for n in unit.walk(node):
        if n.type in ("assignment_expression", "update_expression"):
            return f"`{norm(unit.text(n))}` writes"
        if n.type == "call_expression" and _call_name(unit, n) not in PURE_CALLS:
            return f"`{norm(unit.text(n))}` is a call"
    return None


def _shape(unit, fn, loop):
    """(TiledLoop, None) or (None, (precondition, why)) for the loop/phase shape."""
    kind = "for" if loop.type == "for_statement" else "while" if loop.type == "while_statement" \
        else None
    if kind is None:
        return None, ("loop-shape", f"a {loop.type} is not a counted for/while loop")
    body = loop.child_by_field_name("body")
    if body is None or body.type != "compound_statement":
        return None, ("loop-shape", "the loop body is not a block")
    stmts = statements(body)
    if kind == "for":
        init = loop.child_by_field_name("initializer")
        cond = loop.child_by_field_name("condition")
        upd = loop.child_by_field_name("update")
        if init is None or cond is None or upd is None:
            return None, ("loop-shape", "the for loop lacks an initializer, a condition or an "
                                        "update")
        if init.type == "declaration":
            ds = init.children_by_field_name("declarator")
            if len(ds) != 1 or ds[0].type != "init_declarator":
                return None, ("loop-shape", "the loop initializer declares more than the counter")
            var = unit.text(ds[0].child_by_field_name("declarator"))
            val = ds[0].child_by_field_name("value")
            vtype = norm(unit.text(init.child_by_field_name("type")))
        elif init.type == "assignment_expression" and \
                unit.text(init.child_by_field_name("operator")) == "=":
            var = unit.text(init.child_by_field_name("left"))
            val = init.child_by_field_name("right")
            vtype, _ = _var_decl(unit, fn, var, loop.start_byte)
        else:
            return None, ("loop-shape", f"cannot read the counter from "
                                        f"`{norm(unit.text(init))}`")
        incr = None
    else:
        cond = _strip(loop.child_by_field_name("condition"))
        if cond is not None and cond.type == "condition_clause":
            inner = [c for c in cond.named_children if c.type != "comment"]
            cond = _strip(inner[0]) if len(inner) == 1 else None
        if not stmts:
            return None, ("loop-shape", "the while loop has an empty body")
        incr = stmts[-1]
        if incr.type != "expression_statement" or not incr.named_children:
            return None, ("loop-shape", "the while loop does not end with the counter's step")
        upd = incr.named_children[0]
        var = None
        if cond is not None and cond.type == "binary_expression":
            var = unit.text(cond.child_by_field_name("left"))
        if var is None or not re.fullmatch(r"[A-Za-z_]\w*", var):
            return None, ("loop-shape", "the while condition is not `counter < bound`")
        vtype, decl = _var_decl(unit, fn, var, loop.start_byte)
        val = None
        # the definition reaching the loop: a declaration or assignment among the
        # statements of the same block before the loop
        prev = loop.prev_named_sibling
        while prev is not None:
            if prev.type == "comment":
                prev = prev.prev_named_sibling
                continue
            if prev.type == "declaration":
                d = _decl_ident(unit, prev, var)
                if d is not None:
                    idecl = d.parent
                    val = idecl.child_by_field_name("value") if idecl.type == "init_declarator" \
                        else None
                    break
            if any(unit.text(w) == var for w in _written(unit, prev)):
                e = prev.named_children[0] if prev.type == "expression_statement" and \
                    prev.named_children else None
                if e is not None and e.type == "assignment_expression" and \
                        unit.text(e.child_by_field_name("operator")) == "=" and \
                        unit.text(e.child_by_field_name("left")) == var:
                    val = e.child_by_field_name("right")
                break
            prev = prev.prev_named_sibling
    if vtype is None or not re.fullmatch(r"(const\s+)?(unsigned\s+)?(int|long|long long|"
                                         r"unsigned|size_t|int32_t|int64_t|uint32_t)",
                                         vtype or ""):
        return None, ("loop-shape", f"the counter {var} is not of an integer type "
                                    f"({vtype or 'declaration not found'})")
    vtype = re.sub(r"^const\s+", "", vtype)
    if val is None or affine_of(unit, val) is None or affine_of(unit, val).value() != 0:
        return None, ("loop-shape", f"the counter {var} does not start at 0 (the stage is "
                                    "computed from the tile number)")
    c = _strip(cond) if cond is not None else None
    if c is None or c.type != "binary_expression" or \
            unit.text(c.child_by_field_name("operator")) != "<" or \
            unit.text(c.child_by_field_name("left")) != var:
        return None, ("loop-shape", f"the loop condition is not `{var} < bound`")
    bound = c.child_by_field_name("right")
    step, step_node = _step_of(unit, upd, var)
    if step is None:
        return None, ("loop-shape", step_node)
    for what, node in (("bound", bound), ("step", step_node)):
        if node is None:
            continue
        why = _pure(unit, node)
        if why:
            return None, ("loop-shape", f"the {what} `{norm(unit.text(node))}` has side "
                                        f"effects: {why}")
        names = {unit.text(i) for i in unit.walk(node) if i.type == "identifier"}
        for w in _written(unit, body):
            r = _root(w) or w
            if unit.text(r) in names:
                return None, ("loop-shape", f"the {what} `{norm(unit.text(node))}` changes in "
                                            f"the loop (`{norm(unit.text(w.parent))}`)")
    # the counter is written only by the loop's update
    for w in _written(unit, body):
        if unit.text(w) == var and (incr is None or not (incr.start_byte <= w.start_byte
                                                          < incr.end_byte)):
            return None, ("loop-shape", f"the body writes the counter {var} "
                                        f"(line {unit.line_col(w.start_byte)[0]})")
    # no early exit of the loop
    for n in unit.walk(body):
        if n.type in ("return_statement", "goto_statement"):
            return None, ("loop-shape", f"`{norm(unit.text(n))}` leaves the loop "
                                        f"(line {unit.line_col(n.start_byte)[0]})")
        if n.type in ("break_statement", "continue_statement"):
            p = n.parent
            while p is not None and p.id != body.id and p.type not in _LOOPS + \
                    ("switch_statement",):
                p = p.parent
            if p is not None and p.id == body.id:
                return None, ("loop-shape", f"`{norm(unit.text(n))}` exits the tile loop "
                                            f"early (line {unit.line_col(n.start_byte)[0]})")
    # load / barrier / compute / barrier [/ step]
    core = stmts[:-1] if incr is not None else stmts
    bars = [i for i, s in enumerate(core) if _is_barrier_stmt(unit, s)]
    if len(bars) != 2 or bars[1] != len(core) - 1 or bars[0] == 0 or bars[0] + 1 == bars[1]:
        return None, ("phase-shape", "the loop body is not `loads; __syncthreads(); compute; "
                                     "__syncthreads();` (found barriers at statements "
                                     f"{[b + 1 for b in bars]} of {len(core)})")
    loads, compute = core[:bars[0]], core[bars[0] + 1:bars[1]]
    inner = [b for b in barriers(unit, fn) if body.start_byte <= b.node.start_byte < body.end_byte
             and not any(s.start_byte <= b.node.start_byte < s.end_byte
                         for s in (core[bars[0]], core[bars[1]]))]
    if inner:
        return None, ("phase-shape", f"another barrier `{inner[0].text or inner[0].kind}` (line "
                                     f"{inner[0].line}) sits inside the loop")
    shared = _static_shared(unit, fn)
    stores, tiles = [], {}
    for s in loads:
        for lhs in _written(unit, s):
            r = _root(lhs)
            if lhs.type == "subscript_expression" and r is not None and unit.text(r) in shared:
                stores.append(lhs)
                tiles[unit.text(r)] = shared[unit.text(r)]
    if not stores:
        return None, ("phase-shape", "the statements before the first barrier store nothing "
                                     "into a __shared__ array")
    return TiledLoop(loop, kind, var, vtype, bound, step, step_node, body, loads,
                     core[bars[0]], compute, core[bars[1]], incr, tiles, stores), None


def tiled_loop(site):
    # per unit: a module-level table keyed by id(unit) would hand a dead unit's answer to
    # a new unit that got the same id
    cache = site.unit._cache.setdefault("double_buffer.tiled_loop", {})
    if site.node.id not in cache:
        cache[site.node.id] = _shape(site.unit, site.function, site.node)
    return cache[site.node.id]


# ------------------------------------------------------------------ preconditions
def _loop_shape(site, ctx) -> Verdict:
    got, err = tiled_loop(site)
    if got is None:
        if err[0] == "loop-shape":
            return Verdict.no(err[1])
        return Verdict.yes("the loop is counted from 0 with an invariant bound and step")
    return Verdict.yes(f"{got.var} counts from 0 while {got.var} < "
                       f"{norm(site.unit.text(got.bound))} by {got.step}; no early exit")


def _phase_shape(site, ctx) -> Verdict:
    got, err = tiled_loop(site)
    if got is None:
        if err[0] == "phase-shape":
            return Verdict.no(err[1])
        return Verdict.unknown(f"the loop shape fails first: {err[1]}")
    return Verdict.yes(f"{len(got.loads)} load statement(s), a barrier, {len(got.compute)} "
                       "compute statement(s), a barrier")


def _tiles_or(site):
    got, err = tiled_loop(site)
    if got is None:
        return None, Verdict.unknown(f"no tiled loop ({err[0]}: {err[1]})")
    return got, None


def _load_phase(site, ctx) -> Verdict:
    got, v = _tiles_or(site)
    if got is None:
        return v
    unit, fn = site.unit, site.function
    shared = _static_shared(unit, fn)
    local = set()
    for s in got.loads:
        local |= _declared(unit, s)
    for s in got.loads:
        if s.type not in _ZERO_INIT_TYPES:
            return Verdict.no(f"the load phase holds a {s.type} (line "
                              f"{unit.line_col(s.start_byte)[0]})")
        for n in unit.walk(s):
            line = unit.line_col(n.start_byte)[0]
            if n.type in ("return_statement", "gnu_asm_expression", "preproc_if", "preproc_ifdef"):
                return Verdict.no(f"the load phase holds `{norm(unit.text(n))[:40]}` (line {line})")
            if n.type == "call_expression" and not _pure_call(unit, fn, n):
                return Verdict.no(f"the load phase calls {_call_name(unit, n) or '?'} (line "
                                  f"{line}): only loads and index arithmetic can be issued a "
                                  "tile ahead")
            if n.type == "declaration" and "__shared__" in unit.text(n).split("[")[0]:
                return Verdict.no(f"the load phase declares shared memory (line {line})")
        for lhs in _written(unit, s):
            r = _root(lhs) if lhs.type == "subscript_expression" else \
                (lhs if lhs.type == "identifier" else None)
            line = unit.line_col(lhs.start_byte)[0]
            if r is None:
                return Verdict.no(f"the load phase writes `{norm(unit.text(lhs))}` (line {line})")
            name = unit.text(r)
            if lhs.type == "subscript_expression" and name in got.tiles:
                continue
            if lhs.type == "identifier" and name in local:
                continue
            return Verdict.no(f"the load phase writes `{norm(unit.text(lhs))}` (line {line}): "
                              "only the tile arrays and its own locals may be written a tile "
                              "ahead")
        for n in _idents(unit, s, set(shared)):
            line = unit.line_col(n.start_byte)[0]
            if unit.text(n) not in got.tiles:
                return Verdict.no(f"the load phase reads shared array {unit.text(n)} (line "
                                  f"{line})")
            if not any(_root(st) is not None and _root(st).id == n.id for st in got.stores):
                return Verdict.no(f"the load phase reads the tile {unit.text(n)} (line {line}): "
                                  "the next tile's loads must not depend on the current tile")
    # what the load phase reads must not change during the loop
    reads = {unit.text(n) for s in got.loads for n in unit.walk(s) if n.type == "identifier"}
    reads -= local | set(got.tiles) | {got.var}
    for w in _written(unit, got.body):
        r = _root(w) if w.type == "subscript_expression" else w
        if r is None:
            continue
        name = unit.text(r)
        inside_load = any(s.start_byte <= w.start_byte < s.end_byte for s in got.loads)
        if name in reads and not inside_load and not (got.incr is not None and
                                                      got.incr.start_byte <= w.start_byte <
                                                      got.incr.end_byte):
            return Verdict.no(f"the loop writes {name} (line {unit.line_col(w.start_byte)[0]}), "
                              "which the load phase reads: the next tile would be loaded with "
                              "the wrong value")
    for n in (x for s in got.loads for x in unit.walk(s)):
        if n.type == "pointer_expression" and unit.text(n.child_by_field_name("operator")) == "*":
            r = n.child_by_field_name("argument")
            if r is not None and any(unit.text(w) == unit.text(r) for w in _written(unit, fn.body)):
                return Verdict.no(f"`{norm(unit.text(n))}` reads memory the kernel writes")
    # the global memory it reads is never written by the kernel
    read_ptrs = {unit.text(_root(n)) for s in got.loads for n in unit.walk(s)
                 if n.type == "subscript_expression" and _root(n) is not None and
                 unit.text(_root(n)) not in got.tiles}
    for w in _written(unit, fn.body):
        r = _root(w) if w.type == "subscript_expression" else None
        if r is None and w.type == "pointer_expression":
            r = w.child_by_field_name("argument")
        if r is not None and unit.text(r) in read_ptrs:
            return Verdict.no(f"the kernel writes {unit.text(r)} (line "
                              f"{unit.line_col(w.start_byte)[0]}), which the load phase reads: "
                              "loading a tile ahead could read stale data")
    return Verdict.yes(f"the load phase writes only {', '.join(sorted(got.tiles))} and its "
                       "own locals, and reads memory the kernel never writes")


def _compute_phase(site, ctx) -> Verdict:
    got, v = _tiles_or(site)
    if got is None:
        return v
    unit, fn = site.unit, site.function
    shared = _static_shared(unit, fn)
    load_locals = set()
    for s in got.loads:
        load_locals |= _declared(unit, s)
    params = {p.name for p in fn.params if p.pointer or p.array}
    for s in got.compute:
        for n in unit.walk(s):
            line = unit.line_col(n.start_byte)[0]
            if n.type == "identifier" and unit.text(n) in load_locals:
                return Verdict.no(f"the compute phase uses {unit.text(n)} (line {line}), "
                                  "declared by the load phase: it moves into the load function")
            if n.type == "call_expression" and not _pure_call(unit, fn, n):
                return Verdict.no(f"the compute phase calls {_call_name(unit, n) or '?'} (line "
                                  f"{line}): it could touch the tiles or global memory")
            if n.type in ("gnu_asm_expression", "return_statement"):
                return Verdict.no(f"the compute phase holds `{norm(unit.text(n))[:40]}` "
                                  f"(line {line})")
        for w in _written(unit, s):
            r = _root(w) if w.type == "subscript_expression" else w
            line = unit.line_col(w.start_byte)[0]
            if r is None or r.type != "identifier":
                return Verdict.no(f"the compute phase writes `{norm(unit.text(w))}` (line {line}) "
                                  "through a pointer")
            name = unit.text(r)
            if name in shared:
                return Verdict.no(f"the compute phase writes shared array {name} (line {line}): "
                                  "it must only read the tiles")
            if name in params:
                return Verdict.no(f"the compute phase writes global memory through {name} "
                                  f"(line {line})")
    return Verdict.yes("the compute phase only reads the tiles and writes registers")


def _tile_storage(site, ctx) -> Verdict:
    got, v = _tiles_or(site)
    if got is None:
        return v
    unit, fn = site.unit, site.function
    for name, d in sorted(got.tiles.items()):
        if d.extern:
            return Verdict.no(f"{name} is extern __shared__ (sized at launch): the stage "
                              "dimension needs a static array")
        if not d.dims or any(x == "" for x in d.dims):
            return Verdict.no(f"{name} is not an array with known dimensions")
        for n in _idents(unit, fn.body, {name}):
            if d.node.start_byte <= n.start_byte < d.node.end_byte:
                continue
            if not (got.body.start_byte <= n.start_byte < got.body.end_byte):
                return Verdict.no(f"{name} is used outside the tile loop (line "
                                  f"{unit.line_col(n.start_byte)[0]}): its contents would "
                                  "depend on the stage")
            p = n.parent
            if p is not None and p.type in ("sizeof_expression", "alignof_expression"):
                return Verdict.no(f"sizeof({name}) (line {unit.line_col(n.start_byte)[0]}) "
                                  "would change")
    return Verdict.yes(f"{', '.join(sorted(got.tiles))}: static __shared__ arrays used only "
                       "in the loop")


def _thread_indexed(site, ctx) -> Verdict:
    got, v = _tiles_or(site)
    if got is None:
        return v
    unit = site.unit
    for lhs in got.stores:
        idx = []
        n = lhs
        while n is not None and n.type == "subscript_expression":
            idx.append(n.child_by_field_name("indices") or n.child_by_field_name("index"))
            n = _strip(n.child_by_field_name("argument"))
        deps = set()
        for i in idx:
            if i is not None:
                deps |= set(thread_dependent(unit, i))
        if not any(d.startswith("threadIdx.") for d in deps):
            return Verdict.no(f"the store `{norm(unit.text(lhs))}` (line "
                              f"{unit.line_col(lhs.start_byte)[0]}) is not indexed by the "
                              "thread index: every thread would write the same element")
    return Verdict.yes(f"{len(got.stores)} tile store(s) indexed by threadIdx")


def _tile_type(site, ctx) -> Verdict:
    got, v = _tiles_or(site)
    if got is None:
        return v
    unit = site.unit
    out = []
    for name, d in sorted(got.tiles.items()):
        t = d.type
        size = type_size(unit, t)
        if size is None:
            sizes = ctx.sizes or {}
            if f"sizeof({t})" in sizes:
                size = sizes[f"sizeof({t})"]
        if size is None:
            return Verdict.unknown(f"the element type {t} of {name} has no known size (a "
                                   "template parameter or library type): the doubled "
                                   "footprint cannot be checked")
        if "*" in t:
            return Verdict.no(f"{name} holds pointers ({t})")
        out.append(f"{name}: {t} ({size} B)")
    return Verdict.yes(", ".join(out))


def _names(p, site):
    unit, fn = site.unit, site.function
    lname = p.loader if p.loader != "auto" else fresh(unit, fn, LOADERS)
    sname = p.stage_param if p.stage_param != "auto" else \
        fresh(unit, fn, STAGE_PARAMS, taken={lname})
    return lname, sname


def _fresh_names(site, ctx) -> Verdict:
    got, v = _tiles_or(site)
    if got is None:
        return v
    unit, fn = site.unit, site.function
    lname, sname = _names(site.pass_, site)
    if lname == sname:
        return Verdict.no(f"the load function and its stage parameter are both named {lname}")
    used = {unit.text(n) for n in unit.walk(fn.node)
            if n.type in ("identifier", "type_identifier", "field_identifier")}
    for what, name in (("load function", lname), ("stage parameter", sname)):
        if name in used:
            return Verdict.no(f"the {what} name {name} is already used in {fn.name}")
    if sname == got.var:
        return Verdict.no(f"the stage parameter cannot be named like the counter {got.var}")
    return Verdict.yes(f"load function {lname} and stage parameter {sname} are fresh")


def _template_env(unit, fn, ctx) -> dict:
    """Values of ``fn``'s template value parameters: ``--assume NAME==v``, else the
    template arguments of calls in the unit (the largest seen, for the budget)."""
    env = dict(ctx.sizes or {})
    if not fn.template_params:
        return env
    names = [t.name for t in fn.template_params]
    for n in unit.walk(unit.root):
        if n.type != "call_expression":
            continue
        f = n.child_by_field_name("function")
        if f is None or f.type != "template_function":
            continue
        if unit.text(f.child_by_field_name("name")) != fn.name:
            continue
        args = f.child_by_field_name("arguments")
        vals = [a for a in args.named_children if a.type != "comment"] if args else []
        for name, a in zip(names, vals):
            if name in env and name in (ctx.sizes or {}):
                continue
            af = affine_of(unit, a)
            if af is not None and af.value() is not None:
                env[name] = max(env.get(name, 0), af.value())
    return env


def _smem_budget(site, ctx) -> Verdict:
    got, v = _tiles_or(site)
    if got is None:
        return v
    unit, fn = site.unit, site.function
    stages = site.pass_.stages
    env = _template_env(unit, fn, ctx)
    fp = shared_footprint(unit, fn, consts=env)
    if fp.static_bytes is None:
        return Verdict.unknown(f"the static shared memory of {fn.name} is not known: "
                               f"{fp.reason}; pass --assume NAME==value for template parameters")
    tiles = sum(d.bytes for d in fp.decls if d.name in got.tiles and d.bytes is not None)
    total = fp.static_bytes + (stages - 1) * tiles
    # device functions: the kernels that call them add their own shared memory
    extra = ""
    if not fn.is_kernel:
        for k in unit.kernels():
            kfp = shared_footprint(unit, k, consts=env)
            if kfp.static_bytes is not None and any(d.name in got.tiles for d in kfp.decls):
                total = max(total, kfp.static_bytes + (stages - 1) * tiles)
                extra = f" (with kernel {k.name})"
    if total > STATIC_SMEM_LIMIT:
        return Verdict.no(f"{stages} stages need {total} bytes of static shared memory{extra}, "
                          f"over the {STATIC_SMEM_LIMIT}-byte static limit of every arch "
                          "(more needs dynamic shared memory and an opt-in)")
    return Verdict.yes(f"{total} bytes of static shared memory{extra} with {stages} stages "
                       f"(<= {STATIC_SMEM_LIMIT})")


# ---------------------------------------------------------------- generated text
def _bound_text(unit, bound) -> str:
    return _paren(unit, bound, loose=True)


def stage_texts(unit, tl: "TiledLoop", stages: int):
    """(ahead, prologue, next, next_stage, cur_stage) texts for ``stages`` stages."""
    t, s = tl.var, tl.step
    sn = tl.step_node
    st = s if sn is None else _paren(unit, sn)

    def tile_no(e: str, atomic: bool) -> str:
        if s == "1":
            return e
        return f"{e if atomic else '(' + e + ')'} / {st}"

    def stage_of(e: str, atomic: bool) -> str:
        n = tile_no(e, atomic)
        wrap = n if (s == "1" and atomic) else f"({n})"
        return f"{wrap} & 1" if stages == 2 else f"{wrap} % {stages}"

    def ahead(j: int) -> str:
        if j == 0:
            return "0"
        if s == "1":
            return str(j)
        return st if j == 1 else f"{j} * {st}"

    nxt = f"{t} + {ahead(stages - 1)}"
    return {
        "prologue": [(ahead(j), str(j)) for j in range(stages - 1)],
        "next": nxt,
        "next_stage": stage_of(nxt, False),
        "cur_stage": stage_of(t, True),
    }


@dataclass(frozen=True)
class DoubleBuffer(Pass):
    """Pipeline a shared-memory tiled loop: load tile t+1 while computing on tile t.

    Before::

        for (int t = 0; t < ntiles; ++t) {
            As[ty][tx] = A[row * K + t * TILE + tx];
            Bs[ty][tx] = B[(t * TILE + ty) * N + col];
            __syncthreads();
            for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
            __syncthreads();
        }

    After ``double-buffer{stages=2}``::

        auto load_tile = [&](int t, int stage) {
            As[stage][ty][tx] = A[row * K + t * TILE + tx];
            Bs[stage][ty][tx] = B[(t * TILE + ty) * N + col];
        };
        if (0 < ntiles) load_tile(0, 0);
        __syncthreads();
        for (int t = 0; t < ntiles; ++t) {
            if (t + 1 < ntiles) load_tile(t + 1, (t + 1) & 1);
            for (int k = 0; k < TILE; ++k) acc += As[t & 1][ty][k] * Bs[t & 1][k][tx];
            __syncthreads();
        }

    Every tile array gets a leading stage dimension (``__shared__ float As[2][TILE][TILE]``).
    The load phase moves verbatim into a load function (a lambda capturing by reference,
    its counter parameter named like the loop counter), each tile ``X`` written there as
    ``X[stage]``; a prologue loads tile 0 into stage 0; each iteration first loads tile
    t+1 into stage (t+1)&1 (guarded by ``t + 1 < bound``), then computes on ``X[t & 1]``.
    The barrier between the loads and the compute goes: one barrier per iteration is
    enough, because the stage written in iteration t was last read in iteration t-1,
    before that iteration's barrier. Also accepted: ``while (t < n) { ...; ++t; }`` and
    ``t += TILE`` steps (stage ``(t / TILE) & 1``). With ``stages=3`` two tiles are loaded
    in the prologue and the loads run two tiles ahead (stage ``% 3``).

    No run-time fact is needed: the loads keep their own bounds checks, and the tile
    ahead is guarded by the loop's own condition. The launch contract does not change
    (the extra shared memory is static, not part of the header).

    Preconditions: loop-shape (pipeline: a for/while counter from 0, ``counter < bound``,
    an additive step, bound and step invariant and side-effect free, no break/continue/
    return), phase-shape (pipeline: exactly ``loads; __syncthreads(); compute;
    __syncthreads();`` and no other barrier in the loop), load-phase (pipeline: the loads
    write only the tile arrays and their own locals, call nothing with effects, read no
    shared memory, and read global memory the kernel never writes and values the loop
    never changes), compute-phase (pipeline: the compute only reads the tiles, writes
    registers, and uses nothing the load phase declares), tile-storage (storage: the
    tiles are static ``__shared__`` arrays of the function used only in the loop),
    thread-indexed (layout: every tile store is indexed by threadIdx), tile-type (dtype:
    the element types have a known size), smem-budget (hardware: the static shared
    memory with every tile multiplied by the stage count stays within 48 KiB, the static
    limit of every architecture; template parameters are read from the calls in the file
    or ``--assume TILE==16``), fresh-names (pipeline: the names of the load function and
    its stage parameter are unused).

    Options: ``stages`` (2 or 3; default 2), ``loader`` and ``stage_param`` (the names of
    the load function and its stage parameter; ``auto`` picks unused ones: load_tile,
    stage).
    """

    name = "double-buffer"
    kind = "optimize"
    inverse = "single-buffer"
    scope = "device"
    anchor = Rule(any=(Rule(kind="for_statement"), Rule(kind="while_statement")),
                  has=Rule(pattern="__syncthreads()"))
    preconditions = (
        Precondition("loop-shape", "pipeline",
                     "a counted loop from 0 (for or while) with an invariant bound and step, "
                     "no early exit", _loop_shape),
        Precondition("phase-shape", "pipeline",
                     "the body is loads; __syncthreads(); compute; __syncthreads();",
                     _phase_shape),
        Precondition("load-phase", "pipeline",
                     "the load phase writes only the tiles and reads global memory the kernel "
                     "never writes", _load_phase),
        Precondition("compute-phase", "pipeline",
                     "the compute phase only reads the tiles and writes registers",
                     _compute_phase),
        Precondition("tile-storage", "storage",
                     "the tiles are static __shared__ arrays used only in the loop",
                     _tile_storage),
        Precondition("thread-indexed", "layout",
                     "every tile store is indexed by the thread index", _thread_indexed),
        Precondition("tile-type", "dtype",
                     "the tile element types have a known size", _tile_type),
        Precondition("fresh-names", "pipeline",
                     "the load function and stage parameter names are unused in the function",
                     _fresh_names),
        Precondition("smem-budget", "hardware",
                     "the static shared memory with the staged tiles fits in 48 KiB",
                     _smem_budget),
    )

    stages: int = option(2, Choice(*STAGES), "pipeline stages (tiles in flight + 1)", tune=True)
    loader: str = option("auto", Identifier(),
                         "name of the load function (auto: a fresh name, load_tile)")
    stage_param: str = option("auto", Identifier(),
                              "name of its stage parameter (auto: a fresh name, stage)")

    def rewrite(self, site, ctx):
        unit = site.unit
        tl, _ = tiled_loop(site)
        lname, sname = _names(self, site)
        tx = stage_texts(unit, tl, self.stages)
        bound = _bound_text(unit, tl.bound)
        ind = line_indent(unit, tl.loop.start_byte)
        bind = line_indent(unit, tl.loads[0].start_byte)
        tiles = set(tl.tiles)
        # the load function
        reps = [(n.end_byte, n.end_byte, f"[{sname}]")
                for n in _idents(unit, _span(tl.loads), tiles)
                if tl.load_start <= n.start_byte < tl.load_end]
        body = _splice(unit, tl.load_start, tl.load_end, reps)
        text = f"auto {lname} = [&]({tl.var_type} {tl.var}, int {sname}) {{\n{bind}{body}\n{ind}}};\n"
        for a, s in tx["prologue"]:
            text += f"{ind}if ({a} < {bound}) {lname}({a}, {s});\n"
        text += f"{ind}__syncthreads();\n{ind}"
        edits = [Edit.insert(tl.loop.start_byte, text),
                 Edit(tl.load_start, tl.barrier1.end_byte,
                      f"if ({tx['next']} < {bound}) {lname}({tx['next']}, {tx['next_stage']});")]
        for s in tl.compute:
            for n in _idents(unit, s, tiles):
                edits.append(Edit.insert(n.end_byte, f"[{tx['cur_stage']}]"))
        for name, d in tl.tiles.items():
            ident = _decl_ident(unit, d.node, name)
            edits.append(Edit.insert(ident.end_byte, f"[{self.stages}]"))
        return edits

    def inverse_for(self, site, ctx):
        return SingleBuffer()


def _span(stmts):
    """A pseudo-node covering a list of sibling statements (their common parent)."""
    return stmts[0].parent


# ------------------------------------------------------------------------ inverse
@dataclass
class Staged:
    lam_decl: object
    lam: object
    lname: str
    var: str
    var_type: str
    sname: str
    lam_body: object
    prologue: list
    barrier: object
    loop: object
    tl_like: object  # a TiledLoop-ish record of the loop header
    first: object  # the loop's first statement (the load call)
    tiles: dict
    stages: int
    cur: str


def _lambda_parts(unit, site):
    lam = site.match.bindings.get("LAM")
    if isinstance(lam, tuple):
        lam = lam[0] if lam else None
    if lam is None or lam.type != "lambda_expression":
        return None, "not a lambda"
    cap = [c for c in lam.named_children if c.type == "lambda_capture_specifier"]
    if not cap or norm(unit.text(cap[0])) != "[&]":
        return None, "the lambda does not capture by reference [&]"
    decl = [c for c in lam.named_children if c.type == "lambda_declarator"]
    plist = None
    if decl:
        plist = next((c for c in decl[0].named_children if c.type == "parameter_list"), None)
    params = [p for p in plist.named_children if p.type == "parameter_declaration"] \
        if plist is not None else []
    if len(params) != 2:
        return None, "the lambda does not take (counter, stage)"
    (t_ty, t_name), (s_ty, s_name) = [
        (norm(unit.text(p.child_by_field_name("type"))),
         unit.text(p.child_by_field_name("declarator"))) for p in params]
    if s_ty != "int":
        return None, "the stage parameter is not an int"
    body = lam.child_by_field_name("body")
    return (lam, t_ty, t_name, s_name, body), None


def _staged(site):
    unit, fn = site.unit, site.function
    parts, why = _lambda_parts(unit, site)
    if parts is None:
        return None, ("staged-loop", why)
    lam, t_ty, t_name, s_name, lbody = parts
    decl = site.node
    lname = site.text("L")
    # the statements after the lambda: prologue calls, a barrier, the loop
    sib = []
    n = decl.next_named_sibling
    while n is not None and len(sib) < 6:
        if n.type != "comment":
            sib.append(n)
            if n.type in ("for_statement", "while_statement"):
                break
        n = n.next_named_sibling
    if not sib or sib[-1].type not in ("for_statement", "while_statement"):
        return None, ("staged-loop", f"no loop follows the load function {lname}")
    loop = sib[-1]
    prologue = sib[:-2]
    barrier = sib[-2] if len(sib) >= 2 else None
    if barrier is None or not _is_barrier_stmt(unit, barrier):
        return None, ("staged-loop", f"the prologue calls of {lname} are not followed by "
                                     "__syncthreads() right before the loop")
    stages = len(prologue) + 1
    if stages not in STAGES:
        return None, ("staged-loop", f"{len(prologue)} prologue call(s): not a 2- or 3-stage "
                                     "pipeline")
    body = loop.child_by_field_name("body")
    stmts = statements(body)
    if len(stmts) < 3:
        return None, ("staged-loop", "the loop body is too short for a staged loop")
    # rebuild the original loop record: a fake single-buffer view for the header checks
    fake = _header(unit, fn, loop, stmts)
    if isinstance(fake, str):
        return None, ("staged-loop", fake)
    var, vtype, bound, step, step_node, incr = fake
    if var != t_name:
        return None, ("staged-loop", f"the load function's counter {t_name} is not the loop "
                                     f"counter {var}")
    if vtype != t_ty:
        return None, ("staged-loop", f"the load function's counter type {t_ty} is not the "
                                     f"loop counter's {vtype}")
    core = stmts[:-1] if incr is not None else stmts
    if not _is_barrier_stmt(unit, core[-1]):
        return None, ("staged-loop", "the loop body does not end with __syncthreads()")
    first = core[0]
    tlv = TiledLoop(loop, "for" if loop.type == "for_statement" else "while", var, vtype, bound,
                    step, step_node, body, [], None, core[1:-1], core[-1], incr, {}, [])
    tx = stage_texts(unit, tlv, stages)
    b = _bound_text(unit, bound)
    want = [f"if ({a} < {b}) {lname}({a}, {s});" for a, s in tx["prologue"]]
    for got, w in zip(prologue, want):
        if not _same(unit, got, w):
            return None, ("staged-loop", f"the prologue `{norm(unit.text(got))}` is not `{w}`")
    w = f"if ({tx['next']} < {b}) {lname}({tx['next']}, {tx['next_stage']});"
    if not _same(unit, first, w):
        return None, ("staged-loop", f"the loop does not start with `{w}`")
    others = [x for x in barriers(unit, fn) if body.start_byte <= x.node.start_byte < body.end_byte
              and not (core[-1].start_byte <= x.node.start_byte < core[-1].end_byte)]
    if others or len(core) < 3:
        return None, ("staged-loop", "the loop holds another barrier or no computation")
    # the tiles: shared arrays written as X[stage] in the load function
    shared = _static_shared(unit, fn)
    tiles = {}
    for nd in _idents(unit, lbody, set(shared)):
        tiles[unit.text(nd)] = shared[unit.text(nd)]
    if not tiles:
        return None, ("stage-uses", f"the load function {lname} writes no __shared__ array")
    return Staged(decl, lam, lname, var, vtype, s_name, lbody, prologue, barrier, loop, tlv, first,
                  tiles, stages, tx["cur_stage"]), None


def _same(unit, node, text: str) -> bool:
    other = parse(("void __f() { " + text + " }").encode())
    body = other.root.named_children[0].child_by_field_name("body")
    st = statements(body)
    if len(st) != 1:
        return False
    return tokens(unit, node) == tokens(other, st[0])


def _same_expr(unit, node, text: str) -> bool:
    other = parse(("void __f() { (" + text + "); }").encode())
    body = other.root.named_children[0].child_by_field_name("body")
    st = statements(body)
    e = _strip(st[0].named_children[0]) if st and st[0].named_children else None
    return e is not None and tokens(unit, _strip(node)) == tokens(other, e)


def _header(unit, fn, loop, stmts):
    """(var, type, bound node, step text, step node, increment stmt) of a loop, or why not."""
    fake_fn = fn
    if loop.type == "for_statement":
        init = loop.child_by_field_name("initializer")
        cond = _strip(loop.child_by_field_name("condition"))
        upd = loop.child_by_field_name("update")
        if init is None or cond is None or upd is None:
            return "the loop is not a counted for loop"
        if init.type == "declaration":
            ds = init.children_by_field_name("declarator")
            if len(ds) != 1 or ds[0].type != "init_declarator":
                return "the loop initializer declares more than the counter"
            var = unit.text(ds[0].child_by_field_name("declarator"))
            vtype = norm(unit.text(init.child_by_field_name("type")))
        elif init.type == "assignment_expression":
            var = unit.text(init.child_by_field_name("left"))
            vtype, _ = _var_decl(unit, fake_fn, var, loop.start_byte)
        else:
            return "cannot read the loop counter"
        incr = None
    else:
        cond = _strip(loop.child_by_field_name("condition"))
        if cond is not None and cond.type == "condition_clause":
            inner = [c for c in cond.named_children if c.type != "comment"]
            cond = _strip(inner[0]) if len(inner) == 1 else None
        if cond is None or cond.type != "binary_expression":
            return "the while condition is not counter < bound"
        var = unit.text(cond.child_by_field_name("left"))
        vtype, _ = _var_decl(unit, fake_fn, var, loop.start_byte)
        incr = stmts[-1]
        if incr.type != "expression_statement" or not incr.named_children:
            return "the while loop does not end with its step"
        upd = incr.named_children[0]
    if cond is None or cond.type != "binary_expression" or \
            unit.text(cond.child_by_field_name("operator")) != "<" or \
            unit.text(cond.child_by_field_name("left")) != var:
        return "the loop condition is not counter < bound"
    step, step_node = _step_of(unit, upd, var)
    if step is None:
        return step_node
    vtype = re.sub(r"^const\s+", "", vtype or "")
    return var, vtype, cond.child_by_field_name("right"), step, step_node, incr


def staged(site):
    cache = site.unit._cache.setdefault("double_buffer.staged", {})
    if site.node.id not in cache:
        cache[site.node.id] = _staged(site)
    return cache[site.node.id]


def _staged_loop(site, ctx) -> Verdict:
    got, err = staged(site)
    if got is None:
        if err[0] == "staged-loop":
            return Verdict.no(err[1])
        return Verdict.yes("the load function, prologue, barrier and loop have the staged shape")
    return Verdict.yes(f"{got.lname}: {got.stages}-stage prologue, one barrier, loop over "
                       f"{got.var} loading {got.tl_like.step if got.stages == 2 else 'two'} "
                       "tile(s) ahead")


def _stage_index(unit, sub):
    """(root identifier, first index node) of ``X[i]`` when sub is that subscript."""
    if sub is None or sub.type != "subscript_expression":
        return None, None
    arg = _strip(sub.child_by_field_name("argument"))
    idx = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
    if arg is None or arg.type != "identifier" or idx is None:
        return None, None
    inner = [c for c in idx.named_children if c.type != "comment"]
    return arg, (inner[0] if len(inner) == 1 else None)


def _stage_uses(site, ctx) -> Verdict:
    got, err = staged(site)
    if got is None:
        if err[0] == "stage-uses":
            return Verdict.no(err[1])
        return Verdict.unknown(f"no staged loop to check ({err[1]})")
    unit, fn = site.unit, site.function
    names = set(got.tiles)
    for n in _idents(unit, got.lam_body, names | {got.sname}):
        line = unit.line_col(n.start_byte)[0]
        if unit.text(n) == got.sname:
            sub = n.parent
            while sub is not None and sub.type == "subscript_argument_list":
                sub = sub.parent
            root, idx = _stage_index(unit, sub)
            if root is None or unit.text(root) not in names or idx is None or idx.id != n.id:
                return Verdict.no(f"the stage parameter {got.sname} is used as "
                                  f"`{norm(unit.text(n.parent))}` (line {line}), not only as "
                                  "the stage index of a tile")
            continue
        root, idx = _stage_index(unit, n.parent)
        if root is None or root.id != n.id or idx is None or unit.text(idx) != got.sname:
            return Verdict.no(f"the tile {unit.text(n)} is used in the load function without "
                              f"[{got.sname}] (line {line})")
    lbody = got.loop.child_by_field_name("body")
    for n in _idents(unit, lbody, names):
        if got.first.start_byte <= n.start_byte < got.first.end_byte:
            continue
        root, idx = _stage_index(unit, n.parent)
        line = unit.line_col(n.start_byte)[0]
        if root is None or root.id != n.id or idx is None or not _same_expr(unit, idx, got.cur):
            return Verdict.no(f"the tile {unit.text(n)} is used in the loop without "
                              f"[{got.cur}] (line {line})")
    for n in _idents(unit, fn.body, names | {got.lname}):
        inside = any(a.start_byte <= n.start_byte < a.end_byte
                     for a in [got.lam_decl, got.loop, *got.prologue] +
                     [got.tiles[x].node for x in got.tiles])
        if not inside:
            return Verdict.no(f"{unit.text(n)} is used outside the staged loop (line "
                              f"{unit.line_col(n.start_byte)[0]})")
    for n in _idents(unit, lbody, {got.lname}):
        if not (got.first.start_byte <= n.start_byte < got.first.end_byte):
            return Verdict.no(f"the loop calls {got.lname} again (line "
                              f"{unit.line_col(n.start_byte)[0]})")
    return Verdict.yes(f"{', '.join(sorted(names))} are indexed [{got.sname}] in the load "
                       f"function and [{got.cur}] in the loop")


def _staged_storage(site, ctx) -> Verdict:
    got, err = staged(site)
    if got is None:
        return Verdict.unknown(f"no staged loop to check ({err[1]})")
    unit = site.unit
    for name, d in sorted(got.tiles.items()):
        if d.extern or not d.dims:
            return Verdict.no(f"{name} is not a static array with a stage dimension")
        lead = d.dims[0]
        if lead != str(got.stages):
            return Verdict.no(f"{name}'s leading dimension is [{lead}], not the "
                              f"{got.stages} stages of the pipeline")
        if len(d.dims) < 2:
            return Verdict.no(f"{name} has only the stage dimension: removing it leaves a "
                              "scalar, not the original array")
    del unit
    return Verdict.yes(f"every tile has the leading stage dimension [{got.stages}]")


@dataclass(frozen=True)
class SingleBuffer(Pass):
    """Undo ``double-buffer``: load each tile at the top of the loop, behind two barriers.

    Before::

        auto load_tile = [&](int t, int stage) {
            As[stage][ty][tx] = A[row * K + t * TILE + tx];
        };
        if (0 < ntiles) load_tile(0, 0);
        __syncthreads();
        for (int t = 0; t < ntiles; ++t) {
            if (t + 1 < ntiles) load_tile(t + 1, (t + 1) & 1);
            for (int k = 0; k < TILE; ++k) acc += As[t & 1][ty][k] * Bs[t & 1][k][tx];
            __syncthreads();
        }

    After ``single-buffer``::

        for (int t = 0; t < ntiles; ++t) {
            As[ty][tx] = A[row * K + t * TILE + tx];
            __syncthreads();
            for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
            __syncthreads();
        }

    The body of the load function goes back to the top of the loop (``X[stage]`` written
    ``X`` again), followed by a barrier; the prologue, the function and the stage
    dimension of every tile go. Exactly the shapes ``double-buffer`` writes (2 or 3
    stages, for or while loops, unit or ``TILE`` steps) are recognized.

    Preconditions: staged-loop (pipeline: a ``[&]`` lambda taking (counter, int stage),
    then its prologue calls, ``__syncthreads()`` and the loop whose first statement loads
    the tile ahead and whose body ends with the only barrier, all as double-buffer writes
    them), stage-uses (layout: in the lambda every tile is ``X[stage]`` and the stage
    parameter is used nowhere else, in the loop every tile is ``X[cur]`` with cur the
    current stage expression, and neither the tiles nor the lambda are used elsewhere),
    staged-storage (storage: every tile's leading dimension is the stage count).

    Options: none.
    """

    name = "single-buffer"
    kind = "simplify"
    inverse = "double-buffer"
    scope = "device"
    anchor = Rule(pattern="auto $L = $LAM;", constraints={"LAM": {"kind": "lambda_expression"},
                                                          "L": {"kind": "identifier"}})
    preconditions = (
        Precondition("staged-loop", "pipeline",
                     "load lambda, prologue, one barrier, loop loading the tile ahead",
                     _staged_loop),
        Precondition("stage-uses", "layout",
                     "tiles are X[stage] in the lambda and X[cur] in the loop, nowhere else",
                     _stage_uses),
        Precondition("staged-storage", "storage",
                     "every tile's leading dimension is the stage count", _staged_storage),
    )

    def rewrite(self, site, ctx):
        unit = site.unit
        g, _ = staged(site)
        names = set(g.tiles)
        stmts = statements(g.lam_body)
        start, end = stmts[0].start_byte, stmts[-1].end_byte
        reps = []
        for n in _idents(unit, g.lam_body, names):
            sub = n.parent
            reps.append((n.end_byte, sub.end_byte, ""))
        body = _splice(unit, start, end, reps)
        bind = line_indent(unit, g.first.start_byte)
        edits = [Edit.delete(g.lam_decl.start_byte, g.loop.start_byte),
                 Edit(g.first.start_byte, g.first.end_byte,
                      f"{body}\n{bind}__syncthreads();")]
        lbody = g.loop.child_by_field_name("body")
        for n in _idents(unit, lbody, names):
            if g.first.start_byte <= n.start_byte < g.first.end_byte:
                continue
            edits.append(Edit.delete(n.end_byte, n.parent.end_byte))
        for name, d in g.tiles.items():
            ident = _decl_ident(unit, d.node, name)
            arr = ident.parent
            edits.append(Edit.delete(ident.end_byte, arr.end_byte))
        return edits

    def inverse_for(self, site, ctx):
        g, _ = staged(site)
        if g is None:
            return DoubleBuffer()
        return DoubleBuffer(stages=g.stages, loader=g.lname, stage_param=g.sname)
