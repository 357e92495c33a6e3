"""Block reduction before one atomic: ``block-reduce-atomic`` (optimize) and its inverse
``atomic-per-thread`` (simplify).

Every thread of a block doing ``atomicAdd(out, v)`` on the same address serializes the
block on one memory word. ``block-reduce-atomic`` combines the block's values first
(warp shuffles, per-warp partials in shared memory, a last warp shuffle in warp 0) and
lets thread 0 issue the one atomic; ``atomic-per-thread`` recognizes such a block
reduction followed by a single atomic (the shape this pass writes, and the hand-written
shape of ``corpus/reduce-sum/expert.cu``) and turns it back into one atomic per thread.

The module also holds the recognizer of a block reduction (:func:`match_reduction`):
shuffle loops, lane/warp index forms, identity values per operator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.affine import THREAD_SYMBOLS, UNKNOWN_DEP, sources
from kltrans.analysis.barriers import barriers, enclosing_conditions
from kltrans.analysis.smem import shared_footprint, type_size
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.match.predicates import pure
from kltrans.passes import Bool, Choice, Domain, Identifier, Pass, Precondition, option
from kltrans.syntax import Edit
from kltrans.syntax.contract import contracts
from kltrans.syntax.cuda import pragmas_for
from kltrans.analysis.affine import strip_parens as _strip
from kltrans.passes.rewrite import (
    declared_names, fresh_numbered as fresh, indent_of as line_indent, indent_step, inside,
    comments_above, dead_declarations, line_start, norm, remove_described, statements,
    drop_unused_definitions)
from kltrans.model.accesses import accesses, typedefs
from kltrans.model.block import leader_fold
from kltrans.model.effects import draws
from kltrans.model.launch import block_dim
from kltrans.model.ops import operations
from kltrans.passes.launch_facts import contract_block
from kltrans.passes.reductions import wrap, unwrap, squash, value_class
from kltrans.passes.token_forms import balanced

# ======================================================================== shared bits
#: atomic function -> reduction operator
OPS = {"atomicAdd": "+", "atomicMax": "max", "atomicMin": "min", "atomicOr": "|",
       "atomicAnd": "&", "atomicXor": "^"}
ATOMIC_OF = {v: k for k, v in OPS.items()}

_INTEGER = {"int", "unsigned", "ull", "ll"}

_IDENTITY = {
    "+": {"int": "0", "unsigned": "0u", "ull": "0ull", "ll": "0ll", "float": "0.0f",
          "double": "0.0"},
    "|": {"int": "0", "unsigned": "0u", "ull": "0ull", "ll": "0ll"},
    "^": {"int": "0", "unsigned": "0u", "ull": "0ull", "ll": "0ll"},
    "&": {"int": "-1", "unsigned": "0xffffffffu", "ull": "0xffffffffffffffffull", "ll": "-1ll"},
    "max": {"int": "(-2147483647 - 1)", "unsigned": "0u", "ull": "0ull",
            "ll": "(-9223372036854775807ll - 1)"},
    "min": {"int": "2147483647", "unsigned": "0xffffffffu", "ull": "0xffffffffffffffffull",
            "ll": "9223372036854775807ll"},
}

SHUFFLES = {"xor": "__shfl_xor_sync", "down": "__shfl_down_sync"}
SMEM_LIMIT = 48 * 1024


def pointee(site_or_unit, fn, ptr) -> tuple[str | None, str]:
    """(base type of what ``ptr`` points at, why not known): ``out``, ``&out[k]``,
    ``out + k``, ``&s_sum`` of a kernel parameter or a local/shared declaration."""
    unit = site_or_unit
    node = _strip(ptr)
    name = None
    if node.type == "pointer_expression" and unit.text(node).lstrip().startswith("&"):
        arg = _strip(node.child_by_field_name("argument"))
        if arg is not None and arg.type == "subscript_expression":
            base = _strip(arg.child_by_field_name("argument"))
            if base is not None and base.type == "identifier":
                name, depth = unit.text(base), 1
        elif arg is not None and arg.type == "identifier":
            name, depth = unit.text(arg), 0
    elif node.type == "binary_expression" and unit.text(node.child_by_field_name("operator")) == "+":
        left = _strip(node.child_by_field_name("left"))
        if left is not None and left.type == "identifier":
            name, depth = unit.text(left), 1
    elif node.type == "identifier":
        name, depth = unit.text(node), 1
    if name is None:
        return None, f"cannot tell what `{norm(unit.text(ptr))}` points at"
    for p in fn.params:
        if p.name == name:
            if depth == 1 and p.pointer == 1:
                return _resolved(unit, p.base_type), ""
            if depth == 0 and p.pointer == 0 and not p.reference:
                return None, f"{name} is a by-value parameter"
            return None, f"{name} is a {p.type}, not a pointer to the reduced value"
    for d in unit.shared_decls():
        if d.name == name:
            if (depth == 1 and len(d.dims) >= 1) or (depth == 0 and not d.dims):
                return norm(d.type), ""
    return None, f"{name} is not a pointer parameter or a __shared__ variable of {fn.name}"


def _resolved(unit, type_text: str) -> str:
    """``type_text`` through the unit's ``typedef``/``using`` aliases (``real`` -> float)."""
    const = "const " if "const" in type_text.split() else ""
    bare = norm(type_text.replace("const", ""))
    alias = typedefs(unit).get(bare)
    return f"{const}{alias[0]}" if alias is not None and not alias[1] else type_text


# ================================================================= recognizing a reduction
_MASK = r"(?:0[xX][fF]{8}[uU]?|~0[uU]?|-1|FULL_MASK|FULLMASK|0xffffffffu)"
_LANE_FORMS = {"threadIdx.x&31", "threadIdx.x%32", "threadIdx.x%warpSize",
               "threadIdx.x&(warpSize-1)", "threadIdx.x&0x1f", "threadIdx.x&0x1F"}
_WARP_FORMS = {"threadIdx.x>>5", "threadIdx.x/32", "threadIdx.x/warpSize"}
_NWARP_FORMS = {"blockDim.x>>5", "blockDim.x/32", "(blockDim.x+31)>>5", "(blockDim.x+31)/32",
                "blockDim.x/warpSize", "(blockDim.x+warpSize-1)/warpSize"}
_LOOP_HEAD = re.compile(
    r"^for\((?:const )?(?:int|unsigned|unsigned int|auto) (\w+)=(?:16|warpSize/2|32/2|"
    r"\(warpSize/2\)|\(32/2\)|\(warpSize>>1\)|warpSize>>1);\1(?:>0|>=1|!=0|>0u);"
    r"(?:\1>>=1|\1/=2|\1=\1>>1|\1=\1/2)\)")


def _paren(s: str) -> str:
    while s.startswith("(") and s.endswith(")") and balanced(s[1:-1]):
        s = s[1:-1]
    return s


def _combine_stmt(text: str, offset: str | None):
    """(value, op, shuffle, offset) for ``A += __shfl_xor_sync(M, A, O);`` and the like."""
    sh = (rf"__shfl_(xor|down)_sync\({_MASK},(\w+),(\w+)(?:,(?:32|warpSize))?\)")
    m = re.fullmatch(rf"(\w+)(\+|\||&|\^)={sh};", text)
    if m and m.group(1) == m.group(4):
        return m.group(1), m.group(2), m.group(3), m.group(5)
    m = re.fullmatch(rf"(\w+)=\1(\+|\||&|\^){sh};", text)
    if m and m.group(1) == m.group(4):
        return m.group(1), m.group(2), m.group(3), m.group(5)
    m = re.fullmatch(rf"(\w+)=(max|min|umax|umin|fmaxf|fminf)\(\1,{sh}\);", text)
    if m and m.group(1) == m.group(4):
        op = "max" if "max" in m.group(2) else "min"
        return m.group(1), op, m.group(3), m.group(5)
    return None


def shuffle_loop(unit, node):
    """(value, op, shuffle) of a warp shuffle reduction loop, or None."""
    if node is None or node.type != "for_statement":
        return None
    body = node.child_by_field_name("body")
    st = statements(body)
    if len(st) != 1:
        return None
    head = squash(unit.text((node.start_byte, body.start_byte)))
    m = _LOOP_HEAD.match(head)
    if not m:
        return None
    got = _combine_stmt(squash(unit.text(st[0])), m.group(1))
    if got is None or got[3] != m.group(1):
        return None
    return got[0], got[1], got[2]


