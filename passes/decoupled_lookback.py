"""Decoupled look-back: ``decoupled-lookback`` (optimize) and its inverse
``direct-tile-prefix`` (simplify).

A single-pass scan (Merrill & Garland 2016) needs, in each tile, the sum of every element
before the tile. With decoupled look-back each tile publishes its aggregate, then its
inclusive prefix, in a per-tile status word, and one warp walks back over its
predecessors' words, waiting only for unpublished ones. The simple form computes the
same exclusive prefix directly: one thread sums the input before the tile (O(n) per tile,
O(n^2 / tile) in all), and nothing waits on another tile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Identifier, Pass, Precondition, option
from kltrans.passes.facts import arch_number
from kltrans.syntax import Edit
from kltrans.passes.rewrite import token_text as _norm





# the look-back block, as decoupled-lookback writes it ({{ }} are the captured names)
LOOKBACK = """\
if ({warp} == 0) {{
    unsigned int {prefix} = 0u;
    if ({tile} == 0) {{
        if ({lane} == 0) {{
            {publish}({status}, {inclusive}, {aggregate});
        }}
    }} else {{
        if ({lane} == 0) {{
            {publish}({status} + {tile}, {partial}, {aggregate});
        }}
        // window of {look} predecessors per step: lane l, slot j reads the tile at
        // distance d = l + 32 j + 1 (32 consecutive words per slot, coalesced)
        long long window = (long long){tile} - 1;  // distance 1 = nearest predecessor
        while (true) {{
            unsigned long long st[{slots}];
            int first_inc;   // smallest distance index holding an inclusive prefix
            int first_zero;  // smallest distance index not yet published
            do {{
                for (int j = 0; j < {slots}; ++j) {{
                    const long long idx = window - ({lane} + 32 * j);
                    st[j] = idx >= 0
                        ? *reinterpret_cast<volatile unsigned long long*>({status} + idx)
                        : ({inclusive} << 32);  // before tile 0: an empty prefix
                }}
                first_inc = {look};
                first_zero = {look};
                for (int j = {slots} - 1; j >= 0; --j) {{
                    const unsigned int inc = __ballot_sync(0xffffffffu, (st[j] >> 32) == {inclusive});
                    const unsigned int zero = __ballot_sync(0xffffffffu, (st[j] >> 32) == 0ull);
                    if (inc) {{
                        first_inc = 32 * j + __ffs(inc) - 1;
                    }}
                    if (zero) {{
                        first_zero = 32 * j + __ffs(zero) - 1;
                    }}
                }}
                // usable once every word up to the first inclusive one is published
            }} while (first_zero < first_inc);
            unsigned int part = 0u;
            for (int j = 0; j < {slots}; ++j) {{
                part += {lane} + 32 * j <= first_inc ? (unsigned int)st[j] : 0u;
            }}
            {prefix} += __reduce_add_sync(0xffffffffu, part);
            if (first_inc < {look}) {{
                break;
            }}
            window -= {look};
        }}
        if ({lane} == 0) {{
            {publish}({status} + {tile}, {inclusive}, {prefix} + {aggregate});
        }}
    }}
    if ({lane} == 0) {{
        {shared} = {prefix};
    }}
}}"""

DIRECT = """\
if (threadIdx.x == 0) {{
    unsigned int {prefix} = 0u;
    for (size_t i = 0; i < {base}; ++i) {{
        {prefix} += (unsigned int){array}[i];
    }}
    {shared} = {prefix};
}}"""

_NAMES = ("warp", "lane", "tile", "prefix", "publish", "status", "inclusive", "partial",
          "aggregate", "slots", "look", "shared")


def _indent(text: str, ind: str) -> str:
    lines = text.split("\n")
    return "\n".join([lines[0]] + [(ind + ln) if ln else ln for ln in lines[1:]])


def _capture(unit, node) -> tuple[dict | None, str]:
    """The names of a look-back block in decoupled-lookback's form, or (None, why)."""
    t = _norm(unit.text(node))
    m = re.match(r"if \( (\w+) == 0 \) \{ unsigned int (\w+) = 0u ; if \( (\w+) == 0 \) \{ "
                 r"if \( (\w+) == 0 \) \{ (\w+) \( (\w+) , (\w+) , (\w+) \) ; \} \} else", t)
    if m is None:
        return None, ("not a look-back block `if (warp == 0) { unsigned int prefix = 0u; if "
                      "(tile == 0) { if (lane == 0) publish(status, INCLUSIVE, aggregate); } "
                      "else ...`")
    names = dict(zip(("warp", "prefix", "tile", "lane", "publish", "status", "inclusive",
                      "aggregate"), m.groups()))
    for key, pat in (("partial", r"%s \( %s \+ %s , (\w+) , %s \)" % (
            names["publish"], names["status"], names["tile"], names["aggregate"])),
                     ("slots", r"unsigned long long st \[ (\w+) \]"),
                     ("look", r"first_inc = (\w+) ;"),
                     ("shared", r"\{ (\w+) = %s ; \} \}$" % names["prefix"])):
        mm = re.search(pat, t)
        if mm is None:
            return None, f"no {key} in the look-back block"
        names[key] = mm.group(1)
    if _norm(LOOKBACK.format(**names)) != t:
        return None, ("the look-back differs from the form decoupled-lookback writes (window "
                      "of 32 x slots words, __ballot_sync/__ffs scan, __reduce_add_sync); "
                      "run reroll first if it has unroll pragmas")
    return names, ""


