"""Strided unrolling with batched loads: ``unroll-stride`` (optimize) and its inverse
``reroll-stride`` (simplify).

A grid-stride (or any strided) loop whose iteration loads one value and folds it into
registers::

    for (; i < n; i += stride) {
        const float4 v = xv[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }

gets a main loop in front of it that takes ``F`` iterations per step: first all ``F``
loads into a register array (``F`` independent loads in flight), then the ``F`` folds in
the original order. The original loop stays behind it and finishes the last ``< F``
iterations, so every thread visits the same elements in the same order as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.pattern import Pattern
from kltrans.match.predicates import pure
from kltrans.passes import Bool, Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.launch_facts import define_value
from kltrans.passes.reductions import squash
from kltrans.passes.guard import int_width as _width
from kltrans.passes.rewrite import indent_of as line_indent, norm, shift, statements, used_names

MAX_FACTOR = 16
_L2 = Pattern.compile("for (; $I < $N; $I += $S) $BODY;")
_L1 = Pattern.compile("for (; $C; $I += $S) $BODY;")
_L3 = Pattern.compile("for ($T $I = $E; $I < $N; $I += $S) $BODY;")
_PRIMARY = {"identifier", "number_literal", "field_expression", "subscript_expression",
            "call_expression", "parenthesized_expression"}
VAR_NAMES = ("u", "k", "j", "r")


# ---------------------------------------------------------------------- the loop
@dataclass
class _Loop:
    """``for (; I < N; I += S) { [const] T V = LOAD; REST... }``, or (inline form,
    ``decl`` None) ``for (; I < N; I += S) { STMT(LOAD); }`` with the load inside."""

    node: object
    i: str
    n: object
    s: object
    body: object
    decl: object
    ty: str | None
    var: str | None
    load: object
    rest: list
    init: object = None  # `T i = E;` in the loop header (hoisted before the main loop), or None


_LOAD_KINDS = ("subscript_expression", "pointer_expression", "call_expression")


def _load_base(unit, load) -> str | None:
    """The array name B of a load ``B[i]``, ``*(B + i)``, ``__ldg(B + i)``, ``__ldg(&B[i])``."""
    x = load
    for _ in range(4):
        while x is not None and x.type == "parenthesized_expression":
            x = x.named_children[0] if x.named_children else None
        if x is None:
            return None
        if x.type == "identifier":
            return unit.text(x)
        if x.type == "subscript_expression":
            x = x.child_by_field_name("argument")
        elif x.type == "pointer_expression":
            x = x.child_by_field_name("argument")
        elif x.type == "binary_expression" and unit.text(x.child_by_field_name("operator")) == "+":
            x = x.child_by_field_name("left")
        elif x.type == "call_expression" and re.fullmatch(
                r"__ld\w+", unit.text(x.child_by_field_name("function"))):
            args = [a for a in x.child_by_field_name("arguments").named_children
                    if a.type != "comment"]
            if len(args) != 1:
                return None
            x = args[0]
        else:
            return None
    return None


def _inline_load(unit, sts, i: str):
    """The one load expression at ``i`` inside the statements ``sts``, or why not."""
    uses = [m for st in sts for m in unit.walk(st) if m.type == "identifier" and unit.text(m) == i]
    if not uses:
        return None, f"the body does not use {i}"
    x = uses[0].parent
    while x is not None and not (x.type in _LOAD_KINDS and _load_base(unit, x) is not None
                                 and all(x.start_byte <= u.start_byte and u.end_byte <= x.end_byte
                                         for u in uses)):
        if x.type in ("expression_statement", "compound_statement"):
            x = None
            break
        x = x.parent
    if x is None:
        return None, f"{i} is used outside one load `x[{i}]` of the body"
    if x.type == "pointer_expression" and not unit.text(x).lstrip().startswith("*"):
        return None, f"`{norm(unit.text(x))}` takes an address, it does not load"
    return x, None


def _hoistable(unit, loop, i: str) -> str | None:
    """Why the index declared in ``loop``'s header cannot move before it, or None: the loop
    must be a statement of a block that names ``i`` nowhere else (the hoisted declaration
    would clash with, or capture, another ``i``)."""
    block = loop.parent
    if block is None or block.type != "compound_statement":
        return "the loop is not a statement of a block, where its index could be declared"
    for m in unit.walk(block):
        if m.type == "identifier" and unit.text(m) == i and not (
                loop.start_byte <= m.start_byte < loop.end_byte):
            return (f"{i} is also named at line {unit.line_col(m.start_byte)[0]} of the loop's "
                    f"block: declaring the loop's {i} before the loop would clash with it")
    return None


def _parse_loop(unit, node, fold: bool = False) -> "_Loop | str":
    """The strided loop at ``node``; ``fold``: also ``for (T i = start; ...)``."""
    if node is None or node.type != "for_statement":
        return "not a for loop"
    got = _L2.match(unit, node)
    init = None
    if got is None and fold:
        got = _L3.match(unit, node)
        init = node.child_by_field_name("initializer") if got is not None else None
        if init is not None:
            ds = init.children_by_field_name("declarator")
            if len(ds) != 1 or any(c.type in ("type_qualifier", "storage_class_specifier")
                                   for c in init.children):
                return f"`{norm(unit.text(init))}`: only `for (T i = start; ...)` is supported"
            why = _hoistable(unit, node, unit.text(got["I"]))
            if why:
                return why
    if got is None or got["I"].type != "identifier":
        return ("the loop is not `for (; i < n; i += stride)` over an index declared before it"
                + (" or `for (T i = start; i < n; i += stride)`" if fold else ""))
    i = unit.text(got["I"])
    body = got["BODY"]
    sts = statements(body)
    d = sts[0] if sts else None
    ds = d.children_by_field_name("declarator") if d is not None and d.type == "declaration" \
        else []
    if len(sts) == 1 and d.type == "expression_statement":
        load, why = _inline_load(unit, sts, i)
        if load is None:
            return why
        return _Loop(node, i, got["N"], got["S"], body, None, None, None, load, sts, init)
    if body.type != "compound_statement" or len(sts) < 2:
        return "the loop body is not a block that loads a value and then uses it"
    if len(ds) != 1 or ds[0].type != "init_declarator" or \
            ds[0].child_by_field_name("declarator").type != "identifier":
        return "the loop body does not start with the load `[const] T v = ...;`"
    ty = d.child_by_field_name("type")
    quals = [unit.text(c) for c in d.children if c.type in ("type_qualifier", "storage_class_specifier")]
    if any(q != "const" for q in quals):
        return f"`{norm(unit.text(d))}`: only `[const] T v = load;` is supported"
    var = unit.text(ds[0].child_by_field_name("declarator"))
    load = ds[0].child_by_field_name("value")
    if not any(m.type == "identifier" and unit.text(m) == i for m in unit.walk(load)):
        return f"the first statement does not load at {i}"
    rest = sts[1:]
    for st in rest:
        for m in unit.walk(st):
            if m.type == "identifier" and unit.text(m) == i:
                return (f"`{norm(unit.text(st))[:50]}` uses {i}: after the load the body may use "
                        f"only the loaded value")
    return _Loop(node, i, got["N"], got["S"], body, d, norm(unit.text(ty)), var, load, rest, init)


def _factor_text(f) -> tuple[str, str]:
    """(F - 1, F) as written in the unrolled loop."""
    if isinstance(f, int):
        return str(f - 1), str(f)
    return f"({f} - 1)", str(f)


def _wrap(unit, node) -> str:
    t = unit.text(node)
    return t if node.type in _PRIMARY or re.fullmatch(r"[\w.]+(\s*\*\s*[\w.()]+)*", t) else f"({t})"


def _replace_ident(unit, node, name: str, new_whole: str, new_part: str) -> str:
    """``node``'s text with identifier ``name`` replaced: by ``new_whole`` where it is a
    whole subscript index, elsewhere by ``new_part``."""
    reps = []
    for m in unit.walk(node):
        if m.type == "identifier" and unit.text(m) == name:
            p = m.parent
            whole = p is not None and p.type == "subscript_argument_list" and \
                len([c for c in p.named_children if c.type != "comment"]) == 1
            reps.append((m.start_byte, m.end_byte, new_whole if whole else new_part))
    out, pos = [], node.start_byte
    for s, e, t in sorted(reps):
        out.append(unit.source[pos:s].decode("utf-8"))
        out.append(t)
        pos = e
    out.append(unit.source[pos:node.end_byte].decode("utf-8"))
    return "".join(out)


def unrolled_text(unit, lp: _Loop, factor, var: str, braces: bool, ind: str, st: str,
                  ty: str | None = None, arr: str | None = None) -> str:
    """The main loop that ``unroll-stride`` writes before ``lp`` (no leading indent);
    ``ty``/``arr``: the register array's type and name for the inline form."""
    fm1, f = _factor_text(factor)
    s = _wrap(unit, lp.s)
    n = unit.text(lp.n)
    i = lp.i
    step = f"{i} + {var} * {s}"
    load = _replace_ident(unit, lp.load, i, step, f"({step})")
    i1, i2 = ind + st, ind + st * 2
    ty = ty if lp.decl is None else lp.ty
    arr = arr if lp.decl is None else lp.var
    lines = [f"for (; {i} + {fm1} * {s} < {n}; {i} += {f} * {s}) {{",
             f"{i1}{ty} {arr}[{f}];"]
    head = f"for (int {var} = 0; {var} < {f}; ++{var})"
    first = [f"{arr}[{var}] = {load};"]
    second = []
    for r in lp.rest:
        if lp.decl is None:
            src = unit.source
            t = (src[r.start_byte:lp.load.start_byte].decode("utf-8") + f"{arr}[{var}]" +
                 src[lp.load.end_byte:r.end_byte].decode("utf-8"))
        else:
            t = _replace_ident(unit, r, lp.var, f"{lp.var}[{var}]", f"{lp.var}[{var}]")
        second.append(shift(t, st))
    for part in (first, second):
        if braces or len(part) != 1:
            lines.append(f"{i1}{head} {{")
            lines += [f"{i2}{x}" for x in part]
            lines.append(f"{i1}}}")
        else:
            lines += [f"{i1}{head}", f"{i2}{part[0]}"]
    lines.append(f"{ind}}}")
    return "\n".join(lines)


