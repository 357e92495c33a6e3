"""A row cached in shared memory by the threads that read it: ``shared-cache`` (optimize) and
``drop-shared-cache`` (simplify).

A kernel that sweeps the same elements several times, each thread the same elements in
every sweep (block- or grid-stride loops with one iteration space), can keep what the first
sweep reads in dynamic shared memory and read it from there in the later sweeps; no barrier
is needed, since a thread reads back only what it stored itself::

    for (int j = tid; j < cols; j += blockDim.x)            for (...) {
        m = fmaxf(m, row[j]);                                   const float v = row[j];
    ...                                                         cache[j] = v;
    for (int j = tid; j < cols; j += blockDim.x)      <->       m = fmaxf(m, v); }
        out[j] = expf(row[j] - m) / s;                      ...
                                                            for (...)
                                                                out[j] = expf(cache[j] - m) / s;

``drop-shared-cache`` reads any shared array the kernel model reads as such a private cache
(:func:`kltrans.model.scratch.private_cache`: a static array or an ``extern __shared__``
buffer behind a cast pointer, stores in place included) and writes each read as the value
its thread stored (:func:`kltrans.model.scratch.cached_values`); the stores and the array
go, and the launch's dynamic shared memory with the kernel's last extern buffer.
``shared-cache`` caches one global array read by a later sweep at the same element; the
launch contract's ``smem`` becomes the row's bytes. Both check on the block machine that a
block stores the same.
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis import loop_of
from kltrans.analysis.affine import Affine
from kltrans.analysis.smem import type_size
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.accesses import accesses
from kltrans.model.effects import draws
from kltrans.model.equivalence import same_model
from kltrans.model.loops import loop_fact
from kltrans.model.scratch import PRIVATE_KINDS, cached_values, operand, private_cache
from kltrans.passes import Identifier, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import (declared_names, fresh_name, indent_of, indent_step,
                                    insert_lines_before, remove_described, statements)
from kltrans.syntax import Edit
from kltrans.syntax.edits import apply_edits


def _same_results(site, ctx) -> Verdict:
    try:
        new = apply_edits(site.unit, site.pass_.rewrite(site, ctx))
    except SkipSite as e:
        return Verdict.no(str(e))
    sizes = {k: v for k, v in draws(site.function, 256, 0, 1)[0].items() if "." not in k}
    fixed = dict.fromkeys(sizes, 300) if sizes else {}   # rows a block strides more than once
    ok, why = same_model(site.unit, new, site.function.name, fixed=fixed,
                         binds=ctx.bindings)
    return Verdict.yes(f"a block stores the same (block machine): {why}") if ok else \
        Verdict.no(f"on the block machine: {why}")


def _extern(unit, decl) -> bool:
    return "extern" in unit.text(decl).split("__shared__")[0].split()


# -------------------------------------------------------------- drop-shared-cache
def _cache(site):
    u, fn = site.unit, site.function
    names = [n for n, _ in declared_names(u, site.node)]
    return u.memo(f"drop-shared-cache.{site.node.start_byte}",
                  lambda _: private_cache(u, fn, names[0]) if len(names) == 1
                  else "not one array per declaration")


def _aliases(site, c) -> "list | str":
    """The declarations reaching the cache by another name (``float* r =
    reinterpret_cast<float*>(buf)``): they go with it, so nothing else may read them."""
    u, fn = site.unit, site.function
    uses = [(x.node.start_byte, x.node.end_byte) for x in c.uses]
    out = []
    for n in u.walk(fn.body):
        if n.type != "identifier" or u.text(n) != c.base or \
                site.node.start_byte <= n.start_byte < site.node.end_byte or \
                any(a <= n.start_byte < b for a, b in uses):
            continue
        d = n.parent
        while d is not None and d.type not in ("declaration", "compound_statement"):
            d = d.parent
        names = {k for k, _ in declared_names(u, d)} if d is not None and \
            d.type == "declaration" else set()
        stray = [m for m in u.walk(fn.body) if m.type == "identifier" and u.text(m) in names
                 and not d.start_byte <= m.start_byte < d.end_byte
                 and not any(a <= m.start_byte < b for a, b in uses)]
        if not names or stray:
            line, col = u.line_col(n.start_byte)
            return f"{c.base} is also reached at {line}:{col}, not as the cache"
        out.append(d)
    return out


def _values(site, ctx):
    c = _cache(site)
    return site.unit.memo(f"drop-shared-cache.values.{site.node.start_byte}",
                          lambda u: cached_values(u, site.function, c,
                                                  lambda a, b: ctx.assumed("no_alias", a, b)))


def _is_cache(site, ctx) -> Verdict:
    c = _cache(site)
    if isinstance(c, str):
        return Verdict.no(c)
    al = _aliases(site, c)
    if isinstance(al, str):
        return Verdict.no(al)
    stores = sum(x.mode == "write" for x in c.uses)
    return Verdict.yes(f"{c.base}: {stores} store(s) and {len(c.uses) - stores} read(s), "
                       f"each thread its own elements over {len(c.loops)} loop(s)")


def _has_values(site, ctx) -> Verdict:
    v = _values(site, ctx)
    if isinstance(v, str):
        return Verdict.no(v)
    return Verdict.yes(f"{len(v)} read(s), each the value its thread stored")


DROP_PRECONDITIONS = (
    Precondition("private-cache", "storage",
                 "a shared array each thread reads back only where it stored, in block- or "
                 "grid-stride loops over one iteration space (kernel model)", _is_cache),
    Precondition("stored-values", "storage",
                 "every read is the value stored, its names unchanged since and its memory "
                 "never written (kernel model; no_alias for global memory)", _has_values,
                 needs=("private-cache",)),
    Precondition("same-results", "storage",
                 "a block stores the same without the cache (block machine)", _same_results,
                 needs=("stored-values",)),
)


@dataclass(frozen=True)
class DropSharedCache(Pass):
    """Read what a thread cached in shared memory from where it came: each read becomes the
    value stored, the stores and the array go.

    Before::

        extern __shared__ float cache[];
        for (int j = tid; j < n; j += blockDim.x) { cache[j] = x[j]; m = fmaxf(m, x[j]); }
        for (int j = tid; j < n; j += blockDim.x) { y[j] = expf(cache[j] - m); }

    After ``drop-shared-cache``::

        for (int j = tid; j < n; j += blockDim.x) { m = fmaxf(m, x[j]); }
        for (int j = tid; j < n; j += blockDim.x) { y[j] = expf(x[j] - m); }

    Preconditions: private-cache (storage), stored-values (storage), same-results (storage:
    the block machine).

    Options: none.
    """

    name = "drop-shared-cache"
    kind = "simplify"
    inverse = "shared-cache"
    drop_dead = True
    anchor = Rule(kind="declaration", regex=r"\b__shared__\b", inside_kernel=True)
    preconditions = DROP_PRECONDITIONS

    def rewrite(self, site, ctx):
        c, vals = _cache(site), _values(site, ctx)
        al = _aliases(site, c) if not isinstance(c, str) else c
        if isinstance(vals, str) or isinstance(al, str):
            raise SkipSite(vals if isinstance(vals, str) else al)
        u = site.unit
        edits = [Edit(r.start_byte, r.end_byte, operand(v)) for r, v in vals]
        stores = [x for x in c.uses if x.mode == "write"]
        for lp in {x.loop.node.id: x.loop for x in stores}.values():
            gone = [x.stmt for x in stores if x.loop is lp]
            body = statements(lp.body) if lp.body.type == "compound_statement" else [lp.body]
            if len(body) == len(gone):   # nothing left to do: the loop goes
                edits.append(remove_described(u, lp.node))
            else:
                edits += [remove_described(u, st) for st in gone]
        edits += [remove_described(u, d) for d in (site.node, *al)]
        return edits

    def update_contract(self, contract, site, ctx):
        others = [d for d in site.unit.nodes_of_type("declaration", within=site.function.node)
                  if d.id != site.node.id and "__shared__" in site.unit.text(d) and
                  _extern(site.unit, d)]
        return contract.with_(smem="0") if _extern(site.unit, site.node) and not others \
            else contract

    def inverse_for(self, site, ctx):
        return SharedCache()


# -------------------------------------------------------------------- shared-cache
@dataclass(frozen=True)
class _Plan:
    loop: object      # the first sweep's Loop
    base: str         # the global array cached
    first: object     # its read in the first sweep
    later: tuple      # (read node, that loop's variable) in the later sweeps
    elem: str
    size: str         # the row's length as the launch contract names it


def _guarded(node, lp) -> bool:
    """Whether ``node`` is read only under a test inside the loop's body (an if, a ``?:``,
    the right of ``&&``/``||``): the cache's store, at the top of the body, would read it
    where the loop did not."""
    c, p = node, node.parent
    while p is not None and p.id != lp.node.id:
        if p.type == "if_statement" and c.id != (p.child_by_field_name("condition") or c).id:
            return True
        if p.type == "conditional_expression" and c.id != p.child_by_field_name("condition").id:
            return True
        if p.type == "binary_expression" and p.child_by_field_name("operator").type in \
                ("&&", "||") and c.id == p.child_by_field_name("right").id:
            return True
        c, p = p, p.parent
    return False


def _key(site, lp):
    f = loop_fact(site.unit, lp.node)
    return None if f is None or f.kind not in PRIVATE_KINDS or lp.var is None else \
        (f.kind, f.start, f.step, lp.cond_op, lp.bound)


def plan(site, ctx) -> "_Plan | str":
    u, fn = site.unit, site.function
    lp = loop_of(u, site.node)
    key = _key(site, lp) if lp is not None else None
    if key is None:
        return "not a block- or grid-stride loop"
    if lp.cond_op != "<" or lp.bound_node is None:
        return f"the loop's test is not `{lp.var} < N` (the cache holds N elements)"
    sweeps = [loop_of(u, s) for s in site.node.parent.named_children
              if s.start_byte > site.node.start_byte and s.type == "for_statement"]
    sweeps = [s for s in sweeps if s is not None and _key(site, s) == key]
    if not sweeps:
        return "no later loop runs over the same elements"
    accs = accesses(u, fn)
    written = {a.base for a in accs if a.writes}

    def reads(loop):
        return [a for a in accs if a.mode == "read" and a.space == "global" and a.width == 1
                and a.index is not None and loop.node.start_byte <= a.node.start_byte <
                loop.node.end_byte]
    want = site.pass_.array
    for a in reads(lp):
        if a.base in written or (want != "auto" and a.base != want) or _guarded(a.node, lp):
            continue
        later = tuple((b.node, s.var) for s in sweeps for b in reads(s) if b.base == a.base
                      and b.index.subs({s.var: Affine.sym(lp.var)}) == a.index)
        if later:
            size = u.text(lp.bound_node) if lp.bound_node is not None else ""
            return _Plan(lp, a.base, a.node, later, a.elem_type or "float",
                         ctx.bindings.get(size, size))
    return "no array it reads is read again at the same element by a later loop"


def _sweeps(site, ctx) -> Verdict:
    p = plan(site, ctx)
    if isinstance(p, str):
        return Verdict.no(p)
    return Verdict.yes(f"{p.base} is read again {len(p.later)} time(s) by later loops")


def _free(site, ctx) -> Verdict:
    u, fn = site.unit, site.function
    for d in u.nodes_of_type("declaration", within=fn.node):
        if "__shared__" in u.text(d) and _extern(u, d):
            return Verdict.no(f"{fn.name} already has dynamic shared memory: a second extern "
                              f"buffer would share its address")
    p = plan(site, ctx)
    if not isinstance(p, str) and not p.size.isidentifier():
        return Verdict.no(f"the loop's bound `{p.size}` is not a size the launch can name")
    return Verdict.yes("no dynamic shared memory yet; the row's length is a launch size")


def _no_alias(site, ctx) -> Verdict:
    p = plan(site, ctx)
    out = {a.base for a in accesses(site.unit, site.function) if a.writes and
           a.space == "global"}
    bad = [w for w in sorted(out) if not ctx.assumed("no_alias", p.base, w)]
    if bad:
        return Verdict.no(f"{p.base} may overlap {bad[0]}, which the kernel writes "
                          f"(--assume no_alias({p.base},{bad[0]}))")
    return Verdict.yes(f"{p.base} overlaps nothing the kernel writes")


PRECONDITIONS = (
    Precondition("later-sweep", "layout",
                 "a later block- or grid-stride loop over the same elements reads an array "
                 "the kernel never writes at the element this loop reads", _sweeps),
    Precondition("dynamic-smem", "hardware",
                 "the kernel has no dynamic shared memory yet and the row's length is a "
                 "size the launch contract names", _free, needs=("later-sweep",)),
    Precondition("no-alias", "storage",
                 "the cached array overlaps nothing the kernel writes", _no_alias,
                 needs=("later-sweep",)),
    Precondition("same-results", "storage",
                 "a block stores the same with the cache (block machine)", _same_results,
                 needs=("dynamic-smem", "no-alias")),
)


@dataclass(frozen=True)
class SharedCache(Pass):
    """Keep what a sweep reads in dynamic shared memory for the later sweeps that read it
    again, each thread its own elements.

    Before::

        for (int j = tid; j < n; j += blockDim.x) { m = fmaxf(m, x[j]); }
        for (int j = tid; j < n; j += blockDim.x) { y[j] = expf(x[j] - m); }

    After ``shared-cache``::

        extern __shared__ float x_cache[];
        for (int j = tid; j < n; j += blockDim.x) { x_cache[j] = x[j]; m = fmaxf(m, x[j]); }
        for (int j = tid; j < n; j += blockDim.x) { y[j] = expf(x_cache[j] - m); }

    Preconditions: later-sweep (layout), dynamic-smem (hardware), no-alias (storage),
    same-results (storage: the block machine).

    Options: ``array`` (the global array to cache; auto: the first read again),
    ``shared`` (the cache's name; auto: ARRAY_cache).
    """

    name = "shared-cache"
    kind = "optimize"
    inverse = "drop-shared-cache"
    anchor = Rule(kind="for_statement", inside_kernel=True)
    preconditions = PRECONDITIONS

    array: str = option("auto", Identifier(), "the global array to cache")
    shared: str = option("auto", Identifier(), "the cache's name")

    def rewrite(self, site, ctx):
        p = plan(site, ctx)
        if isinstance(p, str):
            raise SkipSite(p)
        u, fn = site.unit, site.function
        name = fresh_name(u, fn.node, [self.shared if self.shared != "auto"
                                       else f"{p.base}_cache"])
        body = statements(fn.body)
        edits = [insert_lines_before(u, body[0], f"extern __shared__ {p.elem} {name}[];")]
        store = f"{name}[{p.loop.var}] = {u.text(p.first)};"
        if p.loop.body.type == "compound_statement":
            edits.append(insert_lines_before(u, statements(p.loop.body)[0], store))
        else:
            ind, step = indent_of(u, p.loop.node.start_byte), indent_step(u, p.loop.node)
            head = p.loop.body.prev_sibling
            edits.append(Edit(head.end_byte, p.loop.body.end_byte,
                              f" {{\n{ind}{step}{store}\n{ind}{step}{u.text(p.loop.body)}"
                              f"\n{ind}}}"))
        edits += [Edit(n.start_byte, n.end_byte, f"{name}[{var}]") for n, var in p.later]
        return edits

    def update_contract(self, contract, site, ctx):
        p = plan(site, ctx)
        if isinstance(p, str):
            return contract
        return contract.with_(smem=f"{type_size(site.unit, p.elem) or 4}*{p.size}")

    def inverse_for(self, site, ctx):
        return DropSharedCache()


__all__ = ["DropSharedCache", "SharedCache", "plan"]
