"""The backward walk: expert -> simplified states -> naive, one gated step at a time.

One step from state S:

1. candidates: every registered ``simplify`` pass (default options), every site of its
   anchor in S; a site whose preconditions do not all hold is recorded as rejected at
   stage ``precondition`` (no gate time is spent on it);
2. each remaining candidate is rewritten (``run_pass`` at that one site, launch contract
   included) and gated: compile, then correct at the walk's test sizes and seeds. Gate
   jobs go through an executor (kltrans.gate.executor: the local pool, ``--jobs`` or one
   slot per GPU, or a Dask cluster with ``--cluster``); the results do not depend on it;
3. the round trip: the pass's ``inverse_for`` the site, applied to the candidate, must
   give S back token for token (comments and whitespace aside). A candidate that fails it
   is rejected at stage ``roundtrip``: a step that cannot be reversed cannot become a skill;
4. the choice among accepted candidates: on a GPU, the one whose removal costs the most
   time (paired trials against S, all at one size: :func:`timing_size`; ``max-time``), unless no
   removal costs at least ``min_cost`` (2%): those ties go by the catalogue's walk order
   among the candidates whose inverse is no slower (``walk-order-tie``), and where every
   removal makes the kernel faster, to the one that changes it least
   (``inverse-slower``: :func:`choose_step`); without a GPU, the walk order (``passes.WALK_ORDER``, then pass
   name, then site) — the rule used is recorded with the step;
5. the other accepted candidates are kept as alternatives, the rejected ones with their
   stage and reason.

The walk stops when no simplification applies (or every one that applies is rejected)
and the kernel has none of the marks of a naive root left (termination ``naive``;
kltrans.lineage.naive), when no simplification applies but some remain (``stuck``, with the list: a gap of the pass library), at the step
limit (``max-steps``), or when every applicable candidate is rejected and a mark is left
(``all-rejected``).
A ``stuck`` or ``all-rejected`` end first backs out (at most ``max_backtracks`` times): the
latest step that had another accepted candidate takes the next one instead, and the steps
after it are dropped (``doc["backtracks"]`` records each: where, what was abandoned, the
dead end). Everything
is deterministic for the same inputs: candidates are ordered by (walk order, pass, site),
the workload's seeds are used and recorded, and nothing depends on timing except the GPU
choice rule (recorded with its measurements).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from dataclasses import dataclass, field

from kltrans.lineage import store
from kltrans.workload.lineage_store import content_hash
from kltrans.paths import lineage_out

SCHEMA = 1
# what the gate guarantees about a workload's buffers (kltrans.gate.correct allocates each
# one separately, at a 4096-byte offset into its own allocation)
WORKLOAD_FACTS = ("no_alias(*)", "aligned(*,16)")


class WalkError(ValueError):
    """A usage or input problem (bad workload folder, expert missing...)."""


@dataclass
class WalkOptions:
    workload: str  # folder with workload.yaml
    expert: str | None = None  # default: the spec's ``expert`` variant
    backend: str = "auto"
    max_steps: int = 100
    out: str | None = None  # default: WORKLOAD/lineage
    jobs: int | None = 1  # local pool slots (None: one per GPU, or the CPU cores)
    size_limit: int | None = None  # keep test sizes whose element count is <= this
    arch: str | None = None
    restart: bool = False
    assume: tuple = ()  # extra facts, as for ``kltrans opt --assume``
    probes: int = 6  # probes per accepted step (0: none)
    side_ms: float = 300.0  # GPU: each side of a paired trial runs near this long
    max_backtracks: int = 8  # dead ends the walk may back out of (0: stop at the first)
    min_cost: float = 1.02  # GPU: below this slowdown every removal is a tie (walk order)
    timeout_s: float = 300.0
    run_timeout_s: float = 120.0  # a correct stage once it holds the GPU (a hang ends here)
    pair_timeout_s: float = 120.0  # GPU: one paired timing (past it: the candidate is too slow)
    bench_size: dict | None = None  # GPU: time at this size (default: see _walk)
    progress: bool = True
    log: list = field(default_factory=list)
    cluster: str | None = None  # --cluster: local:N or tcp://HOST:PORT (None: local pool)
    executor: object | None = None  # an open kltrans.gate.executor.Executor to use (kept open)
    redo_from: int | None = None  # --redo-from: drop steps N.. of the walk there and go on
    # --canonicalize: the expert and every state after a step are brought to canonical form
    # (kltrans.passes.canonical), and a round trip holds up to canonical form
    canonicalize: bool = False


def binding_facts(wl, fn) -> list[str]:
    """``binds(param, size)`` for each scalar argument of the workload that passes a size
    to a kernel parameter of another name (``numRows`` gets ``rows``): launch contracts
    are written in the sizes, kernels read their parameters. Arguments bind to the
    kernel's parameters in order."""
    if fn is None:
        return []
    out = []
    for a, p in zip(wl.arguments, fn.params):
        v = str(a.value) if a.role == "scalar" and a.value is not None else ""
        if p.name and v in (wl.sizes or ()) and v != p.name:
            out.append(f"binds({p.name},{v})")
    return out


def tolerance_facts(wl) -> list[str]:
    """``reassoc`` and ``tolerance(rtol)`` when every output is compared with a tolerance
    (not exactly): the spec then accepts the rounding differences that reassociating a
    float reduction, or a fast-math intrinsic within rtol, produce. The gate still checks
    every candidate against that tolerance."""
    rtols = []
    for name, t in (wl.tolerance or {}).items():
        if t.exact or t.rule:
            return []
        rtols.append(float(t.rtol))
    if not rtols or min(rtols) <= 0.0:
        return []
    return ["reassoc", f"tolerance({min(rtols):g})"]




def walk_order() -> list[str]:
    try:
        import passes
    except ImportError:  # pragma: no cover - a third-party registry only
        return []
    return list(getattr(passes, "WALK_ORDER", ()))


def simplify_passes() -> list:
    """Every registered simplify pass a walk takes (``Pass.walked``; a default-configured
    instance), in walk order."""
    from kltrans.passes.registry import get_pass, names

    order = walk_order()
    rank = {n: i for i, n in enumerate(order)}
    out = [get_pass(n)() for n in names(kind="simplify") if get_pass(n).walked]
    out.sort(key=lambda p: (rank.get(p.name, len(rank)), p.name))
    return out


