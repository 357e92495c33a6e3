"""The values the kernel model's machine computes with (:mod:`kltrans.model.effects`).

A value is a Python ``int`` (every integer the machine knows: sizes, thread ids, loop
variables), a :class:`Term` (anything else, symbolic: a float over the loads it reads), a
:class:`Ptr` into an array, an :class:`Agg` (a vector, a struct or a local array, one value
per lane) or an :class:`Fn` (a lambda). Locals live in :class:`Cell` objects; a
:class:`Ref` is a place that can be read and written (a local, a lane of an aggregate, a
member of a struct, an element of memory). :func:`binop` computes an operator on two values
as C computes integers, and as a term on anything else.

Layering: nothing of kltrans; the standard library only.
"""

from __future__ import annotations

import contextlib
import functools
import operator
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.model.effects import Machine

_VECTOR = re.compile(r"^(?:const\s+)?((?:u?(?:char|short|int|long|longlong))|float|double|half"
                     r"|__half|bfloat16|__nv_bfloat16)([1-4])$")
QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|static|register|"
                        r"constexpr|__shared__|__device__)\b")


class Unsupported(Exception):
    """The machine cannot run this code; the message says what it met."""


class OutOfTime(Unsupported):
    """A model run stopped at the caller's time budget: not an answer about the code, so
    nothing that remembers answers keeps it."""


# a wall-clock deadline (time.perf_counter()) for every run of the model, set by a caller
# with a time budget (diff --explain): a machine run past it stops with Unsupported
_DEADLINE: list = [None]
_TICKS = [0]


@contextlib.contextmanager
def time_budget(deadline: float | None):
    """Within the block, model runs end with :class:`Unsupported` once
    ``time.perf_counter()`` passes ``deadline`` (None: no limit; an enclosing budget that
    ends sooner stays)."""
    old = _DEADLINE[0]
    if deadline is not None and (old is None or deadline < old):
        _DEADLINE[0] = deadline
        _TICKS[0] = -1  # the first statement run looks at the clock
    try:
        yield
    finally:
        _DEADLINE[0] = old


def spent() -> bool:
    """Whether the time budget in force has run out (an answer computed since may be a
    stopped run's, not to be remembered)."""
    return _DEADLINE[0] is not None and time.perf_counter() > _DEADLINE[0]


class Memo:
    """A bounded per-process table of answers by key (oldest out first). An answer
    computed after the time budget in force ran out may be a stopped run's, so it is
    returned but not kept."""

    def __init__(self, limit: int):
        self.limit = limit
        self.table: dict = {}

    def get(self, key, compute):
        """The answer kept under ``key``, else ``compute()`` (kept unless :func:`spent`)."""
        if key in self.table:
            return self.table[key]
        got = compute()
        if not spent():
            if len(self.table) >= self.limit:
                self.table.pop(next(iter(self.table)))
            self.table[key] = got
        return got


def check_budget() -> None:
    """Called by the machines for every statement they run: the first call under a new
    budget and every 4096th after it look at the clock."""
    _TICKS[0] += 1
    if _TICKS[0] & 4095 == 0 and _DEADLINE[0] is not None and \
            time.perf_counter() > _DEADLINE[0]:
        raise OutOfTime("the time budget ran out during a model run")


class Term:
    """A symbolic value: an operation and its arguments (terms, numbers, names).

    Terms share their subterms, so a value computed from itself many times stays small;
    each carries a structural hash ``h`` computed once from its arguments' hashes, which
    makes equality (same operation, arguments with the same hashes) and the canonical
    order of commutative operands cost no walk of the tree. Two different terms with the
    same 64-bit hash would compare equal: a chance far below any other error here.
    """

    __slots__ = ("op", "args", "h")

    def __init__(self, op: str, *args):
        self.op = op
        self.args = args
        self.h = hash((op, *[a.h if a.__class__ is Term else (a.__class__, a) for a in args]))

    def __eq__(self, other) -> bool:
        return isinstance(other, Term) and self.h == other.h and self.op == other.op and \
            len(self.args) == len(other.args)

    def __hash__(self) -> int:
        return self.h

    def __repr__(self) -> str:
        return self.show()

    def show(self, depth: int = 4) -> str:
        """The term as text, subterms deeper than ``depth`` written ``...``."""
        if depth <= 0:
            return "..."
        parts = [a.show(depth - 1) if isinstance(a, Term) else repr(a) for a in self.args]
        return f"{self.op}({', '.join(parts)})"


