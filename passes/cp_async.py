"""Asynchronous global-to-shared copies: ``cp-async`` (optimize) and ``sync-copy`` (simplify).

``cp-async`` turns a run of shared-from-global stores (``tile[..] = g[..]``, possibly
guarded with a zero fallback) into ``cp.async`` copies on sm_80+, behind a preprocessor
guard that keeps the original stores for older targets and the CPU emulator.
``sync-copy`` removes such copies again: exactly the blocks ``cp-async`` writes, and the
``#if MACRO`` cp.async helpers of hand-written kernels (corpus/sgemm/expert.cu) whose
``#else`` branches are the synchronous copies (``cp-async{form=switch}`` writes them back).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.smem import type_layout
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.pattern import tokens
from kltrans.passes import Bool, Choice, Domain, Identifier, NameList, Pass, Precondition, option
from kltrans.passes.base import Site
from kltrans.syntax import Edit, parse
from kltrans.syntax.cuda import enclosing_function
from kltrans.analysis.affine import strip_parens as _strip
from kltrans.passes.rewrite import indent_of as line_indent, norm

#: the guard of the asynchronous branch: sm_80 device code, never the CPU emulator
GUARD = ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && "
         "!defined(__KLTRANS_CPU_EMULATION__)")
SIZES = (4, 8, 16)
COMMIT = 'asm volatile("cp.async.commit_group;\\n" ::: "memory");'
WAIT = 'asm volatile("cp.async.wait_group 0;\\n" ::: "memory");'
_PREPROC = ("preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "preproc_elifdef")
_CP_ASYNC = re.compile(r"\bcp\.async\.(ca|cg)\.shared\.global\b")
_CP_ASYNC_ANY = re.compile(r"\bcp\.async\b|__pipeline_(memcpy_async|commit|wait_prior)")
_CP_SYNC = re.compile(r"\bcp\.async\.(commit_group|wait_group|wait_all)\b")
_EMULATION = "__KLTRANS_CPU_EMULATION__"


class _Expr(Domain):
    """A short integer expression without spaces or commas (``0``, ``STAGES-2``)."""

    def parse(self, text: str) -> str:
        return self.check(text)

    def contains(self, value) -> bool:
        return isinstance(value, str) and bool(re.fullmatch(r"[A-Za-z0-9_+\-*/]+", value))

    def describe(self) -> str:
        return "an integer expression without spaces (0, STAGES-2)"

    def values(self) -> list:
        return ["0"]


# ----------------------------------------------------------------- tree helpers
def _root(node):
    depth = 0
    while node is not None and node.type == "subscript_expression":
        node = _strip(node.child_by_field_name("argument"))
        depth += 1
    return (node, depth) if node is not None and node.type == "identifier" else (None, depth)


def _only_stmt(node):
    """The single statement of ``node`` (itself, or the one statement of a block)."""
    if node is not None and node.type == "compound_statement":
        inner = [c for c in node.named_children if c.type != "comment"]
        return inner[0] if len(inner) == 1 else None
    return node


def _assign(stmt):
    """(lhs, rhs) of ``lhs = rhs;``."""
    if stmt is None or stmt.type != "expression_statement" or len(stmt.named_children) != 1:
        return None
    e = stmt.named_children[0]
    if e.type != "assignment_expression" or e.child_by_field_name("operator").type != "=":
        return None
    lhs = e.child_by_field_name("left")
    if lhs.type != "subscript_expression":
        return None
    return lhs, e.child_by_field_name("right")


@dataclass
class Copy:
    stmt: object
    dst: object  # the destination subscript expression
    src: object  # the source subscript expression G[J]
    cond: object = None  # guard (None: unconditional)
    zero: object = None  # fallback value


def copy_of(unit, stmt) -> Copy | None:
    """The copy ``stmt`` performs, when it has one of the accepted shapes."""
    if stmt is None:
        return None
    if stmt.type == "if_statement":
        cons = _only_stmt(stmt.child_by_field_name("consequence"))
        alt = stmt.child_by_field_name("alternative")
        if alt is not None and alt.type == "else_clause":
            inner = [c for c in alt.named_children if c.type != "comment"]
            alt = inner[0] if len(inner) == 1 else None
        alt = _only_stmt(alt)
        a, b = _assign(cons), _assign(alt)
        cond = stmt.child_by_field_name("condition")
        if a is None or b is None or cond is None:
            return None
        if tokens(unit, a[0]) != tokens(unit, b[0]):
            return None
        src = _strip(a[1])
        if src.type != "subscript_expression":
            return None
        inner = [c for c in cond.named_children if c.type != "comment"]
        return Copy(stmt, a[0], src, inner[0] if len(inner) == 1 else cond, b[1])
    got = _assign(stmt)
    if got is None:
        return None
    lhs, rhs = got
    r = _strip(rhs)
    if r.type == "subscript_expression":
        return Copy(stmt, lhs, r)
    if r.type == "conditional_expression":
        c = r.child_by_field_name("condition")
        t = _strip(r.child_by_field_name("consequence"))
        z = r.child_by_field_name("alternative")
        if t is not None and t.type == "subscript_expression":
            return Copy(stmt, lhs, t, c, z)
    return None


def _prev_stmt(node):
    p = node.prev_named_sibling
    while p is not None and p.type == "comment":
        p = p.prev_named_sibling
    return p


def _next_stmt(node):
    p = node.next_named_sibling
    while p is not None and p.type == "comment":
        p = p.next_named_sibling
    return p


def group_of(unit, stmt) -> list:
    """The run of consecutive copy statements starting at ``stmt``."""
    out = []
    n = stmt
    while n is not None and copy_of(unit, n) is not None:
        out.append(copy_of(unit, n))
        n = _next_stmt(n)
    return out


def _in_preproc(node, stop) -> bool:
    p = node.parent
    while p is not None and p is not stop and p.type != "function_definition":
        if p.type in _PREPROC:
            return True
        p = p.parent
    return False


def _shared_decls(unit, fn) -> dict:
    out = {}
    for d in unit.shared_decls():
        if d.function is None or (fn is not None and d.function == fn.name):
            out[d.name] = d
    return out


def _params(fn) -> dict:
    return {p.name: p for p in fn.params if p.name} if fn is not None else {}


def _elem(t: str) -> str:
    t = re.sub(r"\b(const|volatile|__restrict__|__restrict)\b", " ", t)
    return norm(t.replace("*", " ")).strip()


def _paren(unit, node) -> str:
    text = unit.text(node)
    if node.type in ("identifier", "parenthesized_expression", "call_expression",
                     "field_expression", "subscript_expression", "number_literal"):
        return text
    return f"({text})"


def _size(unit, fn, c: Copy):
    """(element type, size, align) of the destination, or (why, None, None)."""
    shared = _shared_decls(unit, fn)
    root, _ = _root(c.dst)
    d = shared.get(unit.text(root)) if root is not None else None
    if d is None:
        return "no shared destination", None, None
    lay = type_layout(unit, d.type)
    if lay is None:
        return f"the element type {d.type} of {d.name} has no known size", None, None
    return d.type, lay[0], lay[1]


def copy_text(unit, fn, c: Copy) -> str:
    """The cp.async statement for one copy."""
    _, size, _ = _size(unit, fn, c)
    op = "cg" if size == 16 else "ca"
    dst = f"&{unit.text(c.dst)}"
    src = f"&{unit.text(c.src)}"
    cvt = f'"r"(static_cast<unsigned>(__cvta_generic_to_shared({dst})))'
    if c.cond is None:
        return (f'asm volatile("cp.async.{op}.shared.global [%0], [%1], {size};\\n" :: {cvt}, '
                f'"l"({src}) : "memory");')
    cond = _paren(unit, c.cond)
    base, _ = _root(c.src)
    return (f'asm volatile("cp.async.{op}.shared.global [%0], [%1], {size}, %2;\\n" :: {cvt}, '
            f'"l"({cond} ? {src} : {unit.text(base)}), "r"({cond} ? {size} : 0) : "memory");')


def async_lines(unit, fn, group) -> list[str]:
    return [copy_text(unit, fn, c) for c in group] + [COMMIT, WAIT]


def _line_start(unit, offset: int) -> int:
    return unit.source.rfind(b"\n", 0, offset) + 1


# ------------------------------------------------------------------ preconditions
def _is_switch(site) -> bool:
    return site.pass_ is not None and getattr(site.pass_, "form", "block") == "switch"


def _group(site):
    return group_of(site.unit, site.node)


def _arch(site, ctx) -> Verdict:
    if _is_switch(site):
        return Verdict.yes("the code tests __CUDA_ARCH__ >= 800 in its switch: other targets "
                           "and the CPU emulator compile the synchronous copies")
    v = ctx.arch_at_least(80)
    if v.holds:
        return Verdict.yes(f"{v.reason}: cp.async exists")
    if v.fails:
        return Verdict.no(f"{v.reason}: cp.async needs sm_80 (Ampere) or newer")
    return Verdict.unknown(f"{v.reason} (pass --arch sm_80 or newer)")


def _storage(site, ctx) -> Verdict:
    if _is_switch(site):
        return _sw_storage(site, ctx)
    unit, fn = site.unit, site.function
    shared = _shared_decls(unit, fn)
    params = _params(fn)
    for c in _group(site):
        line = unit.line_col(c.stmt.start_byte)[0]
        root, _ = _root(c.dst)
        if root is None or unit.text(root) not in shared:
            return Verdict.no(f"`{norm(unit.text(c.dst))}` (line {line}) is not __shared__ "
                              "memory: cp.async only writes shared memory")
        g, _ = _root(c.src)
        p = params.get(unit.text(g)) if g is not None else None
        if p is None or p.pointer != 1 or p.array:
            return Verdict.no(f"`{norm(unit.text(c.src))}` (line {line}) does not read through a "
                              "pointer parameter: it is not known to be global memory")
        name = p.name
        for n in unit.walk(fn.body):
            w = None
            if n.type == "assignment_expression":
                w = n.child_by_field_name("left")
            elif n.type == "update_expression":
                w = n.child_by_field_name("argument")
            if w is None:
                continue
            if w.type == "pointer_expression":
                w = w.child_by_field_name("argument")
            r, _ = _root(w) if w.type == "subscript_expression" else (w, 0)
            if r is not None and unit.text(r) == name:
                return Verdict.no(f"the function writes {name} (line "
                                  f"{unit.line_col(n.start_byte)[0]}): an asynchronous copy "
                                  "could read it before or after that write")
    return Verdict.yes("shared destinations, global sources the function never writes")


def _element_size(site, ctx) -> Verdict:
    if _is_switch(site):
        return _sw_size(site, ctx)
    unit, fn = site.unit, site.function
    params = _params(fn)
    out = set()
    for c in _group(site):
        t, size, _align = _size(unit, fn, c)
        if size is None:
            return Verdict.unknown(t)
        g, _ = _root(c.src)
        p = params.get(unit.text(g)) if g is not None else None
        st = _elem(p.base_type) if p is not None else "?"
        if _elem(t) != st:
            return Verdict.no(f"the copy `{norm(unit.text(c.stmt))[:60]}` converts {st} to "
                              f"{_elem(t)}: cp.async copies bytes")
        if size not in SIZES:
            return Verdict.no(f"{_elem(t)} is {size} bytes: cp.async copies 4, 8 or 16 bytes")
        out.add(f"{_elem(t)} ({size} B)")
    return Verdict.yes(", ".join(sorted(out)))


def _aligned(site, ctx) -> Verdict:
    if _is_switch(site):
        return Verdict.yes("the synchronous copies already dereference the helper pointers as "
                           "the copied type: the addresses are aligned to its size")
    unit, fn = site.unit, site.function
    shared = _shared_decls(unit, fn)
    for c in _group(site):
        t, size, align = _size(unit, fn, c)
        if size is None:
            return Verdict.unknown(t)
        if align != size:
            return Verdict.no(f"{_elem(t)} is {size} bytes but aligned to {align}: a "
                              f"{size}-byte cp.async needs {size}-byte aligned addresses")
        root, depth = _root(c.dst)
        d = shared[unit.text(root)]
        if depth != max(len(d.dims), 1):
            return Verdict.no(f"`{norm(unit.text(c.dst))}` is not one whole element of {d.name}")
        g, gd = _root(c.src)
        if gd != 1:
            return Verdict.no(f"`{norm(unit.text(c.src))}` is not one element of a pointer")
    return Verdict.yes("whole elements of T arrays and T pointers: naturally aligned")


def _zero_fill(site, ctx) -> Verdict:
    if _is_switch(site):
        return Verdict.yes("a copy helper's fallback is a zero literal (or make_T of zeros) by "
                           "its shape")
    unit = site.unit
    n = 0
    for c in _group(site):
        if c.zero is None:
            continue
        n += 1
        z = _strip(c.zero)
        text = unit.text(z)
        ok = False
        if z.type == "number_literal":
            try:
                ok = float(re.sub(r"[fFuUlL]+$", "", text) or "nan") == 0.0 and \
                    not text.lower().startswith("0x")
            except ValueError:
                ok = text in ("0", "0u", "0U")
        if not ok:
            return Verdict.no(f"the fallback `{text}` (line {unit.line_col(z.start_byte)[0]}) is "
                              "not a zero literal: cp.async fills with zero bytes")
    return Verdict.yes(f"{n} guarded copy(ies) fall back to zero (src-size 0 zero-fills)"
                       if n else "no guarded copy")


def _side_effect_free(site, ctx) -> Verdict:
    if _is_switch(site):
        return Verdict.yes("the helper's guard is a value: it is evaluated once in the "
                           "asynchronous form")
    unit = site.unit
    for c in _group(site):
        for part in (c.dst, c.src, c.cond):
            if part is None:
                continue
            for n in unit.walk(part):
                if n.type in ("assignment_expression", "update_expression", "call_expression"):
                    if n.type == "call_expression":
                        f = n.child_by_field_name("function")
                        if f is not None and unit.text(f).split("<")[0] in (
                                "min", "max", "static_cast", "umin", "umax"):
                            continue
                    return Verdict.no(f"`{norm(unit.text(n))}` (line "
                                      f"{unit.line_col(n.start_byte)[0]}) has side effects: the "
                                      "guard is evaluated twice in the asynchronous form")
    return Verdict.yes("indices and guards have no side effects")


def _barrier_follows(site, ctx) -> Verdict:
    if _is_switch(site):
        return _sw_pipeline(site, ctx)
    unit = site.unit
    group = _group(site)
    names = {unit.text(_root(c.dst)[0]) for c in group if _root(c.dst)[0] is not None}
    last = group[-1].stmt
    n = _next_stmt(last)
    while n is not None:
        text = norm(unit.text(n))
        if text in ("__syncthreads();",):
            return Verdict.yes("a __syncthreads() follows the copies before any use of "
                               f"{', '.join(sorted(names))}")
        for x in unit.walk(n):
            if x.type == "identifier" and unit.text(x) in names:
                return Verdict.no(f"{unit.text(x)} is used (line {unit.line_col(x.start_byte)[0]}) "
                                  "before a __syncthreads() follows the copies")
            if x.type == "call_expression" and "sync" in unit.text(x.child_by_field_name(
                    "function") or x):
                return Verdict.no(f"`{norm(unit.text(x))}` follows the copies, not "
                                  "__syncthreads()")
        n = _next_stmt(n)
    parent = last.parent
    if parent is not None and parent.type == "compound_statement" and \
            parent.parent is not None and parent.parent.type == "lambda_expression":
        return Verdict.yes("the copies end a load function: they complete (wait_group 0) "
                           "before it returns, its callers' barriers publish them")
    return Verdict.no("no __syncthreads() follows the copies in their block: other threads "
                      "could read the tile before the copies land")


def _fresh_macro(site, ctx) -> Verdict:
    if not _is_switch(site):
        return Verdict.yes("no macro (block form)")
    return _sw_macro(site, ctx)


@dataclass(frozen=True)
class CpAsync(Pass):
    """Copy global memory into shared tiles with cp.async (sm_80+), keeping a plain fallback.

    Before::

        As[ty][tx] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
        Bs[ty][tx] = B[kb * N + col];
        __syncthreads();

    After ``cp-async`` (``--arch sm_80``)::

        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(__KLTRANS_CPU_EMULATION__)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\\n" :: "r"(static_cast<unsigned>(
            __cvta_generic_to_shared(&As[ty][tx]))), "l"((row < M && ka < K) ? &A[row * K + ka] : A),
            "r"((row < M && ka < K) ? 4 : 0) : "memory");
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\\n" :: "r"(static_cast<unsigned>(
            __cvta_generic_to_shared(&Bs[ty][tx]))), "l"(&B[kb * N + col]) : "memory");
        asm volatile("cp.async.commit_group;\\n" ::: "memory");
        asm volatile("cp.async.wait_group 0;\\n" ::: "memory");
        #else
        As[ty][tx] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
        Bs[ty][tx] = B[kb * N + col];
        #endif
        __syncthreads();

    A site is a run of consecutive copy statements ``S[..] = G[..];``, ``S[..] = c ? G[..]
    : 0;`` or ``if (c) S[..] = G[..]; else S[..] = 0;`` (S a ``__shared__`` array, G a
    pointer parameter). The copies bypass the registers (``.ca`` for 4 and 8 bytes,
    ``.cg`` for 16); they are committed as one group and waited for (``wait_group 0``)
    at the end of the run, so the following ``__syncthreads()`` publishes them as it did
    the stores. A guarded copy uses cp.async's src-size operand: 0 bytes read and the
    element zero-filled when the guard fails, the source address then clamped to the
    base pointer. Inline PTX is used rather than ``__pipeline_memcpy_async`` (which needs
    ``<cuda_pipeline.h>`` at file scope): the rewrite stays local to the run. The
    original stores stay in the ``#else`` branch, which older architectures and the CPU
    emulator (``__KLTRANS_CPU_EMULATION__``) compile. Runs inside the load function of
    ``double-buffer`` are accepted (the copies complete before it returns).

    Run-time facts: none beyond the architecture, which comes from the context (``--arch
    sm_80`` or newer); the guard in the code keeps other targets on the plain stores.

    Preconditions: arch (hardware: ``--arch`` sm_80 or newer), shared-from-global
    (storage: every destination is a ``__shared__`` array, every source a pointer
    parameter the function never writes), element-size (dtype: the same element type
    on both sides, 4, 8 or 16 bytes), aligned (layout: whole elements of naturally
    aligned types, alignof == sizeof), zero-fill (dtype: a guarded copy falls back to a
    zero literal, which the zero fill reproduces bit for bit), side-effect-free
    (pipeline: indices and guards have no side effects, the guard is evaluated twice),
    barrier-follows (pipeline: a ``__syncthreads()`` follows the run in its block before
    any use of the tiles, or the run ends a load function).

    Second form (``form=switch``): hand-written kernels often keep each copy in a
    ``__device__`` helper (``copy4(float* dst, const float* src, bool ok) { *dst = ok ?
    *src : 0.0f; }``, ``*reinterpret_cast<float4*>(dst) = ...`` for 16 bytes) and call
    empty commit/wait helpers where the pipeline would commit and wait. ``form=switch``
    writes a file-scope switch ``#if <arch test> #define M 1 #else #define M 0 #endif``
    and, under ``#if M``, a cp.async copy in each helper (the synchronous copy stays in
    ``#else``), ``cp.async.commit_group`` / ``wait_group <pending>`` / ``wait_all`` in the
    named helpers. This is the inverse of ``sync-copy`` on such a switch (its options
    capture the spelling: macro, guard, helper names, temporary, pending count). There,
    shared-from-global checks that every call passes a ``__shared__`` address (through
    parameters of the callers too), element-size the helper's copied type, barrier-follows
    that commit, wait and wait_all helpers are named, empty and called (the code already
    calls them where it commits and waits), and fresh-macro that M is a new name; the
    arch test is in the code, so no ``--arch`` is needed.

    Options: form (block: guarded runs of stores in place; switch: copy helpers behind a
    file-scope macro), macro (switch: its name; auto: KL_CP_ASYNC), paren (switch: write
    ``(__CUDA_ARCH__ >= 800)`` in parentheses), emu (switch: the CPU-emulation macros
    the guard excludes, joined by +), copies (switch: the copy helpers; all: every helper
    of the copy shape), commit / wait / wait_all (switch: the empty helpers that commit,
    wait for all but ``pending`` groups, wait for all), pending (switch: the wait_group
    count), tmp (switch: the name of the shared address temporary).
    """

    name = "cp-async"
    kind = "optimize"
    inverse = "sync-copy"
    scope = "device"
    anchor = Rule(any=(
        Rule(pattern="$D[$I] = $G[$J];"),
        Rule(pattern="$D[$I] = $C ? $G[$J] : $Z;"),
        Rule(pattern="$D[$I] = ($C ? $G[$J] : $Z);"),
        Rule(pattern="if ($C) $D[$I] = $G[$J]; else $D[$I] = $Z;"),
        Rule(pattern="if ($C) { $D[$I] = $G[$J]; } else { $D[$I] = $Z; }"),
    ))
    form: str = option("block", Choice("block", "switch"),
                       "block: guarded runs of stores; switch: copy helpers behind a macro")
    macro: str = option("auto", Identifier(), "switch: the macro name (auto: KL_CP_ASYNC)")
    paren: bool = option(False, Bool(), "switch: parenthesize the __CUDA_ARCH__ test")
    emu: str = option(_EMULATION, NameList(), "switch: CPU-emulation macros the guard excludes")
    copies: str = option("all", NameList(), "switch: the copy helpers (all: every one)")
    commit: str = option("none", Identifier(("none",)), "switch: the commit helper")
    wait: str = option("none", Identifier(("none",)), "switch: the wait_group helper")
    pending: str = option("0", _Expr(), "switch: groups left in flight by the wait helper")
    wait_all: str = option("none", Identifier(("none",)), "switch: the wait_all helper")
    tmp: str = option("d", Identifier(()), "switch: the shared address temporary")
    preconditions = (
        Precondition("arch", "hardware", "cp.async needs sm_80 or newer (from --arch)", _arch),
        Precondition("shared-from-global", "storage",
                     "destinations are __shared__, sources are pointer parameters never "
                     "written", _storage),
        Precondition("element-size", "dtype",
                     "one element type on both sides, of 4, 8 or 16 bytes", _element_size),
        Precondition("aligned", "layout",
                     "whole elements of a type aligned to its size", _aligned),
        Precondition("zero-fill", "dtype",
                     "a guarded copy falls back to a zero literal", _zero_fill),
        Precondition("side-effect-free", "pipeline",
                     "indices and guards have no side effects", _side_effect_free),
        Precondition("barrier-follows", "pipeline",
                     "__syncthreads() follows the copies before the tiles are used",
                     _barrier_follows),
        Precondition("fresh-macro", "pipeline",
                     "switch: the macro name is not used yet", _fresh_macro),
    )

    def sites(self, unit, ctx):
        if self.form == "switch":
            return _switch_sites(self, unit, ctx)
        out = []
        for s in super().sites(unit, ctx):
            st = s.node
            if _in_preproc(st, s.function.node if s.function else None):
                continue  # the fallback of copies already made asynchronous
            if copy_of(unit, _prev_stmt(st)) is not None:
                continue  # continues the run of an earlier site
            if copy_of(unit, st) is None:
                continue
            out.append(Site(unit, s.match, s.function, len(out) + 1, self))
        return out

    def rewrite(self, site, ctx):
        if self.form == "switch":
            return _switch_rewrite(self, site, ctx)
        unit, fn = site.unit, site.function
        group = _group(site)
        ind = line_indent(unit, group[0].stmt.start_byte)
        start, end = group[0].stmt.start_byte, group[-1].stmt.end_byte
        orig = unit.source[start:end].decode("utf-8", "replace")
        lines = [f"#if {GUARD}"] + [ind + x for x in async_lines(unit, fn, group)] + \
            [f"{ind}#else", f"{ind}{orig}", f"{ind}#endif"]
        return [Edit(start, end, "\n".join(lines))]

    def inverse_for(self, site, ctx):
        return SyncCopy()



# ------------------------------------------------------- the hand-written switch form
#: an architecture switch: ``#if <guard> #define M 1 #else #define M 0 #endif`` and
#: ``#if M`` blocks inside copy / commit / wait helper functions (corpus/sgemm/expert.cu)
_FUNC = Rule(kind="function_definition")
def _deref(unit, node, names):
    """(parameter, vector type or None) when ``node`` is ``*p`` or
    ``*reinterpret_cast<[const] V*>(p)`` with p one of ``names``."""
    node = _strip(node)
    if node is None or node.type != "pointer_expression" or unit.text(node)[:1] != "*":
        return None
    arg = _strip(node.child_by_field_name("argument"))
    if arg.type == "identifier" and unit.text(arg) in names:
        return unit.text(arg), None
    m = re.fullmatch(r"reinterpret_cast\s*<\s*(?:const\s+)?([A-Za-z_]\w*)\s*(?:const\s*)?\*\s*>"
                     r"\s*\(\s*([A-Za-z_]\w*)\s*\)", unit.text(arg))
    if m and m.group(2) in names:
        return m.group(2), m.group(1)
    return None


def _is_zero(unit, node) -> bool:
    node = _strip(node)
    if node is None:
        return False
    text = unit.text(node)
    if node.type == "number_literal":
        try:
            return not text.lower().startswith("0x") and \
                float(re.sub(r"[fFuUlL]+$", "", text) or "nan") == 0.0
        except ValueError:
            return False
    if node.type == "call_expression":
        f = unit.text(node.child_by_field_name("function"))
        args = [a for a in node.child_by_field_name("arguments").named_children
                if a.type != "comment"]
        return bool(re.fullmatch(r"make_\w+", f)) and bool(args) and \
            all(_is_zero(unit, a) for a in args)
    return False


@dataclass
class _Helper:
    fn: object  # Function
    stmt: object  # the one statement of the body
    dst: str
    src: str
    cond: object  # the guard node (None: unconditional)
    size: int | None
    why: str = ""


def _body_stmts(fn):
    body = fn.body
    return [c for c in body.named_children if c.type != "comment"] if body is not None else []


def copy_helper(unit, fn) -> _Helper | None:
    """The synchronous copy a ``__device__`` helper performs: its body is the one
    statement ``*dst = ok ? *src : 0;`` (or ``*dst = *src;``; ``dst``/``src`` possibly
    reinterpreted as a vector type), ``dst`` and ``src`` pointer parameters."""
    if fn is None or not fn.is_device or fn.is_kernel:
        return None
    stmts = _body_stmts(fn)
    if len(stmts) != 1 or stmts[0].type != "expression_statement":
        return None
    e = stmts[0].named_children[0] if stmts[0].named_children else None
    if e is None or e.type != "assignment_expression" or \
            e.child_by_field_name("operator").type != "=":
        return None
    ptrs = {p.name for p in fn.params if p.name and p.pointer == 1 and not p.array}
    d = _deref(unit, e.child_by_field_name("left"), ptrs)
    if d is None:
        return None
    rhs = _strip(e.child_by_field_name("right"))
    cond = None
    if rhs.type == "conditional_expression":
        cond = rhs.child_by_field_name("condition")
        if not _is_zero(unit, rhs.child_by_field_name("alternative")):
            return None
        rhs = rhs.child_by_field_name("consequence")
    s = _deref(unit, rhs, ptrs - {d[0]})
    if s is None or s[1] != d[1]:
        return None
    params = {p.name: p for p in fn.params}
    t = d[1] or params[d[0]].base_type
    lay = type_layout(unit, t)
    h = _Helper(fn, stmts[0], d[0], s[0], cond, lay[0] if lay else None)
    if _elem(params[d[0]].base_type) != _elem(params[s[0]].base_type):
        h.why = f"{fn.name} converts {params[s[0]].base_type} to {params[d[0]].base_type}"
    elif lay is None:
        h.why = f"the size of {t} is unknown"
    elif lay[0] not in SIZES:
        h.why = f"{t} is {lay[0]} bytes: cp.async copies 4, 8 or 16 bytes"
    return h


def _functions(unit, ctx):
    from kltrans.syntax.cuda import find_functions, reachable_functions
    fns = find_functions(unit)
    if ctx.kernel:
        keep = reachable_functions(unit, ctx.kernel)
        fns = [f for f in fns if f.name in keep]
    return fns


def _switch_plan(p, unit, ctx):
    """(copy helpers, {role: Function}) the switch form rewrites."""
    want = NameList.names(p.copies)
    helpers = []
    roles = {}
    for f in _functions(unit, ctx):
        if f.name in (p.commit, p.wait, p.wait_all):
            for role in ("commit", "wait", "wait_all"):
                if getattr(p, role) == f.name:
                    roles[role] = f
            continue
        if want is not None and f.name not in want:
            continue
        h = copy_helper(unit, f)
        if h is not None:
            helpers.append(h)
    return helpers, roles


def _calls(unit, name):
    return [n for n in unit.nodes_of_type("call_expression")
            if re.sub(r"<.*", "", unit.text(n.child_by_field_name("function"))).strip() == name]


def _shared_arg(unit, node, depth=0) -> bool:
    """``node`` (an argument) addresses __shared__ memory: ``&S[..]`` or ``S + i`` with S
    a __shared__ array, or a parameter that every caller binds to shared memory."""
    from kltrans.syntax.cuda import enclosing_function
    node = _strip(node)
    if depth > 6 or node is None:
        return False
    if node.type == "pointer_expression" and unit.text(node)[:1] == "&":
        node = _strip(node.child_by_field_name("argument"))
    elif node.type == "binary_expression" and \
            node.child_by_field_name("operator").type in ("+", "-"):
        node = _strip(node.child_by_field_name("left"))
    root, _ = _root(node) if node.type == "subscript_expression" else (node, 0)
    if root is None or root.type != "identifier":
        return False
    name = unit.text(root)
    fn = enclosing_function(unit, node)
    if fn is None:
        return False
    if name in _shared_decls(unit, fn):
        return True
    pos = [i for i, q in enumerate(fn.params) if q.name == name]
    if not pos:
        return False
    calls = _calls(unit, fn.name)
    return bool(calls) and all(
        _shared_arg(unit, _args(c)[pos[0]], depth + 1)
        for c in calls if len(_args(c)) > pos[0])


def _args(call):
    return [a for a in call.child_by_field_name("arguments").named_children
            if a.type != "comment"]


def _switch_helpers(site, ctx):
    return _switch_plan(site.pass_ or CpAsync(form="switch"), site.unit, ctx)


def _sw_storage(site, ctx) -> Verdict:
    unit = site.unit
    helpers, _ = _switch_helpers(site, ctx)
    if not helpers:
        return Verdict.no("no __device__ helper performs one synchronous copy")
    for h in helpers:
        calls = _calls(unit, h.fn.name)
        if not calls:
            return Verdict.no(f"{h.fn.name} is never called")
        i = [k for k, q in enumerate(h.fn.params) if q.name == h.dst][0]
        for c in calls:
            a = _args(c)
            if len(a) <= i or not _shared_arg(unit, a[i]):
                return Verdict.no(f"`{norm(unit.text(c))[:60]}` (line "
                                  f"{unit.line_col(c.start_byte)[0]}): the destination is "
                                  "not known to be __shared__ memory")
    return Verdict.yes(f"{len(helpers)} copy helper(s), every call copies into __shared__ "
                       "memory")


def _sw_size(site, ctx) -> Verdict:
    helpers, _ = _switch_helpers(site, ctx)
    for h in helpers:
        if h.why:
            return Verdict.no(h.why)
    return Verdict.yes(", ".join(f"{h.fn.name}: {h.size} B" for h in helpers) or "no helper")


def _sw_pipeline(site, ctx) -> Verdict:
    unit = site.unit
    p = site.pass_ or CpAsync(form="switch")
    _, roles = _switch_helpers(site, ctx)
    if "commit" not in roles:
        return Verdict.no("no commit helper is named (commit=...): the copies would never be "
                          "committed as a group")
    if "wait" not in roles and "wait_all" not in roles:
        return Verdict.no("no wait helper is named (wait=... or wait_all=...): nothing would "
                          "wait for the copies")
    for role, f in roles.items():
        if _body_stmts(f) or f.params:
            return Verdict.no(f"{f.name} (the {role} helper) is not an empty function without "
                              "parameters")
        if not _calls(unit, f.name):
            return Verdict.no(f"{f.name} (the {role} helper) is never called")
    if p.wait_all == "none":
        return Verdict.no("no wait_all helper is named: copies still in flight could write "
                          "shared memory after the block retires")
    return Verdict.yes("empty commit/wait helpers are called where the pipeline commits and "
                       "waits (their synchronous form is a no-op)")


def _sw_macro(site, ctx) -> Verdict:
    unit = site.unit
    p = site.pass_ or CpAsync(form="switch")
    name = p.macro if p.macro != "auto" else "KL_CP_ASYNC"
    for n in unit.walk(unit.root):
        if n.type == "identifier" and unit.text(n) == name:
            return Verdict.no(f"{name} is already used (line {unit.line_col(n.start_byte)[0]})")
    return Verdict.yes(f"{name} is a fresh macro name")


def _switch_guard(p) -> str:
    arch = "(__CUDA_ARCH__ >= 800)" if p.paren else "__CUDA_ARCH__ >= 800"
    emu = NameList.names(p.emu) or {_EMULATION, "KLTRANS_CPU_EMULATION"}
    order = [e for e in p.emu.split("+")] if p.emu != "all" else sorted(emu, reverse=True)
    return " && ".join(["defined(__CUDA_ARCH__)", arch] + [f"!defined({e})" for e in order])


def _switch_sites(p, unit, ctx):
    helpers, roles = _switch_plan(p, unit, ctx)
    if not helpers:
        return []
    first = helpers[0].fn
    for m in _FUNC.find_all(unit):
        if m.node.id == first.node.id:
            return [Site(unit, m, first, 1, p)]
    return []


def _asm_copy(h, unit, tmp: str) -> str:
    op = "cg" if h.size == 16 else "ca"
    head = (f'const unsigned {tmp} = static_cast<unsigned>(__cvta_generic_to_shared({h.dst}));')
    if h.cond is None:
        return head + "\n" + (f'asm volatile("cp.async.{op}.shared.global [%0], [%1], {h.size};'
                              f'\\n" ::"r"({tmp}), "l"({h.src}) : "memory");')
    cond = _paren(unit, _strip(h.cond) if h.cond.type == "parenthesized_expression" else h.cond)
    return head + "\n" + (f'asm volatile("cp.async.{op}.shared.global [%0], [%1], {h.size}, '
                          f'%2;\\n" ::"r"({tmp}), "l"({h.src}), "r"({cond} ? {h.size} : 0) '
                          f': "memory");')


_ROLE_ASM = {
    "commit": lambda p: 'asm volatile("cp.async.commit_group;\\n" ::: "memory");',
    "wait": lambda p: f'asm volatile("cp.async.wait_group %0;\\n" ::"n"({p.pending}) : "memory");',
    "wait_all": lambda p: 'asm volatile("cp.async.wait_all;\\n" ::: "memory");',
}


def _switch_rewrite(p, site, ctx):
    unit = site.unit
    helpers, roles = _switch_plan(p, unit, ctx)
    macro = p.macro if p.macro != "auto" else "KL_CP_ASYNC"
    edits = []
    fns = [h.fn for h in helpers] + list(roles.values())
    first = min(fns, key=lambda f: f.outer.start_byte)
    at = _line_start(unit, first.outer.start_byte)
    edits.append(Edit(at, at, f"#if {_switch_guard(p)}\n#define {macro} 1\n#else\n"
                              f"#define {macro} 0\n#endif\n\n"))
    for h in helpers:
        ind = line_indent(unit, h.stmt.start_byte)
        start = _line_start(unit, h.stmt.start_byte)
        orig = unit.source[start:h.stmt.end_byte].decode("utf-8", "replace")
        body = "\n".join(ind + x for x in _asm_copy(h, unit, p.tmp).split("\n"))
        edits.append(Edit(start, h.stmt.end_byte, f"#if {macro}\n{body}\n#else\n{orig}\n#endif"))
    for role, f in roles.items():
        b = f.body.start_byte + 1
        ind = line_indent(unit, f.outer.start_byte) + "    "
        edits.append(Edit(b, b, f"\n#if {macro}\n{ind}{_ROLE_ASM[role](p)}\n#endif"))
    return edits


def _switch_options(unit, node, macro) -> dict:
    """The cp-async options that write the switch ``macro`` (whose block is ``node``) and
    its ``#if macro`` blocks back."""
    from kltrans.syntax.cuda import enclosing_function
    cond = unit.text(node.child_by_field_name("condition"))
    opts = {"form": "switch", "macro": macro,
            "paren": bool(re.search(r"\(\s*__CUDA_ARCH__\s*>=", cond))}
    emu = re.findall(r"!\s*defined\s*\(?\s*([A-Za-z_]\w*)", cond)
    if emu:
        opts["emu"] = "+".join(emu)
    copies = []
    blocks, _ = _macro_uses(unit, macro)
    for b in blocks:
        fn = enclosing_function(unit, b)
        if fn is None:
            continue
        body, _ = _branches(b)
        text = " ".join(unit.text(s) for s in body)
        if _CP_ASYNC.search(text):
            copies.append(fn.name)
            m = re.search(r"\b([A-Za-z_]\w*)\s*=\s*static_cast\s*<\s*unsigned\s*>\s*\(\s*"
                          r"__cvta_generic_to_shared", text)
            if m:
                opts["tmp"] = m.group(1)
        elif "commit_group" in text:
            opts["commit"] = fn.name
        elif "wait_group" in text:
            opts["wait"] = fn.name
            m = re.search(r'"n"\s*\(([^)]*(?:\([^)]*\))?[^)]*)\)', text)
            if m:
                opts["pending"] = re.sub(r"\s+", "", m.group(1))
        elif "wait_all" in text:
            opts["wait_all"] = fn.name
    if copies:
        opts["copies"] = "+".join(copies)
    return opts


