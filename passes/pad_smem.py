"""Shared-memory padding: ``pad-smem`` (optimize) and its inverse ``unpad-smem`` (simplify).

The module also holds two small analyses the passes need (candidates for the framework):

- :func:`value_range` — an interval of an integer expression at a point of the code,
  from constants, thread indices bounded by the launch contract's block, counted loops
  and single-definition locals (``>>``, ``&``, ``|``, ``%``, ``min``/``max``, ``?:``);
- :func:`array_uses` — every use of a shared array, in its kernel and in the device
  functions the whole array or an element address is passed to: element accesses,
  vector accesses through a cast of an element address, and anything else (an escape).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kltrans.analysis.affine import (
    resolve_name,
    strip_parens,
    unit_info,
    affine_of,
    thread_dependent,
)
from kltrans.analysis.loops import assigned_in
from kltrans.analysis.smem import shared_footprint, type_size
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Choice, Identifier, Pass, Precondition, option
from kltrans.passes.rewrite import norm
from kltrans.syntax import Edit
from kltrans.passes.launch_facts import STATIC_SMEM, int_env, block_dims

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

PADS = (1, 2, 4)
BANKS = 32  # 4-byte banks per shared-memory row
_ATOMIC = re.compile(r"^(::)?atomic[A-Z]\w*(_block|_system)?$")
_CVTA = {"__cvta_generic_to_shared", "__cvta_generic_to_shared_u32"}
_BUILTIN = re.compile(r"^(threadIdx|blockIdx|blockDim|gridDim)\.([xyz])$")


# ============================================================ integer environment


def thread_env(block) -> dict:
    env = {}
    for c, b in zip("xyz", block):
        env[f"threadIdx.{c}"] = (0, b - 1)
        env[f"blockDim.{c}"] = (b, b)
    return env


# ================================================================ value ranges
def _const(unit, node) -> int | None:
    a = affine_of(unit, node)
    return a.value() if a is not None else None


def _loop_range(unit, loop, ident_name, env, depth):
    """Range of a counted ``for (int j = a; j < b; j += s)`` induction variable."""
    cond = loop.child_by_field_name("condition")
    upd = loop.child_by_field_name("update")
    init = loop.child_by_field_name("initializer")
    if cond is None or upd is None or init is None:
        return None
    cond = strip_parens(cond)
    if cond.type != "binary_expression":
        return None
    op = unit.text(cond.child_by_field_name("operator"))
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    if unit.text(strip_parens(left)) == ident_name and op in ("<", "<="):
        bound = right
    elif unit.text(strip_parens(right)) == ident_name and op in (">", ">="):
        bound, op = left, {">": "<", ">=": "<="}[op]
    else:
        return None
    # the step: ++j, j++, j += c (c > 0)
    step = None
    u = strip_parens(upd)
    if u.type == "update_expression" and "++" in unit.text(u) and \
            unit.text(strip_parens(u.child_by_field_name("argument"))) == ident_name:
        step = 1
    elif u.type == "assignment_expression" and \
            unit.text(u.child_by_field_name("operator")) == "+=" and \
            unit.text(strip_parens(u.child_by_field_name("left"))) == ident_name:
        s = value_range(unit, u.child_by_field_name("right"), env, depth + 1)
        if s is None or s[0] <= 0:
            return None
        step = s[0] if s[0] == s[1] else None
        if step is None:
            step = -1  # positive but not constant
    if step is None:
        return None
    body = loop.child_by_field_name("body")
    if assigned_in(unit, body, ident_name):
        return None
    decls = [d for d in init.children_by_field_name("declarator")
             if d.type == "init_declarator"]
    start = None
    for d in decls:
        if unit.text(d.child_by_field_name("declarator")) == ident_name:
            start = value_range(unit, d.child_by_field_name("value"), env, depth + 1)
    b = value_range(unit, bound, env, depth + 1)
    if start is None or b is None:
        return None
    hi = b[1] - 1 if op == "<" else b[1]
    if env.get("@start"):  # one iteration: the first
        return (start[0], start[0]) if start[0] == start[1] else None
    if step > 1 and start[0] == start[1]:
        hi = start[0] + ((hi - start[0]) // step) * step
    if hi < start[0]:
        return (start[0], start[0])
    return (start[0], hi)


def _ident_range(unit, node, env, depth):
    name = unit.text(node)
    c = _const(unit, node)
    if c is not None:
        return (c, c)
    b = resolve_name(unit, node, name)
    if b.kind != "local" or b.decl is None:
        return None
    if b.decl.type == "declaration" and b.decl.parent is not None and \
            b.decl.parent.type == "for_statement" and \
            b.decl.parent.child_by_field_name("initializer") is not None and \
            b.decl.parent.child_by_field_name("initializer").id == b.decl.id:
        return _loop_range(unit, b.decl.parent, name, env, depth)
    if b.value is None:
        return None
    scope = b.decl.parent
    if scope is None:
        return None
    if assigned_in(unit, scope, name):
        return _while_counter_range(unit, node, name, b, env, depth)
    return value_range(unit, b.value, env, depth + 1)


def _while_counter_range(unit, use, name, b, env, depth):
    """A counter of ``int j = a; while (j < n) { ... use ...; j += s; }`` (re-set by
    ``j = a'`` before other such loops): [min of the starts, hi(n) - 1]. Every other
    assignment of ``j`` in its scope must be ``j = e`` or ``j += s`` with s > 0, and in the
    loop around the use only increments after the use, at the loop body's top level."""
    loop = use.parent
    while loop is not None and loop.type != "while_statement":
        if loop.type in ("function_definition", "lambda_expression"):
            return None
        loop = loop.parent
    if loop is None:
        return None
    cond = strip_parens(loop.child_by_field_name("condition"))
    if cond.type == "condition_clause":
        inner = [c for c in cond.named_children if c.type != "comment"]
        cond = strip_parens(inner[0]) if len(inner) == 1 else cond
    if cond.type != "binary_expression" or \
            unit.text(strip_parens(cond.child_by_field_name("left"))) != name:
        return None
    op = unit.text(cond.child_by_field_name("operator"))
    if op not in ("<", "<="):
        return None
    bound = value_range(unit, cond.child_by_field_name("right"), env, depth + 1)
    start = value_range(unit, b.value, env, depth + 1)
    if bound is None or start is None:
        return None
    lo = start[0]
    body = loop.child_by_field_name("body")
    for n in unit.walk(b.decl.parent):
        if n.type == "update_expression" and \
                unit.text(strip_parens(n.child_by_field_name("argument"))) == name:
            if "++" not in unit.text(n):
                return None
            target = n
        elif n.type == "assignment_expression" and \
                unit.text(strip_parens(n.child_by_field_name("left"))) == name:
            aop = unit.text(n.child_by_field_name("operator"))
            r = value_range(unit, n.child_by_field_name("right"), env, depth + 1)
            if r is None or aop not in ("=", "+=") or (aop == "+=" and r[0] <= 0):
                return None
            if aop == "=":
                lo = min(lo, r[0])
                continue
            target = n
        elif n.type == "pointer_expression" and \
                unit.text(n.child_by_field_name("operator")) == "&" and \
                unit.text(strip_parens(n.child_by_field_name("argument"))) == name:
            return None
        else:
            continue
        if body.start_byte <= target.start_byte < body.end_byte:
            st = target.parent
            if st is None or st.type != "expression_statement" or st.parent.id != body.id or \
                    target.start_byte < use.end_byte:
                return None
    hi = bound[1] - 1 if op == "<" else bound[1]
    return (lo, hi) if hi >= lo else (lo, lo)


def _exact(op: str, x: int, y: int) -> "int | None":
    """``x op y`` with C integer semantics (None for an operator not handled)."""
    if op in ("/", "%") and y == 0:
        return None
    if op == "/":
        q = abs(x) // abs(y)
        return q if (x >= 0) == (y >= 0) else -q
    if op == "%":
        return x - y * _exact("/", x, y)
    if op in (">>", "<<") and y < 0:
        return None
    ops = {"+": lambda: x + y, "-": lambda: x - y, "*": lambda: x * y, ">>": lambda: x >> y,
           "<<": lambda: x << y, "&": lambda: x & y, "|": lambda: x | y, "^": lambda: x ^ y}
    return ops[op]() if op in ops else None


def _bits(v: int) -> int:
    return (1 << max(v, 0).bit_length()) - 1


def value_range(unit, node, env: dict, depth: int = 0) -> "tuple[int, int] | None":
    """An interval [lo, hi] holding every value ``node`` takes, or None when unknown.

    ``env`` maps builtins (``threadIdx.x``, ``blockDim.x``) to intervals (see
    :func:`thread_env`). Locals are followed to their single definition when nothing
    assigns them again; loop counters of counted ``for`` loops get their iteration range.
    """
    if node is None or depth > 60:
        return None
    node = strip_parens(node)
    t = node.type
    if t == "number_literal":
        c = _const(unit, node)
        return None if c is None else (c, c)
    if t == "field_expression":
        b = norm(unit.text(node)).replace(" ", "")
        if _BUILTIN.match(b):
            return env.get(b)
        return None
    if t == "identifier":
        return _ident_range(unit, node, env, depth)
    if t in ("cast_expression",):
        return value_range(unit, node.child_by_field_name("value"), env, depth + 1)
    if t == "conditional_expression":
        a = value_range(unit, node.child_by_field_name("consequence"), env, depth + 1)
        b = value_range(unit, node.child_by_field_name("alternative"), env, depth + 1)
        return None if a is None or b is None else (min(a[0], b[0]), max(a[1], b[1]))
    if t == "unary_expression":
        op = unit.text(node.child_by_field_name("operator"))
        a = value_range(unit, node.child_by_field_name("argument"), env, depth + 1)
        if a is None:
            return None
        if op == "-":
            return (-a[1], -a[0])
        if op == "+":
            return a
        return None
    if t == "call_expression":
        f = node.child_by_field_name("function")
        args = [a for a in node.child_by_field_name("arguments").named_children
                if a.type != "comment"]
        fname = unit.text(f.child_by_field_name("name")) if f.type == "template_function" \
            else unit.text(f)
        if fname in ("static_cast", "int", "unsigned") and len(args) == 1:
            return value_range(unit, args[0], env, depth + 1)
        if fname in ("min", "max", "umin", "umax", "::min", "::max") and len(args) == 2:
            a = value_range(unit, args[0], env, depth + 1)
            b = value_range(unit, args[1], env, depth + 1)
            if a is None or b is None:
                return None
            if "min" in fname:
                return (min(a[0], b[0]), min(a[1], b[1]))
            return (max(a[0], b[0]), max(a[1], b[1]))
        c = _const(unit, node)
        return None if c is None else (c, c)
    if t == "binary_expression":
        op = unit.text(node.child_by_field_name("operator"))
        a = value_range(unit, node.child_by_field_name("left"), env, depth + 1)
        b = value_range(unit, node.child_by_field_name("right"), env, depth + 1)
        if a is None or b is None:
            return None
        if a[0] == a[1] and b[0] == b[1]:
            v = _exact(op, a[0], b[0])
            if v is not None:
                return (v, v)
        if op == "+":
            return (a[0] + b[0], a[1] + b[1])
        if op == "-":
            return (a[0] - b[1], a[1] - b[0])
        if op == "*":
            ps = [x * y for x in a for y in b]
            return (min(ps), max(ps))
        if a[0] < 0 or b[0] < 0:
            return None  # the bit and division rules below are for non-negative values
        if op == "/" and b[0] > 0:
            return (a[0] // b[1], a[1] // b[0])
        if op == "%" and b[0] > 0:
            return (0, min(a[1], b[1] - 1))
        if op == ">>":
            return (a[0] >> b[1], a[1] >> b[0])
        if op == "<<":
            return (a[0] << b[0], a[1] << b[1])
        if op == "&":
            return (0, min(a[1], b[1]))
        if op in ("|", "^"):
            return (max(a[0], b[0]) if op == "|" else 0, _bits(max(a[1], b[1])))
        return None
    c = _const(unit, node)
    return None if c is None else (c, c)


# =============================================================== array uses
@dataclass
class Use:
    kind: str  # "elem" | "vector" | "escape"
    node: "Node"  # the full subscript (or what escapes)
    indices: tuple = ()  # index expression nodes, outermost dimension first
    width: int = 1  # elements touched from the last index on
    vec_bytes: int = 0
    why: str = ""


@dataclass
class Uses:
    uses: list = field(default_factory=list)
    type_sites: list = field(default_factory=list)  # last-dimension nodes of parameter types

    @property
    def escapes(self) -> list:
        return [u for u in self.uses if u.kind == "escape"]


def _index_node(sub):
    idx = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
    if idx is None:
        return None
    inner = [c for c in idx.named_children if c.type != "comment"]
    return inner[0] if len(inner) == 1 else None


def _up(node):
    p = node.parent
    while p is not None and p.type == "parenthesized_expression":
        node, p = p, p.parent
    return node, p


def _args(call):
    a = call.child_by_field_name("arguments")
    return [x for x in a.named_children if x.type != "comment"] if a is not None else []


def _call_name(unit, call) -> str:
    f = call.child_by_field_name("function")
    if f is None:
        return ""
    if f.type == "template_function":
        f = f.child_by_field_name("name")
    return unit.text(f).split("::")[-1] if f is not None else ""


def _callee(unit, call):
    name = _call_name(unit, call)
    fs = [f for f in unit_info(unit).functions.get(name, ()) if not f.is_kernel]
    return fs[0] if len(fs) == 1 else None


def _pointee_type(unit, type_desc) -> "str | None":
    """``const float4`` of the type descriptor ``const float4*`` (one level of pointer)."""
    text = norm(unit.text(type_desc))
    if not text.endswith("*") or text.endswith("**"):
        return None
    t = re.sub(r"\b(const|volatile|__restrict__)\b", " ", text[:-1])
    return norm(t)


def _cast_type(unit, node, parent) -> "str | None":
    """The vector type when ``node`` (an address) is the operand of a pointer cast."""
    if parent is None:
        return None
    if parent.type == "cast_expression":
        return _pointee_type(unit, parent.child_by_field_name("type"))
    if parent.type == "argument_list" and parent.parent is not None and \
            parent.parent.type == "call_expression":
        f = parent.parent.child_by_field_name("function")
        if f is not None and f.type == "template_function" and \
                unit.text(f.child_by_field_name("name")) in ("reinterpret_cast", "static_cast"):
            targs = [c for c in f.child_by_field_name("arguments").named_children
                     if c.type != "comment"]
            if len(targs) == 1 and len(_args(parent.parent)) == 1:
                return _pointee_type(unit, targs[0])
    return None


def _param_of(fn, pos):
    params = [p for p in fn.node.child_by_field_name("declarator")
              .child_by_field_name("parameters").named_children
              if p.type in ("parameter_declaration", "optional_parameter_declaration")]
    return params[pos] if pos < len(params) else None


def _param_array_dims(unit, pdecl) -> "tuple[str, list] | None":
    """(name, [dim nodes]) of a parameter ``T (*P)[D1]...[Dn]`` (pointer to array)."""
    d = pdecl.child_by_field_name("declarator")
    dims = []
    while d is not None and d.type == "array_declarator":
        dims.insert(0, d.child_by_field_name("size"))
        d = d.child_by_field_name("declarator")
    if d is None or d.type != "parenthesized_declarator" or not dims:
        return None
    inner = [c for c in d.named_children if c.type != "comment"]
    if len(inner) != 1 or inner[0].type != "pointer_declarator":
        return None
    ident = inner[0].child_by_field_name("declarator")
    if ident is None or ident.type != "identifier":
        return None
    return unit.text(ident), dims


def _address_width(unit, fn, pname, elem_size) -> "tuple[int, str]":
    """(bytes touched through pointer parameter ``pname`` of ``fn``, why not: '' if known)."""
    width = elem_size
    for n in unit.walk(fn.body):
        if n.type != "identifier" or unit.text(n) != pname:
            continue
        node, p = _up(n)
        vt = _cast_type(unit, node, p)
        if vt is not None:
            s = type_size(unit, vt)
            if s is None:
                return 0, f"{pname} is cast to {vt}* in {fn.name}, of unknown size"
            width = max(width, s)
            continue
        if p is not None and p.type == "pointer_expression" and \
                unit.text(p.child_by_field_name("operator")) == "*":
            continue
        if p is not None and p.type == "argument_list":
            name = _call_name(unit, p.parent)
            if name in _CVTA or _ATOMIC.match(name):
                continue  # an address for inline asm / an atomic on the one element
        line = unit.line_col(n.start_byte)[0]
        return 0, (f"{fn.name} uses its pointer {pname} as `{norm(unit.text(p or n))[:50]}` "
                   f"(line {line}): cannot tell which elements it touches")
    return width, ""


def array_uses(unit, scope_fn, name: str, ndims: int, elem: str, dims: tuple,
               decl_node=None, _seen=None) -> Uses:
    """Every use of array ``name`` in ``scope_fn`` and in the device functions it is passed
    to. ``dims`` are the declaration's dimension nodes (``ndims`` of them, outermost first;
    ``ndims`` subscripts reach an element)."""
    out = Uses()
    seen = _seen if _seen is not None else set()
    key = (scope_fn.node.id, name)
    if key in seen:
        return out
    seen.add(key)
    esize = type_size(unit, elem) or 0
    root = scope_fn.node
    for n in unit.walk(root):
        if n.type != "identifier" or unit.text(n) != name:
            continue
        if decl_node is not None and decl_node.start_byte <= n.start_byte < decl_node.end_byte:
            continue
        if n.parent is not None and n.parent.type in ("parenthesized_declarator",
                                                      "pointer_declarator", "array_declarator"):
            continue  # the parameter's own declarator
        b = resolve_name(unit, n, name)
        if b.kind not in ("local", "param", "global", "unknown"):
            continue
        line = unit.line_col(n.start_byte)[0]
        top, count, idx = n, 0, []
        while True:
            p = top.parent
            if p is not None and p.type == "subscript_expression" and \
                    p.child_by_field_name("argument").id == top.id:
                i = _index_node(p)
                if i is None:
                    break
                idx.append(i)
                top, count = p, count + 1
            else:
                break
        if count == ndims:
            node, p = _up(top)
            if p is not None and p.type == "pointer_expression" and \
                    unit.text(p.child_by_field_name("operator")) == "&":
                addr, q = _up(p)
                vt = _cast_type(unit, addr, q)
                if vt is not None:
                    s = type_size(unit, vt)
                    if s is None or not esize or s % esize:
                        out.uses.append(Use("escape", p, why=(
                            f"&{name}[...] is cast to {vt}* (line {line}), not a whole number "
                            f"of {elem} elements")))
                    else:
                        out.uses.append(Use("vector" if s > esize else "elem", top, tuple(idx),
                                            s // esize, s))
                    continue
                if q is not None and q.type == "argument_list":
                    call = q.parent
                    cname = _call_name(unit, call)
                    if _ATOMIC.match(cname):
                        out.uses.append(Use("elem", top, tuple(idx)))
                        continue
                    callee = _callee(unit, call)
                    if callee is not None:
                        pos = [a.id for a in _args(call)].index(addr.id)
                        pd = _param_of(callee, pos)
                        pn = _param_ident_text(unit, pd)
                        if pn is not None:
                            w, why = _address_width(unit, callee, pn, esize)
                            if not why and esize and w % esize == 0:
                                out.uses.append(Use("vector" if w > esize else "elem", top,
                                                    tuple(idx), w // esize, w))
                                continue
                            out.uses.append(Use("escape", p, why=why or "odd width"))
                            continue
                out.uses.append(Use("escape", p, why=(
                    f"the address &{norm(unit.text(top))[:40]} (line {line}) is used as a "
                    "pointer the analysis cannot follow")))
                continue
            if p is not None and p.type == "sizeof_expression":
                out.uses.append(Use("elem", top, tuple(idx)))
                continue
            out.uses.append(Use("elem", top, tuple(idx)))
            continue
        if count == 0:
            node, p = _up(n)
            if p is not None and p.type == "argument_list":
                call = p.parent
                callee = _callee(unit, call)
                if callee is not None:
                    pos = [a.id for a in _args(call)].index(node.id)
                    pd = _param_of(callee, pos)
                    got = _param_array_dims(unit, pd) if pd is not None else None
                    if got is not None and len(got[1]) == ndims - 1:
                        pname, pdims = got
                        same = all(_const(unit, a) is not None and
                                   _const(unit, a) == _const(unit, dt)
                                   for a, dt in zip(pdims, dims[1:]))
                        if same:
                            out.type_sites.append(pdims[-1])
                            sub = array_uses(unit, callee, pname, ndims, elem, dims,
                                             None, seen)
                            out.uses += sub.uses
                            out.type_sites += sub.type_sites
                            continue
                    out.uses.append(Use("escape", n, why=(
                        f"{name} is passed to {callee.name} (line {line}) as a parameter that "
                        "is not a pointer to rows of the same shape")))
                    continue
        what = "a pointer" if count == 0 else f"a partial subscript `{norm(unit.text(top))[:40]}`"
        out.uses.append(Use("escape", top, why=(
            f"{name} is used as {what} (line {line}): only {ndims}-D element accesses keep "
            "their meaning when the row length changes")))
    return out


def _param_ident_text(unit, pd) -> "str | None":
    if pd is None:
        return None
    d = pd.child_by_field_name("declarator")
    if d is None or d.type != "pointer_declarator":
        return None
    ident = d.child_by_field_name("declarator")
    return unit.text(ident) if ident is not None and ident.type == "identifier" else None


# ============================================================== the padded array
@dataclass
class Arr:
    name: str
    elem: str
    esize: "int | None"
    dims: list  # size nodes, outermost first
    declarator: "Node"
    decl: "Node"

    @property
    def last(self):
        return self.dims[-1]


def _arrays(unit, decl) -> list:
    out = []
    tnode = decl.child_by_field_name("type")
    elem = norm(unit.text(tnode)) if tnode is not None else ""
    for d in decl.children_by_field_name("declarator"):
        node, dims = d, []
        while node is not None and node.type == "array_declarator":
            dims.insert(0, node.child_by_field_name("size"))
            node = node.child_by_field_name("declarator")
        if node is None or node.type != "identifier" or len(dims) < 2 or None in dims:
            continue
        out.append(Arr(unit.text(node), elem, type_size(unit, elem), dims, d, decl))
    return out


def _is_extern(unit, decl) -> bool:
    return any(c.type == "storage_class_specifier" and unit.text(c) == "extern"
               for c in decl.children)


def _uses_of(site, arr: Arr) -> Uses:
    cache = site.unit._cache.setdefault("pad_smem_uses", {})
    key = (arr.decl.id, arr.name)
    if key not in cache:
        cache[key] = array_uses(site.unit, site.function, arr.name, len(arr.dims), arr.elem,
                                tuple(arr.dims), arr.decl)
    return cache[key]


def _fast_column(unit, arr: Arr, use: Use) -> "int | None":
    """The coefficient of threadIdx.x in a non-last subscript when the last one does not
    move with threadIdx.x (a column-wise access), else None."""
    coeffs = []
    for i in use.indices:
        a = affine_of(unit, i)
        if a is None:
            return None
        c = a.coeff("threadIdx.x")
        if c is None or not c.is_const:
            return None
        coeffs.append(c.value())
    if coeffs[-1] != 0:
        return None
    for c in coeffs[:-1]:
        if c != 0:
            return c
    return None


def warp_degree(unit, arr: Arr, use: Use, block, row_len: int) -> "int | None":
    """The bank-conflict degree of one 4-byte element access by the first warp of the
    block (loop counters at their first value), with rows of ``row_len`` elements; None
    when some index is not known for every lane."""
    if arr.esize != 4 or use.kind != "elem":
        return None
    bx, by, bz = block if block is not None else (32, 1, 1)
    sizes = [_const(unit, d) for d in arr.dims[:-1]] + [row_len]
    if None in sizes:
        return None
    banks: dict = {}
    for lane in range(min(32, bx * by * bz)):
        tx, ty, tz = lane % bx, (lane // bx) % by, lane // (bx * by)
        env = {"@start": True}
        for c, v, b in zip("xyz", (tx, ty, tz), (bx, by, bz)):
            env[f"threadIdx.{c}"] = (v, v)
            env[f"blockDim.{c}"] = (b, b)
        off = 0
        for i, n in zip(use.indices, sizes):
            r = value_range(unit, i, env)
            if r is None or r[0] != r[1]:
                # not known per lane: taken as the same for the whole warp when it does not
                # depend on threadIdx (an estimate of profit, not a correctness fact)
                if thread_dependent(unit, i) - {"?"}:
                    return None
                r = (0, 0)
            off = off * n + r[0]
        banks.setdefault(off % BANKS, set()).add(off)
    return max(len(v) for v in banks.values()) if banks else None


def _row_words(arr: Arr, length: int) -> int:
    return length * (arr.esize or 4) // 4


# ================================================================ pad-smem
def _site_arrays(site) -> list:
    return _arrays(site.unit, site.node)


def _candidates(site) -> "tuple[list, str]":
    """The arrays of the declaration that a warp reads or writes down a column."""
    unit = site.unit
    arrs = _site_arrays(site)
    if not arrs:
        return [], "the declaration has no array of two or more dimensions"
    out, whys = [], []
    for arr in arrs:
        c = _const(unit, arr.last)
        if c is None:
            whys.append(f"{arr.name}: the row length `{norm(unit.text(arr.last))}` is not a "
                        "constant")
            continue
        uses = [u for u in _uses_of(site, arr).uses if u.kind != "escape"]
        cols = [u for u in uses if _fast_column(unit, arr, u) is not None]
        words = _row_words(arr, c)
        if cols and words % BANKS == 0:
            line = unit.line_col(cols[0].node.start_byte)[0]
            out.append((arr, cols[0], c, f"`{norm(unit.text(cols[0].node))}` (line {line}) "
                        f"walks a column of {arr.name}: rows of {words} words put a warp's "
                        "accesses in one bank"))
            continue
        # no plain column walk over rows of 32k words: simulate the block's first warp
        block, _ = block_dims(unit, site.function)
        pad = site.pass_.pad if isinstance(site.pass_, PadSmem) else 1
        for u in uses:
            d0 = warp_degree(unit, arr, u, block, c)
            d1 = warp_degree(unit, arr, u, block, c + pad)
            if d0 is not None and d1 is not None and d1 < d0:
                out.append((arr, u, c, f"the first warp's access `{norm(unit.text(u.node))}` "
                            f"(line {unit.line_col(u.node.start_byte)[0]}) is a {d0}-way bank "
                            f"conflict with rows of {c}, {d1}-way with rows of {c + pad}"))
                break
        else:
            if cols:
                whys.append(f"no column-wise access of {arr.name} hits one bank: its rows are "
                            f"{words} words long, not a multiple of {BANKS}, and the first "
                            "warp's accesses conflict no less with padded rows")
            else:
                whys.append(f"no column-wise access of {arr.name}: no subscript but the last "
                            "moves with threadIdx.x, and the first warp's accesses conflict no "
                            "less with padded rows")
    return out, "; ".join(whys)


def _column_access(site, ctx) -> Verdict:
    got, why = _candidates(site)
    if not got:
        return Verdict.no(why)
    return Verdict.yes("; ".join(g[3] for g in got))


def _storage_check(site, arrs, new_len) -> Verdict:
    """Only element and vector accesses; vectors aligned in the old and the new layout."""
    unit = site.unit
    if _is_extern(unit, site.node):
        return Verdict.no("an extern (dynamic) shared array: its layout is set at launch")
    notes = []
    for arr in arrs:
        uses = _uses_of(site, arr)
        if uses.escapes:
            return Verdict.no(uses.escapes[0].why)
        old = _const(unit, arr.last)
        new = new_len(arr)
        for u in uses.uses:
            if u.kind != "vector":
                continue
            for length in (old, new):
                if (length * (arr.esize or 0)) % u.vec_bytes:
                    line = unit.line_col(u.node.start_byte)[0]
                    return Verdict.no(
                        f"the {u.vec_bytes}-byte vector access at `{norm(unit.text(u.node))}` "
                        f"(line {line}) needs rows of a multiple of {u.vec_bytes} bytes; a row "
                        f"of {length} {arr.elem} is {length * (arr.esize or 0)} bytes: padding "
                        "would misalign it")
            notes.append(f"{u.vec_bytes}-byte vectors stay aligned")
        if uses.type_sites:
            notes.append(f"{arr.name} is passed whole to a device function whose parameter "
                         "type is rewritten with it")
    n = sum(len(_uses_of(site, a).uses) for a in arrs)
    return Verdict.yes(f"{n} element access(es) through {len(arrs[0].dims)}-D subscripts"
                       + (f"; {'; '.join(sorted(set(notes)))}" if notes else ""))


def _subscript_only(site, ctx) -> Verdict:
    got, why = _candidates(site)
    if not got:
        return Verdict.unknown(why)
    p = site.pass_.pad
    return _storage_check(site, [a for a, *_ in got],
                          lambda arr: _const(site.unit, arr.last) + p)


def _element_size(arrs) -> Verdict:
    for arr in arrs:
        if arr.esize not in (4, 8):
            return Verdict.no(f"{arr.name} holds {arr.elem} ({arr.esize or 'unknown'} bytes): "
                              "padding is counted in 4-byte words (4- or 8-byte elements); "
                              "narrower elements share a bank word")
    sizes = ", ".join(f"{a.name}: {a.elem} ({a.esize} bytes)" for a in arrs)
    return Verdict.yes(sizes)


def _element_type(site, ctx) -> Verdict:
    arrs = [a for a, *_ in _candidates(site)[0]] or _site_arrays(site)
    if not arrs:
        return Verdict.unknown("no array")
    return _element_size(arrs)


def _smem_budget(site, ctx) -> Verdict:
    unit = site.unit
    got, why = _candidates(site)
    if not got:
        return Verdict.unknown(why)
    fp = shared_footprint(unit, site.function, consts=ctx.sizes)
    if fp.static_bytes is None:
        return Verdict.unknown(f"static shared memory of {site.function.name} is not known: "
                               f"{fp.reason}")
    extra = 0
    for arr, *_ in got:
        rows = 1
        for d in arr.dims[:-1]:
            rows *= _const(unit, d)
        extra += rows * site.pass_.pad * (arr.esize or 4)
    total = fp.static_bytes + extra
    if total > STATIC_SMEM:
        return Verdict.no(f"{fp.static_bytes} + {extra} bytes of padding = {total} bytes of static "
                          f"shared memory, over the {STATIC_SMEM} bytes a block may declare")
    return Verdict.yes(f"{fp.static_bytes} + {extra} bytes of padding = {total} <= {STATIC_SMEM}")


def _pad_spelling(site, ctx) -> Verdict:
    p = site.pass_
    if p.pad_name == "none":
        return Verdict.yes(f"the padding is written as the literal {p.pad}")
    v = int_env(site.unit).get(p.pad_name)
    if v is None:
        return Verdict.no(f"pad_name={p.pad_name} is not a macro or constant of the file")
    if v != p.pad:
        return Verdict.no(f"pad_name={p.pad_name} is {v}, not pad={p.pad}")
    return Verdict.yes(f"{p.pad_name} = {v}")


def _plus(unit, dim, pad_text: str) -> str:
    d = strip_parens(dim)
    text = unit.text(dim)
    if d.type == "binary_expression" and unit.text(d.child_by_field_name("operator")) not in \
            ("+", "-", "*", "/", "%"):
        text = f"({text})"
    elif d.type in ("conditional_expression",):
        text = f"({text})"
    return f"{text} + {pad_text}"


SHARED_DECL = Rule(kind="declaration", regex=r"\b__shared__\b[^;]*\[[^;]*\]\s*\[", inside_kernel=True)


@dataclass(frozen=True)
class PadSmem(Pass):
    """Pad the rows of a 2-D shared tile so that a column is spread over all banks.

    Before::

        // kltrans: launch transpose grid=(ceil_div(cols, 32), ceil_div(rows, 32)) block=(32, 8)
        __shared__ float tile[32][32];
        ...
        tile[ty + j][tx] = in[(size_t)(r0 + ty + j) * cols + c0 + tx];
        __syncthreads();
        out[(size_t)(c0 + ty + j) * rows + r0 + tx] = tile[tx][ty + j];   // a column

    After ``pad-smem{pad=1}``::

        __shared__ float tile[32][32 + 1];

    A warp that reads ``tile[tx][c]`` (the fast-varying thread index in a subscript that is
    not the last) touches words ``tx * 32 + c``: with rows a multiple of 32 words all 32
    land in one bank, a 32-way conflict. Rows of ``C + P`` words put the column in 32
    different banks for odd P (``pad=1``); ``pad`` 2 and 4 keep rows 8- or 16-byte aligned
    for vector accesses along a row (they leave a 2- or 4-way conflict on a column).
    Only the last dimension changes; every index stays as written. A device function that
    the whole tile is passed to (``float (*t)[32]``) gets the same parameter type.

    Elements are 4 or 8 bytes; ``pad`` counts elements (for 8-byte elements a pad of 1 is
    two words). Everything is static: no run-time fact is needed.

    Preconditions: column-access (layout: some access has threadIdx.x in a subscript
    other than the last and none in the last, and the row length is a constant multiple
    of 32 words — otherwise "no column-wise access" to fix), subscript-only (storage: the
    array is used only through full subscripts, element addresses given to atomics or to
    device functions that touch one element or a vector, and whole-array arguments of
    pointer-to-row parameters; no pointer arithmetic, casts of the array, ``sizeof`` of it
    or partial subscripts; every vector access along a row stays aligned with the padded
    row length), element-type (dtype: 4- or 8-byte elements), smem-budget (hardware: the
    static shared memory with the padding fits the 48 KiB a block may declare),
    pad-spelling (layout: ``pad_name`` names a constant equal to ``pad``).

    Options: ``pad`` (1, 2 or 4 elements; default 1), ``pad_name`` (``none``: write the
    number; or the name of a macro/constant equal to ``pad`` to write instead).
    """

    name = "pad-smem"
    kind = "optimize"
    inverse = "unpad-smem"
    anchor = SHARED_DECL
    preconditions = (
        Precondition("column-access", "layout",
                     "a warp walks a column of the tile whose rows are a multiple of 32 words",
                     _column_access),
        Precondition("subscript-only", "storage",
                     "the tile is used only through full subscripts (no casts, flat pointers "
                     "or misaligned vector accesses)", _subscript_only),
        Precondition("element-type", "dtype", "the elements are 4 or 8 bytes", _element_type),
        Precondition("smem-budget", "hardware",
                     "the padded static shared memory fits 48 KiB", _smem_budget),
        Precondition("pad-spelling", "layout",
                     "pad_name, when given, names a constant equal to pad", _pad_spelling),
    )

    pad: int = option(1, Choice(*PADS), "elements added to each row", tune=True)
    pad_name: str = option("none", Identifier(("none",)),
                           "write the padding as this macro/constant (none: the number)")

    def rewrite(self, site, ctx):
        unit = site.unit
        text = str(self.pad) if self.pad_name == "none" else self.pad_name
        edits, done = [], set()
        for arr, *_ in _candidates(site)[0]:
            for dim in [arr.last] + _uses_of(site, arr).type_sites:
                if dim.id in done:
                    continue
                done.add(dim.id)
                edits.append(Edit(dim.start_byte, dim.end_byte, _plus(unit, dim, text)))
        return edits

    def inverse_for(self, site, ctx):
        return UnpadSmem()


# ================================================================ unpad-smem
def _padded(site) -> "tuple[list, str]":
    """[(array, C node, P node, P value)] of the declaration's padded arrays, or why none."""
    unit = site.unit
    out, whys = [], []
    for arr in _site_arrays(site):
        d = strip_parens(arr.last)
        if d.type != "binary_expression" or unit.text(d.child_by_field_name("operator")) != "+":
            whys.append(f"{arr.name}: the last dimension `{norm(unit.text(arr.last))}` is not "
                        "written C + P")
            continue
        cn, pn = d.child_by_field_name("left"), d.child_by_field_name("right")
        pv, cv = _const(unit, pn), _const(unit, cn)
        if pv not in PADS:
            whys.append(f"{arr.name}: the last dimension `{norm(unit.text(arr.last))}` adds "
                        f"{pv if pv is not None else norm(unit.text(pn))}, not a padding of "
                        f"{', '.join(map(str, PADS))} elements")
            continue
        if cv is None:
            whys.append(f"{arr.name}: `{norm(unit.text(cn))}` is not a constant")
            continue
        out.append((arr, cn, pn, pv))
    return out, "; ".join(whys) or "no padded array"


def _padded_form(site, ctx) -> Verdict:
    got, why = _padded(site)
    if not got:
        return Verdict.no(why)
    unit = site.unit
    return Verdict.yes("; ".join(f"{a.name}: rows of {_const(unit, c)} + {p}" for a, c, _, p in got))


def _pad_unused(site, ctx) -> Verdict:
    got, why = _padded(site)
    if not got:
        return Verdict.unknown(why)
    unit = site.unit
    block, bwhy = block_dims(unit, site.function, ctx)
    env = thread_env(block) if block is not None else {}
    n = 0
    for arr, cn, _, _ in got:
        c = _const(unit, cn)
        for u in _uses_of(site, arr).uses:
            if u.kind == "escape" or not u.indices:
                continue
            line = unit.line_col(u.node.start_byte)[0]
            r = value_range(unit, u.indices[-1], env)
            if r is None:
                return Verdict.unknown(
                    f"cannot bound the last subscript of `{norm(unit.text(u.node))}` (line "
                    f"{line}) below {c}" + (f"; {bwhy}" if bwhy else "")
                    + ": an access to the padding would alias the next row")
            if r[0] < 0 or r[1] + u.width > c:
                return Verdict.no(
                    f"`{norm(unit.text(u.node))}` (line {line}) reaches column "
                    f"{r[1] + u.width - 1} of rows of {c}: the kernel uses the padding, which "
                    "without it is the next row")
            n += 1
    return Verdict.yes(f"the last subscript of all {n} access(es) stays below the unpadded "
                       "row length: the padding is never read or written")


def _unpad_storage(site, ctx) -> Verdict:
    got, why = _padded(site)
    if not got:
        return Verdict.unknown(why)
    cs = {id(a): _const(site.unit, c) for a, c, _, _ in got}
    return _storage_check(site, [a for a, _, _, _ in got], lambda arr: cs[id(arr)])


def _unpad_type(site, ctx) -> Verdict:
    got, why = _padded(site)
    if not got:
        return Verdict.unknown(why)
    return _element_size([a for a, _, _, _ in got])


def _block_known(site, ctx) -> Verdict:
    block, why = block_dims(site.unit, site.function, ctx)
    if block is None:
        return Verdict.unknown(why)
    return Verdict.yes(f"block {block[0]} x {block[1]} x {block[2]} from the launch contract "
                       "bounds the thread indices")


@dataclass(frozen=True)
class UnpadSmem(Pass):
    """Remove the row padding of a shared tile: ``T t[R][C + P]`` becomes ``T t[R][C]``.

    Before::

        // kltrans: launch transpose grid=(ceil_div(cols, 64), ceil_div(rows, 64)) block=(32, 8)
        __shared__ float tile[TR_TILE][TR_TILE + 1];

    After ``unpad-smem``::

        __shared__ float tile[TR_TILE][TR_TILE];

    Padding only changes where rows start, so it can go when no access reaches the pad
    columns (with them gone, column ``C`` of a row is the next row's column 0). That is
    shown, not assumed: the last subscript of every access (plus the width of a vector
    access) is bounded below ``C`` by interval analysis — thread indices from the launch
    contract's block, counters of counted loops, locals with one definition, ``>>``,
    ``&``, ``|``, ``%``, ``min``/``max``. A pointer-to-row parameter of a device function
    the tile is passed to (``float (*As)[BK][BM + PAD]``) is unpadded with it.

    Preconditions: padded-form (layout: the last dimension is ``C + P`` with P 1, 2 or 4
    and C a constant), pad-unused (layout: every last subscript stays below C),
    subscript-only (storage: as for ``pad-smem``; vector accesses along a row stay aligned
    with rows of C elements), element-type (dtype: 4- or 8-byte elements), block-known
    (hardware: the launch contract gives a constant block, which bounds threadIdx).

    Options: none.
    """

    name = "unpad-smem"
    kind = "simplify"
    inverse = "pad-smem"
    anchor = SHARED_DECL
    preconditions = (
        Precondition("padded-form", "layout",
                     "the last dimension is written C + P with P in 1, 2, 4", _padded_form),
        Precondition("block-known", "hardware",
                     "the launch contract gives a constant block (bounds threadIdx)",
                     _block_known),
        Precondition("element-type", "dtype", "the elements are 4 or 8 bytes", _unpad_type),
        Precondition("subscript-only", "storage",
                     "the tile is used only through full subscripts; vectors stay aligned",
                     _unpad_storage),
        Precondition("pad-unused", "layout",
                     "no access reaches the padding (last subscript < C, proven by ranges)",
                     _pad_unused),
    )

    def rewrite(self, site, ctx):
        unit = site.unit
        edits, done = [], set()
        for arr, cn, pn, pv in _padded(site)[0]:
            ctext = unit.text(cn)
            edits.append(Edit(arr.last.start_byte, arr.last.end_byte, ctext))
            done.add(arr.last.id)
            for dim in _uses_of(site, arr).type_sites:
                if dim.id in done:
                    continue
                done.add(dim.id)
                d = strip_parens(dim)
                if d.type == "binary_expression" and \
                        unit.text(d.child_by_field_name("operator")) == "+" and \
                        _const(unit, d.child_by_field_name("right")) == pv:
                    edits.append(Edit(dim.start_byte, dim.end_byte,
                                      unit.text(d.child_by_field_name("left"))))
                else:
                    edits.append(Edit(dim.start_byte, dim.end_byte, str(_const(unit, cn))))
        return edits

    def inverse_for(self, site, ctx):
        got, _ = _padded(site)
        if not got:
            return PadSmem()
        _, _, pn, pv = got[0]
        name = self_name = site.unit.text(pn).strip()
        if not re.fullmatch(r"[A-Za-z_]\w*", self_name):
            name = "none"
        return PadSmem(pad=pv, pad_name=name)
