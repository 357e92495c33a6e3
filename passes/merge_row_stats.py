"""Online-softmax statistics of a row shared by a group of threads: ``merge-row-stats``
(optimize) and its inverse ``direct-row-stats`` (simplify).

When G threads share a row, each folds its slice into a running (max, sum of exp) pair
and the row's pair is the merge of the G pairs (max of the maxima, sums rescaled to it).
The fast form calls a helper that merges by warp shuffles (``__shfl_xor_sync``) and,
for G > 32, through two small ``__shared__`` arrays of warp pairs. The direct form has
every thread fold the whole row itself with the scalar online fold: no warp primitives,
no shared memory, no barrier. The forms are matched token for token (comments aside).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Bool, Identifier, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.vector_facts import declaration as _declaration, root as _root
from kltrans.passes.helper_forms import ADD1, FOLD_EXPRS as _EXPRS, GROUP, SCALAR, group_merge_names
from kltrans.passes.token_forms import (
    helper_is as _helper_is, calls_of, delete_definition, device_function, indent,
    line_start, template_regex, with_comments)
from kltrans.passes.rewrite import token_text as norm
from kltrans.passes.expr_facts import text_thread_dependent as _thread_dependent

# the pair merge and the group merge helpers, as the fast form has them
PAIR = """\
// merge the running (max, sum of exp(v - max)) pair (m, s) with (om, os)
__device__ __forceinline__ void {pair}(float& m, float& s, float om, float os)
{{
    const float nm = fmaxf(m, om);
    const float a = s == 0.0f ? 0.0f : s * expf(m - nm);
    const float b = os == 0.0f ? 0.0f : os * expf(om - nm);
    m = nm;
    s = a + b;
}}"""


CALL = "{merge}({m}, {s}, {G}, {red_m}, {red_s});"

SHARED = """\
__shared__ float {red_m}[{threads} / 32];
__shared__ float {red_s}[{threads} / 32];"""

DIRECT = """\
{m} = -INFINITY;
{s} = 0.0f;
for (int {c} = 0; {c} < {n}; ++{c}) {{
    {add1}({m}, {s}, {xr}[{c}]);
}}"""

_FAST_OPTS = ("merge", "pair", "G", "red_m", "red_s", "threads")


def _stmts(node):
    return [c for c in node.named_children if c.type != "comment"]


def _fold(unit, fn_node):
    """(add1, xr, n) of the kernel's scalar online fold loop, or None."""
    for loop in unit.nodes_of_type("for_statement", within=fn_node):
        m = template_regex(SCALAR, _EXPRS).fullmatch(norm(unit.text(loop)))
        if m is not None and _helper_is(unit, m.group("add1"), ADD1, "add1"):
            return m.group("add1"), m.group("xr"), m.group("n")
    return None


def _shared_decls(unit, fn_node, names):
    st = _stmts(fn_node.child_by_field_name("body"))
    if len(st) < 2:
        return None
    if norm(unit.text(st[0]) + unit.text(st[1])) == norm(SHARED.format(**names)):
        return st[0], st[1]
    return None


def _uniform(site, node) -> Verdict:
    """Every thread of the block reaches ``node`` (the group merge may hold a barrier)."""
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
                return Verdict.no(f"the merge sits under `{norm(unit.text(c))}`, which depends "
                                  f"on the thread: not every thread would reach its barrier")
        n = p
    for r in unit.nodes_of_type("return_statement", within=fn.node):
        if r.start_byte >= node.start_byte:
            continue
        q = r.parent
        while q is not None and q.id != body.id:
            if q.type == "if_statement" and not (q.start_byte <= node.start_byte < q.end_byte):
                c = q.child_by_field_name("condition")
                if _thread_dependent(unit, fn, unit.text(c), q.start_byte):
                    return Verdict.no(f"a thread-dependent `return` (line "
                                      f"{unit.location(r.start_byte).line}) comes before the "
                                      f"merge")
            q = q.parent
    return Verdict.yes("every thread of the block reaches the merge (uniform conditions)")


