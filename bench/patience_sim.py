"""What ``--patience N`` and ``--offer-tries N`` would have done to the recorded H200 searches.

``--patience N`` stops a search when N evaluations in a row have kept no candidate (none
faster in every paired trial since the last one kept). Cutting a search short only drops
the end of its trajectory, so on a recorded run the rule can be replayed exactly up to the
stop: the evaluations spent and wasted are counted from the record, and the speedup is the
product of the paired medians of the steps accepted by then (``speedup_vs_start``), as the
search itself reports it. That product stands in for the final side-by-side timing of the
recorded runs (the "None" rows give both, for comparison). Nothing is timed here, and a
new run would differ where timing noise turns a verdict; the plan that decides on the
option reads real runs (bench/results/patience_plan.txt).

``--offer-tries N`` drops an offer (a card at a site) from a kernel state's menu once it
has been gated there N times without being kept. Its replay skips those evaluations of
the record; where a skipped one was kept, the record says nothing past it and the replay
stops there (the steps found before it count). A real run would spend the budget the
skips free on offers the record never reached, so "open" gives how many evaluations the
rule still allows in the kernel the record ended on (at most the budget left): every offer
its menu has with this library (``final_menu``: cards, catalogue tail, near misses), less
the evaluations the record spent there. That is what would be added to the waste if
nothing more is kept; a real run that keeps something there moves on to a new menu. A
replay that stopped early counts no "open" (its offers were reached in the record).
The plan is bench/results/offer_tries_plan.txt.

    python bench/patience_sim.py [--record bench/results/experiment.json] [--label skills+best]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

KEPT = ("accepted", "outranked", "kept")  # faster in every trial when it was timed


def replay(run: dict, patience: int | None) -> tuple[float, int, int]:
    """(speedup over the start, evaluations wasted, evaluations spent) of ``run`` had it
    stopped by ``patience``."""
    timed = sorted((c for c in run["candidates"] if c.get("evaluation")),
                   key=lambda c: c["evaluation"])
    last, spent = 0, (timed[-1]["evaluation"] if timed else 0)
    for c in timed:
        if c["verdict"] in KEPT:
            last = c["evaluation"]
        elif patience and c["evaluation"] - last >= patience:
            spent = c["evaluation"]
            break
    # a step counts once it was found by then (--select best moves when the search stops)
    acc = [a for a in run["accepted"] if a.get("found_at", a["evaluation"]) <= spent
           and a.get("speedup_vs_start")]
    wasted = sum(1 for c in timed if c["evaluation"] <= spent
                 and c["verdict"] in ("rejected", "outranked"))
    return (acc[-1]["speedup_vs_start"] if acc else 1.0), wasted, spent


def _offer(c: dict) -> tuple:
    return (c.get("card") or c["spec"].split("{")[0], c["site"])


def _states(run: dict) -> list[int]:
    """The kernel state of each candidate (0 = the start): the record keeps none, but the
    search moved after each accepted step's ``evaluation``; a candidate not gated belongs
    to the state of the last one gated before it."""
    moves = sorted(a["evaluation"] for a in run["accepted"])
    out, last = [], 0
    for c in run["candidates"]:
        e = c.get("evaluation")
        out.append(sum(1 for m in moves if m < (e or last + 0.5)))
        last = e or last
    return out


def final_menu(run: dict, corpus: str, skills: str) -> set:
    """The (card, site) offers of the kernel ``run`` ended on, as the skills strategy's
    menu (cards, catalogue tail and near misses) has them with this library: the offers a
    real run with ``--offer-tries`` could still gate there."""
    from kltrans.gate.run import pick_kernel
    from kltrans.optimize.retrieve import build_menu, corpus_profiles, load_library, \
        workload_profile
    from kltrans.optimize.search import OptimizeOptions, search_context
    from kltrans.syntax import parse
    from kltrans.workload.spec import load_workload

    where = os.path.join(corpus, "heldout") if run["kind"] == "heldout" else corpus
    wl = load_workload(os.path.join(where, run["target"]))
    start = wl.kernel_path("naive")
    unit = parse(run["final"]["source"].encode("utf-8"), start)
    kernel, _ = pick_kernel(wl, start, unit, None)
    _, ctx = search_context(OptimizeOptions(start, wl.path), wl, kernel)
    cards = load_library(skills, (run.get("library") or {}).get("excluded_workloads", ()))
    menu = build_menu(unit, ctx, cards, workload_profile(wl), corpus_profiles(corpus), [],
                      catalogue=True, unproven=True)
    return {(o.card, o.site) for o in menu}


def replay_tries(run: dict, tries: int | None, budget: int = 30, menu: set | None = None,
                 cards_only: bool = False, scope: str = "state") -> tuple[float, int, int, int]:
    """(speedup over the start, evaluations wasted, spent, open) of ``run`` had it gated
    an offer at most ``tries`` times per kernel state without keeping it. ``menu``: the
    final kernel's offers (:func:`final_menu`), for an "open" that counts every offer
    there, not only those the record reached. ``cards_only``: skip the catalogue tail and
    the near misses too (``--no-catalogue --proven-only``). ``scope="run"``: an offer's
    evaluations that kept nothing count over the whole run, not per kernel state (an offer
    retired once is not offered again after a later step; no such option exists: this
    asks what it would save, and what it would cost)."""
    states = _states(run)
    if scope == "run":
        states = [0] * len(states)
    rejected: dict = {}  # (state, offer) -> evaluations that kept nothing
    spent = wasted = 0
    stop = None
    for c, st in zip(run["candidates"], states):
        e = c.get("evaluation")
        if not e:
            continue
        if (tries and rejected.get((st, _offer(c)), 0) >= tries) or (cards_only and (
                (c.get("card") or "").startswith("catalogue:") or c.get("unproven"))):
            if c["verdict"] in KEPT:
                stop = e
                break
            continue
        spent += 1
        if c["verdict"] in ("rejected", "outranked"):
            wasted += 1
        if c["verdict"] == "rejected":
            rejected[st, _offer(c)] = rejected.get((st, _offer(c)), 0) + 1
    open_ = 0
    if tries and stop is None:
        final = len(run["accepted"]) if scope == "state" else 0  # the last kernel's state
        seen = {_offer(c) for c, st in zip(run["candidates"], _states(run))
                if st == len(run["accepted"])}
        seen |= menu or set()
        if cards_only:  # the near misses cannot be told apart in a menu: count cards only
            seen = {o for o in seen if not o[0].startswith("catalogue:")}
        open_ = min(budget - spent,
                    sum(max(0, tries - rejected.get((final, o), 0)) for o in seen))
    upto = stop - 1 if stop else float("inf")
    acc = [a for a in run["accepted"] if a.get("found_at", a["evaluation"]) <= upto
           and a.get("speedup_vs_start")]
    return (acc[-1]["speedup_vs_start"] if acc else 1.0), wasted, spent, open_


def later_tries(run: dict) -> int:
    """Evaluations of ``run`` that kept nothing at an offer's second or later evaluation in
    the same kernel state (what ``--offer-tries 1`` would not gate)."""
    n: dict = {}
    later = 0
    for c, st in zip(run["candidates"], _states(run)):
        if not c.get("evaluation"):
            continue
        later += n.get((st, _offer(c)), 0) >= 1 and c["verdict"] in ("rejected", "outranked")
        n[st, _offer(c)] = n.get((st, _offer(c)), 0) + 1
    return later


def main(argv=None) -> int:
    from kltrans.optimize.experiment import label

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--record", default=os.path.join(ROOT, "bench", "results", "experiment.json"))
    ap.add_argument("--label", default="skills+best")
    ap.add_argument("--corpus", default=os.path.join(ROOT, "corpus"))
    ap.add_argument("--skills", default=os.path.join(ROOT, "skills"))
    ap.add_argument("--out", default=None, help="write the table here too")
    args = ap.parse_args(argv)
    doc = json.load(open(args.record, encoding="utf-8"))
    measured = {(r["target"], r["strategy"]): r["speedup"] for r in doc["rows"]}
    lines = [f"# python bench/patience_sim.py --label {args.label}  (record: "
             f"{os.path.relpath(args.record, ROOT)})",
             "# replayed from the recorded trajectories: nothing timed; speedup = product of "
             "the accepted steps' paired medians", "",
             f"{'set':8s} {'patience':>8s} {'runs':>4s} {'geomean':>8s} {'measured':>8s} "
             f"{'wasted':>6s} {'spent':>5s}"]
    for kind in ("corpus", "heldout"):
        runs = [r for r in doc["runs"] if r.get("kind") == kind and label(r) == args.label]
        if not runs:
            continue
        for k in (None, 20, 15, 12, 10, 8, 6, 5):
            out = [replay(r, k) for r in runs]
            geo = math.exp(sum(math.log(x[0]) for x in out) / len(out))
            meas = ""
            if k is None:
                vals = [measured.get((r["target"], args.label)) for r in runs]
                if all(vals):
                    meas = f"{math.exp(sum(math.log(v) for v in vals) / len(vals)):.2f}"
            lines.append(f"{kind:8s} {str(k or '-'):>8s} {len(runs):4d} {geo:8.2f} {meas:>8s} "
                         f"{sum(x[1] for x in out):6d} {sum(x[2] for x in out):5d}")
        for other in ("blind", "memory"):
            a = doc["aggregate"].get(f"{kind}/{other}")
            if a:
                lines.append(f"{kind:8s} {other:>8s} {a['targets']:4d} "
                             f"{a['geomean_speedup']:8.2f} {'':>8s} {a['wasted']:6d} "
                             f"{a['evaluations']:5d}")
    lines += ["", "# --offer-tries N: an offer gated N times in one kernel state without being "
              "kept leaves its menu",
              "# open: evaluations the rule still allows in the final kernel's menu (what the "
              "waste grows by if nothing more is kept)",
              "# 1,cards: and the cards only, no catalogue tail or near misses (open: "
              "every card offer, near misses too)",
              "# N,run: an offer's evaluations that kept nothing counted over the whole run, "
              "not per kernel state (no such option; what it would save and cost)", "",
              f"{'set':8s} {'tries':>8s} {'runs':>4s} {'geomean':>8s} {'wasted':>6s} "
              f"{'spent':>5s} {'open':>5s}"]
    for kind in ("corpus", "heldout"):
        runs = [r for r in doc["runs"] if r.get("kind") == kind and label(r) == args.label]
        menus = [final_menu(r, args.corpus, args.skills) for r in runs]
        for k, cards, scope in ((None, False, "state"), (4, False, "state"),
                                (3, False, "state"), (2, False, "state"), (1, False, "state"),
                                (1, True, "state"), (2, False, "run"), (1, False, "run")):
            out = [replay_tries(r, k, doc.get("budget", 30), m, cards, scope)
                   for r, m in zip(runs, menus)]
            if not out:
                continue
            geo = math.exp(sum(math.log(x[0]) for x in out) / len(out))
            tag = str(k or '-') + (',cards' if cards else '') + (',run' if scope == "run" else '')
            lines.append(f"{kind:8s} {tag:>8s} "
                         f"{len(runs):4d} {geo:8.2f} "
                         f"{sum(x[1] for x in out):6d} {sum(x[2] for x in out):5d} "
                         f"{sum(x[3] for x in out):5d}")
        if runs:
            lines.append(f"# {kind}: {sum(later_tries(r) for r in runs)} of the "
                         f"{sum(replay(r, None)[1] for r in runs)} evaluations wasted were an "
                         f"offer's second or later evaluation in its kernel state")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.out:
        from kltrans.syntax.files import atomic_write

        atomic_write(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
