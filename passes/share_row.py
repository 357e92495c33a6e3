"""A group of threads per row: ``share-row`` (optimize) and its inverse ``unshare-row``
(simplify).

A *row kernel* gives each item (a row of a matrix, a vector's dot product) to one thread,
which loops over the item's elements and folds what it needs (a sum, a maximum). With
``share-row`` a warp (``group=warp``) or the whole block (``group=block``) shares each
row: the element loops stride by the group's size from the thread's rank in it, and
after each loop the group folds its partial values (a butterfly of shuffles; for a block
then one slot per warp in shared memory, a barrier, and every thread folds the slots), so
every thread holds the row's value again. The loads of a warp become contiguous and the
row's work is spread over the group.

``unshare-row`` undoes it in any spelling the kernel model reads
(:func:`kltrans.model.rows.shared_rows`): ``cg::reduce`` on a tile, ``__shfl_*_sync``
loops in helpers or lambdas, slots after ``tile.meta_group_rank()``, shared-memory trees,
a broadcast through ``red[0]``, slots summed by every thread. It writes the serial form
the model's reading gives, and holds only where
the grid machine (:func:`kltrans.model.grid.same_grid_effects`) shows that the serial
kernel stores the same as the original over a whole grid at two small launches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.grid import same_grid_results
from kltrans.model.launch import block_dim, grid_dim
from kltrans.model.geometry import role_of
from kltrans.model.rows import GLOBAL_INDEX, shared_rows, thread_rows
from kltrans.passes import Choice, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import (
    contract_of, dead_declarations, drop_unused_definitions, fresh_name, fresh_numbered,
    header_expr, indent_of, remove, render, splice, used_names)
from kltrans.syntax import Edit
from kltrans.syntax.contract import contracts, format_contract
from kltrans.syntax.edits import apply_edits

KERNEL = Rule(kind="function_definition", regex=r"\b__global__\b")
#: sizes of the checking launches: the item count, then every other integer parameter
CHECK_SIZES = ((3, 37), (5, 300))
_PRIMARY = ("identifier", "subscript_expression", "field_expression", "call_expression",
            "number_literal", "parenthesized_expression")


# ------------------------------------------------------------------- the reading
def _share(site):
    if site.function is None or not site.function.is_kernel:
        return "not a kernel"
    return shared_rows(site.unit, site.function)


def _count(site, ctx):
    """(items, kernel bound, why not): the rows the launch covers as written in the
    contract, and the kernel's parameter holding them."""
    unit, fn = site.unit, site.function
    c, why = contract_of(site)
    if c is None:
        return None, None, why
    r = _share(site)
    g, b = grid_dim(c), block_dim(c)
    if r.scope == "block":
        if g.covers or g.cap is not None:
            return None, None, f"the grid {g.text} is not one block per row"
        items = g.text
    else:
        if not g.covers or g.cap is not None:
            return None, None, f"the grid {g.text} does not cover the rows"
        per = g.per_block.value if g.per_block else None
        if per is not None and b.value is not None and per * 32 == b.value:
            items = g.count
        elif g.per_block is not None and g.per_block.same(b) and \
                g.count.replace(" ", "").endswith("*32"):
            items = g.count.replace(" ", "")[:-3]
        else:
            return None, None, f"the grid {g.text} is not a warp per row of a block of {b.text}"
    params = {p.name for p in fn.params if p.name and not p.pointer}
    bound = None
    if r.guard is not None:  # the name the guard compares the item with
        bound = next((n for n in _names(unit, r.guard.child_by_field_name("condition"))
                      if n in params and n != r.item), None)
    if bound is None and items in params:
        bound = items
    if bound is None:
        bound = next((f.args[0] for f in ctx.assumptions if f.name == "binds" and
                      len(f.args) == 2 and f.args[1] == items and f.args[0] in params), None)
    if bound is None:
        return None, None, f"no parameter of {fn.name} is known to hold the {items} rows"
    return items, bound, ""


def _names(unit, node) -> list[str]:
    return [unit.text(n) for n in unit.walk(node) if n.type == "identifier"]


# ------------------------------------------------------------------ the rewrite
def _value(unit, node, folds) -> str:
    """``node``'s text with every fold call in it replaced by its value."""
    reps = [(f.call.start_byte, f.call.end_byte, _wrap(unit, f.value)) for f in folds
            if node.start_byte <= f.call.start_byte and f.call.end_byte <= node.end_byte]
    return splice(unit, node, reps)


