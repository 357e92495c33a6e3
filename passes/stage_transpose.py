"""Shared-memory staging of a 2-D transpose: ``stage-transpose`` (optimize) and its
inverse ``unstage-transpose`` (simplify).

A naive transpose ``out[c * rows + r] = in[r * cols + c]`` with one thread per element
coalesces one side only: consecutive threads read consecutive floats of an input row but
write a column of the output (or the reverse). Staging a ``TILE x TILE`` tile in shared
memory makes both sides coalesced: the block reads the tile row by row (``threadIdx.x``
along the contiguous input dimension), waits at a barrier, and writes it back row by row
of the output, reading the tile column-wise. A block of ``BX x BY`` threads moves
``(TILE / BX) * (TILE / BY)`` elements per thread (the 2-D coarsening of the classic
``TILE_DIM x BLOCK_ROWS`` kernel).

Each side first reads the exact form the other writes (for some choice of its options:
names, tile, the spelling of the tile and block constants) by writing that form again
from what it read and comparing token for token; so ``inverse_for`` can hand back the
options that reproduce the kernel exactly. Any other spelling is read by the kernel model
(:func:`kltrans.model.transpose.transpose_of`: indices through locals, casts, swapped
operands, early returns, padded tiles, loops from ``threadIdx``) and rewritten in the
pair's own spelling; the ``same-results`` precondition then runs both kernels over whole
grids (the grid machine), which also decides the bounds the model does not read. Such a
round trip gives the same program back, not the same text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.effects import Unsupported
from kltrans.model.grid import same_grid_effects
from kltrans.model.transpose import transpose_of
from kltrans.passes import Choice, Identifier, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import (call_parts, indent_of as line_indent, norm,
                                    rewritten_unit, statements)
from kltrans.syntax import Edit
from kltrans.passes.token_forms import (
    toks, conjuncts as _conjuncts, balanced as _balanced, less_than as _less)
from kltrans.passes.launch_facts import value_of

TILES = (16, 32, 64)
SMEM_LIMIT = 48 * 1024  # static shared memory per block without opt-in
_SIZES = {"float": 4, "int": 4, "unsigned": 4, "unsigned int": 4, "double": 8, "long long": 8,
          "short": 2, "char": 1, "unsigned char": 1, "__half": 2, "half": 2,
          "__nv_bfloat16": 2, "int64_t": 8, "uint32_t": 4, "int32_t": 4, "uint64_t": 8}
FORMS = {  # how the naive kernel spells its global index along axis D
    "bid-dim-tid": "blockIdx.{d} * blockDim.{d} + threadIdx.{d}",
    "dim-bid-tid": "blockDim.{d} * blockIdx.{d} + threadIdx.{d}",
    "tid-bid-dim": "threadIdx.{d} + blockIdx.{d} * blockDim.{d}",
    "tid-dim-bid": "threadIdx.{d} + blockDim.{d} * blockIdx.{d}",
}


# ----------------------------------------------------------------------- helpers


def header_contract(site):
    """(contract, why): the kernel's ``// kltrans: launch`` header with a 2-D block."""
    from kltrans.syntax.contract import ContractError, contracts

    try:
        c = contracts(site.unit).get(site.function.name)
    except ContractError as e:
        return None, f"the launch contract does not read: {e}"
    if c is None:
        return None, (f"{site.function.name} has no launch contract: add "
                      f"`// kltrans: launch {site.function.name} grid=... block=...`")
    if c.source != "header":
        return None, "the launch is read from a host launcher: the pass rewrites the grid of a header"
    if len(c.grid) != 2 or len(c.block) != 2:
        return None, f"the launch is not 2-D (grid={c.grid}, block={c.block})"
    return c, ""


def ident_ok(name: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z_]\w*", name))


def _rename(text: str, mapping: dict) -> str:
    return re.sub(r"[A-Za-z_]\w*", lambda m: mapping.get(m.group(0), m.group(0)), text)


# ------------------------------------------------------------------ the two forms
@dataclass(frozen=True)
class Shape:
    """Everything that fixes the text of both forms of one transpose kernel."""

    elem: str  # element type
    src: str  # input array (name)
    dst: str  # output array (name)
    row: str  # name of the input-row index (naive) / load temporary
    col: str  # name of the input-column index
    rows: str  # extent of the row index (the guard's bound)
    cols: str  # extent of the column index
    guard: str  # naive guard condition text, in row/col
    in_idx: str  # subscript of the input, in row/col
    out_idx: str  # subscript of the output, in row/col
    row_axis: str  # 'x' or 'y': the axis whose blockIdx walks the input rows
    braces: bool  # the guarded statement is in braces
    # naive spelling
    itype: str = "int"
    form: str = "bid-dim-tid"
    order: str = "x-first"
    # tiled spelling
    tile: int = 32
    tile_s: str = "32"
    bx: int = 32
    by: int = 8
    bx_s: str = "32"
    by_s: str = "8"
    smem: str = "tile"
    tx: str = "tx"
    ty: str = "ty"
    r0: str = "r0"
    c0: str = "c0"
    j: str = "j"
    h: str = "h"
    orow: str = "orow"
    ocol: str = "ocol"
    read: str = "text"  # "text": the exact form; "model": read by kltrans.model.transpose

    @property
    def col_axis(self) -> str:
        return "y" if self.row_axis == "x" else "x"


