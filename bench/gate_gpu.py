"""The gate on a real GPU: planted offenders, fault/hang recovery, and a paired bench.

Runs, in one process tree (each candidate in its own worker):

1. the correct reference kernel ``scale.cu``: compile, correct (every size and seed),
   profile;
2. every planted offender in ``tests/data/workloads/scale/offenders``: each must be
   rejected by the correct stage with the expected kind of failure; ``hangs.cu`` and
   ``faults.cu`` come before a last run of ``scale.cu``, which must still pass (a hang or
   a fault costs only its own worker);
3. ``kltrans bench`` of the scalar vs the float4 copy kernel (paired, interleaved trials).

Usage (on the GPU machine): python3 bench/gate_gpu.py --out DIR
Prints a table last; writes gate_gpu.json (and the table) under DIR.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCALE = os.path.join(ROOT, "tests", "data", "workloads", "scale")
COPY = os.path.join(ROOT, "tests", "data", "workloads", "copy")

# offender -> the failure kind the correct stage must report
EXPECTED = {
    "unwritten.cu": "unwritten",
    "zeros.cu": "mismatch",
    "modifies_input.cu": "input-modified",
    "out_of_bounds.cu": "out-of-bounds",
    "caches_output.cu": "unwritten",
    "divisible_by_4.cu": "unwritten",
    "race.cu": "mismatch",
    "hangs.cu": "timeout",
    "faults.cu": "fault",
}


def kind_of(report) -> tuple[str, str]:
    for s in report.stages:
        if s.status == "fail":
            kind = s.data.get("kind") or ""
            if s.reason.startswith("timeout"):
                kind = "timeout"
            return kind, s.reason
    return "pass", ""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=None)
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--hang-timeout", type=float, default=30.0)
    args = ap.parse_args(argv)
    sys.path.insert(0, ROOT)
    from kltrans.gate.run import bench, gate

    rows = []
    results = {}

    def run(label, path, stages, timeout=300.0, expect=None):
        t0 = time.perf_counter()
        rep = gate(path, SCALE, backend=args.backend, stages=stages, timeout_s=timeout)
        kind, reason = kind_of(rep)
        ok = (kind == "pass") if expect is None else (kind == expect or
                                                      (expect == "fault" and "ILLEGAL" in reason))
        rows.append((label, expect or "pass", kind, "yes" if ok else "NO", time.perf_counter() - t0,
                     reason[:110]))
        results[label] = rep.to_json()
        return rep

    run("scale.cu (reference)", os.path.join(SCALE, "scale.cu"),
        ["compile", "correct"] + (["profile"] if args.backend == "cuda" else []))
    for name, kind in EXPECTED.items():
        if args.backend == "cpu" and name == "faults.cu":
            continue
        run(name, os.path.join(SCALE, "offenders", name), ["compile", "correct"],
            timeout=args.hang_timeout if name == "hangs.cu" else 300.0, expect=kind)
    run("scale.cu after hang+fault", os.path.join(SCALE, "scale.cu"), ["compile", "correct"])

    lines = [f"{'candidate':<28}{'expected':<16}{'got':<16}{'ok':<5}{'s':>7}  reason",
             "-" * 120]
    for label, exp, got, ok, secs, reason in rows:
        lines.append(f"{label:<28}{exp:<16}{got:<16}{ok:<5}{secs:7.1f}  {reason}")
    prof = results["scale.cu (reference)"]["stages"]
    for s in prof:
        if s["stage"] == "profile" and s.get("profile"):
            p = s["profile"]
            lines.append(f"scale.cu profile at n={p['size']['n']}: {p['ms']:.4f} ms, "
                         f"{p['gbps']:.0f} GB/s, {100 * (p['roofline'] or 0):.0f}% of copy bandwidth, "
                         f"trials {p['trials']}")
    if args.backend == "cuda":
        b = bench(os.path.join(COPY, "copy_scalar.cu"), os.path.join(COPY, "copy_vec4.cu"), COPY)
        results["bench copy_scalar vs copy_vec4"] = b
        if b.get("ok"):
            p = b["paired"]
            lines.append(f"bench copy n={b['size']['n']} on {b['device']}: scalar {p['a']['ms']:.4f} ms "
                         f"({p['a']['gbps']:.0f} GB/s), float4 {p['b']['ms']:.4f} ms "
                         f"({p['b']['gbps']:.0f} GB/s); ratio per trial "
                         f"{', '.join(f'{r:.3f}' for r in p['ratios'])}; float4 faster in every "
                         f"trial: {p['b_faster']}; copy bandwidth {p['copy_bandwidth_gbps']:.0f} GB/s")
        else:
            lines.append(f"bench failed: {b}")
    table = "\n".join(lines)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "gate_gpu.json"), "w") as f:
            json.dump(results, f, indent=2)
        with open(os.path.join(args.out, "gate_gpu.txt"), "w") as f:
            f.write(f"# command: python3 bench/gate_gpu.py --backend {args.backend} --out DIR\n")
            f.write(table + "\n")
    print(table)
    return 0 if all(r[3] == "yes" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