def _factor_value(unit, f) -> int | None:
    if isinstance(f, int):
        return f
    return define_value(unit, f)


def _local_names(unit, fn) -> set:
    out = set()
    for n in unit.walk(fn.body):
        if n.type == "declaration":
            for d in n.children_by_field_name("declarator"):
                x = d
                while x is not None and x.type not in ("identifier",):
                    x = x.child_by_field_name("declarator")
                if x is not None:
                    out.add(unit.text(x))
    return out


# ------------------------------------------------------------------ preconditions
def _read_only_base(unit, fn, lp: _Loop, ctx) -> str | None:
    """Why the loaded array cannot be written by the body, or None: it points to const,
    the body never names it, and the context says no two pointers overlap."""
    b = _load_base(unit, lp.load)
    if b is None or ctx is None or not ctx.assumed("no_alias", b, "*"):
        return None
    if not _points_to_const(unit, fn, b):
        return None
    for r in lp.rest:
        for m in unit.walk(r):
            if m.type == "identifier" and unit.text(m) == b and not (
                    lp.load.start_byte <= m.start_byte < lp.load.end_byte):
                return None
    return (f"{b} points to const and no pointer overlaps it (no_alias from the context): "
            "the body's writes cannot change what the early loads read")


def _points_to_const(unit, fn, name) -> bool:
    """``name`` is declared ``const T* name`` (a parameter or a local)."""
    for n in unit.walk(fn.node):
        if n.type not in ("declaration", "parameter_declaration"):
            continue
        for d in n.children_by_field_name("declarator"):
            x = d
            while x is not None and x.type != "identifier":
                x = x.child_by_field_name("declarator")
            if x is not None and unit.text(x) == name:
                return any(c.type == "type_qualifier" and unit.text(c) == "const"
                           for c in n.children) or bool(
                    re.match(r"^const\b", unit.text(n.child_by_field_name("type"))))
    return False


