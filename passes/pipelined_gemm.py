"""A whole pipelined, register- and warp-tiled matrix product: ``pipelined-gemm``
(optimize) and its inverse ``direct-gemm`` (simplify).

The mechanisms of a fast float32 GEMM are coupled: the 128 x 128 x BK shared-memory
block tile, the k-major (transposed) A tile, the STAGES-deep shared-memory pipeline
(one barrier per k-tile), the warp tiling with its broadcast lane layout, the 8 x 8
register micro-tile read as float4 fragments (double-buffered over k) and the VEC /
scalar dispatch of the 16-byte paths only make sense together: each depends on the
index maps of the others. This pair moves between the one-thread-per-output dot product
and that whole structure in one step, as a code generator does: the tiled form is
emitted from a fixed, parametrised template (names, macro prefix, BK, STAGES), and the
direct form is recovered only when a kernel spells that template exactly (token for
token, comments and layout aside).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from string import Template

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Bool, Identifier, IntRange, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.rewrite import token_text as _norm





# the copy helpers and the tiled body, as pipelined-gemm writes them (before the kernel)
TILED = """\
// 4-byte global -> shared copy, zero fill when !ok (src is then not read)
__device__ __forceinline__ void ${p}_copy4(float* dst, const float* src, bool ok)
{
    *dst = ok ? *src : 0.0f;
}

