"""``kltrans optimize`` and ``kltrans experiment``: argument parsing and output."""

from __future__ import annotations

import argparse
import json
import os
import sys


def register(sub) -> None:
    so = sub.add_parser(
        "optimize", help="optimize a kernel with the skill library under a gate budget",
        description="Find the cards that apply to KERNEL (anchor, requires/conflicts, "
                    "preconditions at the site), let a filler choose a card, a site and "
                    "option values, and keep each rewrite that passes the gate (and, on a "
                    "GPU, is faster in every paired trial). Prints the optimized kernel "
                    "unless -o or --json.")
    so.add_argument("kernel", metavar="KERNEL.cu")
    so.add_argument("--workload", required=True, metavar="DIR", help="the workload folder")
    so.add_argument("--skills", default=None, metavar="DIR",
                    help="skill library (default: skills/ here, else the one kltrans ships)")
    so.add_argument("--corpus", default=None, metavar="DIR",
                    help="corpus for similarity and the memory strategy (default: corpus/ "
                         "here, else the one kltrans ships)")
    so.add_argument("--budget", type=int, default=30, metavar="N", help="gate evaluations (default 30)")
    so.add_argument("--time-budget", type=float, default=None, metavar="S", help="seconds")
    so.add_argument("--strategy", choices=("skills", "blind", "memory"), default="skills")
    so.add_argument("--filler", choices=("builtin", "llm"), default="builtin")
    so.add_argument("--fallback", choices=("builtin",), default=None,
                    help="when the LLM is unavailable, go on with the builtin filler")
    so.add_argument("--llm-base-url", default=None, metavar="URL",
                    help="OpenAI-compatible API base URL (default: $OPENAI_BASE_URL or OpenAI)")
    so.add_argument("--llm-model", default=None, metavar="NAME")
    so.add_argument("--llm-timeout", type=float, default=60.0, metavar="S")
    so.add_argument("--llm-retries", type=int, default=3, metavar="N",
                    help="bad replies rejected and retried at most N times (default 3)")
    so.add_argument("--exclude-own", action="store_true",
                    help="ignore the evidence of the workload's own lineage")
    so.add_argument("--no-catalogue", dest="catalogue", action="store_false",
                    help="skills: offer the cards only (by default the optimize passes no "
                         "card covers follow them, preconditions checked, no evidence)")
    so.add_argument("--proven-only", dest="unproven", action="store_false",
                    help="skills: offer only sites where every precondition holds (by default "
                         "sites where none fails but some are unknown follow, the gate decides)")
    so.add_argument("--backend", choices=("cuda", "cpu", "auto"), default="auto")
    so.add_argument("--kernel-name", default=None, metavar="NAME")
    so.add_argument("--arch", default=None)
    so.add_argument("--assume", action="append", default=[], metavar="FACT")
    so.add_argument("--size-limit", type=int, default=None, metavar="N",
                    help="gate only test sizes with at most N elements")
    so.add_argument("--seed", type=int, default=0)
    so.add_argument("--trials", type=int, default=5, help="paired trials per timing (GPU)")
    so.add_argument("--trial-ms", type=float, default=100.0, metavar="MS",
                    help="GPU time per side of a paired trial; slow kernels get fewer "
                         "repetitions (at least 3) (default: 100)")
    so.add_argument("--min-gain", type=float, default=1.0, metavar="X",
                    help="GPU: keep a candidate faster in every trial only if its median "
                         "paired speedup is at least X (default 1: any gain)")
    so.add_argument("--select", choices=("first", "best"), default=None,
                    help="skills, GPU: move to the first candidate kept, or time the rest of "
                         "the state's first round too (each offer with its evidence values) "
                         "and move to the fastest kept (default with the builtin filler on "
                         "a GPU; first otherwise)")
    so.add_argument("--enablers", action=argparse.BooleanOptionalAction, default=None,
                    help="skills, GPU: a correct candidate not faster alone whose rewrite makes "
                         "new cards apply is timed again with up to 3 of them on top (one "
                         "evaluation each); a pair faster than the current kernel is kept "
                         "(default: on with the builtin filler on a GPU)")
    so.add_argument("--patience", type=int, default=None, metavar="N",
                    help="stop when N evaluations in a row have kept no candidate (default: "
                         "the budget alone ends the search)")
    so.add_argument("--offer-tries", type=int, default=None, metavar="N",
                    help="skills: in one kernel state, an offer (a card at a site) gated N "
                         "times without being kept leaves the menu; the search ends when "
                         "none is left; 0: no limit, the filler explores each offer's option "
                         "values until the budget ends (default: 1 with the builtin filler "
                         "on a GPU, else no limit)")
    so.add_argument("--tune-last", action=argparse.BooleanOptionalAction, default=None,
                    help="skills: hold back the tuning cards (those whose measured steps "
                         "alone were typically a tie: unroll, restrict-pointers, "
                         "stream-hints, ...) until no other offer is left, then try each "
                         "of their offers once and keep the first faster (default: off)")
    so.add_argument("-o", "--output", default=None, metavar="OUT", help="write the optimized kernel")
    so.add_argument("--log", default=None, metavar="FILE", help="write the trajectory (JSON)")
    so.add_argument("--checkpoint", default=None, metavar="FILE",
                    help="keep every gate verdict in FILE as it is reached; run the same "
                         "command again after an interruption and the search replays them "
                         "instead of gating again")
    so.add_argument("--canonicalize", action="store_true",
                    help="start from the kernel's canonical form (kltrans opt -p canonicalize, "
                         "checked to keep the machine code)")
    so.add_argument("--menu", action="store_true",
                    help="skills: print the menu the search starts from (each offer: card, "
                         "site, evidence, option values) and every card or catalogue pass "
                         "left out with the reason, then stop; nothing is gated")
    so.add_argument("--json", action="store_true", help="print the trajectory as JSON")
    so.add_argument("-q", "--quiet", action="store_true", help="no progress")
    so.set_defaults(func=cmd_optimize)

    se = sub.add_parser(
        "experiment", help="skills against blind and memory baselines on the corpus and held-out set",
        description="For every corpus workload (its naive root, skills from the other "
                    "workloads only) and every held-out instance (its naive kernel, all "
                    "skills), run each strategy with the same budget and seeds; report "
                    "speedups, fraction of expert and vendor speed, evaluations to 90%% and "
                    "evaluations wasted.")
    se.add_argument("corpus", nargs="?", default=None, metavar="CORPUS",
                    help="default: corpus/ here, else the one kltrans ships")
    se.add_argument("--skills", default=None, metavar="DIR",
                    help="default: skills/ here, else the one kltrans ships")
    se.add_argument("--budget", type=int, default=30, metavar="N")
    se.add_argument("--strategies", nargs="+", default=["skills", "blind", "memory"],
                    choices=("skills", "blind", "memory"))
    se.add_argument("--no-catalogue", dest="catalogue", action="store_false",
                    help="skills: the cards only, no catalogue tail (reported as skills-cards)")
    se.add_argument("--proven-only", dest="unproven", action="store_false",
                    help="skills: no unproven offers (reported as skills-proven)")
    se.add_argument("--seeds", nargs="+", type=int, default=[0])
    se.add_argument("--only", nargs="+", default=None, metavar="NAME", help="only these targets")
    se.add_argument("--no-heldout", action="store_true", help="corpus workloads only")
    se.add_argument("--no-corpus", action="store_true",
                    help="no corpus workload from its naive.cu (held-out instances, and the "
                         "roots of --roots)")
    se.add_argument("--roots", nargs="+", choices=("loo", "own"), default=None,
                    help="also each corpus workload from its lineage's naive end: with the "
                         "other workloads' cards only (loo: W@root), or with its own too "
                         "(own: W@root+own); both share one baseline timing")
    se.add_argument("--backend", choices=("cuda", "cpu", "auto"), default="auto")
    se.add_argument("--size-limit", type=int, default=None, metavar="N")
    se.add_argument("--trials", type=int, default=5)
    se.add_argument("--trial-ms", type=float, default=100.0, metavar="MS",
                    help="GPU time per side of a paired trial (default: 100)")
    se.add_argument("--min-gain", type=float, default=1.0, metavar="X",
                    help="every strategy: keep a candidate only if its median paired speedup "
                         "is at least X (default 1; its runs are reported as STRATEGY@X)")
    se.add_argument("--select", choices=("first", "best"), default=None,
                    help="the skills strategy's step: first candidate kept, or the fastest "
                         "of each state's first round (reported as skills+best; the default "
                         "on a GPU)")
    se.add_argument("--enablers", action=argparse.BooleanOptionalAction, default=None,
                    help="the skills strategy tries a step not faster alone with the card it "
                         "makes apply on top (reported as skills+enablers; the default on a "
                         "GPU)")
    se.add_argument("--patience", type=int, default=None, metavar="N",
                    help="the skills strategy stops when N evaluations in a row kept no "
                         "candidate (reported as skills+pN)")
    se.add_argument("--offer-tries", type=int, default=None, metavar="N",
                    help="the skills strategy gates an offer at most N times per kernel "
                         "state without keeping it (reported as skills+tN; default 1 on a "
                         "GPU; 0: no limit)")
    se.add_argument("--tune-last", action=argparse.BooleanOptionalAction, default=None,
                    help="the skills strategy tries the tuning cards last, each offer once "
                         "(reported as skills+...+last; default: off)")
    se.add_argument("--out", default=None, metavar="DIR",
                    help="raw JSON (default kltrans-out/experiment)")
    se.add_argument("--results", default=None, metavar="FILE",
                    help="write the Markdown report here (e.g. docs/RESULTS.md)")
    se.add_argument("--notes", default=None, metavar="FILE",
                    help="Markdown put into the report after its command line (what the "
                         "tables cannot say: how the runs were made, what they show)")
    se.add_argument("--cluster", default=None, metavar="SPEC",
                    help="run the optimizations through an executor: local:N or tcp://HOST:PORT")
    se.add_argument("--jobs", type=int, default=None, metavar="N",
                    help="local pool slots (default: one per GPU; CPU backend: the cores); "
                         "more slots than GPUs overlap one search's start-up and compiles "
                         "with another's GPU work; a per-GPU lock keeps every timing "
                         "alone on its GPU (correctness runs share it)")
    se.add_argument("--resume", action="store_true",
                    help="skip the runs already kept in OUT/experiment.partial.json")
    se.add_argument("--merge", nargs="+", default=None, metavar="JSON",
                    help="summarize the runs of earlier experiment.json files (no run)")
    se.add_argument("-q", "--quiet", action="store_true")
    se.set_defaults(func=cmd_experiment)


