"""Loop versioning for vector access: ``vector-path`` (optimize) and ``scalar-path`` (simplify).

A strided loop over the elements of float arrays gets a fast path that moves four
elements at a time through ``float4`` views, taken when the element count is a multiple of
four and the arrays are 16-byte aligned; every other launch runs the loop as it was::

    if (n % 4 == 0 && ((size_t)x | (size_t)y) % 16 == 0) {
        for (int c = tid; c < n / 4; c += blockDim.x) { <four lanes of the body> }
    } else {
        for (int c = tid; c < n; c += blockDim.x) { y[c] = f(x[c]); }
    }

``scalar-path`` keeps the scalar path of any ``if (C) { A } else { B }`` whose then-branch
moves memory through vector views (the kernel model's accesses, :mod:`kltrans.model.accesses`)
and whose else-branch does not, once the grid machine (:mod:`kltrans.model.grid`) has run
the kernel with A and with B in the if's place and seen the same stores, at sizes where a
vector path's test holds. The declarations only A read go with it (the engine's
``drop_dead``). The spelling of the test, the views and the lanes does not matter.
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis import loop_of
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.accesses import accesses
from kltrans.model.grid import sized_launches, same_grid_results
from kltrans.model.loops import loop_fact
from kltrans.model.values import vector_lanes
from kltrans.passes import Choice, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import (declared_names, fresh_numbered, indent_of, indent_step,
                                    norm, shift, splice, statements, unshift)
from kltrans.syntax import Edit
from kltrans.syntax.cuda import subscript_index
from kltrans.syntax.unit import Unit

LANES = "xyzw"
STRIDED = ("block-stride", "grid-stride", "warp-stride")
#: the size every integer parameter takes in the grid runs (a multiple of 16, so that a
#: vector path's divisibility test holds), or GRID_SIZE for one that sizes the grid
CHECK_SIZE, GRID_SIZE = 32, 2


# ----------------------------------------------------------------------- reading
def _inside(node, outer) -> bool:
    return outer.start_byte <= node.start_byte and node.end_byte <= outer.end_byte


def _widths(unit, fn, node) -> list[int]:
    """The widths of the model's accesses inside ``node``."""
    return [a.width for a in accesses(unit, fn)
            if a.width is not None and _inside(a.node, node)]


def _vector_held(unit, node) -> bool:
    """Whether ``node`` declares a value or view of a vector type (its lanes in registers:
    a vector path whose loads another pass already split into scalars)."""
    return any(vector_lanes(unit.text(t)) > 1 for d in unit.walk(node)
               if d.type == "declaration" and (t := d.child_by_field_name("type")) is not None)


def _branches(site, n=None):
    """(then, else body) of a versioned if (the site's, or ``n``), or why not."""
    unit, fn, n = site.unit, site.function, n or site.node
    alt = n.child_by_field_name("alternative")
    if alt is None:
        return "the if has no else branch"
    body = alt.named_children[-1] if alt.type == "else_clause" else alt
    if body.type == "if_statement":
        return "the else branch is another if"
    then = n.child_by_field_name("consequence")
    if not any(w > 1 for w in _widths(unit, fn, then)) and not _vector_held(unit, then):
        return "the then-branch neither moves memory through a vector view nor holds vectors"
    if any(w > 1 for w in _widths(unit, fn, body)):
        return "the else-branch moves memory through a vector view too"
    return then, body


def _versioned(site, ctx) -> Verdict:
    got = _branches(site)
    if isinstance(got, str):
        return Verdict.no(got)
    return Verdict.yes("the then-branch moves vectors, the else-branch scalars")


def _launches(site) -> list[dict]:
    """One launch: every integer parameter CHECK_SIZE, those that size the grid GRID_SIZE."""
    return sized_launches(site.unit, site.function, (CHECK_SIZE,), GRID_SIZE)


