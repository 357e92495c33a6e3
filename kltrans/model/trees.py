"""Shared-memory tree reductions: how a block's tree loop addresses its slots.

:func:`tree_loop` reads one loop that :mod:`kltrans.model.collectives` calls a block's
shared-memory tree (a ``shared-tree-*`` reduction) as a :class:`Tree`: the array, the loop
variable, the number of slots, the thread's index in the block as the kernel spells it,
the statement that folds one slot into another, the statement guarding it, the barrier
that ends each round, and the addressing order:

- ``interleaved``: ``s`` doubles from 1; the threads whose index is a multiple of ``2 s``
  fold slot ``t + s`` into slot ``t`` (divergent warps);
- ``strided-index``: ``s`` doubles from 1; thread ``t`` folds slot ``2 s t + s`` into slot
  ``2 s t`` (contiguous threads, bank conflicts);
- ``sequential``: ``s`` halves from half the slots; the threads below ``s`` fold slot
  ``t + s`` into slot ``t`` (contiguous threads and words).

Any spelling the model reads: the thread's index through a local, ``threadIdx.x`` or
``block.thread_rank()``; ``>>= 1`` or ``/= 2``; any block barrier; a fold written ``+=``,
``a = a + b`` or ``a = fmaxf(a, b)``; the index of the strided form in a local or inline.
Refused, with a reason: a round that does more than one guarded fold and a barrier, a
fold that also writes something else (``sdata[t] = sum = sum + sdata[t + s]`` keeps the
thread's own slot in a register: the slot a thread writes must not move), other reads of
the array, a loop variable declared outside the loop.

Layering: :mod:`kltrans.model.collectives`, :mod:`kltrans.model.geometry`,
:mod:`kltrans.model.launch`, :mod:`kltrans.analysis`, :mod:`kltrans.syntax`.
:func:`tree_slots` gives the number of slots as a value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kltrans.analysis import Affine, affine_of, barriers
from kltrans.analysis.affine import strip_parens
from kltrans.analysis.loops import loop_of
from kltrans.model.collectives import collectives
from kltrans.model.geometry import role_of
from kltrans.model.launch import block_dim
from kltrans.syntax.contract import ContractError, contracts, evaluate, file_constants
from kltrans.syntax.cuda import enclosing_function, subscript_index

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.analysis.loops import Loop
    from kltrans.syntax.unit import Unit

#: the addressing orders, slowest first
ORDERS = ("interleaved", "strided-index", "sequential")
_HALVE, _DOUBLE = {">>=1", "/=2"}, {"<<=1", "*=2"}


def same_pairs(a: str, b: str) -> bool:
    """Whether trees in orders ``a`` and ``b`` fold the same pairs of slots in the same
    rounds, so that their results are equal in any arithmetic: interleaved and strided
    index both fold slot ``k + s`` into ``k`` for every ``k`` a multiple of ``2 s`` (only
    which thread does it differs); sequential addressing folds other pairs."""
    return a == b or {a, b} == {"interleaved", "strided-index"}


@dataclass(frozen=True)
class Tree:
    """One round loop of a block's shared-memory tree (see the module doc)."""

    loop: "Loop" = field(repr=False)
    order: str
    array: str
    var: str
    var_type: str
    slots: str                 # the number of slots, as written (``blockDim.x``, ``256``)
    thread: str                # the thread's index in the block, as written (``tid``)
    fold: "Node" = field(repr=False)      # the statement folding slot R into slot W
    #: every index of the array in the fold, each with the slot it names: W or R
    indices: tuple = field(repr=False)
    barrier: "Node" = field(repr=False)   # the barrier statement ending each round
    op: str                    # the fold's operator (sum, max, min, ...)
    slots_node: "Node | None" = field(default=None, repr=False)  # None: a constant start

    @property
    def rank(self) -> int:
        """The order's place among :data:`ORDERS` (slowest first)."""
        return ORDERS.index(self.order)


def _text(unit, node) -> str:
    return unit.text(node)


def _body(node) -> list:
    return [c for c in node.named_children if c.type != "comment"] \
        if node.type == "compound_statement" else [node]


def _subscripts(unit, node, array: str) -> list:
    return [n for n in unit.walk(node) if n.type == "subscript_expression"
            and _text(unit, n.child_by_field_name("argument")) == array]


def _thread(unit, nodes) -> "Node | None":
    """The first expression under ``nodes`` that is the thread's index in its block."""
    for top in nodes:
        for n in unit.walk(top):
            if n.type in ("identifier", "field_expression", "call_expression"):
                r = role_of(unit, n)
                if r is not None and r.kind == "thread" and r.dim in ("x", "linear") \
                        and r.split is None:
                    return n
    return None


def _is_barrier(unit, fn, stmt) -> bool:
    if stmt.type != "expression_statement":
        return False
    return any(b.scope in ("block", None) and b.kind != "__syncwarp"
               and stmt.start_byte <= b.node.start_byte < stmt.end_byte
               for b in barriers(unit, fn))


