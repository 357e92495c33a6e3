"""Warp and block scans of a tile: ``warp-block-scan`` (optimize) and its inverse
``direct-block-scan`` (simplify).

Inside a scan tile every thread owns U units of four elements (unit ``k * 32 + lane`` of
its warp), scans each unit in registers and needs the exclusive prefix of each unit: the
sum of every element of the tile before it, plus the tile's own prefix. The fast form
gets it with warp scans of the unit totals (``__shfl_up_sync``, a carry across the U
rows), a block scan of the warp totals through shared memory, and a broadcast of the
tile prefix through shared memory. The direct form sums the input before each unit
(and before the tile) in every thread: no shared memory, no warp primitives, no barrier.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Identifier, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.rewrite import lex, token_text as _norm





# the fast form (statements of the kernel body), as warp-block-scan writes it
FAST = """\
unsigned int {excl}[{units}];
unsigned int {carry} = 0u;
for (int {k} = 0; {k} < {units}; ++{k}) {{
    {v}[{k}][1] += {v}[{k}][0];
    {v}[{k}][2] += {v}[{k}][1];
    {v}[{k}][3] += {v}[{k}][2];
    unsigned int {inc} = {v}[{k}][3];
    for (int {off} = 1; {off} < 32; {off} <<= 1) {{
        const unsigned int {up} = __shfl_up_sync(0xffffffffu, {inc}, {off});
        if ({lane} >= {off}) {{
            {inc} += {up};
        }}
    }}
    {excl}[{k}] = {carry} + {inc} - {v}[{k}][3];
    {carry} += __shfl_sync(0xffffffffu, {inc}, 31);
}}
if ({lane} == 0) {{
    {totals}[{warp}] = {carry};
}}
__syncthreads();
unsigned int {warp_prefix} = 0u;
unsigned int {aggregate} = 0u;
for (int {w} = 0; {w} < {warps}; ++{w}) {{
    const unsigned int {t} = {totals}[{w}];
    {warp_prefix} += {w} < {warp} ? {t} : 0u;
    {aggregate} += {t};
}}
if (threadIdx.x == 0) {{
    unsigned int {prefix} = 0u;
    for (size_t i = 0; i < {tile_base}; ++i) {{
        {prefix} += (unsigned int){input}[i];
    }}
    {shared} = {prefix};
}}
__syncthreads();
const unsigned int {base} = {shared} + {warp_prefix};"""

SHARED = """\
__shared__ unsigned int {totals}[{warps}];
__shared__ unsigned int {shared};"""

# the direct form
DIRECT = """\
unsigned int {excl}[{units}];
for (int {k} = 0; {k} < {units}; ++{k}) {{
    {v}[{k}][1] += {v}[{k}][0];
    {v}[{k}][2] += {v}[{k}][1];
    {v}[{k}][3] += {v}[{k}][2];
    {excl}[{k}] = 0u;
    for (size_t i = {tile_base}; i < {start}; ++i) {{
        {excl}[{k}] += i < {count} ? (unsigned int){input}[i] : 0u;
    }}
}}
unsigned int {prefix} = 0u;
for (size_t i = 0; i < {tile_base}; ++i) {{
    {prefix} += (unsigned int){input}[i];
}}
const unsigned int {base} = {prefix};"""

# names only the fast form has (options of warp-block-scan)
_FAST_ONLY = ("carry", "inc", "off", "up", "lane", "warp", "totals", "warps", "warp_prefix",
              "aggregate", "w", "t", "shared")


def _regex(template: str) -> re.Pattern:
    """A regex over normalized tokens for ``template``: each {name} captures an
    identifier (later uses must agree); {start} captures an expression."""
    names: list = []
    out = []
    for part in re.split(r"(\{\{|\}\}|\{\w+\})", template):
        if part in ("{{", "}}"):
            out.append(re.escape(part[0]))
        elif re.fullmatch(r"\{\w+\}", part):
            n = part[1:-1]
            if n in names:
                out.append(f"(?P={n})")
            else:
                names.append(n)
                out.append(f"(?P<{n}>.+?)" if n == "start" else f"(?P<{n}>[A-Za-z_]\\w*)")
        else:
            out.extend(re.escape(t) for t in lex(part))
    return re.compile(" ".join(out))


def _stmts(node):
    return [c for c in node.named_children if c.type != "comment"]


def _indent(text: str, ind: str) -> str:
    lines = text.split("\n")
    return "\n".join([lines[0]] + [(ind + ln) if ln else ln for ln in lines[1:]])


def _find(unit, fn_node, template: str, anchor_node, n_stmts: int):
    """The statements of the body starting at ``anchor_node`` that spell ``template``:
    (names, first, last) or None."""
    body = fn_node.child_by_field_name("body")
    st = _stmts(body)
    ids = [s.id for s in st]
    if anchor_node.id not in ids:
        return None
    i = ids.index(anchor_node.id)
    if i + n_stmts > len(st):
        return None
    seg = st[i:i + n_stmts]
    text = " ".join(_norm(unit.text(s)) for s in seg)
    m = _regex(template).fullmatch(text)
    if m is None:
        return None
    return m.groupdict(), seg[0], seg[-1]


_N_FAST = 11  # statements of FAST
_N_DIRECT = 5


def _load_nest(unit, fn_node, v: str):
    """(start, count, input) of the load nest that fills ``v``: ``for (k) { for (j) {
    T i = START + j; v[k][j] = i < COUNT ? (unsigned int)IN[i] : 0u; } }``."""
    for n in unit.nodes_of_type("for_statement", within=fn_node):
        t = _norm(unit.text(n))
        m = re.fullmatch(r"for \( int (\w+) = 0 ; \1 < \w+ ; \+\+ \1 \) \{ for \( int (\w+) = 0 ; "
                         r"\2 < 4 ; \+\+ \2 \) \{ (?:const )?size_t (\w+) = (.+?) \+ \2 ; "
                         r"%s \[ \1 \] \[ \2 \] = \3 < (\w+) \? \( unsigned int \) (\w+) "
                         r"\[ \3 \] : 0u ; \} \}" % re.escape(v), t)
        if m:
            d = [x for x in unit.nodes_of_type("init_declarator", within=n)
                 if unit.text(x.child_by_field_name("declarator")) == m.group(3)][0]
            start = d.child_by_field_name("value").child_by_field_name("left")
            return unit.text(start), m.group(5), m.group(6), m.group(1)
    return None


def _rename_k(start: str, k_from: str, k_to: str) -> str:
    return re.sub(r"\b%s\b" % re.escape(k_from), k_to, start)


def _decl_value(unit, fn_node, name):
    for d in unit.nodes_of_type("init_declarator", within=fn_node):
        n = d.child_by_field_name("declarator")
        if n is not None and n.type == "identifier" and unit.text(n) == name:
            return _norm(unit.text(d.child_by_field_name("value")))
    return None


def _block_size(site):
    from kltrans.syntax.contract import contracts, evaluate, file_constants

    try:
        c = contracts(site.unit).get(site.function.name)
        if c is None:
            return None, "no launch header"
        env = file_constants(site.unit)
        b = [evaluate(x, env) for x in c.block]
        return b, ""
    except Exception as e:  # an unreadable contract is a failed check, not a crash
        return None, f"the launch header's block cannot be evaluated ({e})"


def _layout(site, names, start, kvar) -> Verdict:
    """The units of the direct sums are laid out the way the warp scan orders them: unit
    ``k * 32 + lane`` of warp ``warp``'s ``32 * U * 4`` elements from the tile base."""
    unit, fn = site.unit, site.function.node
    lane, warp = names["lane"], names["warp"]
    m = re.fullmatch(r"(\w+) \+ 4 \* (?:\( size_t \) )?\( %s \* 32 \+ %s \)" % (
        re.escape(kvar), re.escape(lane)), start)
    if m is None:
        return Verdict.no(f"the unit start `{start}` is not WARP_BASE + 4 * (size_t)({kvar} * 32 "
                          f"+ {lane})")
    wb = _decl_value(unit, fn, m.group(1))
    mm = re.fullmatch(r"%s \+ (?:\( size_t \) )?%s \* (\w+)" % (re.escape(names["tile_base"]),
                                                                 re.escape(warp)), wb or "")
    if mm is None:
        return Verdict.no(f"{m.group(1)} is not {names['tile_base']} + (size_t){warp} * ITEMS")
    from kltrans.syntax.contract import evaluate, file_constants

    env = file_constants(unit)
    try:
        items, units = evaluate(mm.group(1), env), evaluate(names["units"], env)
    except Exception:
        return Verdict.no(f"{mm.group(1)} or {names['units']} is not a constant")
    if items != 32 * units * 4:
        return Verdict.no(f"a warp's {items} elements are not 32 lanes x {units} units x 4")
    lv, wv = _decl_value(unit, fn, lane), _decl_value(unit, fn, warp)
    if lv not in ("threadIdx . x & 31", "threadIdx . x % 32"):
        return Verdict.no(f"{lane} is not threadIdx.x & 31")
    if wv not in ("threadIdx . x >> 5", "threadIdx . x / 32"):
        return Verdict.no(f"{warp} is not threadIdx.x >> 5")
    tb = _decl_value(unit, fn, names["tile_base"]) or ""
    mt = re.fullmatch(r"\( size_t \) \w+ \* (\w+)", tb)
    b, why = _block_size(site)
    if mt is None or b is None:
        return Verdict.no(f"the tile base {names['tile_base']} is not (size_t)tile * TILE"
                          if mt is None else why)
    try:
        tile = evaluate(mt.group(1), env)
    except Exception:
        return Verdict.no(f"{mt.group(1)} is not a constant")
    if tile != b[0] // 32 * items:
        return Verdict.no(f"the tile ({tile}) is not the block's {b[0] // 32} warps x {items}")
    return Verdict.yes(f"unit {kvar} * 32 + {lane} of warp {warp} ({items} elements a warp, "
                       f"{tile} a tile)")