def cmd_optimize(args) -> int:
    from kltrans.syntax.diagnostics import UsageError
    from kltrans.lineage.walk import WalkError
    from kltrans.optimize.search import OptimizeError, OptimizeOptions, menu_report, run
    from kltrans.syntax.files import atomic_write

    from kltrans.syntax.files import output_problem

    # every output checked before any gate time is spent: not a directory, not below a
    # file, not the input kernel and not another of these outputs
    outs = [(f, p) for f, p in (("-o", args.output), ("--log", args.log),
                                ("--checkpoint", args.checkpoint)) if p]
    for k, (flag, path) in enumerate(outs):
        why = output_problem(path, [(args.kernel, "the input kernel")] +
                             [(p, f"the {f} file") for f, p in outs[:k]])
        if why:
            raise UsageError(f"{path}: {flag} {why}")
    from kltrans.paths import bundled

    args.skills = bundled("skills", args.skills, "--skills", args.strategy == "skills")
    args.corpus = bundled("corpus", args.corpus, "--corpus", args.strategy == "memory")
    opts = OptimizeOptions(
        args.kernel, args.workload, skills=args.skills, corpus=args.corpus, budget=args.budget,
        time_budget=args.time_budget, strategy=args.strategy, filler=args.filler,
        backend=args.backend, kernel_name=args.kernel_name, exclude_own=args.exclude_own,
        catalogue=args.catalogue, unproven=args.unproven,
        seed=args.seed, arch=args.arch, assume=tuple(args.assume), size_limit=args.size_limit,
        trials=args.trials, trial_ms=args.trial_ms, llm_base_url=args.llm_base_url, llm_model=args.llm_model,
        llm_timeout=args.llm_timeout, llm_retries=args.llm_retries, fallback=args.fallback,
        checkpoint=args.checkpoint, min_gain=args.min_gain, select=args.select,
        enablers=args.enablers, patience=args.patience, offer_tries=args.offer_tries,
        tune_last=args.tune_last, progress=not args.quiet, canonicalize=args.canonicalize)
    if args.menu:
        for flag, given in (("-o", args.output), ("--log", args.log),
                            ("--checkpoint", args.checkpoint)):
            if given:
                raise UsageError(f"--menu gates nothing and writes nothing; {flag} does not "
                                 f"go with it")
        try:
            doc = menu_report(opts)
        except (OptimizeError, WalkError) as e:
            raise UsageError(str(e)) from None
        sys.stdout.write(json.dumps(doc, indent=1) + "\n" if args.json else render_menu(doc))
        return 0
    try:
        doc = run(opts)
    except (OptimizeError, WalkError) as e:
        raise UsageError(str(e)) from None
    failed = doc["termination"]["kind"] == "llm-unavailable"
    if args.log:  # the record of what happened, a failed run's too
        atomic_write(args.log, json.dumps(doc, indent=1) + "\n")
    if args.output and not failed:
        atomic_write(args.output, doc["final"]["source"])
    if args.json:
        print(json.dumps(doc, indent=1))
    elif not args.output and not failed:
        sys.stdout.write(doc["final"]["source"])
    for ev in doc["events"]:
        if ev.get("kind") == "filler-failed" and any(
                e.get("kind") == "fallback" for e in doc["events"]):
            print(f"kltrans optimize: warning: the {ev.get('filler', 'llm')} filler failed "
                  f"({ev.get('error')}: {ev.get('reason')}); going on with the builtin "
                  f"filler (--fallback builtin)", file=sys.stderr)
            break
    f, t = doc["final"], doc["termination"]
    sp = f"{f['speedup_vs_start']:.3f}x" if f["measured"] else "not measured (no GPU)"
    print(f"kltrans optimize: {doc['config']['workload']} ({doc['config']['strategy']}): "
          f"{f['accepted']} accepted, {f['rejected']} rejected in {f['evaluations']} "
          f"evaluation(s); speedup {sp}; stopped: {t['kind']}", file=sys.stderr)
    for a in doc["accepted"]:
        print(f"  +{a['evaluation']:3d}: {a['spec']} at site {a['site']}", file=sys.stderr)
    if t["kind"] == "llm-unavailable":
        print(f"kltrans optimize: error: the LLM filler stopped the run: {t['reason']} "
              f"(--fallback builtin goes on without it); no kernel written",
              file=sys.stderr)
        return 1
    return 0


