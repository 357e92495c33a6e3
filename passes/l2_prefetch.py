"""L2 bulk prefetch: ``l2-prefetch`` (optimize) and its inverse ``drop-l2-prefetch``
(simplify).

On sm_90 the bulk-copy engine can pull a contiguous global range into L2 with one
instruction (``cp.async.bulk.prefetch.L2.global [addr], bytes``: addr and bytes multiples
of 16). A block that streams a contiguous range asks for the range of the block AHEAD
blocks (or tiles) later, so DRAM keeps streaming while blocks stall. The prefetch changes
no value: it is guarded by ``#if __CUDA_ARCH__ >= 900`` (and off under the CPU emulator)
and by the bounds, so it is a pure performance hint.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.pattern import tokens
from kltrans.passes import Bool, Choice, Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.passes.facts import arch_number
from kltrans.passes.options import Domain
from kltrans.syntax import Edit

ARCH_GUARD = ("defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && "
              "!defined(__KLTRANS_CPU_EMULATION__)")
PTX = '"cp.async.bulk.prefetch.L2.global [%0], %1;"'
_IDENT = re.compile(r"[A-Za-z_]\w*")
_BUILTINS = {"threadIdx", "blockIdx", "blockDim", "gridDim", "x", "y", "z", "sizeof",
             "size_t", "long", "int", "unsigned", "short", "char", "ptrdiff_t", "uintptr_t",
             "const"}
_ITYPES = ("size_t", "long long", "int", "unsigned int", "ptrdiff_t")
#: spellings of the 1-D global index of an element-per-thread kernel (token-joined)
_GLOBAL_INDEX = {
    "blockIdx . x * blockDim . x + threadIdx . x",
    "blockDim . x * blockIdx . x + threadIdx . x",
    "threadIdx . x + blockIdx . x * blockDim . x",
    "threadIdx . x + blockDim . x * blockIdx . x",
}


class Expr(Domain):
    """A C expression (no braces, semicolons or commas at the top level), or ``auto``."""

    def parse(self, text: str) -> str:
        return self.check(text.strip())

    def contains(self, value) -> bool:
        if not isinstance(value, str) or not value.strip() or re.search(r"[{};]", value):
            return False
        depth = 0
        for ch in value:
            depth += ch == "("
            depth -= ch == ")"
            if depth < 0 or (ch == "," and depth == 0):
                return False
        return depth == 0

    def describe(self) -> str:
        return "auto, or a C expression (quote it in a pipeline: base='tile * TILE')"

    def values(self) -> list:
        return ["auto"]


# ----------------------------------------------------------------------- helpers
def _toks(unit, node) -> str:
    return " ".join(t for _, t in tokens(unit, node))


_LEX = re.compile(r'"(?:[^"\\\n]|\\.)*"|#\s*\w+|[A-Za-z_]\w*|\d[\w.]*|::|<=|>=|==|!=|&&|\|\||<<|>>|->|\S')


def _norm(text: str) -> str:
    """Token-join C text (comments removed, a string literal is one token)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", text, flags=re.S)
    return " ".join(re.sub(r"#\s*", "#", t) for t in _LEX.findall(text))


def _detok(text: str) -> str:
    """Readable C from token-joined text (``( size_t ) a . b`` -> ``(size_t)a.b``)."""
    t = re.sub(r" ?(\.|->) ?", r"\1", text)
    t = re.sub(r"\( ", "(", t)
    t = re.sub(r" \)", ")", t)
    t = re.sub(r" ,", ",", t)
    t = re.sub(r"\b(sizeof) \(", r"\1(", t)
    t = re.sub(r"\((%s)\) " % "|".join(map(re.escape, _ITYPES + ("uintptr_t", "unsigned long long"))),
               r"(\1)", t)
    return t


def _body(site):
    return site.function.node.child_by_field_name("body")


def _prefetch_blocks(unit, node):
    return [n for n in unit.nodes_of_type("preproc_if", within=node)
            if "cp.async.bulk.prefetch.L2" in unit.text(n)]


