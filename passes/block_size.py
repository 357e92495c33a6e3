"""Block size: ``grow-block`` (optimize) and its inverse ``shrink-block`` (simplify).

Many kernels do not depend on their block size: every thread finds its work from the
global index (or its warp's), and the grid is sized to cover the work
(``grid=ceil_div(n, 128) block=128``). Their block size is a tuning choice: a larger block
gives the scheduler fewer, larger blocks; a smaller one more blocks for small problems.
These passes change the block size in the kernel's ``// kltrans: launch`` header and
re-size the grid to cover the same work (``ceil_div(rows * 32, 128)`` with 256 threads is
``ceil_div(rows * 32, 256)``; a grid of ``ceil_div(rows, 256 / 32)`` warps per block keeps
its threads per item). The kernel's code is not touched; whether it really does not
depend on the block size is the grid machine's answer (:func:`kltrans.model.grid.
same_grid_effects`): both launches must store the same over a whole grid at small sizes.
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.effects import Unsupported
from kltrans.model.grid import block_launches, same_grid_results
from kltrans.model.launch import block_dim, grid_dim
from kltrans.passes import IntRange, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import contract_of, header_expr
from kltrans.syntax.contract import ContractError, contracts, evaluate, format_contract
from kltrans.syntax.edits import apply_edits
from kltrans.syntax import Edit

KERNEL = Rule(kind="function_definition", regex=r"\b__global__\b")
#: the block sizes a search tries (any size from 32 to 1024 may be asked for): each try
#: runs the grid machine over two blocks of the larger size, which costs seconds at 1024
SIZES = IntRange(32, 1024, (64, 128, 256, 512))
#: the checking launches: every size parameter one of these, those that size the grid
#: grown until the larger block's grid has MIN_BLOCKS blocks
CHECK_SIZES = (3,)
MIN_BLOCKS = 2


# ------------------------------------------------------------------- the reading
def resized(site, threads: int):
    """(the contract with ``threads`` per block and its grid covering the same work,
    None) or (None, why not)."""
    c, why = contract_of(site)
    if c is None:
        return None, why
    b = block_dim(c)
    if not isinstance(b.value, int):
        return None, f"the block {b.text} has no constant value"
    g = grid_dim(c)
    if not g.covers or g.per_block is None or g.covering_text is None or \
            g.covering_text not in g.text:
        return None, f"the grid {g.text} is not read as covering a count (ceil_div(n, per block))"
    per = g.per_block.value
    if isinstance(per, int) and per > 0 and per % b.value == 0:
        new_per = threads * (per // b.value)  # several items per thread
    elif isinstance(per, int) and per > 0 and b.value % per == 0 and \
            threads % (b.value // per) == 0:
        new_per = threads // (b.value // per)  # several threads per item (a warp per row)
    else:
        return None, (f"the grid's {g.per_block.text} items per block are neither a multiple "
                      f"of the block {b.text} nor the block divided by a count that divides "
                      f"{threads}")
    fn = "CEIL_DIV" if "CEIL_DIV(" in g.covering_text else "ceil_div"
    grid = g.text.replace(g.covering_text, f"{fn}({g.count}, {new_per})", 1)
    return c.with_(grid=(header_expr(grid),) + tuple(c.grid[1:]), block=(str(threads),)), ""


def _index(unit, fn) -> int:
    return [f.name for f in unit.kernels()].index(fn.name)


def _current(site) -> int | None:
    c, _ = contract_of(site)
    return block_dim(c).value if c is not None else None


# ------------------------------------------------------------------ preconditions
def _direction(site, ctx, p) -> Verdict:
    now = _current(site)
    if now is None:
        return Verdict.no(contract_of(site)[1] or "the block has no constant value")
    if now == p.threads:
        return Verdict.no(f"the block is already {now} threads")
    if (p.threads > now) != p.grows:
        return Verdict.no(f"{p.threads} threads is not {'more' if p.grows else 'fewer'} "
                          f"than the block's {now}: that is {p.inverse}")
    return Verdict.yes(f"{now} -> {p.threads} threads")


def _bounds(site, ctx, p) -> Verdict:
    bounds = site.function.launch_bounds
    if not bounds:
        return Verdict.yes("no __launch_bounds__")
    c, _ = contract_of(site)
    try:
        most = evaluate(bounds[0], dict(c.constants) if c is not None else {})
    except ContractError:
        return Verdict.unknown(f"__launch_bounds__({bounds[0]}) has no constant value")
    if most < p.threads:
        return Verdict.no(f"__launch_bounds__({bounds[0]}) allows at most {most} threads")
    return Verdict.yes(f"__launch_bounds__({bounds[0]}) allows {p.threads}")


def _same(site, ctx, p) -> Verdict:
    new, why = resized(site, p.threads)
    if new is None:
        return Verdict.no(why)
    unit, fn = site.unit, site.function
    c, _ = contract_of(site)
    other = apply_edits(unit, [Edit(c.start, c.end, format_contract(new))])
    larger = other if p.grows else unit  # both grids of several blocks
    try:
        launches = block_launches(larger, larger.kernels()[_index(unit, fn)], CHECK_SIZES,
                                  MIN_BLOCKS, binds=ctx.bindings)
    except Unsupported as e:
        return Verdict.unknown(f"the launch cannot be sized: {e}")
    ok, why = same_grid_results(unit, other, fn.name, launches)
    if ok is None:
        return Verdict.unknown(why)
    if not ok:
        return Verdict.no(f"with {p.threads} threads per block it does not do the same: {why}")
    return Verdict.yes(f"{p.threads} threads per block: {why}")


SIZE = Precondition("block-size", "layout",
                    "a 1-D header contract whose block has a constant size, moved the pass's "
                    "way", lambda s, c: _direction(s, c, s.pass_))
BOUNDS = Precondition("launch-bounds", "hardware", "no __launch_bounds__ below the new size",
                      lambda s, c: _bounds(s, c, s.pass_))
SAME = Precondition("same-results", "storage",
                    "the grid covers the same work, and the grid machine finds the same stores "
                    "at both block sizes (a launch of two blocks of the larger)",
                    lambda s, c: _same(s, c, s.pass_), needs=("block-size",))


@dataclass(frozen=True)
class _Resize(Pass):
    abstract = True
    grows = True

    @classmethod
    def goal_options(cls, goal):
        """The goal's block sizes: a search needs no other (each try runs the grid machine)."""
        try:
            found = contracts(goal)
        except Exception:
            return []
        sizes = {block_dim(c).value for c in found.values()}
        return [{"threads": v} for v in sorted(x for x in sizes if isinstance(x, int))
                if SIZES.contains(v)]

    def rewrite(self, site, ctx):
        new, why = resized(site, self.threads)
        if new is None:
            raise SkipSite(why)
        return []  # the header alone changes (update_contract)

    def update_contract(self, contract, site, ctx):
        new, _ = resized(site, self.threads)
        return contract if new is None else new

    def inverse_for(self, site, ctx):
        return (ShrinkBlock if self.grows else GrowBlock)(threads=_current(site))


