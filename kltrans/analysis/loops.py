"""Loops: induction variable, bounds, step, trip count, pragmas, nesting.

:func:`loops` lists every ``for``/``while``/``do`` loop of a function (or a unit) as a
:class:`Loop`; :func:`loop_of` builds the one for a given node. A loop is *counted* when
its induction variable, its comparison and its step are all known; its trip count is known
when init, bound and step are constants (or become constants with
:meth:`Loop.trip_count_known_with`).

Recognized shapes::

    for (int i = a; i < b; ++i)           for (i = a; i <= b; i += k)
    for (; i < n; i += stride)            (init: the definition reaching the loop)
    for (int o = 16; o > 0; o >>= 1)      (halving: step None, step_text ">>=1", 5 trips)
    int i = a; while (i < n) { ...; i += k; }
    do { ...; i += k; } while (i < n);
    for (int i = a; i < n;) { ...; i += k; }   (the step as a statement of the body)
    for (int s = 16; s; s /= 2)            (a bare condition: s != 0)

A step that is not additive (``*=``, ``/=``, ``>>=``, ``<<=``) leaves ``step`` None and is
recorded in ``step_text``; such loops still get a trip count when every value is constant
(the iterations are simulated).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

from kltrans.analysis.affine import (
    LOOP_NODE_TYPES,
    Affine,
    _cache,
    _defs,
    _loop_body_contains,
    _norm,
    _reaching,
    _resolve,
    _strip_parens,
    affine_of,
)

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

_KINDS = {"for_statement": "for", "for_range_loop": "for", "while_statement": "while",
          "do_statement": "do"}
_CMP = ("<", "<=", ">", ">=", "!=")
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "!=": "!="}
_MAX_SIMULATED = 100_000


@dataclass(frozen=True)
class Loop:
    """One loop and what is known about its iteration space.

    ``step`` is the additive step (+1 for ``++i``, -1 for ``--i``, ``k`` for ``i += k``) or
    None; ``step_text`` is the update as an operator and amount (``"+=1"``, ``">>=1"``,
    ``"*=2"``). ``trip_count`` is set when init, bound and step are constants; ``reason``
    says why it is not. ``depth`` is the nesting depth among the loops of the function.
    """

    node: "Node" = field(compare=False, repr=False)
    kind: str
    var: str | None
    init: Affine | None
    init_node: "Node | None" = field(compare=False, repr=False)
    cond_op: str | None
    bound: Affine | None
    bound_node: "Node | None" = field(compare=False, repr=False)
    step: Affine | None
    step_text: str | None
    trip_count: int | None
    body: "Node | None" = field(compare=False, repr=False)
    pragmas: tuple = field(compare=False, repr=False)
    depth: int
    reason: str | None = None
    var_node: "Node | None" = field(default=None, compare=False, repr=False)
    update_node: "Node | None" = field(default=None, compare=False, repr=False)
    step_op: str | None = None  # "+=", "-=", "*=", "/=", ">>=", "<<="
    step_node: "Node | None" = field(default=None, compare=False, repr=False)
    unit: "Unit | None" = field(default=None, compare=False, repr=False)

    @property
    def counted(self) -> bool:
        """Induction variable, comparison, bound and an additive step are all known."""
        return self.var is not None and self.cond_op is not None and \
            self.bound is not None and self.step is not None

    def trip_count_known_with(self, consts: Mapping[str, int]) -> int | None:
        """The trip count once the symbols in ``consts`` are bound (template parameters,
        sizes, ``blockDim.x``...); None when it is still not a constant."""
        if self.trip_count is not None:
            return self.trip_count
        if self.var is None or self.cond_op is None or self.step_op is None:
            return None
        env = {k: Affine.of(v) for k, v in (consts or {}).items()}
        unit = self.unit
        init = _eval_with(unit, self.init_node, self.init, env)
        bound = _eval_with(unit, self.bound_node, self.bound, env)
        if self.step_node is not None:
            amount = _eval_with(unit, self.step_node, None, env)
        else:
            amount = Affine.const(1)
        vals = [x.value() if x is not None else None for x in (init, bound, amount)]
        if None in vals:
            return None
        n, _why = _trip(vals[0], self.cond_op, vals[1], self.step_op, vals[2], self.kind == "do")
        return n


def _eval_with(unit, node, fallback: Affine | None, env) -> Affine | None:
    if node is not None and unit is not None:
        a = affine_of(unit, node, env=env)
        if a is not None:
            return a
    if fallback is not None:
        return fallback.subs(env)
    return None


# ---------------------------------------------------------------------- trip counts
def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _apply(v: int, op: str, k: int) -> int | None:
    if op == "+=":
        return v + k
    if op == "-=":
        return v - k
    if op == "*=":
        return v * k
    if op == "/=":
        if k == 0:
            return None
        q = abs(v) // abs(k)
        return q if (v >= 0) == (k >= 0) else -q
    if op == ">>=":
        return v >> k if 0 <= k < 64 else None
    if op == "<<=":
        return v << k if 0 <= k < 64 else None
    return None


def _cmp(a: int, op: str, b: int) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "!=": a != b}[op]


def _trip(init: int, op: str, bound: int, step_op: str, k: int, is_do: bool) -> tuple[int | None, str]:
    """Iterations of ``for (v = init; v op bound; v step_op k)`` (a do loop runs once first)."""
    if is_do:
        nxt = _apply(init, step_op, k)
        if nxt is None:
            return None, "the step cannot be applied"
        rest, why = _trip(nxt, op, bound, step_op, k, False)
        return (rest + 1 if rest is not None else None), why
    if step_op in ("+=", "-="):
        s = k if step_op == "+=" else -k
        if not _cmp(init, op, bound):
            return 0, "the condition is false on entry"
        if op == "<":
            return (_ceil_div(bound - init, s), "") if s > 0 else (None, "the loop never ends")
        if op == "<=":
            return ((bound - init) // s + 1, "") if s > 0 else (None, "the loop never ends")
        if op == ">":
            return (_ceil_div(init - bound, -s), "") if s < 0 else (None, "the loop never ends")
        if op == ">=":
            return ((init - bound) // -s + 1, "") if s < 0 else (None, "the loop never ends")
        if op == "!=":
            if s != 0 and (bound - init) % s == 0 and (bound - init) // s > 0:
                return (bound - init) // s, ""
            return None, "the induction variable steps over the bound"
        return None, f"unsupported comparison {op}"
    v = init
    n = 0
    while _cmp(v, op, bound):
        n += 1
        if n > _MAX_SIMULATED:
            return None, "more than 100000 iterations"
        nxt = _apply(v, step_op, k)
        if nxt is None or nxt == v:
            return None, "the loop never ends"
        v = nxt
    return n, ""


# -------------------------------------------------------------------- construction
def _ident_name(unit: "Unit", node: "Node | None") -> str | None:
    """The variable an expression names, seeing through parentheses and casts."""
    while node is not None:
        node = _strip_parens(node)
        if node.type == "identifier":
            return unit.text(node)
        if node.type == "cast_expression":
            node = node.child_by_field_name("value")
            continue
        if node.type == "call_expression":
            f = node.child_by_field_name("function")
            args = node.child_by_field_name("arguments")
            if f is not None and f.type == "template_function" and args is not None and \
                    unit.text(f.child_by_field_name("name")) == "static_cast" and \
                    len(args.named_children) == 1:
                node = args.named_children[0]
                continue
        return None
    return None


def _ident_node(node: "Node | None") -> "Node | None":
    while node is not None:
        node = _strip_parens(node)
        if node.type == "identifier":
            return node
        if node.type == "cast_expression":
            node = node.child_by_field_name("value")
            continue
        if node.type == "call_expression":
            args = node.child_by_field_name("arguments")
            if args is not None and len(args.named_children) == 1:
                node = args.named_children[0]
                continue
        return None
    return None


def _updates(unit: "Unit", node: "Node | None", var: str | None):
    """(op, amount node or None, update node) for each update of ``var`` in an update clause."""
    out = []
    if node is None:
        return out
    if node.type == "comma_expression":
        for c in node.named_children:
            out.extend(_updates(unit, c, var))
        return out
    node = _strip_parens(node)
    if node.type == "update_expression":
        arg = node.child_by_field_name("argument")
        name = _ident_name(unit, arg)
        if name is not None and (var is None or name == var):
            op = unit.text(node.child_by_field_name("operator"))
            out.append((name, "+=" if op == "++" else "-=", None, node))
    elif node.type == "assignment_expression":
        left = node.child_by_field_name("left")
        name = _ident_name(unit, left)
        if name is None or (var is not None and name != var):
            return out
        op = unit.text(node.child_by_field_name("operator"))
        right = node.child_by_field_name("right")
        if op in ("+=", "-=", "*=", "/=", ">>=", "<<="):
            out.append((name, op, right, node))
        elif op == "=":
            r = _strip_parens(right)
            if r is not None and r.type == "binary_expression":
                bop = unit.text(r.child_by_field_name("operator"))
                lft, rgt = r.child_by_field_name("left"), r.child_by_field_name("right")
                if _ident_name(unit, lft) == name and bop in ("+", "-", "*", "/", ">>", "<<"):
                    out.append((name, bop + "=", rgt, node))
                elif _ident_name(unit, rgt) == name and bop in ("+", "*"):
                    out.append((name, bop + "=", lft, node))
                else:
                    out.append((name, "?", None, node))
            else:
                out.append((name, "?", None, node))
    return out


def _condition(unit: "Unit", cond: "Node | None", var: str | None):
    """(var, op, bound node, var identifier node) for ``var op bound`` (either side)."""
    if cond is None:
        return None
    if cond.type == "condition_clause":
        cond = cond.child_by_field_name("value")
    cond = _strip_parens(cond)
    if cond is not None and cond.type == "identifier" and (var is None or unit.text(cond) == var):
        return unit.text(cond), "!=", None, cond  # `for (...; s; s >>= 1)`: s != 0
    if cond is None or cond.type != "binary_expression":
        return None
    op = unit.text(cond.child_by_field_name("operator"))
    if op not in _CMP:
        return None
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    ln, rn = _ident_name(unit, left), _ident_name(unit, right)
    if ln is not None and (var is None or ln == var):
        return ln, op, right, _ident_node(left)
    if rn is not None and (var is None or rn == var):
        return rn, _FLIP[op], left, _ident_node(right)
    return None


def _depth(node: "Node") -> int:
    d = 0
    p = node.parent
    while p is not None and p.type not in ("function_definition", "lambda_expression"):
        if p.type in LOOP_NODE_TYPES:
            d += 1
        p = p.parent
    return d


def _body_updates(unit: "Unit", loop_node: "Node", body: "Node | None", var: str):
    """Updates of ``var`` that are statements directly in the loop body."""
    if body is None:
        return [], 0
    stmts = body.named_children if body.type == "compound_statement" else [body]
    direct = []
    for s in stmts:
        if s.type == "expression_statement":
            for c in s.named_children:
                direct.extend(_updates(unit, c, var))
    total = 0
    for n in unit.walk(body):
        if n.type in ("assignment_expression", "update_expression"):
            tgt = n.child_by_field_name("left" if n.type == "assignment_expression" else "argument")
            if _ident_name(unit, tgt) == var:
                total += 1
    return direct, total


def _build(unit: "Unit", node: "Node") -> Loop:
    from kltrans.syntax.cuda import pragmas_for

    kind = _KINDS[node.type]
    body = node.child_by_field_name("body")
    pragmas = tuple(pragmas_for(unit, node))
    depth = _depth(node)
    base = dict(node=node, kind=kind, body=body, pragmas=pragmas, depth=depth)
    empty = dict(var=None, init=None, init_node=None, cond_op=None, bound=None, bound_node=None,
                 step=None, step_text=None, trip_count=None)

    if node.type == "for_range_loop":
        d = node.child_by_field_name("declarator")
        var = unit.text(d) if d is not None and d.type == "identifier" else None
        return Loop(**base, **{**empty, "var": var}, reason="a range-based for loop", unit=unit)

    var = None
    var_node = None
    init_node = None
    init_override: Affine | None = None
    update_clause = None
    cond = node.child_by_field_name("condition")
    if node.type == "for_statement":
        ini = node.child_by_field_name("initializer")
        update_clause = node.child_by_field_name("update")
        candidates = []  # (name, ident node, value node)
        if ini is not None:
            if ini.type == "declaration":
                from kltrans.analysis.affine import _declarators

                for top, ident, value in _declarators(unit, ini):
                    candidates.append((unit.text(ident), ident, value))
            else:
                parts = ini.named_children if ini.type == "comma_expression" else [ini]
                for a in parts:
                    a = _strip_parens(a)
                    if a.type == "assignment_expression" and \
                            unit.text(a.child_by_field_name("operator")) == "=":
                        left = a.child_by_field_name("left")
                        nm = _ident_name(unit, left)
                        if nm is not None:
                            candidates.append((nm, _ident_node(left), a.child_by_field_name("right")))
        cinfo = None
        for nm, ident, value in candidates:
            cinfo = _condition(unit, cond, nm)
            if cinfo is not None:
                var, var_node, init_node = nm, ident, value
                break
        if var is None and len(candidates) == 1:
            var, var_node, init_node = candidates[0]
        if var is None:
            ups = _updates(unit, update_clause, None)
            names = [u[0] for u in ups]
            for nm in names:
                if _condition(unit, cond, nm) is not None:
                    var = nm
                    break
            if var is None and len(set(names)) == 1:
                var = names[0]
            if var is None:
                ci = _condition(unit, cond, None)
                if ci is not None:
                    var = ci[0]
    else:
        # while / do: the compared variable that the body updates
        cond_node = cond
        if cond_node is not None and cond_node.type == "condition_clause":
            cond_node = cond_node.child_by_field_name("value")
        c = _strip_parens(cond_node) if cond_node is not None else None
        sides = []
        if c is not None and c.type == "binary_expression":
            sides = [c.child_by_field_name("left"), c.child_by_field_name("right")]
        elif c is not None and c.type == "identifier":
            sides = [c]  # while (s) { ...; s >>= 1; }
        for side in sides:
            nm = _ident_name(unit, side)
            if nm is not None and _body_updates(unit, node, body, nm)[1] > 0:
                var = nm
                break

    if var is None:
        return Loop(**base, **empty, reason="no induction variable", unit=unit)

    cinfo = _condition(unit, cond, var)
    if var_node is None and cinfo is not None:
        var_node = cinfo[3]
    cond_op = bound_node = None
    bound = None
    if cinfo is not None:
        _, cond_op, bound_node, _vn = cinfo
        bound = affine_of(unit, bound_node) if bound_node is not None else Affine.const(0)

    # the initial value: the for initializer, or the definition reaching the loop
    if init_node is None and var_node is not None:
        b = _resolve(unit, var_node, var)
        if b.kind in ("local", "param"):
            d = _reaching(unit, b, node)
            if d is not None and d.kind == "param":
                init_override = Affine.sym(var)
            elif d is not None and d.rhs is not None:
                init_node = d.rhs
    init = affine_of(unit, init_node) if init_node is not None else init_override

    # the step
    if node.type == "for_statement":
        ups = _updates(unit, update_clause, var)
        in_body = _body_updates(unit, node, body, var)
        extra = in_body[1]
        if not ups and not _updates(unit, update_clause, None):
            # for (...; i < n;) { ...; i += k; }: the step is a statement of the body
            ups, extra = in_body[0], in_body[1] - len(in_body[0])
    else:
        ups, total = _body_updates(unit, node, body, var)
        extra = total - len(ups)
    step = None
    step_text = None
    step_op = None
    step_node = None
    update_node = None
    reason = None
    if len(ups) == 1:
        _, op, amount, update_node = ups[0]
        step_op = op if op != "?" else None
        step_node = amount
        if op == "?":
            step_text = _norm(unit.text(update_node))
        else:
            amt = affine_of(unit, amount) if amount is not None else Affine.const(1)
            amt_text = _norm(unit.text(amount)) if amount is not None else "1"
            step_text = f"{op}{amt_text}"
            if op in ("+=", "-=") and amt is not None:
                step = amt if op == "+=" else -amt
    elif not ups:
        reason = f"no update of {var}"
    else:
        reason = f"{var} is updated {len(ups)} times per iteration"
    if extra > 0:
        step = None
        reason = f"the body also assigns {var}"
        step_op = None

    trip = None
    if reason is None:
        if cond_op is None:
            reason = f"the condition does not compare {var} with a bound"
        elif step_op is None:
            reason = f"the update of {var} is not a constant step ({step_text})"
        else:
            amount_val = (affine_of(unit, step_node) if step_node is not None else Affine.const(1))
            vals = (init.value() if init is not None else None,
                    bound.value() if bound is not None else None,
                    amount_val.value() if amount_val is not None else None)
            if None in vals:
                unknown = [nm for nm, v in zip(("init", "bound", "step"), vals) if v is None]
                what = {"init": f"initial value {init}", "bound": f"bound {bound}",
                        "step": f"step {step_text}"}
                reason = "the " + " and ".join(what[u] for u in unknown) + " not constant" \
                    if len(unknown) > 1 else f"the {what[unknown[0]]} is not constant"
            else:
                trip, why = _trip(vals[0], cond_op, vals[1], step_op, vals[2], kind == "do")
                reason = why or None if trip is None else None
    loop = Loop(**base, var=var, init=init, init_node=init_node, cond_op=cond_op, bound=bound,
                bound_node=bound_node, step=step, step_text=step_text, trip_count=trip,
                reason=reason, var_node=var_node, update_node=update_node, step_op=step_op,
                step_node=step_node, unit=unit)
    return loop


def loop_of(unit: "Unit", node: "Node") -> Loop | None:
    """The :class:`Loop` for a ``for``/``while``/``do`` node (None for other nodes)."""
    if node is None or node.type not in LOOP_NODE_TYPES:
        return None
    c = _cache(unit).setdefault("loops", {})
    lp = c.get(node.id)
    if lp is None:
        try:
            lp = _build(unit, node)
        except RecursionError:
            lp = Loop(node=node, kind=_KINDS[node.type], var=None, init=None, init_node=None,
                      cond_op=None, bound=None, bound_node=None, step=None, step_text=None,
                      trip_count=None, body=node.child_by_field_name("body"), pragmas=(),
                      depth=_depth(node), reason="too deeply nested to analyse", unit=unit)
        c[node.id] = lp
    return lp


def loops(unit: "Unit", fn: "Function | None" = None) -> list[Loop]:
    """Every loop in ``fn``'s body (or the whole unit), in pre-order."""
    root = fn.node if fn is not None else unit.root
    return [loop_of(unit, n) for n in unit.walk(root) if n.type in LOOP_NODE_TYPES]