def naive_text(s: Shape, ind: str, st: str) -> str:
    """The kernel body statements of the one-element-per-thread transpose."""
    itype = "const int" if s.itype == "const-int" else "int"
    form = FORMS[s.form]
    decl = {s.row_axis: f"{itype} {s.row} = {form.format(d=s.row_axis)};",
            s.col_axis: f"{itype} {s.col} = {form.format(d=s.col_axis)};"}
    first, second = ("x", "y") if s.order == "x-first" else ("y", "x")
    stmt = f"{s.dst}[{s.out_idx}] = {s.src}[{s.in_idx}];"
    body = f"{{\n{ind}{st}{stmt}\n{ind}}}" if s.braces else f"{stmt}"
    return f"{decl[first]}\n{ind}{decl[second]}\n{ind}if ({s.guard}) {body}"


def _nest(s: Shape, ind: str, st: str, inner: list[str]) -> str:
    """``inner`` (lines without indentation) inside the loops over the tile."""
    loops = []
    if s.by < s.tile:
        loops.append(f"for (int {s.j} = 0; {s.j} < {s.tile_s}; {s.j} += {s.by_s}) {{")
    if s.bx < s.tile:
        loops.append(f"for (int {s.h} = 0; {s.h} < {s.tile_s}; {s.h} += {s.bx_s}) {{")
    lines = []
    for k, lp in enumerate(loops):
        lines.append(st * k + lp)
    for ln in inner:
        lines.append(st * len(loops) + ln if ln else ln)
    for k in reversed(range(len(loops))):
        lines.append(st * k + "}")
    return ("\n" + ind).join(lines)


def tiled_text(s: Shape, ind: str, st: str) -> str:
    """The kernel body statements of the staged transpose."""
    yj = f"{s.ty} + {s.j}" if s.by < s.tile else s.ty
    xh = f"{s.tx} + {s.h}" if s.bx < s.tile else s.tx
    load = f"{s.smem}[{yj}][{xh}] = {s.src}[{s.in_idx}];"
    out_idx = _rename(s.out_idx, {s.row: s.ocol, s.col: s.orow})
    store = f"{s.dst}[{out_idx}] = {s.smem}[{xh}][{yj}];"

    def guarded(cond, stmt):
        if s.braces:
            return [f"if ({cond}) {{", st + stmt, "}"]
        return [f"if ({cond}) {stmt}"]

    load_in = [f"const int {s.row} = {s.r0} + {yj};", f"const int {s.col} = {s.c0} + {xh};",
               *guarded(s.guard, load)]
    store_in = [f"const int {s.orow} = {s.c0} + {yj};", f"const int {s.ocol} = {s.r0} + {xh};",
                *guarded(f"{s.orow} < {s.cols} && {s.ocol} < {s.rows}", store)]
    return "\n".join([
        f"__shared__ {s.elem} {s.smem}[{s.tile_s}][{s.tile_s}];",
        "",
        f"{ind}const int {s.tx} = threadIdx.x;",
        f"{ind}const int {s.ty} = threadIdx.y;",
        f"{ind}const int {s.r0} = blockIdx.{s.row_axis} * {s.tile_s};",
        f"{ind}const int {s.c0} = blockIdx.{s.col_axis} * {s.tile_s};",
        "",
        f"{ind}{_nest(s, ind, st, load_in)}",
        f"{ind}__syncthreads();",
        "",
        f"{ind}{_nest(s, ind, st, store_in)}",
    ])


def body_span(fn):
    """(first statement, last statement) of the kernel body, or None."""
    sts = statements(fn.body)
    return (sts[0], sts[-1]) if sts else None


def indents(unit, fn):
    sts = statements(fn.body)
    ind = line_indent(unit, sts[0].start_byte) if sts else "  "
    return ind, (ind or "  ")


# ------------------------------------------------------------- reading the naive form
def _pointee(fn, unit, name: str) -> str | None:
    """``const float* __restrict__ x`` -> ``float`` for parameter ``x``."""
    for p in fn.node.child_by_field_name("declarator").child_by_field_name("parameters").named_children:
        if p.type != "parameter_declaration":
            continue
        t = unit.text(p)
        m = re.fullmatch(rf"(?:const\s+)?([A-Za-z_][\w\s]*?)\s*\*\s*(?:const\s+)?(?:__restrict__\s+)?"
                         rf"(?:const\s+)?{re.escape(name)}", norm(t))
        if m:
            return norm(m.group(1))
    return None


def _decl_form(text: str):
    """``[const] int NAME = <global index along D>;`` -> (itype, NAME, form, D) or None."""
    m = re.fullmatch(r"(const\s+int|int)\s+([A-Za-z_]\w*)\s*=\s*(.+?)\s*;", norm(text))
    if not m:
        return None
    value = m.group(3).replace(" ", "")
    for form, pat in FORMS.items():
        for d in "xy":
            if value == pat.format(d=d).replace(" ", ""):
                return ("const-int" if m.group(1).startswith("const") else "int", m.group(2),
                        form, d)
    return None


def read_naive(site) -> tuple[Shape | None, str]:
    """The Shape of a naive transpose kernel (site = the kernel), or why it is not one:
    the exact form first (its names and spelling kept), else as the model reads it."""
    s, why = _read_naive_text(site)
    if s is not None:
        return s, ""
    s, mwhy = model_shape(site, staged=False)
    return (s, "") if s is not None else (None, f"{why}; the model: {mwhy}")


