"""16-byte packed bf16 path of a strided bf16 loop: ``vectorize-bf16`` (optimize) and
``scalarize-bf16`` (simplify).

A *strided bf16 loop* reads bf16 arrays element by element, each element only through
``__bfloat162float(A[i])``, each thread starting at its own offset and all threads striding
together. It is either a *map*, whose last statement stores one bf16 element::

    for (int c = gt; c < cols; c += G) {
        const float a = (__bfloat162float(xr[c]) - mu) * rs * __bfloat162float(weight[c]);
        yr[c] = __float2bfloat16(a);
    }

or a *reduction*, which stores nothing to memory and folds the elements into registers::

    for (int c = gt; c < cols; c += G) {
        const float d = __bfloat162float(xr[c]) - shift;
        s1 += d;
    }

``vectorize-bf16`` puts a packed path in front of it, taken when a run-time flag says the
length is a multiple of 8 and the pointers are 16-byte aligned: the same threads stride
over 16-byte chunks (``uint4``, 8 bf16), unpack each chunk into 8 floats with a bf16
unpack helper of the file, apply the body per element and (map) pack pairs back with
``__floats2bfloat162_rn`` into one 16-byte store. The scalar loop stays as the fallback.
``scalarize-bf16`` drops the packed path again when it is exactly the packed form of its
fallback (it reads the names and spellings from it, regenerates it and compares).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Bool, Choice, Identifier, IntRange, OneOf, Pass, Precondition, option
from kltrans.passes.options import Domain, DomainError
from kltrans.syntax import Edit
from kltrans.passes.rewrite import (
    indent_of as line_indent, norm, shift, splice, statements, unshift)
from kltrans.match.predicates import PURE_CALLS as _PURE
from kltrans.match.predicates import pure as _pure
from kltrans.passes.vector_facts import (
    aligned_roots as _aligned_roots, assigned as _assigned, block_indent_step as _indent_step,
    declaration as _declaration, divisible_lens as _divisible_lens, flat as _flat,
    idents as _idents, is_pointer as _is_pointer, multiple as _multiple, root as _root,
    strip as _strip)
from kltrans.passes.vector_facts import (
    GLOBAL_ID_TEXTS as _GLOBAL_IDS, GRID_STRIDE_TEXTS as _GRID, resolve_const as _resolve,
    subscript_index as _sub_index)
from kltrans.passes.helper_forms import device_functions as _functions, unpack_helper

BF16 = ("__nv_bfloat16", "nv_bfloat16")
_TO_FLOAT = "__bfloat162float"
_TO_BF16 = "__float2bfloat16"
_JUMPS = ("break_statement", "continue_statement", "return_statement", "goto_statement")


# ================================================================== option domains
class NameList(Domain):
    """``auto``, or C identifiers joined by ``+`` (one per array the loop reads)."""

    _ID = re.compile(r"[A-Za-z_]\w*")

    def parse(self, text: str) -> str:
        if not self.contains(text):
            raise DomainError(f"{text!r} is not {self.describe()}")
        return text

    def contains(self, value) -> bool:
        return isinstance(value, str) and (value == "auto" or all(
            self._ID.fullmatch(p) for p in value.split("+")))

    def describe(self) -> str:
        return "auto, or identifiers joined by + (f+w+b)"

    def values(self) -> list:
        return ["auto"]


class HelperName(Domain):
    """``auto``, or a function name with an optional integer template argument."""

    _RX = re.compile(r"[A-Za-z_]\w*(<\d+>)?")

    def parse(self, text: str) -> str:
        if not self.contains(text):
            raise DomainError(f"{text!r} is not {self.describe()}")
        return text

    def contains(self, value) -> bool:
        return isinstance(value, str) and (value == "auto" or bool(self._RX.fullmatch(value)))

    def describe(self) -> str:
        return "auto, or a function name NAME or NAME<K>"

    def values(self) -> list:
        return ["auto"]


# ================================================================ the scalar loop
@dataclass
class Bf16Loop:
    loop: object
    var: str
    vtype: str
    start: str
    bound: str
    step: str
    kind: str  # map | reduce
    arrays: list  # the arrays read, in order of first read
    reads: list  # (the __bfloat162float(A[i]) call node, A)
    body: object  # the loop body (compound statement)
    dst: str | None = None  # map: Y
    value: object = None  # map: E


def _call_name(unit, node) -> str:
    f = node.child_by_field_name("function")
    return unit.text(f) if f is not None else ""


def _call_args(node) -> list:
    a = node.child_by_field_name("arguments")
    return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def _elem(unit, node, var):
    """``A`` when ``node`` is the element ``A[var]`` of an identifier A, else None."""
    n = _strip(node)
    if n is None or n.type != "subscript_expression":
        return None
    a = _strip(n.child_by_field_name("argument"))
    idx = _sub_index(n)
    if a is None or a.type != "identifier" or idx is None or norm(unit.text(idx)) != var:
        return None
    return unit.text(a)


def bf16_loop(unit, loop) -> "Bf16Loop | str":
    if loop is None or loop.type != "for_statement":
        return "not a for loop"
    init = loop.child_by_field_name("initializer")
    cond = loop.child_by_field_name("condition")
    upd = loop.child_by_field_name("update")
    if init is None or init.type != "declaration" or cond is None or upd is None:
        return "the loop is not `for (T i = S; i < N; i += STEP)`"
    decls = init.children_by_field_name("declarator")
    if len(decls) != 1 or decls[0].type != "init_declarator":
        return "the loop declares more than one variable"
    var = unit.text(decls[0].child_by_field_name("declarator"))
    start = norm(unit.text(decls[0].child_by_field_name("value")))
    vtype = norm(unit.text(init.child_by_field_name("type")))
    c = _strip(cond)
    if c.type != "binary_expression" or unit.text(c.child_by_field_name("operator")) != "<" \
            or norm(unit.text(c.child_by_field_name("left"))) != var:
        return f"the condition is not `{var} < N`"
    bound = c.child_by_field_name("right")
    u = _strip(upd)
    if u.type != "assignment_expression" or unit.text(u.child_by_field_name("operator")) != "+=" \
            or norm(unit.text(u.child_by_field_name("left"))) != var:
        return f"the update is not `{var} += STEP`"
    step = u.child_by_field_name("right")
    for part in (bound, step):
        if _idents(unit, part, var) or not _pure(unit, part):
            return f"`{norm(unit.text(part))}` is not loop-invariant"
    body = loop.child_by_field_name("body")
    if body is None or body.type != "compound_statement":
        return "the body is not a block"
    stmts = [s for s in statements(body) if s.type != "comment"]
    if not stmts:
        return "the body is empty"
    for n in unit.walk(body):
        if n.type in _JUMPS:
            return f"the body has a `{unit.text(n).split()[0].rstrip(';')}`"
    # the store (map): the last statement `Y[i] = __float2bfloat16(E);`
    kind, dst, value, store = "reduce", None, None, None
    last = stmts[-1]
    e = None
    if last.type == "expression_statement":
        inner = [x for x in last.named_children if x.type != "comment"]
        e = inner[0] if len(inner) == 1 else None
    if e is not None and e.type == "assignment_expression" and \
            unit.text(e.child_by_field_name("operator")) == "=" and \
            _elem(unit, e.child_by_field_name("left"), var) is not None:
        rhs = _strip(e.child_by_field_name("right"))
        if rhs.type != "call_expression" or _call_name(unit, rhs) != _TO_BF16 or \
                len(_call_args(rhs)) != 1:
            return f"the store's value is not `{_TO_BF16}(E)`"
        kind, dst, store = "map", _elem(unit, e.child_by_field_name("left"), var), e
        value = _call_args(rhs)[0]
        if len(stmts) == 2:  # `const float a = E; Y[i] = __float2bfloat16(a);`
            d = stmts[0]
            ds = d.children_by_field_name("declarator") if d.type == "declaration" else []
            if len(ds) != 1 or ds[0].type != "init_declarator" or \
                    norm(unit.text(d.child_by_field_name("type"))) != "float" or \
                    "const" not in unit.text(d).split("float")[0] or \
                    norm(unit.text(value)) != unit.text(ds[0].child_by_field_name("declarator")):
                return ("a map body is `Y[i] = __float2bfloat16(E);` or `const float a = E; "
                        "Y[i] = __float2bfloat16(a);`")
            value = ds[0].child_by_field_name("value")
        elif len(stmts) != 1:
            return ("a map body is `Y[i] = __float2bfloat16(E);` or `const float a = E; "
                    "Y[i] = __float2bfloat16(a);`")
    reads, arrays = [], []
    store_lhs = _strip(store.child_by_field_name("left")) if store is not None else None
    for n in unit.walk(body):
        if n.type == "subscript_expression" and (store_lhs is None or n.id != store_lhs.id):
            a = _elem(unit, n, var)
            p = n.parent
            while p is not None and p.type == "parenthesized_expression":
                p = p.parent
            args = p if p is not None and p.type == "argument_list" else None
            if a is None or args is None or _call_name(unit, args.parent) != _TO_FLOAT:
                if _idents(unit, n, var):
                    return f"`{norm(unit.text(n))}` is not read as `{_TO_FLOAT}(A[{var}])`"
                continue
            reads.append((args.parent, a))
            if a not in arrays:
                arrays.append(a)
    if not reads:
        return f"the loop reads no element `{_TO_FLOAT}(A[{var}])`"
    cover = [r.id for r, _ in reads] + ([store_lhs.id] if store_lhs is not None else [])
    for n in _idents(unit, body, var):
        p = n.parent
        while p is not None and p.id not in cover and p.id != body.id:
            p = p.parent
        if p is None or p.id not in cover:
            return f"the body uses `{var}` outside the element reads"
    if kind == "map":
        for r, _ in reads:
            if not (value.start_byte <= r.start_byte and r.end_byte <= value.end_byte):
                return "a map body reads elements outside its stored value"
    return Bf16Loop(loop, var, vtype, start, norm(unit.text(bound)), norm(unit.text(step)), kind,
                    arrays, reads, body, dst, value)


# ================================================================= the unpack helper


def auto_helper(unit) -> str | None:
    for fn in _functions(unit):
        for k in (None, 0, 1, 2, 3):
            spec = fn.name if k is None else f"{fn.name}<{k}>"
            if unpack_helper(unit, spec) is None:
                return spec
    return None


# ===================================================================== rendering
def _p(text: str) -> str:
    return text if re.fullmatch(r"[A-Za-z_][\w.]*|[0-9]+[uU]?", text) else f"({text})"


@dataclass
class Opts:
    flag: str
    xv: str
    nv: str
    temps: list
    unpack: str
    packed: str
    h: str
    j: str
    unroll: object  # 0: no pragma, "full": `#pragma unroll`, k: `#pragma unroll k`
    inner_unroll: bool
    div: str
    restrict: bool


def _pragma(u) -> list:
    if u == 0 or u == "0":
        return []
    return ["#pragma unroll" if u == "full" else f"#pragma unroll {u}"]


def _temps(bl, names) -> list:
    if names != "auto":
        return names.split("+")
    return ["f"] + [f"f{k}" for k in range(1, len(bl.arrays))]


def render(unit, bl, o: Opts, step: str) -> list[str]:
    """The packed path's statements, one per line (pragmas unindented)."""
    rq = " __restrict__" if o.restrict else ""
    x0 = bl.arrays[0]
    div = f"{bl.bound} >> 3" if o.div == "shift" else f"{_p(bl.bound)} / 8"
    out = [f"const uint4*{rq} {o.xv} = reinterpret_cast<const uint4*>({x0});",
           f"const {bl.vtype} {o.nv} = {div};"]
    out += _pragma(o.unroll)
    out.append(f"for ({bl.vtype} {bl.var} = {bl.start}; {bl.var} < {o.nv}; "
               f"{bl.var} += {bl.step}) {{")
    s1, s2 = step, step + step
    tmp = dict(zip(bl.arrays, o.temps))
    out += [f"{s1}float {tmp[a]}[8];" for a in bl.arrays]
    for a in bl.arrays:
        src = f"{o.xv}[{bl.var}]" if a == x0 else f"reinterpret_cast<const uint4*>({a})[{bl.var}]"
        out.append(f"{s1}{o.unpack}({src}, {tmp[a]});")
    inner = _pragma("full") if o.inner_unroll else []
    if bl.kind == "reduce":
        reps = [(r.start_byte, r.end_byte, f"{tmp[a]}[{o.j}]") for r, a in bl.reads]
        text = splice(unit, bl.body, reps)
        lines = [ln.strip() for ln in text.strip()[1:-1].strip().split("\n")]
        out += inner + [f"{s1}for (int {o.j} = 0; {o.j} < 8; ++{o.j}) {{"]
        out += [f"{s2}{ln}" for ln in lines if ln]
        out.append(f"{s1}}}")
    else:
        def elem(k):
            reps = [(r.start_byte, r.end_byte, f"{tmp[a]}[2 * {o.j}{k}]") for r, a in bl.reads]
            return norm(splice(unit, bl.value, reps))
        out += [f"{s1}uint4 {o.packed};",
                f"{s1}__nv_bfloat162* {o.h} = reinterpret_cast<__nv_bfloat162*>(&{o.packed});"]
        out += inner + [f"{s1}for (int {o.j} = 0; {o.j} < 4; ++{o.j}) {{",
                        f"{s2}{o.h}[{o.j}] = __floats2bfloat162_rn({elem('')}, {elem(' + 1')});",
                        f"{s1}}}",
                        f"{s1}reinterpret_cast<uint4*>({bl.dst})[{bl.var}] = {o.packed};"]
    out.append("}")
    return out


