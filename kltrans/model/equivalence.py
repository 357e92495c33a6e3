"""Two spellings of one kernel: model equivalence.

Human-written versions of a kernel spell the same program in their own way, so a pass's
result is rarely the next version token for token, nor always the same machine code.
:func:`same_model` says whether two units' kernel does the same, as the model reads it:

1. the same launches (:func:`kltrans.model.launch.same_launch`);
2. with ``mechanisms``, the same kinds of mechanism
   (:func:`kltrans.model.mechanisms.mechanism_kinds`: shared memory, a warp reduction,
   vector types, unroll pragmas ... in any spelling, the technique aside);
3. the same effects: one block run on the block machine (:func:`kltrans.model.block.
   same_effects`) stores and folds the same at each launch, or else, with the same kinds
   of collectives, the whole grid (:func:`kltrans.model.grid.same_grid_effects`) stores
   the same values at the same elements and folds the same into each atomic address (the
   work may be shared out among the blocks otherwise). Values compare as terms over the
   inputs, up to reassociation (the caller's gate decides whether that is allowed).

:func:`check_launches` gives the launches: each integer parameter a size drawn per
launch (:func:`kltrans.model.effects.draws`), the known ones (``fixed``) kept; an inner
size of both kernels (:func:`inner_sizes`: a bound of counted loops only, named by no
launch extent, such as a matrix product's k) takes a small value (:data:`INNER`), since
every thread of the block runs its loop; the grid is run at small sizes
(:data:`GRID_SIZES`), where a whole 2-D launch fits the machine.

Layering: :mod:`kltrans.model.block`, :mod:`kltrans.model.grid`, :mod:`kltrans.model.launch`,
:mod:`kltrans.model.mechanisms`, :mod:`kltrans.syntax`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kltrans.model.block import same_effects
from kltrans.model.collectives import collectives
from kltrans.model.effects import draws
from kltrans.model.grid import bind_sizes, launch_dims, same_grid_effects
from kltrans.model.launch import block_dim, same_launch
from kltrans.model.loops import loops
from kltrans.model.mechanisms import mechanism_kinds
from kltrans.model.values import Memo, Unsupported
from kltrans.syntax.contract import contracts

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.syntax.unit import Unit

_WORD = re.compile(r"[A-Za-z_]\w*")

#: the sizes of the grid runs: every integer parameter not fixed, at each launch
GRID_SIZES = (37, 70)


def check_launches(fn, size: int | None, fixed: dict | None = None, count: int = 2,
                   binds: dict | None = None) -> list[dict]:
    """``count`` launches of ``fn`` for a block of ``size`` threads, ``fixed`` values kept;
    ``binds`` (``{parameter: size}``): each size the launch contract names takes its
    parameter's value."""
    out = draws(fn, size, seed=0, count=count)
    for ints in out:
        ints.update(fixed or {})
        bind_sizes(ints, binds)
    return out


#: the values an inner size (:func:`inner_sizes`) takes at the block machine's launches:
#: past a tile of 64 and a partial one, with other remainders modulo 16
INNER = (67, 88)


def inner_sizes(units, kernel: str, contract, binds: dict | None = None) -> set:
    """The integer parameters of ``kernel`` that are *inner* sizes in every unit: bounds of
    counted loops only (the k loop of a matrix product, a thread-per-row kernel's column
    loop), named by no extent of the launch (directly or through ``binds``). The block
    machine draws them small: past a few tiles, a larger one adds loop turns to every
    thread and no case; sizes that size the grid or that threads stride over keep their
    draws."""
    named = set()
    if contract is not None:
        for text in (*contract.grid, *contract.block, contract.smem):
            named |= set(_WORD.findall(text))
    fns = [next((f for f in u.kernels() if f.name == kernel), None) for u in units]
    if any(f is None or f.body is None for f in fns):
        return set()
    out = set()
    for p in fns[-1].params:
        if not p.name or p.pointer or p.name in named or (binds or {}).get(p.name) in named:
            continue
        kinds = [lf.kind for u, f in zip(units, fns) for lf in loops(u, f)
                 if lf.loop is not None and lf.loop.bound is not None
                 and p.name in lf.loop.bound.free_symbols()]
        if kinds and all(k == "counted" for k in kinds):
            out.add(p.name)
    return out