def _auto_warps(site) -> str | None:
    """``warps=auto``: the file's constant for the block's warps (a name with WARP in it
    whose value is the launch header's block / 32; one ending in WARPS first), else the
    number itself; None without a launch header of whole warps."""
    from kltrans.syntax.contract import file_constants

    b, _ = _block_size(site)
    if b is None or not b or b[0] % 32:
        return None
    n = b[0] // 32
    named = sorted(k for k, v in file_constants(site.unit).items()
                   if v == n and "WARP" in k.upper())
    named.sort(key=lambda k: not k.upper().endswith("WARPS"))
    return named[0] if named else str(n)


def _whole_warps(site, names) -> Verdict:
    b, why = _block_size(site)
    if b is None:
        return Verdict.no(why)
    if b[1:] not in ([], [1], [1, 1]) or b[0] % 32:
        return Verdict.no(f"the block {b} is not one-dimensional whole warps: "
                          f"__shfl_up_sync with a full mask needs every lane")
    from kltrans.syntax.contract import evaluate, file_constants

    try:
        warps = evaluate(names["warps"], file_constants(site.unit))
    except Exception:
        return Verdict.no(f"{names['warps']} is not a constant")
    if warps != b[0] // 32:
        return Verdict.no(f"{names['warps']} = {warps} is not the block's {b[0] // 32} warps")
    return Verdict.yes(f"{b[0]} threads = {warps} whole warps")


