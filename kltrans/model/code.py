"""The kernel model's statements and expressions, compiled once per unit into closures.

:class:`kltrans.model.effects.Machine` runs a thread's code many times over (every thread
of a block, every turn of a loop, several launches). Reading the syntax tree each time
(node kinds, fields, operator text) cost more than the arithmetic; here each node is read
once into a closure ``f(m, env)`` that does what the machine's tree walk did for it, with
``m`` the machine running it (a thread of a block overrides some of its methods: the
closures call those methods, so the override holds). The closures are kept on the unit
(:meth:`kltrans.syntax.unit.Unit.memo`), shared by every machine that runs the unit.

Compiling reads only the syntax: everything that depends on the launch or on values
(the machine's integers, its environment, which call is an operation of another thread) is
decided when the closure runs, as the tree walk decided it, with the same
:class:`~kltrans.model.values.Unsupported` reasons. A node kind not compiled here calls
the machine's tree walk for that node (``m.expr_walk``, ``m.lvalue_walk``), which reaches
the node's children through the compiled code in turn. Two things differ from the walk
the machine had before: a condition is evaluated once (the walk evaluated an ``if``'s and
a ``?:``'s condition a second time when it was concrete), and an ``if`` on a value
if-converts only the locals its branches assign (:func:`branch_names`), so a vector or a
struct in scope that the branches leave alone no longer makes the machine refuse it.

Layering: :mod:`kltrans.model.values` only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from kltrans.model.values import (Agg, Cell, Fn, MemRef, Ptr, Ref, Return, Term, Unsupported,
                                  VarRef, binop, int_op, number)

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.unit import Unit

Code = Callable  # (machine, env) -> value
SKIP = ("comment", "preproc_call", "empty_statement", ";")
_BUILTINS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
_ARITH = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "<", "<=", ">", ">=", "==",
          "!="}


def tables(unit: "Unit") -> tuple[dict, dict, dict]:
    """The unit's compiled expressions, statements and lvalues (node id -> closure)."""
    return unit.memo("model.code", lambda u: ({}, {}, {}))


def _code(unit: "Unit", n: "Node", which: int, compile_) -> Code:
    table = tables(unit)[which]
    f = table.get(n.id)
    if f is None:
        f = table[n.id] = compile_(unit, n)
    return f


def expr_code(unit: "Unit", n: "Node") -> Code:
    return _code(unit, n, 0, _expr)


def stmt_code(unit: "Unit", n: "Node") -> Code:
    return _code(unit, n, 1, _stmt)


def lvalue_code(unit: "Unit", n: "Node") -> Code:
    return _code(unit, n, 2, _lvalue)


def as_int(v, what: str, text: str) -> int:
    """``v`` as a concrete integer (a bool as 0 or 1), else :class:`Unsupported`."""
    if isinstance(v, bool):
        return int(v)
    if not isinstance(v, int):
        raise Unsupported(f"{what} that depends on a value ({text[:60]})")
    return v


def index_node(n: "Node") -> "Node":
    """The index expression of a subscript ``a[i]``."""
    idx = n.child_by_field_name("indices") or n.child_by_field_name("index")
    return idx.named_children[0] if idx.type == "subscript_argument_list" else idx


def misparsed_shape(unit: "Unit", stmt: "Node") -> "tuple[str, str, Node] | None":
    """(type text, name, initializer) when an expression statement has the shape
    tree-sitter gives a declaration with a template type, ``(T < N) > (name = init)``."""
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
    if typ.type not in ("identifier", "qualified_identifier") or name.type != "identifier":
        return None
    return unit.text(typ), unit.text(name), right.child_by_field_name("right")


def branch_names(unit: "Unit", n: "Node") -> tuple[frozenset, frozenset]:
    """The locals an if statement's branches assign (the identifier at the root of each
    assigned or incremented place: ``m``, ``v`` of ``v.x``, ``a`` of ``a[i]``), and the
    names they call (a call of a function of the unit or of a lambda may set others)."""
    def root(x):
        while x.type in ("field_expression", "subscript_expression",
                         "parenthesized_expression"):
            x = x.child_by_field_name("argument") if x.type != "parenthesized_expression" \
                else x.named_children[-1]
        return unit.text(x) if x.type == "identifier" else None

    def compute(u):
        names, called = set(), set()
        for part in ("consequence", "alternative"):
            branch = n.child_by_field_name(part)
            for x in u.walk(branch) if branch is not None else ():
                if x.type == "assignment_expression":
                    names.add(root(x.child_by_field_name("left")))
                elif x.type == "update_expression":
                    names.add(root(x.child_by_field_name("argument")))
                elif x.type == "call_expression":
                    f = x.child_by_field_name("function")
                    if f.type == "template_function":
                        f = f.child_by_field_name("name")
                    called.add(u.text(f))
        return frozenset(names - {None}), frozenset(called)
    return unit.memo(f"model.code.branch_names.{n.id}", compute)


