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
assignments and compound assignments, ``++``/``--``, ``if`` with a concrete condition
(an ``if`` on a value is if-converted: :meth:`Machine.select`),
``for``/``while`` loops whose conditions come out concrete (run, at most
:data:`MAX_STEPS` statements in all), ``return``; subscripts, ``*p``, pointer arithmetic,
``reinterpret_cast`` vector views (``float4`` over ``float``: 4 elements at a time), the
cached loads and stores of :mod:`kltrans.model.ops` (``__ldcs(p)``, ``__stcs(p, v)``: the
hint does not change the effect), structs and unions of the unit held in locals
(members by lane: a union's ``float4`` and ``float[4]`` members are the same four
values), ``make_float4`` and the other ``make_<vector>``
constructors, ``__device__`` functions of the unit and lambdas (called by value or by
reference: their bodies run), ``min``/``max`` of integers, the unit's integer constants
(macros, ``constexpr``), function-like macros that assign nothing (``#define IDX(r, c)
((r) * n + (c))``: the replacement read as an expression, parameters bound to the
arguments' values; :func:`function_macros`). Any other call is a term named by its callee.
Thread and block indices are read as integers: the machine does not model their
unsignedness (``threadIdx.x - 1 >= 0`` is true for thread 0 in CUDA, false here), so code
written for it keeps the unsigned forms out (``threadIdx.x >= 1``).

Not read (the machine raises :class:`Unsupported` with the reason, never guesses):
barriers, shuffles, atomics and the other operations of ``spellings.yaml`` that involve
other threads; ``break``/``continue``/``goto``; a branch on a symbolic value that stores
or returns; structs, unions and pointers held in memory (in arrays or reached through
pointers), unions whose members cut them into lanes of different widths, calls of member
functions (what they read of their object is not known). Distinct arrays are distinct memory (the gate's
inputs are separate buffers).

The values are :mod:`kltrans.model.values`; the machine runs code compiled once per unit
by :mod:`kltrans.model.code` (closures over the syntax), not the tree itself.

Layering: :mod:`kltrans.syntax`, the public names of :mod:`kltrans.analysis`,
:mod:`kltrans.model.ops`, :mod:`kltrans.model.values` and :mod:`kltrans.model.code`.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from kltrans.analysis.smem import record_fields, type_size
from kltrans.model.accesses import typedefs
from kltrans.model.code import (as_int, branch_names, declaration, expr_code, index_node,
                                lvalue_code, misparsed_shape, stmt_code, tables)
from kltrans.match.predicates import pure_macros
from kltrans.model.launch import template_bindings
from kltrans.model.ops import operations
from kltrans.model.values import (QUALIFIERS, Agg, Cell, Effects, FieldRef, Fn, Layout, MemRef, Ptr,
                                  Ref, Return, SlotRef, Term, Unsupported, copy_value,
                                  check_budget, vector_lanes)
from kltrans.syntax import parse
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
_LANES = "xyzw"

#: cooperative-group queries a thread answers from its own indices (Machine.group_query)
_GROUP_QUERIES = ("index.block_rank", "index.thread", "index.lane", "index.warp",
                  "size.block", "size.tile", "size.tiles", "index.block")


def function_macros(unit: "Unit") -> dict:
    """The unit's function-like macros that assign nothing (:func:`kltrans.match.predicates.
    pure_macros`): name -> (parameters, the replacement's own unit, its expression node),
    the node None when the replacement is not one expression."""
    def find(u):
        out = {}
        pure = pure_macros(u)
        for n in u.nodes_of_type("preproc_function_def"):
            name, value = n.child_by_field_name("name"), n.child_by_field_name("value")
            ps = n.child_by_field_name("parameters")
            if name is None or value is None or ps is None or u.text(name) not in pure:
                continue
            params = [u.text(p) for p in ps.named_children if p.type == "identifier"]
            mu = parse(f"void __kltrans_macro() {{ ({u.text(value).strip()}); }}")
            body = [f for f in mu.nodes_of_type("expression_statement")]
            expr = body[0].named_children[0] if len(body) == 1 and not mu.has_errors else None
            out[u.text(name)] = (params, mu, expr)
        return out
    return unit.memo("model.function_macros", find)



def _selected(name: str, cond: Term, a, b):
    """``a`` where both branches of a value-dependent if leave the same, else
    ``select(cond, a, b)``; anything but numbers on either side is :class:`Unsupported`."""
    if a is b or (type(a) is type(b) and not isinstance(a, Agg) and a == b):
        return a
    if a is None or b is None or not all(isinstance(v, (int, float, Term)) for v in (a, b)):
        raise Unsupported(f"{name} set to a value of another kind under an if that "
                          f"depends on a value")
    return Term("select", cond, *(Term("num", float(v)) if not isinstance(v, Term) else v
                                  for v in (a, b)))

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
        self._exprs, self._stmts, self._lvalues = tables(unit)

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
        check_budget()
        if self.steps > MAX_STEPS:
            raise Unsupported(f"more than {MAX_STEPS} statements run")

    def stmt(self, n, env):
        """Run statement ``n`` in ``env`` (compiled once per unit: :mod:`kltrans.model.code`)."""
        f = self._stmts.get(n.id)
        if f is None:
            f = stmt_code(self.unit, n)
        f(self, env)

    def select(self, n, cond: Term, env):
        """An if whose condition depends on a value, if-converted: both branches run from
        the same locals, and each local they leave different is ``select(cond, then,
        else)`` afterwards (``if (x > m) m = x;`` gives ``select(x > m, x, m)``, which
        :func:`kltrans.model.block.normal` reads as a max). Branches that store to memory,
        return or involve other threads are :class:`Unsupported` (:attr:`selecting`)."""
        names, called = branch_names(self.unit, n)
        if any(c in self.funcs or isinstance(getattr(env.get(c), "value", None), Fn)
               for c in called):  # a call may set any local (by reference, or captured)
            cells = {k: c for k, c in env.items() if isinstance(c, Cell)}
        else:  # only the locals the branches name can change
            cells = {k: env[k] for k in names if isinstance(env.get(k), Cell)}
        before = {k: copy_value(c.value) for k, c in cells.items()}
        outs = []
        self.selecting += 1
        try:
            for part in ("consequence", "alternative"):
                for k, c in cells.items():
                    c.value = copy_value(before[k])
                branch = n.child_by_field_name(part)
                if branch is not None and branch.type == "else_clause":
                    branch = branch.named_children[-1]
                if branch is not None:
                    try:
                        self.stmt(branch, env)
                    except Return:
                        raise Unsupported("a return under an if that depends on a value") \
                            from None
                outs.append({k: c.value for k, c in cells.items()})
        finally:
            self.selecting -= 1
        for k, c in cells.items():
            a, b = outs[0][k], outs[1][k]
            if isinstance(a, Agg) and isinstance(b, Agg) and a.type == b.type and \
                    len(a.slots) == len(b.slots):   # a local array or vector: per element
                c.value = Agg(a.type, [_selected(k, cond, x, y) for x, y in zip(a.slots, b.slots)])
                continue
            c.value = _selected(k, cond, a, b)

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

    def declare(self, n, env):
        decl = declaration(self.unit, n)
        typ = decl.type
        for d in decl.declarators:
            init = d.init
            name, dims, ptr, ref = d.resolve(self, env)
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
                env[name] = Cell(copy_value(val) if val is not None
                                 else Agg(lay.type, [None] * lay.lanes))
            elif not ptr and vector_lanes(typ):
                env[name] = Cell(copy_value(val) if isinstance(val, Agg)
                                 else Agg(typ, [None] * vector_lanes(typ)))
            else:
                env[name] = Cell(self.convert(typ, val) if not ptr else val)

    def convert(self, typ: str, val):
        base = QUALIFIERS.sub("", typ).strip()
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
        return as_int(self.expr(node, env), what, self.unit.text(node))


    def expr(self, n, env):
        """The value of expression ``n`` in ``env`` (compiled once per unit)."""
        f = self._exprs.get(n.id)
        if f is None:
            f = expr_code(self.unit, n)
        return f(self, env)

    def expr_walk(self, n, env):
        """The expressions :mod:`kltrans.model.code` does not compile, read from the tree."""
        t = n.type
        if t == "pointer_expression" and _deref(n):  # *p
            return self.lvalue(n, env).get()
        if t == "pointer_expression":  # &x
            lv = self.lvalue(n.child_by_field_name("argument"), env)
            if isinstance(lv, MemRef):
                return Ptr(lv.base, lv.index, lv.width, None)
            raise Unsupported(f"the address of a local ({self.unit.text(n)[:40]})")
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
        target = QUALIFIERS.sub("", self.bound(typ).rstrip("* ").strip()).strip()
        elem = self._elem(p.base)
        ts, es = type_size(self.unit, target), type_size(self.unit, elem) if elem else None
        if ts is None or es is None or ts % es:
            raise Unsupported(f"a view of {p.base} as {target}")
        return Ptr(p.base, p.offset, ts // es, target)

    def _elem(self, base: str) -> str | None:
        for p in self.fn.params:
            if p.name == base:
                return QUALIFIERS.sub("", self.bound(p.base_type)).strip()
        return None

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
        if name not in env and name in function_macros(self.unit):
            return self.macro(name, args, env)
        vals = [self.expr(a, env) for a in args]
        if name.startswith("make_") and vector_lanes(name[5:]):
            return Agg(name[5:], vals)
        if name in ("min", "max") and all(isinstance(v, int) for v in vals):
            return (min if name == "min" else max)(vals)
        if any(isinstance(v, (Ptr, Agg, Fn)) for v in vals):
            raise Unsupported(f"a call of {name} with a pointer or aggregate argument")
        return Term("call", name, *vals)

    def macro(self, name: str, args, env):
        """A function-like macro's value: its replacement read as an expression with the
        parameters bound to the arguments' values (what a pure macro's expansion computes),
        run with the machine's tables switched to the replacement's small unit."""
        params, mu, node = function_macros(self.unit)[name]
        if node is None or len(params) != len(args):
            raise Unsupported(f"the macro {name} with {len(args)} arguments")
        local = dict(env)
        for p, a in zip(params, args):
            local[p] = Cell(self.expr(a, env))
        saved = (self.unit, self._exprs, self._stmts, self._lvalues, self.ops)
        self.unit = mu
        self._exprs, self._stmts, self._lvalues = tables(mu)
        self.ops = {op.node.id: op for op in operations(mu)}
        try:
            return self.expr(node, local)
        finally:
            self.unit, self._exprs, self._stmts, self._lvalues, self.ops = saved

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
                    local[pname] = Cell(copy_value(v) if isinstance(v, Agg) else v)
            body = fnode.child_by_field_name("body")
            try:
                for s in body.named_children:
                    self.stmt(s, local)
            except Return as r:
                return r.value
            return None
        finally:
            self.depth -= 1

    # ----------------------------------------------------------------------- memory
    def touched(self, key: tuple, write: bool):
        """Called on every read (``write`` false) and write of memory element ``key``: one
        thread alone has nothing to order (the block machine checks its threads here)."""

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
        k = self.concrete(index_node(n), env, "an index")
        stride = 1
        for d in base.inner:
            stride *= d
        return Ptr(base.base, base.offset + k * stride * base.width, base.width, base.view,
                   base.inner[1:])

    def lvalue(self, n, env) -> "Ref":
        """The place expression ``n`` names in ``env`` (compiled once per unit)."""
        f = self._lvalues.get(n.id)
        if f is None:
            f = lvalue_code(self.unit, n)
        return f(self, env)

    def lvalue_walk(self, n, env) -> "Ref":
        """The lvalues :mod:`kltrans.model.code` does not compile, read from the tree."""
        t = n.type
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
    def layout(self, typ: str | None) -> "Layout | None":
        """The lanes of a struct or union of the unit (None for any other type): every
        scalar of it one lane, members of a struct one after the other, members of a union
        all from lane 0, so a ``float4`` and a ``float[4]`` of one union share their four
        lanes (the members must then cut it into lanes of one width)."""
        if typ is None:
            return None
        key = QUALIFIERS.sub("", typ).strip()
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
        lay = Layout(key, at, fields)
        self._layouts[key] = lay
        return lay

    def lanes(self, typ: str) -> int:
        """How many scalar lanes a value of ``typ`` holds."""
        lay = self.layout(typ)
        if lay is not None:
            return lay.lanes
        return vector_lanes(typ) or 1

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


# --------------------------------------------------------------------------- helpers
def misparsed_declaration(unit, stmt, env):
    """(name, initializer) when the statement is a declaration with a template type that
    tree-sitter reads as comparisons, ``(T < N) > (name = init)``: ``T`` names no variable
    and ``name`` none yet; else None."""
    shape = misparsed_shape(unit, stmt)
    if shape is None or shape[0] in env or shape[1] in env:
        return None
    return shape[1], shape[2]


def _deref(n) -> bool:
    if n.type == "subscript_expression":
        return True
    op = n.child_by_field_name("operator")
    return op is not None and op.type == "*"


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
            if p.name and not p.pointer and QUALIFIERS.sub("", p.base_type).strip() in (
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
