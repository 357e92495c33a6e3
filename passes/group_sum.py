"""The sum of a row over the G threads that share it: ``group-sum`` (optimize) and its
inverse ``direct-group-sum`` (simplify).

When a group of G threads shares a row, each thread first folds its strided slice of
the row into a partial sum, then the group adds the partials::

    float s = 0.0f;
    for (int c = gt; c < n; c += G) {          // the partial loop
        s += __bfloat162float(xr[c]);
    }
    s = WARP ? warp_sum(s) : group_sum(s, G, red[0]);

``warp_sum`` adds over the 32 lanes of a warp (``__shfl_xor_sync``, or the per-warp
``__shared__`` slots ``smem-reduce`` writes for it); ``group_sum`` adds over G threads
(a multiple of 32): the warp sums, one ``__shared__`` slot per warp, ``__syncthreads()``
and a sum of the group's slots. The *direct* form has every thread add the whole row
itself, with the partial loop's body (only what feeds ``s``) over every column::

    s = 0.0f;
    for (int c = 0; c < n; ++c) {
        s += __bfloat162float(xr[c]);
    }

no warp primitive, no shared memory, no barrier. ``direct-group-sum`` writes the direct
form; at the last call of the helpers it deletes them and the block's scratch array
(``__shared__ float red[K][T / 32];`` at the top of the kernel, passed as the last
argument of device functions whose last parameter ``float (*red)[T / 32]`` is then
unused: the parameter and the arguments go too). ``group-sum`` writes the group sum back
(and, with ``define``, the helpers and the scratch). The helper forms are matched token
for token (comments aside).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Choice, Identifier, IntRange, NameList, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.token_forms import delete_definition, indent, line_start, with_comments
from kltrans.passes.rewrite import token_text as norm

WARP_SHFL = """\
__device__ __forceinline__ float {wsum}(float v)
{{
    for (int off = 16; off > 0; off >>= 1) {{
        v += __shfl_xor_sync(0xffffffffu, v, off);
    }}
    return v;
}}"""

WARP_SMEM = """\
__device__ __forceinline__ float {wsum}(float v)
{{
    for (int off = 16; off > 0; off >>= 1) {{
        __shared__ float warp_slots[1024];
        const unsigned int slot = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
        warp_slots[slot] = v;
        __syncwarp();
        v += warp_slots[slot ^ off];
        __syncwarp();
    }}
    return v;
}}"""

GROUP = """\
// sum v over the G threads of a row group, G a multiple of 32 (every thread of the block
// calls it)
__device__ __forceinline__ float {gsum}(float v, int G, float* red)
{{
    v = {wsum}(v);
    const int warp = threadIdx.x >> 5;
    if ((threadIdx.x & 31) == 0) {{
        red[warp] = v;
    }}
    __syncthreads();
    const int W = G >> 5;
    const int first = (warp / W) * W;
    v = red[first];
    for (int w = 1; w < W; ++w) {{
        v += red[first + w];
    }}
    return v;
}}"""

SCRATCH = "__shared__ float {scratch}[{slots}][{threads} / 32];"
PARAM = "float (*{param})[{threads} / 32]"
_WARP_FORMS = {"shfl": WARP_SHFL, "smem": WARP_SMEM}
_THREAD = re.compile(r"\b(threadIdx|laneid|__lane_id)\b")


# ==================================================================== small helpers
def _stmts(block):
    return [c for c in block.named_children if c.type != "comment"]


def _functions(unit):
    return unit.kernels() + unit.device_functions()


def _function(unit, name: str):
    return next((f for f in unit.device_functions() if f.name == name), None)


def _outer(fn):
    return fn.template_node or fn.node




def _delete_line(unit, node, blank_after: bool = False) -> Edit:
    src = unit.source
    s = line_start(src, node.start_byte)
    e = src.find(b"\n", node.end_byte)
    e = len(src) if e < 0 else e + 1
    if blank_after and src[e:e + 1] == b"\n":
        e += 1
    return Edit.delete(s, e)


def _call_name(unit, call) -> str:
    f = call.child_by_field_name("function")
    if f is not None and f.type == "template_function":
        f = f.child_by_field_name("name")
    return unit.text(f) if f is not None else ""


def _calls(unit, names: set) -> list:
    return [n for n in unit.walk(unit.root) if n.type == "call_expression"
            and _call_name(unit, n) in names]


def _args(call) -> list:
    a = call.child_by_field_name("arguments")
    return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def _helper_form(unit, wsum: str) -> str | None:
    """``shfl`` or ``smem`` when ``wsum`` is a warp-sum helper of the file, else None."""
    fn = _function(unit, wsum)
    if fn is None:
        return None
    text = norm(unit.text(_outer(fn)))
    for form, t in _WARP_FORMS.items():
        if text == norm(t.format(wsum=wsum)):
            return form
    return None


def _group_ok(unit, gsum: str, wsum: str) -> bool:
    fn = _function(unit, gsum)
    return fn is not None and norm(unit.text(_outer(fn))) == norm(GROUP.format(gsum=gsum,
                                                                               wsum=wsum))


# ================================================================ the partial loop
@dataclass
class Partial:
    loop: object
    var: str  # c
    start: str  # gt
    bound: str  # n
    step: str  # G
    body: list  # statements
    keep: list  # the statements feeding V (declarations and V's folds)


def _fold_target(unit, st) -> str | None:
    """``A`` for a fold statement ``A += E;`` or ``A = E + A;``, else None."""
    if st.type != "expression_statement" or not st.named_children:
        return None
    e = st.named_children[0]
    if e.type != "assignment_expression":
        return None
    op = unit.text(e.child_by_field_name("operator"))
    left = e.child_by_field_name("left")
    if left.type != "identifier":
        return None
    a = unit.text(left)
    if op == "+=":
        return a
    if op == "=":
        r = norm(unit.text(e.child_by_field_name("right")))
        if r.endswith(f"+ {a}") or r.startswith(f"{a} +"):
            return a
    return None


def _partial_loop(unit, loop, v: str) -> "Partial | str":
    init = loop.child_by_field_name("initializer")
    m = re.fullmatch(r"for \( int (\w+) = (\w+) ; \1 < (\w+) ; \1 \+= (\w+) \)",
                     norm(unit.text(loop)[:unit.text(loop).index(")") + 1]))
    if init is None or m is None:
        return "the loop is not `for (int c = GT; c < N; c += G)`"
    body = loop.child_by_field_name("body")
    if body is None or body.type != "compound_statement":
        return "the loop body is not a block"
    sts = _stmts(body)
    keep = []
    for st in sts:
        if st.type == "declaration":
            keep.append(st)
            continue
        a = _fold_target(unit, st)
        if a is None:
            return f"`{norm(unit.text(st))}` in the partial loop is not a declaration or a fold"
        if a == v:
            keep.append(st)
    if not any(_fold_target(unit, st) == v for st in sts):
        return f"the loop does not fold {v}"
    return Partial(loop, m.group(1), m.group(2), m.group(3), m.group(4), sts, keep)


def _previous(node):
    p = node.prev_named_sibling
    while p is not None and p.type == "comment":
        p = p.prev_named_sibling
    return p


def _find_partial(unit, stmt, v: str) -> "Partial | str":
    """The nearest loop before ``stmt`` in its block that assigns ``v``; the statements in
    between do not mention ``v``."""
    p = _previous(stmt)
    while p is not None:
        mentions = any(n.type == "identifier" and unit.text(n) == v for n in unit.walk(p))
        if p.type == "for_statement" and mentions:
            got = _partial_loop(unit, p, v)
            if isinstance(got, Partial):
                return got
            return got
        if mentions:
            return f"`{norm(unit.text(p))[:60]}` uses {v} between the partial loop and the sum"
        p = _previous(p)
    return f"no partial loop folding {v} comes before the sum in its block"


def direct_text(unit, part: Partial, v: str) -> str:
    """The direct form of the sum of ``v``: the whole row, with the partial loop's body."""
    src = unit.source
    body = part.loop.child_by_field_name("body")
    ind = src[line_start(src, part.keep[0].start_byte):part.keep[0].start_byte].decode() \
        if part.keep else "    "
    lind = src[line_start(src, part.loop.start_byte):part.loop.start_byte].decode()
    step = ind[len(lind):] if ind.startswith(lind) else "    "
    lines = [f"{v} = 0.0f;", f"for (int {part.var} = 0; {part.var} < {part.bound}; ++{part.var}) {{"]
    for st in part.keep:
        lines.append(step + unit.text(st))
    lines.append("}")
    del body
    return "\n".join(lines)


