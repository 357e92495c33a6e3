"""The generality report: results per lineage, a summary other tools can read, a text
table and a one-page HTML report with a bar chart per measure (jinja2 template)."""

from __future__ import annotations

import math
import os

SCHEMA = 1

# the summary keys: other tools read these (issue "Generality suite", item 4)
SUMMARY_KEYS = ("pairs", "pairs_fully_explained", "pairs_explained_by", "actions",
                "actions_explained", "experts", "experts_walked_to_naive", "false_naive",
                "forward_targets", "forward_gate_passed", "forward_fraction_geomean",
                "expert_speedup_geomean")


# what --merge checks an earlier report against (jsonschema)
REPORT_SCHEMA = {
    "type": "object", "required": ["schema", "config", "summary", "lineages"],
    "properties": {
        "schema": {"const": SCHEMA},
        "config": {"type": "object", "required": ["measures", "backend"],
                   "properties": {"measures": {"type": "array", "items": {"type": "string"}}}},
        "summary": {"type": "object"},
        "lineages": {"type": "array", "items": {
            "type": "object", "required": ["name", "pairs", "walk", "forward", "speedup"],
            "properties": {"name": {"type": "string"},
                           "pairs": {"type": ["array", "null"]},
                           "walk": {"type": ["object", "null"]},
                           "forward": {"type": ["object", "null"]},
                           "speedup": {"type": ["object", "null"]}}}}},
}


def _geo(xs):
    xs = [x for x in xs if isinstance(x, (int, float)) and x > 0]
    return round(math.exp(sum(math.log(x) for x in xs) / len(xs)), 4) if xs else None


def assemble(lineages, results: dict, config: dict) -> dict:
    """The report document. ``results``: measure -> list of task results (each names its
    lineage); a measure that did not run is absent."""
    from kltrans import __version__

    by = {m: {} for m in ("walk", "forward", "speedup")}
    pairs: dict = {}
    for r in results.get("explain", []):
        pairs.setdefault(r["lineage"], []).append(r)
    for m in by:
        for r in results.get(m, []):
            by[m][r["lineage"]] = r
    rows = []
    for lin in lineages:
        order = {v.variant: i for i, v in enumerate(lin.versions)}
        rows.append({
            "name": lin.name, "family": lin.family, "versions": [v.variant for v in lin.versions],
            "steps": [v.step for v in lin.versions[1:]], "idioms": list(lin.idioms),
            "pairs": sorted(pairs.get(lin.name, []), key=lambda p: order.get(p["a"], 0))
            if "explain" in results else None,
            "walk": by["walk"].get(lin.name) if "walk" in results else None,
            "forward": by["forward"].get(lin.name) if "forward" in results else None,
            "speedup": by["speedup"].get(lin.name) if "speedup" in results else None})
    ex = [p for r in rows for p in (r["pairs"] or [])]
    walks = [r["walk"] for r in rows if r["walk"]]
    fwd = [r["forward"] for r in rows if r["forward"]]
    cpu_fwd = [f for f in fwd if f.get("backend") == "cpu"]
    gpu_fwd = [f for f in fwd if f.get("backend") == "cuda"]
    summary = {
        "lineages": len(rows),
        "versions": sum(len(lin.versions) for lin in lineages),
        "pairs": sum(len(lin.versions) - 1 for lin in lineages),
        "pairs_fully_explained": sum(1 for p in ex if p["full"]) if "explain" in results else None,
        # how the full explanations equal B: token for token, machine code, the model
        "pairs_explained_by": {k: sum(1 for p in ex if p["full"] and p.get("equal") == k)
                               for k in ("tokens", "machine code", "model")}
        if "explain" in results else None,
        "actions": sum(p["actions"] for p in ex) if "explain" in results else None,
        "actions_explained": sum(p["explained"] for p in ex) if "explain" in results else None,
        "experts": len(rows),
        "experts_walked_to_naive": sum(1 for w in walks if w["reached_naive"])
        if "walk" in results else None,
        "false_naive": sum(1 for w in walks if w["false_naive"]) if "walk" in results else None,
        "forward_targets": len(fwd) if "forward" in results else None,
        "forward_gate_passed": sum(1 for f in cpu_fwd if f.get("verdict") == "pass")
        if cpu_fwd else None,
        # a target whose final kernel could not be timed counts as not measured
        "forward_fraction_geomean": _geo(f.get("fraction") for f in gpu_fwd)
        if gpu_fwd else None,
        "expert_speedup_geomean": _geo((r["speedup"] or {}).get("speedup") for r in rows)
        if "speedup" in results else None,
    }
    return {"schema": SCHEMA, "tool": f"kltrans {__version__}", "config": config,
            "summary": summary, "lineages": rows}


def _pct(a, b):
    return "-" if a is None or not b else f"{a}/{b} ({100.0 * a / b:.0f}%)"


def backends(config: dict) -> str:
    """The backend of the measures this run made and those of the reports it merged."""
    own = [config["backend"]] if config.get("measured", config["measures"]) else []
    merged = [m["config"].get("backend") for m in config.get("merged") or []]
    return " + ".join(dict.fromkeys(b for b in own + merged if b))