def _read_naive_text(site) -> tuple[Shape | None, str]:
    unit, fn = site.unit, site.function
    sts = statements(fn.body)
    if len(sts) != 3:
        return None, (f"the body of {fn.name} has {len(sts)} statements, not the two index "
                      "declarations and the guarded copy of a naive transpose")
    d1, d2, g = sts
    f1, f2 = _decl_form(unit.text(d1)), _decl_form(unit.text(d2))
    if f1 is None or f2 is None:
        bad = d1 if f1 is None else d2
        return None, (f"`{norm(unit.text(bad))}` is not `int NAME = blockIdx.D * blockDim.D + "
                      "threadIdx.D` (or a reordering of it)")
    if f1[0] != f2[0] or f1[2] != f2[2]:
        return None, "the two index declarations are spelled differently (type or form)"
    if f1[3] == f2[3] or f1[1] == f2[1]:
        return None, "the two indices do not cover the x and y axes"
    if g.type != "if_statement" or g.child_by_field_name("alternative") is not None:
        return None, f"`{norm(unit.text(g))[:60]}` is not a guard `if (...) out[...] = in[...];`"
    cond = unit.text(g.child_by_field_name("condition")).strip()[1:-1].strip()
    body = g.child_by_field_name("consequence")
    braces = body.type == "compound_statement"
    inner = statements(body)
    if len(inner) != 1 or inner[0].type != "expression_statement":
        return None, "the guard does not hold exactly one assignment"
    m = re.fullmatch(r"([A-Za-z_]\w*)\s*\[(.+)\]\s*=\s*([A-Za-z_]\w*)\s*\[(.+)\]\s*;",
                     norm(unit.text(inner[0])))
    if not m or not _balanced(m.group(2)) or not _balanced(m.group(4)):
        return None, f"`{norm(unit.text(inner[0]))}` is not `out[...] = in[...];`"
    dst, out_idx, src, in_idx = m.groups()
    if dst == src:
        return None, f"{dst} is both read and written: an in-place transpose"
    names = {f1[3]: f1[1], f2[3]: f2[1]}
    conj = _conjuncts(cond)
    lt = [_less(c) for c in conj] if conj else None
    if not lt or len(lt) != 2 or None in lt or {a for a, _ in lt} != set(names.values()):
        return None, (f"the guard `{cond}` is not `{names['x']} < E && {names['y']} < F` "
                      "(each index bounded by an extent)")
    ext = dict(lt)
    # which index walks the input rows: the one that multiplies the input's row length
    for row, col in ((names["x"], names["y"]), (names["y"], names["x"])):
        if _linear(in_idx, row, ext[col], col) and _linear(out_idx, col, ext[row], row):
            break
    else:
        return None, (f"`{src}[{in_idx}]` -> `{dst}[{out_idx}]` is not a transpose "
                      f"(in[r * cols + c] -> out[c * rows + r] with the guard's extents)")
    row_axis = "x" if names["x"] == row else "y"
    order = "x-first" if f1[3] == "x" else "y-first"
    elem = _pointee(fn, unit, src) or ""
    return Shape(elem=elem, src=src, dst=dst, row=row, col=col, rows=ext[row], cols=ext[col],
                 guard=cond, in_idx=in_idx, out_idx=out_idx, row_axis=row_axis, braces=braces,
                 itype=f1[0], form=f1[2], order=order), ""


def _linear(idx: str, major: str, stride: str, minor: str) -> bool:
    """``idx`` is ``[(cast)]major * stride + minor`` (either operand order)."""
    t = idx.replace(" ", "")
    cast = r"(?:\([A-Za-z_][\w ]*\))?"
    mj, sd, mn = re.escape(major), re.escape(stride.replace(" ", "")), re.escape(minor)
    prod = rf"(?:{cast}{mj}\*{cast}\(?{sd}\)?|{cast}\(?{sd}\)?\*{cast}{mj})"
    return bool(re.fullmatch(rf"{prod}\+{cast}{mn}|{cast}{mn}\+{prod}", t))


# ------------------------------------------------------------- reading the tiled form
_FOR = re.compile(r"for\s*\(\s*int\s+([A-Za-z_]\w*)\s*=\s*0\s*;\s*\1\s*<\s*([^;]+?)\s*;\s*"
                  r"\1\s*\+=\s*([^)]+?)\s*\)")


def read_tiled(site) -> tuple[Shape | None, str]:
    """The Shape whose tiled text the kernel body is, else the staged transpose the model
    reads, or why there is none."""
    s, why = _read_tiled_text(site)
    if s is not None:
        return s, ""
    s, mwhy = model_shape(site, staged=True)
    return (s, "") if s is not None else (None, f"{why}; the model: {mwhy}")


