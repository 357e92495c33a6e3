"""Vector loads for a grid-stride reduction with a scalar head and tail:
``vectorize-split`` (optimize) and its inverse ``scalarize-split`` (simplify).

A grid-stride loop that folds ``x[i]`` into a per-thread accumulator::

    for (; i < count; i += nthreads) { acc += x[i]; }

reads ``x`` as 16-byte vectors from the first 16-byte boundary on: a scalar *head*
(the 0..3 elements before that boundary, one per thread), the whole ``float4`` units
(grid-stride over units), and a scalar *tail* (the 0..3 elements after the last whole
unit, one per thread). Any base address and any count work; no alignment fact is needed.
Each thread folds a different set of elements than before, so the pass requires that
only the sum over all threads matters (the accumulator goes to one atomic afterwards).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.affine import Affine, affine_of
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.pattern import Pattern
from kltrans.match.predicates import pure
from kltrans.passes import Bool, Choice, Identifier, IntRange, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.passes.reductions import squash, unwrap, wrap
from kltrans.passes.guard import GLOBAL_INDEX, index_decl
from kltrans.passes.rewrite import (
    contract_of, indent_of as line_indent, norm, statements, used_names)

ELEMENTS = {"float": "float", "int": "int", "unsigned int": "uint", "unsigned": "uint"}
OPS = {"+=": "+", "|=": "|", "&=": "&", "^=": "^"}
ATOMIC = {"+": "atomicAdd", "|": "atomicOr", "&": "atomicAnd", "^": "atomicXor"}
GRID = Affine.sym("blockDim.x") * Affine.sym("gridDim.x")
COMPONENTS = "xyzw"
_FOR = Pattern.compile("for (; $I < $N; $I += $S) $BODY;")
_FOR_DECL = Pattern.compile("for ($T $I = $E; $I < $N; $I += $S) $BODY;")
DEFAULT_NAMES = {"head": ("head", "n_head", "head_n"), "nvec": ("nvec", "n_vec", "nvec_"),
                 "tail": ("tail_start", "tail0", "tail_begin"),
                 "vptr": ("xv", "vptr", "x_vec"), "vec": ("v", "vv", "vec")}


def _unsigned_wide(t: str | None) -> bool:
    if t is None:
        return False
    t = norm(t.replace("const", ""))
    return t in ("size_t", "unsigned long", "unsigned long long", "unsigned long int",
                 "unsigned long long int", "uint64_t")


# ------------------------------------------------------------------ the scalar loop
@dataclass
class _Scalar:
    loop: object
    i: str
    n: object
    s: object
    e0: str  # the index's first value (text)
    e0_node: object
    acc: str
    op: str
    expr: object  # E: the folded expression
    ptr: str
    stmt: object  # the body statement
    braced: bool


def _decl_type(unit, fn, name: str) -> str | None:
    for n in unit.walk(fn.node):
        if n.type not in ("declaration", "parameter_declaration"):
            continue
        for d in n.children_by_field_name("declarator"):
            x = d
            while x is not None and x.type != "identifier":
                x = x.child_by_field_name("declarator")
            if x is not None and unit.text(x) == name:
                return norm(unit.text(n.child_by_field_name("type")))
    return None


def _param(fn, name: str):
    return next((p for p in fn.params if p.name == name), None)


def _parse_scalar(unit, fn, loop) -> "_Scalar | str":
    if loop is None or loop.type != "for_statement":
        return "not a for loop"
    got = _FOR.match(unit, loop)
    e0_node = None
    if got is not None:
        i = unit.text(got["I"])
        d = index_decl(unit, fn, i)
        if isinstance(d, str):
            return d
        e0_node = d.value
    else:
        got = _FOR_DECL.match(unit, loop)
        if got is None:
            return "the loop is not `for ([T i = E]; i < n; i += s)`"
        i = unit.text(got["I"])
        e0_node = got["E"]
    if got["I"].type != "identifier":
        return "the loop index is not a variable"
    body = got["BODY"]
    sts = statements(body)
    if len(sts) != 1 or sts[0].type != "expression_statement":
        return "the loop body is not one statement `acc += E(x[i]);`"
    e = sts[0].named_children[0] if sts[0].named_children else None
    if e is None or e.type != "assignment_expression":
        return "the loop body is not a compound assignment `acc op= ...`"
    op = unit.text(e.child_by_field_name("operator"))
    left = e.child_by_field_name("left")
    if op not in OPS or left.type != "identifier":
        return f"`{norm(unit.text(e))}` is not `acc += / |= / &= / ^= ...` on a variable"
    expr = e.child_by_field_name("right")
    ptrs = set()
    for m in unit.walk(expr):
        if m.type == "identifier" and unit.text(m) == i:
            sub = m.parent.parent if m.parent is not None else None
            idx = m.parent
            if sub is None or sub.type != "subscript_expression" or idx.type != \
                    "subscript_argument_list" or len(idx.named_children) != 1 or \
                    sub.child_by_field_name("argument").type != "identifier":
                return f"{i} is used as `{norm(unit.text(m.parent))[:40]}`, not only as x[{i}]"
            ptrs.add(unit.text(sub.child_by_field_name("argument")))
    if len(ptrs) != 1:
        return f"the folded value reads {len(ptrs)} arrays at {i}: the split needs exactly one"
    return _Scalar(loop, i, got["N"], got["S"], unit.text(e0_node), e0_node,
                   unit.text(left), OPS[op], expr, ptrs.pop(), sts[0],
                   body.type == "compound_statement")


def _lane_text(unit, sc: _Scalar, what: str) -> str:
    """E with every ``x[i]`` replaced by ``what``, wrapped unless primary."""
    reps = []
    for m in unit.walk(sc.expr):
        if m.type == "subscript_expression":
            a = m.child_by_field_name("argument")
            idx = m.child_by_field_name("indices")
            if a is not None and unit.text(a) == sc.ptr and idx is not None and \
                    norm(unit.text(idx)) == f"[{sc.i}]":
                reps.append((m.start_byte, m.end_byte, what))
    out, pos = [], sc.expr.start_byte
    for s, e, t in sorted(reps):
        out.append(unit.source[pos:s].decode("utf-8"))
        out.append(t)
        pos = e
    out.append(unit.source[pos:sc.expr.end_byte].decode("utf-8"))
    text = "".join(out)
    if sc.expr.type in ("identifier", "number_literal", "subscript_expression",
                        "call_expression", "field_expression"):
        return text
    return f"({text})"


def _names(p, unit, fn) -> dict:
    used = used_names(unit, fn)
    out = {}
    for k, cands in DEFAULT_NAMES.items():
        v = getattr(p, k)
        if v == "auto":
            v = next((c for c in cands if c not in used and c not in out.values()),
                     cands[0] + "_")
        out[k] = v
    return out


def _elem(unit, fn, sc) -> str | None:
    par = _param(fn, sc.ptr)
    if par is None or par.pointer != 1:
        return None
    return norm(par.base_type.replace("const", ""))


def split_texts(p, unit, fn, sc: _Scalar, ind: str, st: str):
    """(prologue, vector body, epilogue) that vectorize-split writes for ``sc``."""
    nm = _names(p, unit, fn)
    w = p.width
    elem = _elem(unit, fn, sc)
    vt = f"{ELEMENTS[elem]}{w}"
    n = wrap(unit, sc.n)
    h, nv, ts, xv, v = nm["head"], nm["nvec"], nm["tail"], nm["vptr"], nm["vec"]
    b, m = 4 * w, 4 * w - 1
    pre = [f"size_t {h} = (({b}u - (({p.cast}){sc.ptr} & {m}u)) & {m}u) / sizeof({elem});"]
    if p.braces:
        pre += [f"{ind}if ({h} > {n}) {{", f"{ind}{st}{h} = {n};", f"{ind}}}"]
    else:
        pre += [f"{ind}if ({h} > {n}) {h} = {n};"]
    r = " __restrict__" if p.restrict else ""
    pre += [f"{ind}const size_t {nv} = ({n} - {h}) / {w};",
            f"{ind}const size_t {ts} = {h} + {nv} * {w};",
            f"{ind}const {vt}*{r} {xv} = reinterpret_cast<const {vt}*>({sc.ptr} + {h});"]
    lanes = [_lane_text(unit, sc, f"{v}.{c}") for c in COMPONENTS[:w]]
    o = sc.op
    if w == 4:
        comb = f"({lanes[0]} {o} {lanes[1]}) {o} ({lanes[2]} {o} {lanes[3]})"
    else:
        comb = f"{lanes[0]} {o} {lanes[1]}"
    body = ["{", f"{ind}{st}const {vt} {v} = {xv}[{sc.i}];",
            f"{ind}{st}{sc.acc} {o}= {comb};", f"{ind}}}"]
    e0 = sc.e0
    head = _lane_text(unit, sc, f"{sc.ptr}[{e0}]")
    tail = _lane_text(unit, sc, f"{sc.ptr}[{ts} + {e0}]")
    if sc.expr.type not in ("identifier", "number_literal", "subscript_expression",
                            "call_expression", "field_expression"):
        head, tail = head[1:-1], tail[1:-1]
    epi = []
    for cond, val in ((f"{e0} < {h}", head), (f"{e0} < {n} - {ts}", tail)):
        if p.braces:
            epi += [f"{ind}if ({cond}) {{", f"{ind}{st}{sc.acc} {o}= {val};", f"{ind}}}"]
        else:
            epi += [f"{ind}if ({cond}) {sc.acc} {o}= {val};"]
    return "\n".join(pre), "\n".join(body), "\n".join(epi), nm


def _top_index(fn, node) -> int | None:
    sts = statements(fn.body)
    return next((k for k, s in enumerate(sts) if s.id == node.id), None)


# ------------------------------------------------------------------ preconditions
def _scalar(site):
    return _parse_scalar(site.unit, site.function, site.node)


def _o_shape(site, ctx) -> Verdict:
    sc = _scalar(site)
    if isinstance(sc, str):
        return Verdict.no(sc)
    unit, fn = site.unit, site.function
    k = _top_index(fn, sc.loop)
    if k is None:
        return Verdict.no("the loop is not a statement of the kernel's body")
    above = site.pass_.above
    if above > k:
        return Verdict.no(f"above={above}, but only {k} statements precede the loop")
    sts = statements(fn.body)
    names = {unit.text(m) for m in unit.walk(sc.n) if m.type == "identifier"}
    for s in sts[k - above:k]:
        for m in unit.walk(s):
            if m.type == "identifier" and unit.text(m) in names and m.parent is not None and \
                    m.parent.type in ("init_declarator", "declaration"):
                return Verdict.no(f"{unit.text(m)} is declared after the point where the "
                                  "prologue goes")
    if not pure(unit, sc.expr) or not pure(unit, sc.n) or not pure(unit, sc.e0_node):
        return Verdict.no("the folded value, the bound or the first index has side effects")
    return Verdict.yes(f"`{sc.acc} {sc.op}= ...{sc.ptr}[{sc.i}]...` over a strided loop")


def _cover(site, ctx) -> Verdict:
    sc = _scalar(site)
    if isinstance(sc, str):
        return Verdict.unknown(sc)
    unit, fn = site.unit, site.function
    a = affine_of(unit, sc.e0_node, fn)
    if a is None or a != GLOBAL_INDEX:
        return Verdict.no(f"the loop starts at `{norm(sc.e0)}`, not the global thread index: "
                          "the head and tail threads would not be 0..3")
    s = affine_of(unit, sc.s, fn)
    if s is None or s != GRID:
        return Verdict.no(f"the stride `{norm(unit.text(sc.s))}` is not the grid size "
                          "blockDim.x * gridDim.x")
    return Verdict.yes("a grid-stride loop from the global thread index")


def partition_free(unit, fn, acc: str, op: str, after) -> Verdict:
    uses = [m for m in unit.walk(fn.body) if m.type == "identifier" and unit.text(m) == acc
            and m.start_byte >= after]
    if len(uses) != 1:
        return Verdict.no(f"{acc} is used {len(uses)} times after the loop: only a single "
                          f"{ATOMIC[op]} of it keeps the result independent of which thread "
                          "folds which element")
    m = uses[0]
    args = m.parent
    call = args.parent if args is not None else None
    if call is None or call.type != "call_expression" or \
            unit.text(call.child_by_field_name("function")) != ATOMIC[op]:
        return Verdict.no(f"`{norm(unit.text(m.parent))[:50]}` uses {acc}: only a single "
                          f"{ATOMIC[op]} of it keeps the result independent of the partition")
    al = [c for c in args.named_children if c.type != "comment"]
    if len(al) != 2 or al[1].id != m.id:
        return Verdict.no(f"{acc} is not the value of `{norm(unit.text(call))}`")
    return Verdict.yes(f"{acc} only goes to {ATOMIC[op]}: the total over all threads is what "
                       "counts")


def _o_partition(site, ctx) -> Verdict:
    sc = _scalar(site)
    if isinstance(sc, str):
        return Verdict.unknown(sc)
    return partition_free(site.unit, site.function, sc.acc, sc.op, sc.loop.end_byte)


def _o_element(site, ctx) -> Verdict:
    sc = _scalar(site)
    if isinstance(sc, str):
        return Verdict.unknown(sc)
    elem = _elem(site.unit, site.function, sc)
    if elem is None:
        return Verdict.no(f"{sc.ptr} is not a pointer parameter")
    if elem not in ELEMENTS:
        return Verdict.no(f"{sc.ptr} points to {elem}: the split handles 4-byte float, int, "
                          "unsigned")
    if sc.op != "+" and elem == "float":
        return Verdict.no(f"`{sc.op}=` on float")
    return Verdict.yes(f"{sc.ptr}: {elem} -> {ELEMENTS[elem]}{site.pass_.width}")


def _o_bound(site, ctx) -> Verdict:
    sc = _scalar(site)
    if isinstance(sc, str):
        return Verdict.unknown(sc)
    unit, fn = site.unit, site.function
    n = sc.n
    if n.type != "identifier":
        return Verdict.no(f"the bound `{norm(unit.text(n))}` is not a variable")
    t = _decl_type(unit, fn, unit.text(n))
    if not _unsigned_wide(t):
        return Verdict.no(f"the bound {unit.text(n)} is {t}: the head is clamped to it and "
                          "subtracted from it in size_t, which needs a non-negative 64-bit "
                          "bound (e.g. `const size_t count = n > 0 ? (size_t)n : 0;`)")
    return Verdict.yes(f"{unit.text(n)} is {t}")


def _o_reassoc(site, ctx) -> Verdict:
    sc = _scalar(site)
    if isinstance(sc, str):
        return Verdict.unknown(sc)
    elem = _elem(site.unit, site.function, sc)
    if elem != "float":
        return Verdict.yes(f"{elem} {sc.op} is exact in any order")
    if ctx.assumed("reassoc") or ctx.assumed("fast_math") or site.pass_.reassoc:
        return Verdict.yes("the float sum may be reassociated (--assume reassoc / reassoc=true)")
    return Verdict.no("the lanes of a vector are summed pairwise and the threads fold other "
                      "elements: the float sum rounds differently; give --assume reassoc")


def _o_read_only(site, ctx) -> Verdict:
    sc = _scalar(site)
    if isinstance(sc, str):
        return Verdict.unknown(sc)
    unit, fn = site.unit, site.function
    for m in unit.walk(fn.body):
        if m.type in ("assignment_expression", "update_expression"):
            tgt = m.child_by_field_name("left") or m.child_by_field_name("argument")
            if tgt is not None and any(x.type == "identifier" and unit.text(x) == sc.ptr
                                       for x in unit.walk(tgt)):
                return Verdict.no(f"{sc.ptr} is written at line {unit.line_col(m.start_byte)[0]}")
    return Verdict.yes(f"{sc.ptr} is only read")


def _o_block(site, ctx) -> Verdict:
    from kltrans.passes.launch_facts import const_value

    c, why = contract_of(site)
    if c is None:
        return Verdict.no(why)
    v = const_value(site.unit, c.block[0], ctx)
    w = site.pass_.width
    if v is None:
        return Verdict.unknown(f"block={c.block[0]} is not a known constant")
    if v < w:
        return Verdict.no(f"block={v}: the {w - 1} head and tail elements need {w - 1} threads")
    return Verdict.yes(f"block={v} >= {w}: threads 0..{w - 2} take the head and the tail")


def _o_fresh(site, ctx) -> Verdict:
    nm = _names(site.pass_, site.unit, site.function)
    used = used_names(site.unit, site.function)
    vals = list(nm.values())
    if len(set(vals)) != len(vals):
        return Verdict.no(f"two of the new names are equal ({', '.join(vals)})")
    for v in vals:
        if v in used:
            return Verdict.no(f"the name {v} is already used in {site.function.name}")
    return Verdict.yes(f"{', '.join(vals)} are fresh")


@dataclass(frozen=True)
class VectorizeSplit(Pass):
    """Read a grid-stride reduction's array as 16-byte vectors, with a scalar head and tail.

    Before::

        // kltrans: launch reduce_sum grid=min(ceil_div(n, 256), 1024) block=256
        const size_t count = n > 0 ? (size_t)n : 0;
        float acc = 0.0f;
        for (size_t i = tid; i < count; i += nthreads) { acc += x[i]; }
        atomicAdd(out, acc);

    After ``vectorize-split`` (``--assume reassoc`` for a float sum)::

        size_t head = ((16u - ((size_t)x & 15u)) & 15u) / sizeof(float);
        if (head > count) {
            head = count;
        }
        const size_t nvec = (count - head) / 4;
        const size_t tail_start = head + nvec * 4;
        const float4* xv = reinterpret_cast<const float4*>(x + head);
        float acc = 0.0f;
        for (size_t i = tid; i < nvec; i += nthreads) {
            const float4 v = xv[i];
            acc += (v.x + v.y) + (v.z + v.w);
        }
        if (tid < head) {
            acc += x[tid];
        }
        if (tid < count - tail_start) {
            acc += x[tail_start + tid];
        }
        atomicAdd(out, acc);

    The loop's one statement ``acc op= E(x[i])`` (op ``+``, or ``| & ^`` on integers) is
    applied to each lane and the lanes combined pairwise. The prologue goes ``above``
    statements above the loop. Thread ``t`` of the grid also takes head element ``t``
    and tail element ``t``. Alignment is not assumed: it is computed at run time (the
    head), so any address and any count are handled (a guard, not a context fact).

    Preconditions: split-loop (layout: ``for ([T i = E]; i < n; i += s)`` at the kernel's
    top level with one statement ``acc op= E`` reading one array only as ``x[i]``),
    thread-cover (layout: ``i`` starts at the global thread index and strides by the grid
    size), partition-free (pipeline: after the loop ``acc`` only feeds one matching
    atomic, so which thread folds which element does not matter), element-type (dtype:
    ``x`` points to 4-byte float/int/unsigned), bound-type (dtype: ``n`` is a 64-bit
    unsigned variable), reassociation (dtype: float needs ``--assume reassoc`` or
    ``reassoc=true``), read-only (storage: ``x`` is not written), block-size (hardware:
    the block has at least ``width`` threads for the head and the tail), fresh-names
    (pipeline).

    Options: ``width`` (4: 16-byte ``float4``/``int4``/``uint4``; 2: 8-byte), ``head``,
    ``nvec``, ``tail``, ``vptr``, ``vec`` (names; auto: head, nvec, tail_start, xv, v),
    ``cast`` (``size_t`` or ``uintptr_t``: the address cast of the head), ``restrict``
    (declare the vector pointer ``__restrict__``), ``braces`` (brace the ifs' one
    statement), ``above`` (0..16 statements between the prologue and the loop),
    ``reassoc`` (accept a reassociated float sum).
    """

    name = "vectorize-split"
    kind = "optimize"
    inverse = "scalarize-split"
    anchor = Rule(any=(Rule(pattern="for (; $I < $N; $I += $S) $BODY;"),
                       Rule(pattern="for ($T $I = $E; $I < $N; $I += $S) $BODY;")),
                  inside_kernel=True, constraints={"I": {"kind": "identifier"}})
    preconditions = (
        Precondition("split-loop", "layout",
                     "a top-level strided loop whose body is acc op= E(x[i])", _o_shape),
        Precondition("thread-cover", "layout",
                     "the loop starts at the global thread index and strides by the grid",
                     _cover),
        Precondition("partition-free", "pipeline",
                     "after the loop the accumulator only feeds one matching atomic",
                     _o_partition),
        Precondition("element-type", "dtype",
                     "x points to 4-byte float, int or unsigned (bitwise ops on integers)",
                     _o_element),
        Precondition("bound-type", "dtype", "the bound is a 64-bit unsigned variable",
                     _o_bound),
        Precondition("reassociation", "dtype",
                     "integer folds are exact; a float sum needs --assume reassoc", _o_reassoc),
        Precondition("read-only", "storage", "x is not written in the kernel", _o_read_only),
        Precondition("block-size", "hardware",
                     "the block has at least width threads (head and tail)", _o_block),
        Precondition("fresh-names", "pipeline", "the new names are not used", _o_fresh),
    )

    width: int = option(4, Choice(4, 2), "elements per vector (float4 or float2)", tune=True)
    head: str = option("auto", Identifier(), "name of the head count")
    nvec: str = option("auto", Identifier(), "name of the number of vectors")
    tail: str = option("auto", Identifier(), "name of the tail's first element")
    vptr: str = option("auto", Identifier(), "name of the vector pointer")
    vec: str = option("auto", Identifier(), "name of the loaded vector")
    cast: str = option("size_t", Choice("size_t", "uintptr_t"), "integer type of the address")
    restrict: bool = option(False, Bool(), "declare the vector pointer __restrict__")
    braces: bool = option(True, Bool(), "brace the ifs' single statements")
    above: int = option(0, IntRange(0, 16), "statements between the prologue and the loop")
    reassoc: bool = option(False, Bool(), "accept a reassociated float sum")

    def rewrite(self, site, ctx):
        unit, fn = site.unit, site.function
        sc = _scalar(site)
        k = _top_index(fn, sc.loop)
        sts = statements(fn.body)
        ind = line_indent(unit, sc.loop.start_byte)
        st = line_indent(unit, sc.stmt.start_byte)[len(ind):] if sc.braced else ""
        st = st or "    "
        pre, body, epi, _ = split_texts(self, unit, fn, sc, ind, st)
        at = sts[k - self.above]
        if sc.braced:
            start = sc.stmt.parent.start_byte
        else:
            rp = [c for c in sc.loop.children if c.type == ")"][-1]
            start, body = rp.end_byte, " " + body
        return [Edit.insert(at.start_byte, pre + "\n" + ind),
                Edit(sc.n.start_byte, sc.n.end_byte, _names(self, unit, fn)["nvec"]),
                Edit(start, sc.loop.end_byte, body),
                Edit.insert(sc.loop.end_byte, "\n" + epi)]

    def inverse_for(self, site, ctx):
        sc = _scalar(site)
        return ScalarizeSplit(braces=not isinstance(sc, str) and sc.braced)


# ------------------------------------------------------------------ scalarize-split
@dataclass
class _Split:
    opts: dict
    scalar_expr: str  # the scalar statement's value, x[i] restored
    acc: str
    op: str
    n_text: str
    ptr: str
    prologue: list
    ifs: list
    loop: object
    vbody: object
    nv_node: object


_XV_DECL = re.compile(r"^const (float|int|uint)([24]) ?\*( __restrict__)? (\w+) = "
                      r"reinterpret_cast<const \1\2 ?\*>\((\w+) \+ (\w+)\);$")


def _split(site) -> "_Split | str":
    unit, fn, loop = site.unit, site.function, site.node
    got = _FOR.match(unit, loop) or _FOR_DECL.match(unit, loop)
    if got is None:
        return "not a strided for loop"
    i = unit.text(got["I"])
    nvn = got["N"]
    body = got["BODY"]
    vs = statements(body)
    if body.type != "compound_statement" or len(vs) != 2 or vs[0].type != "declaration":
        return "the loop body is not `const VT v = xv[i]; acc op= ...;`"
    m = re.fullmatch(r"const (\w+) (\w+) = (\w+)\[(\w+)\];", norm(unit.text(vs[0])))
    if m is None or m.group(4) != i:
        return "the loop body does not start with `const VT v = xv[i];`"
    vec, xv = m.group(2), m.group(3)
    k = _top_index(fn, loop)
    if k is None:
        return "the loop is not a statement of the kernel's body"
    sts = statements(fn.body)
    xk = next((j for j, s in enumerate(sts[:k]) if s.type == "declaration" and
               _XV_DECL.match(norm(unit.text(s))) and
               _XV_DECL.match(norm(unit.text(s))).group(4) == xv), None)
    if xk is None or xk < 4:
        return (f"{xv} is not declared at the kernel's top level as "
                "`const VT* xv = reinterpret_cast<const VT*>(x + head);` after the prologue")
    mx = _XV_DECL.match(norm(unit.text(sts[xk])))
    width, restrict, ptr, head = int(mx.group(2)), bool(mx.group(3)), mx.group(5), mx.group(6)
    hm = re.fullmatch(r"size_t (\w+) = \(\(\d+u - \(\((size_t|uintptr_t)\)(\w+) & \d+u\)\) & "
                      r"\d+u\) / sizeof\([\w ]+\);", norm(unit.text(sts[xk - 4])))
    if hm is None or hm.group(1) != head or hm.group(3) != ptr:
        return f"the statement four above {xv}'s declaration does not compute the head {head}"
    cast = hm.group(2)
    clamp = sts[xk - 3]
    braces = clamp.type == "if_statement" and \
        clamp.child_by_field_name("consequence").type == "compound_statement"
    nm = re.fullmatch(r"const size_t (\w+) = \((.+) - (\w+)\) / \d;", norm(unit.text(sts[xk - 2])))
    tm = re.fullmatch(r"const size_t (\w+) = (\w+) \+ (\w+) \* \d;", norm(unit.text(sts[xk - 1])))
    if nm is None or tm is None:
        return "the prologue does not declare nvec and tail_start"
    n_text = nm.group(2)
    opts = {"width": width, "head": head, "nvec": nm.group(1), "tail": tm.group(1),
            "vptr": xv, "vec": vec, "cast": cast, "restrict": restrict, "braces": braces,
            "above": k - xk - 1, "reassoc": True}
    if unit.text(nvn) != nm.group(1):
        return f"the loop runs to {unit.text(nvn)}, not to the vector count {nm.group(1)}"
    ifs = sts[k + 1:k + 3]
    if len(ifs) != 2 or any(s.type != "if_statement" for s in ifs):
        return "the loop is not followed by the head and the tail `if`s"
    # the folded value: the first lane of the vector statement
    a = vs[1].named_children[0] if vs[1].named_children else None
    if a is None or a.type != "assignment_expression" or \
            unit.text(a.child_by_field_name("operator")) not in OPS:
        return "the second statement is not `acc op= lanes`"
    op = OPS[unit.text(a.child_by_field_name("operator"))]
    acc = unit.text(a.child_by_field_name("left"))
    r = a.child_by_field_name("right")
    for _ in range(2 if width == 4 else 1):
        while r is not None and r.type == "parenthesized_expression" and width == 4 and \
                r.named_children and r.named_children[0].type == "binary_expression":
            r = r.named_children[0]
        if r is None or r.type != "binary_expression":
            return "the vector statement does not combine its lanes"
        r = r.child_by_field_name("left")
    lane = unwrap(unit, r)
    reps = []
    base = r.start_byte + (1 if unit.text(r) != lane else 0)
    for f in unit.walk(r):
        if f.type == "field_expression" and norm(unit.text(f)) == f"{vec}.x":
            reps.append((f.start_byte - base, f.end_byte - base))
    out, pos = [], 0
    for s0, e0 in sorted(reps):
        out.append(lane[pos:s0])
        out.append(f"{ptr}[{i}]")
        pos = e0
    out.append(lane[pos:])
    expr = "".join(out)
    return _Split(opts, expr, acc, op, n_text, ptr, sts[xk - 4:xk + 1], ifs, loop, body, nvn)


def _scalar_text(sp: _Split, braces: bool, ind: str, st: str) -> str:
    stmt = f"{sp.acc} {sp.op}= {sp.scalar_expr};"
    return f"{{\n{ind}{st}{stmt}\n{ind}}}" if braces else stmt


def _s_shape(site, ctx) -> Verdict:
    sp = _split(site)
    if isinstance(sp, str):
        return Verdict.no(sp)
    # regenerate: the scalar loop, then vectorize-split with the read options
    unit, fn = site.unit, site.function
    want, why = _regenerate(site, sp)
    if want is None:
        return Verdict.no(why)
    got = "".join(unit.text(s) for s in sp.prologue) + "".join(
        unit.text(s) for s in statements(fn.body)[_top_index(fn, sp.prologue[-1]) + 1:
                                                    _top_index(fn, sp.loop)]) + \
        unit.text(sp.loop) + "".join(unit.text(s) for s in sp.ifs)
    if squash(want) != squash(got):
        return Verdict.no("the head, vector loop and tail are not the split vectorize-split "
                          "writes for one scalar loop (names, cast and braces read from the "
                          "code)")
    return Verdict.yes(f"a width-{sp.opts['width']} split of `{sp.acc} {sp.op}= "
                       f"{norm(sp.scalar_expr)}` with a scalar head and tail")


def _regenerate(site, sp: _Split):
    """The text vectorize-split would write for the scalar form of ``sp``."""
    from kltrans.syntax import parse

    unit, fn = site.unit, site.function
    edits = _s_edits(site, sp, True)
    from kltrans.syntax import apply_edits

    try:
        scal = apply_edits(unit, edits)
    except Exception as e:  # pragma: no cover - malformed
        return None, f"cannot build the scalar form: {e}"
    scal = parse(scal.source, unit.path)
    kf = next((f for f in scal.kernels() if f.name == fn.name), None)
    lp = None
    for n in scal.walk(kf.body):
        if n.type == "for_statement" and n.start_byte >= sp.prologue[0].start_byte - 2:
            got = _parse_scalar(scal, kf, n)
            if not isinstance(got, str) and got.acc == sp.acc:
                lp = got
                break
    if lp is None:
        return None, "the scalar form is not a loop vectorize-split accepts"
    p = VectorizeSplit(**sp.opts)
    pre, body, epi, nm = split_texts(p, scal, kf, lp, "", "    ")
    if nm != {k: sp.opts[k] for k in DEFAULT_NAMES}:
        return None, "names"
    sts = statements(kf.body)
    k = _top_index(kf, lp.loop)
    mid = "".join(scal.text(s) for s in sts[k - p.above:k])
    loop_head = scal.text((lp.loop.start_byte, lp.n.start_byte)) + nm["nvec"] + \
        scal.text((lp.n.end_byte, (lp.stmt.parent if lp.braced else lp.stmt).start_byte))
    return pre + mid + loop_head + body + epi, None


def _s_edits(site, sp: _Split, braces: bool) -> list:
    unit = site.unit
    edits = []
    src = unit.source
    s0 = src.rfind(b"\n", 0, sp.prologue[0].start_byte) + 1
    e0 = sp.prologue[-1].end_byte
    if src[s0:sp.prologue[0].start_byte].strip() == b"" and src[e0:e0 + 1] == b"\n":
        edits.append(Edit.delete(s0, e0 + 1))
    else:
        edits.append(Edit.delete(sp.prologue[0].start_byte, e0))
    edits.append(Edit(sp.nv_node.start_byte, sp.nv_node.end_byte, sp.n_text))
    ind = line_indent(unit, sp.loop.start_byte)
    st = line_indent(unit, statements(sp.vbody)[0].start_byte)[len(ind):] or "    "
    edits.append(Edit(sp.vbody.start_byte, sp.vbody.end_byte, _scalar_text(sp, braces, ind, st)))
    edits.append(Edit.delete(sp.loop.end_byte, sp.ifs[-1].end_byte))
    return edits


def _s_partition(site, ctx) -> Verdict:
    sp = _split(site)
    if isinstance(sp, str):
        return Verdict.unknown(sp)
    return partition_free(site.unit, site.function, sp.acc, sp.op, sp.ifs[-1].end_byte)


def _s_type(site, ctx) -> Verdict:
    sp = _split(site)
    if isinstance(sp, str):
        return Verdict.unknown(sp)
    par = _param(site.function, sp.ptr)
    mx = _XV_DECL.match(norm(site.unit.text(sp.prologue[-1])))
    vt = mx.group(1) + mx.group(2)
    elem = norm(par.base_type.replace("const", "")) if par is not None and par.pointer == 1 \
        else None
    if elem is None or ELEMENTS.get(elem) is None or f"{ELEMENTS[elem]}{mx.group(2)}" != vt:
        return Verdict.no(f"{sp.ptr} points to {elem} but is read as {vt}")
    return Verdict.yes(f"{vt} units of {elem} elements")


@dataclass(frozen=True)
class ScalarizeSplit(Pass):
    """Turn a head / 16-byte-vector / tail split of a grid-stride reduction back into one
    scalar loop.

    Before::

        size_t head = ((16u - ((uintptr_t)x & 15u)) & 15u) / sizeof(float);
        if (head > count) {
            head = count;
        }
        const size_t nvec = (count - head) / 4;
        const size_t tail_start = head + nvec * 4;
        const float4* __restrict__ xv = reinterpret_cast<const float4*>(x + head);
        float acc = 0.0f;
        size_t i = tid;
        for (; i < nvec; i += nthreads) {
            const float4 v = xv[i];
            acc += (v.x + v.y) + (v.z + v.w);
        }
        if (tid < head) {
            acc += x[tid];
        }
        if (tid < count - tail_start) {
            acc += x[tail_start + tid];
        }

    After ``scalarize-split``::

        float acc = 0.0f;
        size_t i = tid;
        for (; i < count; i += nthreads) {
            acc += x[i];
        }

    Recognized: exactly the split ``vectorize-split`` writes for the scalar loop (names,
    the address cast, ``__restrict__``, braces and the distance of the prologue from the
    loop are read from the code and handed back by ``inverse_for``); the comparison
    ignores blanks and comments.

    Preconditions: split-shape (layout), vector-type (dtype: the vector type is the
    array's element type times the width), partition-free (pipeline: the accumulator only
    feeds one matching atomic after the split, so the new partition of the elements over
    the threads gives the same total up to rounding; the walk's gate checks the
    tolerance).

    Options: ``braces`` (brace the scalar loop's statement; default true).
    """

    name = "scalarize-split"
    kind = "simplify"
    inverse = "vectorize-split"
    anchor = Rule(any=(Rule(pattern="for (; $I < $N; $I += $S) $BODY;"),
                       Rule(pattern="for ($T $I = $E; $I < $N; $I += $S) $BODY;")),
                  inside_kernel=True, constraints={"I": {"kind": "identifier"}})
    preconditions = (
        Precondition("vector-type", "dtype",
                     "the vector type is the element type times the width", _s_type),
        Precondition("split-shape", "layout",
                     "head, vector loop and tail as vectorize-split writes them", _s_shape),
        Precondition("partition-free", "pipeline",
                     "the accumulator only feeds one matching atomic", _s_partition),
    )

    braces: bool = option(True, Bool(), "brace the scalar loop's statement")

    def rewrite(self, site, ctx):
        return _s_edits(site, _split(site), self.braces)

    def inverse_for(self, site, ctx):
        sp = _split(site)
        if isinstance(sp, str):
            return VectorizeSplit()
        return VectorizeSplit(**sp.opts)


__all__ = ["ScalarizeSplit", "VectorizeSplit"]
