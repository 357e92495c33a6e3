"""CPU gate jobs through the fork server against fresh worker interpreters, side by side.

For each workload, the correct stage of its naive kernel at the workload's test sizes
(the gate job the walk, the optimizer and the experiment send on the CPU backend) is run
--runs times in each mode, alternating (server, fresh, server, fresh, ...), through
``kltrans.gate.worker.run_job``; the build cache is warm in both (the first job of each
workload, not counted, builds it). Reported: the median wall seconds of a job in each mode
and their ratio, per workload and as the geometric mean.

The report is written atomically to bench/results/forkserver_cpu.txt with the command at
the top. Usage: python bench/forkserver_cpu.py [--runs 9] [--out FILE]
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

WORKLOADS = ("corpus/heldout/gelu", "corpus/heldout/row_max", "corpus/heldout/rmsnorm",
             "corpus/reduce-sum")


def job_for(wl: str) -> dict:
    from kltrans.gate.run import pick_kernel
    from kltrans.syntax.unit import load
    from kltrans.workload.spec import load_workload

    path = os.path.join(ROOT, wl, "naive.cu")
    [u] = load(path)
    name, ne = pick_kernel(load_workload(os.path.join(ROOT, wl)), path, u, None)
    return {"kind": "gate", "source": open(path).read(), "path": path, "kernel": name,
            "name_expression": ne, "workload": os.path.join(ROOT, wl), "backend": "cpu",
            "stages": ["correct"], "sizes": None}


def timed(job: dict, mode: str) -> float:
    from kltrans.gate.worker import run_job

    os.environ["KLTRANS_GATE_FORKSERVER"] = mode
    t = time.perf_counter()
    out = run_job(job, 600)
    dt = time.perf_counter() - t
    if not out.get("ok"):
        raise SystemExit(f"{job['path']}: the job failed in mode {mode}: {out}")
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results", "forkserver_cpu.txt"))
    a = ap.parse_args()
    from kltrans.syntax.files import atomic_write

    rows, ratios = [], []
    for wl in WORKLOADS:
        job = job_for(wl)
        timed(job, "1"), timed(job, "0")  # builds the kernel once, starts the server
        t = {"1": [], "0": []}
        for _ in range(a.runs):
            for mode in ("1", "0"):
                t[mode].append(timed(job, mode))
        srv, fresh = statistics.median(t["1"]), statistics.median(t["0"])
        ratios.append(fresh / srv)
        rows.append(f"{wl:<28} {srv:8.3f} {fresh:8.3f} {fresh / srv:7.2f}x")
    geo = math.exp(sum(map(math.log, ratios)) / len(ratios))
    lines = [f"# command: python bench/forkserver_cpu.py --runs {a.runs}",
             f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, "
             f"{platform.node()}, {os.cpu_count()} cores, Python {platform.python_version()}",
             "# median wall seconds of one CPU gate job (correct stage, every test size), "
             f"{a.runs} runs per mode, alternating",
             f"{'workload':<28} {'server':>8} {'fresh':>8} {'fresh/server':>8}",
             *rows, f"geometric mean of fresh/server: {geo:.2f}x"]
    atomic_write(a.out, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
