"""The planted-offender suite on both backends, side by side.

Each offender in tests/data/workloads/scale/offenders (and the correct scale.cu) goes
through the gate's correct stage on the cuda backend and on the cpu emulation backend;
the verdicts (pass / rejected) must agree. The failure kinds may differ where the two
machines differ (e.g. a race reads stale shared memory on the GPU and poisoned shared
memory on the emulator: "mismatch" vs "unwritten"); both are rejections.

Usage (on a machine with a GPU and g++): python3 bench/offenders_cpu_vs_gpu.py --out DIR
"""

from __future__ import annotations

import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCALE = os.path.join(ROOT, "tests", "data", "workloads", "scale")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--backends", default="cuda,cpu")
    ap.add_argument("--hang-timeout", type=float, default=20.0)
    args = ap.parse_args(argv)
    sys.path.insert(0, ROOT)
    from kltrans.gate.run import gate

    files = ["scale.cu"] + sorted(f"offenders/{f}" for f in os.listdir(os.path.join(SCALE, "offenders")))
    backends = args.backends.split(",")
    res = {}
    for f in files:
        for be in backends:
            timeout = args.hang_timeout if "hangs" in f else 300.0
            rep = gate(os.path.join(SCALE, f), SCALE, backend=be, stages=["compile", "correct"],
                       timeout_s=timeout)
            fail = next((s for s in rep.stages if s.status == "fail"), None)
            kind = "pass" if fail is None else ("timeout" if fail.reason.startswith("timeout")
                                                else (fail.data.get("kind") or "fail"))
            res.setdefault(f, {})[be] = {"verdict": "pass" if fail is None else "rejected",
                                         "kind": kind, "reason": "" if fail is None else fail.reason}
    lines = [f"{'candidate':<30}" + "".join(f"{b:<28}" for b in backends) + "same verdict", "-" * 100]
    agree = True
    for f, r in res.items():
        same = len({r[b]["verdict"] for b in backends}) == 1
        agree &= same
        lines.append(f"{f:<30}" + "".join(f"{r[b]['verdict'] + ' (' + r[b]['kind'] + ')':<28}"
                                          for b in backends) + ("yes" if same else "NO"))
    lines.append(f"verdicts agree on all {len(res)} candidates: {agree}")
    table = "\n".join(lines)
    print(table)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "offenders_cpu_vs_gpu.json"), "w") as fh:
            json.dump(res, fh, indent=2)
        with open(os.path.join(args.out, "offenders_cpu_vs_gpu.txt"), "w") as fh:
            fh.write(f"# command: python3 bench/offenders_cpu_vs_gpu.py --backends {args.backends}\n{table}\n")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
