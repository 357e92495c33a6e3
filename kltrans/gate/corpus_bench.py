"""``kltrans bench-corpus``: naive, expert and vendor times for every corpus workload.

For each workload folder (and, with ``--heldout``, each held-out instance): every kernel
variant goes through the gate (compile, correct at every test size and seed, profile at
the bench size with cold L2 and trials), and the workload's ``vendor`` torch expression
is timed with the same protocol. The table reports ms, GB/s or TFLOP/s, the fraction of
the measured copy bandwidth, and whether the expert meets the workload's ``bar``
(``roofline: 0.85`` for memory-bound work, ``vendor_fraction: 0.7`` for sgemm).
"""

from __future__ import annotations

import json
import os
import sys
import time


def workload_dirs(root: str, heldout: bool) -> list[str]:
    out = []
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        if os.path.isfile(os.path.join(d, "workload.yaml")):
            out.append(d)
    if heldout:
        h = os.path.join(root, "heldout")
        if os.path.isdir(h):
            out += workload_dirs(h, False)
    return out


def bench_workload(path: str, backend: str = "cuda", variants=None, vendor: bool = True,
                   timeout_s: float = 600.0) -> dict:
    from kltrans.gate.run import gate
    from kltrans.gate.worker import run_job
    from kltrans.workload.spec import load_workload

    wl = load_workload(path)
    row = {"workload": wl.name, "path": path, "bench_size": wl.bench_size, "bar": wl.bar,
           "variants": {}}
    stages = ["compile", "correct"] + (["profile"] if backend == "cuda" else [])
    for v, k in wl.kernels.items():
        if variants and v not in variants:
            continue
        t0 = time.perf_counter()
        rep = gate(wl.kernel_path(v), wl.path, kernel=k["kernel"], backend=backend,
                   stages=stages, timeout_s=timeout_s)
        entry = {"ok": rep.ok, "seconds": time.perf_counter() - t0}
        for s in rep.stages:
            entry[s.stage] = s.status
            if s.status == "fail":
                entry["reason"] = s.reason
            if s.stage == "profile" and s.data.get("profile"):
                entry["profile"] = s.data["profile"]
            if s.stage == "compile" and s.data.get("resources"):
                entry["resources"] = s.data["resources"]
            if s.stage == "correct" and s.data.get("correct"):
                entry["checks"] = s.data["correct"].get("checks")
        row["variants"][v] = entry
    if vendor and backend == "cuda" and wl.vendor:
        out = run_job({"kind": "vendor", "workload": wl.path, "backend": "cuda"}, timeout_s)
        row["vendor"] = out.get("vendor") or {"error": out.get("reason")}
        if out.get("vendor"):
            v = out["vendor"]
            f = wl.flops(dict(wl.bench_size))
            b = wl.bytes_moved(dict(wl.bench_size))
            v["tflops"] = f / (v["ms"] / 1e3) / 1e12 if f else None
            v["gbps"] = b / (v["ms"] / 1e3) / 1e9 if b else None
    row["bar_met"] = _bar_met(row)
    return row


def _bar_met(row) -> bool | None:
    bar = row.get("bar") or {}
    ex = row["variants"].get("expert", {}).get("profile")
    if not bar or not ex:
        return None
    ok = True
    if "roofline" in bar:
        ok &= (ex.get("roofline") or 0) >= bar["roofline"]
    if "vendor_fraction" in bar:
        v = row.get("vendor") or {}
        ok &= bool(v.get("ms")) and (v["ms"] / ex["ms"]) >= bar["vendor_fraction"]
    return bool(ok)


def _f(v, fmt: str) -> str:
    return "" if v is None else format(v, fmt)


def render(rows: list) -> str:
    if not any(e.get("profile") for r in rows for e in r["variants"].values()):
        return render_correctness(rows)
    head = (f"{'workload':<32}{'variant':<8}{'correct':<9}{'ms':>10}{'GB/s':>8}{'TFLOP/s':>9}"
            f"{'%copy':>7}{'vendor ms':>11}{'x vendor':>9}  bar")
    lines = [head, "-" * len(head)]
    for r in rows:
        v = r.get("vendor") or {}
        for i, (name, e) in enumerate(r["variants"].items()):
            p = e.get("profile") or {}
            ms = p.get("ms")
            xv = (v["ms"] / ms) if (ms and v.get("ms")) else None
            bar = ""
            if name == "expert" and r.get("bar_met") is not None:
                bar = "met" if r["bar_met"] else "NOT met"
            roof = None if not p.get("roofline") else 100 * p["roofline"]
            vms = v.get("ms") if i == 0 else None
            lines.append(
                f"{r['workload'] if i == 0 else '':<32}{name:<8}{e.get('correct', '-'):<9}"
                f"{_f(ms, '.4f'):>10}{_f(p.get('gbps'), '.0f'):>8}{_f(p.get('tflops'), '.2f'):>9}"
                f"{_f(roof, '.0f'):>6}{'%' if roof is not None else ' '}{_f(vms, '.4f'):>11}"
                f"{_f(xv, '.2f'):>9}  {bar}")
            if e.get("reason"):
                lines.append(f"{'':<40}{e['reason'][:150]}")
            if p.get("size") and p["size"] != r.get("bench_size"):
                sz = ", ".join(f"{k}={v}" for k, v in p["size"].items())
                lines.append(f"{'':<40}(timed at its own bench size {sz})")
    return "\n".join(lines)


def render_correctness(rows: list) -> str:
    """The table without timings (CPU backend: correctness only)."""
    head = f"{'workload':<32}{'variant':<8}{'compile':<9}{'correct':<9}{'checks':>7}{'s':>7}  reason"
    lines = [head, "-" * len(head)]
    for r in rows:
        for i, (name, e) in enumerate(r["variants"].items()):
            lines.append(f"{r['workload'] if i == 0 else '':<32}{name:<8}{e.get('compile', '-'):<9}"
                         f"{e.get('correct', '-'):<9}{e.get('checks', ''):>7}{e.get('seconds', 0):7.1f}"
                         f"  {e.get('reason', '')[:120]}")
    n = sum(len(r["variants"]) for r in rows)
    bad = sum(1 for r in rows for e in r["variants"].values() if not e.get("ok"))
    lines.append(f"{n - bad} passed, {bad} failed")
    return "\n".join(lines)


def run(root: str, out_dir: str | None, heldout: bool = False, backend: str = "cuda",
        only=None) -> list:
    rows = []
    for d in workload_dirs(root, heldout):
        if only and os.path.basename(d) not in only:
            continue
        rows.append(bench_workload(d, backend))
        for name, e in rows[-1]["variants"].items():
            print(f"{rows[-1]['workload']}: {name}: {'ok' if e.get('ok') else 'FAILED'} "
                  f"({e.get('seconds', 0):.1f} s)", file=sys.stderr, flush=True)
        if out_dir:  # written after every workload: an interrupted run keeps what it measured
            from kltrans.syntax.files import atomic_write

            os.makedirs(out_dir, exist_ok=True)
            atomic_write(os.path.join(out_dir, "bench_corpus.json"), json.dumps(rows, indent=2))
            atomic_write(os.path.join(out_dir, "bench_corpus.txt"), render(rows) + "\n")
    return rows
