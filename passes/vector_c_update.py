"""Vector read-modify-write of 4 consecutive floats: ``vector-c-update`` (optimize) and
``scalar-c-update`` (simplify).

``vector-c-update`` turns a 4-trip loop that updates ``base[col + j]`` element by element
(the epilogue ``C = alpha * acc + beta * C`` of a register-tiled GEMM) into one float4
load, four component updates and one float4 store, behind a guard, with the loop kept as
the fallback. ``scalar-c-update`` drops the vector branch again when it is exactly what
``vector-c-update`` writes for the loop of the ``else`` branch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.pattern import tokens
from kltrans.passes import Identifier, Pass, Precondition, option
from kltrans.passes.base import Site
from kltrans.syntax import Edit, parse
from kltrans.syntax.cuda import enclosing_function
from kltrans.analysis.affine import strip_parens as _strip
from kltrans.passes.rewrite import indent_of as line_indent, norm
from kltrans.passes.launch_facts import device_sites

COMPONENTS = ("x", "y", "z", "w")


def _only(node):
    """The single statement of a block (or the statement itself)."""
    if node is not None and node.type == "compound_statement":
        inner = [c for c in node.named_children if c.type != "comment"]
        return inner if inner else None
    return [node] if node is not None else None


@dataclass
class _Loop:
    loop: object
    j: str
    col: str  # text of the column expression
    bound: str  # text of N
    form: str  # "pointer" | "subscript"
    base: str  # text of the base pointer expression (pointer: BASE of BASE + COL + J)
    elem: str  # element type ("float")
    ptr: str  # name of the element pointer (pointer form), else ""
    expr: object  # the value node
    store: object  # the store statement's lhs node (for the subscript form)
    pragma: object = None  # a `#pragma unroll` right before the loop


def _loop_of(unit, loop) -> "_Loop | str":
    if loop is None or loop.type != "for_statement":
        return "not a for loop"
    init = loop.child_by_field_name("initializer")
    cond = loop.child_by_field_name("condition")
    upd = loop.child_by_field_name("update")
    if init is None or cond is None or upd is None:
        return "the loop header is not `for (int j = 0; j < 4; ++j)`"
    m = re.fullmatch(r"int ([A-Za-z_]\w*) = 0;?", norm(unit.text(init)))
    if not m:
        return "the loop does not start an int counter at 0"
    j = m.group(1)
    if norm(unit.text(cond)) != f"{j} < 4":
        return f"the loop bound is `{norm(unit.text(cond))}`, not `{j} < 4`"
    if norm(unit.text(upd)).replace(" ", "") not in (f"++{j}", f"{j}++", f"{j}+=1"):
        return "the loop does not step by one"
    body = _only(loop.child_by_field_name("body"))
    if not body or len(body) != 1 or body[0].type != "if_statement":
        return "the loop body is not one guarded statement"
    ifs = body[0]
    if ifs.child_by_field_name("alternative") is not None:
        return "the guard has an else branch"
    c = _strip(ifs.child_by_field_name("condition").named_children[0])
    if c.type != "binary_expression" or unit.text(c.child_by_field_name("operator")) != "<":
        return "the guard is not `col + j < n`"
    lhs = _strip(c.child_by_field_name("left"))
    if lhs.type != "binary_expression" or unit.text(lhs.child_by_field_name("operator")) != "+" \
            or unit.text(lhs.child_by_field_name("right")) != j:
        return "the guard is not `col + j < n`"
    col = lhs.child_by_field_name("left")
    bound = c.child_by_field_name("right")
    inner = _only(ifs.child_by_field_name("consequence"))
    if not inner:
        return "the guarded statement is empty"
    colt = norm(unit.text(col))
    if len(inner) == 2 and inner[0].type == "declaration":
        d = inner[0]
        ty = norm(unit.text(d.child_by_field_name("type")))
        decl = d.child_by_field_name("declarator")
        if decl.type != "init_declarator" or len(d.children_by_field_name("declarator")) != 1:
            return "the element pointer is not declared with a value"
        pd = decl.child_by_field_name("declarator")
        if pd.type != "pointer_declarator":
            return "the declaration is not an element pointer"
        ptr = unit.text(pd.child_by_field_name("declarator"))
        val = _strip(decl.child_by_field_name("value"))
        # BASE + COL + J, read as (BASE + COL) + J
        if val.type != "binary_expression" or unit.text(val.child_by_field_name("operator")) != "+" \
                or unit.text(val.child_by_field_name("right")) != j:
            return "the element pointer is not `base + col + j`"
        bc = _strip(val.child_by_field_name("left"))
        if bc.type != "binary_expression" or unit.text(bc.child_by_field_name("operator")) != "+" \
                or norm(unit.text(bc.child_by_field_name("right"))) != colt:
            return "the element pointer is not `base + col + j` with the guard's col"
        st = inner[1]
        a = st.named_children[0] if st.type == "expression_statement" and st.named_children else None
        if a is None or a.type != "assignment_expression" or \
                unit.text(a.child_by_field_name("operator")) != "=" or \
                norm(unit.text(a.child_by_field_name("left"))) != f"*{ptr}":
            return f"the statement after the pointer is not `*{ptr} = ...;`"
        return _Loop(loop, j, colt, norm(unit.text(bound)), "pointer",
                     unit.text(bc.child_by_field_name("left")), ty, ptr,
                     a.child_by_field_name("right"), a.child_by_field_name("left"))
    if len(inner) == 1 and inner[0].type == "expression_statement":
        a = inner[0].named_children[0] if inner[0].named_children else None
        if a is None or a.type != "assignment_expression" or \
                unit.text(a.child_by_field_name("operator")) != "=":
            return "the guarded statement is not a store"
        lhs = a.child_by_field_name("left")
        if lhs.type != "subscript_expression":
            return "the store is not `base[col + j] = ...`"
        idx = norm(unit.text(lhs.child_by_field_name("indices"))).strip("[]").strip()
        if idx != f"{colt} + {j}":
            return "the store is not `base[col + j] = ...` with the guard's col"
        base = lhs.child_by_field_name("argument")
        return _Loop(loop, j, colt, norm(unit.text(bound)), "subscript", unit.text(base),
                     "float", "", a.child_by_field_name("right"), lhs)
    return "the guarded statement is not `T* p = base + col + j; *p = ...;` or a store"


@dataclass
class _Span:
    start_byte: int


def _pragma_before(unit, loop):
    """The ``#pragma unroll`` line before the loop (lifted out of the tree), as a span."""
    from kltrans.syntax.cuda import pragmas_for

    ps = [p for p in pragmas_for(unit, loop) if p.name == "unroll"]
    if not ps:
        return None
    start = ps[0].start
    while unit.source[start:start + 1].isspace():
        start += 1
    return _Span(start)


