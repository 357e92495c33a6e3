"""Several elements per thread before a reduction: ``grid-accumulate`` (optimize) and its
inverse ``load-one-value`` (simplify).

A reduction that gives each thread one element, ``float v = i < n ? x[i] : 0.0f;``, then
folds ``v`` over the block and publishes the block's result with one atomic, launches a
thread per element. Brent's theorem says to give each thread many: a grid capped at
about one wave of resident blocks, each thread folding every ``(blockDim.x *
gridDim.x)``-th element into ``v`` before the block's reduction::

    float v = 0.0f;
    for (int k = i; k < n; k += blockDim.x * gridDim.x) {
        v += x[k];
    }

with ``grid=min(ceil_div(n, 256), 1024)``: fewer blocks, so fewer block reductions and
fewer atomics on one address. The kernel model decides every fact: the global index
(:func:`kltrans.model.geometry.role_of`), that the kernel's only effect is a fold of one
value per element into one address (:func:`kltrans.model.grid.grid_fold`, which also
gives the operator: a sum, max or min), and that the rewritten kernel folds the same over
a grid capped below the blocks the elements need (:func:`kltrans.model.grid.same_grid_results`
at a cap of 2 blocks: the loop reads its stride at run time, so the cap's value does not
change what it does).
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis.affine import strip_parens
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.predicates import pure
from kltrans.model.effects import draws
from kltrans.model.geometry import role_of
from kltrans.model.grid import GridFold, grid_fold, same_grid_results
from kltrans.model.launch import block_dim, grid_dim
from kltrans.model.staging import staged_load
from kltrans.passes import IntRange, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.reductions import fold_order
from kltrans.passes.rewrite import (contract_of, header_edit, header_expr, indent_of, indent_step,
                                    render, unwrap)
from kltrans.syntax import Edit
from kltrans.syntax.contract import ContractError, contracts
from kltrans.syntax.edits import apply_edits

STRIDE = "blockDim.x * gridDim.x"
_ACCUMULATE = """\
{{ ty }} {{ v }} = {{ identity }};
for ({{ ity }} {{ k }} = {{ i }}; {{ k }} < {{ n }}; {{ k }} += {{ stride }}) {
{{ step }}{{ fold }};
}"""
_FOLDS = {"+": "{v} += {e}", "max": "{v} = max({v}, {e})", "min": "{v} = min({v}, {e})"}


# ----------------------------------------------------------------------- reading
@dataclass(frozen=True)
class _Load:
    """``T v = i < n ? E(i) : identity;`` as written: texts, and the value's node."""

    type: str
    value: str
    index: str
    bound: str
    element: "object"   # the node of E(i)
    identity: str
    index_type: str = "int"
    group: tuple = ()   # first add during load: (offset text, E(i + offset) node) per later load
    block: str = "blockDim.x"  # the loads' stride in a group
    end: int = -1       # where the rewritten statements end (the group's last `if`)


def guarded_value(site) -> tuple[_Load | None, str]:
    """The guarded one-element load at ``site`` (a declaration), or None with why not."""
    unit, node = site.unit, site.node
    decls = node.children_by_field_name("declarator")
    if len(decls) != 1 or decls[0].type != "init_declarator":
        return None, "not one initialized variable"
    d = decls[0]
    name, init = d.child_by_field_name("declarator"), strip_parens(d.child_by_field_name("value"))
    if name.type != "identifier" or init.type != "conditional_expression":
        return None, "the value is not `cond ? element : identity`"
    cond = strip_parens(init.child_by_field_name("condition"))
    if cond.type != "binary_expression" or \
            unit.text(cond.child_by_field_name("operator")) != "<":
        return None, "the condition is not `i < n`"
    i, n = (strip_parens(cond.child_by_field_name(k)) for k in ("left", "right"))
    role = role_of(unit, i)
    if i.type != "identifier" or role is None or role.kind != "global" or role.split:
        grouped, why = _load_group(site, unit.text(name))
        if grouped is not None:
            return grouped, ""
        return None, (f"{unit.text(i)} is not the thread's global index (kernel model), nor "
                      f"the first of a group of loads added during the load: {why}")
    elem, other = init.child_by_field_name("consequence"), init.child_by_field_name("alternative")
    if not pure(unit, elem) or not (pure(unit, other) or _constant(unit, other)) or \
            unit.text(i) not in {unit.text(x) for x in unit.walk(elem) if x.type == "identifier"}:
        return None, "the element is not a pure expression of the index"
    return _Load(unit.text(node.child_by_field_name("type")), unit.text(name), unit.text(i),
                 unit.text(n), elem, unit.text(other)), ""


