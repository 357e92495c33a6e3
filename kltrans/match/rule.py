"""Anchor rules: a pattern (or a node kind, or a raw tree-sitter query) plus context.

Rules are data, in the style of ast-grep::

    Rule(pattern="for ($T $I = $S; $I < $N; $STEP) $BODY;",
         inside=Rule(kind="function_definition", has=Rule(pattern="__global__")),
         not_inside=Rule(kind="lambda_expression"),
         constraints={"S": Constraint(regex=r"^\\d+$")})

or the same as a dict (YAML): ``{"pattern": ..., "inside": {"kind": ...}, "constraints":
{"S": {"regex": "..."}}}``. Clauses:

``pattern`` / ``kind`` / ``query`` (+ ``capture``) / ``regex``
    what the node itself must be. ``query`` names a file ``grammars/queries/NAME.scm``
    (or is inline query text); the node is the capture named ``capture``.
``inside`` / ``not_inside``
    some ancestor matches (does not match) the sub-rule. ``inside_kernel=True`` is the
    common shorthand for "inside a ``__global__`` function".
``has`` / ``not_has``
    some descendant matches (does not match) the sub-rule.
``follows`` / ``precedes``
    some earlier (later) sibling statement in the same block matches the sub-rule.
``all`` / ``any`` / ``not_``
    combinators.
``constraints``
    per metavariable: ``regex``, ``not_regex``, ``kind`` and ``predicate`` (a name from
    :mod:`kltrans.match.predicates`).

Metavariables bound in one clause are visible to the clauses evaluated after it (the
order is: the node, inside, has, follows, precedes, combinators, constraints). Every
pattern is compiled, every regex and predicate resolved, when the rule is built: an
error there is an error at load time, not at run time.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from kltrans.match.pattern import Match, Pattern, PatternError, candidates

if TYPE_CHECKING:  # pragma: no cover
    from tree_sitter import Node

    from kltrans.syntax import Unit

QUERY_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "grammars", "queries")


class RuleError(ValueError):
    """A malformed rule (unknown key, bad regex, unknown predicate, bad pattern)."""


@dataclass(frozen=True)
class Constraint:
    regex: str | None = None
    not_regex: str | None = None
    kind: str | tuple | None = None
    predicate: str | None = None

    def __post_init__(self):
        for r in (self.regex, self.not_regex):
            if r is not None:
                try:
                    re.compile(r)
                except re.error as e:
                    raise RuleError(f"bad regex {r!r}: {e}") from None
        if self.predicate is not None:
            from kltrans.match.predicates import PREDICATES

            if self.predicate not in PREDICATES:
                raise RuleError(f"unknown predicate {self.predicate!r}; known: "
                                f"{', '.join(sorted(PREDICATES))}")

    def check(self, unit: "Unit", value) -> bool:
        nodes = value if isinstance(value, tuple) else (value,)
        if isinstance(value, tuple):
            text = unit.text((nodes[0].start_byte, nodes[-1].end_byte)) if nodes else ""
        else:
            text = unit.text(value)
        if self.regex is not None and not re.search(self.regex, text):
            return False
        if self.not_regex is not None and re.search(self.not_regex, text):
            return False
        if self.kind is not None:
            kinds = (self.kind,) if isinstance(self.kind, str) else tuple(self.kind)
            if not all(n.type in kinds for n in nodes):
                return False
        if self.predicate is not None:
            from kltrans.match.predicates import PREDICATES

            if not all(PREDICATES[self.predicate](unit, n) for n in nodes):
                return False
        return True


@dataclass(frozen=True, eq=False)
class Rule:
    pattern: str | None = None
    kind: str | None = None
    regex: str | None = None
    query: str | None = None
    capture: str | None = None
    inside: "Rule | None" = None
    not_inside: "Rule | None" = None
    inside_kernel: bool = False
    has: "Rule | None" = None
    not_has: "Rule | None" = None
    follows: "Rule | None" = None
    precedes: "Rule | None" = None
    all: tuple = ()
    any: tuple = ()
    not_: "Rule | None" = None
    constraints: dict = field(default_factory=dict)
    _compiled: Pattern | None = field(default=None, repr=False, compare=False)
    _query: Any = field(default=None, repr=False, compare=False)
    # the node type a pattern's match has (None: its root is a metavariable), read before
    # anything else in match(): most nodes a relational rule visits fail on their type
    _root_type: str | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.pattern is not None:
            object.__setattr__(self, "_compiled", Pattern.compile(self.pattern))
            object.__setattr__(self, "_root_type", self._compiled.root_type)
        if self.regex is not None:
            try:
                re.compile(self.regex)
            except re.error as e:
                raise RuleError(f"bad regex {self.regex!r}: {e}") from None
        if self.query is not None:
            object.__setattr__(self, "_query", _load_query(self.query, self.capture))
        if self.kind is not None:
            _check_kind(self.kind)
        cons = {}
        for name, c in (self.constraints or {}).items():
            cons[name.lstrip("$")] = c if isinstance(c, Constraint) else _constraint(name, c)
        object.__setattr__(self, "constraints", cons)
        if self._compiled is not None:
            unknown = set(cons) - set(self.metavars())
            if unknown:
                raise RuleError(f"constraint on metavariable(s) not in the rule: "
                                f"{', '.join('$' + u for u in sorted(unknown))}")
        if not (self.pattern or self.kind or self.query or self.regex or self.all or self.any
                or self.not_ or self.inside or self.has or self.inside_kernel):
            raise RuleError("a rule needs at least one of pattern, kind, query, regex, "
                            "inside, has, all, any, not")

    # --------------------------------------------------------------------- data
    @classmethod
    def from_dict(cls, data: dict | str) -> "Rule":
        if isinstance(data, str):
            return cls(pattern=data)
        if isinstance(data, Rule):
            return data
        if not isinstance(data, dict):
            raise RuleError(f"a rule is a mapping or a pattern string, not {type(data).__name__}")
        known = {f.name for f in fields(cls) if not f.name.startswith("_")}
        kw: dict = {}
        for key, value in data.items():
            k = key.replace("-", "_")
            if k == "not":
                k = "not_"
            if k not in known:
                raise RuleError(f"unknown rule key {key!r}; known: "
                                f"{', '.join(sorted(known - {'not_'}) + ['not'])}")
            if k in ("inside", "not_inside", "has", "not_has", "follows", "precedes", "not_"):
                value = cls.from_dict(value)
            elif k in ("all", "any"):
                value = tuple(cls.from_dict(v) for v in value)
            kw[k] = value
        return cls(**kw)

    def describe(self) -> str:
        """A one-line summary of the rule (for ``kltrans pass-info``)."""
        parts = []
        for key in ("pattern", "kind", "regex", "query"):
            v = getattr(self, key)
            if v is not None:
                parts.append(f"{key} {v!r}")
        if self.inside_kernel:
            parts.append("inside a __global__ function")
        for key in ("inside", "not_inside", "has", "not_has", "follows", "precedes", "not_"):
            v = getattr(self, key)
            if v is not None:
                parts.append(f"{key.rstrip('_').replace('_', '-')} ({v.describe()})")
        for key in ("all", "any"):
            v = getattr(self, key)
            if v:
                parts.append(f"{key} of [" + "; ".join(r.describe() for r in v) + "]")
        if self.constraints:
            parts.append("constraints on " + ", ".join("$" + k for k in self.constraints))
        return ", ".join(parts)

    def metavars(self) -> set:
        out = set(self._compiled.metavars) if self._compiled else set()
        for sub in (self.inside, self.has, self.follows, self.precedes, *self.all, *self.any):
            if sub is not None:
                out |= sub.metavars()
        return out

    # ------------------------------------------------------------------ matching
    def node_type(self) -> str | None:
        if self._compiled is not None and self._compiled.root_type is not None:
            return self._compiled.root_type
        return self.kind

    def find_all(self, unit: "Unit", within: "Node | None" = None) -> list[Match]:
        """Every node under ``within`` (default: the whole unit) that matches, in order."""
        out = []
        if self._query is not None:
            import tree_sitter

            caps = tree_sitter.QueryCursor(self._query[0]).captures(within or unit.root)
            nodes = sorted(caps.get(self._query[1], []), key=lambda n: (n.start_byte, -n.end_byte))
        else:
            nodes = candidates(unit, self.node_type(), within)
        for n in nodes:
            b = self.match(unit, n, _from_query=self._query is not None)
            if b is not None:
                out.append(Match(unit, n, b))
        return out

    def match(self, unit: "Unit", node: "Node", bindings: dict | None = None,
              _from_query: bool = False) -> dict | None:
        """Bindings (extending ``bindings``) when ``node`` matches the rule, else None."""
        if (self.kind is not None and node.type != self.kind) or \
                (self._root_type is not None and node.type != self._root_type):
            return None
        b = dict(bindings or {})
        if self.regex is not None and not re.search(self.regex, unit.text(node)):
            return None
        if self._query is not None and not _from_query:
            import tree_sitter

            caps = tree_sitter.QueryCursor(self._query[0]).captures(node)
            if not any(n.id == node.id for n in caps.get(self._query[1], [])):
                return None
        if self._compiled is not None:
            got = self._compiled.match(unit, node, b)
            if got is None:
                return None
            b = got
        if self.inside_kernel and not _in_kernel(unit, node):
            return None
        if self.inside is not None:
            got = _first(self.inside, unit, _ancestors(node), b)
            if got is None:
                return None
            b = got
        if self.not_inside is not None and _first(self.not_inside, unit, _ancestors(node), b) is not None:
            return None
        if self.has is not None:
            got = _first(self.has, unit, _descendants(unit, node), b)
            if got is None:
                return None
            b = got
        if self.not_has is not None and _first(self.not_has, unit, _descendants(unit, node), b) is not None:
            return None
        if self.follows is not None:
            got = _first(self.follows, unit, _siblings(node, -1), b)
            if got is None:
                return None
            b = got
        if self.precedes is not None:
            got = _first(self.precedes, unit, _siblings(node, +1), b)
            if got is None:
                return None
            b = got
        for sub in self.all:
            got = sub.match(unit, node, b)
            if got is None:
                return None
            b = got
        if self.any:
            for sub in self.any:
                got = sub.match(unit, node, b)
                if got is not None:
                    b = got
                    break
            else:
                return None
        if self.not_ is not None and self.not_.match(unit, node, b) is not None:
            return None
        for name, c in self.constraints.items():
            if name in b and not c.check(unit, b[name]):
                return None
        return b


def _constraint(name: str, c) -> Constraint:
    if not isinstance(c, dict):
        raise RuleError(f"constraint for ${name} must be a mapping")
    allowed = {"regex", "not_regex", "kind", "predicate"}
    kw = {}
    for k, v in c.items():
        kk = k.replace("-", "_")
        if kk not in allowed:
            raise RuleError(f"unknown constraint key {k!r} for ${name}; known: "
                            f"{', '.join(sorted(allowed))}")
        kw[kk] = tuple(v) if isinstance(v, list) else v
    return Constraint(**kw)


def _check_kind(kind: str) -> None:
    from kltrans.syntax.unit import language

    lang = language()
    if lang.id_for_node_kind(kind, True) is None:
        raise RuleError(f"unknown node kind {kind!r} in the CUDA grammar")


def _load_query(query: str, capture: str | None):
    import tree_sitter

    from kltrans.syntax.unit import language

    text = query
    if re.fullmatch(r"[A-Za-z0-9_\-]+", query):
        path = os.path.join(QUERY_DIR, query + ".scm")
        try:
            with open(path) as f:
                text = f.read()
        except OSError:
            raise RuleError(f"no query file {path}") from None
    try:
        q = tree_sitter.Query(language(), text)
    except Exception as e:  # QueryError subclasses differ across versions
        raise RuleError(f"bad tree-sitter query {query!r}: {e}") from None
    names = [q.capture_name(i) for i in range(q.capture_count)]
    cap = capture or (names[0] if names else None)
    if cap not in names:
        raise RuleError(f"query {query!r} has no capture @{capture}; captures: {names}")
    return q, cap


def _ancestors(node: "Node"):
    p = node.parent
    while p is not None:
        yield p
        p = p.parent


def _descendants(unit: "Unit", node: "Node"):
    it = unit.walk(node)
    next(it)  # skip the node itself
    yield from it


def _siblings(node: "Node", direction: int):
    s = node.prev_named_sibling if direction < 0 else node.next_named_sibling
    while s is not None:
        if s.type != "comment":
            yield s
        s = s.prev_named_sibling if direction < 0 else s.next_named_sibling


def _first(rule: Rule, unit: "Unit", nodes, b: dict) -> dict | None:
    kind, root = rule.kind, rule._root_type  # match() would reject these first
    for n in nodes:
        if (kind is not None and n.type != kind) or (root is not None and n.type != root):
            continue
        got = rule.match(unit, n, b)
        if got is not None:
            return got
    return None


def _in_kernel(unit: "Unit", node: "Node") -> bool:
    """Whether the innermost function definition around ``node`` (``node`` itself when it
    is one) is a ``__global__`` kernel. Kept per unit by node id: the rules of every pass
    ask it of the same nodes again and again."""
    memo = unit._cache.setdefault("in_kernel", {})
    path, p, got = [], node, False
    while p is not None:
        hit = memo.get(p.id)
        if hit is not None:
            got = hit
            break
        path.append(p.id)
        if p.type == "function_definition":
            got = any(c.type == "__global__" for c in p.children)
            break
        p = p.parent
    for i in path:
        memo[i] = got
    return got


__all__ = ["Constraint", "Rule", "RuleError", "PatternError"]
