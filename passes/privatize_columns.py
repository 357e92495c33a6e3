"""Per-lane column privatization of histogram atomics: ``privatize-columns`` (optimize) and
its inverse ``global-columns`` (simplify).

``privatize-atomics`` gives each block one shared copy of the bins. With 32 copies laid
out as columns (``counts[bin * 32 + lane]``), the 32 lanes of a warp always update 32
different shared-memory banks whatever the data, so shared atomics only collide between
warps. ``privatize-columns`` writes that layout: each thread keeps a pointer to its
lane's column (``col = counts + lane``) and updates ``col + (bin << 5)``; the updates may
sit in the kernel or in ``__device__`` helpers the kernel hands the bins pointer to (the
helpers are rewritten too). At the end the block sums the 32 columns of each bin (rotated
reads, conflict-free) and adds the total to the global bins with one atomic per
non-empty bin. ``global-columns`` recognizes exactly that shape and counts in the global
bins again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from types import SimpleNamespace

from kltrans.analysis.barriers import enclosing_conditions
from kltrans.analysis.smem import shared_footprint, type_size
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Bool, Choice, Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.launch_facts import STATIC_SMEM as SMEM_LIMIT, const_value, contract_block
from kltrans.passes.reductions import (
    ZERO as _ZERO, bins_name_candidates as _bins_name_candidates, bound_of, value_class)
from kltrans.passes.rewrite import indent_of as line_indent, indent_step, inside, norm, statements

LANES = 32
SHIFT = 5
_TIGHT = {"identifier", "number_literal", "subscript_expression", "call_expression",
          "field_expression", "cast_expression", "parenthesized_expression"}
DEFAULT_NAMES = {"array": ("counts", "s_counts", "s_cols"), "lane": ("lane", "lane_id", "ln"),
                 "column": ("col", "my_col", "column"), "counter": ("k", "kz", "zi"),
                 "bin": ("b", "bb", "bin_i"), "row": ("row", "bin_row", "rrow"),
                 "total": ("total", "bin_total", "tot"), "copy": ("l", "li", "lc")}


def _strip(node):
    while node is not None and node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            break
        node = inner[0]
    return node


def _args(call):
    al = call.child_by_field_name("arguments")
    return [a for a in al.named_children if a.type != "comment"] if al is not None else []


def _callee(unit, call) -> str:
    f = call.child_by_field_name("function")
    return unit.text(f) if f is not None else ""


def _device_fn(unit, name):
    return next((f for f in unit.device_functions() if f.name == name and not f.is_kernel), None)


# ================================================================== the updates of a pointer
@dataclass
class _Update:
    fn: object      # the Function the update is in
    call: object    # the atomicAdd call
    addr: object    # its first argument
    base: object    # the pointer identifier in the address
    index: object   # the bin index node (K of `p + K` / `&p[K]`)
    style: str      # offset / subscript


@dataclass
class _Uses:
    updates: list
    handoffs: list  # (identifier node in the kernel, callee name): bins passed to a helper
    other: list     # (fn, node): any other use
    helpers: list   # helper Functions reached


def _uses(unit, fn, name, seen=None, top=True, skip=()) -> _Uses:
    """Every use of pointer ``name`` in ``fn`` (and, through pointer arguments, in the
    ``__device__`` helpers it calls)."""
    seen = set() if seen is None else seen
    out = _Uses([], [], [], [])
    for n in unit.walk(fn.body):
        if n.type != "identifier" or unit.text(n) != name or any(inside(n, x) for x in skip):
            continue
        par = n.parent
        # p + K  /  &p[K] as the address of an atomicAdd
        addr, index, style = None, None, None
        if par is not None and par.type == "binary_expression" and \
                unit.text(par.child_by_field_name("operator")) == "+" and \
                par.child_by_field_name("left").id == n.id:
            addr, index, style = par, par.child_by_field_name("right"), "offset"
        elif par is not None and par.type == "subscript_expression" and \
                par.child_by_field_name("argument").id == n.id and par.parent is not None and \
                par.parent.type == "pointer_expression" and \
                unit.text(par.parent).lstrip().startswith("&"):
            idx = [c for c in par.child_by_field_name("indices").named_children
                   if c.type != "comment"]
            if len(idx) == 1:
                addr, index, style = par.parent, idx[0], "subscript"
        if addr is not None:
            al = addr.parent
            call = al.parent if al is not None else None
            if call is not None and call.type == "call_expression" and \
                    _callee(unit, call) == "atomicAdd" and _args(call)[0].id == addr.id:
                out.updates.append(_Update(fn, call, addr, n, index, style))
                continue
        # the pointer itself handed to a __device__ helper
        if par is not None and par.type == "argument_list" and par.parent is not None and \
                par.parent.type == "call_expression":
            callee = _callee(unit, par.parent)
            helper = _device_fn(unit, callee)
            pos = next(k for k, a in enumerate(_args(par.parent)) if a.id == n.id)
            if helper is not None and pos < len(helper.params) and \
                    helper.params[pos].pointer == 1:
                if top:
                    out.handoffs.append((n, callee))
                key = (callee, pos)
                if key not in seen:
                    seen.add(key)
                    sub = _uses(unit, helper, helper.params[pos].name, seen, False)
                    out.updates += sub.updates
                    out.other += sub.other
                    out.helpers += [helper] + sub.helpers
                continue
        out.other.append((fn, n))
    return out


def _fake_site(unit, fn):
    return SimpleNamespace(unit=unit, function=fn)


def shifted(unit, index) -> str:
    """``(K << 5)`` for a bin index K (parenthesized unless it binds tighter)."""
    t = unit.text(index)
    k = t if index.type in _TIGHT else f"({t})"
    return f"({k} << {SHIFT})"


def unshifted(unit, index):
    """K of ``(K << 5)``, or None."""
    if index.type != "parenthesized_expression":
        return None
    inner = _strip(index)
    if inner is None or inner.type != "binary_expression" or \
            unit.text(inner.child_by_field_name("operator")) != "<<" or \
            unit.text(inner.child_by_field_name("right")).strip() != str(SHIFT):
        return None
    k = inner.child_by_field_name("left")
    return k if k.type in _TIGHT else None


# ================================================================== optimize: facts
def _bname(site) -> str:
    """The name of the site's pointer parameter."""
    node = site.node
    ident = [n for n in site.unit.walk(node) if n.type == "identifier"]
    return site.unit.text(ident[-1]) if ident else ""


