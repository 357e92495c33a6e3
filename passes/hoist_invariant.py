"""Loop-invariant loads: ``hoist-invariant`` (optimize) and its inverse ``sink-invariant``
(simplify).

``hoist-invariant`` moves a load whose address does not change inside a loop into a
``const`` local declared right before the loop::

    for (int k = 0; k < n; ++k) acc += w[row * n + k] * scale[row];
    ->
    const float scale_row = scale[row];
    for (int k = 0; k < n; ++k) acc += w[row * n + k] * scale_row;

The compiler does this itself only when it can prove that no store in the loop changes
the loaded memory; across a store through another pointer that may alias, or a call, it
reloads on every iteration. The temporary is named ``<pointer>_<index tokens>``
(``scale[row]`` -> ``scale_row``, ``row_ptr[row + 1]`` -> ``row_ptr_row_1``), which is how
``sink-invariant`` recognizes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.affine import LOOP_NODE_TYPES, Affine, resolve_name, strip_parens
from kltrans.analysis.loops import assigned_in, loop_of
from kltrans.analysis.verdict import Verdict
from kltrans.match import Match, Rule
from kltrans.match.pattern import tokens
from kltrans.passes import Bool, Identifier, Pass, Precondition, Site, option
from kltrans.syntax import Edit

_QUALS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|static|__shared__|"
                    r"__constant__|__device__|register|extern|struct)\b")
_JUMPS = ("return_statement", "goto_statement")
_LOOPISH = LOOP_NODE_TYPES + ("switch_statement",)
_FENCES = {"__threadfence", "__threadfence_block", "__threadfence_system"}


# ----------------------------------------------------------------------- helpers
def _loop_role(node):
    """(innermost loop holding ``node``, "cond" | "body" | None for init/update)."""
    child, p = node, node.parent
    while p is not None and p.type not in ("function_definition", "lambda_expression"):
        if p.type in LOOP_NODE_TYPES:
            if p.type == "for_range_loop":
                return None, None
            body = p.child_by_field_name("body")
            cond = p.child_by_field_name("condition")
            if body is not None and child.id == body.id:
                return p, "body"
            if cond is not None and child.id == cond.id:
                return p, "cond"
            return p, None
        child, p = p, p.parent
    return None, None


def _is_load(unit, node) -> bool:
    """``P[i]`` with P an identifier and one index, read as a value (not written, not
    address-taken, not an array row of a multi-dimensional access)."""
    if node.type != "subscript_expression":
        return False
    arg = node.child_by_field_name("argument")
    idx = node.child_by_field_name("indices")
    if arg is None or arg.type != "identifier" or idx is None:
        return False
    if len([c for c in idx.named_children if c.type != "comment"]) != 1:
        return False
    child, p = node, node.parent
    while p is not None and p.type == "parenthesized_expression":
        child, p = p, p.parent
    if p is None:
        return False
    if p.type == "assignment_expression" and p.child_by_field_name("left").id == child.id:
        return False
    if p.type == "update_expression":
        return False
    if p.type == "pointer_expression" and unit.text(p.child_by_field_name("operator")) == "&":
        return False
    if p.type == "subscript_expression" and p.child_by_field_name("argument").id == child.id:
        return False
    if p.type == "field_expression" and p.child_by_field_name("argument").id == child.id:
        # x[i].f = v writes x; x[i].f as a value is a load of a member only
        return False
    return True


def _index(node):
    idx = node.child_by_field_name("indices")
    return [c for c in idx.named_children if c.type != "comment"][0]


def _idents(unit, node):
    """Identifier nodes of an expression that name variables (not callees, not fields)."""
    out = []
    for n in unit.walk(node):
        if n.type != "identifier":
            continue
        p = n.parent
        if p is not None and p.type == "call_expression" and \
                p.child_by_field_name("function").id == n.id:
            continue
        out.append(n)
    return out


def scheme_name(unit, load) -> str:
    """The temporary's name: ``<pointer>_<identifiers and literals of the index>``."""
    base = unit.text(load.child_by_field_name("argument"))
    parts = []
    for typ, txt in tokens(unit, _index(load)):
        if typ in ("identifier", "field_identifier", "number_literal"):
            clean = re.sub(r"\W", "", txt)
            if clean:
                parts.append(clean)
    return "_".join([base] + parts)


def _line_indent(unit, offset: int) -> tuple[str, bool]:
    """(indentation of the line holding ``offset``, whether only blanks precede it)."""
    src = unit.source
    start = src.rfind(b"\n", 0, offset) + 1
    end = src.find(b"\n", start)
    line = src[start:end if end >= 0 else len(src)].decode("utf-8", "replace")
    indent = line[:len(line) - len(line.lstrip(" \t"))]
    return indent, src[start:offset].strip() == b""