def _block(lines: list, ind: str, step: str) -> str:
    body = [ln if ln.startswith("#") else ind + step + ln for ln in lines]
    return "{\n" + "\n".join(body) + f"\n{ind}}}"


# ====================================================================== analysis
@dataclass
class Found:
    bl: "Bf16Loop | None" = None
    why: str = ""
    flag: str | None = None
    dispatch: object = None


def _find(site) -> Found:
    unit, node = site.unit, site.node
    if node.type == "for_statement":
        bl = bf16_loop(unit, node)
        if isinstance(bl, str):
            return Found(why=bl)
        return Found(bl, flag=getattr(site.pass_, "flag", None))
    cond = _strip(node.child_by_field_name("condition"))
    alt = node.child_by_field_name("alternative")
    if cond is None or cond.type != "identifier" or alt is None:
        return Found(why="not `if (flag) { ... } else { ... }`")
    els = [c for c in alt.named_children if c.type != "comment"]
    loop = els[0] if len(els) == 1 else None
    if loop is not None and loop.type == "compound_statement":
        inner = [s for s in statements(loop) if s.type != "comment"]
        loop = inner[0] if len(inner) == 1 else None
    if loop is None or loop.type != "for_statement":
        return Found(why="the else branch is not a single loop")
    bl = bf16_loop(unit, loop)
    if isinstance(bl, str):
        return Found(why=f"the else branch is not a strided bf16 loop: {bl}")
    return Found(bl, flag=unit.text(cond), dispatch=node)


