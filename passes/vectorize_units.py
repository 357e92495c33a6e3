"""Vector units: ``vectorize-units`` (optimize) and ``scalarize-units`` (simplify).

A thread that owns U *units* of four consecutive elements (unit ``X`` covers the elements
``BASE + 4 * X .. BASE + 4 * X + 3``) can move each unit as one 16-byte vector (int4,
uint4, float4) when the whole tile is in range and the buffer is 16-byte aligned. The
scalar form is a nest ``for k < U { for j < 4 { i = BASE + 4 * X + j; ... } }`` with a
bounds check per element; the vector form is ``if (flag) { vector nest } else { scalar
nest }``, the flag a run-time test the kernel computes (the scan expert's ``vec_ok``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Bool, Identifier, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.rewrite import lex, token_text as _norm

_VEC = {"int": "int4", "unsigned int": "uint4", "unsigned": "uint4", "float": "float4"}
_LANES = ("x", "y", "z", "w")
_ITYPES = ("size_t", "int", "unsigned int", "unsigned", "long long", "long",
           "unsigned long long", "ptrdiff_t")




def _stmts(unit, node):
    """The statements of a compound statement (comments left out), or [node]."""
    if node is None:
        return []
    if node.type == "compound_statement":
        return [c for c in node.named_children if c.type != "comment"]
    return [node]


def _strip(text: str) -> str:
    """``(T)(e)`` or ``(e)`` -> ``e`` (the unit index of a vector access)."""
    t = text.strip()
    m = re.fullmatch(r"\(\s*(?:size_t|int|unsigned int|unsigned|long long)\s*\)\s*(.*)", t, re.S)
    if m:
        t = m.group(1).strip()
    while t.startswith("(") and t.endswith(")") and _balanced(t[1:-1]):
        t = t[1:-1].strip()
    return t


def _balanced(t: str) -> bool:
    d = 0
    for ch in t:
        d += ch == "("
        d -= ch == ")"
        if d < 0:
            return False
    return d == 0


def _subst(unit, node, name: str, value: str) -> str:
    """The text of ``node`` with every identifier ``name`` replaced by ``value``."""
    src = unit.text(node)
    base = node.start_byte
    spans = [(n.start_byte - base, n.end_byte - base) for n in unit.walk(node)
             if n.type == "identifier" and unit.text(n) == name]
    b = src.encode()
    for s, e in sorted(spans, reverse=True):
        b = b[:s] + value.encode() + b[e:]
    return b.decode()


@dataclass
class _Nest:
    """A unit nest: ``for (int K = 0; K < U; ++K) { PRE; for (int J = 0; J < 4; ++J) {
    [const] T I = BASE + 4 * X + J; ACCESS } }``."""

    node: object
    k: str
    header: str
    pre: list
    j: str
    index: str
    base: str
    unit_index: str  # X
    kind: str  # load | store
    ptr: str  # the global pointer accessed at I
    bound: str
    array: str = ""  # load: the register array V (V[K][J] = ...)
    cast: str = ""  # load: the cast of the element, "(unsigned int)" or ""
    value: object = None  # store: the stored expression node


def _parse_nest(unit, node) -> tuple[_Nest | None, str]:
    if node is None or node.type != "for_statement":
        return None, "not a for loop"
    body = node.child_by_field_name("body")
    head = _norm(unit.text(node)[:body.start_byte - node.start_byte]) if body else ""
    m = re.fullmatch(r"for \( int (\w+) = 0 ; \1 < (\w+) ; (?:\+\+ \1|\1 \+\+) \)", head)
    if m is None:
        return None, "the loop is not `for (int k = 0; k < U; ++k)`"
    k = m.group(1)
    st = _stmts(unit, body)
    if not st or st[-1].type != "for_statement":
        return None, f"the body of the {k} loop does not end in a lane loop"
    lane = st[-1]
    lbody = lane.child_by_field_name("body")
    lhead = _norm(unit.text(lane)[:lbody.start_byte - lane.start_byte])
    m = re.fullmatch(r"for \( int (\w+) = 0 ; \1 < 4 ; (?:\+\+ \1|\1 \+\+) \)", lhead)
    if m is None:
        return None, "the lane loop is not `for (int j = 0; j < 4; ++j)`"
    j = m.group(1)
    for p in st[:-1]:
        if any(n.type == "identifier" and unit.text(n) == j for n in unit.walk(p)):
            return None, f"a statement before the lane loop uses {j}"
        if p.type in ("for_statement", "while_statement", "do_statement", "if_statement",
                      "return_statement", "break_statement", "continue_statement"):
            return None, "the statements before the lane loop are not straight-line code"
    ls = _stmts(unit, lbody)
    if len(ls) != 2 or ls[0].type != "declaration":
        return None, "the lane loop is not `{ T i = BASE + 4 * X + j; one access }`"
    decl = ls[0]
    tx = _norm(unit.text(decl.child_by_field_name("type")))
    ds = decl.children_by_field_name("declarator")
    if tx not in _ITYPES or len(ds) != 1 or ds[0].type != "init_declarator":
        return None, "the element index is not one integer declaration"
    index = unit.text(ds[0].child_by_field_name("declarator"))
    v = ds[0].child_by_field_name("value")
    # BASE + 4 * X + J  ==  ((BASE + (4 * X)) + J)
    if not (_binop(unit, v, "+") and unit.text(v.child_by_field_name("right")) == j):
        return None, f"the element index `{unit.text(v)}` is not BASE + 4 * X + {j}"
    left = v.child_by_field_name("left")
    if not _binop(unit, left, "+"):
        return None, f"the element index `{unit.text(v)}` is not BASE + 4 * X + {j}"
    base, mul = left.child_by_field_name("left"), left.child_by_field_name("right")
    if not (_binop(unit, mul, "*") and unit.text(mul.child_by_field_name("left")) == "4"):
        return None, f"the element index `{unit.text(v)}` is not BASE + 4 * X + {j}"
    x = mul.child_by_field_name("right")
    for part in (base, x):
        if any(n.type == "identifier" and unit.text(n) in (j, index) for n in unit.walk(part)):
            return None, f"BASE or X of the element index uses {j}"
    if any(n.type == "identifier" and unit.text(n) == k for n in unit.walk(base)):
        return None, f"the base {unit.text(base)} depends on {k}"
    raw = unit.text(node)[:body.start_byte - node.start_byte].strip()
    nest = _Nest(node, k, raw, st[:-1], j, index, unit.text(base), unit.text(x), "", "", "")
    acc = ls[1]
    t = _norm(unit.text(acc))
    ml = re.fullmatch(r"(\w+) \[ %s \] \[ %s \] = %s < (\w+) \? (\( [\w ]+ \) )?(\w+) \[ %s \] : "
                      r"[\w.]+ ;" % (k, j, index, index), t)
    if ml:
        nest.kind, nest.array, nest.bound = "load", ml.group(1), ml.group(2)
        nest.cast = (ml.group(3) or "").replace("( ", "(").replace(" )", ")").strip()
        nest.ptr = ml.group(4)
        return nest, ""
    if acc.type == "if_statement" and acc.child_by_field_name("alternative") is None:
        cond = _norm(unit.text(acc.child_by_field_name("condition")))
        ms = re.fullmatch(r"\( %s < (\w+) \)" % index, cond)
        inner = _stmts(unit, acc.child_by_field_name("consequence"))
        if ms and len(inner) == 1 and inner[0].type == "expression_statement":
            a = inner[0].named_children[0] if inner[0].named_children else None
            if a is not None and a.type == "assignment_expression" and \
                    unit.text(a.child_by_field_name("operator")) == "=" and \
                    _norm(unit.text(a.child_by_field_name("left"))) == \
                    f"{_ident(unit, a)} [ {index} ]":
                nest.kind, nest.bound = "store", ms.group(1)
                nest.ptr = _ident(unit, a)
                nest.value = a.child_by_field_name("right")
                return nest, ""
    return None, ("the lane access is neither a load `V[k][j] = i < LEN ? (T)P[i] : FILL;` "
                  "nor a store `if (i < LEN) { P[i] = E; }`")


def _binop(unit, node, op: str) -> bool:
    return node is not None and node.type == "binary_expression" and \
        unit.text(node.child_by_field_name("operator")) == op


def _ident(unit, assign) -> str:
    lhs = assign.child_by_field_name("left")
    if lhs.type == "subscript_expression":
        a = lhs.child_by_field_name("argument")
        if a is not None and a.type == "identifier":
            return unit.text(a)
    return "?"


def _param(site, name):
    for p in site.function.params:
        if p.name == name and p.pointer == 1:
            return p
    return None


def _elem(p) -> str:
    return " ".join(p.base_type.split()) if p is not None else ""


def _vector_text(unit, nest, vt: str, ptr: str, temp: str, restrict: bool, const: bool,
                 ind: str) -> str:
    """The vector nest (pointer declaration + loop), each line after the first indented
    from ``ind``."""
    i1 = ind + "    "
    c = "const " if const else ""
    r = "__restrict__ " if restrict else ""
    y = _strip(nest.unit_index)
    lines = [f"{c}{vt}* {r}{ptr} = reinterpret_cast<{c}{vt}*>({nest.ptr} + {nest.base});",
             f"{ind}{nest.header} {{"]
    for p in nest.pre:
        lines.append(i1 + _reindent(unit.text(p), _col(unit, p), len(i1)))
    if nest.kind == "load":
        lines.append(f"{i1}const {vt} {temp} = {ptr}[{y}];")
        for n, lane in enumerate(_LANES):
            lines.append(f"{i1}{nest.array}[{nest.k}][{n}] = {nest.cast}{temp}.{lane};")
    else:
        lines.append(f"{i1}{vt} {temp};")
        for n, lane in enumerate(_LANES):
            lines.append(f"{i1}{temp}.{lane} = {_subst(unit, nest.value, nest.j, str(n))};")
        lines.append(f"{i1}{ptr}[{y}] = {temp};")
    lines.append(f"{ind}}}")
    return "\n".join(lines)


def _col(unit, node) -> int:
    src = unit.source
    return node.start_byte - (src.rfind(b"\n", 0, node.start_byte) + 1)


def _reindent(text: str, old: int, new: int) -> str:
    """Lines after the first of ``text`` (whose first line stood at column ``old``) moved
    to column ``new``."""
    lines = text.split("\n")
    out = [lines[0]]
    for ln in lines[1:]:
        lead = len(ln) - len(ln.lstrip(" "))
        out.append(" " * max(0, lead - old + new) + ln.lstrip(" ") if ln.strip() else "")
    return "\n".join(out)


# ------------------------------------------------------------------ macros and bases
def _macros(unit) -> dict:
    out = {}
    for d in unit.nodes_of_type("preproc_def"):
        n, v = d.child_by_field_name("name"), d.child_by_field_name("value")
        if n is not None and v is not None:
            out[unit.text(n)] = unit.text(v).split("//")[0].strip()
    return out


def _const(text: str, macros: dict, depth: int = 0) -> int | None:
    """The integer value of a constant expression of literals and macros, or None."""
    if depth > 20:
        return None
    toks = lex(text)
    out = []
    for t in toks:
        if re.fullmatch(r"\d+[uUlL]*", t):
            out.append(str(int(re.sub(r"[uUlL]+$", "", t))))
        elif re.fullmatch(r"[A-Za-z_]\w*", t):
            if t not in macros:
                return None
            v = _const(macros[t], macros, depth + 1)
            if v is None:
                return None
            out.append(f"({v})")
        elif t in ("+", "-", "*", "/", "(", ")", "<<", ">>", "%"):
            out.append("//" if t == "/" else t)
        else:
            return None
    try:
        return int(eval(" ".join(out), {"__builtins__": {}}, {}))  # digits and operators only
    except Exception:
        return None


def _decl_value(unit, fn_node, name):
    for d in unit.nodes_of_type("init_declarator", within=fn_node):
        n = d.child_by_field_name("declarator")
        if n is not None and n.type == "identifier" and unit.text(n) == name:
            return d.child_by_field_name("value")
    return None


def _multiple_of_4(unit, fn_node, node, macros, depth=0) -> bool:
    """``node`` is provably a multiple of 4: a sum of products with a factor that is a
    constant multiple of 4, of such locals, or a cast of one."""
    if node is None or depth > 10:
        return False
    t = node.type
    if t == "parenthesized_expression":
        return _multiple_of_4(unit, fn_node, node.named_children[0], macros, depth + 1)
    if t == "cast_expression":
        return _multiple_of_4(unit, fn_node, node.child_by_field_name("value"), macros, depth + 1)
    c = _const(unit.text(node), macros)
    if c is not None:
        return c % 4 == 0
    if t == "identifier":
        return _multiple_of_4(unit, fn_node, _decl_value(unit, fn_node, unit.text(node)),
                              macros, depth + 1)
    if t == "binary_expression":
        op = unit.text(node.child_by_field_name("operator"))
        a, b = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op in ("+", "-"):
            return all(_multiple_of_4(unit, fn_node, x, macros, depth + 1) for x in (a, b))
        if op == "*":
            return any(_multiple_of_4(unit, fn_node, x, macros, depth + 1) for x in (a, b))
    return False


# ------------------------------------------------------------------ shared checks
def _flag_decl(site, flag):
    """The ``const bool FLAG = COND;`` declaration among the kernel body's statements."""
    unit = site.unit
    body = site.function.node.child_by_field_name("body")
    for st in _stmts(unit, body):
        if st.type != "declaration":
            continue
        ds = st.children_by_field_name("declarator")
        if len(ds) == 1 and ds[0].type == "init_declarator" and \
                unit.text(ds[0].child_by_field_name("declarator")) == flag:
            return st
    return None


