"""16-byte loads of a byte stream: ``vectorize-bytes`` (optimize) and its inverse
``scalarize-bytes`` (simplify).

A grid-stride loop that handles one byte per iteration with an order-free update (a
histogram's ``atomicAdd(bins + data[i], 1u)``)::

    size_t i = tid;
    for (; i < count; i += nthreads) { atomicAdd(bins + (unsigned int)data[i], 1u); }

reads the bytes as ``uint4`` (16 bytes) from the first 16-byte boundary on: a scalar
*head* (the 0..15 bytes before the boundary, one per thread), the whole ``uint4`` units
(grid-stride over units, optionally U loads in flight per iteration) and a scalar
*tail* (the 0..15 bytes after the last whole unit). Each unit goes to a ``__device__``
helper that splits it into four 32-bit words and each word into four bytes, applying
the loop's statement to each byte. Any base address and any count work: alignment is
computed at run time (the head), not assumed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from kltrans.analysis.affine import Affine, affine_of
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.pattern import Pattern, tokens
from kltrans.match.predicates import pure
from kltrans.passes import Bool, Choice, Domain, Identifier, IntRange, OneOf, Pass, Precondition
from kltrans.passes import option
from kltrans.passes.options import DomainError
from kltrans.syntax import Edit
from kltrans.passes.guard import GLOBAL_INDEX, index_decl
from kltrans.passes.rewrite import (
    contract_of, indent_of as line_indent, inside, norm, statements, used_names)

GRID = Affine.sym("blockDim.x") * Affine.sym("gridDim.x")
BYTES = {"uint8_t", "unsigned char", "uchar"}
WIDE = {"size_t", "unsigned long", "unsigned long long", "unsigned long int",
        "unsigned long long int", "uint64_t"}
ORDER_FREE = {"atomicAdd", "atomicOr", "atomicAnd", "atomicXor", "atomicMax", "atomicMin"}
CASTS = {"unsigned int", "unsigned", "uint32_t", "int", "size_t"}
_TIGHT = {"identifier", "number_literal", "subscript_expression", "call_expression",
          "field_expression", "parenthesized_expression"}
DEFAULT_NAMES = {"head": ("head", "n_head", "head_n"), "nvec": ("nvec", "n_vec", "nvec_"),
                 "tail": ("tail_start", "tail0", "tail_begin"), "vptr": ("dv", "data_v", "vptr"),
                 "array": ("v", "vv", "vec"), "uvar": ("u", "uu", "k_u")}
FN_NAMES = {"vec": ("count_vec", "process_vec", "vec_bytes"),
            "word": ("count_word", "process_word", "word_bytes")}
_FOR = Pattern.compile("for (; $I < $N; $I += $S) $BODY;")
_FOR_DECL = Pattern.compile("for ($T $I = $E; $I < $N; $I += $S) $BODY;")


class NameListOrSame(Domain):
    """``same``, or C identifiers joined by ``+`` (``col+lut``)."""

    def parse(self, text: str) -> str:
        return self.check(text)

    def contains(self, value) -> bool:
        return isinstance(value, str) and (value == "same" or bool(
            re.fullmatch(r"[A-Za-z_]\w*(\+[A-Za-z_]\w*)*", value)))

    def describe(self) -> str:
        return "same, or names joined by + (col+lut)"

    def values(self) -> list:
        return ["same"]

    def check(self, value):
        if not self.contains(value):
            raise DomainError(f"{value!r} is not {self.describe()}")
        return value


def _param(fn, name):
    return next((p for p in fn.params if p.name == name), None)


def _decl_type(unit, fn, name):
    for n in unit.walk(fn.node):
        if n.type not in ("declaration", "parameter_declaration"):
            continue
        for d in n.children_by_field_name("declarator"):
            x = d
            while x is not None and x.type != "identifier":
                x = x.child_by_field_name("declarator")
            if x is not None and unit.text(x) == name:
                return norm(unit.text(n.child_by_field_name("type")).replace("const ", ""))
    return None


def _top_index(fn, node):
    return next((k for k, s in enumerate(statements(fn.body)) if s.id == node.id), None)


# ================================================================== the scalar byte loop
@dataclass
class _Loop:
    loop: object
    i: str
    n: object
    s: object
    e0: object
    decl: object      # the `T i = E0;` statement before the loop, or None (for-init)
    stmt: object      # the body's one statement
    call: object      # its call expression
    slot: object      # the byte value (x[i] or (T)x[i])
    sub: object       # x[i]
    data: str
    free: list        # the other identifiers of the statement (kernel parameters), in order


def _parse_loop(unit, fn, loop) -> "_Loop | str":
    if loop is None or loop.type != "for_statement":
        return "not a for loop"
    got = _FOR.match(unit, loop)
    decl = None
    if got is not None:
        i = unit.text(got["I"])
        d = index_decl(unit, fn, i)
        if isinstance(d, str):
            return d
        e0, decl = d.value, d.decl
    else:
        got = _FOR_DECL.match(unit, loop)
        if got is None:
            return "the loop is not `for ([T i = E]; i < n; i += s)`"
        i, e0 = unit.text(got["I"]), got["E"]
    body = got["BODY"]
    sts = statements(body)
    if len(sts) != 1 or sts[0].type != "expression_statement" or body.type != "compound_statement":
        return "the loop body is not one braced statement `update(x[i]);`"
    call = sts[0].named_children[0] if sts[0].named_children else None
    if call is None or call.type != "call_expression":
        return "the loop's statement is not a call"
    subs = []
    for m in unit.walk(call):
        if m.type == "identifier" and unit.text(m) == i:
            sub = m.parent.parent if m.parent is not None else None
            if sub is None or sub.type != "subscript_expression" or \
                    norm(unit.text(sub.child_by_field_name("indices"))) != f"[{i}]" or \
                    sub.child_by_field_name("argument").type != "identifier":
                return f"{i} is used as `{norm(unit.text(m.parent))[:40]}`, not only as x[{i}]"
            subs.append(sub)
    if len(subs) != 1:
        return f"the statement reads {len(subs)} bytes at {i}: the split needs exactly one"
    sub = subs[0]
    data = unit.text(sub.child_by_field_name("argument"))
    slot = sub
    if sub.parent is not None and sub.parent.type == "cast_expression":
        slot = sub.parent
        if norm(unit.text(slot.child_by_field_name("type"))) not in CASTS:
            return f"`{norm(unit.text(slot))}` casts the byte to a type other than a 32/64-bit integer"
    # the byte must only be an offset or an index (its signedness does not matter there)
    par = slot.parent
    ok = par is not None and (
        (par.type == "binary_expression" and unit.text(par.child_by_field_name("operator")) == "+"
         and par.child_by_field_name("right").id == slot.id) or
        (par.type == "subscript_argument_list"))
    if not ok:
        return f"the byte `{norm(unit.text(slot))}` is not used as an offset `p + b` or index `p[b]`"
    free = []
    fnode = call.child_by_field_name("function")
    for m in unit.walk(call):
        if m.type == "identifier" and not inside(m, slot) and not inside(m, fnode) and \
                unit.text(m) not in free:
            free.append(unit.text(m))
    return _Loop(loop, i, got["N"], got["S"], e0, decl, sts[0], call, slot, sub, data, free)


def _names(p, unit, fn) -> dict:
    used = used_names(unit, fn)
    defined = {f.name for f in unit.device_functions() + unit.kernels()}
    out = {}
    for k, cands in DEFAULT_NAMES.items():
        v = getattr(p, k)
        if v == "auto":
            v = next((c for c in cands if c not in used and c not in out.values()), cands[0] + "_")
        out[k] = v
    for k, cands in FN_NAMES.items():
        v = getattr(p, k)
        if v == "auto":
            v = next((c for c in cands if c not in defined and c not in used), cands[0] + "_")
        out[k] = v
    return out


def _helper_params(p, lp) -> list:
    return lp.free if p.params == "same" else p.params.split("+")


def _wrap(t: str, node_type: str) -> str:
    return t if node_type in _TIGHT else f"({t})"


def _replace_in(unit, node, reps) -> str:
    out, pos = [], node.start_byte
    for s, e, t in sorted(reps):
        out.append(unit.source[pos:s].decode("utf-8"))
        out.append(t)
        pos = e
    out.append(unit.source[pos:node.end_byte].decode("utf-8"))
    return "".join(out)


def texts(p, unit, fn, lp, ind, st):
    """(helpers, prologue, loops, epilogue, names) that vectorize-bytes writes."""
    nm = _names(p, unit, fn)
    hp = _helper_params(p, lp)
    n, s, e0 = unit.text(lp.n), unit.text(lp.s), unit.text(lp.e0)
    h, nv, ts, dv = nm["head"], nm["nvec"], nm["tail"], nm["vptr"]
    w, v = p.wvar, p.value
    # the statement with the byte replaced, and the free names renamed for the helper
    ren = {a: b for a, b in zip(lp.free, hp)}

    def stmt_with(byte, rename):
        reps = [(lp.slot.start_byte, lp.slot.end_byte, byte)]
        if rename:
            for m in unit.walk(lp.stmt):
                if m.type == "identifier" and not inside(m, lp.slot) and unit.text(m) in ren and \
                        not inside(m, lp.call.child_by_field_name("function")):
                    reps.append((m.start_byte, m.end_byte, ren[unit.text(m)]))
        return _replace_in(unit, lp.stmt, reps)

    types = []
    for a in lp.free:
        par = _param(fn, a)
        types.append(par.type if par is not None else "int")
    decls = ", ".join(f"{t} {x}" for t, x in zip(types, hp))
    inl = " __forceinline__" if p.forceinline else ""
    bytes_ = [f"({w} & 0xffu)", f"(({w} >> 8) & 0xffu)", f"(({w} >> 16) & 0xffu)", f"({w} >> 24)"]
    word = [f"__device__{inl} void {nm['word']}({decls}, unsigned int {w})", "{"]
    word += [f"    {stmt_with(b, True)}" for b in bytes_] + ["}"]
    args_h = ", ".join(hp)
    vec = [f"__device__{inl} void {nm['vec']}({decls}, uint4 {v})", "{"]
    vec += [f"    {nm['word']}({args_h}, {v}.{c});" for c in "xyzw"] + ["}"]
    helpers = "\n".join(word) + "\n\n" + "\n".join(vec) + "\n\n"
    pre = [f"size_t {h} = (16u - (({p.cast}){lp.data} & 15u)) & 15u;",
           f"{ind}if ({h} > {n}) {{", f"{ind}{st}{h} = {n};", f"{ind}}}",
           f"{ind}const size_t {nv} = ({n} - {h}) / 16;",
           f"{ind}const size_t {ts} = {h} + {nv} * 16;",
           f"{ind}const uint4* {dv} = reinterpret_cast<const uint4*>({lp.data} + {h});"]
    args_k = ", ".join(lp.free)
    i = lp.i
    sw = _wrap(s, lp.s.type)
    loops = []
    if p.unroll != 1:
        u, arr, uv = str(p.unroll), nm["array"], nm["uvar"]
        um1 = str(p.unroll - 1) if isinstance(p.unroll, int) else f"({u} - 1)"
        prag = ["#pragma unroll"] if p.pragma else []
        loops += [f"for (; {i} + {um1} * {sw} < {nv}; {i} += {u} * {sw}) {{",
                  f"{ind}{st}uint4 {arr}[{u}];"] + prag + [
                  f"{ind}{st}for (int {uv} = 0; {uv} < {u}; ++{uv}) {{",
                  f"{ind}{st}{st}{arr}[{uv}] = {dv}[{i} + {uv} * {sw}];",
                  f"{ind}{st}}}"] + prag + [
                  f"{ind}{st}for (int {uv} = 0; {uv} < {u}; ++{uv}) {{",
                  f"{ind}{st}{st}{nm['vec']}({args_k}, {arr}[{uv}]);",
                  f"{ind}{st}}}",
                  f"{ind}}}", ind]
    body = ["{", f"{ind}{st}{nm['vec']}({args_k}, {dv}[{i}]);", f"{ind}}}"]
    head = stmt_with(f"{lp.data}[{e0}]", False) if lp.slot.id == lp.sub.id else \
        stmt_with(_replace_in(unit, lp.slot, [(lp.sub.start_byte, lp.sub.end_byte,
                                                f"{lp.data}[{e0}]")]), False)
    tail = stmt_with(f"{lp.data}[{ts} + {e0}]", False) if lp.slot.id == lp.sub.id else \
        stmt_with(_replace_in(unit, lp.slot, [(lp.sub.start_byte, lp.sub.end_byte,
                                                f"{lp.data}[{ts} + {e0}]")]), False)
    epi = [f"{ind}if ({e0} < {h}) {{", f"{ind}{st}{head}", f"{ind}}}",
           f"{ind}if ({e0} < {n} - {ts}) {{", f"{ind}{st}{tail}", f"{ind}}}"]
    return helpers, "\n".join(pre), "\n".join(loops), "\n".join(body), "\n".join(epi), nm


# ================================================================== optimize: facts
def _loop(site):
    return _parse_loop(site.unit, site.function, site.node)


def _o_shape(site, ctx) -> Verdict:
    lp = _loop(site)
    if isinstance(lp, str):
        return Verdict.no(lp)
    unit, fn = site.unit, site.function
    k = _top_index(fn, lp.loop)
    if k is None:
        return Verdict.no("the loop is not a statement of the kernel's body")
    if site.pass_.unroll != 1:
        sts = statements(fn.body)
        if lp.decl is None or k == 0 or sts[k - 1].id != lp.decl.id:
            return Verdict.no(f"unroll={site.pass_.unroll} needs the index declared right above "
                              f"the loop (`size_t {lp.i} = start;` then `for (; {lp.i} < n; ...)`)")
    if not pure(unit, lp.n) or not pure(unit, lp.e0) or not pure(unit, lp.s):
        return Verdict.no("the bound, the stride or the first index has side effects")
    callee = unit.text(lp.call.child_by_field_name("function"))
    return Verdict.yes(f"`{callee}(...{lp.data}[{lp.i}]...)` once per byte over a strided loop")


def _o_cover(site, ctx) -> Verdict:
    lp = _loop(site)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    unit, fn = site.unit, site.function
    if affine_of(unit, lp.e0, fn) != GLOBAL_INDEX:
        return Verdict.no(f"the loop starts at `{norm(unit.text(lp.e0))}`, not the global thread "
                          "index: the head and tail bytes would not go to threads 0..15")
    if affine_of(unit, lp.s, fn) != GRID:
        return Verdict.no(f"the stride `{norm(unit.text(lp.s))}` is not the grid size "
                          "blockDim.x * gridDim.x")
    return Verdict.yes("a grid-stride loop from the global thread index")


def _o_order_free(site, ctx) -> Verdict:
    lp = _loop(site)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    unit = site.unit
    callee = unit.text(lp.call.child_by_field_name("function"))
    if callee not in ORDER_FREE:
        return Verdict.no(f"`{callee}` is not an atomic update: the bytes are processed by other "
                          "threads and in another order after the split")
    for m in unit.walk(lp.call):
        if m.type == "call_expression" and m.id != lp.call.id:
            return Verdict.no(f"the update calls `{norm(unit.text(m))[:40]}`")
    return Verdict.yes(f"{callee} with its result unused: the order of the bytes does not matter")


def _o_byte(site, ctx) -> Verdict:
    lp = _loop(site)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    par = _param(site.function, lp.data)
    if par is None or par.pointer != 1:
        return Verdict.no(f"{lp.data} is not a pointer parameter")
    t = norm(par.base_type)
    if t not in BYTES:
        return Verdict.no(f"{lp.data} points to {t}: the pass splits 16-byte units into unsigned "
                          "bytes")
    return Verdict.yes(f"{lp.data}: {t} -> uint4 units of 16 bytes")


def _o_bound(site, ctx) -> Verdict:
    lp = _loop(site)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    unit, fn = site.unit, site.function
    if lp.n.type != "identifier":
        return Verdict.no(f"the bound `{norm(unit.text(lp.n))}` is not a variable")
    t = _decl_type(unit, fn, unit.text(lp.n))
    if t not in WIDE:
        return Verdict.no(f"the bound {unit.text(lp.n)} is {t}: the head is clamped to it and "
                          "subtracted from it in size_t, which needs a non-negative 64-bit bound")
    return Verdict.yes(f"{unit.text(lp.n)} is {t}")


def _o_params(site, ctx) -> Verdict:
    lp = _loop(site)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    fn = site.function
    hp = _helper_params(site.pass_, lp)
    if len(hp) != len(lp.free):
        return Verdict.no(f"params={site.pass_.params} names {len(hp)} helper parameter(s); the "
                          f"update uses {len(lp.free)} ({', '.join(lp.free)})")
    for a in lp.free:
        if _param(fn, a) is None:
            return Verdict.no(f"the update uses {a}, which is not a parameter of {fn.name}: the "
                              "helpers take the kernel's parameters")
    if not lp.free:
        return Verdict.no("the update uses no kernel parameter")
    return Verdict.yes(f"the helpers take {', '.join(lp.free)}")


def _o_read_only(site, ctx) -> Verdict:
    lp = _loop(site)
    if isinstance(lp, str):
        return Verdict.unknown(lp)
    unit, fn = site.unit, site.function
    for m in unit.walk(fn.body):
        if m.type in ("assignment_expression", "update_expression"):
            tgt = m.child_by_field_name("left") or m.child_by_field_name("argument")
            if tgt is not None and any(x.type == "identifier" and unit.text(x) == lp.data
                                       for x in unit.walk(tgt)):
                return Verdict.no(f"{lp.data} is written at line {unit.line_col(m.start_byte)[0]}")
    return Verdict.yes(f"{lp.data} is only read")


def _o_block(site, ctx) -> Verdict:
    from kltrans.passes.launch_facts import const_value

    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    v = const_value(site.unit, c.block[0], ctx)
    if v is None:
        return Verdict.unknown(f"block={c.block[0]} is not a known constant")
    if v < 16:
        return Verdict.no(f"block={v}: the up to 15 head and 15 tail bytes need 15 threads")
    return Verdict.yes(f"block={v} >= 16: threads 0..14 take the head and the tail")


def _o_fresh(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    nm = _names(site.pass_, unit, fn)
    vals = list(nm.values())
    if len(set(vals)) != len(vals):
        return Verdict.no(f"two of the new names are equal ({', '.join(vals)})")
    used = used_names(unit, fn)
    for k in ("head", "nvec", "tail", "vptr"):
        if nm[k] in used:
            return Verdict.no(f"the name {nm[k]} is already used in {fn.name}")
    defined = {f.name for f in unit.device_functions() + unit.kernels()}
    for k in ("vec", "word"):
        if nm[k] in defined or nm[k] in used:
            return Verdict.no(f"a function or name {nm[k]} already exists")
    p = site.pass_
    lp = _loop(site)
    hp = _helper_params(p, lp) if not isinstance(lp, str) else []
    if p.wvar in hp or p.value in hp:
        return Verdict.no(f"the helper parameter names {p.wvar}/{p.value} clash with {hp}")
    return Verdict.yes(f"{', '.join(vals)} are fresh")


@dataclass(frozen=True)
class VectorizeBytes(Pass):
    """Read a grid-stride byte loop as 16-byte uint4 units, with a scalar head and tail.

    Before::

        // kltrans: launch histogram grid=min(ceil_div(n, 65536), 792) block=256
        const size_t count = n > 0 ? (size_t)n : 0;
        ...
        size_t i = tid;
        for (; i < count; i += nthreads) {
            atomicAdd(bins + (unsigned int)data[i], 1u);
        }

    After ``vectorize-bytes{unroll=4}``::

        __device__ __forceinline__ void count_word(unsigned int* bins, unsigned int w)
        {
            atomicAdd(bins + (w & 0xffu), 1u);
            atomicAdd(bins + ((w >> 8) & 0xffu), 1u);
            atomicAdd(bins + ((w >> 16) & 0xffu), 1u);
            atomicAdd(bins + (w >> 24), 1u);
        }

        __device__ __forceinline__ void count_vec(unsigned int* bins, uint4 v)
        {
            count_word(bins, v.x); count_word(bins, v.y); ...(v.z, v.w)
        }
        ... (kernel)
        size_t head = (16u - ((uintptr_t)data & 15u)) & 15u;
        if (head > count) {
            head = count;
        }
        const size_t nvec = (count - head) / 16;
        const size_t tail_start = head + nvec * 16;
        const uint4* dv = reinterpret_cast<const uint4*>(data + head);
        size_t i = tid;
        for (; i + 3 * nthreads < nvec; i += 4 * nthreads) {
            uint4 v[4];
        #pragma unroll
            for (int u = 0; u < 4; ++u) {
                v[u] = dv[i + u * nthreads];
            }
        #pragma unroll
            for (int u = 0; u < 4; ++u) {
                count_vec(bins, v[u]);
            }
        }
        for (; i < nvec; i += nthreads) {
            count_vec(bins, dv[i]);
        }
        if (tid < head) {
            atomicAdd(bins + (unsigned int)data[tid], 1u);
        }
        if (tid < count - tail_start) {
            atomicAdd(bins + (unsigned int)data[tail_start + tid], 1u);
        }

    The byte (``x[i]``, or ``(unsigned int)x[i]``) must be an offset or an index, so that
    the helpers' ``unsigned int`` bytes mean the same. Thread ``t`` of the grid also takes
    head byte ``t`` and tail byte ``t``. Alignment is computed at run time (a guard, not
    a context fact), so any address and any count are handled.

    Preconditions: byte-loop (layout: a top-level ``for ([T i = E]; i < n; i += s)``
    whose one braced statement is a call reading one byte ``x[i]`` used as an offset or
    index; with ``unroll`` > 1, ``i`` is declared right above the loop), thread-cover
    (layout: ``i`` starts at the global thread index and strides by the grid size),
    order-free (pipeline: the statement is an atomic update whose result is unused),
    byte-type (dtype: ``x`` points to unsigned bytes), bound-type (dtype: ``n`` is a
    64-bit unsigned variable), helper-params (storage: the statement's other names are
    kernel parameters, passed to the helpers), read-only (storage: ``x`` is not written),
    block-size (hardware: at least 16 threads per block), fresh-names (pipeline).

    Options: ``unroll`` (1..16 or a constant's name: uint4 loads in flight per iteration),
    ``pragma`` (``#pragma unroll`` on the unrolled loops), ``cast`` (``uintptr_t`` or
    ``size_t``: the address cast of the head), ``forceinline`` (``__forceinline__``
    helpers), ``params`` (the helpers' parameter names: same, or names joined by +),
    ``wvar``, ``value`` (the helpers' word and vector parameters), ``head``, ``nvec``,
    ``tail``, ``vptr``, ``array``, ``uvar``, ``vec``, ``word`` (names; auto picks fresh).
    """

    name = "vectorize-bytes"
    kind = "optimize"
    inverse = "scalarize-bytes"
    anchor = Rule(any=(Rule(pattern="for (; $I < $N; $I += $S) $BODY;"),
                       Rule(pattern="for ($T $I = $E; $I < $N; $I += $S) $BODY;")),
                  inside_kernel=True, constraints={"I": {"kind": "identifier"}})
    preconditions = (
        Precondition("byte-loop", "layout",
                     "a top-level strided loop whose one statement updates with x[i]", _o_shape),
        Precondition("thread-cover", "layout",
                     "the loop starts at the global thread index and strides by the grid",
                     _o_cover),
        Precondition("order-free", "pipeline", "the statement is an atomic update",
                     _o_order_free),
        Precondition("byte-type", "dtype", "x points to unsigned bytes", _o_byte),
        Precondition("bound-type", "dtype", "the bound is a 64-bit unsigned variable", _o_bound),
        Precondition("helper-params", "storage",
                     "the statement's other names are kernel parameters", _o_params),
        Precondition("read-only", "storage", "x is not written in the kernel", _o_read_only),
        Precondition("block-size", "hardware", "at least 16 threads per block", _o_block),
        Precondition("fresh-names", "pipeline", "the new names are not used", _o_fresh),
    )

    unroll: object = option(1, OneOf(IntRange(1, 16), Identifier(words=())),
                            "uint4 loads in flight per iteration (a number or a constant)",
                            tune=True)
    pragma: bool = option(True, Bool(), "#pragma unroll on the unrolled loops")
    cast: str = option("uintptr_t", Choice("uintptr_t", "size_t"), "integer type of the address")
    forceinline: bool = option(True, Bool(), "declare the helpers __forceinline__")
    params: str = option("same", NameListOrSame(), "the helpers' parameter names")
    wvar: str = option("w", Identifier(words=()), "the word helper's word parameter")
    value: str = option("v", Identifier(words=()), "the vector helper's uint4 parameter")
    head: str = option("auto", Identifier(), "name of the head count")
    nvec: str = option("auto", Identifier(), "name of the number of uint4 units")
    tail: str = option("auto", Identifier(), "name of the tail's first byte")
    vptr: str = option("auto", Identifier(), "name of the uint4 pointer")
    array: str = option("auto", Identifier(), "name of the unrolled loads' array")
    uvar: str = option("auto", Identifier(), "counter of the unrolled loops")
    vec: str = option("auto", Identifier(), "name of the uint4 helper")
    word: str = option("auto", Identifier(), "name of the word helper")

    def rewrite(self, site, ctx):
        unit, fn = site.unit, site.function
        lp = _loop(site)
        ind = line_indent(unit, lp.loop.start_byte)
        st = line_indent(unit, lp.stmt.start_byte)[len(ind):] or "    "
        helpers, pre, loops, body, epi, _ = texts(self, unit, fn, lp, ind, st)
        at = lp.decl if lp.decl is not None and self.unroll != 1 else lp.loop
        if lp.decl is not None and self.unroll == 1:
            sts = statements(fn.body)
            k = _top_index(fn, lp.loop)
            if k and sts[k - 1].id == lp.decl.id:
                at = lp.decl
        top = fn.outer
        while top.parent is not None and top.parent.type == "linkage_specification":
            top = top.parent
        edits = [Edit.insert(top.start_byte, helpers),
                 Edit.insert(at.start_byte, pre + "\n\n" + ind)]
        if loops:
            edits.append(Edit.insert(lp.loop.start_byte, loops))
        body_node = lp.stmt.parent
        edits += [Edit(lp.n.start_byte, lp.n.end_byte, _names(self, unit, fn)["nvec"]),
                  Edit(body_node.start_byte, body_node.end_byte, body),
                  Edit.insert(lp.loop.end_byte, "\n" + epi)]
        return edits

    def inverse_for(self, site, ctx):
        return ScalarizeBytes()


# ================================================================== scalarize-bytes
_DV = re.compile(r"^const uint4\* (\w+) = reinterpret_cast<const uint4\*>\((\w+) \+ (\w+)\);$")
_HEAD = re.compile(r"^size_t (\w+) = \(16u - \(\((uintptr_t|size_t)\)(\w+) & 15u\)\) & 15u;$")


@dataclass
class _Split:
    opts: dict
    loop: object
    call: object          # VEC(args, dv[i])
    vec_fn: object
    word_fn: object
    prologue: list        # head .. dv statements
    unrolled: object      # the unrolled loop or None
    ifs: list
    stmt_text: str        # the scalar statement (x[i])
    n_text: str


def _split(site) -> "_Split | str":
    unit, fn, loop = site.unit, site.function, site.node
    got = _FOR.match(unit, loop) or _FOR_DECL.match(unit, loop)
    if got is None:
        return "not a strided for loop"
    i = unit.text(got["I"])
    body = got["BODY"]
    vs = statements(body)
    if body.type != "compound_statement" or len(vs) != 1 or \
            vs[0].type != "expression_statement" or not vs[0].named_children or \
            vs[0].named_children[0].type != "call_expression":
        return "the loop body is not one helper call `vec(..., dv[i]);`"
    call = vs[0].named_children[0]
    args = [a for a in call.child_by_field_name("arguments").named_children if a.type != "comment"]
    if not args or args[-1].type != "subscript_expression" or \
            norm(unit.text(args[-1].child_by_field_name("indices"))) != f"[{i}]":
        return "the helper's last argument is not `dv[i]`"
    dvn = unit.text(args[-1].child_by_field_name("argument"))
    vname = unit.text(call.child_by_field_name("function"))
    vec_fn = next((f for f in unit.device_functions() if f.name == vname and not f.is_kernel), None)
    if vec_fn is None:
        return f"{vname} is not a __device__ function of the file"
    k = _top_index(fn, loop)
    if k is None:
        return "the loop is not a statement of the kernel's body"
    sts = statements(fn.body)
    xk = next((j for j, s in enumerate(sts[:k]) if s.type == "declaration" and
               _DV.match(norm(unit.text(s))) and _DV.match(norm(unit.text(s))).group(1) == dvn),
              None)
    if xk is None or xk < 4:
        return (f"{dvn} is not declared at the kernel's top level as "
                "`const uint4* dv = reinterpret_cast<const uint4*>(x + head);` after the prologue")
    mx = _DV.match(norm(unit.text(sts[xk])))
    data, head = mx.group(2), mx.group(3)
    hm = _HEAD.match(norm(unit.text(sts[xk - 4])))
    if hm is None or hm.group(1) != head or hm.group(3) != data:
        return f"the statement four above {dvn}'s declaration does not compute the head {head}"
    nm = re.fullmatch(r"const size_t (\w+) = \((.+) - (\w+)\) / 16;", norm(unit.text(sts[xk - 2])))
    tm = re.fullmatch(r"const size_t (\w+) = (\w+) \+ (\w+) \* 16;", norm(unit.text(sts[xk - 1])))
    if nm is None or tm is None:
        return "the prologue does not declare the unit count and the tail's start"
    n_text = nm.group(2)
    if unit.text(got["N"]) != nm.group(1):
        return f"the loop runs to {unit.text(got['N'])}, not to the unit count {nm.group(1)}"
    between = sts[xk + 1:k]
    unrolled, opts = None, {}
    if between and between[-1].type == "for_statement":
        unrolled = between[-1]
        um = re.fullmatch(rf"for \(; {i} \+ (?:(\d+)|\((\w+) - 1\)) \* \(?\w+\)? < \w+; {i} \+= "
                          rf"(\w+) \* .*", norm(unit.text(unrolled)).split("{")[0].strip() + " x")
        if um is None:
            return "the loop before the unit loop is not an unrolled unit loop"
        u = um.group(3)
        opts["unroll"] = int(u) if u.isdigit() else u
        opts["pragma"] = "#pragma" in unit.text(unrolled)
        inner = [s for s in statements(unrolled.child_by_field_name("body"))
                 if s.type == "declaration"]
        am = re.fullmatch(r"uint4 (\w+)\[.+\];", norm(unit.text(inner[0]))) if inner else None
        loops = [s for s in statements(unrolled.child_by_field_name("body"))
                 if s.type == "for_statement"]
        um2 = re.match(r"for \(int (\w+) = 0;", norm(unit.text(loops[0]))) if loops else None
        if am is None or um2 is None:
            return "the unrolled unit loop does not load into `uint4 v[U]`"
        opts["array"], opts["uvar"] = am.group(1), um2.group(1)
    ifs = sts[k + 1:k + 3]
    if len(ifs) != 2 or any(s.type != "if_statement" for s in ifs):
        return "the loop is not followed by the head and the tail `if`s"
    cons = ifs[0].child_by_field_name("consequence")
    hs = statements(cons)
    if cons.type != "compound_statement" or len(hs) != 1:
        return "the head `if` does not hold one braced statement"
    cond = norm(unit.text(ifs[0].child_by_field_name("condition")))
    cm = re.fullmatch(rf"\((.+) < {head}\)", cond)
    if cm is None:
        return f"the head `if` does not test `start < {head}`"
    e0 = cm.group(1)
    reps = [(m.start_byte, m.end_byte, f"{data}[{i}]") for m in unit.walk(hs[0])
            if m.type == "subscript_expression" and
            unit.text(m.child_by_field_name("argument")) == data and
            norm(unit.text(m.child_by_field_name("indices"))) == f"[{e0}]"]
    if len(reps) != 1:
        return f"the head statement does not read {data}[{e0}] once"
    out, pos = [], hs[0].start_byte
    for s0, e1, t in reps:
        out.append(unit.source[pos:s0].decode())
        out.append(t)
        pos = e1
    out.append(unit.source[pos:hs[0].end_byte].decode())
    stmt_text = "".join(out)
    # the helpers
    wcalls = [s.named_children[0] for s in statements(vec_fn.body)
              if s.type == "expression_statement" and s.named_children and
              s.named_children[0].type == "call_expression"]
    if len(wcalls) != 4 or not vec_fn.params:
        return f"{vname} does not call a word helper four times"
    wname = unit.text(wcalls[0].child_by_field_name("function"))
    word_fn = next((f for f in unit.device_functions() if f.name == wname and not f.is_kernel),
                   None)
    if word_fn is None or not word_fn.params:
        return f"{wname} is not a __device__ function of the file"
    hp = [p.name for p in vec_fn.params[:-1]]
    kargs = [norm(unit.text(a)) for a in args[:-1]]
    opts.update({
        "cast": hm.group(2), "forceinline": "__forceinline__" in vec_fn.attributes,
        "params": "same" if hp == kargs else "+".join(hp), "wvar": word_fn.params[-1].name,
        "value": vec_fn.params[-1].name, "head": head, "nvec": nm.group(1),
        "tail": tm.group(1), "vptr": dvn, "vec": vname, "word": wname})
    if unrolled is None:
        opts["unroll"] = 1
    return _Split(opts, loop, call, vec_fn, word_fn, sts[xk - 4:xk + 1], unrolled, ifs,
                  stmt_text, n_text)


def _fn_span(unit, f):
    """The definition's bytes with the blank lines after it."""
    node = f.outer
    e = node.end_byte
    src = unit.source
    while e < len(src) and src[e:e + 1] in (b"\n", b" ", b"\t"):
        e += 1
    return node.start_byte, e


def scalar_edits(site, sp: _Split) -> list:
    unit, fn = site.unit, site.function
    edits = [Edit.delete(*_fn_span(unit, sp.word_fn)), Edit.delete(*_fn_span(unit, sp.vec_fn))]
    sts = statements(fn.body)
    k = _top_index(fn, sp.prologue[-1])
    nxt = sts[k + 1]
    edits.append(Edit.delete(sp.prologue[0].start_byte, nxt.start_byte))
    if sp.unrolled is not None:
        edits.append(Edit.delete(sp.unrolled.start_byte, sp.loop.start_byte))
    got = _FOR.match(unit, sp.loop) or _FOR_DECL.match(unit, sp.loop)
    nn = got["N"]
    edits.append(Edit(nn.start_byte, nn.end_byte, sp.n_text))
    body = got["BODY"]
    ind = line_indent(unit, sp.loop.start_byte)
    st = line_indent(unit, statements(body)[0].start_byte)[len(ind):] or "    "
    edits.append(Edit(body.start_byte, body.end_byte, f"{{\n{ind}{st}{sp.stmt_text}\n{ind}}}"))
    edits.append(Edit.delete(sp.loop.end_byte, sp.ifs[-1].end_byte))
    return edits


def _s_shape(site, ctx) -> Verdict:
    sp = _split(site)
    if isinstance(sp, str):
        return Verdict.no(sp)
    return Verdict.yes(f"a uint4 split of `{norm(sp.stmt_text)}` with a scalar head and tail"
                       + (f", {sp.opts['unroll']} units in flight" if sp.unrolled is not None
                          else ""))


def _s_type(site, ctx) -> Verdict:
    sp = _split(site)
    if isinstance(sp, str):
        return Verdict.unknown(sp)
    data = _DV.match(norm(site.unit.text(sp.prologue[-1]))).group(2)
    par = _param(site.function, data)
    t = norm(par.base_type) if par is not None and par.pointer == 1 else None
    if t not in BYTES:
        return Verdict.no(f"{data} points to {t}, but is read as uint4 units of 16 bytes")
    return Verdict.yes(f"uint4 units of {t} bytes")


def _s_private(site, ctx) -> Verdict:
    sp = _split(site)
    if isinstance(sp, str):
        return Verdict.unknown(sp)
    unit = site.unit
    for f, allowed in ((sp.vec_fn, {sp.call.id}), (sp.word_fn, None)):
        calls = [n for n in unit.walk(unit.root) if n.type == "call_expression" and
                 unit.text(n.child_by_field_name("function")) == f.name]
        if allowed is not None:
            extra = [c for c in calls if c.id not in allowed and not (
                sp.unrolled is not None and inside(c, sp.unrolled))]
        else:
            extra = [c for c in calls if not inside(c, sp.vec_fn.node)]
        if extra:
            return Verdict.no(f"{f.name} is also called at line "
                              f"{unit.line_col(extra[0].start_byte)[0]}: it cannot be removed")
    return Verdict.yes(f"{sp.vec_fn.name} and {sp.word_fn.name} serve only this split")


def _s_regenerate(site, ctx) -> Verdict:
    from kltrans.passes.manager import run_pass
    from kltrans.syntax import apply_edits, parse

    sp = _split(site)
    if isinstance(sp, str):
        return Verdict.unknown(sp)
    unit = site.unit
    try:
        back = parse(apply_edits(unit, scalar_edits(site, sp)).source, unit.path)
        cand = [s for s in VectorizeBytes(**sp.opts).sites(back, replace(
            ctx, kernel=site.function.name, force=False))]
        ok = False
        for s in cand:
            again, rep = run_pass(back, VectorizeBytes(**sp.opts),
                                  replace(ctx, kernel=site.function.name, force=False),
                                  only_site=s.index)
            if rep.applied and tokens(again, again.root) == tokens(unit, unit.root):
                ok = True
                break
    except Exception as e:  # a malformed intermediate
        return Verdict.no(f"cannot rebuild the split: {type(e).__name__}: {e}")
    if not ok:
        return Verdict.no("the helpers, head, unit loops and tail are not what vectorize-bytes "
                          "writes for the scalar loop (names and options read from the code)")
    return Verdict.yes("vectorize-bytes writes exactly this split from the scalar loop")


@dataclass(frozen=True)
class ScalarizeBytes(Pass):
    """Turn a uint4 split of a byte loop (helpers, head, unit loops, tail) back into one
    scalar grid-stride loop.

    Before::

        __device__ void hg_count_word(unsigned int* col, unsigned int w) { ...4 bytes... }
        __device__ void hg_count_vec(unsigned int* col, uint4 v) { ...4 words... }
        ...
        size_t head = (16u - ((uintptr_t)data & 15u)) & 15u;
        if (head > count) {
            head = count;
        }
        const size_t nvec = (count - head) / 16;
        const size_t tail_start = head + nvec * 16;
        const uint4* dv = reinterpret_cast<const uint4*>(data + head);
        size_t i = tid;
        for (; i + (HG_UNROLL - 1) * nthreads < nvec; i += HG_UNROLL * nthreads) { ... }
        for (; i < nvec; i += nthreads) {
            hg_count_vec(bins, dv[i]);
        }
        if (tid < head) {
            atomicAdd(bins + (unsigned int)data[tid], 1u);
        }
        if (tid < count - tail_start) {
            atomicAdd(bins + (unsigned int)data[tail_start + tid], 1u);
        }

    After ``scalarize-bytes``::

        size_t i = tid;
        for (; i < count; i += nthreads) {
            atomicAdd(bins + (unsigned int)data[i], 1u);
        }

    The scalar statement is the head's, with ``x[start]`` read as ``x[i]``. Recognized:
    exactly what ``vectorize-bytes`` writes for that loop (checked by writing it again and
    comparing tokens); the options (names, unroll factor, pragmas, cast, helper parameter
    names) are read from the code and handed back by ``inverse_for``. The helpers are
    removed with the split.

    Preconditions: split-shape (layout: prologue, optional unrolled unit loop, unit loop
    calling a helper with ``dv[i]``, head and tail ``if``s), vector-type (dtype: the
    array holds unsigned bytes), helpers-private (storage: the helpers are called only by
    this split), regenerates (pipeline: vectorize-bytes gives this kernel back).

    Options: none.
    """

    name = "scalarize-bytes"
    kind = "simplify"
    inverse = "vectorize-bytes"
    anchor = Rule(any=(Rule(pattern="for (; $I < $N; $I += $S) $BODY;"),
                       Rule(pattern="for ($T $I = $E; $I < $N; $I += $S) $BODY;")),
                  inside_kernel=True, constraints={"I": {"kind": "identifier"}})
    preconditions = (
        Precondition("split-shape", "layout",
                     "helpers, head, unit loops and tail as vectorize-bytes writes them",
                     _s_shape),
        Precondition("vector-type", "dtype", "the uint4 units are read from unsigned bytes",
                     _s_type),
        Precondition("helpers-private", "storage", "the helpers are only called by this split",
                     _s_private),
        Precondition("regenerates", "pipeline",
                     "vectorize-bytes writes this kernel back from the scalar loop",
                     _s_regenerate),
    )

    def rewrite(self, site, ctx):
        return scalar_edits(site, _split(site))

    def inverse_for(self, site, ctx):
        sp = _split(site)
        if isinstance(sp, str):
            return VectorizeBytes()
        return VectorizeBytes(**sp.opts)


__all__ = ["ScalarizeBytes", "VectorizeBytes"]