def _elem_type(unit, fn, ptr, before) -> str | None:
    got = _declaration(unit, fn, ptr, before)
    if got is None or not _is_pointer(unit, got[0]):
        return None
    ty = got[0].child_by_field_name("type")
    return norm(re.sub(r"\b(const|volatile|__restrict__|__restrict)\b", "",
                       unit.text(ty) if ty is not None else ""))


def _all_arrays(bl) -> list:
    return bl.arrays + ([bl.dst] if bl.dst and bl.dst not in bl.arrays else [])


def check_bf16_loop(site, ctx) -> Verdict:
    f = _find(site)
    if f.bl is None:
        return Verdict.no(f.why)
    return Verdict.yes(f"a strided bf16 {f.bl.kind} over {', '.join(f.bl.arrays)} "
                       f"(stride {f.bl.step})")


def check_dispatch(site, ctx) -> Verdict:
    f = _find(site)
    if f.dispatch is None:
        return Verdict.no(f.why or "not a flag dispatch")
    return Verdict.yes(f"`if ({f.flag})` with a strided bf16 {f.bl.kind} as its fallback")


def check_whole_range(site, ctx) -> Verdict:
    f = _find(site)
    if f.bl is None:
        return Verdict.unknown(f.why)
    unit, fn, bl = site.unit, site.function, f.bl
    start = _resolve(unit, fn, bl.start, bl.loop.start_byte).strip("()")
    step = _flat(bl.step).strip("()")
    ok = (start == "threadIdx.x" and step == "blockDim.x") or \
        (start in _GLOBAL_IDS and step in _GRID) or \
        (start.endswith("%" + step) and "threadIdx.x" in start) or \
        (step == "32" and start.endswith("&31") and "threadIdx.x" in start)
    if not ok and start == "0" and \
            _resolve(unit, fn, bl.step, bl.loop.start_byte).strip("()") == "1":
        # one thread per row (`G = 1; gt = 0;`)
        return Verdict.yes(f"every thread runs the whole range: `{bl.start}` is 0 and the "
                           f"stride `{bl.step}` is 1")
    if not ok:
        return Verdict.unknown(f"cannot show that the threads' starts `{bl.start}` cover each "
                               f"residue of the stride `{bl.step}` once (chunks and elements "
                               f"would be split differently)")
    return Verdict.yes(f"the threads' starts {bl.start} cover every residue of {bl.step} once")


