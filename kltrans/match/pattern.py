"""Code patterns with metavariables, matched structurally against tree-sitter trees.

A pattern is CUDA code in which ``$X`` stands for any one node (bound to the name X),
``$$$XS`` for zero or more sibling nodes, and ``$_`` for any one node (not bound); a
statement that is only a metavariable (``$BODY;``) stands for any one statement. The
pattern is parsed with the same grammar as the code, as an expression, a statement or a
top-level declaration (the first of these that parses), and matched node by node:
whitespace and comments do not matter, identifiers and literals must be equal, and a
metavariable used twice must bind structurally equal subtrees.

    >>> p = Pattern.compile("$A[$I] = $V")
    >>> [m.text("I") for m in p.find_all(unit)]            # doctest: +SKIP
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterator

from kltrans.syntax import parse

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax import Unit

METAVAR = re.compile(r"^\$(\$\$)?([A-Z_][A-Z0-9_]*)$")
_IDENT_TYPES = {"identifier", "type_identifier", "field_identifier", "namespace_identifier",
                "statement_identifier"}
_FN = "__kl_pattern__"


class PatternError(ValueError):
    """A pattern that cannot be used; raised when a pass or rule is loaded."""

    def __init__(self, message: str, pattern: str = "", offset: int | None = None):
        self.pattern = pattern
        self.offset = offset
        text = message
        if pattern and offset is not None:
            line_start = pattern.rfind("\n", 0, offset) + 1
            line_end = pattern.find("\n", offset)
            line = pattern[line_start:line_end if line_end >= 0 else len(pattern)]
            text += f"\n    {line}\n    {' ' * (offset - line_start)}^"
        super().__init__(text)


def metavar_name(unit: "Unit", node: "Node") -> tuple[str, bool] | None:
    """(name, is_multi) when ``node`` is a metavariable leaf of a pattern."""
    if node.type not in _IDENT_TYPES:
        return None
    m = METAVAR.match(unit.text(node))
    if not m:
        return None
    return m.group(2), bool(m.group(1))


def significant_children(node: "Node") -> list["Node"]:
    return [c for c in node.children if c.type != "comment"]


def tokens(unit: "Unit", node: "Node") -> tuple:
    """The node's leaf tokens (type, text), comments excluded: its structural identity."""
    out = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "comment":
            continue
        if n.child_count == 0:
            out.append((n.type, unit.text(n)))
        else:
            stack.extend(reversed(n.children))
    return tuple(out)


def same_tree(ua: "Unit", a: "Node", ub: "Unit", b: "Node") -> bool:
    return a.type == b.type and tokens(ua, a) == tokens(ub, b)


Binding = "Node | tuple[Node, ...]"


@dataclass(frozen=True)
class Match:
    """A match of a pattern or rule: the node and the metavariable bindings."""

    unit: "Unit" = field(repr=False)
    node: "Node" = field(repr=False)
    bindings: dict = field(default_factory=dict)

    def get(self, name: str):
        return self.bindings.get(name)

    def span(self, name: str) -> tuple[int, int] | None:
        b = self.bindings.get(name)
        if b is None:
            return None
        if isinstance(b, tuple):
            if not b:
                return None
            return b[0].start_byte, b[-1].end_byte
        return b.start_byte, b.end_byte

    def text(self, name: str) -> str:
        """Original text bound to ``name`` ('' for an empty ``$$$`` binding)."""
        b = self.bindings.get(name)
        if b is None:
            raise KeyError(f"metavariable ${name} is not bound")
        sp = self.span(name)
        return "" if sp is None else self.unit.text(sp)

    @property
    def start(self) -> int:
        return self.node.start_byte

    @property
    def end(self) -> int:
        return self.node.end_byte

    def location(self):
        return self.unit.location(self.node.start_byte)