# ------------------------------------------------------------------------ inverse
def _guard_tokens():
    u = parse(f"#if {GUARD}\n#endif\n".encode())
    n = u.nodes_of_type("preproc_if")[0]
    return u, n.child_by_field_name("condition")


_GU, _GN = _guard_tokens()


def _is_guard(unit, node) -> bool:
    c = node.child_by_field_name("condition")
    return c is not None and tokens(unit, c) == tokens(_GU, _GN)


def _branches(node):
    """(statements of the #if branch, the #else node or None)."""
    cond = node.child_by_field_name("condition")
    alt = node.child_by_field_name("alternative")
    body = [c for c in node.named_children
            if c.id != cond.id and (alt is None or c.id != alt.id) and c.type != "comment"]
    return body, alt


def _else_stmts(alt):
    if alt is None:
        return []
    return [c for c in alt.named_children if c.type != "comment"]


def _macro_block(unit, node):
    """The macro name when ``node`` is ``#if <arch test> #define M 1 #else #define M 0
    #endif`` at file scope, else None."""
    body, alt = _branches(node)
    if len(body) != 1 or body[0].type != "preproc_def" or alt is None or \
            alt.type != "preproc_else":
        return None
    other = _else_stmts(alt)
    if len(other) != 1 or other[0].type != "preproc_def":
        return None
    cond = unit.text(node.child_by_field_name("condition"))
    if "__CUDA_ARCH__" not in cond:
        return None
    name = unit.text(body[0].child_by_field_name("name"))
    if unit.text(other[0].child_by_field_name("name")) != name:
        return None
    v1 = norm(unit.text(body[0].child_by_field_name("value") or body[0]))
    v0 = norm(unit.text(other[0].child_by_field_name("value") or other[0]))
    if v1 != "1" or v0 != "0":
        return None
    return name