def _load_group(site, local: str) -> tuple[_Load | None, str]:
    """``T v = i < n ? E(i) : pad;`` followed by ``if (i + k B < n) v += E(i + k B);`` for
    k = 1 .. F-1 and the store of ``v`` in the thread's slot before a block's tree, ``i =
    blockIdx.x * (F B) + threadIdx.x`` (:func:`kltrans.model.staging.staged_load`: the first
    add during the load)."""
    unit, node = site.unit, site.node
    after = node.next_named_sibling
    while after is not None and not (after.type == "expression_statement" and
                                     local in unit.text(after) and "=" in unit.text(after)
                                     and after.type != "if_statement"):
        after = after.next_named_sibling if after.type in ("if_statement", "comment") else None
    if after is None:
        return None, f"no store of {local} follows"
    st, why = staged_load(unit, after)
    if st is None:
        return None, why
    if st.form != "local" or st.local_decl is None or st.local_decl.id != node.id or \
            st.factor < 2:
        return None, "the loads are not a local's group"
    idecl = st.index_decl
    first, rest = st.terms[0], st.terms[1:]
    group = tuple((unit.text(t.index)[len(st.index):].strip(" +") if
                   unit.text(t.index).startswith(st.index) else None,
                   _guarded_element(t)) for t in rest)
    if any(off is None or el is None for off, el in group):
        return None, "a later load's index is not written `i + offset`"
    return _Load(unit.text(node.child_by_field_name("type")), local, st.index, st.bound,
                 _guarded_element(first), st.pad,
                 unit.text(idecl.child_by_field_name("type")) if idecl is not None else "int",
                 group, st.block or "blockDim.x", rest[-1].node.end_byte), ""


def _guarded_element(term):
    """The load ``in[e]`` of a guarded term (a conditional or an ``if`` statement)."""
    n = term.index
    while n is not None and n.type != "subscript_expression":
        n = n.parent
    return n


def _constant(unit, node) -> bool:
    """A literal, or one converted to a type: ``0.0f``, ``-INFINITY``, ``real(0)``,
    ``(float)0``, ``T(0)``."""
    node = strip_parens(node)
    if node.type in ("number_literal", "identifier"):
        return True
    if node.type == "unary_expression":
        return _constant(unit, node.child_by_field_name("argument"))
    if node.type == "cast_expression":
        return _constant(unit, node.child_by_field_name("value"))
    if node.type == "call_expression" and \
            node.child_by_field_name("function").type in ("identifier", "primitive_type"):
        args = [a for a in node.child_by_field_name("arguments").named_children
                if a.type != "comment"]
        return len(args) == 1 and strip_parens(args[0]).type == "number_literal"
    return False


def _launches(site):
    c, _ = contract_of(site)
    b = block_dim(c) if c is not None else None
    return draws(site.function, b.value if b is not None else None, seed=11, count=2)


def _fold(site) -> "GridFold | str":
    """The kernel's grid fold (:func:`kltrans.model.grid.grid_fold`), run once per unit."""
    fn = site.function
    return site.unit.memo(f"grid-accumulate.fold.{fn.name}",
                          lambda u: grid_fold(u, fn, _launches(site), index="k"))


def rewritten_text(site, cap: str) -> tuple[str, str]:
    """(the statements replacing the load, the capped grid)."""
    ld, why = guarded_value(site)
    if ld is None:
        raise SkipSite(why)
    gf = _fold(site)
    if isinstance(gf, str):
        raise SkipSite(gf)
    unit = site.unit
    taken = {unit.text(x) for x in unit.nodes_of_type("identifier", within=site.function.node)}
    k = next(c for c in ("k", "idx_k", "elem", "e_k") if c not in taken)
    elem = _substitute(unit, ld.element, ld.index, k)
    step = indent_step(unit, site.node)
    fold = _FOLDS[gf.op].format(v=ld.value, e=elem)
    stride, ity = STRIDE, "int"
    if ld.group:  # the first add during the load: the whole group per trip, F blocks apart
        stride, ity = f"{len(ld.group) + 1} * {ld.block} * gridDim.x", ld.index_type
        for off, el in ld.group:
            fold += (f";\n{step}if ({k} + {off} < {ld.bound}) " +
                     _FOLDS[gf.op].format(v=ld.value, e=_substitute(unit, el, ld.index, k)))
    text = render(_ACCUMULATE, indent_of(unit, site.node.start_byte), ty=ld.type, v=ld.value,
                  identity=ld.identity, k=k, i=ld.index, n=ld.bound, stride=stride,
                  step=step, fold=fold, ity=ity).lstrip()
    c, _ = contract_of(site)
    return text, f"min({unwrap(c.grid[0])}, {cap})" if c is not None else ""


