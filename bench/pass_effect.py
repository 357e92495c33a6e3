"""Pass library on the GPU: every pass output gated, every optimize pass timed.

Part ``gate``: every positive pass fixture that names a workload (``// GATE: DIR``) is run
through its pass and the output is gated on the cuda backend (compile + correct at every
test size and seed of the workload).

Part ``effect``: for each optimize pass, its first gated positive fixture (input = the
kernel before the pass, output = after) is timed as a paired A/B run at a bench size
(cold L2, CUDA events, trials; kltrans.gate.run.bench): ratio = time(before) /
time(after), > 1 means the pass helped there.

    python3 bench/pass_effect.py --out DIR [--part gate|effect|all]

Writes DIR/pass_effect.txt and DIR/pass_effect.json. Needs a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

# bench sizes for the timing: the workload's own, except where the slow side (a naive
# kernel with one atomic per element, or O(n^2)) would take seconds per launch
SIZES = {
    "corpus/reduce-sum": {"n": 1 << 24},
    "corpus/histogram": {"n": 1 << 26},
    "corpus/scan": {"n": 1 << 18},
    "corpus/sgemm": {"M": 2048, "N": 2048, "K": 2048},
}


def _cases():
    from kltrans.passes.fixtures import discover

    return [c for c in discover() if not c.negative and c.gate]


def _write(d, name, data):
    p = os.path.join(d, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def part_gate(rows, lines, jobs=None):
    """Every gated fixture's output, gated through the executor (``jobs`` slots; several
    per GPU overlap compiles; correct stages share the per-GPU lock)."""
    from kltrans.gate.executor import make_executor
    from kltrans.gate.tasks import gate_task
    from kltrans.passes.fixtures import run_case

    lines.append("# gate: every gated fixture's pass output on the cuda backend (compile + correct)")
    lines.append(f"{'fixture':<58} {'workload':<20} {'result':<6} detail")
    cases = _cases()
    items = []
    for c in cases:
        out = run_case(c)
        items.append({"source": out.output.decode("utf-8"), "name": os.path.basename(c.path),
                      "workload": os.path.join(ROOT, c.gate), "backend": "cuda",
                      "stages": ("compile", "correct")})
    with make_executor(None, "cuda", jobs) as ex:
        results = ex.map(gate_task, items, gpu=False)
    for c, r in zip(cases, results):
        rel = os.path.relpath(c.path, os.path.join(ROOT, "tests", "passes"))
        ok = bool(r.get("ok"))
        fail = r.get("fail")
        detail = (f"{fail[0]}: {fail[1]}" if fail else
                  f"{r.get('checks')} checks" if r.get("checks") is not None else
                  f"{r.get('verdict')}: {r.get('reason')}")
        rows.append({"part": "gate", "fixture": rel, "workload": c.gate, "ok": ok,
                     "detail": detail, "seconds": round(r.get("seconds") or 0.0, 2)})
        lines.append(f"{rel:<58} {c.gate:<20} {'PASS' if ok else 'FAIL':<6} {detail}")


def part_effect(rows, lines):
    from kltrans.gate.run import bench
    from kltrans.passes.fixtures import run_case
    from kltrans.passes.pipeline import parse_pipeline

    lines.append("")
    lines.append("# effect: paired A/B, A = before the optimize pass, B = after; ratio = A/B "
                 "per trial (> 1: the pass helped)")
    lines.append(f"{'pass':<24} {'fixture':<44} {'size':<28} {'before ms':>10} {'after ms':>10} "
                 f"{'ratio':>7}  trials")
    seen = set()
    for c in _cases():
        ps = parse_pipeline(c.pipeline)
        if len(ps) != 1 or ps[0].kind != "optimize" or ps[0].name in seen:
            continue
        seen.add(ps[0].name)
        rel = os.path.relpath(c.path, os.path.join(ROOT, "tests", "passes"))
        out = run_case(c)
        size = SIZES.get(c.gate)
        with tempfile.TemporaryDirectory() as d:
            a = _write(d, "before_" + os.path.basename(c.path), open(c.path, "rb").read())
            b = _write(d, "after_" + os.path.basename(c.path), out.output)
            r = bench(a, b, os.path.join(ROOT, c.gate), trials=5, reps=20, bench_size=size)
        if not r.get("ok"):
            rows.append({"part": "effect", "pass": ps[0].name, "fixture": rel, "ok": False,
                         "reason": f"{r.get('verdict')}: {r.get('reason')}"})
            lines.append(f"{ps[0].name:<24} {rel:<44} failed: {r.get('verdict')}: {r.get('reason')}")
            print(lines[-1], flush=True)
            continue
        p = r["paired"]
        rows.append({"part": "effect", "pass": ps[0].name, "spec": ps[0].spec(), "fixture": rel,
                     "workload": c.gate, "size": r["size"], "ok": True,
                     "before_ms": p["a"]["ms"], "after_ms": p["b"]["ms"],
                     "ratios": p["ratios"], "ratio_median": p["ratio_median"],
                     "helped_every_trial": p["b_faster"], "device": r.get("device")})
        size_s = ",".join(f"{k}={v}" for k, v in r["size"].items())
        lines.append(f"{ps[0].name:<24} {rel:<44} {size_s:<28} {p['a']['ms']:>10.4f} "
                     f"{p['b']['ms']:>10.4f} {p['ratio_median']:>7.3f}  "
                     f"{', '.join(f'{x:.3f}' for x in p['ratios'])}")
        print(lines[-1], flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--part", choices=("gate", "effect", "all"), default="all")
    ap.add_argument("--jobs", type=int, default=None,
                    help="executor slots for the gate part (default: one per GPU)")
    args = ap.parse_args()
    from kltrans.gate.backends import gpu_available

    if not gpu_available():
        print("bench/pass_effect.py needs a GPU", file=sys.stderr)
        return 2
    jobs = f" --jobs {args.jobs}" if args.jobs else ""
    rows, lines = [], [f"# command: python3 bench/pass_effect.py --out $OUT --part {args.part}{jobs}"]
    if args.part in ("gate", "all"):
        part_gate(rows, lines, args.jobs)
    if args.part in ("effect", "all"):
        part_effect(rows, lines)
    os.makedirs(args.out, exist_ok=True)
    suffix = "" if args.part == "all" else f"_{args.part}"
    with open(os.path.join(args.out, f"pass_effect{suffix}.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out, f"pass_effect{suffix}.json"), "w") as f:
        json.dump(rows, f, indent=1)
    bad = [r for r in rows if r["part"] == "gate" and not r["ok"]]
    print(f"{sum(r['part'] == 'gate' for r in rows)} outputs gated, {len(bad)} failed; "
          f"{sum(r['part'] == 'effect' for r in rows)} optimize passes timed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