def timing_size(wl) -> dict | None:
    """The size a GPU walk times every step at, where it is not the workload's bench size:
    the naive variant's own bench size where the spec gives it one (an O(n^2) naive
    kernel, and the states near it, would not finish at the workload's: scan's walk
    reaches a tile prefix summed directly, quadratic), as ``kltrans lineage --measure``
    does. None: the workload's bench size."""
    from kltrans.gate.run import variant_bench_size

    if "naive" not in wl.kernels:
        return None
    own = variant_bench_size(wl, wl.kernel_path("naive"))
    return dict(own) if own else None


def gate_sizes(wl, limit: int | None) -> list[dict]:
    sizes = [dict(s) for s in wl.test_sizes]
    if limit is None:
        return sizes
    import math

    kept = [s for s in sizes if math.prod(max(1, int(v)) for v in s.values()) <= limit]
    if not kept:
        raise WalkError(f"--size-limit {limit} keeps none of the test sizes of {wl.name} "
                        f"({sizes})")
    return kept


@dataclass
class Candidate:
    pass_name: str
    options: dict
    spec: str
    site: int
    line: int
    column: int
    function: str | None
    after: bytes | None = None
    after_hash: str | None = None
    stage: str | None = None  # the stage that rejected it (None: accepted)
    reason: str = ""
    gate: list = field(default_factory=list)
    resources: dict | None = None
    roundtrip: dict | None = None
    effect: dict | None = None

    @property
    def accepted(self) -> bool:
        return self.stage is None

    def key(self) -> tuple:
        return (self.pass_name, self.site)

    def to_json(self) -> dict:
        d = {"pass": self.pass_name, "options": self.options, "spec": self.spec,
             "site": {"index": self.site, "line": self.line, "column": self.column,
                      "function": self.function}}
        if self.after_hash:
            d["after_hash"] = self.after_hash
        if self.stage:
            d["stage"] = self.stage
            d["reason"] = self.reason
        if self.gate:
            d["gate"] = self.gate
        if self.resources:
            d["resources"] = self.resources
        if self.roundtrip:
            d["roundtrip"] = self.roundtrip
        if self.effect:
            d["effect"] = self.effect
        return d


def enumerate_candidates(unit, ctx, canonical: bool = False) -> list[Candidate]:
    """Every (simplify pass, site), rewritten where its preconditions hold; with
    ``canonical``, each rewrite is brought to canonical form (``unit`` is in it already)."""
    from kltrans.passes.manager import run_pass

    out = []
    for p in simplify_passes():
        try:
            sites = p.sites(unit, ctx)
        except Exception as e:  # a broken pass must not stop the walk: record it
            out.append(Candidate(p.name, p.option_values(), p.spec(), 0, 0, 0, None,
                                 stage="anchor", reason=f"{type(e).__name__}: {e}"))
            continue
        for s in sites:
            loc = s.location()
            c = Candidate(p.name, p.option_values(), p.spec(), s.index, loc.line, loc.column,
                          s.function.name if s.function else None)
            out.append(c)
            failing = [(pre, v) for pre, v in p.check(s, ctx) if not v.holds]
            if failing:
                pre, v = failing[0]
                c.stage, c.reason = "precondition", f"{pre.name} ({pre.category}): {v.status}: {v.reason}"
                continue
            try:
                after, rep = run_pass(unit, p, ctx, only_site=s.index)
            except Exception as e:
                c.stage, c.reason = "rewrite", f"{type(e).__name__}: {e}"
                continue
            if not rep.applied:
                why = next((r.reason for r in rep.sites if r.index == s.index), "not applied")
                c.stage, c.reason = "rewrite", why
                continue
            if canonical:
                after = _canonical(after)
            c.after = after.source
            c.after_hash = content_hash(after.source)
            try:
                c.roundtrip = _roundtrip(unit, after, p, s, ctx, canonical)
            except Exception as e:
                c.roundtrip = {"ok": False, "reason": f"{type(e).__name__}: {e}"}
            if not c.roundtrip["ok"]:
                c.stage, c.reason = "roundtrip", c.roundtrip["reason"]
                c.after = None
    return out


SAME_PROGRAM_TRIES = 2  # inverse results compiled to compare with the previous state
SAME_PROGRAM_RATIO = 0.9  # ... each at least this similar to it in tokens


def _canonical(unit):
    """``unit`` in canonical form (the rules only: every walk state is gated anyway)."""
    from kltrans.passes.canonical import canonicalize

    return canonicalize(unit, check=False)[0]


def _roundtrip(before, after, p, site, ctx, canonical: bool = False) -> dict:
    """The inverse (configured for the site) on ``after`` must give ``before`` back: token
    for token (with ``canonical``: up to canonical form), or else a state with the program
    of ``before`` (the same kernels from NVRTC and the same launches,
    :func:`kltrans.passes.canonical.same_program`): a human-written expert spells what the
    inverse writes in its own way."""
    from kltrans.match.pattern import tokens
    from kltrans.passes.manager import run_pass

    from kltrans.model.launch import same_launch

    def same(back) -> bool:
        if canonical:
            back = _canonical(back)
        # the launch header is a comment to the tokens: compared as launches
        return tokens(back, back.root) == want and same_launch(back, before)[0]

    inv = p.inverse_for(site, ctx)
    want = tokens(before, before.root)
    backs = []
    back, rep = run_pass(after, inv, ctx)
    if rep.applied and same(back):
        return {"ok": True, "inverse": inv.spec(), "sites": "all"}
    if rep.applied:
        backs.append((back, "all"))
    for s in inv.sites(after, ctx):  # the inverse may match more than the rewritten site
        back, rep = run_pass(after, inv, ctx, only_site=s.index)
        if rep.applied and same(back):
            return {"ok": True, "inverse": inv.spec(), "sites": [s.index]}
        if rep.applied:
            backs.append((back, [s.index]))
    if backs:
        # up to model equivalence: the inverse spells the previous state another way that
        # compiles to the same kernels and launches alike (tried on the few results close
        # to the previous state in tokens: a compile each)
        import difflib

        from kltrans.passes.canonical import same_program

        def near(back) -> float:
            got = tokens(back, back.root)
            return difflib.SequenceMatcher(None, got, want, autojunk=False).ratio()

        backs = [(_canonical(b) if canonical else b, st) for b, st in backs]
        close = sorted(((near(b), i, b, st) for i, (b, st) in enumerate(backs)),
                       key=lambda x: (-x[0], x[1]))
        for r, _, back, sites in close[:SAME_PROGRAM_TRIES]:
            if r < SAME_PROGRAM_RATIO:
                break
            if same_program(back, before, ctx.arch)[0]:
                return {"ok": True, "inverse": inv.spec(), "sites": sites,
                        "equal": "machine code"}
        # up to model equivalence: the block machine runs both for a block and they store
        # and fold the same, with the same kinds of collectives (the spelling of each,
        # e.g. a shared-memory tree or warp shuffles, may differ: recorded)
        for back, sites in backs[:SAME_PROGRAM_TRIES]:
            ok, why = _same_model(back, before, ctx)
            if ok:
                return {"ok": True, "inverse": inv.spec(), "sites": sites, "equal": "model",
                        "note": why}
    return {"ok": False, "inverse": inv.spec(),
            "reason": f"{inv.spec()} on the simplified state does not give the previous "
                      f"state back"}


