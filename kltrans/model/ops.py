"""The CUDA operations of a unit, in any spelling: barriers, shuffles, votes, warp and
block reductions, thread and lane indices, asynchronous copies, atomics.

Every operation is declared once, with all its spellings, in ``spellings.yaml`` (data,
like Coccinelle's isomorphisms); :func:`operations` finds each call that spells one and
says which operation it is, what its operands are and on which cooperative group it acts.
Cooperative groups are resolved by :func:`group_of`: ``cg::this_thread_block()`` and any
variable, parameter or ``auto`` declared from it or with its type is the block;
``cg::tiled_partition<W>(g)`` and ``cg::thread_block_tile<W>`` are tiles of width W;
namespace aliases (``namespace cg = cooperative_groups;``) and
``using namespace cooperative_groups;`` are honoured.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from importlib import resources
from typing import TYPE_CHECKING

from kltrans.syntax import yamldoc

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax.unit import Unit

CG = "cooperative_groups"
_REDUCE_OPS = {"plus": "sum", "less": "min", "greater": "max", "bit_and": "and",
               "bit_or": "or", "bit_xor": "xor"}
_GROUP_TYPES = (("thread_block_tile", "tile"), ("thread_block", "block"),
                ("grid_group", "grid"), ("coalesced_group", "coalesced"),
                ("thread_group", "any"))


# the calls that make a group (not operations of the table, but read the same way)
_GROUP_MAKERS = ("this_thread_block", "this_grid", "coalesced_threads", "tiled_partition")


class SpellingError(ValueError):
    """spellings.yaml is not of the documented shape."""


@dataclass(frozen=True)
class Spelling:
    op: str
    call: str | None  # a free function, cooperative-groups names as cg::X
    member: str | None  # a member function of a cooperative group
    args: tuple[str, ...] = ()
    group: str | None = None  # block, tile, grid, coalesced, any
    width: int | None = None
    fixed_op: str | None = None

    def arity_ok(self, n: int) -> bool:
        need = sum(1 for a in self.args if not a.endswith(("?", "...")))
        rest = any(a.endswith("...") for a in self.args)
        return need <= n and (rest or n <= len(self.args))

    def bind(self, args: list["Node"]) -> dict[str, "Node"]:
        out = {}
        for name, node in zip(self.args, args):
            out[name.rstrip("?.")] = node
        return out


@dataclass(frozen=True)
class OpDef:
    name: str
    doc: str
    scope: str
    mechanism: str | None
    spellings: tuple[Spelling, ...]


@dataclass(frozen=True)
class Group:
    kind: str  # block, tile, grid, coalesced, any
    width: int | None = None  # a tile's width, when known

    def fits(self, spelling: Spelling) -> bool:
        """Whether a spelling that needs a group of some kind (and width) may act on this."""
        if spelling.group in (None, "any"):
            return True
        return self.kind == spelling.group and spelling.width in (None, self.width)


@dataclass(frozen=True)
class Op:
    """One call that spells an operation of ``spellings.yaml``."""

    name: str  # "shuffle.down"
    node: "Node" = field(compare=False, repr=False)  # the call_expression
    line: int
    column: int
    function: str | None  # the enclosing function
    operands: dict = field(compare=False, repr=False)  # operand name -> node
    group: Group | None = None
    reduce_op: str | None = None  # sum, min, max, and, or, xor, custom
    spelling: str = ""  # the callee as written

    @property
    def definition(self) -> OpDef:
        return definitions()[self.name]


@functools.lru_cache(maxsize=1)
def definitions() -> dict[str, OpDef]:
    """The operations of ``spellings.yaml``, checked."""
    text = resources.files("kltrans.model").joinpath("spellings.yaml").read_text("utf-8")
    return parse_table(yamldoc.safe_load(text))


def parse_table(raw: dict) -> dict[str, OpDef]:
    """A table of the shape of ``spellings.yaml`` as operations; :class:`SpellingError`
    when it is not of that shape."""
    if not isinstance(raw, dict):
        raise SpellingError("the table maps operation names to their spellings")
    out = {}
    for name, d in raw.items():
        if not isinstance(d, dict) or not isinstance(d.get("spellings"), list):
            raise SpellingError(f"{name}: needs a list of spellings")
        sps = []
        for s in d["spellings"]:
            if not isinstance(s, dict) or ("call" in s) == ("member" in s):
                raise SpellingError(f"{name}: a spelling is a call or a member: {s!r}")
            extra = set(s) - {"call", "member", "args", "group", "width", "op"}
            if extra:
                raise SpellingError(f"{name}: unknown key(s) {sorted(extra)} in {s!r}")
            sps.append(Spelling(name, s.get("call"), s.get("member"), tuple(s.get("args", ())),
                                s.get("group"), s.get("width"), s.get("op")))
        out[name] = OpDef(name, d.get("doc", ""), d.get("scope", "thread"), d.get("mechanism"),
                          tuple(sps))
    return out


@functools.lru_cache(maxsize=1)
def _index() -> tuple[dict, dict]:
    calls: dict[str, list[Spelling]] = {}
    members: dict[str, list[Spelling]] = {}
    for d in definitions().values():
        for s in d.spellings:
            if s.call:
                calls.setdefault(s.call, []).append(s)
            else:
                members.setdefault(s.member, []).append(s)
    return calls, members


# ------------------------------------------------------------------------- namespaces
def _cg_scopes(unit: "Unit") -> tuple[frozenset[str], bool]:
    """(names that mean cooperative_groups, whether it is a using-directive)."""
    def compute(u):
        names = {CG}
        using = False
        text = u.source.decode("utf-8", "replace")
        for m in re.finditer(r"namespace\s+(\w+)\s*=\s*(?:::)?" + CG + r"\s*;", text):
            names.add(m.group(1))
        if re.search(r"using\s+namespace\s+(?:::)?" + CG + r"\s*;", text):
            using = True
        return frozenset(names), using
    return unit.memo("model.cg_scopes", compute)


def _callee(unit: "Unit", fn: "Node") -> tuple[str | None, str, "Node | None", str]:
    """(namespace as written or None, bare name, receiver of a member call, template args)."""
    if fn.type == "field_expression":
        recv = fn.child_by_field_name("argument")
        f = fn.child_by_field_name("field")
        return None, unit.text(f) if f is not None else "", recv, ""
    scope = None
    if fn.type == "qualified_identifier":
        sc = fn.child_by_field_name("scope")
        scope = unit.text(sc) if sc is not None else ""
        fn = fn.child_by_field_name("name") or fn
    targs = ""
    if fn.type == "template_function":
        a = fn.child_by_field_name("arguments")
        targs = unit.text(a) if a is not None else ""
        fn = fn.child_by_field_name("name") or fn
    return scope, unit.text(fn), None, targs


def _canonical_call(unit: "Unit", scope: str | None, name: str) -> str | None:
    """The table's name of a free call: ``cg::X`` for cooperative groups, else the name."""
    names, using = _cg_scopes(unit)
    if scope is not None:
        return f"cg::{name}" if scope.lstrip(":") in names else f"{scope}::{name}"
    if using and (f"cg::{name}" in _index()[0] or name in _GROUP_MAKERS):
        return f"cg::{name}"
    return name