def _group(site) -> list:
    """The versioned ifs of the kernel that test what the site's if tests (the same
    condition, in names the kernel never assigns after declaring them): one version of the
    code, whose paths go together (a row loaded as float4 lanes into registers by one if
    and stored from them by another keeps the registers in the vector layout between)."""
    def find(u):
        fn, cond = site.function, site.node.child_by_field_name("condition")
        key = norm(u.text(cond))
        names = {u.text(x) for x in u.walk(cond) if x.type == "identifier"}
        for x in u.walk(fn.body):
            if x.type in ("assignment_expression", "update_expression"):
                t = x.child_by_field_name("left") or x.child_by_field_name("argument")
                if t is not None and u.text(t) in names:
                    return [site.node]
        return [n for n in u.walk(fn.body) if n.type == "if_statement" and
                norm(u.text(n.child_by_field_name("condition"))) == key and
                isinstance(_branches(site, n), tuple)] or [site.node]
    return site.unit.memo(f"vector_path.group.{site.node.start_byte}", find)


def _with(site, path) -> Unit:
    """The unit with the ifs of the site's version (:func:`_group`) replaced by their
    branch ``path`` (0: then, 1: else) and every other versioned if of the kernel by its
    vector path (taken at the check sizes)."""
    unit, reps = site.unit, []
    group = {n.id for n in _group(site)}
    for n in unit.walk(site.function.body):
        if n.type != "if_statement":
            continue
        got = _branches(site, n)
        if isinstance(got, tuple):
            reps.append((n.start_byte, n.end_byte,
                         "{" + unit.text(got[path if n.id in group else 0]) + "}"))
    reps = [r for r in reps if not any(o[0] < r[0] and r[1] <= o[1] for o in reps)]
    return Unit(splice(unit, unit.root, reps).encode(), unit.path)


def _same(a: Unit, b: Unit, site) -> tuple:
    return same_grid_results(a, b, site.function.name, _launches(site))


