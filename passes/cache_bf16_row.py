"""A bf16 row kept in registers as packed words: ``cache-bf16-row`` (optimize) and its
inverse ``reload-bf16-row`` (simplify).

A *scalar row function* (the corpus layernorm form) normalizes one row with the G threads
of its group: three strided passes over the row (sum, squared deviations, normalize), each
reading ``xr[c]`` again from memory, the group reductions given by the caller's helpers::

    template <bool WARP>
    __device__ __forceinline__ void row_scalar(const __nv_bfloat16* xr, const __nv_bfloat16* weight,
                                               const __nv_bfloat16* bias, __nv_bfloat16* yr,
                                               float* mean, float* rstd, int row, bool active,
                                               int cols, float eps, int G, int gt, RED red)
    {
        const float inv_cols = 1.0f / (float)cols;
        const int n = active ? cols : 0;
        float s = 0.0f;
        for (int c = gt; c < n; c += G) { s += __bfloat162float(xr[c]); }
        s = SUM1;                                   // e.g. WARP ? warp_sum(s) : group_sum(...)
        ...                                         // squared deviations, SUM2, normalize
    }

``cache-bf16-row`` adds its *register twin*: a function with the same parameters whose
threads load their slice of the row once, as ``VEC`` 16-byte chunks (``uint4 raw[VEC]``,
8 bf16 each, chunk k at columns ``8 * (gt + k * G)``), keep the packed words in registers
and unpack them (with an unpack helper ``UNPACK<0|1|2>``, three bit-identical spellings so
the compiler keeps 4 * VEC packed words live rather than 8 * VEC floats) for each pass;
weight and bias are read as 16-byte chunks and y is written as 16-byte chunks. At one call
``ROW<T>(args);`` of the scalar function it dispatches to the twin:

* ``form=branch``: ``if (FLAG) { TWIN<T>(args); } else { ROW<T>(args); }`` (the rows of
  that call fit: the call sits under ``if (G == K)`` of the G-threads-per-row template);
* ``form=guard``: after ``if (!FLAG) { ROW<T>(args); return; }`` it inserts
  ``if (cols <= G * VEC * 8) { TWIN<T>(args); return; }`` (the rows that fit, in front
  of the code that follows: a streamed path for longer rows).

FLAG is the run-time flag that tests ``cols % 8 == 0`` and the 16-byte alignment of the
pointers (the guard is the kernel's own; nothing new is guarded). The twin and, where the
file lacks it, the unpack helper are written in front of the scalar function (option
``define``). ``reload-bf16-row`` drops such a dispatch again when the twin is exactly
the form this module writes for the scalar function, and deletes the twin (and the
unpack helper) at its last call. The forms are matched token for token (comments aside);
the twin's local names (``raw``, ``k``, ``base``, ``f``, ...) are the ones written here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Choice, Identifier, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.helper_forms import unpack_helper
from kltrans.passes.vector_facts import (
    aligned_roots as _aligned_roots, assigned as _assigned, declaration as _declaration,
    divisible_lens as _divisible_lens, root as _root)
from kltrans.passes.token_forms import delete_definition, indent, line_start, with_comments
from kltrans.passes.rewrite import token_text as norm
from kltrans.passes.bf16_twin import (
    PARAMS, UNPACK, Found, calls_of_template, dispatch as _dispatch,
    outer_definition as _outer, row_call_parts as _call_parts, scalar_names, stmts as _stmts,
    top_function as _function, twin_text)

BRANCH = """\
if ({flag}) {{
    {twin}<{targ}>({args});
}} else {{
    {fn}<{targ}>({args});
}}"""

GUARD = """\
if ({cols} <= {G} * {vec} * 8) {{
    {twin}<{targ}>({args});
    return;
}}"""

_MAX_VEC = 32  # 4 * VEC packed words per thread: at most 128 registers


# ==================================================================== file helpers




def _evaluate(unit, text: str):
    from kltrans.syntax.contract import evaluate, file_constants

    try:
        return int(evaluate(text, file_constants(unit)))
    except Exception:
        return None


# ================================================================= the dispatch found


def _simplify_find(site) -> "Found | str":
    return _dispatch(site.unit, site.node)


def _optimize_find(site) -> "Found | str":
    unit, node, p = site.unit, site.node, site.pass_
    got = _call_parts(unit, node)
    if got is None:
        return "not a call `ROW<T>(args);`"
    fn, targ, args = got
    sf = _function(unit, fn)
    if sf is None:
        return f"{fn} is not a device function of the file"
    names = scalar_names(unit, sf)
    if isinstance(names, str):
        return names
    if p.form == "branch":
        par = node.parent
        if par is not None and par.type == "compound_statement":
            ifs = par.parent
            if ifs is not None and ifs.type == "if_statement" and len(_stmts(par)) == 1:
                return "the call is already the sole statement of an if branch"
        f = Found("branch", node, fn, p.twin, targ, args, p.flag, names, p.vec, p.unpack)
    else:
        par = node.parent
        ifs = par.parent if par is not None and par.type == "compound_statement" else None
        st = _stmts(par) if par is not None else []
        if ifs is None or ifs.type != "if_statement" or len(st) != 2 or st[0].id != node.id \
                or norm(unit.text(st[1])) != "return ;" or \
                ifs.child_by_field_name("alternative") is not None or \
                norm(unit.text(ifs.child_by_field_name("condition"))) != f"( ! {p.flag} )":
            return f"the call is not in `if (!{p.flag}) {{ {fn}<T>(args); return; }}`"
        f = Found("guard", node, fn, p.twin, targ, args, p.flag, names, p.vec, p.unpack,
                  insert_after=ifs)
    return f


def _find(site) -> "Found | str":
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
    if site.pass_.kind == "optimize":
        tf = _function(unit, f.twin)
        if tf is not None or calls_of_template(unit, f.twin):
            want = norm(twin_text(f.names, f.twin, f.unpack, f.vec))
            if tf is None or norm(unit.text(_outer(tf))) != want:
                return Verdict.no(f"{f.twin} exists in the file and is not the register twin "
                                  f"of {f.fn}")
        uf = _function(unit, f.unpack)
        if uf is None:
            if site.pass_.define != "twin+unpack":
                return Verdict.no(f"no unpack helper {f.unpack} in the file (define=twin+unpack "
                                  "writes one)")
        elif site.pass_.define == "twin+unpack":
            return Verdict.no(f"{f.unpack} is defined already (define=twin or none)")
        if (tf is None) != (site.pass_.define != "none"):
            return Verdict.no(f"define={site.pass_.define} does not fit: {f.twin} is "
                              f"{'missing' if tf is None else 'defined'}")
        for nm in (f.twin, f.unpack):
            if nm in PARAMS or nm in f.names.values():
                return Verdict.no(f"the name {nm} is taken by the row function")
        return Verdict.yes(f"{f.fn} is the three-pass scalar row form; {f.twin} gets its "
                           f"register twin ({f.form})")
    return Verdict.yes(f"{f.twin} is the register twin of {f.fn} ({f.form} dispatch)"
                       + (f"; its last call: {f.twin}" + (f" and {f.unpack}" if f.unpack_last
                                                           else "") + " go" if f.last else ""))


def _bf16(site, ctx, f: Found) -> Verdict:
    unit = site.unit
    sf = _function(unit, f.fn)
    types = [norm(p.base_type) for p in sf.params[:4]]
    if any("__nv_bfloat16" not in t for t in types):
        return Verdict.no(f"the row pointers of {f.fn} are not __nv_bfloat16 ({', '.join(types)})")
    if _function(unit, f.unpack) is not None:
        for k in (0, 1, 2):
            why = unpack_helper(unit, f"{f.unpack}<{k}>")
            if why is not None:
                return Verdict.no(why)
    return Verdict.yes(f"bf16 rows; {f.unpack}<0|1|2> unpack 8 bf16 into floats bit-exactly")


def _flag(site, ctx, f: Found) -> Verdict:
    unit, fn = site.unit, site.function
    got = _declaration(unit, fn, f.flag, site.node.start_byte)
    if got is None or got[1] is None:
        return Verdict.no(f"no flag `{f.flag}` with an initializer is declared before the call")
    if _assigned(unit, fn, f.flag):
        return Verdict.no(f"the flag {f.flag} is assigned after its declaration")
    cols = f.args[PARAMS.index("cols")]
    if norm(cols) not in {norm(x) for x in _divisible_lens(unit, got[1], 8)}:
        return Verdict.no(f"`{f.flag}` does not test that {cols} is a multiple of 8")
    aligned = _aligned_roots(unit, got[1], 16)
    for k in ("xr", "weight", "bias", "yr"):
        a = f.args[PARAMS.index(k)]
        root = _root(unit, fn, a, site.node.start_byte) if re.fullmatch(r"\w+", a) else None
        if root is None:
            return Verdict.no(f"{a} is not a parameter or `param + offset`")
        if root[0] not in aligned:
            return Verdict.no(f"`{f.flag}` does not test the 16-byte alignment of {root[0]}")
    return Verdict.yes(f"`{f.flag}` tests {cols} % 8 == 0 and the 16-byte alignment of the "
                       "row pointers (the kernel's run-time guard; rows start at multiples "
                       f"of {cols})")


def _rows_fit(site, ctx, f: Found) -> Verdict:
    """The twin handles rows of at most G * VEC * 8 columns."""
    unit, fn = site.unit, site.function
    if f.form == "guard":
        return Verdict.yes(f"the guard `{f.args[PARAMS.index('cols')]} <= "
                           f"{f.args[PARAMS.index('G')]} * {f.vec} * 8` admits only rows that fit")
    vec = _evaluate(unit, f.vec)
    g = f.args[PARAMS.index("G")]
    gval = _evaluate(unit, g) if re.fullmatch(r"\d+|[A-Z_]\w*", g) else None
    # the enclosing `if (G == K)` of the G-threads-per-row template
    n = site.node.parent
    gname = None
    while n is not None and n.id != fn.node.id:
        if n.type == "if_statement":
            m = re.fullmatch(r"\( (\w+) == (\w+) \)", norm(unit.text(n.child_by_field_name("condition"))))
            if m is not None and n.child_by_field_name("consequence").start_byte <= \
                    site.node.start_byte:
                gname, k = m.group(1), _evaluate(unit, m.group(2))
                if k is not None and (gval is None or gval == k):
                    gval = k
                    break
        n = n.parent
    if vec is None or gval is None or gname is None:
        return Verdict.unknown("cannot tell that the rows of this call have at most G * VEC * 8 "
                               "columns (no enclosing `if (G == K)` of the G-threads-per-row "
                               "template)")
    body = norm(unit.text(fn.body))
    mq = re.search(r"const int (\w+) = \( (\w+) \+ (\w+) - 1 \) / (\w+) ;", body)
    mr = re.search(r"const int (\w+) = (\w+) >= 1 && (\w+) <= (\w+) \? (\w+) / (\w+) : 1 ;", body)
    mg = re.search(r"const int %s = (\w+) / (\w+) ;" % re.escape(gname), body)
    if not (mq and mr and mg) or mq.group(3) != mq.group(4) or mr.group(2) != mq.group(1) or \
            mg.group(2) != mr.group(1) or mq.group(2) != norm(f.args[PARAMS.index("cols")]):
        return Verdict.unknown(f"{gname} is not `T / rpb` with rpb = R / ceil(cols / W) of the "
                               "G-threads-per-row template")
    width, threads, r = (_evaluate(unit, mq.group(3)), _evaluate(unit, mg.group(1)),
                         _evaluate(unit, mr.group(4)))
    if None in (width, threads, r) or r * gval != threads:
        return Verdict.unknown("the template's constants cannot be evaluated")
    # G == T / R only when ceil(cols / W) == 1, i.e. cols <= W
    if width <= gval * vec * 8:
        return Verdict.yes(f"under {gname} == {gval} the rows have at most {width} columns "
                           f"<= {gval} * {vec} * 8")
    return Verdict.no(f"under {gname} == {gval} rows reach {width} columns > {gval} * {vec} * 8: "
                      "the twin would drop columns")


def _overlap(site, ctx, f: Found) -> Verdict:
    unit, fn = site.unit, site.function
    root = _root(unit, fn, f.args[0], site.node.start_byte) if re.fullmatch(r"\w+", f.args[0]) \
        else None
    if root is None:
        return Verdict.no(f"{f.args[0]} is not a parameter or `param + offset`")
    outs = []
    for k in ("yr", "mean", "rstd"):
        a = f.args[PARAMS.index(k)]
        r = _root(unit, fn, a, site.node.start_byte) if re.fullmatch(r"\w+", a) else None
        outs.append(r[0] if r else a)
    bad = [o for o in outs if not ctx.assumed("no_alias", root[0], o)]
    if bad:
        return Verdict.unknown(f"{root[0]} may overlap {bad[0]}: the register path reads the row "
                               f"once before writing, the scalar path re-reads it; pass "
                               f"--assume 'no_alias({root[0]},{bad[0]})'")
    return Verdict.yes(f"{root[0]} does not overlap {', '.join(outs)} (assumed)")


def _registers(site, ctx, f: Found) -> Verdict:
    vec = _evaluate(site.unit, f.vec)
    if vec is None:
        return Verdict.unknown(f"VEC = {f.vec} cannot be evaluated")
    if not 1 <= vec <= _MAX_VEC:
        return Verdict.no(f"VEC = {vec}: {4 * vec} packed words per thread (at most "
                          f"{4 * _MAX_VEC} registers)")
    return Verdict.yes(f"VEC = {vec}: {4 * vec} packed 32-bit words per thread in registers")


def _helper_goes(site, ctx, f: Found) -> Verdict:
    """Simplify only: the twin's last dispatch deletes the twin, and the unpack helper with
    it when nothing else calls it. A helper still called elsewhere (a vectorized bf16 loop
    not scalarized yet) would be left behind once those calls go too, with no pass to
    delete it: that order ends short of naive, so the walk scalarizes them first."""
    if not f.last or f.unpack_last:
        return Verdict.yes("the twin stays" if not f.last else
                           f"{f.unpack} goes with {f.twin}")
    unit = site.unit
    tf = _outer(_function(unit, f.twin))
    others = [c for c in calls_of_template(unit, f.unpack)
              if not tf.start_byte <= c.start_byte < tf.end_byte]
    if not others:
        return Verdict.yes(f"{f.unpack} is not the helper this module writes: it stays")
    return Verdict.no(f"{f.unpack} is still called outside {f.twin} (line "
                      f"{others[0].start_point[0] + 1}): scalarize those bf16 loops first, so "
                      f"that it goes with {f.twin}")


def _preconditions(kind: str):
    return (
        Precondition("row-form", "pipeline",
                     "the scalar row function and (simplify) its register twin, in the "
                     "dispatch this module writes", _check(_form)),
        Precondition("bf16-row", "dtype", "bf16 rows and a bit-exact bf16 unpack helper",
                     _check(_bf16)),
        Precondition("vector-flag", "layout",
                     "the flag tests cols % 8 == 0 and the 16-byte alignment of the rows",
                     _check(_flag)),
        Precondition("rows-fit", "layout", "the rows of the twin's calls fit G * VEC * 8",
                     _check(_rows_fit)),
        Precondition("no-overlap", "storage", "x does not overlap the outputs (context)",
                     _check(_overlap)),
        Precondition("register-budget", "hardware", "4 * VEC packed words fit the registers",
                     _check(_registers)),
    )


# ======================================================================= the passes
@dataclass(frozen=True)
class CacheBf16Row(Pass):
    """Dispatch a bf16 scalar row function's call to its register twin (the row read once,
    packed in registers, 16-byte loads and stores).

    Before (``form=branch``; the call under ``if (G == 32)`` of the G-threads-per-row
    template)::

        ln_row_scalar<true>(xr, weight, bias, yr, mean, rstd, row, true, cols, eps, 32, gt, red);

    After ``cache-bf16-row{form=branch,define=twin+unpack}``::

        if (vec_ok) {
            ln_row_regs<true>(xr, weight, bias, yr, mean, rstd, row, true, cols, eps, 32, gt, red);
        } else {
            ln_row_scalar<true>(xr, weight, bias, yr, mean, rstd, row, true, cols, eps, 32, gt, red);
        }

    and in front of ``ln_row_scalar`` the twin ``ln_row_regs`` (``uint4 raw[LN_VEC]``
    loaded once, three passes over the registers through ``ln_unpack<0|1|2>``, 16-byte
    weight/bias loads and y stores) and the unpack helper ``ln_unpack``. With
    ``form=guard``, after ``if (!vec_ok) { ln_row_scalar<false>(args); return; }`` it
    inserts ``if (cols <= G * LN_VEC * 8) { ln_row_regs<false>(args); return; }``.

    Runtime facts: the flag (``vec_ok``) is the kernel's own run-time guard (cols % 8 and
    16-byte alignment); that x does not overlap the outputs comes from the context
    (``--assume 'no_alias(*)'``). Nothing new is guarded.

    Preconditions: row-form (pipeline: the function called is the scalar row form of
    this module; the twin name is free or already the twin; ``define`` fits the file),
    bf16-row (dtype: bf16 row pointers; an existing unpack helper is bit-exact),
    vector-flag (layout: the flag tests cols % 8 == 0 and the 16-byte alignment of the
    row pointers' parameters), rows-fit (layout: guard form, or the call sits under
    ``if (G == K)`` of the G-threads-per-row template with rows <= K * VEC * 8),
    no-overlap (storage: context), register-budget (hardware: VEC <= 32).

    Options: ``form`` (branch, guard), ``twin`` (the twin's name, ln_row_regs),
    ``unpack`` (the unpack helper, ln_unpack), ``vec`` (chunks per thread, a macro:
    LN_VEC), ``flag`` (vec_ok), ``define`` (twin+unpack: write both; twin: the unpack
    helper exists; none: both exist).
    """

    name = "cache-bf16-row"
    kind = "optimize"
    inverse = "reload-bf16-row"
    anchor = Rule(kind="expression_statement", inside_kernel=True,
                  regex=r"^\w+\s*<\s*\w+\s*>\s*\(")
    preconditions = _preconditions("optimize")

    form: str = option("branch", Choice("branch", "guard"), "the dispatch written")
    twin: str = option("ln_row_regs", Identifier(), "the register twin's name")
    unpack: str = option("ln_unpack", Identifier(), "the unpack helper's name")
    vec: str = option("LN_VEC", Identifier(), "16-byte chunks per thread (macro)")
    flag: str = option("vec_ok", Identifier(), "the run-time vector flag")
    define: str = option("twin+unpack", Choice("twin+unpack", "twin", "none"),
                         "which definitions to write")

    def rewrite(self, site, ctx):
        f = _optimize_find(site)
        unit = site.unit
        src = unit.source
        ind = src[line_start(src, site.node.start_byte):site.node.start_byte].decode()
        names = dict(twin=f.twin, fn=f.fn, targ=f.targ, args=", ".join(f.args), flag=f.flag,
                     vec=f.vec, cols=f.args[PARAMS.index("cols")], G=f.args[PARAMS.index("G")])
        edits = []
        if f.form == "branch":
            edits.append(Edit(site.node.start_byte, site.node.end_byte,
                              indent(BRANCH.format(**names), ind)))
        else:
            a = f.insert_after
            aind = src[line_start(src, a.start_byte):a.start_byte].decode()
            edits.append(Edit.insert(a.end_byte, "\n" + aind + indent(GUARD.format(**names), aind)))
        if self.define != "none":
            sf = _function(unit, f.fn)
            at = with_comments(unit, _outer(sf))
            text = twin_text(f.names, f.twin, f.unpack, f.vec) + "\n\n"
            if self.define == "twin+unpack":
                text = UNPACK.format(unpack=f.unpack) + "\n\n" + text
            edits.append(Edit.insert(at, text))
        return edits

    def inverse_for(self, site, ctx):
        return ReloadBf16Row()


@dataclass(frozen=True)
class ReloadBf16Row(Pass):
    """Drop the register twin of a bf16 scalar row function: every row re-reads x.

    Before::

        if (vec_ok) {
            ln_row_regs<true>(xr, weight, bias, yr, mean, rstd, row, true, cols, eps, 32, gt, red);
        } else {
            ln_row_scalar<true>(xr, weight, bias, yr, mean, rstd, row, true, cols, eps, 32, gt, red);
        }

    After ``reload-bf16-row``::

        ln_row_scalar<true>(xr, weight, bias, yr, mean, rstd, row, true, cols, eps, 32, gt, red);

    A guard ``if (cols <= G * VEC * 8) { TWIN<T>(args); return; }`` right after
    ``if (!FLAG) { ROW<T>(args); return; }`` is deleted (the code after it handles every
    row). At the twin's last call its definition goes, and the unpack helper too when
    nothing else calls it. Only a twin that is exactly what ``cache-bf16-row`` writes for
    the scalar function is dropped.

    Preconditions: the same six as ``cache-bf16-row`` (row-form: pipeline, bf16-row:
    dtype, vector-flag and rows-fit: layout, no-overlap: storage, register-budget:
    hardware), read on the dispatch found; and helper-goes (pipeline): at the twin's last
    call, nothing outside the twin still calls the unpack helper, which would otherwise
    be left behind with no pass to delete it (the walk scalarizes those loops first).

    Options: none (``inverse_for`` gives ``cache-bf16-row`` with the form and names read
    here, and ``define`` saying which definitions to write back).
    """

    name = "reload-bf16-row"
    kind = "simplify"
    inverse = "cache-bf16-row"
    # an if whose (first) branch starts with a call of a function template
    anchor = Rule(kind="if_statement", inside_kernel=True,
                  regex=r"^if\s*\([^{;]*\)\s*\{\s*(//[^\n]*\s*)*\w+\s*<\s*\w+\s*>\s*\(")
    preconditions = _preconditions("simplify") + (
        Precondition("helper-goes", "pipeline",
                     "at the twin's last call, nothing outside the twin calls the unpack "
                     "helper (it goes with the twin)", _check(_helper_goes)),
    )

    def rewrite(self, site, ctx):
        f = _simplify_find(site)
        unit = site.unit
        src = unit.source
        edits = []
        if f.form == "branch":
            call = f"{f.fn}<{f.targ}>({', '.join(f.args)});"
            edits.append(Edit(site.node.start_byte, site.node.end_byte, call))
        else:
            s = line_start(src, site.node.start_byte)
            e = src.find(b"\n", site.node.end_byte)
            e = len(src) if e < 0 else e + 1
            edits.append(Edit.delete(s, e))
        if f.last:
            edits.append(delete_definition(unit, _outer(_function(unit, f.twin))))
            if f.unpack_last:
                edits.append(delete_definition(unit, _outer(_function(unit, f.unpack))))
        return edits

    def inverse_for(self, site, ctx):
        f = _simplify_find(site)
        define = "none"
        if f.last:
            define = "twin+unpack" if f.unpack_last else "twin"
        return CacheBf16Row(form=f.form, twin=f.twin, unpack=f.unpack, vec=f.vec, flag=f.flag,
                            define=define)


__all__ = ["CacheBf16Row", "ReloadBf16Row"]