def _pointee(unit, ident):
    """(element type text, levels, binding, why) of the array or pointer ``ident`` names."""
    name = unit.text(ident)
    b = resolve_name(unit, ident, name)
    if b.decl is None or b.ident is None or b.kind not in ("param", "local", "global",
                                                           "global_const"):
        return None, 0, b, f"{name} is not declared in this file"
    ty = b.decl.child_by_field_name("type")
    if ty is None:
        return None, 0, b, f"the type of {name} is not written"
    levels = 0
    p = b.ident.parent
    while p is not None and p.id != b.decl.id:
        if p.type in ("pointer_declarator", "array_declarator"):
            levels += 1
        p = p.parent
    text = " ".join(_QUALS.sub(" ", unit.text(ty)).split())
    if text in ("auto", "") or "auto" in text.split():
        return None, levels, b, f"{name} is declared auto: its element type is not written"
    return text, levels, b, ""


def _decl_quals(unit, decl) -> set:
    return {unit.text(c) for c in decl.children
            if c.type in ("type_qualifier", "storage_class_specifier")}


# --------------------------------------------------------------- memory objects
class _Memory:
    """Which memory objects (pointer parameters, arrays) an expression may refer to."""

    def __init__(self, unit, fn):
        from kltrans.analysis.pointers import Aliases

        self.unit = unit
        self.fn = fn
        self.params = [p.name for p in fn.params if p.name and (p.pointer > 0 or p.array)]
        self.aliases = Aliases(unit, fn.node, self.params)

    def of_ident(self, ident) -> set | None:
        """Objects the variable may point into / be; set() for a private scalar; None when
        the analysis cannot say."""
        unit = self.unit
        name = unit.text(ident)
        b = resolve_name(unit, ident, name)
        if b.kind == "param":
            return {name} if name in self.params else set()
        if b.kind in ("global", "global_const"):
            return {f"global:{name}"}
        if b.kind != "local" or b.decl is None or b.ident is None:
            return None
        quals = _decl_quals(unit, b.decl)
        levels, arrays = 0, 0
        p = b.ident.parent
        while p is not None and p.id != b.decl.id:
            if p.type == "pointer_declarator":
                levels += 1
            elif p.type == "array_declarator":
                arrays += 1
            p = p.parent
        if "__shared__" in quals:
            return {f"shared:{name}"}
        if arrays:
            return {f"local:{name}"}
        if levels:
            pts = self.aliases.points.get(name)
            return set(pts) if pts else None
        return set()

    def of(self, node, depth: int = 0) -> set | None:
        """Objects a pointer-valued or lvalue expression refers into."""
        node = strip_parens(node)
        if node is None or depth > 30:
            return None
        t = node.type
        u = self.unit
        if t == "identifier":
            return self.of_ident(node)
        if t == "subscript_expression":
            return self.of(node.child_by_field_name("argument"), depth + 1)
        if t == "field_expression":
            return self.of(node.child_by_field_name("argument"), depth + 1)
        if t == "pointer_expression":
            return self.of(node.child_by_field_name("argument"), depth + 1)
        if t == "cast_expression":
            return self.of(node.child_by_field_name("value"), depth + 1)
        if t == "binary_expression" and u.text(node.child_by_field_name("operator")) in "+-":
            out: set = set()
            for side in ("left", "right"):
                got = self.of(node.child_by_field_name(side), depth + 1)
                if got is None:
                    return None
                out |= got
            return out
        if t == "call_expression":
            from kltrans.analysis.barriers import call_name

            name, kind = call_name(u, node)
            args = node.child_by_field_name("arguments")
            argl = [a for a in args.named_children if a.type != "comment"] if args else []
            if kind == "template" and name in ("reinterpret_cast", "static_cast",
                                               "const_cast") and len(argl) == 1:
                return self.of(argl[0], depth + 1)
            return None
        if t in ("number_literal", "null", "nullptr"):
            return set()
        return None

    def stores(self, region):
        """(node, objects or None, description) for every write to memory in ``region``."""
        from kltrans.analysis.barriers import call_name, is_builtin_call
        from kltrans.analysis.pointers import ATOMICS, OUT_PARAMS, STORES, written_positions
        from kltrans.analysis.affine import unit_info

        u = self.unit
        out = []
        for n in u.walk(region):
            t = n.type
            if t in ("assignment_expression", "update_expression"):
                tgt = strip_parens(n.child_by_field_name(
                    "left" if t == "assignment_expression" else "argument"))
                objs = self.of(tgt)
                if tgt is not None and tgt.type == "identifier" and objs is not None and \
                        not any(":" in o for o in objs):
                    continue  # a private scalar or a pointer variable moving
                if objs:
                    out.append((n, objs, "store"))
                elif objs is None:
                    out.append((n, None, "store"))
            elif t == "call_expression":
                name, kind = call_name(u, n)
                args = n.child_by_field_name("arguments")
                argl = [a for a in args.named_children if a.type != "comment"] if args else []
                base = name.split("_block")[0].split("_system")[0]
                if base in ATOMICS or name in STORES or name.startswith("atomic"):
                    if argl:
                        out.append((n, self.of(argl[0]), "atomic" if name.startswith("atomic")
                                    else "store"))
                    continue
                if name in OUT_PARAMS:
                    for i in OUT_PARAMS[name]:
                        if i < len(argl):
                            out.append((n, self.of(argl[i]), "store"))
                    continue
                callees = unit_info(u).functions.get(name, ()) if kind in (
                    "identifier", "template", "qualified") else ()
                if callees:
                    for i, a in enumerate(argl):
                        objs = self.of(a)
                        if not objs and objs is not None:
                            continue
                        ws = [written_positions(u, c, set()).get(i, False) for c in callees]
                        if any(w is True for w in ws) or any(w is None for w in ws):
                            out.append((n, objs, "call"))
                    continue
                if is_builtin_call(u, n):
                    continue
                if argl:
                    out.append((n, None, "call"))
            elif t == "gnu_asm_expression":
                out.append((n, None, "asm"))
        return out


