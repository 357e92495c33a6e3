"""16-byte vector path of a streamed online-softmax pass: ``vectorize-online-stream``
(optimize) and ``scalarize-online-stream`` (simplify).

A streamed *online pass* folds every element of a strided slice of a row into a running
(max, sum of exp) pair through a scalar helper ``ADD1(float& m, float& s, float v)``::

    for (int c = gt; c < cols; c += G) {
        smx_add1(m, s, xr[c]);
    }

``vectorize-online-stream`` puts a float4 path in front of it, taken when a run-time flag
says the length is a multiple of 4 and the pointers are 16-byte aligned: the same threads
stride over float4 vectors, U of them loaded before any is folded, each folded by a
four-wide helper ``ADD4(float& m, float& s, float4 v)`` (one rescale per vector; the
helper is added in front of ADD1 when the file lacks it). ``scalarize-online-stream``
drops the float4 path again (and ADD4 when nothing else calls it) when it is exactly the
vector form of its fallback. The forms are matched token for token (comments aside).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Bool, Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.vector_facts import (
    aligned_roots as _aligned_roots, assigned as _assigned, declaration as _declaration,
    divisible_lens as _divisible_lens, flat as _flat, multiple as _multiple, root as _root)
from kltrans.passes.rewrite import token_text as norm
from kltrans.passes.token_forms import (calls_of, delete_definition, device_function,
                                        helper_is as _helper_is, indent, line_start,
                                        with_comments)
from kltrans.passes.helper_forms import (
    ADD1, ADD4, VECTOR, scalar_names as _scalar_names, vector_names as _vector_names)



# ---------------------------------------------------------------- shared checks
def _flag_check(site, names, before: int) -> Verdict:
    unit, fn = site.unit, site.function
    flag = names["flag"]
    got = _declaration(unit, fn, flag, before)
    if got is None or got[1] is None:
        return Verdict.no(f"no flag `{flag}` with an initializer is declared before the loop "
                          f"(it must test the length and the alignment at run time)")
    if _assigned(unit, fn, flag):
        return Verdict.no(f"the flag {flag} is assigned after its declaration")
    flat = _flat(unit.text(got[1]))
    bad = next((t for t in ("||", "?", "!=", "!(") if t in flat), None)
    if bad is not None:
        return Verdict.no(f"`{flag}` is not a plain conjunction of `== 0` tests (it has {bad})")
    lens = _divisible_lens(unit, got[1], 4)
    if _flat(names["n"]) not in lens:
        return Verdict.no(f"`{flag}` does not test that the length {names['n']} is a "
                          f"multiple of 4")
    root = _root(unit, fn, names["xr"], before)
    if root is None:
        return Verdict.no(f"{names['xr']} is not a parameter or `param + offset`")
    if root[0] not in _aligned_roots(unit, got[1], 16):
        return Verdict.no(f"`{flag}` does not test the 16-byte alignment of {root[0]}")
    if root[1] is not None and not _multiple(unit, fn, root[1], 4, lens, before):
        return Verdict.no(f"the offset of {names['xr']} from {root[0]} is not a multiple of 4 "
                          f"or of a length the flag tests")
    return Verdict.yes(f"`{flag}` tests {names['n']} % 4 == 0 and the 16-byte alignment of "
                       f"{root[0]} (run-time guard; scalar fallback otherwise)")


def _float_pair(site, names) -> Verdict:
    unit, fn = site.unit, site.function
    for v in (names["m"], names["s"]):
        got = _declaration(unit, fn, v, site.node.start_byte)
        if got is None or not re.match(r"float\b", norm(unit.text(got[0]))):
            return Verdict.no(f"{v} is not a local float")
    got = _declaration(unit, fn, names["xr"], site.node.start_byte)
    if got is None or not re.match(r"(const )?float \*", norm(unit.text(got[0]))):
        return Verdict.no(f"{names['xr']} is not a float pointer")
    return Verdict.yes(f"{names['m']}, {names['s']} are float, {names['xr']} points to float")


def _reassoc(ctx) -> Verdict:
    if ctx.assumed("reassoc"):
        return Verdict.yes("reassociation is allowed (the four-wide helper rescales once per "
                           "vector and sums its four exponentials pairwise)")
    return Verdict.unknown("the four-wide fold rounds differently from four scalar folds; "
                           "pass --assume reassoc (a workload with a tolerance gives it)")


def _read_only(site, names) -> Verdict:
    unit, fn = site.unit, site.function
    root = _root(unit, fn, names["xr"], site.node.start_byte)
    if root is None:
        return Verdict.no(f"{names['xr']} is not a parameter or `param + offset`")
    got = _declaration(unit, fn, names["xr"], site.node.start_byte)
    if got is None or "const" not in norm(unit.text(got[0])).split("*")[0]:
        return Verdict.no(f"{names['xr']} is not a pointer to const: the vector loads read "
                          f"it ahead of the fold")
    return Verdict.yes(f"{names['xr']} points to const data (loaded ahead, never written)")


def _budget(site, names) -> Verdict:
    from kltrans.syntax.contract import evaluate, file_constants

    try:
        u = evaluate(names["unroll"], file_constants(site.unit))
    except Exception:
        return Verdict.no(f"the unroll count {names['unroll']} is not a constant")
    if not 1 <= u <= 16:
        return Verdict.no(f"{u} float4 loads in flight need {4 * u} registers; at most 16 "
                          f"vectors (64 registers) are allowed")
    return Verdict.yes(f"{u} float4 loads in flight ({4 * u} registers)")


# ---------------------------------------------------------------- simplify
def _vec(site):
    names = _vector_names(site.unit, site.node)
    if names is None:
        return None, ("not the float4 online pass vectorize-online-stream writes (`if (flag) "
                      "{ const float4* xv = ...; U vectors in flight, ADD4 ...; remainder } "
                      "else { for (c = start; c < n; c += G) ADD1(m, s, xr[c]); }`)")
    return names, ""


def _s_check(f):
    def check(site, ctx):
        names, why = _vec(site)
        return Verdict.unknown(why) if names is None else f(site, ctx, names)
    return check


def _s_form(site, ctx, names) -> Verdict:
    unit = site.unit
    if not _helper_is(unit, names["add1"], ADD1, "add1"):
        return Verdict.no(f"{names['add1']} is not the scalar online-softmax fold "
                          f"(`if (v > m) {{ s = ...; m = v; }} s += expf(v - m);`)")
    fn4 = device_function(unit, names["add4"])
    if fn4 is None or not _helper_is(unit, names["add4"], ADD4, "add4"):
        return Verdict.no(f"{names['add4']} is not the four-wide online-softmax fold")
    others = [c for c in calls_of(unit, names["add4"])
              if not site.node.start_byte <= c.start_byte < site.node.end_byte]
    if not others:
        fn1 = device_function(unit, names["add1"])
        between = unit.source[fn4.end_byte:with_comments(unit, fn1)]
        if between.strip():
            return Verdict.no(f"{names['add4']} does not stand right before {names['add1']} "
                              f"(its definition could not be put back where it was)")
    return Verdict.yes(f"float4 path of the fold {names['add1']} through {names['add4']}")


@dataclass(frozen=True)
class ScalarizeOnlineStream(Pass):
    """Drop the float4 path of a streamed online-softmax fold, keeping its scalar fallback.

    Before::

        if (vec_ok) {
            const float4* __restrict__ xv = reinterpret_cast<const float4*>(xr);
            const int nv = cols >> 2;
            int c = gt;
            for (; c + (U - 1) * G < nv; c += U * G) {
                float4 t[U];
                for (int u = 0; u < U; ++u) { t[u] = xv[c + u * G]; }
                for (int u = 0; u < U; ++u) { add4(m, s, t[u]); }
            }
            for (; c < nv; c += G) { add4(m, s, xv[c]); }
        } else {
            for (int c = gt; c < cols; c += G) {
                add1(m, s, xr[c]);
            }
        }

    After ``scalarize-online-stream``::

        for (int c = gt; c < cols; c += G) {
            add1(m, s, xr[c]);
        }

    and the helper ``add4`` (with its comment) goes when nothing else calls it.

    Preconditions: vector-form (pipeline: the statement is exactly the form above and the
    helpers are the scalar and four-wide folds; a helper that goes stands right before
    ``add1``), vector-flag (layout: the flag tests ``cols % 4 == 0`` and the 16-byte
    alignment of ``xr``'s parameter, whose offset is a multiple of ``cols``; a run-time
    guard), float-pair (dtype: ``m``, ``s`` are float, ``xr`` points to float),
    reassoc (dtype: context fact ``reassoc``: the fold's rounding changes), read-only
    (storage: ``xr`` points to const), load-budget (hardware: at most 16 float4 loads in
    flight).

    Options: none (``inverse_for`` gives ``vectorize-online-stream`` with the names read
    here).
    """

    name = "scalarize-online-stream"
    kind = "simplify"
    inverse = "vectorize-online-stream"
    anchor = Rule(kind="if_statement", inside_kernel=True, regex=r"\bfloat4\b")
    preconditions = (
        Precondition("vector-form", "pipeline", "the float4 path of an online fold",
                     _s_check(_s_form)),
        Precondition("vector-flag", "layout", "a run-time length and alignment flag",
                     _s_check(lambda s, c, n: _flag_check(s, n, s.node.start_byte))),
        Precondition("float-pair", "dtype", "a float (max, sum) pair over float data",
                     _s_check(lambda s, c, n: _float_pair(s, n))),
        Precondition("reassoc", "dtype", "the fold may be reassociated",
                     _s_check(lambda s, c, n: _reassoc(c))),
        Precondition("read-only", "storage", "the row is read-only",
                     _s_check(lambda s, c, n: _read_only(s, n))),
        Precondition("load-budget", "hardware", "float4 loads in flight fit the registers",
                     _s_check(lambda s, c, n: _budget(s, n))),
    )

    def rewrite(self, site, ctx):
        names, _ = _vec(site)
        unit = site.unit
        alt = site.node.child_by_field_name("alternative")
        loop = [c for c in alt.named_children if c.type != "comment"][-1]
        if loop.type == "compound_statement":
            loop = [c for c in loop.named_children if c.type != "comment"][0]
        src = unit.source
        ind = src[line_start(src, site.node.start_byte):site.node.start_byte].decode()
        lind = src[line_start(src, loop.start_byte):loop.start_byte].decode()
        body = unit.text(loop).replace("\n" + lind, "\n" + ind)
        edits = [Edit(site.node.start_byte, site.node.end_byte, body)]
        others = [c for c in calls_of(unit, names["add4"])
                  if not site.node.start_byte <= c.start_byte < site.node.end_byte]
        if not others:
            edits.append(delete_definition(unit, device_function(unit, names["add4"])))
        return edits

    def inverse_for(self, site, ctx):
        names, _ = _vec(site)
        unroll = names["unroll"]
        return VectorizeOnlineStream(flag=names["flag"], xv=names["xv"], nv=names["nv"],
                                     t=names["t"], u=names["u"], add4=names["add4"],
                                     unroll=int(unroll) if unroll.isdigit() else unroll,
                                     restrict=names["restrict"])


# ---------------------------------------------------------------- optimize
def _scal(site):
    names = _scalar_names(site.unit, site.node)
    if names is None:
        return None, ("not a strided online fold `for (int c = START; c < N; c += G) { "
                      "ADD1(m, s, xr[c]); }`")
    p = site.pass_
    names.update(flag=p.flag, xv=p.xv, nv=p.nv, t=p.t, u=p.u, add4=p.add4,
                 unroll=str(p.unroll))
    return names, ""


def _o_check(f):
    def check(site, ctx):
        names, why = _scal(site)
        return Verdict.unknown(why) if names is None else f(site, ctx, names)
    return check


def _o_form(site, ctx, names) -> Verdict:
    unit = site.unit
    if not _helper_is(unit, names["add1"], ADD1, "add1"):
        return Verdict.no(f"{names['add1']} is not the scalar online-softmax fold "
                          f"(`if (v > m) {{ s = ...; m = v; }} s += expf(v - m);`)")
    if device_function(unit, names["add4"]) is not None:
        if not _helper_is(unit, names["add4"], ADD4, "add4"):
            return Verdict.no(f"a function {names['add4']} exists and is not the four-wide "
                              f"fold")
    elif any(unit.text(n) == names["add4"] for n in unit.walk(unit.root)
             if n.type == "identifier"):
        return Verdict.no(f"the name {names['add4']} is taken")
    taken = {unit.text(n) for n in unit.walk(site.function.node) if n.type == "identifier"}
    for k in ("xv", "nv", "t", "u"):
        if names[k] in taken:
            return Verdict.no(f"the name {names[k]} is taken in {site.function.name}")
    if len({names[k] for k in ("xv", "nv", "t", "u", "c")}) != 5:
        return Verdict.no("two of the new names are the same")
    par = site.node.parent
    if par is not None and par.type == "else_clause" or (
            par is not None and par.type == "if_statement"):
        return Verdict.no("the loop is the branch of an if without braces")
    return Verdict.yes(f"a strided fold of {names['xr']} by {names['add1']}")


@dataclass(frozen=True)
class VectorizeOnlineStream(Pass):
    """Put a float4 path (U loads in flight) in front of a streamed online-softmax fold.

    Before::

        for (int c = gt; c < cols; c += G) {
            add1(m, s, xr[c]);
        }

    After ``vectorize-online-stream{flag=vec_ok,unroll=4}``: the loop becomes the
    ``else`` branch of ``if (vec_ok) { ... }`` whose ``then`` branch strides over
    ``reinterpret_cast<const float4*>(xr)`` (``cols >> 2`` vectors, ``U`` loaded into
    ``float4 t[U]`` before any is folded by ``add4``, then a remainder loop); see
    ``scalarize-online-stream`` for the full form. ``add4`` (``float4`` fold: one
    rescale per vector) is added right before ``add1`` when the file lacks it.

    Preconditions: fold-form (pipeline: the loop is ``for (int c = START; c < N; c +=
    G) ADD1(m, s, XR[c]);`` with ADD1 the scalar online fold; the new names are free;
    the loop is not an unbraced branch), vector-flag (layout: the flag ``flag`` (an
    existing local) tests ``N % 4 == 0`` and the 16-byte alignment of XR's parameter, and
    XR's offset is a multiple of N: a run-time guard, the scalar loop stays as the
    fallback), float-pair and reassoc (dtype; ``reassoc`` from the context), read-only
    (storage: XR points to const), load-budget (hardware: U <= 16).

    Options: ``flag`` (the guard local, default ``vec_ok``), ``unroll`` (U: 1..16 or a
    macro name, default ``SMX_UNROLL``), ``xv``, ``nv``, ``t``, ``u`` (new names),
    ``add4`` (the four-wide helper), ``restrict`` (declare ``xv`` ``__restrict__``).
    """

    name = "vectorize-online-stream"
    kind = "optimize"
    inverse = "scalarize-online-stream"
    anchor = Rule(kind="for_statement", inside_kernel=True)
    preconditions = (
        Precondition("fold-form", "pipeline", "a strided online fold", _o_check(_o_form)),
        Precondition("vector-flag", "layout", "a run-time length and alignment flag",
                     _o_check(lambda s, c, n: _flag_check(s, n, s.node.start_byte))),
        Precondition("float-pair", "dtype", "a float (max, sum) pair over float data",
                     _o_check(lambda s, c, n: _float_pair(s, n))),
        Precondition("reassoc", "dtype", "the fold may be reassociated",
                     _o_check(lambda s, c, n: _reassoc(c))),
        Precondition("read-only", "storage", "the row is read-only",
                     _o_check(lambda s, c, n: _read_only(s, n))),
        Precondition("load-budget", "hardware", "float4 loads in flight fit the registers",
                     _o_check(lambda s, c, n: _budget(s, n))),
    )

    flag: str = option("vec_ok", Identifier(words=()), "the run-time vector guard local")
    unroll: object = option("SMX_UNROLL", OneOf(IntRange(1, 16), Identifier(words=())),
                            "float4 loads in flight per thread (a number or a macro)", tune=True)
    xv: str = option("xv", Identifier(words=()), "the float4 view of the row")
    nv: str = option("nv", Identifier(words=()), "the number of float4 vectors")
    t: str = option("t", Identifier(words=()), "the loaded vectors")
    u: str = option("u", Identifier(words=()), "the index of a vector in flight")
    add4: str = option("smx_add4", Identifier(words=()), "the four-wide fold helper")
    restrict: bool = option(True, Bool(), "declare the float4 view __restrict__")

    def rewrite(self, site, ctx):
        names, _ = _scal(site)
        unit = site.unit
        src = unit.source
        ind = src[line_start(src, site.node.start_byte):site.node.start_byte].decode()
        scalar = indent(unit.text(site.node).replace("\n" + ind, "\n"), "    ")
        text = VECTOR.replace("{restrict}", " __restrict__" if self.restrict else "")
        text = text.replace("{scalar}", scalar.replace("{", "{{").replace("}", "}}"))
        edits = [Edit(site.node.start_byte, site.node.end_byte,
                      indent(text.format(**names), ind))]
        if device_function(unit, names["add4"]) is None:
            fn1 = device_function(unit, names["add1"])
            at = with_comments(unit, fn1)
            edits.append(Edit.insert(at, ADD4.format(add4=names["add4"]) + "\n\n"))
        return edits

    def inverse_for(self, site, ctx):
        return ScalarizeOnlineStream()