def _register_only(unit, fn, lp: _Loop, ctx=None) -> Verdict:
    if not pure(unit, lp.load):
        return Verdict.no(f"the load `{norm(unit.text(lp.load))}` has side effects")
    locals_ = _local_names(unit, fn)
    ro = _read_only_base(unit, fn, lp, ctx)
    for r in lp.rest:
        for m in unit.walk(r):
            line = unit.line_col(m.start_byte)[0]
            if m.type in ("return_statement", "break_statement", "continue_statement",
                          "goto_statement"):
                return Verdict.no(f"a {m.type.split('_')[0]} at line {line} leaves the iteration")
            if m.type == "call_expression" and re.fullmatch(
                    r"__syncthreads\w*|__syncwarp|\w*\.sync", unit.text(m.child_by_field_name("function"))):
                return Verdict.no(f"a barrier at line {line}: the loads would cross it")
            if ro is not None:
                continue
            if m.type == "assignment_expression":
                left = m.child_by_field_name("left")
                if left.type != "identifier" or unit.text(left) not in locals_:
                    return Verdict.no(f"`{norm(unit.text(m))[:50]}` (line {line}) writes memory: "
                                      "the batched loads would run before that write")
                if unit.text(left) == lp.var:
                    return Verdict.no(f"the body assigns the loaded value {lp.var} (line {line})")
            elif m.type == "update_expression":
                arg = m.child_by_field_name("argument")
                if arg is None or arg.type != "identifier" or unit.text(arg) not in locals_:
                    return Verdict.no(f"`{norm(unit.text(m))}` (line {line}) writes memory")
            elif m.type == "call_expression" and not pure(unit, m):
                return Verdict.no(f"the call `{norm(unit.text(m))[:50]}` (line {line}) may have "
                                  "side effects")
    if ro is not None:
        return Verdict.yes(ro)
    return Verdict.yes("each iteration loads, then only updates local variables: the loads of "
                       "several iterations may be issued first")