def _pointee(param) -> str:
    t = re.sub(r"\b(const|volatile|__restrict__|__restrict)\b", " ", param.type)
    return re.sub(r"\s+", " ", t.replace("*", " ")).strip()


def _decl_stmt(unit, body, name):
    """The top-level declaration statement of ``body`` declaring ``name``."""
    for st in body.named_children:
        if st.type != "declaration":
            continue
        for d in st.children_by_field_name("declarator"):
            n = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            if n is not None and unit.text(n) == name:
                return st
    return None


def _read_arrays(site):
    unit, body = site.unit, _body(site)
    return [p.name for p in site.function.params if p.pointer == 1 and p.const and p.name
            and re.search(r"\b%s\s*\[" % re.escape(p.name), unit.text(body))]


def _auto(site):
    """(options derived from the element-per-thread idiom, or None, why)."""
    unit = site.unit
    body = _body(site)
    idx = None
    for st in body.named_children:
        if st.type != "declaration":
            continue
        for d in st.children_by_field_name("declarator"):
            if d.type == "init_declarator" and \
                    _toks(unit, d.child_by_field_name("value")) in _GLOBAL_INDEX:
                idx = unit.text(d.child_by_field_name("declarator"))
                break
        if idx:
            break
    if idx is None:
        return None, ("no element index `i = blockIdx.x * blockDim.x + threadIdx.x` at the top "
                      "of the kernel: give base=, len=, limit= and after=")
    m = re.search(r"\b%s\s*(?:<|>=)\s*([A-Za-z_]\w*)" % re.escape(idx), unit.text(body))
    if m is None:
        return None, f"no bound `{idx} < n` on the element index"
    return {"form": "index", "base": "blockIdx.x", "len": "blockDim.x", "limit": m.group(1),
            "after": idx}, ""


def _config(site):
    """The pass options with ``auto`` resolved: (dict or None, why)."""
    p = site.pass_
    opts = {"array": p.array, "form": p.form, "base": p.base, "len": p.len,
            "limit": p.limit, "after": p.after}
    if any(opts[k] == "auto" for k in ("form", "base", "len", "limit", "after")):
        auto, why = _auto(site)
        if auto is None:
            return None, why
        opts = {k: (auto[k] if v == "auto" and k in auto else v) for k, v in opts.items()}
    if opts["array"] == "auto":
        arrays = _read_arrays(site)
        if not arrays:
            return None, "no const pointer parameter read by subscript: give array="
        opts["array"] = arrays[0]
    par = next((q for q in site.function.params if q.name == opts["array"]), None)
    if par is None or par.pointer != 1:
        return None, f"{opts['array']} is not a pointer parameter of {site.function.name}"
    opts["elem"] = p.elem if p.elem != "auto" else _pointee(par)
    return opts, ""


def _render(p, c, indent: str) -> str:
    it, var, a = p.itype, p.var, c["array"]
    if c["form"] == "offset":
        start = f"{c['base']} + ({it}){p.ahead} * {c['len']}"
    else:
        start = f"(({it}){c['base']} + {p.ahead}) * {c['len']}"
    if p.stride == "1":
        addr, nbytes = f"{a} + {var}", f"{c['len']} * sizeof({c['elem']})"
    else:
        addr = f"{a} + (size_t){var} * (size_t){p.stride}"
        nbytes = f"{c['len']} * {p.stride} * sizeof({c['elem']})"
    guard = "" if p.guard == "none" else f" && {p.guard}"
    align = f" && ((uintptr_t){a} & 15u) == 0" if p.align else ""
    i2, i3 = indent + "    ", indent + "        "
    return (f"#if {ARCH_GUARD}\n"
            f"{indent}if (threadIdx.x == 0{guard}) {{\n"
            f"{i2}const {it} {var} = {start};\n"
            f"{i2}if ({var} + {c['len']} <= {c['limit']}{align}) {{\n"
            f"{i3}asm volatile({PTX}\n"
            f"{i3}             :: \"l\"({addr}), \"r\"((unsigned int)({nbytes})) : \"memory\");\n"
            f"{i2}}}\n"
            f"{indent}}}\n"
            f"#endif")


