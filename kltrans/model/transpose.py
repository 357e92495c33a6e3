"""A 2-D transpose, in any spelling: ``out[c * rows + r] = in[r * cols + c]`` for each
element, directly or through a shared-memory tile.

:func:`transpose_of` reads a kernel's accesses (:func:`kltrans.model.accesses.accesses`)
and says whether the kernel is a transpose copy and of which shape: exactly one global
read (``in``) and one global write (``out``) of single elements, and either no shared
memory (a *direct* copy) or one shared array written once and read once (a *staged*
copy). Each global index splits into ``S * P + Q``: ``S`` the one size parameter it holds
(the row length of that array), ``P`` and ``Q`` over thread and block ids, loop counters
and constants. The input's ``P`` is the element's row and its ``Q`` the column; the block
id in ``Q`` names the launch axis that runs along an input row.

For a direct copy the model checks the transposition itself: the output's row is the
input's column and its column the input's row (``P_out == Q_in``, ``Q_out == P_in``),
whatever the names, casts or order of the index expressions. For a staged copy the element
a thread writes was loaded by another thread, so the indices cannot be compared; the fact
gives the extent of input a block covers (the block id's coefficient per axis: the tile)
and leaves the proof to the caller, who runs both kernels over a whole grid
(:func:`kltrans.model.grid.same_grid_effects`). Guards are not read here either: a
kernel's bounds are part of what that run compares.

Layering: :mod:`kltrans.model.accesses`, :mod:`kltrans.analysis` (Affine).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kltrans.analysis.affine import Affine
from kltrans.model.accesses import accesses

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

_AXES = ("x", "y")


@dataclass(frozen=True)
class Transpose:
    """``dst[c * rows + r] = src[r * cols + c]``: ``rows`` and ``cols`` are size
    parameters (the input is ``rows x cols``); ``col_axis`` is the launch axis whose block
    id walks the input's columns; ``span`` the (rows, columns) of input one block covers
    (a tile when staged); ``tile`` the shared array of a staged copy, else None."""

    src: str
    dst: str
    elem: str | None
    rows: str
    cols: str
    col_axis: str
    span: tuple[int | None, int | None]
    tile: str | None = None

    @property
    def row_axis(self) -> str:
        return "y" if self.col_axis == "x" else "x"


def _split(index: Affine, sizes: set[str]) -> tuple[str, Affine, Affine] | None:
    """``index`` as ``S * P + Q`` with ``S`` its one size symbol, or None."""
    strides = {s for mono in index.terms for s in mono if s in sizes}
    if len(strides) != 1:
        return None
    (stride,) = strides
    p: dict = {}
    q: dict = {}
    for mono, c in index.terms.items():
        if mono.count(stride) > 1 or len([s for s in mono if s in sizes]) > mono.count(stride):
            return None
        if stride in mono:
            rest = list(mono)
            rest.remove(stride)
            p[tuple(rest)] = c
        else:
            q[mono] = c
    return stride, Affine(p), Affine(q)


def _block_axis(part: Affine) -> tuple[str | None, int | None]:
    """The one block id ``part`` moves with, and its coefficient: the input one block
    spans on that axis (None for ``blockDim``: the block's own extent)."""
    found = []
    for mono, c in part.terms.items():
        ids = [s for s in mono if s.startswith("blockIdx.")]
        if not ids:
            continue
        axis = ids[0][-1]
        if len(ids) > 1 or axis not in _AXES:
            return None, None
        if mono == (ids[0],):
            found.append((axis, c))
        elif sorted(mono) == sorted((ids[0], f"blockDim.{axis}")) and c == 1:
            found.append((axis, None))
        else:
            return None, None
    return found[0] if len(found) == 1 else (None, None)


def transpose_of(unit: "Unit", fn: "Function") -> tuple[Transpose | None, str]:
    """The transpose ``fn`` is (see the module doc), or None and why not."""
    acc = accesses(unit, fn)
    glob = [a for a in acc if a.space == "global"]
    shared = [a for a in acc if a.space == "shared"]
    reads = [a for a in glob if a.mode == "read"]
    writes = [a for a in glob if a.mode == "write"]
    if len(reads) != 1 or len(writes) != 1 or len(glob) != 2:
        return None, (f"{len(reads)} global read(s) and {len(writes)} write(s) of "
                      f"{len(glob)} global access(es): a transpose reads one array and "
                      "writes another, once each")
    (rd,), (wr,) = reads, writes
    if rd.base is None or wr.base is None or rd.base == wr.base:
        return None, "the read and the write are not of two known arrays"
    if rd.width != 1 or wr.width != 1 or rd.index is None or wr.index is None:
        return None, "the copy is not of single elements at affine indices"
    if rd.elem_type != wr.elem_type:
        return None, f"{rd.base} holds {rd.elem_type}, {wr.base} holds {wr.elem_type}"
    tile = None
    if shared:
        bases = {a.base for a in shared}
        modes = sorted(a.mode for a in shared)
        if len(bases) != 1 or None in bases or modes != ["read", "write"]:
            return None, "shared memory is used otherwise than one tile written and read once"
        tile = bases.pop()
    sizes = {p.name for p in fn.params if p.name and not p.pointer and not p.array}
    ri, wi = _split(rd.index, sizes), _split(wr.index, sizes)
    if ri is None or wi is None:
        return None, ("an index is not `row * S + column` over one size parameter S "
                      f"({rd.base}: {rd.index}; {wr.base}: {wr.index})")
    (cols, p_in, q_in), (rows, p_out, q_out) = ri, wi
    (row_axis, row_span), (col_axis, col_span) = _block_axis(p_in), _block_axis(q_in)
    if row_axis is None or col_axis is None or row_axis == col_axis:
        return None, (f"the input's row ({p_in}) and column ({q_in}) do not move with one "
                      "block id each, on different axes")
    if tile is None and (p_out != q_in or q_out != p_in):
        return None, (f"{wr.base}[{wr.index}] does not store {rd.base}[{rd.index}] at its "
                      "transposed place")
    if tile is not None and (_block_axis(p_out)[0] != col_axis or
                             _block_axis(q_out)[0] != row_axis):
        return None, "the output's rows do not follow the input's columns block by block"
    return Transpose(src=rd.base, dst=wr.base, elem=rd.elem_type, rows=rows, cols=cols,
                     col_axis=col_axis, span=(row_span, col_span), tile=tile), ""


__all__ = ["Transpose", "transpose_of"]