# ----------------------------------------------------------------------------- groups
def _group_of_type(type_text: str) -> Group | None:
    t = re.sub(r"\s+", "", type_text)
    for key, kind in _GROUP_TYPES:
        if re.search(r"(?:^|::|\b)" + key + r"\b", t):
            m = re.search(r"thread_block_tile<(\d+)", t)
            return Group(kind, int(m.group(1)) if m else None)
    return None


def group_of(unit: "Unit", expr: "Node", _depth: int = 0) -> Group | None:
    """The cooperative group ``expr`` denotes, or None when it is none (or unknown)."""
    if expr is None or _depth > 8:
        return None
    while expr.type == "parenthesized_expression" and expr.named_child_count:
        expr = expr.named_children[0]
    if expr.type == "call_expression":
        fn = expr.child_by_field_name("function")
        scope, name, recv, targs = _callee(unit, fn)
        call = _canonical_call(unit, scope, name) if recv is None else None
        if call == "cg::this_thread_block":
            return Group("block")
        if call == "cg::this_grid":
            return Group("grid", None)
        if call == "cg::coalesced_threads":
            return Group("coalesced")
        if call == "cg::tiled_partition":
            m = re.search(r"<\s*(\d+)\s*>", targs)
            args = expr.child_by_field_name("arguments")
            if m:
                return Group("tile", int(m.group(1)))
            if args is not None and args.named_child_count == 2:
                w = unit.text(args.named_children[1]).strip()
                return Group("tile", int(w) if w.isdigit() else None)
            return Group("tile")
        return None
    if expr.type == "identifier":
        return _named_group(unit, expr, _depth)
    return None


