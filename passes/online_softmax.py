"""One-pass softmax statistics: ``online-softmax`` (optimize) and ``two-pass-softmax`` (simplify)."""

from __future__ import annotations

from dataclasses import dataclass

from kltrans.analysis.affine import resolve_name, strip_parens
from kltrans.analysis.barriers import is_builtin_call
from kltrans.analysis.loops import assigned_in
from kltrans.analysis.pointers import Aliases
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Choice, Identifier, IntRange, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.rewrite import (
    fresh_numbered as fresh, indent_of as line_indent, norm, splice, statements)

MAX_FUNCS = ("fmaxf", "fmax", "max", "::fmaxf", "::max", "std::max", "std::fmax")
EXP_FUNCS = ("expf", "__expf", "exp", "::expf", "::exp", "std::exp")
NEG_INF = ("-INFINITY", "-FLT_MAX", "-HUGE_VALF", "-CUDART_INF_F", "-INFINITY_F",
           "-std::numeric_limits<float>::infinity()", "-__int_as_float(0x7f800000)")
ZEROS = ("0", "0.0", "0.0f", "0.f", "0.0F", "0.F", "0f")
V_NAMES = ("v", "xv", "val", "elem")
MN_NAMES = ("mn", "m_new", "new_max", "mx_new")


def _op(unit, node) -> str:
    o = node.child_by_field_name("operator")
    return unit.text(o) if o is not None else ""


def _ident(unit, node) -> str | None:
    n = strip_parens(node) if node is not None else None
    return unit.text(n) if n is not None and n.type == "identifier" else None


def _call(unit, node, names) -> list | None:
    """The arguments when ``node`` is a call of one of ``names``."""
    n = strip_parens(node)
    if n is None or n.type != "call_expression":
        return None
    f = n.child_by_field_name("function")
    if f is None or norm(unit.text(f)) not in names:
        return None
    a = n.child_by_field_name("arguments")
    return [c for c in a.named_children if c.type != "comment"]


def _same_nodes(unit, root, target) -> dict:
    """node id -> None for every subtree of ``root`` spelled like ``target``."""
    key = norm(unit.text(target))
    out = {}
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == target.type and norm(unit.text(n)) == key:
            out[n.id] = n
            continue
        stack.extend(n.children)
    return out


def _subst(unit, node, mapping: dict, nodes: dict | None = None) -> str:
    """``node``'s text with identifiers renamed (``mapping``) and nodes replaced (``nodes``:
    node id -> text)."""
    reps = []
    nodes = nodes or {}
    skip: list = []
    for n in unit.walk(node):
        if any(s[0] <= n.start_byte and n.end_byte <= s[1] for s in skip):
            continue
        if n.id in nodes:
            reps.append((n.start_byte, n.end_byte, nodes[n.id]))
            skip.append((n.start_byte, n.end_byte))
        elif n.type == "identifier" and unit.text(n) in mapping:
            reps.append((n.start_byte, n.end_byte, mapping[unit.text(n)]))
    return splice(unit, node, reps)


# ------------------------------------------------------------------ recognizers
def max_update(unit, stmt):
    """``m = MAX(m, E);`` in one of its spellings: (m, the RHS node, the E node) or None."""
    if stmt is None or stmt.type != "expression_statement":
        return None
    e = stmt.named_children[0] if stmt.named_children else None
    if e is None or e.type != "assignment_expression" or _op(unit, e) != "=":
        return None
    m = _ident(unit, e.child_by_field_name("left"))
    rhs = e.child_by_field_name("right")
    if m is None:
        return None
    el = max_of(unit, rhs, m)
    return None if el is None else (m, rhs, el)


def max_of(unit, rhs, m: str):
    """The element node E when ``rhs`` is max(m, E) (fmaxf, max, or a conditional)."""
    args = _call(unit, rhs, MAX_FUNCS)
    if args is not None and len(args) == 2:
        a, b = args
        if _ident(unit, a) == m and _ident(unit, b) != m:
            return b
        if _ident(unit, b) == m and _ident(unit, a) != m:
            return a
        return None
    r = strip_parens(rhs)
    if r is None or r.type != "conditional_expression":
        return None
    cond = strip_parens(r.child_by_field_name("condition"))
    yes, no = r.child_by_field_name("consequence"), r.child_by_field_name("alternative")
    if cond is None or cond.type != "binary_expression":
        return None
    op = _op(unit, cond)
    left, right = cond.child_by_field_name("left"), cond.child_by_field_name("right")
    t = lambda n: norm(unit.text(strip_parens(n)))  # noqa: E731
    if op in (">", ">="):
        big, small = left, right
    elif op in ("<", "<="):
        big, small = right, left
    else:
        return None
    if t(yes) != t(big) or t(no) != t(small):
        return None
    if _ident(unit, small) == m and _ident(unit, big) != m:
        return big
    if _ident(unit, big) == m and _ident(unit, small) != m:
        return small
    return None