def _component_expr(unit, lp: _Loop, k: int, val: str) -> str:
    """The value for component k: j := k and the element read := val.comp."""
    reps = []
    for n in unit.walk(lp.expr):
        if lp.form == "pointer" and n.type == "pointer_expression" and \
                norm(unit.text(n)) == f"*{lp.ptr}":
            reps.append((n.start_byte, n.end_byte, f"{val}.{COMPONENTS[k]}"))
        elif lp.form == "subscript" and n.type == "subscript_expression" and \
                tokens(unit, n) == tokens(unit, lp.store):
            reps.append((n.start_byte, n.end_byte, f"{val}.{COMPONENTS[k]}"))
    covered = [(a, b) for a, b, _ in reps]
    for n in unit.walk(lp.expr):
        if n.type == "identifier" and unit.text(n) == lp.j and \
                not any(a <= n.start_byte < b for a, b in covered):
            reps.append((n.start_byte, n.end_byte, str(k)))
    out, pos = [], lp.expr.start_byte
    for a, b, t in sorted(reps):
        out.append(unit.source[pos:a].decode())
        out.append(t)
        pos = b
    out.append(unit.source[pos:lp.expr.end_byte].decode())
    return norm("".join(out))


def _vector_lines(unit, lp: _Loop, guard: str, ptr: str, val: str) -> list[str]:
    """The vector branch (without the if line), relative indentation by 4 spaces."""
    p = ptr if ptr != "auto" else (lp.ptr or "p4")
    addr = f"{lp.base} + {lp.col}" if lp.form == "pointer" else f"&{lp.base}[{lp.col}]"
    reads = f"{val}.x" in _component_expr(unit, lp, 0, val)
    body = [f"float4* {p} = reinterpret_cast<float4*>({addr});",
            f"float4 {val} = *{p};" if reads else f"float4 {val};"]
    for k in range(4):
        body.append(f"{val}.{COMPONENTS[k]} = {_component_expr(unit, lp, k, val)};")
    body.append(f"*{p} = {val};")
    return body


