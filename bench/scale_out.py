"""Scale-out of gate work over GPUs: the corpus benchmark with one Dask worker per GPU.

Runs ``kltrans bench-corpus`` (every variant of every workload: compile, correct at every
test size and seed, profile at the bench size; plus the vendor timing) through
``--cluster local:N`` for each N of ``--workers`` (default 1,2: one GPU, then two), and
records for each N:

* the wall time of the benchmark (cluster start-up reported apart);
* where each task ran (the CUDA_VISIBLE_DEVICES of its worker) and how many seconds of
  work each GPU did, so "both GPUs busy" is measured, not assumed;
* GPU utilization sampled with ``nvidia-smi`` every 0.5 s while it runs (when present);
* the verdicts, which must be the same for every N;

then the speed-up over N=1. Kernels are compiled once before any timed run (a warm NVRTC
cache for every N). Writes ``scale_out.txt`` and ``scale_out.json`` (the command at the
top) under ``--out``.

Usage (a machine with 2 GPUs):   python bench/scale_out.py --out bench/results
Try the CPU path anywhere:       python bench/scale_out.py --backend cpu \\
                                     --corpus tests/data/workloads --out /tmp/so
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class UtilSampler:
    """``nvidia-smi`` GPU utilization every ``period`` seconds, in a thread."""

    def __init__(self, period: float = 0.5):
        self.period = period
        self.samples: list = []  # (seconds since start, {gpu index: utilization %})
        self.smi = shutil.which("nvidia-smi")
        self._stop = threading.Event()
        self._t = None

    def __enter__(self):
        if self.smi:
            self.t0 = time.perf_counter()
            self._t = threading.Thread(target=self._run, daemon=True)
            self._t.start()
        return self

    def _run(self):
        while not self._stop.is_set():
            try:
                p = subprocess.run([self.smi, "--query-gpu=index,utilization.gpu",
                                    "--format=csv,noheader,nounits"],
                                   capture_output=True, text=True, timeout=10)
                util = {}
                for ln in p.stdout.splitlines():
                    parts = [x.strip() for x in ln.split(",")]
                    if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit():
                        util[parts[0]] = int(parts[1])
                if util:
                    self.samples.append((round(time.perf_counter() - self.t0, 2), util))
            except (OSError, subprocess.SubprocessError):
                pass
            self._stop.wait(self.period)

    def __exit__(self, *exc):
        self._stop.set()
        if self._t is not None:
            self._t.join(15)
        return False

    def summary(self) -> dict:
        gpus = sorted({g for _, u in self.samples for g in u}, key=int)
        out = {}
        for g in gpus:
            vals = [u[g] for _, u in self.samples if g in u]
            out[g] = {"samples": len(vals), "busy_fraction": sum(v > 0 for v in vals) / len(vals),
                      "mean_util": sum(vals) / len(vals), "max_util": max(vals)}
        return out


def warm_compile(dirs: list, backend: str) -> int:
    """Compile every variant once (NVRTC disk cache), so no timed run pays for it."""
    from kltrans.gate.corpus_bench import workload_items
    from kltrans.gate.run import gate

    n = 0
    for d in dirs:
        for it in workload_items(d, backend, vendor=False):
            gate(it["path"], it["workload"], it["kernel"], backend, ("compile",))
            n += 1
    return n


def one_run(n: int, corpus: str, only, backend: str) -> dict:
    from kltrans.gate.corpus_bench import run
    from kltrans.gate.executor import make_executor

    t0 = time.perf_counter()
    ex = make_executor(f"local:{n}", backend)
    startup = time.perf_counter() - t0
    try:
        with UtilSampler() as smp:
            t1 = time.perf_counter()
            rows = run(corpus, None, False, backend, only, executor=ex)
            wall = time.perf_counter() - t1
    finally:
        ex.close()
    per_dev: dict = {}
    tasks = 0
    for r in rows:
        for e in r["variants"].values():
            dev = str((e.get("placement") or {}).get("cuda_visible_devices"))
            d = per_dev.setdefault(dev, {"tasks": 0, "seconds": 0.0})
            d["tasks"] += 1
            d["seconds"] += e.get("seconds", 0.0)
            tasks += 1
    verdicts = {f"{r['workload']}/{v}": {k: e.get(k) for k in ("compile", "correct", "profile")}
                for r in rows for v, e in r["variants"].items()}  # raw: the profile holds times
    return {"workers": n, "executor": f"local:{n}", "startup_s": round(startup, 2),
            "wall_s": round(wall, 2), "tasks": tasks, "per_device": per_dev,
            "utilization": smp.summary(), "verdicts": verdicts, "rows": rows}


def stage_verdicts(run: dict) -> dict:
    """The pass/fail verdict of every stage of every variant (times left out: they differ
    from run to run, so they are not part of "the same verdicts")."""
    out = {}
    for key, v in run["verdicts"].items():
        prof = v.get("profile")
        if isinstance(prof, dict):  # a profile result: it ran; pass when it has a time
            prof = "pass" if prof.get("ms") else "fail"
        out[key] = {"compile": v.get("compile"), "correct": v.get("correct"), "profile": prof}
    return out


def same_verdicts(runs: list) -> bool:
    return all(stage_verdicts(r) == stage_verdicts(runs[0]) for r in runs)


def render(runs: list, cmdline: str, backend: str, corpus: str, when: str | None = None) -> str:
    base = runs[0]["wall_s"]
    lines = [f"# command: {cmdline}",
             f"# kltrans scale-out — {when or _now()}, backend {backend}, corpus {corpus}",
             "# each N: bench-corpus through a Dask LocalCluster of N workers (one per GPU, "
             "resource GPU=1); wall = the benchmark itself (start-up apart); kernels "
             "precompiled",
             f"{'workers':>7}{'start s':>9}{'wall s':>9}{'speed-up':>10}{'tasks':>7}  "
             f"per device (tasks, task-seconds)  nvidia-smi busy fraction / mean util"]
    for r in runs:
        per = ", ".join(f"{d}: {v['tasks']} / {v['seconds']:.1f} s"
                        for d, v in sorted(r["per_device"].items()))
        util = ", ".join(f"gpu{g}: {u['busy_fraction']:.2f} / {u['mean_util']:.0f}%"
                         for g, u in r["utilization"].items()) or "-"
        lines.append(f"{r['workers']:>7}{r['startup_s']:>9.1f}{r['wall_s']:>9.1f}"
                     f"{base / r['wall_s']:>9.2f}x{r['tasks']:>7}  {per}  {util}")
    lines.append(f"# verdicts (compile, correct, profile pass/fail of every variant) identical "
                 f"for every N: {'yes' if same_verdicts(runs) else 'NO'}")
    return "\n".join(lines)


def _now() -> str:
    return (f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M UTC}, "
            f"{platform.node()}, {os.cpu_count()} cores")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--corpus", default=os.path.join(ROOT, "corpus"), metavar="DIR")
    ap.add_argument("--only", nargs="*", metavar="NAME", help="only these workload folders")
    ap.add_argument("--workers", default="1,2", metavar="N,M,...",
                    help="worker counts to compare (the first is the baseline)")
    ap.add_argument("--out", metavar="DIR", help="write scale_out.txt and .json here")
    ap.add_argument("--no-warmup", action="store_true", help="do not precompile")
    ap.add_argument("--render", metavar="JSON",
                    help="print the table of an earlier run from its scale_out.json (no run)")
    args = ap.parse_args(argv)
    if args.render:
        doc = json.load(open(args.render, encoding="utf-8"))
        print(render(doc["runs"], doc["command"], doc["backend"],
                     os.path.relpath(doc["corpus"], ROOT) if os.path.isabs(doc["corpus"])
                     else doc["corpus"], doc.get("when", "(time not recorded)")))
        return 0
    try:
        counts = [int(x) for x in args.workers.split(",") if x.strip()]
    except ValueError:
        ap.error(f"--workers {args.workers!r}: expected numbers, e.g. 1,2")
    if not counts or min(counts) < 1:
        ap.error("--workers: each count must be >= 1")
    if not os.path.isdir(args.corpus):
        ap.error(f"--corpus {args.corpus}: not a directory")
    from kltrans.gate.corpus_bench import workload_dirs
    from kltrans.gate.executor import ExecutorError

    dirs = [d for d in workload_dirs(args.corpus, False)
            if not args.only or os.path.basename(d) in args.only]
    if not dirs:
        ap.error(f"{args.corpus}: no workload folders (with workload.yaml) selected")
    cmdline = "python " + " ".join(shlex.quote(a) for a in
                                   [os.path.relpath(os.path.abspath(__file__), ROOT)]
                                   + (argv if argv is not None else sys.argv[1:]))
    warmed = 0 if args.no_warmup else warm_compile(dirs, args.backend)
    runs = []
    for n in counts:
        print(f"scale_out: local:{n} ...", file=sys.stderr, flush=True)
        try:
            runs.append(one_run(n, args.corpus, args.only, args.backend))
        except ExecutorError as e:
            print(f"scale_out: error: {e}", file=sys.stderr)
            return 2
    text = render(runs, cmdline, args.backend, os.path.relpath(args.corpus, ROOT))
    print(text)
    if args.out:
        from kltrans.syntax.files import atomic_write

        os.makedirs(args.out, exist_ok=True)
        doc = {"command": cmdline, "when": _now(), "backend": args.backend, "corpus": args.corpus,
               "precompiled_variants": warmed,
               "speedup": {r["workers"]: runs[0]["wall_s"] / r["wall_s"] for r in runs},
               "runs": runs}
        atomic_write(os.path.join(args.out, "scale_out.json"), json.dumps(doc, indent=2))
        atomic_write(os.path.join(args.out, "scale_out.txt"), text + "\n")
    return 0 if same_verdicts(runs) else 1


if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    sys.exit(main())