def _invariant(unit, lp: _Loop) -> Verdict:
    for what, node in (("bound", lp.n), ("stride", lp.s)):
        if not pure(unit, node):
            return Verdict.no(f"the {what} `{norm(unit.text(node))}` has side effects")
        names = {unit.text(m) for m in unit.walk(node) if m.type == "identifier"}
        for m in unit.walk(lp.body):
            if m.type in ("assignment_expression", "update_expression"):
                tgt = m.child_by_field_name("left") or m.child_by_field_name("argument")
                if tgt is not None and unit.text(tgt) in names | {lp.i}:
                    return Verdict.no(f"the body assigns {unit.text(tgt)} (line "
                                      f"{unit.line_col(m.start_byte)[0]}): the {what} or the "
                                      "index changes inside the loop")
    return Verdict.yes(f"{lp.i} advances only by the loop; bound and stride are loop-invariant")


def _site_loop(site) -> "_Loop | str":
    return _parse_loop(site.unit, site.node, fold=True)


def _o_shape(site, ctx) -> Verdict:
    lp = _site_loop(site)
    if isinstance(lp, str):
        return Verdict.no(lp)
    what = lp.var if lp.decl is not None else f"`{norm(site.unit.text(lp.load))}`"
    p = site.pass_
    if lp.decl is None and p is not None and p.type != "auto":
        read = _pointee(site, lp)
        if read is not None and read != norm(p.type):
            return Verdict.no(f"{what} reads {read}: the register array cannot be "
                              f"type={p.type}")
    return Verdict.yes(f"`for (; {lp.i} < {norm(site.unit.text(lp.n))}; {lp.i} += ...)` loads "
                       f"{what} then uses it")


def _o_register(site, ctx) -> Verdict:
    lp = _site_loop(site)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    return _register_only(site.unit, site.function, lp, ctx)


def _o_invariant(site, ctx) -> Verdict:
    lp = _site_loop(site)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    return _invariant(site.unit, lp)


def _index_type_of(unit, fn, name: str) -> str | None:
    for n in unit.walk(fn.node):
        if n.type not in ("declaration", "parameter_declaration"):
            continue
        for d in n.children_by_field_name("declarator"):
            x = d
            while x is not None and x.type != "identifier":
                x = x.child_by_field_name("declarator")
            if x is not None and unit.text(x) == name:
                return norm(unit.text(n.child_by_field_name("type")))
    return None


def _scoped_type_of(unit, fn, name: str, at) -> str | None:
    """The type of the declaration of ``name`` in scope at ``at``: the last one among the
    statements of the blocks enclosing ``at`` that come before it (else any)."""
    anc = set()
    x = at.parent
    while x is not None:
        anc.add(x.id)
        x = x.parent
    best = None
    for n in unit.walk(fn.body):
        if n.type != "declaration" or n.parent is None or n.parent.id not in anc or \
                n.start_byte >= at.start_byte:
            continue
        for d in n.children_by_field_name("declarator"):
            x = d
            while x is not None and x.type != "identifier":
                x = x.child_by_field_name("declarator")
            if x is not None and unit.text(x) == name:
                best = norm(unit.text(n.child_by_field_name("type")))
    return best or _index_type_of(unit, fn, name)


