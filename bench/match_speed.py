"""Anchor matching speed over the corpus and the test kernels.

For each anchor (the registered passes' anchors plus typical patterns), find every match
in every unit; report matches per second and units scanned per second, as medians of
--runs repetitions, all anchors timed side by side in one run.

Usage: python bench/match_speed.py [--runs 7] [--out bench/results/match_speed.txt]
"""

from __future__ import annotations

import argparse
import datetime
import glob
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PATTERNS = {
    "assign $A[$I] = $V": dict(pattern="$A[$I] = $V"),
    "for loop (pattern)": dict(pattern="for (int $I = $S; $I < $N; $$$STEP) $BODY;"),
    "shuffle call": dict(pattern="__shfl_down_sync($$$ARGS)"),
    "global index": dict(pattern="blockIdx.x * blockDim.x + threadIdx.x"),
    "barrier in loop": dict(pattern="__syncthreads()", inside=dict(kind="for_statement")),
    "store after barrier": dict(kind="expression_statement",
                                follows=dict(pattern="__syncthreads();")),
    "query: unroll candidates": dict(query="unroll_candidates", capture="loop"),
}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--out")
    args = ap.parse_args(argv)

    from kltrans.match import Rule
    from kltrans.passes.registry import get_pass, names
    from kltrans.syntax import load

    files = sorted(glob.glob(os.path.join(ROOT, "corpus", "**", "*.cu"), recursive=True))
    files += sorted(glob.glob(os.path.join(ROOT, "tests", "data", "kernels", "*.cu*")))
    units = [u for f in files for u in load(f)]
    nbytes = sum(len(u.source) for u in units)
    rules = {k: Rule.from_dict(v) for k, v in PATTERNS.items()}
    for n in names():
        rules[f"anchor of {n}"] = get_pass(n).anchor

    rows = []
    times = {k: [] for k in rules}
    counts = {}
    for k, r in rules.items():  # warm-up (query compilation, caches)
        counts[k] = sum(len(r.find_all(u)) for u in units)
    for _ in range(args.runs):
        for k, r in rules.items():
            t0 = time.perf_counter()
            for u in units:
                r.find_all(u)
            times[k].append(time.perf_counter() - t0)
    lines = [
        f"# kltrans anchor matching speed — {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}",
        f"# command: python bench/match_speed.py --runs {args.runs}",
        f"# machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        f"# input: {len(units)} units ({len(files)} files, {nbytes} bytes) from corpus/ and tests/data/kernels/",
        f"{'anchor':<34}{'matches':>9}{'median ms':>11}{'matches/s':>12}{'units/s':>10}",
    ]
    total_m = total_t = 0.0
    for k in rules:
        med = statistics.median(times[k])
        total_m += counts[k]
        total_t += med
        lines.append(f"{k:<34}{counts[k]:>9}{med * 1e3:>11.2f}{counts[k] / med:>12.0f}"
                     f"{len(units) / med:>10.0f}")
    lines.append(f"{'all anchors':<34}{int(total_m):>9}{total_t * 1e3:>11.2f}"
                 f"{total_m / total_t:>12.0f}{len(units) * len(rules) / total_t:>10.0f}")
    report = "\n".join(lines)
    print(report)
    if args.out:
        from kltrans.syntax.files import atomic_write

        atomic_write(args.out, report + "\n")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main())
