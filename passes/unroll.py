"""Loop unrolling: ``unroll`` (optimize) and its inverse ``reroll`` (simplify)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.loops import assigned_in, loop_of
from kltrans.analysis.verdict import Verdict
from kltrans.match import Match, Rule
from kltrans.match.pattern import tokens
from kltrans.passes import Choice, Identifier, IntRange, OneOf, Pass, Precondition, Site, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import fresh_name, indent_of, insert_lines_before, line_start, remove
from kltrans.syntax import Edit

MAX_MANUAL_TRIPS = 32
MAX_UNROLLED_TOKENS = 4096
_UNROLL_PRAGMA = re.compile(r"^#pragma\s+unroll\b(?:\s+(\S.*))?$")
_NO_EXIT = ("break_statement", "continue_statement", "return_statement", "goto_statement")


# ----------------------------------------------------------------------- helpers
def _loop(site: Site):
    return loop_of(site.unit, site.node)


def _unroll_pragmas(unit, node):
    from kltrans.syntax.cuda import pragmas_for

    return [p for p in pragmas_for(unit, node) if p.name in ("unroll", "nounroll")]


def _trip_count(site: Site, ctx) -> int | None:
    loop = _loop(site)
    if loop is None:
        return None
    if loop.trip_count is not None:
        return loop.trip_count
    return loop.trip_count_known_with(dict(ctx.sizes))


def _body_tokens(site: Site) -> int:
    loop = _loop(site)
    return len(tokens(site.unit, loop.body)) if loop is not None else 0


def _step_value(loop) -> int | None:
    if loop is None or loop.step is None:
        return None
    return loop.step.value() if loop.step.is_const() else None


def _int_value(text: str) -> int | None:
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", text)
    return int(m.group(1), 0) if m else None


# ------------------------------------------------------------------ preconditions
def _counted(site, ctx) -> Verdict:
    loop = _loop(site)
    if loop is None or loop.var is None:
        return Verdict.no("not a counted for loop (no induction variable)")
    if loop.cond_op is None or loop.bound is None and loop.bound_node is None:
        return Verdict.no(f"the loop condition does not bound {loop.var}")
    if loop.step is None and loop.trip_count is None:
        why = f" ({loop.step_text})" if loop.step_text else ""
        return Verdict.no(f"the step of {loop.var} is not a constant increment or a "
                          f"halving/doubling{why}")
    how = f"step {loop.step}" if loop.step is not None else f"{loop.trip_count} iterations"
    return Verdict.yes(f"counted loop over {loop.var} ({how})")


def _not_unrolled(site, ctx) -> Verdict:
    found = _unroll_pragmas(site.unit, site.node)
    if found:
        return Verdict.no(f"the loop already has '{found[0].text}'")
    return Verdict.yes("no unroll pragma on the loop")


def _trip_known(site, ctx) -> Verdict:
    p = site.pass_
    if p.factor != "full" and p.style == "pragma":
        return Verdict.yes("partial unrolling by pragma needs no trip count")
    n = _trip_count(site, ctx)
    if n is not None:
        return Verdict.yes(f"{n} iterations")
    loop = _loop(site)
    bound = site.unit.text(loop.bound_node) if loop is not None and loop.bound_node else "?"
    if p.style == "pragma" and loop is not None:
        consts = _compile_time_names(site)
        syms = set()
        for a in (loop.init, loop.bound):
            if a is None:
                syms = None
                break
            syms |= a.symbols()
        if syms is not None and syms <= consts:
            return Verdict.yes(f"the trip count is a compile-time constant "
                               f"({', '.join(sorted(syms)) or 'literals'})")
    return Verdict.unknown(f"the trip count depends on {bound}; "
                           + ("manual unrolling needs its value (--assume " if p.style == "manual"
                              else "full unrolling needs it known at compile time (a constant, "
                                   "a template parameter, or --assume ")
                           + f"{bound}==N)")


def _compile_time_names(site) -> set:
    """Names whose value is fixed at compile time: template value parameters."""
    fn = site.function
    if fn is None:
        return set()
    return {t.name for t in fn.template_params if t.kind == "value" and t.name}


def _factor_fits(site, ctx) -> Verdict:
    p = site.pass_
    n = _trip_count(site, ctx)
    if p.factor == "full" or n is None:
        return Verdict.yes("no fixed factor to compare" if p.factor == "full"
                           else "trip count unknown: the compiler handles the remainder")
    if p.factor > n:
        return Verdict.no(f"factor {p.factor} exceeds the {n} iterations of the loop")
    return Verdict.yes(f"factor {p.factor} <= {n} iterations")


def _body_fits(site, ctx) -> Verdict:
    p = site.pass_
    n = _trip_count(site, ctx)
    copies = n if p.factor == "full" else p.factor
    if copies is None:
        if p.style == "pragma" and _trip_known(site, ctx).holds:
            return Verdict.yes(f"{_body_tokens(site)} tokens per iteration; the count is fixed "
                               f"at instantiation and the compiler bounds the unrolled size")
        return Verdict.unknown("full unrolling of a loop with an unknown trip count")
    size = _body_tokens(site) * copies
    if size > MAX_UNROLLED_TOKENS:
        return Verdict.no(f"the unrolled body would be {size} tokens (> {MAX_UNROLLED_TOKENS}): "
                          f"instruction-cache and register pressure")
    return Verdict.yes(f"{size} tokens unrolled")


def _manual_safe(site, ctx) -> Verdict:
    p = site.pass_
    if p.style != "manual":
        return Verdict.yes("pragma style leaves the loop to the compiler")
    unit = site.unit
    loop = _loop(site)
    if loop is None or loop.var is None:
        return Verdict.no("not a counted loop")
    if p.factor != "full":
        return Verdict.no("manual unrolling copies every iteration: use factor=full")
    n = _trip_count(site, ctx)
    if n is not None and n > MAX_MANUAL_TRIPS:
        return Verdict.no(f"{n} iterations: manual unrolling is limited to {MAX_MANUAL_TRIPS}")
    init = site.node.child_by_field_name("initializer")
    if init is None or init.type != "declaration":
        return Verdict.no(f"{loop.var} is declared outside the loop; its final value would be lost")
    for n_ in unit.walk(loop.body):
        if n_.type in _NO_EXIT:
            return Verdict.no(f"the body has a {n_.type.replace('_statement', '')} statement")
        if n_.type in ("init_declarator", "declaration"):
            d = n_.child_by_field_name("declarator")
            if d is not None and unit.text(d).split("=")[0].strip() == loop.var:
                return Verdict.no(f"the body declares another {loop.var}")
    if assigned_in(unit, loop.body, loop.var):
        return Verdict.no(f"the body assigns {loop.var}")
    if loop.init is None or not loop.init.is_const():
        return Verdict.no(f"the initial value of {loop.var} is not a constant")
    if _step_value(loop) is None:
        return Verdict.no(f"the step of {loop.var} is not a constant increment")
    return Verdict.yes("body can be copied with the induction variable replaced by constants")


# ------------------------------------------------------------------------ passes
@dataclass(frozen=True)
class Unroll(Pass):
    """Unroll a counted loop, by ``#pragma unroll`` or by copying the body.

    Before::

        for (int k = 0; k < 4; ++k) acc += x[k];

    After ``unroll{factor=4}`` (or ``factor=full`` for ``#pragma unroll``)::

        #pragma unroll 4
        for (int k = 0; k < 4; ++k) acc += x[k];

    After ``unroll{factor=full,style=manual}``::

        acc += x[0];
        acc += x[1];
        acc += x[2];
        acc += x[3];

    Preconditions: counted-loop, not-unrolled, trip-count-known (full or manual),
    factor-fits (a factor above a known trip count is refused), body-fits (the unrolled
    body stays under 4096 tokens), manual-safe (manual: the induction variable is declared
    in the loop, never assigned in the body, no break/continue/return, at most 32 trips).
    A pragma is safe for any trip count (the compiler emits the remainder), so only full
    and manual unrolling need the trip count.

    Options: ``factor`` (2..64 or ``full``, default 4), ``style`` (``pragma`` or
    ``manual``, default ``pragma``).

    Round trip: ``reroll`` gives the original back, with the loop header in canonical
    form (``for (int k = c; k < e; ++k)``) after a manual unroll.
    """

    name = "unroll"
    kind = "optimize"
    inverse = "reroll"
    scope = "device"
    anchor = Rule(kind="for_statement")
    preconditions = (
        Precondition("counted-loop", "pipeline",
                     "a for loop with an induction variable, a bound and a constant step",
                     _counted),
        Precondition("not-unrolled", "pipeline", "the loop has no unroll pragma yet",
                     _not_unrolled),
        Precondition("trip-count-known", "pipeline",
                     "full and manual unrolling need the trip count at compile time",
                     _trip_known),
        Precondition("factor-fits", "pipeline",
                     "the unroll factor does not exceed a known trip count", _factor_fits),
        Precondition("body-fits", "hardware",
                     "the unrolled body stays small (instruction cache, registers)", _body_fits),
        Precondition("manual-safe", "pipeline",
                     "manual copies keep the semantics (no exits, no writes to the "
                     "induction variable)", _manual_safe),
    )

    factor: int | str = option(4, OneOf(IntRange(2, 64), Choice("full")),
                               "iterations per unrolled step, or full", tune=True)
    style: str = option("pragma", Choice("pragma", "manual"),
                        "pragma: emit #pragma unroll; manual: copy the body per iteration",
                        tune=True)

    def rewrite(self, site, ctx):
        unit = site.unit
        node = site.node
        if self.style == "pragma":
            text = "#pragma unroll" if self.factor == "full" else f"#pragma unroll {self.factor}"
            indent = indent_of(unit, node.start_byte)
            if unit.source[line_start(unit, node.start_byte):node.start_byte].strip() == b"":
                return [insert_lines_before(unit, node, text)]
            return [Edit.insert(node.start_byte, f"\n{indent}{text}\n{indent}")]
        loop = _loop(site)
        if loop is None or loop.init is None:  # forced past the counted-loop check
            raise SkipSite("not a counted loop `for (int i = A; i < B; i += C)`")
        n = _trip_count(site, ctx)
        step = _step_value(loop)
        start = loop.init.value()
        if n is None or step is None or start is None:
            raise SkipSite("trip count, start or step not constant")
        indent = indent_of(unit, node.start_byte)
        body = loop.body
        copies = [_substitute(unit, body, loop.var, start + j * step) for j in range(n)]
        sep = "\n" + indent
        if node.parent is not None and node.parent.type not in ("compound_statement",
                                                                "translation_unit"):
            # the loop is the unbraced body of a for, while, if or else: its copies must
            # stay one statement there, or all but the first would leave that body
            return [Edit(node.start_byte, node.end_byte,
                         "{" + "".join(sep + "    " + c for c in copies) + sep + "}")]
        return [Edit(node.start_byte, node.end_byte, sep.join(copies))]

    def inverse_for(self, site, ctx):
        if self.style == "manual":
            return Reroll(style="manual", var=_loop(site).var)
        return Reroll(style="pragma")


def _substitute(unit, body, var: str, value: int) -> str:
    """The body's text with every use of ``var`` replaced by ``value``."""
    edits = []
    for n in unit.walk(body):
        if n.type == "identifier" and unit.text(n) == var:
            edits.append((n.start_byte, n.end_byte))
    text = unit.source
    out, pos = [], body.start_byte
    lit = str(value) if value >= 0 else f"({value})"
    for s, e in edits:
        out.append(text[pos:s].decode("utf-8"))
        out.append(lit)
        pos = e
    out.append(text[pos:body.end_byte].decode("utf-8"))
    return "".join(out)


# ------------------------------------------------------------------------- reroll
def _unrolls(site, ctx) -> Verdict:
    b = site.match.bindings
    if b.get("KIND") == "manual":
        return Verdict.yes(f"{len(b['RUN'])} copies of one statement")
    p = b["PRAGMA"]
    if p.name == "nounroll" or p.argument.strip() == "1":
        return Verdict.no(f"'{p.text}' forbids unrolling: there is no unrolling to undo")
    return Verdict.yes(f"'{p.text}' before the loop")


def _not_generated(site, ctx) -> Verdict:
    """Simplify only: a byte split's helpers (vectorize-bytes) are removed whole by
    scalarize-bytes, which first checks they are exactly what vectorize-bytes writes; a
    run re-rolled inside them first would leave a split no pass removes."""
    from kltrans.passes.helper_forms import byte_helpers

    fn = site.function
    what = byte_helpers(site.unit).get(fn.name) if fn is not None else None
    if what:
        return Verdict.no(f"{fn.name} is the {what} helper of a byte split vectorize-bytes "
                          f"writes: scalarize-bytes removes it whole")
    return Verdict.yes("not in a helper another pass removes whole")


def _keeps_semantics(site, ctx) -> Verdict:
    if site.match.bindings.get("KIND") != "manual":
        return Verdict.yes("removing a pragma never changes the semantics")
    var = site.match.bindings["VAR"]
    fn = site.function
    if fn is not None:
        used = {site.unit.text(n) for n in site.unit.walk(fn.node) if n.type == "identifier"}
        if var in used:
            return Verdict.no(f"the loop variable name {var} is already used in {fn.name}")
    return Verdict.yes(f"loop variable {var} is fresh")


@dataclass(frozen=True)
class Reroll(Pass):
    """Re-roll an unrolled loop: drop ``#pragma unroll`` or fold repeated statements.

    Before::

        #pragma unroll 4
        for (int k = 0; k < 4; ++k) acc += x[k];
        y[0] = v * 0; y[1] = v * 1; y[2] = v * 2;

    After ``reroll``::

        for (int k = 0; k < 4; ++k) acc += x[k];
        for (int i = 0; i < 3; ++i) y[i] = v * i;

    A *manual* site is a run of at least two consecutive statements that are equal
    token for token except for integer literals, where every literal that differs goes
    c, c+s, c+2s, ... along the run (the same c and s at every such position). The
    re-rolled loop is written in canonical form: ``for (int VAR = c; VAR < c+K*s; ++VAR)``
    (``VAR += s`` for other steps, ``>``/``-=`` for negative ones).

    Preconditions: unrolls (the pragma asks for unrolling: ``#pragma unroll 1`` and
    ``nounroll`` are refused), keeps-semantics (the loop variable name is fresh in the
    function), not-generated (not inside the helpers of a byte split, which
    ``scalarize-bytes`` removes whole).

    Options: ``style`` (``any``, ``pragma`` or ``manual``: which sites to re-roll),
    ``var`` (the loop variable of re-rolled runs; ``auto`` picks the first of i, j, k,
    u, v, w, ii, jj that is unused in the function).
    """

    name = "reroll"
    kind = "simplify"
    inverse = "unroll"
    scope = "device"
    anchor = Rule(any=(Rule(kind="for_statement"), Rule(kind="compound_statement")))
    preconditions = (
        Precondition("unrolls", "pipeline",
                     "the pragma asks for unrolling (not '#pragma unroll 1' or nounroll)",
                     _unrolls),
        Precondition("keeps-semantics", "pipeline",
                     "the re-rolled loop variable does not clash with a name in use",
                     _keeps_semantics),
        Precondition("not-generated", "pipeline",
                     "not inside a byte split's helpers (scalarize-bytes removes them whole)",
                     _not_generated),
    )

    style: str = option("any", Choice("any", "pragma", "manual"), "which unrolled forms to re-roll")
    var: str = option("auto", Identifier(), "loop variable for re-rolled runs (auto: a fresh name)")

    def sites(self, unit, ctx):
        out = []
        for s in super().sites(unit, ctx):
            node = s.node
            if node.type == "for_statement" and self.style in ("any", "pragma"):
                for p in _unroll_pragmas(unit, node):
                    m = Match(unit, node, {"KIND": "pragma", "PRAGMA": p})
                    out.append(Site(unit, m, s.function, len(out) + 1, self))
                    break
            elif node.type == "compound_statement" and self.style in ("any", "manual"):
                for run, c0, step, positions in _runs(unit, node):
                    var = self.var if self.var != "auto" else fresh_name(unit, s.function.node if s.function else None)
                    m = Match(unit, run[0], {"KIND": "manual", "RUN": tuple(run), "C0": c0,
                                             "STEP": step, "POS": positions, "VAR": var})
                    out.append(Site(unit, m, s.function, len(out) + 1, self))
        out.sort(key=lambda s: s.node.start_byte)
        return [Site(s.unit, s.match, s.function, i + 1, self) for i, s in enumerate(out)]

    def rewrite(self, site, ctx):
        unit = site.unit
        b = site.match.bindings
        if b["KIND"] == "pragma":
            return [remove(unit, b["PRAGMA"].start, b["PRAGMA"].end)]
        run, c0, step, positions, var = b["RUN"], b["C0"], b["STEP"], b["POS"], b["VAR"]
        first = run[0]
        leaves = _leaves(unit, first)
        edits = []
        for i in positions:
            leaf = leaves[i]
            edits.append((leaf.start_byte, leaf.end_byte))
        out, pos = [], first.start_byte
        for s, e in edits:
            out.append(unit.source[pos:s].decode("utf-8"))
            out.append(var)
            pos = e
        out.append(unit.source[pos:first.end_byte].decode("utf-8"))
        body = "".join(out)
        k = len(run)
        end = c0 + k * step
        if step == 1:
            header = f"for (int {var} = {c0}; {var} < {end}; ++{var})"
        elif step > 0:
            header = f"for (int {var} = {c0}; {var} < {end}; {var} += {step})"
        elif step == -1:
            header = f"for (int {var} = {c0}; {var} > {end}; --{var})"
        else:
            header = f"for (int {var} = {c0}; {var} > {end}; {var} -= {-step})"
        return [Edit(first.start_byte, run[-1].end_byte, f"{header} {body}")]

    def inverse_for(self, site, ctx):
        b = site.match.bindings
        if b["KIND"] == "manual":
            return Unroll(factor="full", style="manual")
        arg = b["PRAGMA"].argument.strip()
        factor = int(arg) if arg.isdigit() and 2 <= int(arg) <= 64 else "full"
        return Unroll(factor=factor, style="pragma")


def _leaves(unit, node):
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "comment":
            continue
        if n.child_count == 0:
            out.append(n)
        else:
            stack.extend(reversed(n.children))
    return out


def _runs(unit, block):
    """Maximal runs of >= 2 statements equal up to integer literals in progression."""
    stmts = [c for c in block.named_children if c.type != "comment"]
    sigs = [[(lf.type, unit.text(lf)) for lf in _leaves(unit, s)] for s in stmts]
    i = 0
    while i < len(stmts) - 1:
        best = None
        j = i + 1
        while j < len(stmts):
            got = _progression(sigs[i:j + 1])
            if got is None:
                break
            best = (j, got)
            j += 1
        if best is not None:
            end, (c0, step, positions) = best
            yield stmts[i:end + 1], c0, step, positions
            i = end + 1
        else:
            i += 1


def _progression(sigs):
    base = sigs[0]
    if any(len(s) != len(base) for s in sigs) or not base:
        return None
    diff = [k for k in range(len(base)) if any(s[k] != base[k] for s in sigs[1:])]
    if not diff:
        return None
    c0 = step = None
    for k in diff:
        if any(s[k][0] != "number_literal" for s in sigs):
            return None
        vals = [_int_value(s[k][1]) for s in sigs]
        if any(v is None for v in vals):
            return None
        st = vals[1] - vals[0]
        if st == 0 or any(vals[m] != vals[0] + m * st for m in range(len(vals))):
            return None
        if c0 is None:
            c0, step = vals[0], st
        elif (vals[0], st) != (c0, step):
            return None
    return c0, step, tuple(diff)