def loop_exit(body: "Node") -> "Node | None":
    """A ``break`` or ``continue`` in a loop's ``body`` that leaves or restarts that loop
    (not one of a loop, ``switch`` or lambda inside it), or None."""
    stack = list(body.named_children)
    while stack:
        n = stack.pop()
        if n.type in ("break_statement", "continue_statement"):
            return n
        if n.type in ("for_statement", "while_statement", "do_statement", "for_range_loop",
                      "switch_statement", "lambda_expression"):
            continue
        stack.extend(n.named_children)
    return None


def assigned_in(unit: "Unit", node: "Node", var: str) -> bool:
    """Whether ``var`` is assigned anywhere inside ``node``.

    Counts ``var = ...``, ``var op= ...``, ``++var``/``var--``, taking its address
    (``&var``) and passing it to a non-const reference parameter of a function defined in
    the unit. Matches by name (a shadowing declaration inside ``node`` still counts).
    """
    if node is None:
        return False
    from kltrans.analysis.affine import _ref_param_positions, _unit_info

    info = _unit_info(unit)
    for n in unit.walk(node):
        t = n.type
        if t == "assignment_expression":
            if _strip_name(unit, n.child_by_field_name("left")) == var:
                return True
        elif t == "update_expression":
            if _strip_name(unit, n.child_by_field_name("argument")) == var:
                return True
        elif t == "pointer_expression":
            op = n.child_by_field_name("operator")
            if op is not None and unit.text(op) == "&" and \
                    _strip_name(unit, n.child_by_field_name("argument")) == var:
                return True
        elif t == "call_expression":
            f = n.child_by_field_name("function")
            args = n.child_by_field_name("arguments")
            if f is None or args is None or f.type != "identifier":
                continue
            refs = _ref_param_positions(unit, info.functions.get(unit.text(f), ()))
            for i, a in enumerate(x for x in args.named_children if x.type != "comment"):
                if i in refs and _strip_name(unit, a) == var:
                    return True
    return False


def _strip_name(unit: "Unit", node: "Node | None") -> str | None:
    node = _strip_parens(node) if node is not None else None
    return unit.text(node) if node is not None and node.type == "identifier" else None


def _defs_in_loop(unit: "Unit", loop: Loop) -> int:
    """How many definitions of the loop's variable run on every iteration."""
    if loop.var_node is None or loop.var is None:
        return 0
    b = _resolve(unit, loop.var_node, loop.var)
    if b.kind not in ("local", "param"):
        return 0
    return sum(1 for d in _defs(unit, b)
               if d.kind not in ("param", "decl") and _loop_body_contains(loop.node, d.node))