def _has_sync(unit, fn, region) -> str | None:
    from kltrans.analysis.barriers import barrier_calls, barriers

    s, e = region.start_byte, region.end_byte
    for b in barriers(unit, fn):
        if s <= b.node.start_byte < e:
            return f"{b.text} at line {b.line}"
    for node, why in barrier_calls(unit, fn):
        if s <= node.start_byte < e:
            return why
    for n in unit.walk(region):
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            if f is not None and unit.text(f) in _FENCES:
                return f"{unit.text(f)}() at line {unit.line_col(n.start_byte)[0]}"
    return None


def _no_aliasing_store(unit, fn, ctx, load, loop, verb: str) -> Verdict:
    """Nothing in (or, with a barrier, around) ``loop`` may change what ``load`` reads."""
    mem = _Memory(unit, fn)
    ptr = load.child_by_field_name("argument")
    pname = unit.text(ptr)
    lobjs = mem.of(ptr)
    if lobjs is None:
        return Verdict.unknown(f"kltrans cannot tell what {pname} points to")
    if not lobjs:
        return Verdict.unknown(f"{pname} is not an array or pointer kltrans can follow")
    # nested loads in the index: each of their pointers must be stable as well
    for n in unit.walk(_index(load)):
        if _is_load(unit, n):
            inner = mem.of(n.child_by_field_name("argument"))
            if inner is None:
                return Verdict.unknown(f"kltrans cannot tell what "
                                       f"{unit.text(n.child_by_field_name('argument'))} points to")
            lobjs = lobjs | inner
    sync = _has_sync(unit, fn, loop)
    region = fn.node if sync else loop
    for node, sobjs, what in mem.stores(region):
        line = unit.line_col(node.start_byte)[0]
        text = " ".join(unit.text(node).split())[:60]
        if sobjs is None:
            return Verdict.unknown(f"a {what} at line {line} (`{text}`) writes memory kltrans "
                                   f"cannot name")
        for lo in sorted(lobjs):
            for so in sorted(sobjs):
                if lo == so:
                    where = (f"the kernel writes {lo.split(':')[-1]} at line {line} and the loop "
                             f"holds {sync}: other threads' writes become visible between "
                             f"iterations") if sync else \
                        f"the loop writes {lo.split(':')[-1]} at line {line} (`{text}`)"
                    return Verdict.no(f"{where}: {verb} would read a stale value")
                if ":" in lo or ":" in so:
                    continue  # distinct arrays, or an array and a pointer parameter
                if ctx.assumed("no_alias", lo, so):
                    continue
                from kltrans.analysis.pointers import may_alias

                if may_alias(unit, fn, lo, so).fails:
                    continue
                return Verdict.unknown(f"{lo} and {so} may alias and the "
                                       f"{'kernel' if sync else 'loop'} writes {so} at line "
                                       f"{line}: pass --assume no_alias({lo},{so})")
    if not sync:
        # atomics elsewhere: other threads may update the memory while the loop runs
        for node, sobjs, what in mem.stores(fn.node):
            if what == "atomic" and sobjs and sobjs & lobjs:
                line = unit.line_col(node.start_byte)[0]
                return Verdict.no(f"other threads update {pname} atomically (line {line}) "
                                  f"while the loop runs")
    scope = "the kernel (the loop synchronizes)" if sync else "the loop"
    return Verdict.yes(f"no store in {scope} can reach {', '.join(sorted(lobjs))}")