@dataclass(frozen=True)
class GrowBlock(_Resize):
    """A larger block: the launch header's block size, with the grid re-sized to cover the
    same work; the kernel must not depend on its block size (the grid machine checks).

    Before::

        // kltrans: launch k grid=ceil_div(rows * 32, 128) block=128

    After ``grow-block{threads=256}``::

        // kltrans: launch k grid=ceil_div(rows * 32, 256) block=256

    Preconditions: block-size (layout: a header contract with a constant block smaller
    than ``threads``), launch-bounds (hardware), same-results (storage: the grid machine
    stores the same at both sizes).

    Options: ``threads`` (the new block size).
    """

    name = "grow-block"
    kind = "optimize"
    inverse = "shrink-block"
    anchor = KERNEL
    preconditions = (SIZE, BOUNDS, SAME)
    grows = True

    threads: int = option(256, SIZES, "threads per block", tune=True)


@dataclass(frozen=True)
class ShrinkBlock(_Resize):
    """A smaller block: the launch header's block size, with the grid re-sized to cover
    the same work; the kernel must not depend on its block size (the grid machine checks).

    Before::

        // kltrans: launch k grid=ceil_div(rows, 256 / 32) block=256

    After ``shrink-block{threads=128}``::

        // kltrans: launch k grid=ceil_div(rows, 4) block=128

    Preconditions: block-size (layout: a header contract with a constant block larger
    than ``threads``), same-results (storage).

    Options: ``threads`` (the new block size).
    """

    name = "shrink-block"
    kind = "simplify"
    inverse = "grow-block"
    anchor = KERNEL
    preconditions = (SIZE, SAME)  # a smaller block is within any __launch_bounds__
    grows = False
    walked = False  # a block size is a tuning choice, not a mechanism a walk removes

    threads: int = option(128, SIZES, "threads per block", tune=True)