def _check_flag(site, nest, flag) -> Verdict:
    unit = site.unit
    d = _flag_decl(site, flag)
    if d is None:
        return Verdict.no(f"no `const bool {flag} = ...;` among the kernel's statements: the "
                          f"run-time test of the vector path is missing")
    if _norm(unit.text(d.child_by_field_name("type"))) != "bool" or \
            "const" not in [unit.text(c) for c in d.children if c.type == "type_qualifier"]:
        return Verdict.no(f"{flag} is not a const bool")
    if d.start_byte > nest.node.start_byte:
        return Verdict.no(f"{flag} is declared after the nest")
    fn = site.function.node
    for n in unit.walk(fn):
        if n.type in ("assignment_expression", "update_expression"):
            t = n.child_by_field_name("left") or n.child_by_field_name("argument")
            if t is not None and unit.text(t) == flag:
                return Verdict.no(f"{flag} is reassigned")
    cond = _norm(unit.text(d.child_by_field_name("declarator").child_by_field_name("value")))
    if not re.search(r"\( uintptr_t \) %s\b" % re.escape(nest.ptr), cond) or \
            not re.search(r"& 15u? \) == 0", cond):
        return Verdict.no(f"{flag} does not test the 16-byte alignment of {nest.ptr} "
                          f"(`((uintptr_t){nest.ptr} & 15) == 0`)")
    if not re.search(r"<= %s\b" % re.escape(nest.bound), cond):
        return Verdict.no(f"{flag} does not bound the tile by {nest.bound} (`... <= "
                          f"{nest.bound}`)")
    return Verdict.yes(f"{flag} tests the alignment of {nest.ptr} and the tile's end "
                       f"against {nest.bound} at run time")