def _declname(unit, n):
    while n is not None and n.type in ("pointer_declarator", "reference_declarator"):
        n = n.child_by_field_name("declarator")
    return unit.text(n) if n is not None else None


def _decl_value(unit, fn_node, name):
    """Text of the initializer of local ``name`` in the kernel, or None."""
    for d in unit.nodes_of_type("init_declarator", within=fn_node):
        n = d.child_by_field_name("declarator")
        if n is not None and _declname(unit, n) == name:
            return unit.text(d.child_by_field_name("value"))
    return None


def _tile_base(unit, fn_node, tile):
    """The local holding the tile's first element: ``X = (size_t)tile * TILE``."""
    for d in unit.nodes_of_type("init_declarator", within=fn_node):
        v = _norm(unit.text(d.child_by_field_name("value")))
        if re.fullmatch(r"\( size_t \) %s \* \w+" % re.escape(tile), v):
            return unit.text(d.child_by_field_name("declarator"))
    return None


def _input(site):
    body = site.function.node.child_by_field_name("body")
    text = site.unit.text(body)
    return [p.name for p in site.function.params if p.pointer == 1 and p.const and p.name and
            re.search(r"\b%s\b" % re.escape(p.name), text)]


# ------------------------------------------------------------ simplify preconditions
def _lookback_shape(site, ctx) -> Verdict:
    names, why = _capture(site.unit, site.node)
    if names is None:
        return Verdict.no(why)
    return Verdict.yes(f"warp {names['warp']} looks back over {names['status']} "
                       f"({names['slots']} words per lane), result in {names['shared']}")


def _tile_range(site, ctx) -> Verdict:
    names, why = _capture(site.unit, site.node)
    if names is None:
        return Verdict.unknown(why)
    base = _tile_base(site.unit, site.function.node, names["tile"])
    if base is None:
        return Verdict.no(f"no tile base `X = (size_t){names['tile']} * TILE`: the tile's "
                          f"first element is not known")
    return Verdict.yes(f"tile {names['tile']} starts at element {base}")


def _single_input(site, ctx) -> Verdict:
    arrays = _input(site)
    if len(arrays) != 1:
        return Verdict.no(f"{len(arrays)} const pointer inputs ({', '.join(arrays) or 'none'}): "
                          f"the scanned array is ambiguous")
    return Verdict.yes(f"the scanned input is {arrays[0]}")


def _unsigned_sum(site, ctx) -> Verdict:
    names, why = _capture(site.unit, site.node)
    if names is None:
        return Verdict.unknown(why)
    arr = _input(site)
    body = site.unit.text(site.function.node)
    if arr and re.search(r"\(unsigned int\)\s*(__ldg\s*\(\s*)?%s\b" % re.escape(arr[0]), body):
        return Verdict.yes(f"tile values are (unsigned int){arr[0]}[...]: a wrapping sum, "
                           f"order-free")
    return Verdict.no("the tile values are not unsigned int conversions of the input: the "
                      "direct sum might combine differently")