def _groups(site, names) -> Verdict:
    unit, fn = site.unit, site.function
    g = re.escape(names["G"])
    lane = div = None
    for d in unit.nodes_of_type("init_declarator", within=fn.node):
        v = d.child_by_field_name("value")
        if v is None:
            continue
        t = norm(unit.text(v))
        if re.fullmatch(r"threadIdx \. x %% %s" % g, t):
            lane = unit.text(d.child_by_field_name("declarator"))
        if re.fullmatch(r"threadIdx \. x / %s" % g, t):
            div = unit.text(d.child_by_field_name("declarator"))
    if lane is None or div is None:
        return Verdict.no(f"no locals `threadIdx.x % {names['G']}` and `threadIdx.x / "
                          f"{names['G']}`: the threads of a row are not a group of "
                          f"{names['G']} consecutive threads")
    return Verdict.yes(f"row groups of {names['G']} consecutive threads ({div}, {lane})")


def _whole_warps(site, names) -> Verdict:
    from kltrans.syntax.contract import contracts, evaluate, file_constants

    try:
        c = contracts(site.unit).get(site.function.name)
        if c is None:
            return Verdict.no("no launch header: the block size is unknown")
        env = file_constants(site.unit)
        b = [evaluate(x, env) for x in c.block]
        threads = evaluate(names["threads"], env)
    except Exception as e:
        return Verdict.no(f"the block size or {names['threads']} cannot be evaluated ({e})")
    if b[1:] not in ([], [1], [1, 1]) or b[0] % 32:
        return Verdict.no(f"the block {b} is not one-dimensional whole warps: the full-mask "
                          f"shuffles need every lane")
    if threads != b[0]:
        return Verdict.no(f"{names['threads']} = {threads} is not the block's {b[0]} threads "
                          f"(the shared warp pairs would not fit)")
    return Verdict.yes(f"{b[0]} threads: {b[0] // 32} whole warps")


def _reassoc(ctx) -> Verdict:
    if ctx.assumed("reassoc"):
        return Verdict.yes("reassociation is allowed (merged pairs round differently from "
                           "one sequential fold)")
    return Verdict.unknown("the merge of per-thread pairs rounds differently from a "
                           "sequential fold; pass --assume reassoc")


def _stable(site, ctx, names) -> Verdict:
    unit, fn = site.unit, site.function
    root = _root(unit, fn, names["xr"], site.node.start_byte)
    if root is None:
        return Verdict.no(f"{names['xr']} is not a parameter or `param + offset`")
    par = next((p for p in fn.params if p.name == root[0]), None)
    if par is None or not par.const:
        return Verdict.no(f"{root[0]} is not a const pointer parameter: the row may change "
                          f"between the folds")
    others = [p.name for p in fn.params if p.pointer and p.name != root[0] and not p.const]
    bad = [o for o in others if not ctx.assumed("no_alias", root[0], o)]
    if bad:
        return Verdict.unknown(f"{root[0]} and {bad[0]} may alias: pass --assume "
                               f"no_alias({root[0]},{bad[0]})")
    return Verdict.yes(f"{root[0]} is const and apart from the outputs (assumed)")


# ------------------------------------------------------------------ simplify
def _fast(site):
    unit = site.unit
    m = template_regex(CALL).fullmatch(norm(unit.text(site.node)))
    if m is None:
        return None, "not a call `MERGE(m, s, G, red_m, red_s);`"
    names = m.groupdict()
    g = group_merge_names(unit, names["merge"])
    if g is None:
        return None, (f"{names['merge']} is not the group merge merge-row-stats writes "
                      f"(warp shuffles, then shared warp pairs when G > 32)")
    names.update(pair=g["pair"], pragma=g["pragma"])
    if not _helper_is(unit, names["pair"], PAIR, "pair"):
        return None, f"{names['pair']} is not the (max, sum) pair merge"
    f = _fold(unit, site.function.node)
    if f is None:
        return None, ("no scalar online fold loop `for (int c = START; c < N; c += G) "
                      "ADD1(m, s, xr[c]);` in the kernel gives the row and its fold")
    names.update(add1=f[0], xr=f[1], n=f[2], c="c")
    last = len(calls_of(unit, names["merge"])) == 1
    names["last"] = last
    names["threads"] = None
    if last:
        st = _stmts(site.function.node.child_by_field_name("body"))
        mm = re.fullmatch(r"__shared__ float (\w+) \[ (\w+) / 32 \] ;", norm(unit.text(st[0])))
        if mm is None or mm.group(1) != names["red_m"]:
            return None, (f"the kernel body does not start with `__shared__ float "
                          f"{names['red_m']}[THREADS / 32];`")
        names["threads"] = mm.group(2)
        decls = _shared_decls(unit, site.function.node, names)
        if decls is None:
            return None, (f"the kernel body does not start with the shared arrays "
                          f"{names['red_m']}, {names['red_s']}")
        for n in unit.walk(site.function.node):
            if n.type == "identifier" and unit.text(n) in (names["red_m"], names["red_s"]) \
                    and not any(d.start_byte <= n.start_byte < d.end_byte for d in decls) \
                    and not site.node.start_byte <= n.start_byte < site.node.end_byte:
                return None, f"{unit.text(n)} is used outside the merge"
    return names, ""