def _generate(unit, lp: _Loop, guard: str, ptr: str, val: str, ind: str, step: str) -> str:
    """The whole if/else statement (first line without indentation)."""
    body = _vector_lines(unit, lp, guard, ptr, val)
    src = unit.source
    start = lp.pragma.start_byte if lp.pragma is not None else lp.loop.start_byte
    start = src.rfind(b"\n", 0, start) + 1
    orig = src[start:lp.loop.end_byte].decode()
    orig = "\n".join((step + ln) if ln.strip() and not ln.lstrip().startswith("#") else ln
                     for ln in orig.split("\n"))
    if guard == "auto":
        addr = f"{lp.base} + {lp.col}" if lp.form == "pointer" else f"&{lp.base}[{lp.col}]"
        head = (f"if ({lp.col} + 3 < {lp.bound} && "
                f"(reinterpret_cast<unsigned long long>({addr}) & 15ull) == 0) {{")
        lines = [head] + [ind + step + b for b in body]
    else:
        head = f"if ({guard}) {{"
        lines = [head, f"{ind}{step}if ({lp.col} < {lp.bound}) {{"] + \
            [ind + step + step + b for b in body] + [f"{ind}{step}}}"]
    lines += [f"{ind}}} else {{", orig, f"{ind}}}"]
    return "\n".join(lines)


# ------------------------------------------------------------------ preconditions
def _loop_form(site, ctx) -> Verdict:
    lp = _loop_of(site.unit, site.node)
    if isinstance(lp, str):
        return Verdict.no(lp)
    return Verdict.yes(f"a 4-trip loop updating {lp.base}[{lp.col} + {lp.j}] under "
                       f"`{lp.col} + {lp.j} < {lp.bound}`")


def _float_elem(site, ctx) -> Verdict:
    unit = site.unit
    lp = _loop_of(unit, site.node)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    if lp.form == "pointer" and lp.elem != "float":
        return Verdict.no(f"the elements are {lp.elem}, not float (float4 holds 4 floats)")
    if lp.form == "subscript":
        fn = site.function
        b = re.escape(norm(lp.base))
        decl = re.search(rf"\b(\w+)\s*\*\s*(?:const\s+)?(?:__restrict__\s+)?{b}\b",
                         unit.text(fn.node))
        if decl is None or decl.group(1) != "float":
            return Verdict.no(f"{lp.base} is not declared as a float pointer")
    return Verdict.yes("the elements are float")


def _private_lanes(site, ctx) -> Verdict:
    unit = site.unit
    lp = _loop_of(unit, site.node)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    for n in unit.walk(lp.expr):
        if n.type in ("assignment_expression", "update_expression", "call_expression"):
            if n.type == "call_expression" and unit.text(n.child_by_field_name("function")) in (
                    "fmaf", "fabsf", "min", "max", "fminf", "fmaxf"):
                continue
            return Verdict.no(f"the value `{norm(unit.text(lp.expr))[:40]}` has a side effect "
                              "or a call")
    base_name = re.match(r"[A-Za-z_]\w*", norm(lp.base)).group(0)
    reads = [n for n in unit.walk(lp.expr) if n.type == "identifier" and
             unit.text(n) == base_name]
    if lp.form == "subscript" and any(
            not (n.parent.type == "subscript_expression" and
                 tokens(unit, n.parent) == tokens(unit, lp.store)) for n in reads):
        return Verdict.no(f"the value reads {base_name} elsewhere than the element it updates")
    if lp.form == "pointer" and reads:
        return Verdict.no(f"the value reads {base_name} itself")
    return Verdict.yes("each iteration reads only the element it writes: reading all four "
                       "first gives the same values")