def _same_model(back, before, ctx) -> tuple[bool, str]:
    """:func:`kltrans.model.equivalence.same_model` of the two states' kernel, the walk's
    sizes kept."""
    from kltrans.model.equivalence import same_model

    return same_model(back, before, ctx.kernel, ctx.sizes, binds=ctx.bindings)


def _gate_item(src: bytes, name: str, opts: WalkOptions, wl, kernel: str, ne, sizes,
               backend: str) -> dict:
    """The plain-data gate task (kltrans.gate.tasks.gate_task) for one state."""
    from kltrans.gate.run import state_instantiation

    return {"source": src.decode("utf-8"), "name": name, "workload": wl.path,
            "kernel": kernel, "name_expression": state_instantiation(src, kernel, ne),
            "backend": backend,
            "stages": ["compile", "correct"], "arch": opts.arch, "sizes": sizes,
            "seeds": list(wl.seeds), "timeout_s": opts.timeout_s,
            "run_timeout_s": opts.run_timeout_s}


def _gate_result(r: dict) -> dict:
    """A gate task's result; a lost task (its workers died, or it raised twice) becomes a
    failed stage ``lost``."""
    if "stages" in r:
        return r
    reason = f"{r.get('verdict', 'lost')}: {r.get('reason', '')}"
    return {"ok": False, "stages": [{"stage": "lost", "status": "fail", "reason": reason,
                                     "seconds": 0.0}],
            "resources": None, "fail": ("lost", reason)}


def _gate_many(ex, items: list, backend: str) -> list[dict]:
    from kltrans.gate.tasks import gate_task

    # no whole-task GPU reservation: the gate worker holds the per-GPU lock
    # (kltrans.gate.devlock) while it runs on the GPU, so more --jobs than GPUs overlap
    # start-up and compiles without sharing a GPU during a run
    return [_gate_result(r) for r in ex.get().map(gate_task, items, gpu=False)]


class _LazyExecutor:
    """The walk's executor, started on first use (a finished walk that is only reloaded
    starts no cluster); closed at the end unless the caller passed its own."""

    def __init__(self, opts: WalkOptions):
        self.opts, self.backend, self.ex = opts, "auto", opts.executor

    def get(self):
        if self.ex is None:
            from kltrans.gate.executor import ExecutorError, make_executor

            try:
                self.ex = make_executor(self.opts.cluster, self.backend, self.opts.jobs)
            except ExecutorError as e:
                raise WalkError(str(e)) from None
            _say(self.opts, f"gating through the {self.ex.describe()}")
        return self.ex

    def close(self):
        if self.ex is not None and self.ex is not self.opts.executor:
            self.ex.close()
        self.ex = None


def _resource_delta(before: dict | None, after: dict | None) -> dict | None:
    if not before or not after:
        return None
    return {k: after[k] - before[k] for k in before if isinstance(before.get(k), int)
            and isinstance(after.get(k), int)}


def walk(opts: WalkOptions) -> dict:
    """Run (or resume) the walk; returns the lineage document (also written to disk)."""
    if opts.executor is None:
        from kltrans.gate.executor import ExecutorError, check_cluster

        try:  # a bad --cluster string, or no dask, is reported before any work
            check_cluster(opts.cluster)
        except ExecutorError as e:
            raise WalkError(str(e)) from None
    ex = _LazyExecutor(opts)
    try:
        return _walk(opts, ex)
    finally:
        ex.close()