def _invariant_in(unit, expr, loop, what: str) -> Verdict:
    from kltrans.match.predicates import pure

    if not pure(unit, expr):
        return Verdict.no(f"{what} has side effects (an assignment, increment or call)")
    for ident in _idents(unit, expr):
        nm = unit.text(ident)
        b = resolve_name(unit, ident, nm)
        if b.kind == "local" and b.decl is not None and \
                loop.start_byte <= b.decl.start_byte < loop.end_byte:
            return Verdict.no(f"{nm} is declared inside the loop")
        if assigned_in(unit, loop, nm):
            lp = loop_of(unit, loop)
            why = "the loop variable" if lp is not None and lp.var == nm else "assigned in the loop"
            return Verdict.no(f"{what} depends on {nm}, {why}")
        if b.decl is not None and "volatile" in _decl_quals(unit, b.decl):
            return Verdict.no(f"{nm} is volatile: every read must happen")
    return Verdict.yes(f"{what} depends on nothing the loop changes")


# ------------------------------------------------------------------ preconditions
def _invariant(site, ctx) -> Verdict:
    b = site.match.bindings
    return _invariant_in(site.unit, site.node, b["LOOP"], site.unit.text(site.node))


def _type_known(site, ctx) -> Verdict:
    unit = site.unit
    ty, levels, _, why = _pointee(unit, site.node.child_by_field_name("argument"))
    if ty is None:
        return Verdict.unknown(why)
    if levels != 1:
        return Verdict.no(f"{unit.text(site.node)} is not a scalar element "
                          f"({levels} levels of pointers/arrays)")
    return Verdict.yes(f"{unit.text(site.node)} is {ty}")


def _storage(site, ctx) -> Verdict:
    return _no_aliasing_store(site.unit, site.function, ctx, site.node, site.match.bindings["LOOP"],
                              "the hoisted load")


def _guard(unit, node, stop) -> str | None:
    """The condition that decides whether ``node`` runs, below ``stop``, or None."""
    child, p = node, node.parent
    while p is not None and p.id != stop.id:
        t = p.type
        if t == "if_statement":
            c = p.child_by_field_name("condition")
            if c is None or child.id != c.id:
                return f"if {' '.join(unit.text(c).split())}" if c is not None else "an if"
        elif t == "conditional_expression":
            c = p.child_by_field_name("condition")
            if c is None or child.id != c.id:
                return f"the ?: on {' '.join(unit.text(c).split())}"
        elif t == "binary_expression":
            op = unit.text(p.child_by_field_name("operator"))
            if op in ("&&", "||") and p.child_by_field_name("right").id == child.id:
                return f"the right side of {op}"
        elif t in ("switch_statement", "case_statement") or t in LOOP_NODE_TYPES:
            return f"a {t.replace('_statement', '')}"
        child, p = p, p.parent
    return None


def _unguarded(site, ctx) -> Verdict:
    unit = site.unit
    b = site.match.bindings
    loop, role = b["LOOP"], b["ROLE"]
    stop = loop
    g = _guard(unit, site.node, stop)
    if g is not None:
        return Verdict.no(f"the load runs only under {g}: hoisting would execute it where "
                          f"the original may not")
    if role == "body":
        for n in unit.walk(loop.child_by_field_name("body")):
            if n.start_byte >= site.node.start_byte:
                break
            jump = n.type in _JUMPS
            if n.type in ("break_statement", "continue_statement"):
                p = n.parent
                while p is not None and p.type not in _LOOPISH:
                    p = p.parent
                jump = p is not None and p.id == loop.id
            if jump:
                return Verdict.no(f"a {n.type.replace('_statement', '')} at line "
                                  f"{unit.line_col(n.start_byte)[0]} may skip the load")
    return Verdict.yes("the load runs on every iteration" if role == "body"
                       else "the load is part of the loop condition")


