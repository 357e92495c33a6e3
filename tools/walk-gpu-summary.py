"""A table of the GPU walks under a folder (tools/walk-gpu.sh): steps taken, how each was
chosen, the termination, and where the steps' wall time went (seconds_by_phase, summed)."""

import glob
import json
import os
import sys


def main(root: str) -> int:
    rows = []
    for path in sorted(glob.glob(os.path.join(root, "*", "lineage.json"))):
        d = json.load(open(path))
        trs = d["transitions"]
        phases: dict = {}
        for t in trs:
            for k, v in (t.get("seconds_by_phase") or {}).items():
                phases[k] = phases.get(k, 0.0) + v
        rules: dict = {}
        for t in trs:
            rules[t["chosen_by"]] = rules.get(t["chosen_by"], 0) + 1
        secs = sorted(t["seconds"] for t in trs)
        term = (d.get("termination") or {}).get("kind") or "-"
        rows.append((os.path.basename(os.path.dirname(path)), len(trs), term,
                     len(d.get("backtracks") or []),
                     " ".join(f"{k}:{v}" for k, v in sorted(rules.items())),
                     f"{secs[len(secs) // 2]:.0f}" if secs else "-",
                     " ".join(f"{k} {v:.0f}" for k, v in phases.items())))
    head = ("walk", "steps", "end", "backtracks", "chosen by", "median s/step", "seconds by phase")
    print(" | ".join(head))
    for r in rows:
        print(" | ".join(str(x) for x in r))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "bench/walk-gpu"))
