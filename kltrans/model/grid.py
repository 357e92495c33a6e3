"""What a kernel does over its whole grid, and folds read at that level.

:func:`grid_run` runs every block of a launch (the grid read from the launch contract at
concrete sizes) on the block machine (:mod:`kltrans.model.block`) into one memory: the
global stores and the atomics of the whole grid. A kernel that only folds values into one
address with atomics is then summed up by :func:`grid_fold`: over the grid it adds (or
takes the max or min of) ``E(k)`` for every ``k`` below a size parameter, once each, however
the threads share the work: grid-stride loops, pairs of loads ``blockDim.x`` apart,
vector chunks with a scalar tail, a tail done by the first block.

Layering: :mod:`kltrans.model.block`, :mod:`kltrans.model.effects`, :mod:`kltrans.syntax`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kltrans.model.block import (Block, BlockEffects, fold, normal, region_start,
                                 results)
from kltrans.model.effects import Term, Unsupported
from kltrans.model.values import Memo, OutOfTime
from kltrans.syntax.contract import ContractError, contracts, evaluate, file_constants
from kltrans.syntax.unit import Unit

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.syntax.cuda import Function

MAX_GRID_THREADS = 1 << 16


def launch_dims(unit: "Unit", fn: "Function", ints: dict) -> tuple[tuple, tuple]:
    """(grid, block) of ``fn``'s launch contract at the sizes ``ints``, each ``(x, y, z)``;
    :class:`Unsupported` when it cannot be read."""
    c = contracts(unit).get(fn.name)
    if c is None or not 1 <= len(c.grid) <= 3 or not 1 <= len(c.block) <= 3:
        raise Unsupported(f"{fn.name} has no launch contract")
    env = dict(file_constants(unit))
    env.update({k: v for k, v in ints.items() if "." not in k})
    try:
        grid = tuple(evaluate(e, env) for e in c.grid)
        block = tuple(evaluate(e, env) for e in c.block)
    except ContractError as e:
        raise Unsupported(f"the launch cannot be evaluated: {e}") from None
    return grid + (1,) * (3 - len(grid)), block + (1,) * (3 - len(block))


def launch_of(unit: "Unit", fn: "Function", ints: dict) -> tuple[int, int]:
    """(blocks, threads per block) of ``fn``'s 1-D launch contract at the sizes ``ints``;
    :class:`Unsupported` when it cannot be read or is not 1-D."""
    grid, block = launch_dims(unit, fn, ints)
    if grid[1:] != (1, 1) or block[1:] != (1, 1):
        raise Unsupported(f"{fn.name} has no 1-D launch contract")
    return grid[0], block[0]


def grid_run(unit: "Unit", fn: "Function", ints: dict, grid: int | None = None,
             size: int | None = None) -> BlockEffects:
    """The effects of every block of a launch of ``fn`` (the contract's, of one to three
    dimensions, unless a 1-D ``grid`` and ``size`` are given) at the sizes of ``ints``, in
    one memory. A kernel that never synchronizes runs one thread after another; one that
    does runs block by block on the block machine, each block with fresh shared memory."""
    if grid is None or size is None:
        grids, dims = launch_dims(unit, fn, ints)
    else:
        grids, dims = (grid, 1, 1), (size, 1, 1)
    threads = dims[0] * dims[1] * dims[2]
    blocks = grids[0] * grids[1] * grids[2]
    if min(grids + dims) < 1 or blocks * threads > MAX_GRID_THREADS:
        raise Unsupported(f"a grid of {grids} blocks of {dims} threads")
    body = [s for s in fn.body.named_children if s.type != "comment"]
    syncs = region_start(unit, fn) is not None
    fx = BlockEffects()
    shape = {f"gridDim.{a}": g for a, g in zip("xyz", grids)}
    for b in range(blocks):
        at = {"blockIdx.x": b % grids[0], "blockIdx.y": b // grids[0] % grids[1],
              "blockIdx.z": b // (grids[0] * grids[1])}
        blk = Block(unit, fn, dict(ints, **shape, **at), threads, fx, dims)
        if syncs:  # (Block.envs would clear the stores of the blocks before)
            blk.run(body, [th.parameters() for th in blk.threads])
        else:
            blk.run_each(body)
        for key in [k for k in fx.stores if k[0].startswith("shared")]:
            del fx.stores[key]
    return fx


@dataclass(frozen=True)
class GridFold:
    """Over the grid, the kernel folds ``value`` (source text over the index ``index``)
    for every index below the parameter ``bound`` with ``op`` into one address."""

    bound: str
    value: str
    op: str
    index: str


def grid_fold(unit: "Unit", fn: "Function", launches: list[dict], index: str = "i"
              ) -> "GridFold | str":
    """:class:`GridFold` when the kernel's only effect on global memory, at each of
    ``launches``, is atomics on one address whose fold is ``E(0) op ... op E(N-1)``, with
    ``N`` the value of one integer parameter and ``E`` the same expression of the element
    index for every element (read back from the terms as source text, the index named
    ``index``); else why not."""
    found, first = None, None
    for ints in launches:
        try:
            fx = grid_run(unit, fn, ints)
        except Unsupported as e:
            return f"the grid cannot be run: {e}"
        addrs = {(a[0], a[1], a[2]) for a in fx.atomics}
        if len(addrs) != 1:
            return f"the grid's atomics go to {len(addrs)} address(es) or operators, not one"
        base, idx, op = next(iter(addrs))
        stray = [k for k in fx.stores if k != (base, idx)]
        if stray:
            return f"the kernel also stores {stray[0][0]}[{stray[0][1]}]"
        try:
            total = normal(fold(op, [a[3] for a in fx.atomics]))
        except Unsupported as e:
            return str(e)
        fam = {"+": "+", "max": "max", "min": "min"}[op]
        parts = list(total.args[1:]) if isinstance(total, Term) and total.op == "ac" and \
            total.args[0] == fam else [total]
        seen, text = set(), None
        for p in parts:
            ks = {k for k in _loads(p)}
            if len(ks) != 1:
                return "a folded value reads more or fewer than one element index"
            k = ks.pop()
            t = _source(p, k, index)
            if t is None:
                return f"a folded value cannot be written back as source ({p.show(3)})"
            if text not in (None, t):
                return f"the elements are folded as different expressions ({text} and {t})"
            if k in seen:
                return f"element {k} is folded twice"
            text = t
            seen.add(k)
        n = len(seen)
        if seen != set(range(n)):
            return "the folded elements are not 0 .. N-1"
        bounds = {p.name for p in fn.params if p.name and not p.pointer and ints.get(p.name) == n}
        found = bounds if found is None else found & bounds
        if not found:
            return f"no integer parameter is the {n} elements folded"
        if first is not None and first != (text, op):
            return "the fold differs between launches"
        first = (text, op)
    if first is None:
        return "no launch to run"
    return GridFold(sorted(found)[0], first[0], first[1], index)


def same_grid_effects(a: "Unit", b: "Unit", kernel: str, launches: list[dict]
                      ) -> tuple[bool, str]:
    """Whether kernel ``kernel`` of ``a`` and of ``b``, each run over its whole grid at each
    of ``launches`` (:func:`grid_run`), stores the same values (up to reassociation) at the
    same global elements and folds the same into each atomic address; with why not."""
    for ints in launches:
        got = []
        for u in (a, b):
            fn = next((f for f in u.kernels() if f.name == kernel), None)
            if fn is None or fn.body is None:
                return False, f"no kernel {kernel}"
            try:
                ok, res = _grid_results(u, fn, ints)
            except OutOfTime as e:
                return False, f"the grid cannot be run: {e}"
            if ok is not True:
                return ok, res
            got.append(res)
        if got[0] != got[1]:
            what = "atomic folds" if got[0][0] != got[1][0] else "stores"
            return False, f"the {what} of the grid differ"
    return True, f"the same stores and atomic folds over the grid at {len(launches)} launches"


def _grid_results(u: "Unit", fn, ints: dict) -> tuple:
    try:
        fx = grid_run(u, fn, ints)
    except OutOfTime:
        raise
    except Unsupported as e:
        return False, f"the grid cannot be run: {e}"
    try:
        return True, results(fx)
    except OutOfTime:
        raise
    except Unsupported as e:
        return None, f"the grid's results cannot be compared: {e}"


def sized_launches(unit: "Unit", fn: "Function", sizes: tuple[int, ...],
                   grid_size: int = 2, min_blocks: int = 1) -> list[dict]:
    """Launches to compare two versions of ``fn`` at: one per entry of ``sizes``, every
    integer parameter that size, except those that size the grid (the launch contract's
    grid changes when they double), which take ``grid_size`` so that the grid machine
    runs a small grid. A launch of fewer than ``min_blocks`` blocks grows its size
    (``2 s + 1``: an odd size stays odd) until it has them, as far as 2**13. A contract
    that cannot be read leaves every parameter the size."""
    out = []
    for size in sizes:
        while True:
            ints = {p.name: size for p in fn.params if p.name and not p.pointer}
            got, blocks = dict(ints), None
            try:
                base = launch_dims(unit, fn, ints)[0]
                for name in ints:
                    if launch_dims(unit, fn, dict(ints, **{name: 2 * size}))[0] != base:
                        got[name] = grid_size
                blocks = _blocks(unit, fn, got)
                if blocks < min_blocks and _blocks(unit, fn, ints) >= min_blocks:
                    got, blocks = ints, _blocks(unit, fn, ints)  # the size itself sizes it
            except Unsupported:
                pass
            if blocks is None or blocks >= min_blocks or size > 1 << 13:
                break
            size = 2 * size + 1
        out.append(got)
    return out


def block_launches(unit: "Unit", fn: "Function", sizes: tuple[int, ...], min_blocks: int,
                   binds: dict | None = None) -> list[dict]:
    """Launches of ``fn`` at which its block size shows: one per entry of ``sizes``, every
    integer parameter that size except those that size the grid, which grow (``2 s + 1``)
    until the grid has ``min_blocks`` blocks (as far as 2**13). ``binds``: see
    :func:`bind_sizes`. Unsupported when the contract cannot be read."""
    params = [p.name for p in fn.params if p.name and not p.pointer]
    out = []
    for size in sizes:
        def at(grow: list, n: int, size=size) -> dict:
            return bind_sizes(dict(dict.fromkeys(params, size), **dict.fromkeys(grow, n)), binds)

        base = launch_dims(unit, fn, at([], size))[0]
        grow = [n for n in params if launch_dims(unit, fn, at([n], 1 << 14))[0] != base]
        n, ints = size, at([], size)
        while grow and _blocks(unit, fn, ints) < min_blocks and n <= 1 << 13:
            n = 2 * n + 1
            ints = at(grow, n)
        out.append(ints)
    return out


def bind_sizes(ints: dict, binds: dict | None) -> dict:
    """``ints`` with each size a launch contract names after a parameter (``binds``,
    ``{parameter: size}``: the ``binds`` facts, ``grid=ceil_div(rows, 256)`` for a kernel
    that reads ``numRows``) given that parameter's value, unless the kernel has a parameter
    of that name itself."""
    for param, size in (binds or {}).items():
        if param in ints and size not in ints:
            ints[size] = ints[param]
    return ints


def _blocks(unit: "Unit", fn: "Function", ints: dict) -> int:
    g = launch_dims(unit, fn, ints)[0]
    return g[0] * g[1] * g[2]


_SAME = Memo(256)  # (sources, path, kernel, launches) -> same_grid_effects's answer


def same_grid_results(a: "Unit", b: "Unit", kernel: str, launches: list[dict]
                      ) -> tuple[bool | None, str]:
    """:func:`same_grid_effects`, with None (and why) where the grid machine cannot run
    either version; remembered per process by the sources (a search meets one pair of
    programs many times: once per site a precondition checks, again when it rewrites),
    except an answer the time budget cut short."""
    key = (a.source, b.source, a.path, kernel,
           tuple(tuple(sorted(x.items())) for x in launches))

    def compute():
        try:
            return same_grid_effects(a, b, kernel, launches)
        except (Unsupported, RecursionError) as e:
            return None, f"the grid machine cannot run it: {e}"
    return _SAME.get(key, compute)


def _loads(t):
    """The element indices of the loads inside ``t``."""
    stack, out = [t], set()
    while stack:
        x = stack.pop()
        if isinstance(x, Term):
            if x.op == "load":
                out.add(x.args[1])
            else:
                stack.extend(x.args)
    return out


def _source(t, k: int, index: str) -> str | None:
    """``t`` as C source, a load of element ``k`` written ``base[index]``; None for what
    has no source form here."""
    if not isinstance(t, Term):
        return str(t) if isinstance(t, int) else None
    a = t.args
    if t.op == "load":
        return f"{a[0]}[{index}]" if a[1] == k else None
    if t.op == "num":
        v = a[0]
        return f"{v!r}f" if v != int(v) else f"{int(v)}.0f"
    if t.op == "sym":
        return a[0]
    parts = [_source(x, k, index) if isinstance(x, (Term, int)) else None for x in a[1:]]
    if any(p is None for p in parts):
        return None
    if t.op == "op":
        return f"({parts[0]} {a[0]} {parts[1]})"
    if t.op == "ac":
        if a[0] in ("+", "*"):
            return "(" + f" {a[0]} ".join(parts) + ")"
        return None
    if t.op == "unop":
        return f"({a[0]}{parts[0]})"
    if t.op == "call":
        return f"{a[0]}({', '.join(parts)})"
    return None


__all__ = ["GridFold", "grid_fold", "grid_run", "launch_dims", "launch_of", "same_grid_effects"]
