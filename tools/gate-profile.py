"""Where one gate job's time goes: the worker's work for a corpus kernel, in this process,
under cProfile. Prints the worker's phases and the functions with the most cumulative time.

    python3 tools/gate-profile.py corpus/layernorm [--kernel expert] [--backend cuda|cpu] [-n 25]
"""
from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--kernel", default="expert")
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("-n", type=int, default=25)
    a = ap.parse_args()
    from kltrans.gate.worker import _work
    from kltrans.workload.spec import load_workload

    wl = load_workload(a.workload)
    k = wl.kernels[a.kernel]
    path = os.path.join(wl.path, k["file"] if isinstance(k, dict) else k.file)
    kname = k["kernel"] if isinstance(k, dict) else k.kernel
    job = {"kind": "gate", "source": open(path).read(), "path": path, "kernel": kname,
           "name_expression": None, "workload": wl.path, "backend": a.backend,
           "arch": "sm_90", "stages": ["correct"], "sizes": None, "seeds": None,
           "bench_size": None}
    for run in (1, 2):  # the second run: what a warm process (compile cache filled) costs
        phases: dict = {}
        prof = cProfile.Profile()
        t0 = time.perf_counter()
        prof.enable()
        out = _work(dict(job), phases)
        prof.disable()
        print(f"run {run}: {time.perf_counter() - t0:.2f} s, ok={out.get('ok')}, "
              f"checks={out.get('correct', {}).get('checks')}, phases="
              + ", ".join(f"{k} {v:.2f}" for k, v in phases.items()))
    s = io.StringIO()
    pstats.Stats(prof, stream=s).sort_stats("cumulative").print_stats(a.n)
    print(s.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