def _decl_parts(unit, node):
    """(type, name, value node) of ``[const] T name = value;`` (one declarator), else None."""
    if node is None or node.type != "declaration":
        return None
    ds = node.children_by_field_name("declarator")
    if len(ds) != 1 or ds[0].type != "init_declarator":
        return None
    name = ds[0].child_by_field_name("declarator")
    if name is None or name.type != "identifier":
        return None
    ty = node.child_by_field_name("type")
    return norm(unit.text(ty)), unit.text(name), ds[0].child_by_field_name("value")


@dataclass
class Reduction:
    """A block reduction of ``value`` ending in one atomic by thread 0."""

    first: object  # the shuffle loop (the anchor)
    last: object  # the `if (warp == 0) {...}` statement
    stmts: list  # the statements of the reduction, in order
    value: str  # A: the per-thread value
    ops: tuple  # (op of phase 1, op of phase 2, op of the atomic)
    shuffle: str  # xor | down
    identity: str  # the fill of phase 2
    partials: str  # S
    atomic: object  # the atomic call node
    address: object  # P node
    declared: tuple  # names declared by the reduction's statements
    phase2_value: str  # B


def _lane_names(unit, fn):
    """Names declared in ``fn`` as the lane / the warp of the thread."""
    lanes, warps = set(), set()
    for n in unit.walk(fn.body):
        got = _decl_parts(unit, n)
        if got is None or got[2] is None:
            continue
        v = _paren(squash(unit.text(got[2])))
        if v in _LANE_FORMS:
            lanes.add(got[1])
        elif v in _WARP_FORMS:
            warps.add(got[1])
    return lanes, warps


def match_reduction(unit, fn, loop, contract_text: str | None = None):
    """(:class:`Reduction`, None) for the block reduction starting at ``loop``, or
    (None, why)."""
    first = shuffle_loop(unit, loop)
    if first is None:
        return None, "the loop is not a warp shuffle reduction `for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(...)`"
    a, op1, shfl = first
    block = loop.parent
    sts = statements(block)
    k = next(j for j, s in enumerate(sts) if s.id == loop.id)
    lanes, warps = _lane_names(unit, fn)
    j = k + 1
    declared = []
    while j < len(sts):
        got = _decl_parts(unit, sts[j])
        if got is None:
            break
        v = _paren(squash(unit.text(got[2]))) if got[2] is not None else ""
        if v not in _LANE_FORMS | _WARP_FORMS:
            break
        declared.append(got[1])
        j += 1

    def is_lane(t, phase2=False):
        t = _paren(t)
        return t in lanes or t in _LANE_FORMS or (phase2 and t == "threadIdx.x")

    def is_warp(t):
        t = _paren(t)
        return t in warps or t in _WARP_FORMS

    def lane0(t, phase2=False):
        t = _paren(t)
        m = re.fullmatch(r"(.+)==0[uU]?", t) or re.fullmatch(r"0[uU]?==(.+)", t) or \
            re.fullmatch(r"!(.+)", t)
        return m is not None and is_lane(m.group(1), phase2)

    def cond_of(ifn):
        c = ifn.child_by_field_name("condition")
        return _paren(squash(unit.text(c)))

    def sole_if(ifn):
        return ifn is not None and ifn.type == "if_statement" and \
            ifn.child_by_field_name("alternative") is None

    # if (lane == 0) S[warp] = A;
    if j >= len(sts) or not sole_if(sts[j]) or not lane0(cond_of(sts[j])):
        return None, f"after the shuffle loop on {a}, no `if (lane == 0)` writes the warp's partial"
    body = statements(sts[j].child_by_field_name("consequence"))
    m = re.fullmatch(r"(\w+)\[(.+)\]=(\w+);", squash(unit.text(body[0]))) if len(body) == 1 else None
    if m is None or m.group(3) != a or not is_warp(m.group(2)):
        return None, f"`if (lane == 0)` does not just store {a} into partials[warp]"
    s = m.group(1)
    j += 1
    if j >= len(sts) or squash(unit.text(sts[j])) != "__syncthreads();":
        return None, "the warp partials are not followed by __syncthreads()"
    j += 1
    if j >= len(sts) or not sole_if(sts[j]):
        return None, "no `if (warp == 0)` reduces the partials after the barrier"
    c = cond_of(sts[j])
    w0 = re.fullmatch(r"(.+)==0[uU]?", c)
    if not ((w0 and is_warp(w0.group(1))) or c in ("threadIdx.x<32", "threadIdx.x<warpSize")):
        return None, f"`if ({c})` after the barrier is not warp 0"
    last = sts[j]
    inner = statements(last.child_by_field_name("consequence"))
    q = 0
    consts = {}
    while q < len(inner):
        got = _decl_parts(unit, inner[q])
        if got is None or got[2] is None or not pure(unit, got[2]) or \
                re.search(rf"\b{re.escape(s)}\b", unit.text(got[2])):
            break
        consts[got[1]] = _paren(squash(unit.text(got[2])))
        declared.append(got[1])
        q += 1
    if q >= len(inner):
        return None, "warp 0 does not load the partials"
    load = inner[q]
    got = _decl_parts(unit, load)
    if got is not None:
        b, rhs = got[1], got[2]
        declared.append(b)
    else:
        e = load.named_children[0] if load.type == "expression_statement" and \
            load.named_children else None
        if e is None or e.type != "assignment_expression" or \
                unit.text(e.child_by_field_name("operator")) != "=" or \
                e.child_by_field_name("left").type != "identifier":
            return None, "warp 0 does not load the partials into a value"
        b, rhs = unit.text(e.child_by_field_name("left")), e.child_by_field_name("right")
    rhs = _strip(rhs)
    parts = None
    if rhs is not None and rhs.type == "conditional_expression":
        cnd = _strip(rhs.child_by_field_name("condition"))
        con = _strip(rhs.child_by_field_name("consequence"))
        if cnd.type == "binary_expression" and \
                unit.text(cnd.child_by_field_name("operator")) == "<" and \
                con.type == "subscript_expression":
            idx = con.child_by_field_name("indices") or con.child_by_field_name("index")
            parts = (squash(unit.text(cnd.child_by_field_name("left"))),
                     squash(unit.text(cnd.child_by_field_name("right"))),
                     squash(unit.text(con.child_by_field_name("argument"))),
                     _paren(squash(unit.text(idx))) if idx is not None else "",
                     squash(unit.text(rhs.child_by_field_name("alternative"))))
    if parts is None or parts[2] != s or not is_lane(parts[0], True) or \
            _paren(parts[0]) != _paren(parts[3].strip("[]")):
        return None, f"warp 0 does not load `lane < nwarps ? {s}[lane] : identity`"
    nw = _paren(parts[1])
    nw = consts.get(nw, nw)
    ok = _paren(nw) in _NWARP_FORMS
    if not ok and contract_text is not None:
        ok = _paren(nw) in (f"{squash(contract_text)}/32", f"({squash(contract_text)})/32")
    if not ok:
        return None, f"warp 0 reads `{nw}` partials, not the block's number of warps"
    ident = parts[4]
    q += 1
    second = shuffle_loop(unit, inner[q]) if q < len(inner) else None
    if second is None or second[0] != b:
        return None, f"warp 0 does not shuffle-reduce {b}"
    q += 1
    if q >= len(inner) or not sole_if(inner[q]) or not lane0(cond_of(inner[q]), True):
        return None, "warp 0 does not end with `if (lane == 0)` and the atomic"
    tail = statements(inner[q].child_by_field_name("consequence"))
    call = None
    if len(tail) == 1 and tail[0].type == "expression_statement":
        e = tail[0].named_children[0] if tail[0].named_children else None
        if e is not None and e.type == "call_expression":
            call = e
    if call is None or q + 1 != len(inner):
        return None, "the reduction does not end in a single atomic call by lane 0 of warp 0"
    f = unit.text(call.child_by_field_name("function"))
    args = [x for x in call.child_by_field_name("arguments").named_children if x.type != "comment"]
    if f not in OPS or len(args) != 2 or squash(unit.text(args[1])) != b:
        return None, f"`{norm(unit.text(call))}` is not atomic<op>(address, {b})"
    stmts = sts[k:j + 1]
    return Reduction(loop, last, stmts, a, (op1, second[1], OPS[f]), shfl, ident, s, call,
                     args[0], tuple(declared), b), None


