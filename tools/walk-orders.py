#!/usr/bin/env python3
"""Does every order of a walk's simplify steps from a state end naive? (no gate)

    python3 tools/walk-orders.py corpus/layernorm STATE.cu [--max-states N] [--out DIR]
    python3 tools/walk-orders.py corpus/layernorm STATE.cu --random K [--seed S]

The first form visits every reachable state; ``--random K`` follows K random maximal
paths instead, for starts whose orders are too many to enumerate (an expert with a dozen
commuting rerolls). Each stuck end (no simplify pass applies, mechanisms left) is
printed with a path that reached it, and written to DIR as HASH.cu with --out. Exit
status 1 when a stuck end was found. See kltrans/lineage/orders.py.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main(argv=None) -> int:
    from kltrans.lineage.orders import context_for, explore, random_paths
    from kltrans.syntax.files import atomic_write

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload")
    ap.add_argument("state")
    ap.add_argument("--max-states", type=int, default=2000)
    ap.add_argument("--random", type=int, default=0, metavar="K")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write each stuck state here as HASH.cu")
    args = ap.parse_args(argv)
    ctx = context_for(args.workload)
    src = open(args.state, "rb").read()

    def show(i, end, n):
        what = "naive" if not end.residual else "stuck"
        print(f"path {i + 1}: {n} step(s), ends {end.hash} {what}", flush=True)

    if args.random:
        got = random_paths(src, ctx, args.random, args.seed, args.state, progress=show)
        print(f"{got.paths} random path(s), {got.states} state(s) met: "
              f"{len(got.naive)} naive end(s), {len(got.stuck)} stuck end(s)")
    else:
        got = explore(src, ctx, args.state, args.max_states)
        print(f"{got.states} state(s){'' if got.complete else ' (cut at --max-states)'}: "
              f"{len(got.naive)} naive end(s), {len(got.stuck)} stuck end(s)")
    for e in got.stuck:
        print(f"stuck {e.hash} after {len(e.path)} step(s): still has "
              + ", ".join(f"{m} (line {ln})" for m, ln in e.residual))
        for s in e.path:
            print(f"    {s}")
        if args.out:
            os.makedirs(args.out, exist_ok=True)
            atomic_write(os.path.join(args.out, e.hash + ".cu"), e.source)
    return 1 if got.stuck else 0


if __name__ == "__main__":
    sys.exit(main())