def _o_index_type(site, ctx) -> Verdict:
    lp = _site_loop(site)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    ty = norm(site.unit.text(lp.init.child_by_field_name("type"))) if lp.init is not None \
        else _scoped_type_of(site.unit, site.function, lp.i, lp.node)
    if ty is not None and _width(ty) == 64:
        return Verdict.yes(f"{lp.i} is {ty}: {lp.i} + (F - 1) * stride cannot overflow")
    if ctx.assumed("no_overflow"):
        return Verdict.yes("--assume no_overflow: the look-ahead index does not overflow")
    return Verdict.unknown(f"{lp.i} is {ty or 'of unknown type'}: `{lp.i} + (F - 1) * stride` may "
                           "overflow near the end of a 32-bit range (use a 64-bit index or "
                           "--assume no_overflow)")


def _o_factor(site, ctx) -> Verdict:
    f = site.pass_.factor
    v = _factor_value(site.unit, f)
    if v is None:
        return Verdict.no(f"factor {f} has no known value (a #define or constexpr in the file)")
    if not 2 <= v <= MAX_FACTOR:
        return Verdict.no(f"factor {f} = {v}: the register array holds 2..{MAX_FACTOR} values")
    return Verdict.yes(f"factor {f} = {v}: a {v}-entry register array")


def _var(p, site) -> str:
    if p.var != "auto":
        return p.var
    used = used_names(site.unit, site.function)
    return next((c for c in VAR_NAMES if c not in used), "u_")


ARRAY_NAMES = ("v", "vals", "buf")


def _arr(p, site) -> str:
    if p.array != "auto":
        return p.array
    used = used_names(site.unit, site.function)
    return next((c for c in ARRAY_NAMES if c not in used), "v_")


def _elem_type(p, site, lp) -> str | None:
    """The register array's type of the inline form: the option, or the pointee of the load."""
    if p.type != "auto":
        return p.type
    return _pointee(site, lp)


def _pointee(site, lp) -> str | None:
    """The type the inline form's load reads (None: not known here)."""
    b = _load_base(site.unit, lp.load)
    ty = _index_type_of(site.unit, site.function, b) if b else None
    if ty is None:
        return None
    d = _ptr_depth(site.unit, site.function, b)
    if d != 1:
        return None
    return norm(re.sub(r"\b(const|volatile|__restrict__)\b", " ", ty))


def _ptr_depth(unit, fn, name) -> int | None:
    for n in unit.walk(fn.node):
        if n.type not in ("declaration", "parameter_declaration"):
            continue
        for d in n.children_by_field_name("declarator"):
            x, depth = d, 0
            while x is not None and x.type != "identifier":
                if x.type == "pointer_declarator":
                    depth += 1
                x = x.child_by_field_name("declarator")
            if x is not None and unit.text(x) == name:
                return depth
    return None


def _o_fresh(site, ctx) -> Verdict:
    v = _var(site.pass_, site)
    used = used_names(site.unit, site.function)
    if v in used:
        return Verdict.no(f"the loop variable name {v} is already used in {site.function.name}")
    lp = _site_loop(site)
    if not isinstance(lp, str) and lp.decl is None:
        a = _arr(site.pass_, site)
        if a in used or a == v:
            return Verdict.no(f"the register array name {a} is already used in "
                              f"{site.function.name}")
        if _elem_type(site.pass_, site, lp) is None:
            return Verdict.no(f"the type of `{norm(site.unit.text(lp.load))}` is unknown: give "
                              "type=T")
        return Verdict.yes(f"{v} and {a} are fresh")
    return Verdict.yes(f"{v} is fresh")