def _no_alias(site, ctx, names) -> Verdict:
    others = [p.name for p in site.function.params if p.pointer and p.name != names["input"]]
    bad = [o for o in others if not ctx.assumed("no_alias", names["input"], o)]
    if bad:
        return Verdict.unknown(f"{names['input']} and {bad[0]} may alias: the direct sums "
                               f"re-read {names['input']} while other blocks write; pass "
                               f"--assume no_alias({names['input']},{bad[0]})")
    ins = [p for p in site.function.params if p.name == names["input"] and p.pointer == 1]
    if not ins or not ins[0].const:
        return Verdict.no(f"{names['input']} is not a const pointer parameter")
    return Verdict.yes(f"{names['input']} is const and apart from the outputs (assumed)")


def _unsigned(site, names) -> Verdict:
    unit, fn = site.unit, site.function.node
    for d in unit.nodes_of_type("declaration", within=fn):
        t = _norm(unit.text(d))
        if re.fullmatch(r"unsigned int %s \[ \w+ \] \[ 4 \] ;" % re.escape(names["v"]), t):
            return Verdict.yes(f"{names['v']} holds unsigned int: wrapping sums, any order")
    return Verdict.no(f"{names['v']} is not a local `unsigned int {names['v']}[U][4]`: the "
                      f"sums might round or overflow differently in another order")