def _substitute(unit, node, old: str, new: str) -> str:
    """The text of ``node`` with every identifier ``old`` written ``new``."""
    out, at = [], node.start_byte
    for x in unit.walk(node):
        if x.type == "identifier" and unit.text(x) == old:
            out += [unit.text((at, x.start_byte)), new]
            at = x.end_byte
    out.append(unit.text((at, node.end_byte)))
    return "".join(out)


def _end(site) -> int:
    ld, _ = guarded_value(site)
    return ld.end if ld is not None and ld.end >= 0 else site.node.end_byte


def candidate(site, cap: str):
    """The unit after the rewrite with grid cap ``cap``."""
    text, grid = rewritten_text(site, cap)
    c, _ = contract_of(site)
    return apply_edits(site.unit, [Edit(site.node.start_byte, _end(site), text),
                                   header_edit(site.unit, c, c.with_(grid=(header_expr(grid),)))])


# ------------------------------------------------------------------ preconditions
def _is_load(site, ctx) -> Verdict:
    ld, why = guarded_value(site)
    return Verdict.yes(f"{ld.value} = {ld.index} < {ld.bound} ? ... : {ld.identity}") if ld \
        else Verdict.no(why)


def _uncapped(site, ctx) -> Verdict:
    c, why = contract_of(site)
    if c is None:
        return Verdict.unknown(why)
    gd = grid_dim(c)
    if gd.cap is not None or not gd.covers:
        return Verdict.no(f"grid={gd.text} is not one thread per element")
    return Verdict.yes(f"grid={gd.text}")


def _grid_fold(site, ctx) -> Verdict:
    gf = _fold(site)
    if isinstance(gf, str):
        return Verdict.no(f"the grid machine: {gf}")
    return Verdict.yes(f"the kernel folds {gf.value} for k < {gf.bound} with {gf.op} "
                       f"into one address")


def _reassoc(site, ctx) -> Verdict:
    return fold_order(_fold(site).op, ctx, "each thread sums its elements first")


def _same_results(site, ctx) -> Verdict:
    try:
        new = candidate(site, "2")
    except SkipSite as e:
        return Verdict.no(str(e))
    ok, why = same_grid_results(site.unit, new, site.function.name, _launches(site))
    if not ok:
        return Verdict.no(f"at a grid of 2 blocks: {why}")
    return Verdict.yes(f"at a grid of 2 blocks, {why}")


PRECONDITIONS = (
    Precondition("guarded-load", "layout",
                 "one element per thread: `T v = i < n ? E(i) : identity` with i the "
                 "global index (kernel model)", _is_load),
    Precondition("one-thread-per-element", "pipeline",
                 "the launch gives every element a thread (no cap yet)", _uncapped),
    Precondition("grid-fold", "storage",
                 "the kernel folds one value per element into one address (grid machine)",
                 _grid_fold, needs=("guarded-load",)),
    Precondition("reduction-ops", "dtype",
                 "max and min are exact in any order; a float sum needs reassociation",
                 _reassoc, needs=("grid-fold",)),
    Precondition("same-results", "storage",
                 "with the grid capped at 2 blocks the kernel folds the same (grid machine)",
                 _same_results, needs=("grid-fold", "one-thread-per-element")),
)


@dataclass(frozen=True)
class GridAccumulate(Pass):
    """Give each thread many elements of a reduction over a capped grid (Brent).

    Before::

        // kltrans: launch sum grid=ceil_div(n, 256) block=256
        float v = i < n ? x[i] : 0.0f;

    After ``grid-accumulate``::

        // kltrans: launch sum grid=min(ceil_div(n, 256), 1024) block=256
        float v = 0.0f;
        for (int k = i; k < n; k += blockDim.x * gridDim.x) {
            v += x[k];
        }

    Preconditions: guarded-load (layout: the kernel model reads the global index),
    one-thread-per-element (pipeline: the grid is not capped yet), grid-fold (storage: the
    kernel's only effect is a fold of one value per element into one address), reduction-ops
    (dtype: a float sum needs --assume reassoc), same-results (storage: the grid machine,
    with the grid capped at 2 blocks).

    Options: ``max-blocks`` (the grid's cap: 1024 by default, or a number of blocks).
    """

    name = "grid-accumulate"
    kind = "optimize"
    inverse = "load-one-value"
    anchor = Rule(kind="declaration", inside_kernel=True)
    preconditions = PRECONDITIONS

    max_blocks: int = option(1024, IntRange(64, 8192), "the grid's cap in blocks", tune=True)

    @classmethod
    def goal_options(cls, goal):
        """The caps the goal's capped grids use: a search toward an expert tries those
        alone, and none when the goal caps no grid."""
        try:
            found = contracts(goal)
        except ContractError:
            return None
        caps = {grid_dim(c).cap.value for c in found.values() if grid_dim(c).cap is not None}
        caps = sorted(v for v in caps if isinstance(v, int) and 64 <= v <= 8192)
        # a goal without a capped grid is not on this pass's way (its launches differ)
        return [{"max_blocks": v} for v in caps]

    def rewrite(self, site, ctx):
        text, _ = rewritten_text(site, str(self.max_blocks))
        return [Edit(site.node.start_byte, _end(site), text)]

    def update_contract(self, contract, site, ctx):
        _, grid = rewritten_text(site, str(self.max_blocks))
        return contract.with_(grid=(header_expr(grid),))

    def inverse_for(self, site, ctx):
        return LoadOneValue()


