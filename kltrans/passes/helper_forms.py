"""The forms of code that one catalogue pass writes and other passes recognize.

A pass that writes a device helper (or a loop calling one) from a template, and a pass
that must know that form to undo it or to keep away from it, read the same form from
here, token for token (:mod:`kltrans.passes.token_forms`):

- the streamed online-softmax fold of ``vectorize-online-stream``: the scalar helper
  :data:`ADD1`, the four-wide helper :data:`ADD4`, the loop :data:`SCALAR` and its float4
  path :data:`VECTOR` (expression slots :data:`FOLD_EXPRS`), read by
  :func:`scalar_names` and :func:`vector_names`;
- the group merge helper of ``merge-row-stats`` (:data:`GROUP`), read by
  :func:`group_merge_names` (``direct-row-stats`` removes it whole; ``smem-reduce`` keeps
  away from it);
- the helpers of a byte split that ``vectorize-bytes`` writes and ``scalarize-bytes``
  removes whole (:func:`byte_helpers`; ``reroll`` keeps out of them);
- a bf16 unpack helper (a ``uint4`` of 8 bf16 into 8 floats, bit-exact, in one of the
  spellings :data:`UNPACK_BRANCHES`) that ``vectorize-bf16`` and ``cache-bf16-row`` call
  (:func:`unpack_helper`, with :func:`branch_for` for a template's branch);

They were defined by the pass that writes them and imported from there by the others;
the engine holds them so that passes do not import each other.

Layering: the pass engine.
"""

from __future__ import annotations

import re

from kltrans.passes.rewrite import norm, statements, token_text
from kltrans.passes.vector_facts import flat
from kltrans.passes.token_forms import device_function, template_regex


# ------------------------------------------------ the online-softmax fold (vectorize-online-stream)
# the scalar helper the loop calls, and the four-wide helper the vector path calls
ADD1 = """\
__device__ __forceinline__ void {add1}(float& m, float& s, float v)
{{
    if (v > m) {{
        s = s == 0.0f ? 0.0f : s * expf(m - v);
        m = v;
    }}
    s += expf(v - m);
}}"""


ADD4 = """\
// add four values to a running (max, sum) pair
__device__ __forceinline__ void {add4}(float& m, float& s, float4 v)
{{
    const float mx = fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w));
    if (mx > m) {{
        s = s == 0.0f ? 0.0f : s * expf(m - mx);
        m = mx;
    }}
    s += (expf(v.x - m) + expf(v.y - m)) + (expf(v.z - m) + expf(v.w - m));
}}"""


SCALAR = """\
for (int {c} = {start}; {c} < {n}; {c} += {G}) {{
    {add1}({m}, {s}, {xr}[{c}]);
}}"""


VECTOR = """\
if ({flag}) {{
    const float4*{restrict} {xv} = reinterpret_cast<const float4*>({xr});
    const int {nv} = {n} >> 2;
    int {c} = {start};
    for (; {c} + ({unroll} - 1) * {G} < {nv}; {c} += {unroll} * {G}) {{
        float4 {t}[{unroll}];
        for (int {u} = 0; {u} < {unroll}; ++{u}) {{
            {t}[{u}] = {xv}[{c} + {u} * {G}];
        }}
        for (int {u} = 0; {u} < {unroll}; ++{u}) {{
            {add4}({m}, {s}, {t}[{u}]);
        }}
    }}
    for (; {c} < {nv}; {c} += {G}) {{
        {add4}({m}, {s}, {xv}[{c}]);
    }}
}} else {{
    {scalar}
}}"""


FOLD_EXPRS = ("start", "n", "G", "unroll")


def scalar_names(unit, loop) -> "dict | None":
    """The names of a :data:`SCALAR` loop (``add1``, ``m``, ``s``, ``xr``, ...), or None."""
    m = template_regex(SCALAR, FOLD_EXPRS).fullmatch(token_text(unit.text(loop)))
    return None if m is None else m.groupdict()


def vector_names(unit, node) -> "dict | None":
    """The names of a :data:`VECTOR` statement (``restrict``: whether ``xv`` is
    ``__restrict__``), or None."""
    text = token_text(unit.text(node))
    for restrict in (" __restrict__", ""):
        tpl = VECTOR.replace("{restrict}", restrict).replace("{scalar}", SCALAR)
        m = template_regex(tpl, FOLD_EXPRS).fullmatch(text)
        if m is not None:
            d = m.groupdict()
            d["restrict"] = bool(restrict)
            return d
    return None


