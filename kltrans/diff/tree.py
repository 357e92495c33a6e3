"""The diff's view of a unit: a lowered tree of nodes with content hashes.

tree-sitter's tree is lowered (as difftastic and GumTree do) to plain nodes: a node has a
type, children, and, for a leaf, a label (its token text). Each node carries a content
hash over its type, label and children's hashes, its subtree size and height, and its
pre-order index; these drive the matcher (:mod:`kltrans.diff.match`).

What counts as content:

- comments are left out, except the structured ``// kltrans: ...`` lines (launch
  contracts), which are code to kltrans: they become a ``kltrans_directive`` node whose
  leaves are the comment's tokens;
- every ``#pragma`` (lifted out of the parse by :mod:`kltrans.syntax.normalize`) comes
  back as a ``pragma`` node at its place among its siblings, one leaf per word;
- whitespace inside a preprocessor body (``preproc_arg``) is collapsed;
- with ``strict``, comments are leaves too, and each leaf's label includes the whitespace
  before it (so a formatting change is an update of the token it moved).
"""

from __future__ import annotations

import bisect
import re
from typing import TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.syntax import Unit

_DIRECTIVE = re.compile(r"^//[ \t]*kltrans:")
_TOKEN = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\S")
_WS = re.compile(r"\s+")


class Node:
    """One node of the lowered tree."""

    __slots__ = ("type", "label", "children", "parent", "start", "end", "pre", "size",
                 "height", "hash", "zone", "partner", "index")

    def __init__(self, type_: str, start: int, end: int, label: str | None = None):
        self.type = type_
        self.label = label
        self.children: list[Node] = []
        self.parent: Node | None = None
        self.start = start
        self.end = end
        self.pre = 0
        self.size = 1
        self.height = 1
        self.hash = 0
        self.zone = 0
        self.partner: Node | None = None
        self.index = 0  # position among its parent's children

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def preorder(self) -> Iterator["Node"]:
        stack = [self]
        while stack:
            n = stack.pop()
            yield n
            stack.extend(reversed(n.children))

    def postorder(self) -> Iterator["Node"]:
        stack = [(self, False)]
        while stack:
            n, done = stack.pop()
            if done or not n.children:
                yield n
                continue
            stack.append((n, True))
            stack.extend((c, False) for c in reversed(n.children))

    def leaves(self) -> list["Node"]:
        return [n for n in self.preorder() if not n.children]

    def contains(self, other: "Node") -> bool:
        return self.pre <= other.pre < self.pre + self.size

    def __repr__(self) -> str:
        lab = f" {self.label!r}" if self.label is not None else ""
        return f"<{self.type}{lab} {self.start}:{self.end}>"


class Tree:
    """A lowered unit: the root, nodes in pre-order, and the unit it came from."""

    def __init__(self, unit: "Unit", root: Node, strict: bool):
        self.unit = unit
        self.root = root
        self.strict = strict
        self.nodes: list[Node] = []
        self._number()

    def _number(self) -> None:
        nodes = self.nodes
        for n in self.root.preorder():
            n.pre = len(nodes)
            nodes.append(n)
        for n in reversed(nodes):  # children come after their parent in pre-order
            if n.children:
                n.size = 1 + sum(c.size for c in n.children)
                n.height = 1 + max(c.height for c in n.children)
                n.hash = hash((n.type, tuple(c.hash for c in n.children)))
            else:
                n.hash = hash((n.type, n.label))

    def leaf_key(self) -> tuple:
        """The leaves as (type, label): equal keys mean equal content."""
        return tuple((n.type, n.label) for n in self.nodes if not n.children)


def _pragmas(unit: "Unit") -> list[tuple[int, int, str]]:
    out = []
    for norm in unit.normalizations:
        if norm.rule != "pragma":
            continue
        raw = norm.original.decode("utf-8", errors="replace")
        lead = len(raw) - len(raw.lstrip())
        out.append((norm.start + lead, norm.end, raw.strip()))
    return out


def _word_node(type_: str, start: int, text: str, strict: bool) -> Node:
    """A node for a pragma or directive: one leaf per token (whitespace-insensitive)."""
    node = Node(type_, start, start + len(text.encode("utf-8")))
    body = text if strict else text.replace("\\\r\n", " ").replace("\\\n", " ")
    for m in _TOKEN.finditer(body):
        s = start + len(body[:m.start()].encode("utf-8"))
        tok = m.group()
        leaf = Node(type_ + "_token", s, s + len(tok.encode("utf-8")), tok)
        leaf.parent = node
        leaf.index = len(node.children)
        node.children.append(leaf)
    if not node.children:
        node.label = text
    return node