def _lower_bound(ctx, a: Affine) -> int | None:
    """A lower bound of an integer expression from --assume facts, or None."""
    if a is None:
        return None
    if a.is_const():
        return a.value()
    syms = a.symbols()
    if len(syms) != 1:
        return None
    sym = next(iter(syms))
    k = a.coeff(sym)
    if k is None or not k.is_const() or k.value() <= 0 or a.degree() != 1:
        return None
    lb = None
    if sym in ctx.sizes:
        lb = ctx.sizes[sym]
    for f in ctx.assumptions:
        if len(f.args) == 2 and f.args[0] == sym:
            try:
                v = int(f.args[1])
            except ValueError:
                continue
            cand = {"ge": v, "gt": v + 1, "eq": v}.get(f.name)
            if cand is not None:
                lb = cand if lb is None else max(lb, cand)
    if lb is None:
        return None
    return k.value() * lb + a.without(sym).value() if a.without(sym).is_const() else None


def _same_before(site) -> str | None:
    """A statement before the loop, in its block, that executes the same load unguarded."""
    unit = site.unit
    loop = site.match.bindings["LOOP"]
    want = tokens(unit, site.node)
    names = {unit.text(i) for i in _idents(unit, site.node)}
    stmt = loop.prev_named_sibling
    between = []
    while stmt is not None:
        if stmt.type != "comment":
            for n in unit.walk(stmt):
                if n.type == "subscript_expression" and tokens(unit, n) == want and \
                        _guard(unit, n, stmt) is None:
                    if not any(assigned_in(unit, s, nm) for s in [stmt] + between for nm in names):
                        return f"line {unit.line_col(stmt.start_byte)[0]}"
            between.append(stmt)
        stmt = stmt.prev_named_sibling
    return None


def _runs_once(site, ctx) -> Verdict:
    unit = site.unit
    b = site.match.bindings
    loop_node, role = b["LOOP"], b["ROLE"]
    if role == "cond":
        return Verdict.yes("the loop condition is evaluated at least once")
    if loop_node.type == "do_statement":
        return Verdict.yes("a do loop runs its body at least once")
    lp = loop_of(unit, loop_node)
    n = None
    if lp is not None:
        n = lp.trip_count if lp.trip_count is not None else lp.trip_count_known_with(dict(ctx.sizes))
    if n is not None:
        if n >= 1:
            return Verdict.yes(f"the loop runs {n} times")
        return Verdict.no("the loop never runs: hoisting would add a load the original never makes")
    if lp is not None and lp.init is not None and lp.bound is not None and lp.cond_op in (
            "<", "<=", ">", ">="):
        diff = lp.bound - lp.init if lp.cond_op in ("<", "<=") else lp.init - lp.bound
        need = 1 if lp.cond_op in ("<", ">") else 0
        lb = _lower_bound(ctx, diff)
        if lb is not None and lb >= need:
            return Verdict.yes(f"the loop runs at least once ({lp.init} {lp.cond_op} "
                               f"{lp.bound} on entry, from the assumptions)")
    before = _same_before(site)
    if before is not None:
        return Verdict.yes(f"the same load already runs before the loop ({before}), so it is "
                           f"in bounds")
    cond = loop_node.child_by_field_name("condition")
    ctext = " ".join(unit.text(cond).split()) if cond is not None else "?"
    hint = ""
    if lp is not None and lp.bound_node is not None:
        hint = f"; pass --assume '{' '.join(unit.text(lp.bound_node).split())}>=1' or similar"
    return Verdict.unknown(f"the loop may run zero times ({ctext}): the hoisted load would then "
                           f"run where the original runs none, possibly out of bounds{hint}")


def _in_block(site, ctx) -> Verdict:
    loop = site.match.bindings["LOOP"]
    p = loop.parent
    if p is not None and p.type == "compound_statement":
        return Verdict.yes("the loop is a statement of a { } block")
    what = p.type.replace("_statement", "").replace("_clause", "") if p is not None else "?"
    return Verdict.no(f"the loop is the unbraced body of {what}: there is no block to declare "
                      f"the temporary in")


def _taken_names(unit, fn) -> set:
    from kltrans.analysis.affine import unit_info

    info = unit_info(unit)
    used = {unit.text(n) for n in unit.walk(fn.node)
            if n.type in ("identifier", "type_identifier")}
    used |= set(info.macros) | set(info.globals) | set(info.functions) | set(info.typedefs)
    used |= {t.name for t in fn.template_params if t.name}
    return used


def _fresh(site, ctx) -> Verdict:
    b = site.match.bindings
    name = b["NAME"]
    if b.get("TAKEN_BY"):
        return Verdict.no(f"{name} is also the temporary of site {b['TAKEN_BY']} in "
                          f"{site.function.name}")
    if name in _taken_names(site.unit, site.function):
        return Verdict.no(f"{name} is already a name in {site.function.name} or the file")
    return Verdict.yes(f"{name} is a fresh name")


