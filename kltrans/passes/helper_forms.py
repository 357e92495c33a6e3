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

They were defined by the pass that writes them and imported from there by the others;
the engine holds them so that passes do not import each other.

Layering: the pass engine.
"""

from __future__ import annotations

from kltrans.passes.rewrite import token_text as norm
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
    m = template_regex(SCALAR, FOLD_EXPRS).fullmatch(norm(unit.text(loop)))
    return None if m is None else m.groupdict()


def vector_names(unit, node) -> "dict | None":
    """The names of a :data:`VECTOR` statement (``restrict``: whether ``xv`` is
    ``__restrict__``), or None."""
    text = norm(unit.text(node))
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
    text = norm(unit.text(fn))
    for pragma in ("#pragma unroll\n", ""):
        m = template_regex(GROUP.replace("{pragma}", pragma)).fullmatch(text)
        if m is not None and m.group("merge") == merge:
            d = m.groupdict()
            d["pragma"] = bool(pragma)
            return d
    return None
