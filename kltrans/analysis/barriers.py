"""Barriers: where threads wait for each other, and what lies between two statements.

:func:`barriers` lists the synchronization points of a function: ``__syncthreads()``,
``__syncthreads_or/and/count(p)``, ``__syncwarp(mask)``, cooperative-groups
``block.sync()`` / ``grid.sync()`` / ``tile.sync()`` / ``cg::sync(g)``,
``__barrier_sync(id)``, ``bar.arrive_and_wait()`` and inline ``bar.sync`` PTX.

:func:`barrier_free_between` answers "is there no barrier between these two statements"
on the straight-line path from one to the other, looking into device functions defined in
the unit (``block_allreduce(...)`` holds a ``__syncthreads()``) and answering *unknown* when
a call it cannot see into lies on the path. :func:`under_divergent_condition` says whether
a barrier sits under a condition (or after an early exit) that depends on the thread, the
classic deadlock/undefined-behaviour hazard.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kltrans.analysis.affine import (
    LOOP_NODE_TYPES,
    THREAD_SYMBOLS,
    UNKNOWN_DEP,
    _cache,
    _is_ancestor,
    _norm,
    _resolve,
    _strip_parens,
    _unit_info,
    sources,
)
from kltrans.analysis.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

_SYNC_FUNCS = {
    "__syncthreads": ("__syncthreads", "block"),
    "__syncthreads_or": ("__syncthreads_or", "block"),
    "__syncthreads_and": ("__syncthreads_and", "block"),
    "__syncthreads_count": ("__syncthreads_count", "block"),
    "__syncwarp": ("__syncwarp", "warp"),
    "__barrier_sync": ("cg.sync", "block"),
}
_ASM_BARRIER = re.compile(r"\b(bar|barrier)(\.cta)?\.(sync|red|arrive)\b|\bbarrier\.cluster\.wait\b")

# calls known not to synchronize (besides names starting with "__", "atomic", "make_")
_MATH = set("""
sqrt sqrtf rsqrt rsqrtf cbrt cbrtf rcbrt rcbrtf exp expf exp2 exp2f exp10 exp10f expm1 expm1f
log logf log2 log2f log10 log10f log1p log1pf pow powf sin sinf cos cosf tan tanf sinh sinhf
cosh coshf tanh tanhf asin asinf acos acosf atan atanf atan2 atan2f asinh acosh atanh erf erff
erfc erfcf erfinv erfinvf normcdf normcdff lgamma lgammaf tgamma tgammaf fabs fabsf fmax fmaxf
fmin fminf fma fmaf floor floorf ceil ceilf round roundf rint rintf trunc truncf lrint lrintf
llrint llrintf lround lroundf llround nearbyint nearbyintf fmod fmodf remainder remainderf
copysign copysignf isnan isinf isfinite signbit hypot hypotf norm3d norm3df rnorm3df ldexp
ldexpf scalbn scalbnf ilogb ilogbf logb logbf nextafter nextafterf fdim fdimf saturate abs labs
llabs min max umin umax llmin llmax ullmin ullmax printf assert memcpy memset sincos sincosf
sincospi sincospif modf modff frexp frexpf remquo remquof j0 j0f j1 j1f y0 y0f y1 y1f
tex1Dfetch tex1D tex2D tex3D surf2Dread surf2Dwrite static_assert sizeof alignof
""".split())
_CG_METHODS = {"thread_rank", "size", "num_threads", "shfl", "shfl_down", "shfl_up", "shfl_xor",
               "any", "all", "ballot", "match_any", "match_all", "meta_group_rank",
               "meta_group_size", "group_index", "thread_index", "dim_threads", "group_dim", "block_rank",
               "is_valid", "num_blocks", "block_index", "dim_blocks", "thread_rank", "x", "y", "z"}
_CG_FUNCS = {"this_thread_block", "this_grid", "this_cluster", "tiled_partition",
             "coalesced_threads", "labeled_partition", "binary_partition", "this_thread",
             "reduce", "inclusive_scan", "exclusive_scan", "plus", "less", "greater",
             "bit_and", "bit_or", "bit_xor", "invoke_one", "invoke_one_broadcast"}
_CASTS = {"static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "bit_cast"}


@dataclass(frozen=True)
class Barrier:
    """One synchronization point.

    ``kind``: ``"__syncthreads"``, ``"__syncthreads_or"``, ``"__syncthreads_and"``,
    ``"__syncthreads_count"``, ``"__syncwarp"``, ``"cg.sync"`` (cooperative groups,
    ``__barrier_sync``, ``arrive_and_wait``) or ``"asm.bar"`` (inline PTX ``bar.sync``).
    ``scope``: who waits: ``"block"``, ``"warp"``, ``"grid"``, ``"cluster"`` or None when
    the group's type is not known.
    """

    node: "Node" = field(compare=False, repr=False)
    kind: str
    scope: str | None = None
    line: int = 0
    text: str = ""

    @property
    def statement(self) -> "Node":
        """The statement holding the barrier."""
        return _statement_of(self.node)


# ------------------------------------------------------------------------ detection
def _cg_scope(unit: "Unit", recv: "Node | None", depth: int = 0) -> str | None:
    """What a cooperative-groups object is: block, warp (a tile), grid, cluster, or None."""
    recv = _strip_parens(recv) if recv is not None else None
    if recv is None or depth > 10:
        return None
    text = _norm(unit.text(recv))
    if recv.type == "call_expression":
        f = recv.child_by_field_name("function")
        name = _norm(unit.text(f)).split("::")[-1] if f is not None else ""
        name = name.split("<")[0]
        return _scope_from_name(name)
    if recv.type in ("identifier",):
        b = _resolve(unit, recv, text)
        if b.decl is not None:
            ty = b.decl.child_by_field_name("type")
            tytext = _norm(unit.text(ty)) if ty is not None else ""
            s = _scope_from_name(tytext)
            if s is not None:
                return s
            if b.value is not None:
                return _cg_scope(unit, b.value, depth + 1)
    return None


def _scope_from_name(name: str) -> str | None:
    if "thread_block_tile" in name or "tiled_partition" in name or "coalesced" in name \
            or "thread_group" in name and "tile" in name:
        return "warp"
    if "thread_block" in name:
        return "block"
    if "grid" in name:
        return "grid"
    if "cluster" in name:
        return "cluster"
    return None


def _classify_call(unit: "Unit", call: "Node") -> tuple[str, str | None] | None:
    """(kind, scope) when a call (or inline asm) is a barrier, else None."""
    if call.type == "gnu_asm_expression":
        if _ASM_BARRIER.search(unit.text(call)):
            return "asm.bar", "block"
        return None
    if call.type != "call_expression":
        return None
    f = call.child_by_field_name("function")
    if f is None:
        return None
    if f.type == "identifier":
        got = _SYNC_FUNCS.get(unit.text(f))
        return got
    if f.type == "qualified_identifier":
        name = _norm(unit.text(f)).split("::")[-1]
        if name in ("sync", "barrier_sync", "grid_sync"):
            args = call.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            return "cg.sync", _cg_scope(unit, first)
        if name in _SYNC_FUNCS:
            return _SYNC_FUNCS[name]
        return None
    if f.type == "field_expression":
        fld = f.child_by_field_name("field")
        name = unit.text(fld) if fld is not None else ""
        if name in ("sync", "barrier_wait", "arrive_and_wait"):
            scope = _cg_scope(unit, f.child_by_field_name("argument"))
            if name == "arrive_and_wait" and scope is None:
                scope = "block"
            return "cg.sync", scope
    return None


def _statement_of(node: "Node") -> "Node":
    """The statement holding ``node`` (the nearest ancestor whose parent is a block or a
    control statement's body)."""
    n = node
    while n.parent is not None:
        p = n.parent
        if p.type in ("compound_statement", "translation_unit", "case_statement"):
            return n
        if p.type in ("if_statement", "else_clause", "while_statement", "for_statement",
                      "do_statement", "for_range_loop") and n.type.endswith("statement") and \
                n.type != "condition_clause":
            return n
        n = p
    return n


def barriers(unit: "Unit", fn: "Function") -> list[Barrier]:
    """The synchronization points directly in ``fn`` (pre-order).

    Calls to device functions that synchronize are not listed here (see
    :func:`barrier_calls`); rewriting a barrier must not touch them.
    """
    out = []
    root = fn.node if fn is not None else unit.root
    for n in unit.walk(root):
        if n.type in ("call_expression", "gnu_asm_expression"):
            got = _classify_call(unit, n)
            if got is not None:
                out.append(Barrier(n, got[0], got[1], unit.line_col(n.start_byte)[0],
                                   _norm(unit.text(n))))
    return out


def call_name(unit: "Unit", call: "Node") -> tuple[str, str]:
    """(simple name, kind) of a call's callee: kind is identifier, template, method,
    qualified or other."""
    f = call.child_by_field_name("function")
    if f is None:
        return "", "other"
    if f.type == "identifier":
        return unit.text(f), "identifier"
    if f.type == "template_function":
        n = f.child_by_field_name("name")
        name = _norm(unit.text(n)) if n is not None else ""
        return name.split("::")[-1], "template"
    if f.type == "qualified_identifier":
        return _norm(unit.text(f)).split("::")[-1].split("<")[0], "qualified"
    if f.type == "field_expression":
        fld = f.child_by_field_name("field")
        return (unit.text(fld) if fld is not None else ""), "method"
    if f.type in ("primitive_type", "type_identifier", "sized_type_specifier"):
        return unit.text(f), "type"
    return _norm(unit.text(f)), "other"


def is_builtin_call(unit: "Unit", call: "Node") -> bool:
    """Whether a call is a CUDA/C++ builtin known not to synchronize or escape analysis
    (intrinsics ``__*``, atomics, math functions, ``make_*``, casts, cooperative-groups
    queries and collectives, functional casts like ``float(x)``)."""
    name, kind = _call_name(unit, call)
    if kind == "type":
        return True
    if kind == "template" and name in _CASTS:
        return True
    if kind == "method":
        return name in _CG_METHODS
    if kind == "qualified" and name in _CG_FUNCS:
        return True
    if not name:
        return False
    if name.startswith(("__", "atomic", "make_")) or name in _MATH or name in _CG_FUNCS:
        return True
    info = _unit_info(unit)
    if name in info.typedefs or name in info.structs:
        return True  # a functional cast / constructor
    if kind in ("identifier", "template"):
        f = call.child_by_field_name("function")
        ident = f if kind == "identifier" else f.child_by_field_name("name")
        if ident is not None and ident.type == "identifier":
            b = _resolve(unit, ident, name)
            if b.kind == "tparam":
                return True  # T(0)
    return False


def _unit_callees(unit: "Unit", call: "Node") -> list:
    name, kind = _call_name(unit, call)
    if kind not in ("identifier", "template", "qualified"):
        return []
    return list(_unit_info(unit).functions.get(name, ()))


def _fn_barrier(unit: "Unit", fn_node: "Node", active: set) -> str | None:
    """Why calling this function synchronizes (a description), or None."""
    c = _cache(unit).setdefault("fn_barrier", {})
    if fn_node.id in c:
        return c[fn_node.id]
    if fn_node.id in active:
        return None
    active.add(fn_node.id)
    found = None
    for n in unit.walk(fn_node):
        if n.type in ("call_expression", "gnu_asm_expression"):
            got = _classify_call(unit, n)
            if got is not None:
                found = f"{got[0]}() at line {unit.line_col(n.start_byte)[0]}"
                break
            if n.type == "call_expression":
                for callee in _unit_callees(unit, n):
                    why = _fn_barrier(unit, callee.node, active)
                    if why is not None:
                        found = f"{callee.name}() -> {why}"
                        break
                if found:
                    break
    active.discard(fn_node.id)
    c[fn_node.id] = found
    return found


def barrier_calls(unit: "Unit", fn: "Function") -> list[tuple["Node", str]]:
    """Calls in ``fn`` to functions of the unit that synchronize: (call node, why)."""
    out = []
    for n in unit.walk(fn.node):
        if n.type == "call_expression" and _classify_call(unit, n) is None:
            for callee in _unit_callees(unit, n):
                why = _fn_barrier(unit, callee.node, set())
                if why is not None:
                    out.append((n, f"{callee.name}() holds {why}"))
                    break
    return out


# ----------------------------------------------------------------------- between
def _as_node(x) -> "Node | None":
    if x is None:
        return None
    return x.node if isinstance(x, Barrier) else x


def statements_between(unit: "Unit", a, b) -> list:
    """The statements strictly between ``a`` and ``b`` in their common block.

    ``a``/``b`` are :class:`Barrier` objects or nodes (the statement holding each is
    used); ``None`` stands for the start (``a``) or end (``b``) of the block. When the two
    are not in the same ``compound_statement`` (or both are None) the list is empty.
    """
    na, nb = _as_node(a), _as_node(b)
    if na is None and nb is None:
        return []
    sa = _statement_of(na) if na is not None else None
    sb = _statement_of(nb) if nb is not None else None
    block = (sa or sb).parent
    if block is None or block.type != "compound_statement":
        return []
    if sa is not None and sb is not None and (sb.parent is None or sb.parent.id != block.id):
        return []
    if sa is not None and sb is not None and sa.start_byte > sb.start_byte:
        sa, sb = sb, sa
    out = []
    for ch in block.named_children:
        if ch.type == "comment":
            continue
        if sa is not None and ch.start_byte <= sa.start_byte:
            continue
        if sb is not None and ch.start_byte >= sb.start_byte:
            break
        out.append(ch)
    return out


def _lca(a: "Node", b: "Node") -> "Node | None":
    ids = set()
    p = a
    while p is not None:
        ids.add(p.id)
        p = p.parent
    p = b
    while p is not None:
        if p.id in ids:
            return p
        p = p.parent
    return None


def _path_between(unit: "Unit", a: "Node", b: "Node") -> tuple[list, str | None]:
    """Nodes that may run after ``a`` and before ``b`` on the way from one to the other.

    A loop that holds ``a`` or ``b`` but not both is taken whole (it may go round again).
    Returns (nodes, None) or ([], why) when there is no such path.
    """
    lca = _lca(a, b)
    if lca is None:
        return [], "the two are not in the same tree"
    if lca.id == a.id or lca.id == b.id:
        return [], "one contains the other"
    out = []
    x = a
    while x.parent is not None and x.parent.id != lca.id:
        p = x.parent
        if p.type == "compound_statement":
            out.extend(c for c in p.named_children if c.start_byte >= x.end_byte)
        elif p.type in LOOP_NODE_TYPES:
            out.append(p)
        x = p
    y = b
    while y.parent is not None and y.parent.id != lca.id:
        p = y.parent
        if p.type == "compound_statement":
            out.extend(c for c in p.named_children if c.end_byte <= y.start_byte)
        elif p.type in LOOP_NODE_TYPES:
            out.append(p)
        elif p.type == "if_statement":
            cond = p.child_by_field_name("condition")
            if cond is not None and cond.id != y.id:
                out.append(cond)
        y = p
    if lca.type == "compound_statement":
        out.extend(c for c in lca.named_children
                   if c.start_byte >= x.end_byte and c.end_byte <= y.start_byte)
    elif lca.type in LOOP_NODE_TYPES:
        out.append(lca)
    elif lca.type == "if_statement":
        cons = lca.child_by_field_name("consequence")
        alt = lca.child_by_field_name("alternative")
        if cons is not None and alt is not None and (
                (_is_ancestor(cons, x) and _is_ancestor(alt, y))):
            return [], "the two are on different branches of one if"
    return [c for c in out if c.type != "comment"], None


def barrier_free_between(unit: "Unit", node_a: "Node", node_b: "Node") -> Verdict:
    """Holds when no barrier lies on the straight-line path from ``node_a`` to ``node_b``.

    The two are put in source order. Everything that can run in between counts: the rest
    of ``a``'s blocks, the statements of the common block between them, the start of
    ``b``'s blocks, and whole loops around one but not the other. A call into a device
    function of the unit that synchronizes fails; a call to a function the unit does not
    define (a functor, an external function) makes the answer unknown.
    """
    a, b = _as_node(node_a), _as_node(node_b)
    if a is None or b is None:
        return Verdict.unknown("missing statement")
    if a.start_byte > b.start_byte:
        a, b = b, a
    sa, sb = _statement_of(a), _statement_of(b)
    if sa.id == sb.id:
        return Verdict.yes("both are in the same statement")
    nodes, why = _path_between(unit, sa, sb)
    if why is not None:
        if "different branches" in why:
            return Verdict.yes(f"no path from one to the other: {why}")
        return Verdict.unknown(why)
    la, lb = unit.line_col(sa.start_byte)[0], unit.line_col(sb.start_byte)[0]
    unknown = None
    for top in nodes:
        for n in unit.walk(top):
            if n.type not in ("call_expression", "gnu_asm_expression"):
                continue
            got = _classify_call(unit, n)
            line = unit.line_col(n.start_byte)[0]
            if got is not None:
                return Verdict.no(f"{_norm(unit.text(n))} at line {line} lies between lines "
                                  f"{la} and {lb}")
            if n.type == "gnu_asm_expression":
                continue
            callees = _unit_callees(unit, n)
            if callees:
                for callee in callees:
                    w = _fn_barrier(unit, callee.node, set())
                    if w is not None:
                        return Verdict.no(f"the call {callee.name}() at line {line} "
                                          f"synchronizes ({w})")
                continue
            if not is_builtin_call(unit, n) and unknown is None:
                unknown = f"the call `{_norm(unit.text(n))[:60]}` at line {line} may synchronize"
    if unknown is not None:
        return Verdict.unknown(unknown)
    return Verdict.yes(f"no barrier between lines {la} and {lb}")


# ------------------------------------------------------------------------ divergence
def _exit_guards(unit: "Unit", stmt: "Node", target: "Node") -> list["Node"]:
    """Conditions guarding an early exit inside ``stmt`` that would skip ``target``:
    a ``return``, or a ``break``/``continue`` of a loop around ``target``."""
    out = []
    for n in unit.walk(stmt):
        if n.type not in ("return_statement", "break_statement", "continue_statement"):
            continue
        p = n.parent
        inner_loop = False
        conds = []
        while p is not None and p.id != stmt.parent.id:
            if p.type == "lambda_expression":
                inner_loop = True
                break
            if n.type != "return_statement" and p.type in LOOP_NODE_TYPES + ("switch_statement",) \
                    and _is_ancestor(stmt, p):
                inner_loop = True  # the break/continue belongs to a loop inside stmt
                break
            if p.type == "if_statement":
                c = p.child_by_field_name("condition")
                if c is not None:
                    conds.append(c)
            p = p.parent
        if not inner_loop:
            out.extend(conds)
    return out


def enclosing_conditions(unit: "Unit", node: "Node") -> list[tuple["Node", str]]:
    """The conditions that decide whether ``node`` runs, inside its function, outermost
    first: (condition node, how) with how ``"if"``, ``"loop"``, ``"?:"``, ``"&&"`` or
    ``"exit"`` (the guard of an earlier ``return``/``break``/``continue``)."""
    out: list[tuple["Node", str]] = []
    c, p = node, node.parent
    while p is not None and p.type not in ("function_definition", "lambda_expression"):
        t = p.type
        if t == "if_statement":
            cond = p.child_by_field_name("condition")
            if cond is not None and cond.id != c.id:
                out.append((cond, "if"))
        elif t in ("for_statement", "while_statement", "do_statement"):
            cond = p.child_by_field_name("condition")
            init = p.child_by_field_name("initializer") if t == "for_statement" else None
            if cond is not None and cond.id != c.id and (init is None or init.id != c.id):
                out.append((cond, "loop"))
        elif t == "conditional_expression":
            cond = p.child_by_field_name("condition")
            if cond is not None and cond.id != c.id:
                out.append((cond, "?:"))
        elif t == "binary_expression":
            op = unit.text(p.child_by_field_name("operator"))
            left = p.child_by_field_name("left")
            if op in ("&&", "||") and left is not None and left.id != c.id:
                out.append((left, "&&"))
        elif t == "switch_statement":
            cond = p.child_by_field_name("condition")
            if cond is not None and cond.id != c.id:
                out.append((cond, "if"))
        if t == "compound_statement":
            for ch in p.named_children:
                if ch.start_byte >= c.start_byte:
                    break
                for g in _exit_guards(unit, ch, node):
                    out.append((g, "exit"))
        c, p = p, p.parent
    out.reverse()
    return out


def under_divergent_condition(unit: "Unit", barrier_node) -> Verdict:
    """Holds when a barrier sits under a condition that depends on the thread (a hazard).

    Conditions counted: enclosing ``if``/``?:``/``switch`` conditions, loop conditions
    (a loop whose trip count differs per thread), and guards of earlier early exits
    (``if (i >= n) return;`` before a ``__syncthreads()``). For a block barrier a
    condition is divergent when it depends on ``threadIdx`` (directly, through local
    variables, or through data loaded at a thread-dependent address); for a warp barrier
    (``__syncwarp``, ``tile.sync()``) when it is not warp-uniform. Fails when every such
    condition is uniform; unknown when one depends on a device function's parameter.
    """
    node = _as_node(barrier_node)
    if node is None:
        return Verdict.unknown("no barrier")
    got = _classify_call(unit, node) if node.type in ("call_expression", "gnu_asm_expression") \
        else None
    scope = got[1] if got is not None else "block"
    text = _norm(unit.text(node))
    conds = enclosing_conditions(unit, node)
    if not conds:
        return Verdict.no(f"{text} is not under any condition")
    unknown = None
    if scope == "warp":
        from kltrans.analysis.warps import warp_uniform

        for cond, how in conds:
            v = warp_uniform(unit, cond)
            line = unit.line_col(cond.start_byte)[0]
            if v.fails:
                return Verdict.yes(f"{text} is under `{_cond_text(unit, cond)}` (line {line}), "
                                   f"which is not warp-uniform: {v.reason}")
            if v.is_unknown and unknown is None:
                unknown = f"`{_cond_text(unit, cond)}` (line {line}): {v.reason}"
        if unknown:
            return Verdict.unknown(unknown)
        return Verdict.no(f"every condition around {text} is warp-uniform")
    for cond, how in conds:
        deps = sources(unit, cond)
        thr = sorted(deps & THREAD_SYMBOLS)
        line = unit.line_col(cond.start_byte)[0]
        what = {"exit": "the guard of an earlier exit", "loop": "the loop condition"}.get(how, "")
        ctext = _cond_text(unit, cond)
        if thr:
            return Verdict.yes(f"{text} is under {what + ' ' if what else ''}`{ctext}` (line "
                               f"{line}), which depends on {thr[0]}: threads that skip it "
                               "never arrive")
        if UNKNOWN_DEP in deps and unknown is None:
            unknown = (f"`{ctext}` (line {line}) depends on a parameter of the device function; "
                       "whether it is uniform is decided by the caller")
    if unknown:
        return Verdict.unknown(unknown)
    return Verdict.no(f"every condition around {text} is uniform across the block")


def _cond_text(unit: "Unit", cond: "Node") -> str:
    t = _norm(unit.text(cond))
    if cond.type in ("condition_clause", "parenthesized_expression") and t.startswith("(") \
            and t.endswith(")"):
        t = t[1:-1].strip()
    return t


_call_name = call_name  # the name the package's own modules use