def _env(unit, ctx) -> dict:
    from kltrans.analysis.affine import unit_info
    from kltrans.syntax.contract import ContractError, evaluate

    env: dict = {}
    for name, defs in unit_info(unit).macros.items():
        if len(defs) == 1 and defs[0].params is None and defs[0].body:
            try:
                env[name] = evaluate(defs[0].body, env)
            except (ContractError, RecursionError, ValueError, SyntaxError):
                pass
    env.update(ctx.sizes)
    return env


def _block_size(site, ctx):
    from kltrans.syntax.contract import ContractError, contracts, evaluate

    try:
        c = contracts(site.unit).get(site.function.name)
        if c is None:
            return None
        dims = [evaluate(d, _env(site.unit, ctx)) for d in c.block]
        return dims[0]
    except (ContractError, RecursionError, ValueError, SyntaxError, KeyError):
        return None


_SIZES = {"char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1,
          "short": 2, "unsigned short": 2, "__half": 2, "half": 2, "__nv_bfloat16": 2,
          "int16_t": 2, "uint16_t": 2, "int": 4, "unsigned int": 4, "unsigned": 4,
          "float": 4, "int32_t": 4, "uint32_t": 4, "__half2": 4, "__nv_bfloat162": 4,
          "double": 8, "long long": 8, "unsigned long long": 8, "int64_t": 8,
          "uint64_t": 8, "float2": 8, "int2": 8, "float4": 16, "int4": 16, "uint4": 16}



_PLAIN = re.compile(r"[A-Za-z0-9_.+\-*/%]+")


def _spec(p) -> str:
    """``Pass.spec`` with values a pipeline cannot read bare (spaces, parentheses) quoted,
    so that the spec parses back (the lineage re-reads inverse specs)."""
    opts = p.options()
    if not opts:
        return p.name
    vals = []
    for o in opts:
        v = getattr(p, o.field)
        s = ("true" if v else "false") if isinstance(v, bool) else str(v)
        if not _PLAIN.fullmatch(s):
            s = f"'{s}'" if "'" not in s else f'"{s}"'
        vals.append(f"{o.name}={s}")
    return f"{p.name}{{{','.join(vals)}}}"

# ------------------------------------------------------------------ preconditions
def _no_prefetch(site, ctx) -> Verdict:
    if _prefetch_blocks(site.unit, site.function.node):
        return Verdict.no(f"{site.function.name} already has a cp.async.bulk.prefetch.L2")
    return Verdict.yes(f"{site.function.name} has no L2 bulk prefetch")


def _block_range(site, ctx) -> Verdict:
    c, why = _config(site)
    if c is None:
        return Verdict.unknown(why)
    unit, body = site.unit, _body(site)
    anchor = _decl_stmt(unit, body, c["after"])
    if anchor is None:
        return Verdict.no(f"after={c['after']}: no top-level declaration of {c['after']} in "
                          f"{site.function.name}")
    known = {q.name for q in site.function.params} | set(_env(unit, ctx)) | _BUILTINS
    for st in body.named_children:
        if st.start_byte > anchor.start_byte:
            break
        known |= set(_IDENT.findall(unit.text(st)))
    p = site.pass_
    names = set()
    for v in (c["base"], c["len"], c["limit"], p.stride, p.guard, str(p.ahead)):
        names |= set(_IDENT.findall(v)) - {"none"}
    missing = sorted(names - known)
    if missing:
        return Verdict.no(f"{', '.join(missing)} not declared before the prefetch point "
                          f"(after {c['after']})")
    shape = (f"{c['base']} + i * {c['len']}" if c["form"] == "offset"
             else f"({c['base']} + i) * {c['len']}")
    return Verdict.yes(f"block i reads {c['array']}[{shape} ...] (x{p.stride}), "
                       f"{c['limit']} in all; prefetch after {c['after']}")


def _read_array(site, ctx) -> Verdict:
    c, why = _config(site)
    if c is None:
        return Verdict.unknown(why)
    par = next(q for q in site.function.params if q.name == c["array"])
    if not par.const:
        return Verdict.no(f"{c['array']} is not a pointer to const: the kernel may write the "
                          f"range it would prefetch (a stale-line hint at best)")
    return Verdict.yes(f"{c['array']} is a read-only ({par.type}) input")