def sum_update(unit, stmt, m: str):
    """``s += EXP(E - m);`` or ``s = s + EXP(E - m);``: (s, the E node, the exp call)."""
    if stmt is None or stmt.type != "expression_statement" or not stmt.named_children:
        return None
    e = stmt.named_children[0]
    if e.type != "assignment_expression":
        return None
    s = _ident(unit, e.child_by_field_name("left"))
    rhs = e.child_by_field_name("right")
    if s is None:
        return None
    if _op(unit, e) == "+=":
        term = rhs
    elif _op(unit, e) == "=":
        r = strip_parens(rhs)
        if r.type != "binary_expression" or _op(unit, r) != "+" or \
                _ident(unit, r.child_by_field_name("left")) != s:
            return None
        term = r.child_by_field_name("right")
    else:
        return None
    args = _call(unit, term, EXP_FUNCS)
    if args is None or len(args) != 1:
        return None
    d = strip_parens(args[0])
    if d.type != "binary_expression" or _op(unit, d) != "-" or \
            _ident(unit, d.child_by_field_name("right")) != m:
        return None
    return s, d.child_by_field_name("left"), strip_parens(term)


def _single(body):
    st = statements(body)
    return st[0] if len(st) == 1 else None


def _header(unit, loop) -> str:
    return norm(unit.text((loop.start_byte, loop.child_by_field_name("body").start_byte)))


@dataclass
class _Pair:
    loop1: object
    loop2: object
    between: list
    m: str
    s: str
    max_rhs: object
    elem: object
    sum_stmt: object
    exp_call: object


def pair_of(unit, loop) -> "_Pair | str":
    """The max loop at ``loop`` and the sum loop that follows it (or why not)."""
    mu = max_update(unit, _single(loop.child_by_field_name("body")))
    if mu is None:
        return "the loop is not a max loop `m = fmaxf(m, x[j]);`"
    m, rhs, el = mu
    between = []
    sib = loop.next_named_sibling
    while sib is not None:
        if sib.type == "comment":
            sib = sib.next_named_sibling
            continue
        if sib.type == "for_statement":
            got = sum_update(unit, _single(sib.child_by_field_name("body")), m)
            if got is not None:
                s, el2, call = got
                return _Pair(loop, sib, between, m, s, rhs, el, _single(
                    sib.child_by_field_name("body")), call)
        between.append(sib)
        if len(between) > 8:
            break
        sib = sib.next_named_sibling
    return (f"no loop `s += expf(x[j] - {m});` follows the max loop in the same block (within "
            "8 statements)")


# -------------------------------------------------------------- preconditions
def _decl_type(unit, node, name) -> str | None:
    b = resolve_name(unit, node, name)
    if b.decl is None:
        return None
    ty = b.decl.child_by_field_name("type")
    return norm(unit.text(ty)) if ty is not None else None


def _reassoc(site, ctx) -> Verdict:
    unit = site.unit
    p = pair_of(unit, site.node)
    if isinstance(p, str):
        return Verdict.unknown(p)
    for name in (p.m, p.s):
        t = _decl_type(unit, p.loop2, name)
        if t not in ("float", "double"):
            return Verdict.no(f"{name} is {t or 'of an unknown type'}: the rescaled sum needs "
                              "float or double")
    if not ctx.assumed("reassoc"):
        return Verdict.unknown("the one-pass sum rescales by exp(m - m_new) as the maximum "
                               "grows: the same value up to rounding, not bit for bit; pass "
                               "--assume reassoc to accept reassociated float math")
    return Verdict.yes(f"{p.m}, {p.s}: float math reassociation accepted (--assume reassoc)")