# ================================================================= what is found
@dataclass
class Found:
    stmt: object
    v: str
    form: str  # ternary | group | warp
    flag: str
    wsum: str
    gsum: str
    G: str
    scratch: str  # the scratch argument's root name ("" for warp)
    slot: int  # its index (-1: none)
    part: Partial
    warp_form: str = "smem"
    last: bool = False
    cleanup: dict = field(default_factory=dict)  # last: scratch decl, params, args


_SUM = re.compile(r"(?P<v>\w+) = (?:\( )?(?:(?P<flag>\w+) \? (?P<w1>\w+) \( (?P=v) \) : )?"
                  r"(?P<call>\w+) \( (?P=v)(?: , (?P<G>\w+) , (?P<red>\w+)(?: \[ (?P<slot>\d+) \])?)? \)"
                  r"(?: \))? ;")


def _simplify_find(site) -> "Found | str":
    unit, st = site.unit, site.node
    m = _SUM.fullmatch(norm(unit.text(st)))
    if m is None:
        return "not `V = [FLAG ? WARP_SUM(V) :] GROUP_SUM(V, G, RED[K]);` or `V = WARP_SUM(V);`"
    v, flag, w1, call = m.group("v"), m.group("flag"), m.group("w1"), m.group("call")
    if m.group("G") is None:
        if flag is not None:
            return "the ternary's second call is not GROUP_SUM(V, G, RED[K])"
        form, wsum, gsum = "warp", call, ""
    else:
        form = "ternary" if flag else "group"
        gsum = call
        wsum = w1
        if wsum is None:
            g = _function(unit, gsum)
            mm = re.search(r"v = (\w+) \( v \) ;", norm(unit.text(g.body))) if g else None
            wsum = mm.group(1) if mm else ""
    wf = _helper_form(unit, wsum)
    if wf is None:
        return f"{wsum} is not a warp-sum helper (shuffle or per-warp shared slots)"
    if form != "warp" and not _group_ok(unit, gsum, wsum):
        return f"{gsum} is not the group-sum helper (warp sums, a shared slot per warp, a barrier)"
    part = _find_partial(unit, st, v)
    if isinstance(part, str):
        return part
    f = Found(st, v, form, flag or "", wsum, gsum, m.group("G") or "", m.group("red") or "",
              int(m.group("slot")) if m.group("slot") else -1, part, wf)
    _last(unit, f)
    return f


