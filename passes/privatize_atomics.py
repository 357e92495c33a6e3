"""Shared-memory privatization of histogram atomics: ``privatize-atomics`` (optimize) and
its inverse ``global-atomics`` (simplify).

A histogram kernel doing ``atomicAdd(&bins[b], 1)`` on global memory contends on a few
hot words across the whole grid. ``privatize-atomics`` gives every block its own copy of
the bins in shared memory (optionally ``replicas`` copies, picked by lane, to spread the
collisions of a warp), zeroes it, counts there, and merges it into the global bins with
one atomic per non-empty bin per block. ``global-atomics`` recognizes that shape and
counts in global memory again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.barriers import enclosing_conditions
from kltrans.analysis.smem import shared_footprint, type_size
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Choice, Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.launch_facts import STATIC_SMEM as SMEM_LIMIT, contract_block, const_value
from kltrans.passes.reductions import (
    UNSIGNED as _UNSIGNED, ZERO as _ZERO, bins_name_candidates as _bins_name_candidates, bound_of,
    param_named as _param, squash, strip_clause as _strip, type_of as _type_of, unwrap,
    value_class, wrap)
from kltrans.passes.rewrite import (
    fresh_numbered as fresh, indent_of as line_indent, indent_step, inside, norm, statements)

REPLICAS = (1, 2, 4, 8, 16, 32)

ANCHOR = Rule(any=(Rule(pattern="atomicAdd(&$B[$K], $V)"), Rule(pattern="atomicAdd($B + $K, $V)")),
              inside_kernel=True, constraints={"B": {"kind": "identifier"}})


# ================================================================== facts about the site
def _guard_bound(site, k_text, ctx) -> tuple[int | None, str | None, str]:
    """(bound, bound text, why) from an enclosing `if (K < X)` (K unsigned or K >= 0 too)."""
    unit = site.unit
    key = squash(k_text)
    for cond, how in enclosing_conditions(unit, site.node):
        if how not in ("if", "&&"):
            continue
        parts, stack = [], [_strip(cond)]
        while stack:
            c = _strip(stack.pop())
            if c.type == "binary_expression" and unit.text(c.child_by_field_name("operator")) == "&&":
                stack += [c.child_by_field_name("left"), c.child_by_field_name("right")]
            else:
                parts.append(squash(unit.text(c)))
        for p in parts:
            m = re.fullmatch(rf"\(?{re.escape(key)}\)?<(.+)", p)
            if m is None:
                continue
            nonneg = any(q in (f"{key}>=0", f"0<={key}") for q in parts)
            ty = _type_of(site, site.match.bindings["K"])
            if not nonneg and ty not in _UNSIGNED:
                continue
            x = m.group(1)
            v = const_value(unit, x.rstrip("uU") if re.fullmatch(r"\d+[uU]", x) else x, ctx)
            if v is not None:
                return v, x, f"`if ({p})` guards the update"
    return None, None, ""


def bins_of(site, ctx) -> tuple[str | None, int | None, str]:
    """(NB as written, its value or None, how it was found)."""
    p = site.pass_
    unit = site.unit
    if p is not None and p.bins != "auto":
        return str(p.bins), int(p.bins), f"bins={p.bins} (option)"
    v, text, why = _guard_bound(site, site.text("K"), ctx)
    if text is not None:
        t = str(v) if re.fullmatch(r"\d+[uUlL]*", text) else text
        return t, v, f"{t} from {why}"
    names = _bins_name_candidates(site)
    if len(names) == 1:
        return names[0], const_value(unit, names[0], ctx), f"the constant {names[0]}"
    if len(names) > 1:
        return None, None, (f"several bin-count constants ({', '.join(names)}): give "
                            "bins=N")
    b, why = bound_of(site, site.match.bindings["K"])
    if b is not None:
        return str(b), b, f"{b} from the range of the bin index: {why}"
    return None, None, ("cannot tell the number of bins: no `if (b < NB)` guard, no *BIN* "
                        "constant, no bounded bin index; give bins=N")


# ================================================================== preconditions
def _count_type(site, ctx) -> Verdict:
    b = site.text("B")
    p = _param(site, b)
    if p is None or p.pointer != 1:
        return Verdict.no(f"{b} is not a pointer parameter of {site.function.name}: the bins "
                          "must be global memory")
    cls = value_class(p.base_type, site.function)
    if cls not in _ZERO:
        return Verdict.no(f"{b} holds {p.base_type}: privatization regroups the additions, "
                          "exact only for integer counts")
    return Verdict.yes(f"{b} holds {p.base_type} counts: integer addition in any order")


def _bin_count(site, ctx) -> Verdict:
    t, v, why = bins_of(site, ctx)
    if t is None:
        return Verdict.no(why)
    if v is None:
        return Verdict.unknown(f"{why}: its value is unknown (give --assume '{t}==N')")
    return Verdict.yes(f"{v} bins: {why}")


def _bin_range(site, ctx) -> Verdict:
    k = site.text("K")
    if ctx.assumed("in_range", re.sub(r"\s+", "", k)) or ctx.assumed("in_range", "*"):
        return Verdict.yes(f"--assume in_range({k})")
    t, nb, _ = bins_of(site, ctx)
    if nb is None:
        return Verdict.unknown("the number of bins is unknown")
    gv, gt, gwhy = _guard_bound(site, k, ctx)
    if gv is not None and gv <= nb:
        return Verdict.yes(f"{gwhy}: {k} < {gv} <= {nb}")
    b, why = bound_of(site, site.match.bindings["K"])
    if b is not None and b <= nb:
        return Verdict.yes(f"{why}: {k} < {b} <= {nb} bins")
    what = f"{why}: {b} > {nb} bins" if b is not None else why
    return Verdict.no(f"the bin index `{norm(k)}` is not provably in [0, {nb}) ({what}); "
                      f"give --assume 'in_range({re.sub(r'[ ]+', '', k)})' if the data guarantees it")


def _return_unused(site, ctx) -> Verdict:
    st = site.node.parent
    if st is None or st.type != "expression_statement":
        return Verdict.no(f"the old count returned by atomicAdd is used "
                          f"(`{norm(site.unit.text(st))[:60]}`): the private count differs")
    return Verdict.yes("the atomic's return value is unused")


def _bins_private(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    b = site.text("B")
    for n in unit.walk(fn.body):
        if n.type == "identifier" and unit.text(n) == b and not inside(n, site.node):
            return Verdict.no(f"{b} is also used at line {unit.line_col(n.start_byte)[0]} "
                              f"(`{norm(unit.text(n.parent))[:50]}`): the global bins must only "
                              "be updated by this atomic")
    return Verdict.yes(f"{b} is only updated by this atomic")


def _no_early_exit(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    for n in unit.walk(fn.body):
        if n.type in ("return_statement", "goto_statement"):
            p = n.parent
            while p is not None and p.type != "lambda_expression" and p.id != fn.body.id:
                p = p.parent
            if p is not None and p.type == "lambda_expression":
                continue
            return Verdict.no(f"a {n.type.split('_')[0]} at line {unit.line_col(n.start_byte)[0]}"
                              ": threads that leave early never reach the merge's "
                              "__syncthreads(); guard the work with `if (i < n)` instead")
    for cond, how in enclosing_conditions(unit, site.node):
        if how == "exit":
            return Verdict.no("an earlier exit skips the update")
    return Verdict.yes("no return: every thread reaches the kernel's end and both barriers")


def _block_shape(site, ctx) -> Verdict:
    v, text, why = contract_block(site, ctx)
    if text is None:
        return Verdict.no(why)
    return Verdict.yes(f"1-D block={text}: threadIdx.x strides the bins")


def _smem_budget(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    _, nb, _ = bins_of(site, ctx)
    if nb is None:
        return Verdict.unknown("the number of bins is unknown")
    p = _param(site, site.text("B"))
    size = type_size(unit, p.base_type) if p is not None else None
    size = size or 4
    r = site.pass_.replicas if site.pass_ is not None else 1
    fp = shared_footprint(unit, fn, ctx.sizes)
    if fp.static_bytes is None:
        return Verdict.unknown(f"static shared memory of {fn.name} unknown: {fp.reason}")
    need = nb * r * size
    if fp.static_bytes + need > SMEM_LIMIT:
        return Verdict.no(f"{nb} bins x {r} replicas x {size} B = {need} B (+ {fp.static_bytes} B "
                          "already) exceed the 48 KiB of static shared memory")
    return Verdict.yes(f"{need} B of private bins (+ {fp.static_bytes} B) fit in 48 KiB")


# ======================================================================= generation
def _paren_nb(nb: str) -> str:
    return nb if re.fullmatch(r"\w+", nb) else f"({nb})"


def _total(nb: str, r: int) -> str:
    return nb if r == 1 else f"{_paren_nb(nb)} * {r}"


def prologue(ty, s, nb, r, zero, k, ind, st) -> str:
    n = _total(nb, r)
    return "\n".join([
        f"__shared__ {ty} {s}[{n}];",
        f"{ind}for (int {k} = threadIdx.x; {k} < {n}; {k} += blockDim.x) {{",
        f"{ind}{st}{s}[{k}] = {zero};",
        f"{ind}}}",
        f"{ind}__syncthreads();",
    ])


def epilogue(ty, s, b, nb, r, zero, k, rr, total, style, ind, st) -> str:
    def addr(x):
        return f"&{b}[{x}]" if style == "subscript" else f"{b} + {x}"

    lines = ["__syncthreads();",
             f"{ind}for (int {k} = threadIdx.x; {k} < {nb}; {k} += blockDim.x) {{"]
    if r == 1:
        lines += [f"{ind}{st}if ({s}[{k}]) {{",
                  f"{ind}{st}{st}atomicAdd({addr(k)}, {s}[{k}]);",
                  f"{ind}{st}}}"]
    else:
        lines += [f"{ind}{st}{ty} {total} = {zero};",
                  f"{ind}{st}for (int {rr} = 0; {rr} < {r}; ++{rr}) {{",
                  f"{ind}{st}{st}{total} += {s}[{k} * {r} + ({rr} + {k}) % {r}];",
                  f"{ind}{st}}}",
                  f"{ind}{st}if ({total}) {{",
                  f"{ind}{st}{st}atomicAdd({addr(k)}, {total});",
                  f"{ind}{st}}}"]
    lines.append(f"{ind}}}")
    return "\n".join(lines)


def _names(unit, fn, p=None):
    def pick(opt, cands, taken):
        return opt if opt not in (None, "auto") else fresh(unit, fn, cands, taken=taken)

    s = pick(p and p.array, ("s_bins", "s_hist", "local_bins"), set())
    k = pick(p and p.counter, ("k", "kb", "bin"), {s})
    rr = pick(p and p.copy, ("r", "rep", "copy"), {s, k})
    total = pick(p and p.total, ("total", "sum", "cnt"), {s, k, rr})
    return s, k, rr, total


def _fresh_names(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    names = _names(unit, fn, site.pass_)
    r = site.pass_.replicas if site.pass_ is not None else 1
    names = names if r > 1 else names[:2]
    if len(set(names)) != len(names):
        return Verdict.no(f"the names {', '.join(names)} are not distinct")
    used = {unit.text(n) for n in unit.walk(fn.node) if n.type in ("identifier", "type_identifier")}
    taken = [x for x in names if x in used]
    if taken:
        return Verdict.no(f"the name {taken[0]} is already used in {fn.name}")
    return Verdict.yes(f"{', '.join(names)} are fresh")


def _step(unit, node):
    ind = line_indent(unit, node.start_byte)
    return ind, indent_step(unit, node)


@dataclass(frozen=True)
class PrivatizeAtomics(Pass):
    """Count a histogram in per-block shared-memory bins, merged into the global bins.

    Before::

        // kltrans: launch histogram_naive grid=ceil_div(n, 256) block=256
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            unsigned int v = data[i];          // data: const uint8_t*
            if (v < 256u) {
                atomicAdd(&bins[v], 1u);
            }
        }

    After ``privatize-atomics``::

        __shared__ unsigned int s_bins[256];
        for (int k = threadIdx.x; k < 256; k += blockDim.x) {
            s_bins[k] = 0u;
        }
        __syncthreads();
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            unsigned int v = data[i];
            if (v < 256u) {
                atomicAdd(&s_bins[v], 1u);
            }
        }
        __syncthreads();
        for (int k = threadIdx.x; k < 256; k += blockDim.x) {
            if (s_bins[k]) {
                atomicAdd(&bins[k], s_bins[k]);
            }
        }

    With ``replicas=R`` (> 1) the block keeps R copies, ``s_bins[bin * R + copy]`` with
    ``copy = threadIdx.x % R`` (R = 32: one column per lane, a warp's 32 updates hit 32
    banks), and the merge sums a bin's R copies (rotated reads) before its one global
    atomic. The prologue goes before the kernel's first statement, the epilogue after its
    last; the guards (``if (i < n)``) stay where they are, so every thread reaches both
    barriers. Anchors: ``atomicAdd(&bins[b], v)`` and ``atomicAdd(bins + b, v)`` anywhere
    in the kernel (loops, guards). The launch is unchanged (the bins are static shared
    memory, not part of the launch contract).

    NB, the number of bins, is ``bins=N`` when given; else the bound of an enclosing
    ``if (b < NB)`` guard; else the one ``#define``/``constexpr``/template parameter whose
    name contains "bin" (its value from the unit or ``--assume NBINS==256``); else the
    range of the bin index (a byte gives 256).

    Preconditions: count-type (dtype: the bins are a global pointer parameter of integer
    counts: int, unsigned, (unsigned) long long), bin-count (layout: NB is known, with a
    value), bin-range (layout: the bin index is provably in [0, NB): an unsigned char
    or uint8_t, a mask ``& 255``, an unsigned 32-bit ``>> 24``, ``% NB`` of an unsigned, an
    enclosing ``if (b < NB)`` on an unsigned ``b``; or from the context: ``--assume
    'in_range(b)'``), return-unused (storage), bins-private (storage: the bins are used
    by this atomic only: not read, not updated elsewhere), no-early-exit (pipeline: no
    ``return`` in the kernel, so every thread reaches the barriers), fresh-names (pipeline:
    the names of the shared bins and the loop counters are unused), block-shape
    (hardware: the launch contract has a 1-D block; threadIdx.x strides the bins),
    smem-budget (hardware: NB x R x sizeof(count) plus the kernel's static shared memory
    fit in 48 KiB).

    Options: ``replicas`` (1, 2, 4, 8, 16, 32; default 1), ``bins`` (``auto`` or the
    number of bins), ``array``, ``counter``, ``copy``, ``total`` (names of the shared bins,
    the block-strided counter, the merge's copy counter and sum; ``auto``: s_bins, k, r,
    total or the next free name).
    """

    name = "privatize-atomics"
    kind = "optimize"
    inverse = "global-atomics"
    anchor = ANCHOR
    preconditions = (
        Precondition("count-type", "dtype",
                     "the bins are a global pointer parameter of integer counts", _count_type),
        Precondition("bin-count", "layout", "the number of bins NB is a known constant",
                     _bin_count),
        Precondition("bin-range", "layout", "the bin index is provably in [0, NB)", _bin_range),
        Precondition("return-unused", "storage", "the atomic's return value is not used",
                     _return_unused),
        Precondition("bins-private", "storage",
                     "the global bins are not read or updated elsewhere in the kernel",
                     _bins_private),
        Precondition("no-early-exit", "pipeline",
                     "no return in the kernel: all threads reach the two barriers",
                     _no_early_exit),
        Precondition("fresh-names", "pipeline",
                     "the names of the private bins and the loop counters are unused",
                     _fresh_names),
        Precondition("block-shape", "hardware",
                     "the launch contract's block is 1-D", _block_shape),
        Precondition("smem-budget", "hardware",
                     "NB x replicas counters fit the 48 KiB of static shared memory",
                     _smem_budget),
    )

    replicas: int = option(1, Choice(*REPLICAS), "copies of the bins, picked by lane % R",
                                                 tune=True)
    bins: int | str = option("auto", OneOf(IntRange(1, 65536), Choice("auto")),
                             "number of bins (auto: from a guard, a *BIN* constant or the "
                             "index range)")
    array: str = option("auto", Identifier(), "name of the shared bins (auto: s_bins or a "
                        "fresh name)")
    counter: str = option("auto", Identifier(), "name of the block-strided loop counter")
    copy: str = option("auto", Identifier(), "name of the copy counter of the merge (R > 1)")
    total: str = option("auto", Identifier(), "name of the merged count (R > 1)")

    def rewrite(self, site, ctx):
        unit, fn = site.unit, site.function
        body = fn.body
        sts = statements(body)
        nb, _, _ = bins_of(site, ctx)
        p = _param(site, site.text("B"))
        ty = norm(p.base_type)
        zero = _ZERO[value_class(ty, fn)]
        s, k, rr, total = _names(unit, fn, self)
        ind, st = _step(unit, sts[0])
        r = self.replicas
        style = "subscript" if unit.text(site.node).replace(" ", "").startswith("atomicAdd(&") \
            else "offset"
        edits = [Edit.insert(sts[0].start_byte, prologue(ty, s, nb, r, zero, k, ind, st) +
                             "\n" + ind)]
        bnode = site.match.bindings["B"]
        if r == 1:
            edits.append(Edit(bnode.start_byte, bnode.end_byte, s))
        else:
            knode = site.match.bindings["K"]
            idx = f"{wrap(unit, knode)} * {r} + threadIdx.x % {r}"
            if style == "subscript":
                edits.append(Edit(bnode.start_byte, bnode.end_byte, s))
                edits.append(Edit(knode.start_byte, knode.end_byte, idx))
            else:
                edits.append(Edit(bnode.start_byte, knode.end_byte, f"{s} + ({idx})"))
        last = sts[-1]
        edits.append(Edit.insert(last.end_byte, "\n" + ind + epilogue(
            ty, s, site.text("B"), nb, r, zero, k, rr, total, style, ind, st)))
        return edits

    def inverse_for(self, site, ctx):
        return GlobalAtomics()


# ====================================================================== global-atomics
SHARED = Rule(kind="declaration", regex=r"^__shared__\s", inside_kernel=True)


@dataclass
class _Priv:
    decl: object
    zero: object
    sync1: object
    sync2: object
    merge: object
    s: str
    ty: str
    nb: str
    r: int
    b: str
    style: str
    k: str
    rr: str
    total: str


def _parse_priv(site):
    """(_Priv, None) when the site's declaration starts the shape privatize-atomics writes."""
    unit, fn = site.unit, site.function
    decl = site.node
    body = fn.body
    sts = statements(body)
    if decl.parent is None or decl.parent.id != body.id:
        return None, "the __shared__ declaration is not a statement of the kernel body"
    m = re.fullmatch(r"__shared__ ((?:unsigned |signed )?(?:\w+ )*?\w+) (\w+)\[(.+)\];",
                     squash(unit.text(decl)))
    if m is None:
        return None, "not a one-dimensional __shared__ array declaration"
    ty, s, total_n = m.group(1), m.group(2), m.group(3)
    j = next(i for i, x in enumerate(sts) if x.id == decl.id)
    if j + 2 >= len(sts) or len(sts) < 6:
        return None, f"{s} is not zeroed, counted and merged by the kernel"
    zero, sync1 = sts[j + 1], sts[j + 2]
    zm = re.fullmatch(rf"for\(int (\w+)=threadIdx.x;\1<(.+);\1\+=blockDim.x\)\{{?{s}\[\1\]=(\w+);\}}?",
                      squash(unit.text(zero)))
    if zm is None or squash(unit.text(sync1)) != "__syncthreads();" or zm.group(2) != total_n:
        return None, (f"{s} is not zeroed by a block-strided loop "
                      f"`for (int k = threadIdx.x; k < N; k += blockDim.x) {s}[k] = 0;` "
                      "followed by __syncthreads()")
    k = zm.group(1)
    sync2, merge = sts[-2], sts[-1]
    if squash(unit.text(sync2)) != "__syncthreads();" or merge.type != "for_statement":
        return None, (f"the kernel does not end with __syncthreads() and a loop merging {s} "
                      "into the global bins")
    mm = re.fullmatch(r"for\(int (\w+)=threadIdx.x;\1<(.+?);\1\+=blockDim.x\)\{(.*)\}",
                      squash(unit.text(merge))) or \
        re.fullmatch(r"for\(int (\w+)=threadIdx.x;\1<(.+?);\1\+=blockDim.x\)(.*)",
                     squash(unit.text(merge)))
    if mm is None:
        return None, f"the last loop is not a block-strided merge of {s}"
    k2, nb, inner = mm.groups()
    r, rr, total = 1, "", ""
    one = _plain_merge(inner, s, k2, value_class(ty, fn) == "unsigned")
    if one:
        b, style = one
    else:
        many = re.fullmatch(
            rf"{re.escape(ty)} (\w+)=\w+;for\(int (\w+)=0;\2<(\d+);\+\+\2\)\{{\1\+={s}\[{k2}\*(\d+)"
            rf"\+\(\2\+{k2}\)%(\d+)\];\}}if\(\1\)\{{atomicAdd\((&(\w+)\[{k2}\]|(\w+)\+{k2}),\1\);\}}",
            inner)
        if many is None or not (many.group(3) == many.group(4) == many.group(5)):
            return None, f"the merge loop does not add {s}'s bins (or their copies) to global bins"
        total, rr, r = many.group(1), many.group(2), int(many.group(3))
        b = many.group(7) or many.group(8)
        style = "subscript" if many.group(7) else "offset"
    want = nb if r == 1 else f"{_paren_nb(nb)}*{r}"
    if squash(want) != total_n:
        return None, f"{s} has {total_n} counters, not {want} (bins x copies)"
    return _Priv(decl, zero, sync1, sync2, merge, s, ty, nb, r, b, style, k, rr, total), None


