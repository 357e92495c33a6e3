"""``kltrans experiment``: lineage skills against blind and memory search, same budget.

Targets: every corpus workload from its naive root with the cards of the *other*
workloads only (leave-one-workload-out: ``exclude_own``), and every held-out instance from
its naive kernel with all cards. Each (target, strategy, seed) is one ``optimize`` run;
on a GPU its final kernel is then timed side by side against the naive kernel (and the
expert, for corpus workloads) with paired trials, and the vendor reference is timed once
per target. Raw results go to ``experiment.json``; ``--results`` writes the Markdown report
with the tables and a bar chart (SVG, next to it).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time

from kltrans.paths import bundled, default_out
from kltrans.progress import Progress


class ExperimentError(ValueError):
    pass


ROOT_KINDS = {"loo": "root", "own": "root-own"}


def _lineage_end(path: str) -> tuple[str | None, dict | None]:
    """(the naive end, the walk's own bench size) of a corpus workload's lineage, from one
    read of its ``lineage.json``; see :func:`lineage_root` and :func:`lineage_bench_size`."""
    try:
        with open(os.path.join(path, "lineage", "lineage.json"), encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None, None
    size = (doc.get("config") or {}).get("bench_size")
    size = dict(size) if isinstance(size, dict) and size else None
    if (doc.get("termination") or {}).get("kind") != "naive" or not doc.get("states"):
        return None, size
    end = os.path.join(path, "lineage", doc["states"][-1]["file"])
    return (end if os.path.isfile(end) else None), size


def lineage_root(path: str) -> str | None:
    """The naive end of a corpus workload's lineage (``corpus/W/lineage/states/NN-naive.cu``)
    where its walk ended ``naive``; None otherwise."""
    return _lineage_end(path)[0]


def lineage_bench_size(path: str) -> dict | None:
    """The size the workload's lineage walk timed its states at, where it was not the
    workload's bench size (``config.bench_size``: scan's walk, whose states near the naive
    end sum tile prefixes directly, in quadratic time, was timed at 2^18, not 2^28); None
    otherwise. A root target is timed there too: at the workload's size its baseline alone
    would not end in a device call."""
    return _lineage_end(path)[1]


ROOT_NAMES = {"loo": "{}@root", "own": "{}@root+own"}


def targets(corpus: str, heldout: bool = True, own: bool = True, only=None,
            roots=None) -> list[dict]:
    """The experiment's targets: corpus workloads from ``naive.cu`` (kind ``corpus``, the
    other workloads' cards only) and held-out instances (``heldout``, every card). With
    ``roots`` (``loo``, ``own`` or both), each corpus workload whose lineage ended ``naive``
    also from that naive end, the root its skills were peeled back to: ``loo`` with the
    other workloads' cards only (``W@root``, kind ``root``), ``own`` with every card, its
    own lineage's included (``W@root+own``, kind ``root-own``: can the library build the
    expert back?)."""
    from kltrans.workload.spec import SpecError, load_workload

    roots = [roots] if isinstance(roots, str) else list(roots or ())

    out = []
    dirs = []
    if own or roots:
        dirs += [(os.path.join(corpus, d), "corpus") for d in sorted(os.listdir(corpus))]
    hd = os.path.join(corpus, "heldout")
    if heldout and os.path.isdir(hd):
        dirs += [(os.path.join(hd, d), "heldout") for d in sorted(os.listdir(hd))]
    for path, kind in dirs:
        if not os.path.isfile(os.path.join(path, "workload.yaml")):
            continue
        try:
            wl = load_workload(path)
        except (SpecError, OSError) as e:
            raise ExperimentError(str(e)) from None
        if "naive" not in wl.kernels or (only and wl.name not in only
                                         and os.path.basename(path) not in only):
            continue
        expert = wl.kernel_path("expert") if "expert" in wl.kernels else None
        out.append({"name": wl.name, "path": path, "kind": kind,
                    "naive": wl.kernel_path("naive"), "expert": expert})
        root, size = _lineage_end(path) if roots and kind == "corpus" else (None, None)
        for r in (roots if root else ()):
            out.append({"name": ROOT_NAMES[r].format(wl.name), "path": path,
                        "kind": ROOT_KINDS[r], "naive": root, "expert": expert,
                        **({"bench_size": size} if size else {})})
    if roots and not own:  # roots only: the corpus targets were needed to find them
        out = [t for t in out if t["kind"] != "corpus"]
    return out


# the skills search's variants an item may carry, with the value that means "as the issue
# asks" (a run records only the others, and is reported and resumed under them: label)
VARIANTS = (("min_gain", 1.0), ("select", "first"), ("enablers", False), ("patience", None),
            ("offer_tries", None), ("tune_last", False))


def _variant(item: dict) -> dict:
    """The variant options of ``item`` that differ from the plain search."""
    return {k: item[k] for k, plain in VARIANTS if item.get(k, plain) != plain}


def optimize_task(item: dict) -> dict:
    """One optimize run (plain data in and out: an executor may run it anywhere)."""
    from kltrans.optimize.search import OptimizeError, OptimizeOptions, run

    t = item["target"]
    opts = OptimizeOptions(t["naive"], t["path"], skills=item["skills"], corpus=item["corpus"],
                           budget=item["budget"], strategy=item["strategy"],
                           backend=item["backend"],
                           exclude_own=t["kind"] in ("corpus", "root"),
                           seed=item["seed"], size_limit=item.get("size_limit"),
                           trials=item.get("trials", 5), trial_ms=item.get("trial_ms", 100.0),
                           catalogue=item.get("catalogue", True),
                           unproven=item.get("unproven", True),
                           bench_size=t.get("bench_size"),
                           **{k: item.get(k, plain) for k, plain in VARIANTS},
                           checkpoint=item.get("checkpoint"), progress=False)
    t0 = time.perf_counter()
    try:
        doc = run(opts)
    except OptimizeError as e:
        return {"ok": False, "target": t["name"], "strategy": item["strategy"],
                "seed": item["seed"], "reason": str(e)}
    out = {"ok": True, "target": t["name"], "kind": t["kind"], "strategy": item["strategy"],
           **_variant(item),
           "seed": item["seed"], "seconds": round(time.perf_counter() - t0, 2),
           "termination": doc["termination"], "final": doc["final"],
           "accepted": doc["accepted"], "library": doc["library"],
           "candidates": [{k: c.get(k) for k in ("evaluation", "spec", "site", "verdict",
                                                  "stage", "forced", "unproven", "card",
                                                  "seconds", "phases", "traceback")}
                          | {"reason": (c.get("reason") or "")[:300]}
                          | ({"phase": c["phase"]} if c.get("phase") else {})
                          for c in doc["candidates"]],
           "events": doc["events"]}
    if item["backend"] == "cuda":
        out["timing"] = _final_timing(t, doc["final"]["source"], item)
    return out


def _final_timing(t: dict, final_src: str, item: dict) -> dict:
    """The final kernel against the naive one, paired, side by side. A run that accepted
    nothing ends with the naive kernel itself: its speedup is 1 by construction and it is
    not timed (``identical``). The expert is timed against the naive kernel once per
    target (:func:`target_baseline_task`)."""
    from kltrans.gate.tasks import bench_task

    with open(t["naive"], encoding="utf-8") as f:
        if f.read() == final_src:
            return {"naive": {"ok": True, "identical": True, "speedup_median": 1.0}}
    r = bench_task({"a_path": t["naive"], "b_source": final_src,
                    "b_name": "final_" + os.path.basename(t["naive"]),
                    "workload": t["path"], "trials": item.get("trials", 5), "timeout_s": 300.0,
                    "side_ms": item.get("trial_ms", 100.0), "min_reps": 3,
                    **({"bench_size": t["bench_size"]} if t.get("bench_size") else {})})
    if not r.get("ok"):
        return {"naive": {"ok": False, "reason": f"{r.get('verdict')}: {r.get('reason')}"}}
    p = r["paired"]
    return {"naive": {"ok": True, "ms": p["a"]["ms"], "final_ms": p["b"]["ms"],
                      "speedup_median": p["ratio_median"], "trials": p["ratios"]}}


def target_vendor_task(t: dict, size: dict | None = None) -> dict:
    """The vendor timing of one target (:func:`kltrans.gate.tasks.vendor_task`), at
    ``size``: the size its naive kernel is timed at (runs are timed against the naive
    kernel), None for the workload's bench size."""
    from kltrans.gate.tasks import vendor_task

    item = {"workload": t["path"], "timeout_s": 300.0}
    if size:
        item["bench_size"] = size
    out = vendor_task(item)
    return {"target": t["name"], "vendor": out.get("vendor"), "reason": out.get("reason"),
            **({"size": size} if size else {})}