def _last(unit, f: Found):
    """Whether the site is the helpers' last call, and what goes with them."""
    helpers = {f.wsum} | ({f.gsum} if f.gsum else set())
    hdefs = [_outer(_function(unit, h)) for h in helpers if _function(unit, h)]
    if f.form == "warp":
        gs = [g for g in unit.device_functions() if g.name != f.wsum and _group_ok(unit, g.name, f.wsum)]
        hdefs += [_outer(g) for g in gs]
        helpers |= {g.name for g in gs}
    inside = lambda n: any(d.start_byte <= n.start_byte < d.end_byte for d in hdefs) or \
        f.stmt.start_byte <= n.start_byte < f.stmt.end_byte
    f.last = not [c for c in _calls(unit, helpers) if not inside(c)]
    f.cleanup = {"helpers": sorted(helpers), "scratch": None}
    if not f.last:
        return
    # the scratch: `__shared__ float S[K][T / 32];`, first in a kernel body, used only as the
    # last argument of device functions whose last parameter is then unused
    for k in unit.kernels():
        sts = _stmts(k.body)
        if not sts:
            continue
        mk = re.fullmatch(r"__shared__ float (\w+) \[ (\d+) \] \[ (\w+) / 32 \] ;",
                          norm(unit.text(sts[0])))
        if mk is None:
            continue
        name, slots, threads = mk.group(1), int(mk.group(2)), mk.group(3)
        uses = [n for n in unit.walk(k.body) if n.type == "identifier" and unit.text(n) == name
                and not sts[0].start_byte <= n.start_byte < sts[0].end_byte and not inside(n)]
        args, fns = [], {}
        ok = True
        for u in uses:
            call = u.parent.parent if u.parent is not None else None
            if call is None or u.parent.type != "argument_list" or call.type != "call_expression" \
                    or _args(call)[-1].id != u.id:
                ok = False
                break
            fname = _call_name(unit, call)
            fn = _function(unit, fname)
            if fn is None or not fn.params:
                ok = False
                break
            fns[fname] = fn
            args.append(call)
        if not ok or not fns:
            continue
        params = {}
        for fname, fn in fns.items():
            p = fn.params[-1]
            pdecl = _param_decls(unit, fn)[-1]
            want = norm(PARAM.format(param=p.name, threads=threads))
            if norm(unit.text(pdecl)) != want:
                ok = False
                break
            pu = [n for n in unit.walk(fn.body) if n.type == "identifier"
                  and unit.text(n) == p.name and not inside(n)]
            if pu:
                ok = False
                break
            params[fname] = (fn, pdecl, p.name)
        if not ok:
            continue
        names = {p[2] for p in params.values()}
        if len(names) != 1:
            continue
        f.cleanup["scratch"] = dict(decl=sts[0], name=name, slots=slots, threads=threads,
                                    calls=args, params=params, param=names.pop())
        return


def _param_decls(unit, fn) -> list:
    d = fn.node.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    return [c for c in d.child_by_field_name("parameters").named_children
            if c.type == "parameter_declaration"]


