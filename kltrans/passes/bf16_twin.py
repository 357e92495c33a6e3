"""The register twin of a bf16 scalar row function, as ``cache-bf16-row`` writes it.

``cache-bf16-row`` writes, in front of a *scalar row function* (:data:`SCALAR`, the
corpus layernorm form), its *register twin* (:data:`TWIN`, with the unpack helper
:data:`UNPACK`), and dispatches one call of the row function to it; ``reload-bf16-row``
removes both again. The forms are read token for token: :func:`scalar_names` (the names
of a scalar row function, :data:`PARAMS`, :data:`SUM_EXPRS`), :func:`twin_text` (the twin
written for them), :func:`dispatch` (a call site's dispatch, a :class:`Found`),
:func:`calls_of_template` and :func:`twin_of` (the twin written from a function, if
any: ``group-sum``'s simplify direction keeps out of a function that has one).

These were ``passes/cache_bf16_row.py``'s; the engine holds them so that passes do not
import each other.

Layering: the pass engine.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.passes.rewrite import token_text as norm
from kltrans.passes.token_forms import calls_of, template_regex


# the scalar row function's body (the names in braces are read from it)
SCALAR = """\
{{
    const float inv_cols = 1.0f / (float){cols};
    const int n = {active} ? {cols} : 0;
    float s = 0.0f;
    for (int c = {gt}; c < n; c += {G}) {{
        s += __bfloat162float({xr}[c]);
    }}
    s = {sum1};
    const float mu = s * inv_cols;
    float sq = 0.0f;
    for (int c = {gt}; c < n; c += {G}) {{
        const float d = __bfloat162float({xr}[c]) - mu;
        sq = d * d + sq;
    }}
    sq = {sum2};
    const float rs = 1.0f / sqrtf(sq * inv_cols + {eps});
    if (!{active}) {{
        return;
    }}
    if ({gt} == 0) {{
        {mean}[{row}] = mu;
        {rstd}[{row}] = rs;
    }}
    for (int c = {gt}; c < n; c += {G}) {{
        const float a = (__bfloat162float({xr}[c]) - mu) * rs * __bfloat162float({weight}[c]) + __bfloat162float({bias}[c]);
        {yr}[c] = __float2bfloat16(a);
    }}
}}"""


# the register twin, as cache-bf16-row writes it
TWIN = """\
// One row per group of {G} threads, the row in registers as packed bf16 (16-byte chunks).
template <bool {W}>
__device__ __forceinline__ void {fn}{params}
{{
    const float inv_cols = 1.0f / (float){cols};
    uint4 raw[{vec}];
    for (int k = 0; k < {vec}; ++k) {{
        const int base = 8 * ({gt} + k * {G});
        raw[k] = {active} && base < {cols}
            ? *(reinterpret_cast<const uint4*>({xr} + base))
            : make_uint4(0u, 0u, 0u, 0u);
    }}
    float s = 0.0f;
    for (int k = 0; k < {vec}; ++k) {{
        float f[8];
        {unpack}<0>(raw[k], f);
        for (int j = 0; j < 8; ++j) {{
            s += f[j];
        }}
    }}
    s = {sum1};
    const float mu = s * inv_cols;
    float sq = 0.0f;
    for (int k = 0; k < {vec}; ++k) {{
        const int base = 8 * ({gt} + k * {G});
        float f[8];
        {unpack}<1>(raw[k], f);
        float part = 0.0f;
        for (int j = 0; j < 8; ++j) {{
            const float d = f[j] - mu;
            part = d * d + part;
        }}
        sq += base < {cols} ? part : 0.0f;
    }}
    sq = {sum2};
    const float rs = 1.0f / sqrtf(sq * inv_cols + {eps});
    if (!{active}) {{
        return;
    }}
    if ({gt} == 0) {{
        {mean}[{row}] = mu;
        {rstd}[{row}] = rs;
    }}
    for (int k = 0; k < {vec}; ++k) {{
        const int base = 8 * ({gt} + k * {G});
        if (base < {cols}) {{
            float f[8];
            float w[8];
            float b[8];
            {unpack}<2>(raw[k], f);
            {unpack}<2>(*(reinterpret_cast<const uint4*>({weight} + base)), w);
            {unpack}<2>(*(reinterpret_cast<const uint4*>({bias} + base)), b);
            uint4 packed;
            __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&packed);
            for (int j = 0; j < 4; ++j) {{
                const float a0 = (f[2 * j] - mu) * rs * w[2 * j] + b[2 * j];
                const float a1 = (f[2 * j + 1] - mu) * rs * w[2 * j + 1] + b[2 * j + 1];
                h[j] = __floats2bfloat162_rn(a0, a1);
            }}
            *(reinterpret_cast<uint4*>({yr} + base)) = packed;
        }}
    }}
}}"""


# the unpack helper (three bit-identical spellings of the bf16 pair -> float conversion)
UNPACK = """\
// bf16 pairs to float32: FORM 0 shift/mask, 1 byte permute, 2 __bfloat1622float2.
template <int FORM>
__device__ __forceinline__ void {unpack}(uint4 raw, float* f)
{{
    const unsigned int w[4] = {{raw.x, raw.y, raw.z, raw.w}};
    for (int j = 0; j < 4; ++j) {{
        if (FORM == 0) {{
            f[2 * j] = __uint_as_float(w[j] << 16);
            f[2 * j + 1] = __uint_as_float(w[j] & 0xffff0000u);
        }} else if (FORM == 1) {{
            f[2 * j] = __uint_as_float(__byte_perm(w[j], 0u, 0x1044));
            f[2 * j + 1] = __uint_as_float(__byte_perm(w[j], 0u, 0x3244));
        }} else {{
            const float2 t = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&w[j]));
            f[2 * j] = t.x;
            f[2 * j + 1] = t.y;
        }}
    }}
}}"""


#: the scalar function's parameters, by position
PARAMS = ("xr", "weight", "bias", "yr", "mean", "rstd", "row", "active", "cols", "eps", "G",
          "gt", "red")


SUM_EXPRS = ("sum1", "sum2")


def top_function(unit, name: str):
    """The unit's function ``name`` (a ``Function``), or None."""
    return next((f for f in unit.device_functions() if f.name == name), None)