# --------------------------------------------------- the group merge (merge-row-stats)
GROUP = """\
// merge (m, s) over the G threads of a row group; every thread gets the row's pair.
// Called by every thread of the block (it may hold a barrier).
__device__ __forceinline__ void {merge}(float& m, float& s, int G, float* red_m,
                                                float* red_s)
{{
{pragma}    for (int off = 16; off > 0; off >>= 1) {{
        const float om = __shfl_xor_sync(0xffffffffu, m, off);
        const float os = __shfl_xor_sync(0xffffffffu, s, off);
        {pair}(m, s, om, os);
    }}
    if (G > 32) {{  // uniform over the block: G depends on cols only
        const int warp = threadIdx.x >> 5;
        if ((threadIdx.x & 31) == 0) {{
            red_m[warp] = m;
            red_s[warp] = s;
        }}
        __syncthreads();
        const int W = G >> 5;
        const int first = (warp / W) * W;
        m = red_m[first];
        s = red_s[first];
        for (int w = 1; w < W; ++w) {{
            {pair}(m, s, red_m[first + w], red_s[first + w]);
        }}
    }}
}}"""


def group_merge_names(unit, merge: str) -> "dict | None":
    """The names in the device function ``merge`` when it is the group merge helper this
    module writes (GROUP, with or without its ``#pragma unroll``: ``pragma`` says which),
    else None. smem-reduce's whole-first precondition asks it too (merge-row-stats writes it)."""
    fn = device_function(unit, merge)
    if fn is None:
        return None
    text = token_text(unit.text(fn))
    for pragma in ("#pragma unroll\n", ""):
        m = template_regex(GROUP.replace("{pragma}", pragma)).fullmatch(text)
        if m is not None and m.group("merge") == merge:
            d = m.groupdict()
            d["pragma"] = bool(pragma)
            return d
    return None


# ------------------------------------------------------ the byte split (vectorize-bytes)
def byte_helpers(unit) -> dict:
    """The helpers of a byte split, by name, each with what it is: a ``vec`` helper (last
    parameter ``uint4 v``, body ``W(..., v.x); ... W(..., v.w);``) and the ``word`` helper
    W it calls. vectorize-bytes writes them, and scalarize-bytes removes them whole after
    checking that they are exactly what it would write again; a simplification inside
    them first strands the split (``reroll`` asks)."""
    out = {}
    fns = {f.name: f for f in unit.device_functions() if not f.is_kernel}
    for f in fns.values():
        if not f.params or norm(f.params[-1].type) != "uint4":
            continue
        v = f.params[-1].name
        calls = [norm(unit.text(st)) for st in statements(f.body)]
        m = [re.fullmatch(r"(\w+)\((.*), %s\.([xyzw])\);" % re.escape(v), c) for c in calls]
        if len(m) == 4 and all(m) and [x.group(3) for x in m] == list("xyzw") and \
                len({x.group(1) for x in m}) == 1 and m[0].group(1) in fns:
            out[f.name] = "vec"
            out[m[0].group(1)] = "word"
    return out


# ------------------------------------------------------- the bf16 unpack (vectorize-bf16)
UNPACK_BRANCHES = (
    # shift / mask
    r"{F}\[2\*{J}\]=__uint_as_float\({W}\[{J}\]<<16\);"
    r"{F}\[2\*{J}\+1\]=__uint_as_float\({W}\[{J}\]&0[xX][fF]{{4}}0000[uU]?\);",
    # byte permute
    r"{F}\[2\*{J}\]=__uint_as_float\(__byte_perm\({W}\[{J}\],0[uU]?,0x1044\)\);"
    r"{F}\[2\*{J}\+1\]=__uint_as_float\(__byte_perm\({W}\[{J}\],0[uU]?,0x3244\)\);",
    # bfloat162 pair
    r"(?:const)?float2(\w+)=__bfloat1622float2\(\*reinterpret_cast<const(?:__)?nv_bfloat162\*>"
    r"\(&{W}\[{J}\]\)\);{F}\[2\*{J}\]=\1\.x;{F}\[2\*{J}\+1\]=\1\.y;",
)