# ------------------------------------------------------------------ simplify
def _fast(site):
    """(names, first, last) of the fast form starting at the anchor, or (None, why)."""
    unit, fn = site.unit, site.function.node
    r = _find(unit, fn, FAST, site.node, _N_FAST)
    if r is None:
        return None, ("not the warp/block scan warp-block-scan writes (`unsigned int excl[U]; "
                      "unsigned int carry = 0u; for (k) { unit scan; __shfl_up_sync warp scan; "
                      "...} ...; block scan of the warp totals; tile prefix broadcast`); run "
                      "reroll and direct-tile-prefix first")
    names = dict(r[0])
    ln = _load_nest(unit, fn, names["v"])
    if ln is None:
        return None, (f"no load nest `for (k) for (j) {{ size_t i = START + j; {names['v']}[k][j] "
                      f"= i < COUNT ? (unsigned int)IN[i] : 0u; }}`")
    start, count, input_, kl = ln
    if input_ != names["input"]:
        return None, f"the load nest reads {input_}, the tile prefix sums {names['input']}"
    names.update(start=_rename_k(start, kl, names["k"]), count=count)
    return (names, r[1], r[2], kl, start), ""


def _shared_decls(site, names):
    """The two __shared__ declarations at the top of the body (nodes), or None."""
    unit = site.unit
    st = _stmts(site.function.node.child_by_field_name("body"))
    if len(st) < 2:
        return None
    text = _norm(unit.text(st[0])) + " " + _norm(unit.text(st[1]))
    if text == _norm(SHARED.format(**names)):
        return st[0], st[1]
    return None


def _s_form(site, ctx) -> Verdict:
    f, why = _fast(site)
    if f is None:
        return Verdict.no(why)
    names = f[0]
    skip = _shared_decls(site, names)
    if skip is None:
        return Verdict.no(f"the kernel body does not start with `__shared__ unsigned int "
                          f"{names['totals']}[{names['warps']}]; __shared__ unsigned int "
                          f"{names['shared']};`")
    bad = None
    for n in site.unit.walk(site.function.node):
        if n.type == "identifier" and not (f[1].start_byte <= n.start_byte < f[2].end_byte) \
                and not any(s.start_byte <= n.start_byte < s.end_byte for s in skip) \
                and site.unit.text(n) in [names[k] for k in ("carry", "inc", "off", "up",
                                                            "totals", "warp_prefix",
                                                            "aggregate", "shared", "prefix")]:
            bad = site.unit.text(n)
            break
    if bad:
        return Verdict.no(f"{bad} is used outside the scan (the direct form drops it)")
    return Verdict.yes(f"warp scans of {names['v']} with {names['lane']}, block scan through "
                       f"{names['totals']}, tile prefix in {names['shared']}")


def _s_check(fn):
    def check(site, ctx):
        f, why = _fast(site)
        return Verdict.unknown(why) if f is None else fn(site, ctx, f)
    return check


def _s_layout(site, ctx, f):
    names, _, _, _, _ = f
    start_n = _norm(names["start"])
    return _layout(site, names, start_n, names["k"])