def baseline_groups(tg: list[dict], have: dict) -> dict:
    """The baselines still to time: one per (naive, expert) pair, each with the names of
    the targets that share it (``W@root`` and ``W@root+own`` start from the same kernel);
    targets already in ``have`` with a naive timing are left out."""
    same: dict = {}
    for t in tg:
        if "naive" not in have.get(t["name"], {}):  # missing, or from before it
            same.setdefault((t["naive"], t.get("expert")), []).append(t["name"])
    return same


def target_baseline_task(item: dict) -> dict:
    """Once per target: the vendor timing, and (corpus workloads) the expert against the
    naive kernel, paired -- the reference every run's fraction of expert speed is taken
    from (fraction = the run's speedup over naive / the expert's)."""
    from kltrans.gate.run import variant_bench_size
    from kltrans.gate.tasks import bench_task, gate_task
    from kltrans.workload.spec import load_workload

    t = item["target"]
    seconds = {}  # where a baseline's time goes (vendor, naive, expert)
    mark = [time.perf_counter()]

    def lap(phase):
        now = time.perf_counter()
        seconds[phase], mark[0] = round(now - mark[0], 2), now

    size = t.get("bench_size") or variant_bench_size(load_workload(t["path"]), t["naive"])
    out = target_vendor_task(t, size)
    lap("vendor")
    # the naive kernel alone (a run that accepted nothing ends there: its time is this; the
    # gate times a variant with its own bench size at that size)
    g = gate_task({"path": t["naive"], "workload": t["path"], "backend": "cuda",
                   "stages": ("compile", "profile"), "timeout_s": 300.0,
                   **({"bench_size": size} if size else {})})
    prof = g.get("profile") or {}
    out["naive"] = ({"ok": True, "ms": prof["ms"], "size": prof.get("size")} if prof.get("ms")
                    else {"ok": False, "reason": str(g.get("fail"))})
    lap("naive")
    if t.get("expert"):
        r = bench_task({"a_path": t["naive"], "b_path": t["expert"], "workload": t["path"],
                        "timeout_s": 300.0, **({"bench_size": size} if size else {}),
                        "trials": item.get("trials", 5), "side_ms": item.get("trial_ms", 100.0),
                        "min_reps": 3})
        if r.get("ok"):
            p = r["paired"]
            out["expert"] = {"ok": True, "naive_ms": p["a"]["ms"], "expert_ms": p["b"]["ms"],
                             "speedup_median": p["ratio_median"], "trials": p["ratios"]}
        else:
            out["expert"] = {"ok": False, "reason": f"{r.get('verdict')}: {r.get('reason')}"}
        lap("expert")
    out["seconds"] = seconds
    return out


