"""Block shape: ``flatten-block`` (optimize) and its inverse ``unflatten-block`` (simplify).

A kernel on a 2-D block of X x Y threads that reads ``threadIdx.x`` and ``threadIdx.y``
does the same on a 1-D block of X * Y threads that splits its thread index into the two:
the set of (x, y) pairs is the same, each pair still one thread. What changes is which
threads are neighbours. On the device, consecutive thread ranks form a warp, so the axis
that varies fastest decides which elements a warp touches together: a naive matrix
product that walks the rows of C along ``threadIdx.x`` reads 32 rows of A per warp and
writes a column of C; split the other way round (``row = t / 32``, ``col = t % 32``) a
warp reads one element of A and 32 neighbouring elements of B and C — coalesced.

- ``flatten-block{fast=x|y}``: a kernel launched on a constant 2-D block (X, Y) becomes one
  on a 1-D block of X * Y threads; ``fast`` names the old axis that consecutive threads
  walk: ``fast=x`` keeps every warp as it was (``threadIdx.x`` becomes ``t % X``,
  ``threadIdx.y`` becomes ``t / X``), ``fast=y`` transposes it (``threadIdx.x`` becomes
  ``t / Y``, ``threadIdx.y`` becomes ``t % Y``). ``blockDim.x`` and ``blockDim.y`` become the
  block's extents as the launch header writes them.
- ``unflatten-block{fast=x|y}``: a kernel launched on a constant 1-D block of B threads whose
  thread index is read only split by one constant D (``t / D``, ``t % D``, ``t >> k``,
  ``t & (D - 1)``, in any spelling the thread geometry reads: through a local, a cast,
  ``block.thread_rank()``) becomes one on a 2-D block; ``fast`` names the new axis that
  takes ``t % D``: ``x`` gives block (D, B / D), ``y`` gives (B / D, D).

Both refuse a kernel with warp collectives when the warps change (``fast=y``), a thread
index read otherwise (``blockIdx.x * blockDim.x + threadIdx.x``), ``threadIdx.z``, or a block
size read as ``blockDim`` in the 1-D form; both check the rewrite on the grid machine
(both launches store the same over a grid of several blocks).
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis.affine import strip_parens
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.effects import Unsupported
from kltrans.model.geometry import geometry, role_of
from kltrans.model.grid import block_launches, same_grid_results
from kltrans.model.ops import definitions, operations
from kltrans.passes import Choice, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import header_block, rewritten_unit
from kltrans.syntax import Edit

KERNEL = Rule(kind="function_definition", regex=r"\b__global__\b")
CHECK_SIZES = (3,)
MIN_BLOCKS = 2
_INDEX_NODES = ("identifier", "field_expression", "call_expression", "cast_expression")


# ------------------------------------------------------------------- the reading
def _block(site) -> tuple[tuple | None, str]:
    """The launch header's block as (contract, texts, values), or (None, why)."""
    c, values = header_block(site)
    if c is None:
        return None, values
    return (c, tuple(c.block), values), ""


def _builtin(unit, fn, spelling: str) -> list:
    return [n for n in unit.nodes_of_type("field_expression", within=fn.body)
            if " ".join(unit.text(n).split()) == spelling]


def index_uses(site):
    """The reads of the 1-D thread index, each split: ``([(split node, "div" | "mod",
    D)], None)`` or ``(None, why)``. A local holding the index whole (``int t =
    threadIdx.x;``) is read through; the rewrite leaves it dead."""
    unit, fn = site.unit, site.function
    geo = geometry(unit, fn)
    aliases = {n for n, r in geo.roles.items() if r.kind == "thread" and r.split is None
               and r.dim in ("x", "linear")}
    uses, splits = [], []
    for n in unit.walk(fn.body):
        if n.type not in _INDEX_NODES:
            continue
        if n.type == "identifier" and unit.text(n) not in aliases:
            continue
        r = role_of(unit, n)
        if r is None or r.kind != "thread" or r.split is not None or r.dim not in ("x", "linear"):
            continue
        outer = n.parent
        while outer is not None and outer.type in ("parenthesized_expression", "cast_expression"):
            outer = outer.parent
        if any(u.start_byte <= n.start_byte < u.end_byte for u in uses):
            continue  # inside a use already taken (the cast around it)
        uses.append(n)
        if outer is not None and outer.type == "init_declarator" and \
                unit.text(outer.child_by_field_name("declarator")).lstrip("*& ") in aliases:
            continue  # `int tid = threadIdx.x;`: the alias's own definition
        role = role_of(unit, outer) if outer is not None and outer.type == "binary_expression" \
            else None
        if role is None or role.split is None or \
                strip_parens(outer.child_by_field_name("left")).start_byte > n.start_byte:
            return None, (f"`{unit.text(outer if outer is not None else n)[:60]}` reads "
                                f"the thread index other than split into row and column")
        splits.append((outer, role.split[0], role.split[1]))
    divisors = {d for _, _, d in splits}
    if not splits:
        return None, "the kernel does not split its thread index"
    if len(divisors) != 1 or not isinstance(next(iter(divisors)), int):
        return None, f"the thread index is split by {sorted(map(str, divisors))}, not one constant"
    return splits, None