def check_element_type(site, ctx) -> Verdict:
    f = _find(site)
    if f.bl is None:
        return Verdict.unknown(f.why)
    for a in _all_arrays(f.bl):
        ty = _elem_type(site.unit, site.function, a, f.bl.loop.start_byte)
        if ty is None:
            return Verdict.no(f"{a} is not a pointer declared in {site.function.name}")
        if ty not in BF16:
            return Verdict.no(f"{a} points to {ty or '?'}, not __nv_bfloat16")
    return Verdict.yes(f"{', '.join(_all_arrays(f.bl))} are __nv_bfloat16 arrays (8 per uint4)")


def check_vector_flag(site, ctx) -> Verdict:
    f = _find(site)
    if f.bl is None:
        return Verdict.unknown(f.why)
    unit, fn, bl = site.unit, site.function, f.bl
    got = _declaration(unit, fn, f.flag or "", bl.loop.start_byte)
    if got is None or got[1] is None:
        return Verdict.no(f"no flag `{f.flag}` with an initializer is declared before the loop "
                          f"(it must test the length and the alignment at run time)")
    if _assigned(unit, fn, f.flag):
        return Verdict.no(f"the flag {f.flag} is assigned after its declaration")
    flat = _flat(unit.text(got[1]))
    bad = next((t for t in ("||", "?", "!=", "!(") if t in flat), None)
    if bad is not None:
        return Verdict.no(f"`{f.flag}` is not a plain conjunction of `== 0` tests (it has {bad})")
    if _flat(bl.bound) not in _divisible_lens(unit, got[1], 8):
        return Verdict.no(f"`{f.flag}` does not test that the length {bl.bound} is a multiple "
                          f"of 8")
    aligned = _aligned_roots(unit, got[1], 16)
    for ptr in _all_arrays(bl):
        root = _root(unit, fn, ptr, bl.loop.start_byte)
        if root is None:
            return Verdict.no(f"{ptr} is not a parameter or `param + offset`")
        if root[0] not in aligned:
            return Verdict.no(f"`{f.flag}` does not test the 16-byte alignment of {root[0]}")
    return Verdict.yes(f"`{f.flag}` tests {bl.bound} % 8 == 0 and the 16-byte alignment of the "
                       f"pointers (run-time guard)")