def experiment_task(item: dict) -> dict:
    """One item of the experiment's queue: a target's baseline (``task: baseline``) or an
    optimize run."""
    if item.get("task") == "baseline":
        return target_baseline_task(item)
    return optimize_task(item)


def label(run: dict) -> str:
    """The strategy a run is reported under: a skills run that offered the cards only (no
    catalogue tail, as every skills run did before the tail existed) is ``skills-cards``;
    one with the tail but no unproven offers (as before those existed) ``skills-proven``; a
    run with a minimum gain gets it as a suffix (``skills@1.01``), a skills run that
    moves to the best of each round (``--select best``) ``+best`` (``skills+best@1.01``),
    one that times steps with the cards they make apply (``--enablers``) ``+enablers``
    (``skills+best+enablers``), and one that stops after N evaluations in a row kept
    nothing (``--patience N``) ``+pN`` (``skills+best+p10``), one that gates an offer
    at most N times per kernel state (``--offer-tries N``) ``+tN`` (``skills+best+t1``),
    and one that tries the tuning cards last (``--tune-last``) ``+last``
    (``skills+best+enablers+t1+last``)."""
    lib = run.get("library") or {}
    gain = f"@{run['min_gain']:g}" if run.get("min_gain", 1.0) != 1.0 else ""
    if run.get("tune_last"):
        gain = "+last" + gain
    if run.get("offer_tries"):
        gain = f"+t{run['offer_tries']}" + gain
    if run.get("patience"):
        gain = f"+p{run['patience']}" + gain
    if run.get("enablers"):
        gain = "+enablers" + gain
    if run.get("select", "first") != "first":
        gain = f"+{run['select']}" + gain
    if run.get("strategy") == "skills" and not lib.get("catalogue"):
        return "skills-cards" + gain
    if run.get("strategy") == "skills" and not lib.get("unproven"):
        return "skills-proven" + gain
    return run.get("strategy") + gain