def _warps_change(site, fast: str) -> Verdict:
    if fast == "x":
        return Verdict.yes("every warp keeps its threads (consecutive ranks walk x)")
    defs = definitions()
    found = [op for op in operations(site.unit) if defs[op.name].scope == "warp"]
    if found:
        return Verdict.no(f"the warps change, and the code has warp operations "
                          f"({found[0].spelling}, line {found[0].line})")
    return Verdict.yes("no warp operations: regrouping the warps changes no result")


def shaped(site, p):
    """(edits, new block texts, None) or (None, None, why): the pass's rewrite."""
    got, why = _block(site)
    if got is None:
        return None, None, why
    unit, fn = site.unit, site.function
    _, texts, values = got
    if _builtin(unit, fn, "threadIdx.z") or _builtin(unit, fn, "blockDim.z"):
        return None, None, "the kernel reads threadIdx.z or blockDim.z"
    return (_flatten if p.flattens else _unflatten)(site, p.fast, texts, values)


_LOOSER = {"+", "-", "<<", ">>", "<", "<=", ">", ">=", "==", "!=", "&", "^", "|", "&&", "||"}
_WHOLE = ("argument_list", "init_declarator", "parenthesized_expression", "condition_clause",
          "expression_statement", "return_statement", "subscript_argument_list",
          "assignment_expression")


def _primary(text: str) -> str:
    return text if text.isidentifier() or text.isdigit() else f"({text})"


def _in_place(unit, node, text: str) -> str:
    """``text`` (a product or quotient) where ``node`` stood, parenthesized unless the
    context binds looser (a sum, a comparison, an argument) or it is the left operand of
    another product (``t / 2 * 32`` is ``(t / 2) * 32``)."""
    if text.isidentifier() or text.replace(".", "").isalnum() or text.startswith("("):
        return text
    parent = node.parent
    if parent is None or parent.type in _WHOLE:
        return text
    if parent.type == "subscript_expression" and parent.child_by_field_name("argument") != node:
        return text
    if parent.type == "binary_expression":
        op = unit.text(parent.child_by_field_name("operator"))
        if op in _LOOSER or (op in ("*", "/", "%") and parent.child_by_field_name("left") == node):
            return text
    return f"({text})"


def _flatten(site, fast, texts, values):
    unit, fn = site.unit, site.function
    if len(values) != 2 or values[1] == 1:
        return None, None, f"the block {texts} is not 2-D"
    X, Y = texts
    x, y = (f"threadIdx.x % {_primary(X)}", f"threadIdx.x / {_primary(X)}") if fast == "x" \
        else (f"threadIdx.x / {_primary(Y)}", f"threadIdx.x % {_primary(Y)}")
    new = {"threadIdx.x": x, "threadIdx.y": y, "blockDim.x": _primary(X),
           "blockDim.y": _primary(Y)}
    edits = [Edit(n.start_byte, n.end_byte, _in_place(unit, n, text))
             for spelling, text in new.items() for n in _builtin(unit, fn, spelling)]
    simple = all(e.isidentifier() or e.isdigit() for e in (X, Y))
    return edits, (f"{X}*{Y}" if simple else f"({X})*({Y})",), None