def _s_check(f):
    def check(site, ctx):
        names, why = _fast(site)
        return Verdict.unknown(why) if names is None else f(site, ctx, names)
    return check


def _s_form(site, ctx, names) -> Verdict:
    unit = site.unit
    for v in (names["m"], names["s"]):
        got = _declaration(unit, site.function, v, site.node.start_byte)
        if got is None or not norm(unit.text(got[0])).startswith("float"):
            return Verdict.no(f"{v} is not a float local")
    if any(unit.text(n) == "c" for n in unit.walk(site.node.parent) if n.type == "identifier"
           and n.parent is not None and n.parent.type == "init_declarator"
           and n.parent.parent is not None and n.parent.parent.parent is not None
           and n.parent.parent.parent.id == site.node.parent.id):
        return Verdict.no("the name c is declared in the merge's block")
    return Verdict.yes(f"{names['merge']} merges ({names['m']}, {names['s']}) over groups of "
                       f"{names['G']}; {names['add1']} folds {names['xr']}[0, {names['n']})")


@dataclass(frozen=True)
class DirectRowStats(Pass):
    """Replace the group merge of per-thread online-softmax pairs by a direct fold of the row.

    Before (each of the G threads of a row has folded its slice into ``(m, s)``)::

        smx_group_merge(m, s, G, red_m, red_s);   // shuffles, then shared warp pairs

    After ``direct-row-stats`` (``smx_add1``, ``xr`` and ``cols`` are read from the
    kernel's scalar fold loop ``for (int c = gt; c < cols; c += G) smx_add1(m, s,
    xr[c]);``)::

        m = -INFINITY;
        s = 0.0f;
        for (int c = 0; c < cols; ++c) {
            smx_add1(m, s, xr[c]);
        }

    Either way every thread ends with the row's (max, sum of exp) pair. At the last call,
    the merge helper (with its comment) and the ``__shared__ float red_m[T / 32],
    red_s[T / 32];`` at the top of the kernel body go too.

    Preconditions: merge-form (pipeline: the call, the group merge and pair merge helpers
    are the forms in this module; a scalar fold loop exists; at the last call the shared
    arrays are the body's first statements and used only by the merge), row-groups
    (layout: locals ``threadIdx.x % G`` and ``threadIdx.x / G``), whole-warps (hardware:
    a 1-D block of whole warps, ``T`` of them), reassoc (dtype: context), input-stable
    (storage: the row's parameter is const and apart from the outputs, ``no_alias``
    from the context: the direct fold re-reads it).

    Options: none (``inverse_for`` gives ``merge-row-stats`` with the names read here).
    """

    name = "direct-row-stats"
    kind = "simplify"
    inverse = "merge-row-stats"
    anchor = Rule(kind="expression_statement", inside_kernel=True,
                  regex=r"^\w+\s*\(\s*\w+\s*,\s*\w+\s*,\s*\w+\s*,\s*\w+\s*,\s*\w+\s*\)\s*;$")
    preconditions = (
        Precondition("merge-form", "pipeline", "the group merge of online pairs",
                     _s_check(_s_form)),
        Precondition("row-groups", "layout", "a row per group of G consecutive threads",
                     _s_check(lambda s, c, n: _groups(s, n))),
        Precondition("whole-warps", "hardware", "whole warps, as many as the shared pairs",
                     _s_check(lambda s, c, n: _whole_warps(s, n) if n["last"] else
                              Verdict.yes("not the last merge: the block is checked there"))),
        Precondition("reassoc", "dtype", "the statistics may be reassociated",
                     _s_check(lambda s, c, n: _reassoc(c))),
        Precondition("input-stable", "storage", "the row does not change under the folds",
                     _s_check(_stable)),
    )

    def rewrite(self, site, ctx):
        names, _ = _fast(site)
        unit = site.unit
        src = unit.source
        ind = src[line_start(src, site.node.start_byte):site.node.start_byte].decode()
        edits = [Edit(site.node.start_byte, site.node.end_byte,
                      indent(DIRECT.format(**names), ind))]
        if names["last"]:
            edits.append(delete_definition(unit, device_function(unit, names["merge"])))
            d0, d1 = _shared_decls(unit, site.function.node, names)
            s = line_start(src, d0.start_byte)
            e = src.find(b"\n", d1.end_byte)
            e = len(src) if e < 0 else e + 1
            if src[e:e + 1] == b"\n":
                e += 1
            edits.append(Edit.delete(s, e))
        return edits

    def inverse_for(self, site, ctx):
        names, _ = _fast(site)
        return MergeRowStats(merge=names["merge"], pair=names["pair"], G=names["G"],
                             red_m=names["red_m"], red_s=names["red_s"],
                             threads=names["threads"] or "SMX_THREADS",
                             pragma=names["pragma"])


