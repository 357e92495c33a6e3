"""The addressing of a block's shared-memory tree: ``tree-order`` (optimize) and its
inverse ``interleave-tree`` (simplify).

A tree reduction folds a block's slots in rounds. Interleaved addressing (the threads
whose index is a multiple of ``2 s`` fold slot ``t + s`` into ``t``) leaves the active
threads scattered over every warp; handing pair ``2 s t`` to thread ``t`` (strided index)
keeps them contiguous but makes the slots a warp touches ``2 s`` words apart (bank
conflicts); sequential addressing (the threads below ``s`` fold slot ``t + s`` into ``t``,
``s`` halving) has neither. Sequential addressing folds other pairs, so the sum comes out
in another order; interleaved and strided index fold the same pairs
(:func:`kltrans.model.trees.same_pairs`). The tree is read by the kernel model (:func:`kltrans.model.trees.tree_loop`) in
any spelling; the pass rewrites its round loop from templates and keeps the fold, the
thread's index and the barrier as the kernel writes them.
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.equivalence import same_model
from kltrans.model.trees import ORDERS, same_pairs, tree_loop, tree_slots
from kltrans.passes import Choice, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import fresh_name, indent_of, render, splice
from kltrans.syntax import Edit
from kltrans.syntax.edits import apply_edits

_EXACT = ("max", "min", "and", "or", "xor")  # folds whose result no order changes
_INTEGER = ("int", "unsigned", "long", "short", "char", "size_t", "int32_t", "uint32_t",
            "int64_t", "uint64_t")
_LOOP = """\
{% if order == "sequential" %}for ({{ ty }} {{ s }} = {{ half }}; {{ s }} > 0; {{ s }} >>= 1) {
{% else %}for ({{ ty }} {{ s }} = 1; {{ s }} < {{ n }}; {{ s }} *= 2) {
{% endif %}{% if order == "strided-index" %}{{ step }}{{ ity }} {{ i }} = 2 * {{ s }} * {{ t }};
{{ step }}if ({{ i }} < {{ n }}) {
{% elif order == "interleaved" %}{{ step }}if ({{ t }} % (2 * {{ s }}) == 0) {
{% else %}{{ step }}if ({{ t }} < {{ s }}) {
{% endif %}{{ step }}{{ step }}{{ fold }}
{{ step }}}
{{ step }}{{ barrier }}
}"""


def _tree(site):
    return tree_loop(site.unit, site.node)


def _paren(text: str) -> str:
    return text if text.replace(".", "").replace("_", "").isalnum() or \
        text.endswith("()") and "(" not in text[:-2] else f"({text})"


def _slots(site) -> int | None:
    return tree_slots(site.unit, _tree(site)[0], site.function)


def loop_text(site, order: str, index_type: str = "loop") -> str:
    """The tree's round loop written in ``order`` (a strided index declared with the round
    variable's type, or ``index_type`` when it is not ``loop``)."""
    unit = site.unit
    tree, why = _tree(site)
    if tree is None:
        raise SkipSite(why)
    w = tree.thread
    i = fresh_name(unit, site.function.node, ("index", "pair", "slot")) \
        if order == "strided-index" else None
    new_w = i if i is not None else w
    fold = splice(unit, tree.fold, [
        (n.start_byte, n.end_byte, new_w if which == "W" else f"{new_w} + {tree.var}")
        for n, which in tree.indices])
    outer, inner = indent_of(unit, site.node.start_byte), indent_of(unit, tree.barrier.start_byte)
    step = inner[len(outer):] if inner.startswith(outer) and len(inner) > len(outer) else "    "
    return render(_LOOP, outer, order=order, ty=tree.var_type,
                  ity=tree.var_type if index_type == "loop" else index_type,
                  s=tree.var, n=_paren(tree.slots), t=_paren(w),
                  half=str(int(tree.slots) // 2) if tree.slots.isdigit() else
                  f"{_paren(tree.slots)} / 2", i=i, fold=fold,
                  barrier=unit.text(tree.barrier), step=step)


# ------------------------------------------------------------------ preconditions
def _is_tree(site, ctx) -> Verdict:
    tree, why = _tree(site)
    return Verdict.yes(why) if tree is not None else Verdict.no(why)


def _moves(site, ctx) -> Verdict:
    tree, _ = _tree(site)
    want = ORDERS.index(site.pass_.order)
    better = site.pass_.kind == "optimize"
    if (want > tree.rank) if better else (want < tree.rank):
        return Verdict.yes(f"{tree.order} to {site.pass_.order}")
    return Verdict.no(f"the tree is already {tree.order}: {site.pass_.order} is not "
                      f"{'faster' if better else 'slower'}")


def _power_of_two(site, ctx) -> Verdict:
    n = _slots(site)
    if n is None:
        return Verdict.unknown(f"the number of slots ({_tree(site)[0].slots}) is not known: "
                               f"set the block in the launch contract")
    if n < 2 or n & (n - 1):
        return Verdict.no(f"{n} slots is not a power of two: the orders fold different slots")
    return Verdict.yes(f"{n} slots")


def _reassoc(site, ctx) -> Verdict:
    tree, _ = _tree(site)
    if tree.op in _EXACT:
        return Verdict.yes(f"a {tree.op} fold comes out the same in any order")
    if same_pairs(tree.order, site.pass_.order):
        return Verdict.yes(f"{tree.order} and {site.pass_.order} addressing fold the same "
                           f"pairs in the same rounds")
    decl = next((d for d in site.unit.shared_decls() if d.name == tree.array), None)
    if tree.op == "sum" and decl is not None and any(t in decl.type for t in _INTEGER):
        return Verdict.yes(f"an integer sum ({decl.type}) comes out the same in any order")
    if ctx.assumed("reassoc"):
        return Verdict.yes("the workload's tolerance allows reassociated float folds")
    return Verdict.unknown("the pairs are folded in another order: float sums need "
                           "--assume reassoc")


def _same_results(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    try:
        new = apply_edits(unit, [Edit(site.node.start_byte, site.node.end_byte,
                                      loop_text(site, site.pass_.order,
                                                getattr(site.pass_, "index_type", "loop")))])
    except SkipSite as e:
        return Verdict.no(str(e))
    ok, why = same_model(unit, new, fn.name)
    return Verdict.yes(why) if ok else Verdict.no(f"the block machine: {why}")


PRECONDITIONS = (
    Precondition("tree-loop", "layout",
                 "a block's shared-memory tree: one guarded fold of slot t + s into t and a "
                 "barrier per round (the kernel model reads it)", _is_tree),
    Precondition("order-moves", "pipeline",
                 "the asked order is faster (optimize) or slower (simplify) than the tree's",
                 _moves),
    Precondition("power-of-two-slots", "hardware",
                 "the number of slots is a known power of two", _power_of_two),
    Precondition("reduction-ops", "dtype",
                 "the fold is exact in any order, or reassociation is allowed", _reassoc),
    Precondition("same-results", "storage",
                 "the rewritten kernel stores and folds the same for a block (block machine)",
                 _same_results),
)


@dataclass(frozen=True)
class TreeOrder(Pass):
    """Re-address a block's shared-memory tree: strided index or sequential addressing.

    Before::

        for (unsigned int s = 1; s < blockDim.x; s *= 2) {
            if (tid % (2 * s) == 0) sdata[tid] += sdata[tid + s];
            __syncthreads();
        }

    After ``tree-order`` (``order=sequential``)::

        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) {
                sdata[tid] += sdata[tid + s];
            }
            __syncthreads();
        }

    Preconditions: tree-loop (layout: the kernel model reads the loop as a block's tree),
    order-moves (the asked order is faster than the tree's: interleaved, strided index,
    sequential), power-of-two-slots (hardware), reduction-ops (dtype: max, min, bitwise
    and integer folds are exact, interleaved and strided index fold the same pairs; other
    float sums need --assume reassoc), same-results
    (storage: the block machine runs both kernels).

    Options: ``order`` (``sequential``, the default, or ``strided-index``), ``index-type``
    (strided index: ``loop``, the round variable's type, the default, or ``int``).
    """

    name = "tree-order"
    kind = "optimize"
    inverse = "interleave-tree"
    anchor = Rule(kind="for_statement")
    preconditions = PRECONDITIONS

    order: str = option("sequential", Choice("sequential", "strided-index"),
                        "the addressing the tree's rounds get", tune=True)
    index_type: str = option("loop", Choice("loop", "int"),
                             "strided-index: the type of the pair's index (loop: the round "
                             "variable's)")

    def rewrite(self, site, ctx):
        return [Edit(site.node.start_byte, site.node.end_byte,
                     loop_text(site, self.order, self.index_type))]

    def inverse_for(self, site, ctx):
        return InterleaveTree(order=_tree(site)[0].order)


@dataclass(frozen=True)
class InterleaveTree(Pass):
    """A block's shared-memory tree back to interleaved (or strided-index) addressing.

    Before::

        for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (tid < s) sdata[tid] += sdata[tid + s];
            __syncthreads();
        }

    After ``interleave-tree``::

        for (unsigned int s = 1; s < blockDim.x; s *= 2) {
            if (tid % (2 * s) == 0) {
                sdata[tid] += sdata[tid + s];
            }
            __syncthreads();
        }

    Preconditions: as ``tree-order``, order-moves asking for a slower order.

    Options: ``order`` (``interleaved``, the default, or ``strided-index``).
    """

    name = "interleave-tree"
    kind = "simplify"
    inverse = "tree-order"
    anchor = Rule(kind="for_statement")
    preconditions = PRECONDITIONS

    order: str = option("interleaved", Choice("interleaved", "strided-index"),
                        "the addressing the tree's rounds get")

    def rewrite(self, site, ctx):
        return [Edit(site.node.start_byte, site.node.end_byte, loop_text(site, self.order))]

    def inverse_for(self, site, ctx):
        tree = _tree(site)[0]
        return TreeOrder(order=tree.order, index_type=_index_type(site.unit, tree))


def _index_type(unit, tree) -> str:
    """How a strided-index tree declares its pair's index: ``int``, else as its round
    variable (``loop``)."""
    for d in unit.nodes_of_type("declaration", within=tree.loop.node):
        for decl in d.children_by_field_name("declarator"):
            name = decl.child_by_field_name("declarator") \
                if decl.type == "init_declarator" else decl
            if unit.text(name) == tree.thread:
                return "int" if unit.text(d.child_by_field_name("type")) == "int" else "loop"
    return "loop"