def _optimize_find(site) -> "Found | str":
    unit, st, p = site.unit, site.node, site.pass_
    m = re.fullmatch(r"(\w+) = 0\.0f ;", norm(unit.text(st)))
    if m is None:
        return "not `V = 0.0f;`"
    v = m.group(1)
    loop = st.next_named_sibling
    while loop is not None and loop.type == "comment":
        loop = loop.next_named_sibling
    if loop is None or loop.type != "for_statement":
        return f"`{v} = 0.0f;` is not followed by the direct loop"
    part = _find_partial(unit, st, v)
    if isinstance(part, str):
        return part
    want = norm(direct_text(unit, part, v))
    got = norm(unit.text(st) + " " + unit.text(loop))
    if got != want:
        return (f"the loop after `{v} = 0.0f;` is not the partial loop's fold of {v} over the "
                f"whole row (`for (int {part.var} = 0; {part.var} < {part.bound}; ++{part.var})`)")
    f = Found(st, v, p.form, p.flag, p.warp, p.group, part.step, p.scratch, p.slot, part,
              p.warp_form)
    f.cleanup = {"loop": loop}
    return f


def _find(site):
    return _simplify_find(site) if site.pass_.kind == "simplify" else _optimize_find(site)


def _check(f):
    def check(site, ctx) -> Verdict:
        got = _find(site)
        if isinstance(got, str):
            return Verdict.unknown(got)
        return f(site, ctx, got)
    return check


# =================================================================== preconditions
def _form(site, ctx, f: Found) -> Verdict:
    unit = site.unit
    if site.pass_.kind == "simplify":
        tail = ""
        if f.last:
            tail = f"; the last call: {', '.join(f.cleanup['helpers'])} go"
            sc = f.cleanup["scratch"]
            if sc:
                tail += f", with the scratch {sc['name']} and the parameter {sc['param']}"
        return Verdict.yes(f"{f.v} is summed over the group ({f.form}: {f.wsum}"
                           f"{', ' + f.gsum if f.gsum else ''}) after the partial loop" + tail)
    p = site.pass_
    defs = p.define
    if defs == "none":
        if _helper_form(unit, p.warp) != p.warp_form:
            return Verdict.no(f"{p.warp} is not the {p.warp_form} warp-sum helper (define=none)")
        if p.form != "warp" and not _group_ok(unit, p.group, p.warp):
            return Verdict.no(f"{p.group} is not the group-sum helper (define=none)")
    else:
        mine = (p.warp,) if defs == "warp" else (p.warp, p.group)
        taken = [n for n in mine if n and (_function(unit, n) or any(
            fn.name == n for fn in unit.kernels()))]
        if defs == "warp" and p.form != "warp":
            return Verdict.no("define=warp writes only the warp-sum helper: the form needs the "
                              "group-sum helper too")
        if taken:
            return Verdict.no(f"define={defs}: {', '.join(taken or [p.warp])} is defined already")
        if defs == "helpers+scratch":
            if p.scratch == "none" or p.param == "none" or p.fns == "all":
                return Verdict.no("define=helpers+scratch needs scratch, param and fns")
            if any(unit.text(n) == p.scratch for n in unit.walk(unit.root) if n.type == "identifier"):
                return Verdict.no(f"the scratch name {p.scratch} is taken")
    if p.form != "warp" and p.scratch != "none" and defs != "helpers+scratch" and \
            not _in_scope(unit, site.function, p.scratch):
        return Verdict.no(f"the scratch {p.scratch} is not declared where {site.function.name} "
                          f"can use it (define={defs} does not write it)")
    return Verdict.yes(f"`{f.v} = 0.0f;` and the whole-row loop are the direct form of the "
                       f"partial loop at line {unit.line_col(f.part.loop.start_byte)[0]}")


def _strided(site, ctx, f: Found) -> Verdict:
    unit, fn = site.unit, site.function
    part = f.part
    if f.form != "warp" and part.step != f.G:
        return Verdict.no(f"the partial loop strides by {part.step}, the group sum adds groups "
                          f"of {f.G}")
    if f.form == "warp" and part.step != "32" and not (
            re.fullmatch(r"\w+", part.step) and _evaluate(unit, part.step) == 32):
        return Verdict.no(f"the partial loop strides by {part.step}: a warp sum adds 32 lanes")
    for st in part.keep:
        t = unit.text(st)
        if _THREAD.search(t) or re.search(rf"\b{re.escape(part.start)}\b", t):
            return Verdict.no(f"`{norm(t)}` depends on the thread: the threads of a group would "
                              "not sum the same row")
    if f.form == "ternary":
        v = _flag_implies_warp(unit, fn, f.flag, f.G)
        if v is not None:
            return v
    return Verdict.yes(f"the group's threads {part.start} = 0 .. {part.step} - 1 cover the "
                       f"row [0, {part.bound}) with stride {part.step}")