@dataclass(frozen=True)
class UnrollStride(Pass):
    """Unroll a strided loop by F, issuing the F loads of a step before the F uses.

    Before::

        size_t i = tid;
        for (; i < nvec; i += nthreads) {
            const float4 v = xv[i];
            acc += (v.x + v.y) + (v.z + v.w);
        }

    After ``unroll-stride{factor=RS_UNROLL}``::

        size_t i = tid;
        for (; i + (RS_UNROLL - 1) * nthreads < nvec; i += RS_UNROLL * nthreads) {
            float4 v[RS_UNROLL];
            for (int u = 0; u < RS_UNROLL; ++u) {
                v[u] = xv[i + u * nthreads];
            }
            for (int u = 0; u < RS_UNROLL; ++u) {
                acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
            }
        }
        for (; i < nvec; i += nthreads) {
            const float4 v = xv[i];
            acc += (v.x + v.y) + (v.z + v.w);
        }

    The main loop runs while F whole iterations remain; the original loop, kept after it,
    finishes the rest, so each thread visits the same elements in the same order (the
    result is bit-identical). ``const`` is dropped from the array. The inner loops have
    constant trip counts (add ``#pragma unroll`` with ``unroll``). Nothing is guarded at
    run time and no fact is needed from the context except with a 32-bit index.

    Accepted anchors: ``for (; i < n; i += s)`` (``i`` declared before the loop, so the
    main loop can hand it on) whose body is ``[const] T v = LOAD(i);`` followed by
    statements that use only ``v`` and update local variables; ``s`` is any loop-invariant
    stride (``nthreads``, ``blockDim.x * gridDim.x``, a constant). Also ``for (T i = S; i
    < n; i += s)`` (what ``grid-stride`` writes by default) when the loop is a statement
    of a block that names ``i`` nowhere else: the declaration ``T i = S;`` is hoisted
    before the main loop and the loop's header keeps ``for (; i < n; i += s)``.

    Preconditions: stride-loop (layout: that shape; a header declaration only when it can
    be hoisted), register-only (storage: the load is
    pure and the rest updates only local variables, so loads may be issued early),
    invariant (pipeline: bound, stride and index change only through the loop),
    index-type (dtype: ``i`` is 64-bit, or ``--assume no_overflow``: the look-ahead
    ``i + (F - 1) * s`` must not wrap), factor-known (hardware: F is 2..16, a literal or a
    ``#define``/``constexpr`` of the file), fresh-names (pipeline: the inner loop variable).

    Options: ``factor`` (2..16 or the name of a constant; default 4), ``var`` (inner loop
    variable; auto: u), ``braces`` (brace the inner loops' one-statement bodies; default
    true).
    """

    name = "unroll-stride"
    kind = "optimize"
    inverse = "reroll-stride"
    scope = "device"
    anchor = Rule(any=(Rule(pattern="for (; $I < $N; $I += $S) $BODY;"),
                       Rule(pattern="for ($T $I = $E; $I < $N; $I += $S) $BODY;")),
                  constraints={"I": {"kind": "identifier"}})
    preconditions = (
        Precondition("stride-loop", "layout",
                     "for (; i < n; i += s) { [const] T v = LOAD(i); uses of v }", _o_shape),
        Precondition("register-only", "storage",
                     "the load is pure and the body updates only local variables",
                     _o_register),
        Precondition("invariant", "pipeline",
                     "bound, stride and index change only through the loop", _o_invariant),
        Precondition("index-type", "dtype",
                     "the index is 64-bit (or --assume no_overflow)", _o_index_type),
        Precondition("factor-known", "hardware",
                     "the factor is a known constant in 2..16", _o_factor),
        Precondition("fresh-names", "pipeline",
                     "the inner loop variable is not used in the function", _o_fresh),
    )

    factor: int | str = option(4, OneOf(IntRange(2, MAX_FACTOR), Identifier(())),
                               "iterations per step: 2..16 or the name of a constant", tune=True)
    var: str = option("auto", Identifier(), "inner loop variable (auto: u)")
    braces: bool = option(True, Bool(), "brace the inner loops' one-statement bodies")
    array: str = option("auto", Identifier(), "register array of the inline form (auto: v)")
    type: str = option("auto", Identifier(), "its element type (auto: the loaded pointee)")

    def rewrite(self, site, ctx):
        unit = site.unit
        lp = _site_loop(site)
        ind = line_indent(unit, lp.node.start_byte)
        st = line_indent(unit, statements(lp.body)[0].start_byte)[len(ind):] or "    "
        ty = arr = None
        if lp.decl is None:
            ty, arr = _elem_type(self, site, lp), _arr(self, site)
        text = unrolled_text(unit, lp, self.factor, _var(self, site), self.braces, ind, st,
                             ty, arr)
        if lp.init is not None:  # hoist `T i = E;`: the main loop hands i on to the loop
            return [Edit.insert(lp.node.start_byte,
                                unit.text(lp.init) + "\n" + ind + text + "\n" + ind),
                    Edit(lp.init.start_byte, lp.init.end_byte, ";")]
        return [Edit.insert(lp.node.start_byte, text + "\n" + ind)]

    def inverse_for(self, site, ctx):
        lp = _site_loop(site)
        return RerollStride(fold=not isinstance(lp, str) and lp.init is not None)