def _geo(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def summarize(runs: list[dict], vendors: dict) -> dict:
    """One row per run (target, strategy, seed); per set and strategy, over the targets
    every strategy of the set has: geometric means over the runs, and the evaluations,
    wasted, failed and same-code counts summed over them. Every seed's run counts, so a
    strategy run with two seeds sums twice the evaluations of one run with one: the
    aggregate's ``seeds`` says which seeds it holds (compare strategies with the same)."""
    rows = []
    for r in runs:
        if not r.get("ok"):
            rows.append({"target": r["target"], "strategy": r["strategy"], "seed": r["seed"],
                         "error": r.get("reason")})
            continue
        strategy = label(r)
        tm = r.get("timing") or {}
        naive = tm.get("naive") or {}
        base = vendors.get(r["target"]) or {}
        bexp = base.get("expert") or {}
        sp = naive.get("speedup_median") if naive.get("ok") else None
        if tm.get("expert", {}).get("ok"):  # runs timed against the expert directly
            frac = tm["expert"]["speedup_median"]
        else:
            frac = (sp / bexp["speedup_median"] if sp and bexp.get("ok")
                    and bexp.get("speedup_median") else None)
        final_ms = naive.get("final_ms")
        naive_ms = bexp.get("naive_ms") or (base.get("naive") or {}).get("ms")
        if final_ms is None and sp and naive_ms:
            final_ms = naive_ms / sp
        v = base.get("vendor") or {}
        over_vendor = v["ms"] / final_ms if v.get("ms") and final_ms else None
        final_sp = r["final"].get("speedup_vs_start")
        to90 = 0
        if final_sp:
            for a in r["accepted"]:
                if a.get("speedup_vs_start") and a["speedup_vs_start"] >= 0.9 * final_sp:
                    to90 = a["evaluation"]
                    break
        rows.append({"target": r["target"], "kind": r["kind"], "strategy": strategy,
                     "seed": r["seed"], "evaluations": r["final"]["evaluations"],
                     "accepted": r["final"]["accepted"],
                     # rejected, and (--select best) kept but outranked by a faster one
                     "wasted": r["final"]["rejected"] + r["final"].get("outranked", 0),
                     # candidates that compiled to the current kernel's machine code (no
                     # evaluation), and verdicts a resumed run took from its checkpoint
                     "same_code": r["final"].get("same_code"),
                     "replayed": r["final"].get("replayed", 0),
                     # of the wasted: candidates the gate failed (compile or correct), the
                     # ones a precondition exists to avoid; the rest were not faster
                     "failed": sum(1 for c in r.get("candidates") or ()
                                   if c.get("verdict") == "rejected"
                                   and c.get("stage") in ("compile", "correct")),
                     "speedup": sp, "expert_fraction": frac, "over_vendor": over_vendor,
                     "evals_to_90": to90, "termination": r["termination"]["kind"],
                     "pipeline": [a["spec"] for a in r["accepted"]]})
    agg = {}
    for kind in ("corpus", "heldout", "root", "root-own"):
        ok = [r for r in rows if r.get("kind") == kind and "error" not in r]
        strats = sorted({r["strategy"] for r in ok})
        if not strats:
            continue
        # strategies are compared on the same targets: those every strategy has a run for
        common = set.intersection(*({r["target"] for r in ok if r["strategy"] == s}
                                    for s in strats))
        for strat in strats:
            sel = [r for r in ok if r["strategy"] == strat and r["target"] in common]
            if not sel:
                continue
            agg[f"{kind}/{strat}"] = {
                "targets": len({r["target"] for r in sel}),
                "seeds": sorted({r["seed"] for r in sel}),
                "left_out": sorted({r["target"] for r in ok if r["strategy"] == strat}
                                   - common),
                "geomean_speedup": _geo([r["speedup"] for r in sel]),
                "geomean_expert_fraction": _geo([r["expert_fraction"] for r in sel]),
                "geomean_over_vendor": _geo([r["over_vendor"] for r in sel]),
                "mean_evals_to_90": sum(r["evals_to_90"] for r in sel) / len(sel),
                "wasted": sum(r["wasted"] for r in sel),
                "failed": sum(r.get("failed", 0) for r in sel),
                "evaluations": sum(r["evaluations"] for r in sel),
                # None where the runs predate the same-code rule
                "same_code": (sum(r["same_code"] for r in sel)
                              if all(r.get("same_code") is not None for r in sel) else None)}
    return {"rows": rows, "aggregate": agg}


# ------------------------------------------------------------------ the records read back
def _nullable(t: str) -> dict:
    return {"type": [t, "null"]}


_STEP = {"type": "object", "required": ["spec", "evaluation"],
         "properties": {"spec": {"type": "string"}, "evaluation": {"type": "integer"},
                        "speedup_vs_start": _nullable("number")}}
_TIMED = {"type": ["object", "null"], "properties": {"speedup_median": _nullable("number"),
                                                     "final_ms": _nullable("number")}}
_BASELINE = {"type": "object", "properties": {
    "vendor": {"type": ["object", "null"], "properties": {"ms": _nullable("number")}},
    "expert": {"type": ["object", "null"], "properties": {
        "speedup_median": _nullable("number"), "naive_ms": _nullable("number")}},
    "naive": {"type": ["object", "null"], "properties": {"ms": _nullable("number")}}}}
# What :func:`_merged`, a resumed experiment, :func:`summarize`, :func:`label` and
# :func:`render` read from an experiment record (experiment.json, or the
# experiment.partial.json an experiment keeps as it goes), as a JSON Schema: checked once,
# as the file is read (:func:`_record_problem`), so that a file of another shape is an
# input error naming it and the place in it, never a traceback or a report of nothing. A
# failed run needs only its target, strategy and seed (its ``reason`` says why).
RECORD_SCHEMA = {
    "type": "object",
    "required": ["runs", "budget", "backend"],
    "properties": {
        "runs": {"type": "array", "items": {
            "type": "object",
            "required": ["target", "strategy", "seed"],
            "properties": {"target": {"type": "string"}, "strategy": {"type": "string"},
                           "seed": {"type": "integer"}, "min_gain": {"type": "number"},
                           "select": {"type": "string"}, "library": _nullable("object")},
            "if": {"required": ["ok"], "properties": {"ok": {"const": True}}},
            "then": {
                "required": ["kind", "final", "termination", "accepted"],
                "properties": {
                    "kind": {"type": "string"},
                    "final": {"type": "object",
                              "required": ["evaluations", "accepted", "rejected"],
                              "properties": {
                                  "evaluations": {"type": "integer"},
                                  "accepted": {"type": "integer"},
                                  "rejected": {"type": "integer"},
                                  "outranked": {"type": "integer"},
                                  "same_code": _nullable("integer"),
                                  "replayed": {"type": "integer"},
                                  "speedup_vs_start": _nullable("number")}},
                    "termination": {"type": "object", "required": ["kind"],
                                    "properties": {"kind": {"type": "string"}}},
                    "accepted": {"type": "array", "items": _STEP},
                    "candidates": {"type": ["array", "null"], "items": {"type": "object"}},
                    "timing": {"type": ["object", "null"],
                               "properties": {"naive": _TIMED, "expert": _TIMED}}}}}},
        "budget": {"type": "integer"},
        "backend": {"type": "string"},
        "command": {"type": "string"},
        "seeds": {"type": ["array", "null"], "items": {"type": "integer"}},
        "strategies": {"type": ["array", "null"], "items": {"type": "string"}},
        "wall_seconds": _nullable("number"),
        "seconds": _nullable("number"),
        "vendors": {"type": ["object", "null"], "additionalProperties": _BASELINE},
        "baselines": {"type": ["object", "null"], "additionalProperties": _BASELINE},
        "merged_from": {"type": ["array", "null"], "items": {
            "type": "object", "required": ["fingerprint", "command", "wall_seconds"],
            "properties": {"fingerprint": {"type": "string"}, "command": {"type": "string"},
                           "wall_seconds": {"type": "number"}}}}}}


def _record_problem(d) -> str | None:
    """What makes ``d`` (a JSON document) no experiment record the merge or a resumed
    experiment can use (:data:`RECORD_SCHEMA`), as 'where: what', or None."""
    from kltrans.syntax.records import schema_problem

    return schema_problem(RECORD_SCHEMA, d)


def _read_record(path: str, doing: str) -> dict:
    """The experiment record in ``path``; anything else (unreadable, not JSON, another
    shape) an :class:`InputError` naming the file (with line:col for a JSON syntax error)
    that says what ``doing`` (``cannot read``, ``cannot resume from it``) could not do."""
    from kltrans.syntax.diagnostics import InputError

    from kltrans.syntax.unit import read_failure, read_source

    try:
        d = json.loads(read_source(path))
    except InputError as e:
        raise InputError.at(path, f"{doing}: {read_failure(e)[1]}") from None
    except json.JSONDecodeError as e:
        raise InputError.at(path, f"{doing}: not valid JSON: {e.msg}", line=e.lineno,
                            column=e.colno) from None
    except ValueError as e:  # e.g. a number too long to convert
        raise InputError.at(path, f"{doing}: {e}") from None
    why = _record_problem(d)
    if why:
        raise InputError.at(path, f"not a kltrans experiment record: {why}",
                            hint="--merge and --resume read the experiment.json (or "
                                 "experiment.partial.json) that kltrans experiment writes")
    return d


def _check_library(skills: str) -> None:
    """The skill library, loaded and validated once before any run: a malformed card is
    an input error naming its file, not an error in every skills run's row."""
    from kltrans.optimize.retrieve import LibraryError, load_library

    try:
        load_library(skills)
    except LibraryError as e:  # its message names the card (file:line:col: error: ...)
        raise ExperimentError(f"{e} (--skills {skills}; `kltrans skills validate --dir "
                              f"{skills}` checks every card)") from None


def _run_value_error(args) -> str | None:
    """What is wrong with a per-run option (one every run would fail or time nonsense
    with), in the options' words: None if nothing. Checked before any run."""
    from kltrans.optimize.search import variant_value_error

    why = variant_value_error(getattr(args, "min_gain", 1.0), getattr(args, "patience", None),
                              getattr(args, "offer_tries", None))
    if why:
        return why
    budget = getattr(args, "budget", 0)
    if budget < 0:  # as the search says it
        return "--budget must be 0 or more"
    size_limit = getattr(args, "size_limit", None)
    if size_limit is not None and size_limit < 1:
        return f"--size-limit must be 1 or more (elements): {size_limit} keeps no test size"
    if getattr(args, "trials", 5) < 1:
        return "--trials must be 1 or more (paired trials per timing)"
    trial_ms = getattr(args, "trial_ms", 100.0)
    if not (trial_ms > 0 and math.isfinite(trial_ms)):
        return "--trial-ms must be more than 0 (GPU time per side of a paired trial)"
    # the executor's own checks, made before OUT is written to rather than at the queue
    from kltrans.gate.executor import ExecutorError, parse_cluster

    jobs = getattr(args, "jobs", None)
    if jobs is not None and jobs < 1:
        return "--jobs must be >= 1"
    try:
        parse_cluster(getattr(args, "cluster", None))
    except ExecutorError as e:
        return str(e)
    return None


def _key(it: dict) -> tuple:
    """An item's key, as :func:`label` reports its run (a resumed experiment never takes a
    cards-only skills run for one with the catalogue tail)."""
    strat = label({"strategy": it["strategy"], **_variant(it),
                   "library": {"catalogue": it.get("catalogue", True),
                               "unproven": it.get("unproven", True)}})
    return (it["target"]["name"] if isinstance(it["target"], dict) else it["target"],
            strat, it["seed"])


def run_experiment(args) -> dict:
    from kltrans.gate.backends import resolve_backend
    from kltrans.optimize.search import resolve_variants
    from kltrans.syntax.diagnostics import InputError
    from kltrans.syntax.files import atomic_write

    out = args.out or default_out("experiment")
    if getattr(args, "notes", None) and not os.path.isfile(args.notes):
        raise ExperimentError(f"{args.notes}: no such file (--notes)")  # before any run
    if getattr(args, "merge", None):
        if getattr(args, "resume", False):
            # --merge runs nothing, so it has no run to skip; a partial file is merged by
            # naming it (its runs are read as an experiment.json's are)
            raise ExperimentError("--resume does not go with --merge (which runs nothing); "
                                  "to merge an interrupted experiment's runs, name its "
                                  "OUT/experiment.partial.json among the --merge files")
        return _write(args, out, *_merged(args.merge))
    why = _run_value_error(args)
    if why:  # before any run: every run would fail with it
        raise ExperimentError(why)
    for flag in ("select", "enablers", "patience", "offer_tries", "tune_last"):
        if getattr(args, flag, None) and "skills" not in args.strategies:
            raise ExperimentError(f"--{flag.replace('_', '-')} applies to the skills strategy, "
                                  "which is not run")
    args.corpus = bundled("corpus", args.corpus, "CORPUS (the first argument)")
    args.skills = bundled("skills", args.skills, "--skills")
    if not os.path.isdir(args.corpus):
        raise ExperimentError(f"{args.corpus}: not a directory")
    if not os.path.isdir(args.skills):
        raise ExperimentError(f"{args.skills}: not a directory (the skill library)")
    if "skills" in args.strategies:  # the only strategy that reads the cards
        _check_library(args.skills)
    backend = resolve_backend(args.backend)
    # the skills strategy's variants (blind and memory always take the first kept)
    v = resolve_variants("skills", "builtin", backend, getattr(args, "select", None),
                         getattr(args, "enablers", None), getattr(args, "offer_tries", None),
                         getattr(args, "tune_last", None))
    tg = targets(args.corpus, heldout=not args.no_heldout, own=not args.no_corpus, only=args.only,
                 roots=getattr(args, "roots", None))
    if not tg:
        raise ExperimentError("no target selected")
    items = [{"target": t, "strategy": s, "seed": seed, "budget": args.budget,
              "skills": args.skills, "corpus": args.corpus, "backend": backend,
              "size_limit": args.size_limit, "trials": args.trials,
              "trial_ms": args.trial_ms, "catalogue": getattr(args, "catalogue", True),
              "unproven": getattr(args, "unproven", True),
              "min_gain": getattr(args, "min_gain", 1.0),
              "select": v["select"] if s == "skills" else "first",
              "enablers": bool(v["enablers"]) and s == "skills",
              "patience": getattr(args, "patience", None) if s == "skills" else None,
              "offer_tries": v["offer_tries"] if s == "skills" else None,
              "tune_last": bool(v["tune_last"]) and s == "skills"}
             for t in tg for s in args.strategies for seed in args.seeds]
    # every finished run is kept in experiment.partial.json at once (atomically), so an
    # interrupted experiment resumes with --resume and recomputes nothing it reported
    os.makedirs(out, exist_ok=True)
    partial = os.path.join(out, "experiment.partial.json")
    done: dict = {}
    vendors: dict = {}
    before = 0.0  # seconds spent by the calls this one resumes
    if os.path.lexists(partial) and not os.path.isfile(partial):
        raise InputError.at(partial, "not a file (the experiment keeps its runs there as "
                                     "they end); remove it or name another --out")
    if getattr(args, "resume", False) and os.path.isfile(partial):
        prev = _read_record(partial, "cannot resume from it")
        if (prev["budget"], prev["backend"]) != (args.budget, backend):
            # its runs cannot be reused, and starting over would overwrite them
            raise InputError.at(
                partial, f"cannot resume from it: its runs were made with budget "
                         f"{prev['budget']} on backend {prev['backend']}, this experiment asks "
                         f"budget {args.budget} on backend {backend}",
                hint="resume with the same --budget and --backend, or name another --out "
                     "(without --resume an experiment starts over and replaces the file)")
        done = {(r["target"], label(r), r["seed"]): r for r in prev["runs"]}
        vendors = dict(prev.get("baselines") or prev.get("vendors") or {})
        before = float(prev.get("seconds") or prev.get("wall_seconds") or 0.0)
    t0 = time.perf_counter()
    cmd = "kltrans " + " ".join(sys.argv[1:]) if sys.argv and "experiment" in sys.argv else \
        "kltrans experiment"

    def save():
        atomic_write(partial, json.dumps({
            "budget": args.budget, "backend": backend, "command": cmd,
            "seconds": round(before + time.perf_counter() - t0, 1), "baselines": vendors,
            "runs": list(done.values())}) + "\n")

    base: list = []
    groups: list = []
    if backend == "cuda":
        groups = list(baseline_groups(tg, vendors).values())
        by_name = {t["name"]: t for t in tg}
        base = [{"task": "baseline", "target": by_name[names[0]], "trials": args.trials,
                 "trial_ms": args.trial_ms} for names in groups]
    todo = [it for it in items if _key(it) not in done]
    # each run keeps its gate verdicts as it goes (OUT/checkpoints): a run that a call's
    # time limit cuts short replays them when the experiment is resumed
    ckdir = os.path.join(out, "checkpoints")
    os.makedirs(ckdir, exist_ok=True)
    for it in todo:
        it["checkpoint"] = os.path.join(ckdir, "-".join(map(str, _key(it))) + ".json")

    def keep(i, r):
        if i < len(base):  # a baseline: every target that shares it
            for name in groups[i]:
                vendors[name] = dict(r, target=name)
            save()
            return
        it = todo[i - len(base)]
        if not r.get("ok") and "target" not in r:  # a task the executor lost: whose it was
            r = {"target": it["target"]["name"], "strategy": it["strategy"],
                 "seed": it["seed"], **r}
        done[_key(it)] = r
        save()
        if r.get("ok"):  # kept in the partial file: its verdicts are no longer needed
            with contextlib.suppress(OSError):
                os.remove(it["checkpoint"])

    # one queue, the baselines first: a run does not need its target's baseline (it times
    # its final kernel against the naive one itself), so a slow baseline holds one slot,
    # not the whole experiment; each result is kept the moment it ends
    _map(experiment_task, base + todo, args, backend, keep)
    with contextlib.suppress(OSError):
        os.rmdir(ckdir)  # every run ended and was kept: nothing left to resume
    runs = [done[_key(it)] for it in items]
    wall = before + time.perf_counter() - t0  # every call's, when resumed
    meta = {"command": cmd, "backend": backend, "budget": args.budget, "seeds": args.seeds,
            "strategies": args.strategies, "wall_seconds": round(wall, 1)}
    return _write(args, out, meta, runs, vendors)


def _merged(paths) -> tuple[dict, list, dict]:
    """Runs and vendor timings of several experiment.json files (later files win)."""
    runs: dict = {}
    vendors: dict = {}
    metas = []
    for p in paths:
        d = _read_record(p, "cannot read")
        metas.append(d)
        for r in d.get("runs") or []:
            runs[(r["target"], label(r), r["seed"])] = r
        vendors.update(d.get("vendors") or d.get("baselines") or {})  # or a partial file
    budgets = {m.get("budget") for m in metas}
    backends = {m.get("backend") for m in metas}
    if len(budgets) > 1 or len(backends) > 1:
        raise ExperimentError(f"--merge: the files differ in budget {sorted(map(str, budgets))} "
                              f"or backend {sorted(map(str, backends))}")
    # the experiments behind the files, each once: a merged file names its own (merged_from),
    # so merging it again with one of them counts that one's command and time once
    leaves: dict = {}
    for m in metas:
        for leaf in m.get("merged_from") or [_leaf(m)]:
            leaves.setdefault(leaf["fingerprint"], leaf)
    meta = {"command": " + ".join(x["command"] for x in leaves.values()) +
            f"   (merged: kltrans experiment --merge {' '.join(paths)})",
            "backend": metas[0].get("backend"), "budget": metas[0].get("budget"),
            "seeds": sorted({s for m in metas for s in m.get("seeds") or []}),
            "strategies": sorted({s for m in metas for s in m.get("strategies") or []}),
            "wall_seconds": round(sum(x["wall_seconds"] for x in leaves.values()), 1),
            "merged_from": list(leaves.values())}
    return meta, list(runs.values()), vendors


def _leaf(m: dict) -> dict:
    """One experiment file as a merge input: its command, its time, and a fingerprint of
    its runs (the same runs give the same fingerprint wherever the file is)."""
    import hashlib

    ids = sorted(json.dumps([r.get("target"), label(r), r.get("seed"), r.get("seconds")])
                 for r in m.get("runs") or [])
    return {"fingerprint": hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16],
            "command": m.get("command", "?"),
            "wall_seconds": float(m.get("wall_seconds") or m.get("seconds") or 0)}