def _bins_param(site):
    fn = site.function
    p = next((p for p in fn.params if p.name == _bname(site)), None)
    return p


def _nb(site, ctx):
    """(NB text, value, why)."""
    p = site.pass_
    if p is not None and p.bins != "auto":
        t = str(p.bins)
        return t, const_value(site.unit, t, ctx), f"bins={t} (option)"
    names = _bins_name_candidates(site)
    if len(names) == 1:
        return names[0], const_value(site.unit, names[0], ctx), f"the constant {names[0]}"
    if len(names) > 1:
        return None, None, f"several bin-count constants ({', '.join(names)}): give bins=N"
    return None, None, "no *BIN* constant tells the number of bins: give bins=N"


def _o_count_type(site, ctx) -> Verdict:
    p = _bins_param(site)
    if p is None or p.pointer != 1 or p.const:
        return Verdict.no(f"{_bname(site)} is not a writable pointer parameter")
    cls = value_class(p.base_type, site.function)
    if cls not in _ZERO:
        return Verdict.no(f"{p.name} holds {p.base_type}: the merge regroups the additions, "
                          "exact only for integer counts")
    return Verdict.yes(f"{p.name} holds {p.base_type} counts: integer addition in any order")


def _o_direct(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    u = _uses(unit, fn, _bname(site))
    if u.other:
        f, n = u.other[0]
        return Verdict.no(f"{_bname(site)} is used at line {unit.line_col(n.start_byte)[0]} "
                          f"in {f.name} (`{norm(unit.text(n.parent))[:50]}`), not only by "
                          "atomicAdd updates (directly or through helpers)")
    if not u.updates:
        return Verdict.no(f"{_bname(site)} is never updated by atomicAdd")
    for up in u.updates:
        if up.call.parent is None or up.call.parent.type != "expression_statement":
            return Verdict.no(f"the old count returned by `{norm(unit.text(up.call))[:50]}` is "
                              "used: the private count differs")
    styles = {up.style for up in u.updates}
    if len(styles) != 1:
        return Verdict.no("the updates mix `&bins[k]` and `bins + k`: the inverse restores one")
    names = {unit.text(up.base) for up in u.updates if up.fn.name != fn.name}
    return Verdict.yes(f"{len(u.updates)} atomicAdd update(s)"
                       + (f", through helper pointer(s) {', '.join(sorted(names))}" if names
                          else ""))


def _o_bin_count(site, ctx) -> Verdict:
    t, v, why = _nb(site, ctx)
    if t is None:
        return Verdict.no(why)
    if v is None:
        return Verdict.unknown(f"{why}: its value is unknown (give --assume '{t}==N')")
    return Verdict.yes(f"{v} bins: {why}")


def _o_bin_range(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    _, nb, _ = _nb(site, ctx)
    if nb is None:
        return Verdict.unknown("the number of bins is unknown")
    if ctx.assumed("in_range", "*"):
        return Verdict.yes("--assume in_range(*)")
    u = _uses(unit, fn, _bname(site))
    for up in u.updates:
        b, why = bound_of(_fake_site(unit, up.fn), up.index)
        if b is None or b > nb:
            return Verdict.no(f"the bin index `{norm(unit.text(up.index))}` in {up.fn.name} is "
                              f"not provably in [0, {nb}) ({why}); give --assume 'in_range(*)' "
                              "if the data guarantees it")
    return Verdict.yes(f"every bin index is below {nb}")


def _o_no_early_exit(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    for n in unit.walk(fn.body):
        if n.type in ("return_statement", "goto_statement"):
            return Verdict.no(f"a {n.type.split('_')[0]} at line {unit.line_col(n.start_byte)[0]}: "
                              "threads that leave early never reach the merge's __syncthreads()")
    for up in _uses(unit, fn, _bname(site)).updates:
        if any(how == "exit" for _, how in enclosing_conditions(unit, up.call)):
            return Verdict.no("an earlier exit skips an update")
    return Verdict.yes("no return: every thread reaches both barriers")


def _o_block(site, ctx) -> Verdict:
    v, text, why = contract_block(site, ctx)
    if text is None:
        return Verdict.no(why)
    if v is not None and v % LANES:
        return Verdict.no(f"block={v} is not whole warps: lane = threadIdx.x & 31 still works, "
                          "but the pass only writes whole-warp blocks")
    return Verdict.yes(f"1-D block={text}")


def _o_smem(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    _, nb, _ = _nb(site, ctx)
    if nb is None:
        return Verdict.unknown("the number of bins is unknown")
    p = _bins_param(site)
    size = (type_size(unit, p.base_type) if p is not None else None) or 4
    fp = shared_footprint(unit, fn, ctx.sizes)
    if fp.static_bytes is None:
        return Verdict.unknown(f"static shared memory of {fn.name} unknown: {fp.reason}")
    need = nb * LANES * size
    if fp.static_bytes + need > SMEM_LIMIT:
        return Verdict.no(f"{nb} bins x {LANES} columns x {size} B = {need} B (+ "
                          f"{fp.static_bytes} B already) exceed the 48 KiB of static shared memory")
    return Verdict.yes(f"{need} B of column counters (+ {fp.static_bytes} B) fit in 48 KiB")


def _names(p, unit, fn) -> dict:
    used = {unit.text(n) for n in unit.walk(fn.node) if n.type in ("identifier", "type_identifier")}
    out = {}
    for k, cands in DEFAULT_NAMES.items():
        v = getattr(p, k)
        if v == "auto":
            v = next((c for c in cands if c not in used and c not in out.values()), cands[0] + "_")
        out[k] = v
    return out


def _o_fresh(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    nm = _names(site.pass_, unit, fn)
    vals = list(nm.values())
    if len(set(vals)) != len(vals):
        return Verdict.no(f"two of the new names are equal ({', '.join(vals)})")
    used = {unit.text(n) for n in unit.walk(fn.node) if n.type in ("identifier", "type_identifier")}
    # the loop counters are scoped to their loops; the others live in the whole body
    for k in ("array", "lane", "column", "row", "total"):
        if nm[k] in used:
            return Verdict.no(f"the name {nm[k]} is already used in {fn.name}")
    t, _, _ = _nb(site, ctx)
    params = {p.name for p in fn.params} | ({t} if t else set())
    for k in ("counter", "bin", "copy"):
        if nm[k] in params:
            return Verdict.no(f"the loop counter {nm[k]} would hide {nm[k]} of {fn.name}")
    return Verdict.yes(f"{', '.join(vals)} are fresh")


# ================================================================== optimize: generation
def prologue(p, nm, ty, nb, zero, ind, st) -> str:
    tot = f"{nb if re.fullmatch(r'[A-Za-z_0-9]+', nb) else '(' + nb + ')'} * {LANES}"
    s, k = nm["array"], nm["counter"]
    return "\n".join([
        f"__shared__ {ty} {s}[{tot}];",
        "",
        f"{ind}for (int {k} = threadIdx.x; {k} < {tot}; {k} += blockDim.x) {{",
        f"{ind}{st}{s}[{k}] = {zero};",
        f"{ind}}}",
        f"{ind}__syncthreads();",
        "",
        f"{ind}const int {nm['lane']} = threadIdx.x & {LANES - 1};",
        f"{ind}{ty}* {nm['column']} = {s} + {nm['lane']};",
    ])


def epilogue(p, nm, ty, nb, zero, bins, ind, st) -> str:
    s, b, row, total, l = nm["array"], nm["bin"], nm["row"], nm["total"], nm["copy"]
    addr = f"&{bins}[{b}]" if p.merge == "subscript" else f"{bins} + {b}"
    lines = [f"{ind}__syncthreads();", "",
             f"{ind}for (int {b} = threadIdx.x; {b} < {nb}; {b} += blockDim.x) {{",
             f"{ind}{st}const {ty}* {row} = {s} + {b} * {LANES};",
             f"{ind}{st}{ty} {total} = {zero};"]
    if p.pragma:
        lines.append("#pragma unroll")
    lines += [f"{ind}{st}for (int {l} = 0; {l} < {LANES}; ++{l}) {{",
              f"{ind}{st}{st}{total} += {row}[({l} + {b}) & {LANES - 1}];",
              f"{ind}{st}}}",
              f"{ind}{st}if ({total} != {zero}) {{",
              f"{ind}{st}{st}atomicAdd({addr}, {total});",
              f"{ind}{st}}}",
              f"{ind}}}"]
    return "\n".join(lines)


def optimize_edits(p, site, ctx) -> list:
    unit, fn = site.unit, site.function
    bins = _bname(site)
    par = _bins_param(site)
    ty = norm(par.base_type)
    zero = _ZERO[value_class(ty, fn)]
    nb, _, _ = _nb(site, ctx)
    nm = _names(p, unit, fn)
    sts = statements(fn.body)
    ind = line_indent(unit, sts[0].start_byte)
    st = indent_step(unit, sts[0])
    u = _uses(unit, fn, bins)
    edits = [Edit.insert(sts[0].start_byte, prologue(p, nm, ty, nb, zero, ind, st) + "\n\n" + ind)]
    done = set()
    for up in u.updates:
        if (up.call.start_byte, up.call.end_byte) in done:
            continue
        done.add((up.call.start_byte, up.call.end_byte))
        base = nm["column"] if up.fn.name == fn.name else unit.text(up.base)
        edits.append(Edit(up.addr.start_byte, up.addr.end_byte,
                          f"{base} + {shifted(unit, up.index)}"))
    for n, _ in u.handoffs:
        edits.append(Edit(n.start_byte, n.end_byte, nm["column"]))
    last = sts[-1]
    edits.append(Edit.insert(last.end_byte, "\n" + epilogue(p, nm, ty, nb, zero, bins, ind, st)))
    return edits


@dataclass(frozen=True)
class PrivatizeColumns(Pass):
    """Count a histogram in per-lane shared-memory columns, merged into the global bins.

    Before::

        // kltrans: launch histogram grid=ceil_div(n, 256) block=256
        __device__ void count_word(unsigned int* h, unsigned int w) {
            atomicAdd(h + (w & 0xffu), 1u);
            atomicAdd(h + (w >> 24), 1u);
        }
        ... (kernel, bins: unsigned int*)
            count_word(bins, w);
            atomicAdd(bins + (unsigned int)data[i], 1u);

    After ``privatize-columns``::

        __device__ void count_word(unsigned int* h, unsigned int w) {
            atomicAdd(h + ((w & 0xffu) << 5), 1u);
            atomicAdd(h + ((w >> 24) << 5), 1u);
        }
        ... (kernel)
            __shared__ unsigned int counts[HG_BINS * 32];

            for (int k = threadIdx.x; k < HG_BINS * 32; k += blockDim.x) {
                counts[k] = 0u;
            }
            __syncthreads();

            const int lane = threadIdx.x & 31;
            unsigned int* col = counts + lane;
            ...
            count_word(col, w);
            atomicAdd(col + ((unsigned int)data[i] << 5), 1u);
            ...
            __syncthreads();

            for (int b = threadIdx.x; b < HG_BINS; b += blockDim.x) {
                const unsigned int* row = counts + b * 32;
                unsigned int total = 0u;
        #pragma unroll
                for (int l = 0; l < 32; ++l) {
                    total += row[(l + b) & 31];
                }
                if (total != 0u) {
                    atomicAdd(bins + b, total);
                }
            }

    Counter ``[bin][lane]`` lives at ``counts[bin * 32 + lane]``: the lanes of a warp hit
    32 different banks. The merge of bin ``b`` reads its 32 columns starting at column
    ``b & 31`` (rotated: conflict-free across the warp). The site is the kernel's bins
    pointer parameter; every ``atomicAdd(&bins[k], v)`` / ``atomicAdd(bins + k, v)`` is
    rewritten, also inside ``__device__`` helpers that receive ``bins`` as an argument.

    Preconditions: count-type (dtype: integer counts), direct-updates (storage: the bins
    are used only as the address of atomicAdd updates whose result is unused, or handed
    to helpers that do the same; one address style), bin-count (layout: the number of
    bins, from ``bins=N`` or the one *BIN* constant), bin-range (layout: every update's
    index is provably below it, also in helpers, or ``--assume 'in_range(*)'``: a context
    fact, no guard is emitted), no-early-exit (pipeline: every thread reaches both
    barriers), block-shape (hardware: 1-D block of whole warps, from the launch contract),
    smem-budget (hardware: bins x 32 counters fit in 48 KiB of static shared memory),
    fresh-names (pipeline).

    Options: ``bins`` (auto, a number or a constant's name), ``merge`` (address style of
    the merge's atomic: offset ``bins + b`` or subscript ``&bins[b]``), ``pragma``
    (``#pragma unroll`` on the merge's column loop), ``array``, ``lane``, ``column``,
    ``counter``, ``bin``, ``row``, ``total``, ``copy`` (names; auto picks fresh ones).
    """

    name = "privatize-columns"
    kind = "optimize"
    inverse = "global-columns"
    anchor = Rule(kind="parameter_declaration", inside_kernel=True,
                  regex=r"^(?!\s*const\b).*\*\s*\w+\s*$")
    preconditions = (
        Precondition("count-type", "dtype", "the bins hold integer counts", _o_count_type),
        Precondition("direct-updates", "storage",
                     "the bins are only updated by atomicAdd, in the kernel or its helpers",
                     _o_direct),
        Precondition("bin-count", "layout", "the number of bins is known", _o_bin_count),
        Precondition("bin-range", "layout", "every bin index is below the number of bins",
                     _o_bin_range),
        Precondition("no-early-exit", "pipeline", "every thread reaches both barriers",
                     _o_no_early_exit),
        Precondition("block-shape", "hardware", "a 1-D block of whole warps", _o_block),
        Precondition("smem-budget", "hardware", "bins x 32 counters fit in 48 KiB", _o_smem),
        Precondition("fresh-names", "pipeline", "the new names are not used", _o_fresh),
    )

    bins: object = option("auto", OneOf(IntRange(1, 1 << 16), Identifier()),
                          "number of bins: auto, a number or a constant's name")
    merge: str = option("offset", Choice("offset", "subscript"),
                        "address style of the merge's global atomic")
    pragma: bool = option(True, Bool(), "#pragma unroll on the merge's column loop")
    array: str = option("auto", Identifier(), "name of the shared column counters")
    lane: str = option("auto", Identifier(), "name of the lane index")
    column: str = option("auto", Identifier(), "name of the thread's column pointer")
    counter: str = option("auto", Identifier(), "counter of the zeroing loop")
    bin: str = option("auto", Identifier(), "counter of the merge loop")
    row: str = option("auto", Identifier(), "name of the merged bin's row pointer")
    total: str = option("auto", Identifier(), "name of the merged count")
    copy: str = option("auto", Identifier(), "counter of the merge's column loop")

    def rewrite(self, site, ctx):
        return optimize_edits(self, site, ctx)

    def inverse_for(self, site, ctx):
        u = _uses(site.unit, site.function, _bname(site))
        style = u.updates[0].style if u.updates else "offset"
        return GlobalColumns(style=style)


# ====================================================================== global-columns
SHARED = Rule(kind="declaration", regex=r"^__shared__\s", inside_kernel=True)


@dataclass
class _Cols:
    sts: list       # the 5 prologue statements and the 2 epilogue statements
    s: str
    ty: str
    nb: str
    bins: str
    opts: dict


def _parse(site):
    """(_Cols, None) when the site's declaration starts the shape privatize-columns writes."""
    unit, fn = site.unit, site.function
    decl = site.node
    sts = statements(fn.body)
    if decl.parent is None or decl.parent.id != fn.body.id or not sts or sts[0].id != decl.id:
        return None, "the __shared__ declaration is not the first statement of the kernel"
    if len(sts) < 8:
        return None, "the kernel is too short to be a column-privatized histogram"
    t = [norm(unit.text(x)) for x in sts[:5]]
    m = re.fullmatch(r"__shared__ ((?:unsigned |signed )?(?:\w+ )*?\w+) (\w+)\[(.+) \* 32\];", t[0])
    if m is None:
        return None, "not `__shared__ T counts[NB * 32];`"
    ty, s, nbw = m.groups()
    nb = nbw[1:-1] if nbw.startswith("(") and nbw.endswith(")") else nbw
    zm = re.fullmatch(rf"for \(int (\w+) = threadIdx\.x; \1 < {re.escape(nbw)} \* 32; \1 \+= "
                      rf"blockDim\.x\) \{{ {s}\[\1\] = (\w+); \}}", t[1])
    if zm is None or t[2] != "__syncthreads();":
        return None, (f"{s} is not zeroed by a block-strided loop followed by __syncthreads()")
    lm = re.fullmatch(r"const int (\w+) = threadIdx\.x & 31;", t[3])
    cm = re.fullmatch(rf"{re.escape(ty)}\* (\w+) = {s} \+ (\w+);", t[4])
    if lm is None or cm is None or cm.group(2) != lm.group(1):
        return None, (f"the barrier is not followed by `const int lane = threadIdx.x & 31;` and "
                      f"`{ty}* col = {s} + lane;`")
    sync2, merge = sts[-2], sts[-1]
    if norm(unit.text(sync2)) != "__syncthreads();" or merge.type != "for_statement":
        return None, f"the kernel does not end with __syncthreads() and a merge loop of {s}"
    mt = norm(re.sub(r"^[ \t]*#[ \t]*pragma[ \t]+unroll[ \t]*$", "#PRAGMA;", unit.text(merge),
                     flags=re.M))
    mm = re.fullmatch(
        rf"for \(int (\w+) = threadIdx\.x; \1 < {re.escape(nb)}; \1 \+= blockDim\.x\) \{{ "
        rf"const {re.escape(ty)}\* (\w+) = {s} \+ \1 \* 32; {re.escape(ty)} (\w+) = (\w+); "
        rf"(#PRAGMA; )?for \(int (\w+) = 0; \6 < 32; \+\+\6\) \{{ \3 \+= \2\[\(\6 \+ \1\) & 31\]; \}} "
        rf"if \(\3 != \4\) \{{ atomicAdd\((?:&(\w+)\[\1\]|(\w+) \+ \1), \3\); \}} \}}", mt)
    if mm is None:
        return None, (f"the last loop does not sum the 32 columns of each bin of {s} (rotated) "
                      "into one global atomicAdd per non-empty bin")
    bins = mm.group(7) or mm.group(8)
    bins_opt = int(nb) if re.fullmatch(r"\d+", nb) else nb
    opts = {"bins": bins_opt, "merge": "subscript" if mm.group(7) else "offset",
            "pragma": bool(mm.group(5)), "array": s, "lane": lm.group(1),
            "column": cm.group(1), "counter": zm.group(1), "bin": mm.group(1),
            "row": mm.group(2), "total": mm.group(3), "copy": mm.group(6)}
    return _Cols(list(sts[:5]) + [sync2, merge], s, ty, nb, bins, opts), None


def _col_uses(site, cols):
    unit, fn = site.unit, site.function
    return _uses(unit, fn, cols.opts["column"], skip=cols.sts)


def _line_span(unit, node):
    src = unit.source
    s0 = src.rfind(b"\n", 0, node.start_byte) + 1
    e0 = node.end_byte
    if src[s0:node.start_byte].strip() == b"" and src[e0:e0 + 1] == b"\n":
        return s0, e0 + 1
    return node.start_byte, node.end_byte


def simplify_edits(site, cols, style) -> list:
    unit, fn = site.unit, site.function
    u = _col_uses(site, cols)
    sts = statements(fn.body)
    edits = []
    # the prologue: from the declaration to the start of the first statement after it
    nxt = sts[5]
    edits.append(Edit.delete(cols.sts[0].start_byte, nxt.start_byte))
    # the epilogue: from the end of the statement before the barrier
    prev = cols.sts[5].prev_named_sibling
    while prev is not None and prev.type == "comment":
        prev = prev.prev_named_sibling
    edits.append(Edit.delete(prev.end_byte, cols.sts[6].end_byte))
    done = set()
    for up in u.updates:
        if (up.call.start_byte, up.call.end_byte) in done:
            continue
        done.add((up.call.start_byte, up.call.end_byte))
        k = unshifted(unit, up.index)
        base = cols.bins if up.fn.name == fn.name else unit.text(up.base)
        kt = unit.text(k)
        if style == "subscript":
            inner = _strip(k)
            kt = unit.text(inner) if k.type == "parenthesized_expression" else kt
            edits.append(Edit(up.addr.start_byte, up.addr.end_byte, f"&{base}[{kt}]"))
        else:
            edits.append(Edit(up.addr.start_byte, up.addr.end_byte, f"{base} + {kt}"))
    for n, _ in u.handoffs:
        edits.append(Edit(n.start_byte, n.end_byte, cols.bins))
    return edits


def _s_shape(site, ctx) -> Verdict:
    cols, why = _parse(site)
    if cols is None:
        return Verdict.no(why)
    return Verdict.yes(f"{cols.s}: {cols.nb} bins x 32 lane columns, merged into {cols.bins}")


def _s_count_type(site, ctx) -> Verdict:
    cols, why = _parse(site)
    if cols is None:
        return Verdict.unknown(why)
    p = next((p for p in site.function.params if p.name == cols.bins), None)
    if p is None or p.pointer != 1:
        return Verdict.no(f"{cols.bins} is not a pointer parameter")
    if norm(p.base_type) != cols.ty or value_class(cols.ty, site.function) not in _ZERO:
        return Verdict.no(f"the column counters are {cols.ty} and the global bins {p.base_type}: "
                          "counting globally would change the wrap-around")
    return Verdict.yes(f"both are {cols.ty} integer counts")


def _s_direct(site, ctx) -> Verdict:
    cols, why = _parse(site)
    if cols is None:
        return Verdict.unknown(why)
    unit, fn = site.unit, site.function
    u = _col_uses(site, cols)
    if u.other:
        f, n = u.other[0]
        return Verdict.no(f"{cols.opts['column']} is used at line {unit.line_col(n.start_byte)[0]} "
                          f"in {f.name} (`{norm(unit.text(n.parent))[:50]}`), not only as the "
                          "base of atomicAdd updates or handed to helpers")
    if not u.updates:
        return Verdict.no(f"{cols.opts['column']} is never updated")
    for up in u.updates:
        if up.style != "offset" or unshifted(unit, up.index) is None:
            return Verdict.no(f"`{norm(unit.text(up.addr))}` in {up.fn.name} is not "
                              f"`{unit.text(up.base)} + (bin << 5)`")
    skip = cols.sts
    for n in unit.walk(fn.body):
        if n.type == "identifier" and unit.text(n) in (cols.s, cols.bins, cols.opts["lane"]) \
                and not any(inside(n, x) for x in skip):
            return Verdict.no(f"{unit.text(n)} is used at line {unit.line_col(n.start_byte)[0]} "
                              "outside the privatization's prologue and merge")
    return Verdict.yes(f"{cols.opts['column']}: {len(u.updates)} update(s) of "
                       "`col + (bin << 5)`, directly or through helpers")


def _s_regenerate(site, ctx) -> Verdict:
    """The simplified kernel, privatized again with the read options, is this one."""
    from kltrans.match.pattern import tokens
    from kltrans.passes.manager import run_pass
    from kltrans.syntax import apply_edits, parse

    cols, why = _parse(site)
    if cols is None:
        return Verdict.unknown(why)
    u = _col_uses(site, cols)
    if u.other or not u.updates or any(unshifted(site.unit, up.index) is None for up in u.updates):
        return Verdict.unknown("the updates are not all `col + (bin << 5)`")
    unit = site.unit
    try:
        back = parse(apply_edits(unit, simplify_edits(site, cols, getattr(site.pass_, "style", "offset"))).source,
                     unit.path)
        ctx2 = replace(ctx, kernel=site.function.name, force=False)
        pc = PrivatizeColumns(**cols.opts)
        target = [x for x in pc.sites(back, ctx2) if _bname(x) == cols.bins]
        if not target:
            return Verdict.no(f"{cols.bins} is not a parameter of the simplified kernel")
        again, rep = run_pass(back, pc, ctx2, only_site=target[0].index)
    except Exception as e:  # a malformed intermediate
        return Verdict.no(f"cannot rebuild the privatized kernel: {type(e).__name__}: {e}")
    if not rep.applied:
        why = "; ".join(f"{x.precondition}: {x.reason}" for x in rep.sites[:1])
        return Verdict.no(f"privatize-columns does not apply to the simplified kernel: {why}")
    if tokens(again, again.root) != tokens(unit, unit.root):
        return Verdict.no("the kernel is not what privatize-columns writes for its simplified "
                          "form (names, layout, merge and the helpers' updates are compared)")
    return Verdict.yes("privatize-columns writes exactly this kernel from its simplified form")


@dataclass(frozen=True)
class GlobalColumns(Pass):
    """Count in the global bins again: undo a per-lane column privatized histogram.

    Before::

        __shared__ unsigned int counts[HG_BINS * 32];

        for (int i = threadIdx.x; i < HG_BINS * 32; i += blockDim.x) {
            counts[i] = 0u;
        }
        __syncthreads();

        const int lane = threadIdx.x & 31;
        unsigned int* col = counts + lane;
        ...
            hg_count_vec(col, v);                                   // helper: col + (b << 5)
            atomicAdd(col + ((unsigned int)data[tid] << 5), 1u);
        ...
        __syncthreads();

        for (int b = threadIdx.x; b < HG_BINS; b += blockDim.x) {
            const unsigned int* row = counts + b * 32;
            unsigned int total = 0u;
            for (int l = 0; l < 32; ++l) {
                total += row[(l + b) & 31];
            }
            if (total != 0u) {
                atomicAdd(bins + b, total);
            }
        }

    After ``global-columns``::

        ...
            hg_count_vec(bins, v);                                  // helper: col + b
            atomicAdd(bins + (unsigned int)data[tid], 1u);
        ...

    Recognized: exactly what ``privatize-columns`` writes (checked by writing it again
    from the simplified kernel and comparing tokens), with the names, the merge's style
    and its pragma read from the code and handed back by ``inverse_for``.

    Preconditions: column-shape (layout: the prologue, lane column pointer and rotated
    merge), count-type (dtype: column counters and global bins are one integer type),
    direct-updates (storage: the column pointer is only the base of
    ``atomicAdd(col + (bin << 5), v)`` updates or handed to ``__device__`` helpers that do
    the same; the counters, the lane and the bins are not used elsewhere), regenerates
    (pipeline: privatize-columns gives this kernel back).

    Options: ``style`` (address style of the restored updates: offset ``bins + k``, or
    subscript ``&bins[k]``).
    """

    name = "global-columns"
    kind = "simplify"
    inverse = "privatize-columns"
    anchor = SHARED
    preconditions = (
        Precondition("column-shape", "layout",
                     "lane-column counters zeroed at the start, merged into global bins at the "
                     "end", _s_shape),
        Precondition("count-type", "dtype",
                     "column counters and global bins are the same integer type", _s_count_type),
        Precondition("direct-updates", "storage",
                     "the column pointer is only the base of atomicAdd(col + (bin << 5), v)",
                     _s_direct),
        Precondition("regenerates", "pipeline",
                     "privatize-columns writes this kernel back from the simplified one",
                     _s_regenerate),
    )

    style: str = option("offset", Choice("offset", "subscript"),
                        "address style of the restored updates")

    def rewrite(self, site, ctx):
        cols, _ = _parse(site)
        return simplify_edits(site, cols, self.style)

    def inverse_for(self, site, ctx):
        cols, _ = _parse(site)
        if cols is None:
            return PrivatizeColumns()
        return PrivatizeColumns(**cols.opts)


__all__ = ["GlobalColumns", "PrivatizeColumns"]
