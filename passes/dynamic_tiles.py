"""Dynamic tile order: ``dynamic-tiles`` (optimize) and its inverse ``static-tiles``
(simplify).

A kernel whose blocks depend on earlier tiles (a single-pass scan's look-back) must not
wait on a tile whose block has not started: blocks are not scheduled in blockIdx order.
The usual fix hands out tiles in start order from a global counter: thread 0 takes the
next tile with ``atomicAdd`` and broadcasts it through shared memory. Once nothing waits
on another tile, the tile can simply be ``blockIdx.x``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Choice, Identifier, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.rewrite import token_text as _norm

_TYPES = ("unsigned int", "int", "unsigned", "uint32_t")




def _nxt(n):
    n = n.next_named_sibling
    while n is not None and n.type == "comment":
        n = n.next_named_sibling
    return n


def _prv(n):
    n = n.prev_named_sibling
    while n is not None and n.type == "comment":
        n = n.prev_named_sibling
    return n


_TAKE = re.compile(r"if \( threadIdx \. x == 0 \) \{ (\w+) = (?:\( (unsigned int|int|unsigned) "
                   r"\) )?atomicAdd \( (\w+) , (1ull|1u|1ULL|1U|1) \) ; \}$")


def _shape(site):
    """(names, why): the counter take, the barrier and the broadcast read."""
    unit, node = site.unit, site.node
    m = _TAKE.match(_norm(unit.text(node)))
    if m is None:
        return None, "not `if (threadIdx.x == 0) { s = atomicAdd(counter, 1); }`"
    shared, cast, counter, one = m.groups()
    if node.parent is None or node.parent.parent is None or \
            node.parent.parent.type != "function_definition":
        return None, "the tile take is not at the top level of the kernel body"
    sync = _nxt(node)
    if sync is None or _norm(unit.text(sync)) != "__syncthreads ( ) ;":
        return None, "the take is not followed by __syncthreads()"
    read = _nxt(sync)
    mm = re.fullmatch(r"const (unsigned int|int|unsigned|uint32_t) (\w+) = %s ;" % shared,
                      _norm(unit.text(read))) if read is not None else None
    if mm is None:
        return None, f"the barrier is not followed by `const unsigned int tile = {shared};`"
    decl = None
    body = node.parent
    for st in body.named_children:
        if st.type == "declaration" and re.fullmatch(r"__shared__ (unsigned int|int|unsigned) %s ;"
                                                     % shared, _norm(unit.text(st))):
            decl = st
    if decl is None:
        return None, f"{shared} is not a scalar __shared__ declaration of the kernel body"
    return {"shared": shared, "cast": cast or "none", "counter": counter, "one": one,
            "type": mm.group(1), "tile": mm.group(2), "sync": sync, "read": read,
            "decl": decl}, ""


def _counter_take(site, ctx) -> Verdict:
    s, why = _shape(site)
    if s is None:
        return Verdict.no(why)
    unit = site.unit
    text = unit.text(site.function.node)
    uses = len(re.findall(r"\b%s\b" % s["shared"], text))
    if uses != 3:
        return Verdict.no(f"{s['shared']} is used elsewhere ({uses - 3} more): it is not only "
                          f"the tile broadcast")
    first = s["decl"].parent.named_children
    for st in first:
        if st.start_byte >= site.node.start_byte:
            break
        if st.type not in ("declaration", "comment"):
            return Verdict.no("statements other than declarations run before the barrier: "
                              "removing it could reorder their shared-memory effects")
    return Verdict.yes(f"thread 0 takes tile {s['tile']} from {s['counter']} and broadcasts "
                       f"it through {s['shared']}")


def _no_wait(site, ctx) -> Verdict:
    unit = site.unit
    fns = [site.function] + [f for f in unit.device_functions()
                             if re.search(r"\b%s\s*\(" % re.escape(f.name),
                                          unit.text(site.function.node))]
    for f in fns:
        for loop in unit.walk(f.node):
            if loop.type in ("while_statement", "do_statement", "for_statement") and \
                    "volatile" in unit.text(loop):
                return Verdict.no(f"{f.name} has a loop over volatile memory (line "
                                  f"{loop.start_point[0] + 1}): a block may wait on another "
                                  f"tile, which needs tiles in block start order")
    return Verdict.yes("no loop waits on memory written by other blocks")


def _counter_only(site, ctx) -> Verdict:
    s, why = _shape(site)
    if s is None:
        return Verdict.unknown(why)
    text = site.unit.text(site.function.node)
    n = len(re.findall(r"\b%s\b" % re.escape(s["counter"]), text))
    if n > 2:
        return Verdict.no(f"{s['counter']} is used {n} times: something else reads the "
                          f"counter (e.g. a last-block test)")
    return Verdict.yes(f"{s['counter']} serves only the tile take")


@dataclass(frozen=True)
class StaticTiles(Pass):
    """Replace a tile drawn from an atomic counter by ``blockIdx.x``.

    Before::

        __shared__ unsigned int s_tile;
        ...
        if (threadIdx.x == 0) {
            s_tile = (unsigned int)atomicAdd(counter, 1ull);
        }
        __syncthreads();
        const unsigned int tile = s_tile;

    After ``static-tiles``::

        ...
        const unsigned int tile = blockIdx.x;

    With the counter at zero at launch both hand each block a distinct tile of
    0 .. gridDim.x - 1; the counter only matters when a block waits on others.

    Preconditions: counter-take (pipeline: the take, the barrier and the read in this
    form, at the top level of the kernel, only declarations before them, the shared
    variable used for nothing else), no-inter-tile-wait (pipeline: no loop in the kernel
    or its device functions reads volatile memory: nothing waits on another tile),
    counter-only (storage: the counter is used only by this take).

    Options: none (``inverse_for`` gives ``dynamic-tiles`` with the shared name, counter,
    cast, increment literal and declaration place).
    """

    name = "static-tiles"
    kind = "simplify"
    inverse = "dynamic-tiles"
    anchor = Rule(kind="if_statement", has=Rule(pattern="atomicAdd($$$ARGS)"))
    preconditions = (
        Precondition("counter-take", "pipeline", "a tile taken from a counter", _counter_take),
        Precondition("no-inter-tile-wait", "pipeline", "no block waits on another", _no_wait),
        Precondition("counter-only", "storage", "the counter serves only the take",
                     _counter_only),
    )

    def rewrite(self, site, ctx):
        s, _ = _shape(site)
        src = site.unit.source
        decl = s["decl"]
        ds = src.rfind(b"\n", 0, decl.start_byte)
        edits = [Edit.delete(ds, decl.end_byte)]
        edits.append(Edit.delete(site.node.start_byte, s["read"].start_byte))
        rd = s["read"]
        val = next(d for d in rd.children_by_field_name("declarator")).child_by_field_name("value")
        edits.append(Edit.replace(val, "blockIdx.x"))
        return edits

    def inverse_for(self, site, ctx):
        s, _ = _shape(site)
        return DynamicTiles(shared=s["shared"], counter=s["counter"], cast=s["cast"],
                            one=s["one"])



_PLAIN = re.compile(r"[A-Za-z0-9_.+\-*/%]+")


def _spec(p) -> str:
    """``Pass.spec`` with values a pipeline cannot read bare (spaces, parentheses) quoted,
    so that the spec parses back (the lineage re-reads inverse specs)."""
    opts = p.options()
    if not opts:
        return p.name
    vals = []
    for o in opts:
        v = getattr(p, o.field)
        s = ("true" if v else "false") if isinstance(v, bool) else str(v)
        if not _PLAIN.fullmatch(s):
            s = f"'{s}'" if "'" not in s else f'"{s}"'
        vals.append(f"{o.name}={s}")
    return f"{p.name}{{{','.join(vals)}}}"

# -------------------------------------------------------------------------- optimize
def _static(site):
    m = re.fullmatch(r"const (unsigned int|int|unsigned|uint32_t) (\w+) = blockIdx \. x ;",
                     _norm(site.unit.text(site.node)))
    return m


def _block_tile(site, ctx) -> Verdict:
    m = _static(site)
    if m is None:
        return Verdict.no("not `const unsigned int tile = blockIdx.x;`")
    if site.node.parent is None or site.node.parent.parent is None or \
            site.node.parent.parent.type != "function_definition":
        return Verdict.no("the tile index is not declared at the top level of the kernel body "
                          "(the barrier the pass adds must be reached by every thread)")
    return Verdict.yes(f"tile {m.group(2)} = blockIdx.x at the top level")


def _local_counters(unit, fn) -> dict:
    """name -> byte offset of each local ``unsigned int*`` / ``unsigned long long*``
    declared with a value in ``fn`` (the first of a name), read once per function."""
    memo = unit.memo("dynamic_tiles_counters", lambda u: {})
    if fn.node.id not in memo:
        found = {}
        for d in unit.nodes_of_type("init_declarator", within=fn.node):
            t = unit.text(d)
            m = re.match(r"\*\s*([A-Za-z_]\w*)\s*=", t)
            if m and m.group(1) not in found and \
                    re.search(r"unsigned (long long|int)\s*$", unit.text(d.parent).split(t)[0]):
                found[m.group(1)] = d.start_byte
        memo[fn.node.id] = found
    return memo[fn.node.id]


def _counter_decl(site, ctx) -> Verdict:
    p = site.pass_
    unit = site.unit
    fn = site.function
    par = next((q for q in fn.params if q.name == p.counter), None)
    if par is not None and par.pointer == 1 and re.search(r"unsigned (long long|int)", par.type):
        return Verdict.yes(f"counter {p.counter} is a parameter {par.type}")
    at = _local_counters(unit, fn).get(p.counter)
    if at is not None and at <= site.node.start_byte:
        return Verdict.yes(f"counter {p.counter} is a local pointer declared before")
    return Verdict.no(f"no unsigned long long* / unsigned int* counter {p.counter} declared "
                      f"before the tile index (it must be zero at launch)")


def _shared_free(site, ctx) -> Verdict:
    p = site.pass_
    if re.search(r"\b%s\b" % re.escape(p.shared), site.unit.text(site.function.node)):
        return Verdict.no(f"{p.shared} is already a name in {site.function.name}")
    return Verdict.yes(f"{p.shared} is a fresh name")


@dataclass(frozen=True)
class DynamicTiles(Pass):
    """Draw the block's tile from an atomic counter instead of ``blockIdx.x``.

    Before::

        const unsigned int tile = blockIdx.x;

    After ``dynamic-tiles{counter=counter}``::

        __shared__ unsigned int s_tile;          // first statement of the kernel
        ...
        if (threadIdx.x == 0) {
            s_tile = (unsigned int)atomicAdd(counter, 1ull);
        }
        __syncthreads();
        const unsigned int tile = s_tile;

    Tiles are then handed out in block start order, so a tile only waits on tiles of
    blocks that already run (needed by a look-back). The counter must be zero at launch
    (a launcher duty the pass cannot check: the kernel's scratch is zeroed).

    Preconditions: block-tile (layout: a top-level ``const unsigned int tile =
    blockIdx.x;``, so the added barrier is reached by every thread), counter-declared
    (storage: ``counter`` is an ``unsigned long long*`` or ``unsigned int*`` parameter or
    local declared before), shared-name-free (storage: the shared name is unused).

    Options: ``counter`` (name of the counter pointer, default ``counter``), ``shared``
    (default ``s_tile``), ``cast`` (``unsigned int``/``int``/``unsigned``/``none``),
    ``one`` (the increment literal, ``1ull`` ...).
    """

    name = "dynamic-tiles"
    kind = "optimize"
    inverse = "static-tiles"
    anchor = Rule(kind="declaration", has=Rule(pattern="blockIdx.x"))
    preconditions = (
        Precondition("block-tile", "layout", "the tile is blockIdx.x at top level", _block_tile),
        Precondition("counter-declared", "storage", "a counter pointer is declared",
                     _counter_decl),
        Precondition("shared-name-free", "storage", "the shared name is fresh", _shared_free),
    )

    counter: str = option("counter", Identifier(words=()), "the counter pointer")
    shared: str = option("s_tile", Identifier(words=()), "the shared broadcast variable")
    cast: str = option("unsigned int", Choice("unsigned int", "int", "unsigned", "none"),
                       "cast of the atomicAdd result")
    one: str = option("1ull", Choice("1ull", "1u", "1", "1ULL", "1U"), "increment literal")

    def rewrite(self, site, ctx):
        m = _static(site)
        src = site.unit.source
        ls = src.rfind(b"\n", 0, site.node.start_byte) + 1
        ind = src[ls:site.node.start_byte].decode()
        cast = "" if self.cast == "none" else f"({self.cast})"
        text = (f"if (threadIdx.x == 0) {{\n{ind}    {self.shared} = {cast}atomicAdd("
                f"{self.counter}, {self.one});\n{ind}}}\n{ind}__syncthreads();\n{ind}"
                f"const {m.group(1)} {m.group(2)} = {self.shared};")
        body = site.function.node.child_by_field_name("body")
        first = body.named_children[0] if body.named_children else None
        edits = [Edit.replace(site.node, text)]
        at = body.start_byte + 1
        edits.insert(0, Edit.insert(at, f"\n{ind}__shared__ unsigned int {self.shared};"))
        del first
        return edits

    def spec(self) -> str:
        return _spec(self)

    def inverse_for(self, site, ctx):
        return StaticTiles()