@dataclass(frozen=True)
class DirectTilePrefix(Pass):
    """Replace a decoupled look-back by a direct sum of the input before the tile.

    Before::

        if (warp == 0) {
            unsigned int prefix = 0u;
            if (tile == 0) { ... publish(status, FLAG_INCLUSIVE, aggregate) ... }
            else { ... publish aggregate; spin over the predecessors' status words in
                   windows of 32 x SLOTS; publish the inclusive prefix ... }
            if (lane == 0) { s_prefix = prefix; }
        }

    After ``direct-tile-prefix``::

        if (threadIdx.x == 0) {
            unsigned int prefix = 0u;
            for (size_t i = 0; i < tile_base; ++i) {
                prefix += (unsigned int)in[i];
            }
            s_prefix = prefix;
        }

    The exclusive prefix of the tile is the wrapping unsigned sum of ``in[0 ..
    tile_base)``, exactly what the look-back adds up from the predecessors' aggregates.
    No tile waits on another any more; the status words are no longer written (their
    declarations and the publish helper stay, unused).

    Preconditions: lookback-shape (pipeline: the block is a look-back in the form
    ``decoupled-lookback`` writes), tile-range (layout: the tile's first element is a
    local ``X = (size_t)tile * TILE``), single-input (storage: one const pointer input),
    unsigned-sum (dtype: the values scanned are ``(unsigned int)in[...]``).

    Options: none (``inverse_for`` gives ``decoupled-lookback`` with the captured names).
    """

    name = "direct-tile-prefix"
    kind = "simplify"
    inverse = "decoupled-lookback"
    anchor = Rule(kind="if_statement", has=Rule(pattern="__reduce_add_sync($$$ARGS)"))
    preconditions = (
        Precondition("lookback-shape", "pipeline", "the block is a decoupled look-back",
                     _lookback_shape),
        Precondition("tile-range", "layout", "the tile's first element is known", _tile_range),
        Precondition("single-input", "storage", "one const pointer input", _single_input),
        Precondition("unsigned-sum", "dtype", "the scan is a wrapping unsigned sum",
                     _unsigned_sum),
    )

    def rewrite(self, site, ctx):
        names, _ = _capture(site.unit, site.node)
        base = _tile_base(site.unit, site.function.node, names["tile"])
        src = site.unit.source
        ls = src.rfind(b"\n", 0, site.node.start_byte) + 1
        ind = src[ls:site.node.start_byte].decode()
        text = DIRECT.format(prefix=names["prefix"], base=base, array=_input(site)[0],
                             shared=names["shared"])
        return [Edit.replace(site.node, _indent(text, ind))]

    def inverse_for(self, site, ctx):
        names, _ = _capture(site.unit, site.node)
        return DecoupledLookback(**{k: names[k] for k in _NAMES if k not in ("prefix", "shared")})


# ------------------------------------------------------------ optimize preconditions
def _direct(unit, node):
    t = _norm(unit.text(node))
    m = re.fullmatch(r"if \( threadIdx \. x == 0 \) \{ unsigned int (\w+) = 0u ; "
                     r"for \( size_t i = 0 ; i < (\w+) ; \+\+ i \) \{ \1 \+= \( unsigned int \) "
                     r"(\w+) \[ i \] ; \} (\w+) = \1 ; \}", t)
    return m


def _names(site):
    m = _direct(site.unit, site.node)
    p = site.pass_
    names = {k: getattr(p, k) for k in _NAMES if k not in ("prefix", "shared")}
    names.update(prefix=m.group(1), shared=m.group(4))
    if names["tile"] == "auto":
        v = _decl_value(site.unit, site.function.node, m.group(2)) or ""
        mm = re.fullmatch(r"\( size_t \) (\w+) \* \w+", _norm(v))
        names["tile"] = mm.group(1) if mm else None
    return names, m


def _direct_form(site, ctx) -> Verdict:
    m = _direct(site.unit, site.node)
    if m is None:
        return Verdict.no("not the direct prefix `if (threadIdx.x == 0) { unsigned int p = 0u; "
                          "for (size_t i = 0; i < base; ++i) { p += (unsigned int)in[i]; } "
                          "s = p; }`")
    names, _ = _names(site)
    if names["tile"] is None:
        return Verdict.no(f"{m.group(2)} is not a tile base `(size_t)tile * TILE`")
    return Verdict.yes(f"the prefix of tile {names['tile']} summed directly into {m.group(4)}")


def _support(site, ctx) -> Verdict:
    if _direct(site.unit, site.node) is None:
        return Verdict.unknown("not the direct form")
    names, _ = _names(site)
    unit = site.unit
    text = unit.text(unit.root)
    fn_text = unit.text(site.function.node)
    missing = []
    for key in ("inclusive", "partial", "slots", "look"):
        if not re.search(r"#\s*define\s+%s\b" % re.escape(names[key]), text):
            missing.append(f"macro {names[key]}")
    if not re.search(r"\b%s\s*\(\s*unsigned long long\s*\*" % re.escape(names["publish"]), text):
        missing.append(f"publish function {names['publish']}(unsigned long long*, ...)")
    for key in ("status", "warp", "lane", "aggregate"):
        if _decl_value(unit, site.function.node, names[key]) is None:
            missing.append(f"local {names[key]}")
    if missing:
        return Verdict.no("the look-back state is not declared: " + ", ".join(missing))
    del fn_text
    return Verdict.yes(f"status words {names['status']}, flags {names['partial']}/"
                       f"{names['inclusive']}, publish {names['publish']}")