# ----------------------------------------------------------------------- the inverse
_NAMED = {"max": "max", "fmax": "max", "fmaxf": "max", "min": "min", "fmin": "min",
          "fminf": "min"}


@dataclass(frozen=True)
class _Loop:
    """``T v = identity; for (int k = i; k < n; k += stride) v op= E(k);`` as written."""

    decl: "object"
    type: str
    value: str
    identity: str
    index: str
    bound: str
    element: str        # E(i): the element with the loop variable written as the index


def accumulating_loop(site) -> tuple[_Loop | None, str]:
    """The per-thread accumulation loop at ``site`` (a for statement) and the declaration
    right before it, or None with why not."""
    unit, loop = site.unit, site.node
    init, cond = loop.child_by_field_name("initializer"), loop.child_by_field_name("condition")
    update, body = loop.child_by_field_name("update"), loop.child_by_field_name("body")
    if init is None or init.type != "declaration" or cond is None or update is None:
        return None, "not a counted for loop"
    [d] = init.children_by_field_name("declarator") or [None]
    if d is None or d.type != "init_declarator":
        return None, "the loop declares no counter"
    k, start = unit.text(d.child_by_field_name("declarator")), \
        strip_parens(d.child_by_field_name("value"))
    role = role_of(unit, start)
    if start.type != "identifier" or role is None or role.kind != "global" or role.split:
        return None, "the loop does not start at the thread's global index (kernel model)"
    if cond.type != "binary_expression" or unit.text(cond.child_by_field_name("operator")) \
            != "<" or unit.text(cond.child_by_field_name("left")) != k:
        return None, f"the condition is not `{k} < n`"
    if update.type != "assignment_expression" or \
            unit.text(update.child_by_field_name("operator")) != "+=" or \
            unit.text(update.child_by_field_name("left")) != k:
        return None, f"the update is not `{k} += stride`"
    stride = role_of(unit, update.child_by_field_name("right"))
    if stride is None or stride.kind != "grid-size":
        return None, "the stride is not the grid's threads (kernel model)"
    stmts = [c for c in body.named_children if c.type != "comment"] \
        if body.type == "compound_statement" else [body]
    if len(stmts) != 1 or stmts[0].type != "expression_statement":
        return None, "the body is not one fold statement"
    e = stmts[0].named_children[0]
    if e.type != "assignment_expression":
        return None, "the body is not one fold statement"
    v, op = unit.text(e.child_by_field_name("left")), unit.text(e.child_by_field_name("operator"))
    right = strip_parens(e.child_by_field_name("right"))
    if op == "+=":
        elem = right
    elif op == "=" and right.type == "call_expression" and \
            unit.text(right.child_by_field_name("function")) in _NAMED:
        args = [a for a in right.child_by_field_name("arguments").named_children
                if a.type != "comment"]
        if len(args) != 2 or unit.text(args[0]) != v:
            return None, f"the fold is not `{v} = max({v}, e)`"
        elem = args[1]
    else:
        return None, "the body is not `v += e`, `v = max(v, e)` or `v = min(v, e)`"
    prev = loop.prev_named_sibling
    while prev is not None and prev.type == "comment":
        prev = prev.prev_named_sibling
    decls = prev.children_by_field_name("declarator") if prev is not None and \
        prev.type == "declaration" else []
    if len(decls) != 1 or decls[0].type != "init_declarator" or \
            unit.text(decls[0].child_by_field_name("declarator")) != v:
        return None, f"{v} is not declared with its identity right before the loop"
    return _Loop(prev, unit.text(prev.child_by_field_name("type")), v,
                 unit.text(decls[0].child_by_field_name("value")), unit.text(start),
                 unit.text(cond.child_by_field_name("right")),
                 _substitute(unit, elem, k, unit.text(start))), ""


