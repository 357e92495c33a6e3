"""Interior/edge specialization: ``specialize-interior`` (optimize) and its inverse
``merge-interior`` (simplify).

A tiled kernel checks every element against the matrix edges (``if (r < rows && c < cols)``)
although only the blocks on the edge need the check. Under a block-uniform condition that
proves every guard of a loop nest true (the block's tile lies inside the matrix), the nest
is duplicated into a guard-free fast path; the edge blocks keep the guarded copy:

    if (full) { <the nest without its guards> } else { <the nest> }

The fast path may also address the global array through a pointer rebased to the block's
corner (``src = in + r0 * cols + c0``), so that the per-element offsets are small.
``merge-interior`` keeps the guarded copy only, after proving that the fast path is
exactly the specialization of the guarded one (it writes that specialization again and
compares token for token) and that the condition implies the guards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Bool, Choice, Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.rewrite import (
    declarator_ident as _declarator_ident, fresh_numbered as fresh, indent_of as line_indent,
    indent_step, norm, shift, statements, unshift)
from kltrans.passes.token_forms import conjuncts as _conjuncts, less_than as _less, toks
from kltrans.passes.launch_facts import value_of

_FOR = re.compile(r"for\s*\(\s*(?:int|unsigned|size_t|long)\s+([A-Za-z_]\w*)\s*=\s*0\s*;\s*\1\s*<\s*"
                  r"([^;]+?)\s*;\s*(?:\1\s*\+=\s*([^)]+?)|\+\+\s*\1|\1\s*\+\+)\s*\)")
_NAME = r"(?<![.\w])[A-Za-z_]\w*"
_CAST = r"\(\s*(?:size_t|long long|long|int64_t|unsigned|unsigned int|int)\s*\)"


# ----------------------------------------------------------------------- reading
def header_contract(site):
    """(contract, why): the kernel's launch contract (header or launcher)."""
    from kltrans.syntax.contract import ContractError, contracts

    try:
        c = contracts(site.unit).get(site.function.name)
    except ContractError as e:
        return None, f"the launch contract does not read: {e}"
    if c is None:
        return None, (f"{site.function.name} has no launch contract: add "
                      f"`// kltrans: launch {site.function.name} grid=... block=...`")
    return c, ""


def _kernel_decls(unit, fn, before: int):
    """{name: (declaration node, initial value text, type text)} of the kernel body's
    top-level declarations that end before ``before``."""
    out = {}
    for s in statements(fn.body):
        if s.start_byte >= before:
            break
        if s.type != "declaration":
            continue
        for d in s.children_by_field_name("declarator"):
            ident = _declarator_ident(d)
            if ident is None:
                continue
            v = d.child_by_field_name("value") if d.type == "init_declarator" else None
            out[unit.text(ident)] = (s, unit.text(v) if v is not None else None,
                                     norm(unit.text(s.child_by_field_name("type"))))
    return out


def _local_decls(unit, node):
    """{name: (declaration, value text)} of the single-variable declarations under node."""
    out = {}
    for n in unit.walk(node):
        if n.type != "declaration":
            continue
        ds = n.children_by_field_name("declarator")
        if len(ds) != 1 or ds[0].type != "init_declarator":
            continue
        ident = _declarator_ident(ds[0])
        if ident is not None:
            out[unit.text(ident)] = (n, unit.text(ds[0].child_by_field_name("value")))
    return out


def _guards(unit, loop):
    """The ``if`` statements without ``else`` under ``loop``."""
    return [n for n in unit.walk(loop) if n.type == "if_statement"
            and n.child_by_field_name("alternative") is None]


def _cond_text(unit, ifnode) -> str:
    return unit.text(ifnode.child_by_field_name("condition")).strip()[1:-1].strip()


def _terms(text: str) -> list[str] | None:
    """Top-level ``+`` terms of ``text`` (None when it has a top-level ``-`` or other op)."""
    t = text.strip()
    out, depth, cur = [], 0, ""
    for ch in t:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if depth == 0 and ch == "+":
            out.append(cur.strip())
            cur = ""
            continue
        if depth == 0 and ch in "-<>=?:&|":
            return None
        cur += ch
    out.append(cur.strip())
    return out if all(out) else None


