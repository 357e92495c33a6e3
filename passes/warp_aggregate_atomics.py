"""Warp-aggregated atomics: ``warp-aggregate-atomics`` (optimize) and ``per-lane-atomics`` (simplify)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from kltrans.analysis.affine import resolve_name, strip_parens
from kltrans.analysis.verdict import Verdict
from kltrans.match import Rule
from kltrans.passes import Identifier, Pass, Precondition, option
from kltrans.passes.facts import arch_number
from kltrans.syntax import Edit
from kltrans.syntax.contract import contracts
from kltrans.passes.rewrite import (
    fresh_numbered as fresh, indent_of as line_indent, norm, statements)

INT_TYPES = ("int", "unsigned int", "unsigned", "unsigned long long", "unsigned long long int",
             "uint32_t", "int32_t", "uint64_t", "unsigned long")
_QUALS = re.compile(r"\b(const|volatile|__restrict__|__restrict)\b")
_LANE = "(threadIdx.x & 31)"
_LITERAL = re.compile(r"^\d+[uU]?[lL]{0,2}$")


def _args(call) -> list:
    a = call.child_by_field_name("arguments")
    return [c for c in a.named_children if c.type != "comment"] if a is not None else []


def _callee(unit, call) -> str:
    f = call.child_by_field_name("function")
    return norm(unit.text(f)) if f is not None else ""


@dataclass
class _Atomic:
    call: object
    stmt: object  # the expression statement (None when the value is used)
    addr: object
    inc: object
    array: str | None
    key: object | None  # the index (None: a scalar counter `atomicAdd(ctr, 1)`)


def atomic_of(unit, call) -> _Atomic | None:
    if _callee(unit, call) != "atomicAdd":
        return None
    args = _args(call)
    if len(args) != 2:
        return None
    addr, inc = args
    a = strip_parens(addr)
    array, key = None, None
    if a.type == "pointer_expression" and unit.text(a.child_by_field_name("operator")) == "&":
        sub = strip_parens(a.child_by_field_name("argument"))
        if sub.type == "subscript_expression":
            base = sub.child_by_field_name("argument")
            idxl = sub.child_by_field_name("indices") or sub.child_by_field_name("index")
            idx = [c for c in idxl.named_children if c.type != "comment"] if idxl else []
            if base.type == "identifier" and len(idx) == 1:
                array, key = unit.text(base), idx[0]
    elif a.type == "binary_expression" and unit.text(a.child_by_field_name("operator")) == "+":
        left = a.child_by_field_name("left")
        if left.type == "identifier":
            array, key = unit.text(left), a.child_by_field_name("right")
    elif a.type == "identifier":
        array = unit.text(a)
    st = call.parent if call.parent is not None and call.parent.type == "expression_statement" \
        else None
    return _Atomic(call, st, addr, inc, array, key)


def _site_atomic(site) -> _Atomic:
    return atomic_of(site.unit, site.node)


def _thread_names(unit, fn) -> set:
    """Locals whose value may differ between the lanes of a warp (flow-insensitive)."""
    varying = set()
    decls = []
    for n in unit.walk(fn.node):
        if n.type == "init_declarator":
            d = n.child_by_field_name("declarator")
            while d is not None and d.type != "identifier":
                d = d.child_by_field_name("declarator")
            if d is not None:
                decls.append((unit.text(d), n.child_by_field_name("value")))
        elif n.type == "assignment_expression":
            left = strip_parens(n.child_by_field_name("left"))
            if left.type == "identifier":
                decls.append((unit.text(left), n.child_by_field_name("right")))
        elif n.type == "for_statement":
            pass
    changed = True
    while changed:
        changed = False
        for name, value in decls:
            if name in varying or value is None:
                continue
            text = unit.text(value)
            if "threadIdx" in text or "laneid" in text or any(
                    x.type == "identifier" and unit.text(x) in varying for x in unit.walk(value)) \
                    or "[" in text or "*" == text[:1] or "atomic" in text or "__shfl" in text:
                varying.add(name)
                changed = True
    # anything a loop or a thread-dependent branch assigns is conservatively varying too
    for n in unit.walk(fn.node):
        if n.type == "update_expression":
            a = strip_parens(n.child_by_field_name("argument"))
            if a.type == "identifier":
                varying.add(unit.text(a))
    return varying


def uniform_expr(unit, fn, node) -> bool:
    """Whether ``node`` has the same value in every lane (literals, kernel scalars,
    blockIdx/blockDim/gridDim and locals computed from them only)."""
    if "threadIdx" in unit.text(node):
        return False
    varying = _thread_names(unit, fn)
    params = {p.name: p for p in fn.params if p.name}
    for n in unit.walk(node):
        if n.type == "identifier":
            nm = unit.text(n)
            if nm in varying:
                return False
            p = params.get(nm)
            b = resolve_name(unit, n, nm)
            if p is not None and p.pointer == 0 and b.kind == "param":
                continue
            if b.kind in ("macro", "enum", "global_const", "tparam", "builtin"):
                continue
            if b.kind == "local":
                continue  # not in `varying`: computed from uniform values only
            if nm in ("blockIdx", "blockDim", "gridDim", "x", "y", "z"):
                continue
            return False
        if n.type in ("subscript_expression", "call_expression", "pointer_expression"):
            return False
    return True


# ------------------------------------------------------------------ preconditions
def _elem_type(unit, fn, array: str | None) -> str | None:
    for p in fn.params:
        if p.name == array and p.pointer == 1:
            return norm(_QUALS.sub(" ", p.base_type))
    return None


def _integer_add(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    a = _site_atomic(site)
    if a.array is None:
        return Verdict.no(f"`{norm(unit.text(a.addr))}` is not &ctr[k], ctr + k or ctr with "
                          "ctr a pointer parameter")
    t = _elem_type(unit, fn, a.array)
    if t is None:
        return Verdict.unknown(f"{a.array} is not a pointer parameter of {fn.name}: its "
                               "element type is not known")
    if t not in INT_TYPES:
        return Verdict.no(f"{a.array} holds {t}: one add of the lane count is exact only for "
                          "integers (a float sum would round differently)")
    return Verdict.yes(f"{a.array} holds {t}: integer adds commute exactly")


def _result_unused(site, ctx) -> Verdict:
    a = _site_atomic(site)
    if a.stmt is None:
        return Verdict.no(f"the value of `{norm(site.unit.text(a.call))}` is used: only the "
                          "leader's atomic would return an old value")
    return Verdict.yes("the returned old value is not used")


def _uniform_increment(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    a = _site_atomic(site)
    if uniform_expr(unit, fn, a.inc):
        return Verdict.yes(f"the increment {norm(unit.text(a.inc))} is the same in every lane")
    return Verdict.no(f"the increment {norm(unit.text(a.inc))} may differ between lanes: "
                      "count * increment would not be the sum")


def _one_d_block(site, ctx) -> Verdict:
    unit, fn = site.unit, site.function
    for n in unit.walk(fn.node):
        if n.type == "field_expression" and norm(unit.text(n)) in ("threadIdx.y", "threadIdx.z"):
            return Verdict.no(f"{fn.name} uses {unit.text(n)}: the lane is not threadIdx.x & 31 "
                              "in a 2-D or 3-D block")
    c = contracts(unit).get(fn.name)
    if c is None:
        return Verdict.unknown(f"{fn.name} has no launch contract: the lane is threadIdx.x & 31 "
                               "only for a 1-D block; add `// kltrans: launch ... block=B`")
    if len(c.block) != 1:
        return Verdict.no(f"block={c.block} is not 1-D: the lane is not threadIdx.x & 31")
    return Verdict.yes(f"1-D block ({c.block[0]}): the lane is threadIdx.x & 31")


def _arch(site, ctx) -> Verdict:
    a = _site_atomic(site)
    uniform = a.key is None or uniform_expr(site.unit, site.function, a.key)
    if uniform:
        n = arch_number(ctx.arch)
        if n is not None and n < 30:
            return Verdict.no(f"{ctx.arch}: __activemask needs sm_30")
        return Verdict.yes("the address is warp-uniform: __activemask and __popc only (every "
                           "supported architecture)")
    return ctx.arch_at_least(70)


ATOMIC = Rule(pattern="atomicAdd($$$ARGS)", inside_kernel=True)


def _aggregate_text(unit, a: _Atomic, peers: str, ind: str, st: str, uniform: bool) -> str:
    inc = norm(unit.text(a.inc))
    count = f"__popc({peers})" if inc == "1" else f"{unit.text(a.inc)} * __popc({peers})"
    if uniform:
        first = f"const unsigned {peers} = __activemask();"
    else:
        first = f"const unsigned {peers} = __match_any_sync(__activemask(), {unit.text(a.key)});"
    return "\n".join([
        "{",
        f"{ind}{st}{first}",
        f"{ind}{st}if ({_LANE} == __ffs({peers}) - 1) atomicAdd({unit.text(a.addr)}, {count});",
        f"{ind}}}"])


def _step(unit, fn) -> str:
    """One level of indentation: that of the kernel body's first statement."""
    st = statements(fn.body) if fn.body is not None else []
    ind = line_indent(unit, st[0].start_byte) if st else ""
    return ind or "    "


