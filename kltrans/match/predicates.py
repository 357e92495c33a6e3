"""Named predicates usable in metavariable constraints (``predicate: int-literal``).

Each takes (unit, node) and returns a bool. Register new ones in :data:`PREDICATES`;
a rule naming an unknown predicate is rejected when it is loaded.
"""

from __future__ import annotations

import re

_INT = re.compile(r"^(0[xX][0-9a-fA-F]+|\d+)[uUlL]*$")
_THREAD = re.compile(r"^(threadIdx|blockIdx|blockDim|gridDim)\.[xyz]$")
_SIDE_EFFECTS = {"assignment_expression", "update_expression", "call_expression",
                 "new_expression", "delete_expression"}
#: calls without side effects (math, conversions, read-only loads); casts are handled apart
PURE_CALLS = frozenset({
    "min", "max", "fminf", "fmaxf", "fmin", "fmax", "abs", "fabsf", "fabs", "sqrtf", "rsqrtf",
    "expf", "__expf", "exp", "logf", "__logf", "tanhf", "fmaf", "__fdividef", "__ldg",
    "__int_as_float", "__float_as_int", "__float2half", "__half2float", "__bfloat162float",
    "__float2bfloat16", "static_cast"})
_CASTS = {"static_cast", "reinterpret_cast", "const_cast"}


def int_literal(unit, node) -> bool:
    return node.type == "number_literal" and bool(_INT.match(unit.text(node)))


def identifier(unit, node) -> bool:
    return node.type == "identifier"


def thread_index(unit, node) -> bool:
    return node.type == "field_expression" and bool(_THREAD.match(unit.text(node).replace(" ", "")))


_EFFECT_TEXT = re.compile(r"(?<![=!<>+\-*/%&|^])=(?!=)|\+\+|--|[-+*/%&|^]=|<<=|>>=")
_CALL_TEXT = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def pure_macros(unit) -> frozenset:
    """The unit's function-like macros whose replacement assigns nothing and calls only
    side-effect-free functions and such macros (``#define IDX(r, c) ((r) * n + (c))``)."""
    def find(u):
        defs = {}
        for n in u.nodes_of_type("preproc_function_def"):
            name, value = n.child_by_field_name("name"), n.child_by_field_name("value")
            if name is not None:
                defs[u.text(name)] = u.text(value) if value is not None else ""
        ok = {k for k, v in defs.items() if not _EFFECT_TEXT.search(v)}
        changed = True
        while changed:   # a macro calling an impure one is impure
            changed = False
            for k in sorted(ok):
                if any(c not in PURE_CALLS and c not in ok and c not in _CASTS
                       for c in _CALL_TEXT.findall(defs[k])):
                    ok.discard(k)
                    changed = True
        return frozenset(ok)
    return unit.memo("match.pure_macros", find)


def pure(unit, node) -> bool:
    """No assignments, increments or calls (except known side-effect-free math, the
    unit's pure function-like macros (:func:`pure_macros`) and the C++ casts
    ``static_cast``/``reinterpret_cast``/``const_cast``, whose operand is checked like the
    rest). A lambda expression is pure: evaluating it makes a closure and runs none of its
    body."""
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "lambda_expression":
            continue
        stack.extend(n.children)
        if n.type in _SIDE_EFFECTS:
            if n.type == "call_expression":
                fn = n.child_by_field_name("function")
                if fn is not None and (unit.text(fn) in PURE_CALLS or
                                       unit.text(fn) in pure_macros(unit)):
                    continue
                if fn is not None and fn.type == "template_function" and \
                        unit.text(fn.child_by_field_name("name")) in _CASTS:
                    continue
            return False
    return True


def constant(unit, node) -> bool:
    """Literals and operators only (no identifiers other than ALL_CAPS macros)."""
    for n in unit.walk(node):
        if n.type == "identifier" and not re.match(r"^[A-Z][A-Z0-9_]*$", unit.text(n)):
            return False
        if n.type in _SIDE_EFFECTS:
            return False
    return True


PREDICATES = {
    "int-literal": int_literal,
    "identifier": identifier,
    "thread-index": thread_index,
    "pure": pure,
    "constant": constant,
}