def _wrap(unit, node) -> str:
    t = unit.text(node)
    return t if node.type in _PRIMARY else f"({t})"


def _self_assign(unit, call, value) -> "object | None":
    """The statement ``x = F(x);`` around ``call`` (value ``x``), else None."""
    e = call.parent
    while e is not None and e.type == "parenthesized_expression":
        e = e.parent
    if e is None or e.type != "assignment_expression" or e.parent is None or \
            e.parent.type != "expression_statement":
        return None
    if unit.text(e.child_by_field_name("operator")) != "=" or \
            unit.text(e.child_by_field_name("left")).strip() != unit.text(value).strip():
        return None
    return e.parent


def serial_edits(site, bound: str, name: str = "row") -> list[Edit]:
    """The edits that make the site's kernel one thread per row (no contract edit)."""
    unit, fn = site.unit, site.function
    r = _share(site)
    edits: list[Edit] = []
    sized = [s for s in r.sized if not any(
        t.start_byte <= s.start_byte and s.end_byte <= t.end_byte
        for x in r.exchanges for t in x.stmts)]
    dropped = [s for x in r.exchanges for s in x.stmts] + sized

    def gone(n) -> bool:
        return any(s.start_byte <= n.start_byte and n.end_byte <= s.end_byte for s in dropped)

    for s in sized:  # rounds only a group of more than one thread takes
        edits.append(remove(unit, s.start_byte, s.end_byte))
    for d in r.scalars:  # a broadcast slot: the one thread's own
        for c, nxt in zip(d.children, d.children[1:]):
            if unit.text(c) == "__shared__":
                edits.append(Edit.delete(c.start_byte, nxt.start_byte))
    for x in r.exchanges:
        values = dict(x.values)
        ind = indent_of(unit, x.stmts[0].start_byte)
        lines = []
        for out, ty, arr in x.outputs:
            v = _value(unit, values[arr], r.folds)
            if v.strip() == out:
                continue
            lines.append(f"{ty} {out} = {v};" if ty else f"{out} = {v};")
        first, last = x.stmts[0], x.stmts[-1]
        if lines:
            edits.append(Edit(first.start_byte, last.end_byte, ("\n" + ind).join(lines)))
        else:
            edits.append(remove(unit, first.start_byte, last.end_byte))
    for f in r.folds:
        if gone(f.call):
            continue
        st = _self_assign(unit, f.call, f.value)
        if st is not None:
            edits.append(remove(unit, st.start_byte, st.end_byte))
            dropped.append(st)
        else:
            edits.append(Edit(f.call.start_byte, f.call.end_byte, _wrap(unit, f.value)))
    for n, v in r.uses:
        if not gone(n):
            edits.append(Edit(n.start_byte, n.end_byte, _wrap(unit, v)))
    for cond, test in r.leaders:
        if gone(test):
            continue
        edits.extend(_drop_test(unit, cond, test))
    for lf in r.loops:
        lp = lf.loop
        if lp.init_node is None or lp.step_node is None:
            raise SkipSite(f"the strided loop at line {lf.line} has no start or step to reset")
        edits.append(Edit(lp.init_node.start_byte, lp.init_node.end_byte, "0"))
        edits.append(Edit(lp.step_node.start_byte, lp.step_node.end_byte, "1"))
    body = [s for s in fn.body.named_children if s.type != "comment"]
    keep = {name} if r.item is None else set()
    if r.item is not None:
        new = _index(unit, r)
        keep |= set(re.findall(r"[A-Za-z_]\w*", new))  # the index the new text reads
        edits.append(Edit(r.item_value.start_byte, r.item_value.end_byte, new))
        if r.scope == "block":  # the block index read elsewhere (before the item, too)
            for n in unit.walk(fn.body):
                if n.type == "field_expression" and not gone(n) and \
                        unit.text(n).replace(" ", "") == "blockIdx.x" and not (
                            r.item_value.start_byte <= n.start_byte < r.item_value.end_byte):
                    edits.append(Edit(n.start_byte, n.end_byte, f"({GLOBAL_INDEX})"))
        if r.guard is None:
            decl = next(s for s in body if s.start_byte <= r.item_value.start_byte < s.end_byte)
            ind = indent_of(unit, decl.start_byte)
            edits.append(Edit.insert(decl.end_byte, f"\n{ind}if ({r.item} >= {bound}) return;"))
    else:
        ind = indent_of(unit, body[0].start_byte)
        edits.append(Edit.insert(fn.body.start_byte + 1, "\n" + ind + render(
            "const int {{ n }} = {{ g }};\nif ({{ n }} >= {{ b }}) return;", ind,
            n=name, g=GLOBAL_INDEX, b=bound)))
        for n in unit.walk(fn.body):
            if n.type == "field_expression" and unit.text(n).replace(" ", "") == "blockIdx.x":
                edits.append(Edit(n.start_byte, n.end_byte, name))
    ranges = [(e.start, e.end) for e in edits if e.end > e.start]
    for d in dead_declarations(unit, fn, ranges, keep):
        edits.append(remove(unit, d.start_byte, d.end_byte))
        ranges.append((d.start_byte, d.end_byte))
    edits.extend(drop_unused_definitions(unit, ranges))
    return edits