@dataclass(frozen=True)
class WarpAggregateAtomics(Pass):
    """Aggregate a warp's atomic increments: one atomicAdd per distinct address per warp.

    Before::

        if (v < 256u) {
            atomicAdd(&bins[v], 1u);
        }

    After ``warp-aggregate-atomics`` (with ``--arch sm_70`` or newer)::

        if (v < 256u) {
            {
                const unsigned peers = __match_any_sync(__activemask(), v);
                if ((threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&bins[v], 1u * __popc(peers));
            }
        }

    The lanes that reach the atomic together (``__activemask()``) are grouped by address
    (``__match_any_sync`` on the index); the lowest lane of each group adds the group's
    size times the increment. For a warp-uniform address (``atomicAdd(ctr, 1)``,
    ``&ctr[blockIdx.x]``) the group is every active lane: ``__activemask()`` and
    ``__popc`` only. An increment of ``1`` becomes ``__popc(peers)``.

    Divergence: the call may sit under a thread-dependent branch; ``__activemask()``
    gives the lanes that are there together and lanes that arrive apart aggregate
    separately (still correct, less aggregation). Nothing is assumed about whole warps.

    Runtime facts: none. From the context: the architecture (``--arch sm_70``+ for
    ``__match_any_sync``; without ``--arch`` a thread-dependent address is unknown).

    Preconditions: integer-add (dtype: the counter is an integer pointer parameter;
    float sums would round differently), result-unused (storage: the old value the atomic
    returns is not used), uniform-increment (pipeline: the increment is the same in every
    lane: literals, kernel scalars, block-uniform values), one-d-block (layout: the lane
    is ``threadIdx.x & 31``: a 1-D block in the launch contract, no threadIdx.y/z), arch
    (hardware: sm_70+ for ``__match_any_sync``).

    Options: ``peers`` (the name of the lane-mask variable; ``auto``: peers, or an unused
    variant).
    """

    name = "warp-aggregate-atomics"
    kind = "optimize"
    inverse = "per-lane-atomics"
    anchor = ATOMIC
    preconditions = (
        Precondition("integer-add", "dtype",
                     "the counter is an integer array (exact when adds are regrouped)",
                     _integer_add),
        Precondition("result-unused", "storage",
                     "the old value the atomic returns is not used", _result_unused),
        Precondition("uniform-increment", "pipeline",
                     "the increment is the same in every lane", _uniform_increment),
        Precondition("one-d-block", "layout",
                     "the lane is threadIdx.x & 31 (1-D block)", _one_d_block),
        Precondition("arch", "hardware", "sm_70+ for __match_any_sync", _arch),
    )

    peers: str = option("auto", Identifier(), "the name of the lane-mask variable")

    def rewrite(self, site, ctx):
        unit, fn = site.unit, site.function
        a = _site_atomic(site)
        peers = self.peers if self.peers != "auto" else fresh(unit, fn, ("peers", "peer_mask"))
        uniform = a.key is None or uniform_expr(unit, fn, a.key)
        ind = line_indent(unit, a.stmt.start_byte)
        return [Edit(a.stmt.start_byte, a.stmt.end_byte,
                     _aggregate_text(unit, a, peers, ind, _step(unit, fn), uniform))]

    def inverse_for(self, site, ctx):
        return PerLaneAtomics()


