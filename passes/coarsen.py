"""Thread coarsening: ``coarsen`` (optimize) and its inverse ``uncoarsen`` (simplify)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.affine import Affine, affine_of
from kltrans.analysis.loops import assigned_in
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Choice, Identifier, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.analysis.affine import strip_parens as _strip
from kltrans.passes.guard import GUARD, GUARD_PRECONDITIONS, builtin, guarded, index_decl
from kltrans.passes.rewrite import (
    call_parts, contract_of, declared_names, fresh_numbered as fresh, header_expr,
    indent_of as line_indent, indent_step, inside, int_text, norm, rename, shift, statements,
    unshift, used_names)

FACTORS = (2, 4, 8)
COUNTERS = ("c", "k", "u", "v", "w", "cc")
ELEMS = ("j", "e", "jj", "ee")


def _block_product(unit, value):
    """(the blockDim.x node of the product blockIdx.x * blockDim.x in ``value``, why not)."""
    dims = [n for n in unit.walk(value) if builtin(unit, n) == "blockDim.x"]
    e = norm(unit.text(value))
    if len(dims) != 1:
        return None, (f"`{e}` names blockDim.x {len(dims)} times: coarsening scales the one "
                      "blockDim.x of the product blockIdx.x * blockDim.x")
    dim = dims[0]
    p = dim.parent
    while p is not None and p.type == "parenthesized_expression":
        p = p.parent
    if p is None or p.type != "binary_expression" or \
            unit.text(p.child_by_field_name("operator")) != "*":
        return None, f"blockDim.x in `{e}` is not a factor of blockIdx.x * blockDim.x"
    other = [_strip(p.child_by_field_name(s)) for s in ("left", "right")]
    if not any(o is not None and builtin(unit, o) == "blockIdx.x" for o in other):
        return None, f"blockDim.x in `{e}` is not multiplied by blockIdx.x itself"
    return dim, None


# ------------------------------------------------------------------ preconditions
def _index_form(site, ctx) -> Verdict:
    g = guarded(site)
    d = index_decl(site.unit, site.function, g.index)
    if isinstance(d, str):
        return Verdict.unknown(d)
    dim, why = _block_product(site.unit, d.value)
    if dim is None:
        return Verdict.no(why)
    return Verdict.yes(f"the block offset blockIdx.x * blockDim.x is written out in "
                       f"`{norm(site.unit.text(d.value))}`")


def _names(p, site):
    unit, fn = site.unit, site.function
    c = p.counter if p.counter != "auto" else fresh(unit, fn, COUNTERS)
    j = p.elem if p.elem != "auto" else fresh(unit, fn, ELEMS, taken={c})
    return c, j


def _fresh_names(site, ctx) -> Verdict:
    p = site.pass_
    c, j = _names(p, site)
    if c == j:
        return Verdict.no(f"the loop counter and the element index are both named {c}")
    used = used_names(site.unit, site.function)
    for what, name in (("loop counter", c), ("element index", j)):
        if name in used:
            return Verdict.no(f"the {what} name {name} is already used in {site.function.name}")
    return Verdict.yes(f"loop counter {c} and element index {j} are fresh")


@dataclass(frozen=True)
class Coarsen(Pass):
    """Coarsen threads: each thread handles ``factor`` elements ``blockDim.x`` apart.

    Before::

        // kltrans: launch scale grid=ceil_div(n, 256) block=256
        __global__ void scale(const float* x, float* y, float a, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) y[i] = a * x[i];
        }

    After ``coarsen{factor=4}``::

        // kltrans: launch scale grid=ceil_div(ceil_div(n, 256), 4) block=256
        __global__ void scale(const float* x, float* y, float a, int n) {
          int i = blockIdx.x * blockDim.x * 4 + threadIdx.x;
          for (int c = 0; c < 4; ++c) {
            int j = i + c * blockDim.x;
            if (j < n) y[j] = a * x[j];
          }
        }

    A block covers ``factor`` consecutive block-sized chunks; consecutive threads still
    touch consecutive elements (coalesced) on every iteration. The guard stays on each
    element, so no size fact is needed; the grid of the launch header is divided by the
    factor (``ceil_div(G, factor)`` covers what ``G`` covered).

    Preconditions: those of ``grid-stride`` — bound-check (pipeline), global-index
    (layout), sole-work (pipeline), element-private (layout), no-early-exit (pipeline),
    no-barrier (pipeline), index-type (dtype), launch-contract (hardware: the 1-D block
    whose size ``blockDim.x`` stands for is in the header) — plus index-form (layout: the
    index is written with the product ``blockIdx.x * blockDim.x``, the factor goes there)
    and fresh-names (pipeline: the loop counter and element index are unused names).

    Options: ``factor`` (2, 4 or 8; default 4), ``counter`` and ``elem`` (the names of the
    loop counter and the element index; ``auto`` picks unused ones: c, j).
    """

    name = "coarsen"
    kind = "optimize"
    inverse = "uncoarsen"
    anchor = GUARD
    preconditions = GUARD_PRECONDITIONS + (
        Precondition("index-form", "layout",
                     "the index is written as blockIdx.x * blockDim.x + ... (the factor scales "
                     "that product)", _index_form),
        Precondition("fresh-names", "pipeline",
                     "the loop counter and element index names are not used in the kernel",
                     _fresh_names),
    )

    factor: int = option(4, Choice(*FACTORS), "elements per thread", tune=True)
    counter: str = option("auto", Identifier(), "name of the loop counter (auto: a fresh name)")
    elem: str = option("auto", Identifier(), "name of the element index (auto: a fresh name)")

    def rewrite(self, site, ctx):
        unit = site.unit
        g = guarded(site)
        d = index_decl(unit, site.function, g.index)
        dim, _ = _block_product(unit, d.value)
        c, j = _names(self, site)
        f = self.factor
        ind = line_indent(unit, g.stmt.start_byte)
        st = indent_step(unit, g.stmt)
        inner = shift(rename(unit, g.stmt, g.index, j), st)
        text = (f"for (int {c} = 0; {c} < {f}; ++{c}) {{\n"
                f"{ind}{st}{d.type_text} {j} = {g.index} + {c} * blockDim.x;\n"
                f"{ind}{st}{inner}\n"
                f"{ind}}}")
        return [Edit.insert(dim.end_byte, f" * {f}"),
                Edit(g.stmt.start_byte, g.stmt.end_byte, text)]

    def update_contract(self, contract, site, ctx):
        g = contract.grid[0]
        fn = "CEIL_DIV" if "CEIL_DIV(" in g else "ceil_div"
        return contract.with_(grid=(f"{fn}({g}, {self.factor})",))

    def inverse_for(self, site, ctx):
        return Uncoarsen()


# ------------------------------------------------------------------------ inverse
COARSENED = Rule(pattern="for (int $C = 0; $C < $F; ++$C) { $T $J = $I + $C * blockDim.x; "
                         "if ($J < $N) $BODY; }",
                 inside_kernel=True,
                 constraints={"C": {"kind": "identifier"}, "J": {"kind": "identifier"},
                              "I": {"kind": "identifier"}, "F": {"predicate": "int-literal"}})


def _inner_if(site):
    body = site.node.child_by_field_name("body")
    return statements(body)[1]


def _scaled_dim(site):
    """(index declaration, blockDim.x node, end of ` * F` after it) or (None, why)."""
    unit, fn = site.unit, site.function
    i, f = site.text("I"), site.text("F")
    d = index_decl(unit, fn, i)
    if isinstance(d, str):
        return None, d
    dims = [n for n in unit.walk(d.value) if builtin(unit, n) == "blockDim.x"]
    if len(dims) != 1:
        return None, (f"`{i} = {norm(unit.text(d.value))}` names blockDim.x {len(dims)} times, "
                      "not once scaled by the factor")
    dim = dims[0]
    m = re.match(rf"\s*\*\s*{re.escape(f)}(?![\w.])", unit.source[dim.end_byte:d.value.end_byte]
                 .decode("utf-8", "replace"))
    if m is None:
        return None, (f"`{i} = {norm(unit.text(d.value))}` does not scale blockDim.x by the "
                      f"loop's {f}")
    return (d, dim, dim.end_byte + len(m.group(0).encode("utf-8"))), None


def _coarsened_index(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    i = site.text("I")
    f = int_text(site.text("F"))
    if f not in FACTORS:
        return Verdict.no(f"factor {site.text('F')} is not one of coarsen's factors "
                          f"{', '.join(map(str, FACTORS))}: no exact inverse")
    got, why = _scaled_dim(site)
    if got is None:
        return Verdict.no(why)
    d = got[0]
    want = Affine.sym("blockIdx.x") * Affine.sym("blockDim.x") * f + Affine.sym("threadIdx.x")
    a = affine_of(unit, d.value)
    if a is None or a != want:
        return Verdict.no(f"`{i} = {norm(unit.text(d.value))}` is not blockIdx.x * blockDim.x "
                          f"* {f} + threadIdx.x")
    if assigned_in(unit, fn.body, i):
        return Verdict.no(f"{i} is assigned after its declaration")
    j_decl = statements(site.node.child_by_field_name("body"))[0]
    for n in unit.walk(fn.body):
        if n.type == "identifier" and unit.text(n) == i and not inside(n, d.decl) and \
                not inside(n, j_decl):
            return Verdict.no(f"{i} is used outside the coarsened loop (line "
                              f"{unit.line_col(n.start_byte)[0]}): it would change meaning")
    return Verdict.yes(f"{i} starts the block's {f} chunks: blockIdx.x * blockDim.x * {f} + "
                       "threadIdx.x")


def _lane_private(site, ctx) -> Verdict:
    unit = site.unit
    c, i, j = site.text("C"), site.text("I"), site.text("J")
    inner = _inner_if(site)
    for n in unit.walk(inner):
        if n.type == "identifier" and unit.text(n) in (c, i):
            line = unit.line_col(n.start_byte)[0]
            return Verdict.no(f"the body uses {unit.text(n)} (line {line}): only {j} may "
                              "survive as the element index")
    if assigned_in(unit, inner, j):
        return Verdict.no(f"the body assigns {j}")
    if j in {name for name, _ in declared_names(unit, inner)}:
        return Verdict.no(f"the body declares its own {j}")
    return Verdict.yes(f"the body sees the element only through {j}")


def _contract_shape(site, ctx) -> Verdict:
    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    got = call_parts(c.grid[0])
    f = site.text("F")
    if got is None or len(got[1]) != 2 or norm(got[1][1]) != norm(f):
        return Verdict.no(f"grid={c.grid[0]} is not ceil_div(G, {f}): cannot tell the grid of "
                          "one element per thread")
    return Verdict.yes(f"grid={c.grid[0]}: restored to {got[1][0]}")


@dataclass(frozen=True)
class Uncoarsen(Pass):
    """Undo thread coarsening: one element per thread again, the grid multiplied back.

    Before::

        // kltrans: launch scale grid=ceil_div(ceil_div(n, 256), 4) block=256
        int i = blockIdx.x * blockDim.x * 4 + threadIdx.x;
        for (int c = 0; c < 4; ++c) {
          int j = i + c * blockDim.x;
          if (j < n) y[j] = a * x[j];
        }

    After ``uncoarsen``::

        // kltrans: launch scale grid=ceil_div(n, 256) block=256
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i];

    Preconditions: coarsened-index (layout: ``i`` is ``blockIdx.x * blockDim.x * F +
    threadIdx.x`` with the loop's factor F in 2, 4, 8, used nowhere but in ``j``'s
    definition), lane-private (layout: the guarded body uses neither the counter nor
    ``i``, only ``j``), contract-shape (hardware: the launch header's grid is
    ``ceil_div(G, F)``, restored to ``G``).

    Options: none.
    """

    name = "uncoarsen"
    kind = "simplify"
    inverse = "coarsen"
    anchor = COARSENED
    preconditions = (
        Precondition("coarsened-index", "layout",
                     "i is blockIdx.x * blockDim.x * F + threadIdx.x, used only to define j",
                     _coarsened_index),
        Precondition("lane-private", "layout",
                     "the guarded body uses only the element index j", _lane_private),
        Precondition("contract-shape", "hardware",
                     "the launch header's grid is ceil_div(G, F)", _contract_shape),
    )

    def rewrite(self, site, ctx):
        unit = site.unit
        (d, dim, end), _ = _scaled_dim(site)
        st = indent_step(unit, site.node)
        text = unshift(rename(unit, _inner_if(site), site.text("J"), site.text("I")), st)
        return [Edit.delete(dim.end_byte, end),
                Edit(site.node.start_byte, site.node.end_byte, text)]

    def update_contract(self, contract, site, ctx):
        got = call_parts(contract.grid[0])
        if got is None or len(got[1]) != 2 or norm(got[1][1]) != norm(site.text("F")):
            return contract
        return contract.with_(grid=(header_expr(got[1][0]),))

    def inverse_for(self, site, ctx):
        return Coarsen(factor=int_text(site.text("F")), counter=site.text("C"),
                       elem=site.text("J"))