def _index(unit, r) -> str:
    """The item's new initializer: ``X`` of ``X / 32`` when X is the global index, else
    the global index."""
    v = r.item_value
    while v.type == "parenthesized_expression" and v.named_children:
        v = v.named_children[0]
    if r.scope == "warp" and v.type == "binary_expression":
        left = v.child_by_field_name("left")
        role = role_of(unit, left)
        if role is not None and role.kind == "global" and role.split is None:
            while left.type == "parenthesized_expression" and left.named_children:
                left = left.named_children[0]
            return unit.text(left)
    return GLOBAL_INDEX


def _drop_test(unit, cond, test) -> list[Edit]:
    """``if (lane == 0) S`` -> ``S``; ``if (lane == 0 && c) S`` -> ``if (c) S``."""
    p = test.parent
    while p is not None and p.type == "parenthesized_expression":
        p = p.parent
    if p is not None and p.type == "binary_expression" and \
            unit.text(p.child_by_field_name("operator")) == "&&":
        other = p.child_by_field_name("right") if p.child_by_field_name("left").end_byte >= \
            test.end_byte else p.child_by_field_name("left")
        return [Edit(p.start_byte, p.end_byte, unit.text(other))]
    s = cond.parent
    cons = s.child_by_field_name("consequence")
    if s.child_by_field_name("alternative") is not None:
        raise SkipSite("a leader test with an else branch")
    return [Edit(s.start_byte, cons.start_byte, "")]


# ------------------------------------------------------------------ preconditions
def _group_shape(site, ctx) -> Verdict:
    r = _share(site)
    if isinstance(r, str):
        return Verdict.no(r)
    n = len(r.folds) + sum(1 for x in r.exchanges if x.values)
    return Verdict.yes(f"a {r.scope} per row ({r.item or 'blockIdx.x'}); {len(r.loops)} "
                       f"strided loop(s), {n} fold(s)")


def _rows_launched(site, ctx) -> Verdict:
    if isinstance(_share(site), str):
        return Verdict.unknown("not a row kernel")
    items, bound, why = _count(site, ctx)
    if items is None:
        return Verdict.no(why)
    return Verdict.yes(f"the launch covers {items} rows, {bound} in the kernel")


def _reassoc(site, ctx) -> Verdict:
    if ctx.assumed("reassoc"):
        return Verdict.yes("the workload's tolerance allows reassociated float folds")
    return Verdict.unknown("the row's folds are computed in another order: float sums need "
                           "--assume reassoc")


def _same_results(site, ctx) -> Verdict:
    memo = site.unit.memo("share_row.check", lambda u: {})
    key = (site.function.node.id, tuple(map(str, ctx.assumptions)))
    if key not in memo:
        memo[key] = _check(site, ctx)
    return memo[key]


def _check(site, ctx) -> Verdict:
    if isinstance(_share(site), str):
        return Verdict.unknown("not a row kernel")
    items, bound, why = _count(site, ctx)
    if items is None:
        return Verdict.unknown(why)
    try:
        edits = serial_edits(site, bound, _row_name(site))
    except SkipSite as e:
        return Verdict.no(str(e))
    c, _ = contract_of(site)
    grid = header_expr(f"ceil_div({items}, {block_dim(c).text})")
    return _compare(site, edits, grid, items, bound, "one thread per row")