# ------------------------------------------------------------------ the inverse
@dataclass
class _Agg:
    peers: str
    addr: str
    inc: str
    key: str | None


def aggregated_of(unit, block) -> "_Agg | str":
    st = statements(block)
    if block.type != "compound_statement" or len(st) != 2:
        return "not a block of two statements"
    d, guard = st
    m = re.fullmatch(r"const unsigned (\w+) = (.*);", norm(unit.text(d)))
    if d.type != "declaration" or m is None:
        return "the block does not start with `const unsigned peers = ...;`"
    peers, init = m.group(1), m.group(2)
    key = None
    mk = re.fullmatch(r"__match_any_sync\(__activemask\(\), (.*)\)", init)
    if mk is not None:
        key = mk.group(1)
    elif init != "__activemask()":
        return f"{peers} is `{init}`, not __activemask() or __match_any_sync(__activemask(), k)"
    g = norm(unit.text(guard))
    pre = f"if ({_LANE} == __ffs({peers}) - 1) atomicAdd("
    if guard.type != "if_statement" or not g.startswith(pre) or not g.endswith(");"):
        return f"the second statement is not `if ({_LANE} == __ffs({peers}) - 1) atomicAdd(...);`"
    cons = guard.child_by_field_name("consequence")
    calls = [n for n in unit.walk(cons) if n.type == "call_expression"
             and _callee(unit, n) == "atomicAdd"]
    if not calls:
        return "no atomicAdd under the leader test"
    args = _args(calls[0])
    if len(args) != 2:
        return "the atomicAdd does not take two arguments"
    addr, count = unit.text(args[0]), norm(unit.text(args[1]))
    if count == f"__popc({peers})":
        inc = "1"
    elif count.endswith(f" * __popc({peers})"):
        inc = unit.text(args[1])[:unit.text(args[1]).rindex("*")].rstrip()
    else:
        return f"the atomic adds `{count}`, not INC * __popc({peers})"
    names = set(re.findall(r"\w+", addr + " " + inc + " " + (key or "")))
    if peers in names:
        return f"the address or the increment uses {peers}"
    if key is not None:
        a = atomic_of(unit, calls[0])
        if a is None or a.key is None or norm(unit.text(a.key)) != norm(key):
            return f"the atomic's address is not indexed by the matched key {key}"
    return _Agg(peers, addr, inc, key)


