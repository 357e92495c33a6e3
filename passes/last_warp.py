"""The last warp of a block's tree: ``unroll-last-warp`` (optimize) and its inverse
``roll-last-warp`` (simplify).

Once a sequential shared-memory tree is down to 64 live slots, only warp 0 has work left:
its last six rounds need no block barrier, no loop counter and no ``tid < s`` branch.
Harris' reduction #5 stops the tree loop at ``s > 32`` and lets warp 0 finish in straight
code. The tree is read by the kernel model (:func:`kltrans.model.trees.tree_loop`); the
finishing rounds are written from a template, each round's reads separated from its writes
by ``__syncwarp()`` (lanes of a warp do not run in lockstep since Volta). The inverse
reads the finish in any spelling (a ``volatile`` helper, shuffles, inline rounds): it runs
the loop down to ``s > 0`` again and drops the finish, and the block machine
(:func:`kltrans.model.equivalence.same_model`) checks that the kernel still does the same.
Either way the same pairs are folded in the same order: no fact about reassociation.
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis import affine_of
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.accesses import accesses
from kltrans.model.collectives import collectives
from kltrans.model.equivalence import same_model
from kltrans.model.geometry import role_of
from kltrans.model.trees import tree_loop, tree_slots
from kltrans.passes import Pass, Precondition
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import (drop_unused_definitions, fresh_name, indent_of,
                                    remove_described, render, splice)
from kltrans.syntax import Edit
from kltrans.syntax.edits import apply_edits

WARP = 32
_FINISH = """\
if ({{ t }} < {{ warp }}) {
{{ step }}{{ ty }} {{ v }} = {{ a }}[{{ t }}];
{% for fold in folds %}{{ step }}{{ fold }}
{{ step }}__syncwarp();
{{ step }}{{ a }}[{{ t }}] = {{ v }};
{% if not loop.last %}{{ step }}__syncwarp();
{% endif %}{% endfor %}}"""


def _tree(site):
    tree, why = tree_loop(site.unit, site.node)
    if tree is None:
        raise SkipSite(why)
    if tree.order != "sequential":
        raise SkipSite(f"the tree is {tree.order}: only a sequential tree ends in warp 0")
    return tree


def _stop(site) -> int | None:
    """The ``C`` of the loop's condition ``s > C`` (``s >= 1`` is ``s > 0``)."""
    loop = _tree(site).loop
    b = affine_of(site.unit, loop.bound_node) if loop.bound_node is not None else None
    v = b.value() if b is not None else None
    if v is None:
        return None
    return v if loop.cond_op == ">" else v - 1 if loop.cond_op == ">=" else None


def _after(site):
    """The statement after the tree loop (comments skipped), or None."""
    n = site.node.next_named_sibling
    while n is not None and n.type == "comment":
        n = n.next_named_sibling
    return n


def _finish(site):
    """The statement after the loop when it holds a warp's reduction (any spelling)."""
    n = _after(site)
    if n is None or n.type != "if_statement":
        return None
    fn = site.function
    if any(c.scope == "warp" and c.kind == "reduce" and n.start_byte <= c.node.start_byte
           < n.end_byte for c in collectives(site.unit, fn)):
        return n
    return None


def _slots(site) -> int | None:
    return tree_slots(site.unit, _tree(site), site.function)


def finish_text(site) -> str:
    """The inline rounds of warp 0 after the loop (see the module doc)."""
    unit, tree = site.unit, _tree(site)
    n = _slots(site)
    v = fresh_name(unit, site.function.node, ("v", "val", "acc"))
    rounds = [s for s in (32, 16, 8, 4, 2, 1) if s < n]
    folds = []
    for s in rounds:
        reps = []
        for idx, which in tree.indices:
            sub = idx.parent.parent if idx.parent.type == "subscript_argument_list" \
                else idx.parent
            reps.append((sub.start_byte, sub.end_byte, v) if which == "W" else
                        (idx.start_byte, idx.end_byte, f"{tree.thread} + {s}"))
        folds.append(splice(unit, tree.fold, reps))
    write = next((a for a in accesses(unit, site.function)
                  if tree.fold.start_byte <= a.node.start_byte < tree.fold.end_byte), None)
    ty = (write.elem_type if write is not None else None) or "auto"
    outer, inner = indent_of(unit, site.node.start_byte), indent_of(unit, tree.barrier.start_byte)
    step = inner[len(outer):] if inner.startswith(outer) and len(inner) > len(outer) else "    "
    return render(_FINISH, outer, t=tree.thread, warp=WARP, ty=ty, v=v, a=tree.array,
                  folds=folds, step=step)


def _rewritten(site):
    p = site.pass_
    return apply_edits(site.unit, p.rewrite(site, None))


# ------------------------------------------------------------------ preconditions
def _is_tree(site, ctx) -> Verdict:
    try:
        tree = _tree(site)
    except SkipSite as e:
        return Verdict.no(str(e))
    return Verdict.yes(f"a sequential tree over {tree.array}")


def _loop_end(site, ctx) -> Verdict:
    stop = _stop(site)
    if site.pass_.kind == "optimize":
        if stop != 0:
            return Verdict.no(f"the loop stops at s > {stop}, not s > 0: the last rounds "
                              "are already done otherwise")
        n = _slots(site)
        if n is None or n & (n - 1):
            return Verdict.no(f"{n or 'an unknown number of'} slots: warp 0 finishes only a "
                              "tree of a known power of two of slots")
        if n < 4 * WARP:
            return Verdict.no(f"{n} slots: the loop would keep no round above warp 0 (a "
                              f"tree of at least {4 * WARP} slots is needed)")
        return Verdict.yes(f"{n} slots; the loop stops at s > {WARP} instead")
    if stop is None or stop <= 0 or stop > WARP:
        return Verdict.no(f"the loop stops at s > {stop}: no warp finishes the tree")
    if _finish(site) is None:
        return Verdict.no("no warp reduction follows the loop")
    return Verdict.yes(f"the loop stops at s > {stop}; a warp finishes the last rounds")