# ------------------------------------------------------------------ reroll-stride
def _unrolled(site):
    """(the main loop's options, the loop after it) or (None, why)."""
    unit, node = site.unit, site.node
    got = _L1.match(unit, node)
    if got is None:
        return None, "not a `for (; cond; i += step)` loop"
    nxt = node.next_named_sibling
    while nxt is not None and nxt.type == "comment":
        nxt = nxt.next_named_sibling
    lp = _parse_loop(unit, nxt)
    if isinstance(lp, str):
        return None, f"the loop after it is not the remainder loop: {lp}"
    sts = statements(got["BODY"])
    if len(sts) != 3 or sts[0].type != "declaration" or sts[1].type != "for_statement":
        return None, "the body is not `T v[F]; for (u...) v[u] = load; for (u...) use(v[u]);`"
    arr = sts[0].children_by_field_name("declarator")
    if len(arr) != 1 or arr[0].type != "array_declarator":
        return None, "the body does not start with the register array `T v[F];`"
    size = arr[0].child_by_field_name("size")
    ftext = unit.text(size).strip() if size is not None else ""
    factor = int(ftext) if ftext.isdigit() else ftext
    if not (isinstance(factor, int) or re.fullmatch(r"[A-Za-z_]\w*", ftext)):
        return None, f"the array extent `{ftext}` is not a literal or a constant's name"
    init = sts[1].child_by_field_name("initializer")
    ds = init.children_by_field_name("declarator") if init is not None and \
        init.type == "declaration" else []
    if len(ds) != 1 or ds[0].type != "init_declarator":
        return None, "the load loop does not declare its variable"
    var = unit.text(ds[0].child_by_field_name("declarator"))
    b1 = sts[1].child_by_field_name("body")
    braces = b1 is not None and b1.type == "compound_statement"
    ind = line_indent(unit, node.start_byte)
    ty = norm(unit.text(sts[0].child_by_field_name("type")))
    arr = unit.text(arr[0].child_by_field_name("declarator"))
    want = unrolled_text(unit, lp, factor, var, braces, ind, "    ", ty, arr)
    if squash(want) != squash(unit.text(node)):
        return None, ("the loop is not the unrolled form of the loop after it (F loads into "
                      "v[F], then F uses of v[u], while F iterations remain)")
    opts = {"factor": factor, "var": var, "braces": braces}
    if lp.decl is None:
        opts.update(array=arr, type=ty)
    if getattr(site.pass_, "fold", False) and _fold_decl(unit, node, lp) is None:
        return None, (f"fold: the statement before the loop is not the declaration `T {lp.i} = "
                      f"start;` that unroll-stride hoisted out of the loop's header, or {lp.i} "
                      "is named elsewhere in the block")
    return (opts, lp), None


def _fold_decl(unit, node, lp):
    """The declaration ``T i = start;`` just before the main loop ``node`` that the
    remainder loop ``lp`` can take back into its header (``i`` named nowhere else in the
    block), else None."""
    d = node.prev_named_sibling
    if d is None or d.type != "declaration":
        return None
    ds = d.children_by_field_name("declarator")
    if len(ds) != 1 or ds[0].type != "init_declarator" or \
            unit.text(ds[0].child_by_field_name("declarator")) != lp.i or \
            any(c.type in ("type_qualifier", "storage_class_specifier") for c in d.children):
        return None
    block = node.parent
    for m in unit.walk(block):
        if m.type == "identifier" and unit.text(m) == lp.i and not (
                d.start_byte <= m.start_byte < lp.node.end_byte):
            return None
    return d


def _s_shape(site, ctx) -> Verdict:
    got, why = _unrolled(site)
    if got is None:
        return Verdict.no(why)
    return Verdict.yes(f"the {got[0]['factor']}-way unrolled form of the loop after it")