def check_aligned_offset(site, ctx) -> Verdict:
    f = _find(site)
    if f.bl is None:
        return Verdict.unknown(f.why)
    unit, fn, bl = site.unit, site.function, f.bl
    got = _declaration(unit, fn, f.flag or "", bl.loop.start_byte)
    lens = _divisible_lens(unit, got[1], 8) if got is not None and got[1] is not None else set()
    for ptr in _all_arrays(bl):
        root = _root(unit, fn, ptr, bl.loop.start_byte)
        if root is None:
            return Verdict.no(f"{ptr} is not a parameter or `param + offset`")
        if root[1] is not None and not _multiple(unit, fn, root[1], 8, lens, bl.loop.start_byte):
            return Verdict.no(f"the offset `{norm(unit.text(root[1]))}` of {ptr} from {root[0]} "
                              f"is not a multiple of 8 or of a length the flag tests")
    return Verdict.yes("every array starts a whole number of 16-byte chunks from its parameter")


def check_element_wise(site, ctx) -> Verdict:
    f = _find(site)
    if f.bl is None:
        return Verdict.unknown(f.why)
    unit, bl = site.unit, f.bl
    body = bl.value if bl.kind == "map" else bl.body
    for n in unit.walk(body):
        if n.type == "pointer_expression" and unit.text(n.child_by_field_name("operator")) == "*":
            return Verdict.no(f"`{norm(unit.text(n))}` reads memory besides the element reads")
        if n.type == "call_expression":
            name = re.sub(r"<.*>$", "", _call_name(unit, n))
            if name != _TO_FLOAT and name not in _PURE:
                return Verdict.no(f"`{norm(unit.text(n))}` may have side effects")
        if n.type in ("assignment_expression", "update_expression"):
            t = _strip(n.child_by_field_name("left") or n.child_by_field_name("argument"))
            if t is None or t.type != "identifier":
                return Verdict.no(f"`{norm(unit.text(n))}` writes memory (only registers may "
                                  f"be updated)")
    if bl.dst is not None and _idents(unit, body, bl.dst):
        return Verdict.no(f"the value reads {bl.dst}, the array the loop writes")
    if bl.kind == "map":
        for n in _idents(unit, bl.value):
            name = unit.text(n)
            if name not in bl.arrays and name != bl.var and _assigned_in(unit, bl.loop, name):
                return Verdict.no(f"`{name}` changes inside the loop")
        return Verdict.yes(f"each element of {bl.dst} depends only on the same elements of "
                           f"{', '.join(bl.arrays)} and loop-invariant values")
    if not (ctx.assumed("reassoc") or ctx.assumed("fast_math")):
        return Verdict.unknown("the packed path folds the elements in another order (per "
                               "thread chunks of 8): a float reduction is reassociated; "
                               "give --assume reassoc if the tolerance allows it")
    return Verdict.yes("--assume reassoc: the reduction may fold the elements in chunks of 8")


def _assigned_in(unit, node, name) -> bool:
    for n in unit.walk(node):
        if n.type in ("assignment_expression", "update_expression"):
            t = _strip(n.child_by_field_name("left") or n.child_by_field_name("argument"))
            if t is not None and t.type == "identifier" and unit.text(t) == name:
                return True
    return False


def check_unpack_helper(site, ctx) -> Verdict:
    f = _find(site)
    if f.bl is None:
        return Verdict.unknown(f.why)
    spec = getattr(site.pass_, "unpack", "auto")
    if f.dispatch is not None:
        o = vector_options(site)
        if o is None:
            return Verdict.unknown("the then-branch names no unpack helper")
        spec = o.unpack
    if spec == "auto":
        spec = auto_helper(site.unit)
        if spec is None:
            return Verdict.no("the file has no bf16 unpack helper `(uint4 raw, float* f)`")
    why = unpack_helper(site.unit, spec)
    if why:
        return Verdict.no(why)
    return Verdict.yes(f"{spec} converts the 8 bf16 of a uint4 to floats in element order "
                       f"(bit-exact)")


def _names(bl, o: Opts) -> list:
    out = [o.xv, o.nv, o.j] + list(o.temps)
    if bl.kind == "map":
        out += [o.packed, o.h]
    return out


def check_fresh_names(site, ctx) -> Verdict:
    f = _find(site)
    if f.bl is None:
        return Verdict.unknown(f.why)
    o = _opts(site.pass_, f.bl, site.unit)
    if len(o.temps) != len(f.bl.arrays):
        return Verdict.no(f"temps names {len(o.temps)} arrays, the loop reads "
                          f"{len(f.bl.arrays)}")
    names = _names(f.bl, o)
    used = {site.unit.text(n) for n in _idents(site.unit, f.bl.loop)}
    clash = next((n for n in names if n in used), None)
    if clash is None and len(set(names)) != len(names):
        clash = "a repeated name"
    if clash:
        return Verdict.no(f"the temporary name {clash} is already used by the loop")
    return Verdict.yes("the packed path's names are free")