def _plain_merge(inner: str, s: str, k: str, unsigned: bool) -> tuple[str, str] | None:
    """(global array, address style) when ``inner`` (a merge loop's body, blanks
    squashed) adds bin ``s[k]`` to ``G[k]`` with one atomicAdd: read directly or through a
    local copy (``uint c = s[k];``), under no test or a test that it is not zero (``c``,
    ``c != 0``, ``0 != c``; ``c > 0`` for an unsigned count), braced or not."""
    v = rf"{re.escape(s)}\[{re.escape(k)}\]"
    copy = re.fullmatch(rf"(?:const )?[\w ]+? (\w+)={v};(.*)", inner)
    if copy:
        v, inner = re.escape(copy.group(1)), copy.group(2)
    zero = r"0[uU]?[lL]{0,2}"
    tests = [v, rf"{v}!={zero}", rf"{zero}!={v}"] + ([rf"{v}>{zero}", rf"{zero}<{v}"]
                                                    if unsigned else [])
    m = re.fullmatch(rf"(?:if\((?:{'|'.join(tests)})\))?\{{?atomicAdd\((&(\w+)\[{re.escape(k)}\]|"
                     rf"(\w+)\+{re.escape(k)}),{v}\);\}}?", inner)
    if m is None:
        return None
    return (m.group(2), "subscript") if m.group(2) else (m.group(3), "offset")