def _in_scope(unit, fn, name: str) -> bool:
    """``name`` is used or declared in ``fn`` (its template and parameters included), or
    declared outside every function (a global, a macro): a name the rewrite may write
    there. Lenient where the file nests functions in preprocessor blocks (the gate's
    compile decides those)."""
    if any(n.type == "identifier" and unit.text(n) == name for n in unit.walk(_outer(fn))):
        return True
    funcs = ("function_definition", "template_declaration")
    for top in unit.root.named_children:
        if top.type in funcs:
            continue
        if any(n.type == "identifier" and unit.text(n) == name for n in unit.walk(top)):
            return True
    return False


def _evaluate(unit, text: str):
    from kltrans.syntax.contract import evaluate, file_constants

    try:
        return int(evaluate(text, file_constants(unit)))
    except Exception:
        return None


def _flag_implies_warp(unit, fn, flag: str, g: str) -> "Verdict | None":
    """For ``FLAG ? warp_sum : group_sum(v, G, ...)`` in a function template on ``bool FLAG``:
    every call with FLAG true passes 32 for G."""
    if not _in_scope(unit, fn, flag):
        return Verdict.no(f"{flag} is not declared where {fn.name} can use it")
    if fn.template_node is None:
        return Verdict.unknown(f"{flag} is not a template parameter of {fn.name}: cannot tell "
                               f"that {flag} means G == 32")
    ps = norm(unit.text(fn.template_node.child_by_field_name("parameters")))
    if ps != f"< bool {flag} >":
        return Verdict.unknown(f"{fn.name} is not `template <bool {flag}>`")
    k = next((i for i, p in enumerate(fn.params) if p.name == g), None)
    if k is None:
        return Verdict.unknown(f"{g} is not a parameter of {fn.name}")
    calls = _calls(unit, {fn.name})
    for c in calls:
        m = re.match(r"\w+ < (\w+) >", norm(unit.text(c)))
        if m is None:
            return Verdict.unknown(f"a call of {fn.name} does not name {flag}")
        a = _args(c)
        if m.group(1) == "true" and (k >= len(a) or _evaluate(unit, unit.text(a[k])) != 32):
            return Verdict.no(f"{fn.name}<true> is called with {g} = "
                              f"{unit.text(a[k]) if k < len(a) else '?'}: the warp sum would "
                              "not cover the group")
    return None


def _reassoc(site, ctx, f: Found) -> Verdict:
    if ctx.assumed("reassoc"):
        return Verdict.yes("reassociation is allowed (partial sums added over the group round "
                           "differently from one sequential sum)")
    return Verdict.unknown("the group's partial sums round differently from one sequential "
                           "sum; pass --assume reassoc")


def _stable(site, ctx, f: Found) -> Verdict:
    unit, fn = site.unit, site.function
    arrays = set()
    for st in f.part.keep:
        for n in unit.walk(st):
            if n.type == "subscript_expression":
                a = n.child_by_field_name("argument")
                if a is not None and a.type == "identifier":
                    arrays.add(unit.text(a))
    for n in unit.walk(fn.node):
        if n.type == "assignment_expression":
            left = n.child_by_field_name("left")
            if left.type == "subscript_expression":
                a = left.child_by_field_name("argument")
                if a is not None and unit.text(a) in arrays:
                    return Verdict.no(f"{unit.text(a)} is written in {fn.name}: the direct loop "
                                      "and the partial loop would read different data")
    ptrs = {p.name: p for p in fn.params if p.pointer}
    for a in sorted(arrays):
        p = ptrs.get(a)
        if p is not None and not p.const:
            return Verdict.no(f"{a} is not a const pointer: the row may change between reads")
        others = [o for o, q in ptrs.items() if o != a and not q.const]
        bad = [o for o in others if not ctx.assumed("no_alias", a, o)]
        if p is not None and bad:
            return Verdict.unknown(f"{a} may overlap {bad[0]}: pass --assume "
                                   f"'no_alias({a},{bad[0]})'")
    return Verdict.yes(f"the row ({', '.join(sorted(arrays)) or 'no array'}) is read-only here")


def _barrier(site, ctx, f: Found) -> Verdict:
    if f.form == "warp":
        return Verdict.yes("a warp sum has no block barrier")
    # optimize: the barrier written must be reached by every thread; simplify: the group
    # sum is only the sum of the group when every thread reaches it
    return _uniform(site, site.node)


def _ends_in_return(block) -> bool:
    sts = _block_stmts(block)
    return bool(sts) and sts[-1].type == "return_statement"


