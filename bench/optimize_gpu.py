"""kltrans optimize on a GPU: each strategy on a few held-out instances, small budget.

Checks what only a GPU shows: every accepted candidate was faster than the best before it
in every paired trial, every rejected-as-slower one was not; and records what one gate
evaluation costs (seconds per evaluation, split by verdict), which sizes how large an
experiment fits in a session. Writes optimize_gpu.txt and .json under --out.

    python3 bench/optimize_gpu.py --out bench/results [--targets gelu swiglu] [--budget 6]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def check(doc: dict) -> list[str]:
    """What is wrong with a GPU trajectory (empty: nothing). An accepted candidate, and
    one outranked by a faster candidate of its round (``--select best``), was faster in
    every paired trial; one rejected at the profile stage was not (or, faster in every
    trial, fell short of ``--min-gain``); none is left kept at the end."""
    bad = []
    for c in doc["candidates"]:
        e = c.get("effect")
        faster = bool(e and e.get("ok") and all(x > 1.0 for x in e["speedup_trials"]))
        v = c.get("verdict")
        if v in ("accepted", "outranked") and not faster:
            bad.append(f"{v} without being faster in every trial: {c['spec']}")
        elif v == "kept":
            bad.append(f"left kept when the search ended: {c['spec']}")
        elif v == "rejected" and c.get("stage") == "profile" and faster and \
                "--min-gain" not in (c.get("reason") or ""):
            bad.append(f"rejected as not faster although faster in every trial: {c['spec']}")
    return bad


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--targets", nargs="+", default=["gelu", "row_max"])
    ap.add_argument("--strategies", nargs="+", default=["skills", "blind", "memory"])
    ap.add_argument("--budget", type=int, default=6)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    sys.path.insert(0, ROOT)
    from kltrans.optimize.search import OptimizeOptions, run

    cmd = "python3 bench/optimize_gpu.py " + " ".join(argv if argv is not None else sys.argv[1:])
    rows, docs, problems = [], [], []
    for t in args.targets:
        d = os.path.join(ROOT, "corpus", "heldout", t)
        for s in args.strategies:
            t0 = time.perf_counter()
            doc = run(OptimizeOptions(os.path.join(d, "naive.cu"), d,
                                      skills=os.path.join(ROOT, "skills"),
                                      corpus=os.path.join(ROOT, "corpus"), budget=args.budget,
                                      strategy=s, backend="cuda", trials=args.trials,
                                      progress=False))
            wall = time.perf_counter() - t0
            problems += [f"{t}/{s}: {p}" for p in check(doc)]
            gated = [c for c in doc["candidates"] if "evaluation" in c]
            per = {}
            prev = 0.0
            for c in gated:  # seconds since start at the end of each evaluation
                kind = c["verdict"] if c["verdict"] in ("accepted", "outranked") else \
                    f"rejected:{c.get('stage')}"
                per.setdefault(kind, []).append(c["seconds"] - prev)
                prev = c["seconds"]
            f = doc["final"]
            rows.append({"target": t, "strategy": s, "evaluations": f["evaluations"],
                         "accepted": f["accepted"], "rejected": f["rejected"],
                         "speedup_vs_start": f["speedup_vs_start"], "wall_s": round(wall, 1),
                         "s_per_eval": {k: round(statistics.median(v), 2) for k, v in per.items()},
                         "pipeline": [a["spec"] for a in doc["accepted"]],
                         "termination": doc["termination"]["kind"]})
            docs.append(doc)
    lines = [f"# command: {cmd}",
             f"# kltrans optimize on {docs[0]['candidates'][0].get('effect', {}).get('device', 'the GPU') if docs and docs[0]['candidates'] else 'the GPU'}"
             f", budget {args.budget}, {args.trials} paired trials per timing", "",
             f"{'target':10s} {'strategy':8s} {'evals':>5s} {'acc':>4s} {'rej':>4s} "
             f"{'speedup':>8s} {'wall s':>7s}  median s per evaluation by verdict; pipeline"]
    for r in rows:
        sp = f"{r['speedup_vs_start']:.3f}x" if r["speedup_vs_start"] else "-"
        per = ", ".join(f"{k} {v}" for k, v in r["s_per_eval"].items())
        lines.append(f"{r['target']:10s} {r['strategy']:8s} {r['evaluations']:5d} "
                     f"{r['accepted']:4d} {r['rejected']:4d} {sp:>8s} {r['wall_s']:7.1f}  "
                     f"{per}; {', '.join(p.split('{')[0] for p in r['pipeline']) or '-'}")
    lines.append("")
    lines.append("# every accepted (or outranked) candidate faster in every paired trial, every "
                 f"rejected-as-slower one not: {'yes' if not problems else 'NO'}")
    lines += [f"#   {p}" for p in problems]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        from kltrans.syntax.files import atomic_write

        os.makedirs(args.out, exist_ok=True)
        atomic_write(os.path.join(args.out, "optimize_gpu.txt"), text)
        atomic_write(os.path.join(args.out, "optimize_gpu.json"),
                     json.dumps({"command": cmd, "rows": rows, "trajectories": docs}, indent=1))
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