def outer_definition(fn):
    """The node of the whole definition (the template declaration of a template)."""
    return fn.template_node or fn.node


def template_param(unit, fn, kind: str) -> str | None:
    if fn.template_node is None:
        return None
    ps = norm(unit.text(fn.template_node.child_by_field_name("parameters")))
    m = re.fullmatch(r"< %s (\w+) >" % kind, ps)
    return m.group(1) if m else None


def param_text(unit, fn) -> str:
    d = fn.node.child_by_field_name("declarator")
    while d is not None and d.type != "function_declarator":
        d = d.child_by_field_name("declarator")
    return unit.text(d.child_by_field_name("parameters"))


def scalar_names(unit, fn) -> "dict | str":
    """The names of a scalar row function (``SCALAR``), or why it is not one."""
    if template_param(unit, fn, "bool") is None:
        return f"{fn.name} is not `template <bool W>`"
    if len(fn.params) != len(PARAMS):
        return f"{fn.name} does not take the {len(PARAMS)} parameters of a row function"
    names = {k: p.name for k, p in zip(PARAMS, fn.params)}
    want = template_regex(SCALAR, SUM_EXPRS)
    m = want.fullmatch(norm(unit.text(fn.body)))
    if m is None:
        return f"{fn.name}'s body is not the three-pass scalar row form"
    for k, v in m.groupdict().items():
        if k in names and names[k] != v:
            return f"{fn.name} uses {v} where its parameter {names[k]} belongs"
    sums = {}
    for st in stmts(fn.body):
        e = st.named_children[0] if st.type == "expression_statement" and st.named_children \
            else None
        if e is not None and e.type == "assignment_expression":
            left = norm(unit.text(e.child_by_field_name("left")))
            if left in ("s", "sq") and left not in sums:
                sums[left] = unit.text(e.child_by_field_name("right"))
    names.update(sum1=sums.get("s", m.group("sum1")), sum2=sums.get("sq", m.group("sum2")),
                 fn=fn.name,
                 W=template_param(unit, fn, "bool"), params=param_text(unit, fn))
    return names


def twin_text(names: dict, twin: str, unpack: str, vec: str) -> str:
    return TWIN.format(**dict(names, fn=twin, unpack=unpack, vec=vec))


def vec_of(unit, fn) -> str | None:
    m = re.search(r"\buint4 raw \[ (\w+) \] ;", norm(unit.text(fn.body)))
    return m.group(1) if m else None


def unpack_of(unit, fn) -> str | None:
    m = re.search(r"\b(\w+) < 0 > \( raw \[ k \] , f \) ;", norm(unit.text(fn.body)))
    return m.group(1) if m else None


def row_call_parts(unit, stmt):
    """(function, template argument, argument text) of ``F<T>(args);``, or None."""
    m = re.fullmatch(r"(\w+) < (\w+) > \( (.*) \) ;", norm(unit.text(stmt)))
    if m is None:
        return None
    call = stmt.named_children[0] if stmt.named_children else None
    if call is None or call.type != "call_expression":
        return None
    a = call.child_by_field_name("arguments")
    args = [unit.text(x) for x in a.named_children if x.type != "comment"]
    return m.group(1), m.group(2), args


def stmts(block):
    return [c for c in block.named_children if c.type != "comment"]


def block_stmts(node):
    if node is None:
        return None
    if node.type == "compound_statement":
        return stmts(node)
    return [node]


@dataclass
class Found:
    form: str  # branch | guard
    node: object  # the statement replaced (simplify) / the anchor statement (optimize)
    fn: str  # the scalar function
    twin: str
    targ: str
    args: list
    flag: str
    names: dict  # scalar_names of fn
    vec: str
    unpack: str
    last: bool = False  # simplify: the twin's last call
    unpack_last: bool = False
    insert_after: object = None  # optimize guard: the `if (!FLAG) {...}` statement