def _macro_uses(unit, name):
    """(``#if NAME`` blocks, other uses of NAME)."""
    blocks, other = [], []
    for n in unit.walk(unit.root):
        if n.type == "identifier" and unit.text(n) == name:
            p = n.parent
            if p is not None and p.type == "preproc_if" and \
                    p.child_by_field_name("condition").id == n.id:
                blocks.append(p)
            elif p is not None and p.type == "preproc_def":
                continue
            else:
                other.append(n)
    return blocks, other


@dataclass
class _Target:
    kind: str  # "group" (written by cp-async) | "macro" (a hand-written cp.async switch)
    node: object
    macro: str = ""


def _target(site):
    unit, node = site.unit, site.node
    name = _macro_block(unit, node)
    if name:
        return _Target("macro", node, name)
    if _is_guard(unit, node):
        return _Target("group", node)
    return None


def _async_form(site, ctx) -> Verdict:
    unit = site.unit
    t = _target(site)
    if t is None:
        return Verdict.no("not a cp-async block")
    if t.kind == "group":
        body, alt = _branches(t.node)
        stmts = _else_stmts(alt)
        if alt is None or alt.type != "preproc_else" or not stmts:
            return Verdict.no("the block has no #else branch with the synchronous copies")
        group = group_of(unit, stmts[0])
        if len(group) != len(stmts):
            return Verdict.no("the #else branch is not a run of copy statements")
        fn = enclosing_function(unit, t.node)
        want = async_lines(unit, fn, group)
        u2 = parse(("void __f() {\n" + "\n".join(want) + "\n}\n").encode())
        b2 = u2.root.named_children[0].child_by_field_name("body")
        got = tuple(x for s in body for x in tokens(unit, s))
        exp = tuple(x for s in b2.named_children if s.type != "comment"
                    for x in tokens(u2, s))
        if got != exp:
            return Verdict.no("the asynchronous branch is not what cp-async writes for the "
                              "copies of the #else branch")
        return Verdict.yes(f"{len(group)} cp.async copy(ies) with the same stores in #else, "
                           "committed and waited for in the block")
    blocks, other = _macro_uses(unit, t.macro)
    if other:
        n = other[0]
        return Verdict.no(f"{t.macro} is used outside `#if {t.macro}` (line "
                          f"{unit.line_col(n.start_byte)[0]})")
    if not blocks:
        return Verdict.no(f"{t.macro} guards no code")
    copies = 0
    for b in blocks:
        body, alt = _branches(b)
        line = unit.line_col(b.start_byte)[0]
        for s in body:
            if s.type == "expression_statement" and s.named_children and \
                    s.named_children[0].type == "gnu_asm_expression":
                text = unit.text(s)
                if _CP_ASYNC.search(text):
                    copies += 1
                    continue
                if _CP_SYNC.search(text):
                    continue
                return Verdict.no(f"`#if {t.macro}` (line {line}) holds inline PTX other "
                                  "than cp.async")
            if s.type == "declaration" and "__cvta_generic_to_shared" in unit.text(s):
                continue
            return Verdict.no(f"`#if {t.macro}` (line {line}) holds "
                              f"`{norm(unit.text(s))[:50]}`, not only cp.async copies")
    if not copies:
        return Verdict.no(f"`#if {t.macro}` blocks hold no cp.async copy")
    return Verdict.yes(f"{len(blocks)} `#if {t.macro}` block(s) hold only cp.async copies, "
                       "commits and waits")


