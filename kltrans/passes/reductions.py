"""Reductions and the values they fold, as reduction passes read and write them.

- the text of a reduced operand: :func:`wrap` (parenthesized unless primary) and its
  inverse :func:`unwrap` (of a node; ``rewrite.unwrap`` strips a text's outer parentheses),
  :func:`squash` (a statement's text without blanks, comments and pragmas, for comparing
  forms); :func:`value_class` — the class (``int``, ``unsigned``, ``ull``, ``ll``,
  ``float``, ``double``, ``template``) of a reduced value's type (these were
  ``passes/block_reduce_atomic.py``'s);
- the bins of a privatized histogram (``passes/privatize_atomics.py``'s): :func:`bound_of`
  (an exclusive upper bound of a non-negative integer index, from its type, a mask, a
  shift or a modulus), the :func:`type_of` an index with its small helpers
  (:func:`strip_clause`, :func:`param_named`, :func:`local_decl`, :func:`local_assigned`,
  the type sets :data:`NARROW_WIDTH`, :data:`UNSIGNED32`, :data:`UNSIGNED`), the zero of
  each integer class (:data:`ZERO`) and the names a bin count may have
  (:func:`bins_name_candidates`);
- a scalar reduction of a row (``passes/row_per_warp.py``'s): :func:`reduction_of` reads
  ``var op= E``, ``var = var op E`` or ``var = f(var, E)`` into a :class:`Reduction`; the
  operators :data:`COMPOUND_OPS`, :data:`BINARY_OPS`, :data:`FOLD_FUNCS`, those that may
  fold a value twice (:data:`IDEMPOTENT_OPS`) and the identities :data:`OP_IDENTITY`;

They were defined by the catalogue modules named in each section and imported from there
by others; the engine holds them so that passes do not import each other.

Layering: the pass engine (imports :mod:`kltrans.analysis` and :mod:`kltrans.passes.rewrite`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.affine import strip_parens
from kltrans.analysis.verdict import Verdict
from kltrans.passes.expr_facts import mentions
from kltrans.passes.rewrite import norm
from kltrans.passes.token_forms import line_of, snippet


# ============================================ operands and value classes (block_reduce_atomic)
#: value classes of the pointee types the pass knows
CLASSES = {
    "int": "int", "signed": "int", "signed int": "int", "int32_t": "int",
    "unsigned": "unsigned", "unsigned int": "unsigned", "uint32_t": "unsigned", "uint": "unsigned",
    "unsigned long long": "ull", "unsigned long long int": "ull",
    "long long": "ll", "long long int": "ll",
    "float": "float", "double": "double",
}


PRIMARY = {"identifier", "number_literal", "subscript_expression", "call_expression",
            "field_expression", "string_literal", "char_literal", "true", "false", "this",
            "qualified_identifier", "template_function", "null", "nullptr"}


def wrap(unit, node) -> str:
    """The text of ``node``, parenthesized unless it is a primary expression (a
    parenthesized expression gets one more pair: :func:`unwrap` removes exactly that)."""
    t = unit.text(node)
    return t if node.type in PRIMARY else f"({t})"


def unwrap(unit, node) -> str:
    """Inverse of :func:`wrap`."""
    if node.type == "parenthesized_expression":
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) == 1 and inner[0].type not in PRIMARY:
            return unit.text(inner[0])
    return unit.text(node)


def squash(text: str) -> str:
    """Whitespace, comments and pragmas removed, except one blank between two words."""
    text = re.sub(r"^[ \t]*#[ \t]*pragma[^\n]*$", "", text, flags=re.MULTILINE)
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.DOTALL)
    text = re.sub(r"(?<=\w)\s+(?=\w)", "\x00", text)
    return re.sub(r"\s+", "", text).replace("\x00", " ")


def value_class(type_text: str | None, fn) -> str | None:
    if type_text is None:
        return None
    t = norm(type_text.replace("const", "").replace("volatile", "").replace("std::", ""))
    if t in CLASSES:
        return CLASSES[t]
    if any(tp.kind == "type" and tp.name == t for tp in fn.template_params):
        return "template"
    return None


# ================================================== histogram bins (privatize_atomics)
ZERO = {"int": "0", "unsigned": "0u", "ull": "0ull", "ll": "0ll"}
NARROW_WIDTH = {"uint8_t": 8, "unsigned char": 8, "uchar": 8, "unsigned short": 16,
                "uint16_t": 16, "unsigned short int": 16, "ushort": 16, "bool": 1}
UNSIGNED32 = {"unsigned", "unsigned int", "uint32_t", "uint"}
UNSIGNED = UNSIGNED32 | set(NARROW_WIDTH) | {"unsigned long long", "unsigned long long int",
                                             "size_t", "uint64_t", "unsigned long"}


def strip_clause(node):
    """``node`` without enclosing parentheses and condition clauses."""
    while node is not None and node.type in ("parenthesized_expression", "condition_clause"):
        inner = [c for c in node.named_children if c.type != "comment"]
        if len(inner) != 1:
            break
        node = inner[0]
    return node


def param_named(site, name):
    """The parameter ``name`` of the site's function, or None."""
    return next((p for p in site.function.params if p.name == name), None)


