"""A row kept in registers: ``cache-row-registers`` (optimize) and its inverse ``reload-row``
(simplify).

A *streamed* row kernel (softmax form) gives each row to a group of G threads (``gt`` is a
thread's rank in its group, ``active`` says whether its row exists) and reads the row
twice: an online (max, sum of exp) fold of the thread's strided slice, the merge of the
group's pairs, then a normalize loop that reads ``xr`` again::

    float m = -INFINITY;
    float s = 0.0f;
    if (active) {
        for (int c = gt; c < cols; c += G) {
            add1(m, s, xr[c]);
        }
    }
    MERGE                                   // the row's pair in every thread
    if (!active) {
        return;
    }
    const float inv = 1.0f / s;
    for (int c = gt; c < cols; c += G) {
        yr[c] = expf(xr[c] - m) * inv;
    }

``cache-row-registers`` puts a *register path* in front of it, taken when the row fits
in ``VEC`` chunks of 4 floats per thread (``cols <= G * VEC * 4``): the thread loads its
chunks once into ``float v[VEC][4]`` (``-INFINITY`` past the row end), computes its own
(max, sum of exp) from the registers (keeping the exponentials there), merges with the
same MERGE statements, rescales by ``exp(my_m - m) / s`` and writes y from the registers:
x is read once. ``reload-row`` drops the register path again when it is exactly that
form in front of exactly that streamed path: every row then re-reads x from global memory.
The forms are matched token for token (comments aside).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.vector_facts import (
    assigned as _assigned, declaration as _declaration, root as _root)
from kltrans.passes.helper_forms import (
    ADD1, scalar_names as _scalar_names, vector_names as _vector_names)
from kltrans.passes.token_forms import (
    helper_is as _helper_is, indent, line_start, template_regex)
from kltrans.passes.rewrite import token_text as norm

# the register path, as cache-row-registers writes it ({merge}: the streamed path's merge)
REGS = """\
if ({n} <= {G} * {vec} * 4) {{
    // ---------------------------------------------- the row lives in registers
    float {v}[{vec}][4];
    for (int {k} = 0; {k} < {vec}; ++{k}) {{
        const int {base} = 4 * ({gt} + {k} * {G});
        for (int {j} = 0; {j} < 4; ++{j}) {{
            {v}[{k}][{j}] = {active} && {base} + {j} < {n} ? {xr}[{base} + {j}] : -INFINITY;
        }}
    }}
    float {m} = -INFINITY;
    for (int {k} = 0; {k} < {vec}; ++{k}) {{
        for (int {j} = 0; {j} < 4; ++{j}) {{
            {m} = fmaxf({m}, {v}[{k}][{j}]);
        }}
    }}
    float {s} = 0.0f;
    if ({m} != -INFINITY) {{
        for (int {k} = 0; {k} < {vec}; ++{k}) {{
            for (int {j} = 0; {j} < 4; ++{j}) {{
                {v}[{k}][{j}] = expf({v}[{k}][{j}] - {m});  // exp(-inf) = 0 past the row end
                {s} += {v}[{k}][{j}];
            }}
        }}
    }}
    const float {my_m} = {m};
    const float {my_s} = {s};
    {merge}
    // y = exp(v - m_thread) * exp(m_thread - m_row) / s_row
    const float {f} = {my_s} == 0.0f ? 0.0f : expf({my_m} - {m}) / {s};
    for (int {k} = 0; {k} < {vec}; ++{k}) {{
        const int {base} = 4 * ({gt} + {k} * {G});
        for (int {j} = 0; {j} < 4; ++{j}) {{
            if ({active} && {base} + {j} < {n}) {{
                {yr}[{base} + {j}] = {v}[{k}][{j}] * {f};
            }}
        }}
    }}
    return;
}}"""

HEAD = "float {m} = -INFINITY; float {s} = 0.0f;"
EXIT = "if (!{active}) {{ return; }}"
EXIT_BARE = "if (!{active}) return;"
INV = "const float {inv} = 1.0f / {s};"
NORMALIZE = """\
for (int {c} = {gt}; {c} < {n}; {c} += {G}) {{
    {yr}[{c}] = expf({xr}[{c}] - {m}) * {inv};
}}"""

_REG_EXPRS = ("vec", "merge")
_NEW = ("v", "k", "j", "base", "my_m", "my_s", "f")


def _stmts(node):
    return [c for c in node.named_children if c.type != "comment"]


def _same(a: str, b: str) -> bool:
    return norm(a) == norm(b)


def _stream(unit, stmts, i: int) -> "dict | str":
    """The names of the streamed path ``stmts[i:]`` (the statements after the register
    path), or why it is not the streamed softmax path."""
    st = stmts[i:]
    if len(st) < 7:
        return "fewer statements than the streamed path (stats, fold, merge, exit, normalize)"
    m = re.fullmatch(r"float (\w+) = - INFINITY ; float (\w+) = 0\.0f ;",
                     norm(unit.text(st[0]) + " " + unit.text(st[1])))
    if m is None:
        return "the streamed path does not start with `float m = -INFINITY; float s = 0.0f;`"
    names = {"m": m.group(1), "s": m.group(2)}
    fold_if = st[2]
    if fold_if.type != "if_statement" or fold_if.child_by_field_name("alternative"):
        return "no `if (active) { fold }` after the (max, sum) pair"
    cond = norm(unit.text(fold_if.child_by_field_name("condition")))
    mm = re.fullmatch(r"\( (\w+) \)", cond)
    if mm is None:
        return "the fold is not guarded by a plain `if (active)`"
    names["active"] = mm.group(1)
    body = fold_if.child_by_field_name("consequence")
    inner = _stmts(body) if body.type == "compound_statement" else [body]
    if len(inner) != 1:
        return "the `if (active)` holds more than the fold"
    fold = _scalar_names(unit, inner[0]) or _vector_names(unit, inner[0])
    if fold is None:
        return "the guarded fold is not a strided online fold (scalar or float4)"
    if (fold["m"], fold["s"]) != (names["m"], names["s"]):
        return "the fold does not fold into the declared (max, sum) pair"
    if not _helper_is(unit, fold["add1"], ADD1, "add1"):
        return f"{fold['add1']} is not the scalar online-softmax fold"
    names.update(gt=fold["start"], G=fold["G"], n=fold["n"], xr=fold["xr"],
                 add1=fold["add1"])
    # the merge: everything up to the exit
    j = next((k for k in range(3, len(st))
              if _same(unit.text(st[k]), EXIT.format(**names))
              or _same(unit.text(st[k]), EXIT_BARE.format(**names))), None)
    if j is None or j == 3:
        return f"no merge statements followed by `if (!{names['active']}) return;`"
    names["merge_nodes"] = st[3:j]
    rest = st[j + 1:]
    if len(rest) != 2:
        return "the exit is not followed by exactly `inv = 1.0f / s` and the normalize loop"
    mi = re.fullmatch(r"const float (\w+) = 1\.0f / (\w+) ;", norm(unit.text(rest[0])))
    if mi is None or mi.group(2) != names["s"]:
        return f"no `const float inv = 1.0f / {names['s']};` after the exit"
    names["inv"] = mi.group(1)
    ml = template_regex(NORMALIZE, ("gt", "G", "n")).fullmatch(norm(unit.text(rest[1])))
    if ml is None:
        return "the last statement is not the normalize loop `yr[c] = expf(xr[c] - m) * inv`"
    for k in ("gt", "G", "n", "xr", "m", "inv"):
        if norm(ml.group(k)) != norm(names[k]):
            return (f"the normalize loop's {k} ({ml.group(k)}) differs from the fold's "
                    f"({names[k]})")
    names["yr"] = ml.group("yr")
    names["c"] = ml.group("c")
    names["last"] = rest[1]
    return names


def _merge_text(unit, nodes, ind: str) -> str:
    """The merge statements' source, re-indented from ``ind`` to column 0."""
    src = unit.source
    start = line_start(src, nodes[0].start_byte)
    text = src[start:nodes[-1].end_byte].decode()
    lines = text.split("\n")
    return "\n".join(ln[len(ind):] if ln.startswith(ind) else ln.lstrip() for ln in lines)