@dataclass(frozen=True)
class DirectBlockScan(Pass):
    """Replace a tile's warp scans, block scan and prefix broadcast by direct sums.

    Before (``v`` holds each thread's U units of 4 elements, loaded from ``in``)::

        unsigned int excl[U];
        unsigned int carry = 0u;
        for (int k = 0; k < U; ++k) {
            v[k][1] += v[k][0]; ...                       // scan of the unit
            unsigned int inc = v[k][3];
            for (int off = 1; off < 32; off <<= 1) { ... __shfl_up_sync ... }
            excl[k] = carry + inc - v[k][3];
            carry += __shfl_sync(0xffffffffu, inc, 31);
        }
        if (lane == 0) { s_warp_total[warp] = carry; }
        __syncthreads();
        ... warp_prefix / aggregate from s_warp_total ...
        if (threadIdx.x == 0) { ... s_prefix = sum of in[0 .. tile_base) ... }
        __syncthreads();
        const unsigned int base = s_prefix + warp_prefix;

    After ``direct-block-scan``::

        unsigned int excl[U];
        for (int k = 0; k < U; ++k) {
            v[k][1] += v[k][0]; ...
            excl[k] = 0u;
            for (size_t i = tile_base; i < warp_base + 4 * (size_t)(k * 32 + lane); ++i) {
                excl[k] += i < count ? (unsigned int)in[i] : 0u;
            }
        }
        unsigned int prefix = 0u;
        for (size_t i = 0; i < tile_base; ++i) {
            prefix += (unsigned int)in[i];
        }
        const unsigned int base = prefix;

    and the two ``__shared__`` declarations at the top of the body go. ``base + excl[k]``
    is the wrapping sum of the input before unit ``k`` either way (the unit start and the
    bound ``count`` are read from the load nest of ``v``).

    Preconditions: scan-form (pipeline: the statements are the fast form above, exactly as
    ``warp-block-scan`` writes it, the shared declarations are the body's first two
    statements and the dropped names are not used elsewhere), unit-layout (layout: the
    units are ``k * 32 + lane`` of warp ``warp``'s ``32 * U * 4`` elements, ``lane =
    threadIdx.x & 31``, ``warp = threadIdx.x >> 5``, the tile ``warps x`` that),
    whole-warps (hardware: a 1-D block of whole warps, ``warps`` of them),
    unsigned-sum (dtype: ``v`` is ``unsigned int``), input-stable (storage: the input
    is const and apart from the other pointers, ``no_alias`` from the context: the
    direct sums re-read it).

    Options: none (``inverse_for`` gives ``warp-block-scan`` with the names read here).
    """

    name = "direct-block-scan"
    kind = "simplify"
    inverse = "warp-block-scan"
    anchor = Rule(kind="declaration", regex=r"^unsigned\s+int\s+\w+\s*\[\s*\w+\s*\]\s*;$",
                  precedes=Rule(pattern="__syncthreads();"))
    preconditions = (
        Precondition("scan-form", "pipeline", "the warp/block scan of a tile", _s_form),
        Precondition("whole-warps", "hardware", "whole warps, as many as the block scan has",
                     _s_check(lambda s, c, f: _whole_warps(s, f[0]))),
        Precondition("unit-layout", "layout", "units ordered as the warp scan orders them",
                     _s_check(_s_layout)),
        Precondition("unsigned-sum", "dtype", "wrapping unsigned sums",
                     _s_check(lambda s, c, f: _unsigned(s, f[0]))),
        Precondition("input-stable", "storage", "the input does not change under the sums",
                     _s_check(lambda s, c, f: _no_alias(s, c, f[0]))),
    )

    def rewrite(self, site, ctx):
        f, _ = _fast(site)
        names, first, last = f[0], f[1], f[2]
        unit = site.unit
        src = unit.source
        ls = src.rfind(b"\n", 0, first.start_byte) + 1
        ind = src[ls:first.start_byte].decode()
        text = _indent(DIRECT.format(**names), ind)
        edits = [Edit(first.start_byte, last.end_byte, text)]
        d0, d1 = _shared_decls(site, names)
        s = src.rfind(b"\n", 0, d0.start_byte) + 1
        e = src.find(b"\n", d1.end_byte)
        e = len(src) if e < 0 else e + 1
        if src[e:].startswith(b"\n"):  # and the blank line after them
            e += 1
        edits.append(Edit.delete(s, e))
        return edits

    def inverse_for(self, site, ctx):
        f, _ = _fast(site)
        names = f[0]
        return WarpBlockScan(**{k: names[k] for k in _FAST_ONLY})


