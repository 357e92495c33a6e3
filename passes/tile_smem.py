"""Shared-memory tiling of a matrix product: ``tile-smem`` (optimize) and ``untile-smem`` (simplify)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.affine import affine_of, conjuncts, strip_parens, thread_dependent
from kltrans.analysis.pointers import pointer_params
from kltrans.analysis.smem import shared_footprint, type_size
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.predicates import pure
from kltrans.passes import Choice, Identifier, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.rewrite import (
    fresh_numbered as fresh, indent_of as line_indent, indent_step, shift, splice, statements,
    unshift)
from kltrans.passes.launch_facts import STATIC_SMEM, block_dims, int_env
from kltrans.passes.rewrite import norm

TILES = (8, 16, 32)
ZERO = {"float": "0.0f", "double": "0.0", "int": "0"}
_BARRIER = "__syncthreads"
_STEPS = re.compile(r"^(\+\+\s*(?P<a>\w+)|(?P<b>\w+)\s*\+\+|(?P<c>\w+)\s*\+=\s*1)$")


def _subs(node):
    idx = node.child_by_field_name("indices") or node.child_by_field_name("index")
    inner = [c for c in idx.named_children if c.type != "comment"] if idx is not None else []
    return inner[0] if len(inner) == 1 else None


def _thread_axes(unit, node) -> set:
    return {s[-1] for s in thread_dependent(unit, node) if s.startswith("threadIdx.")} | \
        ({"?"} if "?" in thread_dependent(unit, node) else set())


def _contract_tile(site) -> "tuple[int | None, str, str]":
    """(T, spelling, why): the contract's square 2-D block T x T."""
    from kltrans.syntax.contract import contracts

    block, why = block_dims(site.unit, site.function)
    if block is None:
        return None, "", why
    c = contracts(site.unit).get(site.function.name)
    if block[2] != 1 or block[0] != block[1] or len(c.block) < 2:
        return None, "", (f"block {block[0]} x {block[1]} x {block[2]} of the launch contract is "
                          "not a square 2-D block T x T")
    t = block[0]
    spell = str(t)
    name = c.block[0].strip()
    if re.fullmatch(r"[A-Za-z_]\w*", name) and c.block[1].strip() == name and \
            int_env(site.unit).get(name) == t:
        spell = name
    return t, spell, ""


# ====================================================================== the naive form
@dataclass
class Naive:
    loop: object
    k: str
    bound: object  # the K node
    guard: object  # the if statement
    row_cond: object
    col_cond: object
    pre: list
    post: list
    a: str
    b: str
    a_sub: list  # subscript nodes A[...] in the loop body
    b_sub: list
    a_idx: object  # one index node of A (all A accesses have this index text)
    b_idx: object


def _params(site) -> dict:
    return {p.name: p for p in site.function.params if p.name}


def _naive(site) -> "Naive | str":
    unit = site.unit
    cache = unit._cache.setdefault("tile_smem_naive", {})
    if site.node.id in cache:
        return cache[site.node.id]
    got = _naive_uncached(site)
    cache[site.node.id] = got
    return got


def _naive_uncached(site) -> "Naive | str":
    unit = site.unit
    loop, k = site.node, site.text("K")
    step = norm(site.text("STEP"))
    m = _STEPS.match(step)
    if m is None or (m.group("a") or m.group("b") or m.group("c")) != k:
        return f"the loop steps by `{step}`, not by one"
    body = site.match.bindings["BODY"]
    params = _params(site)
    accesses: dict = {}
    for n in unit.walk(body):
        if n.type == "identifier" and unit.text(n) == k:
            sub = n.parent
            while sub is not None and sub.type != "subscript_expression" and sub.id != body.id:
                sub = sub.parent
            if sub is None or sub.type != "subscript_expression":
                line = unit.line_col(n.start_byte)[0]
                return (f"{k} is used outside a subscript (line {line}, "
                        f"`{norm(unit.text(n.parent))[:40]}`): the tile keeps only the products")
            arg = sub.child_by_field_name("argument")
            if arg.type != "identifier" or unit.text(arg) not in params or \
                    params[unit.text(arg)].pointer != 1:
                return f"`{norm(unit.text(sub))}` is not an access to a pointer parameter"
            accesses.setdefault(unit.text(arg), []).append(sub)
        if n.type in ("return_statement", "break_statement", "continue_statement",
                      "goto_statement"):
            return f"the loop body has a `{n.type.split('_')[0]}`"
        if n.type == "call_expression" and not pure(unit, n):
            return f"the loop body calls `{norm(unit.text(n))[:40]}`"
        if n.type in ("assignment_expression", "update_expression"):
            lhs = n.child_by_field_name("left") or n.child_by_field_name("argument")
            lhs = strip_parens(lhs)
            if lhs.type != "identifier":
                return (f"the loop body writes memory (`{norm(unit.text(n))[:40]}`): after tiling "
                        "threads outside the matrix run the loop too")
    if len(accesses) != 2:
        return (f"the loop reads {len(accesses)} pointer(s) at {k} "
                f"({', '.join(sorted(accesses)) or 'none'}), not the two factors of a product")
    names = sorted(accesses, key=lambda p: accesses[p][0].start_byte)
    for p in names:
        texts = {norm(unit.text(_subs(s))) for s in accesses[p]}
        if len(texts) != 1:
            return f"{p} is read at {len(texts)} different indices in the loop"
        for n in unit.walk(body):
            if n.type == "identifier" and unit.text(n) == p and \
                    not any(s.start_byte <= n.start_byte < s.end_byte for s in accesses[p]):
                return f"{p} is used in the loop other than as {p}[{texts.pop()}]"
    # which operand is the row operand (A) and which the column operand (B)
    ax = {p: _thread_axes(unit, _subs(accesses[p][0])) for p in names}
    a = next((p for p in names if ax[p] == {"y"}), None)
    b = next((p for p in names if ax[p] == {"x"} and p != a), None)
    if a is None or b is None:
        desc = ", ".join(f"{p}[{norm(unit.text(_subs(accesses[p][0])))}] depends on "
                         f"{'/'.join(sorted('threadIdx.' + s for s in ax[p])) or 'no thread index'}"
                         for p in names)
        return ("no row operand (index moving with threadIdx.y only) and column operand "
                f"(threadIdx.x only): {desc}; no reuse across a row or a column of threads")
    return Naive(loop, k, site.match.bindings["KB"], None, None, None, [], [], a, b,
                 accesses[a], accesses[b], _subs(accesses[a][0]), _subs(accesses[b][0]))