def _block_stmts(node):
    if node is None:
        return []
    return _stmts(node) if node.type == "compound_statement" else [node]


def _uniform(site, node) -> Verdict:
    """Every thread of the block reaches ``node``: the conditions around it do not depend on
    the thread, and every earlier ``return`` sits under a thread-independent ``if`` whose
    branch ends in ``return`` (the threads that take it all leave) or is taken by no
    thread that reaches ``node``."""
    from kltrans.passes.expr_facts import text_thread_dependent as _thread_dependent

    unit, fn = site.unit, site.function
    body = fn.node.child_by_field_name("body")
    n = node
    while n is not None and n.id != body.id:
        p = n.parent
        if p is not None and p.type in ("if_statement", "while_statement", "for_statement",
                                        "do_statement"):
            c = p.child_by_field_name("condition")
            if c is not None and c.id != n.id and _thread_dependent(unit, fn, unit.text(c),
                                                                     p.start_byte):
                return Verdict.no(f"the sum sits under `{norm(unit.text(c))}`, which depends "
                                  "on the thread: not every thread would reach its barrier")
        n = p
    for r in unit.nodes_of_type("return_statement", within=fn.node):
        if r.start_byte >= node.start_byte:
            continue
        q, ok = r.parent, False
        while q is not None and q.id != body.id:
            if q.type == "if_statement" and not (q.start_byte <= node.start_byte < q.end_byte):
                c = q.child_by_field_name("condition")
                cons = q.child_by_field_name("consequence")
                if not _thread_dependent(unit, fn, unit.text(c), q.start_byte) and \
                        cons.start_byte <= r.start_byte < cons.end_byte and _ends_in_return(cons) \
                        and q.child_by_field_name("alternative") is None:
                    ok = True
                    break
            q = q.parent
        if not ok:
            return Verdict.no(f"a `return` at line {unit.location(r.start_byte).line} may let "
                              "some threads of the block leave before the sum's barrier")
    return Verdict.yes("every thread of the block reaches the sum (uniform conditions; "
                       "earlier returns are taken by whole blocks)")


def _whole_warps(site, ctx, f: Found) -> Verdict:
    from kltrans.syntax.contract import contracts, evaluate, file_constants

    unit = site.unit
    try:
        env = file_constants(unit)
        cs = contracts(unit)
        blocks = [[evaluate(x, env) for x in c.block] for c in cs.values()]
    except Exception as e:
        return Verdict.unknown(f"the block size cannot be evaluated ({e})")
    if not blocks:
        return Verdict.unknown("no launch header: the block size is unknown")
    for b in blocks:
        if b[1:] not in ([], [1], [1, 1]) or b[0] % 32:
            return Verdict.no(f"the block {b} is not one-dimensional whole warps: the warp sum "
                              "needs every lane")
    return Verdict.yes(f"blocks of {', '.join(str(b[0]) for b in blocks)} threads: whole warps")


def _no_twin(site, ctx) -> Verdict:
    """Simplify only. A register twin (``cache-bf16-row``) is matched against the body of
    the scalar row function it was written from; changing that body first leaves a twin
    that ``reload-bf16-row`` no longer recognizes, and the walk ends short of naive."""
    from kltrans.passes.bf16_twin import twin_of

    fn = site.function
    twin = twin_of(site.unit, fn.name) if fn is not None else None
    if twin:
        return Verdict.no(f"{twin} is the register twin of {fn.name}, written from its body: "
                          f"reload-bf16-row drops it first")
    return Verdict.yes("no register twin is written from " + (fn.name if fn else "it"))


def _preconditions():
    return (
        Precondition("sum-form", "pipeline",
                     "a group sum through the helpers of this module after a partial loop "
                     "(optimize: the direct form of that loop)", _check(_form)),
        Precondition("strided-partial", "layout",
                     "the partial loop strides by the group size from the thread's rank; "
                     "its body does not depend on the thread", _check(_strided)),
        Precondition("reassoc", "dtype", "the sum may be reassociated (context)",
                     _check(_reassoc)),
        Precondition("row-stable", "storage", "the row is not written while it is summed",
                     _check(_stable)),
        Precondition("uniform-barrier", "pipeline",
                     "every thread of the block reaches the group sum's barrier",
                     _check(_barrier)),
        Precondition("whole-warps", "hardware", "one-dimensional blocks of whole warps",
                     _check(_whole_warps)),
    )


def _expr(p, v: str, g: str) -> str:
    red = "" if p.scratch == "none" else (p.scratch if p.slot < 0 else f"{p.scratch}[{p.slot}]")
    gcall = f"{p.group}({v}, {g}, {red})"
    if p.form == "warp":
        return f"{p.warp}({v})"
    if p.form == "group":
        return gcall
    return f"{p.flag} ? {p.warp}({v}) : {gcall}"