def _write(args, out: str, meta: dict, runs: list, vendors: dict) -> dict:
    from kltrans.syntax.files import atomic_write

    summary = summarize(runs, vendors)
    doc = {**meta, "runs": runs, "vendors": vendors, **summary}
    os.makedirs(out, exist_ok=True)
    # compact: the record is read by tools (the table beside it is for people), and a
    # merged record of every run is megabytes that travel with the tree to the GPU box
    atomic_write(os.path.join(out, "experiment.json"),
                 json.dumps(doc, separators=(",", ":")) + "\n")
    text = render(doc)
    atomic_write(os.path.join(out, "experiment.txt"), text)
    if args.results:
        svg = os.path.splitext(args.results)[0] + "_speedup.svg"
        atomic_write(svg, render_svg(summary))
        notes = ""
        if getattr(args, "notes", None):
            try:
                notes = open(args.notes, encoding="utf-8").read()
            except OSError as e:
                raise ExperimentError(f"{args.notes}: cannot read: {e.strerror}") from None
        atomic_write(args.results, render_markdown(doc, os.path.basename(svg), notes))
    if not args.quiet:
        print(text)
    return doc


def _map(fn, items, args, backend, keep=None):
    """Run the items through the executor (the local pool: one slot per GPU, or per core
    on the CPU backend; Dask with ``--cluster``); progress as results come back."""
    from kltrans.gate.executor import ExecutorError, make_executor

    progress = Progress("experiment", len(items), args.quiet)

    def report(i, r):
        it = items[i]
        if keep is not None:
            keep(i, r)
        if it.get("task") == "baseline":
            nv = r.get("naive") or {}
            progress.step(f"{it['target']['name']} baseline: " + (
                f"naive {nv['ms']:.3f} ms" if nv.get("ok") else
                f"naive not timed ({nv.get('reason')})"))
        elif "strategy" in it:
            f = r.get("final") or {}
            progress.step(f"{it['target']['name']} {it['strategy']} seed {it['seed']}: " + (
                f"{f.get('accepted')} accepted / {f.get('evaluations')} evaluations"
                if r.get("ok") else f"error: {r.get('reason')}"))
        else:
            progress.step(it.get("task") or "done")

    try:
        ex = make_executor(getattr(args, "cluster", None), backend, getattr(args, "jobs", None))
    except ExecutorError as e:
        raise ExperimentError(str(e)) from None
    with ex:
        # no whole-task GPU reservation: a search spends much of its time off the GPU
        # (start-up, compiles, host references), and its gate workers take the per-GPU
        # lock (kltrans.gate.devlock) for every run (shared) and timing (alone) on the GPU
        with progress:
            return ex.map(fn, items, gpu=False, on_result=report)


