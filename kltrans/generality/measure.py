"""The measures of the generality report, one task function each.

Every task takes and returns plain data, so an executor (the local pool, Dask) may run
it anywhere: ``explain_task`` (one adjacent pair), ``walk_task`` (one expert walked
back), ``forward_task`` (one naive version optimized), ``speedup_task`` (the expert
against its naive version, GPU).
"""

from __future__ import annotations

import os
import tempfile
import time


def lineage_facts(workload: str) -> list[str]:
    """The facts a walk over ``workload`` assumes (its own, tolerance, divisibility)."""
    from kltrans.lineage.walk import WORKLOAD_FACTS, tolerance_facts
    from kltrans.workload.spec import load_workload

    wl = load_workload(workload)
    facts = list(WORKLOAD_FACTS) + tolerance_facts(wl)
    facts += [f"{size}%{k}==0" for size, k in sorted((wl.divisible or {}).items())]
    return facts


def step_bindings(workload: str | None, *units) -> list[str]:
    """``binds(param, size)`` for the kernels of ``units`` (the two sides of a step), as
    the walk assumes them for its expert: the workload passes its sizes to the kernels'
    parameters in order, whatever the parameters are called."""
    from kltrans.lineage.walk import binding_facts
    from kltrans.workload.spec import load_workload

    if not workload:
        return []
    wl = load_workload(workload)
    out: list[str] = []
    for u in units:
        for fn in u.kernels():
            out += [f for f in binding_facts(wl, fn) if f not in out]
    return out


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def explain_task(item: dict) -> dict:
    """How much of the step from ``a`` to ``b`` the registered passes explain.

    ``actions``: the edit actions of the structural diff A -> B; ``explained``: those the
    best pass sequence found accounts for (all of them when it turns A into B exactly,
    else the actions it removed from the diff); ``full``: the sequence gives B."""
    from kltrans.diff.core import diff_units
    from kltrans.diff.search import explain
    from kltrans.syntax.unit import parse

    a, b = item["a"], item["b"]
    t0 = time.perf_counter()
    ua, ub = parse(_read(a["path"]), a["path"]), parse(_read(b["path"]), b["path"])
    total = len(diff_units(ua, ub).actions)
    out = {"lineage": item["lineage"], "a": a["variant"], "b": b["variant"],
           "step": b.get("step", ""), "actions": total}
    facts = list(item["facts"]) + step_bindings(item.get("workload"), ua, ub)
    try:
        e = explain(ua, ub, depth=int(item.get("depth", 2)), assume=tuple(facts),
                    arch=item.get("arch"), a_path=a["path"], b_path=b["path"],
                    time_limit=item.get("time_limit"),
                    canonical=bool(item.get("canonicalize")))
    except Exception as exc:  # a pass that raises is a finding of the report, not a crash
        out.update(explained=0, full=False, pipeline="", direction="error",
                   reason=f"{type(exc).__name__}: {exc}"[:300],
                   seconds=round(time.perf_counter() - t0, 2))
        return out
    left = 0 if e.exact else len(e.residual.actions) if e.residual is not None else total
    out.update(explained=total if e.exact else max(0, total - left), full=bool(e.exact),
               pipeline=",".join(s.spec for s in (e.steps or e.inverse_steps)),
               direction=e.direction, tried=e.tried,
               equal=e.equal if e.exact else None,
               seconds=round(time.perf_counter() - t0, 2))
    if not e.exact:
        out["reason"] = (f"no sequence of at most {item.get('depth', 2)} passes gives B; "
                         f"{left} of {total} edit actions left")
    return out


def walk_task(item: dict) -> dict:
    """Walk the expert back (``kltrans lineage``) and judge where it ended.

    ``reached_naive``: the walk ended ``naive`` and its final kernel uses no PTX
    mechanism (:mod:`kltrans.gate.ptx`) that the lineage's naive version does not;
    ``false_naive``: it ended ``naive`` with such a mechanism left."""
    from kltrans.gate.ptx import mechanisms
    from kltrans.lineage.walk import WalkError, WalkOptions, walk
    from kltrans.model.values import time_budget

    t0 = time.perf_counter()
    out = {"lineage": item["lineage"]}
    with tempfile.TemporaryDirectory(prefix="kltrans-generality-") as tmp:
        where = os.path.join(tmp, "lineage")
        opts = WalkOptions(workload=item["workload"], expert=item["expert"]["path"],
                           backend=item["backend"], max_steps=int(item.get("max_steps", 60)),
                           out=where, jobs=1, size_limit=item.get("size_limit"),
                           restart=True, probes=0, max_backtracks=0, progress=False,
                           arch=item.get("arch"), canonicalize=bool(item.get("canonicalize")))
        limit = item.get("time_limit")
        deadline = t0 + limit if limit else None
        try:
            with time_budget(deadline):  # the walk's model checks stop at the deadline
                doc = walk(opts)
        except WalkError as e:
            out.update(steps=0, termination="error", reason=str(e)[:300], reached_naive=False,
                       false_naive=False, seconds=round(time.perf_counter() - t0, 2))
            return out
        last = doc["states"][-1]
        final_path = os.path.join(where, last["file"])
        left = mechanisms(final_path, item["expert"].get("name_expression"))
    naive = set(item["naive_mechanisms"] or [])
    extra = [m for m in (left or []) if m not in naive]
    term = dict(doc["termination"])
    said_naive = term["kind"] == "naive"
    if deadline is not None and time.perf_counter() > deadline and not said_naive:
        # past the deadline the model's checks answer "unknown": the walk's end says
        # nothing about the catalogue
        term = {"kind": "time-limit", "reason": f"the walk ran past {limit:g} s (then "
                f"{term['kind']}: {term.get('reason', '')})"}
    out.update(steps=len(doc["transitions"]), termination=term["kind"],
               reason=term.get("reason", "")[:300],
               passes=[t["spec"] for t in doc["transitions"]],
               source_mechanisms=[m for m, _ in doc.get("residual_mechanisms") or []],
               mechanisms_left=extra, reached_naive=said_naive and not extra,
               false_naive=said_naive and bool(extra),
               seconds=round(time.perf_counter() - t0, 2))
    return out