# ------------------------------------------------------------------------ passes
@dataclass(frozen=True)
class HoistInvariant(Pass):
    """Hoist a loop-invariant load into a ``const`` local declared before the loop.

    Before::

        for (int k = 0; k < n; ++k) {
          acc += w[row * n + k] * scale[row];
        }

    After ``hoist-invariant`` (with ``--assume 'n>=1'``)::

        const float scale_row = scale[row];
        for (int k = 0; k < n; ++k) {
          acc += w[row * n + k] * scale_row;
        }

    Sites: a load ``P[i]`` (``P`` a pointer or array variable, one index, read as a
    value) in the body or the condition of its innermost loop whose index does not name
    the loop's induction variable. Every token-identical load in that loop is replaced.
    The temporary is ``<P>_<identifiers and literals of i>`` (``temp=auto``) or the name
    given.

    Preconditions: invariant (pipeline: the load names nothing the loop assigns or
    declares, nothing volatile, no side effects), type-known (dtype: ``P``'s element
    type is written in its declaration and ``P[i]`` is a scalar element), no-aliasing-store
    (storage: no store in the loop can reach the memory read: the loop stores nothing
    through ``P``, and every other pointer it stores through is ``__restrict__``, of a
    different element size, or assumed apart with ``--assume no_alias(P,Q)``; arrays are
    distinct objects; when the loop holds a barrier or fence, the same must hold for every
    store of the kernel, since other threads' writes become visible between iterations;
    no atomics on ``P`` anywhere), unguarded (pipeline: the load is not under an ``if``,
    ``?:``, ``&&``/``||`` or ``switch`` inside the loop, and no break, continue, return or
    goto comes before it in the body, so it runs on the first iteration),
    runs-at-least-once (pipeline: executing the load before the loop is safe: the load
    is in the loop condition, or the loop is a do loop, or its trip count is known and
    at least 1, or ``--assume`` bounds make the condition true on entry (``n>=1`` for
    ``k = 0; k < n``), or the same load already runs unguarded in an earlier statement
    of the block), in-block (pipeline: the loop is a statement of a ``{ }`` block),
    fresh-name (pipeline: the temporary's name is unused in the function and the file,
    and no other site of the run takes it).

    Options: ``temp`` (the temporary's name: ``auto`` for ``<P>_<index tokens>``, or an
    identifier; default ``auto``), ``const`` (declare the temporary ``const``; default
    true).

    Limits: one load per loop per run (a second site of the same loop inserts at the same
    place and is deferred: run the pass again); multi-dimensional arrays and loads through
    casts or member accesses are not sites; integer address arithmetic is left to the
    compiler, which hoists it on its own (no memory is involved).

    Round trip: ``sink-invariant`` with the same ``temp`` gives the original back.
    """

    name = "hoist-invariant"
    kind = "optimize"
    inverse = "sink-invariant"
    scope = "device"
    anchor = Rule(kind="subscript_expression")
    preconditions = (
        Precondition("invariant", "pipeline",
                     "the load's address depends on nothing the loop changes", _invariant),
        Precondition("type-known", "dtype",
                     "the element type is written, for the temporary's declaration",
                     _type_known),
        Precondition("no-aliasing-store", "storage",
                     "no store in the loop (or, with a barrier, in the kernel) can change "
                     "the memory read", _storage),
        Precondition("unguarded", "pipeline",
                     "the load runs on every iteration (no guard, no earlier exit)",
                     _unguarded),
        Precondition("runs-at-least-once", "pipeline",
                     "the loop runs at least once, or the load already runs before it",
                     _runs_once),
        Precondition("in-block", "pipeline",
                     "the loop is a statement of a { } block", _in_block),
        Precondition("fresh-name", "pipeline",
                     "the temporary's name is not taken", _fresh),
    )

    temp: str = option("auto", Identifier(), "the temporary's name (auto: <P>_<index tokens>)")
    const: bool = option(True, Bool(), "declare the temporary const")

    def sites(self, unit, ctx):
        groups: dict = {}
        order = []
        for s in super().sites(unit, ctx):
            node = s.node
            if not _is_load(unit, node):
                continue
            loop, role = _loop_role(node)
            if loop is None or role is None:
                continue
            lp = loop_of(unit, loop)
            if lp is not None and lp.var is not None and \
                    any(unit.text(i) == lp.var for i in _idents(unit, node)):
                continue  # varies with the induction variable: not a candidate
            key = (loop.id, tokens(unit, node))
            if key not in groups:
                groups[key] = (s, loop, role)
                order.append(key)
        out = []
        taken: dict = {}
        for key in order:
            s, loop, role = groups[key]
            occ = tuple(n for n in unit.walk(loop) if n.type == "subscript_expression"
                        and tokens(unit, n) == key[1] and _is_load(unit, n))
            name = scheme_name(unit, s.node) if self.temp == "auto" else self.temp
            fkey = (s.function.node.id if s.function else None, name)
            idx = len(out) + 1
            m = Match(unit, s.node, {"LOOP": loop, "ROLE": role, "OCC": occ, "NAME": name,
                                     "TAKEN_BY": taken.get(fkey)})
            taken.setdefault(fkey, idx)
            out.append(Site(unit, m, s.function, idx, self))
        return out

    def rewrite(self, site, ctx):
        from kltrans.syntax.cuda import pragmas_for

        unit = site.unit
        b = site.match.bindings
        loop = b["LOOP"]
        ty, _, _, _ = _pointee(unit, site.node.child_by_field_name("argument"))
        decl = f"{'const ' if self.const else ''}{ty} {b['NAME']} = {unit.text(site.node)};"
        start = min([p.start for p in pragmas_for(unit, loop)] + [loop.start_byte])
        indent, alone = _line_indent(unit, start)
        if alone:
            line_start = unit.source.rfind(b"\n", 0, start) + 1
            edits = [Edit.insert(line_start, f"{indent}{decl}\n")]
        else:
            edits = [Edit.insert(start, f"{decl} ")]
        edits += [Edit.replace(n, b["NAME"]) for n in b["OCC"]]
        return edits

    def inverse_for(self, site, ctx):
        return SinkInvariant(temp=self.temp)


