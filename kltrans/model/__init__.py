"""The kernel model: what a CUDA unit does, independent of how it is spelled.

Passes and analyses ask the model for facts ("where are the warp shuffles, on which
group, with which offset") instead of matching text, so a pass written against one
spelling applies to every other. Results are computed once per unit (``Unit.memo``).

- :mod:`~kltrans.model.ops` — the operations of ``spellings.yaml`` (barriers, shuffles,
  votes, warp and block reductions, thread/lane/warp indices, asynchronous copies,
  atomics), each declared once with every spelling it has (intrinsics, legacy forms,
  cooperative-groups members and free functions under any namespace alias), and the
  cooperative groups they act on.
- :mod:`~kltrans.model.geometry` — thread geometry: which expressions are the thread's,
  block's, global, lane and warp indices (and the block, grid and warp extents), through
  locals, macros, cooperative groups, ``/`` and ``%`` splits into rows and columns; the
  polynomial of an index with those spellings read as builtins (``geometry_affine``).
- :mod:`~kltrans.model.loops` — loops of every form and increment, classified as grid-,
  block- or warp-stride, halving, doubling or counted, with trip counts and the pointers
  each iteration advances.
- :mod:`~kltrans.model.accesses` — every global and shared load and store: the array it
  reaches through aliases, casts, accessor structs and pointer advances, its element type,
  its width (vector views) and its index as a polynomial.
- :mod:`~kltrans.model.launch` — launch geometry: each grid dimension of a launch
  contract read as the count it covers, the elements per block and a cap
  (``min(ceil_div(n, 4 * BLOCK), MAX_BLOCKS)``, ``(n + 255) / 256``), numbers resolved
  through the file's constants.
- :mod:`~kltrans.model.effects` — what a region does to memory for one thread: the value
  stored at each element as a term over the loads it reads, run at concrete sizes and
  thread ids, so differently spelled regions compare by what they store.
- :mod:`~kltrans.model.block` — what a region does for a whole block: every thread run,
  barriers, shuffles, ``cg::reduce`` and atomics honoured, shared memory shared; block folds
  of any spelling (``leader_fold``) and kernels compared by what a block does.
- :mod:`~kltrans.model.grid` — every block of a launch run into one memory; a kernel's fold
  over the grid read back as ``E(k)`` for ``k < N`` (``grid_fold``).
- :mod:`~kltrans.model.collectives` — reductions and scans across a warp, a block and the
  grid (shuffle loops in any spelling and in helpers, ``cg::reduce``, shared-memory trees,
  warp slots, leader atomics, Hillis–Steele, Blelloch, look-back), and synchronizations.
- :mod:`~kltrans.model.trees` — a block's shared-memory tree loop: its array, slots and
  addressing order (interleaved, strided index, sequential).
- :mod:`~kltrans.model.staging` — the load phase before a block's tree: the value each
  thread stages in its slot as a fold of guarded loads a block apart (first add during load).
- :mod:`~kltrans.model.copies` — shared arrays that only hold a copy (one store of a pure
  value): what each read of one stands for, as an expression of the reading thread.
- :mod:`~kltrans.model.mechanisms` — the marks the naive check reads, and the kinds of
  mechanism a kernel uses.
- :mod:`~kltrans.model.equivalence` — two spellings of one kernel compared by launches,
  kinds of mechanism and effects (``same_model``).

Layering: this package imports :mod:`kltrans.syntax`, the public names of
:mod:`kltrans.analysis`, PyYAML and the standard library.
"""

from kltrans.model.ops import Group, Op, OpDef, definitions, group_of, mechanisms, operations

__all__ = ["Group", "Op", "OpDef", "definitions", "group_of", "mechanisms", "operations"]
