"""``kltrans generality SUITE``: the measures of :mod:`kltrans.generality` over a suite."""

from __future__ import annotations

import json
import os
import sys
import time

from kltrans.paths import bundled
from kltrans.progress import Progress

MEASURES = ("explain", "walk", "forward", "speedup")


def register(sub) -> None:
    sp = sub.add_parser(
        "generality", help="how much of a suite of others' lineages kltrans handles",
        description="For every lineage of SUITE (folders with history.yaml): diff --explain "
                    "coverage of each adjacent step, the backward walk of the expert (did it "
                    "reach a naive kernel, judged on the PTX), the forward search from the "
                    "naive version (CPU: gate verdict; GPU: fraction of the expert's speed) "
                    "and, on a GPU, the expert against the naive version. Prints a table; "
                    "--out writes NAME.json, NAME.txt and NAME.html.")
    sp.add_argument("suite", metavar="SUITE", help="a suite folder (corpus/wild) or one lineage")
    sp.add_argument("--only", nargs="+", metavar="LINEAGE", help="only these lineages")
    sp.add_argument("--measures", default=None, metavar="LIST",
                    help="comma-separated, of explain, walk, forward, speedup (default: "
                         "explain,walk,forward, and speedup on a GPU)")
    sp.add_argument("--backend", default="auto", choices=("cuda", "cpu", "auto"))
    sp.add_argument("--skills", default=None, metavar="DIR",
                    help="skill library for the forward search (default: skills/ here, else "
                         "the one kltrans ships)")
    sp.add_argument("--budget", type=int, default=30, metavar="N",
                    help="forward: gate evaluations per naive version (default 30)")
    sp.add_argument("--seed", type=int, default=0)
    sp.add_argument("--depth", type=int, default=2, metavar="K",
                    help="explain: at most K passes per step (default 2)")
    sp.add_argument("--explain-seconds", type=float, default=60.0, metavar="S",
                    help="explain: search time per step (default 60)")
    sp.add_argument("--walk-seconds", type=float, default=600.0, metavar="S",
                    help="walk: wall-clock limit per expert, model checks included "
                         "(default 600; past it the walk ends with termination time-limit)")
    sp.add_argument("--size-limit", type=int, metavar="ELEMS",
                    help="walk and forward: gate only the test sizes with at most ELEMS elements")
    sp.add_argument("--max-steps", type=int, default=60, metavar="N",
                    help="walk: at most N steps (default 60)")
    sp.add_argument("--jobs", type=int, metavar="N", help="tasks at once (default: the "
                                                          "executor's: GPUs or cores)")
    sp.add_argument("--cluster", metavar="SPEC", help="run on Dask: local:N or tcp://HOST:PORT")
    sp.add_argument("--merge", metavar="REPORT.json", action="append", default=[],
                    help="take the measures this run does not make from an earlier report "
                         "(a CPU run's explain and walk with a GPU run's speedup and "
                         "forward); several may be given, each for some of the lineages, "
                         "none two for the same lineage and measure; REPORT.json:m1,m2 "
                         "takes only those measures; --measures none only merges")
    sp.add_argument("--out", metavar="DIR", help="write NAME.json, NAME.txt and NAME.html here")
    sp.add_argument("--name", default="generality", help="file name stem for --out")
    sp.add_argument("--force", action="store_true", help="--out: replace files already there")
    sp.add_argument("--json", action="store_true", help="print the report as JSON")
    sp.add_argument("--quiet", action="store_true", help="no progress")
    sp.add_argument("--canonicalize", action="store_true",
                    help="explain, walk and optimize from canonical forms (kltrans opt -p "
                         "canonicalize), round trips up to canonical form")
    sp.set_defaults(func=cmd_generality)


def _side(v) -> dict:
    return {"variant": v.variant, "path": os.path.abspath(v.path), "kernel": v.kernel,
            "name_expression": v.name_expression, "bench_size": v.bench_size, "step": v.step}


