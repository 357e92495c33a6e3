"""GumTree-style matching of two lowered trees, and the edit script (Chawathe style).

1. Top-down: subtrees of equal content hash (and height >= ``min_height``) are matched,
   highest first; a hash that occurs once on each side is matched at once, several
   occurrences are ranked by the similarity of their parents.
2. Bottom-up: a container whose descendants are matched is matched to the candidate (same
   type, an ancestor of its descendants' partners) with the highest dice coefficient, if
   that is at least ``min_dice``; roots and pre-paired nodes (kernels matched by name) are
   always matched.
3. Recovery: inside every pair matched bottom-up, unmatched children are matched in order
   (longest common subsequence) by content hash, then leaves by type and label, then by
   type alone (a leaf of the same type is an update; a container is taken only when its
   tokens are similar enough).

Matching never crosses zones: a node inside kernel ``f`` of A can only match a node inside
the kernel of B that ``f`` was paired with (zone ids are set by :mod:`kltrans.diff.core`).

The edit script: an unmatched node of A whose parent is matched is a ``delete`` (of its
subtree), an unmatched node of B likewise an ``insert``; a matched leaf whose label
changed is an ``update``; a matched node whose parent's partner is not its partner's
parent, or which leaves the longest increasing run of its siblings' order, is a ``move``.
"""

from __future__ import annotations

import difflib
import heapq
from collections import Counter
from dataclasses import dataclass

from kltrans.diff.tree import Node, Tree

MIN_HEIGHT = 2
MIN_DICE = 0.5
MAX_GROUP = 24  # top-down: more occurrences of one subtree than this are left to bottom-up
RECOVER_MIN_RATIO = 0.3  # recovery: a container matched by type needs this token similarity


# ------------------------------------------------------------------------- helpers
def _link(a: Node, b: Node) -> None:
    a.partner = b
    b.partner = a


def _link_subtree(a: Node, b: Node) -> None:
    for x, y in zip(a.preorder(), b.preorder()):
        _link(x, y)


def _dice(a: Node, b: Node, nodes_a: list[Node]) -> float:
    """2 * |descendants of a matched into b| / (|desc a| + |desc b|); ``nodes_a`` is A's
    pre-order list (a's descendants are the slice after it)."""
    da, db = a.size - 1, b.size - 1
    if da + db == 0:
        return 1.0 if a.partner is b else 0.0
    lo, hi = b.pre, b.pre + b.size
    common = 0
    for n in nodes_a[a.pre + 1:a.pre + a.size]:
        p = n.partner
        if p is not None and lo < p.pre < hi:
            common += 1
    return 2.0 * common / (da + db)


class _HeightQueue:
    def __init__(self):
        self._heap: list = []
        self._seq = 0

    def push(self, n: Node) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (-n.height, self._seq, n))

    def open(self, n: Node) -> None:
        for c in n.children:
            self.push(c)

    def peek(self) -> int:
        return -self._heap[0][0] if self._heap else 0

    def pop_all(self) -> list[Node]:
        h = self.peek()
        out = []
        while self._heap and -self._heap[0][0] == h:
            out.append(heapq.heappop(self._heap)[2])
        return out


# ------------------------------------------------------------------------ phases
def top_down(ta: Tree, tb: Tree, min_height: int = MIN_HEIGHT) -> None:
    qa, qb = _HeightQueue(), _HeightQueue()
    qa.push(ta.root)
    qb.push(tb.root)
    candidates: list[tuple[Node, Node]] = []
    while True:
        ha, hb = qa.peek(), qb.peek()
        if min(ha, hb) < min_height:
            break
        if ha > hb:
            for n in qa.pop_all():
                qa.open(n)
            continue
        if hb > ha:
            for n in qb.pop_all():
                qb.open(n)
            continue
        xa, xb = qa.pop_all(), qb.pop_all()
        groups: dict = {}
        for n in xa:
            groups.setdefault((n.hash, n.zone), ([], []))[0].append(n)
        for n in xb:
            groups.setdefault((n.hash, n.zone), ([], []))[1].append(n)
        pending = set()
        for la, lb in groups.values():
            if not la or not lb:
                continue
            if len(la) == 1 and len(lb) == 1:
                _link_subtree(la[0], lb[0])
            elif len(la) <= MAX_GROUP and len(lb) <= MAX_GROUP:
                for a in la:
                    for b in lb:
                        candidates.append((a, b))
                    pending.add(id(a))
                pending.update(id(b) for b in lb)
        for n in xa:
            if n.partner is None and id(n) not in pending:
                qa.open(n)
        for n in xb:
            if n.partner is None and id(n) not in pending:
                qb.open(n)
    if not candidates:
        return
    na, nb = max(1, len(ta.nodes)), max(1, len(tb.nodes))

    sims: dict = {}

    def rank(pair):
        a, b = pair
        pa, pb = a.parent, b.parent
        if pa is None or pb is None:
            sim = 0.0
        else:
            key = (pa.pre, pb.pre)
            sim = sims.get(key)
            if sim is None:
                sim = sims[key] = _dice(pa, pb, ta.nodes)
        return (-sim, abs(a.pre / na - b.pre / nb), a.pre, b.pre)

    candidates.sort(key=rank)
    for a, b in candidates:
        if a.partner is None and b.partner is None:
            _link_subtree(a, b)