# ------------------------------------------------------------------ preconditions
def _reduction_loop(site, ctx) -> Verdict:
    got = _naive(site)
    if isinstance(got, str):
        return Verdict.no(got)
    u = site.unit
    return Verdict.yes(f"for {got.k} < {norm(u.text(got.bound))}: reads {got.a}[{norm(u.text(got.a_idx))}] "
                       f"and {got.b}[{norm(u.text(got.b_idx))}], writes only locals")


def _guard(site) -> "Naive | str":
    got = _naive(site)
    if isinstance(got, str):
        return got
    unit, fn = site.unit, site.function
    for n in unit.walk(fn.body):
        if n.type == "return_statement" and n.start_byte < got.loop.end_byte:
            line = unit.line_col(n.start_byte)[0]
            return (f"a return before the loop (line {line}): threads that leave early would "
                    "never reach the tile's __syncthreads(); write the bounds as a guard "
                    "`if (row < M && col < N) { ... }` around the loop and the store")
    blk = got.loop.parent
    g = blk.parent if blk is not None else None
    if blk is None or blk.type != "compound_statement" or g is None or \
            g.type != "if_statement":
        return ("the loop is not inside a bounds guard `if (row < M && col < N) { ... }` (an "
                "unguarded product is not tiled: the loads need the bounds)")
    got.guard = g
    if g.child_by_field_name("alternative") is not None:
        return "the bounds guard has an else branch"
    if g.parent is None or g.parent.id != fn.body.id:
        return "the bounds guard is not a top-level statement of the kernel"
    conj = conjuncts(unit, g.child_by_field_name("condition"))
    rows = [c for c in conj if _thread_axes(unit, c) == {"y"}]
    cols = [c for c in conj if _thread_axes(unit, c) == {"x"}]
    if len(conj) != 2 or len(rows) != 1 or len(cols) != 1 or \
            any(c.type != "binary_expression" or unit.text(c.child_by_field_name("operator"))
                not in ("<", "<=") for c in conj):
        return (f"the guard `{norm(unit.text(g.child_by_field_name('condition')))}` is not "
                "`row < M && col < N` (one bound on a threadIdx.y index, one on threadIdx.x)")
    stmts = statements(g.child_by_field_name("consequence"))
    i = [s.id for s in stmts].index(got.loop.id) if got.loop.id in [s.id for s in stmts] else -1
    if i < 0:
        return "the loop is not a statement of the guard's block"
    pre, post = stmts[:i], stmts[i + 1:]
    for s in pre:
        if s.type != "declaration" or not pure(unit, s) or any(
                n.type in ("subscript_expression", "pointer_expression", "field_expression")
                and not (n.type == "field_expression" and re.match(
                    r"^(threadIdx|blockIdx|blockDim|gridDim)\.", unit.text(n)))
                for n in unit.walk(s)):
            return (f"`{norm(unit.text(s))[:50]}` runs before the loop inside the guard and is not "
                    "a declaration without memory access: it cannot run for threads outside "
                    "the matrix")
    if not post:
        return "nothing follows the loop inside the guard (no result is stored)"
    for n in unit.walk(fn.body):
        if n.type == "return_statement" and n.start_byte < g.end_byte:
            line = unit.line_col(n.start_byte)[0]
            return (f"a return inside the guard (line {line}): threads that leave early would "
                    "never reach the tile's __syncthreads()")
        if n.type == "call_expression" and norm(unit.text(n.child_by_field_name("function"))) \
                == _BARRIER and n.start_byte >= g.start_byte and n.end_byte <= g.end_byte:
            return "the guard already holds a barrier"
    deps = thread_dependent(unit, got.bound)
    if deps:
        return (f"the bound {norm(unit.text(got.bound))} depends on "
                f"{', '.join(sorted(deps))}: threads would disagree on the number of "
                "barriers")
    got.row_cond, got.col_cond, got.pre, got.post = rows[0], cols[0], pre, post
    return got