def _mult4(unit, node, fn, depth=0) -> bool:
    """``node`` is a multiple of 4 (literals, products, sums, shifts, const names)."""
    node = _strip(node)
    if node is None or depth > 12:
        return False
    t = node.type
    if t == "number_literal":
        try:
            return int(unit.text(node).rstrip("uUlL"), 0) % 4 == 0
        except ValueError:
            return False
    if t == "binary_expression":
        op = unit.text(node.child_by_field_name("operator"))
        a, b = node.child_by_field_name("left"), node.child_by_field_name("right")
        if op == "*":
            return _mult4(unit, a, fn, depth + 1) or _mult4(unit, b, fn, depth + 1)
        if op in ("+", "-"):
            return _mult4(unit, a, fn, depth + 1) and _mult4(unit, b, fn, depth + 1)
        if op == "<<":
            bt = unit.text(b)
            return bt.isdigit() and int(bt) >= 2
        return False
    if t == "identifier":
        name = unit.text(node)
        for d in unit.nodes_of_type("preproc_def"):
            if unit.text(d.child_by_field_name("name")) == name and d.child_by_field_name("value"):
                v = unit.text(d.child_by_field_name("value")).split("//")[0].strip()
                return v.isdigit() and int(v) % 4 == 0
        defs = []
        for d in unit.walk(fn.node):
            if d.type == "init_declarator":
                ident = d.child_by_field_name("declarator")
                if ident is not None and ident.type == "identifier" and unit.text(ident) == name:
                    defs.append(d)
            if d.type == "assignment_expression" and unit.text(d.child_by_field_name("left")) == name:
                return False
        if len(defs) == 1:
            return _mult4(unit, defs[0].child_by_field_name("value"), fn, depth + 1)
    return False


def _flag_dispatch(unit, fn, flag) -> "str | None":
    """Why ``flag`` does not promise N % 4 == 0 and 16-byte bases, or None when it does."""
    tparams = [p for p in getattr(fn, "template_params", []) or []]
    names = [getattr(p, "name", None) for p in tparams]
    if flag not in names:
        return f"{flag} is not a template parameter of {fn.name}"
    calls = [n for n in unit.nodes_of_type("call_expression")
             if re.fullmatch(rf"{re.escape(fn.name)}\s*<\s*true\s*>",
                             unit.text(n.child_by_field_name("function")))]
    if not calls:
        return f"{fn.name}<true> is never called"
    for c in calls:
        p = c.parent
        while p is not None and p.type != "if_statement":
            p = p.parent
        if p is None or not any(x.start_byte <= c.start_byte < x.end_byte for x in
                                [p.child_by_field_name("consequence")]):
            return f"{fn.name}<true> is called outside the then-branch of an if"
        cond = unit.text(p.child_by_field_name("condition"))
        caller = enclosing_function(unit, p)
        # expand local names of the condition by their declarations (two levels)
        for _ in range(2):
            for name in set(re.findall(r"[A-Za-z_]\w*", cond)):
                m = re.search(rf"\b{name}\s*=\s*([^;]*);", unit.text(caller.body))
                if m and m.group(1) and name not in ("N",):
                    cond = cond.replace(name, f"({m.group(1)})")
        return cond
    return None


def _guard_ok(site, ctx) -> Verdict:
    p = site.pass_
    unit = site.unit
    lp = _loop_of(unit, site.node)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    if p.guard == "auto":
        return Verdict.yes("the guard tests col + 3 < n and the 16-byte alignment at run time")
    cond = _flag_dispatch(unit, site.function, p.guard)
    if cond is None or not cond.startswith("("):
        return Verdict.no(cond or f"no dispatch on {p.guard}")
    n = re.escape(lp.bound)
    if not re.search(rf"\(\s*{n}\s*&\s*3\s*\)\s*==\s*0|{n}\s*%\s*4\s*==\s*0", cond):
        return Verdict.no(f"the call of {site.function.name}<true> is not guarded by "
                          f"{lp.bound} % 4 == 0")
    base_root = re.match(r"[A-Za-z_]\w*", lp.base).group(0)
    origin = re.search(rf"\b{base_root}\s*=\s*([A-Za-z_]\w*)", unit.text(site.function.body))
    ptr = origin.group(1) if origin else base_root
    if not re.search(r"&\s*15", cond) or not re.search(rf"\b{ptr}\b", cond):
        return Verdict.no(f"the call of {site.function.name}<true> does not test the 16-byte "
                          f"alignment of {ptr}")
    col = next(n for n in unit.walk(site.node) if n.type == "binary_expression"
               and norm(unit.text(n)) == f"{lp.col} + {lp.j}").child_by_field_name("left")
    if not _mult4(unit, col, site.function):
        return Verdict.no(f"{lp.col} is not a multiple of 4 as written")
    return Verdict.yes(f"{p.guard} is true only when {lp.bound} % 4 == 0 and {ptr} is 16-byte "
                       f"aligned; {lp.col} is a multiple of 4")