def items_for(lineages, measures, args, backend: str) -> list[dict]:
    """The tasks of a run, as plain data."""
    from kltrans.gate.ptx import mechanisms
    from kltrans.generality.measure import lineage_facts

    items = []
    for lin in lineages:
        wdir = os.path.abspath(lin.workload)
        common = {"lineage": lin.name, "workload": wdir,
                  "canonicalize": bool(getattr(args, "canonicalize", False))}
        if "explain" in measures:
            facts = lineage_facts(wdir)
            for a, b in lin.pairs():
                items.append({"measure": "explain", **common, "a": _side(a), "b": _side(b),
                              "facts": facts, "depth": args.depth,
                              "time_limit": args.explain_seconds})
        if "walk" in measures:
            items.append({"measure": "walk", **common, "expert": _side(lin.expert),
                          "naive_mechanisms": mechanisms(lin.naive.path,
                                                         lin.naive.name_expression) or [],
                          "backend": backend, "size_limit": args.size_limit,
                          "max_steps": args.max_steps,
                          "time_limit": getattr(args, "walk_seconds", None)})
        if "forward" in measures:
            items.append({"measure": "forward", **common, "naive": _side(lin.naive),
                          "expert": _side(lin.expert), "backend": backend,
                          "skills": os.path.abspath(args.skills), "budget": args.budget,
                          "seed": args.seed, "size_limit": args.size_limit})
        if "speedup" in measures:
            items.append({"measure": "speedup", **common, "naive": _side(lin.naive),
                          "expert": _side(lin.expert)})
    return items


def run_task(item: dict) -> dict:
    """One task of any measure (the executor's entry point)."""
    from kltrans.generality import measure

    fn = {"explain": measure.explain_task, "walk": measure.walk_task,
          "forward": measure.forward_task, "speedup": measure.speedup_task}[item["measure"]]
    return fn(item)


def _describe(item: dict, r: dict) -> str:
    m = item["measure"]
    if m == "explain":
        return (f"{item['lineage']} {item['a']['variant']} -> {item['b']['variant']}: "
                f"{r.get('explained')}/{r.get('actions')} explained")
    if m == "walk":
        return f"{item['lineage']} walk: {r.get('termination')} after {r.get('steps')} step(s)"
    if m == "forward":
        return f"{item['lineage']} forward: {r.get('verdict') or r.get('reason')}"
    return f"{item['lineage']} expert vs naive: {r.get('speedup') or r.get('reason')}"


def _read_report(path: str) -> dict:
    from kltrans.syntax.diagnostics import UsageError
    from kltrans.generality.report import REPORT_SCHEMA
    from kltrans.syntax.records import schema_problem

    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror or e}") from None
    except ValueError as e:
        raise UsageError(f"{path}: not a JSON report: {e}") from None
    problem = schema_problem(REPORT_SCHEMA, doc)
    if problem:
        raise UsageError(f"{path}: not a generality report: {problem}")
    return doc


def _merge_arg(arg: str) -> tuple[str, list | None]:
    """``REPORT.json`` or ``REPORT.json:explain,walk`` -> (path, measures or None)."""
    path, sep, tail = arg.rpartition(":")
    if sep and tail and all(m in MEASURES for m in tail.split(",")):
        return path, tail.split(",")
    return arg, None


def _carried(paths: list, lineages, measures) -> dict:
    """measure -> results, from the reports at ``paths``, for the measures they have and
    this run does not make. Each report's lineages must be among this run's; no two may
    give the same measure of the same lineage."""
    from kltrans.syntax.diagnostics import UsageError

    names = {lin.name for lin in lineages}
    out: dict = {}
    seen: dict = {}
    for arg in paths:
        path, only = _merge_arg(arg)
        doc = _read_report(path)
        have = [r["name"] for r in doc["lineages"]]
        extra = [n for n in have if n not in names]
        if extra:
            raise UsageError(f"{path}: its lineages are not this run's ({extra[0]!r} is "
                             f"not among {', '.join(sorted(names))})")
        if only is not None and not set(only) <= set(doc["config"]["measures"]):
            missing = sorted(set(only) - set(doc["config"]["measures"]))
            raise UsageError(f"{path}: has no {missing[0]} measure to merge")
        for m in doc["config"]["measures"]:
            if m in measures or (only is not None and m not in only):
                continue
            key = {"explain": "pairs"}.get(m, m)
            for r in doc["lineages"]:
                got = r.get(key)
                if got is None:
                    continue
                if (r["name"], m) in seen:
                    raise UsageError(f"{path}: {m} of {r['name']} is in {seen[r['name'], m]} "
                                     f"too; merge each once")
                seen[r["name"], m] = path
                out.setdefault(m, []).extend(got if isinstance(got, list) else [got])
    return out