def _check_type(site, nest) -> Verdict:
    p = _param(site, nest.ptr)
    if p is None:
        return Verdict.no(f"{nest.ptr} is not a pointer parameter: its alignment is unknown")
    e = _elem(p)
    if e not in _VEC:
        return Verdict.no(f"{nest.ptr} points to {e or '?'}, not a 4-byte int, unsigned or float")
    return Verdict.yes(f"{nest.ptr} points to {e}: four of them are one {_VEC[e]}")


def _check_base(site, nest) -> Verdict:
    unit = site.unit
    fn = site.function.node
    b = nest.node.child_by_field_name("body")
    lane = _stmts(unit, b)[-1]
    decl = _stmts(unit, lane.child_by_field_name("body"))[0]
    v = decl.children_by_field_name("declarator")[0].child_by_field_name("value")
    base = v.child_by_field_name("left").child_by_field_name("left")
    if _multiple_of_4(unit, fn, base, _macros(unit)):
        return Verdict.yes(f"{nest.base} is a multiple of 4 elements (16 bytes)")
    return Verdict.no(f"{nest.base} is not provably a multiple of 4: the vectors would be "
                      f"misaligned")


def _check_pure(site, nest) -> Verdict:
    unit = site.unit
    if nest.kind == "load":
        return Verdict.yes(f"the load fills the register array {nest.array}")
    names = {unit.text(n) for n in unit.walk(nest.value) if n.type == "identifier"}
    if nest.ptr in names:
        return Verdict.no(f"the stored value reads {nest.ptr}, which the store writes")
    if any(n.type == "call_expression" for n in unit.walk(nest.value)) or \
            any(n.type == "assignment_expression" or n.type == "update_expression"
                for n in unit.walk(nest.value)):
        return Verdict.no("the stored value has calls or side effects")
    return Verdict.yes(f"the stored values do not read {nest.ptr}")