def _updates(site, pv):
    """The atomicAdd calls on the private bins, and the other uses of them."""
    unit, fn = site.unit, site.function
    calls, other = [], []
    skip = [pv.decl, pv.zero, pv.merge]
    for n in unit.walk(fn.body):
        if n.type != "identifier" or unit.text(n) != pv.s or any(inside(n, x) for x in skip):
            continue
        call = n.parent
        while call is not None and call.type not in ("call_expression", "expression_statement",
                                                      "declaration", "compound_statement"):
            call = call.parent
        if call is not None and call.type == "call_expression" and \
                unit.text(call.child_by_field_name("function")) == "atomicAdd":
            args = [a for a in call.child_by_field_name("arguments").named_children
                    if a.type != "comment"]
            if inside(n, args[0]):
                calls.append((call, args[0], args[1]))
                continue
        other.append(n)
    return calls, other


def _shape(site, ctx) -> Verdict:
    pv, why = _parse_priv(site)
    if pv is None:
        return Verdict.no(why)
    return Verdict.yes(f"{pv.s}: {pv.nb} bins x {pv.r} zeroed, counted and merged into {pv.b}")


def _count_type_inv(site, ctx) -> Verdict:
    pv, why = _parse_priv(site)
    if pv is None:
        return Verdict.unknown(why)
    p = _param(site, pv.b)
    if p is None or p.pointer != 1:
        return Verdict.no(f"{pv.b} is not a pointer parameter")
    if norm(p.base_type) != pv.ty or value_class(pv.ty, site.function) not in _ZERO:
        return Verdict.no(f"the private counters are {pv.ty} and the global bins {p.base_type}: "
                          "counting globally would change the wrap-around")
    return Verdict.yes(f"both are {pv.ty} integer counts")


