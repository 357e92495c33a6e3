"""Thread geometry: which expressions are a thread's indices and the launch's extents.

:func:`role_of` says what an integer expression *is* in the launch, whatever its spelling:

- indices: the thread's index in its block (``thread``), the block's index (``block``),
  the thread's index in the grid (``global``), its lane in a warp or tile (``lane``) and
  its warp or tile in the block (``warp``), each along a dimension ``x``/``y``/``z`` or
  ``linear`` for a flattened rank (``threadIdx.y * blockDim.x + threadIdx.x``,
  ``block.thread_rank()``);
- extents: the threads of a block (``block-size``), of the grid (``grid-size``) and of a
  warp or tile (``warp-size``), and the blocks of the grid (``grid-blocks``, ``gridDim.x``)
  — the steps of strided loops;
- a 1-D index split into row and column (``gid / N``, ``gid % N``): the index's role with
  ``split`` ``("div", N)`` or ``("mod", N)``; a thread index split by 32 (``/ 32``,
  ``>> 5``, ``/ warpSize``; ``% 32``, ``& 31``, ``& (warpSize - 1)``) is the warp or lane.

Recognized spellings: the builtins in any operand order, through casts, locals, macros
(object- and function-like) and constexprs (all of it read by
:func:`~kltrans.analysis.affine_of`, so ``blockIdx.x * blockDim.x + threadIdx.x``,
``threadIdx.x + blockDim.x * blockIdx.x`` and ``GTID`` are one polynomial); the
cooperative-groups calls of :mod:`kltrans.model.ops` (``thread_rank``, ``thread_index().x``,
``group_index().x``, ``meta_group_rank``, ``size``, ``num_threads``, ``dim_threads().x``,
``group_dim().x``,
``__lane_id()``); ``warpSize``. A block size written as a constant or a template parameter
(``blockIdx.x * BLOCK + threadIdx.x``) counts only when the kernel's launch contract
(:func:`~kltrans.syntax.contract.contracts`) sets the block to it; otherwise the reason
says that it is not known.

Not recognized (``None``, with a reason from :func:`role_explain`): an index plus an
offset (``threadIdx.x + 1``) or scaled (``threadIdx.x * 2``); data loaded per thread
(``idx[threadIdx.x]``); a lane read off a global index (``gid % 32`` is the global index
split by 32: it equals the lane only when ``blockDim.x`` is a multiple of 32); a split of
a split; a variable assigned more than once; a device function's parameters (their value
comes from the caller); a dim3 held in a variable (``auto t = block.thread_index(); t.x``).
A lane or warp read off ``threadIdx.x`` assumes ``blockDim.x`` is a multiple of 32 (or a
1-D block); the launch contract refutes it when it gives a 2-D block whose x is not.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping

from kltrans.analysis import Affine, affine_explain, assigned_in
from kltrans.analysis.affine import strip_parens
from kltrans.model.launch import template_values
from kltrans.model.ops import operations
from kltrans.syntax.contract import ContractError, contracts, evaluate, file_constants
from kltrans.syntax.cuda import enclosing_function

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.cuda import Function
    from kltrans.syntax.unit import Unit

INDEX_KINDS = ("thread", "block", "global", "lane", "warp")  # and the extents: *-size
WARP = 32
_DIMS = "xyz"
_SPLIT_OPS = ("/", "%", ">>", "&")
_NON_INT = ("float", "double", "half", "bf16", "bfloat", "bool", "fp8")
# what an operation of spellings.yaml is, as a symbol the polynomial reader carries
_OP_ROLES = {"index.block_rank": ("thread", "linear"), "index.lane": ("lane", "linear"),
             "index.warp": ("warp", "linear"), "index.grid_rank": ("global", "linear"),
             "size.block": ("block-size", "linear"), "size.grid": ("grid-size", "linear"),
             "size.tile": ("warp-size", "linear")}
#: a linear index or extent of a 1-D block, as the builtin it equals
_LINEAR_1D = {"thread": "threadIdx.x", "block-size": "blockDim.x"}
_OP_DIM3 = {"index.thread": "threadIdx", "index.block": "blockIdx", "size.block": "blockDim"}


@dataclass(frozen=True)
class Role:
    """What an expression is in the thread geometry.

    ``kind``: an index (``thread``, ``block``, ``global``, ``lane``, ``warp``) or an extent
    (``block-size``, ``grid-size``, ``warp-size``); ``dim``: ``x``/``y``/``z`` or ``linear``;
    ``width``: a lane's or warp's width (32, or a tile's); ``split``: ``("div", C)`` or
    ``("mod", C)`` when the value is an index divided by C or its remainder (C an int, or
    the divisor's text); ``reason``: the spelling it was read from (not part of equality).
    """

    kind: str
    dim: str = "x"
    width: int | None = None
    split: tuple | None = None
    reason: str = field(default="", compare=False)

    @property
    def is_index(self) -> bool:
        return self.kind in INDEX_KINDS

    def __str__(self) -> str:
        s = f"{self.kind} {self.dim}"
        if self.width is not None:
            s += f" {self.width}"
        if self.split is not None:
            s += f" {self.split[0]} {self.split[1]}"
        return s


@dataclass(frozen=True)
class Geometry:
    """The roles of a function's local variables: ``roles`` maps a name to its Role."""

    function: str | None
    roles: Mapping[str, Role]
    _ctx: "_Ctx" = field(compare=False, repr=False)

    def get(self, name: str) -> Role | None:
        return self.roles.get(name)

    def names(self, kind: str) -> list[str]:
        """The variables of one kind (``"global"``, ``"lane"``...), in declaration order."""
        return [n for n, r in self.roles.items() if r.kind == kind]


class _Ctx:
    """What reading an expression of one function needs: the symbols the polynomial
    reader is given for calls and variables it cannot read (``env``), the Role of each
    such symbol (``table``) and the block the launch contract sets."""

    def __init__(self, unit: "Unit", fn: "Function | None"):
        self.unit, self.fn = unit, fn
        self.env: dict[str, Affine] = {}
        self.table: dict[str, Role] = {}
        self.block: tuple[str, ...] | None = None
        self.consts: dict[str, int] = {}
        self.names = frozenset(t.name for t in fn.template_params if t.name) if fn else frozenset()
        if fn is not None:
            self._bind_operations()
            self._read_contract()

    def bind(self, key: str, role: Role) -> None:
        sym = f"@{key}"
        self.env[key] = Affine.sym(sym)
        self.table[sym] = role

    def _bind_operations(self) -> None:
        node, unit = self.fn.node, self.unit
        for op in operations(unit):
            if not node.start_byte <= op.node.start_byte < node.end_byte:
                continue
            parent, dim3 = op.node.parent, _OP_DIM3.get(op.name)
            fld = parent.child_by_field_name("field") if parent.type == "field_expression" \
                else None
            if dim3 and fld is not None and unit.text(fld) in _DIMS:  # thread_index().x
                self.env[_text(unit, parent)] = Affine.sym(f"{dim3}.{unit.text(fld)}")
            elif op.name in _OP_ROLES and not op.spelling.endswith(("dim_threads", "group_dim")):
                kind, dim = _OP_ROLES[op.name]
                width = (op.group.width if op.group else WARP) if kind in (
                    "lane", "warp", "warp-size") else None  # no group: __lane_id()
                self.bind(_text(unit, op.node), Role(kind, dim, width, reason=unit.text(op.node)))

    def _read_contract(self) -> None:
        try:
            c = contracts(self.unit).get(self.fn.name)
            self.consts = file_constants(self.unit)
        except (ContractError, RecursionError, ValueError):
            return
        self.block = tuple(" ".join(e.split()) for e in c.block) if c is not None else None
        if c is not None and c.template_args:  # k<float, 32>: BLOCKSIZE is 32 here
            bound = template_values(self.fn, f"{self.fn.name}<{', '.join(c.template_args)}>")
            self.consts = dict(self.consts, **bound)
            for name, value in bound.items():
                self.env.setdefault(name, Affine.const(value))


def _text(unit: "Unit", node: "Node") -> str:
    return " ".join(unit.text(node).split())


# ------------------------------------------------------------------------------ API
def geometry(unit: "Unit", fn: "Function") -> Geometry:
    """The roles of ``fn``'s local variables that have one (cached per unit)."""
    cache = unit.memo("model.geometry", lambda u: {})
    key = fn.node.id if fn is not None else None
    if key not in cache:
        cache[key] = _build(unit, fn)
    return cache[key]


def role_of(unit: "Unit", expr: "Node") -> Role | None:
    """The role of an integer expression in the thread geometry, or None."""
    return role_explain(unit, expr)[0]


def role_explain(unit: "Unit", expr: "Node") -> tuple[Role | None, str]:
    """``(role, reason)``: the reason names the spelling read, or why there is no role."""
    if expr is None:
        return None, "no expression"
    try:
        ctx = geometry(unit, enclosing_function(unit, expr))._ctx
        return _read(ctx, expr)
    except RecursionError:
        return None, "too deeply nested"
    except Exception as e:  # never raise on odd code
        return None, f"cannot read `{_text(unit, expr)[:60]}` ({type(e).__name__})"


def geometry_affine(unit: "Unit", expr: "Node") -> Affine | None:
    """The polynomial form of an integer expression with the geometry's spellings read as
    the builtins they are: ``block.thread_index().x`` is ``threadIdx.x``,
    ``block.group_dim().x`` is ``blockDim.x``; in a block the launch contract makes 1-D,
    ``block.thread_rank()`` is ``threadIdx.x`` too. None when it is not a polynomial."""
    if expr is None:
        return None
    try:
        ctx = geometry(unit, enclosing_function(unit, expr))._ctx
    except RecursionError:
        return None
    env = dict(ctx.env)
    if ctx.block is not None and len(ctx.block) == 1:
        for key, a in ctx.env.items():
            role = ctx.table.get(next(iter(a.symbols()), ""))
            if role is not None and role.dim == "linear" and role.kind in _LINEAR_1D:
                env[key] = Affine.sym(_LINEAR_1D[role.kind])
    return affine_explain(unit, expr, env=env)[0]


def block_size_explain(unit: "Unit", fn: "Function | None", size: Affine) -> tuple[bool, str]:
    """Whether ``size`` is the number of threads of ``fn``'s block along x (blockDim.x,
    ``block.size()``, or a constant or template parameter the launch contract sets)."""
    return _block_size(geometry(unit, fn)._ctx, size, "x")


# ------------------------------------------------------------------------- building
def _build(unit: "Unit", fn: "Function | None") -> Geometry:
    ctx = _Ctx(unit, fn)
    roles: dict[str, Role] = {}
    if fn is None or fn.body is None:
        return Geometry(None, MappingProxyType(roles), ctx)
    seen: dict[str, int] = {}
    found = []
    for decl in unit.nodes_of_type("declaration", within=fn.body):
        ty = decl.child_by_field_name("type")
        if ty is not None and any(w in unit.text(ty) for w in _NON_INT):
            continue
        for d in decl.children_by_field_name("declarator"):
            target = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            if target is None or target.type != "identifier":
                continue
            name = unit.text(target)
            seen[name] = seen.get(name, 0) + 1
            if d.type == "init_declarator":
                found.append((name, d.child_by_field_name("value")))
    for name, value in found:
        if seen[name] > 1 or value is None or assigned_in(unit, fn.body, name):
            continue
        if value.type == "initializer_list" and value.named_child_count == 1:
            value = value.named_children[0]
        role, why = _read(ctx, value)
        if role is None or _constant(ctx, value) is not None:
            continue  # a constant is a constant, whatever it equals
        roles[name] = Role(role.kind, role.dim, role.width, role.split, f"{name} = {why}")
        if affine_explain(unit, value, env=ctx.env)[0] is None:
            ctx.bind(name, roles[name])  # a lane, a warp, a split: a symbol of its own
    return Geometry(fn.name, MappingProxyType(roles), ctx)


# -------------------------------------------------------------------------- reading
def _strip(unit: "Unit", node: "Node") -> "Node":
    """Without parentheses and integer casts (``(int)e``, ``static_cast<size_t>(e)``)."""
    while node is not None:
        node = strip_parens(node)
        if node.type == "cast_expression":
            ty = node.child_by_field_name("type")
            if ty is not None and any(w in unit.text(ty) for w in _NON_INT):
                return node
            node = node.child_by_field_name("value")
            continue
        if node.type == "call_expression":
            f, args = node.child_by_field_name("function"), node.child_by_field_name("arguments")
            if f is not None and f.type == "template_function" and args is not None and \
                    args.named_child_count == 1 and \
                    _text(unit, f.child_by_field_name("name")) == "static_cast" and \
                    not any(w in unit.text(f) for w in _NON_INT):
                node = args.named_children[0]
                continue
        return node
    return node


def _constant(ctx: _Ctx, node: "Node") -> int | None:
    a = affine_explain(ctx.unit, node, env=ctx.env)[0]
    return a.value() if a is not None else None


def _read(ctx: _Ctx, node: "Node") -> tuple[Role | None, str]:
    """The role of an expression and the spelling read (or why there is none)."""
    unit = ctx.unit
    node = _strip(unit, node)
    if node is None:
        return None, "no expression"
    text = _text(unit, node)
    if node.type == "identifier" and text == "warpSize":
        return Role("warp-size", "linear", WARP, reason=text), text
    if node.type == "binary_expression" and \
            _text(unit, node.child_by_field_name("operator")) in _SPLIT_OPS:
        return _split(ctx, node)
    _bind_splits(ctx, node)
    a, why = affine_explain(unit, node, env=ctx.env)
    if a is None:
        return None, why or f"`{text}` is not an index"
    sym = _single(a)
    if sym is not None and sym in ctx.table:
        return ctx.table[sym], ctx.table[sym].reason
    role, note = _classify(ctx, a)
    if role is None:
        return None, f"`{text}`: {note}"
    reason = f"{text} ({note})" if note else text
    return replace(role, reason=reason), reason


def _bind_splits(ctx: _Ctx, node: "Node") -> None:
    """Give each split inside ``node`` that has a role (``threadIdx.x / 32``) a symbol of
    its own, so that a sum over it is a polynomial."""
    for n in ctx.unit.nodes_of_type("binary_expression", within=node):
        if n.id == node.id or _text(ctx.unit, n.child_by_field_name("operator")) not in _SPLIT_OPS:
            continue
        key = _text(ctx.unit, n)
        if key not in ctx.env:
            role = _split(ctx, n)[0]
            if role is not None:
                ctx.bind(key, role)


def _split(ctx: _Ctx, node: "Node") -> tuple[Role | None, str]:
    """``i / C``, ``i % C``, ``i >> k``, ``i & (2^k - 1)`` of an index or an extent."""
    unit = ctx.unit
    text = _text(unit, node)
    op = _text(unit, node.child_by_field_name("operator"))
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    base, why = _read(ctx, left)
    if base is None:
        return None, why
    if base.split is not None or base.kind in ("lane", "warp"):
        return None, f"`{text}` splits a {base.kind} index that is already split"
    c = _constant(ctx, right)
    how = "mod" if op in ("%", "&") else "div"
    if op == ">>":
        if c is None or not 0 <= c < 32:
            return None, f"`{text}` shifts by an unknown amount"
        c = 1 << c
    elif op == "&":
        if c is None or c < 0 or (c + 1) & c:
            return None, f"`{text}` masks with something other than 2^k - 1"
        c += 1
    divisor = c if c is not None else _text(unit, right)
    if divisor in (0, 1):
        return None, f"`{text}` divides by {divisor}"
    if base.kind == "thread" and base.dim in ("x", "linear") and divisor == WARP:
        x = _block_x(ctx) if base.dim == "x" and len(ctx.block or ()) > 1 else None
        if x is None or x % WARP == 0:  # else a 2-D block whose rows are not whole warps
            kind = "warp" if how == "div" else "lane"
            return Role(kind, base.dim, WARP, (how, WARP), text), text
        text = f"{text}; not a {'warp' if how == 'div' else 'lane'}: the block is {ctx.block}"
    elif base.kind == "global" and base.dim == "x" and how == "mod" and divisor == WARP:
        block = _block_x(ctx)  # the lane, when every block is whole warps of a 1-D grid row
        if block is not None and block % WARP == 0:
            text = f"{text} (the launch contract's block={ctx.block[0]} is whole warps)"
            return Role("lane", "x", WARP, (how, WARP), text), text
    return Role(base.kind, base.dim, base.width, (how, divisor), text), text


def _block_x(ctx: _Ctx) -> int | None:
    """The block's x size by the launch contract, when it is a known integer."""
    try:
        return evaluate(ctx.block[0], ctx.consts) if ctx.block else None
    except (ContractError, RecursionError, ValueError, ZeroDivisionError):
        return None


def _single(a: Affine) -> str | None:
    """The symbol of ``a`` when it is one symbol with coefficient 1."""
    t = dict(a.terms)
    if len(t) == 1:
        (m, c), = t.items()
        if c == 1 and len(m) == 1:
            return m[0]
    return None


_BUILTIN_KINDS = {"threadIdx": "thread", "blockIdx": "block", "blockDim": "block-size",
                  "gridDim": "grid-blocks"}
_GEOMETRY_SYMBOLS = frozenset(f"{b}.{d}" for b in ("threadIdx", "blockIdx", "blockDim", "gridDim")
                              for d in _DIMS)


def _symbol_role(ctx: _Ctx, sym: str) -> Role | None:
    if sym in ctx.table:
        return ctx.table[sym]
    base, _, d = sym.partition(".")
    kind = _BUILTIN_KINDS.get(base)
    return Role(kind, d, reason=sym) if kind and d in _DIMS else None


def _classify(ctx: _Ctx, a: Affine) -> tuple[Role | None, str]:
    """The role of a polynomial over the geometry's symbols, with the assumption it rests
    on ("" when none), or None and why."""
    geometric = a.symbols() & _GEOMETRY_SYMBOLS or any(s in ctx.table for s in a.symbols())
    if not geometric:
        if len(a.terms) > 1 or not all(s.isidentifier() for s in a.symbols()):
            return None, "not an index"
        ok, why = _block_size(ctx, a, "x")  # a constant or template parameter
        if ok:
            return Role("block-size", "x"), why
        return None, why if a.is_const() or a.symbols() <= ctx.names else "not an index"
    if a.constant() != 0:
        return None, "an index plus an offset"
    sym = _single(a)
    if sym is not None:
        role = _symbol_role(ctx, sym)
        return (role, "") if role is not None else (None, f"{sym} is not an index")
    for reader in (_linear, _grid_size, _global):
        role, why = reader(ctx, a)
        if role is not None or why:
            return role, why
    return None, f"{a} is not an index or an extent"


def _linear(ctx: _Ctx, a: Affine):
    """A flattened rank: ``threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y *
    threadIdx.z)`` (the x extent may be a constant the contract confirms), or the same of
    ``blockIdx`` over ``gridDim``."""
    for kind, idx, ext in (("thread", "threadIdx", "blockDim"), ("block", "blockIdx", "gridDim")):
        x, y, z = (Affine.sym(f"{idx}.{d}") for d in _DIMS)
        ex, ey = Affine.sym(f"{ext}.x"), Affine.sym(f"{ext}.y")
        if a == x + ex * y + ex * ey * z:
            return Role(kind, "linear"), ""
        sx = (a - x).coeff(f"{idx}.y") if f"{idx}.x" in a.symbols() else None
        if sx is not None and len(sx.terms) == 1 and a - x == sx * y:
            ok, why = (sx == ex, "") if kind == "block" else _block_size(ctx, sx, "x")
            return (Role(kind, "linear"), why) if ok else (None, why)
    return None, ""


def _grid_size(ctx: _Ctx, a: Affine):
    """``blockDim.x * gridDim.x`` in any order, or a confirmed block size times gridDim."""
    if len(a.terms) != 1:
        return None, ""
    for d in _DIMS:
        if f"gridDim.{d}" in a.symbols():
            s = a.div_monomial(Affine.sym(f"gridDim.{d}"))
            if s is None or s == Affine.const(1):
                return None, f"gridDim.{d} counts blocks, not threads"
            ok, why = _block_size(ctx, s, d)
            return (Role("grid-size", d), why) if ok else (None, why)
    return None, ""


def _global(ctx: _Ctx, a: Affine):
    """``B * S + T``: a block index B times the block's size S plus a thread index T, or
    times the extent of a split T (``blockIdx.x * WARPS + tid / 32`` is ``gid / 32``)."""
    t_part = Affine({m: c for m, c in a.terms.items() if any(_thread_symbol(ctx, x) for x in m)})
    rest = a - t_part
    if not t_part.terms or not rest.terms:
        return None, ""
    t = _classify(ctx, t_part)[0]
    if t is None or t.kind not in ("thread", "warp", "lane") or \
            (t.kind != "thread" and t.split is None):
        return None, f"{t_part} is not a thread index"
    for b in sorted(rest.symbols()):
        role = _symbol_role(ctx, b)
        s = rest.coeff(b) if role is not None and role.kind == "block" else None
        if s is None or len(s.terms) != 1:
            continue
        q = rest.div_monomial(s)
        q_role = _classify(ctx, q)[0] if q is not None else None
        if q_role is None or q_role.kind != "block" or q_role.split is not None:
            continue
        if t.split is not None:
            t = replace(t, reason=str(t_part))
            ok, why = _split_extent(ctx, s, t)
            return (Role("global", q_role.dim, t.width, t.split), why) if ok else (None, why)
        if q_role.dim != t.dim and "linear" not in (q_role.dim, t.dim):
            return None, f"{q} is scaled by {s} but added to {t_part}"
        ok, why = _block_size(ctx, s, t.dim)
        if not ok:
            return None, why
        return Role("global", t.dim if t.dim == q_role.dim else "linear"), why
    return None, f"{rest} is not a block index times the block size"


def _thread_symbol(ctx: _Ctx, sym: str) -> bool:
    role = _symbol_role(ctx, sym)
    return role is not None and role.kind in ("thread", "warp", "lane")


def _split_extent(ctx: _Ctx, s: Affine, t: Role) -> tuple[bool, str]:
    """Whether ``s`` is the number of values a split thread index takes: C for ``% C``,
    the block size over C for ``/ C``."""
    how, c = t.split
    div = Affine.const(c) if isinstance(c, int) else Affine.sym(c) if c.isidentifier() else None
    if div is None:
        return False, f"the split by {c} is not a constant or a name"
    if how == "mod":
        return (True, "") if s == div else (False, f"{s} is not the {c} values of {t.reason}")
    sym = _single(s)
    if sym is not None and ctx.table.get(sym) is not None:
        r = ctx.table[sym]  # blockDim.x / 32
        if r.kind == "block-size" and r.split == ("div", c):
            return True, ""
    return _block_size(ctx, s * div, "x" if t.dim == "linear" else t.dim)


def _block_size(ctx: _Ctx, s: Affine, dim: str) -> tuple[bool, str]:
    """Whether ``s`` is the number of threads of the block along ``dim`` (all of them for
    ``linear``); the assumption it rests on ("" when none), or why it is not."""
    sym = _single(s)
    if sym is not None and sym in ctx.table:
        role = ctx.table[sym]  # block.size(): blockDim.x in a 1-D block
        if role.kind == "block-size" and role.split is None and dim in ("x", "linear"):
            return True, ""
        return False, f"{s} is not the block size"
    bdx, bdy, bdz = (Affine.sym(f"blockDim.{d}") for d in _DIMS)
    if dim in _DIMS and s == Affine.sym(f"blockDim.{dim}"):
        return True, ""
    if dim == "linear" and s in (bdx, bdx * bdy, bdx * bdy * bdz):
        return True, ""
    if s.symbols() & _GEOMETRY_SYMBOLS or any(x in ctx.table for x in s.symbols()):
        return False, f"{s} is not the block size along {dim}"
    if ctx.block is None:
        return False, f"{s} is not known to be the block size (no launch contract)"
    i = _DIMS.index(dim) if dim in _DIMS else 0
    want = ctx.block[i] if i < len(ctx.block) else "1"
    if dim == "linear" and len(ctx.block) > 1:
        want = " * ".join(f"({d})" for d in ctx.block)
    confirmed = f"the launch contract sets block={want}"
    if want == str(s):
        return True, confirmed
    try:
        if s.is_const() and evaluate(want, ctx.consts) == s.value():
            return True, confirmed
    except (ContractError, RecursionError, ValueError, ZeroDivisionError):
        pass
    return False, f"{s} is not known to be the block size (the launch contract sets {want})"
