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

import math
import os


class MeasureError(ValueError):
    pass


def measure(lineage_dir: str, workload_dir: str, cluster: str | None = None,
            jobs: int | None = None, trials: int = 5, redo: bool = False,
            progress: bool = True, side_ms: float = 200.0) -> dict:
    """Time every transition of ``lineage_dir`` that has no measured effect yet (all of
    them with ``redo``); write the lineage back (json, md, svg) and return it. A lineage
    with nothing to time is returned as it is, unwritten, with or without a GPU. The
    returned document (not the file) says how many steps were timed now (``measured_now``).

    Each side of a trial runs about ``side_ms`` (as the GPU walk's screening does). Every
    effect is written to ``lineage.json`` the moment it is measured, so a measure that is
    stopped keeps what it timed and a later one times only the rest."""
    import sys

    from kltrans.gate.backends import resolve_backend
    from kltrans.gate.executor import ExecutorError, make_executor
    from kltrans.gate.run import variant_bench_size
    from kltrans.gate.tasks import bench_task
    from kltrans.lineage import store
    from kltrans.lineage.walk import step_effect
    from kltrans.workload.spec import SpecError, load_workload

    try:
        doc = store.read_doc(os.path.join(lineage_dir, "lineage.json"))
    except store.LineageError as e:
        raise MeasureError(str(e)) from None
    try:
        wl = load_workload(workload_dir)
    except (OSError, ValueError, SpecError) as e:
        raise MeasureError(f"{workload_dir}: cannot read the workload: {e}") from None
    todo = [t for t in doc["transitions"]
            if redo or not (t.get("effect") or {}).get("ok")]
    if not todo:  # every step already has its effect: nothing to time, on any machine
        return {**doc, "measured_now": 0}
    if resolve_backend("auto") != "cuda":
        raise MeasureError("measuring a lineage needs a GPU (the cuda backend)")
    size = None
    if "naive" in wl.kernels:
        size = variant_bench_size(wl, wl.kernel_path("naive"))
    states = {st["hash"]: store.read_state(lineage_dir, st) for st in doc["states"]}
    items = [pair_item(states[t["before"]], states[t["after"]], doc, wl.path, trials, side_ms,
                       size) for t in todo]
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
    return {**doc, "measured_now": len(todo)}


def pair_item(a: bytes, b: bytes, doc: dict, workload: str, trials: int, side_ms: float,
              size: dict | None) -> dict:
    """A paired timing of two states of a lineage (:func:`kltrans.gate.tasks.bench_task`):
    both under the walk's gate file name (compile cache hits) and kernel name."""
    name = doc["config"]["kernel"]
    fname = os.path.basename(doc["config"]["expert"])
    return {"a_source": a.decode("utf-8"), "a_name": fname, "b_source": b.decode("utf-8"),
            "b_name": fname, "kernel_a": name, "kernel_b": name, "workload": workload,
            "trials": trials, "timeout_s": 300.0, "side_ms": side_ms,
            **({"bench_size": size} if size else {})}


COMPOSITE_MAX_BACK = 20  # later-peeled steps a composite round trip may take with it
COMPOSITE_WINDOWS = (6, 20)  # how far back each round of timings reaches


def composite_verdict(step: int, tried: list[dict], threshold: float | None = None) -> dict:
    """The composite round trip of step ``step`` from its timings.

    ``tried`` has one entry per earlier state m: ``state`` (m), ``effect`` (a
    :func:`~kltrans.lineage.walk.step_effect` of time(state ``step``) / time(state m)), and
    ``removal``: the step's own simplification applied to state m and timed against it
    (``{"applies": False}`` where it does not apply there; missing where not timed). The
    composite is the nearest m (fewest extra inverses) where state m is no slower (median
    at least the round trip's threshold) and the step's removal there is no faster (an
    optimization that still costs time beside the later ones does not pay with them).
    ``no_slower`` False where no m within reach is. Whether the composite is evidence for
    this step, or is carried by a larger one in it, is :func:`label_composites`'s share."""
    from kltrans.lineage.walk import NO_SLOWER

    thr = NO_SLOWER if threshold is None else threshold
    rows = sorted(tried, key=lambda r: -r["state"])  # nearest first

    def row(r):
        d = {"state": r["state"], "steps": step - r["state"]}
        e = r["effect"]
        d.update({"slowdown_median": round(e["slowdown_median"], 4)} if e.get("ok")
                 else {"error": e.get("reason")})
        rm = r.get("removal")
        if rm is not None:
            d["removal"] = ({"applies": False} if rm.get("applies") is False else
                            {"slowdown_median": round(rm["slowdown_median"], 4)} if rm.get("ok")
                            else {"error": rm.get("reason")})
        return d

    out = {"tried": [row(r) for r in rows], "no_slower": False}
    for r in rows:
        e, rm = r["effect"], r.get("removal")
        if not (e.get("ok") and e["slowdown_median"] >= thr) or rm is None:
            continue
        if rm.get("applies") is not False and not (rm.get("ok") and rm["slowdown_median"] >= thr):
            continue  # removing the step there still speeds the kernel up
        out.update(no_slower=True, state=r["state"], steps=list(range(step, r["state"], -1)),
                   slowdown_median=e["slowdown_median"], slowdown_trials=e["slowdown_trials"],
                   spread=e["spread"], trials_over=sum(x >= thr for x in e["slowdown_trials"]))
        break
    return out


