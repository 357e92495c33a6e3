"""Measuring a lineage walked without a GPU: each recorded step, timed on the GPU.

A CPU walk chooses its steps by the catalogue's order and records no effect. Its steps can
still be measured afterwards: for each transition, the state before it (A) and after it
(B, the simplified one) are timed side by side with paired trials on the GPU, and the
effect is recorded as the walk records it (``slowdown_trials`` = time(B) / time(A) per
trial), with ``measured_after_walk`` set so that nobody reads the choices as made by time.
Skill cards then carry measured speedups for those steps.

Every step of one lineage is timed at one size: the bench size of the workload's naive
variant where it has its own (an O(n^2) naive kernel, and the states near it, would not
finish at the workload's), else the workload's bench size.
"""

from __future__ import annotations

import os


class MeasureError(ValueError):
    pass


def measure(lineage_dir: str, workload_dir: str, cluster: str | None = None,
            jobs: int | None = None, trials: int = 5, redo: bool = False,
            progress: bool = True, side_ms: float = 200.0) -> dict:
    """Time every transition of ``lineage_dir`` that has no measured effect yet (all of
    them with ``redo``); write the lineage back (json, md, svg) and return it.

    Each side of a trial runs about ``side_ms`` (as the GPU walk's screening does). Every
    effect is written to ``lineage.json`` the moment it is measured, so a measure that is
    stopped keeps what it timed and a later one times only the rest."""
    import json
    import sys

    from kltrans.gate.backends import resolve_backend
    from kltrans.gate.executor import ExecutorError, make_executor
    from kltrans.gate.run import variant_bench_size
    from kltrans.gate.tasks import bench_task
    from kltrans.lineage import store
    from kltrans.lineage.walk import step_effect
    from kltrans.workload.spec import SpecError, load_workload

    path = os.path.join(lineage_dir, "lineage.json")
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        wl = load_workload(workload_dir)
    except (OSError, ValueError, SpecError) as e:
        raise MeasureError(f"{lineage_dir}: cannot read the lineage: {e}") from None
    if resolve_backend("auto") != "cuda":
        raise MeasureError("measuring a lineage needs a GPU (the cuda backend)")
    cfg = doc["config"]
    size = None
    if "naive" in wl.kernels:
        size = variant_bench_size(wl, wl.kernel_path("naive"))
    todo = [t for t in doc["transitions"]
            if redo or not (t.get("effect") or {}).get("ok")]
    states = {st["hash"]: store.read_state(lineage_dir, st) for st in doc["states"]}
    name = cfg["kernel"]
    fname = os.path.basename(cfg["expert"])  # the walk's gate name: compile cache hits
    items = [{"a_source": states[t["before"]].decode("utf-8"), "a_name": fname,
              "b_source": states[t["after"]].decode("utf-8"), "b_name": fname,
              "kernel_a": name, "kernel_b": name, "workload": wl.path, "trials": trials,
              "timeout_s": 300.0, "side_ms": side_ms,
              **({"bench_size": size} if size else {})} for t in todo]
    try:
        ex = make_executor(cluster, "cuda", jobs)
    except ExecutorError as e:
        raise MeasureError(str(e)) from None

    def report(i, r):
        t = todo[i]
        t["effect"] = {**step_effect(r), "measured_after_walk": True}
        if r.get("device"):
            doc["effects_measured_on"] = r["device"]
        store.save_doc(lineage_dir, doc)
        if progress:
            what = (f"{r['paired']['b']['ms'] / r['paired']['a']['ms']:.3f}x the time"
                    if r.get("ok") else f"not measured ({r.get('verdict')})")
            print(f"kltrans lineage: step {t['step']} {t['spec']}: {what}", file=sys.stderr,
                  flush=True)

    with ex:
        ex.map(bench_task, items, gpu=False, on_result=report)  # devlock
    store.save(lineage_dir, doc, {})
    return doc