def _in_dispatch(unit, node):
    """The ``if (FLAG) ... else { node }`` around ``node``, or None."""
    p = node.parent
    if p is not None and p.type == "compound_statement":
        p = p.parent
    if p is not None and p.type == "else_clause":
        p = p.parent
    if p is not None and p.type == "if_statement":
        alt = p.child_by_field_name("alternative")
        if alt is not None and alt.start_byte <= node.start_byte < alt.end_byte:
            return p
    return None


# ------------------------------------------------------------------ optimize
def _nest_of(site):
    return _parse_nest(site.unit, site.node)


def _unit_nest(site, ctx) -> Verdict:
    nest, why = _nest_of(site)
    if nest is None:
        return Verdict.no(why)
    return Verdict.yes(f"a {nest.kind} of {nest.ptr} in units of 4 at {nest.base} + 4 * "
                       f"{nest.unit_index}")


def _opt_type(site, ctx) -> Verdict:
    nest, why = _nest_of(site)
    return Verdict.unknown(why) if nest is None else _check_type(site, nest)


def _opt_flag(site, ctx) -> Verdict:
    nest, why = _nest_of(site)
    return Verdict.unknown(why) if nest is None else _check_flag(site, nest, site.pass_.flag)


def _opt_base(site, ctx) -> Verdict:
    nest, why = _nest_of(site)
    return Verdict.unknown(why) if nest is None else _check_base(site, nest)