def _sixteen(site, ctx) -> Verdict:
    c, why = _config(site)
    if c is None:
        return Verdict.unknown(why)
    p = site.pass_
    size = _SIZES.get(c["elem"])
    if size is None:
        return Verdict.unknown(f"size of {c['elem']} not known")
    if p.align and not re.search(r"#\s*include\s*<(stdint\.h|cstdint)>", site.unit.text(
            site.unit.root)):
        return Verdict.no("the alignment guard uses uintptr_t but the file includes neither "
                          "<stdint.h> nor <cstdint>")
    from kltrans.syntax.contract import ContractError, evaluate

    env = dict(_env(site.unit, ctx))
    bs = _block_size(site, ctx)
    expr = c["len"].replace("blockDim.x", str(bs) if bs else "blockDim_x")
    if p.stride != "1":
        expr = f"({expr}) * ({p.stride})"
    try:
        n = evaluate(expr, env) * size
    except (ContractError, RecursionError, ValueError, SyntaxError, KeyError):
        n = None
    if n is not None:
        if n % 16:
            return Verdict.no(f"a block's range is {n} bytes, not a multiple of 16 (the bulk "
                              f"prefetch needs 16-byte sizes and addresses)")
        if not p.align and p.guard == "none":
            return Verdict.unknown(f"{n}-byte ranges, but nothing guards the 16-byte alignment "
                                   f"of {c['array']}: set align=true or guard=")
        return Verdict.yes(f"{n}-byte ranges (a multiple of 16); base alignment "
                           f"{'checked at run time' if p.align else 'by ' + p.guard}")
    # a run-time size: the guard must test the stride's divisibility and the alignment
    g = _decl_stmt(site.unit, _body(site), p.guard) if _IDENT.fullmatch(p.guard) else None
    gtext = re.sub(r"\s+", "", site.unit.text(g)) if g is not None else ""
    k = 16 // size if size < 16 else 1
    div = (k == 1 or f"({p.stride}&{k - 1})==0" in gtext or f"({p.stride}%{k})==0" in gtext)
    al = p.align or f"(uintptr_t){c['array']}" in gtext and "&15" in gtext
    if p.stride != "1" and div and al:
        return Verdict.yes(f"the guard {p.guard} tests {p.stride} % {k} == 0 and the 16-byte "
                           f"alignment of {c['array']}")
    return Verdict.unknown(f"the range size {expr} x {size} bytes is not a constant and no "
                           f"guard proves it a multiple of 16")


def _arch(site, ctx) -> Verdict:
    a = arch_number(ctx.arch)
    if a is not None and a < 90:
        return Verdict.no(f"{ctx.arch} has no bulk-copy engine: the #if would compile the "
                          f"prefetch out")
    return Verdict.yes("guarded by #if __CUDA_ARCH__ >= 900 (a no-op elsewhere)")


# ------------------------------------------------------------------------ passes
_EXPR = Expr()