def _compare(site, edits, grid: str, items: str, bound: str, what: str) -> Verdict:
    """Whether the site's kernel with ``edits`` and the launch ``grid`` stores the same as
    the kernel over a whole grid at the :data:`CHECK_SIZES` launches."""
    unit, fn = site.unit, site.function
    c, _ = contract_of(site)
    new = _with_header(apply_edits(unit, edits), fn.name,
                       format_contract(c.with_(grid=(grid,))))
    launches = []
    for rows, other in CHECK_SIZES:
        ints = {p.name: other for p in fn.params if p.name and not p.pointer}
        ints.update({bound: rows, items: rows})
        launches.append(ints)
    ok, why = same_grid_results(unit, new, fn.name, launches)
    if ok is None:
        return Verdict.unknown(why)
    if not ok:
        return Verdict.no(f"{what} does not do the same: {why}")
    return Verdict.yes(f"{what}: {why}")


def _with_header(unit, kernel, text):
    c = contracts(unit).get(kernel)
    return apply_edits(unit, [Edit(c.start, c.end, text)])


def _row_name(site) -> str:
    return fresh_name(site.unit, site.function.node, ("row", "item"))


@dataclass(frozen=True)
class UnshareRow(Pass):
    """One thread per row again: the group's strided loops run over the whole row, its
    folds and exchanges are gone, the item is the global thread index (guarded), the grid
    covers the rows by blocks of threads.

    Before (any spelling the kernel model reads)::

        // kltrans: launch k grid=ceil_div(rows, 8) block=256
        int row = blockIdx.x * 8 + threadIdx.x / 32;
        int lane = threadIdx.x % 32;
        if (row >= rows) return;
        float s = 0.0f;
        for (int j = lane; j < cols; j += 32) s += x[row * cols + j];
        s = cg::reduce(tile, s, cg::plus<float>());
        if (lane == 0) y[row] = s;

    After ``unshare-row``::

        // kltrans: launch k grid=ceil_div(rows, 256) block=256
        int row = blockIdx.x * blockDim.x + threadIdx.x;
        if (row >= rows) return;
        float s = 0.0f;
        for (int j = 0; j < cols; j += 1) s += x[row * cols + j];
        y[row] = s;

    Preconditions: group-shape (layout: the row model reads the kernel), rows-launched
    (hardware: the grid is a warp or a block per row, a parameter holds the rows),
    reduction-ops (dtype: float folds reassociated), same-results (storage: the grid
    machine runs both kernels and they store the same).

    Options: none (the row's name, when ``blockIdx.x`` was read directly, is a fresh one).
    """

    name = "unshare-row"
    kind = "simplify"
    inverse = "share-row"
    anchor = KERNEL
    preconditions = (
        Precondition("group-shape", "layout",
                     "a warp or the block shares each row: strided loops, folds (collective "
                     "calls, exchanges through shared memory), leader tests", _group_shape),
        Precondition("rows-launched", "hardware",
                     "the grid is a warp or a block per row and a parameter holds the rows",
                     _rows_launched),
        Precondition("reduction-ops", "dtype",
                     "the folds are reassociated (float sums need --assume reassoc)", _reassoc),
        Precondition("same-results", "storage",
                     "one thread per row stores the same over a whole grid at two small "
                     "launches (the grid machine)", _same_results),
    )

    def rewrite(self, site, ctx):
        items, bound, why = _count(site, ctx)
        if items is None:
            raise SkipSite(why)
        return serial_edits(site, bound, _row_name(site))

    def update_contract(self, contract, site, ctx):
        items, bound, _ = _count(site, ctx)
        if items is None:
            return contract
        b = block_dim(contract).text
        new = contract.with_(grid=(header_expr(f"ceil_div({items}, {b})"),))
        if contract.smem.strip() not in ("", "0"):
            # the group's dynamic shared memory: a thread per row declares none any more
            serial = apply_edits(site.unit, serial_edits(site, bound, _row_name(site)))
            if not any(d.extern for d in serial.shared_decls()):
                new = new.with_(smem="0")
        return new

    def inverse_for(self, site, ctx):
        r = _share(site)
        return ShareRow(group=r.scope if not isinstance(r, str) else "warp")