def _top(site):
    """(statements of the kernel body, index of the site's statement) or why not."""
    node = site.node
    par = node.parent
    fn = site.function
    if fn is None or par is None or par.id != fn.node.child_by_field_name("body").id:
        return None, "not a top-level statement of the kernel body"
    st = _stmts(par)
    i = next(k for k, c in enumerate(st) if c.id == node.id)
    return st, i


# ---------------------------------------------------------------- simplify (reload-row)
def _regs(site) -> "tuple[dict | None, str]":
    unit = site.unit
    st, i = _top(site)
    if st is None:
        return None, i
    m = template_regex(REGS, _REG_EXPRS).fullmatch(norm(unit.text(site.node)))
    if m is None:
        return None, ("not the register path cache-row-registers writes (`if (n <= G * VEC "
                      "* 4) { float v[VEC][4]; load; own (max, sum); MERGE; rescale; store; "
                      "return; }`)")
    names = m.groupdict()
    stream = _stream(unit, st, i + 1)
    if isinstance(stream, str):
        return None, f"the statements after the register path: {stream}"
    for k in ("gt", "G", "n", "xr", "yr", "active", "m", "s"):
        if norm(names[k]) != norm(stream[k]):
            return None, (f"the register path's {k} ({names[k]}) is not the streamed "
                          f"path's ({stream[k]})")
    if norm(names["merge"]) != norm(" ".join(unit.text(n) for n in stream["merge_nodes"])):
        return None, "the register path does not merge with the streamed path's statements"
    names["stream"] = stream
    return names, ""