def _aggregated_form(site, ctx) -> Verdict:
    f = aggregated_of(site.unit, site.node)
    if isinstance(f, str):
        return Verdict.no(f)
    return Verdict.yes(f"warp-aggregated atomicAdd({f.addr}, {f.inc})")


AGGREGATED = Rule(kind="compound_statement", inside_kernel=True,
                  has=Rule(kind="call_expression", regex=r"^__activemask"))


@dataclass(frozen=True)
class PerLaneAtomics(Pass):
    """Undo warp aggregation: every lane does its own atomicAdd again.

    Before::

        {
            const unsigned peers = __match_any_sync(__activemask(), v);
            if ((threadIdx.x & 31) == __ffs(peers) - 1) atomicAdd(&bins[v], 1u * __popc(peers));
        }

    After ``per-lane-atomics``::

        atomicAdd(&bins[v], 1u);

    It recognizes the block ``warp-aggregate-atomics`` writes (``__match_any_sync`` on
    the index or a plain ``__activemask()``, the lowest-lane leader test, ``INC *
    __popc(peers)`` or ``__popc(peers)`` for an increment of 1). Other hand-written
    aggregation (cooperative groups, ``__reduce_add_sync``, a leader elected by
    ``__shfl_sync``) is left alone.

    Preconditions: aggregated-form (layout: the two-statement block above, the matched
    key being the atomic's index).

    Options: none.
    """

    name = "per-lane-atomics"
    kind = "simplify"
    inverse = "warp-aggregate-atomics"
    anchor = AGGREGATED
    preconditions = (
        Precondition("aggregated-form", "layout",
                     "the block is the warp aggregation warp-aggregate-atomics writes",
                     _aggregated_form),
    )

    def sites(self, unit, ctx):
        out = []
        for s in super().sites(unit, ctx):
            st = statements(s.node)
            if len(st) == 2 and st[0].type == "declaration" and \
                    "__activemask" in unit.text(st[0]) and st[1].type == "if_statement":
                out.append(s)
        return [type(s)(s.unit, s.match, s.function, k + 1, s.pass_) for k, s in enumerate(out)]

    def rewrite(self, site, ctx):
        f = aggregated_of(site.unit, site.node)
        return [Edit(site.node.start_byte, site.node.end_byte,
                     f"atomicAdd({f.addr}, {f.inc});")]

    def inverse_for(self, site, ctx):
        f = aggregated_of(site.unit, site.node)
        return WarpAggregateAtomics(peers=f.peers if not isinstance(f, str) else "auto")


__all__ = ["PerLaneAtomics", "WarpAggregateAtomics", "aggregated_of", "atomic_of",
           "uniform_expr"]