def composites(lineage_dir: str, workload_dir: str, cluster: str | None = None,
               jobs: int | None = None, trials: int = 5, side_ms: float = 100.0,
               max_back: int = COMPOSITE_MAX_BACK, steps: list[int] | None = None,
               redo: bool = False, progress: bool = True) -> dict:
    """The composite round trip of every step whose inverse alone is slower.

    Where every optimization left is a pessimization on its own (one warp per softmax row
    before the warp-level row statistics are back), the walk must still take a step to
    reach naive, and that step's inverse alone is slower. Such an optimization may pay
    only together with the ones peeled before it: the inverse of step k, then of k-1, ...,
    m+1, gives back state m, and state m is timed against state k (paired, as the walk
    times a step, at the step's own size). State m counts only where the step's own
    simplification, applied to state m, does not make it faster (or does not apply there):
    see :func:`composite_verdict`. States are tried in rounds, the nearest
    (``COMPOSITE_WINDOWS``) first, up to ``max_back`` extra steps; the nearest that
    qualifies is recorded as ``roundtrip.composite`` with every timing tried. Each inverse
    in it passed the structural round trip on its own, so the composite gives state m back
    exactly. ``steps``: only these (whatever their round trip says); steps with a composite
    already are skipped unless ``redo``."""
    import sys

    from kltrans.gate.backends import resolve_backend
    from kltrans.gate.executor import ExecutorError, make_executor
    from kltrans.gate.tasks import bench_task
    from kltrans.lineage import store
    from kltrans.lineage.walk import NO_SLOWER, content_hash, step_effect
    from kltrans.passes.facts import Context
    from kltrans.passes.manager import run_pipeline
    from kltrans.passes.pipeline import parse_pipeline
    from kltrans.syntax import parse
    from kltrans.workload.spec import SpecError, load_workload

    try:
        doc = store.read_doc(os.path.join(lineage_dir, "lineage.json"))
    except store.LineageError as e:
        raise MeasureError(str(e)) from None
    try:
        wl = load_workload(workload_dir)
    except (OSError, ValueError, SpecError) as e:
        raise MeasureError(f"{workload_dir}: cannot read the workload: {e}") from None
    if max_back < 1:
        raise MeasureError("--max-back must be >= 1")
    trs = doc["transitions"]
    if steps:
        bad = [k for k in steps if not 1 <= k <= len(trs)]
        if bad:
            raise MeasureError(f"{lineage_dir}: no step {bad[0]} (the lineage has {len(trs)})")
    if resolve_backend("auto") != "cuda":
        raise MeasureError("a composite round trip is timed on a GPU (the cuda backend)")

    def wants(t) -> bool:
        rt, e = t.get("roundtrip") or {}, t.get("effect") or {}
        if steps:
            return bool(t["step"] in steps and rt.get("ok") and e.get("ok"))
        return bool(rt.get("ok") and rt.get("no_slower") is False and e.get("ok")
                    and (redo or "composite" not in rt))

    todo = [t for t in trs if wants(t)]
    if not todo:
        return doc
    states = {st["hash"]: store.read_state(lineage_dir, st) for st in doc["states"]}
    cfg = doc["config"]
    name = cfg["kernel"]
    fname = os.path.basename(cfg["expert"])
    ctx = Context.from_strings(tuple(cfg.get("facts") or ()), cfg.get("arch"), False, name)
    try:
        ex = make_executor(cluster, "cuda", jobs)
    except ExecutorError as e:
        raise MeasureError(str(e)) from None

    def item(a: bytes, b: bytes, t) -> dict:
        return pair_item(a, b, doc, wl.path, trials, side_ms, t["effect"].get("size"))

    def removed(t, m: int) -> bytes | None:
        """State m with step t's own simplification applied (None: it does not apply)."""
        src = states[trs[m]["before"]]
        try:
            res = run_pipeline(parse(src, fname), parse_pipeline(t["spec"]), ctx)
        except Exception:
            return None
        out = res.unit.source
        if not all(r.applied for r in res.reports) or content_hash(out) == content_hash(src):
            return None
        return out

    def time_all(items, keys, sink):
        def report(i, r):
            sink[keys[i]] = step_effect(r)
            if progress:
                e = sink[keys[i]]
                what = f"{e['slowdown_median']:.3f}" if e.get("ok") else "not timed"
                kind, k, m = keys[i]
                print(f"kltrans lineage: step {k}, {kind} at state {m}: {what}",
                      file=sys.stderr, flush=True)
        if items:
            ex.map(bench_task, items, gpu=False, on_result=report)

    tried: dict = {t["step"]: {} for t in todo}
    verdicts: dict = {}
    lo = 1
    with ex:
        for hi in [w for w in COMPOSITE_WINDOWS if w < max_back] + [max_back]:
            open_steps = [t for t in todo if t["step"] not in verdicts]
            chain: dict = {}
            items, keys = [], []
            for t in open_steps:
                k = t["step"]
                for m in range(k - 1 - lo, max(-1, k - 2 - hi), -1):
                    items.append(item(states[trs[m]["before"]], states[t["after"]], t))
                    keys.append(("composite", k, m))
            time_all(items, keys, chain)
            rem: dict = {}
            items, keys = [], []
            for t in open_steps:
                k = t["step"]
                for (_, kk, m), e in chain.items():
                    if kk != k:
                        continue
                    tried[k][m] = {"state": m, "effect": e}
                    if not (e.get("ok") and e["slowdown_median"] >= NO_SLOWER):
                        continue
                    b = removed(t, m)
                    if b is None:
                        tried[k][m]["removal"] = {"applies": False}
                    else:
                        items.append(item(states[trs[m]["before"]], b, t))
                        keys.append(("removal", k, m))
            time_all(items, keys, rem)
            for (_, k, m), e in rem.items():
                tried[k][m]["removal"] = e
            for t in open_steps:
                v = composite_verdict(t["step"], list(tried[t["step"]].values()))
                if v["no_slower"]:
                    verdicts[t["step"]] = v
            lo = hi + 1
            if lo > max_back:
                break
    for t in todo:
        k = t["step"]
        v = verdicts.get(k) or composite_verdict(k, list(tried[k].values()))
        v.update(max_back=max_back, side_ms=side_ms,
                 inverses=[trs[j - 1]["roundtrip"]["inverse"] for j in v.get("steps", [])],
                 structural=all((trs[j - 1].get("roundtrip") or {}).get("ok")
                                for j in v.get("steps", [])))
        t["roundtrip"]["composite"] = v
    label_composites(doc)
    store.save(lineage_dir, doc, {})
    return doc