def _direct_updates(site, ctx) -> Verdict:
    pv, why = _parse_priv(site)
    if pv is None:
        return Verdict.unknown(why)
    calls, other = _updates(site, pv)
    unit = site.unit
    if other:
        n = other[0]
        return Verdict.no(f"{pv.s} is used other than by atomicAdd at line "
                          f"{unit.line_col(n.start_byte)[0]} (`{norm(unit.text(n.parent))[:50]}`): "
                          "the updates cannot be redirected to the global bins")
    if len(calls) != 1:
        return Verdict.no(f"{len(calls)} atomicAdd updates of {pv.s}: the pass restores one")
    if any(unit.text(x) == pv.b for x in unit.walk(site.function.body)
           if x.type == "identifier" and not inside(x, pv.merge)):
        return Verdict.no(f"{pv.b} is also used outside the merge")
    return Verdict.yes(f"{pv.s} is updated by one atomicAdd and nothing else")


def _index(site, pv):
    """(bin index text, why) of the one update, undoing the replica column."""
    unit = site.unit
    calls, _ = _updates(site, pv)
    call, addr, _v = calls[0]
    a = _strip(addr)
    if a.type == "pointer_expression" and unit.text(a).lstrip().startswith("&"):
        sub = a.child_by_field_name("argument")
        if sub.type != "subscript_expression":
            return None, "the update's address is not &bins[...]"
        idx_list = sub.child_by_field_name("indices")
        inner = [c for c in idx_list.named_children if c.type != "comment"]
        node, style = inner[0], "subscript"
    elif a.type == "binary_expression":
        node, style = a.child_by_field_name("right"), "offset"
        if pv.r > 1:
            node = _strip_once(node)
    else:
        return None, "the update's address is not &bins[...] or bins + ..."
    if pv.r == 1:
        return (node, style, None), None
    if node.type == "binary_expression" and unit.text(node.child_by_field_name("operator")) == "+":
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if squash(unit.text(right)) == f"threadIdx.x%{pv.r}" and left.type == "binary_expression" \
                and unit.text(left.child_by_field_name("operator")) == "*" and \
                squash(unit.text(left.child_by_field_name("right"))) == str(pv.r):
            return (node, style, left.child_by_field_name("left")), None
    return None, (f"the update's index `{norm(unit.text(node))}` is not bin * {pv.r} + "
                  f"threadIdx.x % {pv.r}")