def _small(launches: list[dict], fixed: dict, binds: dict | None = None) -> list[dict]:
    out = []
    sizes = {s for p, s in (binds or {}).items() if s != p}   # binds(rows,rows) binds nothing
    for ints, v in zip(launches, GRID_SIZES * len(launches)):
        out.append(bind_sizes({k: (x if "." in k or k in fixed else v)
                               for k, x in ints.items() if k not in sizes}, binds))
    return out


def _at_launch(unit: "Unit", fn, ints: dict) -> dict:
    """``ints`` with the grid the launch contract gives at those sizes (the drawn one where
    it cannot be read), the block's index taken modulo it: one block then takes the turns
    of a grid-strided loop it takes when launched (a block per row over ``grid=rows`` runs
    one row, not the dozens a drawn grid of 2 to 8 blocks would give it)."""
    try:
        grid, _ = launch_dims(unit, fn, ints)
    except Unsupported:
        return ints
    out = dict(ints)
    for axis, g in zip("xyz", grid):
        out[f"gridDim.{axis}"] = g
        out[f"blockIdx.{axis}"] = ints.get(f"blockIdx.{axis}", 0) % g
    return out


#: answers of :func:`same_model` by the two sources and the question: a search meets the
#: same pair of programs many times, and a block run of hundreds of threads is slow
_ANSWERS = Memo(4096)


def same_model(a: "Unit", b: "Unit", kernel: str, fixed: dict | None = None,
               mechanisms: bool = False, same_kinds: bool = True,
               binds: dict | None = None) -> tuple[bool, str]:
    """Whether ``kernel`` of ``a`` and of ``b`` is one program as the model reads it (see
    the module doc), with why (not). ``same_kinds=False``: the block run alone decides,
    whatever the kinds of collective (:func:`kltrans.model.block.same_effects`).
    ``binds`` (``{parameter: size}``, the ``binds`` facts): the workload size a parameter
    carries, for launch contracts written in the sizes (``grid=ceil_div(rows, 256)`` of a
    kernel that reads ``numRows``). Answers are remembered per process by both sources
    and the question."""
    key = (bytes(a.source), bytes(b.source), kernel, tuple(sorted((fixed or {}).items())),
           mechanisms, same_kinds, tuple(sorted((binds or {}).items())))
    return _ANSWERS.get(key, lambda: _same_model(a, b, kernel, fixed, mechanisms,
                                                 same_kinds, binds))


def _same_model(a, b, kernel, fixed, mechanisms, same_kinds, binds) -> tuple[bool, str]:
    fixed = fixed or {}
    if not same_launch(a, b)[0]:
        return False, "the launches differ"
    if mechanisms:
        ka, kb = mechanism_kinds(a), mechanism_kinds(b)
        if ka != kb:
            diff = sorted(ka ^ kb)
            return False, f"the mechanisms differ ({', '.join(diff[:3])})"
    fn = next((f for f in b.kernels() if f.name == kernel), None)
    if fn is None:
        return False, f"no kernel {kernel}"
    c = contracts(b).get(kernel)
    size = block_dim(c).value if c is not None else None
    launches = check_launches(fn, size if isinstance(size, int) else None, fixed, binds=binds)
    for k, ints in enumerate(launches):
        for p in inner_sizes((a, b), kernel, c, binds) - set(fixed):
            ints[p] = INNER[k % len(INNER)]
            if (binds or {}).get(p) in ints:
                ints[binds[p]] = ints[p]
    why = "no block size"
    if isinstance(size, int):
        ok, why = same_effects(a, b, kernel, [_at_launch(b, fn, x) for x in launches], size,
                               same_kinds)
        if ok or not same_kinds:
            return ok, why
    kinds = [{(c.scope, c.kind) for c in collectives(u) if c.scope != "thread"}
             for u in (a, b)]
    if kinds[0] != kinds[1]:
        return False, why
    return same_grid_effects(a, b, kernel, _small(launches, fixed, binds))


__all__ = ["GRID_SIZES", "check_launches", "same_model"]