@dataclass(frozen=True)
class Declarator:
    """One declarator of a declaration, as written: its name (None when it has none),
    the size expressions of its array dimensions in the order the declarator nests them
    (None for a size left out), whether it declares a pointer or a reference, and its
    initializer (None without one)."""

    name: "str | None"
    sizes: tuple
    pointer: bool
    reference: bool
    init: "Node | None"
    node: "Node"

    def resolve(self, m, env) -> tuple[str, list, bool, bool]:
        """(name, array dims, is pointer, is reference), the sizes evaluated by ``m``."""
        dims = []
        for size in self.sizes:
            if size is None:
                raise Unsupported("an array of unknown size")
            dims.insert(0, m.concrete(size, env, "an array size"))
        if self.name is None:
            raise Unsupported("a declaration without a name")
        return self.name, dims, self.pointer, self.reference


@dataclass(frozen=True)
class Declaration:
    """A declaration statement as written: its type's text, whether it declares shared
    memory (``__shared__``, ``extern``), its declarators."""

    type: str
    shared: bool
    extern: bool
    declarators: tuple


def declaration(unit: "Unit", n: "Node") -> Declaration:
    """The declaration ``n``, read once per unit."""
    def compute(u):
        head = u.text(n).split("=")[0]
        spec = [c for c in n.children if c.type in ("storage_class_specifier",
                                                    "attribute_specifier")]
        shared = any("__shared__" in u.text(c) for c in spec) or "__shared__" in head
        return Declaration(u.text(n.child_by_field_name("type")), shared, "extern" in head,
                           tuple(_declarator(u, d) for d in
                                 n.children_by_field_name("declarator")))
    return unit.memo(f"model.code.declaration.{n.id}", compute)


def _declarator(unit: "Unit", d: "Node") -> Declarator:
    node, init = d, None
    if d.type == "init_declarator":
        init = d.child_by_field_name("value")
        d = d.child_by_field_name("declarator")
    sizes, ptr, ref = [], False, False
    while d is not None and d.type != "identifier":
        if d.type == "array_declarator":
            sizes.append(d.child_by_field_name("size"))
        elif d.type == "pointer_declarator":
            ptr = True
        elif d.type == "reference_declarator":
            ref = True
            d = d.named_children[0] if d.named_children else None
            continue
        d = d.child_by_field_name("declarator")
    return Declarator(unit.text(d) if d is not None else None, tuple(sizes), ptr, ref, init,
                      node)


def _raise(exc: Exception) -> Code:
    def f(m, env):
        raise exc
    return f


# ---------------------------------------------------------------------- expressions
def _expr(unit: "Unit", n: "Node") -> Code:
    t = n.type
    if t in ("parenthesized_expression", "condition_clause"):
        inner = [c for c in n.named_children if c.type != "comment"]
        return expr_code(unit, inner[-1])
    if t == "number_literal":
        try:
            val = number(unit.text(n))
        except Unsupported as e:
            return _raise(e)
        return lambda m, env: val
    if t in ("true", "false"):
        val = int(t == "true")
        return lambda m, env: val
    if t == "identifier":
        return _identifier(unit.text(n))
    if t == "field_expression":
        return _field(unit, n)
    if t == "subscript_expression":
        def subscript(m, env):
            row = m._row(n, env)
            if row is not None:
                return row
            return m.lvalue(n, env).get()
        return subscript
    if t == "binary_expression":
        return _binary(unit, n)
    if t == "unary_expression":
        return _unary(unit, n)
    if t == "conditional_expression":
        return _conditional(unit, n)
    if t == "assignment_expression":
        return _assignment(unit, n)
    if t == "update_expression":
        return _update(unit, n)
    if t == "cast_expression":
        typ = unit.text(n.child_by_field_name("type"))
        value = expr_code(unit, n.child_by_field_name("value"))
        return lambda m, env: m.cast(typ, value(m, env))
    if t == "comma_expression":
        left = expr_code(unit, n.child_by_field_name("left"))
        right = expr_code(unit, n.child_by_field_name("right"))

        def comma(m, env):
            left(m, env)
            return right(m, env)
        return comma
    if t == "call_expression":
        return lambda m, env: m.call(n, env)
    if t == "lambda_expression":
        return lambda m, env: Fn(n, env)
    return lambda m, env: m.expr_walk(n, env)