def check_not_vectorized(site, ctx) -> Verdict:
    node = site.node
    p = node.parent
    while p is not None and p.type == "compound_statement" and len(
            [c for c in p.named_children if c.type != "comment"]) == 1:
        p = p.parent
    if p is not None and p.type == "else_clause":
        p = p.parent
    if p is not None and p.type == "if_statement" and p.child_by_field_name("alternative") is not None:
        c = _strip(p.child_by_field_name("condition"))
        if c is not None and c.type == "identifier" and \
                p.child_by_field_name("alternative").start_byte <= node.start_byte:
            return Verdict.no(f"the loop is already the scalar fallback of `if ({site.unit.text(c)})`")
    return Verdict.yes("the loop is not the fallback of a vector dispatch")


def _opts(p, bl, unit) -> Opts:
    unpack = p.unpack if p.unpack != "auto" else (auto_helper(unit) or "auto")
    return Opts(p.flag, p.xv, p.nv, _temps(bl, p.temps), unpack, p.packed, p.h, p.j,
                p.unroll, p.inner_unroll, p.div, p.restrict)


def vector_options(site) -> "Opts | None":
    """The options of vectorize-bf16 read from the dispatch's then-branch."""
    f = _find(site)
    if f.dispatch is None or f.bl is None:
        return None
    unit, bl = site.unit, f.bl
    then = f.dispatch.child_by_field_name("consequence")
    flat = _flat(unit.text(then))
    x0 = re.escape(bl.arrays[0])
    m = re.search(rf"constuint4\*(__restrict__)?(\w+)=reinterpret_cast<constuint4\*>\({x0}\);"
                  rf"const{re.escape(bl.vtype.replace(' ', ''))}(\w+)=[^;]*?(>>|/)[^;]*;"
                  rf"(#pragmaunroll(\d*))?for\(", flat)
    if m is None:
        return None
    temps = re.findall(r"float(\w+)\[8\];", flat)[:len(bl.arrays)]
    mu = re.search(rf"(\w+(?:<\d+>)?)\({re.escape(m.group(2))}\[{re.escape(bl.var)}\],", flat)
    mj = re.search(r"for\(int(\w+)=0;\1<[48];\+\+\1\)", flat)
    if mu is None or mj is None or len(temps) != len(bl.arrays):
        return None
    unroll = 0 if m.group(5) is None else (int(m.group(6)) if m.group(6) else "full")
    o = Opts(f.flag, m.group(2), m.group(3), temps, mu.group(1), "packed", "h", mj.group(1),
             unroll, f"#pragmaunrollfor(int{mj.group(1)}=0" in flat,
             "shift" if m.group(4) == ">>" else "div", bool(m.group(1)))
    mp = re.search(r"uint4(\w+);__nv_bfloat162\*(\w+)=reinterpret_cast<__nv_bfloat162\*>", flat)
    if mp:
        o.packed, o.h = mp.group(1), mp.group(2)
    return o


def _rendered_matches(site, f, o) -> bool:
    unit = site.unit
    then = f.dispatch.child_by_field_name("consequence")
    want = _flat(_block(render(unit, f.bl, o, "    "), "", "    "))
    return _flat(unit.text(then)) == want


def check_vector_form(site, ctx) -> Verdict:
    f = _find(site)
    if f.bl is None or f.dispatch is None:
        return Verdict.unknown(f.why)
    o = vector_options(site)
    if o is None or not _rendered_matches(site, f, o):
        return Verdict.no("the then-branch is not the packed bf16 form of the else-branch's "
                          "loop (as vectorize-bf16 writes it)")
    return Verdict.yes(f"the then-branch is vectorize-bf16{{unpack={o.unpack}}} of the loop")


# ======================================================================== passes
_UNROLL = OneOf(IntRange(0, 64), Choice("full"))