@dataclass
class Ptr:
    """A pointer ``offset`` elements into array ``base``, moving ``width`` elements;
    ``inner``, the inner dimensions of the array it names (``tile`` of ``tile[8][33]``:
    ``(33,)``, so ``tile[i]`` is a row)."""

    base: str
    offset: int
    width: int = 1
    view: str | None = None
    inner: tuple = ()


@dataclass
class Agg:
    """A vector or a fixed local array: one value per element."""

    type: str
    slots: list


@dataclass
class Fn:
    """A lambda: its node and the environment it captured."""

    node: Any
    env: dict


@dataclass
class Cell:
    value: Any = None


@dataclass
class Effects:
    """``stores``: (array, element) -> value last stored; ``loads``: elements read from
    memory (not from a store of the same run)."""

    stores: dict = field(default_factory=dict)
    loads: set = field(default_factory=set)


class Return(Exception):
    """A ``return`` leaving a function or the region run (its value)."""

    def __init__(self, value):
        self.value = value


class Ref:
    def get(self):  # pragma: no cover - interface
        raise NotImplementedError

    def set(self, v):  # pragma: no cover - interface
        raise NotImplementedError


@dataclass
class VarRef(Ref):
    cell: Cell

    def get(self):
        if self.cell.value is None:
            raise Unsupported("a read of a variable with no value")
        return self.cell.value

    def set(self, v):
        self.cell.value = copy_value(v) if isinstance(v, Agg) else v


@dataclass
class SlotRef(Ref):
    of: Ref
    slot: int

    def get(self):
        agg = self.of.get()
        if not isinstance(agg, Agg) or not 0 <= self.slot < len(agg.slots):
            raise Unsupported("an element outside a vector or local array")
        if agg.slots[self.slot] is None:
            raise Unsupported("a read of an element with no value")
        return agg.slots[self.slot]

    def set(self, v):
        agg = self.of.get()
        if not isinstance(agg, Agg) or not 0 <= self.slot < len(agg.slots):
            raise Unsupported("an element outside a vector or local array")
        agg.slots[self.slot] = v


@dataclass
class FieldRef(Ref):
    """``count`` lanes from ``start`` of the struct or union ``of`` refers to: one value
    when the member is a scalar, else an aggregate of its lanes."""

    of: Ref
    start: int
    count: int
    type: str
    dims: tuple
    scalar: bool

    def _rec(self) -> Agg:
        rec = self.of.get()
        if not isinstance(rec, Agg) or self.start + self.count > len(rec.slots):
            raise Unsupported("a member outside its struct")
        return rec

    def get(self):
        lanes = self._rec().slots[self.start:self.start + self.count]
        if self.scalar and not self.dims:
            if lanes[0] is None:
                raise Unsupported("a read of a member with no value")
            return lanes[0]
        return Agg(self.type if not self.dims else f"{self.type}[]", list(lanes))

    def set(self, v):
        rec = self._rec()
        if self.scalar and not self.dims:
            rec.slots[self.start] = v
            return
        if not isinstance(v, Agg) or len(v.slots) != self.count:
            raise Unsupported(f"a {self.count}-lane member set from something else")
        rec.slots[self.start:self.start + self.count] = list(v.slots)


@dataclass(frozen=True)
class Layout:
    type: str
    lanes: int
    fields: dict  # member -> (first lane, lanes, type, array dims)