def model_shape(site, staged: bool) -> tuple[Shape | None, str]:
    """The Shape of the transpose :func:`kltrans.model.transpose.transpose_of` reads, in
    this pass's own spelling (fresh index names, ``row * cols + col``); whether the
    kernel does the same as that spelling is the ``same-results`` precondition's run."""
    from kltrans.passes.rewrite import fresh_numbered

    unit, fn = site.unit, site.function
    t, why = transpose_of(unit, fn)
    if t is None:
        return None, why
    if (t.tile is not None) != staged:
        return None, ("a direct copy, not staged through shared memory" if staged else
                      f"already staged through the shared array {t.tile}")
    c, why = header_contract(site)
    if c is None:
        return None, why
    bx, by = (value_of(unit, b) for b in c.block)
    if bx is None or by is None:
        return None, f"the block ({', '.join(c.block)}) has no known value"
    row = fresh_numbered(unit, fn, ("row", "r"))
    col = fresh_numbered(unit, fn, ("col", "c"), taken={row})
    s = Shape(elem=t.elem or "", src=t.src, dst=t.dst, row=row, col=col, rows=t.rows,
              cols=t.cols, guard=f"{row} < {t.rows} && {col} < {t.cols}",
              in_idx=f"{row} * {t.cols} + {col}", out_idx=f"{col} * {t.rows} + {row}",
              row_axis=t.row_axis, braces=True, bx=bx, by=by, bx_s=str(bx), by_s=str(by),
              read="model")
    if not staged:
        return s, ""
    tile = t.span[0]
    if tile is None or t.span[0] != t.span[1]:
        return None, f"a block covers {t.span[0]} x {t.span[1]} of the input: not a square tile"
    return replace(s, tile=tile, tile_s=str(tile)), ""


def _read_tiled_text(site) -> tuple[Shape | None, str]:
    unit, fn = site.unit, site.function
    sts = statements(fn.body)
    if len(sts) < 7:
        return None, f"the body of {fn.name} is not the staged transpose (too few statements)"
    t = [norm(unit.text(x)) for x in sts]
    m = re.fullmatch(r"__shared__\s+(.+?)\s+([A-Za-z_]\w*)\s*\[\s*(\w+)\s*\]\s*\[\s*(\w+)\s*\]\s*;",
                     t[0])
    if not m or m.group(3) != m.group(4):
        return None, f"`{t[0]}` is not a square shared tile `__shared__ T tile[TILE][TILE];`"
    elem, smem, tile_s = m.group(1), m.group(2), m.group(3)
    names = []
    for k, want in ((1, r"threadIdx\.x"), (2, r"threadIdx\.y")):
        mm = re.fullmatch(rf"const int ([A-Za-z_]\w*) = {want};", t[k])
        if not mm:
            return None, f"`{t[k]}` is not `const int NAME = {want.replace(chr(92), '')};`"
        names.append(mm.group(1))
    tx, ty = names
    org = []
    for k in (3, 4):
        mm = re.fullmatch(rf"const int ([A-Za-z_]\w*) = blockIdx\.([xy]) \* {re.escape(tile_s)};",
                          t[k])
        if not mm:
            return None, f"`{t[k]}` is not `const int NAME = blockIdx.D * {tile_s};`"
        org.append(mm.groups())
    (r0, row_axis), (c0, col_axis) = org
    if row_axis == col_axis:
        return None, "both tile origins use the same blockIdx axis"
    sync = [k for k in range(5, len(t)) if t[k] == "__syncthreads();"]
    if len(sync) != 1:
        return None, "the load and the store of the tile are not separated by one __syncthreads()"
    k = sync[0]
    if k == 5 or k == len(t) - 1:
        return None, "the barrier does not stand between a load and a store of the tile"

    def span(a, b):
        return unit.source[sts[a].start_byte:sts[b].end_byte].decode("utf-8", "replace")

    loop_txt = [span(5, k - 1), span(k + 1, len(sts) - 1)]
    loops = _FOR.findall(loop_txt[0])
    j = h = None
    bx_s = by_s = None
    for var, bound, step in loops:
        if norm(bound) != tile_s:
            return None, f"the loop over {var} does not run to the tile size {tile_s}"
        if re.search(rf"\b{ty}\s*\+\s*{var}\b", loop_txt[0]):
            j, by_s = var, norm(step)
        elif re.search(rf"\b{tx}\s*\+\s*{var}\b", loop_txt[0]):
            h, bx_s = var, norm(step)
    lm = re.search(rf"const int ([A-Za-z_]\w*) = {r0} \+ [^;]*; const int ([A-Za-z_]\w*) = "
                   rf"{c0} \+ [^;]*; if \((.*?)\) \{{? ?{smem}\[[^\]]*\]\[[^\]]*\] = "
                   rf"([A-Za-z_]\w*)\[(.*)\]; ?\}}?", norm(loop_txt[0]))
    sm = re.search(rf"const int ([A-Za-z_]\w*) = {c0} \+ [^;]*; const int ([A-Za-z_]\w*) = "
                   rf"{r0} \+ [^;]*; if \(\1 < (.*?) && \2 < (.*?)\) \{{? ?([A-Za-z_]\w*)\[(.*)\] = "
                   rf"{smem}\[", norm(loop_txt[1]))
    if not lm or not sm:
        return None, ("the tile loops are not the guarded load `tile[..][..] = in[..]` and "
                      "guarded store `out[..] = tile[..][..]` that stage-transpose writes")
    row, col, guard, src, in_idx = lm.groups()
    orow, ocol, cols, rows, dst, out_t = sm.groups()
    in_idx = in_idx.strip()
    out_idx = _rename(out_t.strip(), {ocol: row, orow: col})
    braces = "{" in norm(loop_txt[0]).split(f"if ({guard})", 1)[1][:3]
    c, why = header_contract(site)
    if c is None:
        return None, why
    bx, by = (value_of(unit, b) for b in c.block)
    tile = value_of(unit, tile_s)
    if None in (bx, by, tile):
        return None, "the tile size or the block size has no known value"
    bx_s, by_s = bx_s or str(bx), by_s or str(by)
    bxv, byv = value_of(unit, bx_s), value_of(unit, by_s)
    if bxv not in (None, bx) or byv not in (None, by):
        return None, f"the loop steps {bx_s}, {by_s} are not the block's {bx} x {by}"
    s = Shape(elem=elem, src=src, dst=dst, row=row, col=col, rows=rows.strip(),
              cols=cols.strip(), guard=guard.strip(), in_idx=in_idx, out_idx=out_idx,
              row_axis=row_axis, braces=braces, tile=tile, tile_s=tile_s, bx=bx, by=by,
              bx_s=bx_s, by_s=by_s, smem=smem, tx=tx, ty=ty, r0=r0, c0=c0,
              j=j or "j", h=h or "h", orow=orow, ocol=ocol)
    ind, st = indents(unit, fn)
    got = toks(unit.source[sts[0].start_byte:sts[-1].end_byte].decode("utf-8", "replace"))
    if toks(tiled_text(s, ind, st)) != got:
        return None, ("the body is not exactly the staged transpose stage-transpose writes "
                      "(tile, load loops, barrier, store loops and nothing else)")
    return s, ""