def _sync_fallback(site, ctx) -> Verdict:
    unit = site.unit
    t = _target(site)
    if t is None:
        return Verdict.unknown("not a cp-async block")
    if t.kind == "group":
        return Verdict.yes("the #else branch holds the original stores")
    blocks, _ = _macro_uses(unit, t.macro)
    for b in blocks:
        body, alt = _branches(b)
        line = unit.line_col(b.start_byte)[0]
        has_copy = any(_CP_ASYNC.search(unit.text(s)) for s in body)
        other = _else_stmts(alt) if alt is not None and alt.type == "preproc_else" else []
        if alt is not None and alt.type != "preproc_else":
            return Verdict.no(f"`#if {t.macro}` (line {line}) has an #elif")
        if any(_CP_ASYNC_ANY.search(unit.text(s)) or "asm" in unit.text(s) for s in other):
            return Verdict.no(f"the #else of `#if {t.macro}` (line {line}) is not plain code")
        if has_copy:
            # the synchronous copy writes the destination the cp.async writes
            dsts = set()
            for s in body:
                m = re.search(r"__cvta_generic_to_shared\s*\(\s*([A-Za-z_]\w*)", unit.text(s))
                if m:
                    dsts.add(m.group(1))
            writes = [n for s in other for n in unit.walk(s) if n.type == "assignment_expression"]
            if not writes:
                return Verdict.no(f"`#if {t.macro}` (line {line}) copies asynchronously but "
                                  "its #else branch stores nothing")
            lhs = " ".join(unit.text(w.child_by_field_name("left")) for w in writes)
            if dsts and not any(re.search(rf"\b{re.escape(d)}\b", lhs) for d in dsts):
                return Verdict.no(f"the #else of `#if {t.macro}` (line {line}) does not store "
                                  f"to {', '.join(sorted(dsts))}")
        elif other:
            return Verdict.no(f"`#if {t.macro}` (line {line}) only commits or waits, yet its "
                              "#else branch does something")
    return Verdict.yes(f"every `#if {t.macro}` copy has its synchronous store in #else, "
                       "commits and waits have none (no copy is pending once all are plain)")