@dataclass(frozen=True, eq=False)
class Pattern:
    """A compiled code pattern (see the module docstring)."""

    source: str
    unit: "Unit" = field(repr=False)
    root: "Node" = field(repr=False)
    context: str  # "expression" | "statement" | "top-level"
    metavars: frozenset
    multi_metavars: frozenset

    @classmethod
    def compile(cls, text: str) -> "Pattern":
        if not text or not text.strip():
            raise PatternError("empty pattern")
        stripped = text.strip()
        attempts = []
        if not stripped.endswith((";", "}")):
            attempts.append(("expression", f"void {_FN}() {{ __kl_x__ = {stripped}; }}",
                             len(f"void {_FN}() {{ __kl_x__ = ")))
        attempts.append(("statement", f"void {_FN}() {{ {stripped} }}", len(f"void {_FN}() {{ ")))
        attempts.append(("top-level", stripped, 0))
        first_error = None
        for context, wrapped, offset in attempts:
            unit = parse(wrapped, "<pattern>")
            if unit.has_errors:
                if first_error is None or context == "statement":
                    err = unit.error_nodes()[0]
                    first_error = max(0, err.start_byte - offset)
                continue
            root = _pattern_root(unit, context)
            if root is None:
                continue
            metas, multis = set(), set()
            for n in unit.walk(root):
                mv = metavar_name(unit, n)
                if mv is not None and mv[0] != "_":
                    (multis if mv[1] else metas).add(mv[0])
            both = metas & multis
            if both:
                raise PatternError(f"metavariable used both as $X and $$$X: {sorted(both)}", text)
            return cls(text, unit, root, context, frozenset(metas | multis), frozenset(multis))
        raise PatternError("pattern does not parse as CUDA (an expression, one statement or "
                           "one declaration)", stripped, first_error)

    # ----------------------------------------------------------------- matching
    @property
    def root_type(self) -> str | None:
        """The node type every match has, or None when the root is a metavariable."""
        if self._is_meta(self.root) is not None:
            return None
        return self.root.type

    def _is_meta(self, p: "Node") -> tuple[str, bool] | None:
        mv = metavar_name(self.unit, p)
        if mv is not None:
            return mv
        if p.type == "expression_statement":
            named = [c for c in p.named_children if c.type != "comment"]
            if len(named) == 1 and len(significant_children(p)) == 2:
                mv = metavar_name(self.unit, named[0])
                if mv is not None and not mv[1]:
                    return mv
        return None

    def match(self, unit: "Unit", node: "Node", bindings: dict | None = None) -> dict | None:
        """Bindings when ``node`` matches the whole pattern, else None."""
        b = dict(bindings or {})
        return b if self._match(self.root, unit, node, b) else None

    def _bind(self, name: str, unit: "Unit", value, b: dict) -> bool:
        if name == "_":
            return True
        if name in b:
            old = b[name]
            if isinstance(old, tuple) or isinstance(value, tuple):
                olds = old if isinstance(old, tuple) else (old,)
                news = value if isinstance(value, tuple) else (value,)
                return len(olds) == len(news) and all(
                    same_tree(unit, x, unit, y) for x, y in zip(olds, news))
            return same_tree(unit, old, unit, value)
        b[name] = value
        return True

    def _match(self, p: "Node", unit: "Unit", t: "Node", b: dict) -> bool:
        mv = self._is_meta(p)
        if mv is not None:
            name, multi = mv
            return self._bind(name, unit, (t,) if multi else t, b)
        if p.type != t.type:
            return False
        pk = significant_children(p)
        tk = significant_children(t)
        if not pk:
            if tk:
                return False
            if p.is_named:
                return self.unit.text(p) == unit.text(t)
            return True
        return self._match_seq(pk, 0, unit, tk, 0, b)

    def _match_seq(self, pk, i, unit, tk, j, b) -> bool:
        while i < len(pk):
            mv = metavar_name(self.unit, pk[i])
            if mv is not None and mv[1]:
                name = mv[0]
                # $$$XS: try every length, shortest first, backtracking on failure
                for k in range(j, len(tk) + 1):
                    trial = dict(b)
                    taken = tuple(tk[j:k])
                    if self._bind(name, unit, taken, trial) and \
                            self._match_seq(pk, i + 1, unit, tk, k, trial):
                        b.clear()
                        b.update(trial)
                        return True
                return False
            if j >= len(tk):
                return False
            trial = dict(b)
            if not self._match(pk[i], unit, tk[j], trial):
                return False
            b.clear()
            b.update(trial)
            i += 1
            j += 1
        return j == len(tk)

    def find_all(self, unit: "Unit", within: "Node | None" = None) -> list[Match]:
        out = []
        for n in candidates(unit, self.root_type, within):
            got = self.match(unit, n)
            if got is not None:
                out.append(Match(unit, n, got))
        return out


def _pattern_root(unit: "Unit", context: str) -> "Node | None":
    root = unit.root
    kids = [c for c in root.named_children if c.type != "comment"]
    if context == "top-level":
        return kids[0] if len(kids) == 1 else None
    fn = kids[0]
    body = fn.child_by_field_name("body")
    stmts = [c for c in body.named_children if c.type != "comment"]
    if context == "statement":
        return stmts[0] if len(stmts) == 1 else None
    # expression: the right-hand side of `__kl_x__ = <pattern>;`
    assign = stmts[0].named_children[0]
    return assign.child_by_field_name("right")


def candidates(unit: "Unit", node_type: str | None, within: "Node | None" = None) -> Iterator["Node"]:
    """Nodes of ``node_type`` (all named nodes when None) under ``within``, in pre-order."""
    if node_type is None:
        for n in unit.walk(within or unit.root):
            if n.is_named:
                yield n
        return
    yield from unit.nodes_of_type(node_type, within)