def _strip_once(node):
    if node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) == 1:
            return inner[0]
    return node


def _replica_index(site, ctx) -> Verdict:
    pv, why = _parse_priv(site)
    if pv is None:
        return Verdict.unknown(why)
    calls, other = _updates(site, pv)
    if len(calls) != 1 or other:
        return Verdict.unknown("the updates are not one atomicAdd")
    got, why = _index(site, pv)
    if got is None:
        return Verdict.no(why)
    return Verdict.yes("the update's index is the bin" + (f" times {pv.r} plus the lane's copy"
                                                          if pv.r > 1 else ""))


def _line_span(unit, node):
    """The byte span of ``node`` with its line's indentation and its newline."""
    s0 = unit.source.rfind(b"\n", 0, node.start_byte) + 1
    e0 = node.end_byte
    if unit.source[s0:node.start_byte].strip() == b"" and unit.source[e0:e0 + 1] == b"\n":
        return s0, e0 + 1
    return node.start_byte, node.end_byte


@dataclass(frozen=True)
class GlobalAtomics(Pass):
    """Count in the global bins again: undo a shared-memory privatized histogram.

    Before::

        __shared__ unsigned int s_bins[256];
        for (int k = threadIdx.x; k < 256; k += blockDim.x) {
            s_bins[k] = 0u;
        }
        __syncthreads();
        ...
                atomicAdd(&s_bins[v], 1u);
        ...
        __syncthreads();
        for (int k = threadIdx.x; k < 256; k += blockDim.x) {
            if (s_bins[k]) {
                atomicAdd(&bins[k], s_bins[k]);
            }
        }

    After ``global-atomics``::

        ...
                atomicAdd(&bins[v], 1u);
        ...

    The merge may read a bin through a local copy and add it under no test or a test that
    it is not zero (``if (c)``, ``c != 0``; ``c > 0`` only for unsigned counts: a signed
    bin below zero would be left out), the zeroing loop braced or not. The replicated form
    (``s_bins[NB * R]``, updates at ``v * R + threadIdx.x % R``, a merge summing the R
    copies) is recognized too, and the update goes back to ``v``.

    Preconditions: privatized-shape (layout: a ``__shared__`` array of the kernel body,
    zeroed by a block-strided loop and ``__syncthreads()`` right after its declaration,
    and the kernel ends with ``__syncthreads()`` and a block-strided loop adding its
    counts (or its R copies) to a global array), count-type (dtype: the private and global
    counters have one integer type), direct-updates (storage: the private bins are used
    by exactly one ``atomicAdd(&s[...], v)`` / ``atomicAdd(s + ..., v)`` besides the
    prologue and the merge, not through a pointer or a device function; the global bins
    only by the merge), replica-index (layout: with R copies, the update's index is
    ``bin * R + threadIdx.x % R``).

    Options: none.
    """

    name = "global-atomics"
    kind = "simplify"
    inverse = "privatize-atomics"
    anchor = SHARED
    preconditions = (
        Precondition("privatized-shape", "layout",
                     "shared bins zeroed and synchronized at the start, merged into global bins "
                     "at the end", _shape),
        Precondition("count-type", "dtype",
                     "private and global counters are the same integer type", _count_type_inv),
        Precondition("direct-updates", "storage",
                     "the private bins are updated by one atomicAdd and used nowhere else",
                     _direct_updates),
        Precondition("replica-index", "layout",
                     "with R copies, the update's index is bin * R + threadIdx.x % R",
                     _replica_index),
    )

    def rewrite(self, site, ctx):
        unit = site.unit
        pv, _ = _parse_priv(site)
        (node, style, bin_node), _ = _index(site, pv)
        calls, _ = _updates(site, pv)
        call, addr, _v = calls[0]
        edits = []
        # prologue: from the declaration to the first barrier (and the indentation after)
        s0 = pv.decl.start_byte
        e0 = pv.sync1.end_byte
        nxt = unit.source[e0:]
        e0 += len(nxt) - len(nxt.lstrip())
        edits.append(Edit.delete(s0, e0))
        # epilogue: from the end of the statement before the second barrier
        prev = pv.sync2.prev_named_sibling
        while prev is not None and prev.type == "comment":
            prev = prev.prev_named_sibling
        edits.append(Edit.delete(prev.end_byte if prev is not None else pv.sync2.start_byte,
                                 pv.merge.end_byte))
        ident = next(x for x in unit.walk(addr) if x.type == "identifier" and
                     unit.text(x) == pv.s)
        if pv.r == 1:
            edits.append(Edit(ident.start_byte, ident.end_byte, pv.b))
        elif style == "subscript":
            edits.append(Edit(ident.start_byte, ident.end_byte, pv.b))
            edits.append(Edit(node.start_byte, node.end_byte, unwrap(unit, bin_node)))
        else:
            edits.append(Edit(ident.start_byte, addr.end_byte if _strip(addr).id == addr.id
                              else _strip(addr).end_byte,
                              f"{pv.b} + {unwrap(unit, bin_node)}"))
        return edits

    def inverse_for(self, site, ctx):
        pv, _ = _parse_priv(site)
        if pv is None:
            return PrivatizeAtomics()
        nb = int(pv.nb) if re.fullmatch(r"\d+", pv.nb) else "auto"
        kw = {"copy": pv.rr, "total": pv.total} if pv.r > 1 else {}
        return PrivatizeAtomics(replicas=pv.r, bins=nb, array=pv.s, counter=pv.k, **kw)


__all__ = ["GlobalAtomics", "PrivatizeAtomics"]
