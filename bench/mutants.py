"""Mutation suite: plant one known bug at a time in every corpus expert and gate it.

Every mutant of every ``corpus/*/expert.cu`` (kltrans.gate.mutants: delete-barrier,
bound-off-by-one, shuffle-offset, shuffle-divergent, smem-index, remove-bounds-check) is
written to a temporary folder (with the expert's folder-local includes, so the purity
check passes) and gated with the compile and correct stages on the chosen backend, in a
thread pool (each gate runs its own worker subprocess). Verdicts:

  uncompilable   NVRTC (sm_90) or the purity check rejects the mutant: not counted
  equivalent     NVRTC makes the expert's very cubin (trivial compiler equivalence): the
                 GPU runs the expert itself, so no gate can kill it; not gated, not counted
  rejected       the correct stage fails (the gate kills the mutant)
  survived       the correct stage passes
  error          no verdict: the harness or the backend failed (driver, emulator build),
                 or the unmutated expert itself fails the gate (the baseline, gated
                 first); never counted as a kill, and the command exits with status 1

Writes ``DIR/mutants_<backend>.json`` (``{id: {operator, line, description, sha, verdict,
kind, reason, seconds}}``, ids in generation order; ``sha`` is a hash of the mutant's
source, so a verdict saved before an expert changed can be told stale) atomically, then
prints the survivors, a per-expert table and the per-operator summary table last.

Usage: python bench/mutants.py --backend cpu|cuda --out DIR [--jobs N] [--timeout S]
       [--workloads softmax,scan] [--operators delete-barrier,...]
Needs only kltrans (with its tree-sitter and NVRTC wheels), numpy and the standard library.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)


def main(argv=None) -> int:
    from kltrans.gate.mutants import OPERATORS, corpus_jobs, format_summary, gate_mutants

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", choices=("cpu", "cuda"), required=True)
    ap.add_argument("--out", required=True, help="folder for mutants_<backend>.json")
    ap.add_argument("--jobs", type=int, default=None,
                    help="parallel gates (default: CPU count for cpu, 4 for cuda)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds per gate (default: 120 for cpu, 60 for cuda, where a "
                         "mutant that hangs costs this much device time)")
    ap.add_argument("--corpus", default=os.path.join(ROOT, "corpus"))
    ap.add_argument("--workloads", default=None, help="comma-separated subset")
    ap.add_argument("--operators", default=None, help="comma-separated subset")
    ap.add_argument("--no-equivalence", action="store_true",
                    help="gate mutants whose cubin equals the expert's too")
    ap.add_argument("--quiet", action="store_true", help="no per-mutant progress lines")
    a = ap.parse_args(argv)

    jobs_n = a.jobs or ((os.cpu_count() or 2) if a.backend == "cpu" else 4)
    a.timeout = a.timeout or (120.0 if a.backend == "cpu" else 60.0)
    wls = a.workloads.split(",") if a.workloads else None
    ops = set(a.operators.split(",")) if a.operators else set(OPERATORS)
    jobs = [j for j in corpus_jobs(a.corpus, wls) if j[0].operator in ops]
    print(f"{len(jobs)} mutants of {len({j[1] for j in jobs})} experts; backend {a.backend}, "
          f"{jobs_n} parallel gates, timeout {a.timeout:g} s", flush=True)
    t0 = time.perf_counter()
    count = [0]

    def progress(m, rec):
        count[0] += 1
        if not a.quiet:
            print(f"[{count[0]:>3}/{len(jobs)}] {rec['verdict']:<12} {rec['seconds']:6.1f} s  "
                  f"{m.id}  {rec.get('kind') or ''}", flush=True)

    baseline: dict = {}
    results = gate_mutants(jobs, backend=a.backend, workers=jobs_n, timeout_s=a.timeout,
                           progress=progress, equivalence=not a.no_equivalence,
                           baseline=baseline)
    bad = {kf: b for kf, b in baseline.items() if not b["ok"]}
    for kf, b in bad.items():
        print(f"\nBASELINE FAILS: {os.path.relpath(kf, ROOT)}: {b['reason']} (its mutants "
              f"were not gated)")
    wall = time.perf_counter() - t0
    os.makedirs(a.out, exist_ok=True)
    out = os.path.join(a.out, f"mutants_{a.backend}.json")
    fd, tmp = tempfile.mkstemp(dir=a.out, prefix=".mutants-")
    with os.fdopen(fd, "w") as fh:
        json.dump(results, fh, indent=1)
        fh.write("\n")
    os.replace(tmp, out)

    surv = [(k, r) for k, r in results.items() if r["verdict"] == "survived"]
    errs = [(k, r) for k, r in results.items() if r["verdict"] == "error"]
    if surv:
        print(f"\nsurvivors ({len(surv)}):")
        for k, r in surv:
            print(f"  {k}: {r['description']}")
    if errs:
        print(f"\nharness errors ({len(errs)}):")
        for k, r in errs:
            print(f"  {k}: {r['kind']}: {r['reason']}")
    print(f"\nwrote {out} ({wall:.0f} s wall, {sum(r['seconds'] for r in results.values()):.0f} "
          f"s of gates)\n")
    print(format_summary(results, by="expert"))
    print()
    print(format_summary(results))
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