# ------------------------------------------------------------------ preconditions
def _st_shape(site, ctx) -> Verdict:
    s, why = read_naive(site)
    if s is None:
        return Verdict.no(why)
    return Verdict.yes(f"{s.dst}[{s.out_idx}] = {s.src}[{s.in_idx}] for {s.row} < {s.rows}, "
                       f"{s.col} < {s.cols}: a transpose, one element per thread")


def _axis_extent(s: Shape, axis: str) -> str:
    return s.rows if axis == s.row_axis else s.cols


def _st_launch(site, ctx) -> Verdict:
    s, why = read_naive(site)
    if s is None:
        return Verdict.unknown(why)
    c, why = header_contract(site)
    if c is None:
        return Verdict.no(why)
    bx, by = (value_of(site.unit, b) for b in c.block)
    if bx is None or by is None:
        return Verdict.unknown(f"the block ({', '.join(c.block)}) has no known value")
    for k, axis, b in ((0, "x", bx), (1, "y", by)):
        got = call_parts(c.grid[k])
        ext = _axis_extent(s, axis)
        if got is None or len(got[1]) != 2 or norm(got[1][0]) != norm(ext) or \
                value_of(site.unit, got[1][1]) != b:
            return Verdict.no(f"grid.{axis}={c.grid[k]} is not ceil_div({ext}, {b}): the grid "
                              "does not launch one thread per element")
    return Verdict.yes(f"block {bx} x {by}, grid ({c.grid[0]}, {c.grid[1]}): one thread per element")


def _st_tile(site, ctx) -> Verdict:
    p = site.pass_
    s, why = read_naive(site)
    c, cwhy = header_contract(site)
    if s is None or c is None:
        return Verdict.unknown(why or cwhy)
    bx, by = (value_of(site.unit, b) for b in c.block)
    if bx is None or by is None:
        return Verdict.unknown("the block size has no known value")
    if p.tile % bx or p.tile % by:
        return Verdict.no(f"a {p.tile} x {p.tile} tile is not covered by whole {bx} x {by} "
                          "blocks: the loops would miss or repeat elements")
    size = _SIZES.get(s.elem)
    if size is None:
        return Verdict.unknown(f"the size of {s.elem or 'the element type'} is not known")
    if p.tile * p.tile * size > SMEM_LIMIT:
        return Verdict.no(f"{p.tile} x {p.tile} x {size} bytes exceed {SMEM_LIMIT} bytes of static "
                          "shared memory")
    return Verdict.yes(f"{p.tile} x {p.tile} tile, {(p.tile // bx) * (p.tile // by)} element(s) "
                       f"per thread, {p.tile * p.tile * size} bytes of shared memory")


def _st_elem(site, ctx) -> Verdict:
    s, why = read_naive(site)
    if s is None:
        return Verdict.unknown(why)
    dt = _pointee(site.function, site.unit, s.dst)
    if s.elem not in _SIZES:
        return Verdict.no(f"the element type `{s.elem}` of {s.src} is not a scalar type the tile "
                          "can hold")
    if dt != s.elem:
        return Verdict.no(f"{s.src} holds {s.elem} but {s.dst} holds {dt}: the tile has one type")
    return Verdict.yes(f"{s.src} and {s.dst} hold {s.elem}")


def _st_alias(site, ctx) -> Verdict:
    s, why = read_naive(site)
    if s is None:
        return Verdict.unknown(why)
    if ctx.assumed("no_alias", s.src, s.dst):
        return Verdict.yes(f"no_alias({s.src}, {s.dst}) is assumed")
    text = site.unit.text(site.function.node.child_by_field_name("declarator"))
    if text.count("__restrict__") >= 2:
        return Verdict.yes("the pointers are __restrict__")
    return Verdict.unknown(f"{s.src} and {s.dst} may overlap: the staged copy reads a tile before "
                           f"writing it (pass --assume 'no_alias({s.src},{s.dst})')")