def _walk(opts: WalkOptions, ex: _LazyExecutor) -> dict:
    from kltrans import __version__
    from kltrans.gate.backends import resolve_backend
    from kltrans.passes.facts import Context
    from kltrans.syntax import parse
    from kltrans.workload.spec import SpecError, load_workload

    try:
        wl = load_workload(opts.workload)
    except (SpecError, OSError) as e:
        raise WalkError(str(e)) from None
    if "expert" not in wl.kernels and opts.expert is None:
        raise WalkError(f"{opts.workload}: the spec has no 'expert' kernel; name one with --expert")
    expert_path = opts.expert or wl.kernel_path("expert")
    if not os.path.isfile(expert_path):
        raise WalkError(f"{expert_path}: no such file")
    variant = next((v for v in wl.kernels.values()
                    if os.path.abspath(os.path.join(wl.path, v["file"])) == os.path.abspath(expert_path)),
                   None)
    src = open(expert_path, "rb").read()
    unit = parse(src, expert_path)
    if unit.has_errors:
        raise WalkError(str(unit.parse_diagnostics()[0]))
    canonical = None
    if opts.canonicalize:  # the walk starts from the expert's canonical form
        from kltrans.passes.canonical import canonicalize

        unit, csteps, cnotes = canonicalize(unit, arch=opts.arch)
        src = unit.source
        canonical = {"steps": len(csteps), "rules": sorted({s.rule for s in csteps}),
                     "notes": cnotes}
    if variant is not None:
        kernel, ne = variant["kernel"], variant.get("name_expression")
    else:
        ks = [k.name for k in unit.kernels()]
        if len(ks) != 1:
            raise WalkError(f"{expert_path}: {len(ks)} kernels; the walk needs one")
        kernel, ne = ks[0], None
    backend = resolve_backend(opts.backend)
    ex.backend = backend
    sizes = gate_sizes(wl, opts.size_limit)
    out = opts.out or lineage_out(wl.path)
    # facts every gate run guarantees (each buffer its own allocation, 16-byte aligned),
    # what the workload's tolerances allow, then the caller's
    facts = list(WORKLOAD_FACTS) + tolerance_facts(wl) + list(opts.assume)
    fn = next((f for f in unit.kernels() if f.name == kernel), None)
    facts += binding_facts(wl, fn)
    try:
        ctx = Context.from_strings(tuple(facts), opts.arch, False, kernel)
    except ValueError as e:  # the architecture's message names it; a fact's does not
        raise WalkError(str(e) if "architecture" in str(e) else f"--assume: {e}") from None
    fn = next((f for f in unit.kernels() if f.name == kernel), None)
    if fn is not None:  # the instantiation the gate runs binds the value template parameters
        from kltrans.model.launch import template_values

        ctx.sizes.update({k: v for k, v in template_values(fn, ne).items()
                          if k not in ctx.sizes})
    config = {"workload": wl.name, "expert": os.path.relpath(expert_path, wl.path),
              "expert_hash": content_hash(src), "kernel": kernel, "backend": backend,
              "arch": opts.arch or "sm_90", "facts": facts, "sizes": sizes, "seeds": list(wl.seeds),
              "passes": [p.spec() for p in simplify_passes()], "walk_order": walk_order(),
              "probes": opts.probes}
    if canonical is not None:
        config["canonicalize"] = canonical
    if os.path.isfile(os.path.join(wl.path, "history.yaml")):
        # a lineage of a generality suite (corpus/wild): walked to measure transfer only;
        # skills extract refuses it (kltrans.skills.cards.extract)
        config["suite"] = "generality"
    if backend == "cuda":
        config["side_ms"] = opts.side_ms
        config["min_cost"] = opts.min_cost
        if opts.bench_size is None:
            opts = dataclasses.replace(opts, bench_size=timing_size(wl))
        if opts.bench_size:
            config["bench_size"] = opts.bench_size
    try:
        doc = None if opts.restart else store.load(out)
    except store.LineageError as e:  # the user's walk: neither resumed from a guess nor replaced
        raise WalkError(f"{e}; the walk in {out} is left as it is (run again with "
                        f"--restart to start it over, which replaces it)") from None
    if doc is not None and doc.get("config") != config:
        # another walk's (other options, or a kltrans whose passes differ): replacing it
        # on a guess could lose hours of GPU work
        old = doc.get("config") or {}
        diff = sorted(k for k in set(old) | set(config) if old.get(k) != config.get(k))
        raise WalkError(f"{out}: holds a walk made with other inputs (they differ in "
                        f"{', '.join(diff)}); it is left as it is: --restart replaces it, "
                        f"or name another --out")
    if doc is None and opts.redo_from is not None:
        raise WalkError(f"--redo-from {opts.redo_from}: no lineage of these inputs in {out} "
                        f"to take steps from")
    if doc is None:
        store.clear_states(out)  # a fresh walk: no state file of an earlier one may linger
        doc = {"schema": SCHEMA, "tool": f"kltrans {__version__}", "config": config,
               "gpu": None, "states": [], "transitions": [], "termination": None}
        [first] = _gate_many(ex, [_gate_item(src, os.path.basename(expert_path), opts, wl,
                                             kernel, ne, sizes, backend)], backend)
        if not first["ok"]:
            raise WalkError(f"{expert_path}: the expert does not pass the gate: "
                            f"{first['fail'][0]}: {first['fail'][1]}")
        doc["states"].append(store.state_entry(0, "expert", src, content_hash(src), first))
        store.save(out, doc, {0: src})
    else:
        if opts.redo_from is not None:
            _redo_from(doc, out, opts.redo_from)
            _say(opts, f"{out}: steps {opts.redo_from} on dropped, to be walked again")
        _say(opts, f"resuming {out}: {len(doc['transitions'])} step(s) already taken")
        term = doc.get("termination")
        if term and not (term["kind"] == "max-steps" and len(doc["transitions"]) < opts.max_steps):
            return doc
        doc["termination"] = None
        for k in ("rejected_at_end", "residual_mechanisms", "not_applicable_at_end"):
            doc.pop(k, None)
    cur = store.read_state(out, doc["states"][-1])
    cur_gate = doc["states"][-1]["gate"]
    step = len(doc["transitions"])
    while True:
        if step >= opts.max_steps:
            doc["termination"] = {"kind": "max-steps", "reason": f"{opts.max_steps} steps taken"}
            break
        unit = parse(cur, expert_path)
        t0 = time.perf_counter()
        cands = enumerate_candidates(unit, ctx, opts.canonicalize)
        live = [c for c in cands if c.accepted or c.stage == "roundtrip"]
        _say(opts, f"step {step + 1}: {len(cands)} anchor match(es), {len(live)} applicable, "
                   f"{sum(c.accepted for c in live)} to gate")
        if not live:
            from kltrans.gate.run import state_instantiation
            from kltrans.lineage.naive import mechanisms_left

            left = mechanisms_left(unit, state_instantiation(unit.source, kernel, ne),
                                   opts.arch or "sm_90")
            why = "no simplify pass applies" + (
                f" ({len(cands)} anchor match(es), none with its preconditions holding)"
                if cands else "")
            if left:
                kinds = sorted({m for m, _ in left})
                end = {"kind": "stuck", "reason": f"{why}, but the kernel still has: "
                                                  f"{', '.join(kinds)}"}
                moved = _backtrack(doc, out, end, opts, ctx, wl, kernel, ne, sizes, backend,
                                   expert_path, ex)
                if moved is not None:
                    cur, cur_gate, step = moved
                    continue
                doc["termination"] = end
            else:
                doc["termination"] = {"kind": "naive", "reason": why}
            doc["residual_mechanisms"] = [{"mechanism": m, "line": ln} for m, ln in left]
            doc["not_applicable_at_end"] = [c.to_json() for c in cands]
            break
        t_gate = time.perf_counter()
        waited = _gate_all([c for c in live if c.accepted], opts, wl, kernel, ne, sizes,
                           backend, expert_path, ex)
        split = {"enumerate": round(t_gate - t0, 2),
                 "gate": round(time.perf_counter() - t_gate, 2)}
        if waited:  # summed over the gate workers: the GPU lock held them this long
            split["gate_lock_wait_sum"] = round(waited, 2)
        dead = _dead_states(doc)
        for c in live:  # a state a backtrack left is dead whichever step leads to it
            if c.accepted and c.after_hash in dead:
                c.stage, c.reason = "dead-end", "leads to a state an earlier backtrack left"
        accepted = [c for c in live if c.accepted]
        for c in accepted:
            c.resources = _resource_delta(cur_gate.get("resources"), c.resources)
        if not accepted:
            from kltrans.gate.run import state_instantiation
            from kltrans.lineage.naive import mechanisms_left

            left = mechanisms_left(unit, state_instantiation(unit.source, kernel, ne),
                                   opts.arch or "sm_90")
            if not left:  # nothing valid to take and nothing left to take away
                doc["termination"] = {
                    "kind": "naive",
                    "reason": f"no simplification passes the gate and the round trip (all "
                              f"{len(live)} applicable candidate(s) rejected), and no "
                              f"mechanism is left"}
                doc["residual_mechanisms"] = []
                doc["rejected_at_end"] = [c.to_json() for c in cands]
                break
            end = {"kind": "all-rejected",
                   "reason": f"all {len(live)} applicable candidate(s) rejected"}
            moved = _backtrack(doc, out, end, opts, ctx, wl, kernel, ne, sizes, backend,
                               expert_path, ex, [c.to_json() for c in live])
            if moved is not None:
                cur, cur_gate, step = moved
                continue
            doc["termination"] = end
            doc["rejected_at_end"] = [c.to_json() for c in cands]
            break
        rule, chosen = "walk-order", accepted[0]
        if backend == "cuda":
            t_time = time.perf_counter()
            _measure(accepted, cur, opts, wl, expert_path, ex, kernel=kernel, ne=ne)
            doc["gpu"] = doc.get("gpu") or next(
                (c.effect.get("device") for c in accepted if c.effect and c.effect.get("ok")), None)
            rule, chosen, more = choose_step(accepted, opts.min_cost)
            for _ in range(MAX_TIE_TIMINGS):  # the choice fell on a candidate screened once
                if not more:
                    break
                _bench([chosen], 5, cur, opts, wl, expert_path, ex, kernel, ne)
                rule, chosen, more = choose_step(accepted, opts.min_cost)
            if more:  # out of timings: the choice among those timed fully
                rule, chosen, _ = choose_step(
                    [c for c in accepted if c.effect and c.effect.get("ok")
                     and not c.effect.get("screened")], opts.min_cost)
            split["time"] = round(time.perf_counter() - t_time, 2)
        step += 1
        new = chosen.after
        probes = []
        t_probe = time.perf_counter()
        if opts.probes:
            probes = probe_step(new, chosen, ctx, opts, wl, kernel, ne, sizes, backend,
                                expert_path, ex)
            split["probes"] = round(time.perf_counter() - t_probe, 2)
        tr = {"step": step, "pass": chosen.pass_name, "options": chosen.options,
              "spec": chosen.spec,
              "site": {"index": chosen.site, "line": chosen.line, "column": chosen.column,
                       "function": chosen.function},
              "before": doc["states"][-1]["hash"], "after": chosen.after_hash,
              "chosen_by": rule, "gate": chosen.gate, "resources": chosen.resources,
              "roundtrip": chosen.roundtrip,
              "effect": chosen.effect or {"ok": False, "reason": "no GPU: not timed"},
              "alternatives": [c.to_json() for c in accepted if c is not chosen],
              "rejected": [c.to_json() for c in cands if not c.accepted],
              "probes": probes,
              "seconds": round(time.perf_counter() - t0, 2),
              # where the step's wall time went: anchors and rewrites, gating the
              # candidates, timing them (GPU), probing what fails
              "seconds_by_phase": split}
        doc["transitions"].append(tr)
        gate_doc = {"ok": True, "stages": chosen.gate,
                    "resources": _abs_resources(cur_gate.get("resources"), chosen.resources)}
        doc["states"].append(store.state_entry(step, chosen.pass_name, new, chosen.after_hash,
                                               gate_doc))
        store.save(out, doc, {step: new})
        _say(opts, f"step {step} of at most {opts.max_steps}: {chosen.spec} at site "
                   f"{chosen.site} "
                   f"(line {chosen.line}, {chosen.function}) chosen by {rule}; "
                   f"{len(accepted) - 1} alternative(s), "
                   f"{len(cands) - len(accepted)} rejected; "
                   + ", ".join(f"{k} {v:.1f} s" for k, v in split.items()))
        cur, cur_gate = new, gate_doc
    old = store.mark_naive(out, doc) if doc["termination"]["kind"] == "naive" else None
    store.save(out, doc, {})
    if old and os.path.exists(old):
        os.remove(old)
    _say(opts, f"termination: {doc['termination']['kind']} ({doc['termination']['reason']}) "
               f"after {len(doc['transitions'])} step(s); wrote {out}")
    return doc