def _named_group(unit: "Unit", ident: "Node", depth: int) -> Group | None:
    from kltrans.syntax.cuda import enclosing_function

    name = unit.text(ident)
    fn = enclosing_function(unit, ident)
    if fn is None:
        return None
    for p in fn.params:
        if p.name == name:
            return _group_of_type(p.type)
    for decl in unit.nodes_of_type("declaration", within=fn.node):
        if decl.start_byte > ident.start_byte:
            break
        ty = decl.child_by_field_name("type")
        for d in decl.children_by_field_name("declarator"):
            target = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
            if target is None or unit.text(target) != name:
                continue
            by_type = _group_of_type(unit.text(ty)) if ty is not None else None
            value = d.child_by_field_name("value") if d.type == "init_declarator" else None
            by_value = group_of(unit, value, depth + 1) if value is not None else None
            if by_type is not None and by_value is not None and by_type.width is None:
                return by_value
            return by_type or by_value
    return _declared_group(unit, fn.node, ident, name)


_DECL = r"(?P<type>(?:[\w:]*::)?\w+(?:\s*<\s*\d+\s*>)?|auto)\s*&?\s+{name}\s*=\s*(?P<value>[^;]*);"


def _declared_group(unit: "Unit", fn: "Node", ident: "Node", name: str) -> Group | None:
    """A declaration the parser read as an expression: ``cg::thread_block_tile<32> t =
    ...;`` is parsed as ``(cg::thread_block_tile < 32) > (t = ...)`` in some contexts
    (tree-sitter cannot tell a template from a comparison without the declaration), so the
    text before the use is read instead."""
    text = unit.source[fn.start_byte:ident.start_byte].decode("utf-8", "replace")
    found = None
    for m in re.finditer(_DECL.format(name=re.escape(name)), text):
        found = m
    if found is None:
        return None
    by_type = _group_of_type(found.group("type"))
    value = found.group("value")
    by_value = None
    if re.search(r"\bthis_thread_block\s*\(", value):
        by_value = Group("block")
    elif m := re.search(r"\btiled_partition\s*(?:<\s*(\d+)\s*>)?\s*\((?:[^,()]*,\s*(\d+))?", value):
        w = m.group(1) or m.group(2)
        by_value = Group("tile", int(w) if w else None)
    if by_type is not None and by_value is not None and by_type.width is None:
        return by_value
    return by_type or by_value


# ------------------------------------------------------------------------- operations
def operations(unit: "Unit") -> list[Op]:
    """Every call in ``unit`` that spells an operation of the table, in file order."""
    return unit.memo("model.operations", _find)


def _find(unit: "Unit") -> list[Op]:
    from kltrans.syntax.cuda import enclosing_function

    calls, members = _index()
    out = []
    for node in unit.nodes_of_type("call_expression"):
        fn = node.child_by_field_name("function")
        argl = node.child_by_field_name("arguments")
        if fn is None or argl is None:
            continue
        args = [c for c in argl.named_children if c.type != "comment"]
        scope, name, recv, _ = _callee(unit, fn)
        if recv is not None:
            g = group_of(unit, recv)
            cands = [(s, g) for s in members.get(name, []) if g is not None and g.fits(s)]
        else:
            key = _canonical_call(unit, scope, name)
            cands = []
            for s in calls.get(key, []):
                bound = s.bind(args)
                g = group_of(unit, bound["group"]) if "group" in bound else None
                if s.group is not None and (g is None or not g.fits(s)):
                    continue
                cands.append((s, g))
        for s, g in cands:
            if not s.arity_ok(len(args)):
                continue
            operands = s.bind(args)
            loc = unit.location(node.start_byte)
            f = enclosing_function(unit, node)
            out.append(Op(s.op, node, loc.line, loc.column, f.name if f else None, operands, g,
                          s.fixed_op or _reduce_op(unit, operands.get("op")),
                          unit.text(fn)))
            break
    return out


def _reduce_op(unit: "Unit", node: "Node | None") -> str | None:
    """The operator of a reduction functor: ``cg::plus<T>()`` is sum; a lambda is custom."""
    if node is None:
        return None
    if node.type == "lambda_expression":
        return "custom"
    if node.type == "call_expression":
        scope, name, recv, _ = _callee(unit, node.child_by_field_name("function"))
        names, using = _cg_scopes(unit)
        if recv is None and (scope.lstrip(":") in names if scope is not None else using):
            return _REDUCE_OPS.get(name, "custom")
    return "custom"


def mechanisms(unit: "Unit") -> list[tuple[str, int]]:
    """(mechanism, line) for each operation that marks an optimized kernel."""
    return [(o.definition.mechanism, o.line) for o in operations(unit)
            if o.definition.mechanism]
