"""A warp reduction over a cooperative-groups tile: ``cg-reduce`` (optimize: the library's
``cg::reduce``) and its inverse ``shuffle-reduce`` (simplify: a shuffle loop written out).

A hand-written tile reduction folds a value with shuffles of itself over halving offsets,
in a ``__device__`` helper or inline::

    __device__ float warp_sum(const cg::thread_block_tile<32>& tile, float v) {
        for (int offset = warpSize / 2; offset > 0; offset /= 2)
            v += tile.shfl_down(v, offset);
        return v;
    }
    ... v = warp_sum(tile, v);

``cg-reduce`` replaces each call of the helper (and then the helper) or the inline loop
by the library's reduction, ``v = cg::reduce(tile, v, cg::plus<float>());`` (``greater``
for a max, ``less`` for a min), which the compiler lowers to the best the architecture
has (``redux.sync`` for 32-bit integers from sm_80 on). The library gives every lane the
total where a ``shfl_down`` loop leaves it in lane 0 only, so the kernel's stores are
compared on the block machine. ``shuffle-reduce`` writes ``v = cg::reduce(tile, v, op)``
back as an inline ``shfl_xor`` butterfly, which also leaves the total in every lane.

Everything is read off the kernel model (:func:`kltrans.model.collectives.collectives`:
the warp reduction, its operator and value, the helper it is reached through) and the
model's operations (:func:`kltrans.model.ops.operations`: which shuffles act on a tile,
and its width), so the loop may be spelled any way the model reads.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.collectives import collectives
from kltrans.model.equivalence import same_model
from kltrans.model.ops import definitions, operations
from kltrans.passes import Pass, Precondition
from kltrans.passes.manager import SkipSite
from kltrans.passes.reductions import fold_order
from kltrans.passes.rewrite import drop_unused_definitions, indent_of, render
from kltrans.syntax import Edit
from kltrans.syntax.edits import apply_edits

_FUNCTORS = {"sum": "plus", "max": "greater", "min": "less"}
_FOLDS = {"sum": "{v} + {s}", "max": "max({v}, {s})", "min": "min({v}, {s})"}
_INCLUDE = "#include <cooperative_groups/reduce.h>\n"
_LOOP = """\
for (int offset = {{ tile }}.size() / 2; offset > 0; offset /= 2) {
{{ step }}{{ v }} = {{ fold }};
}"""


# ----------------------------------------------------------------------- the model
@dataclass(frozen=True)
class _Reduction:
    """A warp reduction at a site: the model's collective, the tile its shuffles act on,
    the value's type, and the calls to rewrite (the helper's, or the loop itself)."""

    op: str
    tile: str | None           # the tile as the shuffles name it (the helper's parameter)
    width: int | None
    type: str | None
    calls: tuple               # (call node, tile text, value text): the helper's calls


@functools.lru_cache(maxsize=None)
def _callees(prefix: str) -> tuple[bytes, ...]:
    """The callee names ``spellings.yaml`` gives the operations named ``prefix...``."""
    return tuple({(sp.call or "").split("::")[-1].encode() or (sp.member or "").encode()
                  for op in definitions().values() if op.name.startswith(prefix)
                  for sp in op.spellings} - {b""})


def _spells(unit, prefix: str) -> bool:
    """Whether the file names any callee of those operations: a cheap test before the
    kernel model runs (a search asks it of every state; a macro spelling one holds the
    callee in its definition)."""
    return any(name in unit.source for name in _callees(prefix))


def _shuffles(unit, node):
    return [o for o in operations(unit) if o.name.startswith("shuffle.")
            and node.start_byte <= o.node.start_byte < node.end_byte]


def _tile_of(unit, shuffles) -> tuple[str | None, int | None]:
    objects = set()
    for o in shuffles:
        f = o.node.child_by_field_name("function")
        if f.type != "field_expression" or o.group is None or o.group.kind != "tile":
            return None, None
        objects.add((unit.text(f.child_by_field_name("argument")), o.group.width))
    return objects.pop() if len(objects) == 1 else (None, None)


def reduction(site) -> tuple[_Reduction | None, str]:
    """The hand-written warp reduction at ``site`` (a helper's definition, or an inline
    loop of a kernel), or None with why not."""
    unit, node = site.unit, site.node
    if not _spells(unit, "shuffle."):
        return None, "no sum, max or min warp reduction by shuffles here (kernel model)"
    found = [c for c in collectives(unit) if c.scope == "warp" and c.kind == "reduce"
             and c.how in ("shuffle-down", "shuffle-xor") and node.start_byte <=
             c.node.start_byte < node.end_byte and c.node.type == "for_statement"]
    if len(found) != 1 or found[0].op not in _FUNCTORS:
        return None, "no sum, max or min warp reduction by shuffles here (kernel model)"
    c = found[0]
    tile, width = _tile_of(unit, _shuffles(unit, c.node))
    if node.type == "for_statement":
        return _Reduction(c.op, tile, width, _declared_type(site, c.value), ()), ""
    fn = site.function
    params = [p.name for p in fn.params]
    body = [s for s in fn.body.named_children if s.type != "comment"]
    if len(params) != 2 or tile not in params or c.value not in params or \
            [s.type for s in body] != ["for_statement", "return_statement"] or \
            unit.text(body[1]).split()[1:] != [f"{c.value};"]:
        return None, (f"the helper {fn.name} is not a loop over (tile, value) returning "
                      f"the value")
    calls = []
    for other in collectives(unit):
        if other.via == fn.name and other.node.type == "call_expression":
            args = [a for a in other.node.child_by_field_name("arguments").named_children
                    if a.type != "comment"]
            at = params.index(tile)
            calls.append((other.node, unit.text(args[at]), unit.text(args[1 - at])))
    rtype = unit.text(fn.node.child_by_field_name("type"))
    return _Reduction(c.op, tile, width, rtype, tuple(calls)), ""


def _declared_type(site, name: str | None) -> str | None:
    unit = site.unit
    for d in unit.nodes_of_type("declaration", within=site.function.node):
        for decl in d.children_by_field_name("declarator"):
            ident = decl.child_by_field_name("declarator") \
                if decl.type == "init_declarator" else decl
            if ident is not None and unit.text(ident) == name:
                return unit.text(d.child_by_field_name("type"))
    return None


def _namespace(unit) -> str:
    for n in unit.nodes_of_type("namespace_alias_definition"):
        if unit.text(n).replace(" ", "").endswith("=cooperative_groups;"):
            return unit.text(n.child_by_field_name("name"))
    return "cooperative_groups"


def _include(unit) -> list[Edit]:
    incs = [n for n in unit.nodes_of_type("preproc_include")
            if "cooperative_groups" in unit.text(n)]
    if any("cooperative_groups/reduce.h" in unit.text(n) for n in incs) or not incs:
        return []
    return [Edit(incs[-1].end_byte, incs[-1].end_byte, _INCLUDE)]


def cg_call(ns: str, tile: str, value: str, op: str, typ: str) -> str:
    return f"{ns}::reduce({tile}, {value}, {ns}::{_FUNCTORS[op]}<{typ}>())"


def rewritten(site) -> list[Edit]:
    r, why = reduction(site)
    if r is None:
        raise SkipSite(why)
    unit, ns = site.unit, _namespace(site.unit)
    if site.node.type == "for_statement":
        c = next(c for c in collectives(unit) if c.node.id == site.node.id)
        text = f"{c.value} = {cg_call(ns, r.tile, c.value, r.op, r.type)};"
        return [Edit(site.node.start_byte, site.node.end_byte, text)] + _include(unit)
    edits = [Edit(n.start_byte, n.end_byte, cg_call(ns, t, v, r.op, r.type))
             for n, t, v in r.calls]
    gone = [(n.start_byte, n.end_byte) for n, _, _ in r.calls]
    dead = drop_unused_definitions(unit, gone)
    if not dead:  # the helper is named elsewhere (taken by address, another caller)
        raise SkipSite(f"{site.function.name} has uses other than its calls")
    return edits + dead + _include(unit)


# ------------------------------------------------------------------ preconditions
def _is_reduction(site, ctx) -> Verdict:
    r, why = reduction(site)
    if r is None:
        return Verdict.no(why)
    return Verdict.yes(f"a {r.op} over the lanes" + (f", {len(r.calls)} call(s) of "
                                                     f"{site.function.name}" if r.calls
                                                     else ""))


def _on_a_tile(site, ctx) -> Verdict:
    r, _ = reduction(site)
    if r.tile is None:
        return Verdict.no("the shuffles act on no cooperative-groups tile (cg::reduce "
                          "takes one)")
    if r.width != 32:
        return Verdict.unknown(f"the tile's width is {r.width or 'not known'}: the "
                               f"loop's offsets are checked for 32 lanes")
    if r.type is None:
        return Verdict.no("the value's type is not written (cg::plus<T> needs it)")
    return Verdict.yes(f"{r.tile}, a tile of 32")


def _fold_order(site, ctx) -> Verdict:
    return fold_order(reduction(site)[0].op, ctx, "the library folds the lanes in its own order")


def _same_results(site, ctx) -> Verdict:
    try:
        new = apply_edits(site.unit, site.pass_.rewrite(site, ctx))
    except SkipSite as e:
        return Verdict.no(str(e))
    kernels = [f.name for f in site.unit.kernels()]
    for k in kernels:
        ok, why = same_model(site.unit, new, k)
        if not ok:
            return Verdict.no(f"{k}, on the block machine: {why}")
    return Verdict.yes("every kernel stores the same for a block (block machine)")


PRECONDITIONS = (
    Precondition("warp-reduction", "layout",
                 "a sum, max or min over a warp by shuffles (kernel model), in a helper of "
                 "(tile, value) or inline", _is_reduction),
    Precondition("tile-of-32", "hardware",
                 "the shuffles act on a cooperative-groups tile of 32 lanes", _on_a_tile,
                 needs=("warp-reduction",)),
    Precondition("fold-order", "dtype",
                 "max and min are exact in any order; a float sum needs reassociation",
                 _fold_order, needs=("warp-reduction",)),
    Precondition("same-results", "storage",
                 "every kernel stores the same for a block (block machine)", _same_results,
                 needs=("warp-reduction", "tile-of-32")),
)


# ----------------------------------------------------------------------- the inverse
def library_call(site) -> tuple[tuple | None, str]:
    """(statement, tile, value, op, width) of ``v = cg::reduce(tile, v, f)`` at ``site``,
    or None with why not."""
    unit, node = site.unit, site.node
    if not _spells(unit, "reduce.warp"):
        return None, "not a sum, max or min by cg::reduce (kernel model)"
    c = next((c for c in collectives(unit) if c.node.id == node.id and c.how == "cg-reduce"),
             None)
    if c is None or c.op not in _FUNCTORS:
        return None, "not a sum, max or min by cg::reduce (kernel model)"
    op = next(o for o in operations(unit) if o.node.id == node.id)
    stmt, assign = node.parent, node.parent
    if assign.type != "assignment_expression" or stmt.parent.type != "expression_statement":
        return None, "the reduction's result is not assigned to its value (v = reduce(g, v, f))"
    left = unit.text(assign.child_by_field_name("left"))
    if unit.text(assign.child_by_field_name("operator")) != "=" or left != c.value:
        return None, f"the result goes to {left}, not back to {c.value}"
    tile = unit.text(op.operands["group"])
    return (stmt.parent, tile, c.value, c.op, op.group.width if op.group else None), ""


def loop_text(site, ctx) -> str:
    got, why = library_call(site)
    if got is None:
        raise SkipSite(why)
    stmt, tile, v, op, _ = got
    unit = site.unit
    indent = indent_of(unit, stmt.start_byte)
    fold = _FOLDS[op].format(v=v, s=f"{tile}.shfl_xor({v}, offset)")
    if "offset" in {unit.text(n) for n in unit.nodes_of_type("identifier",
                                                              within=site.function.node)}:
        raise SkipSite("the function already names offset")
    return render(_LOOP, indent, tile=tile, v=v, fold=fold, step="    ").lstrip()


def _is_library_call(site, ctx) -> Verdict:
    got, why = library_call(site)
    return Verdict.yes(f"{got[2]} = reduce({got[1]}, {got[2]}, {got[3]})") if got \
        else Verdict.no(why)


def _library_tile(site, ctx) -> Verdict:
    got, _ = library_call(site)
    if got[4] != 32:
        return Verdict.unknown(f"the tile's width is {got[4] or 'not known'}: the written "
                               f"loop covers 32 lanes")
    return Verdict.yes(f"{got[1]}, a tile of 32")


def _library_order(site, ctx) -> Verdict:
    return fold_order(library_call(site)[0][3], ctx,
                      "the butterfly folds the lanes in another order than the library")


INVERSE_PRECONDITIONS = (
    Precondition("warp-reduction", "layout",
                 "v = cg::reduce(tile, v, plus/greater/less) (kernel model)", _is_library_call),
    Precondition("tile-of-32", "hardware", "the tile has 32 lanes", _library_tile,
                 needs=("warp-reduction",)),
    Precondition("fold-order", "dtype",
                 "max and min are exact in any order; a float sum needs reassociation",
                 _library_order, needs=("warp-reduction",)),
    Precondition("same-results", "storage",
                 "every kernel stores the same for a block (block machine)", _same_results,
                 needs=("warp-reduction", "tile-of-32")),
)


@dataclass(frozen=True)
class CgReduce(Pass):
    """A hand-written warp reduction over a tile becomes the library's ``cg::reduce``.

    Before::

        __device__ float warp_sum(const cg::thread_block_tile<32>& tile, float v) {
            for (int offset = warpSize / 2; offset > 0; offset /= 2)
                v += tile.shfl_down(v, offset);
            return v;
        }
        ... v = warp_sum(tile, v);

    After::

        #include <cooperative_groups/reduce.h>
        ... v = cg::reduce(tile, v, cg::plus<float>());

    Preconditions: warp-reduction (layout: the kernel model reads a sum, max or min by
    shuffles, in a helper of (tile, value) returning the value, or inline), tile-of-32
    (hardware), fold-order (dtype: a float sum needs --assume reassoc), same-results
    (storage: the library gives every lane the total; the block machine compares what
    each kernel stores).

    Options: none.
    """

    name = "cg-reduce"
    scope = "device"  # the helper is a __device__ function
    kind = "optimize"
    inverse = "shuffle-reduce"
    anchor = Rule(any=(Rule(kind="function_definition"), Rule(kind="for_statement")))
    preconditions = PRECONDITIONS

    def rewrite(self, site, ctx):
        return rewritten(site)


@dataclass(frozen=True)
class ShuffleReduce(Pass):
    """``v = cg::reduce(tile, v, f)`` written out as a ``shfl_xor`` butterfly.

    Before::

        v = cg::reduce(tile, v, cg::plus<float>());

    After::

        for (int offset = tile.size() / 2; offset > 0; offset /= 2) {
            v = v + tile.shfl_xor(v, offset);
        }

    Preconditions: as ``cg-reduce``: warp-reduction (the model reads the library call
    assigned back to its value), tile-of-32, fold-order, same-results.

    Options: none.
    """

    name = "shuffle-reduce"
    kind = "simplify"
    inverse = "cg-reduce"
    anchor = Rule(kind="call_expression")
    preconditions = INVERSE_PRECONDITIONS

    def rewrite(self, site, ctx):
        got, why = library_call(site)
        if got is None:
            raise SkipSite(why)
        return [Edit(got[0].start_byte, got[0].end_byte, loop_text(site, ctx))]