# ----------------------------------------------------------------------- inverse
def _temp_decl(unit, node):
    """(name ident, load) when ``node`` is ``[const] T NAME = P[i];``, else None."""
    if node.type != "declaration":
        return None
    quals = _decl_quals(unit, node)
    if quals - {"const"}:
        return None
    ds = node.children_by_field_name("declarator")
    if len(ds) != 1 or ds[0].type != "init_declarator":
        return None
    d, v = ds[0].child_by_field_name("declarator"), ds[0].child_by_field_name("value")
    if d is None or d.type != "identifier" or v is None or not _is_load(unit, v):
        return None
    return d, v


def _uses(unit, fn, ident):
    name = unit.text(ident)
    key = resolve_name(unit, ident, name).key
    return [n for n in unit.walk(fn.node) if n.type == "identifier" and n.id != ident.id
            and unit.text(n) == name and resolve_name(unit, n, name).key == key]


def _used_only_in_loop(site, ctx) -> Verdict:
    unit = site.unit
    b = site.match.bindings
    ident, loop = b["IDENT"], b["LOOP"]
    name = unit.text(ident)
    uses = _uses(unit, site.function, ident)
    inside = [u for u in uses if loop.start_byte <= u.start_byte < loop.end_byte]
    outside = [u for u in uses if u not in inside]
    if outside:
        return Verdict.no(f"{name} is also used at line {unit.line_col(outside[0].start_byte)[0]}, "
                          f"outside the loop")
    if not inside:
        return Verdict.no(f"{name} is not used in the loop")
    if assigned_in(unit, site.function.node, name):
        return Verdict.no(f"{name} is assigned or its address is taken")
    for u in inside:
        lp, role = _loop_role(u)
        if lp is None or lp.id != loop.id and not (loop.start_byte <= lp.start_byte < loop.end_byte):
            return Verdict.no(f"{name} is used in the loop header outside its condition")
        if lp.id == loop.id and role is None:
            return Verdict.no(f"{name} is used in the loop's initializer or update")
    return Verdict.yes(f"{name} is used {len(inside)} time(s), all inside the loop")


def _still_invariant(site, ctx) -> Verdict:
    b = site.match.bindings
    return _invariant_in(site.unit, b["LOAD"], b["LOOP"], site.unit.text(b["LOAD"]))


def _sink_storage(site, ctx) -> Verdict:
    b = site.match.bindings
    return _no_aliasing_store(site.unit, site.function, ctx, b["LOAD"], b["LOOP"],
                              "the sunk load")


def _same_type(site, ctx) -> Verdict:
    unit = site.unit
    b = site.match.bindings
    decl = site.node
    declared = " ".join(_QUALS.sub(" ", unit.text(decl.child_by_field_name("type"))).split())
    ty, levels, _, why = _pointee(unit, b["LOAD"].child_by_field_name("argument"))
    if ty is None:
        return Verdict.unknown(why)
    if levels != 1:
        return Verdict.no(f"{unit.text(b['LOAD'])} is not a scalar element")
    if declared != ty:
        return Verdict.no(f"{unit.text(b['IDENT'])} is {declared} but {unit.text(b['LOAD'])} is "
                          f"{ty}: sinking would drop the conversion")
    return Verdict.yes(f"both are {ty}")