def lower(unit: "Unit", strict: bool = False) -> Tree:
    """Lower a unit's tree-sitter tree (see the module docstring)."""
    src = unit.source
    pragmas = _pragmas(unit)
    pstarts = [p[0] for p in pragmas]
    placed = [False] * len(pragmas)

    def text(s: int, e: int) -> str:
        return src[s:e].decode("utf-8", errors="replace")

    def enter(ts):
        """("done", node or None) for a leaf or a comment, else ("open", frame)."""
        t = ts.type
        if t == "comment":
            body = text(ts.start_byte, ts.end_byte)
            if _DIRECTIVE.match(body):
                return "done", _word_node("kltrans_directive", ts.start_byte, body, strict)
            if not strict:
                return "done", None
            return "done", Node("comment", ts.start_byte, ts.end_byte, body)
        if ts.child_count == 0:
            label = text(ts.start_byte, ts.end_byte)
            if t == "preproc_arg" and not strict:
                label = _WS.sub(" ", label).strip()
            # operators, punctuation and keywords are one type ("token"), so that a
            # changed operator is an update, not a delete and an insert
            return "done", Node(t if ts.is_named else "token", ts.start_byte, ts.end_byte, label)
        return "open", (ts, Node(t, ts.start_byte, ts.end_byte), [], iter(ts.children))

    def finish(ts, node: Node, kids: list) -> Node:
        # pragmas in this node's span that no child holds go here, in byte order
        lo = bisect.bisect_left(pstarts, ts.start_byte)
        hi = bisect.bisect_left(pstarts, ts.end_byte)
        if lo < hi:
            for i in range(lo, hi):
                if placed[i]:
                    continue
                ps, pe, ptxt = pragmas[i]
                placed[i] = True
                kids.append(_word_node("pragma", ps, ptxt, strict))
            kids.sort(key=lambda k: k.start)
        for i, k in enumerate(kids):
            k.parent = node
            k.index = i
        node.children = kids
        if not kids:
            node.label = ""
        return node

    # iterative (a post-order walk with an explicit stack): nesting depth is bounded by
    # memory, not by Python's recursion limit
    kind, got = enter(unit.root)
    root = got if kind == "done" else None
    stack = [] if kind == "done" else [got]
    while stack:
        ts, node, kids, it = stack[-1]
        c = next(it, None)
        if c is not None:
            kind, got = enter(c)
            if kind == "open":
                stack.append(got)
            elif got is not None:
                kids.append(got)
            continue
        stack.pop()
        done = finish(ts, node, kids)
        if stack:
            stack[-1][2].append(done)
        else:
            root = done
    if root is None:  # pragma: no cover - the root is never a comment
        root = Node("translation_unit", 0, len(src))
    left = [pragmas[i] for i in range(len(pragmas)) if not placed[i]]
    if left:  # pragmas outside the root's span (before the first token, after the last)
        for ps, pe, ptxt in left:
            root.children.append(_word_node("pragma", ps, ptxt, strict))
        root.children.sort(key=lambda k: k.start)
        for i, k in enumerate(root.children):
            k.parent = root
            k.index = i
        root.start = min(root.start, left[0][0])
    if strict:
        _add_spacing(root, src)
    return Tree(unit, root, strict)


def _add_spacing(root: Node, src: bytes) -> None:
    """Strict mode: each leaf's label starts with the whitespace before it; the file's
    trailing whitespace is one more leaf."""
    prev = 0
    last = None
    for n in root.preorder():
        if n.children:
            continue
        gap = src[prev:n.start].decode("utf-8", errors="replace") if n.start >= prev else ""
        n.label = gap + "\x00" + (n.label or "")
        prev = max(prev, n.end)
        last = n
    tail = src[prev:].decode("utf-8", errors="replace")
    if tail or last is None:
        leaf = Node("end_of_file", len(src), len(src), tail)
        leaf.parent = root
        leaf.index = len(root.children)
        root.children.append(leaf)


def display_label(label: str | None) -> str:
    """A leaf label without the strict-mode spacing prefix."""
    if label is None:
        return ""
    return label.split("\x00", 1)[1] if "\x00" in label else label


def signature(unit: "Unit") -> tuple:
    """The content of a unit as kltrans diff compares it (not strict): equal signatures
    mean ``kltrans diff`` finds no difference."""
    cached = unit._cache.get("diff-signature")
    if cached is None:
        cached = lower(unit).leaf_key()
        unit._cache["diff-signature"] = cached
    return cached