# ------------------------------------------------------------------ optimize
def _direct(site):
    unit = site.unit
    par = site.node.parent
    if par is None or par.type != "compound_statement":
        return None, "not a statement of a block"
    st = _stmts(par)
    i = [x.id for x in st].index(site.node.id)
    seg = st[i:i + 3]
    m = template_regex(DIRECT).fullmatch(" ".join(norm(unit.text(x)) for x in seg))
    if len(seg) < 3 or m is None:
        return None, ("not the direct fold `m = -INFINITY; s = 0.0f; for (int c = 0; c < N; "
                      "++c) ADD1(m, s, xr[c]);`")
    names = m.groupdict()
    if not _helper_is(unit, names["add1"], ADD1, "add1"):
        return None, f"{names['add1']} is not the scalar online fold"
    p = site.pass_
    names.update({k: getattr(p, k) for k in _FAST_OPTS})
    names["pragma"] = p.pragma
    return (names, seg[0], seg[-1]), ""


def _o_check(f):
    def check(site, ctx):
        d, why = _direct(site)
        return Verdict.unknown(why) if d is None else f(site, ctx, d[0])
    return check


def _o_form(site, ctx, names) -> Verdict:
    unit, fn = site.unit, site.function
    u = _uniform(site, site.node)
    if not u.holds:
        return u
    have = device_function(unit, names["merge"])
    if have is not None:
        g = group_merge_names(unit, names["merge"])
        if g is None or g["pair"] != names["pair"]:
            return Verdict.no(f"a function {names['merge']} exists and is not the group merge")
    else:
        if not _helper_is(unit, names["pair"], PAIR, "pair"):
            return Verdict.no(f"no pair merge {names['pair']} in the file")
        if calls_of(unit, names["merge"]):
            return Verdict.no(f"the name {names['merge']} is taken")
        taken = {unit.text(n) for n in unit.walk(fn.node) if n.type == "identifier"}
        for k in ("red_m", "red_s"):
            if names[k] in taken:
                return Verdict.no(f"the name {names[k]} is taken in {fn.name}")
    if _declaration(unit, fn, names["G"], site.node.start_byte) is None:
        return Verdict.no(f"no local {names['G']} (threads per row) before the fold")
    return Verdict.yes(f"a direct fold of {names['xr']} into ({names['m']}, {names['s']})")


