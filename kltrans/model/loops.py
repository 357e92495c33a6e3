"""Loops in any form, classified by what they iterate over.

:func:`loops` lists a function's loops as :class:`LoopFact`; :func:`loop_fact` gives the
one of a loop node (cached per unit). A loop's ``kind`` is

- ``grid-stride``: starts at the thread's global index and steps by the grid's thread
  count (``blockDim.x * gridDim.x`` in any order, a local ``stride``, ``grid.size()``,
  ``cg::this_grid().size()``, ``grid.num_threads()``);
- ``block-stride``: starts at the thread's index in its block and steps by the block's
  size (``blockDim.x``, ``block.size()``, ``block.num_threads()``, a constant or template
  parameter that the launch contract sets the block to);
- ``warp-stride``: starts at the lane and steps by the warp's or tile's width (32,
  ``warpSize``, ``tile.size()``);
- ``block-grid-stride``: starts at the block's index and steps by the grid's block count
  (``for (row = blockIdx.x; row < rows; row += gridDim.x)``: a block per item over a
  capped grid);
- ``halving`` / ``doubling``: the variable is halved (``s >>= 1``, ``s /= 2``,
  ``s = s / 2``, ``s = s >> 1``) or doubled (``s *= 2``, ``s <<= 1``, ``s = s * 2``,
  ``s = 2 * s``) each iteration;
- ``counted``: any other loop with an induction variable, a comparison and a constant
  additive step;
- ``unknown``: the rest, with the reason.

The loop's shape (``for``, ``while``, ``do … while``, the step in the update clause or as
a statement of the body, ``i++``, ``i += s``, ``i = i + s``, ``i = s + i``) is read by
:mod:`kltrans.analysis.loops`; the start's and the step's roles by
:mod:`kltrans.model.geometry`. ``advances`` lists what else the loop moves by a
loop-invariant amount each iteration (``A += BK; B += BK * N;`` gives ``{"A": "BK",
"B": "BK * N"}``): updates in the update clause and unconditional statements directly in
the body, of a variable other than the induction variable, by an amount that reads no
variable the loop assigns, no memory and no call.

Not recognized: a range-based ``for``; a loop whose variable is stepped more than once
per iteration or also inside a branch of the body (``unknown``); a grid-stride loop
written over a 2-D grid; advances made inside a branch or through a pointer to a pointer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from kltrans.analysis import Loop, affine_of, assigned_in
from kltrans.analysis import loop_of as analysis_loop_of
from kltrans.analysis import loops as analysis_loops
from kltrans.analysis.affine import LOOP_NODE_TYPES, strip_parens
from kltrans.model.geometry import Role, block_size_explain, role_explain
from kltrans.syntax.cuda import enclosing_function

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

KINDS = ("grid-stride", "block-stride", "warp-stride", "block-grid-stride", "halving",
         "doubling", "counted", "unknown")
_HALVING = {(">>=", 1), ("/=", 2)}
_DOUBLING = {("<<=", 1), ("*=", 2)}
_CALLS_OK = ("static_cast",)  # casts are not calls
_WHAT = {"global": "the global index", "thread": "the thread's index in its block",
         "lane": "the lane", "grid-size": "the grid's thread count",
         "block-size": "the block size", "warp-size": "the warp's width",
         "block": "the block's index", "grid-blocks": "the grid's block count"}


@dataclass(frozen=True)
class LoopFact:
    """What a loop iterates over.

    ``kind`` is one of :data:`KINDS`; ``var`` the induction variable; ``start`` and
    ``step`` the roles (:class:`~kltrans.model.geometry.Role`) of its initial value and
    additive step, when they have one; ``step_text`` the update as an operator and amount
    (``"+=stride"``, ``">>=1"``); ``trip_count`` when init, bound and step are constants;
    ``advances`` maps each other variable the loop moves by a loop-invariant amount to
    that amount's text; ``reason`` says why the kind was given (or why it is unknown).
    """

    kind: str
    var: str | None
    start: Role | None
    step: Role | None
    step_text: str | None
    trip_count: int | None
    line: int
    reason: str = ""
    advances: Mapping[str, str] = field(default_factory=dict, compare=False)
    node: "Node | None" = field(default=None, compare=False, repr=False)
    loop: Loop | None = field(default=None, compare=False, repr=False)


def loops(unit: "Unit", fn: "Function") -> list[LoopFact]:
    """Every loop of ``fn`` (pre-order), classified."""
    return [f for f in (loop_fact(unit, lp.node) for lp in analysis_loops(unit, fn))
            if f is not None]


def loop_fact(unit: "Unit", loop_node: "Node") -> LoopFact | None:
    """The :class:`LoopFact` of a ``for``/``while``/``do`` node (None for other nodes)."""
    if loop_node is None or loop_node.type not in LOOP_NODE_TYPES:
        return None
    cache = unit.memo("model.loops", lambda u: {})
    if loop_node.id not in cache:
        try:
            cache[loop_node.id] = _classify(unit, loop_node)
        except Exception as e:  # never raise on odd code
            why = "too deeply nested to analyse" if isinstance(e, RecursionError) else \
                f"cannot read the loop ({type(e).__name__})"
            cache[loop_node.id] = LoopFact("unknown", None, None, None, None, None,
                                           unit.location(loop_node.start_byte).line, why,
                                           node=loop_node)
    return cache[loop_node.id]


# ------------------------------------------------------------------ classification
def _classify(unit: "Unit", node: "Node") -> LoopFact:
    lp = analysis_loop_of(unit, node)
    base = dict(line=unit.location(node.start_byte).line, node=node, loop=lp)
    if lp is None or lp.var is None:
        return LoopFact("unknown", None, None, None, None, None,
                        reason=(lp.reason if lp else None) or "no induction variable", **base)
    start = role_explain(unit, lp.init_node)[0] if lp.init_node is not None else None
    step, step_why = None, ""
    if lp.step_op == "+=" and lp.step is not None and lp.step_node is not None:
        step, step_why = role_explain(unit, lp.step_node)
    kind, why = _kind(unit, lp, start, step, _amount(unit, lp))
    if kind == "counted" and start is not None and step is None and step_why:
        why += f"; {step_why}"
    return LoopFact(kind, lp.var, start, step, lp.step_text, lp.trip_count, reason=why,
                    advances=_advances(unit, lp), **base)


def _amount(unit: "Unit", lp: Loop) -> int | None:
    if lp.step_node is None:
        return 1 if lp.step_op in ("+=", "-=") else None
    a = affine_of(unit, lp.step_node)
    return a.value() if a is not None else None


def _kind(unit: "Unit", lp: Loop, start: Role | None, step: Role | None,
          amount: int | None) -> tuple[str, str]:
    op = lp.step_op
    if op is None:
        return "unknown", lp.reason or f"{lp.var} has no constant step"
    if (op, amount) in _HALVING:
        return "halving", f"{lp.var} is halved each iteration ({lp.step_text})"
    if (op, amount) in _DOUBLING:
        return "doubling", f"{lp.var} is doubled each iteration ({lp.step_text})"
    if op not in ("+=", "-=") or lp.step is None:
        return "unknown", lp.reason or f"the step {lp.step_text} is not additive"
    says = ""
    if start is not None:
        says = f"starts at {_WHAT.get(start.kind, start.kind)} ({start.reason}) and steps by " \
               f"{_WHAT.get(step.kind, step.kind) if step else 'a constant'} ({lp.step_text[2:]})"
    if start is not None and op == "+=":
        if start.kind == "global" and start.split is None and step is not None and \
                step.kind == "grid-size" and _dims_fit(start.dim, step.dim):
            return "grid-stride", says
        if start.kind == "thread" and start.split is None and _block_step(unit, lp, start, step):
            return "block-stride", says
        if start.kind == "lane" and _warp_step(start, step, amount):
            return "warp-stride", says
        if start.kind == "block" and start.split is None and step is not None and \
                step.kind == "grid-blocks" and step.split is None and \
                _dims_fit(start.dim, step.dim):
            return "block-grid-stride", says
    if lp.counted:
        return "counted", f"{lp.var} steps by {lp.step_text[2:]}" + (
            f" from {start.reason} (not a stride of the geometry)" if start else "")
    return "unknown", lp.reason or "no comparison with a bound"


def _dims_fit(a: str, b: str) -> bool:
    return a == b or "linear" in (a, b)


def _block_step(unit: "Unit", lp: Loop, start: Role, step: Role | None) -> bool:
    if step is not None:
        return step.kind == "block-size" and step.split is None and _dims_fit(start.dim, step.dim)
    if lp.step is not None and lp.step.is_const():  # a literal the launch contract confirms
        fn = enclosing_function(unit, lp.node)
        return start.dim in ("x", "linear") and block_size_explain(unit, fn, lp.step)[0]
    return False


def _warp_step(start: Role, step: Role | None, amount: int | None) -> bool:
    width = start.width or 32
    if step is not None and step.kind == "warp-size" and step.split is None:
        return step.width in (None, width)
    return amount == width


# ------------------------------------------------------------------------ advances
def _advances(unit: "Unit", lp: Loop) -> dict[str, str]:
    """Variables other than the induction variable moved by a loop-invariant amount."""
    out: dict[str, str] = {}
    exprs = []
    if lp.node.type == "for_statement":
        exprs.extend(_comma_parts(lp.node.child_by_field_name("update")))
    body = lp.body
    stmts = body.named_children if body is not None and body.type == "compound_statement" \
        else [body] if body is not None else []
    for s in stmts:
        if s.type == "expression_statement" and s.named_child_count == 1:
            exprs.extend(_comma_parts(s.named_children[0]))
    for e in exprs:
        got = _advance(unit, lp, strip_parens(e))
        if got is None:
            continue
        name, amount = got
        out[name] = "?" if name in out else amount
    return {k: v for k, v in out.items() if v != "?"}


def _comma_parts(node: "Node | None") -> list["Node"]:
    """``a, b, c`` as its parts (a comma expression nests to the left)."""
    if node is None:
        return []
    if node.type != "comma_expression":
        return [node]
    return [p for c in node.named_children for p in _comma_parts(c)]


def _advance(unit: "Unit", lp: Loop, e: "Node") -> tuple[str, str] | None:
    """``(name, amount)`` for ``p += k``, ``p -= k``, ``p = p + k``, ``p = k + p``, ``++p``."""
    if e.type == "update_expression":
        arg = strip_parens(e.child_by_field_name("argument"))
        op = unit.text(e.child_by_field_name("operator"))
        if arg is None or arg.type != "identifier" or unit.text(arg) == lp.var:
            return None
        return unit.text(arg), "1" if op == "++" else "-1"
    if e.type != "assignment_expression":
        return None
    left = strip_parens(e.child_by_field_name("left"))
    right = e.child_by_field_name("right")
    if left is None or left.type != "identifier" or right is None:
        return None
    name, op = unit.text(left), unit.text(e.child_by_field_name("operator"))
    if name == lp.var:
        return None
    amount = None
    if op in ("+=", "-="):
        amount = right
    elif op == "=":  # p = p + k, p = p - k, p = k + p
        r = strip_parens(right)
        bop = unit.text(r.child_by_field_name("operator")) if r.type == "binary_expression" else ""
        if bop in ("+", "-"):
            a, b = r.child_by_field_name("left"), r.child_by_field_name("right")
            if _is_name(unit, a, name):
                amount, op = b, bop + "="
            elif bop == "+" and _is_name(unit, b, name):
                amount, op = a, "+="
    if amount is None or not _invariant(unit, lp, amount, name):
        return None
    text = " ".join(unit.text(amount).split())
    if op == "+=":
        return name, text
    simple = strip_parens(amount).type in ("identifier", "number_literal")
    return name, f"-{text}" if simple else f"-({text})"


def _is_name(unit: "Unit", node: "Node", name: str) -> bool:
    node = strip_parens(node)
    return node is not None and node.type == "identifier" and unit.text(node) == name


def _names(unit: "Unit", node: "Node") -> set[str]:
    return {unit.text(n) for n in unit.walk(node) if n.type == "identifier"}


def _invariant(unit: "Unit", lp: Loop, amount: "Node", target: str) -> bool:
    """Whether ``amount`` is the same on every iteration: no call, load or side effect,
    and no variable the loop assigns."""
    for n in unit.walk(amount):
        if n.type in ("subscript_expression", "assignment_expression", "update_expression",
                      "pointer_expression"):
            return False
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            if f is None or not unit.text(f).startswith(_CALLS_OK):
                return False
    declared = {unit.text(n) for d in unit.nodes_of_type("init_declarator", within=lp.node)
                for n in [d.child_by_field_name("declarator")] if n is not None}
    for name in _names(unit, amount):
        if name in (lp.var, target) or name in declared or assigned_in(unit, lp.node, name):
            return False  # a local of the body takes a new value each iteration
    return True