@dataclass(frozen=True)
class L2Prefetch(Pass):
    """Prefetch into L2, with one bulk copy, the input range of the block AHEAD blocks later.

    Before::

        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i];

    After ``l2-prefetch{ahead=8}``::

        int i = blockIdx.x * blockDim.x + threadIdx.x;
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(__KLTRANS_CPU_EMULATION__)
        if (threadIdx.x == 0) {
            const size_t ahead = ((size_t)blockIdx.x + 8) * blockDim.x;
            if (ahead + blockDim.x <= n && ((uintptr_t)x & 15u) == 0) {
                asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
                             :: "l"(x + ahead), "r"((unsigned int)(blockDim.x * sizeof(float))) : "memory");
            }
        }
        #endif

    Block (or tile) ``b`` reads ``array[start(b) .. start(b) + len)`` (times ``stride``
    elements per unit): ``form=index`` writes ``start(b + ahead) = (base + ahead) * len``
    (``base`` the block index), ``form=offset`` writes ``base + ahead * len`` (``base`` the
    block's first unit, e.g. ``tile_base``). The ``auto`` options read the
    element-per-thread idiom (``i = blockIdx.x * blockDim.x + threadIdx.x``, bound
    ``i < n``, first const pointer parameter read). The block goes after the declaration
    of ``after``.

    Guards vs context: the range bound (``ahead + len <= limit``) and the base address
    alignment (``align=true``: ``((uintptr_t)array & 15u) == 0``) are run-time guards; a
    ``guard=NAME`` condition is ANDed to the thread-0 test. The 16-byte size of a range is
    checked statically (constant length) or must be tested by ``guard`` (stride % (16 /
    sizeof) and alignment, e.g. a ``vec_ok`` flag).

    Preconditions: no-prefetch (pipeline: the kernel has no bulk L2 prefetch yet),
    block-range (layout: the block's contiguous range is known and every name it uses is
    declared before the prefetch point), read-only-array (storage: the prefetched array is
    a pointer to const), sixteen-byte-range (dtype: range size a multiple of 16 bytes and
    aligned base), bulk-prefetch-arch (hardware: not a target below sm_90, where the
    ``#if`` would compile it out).

    Options: ``ahead`` (1..1024 or a macro name; default 8), ``array``, ``form``
    (index/offset), ``base``, ``len``, ``limit``, ``after`` (auto), ``stride`` (default 1:
    elements per unit), ``elem`` (auto: the pointee type), ``itype`` (type of the ahead
    index), ``var`` (its name), ``guard`` (none or a condition), ``align`` (true).
    """

    name = "l2-prefetch"
    kind = "optimize"
    inverse = "drop-l2-prefetch"
    anchor = Rule(kind="function_definition")
    preconditions = (
        Precondition("no-prefetch", "pipeline", "the kernel has no L2 bulk prefetch yet",
                     _no_prefetch),
        Precondition("block-range", "layout",
                     "the block's contiguous input range is known and in scope", _block_range),
        Precondition("read-only-array", "storage", "the prefetched array is read-only",
                     _read_array),
        Precondition("sixteen-byte-range", "dtype",
                     "ranges are 16-byte sized and aligned (static or guarded)", _sixteen),
        Precondition("bulk-prefetch-arch", "hardware",
                     "the target may be sm_90 or newer", _arch),
    )

    ahead: int | str = option(8, OneOf(IntRange(1, 1024, (2, 8, 32, 132)), Identifier(words=())),
                              "blocks (tiles) ahead to prefetch", tune=True)
    array: str = option("auto", Identifier(), "the input array (pointer parameter)")
    form: str = option("auto", Choice("auto", "index", "offset"),
                       "index: (base + ahead) * len; offset: base + ahead * len")
    base: str = option("auto", _EXPR, "block index (form=index) or first unit (offset)")
    len: str = option("auto", _EXPR, "units per block")
    limit: str = option("auto", _EXPR, "units in all (the bound)")
    after: str = option("auto", Identifier(), "insert after this local's declaration")
    stride: str = option("1", _EXPR, "elements per unit (a row length)")
    elem: str = option("auto", _EXPR, "element type in sizeof (auto: the pointee)")
    itype: str = option("size_t", Choice(*_ITYPES), "type of the ahead index")
    var: str = option("ahead", Identifier(words=()), "name of the ahead index")
    guard: str = option("none", _EXPR, "extra condition of the thread-0 test (none)")
    align: bool = option(True, Bool(), "emit the 16-byte alignment test of the base")

    def rewrite(self, site, ctx):
        c, _ = _config(site)
        unit, body = site.unit, _body(site)
        anchor = _decl_stmt(unit, body, c["after"])
        line = unit.text(anchor)
        start = unit.source.rfind(b"\n", 0, anchor.start_byte) + 1
        indent = unit.source[start:anchor.start_byte].decode()
        indent = indent if not indent.strip() else "    "
        del line
        return [Edit.insert(anchor.end_byte, "\n" + _render(self, c, indent))]

    def spec(self) -> str:
        return _spec(self)

    def inverse_for(self, site, ctx):
        return DropL2Prefetch()


