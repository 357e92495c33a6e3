"""Facts about pointers, lengths and declarations that vector-access passes share.

Read from the syntax tree and the text of expressions: the parameter a pointer derives
from (:func:`root`), the lengths a run-time flag proves divisible by a width
(:func:`divisible_lens`), the pointers it tests for alignment (:func:`aligned_roots`),
whether an expression is a multiple of ``k`` (:func:`multiple`), and the small
declaration and statement helpers they use (:func:`declaration`, :func:`assigned`,
:func:`int_constant`, :func:`strip`, :func:`single`, :func:`expr_of`). Purity is
:func:`kltrans.match.predicates.pure`, the one notion every pass uses.

These were the helpers of ``passes/vectorize_lanes.py`` that six catalogue modules
imported; the engine holds them so that passes do not import each other. So are the
stream loop's facts that ``passes/vectorize_stream.py`` shared with
``passes/vectorize_bf16.py``: a subscript's index (:func:`subscript_index`), a name
resolved through const locals (:func:`resolve_const`) and the flattened spellings of the
global index and of the grid's thread count (:data:`GLOBAL_ID_TEXTS`,
:data:`GRID_STRIDE_TEXTS`).
"""

from __future__ import annotations

import re

from kltrans.passes.rewrite import indent_of as line_indent, norm, statements

#: element type -> (vector type prefix, size in bytes)
ELEMS = {"float": ("float", 4), "int": ("int", 4), "unsigned int": ("uint", 4),
         "unsigned": ("uint", 4), "double": ("double", 8)}

POINTER_INT_CASTS = ("uintptr_t", "size_t", "unsigned long long", "unsigned long", "uint64_t",
          "std::uintptr_t", "intptr_t")


def strip(node):
    """``node`` without enclosing parentheses, casts and condition clauses."""
    while node is not None and node.type in ("parenthesized_expression", "cast_expression",
                                             "condition_clause"):
        if node.type == "cast_expression":
            node = node.child_by_field_name("value")
            continue
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            break
        node = inner[0]
    return node