def _names_of(p, site, s: Shape) -> dict:
    from kltrans.passes.rewrite import fresh_numbered as fresh

    unit, fn = site.unit, site.function
    want = {"smem": (p.smem, ("tile", "tile_s", "smem")), "tx": (p.tx, ("tx", "lx")),
            "ty": (p.ty, ("ty", "ly")), "r0": (p.row0, ("r0", "row0", "y0")),
            "c0": (p.col0, ("c0", "col0", "x0")), "j": (p.row_step, ("j", "k", "jj")),
            "h": (p.col_step, ("h", "i", "hh")), "orow": (p.out_row, ("orow", "oy", "out_r")),
            "ocol": (p.out_col, ("ocol", "ox", "out_c"))}
    taken = {s.row, s.col}
    out = {}
    for k, (val, cands) in want.items():
        name = val if val != "auto" else fresh(unit, fn, cands, taken=taken)
        out[k] = name
        taken.add(name)
    return out


def _st_fresh(site, ctx) -> Verdict:
    from kltrans.passes.rewrite import used_names

    s, why = read_naive(site)
    if s is None:
        return Verdict.unknown(why)
    names = _names_of(site.pass_, site, s)
    used = used_names(site.unit, site.function) - {s.row, s.col}
    vals = list(names.values())
    dup = {v for v in vals if vals.count(v) > 1} | {v for v in vals if v in (s.row, s.col)}
    if dup:
        return Verdict.no(f"the name(s) {', '.join(sorted(dup))} would be declared twice")
    clash = sorted(v for v in vals if v in used)
    if clash:
        return Verdict.no(f"the name(s) {', '.join(clash)} are already used in {site.function.name}")
    return Verdict.yes("the tile, origin, loop and temporary names are fresh")


def _st_spelling(site, ctx) -> Verdict:
    p = site.pass_
    c, why = header_contract(site)
    if c is None:
        return Verdict.unknown(why)
    bx, by = (value_of(site.unit, b) for b in c.block)
    for opt, name, want in (("tile_name", p.tile_name, p.tile), ("bx_name", p.bx_name, bx),
                            ("by_name", p.by_name, by)):
        if name == "none":
            continue
        v = value_of(site.unit, name)
        if v is None:
            return Verdict.no(f"{opt}={name} names no integer macro or constant of the file")
        if v != want:
            return Verdict.no(f"{opt}={name} is {v}, not {want}")
    return Verdict.yes("the spelled constants have the tile's and block's values")


#: the grid runs that check a transpose read by the model: (rows, cols); each axis spans
#: several tiles in one run and is cut short of a tile in the other
CHECK_SIZES = ((9, 70), (70, 9))


def _same_results(site, ctx) -> Verdict:
    s, why = (read_naive if site.pass_.kind == "optimize" else read_tiled)(site)
    if s is None:
        return Verdict.unknown(why)
    if s.read == "text":
        return Verdict.yes("the exact form the pair reads and writes")
    try:
        new = rewritten_unit(site, ctx)
    except SkipSite as e:
        return Verdict.no(str(e))
    fn = site.function
    launches = []
    for rows, cols in CHECK_SIZES:
        ints = {p.name: rows for p in fn.params if p.name and not p.pointer}
        ints.update({s.rows: rows, s.cols: cols})
        launches.append(ints)
    try:
        ok, why = same_grid_effects(site.unit, new, fn.name, launches)
    except (Unsupported, RecursionError) as e:
        return Verdict.unknown(f"the grid machine cannot run it: {e}")
    if not ok:
        return Verdict.no(f"the rewritten kernel does not store the same over a grid: {why}")
    return Verdict.yes(f"read by the kernel model; {why}")


_SAME = Precondition("same-results", "pipeline",
                     "a kernel read by the model stores the same as its rewrite over whole "
                     "grids (grid machine)", _same_results)


def _spell(name: str, v: int) -> str:
    return str(v) if name == "none" else name