def _redo_from(doc: dict, out: str, n: int) -> None:
    """Drop steps ``n`` on (their states, the backtracks made at or after them, the
    termination) so that the walk takes them again, by the rules of this version; the
    steps kept are relabelled by today's round-trip rule from their recorded trials. Writes
    the shortened lineage at once (an interrupted redo resumes from it)."""
    trs = doc["transitions"]
    if not 1 <= n <= len(trs) + 1:
        raise WalkError(f"--redo-from {n}: the lineage in {out} has {len(trs)} step(s)")
    for st in doc["states"][n:]:
        path = os.path.join(out, st["file"])
        if os.path.exists(path):
            os.remove(path)
    del doc["states"][n:]
    del trs[n - 1:]
    last, renamed, old = doc["states"][-1], {}, None
    if last["name"] == "naive":  # the end state is kept as a middle one: its step's name
        renamed[last["index"]] = store.read_state(out, last)
        old = os.path.join(out, last["file"])
        last["name"] = trs[-1]["pass"] if trs else "expert"
        last["file"] = store.state_file(last["index"], last["name"])
    kept = [b for b in doc.get("backtracks", []) if b["at_step"] < n]
    if kept:
        doc["backtracks"] = kept
    else:
        doc.pop("backtracks", None)
    doc["termination"] = None
    for k in ("rejected_at_end", "residual_mechanisms", "not_applicable_at_end"):
        doc.pop(k, None)
    relabel_roundtrips(doc)
    store.save(out, doc, renamed)  # one write of the shortened lineage, then the old name goes
    if old:
        os.remove(old)


def relabel_roundtrips(doc: dict) -> None:
    """Every fully timed step and alternative of ``doc`` gets today's round-trip verdict
    (:func:`_mark_no_slower`) from the trials it recorded; nothing is measured again."""
    for t in doc["transitions"]:
        for rec in [t] + t.get("alternatives", []):
            if (rec.get("effect") or {}).get("screened"):
                continue  # one trial: no verdict, as in the walk
            c = _candidate(dict(rec, after_hash=rec.get("after_hash") or rec.get("after")))
            _mark_no_slower(c)
            if c.roundtrip:
                rec["roundtrip"] = c.roundtrip