def _leader_reads(site, ctx) -> Verdict:
    unit, tree = site.unit, _tree(site)
    for n in unit.walk(site.function.body):
        if n.start_byte < site.node.end_byte or n.type != "subscript_expression" or \
                unit.text(n.child_by_field_name("argument")) != tree.array:
            continue
        p, led = n.parent, False
        while p is not None and p.id != site.function.body.id:
            c = p.child_by_field_name("condition") if p.type == "if_statement" else None
            c = c.named_children[0] if c is not None and c.type == "condition_clause" else c
            if c is not None and c.type == "parenthesized_expression":
                c = c.named_children[0]
            if c is not None and c.type == "binary_expression" and \
                    unit.text(c.child_by_field_name("operator")) == "==":
                sides = [c.child_by_field_name(k) for k in ("left", "right")]
                roles = [role_of(unit, x) for x in sides]
                vals = [affine_of(unit, x) for x in sides]
                led |= any(r is not None and r.kind == "thread" for r in roles) and \
                    any(a is not None and a.value() == 0 for a in vals)
            p = p.parent
        if not led:
            return Verdict.no(f"line {unit.line_col(n.start_byte)[0]} reads {tree.array} "
                              "outside thread 0: without the last barriers it would race")
    return Verdict.yes(f"only thread 0 reads {tree.array} after the tree")


def _same_results(site, ctx) -> Verdict:
    try:
        new = _rewritten(site)
    except SkipSite as e:
        return Verdict.no(str(e))
    ok, why = same_model(site.unit, new, site.function.name, same_kinds=False)
    return Verdict.yes(why) if ok else Verdict.no(f"the block machine: {why}")


_TREE = Precondition("sequential-tree", "layout",
                     "a block's sequential shared-memory tree (the kernel model reads it)",
                     _is_tree)
_SAME = Precondition("same-results", "pipeline",
                     "the rewritten kernel stores and folds the same for a block (block "
                     "machine)", _same_results)
UNROLL = (_TREE,
          Precondition("loop-end", "hardware",
                       "the loop runs to s > 0 over a known power of two, >= 128, of slots",
                       _loop_end),
          Precondition("leader-reads", "storage",
                       "after the tree only thread 0 reads the slots", _leader_reads),
          _SAME)
ROLL = (_TREE,
        Precondition("loop-end", "hardware",
                     "the loop stops at s > W <= 32 and a warp reduction follows", _loop_end),
        _SAME)


@dataclass(frozen=True)
class UnrollLastWarp(Pass):
    """Finish a sequential shared-memory tree in warp 0, without block barriers.

    Before::

        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) sdata[tid] += sdata[tid + s];
            __syncthreads();
        }

    After ``unroll-last-warp``::

        for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) { ... }
        if (tid < 32) {
            float v = sdata[tid];
            v += sdata[tid + 32];
            __syncwarp();
            sdata[tid] = v;
            __syncwarp();
            ...
            v += sdata[tid + 1];
            __syncwarp();
            sdata[tid] = v;
        }

    Preconditions: sequential-tree (layout: the kernel model reads the loop as a
    sequential tree), loop-end (hardware: it runs to ``s > 0`` over a known power of two,
    at least 128, of slots, so that the loop keeps a round above warp 0), leader-reads
    (storage: after the tree only thread 0 reads the slots, so the dropped barriers order
    nothing else), same-results (pipeline: the block machine runs both kernels).

    Options: none.
    """

    name = "unroll-last-warp"
    kind = "optimize"
    inverse = "roll-last-warp"
    anchor = Rule(kind="for_statement", inside_kernel=True)
    preconditions = UNROLL

    def rewrite(self, site, ctx):
        unit, loop = site.unit, _tree(site).loop
        return [Edit(loop.bound_node.start_byte, loop.bound_node.end_byte, str(WARP)),
                Edit(site.node.end_byte, site.node.end_byte,
                     "\n" + indent_of(unit, site.node.start_byte) + finish_text(site))]

    def inverse_for(self, site, ctx):
        return RollLastWarp()


@dataclass(frozen=True)
class RollLastWarp(Pass):
    """Run a block's sequential tree down to one slot again: drop warp 0's finish.

    Before::

        for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) { ... }
        if (tid < 32) warpReduce(sdata, tid);

    After ``roll-last-warp``::

        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) { ... }

    The finish may be spelled any way the kernel model reads as a warp's reduction (a
    ``volatile`` helper, inline rounds, shuffles); a helper left unused goes too.

    Preconditions: sequential-tree (layout), loop-end (hardware: the loop stops at ``s >
    W``, ``W`` at most 32, and a warp reduction follows it), same-results (pipeline: the
    block machine runs both kernels).

    Options: none.
    """

    name = "roll-last-warp"
    kind = "simplify"
    inverse = "unroll-last-warp"
    anchor = Rule(kind="for_statement", inside_kernel=True)
    preconditions = ROLL

    def rewrite(self, site, ctx):
        unit, loop = site.unit, _tree(site).loop
        fin = _finish(site)
        if fin is None:
            raise SkipSite("no warp reduction follows the loop")
        edits = [Edit(loop.bound_node.start_byte, loop.bound_node.end_byte, "0"),
                 remove_described(unit, fin)]
        return edits + drop_unused_definitions(unit, [(fin.start_byte, fin.end_byte)])

    def inverse_for(self, site, ctx):
        return UnrollLastWarp()