@dataclass(frozen=True)
class StageTranspose(Pass):
    """Stage a naive 2-D transpose through a shared-memory tile (both sides coalesced).

    Before::

        // kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 8)) block=(32, 8)
        int c = blockIdx.x * blockDim.x + threadIdx.x;
        int r = blockIdx.y * blockDim.y + threadIdx.y;
        if (r < rows && c < cols) {
            out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
        }

    After ``stage-transpose{tile=32}``::

        // kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 8)
        __shared__ float tile[32][32];
        const int tx = threadIdx.x;
        const int ty = threadIdx.y;
        const int r0 = blockIdx.y * 32;
        const int c0 = blockIdx.x * 32;
        for (int j = 0; j < 32; j += 8) {
            const int r = r0 + ty + j;
            const int c = c0 + tx;
            if (r < rows && c < cols) {
                tile[ty + j][tx] = in[(size_t)r * cols + c];
            }
        }
        __syncthreads();
        for (int j = 0; j < 32; j += 8) {
            const int orow = c0 + ty + j;
            const int ocol = r0 + tx;
            if (orow < cols && ocol < rows) {
                out[(size_t)orow * rows + ocol] = tile[tx][ty + j];
            }
        }

    The block keeps its ``BX x BY`` threads; a block now moves a ``TILE x TILE`` tile, each
    thread ``(TILE/BX) * (TILE/BY)`` elements (a loop is left out where the block spans the
    tile). ``threadIdx.x`` runs along the contiguous dimension on both sides. The tile is
    unpadded (``pad-smem`` removes the bank conflicts of the column-wise reads). Elements
    outside the matrix are guarded per element (no size fact is needed).

    Accepted naive form: two declarations ``[const] int NAME = blockIdx.D * blockDim.D +
    threadIdx.D`` (any operand order, x and y) and ``if (R < ROWS && C < COLS)
    out[C * ROWS + R] = in[R * COLS + C];`` (either index orientation, casts allowed),
    kept as written; or any one-element-per-thread transpose the kernel model reads.

    Preconditions: naive-transpose (layout: the body is that form), launch-2d (hardware:
    a 2-D ``// kltrans: launch`` header whose grid is ``ceil_div(extent, block)`` per
    axis), tile-fits (hardware: the block divides the tile, the tile fits 48 KiB of
    static shared memory), element-type (dtype: both arrays hold one scalar type),
    no-alias (storage: the input and output do not overlap; a context fact
    ``no_alias`` or ``__restrict__`` parameters), fresh-names (pipeline), spelling
    (pipeline: ``tile_name``/``bx_name``/``by_name`` name macros with the tile's and
    block's values), same-results (pipeline: a kernel read by the model stores the same
    as the staged one over whole grids).

    Options: ``tile`` (16, 32, 64; default 32); ``tile_name``, ``bx_name``, ``by_name``
    (macros that spell the tile size and the block's loop steps, or ``none`` for
    literals); ``smem``, ``tx``, ``ty``, ``row0``, ``col0``, ``row_step``, ``col_step``,
    ``out_row``, ``out_col`` (names of the tile, thread aliases, tile origins, loop
    counters and store temporaries; ``auto`` picks fresh ones).
    """

    name = "stage-transpose"
    kind = "optimize"
    inverse = "unstage-transpose"
    anchor = Rule(kind="function_definition")
    preconditions = (
        Precondition("naive-transpose", "layout",
                     "the body is a one-element-per-thread guarded transpose", _st_shape),
        Precondition("launch-2d", "hardware",
                     "a 2-D launch header with one thread per element", _st_launch),
        Precondition("tile-fits", "hardware",
                     "the block divides the tile and the tile fits shared memory", _st_tile),
        Precondition("element-type", "dtype", "both arrays hold one scalar type", _st_elem),
        Precondition("no-alias", "storage", "the input and the output do not overlap",
                     _st_alias),
        Precondition("fresh-names", "pipeline", "the new names are unused", _st_fresh),
        Precondition("spelling", "pipeline",
                     "the macros spelling the constants have the right values", _st_spelling),
        _SAME,
    )

    tile: int = option(32, Choice(*TILES), "the tile is TILE x TILE elements", tune=True)
    tile_name: str = option("none", Identifier(words=("none",)), "macro spelling the tile size")
    bx_name: str = option("none", Identifier(words=("none",)), "macro spelling blockDim.x")
    by_name: str = option("none", Identifier(words=("none",)), "macro spelling blockDim.y")
    smem: str = option("auto", Identifier(), "name of the shared tile")
    tx: str = option("auto", Identifier(), "name of the threadIdx.x alias")
    ty: str = option("auto", Identifier(), "name of the threadIdx.y alias")
    row0: str = option("auto", Identifier(), "name of the tile's first input row")
    col0: str = option("auto", Identifier(), "name of the tile's first input column")
    row_step: str = option("auto", Identifier(), "counter of the loop over tile rows")
    col_step: str = option("auto", Identifier(), "counter of the loop over tile columns")
    out_row: str = option("auto", Identifier(), "name of the stored element's output row")
    out_col: str = option("auto", Identifier(), "name of the stored element's output column")

    def _shape(self, site):
        s, _ = read_naive(site)
        c, _ = header_contract(site)
        bx, by = (value_of(site.unit, b) for b in c.block)
        n = _names_of(self, site, s)
        return replace(s, tile=self.tile, tile_s=_spell(self.tile_name, self.tile), bx=bx, by=by,
                       bx_s=_spell(self.bx_name, bx), by_s=_spell(self.by_name, by), **n)

    def rewrite(self, site, ctx):
        s = self._shape(site)
        first, last = body_span(site.function)
        ind, st = indents(site.unit, site.function)
        return [Edit(first.start_byte, last.end_byte, tiled_text(s, ind, st))]

    def update_contract(self, contract, site, ctx):
        grid = []
        for k in range(2):
            fn, args = call_parts(contract.grid[k])
            grid.append(f"{fn}({args[0]}, {self.tile})")
        return contract.with_(grid=tuple(grid))

    def inverse_for(self, site, ctx):
        s, _ = read_naive(site)
        return UnstageTranspose(index_type=s.itype, form=s.form, order=s.order)


# ------------------------------------------------------------------------ inverse
def _un_form(site, ctx) -> Verdict:
    s, why = read_tiled(site)
    if s is None:
        return Verdict.no(why)
    return Verdict.yes(f"{s.tile_s} x {s.tile_s} tile {s.smem} staged by a {s.bx} x {s.by} block")