def _dynamic(site, ctx) -> Verdict:
    if _direct(site.unit, site.node) is None:
        return Verdict.unknown("not the direct form")
    names, _ = _names(site)
    unit = site.unit
    v = _decl_value(unit, site.function.node, names["tile"] or "")
    if v is None:
        return Verdict.no(f"tile index {names['tile']} is not a local")
    src = re.fullmatch(r"\w+", v.strip())
    body = unit.text(site.function.node)
    if src and re.search(r"\b%s\s*=\s*(\(\s*unsigned int\s*\))?\s*atomicAdd\s*\(" %
                         re.escape(v.strip()), body):
        return Verdict.yes(f"{names['tile']} comes from an atomic tile counter: every tile "
                           f"waited on belongs to a block already running")
    return Verdict.no(f"{names['tile']} = {v.strip()} is not drawn from an atomic tile counter: "
                      f"a look-back on blockIdx.x order can deadlock when later blocks run first")


def _arch(site, ctx) -> Verdict:
    a = arch_number(ctx.arch)
    if a is not None and a < 80:
        return Verdict.no(f"{ctx.arch} has no __reduce_add_sync (sm_80+)")
    return Verdict.yes("__reduce_add_sync needs sm_80 (target not below)")


@dataclass(frozen=True)
class DecoupledLookback(Pass):
    """Replace a direct sum of the input before a tile by a decoupled look-back.

    Before::

        if (threadIdx.x == 0) {
            unsigned int prefix = 0u;
            for (size_t i = 0; i < tile_base; ++i) {
                prefix += (unsigned int)in[i];
            }
            s_prefix = prefix;
        }

    After ``decoupled-lookback``: warp ``warp`` publishes the tile's ``aggregate``
    (flag ``partial``) in ``status[tile]`` (tile 0 publishes it as inclusive), reads its
    predecessors' words ``32 * slots`` at a time (volatile 64-bit words: flag in the high
    half), waits until every word up to the nearest inclusive one is published, sums with
    ``__reduce_add_sync``, publishes its own inclusive prefix and stores the exclusive one
    in ``s_prefix`` (see LOOKBACK in the module).

    Preconditions: direct-form (pipeline: the block is the direct sum above, ``tile_base``
    a local ``(size_t)tile * TILE``), lookback-state (storage: the status pointer, the
    publish function, the two flag macros, the slots and window macros, and the locals
    warp, lane, aggregate (the tile's total) are declared: the pass reuses them),
    dynamic-tile-order (pipeline: the tile index comes from an atomic tile counter, so a
    tile only waits on tiles of running blocks: no deadlock), reduce-add-arch (hardware:
    sm_80+ for __reduce_add_sync). The aggregate being the tile's total is the caller's
    claim (the gate checks it).

    Options: the names ``warp``, ``lane``, ``tile`` (auto: from the tile base),
    ``aggregate``, ``publish``, ``status``, ``inclusive``, ``partial`` (the flag macros),
    ``slots``, ``look`` (the macros of words per lane and per step).
    """

    name = "decoupled-lookback"
    kind = "optimize"
    inverse = "direct-tile-prefix"
    anchor = Rule(kind="if_statement", has=Rule(pattern="threadIdx.x == 0"))
    preconditions = (
        Precondition("direct-form", "pipeline", "the block sums the input before the tile",
                     _direct_form),
        Precondition("lookback-state", "storage", "the look-back state is declared", _support),
        Precondition("dynamic-tile-order", "pipeline",
                     "tiles are handed out by an atomic counter", _dynamic),
        Precondition("reduce-add-arch", "hardware", "sm_80+", _arch),
    )

    warp: str = option("warp", Identifier(words=()), "warp index local")
    lane: str = option("lane", Identifier(words=()), "lane index local")
    tile: str = option("auto", Identifier(), "tile index local")
    aggregate: str = option("aggregate", Identifier(words=()), "the tile's total")
    publish: str = option("publish", Identifier(words=()), "status-word store function")
    status: str = option("status", Identifier(words=()), "status words (one per tile)")
    inclusive: str = option("FLAG_INCLUSIVE", Identifier(words=()), "inclusive flag macro")
    partial: str = option("FLAG_AGGREGATE", Identifier(words=()), "aggregate flag macro")
    slots: str = option("LOOK_SLOTS", Identifier(words=()), "words per lane per step macro")
    look: str = option("LOOK", Identifier(words=()), "words per step macro (32 * slots)")

    def rewrite(self, site, ctx):
        names, _ = _names(site)
        src = site.unit.source
        ls = src.rfind(b"\n", 0, site.node.start_byte) + 1
        ind = src[ls:site.node.start_byte].decode()
        return [Edit.replace(site.node, _indent(LOOKBACK.format(**names), ind))]

    def inverse_for(self, site, ctx):
        return DirectTilePrefix()
