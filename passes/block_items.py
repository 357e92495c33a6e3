"""One item per block: ``cap-blocks`` (optimize) and its inverse ``one-per-block``
(simplify).

A kernel that gives each block one item (a row: ``row = blockIdx.x``, launched with one
block per row) can run on a capped grid instead, each block looping over the items
``row, row + gridDim.x, ...``; a pointer moved to the block's item before the guard
(``x += (size_t)blockIdx.x * cols``) then moves on by the grid's blocks at the end of
every turn. ``one-per-block`` reads such a loop in any spelling the kernel model gives the
kind ``block-grid-stride`` (:mod:`kltrans.model.loops`: it starts at the block index and
steps by the grid's block count) and the launch as ``min(N, cap)``
(:func:`kltrans.model.launch.block_items`).
"""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis.affine import affine_of
from kltrans.analysis.loops import assigned_in, loop_exit
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.model.geometry import role_of
from kltrans.model.grid import same_grid_results
from kltrans.model.launch import block_items
from kltrans.model.loops import loop_fact
from kltrans.passes import Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.passes.manager import SkipSite
from kltrans.passes.rewrite import (contract_of, header_expr, indent_of, indent_step, norm,
                                    remove, statements)
from kltrans.syntax import Edit
from kltrans.syntax.contract import contracts, file_constants, format_contract
from kltrans.syntax.edits import apply_edits

#: the checking launch of cap-blocks: the items, every other integer parameter, the cap
CHECK_ITEMS, CHECK_OTHER, CHECK_CAP = 5, 37, 2


# ------------------------------------------------------------------- one-per-block
def _fact(site):
    f = loop_fact(site.unit, site.node)
    return f if f is not None and f.kind == "block-grid-stride" else None


def _advances(site) -> "list | str":
    """The body's statements that move a variable on by the grid's blocks (the loop's
    ``advances``), or why one cannot go: a variable read after the loop keeps its final
    value only with them."""
    unit, fact = site.unit, _fact(site)
    names = set(fact.advances) - {fact.var}
    moved = set(names)  # and what the update clause moves besides the item (`set ^= 1`)
    upd = site.node.child_by_field_name("update") if site.node.type == "for_statement" \
        else None
    parts = [upd] if upd is not None else []
    while parts and parts[0].type == "comma_expression":
        parts = parts[0].named_children + parts[1:]
    for e in parts:
        t = e.child_by_field_name("left") if e.type == "assignment_expression" else \
            e.child_by_field_name("argument") if e.type == "update_expression" else None
        if t is None or t.type != "identifier":
            return f"the update clause does `{norm(unit.text(e))}`, not a move of a variable"
        moved.add(unit.text(t))
    moved.discard(fact.var)
    out = []
    if fact.loop.body.type != "compound_statement" and names:
        return "the loop's one statement is not a block of statements"
    for s in statements(fact.loop.body):
        e = s.named_children[0] if s.type == "expression_statement" and s.named_children \
            else None
        left = e.child_by_field_name("left") if e is not None and \
            e.type == "assignment_expression" else None
        if left is not None and unit.text(left).strip() in names:
            out.append(s)
    after = site.node.end_byte
    for n in unit.walk(site.function.body):
        if n.type == "identifier" and n.start_byte >= after and unit.text(n) in moved:
            return f"{unit.text(n)} is read after the loop (line {unit.line_col(n.start_byte)[0]})"
    return out


def _block_loop(site, ctx) -> Verdict:
    fact = loop_fact(site.unit, site.node)
    if fact is None or fact.kind != "block-grid-stride":
        return Verdict.no(f"not a loop over the grid's blocks ({fact.reason if fact else '?'})")
    lp = fact.loop
    if lp.cond_op != "<" or lp.bound_node is None:
        return Verdict.no(f"the loop test is not {fact.var} < N")
    if assigned_in(site.unit, lp.body, fact.var):
        return Verdict.no(f"the loop body assigns {fact.var}")
    ex = loop_exit(lp.body)
    if ex is not None:
        return Verdict.no(f"`{site.unit.text(ex)}` leaves the loop: as an if it would not "
                          "compile")
    got = _advances(site)
    if isinstance(got, str):
        return Verdict.no(got)
    return Verdict.yes(f"{fact.var} runs over the items from the block index by the grid's "
                       f"blocks" + (f"; {len(got)} advance(s) go" if got else ""))