# ======================================================================= the passes
@dataclass(frozen=True)
class GroupSum(Pass):
    """Sum a row over the G threads that share it: each adds its strided slice, then the
    group adds the partial sums (warp shuffles, one shared slot per warp).

    Before (after the partial loop ``for (int c = gt; c < n; c += G) { s += f(c); }``)::

        s = 0.0f;
        for (int c = 0; c < n; ++c) {
            s += f(c);
        }

    After ``group-sum{form=ternary,flag=WARP}``::

        s = WARP ? ln_warp_sum(s) : ln_group_sum(s, G, red[0]);

    ``form=group`` writes ``ln_group_sum(s, G, red[0])``, ``form=warp`` ``ln_warp_sum(s)``
    (G is the partial loop's step). ``define=helpers`` also writes the two helpers in
    front of the first function (``define=warp``: only the warp-sum helper) (``warp_form``: shuffles, or the per-warp shared slots
    ``smem-reduce`` writes); ``define=helpers+scratch`` also writes the block's scratch
    ``__shared__ float red[slots][threads / 32];`` at the top of the kernel body and
    passes it as a new last parameter ``float (*red)[threads / 32]`` (``param``) to the
    device functions ``fns``, at every call.

    Runtime facts: reassociation (``--assume reassoc``: the partial sums round
    differently), that the row does not overlap the outputs (``no_alias``); whole warps
    per group come from the launch header. Nothing is guarded.

    Preconditions: sum-form (pipeline: the direct form of the partial loop; ``define``
    fits the file; a scratch it does not write is declared where the function can use
    it), strided-partial (layout: the partial loop strides by the group from the thread's
    rank, its body does not depend on the thread; a ternary's flag is declared, a
    ``template <bool FLAG>`` whose true calls pass G = 32), reassoc (dtype: context),
    row-stable (storage: the row is const and not written), uniform-barrier (pipeline:
    every thread of the block reaches the group sum), whole-warps (hardware).

    Options: ``form`` (ternary, group, warp), ``flag`` (WARP), ``warp`` (ln_warp_sum),
    ``group`` (ln_group_sum), ``scratch`` (red, or none), ``slot`` (the scratch row, -1:
    none), ``warp_form`` (shfl, smem), ``define`` (none, warp, helpers, helpers+scratch),
    ``param`` (the scratch parameter's name), ``fns`` (the functions that get it, f+g),
    ``slots`` and ``threads`` (the scratch's shape).
    """

    name = "group-sum"
    kind = "optimize"
    inverse = "direct-group-sum"
    scope = "device"
    anchor = Rule(kind="expression_statement", regex=r"^\w+\s*=\s*0\.0f\s*;$")
    preconditions = _preconditions()

    form: str = option("ternary", Choice("ternary", "group", "warp"), "the sum written")
    flag: str = option("WARP", Identifier(), "the one-warp flag of the ternary form")
    warp: str = option("ln_warp_sum", Identifier(), "the warp-sum helper")
    group: str = option("ln_group_sum", Identifier(), "the group-sum helper")
    scratch: str = option("red", Identifier(), "the scratch argument's array (or none)")
    slot: int = option(0, IntRange(-1, 64), "the scratch row passed (-1: the array itself)")
    warp_form: str = option("smem", Choice("shfl", "smem"), "how the warp-sum helper adds")
    define: str = option("none", Choice("none", "warp", "helpers", "helpers+scratch"),
                         "which definitions to write")
    param: str = option("red", Identifier(), "the scratch parameter's name")
    fns: str = option("all", NameList(), "the functions that take the scratch (f+g)")
    slots: int = option(2, IntRange(1, 64), "rows of the scratch")
    threads: str = option("LN_THREADS", Identifier(), "the block size macro of the scratch")

    def rewrite(self, site, ctx):
        f = _optimize_find(site)
        unit = site.unit
        loop = f.cleanup["loop"]
        edits = [Edit(site.node.start_byte, loop.end_byte, f"{f.v} = {_expr(self, f.v, f.G)};")]
        if self.define == "none":
            return edits
        first = min((_outer(fn) for fn in _functions(unit)), key=lambda n: n.start_byte)
        at = with_comments(unit, first)
        text = _WARP_FORMS[self.warp_form].format(wsum=self.warp) + "\n\n"
        if self.define != "warp":
            text += GROUP.format(gsum=self.group, wsum=self.warp) + "\n\n"
        edits.append(Edit.insert(at, text))
        if self.define == "helpers+scratch":
            names = NameList.names(self.fns) or set()
            for k in unit.kernels():
                sts = _stmts(k.body)
                if sts:
                    ind = unit.source[line_start(unit.source, sts[0].start_byte):
                                      sts[0].start_byte].decode()
                    edits.append(Edit.insert(line_start(unit.source, sts[0].start_byte),
                                             ind + SCRATCH.format(scratch=self.scratch,
                                                                  slots=self.slots,
                                                                  threads=self.threads) + "\n\n"))
            for fname in sorted(names):
                fn = _function(unit, fname)
                pd = _param_decls(unit, fn)[-1]
                edits.append(Edit.insert(pd.end_byte, ", " + PARAM.format(param=self.param,
                                                                           threads=self.threads)))
                for c in _calls(unit, {fname}):
                    edits.append(Edit.insert(_args(c)[-1].end_byte, f", {self.scratch}"))
        return edits

    def inverse_for(self, site, ctx):
        return DirectGroupSum()