def flat(text: str) -> str:
    """``text`` without comments and blanks (for the text patterns below)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"\s+", "", text)


def idents(unit, node, name=None):
    """The identifiers under ``node`` (only those spelled ``name``, when given)."""
    return [n for n in unit.walk(node) if n.type == "identifier"
            and (name is None or unit.text(n) == name)]


def single(stmt):
    """The one statement of a block (or the statement itself), else None."""
    if stmt is None:
        return None
    if stmt.type == "compound_statement":
        body = [s for s in statements(stmt) if s.type != "comment"]
        return body[0] if len(body) == 1 else None
    return stmt


def expr_of(stmt):
    """The one expression of an expression statement, else None."""
    if stmt is None or stmt.type != "expression_statement":
        return None
    inner = [c for c in stmt.named_children if c.type != "comment"]
    return inner[0] if len(inner) == 1 else None


def declaration(unit, fn, name: str, before: int):
    """(declaration node, init value or None) of the last declaration of ``name`` in ``fn``
    (parameters included) before byte ``before``."""
    best = None
    for n in unit.walk(fn.node):
        if n.start_byte >= before:
            continue
        if n.type in ("declaration", "parameter_declaration"):
            for d in n.children_by_field_name("declarator"):
                ident = d
                while ident is not None and ident.type != "identifier":
                    ident = ident.child_by_field_name("declarator")
                if ident is not None and unit.text(ident) == name:
                    value = d.child_by_field_name("value") if d.type == "init_declarator" else None
                    best = (n, value)
    return best


def assigned(unit, fn, name: str) -> bool:
    """Some assignment or increment in ``fn`` writes the variable ``name``."""
    for n in unit.walk(fn.node):
        if n.type in ("assignment_expression", "update_expression"):
            tgt = n.child_by_field_name("left") or n.child_by_field_name("argument")
            t = strip(tgt)
            if t is not None and t.type == "identifier" and unit.text(t) == name:
                return True
    return False


def base_type(unit, decl) -> str:
    """The type of a declaration, as written (blanks normalized)."""
    ty = decl.child_by_field_name("type")
    t = norm(unit.text(ty)) if ty is not None else ""
    return t


def is_pointer(unit, decl) -> bool:
    """A declaration of a pointer."""
    return any(n.type == "pointer_declarator" for n in unit.walk(decl))


def is_array(unit, decl) -> bool:
    """A declaration of an array."""
    return any(n.type == "array_declarator" for n in unit.walk(decl))


def int_constant(unit, node, depth: int = 0) -> int | None:
    """An integer literal, or an object-like macro defined as one (#define VEC 4)."""
    node = strip(node)
    if node is None:
        return None
    if node.type == "identifier" and depth < 3:
        src = unit.source[:node.start_byte].decode("utf-8", "replace")
        found = re.findall(rf"^[ \t]*#[ \t]*define[ \t]+{re.escape(unit.text(node))}[ \t]+"
                           rf"\(?(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\)?[ \t]*(?://.*)?$", src, re.M)
        return int(found[-1], 0) if found else None
    if node.type != "number_literal":
        return None
    m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", unit.text(node))
    return int(m.group(1), 0) if m else None


def divisible_lens(unit, value, width: int) -> set:
    """LEN texts the flag's initializer proves divisible by ``width``."""
    text = flat(unit.text(value))
    out = set()
    for m in re.finditer(r"\(?([A-Za-z_][\w.]*)\)?&(0[xX][0-9a-fA-F]+|\d+)[uU]?\)?==0", text):
        if (int(m.group(2), 0) + 1) % width == 0:
            out.add(m.group(1))
    for m in re.finditer(r"\(?([A-Za-z_][\w.]*)\)?%(\d+)\)?==0", text):
        if int(m.group(2)) % width == 0:
            out.add(m.group(1))
    return out


def aligned_roots(unit, value, nbytes: int) -> set:
    """Pointer names the flag's initializer tests for ``nbytes`` alignment."""
    text = flat(unit.text(value))
    masks = [int(m, 0) + 1 for m in re.findall(r"&(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\)?==0", text)]
    masks += [int(m) for m in re.findall(r"%(\d+)[uUlL]*\)?==0", text)]
    if not any(m % nbytes == 0 for m in masks):
        return set()
    names = set()
    for c in POINTER_INT_CASTS:
        cs = re.escape(c.replace(" ", ""))
        names |= set(re.findall(rf"\({cs}\)\(?([A-Za-z_]\w*)\)?", text))
        names |= set(re.findall(rf"reinterpret_cast<{cs}>\(([A-Za-z_]\w*)\)", text))
    return names


def root(unit, fn, ptr: str, before: int, depth: int = 0):
    """(parameter, offset node or None) that ``ptr`` is derived from."""
    got = declaration(unit, fn, ptr, before)
    if got is None or depth > 4:
        return None
    decl, value = got
    if decl.type == "parameter_declaration":
        return ptr, None
    if value is None or assigned(unit, fn, ptr):
        return None
    v = strip(value)
    if v.type == "identifier":
        return root(unit, fn, unit.text(v), decl.start_byte, depth + 1)
    if v.type == "binary_expression" and unit.text(v.child_by_field_name("operator")) == "+":
        a, b = strip(v.child_by_field_name("left")), v.child_by_field_name("right")
        if a is not None and a.type == "identifier":
            r = root(unit, fn, unit.text(a), decl.start_byte, depth + 1)
            if r is not None and r[1] is None:
                return r[0], b
    return None


def multiple(unit, fn, node, k: int, lens: set, before: int, depth: int = 0) -> bool:
    """``node`` is a multiple of ``k`` (or of a LEN in ``lens``, each divisible by k)."""
    n = strip(node)
    if n is None or depth > 4:
        return False
    lit = int_constant(unit, n)
    if lit is not None:
        return lit % k == 0
    if n.type == "identifier":
        name = unit.text(n)
        if name in lens:
            return True
        got = declaration(unit, fn, name, before)
        if got is None or got[1] is None or assigned(unit, fn, name):
            return False
        return multiple(unit, fn, got[1], k, lens, got[0].start_byte, depth + 1)
    if n.type == "conditional_expression":
        return all(multiple(unit, fn, n.child_by_field_name(f), k, lens, before, depth + 1)
                   for f in ("consequence", "alternative"))
    if n.type == "binary_expression":
        op = unit.text(n.child_by_field_name("operator"))
        a, b = n.child_by_field_name("left"), n.child_by_field_name("right")
        if op == "*":
            return multiple(unit, fn, a, k, lens, before, depth + 1) or \
                multiple(unit, fn, b, k, lens, before, depth + 1)
        if op in ("+", "-"):
            return multiple(unit, fn, a, k, lens, before, depth + 1) and \
                multiple(unit, fn, b, k, lens, before, depth + 1)
        if op == "<<":
            s = int_constant(unit, b)
            return s is not None and (1 << s) % k == 0
    if norm(unit.text(n)) in lens:
        return True
    return False


def block_indent_step(unit, node) -> str:
    """One indentation step of the block ``node`` is in (its line's indent minus its
    parent's), four blanks when that cannot be read."""
    outer = line_indent(unit, node.start_byte)
    # the step of the enclosing block: this line's indent minus its parent's
    p = node.parent
    while p is not None and p.type != "compound_statement":
        p = p.parent
    if p is not None and p.parent is not None:
        par = line_indent(unit, p.parent.start_byte)
        if outer.startswith(par) and len(outer) > len(par):
            return outer[len(par):]
    return "    "


def subscript_index(node):
    """The index of a subscript expression (``a[i]``, ``a[{i}]``), stripped."""
    idx = node.child_by_field_name("index")
    if idx is None:
        idx = next((c for c in node.named_children if c.type == "subscript_argument_list"), None)
        if idx is not None:
            idx = idx.named_children[0]
    return strip(idx)


def resolve_const(unit, fn, text: str, before: int, depth: int = 0) -> str:
    """``text`` (flattened) with a const local's initializer substituted for its name."""
    flat_text = flat(text)
    if depth > 3 or not re.fullmatch(r"[A-Za-z_]\w*", flat_text):
        return flat_text
    got = declaration(unit, fn, flat_text, before)
    if got is None or got[1] is None or got[0].type != "declaration" or \
            assigned(unit, fn, flat_text):
        return flat_text
    return resolve_const(unit, fn, unit.text(got[1]), got[0].start_byte, depth + 1)


#: the global thread index and the grid's thread count, as :func:`flat` writes them
GLOBAL_ID_TEXTS = {"blockIdx.x*blockDim.x+threadIdx.x", "blockDim.x*blockIdx.x+threadIdx.x",
                   "threadIdx.x+blockIdx.x*blockDim.x", "threadIdx.x+blockDim.x*blockIdx.x"}
GRID_STRIDE_TEXTS = {"blockDim.x*gridDim.x", "gridDim.x*blockDim.x"}