# ----------------------------------------------------------------------- inverse
_SHAPE = re.compile(
    r"^if \( threadIdx \. x == 0 (?:&& (?P<guard>.+?) )?\) \{ "
    r"const (?P<itype>[a-z_ ]+?) (?P<var>\w+) = (?P<start>.+?) ; "
    r"if \( (?P=var) \+ (?P<len>.+?) <= (?P<limit>.+?)"
    r"(?P<align> && \( \( uintptr_t \) (?P<aarr>\w+) & 15u \) == 0)? \) \{ "
    r"asm volatile \( " + re.escape(PTX) + r" :: \"l\" \( (?P<addr>.+?) \) , "
    r"\"r\" \( \( unsigned int \) \( (?P<bytes>.+?) \) \) : \"memory\" \) ; \} \} "
    r"#endif$")


def _parse(unit, node):
    """(options of l2-prefetch that write ``node`` back, or None, why)."""
    raw = unit.text(node)
    first, _, rest = raw.partition("\n")
    cond = re.sub(r"^#\s*if\b", "", first.strip())
    text = _norm(rest)
    m = _SHAPE.match(text)
    if m is None:
        return None, "not the guarded form `if (threadIdx.x == 0) { const T ahead = ...; " \
                     "if (ahead + len <= limit) asm volatile(...prefetch...); }`"
    if _norm(cond) != _norm(ARCH_GUARD):
        return None, f"the #if condition is not `{ARCH_GUARD}`"
    if m["itype"] not in _ITYPES:
        return None, f"index type {m['itype']} is not one of {', '.join(_ITYPES)}"
    var, ln = m["var"], m["len"]
    it = re.escape(m["itype"].replace(" ", " "))
    sm = re.fullmatch(r"(?P<base>.+?) \+ \( %s \) (?P<ahead>\w+) \* %s" % (it, re.escape(ln)),
                      m["start"])
    form = "offset"
    if sm is None:
        sm = re.fullmatch(r"\( \( %s \) (?P<base>.+?) \+ (?P<ahead>\w+) \) \* %s"
                          % (it, re.escape(ln)), m["start"])
        form = "index"
    if sm is None:
        return None, f"ahead index `{m['start']}` is neither base + (T)AHEAD * len nor " \
                     f"((T)block + AHEAD) * len"
    am = re.fullmatch(r"(?P<arr>\w+) \+ %s" % var, m["addr"])
    stride = "1"
    if am is None:
        am = re.fullmatch(r"(?P<arr>\w+) \+ \( size_t \) %s \* \( size_t \) (?P<stride>.+)"
                          % var, m["addr"])
        if am is None:
            return None, f"address `{m['addr']}` is neither a + ahead nor a + (size_t)ahead * " \
                         f"(size_t)stride"
        stride = am["stride"]
    arr = am["arr"]
    if m["aarr"] and m["aarr"] != arr:
        return None, f"the alignment test is on {m['aarr']}, the prefetch on {arr}"
    mid = "" if stride == "1" else re.escape(stride) + r" \* "
    bm = re.fullmatch(r"%s \* %ssizeof \( (?P<elem>.+) \)" % (re.escape(ln), mid), m["bytes"])
    if bm is None:
        return None, f"byte count `{m['bytes']}` is not len * {'' if stride == '1' else 'stride * '}" \
                     f"sizeof(T)"
    ahead = sm["ahead"]
    if not (ahead.isdigit() and 1 <= int(ahead) <= 1024 or _IDENT.fullmatch(ahead)):
        return None, f"ahead {ahead} is neither 1..1024 nor a name"
    return {"ahead": int(ahead) if ahead.isdigit() else ahead, "array": arr, "form": form,
            "base": _detok(sm["base"]), "len": _detok(ln), "limit": _detok(m["limit"]),
            "stride": _detok(stride), "elem": _detok(bm["elem"]), "itype": m["itype"],
            "var": var, "guard": _detok(m["guard"]) if m["guard"] else "none",
            "align": bool(m["align"])}, ""


def _previous_decl(unit, node):
    prev = node.prev_named_sibling
    while prev is not None and prev.type == "comment":
        prev = prev.prev_named_sibling
    if prev is None or prev.type != "declaration":
        return None
    names = []
    for d in prev.children_by_field_name("declarator"):
        n = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        if n is not None and n.type == "identifier":
            names.append(unit.text(n))
    return names[-1] if len(names) == 1 else None