def _grid(site):
    """(the contract, the items text, the cap text) or (None, why, None)."""
    c, why = contract_of(site)
    if c is None:
        return None, why, None
    bound = norm(site.unit.text(_fact(site).loop.bound_node))
    got = block_items(c)
    if got.count is None:
        return None, got.reason, None
    if norm(got.count) != bound:
        return None, f"grid={got.text} has a block per {got.count}, not per {bound}", None
    return c, got.count, got.cap


def _covering_grid(site, ctx) -> Verdict:
    c, count, cap = _grid(site)
    if c is None:
        return Verdict.no(count)
    return Verdict.yes(f"grid={count}" + (f" uncapped from min(.., {cap})" if cap else
                                          " already a block per item"))


@dataclass(frozen=True)
class OnePerBlock(Pass):
    """Give every item its own block again: a loop over the grid's blocks becomes a guard.

    Before::

        // kltrans: launch k grid=min(rows, 1024) block=256
        x += (size_t)blockIdx.x * cols;
        for (int row = blockIdx.x; row < rows; row += gridDim.x) {
            BODY
            x += gridDim.x * cols;
        }

    After ``one-per-block``::

        // kltrans: launch k grid=rows block=256
        x += (size_t)blockIdx.x * cols;
        int row = blockIdx.x;
        if (row < rows) {
            BODY
        }

    With a block per item the loop runs at most once per block, so the guard is the same
    computation; the statements that move a variable on by the grid's blocks for the next
    turn (the loop's advances) go, since no variable they move is read after the loop.

    Preconditions: block-loop (layout: the model's ``block-grid-stride`` loop with test
    ``i < N``, a body that does not assign ``i`` and that no ``break``/``continue`` leaves,
    an update clause that only moves variables (``set ^= 1`` flipping a double buffer),
    and no variable the loop moves read after it), covering-grid (hardware: the launch header's
    grid is ``N`` or ``min(N, cap)``).

    Options: none (``inverse_for`` passes the cap to ``cap-blocks``).
    """

    name = "one-per-block"
    kind = "simplify"
    inverse = "cap-blocks"
    anchor = Rule(kind="for_statement", inside_kernel=True)
    preconditions = (
        Precondition("block-loop", "layout",
                     "a loop from the block index by the grid's block count, i < N, whose "
                     "advances are not read after it", _block_loop),
        Precondition("covering-grid", "hardware",
                     "the launch header's grid is N or min(N, cap)", _covering_grid,
                     needs=("block-loop",)),
    )

    def rewrite(self, site, ctx):
        unit, node = site.unit, site.node
        got = _advances(site)
        if isinstance(got, str):
            raise SkipSite(got)
        ind = indent_of(unit, node.start_byte)
        init = node.child_by_field_name("initializer")
        head = f"if ({unit.text(node.child_by_field_name('condition'))})"
        if init is not None:
            text = unit.text(init).rstrip(";")
            head = f"{text};\n{ind}{head}"
        body = node.child_by_field_name("body")
        return [Edit(node.start_byte, body.start_byte, head + " ")] + \
            [remove(unit, s.start_byte, s.end_byte) for s in got]

    def update_contract(self, contract, site, ctx):
        c, count, _ = _grid(site)
        return contract if c is None else contract.with_(grid=(header_expr(count),))

    def inverse_for(self, site, ctx):
        _, _, cap = _grid(site)
        return CapBlocks(max_blocks=cap or "none")


# ---------------------------------------------------------------------- cap-blocks
GUARD = Rule(pattern="if ($I < $N) $BODY;", inside_kernel=True,
             constraints={"I": {"kind": "identifier"}})


def _item_decl(site):
    """The top-level declaration ``T i = <block index>;`` of the guard's item, or why."""
    unit, fn, i = site.unit, site.function, site.text("I")
    if site.node.parent is None or site.node.parent.id != fn.body.id:
        return "the guard is not a statement of the kernel's body"
    if site.node.child_by_field_name("alternative") is not None:
        return "the guard has an else branch"
    decl = None
    for s in statements(fn.body):
        if s.type == "declaration":
            for d in s.children_by_field_name("declarator"):
                if d.type == "init_declarator" and unit.text(
                        d.child_by_field_name("declarator")) == i:
                    decl = (s, d.child_by_field_name("value"))
    if decl is None:
        return f"{i} is not declared in the kernel's body with a value"
    r = role_of(unit, decl[1])
    if r is None or r.kind != "block" or r.split is not None or r.dim not in ("x", "linear"):
        return f"{i} = {norm(unit.text(decl[1]))} is not the block index"
    if assigned_in(unit, fn.body, i):
        return f"the kernel assigns {i}"
    return decl


