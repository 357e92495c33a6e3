"""Grid-stride loops: ``grid-stride`` (optimize) and its inverse ``one-per-thread`` (simplify).

``grid-stride`` starts from the element-wise guard (``if (i < n) BODY`` with ``i`` the
global index), whose reading and shared preconditions are the engine's
(:mod:`kltrans.passes.guard`); ``one-per-thread`` from a grid-stride loop.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kltrans.analysis.affine import affine_of, sources
from kltrans.analysis.loops import assigned_in, loop_exit
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.predicates import pure
from kltrans.passes import Bool, Choice, Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.model.launch import block_dim, grid_dim
from kltrans.syntax import Edit
from kltrans.passes.guard import (
    GLOBAL_INDEX, GRID_SIZE, GUARD, GUARD_PRECONDITIONS, PER_THREAD, check_sole_work, guarded,
    index_decl)
from kltrans.passes.rewrite import (
    call_parts, contract_of, dead_declarations, declared_names, header_expr,
    indent_of as line_indent, inside, int_text, norm, remove_described, statements, unwrap)
from kltrans.model.effects import draws
from kltrans.model.grid import grid_fold

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

STRIDE = "blockDim.x * gridDim.x"
LOOP_STRIDES = {"bg": STRIDE, "gb": "gridDim.x * blockDim.x"}
FOLD_OPS = {"+=": "+", "|=": "|", "&=": "&", "^=": "^"}
FOLD_ATOMIC = {"+": "atomicAdd", "|": "atomicOr", "&": "atomicAnd", "^": "atomicXor"}
_ZEROS = re.compile(r"^(?:0+|0*\.0*|0+\.0*)[fFuUlL]*$")


def folded_atomic(unit, fn, stmt, body, loop) -> "str | None":
    """Why ``stmt`` (after the loop or guard ``loop`` whose body is ``body``) is not the
    one atomic that publishes a per-thread fold; None when it is: ``atomicOp(P, acc);``
    with P thread-independent, ``acc`` a local declared before ``loop`` with the
    operator's identity (0), folded by ``body`` only with ``acc op= ...``, and not used
    anywhere else. Then the number of threads and which thread folds which element do
    not change the total (up to float rounding)."""
    if stmt.type != "expression_statement" or not stmt.named_children or \
            stmt.named_children[0].type != "call_expression":
        return "it is not an atomic call"
    call = stmt.named_children[0]
    f = unit.text(call.child_by_field_name("function"))
    args = [c for c in call.child_by_field_name("arguments").named_children if c.type != "comment"]
    if f not in FOLD_ATOMIC.values() or len(args) != 2 or args[1].type != "identifier":
        return "it is not `atomicOp(P, acc)` of a variable"
    acc = unit.text(args[1])
    op = next(k for k, v in FOLD_ATOMIC.items() if v == f)
    if sources(unit, args[0]) & (PER_THREAD | {"?"}) or not pure(unit, args[0]):
        return f"the address `{norm(unit.text(args[0]))}` depends on the thread"
    decl = None
    for st in statements(fn.body):
        if st.type == "declaration" and st.end_byte <= loop.start_byte:
            for d in st.children_by_field_name("declarator"):
                if d.type == "init_declarator" and unit.text(d.child_by_field_name("declarator")) == acc:
                    decl = d
    if decl is None or not _ZEROS.match(unit.text(decl.child_by_field_name("value")).strip()):
        return f"{acc} is not declared before the loop with the identity 0"
    for n in unit.walk(fn.body):
        if n.type != "identifier" or unit.text(n) != acc or inside(n, decl) or inside(n, args[1]):
            continue
        a = n.parent
        if not inside(n, body) or a is None or a.type != "assignment_expression" or \
                a.child_by_field_name("left").id != n.id or \
                FOLD_OPS.get(unit.text(a.child_by_field_name("operator"))) != op:
            return (f"{acc} is used at line {unit.line_col(n.start_byte)[0]} other than as "
                    f"`{acc} {op}= ...` in the loop")
    return None


def check_sole_work_fold(site, ctx) -> Verdict:
    """sole-work, also allowing one atomic after the guard that publishes a fold."""
    g = guarded(site)
    unit, fn = site.unit, site.function
    v = check_sole_work(site, ctx)
    if v.holds or g.stmt.parent is None or g.stmt.parent.id != fn.body.id:
        return v
    d = index_decl(unit, fn, g.index)
    for s in statements(fn.body):
        if s.id == g.stmt.id or (not isinstance(d, str) and s.id == d.decl.id) or \
                (s.type == "declaration" and pure(unit, s)):
            continue
        if s.start_byte < g.stmt.end_byte:
            return v
        why = folded_atomic(unit, fn, s, g.body, g.stmt)
        if why is not None:
            return Verdict.no(f"{v.reason} ({why})")
    return Verdict.yes(f"{fn.name} computes the index, folds the guarded elements into a "
                       "per-thread value and publishes it with one atomic")


GS_PRECONDITIONS = tuple(
    Precondition(p.name, p.category, p.doc + " (or one atomic publishing a fold "
                 "after it)", check_sole_work_fold) if p.name == "sole-work" else p
    for p in GUARD_PRECONDITIONS)
KNOWN_CAP = Precondition(
    "known-cap", "hardware", "a cap given by name (max_blocks=MAX_BLOCKS) is a positive "
    "integer constant of the file, so the launch header can be evaluated",
    lambda site, ctx: Verdict.unknown("depends on the max_blocks option (GridStride.check)"))
STRIDE_TYPES = ("size_t", "int", "unsigned", "unsigned int")
STRIDE_FORMS = {"bg": "blockDim.x * gridDim.x", "gb": "gridDim.x * blockDim.x",
                "cast-bg": "({T})blockDim.x * gridDim.x", "cast-gb": "({T})gridDim.x * blockDim.x"}


# ============================================================================ passes
@dataclass(frozen=True)
class GridStride(Pass):
    """Turn one element per thread into a grid-stride loop over a capped grid.

    Before::

        // kltrans: launch add grid=ceil_div(n, 256) block=256
        __global__ void add(const float* x, float* y, int n) {
          int i = blockIdx.x * blockDim.x + threadIdx.x;
          if (i < n) y[i] += x[i];
        }

    After ``grid-stride{max_blocks=1024}``::

        // kltrans: launch add grid=min(ceil_div(n, 256), 1024) block=256
        __global__ void add(const float* x, float* y, int n) {
          for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] += x[i];
        }

    The declaration of ``i`` moves into the loop header when it is the statement just
    before the guard and ``i`` is not named after it (``const`` is dropped: the loop
    advances ``i``); otherwise the loop is ``for (; i < n; i += blockDim.x * gridDim.x)``
    and a ``const`` on the declaration is removed. The grid of the launch header is
    capped with ``min(..., max_blocks)``; the loop covers every element whatever the
    grid, so no runtime fact is needed.

    Preconditions: bound-check (pipeline: ``if (i < n)`` with a uniform bound; an early
    exit ``if (i >= n) return;`` is refused), global-index (layout: ``i`` is the plain
    global index, declared once, never assigned), sole-work (pipeline: the kernel does
    nothing but the guarded statement and declarations without side effects),
    element-private (layout: the body uses no threadIdx/blockIdx/gridDim except through
    ``i``), no-early-exit (pipeline: no return/goto/break/continue leaves the body),
    no-barrier (pipeline: no barrier or warp primitive in the body: a ragged last
    iteration would deadlock), index-type (dtype: ``i`` is an integer at least as wide
    as ``n``), launch-contract (hardware: a 1-D ``// kltrans: launch`` header).

    Options: ``max_blocks`` (1..2^31-1, or ``none`` to leave the grid uncapped; default
    1024), ``fold`` (default true: move the declaration into the loop header when it is
    just before the guard; false: always ``for (; i < n; ...)``), ``stride`` (``none``:
    stride by ``blockDim.x * gridDim.x`` in the loop; a name: declare it as ``const
    stride_type NAME = ...;`` after the declaration of the index's first value, spelled
    by ``stride_form``), ``work`` (the capped grid is sized for that many elements per
    thread: ``min(ceil_div(n, B * work), cap)``; default 1), ``form`` (``for``, or
    ``while``: ``while (i < n) { body; i += stride; }``), ``loop_stride`` (the in-loop
    stride spelled ``bg`` ``blockDim.x * gridDim.x`` or ``gb`` ``gridDim.x * blockDim.x``).
    ``max_blocks`` may name an integer constant of the file (``MAX_BLOCKS``); known-cap
    (hardware) refuses a name the file does not define.

    sole-work also accepts, after the guard, one ``atomicOp(P, acc);`` that publishes a
    per-thread fold (``acc`` declared before with 0, only ``acc op= ...`` in the body, P
    thread-independent): the total does not depend on how many threads fold.

    Limits: ``i += stride`` may overflow a 32-bit ``i`` when ``n`` is within one grid of
    INT_MAX (the same holds for any grid-stride loop).
    """

    name = "grid-stride"
    kind = "optimize"
    inverse = "one-per-thread"
    anchor = GUARD
    preconditions = GS_PRECONDITIONS + (KNOWN_CAP,)

    max_blocks: int | str = option(
        1024, OneOf(IntRange(1, 2**31 - 1, step_values=(132, 264, 528, 1024, 2048, 4096)),
                    Identifier(("none",))),
        "cap of the grid (blocks): a number or an integer constant of the file, or none to "
        "keep the grid", tune=True)
    fold: bool = option(True, Bool(), "move the index declaration into the loop header when it "
                        "is the statement just before the guard")
    stride: str = option("none", Identifier(("none",)),
                         "none: stride by blockDim.x * gridDim.x in the loop; a name: declare "
                         "the stride as that const after the loop start's declaration")
    stride_type: str = option("size_t", Choice(*STRIDE_TYPES),
                              "type of the stride declaration")
    stride_form: str = option("cast-gb", Choice(*STRIDE_FORMS),
                              "spelling of the stride: bg (blockDim.x * gridDim.x), gb, "
                              "cast-bg/cast-gb ((T) cast on the first factor)")
    work: int = option(1, IntRange(1, 4096, step_values=(1, 2, 4, 8, 16, 32)),
                       "elements per thread the capped grid is sized for: "
                       "min(ceil_div(n, B * work), cap)", tune=True)
    form: str = option("for", Choice("for", "while"),
                       "for: a for loop; while: `while (i < n) { ...; i += stride; }`")
    loop_stride: str = option("bg", Choice(*LOOP_STRIDES),
                              "spelling of the stride in the loop (stride=none): bg "
                              "(blockDim.x * gridDim.x) or gb (gridDim.x * blockDim.x)")

    def check(self, site, ctx):
        """The preconditions; known-cap depends on the ``max_blocks`` option."""
        return [(p, self._known_cap(site) if p is KNOWN_CAP else v)
                for p, v in super().check(site, ctx)]

    def _known_cap(self, site) -> Verdict:
        if not isinstance(self.max_blocks, str) or self.max_blocks == "none":
            return Verdict.yes(f"the cap is {self.max_blocks}")
        c, why = contract_of(site)
        if c is None:
            return Verdict.no(why)
        v = dict(c.constants).get(self.max_blocks)
        if v is None or v <= 0:
            return Verdict.no(f"{self.max_blocks} is not a positive integer constant of the "
                              f"file: the launch header could not be evaluated")
        return Verdict.yes(f"{self.max_blocks} = {v}")

    def rewrite(self, site, ctx):
        g = guarded(site)
        unit = site.unit
        d = index_decl(unit, site.function, g.index)
        if self.form == "while":
            return self._while(site, g, d)
        if self.stride != "none":
            return self._named_stride(site, g, d)
        i, n = g.index, unit.text(g.bound)
        prev = g.stmt.prev_named_sibling
        later = [m for m in unit.walk(site.function.body) if m.type == "identifier" and
                 unit.text(m) == i and m.start_byte >= g.stmt.end_byte]
        if self.fold and not later and prev is not None and prev.id == d.decl.id and \
                not unit.source[d.decl.end_byte:g.stmt.start_byte].strip():
            header = (f"for ({d.type_text} {i} = {unit.text(d.value)}; {i} < {n}; "
                      f"{i} += {LOOP_STRIDES[self.loop_stride]})")
            return [Edit(d.decl.start_byte, g.cond.end_byte, header)]
        edits = [Edit(g.stmt.start_byte, g.cond.end_byte,
                      f"for (; {i} < {n}; {i} += {LOOP_STRIDES[self.loop_stride]})")]
        return edits + self._drop_const(unit, d)

    def _while(self, site, g, d):
        """``while (i < n) { body; i += stride; }`` in place of the guard."""
        unit = site.unit
        i, n = g.index, unit.text(g.bound)
        step = self.stride if self.stride != "none" else LOOP_STRIDES[self.loop_stride]
        edits = [Edit(g.stmt.start_byte, g.cond.end_byte, f"while ({i} < {n})")]
        body = g.body
        if body.type == "compound_statement":
            close = body.children[-1]
            ind = line_indent(unit, g.stmt.start_byte)
            stmts = statements(body)
            inner = line_indent(unit, stmts[0].start_byte) if stmts else ind + "    "
            last = stmts[-1].end_byte if stmts else body.children[0].end_byte
            if b"\n" in unit.source[last:close.start_byte]:
                at = unit.source.rfind(b"\n", 0, close.start_byte)
                edits.append(Edit.insert(at, f"\n{inner}{i} += {step};"))
            else:  # `{ ...; }` on one line
                edits.append(Edit.insert(last, f" {i} += {step};"))
        else:
            ind = line_indent(unit, g.stmt.start_byte)
            edits[0] = Edit(g.stmt.start_byte, body.end_byte,
                            f"while ({i} < {n}) {{\n{ind}    {unit.text(body)}\n{ind}    "
                            f"{i} += {step};\n{ind}}}")
        edits += self._drop_const(unit, d)
        if self.stride != "none":
            edits.append(self._stride_decl_edit(site, d))
        return edits

    @staticmethod
    def _drop_const(unit, d) -> list:
        if d.const is None:
            return []
        end = d.const.end_byte
        while unit.source[end:end + 1] in (b" ", b"\t"):
            end += 1
        return [Edit.delete(d.const.start_byte, end)]

    def _stride_decl_edit(self, site, d):
        unit, fn = site.unit, site.function
        expr = STRIDE_FORMS[self.stride_form].replace("{T}", self.stride_type)
        text = f"const {self.stride_type} {self.stride} = {expr};"
        at = _start_decl(unit, fn, d) or d.decl
        ind = line_indent(unit, at.start_byte)
        return Edit.insert(at.end_byte, "\n" + ind + text)

    def _named_stride(self, site, g, d):
        unit = site.unit
        i, n = g.index, unit.text(g.bound)
        edits = [Edit(g.stmt.start_byte, g.cond.end_byte, f"for (; {i} < {n}; {i} += {self.stride})")]
        return edits + self._drop_const(unit, d) + [self._stride_decl_edit(site, d)]

    def update_contract(self, contract, site, ctx):
        if self.max_blocks == "none":
            return contract
        g = contract.grid[0]
        if self.work > 1:
            cd = call_parts(g)
            if cd is not None and len(cd[1]) == 2 and int_text(cd[1][1]) is not None:
                g = f"{cd[0]}({cd[1][0]}, {int_text(cd[1][1]) * self.work})"
            elif cd is not None and len(cd[1]) == 2 and cd[1][1].strip().isidentifier():
                g = f"{cd[0]}({cd[1][0]}, {cd[1][1].strip()} * {self.work})"
        return contract.with_(grid=(f"min({unwrap(g)}, {self.max_blocks})",))

    def inverse_for(self, site, ctx):
        d = index_decl(site.unit, site.function, guarded(site).index)
        return OnePerThread(const=not isinstance(d, str) and d.const is not None)


def _start_decl(unit, fn, d):
    """The top-level declaration of the variable that is the index's first value
    (``tid`` in ``size_t i = tid;``), or None."""
    if isinstance(d, str) or d.value is None or d.value.type != "identifier":
        return None
    got = index_decl(unit, fn, unit.text(d.value))
    return None if isinstance(got, str) else got.decl


# ------------------------------------------------------------------ one-per-thread
#: the atomic that closes a kernel's per-thread fold (``atomicAdd(out, acc);``)
FOLD_END = Rule(kind="call_expression", inside_kernel=True, regex=r"^atomicAdd\s*\(")
LOOP = Rule(any=(Rule(pattern="for ($T $I = $E; $I < $N; $I += $S) $BODY;"),
                 Rule(pattern="for (; $I < $N; $I += $S) $BODY;"),
                 Rule(pattern="while ($I < $N) $BODY;")),
            inside_kernel=True, constraints={"I": {"kind": "identifier"}})


def _rparen(node):
    if node.type == "while_statement":
        return node.child_by_field_name("condition")
    return [c for c in node.children if c.type == ")"][-1]


def while_step(site) -> "tuple[Node, Node] | str | None":
    """For ``while (i < n) { ...; i += S; }``: (the update statement, S), or why the body
    does not end in the loop's one update; None for a ``for`` loop."""
    if site.node.type != "while_statement":
        return None
    unit, body, i = site.unit, site.match.bindings["BODY"], site.text("I")
    stmts = statements(body) if body.type == "compound_statement" else []
    last = stmts[-1] if stmts else None
    e = last.named_children[0] if last is not None and last.type == "expression_statement" \
        and last.named_children else None
    if e is None or e.type != "assignment_expression" or \
            unit.text(e.child_by_field_name("operator")) != "+=" or \
            unit.text(e.child_by_field_name("left")).strip() != i:
        return f"the while body does not end with `{i} += stride;`"
    if any(assigned_in(unit, st, i) for st in stmts[:-1]):
        return f"the loop body assigns {i} before its last statement"
    return last, e.child_by_field_name("right")


def _stride_node(site):
    got = while_step(site)
    return got[1] if isinstance(got, tuple) else site.match.bindings.get("S")


def check_loop(site, ctx) -> Verdict:
    if site.node.type == "call_expression":
        return _fold_loop(site, ctx)
    unit, fn = site.unit, site.function
    b = site.match.bindings
    i = site.text("I")
    body = b["BODY"]
    step = while_step(site)
    if isinstance(step, str):
        return Verdict.no(step)
    stride = _stride_node(site)
    sa = affine_of(unit, stride, fn)
    if sa is None or sa != GRID_SIZE:
        return Verdict.no(f"the loop strides by `{norm(unit.text(stride))}`, not by the grid "
                          "size blockDim.x * gridDim.x")
    if step is None and assigned_in(unit, body, i):
        return Verdict.no(f"the loop body assigns {i}")
    ex = loop_exit(body)
    if ex is not None:
        return Verdict.no(f"`{unit.text(ex)}` (line {unit.line_col(ex.start_byte)[0]}) leaves "
                          f"the loop: as an if it would not compile")
    if "E" in b:
        start = b["E"]
        a = affine_of(unit, start)
        if a is None or a != GLOBAL_INDEX:
            return Verdict.no(f"the loop starts at `{norm(unit.text(start))}`, not at the global "
                              "thread index blockIdx.x * blockDim.x + threadIdx.x")
        return Verdict.yes(f"{i} runs from the global thread index by the grid size")
    d = index_decl(unit, fn, i)
    if isinstance(d, str):
        return Verdict.no(d)
    a = affine_of(unit, d.value)
    if a is None or a != GLOBAL_INDEX:
        return Verdict.no(f"`{i} = {norm(unit.text(d.value))}` is not the global thread index")
    for n in unit.walk(fn.body):
        if n.type == "identifier" and unit.text(n) == i and not inside(n, site.node) and \
                not inside(n, d.decl):
            line = unit.line_col(n.start_byte)[0]
            return Verdict.no(f"{i} is used after the loop (line {line}): its final value "
                              "would change")
    return Verdict.yes(f"{i} runs from the global thread index by the grid size")


def bound_param(site) -> str | None:
    """The kernel parameter the loop bound counts: the bound itself, or a parameter ``n``
    behind a top-level ``const T count = n;``, ``(T)n`` or ``n > 0 ? (T)n : 0``."""
    unit, fn = site.unit, site.function
    n = norm(site.text("N"))
    params = {p.name for p in fn.params if p.name and not p.pointer}
    if n in params:
        return n
    d = index_decl(unit, fn, n)
    if isinstance(d, str) or d.const is None:
        return None
    v = re.sub(r"\s+", "", unit.text(d.value))
    m = re.fullmatch(r"\(?(?:\(\w+(?:\s\w+)*\))?(\w+)\)?", v) or \
        re.fullmatch(r"(\w+)>0\?(?:\(\w+\))?\1:0[uUlL]*", v)
    return m.group(1) if m and m.group(1) in params else None


def uncapped_grid(site, contract, binds: dict | None = None) -> tuple[str | None, str]:
    """(the grid giving one thread per element, why) from a capped or covering grid, read
    through the launch model (:func:`kltrans.model.launch.grid_dim`). ``binds``
    (``{parameter: size}``, the ``binds`` facts): the loop bound's parameter carries that
    size of the contract."""
    gd, block = grid_dim(contract), block_dim(contract)
    n = norm(site.text("N"))
    if not gd.covers:
        return None, gd.reason + ": cannot tell which grid gives every element a thread"
    p = bound_param(site)
    size = (binds or {}).get(p) if p is not None else None
    if size is not None and gd.counts(size):
        p = size  # the contract names the size the parameter carries
    if not gd.counts(n) and (p is None or not gd.counts(p)):
        return None, (f"grid={gd.text} covers {gd.count}, not the loop bound {n}: cannot tell "
                      f"which grid gives every element a thread")
    work = gd.per_thread(block)
    if gd.cap is None:
        if work == 1:
            return gd.text, f"grid={gd.text} already gives every element a thread"
        return None, (f"grid={gd.text} is not one block of {block.text} threads per "
                      f"{block.text} elements: cannot tell which grid gives every element a "
                      f"thread")
    if work is None:
        # uncapping alone would keep a grid sized for k elements per thread (most left
        # unwritten)
        return None, (f"grid={gd.text}: cannot tell how many elements a thread was sized "
                      f"for ({gd.per_block.text} elements per block of {block.text} threads), "
                      f"so no grid is known to give every element a thread")
    if work == 1:
        return header_expr(gd.covering_text), f"grid={gd.text} uncapped"
    g = header_expr(f"ceil_div({p or gd.count}, {block.text})")
    return g, (f"grid={gd.text} sized for {work} elements per thread: {g} gives every "
               f"element a thread")


def check_covering_grid(site, ctx) -> Verdict:
    if site.node.type == "call_expression":
        return _fold_grid(site, ctx)
    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    g, why = uncapped_grid(site, c, ctx.bindings)
    return Verdict.yes(why) if g is not None else Verdict.no(why)


@dataclass(frozen=True)
class OnePerThread(Pass):
    """Turn a grid-stride loop back into one element per thread, uncapping the grid.

    Before::

        // kltrans: launch add grid=min(ceil_div(n, 256), 1024) block=256
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) y[i] += x[i];

    After ``one-per-thread``::

        // kltrans: launch add grid=ceil_div(n, 256) block=256
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] += x[i];

    ``for (; i < n; i += blockDim.x * gridDim.x)`` becomes ``if (i < n)``, and so does
    ``while (i < n) { ...; i += stride; }`` (its last statement, the update, goes). With a
    grid that gives every element a thread the loop runs at most once per thread, so the
    ``if`` is the same computation. The launch is read through
    :func:`kltrans.model.launch.grid_dim`: ``min(G, cap)`` or ``min(cap, G)`` with G
    ``ceil_div(n, d)`` or ``(n + d - 1) / d`` and the block and cap numbers or constants of
    the file.

    Preconditions: grid-stride-loop (layout: the loop starts at the global thread index,
    its body does not assign ``i`` (a while loop: except its last statement), no
    ``break``/``continue`` leaves it, and ``i`` is not used after a loop that does not
    declare it), covering-grid (hardware: the launch header's grid is ``min(G, cap)``,
    restored to ``G``, or already ``ceil_div(n, block)``).

    The stride may also be a variable holding the grid size (``const size_t nthreads =
    (size_t)gridDim.x * blockDim.x;``): when the loop is its only use, its declaration is
    removed too. A capped grid ``min(ceil_div(n, B * k), cap)`` sized for k elements per
    thread (n the bound, or the parameter behind a ``const`` bound such as ``count = n > 0
    ? (size_t)n : 0``; B the constant block) becomes ``ceil_div(n, B)``. ``inverse_for``
    passes the stride's name and spelling and k to ``grid-stride``.

    Options: ``const`` (default false): declare the restored index ``const`` (the exact
    inverse of a ``grid-stride`` that dropped it).
    """

    name = "one-per-thread"
    kind = "simplify"
    inverse = "grid-stride"
    anchor = Rule(any=(LOOP, FOLD_END))
    drop_dead = True  # a stride local only the loop read (`int stride = blockDim.x * ...`)
    preconditions = (
        Precondition("grid-stride-loop", "layout",
                     "a loop from the global thread index by blockDim.x * gridDim.x whose index "
                     "is not used after it; or, at a kernel's closing atomic of a fold, any "
                     "loops that fold every element once over the grid", check_loop),
        Precondition("covering-grid", "hardware",
                     "the launch header's grid is min(G, cap) or ceil_div(n, block): G gives "
                     "every element a thread", check_covering_grid),
    )

    const: bool = option(False, Bool(), "declare the restored index const")

    def rewrite(self, site, ctx):
        if site.node.type == "call_expression":
            return _fold_rewrite(site, ctx)
        unit = site.unit
        node = site.node
        b = site.match.bindings
        i, n = site.text("I"), site.text("N")
        rp = _rparen(node)
        q = "const " if self.const else ""
        extra = []
        sd = _stride_decl(site)
        if sd is not None:
            s0 = unit.source.rfind(b"\n", 0, sd[0].start_byte) + 1
            e0 = sd[0].end_byte
            if unit.source[s0:sd[0].start_byte].strip() == b"" and unit.source[e0:e0 + 1] == b"\n":
                extra.append(Edit.delete(s0, e0 + 1))
            else:
                extra.append(Edit.delete(sd[0].start_byte, e0))
        if "E" in b:
            indent = line_indent(unit, node.start_byte)
            text = f"{q}{site.text('T')} {i} = {site.text('E')};\n{indent}if ({i} < {n})"
            return [Edit(node.start_byte, rp.end_byte, text)] + extra
        edits = [Edit(node.start_byte, rp.end_byte, f"if ({i} < {n})")]
        step = while_step(site)
        if isinstance(step, tuple):  # the body's last statement, `i += stride;`, goes
            s0 = unit.source.rfind(b"\n", 0, step[0].start_byte)
            edits.append(Edit.delete(s0 if unit.source[s0:step[0].start_byte].strip() == b""
                                     else step[0].start_byte, step[0].end_byte))
        d = index_decl(unit, site.function, i)
        if self.const and d.const is None:
            edits.append(Edit.insert(d.decl.start_byte, "const "))
        return edits + extra

    def update_contract(self, contract, site, ctx):
        if site.node.type == "call_expression":
            got = _fold(site, ctx)
            return contract.with_(grid=(header_expr(
                f"ceil_div({got['fold'].bound}, {block_dim(contract).text})"),))
        g, _ = uncapped_grid(site, contract, ctx.bindings)
        return contract if g is None else contract.with_(grid=(g,))

    def inverse_for(self, site, ctx):
        c, _ = contract_of(site)
        if site.node.type == "call_expression":
            got = _fold(site, ctx)
            gd = grid_dim(c) if c is not None else None
            cap = "none"
            if gd is not None and gd.cap is not None and gd.cap.value is not None:
                cap = gd.cap.text.strip() if gd.cap.text.strip().isidentifier() else gd.cap.value
            work = (gd.per_thread(block_dim(c)) if gd is not None else None) or 1
            loops = [] if isinstance(got, str) else [
                n.type for st in got["region"] for n in site.unit.walk(st)
                if n.type in ("for_statement", "while_statement")]
            form = "while" if loops and loops[0] == "while_statement" else "for"
            return GridStride(max_blocks=cap, work=work, form=form)
        cap = "none"
        work = 1
        if c is not None:
            gd = grid_dim(c)
            if gd.cap is not None and gd.cap.value is not None:
                name = gd.cap.text.strip()
                cap = name if name.isidentifier() else gd.cap.value
                work = gd.per_thread(block_dim(c)) or 1
        opts = {"form": "while"} if site.node.type == "while_statement" else {}
        sd = _stride_decl(site)
        if sd is not None:
            opts.update(stride=sd[1], stride_type=sd[2], stride_form=sd[3])
        else:
            s = re.sub(r"\s+", "", site.unit.text(_stride_node(site)))
            opts["loop_stride"] = next((k for k, v in LOOP_STRIDES.items()
                                        if re.sub(r"\s+", "", v) == s), "bg")
        return GridStride(max_blocks=cap, fold="E" in site.match.bindings, work=work, **opts)


def _stride_decl(site):
    """(declaration, name, type, form) of a top-level ``const T s = <grid size>;`` that the
    loop strides by and nothing else uses (one-per-thread removes it with the loop)."""
    unit, fn = site.unit, site.function
    s = _stride_node(site)
    if s is None or s.type != "identifier":
        return None
    name = unit.text(s)
    d = index_decl(unit, fn, name)
    if isinstance(d, str) or d.const is None:
        return None
    uses = [n for n in unit.walk(fn.body) if n.type == "identifier" and unit.text(n) == name
            and not inside(n, d.decl)]
    if len(uses) != 1:
        return None
    v = re.sub(r"\s+", "", unit.text(d.value))
    form = None
    for k, f in STRIDE_FORMS.items():
        if re.sub(r"\s+", "", f.replace("{T}", d.type_text)) == v:
            form = k
    if form is None or d.type_text not in STRIDE_TYPES:
        return None
    return d.decl, name, d.type_text, form


# ------------------------------------------------- a fold of any shape, read over the grid


def _fold(site, ctx):
    """What one-per-thread needs at a closing atomic, read once per site: a dict, or why
    not (the grid's fold is :func:`kltrans.model.grid.grid_fold`)."""
    memo = site.unit.memo("grid_stride.fold", lambda u: {})
    if site.node.id not in memo:
        memo[site.node.id] = _read_fold(site, ctx)
    return memo[site.node.id]


def _read_fold(site, ctx):
    unit, fn, call = site.unit, site.function, site.node
    body = statements(fn.body)
    if not body or body[-1].type != "expression_statement" or \
            body[-1].named_children[0].id != call.id:
        return "the atomic is not the kernel's last statement"
    args = [a for a in call.child_by_field_name("arguments").named_children if a.type != "comment"]
    if len(args) != 2 or args[1].type != "identifier":
        return "the atomic does not publish a variable: `atomicAdd(P, acc);`"
    acc = unit.text(args[1])
    k = next((j for j, st in enumerate(body) if st.type == "declaration" and
              acc in {n for n, _ in declared_names(unit, st)}), None)
    if k is None or k == len(body) - 2:
        return f"{acc} is not declared in the kernel's body before statements that fold into it"
    region = body[k + 1:-1]
    if not any(n.type in ("for_statement", "while_statement", "do_statement")
               for st in region for n in site.unit.walk(st)):
        return "no loop folds into it: one element per thread already"
    for other in site.pass_.sites(unit, ctx):  # a plain grid-stride loop: its own site
        if other.node.type != "call_expression" and region[0].start_byte <= \
                other.node.start_byte < region[-1].end_byte and \
                all(v.holds for _, v in site.pass_.check(other, ctx)):
            return (f"the grid-stride loop at line {unit.line_col(other.node.start_byte)[0]} "
                    "is one-per-thread's own site")
    c, why = contract_of(site)
    size = block_dim(c).value if c is not None else None
    if not isinstance(size, int):
        return why or "the block size is not a constant of the launch contract"
    launches = draws(fn, size, seed=call.start_byte, count=2)
    for ints in launches:
        ints.update(ctx.sizes if ctx is not None else {})
    got = grid_fold(unit, fn, launches, index="__k__")
    if isinstance(got, str):
        return got
    gone = [(region[0].start_byte, region[-1].end_byte)]
    value_names = set(re.findall(r"[A-Za-z_]\w*", got.value)) - {"__k__"}
    keep = value_names | {acc, got.bound} | {unit.text(n) for n in unit.walk(args[0])
                                           if n.type == "identifier"}
    dead = dead_declarations(unit, fn, gone, keep)
    gone += [(d.start_byte, d.end_byte) for d in dead]
    taken = {unit.text(n) for n in unit.walk(fn.node) if n.type == "identifier"
             and not any(a <= n.start_byte < b for a, b in gone)}
    i = next((x for x in ("i", "idx", "e", "elem") if x not in taken), None)
    if i is None:
        return "no free name for the element index"
    ptype = next((p for p in fn.params if p.name == got.bound), None)
    itype = norm(re.sub(r"\bconst\b", "", ptype.type)) if ptype is not None else "int"
    return {"fold": got, "acc": acc, "region": region, "dead": dead, "index": i,
            "type": itype, "value": got.value.replace("__k__", i)}


def _fold_loop(site, ctx) -> Verdict:
    got = _fold(site, ctx)
    if isinstance(got, str):
        return Verdict.no(got)
    f = got["fold"]
    return Verdict.yes(f"over the grid the kernel adds {got['value']} once for every "
                       f"{got['index']} < {f.bound} (run at 2 launches)")


def _fold_grid(site, ctx) -> Verdict:
    got = _fold(site, ctx)
    if isinstance(got, str):
        return Verdict.unknown(got)
    return Verdict.yes(f"grid=ceil_div({got['fold'].bound}, block) gives every element a thread")


def _fold_rewrite(site, ctx):
    unit = site.unit
    got = _fold(site, ctx)
    region, i = got["region"], got["index"]
    ind = line_indent(unit, region[0].start_byte)
    step = "    " if len(ind) % 4 == 0 else "  "
    text = (f"{got['type']} {i} = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"{ind}if ({i} < {got['fold'].bound}) {{\n"
            f"{ind}{step}{got['acc']} += {got['value']};\n{ind}}}")
    return [Edit(region[0].start_byte, region[-1].end_byte, text)] + \
        [remove_described(unit, d) for d in got["dead"]]