def _unflatten(site, fast, texts, values):
    unit, fn = site.unit, site.function
    if len(values) != 1:
        return None, None, f"the block {texts} is not 1-D"
    for spelling in ("blockDim.x", "threadIdx.y", "blockDim.y"):
        if _builtin(unit, fn, spelling):
            return None, None, f"the kernel reads {spelling}, which a 2-D block changes"
    splits, why = index_uses(site)
    if splits is None:
        return None, None, why
    D, B = splits[0][2], values[0]
    if B % D or B == D:
        return None, None, f"the block of {B} threads is not several rows of {D}"
    axis = {"mod": fast, "div": "y" if fast == "x" else "x"}
    edits = []
    for n, how, _ in splits:
        while n.parent is not None and n.parent.type == "parenthesized_expression":
            n = n.parent  # (t % 8) becomes threadIdx.x, not (threadIdx.x)
        edits.append(Edit(n.start_byte, n.end_byte, f"threadIdx.{axis[how]}"))
    slow = str(B // D)
    dims = (str(D), slow) if fast == "x" else (slow, str(D))
    return edits, (f"({dims[0]}, {dims[1]})",), None


# ------------------------------------------------------------------ preconditions
def _shape(site, ctx, p) -> Verdict:
    edits, block, why = shaped(site, p)
    if edits is None:
        return Verdict.no(why)
    return Verdict.yes(f"block {_block(site)[0][1]} -> {block[0]}")


def _same(site, ctx, p) -> Verdict:
    unit, fn = site.unit, site.function
    try:
        other = rewritten_unit(site, ctx)
    except SkipSite as e:
        return Verdict.no(str(e))
    k = [f.name for f in unit.kernels()].index(fn.name)
    try:
        launches = block_launches(unit, unit.kernels()[k], CHECK_SIZES, MIN_BLOCKS,
                                  binds=ctx.bindings)
    except Unsupported as e:
        return Verdict.unknown(f"the launch cannot be sized: {e}")
    ok, why = same_grid_results(unit, other, fn.name, launches)
    if ok is None:
        return Verdict.unknown(why)
    if not ok:
        return Verdict.no(f"the reshaped block does not do the same: {why}")
    return Verdict.yes(why)


SHAPE = Precondition("block-shape", "layout",
                     "a header contract with a constant block of the pass's shape, its thread "
                     "indices read only as the pass rewrites them",
                     lambda s, c: _shape(s, c, s.pass_))
WARPS = Precondition("warps", "hardware", "no warp operations where the warps change",
                     lambda s, c: _warps_change(s, s.pass_.fast))
SAME = Precondition("same-results", "storage",
                    "the grid machine finds the same stores with both shapes (a grid of "
                    "several blocks)", lambda s, c: _same(s, c, s.pass_),
                    needs=("block-shape", "warps"))


@dataclass(frozen=True)
class _Reshape(Pass):
    abstract = True
    flattens = True
    drop_dead = True

    def rewrite(self, site, ctx):
        edits, _, why = shaped(site, self)
        if edits is None:
            raise SkipSite(why)
        return edits

    def update_contract(self, contract, site, ctx):
        _, block, _ = shaped(site, self)
        return contract if block is None else contract.with_(block=block)

    def inverse_for(self, site, ctx):
        return (UnflattenBlock if self.flattens else FlattenBlock)(fast=self.fast)


@dataclass(frozen=True)
class FlattenBlock(_Reshape):
    """A 2-D block of X x Y threads as a 1-D block of X * Y whose thread index is split
    into the two; ``fast=y`` makes consecutive threads walk the old y axis (a coalescing
    remap when y indexes contiguous memory).

    Before::

        // kltrans: launch k grid=(ceil_div(M, 32), ceil_div(N, 32)) block=(32, 32)
        const int row = blockIdx.x * blockDim.x + threadIdx.x;
        const int col = blockIdx.y * blockDim.y + threadIdx.y;

    After ``flatten-block{fast=y}``::

        // kltrans: launch k grid=(ceil_div(M, 32), ceil_div(N, 32)) block=32 * 32
        const int row = blockIdx.x * (32) + (threadIdx.x / 32);
        const int col = blockIdx.y * (32) + (threadIdx.x % 32);

    Preconditions: block-shape (layout), warps (hardware: which threads form a warp), same-results (storage).

    Options: ``fast`` (the old axis consecutive threads walk).
    """

    name = "flatten-block"
    kind = "optimize"
    inverse = "unflatten-block"
    anchor = KERNEL
    preconditions = (SHAPE, WARPS, SAME)
    flattens = True

    fast: str = option("y", Choice("x", "y"), "the old axis consecutive threads walk")


@dataclass(frozen=True)
class UnflattenBlock(_Reshape):
    """A 1-D block whose thread index is read only split by one constant D as a 2-D
    block, the split's parts as ``threadIdx.x`` and ``threadIdx.y``.

    Before::

        // kltrans: launch k grid=(ceil_div(M, 32), ceil_div(N, 32)) block=32 * 32
        const int row = blockIdx.x * 32 + threadIdx.x / 32;
        const int col = blockIdx.y * 32 + threadIdx.x % 32;

    After ``unflatten-block{fast=y}``::

        // kltrans: launch k grid=(ceil_div(M, 32), ceil_div(N, 32)) block=(32, 32)
        const int row = blockIdx.x * 32 + threadIdx.x;
        const int col = blockIdx.y * 32 + threadIdx.y;

    Preconditions: block-shape (layout), warps (hardware: which threads form a warp), same-results (storage).

    Options: ``fast`` (the new axis that takes ``t % D``).
    """

    name = "unflatten-block"
    kind = "simplify"
    inverse = "flatten-block"
    anchor = KERNEL
    preconditions = (SHAPE, WARPS, SAME)
    flattens = False

    fast: str = option("x", Choice("x", "y"), "the new axis that takes the thread index % D")