def _un_cover(site, ctx) -> Verdict:
    s, why = read_tiled(site)
    if s is None:
        return Verdict.unknown(why)
    if s.tile % s.bx or s.tile % s.by or s.bx > s.tile or s.by > s.tile:
        return Verdict.no(f"the {s.bx} x {s.by} block does not tile {s.tile} x {s.tile} exactly: "
                          "the staged kernel misses or repeats elements")
    return Verdict.yes(f"{(s.tile // s.bx) * (s.tile // s.by)} element(s) per thread cover the tile")


def _un_launch(site, ctx) -> Verdict:
    s, why = read_tiled(site)
    if s is None:
        return Verdict.unknown(why)
    c, why = header_contract(site)
    if c is None:
        return Verdict.no(why)
    for k, axis in ((0, "x"), (1, "y")):
        got = call_parts(c.grid[k])
        ext = _axis_extent(s, axis)
        if got is None or len(got[1]) != 2 or norm(got[1][0]) != norm(ext) or \
                value_of(site.unit, got[1][1]) != s.tile:
            return Verdict.no(f"grid.{axis}={c.grid[k]} is not ceil_div({ext}, {s.tile}): the "
                              "grid does not launch one block per tile")
    return Verdict.yes(f"one block per {s.tile} x {s.tile} tile")


@dataclass(frozen=True)
class UnstageTranspose(Pass):
    """Undo shared-memory staging of a transpose: one element per thread, direct copies.

    Before::

        // kltrans: launch transpose grid=(ceil_div(cols, 64), ceil_div(rows, 64)) block=(32, 8)
        __shared__ float tile[TR_TILE][TR_TILE];
        const int tx = threadIdx.x;
        ...
        for (int j = 0; j < TR_TILE; j += TR_BY) {
            for (int h = 0; h < TR_TILE; h += TR_BX) {
                const int r = r0 + ty + j;
                const int c = c0 + tx + h;
                if (r < rows && c < cols) {
                    tile[ty + j][tx + h] = in[(size_t)r * cols + c];
                }
            }
        }
        __syncthreads();
        ... (the store loops) ...

    After ``unstage-transpose``::

        // kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 8)) block=(32, 8)
        int c = blockIdx.x * blockDim.x + threadIdx.x;
        int r = blockIdx.y * blockDim.y + threadIdx.y;
        if (r < rows && c < cols) {
            out[(size_t)c * rows + r] = in[(size_t)r * cols + c];
        }

    The load temporaries become the naive indices; the store's index is the load's
    output index with its temporaries renamed back. The block keeps its shape; the grid
    covers the matrix with one thread per element.

    Preconditions: tiled-form (layout: the body is exactly the form ``stage-transpose``
    writes, for some choice of its options, or a staged transpose with a square tile as
    the kernel model reads it), tile-covered (layout: the block divides the tile),
    launch-shape (hardware: the 2-D header grid is ``ceil_div(extent, TILE)`` per axis,
    the axes as the tile origins use them), same-results (pipeline: a kernel read by the
    model stores the same as the one-element-per-thread one over whole grids).

    Options: ``index_type`` (``int`` or ``const-int``), ``form`` (the spelling of the
    global index: ``bid-dim-tid`` ``blockIdx.x * blockDim.x + threadIdx.x``,
    ``dim-bid-tid``, ``tid-bid-dim``, ``tid-dim-bid``), ``order`` (``x-first`` or
    ``y-first``: which index is declared first).
    """

    name = "unstage-transpose"
    kind = "simplify"
    inverse = "stage-transpose"
    anchor = Rule(kind="function_definition")
    preconditions = (
        Precondition("tiled-form", "layout",
                     "the body is the staged transpose stage-transpose writes", _un_form),
        Precondition("tile-covered", "layout", "the block divides the tile", _un_cover),
        Precondition("launch-shape", "hardware",
                     "the grid launches one block per tile", _un_launch),
        _SAME,
    )

    index_type: str = option("int", Choice("int", "const-int"), "type of the naive indices")
    form: str = option("bid-dim-tid", Choice(*FORMS), "spelling of the global indices")
    order: str = option("x-first", Choice("x-first", "y-first"), "which index comes first")

    def rewrite(self, site, ctx):
        s, _ = read_tiled(site)
        s = replace(s, itype=self.index_type, form=self.form, order=self.order)
        first, last = body_span(site.function)
        ind, st = indents(site.unit, site.function)
        return [Edit(first.start_byte, last.end_byte, naive_text(s, ind, st))]

    def update_contract(self, contract, site, ctx):
        s, _ = read_tiled(site)
        grid = []
        for k, b in enumerate((s.bx, s.by)):
            fn, args = call_parts(contract.grid[k])
            grid.append(f"{fn}({args[0]}, {b})")
        return contract.with_(grid=tuple(grid))

    def inverse_for(self, site, ctx):
        s, _ = read_tiled(site)

        def name_of(text: str, v: int) -> str:
            return "none" if text == str(v) else text

        if s.read == "model":
            return StageTranspose(tile=s.tile)
        return StageTranspose(tile=s.tile, tile_name=name_of(s.tile_s, s.tile),
                              bx_name=name_of(s.bx_s, s.bx), by_name=name_of(s.by_s, s.by),
                              smem=s.smem, tx=s.tx, ty=s.ty, row0=s.r0, col0=s.c0,
                              row_step=s.j, col_step=s.h, out_row=s.orow, out_col=s.ocol)
