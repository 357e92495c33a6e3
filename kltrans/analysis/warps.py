"""Warp uniformity: does a condition take the same value in all 32 lanes of a warp?

Warp-synchronous code (``__shfl_*_sync`` with a full mask, ``__syncwarp``, warp-level
reductions) is only correct when every lane of the warp reaches it. :func:`warp_uniform`
decides that for a condition, :func:`warp_primitives` lists the warp primitives of a
function with the conditions they sit under.

How a value is classified, assuming 1-D blocks where warp ``w`` holds threads
``32w .. 32w+31`` (``threadIdx.y``/``z`` are warp-uniform only when ``blockDim.x`` is a
multiple of 32, which ``env`` can state):

- *uniform*: does not depend on ``threadIdx`` (``blockIdx``, parameters, loop counters);
- *warp*: depends on the thread only through its warp (``threadIdx.x / 32``,
  ``threadIdx.x >> 5``, ``tid / warpSize``, ``threadIdx.x & ~31``, ``tile.meta_group_rank()``);
- *linear*: ``threadIdx.x + off`` with ``off`` uniform (``tid``, ``i = blockIdx.x *
  blockDim.x + threadIdx.x``, a grid-stride induction variable); ``t < B`` is uniform
  exactly when ``B - off`` is a multiple of 32;
- *lane*: a known function of the lane (``threadIdx.x % 32``, ``threadIdx.x & 31``,
  ``tile.thread_rank()``, ``__lane_id()``): comparisons with constants are checked for all
  32 lanes;
- anything else that depends on the thread (data loaded per thread, ``threadIdx.x * 2``)
  is unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Mapping

from kltrans.analysis.affine import (
    LOOP_NODE_TYPES,
    THREAD_SYMBOLS,
    UNKNOWN_DEP,
    WARP_SIZE,
    Affine,
    _norm,
    _reaching,
    _resolve,
    _strip_parens,
    affine_of,
    sources,
)
from kltrans.analysis.verdict import Verdict

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

_T = "threadIdx.x"
_CMP = {"<", "<=", ">", ">=", "==", "!="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_PY = {"<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
       ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b}


@dataclass
class _Class:
    kind: str  # uniform warp linear lane caller varying ydim
    off: Affine | None = None  # linear: value = threadIdx.x + off
    lane_fn: Callable[[int], int] | None = None  # lane: value as a function of the lane
    why: str = ""
    value: Affine | None = None  # uniform: the affine form when known


class _Classifier:
    def __init__(self, unit: "Unit", env: Mapping[str, int] | None):
        self.unit = unit
        self.env = {k: Affine.of(v) for k, v in (env or {}).items()}
        self.active: set = set()
        bd = self.env.get("blockDim.x")
        self.rows_uniform = bd is not None and bd.value() is not None and bd.value() % 32 == 0

    def thread_deps(self, node: "Node") -> tuple[set[str], bool]:
        deps = sources(self.unit, node)
        thr = set(deps & THREAD_SYMBOLS)
        if self.rows_uniform:
            thr -= {"threadIdx.y", "threadIdx.z"}
        return thr, UNKNOWN_DEP in deps

    def classify(self, node: "Node") -> _Class:
        unit = self.unit
        node = _strip_parens(node)
        text = _norm(unit.text(node))
        thr, caller = self.thread_deps(node)
        if not thr:
            if caller:
                return _Class("caller", why=f"`{text}` depends on a parameter of the device "
                                            "function (the caller decides)")
            return _Class("uniform", value=affine_of(unit, node, env=self.env))
        if thr <= {"threadIdx.y", "threadIdx.z"}:
            return _Class("ydim", why=f"`{text}` depends on {sorted(thr)[0]}, which is "
                                      "warp-uniform only when blockDim.x is a multiple of 32")
        a = affine_of(unit, node, env=self.env)
        if a is not None:
            a = self._inductions(a, node)
        if a is not None:
            c = a.coeff(_T)
            if c is not None and c == 1:
                off = a.without(_T)
                odeps = off.free_symbols() & (THREAD_SYMBOLS | {UNKNOWN_DEP})
                if self.rows_uniform:
                    odeps -= {"threadIdx.y", "threadIdx.z"}
                if not odeps:
                    return _Class("linear", off=off)
            return _Class("varying", why=f"`{text}` = {a} is not threadIdx.x plus a "
                                         "warp-uniform offset")
        return self.structural(node, text)

    def _inductions(self, a: Affine, node: "Node") -> Affine | None:
        from kltrans.analysis.affine import _substitute_inductions

        try:
            return _substitute_inductions(self.unit, a, node, _T)
        except Exception:  # pragma: no cover - defensive
            return None

    def structural(self, node: "Node", text: str) -> _Class:
        unit = self.unit
        t = node.type
        if t == "cast_expression":
            return self.classify(node.child_by_field_name("value"))
        if t == "identifier":
            name = unit.text(node)
            b = _resolve(unit, node, name)
            if b.kind in ("local", "param"):
                d = _reaching(unit, b, node)
                key = (b.key, d.pos if d is not None else None)
                if d is not None and d.rhs is not None and key not in self.active:
                    self.active.add(key)
                    try:
                        return self.classify(d.rhs)
                    finally:
                        self.active.discard(key)
                return self.mutable(b, node, text)
            return _Class("varying", why=f"`{text}` depends on the thread")
        if t == "binary_expression":
            op = unit.text(node.child_by_field_name("operator"))
            ln, rn = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op in ("/", ">>", "%", "&"):
                k = self.const(rn)
                lc = self.classify(ln)
                if k is not None:
                    return self.divmod(lc, op, k, text)
            return _Class("varying", why=f"`{text}` depends on the thread in a way not modelled")
        if t == "call_expression":
            f = node.child_by_field_name("function")
            fname = _norm(unit.text(f)) if f is not None else ""
            method = fname.split(".")[-1].split("->")[-1].split("::")[-1]
            if method in ("__lane_id", "lane_id", "laneid"):
                return _Class("lane", lane_fn=lambda l: l)
            if method in ("thread_rank",) and f is not None and f.type == "field_expression":
                size = self.tile_size(f.child_by_field_name("argument"))
                if size is not None and size <= WARP_SIZE and WARP_SIZE % size == 0:
                    return _Class("lane", lane_fn=lambda l, s=size: l % s)
                return _Class("varying", why=f"`{text}`: the rank in a group larger than a warp")
            if method == "meta_group_rank":
                return _Class("warp")
            return _Class("varying", why=f"`{text}` depends on the thread")
        if t == "conditional_expression":
            return _Class("varying", why=f"`{text}` selects per thread")
        return _Class("varying", why=f"`{text}` depends on per-thread values")

    def tile_size(self, recv: "Node | None") -> int | None:
        """The size of a cooperative-groups tile variable (``tiled_partition<32>``)."""
        unit = self.unit
        if recv is None:
            return None
        recv = _strip_parens(recv)
        text = unit.text(recv)
        decl_text = text
        if recv.type == "identifier":
            b = _resolve(unit, recv, text)
            if b.decl is not None:
                decl_text = unit.text(b.decl)
        m = re.search(r"(?:thread_block_tile|tiled_partition)\s*<\s*([^>]+)>", decl_text)
        if m:
            txt = m.group(1).strip()
            try:
                return int(txt, 0)
            except ValueError:
                from kltrans.analysis.affine import _unit_info

                mac = _unit_info(unit).macro(txt, recv.start_byte)
                if mac is not None and mac.body.isdigit():
                    return int(mac.body)
                return None
        if "coalesced" in decl_text:
            return None
        if "thread_block" in decl_text or "this_thread_block" in decl_text:
            return None
        return None

    def mutable(self, b, node: "Node", text: str) -> _Class:
        """A variable with several definitions: uniform/warp when every definition is."""
        from kltrans.analysis.affine import _defs

        key = ("mutable", b.key)
        if key in self.active:
            return _Class("uniform")  # optimistic for cycles: the other definitions decide
        self.active.add(key)
        try:
            kinds = set()
            for d in _defs(self.unit, b):
                if d.kind == "param":
                    kinds.add("uniform" if b.kernel else "caller")
                elif d.kind in ("addr", "ref", "range"):
                    kinds.add("varying")
                elif d.rhs is not None:
                    kinds.add(self.classify(d.rhs).kind)
            if kinds <= {"uniform"}:
                return _Class("uniform")
            if kinds <= {"uniform", "warp"}:
                return _Class("warp")
            if "caller" in kinds and kinds <= {"uniform", "warp", "caller"}:
                return _Class("caller", why=f"`{text}` depends on a parameter of the device function")
            return _Class("varying", why=f"`{b.name}` is assigned several times and depends on "
                                         "the thread")
        finally:
            self.active.discard(key)

    def const(self, node: "Node") -> int | None:
        a = affine_of(self.unit, node, env=self.env)
        return a.value() if a is not None else None

    def divmod(self, lc: _Class, op: str, k: int, text: str) -> _Class:
        if lc.kind in ("uniform", "warp"):
            return lc if lc.kind == "warp" else _Class("uniform")
        if lc.kind == "lane" and lc.lane_fn is not None:
            f = lc.lane_fn
            fn = _int_op(op, k)
            if fn is None:
                return _Class("varying", why=f"`{text}`")
            return _Class("lane", lane_fn=lambda l: fn(f(l)))
        if lc.kind != "linear":
            return lc if lc.kind in ("caller", "ydim") else _Class("varying", why=lc.why or f"`{text}`")
        aligned = lc.off.divisible_by(WARP_SIZE) if lc.off is not None else None
        if aligned is not True:
            return _Class("varying", why=f"`{text}`: the offset {lc.off} of threadIdx.x is not "
                                         "known to be a multiple of 32")
        # value = 32*w + lane (w: the warp's index, offset folded in)
        if op == "/" and k > 0:
            if k % WARP_SIZE == 0:
                return _Class("warp")
            if WARP_SIZE % k == 0:
                return _Class("varying", why=f"`{text}` groups {k} lanes: it differs within a warp")
        if op == ">>" and 0 <= k < 64:
            if k >= 5:
                return _Class("warp")
            return _Class("varying", why=f"`{text}` groups {1 << k} lanes: it differs within a warp")
        if op == "%" and k > 0:
            if WARP_SIZE % k == 0:
                return _Class("lane", lane_fn=lambda l: l % k)
            if k % WARP_SIZE == 0:  # t % k = t - k * (t / k), and t / k is warp-uniform
                return _Class("linear", off=Affine.sym(f"(threadIdx.x / {k})") * (-k))
        if op == "&":
            low = k & (WARP_SIZE - 1)
            if low == 0:
                return _Class("warp")
            if low == WARP_SIZE - 1 and ((k + 1) & k) == 0:  # mask 2^m - 1 with m >= 5
                if k == WARP_SIZE - 1:
                    return _Class("lane", lane_fn=lambda l: l)
                return _Class("linear", off=Affine.sym(f"(threadIdx.x / {k + 1})") * (-(k + 1)))
            if k < WARP_SIZE:
                return _Class("lane", lane_fn=lambda l: l & k)
        return _Class("varying", why=f"`{text}` mixes lane and warp bits")


def _int_op(op: str, k: int):
    if op == "/" and k != 0:
        return lambda v: v // k
    if op == ">>" and 0 <= k < 64:
        return lambda v: v >> k
    if op == "%" and k != 0:
        return lambda v: v % k
    if op == "&":
        return lambda v: v & k
    return None


def _loop_values(unit: "Unit", var: str, node: "Node") -> list[int] | None:
    """The values an induction variable of a constant-trip loop around ``node`` takes."""
    from kltrans.analysis.loops import _apply, loop_of

    p = node.parent
    while p is not None and p.type not in ("function_definition", "lambda_expression"):
        if p.type in LOOP_NODE_TYPES:
            lp = loop_of(unit, p)
            if lp is not None and lp.var == var:
                if lp.trip_count is None or lp.trip_count > 64 or lp.init is None \
                        or lp.init.value() is None or lp.step_op is None:
                    return None
                k = affine_of(unit, lp.step_node).value() if lp.step_node is not None else 1
                if k is None:
                    return None
                vals = []
                v = lp.init.value()
                for _ in range(lp.trip_count):
                    vals.append(v)
                    v = _apply(v, lp.step_op, k)
                    if v is None:
                        return None
                return vals
        p = p.parent
    return None


class _Judge:
    def __init__(self, unit: "Unit", env):
        self.unit = unit
        self.cl = _Classifier(unit, env)

    def cond(self, node: "Node") -> Verdict:
        unit = self.unit
        node = _strip_parens(node)
        if node is None:
            return Verdict.unknown("no condition")
        if node.type == "condition_clause":
            v = node.child_by_field_name("value")
            return self.cond(v) if v is not None else Verdict.unknown("no condition")
        text = _norm(unit.text(node))
        if node.type == "binary_expression":
            op = unit.text(node.child_by_field_name("operator"))
            ln, rn = node.child_by_field_name("left"), node.child_by_field_name("right")
            if op in ("&&", "||"):
                parts = [self.cond(ln), self.cond(rn)]
                for v in parts:
                    if v.fails:
                        return v
                for v in parts:
                    if v.is_unknown:
                        return v
                return Verdict.yes(f"`{text}`: both sides are warp-uniform")
            if op in _CMP:
                return self.compare(ln, op, rn, text)
        if node.type == "unary_expression" and unit.text(node.child_by_field_name("operator")) == "!":
            return self.cond(node.child_by_field_name("argument"))
        # truthiness: E != 0
        return self.compare(node, "!=", None, text)

    def compare(self, ln, op, rn, text) -> Verdict:
        cl = self.cl
        a = cl.classify(ln)
        b = cl.classify(rn) if rn is not None else _Class("uniform", value=Affine.const(0))
        kinds = {a.kind, b.kind}
        if kinds == {"uniform"}:
            return Verdict.yes(f"`{text}` does not depend on threadIdx")
        if kinds <= {"uniform", "warp"}:
            return Verdict.yes(f"`{text}` depends on the thread only through its warp index")
        if "caller" in kinds and kinds <= {"uniform", "warp", "caller"}:
            why = a.why if a.kind == "caller" else b.why
            return Verdict.unknown(f"`{text}`: {why}")
        if a.kind == "uniform" and b.kind in ("linear", "lane"):
            a, b, op = b, a, _FLIP[op]
        if a.kind == "linear" and b.kind == "uniform":
            return self.linear(a, op, b, text)
        if a.kind == "lane" and b.kind == "uniform":
            k = b.value.value() if b.value is not None else None
            if k is None:
                return Verdict.unknown(f"`{text}` compares the lane with "
                                       f"{b.value if b.value is not None else 'a value'}: uniform "
                                       "only when every lane gets the same answer")
            res = {_PY[op](a.lane_fn(l), k) for l in range(WARP_SIZE)}
            if len(res) == 1:
                return Verdict.yes(f"`{text}` is {res.pop()} in every lane")
            first = next(l for l in range(WARP_SIZE) if _PY[op](a.lane_fn(l), k) !=
                         _PY[op](a.lane_fn(0), k))
            return Verdict.no(f"`{text}` depends on the lane (lane 0 and lane {first} differ)")
        for c in (a, b):
            if c.kind == "ydim":
                return Verdict.unknown(c.why)
        for c in (a, b):
            if c.kind in ("varying", "caller") and c.why:
                return Verdict.unknown(f"`{text}`: {c.why}")
        return Verdict.unknown(f"`{text}` depends on the thread in a way not modelled")

    def linear(self, a: _Class, op: str, b: _Class, text: str) -> Verdict:
        if op in ("==", "!="):
            return Verdict.no(f"`{text}` singles out individual threads of a warp")
        if b.value is None:
            return Verdict.unknown(f"`{text}`: the bound is not an integer expression")
        diff = b.value - a.off
        if op in ("<=", ">"):
            diff = diff + 1
        ok = diff.divisible_by(WARP_SIZE)
        if ok is None:
            vals = self.enumerate(diff, text)
            if vals is not None:
                return vals
        if ok is True:
            return Verdict.yes(f"`{text}`: the split point {diff} is a multiple of 32, "
                               "so whole warps fall on one side")
        if ok is False:
            return Verdict.no(f"`{text}` splits a warp: {diff} is not a multiple of 32")
        return Verdict.unknown(f"`{text}` is uniform per warp only when {diff} is a multiple "
                               "of 32")

    def enumerate(self, diff: Affine, text: str) -> Verdict | None:
        """When the split point depends on one constant-trip loop variable, try each value."""
        syms = diff.symbols()
        if len(syms) != 1:
            return None
        var = next(iter(syms))
        node = self._node
        vals = _loop_values(self.unit, var, node) if node is not None else None
        if not vals:
            return None
        bad = [v for v in vals if diff.subs({var: v}).divisible_by(WARP_SIZE) is not True]
        if bad:
            return Verdict.no(f"`{text}` splits a warp when {var} = {bad[0]}")
        return Verdict.yes(f"`{text}`: for every value of {var} ({', '.join(map(str, vals))}) "
                           "whole warps fall on one side")

    _node = None


def warp_uniform(unit: "Unit", cond_node: "Node", fn: "Function | None" = None,
                 env: Mapping[str, int] | None = None) -> Verdict:
    """Whether a condition has the same value in every lane of a warp.

    Holds for conditions free of ``threadIdx``, conditions on the warp index, and
    comparisons of ``threadIdx.x + off`` with a bound ``B`` when ``B - off`` is a multiple of
    32 (``threadIdx.x < 64``; ``tid < s`` for every value of a constant-trip loop's ``s``).
    Fails for lane-dependent conditions (``lane == 0``, ``threadIdx.x % 32 == 0``,
    ``threadIdx.x < 16``, ``tid == 0``). Unknown when it depends on sizes (``i < n``: uniform
    only when ``n - blockDim.x*blockIdx.x`` is a multiple of 32), on per-thread data, or on a
    device function's parameters. ``env`` binds symbols (``{"blockDim.x": 256}``).
    """
    if cond_node is None:
        return Verdict.unknown("no condition")
    j = _Judge(unit, env)
    j._node = cond_node
    try:
        return j.cond(cond_node)
    except RecursionError:
        return Verdict.unknown("condition too deeply nested to analyse")


# ---------------------------------------------------------------------- primitives
_SYNC_INTRINSICS = {"__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync",
                    "__ballot_sync", "__any_sync", "__all_sync", "__uni_sync", "__syncwarp",
                    "__match_any_sync", "__match_all_sync", "__reduce_add_sync",
                    "__reduce_min_sync", "__reduce_max_sync", "__reduce_and_sync",
                    "__reduce_or_sync", "__reduce_xor_sync"}
_LEGACY = {"__shfl", "__shfl_up", "__shfl_down", "__shfl_xor", "__any", "__all", "__ballot"}
_TILE_METHODS = {"shfl", "shfl_down", "shfl_up", "shfl_xor", "any", "all", "ballot", "match_any",
                 "match_all", "sync"}
_CG_COLLECTIVES = {"reduce", "inclusive_scan", "exclusive_scan", "reduce_update_async",
                   "reduce_store_async"}


@dataclass(frozen=True)
class WarpPrimitive:
    """A warp-synchronous operation and the conditions it runs under (within its function,
    outermost first; guards of earlier early exits included)."""

    node: "Node" = field(compare=False, repr=False)
    name: str
    mask: str | None
    conditions: tuple = field(compare=False, repr=False)
    uniform: Verdict = field(compare=False)
    line: int = 0


def _primitive(unit: "Unit", call: "Node") -> tuple[str, str | None] | None:
    from kltrans.analysis.barriers import _cg_scope

    f = call.child_by_field_name("function")
    if f is None:
        return None
    args = call.child_by_field_name("arguments")
    argl = [a for a in args.named_children if a.type != "comment"] if args is not None else []
    if f.type == "identifier":
        name = unit.text(f)
        if name in _SYNC_INTRINSICS:
            return name, (_norm(unit.text(argl[0])) if argl else None)
        if name in _LEGACY:
            return name, None
        return None
    if f.type in ("qualified_identifier", "template_function"):
        name = _norm(unit.text(f if f.type == "qualified_identifier"
                               else f.child_by_field_name("name")))
        short = name.split("<")[0].split("::")[-1]
        if short in _CG_COLLECTIVES and argl:
            scope = _cg_scope(unit, argl[0])
            if scope in ("warp", None):
                return _norm(unit.text(f)), None
        return None
    if f.type == "field_expression":
        fld = f.child_by_field_name("field")
        method = unit.text(fld) if fld is not None else ""
        if method in _TILE_METHODS:
            scope = _cg_scope(unit, f.child_by_field_name("argument"))
            if scope == "warp":
                return _norm(unit.text(f)), None
    return None


def warp_primitives(unit: "Unit", fn: "Function", env: Mapping[str, int] | None = None
                    ) -> list[WarpPrimitive]:
    """Warp primitives in ``fn``: ``__shfl*_sync``, ``__ballot/any/all/uni_sync``,
    ``__syncwarp``, ``__reduce_*_sync``, ``__match_*_sync``, legacy ``__shfl*``, and
    cooperative-groups tile operations (``tile.shfl_down``, ``tile.sync()``,
    ``cg::reduce(tile, ...)``), each with its enclosing conditions and a verdict on
    whether all of them are warp-uniform."""
    from kltrans.analysis.barriers import enclosing_conditions

    out = []
    for n in unit.walk(fn.node):
        if n.type != "call_expression":
            continue
        got = _primitive(unit, n)
        if got is None:
            continue
        name, mask = got
        conds = enclosing_conditions(unit, n)
        verdicts = []
        for c, how in conds:
            v = warp_uniform(unit, c, fn, env)
            line = unit.line_col(c.start_byte)[0]
            verdicts.append((v, line, how))
        bad = next(((v, l, h) for v, l, h in verdicts if v.fails), None)
        unk = next(((v, l, h) for v, l, h in verdicts if v.is_unknown), None)
        if bad is not None:
            uni = Verdict.no(f"under a divergent {'exit guard' if bad[2] == 'exit' else 'condition'}"
                             f" at line {bad[1]}: {bad[0].reason}")
        elif unk is not None:
            uni = Verdict.unknown(f"condition at line {unk[1]}: {unk[0].reason}")
        elif verdicts:
            uni = Verdict.yes(f"all {len(verdicts)} enclosing conditions in {fn.name} are "
                              "warp-uniform")
        else:
            uni = Verdict.yes(f"not under any condition in {fn.name}")
        out.append(WarpPrimitive(n, name, mask, tuple(c for c, _ in conds), uni,
                                 unit.line_col(n.start_byte)[0]))
    return out