def cmd_generality(args) -> int:
    from kltrans.syntax.diagnostics import UsageError
    from kltrans.gate.backends import resolve_backend
    from kltrans.gate.executor import ExecutorError, make_executor
    from kltrans.generality.report import assemble, render_html, render_text
    from kltrans.generality.suite import SuiteError, load_suite
    from kltrans.syntax.files import atomic_write, output_problem

    if args.budget < 1 or args.depth < 0 or args.explain_seconds <= 0 or args.max_steps < 1 \
            or args.walk_seconds <= 0:
        raise UsageError("--budget and --max-steps must be 1 or more, --depth 0 or more, "
                         "--explain-seconds and --walk-seconds above 0")
    be = resolve_backend(args.backend)
    if args.measures is None:
        measures = ["explain", "walk", "forward"] + (["speedup"] if be == "cuda" else [])
    else:
        measures = [m.strip() for m in args.measures.split(",") if m.strip()]
        if measures == ["none"] and args.merge:
            measures = []
        bad = [m for m in measures if m not in MEASURES]
        if bad or (not measures and not args.merge):
            raise UsageError(f"--measures: unknown measure {bad[0] if bad else '(none)'!r}",
                             f"measures: {', '.join(MEASURES)}")
        if "speedup" in measures and be != "cuda":
            raise UsageError("--measures speedup needs a GPU (the cuda backend)")
    if "forward" in measures:
        args.skills = bundled("skills", args.skills, "--skills")
    if "forward" in measures and not os.path.isdir(args.skills):
        raise UsageError(f"{args.skills}: no skill library there (give one with --skills)")
    outs = []
    if args.out:
        outs = [os.path.join(args.out, f"{args.name}.{ext}") for ext in ("json", "txt", "html")]
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise UsageError(f"{args.out}: --out is a file; name a directory")
        for p in outs:
            why = output_problem(p, [_merge_arg(a)[0] for a in args.merge], parents=True)
            if why:
                raise UsageError(f"{p}: --out {why}")
        there = [p for p in outs if os.path.exists(p)]
        if there and not args.force:
            raise UsageError(f"{there[0]}: already there (--force replaces it)")
    try:
        lineages = load_suite(args.suite, args.only)
    except SuiteError as e:
        raise UsageError(str(e)) from None
    carried = _carried(args.merge, lineages, measures) if args.merge else {}
    items = items_for(lineages, measures, args, be)
    results: dict = {m: [] for m in measures}
    progress = Progress("generality", len(items), args.quiet)

    def keep(i, r):
        it = items[i]
        r = dict(r)
        r.setdefault("lineage", it["lineage"])
        if it["measure"] == "explain":
            r.setdefault("a", it["a"]["variant"])
            r.setdefault("b", it["b"]["variant"])
            r.setdefault("step", it["b"]["step"])
            for k, v in (("actions", 0), ("explained", 0), ("full", False)):
                r.setdefault(k, v)
        elif it["measure"] == "walk":
            for k, v in (("steps", 0), ("termination", "lost"), ("reached_naive", False),
                         ("false_naive", False)):
                r.setdefault(k, v)
        results[it["measure"]].append(r)
        progress.step(_describe(it, r))

    t0 = time.perf_counter()
    try:
        ex = make_executor(args.cluster, be, args.jobs)
    except ExecutorError as e:
        raise UsageError(str(e)) from None
    try:
        with ex:
            ex.map(run_task, items, gpu=False, on_result=keep)
    finally:
        progress.close()
    for m, rs in carried.items():
        results[m] = rs
    config = {"suite": args.suite, "backend": be,
              "measures": measures + [m for m in carried if m not in measures],
              "measured": measures,
              "lineages": [lin.name for lin in lineages], "budget": args.budget,
              "seed": args.seed, "depth": args.depth, "explain_seconds": args.explain_seconds,
              "walk_seconds": args.walk_seconds,
              "size_limit": args.size_limit, "max_steps": args.max_steps,
              "skills": args.skills, "canonicalize": bool(args.canonicalize),
              "wall_seconds": round(time.perf_counter() - t0, 1),
              "command": "kltrans " + " ".join(sys.argv[1:]) if sys.argv else ""}
    if args.merge:
        config["merged"] = [{"from": a, "config": _read_report(_merge_arg(a)[0])["config"]}
                            for a in args.merge]
    doc = assemble(lineages, results, config)
    text = render_text(doc)
    if outs:
        atomic_write(outs[0], json.dumps(doc, indent=1) + "\n")
        atomic_write(outs[1], text)
        atomic_write(outs[2], render_html(doc))
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(text, end="")
        if outs:
            print(f"wrote {', '.join(outs)}")
    return 0