def bottom_up(ta: Tree, tb: Tree, forced: list[tuple[Node, Node]],
              min_dice: float = MIN_DICE) -> None:
    recover_at = set()
    budget = _Budget()
    if ta.root.partner is None and tb.root.partner is None:
        _link(ta.root, tb.root)
        recover_at.add(id(ta.root))
    for a, b in forced:
        if a.partner is None and b.partner is None and a.type == b.type:
            _link(a, b)
            recover_at.add(id(a))
    for a in ta.root.postorder():
        if a.partner is not None:
            if id(a) in recover_at:
                recover(a, a.partner, budget)
            continue
        if not a.children:
            continue
        cands = {}
        for c in a.children:
            p = c.partner
            if p is not None and p.parent is not None:
                cands[id(p.parent)] = p.parent
        if not cands and budget.take(a.size):  # deeper matches only: walk up from theirs
            limit = a.height
            for n in a.preorder():
                p = n.partner
                if p is None or n is a:
                    continue
                q, steps = p.parent, 0
                while q is not None and steps < limit:
                    cands[id(q)] = q
                    q, steps = q.parent, steps + 1
        best, best_sim = None, -1.0
        for b in cands.values():
            if b.partner is not None or b.type != a.type or b.zone != a.zone:
                continue
            sim = _dice(a, b, ta.nodes)
            if sim > best_sim:
                best, best_sim = b, sim
        if best is not None and best_sim >= min_dice:
            _link(a, best)
            recover(a, best, budget)


def _lcs(ka: list, kb: list) -> list[tuple[int, int]]:
    sm = difflib.SequenceMatcher(None, ka, kb, autojunk=False)
    out = []
    for i, j, n in sm.get_matching_blocks():
        out.extend((i + k, j + k) for k in range(n))
    return out


LCS_CELLS = 250_000  # above len(ka) * len(kb), the token similarity is a multiset Dice
RECOVER_BUDGET = 2_000_000  # nodes the bottom-up phase of one match may read again


class _Budget:
    """What the bottom-up phase may still read: with deep nesting every level reads its
    whole subtree again (token similarities, the walk up from deeper matches); past the
    budget, such containers are left unmatched (the script then deletes and inserts
    them: still a correct diff, less small)."""

    def __init__(self, left: int = RECOVER_BUDGET):
        self.left = left

    def take(self, n: int) -> bool:
        if n > self.left:
            return False
        self.left -= n
        return True


def _similar_tokens(a: Node, b: Node, budget: "_Budget | None" = None) -> bool:
    if budget is not None and not budget.take(a.size + b.size):
        return False
    ka = [(n.type, n.label) for n in a.leaves()]
    kb = [(n.type, n.label) for n in b.leaves()]
    if not ka or not kb:
        return False
    if len(ka) * len(kb) > LCS_CELLS:
        # difflib's matcher is quadratic on repetitive token runs (deep nesting): the
        # share of tokens the two have in common, counted with multiplicity, instead
        common = sum((Counter(ka) & Counter(kb)).values())
        return 2 * common / (len(ka) + len(kb)) >= RECOVER_MIN_RATIO
    return difflib.SequenceMatcher(None, ka, kb, autojunk=False).ratio() >= RECOVER_MIN_RATIO


