"""Shared-memory staging of data the whole block reads: ``stage-shared`` (optimize) and its
inverse ``unstage-shared`` (simplify).

When every warp of a block reads the same stretch of a global array (the vector of a
matrix-vector product, a tile of a matrix product), the block can copy it into shared
memory once, cooperatively and coalesced, and read it from there::

    for (int j = threadIdx.x; j < len; j += blockDim.x)
        x_s[j] = x[base + j];
    __syncthreads();
    if (row < rows)
        for (int i = lane; i < len; i += 32)
            acc += a[i] * x_s[i];          // was x[base + i]
    __syncthreads();                       // in a loop: before the next copy

``unstage-shared`` reads any staged array back to what it holds: the kernel model's
:func:`kltrans.model.copies.shared_copy` finds the array's stores ``S[w] = E``, and
:func:`kltrans.model.copies.read_value` writes each read ``S[r]`` as ``E`` at the index
``r`` (one store: solved for ``w``'s variables in any spelling, ``v + c``, a row-major pair
``v * M + u``; a tile and its halo: as the thread that wrote the element computed it), so
1-D and 2-D tiles, halos, loops and single statements, macros and typedefs are one case.
The copy and the array go; the block's barriers go with the kernel's last shared array.
Both passes check on the block machine (:func:`kltrans.model.equivalence.same_model`)
that a block stores the same: the model's facts say what a read means, the machine that
every read falls inside what was copied.
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis.affine import resolve_name, strip_parens, thread_dependent
from kltrans.analysis.loops import loop_of
from kltrans.analysis.smem import shared_footprint, type_size
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.accesses import accesses
from kltrans.model.copies import read_value, shared_copy, shared_decl, subscripts
from kltrans.model.effects import draws
from kltrans.model.equivalence import same_model
from kltrans.model.geometry import role_of
from kltrans.model.ops import operations
from kltrans.passes import Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.passes.launch_facts import STATIC_SMEM, block_dims, value_of
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import (fresh_name, indent_of, indent_step, insert_lines_before,
                                    remove_described, remove_node, render, statements)
from kltrans.syntax import Edit
from kltrans.syntax.edits import apply_edits

_COPY = """\
for (int {{ j }} = threadIdx.x; {{ j }} < {{ n }}; {{ j }} += blockDim.x)
{{ step }}{{ s }}[{{ j }}] = {{ g }}[{{ at }}];
__syncthreads();"""


def _same_results(site, ctx) -> Verdict:
    try:
        new = apply_edits(site.unit, site.pass_.rewrite(site, ctx))
    except SkipSite as e:
        return Verdict.no(str(e))
    # the sites of one kernel's staged arrays share one rewrite: one machine run
    return site.unit.memo(f"stage-shared.same.{hash(bytes(new.source))}",
                          lambda u: _machine(site, new))


#: block threads x the largest drawn size above which the block machine runs at SMALL
#: sizes instead: every thread loops over a size (a k loop of a matrix product)
_WORK = 1_500_000
SMALL = 45   # a tile of 32 and a partial one (two of 16 and a partial one)


def _machine(site, new) -> Verdict:
    # a 1-D block: the block machine at drawn sizes alone (the grid's small sizes may not
    # reach a second staged stretch); a 2-D one is for the grid machine
    dims, _ = block_dims(site.unit, site.function)
    threads = dims[0] * dims[1] * dims[2] if dims else 256
    sizes = {k: v for k, v in draws(site.function, threads, 0, 1)[0].items() if "." not in k}
    fixed = {}
    if dims is not None and dims[1:] != (1, 1):
        # the grid machine runs every block: sizes of a tile and a partial one per side
        fixed = dict.fromkeys(sizes, max(dims) + 3)
    elif sizes and threads * max(sizes.values()) > _WORK:
        fixed = dict.fromkeys(sizes, SMALL)
    ok, why = same_model(site.unit, new, site.function.name, fixed=fixed,
                         same_kinds=dims is None or dims[1:] != (1, 1))
    return Verdict.yes(f"a block stores the same (block machine): {why}") if ok else \
        Verdict.no(f"on the block machine: {why}")


# ------------------------------------------------------------------ unstage-shared
def _copy(site, decl=None):
    decl = decl or site.node
    return site.unit.memo(f"unstage-shared.{decl.start_byte}",
                          lambda u: shared_copy(u, site.function, decl))


def _values(site, decl=None) -> "list | str":
    decl = decl or site.node
    return site.unit.memo(f"unstage-shared.values.{decl.start_byte}",
                          lambda u: _read_values(site, decl))


def _read_values(site, decl) -> "list | str":
    c = _copy(site, decl)
    if isinstance(c, str):
        return c
    dims, _ = block_dims(site.unit, site.function)
    block = dict(zip(("threadIdx.x", "threadIdx.y", "threadIdx.z"), dims)) if dims else {}
    out = []
    for r in c.reads:
        v, why = read_value(site.unit, site.function, c, r, block)
        if v is None:
            return f"`{site.unit.text(r)}`: {why}"
        out.append((r, v))
    return out if out else f"{c.array} is never read"


def _barriers(unit, fn) -> list:
    """The block barrier statements of ``fn``."""
    out = []
    for op in operations(unit):
        st = op.node.parent
        if op.name == "barrier.block" and op.function == fn.name and \
                st is not None and st.type == "expression_statement" and \
                st.parent is not None and st.parent.type == "compound_statement":
            out.append(st)
    return out


def _every_copy(site) -> list:
    """The kernel's shared arrays when every one is a copy whose reads all have values
    (they go together, and the barriers with them); else []."""
    unit, fn = site.unit, site.function
    decls = [d for d in unit.nodes_of_type("declaration", within=fn.node)
             if shared_decl(unit, d) is not None]
    names = {shared_decl(unit, d)[0] for d in decls}
    if any(a.space == "shared" and a.base not in names for a in accesses(unit, fn)) or \
            any(isinstance(_values(site, d), str) for d in decls):
        return []
    return decls


def unstage_edits(site) -> list[Edit]:
    unit, fn = site.unit, site.function
    every = _every_copy(site)
    edits = []
    for decl in every or [site.node]:
        vals, c = _values(site, decl), _copy(site, decl)
        if isinstance(vals, str):
            raise SkipSite(vals)
        edits += [Edit(r.start_byte, r.end_byte, v) for r, v in vals]
        edits += [remove_described(unit, h) for h in c.holders or (c.holder,)]
        edits.append(remove_described(unit, c.decl))
    if every:   # no shared memory left: the barriers order nothing now
        edits += [remove_node(unit, b) for b in _barriers(unit, fn)]
    return edits


def _is_copy(site, ctx) -> Verdict:
    c = _copy(site)
    if isinstance(c, str):
        return Verdict.no(c)
    n = len(c.stores)
    return Verdict.yes(f"{c.array} holds `{site.unit.text(c.value)}`" +
                       (f" and {n - 1} more store(s)" if n > 1 else " (one store)"))


def _reads(site, ctx) -> Verdict:
    vals = _values(site)
    if isinstance(vals, str):
        return Verdict.no(vals)
    return Verdict.yes(f"{len(vals)} read(s), each a value of the reading thread")


UNSTAGE_PRECONDITIONS = (
    Precondition("shared-copy", "storage",
                 "a static __shared__ array written only by plain stores `S[w] = E` of pure "
                 "values (kernel model)", _is_copy),
    Precondition("read-values", "layout",
                 "every read `S[r]` is `E` at the index r: the store's index solved for its "
                 "variables, E's other names the same in every thread (kernel model)", _reads,
                 needs=("shared-copy",)),
    Precondition("same-results", "storage",
                 "a block stores the same without the copy (block machine)", _same_results,
                 needs=("read-values",)),
)


@dataclass(frozen=True)
class UnstageShared(Pass):
    """Read staged data from where it came from: a shared copy's reads become the value
    copied, the copy and its array go (the barriers with the kernel's last shared array).

    Before::

        __shared__ float xs[1024];
        for (int j = threadIdx.x; j < len; j += blockDim.x)
            xs[j] = x[base + j];
        __syncthreads();
        acc += a[i] * xs[i];

    After ``unstage-shared``::

        acc += a[i] * x[base + i];

    Preconditions: shared-copy (storage), read-values (layout), same-results (storage: the
    block machine).

    Options: none.
    """

    name = "unstage-shared"
    kind = "simplify"
    inverse = "stage-shared"
    drop_dead = True   # locals only the copy read (the tile's own indices)
    anchor = Rule(kind="declaration", regex=r"\b__shared__\b", inside_kernel=True)
    preconditions = UNSTAGE_PRECONDITIONS

    def rewrite(self, site, ctx):
        return unstage_edits(site)

    def inverse_for(self, site, ctx):
        c = _copy(site)
        if isinstance(c, str) or len(c.dims) != 1:
            return StageShared()
        src, _ = subscripts(strip_parens(c.value))
        g = site.unit.text(src) if src.type == "identifier" else "auto"
        k = value_of(site.unit, c.dims[0])
        size = c.dims[0] if Identifier().contains(c.dims[0]) else k if k else "auto"
        return StageShared(array=g, shared=c.array, size=size)


# -------------------------------------------------------------------- stage-shared
@dataclass(frozen=True)
class _Plan:
    loop: object      # the reading loop (analysis.loops.Loop)
    array: str        # the global array
    elem: str
    offset: str       # u in G[u + v], "" when none
    reads: tuple      # the subscripts G[u + v]
    bound: str        # n of v < n
    size: "tuple[str, int] | None"   # K as written and its value: n <= K
    host: object      # the statement the copy goes before
    in_loop: bool     # the host is in a loop body: a barrier after it too


def _offset(unit, idx, var) -> "tuple[str, object] | None":
    """``(u, its node)`` when ``idx`` is ``u + var`` or ``var + u`` (``("", None)`` for
    ``var``)."""
    idx = strip_parens(idx)
    if idx.type == "identifier" and unit.text(idx) == var:
        return "", None
    if idx.type == "binary_expression" and unit.text(idx.child_by_field_name("operator")) == "+":
        l, r = idx.child_by_field_name("left"), idx.child_by_field_name("right")
        for a, b in ((l, r), (r, l)):
            if strip_parens(a).type == "identifier" and unit.text(strip_parens(a)) == var and \
                    var not in {unit.text(x) for x in unit.walk(b) if x.type == "identifier"}:
                return unit.text(b), b
    return None


def _size(unit, bound, want) -> "tuple[str, int] | None":
    """K (text, value) with ``bound <= K``: the bound itself, or the constant side of the
    ``min`` that initializes it (a local the loop does not assign); ``want``: K asked for."""
    node, limits = strip_parens(bound), []
    v = value_of(unit, unit.text(node))
    if v is not None:
        limits.append((unit.text(node), v))
    elif node.type == "identifier":
        b = resolve_name(unit, node, unit.text(node))
        init = strip_parens(b.value) if b.kind == "local" and b.value is not None else None
        if init is not None and init.type == "call_expression" and \
                unit.text(init.child_by_field_name("function")) in ("min", "::min", "std::min"):
            for a in init.child_by_field_name("arguments").named_children:
                k = value_of(unit, unit.text(a))
                if k is not None:
                    limits.append((unit.text(a), k))
    if not limits:
        return None
    if want == "auto":
        return min(limits, key=lambda t: t[1])
    k = value_of(unit, str(want))
    return (str(want), k) if k is not None and k >= min(t[1] for t in limits) else None


def _host(unit, fn, loop_node):
    """(the statement the copy goes before, whether it sits in a loop body), or None: the
    nearest enclosing statement list every thread of the block runs together."""
    node = loop_node
    while node.parent is not None:
        p = node.parent
        if p.type == "compound_statement":
            owner = p.parent
            if owner is fn.node or owner.type == "function_definition":
                return node, False
            if owner.type in ("for_statement", "while_statement", "do_statement") and not any(
                    thread_dependent(unit, owner.child_by_field_name(k))
                    for k in ("initializer", "condition", "update")
                    if owner.child_by_field_name(k) is not None):
                return node, True
        node = p
    return None


def plan(site, opts) -> "_Plan | str":
    unit, fn = site.unit, site.function
    lp = loop_of(unit, site.node)
    if lp is None or lp.kind != "for" or lp.var is None or lp.cond_op != "<" or \
            lp.bound_node is None or lp.step_text is None or not lp.step_text.startswith("+="):
        return "not a loop `for (v = start; v < n; v += step)`"
    start = strip_parens(lp.init_node) if lp.init_node is not None else None
    role = role_of(unit, start) if start is not None else None
    if start is None or not (unit.text(start) == "0" or
                             (role is not None and role.kind in ("thread", "lane"))):
        return f"{lp.var} does not start at 0 or at a thread's index in the block"
    written = {a.base for a in accesses(unit, fn) if a.mode != "read"}
    groups: dict = {}
    for a in accesses(unit, fn):
        if a.space != "global" or a.mode != "read" or a.base in written or \
                a.node.type != "subscript_expression" or \
                not (site.node.start_byte <= a.node.start_byte < site.node.end_byte):
            continue
        g, idx = subscripts(a.node)
        # the array as named here must point to the same place in every thread
        if g.type != "identifier" or thread_dependent(unit, g):
            continue
        got = _offset(unit, idx[0], lp.var) if len(idx) == 1 else None
        if got is None or (opts.array != "auto" and unit.text(g) != opts.array):
            continue
        u, u_node = got
        if u_node is None or not thread_dependent(unit, u_node):
            groups.setdefault((unit.text(g), u, a.elem_type), []).append(a.node)
    if not groups:
        return f"no read-only global array read at `u + {lp.var}` with u the same for every thread"
    (g, u, elem), reads = next(iter(groups.items()))
    b = resolve_name(unit, subscripts(reads[0])[0], g)
    if b.kind == "param" and b.decl is not None and b.decl.child_by_field_name("type"):
        elem = unit.text(b.decl.child_by_field_name("type"))   # as the kernel spells it
    got = _host(unit, fn, site.node)
    if got is None:
        return "no statement list around the loop that every thread runs"
    host, in_loop = got
    return _Plan(lp, g, elem or "float", u, tuple(reads), unit.text(lp.bound_node),
                 _size(unit, lp.bound_node, opts.size), host, in_loop)


def stage_edits(site, opts) -> list[Edit]:
    unit, fn = site.unit, site.function
    p = plan(site, opts)
    if isinstance(p, str) or p.size is None:
        raise SkipSite(p if isinstance(p, str) else "the staged size is not known")
    s = opts.shared if opts.shared != "auto" else \
        fresh_name(unit, fn.node, [f"{p.array}_s", f"s_{p.array}", "staged"])
    j = fresh_name(unit, fn.node, ["j", "jj", "idx_s"])
    at = f"{p.offset} + {j}" if p.offset else j
    first = statements(fn.body)[0]
    edits = [insert_lines_before(unit, first, f"__shared__ {p.elem} {s}[{p.size[0]}];"),
             insert_lines_before(unit, p.host, render(
                 _COPY, "", j=j, n=p.bound, s=s, g=p.array, at=at,
                 step=indent_step(unit, first)))]
    if p.in_loop:
        edits.append(Edit.insert(p.host.end_byte,
                                 "\n" + indent_of(unit, p.host.start_byte) + "__syncthreads();"))
    edits += [Edit(r.start_byte, r.end_byte, f"{s}[{p.loop.var}]") for r in p.reads]
    return edits


def _is_loop(site, ctx) -> Verdict:
    p = plan(site, site.pass_)
    return Verdict.no(p) if isinstance(p, str) else \
        Verdict.yes(f"{p.array}[{p.offset or '0'} + {p.loop.var}] for {p.loop.var} < {p.bound}")


def _fits(site, ctx) -> Verdict:
    p = plan(site, site.pass_)
    if isinstance(p, str):
        return Verdict.no(p)
    if p.size is None:
        return Verdict.no(f"the bound `{p.bound}` is not at most a known size"
                          + ("" if site.pass_.size == "auto" else f" of {site.pass_.size}"))
    fp = shared_footprint(site.unit, site.function)
    if fp.static_bytes is None:
        return Verdict.unknown(f"the kernel's static shared memory: {fp.reason}")
    size = type_size(site.unit, p.elem)
    if size is None:
        return Verdict.unknown(f"sizeof({p.elem}) is not known")
    need = p.size[1] * size + fp.static_bytes
    if need > STATIC_SMEM:
        return Verdict.no(f"{need} bytes of static shared memory is over {STATIC_SMEM}")
    return Verdict.yes(f"{p.bound} <= {p.size[0]}; {need} bytes of static shared memory")


def _every_thread(site, ctx) -> Verdict:
    p = plan(site, site.pass_)
    if isinstance(p, str):
        return Verdict.no(p)
    dims, why = block_dims(site.unit, site.function)
    if dims is None:
        return Verdict.unknown(why)
    if dims[1:] != (1, 1):
        return Verdict.no(f"block {dims}: the copy strides a 1-D block")
    for x in site.unit.walk(site.function.body):
        if x.type == "return_statement" and x.start_byte < p.host.start_byte:
            return Verdict.no("a thread may return before the copy: every thread must "
                              "reach its barrier")
    return Verdict.yes("the copy runs where every thread of the block runs")


PRECONDITIONS = (
    Precondition("uniform-read", "layout",
                 "a loop `for (v = 0 or thread index; v < n; v += s)` reads a read-only global "
                 "array at `u + v`, u the same for every thread", _is_loop),
    Precondition("fits", "hardware",
                 "n is at most K, and K elements fit the static shared memory", _fits,
                 needs=("uniform-read",)),
    Precondition("every-thread", "pipeline",
                 "every thread of a 1-D block reaches the copy and its barrier", _every_thread,
                 needs=("uniform-read",)),
    Precondition("same-results", "storage",
                 "a block stores the same with the copy (block machine)", _same_results,
                 needs=("fits", "every-thread")),
)


@dataclass(frozen=True)
class StageShared(Pass):
    """Stage a stretch of a global array the whole block reads in shared memory: copied
    once, coalesced, by every thread, then read from there.

    Before::

        for (int base = 0; base < cols; base += 1024) {
            int len = min(1024, cols - base);
            if (row < rows)
                for (int i = lane; i < len; i += 32)
                    acc += a[i] * x[base + i];
        }

    After ``stage-shared``::

        __shared__ float x_s[1024];
        for (int base = 0; base < cols; base += 1024) {
            int len = min(1024, cols - base);
            for (int j = threadIdx.x; j < len; j += blockDim.x)
                x_s[j] = x[base + j];
            __syncthreads();
            if (row < rows)
                for (int i = lane; i < len; i += 32)
                    acc += a[i] * x_s[i];
            __syncthreads();
        }

    Preconditions: uniform-read (layout), fits (hardware: static shared memory), every-thread
    (pipeline: the barrier), same-results (storage: the block machine).

    Options: ``array`` (the global array; auto: the first that qualifies), ``shared`` (the
    shared array's name), ``size`` (K: auto reads it off the loop's bound).
    """

    name = "stage-shared"
    kind = "optimize"
    inverse = "unstage-shared"
    anchor = Rule(kind="for_statement", inside_kernel=True)
    preconditions = PRECONDITIONS

    array: str = option("auto", Identifier(), "the global array to stage")
    shared: str = option("auto", Identifier(), "the shared array's name")
    size: str = option("auto", OneOf(IntRange(1, 1 << 16), Identifier()),
                       "the staged elements: a number or a constant's name")

    def rewrite(self, site, ctx):
        return stage_edits(site, self)

    def inverse_for(self, site, ctx):
        return UnstageShared()