def render_text(doc: dict) -> str:
    s = doc["summary"]
    c = doc["config"]
    lines = [f"generality of {c['suite']}: {s['lineages']} lineages, {s['versions']} versions, "
             f"backend {backends(c)}, measures {', '.join(c['measures'])}"
             + (", from canonical forms" if c.get("canonicalize") else ""), ""]
    head = (f"{'lineage':<20} {'family':<11} {'vers':>4}  {'explained':>9} {'actions':>9}  "
            f"{'walk':<22} {'forward':<18} {'expert':>7}")
    lines += [head, "-" * len(head)]
    for r in doc["lineages"]:
        pr = r["pairs"]
        full = "-" if pr is None else f"{sum(p['full'] for p in pr)}/{len(pr)}"
        acts = "-" if pr is None else f"{sum(p['explained'] for p in pr)}/{sum(p['actions'] for p in pr)}"
        w = r["walk"]
        walk = "-" if w is None else (f"{w['termination']} in {w['steps']}"
                                      + (" (false)" if w.get("false_naive") else ""))
        f = r["forward"]
        if f is None:
            fw = "-"
        elif not f.get("ok"):
            fw = "error"
        elif f.get("fraction") is not None:
            fw = f"{f['fraction']:.2f} of expert"
        else:
            fw = f"{f['accepted']} acc, {str(f.get('verdict', '-'))[:6]}"
        sp = r["speedup"]
        spd = "-" if not sp or not sp.get("ok") else f"{sp['speedup']:.1f}x"
        lines.append(f"{r['name']:<20} {r['family']:<11} {len(r['versions']):>4}  {full:>9} "
                     f"{acts:>9}  {walk:<22} {fw:<18} {spd:>7}")
    lines += ["", "summary:"]
    by = s.get("pairs_explained_by")
    lines.append(f"  steps fully explained    {_pct(s['pairs_fully_explained'], s['pairs'])}"
                 + (f"  (equal: {', '.join(f'{k} {v}' for k, v in by.items())})"
                    if by and s["pairs_fully_explained"] else ""))
    lines.append(f"  edit actions explained   {_pct(s['actions_explained'], s['actions'])}")
    lines.append(f"  experts walked to naive  {_pct(s['experts_walked_to_naive'], s['experts'])}"
                 f"  (false naive: {'-' if s['false_naive'] is None else s['false_naive']})")
    if s["forward_fraction_geomean"] is not None:
        lines.append(f"  forward, geomean fraction of expert speed: {s['forward_fraction_geomean']:.3f}")
    elif s["forward_gate_passed"] is not None:
        lines.append(f"  forward: {s['forward_gate_passed']}/{s['forward_targets']} final kernels "
                     f"pass the CPU gate (speed needs a GPU)")
    if s["expert_speedup_geomean"] is not None:
        lines.append(f"  expert over naive (GPU), geomean: {s['expert_speedup_geomean']:.1f}x")
    return "\n".join(lines) + "\n"


def _bars(items: list[tuple[str, float | None]], vmax: float | None = None, unit: str = "",
          log: bool = False) -> dict:
    """Bar geometry for the template: (label, value, width px, text) per item."""
    vals = [v for _, v in items if v is not None]
    top = vmax if vmax is not None else (max(vals) if vals else 1.0)
    out = []
    for label, v in items:
        if v is None:
            out.append({"label": label, "width": 0, "text": "not run"})
            continue
        if log:
            frac = math.log10(max(v, 1.0)) / max(math.log10(max(top, 10.0)), 1e-9)
        else:
            frac = v / top if top else 0.0
        out.append({"label": label, "width": round(360 * max(0.0, min(frac, 1.0)), 1),
                    "text": f"{v:.2f}{unit}" if isinstance(v, float) else f"{v}{unit}"})
    return {"bars": out, "height": 22 * len(out) + 10}


def render_html(doc: dict) -> str:
    import jinja2

    rows = doc["lineages"]
    charts = []
    if any(r["pairs"] is not None for r in rows):
        charts.append(("diff --explain: share of edit actions explained per lineage", _bars(
            [(r["name"], (sum(p["explained"] for p in r["pairs"]) /
                          max(1, sum(p["actions"] for p in r["pairs"])))
              if r["pairs"] is not None else None) for r in rows], 1.0)))
    if any(r["walk"] is not None for r in rows):
        charts.append(("lineage walk: steps taken back from the expert (of the history's)",
                       _bars([(r["name"], r["walk"]["steps"] if r["walk"] else None)
                              for r in rows])))
    if any((r["forward"] or {}).get("fraction") is not None for r in rows):
        charts.append(("optimize from naive: fraction of the expert's speed (GPU)", _bars(
            [(r["name"], (r["forward"] or {}).get("fraction")) for r in rows], 1.0)))
    elif any(r["forward"] is not None for r in rows):
        charts.append(("optimize from naive: candidates accepted (CPU: correctness only)",
                       _bars([(r["name"], (r["forward"] or {}).get("accepted")) for r in rows])))
    if any((r["speedup"] or {}).get("speedup") for r in rows):
        charts.append(("expert over naive (GPU, paired), log scale", _bars(
            [(r["name"], (r["speedup"] or {}).get("speedup")) for r in rows], unit="x",
            log=True)))
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(
        os.path.join(os.path.dirname(__file__), "templates")), autoescape=True,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template("report.html.j2").render(doc=doc, charts=charts,
                                                     backends=backends(doc["config"]),
                                                     text=render_text(doc))