def _same_results(site, ctx) -> Verdict:
    got = _branches(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    ok, why = _same(_with(site, 0), _with(site, 1), site)
    if ok is None:
        return Verdict.unknown(why)
    if not ok:
        return Verdict.no(f"the vector path does not do what the scalar path does: {why}")
    return Verdict.yes(f"vector and scalar paths: {why}")


def _element_loop(site):
    """(loop, var, bound node, {array: mode}, subscripts, carried) of a strided loop whose
    body reaches memory only as ``P[var]`` of float arrays, or why not; read once per site
    (every precondition and the rewrite ask)."""
    memo = site.unit.memo("vector_path", lambda u: {})
    if site.node.id not in memo:
        memo[site.node.id] = _read_element_loop(site)
    return memo[site.node.id]


def _read_element_loop(site):
    unit, node = site.unit, site.node
    lp = loop_of(unit, node)
    fact = loop_fact(unit, node)
    if lp is None or node.type != "for_statement" or fact is None or fact.kind not in STRIDED:
        return f"not a block-, warp- or grid-stride for loop ({fact.reason if fact else 'no loop'})"
    if lp.cond_op != "<" or lp.bound_node is None or lp.body is None:
        return f"the loop's test is not `{lp.var} < N`"
    var = lp.var
    subs, arrays = [], {}
    for n in unit.walk(lp.body):
        idx = subscript_index(n)
        if idx is not None and unit.text(idx) == var and \
                n.child_by_field_name("argument").type == "identifier":
            subs.append(n)
    for n in unit.walk(lp.body):
        if n.type == "identifier" and unit.text(n) == var and \
                not any(_inside(n, s) for s in subs):
            return f"{var} is used other than as a whole index `P[{var}]`"
    for a in accesses(unit, site.function):
        if not _inside(a.node, lp.body):
            continue
        s = next((s for s in subs if _inside(a.node, s) or _inside(s, a.node)), None)
        if s is None or a.width != 1 or a.space != "global":
            return f"line {a.line}: an access other than a global `P[{var}]`"
        if a.elem_type != "float":
            return f"line {a.line}: {a.base} is not a float array"
        name = unit.text(s.child_by_field_name("argument"))
        old = arrays.get(name)
        arrays[name] = a.mode if old in (None, a.mode) else "readwrite"
    if not subs or not arrays:
        return "the body reaches no array at the loop's index"
    inner = {nm for nm, _ in declared_names(unit, lp.body)}
    carried = set()
    for n in unit.walk(lp.body):
        if n.type in ("assignment_expression", "update_expression"):
            left = n.child_by_field_name("left") or n.child_by_field_name("argument")
            if left.type == "identifier" and unit.text(left) not in inner:
                name = unit.text(left)
                if _exact_fold(unit, n, name):
                    continue  # v = fmaxf(v, E): the same in any order
                op = n.child_by_field_name("operator")
                if n.type == "update_expression" or unit.text(op) != "+=":
                    return f"{name} carries a value from one element to the next"
                carried.add(name)
    return lp, var, lp.bound_node, arrays, subs, carried


def _vector_results(site, ctx) -> Verdict:
    got = _element_loop(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    n = site.node
    unit = site.unit
    text = site.pass_.versioned(site, test="1")  # the vector path, taken
    new = Unit(unit.source[:n.start_byte] + text.encode() + unit.source[n.end_byte:], unit.path)
    ok, why = _same(unit, new, site)
    if ok is None:
        return Verdict.unknown(why)
    if not ok:
        return Verdict.no(f"the vector path does not do what the loop does: {why}")
    return Verdict.yes(f"the vector path and the loop: {why}")


def _exact_fold(unit, n, name: str) -> bool:
    """``name = fmaxf(name, E)`` (or fminf, max, min, either argument order)."""
    if n.type != "assignment_expression" or unit.text(n.child_by_field_name("operator")) != "=":
        return False
    call = n.child_by_field_name("right")
    if call.type != "call_expression" or unit.text(call.child_by_field_name("function")) not in \
            ("fmaxf", "fminf", "max", "min", "fmax", "fmin"):
        return False
    args = [a for a in call.child_by_field_name("arguments").named_children
            if a.type != "comment"]
    return len(args) == 2 and sum(unit.text(a) == name for a in args) == 1


def _element_form(site, ctx) -> Verdict:
    got = _element_loop(site)
    if isinstance(got, str):
        return Verdict.no(got)
    return Verdict.yes(f"a {loop_fact(site.unit, site.node).kind} loop over "
                       f"{', '.join(sorted(got[3]))} at [{got[1]}]")


def _aligned(site, ctx) -> Verdict:
    got = _element_loop(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    if site.pass_.align == "check":
        return Verdict.yes("tested at run time")
    params = {p.name for p in site.function.params if p.pointer}
    local = sorted(set(got[3]) - params)
    if local:
        return Verdict.no(f"{', '.join(local)} may start anywhere in an allocation: "
                          f"use align=check")
    return Verdict.yes("every array is a kernel parameter (cudaMalloc: 256-byte aligned)")


def _no_alias(site, ctx) -> Verdict:
    got = _element_loop(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    arrays = got[3]
    written = [a for a, m in arrays.items() if m != "read"]
    for w in written:
        for r in arrays:
            if r != w and not ctx.assumed("no_alias", w, r):
                return Verdict.unknown(f"{w} and {r} may overlap (--assume 'no_alias({w},{r})')")
    return Verdict.yes("each lane's loads come before its stores, and the arrays do not overlap")


def _order(site, ctx) -> Verdict:
    got = _element_loop(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    if not got[5]:
        return Verdict.yes("no value carried between elements")
    sums = ", ".join(sorted(got[5]))
    if ctx.assumed("reassoc"):
        return Verdict.yes(f"{sums}: float sums regrouped, which the tolerance allows")
    return Verdict.unknown(f"{sums}: float sums would be regrouped (four elements of a thread "
                           f"in a row): --assume reassoc")


@dataclass(frozen=True)
class VectorPath(Pass):
    """Give a strided loop over float arrays a float4 path, the loop kept for the rest.

    Before::

        for (int c = tid; c < cols; c += blockDim.x) { y[c] = x[c] * s; }

    After ``vector-path``::

        if (cols % 4 == 0 && ((size_t)y | (size_t)x) % 16 == 0) {
            for (int c = tid; c < cols / 4; c += blockDim.x) {
                const float4 x4 = reinterpret_cast<const float4 *>(x)[c];
                float4 y4;
                y4.x = x4.x * s; y4.y = x4.y * s; y4.z = x4.z * s; y4.w = x4.w * s;
                reinterpret_cast<float4 *>(y)[c] = y4;
            }
        } else {
            for (int c = tid; c < cols; c += blockDim.x) { y[c] = x[c] * s; }
        }

    Preconditions: element-loop (a block-, warp- or grid-stride ``for`` loop ``c < N`` whose
    body reaches global float arrays only as ``P[c]``, and uses ``c`` nowhere else; a value
    carried between elements only as ``+=``), aligned (``align=check``: tested at run time;
    ``none``: every array is a kernel parameter), no-alias (an array written and another
    read do not overlap), order (sums carried between elements are regrouped: ``--assume
    reassoc``), same-results
    (the grid machine runs the kernel with the vector path taken and sees the stores of the
    loop, sums up to their order: a per-thread sum used by that thread alone is refused).

    Options: ``align`` (``check``: the vector path also needs every array 16-byte aligned;
    ``none``: only the count is tested).
    """

    name = "vector-path"
    kind = "optimize"
    inverse = "scalar-path"
    anchor = Rule(kind="for_statement", inside_kernel=True)
    preconditions = (
        Precondition("element-loop", "layout",
                     "a strided loop whose body reads and writes float arrays only at its index",
                     _element_form),
        Precondition("aligned", "layout", "float4 views need 16-byte aligned arrays", _aligned),
        Precondition("no-alias", "storage",
                     "lanes load before they store: written and read arrays do not overlap",
                     _no_alias),
        Precondition("order", "dtype",
                     "sums carried between elements are regrouped (--assume reassoc)", _order),
        Precondition("same-results", "pipeline",
                     "the vector path stores what the loop stores over whole grids, up to the "
                     "order of sums (grid machine)", _vector_results),
    )

    align: str = option("check", Choice("check", "none"),
                        "check: test the arrays' alignment at run time too; none: only the count")

    def rewrite(self, site, ctx):
        return [Edit(site.node.start_byte, site.node.end_byte, self.versioned(site))]

    def versioned(self, site, test: str | None = None) -> str:
        """The loop versioned on ``test`` (default: the count, and the alignment with
        ``align=check``)."""
        got = _element_loop(site)
        if isinstance(got, str):
            raise SkipSite(got)
        lp, var, bound, arrays, subs, _ = got
        unit, fn = site.unit, site.function
        ind = indent_of(unit, site.node.start_byte)
        step = indent_step(unit, site.node) or "    "
        names = {}
        for a in arrays:
            names[a] = fresh_numbered(unit, fn, [f"{a}4", f"{a}_v"], taken=names.values())
        n = unit.text(bound)
        if test is None:
            test = f"{_paren(n)} % 4 == 0"
            if self.align == "check":
                test += " && (" + " | ".join(f"(size_t){a}" for a in sorted(arrays)) + \
                    ") % 16 == 0"
        body = [f"{'const ' if m == 'read' else ''}float4 {names[a]} = "
                f"reinterpret_cast<{'const ' if m == 'read' else ''}float4 *>({a})[{var}];"
                if m != "write" else f"float4 {names[a]};" for a, m in arrays.items()]
        stmts = statements(lp.body) if lp.body.type == "compound_statement" else [lp.body]
        scoped = bool(declared_names(unit, lp.body))
        for k in LANES:  # each lane: the body with P[var] read as the view's lane k
            lane = []
            for s in stmts:
                reps = [(x.start_byte, x.end_byte,
                         f"{names[unit.text(x.child_by_field_name('argument'))]}.{k}")
                        for x in subs if _inside(x, s)]
                lane.append(unshift(splice(unit, s, reps), indent_of(unit, s.start_byte)))
            body += (["{"] + [step + shift(t, step) for t in lane] + ["}"]) if scoped else lane
        body += [f"reinterpret_cast<float4 *>({a})[{var}] = {names[a]};"
                 for a, m in arrays.items() if m != "read"]
        # built at the if's indentation as column 0, shifted to it at the end
        head = unshift(splice(unit, site.node, [
            (bound.start_byte, bound.end_byte, f"{_paren(n)} / 4"),
            (lp.body.prev_sibling.end_byte, lp.body.end_byte, " @BODY@")]), ind)
        vec = head.replace("@BODY@", "{\n" + "\n".join(step + shift(b, step) for b in body)
                           + "\n}")
        scalar = unshift(unit.text(site.node), ind)
        return shift(f"if ({test}) {{\n{step}{shift(vec, step)}\n}} else {{\n"
                     f"{step}{shift(scalar, step)}\n}}", ind)

    def inverse_for(self, site, ctx):
        return ScalarPath()


def _scalar(site, n) -> str:
    """The else-branch of versioned if ``n`` as the text in its place (unbraced when its
    names do not clash)."""
    unit, body = site.unit, _branches(site, n)[1]
    ind = indent_of(unit, n.start_byte)
    if body.type != "compound_statement":
        return unit.text(body)
    mine, around = _top_names(unit, body), _top_names(unit, n.parent)
    stmts = statements(body)
    if mine & around or not stmts:
        return unit.text(body)
    inner = unit.text((stmts[0].start_byte, stmts[-1].end_byte))
    return shift(unshift(inner, indent_of(unit, stmts[0].start_byte)), ind)


def _top_names(unit, block) -> set:
    """The names the declarations directly in ``block`` declare (its own scope)."""
    return {nm for s in block.named_children if s.type == "declaration"
            for nm, _ in declared_names(unit, s)}


def _paren(text: str) -> str:
    return text if text.replace("_", "").isalnum() else f"({text})"


@dataclass(frozen=True)
class ScalarPath(Pass):
    """Keep only the scalar path of code versioned on vector access.

    Before::

        if (vec) { <float4 loads and stores> } else { <the same done one float at a time> }

    After ``scalar-path``: the else-branch in the if's place (unbraced when its names do not
    clash), and the declarations only the vector path read (its views and counts) gone.
    Versioned ifs that test the same condition (in names the kernel never assigns) are one
    version and go together: a row loaded into registers as float4 lanes by one and stored
    from them by another keeps the vector layout in between.

    Preconditions: versioned (``if (C) A else B``: A moves memory through a vector view,
    B does not), same-results (the grid machine runs the kernel with A and with B in the
    place of every if of the version, at sizes that are multiples of 16 -- two for the
    sizes of the grid -- and sees the same stores).

    Options: none (``inverse_for`` gives ``vector-path{align=check}``).
    """

    name = "scalar-path"
    kind = "simplify"
    inverse = "vector-path"
    anchor = Rule(kind="if_statement", inside_kernel=True)
    preconditions = (
        Precondition("versioned", "layout",
                     "the then-branch moves vectors and the else-branch scalars", _versioned),
        Precondition("same-results", "pipeline",
                     "both paths store the same over whole grids (grid machine)", _same_results),
    )
    drop_dead = True

    def rewrite(self, site, ctx):
        got = _branches(site)
        if isinstance(got, str):
            raise SkipSite(got)
        group = _group(site)
        group = [n for n in group if not any(o.id != n.id and _inside(n, o) for o in group)]
        return [Edit(n.start_byte, n.end_byte, _scalar(site, n)) for n in group]

    def inverse_for(self, site, ctx):
        return VectorPath(align="check")