def _opt_pure(site, ctx) -> Verdict:
    nest, why = _nest_of(site)
    return Verdict.unknown(why) if nest is None else _check_pure(site, nest)


def _not_vectorized(site, ctx) -> Verdict:
    nest, why = _nest_of(site)
    if nest is None:
        return Verdict.unknown(why)
    if _in_dispatch(site.unit, site.node) is not None:
        return Verdict.no("the nest is already the scalar fallback of a dispatch")
    ptr = site.pass_.pointer_name(nest)
    fn = site.function.node
    if any(n.type == "identifier" and site.unit.text(n) in (ptr,) for n in site.unit.walk(fn)):
        return Verdict.no(f"the name {ptr} is taken in {site.function.name}")
    return Verdict.yes("not vectorized yet; the pointer name is free")


_ANCHOR = Rule(kind="for_statement", has=Rule(kind="for_statement", regex=r"\+\s*4\s*\*"))


@dataclass(frozen=True)
class VectorizeUnits(Pass):
    """Give a nest over 4-element units a 16-byte vector path behind a run-time flag.

    Before::

        for (int k = 0; k < UNITS; ++k) {
            for (int j = 0; j < 4; ++j) {
                const size_t i = warp_base + 4 * (size_t)(k * 32 + lane) + j;
                v[k][j] = i < count ? (unsigned int)in[i] : 0u;
            }
        }

    After ``vectorize-units{flag=vec_ok}``::

        if (vec_ok) {
            const int4* src = reinterpret_cast<const int4*>(in + warp_base);
            for (int k = 0; k < UNITS; ++k) {
                const int4 t = src[k * 32 + lane];
                v[k][0] = (unsigned int)t.x;
                v[k][1] = (unsigned int)t.y;
                v[k][2] = (unsigned int)t.z;
                v[k][3] = (unsigned int)t.w;
            }
        } else {
            ... the nest ...
        }

    A store nest ``{ PRE; for (j) { i = ...; if (i < LEN) { out[i] = E(j); } } }`` becomes
    ``{ PRE; int4 t; t.x = E(0); ... t.w = E(3); dst[X] = t; }`` the same way.

    Runtime facts: the flag is a GUARD the kernel computes (``const bool flag = ...``
    declared before the nest): it must test the 16-byte alignment of the pointer's
    parameter (``((uintptr_t)p & 15) == 0``, possibly or-ed with others) and bound the
    tile by LEN (``... <= LEN``). That this bound covers every unit of the nest (so the
    bounds checks may go) is the kernel author's claim, which the gate checks; the pass
    checks that the base is a multiple of 4 elements.

    Preconditions: unit-nest (layout: ``for (int k = 0; k < U; ++k) { straight-line PRE;
    for (int j = 0; j < 4; ++j) { T i = BASE + 4 * X + j; one access } }``, the access a
    load ``V[k][j] = i < LEN ? (T)P[i] : FILL;`` or a store ``if (i < LEN) { P[i] = E; }``),
    element-type (dtype: P is a pointer parameter to int, unsigned int or float),
    vector-flag (hardware: the run-time flag above), aligned-base (layout: BASE is a sum
    of products with a constant factor that is a multiple of 4, through locals and
    macros), no-self-read (storage: a stored value does not read P and has no calls),
    not-vectorized (pipeline: the nest is not already a dispatch's fallback; the pointer
    name is free).

    Options: ``flag`` (the flag local), ``ptr`` (the vector pointer: ``auto`` is ``src``
    for a load, ``dst`` for a store), ``temp`` (the vector temporary), ``restrict``
    (declare the vector pointer ``__restrict__``).
    """

    name = "vectorize-units"
    kind = "optimize"
    inverse = "scalarize-units"
    anchor = _ANCHOR
    preconditions = (
        Precondition("unit-nest", "layout", "a nest over units of 4 elements", _unit_nest),
        Precondition("element-type", "dtype", "4-byte elements of a pointer parameter",
                     _opt_type),
        Precondition("vector-flag", "hardware", "a run-time alignment and range flag",
                     _opt_flag),
        Precondition("aligned-base", "layout", "the base is a multiple of 4", _opt_base),
        Precondition("no-self-read", "storage", "the stored values do not read the target",
                     _opt_pure),
        Precondition("not-vectorized", "pipeline", "no vector path yet; fresh names",
                     _not_vectorized),
    )

    flag: str = option("vec_ok", Identifier(words=()), "the run-time flag local")
    ptr: str = option("auto", Identifier(), "the vector pointer (auto: src or dst)")
    temp: str = option("t", Identifier(words=()), "the vector temporary")
    restrict: bool = option(False, Bool(), "declare the vector pointer __restrict__")

    def pointer_name(self, nest) -> str:
        if self.ptr != "auto":
            return self.ptr
        return "src" if nest.kind == "load" else "dst"

    def rewrite(self, site, ctx):
        unit = site.unit
        nest, _ = _nest_of(site)
        p = _param(site, nest.ptr)
        vt = _VEC[_elem(p)]
        ind = " " * _col(unit, site.node)
        vec = _vector_text(unit, nest, vt, self.pointer_name(nest), self.temp, self.restrict,
                           nest.kind == "load", ind + "    ")
        scalar = _reindent(unit.text(site.node), len(ind), len(ind) + 4)
        text = (f"if ({self.flag}) {{\n{ind}    {vec}\n{ind}}} else {{\n"
                f"{ind}    {scalar}\n{ind}}}")
        return [Edit.replace(site.node, text)]

    def inverse_for(self, site, ctx):
        return ScalarizeUnits()