def render_menu(doc: dict) -> str:
    """``kltrans optimize --menu``'s text: the offers in the order the builtin filler takes
    them (round one), then what was left out and why, one line each."""
    from kltrans.passes.base import format_value

    lib = doc["library"]
    kinds = [o["kind"] for o in doc["offers"]]
    head = (f"{doc['kernel']}: {doc['kernel_name']}, workload {doc['workload']} "
            f"({lib['cards']} cards from {lib['dir']}"
            + (f", {', '.join(lib['excluded_workloads'])}'s own left out"
               if lib["excluded_workloads"] else "")
            + (", facts " + ", ".join(doc["facts"]) if doc["facts"] else "") + ")")
    out = [head, f"{len(kinds)} offer(s): {kinds.count('card')} card(s), "
                 f"{kinds.count('catalogue')} from the catalogue tail, "
                 f"{kinds.count('near-miss')} near miss(es)"]
    for o in doc["offers"]:
        ev = ", ".join(f"{e['speedup']:g}x {e['workload']}" for e in o["effect"][:3]
                       if e.get("speedup") is not None)
        more = len(o["effect"]) - 3
        what = {"card": f"evidence {ev}{f' (+{more} more)' if more > 0 else ''}" if ev
                else "no measured effect",
                "catalogue": "catalogue tail: no evidence",
                "near-miss": "near miss: " + ", ".join(o["unproven"]) + " unknown, the gate "
                             "decides"}[o["kind"]]
        if o.get("tuning"):
            what += "; a tuning card (--tune-last: after the others)"
        out.append(f"  {o['id']:<4} {o['card']:<30} {o['location']}: {what}")
        tune = [f"{n} in {', '.join(format_value(v) for v in o_['values'])}"
                for n, o_ in o["options"].items() if o_["tune"] and len(o_["values"]) > 1]
        first = ",".join(f"{n}={format_value(o_['default'])}" for n, o_ in o["options"].items())
        if first:
            out.append(f"       first {o['pass']}{{{first}}}")
        if tune:
            out.append(f"       then  {'; '.join(tune)}, one at a time")
    out.append(f"{len(doc['refused'])} left out:")
    for r in doc["refused"]:
        where = r.get("location") or doc["kernel"]
        pre = f"{r['precondition']}: " if r.get("precondition") else ""
        out.append(f"  {r['card']:<35} {where}: {pre}{r['reason']}")
    return "\n".join(out) + "\n"


def cmd_experiment(args) -> int:
    from kltrans.syntax.diagnostics import UsageError
    from kltrans.optimize.experiment import ExperimentError, run_experiment
    from kltrans.syntax.files import output_problem

    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UsageError(f"{args.out}: --out is a file; name a directory")
    for flag, path in (("--results", args.results),):
        why = path and output_problem(path, [args.notes])
        if why:
            raise UsageError(f"{path}: {flag} {why}")
    try:
        run_experiment(args)
    except ExperimentError as e:
        raise UsageError(str(e)) from None
    return 0
