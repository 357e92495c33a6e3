"""What a region of a kernel does for a whole block: every thread run, barriers and warp
collectives honoured.

:class:`Block` runs the same statements for each thread of one 1-D block with the
one-thread machine of :mod:`kltrans.model.effects` (integers concrete, everything else a
:class:`~kltrans.model.effects.Term`), the threads sharing memory: global arrays, the
block's ``__shared__`` arrays (static, ``extern``, reached through an accessor struct such
as ``SharedMemory<T>()``) and an atomic log. Threads run one at a time, each up to its next
synchronization point, in thread order, so a run is deterministic:

- a block barrier (``__syncthreads()``, ``block.sync()``, ``cg::sync(block)``) releases
  when every thread that has not returned waits at one;
- a warp operation (shuffles up, down, xor and by index, ``__syncwarp``, ``tile.sync()``,
  ``cg::reduce`` and ``__reduce_*_sync``, votes) resolves over the lanes of a warp that
  reach it; reading a lane that did not is :class:`Unsupported` (undefined in CUDA too);
- atomics (``atomicAdd`` and the rest of ``spellings.yaml``) update memory at once and are
  logged as ``(array, element, operation, value)``.

Code that relies on lockstep warps without ``__syncwarp`` sees its lanes run one after the
other and computes something else: a check built on this machine then refuses, it never
accepts wrongly. :func:`normal` brings a value to a form where reassociated sums, products,
maxima and minima compare equal (the caller decides whether reassociation is allowed).

Layering: :mod:`kltrans.model.effects`, :mod:`kltrans.model.ops`, :mod:`kltrans.syntax`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import greenlet

from kltrans.model.code import declaration
from kltrans.model.effects import Machine
from kltrans.model.values import (Cell, Effects, MemRef, OutOfTime, Ptr, Return, Term,
                                  Unsupported, binop)

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

MAX_THREADS = 1024
#: calls that make a cooperative group (a value the machine carries, never looks into)
GROUP_MAKERS = ("this_thread_block", "tiled_partition", "this_grid", "coalesced_threads")
_MAX = {"max", "fmax", "fmaxf", "__hmax"}
_MIN = {"min", "fmin", "fminf", "__hmin"}
_WARP_OPS = {"shuffle.down", "shuffle.up", "shuffle.xor", "shuffle.idx", "barrier.warp",
             "reduce.warp", "vote.ballot", "vote.any", "vote.all"}
_ATOMICS = {"atomic.add": "+", "atomic.max": "max", "atomic.min": "min"}


def _ident(d):
    while d.type != "identifier" and d.child_by_field_name("declarator") is not None:
        d = d.child_by_field_name("declarator")
    return d


@dataclass
class BlockEffects(Effects):
    """:class:`~kltrans.model.effects.Effects` of a block, and its atomics in the order
    they ran: ``(array, element, operator, value, call node id)``."""

    atomics: list = field(default_factory=list)


class _Thread(Machine):
    """One thread of a :class:`Block`: the one-thread machine, with the block's memory and
    synchronization."""

    def __init__(self, proto: Machine, block: "Block", t: int):
        self.__dict__.update(proto.__dict__)
        self.ints = dict(proto.ints)
        bx, by, _ = block.dims
        self.ints.update({"threadIdx.x": t % bx, "threadIdx.y": t // bx % by,
                          "threadIdx.z": t // (bx * by)})
        self.block, self.t = block, t
        self.atomic = False  # inside an atomic's read-modify-write
        self.fx = block.fx
        self.steps, self.depth = 0, 0

    # ------------------------------------------------------------- shared memory
    def declare(self, n, env):
        decl = declaration(self.unit, n)
        if not decl.shared:
            return super().declare(n, env)
        extern = decl.extern
        typ = self.bound(decl.type)
        for d in decl.declarators:
            name, dims, ptr, _ = d.resolve(self, env) if not extern else \
                (self.unit.text(_ident(d.node)), [], False, False)
            base = "shared (dynamic)" if extern else f"shared {name}"
            self.block.types.setdefault(base, typ)
            if not extern and not dims and not ptr:  # a scalar: one shared element
                env[name] = MemRef(self, base, 0, 1, None)
            else:
                env[name] = Cell(Ptr(base, 0, 1, None, tuple(dims[1:])))

    def touched(self, key, write):
        if key[0].startswith("shared"):
            self.block.access(self.t, key, "atomic" if self.atomic else
                              "write" if write else "read")

    def _elem(self, base):
        if base in self.block.types:
            return self.block.types[base]
        return super()._elem(base)

    def view(self, p, typ):
        if p.base == "shared (dynamic)":
            target = self.bound(typ).rstrip("* ").replace("const", "").replace(
                "volatile", "").strip()
            seen = self.block.types.setdefault("shared (dynamic) view", target)
            if seen != target:
                raise Unsupported("the dynamic shared memory is viewed as two types")
            if p.offset:
                raise Unsupported("a view of the dynamic shared memory at an offset")
            return Ptr(p.base, 0, 1, None)
        return super().view(p, typ)

    # ------------------------------------------------------------------- calls
    def call(self, n, env):
        op = self.ops.get(n.id)
        fnode = n.child_by_field_name("function")
        if op is None:
            name = self.unit.text(fnode.child_by_field_name("name") if
                                  fnode.type == "template_function" else fnode)
            short = name.split("::")[-1]
            if short in GROUP_MAKERS:
                return Term("group", short)
            if fnode.type == "template_function" and short in accessors(self.unit):
                return Ptr("shared (dynamic)", 0, 1, None)
            return super().call(n, env)
        if op.name in ("load.cached", "store.cached"):
            return super().call(n, env)
        if self.selecting and self.group_query(op) is None:
            raise Unsupported(f"{op.spelling} under an if that depends on a value")
        arg = {k: v for k, v in op.operands.items()}
        width = op.group.width if op.group is not None and op.group.width else 32
        if op.name in _ATOMICS:
            ref = self.lvalue_of_address(arg["address"], env)
            val = self.expr(arg["value"], env)
            sym = _ATOMICS[op.name]
            self.atomic = True
            try:
                old = ref.get()
                ref.set(binop("+", old, val) if sym == "+" else Term("call", sym, old, val))
            finally:
                self.atomic = False
            self.fx.atomics.append((ref.base, ref.index, sym, val, n.id))
            return old
        got = self.group_query(op)  # thread_rank, meta_group_rank, size ...: the thread's own
        if got is not None:
            return got
        if op.name == "barrier.block":
            return self.block.park(self.t, ("barrier", n.id, None))
        if op.name in _WARP_OPS:
            val = self.expr(arg["value"], env) if "value" in arg else None
            if "predicate" in arg:
                val = self.concrete(arg["predicate"], env, "a vote's predicate")
            k = None
            for key in ("delta", "lane_mask", "src_lane"):
                if key in arg:
                    k = self.concrete(arg[key], env, "a shuffle's lane operand")
            if "width" in arg:
                width = self.concrete(arg["width"], env, "a shuffle's width")
            return self.block.park(self.t, ("warp", op.name, (val, k, width, op.reduce_op)))
        raise Unsupported(f"{op.spelling} ({op.name}) in a block run")

    def store_keys(self, stmt, env) -> list:
        """The memory elements running ``stmt`` stores to (run in ``env``)."""
        before = dict(self.fx.stores)
        self.stmt(stmt, env)
        return [k for k, v in self.fx.stores.items() if k not in before or before[k] is not v]

    def lvalue_of_address(self, node, env):
        p = self.expr(node, env)
        if not isinstance(p, Ptr):
            raise Unsupported("an atomic on something that is not a known pointer")
        return MemRef(self, p.base, p.offset, 1, None)


class Block:
    """Runs a region for every thread of one block of ``size`` threads (see the module
    doc). ``ints`` are the launch's integers (sizes, template parameters, ``blockIdx.*``);
    ``dims``, the block's shape ``(x, y, z)`` (default ``(size, 1, 1)``) sets ``blockDim``;
    thread ``t`` (the linear rank, warps are 32 consecutive ranks as on the device) has
    ``threadIdx.x = t % x``, ``threadIdx.y = t / x % y``, ``threadIdx.z = t / (x * y)``."""

    def __init__(self, unit: "Unit", fn: "Function", ints: dict, size: int,
                 fx: BlockEffects | None = None, dims: tuple | None = None):
        dims = tuple(dims or (size,)) + (1,) * (3 - len(dims or (size,)))
        if not 1 <= size <= MAX_THREADS or dims[0] * dims[1] * dims[2] != size:
            raise Unsupported(f"a block of {size} threads shaped {dims}")
        self.unit, self.fn, self.size, self.dims = unit, fn, size, dims
        ints = dict(ints, **{"blockDim.x": dims[0], "blockDim.y": dims[1],
                             "blockDim.z": dims[2]})
        self.proto = Machine(unit, fn, ints)
        self.fx = fx if fx is not None else BlockEffects()
        self.types: dict = {}
        self.threads = [_Thread(self.proto, self, t) for t in range(size)]
        self._scheduler = None  # the greenlet that runs the threads, during run
        self._threads: list = []
        self._parked: dict = {}
        self._result: dict = {}
        #: during :meth:`run`, the shared elements touched since the last block barrier:
        #: {element: {"read" | "write" | "atomic": {thread: its warp's __syncwarp count}}}
        self._access: dict | None = None
        self._wphase: dict = {}

    # ------------------------------------------------------------------ running
    def envs(self, prefix) -> list[dict]:
        """Each thread's environment after the statements ``prefix`` (none of them may
        synchronize); a statement that cannot run leaves the names it assigns unreadable."""
        out = []
        for th in self.threads:
            env = th.parameters()
            for s in prefix:
                try:
                    th.stmt(s, env)
                except Unsupported:
                    for name in _assigned(self.unit, s):
                        env[name] = Cell(None)
            out.append(env)
        for key in [k for k in self.fx.stores if not k[0].startswith("shared")]:
            del self.fx.stores[key]
        self.fx.loads.clear()
        self.fx.atomics.clear()
        return out

    def run_each(self, stmts) -> BlockEffects:
        """Run ``stmts`` for one thread after another (code that never synchronizes: a
        synchronization raises :class:`Unsupported`), each from the kernel's parameters.
        With no barrier, threads that touch one shared element race (:meth:`access`)."""
        self._access, self._wphase = {}, {}
        try:
            for th in self.threads:
                env = th.parameters()
                try:
                    for s in stmts:
                        th.stmt(s, env)
                except Return:  # the thread is done
                    pass
        finally:
            self._access = None
        return self.fx

    def first_shared_store(self, stmts) -> int:
        """The index of the first of ``stmts`` in which thread 0 stores to shared memory
        (``len(stmts)`` when none does)."""
        th = self.threads[0]
        env = th.parameters()
        for i, s in enumerate(stmts):
            before = set(self.fx.stores)
            try:
                th.stmt(s, env)
            except Unsupported:
                for name in _assigned(self.unit, s):
                    env[name] = Cell(None)
            if any(k[0].startswith("shared") for k in set(self.fx.stores) - before):
                return i
        return len(stmts)

    def run(self, stmts, envs: list[dict]) -> BlockEffects:
        """Run ``stmts`` on every thread, thread ``t`` in ``envs[t]``; the block's effects.
        :class:`Unsupported` when a thread cannot run them or the threads deadlock."""
        errors: dict = {}

        def main(t):
            th = self.threads[t]
            try:
                for s in stmts:
                    th.stmt(s, envs[t])
            except Return:  # the thread leaves the kernel: done, barriers go on without it
                pass
            except greenlet.GreenletExit:  # the run ended before this thread did
                return
            except Unsupported as e:
                errors[t] = str(e)
            except Exception as e:  # an interpreter error on odd code: never a result
                errors[t] = f"{type(e).__name__}: {e}"
            except BaseException:  # pragma: no cover - a Return out of the region
                errors[t] = "a return from the region"
            self._parked[t] = ("done", None, None)

        self._scheduler = greenlet.getcurrent()
        self._access, self._wphase = {}, {}
        self._threads = [greenlet.greenlet(main, parent=self._scheduler)
                         for _ in range(self.size)]
        try:
            runnable = list(range(self.size))
            first = True
            while True:
                for t in runnable:
                    self._parked.pop(t, None)
                    if first:
                        self._threads[t].switch(t)
                    else:
                        self._threads[t].switch()
                    if errors:
                        raise Unsupported(f"thread {min(errors)}: {errors[min(errors)]}")
                first = False
                live = [t for t in range(self.size) if self._parked[t][0] != "done"]
                if not live:
                    return self.fx
                runnable = self._resolve(live)
        finally:
            for g in self._threads:
                if g:  # started and not finished: unwind it (GreenletExit)
                    g.throw()
            self._scheduler = None
            self._access = None

    def access(self, t: int, key: tuple, kind: str):
        """Thread ``t`` reads, writes or atomically updates shared element ``key``: two
        threads that touch one element between two block barriers, one of them writing
        (an atomic against a plain access counts; two atomics do not), race unless they are
        lanes of one warp with a ``__syncwarp`` between. Threads run one after another
        here, so a race would compute whatever this order gives: :class:`Unsupported`."""
        if self._access is None:  # not a run of the whole block: nothing to order
            return
        seen = self._access.setdefault(key, {})
        w = t // 32
        ph = self._wphase.get(w, 0)
        against = ("write", "atomic") if kind == "read" else \
            ("read", "write") if kind == "atomic" else ("read", "write", "atomic")
        for other in against:
            for u, uph in seen.get(other, {}).items():
                if u != t and not (u // 32 == w and uph != ph):
                    raise Unsupported(
                        f"threads {min(u, t)} and {max(u, t)} race on {key[0]}[{key[1]}] "
                        f"(a {other} and a {kind} with no barrier between)")
        seen.setdefault(kind, {})[t] = ph

    def park(self, t: int, what: tuple):
        """Called by thread ``t`` at a synchronization point; returns its result there.
        Only one thread runs at a time: each is a greenlet, and parking switches back to
        the scheduler, which switches into the next."""
        if self._scheduler is None:
            raise Unsupported("a synchronization outside a block run")
        self._parked[t] = what
        self._scheduler.switch()
        return self._result.pop(t, None)

    def _resolve(self, live: list[int]) -> list[int]:
        """Release the threads whose synchronization can complete: warp operations first,
        then a block barrier that every live thread waits at."""
        released = []
        warps: dict = {}
        for t in live:
            if self._parked[t][0] == "warp":
                warps.setdefault(t // 32, []).append(t)
        for lanes in warps.values():
            names = {self._parked[t][1] for t in lanes}
            if len(names) != 1:
                raise Unsupported(f"the lanes of a warp wait at different operations {sorted(names)}")
            self._warp(names.pop(), lanes)
            released += lanes
        if released:
            return sorted(released)
        if all(self._parked[t][0] == "barrier" for t in live):
            if self._access is not None:
                self._access.clear()
            return live
        raise Unsupported("the threads of the block never meet at one barrier")

    def _warp(self, name: str, lanes: list[int]):
        got = {t: self._parked[t][2] for t in lanes}
        width = got[lanes[0]][2]
        if name == "barrier.warp":
            for t in lanes:
                self._result[t] = None
            w = lanes[0] // 32
            self._wphase[w] = self._wphase.get(w, 0) + 1
            return
        folded: dict = {}  # a vote's or reduction's value, once per group of lanes
        for t in lanes:
            val, k, w, rop = got[t]
            lane, seg = t % 32, (t % 32) // w * w
            if name in ("shuffle.down", "shuffle.up", "shuffle.xor", "shuffle.idx"):
                src = {"shuffle.down": lane + k, "shuffle.up": lane - k,
                       "shuffle.xor": lane ^ k, "shuffle.idx": seg + k % w}[name]
                if not seg <= src < seg + w:
                    self._result[t] = val
                    continue
                src += t - lane
                if src not in got:
                    raise Unsupported(f"lane {lane} reads lane {src % 32}, which is not there")
                self._result[t] = got[src][0]
                continue
            if lane // width in folded:
                self._result[t] = folded[lane // width]
                continue
            group = [u for u in lanes if (u % 32) // width == lane // width]
            if name == "vote.ballot":
                self._result[t] = sum(1 << (u % 32) for u in group if got[u][0])
            elif name == "vote.any":
                self._result[t] = int(any(got[u][0] for u in group))
            elif name == "vote.all":
                self._result[t] = int(all(got[u][0] for u in group))
            else:  # reduce.warp
                acc = None
                for u in group:
                    acc = got[u][0] if acc is None else _combine(rop, acc, got[u][0])
                self._result[t] = acc
            folded[lane // width] = self._result[t]


def _combine(op: str | None, a, b):
    if op == "sum":
        return binop("+", a, b)
    if op in ("max", "min"):
        if isinstance(a, int) and isinstance(b, int):
            return max(a, b) if op == "max" else min(a, b)
        return Term("call", op, a, b)
    if op in ("and", "or", "xor"):
        return binop({"and": "&", "or": "|", "xor": "^"}[op], a, b)
    raise Unsupported(f"a warp reduction with operator {op}")


def _assigned(unit, stmt) -> set[str]:
    out = set()
    for n in unit.walk(stmt):
        target = None
        if n.type == "assignment_expression":
            target = n.child_by_field_name("left")
        elif n.type == "update_expression":
            target = n.child_by_field_name("argument")
        elif n.type in ("init_declarator",):
            target = n.child_by_field_name("declarator")
        while target is not None and target.type not in ("identifier",):
            target = target.child_by_field_name("argument") or \
                target.child_by_field_name("declarator")
        if target is not None:
            out.add(unit.text(target))
    return out


def accessors(unit: "Unit") -> set[str]:
    """The structs and classes of the unit that hand out ``extern __shared__`` memory (an
    accessor such as ``SharedMemory<T>()``)."""
    def find(unit):
        out = set()
        for n in unit.walk(unit.root):
            if n.type in ("struct_specifier", "class_specifier") and \
                    n.child_by_field_name("body") is not None and \
                    "extern __shared__" in " ".join(unit.text(n).split()):
                nm = n.child_by_field_name("name")
                if nm is not None:
                    out.add(unit.text(nm))
        return out
    return unit.memo("model.block.accessors", find)


# ------------------------------------------------------------------- block folds
_SYNC_OPS = _WARP_OPS | {"barrier.block", "scan.warp"}


@dataclass(frozen=True)
class LeaderFold:
    """A block's fold ending in one atomic: from statement ``start`` of the kernel's body
    to its end, the block combines every thread's ``value`` with ``op`` and one thread
    issues the atomic ``call`` with the result."""

    start: "object"
    value: str
    op: str
    call: "object"
    launches: int
    kind: str = "local"  # local: a variable; stored: the value first stored to shared memory


def sync_holders(unit: "Unit") -> dict:
    """The ``__device__`` functions and lambdas (by name, with their node) that hold a
    barrier or a warp operation of ``spellings.yaml``; a function holding such a lambda
    counts too."""
    def find(unit):
        from kltrans.model.ops import operations

        out: dict = {}
        for o in operations(unit):
            if o.name not in _SYNC_OPS:
                continue
            n = o.node.parent
            while n is not None:
                if n.type == "function_definition":
                    d = n.child_by_field_name("declarator")
                    while d is not None and d.child_by_field_name("declarator") is not None:
                        d = d.child_by_field_name("declarator")
                    if d is not None:
                        out.setdefault(unit.text(d).split("::")[-1], n)
                    break
                if n.type == "lambda_expression" and n.parent is not None and \
                        n.parent.type == "init_declarator":
                    out.setdefault(unit.text(n.parent.child_by_field_name("declarator")), n)
                n = n.parent
        return out
    return unit.memo("model.block.sync_holders", find)


def region_start(unit: "Unit", fn: "Function"):
    """The first statement of ``fn``'s body that synchronizes threads: a barrier or a warp
    operation of ``spellings.yaml``, directly or in a ``__device__`` function or lambda it
    calls (:func:`sync_holders`); None when none does."""
    from kltrans.model.ops import operations

    holders = set(sync_holders(unit)) - {fn.name}
    ids = {o.node.id for o in operations(unit) if o.name in _SYNC_OPS}
    for s in fn.body.named_children:
        if s.type == "comment":
            continue
        if s.type == "declaration" and any(c.type == "lambda_expression"
                                           for c in unit.walk(s)):
            continue  # defining a helper runs none of it
        for n in unit.walk(s):
            if n.id in ids or (n.type == "identifier" and unit.text(n) in holders and
                               n.parent is not None and
                               n.parent.type in ("call_expression", "template_function")):
                return s
    return None


def leader_fold(unit: "Unit", fn: "Function", call, launches: list[dict],
                size: int) -> "LeaderFold | str":
    """Whether the atomic ``call`` ends a block fold (:class:`LeaderFold`), or why not.

    The region runs from the first statement that synchronizes (:func:`region_start`) or
    stores to shared memory to the end of the body. What each thread contributes is either
    a local declared before the region (``value`` its name) or, when the region starts by
    storing one value to shared memory, that value (``value`` the stored expression's
    text). Run for a whole block at each of ``launches`` with every thread's contribution
    a distinct symbol, the region must issue exactly that one atomic, with the fold of all
    the symbols by its operator (up to reassociation), and store to no global memory."""
    from kltrans.model.ops import operations

    body = [s for s in fn.body.named_children if s.type != "comment"]
    sync = region_start(unit, fn)
    if sync is None:
        return "the kernel does not synchronize threads before the atomic"
    if not body or not (body[-1].start_byte <= call.start_byte < body[-1].end_byte):
        return "the atomic is not in the kernel's last statement"
    if not sync.start_byte <= call.start_byte:
        return "the atomic comes before the first synchronization"
    op = next((o for o in operations(unit) if o.node.id == call.id), None)
    if op is None or op.name not in _ATOMICS:
        return "not an atomic add, max or min"
    sym = _ATOMICS[op.name]
    k = next(i for i, s in enumerate(body) if s.id == sync.id)
    try:
        k = min(k, Block(unit, fn, launches[0], size).first_shared_store(body[:k]))
    except Unsupported as e:
        return f"the statements before the fold cannot be run: {e}"
    prefix, region = body[:k], body[k:]
    if any(n.type == "return_statement" for s in prefix for n in unit.walk(s)):
        return "a thread may return before the fold: the block is not whole"
    stored = _stored_value(unit, region[0])
    read = {unit.text(n) for s in region for n in unit.walk(s) if n.type == "identifier"}
    cands = [nm for s in reversed(prefix) if s.type == "declaration"
             for nm in _assigned(unit, s) if nm in read]
    tries = ([("stored", unit.text(stored))] if stored is not None else []) + \
        [("local", v) for v in cands]
    if not tries:
        return "no local declared before the fold is read by it, and it does not start " \
            "by storing a value to shared memory"
    reasons = []
    for kind, v in tries:
        why = _fold_check(unit, fn, call, launches, size, prefix, region, kind, v, sym)
        if why is None:
            return LeaderFold(region[0], v, sym, call, len(launches), kind)
        reasons.append(f"folding {v}: {why}")
    return reasons[0]


def _stored_value(unit, stmt):
    """E of a first statement ``S[...] = E;`` (a store the check confirms is to shared
    memory), else None."""
    if stmt.type != "expression_statement" or not stmt.named_children:
        return None
    e = stmt.named_children[0]
    if e.type != "assignment_expression" or unit.text(e.child_by_field_name("operator")) != "=":
        return None
    left = e.child_by_field_name("left")
    if left.type not in ("subscript_expression", "pointer_expression"):
        return None
    return e.child_by_field_name("right")


def _fold_check(unit, fn, call, launches, size, prefix, region, kind, v, sym) -> str | None:
    for ints in launches:
        try:
            blk = Block(unit, fn, ints, size)
            envs = blk.envs(prefix)
            ins = [Term("in", v, t) for t in range(size)]
            rest = region
            if kind == "local":
                for t, env in enumerate(envs):
                    env[v] = Cell(ins[t])
            else:
                for t, env in enumerate(envs):
                    keys = blk.threads[t].store_keys(region[0], env)
                    if len(keys) != 1 or not keys[0][0].startswith("shared"):
                        return "the first statement does not store one shared element"
                    blk.fx.stores[keys[0]] = ins[t]
                rest = region[1:]
            fx = blk.run(rest, envs)
        except Unsupported as e:
            return str(e)
        mine = [a for a in fx.atomics if a[4] == call.id]
        if len(fx.atomics) != 1 or len(mine) != 1:
            return f"the block issues {len(fx.atomics)} atomic(s), {len(mine)} of them this one"
        base, idx, _, val, _ = mine[0]
        stray = [key for key in fx.stores if not key[0].startswith("shared") and key != (base, idx)]
        if stray:
            return f"the region also stores {stray[0][0]}[{stray[0][1]}]"
        try:
            differs = normal(val) != normal(fold(sym, ins))
        except Unsupported as e:
            return str(e)
        if differs:
            shown = val.show(3) if isinstance(val, Term) else val
            return f"the atomic adds {shown}, not the {sym}-fold of every thread's {v}"
    return None


def same_effects(a: "Unit", b: "Unit", kernel: str, launches: list[dict],
                 size: int, same_kinds: bool = True) -> tuple[bool, str]:
    """Whether kernel ``kernel`` of units ``a`` and ``b`` does the same to memory for one
    block of ``size`` threads at each of ``launches``: the same values (up to
    reassociation) stored at the same global elements, and per address the same fold of
    atomics; with why not. Either side that the machine cannot run is a no, with the
    reason. With ``same_kinds`` (the default) both must also have the same kinds of
    collectives; a rewrite that moves a fold to another scope in the same order (a tree's
    last rounds done by one warp) passes False."""
    from kltrans.model.collectives import collectives

    kinds = []
    for u in (a, b):
        fn = next((f for f in u.kernels() if f.name == kernel), None)
        if fn is None or fn.body is None:
            return False, f"no kernel {kernel}"
        kinds.append({(c.scope, c.kind) for c in collectives(u) if c.scope != "thread"})
    if same_kinds and kinds[0] != kinds[1]:
        return False, f"the collectives differ: {sorted(kinds[0] ^ kinds[1])}"
    for ints in launches:
        got = []
        for u in (a, b):
            fn = next(f for f in u.kernels() if f.name == kernel)
            try:
                res = _block_results(u, fn, ints, size, kernel)
            except OutOfTime as e:
                return False, f"the block machine cannot run {kernel}: {e}"
            if isinstance(res, str):
                return False, res
            got.append(res)
        if got[0] != got[1]:
            what = "atomics" if got[0][0] != got[1][0] else "stores"
            return False, f"the {what} of a block differ"
    return True, f"the same stores and atomics for a block of {size} at {len(launches)} launches"


def _block_results(u: "Unit", fn, ints: dict, size: int, kernel: str):
    body = [s for s in fn.body.named_children if s.type != "comment"]
    try:
        blk = Block(u, fn, ints, size)
        fx = blk.run(body, blk.envs([]))
    except OutOfTime:
        raise
    except Unsupported as e:
        return f"the block machine cannot run {kernel}: {e}"
    try:
        return results(fx, keep_shared=False)
    except OutOfTime:
        raise
    except Unsupported as e:
        return f"the block's results of {kernel} cannot be compared: {e}"


def results(fx: BlockEffects, keep_shared: bool = True) -> tuple[dict, dict]:
    """What a run did to memory, in the form two runs are compared in: per atomic address
    and operation the normal fold of what was added, and per other element its normal
    stored value (shared memory's left out unless ``keep_shared``)."""
    folds: dict = {}
    for base, idx, op, val, _ in fx.atomics:
        folds.setdefault((base, idx, op), []).append(val)
    atomic = {f[:2] for f in folds}
    memo: dict = {}
    return ({k: normal(fold(k[2], v), memo) for k, v in folds.items()},
            {k: normal(v, memo) for k, v in fx.stores.items()
             if (keep_shared or not k[0].startswith("shared")) and k not in atomic})

# ------------------------------------------------------------------- comparison

#: the subterms one comparison may write out: a value built from shared sums (``x = x + x``)
#: flattens to exponentially many operands; past this the comparison is Unsupported
MAX_NORMAL_VISITS = 1 << 21
_VISITS = "visits"  # memo's count (its other keys are term hashes, integers)


def normal(v, memo: dict | None = None):
    """``v`` with every chain of ``+``, ``*``, max and min flattened into one operation
    over its operands in a fixed order, and identities (0 in a sum, ``-INFINITY`` in a
    max, ``INFINITY`` in a min) dropped: two values equal up to reassociation compare
    equal. Anything else is rebuilt with normal operands."""
    memo = {} if memo is None else memo
    if not isinstance(v, Term):
        return v
    if v.h in memo:
        return memo[v.h]
    memo[_VISITS] = memo.get(_VISITS, 0) + 1
    if memo[_VISITS] > MAX_NORMAL_VISITS:
        raise Unsupported(f"a value too large to compare (more than {MAX_NORMAL_VISITS} "
                          f"subterms written out)")
    if v.op == "select":
        as_fold = _select_fold(v)
        if as_fold is not None:
            out = memo[v.h] = normal(as_fold, memo)
            return out
    fam = _family(v)
    if fam is not None:
        parts: list = []
        stack = [v]
        while stack:
            x = stack.pop()
            if isinstance(x, Term) and x.op == "select":
                x = _select_fold(x) or x
            if isinstance(x, Term) and _family(x) == fam:
                memo[_VISITS] = memo.get(_VISITS, 0) + 1
                if memo[_VISITS] > MAX_NORMAL_VISITS:  # a sum of sums shared many times
                    raise Unsupported(f"a value too large to compare (more than "
                                      f"{MAX_NORMAL_VISITS} subterms written out)")
                stack.extend(reversed(_operands(x)))
            else:
                parts.append(normal(x, memo))
        parts = [p for p in parts if not _identity(fam, p)]
        if len(parts) == 1:
            out = parts[0]
        else:
            out = Term("ac", fam, *sorted(parts, key=_order))
    else:
        args = [normal(a, memo) for a in v.args]
        # unchanged operands: the term itself (terms are values; building it anew costs)
        out = v if all(x is y for x, y in zip(args, v.args)) else Term(v.op, *args)
    memo[v.h] = out
    return out


def _select_fold(t: Term) -> Term | None:
    """``select(a > b, a, b)`` (the if-converted ``if (a > b) m = a;``) as ``max(a, b)``;
    ``<``, and the operands the other way round, a min: the same up to NaNs, which
    every comparison of this module leaves aside."""
    cond, a, b = t.args
    if not (isinstance(cond, Term) and cond.op == "op" and cond.args[0] in _ORDER):
        return None
    cmp, left, right = cond.args
    if (left, right) == (a, b):
        larger = cmp in (">", ">=")
    elif (left, right) == (b, a):
        larger = cmp in ("<", "<=")
    else:
        return None
    return Term("call", "fmaxf" if larger else "fminf", a, b)


_ORDER = (">", ">=", "<", "<=")


def _family(t: Term) -> str | None:
    if t.op == "op" and t.args[0] in ("+", "*"):
        return t.args[0]
    if t.op == "call" and len(t.args) == 3 and t.args[0] in _MAX | _MIN:
        return "max" if t.args[0] in _MAX else "min"
    return None


def _operands(t: Term) -> list:
    return list(t.args[1:])


def _identity(fam: str, p) -> bool:
    if fam == "+":
        return p == 0 or (isinstance(p, Term) and p.op == "num" and p.args[0] == 0.0)
    if fam == "*":
        return p == 1 or (isinstance(p, Term) and p.op == "num" and p.args[0] == 1.0)
    return p == (_NEG_INFINITY if fam == "max" else _INFINITY)


_INFINITY = Term("sym", "INFINITY")
_NEG_INFINITY = Term("unop", "-", _INFINITY)


def _order(p):
    return (p.h, p.op) if isinstance(p, Term) else (hash(p), type(p).__name__)


def fold(op: str, values: list):
    """The term of ``values`` combined with ``op`` (``+``, ``max``, ``min``)."""
    acc = None
    for v in values:
        acc = v if acc is None else (binop("+", acc, v) if op == "+" else Term("call", op, acc, v))
    return acc


__all__ = ["GROUP_MAKERS", "Block", "BlockEffects", "LeaderFold", "accessors", "fold",
           "leader_fold", "normal", "region_start", "results", "same_effects",
           "sync_holders"]