// 16-byte global -> shared copy (both 16-byte aligned), zero fill when !ok
__device__ __forceinline__ void ${p}_copy16(float* dst, const float* src, bool ok)
{
    *reinterpret_cast<float4*>(dst) =
        ok ? *reinterpret_cast<const float4*>(src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
}

// pipeline hooks of the copies (empty: plain loads and stores; cp-async fills them)
__device__ __forceinline__ void ${p}_commit()
{
}

__device__ __forceinline__ void ${p}_wait_stage()
{
}

__device__ __forceinline__ void ${p}_wait_all()
{
}

// C tile of 128 x 128 per block: 8 warps as 4 x 2, an 8 x 8 micro-tile per thread from
// float4 fragments (double-buffered over k), A stored k-major, ${P}_STAGES shared stages.
// VEC: B and C allow 16-byte accesses (N % 4 == 0, 16-byte aligned bases).
template <bool VEC>
__device__ __forceinline__ void ${body}(int ${M}, int ${N}, int ${K}, float ${alpha}, const float*${R} ${A},
        const float*${R} ${B}, float ${beta}, float*${R} ${C}, float (*As)[${P}_BK][${P}_BM],
        float (*Bs)[${P}_BK][${P}_BN])
{
    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int bm = blockIdx.y * ${P}_BM;
    const int bn = blockIdx.x * ${P}_BN;

    const int a_k = lane & 7;
    const int a_m = warp * 4 + (lane >> 3);
    bool a_ok[4];
    const float* a_src[4];
    for (int i = 0; i < 4; ++i) {
        const int row = bm + a_m + 32 * i;
        a_ok[i] = row < ${M};
        a_src[i] = ${A} + (size_t)(a_ok[i] ? row : ${M} - 1) * (size_t)${K};
    }
    const int b_k = warp;
    const int b_c = bn + (VEC ? lane * 4 : lane);

    // copies of the tile starting at k0 into stage s (zero fill past M, N, K)
    auto load_tile = [&](int k0, int s) {
        for (int j = 0; j < ${P}_BK / 8; ++j) {
            const int ka = k0 + 8 * j + a_k;
            const bool ka_ok = ka < ${K};
            const int ka_c = ka_ok ? ka : 0;
            for (int i = 0; i < 4; ++i)
                ${p}_copy4(&As[s][8 * j + a_k][a_m + 32 * i], a_src[i] + ka_c, ka_ok && a_ok[i]);
        }
        for (int j = 0; j < ${P}_BK / 8; ++j) {
            const int kb = k0 + 8 * j + b_k;
            const bool kb_ok = kb < ${K};
            const float* bp = ${B} + (size_t)(kb_ok ? kb : 0) * (size_t)${N};
            if (VEC) {
                const bool ok = kb_ok && b_c < ${N};
                ${p}_copy16(&Bs[s][8 * j + b_k][b_c - bn], bp + (b_c < ${N} ? b_c : 0), ok);
            } else {
                for (int i = 0; i < 4; ++i) {
                    const int c = b_c + 32 * i;
                    ${p}_copy4(&Bs[s][8 * j + b_k][c - bn], bp + (c < ${N} ? c : 0), kb_ok && c < ${N});
                }
            }
        }
        ${p}_commit();
    };

    const int wm = warp >> 1;
    const int wn = warp & 1;
    const int tm = ((lane >> 1) & 1) | ((lane >> 3) & 2);
    const int tn = (lane & 1) | ((lane >> 1) & 6);
    const int m_off = wm * 32 + tm * 4;
    const int n_off = wn * 64 + tn * 4;

    float acc[8][8];
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j)
            acc[i][j] = 0.0f;

    const int ntiles = (${K} + ${P}_BK - 1) / ${P}_BK;

    for (int s = 0; s < ${P}_STAGES - 1; ++s)
        load_tile(s * ${P}_BK, s);
    ${p}_wait_stage();
    __syncthreads();

    int cur = 0;
    int nxt = ${P}_STAGES - 1;
    for (int t = 0; t < ntiles; ++t) {
        load_tile((t + ${P}_STAGES - 1) * ${P}_BK, nxt);

        float4 fa[2][2], fb[2][2];
        fa[0][0] = *reinterpret_cast<const float4*>(&As[cur][0][m_off]);
        fa[0][1] = *reinterpret_cast<const float4*>(&As[cur][0][m_off + 16]);
        fb[0][0] = *reinterpret_cast<const float4*>(&Bs[cur][0][n_off]);
        fb[0][1] = *reinterpret_cast<const float4*>(&Bs[cur][0][n_off + 32]);
        for (int k = 0; k < ${P}_BK; ++k) {
            const int f = k & 1;
            if (k + 1 < ${P}_BK) {
                fa[f ^ 1][0] = *reinterpret_cast<const float4*>(&As[cur][k + 1][m_off]);
                fa[f ^ 1][1] = *reinterpret_cast<const float4*>(&As[cur][k + 1][m_off + 16]);
                fb[f ^ 1][0] = *reinterpret_cast<const float4*>(&Bs[cur][k + 1][n_off]);
                fb[f ^ 1][1] = *reinterpret_cast<const float4*>(&Bs[cur][k + 1][n_off + 32]);
            }
            const float a[8] = {fa[f][0].x, fa[f][0].y, fa[f][0].z, fa[f][0].w,
                                fa[f][1].x, fa[f][1].y, fa[f][1].z, fa[f][1].w};
            const float b[8] = {fb[f][0].x, fb[f][0].y, fb[f][0].z, fb[f][0].w,
                                fb[f][1].x, fb[f][1].y, fb[f][1].z, fb[f][1].w};
            for (int i = 0; i < 8; ++i)
                for (int j = 0; j < 8; ++j)
                    acc[i][j] = a[i] * b[j] + acc[i][j];
        }

        ${p}_wait_stage();
        __syncthreads();
        cur = cur == ${P}_STAGES - 1 ? 0 : cur + 1;
        nxt = nxt == ${P}_STAGES - 1 ? 0 : nxt + 1;
    }
    ${p}_wait_all();

    // epilogue: C = alpha * acc + beta * C, predicated at the edges
    for (int i = 0; i < 8; ++i) {
        const int row = bm + m_off + (i < 4 ? i : 12 + i);
        if (row >= ${M}) continue;
        float* c_row = ${C} + (size_t)row * (size_t)${N};
        for (int h = 0; h < 2; ++h) {
            const int col = bn + n_off + h * 32;
            for (int j = 0; j < 4; ++j) {
                if (col + j < ${N}) {
                    float* p = c_row + col + j;
                    *p = ${alpha} * acc[i][h * 4 + j] + ${beta} * *p;
                }
            }
        }
    }
}
"""

# the kernel body of the tiled form
KERNEL = """\
{
    __shared__ __align__(16) float As[${P}_STAGES][${P}_BK][${P}_BM];
    __shared__ __align__(16) float Bs[${P}_STAGES][${P}_BK][${P}_BN];
    const unsigned long long addr_bits = reinterpret_cast<unsigned long long>(${B}) |
                                         reinterpret_cast<unsigned long long>(${C});
    const bool vec = ((${N} & 3) == 0) && ((addr_bits & 15ull) == 0);
    if (vec)
        ${body}<true>(${M}, ${N}, ${K}, ${alpha}, ${A}, ${B}, ${beta}, ${C}, As, Bs);
    else
        ${body}<false>(${M}, ${N}, ${K}, ${alpha}, ${A}, ${B}, ${beta}, ${C}, As, Bs);
}
"""

# the kernel body of the direct form, as direct-gemm writes it
DIRECT = """\
{
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < ${M} && col < ${N}) {
        float acc = 0.0f;
        for (int k = 0; k < ${K}; ++k) {
            acc += ${A}[(size_t)row * ${K} + k] * ${B}[(size_t)k * ${N} + col];
        }
        size_t idx = (size_t)row * ${N} + col;
        ${C}[idx] = ${alpha} * acc + ${beta} * ${C}[idx];
    }
}
"""

ROLES = ("M", "N", "K", "alpha", "A", "B", "beta", "C")
MACROS = ("BM", "BN", "BK", "STAGES")
HELPERS = ("copy4", "copy16", "commit", "wait_stage", "wait_all")
#: block tile (rows x cols of C) and threads: fixed by the warp/lane layout of the template
TILE, THREADS = 128, 256
SMEM_LIMIT = 48 * 1024  # static shared memory per block
_KEYWORDS = {"const", "int", "float", "bool", "void", "unsigned", "long", "size_t", "auto",
             "for", "if", "else", "continue", "return", "true", "false", "template",
             "reinterpret_cast", "float4", "make_float4", "threadIdx", "blockIdx", "blockDim",
             "x", "y", "z", "w", "__device__", "__forceinline__", "__shared__", "__align__",
             "__syncthreads", "__restrict__", "min"}


def _locals() -> frozenset:
    """Identifiers the templates declare themselves (a parameter may not be one of them)."""
    out = set()
    for t in (TILED, KERNEL, DIRECT):
        t = re.sub(r"\$\{\w+\}\w*", " ", t)
        out |= set(re.findall(r"\b[A-Za-z_]\w*\b", re.sub(r"//[^\n]*", " ", t)))
    return frozenset(out - _KEYWORDS)


LOCALS = _locals()


def _fill(template: str, names: dict) -> str:
    return Template(template).substitute(names)


def _first_diff(got: str, want: str) -> str:
    g, w = got.split(" "), want.split(" ")
    for i, (a, b) in enumerate(zip(g, w)):
        if a != b:
            return f"token {i}: `{' '.join(g[max(0, i - 4):i + 4])}` where the form has " \
                   f"`{' '.join(w[max(0, i - 4):i + 4])}`"
    return f"{len(g)} tokens where the form has {len(w)}"


def _top(node):
    """The translation-unit child that holds ``node`` (a linkage spec or template)."""
    while node.parent is not None and node.parent.type != "translation_unit":
        node = node.parent
    return node


def _fn_name(unit, fn_node) -> str | None:
    d = fn_node.child_by_field_name("declarator")
    while d is not None and d.type not in ("identifier", "field_identifier"):
        d = d.child_by_field_name("declarator")
    return unit.text(d) if d is not None else None


def _functions(unit) -> dict:
    out = {}
    for n in unit.nodes_of_type("function_definition"):
        name = _fn_name(unit, n)
        if name:
            out.setdefault(name, n)
    return out


def _constants(unit) -> dict:
    from kltrans.syntax.contract import file_constants

    return file_constants(unit)


def _param_types(site, names) -> Verdict:
    """M, N, K int; alpha, beta float; A, B pointers to float; C a pointer to mutable float."""
    params = {p.name: p for p in site.function.params}
    for r in ("M", "N", "K"):
        p = params.get(names[r])
        if p is None or p.pointer or p.base_type != "int":
            return Verdict.no(f"{names[r]} is not an int parameter (the tile maps use int)")
    for r in ("alpha", "beta"):
        p = params.get(names[r])
        if p is None or p.pointer or p.base_type != "float":
            return Verdict.no(f"{names[r]} is not a float parameter")
    for r in ("A", "B", "C"):
        p = params.get(names[r])
        if p is None or p.pointer != 1 or p.base_type != "float":
            return Verdict.no(f"{names[r]} is not a float* parameter: the fragments are float4 "
                              f"and the micro-tile float")
    if params[names["C"]].const:
        return Verdict.no(f"{names['C']} points to const")
    return Verdict.yes("float32 operands, int sizes")


def _apart(ctx, names) -> Verdict:
    for r in ("A", "B"):
        if names[r] == names["C"] or not ctx.assumed("no_alias", names["C"], names[r]):
            return Verdict.unknown(
                f"{names['C']} and {names[r]} may alias: the tiled kernel reads whole k-panels "
                f"of {names[r]} while other blocks write {names['C']}; pass --assume "
                f"no_alias({names['C']},{names[r]})")
    return Verdict.yes(f"{names['C']} is apart from {names['A']} and {names['B']} (assumed)")


def _clashes(names) -> str | None:
    vals = [names[r] for r in ROLES]
    if len(set(vals)) != len(vals):
        return "two operands share a name"
    bad = [v for v in vals if v in LOCALS]
    if bad:
        return f"the parameter {bad[0]} has the name of a local of the tiled form"
    return None


def _contract_dims(site):
    from kltrans.syntax.contract import contracts, evaluate, file_constants

    try:
        c = contracts(site.unit).get(site.function.name)
        if c is None:
            return None
        env = file_constants(site.unit)
        return [evaluate(x, env) for x in c.block]
    except Exception:  # an unreadable contract is a failed check
        return None


def _macro_values(unit, P) -> dict:
    env = _constants(unit)
    return {m: env.get(f"{P}_{m}") for m in MACROS}


def _macro_verdict(vals: dict, P: str, bk=None, stages=None) -> Verdict:
    if vals["BM"] != TILE or vals["BN"] != TILE:
        return Verdict.no(f"{P}_BM x {P}_BN is {vals['BM']} x {vals['BN']}, not the {TILE} x "
                          f"{TILE} tile the warp layout covers")
    if vals["BK"] not in (8, 16) or (bk is not None and vals["BK"] != bk):
        return Verdict.no(f"{P}_BK = {vals['BK']}: the copy map needs 8 or 16"
                          + (f" (option bk={bk})" if bk is not None else ""))
    if vals["STAGES"] is None or not 2 <= vals["STAGES"] <= 4 or \
            (stages is not None and vals["STAGES"] != stages):
        return Verdict.no(f"{P}_STAGES = {vals['STAGES']} is not 2..4"
                          + (f" (option stages={stages})" if stages is not None else ""))
    return Verdict.yes(f"{TILE} x {TILE} x {vals['BK']} tiles, {vals['STAGES']} stages")


def _smem(bk: int, stages: int) -> Verdict:
    b = stages * bk * (2 * TILE) * 4
    if b > SMEM_LIMIT:
        return Verdict.no(f"{stages} stages of {TILE} x {bk} A and B tiles are {b} bytes of "
                          f"static shared memory (> {SMEM_LIMIT})")
    return Verdict.yes(f"{b} bytes of static shared memory")


# ------------------------------------------------------------------ simplify
@dataclass
class _Tiled:
    names: dict
    body_fn: object  # the body's function_definition
    start: int  # byte span of the helpers and the body (their comments included)
    end: int
    helpers: dict


def _tiled(site):
    """The names of the tiled form at a kernel (no exact check yet), or (None, why)."""
    unit, fn = site.unit, site.function
    if not fn.is_kernel:
        return None, f"{fn.name} is not a kernel"
    body = fn.node.child_by_field_name("body")
    text = _norm(unit.text(body))
    m = re.search(r"__shared__ __align__ \( 16 \) float As \[ (\w+)_STAGES \]", text)
    c = re.search(r"if \( vec \) (\w+) < true > \( ([^()]*) \) ;", text)
    if m is None or c is None:
        return None, (f"the body of {fn.name} is not the tiled dispatch (`__shared__ float "
                      f"As[P_STAGES][P_BK][P_BM], Bs[...]; ... if (vec) body<true>(...); else "
                      f"body<false>(...);`)")
    args = [a.strip() for a in c.group(2).split(",")]
    if len(args) != 10 or not all(re.fullmatch(r"[A-Za-z_]\w*", a) for a in args):
        return None, f"the call of {c.group(1)} does not pass 8 operands and the two tiles"
    names = dict(zip(ROLES, args[:8]), P=m.group(1), body=c.group(1))
    funcs = _functions(unit)
    bfn = funcs.get(names["body"])
    if bfn is None:
        return None, f"{names['body']} is not defined in this file"
    mp = re.search(r"\b(\w+)_copy4 \(", _norm(unit.text(bfn)))
    if mp is None:
        return None, f"{names['body']} does not copy through a P_copy4 helper"
    names["p"] = mp.group(1)
    params = unit.text(bfn.child_by_field_name("declarator"))
    names["R"] = " __restrict__" if "__restrict__" in params else ""
    helpers = {h: funcs.get(f"{names['p']}_{h}") for h in HELPERS}
    missing = [h for h, n in helpers.items() if n is None]
    if missing:
        return None, f"no helper {names['p']}_{missing[0]} in this file"
    start = min(_top(n).start_byte for n in helpers.values())
    first = min((_top(n) for n in helpers.values()), key=lambda n: n.start_byte)
    prev = first.prev_sibling
    while prev is not None and prev.type == "comment":
        start = prev.start_byte
        prev = prev.prev_sibling
    return _Tiled(names, bfn, start, _top(bfn).end_byte, helpers), ""


def _s_check(fn):
    def check(site, ctx):
        t, why = _tiled(site)
        return Verdict.unknown(why) if t is None else fn(site, ctx, t)
    return check


def _s_form(site, ctx, t) -> Verdict:
    unit, names = site.unit, t.names
    top = _top(site.function.node)
    if _norm(unit.text((t.end, top.start_byte))):
        return Verdict.no(f"code stands between {names['body']} and {site.function.name}")
    want = _norm(_fill(TILED, names))
    got = _norm(unit.text((t.start, t.end)))
    if got != want:
        return Verdict.no(f"the helpers and {names['body']} are not the tiled form "
                          f"pipelined-gemm writes ({_first_diff(got, want)})")
    want = _norm(_fill(KERNEL, names))
    got = _norm(unit.text(site.function.node.child_by_field_name("body")))
    if got != want:
        return Verdict.no(f"the body of {site.function.name} is not the tiled dispatch "
                          f"({_first_diff(got, want)})")
    # nothing else may use what direct-gemm deletes
    own = [(t.start, t.end), (top.start_byte, top.end_byte)]
    dropped = {names["body"]} | {f"{names['p']}_{h}" for h in HELPERS}
    for n in unit.walk(unit.root):
        if n.type == "identifier" and unit.text(n) in dropped and \
                not any(s <= n.start_byte < e for s, e in own):
            return Verdict.no(f"{unit.text(n)} is used outside the tiled kernel (line "
                              f"{unit.line_col(n.start_byte)[0]})")
    if _clashes(names):
        return Verdict.no(_clashes(names))
    return Verdict.yes(f"{names['body']} with helpers {names['p']}_*, tiles {names['P']}_*")


def _s_copies(site, ctx, t) -> Verdict:
    for h, node in t.helpers.items():
        for n in site.unit.walk(node):
            if n.type == "gnu_asm_expression" or n.type.startswith("preproc"):
                return Verdict.no(f"{t.names['p']}_{h} is not a plain copy (inline assembly or "
                                  f"preprocessor branches: cp.async, sm_80); run sync-copy first")
    return Verdict.yes("plain loads and stores (no cp.async)")


def _s_layout(site, ctx, t) -> Verdict:
    v = _macro_verdict(_macro_values(site.unit, t.names["P"]), t.names["P"])
    if not v.holds:
        return v
    b = _contract_dims(site)
    if b is None or b[0] * (b[1] if len(b) > 1 else 1) * (b[2] if len(b) > 2 else 1) != THREADS \
            or any(x != 1 for x in b[1:]):
        return Verdict.no(f"the launch header's block {b} is not {THREADS} threads in x "
                          f"(8 warps as 4 x 2)")
    return v


@dataclass(frozen=True)
class DirectGemm(Pass):
    """Replace the pipelined, warp- and register-tiled float32 GEMM by one thread per output.

    Before (the tiled form ``pipelined-gemm`` writes; the macros ``P_BM``, ``P_BN``,
    ``P_BK``, ``P_STAGES`` are defined in the file)::

        __device__ __forceinline__ void p_copy4(float* dst, const float* src, bool ok) {...}
        ... p_copy16, p_commit, p_wait_stage, p_wait_all ...
        template <bool VEC>
        __device__ __forceinline__ void body(int M, ..., float (*As)[P_BK][P_BM], ...)
        { ... STAGES-deep k-tile loop, float4 fragments fa[2][2], fb[2][2],
              acc[8][8] = a[i] * b[j] + acc[i][j] ... }
        extern "C" __global__ void k(int M, int N, int K, float alpha, ...)
        {
            __shared__ __align__(16) float As[P_STAGES][P_BK][P_BM];
            __shared__ __align__(16) float Bs[P_STAGES][P_BK][P_BN];
            ... const bool vec = ((N & 3) == 0) && (16-byte aligned B and C);
            if (vec) body<true>(...); else body<false>(...);
        }

    After ``direct-gemm`` (helpers and body deleted, the macros left alone)::

        extern "C" __global__ void k(int M, int N, int K, float alpha, ...)
        {
            int col = blockIdx.x * blockDim.x + threadIdx.x;
            int row = blockIdx.y * blockDim.y + threadIdx.y;
            if (row < M && col < N) {
                float acc = 0.0f;
                for (int k = 0; k < K; ++k) {
                    acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
                }
                size_t idx = (size_t)row * N + col;
                C[idx] = alpha * acc + beta * C[idx];
            }
        }

    with the launch header ``grid=(ceil_div(N, BLOCK), ceil_div(M, BLOCK))
    block=(BLOCK, BLOCK)``.

    Preconditions: plain-copies (hardware: the copy helpers are plain loads and stores, no
    cp.async; ``sync-copy`` removes those), float-operands (dtype: int sizes, float
    alpha/beta, float pointers, C mutable), tile-shape (layout: ``P_BM = P_BN = 128``,
    ``P_BK`` 8 or 16, ``P_STAGES`` 2..4, a launch block of 256 threads in x),
    c-apart (storage: C does not alias A or B, ``no_alias`` from the context),
    tiled-form (pipeline: the helpers, the body and the kernel body spell the tiled form
    exactly, the helpers and body stand right before the kernel and nothing else uses
    them, no parameter has the name of a local of either form).

    Options: ``block`` (8, 16, 32; default 16): the square block of the direct form's
    launch header.
    """

    name = "direct-gemm"
    kind = "simplify"
    inverse = "pipelined-gemm"
    anchor = Rule(kind="function_definition", regex=r"\b__global__\b")
    preconditions = (
        Precondition("plain-copies", "hardware", "the tile copies are plain loads and stores",
                     _s_check(_s_copies)),
        Precondition("float-operands", "dtype", "float32 operands and int sizes",
                     _s_check(lambda s, c, t: _param_types(s, t.names))),
        Precondition("tile-shape", "layout", "128 x 128 tiles of 256 threads",
                     _s_check(_s_layout)),
        Precondition("c-apart", "storage", "C does not alias A or B",
                     _s_check(lambda s, c, t: _apart(c, t.names))),
        Precondition("tiled-form", "pipeline", "the tiled GEMM pipelined-gemm writes",
                     _s_check(_s_form)),
    )

    block: int = option(16, IntRange(8, 32, (8, 16, 32)), "square block of the direct form")

    def rewrite(self, site, ctx):
        t, _ = _tiled(site)
        top = _top(site.function.node)
        body = site.function.node.child_by_field_name("body")
        return [Edit.delete(t.start, top.start_byte),
                Edit(body.start_byte, body.end_byte, _fill(DIRECT, t.names).rstrip("\n"))]

    def update_contract(self, contract, site, ctx):
        t, _ = _tiled(site)
        n = t.names
        b = str(self.block)
        return contract.with_(grid=(f"ceil_div({n['N']}, {b})", f"ceil_div({n['M']}, {b})"),
                              block=(b, b))

    def inverse_for(self, site, ctx):
        t, _ = _tiled(site)
        n = t.names
        vals = _macro_values(site.unit, n["P"])
        return PipelinedGemm(prefix=n["P"], helpers=n["p"], body=n["body"],
                             bk=vals["BK"], stages=vals["STAGES"], restrict=bool(n["R"]))


# ------------------------------------------------------------------ optimize
def _builtin_forms(axis: str) -> set:
    b, d, t = f"blockIdx . {axis}", f"blockDim . {axis}", f"threadIdx . {axis}"
    out = set()
    for x, y in ((b, d), (d, b)):
        out |= {f"{x} * {y} + {t}", f"{t} + {x} * {y}", f"( {x} * {y} ) + {t}",
                f"{t} + ( {x} * {y} )"}
    return out


_X, _Y = _builtin_forms("x"), _builtin_forms("y")
_DECL = re.compile(r"(?:const )?(?:int|unsigned int|unsigned) (\w+) = (.+) ;")
_ACC = re.compile(r"(\w+) (\w+) = (?:0\.0f|0\.f|0\.0|0) ;")
_UPD = r"%s \+= (\w+) \[ (.+?) \] \* (\w+) \[ (.+?) \] ;"
_STEP = r"(?:\+\+ {k}|{k} \+\+|{k} \+= 1)"


def _stmts(node):
    return [c for c in node.named_children if c.type != "comment"]


@dataclass
class _Naive:
    names: dict
    acc_type: str
    a_idx: str  # normalized index expressions
    b_idx: str
    c_idx: str
    row: str
    col: str
    k: str


def _naive(site):
    """The one-thread-per-output dot product in the kernel body, or (None, why)."""
    unit, fn = site.unit, site.function
    if not fn.is_kernel:
        return None, f"{fn.name} is not a kernel"
    shape = ("not the one-thread-per-output product (`int col = <x index>; int row = <y "
             "index>; if (row < M && col < N) { float acc = 0; for (k < K) acc += A[..] * "
             "B[..]; C[..] = alpha * acc + beta * C[..]; }`)")
    st = _stmts(fn.node.child_by_field_name("body"))
    if len(st) < 3:
        return None, shape
    idx = {}
    for s in st[:2]:
        m = _DECL.fullmatch(_norm(site.unit.text(s)))
        if m is None:
            return None, shape + ": the body does not start with the two index declarations"
        axis = "x" if m.group(2) in _X else "y" if m.group(2) in _Y else None
        if axis is None or axis in idx:
            return None, (f"{m.group(1)} is not blockIdx * blockDim + threadIdx in x or y "
                          f"(one thread per output)")
        idx[axis] = m.group(1)
    col, row = idx["x"], idx["y"]
    g = _norm(unit.text(st[2]))
    inner = None
    for a, b in ((row, col), (col, row)):
        m = re.match(r"if \( %s < (\w+) && %s < (\w+) \) \{ " % (re.escape(a), re.escape(b)), g)
        if m and st[2].type == "if_statement" and len(st) == 3 and g.endswith("}"):
            lim = dict(zip((a, b), m.groups()))
            cons = st[2].child_by_field_name("consequence")
            if cons is not None and cons.type == "compound_statement" and \
                    st[2].child_by_field_name("alternative") is None:
                inner = _stmts(cons)
        m = re.fullmatch(r"if \( %s >= (\w+) \|\| %s >= (\w+) \) return ;" % (
            re.escape(a), re.escape(b)), g)
        if m and inner is None:
            lim = dict(zip((a, b), m.groups()))
            inner = st[3:]
        if inner is not None:
            break
    if inner is None:
        return None, shape + ": no bounds guard `if (row < M && col < N) { ... }` around it"
    M, N = lim[row], lim[col]
    texts = [_norm(unit.text(s)) for s in inner]
    if not texts:
        return None, shape
    m = _ACC.fullmatch(texts[0])
    if m is None:
        return None, shape + ": no accumulator `float acc = 0.0f;` first in the guard"
    acc_type, acc = m.groups()
    rest = texts[1:]
    upd = _UPD % re.escape(acc)
    lp = None
    if rest and rest[0].startswith("for"):
        lp = re.fullmatch(r"for \( int (\w+) = 0 ; \1 < (\w+) ; (?:\+\+ \1|\1 \+\+|\1 \+= 1) \) "
                          r"(?:\{ )?" + upd + r"(?: \})?", rest[0])
        rest = rest[1:]
        if lp is not None and rest and ("{" in texts[1]) != texts[1].endswith("}"):
            lp = None
    elif len(rest) > 1:
        d = re.fullmatch(r"int (\w+) = 0 ;", rest[0])
        if d is not None:
            kk = re.escape(d.group(1))
            lp = re.fullmatch(r"while \( (%s) < (\w+) \) \{ %s %s ; \}" % (
                kk, upd, _STEP.format(k=kk)), rest[1])
            rest = rest[2:]
    if lp is None:
        return None, shape + f": no k loop whose body is only `{acc} += A[..] * B[..];`"
    k, K, A, a_idx, B, b_idx = lp.groups()
    epi = " ".join(rest)
    ce = re.fullmatch(r"(?:const )?(?:size_t|int) (\w+) = (.+) ; (\w+) \[ \1 \] = (\w+) \* %s "
                      r"\+ (\w+) \* \3 \[ \1 \] ;" % re.escape(acc), epi)
    if ce is not None:
        c_idx, C, alpha, beta = ce.group(2), ce.group(3), ce.group(4), ce.group(5)
    else:
        ce = re.fullmatch(r"(\w+) \[ (.+) \] = (\w+) \* %s \+ (\w+) \* \1 \[ \2 \] ;"
                          % re.escape(acc), epi)
        if ce is None:
            return None, shape + f": the epilogue is not `C[i] = alpha * {acc} + beta * C[i];`"
        C, c_idx, alpha, beta = ce.groups()
    names = dict(M=M, N=N, K=K, alpha=alpha, A=A, B=B, beta=beta, C=C)
    return _Naive(names, acc_type, a_idx, b_idx, c_idx, row, col, k), ""


def _rowmajor(expr: str, r: str, ld: str, c: str) -> bool:
    """``expr`` (normalized) is ``r * ld + c``, optionally with ``(size_t)`` casts, any order."""
    outs = set()
    for rr in (r, f"( size_t ) {r}"):
        for ll in (ld, f"( size_t ) {ld}"):
            for prod in (f"{rr} * {ll}", f"{ll} * {rr}", f"( {rr} * {ll} )", f"( {ll} * {rr} )"):
                outs |= {f"{prod} + {c}", f"{c} + {prod}"}
    return expr in outs


def _o_check(fn):
    def check(site, ctx):
        n, why = _naive(site)
        return Verdict.unknown(why) if n is None else fn(site, ctx, n)
    return check


def _o_form(site, ctx, n) -> Verdict:
    return Verdict.yes(f"{n.names['C']} = {n.names['alpha']} * {n.names['A']} * "
                       f"{n.names['B']} + {n.names['beta']} * {n.names['C']}, one output a thread")


def _o_layout(site, ctx, n) -> Verdict:
    for what, e, r, ld, c in (("A", n.a_idx, n.row, n.names["K"], n.k),
                              ("B", n.b_idx, n.k, n.names["N"], n.col),
                              ("C", n.c_idx, n.row, n.names["N"], n.col)):
        if not _rowmajor(e, r, ld, c):
            return Verdict.no(f"{n.names[what]}[{e.replace(' ', '')}] is not the row-major "
                              f"{r} * {ld} + {c}")
    return Verdict.yes("row-major A (M x K), B (K x N), C (M x N)")


def _o_dtype(site, ctx, n) -> Verdict:
    if n.acc_type != "float":
        return Verdict.no(f"the accumulator is {n.acc_type}, not float (the micro-tile is float)")
    return _param_types(site, n.names)


def _names_of(p: "PipelinedGemm", site, n) -> dict:
    names = dict(n.names, P=p.prefix, p=p.helpers, R=" __restrict__" if p.restrict else "",
                 body=f"{site.function.name}_body" if p.body == "auto" else p.body)
    return names


def _o_fresh(site, ctx, n) -> Verdict:
    p = site.pass_
    names = _names_of(p, site, n)
    why = _clashes(names)
    if why:
        return Verdict.no(why)
    unit = site.unit
    taken = {unit.text(x) for x in unit.walk(unit.root) if x.type == "identifier"}
    for new in [names["body"]] + [f"{names['p']}_{h}" for h in HELPERS]:
        if new in taken:
            return Verdict.no(f"the name {new} is taken in this file")
    vals = _macro_values(unit, names["P"])
    defined = [m for m, v in vals.items() if v is not None]
    if defined:
        v = _macro_verdict(vals, names["P"], p.bk, p.stages)
        if not v.holds:
            return Verdict.no(f"the macros {names['P']}_* exist but do not fit: {v.reason}")
    return Verdict.yes(f"{names['body']}, {names['p']}_* are new; macros {names['P']}_* "
                       + ("defined as the tiles need" if defined else "new"))


def _o_hw(site, ctx, n) -> Verdict:
    p = site.pass_
    if p.bk not in (8, 16):
        return Verdict.no(f"bk={p.bk}: the copy map (8 warps, 8 k a warp) needs 8 or 16")
    return _smem(p.bk, p.stages)


@dataclass(frozen=True)
class PipelinedGemm(Pass):
    """Turn a one-thread-per-output float32 GEMM into a pipelined, warp- and register-tiled one.

    Before (index spellings, ``for``/``while``, an ``if`` guard or an early return, a
    ``size_t idx`` or a repeated index, ``(size_t)`` casts may vary)::

        int col = blockIdx.x * blockDim.x + threadIdx.x;
        int row = blockIdx.y * blockDim.y + threadIdx.y;
        if (row < M && col < N) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
            C[row * N + col] = alpha * acc + beta * C[row * N + col];
        }

    After ``pipelined-gemm``: macros ``P_BM 128``, ``P_BN 128``, ``P_BK bk``, ``P_STAGES
    stages`` (unless already defined with these values), copy helpers ``p_copy4``,
    ``p_copy16`` (plain zero-filling loads/stores) and empty pipeline hooks ``p_commit``,
    ``p_wait_stage``, ``p_wait_all`` (``cp-async`` fills them), a ``template <bool VEC>``
    body (see TILED in the module): each 256-thread block owns a 128 x 128 tile of C, 8
    warps as 4 x 2 own 32 x 64 each, lane bits pick the thread's 8 x 8 micro-tile (two 4 x
    4 quads per axis, 16 rows / 32 columns apart) so lanes share float4 fragment loads;
    A is copied k-major into ``As[P_STAGES][P_BK][P_BM]``, B into ``Bs[P_STAGES][P_BK]
    [P_BN]``; tiles are loaded ``P_STAGES - 1`` ahead with one barrier per k-tile; the
    float4 fragments of k + 1 load while k computes; the epilogue is predicated. The
    kernel declares the two shared arrays and runs ``body<true>`` when 16-byte accesses
    to B and C are legal and ``body<false>`` otherwise. The launch header becomes
    ``grid=(ceil_div(N, 128), ceil_div(M, 128)) block=256``.

    Run-time facts are guards: every copy is predicated with zero fill past M, N and K
    (any sizes), stores are predicated, and the float4 paths run only when ``N % 4 == 0``
    and B and C are 16-byte aligned (checked in the kernel); the other body is scalar.

    Preconditions: dot-product (pipeline: the shape above), row-major (layout: A is
    indexed ``row * K + k``, B ``k * N + col``, C ``row * N + col``), float-operands
    (dtype: float accumulator and pointers, float alpha/beta, int sizes), c-apart (storage:
    C does not alias A or B, ``no_alias`` from the context), fresh-names (storage: the
    body and helper names are new, existing ``P_*`` macros hold the tile's values, no
    parameter is named like a local of the tiled form), smem-fits (hardware: ``stages *
    bk * 256 * 4`` bytes of static shared memory <= 48 KB).

    Options: ``prefix`` (macro prefix, default ``GEMM``), ``helpers`` (helper prefix,
    default ``gemm``), ``body`` (the body function, ``auto``: ``<kernel>_body``), ``bk``
    (k-tile, 8 or 16, default 16), ``stages`` (2..4, default 2), ``restrict`` (the body's
    pointer parameters ``__restrict__``, default false).
    """

    name = "pipelined-gemm"
    kind = "optimize"
    inverse = "direct-gemm"
    anchor = Rule(kind="function_definition", regex=r"\b__global__\b")
    preconditions = (
        Precondition("dot-product", "pipeline", "one thread per output, a plain k loop",
                     _o_check(_o_form)),
        Precondition("row-major", "layout", "row-major operands", _o_check(_o_layout)),
        Precondition("float-operands", "dtype", "float32 operands and int sizes",
                     _o_check(_o_dtype)),
        Precondition("c-apart", "storage", "C does not alias A or B",
                     _o_check(lambda s, c, n: _apart(c, n.names))),
        Precondition("fresh-names", "storage", "the new names are free", _o_check(_o_fresh)),
        Precondition("smem-fits", "hardware", "the stages fit static shared memory",
                     _o_check(_o_hw)),
    )

    prefix: str = option("GEMM", Identifier(words=()), "macro prefix of the tile sizes")
    helpers: str = option("gemm", Identifier(words=()), "prefix of the copy helpers")
    body: str = option("auto", Identifier(), "the body function (auto: <kernel>_body)")
    bk: int = option(16, IntRange(8, 16, (8, 16)), "k-tile depth (8 or 16)", tune=True)
    stages: int = option(2, IntRange(2, 4, (2, 3, 4)), "shared-memory pipeline stages", tune=True)
    restrict: bool = option(False, Bool(), "__restrict__ on the body's pointer parameters")

    def rewrite(self, site, ctx):
        n, _ = _naive(site)
        names = _names_of(self, site, n)
        unit = site.unit
        top = _top(site.function.node)
        pre = ""
        if all(v is None for v in _macro_values(unit, names["P"]).values()):
            P = names["P"]
            pre = (f"#define {P}_BM {TILE}\n#define {P}_BN {TILE}\n#define {P}_BK {self.bk}\n"
                   f"#define {P}_STAGES {self.stages}\n\n")
        body = site.function.node.child_by_field_name("body")
        return [Edit.insert(top.start_byte, pre + _fill(TILED, names) + "\n"),
                Edit(body.start_byte, body.end_byte, _fill(KERNEL, names).rstrip("\n"))]

    def update_contract(self, contract, site, ctx):
        n, _ = _naive(site)
        return contract.with_(grid=(f"ceil_div({n.names['N']}, {TILE})",
                                    f"ceil_div({n.names['M']}, {TILE})"), block=(str(THREADS),))

    def inverse_for(self, site, ctx):
        b = _contract_dims(site)
        blk = b[0] if b and len(b) >= 2 and b[0] == b[1] and b[0] in (8, 16, 32) else 16
        return DirectGemm(block=blk)