def recover(a: Node, b: Node, budget: "_Budget | None" = None) -> None:
    """Match the unmatched children of a matched pair (see the module docstring); pairs
    linked by type are recovered in turn, from a work list (no recursion: nesting depth
    is bounded by memory)."""
    budget = _Budget() if budget is None else budget
    work = [(a, b)]
    while work:
        x, y = work.pop()
        work.extend(_recover_one(x, y, budget))


def _recover_one(a: Node, b: Node, budget: "_Budget") -> list[tuple[Node, Node]]:
    """One pair's children matched; the pairs linked by type whose children are next."""
    more: list[tuple[Node, Node]] = []
    ua = [c for c in a.children if c.partner is None]
    ub = [c for c in b.children if c.partner is None]
    if not ua or not ub:
        return more
    passes = (
        lambda n: (n.hash,),
        lambda n: (n.type, n.label) if not n.children else None,
        lambda n: (n.type,),
    )
    for level, key in enumerate(passes):
        ua = [c for c in ua if c.partner is None]
        ub = [c for c in ub if c.partner is None]
        if not ua or not ub:
            return more
        ka = [key(c) for c in ua]
        kb = [key(c) for c in ub]
        # None keys never match each other
        ka = [k if k is not None else ("\x00a", i) for i, k in enumerate(ka)]
        kb = [k if k is not None else ("\x00b", i) for i, k in enumerate(kb)]
        for i, j in _lcs(ka, kb):
            x, y = ua[i], ub[j]
            if x.partner is not None or y.partner is not None or x.zone != y.zone:
                continue
            if level == 0:
                _link_subtree(x, y)
            elif level == 1:
                _link(x, y)
            else:
                if x.children and not _similar_tokens(x, y, budget):
                    continue
                if not x.children and bool(y.children):
                    continue
                _link(x, y)
                if x.children:
                    more.append((x, y))
    return more


def match(ta: Tree, tb: Tree, forced: list[tuple[Node, Node]] = ()) -> None:
    top_down(ta, tb)
    bottom_up(ta, tb, list(forced))


# --------------------------------------------------------------------- edit script
@dataclass
class Action:
    kind: str  # insert | delete | update | move
    a: Node | None  # the node in A (delete, update, move)
    b: Node | None  # the node in B (insert, update, move)

    @property
    def node_type(self) -> str:
        return (self.a or self.b).type

    @property
    def zone(self) -> int:
        return (self.a or self.b).zone


def _lis_keep(seq: list[int]) -> set[int]:
    """Indices of one longest increasing subsequence of ``seq``."""
    if not seq:
        return set()
    tails: list[int] = []
    tails_idx: list[int] = []
    prev = [-1] * len(seq)
    import bisect

    for i, v in enumerate(seq):
        k = bisect.bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
            tails_idx.append(i)
        else:
            tails[k] = v
            tails_idx[k] = i
        prev[i] = tails_idx[k - 1] if k > 0 else -1
    keep = set()
    i = tails_idx[-1]
    while i >= 0:
        keep.add(i)
        i = prev[i]
    return keep


def edit_script(ta: Tree, tb: Tree) -> list[Action]:
    out: list[Action] = []
    moved: set[int] = set()
    for a in ta.nodes:
        p = a.partner
        if p is None:
            if a.parent is None or a.parent.partner is not None:
                out.append(Action("delete", a, None))
            continue
        if not a.children and a.label != p.label:
            out.append(Action("update", a, p))
        if a.parent is not None:
            pa = a.parent.partner
            if pa is None or pa is not p.parent:
                out.append(Action("move", a, p))
                moved.add(id(a))
        if a.children and p.children:
            kids = [c for c in a.children if c.partner is not None
                    and c.partner.parent is p and id(c) not in moved]
            if len(kids) > 1:
                keep = _lis_keep([c.partner.index for c in kids])
                for i, c in enumerate(kids):
                    if i not in keep:
                        out.append(Action("move", c, c.partner))
                        moved.add(id(c))
    for b in tb.nodes:
        if b.partner is None and (b.parent is None or b.parent.partner is not None):
            out.append(Action("insert", None, b))
    order = {"delete": 0, "update": 1, "move": 2, "insert": 3}
    out.sort(key=lambda x: ((x.a.start if x.a is not None else x.b.start),
                            order[x.kind]))
    return out
