"""What one walk step's enumeration costs: every simplify candidate of a state, rewritten
and round-tripped (kltrans.lineage.walk.enumerate_candidates), on the corpus experts and
on layernorm's re-walk state 34, with Unit.walk served from the per-unit pre-order list
and, side by side in the same run, from a fresh tree-sitter cursor walk every time (as
before the list). Medians of --runs repetitions per state and mode, interleaved.

Usage: python bench/walk_enumerate.py [--runs 5] [--out bench/results/walk_enumerate.txt]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

STATES = [(w, os.path.join("corpus", w, "expert.cu")) for w in
          ("histogram", "layernorm", "reduce-sum", "scan", "sgemm", "softmax", "transpose")] + \
         [("layernorm", os.path.join("bench", "walk-gpu", "layernorm", "states",
                                     "34-reload-bf16-row.cu"))]


def main(argv=None) -> int:
    from kltrans.lineage.orders import context_for
    from kltrans.lineage.walk import enumerate_candidates
    from kltrans.syntax import parse
    from kltrans.syntax.unit import Unit

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    listed = Unit.walk

    def cursor(self, node=None):
        return self._walk_cursor(node)

    rows = []
    for w, rel in STATES:
        ctx = context_for(os.path.join(ROOT, "corpus", w))
        src = open(os.path.join(ROOT, rel), "rb").read()
        times = {"list": [], "cursor": []}
        counts = set()
        for _ in range(args.runs):
            for mode in ("cursor", "list"):
                Unit.walk = cursor if mode == "cursor" else listed
                try:
                    t0 = time.perf_counter()
                    got = enumerate_candidates(parse(src, rel), ctx)
                    times[mode].append(time.perf_counter() - t0)
                finally:
                    Unit.walk = listed
                counts.add(tuple((c.spec, c.site, c.stage, c.after_hash) for c in got))
        assert len(counts) == 1, f"{rel}: the two walks gave different candidates"
        c, l_ = statistics.median(times["cursor"]), statistics.median(times["list"])
        rows.append((rel, len(next(iter(counts))), c, l_))
    lines = [f"# python bench/walk_enumerate.py --runs {args.runs}   "
             f"({datetime.date.today()}, {platform.python_version()}, {platform.machine()})",
             "# enumerate_candidates per state, median seconds; the same candidates both ways",
             f"{'state':60s} {'cands':>5s} {'cursor s':>9s} {'list s':>8s} {'ratio':>6s}"]
    for rel, n, c, l_ in rows:
        lines.append(f"{rel:60s} {n:5d} {c:9.3f} {l_:8.3f} {c / l_:6.2f}")
    tot_c, tot_l = sum(r[2] for r in rows), sum(r[3] for r in rows)
    lines.append(f"{'all states':60s} {'':5s} {tot_c:9.3f} {tot_l:8.3f} {tot_c / tot_l:6.2f}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        from kltrans.syntax.files import atomic_write

        atomic_write(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