_ZERO = re.compile(r"^\(?-?(?:0+|0*\.0*|0+\.0*)(?:[eE][+-]?\d+)?[fFuUlL]*\)?$")


def is_identity(op: str, text: str, cls: str | None) -> bool:
    t = _paren(text)
    zero = bool(_ZERO.match(t)) or re.fullmatch(r"(?:\(\w+\)0|\w+\(0\))", t) is not None
    if op in ("+", "|", "^"):
        return zero
    if op == "&":
        return t in ("-1", "~0", "~0u", "~0U", "~0ull", "-1ll") or \
            re.fullmatch(r"0[xX][fF]{8}(?:[fF]{8})?[uUlL]*", t) is not None
    if op == "max":
        if zero:
            return cls in ("unsigned", "ull")
        return t in ("INT_MIN", "-2147483647-1", "LLONG_MIN", "-9223372036854775807ll-1",
                     "-INFINITY", "-FLT_MAX", "-DBL_MAX", "(-2147483647-1)")
    if op == "min":
        return t in ("INT_MAX", "2147483647", "LLONG_MAX", "9223372036854775807ll", "INFINITY",
                     "FLT_MAX", "DBL_MAX", "UINT_MAX") or \
            re.fullmatch(r"0[xX][fF]{8}(?:[fF]{8})?[uUlL]*", t) is not None
    return False


# ============================================================== block-reduce-atomic
ATOMIC = Rule(pattern="$F($P, $V)", inside_kernel=True,
              constraints={"F": {"regex": r"^atomic(Add|Max|Min|Or|And|Xor)$"}})


@dataclass(frozen=True)
class _Shape:
    stmt: object  # the statement replaced: the expression statement or the guarding if
    cond: object  # the guard's condition expression (None: unguarded)
    braces: bool


def _shape(site):
    """(_Shape, None) when the atomic runs once per thread at the kernel's top level."""
    call = site.node
    st = call.parent
    body = site.function.body
    if st is None or st.type != "expression_statement":
        return None, "the atomic is not a statement of its own"
    if st.parent is not None and st.parent.id == body.id:
        return _Shape(st, None, False), None
    p, braces = st.parent, False
    if p is not None and p.type == "compound_statement" and len(statements(p)) == 1:
        p, braces = p.parent, True
    if p is not None and p.type == "if_statement" and p.parent is not None and \
            p.parent.id == body.id and p.child_by_field_name("alternative") is None:
        cons = p.child_by_field_name("consequence")
        cc = p.child_by_field_name("condition")
        inner = [c for c in cc.named_children if c.type != "comment"]
        if cons is not None and (cons.id == st.id or (braces and cons.id == st.parent.id)) \
                and len(inner) == 1 and inner[0].type != "declaration" and \
                cc.child_by_field_name("initializer") is None:
            return _Shape(p, inner[0], braces), None
    what = "a loop" if any(a.type in ("for_statement", "while_statement", "do_statement")
                           for a in _ancestors(st, body)) else "nested code"
    return None, (f"the atomic is inside {what}, not a statement of {site.function.name}'s body "
                  "or the sole statement of a top-level `if`: every thread must reach the "
                  "block reduction exactly once")


def _ancestors(node, stop):
    p = node.parent
    while p is not None and p.id != stop.id:
        yield p
        p = p.parent


def _reduction_op(site, ctx) -> Verdict:
    f = site.text("F")
    op = OPS[f]
    ty, why = pointee(site.unit, site.function, site.match.bindings["P"])
    if ty is None:
        return Verdict.no(why)
    cls = value_class(ty, site.function)
    if cls is None:
        return Verdict.no(f"{f} on {ty}: the pass knows int, unsigned, (unsigned) long long, "
                          "float and double")
    if cls == "template":
        if op != "+":
            return Verdict.no(f"{f} on the template type {ty}: its identity is not known")
        return Verdict.yes(f"{f} on {ty}: identity {ty}(0)")
    if op not in ("+",) and cls not in _INTEGER:
        return Verdict.no(f"{f} on {ty}: the pass reduces {op} on integers only")
    return Verdict.yes(f"{f} on {ty}: {op} is associative and commutative, identity "
                       f"{_IDENTITY[op][cls]}")


def _reassociation(site, ctx) -> Verdict:
    ty, _ = pointee(site.unit, site.function, site.match.bindings["P"])
    cls = value_class(ty, site.function)
    if cls in _INTEGER:
        return Verdict.yes(f"{ty} arithmetic is exact in any order")
    if ctx.assumed("reassoc") or ctx.assumed("fast_math"):
        return Verdict.yes(f"--assume reassoc: the {ty} sum may be reassociated")
    if site.pass_ is not None and getattr(site.pass_, "reassoc", False):
        return Verdict.yes(f"reassoc=true: the caller accepts a reassociated {ty} sum (the "
                           "inverse of atomic-per-thread restores a tree the code had)")
    return Verdict.no(f"{ty} addition is not associative: the tree sum rounds differently "
                      "from the per-thread atomics; give --assume reassoc if the tolerance "
                      "allows it")


def _return_unused(site, ctx) -> Verdict:
    st = site.node.parent
    if st is None or st.type != "expression_statement":
        return Verdict.no(f"the value returned by {site.text('F')} is used "
                          f"(`{norm(site.unit.text(st))[:60]}`): only thread 0 would get one")
    return Verdict.yes("the atomic's return value is unused")


def _uniform_address(site, ctx) -> Verdict:
    unit = site.unit
    p = site.match.bindings["P"]
    t = norm(unit.text(p))
    if not pure(unit, p):
        return Verdict.no(f"the address `{t}` has side effects: only thread 0 would evaluate it")
    dep = sources(unit, p)
    thr = sorted(dep & THREAD_SYMBOLS)
    if thr:
        return Verdict.no(f"the address `{t}` depends on {thr[0]}: the threads of a block "
                          "update different words")
    if UNKNOWN_DEP in dep:
        return Verdict.unknown(f"cannot tell whether the address `{t}` is the same for every "
                               "thread of the block")
    return Verdict.yes(f"the address `{t}` is the same for every thread of the block")


def _block_reach(site, ctx) -> Verdict:
    sh, why = _shape(site)
    if sh is None:
        return Verdict.no(why)
    unit = site.unit
    for cond, how in enclosing_conditions(unit, sh.stmt):
        line = unit.line_col(cond.start_byte)[0]
        return Verdict.no(f"an earlier exit under `{norm(unit.text(cond))}` (line {line}) "
                          "leaves threads that never reach the block reduction's __syncthreads()"
                          if how == "exit" else
                          f"the statement runs under `{norm(unit.text(cond))}` (line {line})")
    if sh.cond is not None and not pure(unit, sh.cond):
        return Verdict.no(f"the guard `{norm(unit.text(sh.cond))}` has side effects")
    return Verdict.yes("every thread of the block reaches the atomic's statement once"
                       + (" (threads failing the guard add the identity)" if sh.cond is not None
                          else ""))


def _whole_warps(site, ctx) -> Verdict:
    v, text, why = contract_block(site, ctx)
    if v is None:
        if text is not None and (ctx.assumed("full_warp") or ctx.divisible(text, 32)):
            return Verdict.yes(f"block={text}: whole warps (from the context)")
        return Verdict.no(why) if text is None else Verdict.unknown(why)
    if v % 32 or v > 1024:
        return Verdict.no(f"block={text} = {v} is not a whole number of warps (<= 1024): the "
                          "full-mask shuffles need every lane of every warp")
    return Verdict.yes(f"block={text} = {v}: {v // 32} whole warps, at most 32 partials")