@dataclass(frozen=True)
class VectorizeBf16(Pass):
    """Give a strided bf16 loop a packed 16-byte (8 x bf16) path behind a run-time flag.

    A loop ``for (T i = S; i < N; i += STEP)`` that reads bf16 arrays only as
    ``__bfloat162float(A[i])`` and either stores ``Y[i] = __float2bfloat16(E)`` (map) or
    only updates registers (reduction) becomes ``if (flag) { packed loop } else { the loop
    }``: the same threads stride over the N / 8 chunks, each read as one ``uint4`` and
    unpacked into 8 floats by an unpack helper of the file; a map packs the results in
    pairs with ``__floats2bfloat162_rn`` (the same round-to-nearest as
    ``__float2bfloat16``) and stores one ``uint4``. A map is bit-identical; a reduction
    folds the elements in another order (chunks of 8 per thread). The flag is a run-time
    GUARD the kernel computes (N % 8 == 0 and the 16-byte alignment of every array's
    parameter); there is no remainder: the scalar loop is the fallback for every other
    length. Reassociation of a reduction is required from the context (``--assume
    reassoc``).

    Before::

        for (int c = gt; c < cols; c += G) {
            const float a = (__bfloat162float(xr[c]) - mu) * rs * __bfloat162float(weight[c]);
            yr[c] = __float2bfloat16(a);
        }

    After ``vectorize-bf16{unpack=ln_unpack<2>,temps=f+w}``::

        if (vec_ok) {
            const uint4* xv = reinterpret_cast<const uint4*>(xr);
            const int nv = cols >> 3;
            for (int c = gt; c < nv; c += G) {
                float f[8];
                float w[8];
                ln_unpack<2>(xv[c], f);
                ln_unpack<2>(reinterpret_cast<const uint4*>(weight)[c], w);
                uint4 packed;
                __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&packed);
        #pragma unroll
                for (int j = 0; j < 4; ++j) {
                    h[j] = __floats2bfloat162_rn((f[2 * j] - mu) * rs * w[2 * j],
                                                 (f[2 * j + 1] - mu) * rs * w[2 * j + 1]);
                }
                reinterpret_cast<uint4*>(yr)[c] = packed;
            }
        } else {
            for (int c = gt; c < cols; c += G) { ... the loop ... }
        }

    Preconditions: bf16-loop (layout: the loop shape above), whole-range (layout: the
    threads' starts cover every residue of STEP once, or every thread runs the whole
    range: start 0 and stride 1, as after ``ungroup-rows``), element-type (dtype: every array is
    ``__nv_bfloat16``), unpack-helper (dtype: the helper takes ``(uint4 raw, float* f)``,
    splits raw into its four words and converts each pair with a known bit-exact spelling:
    shift/mask, ``__byte_perm``, or ``__bfloat1622float2``), vector-flag (hardware: the
    flag is a const conjunction of ``== 0`` tests of N % 8 and of the 16-byte alignment of
    every array's parameter), aligned-offset (layout: each array is its parameter plus a
    multiple of 8 or of a tested length), element-wise (storage: the body reads no other
    memory, writes only registers besides Y[i]; a reduction needs ``reassoc``),
    not-vectorized (pipeline: not already a fallback), fresh-names (pipeline).

    Options: ``flag``; ``xv``/``nv`` (the chunk pointer of the first array, the chunk
    count); ``temps`` (the unpacked arrays, one per array read, ``f+w+b``; ``auto``: f, f1,
    ...); ``unpack`` (the helper, ``NAME`` or ``NAME<K>``; ``auto``: the first one the file
    defines); ``packed``/``h``/``j`` (the packed store, its bf16-pair view, the pair
    index); ``unroll`` (pragma on the chunk loop: 0 none, ``full``, or a count);
    ``inner_unroll`` (``#pragma unroll`` on the per-element loop); ``div`` (``shift``
    ``N >> 3`` or ``div`` ``N / 8``); ``restrict`` (declare the chunk pointer
    ``__restrict__``).
    """

    name = "vectorize-bf16"
    kind = "optimize"
    inverse = "scalarize-bf16"
    scope = "device"
    anchor = Rule(pattern="for ($T $I = $S; $I < $N; $I += $STEP) $BODY;")
    preconditions = (
        Precondition("bf16-loop", "layout",
                     "a strided loop reading bf16 elements via __bfloat162float(A[i])",
                     check_bf16_loop),
        Precondition("whole-range", "layout",
                     "the threads' starts cover every residue of the stride", check_whole_range),
        Precondition("element-type", "dtype", "every array is __nv_bfloat16",
                     check_element_type),
        Precondition("unpack-helper", "dtype",
                     "a helper unpacks a uint4 of 8 bf16 bit-exactly", check_unpack_helper),
        Precondition("vector-flag", "hardware",
                     "the flag tests N % 8 == 0 and the pointers' 16-byte alignment",
                     check_vector_flag),
        Precondition("aligned-offset", "layout",
                     "each array starts whole chunks from its parameter", check_aligned_offset),
        Precondition("element-wise", "storage",
                     "each element is used alone; only registers are folded (reassoc)",
                     check_element_wise),
        Precondition("not-vectorized", "pipeline",
                     "the loop has no packed path yet", check_not_vectorized),
        Precondition("fresh-names", "pipeline",
                     "the temporaries' names are free", check_fresh_names),
    )

    flag: str = option("vec_ok", Identifier(words=()), "the run-time flag variable")
    xv: str = option("xv", Identifier(words=()), "name of the chunk pointer")
    nv: str = option("nv", Identifier(words=()), "name of the chunk count")
    temps: str = option("auto", NameList(), "the unpacked arrays (f+w+b)")
    unpack: str = option("auto", HelperName(), "the unpack helper (NAME or NAME<K>)")
    packed: str = option("packed", Identifier(words=()), "name of the packed store value")
    h: str = option("h", Identifier(words=()), "name of its bf16-pair view")
    j: str = option("j", Identifier(words=()), "name of the element index")
    unroll: object = option(0, _UNROLL, "pragma on the chunk loop (0: none, full, count)",
                                        tune=True)
    inner_unroll: bool = option(True, Bool(), "#pragma unroll on the per-element loop")
    div: str = option("shift", Choice("shift", "div"), "N >> 3 or N / 8")
    restrict: bool = option(False, Bool(), "declare the chunk pointer __restrict__")

    def rewrite(self, site, ctx):
        f = _find(site)
        unit, bl = site.unit, f.bl
        step = _indent_step(unit, bl.loop)
        ind = line_indent(unit, bl.loop.start_byte)
        vec = _block(render(unit, bl, _opts(self, bl, unit), step), ind, step)
        text = f"if ({self.flag}) {vec} else {{\n{ind}{step}{shift(unit.text(bl.loop), step)}\n{ind}}}"
        return [Edit.replace(bl.loop, text)]

    def inverse_for(self, site, ctx):
        return ScalarizeBf16()