# ------------------------------------------------------------------ simplify
def _dispatch(site):
    """(flag, nest, vector options) of ``if (FLAG) { V } else { NEST }``, or (None, why)."""
    unit, node = site.unit, site.node
    cond = node.child_by_field_name("condition")
    ct = _norm(unit.text(cond)) if cond is not None else ""
    m = re.fullmatch(r"\( (\w+) \)", ct)
    if m is None:
        return None, "the condition is not a flag `if (flag)`"
    alt = node.child_by_field_name("alternative")
    if alt is None:
        return None, "no else branch (the scalar fallback)"
    alt_body = [c for c in alt.named_children if c.type != "comment"]
    st = _stmts(unit, alt_body[0]) if alt_body else []
    if len(st) != 1:
        return None, "the else branch is not a single loop nest"
    nest, why = _parse_nest(unit, st[0])
    if nest is None:
        return None, "the else branch is not a unit nest: " + why
    then = node.child_by_field_name("consequence")
    vs = _stmts(unit, then)
    if len(vs) != 2 or vs[0].type != "declaration":
        return None, "the then-branch is not `pointer declaration; vector loop`"
    dt = _norm(unit.text(vs[0]))
    mm = re.match(r"(?:const )?\w+ \* (__restrict__ )?(\w+) = reinterpret_cast", dt)
    if mm is None:
        return None, "the then-branch does not start with a vector pointer declaration"
    restrict, ptr = bool(mm.group(1)), mm.group(2)
    tm = re.search(r"(?:const )?\w+4 (\w+) (?:=|;)", _norm(unit.text(vs[1])))
    temp = tm.group(1) if tm else "t"
    return (m.group(1), nest, {"ptr": ptr, "temp": temp, "restrict": restrict}, then), ""