def _ranges(site, loop):
    """{name: max value} of the loop counters under ``loop`` (and ``loop`` itself) and of
    the thread-index aliases of the kernel, or (None, why)."""
    unit, fn = site.unit, site.function
    out = {}
    for n in [loop, *unit.walk(loop)]:
        if n.type != "for_statement":
            continue
        body = n.child_by_field_name("body")
        if body is None:
            continue
        m = _FOR.match(unit.source[n.start_byte:body.start_byte].decode("utf-8", "replace").strip())
        if not m:
            continue
        end = value_of(unit, m.group(2))
        step = value_of(unit, m.group(3)) if m.group(3) else 1
        if end is None or not step or step <= 0:
            continue
        out[m.group(1)] = ((end - 1) // step) * step if end > 0 else -1
    c, why = header_contract(site)
    dims = {}
    if c is not None:
        for k, axis in enumerate("xyz"[:len(c.block)]):
            v = value_of(unit, c.block[k])
            if v is not None:
                dims[axis] = v
    for name, (_, value, _) in _kernel_decls(unit, fn, loop.start_byte).items():
        m = re.fullmatch(r"\s*threadIdx\.([xyz])\s*", value or "")
        if m and m.group(1) in dims:
            out[name] = dims[m.group(1)] - 1
    for axis, v in dims.items():
        out[f"threadIdx.{axis}"] = v - 1
    return out


def _thread_names(site, loop) -> set:
    """Names whose value differs between the threads of a block (or the loop's iterations)."""
    unit, fn = site.unit, site.function
    out = set(_local_decls(unit, loop)) | set(_ranges(site, loop))
    for name, (_, value, _) in _kernel_decls(unit, fn, loop.start_byte).items():
        if value is not None and ("threadIdx" in value or
                                  set(re.findall(_NAME, value)) & out):
            out.add(name)
    return out


def _split(site, loop, x: str):
    """``x`` (a guard's left side, a temporary of the nest or an expression) as
    (uniform part text, max of the varying part) or (None, why)."""
    unit = site.unit
    locs = _local_decls(unit, loop)
    kdecl = _kernel_decls(unit, site.function, loop.start_byte).get(x)
    if x in locs:
        value = locs[x][1]
    elif kdecl is not None and kdecl[1] is not None and x in _thread_names(site, loop):
        value = kdecl[1]
    else:
        value = x
    terms = _terms(value)
    if terms is None:
        return None, f"`{norm(value)}` is not a sum of a block-uniform part and thread/loop indices"
    rng = _ranges(site, loop)
    varying = _thread_names(site, loop)
    uni, vmax = [], 0
    for t in terms:
        key = norm(t)
        prod = re.fullmatch(r"([\w.]+)\s*\*\s*([\w.]+)", key)
        scaled = None
        if prod:
            for a, b in (prod.groups(), prod.groups()[::-1]):
                if a in rng and value_of(unit, b) is not None and value_of(unit, b) >= 0:
                    scaled = rng[a] * value_of(unit, b)
        if key in rng:
            vmax += rng[key]
        elif scaled is not None:
            vmax += scaled
        elif re.search(r"threadIdx", t) or set(re.findall(_NAME, t)) & varying:
            return None, (f"the term `{key}` of `{norm(value)}` is neither block-uniform nor a "
                          "loop counter or thread index with a known range")
        else:
            uni.append(key)
    if not uni:
        return None, f"`{norm(value)}` has no block-uniform part"
    return (" + ".join(uni), vmax), ""


def _guard_facts(site, loop):
    """[(uniform part, max varying, bound)] for every conjunct of every guard, or (None, why)."""
    unit = site.unit
    gs = _guards(unit, loop)
    if not gs:
        return None, "the loop nest has no guard `if (i < n) ...` to drop"
    out = []
    for g in gs:
        conj = _conjuncts(_cond_text(unit, g))
        if not conj:
            return None, f"the guard `{_cond_text(unit, g)}` is not a conjunction of `i < n`"
        for c in conj:
            lt = _less(c)
            if lt is None:
                return None, f"`{c}` in a guard is not `i < n`"
            got, why = _split(site, loop, lt[0])
            if got is None:
                return None, why
            out.append((got[0], got[1], norm(lt[1])))
    return out, ""


def build_cond(facts, extent) -> str:
    """``u + K <= n && ...`` for the guards' (uniform part, bound) pairs, in guard order;
    K is the smallest sufficient constant (``extent=auto``) or the ``extent`` spelling."""
    seen, parts = set(), []
    for u, vmax, b in facts:
        if (u, b) in seen:
            continue
        seen.add((u, b))
        k = max(v for uu, v, bb in facts if (uu, bb) == (u, b)) + 1
        parts.append(f"{u} + {k if extent == 'auto' else extent} <= {b}")
    return " && ".join(parts)


def _implies(site, cond: str, facts) -> tuple[bool, str]:
    conj = _conjuncts(cond) or []
    have = []
    for c in conj:
        m = re.fullmatch(r"\(?\s*(.+?)\s*<=\s*(.+?)\s*\)?", c)
        if not m:
            continue
        terms = _terms(m.group(1))
        if not terms or len(terms) < 2:
            continue
        k = value_of(site.unit, terms[-1])
        if k is None:
            continue
        have.append((norm(" + ".join(terms[:-1])), k, norm(m.group(2))))
    for u, vmax, b in facts:
        if not any(hu == u and hb == b and k >= vmax + 1 for hu, k, hb in have):
            return False, (f"`{cond}` does not prove `{u} + {vmax} < {b}` (the largest index the "
                           "block reaches): the guard could fail in the fast path")
    return True, ""


# -------------------------------------------------------------- the specialization
def _pointer_params(unit, fn) -> dict:
    """{name: (const?, element type)} of the pointer parameters."""
    out = {}
    params = fn.node.child_by_field_name("declarator").child_by_field_name("parameters")
    for p in params.named_children:
        if p.type != "parameter_declaration":
            continue
        m = re.fullmatch(r"(const\s+)?([A-Za-z_][\w\s]*?)\s*\*\s*(?:const\s+)?(?:__restrict__\s+)?"
                         r"([A-Za-z_]\w*)", norm(unit.text(p)))
        if m:
            out[m.group(3)] = (bool(m.group(1)), norm(m.group(2)))
    return out


def _rebase_target(site, loop):
    """(subscript node, pointer, cast, A, stride, B) of the one global access whose index is
    ``[(cast)]A * S + B`` with nest temporaries A and B, or (None, why)."""
    unit, fn = site.unit, site.function
    ptrs = _pointer_params(unit, fn)
    locs = _local_decls(unit, loop)
    found = []
    for g in _guards(unit, loop):
        for n in unit.walk(g.child_by_field_name("consequence")):
            if n.type != "subscript_expression":
                continue
            arr = n.child_by_field_name("argument")
            if arr is None or unit.text(arr) not in ptrs:
                continue
            idx = unit.text(n)[len(unit.text(arr)):].strip()[1:-1]
            m = re.fullmatch(rf"\s*({_CAST})?\s*([A-Za-z_]\w*)\s*\*\s*([A-Za-z_]\w*)\s*\+\s*"
                             rf"([A-Za-z_]\w*)\s*", idx)
            if m and m.group(2) in locs and m.group(4) in locs:
                found.append((n, unit.text(arr), norm(m.group(1) or ""), m.group(2), m.group(3),
                              m.group(4)))
    if len(found) != 1:
        return None, (f"{len(found)} global accesses `p[(cast)a * s + b]` with nest temporaries a, "
                      "b in the guarded code: the fast path rebases exactly one")
    return found[0], ""


def _split_first(site, loop, name: str):
    """(uniform first term, rest) of a nest temporary ``name = u + v...``."""
    locs = _local_decls(site.unit, loop)
    terms = _terms(locs[name][1])
    varying = _thread_names(site, loop) | set(_ranges(site, loop))
    if not terms or len(terms) < 2 or set(re.findall(_NAME, terms[0])) & varying \
            or "threadIdx" in terms[0]:
        return None
    return norm(terms[0]), " + ".join(norm(t) for t in terms[1:]), len(terms) > 2


def _line_span(unit, node):
    """The byte span of ``node`` with its own line when it stands alone on it."""
    src = unit.source
    start, end = node.start_byte, node.end_byte
    ls = src.rfind(b"\n", 0, start) + 1
    if src[ls:start].strip() == b"":
        nl = src.find(b"\n", end)
        if nl >= 0 and src[end:nl].strip() == b"":
            return ls, nl + 1
    return start, end


def specialize(site, loop, base: str, restrict: bool):
    """The fast-path text of ``loop`` (its guards dropped, one access rebased when ``base``
    is not ``none``), or (None, why)."""
    from kltrans.passes.rewrite import splice

    unit = site.unit
    st = indent_step(unit, loop)
    reps = []
    prefix = ""
    drop_decls = set()
    if base != "none":
        tgt, why = _rebase_target(site, loop)
        if tgt is None:
            return None, why
        node, ptr, cast, a, stride, b = tgt
        sa, sb = _split_first(site, loop, a), _split_first(site, loop, b)
        if sa is None or sb is None:
            return None, (f"{a} or {b} is not `uniform + thread/loop index`: no block corner to "
                          "rebase to")
        ua, va, many = sa
        ub, vb, _ = sb
        va_t = f"({va})" if many or not re.fullmatch(r"[\w.]+", va) else va
        cast_t = f"{cast}" if cast else ""
        reps.append((node.start_byte, node.end_byte, f"{base}[{cast_t}{va_t} * {stride} + {vb}]"))
        const, elem = _pointer_params(unit, site.function)[ptr]
        ty = f"{'const ' if const else ''}{elem}* {'__restrict__ ' if restrict else ''}"
        prefix = f"{ty}{base} = {ptr} + {cast_t}{ua} * {stride} + {ub};"
        drop_decls = {a, b}
    locs = _local_decls(unit, loop)
    guards = _guards(unit, loop)
    # the temporaries that only the guards and the rebased index used
    for name in list(drop_decls):
        d = locs[name][0]
        for n in unit.walk(loop):
            if n.type == "identifier" and unit.text(n) == name and not (d.start_byte <= n.start_byte < d.end_byte) \
                    and not any(g.child_by_field_name("condition").start_byte <= n.start_byte <
                                g.child_by_field_name("condition").end_byte for g in guards) \
                    and not any(r[0] <= n.start_byte < r[1] for r in reps):
                drop_decls.discard(name)
                break
    for name in drop_decls:
        s, e = _line_span(unit, locs[name][0])
        reps.append((s, e, ""))
    src = unit.source
    for g in guards:
        body = g.child_by_field_name("consequence")
        inner = statements(body) if body.type == "compound_statement" else [body]
        if not inner:
            return None, "a guard guards nothing"
        first, last = inner[0], inner[-1]
        if body.type == "compound_statement":
            reps.append((g.start_byte, first.start_byte, ""))
            reps.append((last.end_byte, g.end_byte, ""))
            pos = first.start_byte
            while True:
                nl = src.find(b"\n", pos, last.end_byte)
                if nl < 0:
                    break
                if src[nl + 1:nl + 1 + len(st)] == st.encode():
                    reps.append((nl + 1, nl + 1 + len(st), ""))
                pos = nl + 1
        else:
            reps.append((g.start_byte, body.start_byte, ""))
    reps.sort()
    for (s0, e0, _), (s1, e1, _) in zip(reps, reps[1:]):
        if s1 < e0:
            return None, "the guards and the rebased access overlap"
    text = splice(unit, loop, reps)
    ind = line_indent(unit, loop.start_byte)
    return (prefix + "\n" + ind if prefix else "") + text, ""


# ------------------------------------------------------------------ preconditions
def _top_level(site, loop) -> bool:
    return loop.parent is not None and loop.parent.id == site.function.body.id


def _flag_decl(site, name: str):
    """(declaration node, condition text) of ``const bool name = ...;`` before the site."""
    d = _kernel_decls(site.unit, site.function, site.node.start_byte).get(name)
    if d is None:
        return None
    s, value, ty = d
    if ty != "bool" or value is None:
        return None
    return s, value


def _sp_cond(p, site, facts):
    if p.flag != "none" and p.flag != "auto":
        got = _flag_decl(site, p.flag)
        if got is not None:
            return norm(got[1])
    return build_cond(facts, p.extent)


def _sp_flag(p, site) -> str:
    if p.flag != "auto":
        return p.flag
    return fresh(site.unit, site.function, ("full", "interior", "inside"))


def _sp_nest(site, ctx) -> Verdict:
    loop = site.node
    if not _top_level(site, loop):
        return Verdict.no("the loop is not a top-level statement of the kernel: the specialized "
                          "copy would not see the block's whole nest")
    facts, why = _guard_facts(site, loop)
    if facts is None:
        return Verdict.no(why)
    return Verdict.yes(f"{len(facts)} bound check(s) on uniform + index with known ranges")


def _sp_block(site, ctx) -> Verdict:
    c, why = header_contract(site)
    if c is None:
        return Verdict.no(why)
    vals = [value_of(site.unit, b) for b in c.block]
    if None in vals:
        return Verdict.unknown(f"the block ({', '.join(c.block)}) has no known value: the "
                               "threads' index ranges are unknown")
    return Verdict.yes(f"block {' x '.join(map(str, vals))}")


def _uniform(site, cond: str, loop) -> tuple[bool, str]:
    varying = _thread_names(site, loop)
    names = set(re.findall(r"(?<![.\w])[A-Za-z_]\w*", cond))
    if "threadIdx" in cond or names & varying:
        return False, f"`{cond}` depends on the thread or the loop ({', '.join(sorted(names & varying)) or 'threadIdx'})"
    known = set(_kernel_decls(site.unit, site.function, loop.start_byte)) | \
        set(_pointer_params(site.unit, site.function))
    params = site.function.node.child_by_field_name("declarator").child_by_field_name("parameters")
    known |= set(re.findall(_NAME, site.unit.text(params)))
    unknown = {n for n in names if n not in known and value_of(site.unit, n) is None
               and n not in ("blockIdx", "blockDim", "gridDim", "x", "y", "z")}
    if unknown:
        return False, f"`{cond}` names {', '.join(sorted(unknown))}, not declared before the nest"
    return True, f"`{cond}` is the same for every thread of the block"


def _sp_uniform(site, ctx) -> Verdict:
    facts, why = _guard_facts(site, site.node)
    if facts is None:
        return Verdict.unknown(why)
    cond = _sp_cond(site.pass_, site, facts)
    ok, why = _uniform(site, cond, site.node)
    return Verdict.yes(why) if ok else Verdict.no(why)


def _sp_implies(site, ctx) -> Verdict:
    facts, why = _guard_facts(site, site.node)
    if facts is None:
        return Verdict.unknown(why)
    cond = _sp_cond(site.pass_, site, facts)
    ok, why = _implies(site, cond, facts)
    if not ok:
        return Verdict.no(why)
    return Verdict.yes(f"`{cond}` proves every guard of the nest")


def _sp_rebase(site, ctx) -> Verdict:
    p = site.pass_
    if p.base == "none":
        return Verdict.yes("no pointer is rebased")
    text, why = specialize(site, site.node, p.base, p.restrict)
    if text is None:
        return Verdict.no(why)
    return Verdict.yes(f"one access rebased to {p.base}")


def _sp_alias(site, ctx) -> Verdict:
    p = site.pass_
    if p.base == "none" or not p.restrict:
        return Verdict.yes("no __restrict__ pointer is introduced")
    tgt, why = _rebase_target(site, site.node)
    if tgt is None:
        return Verdict.unknown(why)
    ptr = tgt[1]
    others = [q for q in _pointer_params(site.unit, site.function) if q != ptr]
    missing = [q for q in others if not ctx.assumed("no_alias", ptr, q)]
    if missing:
        return Verdict.unknown(f"{ptr} may alias {', '.join(missing)}: a __restrict__ copy of it "
                               f"needs --assume 'no_alias({ptr},{missing[0]})'")
    return Verdict.yes(f"{ptr} aliases no other pointer (assumed)")


def _sp_fresh(site, ctx) -> Verdict:
    from kltrans.passes.rewrite import used_names

    p = site.pass_
    used = used_names(site.unit, site.function)
    if p.flag != "none":
        flag = _sp_flag(p, site)
        got = _flag_decl(site, flag)
        if flag in used and got is None:
            return Verdict.no(f"the flag name {flag} is already used in {site.function.name}")
        if got is None:
            for st in statements(site.function.body):
                if st.start_byte >= site.node.start_byte:
                    break
                if st.type == "for_statement" and _guards(site.unit, st):
                    return Verdict.no(f"an earlier nest (line {site.unit.line_col(st.start_byte)[0]}) "
                                      f"has guards too: {flag} is declared before the first "
                                      "specialized nest, the later ones test it again")
    if p.base != "none" and p.base in used:
        return Verdict.no(f"the pointer name {p.base} is already used in {site.function.name}")
    return Verdict.yes("the flag and pointer names are fresh (or the flag is reused)")


@dataclass(frozen=True)
class SpecializeInterior(Pass):
    """Split a guarded loop nest into a guard-free path for interior blocks and the
    guarded path for edge blocks.

    Before::

        for (int j = 0; j < 32; j += 8) {
            const int r = r0 + ty + j;
            const int c = c0 + tx;
            if (r < rows && c < cols) {
                tile[ty + j][tx] = in[(size_t)r * cols + c];
            }
        }

    After ``specialize-interior{flag=full,base=src}``::

        const bool full = r0 + 32 <= rows && c0 + 32 <= cols;
        if (full) {
            const float* src = in + (size_t)r0 * cols + c0;
            for (int j = 0; j < 32; j += 8) {
                tile[ty + j][tx] = src[(size_t)(ty + j) * cols + tx];
            }
        } else {
            for (...) { ... the guarded nest ... }
        }

    The condition has, for each guard ``u + v < n`` (``u`` block-uniform, ``v`` thread
    indices and loop counters with ranges known from the launch header's block and the
    loop bounds), ``u + K <= n`` with ``K = max v + 1`` (or the ``extent`` spelling, a
    macro such as ``TILE`` whose value is at least that). A flag already declared before
    the nest is reused with its condition (a second nest of the same kernel); a new flag
    is declared before the first guarded nest only.

    Preconditions: guarded-nest (layout: a top-level loop nest whose ``if`` guards are
    conjunctions of ``i < n``, ``i`` a sum of a block-uniform part and indices of known
    range), block-known (hardware: the 2-D or 1-D launch header gives a constant block),
    uniform-condition (pipeline: the condition is the same for the block's threads and
    names only what is declared before the nest), implies-guards (layout: the condition
    proves every guard, checked by the ranges; a run-time guard, not a context fact),
    rebase (layout: with ``base``, exactly one global access ``p[(cast)a * s + b]`` with
    nest temporaries ``a = u + ...``, ``b = u' + ...``), no-alias (storage: with
    ``restrict``, the rebased pointer aliases no other pointer: a context fact),
    fresh-names (pipeline).

    Options: ``flag`` (name of the ``const bool`` flag, ``auto`` or ``none``: the
    condition written in the ``if``), ``extent`` (``auto``, a number or a macro: how K
    is written),
    ``base`` (name of the rebased pointer, or ``none``), ``restrict`` (declare it
    ``__restrict__``; default false).
    """

    name = "specialize-interior"
    kind = "optimize"
    inverse = "merge-interior"
    anchor = Rule(kind="for_statement", inside_kernel=True)
    preconditions = (
        Precondition("block-known", "hardware", "the launch header gives a constant block",
                     _sp_block),
        Precondition("guarded-nest", "layout",
                     "a top-level loop nest with bound checks on indices of known range",
                     _sp_nest),
        Precondition("uniform-condition", "pipeline",
                     "the condition is block-uniform and declared before the nest", _sp_uniform),
        Precondition("implies-guards", "layout", "the condition proves every guard",
                     _sp_implies),
        Precondition("rebase", "layout", "the rebased access has the a * s + b form",
                     _sp_rebase),
        Precondition("no-alias", "storage", "a __restrict__ copy aliases nothing", _sp_alias),
        Precondition("fresh-names", "pipeline", "the flag and pointer names are free",
                     _sp_fresh),
    )

    flag: str = option("auto", Identifier(words=("auto", "none")), "name of the condition flag")
    extent: int | str = option("auto", OneOf(Choice("auto"), IntRange(1, 1 << 20, (16, 32, 64)),
                                             Identifier(words=())),
                               "the K of each `u + K <= n` (auto: the smallest sufficient "
                               "constant; or a macro or number to write instead)")
    base: str = option("none", Identifier(words=("none",)), "rebased pointer name (none: no rebase)")
    restrict: bool = option(False, Bool(), "declare the rebased pointer __restrict__")

    def rewrite(self, site, ctx):
        unit, loop = site.unit, site.node
        facts, _ = _guard_facts(site, loop)
        cond = _sp_cond(self, site, facts)
        fast, _ = specialize(site, loop, self.base, self.restrict)
        ind = line_indent(unit, loop.start_byte)
        st = indent_step(unit, loop)
        slow = unit.text(loop)
        decl = ""
        if self.flag == "none":
            test = cond
        else:
            test = _sp_flag(self, site)
            if _flag_decl(site, test) is None:
                decl = f"const bool {test} = {cond};\n\n{ind}"
        text = (f"{decl}if ({test}) {{\n{ind}{st}{shift(fast, st)}\n{ind}}} else {{\n"
                f"{ind}{st}{shift(slow, st)}\n{ind}}}")
        return [Edit(loop.start_byte, loop.end_byte, text)]

    def inverse_for(self, site, ctx):
        return MergeInterior()


# ------------------------------------------------------------------------ inverse
def _branches(site):
    """(fast statements, slow loop) of ``if (C) {...} else {...}``, or (None, why)."""
    node = site.node
    fast = node.child_by_field_name("consequence")
    alt = node.child_by_field_name("alternative")
    slow = alt.named_children[-1] if alt is not None and alt.type == "else_clause" else alt
    if fast is None or slow is None or fast.type != "compound_statement" or \
            slow.type != "compound_statement":
        return None, "the branches are not both blocks `{ ... }`"
    ss = statements(slow)
    if len(ss) != 1 or ss[0].type != "for_statement":
        return None, "the else branch is not one loop nest"
    return (statements(fast), ss[0]), ""


def _detect(site):
    """The SpecializeInterior options that would write this if statement, or (None, why)."""
    unit = site.unit
    got, why = _branches(site)
    if got is None:
        return None, why
    fast, slow = got
    base, restrict = "none", False
    if len(fast) == 2:
        m = re.fullmatch(r"(?:const\s+)?[A-Za-z_][\w\s]*?\*\s*(__restrict__\s+)?([A-Za-z_]\w*)\s*=.*",
                         norm(unit.text(fast[0])), flags=re.S)
        if not m:
            return None, "the fast path is not `[pointer declaration] loop nest`"
        base, restrict = m.group(2), bool(m.group(1))
    elif len(fast) != 1:
        return None, "the fast path is not `[pointer declaration] loop nest`"
    c = site.text("C").strip()
    if re.fullmatch(r"[A-Za-z_]\w*", c) and _flag_decl(site, c) is not None:
        flag, cond = c, norm(_flag_decl(site, c)[1])
    else:
        flag, cond = "none", norm(c)
    ks = {m.group(1) for m in re.finditer(r"\+\s*([A-Za-z_]\w*|\d+)\s*<=", cond)}
    extent: int | str = "auto"
    if len(ks) == 1:
        k = ks.pop()
        extent = int(k) if k.isdigit() else k
    p = SpecializeInterior(flag=flag, base=base, restrict=restrict, extent=extent)
    return (p, cond), ""


def _auto_if_fits(site, slow, p, cond):
    """``p`` with ``extent=auto`` when the numbers it writes are the ones in ``cond``."""
    shim = _Shim(site, slow, p)
    facts, _ = _guard_facts(shim, slow)
    if facts is not None and isinstance(p.extent, int) and \
            toks(build_cond(facts, "auto")) == toks(cond):
        return replace(p, extent="auto")
    return p


class _Shim:
    """A site of SpecializeInterior at the slow loop (to reuse its analyses)."""

    def __init__(self, site, loop, p):
        self.unit, self.function, self.node, self.pass_ = site.unit, site.function, loop, p


def _mi_copy(site, ctx) -> Verdict:
    got, why = _detect(site)
    if got is None:
        return Verdict.no(why)
    p, cond = got
    (fast, slow), _ = _branches(site)
    unit = site.unit
    shim = _Shim(site, slow, p)
    text, why = specialize(shim, slow, p.base, p.restrict)
    if text is None:
        return Verdict.no(why)
    have = unit.source[fast[0].start_byte:fast[-1].end_byte].decode("utf-8", "replace")
    if toks(text) != toks(have):
        return Verdict.no("the then-branch is not the else-branch with its guards dropped"
                          + (f" and its access rebased to {p.base}" if p.base != "none" else ""))
    if p.flag == "none" or not _other_uses(site, p.flag):
        facts, why = _guard_facts(shim, slow)
        if facts is None:
            return Verdict.no(why)
        want = build_cond(facts, _auto_if_fits(site, slow, p, cond).extent)
        if toks(want) != toks(cond):
            return Verdict.no(f"the condition `{cond}` is not written `{want}` as "
                              "specialize-interior writes it (u + K <= n per guard, in order)")
    return Verdict.yes("the then-branch is the guard-free copy of the else-branch")


def _mi_uniform(site, ctx) -> Verdict:
    got, why = _detect(site)
    if got is None:
        return Verdict.unknown(why)
    p, cond = got
    (_, slow), _ = _branches(site)
    ok, why = _uniform(_Shim(site, slow, p), cond, site.node)
    return Verdict.yes(why) if ok else Verdict.no(why)


def _mi_implies(site, ctx) -> Verdict:
    got, why = _detect(site)
    if got is None:
        return Verdict.unknown(why)
    p, cond = got
    (_, slow), _ = _branches(site)
    shim = _Shim(site, slow, p)
    facts, why = _guard_facts(shim, slow)
    if facts is None:
        return Verdict.no(why)
    ok, why = _implies(shim, cond, facts)
    return Verdict.yes(f"`{cond}` proves the else-branch's guards") if ok else Verdict.no(why)


def _other_uses(site, flag):
    """Uses of ``flag`` outside its declaration and outside this if statement."""
    decl, _ = _flag_decl(site, flag)
    return [n for n in _flag_uses(site, flag)
            if not (decl.start_byte <= n.start_byte < decl.end_byte)
            and not (site.node.start_byte <= n.start_byte < site.node.end_byte)]


def _flag_uses(site, flag):
    unit = site.unit
    return [n for n in unit.walk(site.function.body)
            if n.type == "identifier" and unit.text(n) == flag]


def _mi_scope(site, ctx) -> Verdict:
    got, why = _detect(site)
    if got is None:
        return Verdict.unknown(why)
    p, _ = got
    if p.flag == "none":
        return Verdict.yes("the condition is written in the if")
    decl, _ = _flag_decl(site, p.flag)
    others = _other_uses(site, p.flag)
    later = [n for n in others if n.start_byte >= site.node.end_byte]
    if later:
        return Verdict.no(f"{p.flag} is tested again later (line "
                          f"{site.unit.line_col(later[0].start_byte)[0]}): merge the last test first, "
                          "so the declaration stays with the first")
    if not others:
        sts = statements(site.function.body)
        k = next((i for i, s in enumerate(sts) if s.id == site.node.id), None)
        if k is None or k == 0 or sts[k - 1].id != decl.id:
            return Verdict.no(f"the declaration of {p.flag} does not directly precede its only "
                              "test: specialize-interior could not put it back in place")
    return Verdict.yes(f"this is the last test of {p.flag}")


@dataclass(frozen=True)
class MergeInterior(Pass):
    """Merge an interior fast path back into its guarded edge path.

    Before::

        const bool full = r0 + 64 <= rows && c0 + 64 <= cols;
        if (full) {
            const float* __restrict__ src = in + (size_t)r0 * cols + c0;
            for (...) { tile[ty + j][tx] = src[(size_t)(ty + j) * cols + tx]; }
        } else {
            for (...) {
                const int r = r0 + ty + j;
                const int c = c0 + tx;
                if (r < rows && c < cols) { tile[ty + j][tx] = in[(size_t)r * cols + c]; }
            }
        }

    After ``merge-interior``::

        for (...) {
            const int r = r0 + ty + j;
            const int c = c0 + tx;
            if (r < rows && c < cols) { tile[ty + j][tx] = in[(size_t)r * cols + c]; }
        }

    The flag's declaration goes with its last test.

    Preconditions: specialized-copy (layout: the then-branch is exactly what
    ``specialize-interior`` writes from the else-branch: guards dropped, temporaries that
    only fed them dropped, at most one access rebased to a pointer declared first),
    uniform-condition (pipeline: the condition is block-uniform), implies-guards (layout:
    the condition proves every guard of the else-branch, so both branches compute the
    same; where the merge drops the condition, it must be spelled as
    ``specialize-interior`` writes it), flag-scope (pipeline: no later statement tests the flag, and a flag tested only
    here is declared right before the if).

    Options: none (``inverse_for`` gives ``specialize-interior`` with the flag, the
    extent spelling, the pointer name and ``restrict`` it read).
    """

    name = "merge-interior"
    kind = "simplify"
    inverse = "specialize-interior"
    anchor = Rule(pattern="if ($C) $A; else $B;", inside_kernel=True)
    preconditions = (
        Precondition("specialized-copy", "layout",
                     "the then-branch is the guard-free copy of the else-branch", _mi_copy),
        Precondition("uniform-condition", "pipeline", "the condition is block-uniform",
                     _mi_uniform),
        Precondition("implies-guards", "layout", "the condition proves the guards",
                     _mi_implies),
        Precondition("flag-scope", "pipeline", "this is the flag's last test", _mi_scope),
    )

    def rewrite(self, site, ctx):
        unit = site.unit
        (p, _), _ = _detect(site)
        (_, slow), _ = _branches(site)
        st = indent_step(unit, site.node)
        text = unshift(unit.text(slow), st)
        if p.flag != "none" and not _other_uses(site, p.flag):
            decl, _ = _flag_decl(site, p.flag)
            return [Edit(decl.start_byte, site.node.end_byte, text)]
        return [Edit(site.node.start_byte, site.node.end_byte, text)]

    def inverse_for(self, site, ctx):
        (p, cond), _ = _detect(site)
        (_, slow), _ = _branches(site)
        return _auto_if_fits(site, slow, p, cond)