def twin_of(unit, fn_name: str) -> str | None:
    """The register twin dispatched in place of the scalar row function ``fn_name`` (a
    dispatch ``reload-bf16-row`` can drop), or None. The twin is matched token for token
    against the form written from ``fn_name``'s body, so a pass that changes that body
    first strands the twin (``direct-group-sum`` asks this)."""
    for n in unit.walk(unit.root):
        if n.type == "if_statement":
            f = dispatch(unit, n, shape_only=True)
            if not isinstance(f, str) and f[0] == fn_name and top_function(unit, f[1]) is not None:
                return f[1]
    return None


def dispatch(unit, node, shape_only: bool = False) -> "Found | tuple | str":
    """The dispatch ``node`` is (``shape_only``: just its (scalar function, twin) names,
    whatever the twin's body is now), or why it is not one."""
    if node.type != "if_statement":
        return "not an if statement"
    cond = norm(unit.text(node.child_by_field_name("condition")))
    cons = block_stmts(node.child_by_field_name("consequence"))
    alt = node.child_by_field_name("alternative")
    if alt is not None:
        inner = [c for c in alt.named_children if c.type != "comment"]
        alt_stmts = block_stmts(inner[0]) if len(inner) == 1 else None
        if cons is None or alt_stmts is None or len(cons) != 1 or len(alt_stmts) != 1:
            return "not `if (FLAG) { TWIN<T>(args); } else { ROW<T>(args); }`"
        a, b = row_call_parts(unit, cons[0]), row_call_parts(unit, alt_stmts[0])
        mf = re.fullmatch(r"\( (\w+) \)", cond)
        if a is None or b is None or mf is None or a[1] != b[1] or a[2] != b[2]:
            return ("not `if (FLAG) { TWIN<T>(args); } else { ROW<T>(args); }` with the same "
                    "template argument and arguments")
        form, flag, twin, fn, targ, args = "branch", mf.group(1), a[0], b[0], a[1], a[2]
    else:
        if cons is None or len(cons) != 2 or cons[1].type != "return_statement" or \
                norm(unit.text(cons[1])) != "return ;":
            return "not `if (cols <= G * VEC * 8) { TWIN<T>(args); return; }`"
        a = row_call_parts(unit, cons[0])
        if a is None:
            return "the guarded statement is not a call `TWIN<T>(args);`"
        prev = node.prev_named_sibling
        while prev is not None and prev.type == "comment":
            prev = prev.prev_named_sibling
        if prev is None or prev.type != "if_statement" or \
                prev.child_by_field_name("alternative") is not None:
            return "the guard does not follow `if (!FLAG) { ROW<T>(args); return; }`"
        pc = block_stmts(prev.child_by_field_name("consequence"))
        mf = re.fullmatch(r"\( ! (\w+) \)", norm(unit.text(prev.child_by_field_name("condition"))))
        b = row_call_parts(unit, pc[0]) if pc and len(pc) == 2 and \
            norm(unit.text(pc[1])) == "return ;" else None
        if mf is None or b is None or b[1] != a[1] or b[2] != a[2]:
            return ("the guard does not follow `if (!FLAG) { ROW<T>(args); return; }` with the "
                    "same template argument and arguments")
        form, flag, twin, fn, targ, args = "guard", mf.group(1), a[0], b[0], a[1], a[2]
    if shape_only:
        return fn, twin
    sf, tf = top_function(unit, fn), top_function(unit, twin)
    if sf is None or tf is None:
        return f"{fn} or {twin} is not a device function of the file"
    names = scalar_names(unit, sf)
    if isinstance(names, str):
        return names
    vec, unpack = vec_of(unit, tf), unpack_of(unit, tf)
    if vec is None or unpack is None:
        return f"{twin} is not the register twin of {fn} (no `uint4 raw[VEC]`, no unpack)"
    if norm(unit.text(outer_definition(tf))) != norm(twin_text(names, twin, unpack, vec)):
        return f"{twin} is not exactly the register twin cache-bf16-row writes for {fn}"
    if form == "guard":
        want = f"( {norm(args[PARAMS.index('cols')])} <= {norm(args[PARAMS.index('G')])} * " \
               f"{vec} * 8 )"
        if cond != want:
            return f"the guard is not `{want[2:-2]}`"
    f = Found(form, node, fn, twin, targ, args, flag, names, vec, unpack)
    f.last = len(calls_of_template(unit, twin)) == 1
    if f.last:
        others = [c for c in calls_of_template(unit, unpack)
                  if not outer_definition(tf).start_byte <= c.start_byte < outer_definition(tf).end_byte]
        uf = top_function(unit, unpack)
        f.unpack_last = not others and uf is not None and \
            norm(unit.text(outer_definition(uf))) == norm(UNPACK.format(unpack=unpack))
    return f


def calls_of_template(unit, name: str) -> list:
    out = []
    for n in unit.walk(unit.root):
        if n.type == "call_expression":
            fn = n.child_by_field_name("function")
            if fn is not None and fn.type == "template_function":
                fn = fn.child_by_field_name("name")
            if fn is not None and unit.text(fn) == name:
                out.append(n)
    return out + calls_of(unit, name)