def _f(v, fmt="{:.2f}"):
    return "-" if v is None else fmt.format(v)


def render(doc: dict) -> str:
    lines = [f"# {doc['command']}", f"# backend {doc['backend']}, budget {doc['budget']}, "
             f"seeds {doc['seeds']}, wall {doc['wall_seconds']} s", ""]
    lines.append(f"{'target':28s} {'strategy':12s} {'evals':>5s} {'acc':>4s} {'wasted':>6s} "
                 f"{'same':>4s} {'speedup':>8s} {'/expert':>8s} {'/vendor':>8s} {'to90':>5s}  stop")
    for r in doc["rows"]:
        if "error" in r:
            lines.append(f"{r['target']:28s} {r['strategy']:12s} error: {r['error']}")
            continue
        lines.append(f"{r['target']:28s} {r['strategy']:12s} {r['evaluations']:5d} "
                     f"{r['accepted']:4d} {r['wasted']:6d} {_f(r.get('same_code'), '{:d}'):>4s} "
                     f"{_f(r['speedup']):>8s} "
                     f"{_f(r['expert_fraction']):>8s} {_f(r['over_vendor']):>8s} "
                     f"{r['evals_to_90']:5d}  {r['termination']}")
    lines += ["", f"{'set/strategy':22s} {'targets':>7s} {'geo speedup':>11s} {'geo /expert':>11s} "
              f"{'geo /vendor':>11s} {'evals->90%':>10s} {'evals':>5s} {'wasted':>6s} {'failed':>6s} "
              f"{'same':>4s}"]
    for k, a in doc["aggregate"].items():
        lines.append(f"{k:22s} {a['targets']:7d} {_f(a['geomean_speedup']):>11s} "
                     f"{_f(a['geomean_expert_fraction']):>11s} {_f(a['geomean_over_vendor']):>11s} "
                     f"{a['mean_evals_to_90']:10.1f} {a.get('evaluations', 0):5d} {a['wasted']:6d} "
                     f"{a.get('failed', 0):6d} {_f(a.get('same_code'), '{:d}'):>4s}")
    left = sorted({t for a in doc["aggregate"].values() for t in a.get("left_out") or []})
    if left:
        lines.append(f"(means over the targets every strategy of a set has; left out: "
                     f"{', '.join(left)})")
    return "\n".join(lines) + "\n"