def _s_check(f):
    def check(site, ctx):
        names, why = _regs(site)
        return Verdict.unknown(why) if names is None else f(site, ctx, names)
    return check


def _form(site, ctx, names) -> Verdict:
    return Verdict.yes(f"the register path ({names['v']}[{names['vec']}][4]) in front of the "
                       f"streamed path of {names['xr']} merging the same way")


def _float_row(site, ctx, names) -> Verdict:
    unit, fn = site.unit, site.function
    for p in ("xr", "yr"):
        got = _declaration(unit, fn, names[p], site.node.start_byte)
        if got is None or not re.match(r"(const )?float \*", norm(unit.text(got[0]))):
            return Verdict.no(f"{names[p]} is not a float pointer")
    return Verdict.yes(f"{names['xr']} and {names['yr']} point to float")


def _row_layout(site, ctx, names) -> Verdict:
    unit, fn = site.unit, site.function
    rx = _root(unit, fn, names["xr"], site.node.start_byte)
    ry = _root(unit, fn, names["yr"], site.node.start_byte)
    if rx is None or ry is None:
        return Verdict.no(f"{names['xr']} / {names['yr']} are not `param + offset` row bases")
    ox = norm(unit.text(rx[1])) if rx[1] is not None else ""
    oy = norm(unit.text(ry[1])) if ry[1] is not None else ""
    if ox != oy:
        return Verdict.no(f"{names['xr']} and {names['yr']} are offset differently "
                          f"({ox or '0'} vs {oy or '0'})")
    for p in (names[k] for k in ("xr", "yr", "gt", "G", "n", "active")):
        if re.fullmatch(r"[A-Za-z_]\w*", p) and _assigned(unit, fn, p):
            return Verdict.no(f"{p} is assigned after its declaration")
    return Verdict.yes(f"{names['xr']} = {rx[0]} + {ox or '0'} and {names['yr']} = {ry[0]} "
                       f"+ {oy or '0'}: the same row; the chunk index 4 * ({names['gt']} + k * "
                       f"{names['G']}) + j covers columns below {names['G']} * "
                       f"{names['vec']} * 4")