def _visible(unit, node, fn) -> set:
    """Names declared in the blocks around ``node`` before it, and the parameters."""
    out = {p.name for p in fn.params if p.name}
    p = node.parent
    while p is not None and p.id != fn.node.id:
        if p.type in ("compound_statement", "for_statement"):
            for c in p.named_children:
                if c.start_byte >= node.start_byte:
                    break
                if c.type == "declaration":
                    for d in c.children_by_field_name("declarator"):
                        q = d
                        while q is not None and q.type != "identifier":
                            q = q.child_by_field_name("declarator")
                        if q is not None:
                            out.add(unit.text(q))
        p = p.parent
    return out


def _fresh(site, ctx) -> Verdict:
    p = site.pass_
    unit = site.unit
    lp = _loop_of(unit, site.node)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    used = _visible(unit, lp.loop, site.function) | \
        {unit.text(n) for n in unit.walk(lp.loop) if n.type == "identifier"}
    ptr = p.ptr if p.ptr != "auto" else (lp.ptr or "p4")
    for name in (p.val, ptr):
        if name in used and name not in ({lp.ptr} if lp.ptr else set()):
            return Verdict.no(f"the name {name} is already used around or in the loop")
    if p.val == ptr:
        return Verdict.no(f"the pointer and the value are both named {p.val}")
    return Verdict.yes(f"{p.val} and {ptr} are free")


@dataclass(frozen=True)
class VectorCUpdate(Pass):
    """Update 4 consecutive floats with one float4 load and store (scalar loop as fallback).

    Before::

        for (int j = 0; j < 4; ++j) {
            if (col + j < N) {
                float* p = c_row + col + j;
                *p = alpha * acc[j] + beta * *p;
            }
        }

    After ``vector-c-update``::

        if (col + 3 < N && (reinterpret_cast<unsigned long long>(c_row + col) & 15ull) == 0) {
            float4* p = reinterpret_cast<float4*>(c_row + col);
            float4 c = *p;
            c.x = alpha * acc[0] + beta * c.x;
            ... c.y, c.z, c.w ...
            *p = c;
        } else {
            for (int j = 0; j < 4; ++j) { ...as before... }
        }

    With ``guard=VEC`` (a bool template parameter) the branch is ``if (VEC) { if (col <
    N) { ...float4... } } else { loop }``, as in corpus/sgemm/expert.cu. The loop (with
    a ``#pragma unroll`` right before it) becomes the fallback unchanged. Also accepted: a
    guarded store ``if (col + j < N) row[col + j] = f(row[col + j], j);``.

    Run-time facts: ``guard=auto`` tests them in the code (the 4 elements are inside and
    the address is 16-byte aligned). ``guard=FLAG`` takes them from the code: FLAG must be
    a bool template parameter whose ``true`` instantiation is only called under a
    condition testing ``N % 4 == 0`` (``(N & 3) == 0``) and a ``& 15`` alignment test of
    the base pointer, and ``col`` must be a multiple of 4 as written.

    Preconditions: loop-form (layout: ``for (int j = 0; j < 4; ++j)`` around ``if (col +
    j < N)`` and an element update), float-elem (dtype: float elements), private-lanes
    (storage: the value reads only the element it updates, no side effects), guard-ok
    (hardware: alignment and bounds are tested or promised by the flag's dispatch),
    fresh-names (pipeline: the float4 names are free).

    Options: ``guard`` (``auto`` or the name of a bool template parameter), ``ptr`` (name
    of the float4 pointer; auto: the loop's pointer name, else p4), ``val`` (name of the
    float4 value; default c).
    """

    name = "vector-c-update"
    kind = "optimize"
    inverse = "scalar-c-update"
    scope = "device"
    anchor = Rule(kind="for_statement")
    preconditions = (
        Precondition("loop-form", "layout", "a 4-trip loop of guarded element updates",
                     _loop_form),
        Precondition("float-elem", "dtype", "the elements are float", _float_elem),
        Precondition("private-lanes", "storage", "each iteration reads only its element",
                     _private_lanes),
        Precondition("guard-ok", "hardware",
                     "alignment and bounds are tested or promised", _guard_ok),
        Precondition("fresh-names", "pipeline", "the float4 names are free", _fresh),
    )

    guard: str = option("auto", Identifier(), "vectorization guard: auto or a bool flag")
    ptr: str = option("auto", Identifier(), "name of the float4 pointer")
    val: str = option("c", Identifier(words=()), "name of the float4 value")

    def sites(self, unit, ctx):
        out = []
        for s in device_sites(self, unit, ctx):
            if isinstance(_loop_of(unit, s.node), str) and not _guarded_store_loop(unit, s.node):
                continue
            if _in_vector_else(unit, s.node):
                continue
            out.append(Site(unit, s.match, s.function, len(out) + 1, self))
        return out

    def rewrite(self, site, ctx):
        unit = site.unit
        lp = _loop_of(unit, site.node)
        lp.pragma = _pragma_before(unit, lp.loop)
        first = lp.pragma if lp.pragma is not None else lp.loop
        start = unit.source.rfind(b"\n", 0, first.start_byte) + 1
        ind = line_indent(unit, lp.loop.start_byte)
        step = "    " if len(ind) % 4 == 0 else "  "
        text = _generate(unit, lp, self.guard, self.ptr, self.val, ind, step)
        return [Edit(start, lp.loop.end_byte, ind + text)]

    def inverse_for(self, site, ctx):
        return ScalarCUpdate()