@dataclass(frozen=True)
class MergeRowStats(Pass):
    """Replace a thread's direct fold of its whole row by a merge of the row group's pairs.

    Before (every thread folds the whole row; it has already folded its slice of it, the
    columns ``gt, gt + G, ...``, into ``(m, s)``, so that pair is dropped)::

        m = -INFINITY;
        s = 0.0f;
        for (int c = 0; c < cols; ++c) {
            smx_add1(m, s, xr[c]);
        }

    After ``merge-row-stats``::

        smx_group_merge(m, s, G, red_m, red_s);

    with the helper ``smx_group_merge`` (butterfly ``__shfl_xor_sync`` merges of the
    pairs through ``smx_merge``, then, for G > 32, the warps' pairs through
    ``__shared__ float red_m[T / 32], red_s[T / 32]`` and one ``__syncthreads``) added
    before the kernel, and the two arrays at the top of the kernel body, when missing.
    Correct only when the thread's ``(m, s)`` before the fold is the pair of its slice of
    the row: the gate checks it (the pass cannot see the slices).

    Preconditions: direct-form (pipeline: the three statements above, with the scalar
    online fold; every thread of the block reaches them, no thread-dependent condition or
    earlier return; the helper is the group merge or absent and then ``pair`` is the pair
    merge and the names are free; ``G`` is a local), row-groups (layout), whole-warps
    (hardware), reassoc (dtype), input-stable (storage): as for ``direct-row-stats``.

    Options: ``merge``, ``pair`` (helper names), ``G`` (the threads-per-row local),
    ``red_m``, ``red_s`` (shared arrays), ``threads`` (the macro of the block size),
    ``pragma`` (``#pragma unroll`` on the shuffle loop).
    """

    name = "merge-row-stats"
    kind = "optimize"
    inverse = "direct-row-stats"
    anchor = Rule(kind="expression_statement", inside_kernel=True,
                  regex=r"^\w+\s*=\s*-INFINITY\s*;$")
    preconditions = (
        Precondition("direct-form", "pipeline", "a direct fold of the row", _o_check(_o_form)),
        Precondition("row-groups", "layout", "a row per group of G consecutive threads",
                     _o_check(lambda s, c, n: _groups(s, n))),
        Precondition("whole-warps", "hardware", "whole warps, as many as the shared pairs",
                     _o_check(lambda s, c, n: _whole_warps(s, n))),
        Precondition("reassoc", "dtype", "the statistics may be reassociated",
                     _o_check(lambda s, c, n: _reassoc(c))),
        Precondition("input-stable", "storage", "the row does not change under the folds",
                     _o_check(_stable)),
    )

    merge: str = option("smx_group_merge", Identifier(words=()), "the group merge helper")
    pair: str = option("smx_merge", Identifier(words=()), "the pair merge helper")
    G: str = option("G", Identifier(words=()), "the threads-per-row local")
    red_m: str = option("red_m", Identifier(words=()), "shared warp maxima")
    red_s: str = option("red_s", Identifier(words=()), "shared warp sums")
    threads: str = option("SMX_THREADS", Identifier(words=()), "macro: threads per block")
    pragma: bool = option(True, Bool(), "#pragma unroll on the shuffle loop")

    def rewrite(self, site, ctx):
        d, _ = _direct(site)
        names, first, last = d
        unit = site.unit
        src = unit.source
        edits = [Edit(first.start_byte, last.end_byte, CALL.format(**names))]
        if device_function(unit, names["merge"]) is None:
            text = GROUP.replace("{pragma}", "#pragma unroll\n" if names["pragma"] else "")
            kern = site.function.node
            while kern.parent is not None and kern.parent.type == "linkage_specification":
                kern = kern.parent
            at = with_comments(unit, kern)
            edits.append(Edit.insert(at, text.format(**names) + "\n\n"))
            body = site.function.node.child_by_field_name("body")
            s0 = _stmts(body)[0]
            ls0 = line_start(src, s0.start_byte)
            ind0 = src[ls0:s0.start_byte].decode()
            edits.append(Edit.insert(ls0, ind0 + indent(SHARED.format(**names), ind0) + "\n\n"))
        return edits

    def inverse_for(self, site, ctx):
        return DirectRowStats()