def _smem_budget(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    ty, _ = pointee(unit, fn, site.match.bindings["P"])
    size = type_size(unit, ty) if ty else None
    if size is None:
        size = 8  # a template value type: at most a double
    fp = shared_footprint(unit, fn, ctx.sizes)
    if fp.static_bytes is None:
        return Verdict.unknown(f"static shared memory of {fn.name} unknown: {fp.reason}")
    total = fp.static_bytes + 32 * size
    if total > SMEM_LIMIT:
        return Verdict.no(f"{fp.static_bytes} B of static shared memory plus 32 x {size} B of "
                          f"partials exceed the 48 KiB static limit")
    return Verdict.yes(f"{fp.static_bytes} B + {32 * size} B of partials fit in 48 KiB")


def _names(unit, fn):
    a = fresh(unit, fn, ("val", "v", "rv"))
    s = fresh(unit, fn, ("warp_part", "s_part", "partial"), taken={a})
    o = fresh(unit, fn, ("off", "o", "delta"), taken={a, s})
    lane = fresh(unit, fn, ("lane", "ln", "lane_id"), taken={a, s, o})
    warp = fresh(unit, fn, ("warp", "wid", "warp_id"), taken={a, s, o, lane})
    return a, s, o, lane, warp


def _combine(op: str, a: str, shuffle: str, o: str) -> str:
    sh = f"{SHUFFLES[shuffle]}(0xffffffffu, {a}, {o})"
    if op in ("max", "min"):
        return f"{a} = {op}({a}, {sh});"
    return f"{a} {op}= {sh};"


def reduction_text(ty, init, ident, op, shuffle, atomic, address, names, ind, st) -> str:
    a, s, o, lane, warp = names
    i1, i2, i3 = ind + st, ind + st * 2, ind + st * 3
    comb = _combine(op, a, shuffle, o)
    return "\n".join([
        "{",
        f"{i1}{ty} {a} = {init};",
        f"{i1}__shared__ {ty} {s}[32];",
        f"{i1}for (int {o} = 16; {o} > 0; {o} >>= 1) {{",
        f"{i2}{comb}",
        f"{i1}}}",
        f"{i1}const int {lane} = threadIdx.x & 31;",
        f"{i1}const int {warp} = threadIdx.x >> 5;",
        f"{i1}if ({lane} == 0) {{",
        f"{i2}{s}[{warp}] = {a};",
        f"{i1}}}",
        f"{i1}__syncthreads();",
        f"{i1}if ({warp} == 0) {{",
        f"{i2}{a} = {lane} < (blockDim.x >> 5) ? {s}[{lane}] : {ident};",
        f"{i2}for (int {o} = 16; {o} > 0; {o} >>= 1) {{",
        f"{i3}{comb}",
        f"{i2}}}",
        f"{i2}if ({lane} == 0) {{",
        f"{i3}{atomic}({address}, {a});",
        f"{i2}}}",
        f"{i1}}}",
        f"{ind}}}",
    ])


MASK_SPELLINGS = ("0xffffffffu", "0xffffffff", "0xFFFFFFFF", "0xFFFFFFFFu", "0xffffffffU",
                  "0xFFFFFFFFU", "~0u", "~0", "-1", "FULL_MASK", "FULLMASK")
NWARPS_FORMS = ("shift", "shift-ceil", "div", "div-ceil")
_NWARPS_TEXT = {"shift": "blockDim.x >> 5", "shift-ceil": "(blockDim.x + 31) >> 5",
                "div": "blockDim.x / 32", "div-ceil": "(blockDim.x + 31) / 32"}
_NWARPS_OF = {squash(v): k for k, v in _NWARPS_TEXT.items()}


class Extent(Domain):
    """An array extent written without blanks: a number, a name, or names and numbers
    joined by ``* / + -`` (``32``, ``BLOCK/32``, ``RS_THREADS/32``)."""

    _RX = re.compile(r"[A-Za-z0-9_]+(?:[*/+\-][A-Za-z0-9_]+)*")

    def parse(self, text: str) -> str:
        return self.check(text)

    def contains(self, value) -> bool:
        return isinstance(value, str) and bool(self._RX.fullmatch(value))

    def describe(self) -> str:
        return "an extent such as 32 or BLOCK/32 (no blanks)"

    def values(self) -> list:
        return ["32"]


def _inline_names(p, site) -> dict:
    """The names the inline style writes (auto: the first free of the usual ones)."""
    unit, fn = site.unit, site.function
    a = site.text("V")
    taken = {a}
    out = {}
    for key, cands in (("offset", ("off", "o", "delta")), ("lane", ("lane", "lane_id", "ln")),
                       ("warp", ("warp", "warp_id", "wid")),
                       ("partials", ("warp_sums", "warp_part", "s_part")),
                       ("value2", ("s", "wsum", "val"))):
        v = getattr(p, key)
        if v == "same" and key == "value2":
            v = a
        elif v == "auto":
            v = fresh(unit, fn, cands, taken=taken)
        out[key] = v
        taken.add(v)
    out["nwarps"] = p.nwarps
    return out


def _in_place(site, ctx) -> Verdict:
    if site.pass_ is None or site.pass_.style != "inline":
        return Verdict.yes("style=block: the reduction works on its own copy of the value")
    unit, fn = site.unit, site.function
    sh, why = _shape(site)
    if sh is None:
        return Verdict.no(why)
    if sh.cond is not None:
        return Verdict.no("the atomic is guarded: style=inline reduces the variable itself, "
                          "which threads failing the guard would add too (use style=block)")
    v = site.match.bindings["V"]
    if v.type != "identifier":
        return Verdict.no(f"the atomic adds `{norm(unit.text(v))}`, not a variable: style=inline "
                          "reduces a variable in place (use style=block)")
    name = unit.text(v)
    if not any(n == name for n, _ in declared_names(unit, fn.body)):
        return Verdict.no(f"{name} is not a local variable of {fn.name}")
    for n in unit.walk(fn.body):
        if n.type == "identifier" and unit.text(n) == name and n.start_byte >= sh.stmt.end_byte:
            return Verdict.no(f"{name} is used after the atomic (line "
                              f"{unit.line_col(n.start_byte)[0]}): the in-place reduction "
                              "changes its value")
    return Verdict.yes(f"{name} is a local variable, dead after the atomic")


def _fresh_inline(site, ctx) -> Verdict:
    if site.pass_ is None or site.pass_.style != "inline":
        return Verdict.yes("style=block: fresh names in a nested block")
    unit, fn = site.unit, site.function
    names = _inline_names(site.pass_, site)
    a = site.text("V")
    used = {unit.text(n) for n in unit.walk(fn.node) if n.type == "identifier"}
    want = [v for k, v in names.items() if not (k == "value2" and v == a) and v != "none"]
    if len(set(want)) != len(want):
        return Verdict.no(f"two of the new names are equal ({', '.join(want)})")
    for v in want:
        if v in used:
            return Verdict.no(f"the name {v} is already used in {fn.name}")
    return Verdict.yes(f"{', '.join(want)} are fresh")


def inline_text(p, ty, a, ident, op, atomic, address, names, ind, st) -> str:
    """The block reduction written in place of ``atomic(address, a);`` (style=inline)."""
    o, lane, warp, s, b = (names[k] for k in ("offset", "lane", "warp", "partials", "value2"))
    i1 = ind + st
    q = "const int" if p.const_ids else "int"
    lane_e = "threadIdx.x & 31" if p.lane_form == "and" else "threadIdx.x % 32"
    warp_e = "threadIdx.x >> 5" if p.warp_form == "shift" else "threadIdx.x / 32"
    nw_e = _NWARPS_TEXT[p.nwarps_form]

    def loop(v, at):
        head = f"for (int {o} = 16; {o} > 0; {o} >>= 1)"
        sh = f"{SHUFFLES[p.shuffle]}({p.mask}, {v}, {o})"
        comb = f"{v} = {op}({v}, {sh});" if op in ("max", "min") else f"{v} {op}= {sh};"
        pre = ["#pragma unroll"] if p.pragmas else []
        if p.braces:
            return pre + [f"{at}{head} {{", f"{at}{st}{comb}", f"{at}}}"]
        return pre + [f"{at}{head}", f"{at}{st}{comb}"]

    def cond(c, stmt, at):
        if p.braces:
            return [f"{at}if ({c}) {{", f"{at}{st}{stmt}", f"{at}}}"]
        return [f"{at}if ({c}) {stmt}"]

    lines = loop(a, ind)
    lines += [f"{ind}{q} {lane} = {lane_e};", f"{ind}{q} {warp} = {warp_e};"]
    lines += cond(f"{lane} == 0", f"{s}[{warp}] = {a};", ind)
    lines += [f"{ind}__syncthreads();", f"{ind}if ({warp} == 0) {{"]
    nw = nw_e if names["nwarps"] == "none" else names["nwarps"]
    if names["nwarps"] != "none":
        lines.append(f"{i1}const int {nw} = {nw_e};")
    if nw == nw_e:
        nw = f"({nw_e})"
    load = f"{lane} < {nw} ? {s}[{lane}] : {ident};"
    lines.append(f"{i1}{b} = {load}" if b == a else f"{i1}{ty} {b} = {load}")
    lines += loop(b, i1)
    lines += cond(f"{lane} == 0", f"{atomic}({address}, {b});", i1)
    lines.append(f"{ind}}}")
    lines[0] = lines[0].lstrip()
    return "\n".join(lines)


@dataclass(frozen=True)
class BlockReduceAtomic(Pass):
    """Reduce a block's values with warp shuffles before one atomic per block.

    Before::

        // kltrans: launch reduce_sum_naive grid=ceil_div(n, 256) block=256
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            atomicAdd(out, x[i]);
        }

    After ``block-reduce-atomic{shuffle=xor}`` (with ``--assume reassoc``)::

        int i = blockIdx.x * blockDim.x + threadIdx.x;
        {
            float val = (i < n) ? x[i] : 0.0f;
            __shared__ float warp_part[32];
            for (int off = 16; off > 0; off >>= 1) {
                val += __shfl_xor_sync(0xffffffffu, val, off);
            }
            const int lane = threadIdx.x & 31;
            const int warp = threadIdx.x >> 5;
            if (lane == 0) {
                warp_part[warp] = val;
            }
            __syncthreads();
            if (warp == 0) {
                val = lane < (blockDim.x >> 5) ? warp_part[lane] : 0.0f;
                for (int off = 16; off > 0; off >>= 1) {
                    val += __shfl_xor_sync(0xffffffffu, val, off);
                }
                if (lane == 0) {
                    atomicAdd(out, val);
                }
            }
        }

    Accepted anchors: ``atomicAdd/Max/Min/Or/And/Xor(P, V);`` as a statement of the
    kernel body, or as the sole statement of a top-level ``if (c)`` without ``else``
    (braced or not). A guarded atomic becomes ``v = (c) ? V : identity`` so that every
    thread reaches the barrier; the identity is that of the operator and type (0 for
    ``+``, ``|``, ``^``; INT_MIN / 0u for max; INT_MAX / 0xffffffffu for min; all ones for
    ``&``; ``T(0)`` for ``+`` on a template type). Names are fresh (val, warp_part, off,
    lane, warp, or the next free ones) and live in the new block. The launch is
    unchanged: the partials are static shared memory (not part of the launch contract).

    Preconditions: reduction-op (dtype: a known pointee type and an associative,
    commutative operator on it: + on int/unsigned/long long/float/double, the bitwise
    and max/min ops on integers), reassociation (dtype: integers are exact; a float or
    double sum is reassociated, so it needs ``--assume reassoc`` from the context, the
    caller vouching that the tolerance allows it), return-unused (storage: the atomic's
    value is not used), uniform-address (storage: the address is pure and does not depend
    on threadIdx, e.g. ``out``, ``&out[0]``, ``result + blockIdx.y``), block-reach
    (pipeline: the statement is at the kernel's top level, not in a loop, and no earlier
    ``return`` can skip it, so all threads reach the new ``__syncthreads()``), whole-warps
    (hardware: the launch contract's block is 1-D and a multiple of 32 — from the header,
    ``#define``/``constexpr`` constants, ``--assume BLOCK==256`` or ``--assume full_warp``;
    the full-mask shuffles need every lane), smem-budget (hardware: the kernel's static
    shared memory plus 32 partials fit in 48 KiB).

    Options: ``shuffle`` (``xor``: butterfly, every lane ends with the total; ``down``:
    tree towards lane 0, the only lane that is used); ``style`` (``block``: the nested
    block above; ``inline``: the atomic's variable is reduced in place, the partials are
    declared at the top of the kernel, as hand-written kernels do); ``reassoc`` (the
    caller accepts a reassociated float sum, as ``--assume reassoc``; ``atomic-per-thread``
    sets it in its inverse, which restores a tree the code already had); for
    ``style=inline`` the spelling: ``mask``, names ``offset`` / ``lane`` / ``warp`` /
    ``partials`` / ``value2`` (``same``: reuse the variable) / ``nwarps`` (``none``: the
    count inline), ``slots`` (the partials' extent, e.g. ``RS_THREADS/32``),
    ``nwarps_form``, ``lane_form``, ``warp_form``, ``const_ids``, ``pragmas`` (``#pragma
    unroll`` on the shuffle loops), ``braces``; ``smem`` (``keep``, or the dynamic shared
    memory the launch gets back: ``atomic-per-thread`` sets it in its inverse when it
    removed a fold that was the launch's only use of it). Checked for the inline style only:
    in-place (storage: the value is an unguarded local variable, dead after the atomic)
    and fresh-names (pipeline); both hold trivially for ``style=block``.
    """

    name = "block-reduce-atomic"
    kind = "optimize"
    inverse = "atomic-per-thread"
    anchor = ATOMIC
    preconditions = (
        Precondition("reduction-op", "dtype",
                     "the atomic's operator is associative and commutative on a known pointee "
                     "type with an identity", _reduction_op),
        Precondition("reassociation", "dtype",
                     "integer ops are exact; a float sum needs --assume reassoc",
                     _reassociation),
        Precondition("return-unused", "storage", "the atomic's return value is not used",
                     _return_unused),
        Precondition("uniform-address", "storage",
                     "the address is pure and the same for every thread of the block",
                     _uniform_address),
        Precondition("block-reach", "pipeline",
                     "every thread reaches the atomic's statement exactly once (top level, no "
                     "earlier exit)", _block_reach),
        Precondition("whole-warps", "hardware",
                     "the 1-D block is a multiple of 32 threads (full-mask shuffles)",
                     _whole_warps),
        Precondition("smem-budget", "hardware",
                     "static shared memory plus 32 partials fit in 48 KiB", _smem_budget),
        Precondition("in-place", "storage",
                     "style=inline: the atomic's value is a local variable that is not used "
                     "after it, and the atomic is not guarded", _in_place),
        Precondition("fresh-names", "pipeline",
                     "style=inline: the names of the offset, lane, warp, partials, phase-2 "
                     "value and warp count are not used in the kernel", _fresh_inline),
    )

    shuffle: str = option("xor", Choice("xor", "down"),
                          "warp shuffle: xor (butterfly) or down (tree to lane 0)")
    style: str = option("block", Choice("block", "inline"),
                        "block: a nested block with its own value; inline: reduce the "
                        "atomic's variable in place, partials declared at the kernel's top")
    reassoc: bool = option(False, Bool(), "the caller accepts a reassociated float/double sum "
                           "(as --assume reassoc)")
    mask: str = option("0xffffffffu", Choice(*MASK_SPELLINGS), "spelling of the full mask")
    offset: str = option("auto", Identifier(), "inline: name of the shuffle offset")
    lane: str = option("auto", Identifier(), "inline: name of the lane index")
    warp: str = option("auto", Identifier(), "inline: name of the warp index")
    partials: str = option("auto", Identifier(), "inline: name of the __shared__ partials")
    slots: str = option("32", Extent(), "inline: the partials array's extent (32, BLOCK/32...)")
    value2: str = option("auto", Identifier(("auto", "same")),
                         "inline: name of warp 0's value (same: reuse the atomic's variable)")
    nwarps: str = option("none", Identifier(("none",)),
                         "inline: name of a const holding the warp count (none: inline)")
    nwarps_form: str = option("shift", Choice(*NWARPS_FORMS),
                              "inline: the warp count as blockDim.x >> 5 (shift), "
                              "(blockDim.x + 31) >> 5 (shift-ceil), / 32 (div, div-ceil)")
    lane_form: str = option("and", Choice("and", "mod"),
                            "inline: threadIdx.x & 31 (and) or % 32 (mod)")
    warp_form: str = option("shift", Choice("shift", "div"),
                            "inline: threadIdx.x >> 5 (shift) or / 32 (div)")
    const_ids: bool = option(True, Bool(), "inline: declare lane and warp const")
    pragmas: bool = option(False, Bool(), "inline: #pragma unroll before the shuffle loops")
    braces: bool = option(True, Bool(), "inline: brace one-statement loop and if bodies")
    smem: str = option("keep", Extent(), "the launch's dynamic shared memory afterwards: "
                       "keep, or the size atomic-per-thread removed with a fold")

    def update_contract(self, contract, site, ctx):
        return contract if self.smem == "keep" else contract.with_(smem=self.smem)

    def rewrite(self, site, ctx):
        if self.style == "inline":
            return self._inline(site, ctx)
        unit, fn = site.unit, site.function
        sh, _ = _shape(site)
        f = site.text("F")
        op = OPS[f]
        ty, _ = pointee(unit, fn, site.match.bindings["P"])
        cls = value_class(ty, fn)
        ident = f"{ty}(0)" if cls == "template" else _IDENTITY[op][cls]
        v = site.match.bindings["V"]
        e = wrap(unit, v)
        init = e if sh.cond is None else f"({unit.text(sh.cond)}) ? {e} : {ident}"
        ind = line_indent(unit, sh.stmt.start_byte)
        st = indent_step(unit, sh.stmt)
        if ind and st == ind:
            st = "    " if len(ind) % 4 == 0 else "  "
        text = reduction_text(ty, init, ident, op, self.shuffle, f, site.text("P"),
                              _names(unit, fn), ind, st)
        return [Edit(sh.stmt.start_byte, sh.stmt.end_byte, text)]

    def _inline(self, site, ctx):
        unit, fn = site.unit, site.function
        sh, _ = _shape(site)
        f = site.text("F")
        op = OPS[f]
        ty, _ = pointee(unit, fn, site.match.bindings["P"])
        cls = value_class(ty, fn)
        ident = f"{ty}(0)" if cls == "template" else _IDENTITY[op][cls]
        a = site.text("V")
        names = _inline_names(self, site)
        ind = line_indent(unit, sh.stmt.start_byte)
        st = indent_step(unit, sh.stmt)
        if ind and st == ind:
            st = "    " if len(ind) % 4 == 0 else "  "
        text = inline_text(self, ty, a, ident, op, f, site.text("P"), names, ind, st)
        edits = [Edit(sh.stmt.start_byte, sh.stmt.end_byte, text)]
        first = statements(fn.body)[0]
        fi = line_indent(unit, first.start_byte) or st
        edits.append(Edit.insert(first.start_byte,
                                 f"__shared__ {ty} {names['partials']}[{self.slots}];\n{fi}"))
        return edits

    def inverse_for(self, site, ctx):
        sh, _ = _shape(site)
        return AtomicPerThread(braces=bool(sh and sh.braces))


# ================================================================== atomic-per-thread
REDUCTION = Rule(kind="for_statement", inside_kernel=True,
                 regex=r"__shfl_(xor|down)_sync",
                 precedes=Rule(pattern="__syncthreads();"))
#: an atomic that may end a block fold of any spelling (read by the block machine)
LEADER_ATOMIC = Rule(kind="call_expression", inside_kernel=True,
                     regex=r"^atomic(Add|Max|Min)\s*\(")


def _match(site, ctx):
    from kltrans.syntax.contract import contracts

    c = None
    try:
        c = contracts(site.unit).get(site.function.name)
    except Exception:
        pass
    return match_reduction(site.unit, site.function, site.node,
                           c.block[0] if c is not None and c.block else None)


def _own(site, red):
    """(block, init value node, type) when the reduction is this pass's own output: a
    nested block ``{ T A = INIT; __shared__ T S[32]; <reduction> }``."""
    unit = site.unit
    blk = site.node.parent
    if blk is None or blk.type != "compound_statement" or blk.parent is None or \
            blk.parent.type != "compound_statement":
        return None
    sts = statements(blk)
    if len(sts) != len(red.stmts) + 2 or sts[2].id != red.first.id or \
            sts[-1].id != red.last.id:
        return None
    got = _decl_parts(unit, sts[0])
    if got is None or got[1] != red.value or red.phase2_value != red.value:
        return None
    if squash(unit.text(sts[1])) != f"__shared__ {squash(got[0])} {red.partials}[32];":
        return None
    return blk, got[2], got[0]


def _reduction_shape(site, ctx) -> Verdict:
    if site.node.type == "call_expression":
        return _fold_shape(site, ctx)
    red, why = _match(site, ctx)
    if red is None:
        return Verdict.no(why)
    return Verdict.yes(f"warp shuffles on {red.value}, partials in {red.partials}, warp 0, "
                       f"one {unit_text(site, red.atomic.child_by_field_name('function'))} by "
                       "thread 0")


def unit_text(site, node) -> str:
    return site.unit.text(node)


def _matching_op(site, ctx) -> Verdict:
    if site.node.type == "call_expression":
        return _fold_op(site, ctx)
    red, why = _match(site, ctx)
    if red is None:
        return Verdict.unknown(why)
    o1, o2, o3 = red.ops
    if not (o1 == o2 == o3):
        return Verdict.no(f"the warp shuffles combine with {o1} and {o2} but the atomic is "
                          f"{ATOMIC_OF[o3]}: the block does not reduce with the atomic's "
                          "operator")
    ty, _ = pointee(site.unit, site.function, red.address)
    cls = value_class(ty, site.function)
    if not is_identity(o3, red.identity, cls):
        return Verdict.no(f"warp 0 fills missing partials with {red.identity}, not the identity "
                          f"of {o3}")
    return Verdict.yes(f"every step combines with {o3}; {red.identity} is its identity")


def _dead_after(site, ctx) -> Verdict:
    if site.node.type == "call_expression":
        return _fold_dead_after(site, ctx)
    red, why = _match(site, ctx)
    if red is None:
        return Verdict.unknown(why)
    unit, fn = site.unit, site.function
    own = _own(site, red)
    start = red.first.start_byte if own is None else own[0].start_byte
    end = red.last.end_byte if own is None else own[0].end_byte
    for n in unit.walk(red.address):
        if n.type == "identifier" and unit.text(n) in red.declared:
            return Verdict.no(f"the atomic's address uses {unit.text(n)}, declared by the "
                              "reduction")
    check = {red.value, red.partials} | set(red.declared)
    for n in unit.walk(fn.body):
        if n.type != "identifier" or unit.text(n) not in check:
            continue
        if start <= n.start_byte < end:
            continue
        name = unit.text(n)
        line = unit.line_col(n.start_byte)[0]
        if name == red.partials:
            d = n.parent
            while d is not None and d.type != "declaration":
                d = d.parent
            if d is not None and "__shared__" in unit.text(d) and len(
                    d.children_by_field_name("declarator")) == 1:
                continue
            return Verdict.no(f"the partials array {name} is also used at line {line}")
        if n.start_byte >= end:
            return Verdict.no(f"{name} is used after the reduction (line {line}): it would "
                              "no longer hold the reduced value")
    return Verdict.yes(f"{red.value}, {red.partials} and the reduction's names are not used "
                       "after it")


def _shared_names(unit, fn):
    out = set()
    for d in unit.shared_decls():
        if d.function == fn.name or d.function is None:
            out.add(d.name)
    return out


def _barrier_private(site, ctx) -> Verdict:
    if site.node.type == "call_expression":
        return _fold_private(site, ctx)
    red, why = _match(site, ctx)
    if red is None:
        return Verdict.unknown(why)
    unit, fn = site.unit, site.function
    start, end = red.first.start_byte, red.last.end_byte
    others = _shared_names(unit, fn) - {red.partials}
    before, after = set(), set()
    for n in unit.walk(fn.body):
        if n.type == "identifier" and unit.text(n) in others:
            if n.end_byte <= start:
                before.add(unit.text(n))
            elif n.start_byte >= end:
                after.add(unit.text(n))
    both = sorted(before & after)
    if both:
        return Verdict.no(f"the shared array {both[0]} is used before and after the reduction: "
                          "its __syncthreads() may be what orders those accesses")
    own = [b for b in barriers(unit, fn) if start <= b.node.start_byte < end]
    if len(own) != 1:
        return Verdict.no(f"{len(own)} barriers inside the reduction")
    return Verdict.yes("the reduction's __syncthreads() orders only its own partials")


@dataclass(frozen=True)
class AtomicPerThread(Pass):
    """Turn a block reduction followed by one atomic per block back into per-thread atomics.

    Before::

        for (int off = 16; off > 0; off >>= 1) {
            acc += __shfl_xor_sync(0xffffffffu, acc, off);
        }
        const int lane = threadIdx.x & 31;
        const int warp = threadIdx.x >> 5;
        if (lane == 0) {
            warp_sums[warp] = acc;
        }
        __syncthreads();
        if (warp == 0) {
            float s = lane < nwarps ? warp_sums[lane] : 0.0f;
            for (int off = 16; off > 0; off >>= 1) {
                s += __shfl_xor_sync(0xffffffffu, s, off);
            }
            if (lane == 0) {
                atomicAdd(out, s);
            }
        }

    After ``atomic-per-thread``::

        atomicAdd(out, acc);

    and the ``__shared__`` partials array's declaration is removed. On the block that
    ``block-reduce-atomic`` writes (``{ T v = (c) ? V : id; __shared__ T p[32]; ... }``)
    the whole block becomes ``if (c) atomicOp(P, V);`` (``atomicOp(P, V);`` when the value
    had no guard) — the exact inverse. Recognized spellings: shuffle loops ``for (int o =
    16 | warpSize / 2; o > 0; o >>= 1 | o /= 2)`` with ``__shfl_xor_sync`` or
    ``__shfl_down_sync`` and ``+= |= &= ^=`` or ``v = max/min(v, ...)``; lane as
    ``threadIdx.x & 31 | % 32 | % warpSize`` (or a variable holding it; ``threadIdx.x``
    itself inside warp 0), warp as ``threadIdx.x >> 5 | / 32 | / warpSize``; warp 0 as
    ``warp == 0`` or ``threadIdx.x < 32``; the number of warps as ``blockDim.x >> 5``,
    ``(blockDim.x + 31) / 32`` and similar, or BLOCK / 32 of the launch header.

    Preconditions: reduction-shape (layout: the statements are that reduction, in that
    order, ending in one atomic by lane 0 of warp 0), matching-op (dtype: both shuffle
    phases and the atomic use the same operator and warp 0 fills with its identity),
    dead-after (storage: the value, the partials array and the reduction's own names
    are not used after it, the partials nowhere else), barrier-private (pipeline: no
    other shared array is used on both sides of the removed ``__syncthreads()``).

    Options: ``braces`` (default true: the restored ``if`` of an own-shape block keeps
    its statement in braces).

    Round trip: on its own block shape the inverse is ``block-reduce-atomic``; on a
    hand-written reduction ``inverse_for`` reads the spelling (names, mask, index forms,
    the warp count, pragmas, braces, the partials' extent) into
    ``block-reduce-atomic{style=inline,...}``, which writes the reduction back token for
    token (e.g. corpus/reduce-sum/expert.cu).
    """

    name = "atomic-per-thread"
    kind = "simplify"
    inverse = "block-reduce-atomic"
    anchor = Rule(any=(REDUCTION, LEADER_ATOMIC))
    preconditions = (
        Precondition("reduction-shape", "layout",
                     "warp shuffles, per-warp partials in shared memory, warp 0, one atomic by "
                     "thread 0; or, at an atomic, a block fold of any spelling that the "
                     "block machine runs", _reduction_shape),
        Precondition("matching-op", "dtype",
                     "the shuffles and the atomic combine with one operator; warp 0 fills with "
                     "its identity", _matching_op),
        Precondition("dead-after", "storage",
                     "the reduced value and the reduction's names are not used after it",
                     _dead_after),
        Precondition("barrier-private", "pipeline",
                     "the removed __syncthreads() orders nothing but the reduction's partials",
                     _barrier_private),
    )

    braces: bool = option(True, Bool(), "brace the restored if's statement")

    def rewrite(self, site, ctx):
        if site.node.type == "call_expression":
            return _fold_rewrite(site, ctx)
        unit, fn = site.unit, site.function
        red, _ = _match(site, ctx)
        f = unit.text(red.atomic.child_by_field_name("function"))
        p = unit.text(red.address)
        own = _own(site, red)
        if own is not None:
            blk, init, _ = own
            ind = line_indent(unit, blk.start_byte)
            st = indent_step(unit, blk)
            if ind and st == ind:
                st = "    " if len(ind) % 4 == 0 else "  "
            if init.type == "conditional_expression":
                c = init.child_by_field_name("condition")
                e = init.child_by_field_name("consequence")
                call = f"{f}({p}, {unwrap(unit, e)});"
                cond = unwrap_cond(unit, c)
                text = (f"if ({cond}) {{\n{ind}{st}{call}\n{ind}}}" if self.braces
                        else f"if ({cond}) {call}")
            else:
                text = f"{f}({p}, {unwrap(unit, init)});"
            return [Edit(blk.start_byte, blk.end_byte, text)]
        start, lead = red.first.start_byte, ""
        prs = pragmas_for(unit, red.first)
        if prs:
            # the pragmas before the loop go too: start at the first one's line
            start = unit.source.rfind(b"\n", 0, min(pr.start for pr in prs) + 1) + 1
            if unit.source[start:min(pr.start for pr in prs)].strip():
                start = min(pr.start for pr in prs)
            lead = line_indent(unit, red.first.start_byte)
        edits = [Edit(start, red.last.end_byte, f"{lead}{f}({p}, {red.value});")]
        for d in unit.shared_decls():
            if d.name != red.partials or not (d.function == fn.name or d.function is None):
                continue
            decl = d.node
            while decl is not None and decl.type != "declaration":
                decl = decl.parent
            if decl is not None and inside(decl, fn.body) and \
                    len(decl.children_by_field_name("declarator")) == 1:
                s0 = unit.source.rfind(b"\n", 0, decl.start_byte) + 1
                e0 = decl.end_byte
                if unit.source[s0:decl.start_byte].strip() == b"" and \
                        unit.source[e0:e0 + 1] == b"\n":
                    edits.append(Edit.delete(s0, e0 + 1))
                else:
                    edits.append(Edit.delete(decl.start_byte, decl.end_byte))
        return edits

    def update_contract(self, contract, site, ctx):
        return contract if _dropped_smem(site, ctx, contract) is None \
            else contract.with_(smem="0")

    def inverse_for(self, site, ctx):
        if site.node.type == "call_expression":
            got = _fold(site, ctx)
            xor = not isinstance(got, str) and any(
                o.name == "shuffle.xor" and o.node.start_byte >= got.start.start_byte
                for o in operations(site.unit) if o.function == site.function.name)
            c = contracts(site.unit).get(site.function.name)
            smem = _dropped_smem(site, ctx, c) if c is not None else None
            return BlockReduceAtomic(shuffle="xor" if xor else "down", reassoc=True,
                                     smem="".join(smem.split()) if smem else "keep")
        red, _ = _match(site, ctx)
        if red is None:
            return BlockReduceAtomic()
        if _own(site, red) is not None:
            return BlockReduceAtomic(shuffle=red.shuffle, reassoc=True)
        return BlockReduceAtomic(**_inline_options(site, red))


# ------------------------------------------------------ a block fold of any spelling
def _dropped_smem(site, ctx, contract) -> str | None:
    """The launch's dynamic shared memory when the fold ending at this atomic is the only
    thing that uses shared memory (it goes with the fold), else None."""
    if site.node.type != "call_expression" or contract.smem in ("0", ""):
        return None
    got = _fold(site, ctx)
    if isinstance(got, str):
        return None
    region = _region(site, got)
    lo, hi = region[0].start_byte, region[-1].end_byte
    kept = [a for a in accesses(site.unit, site.function)
            if a.space == "shared" and not lo <= a.node.start_byte < hi]
    shared = [n for n in site.unit.walk(site.function.body)
              if n.type == "declaration" and not lo <= n.start_byte < hi
              and "__shared__" in site.unit.text(n).split()]
    return None if kept or shared else contract.smem


def _fold(site, ctx):
    """The block machine's reading of the fold ending at this atomic (memoized): a
    :class:`kltrans.model.block.LeaderFold`, or why not."""
    memo = site.unit.memo("block_reduce_atomic.fold", lambda u: {})
    if site.node.id not in memo:
        memo[site.node.id] = _read_fold(site, ctx)
    return memo[site.node.id]


def _read_fold(site, ctx):
    unit, fn = site.unit, site.function
    for m in REDUCTION.find_all(unit):
        red, _ = match_reduction(unit, fn, m.node) if inside(m.node, fn.body) else (None, "")
        if red is not None and red.atomic.id == site.node.id:
            return (f"the shuffle reduction at line {unit.location(m.node.start_byte).line} "
                    "ends here: that site reads it token for token")
    size = block_of(site)
    if size is None:
        return "the block size is not a constant of the launch contract"
    launches = draws(fn, size, seed=site.node.start_byte, count=2)
    for ints in launches:
        ints.update({k: v for k, v in (ctx.sizes if ctx is not None else {}).items()})
    return leader_fold(unit, fn, site.node, launches, size)


def block_of(site) -> int | None:
    from kltrans.syntax.contract import contracts

    try:
        c = contracts(site.unit).get(site.function.name)
    except Exception:
        return None
    v = block_dim(c).value if c is not None else None
    return v if isinstance(v, int) else None


def _fold_shape(site, ctx) -> Verdict:
    got = _fold(site, ctx)
    if isinstance(got, str):
        return Verdict.no(got)
    return Verdict.yes(f"a block of {block_of(site)} threads folds every thread's "
                       f"`{got.value}` with {got.op} into this one atomic "
                       f"(run at {got.launches} launches)")


def _fold_op(site, ctx) -> Verdict:
    got = _fold(site, ctx)
    if isinstance(got, str):
        return Verdict.unknown(got)
    return Verdict.yes(f"the block run folds with the atomic's operator {got.op}")


def _fold_dead_after(site, ctx) -> Verdict:
    got = _fold(site, ctx)
    if isinstance(got, str):
        return Verdict.unknown(got)
    unit = site.unit
    inner = {n for s in _region(site, got) for n, _ in declared_names(unit, s)}
    addr = _args_of(site.node)[0]
    used = {unit.text(n) for n in unit.walk(addr) if n.type == "identifier"} & inner
    if used:
        return Verdict.no(f"the atomic's address uses {sorted(used)[0]}, declared by the fold")
    if got.kind == "stored":
        vals = {unit.text(n) for n in unit.walk(got.start) if n.type == "identifier"}
        clash = vals & inner
        if clash:
            return Verdict.no(f"the stored value uses {sorted(clash)[0]}, declared by the fold")
    return Verdict.yes("the fold ends the kernel: nothing after it reads what it computes")


def _fold_private(site, ctx) -> Verdict:
    got = _fold(site, ctx)
    if isinstance(got, str):
        return Verdict.unknown(got)
    return Verdict.yes("no statement before the fold stores to shared memory and none "
                       "follows it: its barriers order nothing else")


def _region(site, got) -> list:
    return [s for s in site.function.body.named_children
            if s.type != "comment" and s.start_byte >= got.start.start_byte]


def _args_of(call) -> list:
    return [c for c in call.child_by_field_name("arguments").named_children
            if c.type != "comment"]


def _fold_rewrite(site, ctx):
    unit, fn = site.unit, site.function
    got = _fold(site, ctx)
    region = _region(site, got)
    f = unit.text(site.node.child_by_field_name("function"))
    addr = unit.text(_args_of(site.node)[0])
    start = line_start(unit, got.start.start_byte)
    ind = line_indent(unit, got.start.start_byte)
    prs = pragmas_for(unit, got.start)
    if prs:
        start = line_start(unit, min(pr.start for pr in prs))
    start = comments_above(unit, got.start, start)
    edits = [Edit(start, region[-1].end_byte, f"{ind}{f}({addr}, {got.value});")]
    gone = [(start, region[-1].end_byte)]
    keep = {unit.text(n) for n in unit.walk(_args_of(site.node)[0]) if n.type == "identifier"}
    keep |= {got.value} if got.kind == "local" else \
        {unit.text(n) for n in unit.walk(got.start.named_children[0].child_by_field_name("right"))
         if n.type == "identifier"}
    dead = dead_declarations(unit, fn, gone, keep)
    edits += [remove_described(unit, d) for d in dead]
    gone += [(d.start_byte, d.end_byte) for d in dead]
    return edits + drop_unused_definitions(unit, gone, keep)


def _inline_options(site, red) -> dict:
    """The options of ``block-reduce-atomic{style=inline}`` that spell ``red`` as written."""
    unit = site.unit
    opts = {"shuffle": red.shuffle, "style": "inline", "reassoc": True,
            "value2": "same" if red.phase2_value == red.value else red.phase2_value,
            "partials": red.partials}
    head = squash(unit.text((red.first.start_byte,
                             red.first.child_by_field_name("body").start_byte)))
    m = _LOOP_HEAD.match(head)
    if m:
        opts["offset"] = m.group(1)
    call = next((n for n in unit.walk(red.first) if n.type == "call_expression" and
                 unit.text(n.child_by_field_name("function")) in SHUFFLES.values()), None)
    if call is not None:
        args = [x for x in call.child_by_field_name("arguments").named_children
                if x.type != "comment"]
        if args and squash(unit.text(args[0])) in MASK_SPELLINGS:
            opts["mask"] = squash(unit.text(args[0]))
    opts["pragmas"] = bool(pragmas_for(unit, red.first))
    body = red.first.child_by_field_name("body")
    opts["braces"] = body is not None and body.type == "compound_statement"
    for st in red.stmts[1:]:
        got = _decl_parts(unit, st)
        if got is None or got[2] is None:
            continue
        v = _paren(squash(unit.text(got[2])))
        if v in ("threadIdx.x&31", "threadIdx.x%32"):
            opts["lane"] = got[1]
            opts["lane_form"] = "and" if "&" in v else "mod"
            opts["const_ids"] = unit.text(st).lstrip().startswith("const")
        elif v in ("threadIdx.x>>5", "threadIdx.x/32"):
            opts["warp"] = got[1]
            opts["warp_form"] = "shift" if ">>" in v else "div"
    inner = statements(red.last.child_by_field_name("consequence"))
    for st in inner:
        got = _decl_parts(unit, st)
        if got is None or got[2] is None:
            break
        v = squash(unit.text(got[2]))
        if v in _NWARPS_OF:
            opts["nwarps"] = got[1]
            opts["nwarps_form"] = _NWARPS_OF[v]
            break
        load = _strip(got[2])
        if load is not None and load.type == "conditional_expression":
            cnd = _strip(load.child_by_field_name("condition"))
            if cnd is not None and cnd.type == "binary_expression":
                nw = _paren(squash(unit.text(cnd.child_by_field_name("right"))))
                if nw in _NWARPS_OF:
                    opts["nwarps_form"] = _NWARPS_OF[nw]
            break
    else:
        pass
    if "nwarps" not in opts:
        for st in inner:
            e = st.named_children[0] if st.type == "expression_statement" and \
                st.named_children else None
            if e is not None and e.type == "assignment_expression":
                rhs = _strip(e.child_by_field_name("right"))
                if rhs is not None and rhs.type == "conditional_expression":
                    cnd = _strip(rhs.child_by_field_name("condition"))
                    if cnd is not None and cnd.type == "binary_expression":
                        nw = _paren(squash(unit.text(cnd.child_by_field_name("right"))))
                        if nw in _NWARPS_OF:
                            opts["nwarps_form"] = _NWARPS_OF[nw]
                break
    for d in unit.shared_decls():
        if d.name == red.partials and d.dims:
            opts["slots"] = squash(d.dims[0])
    return opts


def unwrap_cond(unit, c) -> str:
    """The guard as written in ``(C) ? ...``: one pair of parentheses removed."""
    if c.type == "parenthesized_expression":
        inner = [x for x in c.named_children if x.type != "comment"]
        if len(inner) == 1:
            return unit.text(inner[0])
    return unit.text(c)


__all__ = ["AtomicPerThread", "BlockReduceAtomic", "match_reduction"]