def _guarded_store_loop(unit, loop) -> bool:
    """A counted loop whose body is one ``if (col + j < n)`` store (a near miss is a site)."""
    init = loop.child_by_field_name("initializer")
    m = re.fullmatch(r"int ([A-Za-z_]\w*) = 0;?", norm(unit.text(init))) if init else None
    body = _only(loop.child_by_field_name("body"))
    if not m or not body or len(body) != 1 or body[0].type != "if_statement":
        return False
    cond = norm(unit.text(body[0].child_by_field_name("condition")))
    return re.search(rf"\+ {m.group(1)} <", cond) is not None and \
        "=" in unit.text(body[0].child_by_field_name("consequence"))


def _in_vector_else(unit, loop) -> bool:
    """The loop is already the fallback of a vector update."""
    p = loop.parent
    if p is not None and p.type == "compound_statement":
        p = p.parent
    return p is not None and p.type == "else_clause"


# ------------------------------------------------------------------ simplify
@dataclass
class _Vec:
    ifs: object
    loop: object
    guard: str
    ptr: str
    val: str


def _vec_of(unit, ifs) -> "_Vec | str":
    if ifs is None or ifs.type != "if_statement":
        return "not an if statement"
    alt = ifs.child_by_field_name("alternative")
    if alt is None:
        return "the if has no else branch"
    stmts = [c for c in alt.named_children if c.type not in ("comment",)]
    if len(stmts) == 1 and stmts[0].type == "compound_statement":
        stmts = [c for c in stmts[0].named_children if c.type not in ("comment",)]
    loops = [s for s in stmts if s.type == "for_statement"]
    others = [s for s in stmts if s.type not in ("for_statement", "preproc_call")]
    if len(loops) != 1 or others:
        return "the else branch is not one loop"
    cons = ifs.child_by_field_name("consequence")
    text = unit.text(cons)
    m = re.search(r"float4\s*\*\s*([A-Za-z_]\w*)\s*=", text)
    v = re.search(r"float4\s+([A-Za-z_]\w*)\s*[=;]", text)
    if not m or not v:
        return "the then branch has no float4 pointer and value"
    cond = norm(unit.text(ifs.child_by_field_name("condition")))
    g = re.fullmatch(r"\(\s*([A-Za-z_]\w*)\s*\)", cond)
    return _Vec(ifs, loops[0], g.group(1) if g else "auto", m.group(1), v.group(1))


def _vector_form(site, ctx) -> Verdict:
    unit = site.unit
    v = _vec_of(unit, site.node)
    if isinstance(v, str):
        return Verdict.no(v)
    lp = _loop_of(unit, v.loop)
    if isinstance(lp, str):
        return Verdict.no(f"the else loop: {lp}")
    lp.pragma = _pragma_before(unit, v.loop)
    ptr = v.ptr if v.ptr != lp.ptr else "auto"
    want = _generate(unit, lp, v.guard, ptr, v.val, "", "    ")
    u2 = parse(("void __f() {\n" + want + "\n}\n").encode())
    b2 = u2.root.named_children[0].child_by_field_name("body")
    exp = tuple(x for s in b2.named_children for x in tokens(u2, s))
    if exp != tokens(unit, v.ifs):
        return Verdict.no("the vector branch is not what vector-c-update writes for the loop "
                          "of the else branch")
    return Verdict.yes(f"the then branch is the float4 form of the else loop (guard "
                       f"{v.guard})")