def _guard_form(site, ctx) -> Verdict:
    got = _guard(site)
    if isinstance(got, str):
        return Verdict.no(got)
    u = site.unit
    return Verdict.yes(f"guard {norm(u.text(got.row_cond))} && {norm(u.text(got.col_cond))} "
                       "becomes guarded loads and a guarded store; every thread reaches both "
                       "barriers")


def _reuse(site, ctx) -> Verdict:
    got = _naive(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    unit = site.unit
    ai, bi = affine_of(unit, got.a_idx), affine_of(unit, got.b_idx)
    at, bt = norm(unit.text(got.a_idx)), norm(unit.text(got.b_idx))
    if ai is None or bi is None:
        return Verdict.unknown(f"`{at if ai is None else bt}` is not an affine index")
    ak, bx = ai.coeff(got.k), bi.coeff("threadIdx.x")
    if ak is None or ak.value() != 1:
        return Verdict.no(f"{got.a}[{at}] moves by {ak} per {got.k}, not 1: a tile row of "
                          f"{got.a} would not be a contiguous (coalesced) load")
    if bx is None or bx.value() != 1:
        return Verdict.no(f"{got.b}[{bt}] moves by {bx} per threadIdx.x, not 1: a tile row of "
                          f"{got.b} would not be a contiguous (coalesced) load")
    bk = bi.coeff(got.k)
    if bk is None or bk.value() == 0:
        return Verdict.no(f"{got.b}[{bt}] does not move with {got.k}")
    return Verdict.yes(f"{got.a}[{at}]: threads of a row (same threadIdx.y) share it, stride 1 "
                       f"in {got.k}; {got.b}[{bt}]: threads of a column share it, stride 1 in "
                       "threadIdx.x")


def _read_only(site, ctx) -> Verdict:
    got = _naive(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    info = {p.name: p for p in pointer_params(site.unit, site.function)}
    for p in (got.a, got.b):
        pp = info.get(p)
        if pp is None or pp.written is None:
            return Verdict.unknown(f"cannot tell whether {p} is written: "
                                   f"{pp.reason if pp else 'not a pointer parameter'}")
        if pp.written:
            return Verdict.no(f"{p} is written in the kernel: a tile loaded once per step would "
                              "hold stale values")
    return Verdict.yes(f"{got.a} and {got.b} are only read")


def _elem(site, name: str) -> str:
    return _params(site)[name].base_type.replace("const", "").strip()


def _element_type(site, ctx) -> Verdict:
    got = _naive(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    for p in (got.a, got.b):
        t = _elem(site, p)
        if t not in ZERO:
            return Verdict.no(f"{p} points to {t}: tiles are float, double or int (the zero "
                              "that fills ragged edges is written for those)")
    return Verdict.yes(f"{got.a}: {_elem(site, got.a)}, {got.b}: {_elem(site, got.b)}")


def _block_shape(site, ctx) -> Verdict:
    t, _, why = _contract_tile(site)
    want = site.pass_.tile
    if t is None:
        return Verdict.no(why) if "square" in why else Verdict.unknown(why)
    if t != want:
        return Verdict.no(f"tile={want} but the launch contract's block is {t} x {t}: every "
                          "thread loads one element of each tile, so the tile is the block "
                          f"(use tile={t}, or change the launch)")
    return Verdict.yes(f"block {t} x {t} = tile {want} x {want}")


def _smem_budget(site, ctx) -> Verdict:
    got = _naive(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    t = site.pass_.tile
    if t * t > 1024:
        return Verdict.no(f"a {t} x {t} block has {t * t} threads, over 1024")
    fp = shared_footprint(site.unit, site.function, consts=ctx.sizes)
    if fp.static_bytes is None:
        return Verdict.unknown(f"static shared memory is not known: {fp.reason}")
    extra = t * t * (type_size(site.unit, _elem(site, got.a)) +
                     type_size(site.unit, _elem(site, got.b)))
    total = fp.static_bytes + extra
    if total > STATIC_SMEM:
        return Verdict.no(f"{fp.static_bytes} + {extra} bytes of tiles = {total} bytes of static "
                          f"shared memory, over the {STATIC_SMEM} bytes a block may declare")
    return Verdict.yes(f"{fp.static_bytes} + {extra} bytes of tiles = {total} <= {STATIC_SMEM}; "
                       f"{t * t} threads")


def _names(p, site):
    unit, fn = site.unit, site.function
    a = p.a_tile if p.a_tile != "auto" else fresh(unit, fn, ("As", "sA", "tileA"))
    b = p.b_tile if p.b_tile != "auto" else fresh(unit, fn, ("Bs", "sB", "tileB"), {a})
    c = p.counter if p.counter != "auto" else fresh(unit, fn, ("k0", "kt", "kk"), {a, b})
    return a, b, c


def _fresh_names(site, ctx) -> Verdict:
    a, b, c = _names(site.pass_, site)
    used = {site.unit.text(n) for n in site.unit.walk(site.function.node)
            if n.type in ("identifier", "type_identifier")}
    if len({a, b, c}) != 3:
        return Verdict.no(f"the names {a}, {b}, {c} are not distinct")
    for n in (a, b, c):
        if n in used:
            return Verdict.no(f"{n} is already used in {site.function.name}")
    return Verdict.yes(f"tiles {a}, {b} and counter {c} are fresh")


def _with_k(unit, idx, k: str, repl: str) -> str:
    return splice(unit, idx, [(n.start_byte, n.end_byte, repl) for n in unit.walk(idx)
                              if n.type == "identifier" and unit.text(n) == k])


NAIVE = Rule(pattern="for ($TY $K = 0; $K < $KB; $STEP) $BODY;", inside_kernel=True,
             constraints={"K": {"kind": "identifier"}})


@dataclass(frozen=True)
class TileSmem(Pass):
    """Tile a matrix product through shared memory: each block loads T x T tiles of A and B.

    Before::

        // kltrans: launch mm grid=(ceil_div(N, 16), ceil_div(M, 16)) block=(16, 16)
        int col = blockIdx.x * blockDim.x + threadIdx.x;
        int row = blockIdx.y * blockDim.y + threadIdx.y;
        if (row < M && col < N) {
          float acc = 0.0f;
          for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
          C[row * N + col] = acc;
        }

    After ``tile-smem{tile=16}``::

        __shared__ float As[16][16];
        __shared__ float Bs[16][16];
        float acc = 0.0f;
        for (int k0 = 0; k0 < K; k0 += 16) {
          As[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? A[row * K + (k0 + threadIdx.x)] : 0.0f;
          Bs[threadIdx.y][threadIdx.x] = (k0 + threadIdx.y < K && col < N) ? B[(k0 + threadIdx.y) * N + col] : 0.0f;
          __syncthreads();
          for (int k = 0; k < 16; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
          __syncthreads();
        }
        if (row < M && col < N) {
          C[row * N + col] = acc;
        }

    Thread (ty, tx) loads A at its own row and column ``k0 + tx`` of the step, and B at row
    ``k0 + ty`` and its own column; the inner loop reads row ty of As and column tx of Bs,
    which the threads of its row and column loaded. The bounds guard becomes guarded loads
    (zero outside M, N, K: a ragged K adds exact zeros after the last term, so the sum is
    the same, in the same order) and a guarded store after the loop, so every thread
    reaches both barriers. Declarations before the loop inside the guard (the accumulator)
    move before the tile loop. The tile is written as the launch contract spells the block
    (``block=(TILE, TILE)`` gives ``As[TILE][TILE]``). The launch does not change.

    Static facts only; the block size comes from the launch contract (a precondition, not
    a contract update: the tile *is* the block, and the grid already covers the output).

    Preconditions: reduction-loop (layout: ``for (k = 0; k < K; ++k)`` reads exactly two
    pointer parameters at indices with ``k``, uses ``k`` nowhere else, writes only
    locals), guard-form (pipeline: the loop sits in ``if (row < M && col < N) {...}``, a
    top-level statement of the kernel, after pure declarations and before the store; no
    return before it and no barrier in it; K does not depend on the thread), reuse
    (layout, affine: A's index moves with threadIdx.y only and by 1 per k, B's with
    threadIdx.x only, by 1 per threadIdx.x), read-only (storage: A and B are not written),
    element-type (dtype: float, double or int), block-shape (hardware: the contract's block
    is T x T), smem-budget (hardware: 2*T*T elements fit the 48 KiB of static shared
    memory and T*T <= 1024 threads), fresh-names (pipeline: the tile and counter names are
    unused).

    Options: ``tile`` (8, 16 or 32; default 16; must equal the block), ``a_tile``,
    ``b_tile``, ``counter`` (names of the two tiles and the step counter; ``auto``: As,
    Bs, k0 or other unused names).
    """

    name = "tile-smem"
    kind = "optimize"
    inverse = "untile-smem"
    anchor = NAIVE
    preconditions = (
        Precondition("reduction-loop", "layout",
                     "a unit-step loop over k reading two pointer parameters at k, writing "
                     "only locals", _reduction_loop),
        Precondition("guard-form", "pipeline",
                     "the loop is in `if (row < M && col < N)` at the kernel's top level; no "
                     "early return; uniform K (every thread reaches the barriers)", _guard_form),
        Precondition("reuse", "layout",
                     "A[row*K + k] shared along a row of threads, B[k*N + col] along a column "
                     "(affine strides)", _reuse),
        Precondition("read-only", "storage", "A and B are not written in the kernel", _read_only),
        Precondition("element-type", "dtype", "A and B point to float, double or int",
                     _element_type),
        Precondition("block-shape", "hardware",
                     "the launch contract's block is tile x tile", _block_shape),
        Precondition("smem-budget", "hardware",
                     "two tiles fit the static shared memory; tile*tile <= 1024 threads",
                     _smem_budget),
        Precondition("fresh-names", "pipeline", "the tile and counter names are unused",
                     _fresh_names),
    )

    tile: int = option(16, Choice(*TILES), "tile edge (= blockDim.x = blockDim.y)", tune=True)
    a_tile: str = option("auto", Identifier(), "name of the A tile (auto: As)")
    b_tile: str = option("auto", Identifier(), "name of the B tile (auto: Bs)")
    counter: str = option("auto", Identifier(), "name of the step counter (auto: k0)")

    def rewrite(self, site, ctx):
        unit = site.unit
        g = _guard(site)
        sa, sb, k0 = _names(self, site)
        _, spell, _ = _contract_tile(site)
        t = spell or str(self.tile)
        ind = line_indent(unit, g.guard.start_byte)
        st = indent_step(unit, g.guard)
        kb = unit.text(g.bound)
        ta, tb = _elem(site, g.a), _elem(site, g.b)
        tx, ty = "threadIdx.x", "threadIdx.y"
        a_load = _with_k(unit, g.a_idx, g.k, f"({k0} + {tx})")
        b_load = _with_k(unit, g.b_idx, g.k, f"({k0} + {ty})")
        row, col = unit.text(g.row_cond), unit.text(g.col_cond)
        inner_reps = [(g.bound.start_byte, g.bound.end_byte, t)]
        inner_reps += [(s.start_byte, s.end_byte, f"{sa}[{ty}][{g.k}]") for s in g.a_sub]
        inner_reps += [(s.start_byte, s.end_byte, f"{sb}[{g.k}][{tx}]") for s in g.b_sub]
        inner = splice(unit, g.loop, inner_reps)
        i2 = ind + st
        lines = [f"__shared__ {ta} {sa}[{t}][{t}];", f"{ind}__shared__ {tb} {sb}[{t}][{t}];"]
        lines += [ind + unshift(unit.text(s), st) for s in g.pre]
        lines += [f"{ind}for (int {k0} = 0; {k0} < {kb}; {k0} += {t}) {{",
                  f"{i2}{sa}[{ty}][{tx}] = ({row} && {k0} + {tx} < {kb}) ? {g.a}[{a_load}] : "
                  f"{ZERO[ta]};",
                  f"{i2}{sb}[{ty}][{tx}] = ({k0} + {ty} < {kb} && {col}) ? {g.b}[{b_load}] : "
                  f"{ZERO[tb]};",
                  f"{i2}{_BARRIER}();",
                  f"{i2}{inner}",
                  f"{i2}{_BARRIER}();",
                  f"{ind}}}"]
        cond = unit.text(g.guard.child_by_field_name("condition"))
        lines.append(f"{ind}if {cond} {{")
        lines += [i2 + unit.text(s) for s in g.post]
        lines.append(f"{ind}}}")
        return [Edit(g.guard.start_byte, g.guard.end_byte, "\n".join(lines))]

    def inverse_for(self, site, ctx):
        return UntileSmem()


# ================================================================= the tiled form
@dataclass
class Tiled:
    decl_a: object
    decl_b: object
    hoisted: list
    loop: object
    guard: object
    sa: str
    sb: str
    a: str
    b: str
    k0: str
    t: int
    inner: object
    k: str
    a_load: object  # the A[...] node
    b_load: object
    a_fill: object
    b_fill: object
    row: object
    col: object
    a_orig: str  # A's index with k back
    b_orig: str


_LOAD = re.compile(r"^(\w+)\s*\[\s*threadIdx\.y\s*\]\s*\[\s*threadIdx\.x\s*\]$")


def _shared_2d(unit, decl) -> "tuple[str, str, object, object] | None":
    if decl.type != "declaration" or "__shared__" not in [unit.text(c) for c in decl.children
                                                         if c.type == "type_qualifier"]:
        return None
    ds = decl.children_by_field_name("declarator")
    if len(ds) != 1 or ds[0].type != "array_declarator":
        return None
    d1 = ds[0]
    d0 = d1.child_by_field_name("declarator")
    if d0 is None or d0.type != "array_declarator":
        return None
    ident = d0.child_by_field_name("declarator")
    if ident is None or ident.type != "identifier":
        return None
    return (unit.text(ident), norm(unit.text(decl.child_by_field_name("type"))),
            d0.child_by_field_name("size"), d1.child_by_field_name("size"))


def _load(unit, stmt, k0: str, axis: str) -> "tuple | str":
    """(tile, cond, pointer, load node, fill node) of `S[ty][tx] = (c) ? P[i] : z;`."""
    text = norm(unit.text(stmt))
    if stmt.type != "expression_statement":
        return f"`{text[:50]}` is not a tile load"
    e = stmt.named_children[0]
    if e.type != "assignment_expression" or unit.text(e.child_by_field_name("operator")) != "=":
        return f"`{text[:50]}` is not a tile load"
    m = _LOAD.match(norm(unit.text(e.child_by_field_name("left"))))
    r = strip_parens(e.child_by_field_name("right"))
    if m is None or r.type != "conditional_expression":
        return f"`{text[:50]}` is not `S[threadIdx.y][threadIdx.x] = (cond) ? P[i] : 0`"
    ld = strip_parens(r.child_by_field_name("consequence"))
    if ld.type != "subscript_expression" or ld.child_by_field_name("argument").type != "identifier":
        return f"`{text[:50]}` does not load from a pointer"
    return (m.group(1), r.child_by_field_name("condition"),
            unit.text(ld.child_by_field_name("argument")), ld,
            r.child_by_field_name("alternative"))


def _restore(unit, load, k0: str, axis: str, k: str) -> "str | None":
    """The load's index with the one `(k0 + threadIdx.<axis>)` put back as k."""
    idx = _subs(load)
    hits = [n for n in unit.walk(idx) if n.type == "parenthesized_expression"
            and norm(unit.text(n)) == f"({k0} + threadIdx.{axis})"]
    if len(hits) != 1:
        return None
    rest = splice(unit, idx, [(hits[0].start_byte, hits[0].end_byte, " ")])
    if re.search(rf"\b{re.escape(k0)}\b", rest) or re.search(r"\bthreadIdx\b", rest):
        return None
    return splice(unit, idx, [(hits[0].start_byte, hits[0].end_byte, k)])


def _tiled(site) -> "Tiled | str":
    unit = site.unit
    cache = unit._cache.setdefault("tile_smem_tiled", {})
    if site.node.id not in cache:
        cache[site.node.id] = _tiled_uncached(site)
    return cache[site.node.id]


def _tiled_uncached(site) -> "Tiled | str":
    unit, fn = site.unit, site.function
    loop = site.node
    k0 = site.text("K0")
    if loop.parent is None or loop.parent.id != fn.body.id:
        return "the tile loop is not a top-level statement of the kernel"
    top = statements(fn.body)
    i = [s.id for s in top].index(loop.id)
    body = statements(site.match.bindings["BODY"])
    if len(body) != 5 or any(norm(unit.text(body[j])) != f"{_BARRIER}();" for j in (2, 4)) or \
            body[3].type != "for_statement":
        return ("the loop body is not: load the A tile; load the B tile; __syncthreads(); the "
                "loop over the tile; __syncthreads()")
    la, lb = _load(unit, body[0], k0, "x"), _load(unit, body[1], k0, "y")
    for ld in (la, lb):
        if isinstance(ld, str):
            return ld
    sa, ca, a, a_ld, a_fill = la
    sb, cb, b, b_ld, b_fill = lb
    # the shared declarations and hoisted statements before the loop
    decls = [j for j in range(i) if _shared_2d(unit, top[j]) is not None and
             _shared_2d(unit, top[j])[0] in (sa, sb)]
    if len(decls) != 2 or decls[1] != decls[0] + 1 or _shared_2d(unit, top[decls[0]])[0] != sa:
        return (f"no `__shared__ T {sa}[T][T]; __shared__ T {sb}[T][T];` pair of declarations "
                "before the hoisted statements")
    hoisted = top[decls[1] + 1:i]
    if i + 1 >= len(top) or top[i + 1].type != "if_statement" or \
            top[i + 1].child_by_field_name("alternative") is not None:
        return "no `if (row < M && col < N) { ... }` store after the tile loop"
    guard = top[i + 1]
    # the tile edge
    dims = [_shared_2d(unit, top[j]) for j in decls]
    vals = {affine_of(unit, n).value() if affine_of(unit, n) is not None else None
            for d in dims for n in d[2:]}
    t = affine_of(unit, site.match.bindings["T"])
    if len(vals) != 1 or None in vals or t is None or t.value() not in vals:
        return "the tiles are not T x T with the loop stepping by T"
    t = vals.pop()
    # the inner loop
    inner = body[3]
    init = inner.child_by_field_name("initializer")
    cond = strip_parens(inner.child_by_field_name("condition"))
    if init is None or init.type != "declaration" or cond is None or \
            cond.type != "binary_expression" or unit.text(cond.child_by_field_name("operator")) != "<":
        return "the loop over the tile is not `for (int k = 0; k < T; ...)`"
    k = unit.text(cond.child_by_field_name("left"))
    bnd = affine_of(unit, cond.child_by_field_name("right"))
    if bnd is None or bnd.value() != t or not re.fullmatch(rf"\w+\s+{re.escape(k)}\s*=\s*0\s*;?",
                                                           norm(unit.text(init))):
        return "the loop over the tile is not `for (int k = 0; k < T; ...)`"
    a_orig = _restore(unit, a_ld, k0, "x", k)
    b_orig = _restore(unit, b_ld, k0, "y", k)
    if a_orig is None or b_orig is None:
        return (f"the loads do not index with ({k0} + threadIdx.x) / ({k0} + threadIdx.y) "
                "exactly once")
    # load guards: `row && k0 + tx < K` and `k0 + ty < K && col`
    kb = norm(site.text("KB"))
    c_a, c_b = conjuncts(unit, ca), conjuncts(unit, cb)
    if len(c_a) != 2 or len(c_b) != 2 or norm(unit.text(c_a[1])) != f"{k0} + threadIdx.x < {kb}" \
            or norm(unit.text(c_b[0])) != f"{k0} + threadIdx.y < {kb}":
        return f"the load guards do not bound {k0} + threadIdx.x/y by {kb}"
    return Tiled(top[decls[0]], top[decls[1]], hoisted, loop, guard, sa, sb, a, b, k0, t, inner,
                 k, a_ld, b_ld, a_fill, b_fill, c_a[0], c_b[1], a_orig, b_orig)


def _tiled_form(site, ctx) -> Verdict:
    got = _tiled(site)
    if isinstance(got, str):
        return Verdict.no(got)
    return Verdict.yes(f"{got.t} x {got.t} tiles {got.sa} of {got.a} and {got.sb} of {got.b}, "
                       f"loop over {got.k0} by {got.t}")


def _shared_private(site, ctx) -> Verdict:
    got = _tiled(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    unit = site.unit
    body = got.inner.child_by_field_name("body")
    ok_spans = [(got.loop.start_byte, got.loop.end_byte)]
    for name, want in ((got.sa, rf"^{got.sa}\[threadIdx\.y\]\[{got.k}\]$"),
                       (got.sb, rf"^{got.sb}\[{got.k}\]\[threadIdx\.x\]$")):
        for n in unit.walk(site.function.body):
            if n.type != "identifier" or unit.text(n) != name:
                continue
            line = unit.line_col(n.start_byte)[0]
            if not any(a <= n.start_byte < b for a, b in ok_spans):
                decl = got.decl_a if name == got.sa else got.decl_b
                if decl.start_byte <= n.start_byte < decl.end_byte:
                    continue
                return Verdict.no(f"{name} is used outside the tile loop (line {line})")
            if body.start_byte <= n.start_byte < body.end_byte:
                full = n.parent.parent if n.parent is not None else None
                if full is None or not re.match(want, norm(unit.text(full)).replace(" ", "")):
                    return Verdict.no(f"the tile loop reads {name} other than as "
                                      f"{want[1:-1].replace(chr(92), '')} (line {line})")
    for n in unit.walk(body):
        if n.type == "identifier" and unit.text(n) in (got.k0, got.a, got.b):
            return Verdict.no(f"the loop over the tile uses {unit.text(n)}")
    return Verdict.yes(f"{got.sa} and {got.sb} are used only by the loads and the loop over "
                       "the tile")


def _zero_fill(site, ctx) -> Verdict:
    got = _tiled(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    unit = site.unit
    params = _params(site)
    for s, p, fill, decl in ((got.sa, got.a, got.a_fill, got.decl_a),
                             (got.sb, got.b, got.b_fill, got.decl_b)):
        if p not in params or params[p].pointer != 1:
            return Verdict.no(f"{p} is not a pointer parameter")
        t = _elem(site, p)
        if t not in ZERO or _shared_2d(unit, decl)[1] != t:
            return Verdict.no(f"{s} holds {_shared_2d(unit, decl)[1]} but {p} points to {t}")
        if norm(unit.text(fill)) != ZERO[t]:
            return Verdict.no(f"{s} is filled with {norm(unit.text(fill))} outside the matrix, not "
                              f"{ZERO[t]}: the padded products would not vanish")
    return Verdict.yes("both tiles have their pointer's element type and are zero-filled")


def _guard_match(site, ctx) -> Verdict:
    got = _tiled(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    unit = site.unit
    conj = [norm(unit.text(c)) for c in conjuncts(unit, got.guard.child_by_field_name("condition"))]
    want = [norm(unit.text(got.row)), norm(unit.text(got.col))]
    if sorted(conj) != sorted(want):
        return Verdict.no(f"the store guard `{' && '.join(conj)}` is not the loads' bounds "
                          f"`{' && '.join(want)}`")
    for s in got.hoisted:
        if s.type != "declaration" or not pure(unit, s) or \
                any(n.type == "subscript_expression" for n in unit.walk(s)):
            return Verdict.no(f"`{norm(unit.text(s))[:50]}` before the tile loop is not a pure "
                              "declaration that can move into the guard")
    return Verdict.yes(f"store guard {' && '.join(conj)} = load bounds")


def _untile_block(site, ctx) -> Verdict:
    got = _tiled(site)
    if isinstance(got, str):
        return Verdict.unknown(got)
    t, _, why = _contract_tile(site)
    if t is None:
        return Verdict.no(why) if "square" in why else Verdict.unknown(why)
    if t != got.t:
        return Verdict.no(f"the tiles are {got.t} x {got.t} but the block is {t} x {t}: the "
                          "tiled kernel is not the product the loop over k computes")
    return Verdict.yes(f"block {t} x {t} = tile")


TILED = Rule(pattern="for ($TY $K0 = 0; $K0 < $KB; $K0 += $T) $BODY;", inside_kernel=True,
             constraints={"K0": {"kind": "identifier"}})


@dataclass(frozen=True)
class UntileSmem(Pass):
    """Undo shared-memory tiling of a matrix product: read A and B directly in the k loop.

    Before::

        __shared__ float As[16][16];
        __shared__ float Bs[16][16];
        float acc = 0.0f;
        for (int k0 = 0; k0 < K; k0 += 16) {
          As[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? A[row * K + (k0 + threadIdx.x)] : 0.0f;
          Bs[threadIdx.y][threadIdx.x] = (k0 + threadIdx.y < K && col < N) ? B[(k0 + threadIdx.y) * N + col] : 0.0f;
          __syncthreads();
          for (int k = 0; k < 16; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
          __syncthreads();
        }
        if (row < M && col < N) {
          C[row * N + col] = acc;
        }

    After ``untile-smem``::

        if (row < M && col < N) {
          float acc = 0.0f;
          for (int k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
          C[row * N + col] = acc;
        }

    It reads the form ``tile-smem`` writes: two T x T shared tiles declared together, the
    statements between them and the loop (moved back into the guard), the guarded loads
    with ``(k0 + threadIdx.x)`` / ``(k0 + threadIdx.y)`` in the index (put back as ``k``),
    the two barriers, and the store guard after the loop.

    Preconditions: tiled-form (layout: that shape), shared-private (storage: the tiles are
    used only by the loads and as ``As[threadIdx.y][k]``, ``Bs[k][threadIdx.x]`` in the
    loop over the tile), zero-fill (dtype: tiles of the pointers' element types, filled
    with that type's zero), guard-match (pipeline: the store guard is the loads' row and
    column bounds; the hoisted statements are pure declarations), block-shape (hardware:
    the launch contract's block is T x T).

    Options: none.
    """

    name = "untile-smem"
    kind = "simplify"
    inverse = "tile-smem"
    anchor = TILED
    preconditions = (
        Precondition("tiled-form", "layout",
                     "two T x T tiles, guarded loads, two barriers, a loop over the tile, a "
                     "store guard", _tiled_form),
        Precondition("shared-private", "storage",
                     "the tiles are used only by the loads and the loop over the tile",
                     _shared_private),
        Precondition("zero-fill", "dtype",
                     "the tiles have the pointers' element types and are zero-filled",
                     _zero_fill),
        Precondition("guard-match", "pipeline",
                     "the store guard is the loads' bounds; hoisted statements are pure",
                     _guard_match),
        Precondition("block-shape", "hardware", "the launch contract's block is T x T",
                     _untile_block),
    )

    def rewrite(self, site, ctx):
        unit = site.unit
        g = _tiled(site)
        ind = line_indent(unit, g.decl_a.start_byte)
        st = indent_step(unit, g.decl_a)
        i2 = ind + st
        body = g.inner.child_by_field_name("body")
        reps = [(g.inner.child_by_field_name("condition").child_by_field_name("right").start_byte,
                 g.inner.child_by_field_name("condition").child_by_field_name("right").end_byte,
                 site.text("KB"))]
        for n in unit.walk(body):
            if n.type == "identifier" and unit.text(n) in (g.sa, g.sb):
                full = n.parent.parent
                reps.append((full.start_byte, full.end_byte,
                             f"{g.a}[{g.a_orig}]" if unit.text(n) == g.sa
                             else f"{g.b}[{g.b_orig}]"))
        inner = splice(unit, g.inner, reps)
        cond = unit.text(g.guard.child_by_field_name("condition"))
        lines = [f"if {cond} {{"]
        lines += [i2 + shift(unit.text(s), st) for s in g.hoisted]
        lines.append(i2 + inner)
        lines += [i2 + unit.text(s) for s in statements(g.guard.child_by_field_name("consequence"))]
        lines.append(f"{ind}}}")
        return [Edit(g.decl_a.start_byte, g.guard.end_byte, "\n".join(lines))]

    def inverse_for(self, site, ctx):
        g = _tiled(site)
        if isinstance(g, str):
            return TileSmem()
        return TileSmem(tile=g.t, a_tile=g.sa, b_tile=g.sb, counter=g.k0)
