"""First add during load: ``reduce-during-load`` (optimize) and ``reduce-after-load`` (simplify).

A block reduction whose threads each stage one guarded element in their shared slot
(``sdata[tid] = (i < n) ? in[i] : 0;``) combines ``factor`` elements a block apart while
loading instead (Harris' reduction #4), and the grid shrinks by the factor. The load is
read by the kernel model (:func:`kltrans.model.staging.staged_load`) in any spelling: a
shared slot reached through an accessor or an ``extern`` buffer, the thread's index as a
local or a builtin, a ``#define``, template or ``blockDim.x`` block, the value as one
expression or as a local accumulator with guarded ``+=`` statements.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.pointers import pointer_params
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.geometry import role_of
from kltrans.model.launch import Extent, block_dim, grid_dim
from kltrans.model.staging import INFIX, staged_load
from kltrans.passes import Choice, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import (call_parts, contract_of, fresh_name, header_expr,
                                    indent_of, insert_lines_before, int_text, remove_node,
                                    render)
from kltrans.syntax import Edit
from kltrans.syntax.contract import ContractError, evaluate

FACTORS = (2, 4, 8)
_INTEGER = ("int", "unsigned", "long", "short", "char", "size_t", "int32_t", "uint32_t",
            "int64_t", "uint64_t")
_ADDS = """\
{% for off in offs %}if ({{ i }} + {{ off }} < {{ n }}) {{ acc }} {{ op }}= {{ src }}[{{ i }} + {{ off }}];
{% endfor %}"""
_LOCAL = "{{ ty }} {{ acc }} = {{ first }};\n" + _ADDS + "{{ array }}[{{ t }}] = {{ acc }};"
STORE = Rule(pattern="$A[$T] = $V;", inside_kernel=True)
_TERM = "({{ i }} + {{ off }} < {{ n }} ? {{ src }}[{{ i }} + {{ off }}] : {{ pad }})"


def _load(site, factor_one: bool):
    ld, why = staged_load(site.unit, site.node)
    if ld is None:
        raise SkipSite(why)
    if factor_one != (ld.factor == 1):
        raise SkipSite(f"the slot already combines {ld.factor} loads" if factor_one else
                       "the slot holds one load: nothing to undo")
    return ld


def _paren(text: str) -> str:
    return text if re.fullmatch(r"[\w.]+(\(\)[\w.]*)*", text) else f"({text})"


def _offsets(ld, factor: int) -> list[str]:
    b = _paren(ld.block)
    return [b if k == 1 else f"{k} * {b}" for k in range(1, factor)]


def _zero(text: str) -> bool:
    t = text.strip().rstrip("fFuUlL")
    try:
        return float(t) == 0
    except ValueError:
        return False


# ------------------------------------------------------------------ preconditions
def _staged(site, ctx) -> Verdict:
    optimize = site.pass_.kind == "optimize"
    ld, why = staged_load(site.unit, site.node)
    if ld is None:
        return Verdict.no(why)
    if optimize and ld.factor != 1:
        return Verdict.no(f"the slot already combines {ld.factor} loads")
    if not optimize and (ld.factor == 1 or ld.block is None):
        return Verdict.no("the slot holds one load: nothing to undo" if ld.factor == 1 else
                          "the block size the loads step by is not written apart")
    return Verdict.yes(f"{ld.array}[{ld.thread}] = {why}, {ld.index} used nowhere else")


def _operator(site, ctx) -> Verdict:
    ld = _load(site, True)
    if ld.op not in INFIX:
        return Verdict.no(f"the tree folds with {ld.op}; only sum, or, xor (identity 0) are "
                          "combined during the load")
    if not _zero(ld.pad):
        return Verdict.no(f"the padding `{ld.pad}` is not 0, the identity of {ld.op}")
    ty = ld.elem_type or ""
    if any(w in ty.split() for w in _INTEGER):
        return Verdict.yes(f"{ld.op} on {ty} is exact in any grouping")
    if ld.op != "sum":
        return Verdict.no(f"{ld.op} on {ty or 'an unknown type'}")
    if not ctx.assumed("reassoc"):
        return Verdict.unknown(f"{ty or 'the'} sum is regrouped (each thread first adds its "
                               "elements): give --assume reassoc to accept the rounding change")
    return Verdict.yes(f"{ty} sum regrouped, --assume reassoc given")


def _read_only(site, ctx) -> Verdict:
    ld = _load(site, True)
    p = next((p for p in pointer_params(site.unit, site.function) if p.name == ld.src), None)
    if p is None:
        return Verdict.unknown(f"{ld.src} is not a pointer parameter")
    if p.written is None:
        return Verdict.unknown(f"{ld.src} escapes the analysis: {p.reason}")
    if p.written:
        return Verdict.no(f"{site.function.name} writes {ld.src}: the extra loads could read "
                          "elements another block has changed")
    return Verdict.yes(f"{ld.src} is only read")


def _grid(site):
    ld = _load(site, True)
    c, why = contract_of(site)
    if c is None:
        return ld, c, None, why
    return ld, c, grid_dim(c), None


def _grid_shape(site, ctx) -> Verdict:
    ld, c, g, why = _grid(site)
    if g is None:
        return Verdict.no(why)
    if not g.covers or g.cap is not None:
        return Verdict.no(g.reason or f"grid={g.text} is capped: the kernel is not one element "
                          "per thread")
    if not g.counts(ld.bound):
        return Verdict.no(f"grid={g.text} covers {g.count}, not the load's bound {ld.bound}")
    return Verdict.yes(f"grid={g.text}: one block per {g.per_block.text} of the {ld.bound} "
                       "elements, divided by the factor")


def _block_stride(site, ctx) -> Verdict:
    ld, c, g, why = _grid(site)
    if g is None or g.per_block is None:
        return Verdict.no(why or g.reason)
    r = role_of(site.unit, ld.scale)
    consts = dict(c.constants)
    try:
        b = Extent(ld.block, evaluate(ld.block, consts))
    except (ContractError, ValueError, SyntaxError):
        b = Extent(ld.block, None)
    block = block_dim(c)
    same_b = (r is not None and r.kind == "block-size" and r.dim == "x") or b.same(block)
    if not same_b:
        return Verdict.no(f"the index steps by {ld.block} per block while the block is "
                          f"{block.text}: the next load would not be one block further")
    if not g.per_block.same(block):
        return Verdict.no(f"the grid's chunk {g.per_block.text} and the block {block.text} "
                          "differ: the second load would skip or repeat elements")
    return Verdict.yes(f"{ld.block} = the block = the grid's chunk ({block.text})")


@dataclass(frozen=True)
class ReduceDuringLoad(Pass):
    """Combine ``factor`` elements per thread while loading a block reduction (first add during load).

    Before::

        // kltrans: launch reduce grid=ceil_div(n, 256) block=256
        unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
        sdata[tid] = (i < n) ? in[i] : 0;
        __syncthreads();
        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) { ... sdata[tid] += sdata[tid + s] ... }

    After ``reduce-during-load{factor=2}``::

        // kltrans: launch reduce grid=ceil_div(n, 2 * 256) block=256
        unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
        float sum = (i < n) ? in[i] : 0;
        if (i + blockDim.x < n) sum += in[i + blockDim.x];
        sdata[tid] = sum;

    A block covers ``factor`` block-sized chunks; each thread folds its elements (each
    under its own bound check, so no divisibility fact is needed) before the tree, which
    is unchanged. The grid is divided by the factor.

    Preconditions: staged-load (layout: the kernel model reads the store as one guarded
    load ``in[i]`` staged in the thread's shared slot before a block tree, ``i =
    blockIdx.x * B + threadIdx.x`` used nowhere else), operator (dtype: the tree folds
    with sum, or, xor and the pad is 0; integers are exact; a float sum is regrouped and
    needs ``--assume reassoc``), input-read-only (storage: the kernel never writes
    ``in``), grid-shape (pipeline: the contract's grid covers the load's bound ``n`` with
    no cap), block-stride (hardware: ``B``, the block and the grid's chunk are one size).

    Options: ``factor`` (2, 4 or 8 elements per thread; default 2), ``form`` (``local``:
    a local accumulator with guarded ``op=`` statements, the CUDA samples' spelling;
    ``expression``: one folded expression in the store).
    """

    name = "reduce-during-load"
    kind = "optimize"
    inverse = "reduce-after-load"
    anchor = STORE
    preconditions = (
        Precondition("staged-load", "layout",
                     "one guarded load staged in the thread's slot before a block tree",
                     _staged),
        Precondition("operator", "dtype",
                     "the tree folds with sum | or | xor and pad 0; float sums need reassoc",
                     _operator),
        Precondition("input-read-only", "storage", "the kernel never writes the input",
                     _read_only),
        Precondition("grid-shape", "pipeline", "the grid covers the load's bound, uncapped",
                     _grid_shape),
        Precondition("block-stride", "hardware",
                     "the index's block, the block and the grid's chunk are one size",
                     _block_stride),
    )

    factor: int = option(2, Choice(*FACTORS), "elements combined per thread during the load",
                         tune=True)
    form: str = option("local", Choice("local", "expression"),
                       "how the combined value is written")

    def rewrite(self, site, ctx):
        unit, ld = site.unit, _load(site, True)
        offs, op = _offsets(ld, self.factor), INFIX[ld.op]
        env = dict(i=ld.index, n=ld.bound, src=ld.src, op=op, offs=offs)
        edits = [Edit(ld.scale.start_byte, ld.scale.end_byte,
                      f"({unit.text(ld.scale)} * {self.factor})")]
        if ld.form == "local":
            edits.append(insert_lines_before(unit, ld.store, render(_ADDS, acc=ld.local, **env)))
        elif self.form == "local":
            acc = fresh_name(unit, site.function.node, ("sum", "acc", "total"))
            text = render(_LOCAL, indent_of(unit, ld.store.start_byte), acc=acc,
                          ty=ld.elem_type or "auto", first=unit.text(ld.value),
                          array=ld.array, t=ld.thread, **env)
            edits.append(Edit(ld.store.start_byte, ld.store.end_byte, text))
        else:
            terms = [f"({unit.text(ld.value)})"] + [render(_TERM, off=o, pad=ld.pad, **env)
                                                    for o in offs]
            edits.append(Edit(ld.value.start_byte, ld.value.end_byte, f" {op} ".join(terms)))
        return edits

    def update_contract(self, contract, site, ctx):
        g = grid_dim(contract)
        if g.covers and g.cap is None and call_parts(g.text, ("ceil_div",)):
            return contract.with_(grid=(header_expr(
                f"ceil_div({g.count}, {self.factor} * {_paren(g.per_block.text)})"),))
        fn = "CEIL_DIV" if g.text.startswith("CEIL_DIV(") else "ceil_div"
        return contract.with_(grid=(f"{fn}({g.text}, {self.factor})",))

    def inverse_for(self, site, ctx):
        ld = _load(site, True)
        return ReduceAfterLoad(local="keep" if ld.form == "local" or self.form != "local"
                               else "inline")


# ------------------------------------------------------------------------ inverse
def _one_grid(contract, factor: int) -> str | None:
    """The grid of one element per thread, from one of ``factor`` elements per thread."""
    got = call_parts(contract.grid[0])
    if got is not None and len(got[1]) == 2 and int_text(got[1][1]) == factor:
        return got[1][0]                      # ceil_div(G, F)
    g = grid_dim(contract)
    if not g.covers or g.cap is not None:
        return None
    m = re.fullmatch(rf"\s*\(?\s*{factor}\s*\*\s*(.+?)\s*\)?\s*", g.per_block.text)
    per = m.group(1) if m else (str(g.per_block.value // factor)
                                if g.per_block.value and g.per_block.value % factor == 0
                                else None)
    fn = call_parts(g.text)
    return None if per is None else f"{fn[0] if fn else 'ceil_div'}({g.count}, {per})"


def _grid_back(site, ctx) -> Verdict:
    ld = _load(site, False)
    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    g = _one_grid(c, ld.factor)
    if g is None:
        return Verdict.no(f"grid={c.grid[0]} is not ceil_div(G, {ld.factor}) nor a grid of "
                          f"{ld.factor} block-sized chunks per block: cannot tell the grid of "
                          "one element per thread")
    return Verdict.yes(f"grid={c.grid[0]}: back to {g}")


def _local_dead(site, ctx) -> Verdict:
    ld = _load(site, False)
    if site.pass_.local == "keep" or ld.form != "local":
        return Verdict.yes("the value's spelling is kept")
    keep = [ld.local_decl, ld.store, *(t.node for t in ld.terms[1:])]
    other = [n for n in site.unit.walk(site.function.body)
             if n.type == "identifier" and site.unit.text(n) == ld.local
             and not any(k.start_byte <= n.start_byte < k.end_byte for k in keep)]
    if other:
        return Verdict.no(f"{ld.local} is used at line "
                          f"{site.unit.line_col(other[0].start_byte)[0]} after the store: it "
                          "cannot be inlined")
    return Verdict.yes(f"{ld.local} is used only to stage the value")


@dataclass(frozen=True)
class ReduceAfterLoad(Pass):
    """Load one element per thread again: undo the additions during the load, grid multiplied back.

    Before::

        // kltrans: launch reduce grid=ceil_div(n, 2 * 256) block=256
        unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;
        T sum = (i < n) ? in[i] : 0;
        if (i + blockDim.x < n) sum += in[i + blockDim.x];
        sdata[tid] = sum;

    After ``reduce-after-load``::

        // kltrans: launch reduce grid=ceil_div(n, 256) block=256
        unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
        T sum = (i < n) ? in[i] : 0;
        sdata[tid] = sum;

    Preconditions: staged-load (layout: the kernel model reads the store as 2, 4 or 8
    guarded loads a block apart, folded in one expression or a local, before a block
    tree, the index ``blockIdx.x * (B * F) + threadIdx.x`` used nowhere else), grid-back
    (pipeline: the grid is ``ceil_div(G, F)`` or covers ``F`` chunks per block), local-dead
    (storage: with ``local=inline``, the accumulator is used only to stage the value).

    Options: ``local`` (``keep``, the default: a local accumulator stays, with only its
    first load; ``inline``: the first load goes back into the store, the local is dropped).
    """

    name = "reduce-after-load"
    kind = "simplify"
    inverse = "reduce-during-load"
    anchor = STORE
    preconditions = (
        Precondition("staged-load", "layout",
                     "F guarded loads a block apart staged in the thread's slot", _staged),
        Precondition("grid-back", "pipeline", "the grid of one element per thread is known",
                     _grid_back),
        Precondition("local-dead", "storage", "an inlined accumulator has no other use",
                     _local_dead),
    )

    local: str = option("keep", Choice("keep", "inline"), "what becomes of a local accumulator")

    def rewrite(self, site, ctx):
        unit, ld = site.unit, _load(site, False)
        edits = [Edit(ld.scale.start_byte, ld.scale.end_byte, ld.block)]
        if ld.form == "expression":
            first = ld.terms[0].node
            edits.append(Edit(ld.value.start_byte, ld.value.end_byte, unit.text(first)))
            return edits
        edits += [remove_node(unit, t.node) for t in ld.terms[1:]]
        if self.local == "inline":
            first = ld.local_decl.child_by_field_name("declarator").child_by_field_name("value")
            edits += [remove_node(unit, ld.local_decl),
                      Edit(ld.value.start_byte, ld.value.end_byte, unit.text(first))]
        return edits

    def update_contract(self, contract, site, ctx):
        ld, _ = staged_load(site.unit, site.node)
        g = _one_grid(contract, ld.factor) if ld is not None else None
        return contract if g is None else contract.with_(grid=(header_expr(g),))

    def inverse_for(self, site, ctx):
        ld = _load(site, False)
        return ReduceDuringLoad(factor=ld.factor,
                                form="local" if ld.form == "local" else "expression")