def _fallback_general(site, ctx) -> Verdict:
    unit = site.unit
    v = _vec_of(unit, site.node)
    if isinstance(v, str):
        return Verdict.unknown(v)
    lp = _loop_of(unit, v.loop)
    if isinstance(lp, str):
        return Verdict.no(f"the else loop is not the guarded element-by-element form: {lp}")
    return Verdict.yes(f"the loop guards every element with `{lp.col} + {lp.j} < {lp.bound}` "
                       "and needs no alignment: it is correct wherever the vector branch ran")


@dataclass(frozen=True)
class ScalarCUpdate(Pass):
    """Drop a float4 read-modify-write in favour of its scalar fallback loop.

    Before::

        if (VEC) {
            if (col < N) {
                float4* p = reinterpret_cast<float4*>(c_row + col);
                float4 c = *p;
                c.x = alpha * acc[i][h * 4 + 0] + beta * c.x;
                ... c.y, c.z, c.w ...
                *p = c;
            }
        } else {
        #pragma unroll
            for (int j = 0; j < 4; ++j) {
                if (col + j < N) {
                    float* p = c_row + col + j;
                    *p = alpha * acc[i][h * 4 + j] + beta * *p;
                }
            }
        }

    After ``scalar-c-update``::

        #pragma unroll
        for (int j = 0; j < 4; ++j) {
            if (col + j < N) {
                float* p = c_row + col + j;
                *p = alpha * acc[i][h * 4 + j] + beta * *p;
            }
        }

    The if statement is recognized exactly: its then branch must be what
    ``vector-c-update`` writes for the loop of its else branch (guard ``auto`` or a flag),
    so the two branches compute the same elements; the loop, which guards every element
    and needs no alignment, replaces the whole statement.

    Preconditions: fallback-general (pipeline: the else loop is the guarded
    element-by-element form, correct for every column and alignment), vector-form (layout:
    the then branch is exactly the float4 form of the else loop).

    Options: none.
    """

    name = "scalar-c-update"
    kind = "simplify"
    inverse = "vector-c-update"
    scope = "device"
    anchor = Rule(kind="if_statement")
    preconditions = (
        Precondition("fallback-general", "pipeline", "the else loop is the guarded scalar "
                     "form", _fallback_general),
        Precondition("vector-form", "layout", "the then branch is the float4 form of the "
                     "else loop", _vector_form),
    )

    def sites(self, unit, ctx):
        out = []
        for s in device_sites(self, unit, ctx):
            if "float4" not in unit.text(s.node.child_by_field_name("consequence")):
                continue
            if isinstance(_vec_of(unit, s.node), str):
                continue
            out.append(Site(unit, s.match, s.function, len(out) + 1, self))
        return out

    def rewrite(self, site, ctx):
        unit = site.unit
        v = _vec_of(unit, site.node)
        pragma = _pragma_before(unit, v.loop)
        src = unit.source
        first = pragma if pragma is not None else v.loop
        start = src.rfind(b"\n", 0, first.start_byte) + 1
        text = src[start:v.loop.end_byte].decode()
        ind = line_indent(unit, site.node.start_byte)
        inner = line_indent(unit, v.loop.start_byte)
        step = inner[len(ind):] if inner.startswith(ind) else ""
        lines = [ln[len(step):] if step and ln.startswith(ind + step) else ln
                 for ln in text.split("\n")]
        out = "\n".join(lines)
        if pragma is not None:
            return [Edit(src.rfind(b"\n", 0, site.node.start_byte) + 1, site.node.end_byte,
                         out)]
        return [Edit(site.node.start_byte, site.node.end_byte, out.lstrip(" \t"))]

    def inverse_for(self, site, ctx):
        unit = site.unit
        v = _vec_of(unit, site.node)
        if isinstance(v, str):
            return VectorCUpdate()
        lp = _loop_of(unit, v.loop)
        ptr = "auto" if isinstance(lp, str) or v.ptr == (lp.ptr or "p4") else v.ptr
        return VectorCUpdate(guard=v.guard, ptr=ptr, val=v.val)
