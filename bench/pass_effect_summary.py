"""Every optimize pass's measured H200 effects, from the two places they are measured.

1. ``bench/pass_effect.py --part effect`` (bench/results/pass_effect_effect.json): the pass
   applied to a fixture where it should help, paired before/after trials.
2. The committed lineages (``corpus/*/lineage/lineage.json``): each step of a walk, timed
   with paired trials on the H200 (a GPU walk, or ``kltrans lineage --measure`` after a CPU
   walk); the step's inverse is the optimize pass, and time(simplified) / time(before) is
   that pass's speedup at that point of the expert's lineage.
3. The experiment (bench/results/experiment_v1.json, experiment_skills_catalogue.json):
   every step a search accepted on the H200, which was faster than the kernel before it in
   every paired trial; its ratio is the quotient of consecutive speedups over the start.

Nothing is timed here: the table only gathers what those runs measured, so that each pass
has its effect in one place, and the passes that never helped anywhere are named.

    python bench/pass_effect_summary.py            # bench/results/pass_effect_summary.{txt,json}
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

HELPED = 1.02  # a median ratio at least this, and every trial above 1


def _pass_name(spec: str) -> str:
    return spec.split("{", 1)[0].strip()


def gather(results: str, corpus: str) -> dict[str, list[dict]]:
    from kltrans.passes.registry import names

    found: dict[str, list[dict]] = {n: [] for n in names("optimize")}
    path = os.path.join(results, "pass_effect_effect.json")
    if os.path.isfile(path):
        for r in json.load(open(path, encoding="utf-8")):
            if r.get("ok") and r.get("pass") in found:
                found[r["pass"]].append({
                    "source": "fixture", "where": r["fixture"], "size": r.get("size"),
                    "ratio": r["ratio_median"], "trials": r["ratios"],
                    "device": r.get("device")})
    for name in ("experiment_v1.json", "experiment_skills_catalogue.json"):
        path = os.path.join(results, name)
        if not os.path.isfile(path):
            continue
        for r in json.load(open(path, encoding="utf-8")).get("runs") or []:
            prev = 1.0
            for a in r.get("accepted") or []:
                sp = a.get("speedup_vs_start")
                if not sp:
                    continue
                p = _pass_name(a["spec"])
                if p in found:  # accepted: faster than the kernel before in every trial
                    found[p].append({"source": "search", "where": f"{r['target']} "
                                     f"{r['strategy']} evaluation {a['evaluation']}",
                                     "ratio": sp / prev, "trials": None, "device": None})
                prev = sp
    for lin in sorted(glob.glob(os.path.join(corpus, "*", "lineage", "lineage.json"))):
        doc = json.load(open(lin, encoding="utf-8"))
        w = os.path.basename(os.path.dirname(os.path.dirname(lin)))
        for t in doc.get("transitions") or []:
            inv = (t.get("roundtrip") or {}).get("inverse")
            e = t.get("effect") or {}
            if not inv or not e.get("ok") or _pass_name(inv) not in found:
                continue
            found[_pass_name(inv)].append({
                "source": "lineage", "where": f"{w} step {t['step']}", "size": e.get("size"),
                "ratio": e["slowdown_median"], "trials": e["slowdown_trials"],
                "device": e.get("device")})
    return found


def summarize(found: dict[str, list[dict]]) -> list[dict]:
    rows = []
    for name, ms in sorted(found.items()):
        best = max(ms, key=lambda m: m["ratio"], default=None)
        helped = [m for m in ms if m["ratio"] >= HELPED
                  and (m["trials"] is None or min(m["trials"]) > 1.0)]
        rows.append({"pass": name, "measurements": len(ms), "helped": len(helped),
                     "best": best, "median": statistics.median([m["ratio"] for m in ms])
                     if ms else None})
    return rows


def render(rows: list[dict]) -> str:
    lines = ["# command: python bench/pass_effect_summary.py",
             "# every optimize pass's H200 effects: fixtures (bench/pass_effect.py --part effect)",
             "# lineage steps (GPU walks and kltrans lineage --measure) and steps the experiment's",
             "# searches accepted; ratio = time before / time after the pass; 'helped' = ratio",
             f"# >= {HELPED} and every trial > 1 (an accepted step was faster in every trial)", "",
             f"{'pass':26s} {'n':>3s} {'helped':>6s} {'median':>8s} {'best':>9s}  where"]
    for r in rows:
        b = r["best"]
        lines.append(f"{r['pass']:26s} {r['measurements']:3d} {r['helped']:6d} "
                     + (f"{r['median']:8.3f} {b['ratio']:9.3f}  {b['source']}: {b['where']}"
                        if b else f"{'-':>8s} {'-':>9s}  not measured"))
    never = [r["pass"] for r in rows if r["measurements"] and not r["helped"]]
    unmeasured = [r["pass"] for r in rows if not r["measurements"]]
    lines += ["", "median and best are over all of a pass's measurements, the searches' included",
              f"never helped where measured ({len(never)}): {', '.join(never) or '-'}",
              f"not measured ({len(unmeasured)}): {', '.join(unmeasured) or '-'}"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--results", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--corpus", default=os.path.join(ROOT, "corpus"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    args = ap.parse_args(argv)
    from kltrans.syntax.files import atomic_write

    found = gather(args.results, args.corpus)
    rows = summarize(found)
    text = render(rows)
    os.makedirs(args.out, exist_ok=True)
    atomic_write(os.path.join(args.out, "pass_effect_summary.txt"), text)
    atomic_write(os.path.join(args.out, "pass_effect_summary.json"),
                 json.dumps({"rows": rows, "measurements": found}, indent=1) + "\n")
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