def local_decl(unit, fn, name):
    """(type text, init node) of the one local declaration of ``name`` in ``fn``, or None."""
    found = []
    for n in unit.walk(fn.body):
        if n.type != "declaration":
            continue
        for d in n.children_by_field_name("declarator"):
            ident = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            if ident is not None and ident.type == "identifier" and unit.text(ident) == name:
                found.append((norm(unit.text(n.child_by_field_name("type"))),
                              d.child_by_field_name("value") if d.type == "init_declarator"
                              else None))
    return found[0] if len(found) == 1 else None


def local_assigned(unit, fn, name) -> bool:
    """``name`` is assigned or incremented somewhere in ``fn``'s body."""
    for n in unit.walk(fn.body):
        if n.type in ("assignment_expression", "update_expression"):
            t = n.child_by_field_name("left") or n.child_by_field_name("argument")
            if t is not None and t.type == "identifier" and unit.text(t) == name:
                return True
    return False


def type_of(site, node) -> str | None:
    """The declared type of an identifier / a pointer parameter's element, cast type."""
    unit, fn = site.unit, site.function
    node = strip_clause(node)
    if node.type == "identifier":
        p = param_named(site, unit.text(node))
        if p is not None:
            return None if p.pointer else norm(p.base_type)
        d = local_decl(unit, fn, unit.text(node))
        return d[0].replace("const ", "") if d else None
    if node.type == "subscript_expression":
        base = strip_clause(node.child_by_field_name("argument"))
        if base is not None and base.type == "identifier":
            p = param_named(site, unit.text(base))
            if p is not None and p.pointer == 1:
                return norm(p.base_type)
    if node.type == "cast_expression":
        return norm(unit.text(node.child_by_field_name("type")))
    return None


def bound_of(site, node, depth=0) -> tuple[int | None, str]:
    """(exclusive upper bound of a non-negative integer expression, why) or (None, why)."""
    unit, fn = site.unit, site.function
    node = strip_clause(node)
    t = norm(unit.text(node))
    if depth > 8 or node is None:
        return None, f"`{t}`: too deep"
    ty = type_of(site, node)
    tb = 1 << NARROW_WIDTH[ty] if ty in NARROW_WIDTH else None
    if node.type == "number_literal":
        m = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", t)
        return (int(m.group(1), 0) + 1, f"{t} is a constant") if m else (None, f"`{t}`")
    if node.type == "identifier" and param_named(site, t) is None:
        d = local_decl(unit, fn, t)
        if d is not None and d[1] is not None and not local_assigned(unit, fn, t):
            b, why = bound_of(site, d[1], depth + 1)
            if b is not None and (tb is None or b <= tb):
                return b, f"{t} = {norm(unit.text(d[1]))}: {why}"
    if tb is not None:
        return tb, f"`{t}` is a {ty} (< {tb})"
    if node.type == "cast_expression":
        inner = node.child_by_field_name("value")
        b, why = bound_of(site, inner, depth + 1)
        if b is not None:
            return b, why
    if node.type == "binary_expression":
        op = unit.text(node.child_by_field_name("operator"))
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        rv = re.fullmatch(r"\(?\s*(0[xX][0-9a-fA-F]+|\d+)[uUlL]*\s*\)?", unit.text(right).strip())
        k = int(rv.group(1), 0) if rv else None
        if op == "&" and k is not None:
            return k + 1, f"`{t}` is masked with {unit.text(right).strip()}"
        if op == "&":
            lv = re.fullmatch(r"(0[xX][0-9a-fA-F]+|\d+)[uUlL]*", unit.text(left).strip())
            if lv:
                return int(lv.group(1), 0) + 1, f"`{t}` is masked"
        lty = type_of(site, left)
        if op == ">>" and k is not None and lty in UNSIGNED32:
            return 1 << max(0, 32 - k), f"`{t}` shifts a 32-bit unsigned right by {k}"
        if op == "%" and k is not None and lty in UNSIGNED:
            return k, f"`{t}` is an unsigned value modulo {k}"
        if op == ">>" and k is not None:
            b, why = bound_of(site, left, depth + 1)
            if b is not None:
                return max(1, b >> k), why
    return None, f"nothing bounds `{t}`"


