"""Side-by-side timing of ``explain`` at depth 1 on the committed lineage transitions (the
slow test ``test_every_lineage_transition_is_explained_by_its_own_pass``), this tree
against another revision.

The other revision is checked out in a temporary ``git worktree``; each run is a fresh
interpreter timing ``explain`` over the first ``--pairs`` transitions, the two trees
alternating run by run (A B A B ...), so that both see the same machine. Reported: each
tree's median, min and max, and the ratio of the medians.

Usage: python bench/explain_ab.py --base REV [--runs 5] [--pairs 40] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r'''
import os, sys, time
root = sys.argv[1]
sys.path.insert(0, root)
from kltrans.diff import explain
sys.path.insert(0, os.path.join(root, "tests"))
import importlib.util
spec = importlib.util.spec_from_file_location("tde", os.path.join(root, "tests", "test_diff_explain.py"))
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
trs = m.transitions()[:int(sys.argv[2])]
t0 = time.perf_counter()
for a, b, t, cfg in trs:
    e = explain(open(a).read(), open(b).read(), depth=1, assume=tuple(cfg["facts"]),
                kernel=cfg["kernel"], a_path=a, b_path=b)
    assert e.exact, a
print(time.perf_counter() - t0)
'''


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", required=True, help="the revision to compare with")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--pairs", type=int, default=40)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "kltrans"],
                           capture_output=True, text=True, check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        wt = os.path.join(tmp, "base")
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", wt, args.base],
                       check=True)
        try:
            times = {"this tree": [], args.base: []}
            for _ in range(args.runs):
                for name, root in (("this tree", ROOT), (args.base, wt)):
                    r = subprocess.run([sys.executable, "-c", CHILD, root, str(args.pairs)],
                                       capture_output=True, text=True, check=True, cwd=root)
                    times[name].append(float(r.stdout.strip().splitlines()[-1]))
        finally:
            subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", wt], check=False)
    lines = [f"# python bench/explain_ab.py {' '.join(shlex.quote(a) for a in (argv or sys.argv[1:]))}",
             f"# this tree: {head}{' + uncommitted changes' if dirty else ''}; explain at depth 1 "
             f"over the first {args.pairs} lineage transitions, {args.runs} runs each, alternating",
             "", f"{'tree':12s} {'median s':>9s} {'min':>7s} {'max':>7s}"]
    for name, ts in times.items():
        lines.append(f"{name:12s} {statistics.median(ts):9.2f} {min(ts):7.2f} {max(ts):7.2f}")
    ratio = statistics.median(times[args.base]) / statistics.median(times["this tree"])
    lines += ["", f"this tree is {ratio:.2f}x the speed of {args.base} (ratio of the medians)"]
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        sys.path.insert(0, ROOT)
        from kltrans.syntax.files import atomic_write

        atomic_write(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