def _reassoc(ctx) -> Verdict:
    if ctx.assumed("reassoc"):
        return Verdict.yes("reassociation is allowed (the register path takes the thread's "
                           "maximum first, the streamed fold rescales as it goes)")
    return Verdict.unknown("the register path's (max, sum) rounds differently from the "
                           "online fold; pass --assume reassoc (a workload with a tolerance "
                           "gives it)")


def _not_aliased(site, ctx, names) -> Verdict:
    unit, fn = site.unit, site.function
    rx = _root(unit, fn, names["xr"], site.node.start_byte)
    ry = _root(unit, fn, names["yr"], site.node.start_byte)
    if rx is None or ry is None:
        return Verdict.no("the row pointers do not come from parameters")
    got = _declaration(unit, fn, names["xr"], site.node.start_byte)
    if got is None or "const" not in norm(unit.text(got[0])).split("*")[0]:
        return Verdict.no(f"{names['xr']} is not a pointer to const")
    from kltrans.analysis.pointers import may_alias

    v = may_alias(unit, fn, rx[0], ry[0])
    if v.fails or ctx.assumed("no_alias", rx[0], ry[0]):
        return Verdict.yes(f"{rx[0]} and {ry[0]} do not overlap: the streamed path may read "
                           f"x after other threads of the row wrote y")
    return Verdict.unknown(f"{rx[0]} and {ry[0]} may overlap (in-place softmax): the streamed "
                           f"path re-reads x after y is written; pass --assume "
                           f"no_alias({rx[0]},{ry[0]})")


def _vec_value(site, text: str):
    from kltrans.syntax.contract import evaluate, file_constants

    try:
        return int(evaluate(text, file_constants(site.unit)))
    except Exception:
        return None


def _budget(site, ctx, names) -> Verdict:
    v = _vec_value(site, names["vec"])
    if v is None:
        return Verdict.no(f"the chunk count {names['vec']} is not a constant")
    if not 1 <= v <= 16:
        return Verdict.no(f"{v} chunks of 4 floats ({4 * v} registers) per thread: at most 16 "
                          f"chunks (64 registers) are allowed")
    return Verdict.yes(f"{v} chunks of 4 floats: {4 * v} registers per thread")