# ------------------------------------------------------------------ optimize
def _direct(site):
    unit, fn = site.unit, site.function.node
    r = _find(unit, fn, DIRECT, site.node, _N_DIRECT)
    if r is None:
        return None, ("not the direct form direct-block-scan writes (`unsigned int excl[U]; "
                      "for (k) { unit scan; excl[k] = 0u; for (size_t i = tile_base; i < START; "
                      "++i) excl[k] += ...; } prefix sum; const unsigned int base = prefix;`)")
    names = dict(r[0])
    p = site.pass_
    names.update({k: getattr(p, k) for k in _FAST_ONLY})
    if names["warps"] == "auto":
        names["warps"] = _auto_warps(site) or "auto"
    ln = _load_nest(unit, fn, names["v"])
    if ln is None:
        return None, f"no load nest of {names['v']}"
    start, count, input_, kl = ln
    if _norm(_rename_k(start, kl, names["k"])) != names["start"] or count != names["count"] \
            or input_ != names["input"]:
        return None, (f"the direct sums do not stop at the load nest's unit start `{start}` "
                      f"(bound {count}, input {input_})")
    return (names, r[1], r[2]), ""


def _o_form(site, ctx) -> Verdict:
    d, why = _direct(site)
    if d is None:
        return Verdict.no(why)
    names = d[0]
    unit, fn = site.unit, site.function.node
    # names at function scope must be new to the kernel; the loop-local ones (inc, off,
    # up, w, t) only to the region and to the body's top-level declarations
    taken = {unit.text(n) for n in unit.walk(fn) if n.type == "identifier"}
    seg = d[1:]
    body = fn.child_by_field_name("body")
    region = {unit.text(n) for s in _stmts(body)
              if seg[0].start_byte <= s.start_byte <= seg[1].start_byte
              for n in unit.walk(s) if n.type == "identifier"}
    top = {unit.text(n) for s in _stmts(body) if s.type == "declaration"
           for n in unit.walk(s) if n.type == "identifier"}
    top |= {p.name for p in site.function.params}
    new = [names[k] for k in ("carry", "inc", "off", "up", "totals", "warp_prefix",
                              "aggregate", "w", "t", "shared")]
    for key in ("carry", "totals", "warp_prefix", "aggregate", "shared"):
        if names[key] in taken:
            return Verdict.no(f"the name {names[key]} is taken in {site.function.name}")
    for key in ("inc", "off", "up", "w", "t"):
        if names[key] in region | top:
            return Verdict.no(f"the name {names[key]} is taken in {site.function.name}")
    if len(set(new)) != len(new):
        return Verdict.no("two of the new names are the same")
    for key in ("lane", "warp"):
        if _decl_value(unit, fn, names[key]) is None:
            return Verdict.no(f"no local {names[key]} ({key} index)")
    return Verdict.yes(f"direct sums of {names['input']} into {names['excl']} and "
                       f"{names['prefix']}")


def _o_check(fn):
    def check(site, ctx):
        d, why = _direct(site)
        return Verdict.unknown(why) if d is None else fn(site, ctx, d[0])
    return check