def _vector_dispatch(site, ctx) -> Verdict:
    d, why = _dispatch(site)
    if d is None:
        return Verdict.no(why)
    return Verdict.yes(f"if ({d[0]}) vector path else the {d[1].kind} nest of {d[1].ptr}")


def _vector_form(site, ctx) -> Verdict:
    d, why = _dispatch(site)
    if d is None:
        return Verdict.unknown(why)
    flag, nest, opts, then = d
    p = _param(site, nest.ptr)
    if p is None or _elem(p) not in _VEC:
        return Verdict.unknown(f"{nest.ptr} is not a pointer parameter to a 4-byte type")
    want = _vector_text(site.unit, nest, _VEC[_elem(p)], opts["ptr"], opts["temp"],
                        opts["restrict"], nest.kind == "load", "")
    if _norm("{" + want + "}") != _norm(site.unit.text(then)):
        return Verdict.no("the then-branch is not the vector form of the else-branch's nest "
                          "(what vectorize-units writes)")
    return Verdict.yes(f"the then-branch is the vector form ({opts['ptr']}, {opts['temp']})")


def _wrap(fn):
    def check(site, ctx):
        d, why = _dispatch(site)
        return Verdict.unknown(why) if d is None else fn(site, d)
    return check


@dataclass(frozen=True)
class ScalarizeUnits(Pass):
    """Drop the 16-byte vector path of a nest over 4-element units, keeping its fallback.

    Before::

        if (vec_ok) {
            int4* dst = reinterpret_cast<int4*>(out + warp_base);
            for (int k = 0; k < UNITS; ++k) {
                const unsigned int b = base + excl[k];
                int4 t;
                t.x = (int)(b + v[k][0]);
                t.y = (int)(b + v[k][1]);
                t.z = (int)(b + v[k][2]);
                t.w = (int)(b + v[k][3]);
                dst[k * 32 + lane] = t;
            }
        } else {
            for (int k = 0; k < UNITS; ++k) {
                const unsigned int b = base + excl[k];
                for (int j = 0; j < 4; ++j) {
                    const size_t i = warp_base + 4 * (size_t)(k * 32 + lane) + j;
                    if (i < count) {
                        out[i] = (int)(b + v[k][j]);
                    }
                }
            }
        }

    After ``scalarize-units``: the else-branch's nest alone. Under the flag both paths
    move the same elements with the same values; the nest is correct for every input.
    The flag's declaration stays (the inverse reuses it).

    Preconditions: vector-dispatch (layout: ``if (flag) { V } else { unit nest }``),
    element-type (dtype), vector-flag (hardware), aligned-base (layout), no-self-read
    (storage): as for ``vectorize-units``, so that the inverse applies again;
    vector-form (pipeline: V is exactly what ``vectorize-units`` writes for the nest,
    with the pointer name, temporary and ``__restrict__`` read from V).

    Options: none (``inverse_for`` gives ``vectorize-units`` with the names read from V).
    """

    name = "scalarize-units"
    kind = "simplify"
    inverse = "vectorize-units"
    anchor = Rule(kind="if_statement", regex=r"\Aif\s*\(\s*\w+\s*\)\s*\{",
                  has=Rule(pattern="reinterpret_cast<$$$T>($$$A)"))
    preconditions = (
        Precondition("vector-dispatch", "layout", "a flag dispatch with a unit-nest fallback",
                     _vector_dispatch),
        Precondition("element-type", "dtype", "4-byte elements of a pointer parameter",
                     _wrap(lambda s, d: _check_type(s, d[1]))),
        Precondition("vector-flag", "hardware", "a run-time alignment and range flag",
                     _wrap(lambda s, d: _check_flag(s, d[1], d[0]))),
        Precondition("aligned-base", "layout", "the base is a multiple of 4",
                     _wrap(lambda s, d: _check_base(s, d[1]))),
        Precondition("no-self-read", "storage", "the stored values do not read the target",
                     _wrap(lambda s, d: _check_pure(s, d[1]))),
        Precondition("vector-form", "pipeline", "the then-branch is the nest's vector form",
                     _vector_form),
    )

    def rewrite(self, site, ctx):
        d, _ = _dispatch(site)
        nest = d[1]
        unit = site.unit
        text = _reindent(unit.text(nest.node), _col(unit, nest.node), _col(unit, site.node))
        return [Edit.replace(site.node, text)]

    def inverse_for(self, site, ctx):
        d, _ = _dispatch(site)
        flag, nest, opts, _then = d
        default = "src" if nest.kind == "load" else "dst"
        return VectorizeUnits(flag=flag, ptr="auto" if opts["ptr"] == default else opts["ptr"],
                              temp=opts["temp"], restrict=opts["restrict"])