def device_functions(unit):
    """The unit's device functions (``unit.device_functions()``)."""
    yield from unit.device_functions()


def branch_for(unit, node, tparam: str | None, targ: int | None):
    """The statements of ``node`` (a loop body) for the template argument: an
    ``if (P == K) ... else if ... else ...`` chain on the template parameter is resolved."""
    stmts = [s for s in (statements(node) if node.type == "compound_statement" else [node])
             if s.type != "comment"]
    if len(stmts) == 1 and stmts[0].type == "if_statement" and tparam is not None:
        s = stmts[0]
        c = flat(unit.text(s.child_by_field_name("condition")))
        m = re.fullmatch(rf"\({re.escape(tparam)}==(\d+)\)", c)
        if m is None or targ is None:
            return None
        if int(m.group(1)) == targ:
            return branch_for(unit, s.child_by_field_name("consequence"), tparam, targ)
        alt = s.child_by_field_name("alternative")
        if alt is None:
            return None
        inner = [x for x in alt.named_children if x.type != "comment"]
        return branch_for(unit, inner[0], tparam, targ) if len(inner) == 1 else None
    return "".join(flat(unit.text(s)) for s in stmts)


def unpack_helper(unit, spec: str) -> str | None:
    """None when ``spec`` (``NAME`` or ``NAME<K>``) names a function of the file that
    unpacks a uint4 of 8 bf16 into 8 floats in element order; else why not."""
    m = re.fullmatch(r"([A-Za-z_]\w*)(?:<(\d+)>)?", spec)
    if m is None:
        return f"`{spec}` is not NAME or NAME<K>"
    name, targ = m.group(1), (int(m.group(2)) if m.group(2) else None)
    fn = next((f for f in device_functions(unit) if f.name == name), None)
    if fn is None:
        return f"no function {name} is defined in the file"
    node = fn.node
    tparam = None
    if fn.template_node is not None:
        ps = flat(unit.text(fn.template_node.child_by_field_name("parameters")))
        mt = re.fullmatch(r"<int(\w+)>", ps)
        if mt is None:
            return f"{name}'s template parameters are not one `int`"
        tparam = mt.group(1)
        if targ is None:
            return f"{name} is a template: name its argument ({name}<K>)"
    elif targ is not None:
        return f"{name} is not a template"
    decl = node.child_by_field_name("declarator")
    params = decl.child_by_field_name("parameters") if decl is not None else None
    pf = flat(unit.text(params)) if params is not None else ""
    mp = re.fullmatch(r"\((?:const)?uint4(\w+),float\*(?:__restrict__)?(\w+)\)", pf)
    if mp is None:
        return f"{name} is not `(uint4 raw, float* f)`"
    raw, out = mp.group(1), mp.group(2)
    body = [s for s in statements(node.child_by_field_name("body")) if s.type != "comment"]
    if len(body) != 2 or body[1].type != "for_statement":
        return f"{name}'s body is not `words of {raw}; for (j < 4) {{ unpack pair j }}`"
    mw = re.fullmatch(rf"constunsigned(?:int)?(\w+)\[4\]=\{{{raw}\.x,{raw}\.y,{raw}\.z,{raw}\.w\}};",
                      flat(unit.text(body[0])))
    if mw is None:
        return f"{name} does not take the words {raw}.x .. {raw}.w in order"
    w = mw.group(1)
    lp = body[1]
    head = flat(unit.text(lp)[:unit.text(lp).index(")") + 1])
    mj = re.fullmatch(r"for\(int(\w+)=0;\1<4;(?:\+\+\1|\1\+\+|\1\+=1)\)", head)
    if mj is None:
        return f"{name}'s loop is not `for (int j = 0; j < 4; ++j)`"
    j = mj.group(1)
    got = branch_for(unit, lp.child_by_field_name("body"), tparam, targ)
    if got is None:
        return f"{name}<{targ}>: no branch of the template argument is found"
    for rx in UNPACK_BRANCHES:
        if re.fullmatch(rx.format(F=re.escape(out), J=re.escape(j), W=re.escape(w)), got):
            return None
    return (f"{spec} does not spell a known bit-exact bf16 pair conversion (shift/mask, "
            f"__byte_perm, __bfloat1622float2)")