def label_composites(doc: dict) -> None:
    """Each composite's ``share``: its median over the product of the medians the other
    steps in it had when they were walked (each timed at its own state). ``carried`` where
    the share is under the round trip's threshold: the composite is no slower only
    because the steps with it gain more than this one loses (transpose's interior
    specialization inside the shared-memory staging that brings 2.26x), so it is no
    evidence that the optimization pays. Nothing is timed again."""
    from kltrans.lineage.walk import NO_SLOWER

    trs = doc["transitions"]
    for t in trs:
        c = (t.get("roundtrip") or {}).get("composite")
        if not c or not c.get("no_slower"):
            continue
        others = [(trs[j - 1].get("effect") or {}).get("slowdown_median") for j in c["steps"][1:]]
        if not all(others):
            c.update(share=None, carried=None)
            continue
        prod = math.prod(others)
        share = c["slowdown_median"] / prod
        c.update(others=round(prod, 4), share=round(share, 4), carried=share < NO_SLOWER)


def roundtrip_holds(rt: dict | None) -> bool:
    """The round trip of a step holds: its inverse gives the state before back
    (structurally), and on a GPU it is no slower alone, or together with the steps peeled
    before it (``composite``) where it is not carried by them (:func:`label_composites`)."""
    rt = rt or {}
    if not rt.get("ok"):
        return False
    if rt.get("no_slower") is False:
        c = rt.get("composite") or {}
        return bool(c.get("no_slower") and c.get("structural") and c.get("carried") is False)
    return True