def forward_task(item: dict) -> dict:
    """``kltrans optimize`` on the naive version with the skill library, then: on the
    CPU the gate's verdict on the final kernel; on a GPU the final kernel against the
    lineage's expert, paired (``fraction``: expert time / final time)."""
    from kltrans.gate.tasks import bench_task, gate_task
    from kltrans.optimize.search import OptimizeError, OptimizeOptions, run

    naive, expert = item["naive"], item["expert"]
    t0 = time.perf_counter()
    out = {"lineage": item["lineage"], "backend": item["backend"]}
    opts = OptimizeOptions(naive["path"], item["workload"], skills=item["skills"], corpus=None,
                           budget=int(item["budget"]), strategy="skills",
                           backend=item["backend"], kernel_name=naive["kernel"],
                           seed=int(item.get("seed", 0)), size_limit=item.get("size_limit"),
                           bench_size=naive.get("bench_size"), progress=False,
                           canonicalize=bool(item.get("canonicalize")))
    try:
        doc = run(opts)
    except OptimizeError as e:
        out.update(ok=False, reason=str(e)[:300], seconds=round(time.perf_counter() - t0, 2))
        return out
    final = doc["final"]
    out.update(ok=True, evaluations=final["evaluations"], accepted=final["accepted"],
               passes=[a.get("spec") for a in doc.get("accepted") or []],
               termination=doc["termination"]["kind"])
    src = final["source"]
    name = os.path.basename(naive["path"])
    if item["backend"] == "cpu":
        g = gate_task({"source": src, "name": name, "workload": item["workload"],
                       "kernel": naive["kernel"], "backend": "cpu",
                       "stages": ["compile", "correct"]})
        out["verdict"] = "pass" if g["ok"] else f"fail: {g['fail']}"
    else:
        r = bench_task({"a_path": expert["path"], "b_source": src, "b_name": name,
                        "kernel_a": expert["kernel"], "kernel_b": naive["kernel"],
                        "workload": item["workload"], "trials": int(item.get("trials", 5)),
                        "side_ms": 100.0, "min_reps": 3, "timeout_s": 600.0,
                        **({"bench_size": naive["bench_size"]} if naive.get("bench_size")
                           else {})})
        if r.get("ok"):
            p = r["paired"]
            out.update(verdict="timed", expert_ms=p["a"]["ms"], final_ms=p["b"]["ms"],
                       fraction=p["ratio_median"], trials=p["ratios"])
        else:
            out.update(verdict=f"not timed: {r.get('verdict')}: {r.get('reason')}"[:300])
    out["seconds"] = round(time.perf_counter() - t0, 2)
    return out


def speedup_task(item: dict) -> dict:
    """The expert against the naive version on the GPU, paired (``speedup``: naive time /
    expert time), at the naive version's own bench size where it has one."""
    from kltrans.gate.tasks import bench_task

    naive, expert = item["naive"], item["expert"]
    r = bench_task({"a_path": naive["path"], "b_path": expert["path"],
                    "kernel_a": naive["kernel"], "kernel_b": expert["kernel"],
                    "workload": item["workload"], "trials": int(item.get("trials", 5)),
                    "side_ms": 100.0, "min_reps": 3, "timeout_s": 600.0,
                    **({"bench_size": naive["bench_size"]} if naive.get("bench_size") else {})})
    out = {"lineage": item["lineage"]}
    if not r.get("ok"):
        out.update(ok=False, reason=f"{r.get('verdict')}: {r.get('reason')}"[:300])
        return out
    p = r["paired"]
    out.update(ok=True, naive_ms=p["a"]["ms"], expert_ms=p["b"]["ms"],
               speedup=p["ratio_median"], trials=p["ratios"], size=r.get("size"),
               device=r.get("device"))
    return out