def _candidate(a: dict) -> Candidate:
    """An accepted candidate back from its record (``Candidate.to_json``), source aside."""
    site = a["site"]
    return Candidate(a["pass"], a["options"], a["spec"], site["index"], site["line"],
                     site["column"], site["function"], None, a.get("after_hash"),
                     gate=a.get("gate") or [], resources=a.get("resources"),
                     roundtrip=dict(a.get("roundtrip") or {}) or None,
                     effect=dict(a["effect"]) if a.get("effect") else None)


def _dead_states(doc) -> set:
    """Hashes of the states backtracks left: none of them leads to ``naive``."""
    return {a["after"] for b in doc.get("backtracks") or [] for a in b["abandoned"]}


def _backtrack(doc, out, end, opts, ctx, wl, kernel, ne, sizes, backend, expert_path, ex,
               dead_candidates=None):
    """A walk that dead-ends (``stuck``: mechanisms left but no simplification applies;
    ``all-rejected``) before ``naive`` goes back to the latest step that had another
    accepted candidate, drops the steps after it, and takes that candidate instead (the
    next by the rule that chose the step). Each backtrack is recorded in
    ``doc["backtracks"]`` (where, which steps were abandoned and why); at most
    ``opts.max_backtracks``. Returns the new (state, gate, step count), or None where no
    step has an alternative left."""
    from kltrans.passes.manager import run_pass
    from kltrans.passes.pipeline import parse_pipeline
    from kltrans.syntax import parse

    done = doc.setdefault("backtracks", [])
    if len(done) >= opts.max_backtracks:
        if not done:
            doc.pop("backtracks")
        return None
    trs = doc["transitions"]
    # depth first: every state after the step backed out to has had each of its accepted
    # candidates tried, so every state on the abandoned path is dead (and the last one)
    dead = _dead_states(doc) | {x["after"] for x in trs}
    for j in range(len(trs) - 1, -1, -1):
        t = trs[j]
        alts = [_candidate(a) for a in t["alternatives"] if a.get("after_hash") not in dead]
        if not alts:
            continue
        before = store.read_state(out, doc["states"][j])
        while alts:  # the next by the rule that chose the step, as in the walk
            rule, chosen, _ = (choose_step(alts, opts.min_cost) if backend == "cuda"
                               else ("walk-order", alts[0], False))
            after, rep = run_pass(parse(before, expert_path), parse_pipeline(chosen.spec)[0],
                                  ctx, only_site=chosen.site)
            if rep.applied and content_hash(after.source) == chosen.after_hash:
                break
            alts.remove(chosen)  # cannot be rebuilt: the next one
        else:
            continue
        alt = next(a for a in t["alternatives"] if a.get("after_hash") == chosen.after_hash)
        new = chosen.after = after.source
        abandoned = [{"step": x["step"], "spec": x["spec"], "after": x["after"]}
                     for x in trs[j:]]
        done.append({"at_step": j + 1, "before": t["before"], "abandoned": abandoned,
                     "dead_end": dict(end, after_step=len(trs),
                                      **({"candidates": dead_candidates}
                                         if dead_candidates else {})),
                     "taken": alt["spec"]})
        for st in doc["states"][j + 1:]:
            path = os.path.join(out, st["file"])
            if os.path.exists(path):
                os.remove(path)
        del doc["states"][j + 1:]
        del trs[j:]
        # the abandoned step stays an alternative of its state, marked as a dead end
        left = {k: t[k] for k in ("pass", "options", "spec", "site", "gate", "resources",
                                  "roundtrip", "effect") if k in t}
        others = [a for a in t["alternatives"] if a is not alt] + [
            dict(left, after_hash=t["after"], dead_end=True)]
        t0, split = time.perf_counter(), {}
        e = chosen.effect or {}
        if backend == "cuda" and (not e.get("ok") or e.get("screened")):
            _bench([chosen], 5, before, opts, wl, expert_path, ex, kernel, ne)  # timed fully
            _mark_no_slower(chosen)
            split["time"] = round(time.perf_counter() - t0, 2)
        probes = []
        if opts.probes:
            t1 = time.perf_counter()
            probes = probe_step(new, chosen, ctx, opts, wl, kernel, ne, sizes, backend,
                                expert_path, ex)
            split["probes"] = round(time.perf_counter() - t1, 2)
        tr = dict(t, **{"pass": chosen.pass_name, "options": chosen.options,
                        "spec": chosen.spec, "site": alt["site"], "after": chosen.after_hash,
                        "chosen_by": rule + "+backtrack", "gate": chosen.gate,
                        "resources": chosen.resources, "roundtrip": chosen.roundtrip,
                        "effect": chosen.effect or {"ok": False, "reason": "no GPU: not timed"},
                        "alternatives": others, "probes": probes,
                        "seconds": round(time.perf_counter() - t0, 2),
                        "seconds_by_phase": split})
        trs.append(tr)
        prev_gate = doc["states"][j]["gate"]
        gate_doc = {"ok": True, "stages": chosen.gate,
                    "resources": _abs_resources(prev_gate.get("resources"), chosen.resources)}
        doc["states"].append(store.state_entry(j + 1, chosen.pass_name, new, chosen.after_hash,
                                               gate_doc))
        store.save(out, doc, {j + 1: new})
        _say(opts, f"dead end after step {len(abandoned) + j} ({end['kind']}): back to step "
                   f"{j + 1}, which now takes {chosen.spec} (line {chosen.line}) instead of "
                   f"{abandoned[0]['spec']}")
        return new, gate_doc, j + 1
    if not done:
        doc.pop("backtracks")
    return None