@dataclass(frozen=True)
class ReloadRow(Pass):
    """Drop the register path of a streamed row kernel: every row re-reads x from memory.

    Before::

        if (cols <= G * VEC * 4) {
            float v[VEC][4];
            for (int k = 0; k < VEC; ++k) {
                const int base = 4 * (gt + k * G);
                for (int j = 0; j < 4; ++j) {
                    v[k][j] = active && base + j < cols ? xr[base + j] : -INFINITY;
                }
            }
            ... own (max, sum of exp) from v, exponentials kept in v ...
            const float my_m = m;
            const float my_s = s;
            MERGE
            const float f = my_s == 0.0f ? 0.0f : expf(my_m - m) / s;
            ... yr[base + j] = v[k][j] * f where active && base + j < cols ...
            return;
        }
        float m = -INFINITY;
        float s = 0.0f;
        if (active) { for (int c = gt; c < cols; c += G) { add1(m, s, xr[c]); } }
        MERGE
        if (!active) { return; }
        const float inv = 1.0f / s;
        for (int c = gt; c < cols; c += G) { yr[c] = expf(xr[c] - m) * inv; }

    After ``reload-row``: the ``if (cols <= G * VEC * 4) { ... return; }`` block is gone;
    the streamed path below it (unchanged) handles every row.

    Preconditions: register-form (pipeline: the block is exactly the form
    ``cache-row-registers`` writes, a top-level statement of the kernel, followed by the
    streamed path above: the same G, gt, cols, xr, yr, active, m, s, the guarded fold a
    scalar (or float4) online fold by the scalar online helper, the MERGE statements
    identical), float-row (dtype: xr and yr point to float), reassoc (dtype: context fact
    ``reassoc``: the register path's (max, sum) rounds differently), row-layout (layout:
    xr and yr are the same offset of two parameters, none of the names assigned),
    no-overlap (storage: xr points to const and x, y do not overlap: ``__restrict__``,
    distinct element sizes or ``--assume no_alias(x,y)``; the streamed path reads x after
    y is written), register-budget (hardware: at most 16 chunks, 64 floats per thread).

    Options: none (``inverse_for`` gives ``cache-row-registers`` with the names read here).
    """

    name = "reload-row"
    kind = "simplify"
    inverse = "cache-row-registers"
    anchor = Rule(kind="if_statement", inside_kernel=True,
                  regex=r"float\s+\w+\s*\[[^\]\[]+\]\s*\[\s*4\s*\]\s*;")
    preconditions = (
        Precondition("register-form", "pipeline",
                     "the register path cache-row-registers writes, in front of the "
                     "streamed path it caches", _s_check(_form)),
        Precondition("float-row", "dtype", "the row is float", _s_check(_float_row)),
        Precondition("reassoc", "dtype", "the (max, sum) may be reassociated",
                     _s_check(lambda s, c, n: _reassoc(c))),
        Precondition("row-layout", "layout", "x and y rows at the same offset",
                     _s_check(_row_layout)),
        Precondition("no-overlap", "storage", "x is read-only and does not overlap y",
                     _s_check(_not_aliased)),
        Precondition("register-budget", "hardware", "the cached row fits the registers",
                     _s_check(_budget)),
    )

    def rewrite(self, site, ctx):
        src = site.unit.source
        start = line_start(src, site.node.start_byte)
        end = src.find(b"\n", site.node.end_byte)
        end = len(src) if end < 0 else end + 1
        if src[end:end + 1] == b"\n":
            end += 1
        return [Edit.delete(start, end)]

    def inverse_for(self, site, ctx):
        names, _ = _regs(site)
        vec = names["vec"]
        return CacheRowRegisters(vec=int(vec) if vec.isdigit() else vec,
                                 **{k: names[k] for k in _NEW})


# ---------------------------------------------------------------- optimize
def _stream_site(site) -> "tuple[dict | None, str]":
    unit = site.unit
    st, i = _top(site)
    if st is None:
        return None, i
    names = _stream(unit, st, i)
    if isinstance(names, str):
        return None, names
    p = site.pass_
    names.update({k: getattr(p, k) for k in _NEW})
    names["vec"] = str(p.vec)
    return names, ""


def _o_check(f):
    def check(site, ctx):
        names, why = _stream_site(site)
        return Verdict.unknown(why) if names is None else f(site, ctx, names)
    return check


def _o_form(site, ctx, names) -> Verdict:
    unit, fn = site.unit, site.function
    taken = {unit.text(n) for n in unit.walk(fn.node) if n.type == "identifier"}
    new = [names[k] for k in _NEW]
    if len(set(new)) != len(new):
        return Verdict.no("two of the new names are the same")
    for k in _NEW:
        if names[k] in taken:
            return Verdict.no(f"the name {names[k]} is taken in {fn.name}")
    for k in ("gt", "G", "n"):
        if not re.fullmatch(r"[A-Za-z_]\w*", names[k]):
            return Verdict.no(f"the fold's {k} `{names[k]}` is not a plain name")
    return Verdict.yes(f"the streamed path of {names['xr']} (fold, merge, exit, normalize)")