def _identifier(name: str) -> Code:
    def ident(m, env):
        cell = env.get(name)
        if cell is not None or name in env:
            return cell.get() if isinstance(cell, Ref) else cell.value
        return m.name(name, env)
    return ident


def _field(unit: "Unit", n: "Node") -> Code:
    arg = n.child_by_field_name("argument")
    f = unit.text(n.child_by_field_name("field"))
    if arg.type == "identifier" and unit.text(arg) in _BUILTINS:
        key = unit.text(n).replace(" ", "")

        def builtin(m, env):
            v = m.ints.get(key)
            if v is None:
                raise Unsupported(f"{key} has no value here")
            return v
        return builtin
    if arg.type == "call_expression" and f in "xyz":
        aid, text = arg.id, unit.text(n)

        def group_index(m, env):
            op = m.ops.get(aid)
            if op is not None and op.name in ("index.block", "index.thread"):
                key = ("blockIdx." if op.name == "index.block" else "threadIdx.") + f
                if key not in m.ints:
                    raise Unsupported(f"{text}: not known at this launch")
                return m.ints[key]
            return m.lvalue(n, env).get()
        return group_index
    return lambda m, env: m.lvalue(n, env).get()


def _binary(unit: "Unit", n: "Node") -> Code:
    op = unit.text(n.child_by_field_name("operator"))
    left = expr_code(unit, n.child_by_field_name("left"))
    right = expr_code(unit, n.child_by_field_name("right"))
    if op in ("&&", "||"):
        stop = op == "||"  # the value of a that decides the result

        def logic(m, env):
            a = left(m, env)
            if isinstance(a, int):
                if bool(a) == stop:
                    return int(bool(a))
                b = right(m, env)
                # a value-dependent right operand stays a term (a branch on it is refused)
                return int(bool(b)) if isinstance(b, int) else Term("logic", op, b)
            return binop(op, a, right(m, env))
        return logic
    if op in _ARITH:
        def arith(m, env):
            a = left(m, env)
            b = right(m, env)
            if type(a) is int and type(b) is int:
                return int_op(op, a, b)
            return binop(op, a, b)
        return arith
    return lambda m, env: binop(op, left(m, env), right(m, env))


def _unary(unit: "Unit", n: "Node") -> Code:
    op = unit.text(n.child_by_field_name("operator"))
    arg = expr_code(unit, n.child_by_field_name("argument"))
    ints = {"-": lambda a: -a, "+": lambda a: a, "!": lambda a: int(not a), "~": lambda a: ~a}

    def unary(m, env):
        a = arg(m, env)
        if isinstance(a, int):
            if op not in ints:
                raise KeyError(op)
            return ints[op](a)
        return a if op == "+" else Term("unop", op, a)
    return unary


def _conditional(unit: "Unit", n: "Node") -> Code:
    cond = expr_code(unit, n.child_by_field_name("condition"))
    text = unit.text(n.child_by_field_name("condition"))
    yes_node, no_node = (n.child_by_field_name(k) for k in ("consequence", "alternative"))
    yes, no = expr_code(unit, yes_node), expr_code(unit, no_node)

    def conditional(m, env):
        c = cond(m, env)
        if isinstance(c, Term):  # on a value: both sides, without side effects
            sides = [m.pure(yes_node, env), m.pure(no_node, env)]
            return Term("select", c, *(Term("num", float(v)) if not isinstance(v, Term)
                                       else v for v in sides))
        return (yes if as_int(c, "a ?: condition", text) else no)(m, env)
    return conditional


def _assignment(unit: "Unit", n: "Node") -> Code:
    op = unit.text(n.child_by_field_name("operator"))
    left = lvalue_code(unit, n.child_by_field_name("left"))
    right = expr_code(unit, n.child_by_field_name("right"))
    inner = op[:-1]

    def assign(m, env):
        lv = left(m, env)
        val = right(m, env)
        if op != "=":
            val = binop(inner, lv.get(), val)
        lv.set(val)
        return val
    return assign


def _update(unit: "Unit", n: "Node") -> Code:
    target = lvalue_code(unit, n.child_by_field_name("argument"))
    op = "+" if "++" in unit.text(n) else "-"
    prefix = n.children[0].type in ("++", "--")

    def update(m, env):
        lv = target(m, env)
        old = lv.get()
        lv.set(binop(op, old, 1))
        return lv.get() if prefix else old
    return update