def probe_step(simplified: bytes, chosen: Candidate, ctx, opts, wl, kernel, ne, sizes,
               backend, expert_path, ex=None) -> list[dict]:
    """What fails without the skill's conditions: apply the step's optimize pass (the
    inverse that gave the previous state back) to the simplified state where its
    preconditions exclude it, and gate that.

    Two kinds, at most ``opts.probes`` in all: ``forced-site`` (another site where the
    anchor matches but a precondition fails, rewritten with --force) and ``option`` (the
    step's site with another value of an option; forced where that value breaks a
    precondition). Each records the violated preconditions, the gate stage that failed
    and its evidence, or that it passed (the precondition was conservative at the gated
    sizes). The rewrites are made here, in order; their gate runs go through the
    executor ``ex`` together.
    """
    import dataclasses

    from kltrans.passes.manager import run_pass, unforceable
    from kltrans.passes.pipeline import parse_pipeline
    from kltrans.syntax import parse

    inv_spec = (chosen.roundtrip or {}).get("inverse")
    if not inv_spec:
        return []
    inv = parse_pipeline(inv_spec)[0]
    unit = parse(simplified, expert_path)
    forced_ctx = dataclasses.replace(ctx, force=True)
    sites = inv.sites(unit, ctx)
    rt_sites = chosen.roundtrip.get("sites")
    step_site = rt_sites[0] if isinstance(rt_sites, list) else (sites[0].index if sites else None)
    plans = []  # (kind, pass, site index, violated, label)
    for st in sites:
        failing = [(pre, v) for pre, v in inv.check(st, ctx) if not v.holds]
        if failing:
            plans.append(("forced-site", inv, st.index, failing, f"site {st.index}"))
    for spec in inv.options():
        cur = getattr(inv, spec.field)
        for v in spec.domain.values():
            if v == cur:
                continue
            try:
                p2 = dataclasses.replace(inv, **{spec.field: v})
            except (TypeError, ValueError):
                continue
            plans.append(("option", p2, step_site, None, f"{spec.name}={v}"))
    out = []
    pending = []  # (record, rewritten source): gated together below
    for kind, p, idx, failing, label in plans:
        if len(out) >= opts.probes or idx is None:
            break
        if failing is None:
            st = next((x for x in p.sites(unit, ctx) if x.index == idx), None)
            if st is None:
                continue
            failing = [(pre, v) for pre, v in p.check(st, ctx) if not v.holds]
        try:
            after, rep = run_pass(unit, p, forced_ctx if failing else ctx, only_site=idx)
        except Exception as e:
            out.append({"kind": kind, "spec": p.spec(), "site": idx, "label": label,
                        "violated": _violated(failing), "outcome": "rewrite-error",
                        "evidence": unforceable(failing, e)})
            continue
        if not rep.applied:
            continue
        rec = {"kind": kind, "spec": p.spec(), "site": idx, "label": label,
               "violated": _violated(failing), "after_hash": content_hash(after.source)}
        out.append(rec)
        pending.append((rec, bool(failing), after.source))
    if not pending:
        return out
    own = ex is None
    ex = ex or _LazyExecutor(opts)
    ex.backend = backend
    try:
        name = os.path.basename(expert_path)
        results = _gate_many(ex, [_gate_item(src, name, opts, wl, kernel, ne, sizes, backend)
                                  for _, _, src in pending], backend)
    finally:
        if own:
            ex.close()
    for (rec, forced, _), g in zip(pending, results):
        rec["gate"] = g["stages"]
        if g["ok"]:
            rec["outcome"] = "passed"
            rec["evidence"] = ("the gate passed at the walk's sizes: the precondition is "
                               "conservative there" if forced else "a valid variant")
        else:
            rec["outcome"] = "failed"
            rec["stage"], rec["evidence"] = g["fail"] or ("correct", "no correct stage ran")
    return out


def _violated(failing) -> list[dict]:
    return [{"precondition": pre.name, "category": pre.category, "status": v.status,
             "reason": v.reason} for pre, v in (failing or [])]


def _abs_resources(before, delta):
    if not before or not delta:
        return before
    return {k: before[k] + delta.get(k, 0) if isinstance(before.get(k), int) else before[k]
            for k in before}


def _gate_all(live, opts, wl, kernel, ne, sizes, backend, expert_path, ex):
    name = os.path.basename(expert_path)
    results = _gate_many(ex, [_gate_item(c.after, name, opts, wl, kernel, ne, sizes, backend)
                              for c in live], backend)
    for c, r in zip(live, results):
        c.gate = r["stages"]
        c.resources = r["resources"]
        if not r["ok"]:
            c.stage, c.reason = (r["fail"] or ("correct", "no correct stage ran"))
    return sum((r.get("phases") or {}).get("lock_wait", 0.0) for r in results)