@dataclass(frozen=True)
class CacheRowRegisters(Pass):
    """Keep a row in registers when it fits: x is read once instead of twice.

    Before (the streamed path: fold, merge, normalize; see the module docstring)::

        float m = -INFINITY;
        float s = 0.0f;
        if (active) { for (int c = gt; c < cols; c += G) { add1(m, s, xr[c]); } }
        MERGE
        if (!active) { return; }
        const float inv = 1.0f / s;
        for (int c = gt; c < cols; c += G) { yr[c] = expf(xr[c] - m) * inv; }

    After ``cache-row-registers{vec=SMX_VEC}``, in front of it::

        if (cols <= G * SMX_VEC * 4) {
            float v[SMX_VEC][4];
            ... load chunk k of the thread: columns 4 * (gt + k * G) + 0..3,
                -INFINITY past the row end or when !active ...
            ... m = max of v; s = sum of v[k][j] = expf(v[k][j] - m) (if m is finite) ...
            const float my_m = m;
            const float my_s = s;
            MERGE
            const float f = my_s == 0.0f ? 0.0f : expf(my_m - m) / s;
            ... yr[base + j] = v[k][j] * f for the chunks inside the row ...
            return;
        }

    Every thread of a row group takes the same branch (the test reads cols and G only),
    so a MERGE that holds a barrier is reached by the whole block. The rescale
    ``exp(my_m - m) / s`` turns the thread's ``exp(v - my_m)`` into ``exp(v - m) / s``.

    Preconditions: stream-form (pipeline: the anchor declaration starts the streamed path
    above, a top-level statement sequence of the kernel ending it, the guarded fold a
    scalar (or float4) strided online fold by the scalar online helper, gt, G and cols
    plain names, the new names free), float-row, reassoc (dtype, ``reassoc`` from the
    context), row-layout (layout), no-overlap (storage: x is read into registers before
    y is written; x, y must not overlap, ``__restrict__`` or ``--assume no_alias``),
    register-budget (hardware: VEC <= 16).

    Options: ``vec`` (VEC: chunks of 4 floats per thread, 1..16 or a macro, default
    ``SMX_VEC``), ``v``, ``k``, ``j``, ``base``, ``my_m``, ``my_s``, ``f`` (new names).
    """

    name = "cache-row-registers"
    kind = "optimize"
    inverse = "reload-row"
    anchor = Rule(kind="declaration", inside_kernel=True, regex=r"^float\s+\w+\s*=\s*-INFINITY")
    preconditions = (
        Precondition("stream-form", "pipeline", "the streamed softmax path of a row group",
                     _o_check(_o_form)),
        Precondition("float-row", "dtype", "the row is float", _o_check(_float_row)),
        Precondition("reassoc", "dtype", "the (max, sum) may be reassociated",
                     _o_check(lambda s, c, n: _reassoc(c))),
        Precondition("row-layout", "layout", "x and y rows at the same offset",
                     _o_check(_row_layout)),
        Precondition("no-overlap", "storage", "x is read-only and does not overlap y",
                     _o_check(_not_aliased)),
        Precondition("register-budget", "hardware", "the cached row fits the registers",
                     _o_check(_budget)),
    )

    vec: object = option("SMX_VEC", OneOf(IntRange(1, 16), Identifier(words=())),
                         "chunks of 4 floats per thread kept in registers (number or macro)",
                         tune=True)
    v: str = option("v", Identifier(words=()), "the register array")
    k: str = option("k", Identifier(words=()), "the chunk index")
    j: str = option("j", Identifier(words=()), "the index inside a chunk")
    base: str = option("base", Identifier(words=()), "the first column of a chunk")
    my_m: str = option("my_m", Identifier(words=()), "the thread's own maximum")
    my_s: str = option("my_s", Identifier(words=()), "the thread's own sum")
    f: str = option("f", Identifier(words=()), "the output factor")

    def rewrite(self, site, ctx):
        names, why = _stream_site(site)
        unit = site.unit
        src = unit.source
        ls = line_start(src, site.node.start_byte)
        ind = src[ls:site.node.start_byte].decode()
        merge = _merge_text(unit, names["merge_nodes"], ind)
        body = REGS.replace("{merge}", "\u0000")
        fmt = {k: v for k, v in names.items() if isinstance(v, str)}
        text = body.format(**fmt).replace("\u0000", indent(merge, "    "))
        # before the comment lines of the streamed path
        at = ls
        while at > 0:
            prev = line_start(src, at - 1)
            if src[prev:at].strip().startswith(b"//"):
                at = prev
            else:
                break
        return [Edit.insert(at, indent(ind + text, ind) + "\n\n")]

    def inverse_for(self, site, ctx):
        return ReloadRow()