def _s_register(site, ctx) -> Verdict:
    got, why = _unrolled(site)
    if got is None:
        return Verdict.unknown(why)
    return _register_only(site.unit, site.function, got[1], ctx)


def _s_invariant(site, ctx) -> Verdict:
    got, why = _unrolled(site)
    if got is None:
        return Verdict.unknown(why)
    return _invariant(site.unit, got[1])


@dataclass(frozen=True)
class RerollStride(Pass):
    """Remove the F-way unrolled main loop in front of a strided loop that does the same.

    Before::

        for (; i + (RS_UNROLL - 1) * nthreads < nvec; i += RS_UNROLL * nthreads) {
            float4 v[RS_UNROLL];
            for (int u = 0; u < RS_UNROLL; ++u) {
                v[u] = xv[i + u * nthreads];
            }
            for (int u = 0; u < RS_UNROLL; ++u) {
                acc += (v[u].x + v[u].y) + (v[u].z + v[u].w);
            }
        }
        for (; i < nvec; i += nthreads) {
            const float4 v = xv[i];
            acc += (v.x + v.y) + (v.z + v.w);
        }

    After ``reroll-stride``::

        for (; i < nvec; i += nthreads) {
            const float4 v = xv[i];
            acc += (v.x + v.y) + (v.z + v.w);
        }

    The remaining loop visits the same elements in the same order (the main loop only
    batched F iterations' loads). Recognized: exactly the main loop ``unroll-stride``
    writes for the loop that follows (factor a literal or a constant's name, any inner
    variable, braced or not); the comparison ignores blanks and comments.

    Preconditions: unrolled-shape (layout), register-only (storage: the remainder's
    body updates only local variables, so early loads were equivalent), invariant
    (pipeline: bound and stride are loop-invariant).

    Options: ``fold`` (default false): also move the declaration ``T i = S;`` that is the
    statement just before the main loop back into the remaining loop's header, ``for (T i
    = S; ...)`` (the exact inverse of unroll-stride on that form; refused under
    unrolled-shape when the statement before is not that declaration or ``i`` is named
    elsewhere in the block). Factor, variable and braces are read from the code;
    ``inverse_for`` passes them to ``unroll-stride``.
    """

    name = "reroll-stride"
    kind = "simplify"
    inverse = "unroll-stride"
    scope = "device"
    anchor = Rule(pattern="for (; $C; $I += $S) $BODY;", constraints={"I": {"kind": "identifier"}})
    preconditions = (
        Precondition("unrolled-shape", "layout",
                     "the loop is unroll-stride's main loop for the loop after it", _s_shape),
        Precondition("register-only", "storage",
                     "the remainder's body updates only local variables", _s_register),
        Precondition("invariant", "pipeline",
                     "bound and stride are loop-invariant", _s_invariant),
    )

    fold: bool = option(False, Bool(), "also move the declaration `T i = start;` just before "
                        "the main loop back into the remaining loop's header (the inverse of "
                        "unroll-stride on `for (T i = start; ...)`)")

    def rewrite(self, site, ctx):
        unit, node = site.unit, site.node
        src = unit.source
        ls = src.rfind(b"\n", 0, node.start_byte) + 1
        nxt = node.next_named_sibling
        if self.fold:
            (_, lp), _ = _unrolled(site)
            d = _fold_decl(unit, node, lp)
            semi = next(c for c in nxt.children if c.type == ";")
            ds = src.rfind(b"\n", 0, d.start_byte) + 1
            ns = src.rfind(b"\n", 0, nxt.start_byte) + 1
            if src[ds:d.start_byte].strip() or src[ns:nxt.start_byte].strip():
                ds, ns = d.start_byte, nxt.start_byte
            return [Edit.delete(ds, ns), Edit(semi.start_byte, semi.end_byte, unit.text(d))]
        if src[ls:node.start_byte].strip() == b"":
            ns = src.rfind(b"\n", 0, nxt.start_byte) + 1
            if src[ns:nxt.start_byte].strip() == b"":
                return [Edit.delete(ls, ns)]
        return [Edit.delete(node.start_byte, nxt.start_byte)]

    def inverse_for(self, site, ctx):
        got, _ = _unrolled(site)
        if got is None:
            return UnrollStride()
        return UnrollStride(**got[0])


__all__ = ["RerollStride", "UnrollStride"]