def _moves(site) -> "list | str":
    """(statement, its advance text) of each statement before the guard that reads the
    block index: ``p += E`` with E the block index times an amount becomes ``p += E'``
    (E with ``gridDim.x`` for the index) at the end of every turn; anything else, why."""
    unit, fn = site.unit, site.function
    decl = _item_decl(site)
    out = []
    for s in statements(fn.body):
        if s.start_byte >= site.node.start_byte:
            break
        if s.id == decl[0].id:
            continue
        idx = [n for n in unit.walk(s) if n.type in ("field_expression", "identifier") and (
            unit.text(n).replace(" ", "") == "blockIdx.x" or unit.text(n) == site.text("I"))]
        if not idx:
            continue
        e = s.named_children[0] if s.type == "expression_statement" and s.named_children \
            else None
        if e is None or e.type != "assignment_expression" or \
                unit.text(e.child_by_field_name("operator")) != "+=" or len(idx) != 1:
            return f"`{norm(unit.text(s))}` reads the block index before the guard"
        right = e.child_by_field_name("right")
        a = affine_of(unit, right, fn)
        b = a.coeff("blockIdx.x") if a is not None else None
        if b is None or (a - b * affine_of(unit, idx[0], fn)).terms:
            return f"`{norm(unit.text(right))}` is not the block index times an amount"
        step = unit.text((right.start_byte, idx[0].start_byte)) + "gridDim.x" + \
            unit.text((idx[0].end_byte, right.end_byte))
        out.append((s, f"{unit.text(e.child_by_field_name('left'))} += {step};"))
    return out


def _block_item(site, ctx) -> Verdict:
    got = _item_decl(site)
    if isinstance(got, str):
        return Verdict.no(got)
    body = site.match.bindings["BODY"]
    for n in site.unit.walk(body):
        if n.type == "return_statement":
            return Verdict.no(f"a return (line {site.unit.line_col(n.start_byte)[0]}) would "
                              "end the block's later items too")
        if n.type == "field_expression" and site.unit.text(n).replace(" ", "") == "blockIdx.x":
            return Verdict.no("the guarded body reads blockIdx.x, not the item")
    moves = _moves(site)
    if isinstance(moves, str):
        return Verdict.no(moves)
    return Verdict.yes(f"{site.text('I')} is the block index" +
                       (f"; {len(moves)} pointer(s) move on by the grid's blocks" if moves else ""))


def _one_per_item(site, ctx) -> Verdict:
    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    got = block_items(c)
    if got.count is None or got.cap is not None:
        return Verdict.no(got.reason or f"grid={got.text} is capped already")
    if norm(got.count) != norm(site.text("N")):
        return Verdict.no(f"grid={got.text} is not a block per {norm(site.text('N'))}")
    return Verdict.yes(f"grid={got.count}: a block per item")


def _known_cap(site, ctx) -> Verdict:
    cap = site.pass_.max_blocks
    if isinstance(cap, int) or cap == "none":
        return Verdict.yes(f"cap {cap}")
    if cap in file_constants(site.unit):
        return Verdict.yes(f"{cap} is a constant of the file")
    return Verdict.no(f"{cap} is not an integer constant of the file")


def _capped(site, ctx, cap) -> "str":
    unit = apply_edits(site.unit, site.pass_.rewrite(site, ctx))
    c = contracts(site.unit).get(site.function.name)
    new = format_contract(c.with_(grid=(f"min({site.text('N')}, {cap})",)))
    old = contracts(unit).get(site.function.name)
    return apply_edits(unit, [Edit(old.start, old.end, new)])