@dataclass
class MemRef(Ref):
    m: Machine
    base: str
    index: int
    width: int
    view: str | None

    def get(self):
        vals = []
        for k in range(self.width):
            key = (self.base, self.index + k)
            self.m.touched(key, False)
            if key in self.m.fx.stores:
                vals.append(self.m.fx.stores[key])
            else:
                self.m.fx.loads.add(key)
                vals.append(Term("load", *key))
        return vals[0] if self.width == 1 else Agg(self.view or "", vals)

    def set(self, v):
        if self.m.selecting:
            raise Unsupported("a store under an if that depends on a value")
        if self.width == 1:
            self.m.touched((self.base, self.index), True)
            self.m.fx.stores[(self.base, self.index)] = v
            return
        if not isinstance(v, Agg) or len(v.slots) != self.width:
            raise Unsupported(f"a {self.width}-element store of something else")
        for k, s in enumerate(v.slots):
            self.m.touched((self.base, self.index + k), True)
            self.m.fx.stores[(self.base, self.index + k)] = s


_COMMUTES = {"+", "*", "&", "|", "^", "==", "!="}


def binop(op: str, a, b):
    """``a op b``: integers computed as C computes them, anything else a term
    (commutative operators with their operands in a fixed order)."""
    if isinstance(a, bool):
        a = int(a)
    if isinstance(b, bool):
        b = int(b)
    if isinstance(a, Ptr) and isinstance(b, int) and op in "+-":
        return Ptr(a.base, a.offset + (b if op == "+" else -b) * a.width, a.width, a.view)
    if isinstance(b, Ptr) and isinstance(a, int) and op == "+":
        return binop(op, b, a)
    if isinstance(a, int) and isinstance(b, int):
        return int_op(op, a, b)
    if isinstance(a, (Ptr, Agg, Fn)) or isinstance(b, (Ptr, Agg, Fn)):
        raise Unsupported(f"'{op}' on a pointer or an aggregate")
    if a is None or b is None:
        raise Unsupported(f"'{op}' on the value of a call that returns nothing")
    if isinstance(a, int):
        a = Term("num", float(a))
    if isinstance(b, int):
        b = Term("num", float(b))
    if op in _COMMUTES and (b.h, repr(b.op)) < (a.h, repr(a.op)):
        a, b = b, a
    return Term("op", op, a, b)


_INT_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul,
            "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_,
            "|": operator.or_, "^": operator.xor,
            "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b),
            ">": lambda a, b: int(a > b), ">=": lambda a, b: int(a >= b),
            "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
            "&&": lambda a, b: int(bool(a and b)), "||": lambda a, b: int(bool(a or b))}


def int_op(op: str, a: int, b: int) -> int:
    """``a op b`` on integers as C computes it (division truncates toward zero); a
    division by zero or a shift out of range is :class:`Unsupported`."""
    if op in ("/", "%"):
        if b == 0:
            raise Unsupported("an integer division by zero")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)
        return q if op == "/" else a - q * b
    if op in ("<<", ">>") and not 0 <= b < 64:
        raise Unsupported("a shift out of range")
    f = _INT_OPS.get(op)
    if f is None:
        raise Unsupported(f"the operator {op}")
    return f(a, b)


def number(text: str):
    t = text.lower().rstrip("ul")
    if re.fullmatch(r"0x[0-9a-f]+|\d+", t):
        return int(t, 0)
    try:
        return Term("num", float(t.rstrip("f")))
    except ValueError:
        raise Unsupported(f"the number {text}") from None


@functools.lru_cache(maxsize=4096)
def vector_lanes(typ: str) -> int:
    """How many lanes a CUDA vector type has (``float4``: 4); 0 for any other type."""
    m = _VECTOR.match(QUALIFIERS.sub("", typ).strip())
    return int(m.group(2)) if m else 0


def copy_value(v):
    """``v``, with an aggregate copied (aggregates are values: assignment copies them)."""
    return Agg(v.type, list(v.slots)) if isinstance(v, Agg) else v