def _note_sections(notes: str) -> list[tuple[str, str]]:
    """The ``## `` sections of a notes file: (title, body); text before the first is ""."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in notes.strip().splitlines():
        if line.startswith("## "):
            out.append((line[3:].strip(), []))
        else:
            out[-1][1].append(line)
    return [(t, "\n".join(b).strip()) for t, b in out if t or "".join(b).strip()]


#: commands longer than this are named by their count, not printed
_COMMAND_CHARS = 300


def render_markdown(doc: dict, svg: str, notes: str = "") -> str:
    """The report: the headline table first, then the method (settings, the command, the
    notes' "How these runs were made"), what is left, every target, and the rest of the
    notes last, as history."""
    sections = _note_sections(notes)
    method = [b for t, b in sections if t.lower().startswith("how these runs")]
    left_notes = [(t, b) for t, b in sections if t.lower().startswith("what is left")]
    history = [(t, b) for t, b in sections
               if not t.lower().startswith(("how these runs", "what is left"))]
    runs = doc["command"].count(" + ") + 1
    head = ["# Results: lineage skills against blind and memory search", "",
            "Geometric-mean speedup over the naive kernel per set and search strategy, from "
            "`bench/results/experiment.json` (backend "
            f"{doc['backend']}, budget {doc['budget']} gate evaluations per search, seeds "
            f"{doc['seeds']}).", "",
            f"![geometric-mean speedup]({svg})", "", "## Headline: geometric means", "",
            "| set / strategy | targets | speedup over naive | fraction of expert | over vendor "
            "| evaluations to 90% | evaluations | wasted evaluations | of them failed compile "
            "or correct | same code (no evaluation) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for k, a in doc["aggregate"].items():
        head.append(f"| {k} | {a['targets']} | {_f(a['geomean_speedup'])} | "
                    f"{_f(a['geomean_expert_fraction'])} | {_f(a['geomean_over_vendor'])} | "
                    f"{a['mean_evals_to_90']:.1f} | {a.get('evaluations', '-')} | {a['wasted']} | "
                    f"{a.get('failed', '-')} | {_f(a.get('same_code'), '{:d}')} |")
    left = sorted({t for a in doc["aggregate"].values() for t in a.get("left_out") or []})
    if left:
        head += ["", "Every mean is over the targets that all strategies of its set have a run "
                 f"for; left out of the means (a strategy has no run for them): "
                 f"{', '.join(left)}."]
    head += ["", "## Method", ""]
    if len(doc["command"]) <= _COMMAND_CHARS:
        head.append(f"Command: `{doc['command']}`.")
    else:
        head.append(f"{runs} `kltrans experiment` runs, merged with `kltrans experiment "
                    "--merge`; each run's command is in the `command` field of "
                    "`bench/results/experiment.json`.")
    head += ["", *[b for b in method if b]] if any(method) else []
    for t, b in left_notes:
        head += ["", f"## {t}", "", b]
    head += ["", "## Per target", "", "| target | strategy | evaluations | accepted | wasted | "
             "same code | speedup | fraction of expert | over vendor | pipeline |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in doc["rows"]:
        if "error" in r:
            head.append(f"| {r['target']} | {r['strategy']} | error: {r['error']} ||||||||")
            continue
        head.append(f"| {r['target']} | {r['strategy']} | {r['evaluations']} | {r['accepted']} | "
                    f"{r['wasted']} | {_f(r.get('same_code'), '{:d}')} | {_f(r['speedup'])} | "
                    f"{_f(r['expert_fraction'])} | "
                    f"{_f(r['over_vendor'])} | `{', '.join(p.split('{')[0] for p in r['pipeline'])}` |")
    if history:
        head += ["", "## History", "", "Earlier runs and decisions, oldest first."]
        for t, b in history:
            body = "\n".join(("#" + ln) if ln.startswith("### ") else ln for ln in b.splitlines())
            head += ["", f"### {t}" if t else "", body] if t else ["", body]
    return "\n".join(head) + "\n"


def render_svg(summary: dict) -> str:
    """Grouped bars: geometric-mean speedup over naive per set and strategy."""
    agg = summary["aggregate"]
    items = [(k, a["geomean_speedup"] or 0.0) for k, a in agg.items()]
    W, H, pad = 640, 320, 50
    top = max([v for _, v in items] + [1.0])
    bw = (W - 2 * pad) / max(1, len(items))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
             f'font-family="sans-serif" font-size="11">',
             f'<text x="{W / 2}" y="16" text-anchor="middle">geometric-mean speedup over '
             f'naive</text>']
    for i, (k, v) in enumerate(items):
        h = (H - 2 * pad) * v / top
        x = pad + i * bw + 4
        color = {"skills": "#2b7bb9", "skills-cards": "#7fb3dc",
                 "skills-proven": "#5a97cb", "blind": "#b9b92b",
                 "memory": "#b92b5e"}.get(
            k.split("/")[1], "#888")
        parts.append(f'<rect x="{x:.1f}" y="{H - pad - h:.1f}" width="{bw - 8:.1f}" '
                     f'height="{h:.1f}" fill="{color}"/>')
        parts.append(f'<text x="{x + (bw - 8) / 2:.1f}" y="{H - pad - h - 4:.1f}" '
                     f'text-anchor="middle">{v:.2f}</text>')
        parts.append(f'<text x="{x + (bw - 8) / 2:.1f}" y="{H - pad + 14:.1f}" '
                     f'text-anchor="middle">{k}</text>')
    parts.append(f'<line x1="{pad}" y1="{H - pad}" x2="{W - pad}" y2="{H - pad}" stroke="black"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
