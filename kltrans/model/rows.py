"""Rows shared by a group of threads: a warp (or 32-thread tile) or a whole block works on
one item, and the group's threads combine what each of them found.

:func:`shared_rows` reads a kernel in which every thread of a *group* has the same item
index (the row) and the group splits the item's loops among its threads:

- the group: a ``warp`` when the loops stride by the warp's width from the lane (``for (j
  = lane; j < n; j += 32)``, ``tile.size()``, ``WARP_SIZE``), a ``block`` when they stride by
  the block size from the thread's index in the block (``threadIdx.x``,
  ``block.thread_rank()``, ``blockDim.x``, ``block.size()``, a constant the launch sets the
  block to); the roles come from :mod:`kltrans.model.geometry` and :mod:`kltrans.model.loops`;
- the item: a local whose role is the global warp index (``row = gid / 32``,
  ``blockIdx.x * WARPS + warp``) for a warp, the block index (``row = blockIdx.x``, or
  ``blockIdx.x`` itself) for a block, and the guard that drops items past the last;
- the *folds*, where the group combines one value per thread, in any spelling: a call of
  a collective (``cg::reduce``, ``__reduce_add_sync``, a ``__device__`` helper or lambda
  that shuffles or synchronizes) replaced by its value argument, and *exchanges*: runs of
  statements that synchronize, store to shared memory or copy a shared element into a
  local (partials parked per warp, a shared-memory tree, a broadcast through ``red[0]``);
  each exchange's value is the first value it stores; shared elements read after it read
  that value;
- the leader guards (``if (lane == 0)``, ``if (tile.thread_rank() == 0 && ...)``) of what
  one thread of the group writes.

With one thread per item the strided loops run from their start by 1, each fold is its
value, each exchange is gone (the locals it filled get the value), the leader tests are
gone and the item is the global thread index. That reading is syntactic; whoever rewrites
by it must check that the two kernels do the same
(:func:`kltrans.model.grid.same_grid_effects`), which is what makes it safe on code this
module misreads.

:func:`thread_rows` reads the other side: a kernel whose global thread index is the row,
with loops from 0 by 1 whose scalar updates are folds (``s += e``, ``m = fmaxf(m, e)``,
``fminf``, ``max``, ``min``, ``if (e > m) m = e;``, ``m = e > m ? e : m``) — what a group
could share. A loop may start at a later constant when every local it folds is declared
before it with a value (``m = x[0]; for (j = 1; ...)``, the fold seeded with its first
element): the *seeds*, which a group must give the fold's identity instead.

Not read: a group whose loops mix warp and block strides (x staged in shared memory by
the block and rows by warps), shared memory read inside a strided loop (a staged copy or
a row cache: another mechanism), an item reached through a grid-stride loop over rows,
several items per group (register tiles of rows).

Layering: :mod:`kltrans.model.geometry`, :mod:`kltrans.model.loops`,
:mod:`kltrans.model.ops`, :mod:`kltrans.model.block`, :mod:`kltrans.syntax`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kltrans.analysis.affine import affine_of, strip_parens
from kltrans.model.block import _SYNC_OPS as _SYNC, accessors, sync_holders
from kltrans.model.collectives import _within
from kltrans.model.geometry import geometry, role_of
from kltrans.model.loops import loops
from kltrans.model.ops import group_of, operations

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

GLOBAL_INDEX = "blockIdx.x * blockDim.x + threadIdx.x"
_STRIDE = {"warp": "warp-stride", "block": "block-stride"}


@dataclass(frozen=True)
class Fold:
    """A call that combines ``value`` over the group (``call`` its node)."""

    call: "Node"
    value: "Node"


@dataclass(frozen=True)
class Exchange:
    """Statements ``stmts`` (consecutive, one statement list) through which the group
    combines the values it stores in shared arrays (none: a barrier only); ``outputs`` are
    the locals they fill that code after them reads."""

    stmts: tuple
    values: tuple = ()   # (shared array, the value node each thread stores there first)
    outputs: tuple = ()  # (local, type text or None, the array whose value it gets)


@dataclass(frozen=True)
class RowShare:
    """A kernel whose groups of threads (``scope`` ``warp`` or ``block``) share an item."""

    scope: str
    item: "str | None"           # the item variable (None: blockIdx.x read directly)
    item_value: "Node | None"    # its initializer
    guard: "Node | None"         # the statement that drops items past the last
    loops: tuple                 # LoopFact of each group-strided loop
    folds: tuple                 # Fold
    exchanges: tuple             # Exchange
    uses: tuple                  # (subscript node, value node): shared reads of a fold
    leaders: tuple               # (condition node, test node): `rank == 0` tests
    shared: frozenset            # names of shared memory the exchanges use
    notes: tuple = field(default=())
    sized: tuple = ()            # if statements run only for groups of K > 1 threads
    scalars: tuple = ()          # declarations of the kernel's __shared__ scalars


# --------------------------------------------------------------------- helpers
def _text(unit, node) -> str:
    return unit.text(node) if node is not None else ""


def _stmts(block) -> list:
    if block is None:
        return []
    if block.type != "compound_statement":
        return [block]
    return [c for c in block.named_children if c.type != "comment"]


def shared_names(unit: "Unit", fn: "Function") -> set[str]:
    """Names that reach shared memory in ``fn``: its ``__shared__`` arrays (and the file's),
    and locals set from them or from an accessor (``T *p = SharedMemory<T>();``)."""
    names = {d.name for d in unit.shared_decls() if d.function in (fn.name, None)}
    acc = accessors(unit)
    for decl in unit.nodes_of_type("declaration", within=fn.node):
        for d in decl.children_by_field_name("declarator"):
            if d.type != "init_declarator":
                continue
            v = d.child_by_field_name("value")
            ids = {unit.text(n) for n in unit.walk(v) if n.type in ("identifier",
                                                                   "type_identifier")}
            if ids & (names | acc):
                t = d.child_by_field_name("declarator")
                while t is not None and t.type != "identifier":
                    t = t.child_by_field_name("declarator")
                if t is not None:
                    names.add(unit.text(t))
    return names


def _subscripts(unit, node, names) -> list:
    return [n for n in unit.walk(node) if n.type == "subscript_expression" and
            _text(unit, strip_parens(n.child_by_field_name("argument"))) in names]


def _stored(unit, node, names) -> list:
    """Assignments in ``node`` whose target is a subscript of ``names``."""
    out = []
    for n in unit.walk(node):
        if n.type == "assignment_expression":
            left = strip_parens(n.child_by_field_name("left"))
            if left.type == "subscript_expression" and \
                    _text(unit, strip_parens(left.child_by_field_name("argument"))) in names:
                out.append(n)
    return out


def _read_of(unit, value, names) -> "str | None":
    """The shared array of ``S[i]`` or ``c ? S[i] : identity`` (``S`` in ``names``)."""
    v = strip_parens(value)
    if v is None:
        return None
    if v.type == "conditional_expression":
        v = strip_parens(v.child_by_field_name("consequence"))
    if v is not None and v.type == "subscript_expression":
        arr = _text(unit, strip_parens(v.child_by_field_name("argument")))
        return arr if arr in names else None
    return None


def _copy(unit, s, names) -> "tuple[str, str | None, str] | None":
    """(local, type, array) of ``T x = S[i];`` or ``x = S[i];`` (``S`` shared), else None."""
    if s.type == "declaration":
        ds = s.children_by_field_name("declarator")
        if len(ds) == 1 and ds[0].type == "init_declarator":
            arr = _read_of(unit, ds[0].child_by_field_name("value"), names)
            if arr is not None:
                ty = " ".join(_text(unit, c) for c in s.children if c.type in (
                    "type_qualifier", "primitive_type", "type_identifier",
                    "sized_type_specifier", "qualified_identifier"))
                return _text(unit, ds[0].child_by_field_name("declarator")), ty, arr
        return None
    e = _assignment(s)
    if e is not None and _text(unit, e.child_by_field_name("operator")) == "=":
        left = strip_parens(e.child_by_field_name("left"))
        arr = _read_of(unit, e.child_by_field_name("right"), names)
        if left.type == "identifier" and arr is not None:
            return _text(unit, left), None, arr
    return None


def _assignment(s):
    if s is not None and s.type == "expression_statement" and s.named_children and \
            s.named_children[0].type == "assignment_expression":
        return s.named_children[0]
    return None


def _combine(unit, s, names) -> "list[tuple[str, str]] | None":
    """(local, array) of each ``L op= S[k];`` of a loop made of only such statements (the
    slots of an exchange summed up by every thread), else None."""
    if s.type not in ("for_statement", "while_statement"):
        return None
    out = []
    for st in _stmts(s.child_by_field_name("body")):
        e = _assignment(st)
        if e is None or _text(unit, e.child_by_field_name("operator")) == "=":
            return None
        left = strip_parens(e.child_by_field_name("left"))
        arr = _read_of(unit, e.child_by_field_name("right"), names)
        if left.type != "identifier" or arr is None:
            return None
        out.append((_text(unit, left), arr))
    return out or None


def _reset(unit, s) -> "tuple[str, str | None] | None":
    """(L, its type when declared here) of ``L = <literal or identity>;`` or ``T L =
    <literal or identity>;``."""
    e = _assignment(s)
    if e is not None and _text(unit, e.child_by_field_name("operator")) == "=":
        left, right = (strip_parens(e.child_by_field_name(k)) for k in ("left", "right"))
        ty = None
    elif s is not None and s.type == "declaration" and \
            len(s.children_by_field_name("declarator")) == 1 and \
            s.children_by_field_name("declarator")[0].type == "init_declarator":
        d = s.children_by_field_name("declarator")[0]
        left, right = d.child_by_field_name("declarator"), strip_parens(d.child_by_field_name("value"))
        ty = " ".join(_text(unit, c) for c in s.children if c.type in (
            "type_qualifier", "primitive_type", "type_identifier", "sized_type_specifier"))
    else:
        return None
    if left is not None and left.type == "identifier" and right is not None and (
            right.type == "number_literal" or _text(unit, right) in (
                "-INFINITY", "INFINITY", "-FLT_MAX", "FLT_MAX")):
        return _text(unit, left), ty
    return None


# -------------------------------------------------------------------- the reading
def shared_rows(unit: "Unit", fn: "Function") -> "RowShare | str":
    """The :class:`RowShare` of kernel ``fn``, or why it is not one (cached per unit)."""
    memo = unit.memo("model.rows", lambda u: {})
    if fn.node.id not in memo:
        try:
            memo[fn.node.id] = _read(unit, fn)
        except RecursionError:
            memo[fn.node.id] = "too deeply nested to read"
    return memo[fn.node.id]


def _read(unit, fn) -> "RowShare | str":
    if fn.body is None:
        return "no body"
    facts = loops(unit, fn)
    kinds = {f.kind for f in facts}
    if "warp-stride" in kinds and "block-stride" in kinds:
        return "both warp-strided and block-strided loops: the block also shares other work"
    scope = "warp" if "warp-stride" in kinds else "block" if "block-stride" in kinds else None
    if scope is None:
        return "no loop strides by a warp's width or by the block size"
    strided = tuple(f for f in facts if f.kind == _STRIDE[scope])
    if any(f.kind == "grid-stride" for f in facts):
        return "a grid-stride loop: the items are not one per group"
    shared = shared_names(unit, fn)
    holders = sync_holders(unit)
    for f in strided:
        if _syncs(unit, f.loop.body, holders, []):
            return f"the strided loop at line {f.line} synchronizes inside (a scan or a " \
                "staged copy, not a fold after it)"
        if _stored(unit, f.loop.body, shared) or any(
                f.var in {unit.text(i) for i in unit.walk(n.child_by_field_name("indices") or n)
                          if i.type == "identifier"}
                for n in _subscripts(unit, f.loop.body, shared)):
            return f"the strided loop at line {f.line} reads or writes shared memory " \
                "(a staged copy or a row cache)"
    item, value, why = _item(unit, fn, scope)
    if why:
        return why
    guard = _guard(unit, fn, item) if item else None
    folds = _folds(unit, fn, holders)
    inside = [f.call for f in folds]
    exchanges, uses, why = _exchanges(unit, fn, shared, holders, inside, guard)
    if why:
        return why
    if not folds and not any(x.values or any(_shuffles(unit, t) for t in x.stmts)
                             for x in exchanges):
        return "the group combines nothing: no collective call and no exchange through " \
            "shared memory"
    leaders = _leaders(unit, fn, scope)
    sized = _sized(unit, fn, scope)
    uses = [(n, v) for n, v in uses if not any(_within(n, s) for s in sized)]
    return RowShare(scope, item, value, guard, strided, tuple(folds), tuple(exchanges),
                    tuple(uses), tuple(leaders), frozenset(shared), sized=tuple(sized),
                    scalars=tuple(_shared_scalars(unit, fn)))


def _item(unit, fn, scope):
    """(item name, its initializer, why not)."""
    roles = geometry(unit, fn).roles
    for name, r in roles.items():
        good = (scope == "warp" and r.kind == "global" and r.split == ("div", 32)) or \
               (scope == "block" and r.kind == "block" and r.split is None)
        if not good:
            continue
        for decl in unit.nodes_of_type("declaration", within=fn.body):
            for d in decl.children_by_field_name("declarator"):
                if d.type == "init_declarator" and \
                        _text(unit, d.child_by_field_name("declarator")) == name:
                    return name, d.child_by_field_name("value"), ""
    if scope == "block" and "blockIdx.x" in _text(unit, fn.body):
        return None, None, ""
    what = "the global warp index" if scope == "warp" else "the block index"
    return None, None, f"no local is {what} (the item each group works on)"


def _guard(unit, fn, item):
    """The top-level ``if (item >= N) return;`` / ``if (item < N) {...}`` on the item."""
    for s in _stmts(fn.body):
        if s.type == "if_statement":
            c = strip_parens(s.child_by_field_name("condition"))
            if c is not None and c.type == "condition_clause":
                c = strip_parens(c.named_children[-1]) if c.named_children else c
            if c is not None and c.type == "binary_expression" and \
                    _text(unit, strip_parens(c.child_by_field_name("left"))) == item:
                return s
    return None


def _folds(unit, fn, holders) -> list[Fold]:
    out = []
    for call in unit.nodes_of_type("call_expression", within=fn.body):
        f = call.child_by_field_name("function")
        name = _text(unit, f).split("::")[-1].split("<")[0].strip()
        args = [a for a in call.child_by_field_name("arguments").named_children
                if a.type != "comment"]
        op = next((o for o in operations(unit) if o.node.id == call.id), None)
        if op is not None and op.name == "reduce.warp":
            v = op.operands.get("value")
            if v is not None:
                out.append(Fold(call, v))
            continue
        if name in holders:
            vals = [a for a in args if a.type not in ("true", "false", "number_literal")
                    and not _group_arg(unit, a)]
            if len(vals) == 1:
                out.append(Fold(call, vals[0]))
    # the outermost only: a fold inside another's arguments goes with it
    return [f for f in out if not any(g.call.id != f.call.id and _within(f.call, g.call)
                                      for g in out)]


def _group_arg(unit, a) -> bool:
    try:
        return a.type == "identifier" and group_of(unit, a) is not None
    except Exception:
        return False


def _shuffles(unit, s) -> bool:
    return any(o.name.startswith("shuffle.") and _within(o.node, s) for o in operations(unit))


def _syncs(unit, s, holders, skip) -> bool:
    """Whether statement ``s`` synchronizes outside the fold calls ``skip``."""
    for o in operations(unit):
        if o.name in _SYNC and _within(o.node, s) and not any(_within(o.node, k) for k in skip):
            return True
    for n in unit.walk(s):
        if n.type == "call_expression" and not any(_within(n, k) for k in skip):
            name = _text(unit, n.child_by_field_name("function")).split("::")[-1]
            if name in holders:
                return True
    return False


def _exchanges(unit, fn, shared, holders, folds, guard=None):
    lambdas = [n for n in unit.walk(fn.body) if n.type == "lambda_expression"]
    lists = [fn.body] + [n for n in unit.walk(fn.body)
                         if n.type == "compound_statement" and n.id != fn.body.id and
                         not any(_within(n, lam) for lam in lambdas)]
    out, uses = [], []
    for block in lists:
        run: list = []
        stmts = _stmts(block)
        for i, s in enumerate(stmts + [None]):
            loop = s is not None and s.type in ("for_statement", "while_statement",
                                                "do_statement")
            # the guard's block (`if (row < n) { ... }`) holds the kernel: its statements
            # are a list of their own, the guard no exchange
            member = s is not None and not loop and (guard is None or s.id != guard.id) and (
                _syncs(unit, s, holders, folds) or bool(_stored(unit, s, shared)) or
                _copy(unit, s, shared) is not None)
            if loop and (_syncs(unit, s, holders, folds) or run and (
                    _stored(unit, s, shared) or _combine(unit, s, shared))):
                member = True  # a shuffle loop, a tree loop, the slots summed up
            if not member and run and s is not None and _reset(unit, s) is not None:
                nxt = next((t for t in stmts[i + 1:] if _reset(unit, t) is None), None)
                got = _combine(unit, nxt, shared) if nxt is not None else None
                member = bool(got) and _reset(unit, s)[0] in {L for L, _ in got}
            if member:
                run.append(s)
                continue
            if run:
                out.append(_exchange(unit, fn, run, shared))
                run = []
    # an exchange inside another's statements (a tree loop's body) goes with it
    out = [x for x in out if not any(y.stmts[0].id != x.stmts[0].id and
                                     _within(x.stmts[0], t) for y in out for t in y.stmts)]
    # shared reads after an exchange read the value the last exchange before stored there
    for n in _subscripts(unit, fn.body, shared):
        if any(_within(n, s) for y in out for s in y.stmts):
            continue
        arr = _text(unit, strip_parens(n.child_by_field_name("argument")))
        before = [x for x in out if x.stmts[-1].end_byte <= n.start_byte and
                  arr in dict(x.values)]
        if before:
            last = max(before, key=lambda x: x.stmts[-1].end_byte)
            uses.append((n, dict(last.values)[arr]))
    return out, uses, ""


def _exchange(unit, fn, run, shared) -> Exchange:
    values: dict = {}
    for s in run:
        for a in _stored(unit, s, shared):
            left = strip_parens(a.child_by_field_name("left"))
            arr = _text(unit, strip_parens(left.child_by_field_name("argument")))
            if arr not in values and _text(unit, a.child_by_field_name("operator")) == "=":
                values[arr] = a.child_by_field_name("right")
    declared = dict(r for r in (_reset(unit, s) for s in run) if r is not None and r[1])
    outputs = []
    for s in run:
        got = [_copy(unit, s, shared)] if _copy(unit, s, shared) else \
            [(L, declared.get(L), arr) for L, arr in (_combine(unit, s, shared) or [])]
        for name, ty, arr in got:
            if arr in values and _reads(unit, fn, name, run[-1].end_byte):
                outputs.append((name, ty, arr))
    return Exchange(tuple(run), tuple(values.items()), tuple(outputs))


def _reads(unit, fn, name, after) -> bool:
    return any(n.type == "identifier" and unit.text(n) == name and n.start_byte >= after
               for n in unit.walk(fn.body))


def _int(unit, node) -> "int | None":
    """The integer constant ``node`` is (a literal, a macro, a constexpr), else None."""
    a = affine_of(unit, node) if node is not None else None
    return a.value() if a is not None and a.is_const() else None


def _leaders(unit, fn, scope) -> list:
    """Tests that hold for the group's first thread (with the condition they sit in) of if
    statements: ``rank == 0``, and ``rank < K`` for a number K of at least 1 (warp 0 of a
    block finishing a tree)."""
    out = []
    for s in unit.nodes_of_type("if_statement", within=fn.body):
        cond = s.child_by_field_name("condition")
        for n in unit.walk(cond):
            if n.type != "binary_expression":
                continue
            op = _text(unit, n.child_by_field_name("operator"))
            left, right = (strip_parens(n.child_by_field_name(k)) for k in ("left", "right"))
            k = _int(unit, right)
            if not (op == "==" and k == 0 or op == "<" and k is not None and k >= 1):
                continue
            r = role_of(unit, left)
            if r is not None and ((scope == "warp" and r.kind == "lane") or
                                  (scope == "block" and r.kind == "thread" and r.split is None)):
                out.append((cond, n))
    return out


def _sized(unit, fn, scope) -> list:
    """If statements (no else) whose test is the group's size against a number, ``size >=
    K`` or ``size > K`` (``blockDim.x >= 64``, ``blockSize >= 64`` with the block launched
    as blockSize): the rounds a tree takes only in a group of more than one thread. A group
    of one skips them (outermost only)."""
    want = "warp-size" if scope == "warp" else "block-size"
    out = []
    for s in unit.nodes_of_type("if_statement", within=fn.body):
        if s.child_by_field_name("alternative") is not None:
            continue
        c = strip_parens(s.child_by_field_name("condition"))
        if c is not None and c.type == "condition_clause" and c.named_children:
            c = strip_parens(c.named_children[-1])
        if c is None or c.type != "binary_expression":
            continue
        op = _text(unit, c.child_by_field_name("operator"))
        k = _int(unit, c.child_by_field_name("right"))
        r = role_of(unit, strip_parens(c.child_by_field_name("left")))
        if r is None or r.kind != want or r.split is not None or k is None:
            continue
        if op == ">=" and k >= 2 or op == ">" and k >= 1:
            out.append(s)
    return [s for s in out if not any(o.id != s.id and _within(s, o) for o in out)]


def _shared_scalars(unit, fn) -> list:
    """The declarations in ``fn`` of ``__shared__`` variables that are neither arrays,
    pointers nor extern: one value per block (a broadcast slot). A group of one thread owns
    it alone."""
    by: dict = {}
    for d in unit.shared_decls():
        if d.function == fn.name:
            by.setdefault(d.node.id, (d.node, []))[1].append(d)
    return [n for n, ds in by.values()
            if all(not d.dims and not d.extern and not d.type.endswith("*") for d in ds)]


# ------------------------------------------------------------ a thread per row
#: the operator of a scalar update: ``L += e``, ``L = fmaxf(L, e)`` and the like
_FOLD_OPS = {"+=": "sum", "fmaxf": "max", "fmax": "max", "max": "max", "fminf": "min",
             "fmin": "min", "min": "min"}


@dataclass(frozen=True)
class ThreadRows:
    """A kernel that gives each row to one thread: ``item`` the init declarator of the
    row (the global thread index); ``loops`` ``(LoopFact, ((local, op, type), ...))`` for
    each top-level loop from a constant by 1, with the scalars it folds; ``seeds`` the
    value node of each folded local's declaration, for each loop that starts after 0 (the
    fold's first element), in the order of ``loops`` (``()`` for a loop from 0)."""

    item: "Node"
    loops: tuple
    seeds: tuple = ()


def thread_rows(unit: "Unit", fn: "Function") -> "ThreadRows | str":
    """The :class:`ThreadRows` of kernel ``fn``, or why it is not one."""
    roles = geometry(unit, fn).roles
    item = next((n for n, r in roles.items() if r.kind == "global" and r.split is None and
                 r.dim == "x"), None)
    if item is None:
        return "no local is the global thread index"
    decl = next((d for d in unit.nodes_of_type("init_declarator", within=fn.body)
                 if _text(unit, d.child_by_field_name("declarator")) == item), None)
    if decl is None or decl.parent.parent.id != fn.body.id:
        return f"{item} is not declared at the top of {fn.name}"
    out, seeds = [], []
    for lf in loops(unit, fn):
        lp = lf.loop
        if lp.depth != 0:
            continue
        start = lp.init.value() if lp.init is not None and lp.init.is_const() else None
        if lf.kind != "counted" or lp.init_node is None or lp.step is None or \
                not isinstance(start, int) or start < 0 or not lp.step.is_const() or \
                lp.step.value() != 1:
            return f"the loop at line {lf.line} is not a row loop from a constant by 1"
        folds = _loop_folds(unit, fn, lp)
        if isinstance(folds, str):
            return f"{folds} in the loop at line {lf.line} is not a fold"
        seed = () if start == 0 else _seeds(unit, fn, lp, [v for v, _, _ in folds])
        if isinstance(seed, str):
            return f"the loop at line {lf.line} starts at {start}, but {seed}"
        out.append((lf, folds))
        seeds.append(seed)
    if not out:
        return "no row loop"
    return ThreadRows(decl, tuple(out), tuple(seeds))


def _seeds(unit, fn, lp, names):
    """The value node of the declaration of each of ``names`` before loop ``lp`` in its
    statement list, which nothing between them assigns; or why not."""
    if not names:
        return "it folds nothing"
    block = lp.node.parent
    before = []
    for st in block.named_children:
        if st.id == lp.node.id:
            break
        before.append(st)
    out = []
    for name in names:
        at = next((i for i in range(len(before) - 1, -1, -1) if before[i].type == "declaration"
                   and any(_text(unit, d.child_by_field_name("declarator")) == name
                           for d in before[i].named_children if d.type == "init_declarator")),
                  None)
        if at is None:
            return f"{name} is not declared with a value just before it"
        decl = next(d for d in before[at].named_children if d.type == "init_declarator" and
                    _text(unit, d.child_by_field_name("declarator")) == name)
        for st in before[at + 1:]:
            if any(_assigned(unit, n) == name for n in unit.walk(st)):
                return f"{name} is set again before it"
        out.append(decl.child_by_field_name("value"))
    return tuple(out)


def _assigned(unit, n) -> "str | None":
    if n.type == "assignment_expression":
        return _text(unit, strip_parens(n.child_by_field_name("left")))
    if n.type == "update_expression":
        return _text(unit, strip_parens(n.child_by_field_name("argument")))
    return None


def _loop_folds(unit, fn, lp):
    """``((local, op, type), ...)`` of the scalar updates of loop ``lp``, or the text of
    one that is no fold."""
    body_locals = {_text(unit, d.child_by_field_name("declarator"))
                   for d in unit.nodes_of_type("init_declarator", within=lp.body)}
    out = []
    for st in unit.walk(lp.body):
        if st.type != "assignment_expression":
            continue
        left = strip_parens(st.child_by_field_name("left"))
        if left.type != "identifier" or _text(unit, left) in body_locals:
            continue  # an element store, or a local of the body
        op = _text(unit, st.child_by_field_name("operator"))
        right = strip_parens(st.child_by_field_name("right"))
        callee = right.child_by_field_name("function") if right.type == "call_expression" \
            else None
        kind = _FOLD_OPS.get(op) if op == "+=" else _FOLD_OPS.get(_text(unit, callee)) if (
            op == "=" and callee is not None) else None
        if kind is None and op == "=":
            kind = _selected(unit, st, left, right)
        if kind is None:
            return f"`{_text(unit, st)}`"
        out.append((_text(unit, left), kind, _type_of(unit, fn, _text(unit, left))))
    return tuple(out)


def _selected(unit, st, left, right) -> "str | None":
    """``max``/``min`` when assignment ``st`` (``L = R``) keeps the larger or smaller of
    ``L`` and a value by a comparison: ``if (e > L) L = e;`` (the if's only statement, no
    else) or ``L = e > L ? e : L``; else None."""
    if right.type == "conditional_expression":
        cond = strip_parens(right.child_by_field_name("condition"))
        picks = [strip_parens(right.child_by_field_name(k))
                 for k in ("consequence", "alternative")]
        if _same(unit, picks[1], left):
            return _compared(unit, cond, picks[0], left)
        if _same(unit, picks[0], left):
            kind = _compared(unit, cond, picks[1], left)
            return {"max": "min", "min": "max"}.get(kind)
        return None
    stmt = st.parent
    body = stmt.parent if stmt is not None else None
    if body is not None and body.type == "compound_statement":
        if len([c for c in body.named_children if c.type != "comment"]) != 1:
            return None
        body = body.parent
    if stmt is None or stmt.type != "expression_statement" or body is None or \
            body.type != "if_statement" or body.child_by_field_name("alternative") is not None:
        return None
    cond = body.child_by_field_name("condition")
    if cond is not None and cond.type == "condition_clause":  # `if (c)`: the clause holds c
        inner = [c for c in cond.named_children if c.type != "comment"]
        cond = inner[0] if len(inner) == 1 else None
    return _compared(unit, strip_parens(cond), right, left) if cond is not None else None


_GREATER = {">": True, ">=": True, "<": False, "<=": False}


def _compared(unit, cond, e, acc) -> "str | None":
    """``max`` when ``cond`` says ``e`` is above ``acc`` (``e > acc``, ``acc < e``),
    ``min`` when below; else None."""
    if cond.type != "binary_expression":
        return None
    op = _text(unit, cond.child_by_field_name("operator"))
    a, b = (strip_parens(cond.child_by_field_name(k)) for k in ("left", "right"))
    if op not in _GREATER:
        return None
    if _same(unit, a, e) and _same(unit, b, acc):
        return "max" if _GREATER[op] else "min"
    if _same(unit, a, acc) and _same(unit, b, e):
        return "min" if _GREATER[op] else "max"
    return None


def _same(unit, a, b) -> bool:
    return "".join(_text(unit, a).split()) == "".join(_text(unit, b).split())


def _type_of(unit, fn, name) -> str:
    for d in unit.nodes_of_type("init_declarator", within=fn.body):
        if _text(unit, d.child_by_field_name("declarator")) == name:
            ty = d.parent.child_by_field_name("type")
            return _text(unit, ty) if ty is not None else "float"
    return "float"


__all__ = ["Exchange", "Fold", "GLOBAL_INDEX", "RowShare", "ThreadRows", "shared_names",
           "shared_rows", "thread_rows"]