@dataclass(frozen=True)
class SyncCopy(Pass):
    """Make cp.async copies synchronous again: keep the plain stores of the fallback.

    Before::

        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800 && !defined(__KLTRANS_CPU_EMULATION__)
        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\\n" :: ... : "memory");
        asm volatile("cp.async.commit_group;\\n" ::: "memory");
        asm volatile("cp.async.wait_group 0;\\n" ::: "memory");
        #else
        Bs[ty][tx] = B[kb * N + col];
        #endif

    After ``sync-copy``::

        Bs[ty][tx] = B[kb * N + col];

    Two shapes are undone. (1) The blocks ``cp-async`` writes, recognized exactly: the
    ``#if`` branch must be what ``cp-async`` emits for the copies of the ``#else``
    branch. (2) A hand-written switch as in corpus/sgemm/expert.cu: a file-scope block
    ``#if <__CUDA_ARCH__ test> #define M 1 #else #define M 0 #endif`` whose macro M is
    only used as ``#if M`` around cp.async helpers; every ``#if M`` block is replaced by
    its ``#else`` branch (the synchronous copy that older targets and the CPU emulator
    already run), commit/wait blocks disappear, and the macro block goes. All blocks of
    the switch are rewritten together (one site), so a wait is never removed while a copy
    stays asynchronous. The inverse of shape (2) is ``cp-async{form=switch,...}`` with
    options that capture the switch's spelling (macro, guard, helpers, temporary, pending).

    Preconditions: async-form (pipeline: shape (1) exactly, or for shape (2) every
    ``#if M`` block holds only cp.async copies, commits, waits and the
    ``__cvta_generic_to_shared`` declarations feeding them, and M is used nowhere else),
    sync-fallback (storage: every asynchronous copy has a synchronous store to the same
    destination in its ``#else`` branch; blocks that only commit or wait have no
    ``#else``).

    Options: none.
    """

    name = "sync-copy"
    kind = "simplify"
    inverse = "cp-async"
    scope = "any"
    anchor = Rule(kind="preproc_if")
    preconditions = (
        Precondition("async-form", "pipeline",
                     "cp.async blocks as cp-async writes them, or an arch switch macro "
                     "guarding only cp.async helpers", _async_form),
        Precondition("sync-fallback", "storage",
                     "every asynchronous copy has its synchronous store in #else",
                     _sync_fallback),
    )

    def sites(self, unit, ctx):
        from kltrans.syntax.cuda import reachable_functions
        reach = reachable_functions(unit, ctx.kernel) if ctx.kernel else None
        out = []
        for m in self.anchor.find_all(unit):
            node = m.node
            fn = enclosing_function(unit, node)
            if ctx.kernel and fn is not None and fn.name not in reach:
                continue
            if fn is not None and _is_guard(unit, node) and not _macro_block(unit, node):
                out.append(Site(unit, m, fn, len(out) + 1, self))
            elif fn is None and _macro_block(unit, node) and \
                    any(_CP_ASYNC_ANY.search(unit.text(b)) and _reached(unit, b, reach)
                        for b in _macro_uses(unit, _macro_block(unit, node))[0]):
                out.append(Site(unit, m, fn, len(out) + 1, self))
        return out

    def rewrite(self, site, ctx):
        unit = site.unit
        t = _target(site)
        if t.kind == "group":
            return [_keep_else(unit, t.node)]
        blocks, _ = _macro_uses(unit, t.macro)
        edits = [_keep_else(unit, b) for b in blocks]
        edits.append(_delete_lines(unit, t.node))
        return edits

    def inverse_for(self, site, ctx):
        t = _target(site)
        if t is not None and t.kind == "macro":
            return CpAsync(**_switch_options(site.unit, t.node, t.macro))
        return CpAsync()


def _reached(unit, node, reach) -> bool:
    """``node`` is in a function the kernel of the context reaches (any, without one)."""
    if reach is None:
        return True
    fn = enclosing_function(unit, node)
    return fn is not None and fn.name in reach


def _delete_lines(unit, node) -> Edit:
    start = _line_start(unit, node.start_byte)
    end = node.end_byte
    if unit.source[end:end + 1] == b"\n":
        end += 1
    return Edit.delete(start, end)


def _keep_else(unit, node) -> Edit:
    """Replace a ``#if`` block by the statements of its ``#else`` branch (whole lines)."""
    _, alt = _branches(node)
    stmts = _else_stmts(alt) if alt is not None else []
    if not stmts:
        return _delete_lines(unit, node)
    start = _line_start(unit, node.start_byte)
    first = _line_start(unit, stmts[0].start_byte)
    text = unit.source[first:stmts[-1].end_byte].decode("utf-8", "replace")
    return Edit(start, node.end_byte, text)
