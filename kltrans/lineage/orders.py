"""Every order of a walk's simplify steps from one state, without the gate.

A GPU walk chooses its next step by time, so which order of the applicable
simplifications it takes cannot be known in advance. A pass library where one order
strands another pass (a simplification changes the form a later one matches, and no
pass handles what is left) lets a re-walk end short of naive for no reason but timing.
:func:`explore` visits every state reachable from a start (states deduplicated by content
hash), applying every simplify candidate whose preconditions and structural round trip
hold (as :func:`kltrans.lineage.walk.enumerate_candidates` finds them), and reports the
maximal paths' ends: naive ones, and stuck ones (no candidate applies, mechanisms left)
with a path that reached each. :func:`random_paths` follows random maximal paths instead,
for starts with too many orders to enumerate.

This checks the pass library, not the gate: a step taken here may still be rejected on a
GPU (a wrong result, an inverse slower than its tolerance), so a stuck end found here is
a possible dead end, and "no stuck end" says the library does not strand any order.
``tools/walk-orders.py`` is its command line.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field


@dataclass
class End:
    hash: str
    source: bytes
    path: list  # "spec@function:line" per step
    residual: list  # (mechanism, line); empty: naive


@dataclass
class Orders:
    states: int = 0
    complete: bool = True  # every reachable state visited (not cut at max_states)
    ends: dict = field(default_factory=dict)  # hash -> End
    paths: int = 0  # random_paths: paths followed

    @property
    def stuck(self) -> list:
        return [e for e in self.ends.values() if e.residual]

    @property
    def naive(self) -> list:
        return [e for e in self.ends.values() if not e.residual]


def context_for(workload_dir: str, kernel: str | None = None):
    """The facts a walk of the workload assumes (as ``kltrans lineage`` builds them)."""
    from kltrans.lineage.walk import WORKLOAD_FACTS, tolerance_facts
    from kltrans.passes.facts import Context
    from kltrans.workload.spec import load_workload

    wl = load_workload(workload_dir)
    kernel = kernel or (wl.kernels.get("expert") or {}).get("kernel")
    return Context.from_strings(tuple(list(WORKLOAD_FACTS) + tolerance_facts(wl)), "sm_90",
                                False, kernel)


def _steps(src: bytes, path: str, ctx, memo: dict):
    from kltrans.lineage.walk import content_hash, enumerate_candidates
    from kltrans.syntax import parse

    h = content_hash(src)
    if h not in memo:
        memo[h] = [c for c in enumerate_candidates(parse(src, path), ctx) if c.accepted]
    return h, memo[h]


def _end(h: str, src: bytes, path: str, steps: list) -> End:
    from kltrans.lineage.naive import residual_mechanisms
    from kltrans.syntax import parse

    return End(h, src, steps, residual_mechanisms(parse(src, path)))


def _label(c) -> str:
    return f"{c.spec}@{c.function}:{c.line}"


def explore(src: bytes, ctx, path: str = "state.cu", max_states: int = 2000) -> Orders:
    """Every state reachable from ``src`` (breadth first, at most ``max_states``)."""
    from kltrans.lineage.walk import content_hash

    out = Orders()
    seen = {content_hash(src): []}
    todo = deque([(src, [])])
    memo: dict = {}
    while todo:
        if len(seen) > max_states:
            out.complete = False
            break
        s, steps = todo.popleft()
        h, cands = _steps(s, path, ctx, memo)
        if not cands:
            out.ends[h] = _end(h, s, path, steps)
            continue
        for c in cands:
            if c.after_hash not in seen:
                seen[c.after_hash] = steps + [_label(c)]
                todo.append((c.after, seen[c.after_hash]))
    out.states = len(seen)
    return out


def random_paths(src: bytes, ctx, k: int, seed: int = 0, path: str = "state.cu",
                 progress=None) -> Orders:
    """``k`` random maximal paths from ``src`` (a uniformly chosen candidate per step)."""
    rng = random.Random(seed)
    out = Orders(complete=False)
    memo: dict = {}
    for i in range(k):
        s, steps = src, []
        while True:
            h, cands = _steps(s, path, ctx, memo)
            if not cands:
                break
            c = rng.choice(cands)
            steps.append(_label(c))
            s = c.after
        end = out.ends.setdefault(h, _end(h, s, path, steps))
        out.paths += 1
        if progress is not None:
            progress(i, end, len(steps))
    out.states = len(memo)
    return out