# ------------------------------------------------------------------------- lvalues
def _lvalue(unit: "Unit", n: "Node") -> Code:
    t = n.type
    if t == "parenthesized_expression":
        return lvalue_code(unit, n.named_children[-1])
    if t == "identifier":
        name = unit.text(n)

        def variable(m, env):
            cell = env.get(name)
            if cell is None:
                raise Unsupported(f"{name} is not a local or parameter")
            return cell if isinstance(cell, Ref) else VarRef(cell)
        return variable
    if t == "subscript_expression":
        arg_node = n.child_by_field_name("argument")
        index = expr_code(unit, index_node(n))
        arg = expr_code(unit, arg_node)
        itext, atext = unit.text(index_node(n)), unit.text(arg_node)

        def element(m, env):
            k = as_int(index(m, env), "an index", itext)
            base = arg(m, env)
            if isinstance(base, Ptr):
                return MemRef(m, base.base, base.offset + k * base.width, base.width,
                              base.view)
            if isinstance(base, Agg):
                return m.element(m.lvalue(arg_node, env), k)
            raise Unsupported(f"a subscript of {atext[:40]}")
        return element
    return lambda m, env: m.lvalue_walk(n, env)


# ----------------------------------------------------------------------- statements
def _stmt(unit: "Unit", n: "Node") -> Code:
    t = n.type
    if t in SKIP:
        return lambda m, env: m.tick()
    if t == "compound_statement":
        body = [stmt_code(unit, c) for c in n.named_children]

        def block(m, env):
            m.tick()
            inner = dict(env)
            for s in body:
                s(m, inner)
            for k in env:
                env[k] = inner[k]
        return block
    if t == "expression_statement":
        return _expression_statement(unit, n)
    if t == "declaration":
        def declaration(m, env):
            m.tick()
            m.declare(n, env)
        return declaration
    if t == "if_statement":
        return _if(unit, n)
    if t in ("for_statement", "while_statement"):
        return _loop(unit, n)
    if t == "return_statement":
        vals = [c for c in n.named_children if c.type != "comment"]
        value = expr_code(unit, vals[0]) if vals else None

        def ret(m, env):
            m.tick()
            raise Return(value(m, env) if value is not None else None)
        return ret

    def other(m, env):
        m.tick()
        raise Unsupported(f"a {t.replace('_', ' ')} at line {n.start_point[0] + 1}")
    return other


def _expression_statement(unit: "Unit", n: "Node") -> Code:
    shape = misparsed_shape(unit, n)
    parts = [expr_code(unit, c) for c in n.named_children]
    if shape is not None:
        typ, name, init_node = shape
        init = expr_code(unit, init_node)

        def maybe_declaration(m, env):
            m.tick()
            # `ns::Type<32> x = init;`, read by the parser as `(A < 32) > (x = init)`
            if typ not in env and name not in env:
                env[name] = Cell(init(m, env))
                return
            for p in parts:
                p(m, env)
        return maybe_declaration

    def expression(m, env):
        m.tick()
        for p in parts:
            p(m, env)
    return expression


def _branch(unit: "Unit", n: "Node", part: str):
    branch = n.child_by_field_name(part)
    if branch is not None and branch.type == "else_clause":
        branch = branch.named_children[-1]
    return stmt_code(unit, branch) if branch is not None else None


def _if(unit: "Unit", n: "Node") -> Code:
    cond_node = n.child_by_field_name("condition")
    cond, text = expr_code(unit, cond_node), unit.text(cond_node)
    yes, no = _branch(unit, n, "consequence"), _branch(unit, n, "alternative")

    def if_(m, env):
        m.tick()
        c = cond(m, env)
        if isinstance(c, Term):
            return m.select(n, c, env)
        branch = yes if as_int(c, "an if condition", text) else no
        if branch is not None:
            branch(m, env)
    return if_


def _loop(unit: "Unit", n: "Node") -> Code:
    init_node = n.child_by_field_name("initializer") if n.type == "for_statement" else None
    init = None
    if init_node is not None and init_node.type != "declaration":
        init = expr_code(unit, init_node)
    cond_node = n.child_by_field_name("condition")
    cond = expr_code(unit, cond_node) if cond_node is not None else None
    text = unit.text(cond_node) if cond_node is not None else ""
    update_node = n.child_by_field_name("update")
    update = expr_code(unit, update_node) if update_node is not None else None
    body = stmt_code(unit, n.child_by_field_name("body"))

    def loop(m, env):
        m.tick()
        inner = dict(env)
        if init_node is not None:
            if init is None:
                m.declare(init_node, inner)
            else:
                init(m, inner)
        while cond is None or as_int(cond(m, inner), "a loop condition", text):
            m.tick()
            body(m, inner)
            if update is not None:
                update(m, inner)
        for k in env:
            env[k] = inner[k]
    return loop

