"""The pass manager: runs configured passes over a unit and reports every site.

For each pass: find the anchor's sites, check every precondition at each site, and
rewrite the sites where all hold (or every site, with ``ctx.force``). Edits of all
accepted sites are computed against the same unit and applied together; a site whose
edits overlap an earlier accepted site's is reported and left for the next run (nested
sites). A site that is not rewritten is always reported with the precondition and its
reason. Launch-contract headers are updated when a pass changes
the launch.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from kltrans.passes.facts import Context
from kltrans.passes.rewrite import header_edit, made_dead, remove
from kltrans.syntax import Edit, EditError, apply_edits

if TYPE_CHECKING:  # pragma: no cover
    from kltrans.passes.base import Pass, Site
    from kltrans.syntax import Unit


@dataclass(frozen=True)
class SiteReport:
    index: int
    path: str
    line: int
    column: int
    function: str | None
    status: str  # "applied" | "skipped" | "would-apply" | "failed"
    reason: str = ""
    precondition: str | None = None
    category: str | None = None
    verdicts: tuple = ()  # ((precondition, status, reason), ...)

    def to_json(self) -> dict:
        return {"site": self.index, "path": self.path, "line": self.line, "column": self.column,
                "function": self.function, "status": self.status, "reason": self.reason,
                "precondition": self.precondition, "category": self.category,
                "verdicts": [{"precondition": p, "status": s, "reason": r}
                             for p, s, r in self.verdicts]}

    def remark(self, pass_name: str) -> str:
        where = f"{self.path}:{self.line}:{self.column}"
        if self.status in ("applied", "would-apply"):
            note = f": {self.reason}" if self.reason else ""
            return f"{where}: remark: {pass_name}: {self.status.replace('-', ' ')} (site {self.index}){note}"
        what = f"precondition {self.precondition} ({self.category}): " if self.precondition else ""
        return f"{where}: remark: {pass_name}: {self.status} site {self.index}: {what}{self.reason}"


@dataclass
class PassReport:
    pass_spec: str
    sites: list[SiteReport] = field(default_factory=list)

    @property
    def applied(self) -> int:
        return sum(s.status == "applied" for s in self.sites)

    def to_json(self) -> dict:
        return {"pass": self.pass_spec, "applied": self.applied,
                "sites": [s.to_json() for s in self.sites]}


@dataclass
class PipelineResult:
    unit: "Unit"
    reports: list[PassReport]
    snapshots: list[tuple[str, "Unit"]] = field(default_factory=list)  # after each pass

    @property
    def changed(self) -> bool:
        return any(r.applied for r in self.reports)


def _report(site: "Site", status: str, reason: str = "", pre=None, verdicts=()) -> SiteReport:
    loc = site.location()
    return SiteReport(site.index, loc.path, loc.line, loc.column,
                      site.function.name if site.function else None, status, reason,
                      pre.name if pre else None, pre.category if pre else None,
                      tuple((p.name, v.status, v.reason) for p, v in verdicts))


def unforceable(failing: list, e: Exception) -> str:
    """Why a forced rewrite could not be made: the pass raised ``e`` at a site where the
    preconditions ``failing`` ((precondition, verdict) pairs) fail -- the rewrite needs
    the form the first of them checks."""
    err = f"{type(e).__name__}: {e}"
    if not failing:
        return f"the rewrite failed ({err})"
    _, v = failing[0]
    return f"cannot be forced ({v.status}: {v.reason}): the rewrite needs what it checks ({err})"


def run_pass(unit: "Unit", p: "Pass", ctx: Context, only_site: int | None = None,
             dry_run: bool = False, skip_unforceable: bool = False) -> tuple["Unit", PassReport]:
    """Rewrite every site of ``p`` (or ``only_site``) whose preconditions hold, or every
    site with ``ctx.force``. A forced rewrite whose pass raises -- it needed the form a
    failing precondition checks -- propagates (lineage probes record it), unless
    ``skip_unforceable``: then the site is skipped with that precondition and the error."""
    whole = getattr(p, "run_unit", None)
    if whole is not None:  # an engine pass that rewrites the unit as a whole (canonicalize)
        return whole(unit, ctx, dry_run)
    report = PassReport(p.spec())
    sites = p.sites(unit, ctx)
    if only_site is not None:
        sites = [s for s in sites if s.index == only_site]
    accepted: list[tuple["Site", list[Edit]]] = []
    taken: list[tuple[int, int]] = []
    for site in sites:
        verdicts = p.check(site, ctx)
        failing = [(pre, v) for pre, v in verdicts if not v.holds]
        if failing and not ctx.force:
            pre, v = failing[0]
            report.sites.append(_report(site, "skipped", f"{v.status}: {v.reason}", pre, verdicts))
            continue
        try:
            edits = list(p.rewrite(site, ctx))
        except SkipSite as e:
            report.sites.append(_report(site, "skipped", str(e), None, verdicts))
            continue
        except Exception as e:
            if not (failing and skip_unforceable):
                raise
            report.sites.append(_report(site, "skipped", unforceable(failing, e), failing[0][0],
                                        verdicts))
            continue
        spans = [(e.start, e.end) for e in edits]
        if any(_overlap(a, b) for a in spans for b in taken):
            report.sites.append(_report(site, "skipped", "overlaps the rewrite of an earlier "
                                        "site; run the pass again", None, verdicts))
            continue
        note = ""
        if failing:
            note = "forced past: " + "; ".join(f"{pre.name}: {v.reason}" for pre, v in failing)
        accepted.append((site, edits))
        taken.extend(spans)
        report.sites.append(_report(site, "would-apply" if dry_run else "applied", note, None,
                                    verdicts))
    if dry_run or not accepted:
        return unit, report
    all_edits = [e for _, es in accepted for e in es]
    all_edits += _contract_edits(unit, p, accepted, ctx)
    try:
        new = apply_edits(unit, all_edits)
    except EditError as e:
        return unit, _refused(report, f"rewrite refused: {e}")
    if getattr(p, "drop_dead", False):
        # declarations only the rewritten code read (a vector path's views and counts)
        for _ in range(4):
            dead = made_dead(unit, new)
            if not dead:
                break
            try:
                new = apply_edits(new, dead)
            except EditError as e:
                return unit, _refused(report, f"rewrite refused: {e}")
    old = _dangling_unroll(unit)
    dangling = [pr for key, pr in _dangling_unroll(new).items() if key not in old]
    if dangling:
        # the rewrite removed the loop an unroll pragma belonged to: the pragma goes with it
        # (left before a statement that is not a loop, NVRTC warns #607-D and ignores it)
        try:
            new = apply_edits(new, [remove(new, pr.start, pr.end) for pr in dangling])
        except EditError as e:
            return unit, _refused(report, f"rewrite refused: {e}")
        note = "; ".join(f"dropped '{pr.text}' (line {pr.line}): the rewrite removed its loop"
                         for pr in dangling)
        for i, s in enumerate(report.sites):
            if s.status == "applied":
                report.sites[i] = replace(
                    s, reason=f"{s.reason}; {note}" if s.reason else note)
    return new, report


def _refused(report: PassReport, why: str) -> PassReport:
    """``report`` with every applied site marked failed, for ``why``."""
    for i, s in enumerate(report.sites):
        if s.status == "applied":
            report.sites[i] = SiteReport(s.index, s.path, s.line, s.column, s.function,
                                         "failed", why, None, None, s.verdicts)
    return report


def _dangling_unroll(unit: "Unit") -> dict:
    """The unroll pragmas of ``unit`` that precede no loop: (pragma text, text of the
    statement after it) -> pragma (keyed by text, as an edit moves lines)."""
    out = {}
    for pr in unit.pragmas:
        if pr.name == "unroll" and pr.loop is None:
            after = unit.text(pr.target) if pr.target is not None else ""
            out.setdefault((pr.text, after), pr)
    return out


class SkipSite(Exception):
    """Raised by ``rewrite`` when a site turns out not to be rewritable (with the reason)."""


def _overlap(a, b) -> bool:
    (a0, a1), (b0, b1) = a, b
    if a0 == a1 or b0 == b1:
        return a0 == b0 or (b0 < a0 < b1) or (a0 < b0 < a1)
    return a0 < b1 and b0 < a1


def _contract_edits(unit, p, accepted, ctx) -> list[Edit]:
    from kltrans.syntax.contract import contracts

    if type(p).update_contract is _base_update_contract():
        return []
    try:
        found = contracts(unit)
    except Exception:
        return []
    edits = []
    done = set()
    for site, _ in accepted:
        if site.function is None or site.function.name in done:
            continue
        c = found.get(site.function.name)
        if c is None or c.source != "header":
            continue
        new = p.update_contract(c, site, ctx)
        if new != c:
            edits.append(header_edit(unit, c, new))
            done.add(site.function.name)
    return edits


def _base_update_contract():
    from kltrans.passes.base import Pass

    return Pass.update_contract


def run_pipeline(unit: "Unit", passes: list, ctx: Context, only_site: int | None = None,
                 dry_run: bool = False, keep_snapshots: bool = False,
                 skip_unforceable: bool = False) -> PipelineResult:
    reports = []
    snaps = []
    for p in passes:
        unit, rep = run_pass(unit, p, ctx, only_site, dry_run, skip_unforceable)
        reports.append(rep)
        if keep_snapshots:
            snaps.append((p.spec(), unit))
    return PipelineResult(unit, reports, snaps)