def _same_results(site, ctx) -> Verdict:
    """The capped kernel (cap CHECK_CAP, so that blocks take several items) stores what
    the kernel does, over whole grids (the block machine: races between one turn's reads
    and the next turn's writes of shared memory refuse)."""
    fn = site.function
    ints = {p.name: CHECK_OTHER for p in fn.params if p.name and not p.pointer}
    ints[norm(site.text("N"))] = CHECK_ITEMS
    ok, why = same_grid_results(site.unit, _capped(site, ctx, CHECK_CAP), fn.name, [ints])
    if ok is None:
        return Verdict.unknown(why)
    return Verdict.yes(why) if ok else Verdict.no(f"the capped grid does not do the same: {why}")


@dataclass(frozen=True)
class CapBlocks(Pass):
    """Cap the grid of a kernel with a block per item: each block loops over items.

    Before::

        // kltrans: launch k grid=rows block=256
        x += (size_t)blockIdx.x * cols;
        int row = blockIdx.x;
        if (row < rows) { BODY }

    After ``cap-blocks{max_blocks=1024}``::

        // kltrans: launch k grid=min(rows, 1024) block=256
        x += (size_t)blockIdx.x * cols;
        for (int row = blockIdx.x; row < rows; row += gridDim.x) {
            BODY
            x += (size_t)gridDim.x * cols;
        }

    A statement before the guard that moves a variable to the block's item (``p +=`` the
    block index times an amount) moves it on by the grid's blocks at the end of each turn.
    The item's declaration moves into the loop header when it is the statement just before
    the guard (``const`` dropped), else the loop is ``for (; i < N; i += gridDim.x)``.

    Preconditions: block-item (layout: the guard is a statement of the kernel's body with
    no else, its item declared there as the block index and never assigned, no return in
    the body and no read of blockIdx.x there; statements before it read the block index
    only to move a variable by it), one-per-item (hardware: the launch header's grid is
    N), known-cap (hardware: a cap given by name is a constant of the file), same-results
    (pipeline: with the cap at 2 the block machine sees the same stores at 5 items: it
    refuses a body whose next turn writes shared memory that threads still read).

    Options: ``max_blocks`` (the cap: a number or an integer constant of the file, or
    ``none`` for no cap).
    """

    name = "cap-blocks"
    kind = "optimize"
    inverse = "one-per-block"
    anchor = GUARD
    preconditions = (
        Precondition("block-item", "layout",
                     "a top-level guard on the block index, the pointers before it moved by it",
                     _block_item),
        Precondition("one-per-item", "hardware", "the grid is a block per item",
                     _one_per_item, needs=("block-item",)),
        Precondition("known-cap", "hardware", "a cap given by name is a constant of the file",
                     _known_cap),
        Precondition("same-results", "pipeline",
                     "the capped kernel stores the same (block machine, cap 2, 5 items)",
                     _same_results, needs=("block-item", "one-per-item")),
    )

    max_blocks: int | str = option(
        1024, OneOf(IntRange(1, 2**31 - 1, step_values=(132, 264, 528, 1024, 2048)),
                    Identifier(("none",))),
        "cap of the grid (blocks): a number or an integer constant of the file, or none",
        tune=True)

    def rewrite(self, site, ctx):
        unit, node = site.unit, site.node
        decl, _ = _item_decl(site)
        moves = _moves(site)
        i, n = site.text("I"), site.text("N")
        body = site.match.bindings["BODY"]
        prev = [s for s in statements(site.function.body) if s.end_byte <= node.start_byte]
        ind = indent_of(unit, node.start_byte)
        if prev and prev[-1].id == decl.id:  # the declaration moves into the header
            init = unit.text(decl).replace("const ", "", 1).strip()
            head, start = f"for ({init} {i} < {n}; {i} += gridDim.x) ", decl.start_byte
        else:
            head, start = f"for (; {i} < {n}; {i} += gridDim.x) ", node.start_byte
        inner = ind + indent_step(unit, node)
        tail = "".join(f"\n{inner}{m}" for _, m in moves) + f"\n{ind}}}"
        if body.type == "compound_statement":
            text = unit.text(body)[:-1].rstrip() + tail
        else:
            text = "{\n" + inner + unit.text(body) + tail
        return [Edit(start, node.end_byte, head + text)]

    def update_contract(self, contract, site, ctx):
        if self.max_blocks == "none":
            return contract
        return contract.with_(grid=(f"min({site.text('N')}, {self.max_blocks})",))

    def inverse_for(self, site, ctx):
        return OnePerBlock()