# ==================================================================== share-row
#: the value a group's fold starts from, where a thread's started from the row's first element
_IDENTITY = {"sum": "0", "max": "-INFINITY", "min": "INFINITY"}
_FOLD = {"sum": "{v} += {x};", "max": "{v} = fmaxf({v}, {x});", "min": "{v} = fminf({v}, {x});"}
_TEMPLATE = """\
for (int {{ o }} = 16; {{ o }} > 0; {{ o }} >>= 1)
    {{ fold(v, "__shfl_xor_sync(0xffffffffu, " ~ v ~ ", " ~ o ~ ")") }}{% if block %}

if ((threadIdx.x & 31) == 0) {{ slots }}[threadIdx.x >> 5] = {{ v }};
__syncthreads();
{{ v }} = {{ slots }}[0];
for (int {{ w }} = 1; {{ w }} < (blockDim.x >> 5); ++{{ w }})
    {{ fold(v, slots ~ "[" ~ w ~ "]") }}
__syncthreads();{% endif %}"""


def _rows(site):
    if site.function is None or not site.function.is_kernel:
        return "not a kernel"
    return thread_rows(site.unit, site.function)


def share_edits(site, group: str, names: dict) -> list[Edit]:
    unit, fn = site.unit, site.function
    got = _rows(site)
    if isinstance(got, str):
        raise SkipSite(got)
    value = got.item.child_by_field_name("value")
    new = f"({unit.text(value)}) / 32" if group == "warp" else "blockIdx.x"
    edits = [Edit(value.start_byte, value.end_byte, new)]
    for n in _row_spellings(unit, fn, value):  # the row read elsewhere (a pointer moved to it)
        edits.append(Edit(n.start_byte, n.end_byte, new if group == "block" else f"({new})"))
    rank = "(threadIdx.x & 31)" if group == "warp" else "threadIdx.x"
    size = "32" if group == "warp" else "blockDim.x"
    types = set()
    for i, (lf, reds) in enumerate(got.loops):
        lp = lf.loop
        seeds = got.seeds[i] if i < len(got.seeds) else ()
        for seed, (v, kind, _) in zip(seeds, reds):  # a fold seeded with its first element
            edits.append(Edit(seed.start_byte, seed.end_byte, _IDENTITY[kind]))
        edits.append(Edit(lp.init_node.start_byte, lp.init_node.end_byte, rank))
        if lp.step_node is not None:
            edits.append(Edit(lp.step_node.start_byte, lp.step_node.end_byte, size))
        elif lp.update_node is not None:
            edits.append(Edit(lp.update_node.start_byte, lp.update_node.end_byte,
                              f"{lp.var} += {size}"))
        else:
            raise SkipSite(f"the loop at line {lf.line} steps inside its body")
        ind = indent_of(unit, lp.node.start_byte)
        texts = []
        for v, kind, ty in reds:  # one insertion after the loop, a fold per scalar
            types.add(ty)
            texts.append(render(_TEMPLATE, ind, o=names["offset"], v=v, w=names["warp"],
                                slots=names["slots"], block=group == "block",
                                fold=lambda a, b, k=kind: _FOLD[k].format(v=a, x=b)))
        if texts:
            edits.append(Edit.insert(lp.node.end_byte, "".join("\n" + ind + t for t in texts)))
    if group == "block" and types:
        body = [s for s in fn.body.named_children if s.type != "comment"]
        ind = indent_of(unit, body[0].start_byte)
        edits.append(Edit.insert(body[0].start_byte,
                                 f"__shared__ {sorted(types)[0]} {names['slots']}[32];\n{ind}"))
    return edits


def _row_spellings(unit, fn, value) -> list:
    """The expressions of ``fn`` outside the item's initializer ``value`` that are the
    global thread index (``(blockIdx.x * blockDim.x + threadIdx.x)`` spelled out again,
    not a name holding it): each thread's row, which the group's row replaces."""
    out = []
    for n in unit.walk(fn.body):
        if n.type not in ("binary_expression", "parenthesized_expression") or \
                value.start_byte <= n.start_byte < value.end_byte or \
                any(o.start_byte <= n.start_byte and n.end_byte <= o.end_byte for o in out):
            continue
        r = role_of(unit, n)
        if r is not None and r.kind == "global" and r.split is None:
            out.append(n)
    return out


def _share_names(site) -> dict:
    unit, fn = site.unit, site.function
    taken = used_names(unit, fn)
    o = fresh_numbered(unit, fn, ("offset", "off"), taken)
    w = fresh_numbered(unit, fn, ("w", "warp"), taken | {o})
    s = fresh_numbered(unit, fn, ("slots", "partials"), taken | {o, w})
    return {"offset": o, "warp": w, "slots": s}