@dataclass(frozen=True)
class ScalarizeBf16(Pass):
    """Drop the packed 16-byte bf16 path of a strided bf16 loop, keeping its fallback.

    ``if (flag) { P } else { for (...) ... __bfloat162float(A[i]) ... }`` becomes the loop,
    when P is exactly what ``vectorize-bf16`` writes for that loop (the pass reads the
    names, the unpack helper, the pragmas and spellings from P, regenerates it and
    compares, ignoring comments and whitespace). The fallback is correct for every length
    and alignment; a map gives bit-identical results, a reduction the same sum in another
    order (``--assume reassoc``).

    Before::

        if (vec_ok) {
            const uint4* __restrict__ xv = reinterpret_cast<const uint4*>(xr);
            const int nv = cols >> 3;
        #pragma unroll 4
            for (int c = gt; c < nv; c += G) {
                float f[8];
                ln_unpack<2>(xv[c], f);
        #pragma unroll
                for (int j = 0; j < 8; ++j) {
                    const float d = f[j] - shift;
                    s1 += d;
                }
            }
        } else {
            for (int c = gt; c < cols; c += G) {
                const float d = __bfloat162float(xr[c]) - shift;
                s1 += d;
            }
        }

    After::

        for (int c = gt; c < cols; c += G) {
            const float d = __bfloat162float(xr[c]) - shift;
            s1 += d;
        }

    Preconditions: vector-dispatch (layout: ``if (flag) ... else`` around one strided
    bf16 loop), whole-range, aligned-offset (layout), element-type, unpack-helper (dtype),
    vector-flag (hardware), element-wise (storage) as for vectorize-bf16 (they make the
    packed path valid, so its inverse round-trips), vector-form (pipeline: the
    then-branch is the regenerated packed form).

    Options: none; the inverse (``inverse_for``) carries the names, helper, pragmas and
    spellings read from P.
    """

    name = "scalarize-bf16"
    kind = "simplify"
    inverse = "vectorize-bf16"
    scope = "device"
    anchor = Rule(pattern="if ($F) $A; else $B;", constraints={"F": {"kind": "identifier"}})
    preconditions = (
        Precondition("vector-dispatch", "layout",
                     "if (flag) { ... } else { strided bf16 loop }", check_dispatch),
        Precondition("whole-range", "layout",
                     "the threads' starts cover every residue of the stride", check_whole_range),
        Precondition("element-type", "dtype", "every array is __nv_bfloat16",
                     check_element_type),
        Precondition("unpack-helper", "dtype",
                     "the helper unpacks a uint4 of 8 bf16 bit-exactly", check_unpack_helper),
        Precondition("vector-flag", "hardware",
                     "the flag tests N % 8 == 0 and the pointers' 16-byte alignment",
                     check_vector_flag),
        Precondition("aligned-offset", "layout",
                     "each array starts whole chunks from its parameter", check_aligned_offset),
        Precondition("element-wise", "storage",
                     "each element is used alone; only registers are folded (reassoc)",
                     check_element_wise),
        Precondition("vector-form", "pipeline",
                     "the then-branch is vectorize-bf16 of the loop", check_vector_form),
    )

    def rewrite(self, site, ctx):
        f = _find(site)
        unit = site.unit
        loop = f.bl.loop
        step = _indent_step(unit, loop)
        return [Edit.replace(f.dispatch, unshift(unit.text(loop), step))]

    def inverse_for(self, site, ctx):
        f = _find(site)
        o = vector_options(site)
        if o is None:
            return VectorizeBf16(flag=f.flag or "vec_ok")
        return VectorizeBf16(flag=o.flag, xv=o.xv, nv=o.nv, temps="+".join(o.temps),
                             unpack=o.unpack, packed=o.packed, h=o.h, j=o.j, unroll=o.unroll,
                             inner_unroll=o.inner_unroll, div=o.div, restrict=o.restrict)
