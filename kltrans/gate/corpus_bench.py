"""``kltrans bench-corpus``: naive, expert and vendor times for every corpus workload.

For each workload folder (and, with ``--heldout``, each held-out instance): every kernel
variant goes through the gate (compile, correct at every test size and seed, profile at
the bench size with cold L2 and trials), and the workload's ``vendor`` torch expression
is timed with the same protocol. The table reports ms, GB/s or TFLOP/s, the fraction of
the measured copy bandwidth, and whether the expert meets the workload's ``bar``
(``roofline: 0.85`` for memory-bound work, ``vendor_fraction: 0.7`` for sgemm).

The work goes through an executor (:mod:`kltrans.gate.executor`): one GPU task per
variant and one for the vendor timing, all workloads at once, so a machine with several
GPUs (the local pool: one slot per GPU) or a Dask cluster (``--cluster``) runs them in
parallel, never two on one GPU at a time. Each variant's entry records where it ran
(``placement``).
"""

from __future__ import annotations

import json
import os

from kltrans.progress import Progress


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


def workload_items(path: str, backend: str = "cuda", variants=None, vendor: bool = True,
                   timeout_s: float = 600.0) -> list[dict]:
    """The tasks (for :func:`kltrans.gate.tasks.run_task`) of one workload: a gate task
    per variant (compile, correct, and profile on the GPU), and the vendor timing."""
    from kltrans.workload.spec import load_workload

    wl = load_workload(path)
    stages = ["compile", "correct"] + (["profile"] if backend == "cuda" else [])
    items = []
    for v, k in wl.kernels.items():
        if variants and v not in variants:
            continue
        items.append({"task": "gate", "variant": v, "path": wl.kernel_path(v),
                      "workload": wl.path, "kernel": k["kernel"], "backend": backend,
                      "stages": stages, "timeout_s": timeout_s})
    if vendor and backend == "cuda" and wl.vendor:
        items.append({"task": "vendor", "workload": wl.path, "timeout_s": timeout_s})
    return items


def workload_row(path: str, items: list, results: list) -> dict:
    """The table row of one workload from its tasks' results."""
    from kltrans.workload.spec import load_workload

    wl = load_workload(path)
    row = {"workload": wl.name, "path": path, "bench_size": wl.bench_size, "bar": wl.bar,
           "variants": {}}
    for it, r in zip(items, results):
        if it["task"] == "gate":
            row["variants"][it["variant"]] = _variant_entry(r)
            continue
        row["vendor"] = r.get("vendor") or {"error": r.get("reason")}
        if r.get("vendor"):
            v = r["vendor"]
            f = wl.flops(dict(wl.bench_size))
            b = wl.bytes_moved(dict(wl.bench_size))
            v["tflops"] = f / (v["ms"] / 1e3) / 1e12 if f else None
            v["gbps"] = b / (v["ms"] / 1e3) / 1e9 if b else None
    row["bar_met"] = _bar_met(row)
    return row


def _variant_entry(r: dict) -> dict:
    if "stages" not in r:  # lost: every worker that ran it died, or it raised twice
        return {"ok": False, "seconds": 0.0, "compile": "lost",
                "reason": f"{r.get('verdict')}: {r.get('reason')}"}
    entry = {"ok": all(s["status"] != "fail" for s in r["stages"]),
             "seconds": r.get("seconds", 0.0)}
    for s in r["stages"]:
        entry[s["stage"]] = s["status"]
        if s["status"] == "fail":
            entry["reason"] = s["reason"]
        if s["stage"] == "profile" and r.get("profile"):
            entry["profile"] = r["profile"]
        if s["stage"] == "compile" and r.get("resources"):
            entry["resources"] = r["resources"]
        if s["stage"] == "correct" and r.get("checks") is not None:
            entry["checks"] = r["checks"]
    if r.get("placement"):
        entry["placement"] = r["placement"]
    return entry


def bench_workload(path: str, backend: str = "cuda", variants=None, vendor: bool = True,
                   timeout_s: float = 600.0, executor=None) -> dict:
    """One workload's row (through ``executor``; default: the local pool)."""
    from kltrans.gate.tasks import run_task

    items = workload_items(path, backend, variants, vendor, timeout_s)
    ex = executor
    if ex is None:
        from kltrans.gate.executor import make_executor

        ex = make_executor(None, backend)
    try:
        results = ex.map(run_task, items, gpu=backend == "cuda")
    finally:
        if executor is None:
            ex.close()
    return workload_row(path, items, results)


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
        only=None, executor=None) -> list:
    """Every workload's row. All tasks go to ``executor`` (default: the local pool) at
    once; a workload's row is reported, and the table written, as soon as its last task
    is back (an interrupted run keeps what it measured)."""
    from kltrans.gate.tasks import run_task

    dirs = [d for d in workload_dirs(root, heldout) if not only or os.path.basename(d) in only]
    items, owner = [], []
    for k, d in enumerate(dirs):
        for it in workload_items(d, backend):
            items.append(it)
            owner.append(k)
    left = [owner.count(k) for k in range(len(dirs))]
    done: dict = {}
    rows: dict = {}
    progress = Progress("bench-corpus", len(items))

    def arrived(i, r):
        k = owner[i]
        done[i] = r
        left[k] -= 1
        it = items[i]
        dev = (r.get("placement") or {}).get("cuda_visible_devices")
        progress.step(f"{os.path.basename(dirs[k])}: {it.get('variant', it['task'])}: "
                      f"{'ok' if r.get('ok') else 'FAILED'} ({r.get('seconds', 0):.1f} s"
                      f"{f', GPU {dev}' if dev is not None else ''})")
        if left[k]:
            return
        mine = [j for j in range(len(items)) if owner[j] == k]
        rows[k] = workload_row(dirs[k], [items[j] for j in mine], [done[j] for j in mine])
        if out_dir:
            _write(out_dir, [rows[j] for j in sorted(rows)])

    ex = executor
    if ex is None:
        from kltrans.gate.executor import make_executor

        ex = make_executor(None, backend)
    try:
        ex.map(run_task, items, gpu=backend == "cuda", on_result=arrived)
    finally:
        progress.close()
        if executor is None:
            ex.close()
    for k, d in enumerate(dirs):  # a workload without tasks (no variant) still has a row
        if k not in rows:
            rows[k] = workload_row(d, [], [])
    out = [rows[k] for k in range(len(dirs))]
    if out_dir:
        _write(out_dir, out)
    return out


def _write(out_dir: str, rows: list) -> None:
    from kltrans.syntax.files import atomic_write

    os.makedirs(out_dir, exist_ok=True)
    atomic_write(os.path.join(out_dir, "bench_corpus.json"), json.dumps(rows, indent=2))
    atomic_write(os.path.join(out_dir, "bench_corpus.txt"), render(rows) + "\n")
