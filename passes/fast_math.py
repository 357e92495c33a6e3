"""Fast math intrinsics: ``fast-math`` (optimize) and its inverse ``precise-math`` (simplify).

``fast-math`` trades a bounded loss of accuracy for speed, one operation at a time:

==========================  ========================  ==========================================
before                      after                     error bound assumed (CUDA C++ Programming
                                                      Guide, "Intrinsic Functions")
==========================  ========================  ==========================================
``expf(x)``                 ``__expf(x)``             2 + floor(abs(1.173 * x)) ulp
``a / b`` (float)           ``__fdividef(a, b)``      2 ulp for 2^-126 <= abs(b) <= 2^126
``1.0f / sqrtf(x)``         ``rsqrtf(x)``             2 ulp (the division form: 1 ulp)
``a * b + c`` (float)       ``fmaf(a, b, c)``         one rounding instead of two: at most half
                                                      an ulp of ``a * b`` from the original
==========================  ========================  ==========================================

Whether that loss is acceptable is a fact of the workload, not of the code: the relative
tolerance comes from the context as ``--assume 'tolerance(1e-5)'``. Relative errors are
counted as ``ulp * 2^-23`` (one float ulp relative to a normal value is at most 2^-23).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Match, Rule
from kltrans.passes import Choice, Pass, Precondition, Site, option
from kltrans.syntax import Edit

OPS = ("all", "exp", "div", "rsqrt", "fma")
ULP = 2.0 ** -23
# the smallest relative tolerance each rewrite needs (exp: times its range-dependent bound)
MIN_TOLERANCE = {"exp": 1e-6, "div": 1e-6, "rsqrt": 1e-6, "fma": ULP}
EXP_FULL_RANGE = 88.72  # |x| beyond this, expf overflows or underflows to zero
EXP_ULP_SLOPE = 1.173
ONES = ("1.0f", "1.f")
INTRINSIC = {"exp": "__expf", "div": "__fdividef", "rsqrt": "rsqrtf", "fma": "fmaf"}

# ------------------------------------------------------------------ a small type lookup
_FLOAT_FUNCS = {
    "expf", "__expf", "exp2f", "exp10f", "__exp10f", "expm1f", "logf", "__logf", "log2f",
    "__log2f", "log10f", "__log10f", "log1pf", "sqrtf", "rsqrtf", "cbrtf", "rcbrtf", "fmaf",
    "fabsf", "fminf", "fmaxf", "powf", "__powf", "sinf", "__sinf", "cosf", "__cosf", "tanf",
    "__tanf", "tanhf", "sinhf", "coshf", "asinf", "acosf", "atanf", "atan2f", "erff", "erfcf",
    "erfinvf", "floorf", "ceilf", "roundf", "rintf", "truncf", "copysignf", "fmodf", "hypotf",
    "normcdff", "__fdividef", "__frcp_rn", "__fsqrt_rn", "__fmul_rn", "__fadd_rn", "__fsub_rn",
    "__fdiv_rn", "__fmaf_rn", "__saturatef", "__int2float_rn", "__uint2float_rn",
    "__half2float", "__bfloat162float", "__low2float", "__high2float", "__int_as_float",
    "__uint_as_float", "__frsqrt_rn", "lgammaf", "tgammaf", "sinpif", "cospif",
}
_MATH_OVERLOADS = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "cbrt", "fma",
    "fabs", "fmin", "fmax", "pow", "sin", "cos", "tan", "tanh", "sinh", "cosh", "asin",
    "acos", "atan", "atan2", "erf", "erfc", "floor", "ceil", "round", "trunc", "copysign",
    "fmod", "hypot", "abs", "min", "max",
}
_SHUFFLES = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ldg",
             "__ldcs", "__ldcg", "__ldca", "__ldlu", "__ldcv"}
_INT_TYPES = {"int", "unsigned", "unsigned int", "signed", "signed int", "long", "long int",
              "unsigned long", "long long", "unsigned long long", "short", "unsigned short",
              "char", "signed char", "unsigned char", "bool", "size_t", "ptrdiff_t", "int8_t",
              "uint8_t", "int16_t", "uint16_t", "int32_t", "uint32_t", "int64_t", "uint64_t",
              "uint", "index_t", "dim3"}
_VEC = re.compile(r"^(float|double|int|uint|long|ulong|short|ushort|char|uchar|longlong|"
                  r"ulonglong)([1-4])$")
_QUALS = re.compile(r"\b(const|volatile|__restrict__|__restrict|restrict|static|__shared__|"
                    r"__constant__|__device__|register|constexpr|extern|inline|"
                    r"__forceinline__|struct)\b")
_FLOAT_LIT = re.compile(r"^(?:\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][+-]?\d+)?([fFlL]?)$")
_INT_LIT = re.compile(r"^(?:0[xX][0-9a-fA-F']+|0[bB][01']+|[\d']+)[uUlL]*$")


def _classify(type_text: str, unit=None, depth: int = 0) -> str | None:
    """'float', 'double', 'int', 'other' or None (unknown) for a scalar type name."""
    t = re.sub(r"\s+", " ", _QUALS.sub(" ", type_text)).strip()
    t = t.replace("std::", "").replace("::", "")
    if t in ("float", "float1"):
        return "float"
    if t in ("double", "long double", "double1"):
        return "double"
    if t in _INT_TYPES:
        return "int"
    if t in ("auto", "decltype(auto)") or not t:
        return None
    if unit is not None and depth < 8:
        from kltrans.analysis.affine import unit_info

        td = unit_info(unit).typedefs.get(t)
        if td is not None:
            return _classify(td, unit, depth + 1)
    if t in ("half", "__half", "__nv_bfloat16", "nv_bfloat16", "half2", "__half2",
             "__nv_bfloat162") or _VEC.match(t):
        return "other"
    return None


def _declared(unit, ident) -> tuple[str | None, int, str]:
    """(type class, pointer/array levels, why unknown) of the variable ``ident`` names."""
    from kltrans.analysis.affine import macro_expr, resolve_name, unit_info

    name = unit.text(ident)
    main = unit._cache.get("kltrans.fast_math.main")
    if main is not None:
        # an identifier inside a macro body (parsed on its own): another macro of the file
        m = unit_info(main[0]).macro(name, main[1])
        got = macro_expr(main[0], m) if m is not None and m.params is None else None
        if got is None or main[2] > 16:
            return None, 0, f"{name} in a macro body is not a macro of the file"
        got[0]._cache["kltrans.fast_math.main"] = (main[0], main[1], main[2] + 1)
        return _expr_type(got[0], got[1]), 0, ""
    b = resolve_name(unit, ident, name)
    if b.kind in ("builtin", "enum"):
        return "int", 0, ""
    if b.kind == "tparam":
        tp = b.decl.child_by_field_name("parameters") if b.decl is not None else None
        if tp is not None:
            from kltrans.syntax.cuda import template_params

            for t in template_params(unit, tp):
                if t.name == name and t.kind == "value":
                    return _classify(t.type or "", unit), 0, ""
        return None, 0, f"{name} is a template parameter"
    if b.kind == "macro":
        m = unit_info(unit).macro(name, ident.start_byte)
        got = macro_expr(unit, m) if m is not None and m.params is None else None
        if got is None:
            return None, 0, f"macro {name} is not an expression"
        sub, expr = got
        sub._cache["kltrans.fast_math.main"] = (unit, ident.start_byte, 0)
        return _expr_type(sub, expr), 0, ""
    if b.decl is None or b.ident is None:
        return None, 0, f"{name} is not declared in this file"
    decl = b.decl
    ty = decl.child_by_field_name("type")
    if ty is None:
        return None, 0, f"the type of {name} is not written"
    levels = 0
    p = b.ident.parent
    while p is not None and p.id != decl.id:
        if p.type in ("pointer_declarator", "array_declarator", "abstract_pointer_declarator"):
            levels += 1
        elif p.type == "reference_declarator":
            pass
        p = p.parent
    cls = _classify(unit.text(ty), unit)
    if cls is None and re.sub(r"\W", "", _QUALS.sub("", unit.text(ty))) == "auto" \
            and levels == 0 and b.value is not None:
        return _expr_type(unit, b.value), 0, ""
    if cls is None:
        written = " ".join(unit.text(ty).split())
        return None, levels, f"{name} has type {written}"
    return cls, levels, ""


def _object(unit, node, depth: int = 0) -> tuple[str | None, int]:
    """(type class, pointer levels) of an expression that may be a pointer or array."""
    from kltrans.analysis.affine import strip_parens

    node = strip_parens(node)
    if node is None or depth > 40:
        return None, 0
    t = node.type
    if t == "identifier":
        cls, lv, _ = _declared(unit, node)
        return cls, lv
    if t == "subscript_expression":
        cls, lv = _object(unit, node.child_by_field_name("argument"), depth + 1)
        return (cls, lv - 1) if lv > 0 else (None, 0)
    if t == "pointer_expression":
        op = unit.text(node.child_by_field_name("operator"))
        cls, lv = _object(unit, node.child_by_field_name("argument"), depth + 1)
        if op == "*":
            return (cls, lv - 1) if lv > 0 else (None, 0)
        return cls, lv + 1
    if t == "binary_expression" and unit.text(node.child_by_field_name("operator")) in "+-":
        for side in ("left", "right"):
            cls, lv = _object(unit, node.child_by_field_name(side), depth + 1)
            if lv > 0:
                return cls, lv
        return None, 0
    return _expr_type(unit, node, depth + 1), 0


def _combine(a: str | None, b: str | None) -> str | None:
    """The usual arithmetic conversions, on type classes."""
    if "pointer" in (a, b):
        return "pointer"  # pointer arithmetic
    if "double" in (a, b):
        return "double"
    if a is None or b is None:
        return None
    if "other" in (a, b):
        return "other"
    if "float" in (a, b):
        return "float"
    return "int"


def _expr_type(unit, node, depth: int = 0) -> str | None:
    """'float', 'double', 'int', 'pointer', 'other' or None (unknown) for an expression's
    value."""
    from kltrans.analysis.affine import builtin_name, strip_parens

    node = strip_parens(node)
    if node is None or depth > 40:
        return None
    t = node.type
    txt = unit.text(node)
    if t == "number_literal":
        m = _FLOAT_LIT.match(txt)
        if m:
            return "float" if m.group(1) in ("f", "F") else "double"
        return "int" if _INT_LIT.match(txt) else None
    if t in ("char_literal", "true", "false", "sizeof_expression", "alignof_expression"):
        return "int"
    if t == "identifier":
        cls, lv, _ = _declared(unit, node)
        return cls if lv == 0 else "pointer"
    if t == "field_expression":
        if builtin_name(unit, node) is not None:
            return "int"
        arg = node.child_by_field_name("argument")
        op = node.child_by_field_name("operator")
        arg_t = None
        if arg is not None and op is not None and unit.text(op) == ".":
            from kltrans.analysis.affine import resolve_name

            a = strip_parens(arg)
            if a.type == "identifier":
                b = resolve_name(unit, a, unit.text(a))
                if b.decl is not None and b.decl.child_by_field_name("type") is not None:
                    arg_t = re.sub(r"\s+", " ", _QUALS.sub(" ", unit.text(
                        b.decl.child_by_field_name("type")))).strip()
            elif a.type == "subscript_expression":
                base = a.child_by_field_name("argument")
                base = strip_parens(base)
                if base is not None and base.type == "identifier":
                    from kltrans.analysis.affine import resolve_name

                    b = resolve_name(unit, base, unit.text(base))
                    if b.decl is not None and b.decl.child_by_field_name("type") is not None:
                        arg_t = re.sub(r"\s+", " ", _QUALS.sub(" ", unit.text(
                            b.decl.child_by_field_name("type")))).strip()
        if arg_t is not None:
            m = _VEC.match(arg_t)
            if m:
                return {"float": "float", "double": "double"}.get(m.group(1), "int")
        return None
    if t == "subscript_expression" or (t == "pointer_expression" and
                                       unit.text(node.child_by_field_name("operator")) == "*"):
        cls, lv = _object(unit, node, depth + 1)
        return cls if lv == 0 else "pointer"
    if t == "pointer_expression":
        return "pointer"
    if t == "cast_expression":
        ty = node.child_by_field_name("type")
        if ty is not None and "*" in unit.text(ty):
            return "pointer"
        return _classify(unit.text(ty), unit) if ty is not None else None
    if t == "call_expression":
        return _call_type(unit, node, depth)
    if t == "binary_expression":
        op = unit.text(node.child_by_field_name("operator"))
        if op in ("+", "-", "*", "/", "%"):
            return _combine(_expr_type(unit, node.child_by_field_name("left"), depth + 1),
                            _expr_type(unit, node.child_by_field_name("right"), depth + 1))
        return "int"  # comparisons, logical, bitwise and shift operators
    if t == "unary_expression":
        op = unit.text(node.child_by_field_name("operator"))
        if op in ("!", "~"):
            return "int"
        return _expr_type(unit, node.child_by_field_name("argument"), depth + 1)
    if t == "update_expression":
        return _expr_type(unit, node.child_by_field_name("argument"), depth + 1)
    if t == "conditional_expression":
        return _combine(_expr_type(unit, node.child_by_field_name("consequence"), depth + 1),
                        _expr_type(unit, node.child_by_field_name("alternative"), depth + 1))
    if t == "assignment_expression":
        return _expr_type(unit, node.child_by_field_name("left"), depth + 1)
    if t == "comma_expression":
        return _expr_type(unit, node.child_by_field_name("right"), depth + 1)
    return None


def _call_type(unit, node, depth: int) -> str | None:
    from kltrans.analysis.affine import unit_info
    from kltrans.analysis.barriers import call_name

    name, kind = call_name(unit, node)
    args = node.child_by_field_name("arguments")
    argl = [a for a in args.named_children if a.type != "comment"] if args else []
    if kind == "type":
        return _classify(name, unit)
    if kind == "template" and name in ("static_cast", "reinterpret_cast", "bit_cast"):
        targs = node.child_by_field_name("function").child_by_field_name("arguments")
        txt = unit.text(targs).strip("<> ") if targs is not None else ""
        return "pointer" if "*" in txt else _classify(txt, unit)
    if kind not in ("identifier", "qualified"):
        return None
    if name in _FLOAT_FUNCS:
        return "float"
    if name in _SHUFFLES:
        if name.startswith("__ld"):
            return _deref_type(unit, argl)
        return _expr_type(unit, argl[1], depth + 1) if len(argl) > 1 else None
    if name in _MATH_OVERLOADS:
        ts = [_expr_type(unit, a, depth + 1) for a in argl]
        if not ts:
            return None
        if name in ("abs", "min", "max"):
            out = ts[0]
            for x in ts[1:]:
                out = _combine(out, x)
            return out
        if any(x is None for x in ts):
            return None
        if "double" in ts or all(x == "int" for x in ts):
            return "double"
        return "float" if all(x in ("float", "int") for x in ts) else "other"
    fns = unit_info(unit).functions.get(name, ())
    rets = {_classify(f.return_type, unit) for f in fns}
    if len(rets) == 1:
        return rets.pop()
    return None


def _deref_type(unit, argl) -> str | None:
    if not argl:
        return None
    cls, lv = _object(unit, argl[0])
    return cls if lv == 1 else None


# ------------------------------------------------------------------- site shapes
_PREC = {"*": 10, "/": 10, "%": 10, "+": 9, "-": 9, "<<": 8, ">>": 8, "<": 7, "<=": 7, ">": 7,
         ">=": 7, "==": 6, "!=": 6, "&": 5, "^": 4, "|": 3, "&&": 2, "||": 1}
_ATOM = 20
MUL, ADD = 10, 9


def _prec(unit, node) -> int:
    """Binding strength of an expression node as an operand."""
    t = node.type
    if t == "binary_expression":
        return _PREC.get(unit.text(node.child_by_field_name("operator")), 0)
    if t in ("conditional_expression", "assignment_expression", "comma_expression"):
        return 0
    return _ATOM


def _inner(node):
    """The expression inside one pair of parentheses, or None (never a comma expression,
    which a call argument could not hold bare)."""
    if node.type != "parenthesized_expression":
        return None
    kids = [c for c in node.named_children if c.type != "comment"]
    if len(kids) != 1 or kids[0].type == "comma_expression":
        return None
    return kids[0]


# (operand, side) -> does the operator form need parentheses around it?
def _needs(unit, node, op_prec: int, right: bool) -> bool:
    p = _prec(unit, node)
    return p < op_prec or (right and p == op_prec)


def _call_operand(unit, node, op_prec: int, right: bool):
    """For fast-math: the operand without the parentheses that only the operator form
    needed (precise-math puts exactly these back), else the operand itself."""
    inner = _inner(node)
    if inner is not None and _needs(unit, inner, op_prec, right):
        return inner
    return node


def _site_span(unit, node, own: int):
    """For fast-math: the site with the parentheses around it that its context needed for
    the operator form (a call needs none), else the site itself."""
    p = node.parent
    if p is not None and _inner(p) is not None and _context_needs_parens(unit, p, own):
        return p
    return node


def _splice(unit, outer, parts, prefix: str, seps, suffix: str) -> list:
    """Edits that keep the text of ``parts`` (nodes, in order) and replace everything
    else in ``outer``: before the first part, between parts, after the last."""
    src_edits = []
    spans = [(outer.start_byte, parts[0].start_byte, prefix)]
    for a, b, sep in zip(parts, parts[1:], seps):
        spans.append((a.end_byte, b.start_byte, sep))
    spans.append((parts[-1].end_byte, outer.end_byte, suffix))
    for s0, s1, text in spans:
        if unit.source[s0:s1] != text.encode():
            src_edits.append(Edit(s0, s1, text))
    return src_edits


def _context_needs_parens(unit, node, own: int) -> bool:
    """Whether an expression of precedence ``own`` replacing ``node`` needs parentheses."""
    p = node.parent
    if p is None:
        return False
    t = p.type
    if t == "binary_expression":
        pp = _prec(unit, p)
        left = p.child_by_field_name("left")
        return pp > own or (pp == own and (left is None or left.id != node.id))
    if t in ("unary_expression", "pointer_expression", "cast_expression", "update_expression",
             "sizeof_expression", "field_expression"):
        return True
    if t == "subscript_expression":
        a = p.child_by_field_name("argument")
        return a is not None and a.id == node.id
    if t == "call_expression":
        f = p.child_by_field_name("function")
        return f is not None and f.id == node.id
    return False


def _callee(unit, node) -> str | None:
    f = node.child_by_field_name("function") if node.type == "call_expression" else None
    return unit.text(f) if f is not None and f.type == "identifier" else None


def _args(node):
    a = node.child_by_field_name("arguments")
    return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def _fast_shape(unit, node):
    """(op, bindings) when ``node`` is something fast-math rewrites, else None."""
    t = node.type
    if t == "call_expression":
        if _callee(unit, node) == "expf" and len(_args(node)) == 1:
            return "exp", {"X": _args(node)[0]}
        return None
    if t != "binary_expression":
        return None
    op = unit.text(node.child_by_field_name("operator"))
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if op == "/":
        if left.type == "number_literal" and unit.text(left) in ONES and \
                right.type == "call_expression" and _callee(unit, right) == "sqrtf" and \
                len(_args(right)) == 1:
            return "rsqrt", {"ONE": left, "X": _args(right)[0]}
        return "div", {"A": left, "B": right}
    if op == "+":
        for mul, c, order in ((left, right, "mul-add"), (right, left, "add-mul")):
            if mul.type == "binary_expression" and \
                    unit.text(mul.child_by_field_name("operator")) == "*":
                return "fma", {"A": mul.child_by_field_name("left"),
                               "B": mul.child_by_field_name("right"), "C": c, "MUL": mul,
                               "ORDER": order}
    return None


def _precise_shape(unit, node):
    """(op, bindings) when ``node`` is an intrinsic precise-math rewrites, else None."""
    if node.type != "call_expression":
        return None
    name = _callee(unit, node)
    args = _args(node)
    if name == "__expf" and len(args) == 1:
        return "exp", {"X": args[0]}
    if name == "__fdividef" and len(args) == 2:
        return "div", {"A": args[0], "B": args[1]}
    if name == "rsqrtf" and len(args) == 1:
        return "rsqrt", {"X": args[0]}
    if name == "fmaf" and len(args) == 3:
        return "fma", {"A": args[0], "B": args[1], "C": args[2]}
    return None


def _sites(p, unit, ctx, shape):
    out = []
    for s in Pass.sites(p, unit, ctx):
        got = shape(unit, s.node)
        if got is None:
            continue
        op, b = got
        if p.ops not in ("all", op):
            continue
        try:
            known = _op_type(unit, op, b)
        except Exception:  # an unreadable type is unknown; the precondition says so
            known = None
        if p.kind == "optimize" and op in ("div", "fma") and known in ("int", "pointer"):
            continue  # integer or pointer arithmetic: not a floating-point operation at all
        m = Match(unit, s.node, {**b, "OP": op})
        out.append(Site(unit, m, s.function, 0, p))
    out.sort(key=lambda s: (s.node.start_byte, -s.node.end_byte))
    return [Site(s.unit, s.match, s.function, i + 1, p) for i, s in enumerate(out)]


def _op_type(unit, op, b) -> str | None:
    if op == "div":
        return _combine(_expr_type(unit, b["A"]), _expr_type(unit, b["B"]))
    if op == "fma":
        return _combine(_combine(_expr_type(unit, b["A"]), _expr_type(unit, b["B"])),
                        _expr_type(unit, b["C"]))
    return "float"


# ------------------------------------------------------------------ preconditions
def _float_operands(site, ctx) -> Verdict:
    unit = site.unit
    b = site.match.bindings
    op = b["OP"]
    if op in ("exp", "rsqrt"):
        fn = {"exp": "expf", "rsqrt": "sqrtf"}[op] if site.pass_.kind == "optimize" \
            else INTRINSIC[op]
        return Verdict.yes(f"{fn} takes and returns float")
    names = ("A", "B") if op == "div" else ("A", "B", "C")
    types = {n: _expr_type(unit, b[n]) for n in names}
    for n in names:
        if types[n] == "double":
            return Verdict.no(f"{unit.text(b[n])} is double: the "
                              + ("intrinsic is single precision" if site.pass_.kind == "optimize"
                                 else "operator form would compute in double"))
    for n in names:
        if types[n] in (None, "other", "pointer"):
            what = "of unknown type" if types[n] is None else "not a float or integer scalar"
            return Verdict.unknown(f"{unit.text(b[n])} is {what}")
    first = ("A", "B")
    if not any(types[n] == "float" for n in first):
        what = "divide" if op == "div" else "multiply"
        if site.pass_.kind == "optimize":
            return Verdict.no(f"{unit.text(b['A'])} and {unit.text(b['B'])} are integers: "
                              f"{INTRINSIC[op]} would {what} them in float instead")
        return Verdict.no(f"{unit.text(b['A'])} and {unit.text(b['B'])} are integers: the "
                          f"operator form would {what} integers")
    return Verdict.yes("float operands: " + ", ".join(
        f"{unit.text(b[n])}: {types[n]}" for n in names))


def _exp_bound(ctx) -> float | None:
    for f in ctx.assumptions:
        if f.name == "exp_range" and len(f.args) == 1:
            try:
                return abs(float(f.args[0]))
            except ValueError:
                return None
    return None


def _exp_needs(bound: float) -> float:
    return (2 + math.floor(EXP_ULP_SLOPE * bound)) * ULP


def _tolerance(site, ctx) -> Verdict:
    op = site.match.bindings["OP"]
    tol, err = ctx.tolerance()
    intr = INTRINSIC[op]
    if err:
        return Verdict.unknown(err)
    if tol is None:
        return Verdict.unknown(f"{intr} changes the result's rounding; the workload's relative "
                               f"tolerance is not known: pass --assume 'tolerance(1e-5)'")
    need = MIN_TOLERANCE[op]
    if tol < need:
        what = "an exact comparison" if tol == 0 else f"tolerance {tol:g}"
        if op == "fma":
            return Verdict.no(f"{what} is below one float ulp ({need:.2g}): fmaf rounds once "
                              f"where a * b + c rounds twice, so bits change")
        return Verdict.no(f"{what} is below the {need:g} that {intr} needs "
                          f"(its error is {'2 + floor(1.173|x|)' if op == 'exp' else '2'} ulp)")
    if op == "exp":
        bound = _exp_bound(ctx)
        covers = (tol / ULP - 2) / EXP_ULP_SLOPE
        if bound is None:
            if _exp_needs(EXP_FULL_RANGE) <= tol:
                return Verdict.yes(f"tolerance {tol:g} covers __expf's 2 + floor(1.173|x|) ulp "
                                   f"for every |x| <= {EXP_FULL_RANGE} (the finite range)")
            return Verdict.unknown(f"tolerance {tol:g} covers __expf's 2 + floor(1.173|x|) ulp "
                                   f"only for |x| <= {covers:.1f}; the range of the argument "
                                   f"is not known: pass --assume 'exp_range(B)' (|x| <= B)")
        need = max(need, _exp_needs(bound))
        if tol < need:
            return Verdict.no(f"for |x| <= {bound:g}, __expf may be off by "
                              f"{2 + math.floor(EXP_ULP_SLOPE * bound)} ulp ({need:.2g}), more "
                              f"than tolerance {tol:g}")
        return Verdict.yes(f"tolerance {tol:g} >= {need:.2g} ({2 + math.floor(EXP_ULP_SLOPE * bound)}"
                           f" ulp for |x| <= {bound:g})")
    return Verdict.yes(f"tolerance {tol:g} >= {need:.2g} needed by {intr}")


def _device_only(site, ctx) -> Verdict:
    op = site.match.bindings["OP"]
    fn = site.function
    if op == "fma":
        return Verdict.yes("fmaf exists in host and device code")
    if fn is not None and fn.is_host and not fn.is_kernel:
        return Verdict.no(f"{fn.name} is also compiled for the host, where "
                          f"{INTRINSIC[op]} does not exist")
    return Verdict.yes(f"{fn.name if fn else 'the code'} is device code")


def _inverse_ops(p, sites, ctx) -> str:
    """The ``ops`` of the inverse: the one operation every rewritable site of the unit
    has, when there is one (so the inverse touches nothing else), else ``p.ops``."""
    ops = {s.match.bindings["OP"] for s in sites if all(v.holds for _, v in p.check(s, ctx))}
    return ops.pop() if len(ops) == 1 else p.ops


# ------------------------------------------------------------------------ passes
@dataclass(frozen=True)
class FastMath(Pass):
    """Replace float math with CUDA's fast intrinsics (``__expf``, ``__fdividef``, ``rsqrtf``, ``fmaf``).

    Before::

        float e = expf(x[i] - m);
        y[i] = e / sum;
        float r = 1.0f / sqrtf(var + eps);
        acc = a[i] * b[i] + acc;

    After ``fast-math`` (with ``--assume 'tolerance(1e-4)'``)::

        float e = __expf(x[i] - m);
        y[i] = __fdividef(e, sum);
        float r = rsqrtf(var + eps);
        acc = fmaf(a[i], b[i], acc);

    Error bounds assumed (CUDA C++ Programming Guide, intrinsic functions), with one ulp
    counted as 2^-23 relative: ``__expf`` 2 + floor(1.173|x|) ulp, so it needs
    ``tolerance >= max(1e-6, that bound)`` for the argument range (``--assume
    'exp_range(B)'`` says |x| <= B; without it the whole finite range |x| <= 88.72 is
    assumed, which needs 1.3e-5); ``__fdividef`` 2 ulp when 2^-126 <= |b| <= 2^126
    (larger divisors give 0: the workload's values are assumed to stay below 2^126) and
    ``rsqrtf`` 2 ulp both need ``tolerance >= 1e-6``; ``fmaf`` rounds once instead of
    twice (closer to the exact result, but different bits) and needs a tolerance of at
    least one ulp (2^-23): any comparison that is not bit-exact. nvcc and NVRTC contract
    ``a * b + c`` into an FMA by default (``-fmad=true``), so there ``fmaf`` only makes
    it explicit.

    Sites: ``expf(x)``; ``a / b`` and ``a * b + c`` / ``c + a * b`` unless the
    arithmetic is plainly integer or pointer arithmetic (those are not sites);
    ``1.0f / sqrtf(x)`` or ``1.f / sqrtf(x)`` (an rsqrt site, not a division site).
    Parentheses that only the operator form needed go (``x * (1.0f / sqrtf(v))``
    becomes ``x * rsqrtf(v)``, ``a / (b + c)`` becomes ``__fdividef(a, b + c)``); all
    others stay. Types come from declarations in the file (parameters, locals, file-scope
    variables, typedefs, macros, casts, known math functions, ``float4`` members).

    Limits: compound assignments (``acc += a * b``) and ``a * b - c`` are not sites; two
    sites that begin at the same token (``expf(x) / s``) are rewritten one per run (the
    second is reported as overlapping: run the pass again).

    Preconditions: float-operands (dtype: the operation is single precision: no
    ``double`` operand, at least one ``float`` operand of the division or product;
    unknown types, such as template parameters, are unknown), tolerance (dtype: the
    workload tolerance from ``--assume 'tolerance(t)'`` covers the intrinsic's error, see
    above), device-only (hardware: ``__expf``, ``__fdividef`` and ``rsqrtf`` exist only in
    device code, so not in ``__host__ __device__`` functions).

    Options: ``ops`` (``all``, ``exp``, ``div``, ``rsqrt`` or ``fma``: which rewrites;
    default ``all``).

    Round trip: ``inverse_for`` gives ``precise-math`` with ``ops`` narrowed to the one
    operation rewritten when there is only one, ``one`` as the first rsqrt site wrote it
    and ``order`` as the first fma site did. It gives the original back token for token
    unless the input already held intrinsics of those operations (they would be
    replaced too) or mixed ``a * b + c`` with ``c + a * b``.
    """

    name = "fast-math"
    kind = "optimize"
    inverse = "precise-math"
    scope = "device"
    anchor = Rule(any=(Rule(kind="call_expression"), Rule(kind="binary_expression")))
    preconditions = (
        Precondition("float-operands", "dtype",
                     "the operation is single precision (float operands, no double)",
                     _float_operands),
        Precondition("tolerance", "dtype",
                     "the workload tolerance covers the intrinsic's error (--assume "
                     "'tolerance(t)')", _tolerance),
        Precondition("device-only", "hardware",
                     "the intrinsic exists where the code is compiled (device only)",
                     _device_only),
    )

    ops: str = option("all", Choice(*OPS), "which operations to rewrite", tune=True)

    def sites(self, unit, ctx):
        return _sites(self, unit, ctx, _fast_shape)

    def rewrite(self, site, ctx):
        unit = site.unit
        b = site.match.bindings
        op = b["OP"]
        node = site.node
        if op == "exp":
            return [Edit.replace(node.child_by_field_name("function"), "__expf")]
        if op == "rsqrt":
            outer = _site_span(unit, node, MUL)
            return _splice(unit, outer, [b["X"]], "rsqrtf(", [], ")")
        if op == "div":
            outer = _site_span(unit, node, MUL)
            parts = [_call_operand(unit, b["A"], MUL, False), _call_operand(unit, b["B"], MUL, True)]
            return _splice(unit, outer, parts, "__fdividef(", [", "], ")")
        outer = _site_span(unit, node, ADD)
        if b["ORDER"] == "mul-add":
            parts = [_call_operand(unit, b["A"], MUL, False), _call_operand(unit, b["B"], MUL, True),
                     _call_operand(unit, b["C"], ADD, True)]
            return _splice(unit, outer, parts, "fmaf(", [", ", ", "], ")")
        a = _call_operand(unit, b["A"], MUL, False)
        bb = _call_operand(unit, b["B"], MUL, True)
        c = _call_operand(unit, b["C"], ADD, False)
        return [Edit(outer.start_byte, outer.end_byte,
                     f"fmaf({unit.text(a)}, {unit.text(bb)}, {unit.text(c)})")]

    def inverse_for(self, site, ctx):
        # one configuration for every site of the unit: the spelling of the first
        # rsqrt site and the operand order of the first fma site
        one, order = "1.0f", "mul-add"
        sites = self.sites(site.unit, ctx)
        for s in reversed(sites):
            b = s.match.bindings
            if b["OP"] == "rsqrt":
                one = site.unit.text(b["ONE"])
            elif b["OP"] == "fma":
                order = b["ORDER"]
        return PreciseMath(ops=_inverse_ops(self, sites, ctx), one=one, order=order)


@dataclass(frozen=True)
class PreciseMath(Pass):
    """Replace fast intrinsics with the precise operations they approximate.

    Before::

        float e = __expf(x[i] - m);
        y[i] = __fdividef(e, sum);
        float r = rsqrtf(var + eps);
        acc = fmaf(a[i], b[i], acc);

    After ``precise-math``::

        float e = expf(x[i] - m);
        y[i] = e / sum;
        float r = 1.0f / sqrtf(var + eps);
        acc = a[i] * b[i] + acc;

    Operands are parenthesized where the operator form needs it
    (``__fdividef(a + b, c)`` becomes ``(a + b) / c``, ``x * rsqrtf(v)`` becomes
    ``x * (1.0f / sqrtf(v))``), so the operator form computes the same operation.

    Preconditions: float-operands (dtype: the operator form computes in float: a
    ``double`` argument would make it double precision, and integer arguments to
    ``__fdividef``/``fmaf`` would make it integer arithmetic).

    Options: ``ops`` (``all``, ``exp``, ``div``, ``rsqrt`` or ``fma``; default ``all``),
    ``one`` (how ``rsqrtf(x)`` is written back: ``1.0f / sqrtf(x)`` or ``1.f / sqrtf(x)``;
    default ``1.0f``), ``order`` (``fmaf(a, b, c)`` as ``a * b + c`` (``mul-add``) or
    ``c + a * b`` (``add-mul``); default ``mul-add``).

    Round trip: ``inverse_for`` gives ``fast-math`` with ``ops`` narrowed to the one
    operation replaced when there is only one; it needs the workload tolerance in the
    context like any ``fast-math``, and rewrites every other site of that operation too.
    """

    name = "precise-math"
    kind = "simplify"
    inverse = "fast-math"
    scope = "device"
    anchor = Rule(kind="call_expression")
    preconditions = (
        Precondition("float-operands", "dtype",
                     "the operator form computes in float (no double, not all integers)",
                     _float_operands),
    )

    ops: str = option("all", Choice(*OPS), "which intrinsics to replace")
    one: str = option("1.0f", Choice(*ONES), "the literal 1 in 1.0f / sqrtf(x)")
    order: str = option("mul-add", Choice("mul-add", "add-mul"),
                        "fmaf(a, b, c) as a * b + c or c + a * b")

    def sites(self, unit, ctx):
        return _sites(self, unit, ctx, _precise_shape)

    def rewrite(self, site, ctx):
        unit = site.unit
        b = site.match.bindings
        op = b["OP"]
        node = site.node
        if op == "exp":
            return [Edit.replace(node.child_by_field_name("function"), "expf")]

        def par(n, op_prec, right):
            return ("(", ")") if _needs(unit, n, op_prec, right) else ("", "")

        own = ADD if op == "fma" else MUL
        o1, o2 = ("(", ")") if _context_needs_parens(unit, node, own) else ("", "")
        if op == "rsqrt":
            return _splice(unit, node, [b["X"]], f"{o1}{self.one} / sqrtf(", [], f"){o2}")
        if op == "div":
            (a1, a2), (b1, b2) = par(b["A"], MUL, False), par(b["B"], MUL, True)
            return _splice(unit, node, [b["A"], b["B"]], f"{o1}{a1}", [f"{a2} / {b1}"], f"{b2}{o2}")
        a, bb, c = b["A"], b["B"], b["C"]
        (a1, a2), (b1, b2) = par(a, MUL, False), par(bb, MUL, True)
        if self.order == "mul-add":
            c1, c2 = par(c, ADD, True)
            return _splice(unit, node, [a, bb, c], f"{o1}{a1}", [f"{a2} * {b1}", f"{b2} + {c1}"],
                           f"{c2}{o2}")
        c1, c2 = par(c, ADD, False)
        text = (f"{o1}{c1}{unit.text(c)}{c2} + {a1}{unit.text(a)}{a2} * "
                f"{b1}{unit.text(bb)}{b2}{o2}")
        return [Edit.replace(node, text)]

    def inverse_for(self, site, ctx):
        return FastMath(ops=_inverse_ops(self, self.sites(site.unit, ctx), ctx))