def tree_loop(unit: "Unit", node: "Node") -> tuple[Tree | None, str]:
    """(the tree round loop at ``node``, why) or (None, why not)."""
    tree = next((c for c in collectives(unit) if c.node.id == node.id and c.kind == "reduce"
                 and c.scope == "block" and c.how.startswith("shared-tree")), None)
    if tree is None:
        return None, "not a block's shared-memory tree reduction"
    loop = loop_of(unit, node)
    fn = enclosing_function(unit, node)
    if loop is None or loop.var is None or loop.body is None or fn is None:
        return None, "not a counted loop"
    init = node.child_by_field_name("initializer")
    if init is None or init.type != "declaration":
        return None, f"{loop.var} is declared outside the loop"
    stmts = _body(loop.body)
    if len(stmts) < 2 or not _is_barrier(unit, fn, stmts[-1]):
        return None, "a round does not end with a block barrier"
    guard, decls = stmts[-2], stmts[:-2]
    if guard.type != "if_statement" or guard.child_by_field_name("alternative") is not None:
        return None, "a round is not one guarded fold and a barrier"
    if any(d.type != "declaration" for d in decls):
        return None, "a round does more than fold one slot into another"
    folds = _body(guard.child_by_field_name("consequence"))
    if len(folds) != 1 or folds[0].type != "expression_statement":
        return None, "the guard holds more than one statement"
    fold = folds[0]
    expr = strip_parens(fold.named_children[0]) if fold.named_children else None
    if expr is None or expr.type != "assignment_expression":
        return None, "the guarded statement is not an assignment"
    left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
    if left.type != "subscript_expression":
        return None, "the fold does not write a slot"
    array = _text(unit, left.child_by_field_name("argument"))
    if any(n.type == "assignment_expression" or n.type == "update_expression"
           for n in unit.walk(right)):
        return None, (f"the fold also writes {_text(unit, right).split('=')[0].strip()}: "
                      f"the slot a thread writes must stay where it is")
    written = subscript_index(left)
    t = _thread(unit, [written, guard.child_by_field_name("condition"), *decls]) \
        if written is not None else None
    if t is None:
        return None, "the thread's index in the block is not read"
    # a thread index the polynomial reader does not carry (block.thread_rank()) is a symbol
    env = {} if affine_of(unit, t) is not None else {_text(unit, t): Affine.sym("@thread")}
    wa = affine_of(unit, written, env=env)
    if wa is None:
        return None, "the written slot's index is not affine"
    read, indices = None, [(written, "W")]
    for sub in _subscripts(unit, right, array):
        ra = affine_of(unit, subscript_index(sub), env=env) if subscript_index(sub) is not None else None
        if ra is not None and ra - wa == Affine.sym(loop.var):
            read = subscript_index(sub)
            indices.append((read, "R"))
        elif ra is not None and ra == wa:
            indices.append((subscript_index(sub), "W"))
        else:
            return None, f"the fold reads {_text(unit, sub)}, neither slot of the pair"
    if read is None:
        return None, f"the fold does not read the slot {loop.var} above"
    ta, s = affine_of(unit, t, env=env), Affine.sym(loop.var)
    step = (loop.step_text or "").replace(" ", "")
    slots_node = None
    if step in _HALVE and wa == ta:
        order, slots = "sequential", strip_parens(loop.init_node)
        half = slots.type == "binary_expression" and (
            _text(unit, slots.child_by_field_name("operator")),
            _text(unit, slots.child_by_field_name("right")).rstrip("uU")) in (("/", "2"),
                                                                              (">>", "1"))
        first = loop.init.value() if loop.init is not None else None
        if half:
            slots_node = strip_parens(slots.child_by_field_name("left"))
            slots = _text(unit, slots_node)
        elif first is not None and first > 0 and first & (first - 1) == 0:
            slots = str(2 * first)  # a constant: the first round's half of a known count
        else:
            return None, "the sequential loop does not start at half the slots"
    elif step in _DOUBLE and loop.init is not None and loop.init.value() == 1 \
            and loop.cond_op == "<" and loop.bound_node is not None:
        slots_node = strip_parens(loop.bound_node)
        slots = _text(unit, slots_node)
        if wa == ta:
            order = "interleaved"
        elif wa == Affine.const(2) * s * ta:
            order = "strided-index"
        else:
            return None, "the written slot is neither the thread's nor 2 * s times it"
    else:
        return None, "the loop neither halves from half the slots nor doubles from 1"
    var_type = _text(unit, init.child_by_field_name("type"))
    return Tree(loop, order, array, loop.var, var_type, slots,
                _text(unit, t), fold, tuple(indices), stmts[-1], tree.op, slots_node), \
        f"{order} tree"


def tree_slots(unit: "Unit", tree: Tree, fn) -> int | None:
    """The number of slots of ``tree`` in ``fn`` as a value: a constant (a literal, a macro,
    a ``constexpr``), or the block size of the kernel's launch contract when the loop is
    written over the block (``blockDim.x``, ``block.size()``); None when not known."""
    if tree.slots_node is not None:
        r = role_of(unit, tree.slots_node)
        if r is not None and r.kind == "block-size":
            c = contracts(unit).get(fn.name) if fn is not None else None
            v = block_dim(c).value if c is not None else None
            return v if isinstance(v, int) else None
        a = affine_of(unit, tree.slots_node)
        if a is not None and a.value() is not None:
            return a.value()
    try:
        return evaluate(tree.slots, dict(file_constants(unit)))
    except (ContractError, ValueError, SyntaxError):
        return None


__all__ = ["ORDERS", "Tree", "same_pairs", "tree_loop", "tree_slots"]