@dataclass(frozen=True)
class DirectGroupSum(Pass):
    """Replace the group sum of per-thread partial sums by every thread summing the row.

    Before (each of the G threads of a row has folded its slice ``c = gt, gt + G, ...``
    into ``s``)::

        s = WARP ? ln_warp_sum(s) : ln_group_sum(s, G, red[0]);

    After ``direct-group-sum``::

        s = 0.0f;
        for (int c = 0; c < n; ++c) {
            s += __bfloat162float(xr[c]);
        }

    The loop is the partial loop over the whole row, with only the statements that feed
    ``s`` (declarations and the folds of ``s``; folds of other sums in the same loop are
    left out). At the helpers' last call they go (with their comments), and with them the
    block's scratch ``__shared__ float red[K][T / 32];`` (the kernel body's first
    statement) when it is only the last argument of device functions whose last parameter
    ``float (*red)[T / 32]`` is then unused: parameter and arguments go too.

    Preconditions: the six of ``group-sum`` (sum-form, uniform-barrier: pipeline;
    strided-partial: layout; reassoc: dtype; row-stable: storage; whole-warps: hardware),
    read on the sum found; and no-twin (pipeline): no register twin
    (``cache-bf16-row``) is dispatched in place of the function, since the twin is
    matched against that function's body and ``reload-bf16-row`` drops it first.

    Options: none (``inverse_for`` gives ``group-sum`` with the form, the names and what
    to define read here).
    """

    name = "direct-group-sum"
    kind = "simplify"
    inverse = "group-sum"
    scope = "device"
    anchor = Rule(kind="expression_statement",
                  regex=r"^\w+\s*=\s*(\w+\s*\?\s*\w+\s*\(\s*\w+\s*\)\s*:\s*)?\w+\s*\("
                        r"\s*\w+\s*(,[^;]*)?\)\s*;$")
    preconditions = _preconditions() + (
        Precondition("no-twin", "pipeline",
                     "no register twin is written from the function's body "
                     "(reload-bf16-row first)", _no_twin),
    )

    def rewrite(self, site, ctx):
        f = _simplify_find(site)
        unit = site.unit
        src = unit.source
        ind = src[line_start(src, site.node.start_byte):site.node.start_byte].decode()
        edits = [Edit(site.node.start_byte, site.node.end_byte,
                      indent(direct_text(unit, f.part, f.v), ind))]
        if not f.last:
            return edits
        for h in f.cleanup["helpers"]:
            fn = _function(unit, h)
            if fn is not None:
                edits.append(delete_definition(unit, _outer(fn)))
        sc = f.cleanup["scratch"]
        if sc:
            edits.append(_delete_line(unit, sc["decl"], blank_after=True))
            for call in sc["calls"]:
                a = _args(call)
                edits.append(Edit.delete(a[-2].end_byte, a[-1].end_byte))
            for fname, (fn, pdecl, _) in sc["params"].items():
                prev = pdecl.prev_named_sibling
                while prev is not None and prev.type == "comment":
                    prev = prev.prev_named_sibling
                edits.append(Edit.delete(prev.end_byte, pdecl.end_byte))
        return edits

    def inverse_for(self, site, ctx):
        f = _simplify_find(site)
        define, extra = "none", {}
        if f.last:
            define = "helpers" if len(f.cleanup["helpers"]) > 1 else "warp"
            sc = f.cleanup["scratch"]
            if sc:
                define = "helpers+scratch"
                extra = dict(param=sc["param"], fns="+".join(sorted(sc["params"])),
                             slots=sc["slots"], threads=sc["threads"])
        return GroupSum(form=f.form, flag=f.flag or "WARP", warp=f.wsum,
                        group=f.gsum or "ln_group_sum", scratch=f.scratch or "none",
                        slot=f.slot, warp_form=f.warp_form, define=define, **extra)


__all__ = ["DirectGroupSum", "GroupSum", "direct_text"]