def _uncapped_grid(site) -> tuple[str | None, str]:
    c, why = contract_of(site)
    if c is None:
        return None, why
    gd = grid_dim(c)
    if gd.cap is None or gd.covering_text is None or gd.per_thread(block_dim(c)) != 1:
        return None, f"grid={gd.text} is not a cap over one thread per element"
    return header_expr(gd.covering_text), ""


def one_value_text(site) -> str:
    lp, why = accumulating_loop(site)
    if lp is None:
        raise SkipSite(why)
    return f"{lp.type} {lp.value} = {lp.index} < {lp.bound} ? {lp.element} : {lp.identity};"


def _is_loop(site, ctx) -> Verdict:
    lp, why = accumulating_loop(site)
    return Verdict.yes(f"{lp.value} folds every grid-stride element from {lp.index}") if lp \
        else Verdict.no(why)


def _capped(site, ctx) -> Verdict:
    g, why = _uncapped_grid(site)
    return Verdict.yes(f"uncapped: grid={g}") if g else Verdict.no(why)


def _same_one_value(site, ctx) -> Verdict:
    try:
        lp, _ = accumulating_loop(site)
        g, _ = _uncapped_grid(site)
        c, _ = contract_of(site)
        new = apply_edits(site.unit, [
            Edit(lp.decl.start_byte, site.node.end_byte, one_value_text(site)),
            header_edit(site.unit, c, c.with_(grid=(g,)))])
        # the loop as it runs on a grid capped below the blocks the elements need
        old = apply_edits(site.unit, [header_edit(site.unit, c, c.with_(
            grid=(header_expr(f"min({grid_dim(c).covering_text}, 2)"),)))])
    except SkipSite as e:
        return Verdict.no(str(e))
    ok, why = same_grid_results(old, new, site.function.name, _launches(site))
    return Verdict.yes(f"against the loop at a grid of 2 blocks, {why}") if ok else \
        Verdict.no(f"against the loop at a grid of 2 blocks: {why}")


INVERSE_PRECONDITIONS = (
    Precondition("accumulating-loop", "layout",
                 "`T v = identity; for (k = i; k < n; k += grid threads) v op= E(k)`, i the "
                 "global index (kernel model)", _is_loop),
    Precondition("capped-grid", "pipeline",
                 "the grid is a cap over one thread per element", _capped),
    Precondition("grid-fold", "storage",
                 "the kernel folds one value per element into one address (grid machine)",
                 _grid_fold, needs=("accumulating-loop",)),
    Precondition("reduction-ops", "dtype",
                 "max and min are exact in any order; a float sum needs reassociation",
                 _reassoc, needs=("grid-fold",)),
    Precondition("same-results", "storage",
                 "one value per thread over the uncapped grid folds the same (grid machine)",
                 _same_one_value, needs=("accumulating-loop", "capped-grid", "grid-fold")),
)


@dataclass(frozen=True)
class LoadOneValue(Pass):
    """One element per thread again: the accumulation loop back to a guarded load, the
    grid uncapped.

    Before::

        // kltrans: launch sum grid=min(ceil_div(n, 256), 1024) block=256
        float v = 0.0f;
        for (int k = i; k < n; k += blockDim.x * gridDim.x) {
            v += x[k];
        }

    After ``load-one-value``::

        // kltrans: launch sum grid=ceil_div(n, 256) block=256
        float v = i < n ? x[i] : 0.0f;

    Preconditions: accumulating-loop (layout), capped-grid (pipeline), grid-fold
    (storage), reduction-ops (dtype), same-results (storage: the grid machine).

    Options: none.
    """

    name = "load-one-value"
    kind = "simplify"
    inverse = "grid-accumulate"
    anchor = Rule(kind="for_statement", inside_kernel=True)
    preconditions = INVERSE_PRECONDITIONS

    def rewrite(self, site, ctx):
        lp, why = accumulating_loop(site)
        if lp is None:
            raise SkipSite(why)
        return [Edit(lp.decl.start_byte, site.node.end_byte, one_value_text(site))]

    def update_contract(self, contract, site, ctx):
        g, _ = _uncapped_grid(site)
        return contract if g is None else contract.with_(grid=(g,))

    def inverse_for(self, site, ctx):
        c, _ = contract_of(site)
        cap = grid_dim(c).cap if c is not None else None
        return GridAccumulate(max_blocks=cap.value if cap is not None and cap.value else 1024)