@dataclass(frozen=True)
class SinkInvariant(Pass):
    """Sink a ``const`` local holding a load back into the loop that uses it.

    Before::

        const float scale_row = scale[row];
        for (int k = 0; k < n; ++k) {
          acc += w[row * n + k] * scale_row;
        }

    After ``sink-invariant``::

        for (int k = 0; k < n; ++k) {
          acc += w[row * n + k] * scale[row];
        }

    Sites: a declaration ``[const] T NAME = P[i];`` followed, in its block, by a loop
    (possibly after other such declarations), with ``NAME`` following the
    ``hoist-invariant`` scheme ``<P>_<index tokens>`` (``temp=auto``), any name
    (``temp=any``) or the name given. The declaration is deleted and every use of
    ``NAME`` in the loop becomes ``P[i]``.

    Preconditions: used-only-in-loop (pipeline: ``NAME`` is used only in the loop's
    body or condition, at least once, and never assigned or address-taken),
    still-invariant (pipeline: nothing in the loop changes what ``P[i]`` names),
    no-aliasing-store (storage: no store in the loop, or with a barrier in the kernel,
    can change the memory read; the same check as ``hoist-invariant``), same-type (dtype:
    ``T`` is ``P``'s element type, so no conversion is lost).

    Options: ``temp`` (which temporaries: ``auto``, names that follow the hoist scheme;
    ``any``, every such temporary; or one identifier).
    """

    name = "sink-invariant"
    kind = "simplify"
    inverse = "hoist-invariant"
    scope = "device"
    anchor = Rule(kind="declaration")
    preconditions = (
        Precondition("used-only-in-loop", "pipeline",
                     "the temporary is used only inside the loop, and never written",
                     _used_only_in_loop),
        Precondition("still-invariant", "pipeline",
                     "the loop changes nothing the load's address depends on",
                     _still_invariant),
        Precondition("no-aliasing-store", "storage",
                     "no store in the loop can change the memory read", _sink_storage),
        Precondition("same-type", "dtype",
                     "the temporary has the element type of the load", _same_type),
    )

    temp: str = option("auto", Identifier(words=("auto", "any")),
                        "which temporaries: auto (hoist names), any, or one name")

    def sites(self, unit, ctx):
        out = []
        for s in super().sites(unit, ctx):
            got = _temp_decl(unit, s.node)
            if got is None or s.node.parent is None or \
                    s.node.parent.type != "compound_statement":
                continue
            ident, load = got
            name = unit.text(ident)
            if self.temp == "auto" and name != scheme_name(unit, load):
                continue
            if self.temp not in ("auto", "any") and name != self.temp:
                continue
            nxt = s.node.next_named_sibling
            while nxt is not None and (nxt.type == "comment" or _temp_decl(unit, nxt) is not None):
                nxt = nxt.next_named_sibling
            if nxt is None or nxt.type not in ("for_statement", "while_statement", "do_statement"):
                continue
            m = Match(unit, s.node, {"IDENT": ident, "LOAD": load, "LOOP": nxt})
            out.append(Site(unit, m, s.function, len(out) + 1, self))
        return out

    def rewrite(self, site, ctx):
        unit = site.unit
        b = site.match.bindings
        decl = site.node
        src = unit.source
        line_start = src.rfind(b"\n", 0, decl.start_byte) + 1
        line_end = src.find(b"\n", decl.end_byte)
        if line_end < 0:
            line_end = len(src)
        if src[line_start:decl.start_byte].strip() == b"" and \
                src[decl.end_byte:line_end].strip() == b"":
            edits = [Edit.delete(line_start, min(line_end + 1, len(src)))]
        else:
            end = decl.end_byte
            while end < len(src) and src[end:end + 1] in (b" ", b"\t"):
                end += 1
            edits = [Edit.delete(decl.start_byte, end)]
        load = unit.text(b["LOAD"])
        loop = b["LOOP"]
        for u in _uses(unit, site.function, b["IDENT"]):
            if loop.start_byte <= u.start_byte < loop.end_byte:
                edits.append(Edit.replace(u, load))
        return edits

    def inverse_for(self, site, ctx):
        unit = site.unit
        b = site.match.bindings
        name = unit.text(b["IDENT"])
        const = "const" in _decl_quals(unit, site.node)
        auto = name == scheme_name(unit, b["LOAD"])
        return HoistInvariant(temp="auto" if auto else name, const=const)
