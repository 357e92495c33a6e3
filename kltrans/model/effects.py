"""What a piece of a kernel does to memory, for one thread, as values over its loads.

:class:`Machine` runs statements of one thread with every integer concrete (sizes, thread
and block ids, loop variables: numbers chosen by the caller) and every other value symbolic:
a float is a term over the loads it reads, the kernel's scalar parameters and the calls it
makes (``call(__expf, load(x, 8))``, a :class:`Term`). Running a region gives an
:class:`Effects`: the final value stored at each ``(array, element)`` and the elements read
before being written. Two regions do the same thing when their effects are equal, however
they are spelled: ``y4[i] = v`` after ``float4 v = x4[i]; v.x = f(v.x); ...`` and four
``y[4*i+c] = f(x[4*i+c])`` store the same terms at the same elements.

Read: declarations (scalars, CUDA vector types such as ``float4``, fixed local arrays),
assignments and compound assignments, ``++``/``--``, ``if`` with a concrete condition,
``for``/``while`` loops whose conditions come out concrete (run, at most
:data:`MAX_STEPS` statements in all), ``return``; subscripts, ``*p``, pointer arithmetic,
``reinterpret_cast`` vector views (``float4`` over ``float``: 4 elements at a time), the
cached loads and stores of :mod:`kltrans.model.ops` (``__ldcs(p)``, ``__stcs(p, v)``: the
hint does not change the effect), structs and unions of the unit held in locals
(members by lane: a union's ``float4`` and ``float[4]`` members are the same four
values), ``make_float4`` and the other ``make_<vector>``
constructors, ``__device__`` functions of the unit and lambdas (called by value or by
reference: their bodies run), ``min``/``max`` of integers, the unit's integer constants
(macros, ``constexpr``). Any other call is a term named by its callee.

Not read (the machine raises :class:`Unsupported` with the reason, never guesses):
barriers, shuffles, atomics and the other operations of ``spellings.yaml`` that involve
other threads; ``break``/``continue``/``goto``; a branch on a symbolic value; structs,
unions and pointers held in memory (in arrays or reached through pointers), unions whose
members cut them into lanes of different widths, calls of member functions (what they
read of their object is not known). Distinct arrays are distinct memory (the gate's
inputs are separate buffers).

Layering: :mod:`kltrans.syntax`, the public names of :mod:`kltrans.analysis` and
:mod:`kltrans.model.ops`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kltrans.analysis.smem import record_fields, type_size
from kltrans.model.accesses import typedefs
from kltrans.model.launch import template_bindings
from kltrans.model.ops import operations
from kltrans.syntax.contract import file_constants
from kltrans.syntax.cuda import find_functions

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

MAX_STEPS = 20000
_PRIMITIVE = {"float", "double", "int", "unsigned", "long", "short", "char", "bool", "half",
              "__half", "size_t"}
MAX_DEPTH = 8
_VECTOR = re.compile(r"^(?:const\s+)?((?:u?(?:char|short|int|long|longlong))|float|double|half"
                     r"|__half|bfloat16|__nv_bfloat16)([1-4])$")
_LANES = "xyzw"
_SKIP = ("comment", "preproc_call", "empty_statement", ";")
_QUALIFIERS = re.compile(r"\b(const|volatile|__restrict__|__restrict|static|register|"
                         r"constexpr|__shared__|__device__)\b")


class Unsupported(Exception):
    """The machine cannot run this code; the message says what it met."""


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
        self.h = hash((op,) + tuple(a.h if isinstance(a, Term) else (type(a).__name__, a)
                                    for a in args))

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


class _Return(Exception):
    def __init__(self, value):
        self.value = value


#: cooperative-group queries a thread answers from its own indices (Machine.group_query)
_GROUP_QUERIES = ("index.block_rank", "index.thread", "index.lane", "index.warp",
                  "size.block", "size.tile", "size.tiles", "index.block")

class Machine:
    """Runs statements of ``fn`` for one thread of a launch (see the module doc)."""

    def __init__(self, unit: "Unit", fn: "Function", ints: dict[str, int]):
        self.unit = unit
        self.fn = fn
        self.ints = dict(ints)  # parameters and builtins: "n", "threadIdx.x", ...
        self.consts = file_constants(unit)
        # template parameters bound by the launch contract: values as integers, types
        # by name (T -> float)
        self.types: dict[str, str] = {}
        for name, arg in template_bindings(unit, fn).items():
            kind = next(t.kind for t in fn.template_params if t.name == name)
            if kind == "type":
                self.types[name] = arg
            elif arg in ("true", "false"):
                self.ints.setdefault(name, int(arg == "true"))
            elif re.fullmatch(r"-?\d+[uUlL]*", arg):
                self.ints.setdefault(name, int(arg.rstrip("uUlL")))
        self.funcs = {f.name: f for f in find_functions(unit) if f.body is not None}
        self.ops = {op.node.id: op for op in operations(unit)}
        self.fx = Effects()
        self.steps = 0
        self.depth = 0
        self.selecting = 0  # inside a branch of a value-dependent if (Machine.select)
        self._layouts: dict = {}

    # ------------------------------------------------------------------ entry points
    def parameters(self) -> dict:
        """The kernel's parameters as an environment: pointers to arrays of their own
        name, integers from ``ints``, other scalars symbolic."""
        env: dict = {}
        for p in self.fn.params:
            if p.name is None:
                continue
            if p.pointer:
                env[p.name] = Cell(Ptr(p.name, 0, 1, None))
            elif p.name in self.ints:
                env[p.name] = Cell(self.ints[p.name])
            else:
                env[p.name] = Cell(Term("sym", p.name))
        return env

    def run(self, stmts, env: dict) -> Effects:
        """Run ``stmts`` (nodes) in ``env`` (changed in place) with fresh memory."""
        self.fx = Effects()
        for s in stmts:
            self.stmt(s, env)
        return self.fx

    def value(self, node, env):
        return self.expr(node, env)

    # -------------------------------------------------------------------- statements
    def tick(self):
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Unsupported(f"more than {MAX_STEPS} statements run")

    def stmt(self, n, env):
        self.tick()
        t = n.type
        if t in _SKIP:
            return
        if t == "compound_statement":
            inner = dict(env)
            for c in n.named_children:
                self.stmt(c, inner)
            for k in env:
                env[k] = inner[k]
            return
        if t == "expression_statement":
            decl = misparsed_declaration(self.unit, n, env)
            # `ns::Type<32> x = init;`, read by the parser as `(A < 32) > (x = init)`
            if decl is not None:
                env[decl[0]] = Cell(self.expr(decl[1], env))
                return
            for c in n.named_children:
                self.expr(c, env)
            return
        if t == "declaration":
            return self.declare(n, env)
        if t == "if_statement":
            cond = self.expr(n.child_by_field_name("condition"), env)
            if isinstance(cond, Term):
                return self.select(n, cond, env)
            cond = self.concrete(n.child_by_field_name("condition"), env, "an if condition")
            branch = n.child_by_field_name("consequence" if cond else "alternative")
            if branch is not None:
                if branch.type == "else_clause":
                    branch = branch.named_children[-1]
                self.stmt(branch, env)
            return
        if t in ("for_statement", "while_statement"):
            return self.loop(n, env)
        if t == "return_statement":
            vals = [c for c in n.named_children if c.type != "comment"]
            raise _Return(self.expr(vals[0], env) if vals else None)
        raise Unsupported(f"a {t.replace('_', ' ')} at line {n.start_point[0] + 1}")

    def select(self, n, cond: Term, env):
        """An if whose condition depends on a value, if-converted: both branches run from
        the same locals, and each local they leave different is ``select(cond, then,
        else)`` afterwards (``if (x > m) m = x;`` gives ``select(x > m, x, m)``, which
        :func:`kltrans.model.block.normal` reads as a max). Branches that store to memory,
        return or involve other threads are :class:`Unsupported` (:attr:`selecting`)."""
        cells = {k: c for k, c in env.items() if isinstance(c, Cell)}
        before = {k: _copy(c.value) for k, c in cells.items()}
        outs = []
        self.selecting += 1
        try:
            for part in ("consequence", "alternative"):
                for k, c in cells.items():
                    c.value = _copy(before[k])
                branch = n.child_by_field_name(part)
                if branch is not None and branch.type == "else_clause":
                    branch = branch.named_children[-1]
                if branch is not None:
                    try:
                        self.stmt(branch, env)
                    except _Return:
                        raise Unsupported("a return under an if that depends on a value") \
                            from None
                outs.append({k: c.value for k, c in cells.items()})
        finally:
            self.selecting -= 1
        for k, c in cells.items():
            a, b = outs[0][k], outs[1][k]
            if a is b or (type(a) is type(b) and not isinstance(a, Agg) and a == b):
                c.value = a
                continue
            if a is None or b is None or not all(isinstance(v, (int, float, Term))
                                                 for v in (a, b)):
                raise Unsupported(f"{k} set to a value of another kind under an if that "
                                  f"depends on a value")
            c.value = Term("select", cond, *(Term("num", float(v)) if not isinstance(v, Term)
                                             else v for v in (a, b)))

    def pure(self, n, env):
        """The value of expression ``n`` evaluated as a side of a select: a store, a call
        of a collective or a value of another kind is :class:`Unsupported`."""
        if any(x.type in ("assignment_expression", "update_expression")
               for x in self.unit.walk(n)):
            raise Unsupported("a ?: side that assigns, on a condition that depends on a value")
        self.selecting += 1
        try:
            v = self.expr(n, env)
        finally:
            self.selecting -= 1
        if not isinstance(v, (int, float, Term)):
            raise Unsupported("a ?: side that is not a number, on a condition that depends "
                              "on a value")
        return v

    def loop(self, n, env):
        inner = dict(env)
        if n.type == "for_statement":
            init = n.child_by_field_name("initializer")
            if init is not None:
                (self.declare if init.type == "declaration" else self.expr)(init, inner)
        cond = n.child_by_field_name("condition")
        update = n.child_by_field_name("update")
        body = n.child_by_field_name("body")
        while cond is None or self.concrete(cond, inner, "a loop condition"):
            self.tick()
            self.stmt(body, inner)
            if update is not None:
                self.expr(update, inner)
        for k in env:
            env[k] = inner[k]

    def declare(self, n, env):
        typ = self.unit.text(n.child_by_field_name("type"))
        for d in n.children_by_field_name("declarator"):
            init = None
            if d.type == "init_declarator":
                init = d.child_by_field_name("value")
                d = d.child_by_field_name("declarator")
            name, dims, ptr, ref = _declarator(self.unit, d, self, env)
            if ref:
                if init is None:
                    raise Unsupported(f"reference {name} without a binding")
                env[name] = self.lvalue(init, env)
                continue
            if init is not None and init.type == "initializer_list":
                vals = [self.expr(c, env) for c in init.named_children]
                env[name] = Cell(Agg(typ, vals + [None] * (max(dims or [0]) - len(vals))))
                continue
            val = self.expr(init, env) if init is not None else None
            if dims and self.layout(typ) is not None:
                raise Unsupported(f"a local array of {typ}")
            if dims:
                size = 1
                for k in dims:
                    size *= k
                env[name] = Cell(Agg(typ, [None] * size))
            elif not ptr and self.layout(typ) is not None:  # a struct or union: its lanes
                lay = self.layout(typ)
                if val is not None and not (isinstance(val, Agg) and
                                            len(val.slots) == lay.lanes):
                    raise Unsupported(f"{name} (a {lay.type}) set from something else")
                env[name] = Cell(_copy(val) if val is not None
                                 else Agg(lay.type, [None] * lay.lanes))
            elif not ptr and _vector_lanes(typ):
                env[name] = Cell(_copy(val) if isinstance(val, Agg)
                                 else Agg(typ, [None] * _vector_lanes(typ)))
            else:
                env[name] = Cell(self.convert(typ, val) if not ptr else val)

    def convert(self, typ: str, val):
        base = _QUALIFIERS.sub("", typ).strip()
        if isinstance(val, int) and base in ("float", "double"):
            return Term("num", float(val))
        if isinstance(val, Term) and base in ("int", "unsigned", "unsigned int", "long"):
            return Term("cast", base, val)
        if isinstance(val, Ptr) and not typ.rstrip().endswith("*"):
            # a pointer as an integer (an alignment test): its address, as a symbol
            return Term("addr", val.base, val.offset)
        return val

    # ------------------------------------------------------------------- expressions
    def concrete(self, node, env, what: str) -> int:
        v = self.expr(node, env)
        if isinstance(v, bool):
            return int(v)
        if not isinstance(v, int):
            raise Unsupported(f"{what} that depends on a value ({self.unit.text(node)[:60]})")
        return v

    def expr(self, n, env):
        t = n.type
        if t in ("parenthesized_expression", "condition_clause"):
            inner = [c for c in n.named_children if c.type != "comment"]
            return self.expr(inner[-1], env)
        if t == "number_literal":
            return _number(self.unit.text(n))
        if t in ("true", "false"):
            return int(t == "true")
        if t == "identifier":
            return self.name(self.unit.text(n), env)
        if t == "field_expression":
            arg = n.child_by_field_name("argument")
            op = self.ops.get(arg.id) if arg.type == "call_expression" else None
            f = self.unit.text(n.child_by_field_name("field"))
            if op is not None and op.name in ("index.block", "index.thread") and f in "xyz":
                # block.group_index().x, block.thread_index().x
                key = ("blockIdx." if op.name == "index.block" else "threadIdx.") + f
                if key not in self.ints:
                    raise Unsupported(f"{self.unit.text(n)}: not known at this launch")
                return self.ints[key]
            if arg.type == "identifier" and self.unit.text(arg) in ("threadIdx", "blockIdx",
                                                                    "blockDim", "gridDim"):
                key = self.unit.text(n).replace(" ", "")
                if key not in self.ints:
                    raise Unsupported(f"{key} has no value here")
                return self.ints[key]
            return self.lvalue(n, env).get()
        if t == "subscript_expression":
            row = self._row(n, env)
            if row is not None:
                return row
        if t in ("subscript_expression", "pointer_expression") and _deref(n):
            return self.lvalue(n, env).get()
        if t == "pointer_expression":  # &x
            lv = self.lvalue(n.child_by_field_name("argument"), env)
            if isinstance(lv, MemRef):
                return Ptr(lv.base, lv.index, lv.width, None)
            raise Unsupported(f"the address of a local ({self.unit.text(n)[:40]})")
        if t == "binary_expression":
            op = self.unit.text(n.child_by_field_name("operator"))
            a = self.expr(n.child_by_field_name("left"), env)
            if op in ("&&", "||") and isinstance(a, int):
                if (op == "&&") != bool(a):
                    return int(bool(a))
                b = self.expr(n.child_by_field_name("right"), env)
                # a value-dependent right operand stays a term (a branch on it is refused)
                return int(bool(b)) if isinstance(b, int) else Term("logic", op, b)
            return binop(op, a, self.expr(n.child_by_field_name("right"), env))
        if t == "unary_expression":
            op = self.unit.text(n.child_by_field_name("operator"))
            a = self.expr(n.child_by_field_name("argument"), env)
            if isinstance(a, int):
                return {"-": -a, "+": a, "!": int(not a), "~": ~a}[op]
            return a if op == "+" else Term("unop", op, a)
        if t == "conditional_expression":
            c = self.expr(n.child_by_field_name("condition"), env)
            if isinstance(c, Term):  # on a value: both sides, without side effects
                sides = [self.pure(n.child_by_field_name(k), env)
                         for k in ("consequence", "alternative")]
                return Term("select", c, *(Term("num", float(v)) if not isinstance(v, Term)
                                           else v for v in sides))
            c = self.concrete(n.child_by_field_name("condition"), env, "a ?: condition")
            return self.expr(n.child_by_field_name("consequence" if c else "alternative"), env)
        if t == "assignment_expression":
            return self.assign(n, env)
        if t == "update_expression":
            lv = self.lvalue(n.child_by_field_name("argument"), env)
            old = lv.get()
            op = "+" if "++" in self.unit.text(n) else "-"
            lv.set(binop(op, old, 1))
            prefix = n.children[0].type in ("++", "--")
            return lv.get() if prefix else old
        if t == "cast_expression":
            typ = self.unit.text(n.child_by_field_name("type"))
            return self.cast(typ, self.expr(n.child_by_field_name("value"), env))
        if t == "comma_expression":
            self.expr(n.child_by_field_name("left"), env)
            return self.expr(n.child_by_field_name("right"), env)
        if t == "call_expression":
            return self.call(n, env)
        if t == "lambda_expression":
            return Fn(n, env)
        if t in ("sizeof_expression",):
            v = type_size(self.unit, self.bound(self.unit.text(n)[6:].strip(" ()")))
            if v is None:
                raise Unsupported(f"{self.unit.text(n)}")
            return v
        raise Unsupported(f"a {t.replace('_', ' ')} ({self.unit.text(n)[:40]})")

    def name(self, name: str, env):
        if name in env:
            cell = env[name]
            return cell.get() if isinstance(cell, Ref) else cell.value
        if name in self.ints:
            return self.ints[name]
        if name in self.consts:
            return self.consts[name]
        if name in ("warpSize",):
            return 32
        return Term("sym", name)

    def cast(self, typ: str, val):
        typ = typ.strip()
        if typ.endswith("*") and isinstance(val, Ptr):
            return self.view(val, typ)
        return self.convert(typ, val)

    def bound(self, typ: str) -> str:
        """``typ`` with the kernel's type template parameters replaced by their launch's
        types (``T*`` -> ``float*``)."""
        if not self.types:
            return typ
        return re.sub(r"[A-Za-z_]\w*", lambda m: self.types.get(m.group(0), m.group(0)), typ)

    def view(self, p: Ptr, typ: str) -> Ptr:
        target = _QUALIFIERS.sub("", self.bound(typ).rstrip("* ").strip()).strip()
        elem = self._elem(p.base)
        ts, es = type_size(self.unit, target), type_size(self.unit, elem) if elem else None
        if ts is None or es is None or ts % es:
            raise Unsupported(f"a view of {p.base} as {target}")
        return Ptr(p.base, p.offset, ts // es, target)

    def _elem(self, base: str) -> str | None:
        for p in self.fn.params:
            if p.name == base:
                return _QUALIFIERS.sub("", self.bound(p.base_type)).strip()
        return None

    def assign(self, n, env):
        op = self.unit.text(n.child_by_field_name("operator"))
        lv = self.lvalue(n.child_by_field_name("left"), env)
        val = self.expr(n.child_by_field_name("right"), env)
        if op != "=":
            val = binop(op[:-1], lv.get(), val)
        lv.set(val)
        return val

    def call(self, n, env):
        fnode = n.child_by_field_name("function")
        args = [c for c in n.child_by_field_name("arguments").named_children
                if c.type != "comment"]
        op = self.ops.get(n.id)
        if op is not None:
            got = self.group_query(op)
            if got is not None:
                return got
            if op.name == "load.cached":
                return self.load(self.expr(args[0], env))
            if op.name == "store.cached":
                self.store(self.expr(args[0], env), self.expr(args[1], env))
                return None
            raise Unsupported(f"{op.spelling} ({op.name}) involves other threads or memory "
                              f"orderings")
        if fnode.type == "template_function":
            name = self.unit.text(fnode.child_by_field_name("name"))
            targs = fnode.child_by_field_name("arguments")
            if name in ("reinterpret_cast", "static_cast", "const_cast"):
                return self.cast(self.unit.text(targs)[1:-1], self.expr(args[0], env))
            if name in self.funcs and name != self.fn.name:  # a function template's body
                return self.invoke(self.funcs[name].node, {}, args, env)
            raise Unsupported(f"a call of {name}<...>")
        if fnode.type == "field_expression":  # obj.f(...): what f reads of obj is not known
            raise Unsupported(f"a call of the member function {self.unit.text(fnode)[:40]}")
        name = self.unit.text(fnode)
        vals = None
        if len(args) == 1 and self._type_name(name):  # a functional cast: float(x), T(0)
            return self.convert(self._type_name(name), self.expr(args[0], env))
        if name in env:
            target = self.name(name, env)
            if isinstance(target, Fn):
                return self.invoke(target.node, target.env, args, env)
        if name in self.funcs and name != self.fn.name:
            return self.invoke(self.funcs[name].node, {}, args, env)
        vals = [self.expr(a, env) for a in args]
        if name.startswith("make_") and _vector_lanes(name[5:]):
            return Agg(name[5:], vals)
        if name in ("min", "max") and all(isinstance(v, int) for v in vals):
            return (min if name == "min" else max)(vals)
        if any(isinstance(v, (Ptr, Agg, Fn)) for v in vals):
            raise Unsupported(f"a call of {name} with a pointer or aggregate argument")
        return Term("call", name, *vals)

    def group_query(self, op) -> int | None:
        """A cooperative group's index or size that one thread knows from its own indices
        (``block.thread_rank()``, ``tile.meta_group_rank()``, ``block.size()`` ...), or None
        for any other operation; :class:`Unsupported` when the launch leaves it unknown."""
        keys = ("threadIdx.x", "threadIdx.y", "threadIdx.z", "blockDim.x", "blockDim.y",
                "blockDim.z")
        if op.name not in _GROUP_QUERIES:
            return None
        if op.name == "index.block":
            if "blockIdx.x" not in self.ints:
                raise Unsupported(f"{op.spelling}: the block index is not known")
            return self.ints["blockIdx.x"]
        if not all(k in self.ints for k in ("threadIdx.x", "blockDim.x")):
            raise Unsupported(f"{op.spelling}: the thread's index is not known")
        tx, ty, tz, bx, by, bz = (self.ints.get(k, 0 if "Idx" in k else 1) for k in keys)
        t, size = tx + bx * (ty + by * tz), bx * by * bz
        width = op.group.width if op.group is not None and op.group.width else 32
        return {"index.block_rank": t, "index.thread": t, "index.lane": t % width,
                "index.warp": t // width, "size.block": size, "size.tile": width,
                "size.tiles": size // width}[op.name]

    def _type_name(self, name: str) -> str | None:
        """The type ``name`` stands for when it names one (a primitive type, a typedef, a
        type template parameter of the kernel: left as written), else None."""
        if name in _PRIMITIVE:
            return name
        alias = typedefs(self.unit).get(name)
        if alias is not None and not alias[1]:
            return alias[0]
        if any(t.kind == "type" and t.name == name for t in self.fn.template_params):
            return self.types.get(name, name)
        return None

    def invoke(self, fnode, closure: dict, args, env):
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise Unsupported("calls nested too deep")
        try:
            decl = fnode.child_by_field_name("declarator")
            params = _params(decl)
            if len(params) != len(args):
                raise Unsupported(f"a call with {len(args)} arguments of "
                                  f"{len(params)} parameters")
            local = dict(closure)
            for p, a in zip(params, args):
                pname = _param_name(self.unit, p)
                if pname is None:
                    raise Unsupported("an unnamed parameter")
                if _is_reference(p):
                    local[pname] = self.lvalue(a, env)
                else:
                    v = self.expr(a, env)
                    local[pname] = Cell(_copy(v) if isinstance(v, Agg) else v)
            body = fnode.child_by_field_name("body")
            try:
                for s in body.named_children:
                    self.stmt(s, local)
            except _Return as r:
                return r.value
            return None
        finally:
            self.depth -= 1

    # ----------------------------------------------------------------------- memory
    def load(self, p):
        if not isinstance(p, Ptr):
            raise Unsupported("a load through something that is not a known pointer")
        return MemRef(self, p.base, p.offset, p.width, p.view).get()

    def store(self, p, val):
        if not isinstance(p, Ptr):
            raise Unsupported("a store through something that is not a known pointer")
        MemRef(self, p.base, p.offset, p.width, p.view).set(val)

    def _row(self, n, env) -> "Ptr | None":
        """``a[i]`` of a multi-dimensional array ``a``: the row, a pointer (else None)."""
        arg = n.child_by_field_name("argument")
        if arg.type not in ("identifier", "subscript_expression"):
            return None
        base = self.expr(arg, env)
        if not isinstance(base, Ptr) or not base.inner:
            return None
        idx_nodes = n.child_by_field_name("indices") or n.child_by_field_name("index")
        idx_node = idx_nodes.named_children[0] if idx_nodes.type == "subscript_argument_list" \
            else idx_nodes
        k = self.concrete(idx_node, env, "an index")
        stride = 1
        for d in base.inner:
            stride *= d
        return Ptr(base.base, base.offset + k * stride * base.width, base.width, base.view,
                   base.inner[1:])

    def lvalue(self, n, env) -> "Ref":
        t = n.type
        if t == "parenthesized_expression":
            return self.lvalue(n.named_children[-1], env)
        if t == "identifier":
            name = self.unit.text(n)
            cell = env.get(name)
            if cell is None:
                raise Unsupported(f"{name} is not a local or parameter")
            return cell if isinstance(cell, Ref) else VarRef(cell)
        if t == "subscript_expression":
            arg = n.child_by_field_name("argument")
            idx_nodes = n.child_by_field_name("indices") or n.child_by_field_name("index")
            idx_node = idx_nodes.named_children[0] if idx_nodes.type == "subscript_argument_list" \
                else idx_nodes
            k = self.concrete(idx_node, env, "an index")
            base = self.expr(arg, env)
            if isinstance(base, Ptr):
                return MemRef(self, base.base, base.offset + k * base.width, base.width,
                              base.view)
            if isinstance(base, Agg):
                return self.element(self.lvalue(arg, env), k)
            raise Unsupported(f"a subscript of {self.unit.text(arg)[:40]}")
        if t == "pointer_expression" and _deref(n):
            p = self.expr(n.child_by_field_name("argument"), env)
            if not isinstance(p, Ptr):
                raise Unsupported("a dereference of something that is not a known pointer")
            return MemRef(self, p.base, p.offset, p.width, p.view)
        if t == "field_expression":
            if self.unit.text(n.child_by_field_name("operator")) != ".":
                raise Unsupported("a member through ->")
            f = self.unit.text(n.child_by_field_name("field"))
            ref = self.lvalue(n.child_by_field_name("argument"), env)
            if isinstance(ref, FieldRef) and not ref.dims:
                rtype = ref.type
            else:
                held = ref.get()
                rtype = held.type if isinstance(held, Agg) else None
            lay = self.layout(rtype) if rtype else None
            if lay is not None and f in lay.fields:
                start, count, ftype, dims = lay.fields[f]
                of, at = (ref.of, ref.start) if isinstance(ref, FieldRef) else (ref, 0)
                return FieldRef(of, at + start, count, ftype, dims, self.lanes(ftype) == 1 and
                                self.layout(ftype) is None)
            if f not in _LANES:
                raise Unsupported(f"the member {f}")
            return self.element(ref, _LANES.index(f))
        raise Unsupported(f"an assignment to {self.unit.text(n)[:40]}")

    # ------------------------------------------------------------ structs and unions
    def layout(self, typ: str | None) -> "_Layout | None":
        """The lanes of a struct or union of the unit (None for any other type): every
        scalar of it one lane, members of a struct one after the other, members of a union
        all from lane 0, so a ``float4`` and a ``float[4]`` of one union share their four
        lanes (the members must then cut it into lanes of one width)."""
        if typ is None:
            return None
        key = _QUALIFIERS.sub("", typ).strip()
        if key in self._layouts:
            return self._layouts[key]
        self._layouts[key] = None  # a cycle reads as no layout
        rec = record_fields(self.unit, key)
        if rec is None:
            return None
        is_union, members = rec
        fields, at, widths = {}, 0, set()
        for f in members:
            elem = 1 if f.pointer else self.lanes(f.type)
            count = elem * f.count
            fields[f.name] = (0 if is_union else at, count, f.type, f.dims)
            at = max(at, count) if is_union else at + count
            size = type_size(self.unit, f.type)
            if is_union and not f.pointer:
                widths.add(size // elem if size else None)
        if len(widths) > 1:
            raise Unsupported(f"the union {key}: its members cut it into lanes of different "
                              f"widths")
        lay = _Layout(key, at, fields)
        self._layouts[key] = lay
        return lay

    def lanes(self, typ: str) -> int:
        """How many scalar lanes a value of ``typ`` holds."""
        lay = self.layout(typ)
        if lay is not None:
            return lay.lanes
        return _vector_lanes(typ) or 1

    def element(self, ref: "Ref", k: int) -> "Ref":
        """Element (or lane) ``k`` of the vector, array or member ``ref`` refers to."""
        if not isinstance(ref, FieldRef):
            return SlotRef(ref, k)
        if ref.dims:
            if not 0 <= k < ref.dims[0]:
                raise Unsupported("an element outside a member array")
            inner = ref.count // ref.dims[0]
            return FieldRef(ref.of, ref.start + k * inner, inner, ref.type, ref.dims[1:],
                            ref.scalar)
        if not 0 <= k < ref.count:
            raise Unsupported("a lane outside a member")
        return SlotRef(ref.of, ref.start + k)


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
        self.cell.value = _copy(v) if isinstance(v, Agg) else v


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
class _Layout:
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
            self.m.fx.stores[(self.base, self.index)] = v
            return
        if not isinstance(v, Agg) or len(v.slots) != self.width:
            raise Unsupported(f"a {self.width}-element store of something else")
        for k, s in enumerate(v.slots):
            self.m.fx.stores[(self.base, self.index + k)] = s


# --------------------------------------------------------------------------- helpers
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
        return _int_op(op, a, b)
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


def _int_op(op: str, a: int, b: int) -> int:
    if op in ("/", "%"):
        if b == 0:
            raise Unsupported("an integer division by zero")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b > 0) else -1)
        return q if op == "/" else a - q * b
    if op in ("<<", ">>") and not 0 <= b < 64:
        raise Unsupported("a shift out of range")
    table = {"+": a + b, "-": a - b, "*": a * b, "<<": a << b if op == "<<" else 0,
             ">>": a >> b if op == ">>" else 0, "&": a & b, "|": a | b, "^": a ^ b,
             "<": int(a < b), "<=": int(a <= b), ">": int(a > b), ">=": int(a >= b),
             "==": int(a == b), "!=": int(a != b), "&&": int(bool(a and b)),
             "||": int(bool(a or b))}
    if op not in table:
        raise Unsupported(f"the operator {op}")
    return table[op]


def _number(text: str):
    t = text.lower().rstrip("ul")
    if re.fullmatch(r"0x[0-9a-f]+|\d+", t):
        return int(t, 0)
    try:
        return Term("num", float(t.rstrip("f")))
    except ValueError:
        raise Unsupported(f"the number {text}") from None


def _vector_lanes(typ: str) -> int:
    m = _VECTOR.match(_QUALIFIERS.sub("", typ).strip())
    return int(m.group(2)) if m else 0


def _copy(v):
    return Agg(v.type, list(v.slots)) if isinstance(v, Agg) else v


def misparsed_declaration(unit, stmt, env):
    """(name, initializer) when the statement is a declaration with a template type that
    tree-sitter reads as comparisons, ``(T < N) > (name = init)``: ``T`` names no variable
    and ``name`` none yet; else None."""
    e = stmt.named_children[0] if stmt.named_children else None
    if e is None or e.type != "binary_expression" or \
            unit.text(e.child_by_field_name("operator")) != ">":
        return None
    left, right = e.child_by_field_name("left"), e.child_by_field_name("right")
    if left.type != "binary_expression" or unit.text(left.child_by_field_name("operator")) != "<" \
            or right.type != "assignment_expression" or \
            unit.text(right.child_by_field_name("operator")) != "=":
        return None
    typ, name = left.child_by_field_name("left"), right.child_by_field_name("left")
    if typ.type not in ("identifier", "qualified_identifier") or unit.text(typ) in env or \
            name.type != "identifier" or unit.text(name) in env:
        return None
    return unit.text(name), right.child_by_field_name("right")


def _deref(n) -> bool:
    if n.type == "subscript_expression":
        return True
    op = n.child_by_field_name("operator")
    return op is not None and op.type == "*"


def _declarator(unit, d, m: Machine, env):
    """(name, array dims, is pointer, is reference) of a declarator."""
    dims, ptr, ref = [], False, False
    while d is not None and d.type != "identifier":
        if d.type == "array_declarator":
            size = d.child_by_field_name("size")
            if size is None:
                raise Unsupported("an array of unknown size")
            dims.insert(0, m.concrete(size, env, "an array size"))
        elif d.type == "pointer_declarator":
            ptr = True
        elif d.type == "reference_declarator":
            ref = True
            d = d.named_children[0] if d.named_children else None
            continue
        d = d.child_by_field_name("declarator")
    if d is None:
        raise Unsupported("a declaration without a name")
    return unit.text(d), dims, ptr, ref


def _params(decl):
    while decl is not None and decl.child_by_field_name("parameters") is None:
        decl = decl.child_by_field_name("declarator")
    if decl is None:
        raise Unsupported("a function without a parameter list")
    return [p for p in decl.child_by_field_name("parameters").named_children
            if p.type in ("parameter_declaration", "optional_parameter_declaration")]


def _is_reference(p) -> bool:
    d = p.child_by_field_name("declarator")
    return d is not None and d.type == "reference_declarator"


def _param_name(unit, p) -> str | None:
    d = p.child_by_field_name("declarator")
    while d is not None and d.type != "identifier":
        d = d.child_by_field_name("declarator") or (d.named_children[0] if d.named_children
                                                   else None)
    return unit.text(d) if d is not None else None


# ----------------------------------------------------------------- thread-level facts
def draws(fn: "Function", block: int | None, seed: int, count: int = 3) -> list[dict[str, int]]:
    """``count`` concrete launches for ``fn``: every integer parameter a size (one to four
    times the block, and at least 256 to 1,024, each draw with another remainder modulo
    16), a block of ``block`` threads (256 when unknown), a few blocks, one thread of one
    block. A size spans the block a few times, so strided loops take several turns and a
    partial turn; larger sizes add no case and cost the machine a loop turn per element."""
    import random

    rnd = random.Random(seed)
    b = block or 256
    unit = max(b, 256) // 16
    out = []
    for k in range(count):
        ints: dict[str, int] = {}
        for p in fn.params:
            if p.name and not p.pointer and _QUALIFIERS.sub("", p.base_type).strip() in (
                    "int", "unsigned", "unsigned int", "long", "size_t", "int64_t",
                    "uint32_t", "int32_t", "long long", "unsigned long long"):
                ints[p.name] = 16 * rnd.randrange(unit, 4 * unit + 1) + (3 + 5 * k) % 16
        grid = rnd.randrange(2, 9)
        ints.update({"blockDim.x": b, "blockDim.y": 1, "blockDim.z": 1, "gridDim.x": grid,
                     "gridDim.y": 1, "gridDim.z": 1, "threadIdx.x": rnd.randrange(b),
                     "threadIdx.y": 0, "threadIdx.z": 0, "blockIdx.x": rnd.randrange(grid),
                     "blockIdx.y": 0, "blockIdx.z": 0})
        out.append(ints)
    return out


def before(m: Machine, stop: "Node") -> dict:
    """The environment of the kernel's thread at the top-level statement ``stop``: the
    statements before it are run; a declaration that cannot be run leaves its names
    unreadable (reading one raises :class:`Unsupported`)."""
    env = m.parameters()
    for s in m.fn.body.named_children:
        if s.start_byte >= stop.start_byte:
            break
        try:
            m.stmt(s, env)
        except Unsupported:
            if s.type == "declaration":
                for d in s.children_by_field_name("declarator"):
                    name = _declared_name(m.unit, d)
                    if name:
                        env[name] = Cell(None)
    m.fx = Effects()
    return env


def run_with(m: Machine, env: dict, binds: dict, stmts) -> Effects:
    """The effects of ``stmts`` in a copy of ``env`` with ``binds`` (name -> value)."""
    local = dict(env)
    for k, v in binds.items():
        local[k] = Cell(v)
    return m.run(stmts, local)


def interference(per_element: dict) -> str | None:
    """Why the elements of ``per_element`` (element -> Effects) cannot run in any order
    or on other threads: one writes what another reads or writes. None when they can."""
    items = list(per_element.items())
    for a, fa in items:
        for b, fb in items:
            if a == b:
                continue
            clash = set(fa.stores) & (set(fb.stores) | fb.loads)
            if clash:
                arr, idx = sorted(clash)[0]
                how = "writes" if (arr, idx) in fb.stores else "reads"
                return (f"element {a} writes {arr}[{idx}], which element {b} also {how}")
    return None


def _declared_name(unit, d) -> str | None:
    while d is not None and d.type != "identifier":
        d = d.child_by_field_name("declarator")
    return unit.text(d) if d is not None else None