def step_effect(r: dict) -> dict:
    """A step's effect from a paired bench result (A = the state before the step, B = the
    simplified one): ``slowdown_trials`` = time(B) / time(A) per trial."""
    if not r.get("ok"):
        return {"ok": False, "reason": f"{r.get('verdict')}: {r.get('reason')}"}
    p = r["paired"]
    ratios = [1.0 / x for x in p["ratios"]]
    return {"ok": True, "current_ms": p["a"]["ms"], "simplified_ms": p["b"]["ms"],
            "slowdown_median": sorted(ratios)[len(ratios) // 2],
            "slowdown_trials": ratios, "spread": max(ratios) - min(ratios),
            "device": r.get("device"), "size": r.get("size")}


NO_SLOWER = 0.99  # the round trip on a GPU: the inverse's median paired ratio is at least this


def _mark_no_slower(c: Candidate) -> None:
    """The round trip on a GPU: the inverse (the state before the step) is no slower than
    the simplified state: the median of the paired ratios time(simplified) / time(before)
    is at least 0.99. The median, not every trial: in the H200 walks of the corpus, 9 of
    the 101 steps whose median was in [0.99, 1.02) had a trial under 0.99, and so did 4
    steps whose removal cost more than 2% (sgemm's unpad-smem: median 1.07, one trial
    0.92), so "every trial" judges noise, not the step; the median of the trials is the
    statistic every other timing in kltrans reports. ``trials_over`` keeps
    how many trials were at least 0.99, for the reader who wants the stricter rule."""
    if c.effect and c.effect.get("ok"):
        trials = c.effect["slowdown_trials"]
        c.roundtrip = dict(c.roundtrip or {},
                           no_slower=c.effect["slowdown_median"] >= NO_SLOWER,
                           trials_over=sum(r >= NO_SLOWER for r in trials))


def choose_step(accepted: list, min_cost: float) -> tuple:
    """The GPU choice among accepted, timed candidates: ``(rule, chosen, needs_timing)``.

    ``max-time``: among the removals that cost at least ``min_cost`` (median slowdown
    over five trials), the costliest (its inverse is no slower by the median). Where none
    costs that much, no removal costs measurably more than another and the walk order decides among those whose inverse is no slower
    (``walk-order-tie``: a choice among ties made by noise is neither reproducible nor
    informed, and can lead into a dead end); a candidate only screened (one trial) counts
    while its one trial is at least 0.99, and ``needs_timing`` says it must be timed fully
    (the caller times it and asks again). Where every removal makes the kernel faster
    (each optimization left is a pessimization in this state), the one that changes it
    least (``inverse-slower``): the walk has to take one of them to reach naive, and its
    round trip records that the inverse is slower. With nothing timed (every timing
    failed), ``walk-order``."""
    ok = [c for c in accepted if c.effect and c.effect.get("ok")]
    timed = [c for c in ok if not c.effect.get("screened")]
    for c in timed:
        _mark_no_slower(c)
    if not timed:
        return "walk-order", accepted[0], False
    costly = [c for c in timed if c.effect["slowdown_median"] >= min_cost]
    if costly:
        return "max-time", max(costly, key=lambda c: c.effect["slowdown_median"]), False
    for c in ok:  # walk order
        if c.effect.get("screened"):
            if c.effect["slowdown_median"] >= NO_SLOWER:
                return "walk-order-tie", c, True
        elif c.roundtrip["no_slower"]:
            return "walk-order-tie", c, False
    least = max(ok, key=lambda c: c.effect["slowdown_median"])
    return "inverse-slower", least, bool(least.effect.get("screened"))


MAX_TIE_TIMINGS = 4  # screened candidates timed fully in turn before a tie is decided
BATCH = 8  # candidates timed by one worker (kltrans.gate.tasks.bench_many_task)


def _timing_item(cands, trials: int, side_ms: float, cur: bytes, opts, wl, expert_path,
                 kernel, ne, rounds: int | None = None) -> dict:
    """The ``bench_many_task`` input that pairs each of ``cands`` (B) with ``cur`` (A).
    Every kernel keeps the gate's file name: the program name is part of the compile
    cache's key, so the timing worker finds every kernel the gate compiled. Each pairing
    has its own watchdog (``pair_timeout_s``); the job's limit, for ``rounds`` pairings
    (default: one per candidate), only backs them up."""
    name = os.path.basename(expert_path)
    rounds = len(cands) if rounds is None else rounds
    return {"workload": wl.path, "trials": trials, "side_ms": float(side_ms), "min_reps": 3,
            "timeout_s": opts.timeout_s + opts.pair_timeout_s * rounds,
            "pair_timeout_s": opts.pair_timeout_s, "bench_size": opts.bench_size,
            "a_source": cur.decode("utf-8"), "a_name": name, "kernel": kernel,
            "name_expression": ne,
            "bs": [{"source": c.after.decode("utf-8"), "name": name} for c in cands]}


def _bench(cands, trials: int, cur: bytes, opts, wl, expert_path, ex, kernel=None, ne=None,
           side_ms: float | None = None) -> None:
    """Paired trials of each candidate (B) against the current state (A); sets each
    candidate's ``effect``. Up to ``BATCH`` candidates share one worker, one compile of A
    and one upload of the timing inputs (``bench_many_task``); the batches go through the
    executor side by side (the per-GPU lock keeps each timing alone on its GPU). Each
    pairing has ``opts.pair_timeout_s``: one past it is ``too-slow`` (its effect says
    so), and the candidates its worker had not reached yet go again in a new batch."""
    from kltrans.gate.tasks import bench_many_task

    side = float(side_ms or opts.side_ms)
    pending = list(cands)
    while pending:
        batches = [pending[k:k + BATCH] for k in range(0, len(pending), BATCH)]
        items = [_timing_item(b, trials, side, cur, opts, wl, expert_path, kernel, ne)
                 for b in batches]
        again, last = [], {}
        for b, out in zip(batches, ex.get().map(bench_many_task, items, gpu=False)):  # devlock
            for c, r in zip(b, out["results"]):
                if r.get("verdict") == "not-run":
                    again.append(c)
                    last[id(c)] = r
                else:
                    c.effect = step_effect(r)
        if len(again) == len(pending):  # no batch got anywhere: each keeps its verdict
            for c in again:
                c.effect = step_effect(last[id(c)])
            return
        pending = again


def _measure(accepted, cur: bytes, opts, wl, expert_path, ex, screen_keep: int = 3,
             kernel=None, ne=None):
    """Paired trials: each accepted candidate (B) against the current state (A). With
    more than ``screen_keep`` of them, in two rounds run by one worker on one upload of
    the timing inputs (``bench_many_task`` with ``then``): one short trial each to screen
    them (each side near a quarter of ``opts.side_ms``, at least 20 ms), then five trials
    (each side near ``opts.side_ms``) for the ``screen_keep`` that cost most time in the
    screen and for the first in walk order (the choice where every removal is a tie).
    The step is chosen among the fully timed; the others keep their one-trial effect,
    marked ``screened``. At least 3 repetitions a side. A pairing past
    ``opts.pair_timeout_s`` is ``too-slow``; the candidates its worker had not reached are
    timed again, fully (:func:`_bench`)."""
    from kltrans.gate.tasks import bench_many_task

    if len(accepted) <= screen_keep:
        _bench(accepted, 5, cur, opts, wl, expert_path, ex, kernel, ne)
        return
    item = _timing_item(accepted, 1, max(20.0, opts.side_ms / 4.0), cur, opts, wl,
                        expert_path, kernel, ne, rounds=len(accepted) + screen_keep + 1)
    item["then"] = {"keep": screen_keep, "include": [0], "trials": 5,
                    "side_ms": float(opts.side_ms)}
    [out] = ex.get().map(bench_many_task, [item], gpu=False)  # devlock
    again = []
    for c, r in zip(accepted, out["results"]):
        if r.get("verdict") == "not-run":
            again.append(c)
        elif r.get("full"):
            c.effect = step_effect(dict(r, paired=r["full"]))
        else:
            c.effect = step_effect(r)
            if c.effect.get("ok"):
                c.effect["screened"] = True
    if again:
        _bench(again, 5, cur, opts, wl, expert_path, ex, kernel, ne)


_START: list[float] = []


def _say(opts: WalkOptions, msg: str) -> None:
    """A line of the walk's log; with ``progress``, on stderr too, with the seconds since
    the process's first line."""
    opts.log.append(msg)
    if opts.progress:
        if not _START:
            _START.append(time.monotonic())
        print(f"kltrans lineage: [{time.monotonic() - _START[0]:.0f} s] {msg}", file=sys.stderr,
              flush=True)
