"""Facts about the expressions and declarations of a kernel that row passes ask.

Read from the syntax tree: which identifiers an expression mentions (:func:`identifiers`,
:func:`mentions`), whether it is free of side effects (:func:`side_effect_free`: no
assignment, increment or call other than :data:`PURE_CALLS`), which thread and block
symbols it depends on (:func:`per_thread_sources`, among :data:`PER_THREAD_SOURCES`; for
a text through the declarations of its names, :func:`text_thread_dependent`), a numeric
literal's value (:func:`number_value`), the variables a declaration declares
(:func:`decl_items`, :func:`decl_type`), the pointer parameter an expression points into
(:func:`base_param`), and the scalar type names :data:`FLOAT_TYPES`, :data:`INT_TYPES`.

They were ``passes/row_per_warp.py``'s (and ``text_thread_dependent``
``passes/merge_row_stats.py``'s), imported by other catalogue modules; the engine holds
them so that passes do not import each other.

Layering: the pass engine (imports :mod:`kltrans.analysis`).
"""

from __future__ import annotations

import re

from kltrans.analysis.affine import BLOCK_SYMBOLS, THREAD_SYMBOLS, sources
from kltrans.analysis.affine import strip_parens as _strip
from kltrans.analysis.loops import assigned_in
from kltrans.passes.guard import GRID_SYMBOLS
from kltrans.passes.rewrite import norm
from kltrans.passes.vector_facts import declaration

#: what a value may depend on per thread (``?``: something unknown)
PER_THREAD_SOURCES = THREAD_SYMBOLS | BLOCK_SYMBOLS | GRID_SYMBOLS | {"?"}
#: side-effect-free calls a map or reduction body may make (math, conversions, loads)
PURE_CALLS = {
    "min", "max", "fminf", "fmaxf", "fmin", "fmax", "abs", "fabs", "fabsf", "sqrt", "sqrtf",
    "rsqrt", "rsqrtf", "exp", "expf", "__expf", "exp2f", "log", "logf", "__logf", "log2f",
    "tanh", "tanhf", "sinf", "cosf", "__sinf", "__cosf", "powf", "__powf", "erff", "erf",
    "fmaf", "fma", "__fdividef", "__frcp_rn", "__fmul_rn", "__fadd_rn", "__ldg", "__ldcs",
    "__ldca", "__ldcg", "__float2half", "__half2float", "__bfloat162float", "__float2bfloat16",
    "__float2bfloat16_rn", "__int2float_rn", "__float2int_rn", "floorf", "ceilf", "roundf",
    "truncf", "copysignf", "isnan", "isinf", "static_cast"}
FLOAT_TYPES = {"float", "double"}
INT_TYPES = {"int", "size_t", "ptrdiff_t", "unsigned", "unsigned int", "long", "long long",
             "unsigned long", "unsigned long long", "int32_t", "uint32_t", "int64_t", "uint64_t"}


def side_effect_free(unit, node) -> bool:
    """No assignments, increments or calls other than known side-effect-free ones."""
    for n in unit.walk(node):
        if n.type in ("assignment_expression", "update_expression", "new_expression",
                      "delete_expression"):
            return False
        if n.type == "call_expression":
            f = n.child_by_field_name("function")
            name = unit.text(f) if f is not None else ""
            name = re.sub(r"<.*>$", "", name).split("::")[-1]
            if name not in PURE_CALLS:
                return False
    return True


def per_thread_sources(unit, node) -> frozenset:
    """The thread, block and grid symbols (or ``?``) ``node``'s value depends on."""
    return frozenset(sources(unit, node)) & PER_THREAD_SOURCES


def identifiers(unit, node):
    """The identifier nodes in ``node``."""
    return [n for n in unit.walk(node) if n.type == "identifier"]


def mentions(unit, node, name: str) -> list:
    """The identifier nodes in ``node`` that are ``name``."""
    return [n for n in identifiers(unit, node) if unit.text(n) == name]


def decl_type(unit, decl) -> str:
    """A declaration's type, blanks collapsed ("" without one)."""
    ty = decl.child_by_field_name("type")
    return norm(unit.text(ty)) if ty is not None else ""


def decl_items(unit, decl):
    """(name, declarator, value or None) of each variable a declaration declares."""
    from kltrans.passes.rewrite import declarator_ident as _declarator_ident

    out = []
    for d in decl.children_by_field_name("declarator"):
        ident = _declarator_ident(d)
        if ident is None:
            continue
        value = d.child_by_field_name("value") if d.type == "init_declarator" else None
        out.append((unit.text(ident), d, value))
    return out


def number_value(unit, node) -> float | None:
    """The value of a numeric literal (through parentheses and casts), or None."""
    node = _strip(node)
    if node is None:
        return None
    t = unit.text(node).strip()
    if node.type == "cast_expression":
        return number_value(unit, node.child_by_field_name("value"))
    m = re.fullmatch(r"([0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]+)?|\.[0-9]+)[fFuUlL]*", t)
    return float(m.group(1)) if m else None


def base_param(unit, fn, node, depth=0):
    """The pointer parameter an expression points into, or None."""
    node = _strip(node)
    if node is None or depth > 12:
        return None
    params = {p.name for p in fn.params if p.name}
    if node.type == "identifier":
        nm = unit.text(node)
        if nm in params:
            return nm
        for s in unit.walk(fn.body):
            if s.type == "declaration":
                for d_nm, _, value in decl_items(unit, s):
                    if d_nm == nm and value is not None and not assigned_in(unit, fn.body, nm):
                        return base_param(unit, fn, value, depth + 1)
        return None
    if node.type == "binary_expression":
        for side in ("left", "right"):
            got = base_param(unit, fn, node.child_by_field_name(side), depth + 1)
            if got is not None:
                return got
        return None
    if node.type == "cast_expression":
        return base_param(unit, fn, node.child_by_field_name("value"), depth + 1)
    if node.type == "subscript_expression":
        return base_param(unit, fn, node.child_by_field_name("argument"), depth + 1)
    return None


def text_thread_dependent(unit, fn, text: str, before: int, depth: int = 0) -> bool:
    """``text`` may depend on the thread: it names ``threadIdx``/``laneid``, or a local whose
    initializer (before byte ``before``) does, or one assigned later (unknown)."""
    if re.search(r"\bthreadIdx\b|\blaneid\b", text):
        return True
    if depth > 6:
        return True
    for name in set(re.findall(r"[A-Za-z_]\w*", text)):
        got = declaration(unit, fn, name, before)
        if got is None or got[0].type == "parameter_declaration":
            continue
        if got[1] is None:
            return True  # assigned later: unknown
        if text_thread_dependent(unit, fn, unit.text(got[1]), got[0].start_byte, depth + 1):
            return True
    return False