@dataclass(frozen=True)
class WarpBlockScan(Pass):
    """Replace a tile's direct prefix sums by warp scans, a block scan and a broadcast.

    Before: the direct form (see ``direct-block-scan``): each thread sums the input
    before each of its units, and before the tile.

    After ``warp-block-scan``: the unit totals are scanned across the warp with
    ``__shfl_up_sync`` (one row of 32 units per ``k``, a carry between rows from lane
    31), each warp's total goes to ``__shared__ unsigned int totals[warps]``, every thread
    adds up the totals of the warps before its own (``warp_prefix``; ``aggregate`` is the
    tile's total, for a look-back to publish), and thread 0 sums the input before the
    tile into ``__shared__ unsigned int shared`` (two barriers). The shared declarations
    are added as the first statements of the kernel body. See FAST in the module.

    Preconditions: direct-form (pipeline: the statements are the direct form, its sums
    ending at the load nest's unit starts; the new names are free; ``lane`` and ``warp``
    are locals), unit-layout (layout: units ``k * 32 + lane`` of warp ``warp``, as the
    warp scan orders them), whole-warps (hardware: a 1-D block of ``warps`` whole warps:
    every lane takes part in the full-mask shuffles), unsigned-sum (dtype), input-stable
    (storage): as for ``direct-block-scan``. The statements are at the top level of the
    kernel body, so every thread reaches the barriers.

    Options: the names of the fast form: ``carry``, ``inc``, ``off``, ``up`` (warp scan),
    ``lane``, ``warp`` (the existing lane and warp locals), ``totals`` and ``warps`` (the
    shared warp totals and the macro of the warp count; ``auto``: the file's constant
    with WARP in its name equal to the block's warps, else their number), ``warp_prefix``,
    ``aggregate``,
    ``w``, ``t`` (block scan), ``shared`` (the shared tile prefix).
    """

    name = "warp-block-scan"
    kind = "optimize"
    inverse = "direct-block-scan"
    anchor = Rule(kind="declaration", regex=r"^unsigned\s+int\s+\w+\s*\[\s*\w+\s*\]\s*;$")
    preconditions = (
        Precondition("direct-form", "pipeline", "the direct sums of a tile", _o_form),
        Precondition("whole-warps", "hardware", "whole warps, as many as the block scan has",
                     _o_check(lambda s, c, n: _whole_warps(s, n))),
        Precondition("unit-layout", "layout", "units ordered as the warp scan orders them",
                     _o_check(lambda s, c, n: _layout(s, n, _norm(n["start"]), n["k"]))),
        Precondition("unsigned-sum", "dtype", "wrapping unsigned sums",
                     _o_check(lambda s, c, n: _unsigned(s, n))),
        Precondition("input-stable", "storage", "the input does not change under the sums",
                     _o_check(lambda s, c, n: _no_alias(s, c, n))),
    )

    carry: str = option("carry", Identifier(words=()), "carry between rows of units")
    inc: str = option("inc", Identifier(words=()), "inclusive warp-scan value")
    off: str = option("off", Identifier(words=()), "shuffle distance")
    up: str = option("up", Identifier(words=()), "shuffled value")
    lane: str = option("lane", Identifier(words=()), "lane index local")
    warp: str = option("warp", Identifier(words=()), "warp index local")
    totals: str = option("s_warp_total", Identifier(words=()), "shared warp totals")
    warps: str = option("auto", Identifier(), "macro: warps per block (auto: the file's "
                        "*WARP* constant equal to the launch header's block / 32, else "
                        "that number)")
    warp_prefix: str = option("warp_prefix", Identifier(words=()), "sum of earlier warps")
    aggregate: str = option("aggregate", Identifier(words=()), "the tile's total")
    w: str = option("w", Identifier(words=()), "block-scan loop index")
    t: str = option("t", Identifier(words=()), "block-scan temporary")
    shared: str = option("s_prefix", Identifier(words=()), "shared tile prefix")

    def rewrite(self, site, ctx):
        d, _ = _direct(site)
        names, first, last = d
        unit = site.unit
        src = unit.source
        ls = src.rfind(b"\n", 0, first.start_byte) + 1
        ind = src[ls:first.start_byte].decode()
        edits = [Edit(first.start_byte, last.end_byte, _indent(FAST.format(**names), ind))]
        body = site.function.node.child_by_field_name("body")
        st = _stmts(body)
        s0 = st[0]
        ls0 = src.rfind(b"\n", 0, s0.start_byte) + 1
        ind0 = src[ls0:s0.start_byte].decode()
        edits.append(Edit.insert(ls0, ind0 + _indent(SHARED.format(**names), ind0) + "\n\n"))
        return edits

    def inverse_for(self, site, ctx):
        return DirectBlockScan()