def _row_kernel(site, ctx) -> Verdict:
    got = _rows(site)
    if isinstance(got, str):
        return Verdict.no(got)
    n = sum(len(r) for _, r in got.loops)
    return Verdict.yes(f"one thread per row: {len(got.loops)} row loop(s), {n} fold(s)")


def _share_grid(site, p) -> "tuple[str | None, str, str]":
    """(new grid, items, why not)."""
    c, why = contract_of(site)
    if c is None:
        return None, "", why
    g = grid_dim(c)
    if not g.covers or g.cap is not None:
        return None, "", f"the grid {g.text} does not cover the rows"
    b = block_dim(c).text
    grid = g.count if p.group == "block" else f"ceil_div({g.count} * 32, {b})"
    return header_expr(grid), g.count, ""


def _share_same(site, ctx, p) -> Verdict:
    if isinstance(_rows(site), str):
        return Verdict.unknown("not a row kernel")
    grid, items, why = _share_grid(site, p)
    if grid is None:
        return Verdict.no(why)
    fn = site.function
    params = [q.name for q in fn.params if q.name and not q.pointer]
    bound = items if items in params else next(
        (f.args[0] for f in ctx.assumptions if f.name == "binds" and len(f.args) == 2 and
         f.args[1] == items and f.args[0] in params), None)
    if bound is None:
        return Verdict.unknown(f"no parameter of {fn.name} is known to hold the {items} rows")
    try:
        edits = share_edits(site, p.group, _share_names(site))
    except SkipSite as e:
        return Verdict.no(str(e))
    return _compare(site, edits, grid, items, bound, f"a {p.group} per row")


@dataclass(frozen=True)
class ShareRow(Pass):
    """A warp (``group=warp``) or the block (``group=block``) per row: the row loops stride
    by the group from the thread's rank in it, and each fold after them combines the
    group's partial values (xor butterflies; for a block then a slot per warp in shared
    memory, a barrier, and every thread folds the slots), so every thread holds the row's
    value as before.

    Before::

        // kltrans: launch k grid=ceil_div(rows, 256) block=256
        int row = blockIdx.x * blockDim.x + threadIdx.x;
        if (row >= rows) return;
        float s = 0.0f;
        for (int j = 0; j < cols; ++j) s += x[row * cols + j];
        y[row] = s;

    After ``share-row{group=warp}``::

        // kltrans: launch k grid=ceil_div(rows * 32, 256) block=256
        int row = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
        if (row >= rows) return;
        float s = 0.0f;
        for (int j = (threadIdx.x & 31); j < cols; j += 32) s += x[row * cols + j];
        for (int offset = 16; offset > 0; offset >>= 1)
            s += __shfl_xor_sync(0xffffffffu, s, offset);
        y[row] = s;

    Preconditions: row-kernel (layout: the global index is the row, loops from 0 by 1
    whose scalar updates are sums, maxima, minima), reduction-ops (dtype), same-results
    (storage: the grid machine runs both kernels and they store the same).

    Options: ``group`` (``warp``: 32 threads per row; ``block``: the whole block).
    """

    name = "share-row"
    kind = "optimize"
    inverse = "unshare-row"
    anchor = KERNEL
    preconditions = (
        Precondition("row-kernel", "layout",
                     "the global thread index is the row; loops from 0 by 1 over it whose "
                     "only scalar updates are sums, maxima and minima", _row_kernel),
        Precondition("reduction-ops", "dtype",
                     "the folds are reassociated (float sums need --assume reassoc)", _reassoc),
        Precondition("same-results", "storage",
                     "the group per row stores the same over a whole grid at two small "
                     "launches (the grid machine)", lambda s, c: _share_same(s, c, s.pass_)),
    )

    group: str = option("warp", Choice("warp", "block"), "threads per row: a warp or the block",
                        tune=True)

    def rewrite(self, site, ctx):
        return share_edits(site, self.group, _share_names(site))

    def update_contract(self, contract, site, ctx):
        grid, _, _ = _share_grid(site, self)
        return contract if grid is None else contract.with_(grid=(grid,))

    def inverse_for(self, site, ctx):
        return UnshareRow()
