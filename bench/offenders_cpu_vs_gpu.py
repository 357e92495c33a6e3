"""The planted-offender suite on both backends, side by side.

Each offender in tests/data/workloads/scale/offenders (and the correct scale.cu) goes
through the gate's correct stage on the cuda backend and on the cpu emulation backend;
the verdicts (pass / rejected) must agree. The failure kinds may differ where the two
machines differ (e.g. a race reads stale shared memory on the GPU and poisoned shared
memory on the emulator: "mismatch" vs "unwritten"); both are rejections.

Then the hostile kernels of tests/data/workloads/{scale,copy,rowsoftmax}/hostile and the launches
over a device limit of tests/data/workloads/scale/limits (gate hardening): each
says what the gate must answer (``// expect:``: "pass", a text of the correct stage's
reason, or "compile: " and a text of the compile stage's reason), and where a GPU answers
otherwise by design, ``// expect-gpu:`` (e.g. a read past a buffer that lands in mapped
GPU memory). Each backend's answer is checked against its expectation.

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
    hostile = sorted(f"{d}/{f}" for d in ("hostile", "limits", "../copy/hostile",
                                                   "../rowsoftmax/hostile")
                     for f in os.listdir(os.path.join(SCALE, d)))
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
    lines += ["", f"{'hostile kernel':<44}" + "".join(f"{b:<34}" for b in backends)
              + "as expected", "-" * 118]
    met_all = True
    for f in hostile:
        text = open(os.path.join(SCALE, f)).read()
        row, met = {}, True
        for be in backends:
            want = _expect(text, be)
            path = os.path.normpath(os.path.join(SCALE, f))
            rep = gate(path, os.path.dirname(os.path.dirname(path)) if "hostile" in f else SCALE,
                       backend=be, stages=["compile", "correct"], timeout_s=300.0)
            fail = next((s for s in rep.stages if s.status == "fail"), None)
            got = "pass" if fail is None else f"{fail.stage}: {fail.reason}"
            ok = got == "pass" if want == "pass" else (
                fail is not None and (want[9:] in got if want.startswith("compile: ")
                                      else fail.stage == "correct" and want in fail.reason))
            row[be] = {"expect": want, "got": got[:300], "as_expected": ok}
            met &= ok
        res[f] = row
        met_all &= met
        lines.append(f"{f:<44}" + "".join(f"{row[b]['got'][:32]:<34}" for b in backends)
                     + ("yes" if met else "NO"))
        if f.startswith("limits/") and "cuda" in backends:
            # past the compile stage's check: what the GPU itself says of the launch
            row["cuda_without_check"] = _launch_anyway(os.path.join(SCALE, f))
            lines.append(f"{'  launched anyway on the GPU:':<44}"
                         f"{row['cuda_without_check'][:70]}")
    lines.append(f"hostile kernels answered as expected on every backend: {met_all}")
    agree &= met_all
    table = "\n".join(lines)
    print(table)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "offenders_cpu_vs_gpu.json"), "w") as fh:
            json.dump(res, fh, indent=2)
        with open(os.path.join(args.out, "offenders_cpu_vs_gpu.txt"), "w") as fh:
            fh.write(f"# command: python3 bench/offenders_cpu_vs_gpu.py --backends {args.backends}\n{table}\n")
    return 0 if agree else 1


def _launch_anyway(path: str) -> str:
    """The GPU correct stage of a kernel over a device limit, run as a worker job (the
    compile stage's limits check skipped): the launch's own failure."""
    from kltrans.gate.worker import run_job

    job = {"kind": "gate", "source": open(path).read(), "path": path, "kernel": "scale",
           "name_expression": None, "workload": SCALE, "backend": "cuda",
           "stages": ["correct"], "sizes": [{"n": 1000}], "seeds": [0]}
    out = run_job(job, 300)
    if out.get("verdict"):
        return f"{out['verdict']}: {out.get('reason', '')}"
    c = out.get("correct") or {}
    return "pass" if c.get("ok") else (c.get("failure") or {}).get("reason", "?")


def _expect(text: str, backend: str) -> str:
    import re

    gpu = re.search(r"^// expect-gpu: (.+)$", text, re.M)
    if backend == "cuda" and gpu:
        return gpu.group(1).strip()
    return re.search(r"^// expect: (.+)$", text, re.M).group(1).strip()


if __name__ == "__main__":
    sys.exit(main())