def _prefetch_only(site, ctx) -> Verdict:
    unit, n = site.unit, site.node
    text = unit.text(n)
    if "cp.async.bulk.prefetch.L2" not in text:
        return Verdict.no("the #if block has no cp.async.bulk.prefetch.L2")
    if "__CUDA_ARCH__" not in unit.text(n.child_by_field_name("condition") or n):
        return Verdict.no("the #if does not test __CUDA_ARCH__: the block may be the only "
                          "code path on some target")
    asms = re.findall(r'asm\s*(?:volatile\s*)?\(\s*"([^"]*)"', text)
    if any("cp.async.bulk.prefetch.L2" not in a for a in asms):
        return Verdict.no("the #if block has other inline assembly than the L2 prefetch")
    if re.search(r"(?<![=!<>+\-*/%&|^])=(?!=)", re.sub(r"\bconst\s+[\w ]+?\w+\s*=", "", text)) \
            or "__syncthreads" in text or re.search(r"\bif\b.*\belse\b", text, re.S):
        return Verdict.no("the #if block does more than compute a local address and prefetch "
                          "(an assignment, a barrier or an else branch)")
    return Verdict.yes("an sm_90-only L2 bulk prefetch: a hint that changes no value")


def _restorable(site, ctx) -> Verdict:
    opts, why = _parse(site.unit, site.node)
    if opts is None:
        return Verdict.no(why)
    after = _previous_decl(site.unit, site.node)
    if after is None:
        return Verdict.no("the #if block does not follow a one-name declaration: l2-prefetch "
                          "could not put it back in the same place")
    return Verdict.yes(f"l2-prefetch{{ahead={opts['ahead']},form={opts['form']},after={after}}} "
                       f"writes it back")


@dataclass(frozen=True)
class DropL2Prefetch(Pass):
    """Remove an sm_90 L2 bulk prefetch block (``cp.async.bulk.prefetch.L2`` under ``#if``).

    Before::

        const bool vec_ok = ...;
        #if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && !defined(__KLTRANS_CPU_EMULATION__)
        if (threadIdx.x == 0) {
            const size_t ahead = tile_base + (size_t)PREFETCH * TILE;
            if (ahead + TILE <= count && ((uintptr_t)in & 15u) == 0) {
                asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;"
                             :: "l"(in + ahead), "r"((unsigned int)(TILE * sizeof(int))) : "memory");
            }
        }
        #endif

    After ``drop-l2-prefetch``::

        const bool vec_ok = ...;

    The prefetch is a cache hint: no value changes. Comments above the block stay.

    Preconditions: prefetch-only (pipeline: the ``#if`` tests ``__CUDA_ARCH__`` and holds
    only the prefetch: no other asm, assignment, barrier or else branch), restorable
    (layout: the block is in the form ``l2-prefetch`` writes, right after a one-name
    declaration).

    Options: none (``inverse_for`` gives ``l2-prefetch`` with every spelling captured:
    ahead, array, form, base, len, limit, stride, elem, itype, var, guard, align, after).
    """

    name = "drop-l2-prefetch"
    kind = "simplify"
    inverse = "l2-prefetch"
    anchor = Rule(kind="preproc_if")
    preconditions = (
        Precondition("prefetch-only", "pipeline",
                     "the #if block is an sm_90 L2 prefetch and nothing else", _prefetch_only),
        Precondition("restorable", "layout",
                     "the block has the form l2-prefetch writes", _restorable),
    )

    def rewrite(self, site, ctx):
        unit, n = site.unit, site.node
        src = unit.source
        start = src.rfind(b"\n", 0, n.start_byte)
        end = n.end_byte
        if src[end - 1:end] == b"\n":
            end -= 1
        return [Edit.delete(start, end)]

    def inverse_for(self, site, ctx):
        opts, _ = _parse(site.unit, site.node)
        return L2Prefetch(after=_previous_decl(site.unit, site.node), **opts)