def _same_traversal(site, ctx) -> Verdict:
    unit = site.unit
    p = pair_of(unit, site.node)
    if isinstance(p, str):
        return Verdict.no(p)
    h1, h2 = _header(unit, p.loop1), _header(unit, p.loop2)
    if h1 != h2:
        return Verdict.no(f"the loops differ: `{h1}` and `{h2}`: they do not visit the same "
                          "elements in the same order")
    e1, e2 = norm(unit.text(p.elem)), norm(unit.text(_sum_elem(unit, p)))
    if e1 != e2:
        return Verdict.no(f"the max loop reads {e1} and the sum loop {e2}: not the same array "
                          "element")
    return Verdict.yes(f"both loops are `{h1}` over {e1}")


def _sum_elem(unit, p):
    return sum_update(unit, p.sum_stmt, p.m)[1]


def _names_in(unit, node) -> set:
    return {unit.text(n) for n in unit.walk(node) if n.type == "identifier"}


def _input_unchanged(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    p = pair_of(unit, site.node)
    if isinstance(p, str):
        return Verdict.unknown(p)
    reads = _names_in(unit, p.elem) | _names_in(
        unit, p.loop1.child_by_field_name("condition") or p.loop1)
    params = [q.name for q in fn.params if q.name and q.pointer > 0]
    al = Aliases(unit, fn.node, params)
    arr = strip_parens(p.elem)
    bases = al.bases(arr.child_by_field_name("argument")) if arr.type == "subscript_expression" \
        else set()
    for st in p.between:
        line = unit.line_col(st.start_byte)[0]
        for n in unit.walk(st):
            if n.type == "assignment_expression":
                lhs = n.child_by_field_name("left")
                nm = _ident(unit, lhs)
                if nm is not None and nm in reads:
                    return Verdict.no(f"{nm} changes between the loops (line {line}): the sum "
                                      "loop would read other elements than the max loop")
                if nm is None and al.lvalue_bases(lhs) & bases:
                    return Verdict.no(f"`{norm(unit.text(n))}` (line {line}) writes the array "
                                      "the loops read")
            elif n.type == "update_expression":
                nm = _ident(unit, n.child_by_field_name("argument"))
                if nm in reads:
                    return Verdict.no(f"{nm} changes between the loops (line {line})")
            elif n.type == "call_expression" and not is_builtin_call(unit, n):
                return Verdict.unknown(f"`{norm(unit.text(n))[:50]}` (line {line}) between the "
                                       "loops may write the array the loops read")
    return Verdict.yes(f"nothing between the loops writes {norm(unit.text(p.elem))} or what "
                       "it depends on")


def _is_init(unit, node, name: str, values) -> bool | None:
    """True when ``node`` sets ``name`` to one of ``values``; False when it sets it otherwise;
    None when it does not set it."""
    for n in unit.walk(node):
        if n.type == "init_declarator":
            d = n.child_by_field_name("declarator")
            if d is not None and d.type == "identifier" and unit.text(d) == name:
                return norm(unit.text(n.child_by_field_name("value"))) in values
        if n.type == "assignment_expression" and _ident(unit, n.child_by_field_name("left")) \
                == name:
            return _op(unit, n) == "=" and norm(unit.text(n.child_by_field_name("right"))) \
                in values
    if assigned_in(unit, node, name):
        return False
    return None


def _last_set_before(unit, stmt, name: str, values):
    sib = stmt.prev_named_sibling
    while sib is not None:
        got = _is_init(unit, sib, name, values)
        if got is not None:
            return got, sib
        sib = sib.prev_named_sibling
    return None, None


def _max_feeds_sum(site, ctx) -> Verdict:
    unit = site.unit
    p = pair_of(unit, site.node)
    if isinstance(p, str):
        return Verdict.unknown(p)
    ok, _ = _last_set_before(unit, p.loop1, p.m, NEG_INF)
    if not ok:
        return Verdict.no(f"{p.m} is not set to -INFINITY right before the max loop: the "
                          "running maximum must start empty")
    ok, at = _last_set_before(unit, p.loop2, p.s, ZEROS)
    if not ok:
        return Verdict.no(f"{p.s} is not set to 0 before the sum loop")
    for st in p.between:
        line = unit.line_col(st.start_byte)[0]
        names = _names_in(unit, st)
        if p.m in names:
            return Verdict.no(f"{p.m} is used between the loops (line {line}): the one-pass "
                              "loop has no final maximum before it")
        if p.s in names and st.id != (at.id if at is not None else None):
            return Verdict.no(f"{p.s} is used between the loops (line {line})")
    return Verdict.yes(f"{p.m} starts at -INFINITY, {p.s} at 0, and {p.m} is used only by "
                       "the sum loop and after it")


def _fresh_names(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    used = {unit.text(n) for n in unit.walk(fn.node) if n.type in ("identifier",
                                                                  "type_identifier")}
    pa = site.pass_
    for opt, nm in (("value", pa.value), ("new-max", pa.new_max)):
        if nm != "auto" and nm in used:
            return Verdict.no(f"{opt}={nm}: {nm} is already used in {fn.name}")
    if pa.value != "auto" and pa.value == pa.new_max:
        return Verdict.no(f"value and new-max are both {pa.value}")
    return Verdict.yes("the temporaries get unused names")


# ------------------------------------------------------------------- the pass
def _step(unit, loop) -> str:
    body = loop.child_by_field_name("body")
    ind = line_indent(unit, loop.start_byte)
    for st in statements(body):
        inner = line_indent(unit, st.start_byte)
        if len(inner) > len(ind) and inner.startswith(ind):
            return inner[len(ind):]
    return "    " if len(ind) % 4 == 0 and ind else "  "


MAX_LOOP = Rule(kind="for_statement", inside_kernel=True)


@dataclass(frozen=True)
class OnlineSoftmax(Pass):
    """Fuse the max loop and the sum-of-exponentials loop of a softmax into one pass.

    Before::

        float m = -INFINITY;
        for (int c = 0; c < cols; ++c) {
            m = fmaxf(m, xr[c]);
        }
        float s = 0.0f;
        for (int c = 0; c < cols; ++c) {
            s += expf(xr[c] - m);
        }

    After ``online-softmax`` (with ``--assume reassoc``)::

        float m = -INFINITY;
        float s = 0.0f;
        for (int c = 0; c < cols; ++c) {
            const float v = xr[c];
            const float mn = fmaxf(m, v);
            if (mn != -INFINITY) {
                s *= expf(m - mn);
                s += expf(v - mn);
            }
            m = mn;
        }

    The running sum is rescaled by exp(m - m_new) whenever the maximum grows, so after
    the loop ``m`` and ``s`` hold what the two loops computed, up to rounding; the row is
    read once instead of twice. The guard skips elements while the maximum is still
    -INFINITY (exp(-inf - -inf) would be NaN); the two-pass sum adds exp(-inf - m) = 0
    for them. Statements between the loops (the ``s`` initialization) move before the
    fused loop. The max update may be spelled ``fmaxf(m, x)``/``max``/``fmax`` (either
    order) or ``x > m ? x : m`` (any of its four orientations); the sum ``s +=
    expf(x - m)`` or ``s = s + expf(x - m)`` with ``expf``/``__expf``/``exp``. Both loops
    must be ``for`` loops with the same header (thread-per-row ``for (c = 0; ...)`` or
    strided ``for (c = lane; c < cols; c += 32)``) and no cross-thread reduction between
    them.

    Runtime facts: none. From the context: ``--assume reassoc`` (the result differs from
    the two-pass one by rounding).

    Preconditions: reassoc (dtype: ``m`` and ``s`` are float or double, and
    ``--assume reassoc``), same-traversal (layout: a sum loop follows in the same block
    with the same header over the same element), input-unchanged (storage: nothing
    between the loops writes the array or the index variables), max-feeds-sum (pipeline:
    ``m`` starts at -INFINITY (or -FLT_MAX), ``s`` at 0, and nothing between the loops
    uses ``m``), fresh-names (pipeline: names given for the temporaries are unused).

    Options: ``value`` and ``new-max`` (the names of the two temporaries: ``auto``
    picks the first unused of v, xv, val / mn, m_new, new_max; a name must not be used in
    the kernel). The spellings of max, exp and the sum are kept from the code.
    """

    name = "online-softmax"
    kind = "optimize"
    inverse = "two-pass-softmax"
    anchor = MAX_LOOP
    preconditions = (
        Precondition("same-traversal", "layout",
                     "a sum loop follows with the same header over the same element",
                     _same_traversal),
        Precondition("reassoc", "dtype",
                     "m and s are float/double and reassociated float math is accepted "
                     "(--assume reassoc)", _reassoc),
        Precondition("input-unchanged", "storage",
                     "nothing between the loops writes the array or the index variables",
                     _input_unchanged),
        Precondition("max-feeds-sum", "pipeline",
                     "m starts at -INFINITY, s at 0, and m is used only by the sum loop and "
                     "after it", _max_feeds_sum),
        Precondition("fresh-names", "pipeline",
                     "the names given for the temporaries are unused in the kernel",
                     _fresh_names),
    )

    value: str = option("auto", Identifier(), "the name of the element temporary")
    new_max: str = option("auto", Identifier(), "the name of the new-maximum temporary")

    def sites(self, unit, ctx):
        out = [s for s in super().sites(unit, ctx)
               if max_update(unit, _single(s.node.child_by_field_name("body"))) is not None]
        return [type(s)(s.unit, s.match, s.function, k + 1, s.pass_) for k, s in enumerate(out)]

    def rewrite(self, site, ctx):
        unit, fn = site.unit, site.function
        p = pair_of(unit, site.node)
        ty = _decl_type(unit, p.loop2, p.m) or "float"
        v = self.value if self.value != "auto" else fresh(unit, fn, V_NAMES)
        mn = self.new_max if self.new_max != "auto" else fresh(unit, fn, MN_NAMES, (v,))
        ind = line_indent(unit, p.loop1.start_byte)
        st = _step(unit, p.loop1)
        i1, i2 = ind + st, ind + st + st
        max_text = _subst(unit, p.max_rhs, {},
                          {k: v for k in _same_nodes(unit, p.max_rhs, p.elem)})
        sum_text = _subst(unit, p.sum_stmt, {p.m: mn}, {_sum_elem(unit, p).id: v})
        exp_name = norm(unit.text(p.exp_call.child_by_field_name("function")))
        head = unit.text((p.loop1.start_byte, p.loop1.child_by_field_name("body").start_byte))
        fused = "\n".join([
            f"{head.rstrip()} {{",
            f"{i1}const {ty} {v} = {unit.text(p.elem)};",
            f"{i1}const {ty} {mn} = {max_text};",
            f"{i1}if ({mn} != -INFINITY) {{",
            f"{i2}{p.s} *= {exp_name}({p.m} - {mn});",
            f"{i2}{sum_text}",
            f"{i1}}}",
            f"{i1}{p.m} = {mn};",
            f"{ind}}}"])
        between = unit.text((p.between[0].start_byte, p.loop2.start_byte)) if p.between else ""
        return [Edit(p.loop1.start_byte, p.loop2.end_byte, between + fused)]

    def inverse_for(self, site, ctx):
        p = pair_of(site.unit, site.node)
        b1 = p.loop1.child_by_field_name("body").type == "compound_statement"
        b2 = p.loop2.child_by_field_name("body").type == "compound_statement"
        braces = {(True, True): "both", (False, False): "none", (True, False): "max",
                  (False, True): "sum"}[(b1, b2)]
        return TwoPassSoftmax(between=len(p.between), braces=braces)


# ------------------------------------------------------------------ the inverse
@dataclass
class _Fused:
    v: str
    mn: str
    m: str
    s: str
    elem: object
    max_rhs: object
    exp_name: str
    sum_stmt: object


def fused_of(unit, loop) -> "_Fused | str":
    st = statements(loop.child_by_field_name("body"))
    if len(st) != 4:
        return "the loop body is not the 4 statements online-softmax writes"
    d1, d2, guard, upd = st
    got = []
    for d in (d1, d2):
        if d.type != "declaration":
            return f"`{norm(unit.text(d))}` is not a declaration"
        ids = [x for x in d.named_children if x.type == "init_declarator"]
        if len(ids) != 1 or ids[0].child_by_field_name("declarator").type != "identifier":
            return f"`{norm(unit.text(d))}` does not declare one variable"
        got.append((unit.text(ids[0].child_by_field_name("declarator")),
                    ids[0].child_by_field_name("value")))
    (v, elem), (mn, rhs) = got
    if upd.type != "expression_statement" or not upd.named_children:
        return "the last statement is not `m = m_new;`"
    a = upd.named_children[0]
    if a.type != "assignment_expression" or _op(unit, a) != "=" or \
            _ident(unit, a.child_by_field_name("right")) != mn:
        return f"the last statement is not `m = {mn};`"
    m = _ident(unit, a.child_by_field_name("left"))
    el = max_of(unit, rhs, m) if m else None
    if el is None or _ident(unit, el) != v:
        return f"{mn} is not the maximum of {m} and {v}"
    if guard.type != "if_statement" or guard.child_by_field_name("alternative") is not None:
        return "the third statement is not the guard `if (m_new != -INFINITY) {...}`"
    cond = norm(unit.text(guard.child_by_field_name("condition")))
    if cond not in (f"({mn} != -INFINITY)", f"({mn} != -FLT_MAX)"):
        return f"the guard is `{cond}`, not `({mn} != -INFINITY)`"
    inner = statements(guard.child_by_field_name("consequence"))
    if len(inner) != 2:
        return "the guard does not hold a rescale and an add"
    sc = inner[0]
    if sc.type != "expression_statement" or not sc.named_children or \
            sc.named_children[0].type != "assignment_expression" or \
            _op(unit, sc.named_children[0]) != "*=":
        return "the guard does not start with `s *= expf(m - m_new);`"
    sa = sc.named_children[0]
    s = _ident(unit, sa.child_by_field_name("left"))
    args = _call(unit, sa.child_by_field_name("right"), EXP_FUNCS)
    if s is None or args is None or len(args) != 1 or \
            norm(unit.text(args[0])) != f"{m} - {mn}":
        return f"the rescale is not `s *= expf({m} - {mn});`"
    exp_name = norm(unit.text(strip_parens(sa.child_by_field_name("right"))
                              .child_by_field_name("function")))
    su = sum_update(unit, inner[1], mn)
    if su is None or su[0] != s or _ident(unit, su[1]) != v:
        return f"the add is not `{s} += expf({v} - {mn});`"
    if norm(unit.text(su[2].child_by_field_name("function"))) != exp_name:
        return "the rescale and the add use different exponentials"
    return _Fused(v, mn, m, s, elem, rhs, exp_name, inner[1])


def _online_form(site, ctx) -> Verdict:
    f = fused_of(site.unit, site.node)
    if isinstance(f, str):
        return Verdict.no(f)
    return Verdict.yes(f"one-pass (max, sum) of {norm(site.unit.text(f.elem))} into "
                       f"{f.m}, {f.s}")


def _reassoc_inv(site, ctx) -> Verdict:
    if not ctx.assumed("reassoc"):
        return Verdict.unknown("the two-pass sum rounds differently from the rescaled one: "
                               "pass --assume reassoc to accept reassociated float math")
    return Verdict.yes("float math reassociation accepted (--assume reassoc)")


_IMPURE = ("atomic", "__shfl", "curand", "clock", "__ldcv", "__ldlu", "rand")


def _pure_element(site, ctx) -> Verdict:
    unit = site.unit
    f = fused_of(unit, site.node)
    if isinstance(f, str):
        return Verdict.unknown(f)
    for n in unit.walk(f.elem):
        if n.type in ("assignment_expression", "update_expression"):
            return Verdict.no(f"{norm(unit.text(f.elem))} has a side effect: read twice, it "
                              "would happen twice")
        if n.type == "call_expression":
            name = norm(unit.text(n.child_by_field_name("function")))
            if not is_builtin_call(unit, n) or name.startswith(_IMPURE):
                return Verdict.no(f"{norm(unit.text(f.elem))} calls {name}: evaluated twice by "
                                  "the two loops, it may not give the same value")
    return Verdict.yes(f"{norm(unit.text(f.elem))} is a plain read: reading it twice gives "
                       "the same value")


def _room(site, ctx) -> Verdict:
    unit = site.unit
    n = site.pass_.between if site.pass_ else 1
    prev = []
    sib = site.node.prev_named_sibling
    while sib is not None and len(prev) < n:
        if sib.type != "comment":
            prev.append(sib)
        sib = sib.prev_named_sibling
    if len(prev) < n:
        return Verdict.no(f"between={n} but only {len(prev)} statement(s) precede the loop in "
                          "its block")
    f = fused_of(unit, site.node)
    if isinstance(f, str):
        return Verdict.unknown(f)
    for st in prev:
        if f.m in _names_in(unit, st):
            return Verdict.no(f"`{norm(unit.text(st))[:40]}` uses {f.m}: it cannot move after "
                              "the max loop")
    return Verdict.yes(f"{n} statement(s) move between the max and the sum loop")


FUSED_LOOP = Rule(kind="for_statement", inside_kernel=True)


@dataclass(frozen=True)
class TwoPassSoftmax(Pass):
    """Split a one-pass (running max, rescaled sum) loop into a max loop and a sum loop.

    Before::

        float m = -INFINITY;
        float s = 0.0f;
        for (int c = 0; c < cols; ++c) {
            const float v = xr[c];
            const float mn = fmaxf(m, v);
            if (mn != -INFINITY) {
                s *= expf(m - mn);
                s += expf(v - mn);
            }
            m = mn;
        }

    After ``two-pass-softmax``::

        float m = -INFINITY;
        for (int c = 0; c < cols; ++c) {
            m = fmaxf(m, xr[c]);
        }
        float s = 0.0f;
        for (int c = 0; c < cols; ++c) {
            s += expf(xr[c] - m);
        }

    It recognizes the loop ``online-softmax`` writes (the exact inverse); the max and
    sum spellings are read back from it. It does not split the pair-merge form of
    hand-written online softmax (``smx_add4``/``smx_merge`` helpers with a cross-lane
    merge of (max, sum) pairs, as in corpus/softmax/expert.cu): there the statistics of
    each lane are merged by warp shuffles, which two loops cannot express.

    Preconditions: online-form (layout: the 4-statement body online-softmax writes),
    reassoc (dtype: ``--assume reassoc``), pure-element (storage: the element read has
    no side effect and no call that may give another value, since it is now read twice),
    room (pipeline: ``between`` statements precede the loop and none uses ``m``).

    Options: ``between`` (0-8, default 1: how many statements before the loop go between
    the two loops, e.g. ``float s = 0.0f;``), ``braces`` (``both`` default, ``none``,
    ``max`` or ``sum``: which loop bodies get braces).
    """

    name = "two-pass-softmax"
    kind = "simplify"
    inverse = "online-softmax"
    anchor = FUSED_LOOP
    preconditions = (
        Precondition("online-form", "layout",
                     "the loop body is the one-pass form online-softmax writes", _online_form),
        Precondition("reassoc", "dtype",
                     "reassociated float math is accepted (--assume reassoc)", _reassoc_inv),
        Precondition("pure-element", "storage",
                     "the element read has no side effect (it is read twice)", _pure_element),
        Precondition("room", "pipeline",
                     "`between` statements precede the loop and none uses m", _room),
    )

    between: int = option(1, IntRange(0, 8, (0, 1, 2)),
                          "statements before the loop that go between the two loops")
    braces: str = option("both", Choice("both", "none", "max", "sum"),
                         "which loop bodies are written in braces")

    def sites(self, unit, ctx):
        out = []
        for s in super().sites(unit, ctx):
            st = statements(s.node.child_by_field_name("body"))
            if len(st) == 4 and st[2].type == "if_statement" and st[0].type == "declaration":
                out.append(s)
        return [type(s)(s.unit, s.match, s.function, k + 1, s.pass_) for k, s in enumerate(out)]

    def rewrite(self, site, ctx):
        unit = site.unit
        loop = site.node
        f = fused_of(unit, loop)
        ind = line_indent(unit, loop.start_byte)
        st = _step(unit, loop)
        head = unit.text((loop.start_byte, loop.child_by_field_name("body").start_byte))
        elem = unit.text(f.elem)
        max_stmt = f"{f.m} = {_subst(unit, f.max_rhs, {f.v: elem})};"
        sum_stmt = _subst(unit, f.sum_stmt, {f.v: elem, f.mn: f.m})

        def loop_text(stmt, brace):
            if brace:
                return f"{head}{{\n{ind}{st}{stmt}\n{ind}}}"
            return f"{head.rstrip()}\n{ind}{st}{stmt}"

        l1 = loop_text(max_stmt, self.braces in ("both", "max"))
        l2 = loop_text(sum_stmt, self.braces in ("both", "sum"))
        prev = []
        sib = loop.prev_named_sibling
        while sib is not None and len(prev) < self.between:
            if sib.type != "comment":
                prev.append(sib)
            sib = sib.prev_named_sibling
        if prev:
            first = prev[-1]
            mid = unit.text((first.start_byte, loop.start_byte))
            return [Edit(first.start_byte, loop.end_byte, f"{l1}\n{ind}{mid}{l2}")]
        return [Edit(loop.start_byte, loop.end_byte, f"{l1}\n{ind}{l2}")]

    def inverse_for(self, site, ctx):
        f = fused_of(site.unit, site.node)
        if isinstance(f, str):
            return OnlineSoftmax()
        return OnlineSoftmax(value=f.v, new_max=f.mn)


__all__ = ["OnlineSoftmax", "TwoPassSoftmax", "fused_of", "max_of", "max_update", "pair_of",
           "sum_update"]
