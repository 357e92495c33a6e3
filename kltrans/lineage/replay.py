"""Replaying a committed lineage: its recorded steps, applied again without the gate.

A walk is deterministic (issue 8), but re-walking costs a gate run per candidate. The
cheaper check -- do the passes as they are now still take the expert, step by step, to
the recorded states? -- applies each transition's pass (its recorded spec) at its
recorded site to the previous state and compares content hashes. It catches a pass whose
output changed (a formatting rule, a renamed temporary, an anchor that now matches more
sites) without gating anything; the choice among candidates and the gate verdicts are
what a full re-walk checks.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field


@dataclass
class ReplayReport:
    lineage: str
    steps: int = 0
    mismatches: list = field(default_factory=list)  # (step, what, detail)

    @property
    def ok(self) -> bool:
        return not self.mismatches


def replay(lineage_dir: str, expert: str | None = None) -> ReplayReport:
    """Apply the steps of ``lineage_dir/lineage.json`` to its first state (or ``expert``,
    the file the lineage started from); report every step whose result differs."""
    from kltrans.lineage.walk import content_hash
    from kltrans.passes.facts import Context
    from kltrans.passes.manager import run_pass
    from kltrans.passes.pipeline import parse_pipeline
    from kltrans.syntax import parse

    with open(os.path.join(lineage_dir, "lineage.json"), encoding="utf-8") as f:
        doc = json.load(f)
    rep = ReplayReport(lineage_dir)
    cfg = doc["config"]
    first = doc["states"][0]
    path = expert or os.path.join(lineage_dir, first["file"])
    with open(path, "rb") as f:
        cur = f.read()
    if content_hash(cur) != first["hash"]:
        rep.mismatches.append((0, "start", f"{path} is not the recorded first state"))
        return rep
    ctx = Context.from_strings(tuple(cfg["facts"]), cfg.get("arch"), False, cfg["kernel"])
    for t in doc["transitions"]:
        rep.steps += 1
        unit = parse(cur, path)
        [p] = parse_pipeline(t["spec"])
        idx = _site_index(p, unit, ctx, t["site"])
        after, r = run_pass(unit, p, ctx, only_site=idx)
        if not r.applied:
            why = next((s.reason for s in r.sites if s.index == idx), "no such site")
            rep.mismatches.append((t["step"], "not-applied", f"{t['spec']}: {why}"))
            return rep
        h = content_hash(after.source)
        if h != t["after"]:
            rep.mismatches.append((t["step"], "differs",
                                   f"{t['spec']} at site {idx} gives {h}, "
                                   f"recorded {t['after']}"))
            return rep
        cur = after.source
    return rep


def _site_index(p, unit, ctx, site: dict) -> int:
    """The index, among the pass's sites now, of the site recorded at (line, column) in
    its function: a pass that has since learnt to match more (sites elsewhere, earlier in
    the file) numbers its sites differently, but the recorded site is where it was."""
    for s in p.sites(unit, ctx):
        loc = s.location()
        fn = s.function.name if s.function else None
        if (loc.line, loc.column, fn) == (site.get("line"), site.get("column"), site.get("function")):
            return s.index
    return site["index"]