def bins_name_candidates(site):
    """Names that may be a bin count: value template parameters, ``#define`` and
    ``constexpr`` names with ``bin`` in them, in that order."""
    unit, fn = site.unit, site.function
    out = []
    for tp in fn.template_params:
        if tp.kind == "value" and tp.name and re.search(r"bin", tp.name, re.I):
            out.append(tp.name)
    src = unit.source.decode("utf-8", "replace")
    for m in re.finditer(r"^[ \t]*#[ \t]*define[ \t]+(\w*[Bb][Ii][Nn]\w*)[ \t]+\S", src, re.M):
        out.append(m.group(1))
    for m in re.finditer(r"\bconstexpr\s+(?:static\s+)?(?:unsigned\s+)?(?:int|unsigned)\s+"
                         r"(\w*[Bb][Ii][Nn]\w*)\s*=", src):
        out.append(m.group(1))
    return list(dict.fromkeys(out))


# ============================================================ row reductions (row_per_warp)
#: reduction operators: compound assignment -> operator, and two-argument functions
COMPOUND_OPS = {"+=": "+", "*=": "*", "|=": "|", "&=": "&"}


BINARY_OPS = {"+": "+", "*": "*", "|": "|", "&": "&"}


FOLD_FUNCS = {"fmaxf", "fminf", "fmax", "fmin", "max", "min"}


IDEMPOTENT_OPS = {"|", "&"} | FOLD_FUNCS


OP_IDENTITY = {"+": 0, "*": 1}


@dataclass
class Reduction:
    var: str
    op: str  # "+", "*", "|", "&" or a function name (fmaxf, max, ...)
    stmt: object  # the expression statement
    rhs: object  # E


def reduction_of(unit, expr, var: str) -> "Reduction | str":
    """The reduction ``var op= E`` (or ``var = var op E``, ``var = f(var, E)``), or why not."""
    op_node = expr.child_by_field_name("operator")
    op = unit.text(op_node) if op_node is not None else "="
    right = expr.child_by_field_name("right")
    stmt = expr.parent
    if op in COMPOUND_OPS:
        e = right
        kind = COMPOUND_OPS[op]
    elif op == "=":
        r = strip_parens(right)
        kind = e = None
        if r.type == "binary_expression":
            bop = unit.text(r.child_by_field_name("operator"))
            a, b = r.child_by_field_name("left"), r.child_by_field_name("right")
            if bop in BINARY_OPS:
                for x, y in ((a, b), (b, a)):
                    sx = strip_parens(x)
                    if sx.type == "identifier" and unit.text(sx) == var:
                        kind, e = BINARY_OPS[bop], y
                        break
        elif r.type == "call_expression":
            f = r.child_by_field_name("function")
            args = [c for c in r.child_by_field_name("arguments").named_children
                    if c.type != "comment"]
            if f is not None and unit.text(f) in FOLD_FUNCS and len(args) == 2:
                for x, y in ((args[0], args[1]), (args[1], args[0])):
                    sx = strip_parens(x)
                    if sx.type == "identifier" and unit.text(sx) == var:
                        kind, e = unit.text(f), y
                        break
        if kind is None:
            return (f"`{snippet(unit, expr)}` (line {line_of(unit, expr)}) assigns the row scalar "
                    f"{var} but is neither a map nor a reduction {var} op= E / {var} = "
                    f"fmaxf({var}, E)")
    else:
        return (f"`{snippet(unit, expr)}` (line {line_of(unit, expr)}): {op} is not an associative "
                f"reduction operator (+=, *=, |=, &=, fmaxf/fminf/max/min)")
    if mentions(unit, e, var):
        return (f"`{snippet(unit, expr)}` (line {line_of(unit, expr)}) reads {var} inside the "
                "reduced term")
    return Reduction(var, kind, stmt, e)


def fold_order(op: str, ctx, why: str) -> Verdict:
    """Whether a fold with ``op`` may run in another order: a max or min always (the same
    in any order); a sum only when the context allows reassociation (``--assume reassoc``,
    a workload compared with a tolerance); ``why`` says what reorders it."""
    if op in ("max", "min"):
        return Verdict.yes(f"a {op} comes out the same in any order")
    if ctx.assumed("reassoc"):
        return Verdict.yes("the workload's tolerance allows reassociated float folds")
    return Verdict.unknown(f"{why}: a float sum in another order needs --assume reassoc")
